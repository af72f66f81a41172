/* BeamNG terrain import (World Editor rules), level writing, create and export. */
#define _XOPEN_SOURCE 700
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "core/checked.h"
#include "core/fileio.h"
#include "core/progress.h"
#include "level_internal.h"
#include "core/write_set.h"
#include "ter_internal.h"

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

static bool is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

static uint32_t next_pow2(uint32_t v)
{
    uint32_t p = 1;
    while (p < v && p < 0x80000000u)
        p <<= 1;
    return p;
}

trn_status trn_beamng_round_resolution(uint32_t requested, uint32_t *rounded, trn_error *err)
{
    if (requested == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "resolution 0: give the number of samples per side (128 to 8192)");
    if (requested > TRN_BEAMNG_MAX_RESOLUTION)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "resolution %u is above 8192, the largest terrain BeamNG loads; use "
                             "8192 and a larger squareSize for more ground",
                             requested);
    uint32_t r = next_pow2(requested);
    *rounded = r < TRN_BEAMNG_MIN_RESOLUTION ? TRN_BEAMNG_MIN_RESOLUTION : r;
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * Building a .ter from images.
 * ---------------------------------------------------------------------------------------- */

static trn_status check_heightmap_size(uint32_t w, uint32_t h, const char *label, const char *path,
                                       trn_error *err)
{
    if (w == h && is_pow2(w) && w >= TRN_BEAMNG_MIN_RESOLUTION && w <= TRN_BEAMNG_MAX_RESOLUTION)
        return TRN_OK;
    uint32_t side = w > h ? w : h;
    uint32_t target = next_pow2(side);
    if (target < TRN_BEAMNG_MIN_RESOLUTION) target = TRN_BEAMNG_MIN_RESOLUTION;
    if (side > TRN_BEAMNG_MAX_RESOLUTION) target = TRN_BEAMNG_MAX_RESOLUTION;
    const char *verb = w != h ? "crop or resize" : "resize";
    return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                         "%s is %ux%u: BeamNG needs a square power of two between 128 and 8192; "
                         "%s it to %ux%u",
                         label, w, h, verb, target, target);
}

/* Column c of channel ch at image row r, widened to 16 bits (8-bit v -> v*257 = v/255*65535). */
static inline uint16_t sample16(const trn_image *img, uint32_t r, uint32_t c, unsigned ch)
{
    size_t i = ((size_t)r * img->width + c) * img->channels + ch;
    if (img->bit_depth == 16) return ((const uint16_t *)img->data)[i];
    return (uint16_t)(((const uint8_t *)img->data)[i] * 257u);
}

static trn_status check_same_size(const trn_image *img, uint32_t size, const char *label,
                                  const char *path, trn_error *err)
{
    if (img->width != size || img->height != size)
        return trn_error_set(err, TRN_ERR_MISMATCH, path, -1,
                             "%s is %ux%u but the heightmap is %ux%u: every map must match the "
                             "heightmap's size",
                             label, img->width, img->height, size, size);
    if (img->bit_depth != 8 && img->bit_depth != 16)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                             "%s has %u-bit samples; use an 8- or 16-bit image", label,
                             img->bit_depth);
    return TRN_OK;
}

/* Which interleaved channel holds R, G, B or A; -1 when the image has no such channel. */
static int channel_index(const trn_image *img, trn_channel ch)
{
    switch (img->channels) {
    case 1:
        return ch == TRN_CHANNEL_A ? -1 : 0;
    case 2:
        return ch == TRN_CHANNEL_A ? 1 : 0;
    case 3:
        return ch == TRN_CHANNEL_A ? -1 : (int)ch;
    case 4:
        return (int)ch;
    }
    return -1;
}

static const char channel_letters[] = "RGBA";

static bool report_rows(const trn_progress *p, uint32_t row, uint32_t size, const char *stage)
{
    if ((row & 63u) != 0) return false;
    return trn_progress_report(p, (double)row / size, stage);
}

/* Hands a sub-range (a trn_progress) to a call that takes a plain callback. */
static int progress_bridge(double done, const char *stage, void *user)
{
    return trn_progress_report((const trn_progress *)user, done, stage) ? TRN_CANCEL : TRN_CONTINUE;
}

static trn_status cancelled(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "cancelled");
}

static trn_status ter_alloc(trn_ter *ter, uint32_t size, const char *const *names, uint32_t count,
                            trn_error *err)
{
    memset(ter, 0, sizeof *ter);
    size_t n;
    if (!trn_mul_size(size, size, &n) || n > SIZE_MAX / 2)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "terrain %u x %u is too large", size,
                             size);
    ter->version = TRN_TER_VERSION_CURRENT;
    ter->layout = TRN_TER_LAYOUT_MODERN;
    ter->size = size;
    ter->heights = calloc(n, sizeof *ter->heights);
    ter->layers = calloc(n, 1);
    if (count) {
        ter->materials = calloc(count, sizeof *ter->materials);
        ter->material_lengths = calloc(count, sizeof *ter->material_lengths);
    }
    if (!ter->heights || !ter->layers || (count && (!ter->materials || !ter->material_lengths))) {
        trn_ter_dispose(ter);
        return oom(err, NULL);
    }
    for (uint32_t i = 0; i < count; i++) {
        size_t len = strlen(names[i]);
        if (len > UINT16_MAX) {
            trn_ter_dispose(ter);
            return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                                 "material name %u is %zu bytes long; a .ter name holds at most "
                                 "65535",
                                 i, len);
        }
        ter->materials[i] = trn_lvl_strdup(names[i]);
        if (!ter->materials[i]) {
            trn_ter_dispose(ter);
            return oom(err, NULL);
        }
        ter->material_lengths[i] = (uint32_t)len;
        ter->material_count = i + 1;
    }
    return TRN_OK;
}

/* A map that is read through its first channel must really be grey: an RGB(A) picture is
 * accepted only when R, G and B agree at every pixel (a grey picture saved as colour), and, when
 * opaque_only, a transparent pixel is refused rather than read as its colour. Pixels are named
 * in image coordinates (x from the left, y from the top). */
static trn_status check_grey(const trn_image *img, const char *label, const char *path,
                             bool opaque_only, const char *fix, trn_error *err)
{
    unsigned ch = img->channels;
    bool colour = ch >= 3, alpha = opaque_only && (ch == 2 || ch == 4);
    if (!colour && !alpha) return TRN_OK;
    for (uint32_t y = 0; y < img->height; y++)
        for (uint32_t x = 0; x < img->width; x++) {
            uint16_t r = sample16(img, y, x, 0);
            if (colour) {
                uint16_t g = sample16(img, y, x, 1), b = sample16(img, y, x, 2);
                if (r != g || r != b) {
                    unsigned div = img->bit_depth == 16 ? 1u : 257u;
                    return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                                         "%s is not grey: pixel (%u, %u) is R %u, G %u, B %u "
                                         "(x from the left, y from the top); %s",
                                         label, x, y, r / div, g / div, b / div, fix);
                }
            }
            if (alpha && sample16(img, y, x, ch - 1) != 65535u) /* 8-bit 255 widens to it */
                return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                                     "%s has transparent pixels, the first at (%u, %u) (x from "
                                     "the left, y from the top); transparency is not read: "
                                     "flatten the image, %s",
                                     label, x, y, fix);
        }
    return TRN_OK;
}

