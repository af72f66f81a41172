/* Any supported heightfield file from memory into a field, through each format's bounded reader. */
#define _DEFAULT_SOURCE /* realpath */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "terrane/beamng.h"
#include "terrane/heightfield.h"
#include "terrane/image.h"
#include "terrane/resample.h"

#define DEFAULT_MAX_HEIGHT 2048.0

static const char *const format_names[] = {"auto", "geotiff", "png", "r16", "r16be", "r32", "ter"};

const char *trn_heightfield_format_name(trn_heightfield_format format)
{
    return (unsigned)format < sizeof format_names / sizeof format_names[0] ? format_names[format]
                                                                           : "unknown";
}

bool trn_heightfield_format_parse(const char *name, trn_heightfield_format *format)
{
    for (unsigned k = 0; name && k < sizeof format_names / sizeof format_names[0]; k++)
        if (strcmp(name, format_names[k]) == 0) {
            if (format) *format = (trn_heightfield_format)k;
            return true;
        }
    return false;
}

static bool ends_with(const char *name, const char *suffix)
{
    const size_t n = name ? strlen(name) : 0, m = strlen(suffix);
    return n >= m && strcasecmp(name + n - m, suffix) == 0;
}

trn_heightfield_format trn_heightfield_detect(const char *name, const uint8_t *data, size_t size)
{
    if (trn_png_sniff(data, size)) return TRN_HEIGHTFIELD_PNG;
    if (trn_geotiff_sniff(data, size)) return TRN_HEIGHTFIELD_GEOTIFF;
    if (ends_with(name, ".r16") || ends_with(name, ".raw")) return TRN_HEIGHTFIELD_R16;
    if (ends_with(name, ".r32")) return TRN_HEIGHTFIELD_R32;
    /* A .ter has no magic; its whole layout is the evidence (a Terragen .ter shares the
     * ending and fails the walk). */
    if (trn_ter_sniff(data, size) && trn_ter_probe(data, size, NULL)) return TRN_HEIGHTFIELD_TER;
    if (ends_with(name, ".ter")) return TRN_HEIGHTFIELD_TER;
    return TRN_HEIGHTFIELD_AUTO;
}

static trn_status unknown_format(const char *name, const uint8_t *data, size_t size, trn_error *err)
{
    char shown[16 * 3 + 1] = "";
    size_t k = 0;
    for (size_t i = 0; i < size && i < 16; i++)
        k += (size_t)snprintf(shown + k, sizeof shown - k, "%s%02x", i ? " " : "", data[i]);
    return trn_error_set(err, TRN_ERR_FORMAT, name, 0,
                         "unrecognised heightfield format: expected a GeoTIFF, a PNG, a BeamNG/"
                         "Torque .ter, or a headerless raster named .r16, .raw or .r32 (or say "
                         "which with format); found bytes %s",
                         size ? shown : "(none: the file is empty)");
}

static trn_raw_type raw_type_of(trn_heightfield_format f)
{
    return f == TRN_HEIGHTFIELD_R16      ? TRN_RAW_U16_LE
           : f == TRN_HEIGHTFIELD_R16_BE ? TRN_RAW_U16_BE
                                         : TRN_RAW_F32_LE;
}

