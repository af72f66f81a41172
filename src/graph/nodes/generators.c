/* Generator nodes: Landform, Noise Terrain and Flat Terrain, heightfields from nothing. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/nodes/node_common.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"

static const trn_pin_spec out_field[] = {{"field", TRN_PIN_HEIGHTFIELD, false, "the heights"}};

static const trn_param_spec p_landform[] = {
    OPT_STR("landform", "name of a recipe landform; absent = the recipe's default_landform")};

static const trn_param_spec p_noise[] = {
    CHOICE("profile", "fbm", "fbm|ridged", "noise profile: rolling fbm or sharp-crested ridged"),
    NUM("base_height", 0, -TRN_BIG, TRN_BIG, "metres at noise value 0"),
    NUM("height_variation", 100, 0, TRN_BIG, "metres between noise values 0 and 1"),
    POS("feature_size", 256, 0, HUGE_VAL, "world units of the largest octave's period"),
    NUM("roughness", 0.5, 0, 1, "amplitude gain per octave"),
    INT("octaves", 5, 1, 16, "noise octaves"),
    NUM("warp_amplitude", 0, 0, TRN_BIG, "world units of domain warp (0 = none)"),
    POS("warp_feature_size", 128, 0, HUGE_VAL, "world units of the warp noise's period"),
    POS("stretch", 1, 0, TRN_BIG, "elongation along heading"),
    NUM("heading", 0, -TRN_BIG, TRN_BIG, "degrees from +X toward +Z"),
    OPT_INT("seed", 0, 9007199254740992.0,
            "noise seed; absent = the sub-seed of channel \"node:<id>\" of the world seed"),
};

static const trn_param_spec p_flat[] = {NUM("height", 0, -TRN_BIG, TRN_BIG, "metres")};

/* The parameters as members of trn_landform. */
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, trn_landform, member)
static const trn_param_field landform_fields[] = {
    ROW("profile", CHOICE, profile), /* fbm|ridged: the enum's order */
    ROW("base_height", DOUBLE, base_height),
    ROW("height_variation", DOUBLE, height_variation),
    ROW("feature_size", DOUBLE, feature_size),
    ROW("roughness", DOUBLE, roughness),
    ROW("octaves", U32, octaves),
    ROW("warp_amplitude", DOUBLE, warp_amplitude),
    ROW("warp_feature_size", DOUBLE, warp_feature_size),
    ROW("stretch", DOUBLE, stretch),
    ROW("heading", DOUBLE, heading),
};
#undef ROW

/* A Landform node's one parameter, a Flat Terrain's and whether a Noise Terrain gives its
 * octaves (the work names them). */
typedef struct named_params {
    const char *landform;
} named_params;
static const trn_param_field named_fields[] = {
    TRN_PARAM_TEXT_ROW("landform", named_params, landform)};

typedef struct flat_params {
    double height;
} flat_params;
static const trn_param_field flat_fields[] = {TRN_PARAM_DOUBLE_ROW("height", flat_params, height)};

typedef struct noise_given {
    bool octaves;
} noise_given;
static const trn_param_field noise_given_fields[] = {
    TRN_PARAM_NUMBER_GIVEN_ROW("octaves", noise_given, octaves)};

static void landform_from_params(const trn_graph_node *n, const trn_node_type *t, trn_landform *lf)
{
    memset(lf, 0, sizeof *lf);
    lf->name = n->id;
    trn_graph_params_fill(n, t, landform_fields, sizeof landform_fields / sizeof landform_fields[0],
                          lf);
}

static const trn_landform *named_landform(const trn_graph_node *n, const trn_node_type *t,
                                          const trn_recipe *recipe)
{
    named_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(named_fields), &p);
    const char *name = p.landform ? p.landform : recipe->default_landform;
    const int k = trn_recipe_find_landform(recipe, name);
    return k >= 0 ? &recipe->landforms[k] : NULL;
}

/* A landform's evolution as a Stream Power node: the one read with the recipe (its model), else
 * its text read into *scratch (dispose it in every case); NULL when it has none (or, never after
 * validation, when its parameters do not check). */
static const trn_graph_node *evolution_node(const trn_recipe *recipe, const trn_landform *lf,
                                            trn_graph *scratch)
{
    memset(scratch, 0, sizeof *scratch);
    if (!lf || !lf->evolution) return NULL;
    const trn_graph_node *kept = trn_rcp_model_evolution(recipe, lf);
    if (kept) return kept;
    char key[64], msg[400];
    bool unknown;
    return trn_graph_params_parse("stream_power", lf->evolution, "evolution", scratch, key,
                                  sizeof key, msg, sizeof msg, &unknown) == TRN_OK
               ? &scratch->nodes[0]
               : NULL;
}

bool trn_node_landform_evolves(const trn_graph_node *n, const trn_node_type *t,
                               const trn_recipe *recipe)
{
    const trn_landform *lf = named_landform(n, t, recipe);
    return lf && lf->evolution;
}

