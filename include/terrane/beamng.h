/* BeamNG / Torque3D terrain: the .ter file, level metadata, import, create and validate. */
#ifndef TERRANE_BEAMNG_H
#define TERRANE_BEAMNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TRN_TER_VERSION_CURRENT 9u
#define TRN_TER_MAX_MATERIALS 254u /* the engine ignores materials past this */
#define TRN_TER_LEGACY_SIZE 256u

/* The default max_samples: what 8 GiB of working memory holds at 8 bytes a sample (2 bytes of
 * stored height, 1 of layer, and on the way to a field its 4-byte float and 1-byte label):
 * 8 GiB / 8 = 2^30. */
#define TRN_TER_DEFAULT_MAX_SAMPLES (((uint64_t)8 << 30) / 8u)

/* Bounds for reading untrusted .ter files. */
typedef struct trn_ter_limits {
    uint32_t max_size;       /* samples per side; default 16384 */
    uint32_t max_materials;  /* default 65536 (more than 254 is read with a warning) */
    uint64_t max_file_bytes; /* default 8 GiB */
    /* size * size (256 * 256 for versions 1-6); default TRN_TER_DEFAULT_MAX_SAMPLES. More is
     * TRN_ERR_LIMIT at the size field (offset 1; offset 0 for a legacy file) before anything
     * is allocated. */
    uint64_t max_samples;
} trn_ter_limits;

/* Fill limits with safe defaults. */
void trn_ter_limits_default(trn_ter_limits *limits);

/* How a file's bytes after the layer map were laid out. */
typedef enum trn_ter_layout {
    TRN_TER_LAYOUT_MODERN = 0,   /* versions 7-9: names end at EOF (version 9 World Editor files) */
    TRN_TER_LAYOUT_EXTRA_1 = 1,  /* modern plus one size*size block before the count (community notes) */
    TRN_TER_LAYOUT_EXTRA_4 = 4,  /* modern plus four zero blocks: a version 8 file of the 2023 World Editor */
    TRN_TER_LAYOUT_EXTRA_5 = 5,  /* modern plus one texture map and four coverage maps */
    TRN_TER_LAYOUT_LEGACY = 100, /* versions 1-6 (Torque Game Engine) */
} trn_ter_layout;

/* Short description of a layout for `info` ("modern", "modern + 1 extra map (community layout)",
 * "modern + 5 extra maps (community layout)", "legacy (Torque Game Engine)"); never NULL. */
const char *trn_ter_layout_name(trn_ter_layout layout);

/* A warning found while reading (the file is still usable). */
typedef struct trn_ter_warning {
    char message[256];
    int64_t offset; /* -1 when not tied to a byte */
} trn_ter_warning;

/* A whole .ter file in memory, exactly as stored. Rows run south to north (row 0 is the
 * engine's bottom edge, y = 0), x fastest. Every pointer is owned by the struct (malloc'd, freed
 * by trn_ter_dispose); callers building one by hand must allocate with malloc too. The trn_ter_*
 * functions keep no state: distinct trn_ter values may be used from different threads, and one
 * trn_ter may be read (serialised, converted) from several threads at once. */
typedef struct trn_ter {
    uint8_t version;
    trn_ter_layout layout;
    uint32_t size;     /* samples per side */
    uint16_t *heights; /* size*size stored values: metres = stored * maxHeight / 65536 */
    uint8_t *layers;   /* size*size material indices; 255 = hole */
    char **materials;  /* material names, NUL-terminated (names never contain NUL in practice;
                          material_lengths keeps the stored byte length) */
    uint32_t *material_lengths; /* NULL = use strlen(materials[i]) */
    uint32_t material_count;
    /* Per name, 1 when the file stored a name shorter than 255 bytes in the long form (0xFF then
     * a u16 length); kept so such a file still round-trips byte for byte. NULL = all short
     * names use the one-byte form (what the engine writes). */
    uint8_t *material_long_form;
    /* Extra maps found after the layer map (EXTRA_1 / EXTRA_5 layouts): extra_count blocks of
     * size*size bytes, kept so the file round-trips. */
    uint8_t *extra_maps;
    uint32_t extra_count;
    /* Legacy (versions 1-6) only. */
    uint8_t *legacy_material_map; /* raw 65536 bytes: bits 0-2 group, bit 7 modified */
    char *legacy_names[8];        /* the 8 slots ("" for unused) */
    uint8_t *legacy_alpha[8];     /* per non-empty slot, 65536 bytes, NULL otherwise */
    char *texture_script;         /* v3+, NULL otherwise */
    char *heightfield_script;     /* v3+ */
    char *edge_paths[2];          /* v5+ */
    /* Warnings gathered by the reader (layer index past the material list, >254 materials...). */
    trn_ter_warning *warnings;
    uint32_t warning_count;
} trn_ter;

/* Release everything a trn_ter owns and zero it. NULL is a no-op. */
void trn_ter_dispose(trn_ter *ter);

