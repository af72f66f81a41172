/* Generating a recipe: the default landform's heights, then per sample slope, moisture, water
 * distance, substrate and the biome that the rules (or the default) assign. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "core/rows.h"
#include "graph/graph_internal.h"
#include "recipe/recipe_internal.h"
#include "recipe/replay.h"
#include "terrane/generate.h"
#include "terrane/water.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Sample coordinates exactly as ARCHITECTURE.md states them (i * size / cells), shared by
 * generation and trn_generated_context so explain sees the very values generation used. */
static double sample_x(const trn_recipe *recipe, uint32_t i)
{
    return (double)i * recipe->size_x / (double)recipe->cells_x;
}

static double sample_z(const trn_recipe *recipe, uint32_t j)
{
    return (double)j * recipe->size_z / (double)recipe->cells_z;
}

/* A sub-step's progress in its slice of the parent's range. */
static int progress_bridge(double done, const char *stage, void *user)
{
    return trn_progress_report(user, done, stage) ? TRN_CANCEL : TRN_CONTINUE;
}

static trn_status oom(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "generate: out of memory for %s", what);
}

static trn_status add_diagnostic(trn_generated *gen, const char *text, trn_error *err)
{
    char **list = realloc(gen->diagnostics, (gen->diagnostic_count + 1) * sizeof *list);
    if (!list) return oom(err, "a diagnostic");
    gen->diagnostics = list;
    size_t n = strlen(text);
    char *copy = malloc(n + 1);
    if (!copy) return oom(err, "a diagnostic");
    memcpy(copy, text, n + 1);
    list[gen->diagnostic_count++] = copy;
    return TRN_OK;
}

void trn_generated_dispose(trn_generated *gen)
{
    if (!gen) return;
    trn_field_dispose(&gen->field);
    trn_labels_dispose(&gen->biomes);
    free(gen->sources);
    free(gen->rule_index);
    free(gen->water_distance);
    free(gen->exclusion);
    free(gen->nodes);
    trn_water_dispose(&gen->water);
    if (gen->has_biome_water) trn_water_dispose(&gen->biome_water);
    trn_instances_dispose(&gen->instances);
    trn_instances_dispose(&gen->scatter_base);
    trn_scatter_report_dispose(&gen->scatter);
    free(gen->roles);
    free(gen->transport);
    for (uint32_t k = 0; k < gen->diagnostic_count; k++)
        free(gen->diagnostics[k]);
    free(gen->diagnostics);
    memset(gen, 0, sizeof *gen);
}

/* What the biome pass needs, shared by every row. */
typedef struct biome_pass {
    const trn_recipe *recipe;
    trn_generated *gen;
    const uint8_t *rule_biome;  /* biome index of each rule */
    const uint8_t *rule_active; /* nonzero: the rule is evaluated (its biome layer is enabled) */
    uint8_t default_biome;
    bool need_slope, need_moisture; /* skip work no rule can look at */
    bool rules;                     /* a Biome Rules node feeds the output */
} biome_pass;

static void biome_row(const biome_pass *bp, uint32_t j, double *slope, float *moisture)
{
    const trn_recipe *recipe = bp->recipe;
    trn_generated *gen = bp->gen;
    const size_t nx = (size_t)recipe->cells_x + 1u, base = (size_t)j * nx;
    if (bp->need_slope)
        trn_field_slope_row(&gen->field, j, slope);
    else
        for (size_t i = 0; i < nx; i++)
            slope[i] = 0.0;
    /* The row function is bit for bit trn_moisture_at at sample_x / sample_z positions. */
    if (bp->need_moisture)
        trn_moisture_row(recipe->seed, recipe->size_x, recipe->cells_x, sample_z(recipe, j),
                         moisture);
    else
        for (size_t i = 0; i < nx; i++)
            moisture[i] = 0.0f;
    for (size_t i = 0; i < nx; i++) {
        trn_sample_context ctx;
        ctx.height = (double)gen->field.heights[base + i];
        ctx.slope = slope[i];
        ctx.moisture = (double)moisture[i];
        ctx.water_distance = (double)gen->water_distance[base + i];
        ctx.substrate =
            trn_substrate_classify(ctx.height, ctx.slope, ctx.water_distance, gen->sea_level);
        const int r = bp->rules ? trn_rules_pick_active(recipe->rules, recipe->rule_count,
                                                        bp->rule_active, &ctx)
                                : -1;
        gen->biomes.values[base + i] = r >= 0 ? bp->rule_biome[r] : bp->default_biome;
        gen->sources[base + i] = (uint8_t)(r >= 0 ? TRN_BIOME_FROM_RULE : TRN_BIOME_FROM_DEFAULT);
        gen->rule_index[base + i] = (int16_t)r;
    }
}

