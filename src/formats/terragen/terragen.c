/* Terragen terrain (.ter) reader and writer: chunked 16-bit heightfields with scale. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "core/fileio.h"
#include "terrane/terragen.h"

#define TG_DEFAULT_SCALE 30.0f
#define TG_DEFAULT_RADIUS 6370.0f

void trn_terragen_limits_default(trn_terragen_limits *limits)
{
    limits->max_points = 65535u;
    limits->max_samples = TRN_TERRAGEN_DEFAULT_MAX_SAMPLES;
}

bool trn_terragen_sniff(const uint8_t *data, size_t size)
{
    return data && size >= TRN_TERRAGEN_MAGIC_SIZE &&
           memcmp(data, TRN_TERRAGEN_MAGIC, TRN_TERRAGEN_MAGIC_SIZE) == 0;
}

void trn_terragen_dispose(trn_terragen *tg)
{
    if (!tg) return;
    free(tg->elevations);
    memset(tg, 0, sizeof *tg);
}

/* A marker as text for messages: 'ALTW' when printable, else its bytes in hex. */
static const char *marker_text(const uint8_t m[4], char buf[24])
{
    bool printable = true;
    for (int k = 0; k < 4; k++)
        if (m[k] < 0x20 || m[k] > 0x7e || m[k] == '\'') printable = false;
    if (printable)
        snprintf(buf, 24, "'%c%c%c%c'", m[0], m[1], m[2], m[3]);
    else
        snprintf(buf, 24, "0x%02x%02x%02x%02x", m[0], m[1], m[2], m[3]);
    return buf;
}

typedef enum chunk_id {
    CHUNK_SIZE,
    CHUNK_XPTS,
    CHUNK_YPTS,
    CHUNK_SCAL,
    CHUNK_CRAD,
    CHUNK_CRVM,
    CHUNK_ALTW,
    CHUNK_EOF,
    CHUNK_COUNT,
    CHUNK_UNKNOWN = CHUNK_COUNT,
} chunk_id;

static const char chunk_markers[CHUNK_COUNT][5] = {"SIZE", "XPTS", "YPTS", "SCAL",
                                                   "CRAD", "CRVM", "ALTW", "EOF "};

static chunk_id chunk_lookup(const uint8_t m[4])
{
    for (int k = 0; k < CHUNK_COUNT; k++)
        if (memcmp(m, chunk_markers[k], 4) == 0) return (chunk_id)k;
    return CHUNK_UNKNOWN;
}

/* Parser state: where each chunk was seen (-1 = not yet), for ordering and repeat checks. */
typedef struct tg_parse {
    trn_cursor c;
    const char *path;
    trn_error *err;
    int64_t seen[CHUNK_COUNT];
} tg_parse;

static trn_status truncated(tg_parse *p, const char *chunk, size_t at, size_t need)
{
    return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)at,
                         "%s chunk: expected %zu more bytes at offset %zu, found %zu (file ends)",
                         chunk, need, at, p->c.size - at);
}

/* A u16 value followed by its 2 bytes of padding (SIZE, XPTS, YPTS). */
static trn_status read_u16_padded(tg_parse *p, const char *chunk, uint16_t *v)
{
    size_t at = p->c.pos;
    uint16_t pad;
    if (!trn_cursor_has(&p->c, 4)) return truncated(p, chunk, at, 4);
    trn_cursor_u16le(&p->c, v);
    trn_cursor_u16le(&p->c, &pad);
    return TRN_OK;
}

