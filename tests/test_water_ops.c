/* Tests: basin proposals, Water Edit, River Route and the water codec on analytic inputs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "terrane/drainage.h"
#include "terrane/water.h"
#include "test.h"

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

/* A flat field at height `base` over cells x cells, size world units a side. */
static void flat_field(trn_field *f, uint32_t cells, double size, float base)
{
    CHECK_OK(trn_field_init(f, cells, cells, size, size, NULL));
    const size_t n = trn_field_sample_count(f);
    for (size_t k = 0; k < n; k++)
        f->heights[k] = base;
}

/* Lower the samples (i0..i1, j0..j1) to h. */
static void dig(trn_field *f, uint32_t i0, uint32_t i1, uint32_t j0, uint32_t j1, float h)
{
    const size_t nx = (size_t)f->cells_x + 1u;
    for (uint32_t j = j0; j <= j1; j++)
        for (uint32_t i = i0; i <= i1; i++)
            f->heights[(size_t)j * nx + i] = h;
}

/* ---- basin proposals ---- */

/* 16x16 cells over 32x32 (cell area 4) at height 10: pit A at samples 3..4 x 3..4 lowered to 8
 * (depth 2, 4 samples = 16 world units^2), pit B at 10..12 x 10..12 lowered to 7 (depth 3, 9
 * samples = 36 world units^2). B is deeper but has the larger sink index. */
static void two_pits(trn_field *f, trn_drainage *d)
{
    flat_field(f, 16, 32.0, 10.0f);
    dig(f, 3, 4, 3, 4, 8.0f);
    dig(f, 10, 12, 10, 12, 7.0f);
    CHECK_OK(trn_drainage_compute(f, NAN, d, NULL, NULL, NULL));
    CHECK_EQ_INT(d->basin_count, 2);
}

static void propose(const trn_drainage *d, const trn_field *f, const trn_basin_water_params *p,
                    uint32_t expect_count, uint32_t expect_eligible, trn_water_body **bodies)
{
    uint32_t count = 99, eligible = 99;
    *bodies = NULL;
    CHECK_OK(trn_water_propose_basins(d, f->heights, "lakes", p, bodies, &count, &eligible, NULL));
    CHECK_EQ_INT(count, expect_count);
    CHECK_EQ_INT(eligible, expect_eligible);
}

