/* Terragen terrain files (.ter, "TERRAGENTERRAIN "), which share BeamNG's extension. */
#ifndef TERRANE_TERRAGEN_H
#define TERRANE_TERRAGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file layout (Planetside's "Terragen Terrain file specification", checked against GDAL's
 * and Planetside's own tgter reader and writer), all little-endian:
 *   "TERRAGENTERRAIN "                       16-byte magic
 *   then chunks, each a 4-byte marker and its data, with no length field:
 *   "SIZE" u16 min(xpts, ypts) - 1, u16 pad  required, before ALTW
 *   "XPTS" u16 xpts, u16 pad                 optional (square: SIZE + 1), before ALTW
 *   "YPTS" u16 ypts, u16 pad                 optional (square: SIZE + 1), before ALTW
 *   "SCAL" f32 x, y, z metres per unit       optional, default 30, 30, 30
 *   "CRAD" f32 planet radius in km           optional, default 6370
 *   "CRVM" u32 curve mode (0 flat)           optional, default 0
 *   "ALTW" i16 HeightScale, i16 BaseHeight, i16 elevations[xpts * ypts], row 0 south, x
 *          fastest, then 2 zero bytes when xpts * ypts is odd (chunks are 4-byte aligned)
 *   "EOF "                                   end marker
 * Elevation metres = SCAL.z * (BaseHeight + elevation * HeightScale / 65536).
 *
 * What the reader accepts beyond the letter of the spec, and why:
 *   - no "EOF " when the file ends right after the ALTW data: GDAL's Terragen writer writes
 *     neither the padding nor the marker; has_eof says which it was.
 *   - bytes after "EOF ": kept out of the data and counted in trailing_bytes so `info` can
 *     report them; old Terragen stops reading at the marker too.
 *   - SCAL, CRAD, CRVM after ALTW (the spec only orders SIZE/XPTS/YPTS before ALTW).
 * What it refuses (TRN_ERR_FORMAT unless said otherwise; the error names the chunk and its
 * byte offset): a wrong magic, an unknown chunk marker, a repeated chunk, SIZE/XPTS/YPTS
 * after ALTW, ALTW before SIZE, fewer than 2 points on a side, SIZE disagreeing with
 * min(xpts, ypts) - 1, non-finite or non-positive SCAL, non-finite CRAD, no ALTW at all
 * (TRN_ERR_TRUNCATED), any chunk cut short (TRN_ERR_TRUNCATED at the offset of the read that
 * ran out), sizes over the limits (TRN_ERR_LIMIT). */

#define TRN_TERRAGEN_MAGIC "TERRAGENTERRAIN "
#define TRN_TERRAGEN_MAGIC_SIZE 16u

/* The default max_samples: what 8 GiB of working memory holds at 6 bytes a sample (the 2-byte
 * stored elevation and the field's 4-byte float): 8 GiB / 6 = 1,431,655,765. */
#define TRN_TERRAGEN_DEFAULT_MAX_SAMPLES (((uint64_t)8 << 30) / 6u)

/* Bounds for reading untrusted files. */
typedef struct trn_terragen_limits {
    uint32_t max_points; /* points per side; default 65535 (the u16 fields' own maximum) */
    /* xpts * ypts; default TRN_TERRAGEN_DEFAULT_MAX_SAMPLES. More is TRN_ERR_LIMIT at the ALTW
     * chunk, before the elevations are allocated. */
    uint64_t max_samples;
} trn_terragen_limits;

/* Fill limits with the defaults above. */
void trn_terragen_limits_default(trn_terragen_limits *limits);

/* True when data (the start of a file; 16 bytes are enough) begins with the magic. */
bool trn_terragen_sniff(const uint8_t *data, size_t size);

/* A Terragen file in memory, exactly as stored. */
typedef struct trn_terragen {
    uint32_t xpts, ypts;     /* points per side (2..65535) */
    float scale[3];          /* SCAL, metres per unit (x, y, z); default 30, 30, 30 */
    float planet_radius;     /* CRAD km, default 6370 */
    uint32_t curve_mode;     /* CRVM, default 0 (flat) */
    int16_t height_scale;    /* ALTW */
    int16_t base_height;     /* ALTW */
    int16_t *elevations;     /* xpts * ypts, row 0 south, x fastest, as stored (malloc'd) */
    bool has_eof;            /* the file had its "EOF " marker */
    uint64_t trailing_bytes; /* bytes after "EOF " (0 normally) */
} trn_terragen;

/* Parse a Terragen file from memory. path is used only in error messages (may be NULL).
 * Uses the default limits. On failure *tg is left empty (all zero). */
trn_status trn_terragen_parse(const uint8_t *data, size_t size, const char *path, trn_terragen *tg,
                              trn_error *err);
/* The same with explicit limits (NULL = defaults). */
trn_status trn_terragen_parse_limited(const uint8_t *data, size_t size, const char *path,
                                      const trn_terragen_limits *limits, trn_terragen *tg,
                                      trn_error *err);
/* Read a file from disk (mapped): the same result and errors as parsing its bytes. */
trn_status trn_terragen_read(const char *path, const trn_terragen_limits *limits, trn_terragen *tg,
                             trn_error *err);

/* Free the elevations and zero *tg. NULL is a no-op. */
void trn_terragen_dispose(trn_terragen *tg);

/* Field sample (i, j) = elevation x = i, y = j (Terragen's y runs north, row 0 south, as the
 * field's z does); cells = xpts - 1 by ypts - 1; size = cells * SCAL.x by cells * SCAL.y;
 * heights in metres: scale[2] * (base_height + elevation * height_scale / 65536).
 * When height_scale > 0, field->quantum = SCAL.z * height_scale / 65536 and
 * field->quantum_base = the metres of elevation -32768, so (stored + 32768) is the exact
 * unsigned 16-bit value that a 16-bit image writer recovers. On failure *field is untouched. */
trn_status trn_terragen_to_field(const trn_terragen *tg, trn_field *field, trn_error *err);

/* Build a Terragen file from a field. SCAL = (size_x / cells_x, size_z / cells_z,
 * size_x / cells_x). When the field's quantum matches that SCAL.z with whole HeightScale and
 * BaseHeight (a field from trn_terragen_to_field with uniform SCAL), the stored elevations are
 * recovered exactly; otherwise BaseHeight is the middle of the range and HeightScale the
 * smallest that fits it in int16 (NaN heights become BaseHeight). Needs 2..65535 points per
 * side. On failure *tg is left empty. */
trn_status trn_terragen_from_field(const trn_field *field, trn_terragen *tg, trn_error *err);

/* Serialise with every chunk (SIZE, XPTS, YPTS, SCAL, CRAD, CRVM, ALTW with its padding,
 * "EOF "), in the order Terragen writes them. *out is malloc'd; caller frees. */
trn_status trn_terragen_encode(const trn_terragen *tg, uint8_t **out, size_t *out_size,
                               trn_error *err);
/* Encode and write atomically to path. */
trn_status trn_terragen_write(const char *path, const trn_terragen *tg, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
