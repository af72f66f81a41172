/* Reading a heightfield file of any supported format from memory into a field (the graph's
 * Heightfield Input node and any program that takes real data): GeoTIFF DEMs, 8/16-bit PNG,
 * R16 / Unity RAW, R32 and BeamNG/Torque .ter, each through its own bounded reader. */
#ifndef TRN_HEIGHTFIELD_H
#define TRN_HEIGHTFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/geotiff.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trn_heightfield_format {
    TRN_HEIGHTFIELD_AUTO = 0,    /* from the content (PNG, TIFF, .ter), else the name's ending */
    TRN_HEIGHTFIELD_GEOTIFF = 1, /* band 1 in the file's units, NoData filled */
    TRN_HEIGHTFIELD_PNG = 2,     /* 8/16-bit; the first channel (grey or R) */
    TRN_HEIGHTFIELD_R16 = 3,     /* headerless 16-bit little-endian (Unity RAW, Windows order) */
    TRN_HEIGHTFIELD_R16_BE = 4,  /* headerless 16-bit big-endian (Unity RAW, Mac order) */
    TRN_HEIGHTFIELD_R32 = 5,     /* headerless float32 little-endian metres, NaN filled */
    TRN_HEIGHTFIELD_TER = 6,     /* BeamNG / Torque .ter, versions 1-9 */
} trn_heightfield_format;

/* "auto", "geotiff", "png", "r16", "r16be", "r32", "ter"; "unknown" for other values. */
const char *trn_heightfield_format_name(trn_heightfield_format format);
/* The format of a name above; false when it is none of them. */
bool trn_heightfield_format_parse(const char *name, trn_heightfield_format *format);

/* The format of a file from its bytes, then (for headerless rasters, which have no magic) the
 * ending of name (.r16 and .raw: R16, .r32: R32, .ter: TER). TRN_HEIGHTFIELD_AUTO when
 * neither tells. */
trn_heightfield_format trn_heightfield_detect(const char *name, const uint8_t *data, size_t size);

typedef struct trn_heightfield_read_options {
    trn_heightfield_format format; /* AUTO = trn_heightfield_detect */
    /* Headerless rasters: pixels per row and rows; 0 and 0 = a square from the length, one of
     * them 0 = inferred from the other. Ignored by formats with a header. */
    uint32_t raw_width, raw_height;
    /* Integer formats (.ter, 16-bit PNG and R16; 8-bit PNG widened v * 257 first): metres of
     * the full 16-bit range, BeamNG's maxHeight: stored v is v * max_height / 65536 metres.
     * 0 = 2048. GeoTIFF and R32 hold metres (or the GeoTIFF's vertical unit, converted). */
    double max_height;
    /* Samples a file may hold (every reader's own limits apply too); 0 = each reader's
     * default (2^30 for GeoTIFF and .ter, 715,827,882 for images). */
    uint64_t max_samples;
} trn_heightfield_read_options;

/* What a file says about itself, from its header alone (no pixels decoded). */
typedef struct trn_heightfield_info {
    trn_heightfield_format format; /* never AUTO */
    uint32_t width, height;        /* pixels (samples) per row and rows */
    uint8_t bit_depth;             /* 8, 16 or 32 (float) */
    bool has_georef;               /* a GeoTIFF with a raster-to-CRS transform */
    trn_geotiff_georef georef;     /* valid when has_georef */
} trn_heightfield_info;

/* A decoded file: field sample (i, j) is pixel column i of row height-1-j (field row 0 is the
 * south edge; image row 0 is north), heights in metres, NoData and non-finite samples filled
 * by trn_field_fill_nan's harmonic fill. The field's size is the file's ground size (GeoTIFF:
 * metres from its georeferencing; the others: 1 unit a pixel). */
typedef struct trn_heightfield_file {
    trn_heightfield_info info;
    trn_field field;
    uint64_t filled; /* NoData / NaN samples filled */
    double min, max; /* metres over the field after the fill */
} trn_heightfield_file;

/* Describe data (a whole file of size bytes) without decoding its pixels: the header checks of
 * the format's reader (GeoTIFF's IFD scan and GeoKeys, PNG's IHDR, the .ter layout walk, the
 * length of a headerless raster against its size). name is used in messages and, with AUTO,
 * for the ending. Errors: TRN_ERR_FORMAT (no format recognised, naming the first bytes; a bad
 * header), TRN_ERR_TRUNCATED, TRN_ERR_TRAILING_DATA, TRN_ERR_LIMIT, TRN_ERR_UNSUPPORTED, each
 * with the byte offset where the reader says. options NULL = defaults. */
trn_status trn_heightfield_probe(const uint8_t *data, size_t size, const char *name,
                                 const trn_heightfield_read_options *options,
                                 trn_heightfield_info *info, trn_error *err);

/* Decode data into out (see trn_heightfield_file). Needs at least 2 x 2 pixels. A file whose
 * every sample is NoData or non-finite is TRN_ERR_FORMAT. progress (may be NULL) is called by
 * the GeoTIFF decoder and the fill; TRN_CANCEL gives TRN_ERR_CANCELLED. On failure *out is
 * zeroed. */
trn_status trn_heightfield_decode(const uint8_t *data, size_t size, const char *name,
                                  const trn_heightfield_read_options *options,
                                  trn_heightfield_file *out, trn_progress_fn progress, void *user,
                                  trn_error *err);
void trn_heightfield_file_dispose(trn_heightfield_file *file);

/* The file a recipe's relative path names: base_dir (NULL = the current directory) joined with
 * path into resolved (resolved_size bytes). The path must be relative and lead nowhere outside
 * base_dir: an empty path, an absolute one, a ".." part, or one whose target (after symbolic
 * links) lies outside base_dir is TRN_ERR_INVALID_ARGUMENT with a message saying which. A
 * missing file is TRN_ERR_NOT_FOUND (resolved is then still set, for the message). */
trn_status trn_heightfield_path_resolve(const char *base_dir, const char *path, char *resolved,
                                        size_t resolved_size, trn_error *err);
/* The rules a path obeys whatever the folder (not empty, not absolute, no ".." part), without
 * touching the file system: what can be checked of a graph with no recipe around it. */
trn_status trn_heightfield_path_check(const char *path, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
