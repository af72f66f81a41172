/* Command-line tests for terrane generate and terrane explain: every output format checked
 * against the library, the BeamNG export validated, explain's exact lines, exit codes. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/generate.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/stationeers.h"
#include "test.h"

static char tmp[512];
static char recipe_path[1024];

/* 127 cells: 128 samples a side, a size BeamNG takes without a warning. */
static const char *const recipe_text =
    "{\n"
    "  \"size\": [128, 128],\n"
    "  \"resolution\": [127, 127],\n"
    "  \"seed\": 7,\n"
    "  \"sea_level\": 8.5,\n"
    "  \"default_landform\": \"hills\",\n"
    "  \"landforms\": {\"hills\": {\"base_height\": -14, \"height_variation\": 48,\n"
    "                \"feature_size\": 64, \"roughness\": 0.5, \"octaves\": 5,\n"
    "                \"warp_amplitude\": 8, \"warp_feature_size\": 48}},\n"
    "  \"default_biome\": \"meadow\",\n"
    "  \"biomes\": {\n"
    "    \"meadow\": {\"color\": [0.3, 0.6, 0.2, 1]},\n"
    "    \"sand\": {\"color\": [0.85, 0.8, 0.55, 1]},\n"
    "    \"rock\": {\"color\": [0.5, 0.48, 0.45, 1]},\n"
    "    \"unused\": {\"color\": [1, 0, 1, 1]}\n"
    "  },\n"
    "  \"rules\": [\n"
    "    {\"id\": \"shoreline\", \"biome\": \"sand\", \"priority\": 30, \"blend\": 1.5,\n"
    "     \"water_distance\": [0, 6]},\n"
    "    {\"id\": \"cliffs\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [30, 90]},\n"
    "    {\"id\": \"beach\", \"biome\": \"sand\", \"priority\": 5, \"elevation\": [-100, 9],\n"
    "     \"substrate\": [\"sand\"]}\n"
    "  ]\n"
    "}\n";

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* The same recipe generated in this process, for comparisons. */
static trn_recipe recipe;
static trn_generated gen;

static size_t samples(void)
{
    return trn_field_sample_count(&gen.field);
}

static void test_help_and_usage(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate --help", &out, &err), 0);
    CHECK_CONTAINS(out, "usage: terrane generate RECIPE -o OUT");
    CHECK_CONTAINS(out, "examples:");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain --help", &out, &err), 0);
    CHECK_CONTAINS(out, "usage: terrane explain RECIPE --at X,Z");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s'", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "nothing to write");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/x.tif'", &out, &err, recipe_path, tmp), 2);
    CHECK_CONTAINS(err, "name it .png, .r16, .r32, .ter or .dat");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o x.png --bogus", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --export '%s/levels/x'", &out, &err, recipe_path, tmp), 2);
    CHECK_CONTAINS(err, "--export takes beamng:DIR/levels/NAME");
    free(out), free(err);
    /* An output that is the recipe under another name (a hard link) is refused before
     * generating, and the recipe is untouched. */
    char linked[700];
    snprintf(linked, sizeof linked, "%s/recipe_link.png", tmp);
    CHECK(link(recipe_path, linked) == 0);
    size_t before_size = 0;
    uint8_t *before = trn_test_read_file(recipe_path, &before_size);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s'", &out, &err, recipe_path, linked), 2);
    CHECK_CONTAINS(err, "is the input");
    CHECK_CONTAINS(err, "hard link");
    CHECK(!strstr(err, "graph (")); /* nothing was generated */
    size_t after_size = 0;
    uint8_t *after = trn_test_read_file(recipe_path, &after_size);
    CHECK(before && after && before_size == after_size && !memcmp(before, after, after_size));
    free(before);
    free(after);
    unlink(linked);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --biome-index -o '%s/a.png'", &out, &err,
                                   recipe_path, tmp),
                 2);
    CHECK_CONTAINS(err, "--biome-index changes --biomes");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s'", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "needs a position: --at X,Z");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 10", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "--at expects X,Z as two finite numbers, got '10'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 1,2 --frob", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "unknown option '--frob'");
    free(out), free(err);
}