static void test_basin_defaults(void)
{
    trn_basin_water_params p;
    memset(&p, 0xff, sizeof p);
    trn_basin_water_params_default(&p);
    CHECK(p.minimum_depth == 1.0 && p.minimum_area == 16.0);
    CHECK_EQ_INT(p.maximum_bodies, 16);
    CHECK(p.level_offset == 0.0);
    trn_basin_water_params_default(NULL);

    trn_field f;
    trn_drainage d;
    two_pits(&f, &d);
    trn_water_body *b;
    /* Pit A's area is exactly the default minimum: eligible. */
    propose(&d, &f, NULL, 2, 2, &b);
    CHECK(strcmp(b[0].id, "lakes/basin/3_3") == 0);
    CHECK(strcmp(b[1].id, "lakes/basin/10_10") == 0);
    for (int k = 0; k < 2; k++) {
        CHECK(b[k].kind == TRN_WATER_LAKE && !b[k].carve);
        CHECK(b[k].level == 10.0);
        CHECK(b[k].boundary == NULL && b[k].carve_depth == 0.0);
        CHECK_OK(trn_water_body_validate(&b[k], NULL, NULL));
    }
    CHECK(b[0].center_x == 6.0 && b[0].center_z == 6.0);
    CHECK(b[1].center_x == 20.0 && b[1].center_z == 20.0);
    /* Farthest raised sample plus one cell diagonal (cells are 2 x 2). */
    CHECK_NEAR(b[0].radius, sqrt(8.0) + sqrt(8.0), 1e-12);
    CHECK_NEAR(b[1].radius, sqrt(32.0) + sqrt(8.0), 1e-12);
    trn_water_bodies_free(b, 2);
    trn_water_bodies_free(NULL, 3);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_basin_thresholds(void)
{
    trn_field f;
    trn_drainage d;
    two_pits(&f, &d);
    trn_basin_water_params p;
    trn_water_body *b;

    trn_basin_water_params_default(&p);
    p.minimum_area = nextafter(16.0, 17.0);
    propose(&d, &f, &p, 1, 1, &b);
    CHECK(strcmp(b[0].id, "lakes/basin/10_10") == 0);
    trn_water_bodies_free(b, 1);
    p.minimum_area = 36.0; /* B exactly */
    propose(&d, &f, &p, 1, 1, &b);
    trn_water_bodies_free(b, 1);
    p.minimum_area = nextafter(36.0, 37.0);
    propose(&d, &f, &p, 0, 0, &b);
    CHECK(b == NULL);

    trn_basin_water_params_default(&p);
    p.minimum_depth = 2.0; /* A exactly */
    propose(&d, &f, &p, 2, 2, &b);
    trn_water_bodies_free(b, 2);
    p.minimum_depth = nextafter(2.0, 3.0);
    propose(&d, &f, &p, 1, 1, &b);
    CHECK(strcmp(b[0].id, "lakes/basin/10_10") == 0);
    trn_water_bodies_free(b, 1);
    p.minimum_depth = 3.0;
    propose(&d, &f, &p, 1, 1, &b);
    trn_water_bodies_free(b, 1);
    p.minimum_depth = nextafter(3.0, 4.0);
    propose(&d, &f, &p, 0, 0, &b);

    /* A level offset lowers every proposal; zero is allowed, anything above is not. */
    trn_basin_water_params_default(&p);
    p.level_offset = -0.5;
    propose(&d, &f, &p, 2, 2, &b);
    CHECK(b[0].level == 9.5 && b[1].level == 9.5);
    trn_water_bodies_free(b, 2);
    trn_error e;
    uint32_t count = 7;
    p.level_offset = 1e-9;
    b = (trn_water_body *)&count;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "level_offset");
    CHECK(b == NULL && count == 0);
    p.level_offset = NAN;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    trn_basin_water_params_default(&p);
    p.minimum_depth = -1.0;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "minimum_depth");
    p.minimum_depth = NAN;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    trn_basin_water_params_default(&p);
    p.minimum_area = INFINITY;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    trn_basin_water_params_default(&p);
    p.minimum_area = -1.0;
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, "lakes", &p, &b, &count, NULL, &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "minimum_area");
    CHECK_STATUS(trn_water_propose_basins(&d, NULL, "lakes", NULL, &b, &count, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    char long_id[128];
    memset(long_id, 'n', sizeof long_id);
    /* Room for "/basin/" and two 10-digit coordinates: node ids up to 99 bytes. */
    long_id[100] = '\0';
    CHECK_STATUS(trn_water_propose_basins(&d, f.heights, long_id, NULL, &b, &count, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "at most 99 bytes, found 100");
    long_id[99] = '\0';
    CHECK_OK(trn_water_propose_basins(&d, f.heights, long_id, NULL, &b, &count, NULL, &e));
    trn_water_bodies_free(b, count);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_basin_budget(void)
{
    trn_field f;
    trn_drainage d;
    two_pits(&f, &d);
    trn_basin_water_params p;
    trn_water_body *all, *b;
    propose(&d, &f, NULL, 2, 2, &all);
    trn_basin_water_params_default(&p);
    p.maximum_bodies = 1;
    /* The deepest survives with the id, level and radius it had with room for both. */
    propose(&d, &f, &p, 1, 2, &b);
    CHECK(strcmp(b[0].id, all[1].id) == 0);
    CHECK(b[0].level == all[1].level && b[0].radius == all[1].radius);
    CHECK(b[0].center_x == all[1].center_x && b[0].center_z == all[1].center_z);
    trn_water_bodies_free(b, 1);
    p.maximum_bodies = 0;
    propose(&d, &f, &p, 0, 2, &b);
    CHECK(b == NULL);
    p.maximum_bodies = 2;
    propose(&d, &f, &p, 2, 2, &b);
    trn_water_bodies_free(b, 2);
    trn_water_bodies_free(all, 2);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);

    /* Equal depths: the larger area wins, then the smaller sink index. 1-sample pits P (2, 2)
     * and S (2, 8), a 4-sample pit Q (8, 2), all 2 deep, on 12x12 cells of size 12. */
    flat_field(&f, 12, 12.0, 5.0f);
    dig(&f, 2, 2, 2, 2, 3.0f);
    dig(&f, 2, 2, 8, 8, 3.0f);
    dig(&f, 8, 9, 2, 3, 3.0f);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_basin_water_params_default(&p);
    p.minimum_area = 0.0;
    p.maximum_bodies = 1;
    propose(&d, &f, &p, 1, 3, &b);
    CHECK(strcmp(b[0].id, "lakes/basin/8_2") == 0);
    trn_water_bodies_free(b, 1);
    p.maximum_bodies = 2;
    propose(&d, &f, &p, 2, 3, &b);
    /* Output in sink index order: P (index 2*13+2) before Q (2*13+8). */
    CHECK(strcmp(b[0].id, "lakes/basin/2_2") == 0);
    CHECK(strcmp(b[1].id, "lakes/basin/8_2") == 0);
    CHECK(b[0].radius == sqrt(2.0)); /* a single raised sample: one diagonal */
    trn_water_bodies_free(b, 2);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* A basin's radius counts only its raised samples, not the plain around it at the spill
 * level (which the drainage's filled surface cannot tell apart). */
static void test_basin_radius_plain(void)
{
    trn_field f;
    trn_drainage d;
    flat_field(&f, 20, 20.0, 0.0f);
    dig(&f, 10, 10, 10, 11, -2.0f);
    f.heights[10 * 21 + 10] = -3.0f;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_water_body *b;
    trn_basin_water_params p;
    trn_basin_water_params_default(&p);
    p.minimum_area = 0.0;
    propose(&d, &f, &p, 1, 1, &b);
    CHECK(strcmp(b[0].id, "lakes/basin/10_10") == 0);
    CHECK_NEAR(b[0].radius, 1.0 + sqrt(2.0), 1e-12);
    trn_water_bodies_free(b, 1);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* ---- Water Edit ---- */

/* lake "a", ocean "o", river "r": valid bodies with distinct values. */
static trn_water_body *edit_bodies(void)
{
    trn_water_body *b = calloc(3, sizeof *b);
    trn_water_body_init(&b[0], TRN_WATER_LAKE, "a");
    b[0].level = 1.0;
    b[0].center_x = 5.0;
    b[0].center_z = 5.0;
    b[0].radius = 10.0;
    b[0].carve = true;
    trn_water_body_init(&b[1], TRN_WATER_OCEAN, "o");
    b[1].level = -1.0;
    trn_water_body_init(&b[2], TRN_WATER_RIVER, "r");
    b[2].control = malloc(9 * sizeof(double));
    const double c[9] = {0, 0, 0, 5, -1, 5, 10, -2, 0};
    memcpy(b[2].control, c, sizeof c);
    b[2].control_count = 3;
    b[2].interpolation = TRN_RIVER_CATMULL_ROM;
    b[2].curve_steps = 2;
    CHECK_OK(trn_water_body_sample_path(&b[2], NULL));
    CHECK_EQ_INT(b[2].path_count, 5);
    for (int k = 0; k < 3; k++)
        CHECK_OK(trn_water_body_validate(&b[k], NULL, NULL));
    return b;
}

/* Expect the edit to fail with code at `where`; the message contains `says`. */
static void edit_fails(const char *excluded, const char *overrides, trn_status code,
                       const char *where, const char *says)
{
    trn_water_body *in = edit_bodies();
    trn_water_body *out = (trn_water_body *)in;
    uint32_t out_count = 9;
    char got[128];
    trn_error e;
    trn_status st =
        trn_water_edit(in, 3, excluded, overrides, &out, &out_count, got, sizeof got, &e);
    CHECK_STATUS(st, code);
    if (strcmp(got, where) != 0) {
        fprintf(stderr, "  where: got '%s', expected '%s' (%s)\n", got, where, e.message);
        CHECK(strcmp(got, where) == 0);
    }
    CHECK_CONTAINS(e.message, says);
    CHECK(out == NULL && out_count == 0);
    trn_water_bodies_free(in, 3);
}

static void test_edit_errors(void)
{
    edit_fails("[\"zz\"]", NULL, TRN_ERR_VALIDATION, "excluded_ids[0]",
               "expected the id of an input water body, found \"zz\"");
    edit_fails("[\"a\", \"a\"]", NULL, TRN_ERR_VALIDATION, "excluded_ids[1]",
               "first at excluded_ids[0]");
    edit_fails("[\"a\", 3]", NULL, TRN_ERR_VALIDATION, "excluded_ids[1]",
               "expected a body id string, found a number");
    edit_fails("{\"a\": 1}", NULL, TRN_ERR_VALIDATION, "excluded_ids",
               "expected an array, found an object");
    edit_fails("[", NULL, TRN_ERR_JSON, "excluded_ids", "excluded_ids");
    edit_fails(NULL, "[{\"id\": \"a\"}, {\"id\": \"zz\"}]", TRN_ERR_VALIDATION, "overrides[1].id",
               "found \"zz\"");
    edit_fails(NULL, "[{\"id\": \"a\", \"level\": 1}, {\"id\": \"a\", \"level\": 2}]",
               TRN_ERR_VALIDATION, "overrides[1].id", "first at overrides[0]");
    edit_fails("[\"o\", \"a\"]", "[{\"id\": \"a\", \"level\": 2}]", TRN_ERR_VALIDATION,
               "overrides[0].id", "excluded_ids[1] removes");
    edit_fails(NULL, "[{\"level\": 1}]", TRN_ERR_VALIDATION, "overrides[0]", "expected an \"id\"");
    edit_fails(NULL, "[{\"id\": 4}]", TRN_ERR_VALIDATION, "overrides[0].id",
               "expected a body id string, found a number");
    edit_fails(NULL, "[[]]", TRN_ERR_VALIDATION, "overrides[0]", "found an array");
    edit_fails(NULL, "{}", TRN_ERR_VALIDATION, "overrides", "expected an array");
    edit_fails(NULL, "[{\"id\": \"a\", \"id\": \"o\"}]", TRN_ERR_JSON, "overrides", "duplicate");
    edit_fails(NULL, "[{\"id\": \"a\", \"colour\": 1}]", TRN_ERR_VALIDATION, "overrides[0].colour",
               "water edit: unknown key 'colour' in overrides[0] (expected one of: kind, level, "
               "spill_offset, center, radius,");
    edit_fails(NULL, "[{\"id\": \"a\", \"levle\": 1}]", TRN_ERR_VALIDATION, "overrides[0].levle",
               "water edit: unknown key 'levle' in overrides[0]; did you mean 'level'?");
    edit_fails(NULL, "[{\"id\": \"a\", \"kind\": \"lake\"}]", TRN_ERR_VALIDATION,
               "overrides[0].kind", "not editable");
    edit_fails(NULL, "[{\"id\": \"a\", \"level\": 2}, {\"id\": \"o\", \"level\": \"high\"}]",
               TRN_ERR_VALIDATION, "overrides[1].level", "expected a number, found a string");
    edit_fails(NULL, "[{\"id\": \"a\", \"level\": null}]", TRN_ERR_VALIDATION, "overrides[0].level",
               "found null");
    edit_fails(NULL, "[{\"id\": \"a\", \"level\": \"full\"}]", TRN_ERR_VALIDATION,
               "overrides[0].level", "expected a number or \"spill\", found a string");
    edit_fails(NULL, "[{\"id\": \"o\", \"level\": \"spill\"}]", TRN_ERR_VALIDATION,
               "overrides[0].level", "\"spill\" fills a lake's basin; body 'o' is an ocean");
    edit_fails(NULL, "[{\"id\": \"o\", \"spill_offset\": 1}]", TRN_ERR_VALIDATION,
               "overrides[0].spill_offset", "applies to lakes only");
    edit_fails(NULL, "[{\"id\": \"a\", \"center\": [1]}]", TRN_ERR_VALIDATION,
               "overrides[0].center", "found 1 value");
    edit_fails(NULL, "[{\"id\": \"a\", \"center\": [1, \"x\"]}]", TRN_ERR_VALIDATION,
               "overrides[0].center[1]", "expected a number");
    edit_fails(NULL, "[{\"id\": \"a\", \"deep_color\": [1, 1, 1]}]", TRN_ERR_VALIDATION,
               "overrides[0].deep_color", "[r, g, b, a]");
    edit_fails(NULL, "[{\"id\": \"a\", \"flow_direction\": 1}]", TRN_ERR_VALIDATION,
               "overrides[0].flow_direction", "expected [x, z], found a number");
    /* Fields of another kind. */
    edit_fails(NULL, "[{\"id\": \"a\", \"width\": 3}]", TRN_ERR_VALIDATION, "overrides[0].width",
               "applies to rivers only");
    edit_fails(NULL, "[{\"id\": \"o\", \"river_path\": [[0, 0, 0], [1, 0, 1]]}]",
               TRN_ERR_VALIDATION, "overrides[0].river_path", "applies to rivers only");
    edit_fails(NULL, "[{\"id\": \"a\", \"river_curve_steps\": 4}]", TRN_ERR_VALIDATION,
               "overrides[0].river_curve_steps", "applies to rivers only");
    edit_fails(NULL, "[{\"id\": \"r\", \"radius\": 3}]", TRN_ERR_VALIDATION, "overrides[0].radius",
               "applies to lakes only");
    edit_fails(NULL, "[{\"id\": \"r\", \"boundary\": null}]", TRN_ERR_VALIDATION,
               "overrides[0].boundary", "applies to lakes and oceans only");
    edit_fails(NULL, "[{\"id\": \"o\", \"center\": [0, 0]}]", TRN_ERR_VALIDATION,
               "overrides[0].center", "body 'o' is a ocean");
    /* Interpolation settings need a replacement path. */
    edit_fails(NULL, "[{\"id\": \"r\", \"river_path_interpolation\": \"linear\"}]",
               TRN_ERR_VALIDATION, "overrides[0].river_path_interpolation",
               "expected a replacement river_path");
    edit_fails(NULL, "[{\"id\": \"r\", \"river_curve_steps\": 4}]", TRN_ERR_VALIDATION,
               "overrides[0].river_curve_steps", "expected a replacement river_path");
    edit_fails(NULL,
               "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [4, 0, 4]], "
               "\"river_curve_steps\": 65}]",
               TRN_ERR_VALIDATION, "overrides[0].river_curve_steps",
               "expected an integer 1..64, found 65");
    edit_fails(NULL,
               "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [4, 0, 4]], "
               "\"river_curve_steps\": 0}]",
               TRN_ERR_VALIDATION, "overrides[0].river_curve_steps", "found 0");
    edit_fails(NULL,
               "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [4, 0, 4]], "
               "\"river_curve_steps\": 2.0}]",
               TRN_ERR_VALIDATION, "overrides[0].river_curve_steps", "found a number");
    edit_fails(NULL,
               "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [4, 0, 4]], "
               "\"river_path_interpolation\": \"cubic\"}]",
               TRN_ERR_VALIDATION, "overrides[0].river_path_interpolation", "found \"cubic\"");
    edit_fails(NULL, "[{\"id\": \"r\", \"river_surface_mode\": \"flat\"}]", TRN_ERR_VALIDATION,
               "overrides[0].river_surface_mode", "\"level\" or \"follow_bed\"");
    edit_fails(NULL, "[{\"id\": \"r\", \"river_path\": [[0, 0, 0]]}]", TRN_ERR_VALIDATION,
               "overrides[0].river_path", "2 to 4096 [x, y, z] points, found 1");
    edit_fails(NULL, "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [1, 1]]}]", TRN_ERR_VALIDATION,
               "overrides[0].river_path[1]", "expected [x, y, z]");
    edit_fails(NULL, "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [1, 1, true]]}]",
               TRN_ERR_VALIDATION, "overrides[0].river_path[1][2]", "found true");
    edit_fails(NULL, "[{\"id\": \"a\", \"boundary\": [[0, 0], [1, 0]]}]", TRN_ERR_VALIDATION,
               "overrides[0].boundary", "3 to 4096 [x, z] points, found 2");
    /* Ranges come from the body validation, pointed at the field. */
    edit_fails(NULL, "[{\"id\": \"a\", \"radius\": -1}]", TRN_ERR_VALIDATION, "overrides[0].radius",
               "expected a finite number > 0");
    edit_fails(NULL, "[{\"id\": \"o\", \"roughness\": 2}]", TRN_ERR_VALIDATION,
               "overrides[0].roughness", "roughness");
    edit_fails(NULL, "[{\"id\": \"r\", \"foam_color\": [1, 1, 1, 2]}]", TRN_ERR_VALIDATION,
               "overrides[0].foam_color", "foam_color");
    edit_fails(NULL, "[{\"id\": \"a\", \"boundary\": [[0, 0], [4, 4], [4, 0], [0, 4]]}]",
               TRN_ERR_VALIDATION, "overrides[0].boundary", "intersecting");
    /* The boundary is fine but leaves the unchanged centre outside: the override is at fault. */
    edit_fails(NULL, "[{\"id\": \"a\", \"boundary\": [[20, 20], [30, 20], [30, 30]]}]",
               TRN_ERR_VALIDATION, "overrides[0]", "center");
    edit_fails(NULL,
               "[{\"id\": \"a\", \"boundary\": [[20, 20], [30, 20], [30, 30]], \"center\": [1, "
               "1]}]",
               TRN_ERR_VALIDATION, "overrides[0].center", "inside the boundary");

    /* The error carries the value's line and column in the parameter's text. */
    trn_water_body *in = edit_bodies();
    trn_water_body *out;
    uint32_t n;
    trn_error e;
    CHECK_STATUS(trn_water_edit(in, 3, NULL, "[\n  {\"id\": \"a\",\n   \"level\": \"x\"}]", &out,
                                &n, NULL, 0, &e),
                 TRN_ERR_VALIDATION);
    CHECK_EQ_INT(e.line, 3);
    CHECK_EQ_INT(e.column, 13);
    CHECK_CONTAINS(e.message, "water edit: overrides[0].level: expected a number");
    /* An unknown key: the key's line and column. */
    CHECK_STATUS(trn_water_edit(in, 3, NULL, "[\n  {\"id\": \"a\",\n   \"lvl\": 1}]", &out, &n,
                                NULL, 0, &e),
                 TRN_ERR_VALIDATION);
    CHECK_EQ_INT(e.line, 3);
    CHECK_EQ_INT(e.column, 4);
    /* A where buffer too small is cut, never overrun. */
    char small[6];
    CHECK_STATUS(trn_water_edit(in, 3, "[\"q\"]", NULL, &out, &n, small, sizeof small, &e),
                 TRN_ERR_VALIDATION);
    CHECK(strcmp(small, "exclu") == 0);
    CHECK_STATUS(trn_water_edit(in, 3, NULL, NULL, NULL, &n, NULL, 0, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_water_bodies_free(in, 3);
}

/* The check without bodies reports what the edit reports for anything that holds for any
 * input: the same status, where, message and position; it passes what only the bodies decide. */
static void test_edit_check(void)
{
    static const char *const same[][2] = {
        {"[1]", NULL},
        {"{}", NULL},
        {NULL, "[3]"},
        {NULL, "[{\"radius\": 1}]"},
        {NULL, "[{\"id\": 7}]"},
        {NULL, "[{\"id\": \"a\",\n \"radius\": \"big\"}]"},
        {NULL, "[{\"id\": \"a\", \"radiuss\": 1}]"},
        {NULL, "[{\"id\": \"r\", \"river_curve_steps\": 4}]"},
        {NULL, "[{\"id\": \"r\", \"river_path\": [[0, 0, 0], [5, 0, 5]], "
               "\"river_curve_steps\": 99}]"},
        {NULL, "[{\"id\": \"r\", \"river_surface_mode\": \"up\"}]"},
        {NULL, "[{\"id\": \"o\", \"boundary\": [[0, 0]]}]"},
        {NULL, "[{\"id\": \"a\", \"shallow_color\": [1, 2]}]"},
    };
    for (size_t k = 0; k < sizeof same / sizeof same[0]; k++) {
        trn_water_body *in = edit_bodies();
        trn_water_body *out = NULL;
        uint32_t n = 0;
        char w1[128], w2[128];
        trn_error e1, e2;
        const trn_status s1 =
            trn_water_edit(in, 3, same[k][0], same[k][1], &out, &n, w1, sizeof w1, &e1);
        const trn_status s2 = trn_water_edit_check(same[k][0], same[k][1], w2, sizeof w2, &e2);
        CHECK(s1 != TRN_OK);
        CHECK_EQ_INT(s2, s1);
        CHECK(strcmp(w1, w2) == 0);
        CHECK(strcmp(e1.message, e2.message) == 0);
        CHECK_EQ_INT(e2.line, e1.line);
        CHECK_EQ_INT(e2.column, e1.column);
        if (strcmp(e1.message, e2.message) != 0)
            fprintf(stderr, "  case %zu: '%s' against '%s'\n", k, e2.message, e1.message);
        trn_water_bodies_free(out, n);
        trn_water_bodies_free(in, 3);
    }
    /* Only the bodies decide these: ids, repeats, kinds, the patched body; and valid edits. */
    static const char *const passes[][2] = {
        {"[\"zz\"]", NULL},
        {"[\"a\", \"a\"]", NULL},
        {NULL, "[{\"id\": \"zz\", \"radius\": 1}]"},
        {NULL, "[{\"id\": \"a\"}, {\"id\": \"a\"}]"},
        {NULL, "[{\"id\": \"a\", \"kind\": \"river\"}]"},
        {NULL, "[{\"id\": \"a\", \"width\": 3}]"},
        {NULL, "[{\"id\": \"o\", \"level\": \"spill\"}]"},
        {NULL, "[{\"id\": \"a\", \"radius\": -5}]"},
        {"[\"o\"]", "[{\"id\": \"a\", \"level\": 2, \"boundary\": null}]"},
        {NULL, NULL},
    };
    for (size_t k = 0; k < sizeof passes / sizeof passes[0]; k++) {
        char w[128];
        trn_error e;
        trn_error_clear(&e);
        CHECK_OK(trn_water_edit_check(passes[k][0], passes[k][1], w, sizeof w, &e));
        CHECK(w[0] == '\0');
    }
}

static void test_edit_patches(void)
{
    trn_water_body *in = edit_bodies();
    trn_water_body *out = NULL;
    uint32_t n = 0;
    char where[64] = "stale";
    /* No parameters: every body, in order, carving off. */
    CHECK_OK(trn_water_edit(in, 3, NULL, "  ", &out, &n, where, sizeof where, NULL));
    CHECK_EQ_INT(n, 3);
    CHECK(where[0] == '\0');
    CHECK(strcmp(out[0].id, "a") == 0 && strcmp(out[1].id, "o") == 0 &&
          strcmp(out[2].id, "r") == 0);
    CHECK(!out[0].carve && !out[1].carve && !out[2].carve);
    CHECK(out[2].control != in[2].control && out[2].path_count == 5);
    trn_water_bodies_free(out, n);

    /* One field changes; the omitted ones stay. */
    CHECK_OK(trn_water_edit(in, 3, "[\"o\"]", "[{\"id\": \"a\", \"level\": 3}]", &out, &n, where,
                            sizeof where, NULL));
    CHECK_EQ_INT(n, 2);
    CHECK(strcmp(out[0].id, "a") == 0 && strcmp(out[1].id, "r") == 0);
    CHECK(out[0].level == 3.0 && out[0].radius == 10.0 && out[0].center_x == 5.0);
    CHECK(memcmp(&out[0].look, &in[0].look, sizeof out[0].look) == 0);
    trn_water_bodies_free(out, n);

    /* "spill" makes a lake's level its basin's; a number fixes it again. */
    CHECK_OK(trn_water_edit(in, 3, NULL,
                            "[{\"id\": \"a\", \"level\": \"spill\", "
                            "\"spill_offset\": 1.25}]",
                            &out, &n, where, sizeof where, NULL));
    CHECK(out[0].level_mode == TRN_LAKE_LEVEL_SPILL && out[0].spill_offset == 1.25);
    trn_water_body *fixed;
    uint32_t nf;
    CHECK_OK(trn_water_edit(out, n, NULL, "[{\"id\": \"a\", \"level\": 2}]", &fixed, &nf, NULL, 0,
                            NULL));
    CHECK(fixed[0].level_mode == TRN_LAKE_LEVEL_FIXED && fixed[0].level == 2.0);
    trn_water_bodies_free(fixed, nf);
    trn_water_bodies_free(out, n);

    /* Every look field, the lake's shape and a boundary. */
    CHECK_OK(trn_water_edit(
        in, 3, "[]",
        "[{\"id\": \"a\", \"center\": [2, 3], \"radius\": 7.5, \"carve_depth\": 0.25, "
        "\"boundary\": [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], "
        "\"shallow_color\": [0.1, 0.2, 0.3, 0.4], \"deep_color\": [0.5, 0.6, 0.7, 0.8], "
        "\"absorption_distance\": 9, \"roughness\": 0.5, \"flow_speed\": 2, "
        "\"flow_direction\": [0, -1], \"wave_amplitude\": 0.125, \"wave_length\": 3, "
        "\"wave_speed\": 0.75, \"normal_strength\": 1.5, \"foam_width\": 0, "
        "\"foam_strength\": 1, \"foam_color\": [0, 0.5, 1, 0.25]}]",
        &out, &n, where, sizeof where, NULL));
    const trn_water_body *a = &out[0];
    CHECK(a->center_x == 2.0 && a->center_z == 3.0 && a->radius == 7.5 && a->carve_depth == 0.25);
    CHECK(a->boundary_count == 5 && a->boundary[4] == 10.0 && a->boundary[5] == 10.0);
    CHECK(a->look.shallow_color[0] == 0.1 && a->look.shallow_color[3] == 0.4);
    CHECK(a->look.deep_color[0] == 0.5 && a->look.deep_color[3] == 0.8);
    CHECK(a->look.absorption_distance == 9.0 && a->look.roughness == 0.5);
    CHECK(a->look.flow_speed == 2.0);
    CHECK(a->look.flow_direction[0] == 0.0 && a->look.flow_direction[1] == -1.0);
    CHECK(a->look.wave_amplitude == 0.125 && a->look.wave_length == 3.0);
    CHECK(a->look.wave_speed == 0.75 && a->look.normal_strength == 1.5);
    CHECK(a->look.foam_width == 0.0 && a->look.foam_strength == 1.0);
    CHECK(a->look.foam_color[1] == 0.5 && a->look.foam_color[3] == 0.25);
    CHECK(a->level == 1.0);
    /* null removes the boundary again. */
    trn_water_body *again;
    uint32_t m;
    CHECK_OK(trn_water_edit(out, n, NULL, "[{\"id\": \"a\", \"boundary\": null}]", &again, &m, NULL,
                            0, NULL));
    CHECK(again[0].boundary == NULL && again[0].boundary_count == 0);
    trn_water_bodies_free(again, m);
    trn_water_bodies_free(out, n);

    /* An appearance edit keeps the prepared path as it is (no resampling). */
    in[2].path[4] = 123.0; /* not what sampling the controls gives */
    CHECK_OK(trn_water_edit(in, 3, NULL,
                            "[{\"id\": \"r\", \"flow_speed\": 1, \"width\": 3, "
                            "\"river_depth\": 0.5, \"river_surface_mode\": \"follow_bed\", "
                            "\"level\": 4}]",
                            &out, &n, NULL, 0, NULL));
    CHECK(out[2].path_count == 5 && out[2].path[4] == 123.0);
    CHECK(out[2].width == 3.0 && out[2].river_depth == 0.5 && out[2].level == 4.0);
    CHECK(out[2].surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED && out[2].look.flow_speed == 1.0);
    trn_water_bodies_free(out, n);

    /* A new path is resampled with the body's own interpolation unless the edit sets one. */
    CHECK_OK(trn_water_edit(in, 3, NULL,
                            "[{\"id\": \"r\", \"river_path\": [[0, 1, 0], [4, 1, 0], [8, 0, 0], "
                            "[8, 0, 8]]}]",
                            &out, &n, NULL, 0, NULL));
    CHECK_EQ_INT(out[2].control_count, 4);
    CHECK(out[2].interpolation == TRN_RIVER_CATMULL_ROM && out[2].curve_steps == 2);
    CHECK_EQ_INT(out[2].path_count, 7);
    CHECK(out[2].path[6] == 4.0 && out[2].path[7] == 1.0 && out[2].path[8] == 0.0);
    CHECK(out[2].path[18] == 8.0 && out[2].path[19] == 0.0 && out[2].path[20] == 8.0);
    trn_water_bodies_free(out, n);
    CHECK_OK(trn_water_edit(in, 3, NULL,
                            "[{\"id\": \"r\", \"river_path\": [[0, 1, 0], [4, 1, 0], [8, 0, 0]], "
                            "\"river_path_interpolation\": \"linear\", \"river_curve_steps\": "
                            "64}]",
                            &out, &n, NULL, 0, NULL));
    CHECK(out[2].interpolation == TRN_RIVER_LINEAR && out[2].curve_steps == 64);
    CHECK_EQ_INT(out[2].path_count, 3);
    trn_water_bodies_free(out, n);
    CHECK_OK(trn_water_edit(in, 3, NULL,
                            "[{\"id\": \"r\", \"river_path\": [[0, 1, 0], [4, 1, 0]], "
                            "\"river_path_interpolation\": \"catmull_rom\", "
                            "\"river_curve_steps\": 1}]",
                            &out, &n, NULL, 0, NULL));
    CHECK(out[2].interpolation == TRN_RIVER_CATMULL_ROM && out[2].curve_steps == 1);
    CHECK_EQ_INT(out[2].path_count, 2);
    trn_water_bodies_free(out, n);

    /* Excluding everything leaves nothing. */
    CHECK_OK(trn_water_edit(in, 3, "[\"r\", \"a\", \"o\"]", "[]", &out, &n, NULL, 0, NULL));
    CHECK(out == NULL && n == 0);
    CHECK_OK(trn_water_edit(NULL, 0, NULL, NULL, &out, &n, NULL, 0, NULL));
    CHECK(out == NULL && n == 0);
    trn_water_bodies_free(in, 3);
}

/* ---- River Route ---- */

/* 8x8 cells over 8x8; height = i (a ramp falling to x = 0). */
static void ramp(trn_field *f)
{
    CHECK_OK(trn_field_init(f, 8, 8, 8.0, 8.0, NULL));
    for (uint32_t j = 0; j <= 8; j++)
        for (uint32_t i = 0; i <= 8; i++)
            f->heights[j * 9 + i] = (float)i;
}

static void route_params(trn_river_route_params *p, double x, double z)
{
    trn_river_route_params_default(p);
    p->source_x = x;
    p->source_z = z;
}

/* Check the path points' x and bed y (z fixed at 4). */
static void check_path(const trn_water_body *b, const double *xs, const double *beds, size_t n)
{
    CHECK_EQ_INT(b->control_count, n);
    CHECK_EQ_INT(b->path_count, n);
    if (b->control_count != n || b->path_count != n) return;
    for (size_t k = 0; k < n; k++) {
        CHECK(b->control[3 * k] == xs[k]);
        CHECK(b->control[3 * k + 1] == beds[k]);
        CHECK(b->control[3 * k + 2] == 4.0);
        CHECK(memcmp(&b->path[3 * k], &b->control[3 * k], 3 * sizeof(double)) == 0);
    }
}

static void test_route_defaults(void)
{
    trn_river_route_params p;
    trn_river_route_params_default(&p);
    CHECK(p.source_x == 64.0 && p.source_z == 64.0);
    CHECK(p.channel_width == 4.0 && p.channel_depth == 2.0 && p.water_depth == 1.0);
    CHECK(p.flow_speed == 0.0 && p.head_length == 0.0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_SEA_LEVEL), "sea-level") == 0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_FIELD_EDGE), "field-edge") == 0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_EXISTING_BODY), "existing-body") == 0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_CLOSED_BASIN), "closed-basin") == 0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_BLOCKED), "blocked") == 0);
    CHECK(strcmp(trn_route_end_name(TRN_ROUTE_NOT_PLACED), "not-placed") == 0);
}

