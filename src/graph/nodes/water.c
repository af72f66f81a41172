/* Water nodes: Water Body, Basin Water, Water Edit and River Route, carved fields plus water. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/nodes/node_common.h"
#include "terrane/water.h"
#include "water/water_edit.h"

#define VEC(n, d, len, lo, hi, desc)                                                               \
    {                                                                                              \
        n, TRN_PARAM_VECTOR, false, 0, lo, hi, false, d, NULL, len, desc, NULL                     \
    }
#define OPT_POINTS(n, m, desc)                                                                     \
    {                                                                                              \
        n, TRN_PARAM_POINTS, true, 0, 0, 0, false, NULL, NULL, m, desc, NULL                       \
    }
#define OPT_POINTS3(n, m, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_POINTS3, true, 0, 0, 0, false, NULL, NULL, m, desc, NULL                      \
    }
#define JSON(n, d, desc)                                                                           \
    {                                                                                              \
        n, TRN_PARAM_JSON, false, 0, 0, 0, false, d, NULL, 0, desc, NULL                           \
    }

static const trn_pin_spec out_water[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "the ground (carved where the node carves)"},
    {"water", TRN_PIN_WATER, false, "the bodies with their resolved coverage"},
};

static const trn_pin_spec in_body[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the ground to carve and flood"},
    {"water", TRN_PIN_WATER, false, "existing water: its bodies are kept, not carved again"},
};

static const trn_pin_spec in_drainage[] = {
    {"drainage", TRN_PIN_DRAINAGE, true, "a Drainage result (it keeps the field it came from)"},
    {"water", TRN_PIN_WATER, false, "existing water on the drainage's field: kept"},
};

static const trn_pin_spec in_edit[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the ground the edited bodies cover"},
    {"water", TRN_PIN_WATER, true, "the bodies to edit"},
};

/* Appearance and motion, the same on every body kind. */
#define LOOK_PARAMS                                                                                \
    VEC("shallow_color", "[0.1,0.45,0.5,0.35]", 4, 0, 1,                                           \
        "RGBA 0..1 of shallow water; alpha = its opacity"),                                        \
        VEC("deep_color", "[0.02,0.1,0.16,0.9]", 4, 0, 1,                                          \
            "RGBA 0..1 of deep water; alpha = its opacity"),                                       \
        POS("absorption_distance", 4, 0, TRN_BIG,                                                  \
            "world units: at this depth the shallow colour falls to about 37%"),                   \
        NUM("roughness", 0.05, 0, 1, "surface roughness 0..1"),                                    \
        NUM("flow_speed", 0, 0, TRN_BIG, "metres per second of prescribed current (0 = still)"),   \
        VEC("flow_direction", "[1,0]", 2, -TRN_BIG, TRN_BIG,                                       \
            "XZ direction of a lake's or ocean's current, normalised; nonzero when moving"),       \
        NUM("wave_amplitude", 0.05, 0, TRN_BIG, "slope of the animated shading normals"),          \
        POS("wave_length", 2, 0, TRN_BIG, "metres between ripples"),                               \
        NUM("wave_speed", 0.5, 0, TRN_BIG, "metres per second of the ripples"),                    \
        NUM("normal_strength", 1, 0, TRN_BIG, "strength of the shading normals"),                  \
        NUM("foam_width", 0.5, 0, TRN_BIG, "metres of the shallow foam band (0 = none)"),          \
        NUM("foam_strength", 0.5, 0, 1, "foam opacity 0..1"),                                      \
        VEC("foam_color", "[1,1,1,1]", 4, 0, 1, "RGBA 0..1 of the foam")

static const trn_param_spec p_body[] = {
    CHOICE("kind", "lake", "lake|ocean|river", "what the body is"),
    NUM_OR("level", 0, -TRN_BIG, TRN_BIG, "spill",
           "metres of the surface (lakes, oceans, rivers in level mode); lake: \"spill\" fills "
           "the basin at the centre up to where it would run out, less spill_offset"),
    NUM("spill_offset", 0.5, 0, TRN_BIG,
        "lake, level spill: metres the surface stays below the basin's spill level"),
    VEC("center", "[64,64]", 2, -TRN_BIG, TRN_BIG,
        "lake: [x, z] terrain-local world units; a dry centre takes the nearest wet basin "
        "(level spill: the centre's basin or none)"),
    POS("radius", 64, 0, TRN_BIG,
        "lake: world units of its footprint around the centre; level spill: a limit the water "
        "stays inside (its level drops to fit), none unless given"),
    OPT_POINTS("boundary", 3,
               "lake, ocean: a simple polygon [[x, z], ...] limiting the footprint (either "
               "winding, closing vertex optional)"),
    NUM("carve_depth", 0, 0, TRN_BIG,
        "lake, ocean: metres the flooded ground is lowered, ramped in from the shore"),
    OPT_POINTS3("river_path", 2,
                "river: control points [[x, y, z], ...], y the bed elevation in metres"),
    CHOICE("river_path_interpolation", "linear", "linear|catmull_rom",
           "river: straight segments, or a uniform Catmull-Rom curve through the points"),
    INT("river_curve_steps", 8, 1, 64, "river: curve segments per control-point interval"),
    POS("width", 8, 0, TRN_BIG, "river: channel width, world units"),
    CHOICE("river_surface_mode", "level", "level|follow_bed",
           "river: the surface at level, or the bed plus river_depth"),
    POS("river_depth", 1, 0, TRN_BIG, "river, follow_bed: metres of water above the bed"),
    LOOK_PARAMS,
};