static void test_bad_recipes(void)
{
    char *out, *err, p[1024];
    /* missing file */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s/none.json' -o '%s/a.png'", &out, &err, tmp, tmp),
                 1);
    CHECK_CONTAINS(err, "none.json");
    free(out), free(err);
    /* JSON syntax error: line and column */
    tmp_path(p, sizeof p, "broken.json");
    const char *broken = "{\n  \"size\": [128, 128],\n  \"seed\": 7,,\n}\n";
    CHECK(trn_test_write_file(p, broken, strlen(broken)));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/a.png'", &out, &err, p, tmp), 1);
    CHECK_CONTAINS(err, "broken.json:3:");
    CHECK(!trn_test_exists(tmp_path(p, sizeof p, "a.png")));
    free(out), free(err);
    /* an unknown key, then explain on the same file */
    tmp_path(p, sizeof p, "unknown.json");
    char *text = malloc(strlen(recipe_text) + 32);
    strcpy(text, "{\"colour\": 1,");
    strcat(text, recipe_text + 1);
    CHECK(trn_test_write_file(p, text, strlen(text)));
    free(text);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 1,1", &out, &err, p), 1);
    CHECK_CONTAINS(err, "colour");
    CHECK_CONTAINS(err, "unknown.json:1:");
    CHECK(out && out[0] == '\0'); /* nothing on stdout */
    free(out), free(err);
    /* a non-square grid cannot become a .ter or a BeamNG level (refused before generating) */
    tmp_path(p, sizeof p, "wide.json");
    const char *wide = "{\"size\": [200, 100], \"resolution\": [40, 20], \"seed\": 1,\n"
                       " \"default_landform\": \"l\", \"landforms\": {\"l\": {}},\n"
                       " \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [1,1,1,1]}}}\n";
    CHECK(trn_test_write_file(p, wide, strlen(wide)));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/wide.ter'", &out, &err, p, tmp), 1);
    CHECK_CONTAINS(err, "a .ter needs a square grid of square cells; the recipe has 40 x 20");
    free(out), free(err);
    /* ... but it generates to a PNG */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/wide.png' -q", &out, &err, p, tmp), 0);
    trn_image img;
    CHECK_OK(trn_png_read(tmp_path(p, sizeof p, "wide.png"), NULL, &img, NULL));
    CHECK_EQ_INT(img.width, 41);
    CHECK_EQ_INT(img.height, 21);
    trn_image_dispose(&img);
    free(out), free(err);
}

/* The asset document generates the same terrain as its bare recipe; BeamNG's metadata, which
 * shares the .terrain.json name, is named for what it is. */
static void test_documents(void)
{
    char *out, *err, p[1024], q[1024];
    tmp_path(p, sizeof p, "land.terrain.json");
    CHECK_OK(trn_terrain_asset_write(p, "asset://terrain/land", &recipe, NULL));
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o '%s/asset.r32' --format json", &out, &err, p, tmp), 0);
    CHECK_CONTAINS(err, "is a Terrain asset document");
    char kind[128];
    snprintf(kind, sizeof kind, "\"input_format\": \"terrain_asset\"");
    CHECK_CONTAINS(out, kind);
    free(out), free(err);
    size_t n;
    uint8_t *data = trn_test_read_file(tmp_path(q, sizeof q, "asset.r32"), &n);
    const uint32_t w = recipe.cells_x + 1u, h = recipe.cells_z + 1u;
    CHECK(data && n == (size_t)w * h * 4u);
    if (data && n == (size_t)w * h * 4u)
        CHECK(memcmp(data, gen.field.heights + (size_t)(h - 1u) * w, w * 4u) == 0);
    free(data);
    tmp_path(p, sizeof p, "beam.terrain.json");
    const char *beam = "{\"binaryFormat\": \"x\", \"datafile\": \"/levels/a/t.ter\", "
                       "\"version\": 9, \"size\": 128}\n";
    CHECK(trn_test_write_file(p, beam, strlen(beam)));
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 1,1", &out, &err, p), 1);
    CHECK_CONTAINS(err, "BeamNG");
    CHECK(out && out[0] == '\0');
    free(out), free(err);
}

