/* Resolved water as bytes: a little-endian, versioned, sectioned and checksummed format. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "water/water_internal.h"
#include "terrane/water.h"

/* Layout (every number little-endian, doubles as their IEEE-754 bits):
 *   "TRNWATER"  u32 version
 *   section "GRID": u32 cells_x, cells_z; f64 size_x, size_z; u64 ground_hash; u32 body_count
 *   body_count sections "BODY": one body, every field (see put_body)
 *   section "SMPL" when body_count > 0: i32 owner[samples], u8 wet[samples],
 *     f32 surface[samples], u32 segment[samples]
 *   u64 XXH64 (seed 0) of every byte before it
 * A section is a 4-byte tag, a u64 length and that many bytes; its fields fill it exactly. */

/* Length of a text in a fixed array that may lack its terminator (then the array's size). */
static size_t text_len(const char *text, size_t capacity)
{
    const char *end = memchr(text, '\0', capacity);
    return end ? (size_t)(end - text) : capacity;
}

static const uint8_t water_magic[8] = {'T', 'R', 'N', 'W', 'A', 'T', 'E', 'R'};

void trn_water_limits_default(trn_water_limits *limits)
{
    if (!limits) return;
    limits->max_samples = (uint64_t)1 << 30;
    limits->max_bodies = 65536u;
    limits->max_points = 1u << 20;
}

/* ---- writing ---- */

typedef struct wbuf {
    uint8_t *data;
    size_t size, capacity;
    bool failed;
} wbuf;

static uint8_t *w_room(wbuf *w, size_t n)
{
    if (w->failed) return NULL;
    size_t need;
    if (!trn_add_size(w->size, n, &need)) {
        w->failed = true;
        return NULL;
    }
    if (need > w->capacity) {
        size_t cap = w->capacity ? w->capacity : 4096u;
        while (cap < need) {
            if (cap > SIZE_MAX / 2u) {
                cap = need;
                break;
            }
            cap *= 2u;
        }
        uint8_t *grown = realloc(w->data, cap);
        if (!grown) {
            w->failed = true;
            return NULL;
        }
        w->data = grown;
        w->capacity = cap;
    }
    uint8_t *p = w->data + w->size;
    w->size = need;
    return p;
}

static void put_bytes(wbuf *w, const void *src, size_t n)
{
    uint8_t *p = w_room(w, n);
    if (p && n) memcpy(p, src, n);
}

static void put_u8(wbuf *w, uint8_t v)
{
    put_bytes(w, &v, 1);
}

static void put_u16(wbuf *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put_bytes(w, b, 2);
}

static void put_u32(wbuf *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put_bytes(w, b, 4);
}

static void put_u64(wbuf *w, uint64_t v)
{
    put_u32(w, (uint32_t)v);
    put_u32(w, (uint32_t)(v >> 32));
}

static void put_f64(wbuf *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(w, u);
}

static void put_f64s(wbuf *w, const double *v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        put_f64(w, v[k]);
}

/* Open a section: its tag and a length patched by end_section. */
static size_t begin_section(wbuf *w, const char tag[4])
{
    put_bytes(w, tag, 4);
    size_t at = w->size;
    put_u64(w, 0);
    return at;
}

static void end_section(wbuf *w, size_t at)
{
    if (w->failed) return;
    uint64_t len = (uint64_t)(w->size - at - 8u);
    for (int b = 0; b < 8; b++)
        w->data[at + (size_t)b] = (uint8_t)(len >> (8 * b));
}

static void put_look(wbuf *w, const trn_water_look *l)
{
    put_f64s(w, l->shallow_color, 4);
    put_f64s(w, l->deep_color, 4);
    put_f64(w, l->absorption_distance);
    put_f64(w, l->roughness);
    put_f64(w, l->flow_speed);
    put_f64s(w, l->flow_direction, 2);
    put_f64(w, l->wave_amplitude);
    put_f64(w, l->wave_length);
    put_f64(w, l->wave_speed);
    put_f64(w, l->normal_strength);
    put_f64(w, l->foam_width);
    put_f64(w, l->foam_strength);
    put_f64s(w, l->foam_color, 4);
}

