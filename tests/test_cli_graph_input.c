/* The shipped DEM example end to end through the CLI, and graph check naming a missing file. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/geotiff.h"
#include "test.h"

/* A 129 x 129 georeferenced valley with a NoData patch (the starter's input). */
static bool write_dem(const char *path)
{
    enum { S = 129 };
    trn_field f;
    if (trn_field_init(&f, S - 1, S - 1, (S - 1) * 8.0, (S - 1) * 8.0, NULL)) return false;
    for (uint32_t j = 0; j < S; j++)
        for (uint32_t i = 0; i < S; i++) {
            const double x = i * 8.0, z = j * 8.0, dx = (x - 512 - 90 * sin(z / 260)) / 210;
            const double bz = (z - 420) / 70, bx = (x - 601) / 70;
            f.heights[(size_t)j * S + i] =
                (float)(310 + 0.11 * z + 220 * (1 - exp(-dx * dx)) +
                        12 * sin(x / 37) * cos(z / 53) - 24 * exp(-(bx * bx + bz * bz)));
        }
    for (uint32_t j = 100; j < 103; j++)
        for (uint32_t i = 15; i < 18; i++)
            f.heights[(size_t)j * S + i] = NAN;
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    const double t[6] = {500000, 8, 0, 5200000 + S * 8.0, 0, -8};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, S, S);
    const bool ok = trn_geotiff_write(path, &f, &g, TRN_GEOTIFF_COMPRESS_DEFLATE, NULL) == TRN_OK;
    trn_field_dispose(&f);
    return ok;
}

static void test_example_level(void)
{
    char dir[512], path[700], level[700];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    size_t n = 0;
    uint8_t *recipe = trn_test_read_file(TRN_SOURCE_DIR "/examples/recipes/dem_level.json", &n);
    CHECK(recipe != NULL);
    snprintf(path, sizeof path, "%s/dem_level.json", dir);
    CHECK(recipe && trn_test_write_file(path, recipe, n));
    free(recipe);
    /* Without its DEM: graph check names the node and the file, at the path's position. */
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("graph check %s", &out, &err, path);
    CHECK(rc != 0);
    CHECK_CONTAINS(out, "node 'dem' (heightfield_input): path: cannot open 'dem.tif'");
    CHECK_CONTAINS(out, "[input-file]");
    CHECK_CONTAINS(out, "dem_level.json:");
    free(out);
    free(err);
    rc = trn_test_run_clif("inspect %s", &out, &err, path);
    CHECK_CONTAINS(err, "the graph has 1 error");
    CHECK_CONTAINS(out, "error: node 'dem' (heightfield_input): path: cannot open 'dem.tif'");
    free(out);
    free(err);
    /* With the demo's dem.tif (terrane_demo_inputs writes it, as demo.sh does): generated into
     * a BeamNG level that validates, the brook joining the lake, and not one warning. */
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' '%s' 16 > /dev/null", TRN_DEMO_INPUTS_PATH, dir);
    CHECK(system(cmd) == 0);
    snprintf(level, sizeof level, "%s/out/levels/dem_level", dir);
    rc = trn_test_run_clif("water %s", &out, &err, path);
    CHECK(rc == 0);
    CHECK_CONTAINS(out, "lake 'lakes/basin/");
    CHECK_CONTAINS(out, "joins 'lakes/basin/");
    CHECK(out && !strstr(out, "warning") && err && !strstr(err, "warning"));
    free(out);
    free(err);
    rc = trn_test_run_clif("generate %s --export beamng:%s", &out, &err, path, level);
    CHECK(rc == 0);
    if (rc) fprintf(stderr, "%s\n%s\n", out ? out : "", err ? err : "");
    /* generate reports on stderr. */
    CHECK_CONTAINS(err, "node dem (heightfield_input): evaluated");
    CHECK_CONTAINS(err, "dem.tif: geotiff 257x257, 1024 x 1024 m onto 1024 x 1024");
    CHECK_CONTAINS(err, "36 NoData samples filled");
    CHECK_CONTAINS(err, "1 WaterBlock(s), 1 River(s)");
    CHECK_CONTAINS(err, "forest: ");
    CHECK_CONTAINS(err, "0 error(s), 0 warning(s)");
    /* Not one warning: the validator's count is the only place the word appears. */
    char *count = err ? strstr(err, "0 error(s), 0 warning(s)") : NULL;
    if (count) memset(count, ' ', strlen("0 error(s), 0 warning(s)"));
    CHECK(err && !strstr(err, "warning") && !strstr(err, "Warning"));
    if (err && strstr(err, "warning")) fprintf(stderr, "stderr: %s\n", err);
    free(out);
    free(err);
}

static void test_starter_input(void)
{
    char dir[512], path[700];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    snprintf(path, sizeof path, "%s/ground.tif", dir);
    CHECK(write_dem(path));
    /* The starter reading a file, pasted into a recipe beside it, generates. */
    char *graph = NULL, *err = NULL;
    CHECK(trn_test_run_clif("graph starter --input ground.tif", &graph, &err) == 0);
    CHECK_CONTAINS(graph, "\"type\": \"heightfield_input\"");
    CHECK_CONTAINS(graph, "\"path\": \"ground.tif\"");
    free(err);
    char *recipe = malloc(strlen(graph ? graph : "") + 400);
    if (recipe && graph) {
        sprintf(recipe,
                "{\"size\": [1024, 1024], \"resolution\": [64, 64], \"seed\": 3,\n"
                " \"default_landform\": \"l\", \"landforms\": {\"l\": {}},\n"
                " \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.4, 0.6, 0.3, 1]}},\n"
                " \"graph\": %s}\n",
                graph);
        snprintf(path, sizeof path, "%s/r.json", dir);
        CHECK(trn_test_write_file(path, recipe, strlen(recipe)));
        char *out = NULL;
        CHECK(trn_test_run_clif("graph check %s", &out, &err, path) == 0);
        free(out);
        free(err);
        char png[760];
        snprintf(png, sizeof png, "%s/h.png", dir);
        CHECK(trn_test_run_clif("generate %s -o %s", &out, &err, path, png) == 0);
        CHECK_CONTAINS(err, "ground.tif: geotiff 129x129, 1024 x 1024 m onto 1024 x 1024");
        free(out);
        free(err);
    }
    free(recipe);
    free(graph);
    /* A path no recipe may name is refused at once. */
    char *out = NULL;
    CHECK(trn_test_run_clif("graph starter --input /data/dem.tif", &out, &err) != 0);
    CHECK_CONTAINS(err, "is an absolute path");
    free(out);
    free(err);
}

int main(void)
{
    RUN(test_example_level);
    RUN(test_starter_input);
    return trn_test_finish();
}