static void test_heightfield_formats(void)
{
    char *out, *err, p[1024];
    const uint32_t w = recipe.cells_x + 1u, h = recipe.cells_z + 1u;
    float lo, hi;
    trn_field_range(&gen.field, &lo, &hi);

    /* R32: float metres, north row first, bit for bit */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/h.r32' -q", &out, &err, recipe_path, tmp),
                 0);
    free(out), free(err);
    size_t n;
    uint8_t *data = trn_test_read_file(tmp_path(p, sizeof p, "h.r32"), &n);
    CHECK(data && n == (size_t)w * h * 4u);
    bool same = data != NULL && n == (size_t)w * h * 4u;
    for (uint32_t r = 0; same && r < h; r++)
        same = memcmp(data + (size_t)r * w * 4u, gen.field.heights + (size_t)(h - 1u - r) * w,
                      w * 4u) == 0;
    CHECK(same);
    free(data);

    /* PNG: min..max over 0..65535 */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/h.png'", &out, &err, recipe_path, tmp), 0);
    CHECK_CONTAINS(err, "16-bit, lowest to highest: metres = ");
    free(out), free(err);
    /* --scale as gdal_translate: -20..40 m stored as 0..60000, so 1 mm steps */
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o '%s/s.png' --scale -20 40 0 60000 --format json", &out,
                          &err, recipe_path, tmp),
        0);
    {
        json_error_t je0;
        json_t *js = json_loads(out ? out : "", 0, &je0);
        json_t *hm = json_object_get(js, "heights");
        CHECK(json_real_value(json_object_get(hm, "base")) == -20.0);
        CHECK(fabs(json_real_value(json_object_get(hm, "quantum")) - 0.001) < 1e-15);
        CHECK(!strcmp(json_string_value(json_object_get(hm, "rule")), "--scale"));
        json_decref(js);
    }
    free(out), free(err);
    trn_image img;
    CHECK_OK(trn_png_read(tmp_path(p, sizeof p, "h.png"), NULL, &img, NULL));
    CHECK_EQ_INT(img.width, w);
    CHECK_EQ_INT(img.bit_depth, 16);
    const uint16_t *px = img.data;
    uint16_t vmin = 65535, vmax = 0;
    int off = 0;
    const double q = ((double)hi - (double)lo) / 65535.0;
    for (uint32_t r = 0; r < h; r++)
        for (uint32_t i = 0; i < w; i++) {
            const uint16_t v = px[(size_t)r * w + i];
            vmin = v < vmin ? v : vmin;
            vmax = v > vmax ? v : vmax;
            const double metres = (double)lo + v * q;
            off += fabs(metres - (double)gen.field.heights[(size_t)(h - 1u - r) * w + i]) >
                   q * 0.5 + 1e-9;
        }
    CHECK_EQ_INT(vmin, 0);
    CHECK_EQ_INT(vmax, 65535);
    CHECK_EQ_INT(off, 0);
    trn_image_dispose(&img);

    /* R16: the same values as the PNG; with --max-height, BeamNG's mapping */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/h.r16' -q --max-height 64", &out, &err,
                                   recipe_path, tmp),
                 0);
    free(out), free(err);
    data = trn_test_read_file(tmp_path(p, sizeof p, "h.r16"), &n);
    CHECK(data && n == (size_t)w * h * 2u);
    if (data && n == (size_t)w * h * 2u) {
        /* the first stored value is the north-west sample: field (0, last row) */
        const double want = (double)gen.field.heights[(size_t)(h - 1u) * w] / (64.0 / 65536.0);
        const unsigned v = data[0] | (unsigned)data[1] << 8;
        CHECK(fabs((double)v - (want < 0 ? 0 : want)) <= 0.5 + 1e-9);
    }
    free(data);

    /* .ter: heights offset by the minimum, the biomes that occur as materials */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/h.ter' --format json", &out, &err,
                                   recipe_path, tmp),
                 0);
    CHECK_CONTAINS(err, "set the TerrainBlock's position z");
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(j));
    json_t *m = json_object_get(j, "heights");
    CHECK(m && json_real_value(json_object_get(m, "base")) == (double)lo);
    const double max_height = json_real_value(json_object_get(m, "max_height"));
    /* convert's rule: the lowest height at 0, the highest at 65535 */
    CHECK(max_height == ((double)hi - (double)lo) / 65535.0 * 65536.0);
    CHECK_CONTAINS(json_string_value(json_object_get(m, "rule")), "lowest to highest");
    json_decref(j);
    free(out), free(err);
    trn_ter ter;
    CHECK_OK(trn_ter_read(tmp_path(p, sizeof p, "h.ter"), NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, w);
    CHECK_EQ_INT(ter.material_count, 3); /* "unused" occurs nowhere */
    if (ter.material_count == 3) {
        CHECK(strcmp(ter.materials[0], "meadow") == 0);
        CHECK(strcmp(ter.materials[1], "sand") == 0);
        CHECK(strcmp(ter.materials[2], "rock") == 0);
    }
    int bad = 0;
    uint16_t smin = 65535;
    for (size_t k = 0; k < samples() && ter.heights; k++) {
        smin = ter.heights[k] < smin ? ter.heights[k] : smin;
        const double metres = (double)lo + ter.heights[k] * (max_height / 65536.0);
        bad += fabs(metres - (double)gen.field.heights[k]) > max_height / 65536.0 * 0.5 + 1e-6;
        bad += ter.layers[k] != gen.biomes.values[k]; /* meadow, sand, rock keep 0, 1, 2 */
    }
    CHECK_EQ_INT(smin, 0);
    CHECK_EQ_INT(bad, 0);
    trn_ter_dispose(&ter);
}

static void test_biomes_and_preview(void)
{
    char *out, *err, p[1024];
    const uint32_t w = recipe.cells_x + 1u, h = recipe.cells_z + 1u;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --biomes '%s/b.png' --preview '%s/s.png'", &out,
                                   &err, recipe_path, tmp, tmp),
                 0);
    CHECK_CONTAINS(err, "biome colours");
    free(out), free(err);
    trn_image img;
    CHECK_OK(trn_png_read(tmp_path(p, sizeof p, "b.png"), NULL, &img, NULL));
    CHECK_EQ_INT(img.channels, 4);
    int bad = 0;
    for (uint32_t r = 0; r < h && img.data; r++)
        for (uint32_t i = 0; i < w; i++) {
            const uint8_t *c = (const uint8_t *)img.data + ((size_t)r * w + i) * 4u;
            const uint8_t b = gen.biomes.values[(size_t)(h - 1u - r) * w + i];
            for (int k = 0; k < 4; k++)
                bad += c[k] != (uint8_t)lround(recipe.biomes[b].color[k] * 255.0);
        }
    CHECK_EQ_INT(bad, 0);
    trn_image_dispose(&img);
    /* the preview is render's multidirectional hillshade */
    trn_render_options ro;
    trn_render_options_default(&ro);
    ro.multidirectional = true;
    trn_raster8 pic = {0, 0, 0, NULL};
    CHECK_OK(trn_render_hillshade(&gen.field, &ro, &pic, NULL, NULL, NULL));
    CHECK_OK(trn_png_read(tmp_path(p, sizeof p, "s.png"), NULL, &img, NULL));
    CHECK(img.data && pic.pixels && memcmp(img.data, pic.pixels, (size_t)w * h) == 0);
    trn_image_dispose(&img);
    trn_raster8_dispose(&pic);
    /* index map */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --biomes '%s/i.png' --biome-index -q", &out, &err,
                                   recipe_path, tmp),
                 0);
    free(out), free(err);
    CHECK_OK(trn_png_read(tmp_path(p, sizeof p, "i.png"), NULL, &img, NULL));
    CHECK_EQ_INT(img.channels, 1);
    bad = 0;
    for (uint32_t r = 0; r < h && img.data; r++)
        for (uint32_t i = 0; i < w; i++)
            bad += ((const uint8_t *)img.data)[(size_t)r * w + i] !=
                   gen.biomes.values[(size_t)(h - 1u - r) * w + i];
    CHECK_EQ_INT(bad, 0);
    trn_image_dispose(&img);
}

