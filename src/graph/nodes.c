/* The node modules: what each node type computes and which derived values enter its cache key. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "graph/graph_internal.h"
#include "terrane/generate.h"
#include "terrane/masks.h"

static bool is(const trn_node_type *t, const char *name)
{
    return strcmp(t->name, name) == 0;
}

/* The node's own error: "node 'id' (type): what". */
static trn_status node_fail(const trn_node_ctx *c, trn_error *err, trn_status code,
                            const char *what)
{
    trn_error_set(err, code, NULL, -1, "node '%.60s' (%s): %s", c->node->id, c->type->name, what);
    if (err) snprintf(err->node_id, sizeof err->node_id, "%s", c->node->id);
    return code;
}

/* A library call's error, prefixed with the node. */
static trn_status node_wrap(const trn_node_ctx *c, trn_error *err, trn_status code)
{
    if (err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "node '%.60s' (%.24s): %.400s", c->node->id, c->type->name,
                 err->message);
        memcpy(err->message, msg, sizeof msg);
        snprintf(err->node_id, sizeof err->node_id, "%s", c->node->id);
    }
    return code;
}

/* A sub-call's progress inside the node's slice. */
static int bridge(double done, const char *stage, void *user)
{
    return trn_progress_report(user, done, stage) ? TRN_CANCEL : TRN_CONTINUE;
}

static size_t samples_of(const trn_node_result *r)
{
    return ((size_t)r->cells_x + 1u) * ((size_t)r->cells_z + 1u);
}

static trn_field field_view(const trn_node_result *grid, const trn_gout *o)
{
    trn_field f;
    memset(&f, 0, sizeof f);
    f.cells_x = grid->cells_x;
    f.cells_z = grid->cells_z;
    f.size_x = grid->size_x;
    f.size_z = grid->size_z;
    f.heights = o ? (float *)o->values->data : NULL;
    return f;
}

static bool same_grid(const trn_node_result *a, const trn_node_result *b)
{
    return a->cells_x == b->cells_x && a->cells_z == b->cells_z && a->size_x == b->size_x &&
           a->size_z == b->size_z;
}

static trn_status grid_check(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    for (uint32_t k = 0; k < c->type->input_count; k++) {
        const trn_node_result *in = c->input_results[k];
        if (in && !same_grid(in, r)) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "input '%s' is on a %ux%u-cell grid of %gx%g, the node on %ux%u of %gx%g; "
                     "inputs must share the terrain grid",
                     c->type->inputs[k].name, in->cells_x, in->cells_z, in->size_x, in->size_z,
                     r->cells_x, r->cells_z, r->size_x, r->size_z);
            return node_fail(c, err, TRN_ERR_MISMATCH, msg);
        }
    }
    return TRN_OK;
}

/* Output k takes ownership of data (samples floats). */
static trn_status set_floats(const trn_node_ctx *c, trn_node_result *r, uint32_t k,
                             trn_pin_kind kind, float *data, trn_error *err)
{
    r->outputs[k].kind = kind;
    r->outputs[k].values = trn_gbuf_wrap(data, samples_of(r), sizeof(float));
    if (!r->outputs[k].values) return node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (r->output_count < k + 1) r->output_count = k + 1;
    return TRN_OK;
}

static trn_status share(const trn_node_ctx *c, trn_node_result *r, uint32_t k, const trn_gout *from,
                        trn_error *err)
{
    (void)c;
    (void)err;
    r->outputs[k].kind = from->kind;
    r->outputs[k].values = trn_gbuf_retain(from->values);
    if (r->output_count < k + 1) r->output_count = k + 1;
    return TRN_OK;
}

static void landform_from_params(const trn_graph_node *n, const trn_node_type *t, trn_landform *lf)
{
    memset(lf, 0, sizeof *lf);
    lf->name = n->id;
    const char *profile = trn_graph_param_text(n, t, "profile");
    lf->profile = profile && strcmp(profile, "ridged") == 0 ? TRN_PROFILE_RIDGED : TRN_PROFILE_FBM;
    lf->base_height = trn_graph_param_number(n, t, "base_height");
    lf->height_variation = trn_graph_param_number(n, t, "height_variation");
    lf->feature_size = trn_graph_param_number(n, t, "feature_size");
    lf->roughness = trn_graph_param_number(n, t, "roughness");
    lf->octaves = (uint32_t)trn_graph_param_number(n, t, "octaves");
    lf->warp_amplitude = trn_graph_param_number(n, t, "warp_amplitude");
    lf->warp_feature_size = trn_graph_param_number(n, t, "warp_feature_size");
    lf->stretch = trn_graph_param_number(n, t, "stretch");
    lf->heading = trn_graph_param_number(n, t, "heading");
}