static const trn_param_spec p_basin[] = {
    NUM("minimum_depth", 1, 0, TRN_BIG, "metres from a basin's lowest sink to its spill level"),
    NUM("minimum_area", 16, 0, TRN_BIG, "world units^2 a basin's filled region covers at least"),
    INT("maximum_bodies", 16, 0, 65536,
        "lakes proposed at most (the deepest are kept; ids never renumber)"),
    NUM("level_offset", 0, -TRN_BIG, 0, "metres added to the spill level (0 or lower)"),
};

static const trn_param_spec p_edit[] = {
    JSON("excluded_ids", "[]", "body ids to remove: [\"lakes/basin/12_8\", ...]"),
    JSON("overrides", "[]",
         "patches by id: [{\"id\": \"lakes/basin/12_8\", \"level\": 3}, ...]; omitted fields "
         "kept"),
};

static const trn_param_spec p_route[] = {
    NUM("source_x", 64, -TRN_BIG, TRN_BIG, "world units; snapped to the nearest sample"),
    NUM("source_z", 64, -TRN_BIG, TRN_BIG, "world units; snapped to the nearest sample"),
    POS("channel_width", 4, 0, TRN_BIG, "world units"),
    POS("channel_depth", 2, 0, TRN_BIG, "metres the bed lies below the traced ground"),
    POS("water_depth", 1, 0, TRN_BIG, "metres of water above the bed (at most channel_depth)"),
    NUM("flow_speed", 0, 0, TRN_BIG, "metres per second of current along the route"),
    NUM("head_length", 0, 0, TRN_BIG,
        "world units along the route over which the channel deepens from nothing at the source "
        "to channel_depth; the river starts where it is water_depth deep"),
};

/* ---- a Water Body's parameters as a body ---- */

/* A copy of count points of dim numbers (NULL when count is 0). */
static double *copy_points(const double *pts, uint32_t count, uint32_t dim)
{
    if (!pts || !count) return NULL;
    double *out = malloc((size_t)count * dim * sizeof *out);
    if (out) memcpy(out, pts, (size_t)count * dim * sizeof *out);
    return out;
}

/* The look as members of trn_water_look (a colour or direction whose numbers are not the
 * vector's length reads as zeros). */
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, trn_water_look, member)
static const trn_param_field look_fields[] = {
    ROW("shallow_color", VECTOR, shallow_color),
    ROW("deep_color", VECTOR, deep_color),
    ROW("absorption_distance", DOUBLE, absorption_distance),
    ROW("roughness", DOUBLE, roughness),
    ROW("flow_speed", DOUBLE, flow_speed),
    ROW("flow_direction", VECTOR, flow_direction),
    ROW("wave_amplitude", DOUBLE, wave_amplitude),
    ROW("wave_length", DOUBLE, wave_length),
    ROW("wave_speed", DOUBLE, wave_speed),
    ROW("normal_strength", DOUBLE, normal_strength),
    ROW("foam_width", DOUBLE, foam_width),
    ROW("foam_strength", DOUBLE, foam_strength),
    ROW("foam_color", VECTOR, foam_color),
};
#undef ROW

/* A Water Body's own parameters (the kind, the level and the shape by their words and points;
 * the look above). */
typedef struct body_params {
    const char *kind;
    double level;
    const char *level_word; /* "spill" */
    double spill_offset;
    double center[2];
    double radius;
    bool radius_given;
    double carve_depth;
    trn_param_points boundary; /* [x, z] */
    bool boundary_given;
    trn_param_points river_path; /* [x, y, z] */
    const char *interpolation;
    uint32_t curve_steps;
    double width;
    const char *surface_mode;
    double river_depth;
} body_params;

