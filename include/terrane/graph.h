/* Terrain module graphs: typed nodes and pins, validation diagnostics, cached evaluation. */
#ifndef TERRANE_GRAPH_H
#define TERRANE_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/drainage.h"
#include "terrane/erosion.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The graph document's format_version this build reads and writes. */
#define TRN_GRAPH_FORMAT_VERSION 1u

/* ---------------------------------------------------------------------------------------------
 * The registry: every node type with its pins and parameters. Static data, thread-safe.
 * ------------------------------------------------------------------------------------------- */

/* What a pin carries. An input accepts one link from an output of the same kind. Instances
 * are a Scatter Palette node's candidates; Terrain Output publishes them. */
typedef enum trn_pin_kind {
    TRN_PIN_HEIGHTFIELD = 0,
    TRN_PIN_MASK = 1,
    TRN_PIN_DRAINAGE = 2,
    TRN_PIN_WATER = 3,
    TRN_PIN_INSTANCES = 4,
    TRN_PIN_KIND_COUNT
} trn_pin_kind;

/* "heightfield", "mask", "drainage", "water", "instances". */
const char *trn_pin_kind_name(trn_pin_kind kind);

typedef struct trn_pin_spec {
    const char *name;  /* "field", "mask", "a", ... */
    trn_pin_kind kind; /* what it carries */
    bool required;     /* inputs only: generation needs a link */
    const char *description;
} trn_pin_spec;

typedef enum trn_param_type {
    TRN_PARAM_NUMBER = 0,  /* finite double in [min, max] */
    TRN_PARAM_INTEGER = 1, /* whole number in [min, max] */
    TRN_PARAM_STRING = 2,  /* any UTF-8 text (a landform name, a comment) */
    TRN_PARAM_CHOICE = 3,  /* one of `choices` ("fbm|ridged") */
    TRN_PARAM_POINTS = 4,  /* [[x, z], ...] of finite float-range numbers, at least min_points */
    TRN_PARAM_POINTS3 = 5, /* [[x, y, z], ...] of finite float-range numbers, at least min_points */
    TRN_PARAM_VECTOR = 6,  /* exactly min_points numbers, each in [min, max] ([r, g, b, a]) */
    TRN_PARAM_JSON = 7,    /* a JSON array or object the node type checks itself (edits) */
} trn_param_type;

typedef struct trn_param_spec {
    const char *name;
    trn_param_type type;
    bool optional;           /* absent means "derived" (see description), not a default value */
    double def;              /* number / integer default */
    double min, max;         /* range of numbers and integers (inclusive unless below) */
    bool min_exclusive;      /* the value must be > min (sizes) */
    const char *def_text;    /* string / choice default; points default as JSON ("[[0,0],...]") */
    const char *choices;     /* choice: alternatives separated by '|' */
    uint32_t min_points;     /* points; 3 or more: a closed ring (its closing edge checked too) */
    const char *description; /* one line, with the unit */
    /* Numbers only: words accepted in place of a number, separated by '|' ("spill"); NULL for
     * none. trn_graph_param_text returns the word, trn_graph_param_number the default then. */
    const char *keywords;
} trn_param_spec;

typedef struct trn_node_type {
    const char *name;     /* stable type id: "landform", "height_blend", ... */
    const char *title;    /* "Height Blend" */
    const char *category; /* "generator", "mask", "modifier", "simulation", "water",
                             "appearance", "scatter", "output", "note" */
    const char *description;
    uint32_t version; /* bumped when its output for the same inputs changes; in its cache key */
    const trn_pin_spec *inputs;
    uint32_t input_count;
    const trn_pin_spec *outputs;
    uint32_t output_count;
    const trn_param_spec *params;
    uint32_t param_count;
    bool quality_dependent; /* preview and final differ (erosion) */
} trn_node_type;

uint32_t trn_node_type_count(void);
/* Index order is the registry's (generators, masks, modifiers, simulation, appearance, output,
 * notes); NULL past the end. */
const trn_node_type *trn_node_type_at(uint32_t index);
/* NULL for an unknown name. */
const trn_node_type *trn_node_type_find(const char *name);
/* A node type's pin by name, or NULL; *index (may be NULL) receives its position. */
const trn_pin_spec *trn_node_type_input(const trn_node_type *type, const char *pin,
                                        uint32_t *index);
