/* GeoTIFF pixel reading through libtiff over an in-memory buffer, NoData detection, to field. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tiffio.h>

#include "core/checked.h"
#include "core/fileio.h"
#include "core/progress.h"
#include "geotiff_private.h"
#include "terrane/resample.h"

/* ---- libtiff over memory ------------------------------------------------------------- */

/* The client state: the buffer is read only; libtiff maps it for uncompressed strips. */
typedef struct mem_file {
    const uint8_t *data;
    size_t size;
    uint64_t pos;
} mem_file;

static tmsize_t mem_read(thandle_t h, void *buf, tmsize_t n)
{
    mem_file *m = (mem_file *)h;
    if (n <= 0 || m->pos >= m->size) return 0;
    uint64_t left = m->size - m->pos;
    size_t take = (uint64_t)n < left ? (size_t)n : (size_t)left;
    memcpy(buf, m->data + m->pos, take);
    m->pos += take;
    return (tmsize_t)take;
}

static tmsize_t mem_write(thandle_t h, void *buf, tmsize_t n)
{
    (void)h;
    (void)buf;
    (void)n;
    return 0; /* opened for reading only */
}

static toff_t mem_seek(thandle_t h, toff_t off, int whence)
{
    mem_file *m = (mem_file *)h;
    uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->size : 0;
    uint64_t np;
    if (!trn_add_u64(base, off, &np)) return (toff_t)-1;
    m->pos = np;
    return np;
}

static int mem_close(thandle_t h)
{
    (void)h;
    return 0;
}

static toff_t mem_size(thandle_t h)
{
    return ((mem_file *)h)->size;
}

static int mem_map(thandle_t h, void **base, toff_t *size)
{
    mem_file *m = (mem_file *)h;
    /* libtiff only reads mapped data; the cast drops const for its signature. */
    *base = (void *)(uintptr_t)m->data;
    *size = m->size;
    return 1;
}

static void mem_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

/* Messages from libtiff for this call only (TIFFOpenOptions handlers, no global state). */
typedef struct tiff_msgs {
    char first_error[320];
    unsigned errors, warnings;
} tiff_msgs;

static int on_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    tiff_msgs *m = user;
    if (m->errors++ == 0) {
        char text[256];
/* libtiff hands over its own printf format with the arguments that match it. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
        vsnprintf(text, sizeof text, fmt, ap);
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
        snprintf(m->first_error, sizeof m->first_error, "%s%s%s", module ? module : "",
                 module ? ": " : "", text);
    }
    return 1; /* handled: the global handler is not called */
}

static int on_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)module;
    (void)fmt;
    (void)ap;
    ((tiff_msgs *)user)->warnings++;
    return 1;
}

static TIFF *open_mem(mem_file *mf, const char *path, const trn_geotiff_limits *lim,
                      tiff_msgs *msgs, trn_error *err)
{
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory for libtiff options");
        return NULL;
    }
    tmsize_t max_alloc =
        lim->max_alloc > (uint64_t)INT64_MAX ? (tmsize_t)INT64_MAX : (tmsize_t)lim->max_alloc;
    TIFFOpenOptionsSetMaxSingleMemAlloc(opts, max_alloc);
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, msgs);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, msgs);
    TIFF *tif = TIFFClientOpenExt(path ? path : "memory", "r", (thandle_t)mf, mem_read, mem_write,
                                  mem_seek, mem_close, mem_size, mem_map, mem_unmap, opts);
    TIFFOpenOptionsFree(opts);
    if (!tif)
        trn_error_set(err, TRN_ERR_FORMAT, path, 0, "libtiff cannot open the image: %s",
                      msgs->first_error[0] ? msgs->first_error : "no reason given");
    return tif;
}

/* ---- image layout -------------------------------------------------------------------- */

static int64_t entry_offset(const gt_scan *s, int slot)
{
    return s->entries[slot].present ? (int64_t)s->entries[slot].entry_offset : -1;
}