#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, body_params, member)
static const trn_param_field body_fields[] = {
    ROW("kind", TEXT, kind),
    ROW("level", DOUBLE, level),
    ROW("level", TEXT, level_word),
    ROW("spill_offset", DOUBLE, spill_offset),
    ROW("center", VECTOR, center),
    ROW("radius", DOUBLE, radius),
    ROW("radius", GIVEN, radius_given),
    ROW("carve_depth", DOUBLE, carve_depth),
    TRN_PARAM_POINTS_ROW("boundary", body_params, boundary, 2),
    ROW("boundary", GIVEN, boundary_given),
    TRN_PARAM_POINTS_ROW("river_path", body_params, river_path, 3),
    ROW("river_path_interpolation", TEXT, interpolation),
    ROW("river_curve_steps", U32, curve_steps),
    ROW("width", DOUBLE, width),
    ROW("river_surface_mode", TEXT, surface_mode),
    ROW("river_depth", DOUBLE, river_depth),
};
#undef ROW

/* The body a Water Body node describes (validated; *field names the failing parameter). */
static trn_status body_from_params(const trn_graph_node *n, const trn_node_type *t,
                                   trn_water_body *b, const char **field, trn_error *err)
{
    *field = NULL;
    body_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(body_fields), &p);
    trn_water_kind kind = TRN_WATER_LAKE;
    trn_water_kind_parse(p.kind, &kind);
    trn_water_body_init(b, kind, n->id);
    b->level = p.level;
    const bool spill = p.level_word && strcmp(p.level_word, "spill") == 0;
    if (spill && kind != TRN_WATER_LAKE) {
        *field = "level";
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "level: \"spill\" fills a lake's basin; a%s %s needs a level in "
                             "metres",
                             kind == TRN_WATER_OCEAN ? "n" : "", trn_water_kind_name(kind));
    }
    if (spill) {
        b->level_mode = TRN_LAKE_LEVEL_SPILL;
        b->level = 0.0;
    }
    b->spill_offset = p.spill_offset;
    b->center_x = p.center[0];
    b->center_z = p.center[1];
    b->radius = p.radius;
    /* A spill lake without a radius has no limit but the ground's own. */
    if (spill && !p.radius_given) b->radius = TRN_WATER_RADIUS_UNLIMITED;
    b->carve_depth = p.carve_depth;
    const double *pts = p.boundary.v;
    uint32_t count = p.boundary.count;
    /* The closing vertex is optional: drop one that repeats the first. */
    if (pts && count > 1 && pts[0] == pts[2 * (count - 1)] && pts[1] == pts[2 * (count - 1) + 1])
        count--;
    if (kind != TRN_WATER_RIVER && pts) {
        b->boundary = copy_points(pts, count, 2);
        b->boundary_count = b->boundary ? count : 0;
    }
    if (kind == TRN_WATER_RIVER && p.river_path.v) {
        b->control = copy_points(p.river_path.v, p.river_path.count, 3);
        b->control_count = b->control ? p.river_path.count : 0;
    }
    b->interpolation = p.interpolation && strcmp(p.interpolation, "catmull_rom") == 0
                           ? TRN_RIVER_CATMULL_ROM
                           : TRN_RIVER_LINEAR;
    b->curve_steps = p.curve_steps;
    b->width = p.width;
    b->surface_mode = p.surface_mode && strcmp(p.surface_mode, "follow_bed") == 0
                          ? TRN_RIVER_SURFACE_FOLLOW_BED
                          : TRN_RIVER_SURFACE_LEVEL;
    b->river_depth = p.river_depth;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(look_fields), &b->look);
    b->carve = true;
    if (kind == TRN_WATER_RIVER && b->control_count < 2) {
        *field = "river_path";
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river_path: a river needs at least 2 [x, y, z] control points, "
                             "found %u",
                             b->control_count);
    }
    if ((kind != TRN_WATER_RIVER && p.boundary_given && !b->boundary) ||
        (kind == TRN_WATER_RIVER && !b->control))
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    trn_status st = trn_water_body_validate(b, field, err);
    if (!st && kind == TRN_WATER_RIVER) st = trn_water_body_sample_path(b, err);
    return st;
}

static void body_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                       const trn_node_type *t)
{
    trn_water_body b;
    const char *field = NULL;
    trn_error e = {0};
    if (body_from_params(n, t, &b, &field, &e) && e.code != TRN_ERR_NO_MEMORY) {
        char path[96];
        snprintf(path, sizeof path, "nodes[%u].params.%s", index, field ? field : "kind");
        /* The library names the body (the node) first; the diagnostic already does. */
        const char *msg = e.message;
        const char *cut = strstr(msg, "': ");
        if (strncmp(msg, "water body '", 12) == 0 && cut) msg = cut + 3;
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, field ? field : "kind", path, "%s", msg);
    }
    trn_water_body_dispose(&b);
}

/* ---- shared evaluation ---- */

/* Water with no bodies on the node's grid. */
static trn_water *empty_water(const trn_node_result *r, const trn_field *ground)
{
    trn_water *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->cells_x = r->cells_x;
    w->cells_z = r->cells_z;
    w->size_x = r->size_x;
    w->size_z = r->size_z;
    w->ground_hash = trn_water_ground_hash(ground);
    return w;
}

static const trn_water *water_of(const trn_gout *o)
{
    return o && o->water ? o->water->data : NULL;
}