static trn_status fill_heights(trn_ter *ter, const trn_image *img, bool flip, const char *path,
                               const trn_progress *p, trn_error *err)
{
    if (img->bit_depth != 8 && img->bit_depth != 16)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                             "heightmap has %u-bit samples: BeamNG imports 16-bit PNG or R16 "
                             "(and widens 8-bit); convert it to a 16-bit PNG",
                             img->bit_depth);
    trn_status st = check_grey(img, "heightmap", path, false,
                               "save it as a grey PNG (16-bit keeps every height step)", err);
    if (st) return st;
    uint32_t size = ter->size;
    for (uint32_t r = 0; r < size; r++) {
        if (report_rows(p, r, size, "heightmap")) return cancelled(err);
        uint16_t *dst = ter->heights + (size_t)trn_beamng_terrain_row(r, size, flip) * size;
        if (img->bit_depth == 16 && img->channels == 1) {
            memcpy(dst, (const uint16_t *)img->data + (size_t)r * size, size * sizeof *dst);
            continue;
        }
        for (uint32_t c = 0; c < size; c++)
            dst[c] = sample16(img, r, c, 0);
    }
    return TRN_OK;
}

/* One opacity layer of the engine's argmax: later layers win ties (>=), best starts at 0. */
static trn_status apply_opacity(trn_ter *ter, uint16_t *best, const trn_image *img,
                                trn_channel channel, uint32_t layer, bool flip, const char *label,
                                const char *path, const trn_progress *p, trn_error *err)
{
    uint32_t size = ter->size;
    trn_status st = check_same_size(img, size, label, path, err);
    if (st) return st;
    int ci = channel_index(img, channel);
    if (ci < 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "%s has no %c channel (it has %u channel%s); choose %s", label,
                             channel_letters[channel], img->channels, img->channels == 1 ? "" : "s",
                             img->channels == 3 ? "R, G or B" : "R, G, B or A");
    for (uint32_t r = 0; r < size; r++) {
        if (report_rows(p, r, size, "opacity")) return cancelled(err);
        size_t row = (size_t)trn_beamng_terrain_row(r, size, flip) * size;
        for (uint32_t c = 0; c < size; c++) {
            uint16_t v = sample16(img, r, c, (unsigned)ci);
            if (v >= best[row + c]) {
                best[row + c] = v;
                ter->layers[row + c] = (uint8_t)layer;
            }
        }
    }
    return TRN_OK;
}

static trn_status apply_layer_map(trn_ter *ter, const trn_image *img, bool flip, const char *path,
                                  const trn_progress *p, trn_error *err)
{
    uint32_t size = ter->size;
    trn_status st = check_same_size(img, size, "layer map", path, err);
    if (st) return st;
    if (img->bit_depth != 8)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                             "layer map is %u-bit; it must be 8-bit grey (one material index "
                             "per pixel)",
                             img->bit_depth);
    if (img->channels != 1)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, path, -1,
                             "layer map has %u channels; it must be 8-bit grey (one material "
                             "index per pixel): a colour picture is not a list of indices",
                             img->channels);
    /* A value that names no material (and is no hole) paints the warning material. It is kept,
     * so that an exported layer map of any .ter imports back to the same file, but said loudly:
     * a warning on the terrain with the first pixel and how many. */
    const uint8_t *px = img->data;
    size_t n = (size_t)size * size, bad = 0, first = 0;
    for (size_t i = 0; i < n; i++)
        if (px[i] >= ter->material_count && px[i] != TRN_LABEL_NONE && bad++ == 0) first = i;
    if (bad) {
        uint32_t m = ter->material_count;
        char named[64];
        if (m)
            snprintf(named, sizeof named, "%u material%s %s named (0 to %u)", m, m == 1 ? "" : "s",
                     m == 1 ? "is" : "are", m - 1);
        else
            snprintf(named, sizeof named, "no materials are named");
        st = trn_ter_priv_warn(ter, -1, err,
                               "layer map pixel (%u, %u) is %u, but %s and 255 is a hole (x from "
                               "the left, y from the top; %zu pixel%s like it): those samples "
                               "paint the wrong or the warning material; name more materials or "
                               "repaint them",
                               (uint32_t)(first % size), (uint32_t)(first / size), px[first], named,
                               bad, bad == 1 ? "" : "s");
        if (st) return st;
    }
    for (uint32_t r = 0; r < size; r++) {
        if (report_rows(p, r, size, "layer map")) return cancelled(err);
        size_t row = (size_t)trn_beamng_terrain_row(r, size, flip) * size;
        const uint8_t *src = (const uint8_t *)img->data + (size_t)r * size * img->channels;
        for (uint32_t c = 0; c < size; c++)
            ter->layers[row + c] = src[(size_t)c * img->channels];
    }
    return TRN_OK;
}

/* Hole map: an 8-bit value of 0xFF (16-bit: high byte 0xFF) makes the sample a hole. */
static trn_status apply_holes(trn_ter *ter, const trn_image *img, bool flip, const char *path,
                              const trn_progress *p, trn_error *err)
{
    uint32_t size = ter->size;
    trn_status st = check_same_size(img, size, "hole map", path, err);
    if (!st)
        st = check_grey(img, "hole map", path, true,
                        "save it as a grey PNG: white (255) where the terrain has holes, black "
                        "elsewhere",
                        err);
    if (st) return st;
    for (uint32_t r = 0; r < size; r++) {
        if (report_rows(p, r, size, "holes")) return cancelled(err);
        size_t row = (size_t)trn_beamng_terrain_row(r, size, flip) * size;
        for (uint32_t c = 0; c < size; c++)
            if ((sample16(img, r, c, 0) >> 8) == 0xFFu) ter->layers[row + c] = TRN_LABEL_NONE;
    }
    return TRN_OK;
}

static trn_status check_counts(uint32_t opacity_count, bool has_layer_map, uint32_t material_count,
                               trn_error *err)
{
    if (opacity_count && has_layer_map)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "give either opacity maps or a layer map, not both");
    if (material_count > TRN_TER_MAX_MATERIALS)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "%u materials: BeamNG uses at most 254 per terrain", material_count);
    if (opacity_count && opacity_count != material_count)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "%u opacity map%s for %u material name%s: give one opacity map per "
                             "material, in the same order",
                             opacity_count, opacity_count == 1 ? "" : "s", material_count,
                             material_count == 1 ? "" : "s");
    if (!has_layer_map && material_count == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "no material names: a terrain needs at least one material");
    return TRN_OK;
}

static void opacity_label(uint32_t i, char *buf, size_t n)
{
    snprintf(buf, n, "opacity map %u", i + 1);
}

trn_status trn_beamng_build_ter(const trn_beamng_import_images *in, trn_ter *ter,
                                trn_progress_fn progress, void *user, trn_error *err)
{
    memset(ter, 0, sizeof *ter);
    if (!in || !in->heightmap)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no heightmap given");
    const trn_image *hm = in->heightmap;
    trn_status st =
        check_heightmap_size(hm->width, hm->height, "heightmap", in->heightmap_path, err);
    if (st) return st;
    if ((st = check_counts(in->opacity_count, in->layer_map != NULL, in->material_count, err)))
        return st;
    if ((st = ter_alloc(ter, hm->width, in->material_names, in->material_count, err))) return st;
    trn_progress root = trn_progress_make(progress, user);
    uint32_t steps = 2 + in->opacity_count + (in->layer_map ? 1 : 0) + (in->holes ? 1 : 0);
    uint32_t step = 0;
    trn_progress p = trn_progress_sub(&root, 0, 1.0 / steps);
    st = fill_heights(ter, hm, in->flip_y_axis, in->heightmap_path, &p, err);
    step++;
    uint16_t *best = NULL;
    if (!st && in->opacity_count) {
        best = calloc((size_t)ter->size * ter->size, sizeof *best);
        if (!best) st = oom(err, NULL);
    }
    for (uint32_t i = 0; !st && i < in->opacity_count; i++, step++) {
        char label[64];
        opacity_label(i, label, sizeof label);
        p = trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
        st = apply_opacity(ter, best, in->opacity[i], in->opacity_channels[i], i, in->flip_y_axis,
                           label, in->opacity_paths ? in->opacity_paths[i] : NULL, &p, err);
    }
    free(best);
    if (!st && in->layer_map) {
        p = trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
        st = apply_layer_map(ter, in->layer_map, in->flip_y_axis, in->layer_map_path, &p, err);
        step++;
    }
    if (!st && in->holes) {
        p = trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
        st = apply_holes(ter, in->holes, in->flip_y_axis, in->holes_path, &p, err);
    }
    if (!st && trn_progress_report(&root, 1.0, "done")) st = cancelled(err);
    if (st) trn_ter_dispose(ter);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Import from files.
 * ---------------------------------------------------------------------------------------- */

static bool has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), k = strlen(ext);
    return n >= k && trn_lvl_ieq(path + n - k, ext);
}

