/* Graph internals shared by parsing, checking, printing and evaluation (internal). */
#ifndef TRN_GRAPH_INTERNAL_H
#define TRN_GRAPH_INTERNAL_H

#include <jansson.h>
#include <xxhash.h>

#include "core/json_pos.h"
#include "terrane/graph.h"

/* Parse the graph object v of a larger document: text/size is the whole document (for
 * positions), where the path of v in it (restored on return). The recipe parser calls this so
 * a malformed graph is reported at its line and column in the recipe file. */
trn_status trn_graph_parse_tree(const json_t *v, const char *text, size_t size, const char *file,
                                trn_json_path *where, trn_graph *graph, trn_error *err);

/* The graph's identity text (trn_graph_to_json with identity) from the compact JSON kept in
 * trn_recipe.graph_json; NULL on failure (malformed text or no memory). Caller frees. */
char *trn_graph_identity_of_json(const char *graph_json);

/* The implicit graph of a recipe without one (landform -> biome_rules -> output) as the JSON
 * text it is documented as; generation holds it as data (tests compare the two). */
const char *trn_graph_implicit_json(void);

/* A deep copy of src into *dst (dispose it); false when out of memory (*dst empty). */
bool trn_graph_copy(const trn_graph *src, trn_graph *dst);

/* The recipe's graph into *graph without reading text where it can: the graph read into the
 * recipe's model, the implicit landform -> biome_rules -> output graph of a recipe without one
 * (both owned elsewhere), else graph_json parsed into *scratch. Fails as trn_graph_from_recipe
 * (*graph NULL). Dispose *scratch after use in every case. */
trn_status trn_graph_of_recipe(const trn_recipe *recipe, const trn_graph **graph,
                               trn_graph *scratch, trn_error *err);

/* A one-node graph of the given type whose parameters are the JSON object params_json, checked
 * against the registry (a landform's "evolution" is a Stream Power node's parameters). On a bad
 * parameter: TRN_ERR_VALIDATION, key = its name, msg = what was expected and found, *unknown
 * when the name is not a parameter at all (msg then the documents' unknown-key message, in
 * place: the path of the parameters' object). *graph is then empty. Dispose *graph on success. */
trn_status trn_graph_params_parse(const char *type, const char *params_json, const char *place,
                                  trn_graph *graph, char *key, size_t key_size, char *msg,
                                  size_t msg_size, bool *unknown);

/* The same for the parameters' JSON object itself (as reading their text gives it). */
trn_status trn_graph_params_read(const char *type, const json_t *params, const char *place,
                                 trn_graph *graph, char *key, size_t key_size, char *msg,
                                 size_t msg_size, bool *unknown);

/* "unknown key 'NAME' in PLACE; did you mean ...?" or "(expected one of: ...)" for a parameter
 * type t lacks (trn_doc_unknown_key_text with t's parameter names). */
void trn_graph_unknown_param_text(char *buf, size_t size, const trn_node_type *t,
                                  const char *name, const char *place);

/* Landform l of the recipe over field f's grid (f initialised): its noise, then its evolution
 * when it has one, as a Landform node computes it. */
trn_status trn_graph_landform_heights(const trn_recipe *recipe, int landform, int threads,
                                      trn_erosion_quality quality, trn_field *f, trn_error *err);

/* Hash the content of the file of every Heightfield Input node of the recipe's graph, in graph
 * order (node id, length + 1 and XXH64 of the bytes; 0 and 0 for a file that cannot be read),
 * into h; false (h untouched) when the graph has none. A recipe's cache key adds it, so a cooked
 * payload goes stale when its DEM changes. */
bool trn_graph_input_files_hash(const trn_recipe *recipe, XXH64_state_t *h);

/* Shortest decimal text that reads back as the same double ("0.1", "1e+300"); buf >= 32. */
void trn_graph_number_text(double v, char *buf, size_t buf_size);

/* A parameter's effective value, defaults filled (valid only after a check without errors). */
const trn_graph_param *trn_graph_node_param(const trn_graph_node *node, const char *name);
/* Whether word is one of the '|'-separated words of list (NULL list: none). */
bool trn_graph_keyword_in(const char *list, const char *word);
double trn_graph_param_number(const trn_graph_node *node, const trn_node_type *type,
                              const char *name);
const char *trn_graph_param_text(const trn_graph_node *node, const trn_node_type *type,
                                 const char *name);
/* A node family's parameters as a typed struct: one row per parameter (its name in the node
 * type's table, how the member stores it, the member's offset), filled by
 * trn_graph_params_fill from the node's values with the type's defaults. A new parameter of a
 * family is its row in the type's table and one row here. */
