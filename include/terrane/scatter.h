/* Scattering a palette's placement rules onto terrain: site lattices, filters, refilter. */
#ifndef TERRANE_SCATTER_H
#define TERRANE_SCATTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/palette.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The placement contract (docs/scatter.md has the long form):
 * - Each rule has a fixed lattice of step s = candidate_spacing over the terrain's extent
 *   [0, size_x] x [0, size_z]: site (cx, cz) for 0 <= cx < ceil(size_x / s), 0 <= cz <
 *   ceil(size_z / s) sits at ((cx + jx) * s, (cz + jz) * s), jx and jz in [0, 1); sites beyond
 *   the extent are not candidates. Every draw of a site (jitter, selection u, yaw, scale) hashes
 *   (scatter sub-seed, rule id, cx, cz), never the rule's position or the grid's resolution.
 * - Selection: u < t * c with t = density x art/category multipliers x s^2 and c the cluster
 *   factor at the site: (1 - strength) + strength * 3 * w, w smooth value noise of period
 *   cluster_size whose lattice values are squares of uniform draws (mean 1/3, so c has mean 1).
 * - Spacing: the site's priority is q = u / c (smaller wins; equal q: smaller (cz, cx) wins). A
 *   selected site is removed when a site of higher priority lies closer than spacing. A site
 *   of higher priority than a selected one is selected too, whatever the density, and no
 *   filter enters, so spacing is decided against fixed potential sites: density and
 *   environment edits only remove sites (a removed site frees nobody) and no two placed sites
 *   are closer than spacing.
 * - Filters at the site's nearest sample, first failing reason counted: a NaN height (hole),
 *   wet, excluded (>= 128), biome, slope, moisture, water distance. Height: the terrain
 *   triangles (trn_field_height_at). */

/* What the placement sees. Per-sample arrays use the field's layout ((cells_x + 1) x
 * (cells_z + 1), row by row); NULL leaves a layer out. Pointers are borrowed. */
typedef struct trn_scatter_env {
    const trn_field *field;         /* grid, extent and heights (required) */
    const uint8_t *biome;           /* biome label per sample, TRN_LABEL_NONE for none */
    const char *const *biome_names; /* label -> name, biome_name_count entries */
    uint32_t biome_name_count;
    const float *slope;          /* degrees per sample; NULL: trn_field_slope_at */
    const float *moisture;       /* 0..1 per sample; needed by rules with a moisture band */
    const float *water_distance; /* units to the nearest wet sample; NULL: nothing wet */
    const uint8_t *wet;          /* nonzero: wet sample (water always blocks) */
    const uint8_t *exclusion;    /* 0..255; >= 128 blocks (authored exclusions, protection) */
    uint64_t scatter_seed;       /* trn_subseed(world_seed, "scatter") */
} trn_scatter_env;

/* 2^25 lattice sites over all rules: a site costs about 4 us to place and write (67 M sites took
 * 257 s on a quiet machine), so the default stays within a few minutes. */
#define TRN_SCATTER_DEFAULT_MAX_CANDIDATES 33554432ull
#define TRN_SCATTER_DEFAULT_MAX_SPACING_CHECKS 4294967296ull /* 2^32 neighbour looks */
/* 2,000,000 instances: about 430 MB of JSON, 140 MB of CSV. */
#define TRN_SCATTER_DEFAULT_MAX_PLACEMENTS 2000000ull

typedef struct trn_scatter_options {
    int threads;                 /* 0: OpenMP's default; the result never depends on it */
    uint64_t max_candidates;     /* work budget, 0: TRN_SCATTER_DEFAULT_MAX_CANDIDATES */
    uint64_t max_spacing_checks; /* 0: TRN_SCATTER_DEFAULT_MAX_SPACING_CHECKS */
    uint64_t max_placements;     /* ceiling, 0: TRN_SCATTER_DEFAULT_MAX_PLACEMENTS */
} trn_scatter_options;

/* Why a selected candidate was not placed, in the order the checks run. */
typedef enum trn_scatter_filter {
    TRN_SCATTER_FILTER_HOLE = 0, /* the surface is NaN there */
    TRN_SCATTER_FILTER_WATER = 1,
    TRN_SCATTER_FILTER_EXCLUSION = 2,
    TRN_SCATTER_FILTER_BIOME = 3,
    TRN_SCATTER_FILTER_SLOPE = 4,
    TRN_SCATTER_FILTER_MOISTURE = 5,
    TRN_SCATTER_FILTER_WATER_DISTANCE = 6,
    TRN_SCATTER_FILTER_COUNT
} trn_scatter_filter;

