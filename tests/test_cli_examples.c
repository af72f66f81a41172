/* Every shipped example opens in every verb that reads a recipe, and the project in its verbs. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/image.h"
#include "test.h"

static char dir[512];

static const char *const EXAMPLES[] = {"dem_level", "hills",  "island", "lakeside",
                                       "mountains", "valley", "waters", NULL};

/* Run one command line; on an unexpected exit, say which and show its stderr. */
static void expect(int want, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void expect(int want, const char *what, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out = NULL, *err = NULL;
    const int rc = trn_test_run_cli(cmd, &out, &err);
    if (rc != want) fprintf(stderr, "%s: 'terrane %s' exited %d:\n%s\n", what, cmd, rc, err);
    CHECK_EQ_INT(rc, want);
    free(out);
    free(err);
}

/* The examples folder copied beside the demo's dem.tif (dem_level reads it beside itself). */
static void prepare(void)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "'%s' '%s' 16 > /dev/null && cp '%s'/examples/recipes/*.json '%s'/",
             TRN_DEMO_INPUTS_PATH, dir, TRN_SOURCE_DIR, dir);
    CHECK(system(cmd) == 0);
}

static void test_every_verb(void)
{
    for (size_t k = 0; EXAMPLES[k]; k++) {
        const char *name = EXAMPLES[k];
        char recipe[700];
        snprintf(recipe, sizeof recipe, "%s/%s.json", dir, name);
        json_error_t je;
        json_t *doc = json_load_file(recipe, 0, &je);
        CHECK(doc != NULL);
        const json_t *size = json_object_get(doc, "size");
        const double cx = json_number_value(json_array_get(size, 0)) / 2.0;
        const double cz = json_number_value(json_array_get(size, 1)) / 2.0;
        const bool palette = json_object_get(doc, "palette") != NULL;
        json_decref(doc);
        expect(0, name, "info '%s'", recipe);
        expect(0, name, "inspect '%s'", recipe);
        expect(0, name, "graph check '%s'", recipe);
        expect(0, name, "generate '%s' --resolution 64x64 -o '%s/%s.png' -q", recipe, dir, name);
        expect(0, name, "stats '%s' --resolution 64x64", recipe);
        expect(0, name, "explain '%s' --at %g,%g -q", recipe, cx, cz);
        expect(0, name, "water '%s' -q", recipe);
        expect(0, name, "render '%s' -o '%s/%s_shade.png' -q", recipe, dir, name);
        expect(0, name, "mesh '%s' -o '%s/%s.glb' --lod 3 -q", recipe, dir, name);
        expect(0, name, "cook '%s' -o '%s/cooked' -q", recipe, dir);
        /* scatter needs a palette; without one it says so (exit 1), never crashes. */
        expect(palette ? 0 : 1, name, "scatter '%s' -o '%s/%s.txt' -q", recipe, dir, name);
    }
}

/* The project folder: its scene's terrain cooks, and its presets list. */
static void test_project(void)
{
    expect(0, "project", "info '%s/examples/project/world.scene.json'", TRN_SOURCE_DIR);
    expect(0, "project", "presets '%s/examples/project'", TRN_SOURCE_DIR);
    expect(0, "project", "cook '%s/examples/project' -o '%s/project_cooked' -q", TRN_SOURCE_DIR,
           dir);
    /* The scene's inline terrain is cooked beside the cooked scene, which names the payload. */
    char path[700];
    snprintf(path, sizeof path, "%s/project_cooked/world.landscape.terrain.bin", dir);
    CHECK(trn_test_exists(path));
    snprintf(path, sizeof path, "%s/project_cooked/world.scene.json", dir);
    json_error_t je;
    json_t *scene = json_load_file(path, 0, &je);
    const json_t *t = json_object_get(
        json_object_get(json_array_get(json_object_get(scene, "entities"), 0), "components"),
        "Terrain3D");
    CHECK(t && strcmp(json_string_value(json_object_get(t, "payload")),
                      "world.landscape.terrain.bin") == 0);
    CHECK(t && !json_object_get(t, "recipe"));
    json_decref(scene);
}