static void test_json_summary(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s/j.png' --format json --threads 1", &out,
                                   &err, recipe_path, tmp),
                 0);
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(j));
    if (j) {
        char key[17];
        snprintf(key, sizeof key, "%016" PRIx64, gen.cache_key);
        CHECK(strcmp(json_string_value(json_object_get(j, "cache_key")), key) == 0);
        CHECK(json_real_value(json_object_get(j, "sea_level")) == 8.5);
        CHECK(strcmp(json_string_value(json_object_get(j, "sea_level_source")), "explicit") == 0);
        CHECK(strcmp(json_string_value(json_object_get(j, "input_format")), "recipe") == 0);
        json_t *files = json_object_get(j, "output_details");
        CHECK(json_array_size(files) == 1);
        CHECK_CONTAINS(json_string_value(json_object_get(json_array_get(files, 0), "path")),
                       "j.png");
        json_t *biomes = json_object_get(j, "biomes");
        CHECK(json_array_size(biomes) == 4);
        json_int_t total = 0;
        for (size_t b = 0; b < json_array_size(biomes); b++) {
            json_t *o = json_array_get(biomes, b);
            size_t count = 0;
            for (size_t k = 0; k < samples(); k++)
                count += gen.biomes.values[k] == b;
            CHECK(json_integer_value(json_object_get(o, "samples")) == (json_int_t)count);
            total += json_integer_value(json_object_get(o, "samples"));
        }
        CHECK(total == (json_int_t)samples());
        CHECK(json_integer_value(json_object_get(j, "samples")) == (json_int_t)samples());
        json_t *t = json_object_get(j, "timings");
        CHECK(json_is_real(json_object_get(t, "generate_s")));
        CHECK(json_is_real(json_object_get(t, "total_s")));
    }
    json_decref(j);
    free(out), free(err);
}

static void test_export_beamng(void)
{
    char *out, *err, p[2048], level[1024];
    snprintf(level, sizeof level, "%s/game/levels/recipe_test", tmp);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --export 'beamng:%s' --texture-size 32 --format json",
                          &out, &err, recipe_path, level),
        0);
    CHECK_CONTAINS(err, "position z");
    CHECK_CONTAINS(err, "validated");
    CHECK_CONTAINS(err, "0 error(s), 0 warning(s)");
    json_error_t je;
    json_t *j = json_loads(out ? out : "", 0, &je);
    json_t *ex = json_object_get(j, "beamng");
    CHECK(json_integer_value(json_object_get(ex, "validate_error_count")) == 0);
    CHECK(json_integer_value(json_object_get(ex, "materials_added")) == 3);
    CHECK(json_integer_value(json_object_get(ex, "textures_tinted")) == 3);
    json_decref(j);
    free(out), free(err);

    /* terrane beamng validate agrees: no errors, no warnings */
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s' --format json", &out, &err, level), 0);
    j = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(j));
    CHECK_CONTAINS(out, "\"error_count\": 0");
    json_decref(j);
    free(out), free(err);

    /* the TerrainBlock carries the offset; the .ter starts at stored 0 */
    float lo, hi;
    trn_field_range(&gen.field, &lo, &hi);
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    CHECK_OK(trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL));
    CHECK_EQ_INT(count, 1);
    if (count == 1) {
        CHECK(blocks[0].position[2] == (double)lo);
        CHECK(blocks[0].square_size == 128.0 / 127.0);
        CHECK(blocks[0].max_height == ((double)hi - (double)lo) / 65535.0 * 65536.0);
    }
    trn_terrain_blocks_free(blocks, count);
    /* one material per biome used, named after it, base colour tinted with the biome's */
    trn_material_file mf;
    snprintf(p, sizeof p, "%s/art/terrains/main.materials.json", level);
    CHECK_OK(trn_material_file_read(p, &mf, NULL));
    CHECK_EQ_INT(mf.material_count, 3);
    for (uint32_t k = 0; k < mf.material_count; k++) {
        const int b = trn_recipe_find_biome(&recipe, mf.materials[k].internal_name);
        CHECK(b >= 0 && b < 3);
        char disk[2048];
        bool cm;
        CHECK_OK(trn_beamng_resolve_path(level,
                                         mf.materials[k].tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE],
                                         disk, sizeof disk, &cm, NULL));
        trn_image img;
        CHECK_OK(trn_png_read(disk, NULL, &img, NULL));
        CHECK_EQ_INT(img.width, 32);
        const uint8_t *c = img.data;
        for (int ch = 0; b >= 0 && c && ch < 3; ch++)
            CHECK_EQ_INT(c[ch], (uint8_t)lround(recipe.biomes[b].color[ch] * 255.0));
        trn_image_dispose(&img);
    }
    trn_material_file_dispose(&mf);
    /* the layer map is the biome map */
    trn_ter ter;
    snprintf(p, sizeof p, "%s/theTerrain.ter", level);
    CHECK_OK(trn_ter_read(p, NULL, &ter, NULL, NULL, NULL));
    int bad = 0;
    for (size_t k = 0; k < samples() && ter.layers; k++)
        bad += ter.layers[k] != gen.biomes.values[k];
    CHECK_EQ_INT(bad, 0);
    trn_ter_dispose(&ter);
    /* exporting again replaces the terrain in place and still validates */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export 'beamng:%s' --texture-size 32 -q", &out,
                                   &err, recipe_path, level),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("beamng validate '%s'", &out, &err, level), 0);
    free(out), free(err);
}

