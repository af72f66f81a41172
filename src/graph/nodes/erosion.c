/* The Erosion node: droplet hydraulic erosion or sediment transport, plus thermal relaxation,
 * with a transport ledger. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/erosion_internal.h"
#include "graph/nodes/node_common.h"
#include "graph/tiles.h"

static const trn_pin_spec in_erosion[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "heights to erode"},
    {"drainage", TRN_PIN_DRAINAGE, false,
     "drainage of the same grid: channels (high accumulation) erode more"},
};
static const trn_pin_spec out_erosion[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "eroded heights"},
    {"deposited", TRN_PIN_MASK, false, "net deposit / the largest net deposit"},
    {"eroded", TRN_PIN_MASK, false, "net cut / the largest net cut"},
};
static const trn_param_spec p_erosion[] = {
    INT("iterations", 1, 0, 1000, "droplet passes (0 = no droplets)"),
    INT("droplets", 0, 0, 4294967295.0, "droplets per pass (0 = droplet_density per sample)"),
    NUM("droplet_density", 0.5, 0, 64, "droplets per sample and pass when droplets is 0"),
    INT("lifetime", 30, 1, 512, "steps per droplet"),
    NUM("inertia", 0.05, 0, 1, "share of the old direction kept"),
    NUM("capacity", 4, 0, 1e6, "sediment capacity factor"),
    NUM("min_slope", 0.01, 0, 1e6, "floor of the normalised slope in the capacity formula"),
    NUM("erosion_rate", 0.3, 0, 1, "share of free capacity taken per step"),
    NUM("deposition_rate", 0.3, 0, 1, "share of excess sediment dropped per step"),
    NUM("evaporation", 0.01, 0, 1, "water lost per step"),
    INT("radius", 3, 1, 16, "erosion brush radius, samples"),
    NUM("gravity", 4, 0, 1e6, "speed gained per unit slope"),
    NUM("talus_angle", 35, 0, 89, "degrees; steeper neighbours exchange material (final only)"),
    NUM("thermal_strength", 0.5, 0, 1, "thermal relaxation strength (0 = none; final only)"),
    INT("thermal_iterations", 10, 0, 10000, "thermal passes (final only)"),
    NUM("drainage_weight", 1, 0, 100,
        "with a drainage input: erosion rate x (1 + weight * sqrt(accumulation mask))"),
    CHOICE("mode", "detach", "detach|transport",
           "detach: droplets cut gullies; transport: sediment carried down the drainage tree "
           "settles in flat valley floors, lake fills and fans"),
    INT("transport_steps", 40, 1, 10000, "transport mode: steps over the whole grid"),
    NUM("diffusion", 0.02, 0, 0.25,
        "transport mode: hillslope diffusion per step (share of each neighbour difference)"),
    NUM("droplet_cell", 0, 0, 1e6,
        "detach mode: the droplets' grid cell, metres (0 = the output grid): on finer output "
        "grids the droplets run at this cell and their gullies come back smoothly, so radius, "
        "lifetime and droplet_density are sizes in the world and --resolution keeps them"),
};

/* The parameters as members of trn_erosion_params (drainage_weight is read where a drainage
 * input is). */
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, trn_erosion_params, member)
static const trn_param_field erosion_fields[] = {
    ROW("iterations", U32, iterations),
    ROW("droplets", U32, droplets),
    ROW("droplet_density", DOUBLE, droplet_density),
    ROW("lifetime", U32, lifetime),
    ROW("inertia", DOUBLE, inertia),
    ROW("capacity", DOUBLE, capacity),
    ROW("min_slope", DOUBLE, min_slope),
    ROW("erosion_rate", DOUBLE, erosion_rate),
    ROW("deposition_rate", DOUBLE, deposition_rate),
    ROW("evaporation", DOUBLE, evaporation),
    ROW("radius", U32, radius),
    ROW("gravity", DOUBLE, gravity),
    ROW("talus_angle", DOUBLE, talus_angle),
    ROW("thermal_strength", DOUBLE, thermal_strength),
    ROW("thermal_iterations", U32, thermal_iterations),
    ROW("mode", CHOICE, mode), /* detach|transport: the enum's order */
    ROW("transport_steps", U32, transport_steps),
    ROW("diffusion", DOUBLE, diffusion),
    ROW("droplet_cell", DOUBLE, droplet_cell),
};
#undef ROW

