/* Command-line tests for terrane stats: text and JSON figures, recipes, DEMs, bad inputs. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static char tmp[512];

static const char *tmp_path(const char *name)
{
    static char path[4][700];
    static int next;
    char *p = path[next++ & 3];
    snprintf(p, sizeof path[0], "%s/%s", tmp, name);
    return p;
}

/* 65 x 65 float samples (.r32): flat ground at 0 with one paraboloid pit, radius 10, 10 m. */
static const char *write_pit(void)
{
    float h[65 * 65];
    int deep = 0;
    for (int j = 0; j < 65; j++)
        for (int i = 0; i < 65; i++) {
            const double r = hypot(i - 32.0, j - 32.0);
            h[j * 65 + i] = r < 10 ? (float)(-10.0 * (1.0 - r * r / 100.0)) : 0.0f;
            deep += r < 10 && -(double)h[j * 65 + i] > 1e-3;
        }
    CHECK(deep > 300 && deep < 330);
    const char *p = tmp_path("pit.r32");
    CHECK(trn_test_write_file(p, h, sizeof h));
    return p;
}

static json_t *figure(json_t *doc, const char *name)
{
    json_t *list = json_object_get(doc, "figures");
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *f = json_array_get(list, k);
        if (strcmp(json_string_value(json_object_get(f, "name")), name) == 0) return f;
    }
    return NULL;
}

static double value_of(json_t *doc, const char *name)
{
    json_t *f = figure(doc, name);
    json_t *v = f ? json_object_get(f, "value") : NULL;
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void test_json(void)
{
    const char *pit = write_pit();
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats %s --size 65x65 --format json", &out, &err, pit);
    CHECK_EQ_INT(rc, 0);
    /* Numbers in their shortest round-trip form, reals kept reals. */
    CHECK_CONTAINS(out, "\"depression_tolerance\": 0.001,");
    CHECK_CONTAINS(out, "\"channel_cells\": 100.0,");
    CHECK(!strstr(out ? out : "", "0.0010000000000000000"));
    json_error_t je;
    json_t *doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_EQ_INT(json_integer_value(json_object_get(doc, "valid_samples")), 65 * 65);
        CHECK_EQ_INT(json_integer_value(json_object_get(doc, "nodata_samples")), 0);
        CHECK(value_of(doc, "depression_count") == 1.0);
        CHECK(value_of(doc, "max_depression_depth") == 10.0);
        CHECK(value_of(doc, "relief") == 10.0);
        CHECK(fabs(value_of(doc, "depression_fraction") * 65 * 65 - 314) < 16);
        /* Every figure has a name, a unit and a reference; fits carry range and R^2. */
        json_t *list = json_object_get(doc, "figures");
        CHECK(json_array_size(list) >= 20);
        for (size_t k = 0; k < json_array_size(list); k++) {
            json_t *f = json_array_get(list, k);
            CHECK(json_is_string(json_object_get(f, "name")));
            CHECK(json_is_string(json_object_get(f, "unit")));
            CHECK(json_is_string(json_object_get(f, "reference")));
            CHECK(json_object_get(f, "value") != NULL);
        }
        json_t *b = figure(doc, "area_exponent");
        json_t *fit = b ? json_object_get(b, "fit") : NULL;
        CHECK(fit != NULL);
        if (fit) {
            json_t *range = json_object_get(fit, "range");
            CHECK(json_number_value(json_array_get(range, 0)) == 10.0);
            CHECK(fabs(json_number_value(json_array_get(range, 1)) - 42.25) < 1e-9);
            CHECK(json_object_get(fit, "r2") != NULL);
            CHECK_CONTAINS(json_string_value(json_object_get(fit, "range_unit")), "cells");
        }
        json_t *sp = figure(doc, "spectral_slope");
        CHECK(sp && json_object_get(sp, "fit"));
        CHECK_CONTAINS(json_string_value(json_object_get(figure(doc, "slope_median"), "unit")),
                       "deg");
        json_decref(doc);
    }
    free(out);
    free(err);

    /* Options reach the library: a tolerance above the 10 m depth leaves no depression; the
     * channel area and the fit range are reported back. */
    rc = trn_test_run_clif("stats %s --size 65x65 --square-size 2 --format json "
                           "--depression-tolerance 10 --channel-area 400 --fit-range 2,30",
                           &out, &err, pit);
    CHECK_EQ_INT(rc, 0);
    doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK(value_of(doc, "depression_count") == 0.0);
        CHECK(json_number_value(json_object_get(doc, "depression_tolerance")) == 10.0);
        CHECK(json_number_value(json_object_get(doc, "channel_cells")) == 100.0);
        CHECK(json_number_value(json_object_get(doc, "channel_area")) == 400.0);
        CHECK(json_number_value(json_array_get(json_object_get(doc, "cell_size"), 0)) == 2.0);
        json_t *range =
            json_object_get(json_object_get(figure(doc, "area_exponent"), "fit"), "range");
        CHECK(json_number_value(json_array_get(range, 0)) == 2.0);
        CHECK(json_number_value(json_array_get(range, 1)) == 30.0);
        json_decref(doc);
    }
    free(out);
    free(err);
}

