/* Procedural generation: gradient noise, landform fields, surface context, biome rules. */
#ifndef TERRANE_GENERATE_H
#define TERRANE_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/graph.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Noise. 2D gradient noise of our own, evaluated a row at a time. Output is bit-identical
 * whatever the thread count, the CPU and whether vector code runs (no FMA contraction, no
 * fast-math, the same operation order in every code path).
 * ------------------------------------------------------------------------------------------- */

/* Single-octave gradient noise in about [-1, 1] at (x[k], z[k]) for k < count. */
/* Details: lattice cells are hashed from (cell x, cell z, a 32-bit hash of seed) to one of 8
 * gradients; the quintic-faded value is scaled to stay within [-0.9995, 0.9995] and is 0 on
 * lattice points. NaN coordinates sample 0 and |coordinates| beyond 2^62 are clamped, so every
 * value is finite. Thread-safe (no state). */
void trn_noise2_points(uint64_t seed, const float *x, const float *z, size_t count, float *out);

/* Fractal noise of a landform's profile: octaves of trn_noise2 at frequency 1/feature_size
 * doubling per octave, amplitude roughness^octave, the sum spread over [0, 1] whatever the
 * octave count and roughness: fbm as 0.5 + 0.5 * z / 2.5 for the sum z in standard deviations
 * (about 0.5% of values clamp at each end), ridged (the usual 1 - |n| squared and weighted) by
 * the affine map taking its 1st and 99th percentiles to 0.02 and 0.98. Samples
 * (x0 + k*dx, z) for k < count, in world units, before warp/heading/stretch. */
/* Each octave has its own lattice seed and a fractional lattice shift (both hashed from seed
 * and the octave index), so octaves do not all vanish on the same points. Out-of-range
 * parameters are clamped (octaves to 1..16, roughness to [0, 1]), so values are always finite
 * and in [0, 1]. Measured: 6-octave fbm at roughness 0.5 has its 1st..99th percentile at
 * 0.05..0.95, ridged at 0.02..0.98 (docs/recipes.md, "Noise value distribution", has more).
 * The sum's standard deviation is one octave's (0.32626, derived and measured) times
 * sqrt(sum of squared amplitudes), as octaves are independent; ridged percentiles come from a
 * measured table over octaves and roughness (src/gen/noise.c). Since generator version 2;
 * version 1 mapped fbm as (n + 1) / 2 of the sum over the amplitude sum, which bunched around
 * 0.5. Each value depends only on its point, never on count or block boundaries. */
/* trn_fractal_row of the samples first .. first + count - 1 of a row: x = x0 + (first + k) dx,
 * the same values a whole row from 0 gives them (a tile's part of a row). */
void trn_fractal_row_from(uint64_t seed, trn_profile profile, uint32_t octaves,
                          double feature_size, double roughness, double x0, double dx,
                          uint64_t first, double z, size_t count, float *out);
void trn_fractal_row(uint64_t seed, trn_profile profile, uint32_t octaves, double feature_size,
                     double roughness, double x0, double dx, double z, size_t count, float *out);

/* A diagnostic when float sampling coordinates would lose precision for this landform over a
 * terrain of the given size (the finest octave's coordinates beyond 2^22): returns true and
 * fills msg. Generation then samples in a re-centred domain so heights stay valid. */
/* The bound covers the terrain grown by warp_amplitude on every side, after heading and
 * stretch; the warp's own coordinates (size / warp_feature_size) are checked too. The message
 * names the landform, the coordinate reached and the octave count or feature size that would
 * keep it in range. The "re-centred domain": every sampling coordinate t (in octave-0 lattice
 * cells) is split in double precision into a whole cell (modulo 2^32) and a 32-bit fraction,
 * and each octave doubles that pair exactly, so coordinates keep double precision (an error
 * near |t| * 2^-53 octave-0 cells, where float's is |t| * 2^-24). msg may be NULL; it is set to
 * "" when the check passes. */
bool trn_landform_precision_check(const trn_landform *landform, double size_x, double size_z,
                                  char *msg, size_t msg_size);

/* Heights of a landform over field's grid (cells and size must be set, heights allocated):
 * domain warp (channel landform_warp) first, then heading and stretch, then the profile's
 * fractal noise (channel landform), then base_height + height_variation * v. Threads split
 * rows; the result does not depend on their number. */