/* The first bytes of an input map, after checking that it is a non-empty regular file. *size
 * gets the file's length. Errors name the map ("heightmap", "opacity map 2"). */
static trn_status open_map(const char *path, const char *what, uint8_t head[8], size_t *got,
                           uint64_t *size, trn_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0)
        return trn_error_set(err, errno == ENOENT ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, path, -1,
                             "%s not found (%s)", what, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "%s is a folder, expected a file", what);
    if (sb.st_size == 0)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, 0,
                             "%s is empty (0 bytes), expected a PNG image", what);
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot open %s: %s", what,
                             strerror(errno));
    *got = fread(head, 1, 8, fp);
    fclose(fp);
    *size = (uint64_t)sb.st_size;
    return TRN_OK;
}

/* "found 68 65 6c 6c 6f" and, when the bytes are a terrain file we know, what it is. */
static void describe_head(const uint8_t *head, size_t got, char *buf, size_t n)
{
    size_t len = (size_t)snprintf(buf, n, "found");
    for (size_t i = 0; i < got && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, " %02x", head[i]);
    if (len >= n) return;
    if (got >= 8 && memcmp(head, "TERRAGEN", 8) == 0)
        snprintf(buf + len, n - len,
                 ": a Terragen terrain, not an image (convert it first: terrane convert IN "
                 "OUT.png)");
    else if (got >= 5 && head[0] >= 1 && head[0] <= TRN_TER_VERSION_CURRENT &&
             trn_ter_sniff(head, got))
        snprintf(buf + len, n - len,
                 ": looks like a BeamNG/Torque .ter, not an image (export its maps first: "
                 "terrane beamng export IN.ter)");
}

static trn_status not_png(const char *path, const char *what, const uint8_t *head, size_t got,
                          const char *also, trn_error *err)
{
    char found[200];
    describe_head(head, got, found, sizeof found);
    return trn_error_set(err, TRN_ERR_FORMAT, path, 0,
                         "%s is not a PNG (expected the signature 89 50 4e 47 0d 0a 1a 0a, %s)%s",
                         what, found, also);
}

static trn_status load_png(const char *path, const trn_image_limits *limits, const char *what,
                           trn_image *img, trn_error *err)
{
    uint8_t head[8];
    size_t got = 0;
    uint64_t size = 0;
    trn_status st = open_map(path, what, head, &got, &size, err);
    if (st) return st;
    if (!trn_png_sniff(head, got)) return not_png(path, what, head, got, "", err);
    return trn_png_read(path, limits, img, err);
}

/* The side of a square headerless raster of file_size bytes with sample_bytes per sample, or an
 * error naming the length (and the next smaller and larger squares) when it is not one. */
static trn_status raw_side(const char *path, const char *kind, uint64_t file_size,
                           unsigned sample_bytes, uint32_t *side_out, trn_error *err)
{
    if (file_size % sample_bytes)
        return trn_error_set(
            err, TRN_ERR_FORMAT, path, (int64_t)(file_size - file_size % sample_bytes),
            "%s heightmap is %llu bytes, %s: %u-bit samples take %u bytes each, "
            "so the last %llu byte(s) are left over",
            kind, (unsigned long long)file_size,
            sample_bytes == 2 ? "an odd length" : "not a multiple of 4", 8 * sample_bytes,
            sample_bytes, (unsigned long long)(file_size % sample_bytes));
    uint64_t samples = file_size / sample_bytes, side = 0;
    while ((side + 1) * (side + 1) <= samples)
        side++;
    if (side * side != samples || side > UINT32_MAX)
        return trn_error_set(err, TRN_ERR_FORMAT, path, -1,
                             "%s heightmap is %llu bytes, which is not a square of %u-bit "
                             "samples (%llu x %llu is %llu bytes, %llu x %llu is %llu); BeamNG "
                             "heightmaps are square, %u x N x N bytes (%u for 1024 x 1024)",
                             kind, (unsigned long long)file_size, 8 * sample_bytes,
                             (unsigned long long)side, (unsigned long long)side,
                             (unsigned long long)(sample_bytes * side * side),
                             (unsigned long long)(side + 1), (unsigned long long)(side + 1),
                             (unsigned long long)(sample_bytes * (side + 1) * (side + 1)),
                             sample_bytes, sample_bytes * 1024u * 1024u);
    *side_out = (uint32_t)side;
    return TRN_OK;
}

/* What scaling an R32 heightmap did, for the warning. */
typedef struct float_scale {
    uint64_t low, high, nan; /* samples clamped to 0 (below 0 m), to 65535 (too high), NaN */
    double lowest, highest;  /* metres, over the finite samples */
} float_scale;

/* Metres -> stored values in place of a float image: img becomes 16-bit. */
static trn_status scale_float(trn_image *img, double max_height, float_scale *fs, trn_error *err)
{
    trn_image out;
    trn_status st = trn_image_init(&out, img->width, img->height, 1, 16, err);
    if (st) return st;
    const float *src = img->data;
    uint16_t *dst = out.data;
    size_t n = (size_t)img->width * img->height;
    memset(fs, 0, sizeof *fs);
    fs->lowest = INFINITY;
    fs->highest = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double h = src[i];
        if (isnan(h)) {
            fs->nan++;
            dst[i] = 0;
            continue;
        }
        if (h < fs->lowest) fs->lowest = h;
        if (h > fs->highest) fs->highest = h;
        double v = round(h / max_height * 65536.0);
        if (v < 0) {
            fs->low++;
            dst[i] = 0;
        } else if (v > 65535) {
            fs->high++;
            dst[i] = 65535;
        } else {
            dst[i] = (uint16_t)v;
        }
    }
    trn_image_dispose(img);
    *img = out;
    return TRN_OK;
}

/* Lowest and highest finite height of a float image ("no finite heights" when none). */
static void float_range(const trn_image *img, char *buf, size_t n)
{
    const float *src = img->data;
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < (size_t)img->width * img->height; i++)
        if (isfinite(src[i])) {
            if (src[i] < lo) lo = src[i];
            if (src[i] > hi) hi = src[i];
        }
    if (lo > hi)
        snprintf(buf, n, "no finite heights");
    else
        snprintf(buf, n, "%.6g .. %.6g m", lo, hi);
}

/* Read the heightmap as a 16-bit or 8-bit image (R32 already scaled; *fs says how, and
 * *is_float tells the caller to warn about clamping). */