typedef enum trn_param_as {
    TRN_PARAM_AS_DOUBLE, /* a double: the number */
    TRN_PARAM_AS_U32,    /* a uint32_t: the number converted (a whole number of its range) */
    TRN_PARAM_AS_CHOICE, /* an int: the index of the text in the type's choices, 0 for none */
    TRN_PARAM_AS_TEXT,   /* a const char *: the node's string, else the type's default text */
    TRN_PARAM_AS_GIVEN,  /* a bool: whether the node gives the parameter at all */
    TRN_PARAM_AS_NUMBER_GIVEN, /* a bool: whether the node gives it as a number */
    TRN_PARAM_AS_VECTOR, /* a double[len]: the node's (else the default's) len numbers; zeros
                            when neither has len */
    TRN_PARAM_AS_POINTS, /* a trn_param_points: the node's (else the default's) points of len
                            numbers each (1: a flat array, 2: [x, z], 3: [x, y, z]) */
    TRN_PARAM_AS_JSON,   /* a const char *: the node's value kept as JSON text (an array or
                            object the other kinds do not hold), NULL when the node gives a value
                            of another kind, the type's default text when it gives none */
    TRN_PARAM_AS_TREE    /* a const json_t *: the tree that text reads as, kept when the graph
                            was read; NULL when none (read the text) */
} trn_param_as;

/* Points a row reads: in the node or in the type's default (read once per process); never
 * freed by the struct's owner. v is NULL and count 0 when neither has points of that shape. */
typedef struct trn_param_points {
    const double *v;
    uint32_t count;
} trn_param_points;

typedef struct trn_param_field {
    const char *name;
    trn_param_as as;
    size_t offset;
    uint32_t len; /* vectors: their numbers; points: the numbers of a point */
} trn_param_field;

/* Rows whose member must have the type they store: a member of another type stops the build
 * (distinct pointer types compared; an array of negative size). */
#define TRN_PARAM_DOUBLE_ROW(name, owner, member)                                                 \
    {(name), TRN_PARAM_AS_DOUBLE,                                                                  \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (double *)0), 0}
#define TRN_PARAM_U32_ROW(name, owner, member)                                                    \
    {(name), TRN_PARAM_AS_U32,                                                                     \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (uint32_t *)0), 0}
#define TRN_PARAM_CHOICE_ROW(name, owner, member)                                                 \
    {(name), TRN_PARAM_AS_CHOICE,                                                                  \
     offsetof(owner, member) + 0 * sizeof(char[sizeof(((owner *)0)->member) == sizeof(int) ? 1 : -1]), \
     0}
#define TRN_PARAM_TEXT_ROW(name, owner, member)                                                   \
    {(name), TRN_PARAM_AS_TEXT,                                                                    \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (const char **)0), 0}
#define TRN_PARAM_GIVEN_ROW(name, owner, member)                                                  \
    {(name), TRN_PARAM_AS_GIVEN,                                                                   \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (bool *)0), 0}
#define TRN_PARAM_NUMBER_GIVEN_ROW(name, owner, member)                                           \
    {(name), TRN_PARAM_AS_NUMBER_GIVEN,                                                            \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (bool *)0), 0}
#define TRN_PARAM_JSON_ROW(name, owner, member)                                                   \
    {(name), TRN_PARAM_AS_JSON,                                                                    \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (const char **)0), 0}
#define TRN_PARAM_TREE_ROW(name, owner, member)                                                   \
    {(name), TRN_PARAM_AS_TREE,                                                                    \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (const json_t **)0), 0}
/* member: a double[len] array (its length is the vector's). */
#define TRN_PARAM_VECTOR_ROW(name, owner, member)                                                 \
    {(name), TRN_PARAM_AS_VECTOR,                                                                  \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member[0] == (double *)0),               \
     (uint32_t)(sizeof(((owner *)0)->member) / sizeof(double))}
#define TRN_PARAM_POINTS_ROW(name, owner, member, dim)                                            \
    {(name), TRN_PARAM_AS_POINTS,                                                                  \
     offsetof(owner, member) + 0 * sizeof(&((owner *)0)->member == (trn_param_points *)0), (dim)}

/* Every row of rows (count of them) into out. */
void trn_graph_params_fill(const trn_graph_node *node, const trn_node_type *type,
                           const trn_param_field *rows, size_t count, void *out);
/* A table's rows and their count, for trn_graph_params_fill. */
#define TRN_PARAM_ROWS(rows) (rows), (sizeof(rows) / sizeof((rows)[0]))

/* Points of a POINTS parameter: the node's, or the registry default (read from its text once per
 * process and kept). *scratch is for the caller to free (NULL today; kept so callers need not
 * know where the points live). */
