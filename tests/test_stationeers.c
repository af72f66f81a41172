/* Stationeers terrain.dat: byte-exact round trips, every rejection with its offset, heightfield
 * conversions and .save archives built here with libzip. */
#include <math.h>
#include <stdlib.h>

#include <zip.h>
#include <zlib.h>

#include "terrane/stationeers.h"
#include "test.h"

/* ---- a tiny byte builder for hand-made files ---- */
typedef struct bytes {
    uint8_t data[1 << 16];
    size_t size;
} bytes;

static void put8(bytes *b, uint8_t v)
{
    b->data[b->size++] = v;
}
static void put16(bytes *b, int16_t v)
{
    put8(b, (uint8_t)((uint16_t)v & 0xff));
    put8(b, (uint8_t)((uint16_t)v >> 8));
}
static void put32(bytes *b, int32_t v)
{
    for (int k = 0; k < 4; k++)
        put8(b, (uint8_t)((uint32_t)v >> (8 * k)));
}
static void leaf(bytes *b, uint8_t flags, uint8_t density, uint8_t type)
{
    put8(b, (uint8_t)(flags | 1u));
    put8(b, density);
    put8(b, type);
}
static void vein(bytes *b, int16_t base, int32_t hash, uint8_t minables)
{
    for (int k = 0; k < 6; k++)
        put16(b, (int16_t)(base + k));
    put32(b, hash);
    put8(b, minables);
    for (uint8_t m = 0; m < minables; m++) {
        put8(b, (uint8_t)(m + 1));
        put8(b, (uint8_t)(m + 2));
        put8(b, (uint8_t)(m + 3));
        put8(b, m);
        put8(b, (uint8_t)(m & 1));
    }
}

/* MaxDepth 2: root branch (modified) -> child 0 leaf, child 1 branch of 8 voxels (some
 * modified), children 2..7 leaves; then veins. Offsets noted for the truncation checks. */
static size_t off_inner_branch, off_inner_leaf3, off_veins, off_vein1, off_vein1_minable2;
static void sample_file(bytes *b, bool with_veins)
{
    b->size = 0;
    put32(b, 2);
    put8(b, TRN_STATIONEERS_MODIFIED); /* root branch */
    leaf(b, 0, 255, TRN_STATIONEERS_TYPE_DIRT);
    off_inner_branch = b->size;
    put8(b, 0);
    for (uint8_t k = 0; k < 8; k++) {
        if (k == 3) off_inner_leaf3 = b->size;
        leaf(b, k % 3 == 0 ? TRN_STATIONEERS_MODIFIED : 0, (uint8_t)(k * 30),
             k < 4 ? TRN_STATIONEERS_TYPE_CRUST : TRN_STATIONEERS_TYPE_BEDROCK);
    }
    for (uint8_t k = 2; k < 8; k++)
        leaf(b, 0, 0, TRN_STATIONEERS_TYPE_NONE);
    off_veins = b->size;
    if (!with_veins) {
        put32(b, 0);
        return;
    }
    put32(b, 2);
    vein(b, -5, 0x12345678, 0);
    off_vein1 = b->size;
    vein(b, 300, -77, 3);
    off_vein1_minable2 = off_vein1 + 17 + 2 * 5;
}

static void check_reencode(const trn_stationeers_terrain *t, const bytes *b)
{
    uint8_t *enc;
    size_t n;
    CHECK_OK(trn_stationeers_encode(t, &enc, &n, NULL));
    CHECK_EQ_INT(n, b->size);
    CHECK(n == b->size && memcmp(enc, b->data, n) == 0);
    free(enc);
}

static void test_round_trip_small(void)
{
    static bytes b;
    for (int with = 0; with < 2; with++) {
        sample_file(&b, with != 0);
        trn_stationeers_terrain t;
        trn_error e;
        CHECK_OK(trn_stationeers_parse(b.data, b.size, "t.dat", NULL, &t, &e));
        CHECK_EQ_INT(t.max_depth, 2);
        CHECK_EQ_INT(t.node_count, 17);
        CHECK_EQ_INT(t.branch_count, 2);
        CHECK_EQ_INT(t.leaf_count, 15);
        CHECK_EQ_INT(t.nodes_size, 2 + 15 * 3);
        CHECK_EQ_INT(t.vein_count, with ? 2 : 0);
        check_reencode(&t, &b);
        if (with) {
            CHECK_EQ_INT(t.minable_count, 3);
            CHECK_EQ_INT(t.veins[0].world_position[0], -5);
            CHECK_EQ_INT(t.veins[0].cluster_position[2], 0);
            CHECK_EQ_INT(t.veins[0].id_hash, 0x12345678);
            CHECK_EQ_INT(t.veins[1].id_hash, -77);
            CHECK_EQ_INT(t.veins[1].cluster_position[0], 303);
            CHECK_EQ_INT(t.veins[1].first_minable, 0);
            CHECK_EQ_INT(t.minables[2].x, 3);
            CHECK_EQ_INT(t.minables[2].parent_index, 2);
            CHECK_EQ_INT(t.minables[1].is_active, 1);
        }
        /* Positions follow the seed's child order: bit 0 x, bit 1 y, bit 2 z. */
        trn_stationeers_iter it;
        trn_stationeers_iter_init(&it, &t);
        trn_stationeers_node n;
        int count = 0;
        while (trn_stationeers_iter_next(&it, &n)) {
            if (count == 0) CHECK(n.depth == 0 && n.size == 4 && !(n.flags & 1));
            if (count == 2) CHECK(n.depth == 1 && n.x == 2 && n.y == 0 && n.z == 0);
            if (count == 3 + 6) /* inner child 6: x low, y high, z high inside (2, 0, 0) */
                CHECK(n.depth == 2 && n.x == 2 && n.y == 1 && n.z == 1 && n.size == 1 &&
                      n.density == 180 && n.child_index == 6);
            if (count == 11) /* root child 2 */
                CHECK(n.depth == 1 && n.x == 0 && n.y == 2 && n.z == 0 && n.size == 2);
            if (count == 16) CHECK(n.x == 2 && n.y == 2 && n.z == 2 && n.offset == off_veins - 3);
            count++;
        }
        CHECK_EQ_INT(count, 17);
        trn_stationeers_stats s;
        trn_stationeers_stats_compute(&t, &s);
        CHECK_EQ_INT(s.branches, 2);
        CHECK_EQ_INT(s.leaves, 15);
        CHECK_EQ_INT(s.modified_branches, 1);
        CHECK_EQ_INT(s.modified_leaves, 3); /* inner 0, 3, 6 */
        CHECK_EQ_INT(s.density_leaves[0], 7);
        CHECK_EQ_INT(s.density_leaves[255], 1);
        CHECK_EQ_INT(s.type_leaves[TRN_STATIONEERS_TYPE_CRUST], 4);
        CHECK_EQ_INT(s.type_leaves[TRN_STATIONEERS_TYPE_BEDROCK], 4);
        CHECK_EQ_INT(s.leaves_by_depth[2], 8);
        CHECK(s.solid_voxels == 8.0 + 3.0); /* the 2^3 leaf, inner densities 150 180 210 */
        CHECK_EQ_INT(s.active_minables, with ? 1 : 0);
        trn_stationeers_dispose(&t);
        trn_stationeers_dispose(&t); /* twice is harmless */
    }
    trn_stationeers_dispose(NULL);
}

/* A MaxDepth-12 tree with one path to the far corner voxel, and a single-leaf world. */
static void test_deep_and_shallow(void)
{
    static bytes b;
    b.size = 0;
    put32(&b, 12);
    for (int d = 0; d < 12; d++) {
        put8(&b, d % 2 ? TRN_STATIONEERS_MODIFIED : 0);
        for (int k = 0; k < 7; k++)
            leaf(&b, 0, (uint8_t)k, (uint8_t)(k & 15));
    }
    leaf(&b, TRN_STATIONEERS_MODIFIED, 200, TRN_STATIONEERS_TYPE_MACRO);
    put32(&b, 0);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "deep.dat", NULL, &t, NULL));
    CHECK_EQ_INT(t.node_count, 1 + 12 * 8);
    check_reencode(&t, &b);
    trn_stationeers_iter it;
    trn_stationeers_iter_init(&it, &t);
    trn_stationeers_node n, last = {0};
    while (trn_stationeers_iter_next(&it, &n))
        last = n;
    CHECK(last.depth == 12 && last.x == 4095 && last.y == 4095 && last.z == 4095 &&
          last.size == 1 && last.density == 200 && last.type == TRN_STATIONEERS_TYPE_MACRO);
    trn_stationeers_dispose(&t);

    b.size = 0;
    put32(&b, 0);
    leaf(&b, 0, 255, TRN_STATIONEERS_TYPE_BEDROCK);
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "one.dat", NULL, &t, NULL));
    CHECK_EQ_INT(t.leaf_count, 1);
    check_reencode(&t, &b);
    trn_stationeers_dispose(&t);
}