static void put_body(wbuf *w, const trn_water_body *b)
{
    const size_t id_len = text_len(b->id, sizeof b->id);
    put_u16(w, (uint16_t)id_len);
    put_bytes(w, b->id, id_len);
    put_u32(w, (uint32_t)b->kind);
    put_f64(w, b->level);
    put_f64(w, b->center_x);
    put_f64(w, b->center_z);
    put_f64(w, b->radius);
    put_u32(w, b->boundary_count);
    put_f64s(w, b->boundary, (size_t)b->boundary_count * 2u);
    put_f64(w, b->carve_depth);
    put_u32(w, b->control_count);
    put_f64s(w, b->control, (size_t)b->control_count * 3u);
    put_u32(w, (uint32_t)b->interpolation);
    put_u32(w, b->curve_steps);
    put_u32(w, b->path_count);
    put_f64s(w, b->path, (size_t)b->path_count * 3u);
    put_f64(w, b->width);
    put_u32(w, (uint32_t)b->surface_mode);
    put_f64(w, b->river_depth);
    put_look(w, &b->look);
    put_u8(w, b->carve ? 1u : 0u);
    put_u64(w, b->wet_samples);
    put_f64(w, b->area);
    put_f64(w, b->volume);
    put_f64(w, b->min_surface);
    put_f64(w, b->max_surface);
    put_u32(w, b->warning_count);
    const size_t warning_len = text_len(b->warning, sizeof b->warning);
    put_u16(w, (uint16_t)warning_len);
    put_bytes(w, b->warning, warning_len);
    put_f64(w, b->warning_x);
    put_f64(w, b->warning_z);
}

trn_status trn_water_encode(const trn_water *water, uint8_t **data, size_t *size, trn_error *err)
{
    if (!water || !data || !size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water encode: expected water and outputs, found NULL");
    *data = NULL;
    *size = 0;
    if (water->cells_x == 0 || water->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water encode: expected a grid of at least 1x1 cells, found %ux%u",
                             water->cells_x, water->cells_z);
    size_t samples;
    if (!trn_mul_size((size_t)water->cells_x + 1u, (size_t)water->cells_z + 1u, &samples))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "water encode: %ux%u cells overflow the sample count", water->cells_x,
                             water->cells_z);
    if (water->body_count &&
        (!water->bodies || !water->owner || !water->wet || !water->surface || !water->segment))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water encode: expected bodies and per-sample arrays for %u bodies, "
                             "found NULL",
                             water->body_count);
    for (uint32_t k = 0; k < water->body_count; k++) {
        const trn_water_body *b = &water->bodies[k];
        if (text_len(b->id, sizeof b->id) == sizeof b->id ||
            text_len(b->warning, sizeof b->warning) == sizeof b->warning ||
            (b->boundary_count && !b->boundary) || (b->control_count && !b->control) ||
            (b->path_count && !b->path))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "water encode: body %u: expected terminated texts and arrays "
                                 "for its counts, found an unterminated id or warning or a "
                                 "NULL array",
                                 k);
    }

    wbuf w = {0};
    put_bytes(&w, water_magic, sizeof water_magic);
    put_u32(&w, TRN_WATER_FORMAT_VERSION);
    size_t at = begin_section(&w, "GRID");
    put_u32(&w, water->cells_x);
    put_u32(&w, water->cells_z);
    put_f64(&w, water->size_x);
    put_f64(&w, water->size_z);
    put_u64(&w, water->ground_hash);
    put_u32(&w, water->body_count);
    end_section(&w, at);
    for (uint32_t k = 0; k < water->body_count; k++) {
        at = begin_section(&w, "BODY");
        put_body(&w, &water->bodies[k]);
        end_section(&w, at);
    }
    if (water->body_count) {
        at = begin_section(&w, "SMPL");
        for (size_t s = 0; s < samples && !w.failed; s++)
            put_u32(&w, (uint32_t)water->owner[s]);
        put_bytes(&w, water->wet, samples);
        for (size_t s = 0; s < samples && !w.failed; s++) {
            uint32_t u;
            memcpy(&u, &water->surface[s], sizeof u);
            put_u32(&w, u);
        }
        for (size_t s = 0; s < samples && !w.failed; s++)
            put_u32(&w, water->segment[s]);
        end_section(&w, at);
    }
    if (!w.failed) put_u64(&w, (uint64_t)XXH64(w.data, w.size, 0));
    if (w.failed) {
        free(w.data);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "water encode: out of memory for %u bodies over %zu samples",
                             water->body_count, samples);
    }
    *data = w.data;
    *size = w.size;
    return TRN_OK;
}

