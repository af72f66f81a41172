/* BeamNG / Torque3D .ter files: modern (v7-9) reader and streaming writer, sniffing, fields. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* madvise(MADV_HUGEPAGE) on Linux */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/checked.h"
#include "core/cursor.h"
#include "core/fileio.h"
#include "core/progress.h"
#include "ter_internal.h"
#include "terrane/beamng.h"

#define TER_HEADER_BYTES 5u
#define TER_MIN_MODERN 7u
/* Large reads go in chunks so progress can be reported and cancel honoured between them. */
#define TER_IO_CHUNK ((size_t)8 << 20)
#define TER_WRITE_CHUNK ((size_t)4 << 20)
#define TER_HUGE_PAGE ((size_t)2 << 20)

/* ---------------------------------------------------------------- small helpers */

static bool host_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t first;
    memcpy(&first, &one, 1);
    return first == 1;
}

static uint32_t load_u32le(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Little-endian bytes to host u16 (a plain copy on little-endian hosts). */
static void decode_u16le(uint16_t *dst, const uint8_t *src, size_t count)
{
    if (host_little_endian()) {
        memcpy(dst, src, count * 2);
        return;
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = (uint16_t)(src[2 * i] | (src[2 * i + 1] << 8));
}

static void encode_u16le(uint8_t *dst, const uint16_t *src, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        dst[2 * i] = (uint8_t)(src[i] & 0xFFu);
        dst[2 * i + 1] = (uint8_t)(src[i] >> 8);
    }
}

/* Big map buffers are 2 MiB aligned and marked for transparent huge pages: faulting in a fresh
 * 128 MiB buffer 4 KiB at a time costs about as much as the copy itself. free() releases it. */
static void *alloc_map(size_t bytes)
{
    if (bytes >= 4 * TER_HUGE_PAGE) {
        void *p = NULL;
        if (posix_memalign(&p, TER_HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
        (void)madvise(p, bytes & ~(TER_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
        return p;
    }
    return malloc(bytes ? bytes : 1);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

/* ---------------------------------------------------------------- public basics */

void trn_ter_limits_default(trn_ter_limits *limits)
{
    if (!limits) return;
    limits->max_size = 16384;
    limits->max_materials = 65536;
    limits->max_file_bytes = (uint64_t)8 << 30;
    limits->max_samples = TRN_TER_DEFAULT_MAX_SAMPLES;
}

const char *trn_ter_layout_name(trn_ter_layout layout)
{
    switch (layout) {
    case TRN_TER_LAYOUT_MODERN:
        return "modern";
    case TRN_TER_LAYOUT_EXTRA_1:
        return "modern + 1 extra map (community layout)";
    case TRN_TER_LAYOUT_EXTRA_4:
        return "modern + 4 extra maps (a version 8 World Editor layout)";
    case TRN_TER_LAYOUT_EXTRA_5:
        return "modern + 5 extra maps (community layout)";
    case TRN_TER_LAYOUT_LEGACY:
        return "legacy (Torque Game Engine)";
    }
    return "unknown";
}

void trn_ter_dispose(trn_ter *ter)
{
    if (!ter) return;
    free(ter->heights);
    free(ter->layers);
    if (ter->materials)
        for (uint32_t i = 0; i < ter->material_count; i++)
            free(ter->materials[i]);
    free(ter->materials);
    free(ter->material_lengths);
    free(ter->material_long_form);
    free(ter->extra_maps);
    free(ter->legacy_material_map);
    for (unsigned i = 0; i < TRN_TER_LEGACY_SLOTS; i++) {
        free(ter->legacy_names[i]);
        free(ter->legacy_alpha[i]);
    }
    free(ter->texture_script);
    free(ter->heightfield_script);
    free(ter->edge_paths[0]);
    free(ter->edge_paths[1]);
    free(ter->warnings);
    memset(ter, 0, sizeof *ter);
}

bool trn_ter_sniff(const uint8_t *data, size_t size)
{
    static const char terragen[8] = {'T', 'E', 'R', 'R', 'A', 'G', 'E', 'N'};
    if (!data || size == 0) return false;
    if (memcmp(data, terragen, size < 8 ? size : 8) == 0) return false;
    uint8_t version = data[0];
    if (version == 0) return false;
    if (version < TER_MIN_MODERN) return true; /* legacy: the size is implied (256) */
    if (size < TER_HEADER_BYTES) return false;
    uint32_t side = load_u32le(data + 1);
    return side >= 1 && side <= 65536;
}

/* ---------------------------------------------------------------- header */

typedef struct ter_geometry {
    uint8_t version;
    uint32_t size;
    size_t samples;      /* size * size */
    uint64_t heights_at; /* file offsets of the sections */
    uint64_t layers_at;
    uint64_t body_end; /* where the material count starts in the modern layout */
} ter_geometry;

/* Check version and size. head holds the first head_size bytes (at least min(5, file_size)).
 * For a legacy version only g->version is set. */
static trn_status check_header(const uint8_t *head, size_t head_size, uint64_t file_size,
                               const char *path, const trn_ter_limits *lim, ter_geometry *g,
                               trn_error *err)
{
    memset(g, 0, sizeof *g);
    if (file_size == 0 || head_size == 0)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, 0,
                             "header: expected a version byte at offset 0, the file is empty");
    if (head_size >= 8 && memcmp(head, "TERRAGEN", 8) == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "header: this is a Terragen terrain (it starts with "
                             "\"TERRAGENTERRAIN \"), not a BeamNG/Torque .ter");
    /* A clone of a repository that keeps its terrains in Git LFS holds this small text in
     * place of the file until `git lfs pull`; its 'v' would read as version 118. */
    static const char lfs[] = "version https://git-lfs";
    if (head_size >= sizeof lfs - 1 && memcmp(head, lfs, sizeof lfs - 1) == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "header: this is a Git LFS pointer (a %llu-byte text starting with "
                             "\"%s\"), not the terrain: the repository it came from keeps the "
                             ".ter in Git LFS",
                             (unsigned long long)file_size, lfs);
    g->version = head[0];
    if (g->version == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "header: version 0 is not a .ter version (expected 1 to %u)",
                             TRN_TER_VERSION_CURRENT);
    if (g->version > TRN_TER_VERSION_CURRENT)
        return trn_error_set(err, TRN_ERR_VERSION, path, 0, "version %u is newer than %u",
                             g->version, TRN_TER_VERSION_CURRENT);
    if (g->version < TER_MIN_MODERN) {
        if (TRN_TER_LEGACY_SAMPLES > lim->max_samples)
            return trn_error_set(err, TRN_ERR_LIMIT, path, 0,
                                 "header: a version %u file is %u x %u = %u samples, more than "
                                 "the limit of %llu (raise the limits' max_samples; terrane: "
                                 "--max-samples N)",
                                 g->version, TRN_TER_LEGACY_SIZE, TRN_TER_LEGACY_SIZE,
                                 TRN_TER_LEGACY_SAMPLES, (unsigned long long)lim->max_samples);
        return TRN_OK;
    }
    if (file_size < TER_HEADER_BYTES || head_size < TER_HEADER_BYTES)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, 1,
                             "header: expected a 4-byte size at offset 1, the file ends at "
                             "offset %llu",
                             (unsigned long long)file_size);
    g->size = load_u32le(head + 1);
    if (g->size == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 1,
                             "header: size is 0; a terrain has at least 1 sample per side");
    if (g->size > lim->max_size)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 1,
                             "header: size %u is more than the limit of %u samples per side",
                             g->size, lim->max_size);
    uint64_t samples, body;
    if (!trn_mul_u64(g->size, g->size, &samples) || !trn_mul_u64(samples, 3, &body) ||
        !trn_add_u64(body, TER_HEADER_BYTES, &body) || samples > SIZE_MAX / 3)
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, 1,
                             "header: size %u x %u makes the height and layer maps larger than "
                             "this machine can address",
                             g->size, g->size);
    if (samples > lim->max_samples)
        return trn_error_set(err, TRN_ERR_LIMIT, path, 1,
                             "header: size %u x %u = %llu samples, more than the limit of %llu "
                             "(raise the limits' max_samples; terrane: --max-samples N)",
                             g->size, g->size, (unsigned long long)samples,
                             (unsigned long long)lim->max_samples);
    g->samples = (size_t)samples;
    g->heights_at = TER_HEADER_BYTES;
    g->layers_at = TER_HEADER_BYTES + 2 * samples;
    g->body_end = body;
    return TRN_OK;
}

static trn_status check_maps_present(const ter_geometry *g, uint64_t file_size, const char *path,
                                     trn_error *err)
{
    if (file_size - g->heights_at < 2 * (uint64_t)g->samples)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)g->heights_at,
                             "heights: expected %llu bytes (%u x %u u16) at offset %llu, the file "
                             "ends at offset %llu",
                             2ull * g->samples, g->size, g->size, (unsigned long long)g->heights_at,
                             (unsigned long long)file_size);
    if (file_size - g->layers_at < (uint64_t)g->samples)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)g->layers_at,
                             "layer map: expected %llu bytes (%u x %u u8) at offset %llu, the "
                             "file ends at offset %llu",
                             (unsigned long long)g->samples, g->size, g->size,
                             (unsigned long long)g->layers_at, (unsigned long long)file_size);
    return TRN_OK;
}