/* A 2^k + 1 sample grid exports as BeamNG's 2^k: the last row and column are left out. */
static void test_export_beamng_odd_grid(void)
{
    char *out, *err, path[1024], level[1024], p[2048];
    const char *at = strstr(recipe_text, "[127, 127]");
    CHECK(at != NULL);
    if (!at) return;
    char text[4096];
    snprintf(text, sizeof text, "%.*s[128, 128]%s", (int)(at - recipe_text), recipe_text,
             at + strlen("[127, 127]"));
    snprintf(path, sizeof path, "%s/odd.json", tmp);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    snprintf(level, sizeof level, "%s/game/levels/odd", tmp);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export 'beamng:%s' --texture-size 32", &out,
                                   &err, path, level),
                 0);
    CHECK_CONTAINS(err, "129 samples a side");
    CHECK_CONTAINS(err, "0 error(s), 0 warning(s)");
    free(out), free(err);
    trn_recipe r;
    trn_generated g;
    CHECK_OK(trn_recipe_read(path, &r, NULL, NULL));
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    trn_ter ter;
    snprintf(p, sizeof p, "%s/theTerrain.ter", level);
    CHECK_OK(trn_ter_read(p, NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 128);
    int bad = 0;
    for (uint32_t j = 0; j < 128 && ter.layers && g.biomes.values; j++)
        for (uint32_t i = 0; i < 128; i++) {
            const uint8_t b = g.biomes.values[(size_t)j * 129 + i];
            const char *name = ter.materials[ter.layers[(size_t)j * 128 + i]];
            bad += strcmp(name, r.biomes[b].name) != 0;
        }
    CHECK_EQ_INT(bad, 0);
    trn_ter_dispose(&ter);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

/* --resolution with edits present: refuse, keep or clear, as the caller chooses. */
static void test_grid_change_policy(void)
{
    char *out, *err, path[1024], png[1024];
    const char *at = strstr(recipe_text, "\n}\n");
    const char *last = NULL;
    for (const char *p = strstr(recipe_text, "\n}"); p; p = strstr(p + 1, "\n}"))
        last = p;
    CHECK(at != NULL && last != NULL);
    if (!last) return;
    char text[8192];
    snprintf(text, sizeof text,
             "%.*s,\n  \"edits\": [{\"type\": \"raise\", \"radius\": 8, \"strength\": 3, "
             "\"points\": [[40, 40], [44, 40]]}]%s",
             (int)(last - recipe_text), recipe_text, last);
    snprintf(path, sizeof path, "%s/edited.json", tmp);
    snprintf(png, sizeof png, "%s/edited.png", tmp);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o '%s' --resolution 63x63", &out, &err, path, png), 1);
    CHECK_CONTAINS(err, "--keep-edits");
    CHECK(!trn_test_exists(png));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --resolution 63x63 --keep-edits -q", &out,
                                   &err, path, png),
                 0);
    CHECK(trn_test_exists(png));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --resolution 63x63 --clear-edits -q",
                                   &out, &err, path, png),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --keep-edits --clear-edits", &out, &err,
                                   path, png),
                 2);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --resolution 63", &out, &err, path, png),
                 2);
    free(out), free(err);
}

/* --exclusion writes the mask the exclusion strokes paint, north up. */
static void test_exclusion_output(void)
{
    char *out, *err, path[1024], png[1024];
    const char *last = NULL;
    for (const char *p = strstr(recipe_text, "\n}"); p; p = strstr(p + 1, "\n}"))
        last = p;
    if (!last) return;
    char text[8192];
    snprintf(text, sizeof text,
             "%.*s,\n  \"exclusions\": [{\"type\": \"exclusion\", \"radius\": 10, "
             "\"points\": [[64, 100]]}]%s",
             (int)(last - recipe_text), recipe_text, last);
    snprintf(path, sizeof path, "%s/excl.json", tmp);
    snprintf(png, sizeof png, "%s/excl.png", tmp);
    CHECK(trn_test_write_file(path, text, strlen(text)));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --exclusion '%s' -q", &out, &err, path, png), 0);
    free(out), free(err);
    trn_recipe r;
    trn_generated g;
    memset(&g, 0, sizeof g);
    CHECK_OK(trn_recipe_read(path, &r, NULL, NULL));
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    CHECK(g.exclusion != NULL);
    trn_image img;
    memset(&img, 0, sizeof img);
    CHECK_OK(trn_png_read(png, NULL, &img, NULL));
    const uint32_t w = g.field.cells_x + 1u, h = g.field.cells_z + 1u;
    CHECK(img.width == w && img.height == h && img.channels == 1 && img.bit_depth == 8);
    int bad = 0, painted = 0;
    for (uint32_t row = 0; row < h && img.data && g.exclusion; row++)
        for (uint32_t i = 0; i < w; i++) {
            const uint8_t v = ((const uint8_t *)img.data)[(size_t)row * w + i];
            bad += v != g.exclusion[(size_t)(h - 1u - row) * w + i];
            painted += v != 0;
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(painted > 100 && painted < 1000); /* a disc of radius 10 cells, nothing else */
    trn_image_dispose(&img);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --exclusion '%s/x.tif'", &out, &err, path, tmp),
                 2);
    free(out), free(err);
}