/* ---- reading ---- */

typedef struct reader {
    trn_cursor c; /* bounded by the open section's end, else by the data's */
    size_t size;  /* all the bytes */
    size_t start; /* where the open section's fields begin */
    const char *path;
    trn_error *err;
    const trn_water_limits *limits;
    char section[160]; /* the section being read, for messages */
} reader;

/* The data ends before `need` bytes at the cursor (outside any section's fields). */
static trn_status truncated(reader *r, const char *what, uint64_t need)
{
    return trn_error_set(r->err, TRN_ERR_TRUNCATED, r->path, (int64_t)r->c.pos,
                         "%s: expected %" PRIu64 " bytes of %s at offset %zu, the data ends at "
                         "offset %zu",
                         r->section, need, what, r->c.pos, r->size);
}

/* A section's fields run past the length it declared. */
static trn_status overrun(reader *r, const char *what, uint64_t need)
{
    return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)r->c.pos,
                         "%s: expected %" PRIu64 " bytes of %s at offset %zu, the section's "
                         "length ends it at offset %zu",
                         r->section, need, what, r->c.pos, r->c.size);
}

static trn_status short_read(reader *r, const char *what, uint64_t need)
{
    return r->c.size < r->size ? overrun(r, what, need) : truncated(r, what, need);
}

static trn_status rd_bytes(reader *r, const char *what, size_t n, const uint8_t **p)
{
    *p = trn_cursor_take(&r->c, n);
    return *p ? TRN_OK : short_read(r, what, n);
}

static trn_status rd_u8(reader *r, const char *what, uint8_t *v)
{
    return trn_cursor_u8(&r->c, v) ? TRN_OK : short_read(r, what, 1);
}

static trn_status rd_u16(reader *r, const char *what, uint16_t *v)
{
    return trn_cursor_u16le(&r->c, v) ? TRN_OK : short_read(r, what, 2);
}

static trn_status rd_u32(reader *r, const char *what, uint32_t *v)
{
    return trn_cursor_u32le(&r->c, v) ? TRN_OK : short_read(r, what, 4);
}

static trn_status rd_u64(reader *r, const char *what, uint64_t *v)
{
    const uint8_t *p = NULL;
    trn_status st = rd_bytes(r, what, 8, &p);
    if (st) return st;
    uint64_t u = 0;
    for (int b = 7; b >= 0; b--)
        u = (u << 8) | p[b];
    *v = u;
    return TRN_OK;
}

static trn_status rd_f64(reader *r, const char *what, double *v)
{
    uint64_t u = 0;
    trn_status st = rd_u64(r, what, &u);
    if (!st) memcpy(v, &u, sizeof *v);
    return st;
}

static trn_status rd_f64s(reader *r, const char *what, double *v, size_t n)
{
    trn_status st = TRN_OK;
    for (size_t k = 0; k < n && !st; k++)
        st = rd_f64(r, what, &v[k]);
    return st;
}

/* Enter the next section, which must carry tag: its length must fit in the data. */
static trn_status open_section(reader *r, const char tag[4])
{
    const size_t at = r->c.pos;
    const uint8_t *p = NULL;
    trn_status st = rd_bytes(r, "section tag", 4, &p);
    if (st) return st;
    if (memcmp(p, tag, 4) != 0) {
        char found[20];
        size_t o = 0;
        for (int k = 0; k < 4; k++)
            o += (size_t)snprintf(found + o, sizeof found - o,
                                  p[k] >= 0x20 && p[k] < 0x7f ? "%c" : "\\x%02x", p[k]);
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)at,
                             "%s: expected section tag '%.4s', found '%s'", r->section, tag, found);
    }
    uint64_t len = 0;
    if ((st = rd_u64(r, "section length", &len))) return st;
    if (len > trn_cursor_left(&r->c))
        return trn_error_set(r->err, TRN_ERR_TRUNCATED, r->path, (int64_t)r->c.pos,
                             "%s: expected %" PRIu64 " bytes at offset %zu, the data ends at "
                             "offset %zu",
                             r->section, len, r->c.pos, r->size);
    r->start = r->c.pos;
    r->c.size = r->c.pos + (size_t)len;
    return TRN_OK;
}