/* ---------------------------------------------------------------- names */

/* Walk the material count and names from tail[start] without allocating. base is the file
 * offset of tail[0]. On success *end_out is where the last name ends (relative to tail). */
static trn_status scan_names(const uint8_t *tail, size_t tail_size, size_t start, uint64_t base,
                             const trn_ter_limits *lim, const char *path, uint32_t *count_out,
                             size_t *end_out, trn_error *err)
{
    trn_cursor c;
    trn_cursor_init(&c, tail, tail_size);
    c.pos = start;
    unsigned long long file_end = (unsigned long long)(base + tail_size);
    uint32_t count;
    if (!trn_cursor_u32le(&c, &count))
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)(base + start),
                             "material count: expected 4 bytes at offset %llu, the file ends at "
                             "offset %llu",
                             (unsigned long long)(base + start), file_end);
    if (count > lim->max_materials)
        return trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)(base + start),
                             "material count: %u materials, more than the limit of %u", count,
                             lim->max_materials);
    for (uint32_t i = 0; i < count; i++) {
        size_t at = c.pos;
        uint8_t short_len;
        size_t len;
        if (!trn_cursor_u8(&c, &short_len))
            return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)(base + at),
                                 "material name %u: expected a length byte at offset %llu, the "
                                 "file ends there (%u of %u names read)",
                                 i, (unsigned long long)(base + at), i, count);
        if (short_len == 0xFF) {
            uint16_t long_len;
            if (!trn_cursor_u16le(&c, &long_len))
                return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)(base + at),
                                     "material name %u: expected a 2-byte length after 0xFF at "
                                     "offset %llu, the file ends at offset %llu",
                                     i, (unsigned long long)(base + at), file_end);
            len = long_len;
        } else {
            len = short_len;
        }
        size_t bytes_at = c.pos;
        if (!trn_cursor_skip(&c, len))
            return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)(base + bytes_at),
                                 "material name %u: expected %zu bytes at offset %llu, the file "
                                 "ends at offset %llu",
                                 i, len, (unsigned long long)(base + bytes_at), file_end);
    }
    *count_out = count;
    *end_out = c.pos;
    return TRN_OK;
}

/* Copy the (already validated) names starting at tail[start] into t. */
static trn_status copy_names(trn_ter *t, const uint8_t *tail, size_t start, uint32_t count,
                             trn_error *err)
{
    t->material_count = 0;
    t->materials = calloc(count ? count : 1, sizeof *t->materials);
    t->material_lengths = calloc(count ? count : 1, sizeof *t->material_lengths);
    if (!t->materials || !t->material_lengths)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for %u names", count);
    size_t pos = start + 4;
    for (uint32_t i = 0; i < count; i++) {
        size_t len = tail[pos++];
        bool long_form = len == 0xFF;
        if (long_form) {
            len = (size_t)(tail[pos] | (tail[pos + 1] << 8));
            pos += 2;
            if (len < 0xFF) {
                /* Not what the engine writes; remember it so the bytes round-trip. */
                if (!t->material_long_form) {
                    t->material_long_form = calloc(count, 1);
                    if (!t->material_long_form)
                        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                }
                t->material_long_form[i] = 1;
            }
        }
        t->materials[i] = trn_ter_priv_strndup(tail + pos, len);
        if (!t->materials[i])
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        t->material_lengths[i] = (uint32_t)len;
        t->material_count = i + 1;
        pos += len;
    }
    t->material_count = count;
    return TRN_OK;
}

/* Find the layout of the bytes after the layer map (tail, starting at file offset base): names
 * ending exactly at EOF, else one extra block, else four (what BeamNG's World Editor wrote into
 * version 8 files in 2023: four zero blocks), else five. Fills materials and layout; the
 * extra maps are tail[0 .. extra_count*samples), which the caller keeps. When none fits, the
 * error is the modern reading's (code and offset) and its message says why each layout failed. */