/* Rows to assign before a second thread helps. */
#define BIOME_PARALLEL_ROWS 64u

typedef struct biome_task {
    const biome_pass *bp;
    double *scratch; /* 2 nx doubles per thread */
    size_t nx;
} biome_task;

static void biome_row_task(void *ctx, size_t j, int t)
{
    const biome_task *c = ctx;
    double *row = c->scratch + (size_t)t * 2u * c->nx;
    biome_row(c->bp, (uint32_t)j, row, (float *)(row + c->nx)); /* nx floats fit */
}

/* Each row one task with its thread's scratch, so the thread count cannot change the result;
 * one parallel region, progress and cancel from the calling thread (core/rows.h). */
static trn_status assign_biomes(const biome_pass *bp, int threads, const trn_progress *pr,
                                trn_error *err)
{
    const trn_recipe *recipe = bp->recipe;
    const size_t nx = (size_t)recipe->cells_x + 1u;
    const uint32_t nz = recipe->cells_z + 1u;
    threads = trn_rows_threads(nz, threads, BIOME_PARALLEL_ROWS);
    size_t per_thread;
    if (!trn_mul_size(nx, 2, &per_thread) ||
        !trn_mul_size(per_thread, (size_t)threads, &per_thread))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "generate: rows too long");
    biome_task task = {bp, malloc(per_thread * sizeof(double)), nx};
    if (!task.scratch) return oom(err, "row scratch");
    const char *stage = "biomes";
    trn_status st = TRN_OK;
    if (trn_progress_report(pr, 0.0, stage) ||
        trn_rows_run(nz, threads, BIOME_PARALLEL_ROWS, biome_row_task, &task, pr, stage))
        st = TRN_ERR_CANCELLED;
    free(task.scratch);
    if (st == TRN_ERR_CANCELLED)
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "%s: cancelled", stage);
    return st;
}

static bool any_rule_uses(const trn_recipe *recipe, bool slope, bool moisture)
{
    for (uint32_t r = 0; r < recipe->rule_count; r++) {
        const trn_rule *rule = &recipe->rules[r];
        if (slope && (rule->slope.set || rule->substrate_mask)) return true;
        if (moisture && rule->moisture.set) return true;
    }
    return false;
}

static trn_status replay_layers(const trn_recipe *recipe, int threads, trn_generated *gen,
                                trn_replay_keep *keep, biome_pass *bp, const trn_progress *pr,
                                trn_error *err);