/* Fill the pixel-layout part of info from libtiff and check it against the limits. */
static trn_status read_layout(TIFF *tif, const gt_scan *s, const trn_geotiff_limits *lim,
                              trn_geotiff_info *info, trn_error *err)
{
    const char *path = s->path;
    uint32_t w = 0, h = 0;
    uint16_t spp = 1, bps = 1, fmt = SAMPLEFORMAT_UINT, comp = COMPRESSION_NONE, planar = 1;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &w) || !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &h))
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)s->ifd_offset,
                             "image directory: expected ImageWidth and ImageLength tags");
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &comp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &planar);
    info->width = w;
    info->height = h;
    info->bands = spp;
    info->bits_per_sample = bps;
    info->sample_format = fmt;
    info->compression = comp;
    info->planar_separate = planar == PLANARCONFIG_SEPARATE;
    const TIFFCodec *codec = TIFFFindCODEC(comp);
    snprintf(info->compression_name, sizeof info->compression_name, "%s",
             codec ? codec->name : "unknown");
    uint16_t predictor = 1;
    if (comp != COMPRESSION_NONE && !TIFFGetField(tif, TIFFTAG_PREDICTOR, &predictor))
        predictor = 1;
    info->predictor = predictor;
    info->tiled = TIFFIsTiled(tif) != 0;
    if (info->tiled) {
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &info->tile_width);
        TIFFGetField(tif, TIFFTAG_TILELENGTH, &info->tile_height);
    } else {
        uint32_t rps = h;
        TIFFGetFieldDefaulted(tif, TIFFTAG_ROWSPERSTRIP, &rps);
        info->rows_per_strip = rps > h ? h : rps;
    }

    if (w == 0 || h == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path,
                             entry_offset(s, w ? GT_E_LENGTH : GT_E_WIDTH),
                             "image directory: expected a non-empty image, found %u x %u", w, h);
    if (w > lim->max_width)
        return trn_error_set(err, TRN_ERR_LIMIT, path, entry_offset(s, GT_E_WIDTH),
                             "ImageWidth %u is over the limit of %u", w, lim->max_width);
    if (h > lim->max_height)
        return trn_error_set(err, TRN_ERR_LIMIT, path, entry_offset(s, GT_E_LENGTH),
                             "ImageLength %u is over the limit of %u", h, lim->max_height);
    if ((uint64_t)w * h > lim->max_samples)
        return trn_error_set(err, TRN_ERR_LIMIT, path, entry_offset(s, GT_E_LENGTH),
                             "%u x %u = %llu samples, more than the limit of %llu (raise the "
                             "limits' max_samples; terrane: --max-samples N)",
                             w, h, (unsigned long long)w * h, (unsigned long long)lim->max_samples);
    if (spp == 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)s->ifd_offset,
                             "SamplesPerPixel: expected at least 1, found 0");
    int sample = -1;
    bool as_uint = fmt == SAMPLEFORMAT_UINT || fmt == SAMPLEFORMAT_VOID;
    if (as_uint && bps == 8) sample = TRN_GEOTIFF_SAMPLE_U8;
    if (fmt == SAMPLEFORMAT_INT && bps == 8) sample = TRN_GEOTIFF_SAMPLE_I8;
    if (as_uint && bps == 16) sample = TRN_GEOTIFF_SAMPLE_U16;
    if (fmt == SAMPLEFORMAT_INT && bps == 16) sample = TRN_GEOTIFF_SAMPLE_I16;
    if (as_uint && bps == 32) sample = TRN_GEOTIFF_SAMPLE_U32;
    if (fmt == SAMPLEFORMAT_INT && bps == 32) sample = TRN_GEOTIFF_SAMPLE_I32;
    if (fmt == SAMPLEFORMAT_IEEEFP && bps == 32) sample = TRN_GEOTIFF_SAMPLE_F32;
    if (fmt == SAMPLEFORMAT_IEEEFP && bps == 64) sample = TRN_GEOTIFF_SAMPLE_F64;
    if (sample < 0)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, entry_offset(s, GT_E_BITS),
                             "samples of %u bits with SampleFormat %u: expected 8/16/32-bit "
                             "integers or 32/64-bit floats",
                             bps, fmt);
    info->sample = (trn_geotiff_sample)sample;
    if (!TIFFIsCODECConfigured(comp))
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, entry_offset(s, GT_E_COMPRESSION),
                             "compression %u (%s) is not available in this libtiff", comp,
                             info->compression_name);
    return TRN_OK;
}