/* ---- explain ---- */

static const char *band_line(char *buf, size_t n, const char *name, bool set, double lo, double hi,
                             double v, bool inside)
{
    if (!set)
        snprintf(buf, n, "%s unconstrained\n", name);
    else
        snprintf(buf, n, "%s [%.3f,%.3f] sample %.3f -> %s\n", name, lo, hi, v,
                 inside ? "INSIDE" : "OUTSIDE");
    return buf;
}

/* The head of explain's text for sample (i, j): position through the context. */
static void explain_head(char *buf, size_t n, uint32_t i, uint32_t j, const char *biome,
                         const char *source, const trn_sample_context *c)
{
    const double x = (double)i * recipe.size_x / recipe.cells_x;
    const double z = (double)j * recipe.size_z / recipe.cells_z;
    snprintf(buf, n,
             "Position: %.3f,%.3f in terrain 128.000 x 128.000\n"
             "Cell: %u,%u (sample %zu of %zu)\n"
             "Sea level: 8.500\n"
             "Biome: %s\n"
             "Source: %s\n"
             "Context:\n"
             "height %.3f\n"
             "slope %.3f deg\n"
             "moisture %.3f\n"
             "water distance %.3f\n"
             "substrate %s\n",
             x, z, i, j, (size_t)j * 128u + i, samples(), biome, source, c->height, c->slope,
             c->moisture, c->water_distance, trn_substrate_name(c->substrate));
}

static bool find_sample(int rule, uint32_t *io, uint32_t *jo)
{
    /* away from the border, so the nearest-sample rounding is unambiguous */
    for (uint32_t j = 3; j < 125; j++)
        for (uint32_t i = 3; i < 125; i++)
            if (gen.rule_index[(size_t)j * 128u + i] == rule) {
                *io = i;
                *jo = j;
                return true;
            }
    return false;
}

static void test_explain_matched(void)
{
    uint32_t i = 0, j = 0;
    CHECK(find_sample(0, &i, &j)); /* a shoreline sample */
    trn_sample_context c;
    trn_generated_context(&gen, &recipe, i, j, &c);
    char want[4096], line[256];
    explain_head(want, sizeof want, i, j, "sand", "rule \"shoreline\"", &c);
    strcat(want, "Rule \"shoreline\" biome=sand priority=30 blend=1.500\n"
                 "slope unconstrained\n"
                 "moisture unconstrained\n");
    strcat(want,
           band_line(line, sizeof line, "water distance", true, 0, 6, c.water_distance, true));
    strcat(want, "elevation unconstrained\n"
                 "substrate unconstrained\n");
    char *out, *err;
    /* a position a little off the sample still explains the nearest sample */
    const double x = (double)i * 128.0 / 127.0 + 0.2, z = (double)j * 128.0 / 127.0 - 0.2;
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at %.17g,%.17g -q", &out, &err, recipe_path,
                                   (double)i * 128.0 / 127.0, (double)j * 128.0 / 127.0),
                 0);
    CHECK(out && strcmp(out, want) == 0);
    if (out && strcmp(out, want) != 0) fprintf(stderr, "got:\n%swant:\n%s", out, want);
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("explain '%s' --at %.17g,%.17g -q", &out, &err, recipe_path, x, z), 0);
    char cell[64];
    snprintf(cell, sizeof cell, "Cell: %u,%u (sample %u of 16384)\n", i, j, j * 128u + i);
    CHECK_CONTAINS(out, cell);
    free(out), free(err);

    /* JSON mirrors the text */
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at %.17g,%.17g --format json", &out, &err,
                                   recipe_path, (double)i * 128.0 / 127.0,
                                   (double)j * 128.0 / 127.0),
                 0);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(o));
    CHECK(strcmp(json_string_value(json_object_get(o, "biome")), "sand") == 0);
    CHECK(strcmp(json_string_value(json_object_get(o, "source")), "rule") == 0);
    CHECK(strcmp(json_string_value(json_object_get(o, "rule")), "shoreline") == 0);
    CHECK(json_integer_value(json_object_get(o, "sample")) == (json_int_t)(j * 128u + i));
    json_t *cx = json_object_get(o, "context");
    CHECK(json_real_value(json_object_get(cx, "height")) == c.height);
    CHECK(json_real_value(json_object_get(cx, "slope")) == c.slope);
    CHECK(json_real_value(json_object_get(cx, "moisture")) == c.moisture);
    json_t *rules = json_object_get(o, "rules");
    CHECK(json_array_size(rules) == 1);
    json_t *bands = json_object_get(json_array_get(rules, 0), "bands");
    CHECK(json_array_size(bands) == 5);
    json_t *wd = json_array_get(bands, 2);
    CHECK(strcmp(json_string_value(json_object_get(wd, "band")), "water_distance") == 0);
    CHECK(strcmp(json_string_value(json_object_get(wd, "state")), "inside") == 0);
    CHECK(json_real_value(json_object_get(wd, "max")) == 6.0);
    json_decref(o);
    free(out), free(err);
}