/* Run one command line expecting exit 0 and no warning on either stream. */
static void quiet(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void quiet(const char *what, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out = NULL, *err = NULL;
    const int rc = trn_test_run_cli(cmd, &out, &err);
    const bool warned = (out && strstr(out, "warning:")) || (err && strstr(err, "warning:"));
    if (rc != 0 || warned)
        fprintf(stderr, "%s: 'terrane %s' exited %d%s:\n%s%s\n", what, cmd, rc,
                warned ? " with a warning" : "", out ? out : "", err ? err : "");
    CHECK_EQ_INT(rc, 0);
    CHECK(!warned);
    free(out);
    free(err);
}

/* The example projects' Terrain assets: a recipe project (terrain_3d: landforms, biome rules,
 * a building site; its Scatter Palette graph) and a graph project (terrain_graph_3d). Every
 * verb reads each without a warning. */
static const char *const ASSETS[] = {"terrain_3d/terrain/landscape",
                                     "terrain_3d/terrain/meadow_scatter",
                                     "terrain_graph_3d/terrain/landscape", NULL};

static void test_example_projects(void)
{
    for (size_t k = 0; ASSETS[k]; k++) {
        char src[800], stem[800];
        snprintf(src, sizeof src, "%s/examples/%s.terrain.json", TRN_SOURCE_DIR, ASSETS[k]);
        snprintf(stem, sizeof stem, "%s/ex%zu", dir, k);
        const char *name = ASSETS[k];
        quiet(name, "info '%s'", src);
        quiet(name, "inspect '%s'", src);
        quiet(name, "graph check '%s'", src);
        quiet(name, "generate '%s' -o '%s.png' --preview '%s_preview.png' -q", src, stem, stem);
        quiet(name, "stats '%s'", src);
        quiet(name, "explain '%s' --at 200,300 -q", src);
        quiet(name, "water '%s' -q", src);
        quiet(name, "render '%s' -o '%s_shade.png' -q", src, stem);
        quiet(name, "mesh '%s' -o '%s.glb' --lod 2 -q", src, stem);
        quiet(name, "cook '%s' -o '%s_cooked' -q", src, stem);
        quiet(name, "scatter '%s' -o '%s_scatter.json' -q", src, stem);
    }
    quiet("terrain_3d", "cook '%s/examples/terrain_3d' -o '%s/t3d' -q", TRN_SOURCE_DIR, dir);
    quiet("terrain_graph_3d", "cook '%s/examples/terrain_graph_3d' -o '%s/tg3d' -q",
          TRN_SOURCE_DIR, dir);
}

/* The palette's six rules each place objects on the landscape; the material set binds soil,
 * sand, snow, wet ground and exposed rock; the graph project's set binds all nine roles and
 * its palette scatters nothing. */
static void test_example_documents(void)
{
    char path[800];
    snprintf(path, sizeof path, "%s/ex0_scatter.json", dir);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    CHECK(doc != NULL);
    const json_t *inst = json_object_get(doc, "instances");
    static const char *const rules[] = {"grass_tufts", "wildflowers", "shrubs",
                                        "pines",       "birches",     "boulders"};
    for (size_t r = 0; r < 6; r++) {
        size_t n = 0;
        for (size_t k = 0; k < json_array_size(inst); k++)
            n += strcmp(json_string_value(json_object_get(json_array_get(inst, k), "rule")),
                        rules[r]) == 0;
        if (!n) fprintf(stderr, "rule %s placed nothing\n", rules[r]);
        CHECK(n > 0);
    }
    json_decref(doc);
    char *out = NULL, *err = NULL;
    snprintf(path, sizeof path, "info '%s/examples/terrain_3d/palettes/meadow.palette.json'",
             TRN_SOURCE_DIR);
    CHECK_EQ_INT(trn_test_run_cli(path, &out, &err), 0);
    CHECK_CONTAINS(out, "placements (6)");
    free(out);
    free(err);
    snprintf(path, sizeof path,
             "info '%s/examples/terrain_3d/materials/landscape.materials.json' --format json",
             TRN_SOURCE_DIR);
    CHECK_EQ_INT(trn_test_run_cli(path, &out, &err), 0);
    doc = json_loads(out ? out : "", 0, &je);
    const json_t *roles = json_object_get(doc, "roles");
    static const char *const bound[] = {"ground", "sand", "snow", "wet_ground", "rock"};
    for (size_t r = 0; r < 5; r++) CHECK(json_is_string(json_object_get(roles, bound[r])));
    CHECK(json_is_object(json_object_get(doc, "mapping")));
    json_decref(doc);
    free(out);
    free(err);
    snprintf(path, sizeof path,
             "info '%s/examples/terrain_graph_3d/materials/landscape.materials.json' --format json",
             TRN_SOURCE_DIR);
    CHECK_EQ_INT(trn_test_run_cli(path, &out, &err), 0);
    doc = json_loads(out ? out : "", 0, &je);
    CHECK_EQ_INT((int)json_integer_value(json_object_get(doc, "bound")), 9);
    json_decref(doc);
    free(out);
    free(err);
    /* The Scatter Palette example: its graph has the node, and its instances are in the payload. */
    snprintf(path, sizeof path, "info '%s/ex1_cooked/meadow_scatter.terrain.bin'", dir);
    CHECK_EQ_INT(trn_test_run_cli(path, &out, &err), 0);
    CHECK_CONTAINS(out, "scatter: 6 rules,");
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/examples/terrain_3d/terrain/meadow_scatter.terrain.json",
             TRN_SOURCE_DIR);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(path, &n);
    CHECK(text && strstr(text, "\"scatter_palette\""));
    free(text);
}