/* Beside them: the drainage input's weight, and which of the parameters that set the work the
 * node gives (the work report names the one that sets most of it). */
typedef struct erosion_more {
    double drainage_weight;
    bool droplets, droplet_density, iterations, lifetime, thermal_iterations, transport_steps;
} erosion_more;
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, erosion_more, member)
static const trn_param_field weight_fields[] = {
    ROW("drainage_weight", DOUBLE, drainage_weight)};
static const trn_param_field given_fields[] = {
    ROW("droplets", NUMBER_GIVEN, droplets),
    ROW("droplet_density", NUMBER_GIVEN, droplet_density),
    ROW("iterations", NUMBER_GIVEN, iterations),
    ROW("lifetime", NUMBER_GIVEN, lifetime),
    ROW("thermal_iterations", NUMBER_GIVEN, thermal_iterations),
    ROW("transport_steps", NUMBER_GIVEN, transport_steps),
};
#undef ROW

/* The erosion parameters a node runs with at a quality. Preview keeps the grid and inputs but
 * runs 30% of the droplets, half the passes, 40% of the walk and no thermal pass. */
static void erosion_params(const trn_graph_node *n, const trn_node_type *t,
                           const trn_recipe *recipe, trn_erosion_quality quality,
                           trn_erosion_params *p)
{
    trn_erosion_params_default(p, TRN_EROSION_FINAL);
    trn_graph_params_fill(n, t, erosion_fields, sizeof erosion_fields / sizeof erosion_fields[0],
                          p);
    /* Thermal strength 0 means no relaxation: skip the passes rather than run no-ops. */
    if (p->thermal_strength == 0.0) p->thermal_iterations = 0;
    if (quality == TRN_EROSION_PREVIEW) {
        uint32_t cx, cz;
        if (!p->droplets && trn_erosion_droplet_grid(p, recipe->cells_x, recipe->cells_z,
                                                     recipe->size_x, recipe->size_z, &cx, &cz)) {
            /* The library applies the density to the droplet grid's samples. */
            p->droplet_density *= 0.3;
        } else {
            const size_t samples =
                ((size_t)recipe->cells_x + 1u) * ((size_t)recipe->cells_z + 1u);
            double d = p->droplets ? (double)p->droplets
                                   : floor(p->droplet_density * (double)samples + 0.5);
            d = floor(d * 0.3 + 0.5);
            if (d > 4294967295.0) d = 4294967295.0;
            p->droplets = (uint32_t)(d >= 1.0 || p->iterations == 0 ? d : 1.0);
            if (p->droplets == 0 && p->iterations) p->droplets = 1;
        }
        p->iterations = (p->iterations + 1) / 2;
        p->lifetime = (uint32_t)floor((double)p->lifetime * 0.4 + 0.5);
        if (p->lifetime < 4) p->lifetime = p->lifetime ? 4 : 1;
        p->thermal_iterations = 0;
        p->transport_steps = (uint32_t)floor((double)p->transport_steps * 0.4 + 0.5);
        if (p->transport_steps < 1) p->transport_steps = 1;
    }
}