static trn_status read_altw(tg_parse *p, const trn_terragen_limits *limits, uint16_t size_value,
                            uint16_t xpts_value, uint16_t ypts_value, trn_terragen *tg)
{
    const size_t marker_at = p->c.pos - 4;
    if (p->seen[CHUNK_SIZE] < 0)
        return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)marker_at,
                             "ALTW chunk at offset %zu comes before any SIZE chunk (the grid "
                             "size must be known before the elevations)",
                             marker_at);
    uint32_t xpts = p->seen[CHUNK_XPTS] >= 0 ? xpts_value : (uint32_t)size_value + 1u;
    uint32_t ypts = p->seen[CHUNK_YPTS] >= 0 ? ypts_value : (uint32_t)size_value + 1u;
    if (xpts < 2 || ypts < 2) {
        chunk_id which = xpts < 2 ? CHUNK_XPTS : CHUNK_YPTS;
        if (p->seen[which] < 0) which = CHUNK_SIZE;
        return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, p->seen[which],
                             "%s chunk: the terrain is %u x %u points; at least 2 x 2 are needed",
                             chunk_markers[which], xpts, ypts);
    }
    uint32_t shortest = xpts < ypts ? xpts : ypts;
    if (shortest != (uint32_t)size_value + 1u)
        return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, p->seen[CHUNK_SIZE],
                             "SIZE chunk says %u (shortest side - 1) but XPTS x YPTS is %u x %u",
                             size_value, xpts, ypts);
    if (xpts > limits->max_points || ypts > limits->max_points)
        return trn_error_set(p->err, TRN_ERR_LIMIT, p->path, (int64_t)marker_at,
                             "ALTW chunk: %u x %u points exceed the limit of %u per side", xpts,
                             ypts, limits->max_points);
    uint64_t count = (uint64_t)xpts * ypts;
    if (count > limits->max_samples)
        return trn_error_set(p->err, TRN_ERR_LIMIT, p->path, (int64_t)marker_at,
                             "ALTW chunk: %u x %u = %llu samples, more than the limit of %llu "
                             "(raise the limits' max_samples; terrane: --max-samples N)",
                             xpts, ypts, (unsigned long long)count,
                             (unsigned long long)limits->max_samples);
    size_t bytes;
    if (count > SIZE_MAX || !trn_mul_size((size_t)count, 2, &bytes))
        return trn_error_set(p->err, TRN_ERR_OVERFLOW, p->path, (int64_t)marker_at,
                             "ALTW chunk: %u x %u samples do not fit this machine's memory", xpts,
                             ypts);
    size_t at = p->c.pos;
    int16_t hs, bh;
    if (!trn_cursor_i16le(&p->c, &hs) || !trn_cursor_i16le(&p->c, &bh))
        return truncated(p, "ALTW (HeightScale, BaseHeight)", at, 4);
    at = p->c.pos;
    const uint8_t *raw = trn_cursor_take(&p->c, bytes);
    if (!raw)
        return trn_error_set(p->err, TRN_ERR_TRUNCATED, p->path, (int64_t)at,
                             "ALTW chunk: elevations for %u x %u points need %zu bytes at offset "
                             "%zu, found %zu (file ends)",
                             xpts, ypts, bytes, at, p->c.size - at);
    /* The data is in the file, so the allocation is bounded by the input's own size. */
    int16_t *elev = malloc(bytes);
    if (!elev)
        return trn_error_set(p->err, TRN_ERR_NO_MEMORY, p->path, (int64_t)at,
                             "out of memory for %zu elevations", (size_t)count);
    for (size_t k = 0; k < (size_t)count; k++)
        elev[k] = (int16_t)(uint16_t)(raw[2 * k] | (raw[2 * k + 1] << 8));
    /* Chunks are 4-byte aligned: an odd count is followed by 2 zero bytes (Terragen, tgter).
     * GDAL writes none, so only skip them when they are there. */
    if ((count & 1u) && trn_cursor_left(&p->c) >= 2 && p->c.data[p->c.pos] == 0 &&
        p->c.data[p->c.pos + 1] == 0)
        trn_cursor_skip(&p->c, 2);
    tg->xpts = xpts;
    tg->ypts = ypts;
    tg->height_scale = hs;
    tg->base_height = bh;
    tg->elevations = elev;
    return TRN_OK;
}

static trn_status read_floats(tg_parse *p, const char *chunk, float *v, int n, bool positive)
{
    size_t at = p->c.pos;
    if (!trn_cursor_has(&p->c, (size_t)n * 4)) return truncated(p, chunk, at, (size_t)n * 4);
    for (int k = 0; k < n; k++) {
        size_t here = p->c.pos;
        trn_cursor_f32le(&p->c, &v[k]);
        if (!isfinite(v[k]) || (positive && !(v[k] > 0.0f)))
            return trn_error_set(p->err, TRN_ERR_FORMAT, p->path, (int64_t)here,
                                 "%s chunk: value %d is %g; expected a finite%s number", chunk,
                                 k + 1, (double)v[k], positive ? " positive" : "");
    }
    return TRN_OK;
}

