/* Runtime tests: payloads written byte by byte from docs/payload.md, placements and trackers.
 * Links libterrane_runtime alone: no generation code is needed to load and query terrain. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include <zstd.h>

#include "terrane/runtime.h"
#include "test.h"

/* ---- a payload writer of our own, as another language would write one from the document ---- */

typedef struct bytes {
    uint8_t *data;
    size_t size;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    b->data = realloc(b->data, b->size + n + 1u);
    if (n) memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void put_u16(bytes *b, uint16_t v)
{
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    put(b, x, 2);
}

static void put_u32(bytes *b, uint32_t v)
{
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    put(b, x, 4);
}

static void put_u64(bytes *b, uint64_t v)
{
    put_u32(b, (uint32_t)v);
    put_u32(b, (uint32_t)(v >> 32));
}

static void put_f32(bytes *b, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put_u32(b, u);
}

static void put_f64(bytes *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, 8);
    put_u64(b, u);
}

static void put_text(bytes *b, const char *s)
{
    put_u16(b, (uint16_t)strlen(s));
    put(b, s, strlen(s));
}

typedef struct section {
    char id[5];
    uint32_t flags;
    bytes raw;
} section;

/* Header, table, header checksum, then each section as one zstd frame. */
static bytes payload_bytes(section *secs, uint32_t n, uint32_t cells_x, uint32_t cells_z,
                           double size_x, double size_z)
{
    const char *gen = "test writer", *id = "asset://terrain/test";
    uint8_t *packed[8];
    size_t psize[8];
    for (uint32_t k = 0; k < n; k++) {
        const size_t bound = ZSTD_compressBound(secs[k].raw.size);
        packed[k] = malloc(bound);
        psize[k] = ZSTD_compress(packed[k], bound, secs[k].raw.data, secs[k].raw.size, 1);
    }
    bytes b = {NULL, 0};
    put(&b, "TRNBIN\0\0", 8);
    put_u32(&b, 1);
    const uint32_t header_size = 84u + (uint32_t)strlen(gen) + (uint32_t)strlen(id) + 48u * n + 8u;
    put_u32(&b, header_size);
    put_u32(&b, 2);
    put_u32(&b, n);
    put_u64(&b, 0x1234);
    put_u64(&b, 0);
    put_u64(&b, 0);
    put_u32(&b, cells_x);
    put_u32(&b, cells_z);
    put_f64(&b, size_x);
    put_f64(&b, size_z);
    put_f64(&b, -5.0);
    put_u16(&b, (uint16_t)strlen(gen));
    put_u16(&b, (uint16_t)strlen(id));
    put(&b, gen, strlen(gen));
    put(&b, id, strlen(id));
    uint64_t offset = header_size;
    for (uint32_t k = 0; k < n; k++) {
        put(&b, secs[k].id, 4);
        put_u32(&b, secs[k].flags);
        put_u64(&b, offset);
        put_u64(&b, psize[k]);
        put_u64(&b, secs[k].raw.size);
        put_u64(&b, XXH64(secs[k].raw.data, secs[k].raw.size, 0));
        put_u64(&b, XXH64(packed[k], psize[k], 0));
        offset += psize[k];
    }
    put_u64(&b, XXH64(b.data, b.size, 0));
    for (uint32_t k = 0; k < n; k++) {
        put(&b, packed[k], psize[k]);
        free(packed[k]);
    }
    return b;
}

/* 8 x 4 cells over 8 x 4 units; ground h = -1 + 0.1 x + 0.05 z; lake "a" (level 2, current 1
 * unit/s along +x) owns samples i <= 3, lake "b" (level 3, still) i >= 5; column i = 4 dry. */
#define CX 8u
#define CZ 4u
#define NX (CX + 1u)
#define NS (NX * (CZ + 1u))

static double ground(double x, double z)
{
    return -1.0 + 0.1 * x + 0.05 * z;
}