/* Outputs: field 0 = heights (owned when carved, else shared from ground_buf), water 1. */
static trn_status publish(const trn_node_ctx *c, trn_node_result *r, trn_gbuf *ground_buf,
                          float *carved, trn_water *w, trn_error *err)
{
    trn_status st = TRN_OK;
    if (carved)
        st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, carved, err);
    else {
        r->outputs[0].kind = TRN_PIN_HEIGHTFIELD;
        r->outputs[0].values = trn_gbuf_retain(ground_buf);
        r->output_count = r->output_count > 1 ? r->output_count : 1;
    }
    if (st) {
        trn_water_dispose(w);
        free(w);
        return st;
    }
    r->outputs[1].kind = TRN_PIN_WATER;
    r->outputs[1].water = trn_gbuf_wrap_water(w);
    r->output_count = 2;
    if (!r->outputs[1].water) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    return TRN_OK;
}

/* A body's id and its place among the existing and added bodies, sorted by id, then place. */
typedef struct id_at {
    const char *id;
    uint32_t order;
} id_at;

static int by_id_then_order(const void *a, const void *b)
{
    const id_at *x = a, *y = b;
    const int c = strcmp(x->id, y->id);
    if (c) return c;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Existing bodies (not carved again) followed by added ones, resolved on ground_buf's heights;
 * carving works on a copy. Takes the added bodies (disposed here). */
static trn_status resolve(const trn_node_ctx *c, trn_node_result *r, trn_gbuf *ground_buf,
                          const trn_water *existing, trn_water_body *added, uint32_t added_count,
                          trn_error *err)
{
    const uint32_t old = existing ? existing->body_count : 0u;
    const uint32_t total = old + added_count;
    trn_status st = TRN_OK;
    bool carve = false;
    trn_water_body *bodies = calloc(total ? total : 1u, sizeof *bodies);
    if (!bodies) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    uint32_t made = 0;
    for (; !st && made < old; made++) {
        if ((st = trn_water_body_copy(&existing->bodies[made], &bodies[made], err))) {
            st = trn_node_wrap(c, err, st);
            break;
        }
        bodies[made].carve = false;
    }
    /* An added id already taken (by the existing water or an earlier added body): the first
     * such body in order is refused. Sorted, not pairwise: a Basin Water node adds up to 65,536
     * lakes, and comparing each with all before it took seconds. */
    if (!st && added_count) {
        id_at *ids = malloc((size_t)total * sizeof *ids);
        if (!ids) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        for (uint32_t k = 0; ids && k < total; k++) {
            ids[k].id = k < old ? bodies[k].id : added[k - old].id;
            ids[k].order = k;
        }
        if (ids) qsort(ids, total, sizeof *ids, by_id_then_order);
        uint32_t first = UINT32_MAX;
        for (uint32_t k = 1; ids && k < total; k++)
            if (strcmp(ids[k - 1].id, ids[k].id) == 0 && ids[k].order < first)
                first = ids[k].order; /* the later of a pair: added, since existing ids differ */
        if (first != UINT32_MAX) {
            char msg[300];
            snprintf(msg, sizeof msg,
                     "water body id '%.120s' is already used by the existing water",
                     first >= old ? added[first - old].id : bodies[first].id);
            st = trn_node_fail(c, err, TRN_ERR_VALIDATION, msg);
        }
        free(ids);
    }
    for (uint32_t k = 0; !st && k < added_count; k++) {
        bodies[made++] = added[k];
        carve = carve || added[k].carve;
        memset(&added[k], 0, sizeof added[k]);
    }
    for (uint32_t k = 0; k < added_count; k++)
        trn_water_body_dispose(&added[k]);
    float *carved = NULL;
    trn_water *w = NULL;
    if (!st) {
        const size_t n = trn_node_samples(r);
        trn_field ground = trn_node_field_view(r, NULL);
        ground.heights = ground_buf->data;
        if (carve) {
            if (!(carved = malloc(n * sizeof *carved)))
                st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
            else {
                memcpy(carved, ground_buf->data, n * sizeof *carved);
                ground.heights = carved;
            }
        }
        if (!st && !(w = calloc(1, sizeof *w)))
            st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        if (!st) {
            const trn_water_resolve_options o = {c->threads};
            /* Without a carving body the ground is only read. */
            if (made)
                st = trn_water_resolve(&ground, bodies, made, &o, w, err);
            else {
                free(w);
                w = empty_water(r, &ground);
                if (!w) st = TRN_ERR_NO_MEMORY;
            }
            if (st) {
                free(w);
                w = NULL;
                st = st == TRN_ERR_NO_MEMORY && !w ? trn_node_fail(c, err, st, "out of memory")
                                                   : trn_node_wrap(c, err, st);
            }
        }
    }
    for (uint32_t k = 0; k < made; k++)
        trn_water_body_dispose(&bodies[k]);
    free(bodies);
    if (st) {
        free(carved);
        return st;
    }
    return publish(c, r, ground_buf, carved, w, err);
}

/* The node's note: the first warnings of the bodies from index first on. */
static void note_warnings(trn_node_result *r, uint32_t first)
{
    const trn_water *w = water_of(&r->outputs[1]);
    uint32_t count = 0;
    for (uint32_t k = first; w && k < w->body_count; k++)
        if (w->bodies[k].warning_count) {
            if (!count) snprintf(r->note, sizeof r->note, "%s", w->bodies[k].warning);
            count += w->bodies[k].warning_count;
        }
    if (count > 1) {
        /* The count always shows: a long warning is cut to make room for it. */
        char more[48];
        snprintf(more, sizeof more, " (%" PRIu32 " warnings in all)", count);
        const size_t m = strlen(more);
        size_t len = strlen(r->note);
        if (len + m >= sizeof r->note) {
            len = sizeof r->note - m - 4u;
            memcpy(r->note + len, "...", 3);
            len += 3;
        }
        memcpy(r->note + len, more, m + 1);
    }
}

/* ---- Water Body ---- */

static trn_status body_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_water_body b;
    const char *field;
    trn_status st = body_from_params(c->node, c->type, &b, &field, err);
    if (st) {
        trn_water_body_dispose(&b);
        return trn_node_wrap(c, err, st);
    }
    const trn_water *existing = water_of(c->inputs[1]);
    const uint32_t first = existing ? existing->body_count : 0u;
    st = resolve(c, r, c->inputs[0]->values, existing, &b, 1, err);
    /* Carving is authored shaping, not moved material: the field's transport stands. */
    if (!st) trn_node_pass_transport(r, 0, c->inputs[0]);
    if (!st) note_warnings(r, first);
    return st;
}