/* Leave a section: its fields must fill it exactly. */
static trn_status close_section(reader *r)
{
    if (trn_cursor_left(&r->c))
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)r->c.pos,
                             "%s: expected the section to end at offset %zu, found %zu more "
                             "bytes in its length",
                             r->section, r->c.pos, trn_cursor_left(&r->c));
    r->c.size = r->size;
    return TRN_OK;
}

/* A count of points (dims doubles each) bounded by the limits and by the section's bytes. */
static trn_status rd_points(reader *r, const char *what, size_t dims, double **out, uint32_t *count)
{
    const size_t at = r->c.pos;
    uint32_t n = 0;
    trn_status st = rd_u32(r, what, &n);
    if (st) return st;
    if (n > r->limits->max_points)
        return trn_error_set(r->err, TRN_ERR_LIMIT, r->path, (int64_t)at,
                             "%s: %s: %" PRIu32 " points, more than the limit of %" PRIu32,
                             r->section, what, n, r->limits->max_points);
    const size_t bytes = (size_t)n * dims * 8u;
    if (bytes > trn_cursor_left(&r->c)) return short_read(r, what, bytes);
    if (n == 0) return TRN_OK;
    double *pts = malloc(bytes);
    if (!pts)
        return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, (int64_t)at,
                             "%s: out of memory for %" PRIu32 " points", r->section, n);
    (void)rd_f64s(r, what, pts, (size_t)n * dims); /* the bytes were checked above */
    *out = pts;
    *count = n;
    return TRN_OK;
}

/* A length-prefixed text without NUL bytes into buf (capacity bytes, terminator included). */
static trn_status rd_text(reader *r, const char *what, char *buf, size_t capacity)
{
    const size_t at = r->c.pos;
    uint16_t n = 0;
    trn_status st = rd_u16(r, what, &n);
    if (st) return st;
    if (n >= capacity)
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)at,
                             "%s: %s: expected at most %zu bytes, found %u", r->section, what,
                             capacity - 1u, n);
    const uint8_t *p = NULL;
    if ((st = rd_bytes(r, what, n, &p))) return st;
    if (memchr(p, 0, n))
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)at + 2,
                             "%s: %s: expected text without NUL bytes, found one", r->section,
                             what);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return TRN_OK;
}

/* An enum stored as u32 in 0..max. */
static trn_status rd_enum(reader *r, const char *what, uint32_t max, uint32_t *v)
{
    const size_t at = r->c.pos;
    trn_status st = rd_u32(r, what, v);
    if (st) return st;
    if (*v > max)
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)at,
                             "%s: %s: expected 0..%" PRIu32 ", found %" PRIu32, r->section, what,
                             max, *v);
    return TRN_OK;
}

static trn_status rd_look(reader *r, trn_water_look *l)
{
    trn_status st;
    if ((st = rd_f64s(r, "shallow_color", l->shallow_color, 4))) return st;
    if ((st = rd_f64s(r, "deep_color", l->deep_color, 4))) return st;
    if ((st = rd_f64(r, "absorption_distance", &l->absorption_distance))) return st;
    if ((st = rd_f64(r, "roughness", &l->roughness))) return st;
    if ((st = rd_f64(r, "flow_speed", &l->flow_speed))) return st;
    if ((st = rd_f64s(r, "flow_direction", l->flow_direction, 2))) return st;
    if ((st = rd_f64(r, "wave_amplitude", &l->wave_amplitude))) return st;
    if ((st = rd_f64(r, "wave_length", &l->wave_length))) return st;
    if ((st = rd_f64(r, "wave_speed", &l->wave_speed))) return st;
    if ((st = rd_f64(r, "normal_strength", &l->normal_strength))) return st;
    if ((st = rd_f64(r, "foam_width", &l->foam_width))) return st;
    if ((st = rd_f64(r, "foam_strength", &l->foam_strength))) return st;
    return rd_f64s(r, "foam_color", l->foam_color, 4);
}