/* A headerless raster's size from its length: as trn_raw_decode infers it, without decoding. */
static trn_status raw_size(const char *name, size_t size, trn_raw_type type, uint32_t w, uint32_t h,
                           uint32_t *out_w, uint32_t *out_h, trn_error *err)
{
    const uint64_t bytes = trn_raw_sample_bytes(type), samples = size / bytes;
    if (size % bytes)
        return trn_error_set(err, TRN_ERR_FORMAT, name, (int64_t)size,
                             "the length %zu is not a whole number of %u-byte samples", size,
                             (unsigned)bytes);
    if (!w && !h) {
        uint64_t side = (uint64_t)sqrt((double)samples);
        while (side * side > samples)
            side--;
        while ((side + 1) * (side + 1) <= samples)
            side++;
        if (side * side != samples || side > UINT32_MAX)
            return trn_error_set(err, TRN_ERR_FORMAT, name, -1,
                                 "%llu samples of %u bytes are not a square; give raw_width "
                                 "and raw_height",
                                 (unsigned long long)samples, (unsigned)bytes);
        w = h = (uint32_t)side;
    } else if (!w || !h) {
        const uint32_t known = w ? w : h;
        if (samples % known || samples / known > UINT32_MAX)
            return trn_error_set(err, TRN_ERR_FORMAT, name, -1,
                                 "%llu samples are not a whole number of rows of %u",
                                 (unsigned long long)samples, known);
        if (!w)
            w = (uint32_t)(samples / known);
        else
            h = (uint32_t)(samples / known);
    } else {
        const uint64_t want = (uint64_t)w * h * bytes;
        if (size < want)
            return trn_error_set(err, TRN_ERR_TRUNCATED, name, (int64_t)size,
                                 "expected %u x %u samples (%llu bytes), the file ends at %zu", w,
                                 h, (unsigned long long)want, size);
        if (size > want)
            return trn_error_set(err, TRN_ERR_TRAILING_DATA, name, (int64_t)want,
                                 "expected %u x %u samples (%llu bytes), the file holds %zu", w, h,
                                 (unsigned long long)want, size);
    }
    *out_w = w;
    *out_h = h;
    return TRN_OK;
}

static void image_limits(const trn_heightfield_read_options *o, trn_image_limits *lim)
{
    trn_image_limits_default(lim);
    if (o && o->max_samples) lim->max_samples = o->max_samples;
}

static void geotiff_limits(const trn_heightfield_read_options *o, trn_geotiff_limits *lim)
{
    trn_geotiff_limits_default(lim);
    if (o && o->max_samples) lim->max_samples = o->max_samples;
}

static void ter_limits(const trn_heightfield_read_options *o, trn_ter_limits *lim)
{
    trn_ter_limits_default(lim);
    if (o && o->max_samples) lim->max_samples = o->max_samples;
}

static trn_heightfield_format format_of(const trn_heightfield_read_options *o, const char *name,
                                        const uint8_t *data, size_t size)
{
    return o && o->format != TRN_HEIGHTFIELD_AUTO ? o->format
                                                  : trn_heightfield_detect(name, data, size);
}