/* The terrain_3d example's five Materials each have a Material document with four image maps:
 * `info` lists them all present, `mesh --uvs` writes them as the glTF's textures, `cook` keeps
 * them in the payload (MATD); and the committed maps are the pixels examples/material_maps.c
 * makes (the program is their source). */
static const char *const MAT_NAMES[] = {"soil", "sand", "snow", "wet_ground", "rock", NULL};
static const char *const MAP_NAMES[] = {"albedo", "normal", "roughness", "height", NULL};

static void test_example_materials(void)
{
    char path[900], cmd[2000];
    char *out = NULL, *err = NULL;
    json_error_t je;
    for (size_t m = 0; MAT_NAMES[m]; m++) {
        snprintf(cmd, sizeof cmd,
                 "info '%s/examples/terrain_3d/materials/%s.material.json' --format json",
                 TRN_SOURCE_DIR, MAT_NAMES[m]);
        CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
        json_t *doc = json_loads(out ? out : "", 0, &je);
        CHECK(doc &&
              strcmp(json_string_value(json_object_get(doc, "input_format")), "material") == 0);
        for (size_t k = 0; MAP_NAMES[k]; k++) {
            const json_t *map = json_object_get(json_object_get(doc, "maps"), MAP_NAMES[k]);
            if (!json_is_true(json_object_get(map, "exists")))
                fprintf(stderr, "%s: the %s map is missing\n", MAT_NAMES[m], MAP_NAMES[k]);
            CHECK(json_is_true(json_object_get(map, "exists")));
        }
        json_decref(doc);
        free(out);
        free(err);
    }
    /* mesh --uvs: the soil's albedo is the ground section's base colour texture */
    snprintf(cmd, sizeof cmd,
             "mesh '%s/examples/terrain_3d/terrain/landscape.terrain.json' -o '%s/uvs.gltf' "
             "--lod 3 --uvs -q",
             TRN_SOURCE_DIR, dir);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/uvs.gltf", dir);
    json_t *gltf = json_load_file(path, 0, &je);
    CHECK(gltf != NULL);
    bool soil = false;
    const json_t *images = json_object_get(gltf, "images");
    for (size_t k = 0; k < json_array_size(images); k++) {
        const char *uri = json_string_value(json_object_get(json_array_get(images, k), "uri"));
        soil |= uri && strstr(uri, "materials/soil/albedo.png") != NULL;
    }
    CHECK(soil);
    json_decref(gltf);
    /* cook: the payload carries the documents (run after test_example_projects' cook) */
    snprintf(cmd, sizeof cmd, "info '%s/ex0_cooked/landscape.terrain.bin'", dir);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(out, "MATD");
    free(out);
    free(err);
    /* the committed maps are what the program makes */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/maps' && '%s' '%s/maps'", dir, TRN_MATERIAL_MAPS_PATH,
             dir);
    CHECK(system(cmd) == 0);
    for (size_t m = 0; MAT_NAMES[m]; m++)
        for (size_t k = 0; MAP_NAMES[k]; k++) {
            char made[900];
            snprintf(path, sizeof path, "%s/examples/terrain_3d/materials/%s/%s.png",
                     TRN_SOURCE_DIR, MAT_NAMES[m], MAP_NAMES[k]);
            snprintf(made, sizeof made, "%s/maps/%s/%s.png", dir, MAT_NAMES[m], MAP_NAMES[k]);
            trn_image a = {0}, b = {0};
            trn_error e;
            CHECK_OK(trn_png_read(path, NULL, &a, &e));
            CHECK_OK(trn_png_read(made, NULL, &b, &e));
            const bool same = a.data && b.data && a.width == 64 && a.width == b.width &&
                              a.height == b.height && a.channels == b.channels &&
                              memcmp(a.data, b.data, (size_t)a.width * a.height * a.channels) == 0;
            if (!same) fprintf(stderr, "%s differs from what material_maps makes\n", path);
            CHECK(same);
            trn_image_dispose(&a);
            trn_image_dispose(&b);
        }
}