/* One body's fields, as put_body wrote them (b is zeroed; its arrays are owned on return). */
static trn_status rd_body(reader *r, trn_water_body *b)
{
    trn_status st;
    uint32_t v = 0;
    uint8_t carve = 0;
    if ((st = rd_text(r, "id", b->id, sizeof b->id))) return st;
    /* Name the body by its id from here on. */
    size_t len = strlen(r->section);
    snprintf(r->section + len, sizeof r->section - len, " ('%.100s')", b->id);
    if ((st = rd_enum(r, "kind", TRN_WATER_RIVER, &v))) return st;
    b->kind = (trn_water_kind)v;
    if ((st = rd_f64(r, "level", &b->level))) return st;
    if ((st = rd_f64(r, "center_x", &b->center_x))) return st;
    if ((st = rd_f64(r, "center_z", &b->center_z))) return st;
    const size_t radius_at = r->c.pos;
    if ((st = rd_f64(r, "radius", &b->radius))) return st;
    if (!(b->radius >= 0.0))
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)radius_at,
                             "%s: radius: expected a number >= 0, found %g", r->section,
                             b->radius);
    if ((st = rd_points(r, "boundary", 2, &b->boundary, &b->boundary_count))) return st;
    if ((st = rd_f64(r, "carve_depth", &b->carve_depth))) return st;
    if ((st = rd_points(r, "river_path", 3, &b->control, &b->control_count))) return st;
    if ((st = rd_enum(r, "river_path_interpolation", TRN_RIVER_CATMULL_ROM, &v))) return st;
    b->interpolation = (trn_river_interpolation)v;
    if ((st = rd_u32(r, "river_curve_steps", &b->curve_steps))) return st;
    if ((st = rd_points(r, "sampled path", 3, &b->path, &b->path_count))) return st;
    const size_t width_at = r->c.pos;
    if ((st = rd_f64(r, "width", &b->width))) return st;
    if (!(b->width >= 0.0))
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)width_at,
                             "%s: width: expected a number >= 0, found %g", r->section, b->width);
    if ((st = rd_enum(r, "river_surface_mode", TRN_RIVER_SURFACE_FOLLOW_BED, &v))) return st;
    b->surface_mode = (trn_river_surface)v;
    if ((st = rd_f64(r, "river_depth", &b->river_depth))) return st;
    if ((st = rd_look(r, &b->look))) return st;
    const size_t carve_at = r->c.pos;
    if ((st = rd_u8(r, "carve", &carve))) return st;
    if (carve > 1)
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)carve_at,
                             "%s: carve: expected 0 or 1, found %u", r->section, carve);
    b->carve = carve == 1;
    if ((st = rd_u64(r, "wet_samples", &b->wet_samples))) return st;
    if ((st = rd_f64(r, "area", &b->area))) return st;
    if ((st = rd_f64(r, "volume", &b->volume))) return st;
    if ((st = rd_f64(r, "min_surface", &b->min_surface))) return st;
    if ((st = rd_f64(r, "max_surface", &b->max_surface))) return st;
    if ((st = rd_u32(r, "warning_count", &b->warning_count))) return st;
    if ((st = rd_text(r, "warning", b->warning, sizeof b->warning))) return st;
    if ((st = rd_f64(r, "warning_x", &b->warning_x))) return st;
    return rd_f64(r, "warning_z", &b->warning_z);
}

/* The per-sample arrays must agree with the bodies (checked after the checksum). */
static trn_status check_samples(reader *r, const trn_water *w, size_t samples, size_t at)
{
    const size_t owner_at = at, wet_at = at + samples * 4u, surface_at = wet_at + samples;
    const size_t segment_at = surface_at + samples * 4u;
    for (size_t s = 0; s < samples; s++) {
        const int32_t o = w->owner[s];
        const size_t i = s % ((size_t)w->cells_x + 1u), j = s / ((size_t)w->cells_x + 1u);
        if (o < -1 || o >= (int64_t)w->body_count)
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)(owner_at + s * 4u),
                                 "samples: owner of sample (%zu, %zu): expected -1..%" PRIu32
                                 ", found %" PRId32,
                                 i, j, w->body_count - 1u, o);
        if (w->wet[s] > 1 || (w->wet[s] && o < 0))
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)(wet_at + s),
                                 "samples: wet of sample (%zu, %zu): expected %s, found %u", i, j,
                                 o < 0 ? "0 (it has no owner)" : "0 or 1", w->wet[s]);
        if ((o < 0) != isnan(w->surface[s]))
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)(surface_at + s * 4u),
                                 "samples: surface of sample (%zu, %zu): expected %s, found %g", i,
                                 j, o < 0 ? "NaN (it has no owner)" : "a height",
                                 (double)w->surface[s]);
        uint32_t segments = 1;
        if (o >= 0 && w->bodies[o].kind == TRN_WATER_RIVER && w->bodies[o].path_count > 1)
            segments = w->bodies[o].path_count - 1u;
        if (w->segment[s] >= segments)
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)(segment_at + s * 4u),
                                 "samples: segment of sample (%zu, %zu): expected 0..%" PRIu32
                                 ", found %" PRIu32,
                                 i, j, segments - 1u, w->segment[s]);
    }
    return TRN_OK;
}

