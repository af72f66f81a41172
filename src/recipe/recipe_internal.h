/* Recipe internals shared by parsing, validation, canonical printing and documents. */
#ifndef TRN_RECIPE_INTERNAL_H
#define TRN_RECIPE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "core/json_pos.h"
#include "core/json_fields.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"

/* A landform's evolution read once: the one-node Stream Power graph of its parameters. */
typedef struct trn_rcp_evolution {
    char *text;   /* the landform's evolution it was read from; NULL for none */
    json_t *tree; /* what reading text gives (as the graph's tree) */
    char *canonical; /* tree's canonical text (trn_rcp_canonical_text), NULL until made */
    trn_graph graph;
} trn_rcp_evolution;

/* A recipe's graph and evolutions read once (trn_recipe.model): immutable once the parser has
 * built it, and shared between copies of the recipe (refs counts them). For the graph (text
 * NULL when the document has none): tree is what reading text would give (keys sorted, numbers
 * as the canonical text writes them), graph the typed graph parsed from it, identity its
 * identity text (trn_graph_to_json with identity) and identity_tree that text as a tree.
 * evolutions[i] is landform i's. */
struct trn_recipe_model {
    _Atomic unsigned refs;
    char *text; /* the graph_json it was read from */
    json_t *tree;
    trn_graph graph;
    char *identity;
    json_t *identity_tree;
    /* The canonical text of tree and of identity_tree: what canonical text and cache keys
     * write for the graph, written once. */
    char *tree_canonical, *identity_canonical;
    trn_rcp_evolution *evolutions;
    uint32_t evolution_count;
    /* The fingerprint (trn_rcp_fingerprint) of the last recipe sharing this model that passed
     * trn_rcp_check, 0 for none: validity depends on the recipe's content alone, so a recipe
     * with that fingerprint is valid without checking it again. The only part that changes
     * after parsing; atomic, as copies in other threads share the model. */
    _Atomic uint64_t valid_print;
    /* The cache key's hash state after the generator version and canonical text of the recipe
     * whose fingerprint is key_print (key_state NULL until one is kept): a recipe unchanged
     * since reads it instead of printing its canonical text again. key_busy guards both; a
     * reader or writer that finds it taken does without. */
    _Atomic unsigned key_busy;
    uint64_t key_print;
    void *key_state; /* an XXH64_state_t */
};

/* The recipe's model when it still describes recipe->graph_json, else NULL (a graph_json
 * replaced since, or none). */
static inline const struct trn_recipe_model *trn_rcp_model_of(const trn_recipe *recipe)
{
    const struct trn_recipe_model *m = recipe ? recipe->model : NULL;
    return m && m->text && recipe->graph_json && strcmp(m->text, recipe->graph_json) == 0 ? m
                                                                                          : NULL;
}

/* Landform lf's evolution as read with the recipe, when lf is one of recipe's landforms and its
 * evolution is still the text that was read; else NULL. */
static inline const trn_rcp_evolution *trn_rcp_model_evolution_of(const trn_recipe *recipe,
                                                                  const trn_landform *lf)
{
    const struct trn_recipe_model *m = recipe ? recipe->model : NULL;
    if (!m || !lf || !lf->evolution || !recipe->landforms) return NULL;
    const uintptr_t at = (uintptr_t)lf, first = (uintptr_t)recipe->landforms;
    if (at < first || (at - first) % sizeof *lf != 0) return NULL;
    const size_t i = (at - first) / sizeof *lf;
    if (i >= recipe->landform_count || i >= m->evolution_count) return NULL;
    const trn_rcp_evolution *e = &m->evolutions[i];
    return e->text && e->tree && e->graph.node_count == 1 && strcmp(e->text, lf->evolution) == 0
               ? e
               : NULL;
}

/* Its Stream Power node, or NULL. */
static inline const trn_graph_node *trn_rcp_model_evolution(const trn_recipe *recipe,
                                                            const trn_landform *lf)
{
    const trn_rcp_evolution *e = trn_rcp_model_evolution_of(recipe, lf);
    return e ? &e->graph.nodes[0] : NULL;
}

