/* Fuzz the terrain.dat reader: parse, walk, convert to a heightfield, and re-encode exactly. */
#include <stdlib.h>
#include <string.h>

#include "terrane/stationeers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_stationeers_limits limits;
    trn_stationeers_limits_default(&limits);
    limits.max_depth = 8; /* keeps the heightfield small */
    limits.max_nodes = 1u << 20;
    /* Both modes: unknown flag and type bits refused, or kept (then re-encoded verbatim). */
    limits.accept_unknown_bits = size % 2 == 1;
    trn_stationeers_terrain t;
    trn_error err;
    trn_status st = trn_stationeers_parse(data, size, "fuzz.dat", &limits, &t, &err);
    if (st != TRN_OK) {
        /* A failure leaves nothing behind and always says where. */
        if (t.nodes || t.node_count || t.veins || err.code != st) abort();
        if (st != TRN_ERR_NO_MEMORY && (err.offset < 0 || (uint64_t)err.offset > size)) abort();
        return 0;
    }
    if (t.node_count != t.branch_count + t.leaf_count || t.leaf_count != 7 * t.branch_count + 1)
        abort();
    if (t.nodes_size != t.branch_count + 3 * t.leaf_count) abort();

    /* The walk visits every node once, each inside the world and its parent. */
    trn_stationeers_iter it;
    trn_stationeers_iter_init(&it, &t);
    trn_stationeers_node n;
    uint64_t count = 0;
    double volume = 0;
    uint32_t side = 1u << t.max_depth;
    while (trn_stationeers_iter_next(&it, &n)) {
        if (n.size == 0 || n.x % n.size || n.y % n.size || n.z % n.size || n.x + n.size > side ||
            n.y + n.size > side || n.z + n.size > side || n.depth > t.max_depth)
            abort();
        if (n.flags & TRN_STATIONEERS_LEAF) volume += (double)n.size * n.size * n.size;
        count++;
    }
    if (count != t.node_count || volume != (double)side * side * side) abort();

    /* Re-encoding gives the input back byte for byte. */
    uint8_t *enc;
    size_t enc_size;
    if (trn_stationeers_encode(&t, &enc, &enc_size, &err) != TRN_OK) abort();
    if (enc_size != size || memcmp(enc, data, size) != 0) abort();
    free(enc);

    if (t.max_depth >= 1) {
        trn_field f;
        trn_stationeers_field_report rep;
        if (trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, &err) != TRN_OK) abort();
        if (f.cells_x != side - 1 || rep.empty_columns > (uint64_t)side * side) abort();
        float lo, hi;
        trn_field_range(&f, &lo, &hi);
        if (lo < 0 || hi > (float)side + 1.0f) abort();
        trn_field_dispose(&f);
    }
    trn_stationeers_dispose(&t);
    return 0;
}