/* The base heights from the recipe's graph, written into field (already on the grid). */
static trn_status evaluate_graph(const trn_recipe *recipe, int threads,
                                 const trn_generate_options *options, trn_generated *gen,
                                 float **heights, bool *rules, uint8_t **wet,
                                 const trn_progress *pr, trn_error *err)
{
    trn_graph scratch;
    const trn_graph *graph; /* the recipe's own, read once; scratch only for a replaced text */
    trn_status st = trn_graph_of_recipe(recipe, &graph, &scratch, err);
    if (st) return st;
    trn_graph_options go;
    memset(&go, 0, sizeof go);
    go.threads = threads;
    go.quality = options ? options->quality : TRN_EROSION_FINAL;
    go.cache = options ? options->cache : NULL;
    go.max_work = options ? options->max_work : 0;
    go.max_memory = options ? options->max_memory : 0;
    go.palette = options ? options->palette : NULL; /* Scatter Palette nodes place it */
    trn_graph_run *run = NULL;
    st = trn_graph_evaluate(graph, recipe, &go, &run, progress_bridge, (void *)pr, err);
    trn_graph_dispose(&scratch);
    if (st) return st;
    uint32_t count = 0;
    const trn_node_report *reports = trn_graph_run_report(run, &count);
    gen->nodes = malloc((count ? count : 1u) * sizeof *gen->nodes);
    trn_graph_value v;
    const size_t n = ((size_t)recipe->cells_x + 1u) * ((size_t)recipe->cells_z + 1u);
    *heights = malloc(n * sizeof **heights);
    if (!gen->nodes || !*heights) {
        trn_graph_run_free(run);
        return oom(err, "the graph's result");
    }
    memcpy(gen->nodes, reports, count * sizeof *gen->nodes);
    gen->node_count = count;
    gen->quality = go.quality;
    st = trn_graph_run_terrain(run, &v, err);
    if (!st) trn_rows_copy(*heights, v.values, n * sizeof **heights);
    /* Erosion's signed transport of the published field; sculpt strokes add none. */
    if (!st && v.transport) {
        if (!(gen->transport = malloc(n * sizeof *gen->transport)))
            st = oom(err, "the erosion transport");
        else
            trn_rows_copy(gen->transport, v.transport, n * sizeof *gen->transport);
    }
    /* A Scatter Palette's candidates, refiltered on the final surface when generation ends. */
    const trn_instances *candidates = trn_graph_run_instances(run);
    if (!st && candidates) {
        const size_t placed = candidates->count;
        gen->scatter_base.items = malloc((placed ? placed : 1u) * sizeof *gen->scatter_base.items);
        if (!gen->scatter_base.items) {
            st = oom(err, "the scatter candidates");
        } else {
            if (placed)
                memcpy(gen->scatter_base.items, candidates->items,
                       placed * sizeof *candidates->items);
            gen->scatter_base.count = placed;
            gen->scatter_from_graph = true;
        }
    }
    *rules = trn_graph_run_biome_rules(run);
    /* The published water, and the wet samples the biome rules, roles and scatter measure
     * distances from: the water wired into Biome Rules, else the water the output publishes
     * (the sea inferred from the sea level only when the graph publishes none). */
    const trn_water *published = trn_graph_run_water(run),
                    *classified = trn_graph_run_biome_water(run);
    if (!classified) classified = published;
    if (!st && published) {
        st = trn_water_copy(published, &gen->water, err);
        gen->has_water = st == TRN_OK;
    }
    /* Strokes move ground after the graph: the classifying water is resolved again on the
     * final surface, so it is kept whole when it is not the published water. */
    if (!st && classified && classified != published && recipe->stroke_count) {
        st = trn_water_copy(classified, &gen->biome_water, err);
        gen->has_biome_water = st == TRN_OK;
    }
    if (!st && classified && classified->wet) {
        if (!(*wet = malloc(n)))
            st = oom(err, "the wet samples");
        else
            memcpy(*wet, classified->wet, n);
    } else if (!st && classified) {
        *wet = calloc(n, 1); /* water without bodies: nothing is wet */
        if (!*wet) st = oom(err, "the wet samples");
    }
    /* Freed before the per-sample maps exist, so the peak stays at the generator's own. */
    trn_graph_run_free(run);
    return st;
}

/* water resolved again from its bodies (without carving) when the ground under it changed. */
static trn_status settle_one(trn_water *water, const trn_field *field, int threads, trn_error *err)
{
    if (water->ground_hash == trn_water_ground_hash(field)) return TRN_OK;
    trn_water fresh;
    const trn_water_resolve_options o = {threads};
    trn_status st = trn_water_refresh(water, field, &o, &fresh, err);
    if (st) return st;
    trn_water_dispose(water);
    *water = fresh;
    return TRN_OK;
}

trn_status trn_generated_settle_water(trn_generated *gen, int threads, trn_error *err)
{
    trn_status st = gen->has_water ? settle_one(&gen->water, &gen->field, threads, err) : TRN_OK;
    if (!st && gen->has_biome_water) st = settle_one(&gen->biome_water, &gen->field, threads, err);
    return st;
}