static void test_explain_unmatched(void)
{
    uint32_t i = 0, j = 0;
    CHECK(find_sample(-1, &i, &j)); /* the default biome */
    trn_sample_context c;
    trn_generated_context(&gen, &recipe, i, j, &c);
    char want[8192], line[256];
    explain_head(want, sizeof want, i, j, "meadow", "default", &c);
    strcat(want, "No rule matched (3 active): the default biome applies\n"
                 "Rule \"shoreline\" biome=sand priority=30 blend=1.500\n"
                 "slope unconstrained\n"
                 "moisture unconstrained\n");
    strcat(want,
           band_line(line, sizeof line, "water distance", true, 0, 6, c.water_distance, false));
    strcat(want, "elevation unconstrained\n"
                 "substrate unconstrained\n"
                 "rejected by water distance\n"
                 "Rule \"cliffs\" biome=rock priority=20 blend=0.000\n");
    strcat(want, band_line(line, sizeof line, "slope", true, 30, 90, c.slope, false));
    strcat(want, "moisture unconstrained\n"
                 "water distance unconstrained\n"
                 "elevation unconstrained\n"
                 "substrate unconstrained\n"
                 "rejected by slope\n"
                 "Rule \"beach\" biome=sand priority=5 blend=0.000\n"
                 "slope unconstrained\n"
                 "moisture unconstrained\n"
                 "water distance unconstrained\n");
    const bool elev_in = c.height >= -100.0 && c.height <= 9.0;
    const bool sand = c.substrate == TRN_SUBSTRATE_SAND;
    CHECK(!(elev_in && sand));
    strcat(want, band_line(line, sizeof line, "elevation", true, -100, 9, c.height, elev_in));
    snprintf(line, sizeof line, "substrate [sand] sample %s -> %s\n",
             trn_substrate_name(c.substrate), sand ? "INSIDE" : "OUTSIDE");
    strcat(want, line);
    strcat(want, elev_in ? "rejected by substrate\n" : "rejected by elevation\n");
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at %.17g,%.17g", &out, &err, recipe_path,
                                   (double)i * 128.0 / 127.0, (double)j * 128.0 / 127.0),
                 0);
    CHECK(out && strcmp(out, want) == 0);
    if (out && strcmp(out, want) != 0) fprintf(stderr, "got:\n%swant:\n%s", out, want);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at %.17g,%.17g --format json -q", &out, &err,
                                   recipe_path, (double)i * 128.0 / 127.0,
                                   (double)j * 128.0 / 127.0),
                 0);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(strcmp(json_string_value(json_object_get(o, "source")), "default") == 0);
    CHECK(json_is_null(json_object_get(o, "rule")));
    json_t *rules = json_object_get(o, "rules");
    CHECK(json_array_size(rules) == 3);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(rules, 1), "first_rejected")),
                 "slope") == 0);
    CHECK(json_is_false(json_object_get(json_array_get(rules, 0), "matched")));
    json_decref(o);
    free(out), free(err);
}

static void test_explain_outside(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 128.5,3", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "--at 128.500,3.000 is outside the terrain: x must be 0..128.000 and z "
                        "0..128.000");
    CHECK(out && out[0] == '\0');
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 3,-0.001", &out, &err, recipe_path), 2);
    CHECK_CONTAINS(err, "is outside the terrain");
    free(out), free(err);
    /* the far corner is on the terrain: the last sample */
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 128,128 -q", &out, &err, recipe_path), 0);
    CHECK_CONTAINS(out, "Cell: 127,127 (sample 16383 of 16384)\n");
    free(out), free(err);
}

/* --export unity: the RAW holds the generated heights (lowest = 0, highest = 65535), the
 * metadata says so, the splat map is one-hot from the biomes; the 127-cell grid is refused. */
