/* Fuzz the terrain.dat reader (parse, walk, convert to a heightfield, re-encode exactly) and,
 * for inputs that start like a ZIP, the .save reader (CRC, links, duplicate names). */
#include <stdlib.h>
#include <string.h>

#include "terrane/stationeers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A .save from memory: a failure leaves nothing and says why; an entry that comes out is
 * parsed like any terrain.dat. */
static int fuzz_save(const uint8_t *data, size_t size)
{
    uint8_t *dat;
    size_t dat_size;
    trn_error err;
    trn_status st = trn_stationeers_save_extract_memory(data, size, "fuzz.save", 1u << 20, &dat,
                                                        &dat_size, &err);
    if (st != TRN_OK) {
        if (dat || dat_size || err.code != st || !err.message[0]) abort();
        return 0;
    }
    trn_stationeers_terrain t;
    if (trn_stationeers_parse(dat, dat_size, "fuzz.save:terrain.dat", NULL, &t, &err) == TRN_OK)
        trn_stationeers_dispose(&t);
    free(dat);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= 2 && data[0] == 'P' && data[1] == 'K') return fuzz_save(data, size);
    trn_stationeers_limits limits;
    trn_stationeers_limits_default(&limits);
    limits.max_depth = 8; /* keeps the heightfield small */
    limits.max_nodes = 1u << 20;
    /* Both modes: unknown flag and type bits refused, or kept (then re-encoded verbatim). */
    limits.accept_unknown_bits = size % 2 == 1;
    /* And a sample limit that refuses MaxDepth 6 and deeper at the header, or none. */
    limits.max_samples = size % 3 == 0 ? (uint64_t)1 << 10 : 0;
    trn_stationeers_terrain t;
    trn_error err;
    trn_status st = trn_stationeers_parse(data, size, "fuzz.dat", &limits, &t, &err);
    if (st != TRN_OK) {
        /* A failure leaves nothing behind and always says where. */
        if (t.nodes || t.node_count || t.veins || err.code != st) abort();
        if (st != TRN_ERR_NO_MEMORY && (err.offset < 0 || (uint64_t)err.offset > size)) abort();
        return 0;
    }
    if (limits.max_samples && ((uint64_t)1 << (2 * t.max_depth)) > limits.max_samples) abort();
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
        /* What the field loses: voxels within the world, columns no more than voxels. */
        const uint64_t columns = (uint64_t)side * side;
        if (rep.cave_voxels + rep.buried_voxels + rep.floating_voxels > columns * side ||
            rep.cave_columns > columns || rep.buried_columns > columns ||
            rep.floating_columns > columns || rep.cave_columns > rep.cave_voxels ||
            rep.buried_columns > rep.buried_voxels || rep.floating_columns > rep.floating_voxels)
            abort();
        float lo, hi;
        trn_field_range(&f, &lo, &hi);
        if (lo < 0 || hi > (float)side + 1.0f) abort();
        trn_field_dispose(&f);
    }
    trn_stationeers_dispose(&t);
    return 0;
}