trn_status trn_generated_water_distance(trn_generated *gen, const trn_progress *pr, trn_error *err)
{
    /* The biome water, else the published water, else the sea inferred from the sea level. */
    const trn_water *w = gen->has_biome_water ? &gen->biome_water
                         : gen->has_water     ? &gen->water
                                              : NULL;
    const size_t n = trn_field_sample_count(&gen->field);
    uint8_t *none = NULL;
    const uint8_t *wet = w ? w->wet : NULL;
    if (w && !wet && !(wet = none = calloc(n ? n : 1u, 1))) return oom(err, "the wet samples");
    trn_progress local = pr ? *pr : trn_progress_make(NULL, NULL);
    const trn_status st =
        wet ? trn_water_distance_fill_wet(&gen->field, wet, gen->water_distance, progress_bridge,
                                          &local, err)
            : trn_water_distance_fill(&gen->field, gen->sea_level, gen->water_distance,
                                      progress_bridge, &local, err);
    free(none);
    return st;
}

static trn_status generate(const trn_recipe *recipe, int threads,
                           const trn_generate_options *options, const trn_field *frozen,
                           trn_generated *gen, trn_replay_keep *keep, const trn_progress *pr,
                           trn_error *err)
{
    uint64_t print = 0; /* the recipe's fingerprint, taken once for validation and the key */
    trn_status st = trn_rcp_validate_print(recipe, &print, err);
    if (!st) st = trn_rcp_check_whole_grid(recipe, "generation", err);
    if (st) return st;
    /* Labels are bytes with 255 reserved for "none"; rule indices are int16 with -1 = none. */
    if (recipe->biome_count > TRN_LABEL_NONE)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "biomes: %u biomes, at most %u can be generated", recipe->biome_count,
                             TRN_LABEL_NONE);
    if (recipe->rule_count > (uint32_t)INT16_MAX)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "rules: %u rules, at most %d can be generated", recipe->rule_count,
                             INT16_MAX);
    const int landform = trn_recipe_find_landform(recipe, recipe->default_landform);
    const int default_biome = trn_recipe_find_biome(recipe, recipe->default_biome);
    if (landform < 0 || default_biome < 0)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "default_landform and default_biome must name a landform and a "
                             "biome");
    uint8_t *rule_biome = malloc(2u * (recipe->rule_count ? recipe->rule_count : 1u));
    if (!rule_biome) return oom(err, "the rule table");
    uint8_t *rule_active = rule_biome + (recipe->rule_count ? recipe->rule_count : 1u);
    for (uint32_t r = 0; r < recipe->rule_count; r++) {
        rule_active[r] = trn_recipe_rule_active(recipe, &recipe->rules[r]);
        const int b = trn_recipe_find_biome(recipe, recipe->rules[r].biome);
        if (b < 0) {
            free(rule_biome);
            return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                                 "rules[%u].biome: \"%s\" is not a biome of this recipe", r,
                                 recipe->rules[r].biome ? recipe->rules[r].biome : "");
        }
        rule_biome[r] = (uint8_t)b;
    }

    if (recipe->stroke_count) {
        /* Refused before the graph runs: stroke costs are known from the recipe alone. */
        trn_replay_plan plan;
        if ((st = trn_replay_plan_make(recipe, &plan, err))) goto done;
        st = trn_replay_check_work(recipe, &plan, options ? options->max_work : 0, err);
        trn_replay_plan_dispose(&plan);
        if (st) goto done;
    }
    if ((st = trn_rcp_cache_key_of_print(recipe, print, &gen->cache_key, err))) goto done;
    gen->sea_level = trn_recipe_sea_level(recipe, &gen->sea_level_source, NULL, 0);
    char msg[512];
    if (trn_landform_precision_check(&recipe->landforms[landform], recipe->size_x, recipe->size_z,
                                     msg, sizeof msg) &&
        (st = add_diagnostic(gen, msg, err)))
        goto done;

    /* The graph first: validation failures and cancels cost nothing else, and its result is
     * copied before the per-sample maps are allocated. */
    float *base = NULL;
    uint8_t *wet = NULL;
    bool rules = true;
    trn_progress sub = trn_progress_sub(pr, 0.0, 0.6);
    if (!frozen &&
        (st = evaluate_graph(recipe, threads, options, gen, &base, &rules, &wet, &sub, err))) {
        free(base);
        free(wet);
        goto done;
    }

    /* The five per-sample arrays: 4 + 1 + 1 + 2 + 4 = 12 bytes a sample, nothing else
     * full-size. */
    if ((st = trn_field_init(&gen->field, recipe->cells_x, recipe->cells_z, recipe->size_x,
                             recipe->size_z, err)))
        goto done;
    if ((st = trn_labels_init(&gen->biomes, recipe->cells_x, recipe->cells_z, err))) goto done;
    for (uint32_t b = 0; b < recipe->biome_count && !st; b++)
        st = trn_labels_add_name(&gen->biomes, recipe->biomes[b].name,
                                 strlen(recipe->biomes[b].name), err);
    if (st) {
        free(base);
        free(wet);
        goto done;
    }
    const size_t n = trn_field_sample_count(&gen->field);
    if (base) {
        free(gen->field.heights);
        gen->field.heights = base;
    }
    gen->sources = malloc(n);
    gen->rule_index = malloc(n * sizeof *gen->rule_index);
    gen->water_distance = malloc(n * sizeof *gen->water_distance);
    if (!gen->sources || !gen->rule_index || !gen->water_distance) {
        free(wet);
        st = oom(err, "the per-sample maps");
        goto done;
    }

    if (frozen) {
        if (frozen->cells_x != recipe->cells_x || frozen->cells_z != recipe->cells_z ||
            !frozen->heights) {
            st = trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                               "generate: the frozen base is %ux%u cells, the recipe %ux%u",
                               frozen->cells_x, frozen->cells_z, recipe->cells_x, recipe->cells_z);
            goto done;
        }
        memcpy(gen->field.heights, frozen->heights, n * sizeof *gen->field.heights);
    }
    sub = trn_progress_sub(pr, 0.6, 0.75);
    /* Connected water replaces the sea inferred from the sea level. */
    /* With strokes it is measured once, on the final surface (replay_layers). */
    st = recipe->stroke_count ? TRN_OK
         : wet ? trn_water_distance_fill_wet(&gen->field, wet, gen->water_distance,
                                             progress_bridge, &sub, err)
               : trn_water_distance_fill(&gen->field, gen->sea_level, gen->water_distance,
                                         progress_bridge, &sub, err);
    free(wet);
    if (st) goto done;

    biome_pass bp;
    bp.recipe = recipe;
    bp.gen = gen;
    bp.rule_biome = rule_biome;
    bp.rule_active = rule_active;
    bp.default_biome = (uint8_t)default_biome;
    bp.need_slope = any_rule_uses(recipe, true, false);
    bp.need_moisture = any_rule_uses(recipe, false, true);
    bp.rules = rules;
    gen->biome_rules = rules;
    if (recipe->stroke_count || keep) {
        st = replay_layers(recipe, threads, gen, keep, &bp, pr, err);
        goto done;
    }
    sub = trn_progress_sub(pr, 0.75, 1.0);
    st = assign_biomes(&bp, threads, &sub, err);