trn_status trn_terragen_parse_limited(const uint8_t *data, size_t size, const char *path,
                                      const trn_terragen_limits *limits, trn_terragen *tg,
                                      trn_error *err)
{
    memset(tg, 0, sizeof *tg);
    trn_terragen_limits lim;
    if (!limits) {
        trn_terragen_limits_default(&lim);
        limits = &lim;
    }
    if (!data && size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1, "no data given");
    if (!trn_terragen_sniff(data, size)) {
        size_t n = size < TRN_TERRAGEN_MAGIC_SIZE ? size : TRN_TERRAGEN_MAGIC_SIZE;
        if (size < TRN_TERRAGEN_MAGIC_SIZE && (n == 0 || memcmp(data, TRN_TERRAGEN_MAGIC, n) == 0))
            return trn_error_set(err, TRN_ERR_TRUNCATED, path, 0,
                                 "header: expected the 16-byte \"TERRAGENTERRAIN \" magic, the "
                                 "file has only %zu bytes",
                                 size);
        return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                             "header: expected \"TERRAGENTERRAIN \", this is not a Terragen "
                             "terrain file");
    }

    tg_parse p;
    trn_cursor_init(&p.c, data, size);
    trn_cursor_skip(&p.c, TRN_TERRAGEN_MAGIC_SIZE);
    p.path = path;
    p.err = err;
    for (int k = 0; k < CHUNK_COUNT; k++)
        p.seen[k] = -1;

    trn_terragen out;
    memset(&out, 0, sizeof out);
    out.scale[0] = out.scale[1] = out.scale[2] = TG_DEFAULT_SCALE;
    out.planet_radius = TG_DEFAULT_RADIUS;
    uint16_t size_value = 0, xpts_value = 0, ypts_value = 0;
    trn_status st = TRN_OK;

    for (;;) {
        size_t at = p.c.pos;
        if (trn_cursor_left(&p.c) == 0) {
            if (p.seen[CHUNK_ALTW] >= 0) break; /* no "EOF ": as GDAL writes them */
            st =
                trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                              "file ends at offset %zu without an ALTW chunk (the elevations)", at);
            goto fail;
        }
        const uint8_t *m = trn_cursor_take(&p.c, 4);
        if (!m) {
            st = trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                               "chunk marker: expected 4 bytes at offset %zu, found %zu (file "
                               "ends)",
                               at, size - at);
            goto fail;
        }
        chunk_id id = chunk_lookup(m);
        char mbuf[24];
        if (id == CHUNK_UNKNOWN) {
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)at,
                               "unknown chunk marker %s at offset %zu; expected SIZE, XPTS, "
                               "YPTS, SCAL, CRAD, CRVM, ALTW or 'EOF '",
                               marker_text(m, mbuf), at);
            goto fail;
        }
        if ((id == CHUNK_SIZE || id == CHUNK_XPTS || id == CHUNK_YPTS) && p.seen[CHUNK_ALTW] >= 0) {
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)at,
                               "%s chunk at offset %zu comes after the ALTW chunk at offset "
                               "%lld; grid sizes must precede the elevations",
                               chunk_markers[id], at, (long long)p.seen[CHUNK_ALTW]);
            goto fail;
        }
        if (p.seen[id] >= 0) {
            st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)at,
                               "second %s chunk at offset %zu (the first is at offset %lld)",
                               marker_text(m, mbuf), at, (long long)p.seen[id]);
            goto fail;
        }
        p.seen[id] = (int64_t)at;
        switch (id) {
        case CHUNK_SIZE:
            st = read_u16_padded(&p, "SIZE", &size_value);
            break;
        case CHUNK_XPTS:
            st = read_u16_padded(&p, "XPTS", &xpts_value);
            break;
        case CHUNK_YPTS:
            st = read_u16_padded(&p, "YPTS", &ypts_value);
            break;
        case CHUNK_SCAL:
            st = read_floats(&p, "SCAL", out.scale, 3, true);
            break;
        case CHUNK_CRAD:
            st = read_floats(&p, "CRAD", &out.planet_radius, 1, false);
            break;
        case CHUNK_CRVM:
            /* Planetside's tgter reads a u16 and 2 bytes of padding; the spec and GDAL a
             * 4-byte value. Both agree on zero padding; keep all 4 bytes so files round-trip. */
            if (!trn_cursor_u32le(&p.c, &out.curve_mode)) st = truncated(&p, "CRVM", p.c.pos, 4);
            break;
        case CHUNK_ALTW:
            st = read_altw(&p, limits, size_value, xpts_value, ypts_value, &out);
            break;
        case CHUNK_EOF:
        case CHUNK_UNKNOWN:
            break;
        }
        if (st) goto fail;
        if (id == CHUNK_EOF) {
            if (p.seen[CHUNK_ALTW] < 0) {
                st = trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)at,
                                   "'EOF ' marker at offset %zu but no ALTW chunk (the "
                                   "elevations) came before it",
                                   at);
                goto fail;
            }
            out.has_eof = true;
            out.trailing_bytes = trn_cursor_left(&p.c);
            break;
        }
    }
    *tg = out;
    return TRN_OK;