trn_status trn_geotiff_decode_info(const uint8_t *data, size_t size, const char *path,
                                   const trn_geotiff_limits *limits, trn_geotiff_info *info,
                                   trn_error *err)
{
    trn_geotiff_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_geotiff_limits_default(&lim);
    gt_scan scan;
    trn_status st = gt_scan_file(data, size, path, &lim, &scan, info, err);
    if (st) return st;
    mem_file mf = {data, size, 0};
    tiff_msgs msgs;
    memset(&msgs, 0, sizeof msgs);
    TIFF *tif = open_mem(&mf, path, &lim, &msgs, err);
    if (!tif) return TRN_ERR_FORMAT;
    st = read_layout(tif, &scan, &lim, info, err);
    TIFFClose(tif);
    if (!st) trn_geotiff_georef_derive(&info->georef, info->width, info->height);
    return st;
}

/* ---- decoding ------------------------------------------------------------------------ */

/* NoData candidates counted while converting. */
typedef struct nd_state {
    double values[2];
    uint64_t counts[2];
    int n;
    uint64_t nan_count;
} nd_state;

static size_t sample_bytes(trn_geotiff_sample s)
{
    switch (s) {
    case TRN_GEOTIFF_SAMPLE_U8:
    case TRN_GEOTIFF_SAMPLE_I8:
        return 1;
    case TRN_GEOTIFF_SAMPLE_U16:
    case TRN_GEOTIFF_SAMPLE_I16:
        return 2;
    case TRN_GEOTIFF_SAMPLE_U32:
    case TRN_GEOTIFF_SAMPLE_I32:
    case TRN_GEOTIFF_SAMPLE_F32:
        return 4;
    case TRN_GEOTIFF_SAMPLE_F64:
        return 8;
    }
    return 0;
}

static double load_sample(const uint8_t *p, trn_geotiff_sample s)
{
    switch (s) {
    case TRN_GEOTIFF_SAMPLE_U8:
        return p[0];
    case TRN_GEOTIFF_SAMPLE_I8:
        return (int8_t)p[0];
    case TRN_GEOTIFF_SAMPLE_U16: {
        uint16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case TRN_GEOTIFF_SAMPLE_I16: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
    }
    case TRN_GEOTIFF_SAMPLE_U32: {
        uint32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case TRN_GEOTIFF_SAMPLE_I32: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
    }
    case TRN_GEOTIFF_SAMPLE_F32: {
        float v;
        memcpy(&v, p, 4);
        return v;
    }
    case TRN_GEOTIFF_SAMPLE_F64: {
        double v;
        memcpy(&v, p, 8);
        return v;
    }
    }
    return NAN;
}

/* Convert count samples (every stride-th, band 1) of decoded host-order data to float. */
static void convert_run(const uint8_t *src, size_t stride_bytes, size_t count, trn_geotiff_sample s,
                        float *dst)
{
    if (s == TRN_GEOTIFF_SAMPLE_F32 && stride_bytes == 4) {
        memcpy(dst, src, count * 4);
        return;
    }
    for (size_t i = 0; i < count; i++)
        dst[i] = (float)load_sample(src + i * stride_bytes, s);
}

static trn_status decode_fail(const gt_scan *s, TIFF *tif, uint32_t strile, const char *what,
                              const tiff_msgs *msgs, trn_error *err)
{
    uint64_t off = TIFFGetStrileOffset(tif, strile);
    uint64_t count = TIFFGetStrileByteCount(tif, strile);
    /* Data past the end: say so with our own numbers (libtiff prints a negative count as a
     * 20-digit unsigned one). */
    char nc[24], no[24];
    if (off > s->size || count > s->size - off)
        return trn_error_set(
            err, TRN_ERR_TRUNCATED, s->path, off <= (uint64_t)INT64_MAX ? (int64_t)off : -1,
            "%s %u: expected %s bytes at offset %s, the file ends at offset %zu", what, strile,
            trn_gt_num(count, s->size, nc), trn_gt_num(off, s->size, no), s->size);
    return trn_error_set(err, TRN_ERR_FORMAT, s->path, off ? (int64_t)off : -1,
                         "%s %u: cannot decode: %s", what, strile,
                         msgs->first_error[0] ? msgs->first_error : "libtiff gave no reason");
}