static trn_status load_heightmap(const trn_beamng_import_options *opt, double float_max_height,
                                 trn_image *img, bool *is_float, float_scale *fs, trn_error *err)
{
    const char *path = opt->heightmap_path;
    uint8_t head[8];
    size_t got = 0;
    uint64_t size = 0;
    *is_float = false;
    trn_status st = open_map(path, "heightmap", head, &got, &size, err);
    if (st) return st;
    bool r32 = has_ext(path, ".r32");
    if (trn_png_sniff(head, got)) {
        if (opt->raw_big_endian)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                                 "a byte order was given, but the heightmap is a PNG, whose "
                                 "byte order is fixed: leave the byte order out");
        return trn_png_read(path, opt->limits, img, err);
    }
    if (!r32 && !has_ext(path, ".r16") && !has_ext(path, ".raw"))
        return not_png(path, "heightmap", head, got,
                       ", and not named as a headerless R16 (.r16, .raw) or R32 (.r32); export "
                       "it as a 16-bit grey PNG, R16 or R32",
                       err);
    if (r32 && opt->raw_big_endian)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "big-endian byte order is for R16 heightmaps; R32 heightmaps are "
                             "read little-endian (as Windows tools write them)");
    uint32_t side = 0;
    if ((st = raw_side(path, r32 ? "R32" : "R16", size, r32 ? 4u : 2u, &side, err))) return st;
    trn_raw_type type = r32                   ? TRN_RAW_F32_LE
                        : opt->raw_big_endian ? TRN_RAW_U16_BE
                                              : TRN_RAW_U16_LE;
    if ((st = trn_raw_read(path, type, side, side, img, err))) return st;
    if (!r32) return TRN_OK;
    if (!(float_max_height > 0)) {
        char range[80];
        float_range(img, range, sizeof range);
        trn_image_dispose(img);
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "R32 heightmap holds heights in metres (%s), and a .ter stores "
                             "steps of maxHeight / 65536: give the maxHeight to scale them by "
                             "(--max-height M, a little above the highest height; it also "
                             "becomes the TerrainBlock's maxHeight)",
                             range);
    }
    *is_float = true;
    st = scale_float(img, float_max_height, fs, err);
    if (st) trn_image_dispose(img);
    return st;
}

/* One warning when scaling an R32 heightmap clamped samples (it fits in trn_ter_warning). */
static trn_status warn_clamped(trn_ter *ter, const float_scale *fs, double max_height,
                               const char *path, trn_error *err)
{
    uint64_t clamped = fs->low + fs->high + fs->nan;
    if (!clamped) return TRN_OK;
    /* Nothing but no-data: a flat terrain would be no import of it. */
    if (fs->nan == (uint64_t)ter->size * ter->size)
        return trn_error_set(err, TRN_ERR_VALIDATION, path, -1,
                             "every one of its %llu heights is NaN (no data): there is no "
                             "terrain to import",
                             (unsigned long long)fs->nan);
    return trn_ter_priv_warn(
        ter, -1, err,
        "%llu of %llu heights clamped (%llu below 0 m, %llu at or above maxHeight "
        "%g m, %llu NaN; heights %.6g .. %.6g m): %s",
        (unsigned long long)clamped, (unsigned long long)ter->size * ter->size,
        (unsigned long long)fs->low, (unsigned long long)fs->high, max_height,
        (unsigned long long)fs->nan, fs->lowest, fs->highest,
        fs->high ? "raise --max-height above the highest" : "raise the terrain above 0 m");
}

/* The maxHeight of the TerrainBlock trn_beamng_level_write_terrain would keep (the one named
 * terrain_name, else the level's only block, else theTerrain), or 0 when there is none. */
static double kept_max_height(const trn_beamng_level_options *level)
{
    trn_terrain_block *blocks = NULL;
    size_t n = 0;
    trn_findings problems = {0};
    double mh = 0;
    if (trn_level_find_terrain_blocks(level->level_dir, &blocks, &n, &problems, NULL) == TRN_OK) {
        const char *want = level->terrain_name ? level->terrain_name : "theTerrain";
        for (size_t i = 0; i < n; i++)
            if ((!level->terrain_name && n == 1) ||
                (blocks[i].name && strcmp(blocks[i].name, want) == 0)) {
                mh = blocks[i].max_height;
                break;
            }
    }
    trn_terrain_blocks_free(blocks, n);
    trn_findings_dispose(&problems);
    return mh > 0 ? mh : 0;
}

trn_status trn_beamng_import(const trn_beamng_import_options *opt, trn_ter *ter,
                             const trn_beamng_level_options *level, trn_beamng_level_result *result,
                             trn_progress_fn progress, void *user, trn_error *err)
{
    memset(ter, 0, sizeof *ter);
    if (!opt || !opt->heightmap_path)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no heightmap given");
    trn_status st =
        check_counts(opt->opacity_count, opt->layer_map_path != NULL, opt->material_count, err);
    if (st) return st;
    trn_progress root = trn_progress_make(progress, user);
    /* Images are loaded one at a time so memory stays at one image plus the terrain. */
    uint32_t steps = 1 + opt->opacity_count + (opt->layer_map_path ? 1 : 0) +
                     (opt->holes_path ? 1 : 0) + (level ? 2 : 0);
    uint32_t step = 0;
    /* R32 scale: given, or the level's maxHeight (the one given for the level, else, when the
     * level's block is kept, its own); two different ones would scale wrongly. */
    double level_max = level && level->max_height > 0 ? level->max_height : 0;
    if (level && level->keep_block && !(level_max > 0) && level->level_dir)
        level_max = kept_max_height(level);
    double float_max = opt->float_max_height > 0 ? opt->float_max_height : level_max;
    if (opt->float_max_height > 0 && level_max > 0 && opt->float_max_height != level_max)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->heightmap_path, -1,
                             "float heights scaled by maxHeight %g but the level's TerrainBlock "
                             "gets maxHeight %g: the terrain would come out %g times as high",
                             opt->float_max_height, level_max, level_max / opt->float_max_height);
    trn_image img;
    bool is_float = false;
    float_scale fs;
    if ((st = load_heightmap(opt, float_max, &img, &is_float, &fs, err))) return st;
    st = check_heightmap_size(img.width, img.height, "heightmap", opt->heightmap_path, err);
    if (!st) st = ter_alloc(ter, img.width, opt->material_names, opt->material_count, err);
    if (!st && is_float) st = warn_clamped(ter, &fs, float_max, opt->heightmap_path, err);
    if (!st) {
        trn_progress p = trn_progress_sub(&root, 0, 1.0 / steps);
        st = fill_heights(ter, &img, opt->flip_y_axis, opt->heightmap_path, &p, err);
    }
    step++;
    trn_image_dispose(&img);
    uint16_t *best = NULL;
    if (!st && opt->opacity_count) {
        best = calloc((size_t)ter->size * ter->size, sizeof *best);
        if (!best) st = oom(err, NULL);
    }
    for (uint32_t i = 0; !st && i < opt->opacity_count; i++, step++) {
        char label[64];
        opacity_label(i, label, sizeof label);
        if ((st = load_png(opt->opacity[i].path, opt->limits, label, &img, err))) break;
        trn_progress p = trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
        st = apply_opacity(ter, best, &img, opt->opacity[i].channel, i, opt->flip_y_axis, label,
                           opt->opacity[i].path, &p, err);
        trn_image_dispose(&img);
    }
    free(best);
    if (!st && opt->layer_map_path) {
        if (!(st = load_png(opt->layer_map_path, opt->limits, "layer map", &img, err))) {
            trn_progress p =
                trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
            st = apply_layer_map(ter, &img, opt->flip_y_axis, opt->layer_map_path, &p, err);
            trn_image_dispose(&img);
        }
        step++;
    }
    if (!st && opt->holes_path) {
        if (!(st = load_png(opt->holes_path, opt->limits, "hole map", &img, err))) {
            trn_progress p =
                trn_progress_sub(&root, (double)step / steps, (double)(step + 1) / steps);
            st = apply_holes(ter, &img, opt->flip_y_axis, opt->holes_path, &p, err);
            trn_image_dispose(&img);
        }
        step++;
    }
    if (!st && level) {
        trn_progress p = trn_progress_sub(&root, (double)step / steps, 1.0);
        st = trn_beamng_level_write_terrain(ter, level, result, p.fn ? progress_bridge : NULL, &p,
                                            err);
    }
    if (st) trn_ter_dispose(ter);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Writing a terrain into a level.
 * ---------------------------------------------------------------------------------------- */

