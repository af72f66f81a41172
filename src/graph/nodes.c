/* Node dispatch: a node's cache key, work and computation through its registry entry. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/nodes/node_common.h"

double trn_node_cost(const trn_node_type *type)
{
    return trn_node_module_of(type)->cost;
}

/* Bytes one output pin of a kind holds per sample: values plus what travels with them (an
 * eroded field's transport and change; a drainage's filled surface, directions, accumulation and
 * basin labels; a water's owner, wet flag, surface and segment per sample). */
static uint64_t pin_bytes_per_sample(trn_pin_kind kind)
{
    switch (kind) {
    case TRN_PIN_HEIGHTFIELD:
        return 12u;
    case TRN_PIN_MASK:
        return 4u;
    case TRN_PIN_DRAINAGE:
        return 4u + 4u + 1u + 8u + 4u;
    case TRN_PIN_WATER:
        return 4u + 1u + 4u + 4u;
    case TRN_PIN_INSTANCES:
        return 0u;
    case TRN_PIN_KIND_COUNT:
        break;
    }
    return 4u;
}

void trn_node_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                   trn_erosion_quality quality, const trn_water_load *water_in,
                   trn_node_work_info *out)
{
    memset(out, 0, sizeof *out);
    if (water_in) out->water_in = *water_in;
    bool water_output = false;
    for (uint32_t k = 0; k < t->output_count; k++)
        water_output = water_output || t->outputs[k].kind == TRN_PIN_WATER;
    if (water_output) out->water_out = out->water_in;
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    const trn_node_module *m = trn_node_module_of(t);
    if (m->work) {
        m->work(n, t, recipe, quality, out);
    } else {
        out->work = samples;
        snprintf(out->detail, sizeof out->detail, "%" PRIu64 " samples", samples);
    }
    uint64_t per_sample = 0;
    for (uint32_t k = 0; k < t->output_count; k++)
        per_sample += pin_bytes_per_sample(t->outputs[k].kind);
    out->memory = trn_sat_add(trn_sat_mul(samples, per_sample), out->water_out.bytes);
    if (!(out->seconds > 0.0)) out->seconds = (double)out->work * trn_work_unit_ns(t->name) * 1e-9;
}

void trn_node_key_params(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality)
{
    /* Every declared parameter in registry order with its effective value. */
    for (uint32_t k = 0; k < t->param_count; k++) {
        const trn_param_spec *s = &t->params[k];
        trn_key_str(h, s->name);
        const trn_graph_param *p = trn_graph_node_param(n, s->name);
        switch (s->type) {
        case TRN_PARAM_NUMBER:
        case TRN_PARAM_INTEGER:
            if (p && p->type == TRN_VALUE_STRING && trn_graph_keyword_in(s->keywords, p->text))
                trn_key_str(h, p->text); /* a word in place of the number */
            else if (s->optional && !(p && p->type == TRN_VALUE_NUMBER))
                trn_key_str(h, NULL);
            else
                trn_key_f64(h, trn_graph_param_number(n, t, s->name));
            break;
        case TRN_PARAM_STRING:
        case TRN_PARAM_CHOICE:
            trn_key_str(h, trn_graph_param_text(n, t, s->name));
            break;
        case TRN_PARAM_POINTS:
        case TRN_PARAM_POINTS3:
        case TRN_PARAM_VECTOR: {
            const uint32_t dim = s->type == TRN_PARAM_POINTS    ? 2u
                                 : s->type == TRN_PARAM_POINTS3 ? 3u
                                                                : 1u;
            uint32_t count;
            double *scratch;
            const double *pts = trn_graph_param_points_dim(n, t, s->name, dim, &count, &scratch);
            XXH64_update(h, &count, sizeof count);
            for (uint32_t q = 0; pts && q < dim * count; q++)
                trn_key_f64(h, pts[q]);
            free(scratch);
            break;
        }
        case TRN_PARAM_JSON:
            /* The value as parsed and printed back: keys sorted, compact. */
            trn_key_str(h, p && p->type == TRN_VALUE_OTHER ? p->text : NULL);
            break;
        }
    }
    const trn_node_module *m = trn_node_module_of(t);
    if (m->key) m->key(h, n, t, recipe, quality);
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
            return trn_node_fail(c, err, TRN_ERR_MISMATCH, msg);
        }
    }
    return TRN_OK;
}

trn_status trn_node_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    trn_status st = grid_check(c, r, err);
    if (st) return st;
    const trn_node_module *m = trn_node_module_of(c->type);
    if (!m->compute)
        return trn_node_fail(c, err, TRN_ERR_UNSUPPORTED, "this node type cannot be evaluated");
    return m->compute(c, r, err);
}

const char *trn_node_reach_name(trn_node_reach_kind kind)
{
    switch (kind) {
    case TRN_REACH_NONE:
        return "none";
    case TRN_REACH_POINTWISE:
        return "pointwise";
    case TRN_REACH_NEIGHBOURHOOD:
        return "neighbourhood";
    case TRN_REACH_GLOBAL:
        return "global";
    case TRN_REACH_UNDECLARED:
        break;
    }
    return "undeclared";
}
