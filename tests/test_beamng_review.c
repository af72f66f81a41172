/* Library review tests for BeamNG import and validate: bad maps, folders that are not levels,
 * finding positions. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"
#include "test.h"

static char tmp[512];

static void test_validate_not_a_level(void)
{
    char dir[700], p[1024];
    snprintf(dir, sizeof dir, "%s/not_a_level", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(p, sizeof p, "%s/materials.json", dir);
    CHECK(trn_test_write_file(p, "{", 1));
    trn_findings f = {0};
    trn_error e;
    CHECK_STATUS(trn_beamng_validate(dir, NULL, &f, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(f.count, 0);
    CHECK(strcmp(e.file, dir) == 0);
    CHECK_EQ_INT(e.offset, -1);
    CHECK_CONTAINS(e.message, "does not look like a BeamNG level");
    /* One marker is enough: main/ makes it a level (with no TerrainBlock yet). */
    snprintf(p, sizeof p, "%s/main", dir);
    CHECK(mkdir(p, 0755) == 0);
    CHECK_OK(trn_beamng_validate(dir, NULL, &f, NULL, NULL, &e));
    CHECK(trn_findings_find(&f, "terrain-block-missing") != NULL);
    CHECK(trn_findings_find(&f, "materials-invalid") != NULL);
    trn_findings_dispose(&f);
    /* A file is refused as such. */
    snprintf(p, sizeof p, "%s/materials.json", dir);
    CHECK_STATUS(trn_beamng_validate(p, NULL, &f, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "is a file, not a level folder");
    CHECK(strcmp(e.file, p) == 0);
    trn_findings_dispose(&f);
}

static trn_image image(uint32_t n, uint8_t channels, uint8_t fill)
{
    trn_image img;
    if (trn_image_init(&img, n, n, channels, 8, NULL)) abort();
    memset(img.data, fill, (size_t)n * n * channels);
    return img;
}

/* Maps read through their first channel must be grey: a colour picture or transparency is
 * refused with the pixel, a grey picture saved as RGB(A) is read. */
static void test_import_grey_maps(void)
{
    const uint32_t n = 128;
    trn_image hm = image(n, 1, 100), holes = image(n, 4, 0);
    uint8_t *px = holes.data;
    for (size_t i = 3; i < (size_t)n * n * 4; i += 4)
        px[i] = 255; /* opaque */
    size_t at = ((size_t)2 * n + 5) * 4;
    px[at] = px[at + 1] = px[at + 2] = 255; /* a hole at image (5, 2) */
    const char *names[1] = {"grass"};
    trn_beamng_import_images in = {0};
    in.heightmap = &hm;
    in.holes = &holes;
    in.material_names = names;
    in.material_count = 1;
    in.holes_path = "holes.png";
    trn_ter ter;
    trn_error e;
    CHECK_OK(trn_beamng_build_ter(&in, &ter, NULL, NULL, &e));
    CHECK_EQ_INT(ter.layers[(size_t)(n - 1 - 2) * n + 5], 255);
    trn_ter_dispose(&ter);
    px[at + 1] = 0; /* now red */
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "hole map is not grey: pixel (5, 2) is R 255, G 0, B 255");
    CHECK(strcmp(e.file, "holes.png") == 0);
    CHECK_EQ_INT(e.offset, -1);
    CHECK(ter.layers == NULL);
    px[at + 1] = 255;
    px[at + 3] = 0; /* transparent */
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "hole map has transparent pixels, the first at (5, 2)");
    /* A colour heightmap is refused too; its alpha is not looked at. */
    trn_image rgb = image(n, 3, 40);
    ((uint8_t *)rgb.data)[((size_t)7 * n + 1) * 3 + 2] = 41;
    in.heightmap = &rgb;
    in.holes = NULL;
    in.heightmap_path = "h.png";
    CHECK_STATUS(trn_beamng_build_ter(&in, &ter, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "heightmap is not grey: pixel (1, 7) is R 40, G 40, B 41");
    trn_image_dispose(&rgb);
    trn_image_dispose(&hm);
    trn_image_dispose(&holes);
}

/* Files that are folders or empty say so, with the offset where there is one. */
static void test_import_files(void)
{
    char dir[700], empty[800];
    snprintf(dir, sizeof dir, "%s/folder.png", tmp);
    CHECK(mkdir(dir, 0755) == 0);
    snprintf(empty, sizeof empty, "%s/empty.png", tmp);
    CHECK(trn_test_write_file(empty, "", 0));
    const char *names[1] = {"grass"};
    trn_beamng_import_options io = {0};
    io.material_names = names;
    io.material_count = 1;
    trn_ter ter;
    trn_error e;
    io.heightmap_path = dir;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "heightmap is a folder, expected a file");
    CHECK(strcmp(e.file, dir) == 0);
    io.heightmap_path = empty;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "heightmap is empty (0 bytes)");
    CHECK_EQ_INT(e.offset, 0);
    char r16[800];
    snprintf(r16, sizeof r16, "%s/odd.r16", tmp);
    CHECK(trn_test_write_file(r16, "abc", 3));
    io.heightmap_path = r16;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "R16 heightmap is 3 bytes, an odd length");
    CHECK_EQ_INT(e.offset, 2);
}