/* Water nodes resolve every body they receive again, so each pays the resolution work of its
 * input's bodies; its own bodies add to what it passes on. */
static void water_load_add(trn_node_work_info *out, uint64_t bodies, uint64_t bytes, uint64_t work)
{
    out->work = trn_sat_add(trn_sat_add(out->work, out->water_in.work), work);
    out->water_out.bodies = trn_sat_add(out->water_in.bodies, bodies);
    out->water_out.bytes = trn_sat_add(out->water_in.bytes, bytes);
    out->water_out.work = trn_sat_add(out->water_in.work, work);
}

/* Resolving one body without points: carve, fill, shore and statistics over the grid. */
static uint64_t plain_body_work(const trn_recipe *recipe)
{
    return trn_sat_mul(((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u), 4u);
}

/* A body's record and its points as a resolved water holds them, twice: resolution works on a
 * copy of every body it receives (measured: 2,000 chained lakes held 1.45 KB a body). */
static uint64_t body_bytes(uint64_t points)
{
    return trn_sat_mul(
        trn_sat_add(sizeof(trn_water_body), trn_sat_mul(points, 3u * sizeof(double))), 2u);
}

/* The grid 4 times (carve, fill, shore, statistics), a river's sampled segments twice (carving,
 * then coverage: each visits the samples of its box widened by half the width), and the
 * resolution of every body the node receives. */
static void body_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                      trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    trn_water_body b;
    const char *field;
    uint64_t near = 0, points = 0, segments = 0;
    if (body_from_params(n, t, &b, &field, NULL) == TRN_OK && b.kind == TRN_WATER_RIVER &&
        trn_water_body_sample_path(&b, NULL) == TRN_OK && b.path_count > 1) {
        near = trn_node_segments_reach(recipe, b.path, b.path_count, 3, false, b.width / 2.0);
        segments = b.path_count - 1u;
        points = (uint64_t)b.path_count + b.control_count;
    }
    trn_water_body_dispose(&b);
    const uint64_t own = trn_sat_add(plain_body_work(recipe), trn_sat_mul(near, 2u));
    out->work = 0;
    water_load_add(out, 1u, body_bytes(points), own);
    out->param = segments ? "river_path" : NULL;
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples x 4 (carve, fill, shore, statistics) + 2 x %" PRIu64
             " samples near its %" PRIu64 " path segments + %" PRIu64 " to resolve the %" PRIu64
             " bodies it receives",
             samples, near, segments, out->water_in.work, out->water_in.bodies);
}

/* A Basin Water's parameters as members of trn_basin_water_params, one row each. */
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, trn_basin_water_params, member)
static const trn_param_field basin_fields[] = {
    ROW("minimum_depth", DOUBLE, minimum_depth),
    ROW("minimum_area", DOUBLE, minimum_area),
    ROW("maximum_bodies", U32, maximum_bodies),
    ROW("level_offset", DOUBLE, level_offset),
};
#undef ROW

