/* GeoTIFF float32 writer: libtiff over the atomic temporary file, georeferencing tags. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <tiffio.h>

#include "core/fileio.h"
#include "geotiff_private.h"

/* ---- libtiff over the atomic file ----------------------------------------------------- */

typedef struct out_file {
    trn_atomic_file *af;
} out_file;

static tmsize_t out_read(thandle_t h, void *buf, tmsize_t n)
{
    out_file *o = (out_file *)h;
    return (tmsize_t)fread(buf, 1, (size_t)n, o->af->fp);
}

static tmsize_t out_write(thandle_t h, void *buf, tmsize_t n)
{
    out_file *o = (out_file *)h;
    size_t done = fwrite(buf, 1, (size_t)n, o->af->fp);
    if (done != (size_t)n && !o->af->failed) {
        o->af->failed = true;
        o->af->saved_errno = errno ? errno : EIO;
    }
    return (tmsize_t)done;
}

static toff_t out_seek(thandle_t h, toff_t off, int whence)
{
    out_file *o = (out_file *)h;
    if (off > (toff_t)INT64_MAX) return (toff_t)-1;
    if (fseeko(o->af->fp, (off_t)off, whence) != 0) return (toff_t)-1;
    off_t pos = ftello(o->af->fp);
    return pos < 0 ? (toff_t)-1 : (toff_t)pos;
}

static int out_close(thandle_t h)
{
    (void)h;
    return 0; /* the atomic file is committed or aborted by the writer */
}

static toff_t out_size(thandle_t h)
{
    out_file *o = (out_file *)h;
    struct stat st;
    fflush(o->af->fp);
    if (fstat(fileno(o->af->fp), &st) != 0) return 0;
    return (toff_t)st.st_size;
}

static int out_map(thandle_t h, void **base, toff_t *size)
{
    (void)h;
    (void)base;
    (void)size;
    return 0;
}

static void out_unmap(thandle_t h, void *base, toff_t size)
{
    (void)h;
    (void)base;
    (void)size;
}

typedef struct write_msgs {
    char first_error[320];
    unsigned errors;
} write_msgs;

static int on_write_error(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    write_msgs *m = user;
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
    return 1;
}

static int on_write_warning(TIFF *tif, void *user, const char *module, const char *fmt, va_list ap)
{
    (void)tif;
    (void)user;
    (void)module;
    (void)fmt;
    (void)ap;
    return 1;
}

/* libtiff does not know the GeoTIFF tags; they are registered on this handle only. */
static const TIFFFieldInfo geo_fields[] = {
    {GT_TAG_MODEL_PIXEL_SCALE, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1,
     (char *)"ModelPixelScaleTag"},
    {GT_TAG_MODEL_TIEPOINT, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1, (char *)"ModelTiepointTag"},
    {GT_TAG_MODEL_TRANSFORMATION, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1,
     (char *)"ModelTransformationTag"},
    {GT_TAG_GEO_KEY_DIRECTORY, -1, -1, TIFF_SHORT, FIELD_CUSTOM, 1, 1,
     (char *)"GeoKeyDirectoryTag"},
    {GT_TAG_GEO_DOUBLE_PARAMS, -1, -1, TIFF_DOUBLE, FIELD_CUSTOM, 1, 1,
     (char *)"GeoDoubleParamsTag"},
    {GT_TAG_GEO_ASCII_PARAMS, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"GeoASCIIParamsTag"},
    {GT_TAG_GDAL_NODATA, -1, -1, TIFF_ASCII, FIELD_CUSTOM, 1, 0, (char *)"GDALNoDataValue"},
};

static bool register_geo_fields(TIFF *tif)
{
    for (size_t k = 0; k < sizeof geo_fields / sizeof geo_fields[0]; k++) {
        if (TIFFFindField(tif, geo_fields[k].field_tag, TIFF_ANY)) continue;
        if (TIFFMergeFieldInfo(tif, &geo_fields[k], 1) != 0) return false;
    }
    return true;
}

/* The keys this library knows, for a georef whose directory was not kept (a reprojected DEM's
 * new CRS, a directory too large to keep): the codes, units and the citation (GTCitationGeoKey,
 * its text into ascii, "" when none). */