static trn_status parse_tail(trn_ter *t, const ter_geometry *g, const uint8_t *tail,
                             size_t tail_size, const trn_ter_limits *lim, const char *path,
                             trn_error *err)
{
    static const uint32_t extra_layouts[3] = {1, 4, 5};
    trn_error modern_err;
    trn_error_clear(&modern_err);
    uint64_t base = g->body_end;
    uint32_t count = 0;
    size_t end = 0, start = 0;
    uint32_t extra = 0;
    trn_status st = scan_names(tail, tail_size, 0, base, lim, path, &count, &end, &modern_err);
    if (st == TRN_OK && end != tail_size)
        st = trn_error_set(&modern_err, TRN_ERR_TRAILING_DATA, path, (int64_t)(base + end),
                           "names do not end at the end of the file: %llu bytes after the last "
                           "material name (at offset %llu)",
                           (unsigned long long)(tail_size - end), (unsigned long long)(base + end));
    if (st != TRN_OK) {
        bool found = false;
        char why[3][240];
        for (unsigned k = 0; k < 3; k++)
            snprintf(why[k], sizeof why[k], "not tried");
        for (unsigned k = 0; k < 3 && !found; k++) {
            size_t skip;
            uint32_t c2 = 0;
            size_t e2 = 0;
            trn_error layout_err;
            trn_error_clear(&layout_err);
            if (!trn_mul_size(g->samples, extra_layouts[k], &skip) || skip > tail_size) {
                snprintf(why[k], sizeof why[k], "the file ends before the maps do");
            } else if (scan_names(tail, tail_size, skip, base, lim, path, &c2, &e2, &layout_err) !=
                       TRN_OK) {
                snprintf(why[k], sizeof why[k], "at offset %lld, %.200s",
                         (long long)layout_err.offset, layout_err.message);
            } else if (e2 != tail_size) {
                snprintf(why[k], sizeof why[k], "the names end at offset %llu, %llu bytes early",
                         (unsigned long long)(base + e2), (unsigned long long)(tail_size - e2));
            } else {
                found = true;
                extra = extra_layouts[k];
                start = skip;
                count = c2;
            }
        }
        if (!found) {
            char first[sizeof modern_err.message];
            memcpy(first, modern_err.message, sizeof first);
            return trn_error_set(err, modern_err.code, path, modern_err.offset,
                                 "%s; also tried 1, 4 and 5 extra %u x %u maps before the material "
                                 "count (the layouts of community .ter notes and of version 8 "
                                 "files): with 1, %s; with 4, %s; with 5, %s",
                                 first, g->size, g->size, why[0], why[1], why[2]);
        }
    }
    t->layout = (trn_ter_layout)extra; /* the enum values are the block counts */
    t->extra_count = extra;
    return copy_names(t, tail, start, count, err);
}

/* Warnings common to parse and read, once names and maps are in place. */
static trn_status finish_modern(trn_ter *t, const ter_geometry *g, unsigned max_non_hole,
                                trn_error *err)
{
    int64_t count_at = (int64_t)(g->body_end + (uint64_t)t->extra_count * g->samples);
    if (t->extra_count) {
        /* Four in a version 8 file: the World Editor of 2023 wrote them (zeros). */
        const bool editor_v8 = t->version == 8 && t->extra_count == 4;
        trn_status st = trn_ter_priv_warn(
            t, (int64_t)g->body_end, err,
            "%u extra %u x %u %s after the layer map, before the material count (%s); kept so "
            "the file round-trips",
            t->extra_count, t->size, t->size, plural(t->extra_count, "block", "blocks"),
            editor_v8 ? "as version 8 files of the World Editor hold them; version 9 has none"
                      : "not written by the engine");
        if (st) return st;
    }
    return trn_ter_priv_check_layers(t, max_non_hole, (int64_t)g->layers_at, count_at, err);
}

/* ---------------------------------------------------------------- probe */

/* A legacy file's layout walked without copying: *end is where it ends, or size when cut. */
static bool probe_legacy(const uint8_t *data, size_t size, uint64_t *end)
{
    trn_cursor c;
    trn_cursor_init(&c, data, size);
    c.pos = 1;
    uint8_t version = data[0];
    uint32_t named = 0;
    bool ok = trn_cursor_skip(&c, (size_t)TRN_TER_LEGACY_SAMPLES * 3);
    for (unsigned slot = 0; ok && slot < TRN_TER_LEGACY_SLOTS; slot++) {
        uint8_t len = 0;
        ok = trn_cursor_u8(&c, &len) && trn_cursor_skip(&c, len);
        named += len != 0;
    }
    if (ok && version >= 2) ok = trn_cursor_skip(&c, (size_t)named * TRN_TER_LEGACY_SAMPLES);
    for (int k = 0; ok && version >= 3 && k < 2; k++) {
        uint32_t len = 0;
        ok = trn_cursor_u32le(&c, &len) && trn_cursor_skip(&c, len);
    }
    for (int k = 0; ok && version >= 5 && k < 2; k++) {
        uint8_t len = 0;
        ok = trn_cursor_u8(&c, &len) && trn_cursor_skip(&c, len);
    }
    *end = ok ? c.pos : size;
    return ok && c.pos == size;
}

bool trn_ter_probe(const uint8_t *data, size_t size, uint64_t *fit_end)
{
    uint64_t end = 0;
    bool fits = false;
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    lim.max_size = UINT32_MAX;
    lim.max_materials = UINT32_MAX;
    lim.max_samples = UINT64_MAX;
    ter_geometry g;
    trn_error e;
    if (!data || size == 0) {
        end = 0;
    } else if (check_header(data, size, size, NULL, &lim, &g, &e) != TRN_OK) {
        end = e.code == TRN_ERR_TRUNCATED ? size : (uint64_t)(e.offset > 0 ? e.offset : 0);
    } else if (g.version < TER_MIN_MODERN) {
        fits = probe_legacy(data, size, &end);
    } else if (size < g.body_end) {
        end = size; /* the maps are cut short */
    } else {
        static const uint32_t layouts[4] = {0, 1, 4, 5};
        const uint8_t *tail = data + g.body_end;
        size_t tail_size = size - (size_t)g.body_end;
        for (unsigned k = 0; k < 4 && !fits; k++) {
            size_t skip, names_end = 0;
            uint32_t count = 0;
            if (!trn_mul_size(g.samples, layouts[k], &skip) || skip > tail_size) continue;
            trn_status st =
                scan_names(tail, tail_size, skip, g.body_end, &lim, NULL, &count, &names_end, &e);
            fits = st == TRN_OK && names_end == tail_size;
            /* The modern layout decides how far the file fits when none does. */
            if (k == 0) end = st == TRN_ERR_TRUNCATED ? size : g.body_end + names_end;
        }
        if (fits) end = size;
    }
    if (fit_end) *fit_end = fits ? size : end;
    return fits;
}

/* ---------------------------------------------------------------- parse from memory */

