/* Modifier nodes: Height Blend and Height Offset, heights changed through optional masks. */
#include <stdlib.h>

#include "graph/nodes/node_common.h"
#include "terrane/masks.h"

static const trn_pin_spec out_field[] = {{"field", TRN_PIN_HEIGHTFIELD, false, "the heights"}};

static const trn_pin_spec in_blend[] = {
    {"a", TRN_PIN_HEIGHTFIELD, true, "heights where the weight is 0"},
    {"b", TRN_PIN_HEIGHTFIELD, true, "heights where the weight is 1"},
    {"mask", TRN_PIN_MASK, false, "weight per sample (absent = 1)"},
};
static const trn_param_spec p_blend[] = {
    NUM("amount", 0.5, 0, 1, "weight of B where the mask is 1: out = A + (B - A) * amount * mask")};

static const trn_pin_spec in_offset[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "heights to raise or lower"},
    {"mask", TRN_PIN_MASK, false, "weight per sample (absent = 1)"},
};
static const trn_param_spec p_offset[] = {
    NUM("offset", 10, -TRN_BIG, TRN_BIG, "metres added where the mask is 1")};

/* The parameters of each node type, one row each. */
typedef struct blend_params {
    double amount;
} blend_params;
static const trn_param_field blend_fields[] = {
    TRN_PARAM_DOUBLE_ROW("amount", blend_params, amount)};

typedef struct offset_params {
    double offset;
} offset_params;
static const trn_param_field offset_fields[] = {
    TRN_PARAM_DOUBLE_ROW("offset", offset_params, offset)};

static trn_status finish(const trn_node_ctx *c, trn_node_result *r, trn_status st, float *out,
                         trn_error *err)
{
    if (st) {
        free(out);
        return trn_node_wrap(c, err, st);
    }
    return trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, out, err);
}

/* The inputs' transports blended with exactly the heights' weights (the same function, so
 * amount 0 or a mask of 0 takes A's transport bit for bit and a discarded branch adds
 * nothing); a missing transport counts as zeros, both missing give none. */
static trn_status blend_transport(const trn_node_ctx *c, trn_node_result *r, const float *weights,
                                  double amount, trn_error *err)
{
    const trn_gbuf *ta = c->inputs[0]->transport, *tb = c->inputs[1]->transport;
    if (!ta && !tb) return TRN_OK;
    const size_t n = trn_node_samples(r);
    float *zeros = NULL;
    if (!ta || !tb) {
        if (!(zeros = calloc(n ? n : 1u, sizeof *zeros)))
            return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    float *out = malloc(n * sizeof *out);
    trn_status st = out ? TRN_OK : trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (!st) {
        st = trn_heights_blend(ta ? ta->data : zeros, tb ? tb->data : zeros, weights, amount, n,
                               out, err);
        if (st) st = trn_node_wrap(c, err, st);
    }
    free(zeros);
    if (!st && !(r->outputs[0].transport = trn_gbuf_wrap(out, n, sizeof(float))))
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    if (st) free(out);
    return st;
}

static trn_status blend_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = trn_node_samples(r);
    float *out = malloc(n * sizeof *out);
    if (!out) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    const trn_gout *mask = c->inputs[2];
    blend_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(blend_fields), &p);
    const double amount = p.amount;
    const float *weights = mask ? mask->values->data : NULL;
    trn_status st = trn_heights_blend(c->inputs[0]->values->data, c->inputs[1]->values->data,
                                      weights, amount, n, out, err);
    if ((st = finish(c, r, st, out, err))) return st;
    return blend_transport(c, r, weights, amount, err);
}

static trn_status offset_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const size_t n = trn_node_samples(r);
    float *out = malloc(n * sizeof *out);
    if (!out) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    const trn_gout *mask = c->inputs[1];
    offset_params p;
    trn_graph_params_fill(c->node, c->type, TRN_PARAM_ROWS(offset_fields), &p);
    const trn_status st = trn_heights_offset(
        c->inputs[0]->values->data, mask ? mask->values->data : NULL, p.offset, n, out, err);
    const trn_status done = finish(c, r, st, out, err);
    /* An offset moves no material: the input's transport stands. */
    if (!done) trn_node_pass_transport(r, 0, c->inputs[0]);
    return done;
}

const trn_node_module trn_node_height_blend = {
    TRN_SPEC("height_blend", "Height Blend", "modifier",
             "Mixes two heightfields of the same grid, optionally through a mask.", 1, in_blend,
             out_field, p_blend, false),
    1.0,
    false,
    blend_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_pointwise};

const trn_node_module trn_node_height_offset = {
    TRN_SPEC("height_offset", "Height Offset", "modifier",
             "Raises or lowers a heightfield, optionally through a mask.", 1, in_offset, out_field,
             p_offset, false),
    1.0,
    false,
    offset_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_pointwise};