/* True when data starts like a BeamNG/Torque .ter (version byte 1..255 and plausible size),
 * and not like a Terragen file. Content sniffing for `info`: data is the start of the file
 * (5 bytes are enough; versions 1-6 have no size field, so the version byte decides). Versions
 * above 9 are accepted so that the reader can say "version N is newer than 9". */
bool trn_ter_sniff(const uint8_t *data, size_t size);

/* Whether data (a whole file of size bytes) is laid out as a .ter, without allocating: a legacy
 * file (versions 1-6) has exactly the size its version, names and scripts give; a modern one
 * (7-9) has its height and layer maps, then the material names ending at the end of the file
 * (or one of the extra-map layouts trn_ter_parse accepts). Format detection uses it to tell a
 * .ter from formats without a magic. False when it does not fit: *fit_end (may be NULL) is the
 * offset where the layout stopped fitting; it equals size when the file is only cut short (a
 * prefix of a .ter). No limits apply. */
bool trn_ter_probe(const uint8_t *data, size_t size, uint64_t *fit_end);

/* Parse a .ter from memory. path is used only in error messages (may be NULL). On failure the
 * error names the section ("heights", "layer map", "material count", "material name 3"...)
 * and the byte offset; *ter is left empty. limits NULL = defaults. */
trn_status trn_ter_parse(const uint8_t *data, size_t size, const char *path,
                         const trn_ter_limits *limits, trn_ter *ter, trn_error *err);

/* Read a .ter file from disk: the same result and errors as trn_ter_parse on its bytes. Modern
 * files are read straight into the height and layer arrays (one copy from the page cache).
 * progress (may be NULL) is called per chunk; TRN_CANCEL returns TRN_ERR_CANCELLED. On any
 * failure *ter is left empty. */
trn_status trn_ter_read(const char *path, const trn_ter_limits *limits, trn_ter *ter,
                        trn_progress_fn progress, void *user, trn_error *err);

/* Serialise in the modern layout with the given version number (7, 8 or 9, else
 * TRN_ERR_INVALID_ARGUMENT), extra maps included when present; legacy files are converted
 * (legacy fields are not written). A modern file parsed and serialised with its own version
 * gives back the same bytes. *out is malloc'd; caller frees. */
trn_status trn_ter_serialize(const trn_ter *ter, uint8_t version, uint8_t **out, size_t *out_size,
                             trn_error *err);

/* Write atomically to path (streams, never holds a second copy of the maps; little-endian on
 * any host). Cancelling through progress leaves an existing file at path untouched. */
trn_status trn_ter_write(const char *path, const trn_ter *ter, uint8_t version,
                         trn_progress_fn progress, void *user, trn_error *err);

/* Copy the .ter at in to out as trn_ter_read then trn_ter_write would (the same checks and
 * errors, the same bytes), without holding the maps: a modern input's names are checked
 * through a read-only map and its bytes are copied file to file inside the kernel, while a
 * second thread (where OpenMP allows more than one) reads the layer map for its warnings; then
 * the output is synced and renamed into place. The output has the given version (7, 8 or 9);
 * the input's extra maps are kept when keep_extra is true and version is the input's own, else
 * dropped.
 * out is untouched when the input is refused, changes while it is copied, or progress
 * cancels. info (may be NULL) receives the input as read, without its maps (heights, layers
 * and extra_maps NULL; dispose it with trn_ter_dispose): version, layout, size, extra_count,
 * material names and warnings. */
trn_status trn_ter_copy(const char *in, const char *out, const trn_ter_limits *limits,
                        uint8_t version, bool keep_extra, trn_ter *info,
                        trn_progress_fn progress, void *user, trn_error *err);

/* Count samples per material index (counts[256]; counts[255] = holes). Overwrites counts. */
void trn_ter_layer_histogram(const trn_ter *ter, uint64_t counts[256]);

/* Convert to the in-memory field/labels (metres with max_height, square_size metres per step).
 * Field sample (i, j) is .ter sample x = i of row j (row 0 = south = field z 0); cells = size-1
 * per side; heights = stored * max_height / 65536, field->quantum = max_height / 65536 and
 * quantum_base = 0. Labels copy the layer values and material names. Either output may be
 * NULL; on failure neither is touched. */
trn_status trn_ter_to_field(const trn_ter *ter, double max_height, double square_size,
                            trn_field *field, trn_labels *labels, trn_error *err);

/* Build a modern version-9 trn_ter from a field (quantised with max_height) and optional labels
 * (NULL = all layer 0 with one material named default_material, "default" when that is NULL).
 * Field must be square; labels must have the field's grid. Stored = round(h / quantum) clamped
 * to 0..65535 with quantum = max_height / 65536 (NaN gives 0), so heights that came from
 * trn_ter_to_field with the same max_height give back the stored values exactly. */
trn_status trn_ter_from_field(const trn_field *field, double max_height, const trn_labels *labels,
                              const char *default_material, trn_ter *ter, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
