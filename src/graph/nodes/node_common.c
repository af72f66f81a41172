/* Helpers every node family shares: errors naming the node, outputs, saturating work sums, keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "graph/nodes/node_common.h"
#include "terrane/recipe.h"

trn_status trn_node_fail(const trn_node_ctx *c, trn_error *err, trn_status code, const char *what)
{
    trn_error_set(err, code, NULL, -1, "node '%.60s' (%s): %s", c->node->id, c->type->name, what);
    if (err) snprintf(err->node_id, sizeof err->node_id, "%s", c->node->id);
    return code;
}

trn_status trn_node_wrap(const trn_node_ctx *c, trn_error *err, trn_status code)
{
    if (err) {
        char msg[sizeof err->message];
        snprintf(msg, sizeof msg, "node '%.60s' (%.24s): %.400s", c->node->id, c->type->name,
                 err->message);
        memcpy(err->message, msg, sizeof msg);
        snprintf(err->node_id, sizeof err->node_id, "%s", c->node->id);
        /* A position with no file is one inside a parameter's own text, not in the recipe. */
        if (!err->file[0]) {
            err->line = err->column = 0;
            err->offset = -1;
        }
    }
    return code;
}

int trn_node_bridge(double done, const char *stage, void *user)
{
    return trn_progress_report(user, done, stage) ? TRN_CANCEL : TRN_CONTINUE;
}

size_t trn_node_samples(const trn_node_result *r)
{
    return ((size_t)r->cells_x + 1u) * ((size_t)r->cells_z + 1u);
}

trn_field trn_node_field_view(const trn_node_result *grid, const trn_gout *o)
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

trn_status trn_node_set_floats(const trn_node_ctx *c, trn_node_result *r, uint32_t k,
                               trn_pin_kind kind, float *data, trn_error *err)
{
    r->outputs[k].kind = kind;
    r->outputs[k].values = trn_gbuf_wrap(data, trn_node_samples(r), sizeof(float));
    if (!r->outputs[k].values) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (r->output_count < k + 1) r->output_count = k + 1;
    return TRN_OK;
}

trn_status trn_node_share(trn_node_result *r, uint32_t k, const trn_gout *from)
{
    r->outputs[k].kind = from->kind;
    r->outputs[k].values = trn_gbuf_retain(from->values);
    r->outputs[k].transport = trn_gbuf_retain(from->transport);
    if (r->output_count < k + 1) r->output_count = k + 1;
    return TRN_OK;
}

void trn_node_pass_transport(trn_node_result *r, uint32_t k, const trn_gout *from)
{
    trn_gbuf_release(r->outputs[k].transport);
    r->outputs[k].transport = from ? trn_gbuf_retain(from->transport) : NULL;
}

uint64_t trn_sat_mul(uint64_t a, uint64_t b)
{
    uint64_t r;
    return trn_mul_u64(a, b, &r) ? r : UINT64_MAX;
}

uint64_t trn_sat_add(uint64_t a, uint64_t b)
{
    uint64_t r;
    return trn_add_u64(a, b, &r) ? r : UINT64_MAX;
}

void trn_key_f64(XXH64_state_t *h, double v)
{
    if (v == 0.0) v = 0.0;
    XXH64_update(h, &v, sizeof v);
}

void trn_key_str(XXH64_state_t *h, const char *s)
{
    const uint32_t n = s ? (uint32_t)strlen(s) : 0xFFFFFFFFu;
    XXH64_update(h, &n, sizeof n);
    if (s) XXH64_update(h, s, n);
}

/* The parameters many families share, one row each: the sea of a drainage and a node's own
 * seed. */
typedef struct shared_params {
    const char *sea;    /* on|off */
    bool has_sea_level; /* given as a number */
    double sea_level;
    bool has_seed; /* given as a number */
    double seed;
} shared_params;

#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, shared_params, member)
static const trn_param_field sea_fields[] = {
    ROW("sea", TEXT, sea),
    ROW("sea_level", NUMBER_GIVEN, has_sea_level),
    ROW("sea_level", DOUBLE, sea_level),
};
static const trn_param_field seed_fields[] = {
    ROW("seed", NUMBER_GIVEN, has_seed),
    ROW("seed", DOUBLE, seed),
};
#undef ROW