/* "hole", "water", "exclusion", "biome", "slope", "moisture", "water_distance"; "unknown". */
const char *trn_scatter_filter_name(trn_scatter_filter filter);

/* Per rule: selected = sum(filtered) + spaced_out + placed + truncated. */
typedef struct trn_scatter_rule_report {
    uint64_t candidates; /* lattice sites inside the extent (0 for a zero-density rule) */
    uint64_t selected;   /* passed the density and cluster draw */
    uint64_t filtered[TRN_SCATTER_FILTER_COUNT];
    uint64_t spaced_out; /* passed the filters, removed by a higher-priority site */
    uint64_t placed;     /* in the output */
    uint64_t truncated;  /* dropped by the placement ceiling */
} trn_scatter_rule_report;

typedef struct trn_scatter_report {
    trn_scatter_rule_report *rules; /* rule_count entries (owned) */
    uint32_t rule_count;
    uint64_t candidates_estimate; /* what the budget was checked against */
    uint64_t spacing_checks_estimate;
    uint64_t placed;
    uint64_t truncated; /* > 0: the ceiling cut the output (the first placements are kept) */
} trn_scatter_report;

/* Free a report's arrays and zero it. NULL is a no-op. */
void trn_scatter_report_dispose(trn_scatter_report *report);

/* The work a run would do, as checked against the budget: candidates = sum over rules with a
 * positive density of ceil(size_x / s) * ceil(size_z / s); spacing checks = sum over rules with
 * a positive spacing of ceil(lattice sites x min(1, t)) x ((2 * ceil(spacing / s) + 1)^2 - 1).
 * Either output may be NULL. Errors: as trn_scatter_run's argument checks. */
trn_status trn_scatter_estimate(const trn_palette *palette, const trn_scatter_env *env,
                                uint64_t *candidates, uint64_t *spacing_checks, trn_error *err);

/* Scatter every rule of palette over env into out (sorted by rule, cz, cx; previous content
 * is not freed: pass an empty trn_instances). report (may be NULL) is filled on success and
 * on TRN_ERR_LIMIT (its estimates). options NULL: defaults.
 * Errors: TRN_ERR_INVALID_ARGUMENT for a missing field or heights, a per-sample layer a rule
 * needs (biomes without labels, a moisture band without moisture), or a rule parameter out of
 * range, naming the placement and parameter; TRN_ERR_LIMIT when the candidate or spacing-check
 * estimate exceeds its budget, naming the rule costing most and the parameter to change (the
 * estimate equal to the budget runs); TRN_ERR_NO_MEMORY; TRN_ERR_CANCELLED when progress asks
 * (stage "scatter"). out is untouched on failure. Output is bit-identical for any thread
 * count. Thread-safe for distinct outputs. */
trn_status trn_scatter_run(const trn_palette *palette, const trn_scatter_env *env,
                           const trn_scatter_options *options, trn_instances *out,
                           trn_scatter_report *report, trn_progress_fn progress, void *user,
                           trn_error *err);

/* A part of a world to scatter on its own (trn_scatter_run_window): the world's grid and
 * extent, where the env's field starts in it, and the rectangle whose sites are placed. */
typedef struct trn_scatter_window {
    uint32_t cells_x, cells_z; /* the world's grid */
    double size_x, size_z;     /* and extent */
    uint32_t i0, j0;           /* the world sample the env's field (and its layers) start at */
    /* The sites placed: x0 <= x < x1 and z0 <= z < z1 (a bound beyond the extent takes in its
     * edge: sites lie within [0, size]). */
    double x0, z0, x1, z1;
} trn_scatter_window;

/* The world samples [*i0, *i1] x [*j0, *j1] the sites of a window's rectangle read (their
 * terrain triangle, nearest sample and Horn's slope around it, clamped to the world): the env of
 * trn_scatter_run_window must hold at least these. Errors: TRN_ERR_INVALID_ARGUMENT for an empty
 * world or rectangle. */
trn_status trn_scatter_window_samples(const trn_scatter_window *window, uint32_t *i0,
                                      uint32_t *j0, uint32_t *i1, uint32_t *j1, trn_error *err);

