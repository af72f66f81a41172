/* Graph cache files (.tnc): node results to bytes and back through a bounded cursor. */
#include "graph/node_result.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "core/fileio.h"
#include "terrane/water.h"

/* The layout is documented byte by byte in docs/cache-format.md ("Graph cache files"); keep the
 * two in step. */
static const uint8_t cache_magic[8] = {'T', 'R', 'N', 'C', 'A', 'C', 'H', 'E'};
/* 2: water outputs and notes; 3: transport arrays and instances outputs. A file is written
 * with the lowest version that holds it, so results without the newer parts keep their bytes. */
#define CACHE_VERSION 3u
#define CACHE_FLAG_LEDGER 1u
#define CACHE_FLAG_BIOME_RULES 2u
#define CACHE_FLAG_CHANGE 4u
#define CACHE_FLAG_NOTE 8u       /* version 2 */
#define CACHE_FLAG_TRANSPORT 16u /* version 3 */
#define CACHE_FLAGS_KNOWN                                                                          \
    (CACHE_FLAG_LEDGER | CACHE_FLAG_BIOME_RULES | CACHE_FLAG_CHANGE | CACHE_FLAG_NOTE |            \
     CACHE_FLAG_TRANSPORT)
#define CACHE_INSTANCE_SIZE 60u /* u32 rule, i64 cx, cz, f64 x, y, z, yaw, scale */
#define CACHE_HEADER_SIZE 108u
#define CACHE_BASIN_SIZE 40u
#define CACHE_CHECKSUM_SIZE 8u
#define CACHE_GRID_OFFSET 20u
#define CACHE_KEY_OFFSET 12u

void trn_cache_file_limits_default(trn_cache_file_limits *limits)
{
    if (!limits) return;
    limits->max_samples = (uint64_t)1 << 30;
    limits->max_basins = (uint64_t)1 << 26;
    limits->max_instances = (uint64_t)1 << 27;
}

/* The flags a file of this version may set. */
static uint32_t flags_known(uint32_t version)
{
    return version >= 3u   ? CACHE_FLAGS_KNOWN
           : version >= 2u ? CACHE_FLAGS_KNOWN & ~CACHE_FLAG_TRANSPORT
                           : CACHE_FLAGS_KNOWN & ~(CACHE_FLAG_TRANSPORT | CACHE_FLAG_NOTE);
}

/* ---- shared checks: the writer refuses what the reader would refuse, so every file written
 * reads back ---- */

static const char *kind_name(uint32_t kind)
{
    return kind < (uint32_t)TRN_PIN_KIND_COUNT ? trn_pin_kind_name((trn_pin_kind)kind) : "unknown";
}

/* Kinds a file of this version stores: water from version 2, instances from version 3. */
static bool kind_stored(uint32_t kind, uint32_t version)
{
    return kind == TRN_PIN_HEIGHTFIELD || kind == TRN_PIN_MASK || kind == TRN_PIN_DRAINAGE ||
           (kind == TRN_PIN_WATER && version >= 2u) || (kind == TRN_PIN_INSTANCES && version >= 3u);
}

/* Kinds whose samples a transport array may follow: heights and a drainage's source. */
static bool kind_has_transport(uint32_t kind)
{
    return kind == TRN_PIN_HEIGHTFIELD || kind == TRN_PIN_DRAINAGE;
}

/* Why instance k cannot be stored (numbers not finite, or not after prev in rule, cz, cx
 * order), or NULL. Placement never writes such instances; a file must not bring them. */
static const char *instance_problem(const trn_instance *v, const trn_instance *prev)
{
    if (!isfinite(v->x) || !isfinite(v->y) || !isfinite(v->z) || !isfinite(v->yaw) ||
        !isfinite(v->scale))
        return "a position, yaw or scale that is not finite";
    if (prev &&
        (v->rule < prev->rule ||
         (v->rule == prev->rule && (v->cz < prev->cz || (v->cz == prev->cz && v->cx <= prev->cx)))))
        return "not after the previous one in (rule, cz, cx) order";
    return NULL;
}

/* Index of the first flow direction that is neither a D8 code nor an outlet, or n. Later
 * stages walk these directions, so a bad code must never reach them. */
static size_t first_bad_flow_dir(const uint8_t *dirs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (dirs[i] > TRN_DRAIN_OUTLET) return i;
    return n;
}

/* Why a basin cannot belong to this grid (its samples index arrays later), or NULL. prev_id is
 * the previous basin's id (basins are sorted by id, so ids strictly increase). */
static const char *basin_problem(const trn_basin *b, uint32_t cells_x, uint32_t cells_z,
                                 size_t samples, bool has_prev, uint64_t prev_id)
{
    if (b->sink_i > cells_x || b->sink_j > cells_z) return "sink outside the grid";
    if (b->spill_i > cells_x || b->spill_j > cells_z) return "spill point outside the grid";
    if (b->id != (uint64_t)b->sink_j * ((uint64_t)cells_x + 1u) + b->sink_i)
        return "id is not sink_j * (cells_x + 1) + sink_i";
    if (b->area > samples) return "area larger than the grid";
    if (has_prev && b->id <= prev_id) return "ids not strictly increasing";
    return NULL;
}

static bool grid_valid(uint32_t cells_x, uint32_t cells_z, double size_x, double size_z)
{
    return cells_x > 0 && cells_z > 0 && isfinite(size_x) && size_x > 0.0 && isfinite(size_z) &&
           size_z > 0.0;
}

/* ---- writing ---- */

typedef struct writer {
    uint8_t *p;
} writer;