/* Sample (i, j) is at x = i * size_x / cells_x, z = j * size_z / cells_z (computed exactly so).
 * Warp: x += warp_amplitude * n_a, z += warp_amplitude * n_b, with n_a and n_b single-octave
 * noise in [-1, 1] at (x, z) / warp_feature_size from two seeds of channel landform_warp; a
 * warp_amplitude of 0 skips it, giving exactly the unwarped heights. Heading and stretch:
 * u = (x cos h + z sin h) / stretch, v = z cos h - x sin h. Heights are
 * (float)(base_height + height_variation * v) with v in [0, 1], so always finite.
 * Errors: TRN_ERR_INVALID_ARGUMENT naming the control out of range (the recipe's ranges) or a
 * field without heights or cells; TRN_ERR_CANCELLED when progress asks to stop, checked between
 * bands of rows: the bands already computed have been written and the rest keep their old
 * values (a field the size of the output would be needed to leave it untouched, and the
 * generator discards the field on failure). Progress stage "landform". */
trn_status trn_landform_fill(const trn_landform *landform, uint64_t world_seed, trn_field *field,
                             trn_progress_fn progress, void *user, trn_error *err);

/* trn_landform_fill over a window of the world (a tile): each sample gets exactly the height
 * trn_landform_fill gives it on the whole world, so tiles assemble into the same bytes. The
 * window must lie inside the world (TRN_ERR_INVALID_ARGUMENT otherwise). */