static void test_route_sea_and_edge(void)
{
    trn_field f;
    trn_drainage d;
    ramp(&f);
    CHECK_OK(trn_drainage_compute(&f, 1.5, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    route_params(&p, 6.5, 4.5); /* ties snap to the smaller index: (6, 4) */
    p.flow_speed = 0.75;
    p.channel_width = 3.0;
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_SEA_LEVEL);
    CHECK_EQ_INT(r.samples, 6);
    CHECK(r.end_x == 1.0 && r.end_z == 4.0 && r.joined[0] == '\0');
    CHECK_CONTAINS(r.message, "sea level");
    /* Beds 2 below the ground, floored at the sea level minus the water depth. */
    const double xs[6] = {6, 5, 4, 3, 2, 1}, beds[6] = {4, 3, 2, 1, 0.5, 0.5};
    check_path(&b, xs, beds, 6);
    CHECK(strcmp(b.id, "creek") == 0 && b.kind == TRN_WATER_RIVER && b.carve);
    CHECK(b.surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED && b.interpolation == TRN_RIVER_LINEAR);
    CHECK(b.river_depth == 1.0 && b.width == 3.0 && b.look.flow_speed == 0.75);
    CHECK(b.look.wave_length == 2.0);
    CHECK_OK(trn_water_body_validate(&b, NULL, NULL));
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);

    /* A sample exactly at the sea level ends it. */
    CHECK_OK(trn_drainage_compute(&f, 1.0, &d, NULL, NULL, NULL));
    route_params(&p, 6.0, 4.0);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_SEA_LEVEL);
    const double beds1[6] = {4, 3, 2, 1, 0, 0};
    check_path(&b, xs, beds1, 6);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);

    /* No sea: on to the border, no floor. */
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    route_params(&p, 6.51, 4.0); /* past the tie: (7, 4) */
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK_EQ_INT(r.samples, 8);
    const double xs2[8] = {7, 6, 5, 4, 3, 2, 1, 0}, beds2[8] = {5, 4, 3, 2, 1, 0, -1, -2};
    check_path(&b, xs2, beds2, 8);
    trn_water_body_dispose(&b);

    /* A source on the border is a route of one sample: nothing placed. */
    route_params(&p, 0.0, 4.0);
    memset(&b, 0x5a, sizeof b);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_NOT_PLACED);
    CHECK_EQ_INT(r.samples, 1);
    CHECK_CONTAINS(r.message, "shorter than the 2 samples");
    CHECK(b.id[0] == '\0' && b.control == NULL && b.path == NULL && b.control_count == 0);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* Water with one lake "pond" wet over columns i <= 2 (surface 2.5) on the ramp's grid. */