static void put_u32(writer *w, uint32_t v)
{
    for (unsigned k = 0; k < 4; k++)
        *w->p++ = (uint8_t)(v >> (8 * k));
}

static void put_u64(writer *w, uint64_t v)
{
    for (unsigned k = 0; k < 8; k++)
        *w->p++ = (uint8_t)(v >> (8 * k));
}

static void put_f32(writer *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_u32(w, u);
}

static void put_f64(writer *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(w, u);
}

/* A length-prefixed array of samples elements (1-byte or 4-byte little-endian). */
static void put_array(writer *w, const trn_gbuf *buf)
{
    put_u64(w, (uint64_t)buf->count);
    if (buf->elem_size == 1) {
        memcpy(w->p, buf->data, buf->count);
        w->p += buf->count;
        return;
    }
    const uint8_t *src = buf->data;
    for (size_t i = 0; i < buf->count; i++) {
        uint32_t u; /* float or uint32_t: the same four bytes, written in a fixed order */
        memcpy(&u, src + 4 * i, sizeof u);
        put_u32(w, u);
    }
}

static trn_status check_array(const trn_gbuf *buf, size_t elem_size, size_t samples,
                              const char *what, uint32_t index, trn_error *err)
{
    if (!buf)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "output %" PRIu32 ": %s: no array, expected %zu samples", index, what,
                             samples);
    if (buf->elem_size != elem_size || buf->count != samples)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "output %" PRIu32 ": %s: %zu elements of %zu bytes, expected %zu "
                             "samples of %zu bytes",
                             index, what, buf->count, buf->elem_size, samples, elem_size);
    return TRN_OK;
}

/* Bytes one output takes in the file, after checking it is storable. */
static trn_status output_size(const trn_gout *o, uint32_t index, uint32_t cells_x, uint32_t cells_z,
                              size_t samples, size_t *bytes, uint8_t **blob, size_t *blob_size,
                              trn_error *err)
{
    uint32_t kind = (uint32_t)o->kind;
    if (kind == TRN_PIN_WATER) {
        const trn_water *w = o->water ? o->water->data : NULL;
        if (!w || w->cells_x != cells_x || w->cells_z != cells_z)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "output %" PRIu32 ": water: none, or on another grid", index);
        trn_status st = trn_water_encode(w, blob, blob_size, err);
        if (st) return st;
        if (!trn_add_size(*blob_size, 4u + 8u, bytes))
            return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "output %" PRIu32 ": too large",
                                 index);
        return TRN_OK;
    }
    if (kind == TRN_PIN_INSTANCES) {
        const trn_instances *in = o->instances ? o->instances->data : NULL;
        if (!in || (in->count && !in->items))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "output %" PRIu32 ": instances: none", index);
        for (size_t k = 0; k < in->count; k++) {
            const char *why = instance_problem(&in->items[k], k ? &in->items[k - 1] : NULL);
            if (why)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "output %" PRIu32 ": instance %zu: %s", index, k, why);
        }
        size_t items = 0;
        if (!trn_mul_size(in->count, CACHE_INSTANCE_SIZE, &items) ||
            !trn_add_size(items, 4u + 8u, bytes))
            return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "output %" PRIu32 ": too large",
                                 index);
        return TRN_OK;
    }
    if (!kind_stored(kind, CACHE_VERSION))
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "output %" PRIu32 ": pin kind %" PRIu32 " (%s) has no cache file "
                             "form in format version %u",
                             index, kind, kind_name(kind), CACHE_VERSION);
    trn_status st;
    size_t arrays = 0;
    if (kind != TRN_PIN_DRAINAGE) {
        if ((st = check_array(o->values, sizeof(float), samples, "values", index, err))) return st;
        /* kind, count, floats; samples * 4 cannot overflow: the buffer exists. */
        *bytes = 4u + 8u + samples * 4u;
        return TRN_OK;
    }
    if ((st = check_array(o->source, sizeof(float), samples, "source", index, err)) ||
        (st = check_array(o->filled, sizeof(float), samples, "filled", index, err)) ||
        (st = check_array(o->flow_dir, 1, samples, "flow_dir", index, err)) ||
        (st = check_array(o->accumulation, sizeof(uint32_t), samples, "accumulation", index, err)))
        return st;
    size_t bad = first_bad_flow_dir(o->flow_dir->data, samples);
    if (bad < samples)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "output %" PRIu32 ": flow_dir: sample %zu has code %u, expected 0..%u",
                             index, bad, ((const uint8_t *)o->flow_dir->data)[bad],
                             TRN_DRAIN_OUTLET);
    size_t basin_count = 0;
    if (o->basins) {
        if (o->basins->elem_size != sizeof(trn_basin))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "output %" PRIu32 ": basins: elements of %zu bytes, expected %zu",
                                 index, o->basins->elem_size, sizeof(trn_basin));
        basin_count = o->basins->count;
        const trn_basin *basins = o->basins->data;
        for (size_t b = 0; b < basin_count; b++) {
            const char *why = basin_problem(&basins[b], cells_x, cells_z, samples, b > 0,
                                            b > 0 ? basins[b - 1].id : 0);
            if (why)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "output %" PRIu32 ": basin %zu: %s", index, b, why);
        }
    }
    /* source, filled, accumulation: 4 bytes per sample; flow_dir: 1; four 8-byte counts. */
    if (!trn_mul_size(samples, 13u, &arrays) || !trn_add_size(arrays, 4u + 8u + 4u * 8u, &arrays))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "output %" PRIu32 ": too large",
                             index);
    size_t basin_bytes = 0;
    if (!trn_mul_size(basin_count, CACHE_BASIN_SIZE, &basin_bytes) ||
        !trn_add_size(arrays, 8u + basin_bytes, bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "output %" PRIu32 ": too large",
                             index);
    return TRN_OK;
}