/* Headerless heightmaps: R16 in either byte order, R32 floats only with a scale. */
static void test_import_raw_kinds(void)
{
    const uint32_t n = 128;
    const size_t samples = (size_t)n * n;
    uint8_t *be = malloc(samples * 2);
    for (size_t i = 0; i < samples; i++) {
        uint16_t v = (uint16_t)(i * 3 + 1);
        be[2 * i] = (uint8_t)(v >> 8);
        be[2 * i + 1] = (uint8_t)(v & 0xFF);
    }
    char r16[800];
    snprintf(r16, sizeof r16, "%s/mac.raw", tmp);
    CHECK(trn_test_write_file(r16, be, samples * 2));
    const char *names[1] = {"grass"};
    trn_beamng_import_options io = {0};
    io.material_names = names;
    io.material_count = 1;
    io.heightmap_path = r16;
    trn_ter ter;
    trn_error e;
    /* Image row 0 is the terrain's last row; sample (x 5, image row 0) is file sample 5. */
    size_t last_row = (size_t)(n - 1) * n;
    CHECK_OK(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(ter.heights[last_row + 5], 0x1000); /* 16 = 0x0010 read the wrong way round */
    trn_ter_dispose(&ter);
    io.raw_big_endian = true;
    CHECK_OK(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(ter.heights[last_row + 5], 16);
    CHECK_EQ_INT(ter.heights[0], (uint16_t)(last_row * 3 + 1));
    CHECK_EQ_INT(ter.warning_count, 0);
    trn_ter_dispose(&ter);
    free(be);

    /* A byte order for a PNG would be ignored: refused. */
    trn_image hm = image(n, 1, 7);
    char png[800];
    snprintf(png, sizeof png, "%s/h.png", tmp);
    trn_png_options po;
    trn_png_options_default(&po);
    CHECK_OK(trn_png_write(png, &hm, &po, NULL, NULL, NULL));
    trn_image_dispose(&hm);
    io.heightmap_path = png;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "the heightmap is a PNG, whose byte order is fixed");
    CHECK(strcmp(e.file, png) == 0);

    /* R32: metres scaled by maxHeight, with -5 m, 1000 m and NaN clamped and counted. */
    float *f = malloc(samples * 4);
    for (size_t i = 0; i < samples; i++)
        f[i] = (float)(i % 1000);
    /* File row 0 (the image's top) becomes the terrain's last row. */
    f[0] = -5.0f;
    f[1] = 1000.0f;
    f[2] = NAN;
    f[3] = 999.99f;
    f[4] = 500.0f;
    char r32[800];
    snprintf(r32, sizeof r32, "%s/height.R32", tmp);
    CHECK(trn_test_write_file(r32, f, samples * 4)); /* little-endian host assumed, as x86 */
    io.heightmap_path = r32;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "big-endian byte order is for R16 heightmaps");
    io.raw_big_endian = false;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "R32 heightmap holds heights in metres (-5 .. 1000 m)");
    CHECK_CONTAINS(e.message, "--max-height M");
    CHECK(ter.heights == NULL);
    io.float_max_height = 1000;
    CHECK_OK(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e));
    CHECK_EQ_INT(ter.heights[last_row + 0], 0);
    CHECK_EQ_INT(ter.heights[last_row + 1], 65535);
    CHECK_EQ_INT(ter.heights[last_row + 2], 0);
    CHECK_EQ_INT(ter.heights[last_row + 3], 65535); /* round(65535.34) */
    CHECK_EQ_INT(ter.heights[last_row + 4], 32768);
    CHECK_EQ_INT(ter.heights[last_row + 7], 459); /* round(7 / 1000 * 65536) = 458.75 */
    CHECK_EQ_INT(ter.warning_count, 1);
    if (ter.warning_count == 1)
        CHECK_CONTAINS(ter.warnings[0].message,
                       "3 of 16384 heights clamped (1 below 0 m, 1 at or above maxHeight 1000 m, "
                       "1 NaN; heights -5 .. 1000 m)");
    trn_ter_dispose(&ter);
    /* The level's maxHeight is the scale when none is given; two different ones are refused. */
    char level[800];
    snprintf(level, sizeof level, "%s/levels/floaty", tmp);
    trn_beamng_level_options lo = {0};
    lo.level_dir = level;
    lo.max_height = 2000;
    lo.textures.base_size = lo.textures.macro_size = lo.textures.detail_size = 8;
    trn_beamng_level_result res;
    CHECK_STATUS(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "the terrain would come out 2 times as high");
    io.float_max_height = 0;
    CHECK_OK(trn_beamng_import(&io, &ter, &lo, &res, NULL, NULL, &e));
    CHECK_EQ_INT(ter.heights[last_row + 4], 16384);
    CHECK_EQ_INT(ter.warning_count, 1); /* -5 and NaN only: 1000 m fits under 2000 */
    if (ter.warning_count == 1) CHECK_CONTAINS(ter.warnings[0].message, "2 of 16384");
    trn_ter_dispose(&ter);
    /* A length that is not whole floats. */
    CHECK(trn_test_write_file(r32, f, samples * 4 - 2));
    io.float_max_height = 1000;
    CHECK_STATUS(trn_beamng_import(&io, &ter, NULL, NULL, NULL, NULL, &e), TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "not a multiple of 4");
    CHECK_EQ_INT(e.offset, (int64_t)(samples * 4 - 4));
    free(f);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_validate_not_a_level);
    RUN(test_import_grey_maps);
    RUN(test_import_files);
    RUN(test_import_raw_kinds);
    return trn_test_finish();
}