static void pond(trn_water *w, uint32_t cells)
{
    memset(w, 0, sizeof *w);
    w->cells_x = w->cells_z = cells;
    w->size_x = w->size_z = (double)cells;
    w->body_count = 1;
    w->bodies = calloc(1, sizeof *w->bodies);
    trn_water_body_init(&w->bodies[0], TRN_WATER_LAKE, "pond");
    w->bodies[0].level = 2.5;
    const size_t n = ((size_t)cells + 1u) * ((size_t)cells + 1u);
    w->owner = malloc(n * sizeof *w->owner);
    w->wet = malloc(n);
    w->surface = malloc(n * sizeof *w->surface);
    w->segment = calloc(n, sizeof *w->segment);
    for (size_t k = 0; k < n; k++) {
        const size_t i = k % (cells + 1u);
        w->owner[k] = i <= 3 ? 0 : -1;
        w->wet[k] = i <= 2;
        w->surface[k] = i <= 3 ? 2.5f : NAN;
    }
}

static void test_route_joins(void)
{
    trn_field f;
    trn_drainage d;
    ramp(&f);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_water w;
    pond(&w, 8);
    trn_river_route_params p;
    route_params(&p, 6.0, 4.0);
    trn_water_body b;
    trn_route_report r;
    /* The dry shoreline corner at i = 3 is passed; the first wet sample ends it. */
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_EXISTING_BODY);
    CHECK(strcmp(r.joined, "pond") == 0);
    CHECK_EQ_INT(r.samples, 5);
    CHECK(r.end_x == 2.0);
    CHECK_CONTAINS(r.message, "'pond'");
    /* The floor: the joined surface minus the water depth. The path goes on down the pond's
     * bed (the mouth) to x = 1, the first sample water_depth under its surface; the report
     * still names the joining sample. */
    const double xs[7] = {6, 5, 4, 3, 2, 1, 0}, beds[6] = {4, 3, 2, 1.5, 1.5, 1.5};
    check_path(&b, xs, beds, 6);
    trn_water_body_dispose(&b);
    p.water_depth = 2.0; /* = channel depth: allowed, the floor drops to 0.5 (at x = 0) */
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    CHECK_EQ_INT(r.samples, 5);
    CHECK(r.end_x == 2.0);
    const double beds2[7] = {4, 3, 2, 1, 0.5, 0.5, 0.5};
    check_path(&b, xs, beds2, 7);
    trn_water_body_dispose(&b);

    /* Without a surface at the path's last sample the floor comes from the body's level. */
    w.surface[4 * 9 + 0] = NAN;
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    check_path(&b, xs, beds2, 7);
    trn_water_body_dispose(&b);
    w.surface[4 * 9 + 0] = 2.5f;
    /* A channel under two cells wide ends at the joining sample (its cap is within a cell). */
    p.channel_width = 1.5;
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    check_path(&b, xs, beds2, 5);
    trn_water_body_dispose(&b);
    p.channel_width = 4.0;

    /* A wet source adds nothing. */
    route_params(&p, 2.0, 4.0);
    memset(&b, 0x5a, sizeof b);
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_NOT_PLACED);
    CHECK_CONTAINS(r.message, "already under water 'pond'");
    CHECK(b.id[0] == '\0' && b.control == NULL && b.path == NULL && b.path_count == 0);
    /* The dry corner is not wet: a source there routes (to the pond, 2 samples). */
    route_params(&p, 3.0, 4.0);
    CHECK_OK(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_EXISTING_BODY);
    CHECK_EQ_INT(r.samples, 2);
    trn_water_body_dispose(&b);
    trn_water_dispose(&w);

    /* Water on another grid. */
    pond(&w, 4);
    trn_error e;
    CHECK_STATUS(trn_river_route(&d, f.heights, &w, "creek", &p, &b, &r, &e), TRN_ERR_MISMATCH);
    trn_water_dispose(&w);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_route_basin_and_blocked(void)
{
    /* A pit at (4, 4): height 10 + |i - 4| + 3 |j - 4|, one way down from (6, 4); the fill
     * raises it to 14 (the lowest border samples). */
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 8, 8, 8.0, 8.0, NULL));
    for (int j = 0; j <= 8; j++)
        for (int i = 0; i <= 8; i++)
            f.heights[j * 9 + i] = (float)(10 + abs(i - 4) + 3 * abs(j - 4));
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    route_params(&p, 6.0, 4.0);
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_CLOSED_BASIN);
    CHECK_EQ_INT(r.samples, 3);
    CHECK(r.end_x == 4.0 && r.end_z == 4.0);
    CHECK_CONTAINS(r.message, "closed basin");
    const double xs[3] = {6, 5, 4}, beds[3] = {10, 9, 8};
    check_path(&b, xs, beds, 3);
    trn_water_body_dispose(&b);
    /* The pit itself as the source: nowhere to go. */
    route_params(&p, 4.0, 4.0);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_NOT_PLACED);
    CHECK_CONTAINS(r.message, "closed-basin");
    trn_drainage_dispose(&d);

    /* (4, 4) drains only south-west, across its cells' split, down a diagonal trench; (5, 4)
     * beside it is as high, so the route comes from there along the flat; every triangle edge
     * from (4, 4) climbs or goes back, so the route follows the drainage down the trench. */
    for (size_t k = 0; k < 81; k++)
        f.heights[k] = 6.0f;
    f.heights[4 * 9 + 4] = 5.0f;
    f.heights[4 * 9 + 5] = 5.0f;
    for (int s = 1; s <= 4; s++)
        f.heights[(4 + s) * 9 + (4 - s)] = 0.0f;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK_EQ_INT(d.flow_dir[4 * 9 + 4], 3);
    CHECK_EQ_INT(d.flow_dir[4 * 9 + 5], 4);
    CHECK(d.filled[4 * 9 + 4] == 5.0f);
    route_params(&p, 5.0, 4.0);
    p.channel_width = 0.5; /* under a cell wide: the path is the trace itself, unsmoothed */
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK_EQ_INT(r.samples, 6);
    CHECK(r.end_x == 0.0 && r.end_z == 8.0);
    CHECK_EQ_INT(b.path_count, 6);
    if (b.path_count == 6) {
        CHECK(b.path[3] == 4.0 && b.path[5] == 4.0 && b.path[6] == 3.0 && b.path[8] == 5.0);
        CHECK(b.path[4] == 3.0 && b.path[7] == -2.0); /* beds 2 below the ground */
    }
    trn_water_body_dispose(&b);
    /* Blocked: from (4, 4) the flat edge to (5, 4) comes first; its own direction points back
     * along a triangle edge and every other edge climbs. */
    route_params(&p, 4.0, 4.0);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_BLOCKED);
    CHECK_EQ_INT(r.samples, 2);
    CHECK(r.end_x == 5.0 && r.end_z == 4.0);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* The channel head: on a gentle slope (h = 0.1 i, 32 cells of 1 m) a route from x = 30 with
 * head_length 10 deepens by 0.2 m a metre, so the river starts at x = 25 (1 m deep) and is
 * 2 m deep from x = 20 on. Carved, the ground along the route is untouched at the source and
 * beyond the head's banks (half width 1 and banks 2 cells wide: from x = 28 up) and sinks
 * monotonically to the full depth: no pit at the head. */