static void put_output(writer *w, const trn_gout *o, const uint8_t *blob, size_t blob_size)
{
    put_u32(w, (uint32_t)o->kind);
    if (o->kind == TRN_PIN_INSTANCES) {
        const trn_instances *in = o->instances->data;
        put_u64(w, (uint64_t)in->count);
        for (size_t k = 0; k < in->count; k++) {
            const trn_instance *v = &in->items[k];
            put_u32(w, v->rule);
            put_u64(w, (uint64_t)v->cx);
            put_u64(w, (uint64_t)v->cz);
            put_f64(w, v->x);
            put_f64(w, v->y);
            put_f64(w, v->z);
            put_f64(w, v->yaw);
            put_f64(w, v->scale);
        }
        return;
    }
    if (o->kind == TRN_PIN_WATER) {
        put_u64(w, (uint64_t)blob_size);
        memcpy(w->p, blob, blob_size);
        w->p += blob_size;
        return;
    }
    if (o->kind != TRN_PIN_DRAINAGE) {
        put_array(w, o->values);
        return;
    }
    put_f64(w, o->sea_level);
    put_array(w, o->source);
    put_array(w, o->filled);
    put_array(w, o->flow_dir);
    put_array(w, o->accumulation);
    size_t basin_count = o->basins ? o->basins->count : 0u;
    put_u64(w, (uint64_t)basin_count);
    const trn_basin *basins = o->basins ? o->basins->data : NULL;
    for (size_t b = 0; b < basin_count; b++) {
        /* Field by field, never the struct's bytes: padding and host order stay out. */
        put_u64(w, basins[b].id);
        put_u32(w, basins[b].sink_i);
        put_u32(w, basins[b].sink_j);
        put_f32(w, basins[b].sink_height);
        put_f32(w, basins[b].spill_level);
        put_u32(w, basins[b].spill_i);
        put_u32(w, basins[b].spill_j);
        put_u64(w, basins[b].area);
    }
}

trn_status trn_node_result_serialize(const trn_node_result *result, uint8_t **data, size_t *size,
                                     trn_error *err)
{
    if (!result || !data || !size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "serialize: result, data and size are required");
    *data = NULL;
    *size = 0;
    if (!grid_valid(result->cells_x, result->cells_z, result->size_x, result->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "grid %" PRIu32 " x %" PRIu32 " cells over %g x %g: expected at "
                             "least one cell each way and finite positive sizes",
                             result->cells_x, result->cells_z, result->size_x, result->size_z);
    if (!isfinite(result->cpu_seconds) || result->cpu_seconds < 0.0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "cpu_seconds %g: expected a finite time >= 0", result->cpu_seconds);
    if (result->output_count > TRN_GRAPH_MAX_OUTPUTS)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%" PRIu32 " outputs, at most %u", result->output_count,
                             TRN_GRAPH_MAX_OUTPUTS);
    size_t samples = 0;
    if (!trn_mul_size((size_t)result->cells_x + 1u, (size_t)result->cells_z + 1u, &samples))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "grid too large");

    size_t total = CACHE_HEADER_SIZE + CACHE_CHECKSUM_SIZE;
    trn_status st = TRN_OK;
    uint8_t *blobs[TRN_GRAPH_MAX_OUTPUTS] = {NULL};
    size_t blob_sizes[TRN_GRAPH_MAX_OUTPUTS] = {0};
    bool v2 = result->note[0] != '\0', v3 = false;
    uint32_t transport_mask = 0; /* outputs a transport array follows, bit k for output k */
    for (uint32_t k = 0; k < result->output_count && !st; k++) {
        size_t bytes = 0;
        const trn_gout *o = &result->outputs[k];
        st = output_size(o, k, result->cells_x, result->cells_z, samples, &bytes, &blobs[k],
                         &blob_sizes[k], err);
        if (!st && !trn_add_size(total, bytes, &total))
            st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "result too large");
        if (!st && o->transport) {
            if (!kind_has_transport((uint32_t)o->kind))
                st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                   "output %" PRIu32 " (%s): carries no transport, only "
                                   "heightfield and drainage outputs do",
                                   k, kind_name((uint32_t)o->kind));
            else if (!(st = check_array(o->transport, sizeof(float), samples, "transport", k,
                                        err)) &&
                     !trn_add_size(total, 8u + samples * 4u, &total))
                st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "result too large");
            transport_mask |= 1u << k;
        }
        v2 = v2 || o->kind == TRN_PIN_WATER;
        v3 = v3 || o->kind == TRN_PIN_INSTANCES;
    }
    if (!st && transport_mask && !trn_add_size(total, 4u, &total))
        st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "result too large");
    v3 = v3 || transport_mask != 0;
    const char *note_end = memchr(result->note, '\0', sizeof result->note);
    const size_t note_len = note_end ? (size_t)(note_end - result->note) : sizeof result->note - 1u;
    if (!st && note_len && !trn_add_size(total, 4u + note_len, &total))
        st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "result too large");
    if (st) {
        for (uint32_t k = 0; k < TRN_GRAPH_MAX_OUTPUTS; k++)
            free(blobs[k]);
        return st;
    }
    if (result->change) {
        if ((st = check_array(result->change, sizeof(float), samples, "change",
                              result->output_count, err)) == TRN_OK &&
            !trn_add_size(total, 8u + samples * 4u, &total))
            st = trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "result too large");
    }
    uint8_t *buf = st ? NULL : malloc(total);
    if (!st && !buf) st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    if (st) {
        for (uint32_t k = 0; k < TRN_GRAPH_MAX_OUTPUTS; k++)
            free(blobs[k]);
        return st;
    }
    writer w = {buf};
    memcpy(w.p, cache_magic, sizeof cache_magic);
    w.p += sizeof cache_magic;
    put_u32(&w, v3 ? 3u : v2 ? 2u : 1u);
    put_u64(&w, result->key);
    put_u32(&w, result->cells_x);
    put_u32(&w, result->cells_z);
    put_f64(&w, result->size_x);
    put_f64(&w, result->size_z);
    put_f64(&w, result->cpu_seconds);
    uint32_t flags = (result->has_ledger ? CACHE_FLAG_LEDGER : 0u) |
                     (result->biome_rules ? CACHE_FLAG_BIOME_RULES : 0u) |
                     (result->change ? CACHE_FLAG_CHANGE : 0u) | (note_len ? CACHE_FLAG_NOTE : 0u) |
                     (transport_mask ? CACHE_FLAG_TRANSPORT : 0u);
    put_u32(&w, flags);
    /* Always present, so the header has one size; zeros unless has_ledger. */
    put_f64(&w, result->ledger.eroded);
    put_f64(&w, result->ledger.deposited);
    put_f64(&w, result->ledger.exported);
    put_f64(&w, result->ledger.suspended);
    put_u64(&w, result->ledger.droplets);
    put_u64(&w, result->ledger.steps);
    put_u32(&w, result->output_count);
    for (uint32_t k = 0; k < result->output_count; k++) {
        put_output(&w, &result->outputs[k], blobs[k], blob_sizes[k]);
        free(blobs[k]);
    }
    if (result->change) put_array(&w, result->change);
    if (transport_mask) {
        put_u32(&w, transport_mask);
        for (uint32_t k = 0; k < result->output_count; k++)
            if (transport_mask & (1u << k)) put_array(&w, result->outputs[k].transport);
    }
    if (note_len) {
        put_u32(&w, (uint32_t)note_len);
        memcpy(w.p, result->note, note_len);
        w.p += note_len;
    }
    size_t body = (size_t)(w.p - buf);
    put_u64(&w, (uint64_t)XXH64(buf, body, 0));
    *data = buf;
    *size = total;
    return TRN_OK;
}