static bytes water_bytes(void)
{
    trn_water w;
    memset(&w, 0, sizeof w);
    w.cells_x = CX;
    w.cells_z = CZ;
    w.size_x = CX;
    w.size_z = CZ;
    trn_water_body bodies[2];
    trn_water_body_init(&bodies[0], TRN_WATER_LAKE, "a");
    trn_water_body_init(&bodies[1], TRN_WATER_LAKE, "b");
    bodies[0].level = 2.0;
    bodies[0].center_x = 1.5;
    bodies[0].center_z = 2.0;
    bodies[0].radius = 3.0;
    bodies[0].look.flow_speed = 1.0;
    bodies[1].level = 3.0;
    bodies[1].center_x = 6.5;
    bodies[1].center_z = 2.0;
    bodies[1].radius = 3.0;
    bodies[0].carve = bodies[1].carve = false;
    w.bodies = bodies;
    w.body_count = 2;
    int32_t owner[NS];
    uint8_t wet[NS];
    float surface[NS];
    uint32_t segment[NS];
    for (uint32_t k = 0; k < NS; k++) {
        const uint32_t i = k % NX;
        owner[k] = i <= 3 ? 0 : i >= 5 ? 1 : -1;
        wet[k] = owner[k] >= 0;
        surface[k] = owner[k] == 0 ? 2.0f : owner[k] == 1 ? 3.0f : NAN;
        segment[k] = 0;
    }
    w.owner = owner;
    w.wet = wet;
    w.surface = surface;
    w.segment = segment;
    bytes b = {NULL, 0};
    trn_error e;
    CHECK_OK(trn_water_encode(&w, &b.data, &b.size, &e));
    return b;
}

/* The sections of the test payload; which ones and their flags vary by test. */
static bool with_water = true; /* make_payload writes the WATR section */

/* The extra section's bytes when set (else "future"). */
static bytes extra_raw;

static bytes make_payload(bool with_recipe, const char *extra_id, uint32_t extra_flags)
{
    section secs[8];
    memset(secs, 0, sizeof secs);
    uint32_t n = 0;
    memcpy(secs[n].id, "HGHT", 4);
    secs[n].flags = 1;
    for (uint32_t k = 0; k < NS; k++)
        put_f32(&secs[n].raw, (float)ground((double)(k % NX), (double)(k / NX)));
    n++;
    memcpy(secs[n].id, "BIOM", 4);
    secs[n].flags = 1;
    put_u32(&secs[n].raw, 2);
    const char *names[2] = {"meadow", "rock"};
    for (int b = 0; b < 2; b++) {
        put_text(&secs[n].raw, names[b]);
        for (int c = 0; c < 4; c++)
            put_f32(&secs[n].raw, 0.25f * (float)(b + c));
    }
    for (uint32_t k = 0; k < NS; k++) {
        const uint8_t label = k % NX < 4 ? 0 : 1;
        put(&secs[n].raw, &label, 1);
    }
    n++;
    if (with_water) {
        memcpy(secs[n].id, "WATR", 4);
        secs[n++].raw = water_bytes();
    }
    memcpy(secs[n].id, "ROLE", 4);
    for (uint32_t k = 0; k < NS; k++) {
        const uint8_t role = (uint8_t)(k % 9u);
        put(&secs[n].raw, &role, 1);
    }
    const uint8_t no_set = 0;
    put(&secs[n++].raw, &no_set, 1);
    if (extra_id) {
        memcpy(secs[n].id, extra_id, 4);
        secs[n].flags = extra_flags;
        if (extra_raw.data)
            put(&secs[n++].raw, extra_raw.data, extra_raw.size);
        else
            put(&secs[n++].raw, "future", 6);
    }
    if (with_recipe) {
        memcpy(secs[n].id, "RCPE", 4);
        secs[n].flags = 1;
        put(&secs[n++].raw, "{}", 2);
    }
    bytes out = payload_bytes(secs, n, CX, CZ, CX, CZ);
    for (uint32_t k = 0; k < n; k++)
        free(secs[k].raw.data);
    return out;
}

