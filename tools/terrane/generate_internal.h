/* terrane generate's steps (arguments, outputs, engine exports, tiled runs) for generate.c. */
#ifndef TRN_GENERATE_INTERNAL_H
#define TRN_GENERATE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "cli.h"
#include "fmt_geotiff.h"
#include "fmt_stationeers.h"
#include "level_export.h"
#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/beamng_forest.h"
#include "terrane/beamng_water.h"
#include "terrane/unity.h"
#include "terrane/unity_water.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"

typedef enum height_format { FMT_NONE, FMT_PNG, FMT_R16, FMT_R32, FMT_TER, FMT_DAT } height_format;

typedef struct gen_args {
    const char *recipe_path, *out, *biomes, *preview, *export_dir, *exclusion, *roles;
    const char *unity_dir;          /* --export unity:DIR */
    const char *gltf_dir;           /* --export gltf:DIR (tiled runs) */
    const char *scatter_exclusions; /* --scatter-exclusions FILE.json */
    /* --mask NODE[.PIN]=FILE.png: a graph node's mask output written as a 16-bit PNG. */
    const char *masks[16];
    uint32_t mask_count;
    const char *cache_dir; /* --cache DIR: graph node results kept between runs */
    bool no_cache;         /* --no-cache: not even the platform cache directory */
    trn_erosion_quality quality;
    uint64_t max_work;   /* --max-work N / --no-work-limit; 0 = the library's default budget */
    uint64_t max_memory; /* --max-memory SIZE / --no-work-limit; 0 = the library's default */
    uint64_t max_placements; /* --max-placements N; 0 = TRN_SCATTER_DEFAULT_MAX_PLACEMENTS */
    height_format format;
    bool biome_index, has_max_height;
    bool scaffold; /* --scaffold: the BeamNG level opens and drives */
    double max_height;
    uint32_t texture_size;
    int threads;
    /* Grid overrides: generate at another resolution or size than the recipe's. */
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    trn_edit_policy edit_policy;
    cli_scale_options scale; /* --scale, --height-range: the one 16-bit rule */
    /* Where -o, --biomes, --preview and --exclusion are written: their staged temporaries,
     * which land together with every other output when the run succeeds. */
    const char *out_file, *biomes_file, *preview_file, *exclusion_file, *roles_file;
    uint32_t tiles;         /* --tiles N: tile by tile, samples per tile edge; 0 = whole grid */
    uint64_t memory;        /* --memory SIZE: the budget --tiles must fit in; 0 = none */
    const char *tile_cache; /* --tile-cache DIR: where a tiled run keeps global results
                               (NULL: the output's folder) */
} gen_args;

/* How heights became stored values. */
typedef struct height_mapping {
    double base, quantum, max_height; /* metres = base + value * quantum */
    uint64_t clamped;
    uint32_t levels; /* distinct 16-bit values used */
    const char *rule;
} height_mapping;

/* The surface material of every sample (docs/roles.md, "Into the engines"), with engine names:
 * what the .ter's layer map, the level's TerrainMaterials and Unity's splat layers are made of. */
typedef struct surface_out {
    bool bound; /* the palette's material set binds a role: its fallbacks are worth reporting */
    trn_surface_materials sm;
    char names[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX];
} surface_out;

/* A level staged by export_level, validated once every output has landed. */
typedef struct level_export {
    trn_beamng_level_result res;
    uint32_t size, materials, tinted;
    uint32_t side_projected; /* TerrainMaterials given useSideProjection (mapped triplanar) */
    uint32_t mapped; /* detail textures taken from Material documents' maps */
    double square_size;
    height_mapping mapping;
    bool staged;
    bool water; /* the published water went in too (water_res) */
    trn_beamng_water_result water_res;
    bool forest; /* the palette's instances went in as forest items (forest_res) */
    trn_beamng_forest_result forest_res;
} level_export;

/* The recipe's palette and material set, loaded before generating: the generation places the
 * palette once (trn_generated.instances) for every engine export that carries it. */
typedef struct placements {
    bool loaded;
    trn_palette palette;
    trn_material_set set;
    trn_scatter_exclusions suppress; /* --scatter-exclusions, read by gen_exclusions_read */
} placements;

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- arguments (generate_args.c) ---- */

int gen_parse_args(cli_ctx *ctx, int argc, char **argv, gen_args *a, bool *help);

/* ---- heightfields, maps, previews, masks, surface materials, .ter (generate_write.c) ---- */

