/* Command-line tests for terrane mesh: .glb, .gltf and .obj outputs, the summary, bad options. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "test.h"

static char tmp[512];
static char *out_text, *err_text;

static void reset_output(void)
{
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
}

#define cli(fmt, ...) (reset_output(), trn_test_run_clif(fmt, &out_text, &err_text, __VA_ARGS__))

/* A 64 x 64 heightmap (.r16, 65 x 65 samples): a smooth dome, a steep ridge along x = 40. */
static const char *write_heightmap(void)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/h.r16", tmp);
    uint8_t *data = malloc(65u * 65u * 2u);
    for (int j = 0; j <= 64; j++)
        for (int i = 0; i <= 64; i++) {
            const double dome = 20000.0 * exp(-((i - 32) * (i - 32) + (j - 32) * (j - 32)) / 600.0);
            const double ridge = i == 40 ? 12000.0 : 0.0;
            const unsigned v = (unsigned)(dome + ridge);
            data[2 * (j * 65 + i)] = (uint8_t)v;
            data[2 * (j * 65 + i) + 1] = (uint8_t)(v >> 8);
        }
    CHECK(trn_test_write_file(path, data, 65u * 65u * 2u));
    free(data);
    return path;
}

/* The scatter tests' bowl: 64 x 64 cells, a lake at 5 m in a square bowl, shrubs on the rim. */
static const char *write_recipe(const char *name, bool palette)
{
    static char path[700];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    char text[4096];
    snprintf(
        text, sizeof text,
        "{\"size\": [64, 64], \"resolution\": [64, 64], \"seed\": 3, \"sea_level\": -100,\n"
        " \"default_landform\": \"flat\", \"landforms\": {\"flat\": {\"height_variation\": 0}},\n"
        " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, "
        "1], \"material\": \"materials/meadow\", \"texture_scale\": 0.5}},\n"
        "%s"
        " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
        "  {\"id\": \"rim\", \"type\": \"flat_terrain\", \"params\": {\"height\": 10}},\n"
        "  {\"id\": \"floor\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
        "  {\"id\": \"sq\", \"type\": \"polygon_mask\", \"params\": {\"points\": [[16, 16], [48, "
        "16], [48, 48], [16, 48]], \"falloff\": 0}, \"inputs\": {\"field\": {\"node\": "
        "\"rim\"}}},\n"
        "  {\"id\": \"bowl\", \"type\": \"height_blend\", \"params\": {\"amount\": 1}, \"inputs\": "
        "{\"a\": {\"node\": \"rim\"}, \"b\": {\"node\": \"floor\"}, \"mask\": {\"node\": "
        "\"sq\"}}},\n"
        "  {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"level\": 5, \"center\": "
        "[32, 32], \"radius\": 100}, \"inputs\": {\"field\": {\"node\": \"bowl\"}}},\n"
        "  {\"id\": \"bio\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
        "\"lake\", \"pin\": \"field\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}},\n"
        "  {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"bio\"}, \"water\": {\"node\": \"lake\", \"pin\": \"water\"}}}]}}\n",
        palette ? " \"palette\": {\"format_version\": 3, \"name\": \"Shrubs\", \"placements\": "
                  "{\"shrub\": {\"prefab\": \"prefab://shrub\", \"density\": 0.25, "
                  "\"candidate_spacing\": 2, \"spacing\": 4}}},\n"
                : "");
    CHECK(trn_test_write_file(path, text, strlen(text)));
    return path;
}

static json_t *summary(void)
{
    json_error_t je;
    json_t *o = out_text ? json_loads(out_text, 0, &je) : NULL;
    CHECK(o != NULL);
    return o;
}