static void test_route_head(void)
{
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 32, 32, 32.0, 32.0, NULL));
    for (uint32_t j = 0; j <= 32; j++)
        for (uint32_t i = 0; i <= 32; i++)
            f.heights[j * 33 + i] = 0.1f * (float)i;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    route_params(&p, 30.0, 16.0);
    p.channel_width = 2.0;
    p.head_length = 10.0;
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK_EQ_INT(r.samples, 31); /* the source counts: the whole trace */
    CHECK_EQ_INT(b.path_count, 26);
    if (b.path_count == 26) {
        for (uint32_t k = 0; k < 26; k++) {
            const double x = 25.0 - k, ground = (double)(0.1f * (float)(25 - k));
            const double depth = k >= 5 ? 2.0 : 1.0 + 0.2 * k;
            CHECK(b.path[3 * k] == x && b.path[3 * k + 2] == 16.0);
            /* the ground averaged along the line: float rounding only */
            CHECK(fabs(b.path[3 * k + 1] - (ground - depth)) < 1e-6);
        }
    }
    trn_field carved;
    CHECK_OK(trn_field_init(&carved, 32, 32, 32.0, 32.0, NULL));
    memcpy(carved.heights, f.heights, 33u * 33u * sizeof *f.heights);
    trn_water w;
    CHECK_OK(trn_water_resolve(&carved, &b, 1, NULL, &w, NULL));
    double last = -1.0;
    for (int i = 30; i >= 20; i--) {
        const double cut = (double)f.heights[16 * 33 + i] - (double)carved.heights[16 * 33 + i];
        if (i >= 28) CHECK(cut == 0.0); /* the source and beyond the head's banks */
        CHECK(cut >= last - 1e-6);
        last = cut;
    }
    CHECK(fabs(last - 2.0) < 1e-5);
    CHECK(w.wet[16 * 33 + 25] && !w.wet[16 * 33 + 27]);
    trn_water_dispose(&w);
    trn_field_dispose(&carved);
    trn_water_body_dispose(&b);

    /* A head longer than the route: no river, and the message says why. */
    p.head_length = 1000.0;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_NOT_PLACED);
    CHECK_CONTAINS(r.message, "before its channel head");
    p.head_length = -1.0;
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL),
                 TRN_ERR_VALIDATION);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* A straight valley between the grid's directions: V-shaped across (0.15 a metre up either
 * side), falling 0.1 a metre along the line from (4, 4) towards (2, 1). The trace steps east
 * and south-east by turns, on either side of the floor; the river's line, its bed and its cut
 * must not follow those steps. */
static float valley_height(int i, int j)
{
    const double a = (double)(i - 4), c = (double)(j - 4), r5 = sqrt(5.0);
    return (float)(20.0 - 0.1 * (2.0 * a + c) / r5 + 0.15 * fabs(2.0 * c - a) / r5);
}

static void test_route_smooth(void)
{
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 96, 64, 96.0, 64.0, NULL));
    for (int j = 0; j <= 64; j++)
        for (int i = 0; i <= 96; i++)
            f.heights[j * 97 + i] = valley_height(i, j);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    route_params(&p, 8.0, 6.0);
    p.channel_width = 6.0;
    p.channel_depth = 2.5;
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK(b.path_count > 60);
    /* The line: straight, every point at the same offset from the valley's floor within 0.05
     * (the trace's samples alternate between on it and 0.45 off it); the bed: falling at the
     * valley's rate along the line, never rising. */
    double off_lo = INFINITY, off_hi = -INFINITY, rate_lo = INFINITY, rate_hi = -INFINITY;
    double rise = -INFINITY;
    for (uint32_t k = 8; k + 8 < b.path_count; k++) {
        const double *q = b.path + 3 * (size_t)k;
        const double off = (2.0 * (q[2] - 4.0) - (q[0] - 4.0)) / sqrt(5.0);
        off_lo = fmin(off_lo, off);
        off_hi = fmax(off_hi, off);
        const double run = hypot(q[3] - q[0], q[5] - q[2]);
        if (run > 0.0) {
            rate_lo = fmin(rate_lo, (q[1] - q[4]) / run);
            rate_hi = fmax(rate_hi, (q[1] - q[4]) / run);
        }
    }
    for (uint32_t k = 0; k + 1 < b.path_count; k++)
        rise = fmax(rise, b.path[3 * (size_t)k + 4] - b.path[3 * (size_t)k + 1]);
    CHECK(off_hi - off_lo < 0.05);
    CHECK(rate_lo > 0.09 && rate_hi < 0.11);
    CHECK(rise <= 0.0);

    /* The cut: across each column of the middle reach the same area (the channel's
     * cross-section, sampled: its width and depth hold), and nowhere a wall: between
     * neighbouring samples the cut changes by 0.65 at most (a cut that stopped at the water's
     * edge: by 2.2). */
    trn_field carved;
    CHECK_OK(trn_field_init(&carved, 96, 64, 96.0, 64.0, NULL));
    memcpy(carved.heights, f.heights, 97u * 65u * sizeof *f.heights);
    trn_water w;
    CHECK_OK(trn_water_resolve(&carved, &b, 1, NULL, &w, NULL));
    double area_lo = INFINITY, area_hi = -INFINITY, wall = 0.0;
    for (int i = 24; i <= 72; i++) {
        double area = 0.0;
        for (int j = 1; j < 64; j++) {
            const size_t k = (size_t)j * 97u + (size_t)i;
            const double cut = (double)f.heights[k] - (double)carved.heights[k];
            const double below = (double)f.heights[k + 97] - (double)carved.heights[k + 97];
            const double east = (double)f.heights[k + 1] - (double)carved.heights[k + 1];
            area += cut;
            wall = fmax(wall, fmax(fabs(cut - below), fabs(cut - east)));
        }
        area_lo = fmin(area_lo, area);
        area_hi = fmax(area_hi, area);
    }
    CHECK(area_hi - area_lo < 0.003 * area_hi); /* the trace's staircase: 0.44% */
    CHECK(wall < 1.2);
    trn_water_dispose(&w);
    trn_field_dispose(&carved);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* The mouth: ground falling west at 0.1 into a lake (level 10) whose margin is a shelf 0.2 m
 * deep for 10 m before its bed drops away; a V across keeps the route in its row. */
static float mouth_height(int i, int j)
{
    const double v = 0.05 * fabs((double)j - 16.0);
    if (i >= 24) return (float)(10.0 + 0.1 * (i - 24) + v);
    if (i >= 14) return (float)(10.0 - 0.02 * (24 - i) + v);
    return (float)(9.8 - 0.5 * (14 - i) + v);
}