/* Samples x (octaves + 2 warp octaves when warped). */
static void noise_work(const trn_landform *lf, const trn_recipe *recipe, trn_node_work_info *out)
{
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    const uint32_t octaves = lf ? lf->octaves : 1u, warp = lf && lf->warp_amplitude > 0 ? 2 : 0;
    out->work = trn_sat_mul(samples, (uint64_t)octaves + warp);
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples x (%" PRIu32 " octaves + %" PRIu32 " warp)", samples, octaves,
             warp);
}

static void landform_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                          trn_erosion_quality quality, trn_node_work_info *out)
{
    const trn_landform *lf = named_landform(n, t, recipe);
    noise_work(lf, recipe, out);
    trn_graph g;
    const trn_graph_node *sp = evolution_node(recipe, lf, &g);
    trn_node_work_info evo;
    memset(&evo, 0, sizeof evo);
    if (sp) trn_node_evolve_work(sp, &trn_node_stream_power.type, recipe, quality, &evo);
    trn_graph_dispose(&g);
    if (!sp) return;
    char noise[sizeof out->detail];
    memcpy(noise, out->detail, sizeof noise);
    /* The evolution costs what a Stream Power node costs, not what noise does. */
    out->seconds = ((double)out->work * trn_work_unit_ns("landform") +
                    (double)evo.work * trn_work_unit_ns("stream_power")) *
                   1e-9;
    out->work = trn_sat_add(out->work, evo.work);
    snprintf(out->detail, sizeof out->detail, "%.100s + evolution %.120s", noise, evo.detail);
    out->param = NULL;
}

static void noise_terrain_work(const trn_graph_node *n, const trn_node_type *t,
                               const trn_recipe *recipe, trn_erosion_quality quality,
                               trn_node_work_info *out)
{
    (void)quality;
    trn_landform own;
    landform_from_params(n, t, &own);
    noise_work(&own, recipe, out);
    noise_given given;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(noise_given_fields), &given);
    out->param = given.octaves ? "octaves" : NULL;
}

static void landform_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)quality;
    const trn_landform *lf = named_landform(n, t, recipe);
    XXH64_update(h, &recipe->seed, sizeof recipe->seed);
    if (lf) {
        const uint32_t profile = (uint32_t)lf->profile;
        XXH64_update(h, &profile, sizeof profile);
        trn_key_f64(h, lf->base_height);
        trn_key_f64(h, lf->height_variation);
        trn_key_f64(h, lf->feature_size);
        trn_key_f64(h, lf->roughness);
        XXH64_update(h, &lf->octaves, sizeof lf->octaves);
        trn_key_f64(h, lf->warp_amplitude);
        trn_key_f64(h, lf->warp_feature_size);
        trn_key_f64(h, lf->stretch);
        trn_key_f64(h, lf->heading);
    }
    trn_graph g;
    const trn_graph_node *node = evolution_node(recipe, lf, &g);
    if (node) {
        /* As a Stream Power node after it would key it: version, parameters, derived inputs. */
        const trn_node_type *sp = &trn_node_stream_power.type;
        XXH64_update(h, "evolution", 10);
        XXH64_update(h, &sp->version, sizeof sp->version);
        trn_node_key_params(h, node, sp, recipe, quality);
        trn_node_evolve_key(h, node, sp, recipe, quality);
    }
    trn_graph_dispose(&g);
}

static void noise_terrain_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                              const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)t;
    (void)quality;
    const uint64_t seed = trn_node_seed(n, recipe);
    XXH64_update(h, &seed, sizeof seed);
}

static trn_status fill(const trn_node_ctx *c, trn_node_result *r, const trn_landform *lf,
                       uint64_t seed, trn_error *err)
{
    trn_field f;
    trn_status st = trn_field_init(&f, r->cells_x, r->cells_z, r->size_x, r->size_z, err);
    if (st) return trn_node_wrap(c, err, st);
    trn_sample_window win;
    memset(&win, 0, sizeof win);
    if (c->window) {
        win.x0 = c->window->x0;
        win.z0 = c->window->z0;
        win.world_cells_x = c->window->world_cells_x;
        win.world_cells_z = c->window->world_cells_z;
        win.world_size_x = c->window->world_size_x;
        win.world_size_z = c->window->world_size_z;
    }
    if (!lf) {
        flat_params p;
        trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(flat_fields), &p);
        const float v = (float)p.height;
        const size_t n = trn_node_samples(r);
        for (size_t k = 0; k < n; k++)
            f.heights[k] = v;
    } else if ((st = c->window ? trn_landform_fill_window(lf, seed, &f, &win, trn_node_bridge,
                                                          (void *)c->progress, err)
                               : trn_landform_fill(lf, seed, &f, trn_node_bridge,
                                                   (void *)c->progress, err))) {
        trn_field_dispose(&f);
        return trn_node_wrap(c, err, st);
    }
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, f.heights, err);
    f.heights = NULL;
    return st;
}

/* Run lf's evolution on f (its filled noise) in place; c gives the recipe, threads, quality,
 * progress and the name errors carry. */