/* Proposals: at most maximum_bodies lakes, each resolved over the grid. */
static void basin_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                       trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    trn_basin_water_params p;
    trn_basin_water_params_default(&p);
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(basin_fields), &p);
    const uint64_t most = p.maximum_bodies;
    out->work = trn_sat_mul(samples, 8u); /* finding and ranking the basins */
    water_load_add(out, most, trn_sat_mul(most, body_bytes(0)),
                   trn_sat_mul(most, plain_body_work(recipe)));
    out->param = "maximum_bodies";
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples x 8 + up to %" PRIu64 " lakes x %" PRIu64
             " samples x 4 + %" PRIu64 " to resolve the %" PRIu64 " bodies it receives",
             samples, most, samples, out->water_in.work, out->water_in.bodies);
}

/* One routed river (its path follows the drainage: at most every sample once) and the bodies it
 * receives. */
static void route_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                       trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)n, (void)t, (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    out->work = samples;
    /* Its path: a river winds, but not over more than eight times the grid's two sides. */
    const uint64_t points = 8u * ((uint64_t)recipe->cells_x + recipe->cells_z + 2u);
    water_load_add(out, 1u, body_bytes(points), trn_sat_mul(plain_body_work(recipe), 2u));
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples x 9 (route, carve, fill, shore, statistics) + %" PRIu64
             " to resolve the %" PRIu64 " bodies it receives",
             samples, out->water_in.work, out->water_in.bodies);
}

/* Edits resolve what they receive again. */
static void edit_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                      trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)n, (void)t, (void)quality;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    out->work = samples;
    water_load_add(out, 0u, 0u, 0u);
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " samples + %" PRIu64 " to resolve the %" PRIu64 " bodies it receives",
             samples, out->water_in.work, out->water_in.bodies);
}

/* ---- Basin Water ---- */

/* Whether a proposal's sink (its centre) is already under existing water. */
static bool sink_wet(const trn_water *w, const trn_water_body *b)
{
    if (!w || !w->wet) return false;
    const double fi = b->center_x * (double)w->cells_x / w->size_x;
    const double fj = b->center_z * (double)w->cells_z / w->size_z;
    if (!(fi >= 0.0 && fj >= 0.0 && fi <= (double)w->cells_x && fj <= (double)w->cells_z))
        return false;
    const size_t k = (size_t)floor(fj + 0.5) * ((size_t)w->cells_x + 1u) + (size_t)floor(fi + 0.5);
    return w->wet[k] != 0;
}

/* Deepest first (the level above the sink), then the smaller sink index: the budget's order. */
typedef struct ranked {
    double depth;
    uint32_t index;
} ranked;

static int by_depth(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->depth != y->depth) return x->depth > y->depth ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static trn_status basin_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_gout *d = c->inputs[0];
    const trn_water *existing = water_of(c->inputs[1]);
    trn_basin_water_params p;
    trn_basin_water_params_default(&p);
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(basin_fields), &p);
    const uint32_t budget = p.maximum_bodies;
    /* Every eligible basin first: those whose sink is already under existing water (a lake
     * that fills the basin) are left out before the budget picks the deepest. */
    p.maximum_bodies = UINT32_MAX;
    trn_water_body *bodies = NULL;
    uint32_t count = 0, eligible = 0;
    trn_status st = trn_water_propose_basins(&d->view, d->source->data, c->node->id, &p, &bodies,
                                             &count, &eligible, err);
    if (st) return trn_node_wrap(c, err, st);
    uint32_t kept = 0, covered = 0;
    for (uint32_t k = 0; k < count; k++) {
        if (sink_wet(existing, &bodies[k])) {
            trn_water_body_dispose(&bodies[k]);
            covered++;
            continue;
        }
        if (kept != k) bodies[kept] = bodies[k];
        kept++;
    }
    eligible = kept;
    if (kept > budget) {
        ranked *order = malloc((size_t)kept * sizeof *order);
        bool *keep = calloc(kept, sizeof *keep);
        if (!order || !keep) {
            free(order);
            free(keep);
            trn_water_bodies_free(bodies, kept);
            return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        }
        trn_field f = trn_node_field_view(r, NULL);
        f.heights = d->source->data;
        for (uint32_t k = 0; k < kept; k++) {
            order[k].depth =
                bodies[k].level - trn_field_height_at(&f, bodies[k].center_x, bodies[k].center_z);
            order[k].index = k;
        }
        qsort(order, kept, sizeof *order, by_depth);
        for (uint32_t k = 0; k < budget; k++)
            keep[order[k].index] = true;
        uint32_t n = 0;
        for (uint32_t k = 0; k < kept; k++) {
            if (!keep[k]) {
                trn_water_body_dispose(&bodies[k]);
                continue;
            }
            if (n != k) bodies[n] = bodies[k];
            n++;
        }
        kept = n;
        free(order);
        free(keep);
    }
    st = resolve(c, r, d->source, existing, bodies, kept, err);
    free(bodies); /* the bodies moved into the water (or were disposed) */
    if (!st) trn_node_pass_transport(r, 0, d);
    if (!st && eligible > kept)
        snprintf(r->note, sizeof r->note,
                 "%" PRIu32 " basins are eligible, maximum_bodies keeps the %" PRIu32 " deepest%s",
                 eligible, kept, covered ? " (basins under existing water left out)" : "");
    return st;
}

