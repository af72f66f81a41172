/* The Dune Field node: aeolian dunes with gentle stoss slopes and slip faces at repose. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "gen/dunes.h"
#include "graph/nodes/node_common.h"

static const trn_pin_spec out_dunes[] = {{"field", TRN_PIN_HEIGHTFIELD, false, "the heights"}};

static const trn_param_spec p_dunes[] = {
    CHOICE("pattern", "transverse", "transverse|linear",
           "transverse: crests across the wind (ridges, or barchans where sand is scarce); "
           "linear: crests along it (seif dunes)"),
    NUM("base_height", 0, -TRN_BIG, TRN_BIG, "metres of the interdune floor"),
    NUM("height", 30, 0, 1e6, "metres of the tallest crests above the floor"),
    POS("wavelength", 400, 0, 1e7, "metres from crest to crest"),
    NUM("wind_heading", 0, -TRN_BIG, TRN_BIG,
        "degrees from +X toward +Z: the way the wind carries the sand"),
    NUM("stoss_angle", 8, 1, 25, "mean degrees of the windward slopes"),
    NUM("repose_angle", 32, 20, 40, "degrees of the slip faces (dry sand: 30-34)"),
    NUM("sand_supply", 0.8, 0, 1,
        "1: continuous ridges; lower: they break up into barchans on a bare floor"),
    NUM("crest_warp", 80, 0, 1e7, "metres the crest lines bend"),
    POS("warp_feature_size", 1200, 0, 1e9, "metres over which the crest lines bend"),
    NUM("defect_spacing", 1600, 0, 1e9,
        "metres between crest junctions (Y-junctions); 0: none; at least 3 wavelengths"),
    NUM("horn", 0.35, 0, 2,
        "wavelengths a crest's low flanks run ahead downwind (barchan horns)"),
    OPT_INT("seed", 0, 9007199254740992.0,
            "dune seed; absent = the sub-seed of channel \"node:<id>\" of the world seed"),
};

/* The parameters as members of trn_dune_params (seed is read where the dunes are made). */
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, trn_dune_params, member)
static const trn_param_field dune_fields[] = {
    ROW("pattern", CHOICE, pattern), /* transverse|linear: the enum's order */
    ROW("base_height", DOUBLE, base_height),
    ROW("height", DOUBLE, height),
    ROW("wavelength", DOUBLE, wavelength),
    ROW("wind_heading", DOUBLE, wind_heading),
    ROW("stoss_angle", DOUBLE, stoss_angle),
    ROW("repose_angle", DOUBLE, repose_angle),
    ROW("sand_supply", DOUBLE, sand_supply),
    ROW("crest_warp", DOUBLE, crest_warp),
    ROW("warp_feature_size", DOUBLE, warp_feature_size),
    ROW("defect_spacing", DOUBLE, defect_spacing),
    ROW("horn", DOUBLE, horn),
};
#undef ROW

static void dunes_from_params(const trn_graph_node *n, const trn_node_type *t, trn_dune_params *p)
{
    trn_dune_params_default(p);
    trn_graph_params_fill(n, t, dune_fields, sizeof dune_fields / sizeof dune_fields[0], p);
}

static void dunes_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                      const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)t;
    (void)quality;
    const uint64_t seed = trn_node_seed(n, recipe);
    XXH64_update(h, &seed, sizeof seed);
}

/* Samples x about 40 noise octaves (three points a sample for the phase gradient). */
static void dunes_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                       trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)n;
    (void)t;
    (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    out->work = trn_sat_mul(samples, 40u);
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples x (15 noise octaves + junctions + avalanche)", samples);
}

static void dunes_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                        const trn_node_type *t)
{
    trn_dune_params p;
    dunes_from_params(n, t, &p);
    if (!(p.stoss_angle < p.repose_angle)) {
        char path[64];
        snprintf(path, sizeof path, "nodes[%u].params.stoss_angle", index);
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, "stoss_angle", path,
                       "stoss_angle (%g) must be under repose_angle (%g): the windward side is "
                       "the gentle one",
                       p.stoss_angle, p.repose_angle);
    }
}

static trn_status dunes_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_dune_params p;
    dunes_from_params(c->node, c->type, &p);
    trn_field f;
    trn_status st = trn_field_init(&f, r->cells_x, r->cells_z, r->size_x, r->size_z, err);
    if (st) return trn_node_wrap(c, err, st);
    if ((st = trn_dunes_fill(&p, trn_node_seed(c->node, c->recipe), &f, c->threads, c->progress,
                             err))) {
        trn_field_dispose(&f);
        return trn_node_wrap(c, err, st);
    }
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, f.heights, err);
    f.heights = NULL;
    return st;
}

const trn_node_module trn_node_dune_field = {
    {"dune_field", "Dune Field", "generator",
     "Aeolian sand dunes: crest lines that bend and fork, gentle windward slopes, slip faces "
     "at the angle of repose (an avalanche pass keeps every slope at or under it) and flat "
     "interdune floors; no water erosion.",
     1, NULL, 0, out_dunes, TRN_COUNT(out_dunes), p_dunes, TRN_COUNT(p_dunes), false},
    4.0,
    false,
    dunes_compute,
    dunes_key,
    dunes_work,
    dunes_check,
    trn_reach_global};