/* ---- reading ---- */

typedef struct parser {
    trn_cursor c;
    const char *path;
    trn_error *err;
    const trn_cache_file_limits *limits;
    uint32_t cells_x, cells_z;
    size_t samples;
    uint32_t version;
} parser;

/* The file ends before `need` bytes of `section` at the cursor. */
static trn_status truncated(parser *ps, const char *section, uint64_t need)
{
    return trn_error_set(ps->err, TRN_ERR_TRUNCATED, ps->path, (int64_t)ps->c.pos,
                         "%s: expected %" PRIu64
                         " bytes at offset %zu, the file ends at offset %zu",
                         section, need, ps->c.pos, ps->c.size);
}

static trn_status rd_u32(parser *ps, const char *section, uint32_t *v)
{
    return trn_cursor_u32le(&ps->c, v) ? TRN_OK : truncated(ps, section, 4);
}

static bool cursor_u64(trn_cursor *c, uint64_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 8);
    if (!p) return false;
    uint64_t u = 0;
    for (unsigned k = 0; k < 8; k++)
        u |= (uint64_t)p[k] << (8 * k);
    *v = u;
    return true;
}

static trn_status rd_u64(parser *ps, const char *section, uint64_t *v)
{
    return cursor_u64(&ps->c, v) ? TRN_OK : truncated(ps, section, 8);
}

static trn_status rd_f64(parser *ps, const char *section, double *v)
{
    uint64_t u;
    if (!cursor_u64(&ps->c, &u)) return truncated(ps, section, 8);
    memcpy(v, &u, sizeof *v);
    return TRN_OK;
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* A length-prefixed array that must hold exactly the grid's samples. The count and the bytes
 * left are checked before anything is allocated. */
static trn_status rd_array(parser *ps, const char *section, size_t elem_size, trn_gbuf **out)
{
    size_t at = ps->c.pos;
    uint64_t count = 0;
    trn_status st = rd_u64(ps, section, &count);
    if (st) return st;
    if (count != (uint64_t)ps->samples)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)at,
                             "%s: %" PRIu64 " elements, expected %zu (the grid's samples)", section,
                             count, ps->samples);
    size_t bytes = 0;
    if (!trn_mul_size(ps->samples, elem_size, &bytes))
        return trn_error_set(ps->err, TRN_ERR_LIMIT, ps->path, (int64_t)at,
                             "%s: %zu samples do not fit in memory", section, ps->samples);
    const uint8_t *src = trn_cursor_take(&ps->c, bytes);
    if (!src) return truncated(ps, section, bytes);
    trn_gbuf *buf = trn_gbuf_new(ps->samples, elem_size);
    if (!buf)
        return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, (int64_t)at,
                             "%s: out of memory for %zu samples", section, ps->samples);
    if (elem_size == 1) {
        memcpy(buf->data, src, bytes);
    } else {
        uint8_t *dst = buf->data;
        for (size_t i = 0; i < ps->samples; i++) {
            uint32_t u = load_u32(src + 4 * i);
            memcpy(dst + 4 * i, &u, sizeof u);
        }
    }
    *out = buf;
    return TRN_OK;
}