static void test_route_mouth(void)
{
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 64, 32, 64.0, 32.0, NULL));
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 64; i++)
            f.heights[j * 65 + i] = mouth_height(i, j);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_water lake;
    memset(&lake, 0, sizeof lake);
    lake.cells_x = 64;
    lake.cells_z = 32;
    lake.size_x = 64.0;
    lake.size_z = 32.0;
    lake.body_count = 1;
    lake.bodies = calloc(1, sizeof *lake.bodies);
    CHECK(lake.bodies != NULL);
    trn_water_body_init(&lake.bodies[0], TRN_WATER_LAKE, "lake");
    lake.bodies[0].level = 10.0;
    const size_t n = 65u * 33u;
    lake.owner = malloc(n * sizeof *lake.owner);
    lake.wet = malloc(n);
    lake.surface = malloc(n * sizeof *lake.surface);
    lake.segment = calloc(n, sizeof *lake.segment);
    for (size_t k = 0; k < n; k++) {
        const bool wet = f.heights[k] < 10.0f;
        lake.owner[k] = wet ? 0 : -1;
        lake.wet[k] = wet;
        lake.surface[k] = wet ? 10.0f : NAN;
    }
    trn_river_route_params p;
    route_params(&p, 48.0, 16.0);
    p.channel_width = 6.0;
    p.channel_depth = 2.5;
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, &lake, "brook", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_EXISTING_BODY);
    CHECK(r.end_x == 23.0); /* the report names where it joins */
    /* Its path runs on to x = 12, the first sample a water depth under the surface. */
    CHECK(b.path_count > 0 && b.path[3 * (size_t)(b.path_count - 1u)] == 12.0);
    /* Carved, the channel holds no closed hollow: ending at the shore it left a round pit
     * cut to 9 m in the 9.8-10 m shelf (a hollow 0.92 m deep) with a wall on its lakeward side. */
    trn_field carved;
    CHECK_OK(trn_field_init(&carved, 64, 32, 64.0, 32.0, NULL));
    memcpy(carved.heights, f.heights, n * sizeof *f.heights);
    trn_water w;
    CHECK_OK(trn_water_resolve(&carved, &b, 1, NULL, &w, NULL));
    trn_drainage cd;
    CHECK_OK(trn_drainage_compute(&carved, NAN, &cd, NULL, NULL, NULL));
    double hollow = 0.0, cut = 0.0;
    for (size_t k = 0; k < n; k++) {
        hollow = fmax(hollow, (double)cd.filled[k] - (double)carved.heights[k]);
        cut = fmax(cut, (double)f.heights[k] - (double)carved.heights[k]);
    }
    CHECK(cut > 2.0); /* the channel is there */
    CHECK(hollow < 0.05);
    trn_drainage_dispose(&cd);
    trn_water_dispose(&w);
    trn_field_dispose(&carved);
    trn_water_body_dispose(&b);
    trn_water_dispose(&lake);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* The channel head cut by trn_river_route_carve: a valley falling west at 0.2 m a metre with
 * sides rising 0.3 m a metre, a brook from (50, 16) with head_length 20 (0.125 m deeper a
 * metre), whose depth reaches water_depth (1 m) at x = 42. The river's carve alone ended in a
 * round cap there (radius: half width 3 + bank 3), cut level with its water into the rising
 * ground behind: nothing cut from x = 48 up, 1 m at x = 42 and 5 m to the side at x = 45 (a
 * ring). With the head, the cut along the valley floor deepens by the head's 0.125 m a metre
 * from nothing at the source and narrows upstream with the depth, and the ground still falls
 * at every sample down the floor (no pit where the water begins). */
static float taper_height(int i, int j)
{
    return (float)(0.2 * i + 0.3 * abs(j - 16));
}

static void head_cut(bool head, float *cut)
{
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 64, 32, 64.0, 32.0, NULL));
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 64; i++)
            f.heights[j * 65 + i] = taper_height(i, j);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    route_params(&p, 50.0, 16.0);
    p.channel_width = 6.0;
    p.channel_depth = 2.5;
    p.head_length = 20.0;
    trn_water_body b;
    trn_route_report r;
    trn_field carved;
    CHECK_OK(trn_field_init(&carved, 64, 32, 64.0, 32.0, NULL));
    const size_t n = 65u * 33u;
    CHECK_OK(trn_river_route_carve(&d, f.heights, NULL, "brook", &p, &b, &r,
                                   head ? carved.heights : NULL, NULL));
    if (!head) memcpy(carved.heights, f.heights, n * sizeof *f.heights);
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    /* The water begins where the depth reaches water_depth (x = 42), or with the head cut in,
     * the river's half width and bank (6 m) further down. */
    CHECK(b.path_count > 0 && b.path[0] == (head ? 36.0 : 42.0) && b.path[2] == 16.0);
    trn_water w;
    CHECK_OK(trn_water_resolve(&carved, &b, 1, NULL, &w, NULL));
    for (size_t k = 0; k < n; k++)
        cut[k] = f.heights[k] - carved.heights[k];
    trn_water_dispose(&w);
    trn_field_dispose(&carved);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* The farthest sample from the valley's floor (row 16) in column i that is cut > 1 cm. */
static int cut_reach(const float *cut, int i)
{
    int far = -1;
    for (int j = 0; j <= 32; j++)
        if (cut[j * 65 + i] > 0.01f && abs(j - 16) > far) far = abs(j - 16);
    return far;
}

static void test_route_head_taper(void)
{
    float *cut = malloc(65u * 33u * sizeof *cut);
    CHECK(cut != NULL);
    if (!cut) return;
    /* The river's carve alone: its round cap is what the head replaces. */
    head_cut(false, cut);
    CHECK(cut[16 * 65 + 48] < 0.01f && cut_reach(cut, 45) >= 5);
    head_cut(true, cut);
    /* Along the floor: nothing at the source (and above it), then deeper at every sample down
     * to the river's start, by about the head's 0.125 m a metre. */
    for (int i = 50; i <= 64; i++)
        CHECK(cut[16 * 65 + i] < 0.01f);
    for (int i = 49; i >= 42; i--) {
        const float step = cut[16 * 65 + i] - cut[16 * 65 + i + 1];
        CHECK(step > 0.1f && step < 0.15f);
    }
    CHECK(cut[16 * 65 + 42] > 0.95f); /* water_depth where the depth reaches it */
    /* Upstream of the start the cut narrows with the depth: within the river's half width plus
     * its bank (6 m) times the depth over the water depth, and a cell. */
    for (int i = 43; i <= 50; i++) {
        const double f = 0.125 * (50 - i);
        CHECK(cut_reach(cut, i) <= (int)floor(6.0 * f + 1.0));
    }
    CHECK(cut_reach(cut, 47) >= 2); /* the head is cut across, not only along its line */
    for (int i = 49; i >= 20; i--)
        CHECK(taper_height(i, 16) - cut[16 * 65 + i] <
              taper_height(i + 1, 16) - cut[16 * 65 + i + 1]);
    free(cut);
}

static void test_route_steps(void)
{
    /* h = i - j: the drainage flows south-west (not a triangle edge); west and south tie as
     * the steepest edges and the fixed order (E, SE, S, W, NW, N) takes south. */
    trn_field f;
    trn_drainage d;
    CHECK_OK(trn_field_init(&f, 8, 8, 8.0, 8.0, NULL));
    for (int j = 0; j <= 8; j++)
        for (int i = 0; i <= 8; i++)
            f.heights[j * 9 + i] = (float)(i - j);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK_EQ_INT(d.flow_dir[4 * 9 + 5], 3);
    trn_river_route_params p;
    route_params(&p, 5.0, 4.0);
    trn_water_body b;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK_EQ_INT(r.samples, 5);
    CHECK(r.end_x == 5.0 && r.end_z == 8.0);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);

    /* Mirrored, h = j - i flows north-east (also across the split); east and north tie and
     * east comes first. */
    for (int j = 0; j <= 8; j++)
        for (int i = 0; i <= 8; i++)
            f.heights[j * 9 + i] = (float)(j - i);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK_EQ_INT(d.flow_dir[4 * 9 + 3], 7);
    route_params(&p, 3.0, 4.0);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    CHECK_EQ_INT(r.samples, 6);
    CHECK(r.end_x == 8.0 && r.end_z == 4.0);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);

    /* Steepest measured over the true step: from (4, 4) (draining south-west), west drops 2
     * over 1, north-west 3 over sqrt(2) (2.12), north 2.5 over 1: north. */
    for (size_t k = 0; k < 81; k++)
        f.heights[k] = 12.0f;
    f.heights[4 * 9 + 4] = 10.0f;
    f.heights[4 * 9 + 3] = 8.0f;
    f.heights[3 * 9 + 3] = 7.0f;
    f.heights[3 * 9 + 4] = 7.5f;
    for (int s = 1; s <= 4; s++)
        f.heights[(4 + s) * 9 + (4 - s)] = 0.0f;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    CHECK_EQ_INT(d.flow_dir[4 * 9 + 4], 3);
    route_params(&p, 4.0, 4.0);
    p.channel_width = 0.5; /* the trace's own samples */
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.samples >= 2 && b.control[3] == 4.0 && b.control[5] == 3.0);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);

    /* On a flat the drainage's direction (towards its nearest outlet) is followed when it is
     * a triangle edge; the fixed order alone would walk east to the far border. */
    for (size_t k = 0; k < 81; k++)
        f.heights[k] = 3.0f;
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    const unsigned code = d.flow_dir[4 * 9 + 2];
    route_params(&p, 2.0, 4.0);
    p.channel_width = 0.5; /* the trace's own samples */
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, NULL));
    CHECK(r.end == TRN_ROUTE_FIELD_EDGE);
    if (code != 3 && code != 7) {
        static const int di[8] = {1, 1, 0, -1, -1, -1, 0, 1};
        static const int dj[8] = {0, 1, 1, 1, 0, -1, -1, -1};
        CHECK(b.control[3] == 2.0 + di[code] && b.control[5] == 4.0 + dj[code]);
    }
    CHECK(r.samples <= 4);
    trn_water_body_dispose(&b);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