/* A noise node's seed: its "seed" parameter, else the world seed's sub-seed of channel
 * "node:<id>", so parallel branches differ and renaming another node changes nothing. */
static uint64_t noise_seed(const trn_graph_node *n, const trn_recipe *recipe)
{
    const trn_graph_param *p = trn_graph_node_param(n, "seed");
    if (p && p->type == TRN_VALUE_NUMBER) return (uint64_t)p->number;
    char channel[80];
    snprintf(channel, sizeof channel, "node:%s", n->id);
    return trn_subseed(recipe->seed, channel);
}

static const trn_landform *named_landform(const trn_graph_node *n, const trn_node_type *t,
                                          const trn_recipe *recipe)
{
    const char *name = trn_graph_param_text(n, t, "landform");
    if (!name) name = recipe->default_landform;
    const int k = trn_recipe_find_landform(recipe, name);
    return k >= 0 ? &recipe->landforms[k] : NULL;
}

static double drainage_sea(const trn_graph_node *n, const trn_node_type *t,
                           const trn_recipe *recipe)
{
    const char *sea = trn_graph_param_text(n, t, "sea");
    if (sea && strcmp(sea, "off") == 0) return NAN;
    const trn_graph_param *p = trn_graph_node_param(n, "sea_level");
    if (p && p->type == TRN_VALUE_NUMBER) return p->number;
    return trn_recipe_sea_level(recipe, NULL, NULL, 0);
}

/* The erosion parameters a node runs with at a quality. Preview keeps the grid and inputs but
 * runs 30% of the droplets, half the passes, 40% of the walk and no thermal pass. */
static void erosion_params(const trn_graph_node *n, const trn_node_type *t, size_t samples,
                           trn_erosion_quality quality, trn_erosion_params *p)
{
    trn_erosion_params_default(p, TRN_EROSION_FINAL);
    p->iterations = (uint32_t)trn_graph_param_number(n, t, "iterations");
    p->droplets = (uint32_t)trn_graph_param_number(n, t, "droplets");
    p->droplet_density = trn_graph_param_number(n, t, "droplet_density");
    p->lifetime = (uint32_t)trn_graph_param_number(n, t, "lifetime");
    p->inertia = trn_graph_param_number(n, t, "inertia");
    p->capacity = trn_graph_param_number(n, t, "capacity");
    p->min_slope = trn_graph_param_number(n, t, "min_slope");
    p->erosion_rate = trn_graph_param_number(n, t, "erosion_rate");
    p->deposition_rate = trn_graph_param_number(n, t, "deposition_rate");
    p->evaporation = trn_graph_param_number(n, t, "evaporation");
    p->radius = (uint32_t)trn_graph_param_number(n, t, "radius");
    p->gravity = trn_graph_param_number(n, t, "gravity");
    p->talus_angle = trn_graph_param_number(n, t, "talus_angle");
    p->thermal_strength = trn_graph_param_number(n, t, "thermal_strength");
    p->thermal_iterations = (uint32_t)trn_graph_param_number(n, t, "thermal_iterations");
    /* Thermal strength 0 means no relaxation: skip the passes rather than run no-ops. */
    if (p->thermal_strength == 0.0) p->thermal_iterations = 0;
    if (quality == TRN_EROSION_PREVIEW) {
        double d =
            p->droplets ? (double)p->droplets : floor(p->droplet_density * (double)samples + 0.5);
        d = floor(d * 0.3 + 0.5);
        if (d > 4294967295.0) d = 4294967295.0;
        p->droplets = (uint32_t)(d >= 1.0 || p->iterations == 0 ? d : 1.0);
        if (p->droplets == 0 && p->iterations) p->droplets = 1;
        p->iterations = (p->iterations + 1) / 2;
        p->lifetime = (uint32_t)floor((double)p->lifetime * 0.4 + 0.5);
        if (p->lifetime < 4) p->lifetime = p->lifetime ? 4 : 1;
        p->thermal_iterations = 0;
    }
}

