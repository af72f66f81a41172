/* The Drainage node: depression filling, D8 flow, accumulation and basins of a surface. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rows.h"
#include "graph/nodes/node_common.h"
#include "graph/tiles.h"

static const trn_pin_spec in_field[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the terrain whose grid (and heights) it uses"}};

static const trn_pin_spec out_drainage[] = {
    {"drainage", TRN_PIN_DRAINAGE, false,
     "filled surface, D8 directions, accumulation, basins (keeps its source field)"},
    {"accumulation", TRN_PIN_MASK, false,
     "flow accumulation / the largest interior value; 0 on outlets"},
};
static const trn_param_spec p_drainage[] = {
    OPT_NUM("sea_level", -TRN_BIG, TRN_BIG,
            "metres; samples at or below drain out like the border; absent = the recipe's sea "
            "level"),
    CHOICE("sea", "on", "on|off", "off: only the border is an outlet"),
};

static void drainage_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)quality;
    trn_key_f64(h, trn_node_drainage_sea(n, t, recipe));
}

static void drainage_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                          trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)n;
    (void)t;
    (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    out->work = trn_sat_mul(samples, 8u);
    snprintf(out->detail, sizeof out->detail, "%" PRIu64 " samples x 8 neighbours", samples);
}

trn_status trn_node_drainage_publish(const trn_node_ctx *c, trn_node_result *r, trn_drainage *dp,
                                     trn_error *err)
{
    trn_drainage d = *dp;
    memset(dp, 0, sizeof *dp); /* the result owns the arrays from here on */
    trn_status st;
    const size_t n = trn_node_samples(r);
    trn_gout *o = &r->outputs[0];
    o->kind = TRN_PIN_DRAINAGE;
    o->sea_level = d.sea_level;
    o->source = trn_gbuf_retain(c->inputs[0]->values);
    o->transport = trn_gbuf_retain(c->inputs[0]->transport); /* the source's, for water nodes */
    o->filled = trn_gbuf_wrap(d.filled, n, sizeof(float));
    o->flow_dir = trn_gbuf_wrap(d.flow_dir, n, 1);
    o->accumulation = trn_gbuf_wrap(d.accumulation, n, sizeof(uint32_t));
    o->basins = d.basin_count ? trn_gbuf_wrap(d.basins, d.basin_count, sizeof(trn_basin))
                              : (free(d.basins), trn_gbuf_new(0, sizeof(trn_basin)));
    r->output_count = 2;
    if (!o->filled || !o->flow_dir || !o->accumulation || !o->basins)
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    trn_gout_bind_drainage(o, r->cells_x, r->cells_z, r->size_x, r->size_z);
    trn_mask m;
    if ((st = trn_drainage_accumulation_mask(&o->view, &m, err))) return trn_node_wrap(c, err, st);
    return trn_node_set_floats(c, r, 1, TRN_PIN_MASK, m.values, err);
}

static trn_status drainage_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_drainage d;
    trn_status st = trn_drainage_compute(&f, trn_node_drainage_sea(c->node, c->type, c->recipe), &d,
                                         trn_node_bridge, (void *)c->progress, err);
    if (st) return trn_node_wrap(c, err, st);
    return trn_node_drainage_publish(c, r, &d, err);
}

const trn_node_module trn_node_drainage = {
    {"drainage", "Drainage", "simulation",
     "Depression filling, D8 flow, accumulation and basins of a surface.", 1, in_field, 1,
     out_drainage, TRN_COUNT(out_drainage), p_drainage, TRN_COUNT(p_drainage), false},
    4.0,
    false,
    drainage_compute,
    drainage_key,
    drainage_work,
    NULL,
    trn_reach_global};

/* Flow Accumulation: a drainage's accumulation as a mask, by D8 or multiple-flow directions. */
static const trn_pin_spec in_flow[] = {
    {"drainage", TRN_PIN_DRAINAGE, true, "the drainage whose filled surface the water follows"}};
static const trn_pin_spec out_flow[] = {
    {"mask", TRN_PIN_MASK, false, "accumulation / the largest interior value; 0 on outlets"}};
static const trn_param_spec p_flow[] = {
    CHOICE("method", "mfd", "d8|mfd",
           "mfd: water split among every lower neighbour (Freeman 1991); d8: one receiver"),
    NUM("exponent", 1.1, 0.01, 100, "mfd: the share of a neighbour grows as slope^exponent"),
};

typedef struct flow_params {
    int method; /* d8|mfd */
    double exponent;
} flow_params;
static const trn_param_field flow_fields[] = {
    TRN_PARAM_CHOICE_ROW("method", flow_params, method),
    TRN_PARAM_DOUBLE_ROW("exponent", flow_params, exponent),
};