static void test_route_params(void)
{
    trn_field f;
    trn_drainage d;
    ramp(&f);
    CHECK_OK(trn_drainage_compute(&f, NAN, &d, NULL, NULL, NULL));
    trn_river_route_params p;
    trn_water_body b;
    trn_route_report r;
    trn_error e;
    /* The far corner is inside; a hair beyond is not. */
    route_params(&p, 8.0, 8.0);
    CHECK_OK(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e));
    CHECK(r.end == TRN_ROUTE_NOT_PLACED);
    route_params(&p, nextafter(8.0, 9.0), 4.0);
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "source");
    route_params(&p, 4.0, -1e-9);
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    route_params(&p, NAN, 4.0);
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    route_params(&p, 6.0, 4.0);
    p.water_depth = nextafter(2.0, 3.0);
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "water_depth");
    route_params(&p, 6.0, 4.0);
    p.water_depth = 0.0;
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    route_params(&p, 6.0, 4.0);
    p.channel_width = 0.0;
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "channel_width");
    route_params(&p, 6.0, 4.0);
    p.channel_depth = -1.0;
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "channel_depth");
    route_params(&p, 6.0, 4.0);
    p.flow_speed = -0.5;
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", &p, &b, &r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "flow_speed");
    /* Defaults when params is NULL: the source (64, 64) lies outside this 8x8 field. */
    CHECK_STATUS(trn_river_route(&d, f.heights, NULL, "creek", NULL, &b, &r, &e),
                 TRN_ERR_VALIDATION);
    CHECK_STATUS(trn_river_route(&d, NULL, NULL, "creek", NULL, &b, &r, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_drainage_dispose(&d);
    trn_field_dispose(&f);
}

/* ---- codec ---- */

/* Two bodies on 4x3 cells over 8x6: a bounded lake and a Catmull-Rom river, every field set,
 * and per-sample arrays that agree with them. */
static void sample_water(trn_water *w)
{
    memset(w, 0, sizeof *w);
    w->cells_x = 4;
    w->cells_z = 3;
    w->size_x = 8.0;
    w->size_z = 6.0;
    w->ground_hash = 0x0123456789abcdefull;
    w->body_count = 2;
    w->bodies = calloc(2, sizeof *w->bodies);
    trn_water_body *lake = &w->bodies[0], *river = &w->bodies[1];
    trn_water_body_init(lake, TRN_WATER_LAKE, "lakes/basin/1_1");
    lake->level = 1.25;
    lake->center_x = 2.0;
    lake->center_z = 2.0;
    lake->radius = 3.5;
    lake->boundary = malloc(8 * sizeof(double));
    const double square[8] = {0, 0, 4, 0, 4, 4, 0, 4};
    memcpy(lake->boundary, square, sizeof square);
    lake->boundary_count = 4;
    lake->carve_depth = 0.5;
    lake->carve = false;
    lake->look.roughness = 0.3;
    lake->look.foam_color[2] = 0.5;
    lake->wet_samples = 4;
    lake->area = 16.0;
    lake->volume = 3.5;
    lake->min_surface = 1.25;
    lake->max_surface = 1.25;
    lake->warning_count = 2;
    snprintf(lake->warning, sizeof lake->warning,
             "wet ground reaches the boundary below the "
             "level at (4, 2)");
    lake->warning_x = 4.0;
    lake->warning_z = 2.0;
    trn_water_body_init(river, TRN_WATER_RIVER, "creek");
    river->control = malloc(9 * sizeof(double));
    const double c[9] = {8, 1, 0, 6, 0.5, 3, 5, 0, 6};
    memcpy(river->control, c, sizeof c);
    river->control_count = 3;
    river->interpolation = TRN_RIVER_CATMULL_ROM;
    river->curve_steps = 2;
    CHECK_OK(trn_water_body_sample_path(river, NULL));
    river->surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    river->river_depth = 0.75;
    river->width = 2.5;
    river->look.flow_speed = 1.5;
    river->min_surface = NAN;
    const size_t n = 20;
    w->owner = malloc(n * sizeof *w->owner);
    w->wet = malloc(n);
    w->surface = malloc(n * sizeof *w->surface);
    w->segment = malloc(n * sizeof *w->segment);
    for (size_t k = 0; k < n; k++) {
        const size_t i = k % 5;
        w->owner[k] = i <= 1 ? 0 : i == 4 ? 1 : -1;
        w->wet[k] = i == 0 || (i == 4 && k > 5);
        w->surface[k] = w->owner[k] < 0 ? NAN : i <= 1 ? 1.25f : 0.5f;
        w->segment[k] = i == 4 ? (uint32_t)(k / 5) : 0u;
    }
}

static void encode(const trn_water *w, uint8_t **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    CHECK_OK(trn_water_encode(w, data, size, NULL));
}

/* Recompute the trailing checksum after an edit. */
static void reseal(uint8_t *data, size_t size)
{
    uint64_t h = (uint64_t)XXH64(data, size - 8, 0);
    for (int b = 0; b < 8; b++)
        data[size - 8 + (size_t)b] = (uint8_t)(h >> (8 * b));
}

static size_t find_tag(const uint8_t *data, size_t size, const char *tag, size_t from)
{
    for (size_t k = from; k + 4 <= size; k++)
        if (memcmp(data + k, tag, 4) == 0) return k;
    return SIZE_MAX;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int b = 0; b < 4; b++)
        p[b] = (uint8_t)(v >> (8 * b));
}

static void test_codec_round_trip(void)
{
    trn_water_limits lim;
    memset(&lim, 0, sizeof lim);
    trn_water_limits_default(&lim);
    CHECK(lim.max_samples == (uint64_t)1 << 30 && lim.max_bodies == 65536u &&
          lim.max_points == 1u << 20);

    trn_water w, back;
    sample_water(&w);
    uint8_t *data, *again;
    size_t size, again_size;
    encode(&w, &data, &size);
    CHECK(size > 20 && memcmp(data, "TRNWATER", 8) == 0);
    CHECK(data[8] == TRN_WATER_FORMAT_VERSION && data[9] == 0);
    CHECK_OK(trn_water_decode(data, size, "w.bin", NULL, &back, NULL));
    encode(&back, &again, &again_size);
    CHECK(again_size == size && memcmp(again, data, size) == 0);
    free(again);
    CHECK(back.cells_x == 4 && back.cells_z == 3 && back.size_x == 8.0 && back.size_z == 6.0);
    CHECK(back.ground_hash == w.ground_hash && back.body_count == 2);
    for (uint32_t k = 0; k < 2; k++) {
        const trn_water_body *a = &w.bodies[k], *b = &back.bodies[k];
        CHECK(strcmp(a->id, b->id) == 0 && a->kind == b->kind && a->level == b->level);
        CHECK(a->center_x == b->center_x && a->center_z == b->center_z && a->radius == b->radius);
        CHECK(a->boundary_count == b->boundary_count && a->carve_depth == b->carve_depth);
        CHECK(a->boundary_count == 0 ||
              memcmp(a->boundary, b->boundary, a->boundary_count * 16u) == 0);
        CHECK(a->control_count == b->control_count && a->path_count == b->path_count);
        CHECK(a->control_count == 0 || memcmp(a->control, b->control, a->control_count * 24u) == 0);
        CHECK(a->path_count == 0 || memcmp(a->path, b->path, a->path_count * 24u) == 0);
        CHECK(a->interpolation == b->interpolation && a->curve_steps == b->curve_steps);
        CHECK(a->width == b->width && a->surface_mode == b->surface_mode);
        CHECK(a->river_depth == b->river_depth && a->carve == b->carve);
        CHECK(memcmp(&a->look, &b->look, sizeof a->look) == 0);
        CHECK(a->wet_samples == b->wet_samples && a->area == b->area && a->volume == b->volume);
        CHECK(memcmp(&a->min_surface, &b->min_surface, 8) == 0 && a->max_surface == b->max_surface);
        CHECK(a->warning_count == b->warning_count && strcmp(a->warning, b->warning) == 0);
        CHECK(a->warning_x == b->warning_x && a->warning_z == b->warning_z);
    }
    CHECK(back.bodies[1].path_count == 5 && back.bodies[1].carve && !back.bodies[0].carve);
    CHECK(memcmp(back.owner, w.owner, 20 * 4) == 0 && memcmp(back.wet, w.wet, 20) == 0);
    CHECK(memcmp(back.surface, w.surface, 20 * 4) == 0);
    CHECK(memcmp(back.segment, w.segment, 20 * 4) == 0);
    trn_water_dispose(&back);
    free(data);
    /* A negative (or NaN) radius or width is damage, however well framed. */
    const double saved_radius = w.bodies[0].radius, saved_width = w.bodies[1].width;
    for (int bad = 0; bad < 3; bad++) {
        w.bodies[0].radius = bad == 0 ? -1.0 : bad == 1 ? NAN : saved_radius;
        w.bodies[1].width = bad == 2 ? -0.5 : saved_width;
        encode(&w, &data, &size);
        trn_error be;
        CHECK_STATUS(trn_water_decode(data, size, "w.bin", NULL, &back, &be), TRN_ERR_FORMAT);
        CHECK_CONTAINS(be.message, bad == 2 ? "width: expected a number >= 0" : "radius: expected a number >= 0");
        free(data);
    }
    w.bodies[0].radius = saved_radius;
    w.bodies[1].width = saved_width;

    /* No bodies: no per-sample section, no arrays. */
    trn_water empty;
    memset(&empty, 0, sizeof empty);
    empty.cells_x = 1;
    empty.cells_z = 1;
    empty.size_x = empty.size_z = 1.0;
    encode(&empty, &data, &size);
    CHECK_EQ_INT(size, 12 + 12 + 36 + 8);
    CHECK_OK(trn_water_decode(data, size, NULL, NULL, &back, NULL));
    CHECK(back.body_count == 0 && !back.bodies && !back.owner && !back.wet && back.cells_x == 1);
    free(data);
    trn_error e;
    empty.cells_x = 0;
    CHECK_STATUS(trn_water_encode(&empty, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_encode(NULL, &data, &size, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_water_dispose(&w);
}

static void test_codec_truncation(void)
{
    trn_water w, back;
    sample_water(&w);
    uint8_t *data;
    size_t size;
    encode(&w, &data, &size);
    const size_t grid = find_tag(data, size, "GRID", 0);
    const size_t body0 = find_tag(data, size, "BODY", 0);
    const size_t body1 = find_tag(data, size, "BODY", body0 + 4);
    const size_t smpl = find_tag(data, size, "SMPL", 0);
    CHECK(grid == 12 && body0 == 60 && body1 > body0 && smpl > body1);
    CHECK(smpl + 12 + 20 * 13 + 8 == size);
    trn_error e;
    int wrong_code = 0, wrong_section = 0, wrong_offset = 0;
    for (size_t cut = 0; cut < size; cut++) {
        memset(&back, 0x5a, sizeof back);
        trn_status st = trn_water_decode(data, cut, "w.bin", NULL, &back, &e);
        wrong_code += st != TRN_ERR_TRUNCATED;
        wrong_offset += e.offset < 0 || (size_t)e.offset > cut;
        const char *section = cut < grid       ? "header"
                              : cut < body0    ? "grid"
                              : cut < body1    ? "body 0"
                              : cut < smpl     ? "body 1:"
                              : cut < size - 8 ? "samples"
                                               : "checksum";
        /* A cut inside a section's tag or length is told as the section's. */
        if (!strstr(e.message, section)) {
            wrong_section++;
            fprintf(stderr, "  cut %zu: %s\n", cut, e.message);
        }
        CHECK(back.bodies == NULL && back.body_count == 0);
    }
    CHECK_EQ_INT(wrong_code, 0);
    CHECK_EQ_INT(wrong_section, 0);
    CHECK_EQ_INT(wrong_offset, 0);
    CHECK_OK(trn_water_decode(data, size, NULL, NULL, &back, NULL));
    trn_water_dispose(&back);
    CHECK_STATUS(trn_water_decode(data, body1 - 1, "w.bin", NULL, &back, &e), TRN_ERR_TRUNCATED);
    CHECK_CONTAINS(e.message, "body 0: expected");
    CHECK_CONTAINS(e.file, "w.bin");
    CHECK_EQ_INT(e.offset, body0 + 12);
    free(data);
    trn_water_dispose(&w);
}

/* Decode a modified copy; expect code at offset with a message containing says. */
static void decode_fails(const uint8_t *data, size_t size, const trn_water_limits *lim,
                         trn_status code, int64_t offset, const char *says)
{
    trn_water back;
    trn_error e;
    CHECK_STATUS(trn_water_decode(data, size, "w.bin", lim, &back, &e), code);
    if (e.offset != offset) fprintf(stderr, "  offset %lld: %s\n", (long long)e.offset, e.message);
    CHECK_EQ_INT(e.offset, offset);
    CHECK_CONTAINS(e.message, says);
}

static void test_codec_rejections(void)
{
    trn_water w, back;
    sample_water(&w);
    uint8_t *data, *bad;
    size_t size;
    encode(&w, &data, &size);
    bad = malloc(size + 1);
    const size_t body0 = find_tag(data, size, "BODY", 0);
    const size_t body1 = find_tag(data, size, "BODY", body0 + 4);
    const size_t smpl = find_tag(data, size, "SMPL", 0);
    const size_t owner = smpl + 12, wet = owner + 80, surface = wet + 20, segment = surface + 80;
    const size_t id0 = 15; /* "lakes/basin/1_1" */
    const size_t kind0 = body0 + 12 + 2 + id0, radius0 = kind0 + 4 + 24;

#define FRESH() memcpy(bad, data, size)
    FRESH();
    bad[0] = 'X';
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, 0, "magic");
    decode_fails((const uint8_t *)"TRNWAT", 6, NULL, TRN_ERR_TRUNCATED, 0, "magic");
    decode_fails((const uint8_t *)"PNG", 3, NULL, TRN_ERR_FORMAT, 0, "magic");
    FRESH();
    put32(bad + 8, 2);
    decode_fails(bad, size, NULL, TRN_ERR_VERSION, 8, "found 2");
    put32(bad + 8, 0);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, 8, "found 0");
    FRESH();
    bad[radius0] ^= 1;
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)size - 8, "checksum");
    FRESH();
    bad[size] = 0;
    decode_fails(bad, size + 1, NULL, TRN_ERR_TRAILING_DATA, (int64_t)size, "1 more byte");
    FRESH();
    memcpy(bad + body1, "BADY", 4);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)body1, "expected section tag 'BODY'");
    /* A section length that disagrees with its fields. */
    FRESH();
    bad[body1 + 4]--;
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)smpl - 8, "body 1 ('creek')");
    FRESH();
    bad[12 + 4]++;
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, 12 + 12 + 36, "grid: expected the section");

    FRESH();
    bad[smpl + 4]--; /* one byte short for the per-sample arrays */
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)smpl + 12, "per-sample arrays");
    /* A grid without cells or with a size that is not positive. */
    FRESH();
    put32(bad + 24, 0);
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, 24, "grid: expected at least 1x1 cells");
    FRESH();
    bad[24 + 8 + 7] ^= 0x80; /* size_x = -8 */
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, 24, "over -8 x 6");
    FRESH();
    bad[body0 + 12] = 128; /* an id of 128 bytes */
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)body0 + 12, "at most 127 bytes");

    /* Limits: the largest count accepted, one less refused. */
    trn_water_limits lim;
    trn_water_limits_default(&lim);
    lim.max_samples = 20;
    lim.max_bodies = 2;
    lim.max_points = 5;
    CHECK_OK(trn_water_decode(data, size, NULL, &lim, &back, NULL));
    trn_water_dispose(&back);
    lim.max_samples = 19;
    decode_fails(data, size, &lim, TRN_ERR_LIMIT, 24, "limit of 19");
    lim.max_samples = 20;
    lim.max_bodies = 1;
    decode_fails(data, size, &lim, TRN_ERR_LIMIT, 12 + 12 + 32, "limit of 1");
    lim.max_bodies = 2;
    lim.max_points = 4;
    /* The river's path count: after its id, kind, 4 numbers, no boundary, carve_depth, 3
     * control points, interpolation and steps. */
    decode_fails(data, size, &lim, TRN_ERR_LIMIT,
                 (int64_t)(body1 + 12 + 7 + 4 + 32 + 4 + 8 + 4 + 72 + 8),
                 "sampled path: 5 points, more than the limit of 4");

    /* Values that parse but do not make sense (with the checksum fixed). */
    FRESH();
    put32(bad + kind0, 3);
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)kind0, "kind: expected 0..2, found 3");
    FRESH();
    bad[radius0 + 7] = 0xbf; /* -radius */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)radius0, "radius: expected a number >= 0");
    FRESH();
    put32(bad + owner + 4 * 7, 2);
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(owner + 28), "expected -1..1, found 2");
    put32(bad + owner + 4 * 7, (uint32_t)-2);
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(owner + 28), "found -2");
    FRESH();
    bad[wet + 1] = 2; /* sample (1, 0): the lake's */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(wet + 1), "expected 0 or 1, found 2");
    FRESH();
    bad[wet + 2] = 1; /* sample (2, 0) has no owner */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(wet + 2), "no owner");
    FRESH();
    memset(bad + surface + 4 * 2, 0, 4); /* an unowned sample with a height */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(surface + 8), "NaN");
    FRESH();
    memset(bad + surface, 0xff, 4); /* an owned sample without one */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)surface, "a height");
    /* The river's path has 5 points: segments 0..3. */
    FRESH();
    put32(bad + segment + 4 * 19, 3);
    reseal(bad, size);
    CHECK_OK(trn_water_decode(bad, size, NULL, NULL, &back, NULL));
    trn_water_dispose(&back);
    put32(bad + segment + 4 * 19, 4);
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(segment + 76), "expected 0..3");
    FRESH();
    put32(bad + segment + 4 * 1, 1); /* a lake sample */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)(segment + 4), "expected 0..0");
    FRESH();
    /* The lake's carve flag: before 5 numbers, the warning count and text and its place. */
    const size_t carve0 = body1 - 16 - strlen(w.bodies[0].warning) - 2 - 4 - 40 - 1;
    bad[carve0] = 2;
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)carve0, "carve: expected 0 or 1");
    FRESH();
    bad[body0 + 12 + 2 + 3] = 0; /* a NUL inside the id */
    reseal(bad, size);
    decode_fails(bad, size, NULL, TRN_ERR_FORMAT, (int64_t)body0 + 14, "NUL");