trn_status trn_landform_fill_window(const trn_landform *landform, uint64_t world_seed,
                                    trn_field *field, const trn_sample_window *window,
                                    trn_progress_fn progress, void *user, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Surface context and biome rules.
 * ------------------------------------------------------------------------------------------- */

/* Everything a rule looks at for one sample. */
typedef struct trn_sample_context {
    double height;         /* world height */
    double slope;          /* degrees, 0 flat .. 90 vertical (Horn's gradient, edges replicated) */
    double moisture;       /* 0..1, stable climate field from channel biome_placement */
    double water_distance; /* world units to the nearest wet sample (0 on a wet sample);
                              INFINITY when nothing is wet */
    trn_substrate substrate;
} trn_sample_context;

/* Moisture at a world position: a smooth field in [0, 1] from the world seed, independent of
 * the biome list and the landforms. */
/* Definition: fbm of 3 octaves at feature size 512 world units, roughness 0.5, seeded by the
 * sub-seed of channel biome_placement, taken as v = (s + 1) / 2 for s its sum over the
 * amplitude sum (96% of v in [0.285, 0.713]; not trn_fractal_row's spread, which moisture does
 * not use) and spread as clamp(0.5 + (v - 0.5) * 2.25, 0, 1): 5th..95th percentile
 * 0.10..0.90, 1.7% clamped at each end. The result is a float widened to double. */
double trn_moisture_at(uint64_t world_seed, double x, double z);

/* Moisture of the cells_x + 1 samples of one grid row at z, sample i at
 * x = i * size_x / cells_x: bit for bit trn_moisture_at at those positions, but evaluated a
 * block at a time (use it when filling a grid). out holds cells_x + 1 floats. */
void trn_moisture_row(uint64_t world_seed, double size_x, uint32_t cells_x, double z, float *out);

/* Substrate thresholds (documented in docs/recipes.md):
 *   wet  : water_distance <= TRN_WET_DISTANCE (on or next to water)
 *   rock : slope >= TRN_ROCK_SLOPE degrees
 *   sand : height - sea_level <= TRN_SAND_HEIGHT and slope < TRN_SAND_SLOPE (beaches)
 *   soil : everything else */
#define TRN_WET_DISTANCE 0.0
#define TRN_ROCK_SLOPE 35.0
#define TRN_SAND_HEIGHT 2.0
#define TRN_SAND_SLOPE 15.0
trn_substrate trn_substrate_classify(double height, double slope, double water_distance,
                                     double sea_level);

/* Per-band result of testing one rule against a sample (for explain). */
typedef enum trn_band_result {
    TRN_BAND_UNCONSTRAINED = 0,
    TRN_BAND_INSIDE = 1,
    TRN_BAND_OUTSIDE = 2,
} trn_band_result;

typedef enum trn_rule_band {
    TRN_RULE_BAND_ELEVATION = 0,
    TRN_RULE_BAND_SLOPE,
    TRN_RULE_BAND_MOISTURE,
    TRN_RULE_BAND_WATER_DISTANCE,
    TRN_RULE_BAND_SUBSTRATE,
    TRN_RULE_BAND_COUNT
} trn_rule_band;

typedef struct trn_rule_test {
    bool matched;
    trn_band_result bands[TRN_RULE_BAND_COUNT];
    int first_rejected; /* trn_rule_band of the first OUTSIDE band in the order above, or -1 */
    double strength;    /* blend strength in [0, 1] used to break priority ties */
} trn_rule_test;

/* Test one rule. strength = clamp((height - elevation.min) / blend, 0, 1) when blend > 0 and
 * the elevation band is set, else 1. */
void trn_rule_test_sample(const trn_rule *rule, const trn_sample_context *ctx, trn_rule_test *out);

/* The winning rule for a sample: highest priority, then highest strength, then the earliest;
 * -1 when none matched (the default biome applies). */
int trn_rules_pick(const trn_rule *rules, uint32_t rule_count, const trn_sample_context *ctx);
/* The same over the rules whose active[r] is nonzero (active NULL: all): a rule on a disabled
 * biome layer is not evaluated (trn_recipe_rule_active). */
int trn_rules_pick_active(const trn_rule *rules, uint32_t rule_count, const uint8_t *active,
                          const trn_sample_context *ctx);

/* Slope in degrees (0 flat .. 90) at sample (i, j): Horn's 3x3 gradient over the cell sizes
 * size_x / cells_x and size_z / cells_z, samples beyond the grid replicated from the nearest
 * edge sample. Interior samples give exactly the angle `terrane render --mode slope` draws
 * (trn_render_slope with z_factor and scale 1); its edge pixels extrapolate the gdaldem way.
 * The field needs at least one cell each way; i and j must be on the grid. */
double trn_field_slope_at(const trn_field *field, uint32_t i, uint32_t j);
/* The cells_x + 1 slopes of row j into out, each equal to trn_field_slope_at's. */
void trn_field_slope_row(const trn_field *field, uint32_t j, double *out);

/* Distance to water. A sample is wet when its height is below sea_level (strictly) and it
 * connects to the field's border through samples below sea level, 4-neighbour steps: the sea
 * inferred when no water bodies are given. An inland pit below sea level is dry. out (one
 * float per sample, the field's layout, caller-allocated) receives the exact Euclidean
 * distance in world units from each sample to the nearest wet sample (Felzenszwalb and
 * Huttenlocher's transform, two 1D passes, cell sizes size_x / cells_x and size_z / cells_z):
 * 0 on wet samples, INFINITY everywhere when nothing is wet. Temporaries are per row or column
 * (plus a span stack for the flood fill); out doubles as the working grid, so on failure or
 * cancel its content is unspecified. Threads split columns, then rows: the result does not
 * depend on their number. Progress stage "water distance". */
trn_status trn_water_distance_fill(const trn_field *field, double sea_level, float *out,
                                   trn_progress_fn progress, void *user, trn_error *err);

/* The same distance from the samples wet marks (nonzero = wet; one byte per sample): resolved
 * water bodies' coverage instead of the inferred sea. */
trn_status trn_water_distance_fill_wet(const trn_field *field, const uint8_t *wet, float *out,
                                       trn_progress_fn progress, void *user, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Generating a recipe.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_biome_source {
    TRN_BIOME_FROM_DEFAULT = 0,
    TRN_BIOME_FROM_RULE = 1,
    TRN_BIOME_FROM_REGION = 2, /* painted regions: the layers issue */
} trn_biome_source;

/* The result of generating a recipe: the surface and one biome per sample. */
typedef struct trn_generated {
    trn_field field;       /* heights */
    trn_labels biomes;     /* biome index per sample (names = the recipe's biome names) */
    uint8_t *sources;      /* trn_biome_source per sample */
    int16_t *rule_index;   /* winning rule per sample, -1 when none */
    float *water_distance; /* per sample, world units (INFINITY when nothing is wet) */
    uint8_t *exclusion;    /* per sample exclusion mask 0..255 (255 = fully excluded); NULL
                              when no enabled layer holds exclusion strokes */
    double sea_level;
    trn_sea_level_source sea_level_source;
    uint64_t cache_key;
    char **diagnostics; /* warnings such as precision diagnostics */
    uint32_t diagnostic_count;
    /* The graph evaluation that made the base: one report per graph node (document order),
     * and the quality it ran at. */
    trn_node_report *nodes;
    uint32_t node_count;
    trn_erosion_quality quality;
    bool biome_rules; /* the recipe's rules classified the surface (a Biome Rules node fed the
                         output); false: every sample not painted has the default biome */
    /* The water the Terrain Output publishes, covering the final surface (after the layers);
     * has_water false (and water empty) when no water is connected. With water connected to
     * Biome Rules, water_distance and wet substrate come from its coverage instead of the sea
     * inferred from the sea level. */
    bool has_water;
    trn_water water;
    /* The water wired into Biome Rules when it is not the published water (has_biome_water
     * false otherwise: water_distance then measures from water's coverage). Like water, it
     * covers the final surface: sculpt strokes that lower ground under a body's level make it
     * wet there, and water_distance, substrate, biomes, roles and scatter follow. */
    bool has_biome_water;
    trn_water biome_water;
    /* The palette's placements on the final surface (trn_generate_options.palette; empty
     * without one), the per-rule report of how they were chosen, and the candidates they were
     * refiltered from when those differ (a graph's Scatter Palette node placed them before the
     * layers); scatter_base is empty when the instances are their own candidates. Sessions
     * refilter the candidates after edits, so undo restores identities. Rule indices refer to
     * the caller's palette. */
    trn_instances instances;
    trn_instances scatter_base;
    /* The candidates came from the graph: a Scatter Palette node connected to the Terrain
     * Output's instances pin placed them on its field, and instances are their refilter on the
     * final surface (scatter_base holds them, even when the node placed none). */
    bool scatter_from_graph;
    trn_scatter_report scatter;
    /* Surface role per sample (trn_surface_role), when trn_generate_options.roles asked; NULL
     * otherwise. */
    uint8_t *roles;
    /* Signed erosion transport per sample (metres; < 0 cut, > 0 deposition) of the graph's
     * erosion upstream of the output (trn_graph_value.transport of the published field; the
     * layers' sculpt strokes add none); NULL when none. */
    float *transport;
} trn_generated;

typedef struct trn_generate_options {
    int threads;                 /* 0 = OpenMP default; results never depend on it */
    trn_erosion_quality quality; /* TRN_EROSION_FINAL (default) or TRN_EROSION_PREVIEW */
    trn_graph_cache *cache;      /* graph node results kept between generations; NULL = none */
    uint64_t max_work;           /* work budget of each graph node and of the layers' strokes
                                    together (graph.h): 0 = TRN_WORK_BUDGET_DEFAULT,
                                    TRN_WORK_UNLIMITED = no limit */
    const trn_palette *palette;  /* resolved palette (trn_palette_resolve), borrowed: its rules
                                    are placed on the final surface into out->instances. NULL:
                                    nothing is placed */
    uint64_t max_placements;     /* placement ceiling, 0: TRN_SCATTER_DEFAULT_MAX_PLACEMENTS */
    bool roles;                  /* classify the final surface into out->roles */
    uint64_t max_memory;         /* memory budget of the graph's results (graph.h): 0 =
                                    TRN_MEMORY_BUDGET_DEFAULT, TRN_MEMORY_UNLIMITED = none */
} trn_generate_options;

/* Generate: validate, evaluate the recipe's graph (trn_graph_from_recipe: without recipe.graph,
 * the default landform) into the base heights, derive context, assign biomes (the recipe's rules
 * when a Biome Rules node feeds the output, else the default biome). With strokes
 * (layers.h, docs/recipes.md "Layers and edits: evaluation"): water distance on the landform
 * base, then regions' landform blend, sculpt layers, protection, biomes on the final surface,
 * painted regions and the exclusion mask. Before anything runs, the graph's nodes and the
 * strokes are held to options->max_work (TRN_ERR_LIMIT naming the node and parameter, or the
 * stroke: "edits[3]: ..."); strokes cost one unit per sample inside each stamp's reach.
 * Progress stages: "node ID: STAGE" for each graph node
 * (the implicit graph's "node landform: landform"), "water distance", "biomes". On failure or
 * cancel *out is left empty. */
trn_status trn_recipe_generate(const trn_recipe *recipe, const trn_generate_options *options,
                               trn_generated *out, trn_progress_fn progress, void *user,
                               trn_error *err);

/* The published heights of a recipe's graph (trn_graph_from_recipe) tile by tile, as
 * trn_graph_evaluate_tiles delivers them, with the recipe's sculpt and protection strokes
 * replayed on them: the heights trn_recipe_generate publishes, bit for bit. The rows of tiles
 * the strokes reach (the union of their stamps' boxes) are held in memory until the
 * last of them is evaluated, then delivered in order. With a window (tiles->samples_x), the
 * tiles around the strokes that meet it (and those that meet theirs) are evaluated as well and
 * only the window's tiles delivered. Regions and exclusions leave the heights alone; a region
 * whose biome blends in its own landform is refused (TRN_ERR_UNSUPPORTED). tiles->node_id set:
 * no strokes, as trn_graph_evaluate_tiles. */
trn_status trn_recipe_evaluate_tiles(const trn_recipe *recipe, const trn_graph *graph,
                                     const trn_graph_options *options,
                                     const trn_graph_tile_options *tiles, trn_graph_tile_sink sink,
                                     void *user, trn_progress_fn progress, void *progress_user,
                                     trn_error *err);

/* What trn_recipe_evaluate_tiles holds for the strokes with tiles of tile samples, in bytes:
 * the rows of tiles their stamps reach, the width of the world, and a copy of their box (0
 * without sculpt or protection strokes). Fails as it would on a region it refuses. */
trn_status trn_recipe_tiles_held(const trn_recipe *recipe, uint32_t tile, uint64_t *bytes,
                                 trn_error *err);

/* The context of sample (i, j) of a generated terrain. */
void trn_generated_context(const trn_generated *gen, const trn_recipe *recipe, uint32_t i,
                           uint32_t j, trn_sample_context *ctx);

void trn_generated_dispose(trn_generated *gen);

/* What the placement filters see on a generated terrain: its final heights, biome labels, slope,
 * moisture (computed when a rule has a moisture band), water distance, wet samples (water
 * distance 0: the published water's coverage, else the inferred sea) and exclusion mask, and the
 * recipe's "scatter" sub-seed. The buffers it allocates are owned by the env: free them with
 * trn_generated_scatter_env_dispose. */
typedef struct trn_generated_scatter_env {
    trn_scatter_env env;
    uint8_t *wet;    /* owned */
    float *moisture; /* owned, NULL when no rule reads it */
} trn_generated_scatter_env;

trn_status trn_generated_scatter_env_init(const trn_generated *gen, const trn_recipe *recipe,
                                          const trn_palette *palette,
                                          trn_generated_scatter_env *out, trn_error *err);
void trn_generated_scatter_env_dispose(trn_generated_scatter_env *env); /* NULL-safe */

/* Classify a generated terrain's final surface into surface roles (roles.h), one byte per sample
 * (caller-allocated, trn_field_sample_count entries): slope; gen->transport when present; flow
 * accumulation of a drainage of the final surface (so sculpted valleys carry their channels);
 * moisture; the published water's coverage (else the inferred sea: water distance 0) and water
 * distance; each biome's allow_snow with the recipe's snow_line (no snow without one); the other
 * thresholds at trn_roles_params_default. params NULL: those defaults. Errors: as
 * trn_roles_classify and trn_drainage_compute; TRN_ERR_NO_MEMORY. */
trn_status trn_generated_classify_roles(const trn_generated *gen, const trn_recipe *recipe,
                                        const trn_roles_params *params, uint8_t *roles,
                                        trn_error *err);
/* The roles parameters of a recipe: trn_roles_params_default with snow_height from the recipe's
 * snow_line (INFINITY without one). */
void trn_recipe_roles_params(const trn_recipe *recipe, trn_roles_params *params);

#ifdef __cplusplus
}
#endif

#endif
