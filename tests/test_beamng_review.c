/* Library review tests for BeamNG import and validate: bad maps, folders that are not levels,
 * finding positions. */
#define _POSIX_C_SOURCE 200809L
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

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_validate_not_a_level);
    RUN(test_import_grey_maps);
    RUN(test_import_files);
    return trn_test_finish();
}
