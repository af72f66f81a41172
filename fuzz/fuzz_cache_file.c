/* libFuzzer target for graph cache files: parse; on success write back byte for byte, re-read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/node_result.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static void assert_same_buf(const trn_gbuf *a, const trn_gbuf *b)
{
    FUZZ_ASSERT((a == NULL) == (b == NULL));
    if (!a) return;
    FUZZ_ASSERT(a->count == b->count && a->elem_size == b->elem_size);
    FUZZ_ASSERT(memcmp(a->data, b->data, a->count * a->elem_size) == 0);
}

/* What a parsed result must satisfy whatever the bytes were. */
static void assert_sane(const trn_node_result *r)
{
    const size_t samples = ((size_t)r->cells_x + 1u) * ((size_t)r->cells_z + 1u);
    FUZZ_ASSERT(r->refs == 1 && r->cells_x > 0 && r->cells_z > 0);
    FUZZ_ASSERT(r->output_count <= TRN_GRAPH_MAX_OUTPUTS && r->bytes > 0);
    for (uint32_t k = 0; k < r->output_count; k++) {
        const trn_gout *o = &r->outputs[k];
        FUZZ_ASSERT(!o->transport || ((o->kind == TRN_PIN_HEIGHTFIELD ||
                                       o->kind == TRN_PIN_DRAINAGE) &&
                                      o->transport->count == samples));
        if (o->kind == TRN_PIN_WATER) {
            FUZZ_ASSERT(o->water && !o->values);
            continue;
        }
        if (o->kind == TRN_PIN_INSTANCES) {
            const trn_instances *in = o->instances ? o->instances->data : NULL;
            FUZZ_ASSERT(in && !o->values);
            for (size_t i = 0; i < in->count; i++) {
                const trn_instance *v = &in->items[i], *p = i ? &in->items[i - 1] : NULL;
                FUZZ_ASSERT(isfinite(v->x) && isfinite(v->y) && isfinite(v->z));
                FUZZ_ASSERT(!p || v->rule > p->rule ||
                            (v->rule == p->rule &&
                             (v->cz > p->cz || (v->cz == p->cz && v->cx > p->cx))));
            }
            continue;
        }
        if (o->kind != TRN_PIN_DRAINAGE) {
            FUZZ_ASSERT(o->kind == TRN_PIN_HEIGHTFIELD || o->kind == TRN_PIN_MASK);
            FUZZ_ASSERT(o->values && o->values->count == samples && !o->filled);
            continue;
        }
        FUZZ_ASSERT(!o->values && o->source && o->filled && o->flow_dir && o->accumulation);
        FUZZ_ASSERT(o->basins && o->view.basin_count == o->basins->count);
        FUZZ_ASSERT(o->view.filled == o->filled->data && o->view.cells_x == r->cells_x);
        const uint8_t *dirs = o->flow_dir->data;
        for (size_t i = 0; i < samples; i++)
            FUZZ_ASSERT(dirs[i] <= TRN_DRAIN_OUTLET);
        const trn_basin *b = o->basins->data;
        for (size_t i = 0; i < o->basins->count; i++) {
            FUZZ_ASSERT(b[i].sink_i <= r->cells_x && b[i].sink_j <= r->cells_z);
            FUZZ_ASSERT(b[i].spill_i <= r->cells_x && b[i].spill_j <= r->cells_z);
            FUZZ_ASSERT(i == 0 || b[i].id > b[i - 1].id);
        }
    }
    FUZZ_ASSERT(!r->change || r->change->count == samples);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_cache_file_limits lim;
    trn_cache_file_limits_default(&lim);
    trn_node_result *r = NULL;
    trn_error e;
    if (trn_node_result_parse(data, size, "fuzz.tnc", 0, &lim, &r, &e) != TRN_OK) {
        /* A failure returns nothing and says where. */
        FUZZ_ASSERT(r == NULL);
        FUZZ_ASSERT(e.code != TRN_OK && e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        return 0;
    }
    assert_sane(r);

    /* The format has one spelling per result: writing it back gives the input's bytes. */
    uint8_t *out = NULL;
    size_t out_size = 0;
    FUZZ_ASSERT(trn_node_result_serialize(r, &out, &out_size, &e) == TRN_OK);
    FUZZ_ASSERT(out_size == size && memcmp(out, data, size) == 0);

    trn_node_result *back = NULL;
    FUZZ_ASSERT(trn_node_result_parse(out, out_size, NULL, r->key, &lim, &back, &e) == TRN_OK);
    FUZZ_ASSERT(back->key == r->key && back->cells_x == r->cells_x && back->cells_z == r->cells_z);
    FUZZ_ASSERT(memcmp(&back->size_x, &r->size_x, sizeof r->size_x) == 0);
    FUZZ_ASSERT(memcmp(&back->size_z, &r->size_z, sizeof r->size_z) == 0);
    FUZZ_ASSERT(memcmp(&back->cpu_seconds, &r->cpu_seconds, sizeof r->cpu_seconds) == 0);
    FUZZ_ASSERT(back->has_ledger == r->has_ledger && back->biome_rules == r->biome_rules);
    FUZZ_ASSERT(memcmp(&back->ledger, &r->ledger, sizeof r->ledger) == 0);
    FUZZ_ASSERT(back->output_count == r->output_count && back->bytes == r->bytes);
    for (uint32_t k = 0; k < r->output_count; k++) {
        const trn_gout *a = &r->outputs[k], *b = &back->outputs[k];
        FUZZ_ASSERT(a->kind == b->kind);
        assert_same_buf(a->values, b->values);
        assert_same_buf(a->source, b->source);
        assert_same_buf(a->filled, b->filled);
        assert_same_buf(a->flow_dir, b->flow_dir);
        assert_same_buf(a->accumulation, b->accumulation);
        assert_same_buf(a->basins, b->basins);
        assert_same_buf(a->transport, b->transport);
        const trn_instances *ia = a->instances ? a->instances->data : NULL,
                            *ib = b->instances ? b->instances->data : NULL;
        FUZZ_ASSERT((ia == NULL) == (ib == NULL) && (!ia || ia->count == ib->count));
        for (size_t i = 0; ia && i < ia->count; i++) {
            const trn_instance *x = &ia->items[i], *y = &ib->items[i];
            FUZZ_ASSERT(x->rule == y->rule && x->cx == y->cx && x->cz == y->cz);
            FUZZ_ASSERT(memcmp(&x->x, &y->x, 8) == 0 && memcmp(&x->y, &y->y, 8) == 0 &&
                        memcmp(&x->z, &y->z, 8) == 0 && memcmp(&x->yaw, &y->yaw, 8) == 0 &&
                        memcmp(&x->scale, &y->scale, 8) == 0);
        }
        FUZZ_ASSERT(memcmp(&a->sea_level, &b->sea_level, sizeof a->sea_level) == 0);
    }
    assert_same_buf(r->change, back->change);

    trn_node_result_release(back);
    free(out);
    trn_node_result_release(r);
    return 0;
}