/* ---- Water Edit ---- */

/* Its two parameters, kept as JSON text and the tree it reads as (read by trn_water_edit's own
 * rows). */
typedef struct edit_params {
    const char *json[2]; /* excluded_ids, overrides: NULL when given as another kind */
    const json_t *tree[2];
    bool given[2];
} edit_params;
#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, edit_params, member)
static const trn_param_field edit_fields[] = {
    ROW("excluded_ids", JSON, json[0]),
    ROW("excluded_ids", TREE, tree[0]),
    ROW("excluded_ids", GIVEN, given[0]),
    ROW("overrides", JSON, json[1]),
    ROW("overrides", TREE, tree[1]),
    ROW("overrides", GIVEN, given[1]),
};
#undef ROW

static void edit_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                       const trn_node_type *t)
{
    static const char *const names[2] = {"excluded_ids", "overrides"};
    edit_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(edit_fields), &p);
    for (int k = 0; k < 2; k++) {
        if (p.given[k] && !(p.json[k] && p.json[k][0] == '[')) {
            char path[96];
            snprintf(path, sizeof path, "nodes[%u].params.%s", index, names[k]);
            trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, names[k], path,
                           "%s: expected an array of %s", names[k],
                           k ? "{\"id\": ..., FIELD: value} objects" : "body id strings");
            return;
        }
    }
    /* What holds for any input water is found here, where the parameter's place in its file is
     * known, in the words generation would use. */
    char where[128] = "", path[192];
    trn_error e;
    trn_error_clear(&e);
    if (trn_water_edit_check_read(p.json[0] ? p.json[0] : "[]", p.tree[0],
                                  p.json[1] ? p.json[1] : "[]", p.tree[1], where, sizeof where,
                                  &e) == TRN_OK)
        return;
    /* "water edit: WHERE: MESSAGE" (or "water edit: unknown key ..."): the message after it. */
    const char *msg = e.message;
    if (strncmp(msg, "water edit: ", 12) == 0) msg += 12;
    const size_t at = strlen(where);
    const bool unknown = strncmp(msg, "unknown key '", 13) == 0;
    if (!unknown && strncmp(msg, where, at) == 0 && strncmp(msg + at, ": ", 2) == 0) msg += at + 2;
    snprintf(path, sizeof path, "nodes[%u].params.%s", index, where);
    const bool overrides = strncmp(where, "overrides", 9) == 0;
    trn_check_diag(c, TRN_GRAPH_ERROR, unknown ? "unknown-param" : "bad-param", n,
                   overrides ? "overrides" : "excluded_ids", path, "%s%s%s", unknown ? "" : where,
                   unknown ? "" : ": ", msg);
}

static trn_status edit_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_water *in = water_of(c->inputs[1]);
    trn_water_body *bodies = NULL;
    uint32_t count = 0;
    char where[128] = "";
    edit_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(edit_fields), &p);
    trn_status st = trn_water_edit_read(in ? in->bodies : NULL, in ? in->body_count : 0u,
                                        p.json[0] ? p.json[0] : "[]", p.tree[0],
                                        p.json[1] ? p.json[1] : "[]", p.tree[1], &bodies, &count,
                                        where, sizeof where, err);
    if (st && err && where[0])
        snprintf(err->node_path, sizeof err->node_path, "params.%.100s", where);
    if (st) return trn_node_wrap(c, err, st);
    for (uint32_t k = 0; k < count; k++)
        bodies[k].carve = false;
    st = resolve(c, r, c->inputs[0]->values, NULL, bodies, count, err);
    free(bodies);
    if (!st) trn_node_pass_transport(r, 0, c->inputs[0]);
    return st;
}

/* ---- River Route ---- */

/* Its parameters as members of trn_river_route_params, one row each. */
#define ROW(name, member) TRN_PARAM_DOUBLE_ROW(name, trn_river_route_params, member)
static const trn_param_field route_fields[] = {
    ROW("source_x", source_x),
    ROW("source_z", source_z),
    ROW("channel_width", channel_width),
    ROW("channel_depth", channel_depth),
    ROW("water_depth", water_depth),
    ROW("flow_speed", flow_speed),
    ROW("head_length", head_length),
};
#undef ROW

static void route_from_params(const trn_graph_node *n, const trn_node_type *t,
                              trn_river_route_params *p)
{
    trn_river_route_params_default(p);
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(route_fields), p);
}