static trn_status decode_pixels(TIFF *tif, const gt_scan *s, const trn_geotiff_info *info,
                                float *values, const trn_progress *prog, const tiff_msgs *msgs,
                                trn_error *err)
{
    uint32_t w = info->width, h = info->height;
    size_t sb = sample_bytes(info->sample);
    size_t stride = info->planar_separate ? sb : sb * info->bands;
    const char *path = s->path;
    if (info->tiled) {
        uint32_t tw = info->tile_width, th = info->tile_height;
        if (tw == 0 || th == 0)
            return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)s->ifd_offset,
                                 "tiles of %u x %u pixels: expected a non-empty tile size", tw, th);
        tmsize_t tile_bytes = TIFFTileSize(tif);
        tmsize_t row_bytes = TIFFTileRowSize(tif);
        if (tile_bytes <= 0 || row_bytes <= 0 || (uint64_t)tile_bytes > (uint64_t)1 << 31)
            return trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)s->ifd_offset,
                                 "tiles of %u x %u pixels are too large to decode", tw, th);
        uint8_t *buf = malloc((size_t)tile_bytes);
        if (!buf)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                                 "out of memory for a %lld-byte tile", (long long)tile_bytes);
        uint64_t tiles_down = (h + (uint64_t)th - 1) / th, done = 0;
        for (uint32_t ty = 0; ty < h; ty += th) {
            for (uint32_t tx = 0; tx < w; tx += tw) {
                uint32_t tile = TIFFComputeTile(tif, tx, ty, 0, 0);
                if (TIFFReadEncodedTile(tif, tile, buf, tile_bytes) < 0) {
                    trn_status st = decode_fail(s, tif, tile, "tile", msgs, err);
                    free(buf);
                    return st;
                }
                uint32_t cols = w - tx < tw ? w - tx : tw, rows = h - ty < th ? h - ty : th;
                for (uint32_t r = 0; r < rows; r++)
                    convert_run(buf + (size_t)r * (size_t)row_bytes, stride, cols, info->sample,
                                values + ((size_t)ty + r) * w + tx);
            }
            if (trn_progress_report(prog, (double)++done / (double)tiles_down, "read GeoTIFF")) {
                free(buf);
                return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "reading cancelled");
            }
        }
        free(buf);
        return TRN_OK;
    }
    uint32_t rps = info->rows_per_strip ? info->rows_per_strip : h;
    tmsize_t scan_bytes = TIFFScanlineSize(tif);
    if (scan_bytes <= 0)
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)s->ifd_offset,
                             "image directory: the rows have no size");
    bool direct = info->sample == TRN_GEOTIFF_SAMPLE_F32 && stride == 4;
    uint8_t *buf = NULL;
    if (!direct) {
        size_t bytes;
        if (!trn_mul_size((size_t)scan_bytes, rps, &bytes) || bytes > ((size_t)1 << 31))
            return trn_error_set(err, TRN_ERR_LIMIT, path, (int64_t)s->ifd_offset,
                                 "strips of %u rows are too large to decode", rps);
        buf = malloc(bytes);
        if (!buf)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                                 "out of memory for a %zu-byte strip", bytes);
    }
    for (uint32_t y = 0; y < h; y += rps) {
        uint32_t rows = h - y < rps ? h - y : rps;
        uint32_t strip = TIFFComputeStrip(tif, y, 0);
        tmsize_t want = (tmsize_t)scan_bytes * rows;
        /* float32 single-band strips decode straight into the result: no second copy. */
        void *dst = direct ? (void *)(values + (size_t)y * w) : (void *)buf;
        if (TIFFReadEncodedStrip(tif, strip, dst, want) < want) {
            free(buf);
            return decode_fail(s, tif, strip, "strip", msgs, err);
        }
        if (!direct)
            for (uint32_t r = 0; r < rows; r++)
                convert_run(buf + (size_t)r * (size_t)scan_bytes, stride, w, info->sample,
                            values + ((size_t)y + r) * w);
        if (trn_progress_report(prog, (double)(y + rows) / h, "read GeoTIFF")) {
            free(buf);
            return trn_error_set(err, TRN_ERR_CANCELLED, path, -1, "reading cancelled");
        }
    }
    free(buf);
    return TRN_OK;
}