trn_status trn_water_decode(const uint8_t *data, size_t size, const char *path,
                            const trn_water_limits *limits, trn_water *out, trn_error *err)
{
    if (!out || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "water decode: expected data and an output, found NULL");
    memset(out, 0, sizeof *out);
    trn_water_limits defaults;
    if (!limits) {
        trn_water_limits_default(&defaults);
        limits = &defaults;
    }
    reader r = {.size = size, .path = path, .err = err, .limits = limits};
    trn_cursor_init(&r.c, data, size);
    trn_water w;
    memset(&w, 0, sizeof w);
    size_t *body_at = NULL;
    size_t samples_at = 0;
    trn_status st;

    snprintf(r.section, sizeof r.section, "header");
    const uint8_t *magic = NULL;
    if ((st = rd_bytes(&r, "magic", sizeof water_magic, &magic))) {
        /* Too short for the magic: say what it is not before saying it is short. */
        if (size && memcmp(data, water_magic, size < 8 ? size : 8) != 0)
            st = trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                               "header: expected the magic \"TRNWATER\", found other bytes");
        goto fail;
    }
    if (memcmp(magic, water_magic, sizeof water_magic) != 0) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                           "header: expected the magic \"TRNWATER\", found other bytes");
        goto fail;
    }
    uint32_t version = 0;
    if ((st = rd_u32(&r, "version", &version))) goto fail;
    if (version == 0 || version > TRN_WATER_FORMAT_VERSION) {
        st = trn_error_set(err, version == 0 ? TRN_ERR_FORMAT : TRN_ERR_VERSION, path, 8,
                           "header: expected format version 1..%u, found %" PRIu32,
                           TRN_WATER_FORMAT_VERSION, version);
        goto fail;
    }

    snprintf(r.section, sizeof r.section, "grid");
    if ((st = open_section(&r, "GRID"))) goto fail;
    if ((st = rd_u32(&r, "cells_x", &w.cells_x))) goto fail;
    if ((st = rd_u32(&r, "cells_z", &w.cells_z))) goto fail;
    if ((st = rd_f64(&r, "size_x", &w.size_x))) goto fail;
    if ((st = rd_f64(&r, "size_z", &w.size_z))) goto fail;
    if ((st = rd_u64(&r, "ground_hash", &w.ground_hash))) goto fail;
    const size_t count_at = r.c.pos;
    uint32_t body_count = 0;
    if ((st = rd_u32(&r, "body_count", &body_count))) goto fail;
    if ((st = close_section(&r))) goto fail;
    if (w.cells_x == 0 || w.cells_z == 0 || !(w.size_x > 0.0) || !(w.size_z > 0.0) ||
        !isfinite(w.size_x) || !isfinite(w.size_z)) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)r.start,
                           "grid: expected at least 1x1 cells over a positive finite size, found "
                           "%" PRIu32 "x%" PRIu32 " cells over %g x %g",
                           w.cells_x, w.cells_z, w.size_x, w.size_z);
        goto fail;
    }
    uint64_t samples64;
    if (!trn_mul_u64((uint64_t)w.cells_x + 1u, (uint64_t)w.cells_z + 1u, &samples64) ||
        samples64 > limits->max_samples) {
        st = trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)r.start,
                           "grid: %" PRIu32 "x%" PRIu32 " cells, more samples than the limit of "
                           "%" PRIu64,
                           w.cells_x, w.cells_z, limits->max_samples);
        goto fail;
    }
    if (body_count > limits->max_bodies) {
        st = trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)count_at,
                           "grid: %" PRIu32 " bodies, more than the limit of %" PRIu32, body_count,
                           limits->max_bodies);
        goto fail;
    }
    /* Every body takes at least its section header: a count the data cannot hold is cut short
     * before anything is allocated for it. */
    if ((uint64_t)body_count * 12u > trn_cursor_left(&r.c)) {
        st = trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)r.c.pos,
                           "body 0: expected at least %" PRIu64 " bytes for the grid's %" PRIu32
                           " bodies at offset %zu, the data ends at offset %zu",
                           (uint64_t)body_count * 12u, body_count, r.c.pos, size);
        goto fail;
    }
    if (body_count) {
        w.bodies = calloc(body_count, sizeof *w.bodies);
        body_at = malloc(body_count * sizeof *body_at);
        if (!w.bodies || !body_at) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, (int64_t)count_at,
                               "grid: out of memory for %" PRIu32 " bodies", body_count);
            goto fail;
        }
    }
    for (uint32_t k = 0; k < body_count; k++) {
        snprintf(r.section, sizeof r.section, "body %" PRIu32, k);
        body_at[k] = r.c.pos;
        if ((st = open_section(&r, "BODY"))) goto fail;
        /* Counted before it is read, so a failure frees what it holds. */
        w.body_count = k + 1u;
        if ((st = rd_body(&r, &w.bodies[k]))) goto fail;
        if ((st = close_section(&r))) goto fail;
    }

    const size_t samples = (size_t)samples64;
    if (body_count) {
        snprintf(r.section, sizeof r.section, "samples");
        if ((st = open_section(&r, "SMPL"))) goto fail;
        samples_at = r.c.pos;
        /* The section length was checked against the data; its fields must match it. */
        if ((uint64_t)(r.c.size - r.c.pos) / 13u < samples64) {
            st = overrun(&r, "per-sample arrays", samples64 * 13u);
            goto fail;
        }
        w.owner = malloc(samples * sizeof *w.owner);
        w.wet = malloc(samples);
        w.surface = malloc(samples * sizeof *w.surface);
        w.segment = malloc(samples * sizeof *w.segment);
        if (!w.owner || !w.wet || !w.surface || !w.segment) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, (int64_t)samples_at,
                               "samples: out of memory for %zu samples", samples);
            goto fail;
        }
        for (size_t s = 0; s < samples; s++)
            trn_cursor_i32le(&r.c, &w.owner[s]);
        memcpy(w.wet, trn_cursor_take(&r.c, samples), samples);
        for (size_t s = 0; s < samples; s++)
            trn_cursor_f32le(&r.c, &w.surface[s]);
        for (size_t s = 0; s < samples; s++)
            trn_cursor_u32le(&r.c, &w.segment[s]);
        if ((st = close_section(&r))) goto fail;
    }

    snprintf(r.section, sizeof r.section, "checksum");
    const size_t sum_at = r.c.pos;
    uint64_t stored = 0;
    if ((st = rd_u64(&r, "checksum", &stored))) goto fail;
    const uint64_t computed = (uint64_t)XXH64(data, sum_at, 0);
    if (stored != computed) {
        st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)sum_at,
                           "checksum: expected %016" PRIx64 " (XXH64 of the %zu bytes before "
                           "it), found %016" PRIx64,
                           computed, sum_at, stored);
        goto fail;
    }
    if (trn_cursor_left(&r.c)) {
        st = trn_error_set(err, TRN_ERR_TRAILING_DATA, path, (int64_t)r.c.pos,
                           "checksum: expected the data to end at offset %zu, found %zu more "
                           "bytes",
                           r.c.pos, trn_cursor_left(&r.c));
        goto fail;
    }

    /* The bytes are what was written; now check that what was written makes sense. */
    for (uint32_t k = 0; k < w.body_count; k++) {
        const char *field = NULL;
        trn_error inner;
        trn_error_clear(&inner);
        if (trn_water_body_validate(&w.bodies[k], &field, &inner) != TRN_OK) {
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)body_at[k],
                               "body %" PRIu32 ": %s", k, inner.message);
            goto fail;
        }
    }
    if (w.body_count && (st = check_samples(&r, &w, samples, samples_at))) goto fail;
    if (!trn_water_index_wet(&w)) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
        goto fail;
    }
    free(body_at);
    *out = w;
    return TRN_OK;

fail:
    free(body_at);
    trn_water_dispose(&w);
    return st;
}