static json_int_t jint(json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

static void test_heightmap_outputs(void)
{
    const char *hm = write_heightmap();
    char glb[800], gltf[800], bin[800], obj[800], mtl[800];
    snprintf(glb, sizeof glb, "%s/a.glb", tmp);
    snprintf(gltf, sizeof gltf, "%s/b.gltf", tmp);
    snprintf(bin, sizeof bin, "%s/b.bin", tmp);
    snprintf(obj, sizeof obj, "%s/c.obj", tmp);
    snprintf(mtl, sizeof mtl, "%s/c.mtl", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --chunk-cells 16 --format json -q", hm, glb), 0);
    json_t *o = summary();
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "output_format")), "glb") == 0);
        CHECK(strcmp(json_string_value(json_object_get(o, "selection")), "finest") == 0);
        CHECK_EQ_INT(jint(o, "chunks"), 16);
        CHECK_EQ_INT(jint(o, "chunk_cells"), 16);
        CHECK_EQ_INT(jint(o, "lod_count"), 5);
        /* level 0 everywhere: 64 x 64 cells, two triangles each, plus skirts */
        CHECK(jint(o, "triangles") > 2 * 64 * 64);
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(o, "chunks_per_lod"), 0)),
                     16);
        CHECK(json_is_true(json_object_get(o, "roles")));
        size_t size = 0;
        uint8_t *data = trn_test_read_file(glb, &size);
        CHECK(data && size > 20 && memcmp(data, "glTF", 4) == 0);
        CHECK_EQ_INT(jint(o, "bytes"), size);
        CHECK(strcmp(json_string_value(json_array_get(json_object_get(o, "outputs"), 0)), glb) == 0);
        free(data);
        json_decref(o);
    }
    /* .gltf: its .bin beside it; a coarser fixed level has fewer triangles */
    CHECK_EQ_INT(cli("mesh %s -o %s --lod 2 --chunks --chunk-cells 16 --format json -q", hm, gltf),
                 0);
    o = summary();
    if (o) {
        CHECK_EQ_INT(json_array_size(json_object_get(o, "outputs")), 2);
        CHECK(json_integer_value(json_array_get(json_object_get(o, "chunks_per_lod"), 2)) == 16);
        CHECK(jint(o, "triangles") < 2 * 64 * 64);
        json_decref(o);
    }
    CHECK(trn_test_exists(bin));
    size_t size = 0;
    char *text = (char *)trn_test_read_file(gltf, &size);
    CHECK_CONTAINS(text, "\"chunk_3_3\"");
    CHECK_CONTAINS(text, "\"uri\":\"b.bin\"");
    CHECK_CONTAINS(text, "\"generator\":\"terrane\"");
    free(text);
    /* --max-error: one adaptive level, far fewer triangles than the grid, no skirts, the same
     * bytes on any thread count */
    char e1[800], e2[800];
    snprintf(e1, sizeof e1, "%s/e1.glb", tmp);
    snprintf(e2, sizeof e2, "%s/e2.glb", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --max-error 0.5 --chunk-cells 16 --chunks --threads 1 "
                     "--format json -q",
                     hm, e1),
                 0);
    o = summary();
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "selection")), "max-error") == 0);
        CHECK_EQ_INT(jint(o, "lod_count"), 1);
        CHECK(jint(o, "triangles") < 2 * 64 * 64 / 2);
        CHECK(jint(o, "triangles") > 2 * 16);
        json_decref(o);
    }
    CHECK_EQ_INT(
        cli("mesh %s -o %s --max-error 0.5 --chunk-cells 16 --chunks --threads 2 -q", hm, e2), 0);
    CHECK(trn_test_same_bytes(e1, e2));
    /* with --camera: adaptive levels within 0.5, 1, 2, ... m, coarser far away */
    CHECK_EQ_INT(cli("mesh %s -o %s --camera -3000,500,-3000 --max-error 0.5 --chunk-cells 16 "
                     "--chunks --format json -q",
                     hm, e2),
                 0);
    o = summary();
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "selection")), "camera") == 0);
        CHECK(json_real_value(json_object_get(o, "max_error")) == 0.5);
        CHECK_EQ_INT(jint(o, "lod_count"), 5);
        json_t *per = json_object_get(o, "chunks_per_lod");
        CHECK(json_integer_value(json_array_get(per, 0)) < 16);
        json_decref(o);
    }
    /* .obj and its .mtl */
    CHECK_EQ_INT(cli("mesh %s %s --max-error 50 -q", hm, obj), 0);
    CHECK(trn_test_exists(mtl));
    text = (char *)trn_test_read_file(obj, &size);
    CHECK_CONTAINS(text, "mtllib c.mtl\n");
    CHECK_CONTAINS(text, "usemtl ");
    free(text);
    /* a text note without --format json */
    CHECK_EQ_INT(cli("mesh %s -o %s", hm, glb), 0);
    CHECK_CONTAINS(err_text, "wrote");
    CHECK_CONTAINS(err_text, "triangles");
    /* the same bytes for any thread count */
    char g1[800], g2[800];
    snprintf(g1, sizeof g1, "%s/t1.glb", tmp);
    snprintf(g2, sizeof g2, "%s/t2.glb", tmp);
    CHECK_EQ_INT(
        cli("mesh %s -o %s --chunks --chunk-cells 8 --camera 0,30,0 --threads 1 -q", hm, g1), 0);
    CHECK_EQ_INT(
        cli("mesh %s -o %s --chunks --chunk-cells 8 --camera 0,30,0 --threads 2 -q", hm, g2), 0);
    CHECK(trn_test_same_bytes(g1, g2));
}