/* Defaults of the recipe and landform fields (recipe.h states them too). */
#define TRN_RCP_CHUNK_CELLS 32u
/* 65537 samples a side: a 64 km world at 1 m, generated tile by tile (docs/scale.md). */
#define TRN_RCP_MAX_CELLS 65536u
/* (cells_x + 1) * (cells_z + 1) a recipe may ask for: 65537^2, above 2^32, so sample counts
 * and indices into a whole world are 64-bit; only tiled generation reaches this size. */
#define TRN_RCP_MAX_SAMPLES (UINT64_C(65537) * UINT64_C(65537))
/* A grid held whole in memory (trn_recipe_generate, trn_graph_evaluate, strokes and their
 * protect snapshots): 2^28 samples, 1 GiB of float heights; larger worlds are tiled. */
#define TRN_RCP_MAX_WHOLE_SAMPLES (UINT64_C(1) << 28)
/* A global node's whole grid inside a tiled run: its solvers index samples with 32-bit
 * integers (signed in places), so at most 2^31 - 1 samples (46339 x 46339 cells). */
#define TRN_RCP_MAX_GLOBAL_SAMPLES ((UINT64_C(1) << 31) - 1u)
/* Label maps hold one byte per sample and keep 255 for "none". */
#define TRN_RCP_MAX_BIOMES 255u
/* trn_generated.rule_index is an int16_t. */
#define TRN_RCP_MAX_RULES 32767u
/* Heights, sizes and sea levels stay well inside the float range. */
#define TRN_RCP_MAX_MAGNITUDE 1e9
/* Layers and strokes: generous, but a document cannot ask for unbounded allocations. */
#define TRN_RCP_MAX_LAYERS 256u
#define TRN_RCP_MAX_STROKES 1000000u
#define TRN_RCP_MAX_POINTS 16000000u
/* Recipes read from files: edits can make them large, but not unbounded. */
#define TRN_RCP_MAX_FILE_SIZE ((size_t)256 << 20)

/* Every numeric field's rule, shared by the parser (which checks values where they stand in
 * the document) and trn_recipe_validate (which checks a struct built in code), so both say
 * the same thing. */
typedef enum trn_rcp_num {
    TRN_NUM_SIZE = 0,
    TRN_NUM_CELLS,
    TRN_NUM_SEED,
    TRN_NUM_CHUNK_CELLS, /* upper bound is the grid's: checked separately */
    TRN_NUM_SEA_LEVEL,
    TRN_NUM_SNOW_LINE,
    TRN_NUM_BASE_HEIGHT,
    TRN_NUM_HEIGHT_VARIATION,
    TRN_NUM_FEATURE_SIZE,
    TRN_NUM_ROUGHNESS,
    TRN_NUM_OCTAVES,
    TRN_NUM_WARP_AMPLITUDE,
    TRN_NUM_WARP_FEATURE_SIZE,
    TRN_NUM_STRETCH,
    TRN_NUM_HEADING,
    TRN_NUM_COLOR,
    TRN_NUM_TEXTURE_SCALE,
    TRN_NUM_PRIORITY,
    TRN_NUM_BLEND,
    TRN_NUM_ELEVATION,
    TRN_NUM_SLOPE,
    TRN_NUM_MOISTURE,
    TRN_NUM_WATER_DISTANCE,
    TRN_NUM_PRESET_VERSION,
    TRN_NUM_COUNT
} trn_rcp_num;

/* "a number > 0", "a whole number 1..16", ... */
const char *trn_rcp_num_expect(trn_rcp_num which);
bool trn_rcp_num_ok(trn_rcp_num which, double value);
/* which's row of the range table (recipe_base.c), for trn_doc_number. */
const trn_doc_range *trn_rcp_num_range(trn_rcp_num which);
/* Whole-number fields (cells, seed, chunk_cells, octaves). */
bool trn_rcp_num_whole(trn_rcp_num which);