static trn_status rd_basins(parser *ps, const char *section, trn_gbuf **out)
{
    size_t at = ps->c.pos;
    uint64_t count = 0;
    trn_status st = rd_u64(ps, section, &count);
    if (st) return st;
    if (count > ps->limits->max_basins)
        return trn_error_set(ps->err, TRN_ERR_LIMIT, ps->path, (int64_t)at,
                             "%s: %" PRIu64 " basins, more than the limit of %" PRIu64, section,
                             count, ps->limits->max_basins);
    /* Every basin has its own sink sample. */
    if (count > (uint64_t)ps->samples)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)at,
                             "%s: %" PRIu64 " basins, more than the grid's %zu samples", section,
                             count, ps->samples);
    size_t n = (size_t)count, bytes = n * CACHE_BASIN_SIZE; /* n <= samples: no overflow */
    if (!trn_cursor_has(&ps->c, bytes)) return truncated(ps, section, bytes);
    trn_gbuf *buf = trn_gbuf_new(n, sizeof(trn_basin));
    if (!buf)
        return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, (int64_t)at,
                             "%s: out of memory for %zu basins", section, n);
    trn_basin *basins = buf->data;
    for (size_t b = 0; b < n; b++) {
        size_t basin_at = ps->c.pos;
        trn_basin *v = &basins[b];
        uint32_t height = 0, spill = 0;
        /* The bytes are there (checked above); the cursor reads cannot fail. */
        (void)cursor_u64(&ps->c, &v->id);
        (void)trn_cursor_u32le(&ps->c, &v->sink_i);
        (void)trn_cursor_u32le(&ps->c, &v->sink_j);
        (void)trn_cursor_u32le(&ps->c, &height);
        (void)trn_cursor_u32le(&ps->c, &spill);
        (void)trn_cursor_u32le(&ps->c, &v->spill_i);
        (void)trn_cursor_u32le(&ps->c, &v->spill_j);
        (void)cursor_u64(&ps->c, &v->area);
        memcpy(&v->sink_height, &height, sizeof height);
        memcpy(&v->spill_level, &spill, sizeof spill);
        const char *why = basin_problem(v, ps->cells_x, ps->cells_z, ps->samples, b > 0,
                                        b > 0 ? basins[b - 1].id : 0);
        if (why) {
            trn_gbuf_release(buf);
            return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)basin_at,
                                 "%s: basin %zu: %s", section, b, why);
        }
    }
    *out = buf;
    return TRN_OK;
}

/* An instances output: a count within the limit, then each instance, checked like the writer
 * checks them. */
static trn_status rd_instances(parser *ps, uint32_t index, trn_gout *o)
{
    char section[96];
    snprintf(section, sizeof section, "output %" PRIu32 " (instances)", index);
    const size_t at = ps->c.pos;
    uint64_t count = 0;
    trn_status st = rd_u64(ps, section, &count);
    if (st) return st;
    if (count > ps->limits->max_instances)
        return trn_error_set(ps->err, TRN_ERR_LIMIT, ps->path, (int64_t)at,
                             "%s: %" PRIu64 " instances, more than the limit of %" PRIu64, section,
                             count, ps->limits->max_instances);
    /* count <= max_instances: the byte count fits in 64 bits; the cursor says if they are there. */
    const uint64_t bytes = count * CACHE_INSTANCE_SIZE;
    if (bytes > trn_cursor_left(&ps->c)) return truncated(ps, section, bytes);
    trn_instances *in = calloc(1, sizeof *in);
    if (in && count) in->items = malloc((size_t)count * sizeof *in->items);
    if (!in || (count && !in->items)) {
        free(in);
        return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, (int64_t)at,
                             "%s: out of memory for %" PRIu64 " instances", section, count);
    }
    in->count = (size_t)count;
    for (size_t k = 0; k < in->count; k++) {
        const size_t item_at = ps->c.pos;
        trn_instance *v = &in->items[k];
        uint64_t cx = 0, cz = 0;
        /* The bytes are there (checked above); the cursor reads cannot fail. */
        (void)trn_cursor_u32le(&ps->c, &v->rule);
        (void)cursor_u64(&ps->c, &cx);
        (void)cursor_u64(&ps->c, &cz);
        (void)rd_f64(ps, section, &v->x);
        (void)rd_f64(ps, section, &v->y);
        (void)rd_f64(ps, section, &v->z);
        (void)rd_f64(ps, section, &v->yaw);
        (void)rd_f64(ps, section, &v->scale);
        v->cx = (int64_t)cx;
        v->cz = (int64_t)cz;
        const char *why = instance_problem(v, k ? &in->items[k - 1] : NULL);
        if (why) {
            trn_instances_dispose(in);
            free(in);
            return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)item_at,
                                 "%s: instance %zu: %s", section, k, why);
        }
    }
    if (!(o->instances = trn_gbuf_wrap_instances(in)))
        return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, -1, "out of memory");
    return TRN_OK;
}

/* A water output: its length and the water format's bytes, on this result's grid. */
static trn_status rd_water(parser *ps, uint32_t index, trn_gout *o)
{
    char section[96];
    snprintf(section, sizeof section, "output %" PRIu32 " (water)", index);
    uint64_t len = 0;
    trn_status st = rd_u64(ps, section, &len);
    if (st) return st;
    const size_t at = ps->c.pos;
    if (len > trn_cursor_left(&ps->c)) return truncated(ps, section, len);
    trn_water_limits limits;
    trn_water_limits_default(&limits);
    limits.max_samples = ps->limits->max_samples;
    trn_water *w = calloc(1, sizeof *w);
    if (!w) return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, -1, "out of memory");
    trn_error inner = {0};
    st = trn_water_decode(ps->c.data + at, (size_t)len, NULL, &limits, w, &inner);
    if (st) {
        free(w);
        return trn_error_set(ps->err, st, ps->path,
                             (int64_t)at + (inner.offset > 0 ? inner.offset : 0), "%s: %s", section,
                             inner.message);
    }
    if (w->cells_x != ps->cells_x || w->cells_z != ps->cells_z) {
        trn_water_dispose(w);
        free(w);
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)at,
                             "%s: water on another grid than the result's", section);
    }
    if (!(o->water = trn_gbuf_wrap_water(w)))
        return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, -1, "out of memory");
    trn_cursor_skip(&ps->c, (size_t)len);
    return TRN_OK;
}