const trn_pin_spec *trn_node_type_output(const trn_node_type *type, const char *pin,
                                         uint32_t *index);
const trn_param_spec *trn_node_type_param(const trn_node_type *type, const char *name);

/* How far a node reads around each sample it writes: what decides whether it can run tile by
 * tile (terrane generate --tiles). Pointwise: sample (i, j) of each output depends on sample
 * (i, j) of the inputs and on the sample's world position only. Neighbourhood: on the inputs
 * within halo samples each way (a square window). Global: on the whole grid (drainage,
 * depression filling, flow accumulation, stream power, basin water, droplet erosion, a DEM
 * resampled from its file); such a node runs on the assembled grid. None: never evaluated
 * (comments). Tile-capable nodes read only heightfield and mask inputs. */
typedef enum trn_node_reach_kind {
    TRN_REACH_UNDECLARED = 0, /* a registry entry without a declaration (a bug) */
    TRN_REACH_NONE,
    TRN_REACH_POINTWISE,
    TRN_REACH_NEIGHBOURHOOD,
    TRN_REACH_GLOBAL,
} trn_node_reach_kind;

typedef struct trn_node_reach {
    trn_node_reach_kind kind;
    uint32_t halo;  /* neighbourhood: samples each way; 0 otherwise */
    char why[160];  /* what sets it: "Horn's 3x3 gradient", "drains across the whole grid" */
} trn_node_reach;

/* "pointwise", "neighbourhood", "global", "none", "undeclared". */
const char *trn_node_reach_name(trn_node_reach_kind kind);

/* ---------------------------------------------------------------------------------------------
 * The graph as plain data: recipe.graph is
 *   {"format_version": 1, "output": NODE_ID,
 *    "nodes": [{"id": ID, "type": TYPE, "position": [x, y], "params": {...},
 *               "inputs": {PIN: {"node": ID, "pin": OUTPUT_PIN}, ...}}, ...]}
 * "position", "params" and "inputs" may be omitted; a link's "pin" may be omitted when the
 * source node has one output. Parameters keep what the document says (a draft may hold
 * unknown or out-of-range ones; trn_graph_check reports them). Strings are owned.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_value_type {
    TRN_VALUE_NUMBER = 0, /* also whole numbers */
    TRN_VALUE_STRING = 1,
    TRN_VALUE_BOOL = 2,
    TRN_VALUE_POINTS = 3, /* numbers: an array of [x, z] pairs or [x, y, z] triples, or a flat
                             array of numbers (point_dim 2, 3, 1) */
    TRN_VALUE_OTHER = 4,  /* anything else (kept as JSON text for the diagnostics and saving) */
} trn_value_type;

typedef struct trn_graph_param {
    char *name;
    trn_value_type type;
    double number;
    char *text; /* string, or the JSON text of an OTHER value */
    bool boolean;
    double *points; /* point_count points of point_dim numbers each */
    uint32_t point_count;
    uint32_t point_dim; /* 2: [[x, z], ...]; 3: [[x, y, z], ...]; 1: a flat [n, ...] */
    /* Internal: an OTHER value as the tree its text reads as, kept when the graph was read so
     * nothing reads the text again (a jansson json_t, shared by copies); NULL when not kept. */
    void *tree;
} trn_graph_param;

typedef struct trn_graph_link {
    char *pin;    /* the input pin */
    char *node;   /* the source node id */
    char *output; /* the source's output pin; NULL = its only output */
} trn_graph_link;

typedef struct trn_graph_node {
    char *id;   /* unique, stable; 1..63 bytes */
    char *type; /* registry name (an unknown one is reported, not refused) */
    bool has_position;
    double x, y; /* canvas layout only: never in a cache key */
    trn_graph_param *params;
    uint32_t param_count;
    trn_graph_link *inputs;
    uint32_t input_count;
} trn_graph_node;

typedef struct trn_graph {
    uint32_t format_version;
    char *output; /* the Terrain Output node's id; NULL when unset (a draft) */
    trn_graph_node *nodes;
    uint32_t node_count;
} trn_graph;

void trn_graph_dispose(trn_graph *graph);

