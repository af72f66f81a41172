/* Automatic surface roles: classifying the final surface into material-set roles per sample. */
#ifndef TERRANE_ROLES_H
#define TERRANE_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/render.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the classification reads, each per sample in the field's layout (index
 * j * (cells_x + 1) + i). Only field is required; a NULL input is not used (its rules never
 * fire). The caller keeps everything alive during the call. */
typedef struct trn_roles_input {
    const trn_field *field;       /* the final surface (heights, cells, size) */
    const float *transport;       /* signed erosion transport: height change of the final surface
                                     (metres; < 0 cut, > 0 deposition), e.g. an erosion change */
    const uint32_t *accumulation; /* flow accumulation: samples draining through each sample,
                                     itself included (trn_drainage.accumulation) */
    const float *moisture;        /* 0..1 normalised saturation */
    const uint8_t *wet;           /* resolved water coverage: nonzero = wet. NULL: a sample is
                                     wet where water_distance is 0 */
    const float *water_distance;  /* world units to the nearest wet sample (0 on wet samples,
                                     INFINITY when nothing is wet) */
    const uint8_t *biomes;        /* biome label per sample (TRN_LABEL_NONE allowed) */
    const bool *allow_snow;       /* per biome label (allow_snow_count entries); labels without
                                     an entry, and every label when NULL, allow snow */
    uint32_t allow_snow_count;
} trn_roles_input;

/* Thresholds, with the defaults trn_roles_params_default sets. Slopes are degrees from
 * horizontal, exactly trn_field_slope_at's (Horn, edges replicated). */
typedef struct trn_roles_params {
    double cliff_slope;            /* slope >= this: cliff (default 55) */
    double rock_slope;             /* slope >= this: rock (default 35, TRN_ROCK_SLOPE) */
    double snow_height;            /* height >= this, where the biome allows snow: snow
                                      (default INFINITY: no snow line) */
    double shore_distance;         /* dry with 0 < water_distance <= this: shore (default 4) */
    double sand_slope;             /* a shore sample with slope < this is sand, else wet ground
                                      (default 15, TRN_SAND_SLOPE) */
    double cut_depth;              /* transport <= -cut_depth: rock, exposed by the cut
                                      (default 0.05 m; > 0) */
    double deposit_depth;          /* transport >= deposit_depth: sediment (default 0.05 m; > 0) */
    uint32_t channel_accumulation; /* accumulation >= this: a channel (default 1024 samples) */
    double channel_sediment_slope; /* a channel with slope < this is sediment, else wet ground
                                      (default 8) */
    double grass_moisture;         /* moisture >= this ... (default 0.55) */
    double grass_slope;            /* ... and slope < this: grass, else ground (default 25) */
    int threads;                   /* 0 = OpenMP default; results never depend on it */
} trn_roles_params;

void trn_roles_params_default(trn_roles_params *p);

/* Classify every sample into one trn_surface_role (roles_per_sample: one byte per sample,
 * caller-allocated). The first rule that holds wins, in this precedence order:
 *   1. NONE        the height is not finite
 *   2. underwater  wet (wet[k] != 0, or water_distance == 0 when wet is NULL)
 *   3. cliff       slope >= cliff_slope
 *   4. snow        height >= snow_height and the sample's biome allows snow
 *   5. sand        shore (dry, water_distance <= shore_distance) and slope < sand_slope
 *   6. wet_ground  shore, steeper
 *   7. rock        slope >= rock_slope
 *   8. rock        transport <= -cut_depth (a cut exposes rock)
 *   9. sediment    transport >= deposit_depth (deposition)
 *  10. sediment    accumulation >= channel_accumulation and slope < channel_sediment_slope
 *  11. wet_ground  accumulation >= channel_accumulation (a steeper channel)
 *  12. grass       moisture >= grass_moisture and slope < grass_slope (flat moist soil)
 *  13. ground      everything else
 * A sample next to a non-finite height has a NaN slope: no "slope >=" test holds for it and
 * every "slope <" test does. Each sample depends only on its own inputs and its 3x3 heights, so
 * rows are split over OpenMP threads and the result does not depend on their number. Thread-safe
 * for distinct outputs. Errors: TRN_ERR_INVALID_ARGUMENT for a missing field, heights, cells or
 * output, or a parameter out of range (named: "cut_depth: expected > 0, found 0"); nothing is
 * written then. */
trn_status trn_roles_classify(const trn_roles_input *in, const trn_roles_params *p,
                              uint8_t *roles_per_sample, trn_error *err);

/* Chunks: groups of chunk_cells x chunk_cells cells (the last ones smaller), numbered row by
 * row; chunk (cx, cz) holds cells [cx * C, (cx + 1) * C) x [cz * C, (cz + 1) * C), so its
 * triangles use samples cx * C .. min((cx + 1) * C, cells_x) (a sample on a chunk border
 * belongs to both chunks). chunk_cells 0 means TRN_ROLES_CHUNK_CELLS. */