static trn_payload *open_test_payload(void)
{
    bytes b = make_payload(true, NULL, 0);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open_memory(b.data, b.size, "test.terrain.bin", NULL, &p, &e));
    free(b.data);
    return p;
}

static bool near3(const double a[3], double x, double y, double z)
{
    return fabs(a[0] - x) < 1e-9 && fabs(a[1] - y) < 1e-9 && fabs(a[2] - z) < 1e-9;
}

/* ---- tests ---- */

static void test_local_queries(void)
{
    trn_payload *p = open_test_payload();
    if (!p) return;
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    CHECK(info.cells_x == CX && info.cells_z == CZ && info.sea_level == -5.0);
    CHECK(strcmp(info.terrain_id, "asset://terrain/test") == 0);
    CHECK(strcmp(info.generator, "test writer") == 0 && info.cache_key == 0x1234);
    CHECK(info.generator_version == 2 && info.section_count == 5);
    /* A plane: the interpolated height is the plane's (heights are floats). */
    CHECK(fabs(trn_payload_height_at(p, 2.5, 1.25) - ground(2.5, 1.25)) < 1e-6);
    CHECK(fabs(trn_payload_height_at(p, 8.0, 4.0) - ground(8.0, 4.0)) < 1e-6);
    CHECK(isnan(trn_payload_height_at(p, -0.001, 1.0)));
    CHECK(isnan(trn_payload_height_at(p, 1.0, 4.001)));
    CHECK(isnan(trn_payload_height_at(p, NAN, 1.0)));
    /* Bit for bit the field's own interpolation. */
    CHECK(trn_payload_height_at(p, 3.3, 2.7) ==
          trn_field_height_at(trn_payload_field(p), 3.3, 2.7));
    double n[3];
    CHECK(trn_payload_normal_at(p, 2.5, 1.25, n));
    const double len = sqrt(0.01 + 1.0 + 0.0025);
    CHECK(fabs(n[0] + 0.1 / len) < 1e-6 && fabs(n[1] - 1.0 / len) < 1e-6 &&
          fabs(n[2] + 0.05 / len) < 1e-6);
    CHECK(!trn_payload_normal_at(p, 9.0, 1.0, n));
    /* Nearest sample, half up: 3.49 is column 3 (meadow), 3.5 column 4 (rock). */
    CHECK_EQ_INT(trn_payload_biome_at(p, 3.49, 0.0), 0);
    CHECK_EQ_INT(trn_payload_biome_at(p, 3.5, 0.0), 1);
    CHECK_EQ_INT(trn_payload_biome_at(p, 8.5, 0.0), -1);
    CHECK(strcmp(trn_payload_biome_name(p, 1), "rock") == 0);
    CHECK(trn_payload_biome_name(p, 2) == NULL);
    float rgba[4];
    CHECK(trn_payload_biome_color(p, 1, rgba) && rgba[3] == 1.0f && rgba[0] == 0.25f);
    CHECK_EQ_INT(trn_payload_role_at(p, 2.0, 1.0), (int)((1u * NX + 2u) % 9u));
    CHECK(trn_payload_material_set(p) == NULL && trn_payload_exclusion(p) == NULL);
    size_t rs;
    CHECK(strcmp(trn_payload_recipe_json(p, &rs), "{}") == 0 && rs == 2);
    trn_water_sample s;
    CHECK(trn_payload_water_at(p, 1.0, 0.0, 2.0, &s));
    CHECK(strcmp(s.body_id, "a") == 0 && s.kind == TRN_WATER_LAKE && s.underwater);
    CHECK(near3(s.surface, 1.0, 2.0, 2.0));
    CHECK(fabs(s.depth - (2.0 - ground(1.0, 2.0))) < 1e-6);
    CHECK(near3(s.flow_velocity, 1.0, 0.0, 0.0));
    CHECK(trn_payload_water_at(p, 7.0, 0.0, 2.0, &s) && strcmp(s.body_id, "b") == 0);
    trn_payload_free(p);
    trn_payload_free(NULL);
}