static void route_check(trn_check_ctx *c, const trn_graph_node *n, uint32_t index,
                        const trn_node_type *t)
{
    trn_river_route_params p;
    route_from_params(n, t, &p);
    if (p.water_depth > p.channel_depth) {
        char path[96];
        snprintf(path, sizeof path, "nodes[%u].params.water_depth", index);
        trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, "water_depth", path,
                       "water_depth: expected at most channel_depth (%g), found %g",
                       p.channel_depth, p.water_depth);
    }
    /* The source inside the terrain, found where the parameter is written (generation words it
     * the same way, for a graph run without this check). Every field spans the recipe's size. */
    const trn_recipe *recipe = trn_check_recipe(c);
    if (!recipe) return;
    const double x = p.source_x, z = p.source_z;
    const bool x_in = x >= 0.0 && x <= recipe->size_x, z_in = z >= 0.0 && z <= recipe->size_z;
    if (x_in && z_in) return;
    const char *name = x_in ? "source_z" : "source_x";
    char path[96];
    snprintf(path, sizeof path, "nodes[%u].params.%s", index, name);
    trn_check_diag(c, TRN_GRAPH_ERROR, "bad-param", n, name, path,
                   "source: expected a point inside the field (x 0..%g, z 0..%g), found (%g, %g)",
                   recipe->size_x, recipe->size_z, x, z);
}

static trn_status route_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_gout *d = c->inputs[0];
    const trn_water *existing = water_of(c->inputs[1]);
    trn_river_route_params p;
    route_from_params(c->node, c->type, &p);
    trn_water_body body;
    memset(&body, 0, sizeof body);
    trn_route_report rep;
    memset(&rep, 0, sizeof rep);
    /* The ground with the channel head cut in, which the river is then resolved on. */
    trn_gbuf *ground = trn_gbuf_new(trn_node_samples(r), sizeof(float));
    if (!ground) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    trn_status st = trn_river_route_carve(&d->view, d->source->data, existing, c->node->id, &p,
                                          &body, &rep, ground->data, err);
    if (st) {
        trn_gbuf_release(ground);
        return trn_node_wrap(c, err, st);
    }
    const bool placed = rep.end != TRN_ROUTE_NOT_PLACED;
    if (placed) body.carve = true;
    st = resolve(c, r, placed ? ground : d->source, existing, placed ? &body : NULL,
                 placed ? 1u : 0u, err);
    trn_gbuf_release(ground);
    if (!placed) trn_water_body_dispose(&body);
    if (!st) trn_node_pass_transport(r, 0, d);
    if (!st) {
        if (!placed)
            snprintf(r->note, sizeof r->note, "not placed: %.200s", rep.message);
        else if (rep.joined[0])
            snprintf(r->note, sizeof r->note, "%s at (%g, %g), joins '%.120s', %" PRIu32 " samples",
                     trn_route_end_name(rep.end), rep.end_x, rep.end_z, rep.joined, rep.samples);
        else
            snprintf(r->note, sizeof r->note, "%s at (%g, %g), %" PRIu32 " samples%s%.120s",
                     trn_route_end_name(rep.end), rep.end_x, rep.end_z, rep.samples,
                     rep.end == TRN_ROUTE_CLOSED_BASIN || rep.end == TRN_ROUTE_BLOCKED ? ": " : "",
                     rep.end == TRN_ROUTE_CLOSED_BASIN || rep.end == TRN_ROUTE_BLOCKED ? rep.message
                                                                                       : "");
    }
    return st;
}

const trn_node_module trn_node_water_body = {
    TRN_SPEC("water_body", "Water Body", "water",
             "Carves a lake, an ocean or an authored river and resolves its water.", 1, in_body,
             out_water, p_body, false),
    2.0,
    false,
    body_compute,
    NULL,
    body_work,
    body_check,
    trn_reach_global};

const trn_node_module trn_node_basin_water = {
    TRN_SPEC("basin_water", "Basin Water", "water",
             "Proposes lakes at the spill levels of a drainage's closed basins (no carving).", 1,
             in_drainage, out_water, p_basin, false),
    2.0,
    false,
    basin_compute,
    NULL,
    basin_work,
    NULL,
    trn_reach_global};

const trn_node_module trn_node_water_edit = {
    TRN_SPEC("water_edit", "Water Edit", "water",
             "Removes bodies by id and patches others, resolved on its field (no carving).", 1,
             in_edit, out_water, p_edit, false),
    1.0,
    false,
    edit_compute,
    NULL,
    edit_work,
    edit_check,
    trn_reach_global};

const trn_node_module trn_node_river_route = {
    TRN_SPEC("river_route", "River Route", "water",
             "Routes a river down a drainage from a source to the sea, an edge or a body.", 1,
             in_drainage, out_water, p_route, false),
    2.0,
    false,
    route_compute,
    NULL,
    route_work,
    route_check,
    trn_reach_global};