static void test_text(void)
{
    const char *pit = write_pit();
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats %s --size 65x65 --quiet", &out, &err, pit);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(out, "64 x 64 cells of 1 x 1 m");
    CHECK_CONTAINS(out, "real land");
    CHECK_CONTAINS(out, "hypsometric integral");
    CHECK_CONTAINS(out, "closed depressions                                1  count");
    CHECK_CONTAINS(out, "deepest depression                           10.000  m");
    CHECK_CONTAINS(out, "-2 to -3.5 (Perron et al. 2008)");
    CHECK_CONTAINS(out, "0.43-0.5");
    CHECK_CONTAINS(out, "over a = 10..42.25 cells");
    CHECK_CONTAINS(out, "slopes facing multiples of 45 deg");
    CHECK_CONTAINS(out, "0.10-0.12 (chance 0.111)");
    CHECK_CONTAINS(out, "strongest at a period of");
    CHECK(err && err[0] == '\0');
    free(out);
    free(err);
    rc = trn_test_run_clif("stats --help", &out, &err);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(out, "usage: terrane stats INPUT");
    free(out);
    free(err);
    rc = trn_test_run_clif("--help", &out, &err);
    CHECK_CONTAINS(out, "  stats ");
    free(out);
    free(err);
}

/* No data in an R32 stays no data (other verbs fill it); 16-bit rasters load as usual. */
static void test_nodata_and_r16(void)
{
    float h[33 * 33];
    uint16_t q[33 * 33];
    for (int j = 0; j < 33; j++)
        for (int i = 0; i < 33; i++) {
            h[j * 33 + i] = (float)(10.0 * sin(i * 0.3) + 0.5 * j);
            if (i >= 10 && i < 15 && j >= 10 && j < 14) h[j * 33 + i] = NAN;
            q[j * 33 + i] = (uint16_t)(1000 + 100 * i + j);
        }
    h[0] = INFINITY;
    const char *holes = tmp_path("holes.r32"), *ramp = tmp_path("ramp.r16");
    CHECK(trn_test_write_file(holes, h, sizeof h));
    CHECK(trn_test_write_file(ramp, q, sizeof q));
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats %s --size 33x33", &out, &err, holes);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(out, "21 of 1089 samples no data (left out)");
    free(out);
    free(err);
    rc = trn_test_run_clif("stats %s --size 33x33 --format json", &out, &err, ramp);
    CHECK_EQ_INT(rc, 0);
    json_error_t je;
    json_t *doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_EQ_INT(json_integer_value(json_object_get(doc, "nodata_samples")), 0);
        /* 100 stored units a sample of 2048 / 65536 m: a plane, no depressions. */
        CHECK(value_of(doc, "depression_count") == 0.0);
        CHECK(fabs(value_of(doc, "relief") - (3200.0 + 32.0) * 2048.0 / 65536.0) < 1e-6);
        json_decref(doc);
    }
    free(out);
    free(err);
}

static void test_recipe(void)
{
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats %s/examples/recipes/island.json --format json --quiet", &out,
                               &err, TRN_SOURCE_DIR);
    CHECK_EQ_INT(rc, 0);
    json_error_t je;
    json_t *doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_CONTAINS(json_string_value(json_object_get(doc, "input_format")), "recipe");
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(doc, "cells"), 0)), 128);
        CHECK(value_of(doc, "relief") > 0);
        /* The grid fingerprints, with what they were measured over. */
        CHECK(value_of(doc, "axis45_ratio") > 0.5 && value_of(doc, "axis45_ratio") < 4.5);
        CHECK(value_of(doc, "periodic_curvature_ratio") >= 0);
        CHECK(json_number_value(json_object_get(doc, "aspect_min_slope")) == 2.0);
        CHECK(json_integer_value(json_object_get(doc, "aspect_samples")) > 1000);
        const char *axis = json_string_value(json_object_get(doc, "periodic_axis"));
        CHECK(axis && (strcmp(axis, "x") == 0 || strcmp(axis, "z") == 0));
        CHECK(json_number_value(json_object_get(doc, "periodic_period_x")) >= 2.0);
        CHECK(json_number_value(json_object_get(doc, "periodic_period_z")) <= 32.0);
        CHECK_CONTAINS(json_string_value(json_object_get(figure(doc, "axis45_ratio"),
                                                         "reference")),
                       "0.96-1.04");
        json_decref(doc);
    }
    free(out);
    free(err);
    /* Another grid over the same world: the same recipe at 64 x 48 cells. */
    rc = trn_test_run_clif("stats %s/examples/recipes/island.json --resolution 64x48 --format json "
                           "--quiet",
                           &out, &err, TRN_SOURCE_DIR);
    CHECK_EQ_INT(rc, 0);
    doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(doc, "cells"), 0)), 64);
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(doc, "cells"), 1)), 48);
        CHECK(json_number_value(json_array_get(json_object_get(doc, "cell_size"), 0)) == 64.0); /* 4096 m */
        json_decref(doc);
    }
    free(out);
    free(err);
    /* Too small a grid for a periodic profile: said in words, not "nan". */
    rc = trn_test_run_clif("stats %s/examples/recipes/island.json --resolution 3x3 --quiet", &out,
                           &err, TRN_SOURCE_DIR);
    CHECK_EQ_INT(rc, 0);
    CHECK_CONTAINS(out, "periodic curvature: none (fewer than 16 interior columns and rows)");
    free(out);
    free(err);
    /* A heightfield has no grid to change. */
    const char *pit = write_pit();
    rc = trn_test_run_clif("stats %s --size 65x65 --resolution 32x32", &out, &err, pit);
    CHECK_EQ_INT(rc, 2);
    CHECK_CONTAINS(err, "--resolution only applies to a recipe");
    free(out);
    free(err);
}