/* Mark NoData as NaN, decide where it came from, and find the valid range. */
static void apply_nodata(trn_geotiff *dem)
{
    const trn_geotiff_info *info = &dem->info;
    size_t n = (size_t)info->width * info->height;
    nd_state nd;
    memset(&nd, 0, sizeof nd);
    if (info->has_nodata_tag) {
        if (!isnan(info->nodata_tag_value)) nd.values[nd.n++] = info->nodata_tag_value;
    } else {
        if (info->sample == TRN_GEOTIFF_SAMPLE_I16) nd.values[nd.n++] = -32768.0;
        if (info->sample == TRN_GEOTIFF_SAMPLE_I16 || info->sample == TRN_GEOTIFF_SAMPLE_I32 ||
            info->sample == TRN_GEOTIFF_SAMPLE_F32 || info->sample == TRN_GEOTIFF_SAMPLE_F64)
            nd.values[nd.n++] = -9999.0;
    }
    /* Candidates compared as float: every candidate is exact in float, and so is every
     * sample of the types they apply to (int32 tags beyond 2^24 compare as floats too). */
    float cand[2] = {(float)nd.values[0], (float)nd.values[1]};
    float lo = INFINITY, hi = -INFINITY;
    float *v = dem->values;
    for (size_t i = 0; i < n; i++) {
        float x = v[i];
        if (!isfinite(x)) {
            nd.nan_count++;
            v[i] = NAN;
            continue;
        }
        if (nd.n > 0 && x == cand[0]) {
            nd.counts[0]++;
            v[i] = NAN;
            continue;
        }
        if (nd.n > 1 && x == cand[1]) {
            nd.counts[1]++;
            v[i] = NAN;
            continue;
        }
        if (x < lo) lo = x;
        if (x > hi) hi = x;
    }
    dem->nodata_count = nd.nan_count + nd.counts[0] + nd.counts[1];
    dem->nodata_value = NAN;
    dem->nodata_source = TRN_GEOTIFF_NODATA_NONE;
    if (info->has_nodata_tag) {
        dem->nodata_source = TRN_GEOTIFF_NODATA_TAG;
        dem->nodata_value = info->nodata_tag_value;
    } else if (nd.counts[0] + nd.counts[1] > 0) {
        int k = nd.counts[1] > nd.counts[0] ? 1 : 0;
        dem->nodata_value = nd.values[k];
        dem->nodata_source = nd.values[k] == -32768.0 ? TRN_GEOTIFF_NODATA_MINUS_32768
                                                      : TRN_GEOTIFF_NODATA_MINUS_9999;
    } else if (nd.nan_count > 0) {
        dem->nodata_source = TRN_GEOTIFF_NODATA_NAN;
    }
    dem->min = lo <= hi ? lo : 0;
    dem->max = lo <= hi ? hi : 0;
}

trn_status trn_geotiff_decode(const uint8_t *data, size_t size, const char *path,
                              const trn_geotiff_limits *limits, trn_geotiff *out,
                              trn_progress_fn progress, void *user, trn_error *err)
{
    memset(out, 0, sizeof *out);
    trn_geotiff_limits lim;
    if (limits)
        lim = *limits;
    else
        trn_geotiff_limits_default(&lim);
    gt_scan scan;
    trn_geotiff_info info;
    trn_status st = gt_scan_file(data, size, path, &lim, &scan, &info, err);
    if (st) return st;
    mem_file mf = {data, size, 0};
    tiff_msgs msgs;
    memset(&msgs, 0, sizeof msgs);
    TIFF *tif = open_mem(&mf, path, &lim, &msgs, err);
    if (!tif) return TRN_ERR_FORMAT;
    st = read_layout(tif, &scan, &lim, &info, err);
    float *values = NULL;
    if (!st) {
        size_t n = (size_t)info.width * info.height; /* within max_samples, checked */
        size_t bytes;
        if (!trn_mul_size(n, sizeof(float), &bytes))
            st = trn_error_set(err, TRN_ERR_OVERFLOW, path, -1, "%zu samples overflow", n);
        else if (!(values = malloc(bytes)))
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1,
                               "out of memory for %u x %u samples", info.width, info.height);
    }
    if (!st) {
        trn_progress prog = trn_progress_make(progress, user);
        st = decode_pixels(tif, &scan, &info, values, &prog, &msgs, err);
    }
    TIFFClose(tif);
    if (st) {
        free(values);
        return st;
    }
    trn_geotiff_georef_derive(&info.georef, info.width, info.height);
    out->info = info;
    out->values = values;
    apply_nodata(out);
    return TRN_OK;
}