trn_status trn_ter_parse(const uint8_t *data, size_t size, const char *path,
                         const trn_ter_limits *limits, trn_ter *ter, trn_error *err)
{
    if (!ter) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "no output given");
    memset(ter, 0, sizeof *ter);
    if (!data && size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "no input given");
    trn_ter_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_ter_limits_default(&lim);
    if ((uint64_t)size > lim.max_file_bytes)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "file is %zu bytes, more than the limit of %llu", size,
                             (unsigned long long)lim.max_file_bytes);
    ter_geometry g;
    trn_status st = check_header(data, size, size, path, &lim, &g, err);
    if (st) return st;
    trn_ter t;
    memset(&t, 0, sizeof t);
    if (g.version < TER_MIN_MODERN) {
        st = trn_ter_priv_parse_legacy(data, size, path, &t, err);
        if (st) {
            trn_ter_dispose(&t);
            return st;
        }
        *ter = t;
        return TRN_OK;
    }
    st = check_maps_present(&g, size, path, err);
    if (st) return st;
    t.version = g.version;
    t.size = g.size;
    t.heights = alloc_map(g.samples * 2);
    t.layers = alloc_map(g.samples);
    if (!t.heights || !t.layers) {
        trn_ter_dispose(&t);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory for a %u x %u terrain", g.size, g.size);
    }
    decode_u16le(t.heights, data + g.heights_at, g.samples);
    memcpy(t.layers, data + g.layers_at, g.samples);
    unsigned max_non_hole = trn_ter_priv_layers_max(t.layers, g.samples, 0);
    const uint8_t *tail = data + g.body_end;
    size_t tail_size = size - (size_t)g.body_end;
    st = parse_tail(&t, &g, tail, tail_size, &lim, path, err);
    if (!st && t.extra_count) {
        size_t bytes = g.samples * t.extra_count; /* fits: it lies inside data */
        t.extra_maps = alloc_map(bytes);
        if (!t.extra_maps)
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory for extra maps");
        else
            memcpy(t.extra_maps, tail, bytes);
    }
    if (!st) st = finish_modern(&t, &g, max_non_hole, err);
    if (st) {
        trn_ter_dispose(&t);
        return st;
    }
    *ter = t;
    return TRN_OK;
}

/* ---------------------------------------------------------------- read from disk */

static trn_status io_fail(trn_error *err, const char *path, const char *what, int e)
{
    return trn_error_set(err, e == ENOENT ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, path, -1,
                         "cannot %s: %s", what, strerror(e));
}

/* pread exactly n bytes at offset; *got says how many came before EOF. */
static int pread_full(int fd, uint8_t *dst, size_t n, uint64_t offset, size_t *got)
{
    size_t done = 0;
    while (done < n) {
        ssize_t r = pread(fd, dst + done, n - done, (off_t)(offset + done));
        if (r < 0) {
            if (errno == EINTR) continue;
            *got = done;
            return errno;
        }
        if (r == 0) break;
        done += (size_t)r;
    }
    *got = done;
    return 0;
}

/* Most threads worth using for one read: beyond this the copy is bound by memory bandwidth. */
#define TER_READ_THREADS 8

/* Read a section straight into its destination. Chunks are read in rounds, one chunk per thread
 * (fresh pages fault in and get copied on several cores at once); progress and cancel are
 * handled on the calling thread between rounds. The result does not depend on the thread
 * count: each chunk lands at its own offset and the layer maximum is order-free. */
static trn_status read_section(int fd, uint8_t *dst, size_t n, uint64_t offset, const char *path,
                               const char *section, const trn_progress *prog, unsigned *layer_max,
                               trn_error *err)
{
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
    if (threads > TER_READ_THREADS) threads = TER_READ_THREADS;
    if (threads < 1) threads = 1;
#endif
    size_t chunks = n / TER_IO_CHUNK + (n % TER_IO_CHUNK != 0);
    for (size_t first = 0; first < chunks; first += (size_t)threads) {
        size_t round = chunks - first < (size_t)threads ? chunks - first : (size_t)threads;
        size_t got[TER_READ_THREADS];
        int errs[TER_READ_THREADS];
        unsigned maxes[TER_READ_THREADS];
        long round_l = (long)round;
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(threads) if (round > 1)
#endif
        for (long k = 0; k < round_l; k++) {
            size_t at = (first + (size_t)k) * TER_IO_CHUNK;
            size_t len = n - at < TER_IO_CHUNK ? n - at : TER_IO_CHUNK;
            errs[k] = pread_full(fd, dst + at, len, offset + at, &got[k]);
            maxes[k] = layer_max && !errs[k] && got[k] == len
                           ? trn_ter_priv_layers_max(dst + at, len, 0)
                           : 0;
        }
        /* Report the first failing chunk, as a sequential read would have met it. */
        for (size_t k = 0; k < round; k++) {
            size_t at = (first + k) * TER_IO_CHUNK;
            size_t len = n - at < TER_IO_CHUNK ? n - at : TER_IO_CHUNK;
            if (errs[k]) return io_fail(err, path, "read file", errs[k]);
            if (got[k] < len) /* The file shrank since fstat: report it like any truncation. */
                return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)offset,
                                     "%s: expected %zu bytes at offset %llu, the file ends at "
                                     "offset %llu",
                                     section, n, (unsigned long long)offset,
                                     (unsigned long long)(offset + at + got[k]));
            if (layer_max && maxes[k] > *layer_max) *layer_max = maxes[k];
        }
        size_t done = first + round == chunks ? n : (first + round) * TER_IO_CHUNK;
        if (trn_progress_report(prog, (double)done / (double)n, section))
            return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "cancelled");
    }
    return TRN_OK;
}

/* Files the fast path does not cover (legacy, truncated, pipes): map or slurp, then parse. */
static trn_status read_via_parse(const char *path, const trn_ter_limits *lim, trn_ter *ter,
                                 const trn_progress *prog, trn_error *err)
{
    if (trn_progress_report(prog, 0.0, "reading"))
        return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "cancelled");
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, lim->max_file_bytes, err);
    if (st) return st;
    trn_ter t;
    st = trn_ter_parse(mf.data, mf.size, path, lim, &t, err);
    trn_mapped_file_close(&mf);
    if (st) return st;
    if (trn_progress_report(prog, 1.0, "reading")) {
        trn_ter_dispose(&t);
        return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "cancelled");
    }
    *ter = t;
    return TRN_OK;
}