static uint32_t build_keys(const trn_geotiff_georef *g, uint16_t *keys, char *ascii,
                           size_t ascii_size)
{
    struct {
        uint16_t id, value;
    } known[] = {{1024, g->model_type},    {1025, g->raster_type},    {2048, g->geographic_epsg},
                 {2054, g->angular_units}, {3072, g->projected_epsg}, {3076, g->linear_units},
                 {4096, g->vertical_epsg}, {4099, g->vertical_units}};
    uint32_t n = 0;
    ascii[0] = '\0';
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
        if (known[k].id == 2048 && g->citation[0]) {
            /* GTCitationGeoKey (1026) sorts between the raster type and the geographic code. */
            int len = snprintf(ascii, ascii_size, "%s|", g->citation);
            if (len > 0 && (size_t)len < ascii_size) {
                uint16_t *e = keys + 4 * (n + 1);
                e[0] = 1026;
                e[1] = GT_TAG_GEO_ASCII_PARAMS;
                e[2] = (uint16_t)len;
                e[3] = 0;
                n++;
            } else {
                ascii[0] = '\0';
            }
        }
        uint16_t v = known[k].value;
        if (known[k].id == 1025 && v == 0) v = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
        if (v == 0) continue;
        uint16_t *e = keys + 4 * (n + 1);
        e[0] = known[k].id;
        e[1] = 0;
        e[2] = 1;
        e[3] = v;
        n++;
    }
    keys[0] = 1;
    keys[1] = 1;
    keys[2] = 0;
    keys[3] = (uint16_t)n;
    return 4 * (n + 1);
}

static bool set_georef_tags(TIFF *tif, const trn_field *field, const trn_geotiff_georef *g)
{
    /* Neither a transform nor keys: a plain TIFF (the caller knows no spacing worth writing). */
    if (g && !g->has_transform && !g->has_geokeys) return true;
    uint16_t keys[4 * (TRN_GEOTIFF_KEEP_KEYS + 1)];
    char built_ascii[sizeof g->citation + 2] = "";
    uint32_t key_shorts;
    double t[6];
    uint16_t raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    if (g && g->has_transform) {
        memcpy(t, g->transform, sizeof t);
        if (g->raster_type) raster_type = g->raster_type;
    } else {
        /* The field's own frame: sample spacing, the south-west sample's centre at (0, 0). */
        double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        double local[6] = {-0.5 * dx, dx, 0, field->size_z + 0.5 * dz, 0, -dz};
        memcpy(t, local, sizeof t);
    }
    if (g && g->has_geokeys && g->kept_keys) {
        memcpy(keys, g->keys, g->key_shorts * sizeof(uint16_t));
        key_shorts = g->key_shorts;
    } else if (g && g->has_geokeys) {
        key_shorts = build_keys(g, keys, built_ascii, sizeof built_ascii);
    } else {
        /* No CRS: no GeoKeyDirectory at all, so no reader invents a local one ("unnamed",
         * unknown units) out of a lone raster-type key. */
        key_shorts = 0;
    }
    /* Tiepoints name the pixel corner (PixelIsArea) or centre (PixelIsPoint) of raster (0, 0). */
    double shift = raster_type == TRN_GEOTIFF_RASTER_PIXEL_IS_POINT ? 0.5 : 0.0;
    double x0 = t[0] + shift * (t[1] + t[2]), y0 = t[3] + shift * (t[4] + t[5]);
    if (t[2] == 0 && t[4] == 0) {
        double scale[3] = {t[1], -t[5], g && g->has_pixel_scale ? g->pixel_scale[2] : 0.0};
        double tie[6] = {0, 0, 0, x0, y0, 0};
        if (!TIFFSetField(tif, GT_TAG_MODEL_PIXEL_SCALE, 3, scale)) return false;
        if (!TIFFSetField(tif, GT_TAG_MODEL_TIEPOINT, 6, tie)) return false;
    } else {
        double m[16] = {t[1], t[2], 0, x0, t[4], t[5], 0, y0, 0, 0, 0, 0, 0, 0, 0, 1};
        if (!TIFFSetField(tif, GT_TAG_MODEL_TRANSFORMATION, 16, m)) return false;
    }
    if (key_shorts && !TIFFSetField(tif, GT_TAG_GEO_KEY_DIRECTORY, (int)key_shorts, keys))
        return false;
    if (g && g->has_geokeys && g->kept_keys) {
        if (g->double_count &&
            !TIFFSetField(tif, GT_TAG_GEO_DOUBLE_PARAMS, (int)g->double_count, g->doubles))
            return false;
        if (g->ascii_size > 1 && !TIFFSetField(tif, GT_TAG_GEO_ASCII_PARAMS, g->ascii))
            return false;
    } else if (built_ascii[0] && !TIFFSetField(tif, GT_TAG_GEO_ASCII_PARAMS, built_ascii)) {
        return false;
    }
    return true;
}