/* TRN_ERR_LIMIT naming the grid when the recipe's grid has more than TRN_RCP_MAX_WHOLE_SAMPLES
 * samples (what whole-grid generation holds); who: "generation", "graph evaluation". */
trn_status trn_rcp_check_whole_grid(const trn_recipe *recipe, const char *who, trn_error *err);

/* Landform defaults (the rows' defaults, recipe_fields.c); whether the field of key holds its
 * default. */
void trn_rcp_landform_defaults(trn_landform *landform);
bool trn_rcp_landform_field_is_default(const trn_landform *landform, const char *key);

/* trn_recipe_cache_key of a recipe the caller has just validated (no second validation). */
trn_status trn_rcp_cache_key_of_valid(const trn_recipe *recipe, uint64_t *key, trn_error *err);
/* trn_recipe_validate, giving the recipe's fingerprint (trn_rcp_fingerprint; 0 when it has no
 * model or none could be taken), and the cache key of a recipe so validated with that
 * fingerprint: a generation takes the fingerprint once. */
trn_status trn_rcp_validate_print(const trn_recipe *recipe, uint64_t *print, trn_error *err);
trn_status trn_rcp_cache_key_of_print(const trn_recipe *recipe, uint64_t print, uint64_t *key,
                                      trn_error *err);

/* How many times trn_recipe_validate ran in this process (a hook for tests). */
uint64_t trn_rcp_validate_count(void);

/* Check a recipe struct. On failure: the status (TRN_ERR_VALIDATION, or TRN_ERR_LIMIT for
 * size limits), *where names the offending value (keys point into the recipe) and msg holds the
 * message without the path. */
trn_status trn_rcp_check(const trn_recipe *recipe, trn_json_path *where, trn_json_target *target,
                         char *msg, size_t msg_size);

/* Growable text. Allocation failure is remembered (failed) and reported by the caller. */
typedef struct trn_rcp_buf {
    char *data;
    size_t len, cap;
    bool failed;
    /* NULL: the text grows in data. Else an XXH64_state_t the text is hashed into, through
     * data as a fixed buffer of cap bytes (trn_rcp_buf_flush hashes what it holds): the cache
     * key hashes canonical text without keeping it. */
    void *hash;
} trn_rcp_buf;

void trn_rcp_buf_put(trn_rcp_buf *b, const char *s, size_t n);
void trn_rcp_buf_puts(trn_rcp_buf *b, const char *s);
void trn_rcp_buf_free(trn_rcp_buf *b);
/* A hashing buffer's text into its hash. */
void trn_rcp_buf_flush(trn_rcp_buf *b);
/* s as a JSON string; text that is not UTF-8 fails the buffer (as a jansson tree refuses it). */
void trn_rcp_emit_text(trn_rcp_buf *b, const char *s);

/* Shortest text that reads back as the same double: integers up to 2^53 without a fraction or
 * exponent, -0 as 0, otherwise the shortest of %.1g .. %.17g that strtod maps back. */
void trn_rcp_format_double(double v, char out[40]);
/* The same for a float read back as (float)strtod(text). */
void trn_rcp_format_float(float v, char out[40]);
/* strtod of a number written with '.', whatever LC_NUMERIC says. */
double trn_rcp_parse_double(const char *text);

/* Append v as canonical JSON: object keys sorted bytewise, numbers as above. indent 0 writes no
 * whitespace at all; indent > 0 pretty-prints (arrays of scalars on one line) starting at the
 * given nesting level. */
void trn_rcp_emit_json(trn_rcp_buf *b, const json_t *v, int indent, int level);
/* The same numbers and strings, object keys in document order, arrays of scalar arrays (such
 * as [[x, z], ...]) on one line: for documents rewritten for people. */
void trn_rcp_emit_json_in_order(trn_rcp_buf *b, const json_t *v, int indent, int level);
/* Two strokes that may share one entry: the same kind, layer and settings (protect snapshots
 * never). Their stamps in sequence give the same result as the two entries in sequence. */