double trn_node_cost(const trn_node_type *type)
{
    if (is(type, "erosion")) return 20.0;
    if (is(type, "drainage")) return 4.0;
    if (is(type, "landform") || is(type, "noise_terrain")) return 3.0;
    return 1.0;
}

/* ---- work: what the budget counts (docs/graph.md "Work budgets") ---- */

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return trn_mul_u64(a, b, &r) ? r : UINT64_MAX;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return trn_add_u64(a, b, &r) ? r : UINT64_MAX;
}

/* Samples k in [0, cells] whose position k * size / cells lies in [lo, hi] (world units). */
static uint64_t axis_samples(double lo, double hi, double size, uint32_t cells)
{
    const double step = size / (double)cells;
    double a = lo / step, b = hi / step;
    if (!(b >= 0.0) || !(a <= (double)cells) || !(a <= b)) return 0; /* NaN-safe */
    if (a < 0.0) a = 0.0;
    if (b > (double)cells) b = (double)cells;
    const double first = ceil(a), last = floor(b);
    return last >= first ? (uint64_t)(last - first) + 1u : 0u;
}

/* Samples within reach of the segment's bounding box, summed over the segments (a path's
 * consecutive points, a polygon's edges, closing one included). */
static uint64_t segments_reach(const trn_recipe *r, const double *pts, uint32_t count, bool closed,
                               double reach)
{
    uint64_t total = 0;
    const uint32_t segs = closed ? count : (count > 1 ? count - 1 : count);
    for (uint32_t k = 0; k < segs; k++) {
        const uint32_t b = count > 1 ? (k + 1) % count : k;
        const double ax = pts[2 * k], az = pts[2 * k + 1], bx = pts[2 * b], bz = pts[2 * b + 1];
        const uint64_t sx = axis_samples((ax < bx ? ax : bx) - reach, (ax < bx ? bx : ax) + reach,
                                         r->size_x, r->cells_x);
        const uint64_t sz = axis_samples((az < bz ? az : bz) - reach, (az < bz ? bz : az) + reach,
                                         r->size_z, r->cells_z);
        total = sat_add(total, sat_mul(sx, sz));
    }
    return total;
}

static bool has_number(const trn_graph_node *n, const char *name)
{
    const trn_graph_param *p = trn_graph_node_param(n, name);
    return p && p->type == TRN_VALUE_NUMBER;
}