done:
    free(rule_biome);
    return st;
}

/* Layers after the base: heights stages on the whole grid as one window, the water and its
 * distance settled on the final surface, biomes there, painted regions, exclusion mask. Only recipes with strokes (or a session) come here, so a recipe without
 * strokes keeps its 12 bytes a sample. */
static trn_status replay_layers(const trn_recipe *recipe, int threads, trn_generated *gen,
                                trn_replay_keep *keep, biome_pass *bp, const trn_progress *pr,
                                trn_error *err)
{
    trn_replay_plan plan;
    trn_status st = trn_replay_plan_make(recipe, &plan, err);
    if (st) return st;
    const trn_grid grid = trn_replay_grid(recipe);
    const size_t n = trn_field_sample_count(&gen->field);
    float **lf = NULL;
    trn_field base_copy;
    memset(&base_copy, 0, sizeof base_copy);
    float *mask = NULL;
    lf = calloc(recipe->landform_count ? recipe->landform_count : 1u, sizeof *lf);
    if (!lf) {
        st = oom(err, "the landform table");
        goto out;
    }
    if (keep) {
        if ((st = trn_field_init(&keep->base, recipe->cells_x, recipe->cells_z, recipe->size_x,
                                 recipe->size_z, err)))
            goto out;
        memcpy(keep->base.heights, gen->field.heights, n * sizeof *gen->field.heights);
    }
    for (uint32_t o = 0; o < plan.stage_end[0] && !st; o++) {
        const int l = plan.landform[plan.order[o]];
        if (l >= 0 && !lf[l])
            st = trn_replay_landform_heights(recipe, l, &gen->field, threads, gen->quality, &lf[l],
                                             err);
    }
    if (st) goto out;
    trn_window win;
    win.grid = grid;
    win.box = trn_grid_box(&grid);
    win.values = gen->field.heights;
    if ((st = trn_replay_heights(recipe, &plan, lf, &win, err))) goto out;
    /* The water covers the final surface, and every distance to it is measured there: a stroke
     * that lowers ground under a body's level makes it wet for the rules, roles and scatter. */
    if ((st = trn_generated_settle_water(gen, threads, err))) goto out;
    if (recipe->stroke_count && (st = trn_generated_water_distance(gen, NULL, err))) goto out;
    trn_progress sub = trn_progress_sub(pr, 0.75, 1.0);
    if ((st = assign_biomes(bp, threads, &sub, err))) goto out;
    trn_replay_paint(recipe, &plan, win.box, gen->biomes.values, gen->sources, gen->rule_index);
    if (trn_replay_has_exclusions(&plan)) {
        mask = calloc(n, sizeof *mask);
        gen->exclusion = malloc(n);
        if (!mask || !gen->exclusion) {
            st = oom(err, "the exclusion mask");
            goto out;
        }
        win.values = mask;
        if ((st = trn_replay_exclusion(recipe, &plan, &win, err))) goto out;
        for (size_t k = 0; k < n; k++)
            gen->exclusion[k] = trn_replay_quantise(mask[k]);
    }
out:
    if (keep && !st) {
        keep->lf = lf;
        keep->lf_count = recipe->landform_count;
        lf = NULL;
    }
    for (uint32_t l = 0; lf && l < recipe->landform_count; l++)
        free(lf[l]);
    free(lf);
    free(mask);
    trn_replay_plan_dispose(&plan);
    return st;
}