static trn_status flow_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_gout *dr = c->inputs[0];
    flow_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(flow_fields), &p);
    trn_mask m;
    trn_status st;
    if (p.method == 0) { /* d8 */
        if ((st = trn_drainage_accumulation_mask(&dr->view, &m, err)))
            return trn_node_wrap(c, err, st);
        return trn_node_set_floats(c, r, 0, TRN_PIN_MASK, m.values, err);
    }
    const size_t n = trn_node_samples(r);
    float *acc = malloc(n * sizeof *acc);
    if (!acc) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if ((st = trn_drainage_mfd_accumulation(&dr->view, p.exponent, acc, err))) {
        free(acc);
        return trn_node_wrap(c, err, st);
    }
    /* Normalised as the D8 mask is: by the largest value off the outlets, outlets 0. */
    double top = 0;
    for (size_t k = 0; k < n; k++)
        if (dr->view.flow_dir[k] != TRN_DRAIN_OUTLET && acc[k] > top) top = acc[k];
    for (size_t k = 0; k < n; k++)
        acc[k] = dr->view.flow_dir[k] == TRN_DRAIN_OUTLET || top <= 0
                     ? 0.0f
                     : (float)((double)acc[k] / top);
    return trn_node_set_floats(c, r, 0, TRN_PIN_MASK, acc, err);
}

bool trn_node_flow_d8(const trn_graph_node *n, const trn_node_type *t)
{
    flow_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(flow_fields), &p);
    return p.method == 0;
}

const trn_node_module trn_node_flow_accumulation = {
    TRN_SPEC("flow_accumulation", "Flow Accumulation", "simulation",
             "A drainage's flow accumulation as a mask: multiple-flow (smooth wetness on "
             "hillslopes) or D8.",
             1, in_flow, out_flow, p_flow, false),
    2.0,
    false,
    flow_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_global};

/* Drain Depressions: a surface whose every sample drains to an outlet, by filling or breaching
 * its closed depressions (hydrological conditioning at the end of a graph). */
static const trn_pin_spec in_dd[] = {{"field", TRN_PIN_HEIGHTFIELD, true, "the surface"}};
static const trn_pin_spec out_dd[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "the surface with no closed depression"}};
static const trn_param_spec p_dd[] = {
    CHOICE("mode", "breach", "breach|fill",
           "breach: a notch cut from each pit through its rim (heights only lowered); fill: "
           "each filled flat to its spill level (heights only raised)"),
    OPT_NUM("sea_level", -TRN_BIG, TRN_BIG,
            "metres; samples at or below drain out like the border; absent = the recipe's sea "
            "level"),
    CHOICE("sea", "on", "on|off", "off: only the border is an outlet"),
};

typedef struct dd_params {
    int mode; /* breach|fill */
} dd_params;
static const trn_param_field dd_fields[] = {TRN_PARAM_CHOICE_ROW("mode", dd_params, mode)};

static trn_status dd_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = trn_node_samples(r);
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_drainage d;
    trn_status st = trn_drainage_compute(&f, trn_node_drainage_sea(c->node, c->type, c->recipe), &d,
                                         trn_node_bridge, (void *)c->progress, err);
    if (st) return trn_node_wrap(c, err, st);
    dd_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(dd_fields), &p);
    float *out = NULL;
    if (p.mode == 1) { /* fill */
        out = d.filled;
        d.filled = NULL;
    } else {
        out = malloc(n * sizeof *out);
        if (!out) {
            trn_drainage_dispose(&d);
            return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        }
        trn_rows_copy(out, f.heights, n * sizeof *out);
        trn_field w = f;
        w.heights = out;
        if ((st = trn_drainage_breach(&w, &d, err))) {
            free(out);
            trn_drainage_dispose(&d);
            return trn_node_wrap(c, err, st);
        }
    }
    trn_drainage_dispose(&d);
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, out, err);
    /* Conditioning, not moved material (as a carve): the input's transport stands. */
    if (!st) trn_node_pass_transport(r, 0, c->inputs[0]);
    return st;
}

bool trn_node_drain_fills(const trn_graph_node *n, const trn_node_type *t)
{
    dd_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(dd_fields), &p);
    return p.mode == 1;
}

uint64_t trn_node_drain_whole_bytes(const trn_graph_node *n, const trn_node_type *t,
                                    uint64_t samples)
{
    if (strcmp(t->name, "drain_depressions") != 0) return 0;
    /* The drainage (4 + 1 + 4); a fill hands its filled heights on as its result. A breach:
     * its copy of the heights, trn_drainage_breach's marks and its keys (two 8-byte words for
     * each sample it sorts). */
    const uint64_t drainage = 4u + 1u + 4u, breach = 4u + 1u + 2u * 8u;
    return samples * (trn_node_drain_fills(n, t) ? drainage : drainage + breach);
}

const trn_node_module trn_node_drain_depressions = {
    TRN_SPEC("drain_depressions", "Drain Depressions", "simulation",
             "Every sample drains to an outlet: closed depressions breached (notches cut "
             "through their rims) or filled flat.",
             1, in_dd, out_dd, p_dd, false),
    4.0,
    false,
    dd_compute,
    drainage_key,
    drainage_work,
    NULL,
    trn_reach_global};