json_t *gen_mapping_json(const height_mapping *m);
void gen_add_file(json_t *files, const char *path, const char *what);
int gen_choose_mapping(cli_ctx *ctx, const gen_args *a, const trn_generated *gen, const char *out,
                       height_mapping *m);
int gen_write_height_image(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
                           height_mapping *m);
int gen_write_biomes(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                     const trn_generated *gen);
int gen_write_preview(cli_ctx *ctx, const gen_args *a, const trn_generated *gen);
int gen_write_roles(cli_ctx *ctx, const gen_args *a, const trn_generated *gen, json_t **legend);
int gen_write_exclusion(cli_ctx *ctx, const gen_args *a, const trn_generated *gen);
int gen_write_masks(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                    const trn_palette *palette, trn_graph_cache *cache, json_t *files);
bool gen_set_binds_any(const trn_material_set *set);
void gen_surface_out_free(surface_out *so);
int gen_assign_surface(cli_ctx *ctx, const trn_recipe *recipe, const trn_generated *gen,
                       const trn_material_set *set, surface_out **out);
void gen_surface_notes(cli_ctx *ctx, const surface_out *so, const trn_recipe *recipe);
json_t *gen_surface_json(const surface_out *so, const trn_recipe *recipe);
void gen_surface_rgb(const surface_out *so, const trn_recipe *recipe, uint32_t k, uint8_t rgb[3]);
trn_status gen_build_ter(const trn_generated *gen, const surface_out *so, const height_mapping *m,
                         trn_ter *ter, trn_error *err);
int gen_write_ter(cli_ctx *ctx, const gen_args *a, const trn_generated *gen, const surface_out *so,
                  height_mapping *m);

/* ---- engine exports: the BeamNG level and the Unity terrain (generate_engines.c) ---- */

void gen_placements_dispose(placements *p);
int gen_export_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                     const trn_generated *gen, const surface_out *so, level_export *lx);
int gen_validate_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                       const trn_generated *gen, const surface_out *so, const level_export *lx,
                       json_t *summary);
trn_status gen_level_terrain(cli_ctx *ctx, const gen_args *a, const char *level_dir,
                             const trn_recipe *recipe, const surface_out *so, trn_ter *ter,
                             const height_mapping *m, double square_size, bool has_sea,
                             double sea_level, trn_beamng_level_result *res, uint32_t *tinted,
                             uint32_t *mapped, trn_error *e);
int gen_level_check(cli_ctx *ctx, const char *level_dir, bool pow2, size_t *errors,
                    size_t *warnings);
/* The TerrainLayer of each splat layer of a Unity export, its textures written into dir beside
 * the export's files as NAME_layer<K>_{diffuse,normal,mask}.png (in the run's write set): a layer
 * whose material has a Material document (found as the palette's project finds it) gets the
 * document's albedo as the diffuse (RGB, sRGB), its normal map and a mask map of its roughness and
 * height (unity_mask_map), each at the map's own size; any other layer a 4 x 4 diffuse of its
 * colour (the role's or biome's, as the BeamNG export tints its placeholders). tile_size is the
 * metres one repetition covers: 1 / (the biome's texture_scale, 1 for a role's material, times
 * the document's). A document that does not resolve fails the export. */
typedef struct unity_layers {
    trn_unity_terrain_layer layers[TRN_SURFACE_MATERIALS_MAX];
    char files[TRN_SURFACE_MATERIALS_MAX][3][300];
    char documents[TRN_SURFACE_MATERIALS_MAX][1024];
    uint32_t textures, documented; /* files written; layers with a document */
} unity_layers;

trn_status gen_unity_terrain_layers(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                                    const surface_out *so, const char *dir, const char *name,
                                    unity_layers *ul, trn_error *err);
int gen_check_unity_shape(cli_ctx *ctx, const trn_recipe *r);
int gen_export_unity(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                     const trn_generated *gen, const surface_out *so, json_t *summary);
int gen_check_beamng_shape(cli_ctx *ctx, const trn_recipe *r, const char *what);

/* ---- tiled, out of core (generate_tiled.c) ---- */

/* Read --scatter-exclusions into p->suppress (nothing without it): refused unless p holds a
 * palette an engine export places; a bad file fails naming its place. */
int gen_exclusions_read(cli_ctx *ctx, const gen_args *a, placements *p);
/* The note the run gives after suppressing: how many placements went, how many keys matched
 * none (the same words tiled or not). */
void gen_exclusions_note(cli_ctx *ctx, const gen_args *a, size_t suppressed, size_t unmatched);
int generate_tiled(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, double t0);

#endif
