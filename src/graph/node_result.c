/* Reference-counted node results and the arrays they share. */
#include "graph/node_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

trn_gbuf *trn_gbuf_new(size_t count, size_t elem_size)
{
    size_t bytes;
    if (!trn_mul_size(count, elem_size, &bytes)) return NULL;
    void *data = calloc(bytes ? bytes : 1u, 1);
    if (!data) return NULL;
    return trn_gbuf_wrap(data, count, elem_size);
}

trn_gbuf *trn_gbuf_wrap(void *data, size_t count, size_t elem_size)
{
    trn_gbuf *buf = malloc(sizeof *buf);
    if (!buf) {
        free(data);
        return NULL;
    }
    buf->refs = 1;
    buf->count = count;
    buf->elem_size = elem_size;
    buf->data = data;
    buf->dispose = NULL;
    return buf;
}

static void water_dispose(void *data)
{
    trn_water_dispose(data);
}

trn_gbuf *trn_gbuf_wrap_water(trn_water *water)
{
    trn_gbuf *buf = malloc(sizeof *buf);
    if (!buf) {
        trn_water_dispose(water);
        free(water);
        return NULL;
    }
    buf->refs = 1;
    buf->count = 1;
    buf->elem_size = sizeof *water;
    buf->data = water;
    buf->dispose = water_dispose;
    return buf;
}

static void instances_dispose(void *data)
{
    trn_instances_dispose(data);
}

trn_gbuf *trn_gbuf_wrap_instances(trn_instances *instances)
{
    trn_gbuf *buf = malloc(sizeof *buf);
    if (!buf) {
        trn_instances_dispose(instances);
        free(instances);
        return NULL;
    }
    buf->refs = 1;
    buf->count = 1;
    buf->elem_size = sizeof *instances;
    buf->data = instances;
    buf->dispose = instances_dispose;
    return buf;
}

trn_gbuf *trn_gbuf_retain(trn_gbuf *buf)
{
    if (buf) buf->refs++;
    return buf;
}

void trn_gbuf_release(trn_gbuf *buf)
{
    if (!buf || --buf->refs) return;
    if (buf->dispose) buf->dispose(buf->data);
    free(buf->data);
    free(buf);
}

trn_node_result *trn_node_result_new(uint64_t key, uint32_t cells_x, uint32_t cells_z,
                                     double size_x, double size_z)
{
    trn_node_result *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->refs = 1;
    r->key = key;
    r->cells_x = cells_x;
    r->cells_z = cells_z;
    r->size_x = size_x;
    r->size_z = size_z;
    for (uint32_t k = 0; k < TRN_GRAPH_MAX_OUTPUTS; k++)
        r->outputs[k].sea_level = NAN;
    return r;
}

trn_node_result *trn_node_result_retain(trn_node_result *result)
{
    if (result) result->refs++;
    return result;
}

static void gout_release(trn_gout *o)
{
    trn_gbuf_release(o->values);
    trn_gbuf_release(o->transport);
    trn_gbuf_release(o->source);
    trn_gbuf_release(o->filled);
    trn_gbuf_release(o->flow_dir);
    trn_gbuf_release(o->accumulation);
    trn_gbuf_release(o->basins);
    trn_gbuf_release(o->water);
    trn_gbuf_release(o->instances);
}

void trn_node_result_release(trn_node_result *result)
{
    if (!result || --result->refs) return;
    for (uint32_t k = 0; k < TRN_GRAPH_MAX_OUTPUTS; k++)
        gout_release(&result->outputs[k]);
    trn_gbuf_release(result->change);
    free(result);
}

void trn_gout_bind_drainage(trn_gout *out, uint32_t cells_x, uint32_t cells_z, double size_x,
                            double size_z)
{
    trn_drainage *v = &out->view;
    memset(v, 0, sizeof *v);
    v->cells_x = cells_x;
    v->cells_z = cells_z;
    v->size_x = size_x;
    v->size_z = size_z;
    v->sea_level = out->sea_level;
    v->filled = out->filled ? out->filled->data : NULL;
    v->flow_dir = out->flow_dir ? out->flow_dir->data : NULL;
    v->accumulation = out->accumulation ? out->accumulation->data : NULL;
    v->basins = out->basins ? out->basins->data : NULL;
    v->basin_count = out->basins ? out->basins->count : 0u;
}

/* What a resolved water holds: its arrays per sample and its bodies' points. */
static size_t water_bytes(const trn_water *w)
{
    size_t total = sizeof *w + (size_t)w->body_count * sizeof *w->bodies;
    for (uint32_t b = 0; b < w->body_count; b++)
        total += ((size_t)w->bodies[b].boundary_count * 2u +
                  (size_t)w->bodies[b].control_count * 3u + (size_t)w->bodies[b].path_count * 3u) *
                 sizeof(double);
    if (w->owner)
        total += ((size_t)w->cells_x + 1u) * ((size_t)w->cells_z + 1u) *
                 (sizeof *w->owner + sizeof *w->wet + sizeof *w->surface + sizeof *w->segment);
    return total;
}

static size_t buf_bytes(const trn_gbuf *b)
{
    if (b && b->dispose == water_dispose) return water_bytes(b->data);
    if (b && b->dispose == instances_dispose)
        return sizeof(trn_instances) +
               ((const trn_instances *)b->data)->count * sizeof(trn_instance);
    return b ? b->count * b->elem_size : 0u;
}

void trn_node_result_measure(trn_node_result *result)
{
    size_t total = sizeof *result + buf_bytes(result->change);
    for (uint32_t k = 0; k < result->output_count; k++) {
        const trn_gout *o = &result->outputs[k];
        /* An erosion's transport may be its change itself: counted once. */
        total += buf_bytes(o->values) +
                 (o->transport != result->change ? buf_bytes(o->transport) : 0u) +
                 buf_bytes(o->instances) +
                 buf_bytes(o->source) + buf_bytes(o->filled) +
                 buf_bytes(o->flow_dir) + buf_bytes(o->accumulation) + buf_bytes(o->basins) +
                 buf_bytes(o->water);
    }
    result->bytes = total;
}