#define TRN_ROLES_CHUNK_CELLS 64u
void trn_roles_chunk_grid(uint32_t cells_x, uint32_t cells_z, uint32_t chunk_cells,
                          uint32_t *chunks_x, uint32_t *chunks_z);

/* Recompute after a local edit: roles_per_sample holds a previous classification of the same
 * grid; the samples whose inputs changed all lie in [i0, i1) x [j0, j1) (sample indices,
 * clamped to the grid; i1 and j1 exclusive). That rectangle grown by one sample (the slope's
 * 3x3 reach) is classified again and written; every other sample is left as it is, so the
 * result equals a full trn_roles_classify whenever the rectangle covers every changed input,
 * including accumulation changed downstream of the edit (drainage is not local: pass its
 * changed bounding box). changed_chunks (chunks_x * chunks_z bytes from trn_roles_chunk_grid,
 * may be NULL) is overwritten: 1 for each chunk with a sample whose role changed, else 0;
 * changed_count (may be NULL) receives how many chunks changed. An empty rectangle changes
 * nothing. Errors as trn_roles_classify (nothing is written). */
trn_status trn_roles_classify_window(const trn_roles_input *in, const trn_roles_params *p,
                                     uint32_t i0, uint32_t j0, uint32_t i1, uint32_t j1,
                                     uint32_t chunk_cells, uint8_t *roles_per_sample,
                                     uint8_t *changed_chunks, uint32_t *changed_count,
                                     trn_error *err);

/* Roles of the terrain triangles. Cell (i, j) is split along (i, j)-(i + 1, j + 1) into the
 * (i + 1, j) triangle with vertices (i, j), (i + 1, j), (i + 1, j + 1) and the (i, j + 1)
 * triangle with vertices (i, j), (i + 1, j + 1), (i, j + 1); triangle 2 * (j * cells_x + i) is
 * the first, 2 * (j * cells_x + i) + 1 the second. Each takes the role most of its three
 * vertices hold (two or three), else its first vertex's. roles_per_triangle holds
 * 2 * cells_x * cells_z bytes (caller-allocated). Errors: TRN_ERR_INVALID_ARGUMENT for NULL
 * buffers or no cells; TRN_ERR_OVERFLOW when the counts overflow. */
trn_status trn_roles_triangles(uint32_t cells_x, uint32_t cells_z, const uint8_t *roles_per_sample,
                               uint8_t *roles_per_triangle, trn_error *err);

/* The role map's colour of a role (opaque), and transparent black for TRN_ROLE_NONE and any
 * other value:
 *   ground 134 96 60     grass 86 152 62      rock 128 128 128
 *   cliff 72 68 66       sediment 176 150 104 sand 218 194 142
 *   snow 244 246 250     wet_ground 92 70 50  underwater 62 118 196 */
void trn_roles_color(uint8_t role, uint8_t rgba[4]);

/* A role map: an RGBA picture of the samples (width cells_x + 1, height cells_z + 1, north up
 * as trn_raster8 says) in trn_roles_color, the number of samples of each role (counts[r] for
 * r < TRN_ROLE_COUNT, counts[TRN_ROLE_COUNT] the rest: NONE and unknown values), and a legend
 * as JSON text:
 *   {"roles": [{"role": "ground", "color": [134, 96, 60, 255], "samples": 12}, ...nine...],
 *    "none": {"color": [0, 0, 0, 0], "samples": 0}, "samples": 16}
 * roles in enum order. The map owns its buffers: dispose it with trn_roles_map_dispose. */
typedef struct trn_roles_map {
    trn_raster8 picture;
    uint64_t counts[TRN_ROLE_COUNT + 1];
    char *legend_json; /* NUL-terminated */
} trn_roles_map;

/* Draw a role map. Errors: TRN_ERR_INVALID_ARGUMENT (NULL buffers, no cells), TRN_ERR_OVERFLOW,
 * TRN_ERR_NO_MEMORY; *out is left empty on failure. */
trn_status trn_roles_map_render(uint32_t cells_x, uint32_t cells_z, const uint8_t *roles_per_sample,
                                trn_roles_map *out, trn_error *err);
/* Free a map's buffers and zero it. NULL is a no-op. */
void trn_roles_map_dispose(trn_roles_map *map);

/* ---------------------------------------------------------------------------------------------
 * Into the engines: the material of every sample (docs/roles.md, "Into the engines").
 * ------------------------------------------------------------------------------------------- */

/* Where a sample's material came from, in precedence order. */
typedef enum trn_surface_source {
    TRN_SURFACE_EXPLICIT = 0, /* the sample's biome names its own material (trn_biome.material) */
    TRN_SURFACE_ROLE = 1,     /* the material set's binding of the sample's role */
    TRN_SURFACE_TINT = 2,     /* fallback: the biome's own material, tinted with its colour and
                                 named after the biome (the role is unbound, or none won) */
} trn_surface_source;

