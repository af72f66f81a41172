/* Layer and stroke helpers: names, a stroke's keys as rows, layer lookup, disposal. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"
#include "terrane/recipe.h"

const char *trn_layer_group_name(trn_layer_group group)
{
    switch (group) {
    case TRN_LAYER_GENERATION:
        return "generation";
    case TRN_LAYER_BIOMES:
        return "biomes";
    case TRN_LAYER_SCULPT:
        return "sculpt";
    case TRN_LAYER_PROTECTION:
        return "protection";
    case TRN_LAYER_EXCLUSIONS:
        return "exclusions";
    case TRN_LAYER_GROUP_COUNT:
        break;
    }
    return "unknown";
}

const char *trn_stroke_kind_name(trn_stroke_kind kind)
{
    switch (kind) {
    case TRN_STROKE_RAISE:
        return "raise";
    case TRN_STROKE_LOWER:
        return "lower";
    case TRN_STROKE_FLATTEN:
        return "flatten";
    case TRN_STROKE_SMOOTH:
        return "smooth";
    case TRN_STROKE_PROTECT:
        return "protect";
    case TRN_STROKE_EXCLUSION:
        return "exclusion";
    case TRN_STROKE_REGION:
        return "region";
    case TRN_STROKE_KIND_COUNT:
        break;
    }
    return "unknown";
}

trn_layer_group trn_stroke_kind_group(trn_stroke_kind kind)
{
    switch (kind) {
    case TRN_STROKE_PROTECT:
        return TRN_LAYER_PROTECTION;
    case TRN_STROKE_EXCLUSION:
        return TRN_LAYER_EXCLUSIONS;
    case TRN_STROKE_REGION:
        return TRN_LAYER_BIOMES;
    default:
        return TRN_LAYER_SCULPT;
    }
}

#define K(kind) (1u << (kind))
#define NUMBER(key, kinds, member, def, always, expect)                                            \
    {(key), (kinds), TRN_STROKE_NUMBER, offsetof(trn_stroke, member), (def), (always), (expect)}
#define OWN(key, kinds, value) {(key), (kinds), (value), 0, 0, false, NULL}

const trn_stroke_field trn_stroke_fields[] = {
    OWN("type", ~0u, TRN_STROKE_TYPE),
    {"layer", ~0u, TRN_STROKE_TEXT, offsetof(trn_stroke, layer), 0, false,
     "a layer id (a non-empty string)"},
    NUMBER("radius", TRN_STROKE_STAMPED, radius, 0, true, "a radius > 0 (world units)"),
    NUMBER("strength", TRN_STROKE_STAMPED, strength, 1, false, "a finite number"),
    NUMBER("falloff", TRN_STROKE_STAMPED, falloff, 0.5, false, "a number from 0 to 1"),
    OWN("points", TRN_STROKE_STAMPED, TRN_STROKE_POINTS),
    OWN("center", TRN_STROKE_STAMPED, TRN_STROKE_CENTER),
    NUMBER("target_height", K(TRN_STROKE_FLATTEN), target_height, 0, true,
           "a height (a finite number)"),
    {"biome", K(TRN_STROKE_REGION), TRN_STROKE_TEXT, offsetof(trn_stroke, biome), 0, true,
     "the name of a biome"},
    OWN("mode", K(TRN_STROKE_EXCLUSION), TRN_STROKE_MODE),
    OWN("grid", K(TRN_STROKE_PROTECT), TRN_STROKE_GRID),
    OWN("samples", K(TRN_STROKE_PROTECT), TRN_STROKE_SAMPLES),
    {NULL, 0, TRN_STROKE_TYPE, 0, 0, false, NULL}};

#undef K
#undef NUMBER
#undef OWN

const trn_stroke_field *trn_stroke_field_find(const char *name)
{
    for (const trn_stroke_field *f = trn_stroke_fields; f->name; f++)
        if (strcmp(f->name, name) == 0) return f;
    return NULL;
}

void trn_stroke_field_names(unsigned kinds, const char *known[16])
{
    size_t n = 0;
    for (const trn_stroke_field *f = trn_stroke_fields; f->name && n < 15; f++)
        if (f->kinds & kinds) known[n++] = f->name;
    known[n] = NULL;
}

/* The rows in bytewise order of their names (test_recipe_fields checks the order and that every
 * row is here once). */