static void test_camera(void)
{
    const char *hm = write_heightmap();
    char glb[800];
    snprintf(glb, sizeof glb, "%s/cam.glb", tmp);
    /* far away: coarse; pixels 0: level 0 everywhere */
    CHECK_EQ_INT(
        cli("mesh %s -o %s --chunk-cells 16 --camera -3000,500,-3000 --format json -q", hm, glb),
        0);
    json_t *o = summary();
    json_int_t far_tris = o ? jint(o, "triangles") : 0;
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "selection")), "camera") == 0);
        CHECK(json_real_value(json_object_get(o, "lod_error_pixels")) == 2.0);
        CHECK(json_integer_value(json_array_get(json_object_get(o, "chunks_per_lod"), 0)) < 16);
    }
    json_decref(o);
    CHECK_EQ_INT(cli("mesh %s -o %s --chunk-cells 16 --camera -3000,500,-3000 --lod-error-pixels 0 "
                     "--format json -q",
                     hm, glb),
                 0);
    o = summary();
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(o, "chunks_per_lod"), 0)),
                     16);
        CHECK(jint(o, "triangles") > far_tris);
    }
    json_decref(o);
    /* near: finer than far */
    CHECK_EQ_INT(cli("mesh %s -o %s --chunk-cells 16 --camera 32,40,32 --fov 45 "
                     "--viewport-height 2160 --format json -q",
                     hm, glb),
                 0);
    o = summary();
    if (o) CHECK(jint(o, "triangles") > far_tris);
    json_decref(o);
}

/* Regular levels are built after the selection, the selected ones only (trn_mesh_realize):
 * the files must be byte for byte those the CLI wrote when it built every level of every chunk
 * first (hashes taken from that build), in every container and selection. */