/* trn_scatter_run over a world too large to hold, one rectangle at a time: env's field holds
 * samples window->i0.. x window->j0.. of the world (its cells at the world's spacing, bit for
 * bit; its per-sample layers in the same layout), and out receives exactly the instances
 * trn_scatter_run gives the whole world whose position lies in the rectangle, bit for bit and in
 * the same order (rule, cz, cx): the lattices, draws and spacing belong to the world (spacing
 * reads only the hashed sites around, never a sample), and each site's filters read the samples
 * around it. The budgets are checked against the whole world's lattices, as trn_scatter_run
 * checks them; there is no placement ceiling (the caller sums the rectangles and compares; the
 * whole world's run keeps the first max_placements in (rule, cz, cx) order). report (may be
 * NULL) counts the rectangle's sites. A water_distance layer, where given, must be the whole
 * world's distances cut to the window. Errors: trn_scatter_run's, and TRN_ERR_INVALID_ARGUMENT
 * when the field does not hold trn_scatter_window_samples or has another spacing. */
trn_status trn_scatter_run_window(const trn_palette *palette, const trn_scatter_env *env,
                                  const trn_scatter_window *window,
                                  const trn_scatter_options *options, trn_instances *out,
                                  trn_scatter_report *report, trn_error *err);

/* Refilter after local edits: each base instance snaps to edited's surface (y) and is checked
 * again against the filters of its rule; it keeps its identity (rule, cx, cz), x, z, yaw and
 * scale. Never adds a candidate; with the environment base came from, out equals base. report
 * (may be NULL): per rule, selected = base count, filtered by reason, placed. Errors as
 * trn_scatter_run's argument checks, TRN_ERR_MISMATCH for an instance naming a rule beyond the
 * palette, TRN_ERR_NO_MEMORY. out untouched on failure. */
trn_status trn_scatter_refilter(const trn_palette *palette, const trn_instances *base,
                                const trn_scatter_env *edited, trn_instances *out,
                                trn_scatter_report *report, trn_error *err);

/* An edited view over immutable base instances, for brush-rate updates: one entry per base
 * instance. */
typedef struct trn_scatter_view {
    double *y;        /* height on the edited surface */
    uint8_t *blocked; /* 0: placed; else 1 + the trn_scatter_filter that removed it */
    size_t count;     /* base->count */
} trn_scatter_view;

/* A view where every base instance is placed at its base height. */
trn_status trn_scatter_view_init(const trn_instances *base, trn_scatter_view *view, trn_error *err);
void trn_scatter_view_dispose(trn_scatter_view *view);

/* Re-evaluate only the base instances within the changed rectangle [x0, x1] x [z0, z1]
 * (terrain-local units: the samples the edit changed), widened by two cells so the nearest
 * sample and Horn's slope stencil are covered; finds them by binary search (base must be
 * sorted by rule, cz, cx as trn_scatter_run writes it), so the cost follows the rectangle,
 * not the terrain. changed (may be NULL) receives how many entries flipped placed/blocked.
 * Afterwards the view equals trn_scatter_refilter's result for edited when every sample that
 * differs from the view's last environment lies in the rectangle. */
trn_status trn_scatter_refilter_window(const trn_palette *palette, const trn_instances *base,
                                       const trn_scatter_env *edited, double x0, double z0,
                                       double x1, double z1, trn_scatter_view *view,
                                       size_t *changed, trn_error *err);

/* The placed entries of a view as instances (y from the view). */
trn_status trn_scatter_view_collect(const trn_instances *base, const trn_scatter_view *view,
                                    trn_instances *out, trn_error *err);

/* A 64-bit digest of everything in palette that placement reads or instances name: the
 * art, grass, tree and rock multipliers and every rule in order with all its fields (id, model,
 * prefab, category, density, candidate_spacing, spacing, scale, yaw, biomes, the slope,
 * moisture and water_distance bands, cluster size and strength, collision); not the palette's
 * name nor its material set. Numbers hash by value (-0 as 0), texts with their lengths, so
 * equal palettes give equal digests whatever their documents' layout; any edit to a rule gives
 * another (up to hash collisions). Graph cache keys of Scatter Palette nodes hash it. NULL
 * gives 0. Thread-safe. */
uint64_t trn_palette_digest(const trn_palette *palette);

/* Instances as text in a malloc'd NUL-terminated buffer (*text, *size without the NUL; the
 * caller frees). Each instance: id "<rule id>/<cx>_<cz>", rule, x, y, z, yaw, scale, model or
 * prefab, collision ("static", "none", "trigger"). JSON: {"instances": [...]} one object a
 * line; CSV: a header line "id,rule,x,y,z,yaw,scale,model,prefab,collision" and one row each
 * (fields with a comma, quote or newline quoted). Numbers read back exactly. Errors:
 * TRN_ERR_MISMATCH for a rule index beyond the palette, TRN_ERR_INVALID_ARGUMENT for a
 * non-finite number, TRN_ERR_NO_MEMORY. */