static void test_truncations(void)
{
    static bytes b;
    sample_file(&b, true);
    trn_stationeers_terrain t;
    trn_error e;
    /* Every cut is a truncation at or before the cut, never past it. */
    for (size_t cut = 0; cut < b.size; cut++) {
        trn_status st = trn_stationeers_parse(b.data, cut, "cut.dat", NULL, &t, &e);
        CHECK_EQ_INT(st, TRN_ERR_TRUNCATED);
        CHECK(e.offset >= 0 && (size_t)e.offset <= cut);
        CHECK(t.nodes == NULL && t.node_count == 0);
        CHECK_CONTAINS(e.file, "cut.dat");
    }
    /* Named places. */
    CHECK_STATUS(trn_stationeers_parse(b.data, 2, "c.dat", NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.message, "MaxDepth");
    CHECK_STATUS(trn_stationeers_parse(b.data, 4, "c.dat", NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 4);
    CHECK_CONTAINS(e.message, "terrain.dat truncated after MaxDepth at offset 4");
    CHECK_CONTAINS(e.message, "root node (depth 0)");
    /* Later nodes are named by their path, not as a cut header. */
    CHECK_STATUS(trn_stationeers_parse(b.data, 5, "c.dat", NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 5);
    CHECK_CONTAINS(e.message, "node at depth 1 (path 0)");
    CHECK_STATUS(trn_stationeers_parse(b.data, off_inner_leaf3 + 2, "c.dat", NULL, &t, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_inner_leaf3 + 1);
    CHECK_CONTAINS(e.message, "node at depth 2 (path 1/3) (leaf)");
    CHECK_STATUS(trn_stationeers_parse(b.data, off_inner_branch, "c.dat", NULL, &t, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_inner_branch);
    CHECK_CONTAINS(e.message, "node at depth 1 (path 1)");
    CHECK_STATUS(trn_stationeers_parse(b.data, off_veins + 3, "c.dat", NULL, &t, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_veins);
    CHECK_CONTAINS(e.message, "vein count");
    CHECK_STATUS(trn_stationeers_parse(b.data, off_vein1 + 16, "c.dat", NULL, &t, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_vein1);
    CHECK_CONTAINS(e.message, "vein 1 of 2");
    CHECK_STATUS(trn_stationeers_parse(b.data, off_vein1_minable2 + 4, "c.dat", NULL, &t, &e),
                 TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_vein1_minable2);
    CHECK_CONTAINS(e.message, "vein 1, minable 2 of 3");
    CHECK_STATUS(trn_stationeers_parse(NULL, 0, "c.dat", NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 0);
}

static void test_rejections(void)
{
    static bytes b;
    trn_stationeers_terrain t;
    trn_error e;
    sample_file(&b, false);
    /* Trailing bytes. */
    b.data[b.size] = 0x42;
    CHECK_STATUS(trn_stationeers_parse(b.data, b.size + 1, "x.dat", NULL, &t, &e),
                 TRN_ERR_TRAILING_DATA);
    CHECK_EQ_INT(e.offset, b.size);
    CHECK_CONTAINS(e.message, "1 bytes after the vein section");

    /* Absurd and over-limit MaxDepth. */
    const int32_t absurd[] = {-1, 25, 1000000, INT32_MIN};
    for (size_t k = 0; k < sizeof absurd / sizeof absurd[0]; k++) {
        bytes h = {{0}, 0};
        put32(&h, absurd[k]);
        leaf(&h, 0, 0, 0);
        put32(&h, 0);
        CHECK_STATUS(trn_stationeers_parse(h.data, h.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
        CHECK_EQ_INT(e.offset, 0);
        CHECK_CONTAINS(e.message, "not a terrain depth");
    }
    bytes h = {{0}, 0};
    put32(&h, 15);
    leaf(&h, 0, 0, 0);
    put32(&h, 0);
    CHECK_STATUS(trn_stationeers_parse(h.data, h.size, "x.dat", NULL, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 0);
    trn_stationeers_limits lim;
    trn_stationeers_limits_default(&lim);
    lim.max_depth = 1;
    CHECK_STATUS(trn_stationeers_parse(b.data, b.size, "x.dat", &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "MaxDepth 2");

    /* Node limit: the 6th node is refused at its offset. */
    trn_stationeers_limits_default(&lim);
    lim.max_nodes = 5;
    CHECK_STATUS(trn_stationeers_parse(b.data, b.size, "x.dat", &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, off_inner_branch + 1 + 2 * 3); /* root, leaf, branch, 3 leaves */

    /* A branch at depth MaxDepth: inner child 3 becomes a branch. */
    static bytes c;
    c = b;
    c.data[off_inner_leaf3] = 0x00;
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, off_inner_leaf3);
    CHECK_CONTAINS(e.message, "must be a leaf");

    /* Unknown flag and type bits; kept verbatim when accepted. */
    c = b;
    c.data[off_inner_leaf3] = 0x05;
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, off_inner_leaf3);
    CHECK_CONTAINS(e.message, "flags 0x05");
    c.data[off_inner_leaf3] = 0x01;
    c.data[off_inner_leaf3 + 2] = 0x30;
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, off_inner_leaf3 + 2);
    CHECK_CONTAINS(e.message, "node type 0x30");
    c.data[off_inner_leaf3] = 0xf5;
    trn_stationeers_limits_default(&lim);
    lim.accept_unknown_bits = true;
    CHECK_OK(trn_stationeers_parse(c.data, c.size, "x.dat", &lim, &t, &e));
    check_reencode(&t, &c);
    trn_stationeers_dispose(&t);

    /* Vein counts: negative, over the limit, and a huge count with no bytes behind it. */
    c = b;
    c.size = off_veins;
    put32(&c, -3);
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, off_veins);
    c.size = off_veins;
    put32(&c, 2000000);
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, off_veins);
    c.size = off_veins;
    put32(&c, 1000000);
    vein(&c, 1, 2, 0);
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, off_veins + 4 + 17);
    CHECK_CONTAINS(e.message, "vein 1 of 1000000");
    trn_stationeers_limits_default(&lim);
    lim.max_veins = 1;
    sample_file(&c, true);
    CHECK_STATUS(trn_stationeers_parse(c.data, c.size, "x.dat", &lim, &t, &e), TRN_ERR_LIMIT);

    /* Sniffing. */
    CHECK(trn_stationeers_sniff(b.data, b.size));
    CHECK(!trn_stationeers_sniff(b.data, 4));
    CHECK(!trn_stationeers_sniff((const uint8_t *)"\x09\x00\x04\x00\x00", 5));
    CHECK(!trn_stationeers_sniff((const uint8_t *)"\x0c\x00\x00\x00\x07", 5));
}

/* No branch may hold eight equal leaves (from_field collapses them). */
static bool canonical(const trn_stationeers_terrain *t)
{
    trn_stationeers_iter it;
    trn_stationeers_iter_init(&it, t);
    trn_stationeers_node n;
    size_t branch_at = (size_t)-1;
    int leaves = 0;
    uint8_t first[2] = {0, 0};
    bool ok = true;
    while (trn_stationeers_iter_next(&it, &n)) {
        if (!(n.flags & 1)) {
            branch_at = n.offset;
            leaves = 0;
            continue;
        }
        if (branch_at != (size_t)-1 && n.offset == branch_at + 1 + 3 * (size_t)leaves) {
            if (leaves == 0) {
                first[0] = n.density;
                first[1] = n.type;
                leaves = 1;
            } else if (n.density == first[0] && n.type == first[1]) {
                if (++leaves == 8) ok = false;
            } else {
                branch_at = (size_t)-1;
            }
        }
    }
    return ok;
}

static void check_field_round_trip(const trn_field *f, const trn_stationeers_field_options *o,
                                   uint32_t expect_depth)
{
    trn_stationeers_terrain t;
    trn_stationeers_field_report rep;
    trn_error e;
    CHECK_OK(trn_stationeers_from_field(f, o, &t, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(t.max_depth, expect_depth);
    CHECK_EQ_INT(rep.clamped_low + rep.clamped_high, 0);
    CHECK(canonical(&t));
    /* The file it makes parses back to the same tree. */
    uint8_t *enc;
    size_t n;
    CHECK_OK(trn_stationeers_encode(&t, &enc, &n, NULL));
    trn_stationeers_terrain again;
    CHECK_OK(trn_stationeers_parse(enc, n, "gen.dat", NULL, &again, &e));
    CHECK_EQ_INT(again.node_count, t.node_count);
    CHECK_EQ_INT(again.leaf_count, t.leaf_count);
    free(enc);
    trn_stationeers_dispose(&again);

    trn_field back;
    trn_stationeers_field_report rep2;
    CHECK_OK(trn_stationeers_to_field(&t, o, &back, &rep2, NULL, NULL, &e));
    CHECK_EQ_INT(back.cells_x, (1u << expect_depth) - 1);
    CHECK_EQ_INT(rep2.empty_columns, 0);
    double worst = 0;
    size_t sx = f->cells_x + 1;
    for (uint32_t j = 0; j <= f->cells_z; j++)
        for (uint32_t i = 0; i <= f->cells_x; i++) {
            double d = fabs((double)back.heights[(size_t)j * (back.cells_x + 1) + i] -
                            (double)f->heights[(size_t)j * sx + i]);
            if (d > worst) worst = d;
        }
    /* Within half a density step (plus float rounding of the metres). */
    CHECK(worst <= o->voxel_size * (0.5 / 255.0) + 1e-4);
    if (worst > o->voxel_size * (0.5 / 255.0) + 1e-4) fprintf(stderr, "worst %g\n", worst);
    trn_field_dispose(&back);
    trn_stationeers_dispose(&t);
}

static void test_field_round_trip(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 63, 63, 63, 63, NULL));
    for (uint32_t j = 0; j < 64; j++)
        for (uint32_t i = 0; i < 64; i++)
            f.heights[j * 64 + i] =
                (float)(20.0 + 12.0 * sin(i * 0.21) * cos(j * 0.13) + 0.37 * (i % 5));
    trn_stationeers_field_options o;
    trn_stationeers_field_options_default(&o);
    check_field_round_trip(&f, &o, 6);
    o.crust_depth = 0;
    check_field_round_trip(&f, &o, 6);
    o.crust_depth = 5;
    o.bedrock_layers = 3;
    check_field_round_trip(&f, &o, 6);
    /* Half-metre voxels from -10 m: heights need 2 * 42 voxels, so MaxDepth 7. */
    trn_stationeers_field_options_default(&o);
    o.voxel_size = 0.5;
    o.base = -10;
    check_field_round_trip(&f, &o, 7);
    o.max_depth = 8;
    check_field_round_trip(&f, &o, 8);
    trn_field_dispose(&f);

    /* A flat field collapses to a handful of nodes, and its types are where they belong. */
    CHECK_OK(trn_field_init(&f, 15, 15, 15, 15, NULL));
    for (size_t k = 0; k < 256; k++)
        f.heights[k] = 8.0f;
    trn_stationeers_field_options_default(&o);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, NULL));
    CHECK_EQ_INT(t.max_depth, 4);
    /* root, 4 air leaves above y 8, and per lower octant: a branch, 4 bedrock leaves (y 0..3)
     * and 4 branches of 4 dirt (y 4, 5) and 4 crust (y 6, 7) leaves. */
    CHECK_EQ_INT(t.node_count, 1 + 4 + 4 * (1 + 4 + 4 * 9));
    CHECK(canonical(&t));
    trn_stationeers_iter it;
    trn_stationeers_iter_init(&it, &t);
    trn_stationeers_node n;
    uint64_t vox[16] = {0};
    uint8_t type_at[16] = {0}, dens_at[16] = {0};
    while (trn_stationeers_iter_next(&it, &n)) {
        if (!(n.flags & 1)) continue;
        CHECK_EQ_INT(n.flags, 1); /* never marked modified */
        for (uint32_t y = n.y; y < n.y + n.size; y++) {
            vox[y] += (uint64_t)n.size * n.size;
            type_at[y] = n.type;
            dens_at[y] = n.density;
        }
    }
    for (int y = 0; y < 16; y++)
        CHECK_EQ_INT(vox[y], 256);
    CHECK_EQ_INT(type_at[0], TRN_STATIONEERS_TYPE_BEDROCK);
    CHECK_EQ_INT(type_at[3], TRN_STATIONEERS_TYPE_BEDROCK);
    CHECK_EQ_INT(type_at[4], TRN_STATIONEERS_TYPE_DIRT);
    CHECK_EQ_INT(type_at[5], TRN_STATIONEERS_TYPE_DIRT);
    CHECK_EQ_INT(type_at[6], TRN_STATIONEERS_TYPE_CRUST);
    CHECK_EQ_INT(type_at[7], TRN_STATIONEERS_TYPE_CRUST);
    CHECK_EQ_INT(dens_at[7], 255);
    CHECK_EQ_INT(type_at[8], TRN_STATIONEERS_TYPE_NONE);
    CHECK_EQ_INT(dens_at[8], 0);
    trn_field back;
    CHECK_OK(trn_stationeers_to_field(&t, &o, &back, NULL, NULL, NULL, NULL));
    CHECK(back.heights[0] == 8.0f && back.heights[255] == 8.0f);
    trn_field_dispose(&back);
    trn_stationeers_dispose(&t);

    /* Clamps, edge extension and sizes that do not fit. */
    f.heights[3] = -5.0f;
    f.heights[4] = 100.0f;
    f.heights[5] = NAN;
    o.max_depth = 5;
    trn_stationeers_field_report rep;
    CHECK_OK(trn_stationeers_from_field(&f, &o, &t, &rep, NULL, NULL, NULL));
    CHECK_EQ_INT(rep.clamped_low, 2);
    CHECK_EQ_INT(rep.clamped_high, 1);
    CHECK_EQ_INT(rep.extended, 32 * 32 - 16 * 16);
    CHECK_OK(trn_stationeers_to_field(&t, &o, &back, NULL, NULL, NULL, NULL));
    CHECK(back.heights[3] == 4.0f && back.heights[4] == 32.0f && back.heights[5] == 4.0f);
    CHECK(back.heights[31] == 8.0f && back.heights[32 * 31 + 20] == 8.0f); /* extended */
    trn_field_dispose(&back);
    trn_stationeers_dispose(&t);
    o.max_depth = 3;
    trn_error e;
    CHECK_STATUS(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, &e), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(e.message, "16 x 16 samples do not fit the 8 x 8 columns");
    o.max_depth = 0;
    o.voxel_size = 0;
    CHECK_STATUS(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

/* Hand-made columns pin the reading rule: solid is density >= 128, the surface sits in the
 * partial voxel right above the top solid one, or else inside the top solid voxel. */
static void test_to_field_rule(void)
{
    static bytes b;
    b.size = 0;
    put32(&b, 1);
    put8(&b, 0);
    leaf(&b, 0, 255, 2); /* 0: (0,0,0) */
    leaf(&b, 0, 200, 2); /* 1: (1,0,0) */
    leaf(&b, 0, 100, 1); /* 2: (0,1,0) above child 0 */
    leaf(&b, 0, 0, 0);   /* 3: (1,1,0) */
    leaf(&b, 0, 50, 1);  /* 4: (0,0,1) partial, no solid below */
    leaf(&b, 0, 0, 0);   /* 5: (1,0,1) */
    leaf(&b, 0, 0, 0);   /* 6: (0,1,1) */
    leaf(&b, 0, 255, 8); /* 7: (1,1,1) floating solid */
    put32(&b, 0);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "r.dat", NULL, &t, NULL));
    trn_field f;
    trn_stationeers_field_report rep;
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
    CHECK_EQ_INT(f.cells_x, 1);
    CHECK(fabsf(f.heights[0] - (float)(1.0 + 100.0 / 255.0)) < 1e-6f);
    CHECK(fabsf(f.heights[1] - (float)(200.0 / 255.0)) < 1e-6f);
    CHECK(fabsf(f.heights[2] - (float)(50.0 / 255.0)) < 1e-6f);
    CHECK(f.heights[3] == 2.0f);
    CHECK_EQ_INT(rep.empty_columns, 0);
    /* Column (1, 1) is air under a full voxel: an overhang the field cannot hold. */
    CHECK_EQ_INT(rep.cave_voxels, 1);
    CHECK_EQ_INT(rep.cave_columns, 1);
    CHECK_EQ_INT(rep.buried_voxels, 0);
    CHECK_EQ_INT(rep.floating_voxels, 0);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);

    /* A stray partial voxel floating above the ground (the second walk finds what is right
     * above the top solid voxel), and a partial 2^3 leaf resting on solid ground. */
    b.size = 0;
    put32(&b, 2);
    put8(&b, 0);         /* root */
    put8(&b, 0);         /* child 0: (0..1, 0..1, 0..1) */
    leaf(&b, 0, 255, 2); /* (0, 0, 0) solid */
    leaf(&b, 0, 0, 0);
    leaf(&b, 0, 60, 1); /* (0, 1, 0) right above it */
    for (int k = 3; k < 8; k++)
        leaf(&b, 0, 0, 0);
    leaf(&b, 0, 255, 2); /* child 1: (2..3, 0..1, 0..1) solid block */
    put8(&b, 0);         /* child 2: (0..1, 2..3, 0..1) */
    leaf(&b, 0, 0, 0);
    leaf(&b, 0, 0, 0);
    leaf(&b, 0, 30, 1); /* (0, 3, 0) floating */
    for (int k = 3; k < 8; k++)
        leaf(&b, 0, 0, 0);
    leaf(&b, 0, 90, 1); /* child 3: (2..3, 2..3, 0..1) partial block on the solid one */
    for (int k = 4; k < 8; k++)
        leaf(&b, 0, 0, 0);
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "s.dat", NULL, &t, NULL));
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
    CHECK(fabsf(f.heights[0] - (float)(1.0 + 60.0 / 255.0)) < 1e-6f);
    CHECK(f.heights[1] == 0.0f); /* (1, 0) holds nothing */
    CHECK(fabsf(f.heights[2] - (float)(2.0 + 90.0 / 255.0)) < 1e-6f);
    CHECK(fabsf(f.heights[4 + 3] - (float)(2.0 + 90.0 / 255.0)) < 1e-6f);
    CHECK_EQ_INT(rep.empty_columns, 8 + 3); /* z = 2, 3 and (1, 0), (0, 1), (1, 1) */
    /* Above the surface: (0, 3, 0) and the top row of the partial block (4 columns). */
    CHECK_EQ_INT(rep.floating_voxels, 5);
    CHECK_EQ_INT(rep.floating_columns, 5);
    CHECK_EQ_INT(rep.cave_voxels, 0);
    CHECK_EQ_INT(rep.buried_voxels, 0);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);

    b.size = 0;
    put32(&b, 3);
    leaf(&b, 0, 0, 0);
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "air.dat", NULL, &t, NULL));
    trn_stationeers_field_options o;
    trn_stationeers_field_options_default(&o);
    o.base = -3;
    CHECK_OK(trn_stationeers_to_field(&t, &o, &f, &rep, NULL, NULL, NULL));
    CHECK_EQ_INT(rep.empty_columns, 64);
    CHECK(f.heights[0] == -3.0f);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);
}