trn_status trn_generated_biomes_box(const trn_recipe *recipe, const trn_replay_plan *plan,
                                    trn_generated *gen, trn_box box, trn_error *err)
{
    if (trn_box_empty(&box)) return TRN_OK;
    const int default_biome = trn_recipe_find_biome(recipe, recipe->default_biome);
    uint8_t *rule_biome = malloc(2u * (recipe->rule_count ? recipe->rule_count : 1u));
    uint8_t *rule_active =
        rule_biome ? rule_biome + (recipe->rule_count ? recipe->rule_count : 1u) : NULL;
    const size_t bw = (size_t)(box.i1 - box.i0 + 1), bh = (size_t)(box.j1 - box.j0 + 1);
    uint8_t *b = malloc(bw * bh), *src = malloc(bw * bh);
    int16_t *ri = malloc(bw * bh * sizeof *ri);
    if (!rule_biome || !b || !src || !ri || default_biome < 0) {
        free(rule_biome);
        free(b);
        free(src);
        free(ri);
        return default_biome < 0 ? trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                                                 "default_biome must name a biome")
                                 : oom(err, "a biome window");
    }
    for (uint32_t r = 0; r < recipe->rule_count; r++) {
        const int k = trn_recipe_find_biome(recipe, recipe->rules[r].biome);
        rule_biome[r] = (uint8_t)(k < 0 ? 0 : k);
        rule_active[r] = trn_recipe_rule_active(recipe, &recipe->rules[r]);
    }
    const bool need_slope = any_rule_uses(recipe, true, false);
    const bool need_moisture = any_rule_uses(recipe, false, true);
    const size_t nx = (size_t)recipe->cells_x + 1u;
    /* The same context as biome_row: trn_field_slope_at equals the row's slope and
     * trn_moisture_at the row's moisture, bit for bit. */
    for (int64_t j = box.j0; j <= box.j1; j++)
        for (int64_t i = box.i0; i <= box.i1; i++) {
            const size_t k = (size_t)j * nx + (size_t)i;
            trn_sample_context ctx;
            ctx.height = (double)gen->field.heights[k];
            ctx.slope =
                need_slope ? trn_field_slope_at(&gen->field, (uint32_t)i, (uint32_t)j) : 0.0;
            ctx.moisture =
                need_moisture
                    ? (double)(float)trn_moisture_at(recipe->seed, sample_x(recipe, (uint32_t)i),
                                                     sample_z(recipe, (uint32_t)j))
                    : 0.0;
            ctx.water_distance = (double)gen->water_distance[k];
            ctx.substrate =
                trn_substrate_classify(ctx.height, ctx.slope, ctx.water_distance, gen->sea_level);
            const int r =
                gen->biome_rules
                    ? trn_rules_pick_active(recipe->rules, recipe->rule_count, rule_active, &ctx)
                    : -1;
            const size_t w = (size_t)(j - box.j0) * bw + (size_t)(i - box.i0);
            b[w] = r >= 0 ? rule_biome[r] : (uint8_t)default_biome;
            src[w] = (uint8_t)(r >= 0 ? TRN_BIOME_FROM_RULE : TRN_BIOME_FROM_DEFAULT);
            ri[w] = (int16_t)r;
        }
    trn_replay_paint(recipe, plan, box, b, src, ri);
    for (int64_t j = box.j0; j <= box.j1; j++) {
        const size_t k = (size_t)j * nx + (size_t)box.i0, w = (size_t)(j - box.j0) * bw;
        memcpy(gen->biomes.values + k, b + w, bw);
        memcpy(gen->sources + k, src + w, bw);
        memcpy(gen->rule_index + k, ri + w, bw * sizeof *ri);
    }
    free(rule_biome);
    free(b);
    free(src);
    free(ri);
    return TRN_OK;
}