trn_status trn_heightfield_probe(const uint8_t *data, size_t size, const char *name,
                                 const trn_heightfield_read_options *options,
                                 trn_heightfield_info *info, trn_error *err)
{
    if (!info || (!data && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, name, -1,
                             "trn_heightfield_probe: info and data are required");
    memset(info, 0, sizeof *info);
    const trn_heightfield_format f = format_of(options, name, data, size);
    info->format = f;
    trn_status st = TRN_OK;
    switch (f) {
    case TRN_HEIGHTFIELD_GEOTIFF: {
        trn_geotiff_limits lim;
        geotiff_limits(options, &lim);
        trn_geotiff_info gi;
        if ((st = trn_geotiff_decode_info(data, size, name, &lim, &gi, err))) return st;
        info->width = gi.width;
        info->height = gi.height;
        info->bit_depth = (uint8_t)(gi.bits_per_sample > 32 ? 32 : gi.bits_per_sample);
        info->has_georef = gi.has_georef && gi.georef.has_transform;
        if (info->has_georef) info->georef = gi.georef;
        break;
    }
    case TRN_HEIGHTFIELD_PNG: {
        trn_png_info pi;
        if ((st = trn_png_decode_info(data, size, name, &pi, err))) return st;
        info->width = pi.width;
        info->height = pi.height;
        info->bit_depth = pi.bit_depth > 8 ? 16 : 8;
        trn_image_limits lim;
        image_limits(options, &lim);
        if ((uint64_t)pi.width * pi.height > lim.max_samples)
            return trn_error_set(err, TRN_ERR_LIMIT, name, 16,
                                 "%u x %u pixels exceed the limit of %llu samples", pi.width,
                                 pi.height, (unsigned long long)lim.max_samples);
        break;
    }
    case TRN_HEIGHTFIELD_R16:
    case TRN_HEIGHTFIELD_R16_BE:
    case TRN_HEIGHTFIELD_R32: {
        if ((st = raw_size(name, size, raw_type_of(f), options ? options->raw_width : 0,
                           options ? options->raw_height : 0, &info->width, &info->height, err)))
            return st;
        info->bit_depth = f == TRN_HEIGHTFIELD_R32 ? 32 : 16;
        trn_image_limits lim;
        image_limits(options, &lim);
        if ((uint64_t)info->width * info->height > lim.max_samples)
            return trn_error_set(err, TRN_ERR_LIMIT, name, 0,
                                 "%u x %u samples exceed the limit of %llu", info->width,
                                 info->height, (unsigned long long)lim.max_samples);
        break;
    }
    case TRN_HEIGHTFIELD_TER: {
        uint64_t end = 0;
        if (!trn_ter_probe(data, size, &end)) {
            /* The parser names the section at fault (and refuses nothing it would read). */
            trn_ter_limits lim;
            ter_limits(options, &lim);
            trn_ter ter;
            if ((st = trn_ter_parse(data, size, name, &lim, &ter, err))) return st;
            info->width = info->height = ter.size;
            trn_ter_dispose(&ter);
        } else {
            /* Modern files store the side at offset 1; legacy ones are 256. */
            uint32_t side = 256;
            if (size >= 5 && data[0] >= 7)
                side = (uint32_t)data[1] | ((uint32_t)data[2] << 8) | ((uint32_t)data[3] << 16) |
                       ((uint32_t)data[4] << 24);
            trn_ter_limits lim;
            ter_limits(options, &lim);
            if ((uint64_t)side * side > lim.max_samples || side > lim.max_size)
                return trn_error_set(err, TRN_ERR_LIMIT, name, 1,
                                     "%u x %u samples exceed the limit of %llu", side, side,
                                     (unsigned long long)lim.max_samples);
            info->width = info->height = side;
        }
        info->bit_depth = 16;
        break;
    }
    case TRN_HEIGHTFIELD_AUTO:
    default:
        return unknown_format(name, data, size, err);
    }
    if (info->width < 2 || info->height < 2)
        return trn_error_set(err, TRN_ERR_FORMAT, name, -1,
                             "%u x %u pixels: a heightfield needs at least 2 x 2", info->width,
                             info->height);
    return TRN_OK;
}

void trn_heightfield_file_dispose(trn_heightfield_file *file)
{
    if (!file) return;
    trn_field_dispose(&file->field);
    memset(file, 0, sizeof *file);
}

/* Non-finite samples (NoData, NaN in an R32) filled smoothly; all of them is an error. */
static trn_status fill_holes(trn_heightfield_file *out, const char *name, trn_progress_fn progress,
                             void *user, trn_error *err)
{
    const size_t n = trn_field_sample_count(&out->field);
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(out->field.heights[i])) {
            out->field.heights[i] = NAN;
            bad++;
        }
    if (bad == n)
        return trn_error_set(err, TRN_ERR_FORMAT, name, -1,
                             "all %zu samples are NoData, NaN or infinite: there is no height to "
                             "read",
                             n);
    if (bad) {
        trn_status st = trn_field_fill_nan(&out->field, &out->filled, progress, user, err);
        if (st) return st;
    }
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, out->field.heights[i]);
        hi = fmax(hi, out->field.heights[i]);
    }
    out->min = lo;
    out->max = hi;
    return TRN_OK;
}