/* BeamNG: the level's soil TerrainMaterial takes its Material document's four maps as its
 * baseColor, normal, roughness and height detail textures, resampled to the texture set's
 * size (--texture-size 128, from 64: BeamNG wants a set's textures one size), the detail
 * size divided by the document's texture_scale (2 m / 0.5); a material without a document
 * (the meadow's tint) keeps terrane's placeholders; validate finds nothing wrong. */
static void test_example_beamng_maps(void)
{
    char level[700], cmd[2000], path[900];
    snprintf(level, sizeof level, "%s/bng/levels/land", dir);
    snprintf(cmd, sizeof cmd,
             "generate '%s/examples/terrain_3d/terrain/landscape.terrain.json' --export "
             "beamng:'%s' --texture-size 16",
             TRN_SOURCE_DIR, level);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    CHECK_CONTAINS(err, "detail texture(s) from Material documents' maps");
    CHECK_CONTAINS(err, "0 error(s), 0 warning(s)");
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/art/terrains/main.materials.json", level);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    CHECK(doc != NULL);
    const json_t *soil = NULL, *meadow = NULL;
    const char *key;
    json_t *v;
    json_object_foreach(doc, key, v)
    {
        const char *name = json_string_value(json_object_get(v, "internalName"));
        if (name && strcmp(name, "soil") == 0) soil = v;
        if (name && strcmp(name, "meadow") == 0) meadow = v;
    }
    CHECK(soil && meadow);
    static const char *const fields[] = {"baseColorDetailTex", "normalDetailTex",
                                         "roughnessDetailTex", "heightDetailTex"};
    static const char *const files[] = {"t_terrane_soil_b_d.png", "t_terrane_soil_nm_d.png",
                                        "t_terrane_soil_r_d.png", "t_terrane_soil_h_d.png"};
    static const uint8_t channels[] = {3, 3, 1, 1};
    for (int k = 0; k < 4 && soil; k++) {
        const char *tex = json_string_value(json_object_get(soil, fields[k]));
        CHECK(tex && strstr(tex, files[k]));
        snprintf(path, sizeof path, "%s/art/terrains/%s", level, files[k]);
        trn_image img = {0};
        trn_error e;
        CHECK_OK(trn_png_read(path, NULL, &img, &e));
        CHECK(img.width == 16 && img.height == 16 && img.channels == channels[k]);
        trn_image_dispose(&img);
    }
    CHECK(soil && json_number_value(json_object_get(soil, "baseColorDetailTexSize")) == 4.0);
    const char *grey =
        meadow ? json_string_value(json_object_get(meadow, "baseColorDetailTex")) : NULL;
    CHECK(grey && strstr(grey, "t_terrane_grey_detail.png"));
    /* the soil's detail albedo is its 64 x 64 map shrunk to the set's 16 x 16: each texel the
     * mean of the 4 x 4 texels it covers (a box filter; sampling would keep two of them) */
    snprintf(path, sizeof path, "%s/art/terrains/t_terrane_soil_b_d.png", level);
    char src[900];
    snprintf(src, sizeof src, "%s/examples/terrain_3d/materials/soil/albedo.png", TRN_SOURCE_DIR);
    trn_image a = {0}, b = {0};
    trn_error e;
    CHECK_OK(trn_png_read(src, NULL, &a, &e));
    CHECK_OK(trn_png_read(path, NULL, &b, &e));
    double ma = 0, mb = 0;
    for (size_t k = 0; a.data && k < (size_t)a.width * a.height * 3; k++)
        ma += ((uint8_t *)a.data)[k];
    for (size_t k = 0; b.data && k < (size_t)b.width * b.height * 3; k++)
        mb += ((uint8_t *)b.data)[k];
    ma /= 64.0 * 64 * 3;
    mb /= 16.0 * 16 * 3;
    CHECK(fabs(ma - mb) < 1.0 && ma > 20);
    int worst = 0;
    for (uint32_t y = 0; a.data && b.data && b.width == 16 && y < 16; y++)
        for (uint32_t x = 0; x < 16; x++)
            for (int c = 0; c < 3; c++) {
                const uint8_t *pa = a.data;
                int box = 0;
                for (int q = 0; q < 16; q++)
                    box += pa[((size_t)(4 * y + q / 4) * 64 + 4 * x + q % 4) * 3 + (size_t)c];
                const int d = abs(((uint8_t *)b.data)[((size_t)y * 16 + x) * 3 + (size_t)c] -
                                  (box + 8) / 16);
                if (d > worst) worst = d;
            }
    CHECK(worst <= 1);
    trn_image_dispose(&a);
    trn_image_dispose(&b);
    json_decref(doc);
    /* detail finer than a texel averages out: soil's albedo as stripes one column in four
     * white comes out an even 25% grey (sampling between texels would give stripes of 0% and
     * 50%) */
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s/stripes' && cp -r '%s/examples/terrain_3d' '%s/stripes'", dir,
             TRN_SOURCE_DIR, dir);
    CHECK(system(cmd) == 0);
    trn_image stripes = {0};
    CHECK_OK(trn_image_init(&stripes, 64, 64, 3, 8, &e));
    for (size_t k = 0; stripes.data && k < 64 * 64; k++)
        memset((uint8_t *)stripes.data + k * 3, k % 4 == 1 ? 255 : 0, 3);
    trn_png_options po;
    trn_png_options_default(&po);
    snprintf(path, sizeof path, "%s/stripes/materials/soil/albedo.png", dir);
    CHECK_OK(trn_png_write(path, &stripes, &po, NULL, NULL, &e));
    trn_image_dispose(&stripes);
    snprintf(cmd, sizeof cmd,
             "generate '%s/stripes/terrain/landscape.terrain.json' --export "
             "beamng:'%s/bng3/levels/land' --texture-size 16 -q",
             dir, dir);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    free(out);
    free(err);
    snprintf(path, sizeof path, "%s/bng3/levels/land/art/terrains/t_terrane_soil_b_d.png", dir);
    CHECK_OK(trn_png_read(path, NULL, &b, &e));
    bool even = b.data && b.channels == 3 && b.width == 16;
    for (size_t k = 0; even && k < (size_t)b.width * b.height * 3; k++)
        even = ((uint8_t *)b.data)[k] == 64; /* 255 / 4 */
    CHECK(even);
    trn_image_dispose(&b);
    /* a document whose map is missing fails the export at the map's line and column */
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s/broken' && cp -r '%s/examples/terrain_3d' '%s/broken' && rm "
             "'%s/broken/materials/soil/normal.png'",
             dir, TRN_SOURCE_DIR, dir, dir);
    CHECK(system(cmd) == 0);
    snprintf(cmd, sizeof cmd,
             "generate '%s/broken/terrain/landscape.terrain.json' --export beamng:'%s/bng2/levels/"
             "land' -q",
             dir, dir);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "soil.material.json:7:15: maps.normal: the normal map soil/normal.png is "
                        "missing");
    free(out);
    free(err);
}