const double *trn_graph_param_points(const trn_graph_node *node, const trn_node_type *type,
                                     const char *name, uint32_t *count, double **scratch);

/* The same for [[x, y, z], ...] (dim 3) or a flat array (dim 1). */
const double *trn_graph_param_points_dim(const trn_graph_node *node, const trn_node_type *type,
                                         const char *name, uint32_t dim, uint32_t *count,
                                         double **scratch);
/* A VECTOR parameter's n numbers (the node's, else the default) into out; returns n, or 0 when
 * neither has n numbers. */
uint32_t trn_graph_param_vector(const trn_graph_node *node, const trn_node_type *type,
                                const char *name, double *out, uint32_t n);

/* Index of a node by id, or -1. Linear: use a trn_graph_index where it is called per link. */
int trn_graph_find_node(const trn_graph *graph, const char *id);

/* Node ids hashed once per call, so resolving every link stays linear in the graph's size.
 * skip_comments leaves comment nodes out (what a graph's identity resolves against). */
typedef struct trn_graph_index {
    const trn_graph *graph;
    uint32_t *slots; /* node index + 1, 0 = empty */
    size_t mask;
} trn_graph_index;

bool trn_graph_index_build(const trn_graph *graph, bool skip_comments, trn_graph_index *index);
void trn_graph_index_dispose(trn_graph_index *index);
/* The first node (smallest index) with this id, or -1. */
int trn_graph_index_find(const trn_graph_index *index, const char *id);
/* The link feeding an input pin of a node, or NULL. */
const trn_graph_link *trn_graph_node_input(const trn_graph_node *node, const char *pin);

/* ---- evaluation (graph_eval.c drives, nodes.c computes) ---- */

#include <xxhash.h>

#include "core/progress.h"
#include "graph/node_result.h"

#define TRN_GRAPH_MAX_INPUTS 8u

/* A node on a tile: its result grid's place in the world (core.h). The tile's size is its cells
 * times the world's spacing, with size / cells equal to the world's size / cells bit for bit. */
typedef trn_sample_window trn_grid_window;

/* What a node's computation gets: its inputs by input pin index (NULL = not connected) and the
 * results holding them (for the grid). */
/* What a tile node prepares once for every tile of a tiled run (a DEM's decoded file), kept by
 * the evaluator for the node until the run ends; dispose frees data. */
typedef struct trn_node_keep {
    void *data;
    void (*dispose)(void *data);
} trn_node_keep;

typedef struct trn_node_ctx {
    const trn_graph_node *node;
    const trn_node_type *type;
    const trn_recipe *recipe;
    const trn_gout *inputs[TRN_GRAPH_MAX_INPUTS];
    const trn_node_result *input_results[TRN_GRAPH_MAX_INPUTS];
    int threads;
    trn_erosion_quality quality;
    const trn_progress *progress; /* this node's slice; stage names are prefixed by the caller */
    const trn_palette *palette;   /* trn_graph_options.palette (set when a node reads it) */
    /* NULL: the result is the whole world grid; else the tile it covers (only pointwise and
     * neighbourhood nodes are given one). */
    const trn_grid_window *window;
    /* A tiled run's state for this node across its tiles (NULL: none, prepare for this call). */
    trn_node_keep *keep;
    /* A tiled evaluation's global node (window NULL): the tile size (0: not tiled) and the disk
     * cache's folder (NULL: none), for solvers that can keep their own state in tiles (stream
     * power's steps on the output grid). */
    uint32_t solve_tile;
    const char *solve_dir;
    /* The processes that share such a solver's tiles (NULL: this process alone). */
    struct trn_comm *solve_comm;
    /* With solve_comm, a Stream Power node's result by bands of rows (NULL: whole): process k
     * need make only rows solve_bands[k] .. solve_bands[k + 1] - 1 of its outputs right
     * (comm's size + 1 row starts); the others may hold anything. */
    const uint32_t *solve_bands;
} trn_node_ctx;