fail:
    free(out.elevations);
    return st;
}

trn_status trn_terragen_parse(const uint8_t *data, size_t size, const char *path, trn_terragen *tg,
                              trn_error *err)
{
    return trn_terragen_parse_limited(data, size, path, NULL, tg, err);
}

trn_status trn_terragen_read(const char *path, const trn_terragen_limits *limits, trn_terragen *tg,
                             trn_error *err)
{
    memset(tg, 0, sizeof *tg);
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_terragen_parse_limited(mf.data, mf.size, path, limits, tg, err);
    trn_mapped_file_close(&mf);
    return st;
}

trn_status trn_terragen_to_field(const trn_terragen *tg, trn_field *field, trn_error *err)
{
    if (!tg || !tg->elevations || tg->xpts < 2 || tg->ypts < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terragen_to_field: no elevations (needs at least 2 x 2 points)");
    trn_field f;
    uint32_t cells_x = tg->xpts - 1, cells_z = tg->ypts - 1;
    trn_status st = trn_field_init(&f, cells_x, cells_z, (double)cells_x * tg->scale[0],
                                   (double)cells_z * tg->scale[1], err);
    if (st) return st;
    const double zscale = tg->scale[2];
    const double base = (double)tg->base_height;
    const double step = (double)tg->height_scale / 65536.0;
    size_t n = (size_t)tg->xpts * tg->ypts;
    /* File row y is field row j: both start in the south, so the copy keeps the index. */
    for (size_t k = 0; k < n; k++)
        f.heights[k] = (float)(zscale * (base + (double)tg->elevations[k] * step));
    if (tg->height_scale > 0) {
        f.quantum = zscale * step;
        f.quantum_base = zscale * (base - 32768.0 * step);
    }
    *field = f;
    return TRN_OK;
}

/* True when v is (within rounding) a whole number in lo..hi; *out gets it. */
static bool whole_in(double v, double lo, double hi, int32_t *out)
{
    double r = nearbyint(v);
    if (!isfinite(v) || r < lo || r > hi || fabs(v - r) > 1e-6 * (fabs(r) > 1.0 ? fabs(r) : 1.0))
        return false;
    *out = (int32_t)r;
    return true;
}

trn_status trn_terragen_from_field(const trn_field *field, trn_terragen *tg, trn_error *err)
{
    memset(tg, 0, sizeof *tg);
    if (!field || !field->heights || field->cells_x < 1 || field->cells_z < 1 ||
        field->cells_x > 65534u || field->cells_z > 65534u)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terragen_from_field: a Terragen file holds 2..65535 points per "
                             "side; the field has %u x %u cells",
                             field ? field->cells_x : 0, field ? field->cells_z : 0);
    double sx = field->size_x / field->cells_x, sy = field->size_z / field->cells_z;
    if (!(sx > 0.0) || !(sy > 0.0) || !isfinite(sx) || !isfinite(sy) || sx > 3.0e38 || sy > 3.0e38)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terragen_from_field: cell size %g x %g is not a positive number", sx,
                             sy);
    trn_terragen out;
    memset(&out, 0, sizeof out);
    out.xpts = field->cells_x + 1;
    out.ypts = field->cells_z + 1;
    out.scale[0] = (float)sx;
    out.scale[1] = (float)sy;
    out.scale[2] = (float)sx;
    out.planet_radius = TG_DEFAULT_RADIUS;
    out.has_eof = true;
    const double zscale = out.scale[2];
    size_t n = (size_t)out.xpts * out.ypts;
    out.elevations = malloc(n * sizeof *out.elevations);
    if (!out.elevations)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for %zu samples", n);

    /* Exact path: the field's quantum names whole HeightScale/BaseHeight for this SCAL.z. */
    int32_t hs = 0, bh = 0;
    bool exact =
        field->quantum > 0.0 && whole_in(field->quantum * 65536.0 / zscale, 1, 32767, &hs) &&
        whole_in((field->quantum_base + 32768.0 * field->quantum) / zscale, -32768, 32767, &bh);
    if (!exact) {
        float lo_f, hi_f;
        trn_field_range(field, &lo_f, &hi_f);
        double lo = lo_f / zscale, hi = hi_f / zscale;
        if (!isfinite(lo) || !isfinite(hi)) {
            free(out.elevations);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "terragen_from_field: heights %g..%g m are not finite",
                                 (double)lo_f, (double)hi_f);
        }
        double mid = nearbyint((lo + hi) / 2.0);
        if (mid < -32768.0) mid = -32768.0;
        if (mid > 32767.0) mid = 32767.0;
        bh = (int32_t)mid;
        /* Smallest HeightScale that keeps both ends inside int16 after rounding. */
        double span = fmax(hi - mid, mid - lo);
        double need = ceil(span * 65536.0 / 32767.0);
        if (need < 1.0) need = 1.0;
        if (need > 32767.0) {
            free(out.elevations);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "terragen_from_field: heights %g..%g m span more than Terragen's "
                                 "16-bit range at %g m per unit",
                                 (double)lo_f, (double)hi_f, zscale);
        }
        hs = (int32_t)need;
    }
    out.height_scale = (int16_t)hs;
    out.base_height = (int16_t)bh;
    const double step = (double)hs / 65536.0;
    for (size_t k = 0; k < n; k++) {
        double h = field->heights[k];
        double e = exact ? nearbyint((h - field->quantum_base) / field->quantum) - 32768.0
                         : nearbyint((h / zscale - bh) / step);
        if (!(e == e)) e = 0.0; /* NaN heights sit at BaseHeight */
        if (e < -32768.0) e = -32768.0;
        if (e > 32767.0) e = 32767.0;
        out.elevations[k] = (int16_t)e;
    }
    *tg = out;
    return TRN_OK;
}