/* What a heightfield loses, counted exactly: every kind of voxel that differs from "full below
 * the surface voxel, air above it", and nothing for a tree built from a heightfield. */
static void test_losses(void)
{
    static bytes b;
    /* MaxDepth 1, one voxel per child: (0, z=0) air under full: a cave; (1, 0) full under a
     * partial top: nothing; (0, 1) 200 under a partial top 100: a buried partial voxel; (1, 1)
     * air under a floating 40. */
    b.size = 0;
    put32(&b, 1);
    put8(&b, 0);
    leaf(&b, 0, 0, 0);   /* 0: (0,0,0) */
    leaf(&b, 0, 255, 2); /* 1: (1,0,0) */
    leaf(&b, 0, 255, 1); /* 2: (0,1,0) */
    leaf(&b, 0, 50, 1);  /* 3: (1,1,0) */
    leaf(&b, 0, 200, 2); /* 4: (0,0,1) */
    leaf(&b, 0, 0, 0);   /* 5: (1,0,1) */
    leaf(&b, 0, 100, 1); /* 6: (0,1,1) */
    leaf(&b, 0, 40, 1);  /* 7: (1,1,1) */
    put32(&b, 0);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "l.dat", NULL, &t, NULL));
    trn_field f;
    trn_stationeers_field_report rep;
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
    CHECK_EQ_INT(rep.cave_voxels, 1);
    CHECK_EQ_INT(rep.cave_columns, 1);
    CHECK_EQ_INT(rep.buried_voxels, 1);
    CHECK_EQ_INT(rep.buried_columns, 1);
    CHECK_EQ_INT(rep.floating_voxels, 1);
    CHECK_EQ_INT(rep.floating_columns, 1);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);

    /* The sample: (2, 0) holds 60 above nothing solid, (3, 0) 90 above its partial surface
     * voxel 30, (2, 1) 120 (not solid) under the top 180, (3, 1) 150 (solid, not full) under
     * the top 210. */
    sample_file(&b, true);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "s.dat", NULL, &t, NULL));
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
    CHECK_EQ_INT(rep.cave_voxels, 1);
    CHECK_EQ_INT(rep.cave_columns, 1);
    CHECK_EQ_INT(rep.buried_voxels, 1);
    CHECK_EQ_INT(rep.buried_columns, 1);
    CHECK_EQ_INT(rep.floating_voxels, 2);
    CHECK_EQ_INT(rep.floating_columns, 2);
    CHECK_EQ_INT(rep.empty_columns, 9); /* z = 2, 3 and (2, 0); (3, 0) has a partial voxel 0 */
    trn_field_dispose(&f);
    /* Without a report the losses are not counted and the field is the same. */
    trn_field g;
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &g, NULL, NULL, NULL, NULL));
    trn_field_dispose(&g);
    trn_stationeers_stats st;
    trn_stationeers_stats_compute(&t, &st);
    CHECK(st.modified_voxels == 3.0); /* inner leaves 0, 3, 6; the root branch holds none */
    CHECK(st.type_voxels[TRN_STATIONEERS_TYPE_DIRT] == 8.0);
    CHECK(st.type_voxels[TRN_STATIONEERS_TYPE_CRUST] == 4.0);
    CHECK(st.type_voxels[TRN_STATIONEERS_TYPE_BEDROCK] == 4.0);
    CHECK(st.type_voxels[TRN_STATIONEERS_TYPE_NONE] == 48.0);
    trn_stationeers_dispose(&t);

    /* A tree built from a heightfield reads back with nothing lost but its types. */
    trn_field h;
    CHECK_OK(trn_field_init(&h, 15, 15, 15, 15, NULL));
    for (size_t k = 0; k < 16 * 16; k++)
        h.heights[k] = (float)(5.0 + (double)(k % 13) * 0.37);
    CHECK_OK(trn_stationeers_from_field(&h, NULL, &t, NULL, NULL, NULL, NULL));
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
    CHECK(rep.cave_voxels == 0 && rep.cave_columns == 0 && rep.buried_voxels == 0 &&
          rep.buried_columns == 0 && rep.floating_voxels == 0 && rep.floating_columns == 0);
    trn_field_dispose(&f);
    trn_field_dispose(&h);
    trn_stationeers_dispose(&t);
}