/* "explicit", "role", "biome"; "unknown" for any other value. */
const char *trn_surface_source_name(trn_surface_source source);

/* At most this many materials: a label map's values are bytes and TRN_LABEL_NONE is a hole. */
#define TRN_SURFACE_MATERIALS_MAX 255u

/* One material of an assignment (labels.names[k] is its name). */
typedef struct trn_surface_material {
    trn_surface_source source; /* its first claim in the order trn_surface_materials_assign lists */
    uint8_t role;              /* ROLE: the first role (enum order) bound to it; else NONE */
    uint8_t biome;             /* EXPLICIT, TINT: the first biome label that claimed it; ROLE:
                                  TRN_LABEL_NONE */
    uint64_t samples;          /* samples that use it, whatever their source */
} trn_surface_material;

/* What to assign. The label b of biomes is recipe_biomes[b] for b < recipe_biome_count. */
typedef struct trn_surface_materials_input {
    const trn_labels *biomes;       /* biome label per sample, named (required) */
    const uint8_t *roles;           /* trn_surface_role per sample (role_count bytes); NULL: no
                                       sample has a winning role */
    size_t role_count;              /* must be the sample count when roles is given */
    const trn_biome *recipe_biomes; /* for their explicit material; NULL: none has one */
    uint32_t recipe_biome_count;    /* must equal biomes->name_count when recipe_biomes is given */
    const trn_material_set *set;    /* role bindings; NULL: every role is unbound */
} trn_surface_materials_input;

/* An assignment: the material per sample as a label map, its materials and the fallbacks. */
typedef struct trn_surface_materials {
    trn_labels labels; /* same grid as the biomes; names are material ids and, for fallbacks,
                          biome names; TRN_LABEL_NONE where the biome label is a hole */
    trn_surface_material materials[TRN_SURFACE_MATERIALS_MAX]; /* labels.name_count used */
    uint64_t unbound[TRN_ROLE_COUNT]; /* samples of each role that fell back to the biome tint
                                         because the set binds nothing to the role */
    uint64_t no_role;                 /* samples without a winning role (TRN_ROLE_NONE or any
                                         value >= TRN_ROLE_COUNT) that fell back to the tint */
    uint64_t holes;                   /* samples whose biome label is TRN_LABEL_NONE */
} trn_surface_materials;

/* Assign every sample its material by precedence: the biome's explicit material (a non-empty
 * trn_biome.material), else the set's binding of the sample's role, else the biome tint (the
 * biome's own name); a role's binding applies whichever biome the sample is in, and an explicit
 * material applies whatever the role. Names are listed once each, only when some sample uses
 * them, in this deterministic order: explicit materials in biome label order, then role
 * bindings in role enum order (ground .. underwater), then biome tints in biome label order.
 * A name claimed twice (one material id bound to two roles, or explicit in one biome and bound
 * to a role) is one material whose source is its first claim in that order. Samples whose biome
 * label is TRN_LABEL_NONE stay TRN_LABEL_NONE and count as holes. *out is overwritten; dispose
 * it with trn_surface_materials_dispose. Thread-safe for distinct outputs.
 * Errors (*out left empty): TRN_ERR_INVALID_ARGUMENT for a missing biomes map or output, or a
 * biome label without a name ("sample 12: biome label 3, but the map names 2 biomes");
 * TRN_ERR_MISMATCH when role_count is not the sample count or recipe_biome_count is not the
 * number of biome names; TRN_ERR_LIMIT past TRN_SURFACE_MATERIALS_MAX materials;
 * TRN_ERR_NO_MEMORY. */
trn_status trn_surface_materials_assign(const trn_surface_materials_input *in,
                                        trn_surface_materials *out, trn_error *err);
/* Free the label map and zero *m. NULL is a no-op. */
void trn_surface_materials_dispose(trn_surface_materials *m);

/* Bytes of an engine material name, terminator included. */
#define TRN_SURFACE_NAME_MAX 64u

/* Engine-safe names (a BeamNG TerrainMaterial's internalName, a Unity layer's asset name) for
 * the materials of m, names[k] for labels.names[k]. A biome tint keeps its biome's name (as the
 * exports always named biome materials; cut to 63 bytes). Any other material takes the last
 * path part of its id ("asset://materials/granite" -> "granite"), with every byte that is not
 * a letter, digit or '_' turned into '_', cut to 56 bytes, "material" when empty. Tints are
 * named first; then, in label order, a name already taken (ignoring case, as the engines'
 * object names do) gets the first free suffix "_2", "_3", ..., so equal inputs give equal
 * names. Errors: TRN_ERR_INVALID_ARGUMENT for NULL arguments. */
trn_status trn_surface_materials_engine_names(const trn_surface_materials *m,
                                              char (*names)[TRN_SURFACE_NAME_MAX], trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