/* Node-specific validation reports through the check's context (graph_diag.c). */
typedef struct trn_check_ctx {
    const trn_graph *g;
    const trn_recipe *recipe;
    trn_graph_diagnostics *out;
    trn_graph_index index;
    bool failed; /* out of memory */
} trn_check_ctx;
void trn_check_diag(trn_check_ctx *c, trn_graph_severity sev, const char *check,
                    const trn_graph_node *node, const char *pin, const char *path, const char *fmt,
                    ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;
/* The recipe the graph is checked against (NULL when none). */
const trn_recipe *trn_check_recipe(const trn_check_ctx *c);

typedef struct trn_node_work_info trn_node_work_info;

/* What a water pin carries, for the budgets: its bodies, the bytes of their records and points,
 * and the work of resolving them all once. */
typedef struct trn_water_load {
    uint64_t bodies, bytes, work;
} trn_water_load;

/* One node type: its public spec and what it does. Adding a node type is one entry in a family
 * file under src/graph/nodes/ and one row in registry.c. */
typedef struct trn_node_module {
    trn_node_type type; /* first member: the registry hands out &module->type */
    double cost;        /* relative cost, for progress slices */
    bool biome_rules;   /* classifies the surface with the recipe's rules */
    /* Fill r (grid set, inputs on the same grid) with the node's outputs; NULL: never
     * evaluated (comments). */
    trn_status (*compute)(const trn_node_ctx *ctx, trn_node_result *r, trn_error *err);
    /* Derived inputs of the cache key beyond the parameters (seeds, landform settings, sea
     * level, quality); NULL: none. */
    void (*key)(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                const trn_recipe *recipe, trn_erosion_quality quality);
    /* The work the budget counts; NULL: one visit per sample. */
    void (*work)(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                 trn_erosion_quality quality, trn_node_work_info *out);
    /* Checks beyond each parameter's own range (run after them); NULL: none. */
    void (*check)(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                  const trn_node_type *t);
    /* How far it reads (graph.h, trn_node_reach), from its effective parameters; every entry
     * declares one (a test walks the registry). */
    void (*reach)(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                  trn_node_reach *out);
} trn_node_module;

/* Whether a node type places the palette: a type with an instances output. Its key hashes the
 * palette's digest and evaluation refuses to run it without a palette. */
bool trn_node_reads_palette(const trn_node_type *type);

/* The module of a registry type (every trn_node_type the registry returns is one). */
const trn_node_module *trn_node_module_of(const trn_node_type *type);

/* The evaluation order of a checked graph (what trn_graph_evaluate plans, validated, work
 * budget checked, and the palette when need_palette: a tiled run never places it, since only
 * instances read it): src / src_out per node and input pin (n * TRN_GRAPH_MAX_INPUTS, -1 = not
 * connected), the nodes upstream of the output in dependency order, their keys. */
typedef struct trn_graph_links {
    uint32_t n;
    int *src, *src_out;
    int *order;
    uint32_t order_count;
    uint64_t *keys;
    int output;
} trn_graph_links;

trn_status trn_graph_links_make(const trn_graph *graph, const trn_recipe *recipe,
                                const trn_graph_options *options, bool need_palette,
                                trn_graph_links *out, trn_error *err);
void trn_graph_links_dispose(trn_graph_links *links);

/* Fill r (grid already set from the recipe) with the node's outputs. Errors name the node. */
trn_status trn_node_compute(const trn_node_ctx *ctx, trn_node_result *r, trn_error *err);

/* Feed a node's effective parameters and derived inputs (world seed, landform settings, sea
 * level) into a key hash. quality matters only for quality-dependent types. */
void trn_node_key_params(XXH64_state_t *h, const trn_graph_node *node, const trn_node_type *type,
                         const trn_recipe *recipe, trn_erosion_quality quality);

/* Relative cost, for progress slices. */
double trn_node_cost(const trn_node_type *type);

/* A node's work as the budget counts it (graph.h, TRN_WORK_BUDGET_DEFAULT), from its effective
 * parameters (valid only after a check without errors) and the recipe's grid. */
struct trn_node_work_info {
    uint64_t work;     /* saturates at UINT64_MAX */
    const char *param; /* the parameter that sets most of it (static text), NULL: the grid */
    char detail[240];  /* how it adds up: "droplets 4225 x iterations 1000 x lifetime 30 ..." */
    /* The water arriving on the node's water input (set before the type's hook runs) and the
     * water on its water output (default: the input's; water nodes add their own bodies). A
     * water node resolves every body it receives again, so it pays their resolution work. */
    trn_water_load water_in, water_out;
    uint64_t memory; /* bytes its result holds (its outputs), an upper estimate */
    /* Estimated CPU seconds on one core: work at the type's rate (trn_work_unit_ns), unless the
     * type's hook sets it for work of mixed kinds (a landform's noise and its evolution). */
    double seconds;
};
/* CPU nanoseconds one work unit of a node type takes on one core (bench/bench_work.c). */
double trn_work_unit_ns(const char *type);
/* water_in: the water on the node's water input (NULL when none); plan order gives it. */
void trn_node_work(const trn_graph_node *node, const trn_node_type *type, const trn_recipe *recipe,
                   trn_erosion_quality quality, const trn_water_load *water_in,
                   trn_node_work_info *out);

#endif