static trn_status read_modern(int fd, const char *path, uint64_t file_size, const ter_geometry *g,
                              const trn_ter_limits *lim, trn_ter *t, const trn_progress *prog,
                              trn_error *err)
{
    (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    t->version = g->version;
    t->size = g->size;
    t->heights = alloc_map(g->samples * 2);
    t->layers = alloc_map(g->samples);
    if (!t->heights || !t->layers)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                             "out of memory for a %u x %u terrain", g->size, g->size);
    trn_progress ph = trn_progress_sub(prog, 0.0, 0.64);
    trn_status st = read_section(fd, (uint8_t *)t->heights, g->samples * 2, g->heights_at, path,
                                 "heights", &ph, NULL, err);
    if (st) return st;
    if (!host_little_endian()) {
        /* The file is little-endian: swap in place (no second buffer). */
        uint8_t *b = (uint8_t *)t->heights;
        for (size_t i = 0; i < g->samples; i++) {
            uint8_t lo = b[2 * i];
            b[2 * i] = b[2 * i + 1];
            b[2 * i + 1] = lo;
        }
    }
    trn_progress pl = trn_progress_sub(prog, 0.64, 0.96);
    unsigned max_non_hole = 0;
    st = read_section(fd, t->layers, g->samples, g->layers_at, path, "layer map", &pl,
                      &max_non_hole, err);
    if (st) return st;
    uint64_t tail64 = file_size - g->body_end;
    if (tail64 > SIZE_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, (int64_t)g->body_end,
                             "material names: %llu bytes are more than this machine can hold",
                             (unsigned long long)tail64);
    size_t tail_size = (size_t)tail64;
    uint8_t *tail = alloc_map(tail_size);
    if (!tail) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    trn_progress pt = trn_progress_sub(prog, 0.96, 1.0);
    st = read_section(fd, tail, tail_size, g->body_end, path, "material names", &pt, NULL, err);
    if (!st) st = parse_tail(t, g, tail, tail_size, lim, path, err);
    if (!st && t->extra_count) {
        /* The extra maps open the tail: keep that buffer rather than copy them out. */
        size_t bytes = g->samples * t->extra_count;
        uint8_t *shrunk = bytes < 4 * TER_HUGE_PAGE ? realloc(tail, bytes) : NULL;
        t->extra_maps = shrunk ? shrunk : tail;
        tail = NULL;
    }
    free(tail);
    if (st) return st;
    return finish_modern(t, g, max_non_hole, err);
}

/* Open path, check it is a regular file within the limits and read its header. *fast says
 * whether read_modern (and the copy) cover it; otherwise the whole-file parser decides (legacy
 * files are small, truncated ones fail, and a tail longer than any valid one fails too, without
 * a heap buffer for it: one parser keeps the errors equal). On TRN_OK *fd_out is open. */
static trn_status open_checked(const char *path, const trn_ter_limits *lim, int *fd_out,
                               uint64_t *size_out, ter_geometry *g_out, bool *fast,
                               trn_error *err)
{
    ter_geometry g;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return io_fail(err, path, "open file", errno);
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return io_fail(err, path, "stat file", e);
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "is a directory, expected a file");
    }
    if (!S_ISREG(sb.st_mode)) {
        /* A pipe or device has no size to check up front and may never end (/dev/zero). */
        close(fd);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "is %s, expected a regular file",
                             trn_file_kind((unsigned)sb.st_mode));
    }
    uint64_t file_size = (uint64_t)sb.st_size;
    if (file_size > lim->max_file_bytes) {
        close(fd);
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "file is %llu bytes, more than the limit of %llu",
                             (unsigned long long)file_size, (unsigned long long)lim->max_file_bytes);
    }
    uint8_t head[24]; /* enough to tell a Terragen file or a Git LFS pointer */
    size_t head_size;
    int e = pread_full(fd, head, file_size < sizeof head ? (size_t)file_size : sizeof head, 0,
                       &head_size);
    if (e) {
        close(fd);
        return io_fail(err, path, "read file", e);
    }
    trn_status st = check_header(head, head_size, file_size, path, lim, &g, err);
    if (st) {
        close(fd);
        return st;
    }
    /* The longest valid tail: five extra maps, the count, and every name at 0xFF + u16 + 65535. */
    uint64_t tail_max = 0;
    bool tail_bounded = trn_mul_u64(g.samples, 5, &tail_max) &&
                        trn_add_u64(tail_max, 4u + (uint64_t)lim->max_materials * 65538u, &tail_max);
    *fast = !(g.version < TER_MIN_MODERN || file_size < g.body_end || file_size - g.body_end < 4 ||
              (tail_bounded && file_size - g.body_end > tail_max));
    *fd_out = fd;
    *size_out = file_size;
    *g_out = g;
    return TRN_OK;
}

trn_status trn_ter_read(const char *path, const trn_ter_limits *limits, trn_ter *ter,
                        trn_progress_fn progress, void *user, trn_error *err)
{
    if (!ter) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "no output given");
    memset(ter, 0, sizeof *ter);
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no path given");
    trn_ter_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_ter_limits_default(&lim);
    trn_progress prog = trn_progress_make(progress, user);

    int fd = -1;
    uint64_t file_size = 0;
    ter_geometry g;
    bool fast = false;
    trn_status st = open_checked(path, &lim, &fd, &file_size, &g, &fast, err);
    if (st) return st;
    if (!fast) {
        close(fd);
        return read_via_parse(path, &lim, ter, &prog, err);
    }
    trn_ter t;
    memset(&t, 0, sizeof t);
    st = read_modern(fd, path, file_size, &g, &lim, &t, &prog, err);
    close(fd);
    if (st) {
        trn_ter_dispose(&t);
        return st;
    }
    *ter = t;
    return TRN_OK;
}

/* ---------------------------------------------------------------- write */

/* Where serialised bytes go: a memory buffer or an atomic file. */
typedef struct ter_sink {
    trn_atomic_file *af;
    uint8_t *buf;
    uint64_t pos, total;
    const trn_progress *prog;
} ter_sink;

static void sink_put(ter_sink *s, const void *p, size_t n)
{
    if (!n) return;
    if (s->af)
        trn_atomic_file_write(s->af, p, n);
    else
        memcpy(s->buf + s->pos, p, n);
    s->pos += n;
}

/* Report progress after a chunk; true when cancelled. */
static bool sink_step(ter_sink *s, const char *stage)
{
    return trn_progress_report(s->prog, (double)s->pos / (double)s->total, stage);
}

static size_t name_length(const trn_ter *ter, uint32_t i)
{
    return ter->material_lengths ? ter->material_lengths[i] : strlen(ter->materials[i]);
}

static bool name_long_form(const trn_ter *ter, uint32_t i, size_t len)
{
    return len >= 0xFF || (ter->material_long_form && ter->material_long_form[i]);
}

/* Check that ter can be written with version and compute the file size. */
static trn_status check_writable(const trn_ter *ter, unsigned version, const char *path,
                                 uint64_t *total, trn_error *err)
{
    if (!ter) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "no terrain given");
    if (version < TER_MIN_MODERN || version > TRN_TER_VERSION_CURRENT)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "cannot write .ter version %u: the writer supports versions 7, 8 "
                             "and 9",
                             version);
    if (ter->size == 0 || !ter->heights || !ter->layers)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "terrain has no size, heights or layer map");
    if (ter->extra_count != 0 && ter->extra_count != 1 && ter->extra_count != 4 &&
        ter->extra_count != 5)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "%u extra maps: only 0, 1, 4 or 5 can be read back", ter->extra_count);
    if (ter->extra_count && !ter->extra_maps)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "extra_count is %u but extra_maps is NULL", ter->extra_count);
    if (ter->material_count && !ter->materials)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "material_count is %u but materials is NULL", ter->material_count);
    uint64_t samples, bytes;
    if (!trn_mul_u64(ter->size, ter->size, &samples) ||
        !trn_mul_u64(samples, 3u + ter->extra_count, &bytes) ||
        !trn_add_u64(bytes, TER_HEADER_BYTES + 4u, &bytes) || samples > SIZE_MAX / 8)
        return trn_error_set(err, TRN_ERR_OVERFLOW, path, -1, "size %u is too large to write",
                             ter->size);
    for (uint32_t i = 0; i < ter->material_count; i++) {
        if (!ter->materials[i])
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                                 "material name %u is NULL", i);
        size_t len = name_length(ter, i);
        if (len > 0xFFFF)
            return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                                 "material name %u is %zu bytes; a .ter name holds at most 65535",
                                 i, len);
        bytes += (name_long_form(ter, i, len) ? 3u : 1u) + len;
    }
    *total = bytes;
    return TRN_OK;
}

