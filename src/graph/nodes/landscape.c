/* The Stream Power node: landscape evolution by uplift, fluvial incision and diffusion. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/nodes/node_common.h"
#include "terrane/landscape.h"

static const trn_pin_spec in_sp[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the initial surface (noise or any field)"},
    {"uplift", TRN_PIN_MASK, false, "uplift factor per sample (0..1); absent: uniform"},
};
static const trn_pin_spec out_sp[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "the evolved surface"},
    {"channels", TRN_PIN_MASK, false, "drainage area / channel_area, capped at 1"},
};
static const trn_param_spec p_sp[] = {
    NUM("uplift", 1e-3, 0, 1e3, "uplift rate, metres per time unit"),
    NUM("erodibility", 5e-5, 1e-12, 1e3, "K of the stream-power law"),
    NUM("m", 0.45, 0.01, 2, "drainage-area exponent"),
    NUM("n", 1, 0.1, 4, "slope exponent"),
    NUM("diffusion", 0.05, 0, 1e6, "hillslope diffusivity, world units^2 per time unit"),
    NUM("channel_threshold", 0, 0, 1e15,
        "world units^2 of drainage area below which ground does not incise (hillslopes)"),
    NUM("critical_slope", 0, 0, 89.9, "degrees; steeper slopes collapse (0 = off)"),
    NUM("dt", 20000, 1e-6, 1e9, "time step"),
    INT("steps", 200, 1, 100000, "time steps"),
    INT("coarsen", 1, 1, 64, "evolve on a grid this many times coarser, then amplify"),
    NUM("detail", 1, 0, 4, "share of the input's finer detail returned after coarsening"),
    NUM("channel_area", 1e6, 1e-6, 1e15,
        "world units^2: drainage area where detail fades out and channels reach 1"),
    OPT_NUM("sea_level", -TRN_BIG, TRN_BIG,
            "metres; samples at or below are base level; absent = the recipe's sea level"),
    CHOICE("sea", "on", "on|off", "off: only the border is base level"),
    CHOICE("border", "follow", "follow|fixed",
           "follow: the border comes down with the land beside it; fixed: it keeps its heights"),
};

/* Preview: a quarter of the steps (at least one) over the same total time: the implicit
 * scheme stays stable at the longer step. */
static void sp_options(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                       trn_erosion_quality quality, trn_evolve_options *o)
{
    trn_evolve_options_default(o);
    o->sp.uplift = trn_graph_param_number(n, t, "uplift");
    o->sp.erodibility = trn_graph_param_number(n, t, "erodibility");
    o->sp.m = trn_graph_param_number(n, t, "m");
    o->sp.n = trn_graph_param_number(n, t, "n");
    o->sp.diffusion = trn_graph_param_number(n, t, "diffusion");
    o->sp.critical_slope = trn_graph_param_number(n, t, "critical_slope");
    o->sp.channel_threshold = trn_graph_param_number(n, t, "channel_threshold");
    o->sp.dt = trn_graph_param_number(n, t, "dt");
    o->sp.steps = (uint32_t)trn_graph_param_number(n, t, "steps");
    o->sp.sea_level = trn_node_drainage_sea(n, t, recipe);
    const char *border = trn_graph_param_text(n, t, "border");
    o->sp.fixed_border = border && strcmp(border, "fixed") == 0;
    o->coarsen = (uint32_t)trn_graph_param_number(n, t, "coarsen");
    o->detail = trn_graph_param_number(n, t, "detail");
    o->channel_area = trn_graph_param_number(n, t, "channel_area");
    if (quality == TRN_EROSION_PREVIEW && o->sp.steps > 1) {
        const uint32_t steps = (o->sp.steps + 3u) / 4u;
        o->sp.dt *= (double)o->sp.steps / (double)steps;
        o->sp.steps = steps;
    }
}

static void sp_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                   const trn_recipe *recipe, trn_erosion_quality quality)
{
    trn_evolve_options o;
    sp_options(n, t, recipe, quality, &o);
    trn_key_f64(h, o.sp.sea_level);
    trn_key_f64(h, o.sp.dt);
    const uint32_t steps = o.sp.steps;
    XXH64_update(h, &steps, sizeof steps);
}

static void sp_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                    trn_erosion_quality quality, trn_node_work_info *out)
{
    trn_evolve_options o;
    sp_options(n, t, recipe, quality, &o);
    const uint64_t cx = (recipe->cells_x + o.coarsen - 1u) / o.coarsen + 1u;
    const uint64_t cz = (recipe->cells_z + o.coarsen - 1u) / o.coarsen + 1u;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    /* About 30 sample visits a step: receivers, stack, area, incision, diffusion. */
    const uint64_t steps_work = trn_sat_mul(trn_sat_mul(cx * cz, o.sp.steps), 30u);
    out->work = trn_sat_add(samples, steps_work);
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " x %" PRIu64 " samples x %" PRIu32 " steps x 30", cx, cz, o.sp.steps);
    out->param = trn_node_has_number(n, "steps") ? "steps" : NULL;
}

static trn_status sp_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = trn_node_samples(r);
    trn_evolve_options o;
    sp_options(c->node, c->type, c->recipe, c->quality, &o);
    o.sp.threads = c->threads;
    const trn_gout *um = c->inputs[1];
    o.sp.uplift_mask = um ? um->values->data : NULL;
    /* An uplift mask is on the full grid; the coarse run would need it resampled. */
    if (um && o.coarsen > 1)
        return trn_node_fail(c, err, TRN_ERR_INVALID_ARGUMENT,
                             "an uplift mask needs coarsen 1 (it is given per full-grid sample)");
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_field work;
    trn_status st = trn_field_init(&work, f.cells_x, f.cells_z, f.size_x, f.size_z, err);
    if (st) return trn_node_wrap(c, err, st);
    memcpy(work.heights, f.heights, n * sizeof *work.heights);
    float *area = malloc(n * sizeof *area);
    if (!area) {
        trn_field_dispose(&work);
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    o.sp.drainage_area = area;
    trn_stream_power_report rep;
    st = trn_landscape_evolve(&work, &o, &rep, trn_node_bridge, (void *)c->progress, err);
    if (st) {
        free(area);
        trn_field_dispose(&work);
        return trn_node_wrap(c, err, st);
    }
    float *channels = malloc(n * sizeof *channels);
    if (!channels) {
        free(area);
        trn_field_dispose(&work);
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t k = 0; k < n; k++) {
        const double a = (double)area[k] / o.channel_area;
        channels[k] = (float)(a > 1.0 ? 1.0 : a);
    }
    free(area);
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, work.heights, err);
    work.heights = NULL;
    if (!st)
        st = trn_node_set_floats(c, r, 1, TRN_PIN_MASK, channels, err);
    else
        free(channels);
    snprintf(r->note, sizeof r->note,
             "%" PRIu32 " steps, %" PRIu64 " closed depressions routed, last step mean change %.3g "
             "(0 at steady state)",
             rep.steps, rep.pits_routed, rep.last_mean_change);
    return st;
}

const trn_node_module trn_node_stream_power = {
    TRN_SPEC("stream_power", "Stream Power", "simulation",
             "Landscape evolution: uplift against stream-power incision (Braun and Willett 2013) "
             "with hillslope diffusion; lakes drain over their sills.",
             1, in_sp, out_sp, p_sp, true),
    40.0,
    false,
    sp_compute,
    sp_key,
    sp_work,
    NULL};