double trn_node_drainage_sea(const trn_graph_node *n, const trn_node_type *t,
                             const trn_recipe *recipe)
{
    shared_params p;
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(sea_fields), &p);
    if (p.sea && strcmp(p.sea, "off") == 0) return NAN;
    if (p.has_sea_level) return p.sea_level;
    return trn_recipe_sea_level(recipe, NULL, NULL, 0);
}

uint64_t trn_node_seed(const trn_graph_node *n, const trn_recipe *recipe)
{
    shared_params p;
    /* No type: the seed has no default, only the world's sub-seed below. */
    trn_graph_params_fill(n, NULL, TRN_PARAM_ROWS(seed_fields), &p);
    if (p.has_seed) return (uint64_t)p.seed;
    char channel[80];
    snprintf(channel, sizeof channel, "node:%s", n->id);
    return trn_subseed(recipe->seed, channel);
}

/* ---- reach ---- */

void trn_reach_pointwise(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                         trn_node_reach *out)
{
    (void)n;
    (void)recipe;
    memset(out, 0, sizeof *out);
    out->kind = TRN_REACH_POINTWISE;
    (void)t;
    snprintf(out->why, sizeof out->why,
             "each sample from the same sample of its inputs and its world position");
}

/* Why each global type needs the whole grid (what a user reads in `graph types`). */
static const char *global_why(const char *type)
{
    static const struct {
        const char *type, *why;
    } table[] = {
        {"landform", "its evolution (stream power) drains across the whole grid"},
        {"dune_field", "its avalanche pass moves sand across the whole grid"},
        {"drainage", "depression filling and flow routing cross the whole grid"},
        {"flow_accumulation", "flow accumulates from every upstream sample"},
        {"drain_depressions", "depression filling crosses the whole grid"},
        {"erosion", "droplets and thermal passes wander without a bound per batch"},
        {"stream_power", "its implicit solve drains across the whole grid"},
        {"water_body", "a water body floods its whole basin"},
        {"basin_water", "basins spill across the whole grid"},
        {"water_edit", "edits resolved water over the whole grid"},
        {"river_route", "a route follows the drainage across the whole grid"},
        {"scatter_palette", "placement thins candidates against their neighbours grid-wide"},
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (strcmp(table[k].type, type) == 0) return table[k].why;
    return "reads the whole grid";
}

void trn_reach_global(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                      trn_node_reach *out)
{
    (void)n;
    (void)recipe;
    memset(out, 0, sizeof *out);
    out->kind = TRN_REACH_GLOBAL;
    snprintf(out->why, sizeof out->why, "%s", global_why(t->name));
}

void trn_reach_none(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                    trn_node_reach *out)
{
    (void)n;
    (void)t;
    (void)recipe;
    memset(out, 0, sizeof *out);
    out->kind = TRN_REACH_NONE;
    snprintf(out->why, sizeof out->why, "never evaluated");
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

uint64_t trn_node_segments_reach(const trn_recipe *r, const double *pts, uint32_t count,
                                 uint32_t stride, bool closed, double reach)
{
    uint64_t total = 0;
    const uint32_t segs = closed ? count : (count > 1 ? count - 1 : count);
    for (uint32_t k = 0; k < segs; k++) {
        const uint32_t b = count > 1 ? (k + 1) % count : k;
        /* x is the first coordinate, z the last (XZ pairs, XYZ triples). */
        const double ax = pts[(size_t)stride * k], az = pts[(size_t)stride * k + stride - 1];
        const double bx = pts[(size_t)stride * b], bz = pts[(size_t)stride * b + stride - 1];
        const uint64_t sx = axis_samples((ax < bx ? ax : bx) - reach, (ax < bx ? bx : ax) + reach,
                                         r->size_x, r->cells_x);
        const uint64_t sz = axis_samples((az < bz ? az : bz) - reach, (az < bz ? bz : az) + reach,
                                         r->size_z, r->cells_z);
        total = trn_sat_add(total, trn_sat_mul(sx, sz));
    }
    return total;
}