/* Emit the whole file into the sink. Fails only when progress asks to cancel. */
static trn_status emit(const trn_ter *ter, uint8_t version, ter_sink *s)
{
    uint8_t header[TER_HEADER_BYTES] = {
        version, (uint8_t)(ter->size & 0xFF), (uint8_t)((ter->size >> 8) & 0xFF),
        (uint8_t)((ter->size >> 16) & 0xFF), (uint8_t)(ter->size >> 24)};
    sink_put(s, header, sizeof header);
    size_t samples = (size_t)ter->size * ter->size;

    const size_t chunk_samples = TER_WRITE_CHUNK / 2;
    uint8_t swap[16384];
    for (size_t done = 0; done < samples;) {
        size_t n = samples - done < chunk_samples ? samples - done : chunk_samples;
        if (host_little_endian()) {
            sink_put(s, ter->heights + done, n * 2);
        } else {
            /* Big-endian host: convert through a small buffer, never a second full copy. */
            for (size_t k = 0; k < n; k += sizeof swap / 2) {
                size_t m = n - k < sizeof swap / 2 ? n - k : sizeof swap / 2;
                encode_u16le(swap, ter->heights + done + k, m);
                sink_put(s, swap, m * 2);
            }
        }
        done += n;
        if (sink_step(s, "heights")) return TRN_ERR_CANCELLED;
    }
    for (size_t done = 0; done < samples;) {
        size_t n = samples - done < TER_WRITE_CHUNK ? samples - done : TER_WRITE_CHUNK;
        sink_put(s, ter->layers + done, n);
        done += n;
        if (sink_step(s, "layer map")) return TRN_ERR_CANCELLED;
    }
    size_t extra_bytes = samples * ter->extra_count;
    for (size_t done = 0; done < extra_bytes;) {
        size_t n = extra_bytes - done < TER_WRITE_CHUNK ? extra_bytes - done : TER_WRITE_CHUNK;
        sink_put(s, ter->extra_maps + done, n);
        done += n;
        if (sink_step(s, "extra maps")) return TRN_ERR_CANCELLED;
    }
    uint32_t count = ter->material_count;
    uint8_t count_bytes[4] = {(uint8_t)(count & 0xFF), (uint8_t)((count >> 8) & 0xFF),
                              (uint8_t)((count >> 16) & 0xFF), (uint8_t)(count >> 24)};
    sink_put(s, count_bytes, 4);
    for (uint32_t i = 0; i < count; i++) {
        size_t len = name_length(ter, i);
        if (name_long_form(ter, i, len)) {
            uint8_t prefix[3] = {0xFF, (uint8_t)(len & 0xFF), (uint8_t)(len >> 8)};
            sink_put(s, prefix, 3);
        } else {
            uint8_t prefix = (uint8_t)len;
            sink_put(s, &prefix, 1);
        }
        sink_put(s, ter->materials[i], len);
    }
    if (sink_step(s, "material names")) return TRN_ERR_CANCELLED;
    return TRN_OK;
}

trn_status trn_ter_serialize(const trn_ter *ter, uint8_t version, uint8_t **out, size_t *out_size,
                             trn_error *err)
{
    if (!out || !out_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no output given");
    *out = NULL;
    *out_size = 0;
    uint64_t total = 0;
    trn_status st = check_writable(ter, version, NULL, &total, err);
    if (st) return st;
    if (total > SIZE_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "a %llu-byte file does not fit in memory", (unsigned long long)total);
    uint8_t *buf = alloc_map((size_t)total);
    if (!buf) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    ter_sink s = {NULL, buf, 0, total, NULL};
    (void)emit(ter, version, &s); /* no progress callback: cannot be cancelled */
    *out = buf;
    *out_size = (size_t)total;
    return TRN_OK;
}

trn_status trn_ter_write(const char *path, const trn_ter *ter, uint8_t version,
                         trn_progress_fn progress, void *user, trn_error *err)
{
    if (!path) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no path given");
    uint64_t total = 0;
    trn_status st = check_writable(ter, version, path, &total, err);
    if (st) return st;
    trn_progress prog = trn_progress_make(progress, user);
    trn_progress body = trn_progress_sub(&prog, 0.0, 0.9); /* the rest is fsync and rename */
    trn_atomic_file af;
    st = trn_atomic_file_open(&af, path, err);
    if (st) return st;
    ter_sink s = {&af, NULL, 0, total, &body};
    if (emit(ter, version, &s) == TRN_ERR_CANCELLED) {
        trn_atomic_file_abort(&af);
        return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "cancelled");
    }
    st = trn_atomic_file_commit(&af, err);
    if (st) return st;
    (void)trn_progress_report(&prog, 1.0, "written"); /* too late to cancel: it is in place */
    return TRN_OK;
}

/* ---------------------------------------------------------------- copy */

/* The copy goes in pieces so progress can be reported and cancel honoured between them. */
#define TER_COPY_CHUNK ((size_t)32 << 20)
/* The buffer the layer map is read through for its check. */
#define TER_SCAN_CHUNK ((size_t)256 << 10)

/* The layer check read_modern makes, through the read-only map instead of a copy, once the
 * largest index has been found (ter_scan_run): the warnings (finish_modern). It can only
 * warn, never refuse the file, so it may run beside the copy. */
static trn_status check_layers_mapped(uint8_t *data, const ter_geometry *g, unsigned max_non_hole,
                                      trn_ter *t, trn_error *err)
{
    /* Borrowed for the layer check alone: the map is not the struct's to free. */
    t->layers = data + g->layers_at;
    trn_status st = finish_modern(t, g, max_non_hole, err);
    t->layers = NULL;
    return st;
}