/* Parse a graph object (the value of recipe.graph) from JSON text. Fails only for a document
 * that is not a graph at all: not an object, format_version missing or not a whole number
 * (TRN_ERR_JSON), newer than TRN_GRAPH_FORMAT_VERSION (TRN_ERR_VERSION), nodes not an array of
 * objects, a node without a string id and type, a position that is not two numbers, params or
 * inputs not objects, a link that is not {"node", "pin"}, unknown keys outside params. Errors
 * carry the JSON path ("nodes[2].inputs.mask.node") and line/column. Everything a draft may
 * still get wrong (unknown types and params, bad values, missing or mismatched links, cycles,
 * duplicate ids, the output) parses and is reported by trn_graph_check. */
trn_status trn_graph_parse(const char *text, size_t size, const char *path, trn_graph *graph,
                           trn_error *err);

/* The graph a recipe generates with: its recipe.graph, or, when it has none, the implicit
 * graph  landform (the default landform) -> biome_rules -> terrain_output  with ids "landform",
 * "biome_rules" and "output", which generates exactly what recipes without graphs always did. */
trn_status trn_graph_from_recipe(const trn_recipe *recipe, trn_graph *graph, trn_error *err);

/* Canonical JSON of a graph: nodes in document order, keys sorted, links written in full,
 * numbers shortest round-trip. identity = true leaves out what cannot change generation
 * (positions and comment nodes) and sorts nodes by id: the text recipe cache keys hash.
 * *text is malloc'd; caller frees. */