/* Decode a PNG of the test (NULL data when it does not read). */
static trn_image png_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static trn_image png_of(const char *fmt, ...)
{
    char path[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    trn_image img = {0};
    trn_error e;
    if (trn_png_read(path, NULL, &img, &e)) fprintf(stderr, "%s: %s\n", path, e.message);
    return img;
}

/* The Unity export's terrain layers on terrain_3d: a layer whose material has a Material
 * document gets the document's maps (its albedo as the diffuse and its normal map, texel for
 * texel; a mask map of smoothness 1 - roughness and the height) and the tile size its texture
 * scales give; a layer without one a flat diffuse of its colour. */
static void test_example_unity_layers(void)
{
    char cmd[2000];
    snprintf(cmd, sizeof cmd,
             "generate '%s/examples/terrain_3d/terrain/landscape.terrain.json' --export "
             "unity:'%s/unity' -q --format json",
             TRN_SOURCE_DIR, dir);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    json_error_t je;
    json_t *sum = json_loads(out ? out : "", 0, &je);
    const json_t *u = json_object_get(sum, "unity");
    CHECK(json_integer_value(json_object_get(u, "layer_documents")) >= 3);
    free(out);
    free(err);
    snprintf(cmd, sizeof cmd, "%s/unity/landscape.json", dir);
    json_t *doc = json_load_file(cmd, 0, &je);
    const json_t *splat = json_object_get(doc, "splat");
    const json_t *names = json_object_get(splat, "layers");
    const json_t *layers = json_object_get(splat, "terrain_layers");
    CHECK(json_array_size(layers) == json_array_size(names) && json_array_size(names) > 1);
    int soil = -1, plain = -1;
    for (size_t k = 0; k < json_array_size(names); k++) {
        const char *n = json_string_value(json_array_get(names, k));
        if (n && strcmp(n, "asset://materials/soil") == 0) soil = (int)k;
        if (n && strncmp(n, "asset://", 8) != 0 && plain < 0) plain = (int)k;
    }
    CHECK(soil >= 0 && plain >= 0);
    const json_t *l = json_array_get(layers, (size_t)soil);
    CHECK(json_real_value(json_array_get(json_object_get(l, "tile_size"), 0)) == 2.0);
    const char *docname = json_string_value(json_object_get(l, "document"));
    CHECK(docname && strcmp(docname, "materials/soil.material.json") == 0);
    const char *src = "examples/terrain_3d/materials/soil";
    static const char *const kinds[2] = {"diffuse", "normal"};
    static const char *const maps[2] = {"albedo", "normal"};
    for (int m = 0; m < 2 && soil >= 0; m++) {
        const char *f = json_string_value(json_object_get(l, kinds[m]));
        CHECK(f != NULL);
        trn_image a = png_of("%s/unity/%s", dir, f ? f : "");
        trn_image b = png_of("%s/%s/%s.png", TRN_SOURCE_DIR, src, maps[m]);
        CHECK(a.data && b.data && a.width == b.width && a.height == b.height &&
              a.channels == 3 && b.channels == 3 &&
              memcmp(a.data, b.data, (size_t)a.width * a.height * 3) == 0);
        CHECK(a.srgb == (m == 0));
        trn_image_dispose(&a);
        trn_image_dispose(&b);
    }
    const char *mf = json_string_value(json_object_get(l, "mask"));
    trn_image mask = png_of("%s/unity/%s", dir, mf ? mf : "");
    trn_image rough = png_of("%s/%s/roughness.png", TRN_SOURCE_DIR, src);
    trn_image height = png_of("%s/%s/height.png", TRN_SOURCE_DIR, src);
    bool same = mask.data && rough.data && height.data && mask.channels == 4 &&
                mask.width == rough.width && mask.height == rough.height;
    for (size_t p = 0; same && p < (size_t)mask.width * mask.height; p++) {
        const uint8_t *t = (const uint8_t *)mask.data + p * 4;
        same = t[0] == 0 && t[1] == 255 && t[2] == ((const uint8_t *)height.data)[p] &&
               t[3] == 255 - ((const uint8_t *)rough.data)[p];
    }
    CHECK(same);
    trn_image_dispose(&mask);
    trn_image_dispose(&rough);
    trn_image_dispose(&height);
    /* a layer without a document: a flat diffuse, no normal or mask */
    l = json_array_get(layers, (size_t)(plain < 0 ? 0 : plain));
    CHECK(json_is_null(json_object_get(l, "normal")) && json_is_null(json_object_get(l, "document")));
    const char *pf = json_string_value(json_object_get(l, "diffuse"));
    trn_image flat = png_of("%s/unity/%s", dir, pf ? pf : "");
    bool even = flat.data && flat.channels == 3;
    for (size_t p = 1; even && p < (size_t)flat.width * flat.height; p++)
        even = memcmp((uint8_t *)flat.data + p * 3, flat.data, 3) == 0;
    CHECK(even);
    trn_image_dispose(&flat);
    json_decref(doc);
    json_decref(sum);
    /* a document whose map is missing fails the export at the map's line and column (the copy
     * test_example_beamng_maps broke) */
    snprintf(cmd, sizeof cmd,
             "generate '%s/broken/terrain/landscape.terrain.json' --export unity:'%s/unity2' -q",
             dir, dir);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 1);
    CHECK_CONTAINS(err, "soil.material.json:7:15: maps.normal: the normal map soil/normal.png is "
                        "missing");
    free(out);
    free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(dir, sizeof dir)) return 1;
    prepare();
    RUN(test_every_verb);
    RUN(test_project);
    RUN(test_example_projects);
    RUN(test_example_documents);
    RUN(test_example_materials);
    RUN(test_example_beamng_maps);
    RUN(test_example_unity_layers);
    return trn_test_finish();
}