/* True when dir holds an entry equal to name ignoring case (a zipped level is read by a
 * case-insensitive file system on Windows, so theTerrain.ter and TheTerrain.ter collide). */
static bool dir_has_ci(const char *dir, const char *name)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    struct dirent *e;
    bool found = false;
    while (!found && (e = readdir(d)) != NULL)
        found = trn_lvl_ieq(e->d_name, name);
    closedir(d);
    return found;
}

static bool valid_name(const char *name)
{
    if (!name || !name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return false;
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == '\\' || (unsigned char)*p < 0x20) return false;
    return true;
}

static trn_status write_heightmap_png(const char *path, const trn_ter *ter, bool flip,
                                      int compression, trn_error *err)
{
    trn_image img;
    trn_status st = trn_image_init(&img, ter->size, ter->size, 1, 16, err);
    if (st) return st;
    uint32_t size = ter->size;
    for (uint32_t r = 0; r < size; r++)
        memcpy((uint16_t *)img.data + (size_t)r * size,
               ter->heights + (size_t)trn_beamng_terrain_row(r, size, flip) * size,
               size * sizeof(uint16_t));
    trn_png_options po;
    trn_png_options_default(&po);
    po.compression_level = compression;
    st = trn_png_write(path, &img, &po, NULL, NULL, err);
    trn_image_dispose(&img);
    return st;
}

/* Note one change made to an existing level (see trn_beamng_level_result.changes). */
#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void
add_change(trn_beamng_level_result *res, const char *fmt, ...)
{
    if (res->change_count >= TRN_BEAMNG_MAX_CHANGES) {
        res->changes_dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->changes[res->change_count], sizeof res->changes[0], fmt, ap);
    va_end(ap);
    res->change_count++;
}

/* "[-2048, -2048, 2.6]" for messages. */
static void vec3_text(const double v[3], char *buf, size_t n)
{
    snprintf(buf, n, "[%.10g, %.10g, %.10g]", v[0], v[1], v[2]);
}

/* Size of the .ter at path (as ws leaves it) from its header, 0 when it cannot be read. */
static uint32_t ter_size_on_disk(const trn_write_set *ws, const char *path)
{
    FILE *f = fopen(trn_write_set_current(ws, path), "rb");
    if (!f) return 0;
    uint8_t h[5];
    size_t got = fread(h, 1, 5, f);
    fclose(f);
    if (got != 5 || h[0] < 7) return 0;
    return (uint32_t)h[1] | (uint32_t)h[2] << 8 | (uint32_t)h[3] << 16 | (uint32_t)h[4] << 24;
}

/* Say so when the .terrain.json about to be written over describes another .ter (a copy left
 * from an earlier terrain) or cannot be read: it is replaced, never silently. */
static void note_json_replaced(const trn_write_set *ws, trn_beamng_level_result *res)
{
    const char *cur = trn_write_set_current(ws, res->terrain_json_path);
    struct stat sb;
    if (stat(cur, &sb) != 0) return;
    /* Only its datafile matters here, so a file missing other fields is still understood. */
    json_error_t je;
    json_t *old = json_load_file(cur, 0, &je);
    const json_t *df = json_is_object(old) ? json_object_get(old, "datafile") : NULL;
    if (!json_is_string(df))
        add_change(res, "replaced %s, which %s", trn_lvl_basename(res->terrain_json_path),
                   old ? "names no datafile" : "is not valid JSON");
    else if (!trn_lvl_ieq(trn_lvl_basename(json_string_value(df)),
                          trn_lvl_basename(res->terrain_file)))
        add_change(res, "replaced %s, which described %s, not %s",
                   trn_lvl_basename(res->terrain_json_path), json_string_value(df),
                   res->terrain_file);
    json_decref(old);
}

/* The files of trn_beamng_level_write_terrain, staged into ws. tb is the block to put (its
 * materialTextureSet decided here); v1 selects the material version; upgrade switches a v1
 * level to v1.5 first. */
static trn_status write_level_files(trn_write_set *ws, const trn_ter *ter,
                                    const trn_beamng_level_options *opt,
                                    trn_beamng_level_result *res, trn_terrain_block *tb,
                                    uint8_t version, bool v1, bool upgrade,
                                    const char *heightmap_game, trn_progress_fn progress,
                                    void *user, trn_error *err)
{
    const char *target = NULL;
    uint32_t old_size = ter_size_on_disk(ws, res->ter_path);
    if (old_size && old_size != ter->size)
        add_change(res, "%s: %u x %u samples -> %u x %u", trn_lvl_basename(res->ter_path), old_size,
                   old_size, ter->size, ter->size);
    /* The .ter first: the only step that may be cancelled. */
    trn_status st = trn_write_target(ws, res->ter_path, &target, err);
    if (st || (st = trn_ter_write(target, ter, version, progress, user, err))) return st;

    note_json_replaced(ws, res);
    trn_terrain_json tj;
    if ((st = trn_terrain_json_from_ter(ter, res->terrain_file, heightmap_game, &tj, err)))
        return st;
    tj.version = version;
    if (!(st = trn_write_target(ws, res->terrain_json_path, &target, err)))
        st = trn_terrain_json_write(target, &tj, err);
    trn_terrain_json_dispose(&tj);
    if (st) return st;
    if ((st = trn_write_target(ws, res->heightmap_png_path, &target, err)) ||
        (st = write_heightmap_png(target, ter, false, -1, err)))
        return st;

    /* Materials: every distinct non-empty name must resolve in the level. */
    const char **names = ter->material_count ? calloc(ter->material_count, sizeof *names) : NULL;
    if (ter->material_count && !names) return oom(err, NULL);
    uint32_t n = 0;
    for (uint32_t i = 0; i < ter->material_count; i++)
        if (ter->materials[i] && ter->materials[i][0]) names[n++] = ter->materials[i];
    if (upgrade) {
        /* Asked for v1.5 in a v1 level: its v1 materials are upgraded where they are first,
         * as migrate does, so none is left without v1.5 textures. */
        trn_migrate_options mo = {0};
        mo.fill_textures = true;
        mo.textures = opt->textures;
        mo.writes = ws;
        uint32_t upgraded = 0;
        trn_error me;
        st = trn_beamng_migrate_materials(opt->level_dir, &mo, &upgraded, &me);
        if (st == TRN_ERR_NOT_FOUND)
            st = TRN_OK; /* nothing of v1 to upgrade */
        else if (st) {
            if (err) *err = me;
            free(names);
            return st;
        } else if (upgraded)
            add_change(res, "upgraded %u v1 material(s) to v1.5 where they are", upgraded);
    }
    trn_lvl_merge_result mr;
    st = trn_lvl_merge_materials(ws, opt->level_dir, res->level_name, names, n,
                                 (double)ter->size * tb->square_size, &opt->textures, opt->surfaces,
                                 opt->surface_count, v1, &mr, err);
    free(names);
    if (st) return st;
    trn_lvl_copy(res->materials_path, sizeof res->materials_path, mr.materials_path);
    res->materials_added = mr.added;
    res->textures_written = mr.textures_written;
    res->materials_v1 = v1;
    if (!v1 && !tb->material_texture_set) {
        if (!(tb->material_texture_set = trn_lvl_strdup(mr.texture_set))) return oom(err, NULL);
        if (res->block_replaced)
            add_change(res,
                       "materialTextureSet set to \"%s\": the terrain now uses v1.5 "
                       "materials",
                       mr.texture_set);
    } else if (v1 && tb->material_texture_set) {
        free(tb->material_texture_set);
        tb->material_texture_set = NULL;
        if (res->block_replaced)
            add_change(res, "materialTextureSet removed: the terrain now uses v1 materials");
    }
    trn_lvl_copy(res->texture_set, sizeof res->texture_set,
                 tb->material_texture_set ? tb->material_texture_set : "");

    bool replaced = false;
    st = trn_lvl_level_put_block(ws, opt->level_dir, res->level_name, tb, res->items_path,
                                 sizeof res->items_path, &replaced, err);
    res->block_replaced = replaced;
    if (!st && opt->scaffold.enabled) st = trn_lvl_scaffold(ws, ter, tb, opt, res, err);
    return st;
}