static trn_status generate_with(const trn_recipe *recipe, const trn_generate_options *options,
                                const trn_field *frozen, trn_generated *out, trn_replay_keep *keep,
                                trn_progress_fn progress, void *user, trn_error *err);

trn_status trn_recipe_generate(const trn_recipe *recipe, const trn_generate_options *options,
                               trn_generated *out, trn_progress_fn progress, void *user,
                               trn_error *err)
{
    return generate_with(recipe, options, NULL, out, NULL, progress, user, err);
}

trn_status trn_recipe_generate_with(const trn_recipe *recipe, const trn_generate_options *options,
                                    const trn_field *frozen_base, trn_generated *out,
                                    trn_replay_keep *keep, trn_progress_fn progress, void *user,
                                    trn_error *err)
{
    return generate_with(recipe, options, frozen_base, out, keep, progress, user, err);
}

static trn_status generate_with(const trn_recipe *recipe, const trn_generate_options *options,
                                const trn_field *frozen, trn_generated *out, trn_replay_keep *keep,
                                trn_progress_fn progress, void *user, trn_error *err)
{
    if (keep) memset(keep, 0, sizeof *keep);
    if (!out) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "generate: no output");
    memset(out, 0, sizeof *out);
    if (!recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "generate: no recipe");
    if (options && options->threads < 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "generate: threads must be 0 (default) or positive, not %d",
                             options->threads);
    int threads = 1;
#ifdef _OPENMP
    /* The landform fill uses OpenMP's default team: set it for this call, then restore it. */
    const int saved_threads = omp_get_max_threads();
    threads = options && options->threads > 0 ? options->threads : saved_threads;
    omp_set_num_threads(threads);
#endif
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    trn_progress pr = trn_progress_make(progress, user);
    trn_status st = generate(recipe, threads, options, frozen, &gen, keep, &pr, err);
    if (!st) st = trn_generated_finish(recipe, options, threads, &gen, progress, user, err);
#ifdef _OPENMP
    omp_set_num_threads(saved_threads);
#endif
    if (st) {
        trn_generated_dispose(&gen);
        trn_replay_keep_dispose(keep);
        return st;
    }
    *out = gen;
    return TRN_OK;
}

void trn_generated_context(const trn_generated *gen, const trn_recipe *recipe, uint32_t i,
                           uint32_t j, trn_sample_context *ctx)
{
    const size_t k = (size_t)j * ((size_t)gen->field.cells_x + 1u) + i;
    ctx->height = (double)gen->field.heights[k];
    ctx->slope = trn_field_slope_at(&gen->field, i, j);
    ctx->moisture = trn_moisture_at(recipe->seed, sample_x(recipe, i), sample_z(recipe, j));
    ctx->water_distance = (double)gen->water_distance[k];
    ctx->substrate =
        trn_substrate_classify(ctx->height, ctx->slope, ctx->water_distance, gen->sea_level);
}