void trn_node_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                   trn_erosion_quality quality, trn_node_work_info *out)
{
    memset(out, 0, sizeof *out);
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    if (is(t, "comment")) return;
    out->work = samples;
    if (is(t, "erosion")) {
        trn_erosion_params p;
        erosion_params(n, t, (size_t)samples, quality, &p);
        double d =
            p.droplets ? (double)p.droplets : floor(p.droplet_density * (double)samples + 0.5);
        const uint64_t droplets = d > 18446744073709549568.0 ? UINT64_MAX : (uint64_t)d;
        const uint64_t hydraulic = sat_mul(sat_mul(droplets, p.iterations), p.lifetime);
        const uint64_t thermal = sat_mul(p.thermal_iterations, samples);
        out->work = sat_add(samples, sat_add(hydraulic, thermal));
        snprintf(out->detail, sizeof out->detail,
                 "%" PRIu64 " droplets x %" PRIu32 " iterations x %" PRIu32 " lifetime = %" PRIu64
                 " droplet steps, + %" PRIu32 " thermal_iterations x %" PRIu64 " samples",
                 droplets, p.iterations, p.lifetime, hydraulic, p.thermal_iterations, samples);
        if (thermal > hydraulic) {
            out->param = has_number(n, "thermal_iterations") ? "thermal_iterations" : NULL;
            return;
        }
        /* The written parameter furthest above its default sets the cost. */
        const struct {
            const char *name;
            double ratio;
        } c[4] = {{"droplets", (double)droplets / (0.5 * (double)samples)},
                  {"droplet_density", (double)droplets / (0.5 * (double)samples)},
                  {"iterations", (double)p.iterations},
                  {"lifetime", (double)p.lifetime / 30.0}};
        double best = -1.0;
        for (int k = 0; k < 4; k++)
            if (has_number(n, c[k].name) && c[k].ratio > best &&
                !(k == 1 && has_number(n, "droplets"))) {
                best = c[k].ratio;
                out->param = c[k].name;
            }
        return;
    }
    if (is(t, "path_distance_mask") || is(t, "polygon_mask")) {
        const bool path = is(t, "path_distance_mask");
        uint32_t count;
        double *scratch;
        const double *pts = trn_graph_param_points(n, t, "points", &count, &scratch);
        const double reach =
            path ? trn_graph_param_number(n, t, "width") + trn_graph_param_number(n, t, "falloff")
                 : trn_graph_param_number(n, t, "falloff");
        const uint64_t near = pts ? segments_reach(recipe, pts, count, !path, reach) : 0u;
        free(scratch);
        out->work = sat_add(samples, near);
        out->param = trn_graph_node_param(n, "points") ? "points" : NULL;
        snprintf(out->detail, sizeof out->detail,
                 "%" PRIu64 " samples + %" PRIu64 " samples within reach of its %" PRIu32 " %s",
                 samples, near, count, path ? "points' segments" : "edges");
        return;
    }
    if (is(t, "landform") || is(t, "noise_terrain")) {
        trn_landform own;
        const trn_landform *lf = &own;
        if (is(t, "landform"))
            lf = named_landform(n, t, recipe);
        else
            landform_from_params(n, t, &own);
        const uint32_t octaves = lf ? lf->octaves : 1u, warp = lf && lf->warp_amplitude > 0 ? 2 : 0;
        out->work = sat_mul(samples, (uint64_t)octaves + warp);
        out->param = is(t, "noise_terrain") && has_number(n, "octaves") ? "octaves" : NULL;
        snprintf(out->detail, sizeof out->detail,
                 "%" PRIu64 " samples x (%" PRIu32 " octaves + %" PRIu32 " warp)", samples, octaves,
                 warp);
        return;
    }
    if (is(t, "drainage")) {
        out->work = sat_mul(samples, 8u);
        snprintf(out->detail, sizeof out->detail, "%" PRIu64 " samples x 8 neighbours", samples);
        return;
    }
    snprintf(out->detail, sizeof out->detail, "%" PRIu64 " samples", samples);
}

static void hash_f64(XXH64_state_t *h, double v)
{
    /* -0 and 0 are the same parameter. */
    if (v == 0.0) v = 0.0;
    XXH64_update(h, &v, sizeof v);
}

static void hash_str(XXH64_state_t *h, const char *s)
{
    const uint32_t n = s ? (uint32_t)strlen(s) : 0xFFFFFFFFu;
    XXH64_update(h, &n, sizeof n);
    if (s) XXH64_update(h, s, n);
}

void trn_node_key_params(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality)
{
    /* Every declared parameter in registry order with its effective value. */
    for (uint32_t k = 0; k < t->param_count; k++) {
        const trn_param_spec *s = &t->params[k];
        hash_str(h, s->name);
        const trn_graph_param *p = trn_graph_node_param(n, s->name);
        switch (s->type) {
        case TRN_PARAM_NUMBER:
        case TRN_PARAM_INTEGER:
            if (s->optional && !(p && p->type == TRN_VALUE_NUMBER))
                hash_str(h, NULL);
            else
                hash_f64(h, trn_graph_param_number(n, t, s->name));
            break;
        case TRN_PARAM_STRING:
        case TRN_PARAM_CHOICE:
            hash_str(h, trn_graph_param_text(n, t, s->name));
            break;
        case TRN_PARAM_POINTS: {
            uint32_t count;
            double *scratch;
            const double *pts = trn_graph_param_points(n, t, s->name, &count, &scratch);
            XXH64_update(h, &count, sizeof count);
            for (uint32_t q = 0; pts && q < 2 * count; q++)
                hash_f64(h, pts[q]);
            free(scratch);
            break;
        }
        }
    }
    /* Derived inputs. */
    if (is(t, "landform")) {
        const trn_landform *lf = named_landform(n, t, recipe);
        XXH64_update(h, &recipe->seed, sizeof recipe->seed);
        if (lf) {
            const uint32_t profile = (uint32_t)lf->profile;
            XXH64_update(h, &profile, sizeof profile);
            hash_f64(h, lf->base_height);
            hash_f64(h, lf->height_variation);
            hash_f64(h, lf->feature_size);
            hash_f64(h, lf->roughness);
            XXH64_update(h, &lf->octaves, sizeof lf->octaves);
            hash_f64(h, lf->warp_amplitude);
            hash_f64(h, lf->warp_feature_size);
            hash_f64(h, lf->stretch);
            hash_f64(h, lf->heading);
        }
    } else if (is(t, "noise_terrain")) {
        const uint64_t seed = noise_seed(n, recipe);
        XXH64_update(h, &seed, sizeof seed);
    } else if (is(t, "drainage")) {
        hash_f64(h, drainage_sea(n, t, recipe));
    } else if (is(t, "erosion")) {
        XXH64_update(h, &recipe->seed, sizeof recipe->seed);
        const uint32_t q = (uint32_t)quality;
        XXH64_update(h, &q, sizeof q);
    }
}

