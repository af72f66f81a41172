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

void trn_node_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                   trn_erosion_quality quality, trn_node_work_info *out)
{
    memset(out, 0, sizeof *out);
    const trn_node_module *m = trn_node_module_of(t);
    if (m->work) {
        m->work(n, t, recipe, quality, out);
        return;
    }
    const uint64_t samples = ((uint64_t)recipe->cells_x + 1u) * ((uint64_t)recipe->cells_z + 1u);
    out->work = samples;
    snprintf(out->detail, sizeof out->detail, "%" PRIu64 " samples", samples);
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

bool trn_graph_node_reach(const trn_graph_node *n, const trn_recipe *recipe, trn_node_reach *out)
{
    memset(out, 0, sizeof *out);
    const trn_node_type *t = n ? trn_node_type_find(n->type) : NULL;
    if (!t) return false;
    const trn_node_module *m = trn_node_module_of(t);
    if (!m->reach) return false;
    m->reach(n, t, recipe, out);
    return true;
}