/* Random trees (fixed seed) against a voxel-by-voxel count of the same definition: the
 * surface voxel S is the top solid voxel t, or t + 1 when that holds some density; below S
 * everything should be full, above S air. */
static uint32_t lcg_state;
static uint32_t lcg(void)
{
    lcg_state = lcg_state * 1664525u + 1013904223u;
    return lcg_state >> 8;
}

static void random_subtree(bytes *b, uint8_t *grid, uint32_t n, uint32_t x, uint32_t y, uint32_t z,
                           uint32_t size)
{
    static const uint8_t densities[] = {0, 0, 0, 40, 127, 128, 200, 254, 255, 255, 255};
    if (size > 1 && lcg() % 3 != 0) {
        put8(b, 0);
        uint32_t h = size / 2;
        for (uint32_t k = 0; k < 8; k++)
            random_subtree(b, grid, n, x + (k & 1) * h, y + (k >> 1 & 1) * h, z + (k >> 2 & 1) * h,
                           h);
        return;
    }
    uint8_t d = densities[lcg() % sizeof densities];
    leaf(b, 0, d, 0);
    for (uint32_t zz = z; zz < z + size; zz++)
        for (uint32_t yy = y; yy < y + size; yy++)
            for (uint32_t xx = x; xx < x + size; xx++)
                grid[((size_t)zz * n + yy) * n + xx] = d;
}