static void erosion_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                         trn_erosion_quality quality, trn_node_work_info *out)
{
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    trn_erosion_params p;
    erosion_params(n, t, recipe, quality, &p);
    erosion_more given;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(given_fields), &given);
    /* With a droplet cell the density counts the droplet grid's samples. */
    uint64_t dsamples = samples;
    uint32_t cx, cz;
    if (trn_erosion_droplet_grid(&p, recipe->cells_x, recipe->cells_z, recipe->size_x,
                                 recipe->size_z, &cx, &cz))
        dsamples = ((uint64_t)cx + 1u) * ((uint64_t)cz + 1u);
    double d = p.droplets ? (double)p.droplets : floor(p.droplet_density * (double)dsamples + 0.5);
    const uint64_t droplets = d > 18446744073709549568.0 ? UINT64_MAX : (uint64_t)d;
    const uint64_t hydraulic = trn_sat_mul(trn_sat_mul(droplets, p.iterations), p.lifetime);
    const uint64_t thermal = trn_sat_mul(p.thermal_iterations, samples);
    if (p.mode == TRN_EROSION_TRANSPORT) {
        /* A transport step (sorted flood, routing, two passes) costs about 1.3-1.5 droplet
         * steps a sample (bench/bench_erosion.c); counted as two. */
        const uint64_t steps = trn_sat_mul(trn_sat_mul(p.transport_steps, samples), 2u);
        out->work = trn_sat_add(samples, trn_sat_add(steps, thermal));
        snprintf(out->detail, sizeof out->detail,
                 "%" PRIu32 " transport_steps x %" PRIu64 " samples x 2, + %" PRIu32
                 " thermal_iterations x %" PRIu64 " samples",
                 p.transport_steps, samples, p.thermal_iterations, samples);
        const bool thermal_most = thermal > steps;
        out->param = thermal_most ? (given.thermal_iterations ? "thermal_iterations" : NULL)
                                  : (given.transport_steps ? "transport_steps" : NULL);
        return;
    }
    out->work = trn_sat_add(samples, trn_sat_add(hydraulic, thermal));
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " droplets x %" PRIu32 " iterations x %" PRIu32 " lifetime = %" PRIu64
             " droplet steps, + %" PRIu32 " thermal_iterations x %" PRIu64 " samples",
             droplets, p.iterations, p.lifetime, hydraulic, p.thermal_iterations, samples);
    if (thermal > hydraulic) {
        out->param = given.thermal_iterations ? "thermal_iterations" : NULL;
        return;
    }
    /* The written parameter furthest above its default sets the cost. */
    const struct {
        const char *name;
        bool given;
        double ratio;
    } c[4] = {{"droplets", given.droplets, (double)droplets / (0.5 * (double)dsamples)},
              {"droplet_density", given.droplet_density,
               (double)droplets / (0.5 * (double)dsamples)},
              {"iterations", given.iterations, (double)p.iterations},
              {"lifetime", given.lifetime, (double)p.lifetime / 30.0}};
    double best = -1.0;
    for (int k = 0; k < 4; k++)
        if (c[k].given && c[k].ratio > best && !(k == 1 && given.droplets)) {
            best = c[k].ratio;
            out->param = c[k].name;
        }
}

static void erosion_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                        const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)n;
    (void)t;
    XXH64_update(h, &recipe->seed, sizeof recipe->seed);
    const uint32_t q = (uint32_t)quality;
    XXH64_update(h, &q, sizeof q);
}

/* The field's transport: the upstream field's plus this run's change, summed in float; the
 * change itself (shared) when nothing upstream eroded. */
static trn_status add_transport(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_gbuf *up = c->inputs[0]->transport;
    if (!up) {
        r->outputs[0].transport = trn_gbuf_retain(r->change);
        return TRN_OK;
    }
    const size_t n = trn_node_samples(r);
    trn_gbuf *sum = trn_gbuf_new(n, sizeof(float));
    if (!sum) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    const float *a = up->data, *b = r->change->data;
    float *out = sum->data;
    for (size_t k = 0; k < n; k++)
        out[k] = a[k] + b[k];
    r->outputs[0].transport = sum;
    return TRN_OK;
}

static trn_status erosion_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = trn_node_samples(r);
    trn_erosion_params p;
    erosion_params(c->node, c->type, c->recipe, c->quality, &p);
    p.threads = c->threads;
    float *scale = NULL;
    trn_status st;
    const trn_gout *dr = c->inputs[1];
    if (dr) {
        trn_mask m;
        if ((st = trn_drainage_accumulation_mask(&dr->view, &m, err)))
            return trn_node_wrap(c, err, st);
        erosion_more more;
        trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(weight_fields), &more);
        const double w = more.drainage_weight;
        scale = m.values;
        for (size_t k = 0; k < n; k++)
            scale[k] = (float)(1.0 + w * sqrt((double)scale[k]));
        p.rate_scale = scale;
    }
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_erosion_result e;
    st = trn_erosion_run(&f, &p, c->recipe->seed, &e, trn_node_bridge, (void *)c->progress, err);
    free(scale);
    if (st) return trn_node_wrap(c, err, st);
    r->has_ledger = true;
    r->ledger = e.ledger;
    r->change = trn_gbuf_wrap(e.change, n, sizeof(float));
    e.change = NULL;
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, e.field.heights, err);
    e.field.heights = NULL;
    if (!st) {
        st = trn_node_set_floats(c, r, 1, TRN_PIN_MASK, e.deposition.values, err);
        e.deposition.values = NULL;
    }
    if (!st) {
        st = trn_node_set_floats(c, r, 2, TRN_PIN_MASK, e.erosion.values, err);
        e.erosion.values = NULL;
    }
    trn_erosion_result_dispose(&e);
    if (!st && !r->change) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (!st) st = add_transport(c, r, err);
    return st;
}

