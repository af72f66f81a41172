/* Mask nodes: elevation and slope bands, path corridors and polygons, weights 0..1. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/nodes/node_common.h"
#include "terrane/masks.h"

static const trn_pin_spec out_mask[] = {{"mask", TRN_PIN_MASK, false, "weights 0..1"}};
static const trn_pin_spec in_field[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the terrain whose grid (and heights) it uses"}};

static const trn_param_spec p_elevation[] = {
    NUM("min", 0, -TRN_BIG, TRN_BIG, "metres, lower edge of the fully weighted band"),
    NUM("max", 100, -TRN_BIG, TRN_BIG, "metres, upper edge of the fully weighted band"),
    NUM("falloff", 10, 0, TRN_BIG, "metres of smooth transition outside the band (0 = hard edge)"),
};

static const trn_param_spec p_slope[] = {
    NUM("min", 0, 0, 90, "degrees, lower edge of the fully weighted band"),
    NUM("max", 30, 0, 90, "degrees, upper edge of the fully weighted band"),
    NUM("falloff", 5, 0, 90, "degrees of smooth transition outside the band (0 = hard edge)"),
};

static const trn_param_spec p_path[] = {
    POINTS("points", "[[0,0],[0,100]]", 2, "polyline [x, z] points, terrain-local world units"),
    NUM("width", 20, 0, HUGE_VAL, "fully weighted HALF width, world units"),
    NUM("falloff", 40, 0, HUGE_VAL, "world units of smooth transition beyond width (0 = hard)"),
    NUM("edge_warp", 0, 0, TRN_BIG,
        "world units the outline wanders (a fractal warp: natural edges; 0 = the exact shape)"),
    POS("edge_warp_size", 256, 0, HUGE_VAL, "world units of the outline's largest wiggles"),
    OPT_INT("seed", 0, 9007199254740992.0,
            "warp seed; absent = the sub-seed of channel \"node:<id>\" of the world seed"),
};

/* Octaves of the outline warp: wiggles from edge_warp_size down to 1/16 of it. */
#define EDGE_OCTAVES 5u

static const trn_param_spec p_polygon[] = {
    POINTS("points", "[[0,0],[100,0],[100,100],[0,100]]", 3,
           "closed polygon [x, z] points (even-odd fill), terrain-local world units"),
    NUM("falloff", 20, 0, HUGE_VAL, "world units of smooth transition outside (0 = hard)"),
    NUM("edge_warp", 0, 0, TRN_BIG,
        "world units the outline wanders (a fractal warp: natural edges; 0 = the exact shape)"),
    POS("edge_warp_size", 256, 0, HUGE_VAL, "world units of the outline's largest wiggles"),
    OPT_INT("seed", 0, 9007199254740992.0,
            "warp seed; absent = the sub-seed of channel \"node:<id>\" of the world seed"),
};

/* The band masks' parameters and the shapes', one row each (a polygon has no width: 0). */
typedef struct band_params {
    double min, max, falloff;
} band_params;
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, band_params, member)
static const trn_param_field band_fields[] = {
    ROW("min", DOUBLE, min),
    ROW("max", DOUBLE, max),
    ROW("falloff", DOUBLE, falloff),
};
#undef ROW

typedef struct shape_params {
    trn_param_points points; /* [x, z] */
    bool points_given;
    double width, falloff, edge_warp, edge_warp_size;
} shape_params;
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, shape_params, member)
static const trn_param_field shape_fields[] = {
    TRN_PARAM_POINTS_ROW("points", shape_params, points, 2),
    ROW("points", GIVEN, points_given),
    ROW("width", DOUBLE, width),
    ROW("falloff", DOUBLE, falloff),
    ROW("edge_warp", DOUBLE, edge_warp),
    ROW("edge_warp_size", DOUBLE, edge_warp_size),
};
/* What the key and the reach read: whether the outline wanders, and how far. */
static const trn_param_field warp_fields[] = {ROW("edge_warp", DOUBLE, edge_warp)};
#undef ROW

static void shape_from_params(const trn_graph_node *n, const trn_node_type *t, shape_params *p)
{
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(shape_fields), p);
}

/* Every sample once, plus the samples within reach of each segment. */
static void shape_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                       trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    const bool path = trn_node_module_of(t) == &trn_node_path_distance_mask;
    shape_params p;
    shape_from_params(n, t, &p);
    const uint32_t count = p.points.count;
    const double reach = path ? p.width + p.falloff : p.falloff;
    const uint64_t near =
        p.points.v ? trn_node_segments_reach(recipe, p.points.v, count, 2, !path, reach) : 0u;
    /* A warped outline evaluates its fractal warp (two coordinates, EDGE_OCTAVES each) a sample. */
    const uint64_t warp = p.edge_warp > 0.0 ? trn_sat_mul(samples, 2u * EDGE_OCTAVES) : 0u;
    out->work = trn_sat_add(trn_sat_add(samples, near), warp);
    out->param = p.points_given ? "points" : NULL;
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples + %" PRIu64 " samples within reach of its %" PRIu32
             " %s + %" PRIu64 " for the outline warp",
             samples, near, count, path ? "points' segments" : "edges", warp);
}

static trn_status publish(const trn_node_ctx *c, trn_node_result *r, trn_status st, trn_mask *m,
                          trn_error *err)
{
    if (st) return trn_node_wrap(c, err, st);
    return trn_node_set_floats(c, r, 0, TRN_PIN_MASK, m->values, err);
}

