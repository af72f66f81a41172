/* The Scatter Palette node: the resolved palette's candidates on a graph field, before layers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "graph/nodes/node_common.h"
#include "terrane/generate.h"
#include "terrane/scatter.h"

#ifdef _OPENMP
#include <omp.h>
#endif

static const trn_pin_spec in_scatter[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true,
     "the surface the candidates stand on (before the recipe's regions, sculpt and exclusions)"},
    {"biomes", TRN_PIN_HEIGHTFIELD, false,
     "a field past Biome Rules whose rule-based biomes the placements' biome lists read; absent "
     "= the field's own (the default biome without Biome Rules upstream)"},
    {"water", TRN_PIN_WATER, false,
     "water whose coverage blocks placement and sets water_distance; absent = the sea inferred "
     "from the sea level"},
};

static const trn_pin_spec out_scatter[] = {
    {"instances", TRN_PIN_INSTANCES, false,
     "the candidates, sorted by rule, cz, cx (Terrain Output refilters them on the final "
     "surface)"},
};

/* The recipe's biome rules as the scatter node classifies with them. */
typedef struct classify_pass {
    const trn_recipe *recipe;
    const trn_field *field;
    const float *water_distance;
    double sea_level;
    const uint8_t *rule_biome, *rule_active;
    uint8_t default_biome;
    bool rules, need_slope, need_moisture;
    uint8_t *labels;
} classify_pass;

static bool rules_use(const trn_recipe *recipe, bool slope, bool moisture)
{
    for (uint32_t r = 0; r < recipe->rule_count; r++) {
        const trn_rule *rule = &recipe->rules[r];
        if (slope && (rule->slope.set || rule->substrate_mask)) return true;
        if (moisture && rule->moisture.set) return true;
    }
    return false;
}

/* One row, exactly as generation's biome pass classifies a sample (src/recipe/generate.c):
 * the same slope, moisture, water distance, substrate and rule pick. */
static void classify_row(const classify_pass *cp, uint32_t j, double *slope, float *moisture)
{
    const trn_recipe *recipe = cp->recipe;
    const size_t nx = (size_t)cp->field->cells_x + 1u, base = (size_t)j * nx;
    if (cp->need_slope)
        trn_field_slope_row(cp->field, j, slope);
    else
        for (size_t i = 0; i < nx; i++)
            slope[i] = 0.0;
    if (cp->need_moisture)
        trn_moisture_row(recipe->seed, recipe->size_x, recipe->cells_x,
                         (double)j * recipe->size_z / (double)recipe->cells_z, moisture);
    else
        for (size_t i = 0; i < nx; i++)
            moisture[i] = 0.0f;
    for (size_t i = 0; i < nx; i++) {
        trn_sample_context ctx;
        ctx.height = (double)cp->field->heights[base + i];
        ctx.slope = slope[i];
        ctx.moisture = (double)moisture[i];
        ctx.water_distance = (double)cp->water_distance[base + i];
        ctx.substrate =
            trn_substrate_classify(ctx.height, ctx.slope, ctx.water_distance, cp->sea_level);
        const int r = cp->rules ? trn_rules_pick_active(recipe->rules, recipe->rule_count,
                                                        cp->rule_active, &ctx)
                                : -1;
        cp->labels[base + i] = r >= 0 ? cp->rule_biome[r] : cp->default_biome;
    }
}