#undef FRESH
    free(bad);
    free(data);
    trn_water_dispose(&w);
}

/* ---- together with resolution ---- */

/* Proposals resolve to exactly the samples their basins raised; a route into a resolved lake
 * joins it; the resolved water survives the codec byte for byte. */
static void test_resolved(void)
{
    trn_field f;
    trn_drainage d;
    two_pits(&f, &d);
    trn_water_body *b;
    propose(&d, &f, NULL, 2, 2, &b);
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, b, 2, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 4);
    CHECK_EQ_INT(w.bodies[1].wet_samples, 9);
    CHECK(w.bodies[0].area == 16.0 && w.bodies[1].area == 36.0);
    CHECK(w.bodies[0].warning_count == 0 && w.bodies[1].warning_count == 0);
    trn_water_bodies_free(b, 2);

    /* A channel falling west along row 4 (9.75 at i = 8 to 9 at i = 5) into lake A: the
     * lake, refreshed on that ground, takes (5, 4) (inside its radius); the route from (8, 4)
     * joins it there, its bed floored at the lake's surface (10) less the water depth. */
    trn_field ramped;
    CHECK_OK(trn_field_init(&ramped, 16, 16, 32.0, 32.0, NULL));
    memcpy(ramped.heights, f.heights, 17 * 17 * sizeof(float));
    for (uint32_t i = 5; i <= 8; i++)
        ramped.heights[4 * 17 + i] = 9.0f + 0.25f * (float)(i - 5);
    trn_drainage d2;
    CHECK_OK(trn_drainage_compute(&ramped, NAN, &d2, NULL, NULL, NULL));
    trn_water w2;
    CHECK_OK(trn_water_refresh(&w, &ramped, NULL, &w2, NULL));
    CHECK(w2.wet[4 * 17 + 5] == 1 && w2.wet[4 * 17 + 6] == 0);
    trn_river_route_params p;
    route_params(&p, 16.0, 8.0);
    trn_water_body river;
    trn_route_report r;
    CHECK_OK(trn_river_route(&d2, ramped.heights, &w2, "creek", &p, &river, &r, NULL));
    CHECK(r.end == TRN_ROUTE_EXISTING_BODY);
    CHECK(strcmp(r.joined, "lakes/basin/3_3") == 0);
    CHECK_EQ_INT(r.samples, 4);
    CHECK(r.end_x == 10.0 && r.end_z == 8.0);
    for (uint32_t k = 0; k < river.control_count; k++)
        CHECK(river.control[3 * k + 1] == 9.0);

    /* Lakes and the river resolved together round-trip through the codec. */
    trn_water_body all[3];
    CHECK_OK(trn_water_body_copy(&w2.bodies[0], &all[0], NULL));
    CHECK_OK(trn_water_body_copy(&w2.bodies[1], &all[1], NULL));
    all[2] = river;
    trn_water w3;
    CHECK_OK(trn_water_resolve(&ramped, all, 3, NULL, &w3, NULL));
    CHECK(w3.bodies[2].wet_samples > 0);
    uint8_t *data, *again;
    size_t size, again_size;
    encode(&w3, &data, &size);
    trn_water back;
    CHECK_OK(trn_water_decode(data, size, NULL, NULL, &back, NULL));
    encode(&back, &again, &again_size);
    CHECK(again_size == size && memcmp(again, data, size) == 0);
    free(data);
    free(again);
    trn_water_dispose(&back);
    trn_water_dispose(&w3);
    for (int k = 0; k < 3; k++)
        trn_water_body_dispose(&all[k]);
    trn_water_dispose(&w2);
    trn_water_dispose(&w);
    trn_drainage_dispose(&d2);
    trn_drainage_dispose(&d);
    trn_field_dispose(&ramped);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_basin_defaults);
    RUN(test_basin_thresholds);
    RUN(test_basin_budget);
    RUN(test_basin_radius_plain);
    RUN(test_edit_errors);
    RUN(test_edit_check);
    RUN(test_edit_patches);
    RUN(test_route_defaults);
    RUN(test_route_sea_and_edge);
    RUN(test_route_joins);
    RUN(test_route_basin_and_blocked);
    RUN(test_route_steps);
    RUN(test_route_head);
    RUN(test_route_smooth);
    RUN(test_route_mouth);
    RUN(test_route_head_taper);
    RUN(test_route_params);
    RUN(test_codec_round_trip);
    RUN(test_codec_truncation);
    RUN(test_codec_rejections);
    RUN(test_resolved);
    return trn_test_finish();
}