static trn_status evolve_in_place(const trn_node_ctx *c, const trn_landform *lf, trn_field *f,
                                  char *note, size_t note_size, trn_error *err)
{
    trn_graph g;
    const trn_graph_node *node = evolution_node(c->recipe, lf, &g);
    if (!node) {
        trn_graph_dispose(&g);
        return trn_node_fail(c, err, TRN_ERR_VALIDATION,
                             "its landform's evolution parameters do not check");
    }
    float *heights = NULL, *channels = NULL;
    trn_status st = trn_node_evolve(c, node, &trn_node_stream_power.type, f, NULL, &heights,
                                    &channels, note, note_size, err);
    trn_graph_dispose(&g);
    free(channels);
    if (st) return st;
    free(f->heights);
    f->heights = heights;
    return TRN_OK;
}

/* Noise is pointwise; an evolution drains across the whole grid. */
static void landform_reach(const trn_graph_node *n, const trn_node_type *t,
                           const trn_recipe *recipe, trn_node_reach *out)
{
    if (recipe && trn_node_landform_evolves(n, t, recipe)) {
        trn_reach_global(n, t, recipe, out);
    } else {
        trn_reach_pointwise(n, t, recipe, out);
        if (!recipe)
            snprintf(out->why, sizeof out->why,
                     "its noise is pointwise; a landform with an evolution is global");
    }
}

static trn_status landform_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_landform *lf = named_landform(c->node, c->type, c->recipe);
    if (!lf) return trn_node_fail(c, err, TRN_ERR_VALIDATION, "its landform is not in the recipe");
    if (!lf->evolution) return fill(c, r, lf, c->recipe->seed, err);
    trn_field f;
    trn_status st = trn_field_init(&f, r->cells_x, r->cells_z, r->size_x, r->size_z, err);
    if (st) return trn_node_wrap(c, err, st);
    if ((st = trn_landform_fill(lf, c->recipe->seed, &f, trn_node_bridge, (void *)c->progress,
                                err))) {
        trn_field_dispose(&f);
        return trn_node_wrap(c, err, st);
    }
    char note[sizeof r->note];
    if ((st = evolve_in_place(c, lf, &f, note, sizeof note, err))) {
        trn_field_dispose(&f);
        return st;
    }
    snprintf(r->note, sizeof r->note, "evolved: %.200s", note);
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, f.heights, err);
    f.heights = NULL;
    return st;
}

trn_status trn_graph_landform_heights(const trn_recipe *recipe, int landform, int threads,
                                      trn_erosion_quality quality, trn_field *f, trn_error *err)
{
    const trn_landform *lf = &recipe->landforms[landform];
    trn_status st = trn_landform_fill(lf, recipe->seed, f, NULL, NULL, err);
    if (st || !lf->evolution) return st;
    /* Errors name the landform as a node would be named. */
    char id[80];
    snprintf(id, sizeof id, "landforms.%.60s", lf->name);
    trn_graph_node node;
    memset(&node, 0, sizeof node);
    node.id = id;
    trn_node_ctx c;
    memset(&c, 0, sizeof c);
    c.node = &node;
    c.type = &trn_node_landform.type;
    c.recipe = recipe;
    c.threads = threads;
    c.quality = quality;
    char note[240];
    return evolve_in_place(&c, lf, f, note, sizeof note, err);
}

static trn_status noise_terrain_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_landform own;
    landform_from_params(c->node, c->type, &own);
    return fill(c, r, &own, trn_node_seed(c->node, c->recipe), err);
}

static trn_status flat_terrain_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    return fill(c, r, NULL, 0, err);
}

static void landform_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                           const trn_node_type *t)
{
    const trn_recipe *recipe = trn_check_recipe(c);
    named_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(named_fields), &p);
    const char *name = p.landform;
    if (recipe && name && trn_recipe_find_landform(recipe, name) < 0) {
        char path[64];
        snprintf(path, sizeof path, "nodes[%u].params.landform", index);
        trn_check_diag(c, TRN_GRAPH_ERROR, "landform-unknown", n, "landform", path,
                       "the recipe has no landform named '%.60s'", name);
    }
}

const trn_node_module trn_node_landform = {
    {"landform", "Landform", "generator",
     "Heights of a named recipe landform (the recipe's landscape settings, evolved when it "
     "has an evolution).",
     1, NULL, 0, out_field, TRN_COUNT(out_field), p_landform, TRN_COUNT(p_landform), false},
    3.0,
    false,
    landform_compute,
    landform_key,
    landform_work,
    landform_check,
    landform_reach};

const trn_node_module trn_node_noise_terrain = {
    {"noise_terrain", "Noise Terrain", "generator",
     "A seeded noise heightfield with the landform controls of its own.", 1, NULL, 0, out_field,
     TRN_COUNT(out_field), p_noise, TRN_COUNT(p_noise), false},
    3.0,
    false,
    noise_terrain_compute,
    noise_terrain_key,
    noise_terrain_work,
    NULL,
    trn_reach_pointwise};

const trn_node_module trn_node_flat_terrain = {
    {"flat_terrain", "Flat Terrain", "generator", "A constant-height base.", 1, NULL, 0, out_field,
     TRN_COUNT(out_field), p_flat, TRN_COUNT(p_flat), false},
    1.0,
    false,
    flat_terrain_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_pointwise};
