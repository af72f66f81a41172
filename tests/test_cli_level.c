/* Command-line tests for convert's beamng:DIR/levels/NAME output: any terrain into a level. */
#include <math.h>
#include <stdlib.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "test.h"

static char tmp[512];

/* A 257 x 257 float heightfield (north row first, as .r32 stores it) from 812 m up: a tilted
 * plane with a bump, so the lowest height is not a whole metre. */
static void make_r32(const char *path, uint32_t n)
{
    trn_image img;
    CHECK_OK(trn_image_init(&img, n, n, 1, 32, NULL));
    float *px = img.data;
    for (uint32_t y = 0; y < n; y++)
        for (uint32_t x = 0; x < n; x++) {
            const double dx = (double)x - n / 2.0, dy = (double)y - n / 2.0;
            px[y * n + x] =
                (float)(812.25 + 0.3 * x + 0.1 * y + 40.0 * exp(-(dx * dx + dy * dy) / 800.0));
        }
    CHECK_OK(trn_raw_write(path, &img, TRN_RAW_F32_LE, NULL));
    trn_image_dispose(&img);
}

static double block_z(const char *level)
{
    trn_terrain_block *blocks = NULL;
    size_t count = 0;
    double z = NAN;
    if (trn_level_find_terrain_blocks(level, &blocks, &count, NULL, NULL) == TRN_OK && count == 1)
        z = blocks[0].position[2];
    trn_terrain_blocks_free(blocks, count);
    return z;
}

static void test_level_from_raster(void)
{
    char in[600], tif[600], level[600];
    snprintf(in, sizeof in, "%s/dem.r32", tmp);
    snprintf(tif, sizeof tif, "%s/dem.tif", tmp);
    make_r32(in, 257);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, tif), 0);
    free(out), free(err);

    /* 257 samples: the far row and column go, the level validates, stored 0 is the lowest. */
    snprintf(level, sizeof level, "%s/game/levels/dem", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert %s beamng:%s", &out, &err, tif, level), 0);
    CHECK_CONTAINS(err, "the far row and column are left out (256 x 256)");
    CHECK_CONTAINS(err, "validated");
    CHECK_CONTAINS(err, "0 error(s)");
    char *err_saved = err;
    free(out);
    /* convert's one 16-bit rule: the lowest height (the corner (0, 0), 812.25 m) is stored 0
     * and the TerrainBlock's position z; the highest (the corner (256, 0): 812.25 + 76.8 +
     * 25.6 = 914.65 m, the bump is far) is 65535: maxHeight = 65536 / 65535 of the relief. */
    CHECK(block_z(level) == 812.25);
    const double mh = 102.4 * 65536.0 / 65535.0;
    char ter_path[700];
    snprintf(ter_path, sizeof ter_path, "%s/theTerrain.ter", level);
    trn_ter ter;
    CHECK_OK(trn_ter_read(ter_path, NULL, &ter, NULL, NULL, NULL));
    CHECK_EQ_INT(ter.size, 256);
    CHECK_CONTAINS(err_saved, "maxHeight 102.402 m");
    trn_field f;
    CHECK_OK(trn_ter_to_field(&ter, mh, 1.0, &f, NULL, NULL));
    /* Sample (10, 20) of the .ter is image row 256 - 20 of the raster (row 0 = north). */
    const double want =
        812.25 + 0.3 * 10 + 0.1 * (256 - 20) +
        40.0 * exp(-((10 - 128.5) * (10 - 128.5) + (236 - 128.5) * (236 - 128.5)) / 800.0) - 812.25;
    CHECK(fabs((double)f.heights[20 * 256 + 10] - want) < 0.01);
    if (!(fabs((double)f.heights[20 * 256 + 10] - want) < 0.01))
        fprintf(stderr, "  got %.4f, want %.4f\n", (double)f.heights[20 * 256 + 10], want);
    trn_field_dispose(&f);
    trn_ter_dispose(&ter);
    free(err_saved);

    /* --max-height too small for the relief is refused, naming both. */
    snprintf(level, sizeof level, "%s/game/levels/small", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert %s beamng:%s --max-height 50", &out, &err, tif, level),
                 1);
    CHECK_CONTAINS(err, "--max-height 50 m cannot hold");
    free(out), free(err);

    /* Not a power of two: refused with the fix; --pow2 resamples. */
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s/odd.tif --size 300x300", &out, &err, tif, tmp),
                 0);
    free(out), free(err);
    snprintf(level, sizeof level, "%s/game/levels/odd", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert %s/odd.tif beamng:%s", &out, &err, tmp, level), 1);
    CHECK_CONTAINS(err, "add --pow2");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s/odd.tif beamng:%s --pow2", &out, &err, tmp, level),
                 0);
    CHECK_CONTAINS(err, "0 error(s)");
    free(out), free(err);
    CHECK(trn_test_exists(level));
}

/* convert --scaffold: the level opens and drives and validates clean; only for beamng: */
static void test_level_scaffold(void)
{
    char in[600], level[600], p[700];
    snprintf(in, sizeof in, "%s/sc.r32", tmp);
    make_r32(in, 257);
    snprintf(level, sizeof level, "%s/game/levels/sc", tmp);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("convert %s beamng:%s --scaffold", &out, &err, in, level), 0);
    CHECK_CONTAINS(err, "scaffold: spawn point at");
    CHECK_CONTAINS(err, "0 error(s)");
    free(out), free(err);
    static const char *const files[] = {"info.json", "preview.png",
                                        "main/MissionGroup/PlayerDropPoints/items.level.json",
                                        "main/MissionGroup/sky_and_sun/items.level.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", level, files[i]);
        CHECK(trn_test_exists(p));
    }
    CHECK_EQ_INT(trn_test_run_clif("beamng validate %s", &out, &err, level), 0);
    CHECK_CONTAINS(out, "0 errors, 0 warnings");
    free(out), free(err);
    /* Without it: only the terrain's files. */
    snprintf(level, sizeof level, "%s/game/levels/plain", tmp);
    CHECK_EQ_INT(trn_test_run_clif("convert %s beamng:%s", &out, &err, in, level), 0);
    free(out), free(err);
    snprintf(p, sizeof p, "%s/info.json", level);
    CHECK(!trn_test_exists(p));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s/sc.png --scaffold", &out, &err, in, tmp), 2);
    CHECK_CONTAINS(err, "--scaffold builds a BeamNG level");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_level_from_raster);
    RUN(test_level_scaffold);
    return trn_test_finish();
}