trn_status trn_instances_write_json(const trn_palette *palette, const trn_instances *instances,
                                    char **text, size_t *size, trn_error *err);
trn_status trn_instances_write_csv(const trn_palette *palette, const trn_instances *instances,
                                   char **text, size_t *size, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Suppressing placements (Terrain3D.scatter_exclusions): a scene's terrain placement lists the
 * stable keys of generated placements it has converted to authored objects or removed. The
 * list belongs to the scene, not the terrain asset: it is applied after placement, survives
 * regeneration (keys that match nothing are counted, not refused) and never causes refills.
 * ------------------------------------------------------------------------------------------- */

/* Bytes enough for any instance key: a rule id, '/', two 64-bit integers, '_' and the NUL. */
#define TRN_INSTANCE_KEY_MAX (TRN_PALETTE_ID_MAX + 44u)

/* The stable key of an instance, "<rule id>/<cx>_<cz>" (e.g. "pine/10_4"): the id the JSON and
 * CSV writers print. Writes at most size bytes, always NUL-terminated when size > 0, and returns
 * the key's length (as snprintf: a return >= size means it was cut); 0 with buf "" when palette
 * or instance is NULL or the instance names a rule beyond the palette. Thread-safe. */
size_t trn_instance_key(const trn_palette *palette, const trn_instance *instance, char *buf,
                        size_t size);

/* A parsed exclusion list: unique nonempty keys in document order. */
typedef struct trn_scatter_exclusions {
    char **keys; /* owned */
    size_t count;
} trn_scatter_exclusions;

/* Parse an exclusion list from JSON text, in any of three forms: a bare array of keys
 * (["pine/10_4", ...]); a bare Terrain3D component ({"scatter_exclusions": [...]}, other members
 * ignored); or a scene entity or prefab document ({"components": {"Terrain3D": {...}}}, other
 * components ignored). A Terrain3D without scatter_exclusions gives an empty list (it is
 * optional). Every entry must be a nonempty string listed once. Errors (TRN_ERR_JSON) carry path
 * (the file name, may be NULL), byte offset, line and column, and the JSON path:
 * "components.Terrain3D.scatter_exclusions[3]: duplicate key 'pine/10_4' (first at [1])",
 * "[2]: expected a placement key string, found 5", "[0]: expected a nonempty placement key",
 * "components: expected a Terrain3D component"; invalid JSON as the palette parser reports it;
 * TRN_ERR_NO_MEMORY. On failure out is empty. */
trn_status trn_scatter_exclusions_parse(const char *text, size_t size, const char *path,
                                        trn_scatter_exclusions *out, trn_error *err);
/* Free a list's keys and zero it. NULL is a no-op. */
void trn_scatter_exclusions_dispose(trn_scatter_exclusions *exclusions);

/* Remove from inout every instance whose key (trn_instance_key) the list holds; the others keep
 * their order and every field bit for bit, and nothing is placed instead. suppressed (may be
 * NULL) receives how many instances were removed, unmatched (may be NULL) how many keys matched
 * no instance. Errors: TRN_ERR_INVALID_ARGUMENT for NULL palette, instances or list;
 * TRN_ERR_MISMATCH for an instance naming a rule beyond the palette; TRN_ERR_NO_MEMORY; inout
 * is untouched on failure. Thread-safe for distinct instances. */
trn_status trn_instances_suppress(const trn_palette *palette, trn_instances *inout,
                                  const trn_scatter_exclusions *exclusions, size_t *suppressed,
                                  size_t *unmatched, trn_error *err);

/* As trn_instances_suppress, for a world whose instances come in pieces (tiles): matched holds
 * one byte a key, in the list's order (may be NULL for an empty list); each key that matches an
 * instance of this piece has its byte set to 1, the others are left as they are, so that after
 * every piece the keys still at 0 matched nothing anywhere. Pieces that overlap may see one
 * instance twice: suppressed counts this piece's removals, the caller counts each once.
 * Errors as trn_instances_suppress's (TRN_ERR_INVALID_ARGUMENT also for a nonempty list without
 * matched); inout and matched are untouched on failure. Thread-safe for distinct instances and
 * distinct matched. */
trn_status trn_instances_suppress_marking(const trn_palette *palette, trn_instances *inout,
                                          const trn_scatter_exclusions *exclusions,
                                          uint8_t *matched, size_t *suppressed, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