static void test_losses_random(void)
{
    static bytes b;
    static uint8_t grid[16 * 16 * 16];
    lcg_state = 12345;
    for (int round = 0; round < 200; round++) {
        uint32_t depth = 1 + (uint32_t)round % 4, n = 1u << depth;
        b.size = 0;
        put32(&b, (int32_t)depth);
        random_subtree(&b, grid, n, 0, 0, 0, n);
        put32(&b, 0);
        uint64_t cave = 0, buried = 0, floating = 0, cave_c = 0, buried_c = 0, floating_c = 0;
        for (uint32_t z = 0; z < n; z++)
            for (uint32_t x = 0; x < n; x++) {
                int t = -1;
                for (uint32_t y = 0; y < n; y++)
                    if (grid[((size_t)z * n + y) * n + x] >= 128) t = (int)y;
                int up = t + 1 < (int)n ? grid[((size_t)z * n + (uint32_t)(t + 1)) * n + x] : 0;
                int surface = t + (up > 0 && up < 128 ? 1 : 0);
                uint64_t c0 = cave, b0 = buried, f0 = floating;
                for (int y = 0; y < (int)n; y++) {
                    uint8_t d = grid[((size_t)z * n + (uint32_t)y) * n + x];
                    if (y < surface && d < 128) cave++;
                    if (y < surface && d >= 128 && d < 255) buried++;
                    if (y > surface && d > 0) floating++;
                }
                cave_c += cave > c0, buried_c += buried > b0, floating_c += floating > f0;
            }
        trn_stationeers_terrain t;
        CHECK_OK(trn_stationeers_parse(b.data, b.size, "r.dat", NULL, &t, NULL));
        trn_field f;
        trn_stationeers_field_report rep;
        CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, &rep, NULL, NULL, NULL));
        CHECK_EQ_INT(rep.cave_voxels, cave);
        CHECK_EQ_INT(rep.cave_columns, cave_c);
        CHECK_EQ_INT(rep.buried_voxels, buried);
        CHECK_EQ_INT(rep.buried_columns, buried_c);
        CHECK_EQ_INT(rep.floating_voxels, floating);
        CHECK_EQ_INT(rep.floating_columns, floating_c);
        /* The report changes nothing in the field. */
        trn_field g;
        CHECK_OK(trn_stationeers_to_field(&t, NULL, &g, NULL, NULL, NULL, NULL));
        CHECK(memcmp(f.heights, g.heights, (size_t)n * n * sizeof(float)) == 0);
        trn_field_dispose(&f);
        trn_field_dispose(&g);
        trn_stationeers_dispose(&t);
    }
}

/* The sample limit: (2^MaxDepth)^2 samples, the limit itself accepted and one less refused,
 * at the header (naming the file) and in both conversions (before allocating). */
static void test_sample_limit(void)
{
    CHECK(TRN_STATIONEERS_MAX_SAMPLES_DEFAULT == 660764199u); /* 8 GiB / 13 bytes */
    trn_stationeers_limits lim;
    trn_stationeers_limits_default(&lim);
    CHECK(lim.max_samples == TRN_STATIONEERS_MAX_SAMPLES_DEFAULT);
    static bytes b;
    sample_file(&b, true);
    trn_stationeers_terrain t;
    trn_error e;
    lim.max_samples = 16;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "s.dat", &lim, &t, &e));
    trn_stationeers_dispose(&t);
    lim.max_samples = 15;
    CHECK_STATUS(trn_stationeers_parse(b.data, b.size, "s.dat", &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, 0);
    CHECK_CONTAINS(e.file, "s.dat");
    CHECK_CONTAINS(e.message, "MaxDepth 2 means a heightfield of 4 x 4 = 16 samples");
    CHECK_CONTAINS(e.message, "over the limit of 15 samples");
    CHECK_CONTAINS(e.message, "--max-samples");
    CHECK(t.nodes == NULL);

    /* 11 bytes claiming MaxDepth 14: read (0 = unchecked, and under the default), but no
     * field is allocated over a lower limit. */
    static const uint8_t tiny[11] = {14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    lim.max_samples = 0;
    CHECK_OK(trn_stationeers_parse(tiny, sizeof tiny, "tiny.dat", &lim, &t, &e));
    trn_stationeers_field_options o;
    trn_stationeers_field_options_default(&o);
    CHECK(o.max_samples == TRN_STATIONEERS_MAX_SAMPLES_DEFAULT);
    o.max_samples = ((uint64_t)1 << 28) - 1;
    trn_field f;
    CHECK_STATUS(trn_stationeers_to_field(&t, &o, &f, NULL, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "MaxDepth 14 means 16384 x 16384 = 268435456 samples");
    CHECK_CONTAINS(e.message, "over the limit of 268435455 samples");
    trn_stationeers_dispose(&t);
    trn_stationeers_limits_default(&lim);
    CHECK_OK(trn_stationeers_parse(tiny, sizeof tiny, "tiny.dat", &lim, &t, &e));
    trn_stationeers_dispose(&t);
    /* MaxDepth 15 allowed by depth is still over the default sample limit. */
    uint8_t deeper[11];
    memcpy(deeper, tiny, sizeof deeper);
    deeper[0] = 15;
    lim.max_depth = 15;
    CHECK_STATUS(trn_stationeers_parse(deeper, sizeof deeper, "d.dat", &lim, &t, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "1073741824 samples, over the limit of 660764199");

    /* The conversions: the limit accepted, one less refused; 0 means the default. */
    sample_file(&b, false);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "s.dat", NULL, &t, &e));
    o.max_samples = 16;
    CHECK_OK(trn_stationeers_to_field(&t, &o, &f, NULL, NULL, NULL, &e));
    o.max_samples = 15;
    trn_field g;
    CHECK_STATUS(trn_stationeers_to_field(&t, &o, &g, NULL, NULL, NULL, &e), TRN_ERR_LIMIT);
    o.max_samples = 0;
    CHECK_OK(trn_stationeers_to_field(&t, &o, &g, NULL, NULL, NULL, &e));
    trn_field_dispose(&g);
    trn_stationeers_dispose(&t);
    /* 4 x 4 samples up to 3 voxels: MaxDepth 2, 16 columns. */
    for (size_t k = 0; k < 16; k++)
        f.heights[k] = 3.0f;
    trn_stationeers_field_options_default(&o);
    o.bedrock_layers = 1;
    o.max_samples = 16;
    CHECK_OK(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(t.max_depth, 2);
    trn_stationeers_dispose(&t);
    o.max_samples = 15;
    CHECK_STATUS(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "heightfield to octree: MaxDepth 2 means 4 x 4 = 16 samples");
    CHECK(t.nodes == NULL);
    /* A few samples reaching high ask for a deep tree: refused before allocating it. */
    f.heights[5] = 16000.0f;
    o.max_samples = ((uint64_t)1 << 28) - 1;
    CHECK_STATUS(trn_stationeers_from_field(&f, &o, &t, NULL, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "MaxDepth 14 means 16384 x 16384 = 268435456 samples");
    trn_field_dispose(&f);
}

static int cancel_at_once(double done, const char *stage, void *user)
{
    (void)done, (void)stage, (void)user;
    return TRN_CANCEL;
}

static void test_cancel(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 255, 255, 255, 255, NULL));
    for (size_t k = 0; k < 256 * 256; k++)
        f.heights[k] = (float)(10 + (k % 7));
    trn_stationeers_terrain t;
    trn_error e;
    CHECK_STATUS(trn_stationeers_from_field(&f, NULL, &t, NULL, cancel_at_once, NULL, &e),
                 TRN_ERR_CANCELLED);
    CHECK(t.nodes == NULL);
    trn_field_dispose(&f);
}

/* ---- .save archives ---- */

static void add_entry(zip_t *za, const char *name, const void *data, size_t size, int32_t method)
{
    zip_source_t *s = zip_source_buffer(za, data, size, 0);
    zip_int64_t idx = zip_file_add(za, name, s, ZIP_FL_ENC_UTF_8);
    CHECK(idx >= 0);
    CHECK(zip_set_file_compression(za, (zip_uint64_t)idx, method, 0) == 0);
    CHECK(zip_file_set_mtime(za, (zip_uint64_t)idx, 1700000000 + (time_t)idx * 60, 0) == 0);
}

static uint8_t preview[5000];
static const char world_xml[] = "<?xml version=\"1.0\"?>\n<WorldData><WorldName>Lunar</WorldName>"
                                "<Things>repeat repeat repeat repeat repeat</Things></WorldData>\n";
static const char meta_xml[] = "<WorldMetaData><WorldType>Lunar</WorldType></WorldMetaData>\n";

static bool make_save(const char *path, const bytes *dat, bool second_terrain)
{
    int zerr;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!za) return false;
    add_entry(za, "world.xml", world_xml, sizeof world_xml - 1, ZIP_CM_DEFLATE);
    add_entry(za, "world_meta.xml", meta_xml, sizeof meta_xml - 1, ZIP_CM_STORE);
    if (dat) add_entry(za, "terrain.dat", dat->data, dat->size, ZIP_CM_DEFLATE);
    add_entry(za, "preview.png", preview, sizeof preview, ZIP_CM_STORE);
    if (second_terrain) add_entry(za, "old/Terrain.DAT", "x", 1, ZIP_CM_STORE);
    return zip_close(za) == 0;
}