/* The block of name among blocks (exact name, as put matches it), or NULL. */
static const trn_terrain_block *find_block(const trn_terrain_block *blocks, size_t n,
                                           const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (blocks[i].name && strcmp(blocks[i].name, name) == 0) return &blocks[i];
    return NULL;
}

/* The part of a terrainFile game path inside this level ("terrain2.ter" of
 * "/levels/NAME/terrain2.ter"), or NULL when it leads elsewhere, out of the level, or is not a
 * .ter. */
static const char *level_relative(const char *game_path, const char *level_name)
{
    if (!game_path) return NULL;
    const char *p = game_path;
    if (*p == '/') p++;
    size_t ln = strlen(level_name);
    if (strncasecmp(p, "levels/", 7) != 0 || strncasecmp(p + 7, level_name, ln) != 0 ||
        p[7 + ln] != '/')
        return NULL;
    const char *rel = p + 8 + ln;
    size_t n = strlen(rel);
    if (n < 5 || strcasecmp(rel + n - 4, ".ter") != 0 || strchr(rel, '\\')) return NULL;
    for (const char *q = rel; *q; q++)
        if ((q == rel || q[-1] == '/') && q[0] == '.' && q[1] == '.' &&
            (q[2] == '/' || q[2] == '\0'))
            return NULL;
    return rel;
}

