/* The last pass of generation: surface roles and palette placements on the final surface. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/drainage.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"

static trn_status oom(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "generate: out of memory for %s", what);
}

/* Moisture per sample, bit for bit what the biome rules saw (their rows). */
static float *moisture_of(const trn_recipe *recipe, const trn_field *field)
{
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    /* Rows are independent (a row's values depend on its position only): any thread count
     * writes the same bytes. */
    float *m = malloc(nx * nz * sizeof *m);
    if (!m) return NULL;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < nz; j++)
        trn_moisture_row(recipe->seed, field->size_x, field->cells_x,
                         (double)j * field->size_z / (double)field->cells_z, m + j * nx);
    return m;
}

static bool palette_reads_moisture(const trn_palette *p)
{
    for (uint32_t r = 0; p && r < p->rule_count; r++)
        if (p->rules[r].moisture.has) return true;
    return false;
}

trn_status trn_generated_scatter_env_init(const trn_generated *gen, const trn_recipe *recipe,
                                          const trn_palette *palette,
                                          trn_generated_scatter_env *out, trn_error *err)
{
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter environment: no output");
    memset(out, 0, sizeof *out);
    if (!gen || !recipe || !gen->field.heights || !gen->water_distance)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "scatter environment: a generated terrain and its recipe are needed");
    const size_t n = trn_field_sample_count(&gen->field);
    out->wet = malloc(n ? n : 1u);
    if (!out->wet) return oom(err, "the wet mask");
    /* Wet: distance 0 to water, the published bodies' coverage or the inferred sea's. */
#pragma omp parallel for schedule(static)
    for (size_t k = 0; k < n; k++)
        out->wet[k] = gen->water_distance[k] == 0.0f;
    if (palette_reads_moisture(palette) && !(out->moisture = moisture_of(recipe, &gen->field))) {
        trn_generated_scatter_env_dispose(out);
        return oom(err, "the moisture layer");
    }
    trn_scatter_env *env = &out->env;
    env->field = &gen->field;
    env->biome = gen->biomes.values;
    env->biome_names = (const char *const *)gen->biomes.names;
    env->biome_name_count = gen->biomes.name_count;
    env->moisture = out->moisture;
    env->water_distance = gen->water_distance;
    env->wet = out->wet;
    env->exclusion = gen->exclusion;
    env->scatter_seed = trn_subseed(recipe->seed, "scatter");
    return TRN_OK;
}

void trn_generated_scatter_env_dispose(trn_generated_scatter_env *env)
{
    if (!env) return;
    free(env->wet);
    free(env->moisture);
    memset(env, 0, sizeof *env);
}

void trn_recipe_roles_params(const trn_recipe *recipe, trn_roles_params *params)
{
    trn_roles_params_default(params);
    if (recipe && recipe->has_snow_line) params->snow_height = recipe->snow_line;
}

trn_status trn_generated_classify_roles(const trn_generated *gen, const trn_recipe *recipe,
                                        const trn_roles_params *params, uint8_t *roles,
                                        trn_error *err)
{
    if (!gen || !recipe || !roles || !gen->field.heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "surface roles: a generated terrain, its recipe and an output are "
                             "needed");
    trn_roles_params p;
    if (params)
        p = *params;
    else
        trn_recipe_roles_params(recipe, &p);
    trn_drainage d;
    memset(&d, 0, sizeof d);
    float *moisture = moisture_of(recipe, &gen->field);
    bool *snow = calloc(recipe->biome_count ? recipe->biome_count : 1u, sizeof *snow);
    trn_status st = TRN_OK;
    if (!moisture || !snow) st = oom(err, "the surface roles' inputs");
    /* Flow over the final surface, so a sculpted valley carries its channel. */
    if (!st) st = trn_drainage_compute(&gen->field, gen->sea_level, &d, NULL, NULL, err);
    if (!st) {
        for (uint32_t b = 0; b < recipe->biome_count; b++)
            snow[b] = recipe->biomes[b].allow_snow;
        trn_roles_input in;
        memset(&in, 0, sizeof in);
        in.field = &gen->field;
        in.transport = gen->transport;
        in.accumulation = d.accumulation;
        in.moisture = moisture;
        in.wet = gen->has_water ? gen->water.wet : NULL;
        in.water_distance = gen->water_distance;
        in.biomes = gen->biomes.values;
        in.allow_snow = snow;
        in.allow_snow_count = recipe->biome_count;
        st = trn_roles_classify(&in, &p, roles, err);
    }
    trn_drainage_dispose(&d);
    free(moisture);
    free(snow);
    return st;
}

trn_status trn_generated_finish(const trn_recipe *recipe, const trn_generate_options *options,
                                int threads, trn_generated *gen, trn_progress_fn progress,
                                void *user, trn_error *err)
{
    if (!options) return TRN_OK;
    trn_status st = TRN_OK;
    if (options->roles) {
        gen->roles = malloc(trn_field_sample_count(&gen->field));
        if (!gen->roles) return oom(err, "the surface roles");
        if ((st = trn_generated_classify_roles(gen, recipe, NULL, gen->roles, err))) return st;
    }
    if (options->palette) {
        trn_generated_scatter_env env;
        if ((st = trn_generated_scatter_env_init(gen, recipe, options->palette, &env, err)))
            return st;
        trn_scatter_options so = {threads, 0, 0, options->max_placements};
        trn_instances placed;
        memset(&placed, 0, sizeof placed);
        /* A graph's Scatter Palette placed candidates before the layers: they snap to the final
         * surface and are checked again there, never replaced by new ones. */
        if (gen->scatter_from_graph)
            st = trn_scatter_refilter(options->palette, &gen->scatter_base, &env.env, &placed,
                                      &gen->scatter, err);
        else
            st = trn_scatter_run(options->palette, &env.env, &so, &placed, &gen->scatter, progress,
                                 user, err);
        trn_generated_scatter_env_dispose(&env);
        if (st) return st;
        gen->instances = placed;
    }
    return TRN_OK;
}