/* Raw (still compressed) bytes of entry i. */
static uint8_t *raw_entry(zip_t *za, zip_uint64_t i, size_t *n)
{
    zip_stat_t s;
    zip_stat_index(za, i, 0, &s);
    *n = (size_t)s.comp_size;
    uint8_t *buf = malloc(*n + 1);
    zip_file_t *zf = zip_fopen_index(za, i, ZIP_FL_COMPRESSED);
    zip_int64_t r = zf ? zip_fread(zf, buf, *n) : -1;
    if (zf) zip_fclose(zf);
    CHECK(r == (zip_int64_t)*n);
    return buf;
}

static void test_save(void)
{
    char dir[512], save[600], out[600], bad[600];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(save, sizeof save, "%s/world.save", dir);
    snprintf(out, sizeof out, "%s/out.save", dir);
    for (size_t k = 0; k < sizeof preview; k++)
        preview[k] = (uint8_t)(k * 2654435761u >> 13);
    static bytes dat, dat2;
    sample_file(&dat, true);
    CHECK(make_save(save, &dat, false));

    uint8_t *got;
    size_t n;
    trn_error e;
    CHECK_OK(trn_stationeers_save_extract(save, 0, &got, &n, &e));
    CHECK(n == dat.size && memcmp(got, dat.data, n) == 0);
    free(got);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_save_read(save, NULL, &t, &e));
    CHECK_EQ_INT(t.vein_count, 2);
    trn_stationeers_dispose(&t);
    CHECK_STATUS(trn_stationeers_save_extract(save, 10, &got, &n, &e), TRN_ERR_LIMIT);

    /* Replace terrain.dat with a different tree; everything else stays as stored. */
    sample_file(&dat2, false);
    size_t in_size;
    uint8_t *before = trn_test_read_file(save, &in_size);
    CHECK_OK(trn_stationeers_save_replace(save, out, dat2.data, dat2.size, &e));
    size_t in_size2;
    uint8_t *after = trn_test_read_file(save, &in_size2);
    CHECK(in_size == in_size2 && memcmp(before, after, in_size) == 0); /* input untouched */
    free(before);
    free(after);
    CHECK_OK(trn_stationeers_save_extract(out, 0, &got, &n, &e));
    CHECK(n == dat2.size && memcmp(got, dat2.data, n) == 0);
    free(got);
    int zerr;
    zip_t *a = zip_open(save, ZIP_RDONLY, &zerr), *b = zip_open(out, ZIP_RDONLY, &zerr);
    CHECK(a && b);
    if (a && b) {
        CHECK_EQ_INT(zip_get_num_entries(a, 0), zip_get_num_entries(b, 0));
        for (zip_uint64_t i = 0; i < (zip_uint64_t)zip_get_num_entries(a, 0); i++) {
            zip_stat_t sa, sb;
            zip_stat_index(a, i, 0, &sa);
            zip_stat_index(b, i, 0, &sb);
            CHECK(strcmp(sa.name, sb.name) == 0);
            CHECK_EQ_INT(sa.comp_method, sb.comp_method);
            CHECK(sa.mtime == sb.mtime);
            if (strcmp(sa.name, "terrain.dat") == 0) continue;
            CHECK_EQ_INT(sa.crc, sb.crc);
            size_t na, nb;
            uint8_t *ra = raw_entry(a, i, &na), *rb = raw_entry(b, i, &nb);
            CHECK(na == nb && memcmp(ra, rb, na) == 0);
            free(ra);
            free(rb);
        }
    }
    if (a) zip_discard(a);
    if (b) zip_discard(b);

    /* In place. */
    CHECK_OK(trn_stationeers_save_replace(out, out, dat.data, dat.size, &e));
    CHECK_OK(trn_stationeers_save_extract(out, 0, &got, &n, &e));
    CHECK(n == dat.size && memcmp(got, dat.data, n) == 0);
    free(got);

    /* No terrain.dat, two of them, not a ZIP, a bad terrain.dat inside. */
    snprintf(bad, sizeof bad, "%s/none.save", dir);
    CHECK(make_save(bad, NULL, false));
    CHECK_STATUS(trn_stationeers_save_extract(bad, 0, &got, &n, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "no terrain.dat");
    CHECK_STATUS(trn_stationeers_save_replace(bad, out, dat.data, dat.size, &e), TRN_ERR_NOT_FOUND);
    CHECK(make_save(bad, &dat, true));
    CHECK_STATUS(trn_stationeers_save_extract(bad, 0, &got, &n, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "two entries named terrain.dat");
    trn_test_write_file(bad, "not a zip at all", 16);
    CHECK_STATUS(trn_stationeers_save_extract(bad, 0, &got, &n, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "not a readable ZIP");
    dat2.size -= 2;
    CHECK(make_save(bad, &dat2, false));
    CHECK_STATUS(trn_stationeers_save_read(bad, NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.file, "none.save:terrain.dat");
    CHECK_EQ_INT(e.offset, off_veins);
}

/* Offset of the first occurrence of needle in hay, or SIZE_MAX. */
static size_t find_bytes(const uint8_t *hay, size_t n, const void *needle, size_t m)
{
    for (size_t i = 0; m <= n && i <= n - m; i++)
        if (memcmp(hay + i, needle, m) == 0) return i;
    return SIZE_MAX;
}

static void put_le(uint8_t *p, uint64_t v, int width)
{
    for (int k = 0; k < width; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* The same archive with ZIP64 end records: the classic end record's counts and offsets say
 * 0xffff... and the ZIP64 record holds them. out must have room for size + 76 bytes. */
static size_t to_zip64(const uint8_t *zip, size_t size, uint8_t *out)
{
    size_t eocd = size - 22; /* no archive comment */
    CHECK(memcmp(zip + eocd, "PK\x05\x06", 4) == 0);
    uint64_t entries = (uint64_t)(zip[eocd + 10] | zip[eocd + 11] << 8);
    uint64_t cd_size = 0, cd_offset = 0;
    for (int k = 3; k >= 0; k--) {
        cd_size = cd_size << 8 | zip[eocd + 12 + (size_t)k];
        cd_offset = cd_offset << 8 | zip[eocd + 16 + (size_t)k];
    }
    memcpy(out, zip, eocd);
    uint8_t *r = out + eocd;
    memcpy(r, "PK\x06\x06", 4);
    put_le(r + 4, 44, 8);
    put_le(r + 12, 45, 2);
    put_le(r + 14, 45, 2);
    put_le(r + 16, 0, 8);
    put_le(r + 24, entries, 8);
    put_le(r + 32, entries, 8);
    put_le(r + 40, cd_size, 8);
    put_le(r + 48, cd_offset, 8);
    uint8_t *l = r + 56;
    memcpy(l, "PK\x06\x07", 4);
    put_le(l + 4, 0, 4);
    put_le(l + 8, eocd, 8);
    put_le(l + 16, 1, 4);
    uint8_t *e = l + 20;
    memcpy(e, zip + eocd, 22);
    put_le(e + 8, 0xffff, 2);
    put_le(e + 10, 0xffff, 2);
    put_le(e + 12, 0xffffffffu, 4);
    put_le(e + 16, 0xffffffffu, 4);
    return size + 76;
}

/* A save whose terrain.dat is stored (not compressed) and whose entries may be links. */
static bool make_plain_save(const char *path, const bytes *dat, const char *link_entry)
{
    int zerr;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!za) return false;
    add_entry(za, "world.xml", world_xml, sizeof world_xml - 1, ZIP_CM_DEFLATE);
    add_entry(za, "terrain.dat", dat->data, dat->size, ZIP_CM_STORE);
    add_entry(za, "worle.xml", meta_xml, sizeof meta_xml - 1, ZIP_CM_STORE);
    if (link_entry) {
        zip_int64_t i = zip_name_locate(za, link_entry, 0);
        CHECK(i >= 0);
        CHECK(zip_file_set_external_attributes(za, (zip_uint64_t)i, 0, ZIP_OPSYS_UNIX,
                                               0120777u << 16) == 0);
    }
    return zip_close(za) == 0;
}

/* Damaged and hostile archives: CRC mismatches, symbolic links, duplicate names. */
static void test_save_safety(void)
{
    char dir[512], save[600], out[600];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(save, sizeof save, "%s/plain.save", dir);
    snprintf(out, sizeof out, "%s/out.save", dir);
    static bytes dat;
    sample_file(&dat, true);
    CHECK(make_plain_save(save, &dat, NULL));
    uint8_t *got;
    size_t n;
    trn_error e;
    CHECK_OK(trn_stationeers_save_extract(save, 0, &got, &n, &e));
    free(got);

    /* The same bytes from memory as from the file. */
    size_t zip_size;
    uint8_t *zip = trn_test_read_file(save, &zip_size);
    CHECK_OK(trn_stationeers_save_extract_memory(zip, zip_size, "mem.save", 0, &got, &n, &e));
    CHECK(n == dat.size && memcmp(got, dat.data, n) == 0);
    free(got);

    /* One flipped bit inside the stored terrain.dat: the CRC says so, with both values. */
    size_t at = find_bytes(zip, zip_size, dat.data, dat.size);
    CHECK(at != SIZE_MAX);
    if (at != SIZE_MAX) {
        zip[at + off_vein1 + 12] ^= 0x10; /* inside vein 1's IdHash: still parses */
        uint32_t want = (uint32_t)crc32(0L, dat.data, (uInt)dat.size);
        uint32_t found = (uint32_t)crc32(0L, zip + at, (uInt)dat.size);
        char expect[200];
        snprintf(expect, sizeof expect,
                 "entry 'terrain.dat': CRC-32 mismatch: the central directory expects 0x%08x, "
                 "the %zu extracted bytes give 0x%08x",
                 (unsigned)want, dat.size, (unsigned)found);
        CHECK_STATUS(
            trn_stationeers_save_extract_memory(zip, zip_size, "mem.save", 0, &got, &n, &e),
            TRN_ERR_FORMAT);
        CHECK_CONTAINS(e.message, expect);
        CHECK_CONTAINS(e.file, "mem.save");
        CHECK(got == NULL && n == 0);
        char bad[600];
        snprintf(bad, sizeof bad, "%s/flipped.save", dir);
        CHECK(trn_test_write_file(bad, zip, zip_size));
        trn_stationeers_terrain t;
        CHECK_STATUS(trn_stationeers_save_read(bad, NULL, &t, &e), TRN_ERR_FORMAT);
        CHECK_CONTAINS(e.message, expect);
        CHECK_CONTAINS(e.file, "flipped.save");
    }
    free(zip);

    /* Two entries of one name: libzip's "File already exists" becomes the name. */
    zip = trn_test_read_file(save, &zip_size);
    for (size_t i; (i = find_bytes(zip, zip_size, "worle.xml", 9)) != SIZE_MAX;)
        zip[i + 4] = 'd';
    CHECK_STATUS(trn_stationeers_save_extract_memory(zip, zip_size, "dup.save", 0, &got, &n, &e),
                 TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "duplicate entry 'world.xml' in archive");
    char dup[600];
    snprintf(dup, sizeof dup, "%s/dup.save", dir);
    CHECK(trn_test_write_file(dup, zip, zip_size));
    CHECK_STATUS(trn_stationeers_save_replace(dup, out, dat.data, dat.size, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "duplicate entry 'world.xml' in archive");
    CHECK(!trn_test_exists(out));
    /* Found through ZIP64 end records too. */
    uint8_t *zip64 = malloc(zip_size + 76);
    size_t zip64_size = to_zip64(zip, zip_size, zip64);
    CHECK_STATUS(
        trn_stationeers_save_extract_memory(zip64, zip64_size, "dup64.save", 0, &got, &n, &e),
        TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "duplicate entry 'world.xml' in archive");
    free(zip64);
    free(zip);
    /* ZIP64 end records without duplicates read as usual. */
    zip = trn_test_read_file(save, &zip_size);
    zip64 = malloc(zip_size + 76);
    zip64_size = to_zip64(zip, zip_size, zip64);
    CHECK_OK(trn_stationeers_save_extract_memory(zip64, zip64_size, "ok64.save", 0, &got, &n, &e));
    CHECK(n == dat.size);
    free(got);
    free(zip64);
    free(zip);

    /* terrain.dat as a symbolic link is never read; another link entry stops a rewrite (the
     * result would carry the link), not a read. */
    CHECK(make_plain_save(save, &dat, "terrain.dat"));
    CHECK_STATUS(trn_stationeers_save_extract(save, 0, &got, &n, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "entry 'terrain.dat' is a symbolic link (Unix mode 0120777");
    CHECK_CONTAINS(e.message, "refusing to read it");
    CHECK(got == NULL);
    CHECK(make_plain_save(save, &dat, "worle.xml"));
    CHECK_OK(trn_stationeers_save_extract(save, 0, &got, &n, &e));
    free(got);
    CHECK_STATUS(trn_stationeers_save_replace(save, out, dat.data, dat.size, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "entry 'worle.xml' is a symbolic link");
    CHECK_CONTAINS(e.file, "plain.save");
    CHECK(!trn_test_exists(out));
    /* A regular file whose mode is not a link type is fine (0100644). */
    int zerr;
    zip_t *za = zip_open(save, 0, &zerr);
    CHECK(za != NULL);
    if (za) {
        CHECK(zip_file_set_external_attributes(za, 2, 0, ZIP_OPSYS_UNIX, 0100644u << 16) == 0);
        CHECK(zip_close(za) == 0);
    }
    CHECK_OK(trn_stationeers_save_replace(save, out, dat.data, dat.size, &e));
}

/* Vein counts at their edges: -1 is refused as negative, 0 reads, and the limit itself (2 veins
 * with max_veins 2) reads. */
static void test_vein_count_edges(void)
{
    static bytes b;
    trn_stationeers_terrain t;
    trn_error e;
    sample_file(&b, false);
    b.size = off_veins;
    put32(&b, -1);
    CHECK_STATUS(trn_stationeers_parse(b.data, b.size, "x.dat", NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, off_veins);
    CHECK_CONTAINS(e.message, "vein count -1 is negative");
    b.size = off_veins;
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "x.dat", NULL, &t, &e));
    CHECK_EQ_INT(t.vein_count, 0);
    trn_stationeers_dispose(&t);
    sample_file(&b, true);
    trn_stationeers_limits lim;
    trn_stationeers_limits_default(&lim);
    lim.max_veins = 2;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, "x.dat", &lim, &t, &e));
    CHECK_EQ_INT(t.vein_count, 2);
    trn_stationeers_dispose(&t);
}

/* World sizes: MaxDepth 10, 11, 12 are 1, 8, 64 base files; base file i is the depth-(MaxDepth -
 * 10) node i-th in pre-order, copied as stored into a MaxDepth-10 octree; a block inside a
 * bigger leaf is that leaf. */
static void test_world_parts(void)
{
    CHECK_EQ_INT(trn_stationeers_world_files(9), 0);
    CHECK_EQ_INT(trn_stationeers_world_files(10), 1);
    CHECK_EQ_INT(trn_stationeers_world_files(11), 8);
    CHECK_EQ_INT(trn_stationeers_world_files(12), 64);
    CHECK_EQ_INT(trn_stationeers_world_files(14), 4096);
    CHECK_EQ_INT(trn_stationeers_world_files(15), 0);
    /* MaxDepth 11: child 1 a modified branch of 8 leaves, child 6 a leaf of density 9, the rest
     * solid Bedrock leaves. */
    static bytes b;
    b.size = 0;
    put32(&b, 11);
    put8(&b, 0); /* root */
    for (int c = 0; c < 8; c++) {
        if (c == 1) {
            put8(&b, TRN_STATIONEERS_MODIFIED);
            for (int k = 0; k < 8; k++)
                leaf(&b, 0, (uint8_t)(k * 30), 2);
        } else {
            leaf(&b, 0, c == 6 ? 9 : 255, 8);
        }
    }
    put32(&b, 0);
    trn_stationeers_terrain w, part;
    trn_error e;
    CHECK_OK(trn_stationeers_parse(b.data, b.size, NULL, NULL, &w, &e));
    uint32_t corner[3];
    CHECK_OK(trn_stationeers_world_part(&w, 1, &part, corner, &e));
    CHECK_EQ_INT(part.max_depth, 10);
    CHECK_EQ_INT(part.nodes_size, 25);
    CHECK(memcmp(part.nodes, b.data + 4 + 1 + 3, 25) == 0);
    CHECK_EQ_INT(part.branch_count, 1);
    CHECK_EQ_INT(part.leaf_count, 8);
    CHECK_EQ_INT(part.node_count, 9);
    CHECK(corner[0] == 1024 && corner[1] == 0 && corner[2] == 0);
    /* It is a valid terrain.dat on its own: encoded, it parses back to the same. */
    uint8_t *enc;
    size_t enc_size;
    CHECK_OK(trn_stationeers_encode(&part, &enc, &enc_size, &e));
    CHECK_EQ_INT(enc_size, 4 + 25 + 4);
    trn_stationeers_terrain back;
    CHECK_OK(trn_stationeers_parse(enc, enc_size, NULL, NULL, &back, &e));
    CHECK_EQ_INT(back.max_depth, 10);
    trn_stationeers_dispose(&back);
    free(enc);
    trn_stationeers_dispose(&part);
    CHECK_OK(trn_stationeers_world_part(&w, 6, &part, corner, &e));
    CHECK_EQ_INT(part.nodes_size, 3);
    CHECK(part.nodes[0] == 1 && part.nodes[1] == 9 && part.nodes[2] == 8);
    CHECK(corner[0] == 0 && corner[1] == 1024 && corner[2] == 1024);
    trn_stationeers_dispose(&part);
    CHECK_OK(trn_stationeers_world_part(&w, 7, &part, corner, &e));
    CHECK(corner[0] == 1024 && corner[1] == 1024 && corner[2] == 1024);
    CHECK(part.nodes[1] == 255);
    trn_stationeers_dispose(&part);
    /* The last file is 7; 8 is refused, as is a world of veins. */
    CHECK_STATUS(trn_stationeers_world_part(&w, 8, &part, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "has 8 base files, not file 8");
    CHECK(part.nodes == NULL);
    w.vein_count = 1;
    CHECK_STATUS(trn_stationeers_world_part(&w, 0, &part, NULL, &e), TRN_ERR_UNSUPPORTED);
    w.vein_count = 0;
    trn_stationeers_dispose(&w);

    /* MaxDepth 12: root child 3 a branch whose child 5 is a branch of leaves; root child 5 a
     * leaf. File 3 * 8 + 5 = 29 is that inner branch, 3 * 8 + 2 = 26 a leaf under child 3,
     * 5 * 8 + 1 = 41 inside root's leaf 5. */
    b.size = 0;
    put32(&b, 12);
    put8(&b, 0);
    for (int c = 0; c < 8; c++) {
        if (c != 3) {
            leaf(&b, 0, c == 5 ? 77 : 0, 0);
            continue;
        }
        put8(&b, 0);
        for (int d = 0; d < 8; d++) {
            if (d != 5) {
                leaf(&b, 0, (uint8_t)(100 + d), 1);
                continue;
            }
            put8(&b, 0);
            for (int k = 0; k < 8; k++)
                leaf(&b, 0, (uint8_t)k, 2);
        }
    }
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, NULL, NULL, &w, &e));
    CHECK_OK(trn_stationeers_world_part(&w, 29, &part, corner, &e));
    CHECK_EQ_INT(part.nodes_size, 25);
    CHECK(part.nodes[0] == 0 && part.nodes[1 + 7 * 3 + 1] == 7);
    CHECK(corner[0] == 2048 + 1024 && corner[1] == 2048 && corner[2] == 1024);
    trn_stationeers_dispose(&part);
    CHECK_OK(trn_stationeers_world_part(&w, 26, &part, corner, &e));
    CHECK(part.nodes_size == 3 && part.nodes[1] == 102);
    CHECK(corner[0] == 2048 && corner[1] == 2048 + 1024 && corner[2] == 0);
    trn_stationeers_dispose(&part);
    CHECK_OK(trn_stationeers_world_part(&w, 41, &part, corner, &e));
    CHECK(part.nodes_size == 3 && part.nodes[1] == 77);
    CHECK(corner[0] == 2048 + 1024 && corner[1] == 0 && corner[2] == 2048);
    trn_stationeers_dispose(&part);
    CHECK_OK(trn_stationeers_world_part(&w, 63, &part, NULL, &e));
    trn_stationeers_dispose(&part);
    CHECK_STATUS(trn_stationeers_world_part(&w, 64, &part, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_stationeers_dispose(&w);
    /* Below a world's depth: refused. */
    b.size = 0;
    put32(&b, 9);
    leaf(&b, 0, 255, 8);
    put32(&b, 0);
    CHECK_OK(trn_stationeers_parse(b.data, b.size, NULL, NULL, &w, &e));
    CHECK_STATUS(trn_stationeers_world_part(&w, 0, &part, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "MaxDepth 10 to 14, not 9");
    trn_stationeers_dispose(&w);

    /* min_depth: the depth chosen for a 16 x 16 field is never below it. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 15, 15, 15.0, 15.0, NULL));
    for (size_t k = 0; k < 256; k++)
        f.heights[k] = 6.0f;
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    CHECK_EQ_INT(fo.min_depth, 0);
    CHECK_OK(trn_stationeers_from_field(&f, &fo, &w, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(w.max_depth, 4);
    trn_stationeers_dispose(&w);
    fo.min_depth = 10;
    CHECK_OK(trn_stationeers_from_field(&f, &fo, &w, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(w.max_depth, 10);
    trn_stationeers_dispose(&w);
    fo.min_depth = 3; /* below what the field needs: the field decides */
    CHECK_OK(trn_stationeers_from_field(&f, &fo, &w, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(w.max_depth, 4);
    trn_stationeers_dispose(&w);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_round_trip_small);
    RUN(test_deep_and_shallow);
    RUN(test_truncations);
    RUN(test_rejections);
    RUN(test_field_round_trip);
    RUN(test_to_field_rule);
    RUN(test_losses);
    RUN(test_losses_random);
    RUN(test_sample_limit);
    RUN(test_cancel);
    RUN(test_save);
    RUN(test_save_safety);
    RUN(test_vein_count_edges);
    RUN(test_world_parts);
    return trn_test_finish();
}