/* Legacy inputs (small) and the ones only the whole-file parser judges: read, then write. */
static trn_status copy_by_value(const char *in, const char *out, const trn_ter_limits *lim,
                                uint8_t version, bool keep_extra, trn_ter *info,
                                trn_progress_fn progress, void *user, trn_error *err)
{
    trn_ter t;
    trn_status st = trn_ter_read(in, lim, &t, progress, user, err);
    if (st) return st;
    const uint32_t extra = t.extra_count;
    const trn_ter_layout layout = t.layout;
    if (!(keep_extra && version == t.version)) {
        t.extra_count = 0;
        if (t.layout != TRN_TER_LAYOUT_LEGACY) t.layout = TRN_TER_LAYOUT_MODERN;
    }
    st = trn_ter_write(out, &t, version, progress, user, err);
    t.extra_count = extra;
    t.layout = layout;
    free(t.heights);
    free(t.layers);
    free(t.extra_maps);
    t.heights = NULL;
    t.layers = NULL;
    t.extra_maps = NULL;
    if (!st && info)
        *info = t;
    else
        trn_ter_dispose(&t);
    return st;
}

static bool same_stamp(const struct stat *a, const struct stat *b)
{
    return a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec && a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

/* The layer map's largest index, read through a buffer (through the read-only map, whose
 * pages fault in on first use, the 64 MiB of an 8192^2 map took 19 ms, read 5-10 ms). */
typedef struct ter_scan_job {
    int fd;
    uint64_t at;
    size_t n;
    atomic_bool stop;
    unsigned max;
    bool ok;
    int errnum;
    uint64_t failed_at;
} ter_scan_job;

static void *ter_scan_run(void *arg)
{
    ter_scan_job *j = arg;
    j->max = 0;
    j->ok = false;
    uint8_t *buf = malloc(TER_SCAN_CHUNK);
    if (!buf) {
        j->errnum = ENOMEM;
        j->failed_at = j->at;
        return NULL;
    }
    for (size_t done = 0; done < j->n;) {
        if (atomic_load_explicit(&j->stop, memory_order_relaxed)) break;
        const size_t want = j->n - done < TER_SCAN_CHUNK ? j->n - done : TER_SCAN_CHUNK;
        const ssize_t r = pread(j->fd, buf, want, (off_t)(j->at + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            j->errnum = r < 0 ? errno : EIO;
            j->failed_at = j->at + done;
            free(buf);
            return NULL;
        }
        j->max = trn_ter_priv_layers_max(buf, (size_t)r, j->max);
        done += (size_t)r;
    }
    free(buf);
    j->ok = true;
    return NULL;
}

trn_status trn_ter_copy(const char *in, const char *out, const trn_ter_limits *limits,
                        uint8_t version, bool keep_extra, trn_ter *info,
                        trn_progress_fn progress, void *user, trn_error *err)
{
    if (info) memset(info, 0, sizeof *info);
    if (!in || !out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, in ? in : out, -1, "no path given");
    if (version < TER_MIN_MODERN || version > TRN_TER_VERSION_CURRENT)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, out, -1,
                             "cannot write .ter version %u: the writer supports versions 7, 8 "
                             "and 9",
                             version);
    trn_ter_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_ter_limits_default(&lim);
    int fd = -1;
    uint64_t file_size = 0;
    ter_geometry g;
    bool fast = false;
    trn_status st = open_checked(in, &lim, &fd, &file_size, &g, &fast, err);
    if (st) return st;
    struct stat before;
    void *map = MAP_FAILED;
    if (fast && file_size <= SIZE_MAX && fstat(fd, &before) == 0)
        map = mmap(NULL, (size_t)file_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        close(fd);
        return copy_by_value(in, out, &lim, version, keep_extra, info, progress, user, err);
    }
    trn_progress prog = trn_progress_make(progress, user);
    trn_ter t;
    memset(&t, 0, sizeof t);
    t.version = g.version;
    t.size = g.size;
    /* The names (walked by the bounded cursor) decide whether the file is refused: checked
     * before any output exists. The heights need no check (every u16 is a height). */
    st = parse_tail(&t, &g, (uint8_t *)map + g.body_end, (size_t)(file_size - g.body_end), &lim,
                    in, err);
    trn_atomic_file af;
    if (!st) st = trn_atomic_file_open(&af, out, err);
    if (st) {
        munmap(map, (size_t)file_size);
        close(fd);
        trn_ter_dispose(&t);
        return st;
    }
    /* The output is the input's bytes but for the version byte and any dropped extra maps,
     * which sit between the layer map and the material count. */
    const bool keep = keep_extra && version == t.version;
    const uint64_t skip = keep ? 0 : (uint64_t)t.extra_count * g.samples;
    const uint64_t pieces[2][2] = {{TER_HEADER_BYTES, g.body_end - TER_HEADER_BYTES},
                                   {g.body_end + skip, file_size - g.body_end - skip}};
    const uint64_t total = file_size - skip;
    const uint8_t header[TER_HEADER_BYTES] = {
        version, (uint8_t)(g.size & 0xFF), (uint8_t)((g.size >> 8) & 0xFF),
        (uint8_t)((g.size >> 16) & 0xFF), (uint8_t)(g.size >> 24)};
    trn_atomic_file_write(&af, header, sizeof header);
    trn_progress copying = trn_progress_sub(&prog, 0.0, 0.8);
    uint64_t done = TER_HEADER_BYTES;
    bool ok = true;
    /* The layer map is checked on a second thread while the kernel copies (alone after the
     * copy, the check made an 8192^2 copy 0.85 of dd's speed; beside it, 0.91), on this one
     * where one thread is asked for. */
    ter_scan_job job = {.fd = fd, .at = g.layers_at, .n = g.samples};
    atomic_init(&job.stop, false);
    pthread_t scanner;
    bool beside = false;
#ifdef _OPENMP
    beside = omp_get_max_threads() > 1 && g.samples >= TER_SCAN_CHUNK &&
             pthread_create(&scanner, NULL, ter_scan_run, &job) == 0;
#endif
    for (int k = 0; k < 2 && ok; k++)
        for (uint64_t at = 0; at < pieces[k][1] && ok;) {
            size_t n =
                pieces[k][1] - at < TER_COPY_CHUNK ? (size_t)(pieces[k][1] - at) : TER_COPY_CHUNK;
            ok = trn_atomic_file_copy(&af, fd, pieces[k][0] + at, n);
            at += n;
            done += n;
            if (ok && trn_progress_report(&copying, (double)done / (double)total, "copying")) {
                ok = false;
                st = trn_error_set(err, TRN_ERR_CANCELLED, out, -1, "cancelled");
            }
        }
    if (beside) {
        if (!ok) atomic_store(&job.stop, true);
        pthread_join(scanner, NULL);
    } else if (ok) {
        ter_scan_run(&job);
    }
    if (ok && !job.ok) {
        ok = false;
        const int e = job.errnum ? job.errnum : EIO;
        st = trn_error_set(err, TRN_ERR_IO, in, (int64_t)job.failed_at,
                           "cannot read the layer map: %s", strerror(e));
    }
    const unsigned max_non_hole = job.max;
    /* The rest is fsync and rename. */
    if (ok && trn_progress_report(&prog, 0.9, "layer map")) {
        ok = false;
        st = trn_error_set(err, TRN_ERR_CANCELLED, out, -1, "cancelled");
    }
    if (ok) {
        st = check_layers_mapped(map, &g, max_non_hole, &t, err);
        ok = st == TRN_OK;
    }
    munmap(map, (size_t)file_size);
    /* Checked through the map, copied through the file: refuse a file written in between. */
    struct stat after;
    if (ok && (fstat(fd, &after) != 0 || !same_stamp(&before, &after))) {
        ok = false;
        st = trn_error_set(err, TRN_ERR_IO, in, -1,
                           "changed while it was being copied; %s is untouched", out);
    }
    close(fd);
    if (!ok && st) {
        trn_atomic_file_abort(&af);
        trn_ter_dispose(&t);
        return st;
    }
    st = trn_atomic_file_commit(&af, err); /* reports a failed copy or sync */
    if (st) {
        trn_ter_dispose(&t);
        return st;
    }
    (void)trn_progress_report(&prog, 1.0, "written"); /* too late to cancel: it is in place */
    if (info)
        *info = t;
    else
        trn_ter_dispose(&t);
    return TRN_OK;
}

/* ---------------------------------------------------------------- histogram and fields */

void trn_ter_layer_histogram(const trn_ter *ter, uint64_t counts[256])
{
    if (!counts) return;
    memset(counts, 0, 256 * sizeof counts[0]);
    if (!ter || !ter->layers) return;
    size_t samples = (size_t)ter->size * ter->size;
    /* Four interleaved tables break the store-to-load dependency on runs of one value. */
    uint64_t part[4][256];
    memset(part, 0, sizeof part);
    size_t i = 0;
    for (; i + 4 <= samples; i += 4) {
        part[0][ter->layers[i]]++;
        part[1][ter->layers[i + 1]]++;
        part[2][ter->layers[i + 2]]++;
        part[3][ter->layers[i + 3]]++;
    }
    for (; i < samples; i++)
        part[0][ter->layers[i]]++;
    for (unsigned v = 0; v < 256; v++)
        counts[v] = part[0][v] + part[1][v] + part[2][v] + part[3][v];
}

trn_status trn_ter_to_field(const trn_ter *ter, double max_height, double square_size,
                            trn_field *field, trn_labels *labels, trn_error *err)
{
    if (!ter || ter->size == 0 || !ter->heights || !ter->layers)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terrain has no size, heights or layer map");
    if (!(max_height > 0.0) || !isfinite(max_height))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "max height must be a positive number, not %g", max_height);
    if (!(square_size > 0.0) || !isfinite(square_size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "square size must be a positive number, not %g", square_size);
    uint32_t cells = ter->size - 1;
    size_t samples = (size_t)ter->size * ter->size;
    double quantum = max_height / 65536.0;
    trn_field f;
    memset(&f, 0, sizeof f);
    trn_status st;
    if (field) {
        st = trn_field_init(&f, cells, cells, cells * square_size, cells * square_size, err);
        if (st) return st;
        /* Same indexing on both sides: field (i, j) is .ter x = i of row j, south first. On
         * every core for a large map: each thread faults in its own part of the fresh field. */
        const long long count = (long long)samples;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (count >= 65536)
#endif
        for (long long k = 0; k < count; k++)
            f.heights[k] = (float)(ter->heights[k] * quantum);
        f.quantum = quantum;
        f.quantum_base = 0.0;
    }
    trn_labels l;
    memset(&l, 0, sizeof l);
    if (labels) {
        st = trn_labels_init(&l, cells, cells, err);
        if (!st) {
            memcpy(l.values, ter->layers, samples);
            for (uint32_t i = 0; i < ter->material_count && !st; i++)
                st = trn_labels_add_name(&l, ter->materials[i], strlen(ter->materials[i]), err);
        }
        if (st) {
            trn_labels_dispose(&l);
            trn_field_dispose(&f);
            return st;
        }
        *labels = l;
    }
    if (field) *field = f;
    return TRN_OK;
}

/* round(h / quantum) into 0..65535; NaN gives 0. */
static uint16_t quantise(float h, double quantum)
{
    double v = round((double)h / quantum);
    if (!(v > 0.0)) return 0;
    if (v >= 65535.0) return 65535;
    return (uint16_t)v;
}

static trn_status add_material(trn_ter *t, const char *name, trn_error *err)
{
    size_t len = strlen(name);
    if (len > 0xFFFF)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "material name %u is %zu bytes; a .ter name holds at most 65535",
                             t->material_count, len);
    size_t n = (size_t)t->material_count + 1;
    char **names = realloc(t->materials, n * sizeof *names);
    if (names) t->materials = names;
    uint32_t *lengths = realloc(t->material_lengths, n * sizeof *lengths);
    if (lengths) t->material_lengths = lengths;
    char *copy = names && lengths ? trn_ter_priv_strndup((const uint8_t *)name, len) : NULL;
    if (!copy) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    t->materials[t->material_count] = copy;
    t->material_lengths[t->material_count] = (uint32_t)len;
    t->material_count++;
    return TRN_OK;
}