static trn_status compute_generator(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_field f;
    trn_status st = trn_field_init(&f, r->cells_x, r->cells_z, r->size_x, r->size_z, err);
    if (st) return node_wrap(c, err, st);
    if (is(c->type, "flat_terrain")) {
        const float v = (float)trn_graph_param_number(c->node, c->type, "height");
        const size_t n = samples_of(r);
        for (size_t k = 0; k < n; k++)
            f.heights[k] = v;
    } else {
        trn_landform own;
        const trn_landform *lf;
        uint64_t seed = c->recipe->seed;
        if (is(c->type, "landform")) {
            lf = named_landform(c->node, c->type, c->recipe);
            if (!lf) {
                trn_field_dispose(&f);
                return node_fail(c, err, TRN_ERR_VALIDATION, "its landform is not in the recipe");
            }
        } else {
            landform_from_params(c->node, c->type, &own);
            lf = &own;
            seed = noise_seed(c->node, c->recipe);
        }
        st = trn_landform_fill(lf, seed, &f, bridge, (void *)c->progress, err);
        if (st) {
            trn_field_dispose(&f);
            return node_wrap(c, err, st);
        }
    }
    st = set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, f.heights, err);
    f.heights = NULL;
    return st;
}

static trn_status compute_mask(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_graph_node *n = c->node;
    const trn_node_type *t = c->type;
    trn_field f = field_view(r, c->inputs[0]);
    trn_mask m;
    memset(&m, 0, sizeof m);
    trn_status st;
    if (is(t, "elevation_mask")) {
        st = trn_mask_elevation(&f, trn_graph_param_number(n, t, "min"),
                                trn_graph_param_number(n, t, "max"),
                                trn_graph_param_number(n, t, "falloff"), &m, err);
    } else if (is(t, "slope_mask")) {
        st = trn_mask_slope(&f, trn_graph_param_number(n, t, "min"),
                            trn_graph_param_number(n, t, "max"),
                            trn_graph_param_number(n, t, "falloff"), &m, err);
    } else {
        uint32_t count;
        double *scratch;
        const double *pts = trn_graph_param_points(n, t, "points", &count, &scratch);
        if (is(t, "path_distance_mask"))
            st = trn_mask_path(r->cells_x, r->cells_z, r->size_x, r->size_z, pts, count,
                               trn_graph_param_number(n, t, "width"),
                               trn_graph_param_number(n, t, "falloff"), &m, err);
        else
            st = trn_mask_polygon(r->cells_x, r->cells_z, r->size_x, r->size_z, pts, count,
                                  trn_graph_param_number(n, t, "falloff"), &m, err);
        free(scratch);
    }
    if (st) return node_wrap(c, err, st);
    st = set_floats(c, r, 0, TRN_PIN_MASK, m.values, err);
    return st;
}

static trn_status compute_modifier(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = samples_of(r);
    float *out = malloc(n * sizeof *out);
    if (!out) return node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    trn_status st;
    if (is(c->type, "height_blend")) {
        const trn_gout *mask = c->inputs[2];
        st = trn_heights_blend(c->inputs[0]->values->data, c->inputs[1]->values->data,
                               mask ? mask->values->data : NULL,
                               trn_graph_param_number(c->node, c->type, "amount"), n, out, err);
    } else {
        const trn_gout *mask = c->inputs[1];
        st = trn_heights_offset(c->inputs[0]->values->data, mask ? mask->values->data : NULL,
                                trn_graph_param_number(c->node, c->type, "offset"), n, out, err);
    }
    if (st) {
        free(out);
        return node_wrap(c, err, st);
    }
    return set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, out, err);
}