static void put_u16(uint8_t **p, uint16_t v)
{
    (*p)[0] = (uint8_t)(v & 0xffu);
    (*p)[1] = (uint8_t)(v >> 8);
    *p += 2;
}

static void put_u32(uint8_t **p, uint32_t v)
{
    for (int k = 0; k < 4; k++)
        (*p)[k] = (uint8_t)(v >> (8 * k));
    *p += 4;
}

static void put_f32(uint8_t **p, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_u32(p, u);
}

static void put_bytes(uint8_t **p, const char *s, size_t n)
{
    memcpy(*p, s, n);
    *p += n;
}

trn_status trn_terragen_encode(const trn_terragen *tg, uint8_t **out, size_t *out_size,
                               trn_error *err)
{
    *out = NULL;
    *out_size = 0;
    if (!tg || !tg->elevations || tg->xpts < 2 || tg->ypts < 2 || tg->xpts > 65535u ||
        tg->ypts > 65535u)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terragen_encode: needs elevations and 2..65535 points per side");
    size_t n = (size_t)tg->xpts * tg->ypts, data_bytes, total;
    if (!trn_mul_size(n, 2, &data_bytes) ||
        !trn_add_size(data_bytes, 16 + 8 * 3 + 16 + 8 + 8 + 8 + 2 + 4, &total))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "terragen_encode: too large");
    uint8_t *buf = malloc(total), *p = buf;
    if (!buf) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    uint32_t shortest = tg->xpts < tg->ypts ? tg->xpts : tg->ypts;
    put_bytes(&p, TRN_TERRAGEN_MAGIC, TRN_TERRAGEN_MAGIC_SIZE);
    put_bytes(&p, "SIZE", 4);
    put_u16(&p, (uint16_t)(shortest - 1));
    put_u16(&p, 0);
    put_bytes(&p, "XPTS", 4);
    put_u16(&p, (uint16_t)tg->xpts);
    put_u16(&p, 0);
    put_bytes(&p, "YPTS", 4);
    put_u16(&p, (uint16_t)tg->ypts);
    put_u16(&p, 0);
    put_bytes(&p, "SCAL", 4);
    for (int k = 0; k < 3; k++)
        put_f32(&p, tg->scale[k]);
    put_bytes(&p, "CRAD", 4);
    put_f32(&p, tg->planet_radius);
    put_bytes(&p, "CRVM", 4);
    put_u32(&p, tg->curve_mode);
    put_bytes(&p, "ALTW", 4);
    put_u16(&p, (uint16_t)tg->height_scale);
    put_u16(&p, (uint16_t)tg->base_height);
    for (size_t k = 0; k < n; k++)
        put_u16(&p, (uint16_t)tg->elevations[k]);
    if (n & 1u) put_u16(&p, 0); /* keep the next chunk 4-byte aligned */
    put_bytes(&p, "EOF ", 4);
    *out = buf;
    *out_size = (size_t)(p - buf);
    return TRN_OK;
}

trn_status trn_terragen_write(const char *path, const trn_terragen *tg, trn_error *err)
{
    uint8_t *buf;
    size_t size;
    trn_status st = trn_terragen_encode(tg, &buf, &size, err);
    if (st) return st;
    st = trn_file_write_atomic(path, buf, size, err);
    free(buf);
    return st;
}