trn_status trn_ter_from_field(const trn_field *field, double max_height, const trn_labels *labels,
                              const char *default_material, trn_ter *ter, trn_error *err)
{
    if (!field || !field->heights || !ter)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no field or output given");
    if (field->cells_x != field->cells_z)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "a .ter is square; the field has %u x %u cells", field->cells_x,
                             field->cells_z);
    if (field->cells_x >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "field is too large for a .ter");
    if (!(max_height > 0.0) || !isfinite(max_height))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "max height must be a positive number, not %g", max_height);
    if (labels &&
        (labels->cells_x != field->cells_x || labels->cells_z != field->cells_z || !labels->values))
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "labels have %u x %u cells but the field has %u x %u", labels->cells_x,
                             labels->cells_z, field->cells_x, field->cells_z);
    uint32_t size = field->cells_x + 1;
    size_t samples;
    if (!trn_mul_size(size, size, &samples) || samples > SIZE_MAX / 2)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "field is too large for a .ter");
    trn_ter t;
    memset(&t, 0, sizeof t);
    t.version = TRN_TER_VERSION_CURRENT;
    t.layout = TRN_TER_LAYOUT_MODERN;
    t.size = size;
    t.heights = alloc_map(samples * 2);
    t.layers = alloc_map(samples);
    trn_status st = TRN_OK;
    if (!t.heights || !t.layers) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    } else {
        double quantum = max_height / 65536.0;
        for (size_t k = 0; k < samples; k++)
            t.heights[k] = quantise(field->heights[k], quantum);
        if (labels) {
            memcpy(t.layers, labels->values, samples);
            for (uint32_t i = 0; i < labels->name_count && !st; i++)
                st = add_material(&t, labels->names[i] ? labels->names[i] : "", err);
        } else {
            memset(t.layers, 0, samples);
            st = add_material(&t, default_material ? default_material : "default", err);
        }
    }
    if (st) {
        trn_ter_dispose(&t);
        return st;
    }
    memset(ter, 0, sizeof *ter);
    *ter = t;
    return TRN_OK;
}