trn_status trn_beamng_level_write_terrain(const trn_ter *ter, const trn_beamng_level_options *opt,
                                          trn_beamng_level_result *result, trn_progress_fn progress,
                                          void *user, trn_error *err)
{
    trn_beamng_level_result local;
    trn_beamng_level_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    if (!ter || !opt || !opt->level_dir || !opt->level_dir[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no level folder given");
    if (ter->size == 0 || !ter->heights || !ter->layers)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "the terrain is empty");
    const char *base = opt->terrain_name ? opt->terrain_name : "theTerrain";
    if (!valid_name(base))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "terrain name \"%s\" cannot be a file name", base);
    uint8_t version = opt->ter_version ? opt->ter_version : (uint8_t)TRN_TER_VERSION_CURRENT;
    if (version < 7 || version > TRN_TER_VERSION_CURRENT)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             ".ter version %u cannot be written: choose 7, 8 or 9", version);
    double max_height = opt->max_height > 0 ? opt->max_height : 2048.0;
    double square_size = opt->square_size > 0 ? opt->square_size : 1.0;
    /* Options that cannot be used are refused before the level folder is touched. */
    if (!isfinite(opt->position_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the TerrainBlock's position z must be a finite number");
    if (opt->scaffold.enabled && opt->scaffold.has_sea_level && !isfinite(opt->scaffold.sea_level))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the sea level must be a finite number");
    for (uint32_t i = 0; i < opt->surface_count; i++) {
        const char *material = opt->surfaces ? opt->surfaces[i].material : NULL;
        const char *model = opt->surfaces ? opt->surfaces[i].groundmodel : NULL;
        if (!material || !trn_beamng_groundmodel_find(model))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "ground model \"%s\" of material \"%s\" is not one BeamNG "
                                 "ships; use one of %s",
                                 model ? model : "", material ? material : "",
                                 trn_beamng_groundmodel_names());
    }
    struct stat sb;
    if (stat(opt->level_dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "is a file, not a level folder: give the levels/NAME folder to "
                             "write into");
    /* "G/levels/.." or "G/levels/x/.." name the game's folders, not a level: refused as
     * written, before anything is made. */
    {
        size_t n = strlen(opt->level_dir);
        while (n > 1 && opt->level_dir[n - 1] == '/')
            n--;
        size_t start = n;
        while (start > 0 && opt->level_dir[start - 1] != '/')
            start--;
        if ((n - start == 1 && opt->level_dir[start] == '.') ||
            (n - start == 2 && opt->level_dir[start] == '.' && opt->level_dir[start + 1] == '.'))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                                 "ends in '%.*s', which names no level: give the level's own "
                                 "folder, levels/NAME",
                                 (int)(n - start), opt->level_dir + start);
    }
    trn_status st = trn_mkdir_p(opt->level_dir, err);
    if (st) return st;
    trn_lvl_copy(res->level_dir, sizeof res->level_dir, opt->level_dir);
    if (!trn_lvl_level_name(opt->level_dir, res->level_name, sizeof res->level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "cannot tell the level's name from its folder");
    /* "DIR/levels/" is the folder of all levels, not a level called "levels" (unless it sits in
     * a levels folder itself). */
    char parent[PATH_MAX + 4];
    snprintf(parent, sizeof parent, "%s/..", opt->level_dir);
    char parent_name[256] = "";
    if (trn_lvl_ieq(res->level_name, "levels") &&
        !(trn_lvl_level_name(parent, parent_name, sizeof parent_name) &&
          trn_lvl_ieq(parent_name, "levels")))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "is the levels folder itself: add the level's name "
                             "(levels/NAME)");
    /* What the level has: its TerrainBlocks (lines that cannot be read are left to
     * validate; put refuses a broken line that may be the block). */
    trn_terrain_block *blocks = NULL;
    size_t block_count = 0;
    trn_findings problems = {0};
    st = trn_level_find_terrain_blocks(opt->level_dir, &blocks, &block_count, &problems, err);
    trn_findings_dispose(&problems);
    if (st) return st;
    const trn_terrain_block *old = NULL;
    if (opt->keep_block && !opt->terrain_name && block_count) {
        /* The level's only TerrainBlock, whatever its name; among several, theTerrain. */
        old = block_count == 1 ? &blocks[0] : find_block(blocks, block_count, base);
        if (!old) {
            char list[600] = "";
            for (size_t i = 0; i < block_count && strlen(list) < 500; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? ", " : "",
                         blocks[i].name ? blocks[i].name : "");
            trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                          "the level has %zu TerrainBlocks (%s) and none is called theTerrain: "
                          "name the one to write (--name)",
                          block_count, list);
            trn_terrain_blocks_free(blocks, block_count);
            return TRN_ERR_INVALID_ARGUMENT;
        }
        base = old->name;
    } else
        old = find_block(blocks, block_count, base);
    const trn_terrain_block *keep = opt->keep_block ? old : NULL;

    /* Pick the .ter: the one a kept block names, the given name, or the first free name_N when
     * asked for a unique one. */
    char name[256], file[300], stem[1024];
    trn_lvl_copy(name, sizeof name, base);
    const char *rel = keep ? level_relative(keep->terrain_file, res->level_name) : NULL;
    if (rel) {
        trn_lvl_copy(stem, sizeof stem, rel);
        stem[strlen(stem) - 4] = '\0';
        trn_lvl_copy(file, sizeof file, rel);
    } else {
        snprintf(file, sizeof file, "%s.ter", name);
        for (unsigned i = 1; opt->unique_ter_name && dir_has_ci(opt->level_dir, file); i++) {
            if (i > 9999) {
                trn_terrain_blocks_free(blocks, block_count);
                return trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1,
                                     "no free .ter name for %s", base);
            }
            snprintf(name, sizeof name, "%.200s_%u", base, i);
            snprintf(file, sizeof file, "%s.ter", name);
        }
        trn_lvl_copy(stem, sizeof stem, name);
    }
    trn_lvl_copy(res->terrain_name, sizeof res->terrain_name, name);
    char json_file[1100], png_file[1100], heightmap_game[1400];
    snprintf(json_file, sizeof json_file, "%s.terrain.json", stem);
    snprintf(png_file, sizeof png_file, "%s.terrainheightmap.png", stem);
    if (rel)
        trn_lvl_copy(res->terrain_file, sizeof res->terrain_file, keep->terrain_file);
    else
        snprintf(res->terrain_file, sizeof res->terrain_file, "/levels/%s/%s", res->level_name,
                 file);
    snprintf(heightmap_game, sizeof heightmap_game, "/levels/%s/%s", res->level_name, png_file);
    if (!trn_lvl_join(res->ter_path, sizeof res->ter_path, opt->level_dir, file) ||
        !trn_lvl_join(res->terrain_json_path, sizeof res->terrain_json_path, opt->level_dir,
                      json_file) ||
        !trn_lvl_join(res->heightmap_png_path, sizeof res->heightmap_png_path, opt->level_dir,
                      png_file)) {
        trn_terrain_blocks_free(blocks, block_count);
        return trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    }

    /* The block to put: a kept one's settings, else a new one's. */
    trn_terrain_block tb;
    if ((st = trn_terrain_block_init(&tb, name, res->terrain_file,
                                     old ? old->material_texture_set : NULL, ter->size, err))) {
        trn_terrain_blocks_free(blocks, block_count);
        return st;
    }
    if (keep) {
        char was[100], now[100];
        if (!rel)
            add_change(res, "terrainFile \"%s\" -> \"%s\" (it did not name a .ter in this level)",
                       keep->terrain_file ? keep->terrain_file : "", res->terrain_file);
        tb.max_height = opt->max_height > 0    ? opt->max_height
                        : keep->max_height > 0 ? keep->max_height
                                               : max_height;
        tb.square_size = opt->square_size > 0    ? opt->square_size
                         : keep->square_size > 0 ? keep->square_size
                                                 : square_size;
        if (tb.max_height != keep->max_height)
            add_change(res, "maxHeight %g -> %g", keep->max_height, tb.max_height);
        if (tb.square_size != keep->square_size)
            add_change(res, "squareSize %g -> %g", keep->square_size, tb.square_size);
        tb.screen_error = keep->screen_error;
        tb.cast_shadows = keep->cast_shadows;
        memcpy(tb.rotation_matrix, keep->rotation_matrix, sizeof tb.rotation_matrix);
        memcpy(tb.position, keep->position, sizeof tb.position);
        if (opt->recenter) {
            trn_terrain_block_center(&tb, ter->size);
            tb.position[2] = keep->position[2];
        }
        if (memcmp(tb.position, keep->position, sizeof tb.position) != 0) {
            vec3_text(keep->position, was, sizeof was);
            vec3_text(tb.position, now, sizeof now);
            add_change(res, "position %s -> %s", was, now);
        }
    } else {
        tb.square_size = square_size;
        tb.max_height = max_height;
        trn_terrain_block_center(&tb, ter->size);
        tb.position[2] = opt->position_z;
    }
    /* The material version: asked for, or the level's own. */
    /* The level is v1 when it has no texture set and either its block has none or, for a new
     * block, all its materials are v1 ones: what the World Editor leaves in a level it never
     * upgraded. A level with a texture set is v1.5, whatever one block says. */
    bool v1, upgrade = false;
    uint32_t n_v1, n_v15, n_sets;
    trn_lvl_level_material_kinds(opt->level_dir, &n_v1, &n_v15, &n_sets);
    if (opt->material_version == TRN_BEAMNG_MATERIALS_V1)
        v1 = true;
    else if (opt->material_version == TRN_BEAMNG_MATERIALS_V15)
        v1 = false, upgrade = true;
    else if (n_sets)
        v1 = false;
    else if (old)
        v1 = !old->material_texture_set || !old->material_texture_set[0];
    else
        v1 = n_v1 > 0 && n_v15 == 0;
    trn_terrain_blocks_free(blocks, block_count);

    /* Refuse before writing anything when the materials file we must edit is unreadable, so a
     * bad main.materials.json does not leave a half-updated level behind. */
    char mats[PATH_MAX];
    if (!trn_lvl_join(mats, sizeof mats, opt->level_dir, "art/terrains/main.materials.json")) {
        trn_terrain_block_dispose(&tb);
        return trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    }
    trn_material_file existing;
    st = trn_material_file_read(trn_write_set_current(opt->writes, mats), &existing, err);
    if (st == TRN_ERR_NOT_FOUND)
        trn_error_clear(err), st = TRN_OK;
    else if (!st)
        trn_material_file_dispose(&existing);
    /* Likewise when an items file has a broken line that may be this TerrainBlock; this also
     * finds where the block lives (or will). */
    bool found = false;
    if (!st)
        st = trn_lvl_block_target(opt->writes, opt->level_dir, name, res->items_path,
                                  sizeof res->items_path, &found, err);
    res->block_replaced = found;

    trn_write_set *ws = NULL, *own = NULL;
    if (!st && !(st = trn_write_own_begin(opt->writes, &ws, &own, err))) {
        st = write_level_files(ws, ter, opt, res, &tb, version, v1, upgrade, heightmap_game,
                               progress, user, err);
        st = trn_write_own_finish(own, st, err);
    }
    trn_terrain_block_dispose(&tb);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Create.
 * ---------------------------------------------------------------------------------------- */