static trn_status rd_output(parser *ps, uint32_t index, trn_gout *o)
{
    char section[96];
    size_t at = ps->c.pos;
    uint32_t kind = 0;
    snprintf(section, sizeof section, "output %" PRIu32 " kind", index);
    trn_status st = rd_u32(ps, section, &kind);
    if (st) return st;
    if (kind >= (uint32_t)TRN_PIN_KIND_COUNT)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)at,
                             "%s: unknown pin kind %" PRIu32 ", expected 0..%u", section, kind,
                             (unsigned)TRN_PIN_KIND_COUNT - 1u);
    if (!kind_stored(kind, ps->version))
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)at,
                             "%s: pin kind %" PRIu32 " (%s) has no cache file form in format "
                             "version %u",
                             section, kind, kind_name(kind), ps->version);
    o->kind = (trn_pin_kind)kind;
    if (kind == TRN_PIN_WATER) return rd_water(ps, index, o);
    if (kind == TRN_PIN_INSTANCES) return rd_instances(ps, index, o);
    const char *name = kind_name(kind);
#define SECTION(part)                                                                              \
    snprintf(section, sizeof section, "output %" PRIu32 " (%s) " part, index, name)
    if (kind != TRN_PIN_DRAINAGE) {
        SECTION("values");
        return rd_array(ps, section, sizeof(float), &o->values);
    }
    SECTION("sea_level");
    if ((st = rd_f64(ps, section, &o->sea_level))) return st;
    SECTION("source");
    if ((st = rd_array(ps, section, sizeof(float), &o->source))) return st;
    SECTION("filled");
    if ((st = rd_array(ps, section, sizeof(float), &o->filled))) return st;
    SECTION("flow_dir");
    size_t dirs_at = ps->c.pos + 8u;
    if ((st = rd_array(ps, section, 1, &o->flow_dir))) return st;
    size_t bad = first_bad_flow_dir(o->flow_dir->data, ps->samples);
    if (bad < ps->samples)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)(dirs_at + bad),
                             "%s: sample %zu has code %u, expected 0..%u", section, bad,
                             ((const uint8_t *)o->flow_dir->data)[bad], TRN_DRAIN_OUTLET);
    SECTION("accumulation");
    if ((st = rd_array(ps, section, sizeof(uint32_t), &o->accumulation))) return st;
    SECTION("basins");
#undef SECTION
    return rd_basins(ps, section, &o->basins);
}

static trn_status rd_header(parser *ps, uint64_t expected_key, trn_node_result **out,
                            uint32_t *flags)
{
    size_t head = ps->c.size < sizeof cache_magic ? ps->c.size : sizeof cache_magic;
    if (head && memcmp(ps->c.data, cache_magic, head) != 0)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, 0,
                             "magic: expected \"TRNCACHE\", this is not a terrane cache file");
    if (!trn_cursor_skip(&ps->c, sizeof cache_magic)) return truncated(ps, "magic", 8);
    uint32_t version = 0;
    trn_status st = rd_u32(ps, "version", &version);
    if (st) return st;
    if (version > CACHE_VERSION)
        return trn_error_set(ps->err, TRN_ERR_VERSION, ps->path, 8,
                             "version: %" PRIu32 " is newer than %u", version, CACHE_VERSION);
    if (version == 0)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, 8, "version: 0, expected 1..%u",
                             CACHE_VERSION);
    ps->version = version;
    uint64_t key = 0;
    if ((st = rd_u64(ps, "key", &key))) return st;
    if (expected_key != 0 && key != expected_key)
        return trn_error_set(ps->err, TRN_ERR_MISMATCH, ps->path, CACHE_KEY_OFFSET,
                             "key: %016" PRIx64 ", expected %016" PRIx64, key, expected_key);
    uint32_t cells_x = 0, cells_z = 0;
    double size_x = 0.0, size_z = 0.0, cpu_seconds = 0.0;
    if ((st = rd_u32(ps, "grid", &cells_x)) || (st = rd_u32(ps, "grid", &cells_z)) ||
        (st = rd_f64(ps, "grid", &size_x)) || (st = rd_f64(ps, "grid", &size_z)))
        return st;
    if (!grid_valid(cells_x, cells_z, size_x, size_z))
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, CACHE_GRID_OFFSET,
                             "grid: %" PRIu32 " x %" PRIu32 " cells over %g x %g, expected at "
                             "least one cell each way and finite positive sizes",
                             cells_x, cells_z, size_x, size_z);
    uint64_t samples = UINT64_MAX; /* 2^32 x 2^32 cells overflow: over any limit */
    bool fits = trn_mul_u64((uint64_t)cells_x + 1u, (uint64_t)cells_z + 1u, &samples);
    if (!fits || samples > ps->limits->max_samples || samples > SIZE_MAX)
        return trn_error_set(ps->err, TRN_ERR_LIMIT, ps->path, CACHE_GRID_OFFSET,
                             "grid: %" PRIu32 " x %" PRIu32 " cells are %s%" PRIu64
                             " samples per array, more than the limit of %" PRIu64,
                             cells_x, cells_z, fits ? "" : "over ", samples,
                             ps->limits->max_samples);
    ps->cells_x = cells_x;
    ps->cells_z = cells_z;
    ps->samples = (size_t)samples;
    size_t cpu_at = ps->c.pos;
    if ((st = rd_f64(ps, "cpu_seconds", &cpu_seconds))) return st;
    if (!isfinite(cpu_seconds) || cpu_seconds < 0.0)
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)cpu_at,
                             "cpu_seconds: %g, expected a finite time >= 0", cpu_seconds);
    size_t flags_at = ps->c.pos;
    if ((st = rd_u32(ps, "flags", flags))) return st;
    if (*flags & ~flags_known(version))
        return trn_error_set(ps->err, TRN_ERR_FORMAT, ps->path, (int64_t)flags_at,
                             "flags: 0x%" PRIx32 " has bits other than 0x%x", *flags,
                             flags_known(version));
    trn_erosion_ledger ledger = {0};
    if ((st = rd_f64(ps, "ledger", &ledger.eroded)) ||
        (st = rd_f64(ps, "ledger", &ledger.deposited)) ||
        (st = rd_f64(ps, "ledger", &ledger.exported)) ||
        (st = rd_f64(ps, "ledger", &ledger.suspended)) ||
        (st = rd_u64(ps, "ledger", &ledger.droplets)) || (st = rd_u64(ps, "ledger", &ledger.steps)))
        return st;
    trn_node_result *r = trn_node_result_new(key, cells_x, cells_z, size_x, size_z);
    if (!r) return trn_error_set(ps->err, TRN_ERR_NO_MEMORY, ps->path, -1, "out of memory");
    r->cpu_seconds = cpu_seconds;
    r->has_ledger = (*flags & CACHE_FLAG_LEDGER) != 0;
    r->biome_rules = (*flags & CACHE_FLAG_BIOME_RULES) != 0;
    r->ledger = ledger;
    *out = r;
    return TRN_OK;
}