static trn_status compute_drainage(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_field f = field_view(r, c->inputs[0]);
    trn_drainage d;
    trn_status st = trn_drainage_compute(&f, drainage_sea(c->node, c->type, c->recipe), &d, bridge,
                                         (void *)c->progress, err);
    if (st) return node_wrap(c, err, st);
    const size_t n = samples_of(r);
    trn_gout *o = &r->outputs[0];
    o->kind = TRN_PIN_DRAINAGE;
    o->sea_level = d.sea_level;
    o->source = trn_gbuf_retain(c->inputs[0]->values);
    o->filled = trn_gbuf_wrap(d.filled, n, sizeof(float));
    o->flow_dir = trn_gbuf_wrap(d.flow_dir, n, 1);
    o->accumulation = trn_gbuf_wrap(d.accumulation, n, sizeof(uint32_t));
    o->basins = d.basin_count ? trn_gbuf_wrap(d.basins, d.basin_count, sizeof(trn_basin))
                              : (free(d.basins), trn_gbuf_new(0, sizeof(trn_basin)));
    r->output_count = 2;
    if (!o->filled || !o->flow_dir || !o->accumulation || !o->basins)
        return node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    trn_gout_bind_drainage(o, r->cells_x, r->cells_z, r->size_x, r->size_z);
    trn_mask m;
    if ((st = trn_drainage_accumulation_mask(&o->view, &m, err))) return node_wrap(c, err, st);
    return set_floats(c, r, 1, TRN_PIN_MASK, m.values, err);
}

static trn_status compute_erosion(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = samples_of(r);
    trn_erosion_params p;
    erosion_params(c->node, c->type, n, c->quality, &p);
    p.threads = c->threads;
    float *scale = NULL;
    trn_status st;
    const trn_gout *dr = c->inputs[1];
    if (dr) {
        trn_mask m;
        if ((st = trn_drainage_accumulation_mask(&dr->view, &m, err))) return node_wrap(c, err, st);
        const double w = trn_graph_param_number(c->node, c->type, "drainage_weight");
        scale = m.values;
        for (size_t k = 0; k < n; k++)
            scale[k] = (float)(1.0 + w * sqrt((double)scale[k]));
        p.rate_scale = scale;
    }
    trn_field f = field_view(r, c->inputs[0]);
    trn_erosion_result e;
    st = trn_erosion_run(&f, &p, c->recipe->seed, &e, bridge, (void *)c->progress, err);
    free(scale);
    if (st) return node_wrap(c, err, st);
    r->has_ledger = true;
    r->ledger = e.ledger;
    r->change = trn_gbuf_wrap(e.change, n, sizeof(float));
    e.change = NULL;
    st = set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, e.field.heights, err);
    e.field.heights = NULL;
    if (!st) {
        st = set_floats(c, r, 1, TRN_PIN_MASK, e.deposition.values, err);
        e.deposition.values = NULL;
    }
    if (!st) {
        st = set_floats(c, r, 2, TRN_PIN_MASK, e.erosion.values, err);
        e.erosion.values = NULL;
    }
    trn_erosion_result_dispose(&e);
    if (!st && !r->change) st = node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    return st;
}

trn_status trn_node_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_node_type *t = c->type;
    trn_status st = grid_check(c, r, err);
    if (st) return st;
    if (is(t, "landform") || is(t, "noise_terrain") || is(t, "flat_terrain"))
        return compute_generator(c, r, err);
    if (is(t, "elevation_mask") || is(t, "slope_mask") || is(t, "path_distance_mask") ||
        is(t, "polygon_mask"))
        return compute_mask(c, r, err);
    if (is(t, "height_blend") || is(t, "height_offset")) return compute_modifier(c, r, err);
    if (is(t, "drainage")) return compute_drainage(c, r, err);
    if (is(t, "erosion")) return compute_erosion(c, r, err);
    if (is(t, "biome_rules") || is(t, "terrain_output")) {
        /* Pass-through: the published field is the input's, shared, never copied. */
        r->biome_rules = is(t, "biome_rules") || c->input_results[0]->biome_rules;
        return share(c, r, 0, c->inputs[0], err);
    }
    return node_fail(c, err, TRN_ERR_UNSUPPORTED, "this node type cannot be evaluated");
}