trn_status trn_heightfield_decode(const uint8_t *data, size_t size, const char *name,
                                  const trn_heightfield_read_options *options,
                                  trn_heightfield_file *out, trn_progress_fn progress, void *user,
                                  trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, name, -1,
                             "trn_heightfield_decode: out is required");
    memset(out, 0, sizeof *out);
    trn_status st = trn_heightfield_probe(data, size, name, options, &out->info, err);
    if (st) {
        memset(out, 0, sizeof *out);
        return st;
    }
    const double max_height =
        options && options->max_height > 0 ? options->max_height : DEFAULT_MAX_HEIGHT;
    const trn_heightfield_format f = out->info.format;
    if (f == TRN_HEIGHTFIELD_GEOTIFF) {
        trn_geotiff_limits lim;
        geotiff_limits(options, &lim);
        trn_geotiff dem;
        if ((st = trn_geotiff_decode(data, size, name, &lim, &dem, progress, user, err))) return st;
        st = trn_geotiff_to_field(&dem, &out->field, err);
        trn_geotiff_dispose(&dem);
    } else if (f == TRN_HEIGHTFIELD_TER) {
        trn_ter_limits lim;
        ter_limits(options, &lim);
        trn_ter ter;
        if ((st = trn_ter_parse(data, size, name, &lim, &ter, err))) return st;
        st = trn_ter_to_field(&ter, max_height, 1.0, &out->field, NULL, err);
        trn_ter_dispose(&ter);
    } else {
        trn_image_limits lim;
        image_limits(options, &lim);
        trn_image img;
        if (f == TRN_HEIGHTFIELD_PNG)
            st = trn_png_decode(data, size, name, &lim, &img, err);
        else
            st = trn_raw_decode(data, size, name, raw_type_of(f), out->info.width, out->info.height,
                                &lim, &img, err);
        if (st) return st;
        /* The first channel: grey, or R of a colour image (a World Machine or Gaea export is
         * grey; the CLI's --channel is for the rest). */
        st = trn_image_to_field(&img, 0, max_height / 65536.0, 0.0, 1.0, &out->field, err);
        trn_image_dispose(&img);
    }
    if (!st) st = fill_holes(out, name, progress, user, err);
    if (st) trn_heightfield_file_dispose(out);
    return st;
}

/* ---- paths ---- */

trn_status trn_heightfield_path_check(const char *path, trn_error *err)
{
    if (!path || !*path)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the path is empty: name a file relative to the recipe's folder");
    if (path[0] == '/')
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "'%.200s' is an absolute path: a recipe names its files relative to "
                             "its own folder (put the file there or below it)",
                             path);
    for (const char *p = path; *p;) {
        const char *slash = strchr(p, '/');
        const size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "'%.200s' has a '..' part: a recipe's files lie in its folder "
                                 "or below it, never outside",
                                 path);
        p += len + (slash ? 1 : 0);
    }
    return TRN_OK;
}

trn_status trn_heightfield_path_resolve(const char *base_dir, const char *path, char *resolved,
                                        size_t resolved_size, trn_error *err)
{
    if (resolved && resolved_size) resolved[0] = '\0';
    trn_status st = trn_heightfield_path_check(path, err);
    if (st) return st;
    if (!resolved || resolved_size < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_heightfield_path_resolve: resolved is required");
    const char *base = base_dir && *base_dir ? base_dir : ".";
    const int n = snprintf(resolved, resolved_size, "%s/%s", base, path);
    if (n < 0 || (size_t)n >= resolved_size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "'%.200s' is too long a path",
                             path);
    struct stat sb;
    if (stat(resolved, &sb) != 0) {
        const int e = errno;
        return trn_error_set(err, e == ENOENT || e == ENOTDIR ? TRN_ERR_NOT_FOUND : TRN_ERR_IO,
                             resolved, -1, "cannot open '%.200s' (%.300s): %s", path, resolved,
                             strerror(e));
    }
    /* A symbolic link (the file or a folder on the way) may lead outside: compare the real
     * locations. */
    char real_base[PATH_MAX], real_file[PATH_MAX];
    if (!realpath(base, real_base) || !realpath(resolved, real_file))
        return trn_error_set(err, TRN_ERR_IO, resolved, -1, "cannot resolve '%.200s': %s", path,
                             strerror(errno));
    const size_t bl = strlen(real_base);
    const bool inside = strncmp(real_file, real_base, bl) == 0 &&
                        (real_file[bl] == '/' || (bl == 1 && real_base[0] == '/'));
    if (!inside)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, resolved, -1,
                             "'%.200s' leads outside the recipe's folder (through a symbolic "
                             "link, to %.200s): a recipe's files lie in its folder or below it",
                             path, real_file);
    if (S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, resolved, -1,
                             "'%.200s' is a folder, expected a file", path);
    return TRN_OK;
}