static void test_real_dem(void)
{
    char path[1024];
    if (!trn_test_real_path("dem_srtm30_central_japan.tif", path, sizeof path)) {
        fprintf(stderr, "skip test_real_dem: ../shared/testdata/real is absent\n");
        return;
    }
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats '%s' --format json", &out, &err, path);
    CHECK_EQ_INT(rc, 0);
    json_error_t je;
    json_t *doc = json_loads(out ? out : "", 0, &je);
    CHECK(doc != NULL);
    if (doc) {
        CHECK_CONTAINS(json_string_value(json_object_get(doc, "input_format")), "geotiff");
        /* Geographic pixels in metres at 35.7 N: about 754 x 925 m. */
        CHECK(fabs(json_number_value(json_array_get(json_object_get(doc, "cell_size"), 0)) - 754) < 2);
        CHECK(fabs(json_number_value(json_array_get(json_object_get(doc, "cell_size"), 1)) - 925) < 2);
        CHECK(value_of(doc, "depression_fraction") > 0.03);
        CHECK(value_of(doc, "depression_fraction") < 0.05);
        CHECK(fabs(value_of(doc, "area_exponent") - 0.64) < 0.06);
        CHECK(value_of(doc, "relief") == 3664.0);
        CHECK(fabs(value_of(doc, "axis45_ratio") - 1.0) < 0.04);
        CHECK(value_of(doc, "periodic_curvature_ratio") < 1.0);
        json_decref(doc);
    }
    free(out);
    free(err);
}

static void test_bad_input(void)
{
    char *out = NULL, *err = NULL;
    int rc = trn_test_run_clif("stats %s", &out, &err, tmp_path("missing.tif"));
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(err, "missing.tif");
    CHECK(out && out[0] == '\0');
    free(out);
    free(err);
    const char *notes = tmp_path("notes.txt");
    CHECK(trn_test_write_file(notes, "just some words, not heights\n", 29));
    rc = trn_test_run_clif("stats %s", &out, &err, notes);
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(err, "notes.txt");
    free(out);
    free(err);
    /* All no data: the library's refusal, as a failure. */
    float nan_heights[4 * 4];
    for (int k = 0; k < 16; k++)
        nan_heights[k] = NAN;
    const char *holes = tmp_path("holes.r32");
    CHECK(trn_test_write_file(holes, nan_heights, sizeof nan_heights));
    rc = trn_test_run_clif("stats %s --size 4x4", &out, &err, holes);
    CHECK_EQ_INT(rc, 1);
    CHECK_CONTAINS(err, "all 16 samples are NaN");
    free(out);
    free(err);
    /* Usage errors: exit 2. */
    const char *usage[] = {"stats",
                           "stats a b",
                           "stats x --fit-range 10,10",
                           "stats x --fit-range 0.5,10",
                           "stats x --fit-range 10",
                           "stats x --channel-area 0",
                           "stats x --depression-tolerance -1",
                           "stats x --resolution 0x5",
                           "stats x --resolution big",
                           "stats x --bogus 1"};
    for (size_t k = 0; k < sizeof usage / sizeof usage[0]; k++) {
        rc = trn_test_run_cli(usage[k], &out, &err);
        if (rc != 2) fprintf(stderr, "  '%s' gave %d\n", usage[k], rc);
        CHECK_EQ_INT(rc, 2);
        free(out);
        free(err);
    }
    rc = trn_test_run_cli("stats x --fit-range 10,10", &out, &err);
    CHECK_CONTAINS(err, "1 <= MIN < MAX");
    free(out);
    free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_json);
    RUN(test_text);
    RUN(test_nodata_and_r16);
    RUN(test_recipe);
    RUN(test_real_dem);
    RUN(test_bad_input);
    return trn_test_finish();
}