static void test_sections_required_and_unknown(void)
{
    trn_payload *p = NULL;
    trn_error e;
    /* No recipe: a required section is missing. */
    bytes b = make_payload(false, NULL, 0);
    CHECK_STATUS(trn_payload_open_memory(b.data, b.size, "x.bin", NULL, &p, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "section 'RCPE' (recipe)");
    CHECK_CONTAINS(e.file, "x.bin");
    CHECK(p == NULL);
    free(b.data);
    /* An unknown optional section is skipped... */
    b = make_payload(true, "ZZZZ", 0);
    CHECK_OK(trn_payload_open_memory(b.data, b.size, "x.bin", NULL, &p, &e));
    trn_payload_section sec;
    CHECK(p && trn_payload_section_at(p, 4, &sec) && strcmp(sec.id, "ZZZZ") == 0 && !sec.required);
    CHECK(!trn_payload_section_at(p, 6, &sec));
    trn_payload_free(p);
    p = NULL;
    free(b.data);
    /* ...an unknown required one refuses the payload, naming it and its offset. */
    b = make_payload(true, "ZZZZ", 1);
    CHECK_STATUS(trn_payload_open_memory(b.data, b.size, "x.bin", NULL, &p, &e),
                 TRN_ERR_UNSUPPORTED);
    CHECK_CONTAINS(e.message, "section 'ZZZZ' (unknown)");
    CHECK(e.offset > 0);
    free(b.data);
    /* Unknown flag bits are refused. */
    b = make_payload(true, "ZZZZ", 2);
    CHECK_STATUS(trn_payload_open_memory(b.data, b.size, "x.bin", NULL, &p, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "unknown flags 0x2");
    free(b.data);
    CHECK_STATUS(trn_payload_open("/nonexistent/dir/x.terrain.bin", NULL, &p, &e),
                 TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.file, "/nonexistent/dir/x.terrain.bin");
}

static trn_world *world_with(trn_payload *p, const trn_transform *t)
{
    trn_world *w = NULL;
    trn_error e;
    CHECK_OK(trn_world_new(&w, &e));
    CHECK_OK(trn_world_place(w, "t1", p, t, &e));
    return w;
}

static void test_placements(void)
{
    trn_payload *p = open_test_payload();
    if (!p) return;
    trn_transform t;
    trn_world_water_sample s;
    trn_world_ground_sample g;
    trn_error e;

    /* Translation. */
    trn_transform_identity(&t);
    t.translation[0] = 100.0;
    t.translation[1] = 10.0;
    t.translation[2] = -50.0;
    trn_world *w = world_with(p, &t);
    const double at_t[3] = {101.0, 10.0, -48.0};
    CHECK(trn_world_water_sample_at(w, at_t, NULL, &s));
    CHECK(strcmp(s.terrain_id, "t1") == 0 && strcmp(s.body_id, "a") == 0 && s.underwater);
    CHECK(near3(s.surface, 101.0, 12.0, -48.0) && near3(s.column_up, 0, 1, 0));
    CHECK(near3(s.normal, 0, 1, 0) && near3(s.flow_velocity, 1, 0, 0));
    CHECK(trn_world_ground_at(w, at_t, NULL, &g));
    CHECK(fabs(g.point[1] - (10.0 + ground(1.0, 2.0))) < 1e-6 && g.biome == 0);
    CHECK(strcmp(g.biome_name, "meadow") == 0 && g.role >= 0);
    trn_world_free(w);

    /* A quarter turn about +Y: local +x goes to world -z. */
    trn_transform_identity(&t);
    t.rotation[1] = sin(0.78539816339744830962);
    t.rotation[3] = cos(0.78539816339744830962);
    w = world_with(p, &t);
    const double at_r[3] = {2.0, 0.0, -1.0}; /* local (1, 0, 2) */
    CHECK(trn_world_water_sample_at(w, at_r, NULL, &s));
    CHECK(near3(s.surface, 2.0, 2.0, -1.0));
    CHECK(near3(s.flow_velocity, 0.0, 0.0, -1.0));
    CHECK(near3(s.column_up, 0, 1, 0));
    trn_world_free(w);

    /* Non-uniform scale: depth along local up scales by |sy|, the current by the scale, the
     * ground normal by the inverse transpose (still perpendicular to the scaled slope). */
    trn_transform_identity(&t);
    t.scale[0] = 2.0;
    t.scale[1] = 3.0;
    t.scale[2] = 0.5;
    w = world_with(p, &t);
    const double at_s[3] = {2.0, 0.0, 1.0};
    CHECK(trn_world_water_sample_at(w, at_s, NULL, &s));
    CHECK(near3(s.surface, 2.0, 6.0, 1.0));
    CHECK(fabs(s.depth - 3.0 * (2.0 - ground(1.0, 2.0))) < 1e-5);
    CHECK(near3(s.flow_velocity, 2.0, 0.0, 0.0) && near3(s.normal, 0, 1, 0));
    CHECK(trn_world_ground_at(w, at_s, NULL, &g));
    const double tx[3] = {2.0, 0.3, 0.0}, tz[3] = {0.0, 0.15, 0.5}; /* scaled slope tangents */
    CHECK(fabs(g.normal[0] * tx[0] + g.normal[1] * tx[1] + g.normal[2] * tx[2]) < 1e-6);
    CHECK(fabs(g.normal[0] * tz[0] + g.normal[1] * tz[1] + g.normal[2] * tz[2]) < 1e-6);
    CHECK(fabs(g.normal[0] * g.normal[0] + g.normal[1] * g.normal[1] + g.normal[2] * g.normal[2] -
               1.0) < 1e-12);
    trn_world_free(w);

    /* A flipped local Y: the surface lies below, column_up and the normal point down. */
    trn_transform_identity(&t);
    t.scale[1] = -1.0;
    w = world_with(p, &t);
    const double under[3] = {1.0, -1.0, 2.0}; /* local y = 1: between bed and surface */
    CHECK(trn_world_water_sample_at(w, under, NULL, &s));
    CHECK(s.underwater && near3(s.surface, 1.0, -2.0, 2.0));
    CHECK(near3(s.column_up, 0, -1, 0) && near3(s.normal, 0, -1, 0));
    CHECK(fabs(s.depth - (2.0 - ground(1.0, 2.0))) < 1e-6);
    const double above[3] = {1.0, -3.0, 2.0}; /* local y = 3: over the surface */
    CHECK(trn_world_water_sample_at(w, above, NULL, &s) && !s.underwater);
    trn_world_free(w);

    /* Bad transforms. */
    trn_transform_identity(&t);
    t.scale[2] = 0.0;
    CHECK_OK(trn_world_new(&w, &e));
    CHECK_STATUS(trn_world_place(w, "t", p, &t, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_transform_identity(&t);
    t.rotation[3] = 0.0;
    CHECK_STATUS(trn_world_place(w, "t", p, &t, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(trn_world_count(w), 0);
    trn_world_free(w);
    trn_world_free(NULL);
    trn_payload_free(p);
}

static void test_filter_and_enabled(void)
{
    trn_payload *p = open_test_payload();
    if (!p) return;
    trn_world *w = world_with(p, NULL);
    trn_error e;
    trn_transform up;
    trn_transform_identity(&up);
    up.translation[1] = 0.5; /* t2 sits half a unit higher */
    CHECK_OK(trn_world_place(w, "t2", p, &up, &e));
    CHECK_STATUS(trn_world_place(w, "t2", p, NULL, &e), TRN_ERR_CONFLICT);
    CHECK_EQ_INT(trn_world_count(w), 2);
    const double pos[3] = {1.0, 0.0, 2.0};
    trn_world_water_sample s;
    /* No id: the first placement that answers. */
    CHECK(trn_world_water_sample_at(w, pos, NULL, &s) && strcmp(s.terrain_id, "t1") == 0);
    CHECK(trn_world_water_sample_at(w, pos, "t2", &s) && strcmp(s.terrain_id, "t2") == 0);
    CHECK(fabs(s.surface[1] - 2.5) < 1e-12);
    CHECK(!trn_world_water_sample_at(w, pos, "nope", &s) && s.terrain_id == NULL);
    CHECK_OK(trn_world_set_enabled(w, "t1", false, &e));
    CHECK(trn_world_water_sample_at(w, pos, NULL, &s) && strcmp(s.terrain_id, "t2") == 0);
    CHECK(!trn_world_water_sample_at(w, pos, "t1", &s));
    CHECK_OK(trn_world_set_enabled(w, "t1", true, &e));
    CHECK(trn_world_water_sample_at(w, pos, "t1", &s));
    /* A dry column of t1 lets t2 answer: off t1's grid, t2 moved over there. */
    trn_transform far;
    trn_transform_identity(&far);
    far.translation[0] = 1000.0;
    CHECK_OK(trn_world_set_transform(w, "t2", &far, &e));
    const double far_pos[3] = {1001.0, 0.0, 2.0};
    CHECK(trn_world_water_sample_at(w, far_pos, NULL, &s) && strcmp(s.terrain_id, "t2") == 0);
    CHECK_STATUS(trn_world_set_enabled(w, "nope", false, &e), TRN_ERR_NOT_FOUND);
    CHECK_OK(trn_world_remove(w, "t1", &e));
    CHECK_EQ_INT(trn_world_count(w), 1);
    CHECK(!trn_world_water_sample_at(w, pos, NULL, &s));
    CHECK_STATUS(trn_world_remove(w, "t1", &e), TRN_ERR_NOT_FOUND);
    trn_world_free(w);
    trn_payload_free(p);
}

static void test_tracker(void)
{
    trn_payload *p = open_test_payload();
    if (!p) return;
    trn_world *w = world_with(p, NULL);
    trn_water_tracker *t = NULL;
    trn_error e;
    CHECK_OK(trn_water_tracker_new(NULL, &t, &e));
    trn_water_event ev[2];
    trn_world_water_sample cur;
    const double air[3] = {1.0, 5.0, 2.0}, in_a[3] = {1.0, 0.0, 2.0}, in_b[3] = {7.0, 0.0, 2.0};
    CHECK_EQ_INT(trn_water_tracker_update(t, w, air, ev), 0);
    CHECK(!trn_water_tracker_current(t, &cur));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_ENTER && strcmp(ev[0].sample.body_id, "a") == 0);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_STAY && strcmp(ev[0].sample.terrain_id, "t1") == 0);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_b, ev), 2);
    CHECK(ev[0].phase == TRN_WATER_EXIT && strcmp(ev[0].sample.body_id, "a") == 0);
    CHECK(ev[1].phase == TRN_WATER_ENTER && strcmp(ev[1].sample.body_id, "b") == 0);
    CHECK(trn_water_tracker_current(t, &cur) && strcmp(cur.body_id, "b") == 0);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, air, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_EXIT && strcmp(ev[0].sample.body_id, "b") == 0);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, air, ev), 0);
    /* Reset forgets without an event: the next update inside enters again. */
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    trn_water_tracker_reset(t);
    CHECK(!trn_water_tracker_current(t, &cur));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_ENTER);
    /* The same body id on another placement is another body. */
    CHECK_OK(trn_world_place(w, "t2", p, NULL, &e));
    CHECK_OK(trn_world_set_enabled(w, "t1", false, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 2);
    CHECK(ev[0].phase == TRN_WATER_EXIT && strcmp(ev[0].sample.terrain_id, "t1") == 0);
    CHECK(ev[1].phase == TRN_WATER_ENTER && strcmp(ev[1].sample.terrain_id, "t2") == 0);
    /* Removing the placement is seen on the next update: exit, with the kept sample. */
    CHECK_OK(trn_world_remove(w, "t2", &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_EXIT && strcmp(ev[0].sample.terrain_id, "t2") == 0);
    /* Regenerated without water: the next update leaves. */
    with_water = false;
    trn_payload *dry = open_test_payload();
    with_water = true;
    CHECK(dry && trn_payload_water(dry) == NULL);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 0); /* nothing is placed: t1 is off */
    CHECK_OK(trn_world_set_enabled(w, "t1", true, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_ENTER);
    CHECK_OK(trn_world_set_payload(w, "t1", dry, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_EXIT && strcmp(ev[0].sample.body_id, "a") == 0);
    CHECK_STATUS(trn_world_set_payload(w, "nope", dry, &e), TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_world_set_payload(w, "t1", NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_world_set_payload(w, "t1", p, &e));
    CHECK_OK(trn_world_set_enabled(w, "t1", false, &e));
    trn_water_tracker_free(t);
    /* A filtered tracker sees only its placement. */
    CHECK_OK(trn_water_tracker_new("t1", &t, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 0); /* t1 is disabled */
    CHECK_OK(trn_world_set_enabled(w, "t1", true, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(strcmp(trn_water_phase_name(ev[0].phase), "enter") == 0);
    trn_water_tracker_free(t);
    /* A long placement id keeps its identity whole: stay, not exit and enter again. */
    char long_id[400];
    memset(long_id, 'x', sizeof long_id - 1u);
    long_id[sizeof long_id - 1u] = '\0';
    CHECK_OK(trn_world_place(w, long_id, p, NULL, &e));
    CHECK_OK(trn_world_set_enabled(w, "t1", false, &e));
    CHECK_OK(trn_water_tracker_new(long_id, &t, &e));
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_ENTER && strlen(ev[0].sample.terrain_id) == 399);
    CHECK_EQ_INT(trn_water_tracker_update(t, w, in_a, ev), 1);
    CHECK(ev[0].phase == TRN_WATER_STAY);
    trn_water_tracker_free(t);
    trn_water_tracker_free(NULL);
    trn_world_free(w);
    trn_payload_free(dry);
    trn_payload_free(p);
}

/* Sections of 8 MiB and more take the huge-page buffers: a 1500^2-cell grid's heights. */
static void test_large_section(void)
{
    const uint32_t cells = 1500, nx = cells + 1u;
    const size_t n = (size_t)nx * nx;
    section secs[3];
    memset(secs, 0, sizeof secs);
    memcpy(secs[0].id, "HGHT", 4);
    secs[0].flags = 1;
    float *h = malloc(n * sizeof *h);
    for (size_t k = 0; k < n; k++)
        h[k] = (float)(k % nx) * 0.5f;
    put(&secs[0].raw, h, n * sizeof *h); /* little-endian hosts: the floats as they are */
    free(h);
    memcpy(secs[1].id, "BIOM", 4);
    secs[1].flags = 1;
    put_u32(&secs[1].raw, 1);
    put_text(&secs[1].raw, "all");
    for (int c = 0; c < 4; c++)
        put_f32(&secs[1].raw, 1.0f);
    uint8_t *labels = calloc(n, 1);
    put(&secs[1].raw, labels, n);
    free(labels);
    memcpy(secs[2].id, "RCPE", 4);
    secs[2].flags = 1;
    put(&secs[2].raw, "{}", 2);
    bytes b = payload_bytes(secs, 3, cells, cells, cells, cells);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open_memory(b.data, b.size, "large", NULL, &p, &e));
    CHECK(p && trn_payload_height_at(p, 1000.25, 3.0) == 500.125);
    CHECK(p && trn_payload_biome_at(p, 1500.0, 1500.0) == 0);
    trn_payload_free(p);
    for (int k = 0; k < 3; k++)
        free(secs[k].raw.data);
    free(b.data);
}

/* MAPM as docs/payload.md describes it: flags, then five f64 inside their ranges, exactly. */
static bytes mapm(uint8_t flags, const double v[5], size_t drop, bool extra)
{
    bytes b = {NULL, 0};
    put(&b, &flags, 1);
    for (int k = 0; k < 5; k++)
        put_f64(&b, v[k]);
    b.size -= drop;
    if (extra) put(&b, "x", 1);
    return b;
}

static void test_mapping_section(void)
{
    const double ok[5] = {40, 6, 0.5, 0.25, 0.02};
    extra_raw = mapm(5, ok, 0, false);
    bytes b = make_payload(true, "MAPM", 0);
    free(extra_raw.data);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open_memory(b.data, b.size, "m.terrain.bin", NULL, &p, &e));
    free(b.data);
    const trn_material_mapping *m = p ? trn_payload_mapping(p) : NULL;
    CHECK(m && m->texture_arrays && !m->triplanar && m->height_blend);
    CHECK(m && m->triplanar_slope == 40 && m->triplanar_sharpness == 6);
    CHECK(m && m->height_blend_contrast == 0.5 && m->macro_variation == 0.25 &&
          m->macro_scale == 0.02);
    /* No material set and no biome materials: no layers, every sample the tint. */
    CHECK_EQ_INT((int)trn_payload_layer_count(p), 0);
    CHECK_EQ_INT(trn_payload_layer_at(p, 1.0, 1.0), -1);
    trn_payload_free(p);
    p = open_test_payload();
    CHECK(p && trn_payload_mapping(p) == NULL);
    trn_payload_free(p);

    static const struct {
        uint8_t flags;
        double v[5];
        size_t drop;
        bool extra;
        const char *message;
    } bad[] = {
        {8, {40, 6, 0.5, 0.25, 0.02}, 0, false, "bits other than 0..2"},
        {7, {95, 6, 0.5, 0.25, 0.02}, 0, false, "the triplanar slope is 95"},
        {7, {40, 0.5, 0.5, 0.25, 0.02}, 0, false, "the triplanar sharpness is 0.5"},
        {7, {40, 6, 0, 0.25, 0.02}, 0, false, "the height blend contrast is 0"},
        {7, {40, 6, 0.5, 2, 0.02}, 0, false, "the macro variation is 2"},
        {7, {40, 6, 0.5, 0.25, 0}, 0, false, "the macro scale is 0"},
        {7, {40, 6, 0.5, 0.25, 0.02}, 1, false, "cut short"},
        {7, {40, 6, 0.5, 0.25, 0.02}, 0, true, "1 bytes after the mapping"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        extra_raw = mapm(bad[k].flags, bad[k].v, bad[k].drop, bad[k].extra);
        b = make_payload(true, "MAPM", 0);
        free(extra_raw.data);
        p = NULL;
        memset(&e, 0, sizeof e);
        CHECK(trn_payload_open_memory(b.data, b.size, "m.terrain.bin", NULL, &p, &e) != TRN_OK);
        CHECK_CONTAINS(e.message, bad[k].message);
        CHECK_CONTAINS(e.message, "MAPM");
        free(b.data);
    }
    extra_raw = (bytes){NULL, 0};
}

int main(void)
{
    RUN(test_local_queries);
    RUN(test_sections_required_and_unknown);
    RUN(test_placements);
    RUN(test_filter_and_enabled);
    RUN(test_tracker);
    RUN(test_large_section);
    RUN(test_mapping_section);
    return trn_test_finish();
}