trn_status trn_graph_to_json(const trn_graph *graph, bool identity, char **text, size_t *size,
                             trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Validation. A draft may be incomplete; trn_graph_check lists everything generation would
 * refuse (errors) and what looks wrong but generates (warnings). Generation runs the same check
 * first and fails with TRN_ERR_VALIDATION (the first error's message, node id and position) when
 * there is an error.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_graph_severity {
    TRN_GRAPH_WARNING = 1,
    TRN_GRAPH_ERROR = 2,
} trn_graph_severity;

/* Check ids (stable, listed in docs/graph.md): errors duplicate-id, bad-id, unknown-type,
 * unknown-param, bad-param, unknown-input, unknown-node, unknown-output-pin,
 * ambiguous-output-pin, kind-mismatch, self-link, missing-input (a warning on a node that does
 * not feed the output), cycle, output-unset, output-unknown, output-not-terminal, comment-pins,
 * landform-unknown, palette-missing (a scatter_palette node in a recipe without a palette);
 * warning unreachable. (Inputs on different grids are refused when evaluated,
 * TRN_ERR_MISMATCH, as only evaluation knows a result's grid.) */
typedef struct trn_graph_diagnostic {
    trn_graph_severity severity;
    char check[32];
    char node_id[64]; /* "" for graph-level findings */
    char pin[32];     /* input pin or parameter name, "" when none */
    char message[512];
    /* The JSON path inside the graph object ("nodes[3].inputs.mask") and, once located
     * (trn_graph_diagnostics_locate), the position in the document text. */
    char path[128];
    int line, column; /* 0 when not located */
    int64_t offset;   /* -1 when not located */
} trn_graph_diagnostic;

typedef struct trn_graph_diagnostics {
    trn_graph_diagnostic *items;
    size_t count, capacity;
} trn_graph_diagnostics;

void trn_graph_diagnostics_dispose(trn_graph_diagnostics *diagnostics);
size_t trn_graph_diagnostics_errors(const trn_graph_diagnostics *diagnostics);

/* Check a graph against the registry and (when recipe is not NULL) the recipe it belongs to
 * (landform names). Appends to *out (initialise it zeroed). Fails only for TRN_ERR_NO_MEMORY. */
trn_status trn_graph_check(const trn_graph *graph, const trn_recipe *recipe,
                           trn_graph_diagnostics *out, trn_error *err);

/* The reach of a node of a checked graph (its effective parameters set it: a Landform with an
 * evolution is global, a Slope Mask reads one sample each way) over the recipe's grid. False
 * (out zeroed, kind TRN_REACH_UNDECLARED) for an unknown type. */
bool trn_graph_node_reach(const trn_graph_node *node, const trn_recipe *recipe,
                          trn_node_reach *out);

/* Fill line, column and offset of each diagnostic from the document the graph came from:
 * graph_path is where the graph object sits in it ("graph" in a bare recipe, "recipe.graph" in
 * a Terrain asset, "" for a graph document of its own). */
void trn_graph_diagnostics_locate(trn_graph_diagnostics *diagnostics, const char *text, size_t size,
                                  const char *graph_path);

/* ---------------------------------------------------------------------------------------------
 * Evaluation and caching.
 * ------------------------------------------------------------------------------------------- */

/* Node results kept between evaluations: in memory (least recently used beyond memory_limit)
 * and, when dir is not NULL, as files DIR/<key>.tnc that later processes reuse (written
 * atomically; unreadable or mismatching files are recomputed, never trusted). Results of
 * preview evaluations are kept in memory only, under preview keys, so they never stand in for
 * a final result and never reach the directory. Not thread-safe: one evaluation at a time. */
typedef struct trn_graph_cache trn_graph_cache;

/* memory_limit: bytes of results kept in memory (0 = 1 GiB). dir is created when missing. */
trn_status trn_graph_cache_new(const char *dir, size_t memory_limit, trn_graph_cache **out,
                               trn_error *err);
/* NULL is a no-op. */
void trn_graph_cache_free(trn_graph_cache *cache);

/* Keep the cache directory's result files within bytes (0: no limit, the default): after each
 * result is written, the least recently written or read files are removed until the folder's
 * results fit (the one just written stays). Only files named as results are ever removed.
 * Trims at once when called. A cache without a directory ignores it. */
void trn_graph_cache_set_disk_limit(trn_graph_cache *cache, uint64_t bytes);

/* The platform cache directory for node results: $XDG_CACHE_HOME/terrane/nodes, or
 * $HOME/.cache/terrane/nodes when XDG_CACHE_HOME is unset or not absolute (the XDG Base
 * Directory rules). TRN_ERR_NOT_FOUND when neither names an absolute folder; the folder is not
 * created here. */
trn_status trn_graph_cache_dir_default(char *buf, size_t size, trn_error *err);

/* The budget the command line and the studio give the platform cache directory: 4 GiB. */
#define TRN_GRAPH_CACHE_DISK_DEFAULT ((uint64_t)4 << 30)

/* What happened to one node in an evaluation. */
typedef enum trn_node_outcome {
    TRN_NODE_EVALUATED = 0,   /* computed now */
    TRN_NODE_REUSED = 1,      /* taken from the cache's memory */
    TRN_NODE_REUSED_DISK = 2, /* read from the cache directory */
    TRN_NODE_SKIPPED = 3,     /* not upstream of the output (or a comment): not evaluated */
} trn_node_outcome;

/* "evaluated", "reused", "reused-disk", "skipped". */
const char *trn_node_outcome_name(trn_node_outcome outcome);

typedef struct trn_node_report {
    char id[64];
    char type[32];
    uint64_t key; /* 0 for skipped nodes */
    trn_node_outcome outcome;
    double cpu_seconds; /* process CPU time of this evaluation (0 when reused) */
    double wall_seconds;
    double cached_cpu_seconds; /* reused: the CPU time the cached result had cost */
    bool has_ledger;           /* erosion: its hydraulic transport totals */
    trn_erosion_ledger ledger;
    /* What the node reports beyond its outputs, or "": proposals a budget truncated, where a
     * routed river ended, the first warning of a water body ("lake 'x': wet ground reaches the
     * boundary below the level at (10, 20)"). */
    char note[256];
} trn_node_report;

/* Work budgets. A recipe is untrusted input, and some parameters (erosion droplets, lifetime and
 * passes, thermal passes, the points of path and polygon masks, the stamps of strokes) set a
 * cost far beyond the grid's size. Before anything runs, each graph node's work is estimated
 * from its parameters and the grid (trn_graph_work) and evaluation refuses a node whose work
 * exceeds the budget, naming it. Work units are sample visits: one droplet step, one sample of
 * one thermal pass, one sample of one noise octave, one sample inside one mask segment's reach
 * (docs/graph.md "Work budgets" lists every node's formula). The default allows every node at
 * default parameters on the largest grid (2^28 samples) and erosion at 20 times its defaults on
 * a 4097 x 4097 grid, and refuses what would run for hours. */
#define TRN_WORK_BUDGET_DEFAULT UINT64_C(10000000000)
/* The evaluated nodes together may take this many budgets of one core's CPU time, each work
 * unit counted at the rate measured for its node type and each budget unit at
 * TRN_WORK_UNIT_NS (many nodes, each within the budget, still add up): 300 s by default. */
#define TRN_WORK_GRAPH_FACTOR 3u
#define TRN_WORK_UNIT_NS 10.0
/* A max_work that turns the budget off (trusted recipes only). */
#define TRN_WORK_UNLIMITED UINT64_MAX
/* Memory budget: an evaluation keeps every evaluated node's outputs until the run is freed, and
 * refuses (TRN_ERR_LIMIT, before any node runs) a graph whose results would hold more than this
 * (an upper estimate from the grid, the output pins and the water bodies each node passes on;
 * docs/graph.md "Memory budget"). 8 GiB: a 4097 x 4097 grid's shipped examples fit with room. */
#define TRN_MEMORY_BUDGET_DEFAULT (UINT64_C(8) << 30)
/* A max_memory that turns the memory budget off. */
#define TRN_MEMORY_UNLIMITED UINT64_MAX

typedef struct trn_graph_options {
    int threads;                 /* 0 = OpenMP default; results never depend on it */
    trn_erosion_quality quality; /* TRN_EROSION_FINAL (default) or TRN_EROSION_PREVIEW */
    trn_graph_cache *cache;      /* NULL = nothing kept between evaluations */
    uint64_t max_work;           /* work one node may cost: 0 = TRN_WORK_BUDGET_DEFAULT,
                                    TRN_WORK_UNLIMITED = no limit */
    /* The recipe's palette, already resolved by the caller (trn_palette_resolve; the graph
     * reads no asset files), borrowed for the call. Scatter Palette nodes place it and hash its
     * digest (trn_palette_digest) into their keys; NULL with such a node upstream of the output
     * is a validation error naming the node. */
    const trn_palette *palette;
    uint64_t max_memory; /* bytes the run's results may hold: 0 = TRN_MEMORY_BUDGET_DEFAULT,
                            TRN_MEMORY_UNLIMITED = no limit */
} trn_graph_options;

/* One evaluation's results: an opaque handle holding (shared with the cache) every evaluated
 * node's outputs. */
typedef struct trn_graph_run trn_graph_run;

/* A read-only view of one output pin's value; valid while the run lives. */
typedef struct trn_graph_value {
    trn_pin_kind kind;
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    const float *values;          /* heightfield heights or mask values, samples floats */
    const trn_drainage *drainage; /* drainage: its arrays (read-only) */
    const float *source;          /* drainage: the heights it was computed from */
    const trn_water *water;       /* water: the bodies and their resolved coverage */
    /* heightfield: signed erosion transport of these heights, samples floats in metres (< 0
     * cut, > 0 deposition), the sum of every erosion upstream as blends weighted it; drainage:
     * its source field's. NULL when no erosion is upstream (docs/graph.md, "Transport"). */
    const float *transport;
    const trn_instances *instances; /* instances: a Scatter Palette's candidates */
} trn_graph_value;

/* Validate (failing with TRN_ERR_VALIDATION on the first error diagnostic, its node id in
 * err->node_id), check every node's work against the budget and the nodes' work together
 * against TRN_WORK_GRAPH_FACTOR budgets (failing with TRN_ERR_LIMIT before any node runs:
 * "graph.nodes[2].params.iterations: node 'erode' (erosion): work ... exceeds the work budget
 * ...", the node id, or the costliest node's, in err->node_id) and evaluate every node upstream of
 * the Terrain Output in dependency order. Each node's cache key hashes its type and version, the
 * generator version, its effective parameters (defaults filled, derived values such as the world
 * seed or a landform's settings resolved), its inputs' keys by pin and the grid; never positions or
 * comments; preview keys of quality-dependent nodes (and everything downstream) differ from final
 * ones. Progress stage "node ID: ..." per node, with erosion reporting within. On failure or cancel
 * *out is NULL and the cache keeps what completed nodes produced. */
trn_status trn_graph_evaluate(const trn_graph *graph, const trn_recipe *recipe,
                              const trn_graph_options *options, trn_graph_run **out,
                              trn_progress_fn progress, void *user, trn_error *err);
void trn_graph_run_free(trn_graph_run *run);

/* Per-node reports in graph document order (every node, skipped ones included). */
const trn_node_report *trn_graph_run_report(const trn_graph_run *run, uint32_t *count);
/* The heightfield published by the Terrain Output. */
trn_status trn_graph_run_terrain(const trn_graph_run *run, trn_graph_value *out, trn_error *err);
/* The water the Terrain Output publishes (its water input, resolved again on the published
 * field when nodes after the water changed the ground), or NULL when none is connected. Valid
 * while the run lives. */
const trn_water *trn_graph_run_water(const trn_graph_run *run);
/* The water connected to the Biome Rules node, on the published field; NULL when none (the
 * rules then infer the sea from the recipe's sea level). */
const trn_water *trn_graph_run_biome_water(const trn_graph_run *run);
/* The instances connected to the Terrain Output's instances pin (a Scatter Palette node's
 * candidates on its input field, before the recipe's layers), or NULL when none is connected.
 * Rule indices refer to trn_graph_options.palette. Valid while the run lives. */
const trn_instances *trn_graph_run_instances(const trn_graph_run *run);
/* Whether a Biome Rules node is upstream of the Terrain Output's field (then the recipe's rules
 * classify the published surface; otherwise every sample gets the default biome). */
bool trn_graph_run_biome_rules(const trn_graph_run *run);
/* An evaluated node's output (pin NULL = its first output). TRN_ERR_NOT_FOUND for a node that
 * was skipped or does not exist or a pin it does not have. */
trn_status trn_graph_run_output(const trn_graph_run *run, const char *node_id, const char *pin,
                                trn_graph_value *out, trn_error *err);
/* An erosion node's signed height change per sample (NULL for other nodes). */
const float *trn_graph_run_change(const trn_graph_run *run, const char *node_id);

/* ---------------------------------------------------------------------------------------------
 * Tiled evaluation: pointwise and neighbourhood nodes run tile by tile, each on its tile grown
 * by the halo the nodes downstream of it need (accumulated along chains), so the bytes equal
 * the whole-grid evaluation's for any tile size and thread count. Global nodes run on the
 * assembled grid. A sink receives the tiles in row order (z, then x).
 * ------------------------------------------------------------------------------------------- */

/* One tile of a float output: samples_x * samples_z values, row by row, whose first is world
 * sample (x0, z0). Return non-zero (with err set) to stop. */
typedef trn_status (*trn_graph_tile_sink)(void *user, uint32_t x0, uint32_t z0,
                                          uint32_t samples_x, uint32_t samples_z,
                                          const float *values, trn_error *err);

typedef struct trn_graph_tile_options {
    uint32_t tile;       /* samples per tile edge, >= 1 (tiles need not divide the grid) */
    const char *node_id; /* NULL: the Terrain Output's published field */
    const char *pin;     /* NULL: the node's first output (a heightfield or mask pin) */
    /* Only the tiles that meet this window of world samples, [x0, x0 + samples_x) x [z0, z0 +
     * samples_z), are delivered (a part of a world, or one process's share of it); samples_x
     * or samples_z 0: every tile. Tiles keep their places on the world's tile grid. */
    uint32_t x0, z0, samples_x, samples_z;
    /* A folder for a disk tile cache (NULL: none): each global node's heightfield and mask
     * outputs go there tile by tile, in the node cache's file format, as soon as no other
     * global node reads them whole, and tiles read them back window by window; the whole grid
     * leaves memory. The cache's own folder inside it is removed at the end. */
    const char *cache_dir;
} trn_graph_tile_options;

/* Validate and check the work budget as trn_graph_evaluate does, then deliver the chosen
 * output's values tile by tile to sink. Grids up to 65537 x 65537 samples (beyond what
 * trn_graph_evaluate holds); a global node upstream works on the whole grid, which may then
 * hold at most 2^31 - 1 samples (TRN_ERR_LIMIT naming the node). options->cache is not used. Progress (may be NULL):
 * stage "node ID: ..." while a global node runs, "tiles" between tiles; a global node counts as
 * many tiles as the grid has. Errors: as trn_graph_evaluate's; TRN_ERR_INVALID_ARGUMENT for a
 * zero tile, a window outside the world or an output that is not a heightfield or mask; TRN_ERR_NOT_FOUND for a node id
 * the graph does not evaluate; TRN_ERR_CANCELLED when progress asks to stop. */
trn_status trn_graph_evaluate_tiles(const trn_graph *graph, const trn_recipe *recipe,
                                    const trn_graph_options *options,
                                    const trn_graph_tile_options *tiles, trn_graph_tile_sink sink,
                                    void *user, trn_progress_fn progress, void *progress_user,
                                    trn_error *err);

/* An estimate, in bytes, of what trn_graph_evaluate_tiles holds for the Terrain Output's field
 * with tiles of tile samples: each tile node's window (the tile grown by its halos) for each of
 * its outputs, the copies cut from the largest, plus, when global nodes are upstream, the
 * largest global node's whole-grid outputs and inputs (global nodes hold the whole grid), as a
 * run with a disk tile cache holds them (cache_dir set, as terrane generate --tiles runs): an
 * erosion of droplets reading a global node's field then holds bands of rows, a stream power
 * whose fine steps run in tiles three whole arrays; a coarsened stream power at least what it
 * holds as it brings its coarsest level back to the output grid (six floats an output sample
 * and the coarser level's grid) beside its inputs. The program's own size is not counted.
 * *first_global (may be NULL) receives the index of the first global node upstream, or -1. For
 * refusing a memory budget up front: the solvers' own working memory comes on top, so measure
 * the resident size for the real figure. Fails as trn_graph_evaluate's validation does. */
trn_status trn_graph_tiles_memory(const trn_graph *graph, const trn_recipe *recipe,
                                  const trn_graph_options *options, uint32_t tile,
                                  uint64_t *bytes, int *first_global, trn_error *err);

/* The cache key each node would get without evaluating anything (keys depend only on the
 * graph, the recipe and the quality): keys[k] for graph->nodes[k], 0 for nodes that would be
 * skipped. Fails as trn_graph_evaluate's validation does. */
trn_status trn_graph_keys(const trn_graph *graph, const trn_recipe *recipe,
                          trn_erosion_quality quality, uint64_t *keys, trn_error *err);
/* The same keys with options' quality and palette (the keys evaluation with these options
 * uses; trn_graph_keys gives a Scatter Palette node a key that no evaluation has). options NULL:
 * final quality, no palette. */
trn_status trn_graph_keys_for(const trn_graph *graph, const trn_recipe *recipe,
                              const trn_graph_options *options, uint64_t *keys, trn_error *err);
/* Each node's work, as the budget counts it (see TRN_WORK_BUDGET_DEFAULT; saturates at
 * UINT64_MAX), without evaluating anything: work[k] for graph->nodes[k], 0 for nodes that would
 * be skipped. Fails as trn_graph_evaluate's validation does. */
trn_status trn_graph_work(const trn_graph *graph, const trn_recipe *recipe,
                          trn_erosion_quality quality, uint64_t *work, trn_error *err);
/* Each node's estimated CPU seconds on one core, as the whole-graph budget counts them (its work
 * at its type's measured rate; a landform's evolution at Stream Power's rate): seconds[k] for
 * graph->nodes[k], 0 for nodes that would be skipped. Fails as trn_graph_work does. */
trn_status trn_graph_work_seconds(const trn_graph *graph, const trn_recipe *recipe,
                                  trn_erosion_quality quality, double *seconds, trn_error *err);
/* Append a "work-budget" error diagnostic for every node whose work exceeds max_work (0 = the
 * default budget, TRN_WORK_UNLIMITED = none): its path names the parameter that sets the cost
 * ("nodes[2].params.droplets"; the node, "nodes[2]", when the parameter is not written), so
 * trn_graph_diagnostics_locate gives its line and column; and one graph-level diagnostic (path
 * "nodes", no node id) when the evaluated nodes together exceed TRN_WORK_GRAPH_FACTOR budgets. A
 * graph with check errors gets no work diagnostics (run trn_graph_check first). Fails only for
 * TRN_ERR_NO_MEMORY. */
trn_status trn_graph_check_work(const trn_graph *graph, const trn_recipe *recipe,
                                trn_erosion_quality quality, uint64_t max_work,
                                trn_graph_diagnostics *out, trn_error *err);
/* Whether the cache holds a result for key (in memory, or a file in its directory whose header
 * and checksum are right; its arrays are parsed only when the result is used); *cpu_seconds
 * (may be NULL) receives what it cost. */
bool trn_graph_cache_has(trn_graph_cache *cache, uint64_t key, double *cpu_seconds);

#ifdef __cplusplus
}
#endif

#endif