trn_status trn_node_result_parse(const uint8_t *data, size_t size, const char *path,
                                 uint64_t expected_key, const trn_cache_file_limits *limits,
                                 trn_node_result **out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "parse: out is required");
    *out = NULL;
    if (!data && size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "parse: no data");
    trn_cache_file_limits defaults;
    if (!limits) {
        trn_cache_file_limits_default(&defaults);
        limits = &defaults;
    }
    parser ps = {.path = path, .err = err, .limits = limits};
    trn_cursor_init(&ps.c, data, size);

    trn_node_result *r = NULL;
    uint32_t flags = 0;
    trn_status st = rd_header(&ps, expected_key, &r, &flags);
    if (st) return st;
    size_t count_at = ps.c.pos;
    uint32_t output_count = 0;
    if ((st = rd_u32(&ps, "output_count", &output_count))) goto fail;
    if (output_count > TRN_GRAPH_MAX_OUTPUTS) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)count_at,
                           "output_count: %" PRIu32 ", at most %u", output_count,
                           TRN_GRAPH_MAX_OUTPUTS);
        goto fail;
    }
    for (uint32_t k = 0; k < output_count; k++) {
        /* Count each output as it is read so a failure frees what was read. */
        r->output_count = k + 1;
        if ((st = rd_output(&ps, k, &r->outputs[k]))) goto fail;
    }
    r->output_count = output_count;
    if ((flags & CACHE_FLAG_CHANGE) && (st = rd_array(&ps, "change", sizeof(float), &r->change)))
        goto fail;
    if (flags & CACHE_FLAG_TRANSPORT) {
        const size_t mask_at = ps.c.pos;
        uint32_t mask = 0;
        if ((st = rd_u32(&ps, "transport outputs", &mask))) goto fail;
        for (uint32_t k = 0; k < 32u && !st; k++) {
            if (!(mask & (1u << k))) continue;
            if (k >= r->output_count || !kind_has_transport((uint32_t)r->outputs[k].kind)) {
                st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)mask_at,
                                   "transport outputs: 0x%" PRIx32 " names output %" PRIu32
                                   ", which is not a heightfield or drainage output",
                                   mask, k);
                break;
            }
            char section[48];
            snprintf(section, sizeof section, "output %" PRIu32 " transport", k);
            st = rd_array(&ps, section, sizeof(float), &r->outputs[k].transport);
        }
        if (!st && !mask)
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)mask_at,
                               "transport outputs: 0, expected at least one output");
        if (st) goto fail;
    }
    if (flags & CACHE_FLAG_NOTE) {
        const size_t note_at = ps.c.pos;
        uint32_t len = 0;
        if ((st = rd_u32(&ps, "note", &len))) goto fail;
        if (len == 0 || len >= sizeof r->note) {
            st =
                trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)note_at,
                              "note: %" PRIu32 " bytes, expected 1..%zu", len, sizeof r->note - 1u);
            goto fail;
        }
        if (len > trn_cursor_left(&ps.c)) {
            st = truncated(&ps, "note", len);
            goto fail;
        }
        memcpy(r->note, ps.c.data + ps.c.pos, len);
        r->note[len] = '\0';
        trn_cursor_skip(&ps.c, len);
    }

    size_t sum_at = ps.c.pos;
    uint64_t stored = 0;
    if ((st = rd_u64(&ps, "checksum", &stored))) goto fail;
    uint64_t computed = (uint64_t)XXH64(data, sum_at, 0);
    if (stored != computed) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)sum_at,
                           "checksum mismatch: stored %016" PRIx64 ", computed %016" PRIx64
                           " (XXH64 of the %zu bytes before it)",
                           stored, computed, sum_at);
        goto fail;
    }
    if (trn_cursor_left(&ps.c)) {
        st = trn_error_set(err, TRN_ERR_TRAILING_DATA, path, (int64_t)ps.c.pos,
                           "%zu bytes after the checksum, expected the file to end at offset %zu",
                           trn_cursor_left(&ps.c), ps.c.pos);
        goto fail;
    }
    /* One spelling per result: the writer uses the lowest version that holds it. */
    uint32_t needed = (flags & CACHE_FLAG_TRANSPORT) ? 3u : (flags & CACHE_FLAG_NOTE) ? 2u : 1u;
    for (uint32_t k = 0; k < r->output_count; k++) {
        const uint32_t kind = (uint32_t)r->outputs[k].kind;
        const uint32_t v = kind == TRN_PIN_INSTANCES ? 3u : kind == TRN_PIN_WATER ? 2u : 1u;
        if (v > needed) needed = v;
    }
    if (needed != ps.version) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, 8,
                           "version: %" PRIu32 ", expected %" PRIu32
                           " (the lowest version that holds this result)",
                           ps.version, needed);
        goto fail;
    }
    for (uint32_t k = 0; k < r->output_count; k++)
        if (r->outputs[k].kind == TRN_PIN_DRAINAGE)
            trn_gout_bind_drainage(&r->outputs[k], r->cells_x, r->cells_z, r->size_x, r->size_z);
    trn_node_result_measure(r);
    *out = r;
    return TRN_OK;