trn_status trn_beamng_create(const trn_beamng_create_options *opt, trn_beamng_level_result *result,
                             trn_progress_fn progress, void *user, trn_error *err)
{
    if (!opt || !valid_name(opt->level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "level name \"%s\" cannot be a folder name",
                             opt && opt->level_name ? opt->level_name : "");
    uint32_t size;
    trn_status st =
        trn_beamng_round_resolution(opt->resolution ? opt->resolution : 1024, &size, err);
    if (st) return st;
    double max_height = opt->max_height > 0 ? opt->max_height : 2048.0;
    uint16_t stored = TRN_BEAMNG_CREATE_DEFAULT_STORED;
    if (opt->initial_height > 0) {
        if (opt->initial_height > max_height * 65535.0 / 65536.0)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "initial height %g m is above what maxHeight %g m can store; "
                                 "raise --max-height",
                                 opt->initial_height, max_height);
        stored = (uint16_t)lround(opt->initial_height / max_height * 65536.0);
    }
    const char *material = opt->material ? opt->material : "grass";
    if (!material[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the initial material needs a name");
    char level_dir[PATH_MAX], levels[PATH_MAX];
    if (!trn_lvl_join(levels, sizeof levels, opt->root ? opt->root : ".", "levels") ||
        !trn_lvl_join(level_dir, sizeof level_dir, levels, opt->level_name))
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1, "path too long");
    trn_ter ter;
    const char *names[1] = {material};
    if ((st = ter_alloc(&ter, size, names, 1, err))) return st;
    size_t samples = (size_t)size * size;
    for (size_t i = 0; i < samples; i++)
        ter.heights[i] = stored;
    trn_beamng_level_options lo = {0};
    lo.level_dir = level_dir;
    lo.terrain_name = opt->terrain_name;
    lo.unique_ter_name = true;
    lo.max_height = max_height;
    lo.square_size = opt->square_size;
    lo.textures = opt->textures;
    lo.scaffold = opt->scaffold;
    lo.writes = opt->writes;
    st = trn_beamng_level_write_terrain(&ter, &lo, result, progress, user, err);
    trn_ter_dispose(&ter);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Export.
 * ---------------------------------------------------------------------------------------- */

void trn_beamng_export_options_default(trn_beamng_export_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->heightmap = opt->layer_map = opt->holes = opt->opacity = opt->r16 = true;
    opt->compression_level = -1;
}

void trn_beamng_export_result_dispose(trn_beamng_export_result *result)
{
    if (!result) return;
    trn_lvl_free_paths(result->paths, result->path_count);
    memset(result, 0, sizeof *result);
}

static trn_status push_path(trn_beamng_export_result *res, const char *path, trn_error *err)
{
    char **np = realloc(res->paths, (res->path_count + 1) * sizeof *np);
    if (!np) return oom(err, path);
    res->paths = np;
    if (!(np[res->path_count] = trn_lvl_strdup(path))) return oom(err, path);
    res->path_count++;
    return TRN_OK;
}

/* An 8-bit grey image of the terrain's layers through fn (image orientation per flip). */
typedef uint8_t (*layer_fn)(uint8_t layer, uint32_t arg);

static uint8_t layer_identity(uint8_t layer, uint32_t arg)
{
    (void)arg;
    return layer;
}

static uint8_t layer_hole(uint8_t layer, uint32_t arg)
{
    (void)arg;
    return layer == TRN_LABEL_NONE ? 255 : 0;
}

static uint8_t layer_is(uint8_t layer, uint32_t arg)
{
    return layer == arg ? 255 : 0;
}

static void fill_layer_image(trn_image *img, const trn_ter *ter, bool flip, layer_fn fn,
                             uint32_t arg)
{
    uint32_t size = ter->size;
    uint8_t *dst = img->data;
    for (uint32_t r = 0; r < size; r++) {
        const uint8_t *src = ter->layers + (size_t)trn_beamng_terrain_row(r, size, flip) * size;
        for (uint32_t c = 0; c < size; c++)
            dst[(size_t)r * size + c] = fn(src[c], arg);
    }
}

trn_status trn_beamng_export(const trn_ter *ter, const char *out_dir, const char *base_name,
                             const trn_beamng_export_options *opt, trn_beamng_export_result *result,
                             trn_progress_fn progress, void *user, trn_error *err)
{
    trn_beamng_export_result local;
    trn_beamng_export_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    trn_beamng_export_options defaults;
    trn_beamng_export_options_default(&defaults);
    if (!opt) opt = &defaults;
    if (!ter || !ter->size || !ter->heights || !ter->layers)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "the terrain is empty");
    const char *base = base_name ? base_name : "terrain";
    if (!valid_name(base))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "export name \"%s\" cannot be a file name", base);
    const char *dir = out_dir ? out_dir : ".";
    struct stat sb;
    if (stat(dir, &sb) == 0 && !S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1,
                             "is a file, expected a folder for the images");
    trn_status st = trn_mkdir_p(dir, err);
    if (st) return st;
    trn_write_set *ws, *own;
    if ((st = trn_write_own_begin(opt->writes, &ws, &own, err))) return st;
    const char *target = NULL;
    trn_progress root = trn_progress_make(progress, user);
    uint32_t total = (opt->heightmap ? 1u : 0u) + (opt->layer_map ? 1u : 0u) +
                     (opt->holes ? 1u : 0u) + (opt->r16 ? 1u : 0u) +
                     (opt->opacity ? ter->material_count : 0u);
    uint32_t done = 0;
    char file[512], path[PATH_MAX];
    trn_png_options po;
    trn_png_options_default(&po);
    po.compression_level = opt->compression_level;
    trn_image img8 = {0};
#define STEP(stage)                                                                                \
    do {                                                                                           \
        if (trn_progress_report(&root, total ? (double)done / total : 1.0, stage)) {               \
            st = cancelled(err);                                                                   \
            goto done;                                                                             \
        }                                                                                          \
        done++;                                                                                    \
    } while (0)
#define PATH_OF(...)                                                                               \
    do {                                                                                           \
        snprintf(file, sizeof file, __VA_ARGS__);                                                  \
        if (!trn_lvl_join(path, sizeof path, dir, file)) {                                         \
            st = trn_error_set(err, TRN_ERR_LIMIT, dir, -1, "path too long");                      \
            goto done;                                                                             \
        }                                                                                          \
        if ((st = trn_write_target(ws, path, &target, err))) goto done;                            \
    } while (0)
    if (opt->heightmap) {
        STEP("heightmap");
        PATH_OF("%s_heightmap.png", base);
        if ((st =
                 write_heightmap_png(target, ter, opt->flip_y_axis, opt->compression_level, err)) ||
            (st = push_path(res, path, err)))
            goto done;
    }
    if (opt->layer_map || opt->holes || (opt->opacity && ter->material_count)) {
        if ((st = trn_image_init(&img8, ter->size, ter->size, 1, 8, err))) goto done;
    }
    if (opt->layer_map) {
        STEP("layer map");
        PATH_OF("%s_layers.png", base);
        fill_layer_image(&img8, ter, opt->flip_y_axis, layer_identity, 0);
        if ((st = trn_png_write(target, &img8, &po, NULL, NULL, err)) ||
            (st = push_path(res, path, err)))
            goto done;
    }
    if (opt->holes) {
        STEP("holes");
        PATH_OF("%s_holes.png", base);
        fill_layer_image(&img8, ter, opt->flip_y_axis, layer_hole, 0);
        if ((st = trn_png_write(target, &img8, &po, NULL, NULL, err)) ||
            (st = push_path(res, path, err)))
            goto done;
    }
    if (opt->opacity) {
        res->opacity_first = res->path_count;
        for (uint32_t i = 0; i < ter->material_count; i++) {
            STEP("opacity");
            char safe[96];
            trn_lvl_safe_name(ter->materials[i] ? ter->materials[i] : "", safe, sizeof safe);
            PATH_OF("%s_opacity_%u_%s.png", base, i, safe);
            fill_layer_image(&img8, ter, opt->flip_y_axis, layer_is, i);
            if ((st = trn_png_write(target, &img8, &po, NULL, NULL, err)) ||
                (st = push_path(res, path, err)))
                goto done;
            res->opacity_count++;
        }
    }
    if (opt->r16) {
        STEP("r16");
        PATH_OF("%s.r16", base);
        trn_image img16;
        if ((st = trn_image_init(&img16, ter->size, ter->size, 1, 16, err))) goto done;
        uint32_t size = ter->size;
        for (uint32_t r = 0; r < size; r++)
            memcpy((uint16_t *)img16.data + (size_t)r * size,
                   ter->heights + (size_t)trn_beamng_terrain_row(r, size, opt->flip_y_axis) * size,
                   size * sizeof(uint16_t));
        st = trn_raw_write(target, &img16, TRN_RAW_U16_LE, err);
        trn_image_dispose(&img16);
        if (st || (st = push_path(res, path, err))) goto done;
    }
    if (trn_progress_report(&root, 1.0, "done")) st = cancelled(err);
#undef STEP
#undef PATH_OF
done:
    trn_image_dispose(&img8);
    st = trn_write_own_finish(own, st, err);
    if (st || res == &local) trn_beamng_export_result_dispose(res);
    return st;
}