/* Biome labels of field: the recipe's rules when rules, else the default biome everywhere. */
static trn_status classify(const trn_node_ctx *c, const trn_field *field,
                           const float *water_distance, bool rules, uint8_t *labels, trn_error *err)
{
    const trn_recipe *recipe = c->recipe;
    const int default_biome = trn_recipe_find_biome(recipe, recipe->default_biome);
    if (default_biome < 0 || recipe->biome_count > TRN_LABEL_NONE)
        return trn_node_fail(c, err, TRN_ERR_VALIDATION,
                             "the recipe's default_biome names no biome (or it has more biomes "
                             "than labels hold)");
    const size_t nx = (size_t)field->cells_x + 1u, n = trn_node_samples(c->input_results[0]);
    if (!rules) {
        memset(labels, default_biome, n);
        return TRN_OK;
    }
    const uint32_t rc = recipe->rule_count;
    uint8_t *table = malloc(2u * (rc ? rc : 1u));
    const int threads = c->threads > 0 ? c->threads : 1;
    double *scratch = NULL;
    size_t per = 0;
    if (trn_mul_size(nx, 2u * (size_t)threads, &per)) scratch = malloc(per * sizeof *scratch);
    if (!table || !scratch) {
        free(table);
        free(scratch);
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    classify_pass cp;
    memset(&cp, 0, sizeof cp);
    cp.recipe = recipe;
    cp.field = field;
    cp.water_distance = water_distance;
    cp.sea_level = trn_recipe_sea_level(recipe, NULL, NULL, 0);
    cp.rule_biome = table;
    cp.rule_active = table + (rc ? rc : 1u);
    cp.default_biome = (uint8_t)default_biome;
    cp.rules = true;
    cp.need_slope = rules_use(recipe, true, false);
    cp.need_moisture = rules_use(recipe, false, true);
    cp.labels = labels;
    trn_status st = TRN_OK;
    for (uint32_t r = 0; r < rc && !st; r++) {
        const int b = trn_recipe_find_biome(recipe, recipe->rules[r].biome);
        if (b < 0) {
            char msg[200];
            snprintf(msg, sizeof msg, "rules[%u].biome names no biome of the recipe", r);
            st = trn_node_fail(c, err, TRN_ERR_VALIDATION, msg);
        }
        table[r] = (uint8_t)(b < 0 ? 0 : b);
        table[(rc ? rc : 1u) + r] = trn_recipe_rule_active(recipe, &recipe->rules[r]);
    }
    if (!st) {
        const long long rows = (long long)field->cells_z + 1;
        /* One row per task with its own scratch: threads cannot change a label. */
#ifdef _OPENMP
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
        for (long long j = 0; j < rows; j++) {
            int t = 0;
#ifdef _OPENMP
            t = omp_get_thread_num();
#endif
            double *row = scratch + (size_t)t * 2u * nx;
            classify_row(&cp, (uint32_t)j, row, (float *)(row + nx));
        }
    }
    free(table);
    free(scratch);
    return st;
}

static bool palette_needs(const trn_palette *palette, bool biomes)
{
    for (uint32_t k = 0; k < palette->rule_count; k++)
        if (biomes ? palette->rules[k].biome_count > 0 : palette->rules[k].moisture.has)
            return true;
    return false;
}

/* Water distance over field: from the water's wet samples, else the inferred sea. */
static trn_status distance_of(const trn_node_ctx *c, const trn_field *field, float **out,
                              trn_error *err)
{
    const size_t n = trn_node_samples(c->input_results[0]);
    *out = malloc(n * sizeof **out);
    if (!*out) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    const trn_water *w = c->inputs[2] && c->inputs[2]->water ? c->inputs[2]->water->data : NULL;
    trn_status st;
    if (w) {
        uint8_t *none = w->wet ? NULL : calloc(n, 1); /* water without bodies: nothing wet */
        if (!w->wet && !none) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        st = trn_water_distance_fill_wet(field, w->wet ? w->wet : none, *out, trn_node_bridge,
                                         (void *)c->progress, err);
        free(none);
    } else {
        st = trn_water_distance_fill(field, trn_recipe_sea_level(c->recipe, NULL, NULL, 0), *out,
                                     trn_node_bridge, (void *)c->progress, err);
    }
    return st ? trn_node_wrap(c, err, st) : TRN_OK;
}

static trn_status scatter_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_palette *palette = c->palette;
    if (!palette) return trn_node_fail(c, err, TRN_ERR_VALIDATION, "no resolved palette was given");
    const trn_recipe *recipe = c->recipe;
    const size_t n = trn_node_samples(r);
    trn_field field = trn_node_field_view(r, c->inputs[0]);
    float *distance = NULL, *biome_distance = NULL, *moisture = NULL;
    uint8_t *wet = NULL, *labels = NULL;
    const char **names = NULL;
    trn_instances *inst = calloc(1, sizeof *inst);
    trn_scatter_report rep;
    memset(&rep, 0, sizeof rep);
    trn_status st = inst ? distance_of(c, &field, &distance, err)
                         : trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (!st && !(wet = malloc(n))) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    for (size_t k = 0; !st && k < n; k++)
        wet[k] = distance[k] == 0.0f; /* the water's coverage, or the sea */
    if (!st && palette_needs(palette, false)) {
        if (!(moisture = malloc(n * sizeof *moisture)))
            st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        const size_t nx = (size_t)r->cells_x + 1u;
        for (uint32_t j = 0; !st && j <= r->cells_z; j++)
            trn_moisture_row(recipe->seed, recipe->size_x, recipe->cells_x,
                             (double)j * recipe->size_z / (double)recipe->cells_z,
                             moisture + (size_t)j * nx);
    }
    if (!st && palette_needs(palette, true)) {
        /* The biomes pin's field (the field's own when absent), classified as generation
         * would classify it: rules only past Biome Rules. */
        const uint32_t src = c->inputs[1] ? 1u : 0u;
        trn_field bf = trn_node_field_view(r, c->inputs[src]);
        const float *bd = distance;
        if (bf.heights != field.heights) {
            st = distance_of(c, &bf, &biome_distance, err);
            bd = biome_distance;
        }
        labels = st ? NULL : malloc(n);
        names = st ? NULL : calloc(recipe->biome_count ? recipe->biome_count : 1u, sizeof *names);
        if (!st && (!labels || !names))
            st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        if (!st) st = classify(c, &bf, bd, c->input_results[src]->biome_rules, labels, err);
        for (uint32_t b = 0; !st && b < recipe->biome_count; b++)
            names[b] = recipe->biomes[b].name;
    }
    if (!st) {
        trn_scatter_env env;
        memset(&env, 0, sizeof env);
        env.field = &field;
        env.biome = labels;
        env.biome_names = labels ? names : NULL;
        env.biome_name_count = labels ? recipe->biome_count : 0u;
        env.moisture = moisture;
        env.water_distance = distance;
        env.wet = wet;
        env.scatter_seed = trn_subseed(recipe->seed, "scatter");
        const trn_scatter_options so = {c->threads, 0, 0, 0};
        st = trn_scatter_run(palette, &env, &so, inst, &rep, trn_node_bridge, (void *)c->progress,
                             err);
        if (st) st = trn_node_wrap(c, err, st);
    }
    free(distance);
    free(biome_distance);
    free(moisture);
    free(wet);
    free(labels);
    free(names);
    if (!st) {
        uint64_t candidates = 0;
        for (uint32_t k = 0; k < rep.rule_count; k++)
            candidates += rep.rules[k].candidates;
        snprintf(r->note, sizeof r->note,
                 "%zu candidates placed from %llu lattice sites of %u placement%s%s", inst->count,
                 (unsigned long long)candidates, palette->rule_count,
                 palette->rule_count == 1 ? "" : "s",
                 rep.truncated ? " (the placement ceiling cut the rest)" : "");
    }
    trn_scatter_report_dispose(&rep);
    if (st) {
        if (inst) trn_instances_dispose(inst);
        free(inst);
        return st;
    }
    r->outputs[0].kind = TRN_PIN_INSTANCES;
    r->outputs[0].instances = trn_gbuf_wrap_instances(inst);
    r->output_count = 1;
    if (!r->outputs[0].instances) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    return TRN_OK;
}