trn_status trn_geotiff_read_info(const char *path, const trn_geotiff_limits *limits,
                                 trn_geotiff_info *info, trn_error *err)
{
    trn_mapped_file mf;
    memset(info, 0, sizeof *info);
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_geotiff_decode_info(mf.data, mf.size, path, limits, info, err);
    trn_mapped_file_close(&mf);
    return st;
}

trn_status trn_geotiff_read(const char *path, const trn_geotiff_limits *limits, trn_geotiff *out,
                            trn_progress_fn progress, void *user, trn_error *err)
{
    trn_mapped_file mf;
    memset(out, 0, sizeof *out);
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st) return st;
    st = trn_geotiff_decode(mf.data, mf.size, path, limits, out, progress, user, err);
    trn_mapped_file_close(&mf);
    return st;
}

void trn_geotiff_dispose(trn_geotiff *dem)
{
    if (!dem) return;
    free(dem->values);
    memset(dem, 0, sizeof *dem);
}

trn_status trn_geotiff_fill_nodata(trn_geotiff *dem, uint64_t *filled_out, trn_progress_fn progress,
                                   void *user, trn_error *err)
{
    if (filled_out) *filled_out = 0;
    if (!dem || !dem->values || dem->info.width < 1 || dem->info.height < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "fill NoData: no decoded values");
    if (dem->nodata_count == 0) return TRN_OK;
    if (dem->info.width < 2 || dem->info.height < 2)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "fill NoData: a %u x %u raster is too small to fill from",
                             dem->info.width, dem->info.height);
    /* The fill is symmetric in rows, so it runs on the raster's own row order. */
    trn_field view;
    memset(&view, 0, sizeof view);
    view.cells_x = dem->info.width - 1;
    view.cells_z = dem->info.height - 1;
    view.size_x = view.cells_x;
    view.size_z = view.cells_z;
    view.heights = dem->values;
    return trn_field_fill_nan(&view, filled_out, progress, user, err);
}

trn_status trn_geotiff_to_field(trn_geotiff *dem, trn_field *field, trn_error *err)
{
    if (!dem || !dem->values)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "GeoTIFF to field: no decoded values");
    uint32_t w = dem->info.width, h = dem->info.height;
    if (w < 2 || h < 2)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "GeoTIFF to field: a heightfield needs at least 2 x 2 samples, the "
                             "raster is %u x %u",
                             w, h);
    const trn_geotiff_georef *g = &dem->info.georef;
    double mx = g->metres_per_pixel_x > 0 ? g->metres_per_pixel_x : 1.0;
    double mz = g->metres_per_pixel_y > 0 ? g->metres_per_pixel_y : 1.0;
    float *v = dem->values;
    /* Reverse the rows in place: the raster's first row is north, the field's is south. */
    float *tmp = malloc((size_t)w * sizeof(float));
    if (!tmp) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a row");
    for (uint32_t a = 0, b = h - 1; a < b; a++, b--) {
        memcpy(tmp, v + (size_t)a * w, (size_t)w * sizeof(float));
        memcpy(v + (size_t)a * w, v + (size_t)b * w, (size_t)w * sizeof(float));
        memcpy(v + (size_t)b * w, tmp, (size_t)w * sizeof(float));
    }
    free(tmp);
    double vu = g->vertical_unit_metres > 0 ? g->vertical_unit_metres : 1.0;
    if (vu != 1.0) {
        size_t n = (size_t)w * h;
        for (size_t i = 0; i < n; i++)
            v[i] = (float)(v[i] * vu);
    }
    memset(field, 0, sizeof *field);
    field->cells_x = w - 1;
    field->cells_z = h - 1;
    field->size_x = mx * (w - 1);
    field->size_z = mz * (h - 1);
    field->heights = v;
    dem->values = NULL;
    return TRN_OK;
}