static trn_status band_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_graph_node *n = c->node;
    const trn_node_type *t = c->type;
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_mask m;
    memset(&m, 0, sizeof m);
    band_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(band_fields), &p);
    const trn_status st = trn_node_module_of(t) == &trn_node_elevation_mask
                              ? trn_mask_elevation(&f, p.min, p.max, p.falloff, &m, err)
                              : trn_mask_slope(&f, p.min, p.max, p.falloff, &m, err);
    return publish(c, r, st, &m, err);
}

static trn_status shape_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_graph_node *n = c->node;
    const trn_node_type *t = c->type;
    trn_mask m;
    memset(&m, 0, sizeof m);
    shape_params p;
    shape_from_params(n, t, &p);
    trn_status st;
    /* On a tile, positions come from the world grid (bit for bit the whole grid's). */
    trn_sample_window whole;
    memset(&whole, 0, sizeof whole);
    whole.world_cells_x = r->cells_x;
    whole.world_cells_z = r->cells_z;
    whole.world_size_x = r->size_x;
    whole.world_size_z = r->size_z;
    const trn_sample_window *w = c->window ? c->window : &whole;
    if (trn_node_module_of(t) == &trn_node_path_distance_mask)
        st = trn_mask_path_window(r->cells_x, r->cells_z, w, p.points.v, p.points.count, p.width,
                                  p.falloff, &m, err);
    else
        st = trn_mask_polygon_window(r->cells_x, r->cells_z, w, p.points.v, p.points.count,
                                     p.falloff, &m, err);
    const double warp = p.edge_warp;
    if (st == TRN_OK && warp > 0.0) {
        trn_mask exact = m;
        st = trn_mask_warp_window(&exact, w, warp, p.edge_warp_size, EDGE_OCTAVES,
                                  trn_node_seed(n, c->recipe), &m, err);
        trn_mask_dispose(&exact);
    }
    return publish(c, r, st, &m, err);
}

/* A shape is pointwise; its warped outline reads the exact shape up to edge_warp world units
 * away (the warp's displacement is at most that), plus the bilinear neighbour. */
static void shape_reach(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                        trn_node_reach *out)
{
    shape_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(warp_fields), &p);
    const double warp = p.edge_warp;
    if (!(warp > 0.0)) {
        trn_reach_pointwise(n, t, recipe, out);
        snprintf(out->why, sizeof out->why,
                 "each sample's distance to the outline, from its world position; an edge_warp "
                 "makes it a neighbourhood of edge_warp");
        return;
    }
    memset(out, 0, sizeof *out);
    if (!recipe) {
        trn_reach_global(n, t, recipe, out);
        return;
    }
    const double dx = recipe->size_x / (double)recipe->cells_x,
                 dz = recipe->size_z / (double)recipe->cells_z;
    const double halo = ceil(warp / (dx < dz ? dx : dz)) + 2.0;
    const double most =
        (double)(recipe->cells_x > recipe->cells_z ? recipe->cells_x : recipe->cells_z) + 1.0;
    out->kind = TRN_REACH_NEIGHBOURHOOD;
    out->halo = (uint32_t)(halo < most ? halo : most);
    snprintf(out->why, sizeof out->why,
             "its outline wanders up to edge_warp %g world units: %u samples each way", warp,
             out->halo);
}

/* Horn's gradient reads the 3x3 samples around each sample. */
static void slope_reach(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                        trn_node_reach *out)
{
    (void)n;
    (void)t;
    (void)recipe;
    memset(out, 0, sizeof *out);
    out->kind = TRN_REACH_NEIGHBOURHOOD;
    out->halo = 1;
    snprintf(out->why, sizeof out->why, "Horn's gradient over the 3x3 samples around each");
}

/* A warped outline depends on its seed: the world seed's unless the node names one. */
static void shape_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                      const trn_recipe *recipe, trn_erosion_quality quality)
{
    (void)quality;
    shape_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(warp_fields), &p);
    if (!(p.edge_warp > 0.0)) return;
    const uint64_t seed = trn_node_seed(n, recipe);
    XXH64_update(h, &seed, sizeof seed);
}

static void band_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                       const trn_node_type *t)
{
    band_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(band_fields), &p);
    if (p.min > p.max) {
        char path[64];
        snprintf(path, sizeof path, "nodes[%u].params.min", index);
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, "min", path,
                       "min is above max; the band would be empty");
    }
}

const trn_node_module trn_node_elevation_mask = {
    TRN_SPEC("elevation_mask", "Elevation Mask", "mask",
             "Selects a height band with a smooth falloff.", 1, in_field, out_mask, p_elevation,
             false),
    1.0,
    false,
    band_compute,
    NULL,
    NULL,
    band_check,
    trn_reach_pointwise};

const trn_node_module trn_node_slope_mask = {
    TRN_SPEC("slope_mask", "Slope Mask", "mask", "Selects a steepness band with a smooth falloff.",
             1, in_field, out_mask, p_slope, false),
    1.0,
    false,
    band_compute,
    NULL,
    NULL,
    band_check,
    slope_reach};

const trn_node_module trn_node_path_distance_mask = {
    TRN_SPEC("path_distance_mask", "Path Distance Mask", "mask",
             "A corridor around a polyline: 1 within width, smooth falloff beyond.", 1, in_field,
             out_mask, p_path, false),
    1.0,
    false,
    shape_compute,
    shape_key,
    shape_work,
    NULL,
    shape_reach};

const trn_node_module trn_node_polygon_mask = {
    TRN_SPEC("polygon_mask", "Polygon Mask", "mask",
             "A closed polygon (even-odd fill): 1 inside and on the edge, smooth falloff outside.",
             1, in_field, out_mask, p_polygon, false),
    1.0,
    false,
    shape_compute,
    shape_key,
    shape_work,
    NULL,
    shape_reach};