bool trn_rcp_strokes_mergeable(const trn_stroke *a, const trn_stroke *b);

/* A stroke's keys as rows (src/recipe/strokes.c): the kinds each applies to (1 << kind), how it
 * is read (a finite number or a non-empty text into the member at offset, with what an error
 * expects; the others by the stroke reader's own code) and, for numbers, the value an absent
 * key leaves, which canonical text omits unless the row says it is always written. Rows are in
 * the order unknown-key messages list them; a NULL name ends the table. A new setting of a
 * stroke is its member and one row. */
typedef enum trn_stroke_value {
    TRN_STROKE_NUMBER,
    TRN_STROKE_TEXT,
    TRN_STROKE_TYPE, /* the rest: read and written by the stroke's own code */
    TRN_STROKE_POINTS,
    TRN_STROKE_CENTER,
    TRN_STROKE_MODE,
    TRN_STROKE_GRID,
    TRN_STROKE_SAMPLES
} trn_stroke_value;

typedef struct trn_stroke_field {
    const char *name;
    unsigned kinds;
    trn_stroke_value value;
    size_t offset;
    double def;
    bool always; /* canonical text writes it at its default too */
    const char *expect;
} trn_stroke_field;

/* Every kind but protect: the stamped strokes. */
#define TRN_STROKE_STAMPED                                                                        \
    ((1u << TRN_STROKE_KIND_COUNT) - 1u - (1u << TRN_STROKE_PROTECT))

extern const trn_stroke_field trn_stroke_fields[];
/* The row named name, or NULL. */
const trn_stroke_field *trn_stroke_field_find(const char *name);
/* The names of the rows that apply to any of kinds, NULL-terminated (at most 15). */
void trn_stroke_field_names(unsigned kinds, const char *known[16]);
/* The rows in bytewise order of their names (canonical text's), NULL-terminated. */
extern const trn_stroke_field *const trn_stroke_fields_sorted[];
/* Every number row's default into s (whatever its kind: a stroke reads them before its kind's
 * keys). */
void trn_stroke_field_defaults(trn_stroke *s);
/* Canonical compact text of v (malloc'd), or NULL when out of memory. */
char *trn_rcp_canonical_text(const json_t *v);

/* The recipe as a jansson tree in canonical form (defaults omitted). NULL when out of memory
 * or when a stored JSON text does not parse (validate first). */
json_t *trn_rcp_recipe_to_json(const trn_recipe *recipe);

/* Parse the recipe keys of a document object that holds only some of them (a terrain_preset
 * asset): the same grammar, rejections and positions as a recipe (text is the whole document,
 * obj its root), keys in skip_keys (NULL-terminated) left to the caller, no key required and no
 * default layers filled in (has_layers says whether "layers" was given). Cross-field checks
 * (a rule's biome exists, ...) are the caller's. */
trn_status trn_rcp_parse_partial(const char *text, size_t size, const char *file, const json_t *obj,
                                 const char *const *skip_keys, trn_recipe *recipe, trn_error *err);

/* Shared by classification and parsing: which document a top-level object is. */
trn_document_kind trn_rcp_classify_object(const json_t *root);

/* The last pass of generation on a finished result: surface roles and palette placements, as
 * options ask (src/recipe/finish.c). The omp thread count is already set by the caller. */
struct trn_generated;
struct trn_generate_options;
trn_status trn_generated_finish(const trn_recipe *recipe,
                                const struct trn_generate_options *options, int threads,
                                struct trn_generated *gen, trn_progress_fn progress, void *user,
                                trn_error *err);

/* A BeamNG ground model name (case-insensitive) as the engine spells it, or NULL; and every name,
 * comma-separated, for messages (src/recipe/groundmodels.c). The recipe layer owns the list a
 * biome's "groundmodel" is checked against; the BeamNG export reads it from here. */
const char *trn_rcp_groundmodel_find(const char *name);
const char *trn_rcp_groundmodel_names(void);

#endif