static void test_regular_bytes(void)
{
    const char *hm = write_heightmap();
    static const struct {
        const char *args, *files[2];
        uint64_t hash[2];
    } cases[] = {
        {"--chunk-cells 8 --camera 32,40,32", {"r1.glb", NULL}, {0xe23f3e89cfbb2585ull, 0}},
        {"--chunk-cells 8 --camera 10,60,-20 --chunks --uvs",
         {"r2.gltf", "r2.bin"},
         {0x28cfc703ffbe52bcull, 0x51830268fa25cbf2ull}},
        {"--chunk-cells 16 --lod 1 --chunks",
         {"r3.obj", "r3.mtl"},
         {0x4f108cc6f91815cdull, 0x44afda9b44bd2139ull}},
        {"--threads 1", {"r4.glb", NULL}, {0x628f54d7c6fc73d1ull, 0}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        CHECK_EQ_INT(cli("mesh %s %s -o %s/%s -q", hm, cases[c].args, tmp, cases[c].files[0]), 0);
        for (int f = 0; f < 2 && cases[c].files[f]; f++) {
            char path[800];
            snprintf(path, sizeof path, "%s/%s", tmp, cases[c].files[f]);
            size_t n = 0;
            uint8_t *data = trn_test_read_file(path, &n);
            CHECK(data != NULL);
            const uint64_t h = data ? (uint64_t)XXH64(data, n, 0) : 0;
            if (h != cases[c].hash[f])
                fprintf(stderr, "  %s: XXH64 0x%016llxull, expected 0x%016llxull\n",
                        cases[c].files[f], (unsigned long long)h,
                        (unsigned long long)cases[c].hash[f]);
            CHECK(h == cases[c].hash[f]);
            free(data);
        }
    }
}

static void test_recipe(void)
{
    const char *recipe = write_recipe("bowl.json", true);
    char glb[800];
    snprintf(glb, sizeof glb, "%s/bowl.glb", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --chunks --format json -q", recipe, glb), 0);
    json_t *o = summary();
    if (o) {
        CHECK(strcmp(json_string_value(json_object_get(o, "input_format")), "recipe") == 0);
        CHECK_EQ_INT(jint(o, "chunk_cells"), 32); /* the recipe's chunk size */
        CHECK_EQ_INT(jint(o, "chunks"), 4);
        CHECK_EQ_INT(jint(o, "water_body_count"), 1);
        CHECK(jint(o, "instances") > 0);
    }
    json_decref(o);
    size_t size = 0;
    uint8_t *data = trn_test_read_file(glb, &size);
    if (data && size > 20) {
        const uint32_t jl = (uint32_t)data[12] | (uint32_t)data[13] << 8 |
                            (uint32_t)data[14] << 16 | (uint32_t)data[15] << 24;
        char *json = malloc(jl + 1u);
        memcpy(json, data + 20, jl);
        json[jl] = '\0';
        CHECK_CONTAINS(json, "\"name\":\"water_lake\"");
        CHECK_CONTAINS(json, "\"name\":\"underwater\"");
        CHECK_CONTAINS(json, "\"prefab\":\"prefab://shrub\"");
        CHECK_CONTAINS(json, "\"alphaMode\":\"BLEND\"");
        free(json);
    }
    free(data);
    CHECK_EQ_INT(cli("mesh %s -o %s --no-water --no-instances --chunk-cells 64 --format json -q",
                     recipe, glb),
                 0);
    o = summary();
    if (o) {
        CHECK_EQ_INT(jint(o, "water_body_count"), 0);
        CHECK_EQ_INT(jint(o, "instances"), 0);
        CHECK_EQ_INT(jint(o, "chunks"), 1);
    }
    json_decref(o);
    /* a recipe without a palette meshes fine */
    const char *bare = write_recipe("bare.json", false);
    CHECK_EQ_INT(cli("mesh %s -o %s --format json -q", bare, glb), 0);
    o = summary();
    if (o) CHECK_EQ_INT(jint(o, "instances"), 0);
    json_decref(o);
}

/* The JSON chunk of a .glb as a string (malloc'd), NULL when unreadable. */
static char *glb_json(const char *path)
{
    size_t size = 0;
    uint8_t *data = trn_test_read_file(path, &size);
    char *json = NULL;
    if (data && size > 20) {
        const uint32_t jl = (uint32_t)data[12] | (uint32_t)data[13] << 8 |
                            (uint32_t)data[14] << 16 | (uint32_t)data[15] << 24;
        json = malloc(jl + 1u);
        memcpy(json, data + 20, jl);
        json[jl] = '\0';
    }
    free(data);
    return json;
}

/* --uvs takes the recipe biomes' texture_scale, the materials carry the biome's material id,
 * --collider-error adds the collider node; without them no UVs and no collider. */
static void test_uvs_collider(void)
{
    const char *recipe = write_recipe("uvbowl.json", false);
    char glb[800];
    snprintf(glb, sizeof glb, "%s/uv.glb", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s -q", recipe, glb), 0);
    char *json = glb_json(glb);
    CHECK(json != NULL);
    if (json) {
        CHECK(!strstr(json, "TEXCOORD_0"));
        CHECK(!strstr(json, "\"collider\""));
        CHECK(!strstr(json, "uv_scale"));
        CHECK_CONTAINS(json, "\"biomes\":[{\"name\":\"meadow\",\"material\":\"materials/meadow\","
                             "\"texture_scale\":0.5}]");
    }
    free(json);
    CHECK_EQ_INT(cli("mesh %s -o %s --uvs --collider-error 0.25 --format json -q", recipe, glb), 0);
    json_t *o = summary();
    json_int_t plain = o ? jint(o, "triangles") : 0;
    json_decref(o);
    json = glb_json(glb);
    if (json) {
        CHECK_CONTAINS(json, "\"TEXCOORD_0\"");
        CHECK_CONTAINS(json, "\"uv_scale\":0.5");
        CHECK_CONTAINS(json, "\"name\":\"collider\"");
        CHECK_CONTAINS(json, "\"extras\":{\"collider\":true,\"max_error\":0.25}");
    }
    free(json);
    CHECK_EQ_INT(cli("mesh %s -o %s --uv-scale 2 --format json -q", recipe, glb), 0);
    o = summary();
    if (o) CHECK(jint(o, "triangles") < plain); /* the collider's triangles counted above */
    json_decref(o);
    json = glb_json(glb);
    if (json) CHECK_CONTAINS(json, "\"uv_scale\":2");
    free(json);
    /* a plain heightmap: UVs in metres */
    const char *hm = write_heightmap();
    char obj[800];
    snprintf(obj, sizeof obj, "%s/uvh.obj", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --uvs --collider-error 1 -q", hm, obj), 0);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(obj, &size);
    if (text) {
        CHECK_CONTAINS(text, "\nvt 64 0\n");
        CHECK_CONTAINS(text, "\nvt 0 64\n");
        CHECK_CONTAINS(text, "\no collider\n");
    }
    free(text);
    CHECK_EQ_INT(cli("mesh %s -o %s --sections biome", hm, obj), 2);
    CHECK_CONTAINS(err_text, "--sections biome is for recipes");
    CHECK_EQ_INT(cli("mesh %s -o %s --sections grass", hm, obj), 2);
    CHECK_CONTAINS(err_text, "role or biome");
    /* biome sections: one material per biome, named by it, in glTF and OBJ */
    CHECK_EQ_INT(cli("mesh %s -o %s --sections biome --uvs -q", recipe, glb), 0);
    json = glb_json(glb);
    if (json) {
        CHECK_CONTAINS(json, "\"name\":\"meadow\"");
        CHECK_CONTAINS(json, "\"extras\":{\"biome\":\"meadow\",\"material\":\"materials/meadow\","
                             "\"texture_scale\":0.5,\"uv_scale\":0.5}");
        CHECK(!strstr(json, "\"name\":\"grass\"") && !strstr(json, "\"name\":\"underwater\""));
    }
    free(json);
    char robj[800], rmtl[800];
    snprintf(robj, sizeof robj, "%s/rb.obj", tmp);
    snprintf(rmtl, sizeof rmtl, "%s/rb.mtl", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --sections biome -q", recipe, robj), 0);
    text = (char *)trn_test_read_file(robj, &size);
    if (text) CHECK_CONTAINS(text, "\nusemtl biome_meadow\n");
    free(text);
    text = (char *)trn_test_read_file(rmtl, &size);
    if (text) CHECK_CONTAINS(text, "newmtl biome_meadow\n");
    free(text);
    CHECK_EQ_INT(cli("mesh %s -o %s --uv-scale 0", hm, obj), 2);
    CHECK_CONTAINS(err_text, "--uv-scale");
    CHECK_EQ_INT(cli("mesh %s -o %s --uv-scale nan", hm, obj), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --collider-error -1", hm, obj), 2);
    CHECK_CONTAINS(err_text, "--collider-error");
    CHECK_EQ_INT(cli("mesh %s -o %s --collider-error inf", hm, obj), 2);
}

static void test_bad_options(void)
{
    const char *hm = write_heightmap();
    char out[800];
    snprintf(out, sizeof out, "%s/bad.glb", tmp);
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 0,0,0 --lod-error-pixels -1", hm, out), 2);
    CHECK_CONTAINS(err_text, "--lod-error-pixels");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 0,0,0 --lod-error-pixels nan", hm, out), 2);
    CHECK_CONTAINS(err_text, "--lod-error-pixels");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 0,0,0 --lod-error-pixels inf", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --lod-error-pixels 1", hm, out), 2);
    CHECK_CONTAINS(err_text, "--camera");
    CHECK_EQ_INT(cli("mesh %s -o %s --lod 1 --max-error 2", hm, out), 2);
    CHECK_CONTAINS(err_text, "exclude each other");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 1,2", hm, out), 2);
    CHECK_CONTAINS(err_text, "X,Y,Z");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 1,2,3,4", hm, out), 2);
    CHECK_CONTAINS(err_text, "X,Y,Z");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 1,,3", hm, out), 2);
    CHECK_CONTAINS(err_text, "--camera expects a finite number");
    CHECK_EQ_INT(cli("mesh %s -o %s --camera 0,0,0 --fov 180", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --max-error -0.5", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --max-error 0.5 --skirt-depth 2", hm, out), 2);
    CHECK_CONTAINS(err_text, "take no skirt");
    CHECK_EQ_INT(cli("mesh %s -o %s --chunk-cells 0", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --chunk-cells 8193", hm, out), 2);
    CHECK_CONTAINS(err_text, "1 to 8192");
    CHECK_EQ_INT(cli("mesh %s -o %s --lod 5 --chunk-cells 16", hm, out), 2);
    CHECK_CONTAINS(err_text, "levels 0 to 4");
    CHECK(!trn_test_exists(out));
    CHECK_EQ_INT(cli("mesh %s -o %s/x.png", hm, tmp), 2);
    CHECK_CONTAINS(err_text, ".glb, .gltf or .obj");
    CHECK_EQ_INT(cli("mesh %s -o %s --embed", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --no-water", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s -o %s --bogus", hm, out), 2);
    CHECK_EQ_INT(cli("mesh %s", hm), 2);
    CHECK_EQ_INT(cli("mesh -o %s", out), 2);
    /* a missing input: an error naming it, nothing written */
    CHECK_EQ_INT(cli("mesh %s/none.r16 -o %s", tmp, out), 1);
    CHECK_CONTAINS(err_text, "none.r16");
    CHECK(!trn_test_exists(out));
    /* the output may not replace the input, nor its .bin/.mtl */
    char same[800];
    snprintf(same, sizeof same, "%s/h.obj", tmp);
    CHECK(trn_test_write_file(same, "x", 1));
    char mtl_in[800];
    snprintf(mtl_in, sizeof mtl_in, "%s/h.mtl", tmp);
    CHECK(trn_test_write_file(mtl_in, "x", 1));
    CHECK_EQ_INT(cli("mesh %s -o %s", mtl_in, same), 2);
    size_t size = 0;
    char *text = (char *)trn_test_read_file(mtl_in, &size);
    CHECK(text && size == 1);
    free(text);
    CHECK(!trn_test_exists(out));
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_heightmap_outputs);
    RUN(test_camera);
    RUN(test_regular_bytes);
    RUN(test_recipe);
    RUN(test_uvs_collider);
    RUN(test_bad_options);
    return trn_test_finish();
}