bool trn_node_erosion_by_rows(const trn_graph_node *n, const trn_node_type *t,
                              const trn_recipe *recipe, trn_erosion_quality quality)
{
    if (strcmp(t->name, "erosion") != 0) return false;
    trn_erosion_params p;
    erosion_params(n, t, recipe, quality, &p);
    uint32_t cx, cz;
    return p.mode == TRN_EROSION_DETACH &&
           !trn_erosion_droplet_grid(&p, recipe->cells_x, recipe->cells_z, recipe->size_x,
                                     recipe->size_z, &cx, &cz);
}

uint64_t trn_node_erosion_rows_bytes(const trn_graph_node *n, const trn_node_type *t,
                                     const trn_recipe *recipe, trn_erosion_quality quality,
                                     uint32_t chunk)
{
    const uint64_t sx = (uint64_t)recipe->cells_x + 1u, sz = (uint64_t)recipe->cells_z + 1u;
    trn_erosion_params p;
    erosion_params(n, t, recipe, quality, &p);
    /* The droplets' band (2 rows of tiles a round in flight, a tile row being loaded), the
     * thermal passes' two bands, the node's four rows of cache tiles, each a row of samples. */
    const uint64_t tile = 2u * ((uint64_t)p.lifetime + p.radius + 2u) + 2u;
    const uint64_t rounds = p.droplets || p.droplet_density > 0 ? 4u * (uint64_t)p.iterations : 0u;
    uint64_t rows = (2u * rounds + 3u) * tile + 2u * chunk +
                    2u * ((uint64_t)chunk + 2u * p.thermal_iterations) +
                    4u * ((uint64_t)chunk + 1u);
    if (rows > 8u * sz) rows = 8u * sz;
    return rows * sx * sizeof(float);
}

trn_status trn_node_erosion_rows(const trn_node_ctx *c, float lo, float hi,
                                 const trn_erosion_rows_io *io, uint64_t *droplets_run,
                                 trn_error *err)
{
    const size_t nx = (size_t)c->recipe->cells_x + 1u, nz = (size_t)c->recipe->cells_z + 1u;
    trn_erosion_params p;
    erosion_params(c->node, c->type, c->recipe, c->quality, &p);
    p.threads = c->threads;
    trn_erosion_ledger ledger;
    const trn_status st =
        c->solve_comm
            ? trn_erosion_run_rows_comm(nx, nz, c->recipe->size_x, c->recipe->size_z, &p,
                                        c->recipe->seed, lo, hi, io, c->solve_comm, &ledger,
                                        droplets_run, trn_node_bridge, (void *)c->progress, err)
            : trn_erosion_run_rows(nx, nz, c->recipe->size_x, c->recipe->size_z, &p,
                                   c->recipe->seed, lo, hi, io, &ledger, trn_node_bridge,
                                   (void *)c->progress, err);
    if (!st && !c->solve_comm && droplets_run) *droplets_run = ledger.droplets;
    return st ? trn_node_wrap(c, err, st) : TRN_OK;
}

/* Version 2: the eroded field carries its transport (a version 1 result in a cache folder has
 * none, so its key must not match). Version 3: droplets planned per tile in rounds (other
 * heights than version 2's droplet batches). */
const trn_node_module trn_node_erosion = {
    TRN_SPEC("erosion", "Erosion", "simulation",
             "Droplet hydraulic erosion or sediment transport, plus thermal relaxation, with a "
             "transport ledger.",
             3, in_erosion, out_erosion, p_erosion, true),
    20.0,
    false,
    erosion_compute,
    erosion_key,
    erosion_work,
    NULL,
    trn_reach_global};