fail:
    trn_node_result_release(r);
    return st;
}

/* ---- the cache directory ---- */

/* DIR/<16 hex digits>.tnc in a malloc'd string (a trailing '/' on dir is not doubled). */
static char *cache_path(const char *dir, uint64_t key)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t len = n + 1 + 16 + 4 + 1;
    char *path = malloc(len);
    if (path) snprintf(path, len, "%.*s/%016" PRIx64 ".tnc", (int)n, dir, key);
    return path;
}

trn_status trn_node_result_write_file(const char *dir, const trn_node_result *result,
                                      trn_error *err)
{
    if (!dir || !*dir || !result)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "write cache file: dir and result are required");
    char *path = cache_path(dir, result->key);
    if (!path) return trn_error_set(err, TRN_ERR_NO_MEMORY, dir, -1, "out of memory");
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_mkdir_p(dir, err);
    if (!st) st = trn_node_result_serialize(result, &data, &size, err);
    if (st == TRN_OK)
        st = trn_file_write_atomic(path, data, size, err);
    else if (err && !err->file[0])
        snprintf(err->file, sizeof err->file, "%s", path); /* name the file it was meant for */
    free(data);
    free(path);
    return st;
}

trn_status trn_node_result_read_file(const char *dir, uint64_t key,
                                     const trn_cache_file_limits *limits, trn_node_result **out,
                                     trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "read cache file: out is required");
    *out = NULL;
    if (!dir || !*dir)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "read cache file: dir is required");
    char *path = cache_path(dir, key);
    if (!path) return trn_error_set(err, TRN_ERR_NO_MEMORY, dir, -1, "out of memory");
    trn_mapped_file mf;
    /* Mapped, not copied: a cached 4097^2 drainage result is hundreds of megabytes. */
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st == TRN_ERR_NOT_FOUND) {
        /* An ordinary cache miss: a plain code and a short message, nothing more. */
        trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1, "no cached result");
        free(path);
        return st;
    }
    if (!st) {
        st = trn_node_result_parse(mf.data, mf.size, path, key, limits, out, err);
        trn_mapped_file_close(&mf);
    }
    /* Key 0 is "any key" to the parser; the file name still promises this one. */
    if (!st && (*out)->key != key) {
        st = trn_error_set(err, TRN_ERR_MISMATCH, path, CACHE_KEY_OFFSET,
                           "key: %016" PRIx64 ", expected %016" PRIx64, (*out)->key, key);
        trn_node_result_release(*out);
        *out = NULL;
    }
    free(path);
    return st;
}

trn_status trn_node_result_peek_file(const char *dir, uint64_t key,
                                     const trn_cache_file_limits *limits, double *cpu_seconds,
                                     trn_error *err)
{
    if (!dir || !*dir || !key)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "peek cache file: dir and a key are required");
    char *path = cache_path(dir, key);
    if (!path) return trn_error_set(err, TRN_ERR_NO_MEMORY, dir, -1, "out of memory");
    trn_cache_file_limits defaults;
    if (!limits) {
        trn_cache_file_limits_default(&defaults);
        limits = &defaults;
    }
    trn_mapped_file mf;
    /* Mapped: only the header's pages are read. */
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st == TRN_ERR_NOT_FOUND)
        trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1, "no cached result");
    if (!st) {
        parser ps = {.path = path, .err = err, .limits = limits};
        trn_cursor_init(&ps.c, mf.data, mf.size);
        trn_node_result *r = NULL;
        uint32_t flags = 0;
        st = rd_header(&ps, key, &r, &flags);
        /* The checksum still covers the body (a damaged file is not "cached"); hashing the
         * mapped bytes costs far less than parsing them into arrays. */
        uint64_t stored = 0;
        trn_cursor tail;
        trn_cursor_init(&tail, mf.data, mf.size);
        const bool has_sum =
            mf.size >= 8 && trn_cursor_skip(&tail, mf.size - 8) && cursor_u64(&tail, &stored);
        if (!st && (!has_sum || stored != (uint64_t)XXH64(mf.data, mf.size - 8, 0)))
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)(mf.size >= 8 ? mf.size - 8 : 0),
                               "checksum mismatch");
        if (!st && cpu_seconds) *cpu_seconds = r->cpu_seconds;
        trn_node_result_release(r);
        trn_mapped_file_close(&mf);
    }
    free(path);
    return st;
}
