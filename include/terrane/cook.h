/* Cooking: a generated terrain written as a *.terrain.bin payload for the runtime (runtime.h). */
#ifndef TERRANE_COOK_H
#define TERRANE_COOK_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/generate.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The zstd level every section is compressed at: fixed, so payloads are reproducible. */
#define TRN_COOK_ZSTD_LEVEL 3

/* What goes into a payload. generated, recipe and terrain_id are required; the rest are
 * optional (NULL). instances need palette (their rule indexes point into its rules);
 * material_set needs roles. */
typedef struct trn_cook_input {
    const trn_generated *generated;
    const trn_recipe *recipe; /* its canonical JSON is the edit checkpoint; biome colours */
    const char *terrain_id;   /* "asset://terrain/NAME" or a plain name, < 64 KiB */
    const trn_palette *palette;
    const trn_instances *instances;
    const uint8_t *roles; /* trn_surface_role per sample */
    const trn_material_set *material_set;
    /* Material documents (resolved: trn_material_resolve) of the set's and the biomes'
     * materials, written as section MATD (docs/payload.md) with their maps' paths relative to
     * their project; none (count 0): no section. */
    const trn_material *materials;
    uint32_t material_count;
} trn_cook_input;

/* The payload's bytes (docs/payload.md): the same inputs give the same bytes (no clocks, one
 * zstd level, single-threaded compression). *data is malloc'd; caller frees. Errors:
 * TRN_ERR_INVALID_ARGUMENT naming the missing or inconsistent input (grids that differ, an
 * instance whose rule is not in the palette), TRN_ERR_NO_MEMORY. */
trn_status trn_cook_encode(const trn_cook_input *in, uint8_t **data, size_t *size, trn_error *err);
/* trn_cook_encode written atomically to path. */
trn_status trn_cook_write(const trn_cook_input *in, const char *path, trn_error *err);

/* XXH64 digests of everything in a palette or material set that changes a payload (every rule
 * field, the density multipliers, the names); 0 for NULL. */
uint64_t trn_cook_palette_digest(const trn_palette *palette);
uint64_t trn_cook_material_set_digest(const trn_material_set *set);
/* The payload header's material digest: the set's alone without Material documents (count 0),
 * else the set's with every document's id, texture scale and map paths. */
uint64_t trn_cook_materials_digest(const trn_material_set *set, const trn_material *materials,
                                   uint32_t count);

#ifdef __cplusplus
}
#endif

#endif