static void test_export_unity(void)
{
    char *out, *err;
    char dir[1024], raw[1200], meta[1200], splat[1200];
    tmp_path(dir, sizeof dir, "unity");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export unity:%s", &out, &err, recipe_path, dir),
                 1);
    CHECK_CONTAINS(err, "2^n + 1 samples");
    CHECK_CONTAINS(err, "127 x 127 cells");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 128x128 --export unity:%s "
                                   "--format json",
                                   &out, &err, recipe_path, dir),
                 0);
    CHECK_CONTAINS(out, "\"unity\"");
    CHECK_CONTAINS(out, "\"resolution\": 129");
    free(out), free(err);
    snprintf(raw, sizeof raw, "%s/recipe.raw", dir);
    snprintf(meta, sizeof meta, "%s/recipe.json", dir);
    snprintf(splat, sizeof splat, "%s/recipe_splat0.png", dir);
    CHECK(trn_test_exists(meta) && trn_test_exists(splat));
    size_t size = 0;
    uint8_t *bytes = trn_test_read_file(raw, &size);
    CHECK_EQ_INT(size, 129u * 129u * 2u);
    /* The same recipe at 128 x 128 cells, generated here. */
    trn_recipe r;
    CHECK_OK(trn_recipe_read(recipe_path, &r, NULL, NULL));
    CHECK_OK(trn_recipe_change_grid(&r, r.size_x, r.size_z, 128, 128, TRN_EDITS_REFUSE, NULL));
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
    float lo, hi;
    trn_field_range(&g.field, &lo, &hi);
    size_t lo_at = 0, hi_at = 0;
    for (size_t k = 0; k < trn_field_sample_count(&g.field); k++) {
        if (g.field.heights[k] == lo) lo_at = k;
        if (g.field.heights[k] == hi) hi_at = k;
    }
    /* RAW row 0 is z = 0 (no flip), little-endian. */
    if (bytes && size == 129u * 129u * 2u) {
        CHECK_EQ_INT(bytes[2 * lo_at] | bytes[2 * lo_at + 1] << 8, 0);
        CHECK_EQ_INT(bytes[2 * hi_at] | bytes[2 * hi_at + 1] << 8, 65535);
    }
    free(bytes);
    trn_image img;
    CHECK_OK(trn_png_read(splat, NULL, &img, NULL));
    /* Splat maps are one texel per cell (Unity's alphamaps are powers of two). */
    CHECK(img.width == 128 && img.height == 128 && img.channels == 4);
    trn_image_dispose(&img);
    trn_generated_dispose(&g);
    trn_recipe_dispose(&r);
}

/* -o OUT.dat: a Stationeers octree whose bedrock sits just under the lowest height; read back,
 * every column is the generated height (relative to voxel row 0) within a density step. */
static void test_output_stationeers(void)
{
    char *out, *err;
    char dat[1024];
    tmp_path(dat, sizeof dat, "terrain.dat");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o %s", &out, &err, recipe_path, dat), 0);
    float lo, hi;
    trn_field_range(&gen.field, &lo, &hi);
    const double base = floor((double)lo) - 4.0; /* four bedrock rows by default */
    char want[128];
    snprintf(want, sizeof want, "voxel row 0 at %g m", base);
    CHECK_CONTAINS(err, want);
    free(out), free(err);
    trn_stationeers_terrain t;
    CHECK_OK(trn_stationeers_read(dat, NULL, &t, NULL));
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    fo.base = base;
    trn_field f;
    CHECK_OK(trn_stationeers_to_field(&t, &fo, &f, NULL, NULL, NULL, NULL));
    /* The octree covers a power-of-two square from the field's corner: compare the field. */
    double worst = 0.0;
    const size_t nx = (size_t)gen.field.cells_x + 1u, fx = (size_t)f.cells_x + 1u;
    for (size_t j = 0; j <= gen.field.cells_z && j <= f.cells_z; j++)
        for (size_t i = 0; i < nx && i < fx; i++) {
            const double d =
                fabs((double)f.heights[j * fx + i] - (double)gen.field.heights[j * nx + i]);
            if (d > worst) worst = d;
        }
    CHECK(worst <= 1.0 / 255.0 + 1e-4);
    if (!(worst <= 1.0 / 255.0 + 1e-4)) fprintf(stderr, "  worst %g\n", worst);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);
}

/* --threads at its limits, checked while parsing (an error after it shows it was read). */
static void test_threads_option(void)
{
    char *out, *err;
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o x.png --threads 1025 --bogus", &out, &err, recipe_path),
        2);
    CHECK_CONTAINS(err, "--threads must be 1 to 1024, not 1025");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o x.png --threads 0 --bogus", &out, &err, recipe_path),
        2);
    CHECK_CONTAINS(err, "--threads must be 1 to 1024, not 0");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -o x.png --threads 1024 --bogus", &out, &err, recipe_path),
        2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_skip("no temporary folder");
    tmp_path(recipe_path, sizeof recipe_path, "recipe.json");
    CHECK(trn_test_write_file(recipe_path, recipe_text, strlen(recipe_text)));
    trn_error e;
    memset(&recipe, 0, sizeof recipe);
    memset(&gen, 0, sizeof gen);
    if (trn_recipe_read(recipe_path, &recipe, NULL, &e) ||
        trn_recipe_generate(&recipe, NULL, &gen, NULL, NULL, &e)) {
        fprintf(stderr, "cannot generate the test recipe: %s\n", e.message);
        return 1;
    }
    RUN(test_help_and_usage);
    RUN(test_threads_option);
    RUN(test_bad_recipes);
    RUN(test_documents);
    RUN(test_heightfield_formats);
    RUN(test_biomes_and_preview);
    RUN(test_json_summary);
    RUN(test_export_beamng);
    RUN(test_export_beamng_odd_grid);
    RUN(test_export_unity);
    RUN(test_output_stationeers);
    RUN(test_grid_change_policy);
    RUN(test_exclusion_output);
    RUN(test_explain_matched);
    RUN(test_explain_unmatched);
    RUN(test_explain_outside);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return trn_test_finish();
}