const trn_stroke_field *const trn_stroke_fields_sorted[] = {
    &trn_stroke_fields[8], /* biome */
    &trn_stroke_fields[6], /* center */
    &trn_stroke_fields[4], /* falloff */
    &trn_stroke_fields[10], /* grid */
    &trn_stroke_fields[1], /* layer */
    &trn_stroke_fields[9], /* mode */
    &trn_stroke_fields[5], /* points */
    &trn_stroke_fields[2], /* radius */
    &trn_stroke_fields[11], /* samples */
    &trn_stroke_fields[3], /* strength */
    &trn_stroke_fields[7], /* target_height */
    &trn_stroke_fields[0], /* type */
    NULL};

void trn_stroke_field_defaults(trn_stroke *s)
{
    for (const trn_stroke_field *f = trn_stroke_fields; f->name; f++)
        if (f->value == TRN_STROKE_NUMBER) *(double *)((char *)s + f->offset) = f->def;
}

void trn_stroke_dispose(trn_stroke *stroke)
{
    if (!stroke) return;
    free(stroke->layer);
    free(stroke->biome);
    free(stroke->points);
    free(stroke->sample_index);
    free(stroke->sample_height);
    memset(stroke, 0, sizeof *stroke);
}

/* String literals are not modified through these pointers: the table is read-only. */
static const trn_layer default_layers[TRN_LAYER_GROUP_COUNT] = {
    {"generation", "generation", TRN_LAYER_GENERATION, true},
    {"biomes", "biomes", TRN_LAYER_BIOMES, true},
    {"sculpt", "sculpt", TRN_LAYER_SCULPT, true},
    {"protection", "protection", TRN_LAYER_PROTECTION, true},
    {"exclusions", "exclusions", TRN_LAYER_EXCLUSIONS, true},
};

const trn_layer *trn_recipe_layers(const trn_recipe *recipe, uint32_t *count)
{
    if (recipe && recipe->layer_count && recipe->layers) {
        if (count) *count = recipe->layer_count;
        return recipe->layers;
    }
    if (count) *count = TRN_LAYER_GROUP_COUNT;
    return default_layers;
}

const trn_layer *trn_recipe_stroke_layer(const trn_recipe *recipe, const trn_stroke *stroke)
{
    if (!stroke) return NULL;
    uint32_t n;
    const trn_layer *layers = trn_recipe_layers(recipe, &n);
    trn_layer_group group = trn_stroke_kind_group(stroke->kind);
    for (uint32_t i = 0; i < n; i++) {
        if (stroke->layer ? (layers[i].id && strcmp(layers[i].id, stroke->layer) == 0)
                          : layers[i].group == group)
            return &layers[i];
    }
    return NULL;
}

bool trn_recipe_rule_active(const trn_recipe *recipe, const trn_rule *rule)
{
    if (!rule) return true;
    uint32_t n;
    const trn_layer *layers = trn_recipe_layers(recipe, &n);
    /* A rule naming no layer belongs to the first biomes layer, as a region naming none does:
     * disabling that layer removes both. */
    if (!rule->layer) {
        for (uint32_t i = 0; i < n; i++)
            if (layers[i].group == TRN_LAYER_BIOMES) return layers[i].enabled;
        return true;
    }
    for (uint32_t i = 0; i < n; i++)
        if (layers[i].id && strcmp(layers[i].id, rule->layer) == 0)
            return layers[i].enabled && layers[i].group == TRN_LAYER_BIOMES;
    return false;
}

static bool same_text(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool trn_rcp_strokes_mergeable(const trn_stroke *a, const trn_stroke *b)
{
    /* Snapshots carry their own grid and samples: each stays one entry. */
    if (a->kind == TRN_STROKE_PROTECT || b->kind == TRN_STROKE_PROTECT) return false;
    /* Exact comparisons: a merged entry must replay bit for bit. The layer is compared as
     * written (NULL and the first layer's id would mean the same, but stay apart). */
    if (a->kind != b->kind || !same_text(a->layer, b->layer) || a->radius != b->radius ||
        a->strength != b->strength || a->falloff != b->falloff)
        return false;
    if (a->kind == TRN_STROKE_FLATTEN && a->target_height != b->target_height) return false;
    if (a->kind == TRN_STROKE_REGION && !same_text(a->biome, b->biome)) return false;
    if (a->kind == TRN_STROKE_EXCLUSION && a->erase != b->erase) return false;
    return (uint64_t)a->point_count + b->point_count <= TRN_RCP_MAX_POINTS;
}