/* What the candidates read from the recipe beyond the pins: the world seed (scatter sub-seed,
 * moisture), the sea level, and the biomes and rules the labels come from. */
static void scatter_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                        const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)n;
    (void)t;
    (void)quality;
    XXH64_update(h, &recipe->seed, sizeof recipe->seed);
    trn_key_f64(h, trn_recipe_sea_level(recipe, NULL, NULL, 0));
    trn_key_str(h, recipe->default_biome);
    XXH64_update(h, &recipe->biome_count, sizeof recipe->biome_count);
    for (uint32_t b = 0; b < recipe->biome_count; b++)
        trn_key_str(h, recipe->biomes[b].name);
    XXH64_update(h, &recipe->rule_count, sizeof recipe->rule_count);
    for (uint32_t k = 0; k < recipe->rule_count; k++) {
        const trn_rule *r = &recipe->rules[k];
        trn_key_str(h, r->biome);
        const uint32_t flags[2] = {trn_recipe_rule_active(recipe, r) ? 1u : 0u, r->substrate_mask};
        XXH64_update(h, flags, sizeof flags);
        trn_key_f64(h, r->priority);
        trn_key_f64(h, r->blend);
        const trn_band *bands[4] = {&r->elevation, &r->slope, &r->moisture, &r->water_distance};
        for (int b = 0; b < 4; b++) {
            trn_key_str(h, bands[b]->set ? "set" : NULL);
            trn_key_f64(h, bands[b]->set ? bands[b]->min : 0.0);
            trn_key_f64(h, bands[b]->set ? bands[b]->max : 0.0);
        }
    }
}

/* A recipe without a palette has nothing to place. */
static void scatter_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                          const trn_node_type *t)
{
    (void)t;
    const trn_recipe *recipe = trn_check_recipe(c);
    if (!recipe || recipe->palette_json) return;
    char path[64];
    snprintf(path, sizeof path, "nodes[%u]", index);
    trn_check_diag(c, TRN_GRAPH_ERROR, "palette-missing", n, "", path,
                   "the recipe names no palette (add \"palette\": \"asset://...\" to the "
                   "recipe, or remove the node)");
}

const trn_node_module trn_node_scatter_palette = {
    {"scatter_palette", "Scatter Palette", "scatter",
     "Places the recipe's palette on a field; Terrain Output refilters the candidates on the "
     "final surface.",
     1, in_scatter, TRN_COUNT(in_scatter), out_scatter, TRN_COUNT(out_scatter), NULL, 0, false},
    2.0,
    false,
    scatter_compute,
    scatter_key,
    NULL,
    scatter_check,
    trn_reach_global};