trn_status trn_geotiff_write(const char *path, const trn_field *field,
                             const trn_geotiff_georef *georef, trn_geotiff_compression compression,
                             trn_error *err)
{
    if (!field || !field->heights || field->cells_x == 0 || field->cells_z == 0 ||
        field->cells_x >= UINT32_MAX || field->cells_z >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "GeoTIFF writer: expected a field of at least 1 x 1 cells");
    uint16_t comp;
    switch (compression) {
    case TRN_GEOTIFF_COMPRESS_NONE:
        comp = COMPRESSION_NONE;
        break;
    case TRN_GEOTIFF_COMPRESS_DEFLATE:
        comp = COMPRESSION_ADOBE_DEFLATE;
        break;
    case TRN_GEOTIFF_COMPRESS_LZW:
        comp = COMPRESSION_LZW;
        break;
    default:
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "GeoTIFF writer: unknown compression %d", (int)compression);
    }
    uint32_t w = field->cells_x + 1, h = field->cells_z + 1;
    size_t n = (size_t)w * h;
    bool has_nan = false;
    for (size_t i = 0; i < n && !has_nan; i++)
        has_nan = isnan(field->heights[i]);
    double vu = georef && georef->vertical_unit_metres > 0 ? georef->vertical_unit_metres : 1.0;
    /* BigTIFF once the pixels alone come near classic TIFF's 4 GiB offsets. */
    bool big = (uint64_t)n * 4u > ((uint64_t)4000 << 20);
    uint32_t rps = (uint32_t)((256u * 1024u) / ((size_t)w * 4u));
    if (rps < 1) rps = 1;
    if (rps > h) rps = h;
    float *strip = malloc((size_t)w * rps * sizeof(float));
    if (!strip) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory for a strip");

    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, path, err);
    if (st) {
        free(strip);
        return st;
    }
    out_file of = {&af};
    write_msgs msgs;
    memset(&msgs, 0, sizeof msgs);
    TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
    TIFF *tif = NULL;
    if (opts) {
        TIFFOpenOptionsSetErrorHandlerExtR(opts, on_write_error, &msgs);
        TIFFOpenOptionsSetWarningHandlerExtR(opts, on_write_warning, &msgs);
        tif = TIFFClientOpenExt(path, big ? "w8" : "w", (thandle_t)&of, out_read, out_write,
                                out_seek, out_close, out_size, out_map, out_unmap, opts);
        TIFFOpenOptionsFree(opts);
    }
    bool ok = tif != NULL && register_geo_fields(tif);
    if (ok) {
        ok = TIFFSetField(tif, TIFFTAG_IMAGEWIDTH, w) &&
             TIFFSetField(tif, TIFFTAG_IMAGELENGTH, h) &&
             TIFFSetField(tif, TIFFTAG_SAMPLESPERPIXEL, 1) &&
             TIFFSetField(tif, TIFFTAG_BITSPERSAMPLE, 32) &&
             TIFFSetField(tif, TIFFTAG_SAMPLEFORMAT, SAMPLEFORMAT_IEEEFP) &&
             TIFFSetField(tif, TIFFTAG_PHOTOMETRIC, PHOTOMETRIC_MINISBLACK) &&
             TIFFSetField(tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG) &&
             TIFFSetField(tif, TIFFTAG_COMPRESSION, comp) &&
             TIFFSetField(tif, TIFFTAG_ROWSPERSTRIP, rps);
        if (ok && comp != COMPRESSION_NONE) ok = TIFFSetField(tif, TIFFTAG_PREDICTOR, 3);
        if (ok) ok = set_georef_tags(tif, field, georef);
        if (ok && has_nan) ok = TIFFSetField(tif, GT_TAG_GDAL_NODATA, "nan");
    }
    uint32_t strips = (h + rps - 1) / rps;
    for (uint32_t s = 0; ok && s < strips; s++) {
        uint32_t y0 = s * rps, rows = h - y0 < rps ? h - y0 : rps;
        for (uint32_t r = 0; r < rows; r++) {
            /* Raster row y is the field's row h - 1 - y (north up). */
            const float *src = field->heights + (size_t)(h - 1 - (y0 + r)) * w;
            float *dst = strip + (size_t)r * w;
            if (vu == 1.0)
                memcpy(dst, src, (size_t)w * sizeof(float));
            else
                for (uint32_t i = 0; i < w; i++)
                    dst[i] = (float)(src[i] / vu);
        }
        ok = TIFFWriteEncodedStrip(tif, s, strip, (tmsize_t)rows * w * 4) >= 0;
    }
    if (ok) ok = TIFFFlush(tif) == 1;
    if (tif) TIFFClose(tif);
    free(strip);
    if (!ok) {
        trn_atomic_file_abort(&af);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "GeoTIFF writer: libtiff failed: %s",
                             msgs.first_error[0] ? msgs.first_error
                             : !tif              ? "cannot open for writing"
                                                 : "no reason given");
    }
    return trn_atomic_file_commit(&af, err);
}
