/* Tests: water bodies (defaults, every validation rule at its limits, path sampling), the
 * terrain-triangle heights, resolution on analytic fields (bowls, ramps, planes, boundaries,
 * rivers, carving, overlaps, refresh, determinism) and queries against hand-computed values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "water/water_internal.h"
#include "terrane/water.h"
#include "test.h"

#define CHECK_NEAR(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

/* A field of cells_x x cells_z unit cells whose sample (i, j) holds fn(i, j). */
static void make_field(trn_field *f, uint32_t cells_x, uint32_t cells_z,
                       double (*fn)(double, double))
{
    CHECK_OK(trn_field_init(f, cells_x, cells_z, (double)cells_x, (double)cells_z, NULL));
    for (uint32_t j = 0; j <= cells_z; j++)
        for (uint32_t i = 0; i <= cells_x; i++)
            f->heights[(size_t)j * (cells_x + 1) + i] = (float)fn((double)i, (double)j);
}

static size_t at(const trn_water *w, uint32_t i, uint32_t j)
{
    return (size_t)j * (w->cells_x + 1u) + i;
}

/* Two bowls (centres (16, 16) and (48, 16), height = distance to the nearer centre) separated
 * by a ridge at x = 32, 16 high. */
static double two_bowls(double x, double z)
{
    const double a = hypot(x - 16.0, z - 16.0), b = hypot(x - 48.0, z - 16.0);
    return a < b ? a : b;
}

static double bowls_apart(double x, double z)
{
    const double a = hypot(x - 16.0, z - 10.0), b = hypot(x - 48.0, z - 22.0);
    return a < b ? a : b;
}

static double two_bowls_spike(double x, double z)
{
    return x == 16.0 && z == 16.0 ? 10.0 : two_bowls(x, z);
}

static double ramp_x(double x, double z)
{
    (void)z;
    return x;
}

static double ramp_down(double x, double z)
{
    (void)z;
    return 32.0 - x;
}

static double ramp_eighth(double x, double z)
{
    (void)z;
    return 10.0 + x / 8.0;
}

static double flat10(double x, double z)
{
    (void)x;
    (void)z;
    return 10.0;
}

static double noisy(double x, double z)
{
    return 8.0 * sin(x * 0.21) * cos(z * 0.17) + 4.0 * sin((x + z) * 0.05) + 0.01 * x;
}

/* Samples of bowl (cx, cz) closer than r: the lattice points in the open disc. */
static uint64_t disc_count(double r)
{
    uint64_t n = 0;
    for (int j = -40; j <= 40; j++)
        for (int i = -40; i <= 40; i++)
            if (hypot(i, j) < r) n++;
    return n;
}

static void set_boundary(trn_water_body *b, const double *xz, uint32_t n)
{
    free(b->boundary);
    b->boundary = malloc(2 * n * sizeof(double));
    memcpy(b->boundary, xz, 2 * n * sizeof(double));
    b->boundary_count = n;
}

static void set_controls(trn_water_body *b, const double *xyz, uint32_t n)
{
    free(b->control);
    free(b->path);
    b->path = NULL;
    b->path_count = 0;
    b->control = malloc(3 * n * sizeof(double));
    memcpy(b->control, xyz, 3 * n * sizeof(double));
    b->control_count = n;
}

/* ---- kinds, defaults, copies ---- */

static void test_kinds_and_defaults(void)
{
    CHECK(strcmp(trn_water_kind_name(TRN_WATER_LAKE), "lake") == 0);
    CHECK(strcmp(trn_water_kind_name(TRN_WATER_OCEAN), "ocean") == 0);
    CHECK(strcmp(trn_water_kind_name(TRN_WATER_RIVER), "river") == 0);
    trn_water_kind k = TRN_WATER_LAKE;
    CHECK(trn_water_kind_parse("river", &k) && k == TRN_WATER_RIVER);
    CHECK(trn_water_kind_parse("ocean", &k) && k == TRN_WATER_OCEAN);
    CHECK(trn_water_kind_parse("lake", &k) && k == TRN_WATER_LAKE);
    CHECK(!trn_water_kind_parse("Lake", &k));
    CHECK(!trn_water_kind_parse("", &k));
    CHECK(!trn_water_kind_parse(NULL, &k));
    CHECK(strcmp(trn_water_kind_name((trn_water_kind)9), "unknown") == 0);

    trn_water_look l;
    trn_water_look_default(&l);
    CHECK(l.shallow_color[0] == 0.10 && l.shallow_color[1] == 0.45 && l.shallow_color[2] == 0.50 &&
          l.shallow_color[3] == 0.35);
    CHECK(l.deep_color[0] == 0.02 && l.deep_color[1] == 0.10 && l.deep_color[2] == 0.16 &&
          l.deep_color[3] == 0.90);
    CHECK(l.absorption_distance == 4.0 && l.roughness == 0.05 && l.flow_speed == 0.0);
    CHECK(l.flow_direction[0] == 1.0 && l.flow_direction[1] == 0.0);
    CHECK(l.wave_amplitude == 0.05 && l.wave_length == 2.0 && l.wave_speed == 0.5);
    CHECK(l.normal_strength == 1.0 && l.foam_width == 0.5 && l.foam_strength == 0.5);
    CHECK(l.foam_color[0] == 1.0 && l.foam_color[1] == 1.0 && l.foam_color[2] == 1.0 &&
          l.foam_color[3] == 1.0);

    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "r1");
    CHECK(strcmp(b.id, "r1") == 0 && b.kind == TRN_WATER_RIVER);
    CHECK(b.level == 0.0 && b.radius == 64.0 && b.width == 8.0 && b.river_depth == 1.0);
    CHECK(b.curve_steps == 8 && b.interpolation == TRN_RIVER_LINEAR);
    CHECK(b.surface_mode == TRN_RIVER_SURFACE_LEVEL && b.carve && b.carve_depth == 0.0);
    CHECK(b.boundary == NULL && b.control == NULL && b.path == NULL);
    CHECK(memcmp(&b.look, &l, sizeof l) == 0);

    /* A deep copy: arrays duplicated, not shared. */
    const double ctl[6] = {0, 1, 2, 3, 4, 5};
    set_controls(&b, ctl, 2);
    const double poly[6] = {0, 0, 1, 0, 0, 1};
    set_boundary(&b, poly, 3);
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    trn_water_body c;
    CHECK_OK(trn_water_body_copy(&b, &c, NULL));
    CHECK(c.control != b.control && c.boundary != b.boundary && c.path != b.path);
    CHECK(c.control_count == 2 && memcmp(c.control, ctl, sizeof ctl) == 0);
    CHECK(c.boundary_count == 3 && memcmp(c.boundary, poly, sizeof poly) == 0);
    CHECK(c.path_count == 2 && memcmp(c.path, ctl, sizeof ctl) == 0);
    trn_water_body_dispose(&b);
    CHECK(b.control == NULL && b.control_count == 0 && b.path == NULL && b.boundary == NULL);
    trn_water_body_dispose(&c);
    trn_water_body_dispose(NULL);
    CHECK_STATUS(trn_water_body_copy(NULL, &c, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_body_copy(&b, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_body_sample_path(NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_copy(NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_water_ground_hash(NULL) == XXH64("", 0, 0));

    /* Long ids are truncated to fit. */
    char longid[200];
    memset(longid, 'a', sizeof longid - 1);
    longid[sizeof longid - 1] = '\0';
    trn_water_body_init(&b, TRN_WATER_LAKE, longid);
    CHECK(strlen(b.id) == TRN_WATER_ID_MAX - 1);
    CHECK_OK(trn_water_body_validate(&b, NULL, NULL));
}

/* ---- validation ---- */

/* Validate b and expect field and a message containing want. */
static void expect_invalid(const trn_water_body *b, const char *field, const char *want, int line)
{
    trn_error err;
    const char *got = "unset";
    const trn_status st = trn_water_body_validate(b, &got, &err);
    if (st != TRN_ERR_VALIDATION || !got || strcmp(got, field) != 0 || !strstr(err.message, want)) {
        trn_test_failures++;
        fprintf(stderr, "%s:%d: expected %s / '%s' containing \"%s\", got %s / '%s': %s\n",
                __FILE__, line, trn_status_name(TRN_ERR_VALIDATION), field, want,
                trn_status_name(st), got ? got : "(null)", st == TRN_OK ? "" : err.message);
    }
    trn_test_checks++;
}
#define INVALID(b, field, want) expect_invalid(b, field, want, __LINE__)

static void expect_valid(const trn_water_body *b, int line)
{
    trn_error err;
    const char *got = "unset";
    const trn_status st = trn_water_body_validate(b, &got, &err);
    trn_test_checks++;
    if (st != TRN_OK || got != NULL) {
        trn_test_failures++;
        fprintf(stderr, "%s:%d: expected valid, got %s: %s\n", __FILE__, line, trn_status_name(st),
                st == TRN_OK ? "(field set)" : err.message);
    }
}
#define VALID(b) expect_valid(b, __LINE__)

static void test_validate_common(void)
{
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "L");
    VALID(&b);
    b.id[0] = '\0';
    INVALID(&b, "id", "water body '': id: expected a nonempty id");
    trn_water_body_init(&b, TRN_WATER_LAKE, "L");
    memset(b.id, 'x', sizeof b.id); /* no terminator */
    INVALID(&b, "id", "id: expected a nonempty id of at most 127 bytes");
    trn_water_body_init(&b, TRN_WATER_LAKE, "L");
    b.kind = (trn_water_kind)7;
    INVALID(&b, "kind", "water body 'L': kind: expected lake, ocean or river, found 7");
    trn_water_body_init(&b, TRN_WATER_LAKE, "L");
    b.level = NAN;
    INVALID(&b, "level", "level: expected a finite number, found nan");
    b.level = INFINITY;
    INVALID(&b, "level", "level: expected a finite number, found inf");
    b.level = -1e6;
    VALID(&b);

    b.radius = 0.0;
    INVALID(&b, "radius", "water body 'L': radius: expected a finite number > 0, found 0");
    b.radius = -1.0;
    INVALID(&b, "radius", "found -1");
    b.radius = -20.0;
    INVALID(&b, "radius", "found -20");
    b.radius = -1e20;
    INVALID(&b, "radius", "found -1e+20");
    b.radius = -0.001;
    INVALID(&b, "radius", "found -0.001");
    b.radius = 1e-9;
    VALID(&b);
    b.center_x = NAN;
    INVALID(&b, "center", "center: expected a finite XZ pair");
    b.center_x = 0.0;
    b.center_z = -INFINITY;
    INVALID(&b, "center", "center: expected a finite XZ pair");
    b.center_z = 0.0;
    b.carve_depth = -0.5;
    INVALID(&b, "carve_depth", "carve_depth: expected a finite number >= 0, found -0.5");
    b.carve_depth = 0.0;
    VALID(&b);

    /* Look ranges, each at its limit and just beyond. */
    b.look.shallow_color[2] = 1.0;
    VALID(&b);
    b.look.shallow_color[2] = 1.5;
    INVALID(&b, "shallow_color", "shallow_color: expected RGBA channels in 0..1, found 1.5 at [2]");
    b.look.shallow_color[2] = 0.0;
    VALID(&b);
    b.look.shallow_color[2] = -0.01;
    INVALID(&b, "shallow_color", "found -0.01 at [2]");
    trn_water_look_default(&b.look);
    b.look.deep_color[3] = 1.0001;
    INVALID(&b, "deep_color", "deep_color: expected RGBA channels in 0..1");
    b.look.deep_color[3] = NAN;
    INVALID(&b, "deep_color", "found nan at [3]");
    trn_water_look_default(&b.look);
    b.look.foam_color[0] = 2.0;
    INVALID(&b, "foam_color", "foam_color: expected RGBA channels in 0..1, found 2 at [0]");
    trn_water_look_default(&b.look);
    b.look.absorption_distance = 0.0;
    INVALID(&b, "absorption_distance",
            "absorption_distance: expected a finite number > 0, found 0");
    b.look.absorption_distance = 1e-12;
    VALID(&b);
    b.look.roughness = 1.0;
    VALID(&b);
    b.look.roughness = 1.01;
    INVALID(&b, "roughness", "roughness: expected a number in 0..1, found 1.01");
    b.look.roughness = -0.01;
    INVALID(&b, "roughness", "found -0.01");
    b.look.roughness = 0.0;
    VALID(&b);
    b.look.flow_speed = -0.1;
    INVALID(&b, "flow_speed", "flow_speed: expected a finite number >= 0, found -0.1");
    b.look.flow_speed = INFINITY;
    INVALID(&b, "flow_speed", "found inf");
    b.look.flow_speed = 0.0;
    b.look.flow_direction[0] = b.look.flow_direction[1] = 0.0;
    VALID(&b); /* still water needs no direction */
    b.look.flow_speed = 1.0;
    INVALID(&b, "flow_direction", "flow_direction: expected a nonzero direction for flow_speed 1");
    b.kind = TRN_WATER_OCEAN;
    INVALID(&b, "flow_direction", "found [0, 0]");
    b.look.flow_direction[1] = -1e-300;
    VALID(&b);
    b.look.flow_direction[0] = NAN;
    INVALID(&b, "flow_direction", "flow_direction: expected a finite XZ pair");
    trn_water_look_default(&b.look);
    b.look.wave_amplitude = -1.0;
    INVALID(&b, "wave_amplitude", "wave_amplitude: expected a finite number >= 0");
    b.look.wave_amplitude = 0.0;
    VALID(&b);
    b.look.wave_length = 0.0;
    INVALID(&b, "wave_length", "wave_length: expected a finite number > 0, found 0");
    b.look.wave_length = 2.0;
    b.look.wave_speed = -1e-9;
    INVALID(&b, "wave_speed", "wave_speed: expected a finite number >= 0");
    b.look.wave_speed = 0.0;
    b.look.normal_strength = -2.0;
    INVALID(&b, "normal_strength", "normal_strength: expected a finite number >= 0, found -2");
    b.look.normal_strength = 0.0;
    b.look.foam_width = -0.5;
    INVALID(&b, "foam_width", "foam_width: expected a finite number >= 0");
    b.look.foam_width = 0.0;
    VALID(&b);
    b.look.foam_strength = 1.0;
    VALID(&b);
    b.look.foam_strength = 1.5;
    INVALID(&b, "foam_strength", "foam_strength: expected a number in 0..1, found 1.5");
    b.look.foam_strength = -0.5;
    INVALID(&b, "foam_strength", "found -0.5");

    CHECK_STATUS(trn_water_body_validate(NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
}

static void test_orient(void)
{
    CHECK(trn_water_orient(0, 0, 1, 0, 0, 1) == 1);
    CHECK(trn_water_orient(0, 0, 1, 0, 0, -1) == -1);
    CHECK(trn_water_orient(0, 0, 1, 1, 3, 3) == 0);
    /* Rounded, this determinant comes out positive (5.7e-14); exactly it is -9.3e-15. */
    CHECK(trn_water_orient(12, 12, 24, 24, 0.5000000000000053, 0.5000000000000046) == -1);
    CHECK(trn_water_orient(24, 24, 12, 12, 0.5000000000000053, 0.5000000000000046) == 1);
}

static void test_validate_boundary(void)
{
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "L");
    b.center_x = 1.0;
    b.center_z = 1.0;
    const double square[8] = {0, 0, 4, 0, 4, 4, 0, 4};
    set_boundary(&b, square, 4);
    VALID(&b);
    const double closed[10] = {0, 0, 4, 0, 4, 4, 0, 4, 0, 0};
    set_boundary(&b, closed, 5); /* one repeated closing vertex is dropped */
    VALID(&b);
    const double cw[8] = {0, 0, 0, 4, 4, 4, 4, 0};
    set_boundary(&b, cw, 4); /* either winding */
    VALID(&b);
    const double straight[10] = {0, 0, 2, 0, 4, 0, 4, 4, 0, 4}; /* (2, 0) on a straight edge */
    set_boundary(&b, straight, 5);
    VALID(&b);
    const double upright[10] = {0, 0, 4, 0, 4, 2, 4, 4, 0, 4}; /* (4, 2) likewise, in z */
    set_boundary(&b, upright, 5);
    VALID(&b);
    const double concave[12] = {0, 0, 6, 0, 6, 6, 3, 2, 0, 6, 0, 0};
    set_boundary(&b, concave, 6); /* concave, closed */
    VALID(&b);

    const double two[4] = {0, 0, 4, 0};
    set_boundary(&b, two, 2);
    INVALID(&b, "boundary",
            "water body 'L': boundary: expected at least 3 distinct vertices, found 2");
    const double tri_closed[6] = {0, 0, 4, 0, 0, 0};
    set_boundary(&b, tri_closed, 3);
    INVALID(&b, "boundary", "expected at least 3 distinct vertices, found 2");
    const double twice_closed[12] = {0, 0, 4, 0, 4, 4, 0, 4, 0, 0, 0, 0};
    set_boundary(&b, twice_closed, 6);
    INVALID(&b, "boundary",
            "expected edges of nonzero length, found vertices 4 and 0 both at [0, 0]");
    const double dup[10] = {0, 0, 4, 0, 4, 0, 4, 4, 0, 4};
    set_boundary(&b, dup, 5);
    INVALID(&b, "boundary",
            "expected edges of nonzero length, found vertices 1 and 2 both at [4, 0]");
    const double bowtie[8] = {0, 0, 4, 4, 4, 0, 0, 4};
    set_boundary(&b, bowtie, 4);
    INVALID(&b, "boundary", "expected a simple polygon, found edges 0 and 2 intersecting");
    /* Vertex 4 touches edge 1-2 (x = 4) without crossing it: touching counts. */
    const double touch[10] = {0, 0, 4, 0, 4, 4, 2, 4, 4, 2};
    set_boundary(&b, touch, 5);
    INVALID(&b, "boundary", "expected a simple polygon, found edges 1 and 3 intersecting");
    /* The same shape pulled back from the edge by one ulp-ish amount is simple. */
    const double near_touch[10] = {0, 0, 4, 0, 4, 4, 2, 4, 3.9999999999999996, 2};
    set_boundary(&b, near_touch, 5);
    b.center_x = 3.0; /* below the edge from (4, 2) back to (0, 0) */
    VALID(&b);
    b.center_x = 1.0;
    INVALID(&b, "center", "found [1, 1] outside");
    /* An edge doubling back along its predecessor. */
    const double fold[8] = {0, 0, 4, 0, 2, 0, 2, 4};
    set_boundary(&b, fold, 4);
    INVALID(&b, "boundary",
            "expected a simple polygon, found edges 0 and 1 overlapping at vertex 1");
    const double collinear[6] = {0, 0, 1, 0, 2, 0};
    set_boundary(&b, collinear, 3);
    INVALID(&b, "boundary", "boundary: expected a nonzero area, found all 3 vertices on one line");
    const double collinear4[8] = {0, 0, 1, 1, 3, 3, 2, 2};
    set_boundary(&b, collinear4, 4);
    INVALID(&b, "boundary", "found all 4 vertices on one line");
    /* Off the line by the smallest step: a sliver, but a simple polygon (exact tests). */
    const double almost[8] = {0, 0, 1, 1, 3, 3, 2, 2.0000000000000004};
    set_boundary(&b, almost, 4);
    b.center_x = b.center_z = 0.0;
    VALID(&b);
    /* The last edge passes exactly through (1, 1 + 2^-52); one ulp above is outside. */
    b.center_x = 1.0;
    b.center_z = 1.0000000000000002;
    VALID(&b);
    b.center_z = 1.0000000000000004;
    INVALID(&b, "center", "found [1, 1.0000000000000004] outside");
    b.center_x = b.center_z = 1.0;
    const double nan_vertex[6] = {0, 0, NAN, 0, 0, 4};
    set_boundary(&b, nan_vertex, 3);
    INVALID(&b, "boundary", "expected finite XZ pairs, found [nan, 0] at vertex 1");
    /* A tiny triangle is still a triangle. */
    const double tiny[6] = {0, 0, 1e-150, 0, 0, 1e-150};
    set_boundary(&b, tiny, 3);
    b.center_x = b.center_z = 0.0;
    VALID(&b);

    /* The centre: inside, on an edge, on a vertex, outside. */
    set_boundary(&b, square, 4);
    b.center_x = 4.0;
    b.center_z = 2.0;
    VALID(&b);
    b.center_x = 0.0;
    b.center_z = 4.0;
    VALID(&b);
    b.center_x = 4.000000000000001;
    INVALID(&b, "center",
            "center: expected a point inside the boundary, found [4.000000000000001, 4] outside");
    set_boundary(&b, concave, 6);
    b.center_x = 3.0;
    b.center_z = 4.0; /* in the notch */
    INVALID(&b, "center", "outside");
    b.center_z = 2.0; /* the notch's vertex */
    VALID(&b);
    b.kind = TRN_WATER_OCEAN; /* an ocean has no centre or radius to check */
    b.center_z = 4.0;
    b.radius = 0.0;
    VALID(&b);
    b.kind = TRN_WATER_RIVER; /* a river ignores boundaries */
    const double river_ctl[6] = {0, 0, 0, 1, 0, 0};
    set_controls(&b, river_ctl, 2);
    set_boundary(&b, bowtie, 4);
    VALID(&b);
    b.radius = 1.0;
    set_boundary(&b, concave, 6);
    b.kind = TRN_WATER_LAKE;
    b.boundary_count = 3;
    free(b.boundary);
    b.boundary = NULL;
    INVALID(&b, "boundary", "expected 3 vertices, found none");

    /* The vertex limit counts distinct vertices. */
    const uint32_t max = TRN_WATER_MAX_BOUNDARY;
    double *ring = malloc(2 * (max + 2) * sizeof(double));
    for (uint32_t k = 0; k <= max + 1; k++) {
        const double a = 2.0 * 3.14159265358979 * k / (max + 1);
        ring[2 * k] = 100.0 * cos(a);
        ring[2 * k + 1] = 100.0 * sin(a);
    }
    b.center_x = b.center_z = 0.0;
    set_boundary(&b, ring, max);
    VALID(&b);
    ring[2 * max] = ring[0];
    ring[2 * max + 1] = ring[1];
    set_boundary(&b, ring, max + 1); /* max distinct + closing vertex */
    VALID(&b);
    for (uint32_t k = 0; k <= max; k++) {
        const double a = 2.0 * 3.14159265358979 * k / (max + 1);
        ring[2 * k] = 100.0 * cos(a);
        ring[2 * k + 1] = 100.0 * sin(a);
    }
    set_boundary(&b, ring, max + 1);
    INVALID(&b, "boundary", "expected at most 4096 vertices, found 4097");
    free(ring);
    trn_water_body_dispose(&b);
}

static void test_validate_river(void)
{
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "R");
    INVALID(&b, "river_path",
            "water body 'R': river_path: expected at least 2 control points, found 0");
    const double one[3] = {0, 0, 0};
    set_controls(&b, one, 1);
    INVALID(&b, "river_path", "expected at least 2 control points, found 1");
    const double two[6] = {0, 0, 0, 10, 0, 0};
    set_controls(&b, two, 2);
    VALID(&b);
    const double same[6] = {5, 1, 5, 5, 1, 5};
    set_controls(&b, same, 2); /* coincident points are valid */
    VALID(&b);
    const double bad[6] = {0, 0, 0, 10, NAN, 0};
    set_controls(&b, bad, 2);
    INVALID(&b, "river_path", "expected finite XYZ triples, found nan in point 1");
    set_controls(&b, two, 2);
    b.control_count = 3;
    free(b.control);
    b.control = NULL;
    INVALID(&b, "river_path", "expected 3 control points, found none");
    set_controls(&b, two, 2);
    b.interpolation = (trn_river_interpolation)2;
    INVALID(&b, "river_path_interpolation", "expected linear or catmull_rom, found 2");
    b.interpolation = TRN_RIVER_CATMULL_ROM;
    b.curve_steps = 0;
    INVALID(&b, "river_curve_steps", "river_curve_steps: expected an integer in 1..64, found 0");
    b.curve_steps = 1;
    VALID(&b);
    b.curve_steps = 64;
    VALID(&b);
    b.curve_steps = 65;
    INVALID(&b, "river_curve_steps", "expected an integer in 1..64, found 65");
    b.curve_steps = 8;
    b.width = 0.0;
    INVALID(&b, "width", "width: expected a finite number > 0, found 0");
    b.width = 1e-6;
    VALID(&b);
    b.surface_mode = (trn_river_surface)2;
    INVALID(&b, "river_surface_mode", "expected level or follow_bed, found 2");
    b.surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b.river_depth = 0.0;
    INVALID(&b, "river_depth", "river_depth: expected a finite number > 0, found 0");
    b.river_depth = 0.25;
    VALID(&b);
    b.look.flow_speed = 2.0;
    b.look.flow_direction[0] = b.look.flow_direction[1] = 0.0; /* rivers follow their path */
    VALID(&b);
    /* A sampled path is checked too. */
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    b.path[4] = INFINITY;
    INVALID(&b, "river_path", "expected finite XYZ triples, found inf in point 1");
    b.path_count = 1;
    INVALID(&b, "river_path", "expected at least 2 path points, found 1");

    /* Control point limit. */
    const uint32_t max = TRN_WATER_MAX_RIVER_POINTS;
    double *pts = malloc(3 * (max + 1) * sizeof(double));
    for (uint32_t k = 0; k <= max; k++) {
        pts[3 * k] = k;
        pts[3 * k + 1] = 0;
        pts[3 * k + 2] = 0;
    }
    set_controls(&b, pts, max);
    VALID(&b);
    set_controls(&b, pts, max + 1);
    INVALID(&b, "river_path", "expected at most 4096 control points, found 4097");
    free(pts);
    /* Lake fields do not apply to rivers. */
    set_controls(&b, two, 2);
    b.radius = 0.0;
    b.carve_depth = -1.0;
    VALID(&b);
    trn_water_body_dispose(&b);
}

/* ---- path sampling ---- */

static void test_sample_path(void)
{
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "R");
    const double ctl[9] = {0, 0, 0, 10, 4, 0, 10, 8, 10};
    set_controls(&b, ctl, 3);
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    CHECK_EQ_INT(b.path_count, 3);
    CHECK(b.path && memcmp(b.path, ctl, sizeof ctl) == 0);

    b.interpolation = TRN_RIVER_CATMULL_ROM;
    b.curve_steps = 2;
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    CHECK_EQ_INT(b.path_count, 5);
    /* By hand: t = 1/2 of 0.5 (2 p1 + (p2 - p0) t + (2 p0 - 5 p1 + 4 p2 - p3) t^2 +
     * (3 p1 - p0 - 3 p2 + p3) t^3), the ends' phantoms repeating the end points. */
    const double want[15] = {0, 0, 0, 5, 1.75, -0.625, 10, 4, 0, 10.625, 6.25, 5, 10, 8, 10};
    for (int k = 0; k < 15; k++)
        CHECK(b.path[k] == want[k]);

    b.curve_steps = 1; /* one step keeps only the controls */
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    CHECK_EQ_INT(b.path_count, 3);
    CHECK(memcmp(b.path, ctl, sizeof ctl) == 0);

    b.curve_steps = 64;
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    CHECK_EQ_INT(b.path_count, 129);
    CHECK(memcmp(b.path + 3 * 64, ctl + 3, 3 * sizeof(double)) == 0); /* controls kept exactly */
    CHECK(memcmp(b.path + 3 * 128, ctl + 6, 3 * sizeof(double)) == 0);
    b.curve_steps = 65;
    trn_error err;
    CHECK_STATUS(trn_water_body_sample_path(&b, &err), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(err.message, "river_curve_steps");
    CHECK_EQ_INT(b.path_count, 129); /* left as it was */

    /* Coincident controls: a valid, finite path. */
    const double co[9] = {3, 1, 3, 3, 1, 3, 9, 2, 3};
    set_controls(&b, co, 3);
    b.curve_steps = 4;
    CHECK_OK(trn_water_body_sample_path(&b, NULL));
    CHECK_EQ_INT(b.path_count, 9);
    for (uint32_t k = 0; k < 9 * 3; k++)
        CHECK(isfinite(b.path[k]));
    /* Between the coincident pair the curve still moves (the far neighbour pulls it):
     * x = 3 - 3 t^2 + 3 t^3, y = (2 - t^2 + t^3) / 2 at t = 1/4. */
    CHECK(b.path[3] == 2.859375 && b.path[4] == 0.9765625 && b.path[5] == 3.0);
    CHECK(memcmp(b.path + 12, co + 3, 3 * sizeof(double)) == 0);
    trn_water_body_dispose(&b);

    trn_water_body lake;
    trn_water_body_init(&lake, TRN_WATER_LAKE, "L");
    CHECK_STATUS(trn_water_body_sample_path(&lake, NULL), TRN_ERR_INVALID_ARGUMENT);
}

/* ---- terrain triangles ---- */

static void test_triangle_heights(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 2, 1, 4.0, 2.0, NULL)); /* cells 2 x 2 units */
    /* Row 0: 0 8 0; row 1: 4 2 6. */
    const float h[6] = {0, 8, 0, 4, 2, 6};
    memcpy(f.heights, h, sizeof h);
    /* Cell (0, 0) corners h00 0, h10 8, h01 4, h11 2. Lower triangle (u >= v) at u .5 v .25:
     * 0 + .5 * 8 + .25 * (2 - 8) = 2.5; upper at u .25 v .5: 0 + .5 * 4 + .25 * (2 - 4) = 1.5. */
    CHECK(trn_field_height_at(&f, 1.0, 0.5) == 2.5);
    CHECK(trn_field_height_at(&f, 0.5, 1.0) == 1.5);
    /* On the diagonal both agree: (1, 1) -> 1 = half of 2. */
    CHECK(trn_field_height_at(&f, 1.0, 1.0) == 1.0);
    /* The other diagonal's midpoint would average 8 and 4 (6): the split gives 1. */
    CHECK(trn_field_height_at(&f, 0.0, 0.0) == 0.0);
    CHECK(trn_field_height_at(&f, 4.0, 2.0) == 6.0);
    CHECK(trn_field_height_at(&f, 2.0, 0.0) == 8.0);
    /* Clamped to the grid. */
    CHECK(trn_field_height_at(&f, -5.0, -5.0) == 0.0);
    CHECK(trn_field_height_at(&f, 99.0, 99.0) == 6.0);
    CHECK(trn_field_height_at(&f, 3.0, 9.0) == 4.0); /* (3, 2): between 2 and 6 */
    CHECK(isnan(trn_field_height_at(&f, NAN, 1.0)));
    /* A NaN corner only spoils its triangles. */
    f.heights[3] = NAN; /* h01 of cell (0, 0) */
    CHECK(trn_field_height_at(&f, 1.0, 0.5) == 2.5);
    CHECK(isnan(trn_field_height_at(&f, 0.5, 1.0)));
    CHECK(trn_grid_value_at(f.heights, 2, 1, 4.0, 2.0, 3.0, 0.5) ==
          trn_field_height_at(&f, 3.0, 0.5));
    CHECK(isnan(trn_grid_value_at(NULL, 2, 1, 4.0, 2.0, 1.0, 1.0)));
    CHECK(isnan(trn_grid_value_at(f.heights, 0, 1, 4.0, 2.0, 1.0, 1.0)));
    trn_field_dispose(&f);
    trn_field empty;
    memset(&empty, 0, sizeof empty);
    CHECK(isnan(trn_field_height_at(&empty, 0.0, 0.0)));
    CHECK(isnan(trn_field_height_at(NULL, 0.0, 0.0)));
}

/* ---- lakes ---- */

static void test_lake_fills_one_bowl(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "lake");
    b.center_x = 16.0;
    b.center_z = 16.0;
    b.radius = 100.0;
    b.level = 5.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.cells_x, 64);
    CHECK_EQ_INT(w.cells_z, 32);
    CHECK(w.size_x == 64.0 && w.size_z == 32.0);
    CHECK_EQ_INT(w.body_count, 1);
    const uint64_t want = disc_count(5.0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, want);
    CHECK(w.bodies[0].area == (double)want);
    CHECK(w.bodies[0].min_surface == 5.0 && w.bodies[0].max_surface == 5.0);
    double vol = 0.0;
    for (int j = -5; j <= 5; j++)
        for (int i = -5; i <= 5; i++)
            if (hypot(i, j) < 5.0) vol += 5.0 - (double)(float)hypot(i, j);
    CHECK_NEAR(w.bodies[0].volume, vol, 1e-9);
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK(w.bodies[0].warning[0] == '\0');
    /* The other bowl stays dry although it is below the level. */
    CHECK(w.owner[at(&w, 48, 16)] == -1 && !w.wet[at(&w, 48, 16)]);
    CHECK(isnan(w.surface[at(&w, 48, 16)]));
    CHECK(w.wet[at(&w, 16, 16)] && w.owner[at(&w, 16, 16)] == 0 &&
          w.surface[at(&w, 16, 16)] == 5.0f);
    CHECK(w.wet[at(&w, 20, 16)]);
    /* (21, 16) stands at the level: a dry shoreline corner; (22, 16) is nothing. */
    CHECK(!w.wet[at(&w, 21, 16)] && w.owner[at(&w, 21, 16)] == 0 &&
          w.surface[at(&w, 21, 16)] == 5.0f);
    CHECK(w.owner[at(&w, 22, 16)] == -1);
    /* Diagonal corners count: (20, 19) (h = 5) is 8-adjacent to wet (19, 18). */
    CHECK(!w.wet[at(&w, 20, 19)] && w.owner[at(&w, 20, 19)] == 0);
    CHECK(w.segment[at(&w, 16, 16)] == 0);
    CHECK(!w.bodies[0].carve);
    CHECK(w.ground_hash == trn_water_ground_hash(&f));
    CHECK(trn_water_find(&w, "lake") == 0 && trn_water_find(&w, "lak") == -1);
    CHECK(trn_water_find(&w, NULL) == -1);

    /* A copy is deep and equal. */
    trn_water c;
    CHECK_OK(trn_water_copy(&w, &c, NULL));
    const size_t n = (size_t)65 * 33;
    CHECK(c.owner != w.owner && memcmp(c.owner, w.owner, n * 4) == 0);
    CHECK(memcmp(c.wet, w.wet, n) == 0 && memcmp(c.segment, w.segment, n * 4) == 0);
    CHECK(c.bodies != w.bodies && strcmp(c.bodies[0].id, "lake") == 0);
    CHECK(c.ground_hash == w.ground_hash && c.bodies[0].wet_samples == want);
    trn_water_dispose(&c);
    trn_water_dispose(&w);
    CHECK(w.owner == NULL && w.body_count == 0);
    trn_water_dispose(NULL);

    /* Radius limits the footprint: radius 3 keeps distances <= 3 (and < 5). */
    b.radius = 3.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    uint64_t in3 = 0;
    for (int j = -5; j <= 5; j++)
        for (int i = -5; i <= 5; i++)
            if (i * i + j * j <= 9) in3++;
    CHECK_EQ_INT(w.bodies[0].wet_samples, in3);
    CHECK(w.wet[at(&w, 19, 16)] && !w.wet[at(&w, 20, 16)]);
    /* Samples beyond the radius, below the level, next to a wet one leak; the first in sample
     * order is (16, 12) (distance 4) beside (16, 13) (distance 3, inside). */
    CHECK(w.bodies[0].warning_count > 0);
    CHECK(strcmp(w.bodies[0].warning,
                 "wet ground reaches the boundary below the level at (16, 12); it would spill "
                 "past the lake's radius or boundary at 3.16 m over (15, 13): use level "
                 "\"spill\" or a level <= 3.16") == 0);
    CHECK(w.bodies[0].warning_x == 16.0 && w.bodies[0].warning_z == 12.0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

static void test_lake_dry_centre(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls_spike);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "lake");
    b.center_x = 16.0;
    b.center_z = 16.0;
    b.radius = 100.0;
    b.level = 5.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    /* The spike is dry; the bowl around it still fills from the nearest wet sample. */
    CHECK(!w.wet[at(&w, 16, 16)] && w.owner[at(&w, 16, 16)] == 0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0) - 1);
    CHECK(w.owner[at(&w, 48, 16)] == -1);
    trn_water_dispose(&w);

    /* A centre on the ridge top between the bowls: both nearest wet samples (20, 16) and
     * (44, 16) are 12 away; the smaller index (20, 16) picks bowl A. */
    b.center_x = 32.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 20, 16)] && !w.wet[at(&w, 44, 16)]);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0) - 1);
    trn_water_dispose(&w);
    /* Point-symmetric bowls: the nearest wet samples tie across rows; the smaller index (the
     * lower row, bowl A at (16, 10)) wins. */
    trn_field diag;
    make_field(&diag, 64, 32, bowls_apart);
    b.center_x = 32.0;
    b.center_z = 16.0;
    CHECK_OK(trn_water_resolve(&diag, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 16, 10)] && !w.wet[at(&w, 48, 22)]);
    trn_field_dispose(&diag);
    trn_water_dispose(&w);
    /* One step right: bowl B is nearer. */
    b.center_x = 32.5;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(!w.wet[at(&w, 20, 16)] && w.wet[at(&w, 44, 16)] && w.wet[at(&w, 48, 16)]);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0));
    trn_water_dispose(&w);
    /* A centre far outside the grid still finds the nearest wet footprint sample. */
    b.center_x = 200.0;
    b.center_z = 16.0;
    b.radius = 160.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 48, 16)] && !w.wet[at(&w, 20, 16)]);
    trn_water_dispose(&w);
    /* Nothing below the level: an empty lake with zero statistics. */
    b.center_x = 16.0;
    b.level = 0.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 0);
    CHECK(w.bodies[0].area == 0.0 && w.bodies[0].volume == 0.0);
    CHECK(w.bodies[0].min_surface == 0.0 && w.bodies[0].max_surface == 0.0);
    for (size_t k = 0; k < (size_t)65 * 33; k++)
        if (w.owner[k] != -1) {
            CHECK(w.owner[k] == -1);
            break;
        }
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

static void test_lake_boundary_warning(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "cut");
    b.center_x = 13.0;
    b.center_z = 16.0;
    b.radius = 100.0;
    b.level = 5.0;
    const double rect[8] = {0, 0, 14, 0, 14, 32, 0, 32};
    set_boundary(&b, rect, 4);
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    uint64_t want = 0;
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 14; i++)
            if (hypot(i - 16, j - 16) < 5.0) want++;
    CHECK_EQ_INT(w.bodies[0].wet_samples, want);
    CHECK(w.wet[at(&w, 14, 16)] && !w.wet[at(&w, 15, 16)]); /* on the edge counts as inside */
    /* Leaks: (15, j) for |j - 16| <= 4, below the level beyond the edge. */
    CHECK_EQ_INT(w.bodies[0].warning_count, 9);
    CHECK(strcmp(w.bodies[0].warning,
                 "wet ground reaches the boundary below the level at (15, 12); its water is in "
                 "no closed basin inside the footprint (it runs off past the lake's radius or "
                 "boundary over (13, 16)): move the centre into a hollow, enlarge the footprint "
                 "or sculpt a bank") == 0);
    CHECK(w.bodies[0].warning_x == 15.0 && w.bodies[0].warning_z == 12.0);
    /* The cut-off sample is a shoreline corner (dry, 8-adjacent to wet). */
    CHECK(w.owner[at(&w, 15, 16)] == 0 && !w.wet[at(&w, 15, 16)]);
    trn_water_dispose(&w);

    /* A later ocean covering the far side joins the lake: no leak there. */
    trn_water_body two[2];
    CHECK_OK(trn_water_body_copy(&b, &two[0], NULL));
    trn_water_body_init(&two[1], TRN_WATER_OCEAN, "east");
    two[1].level = 5.0;
    const double east[8] = {15, 0, 64, 0, 64, 32, 15, 32};
    set_boundary(&two[1], east, 4);
    CHECK_OK(trn_water_resolve(&f, two, 2, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK(w.bodies[0].warning[0] == '\0');
    CHECK(w.owner[at(&w, 15, 16)] == 1 && w.wet[at(&w, 15, 16)]);
    trn_water_dispose(&w);
    trn_water_body_dispose(&two[0]);
    trn_water_body_dispose(&two[1]);

    /* Banks at the level: a boundary enclosing the whole bowl warns of nothing. */
    const double wide[8] = {0, 0, 30, 0, 30, 32, 0, 32};
    set_boundary(&b, wide, 4);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0));
    trn_water_dispose(&w);

    /* A diagonal boundary x + z <= 31 cuts exactly through samples; on it is inside. */
    const double tri[6] = {0, 0, 31, 0, 0, 31};
    set_boundary(&b, tri, 3);
    b.center_x = 14.0;
    b.center_z = 14.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    uint64_t diag = 0;
    for (int j = 0; j <= 32; j++)
        for (int i = 0; i <= 64; i++)
            if (i + j <= 31 && hypot(i - 16, j - 16) < 5.0) diag++;
    CHECK_EQ_INT(w.bodies[0].wet_samples, diag);
    CHECK(w.wet[at(&w, 15, 16)] && !w.wet[at(&w, 16, 16)]);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static void test_lake_carving(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "deep");
    b.center_x = 16.0;
    b.center_z = 16.0;
    b.radius = 100.0;
    b.level = 5.0;
    b.carve_depth = 2.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    /* Full depth four cells (Chebyshev) from the nearest uncovered sample, ramped before. */
    CHECK(f.heights[at(&w, 16, 16)] == -2.0f); /* 4 from (20, 19): full */
    CHECK(f.heights[at(&w, 20, 16)] == 3.5f);  /* 1 from (21, 16): a quarter */
    CHECK(f.heights[at(&w, 19, 16)] == 2.0f);  /* 2 from (21, 17): a half */
    CHECK(f.heights[at(&w, 16, 20)] == 3.5f);  /* 1 from (16, 21), below it */
    CHECK(f.heights[at(&w, 21, 16)] == 5.0f);  /* dry: untouched */
    CHECK(f.heights[at(&w, 48, 16)] == 0.0f);  /* the other bowl: untouched */
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0));
    CHECK(w.ground_hash == trn_water_ground_hash(&f)); /* the carved ground */
    CHECK(!w.bodies[0].carve);
    trn_water_dispose(&w);
    /* carve false keeps the ground. */
    trn_field g;
    make_field(&g, 64, 32, two_bowls);
    b.carve = false;
    CHECK_OK(trn_water_resolve(&g, &b, 1, NULL, &w, NULL));
    CHECK(g.heights[at(&w, 16, 16)] == 0.0f);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
    trn_field_dispose(&f);
}

/* ---- spill levels ---- */

/* Two bowls joined by a col 12 high on the row z = 16 between x = 26 and 38 (the ridge and
 * the edges elsewhere are 16 or more). */
static double bowls_col(double x, double z)
{
    const double t = two_bowls(x, z), col = 12.0 + fabs(z - 16.0);
    return x >= 26.0 && x <= 38.0 && col < t ? col : t;
}

/* A ramp rising along x with a pit 6 m deep within 3 of (10, 8). */
static double pitted_ramp(double x, double z)
{
    return hypot(x - 10.0, z - 8.0) < 3.0 ? x - 6.0 : x;
}

static double half_bowls(double x, double z)
{
    return 0.5 * two_bowls(x, z);
}

static void spill_lake(trn_water_body *b, const char *id, double cx, double cz)
{
    trn_water_body_init(b, TRN_WATER_LAKE, id);
    b->level_mode = TRN_LAKE_LEVEL_SPILL;
    b->center_x = cx;
    b->center_z = cz;
    b->radius = TRN_WATER_RADIUS_UNLIMITED;
}

static void test_lake_spill(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    spill_lake(&b, "pool", 16.0, 16.0);
    CHECK(b.spill_offset == 0.5 && isnan(b.spill_level));
    expect_valid(&b, __LINE__);
    trn_water w;
    /* Bowl A spills at 16 over the grid's edge, first at (16, 0) (the smallest index of the
     * samples 16 high): the lake stands at 15.5 and fills the disc below it, leak-free. */
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 16.0 && w.bodies[0].level == 15.5);
    CHECK(w.bodies[0].spill_outlet == TRN_SPILL_EDGE);
    CHECK(w.bodies[0].spill_x == 16.0 && w.bodies[0].spill_z == 0.0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(15.5));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK(w.bodies[0].level_mode == TRN_LAKE_LEVEL_SPILL);
    CHECK(!w.wet[at(&w, 48, 16)]); /* bowl B stays dry */
    /* Refreshed on other ground, a spill lake finds its level again (half as deep: 8). */
    trn_field half;
    make_field(&half, 64, 32, half_bowls);
    trn_water re;
    CHECK_OK(trn_water_refresh(&w, &half, NULL, &re, NULL));
    CHECK(re.bodies[0].spill_level == 8.0 && re.bodies[0].level == 7.5);
    CHECK_EQ_INT(re.bodies[0].wet_samples, disc_count(15.0));
    CHECK_EQ_INT(re.bodies[0].warning_count, 0);
    trn_water_dispose(&re);
    trn_field_dispose(&half);
    trn_water_dispose(&w);
    /* Offset 0: the level is the spill level itself; ground at it stays dry. */
    b.spill_offset = 0.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].level == 16.0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(16.0));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    trn_water_dispose(&w);
    /* A radius is a limit: the level drops until the water stays inside it (the lowest
     * sample past radius 10 is sqrt(101) high), never a cut. */
    b.spill_offset = 0.5;
    b.radius = 10.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_outlet == TRN_SPILL_LIMIT);
    CHECK(w.bodies[0].spill_level == (double)(float)sqrt(101.0));
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count((double)(float)sqrt(101.0) - 0.5));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    trn_water_dispose(&w);
    /* So is a boundary: x <= 20 holds the water below the lowest sample past it, (21, 16) at
     * 5; the water first stands at 5 at (16, 11), the smallest index 5 high. */
    b.radius = TRN_WATER_RADIUS_UNLIMITED;
    const double rect[8] = {0, 0, 20, 0, 20, 32, 0, 32};
    set_boundary(&b, rect, 4);
    b.spill_offset = 0.25;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 5.0 && w.bodies[0].level == 4.75);
    CHECK(w.bodies[0].spill_outlet == TRN_SPILL_LIMIT);
    CHECK(w.bodies[0].spill_x == 16.0 && w.bodies[0].spill_z == 11.0);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(4.75));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    trn_water_dispose(&w);
    /* A centre on the slope whose bottom lies past the boundary holds nothing. */
    const double narrow[8] = {0, 0, 14, 0, 14, 32, 0, 32};
    set_boundary(&b, narrow, 4);
    b.center_x = 13.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 3.0 && w.bodies[0].spill_outlet == TRN_SPILL_LIMIT);
    CHECK_EQ_INT(w.bodies[0].wet_samples, 0);
    CHECK_EQ_INT(w.bodies[0].warning_count, 1);
    CHECK_CONTAINS(w.bodies[0].warning, "runs off past the lake's radius or boundary at (13, 16)");
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);

    /* Deeper than the basin: an empty lake and a warning saying so. */
    spill_lake(&b, "pool", 16.0, 16.0);
    b.spill_offset = 20.0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 0);
    CHECK_EQ_INT(w.bodies[0].warning_count, 1);
    CHECK(strcmp(w.bodies[0].warning,
                 "level spill: the basin at the centre (16, 16) is 16.00 m deep (ground 0.00 m, "
                 "spilling at 16.00 m at (16, 0)), no deeper than the spill offset 20.00 m") == 0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);

    /* No basin at all on a ramp: the water runs off over the edge without rising. */
    make_field(&f, 32, 16, ramp_x);
    spill_lake(&b, "slope", 10.0, 8.0);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 0);
    CHECK_EQ_INT(w.bodies[0].warning_count, 1);
    CHECK(w.bodies[0].spill_level == 10.0 && w.bodies[0].spill_outlet == TRN_SPILL_EDGE);
    CHECK(w.bodies[0].warning_x == 10.0 && w.bodies[0].warning_z == 8.0);
    CHECK(strcmp(w.bodies[0].warning,
                 "level spill: the centre (10, 8), ground 10.00 m, is not in a closed basin: "
                 "water there runs off over the grid's edge at (10, 8) without rising; move the "
                 "centre into a hollow or give a fixed level") == 0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);

    /* A pit on the ramp: a centre above it still drains to the edge (the walk down enters the
     * pit and leaves it); a centre in it fills it to its rim at 7 m, first reached at (7, 6) (of
     * the rim samples 7 high beside the pit, the smallest index). */
    make_field(&f, 32, 16, pitted_ramp);
    spill_lake(&b, "above", 20.0, 8.0);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 20.0 && w.bodies[0].spill_outlet == TRN_SPILL_EDGE);
    CHECK(w.bodies[0].wet_samples == 0 && w.bodies[0].warning_count == 1);
    trn_water_dispose(&w);
    spill_lake(&b, "in", 10.0, 8.0);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 7.0 && w.bodies[0].level == 6.5);
    CHECK(w.bodies[0].spill_x == 7.0 && w.bodies[0].spill_z == 6.0);
    CHECK(w.bodies[0].spill_outlet == TRN_SPILL_EDGE);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(3.0));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);

    /* Water is an outlet: bowl A's col (12) leads into bowl B, where an ocean (level 5, east of
     * x = 40) takes what spills, whether the ocean comes before the lake or after it. */
    make_field(&f, 64, 32, bowls_col);
    trn_water_body two[2];
    trn_water_body_init(&two[0], TRN_WATER_OCEAN, "sea");
    two[0].level = 5.0;
    const double east[8] = {40, 0, 64, 0, 64, 32, 40, 32};
    set_boundary(&two[0], east, 4);
    spill_lake(&two[1], "pool", 16.0, 16.0);
    CHECK_OK(trn_water_resolve(&f, two, 2, NULL, &w, NULL));
    CHECK(w.bodies[1].spill_level == 12.0 && w.bodies[1].spill_outlet == TRN_SPILL_WATER);
    CHECK(w.bodies[1].level == 11.5 && w.bodies[1].warning_count == 0);
    CHECK_EQ_INT(w.bodies[1].wet_samples, disc_count(11.5));
    trn_water_dispose(&w);
    trn_water_body swapped[2] = {two[1], two[0]};
    CHECK_OK(trn_water_resolve(&f, swapped, 2, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 12.0 && w.bodies[0].spill_outlet == TRN_SPILL_WATER);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(11.5));
    trn_water_dispose(&w);
    /* Without the sea, bowl B fills too and both spill at the edge (16). */
    CHECK_OK(trn_water_resolve(&f, &two[1], 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == 16.0 && w.bodies[0].spill_outlet == TRN_SPILL_EDGE);
    CHECK(w.wet[at(&w, 48, 16)] && w.wet[at(&w, 32, 16)]);
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    trn_water_dispose(&w);
    /* Carving a spill lake lowers its basin below the level found first. */
    two[1].carve_depth = 2.0;
    CHECK_OK(trn_water_resolve(&f, &two[1], 1, NULL, &w, NULL));
    CHECK(f.heights[at(&w, 16, 16)] == -2.0f && w.bodies[0].warning_count == 0);
    trn_water_dispose(&w);
    trn_water_body_dispose(&two[0]);
    trn_water_body_dispose(&two[1]);

    /* Validation: the mode and the offset. */
    spill_lake(&b, "pool", 16.0, 16.0);
    b.spill_offset = -1.0;
    expect_invalid(&b, "spill_offset",
                   "water body 'pool': spill_offset: expected a finite "
                   "number >= 0, found -1",
                   __LINE__);
    b.spill_offset = 0.5;
    b.level_mode = (trn_lake_level)7;
    expect_invalid(&b, "level",
                   "water body 'pool': level: expected a number or spill, found "
                   "mode 7",
                   __LINE__);
    b.kind = TRN_WATER_OCEAN; /* only lakes read the mode */
    expect_valid(&b, __LINE__);
    CHECK(strcmp(trn_spill_outlet_name(TRN_SPILL_LIMIT), "limit") == 0);
    CHECK(strcmp(trn_spill_outlet_name(TRN_SPILL_EDGE), "edge") == 0);
    CHECK(strcmp(trn_spill_outlet_name(TRN_SPILL_WATER), "water") == 0);
    CHECK(strcmp(trn_spill_outlet_name(TRN_SPILL_NONE), "none") == 0);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

/* A fixed level that leaks says the level that would hold and suggests the spill level. */
static void test_lake_leak_fix(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "disc");
    b.center_x = 16.0;
    b.center_z = 16.0;
    b.radius = 3.0;
    b.level = 5.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.bodies[0].spill_level == (double)(float)sqrt(10.0));
    CHECK(w.bodies[0].spill_outlet == TRN_SPILL_LIMIT);
    trn_water_dispose(&w);
    /* At the level it names, the same lake no longer leaks. */
    b.level = 3.16;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK(isnan(w.bodies[0].spill_level)); /* not computed without a leak */
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

/* ---- oceans ---- */

static void test_ocean(void)
{
    trn_field f;
    make_field(&f, 32, 16, ramp_x);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_OCEAN, "sea");
    b.level = 10.5;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 11 * 17);
    CHECK(w.wet[at(&w, 10, 0)] && !w.wet[at(&w, 11, 0)] && w.owner[at(&w, 11, 0)] == 0);
    CHECK(w.owner[at(&w, 12, 0)] == -1);
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    double vol = 0.0;
    for (int i = 0; i <= 10; i++)
        vol += 17.0 * (10.5 - i);
    CHECK(w.bodies[0].volume == vol);
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 5.0, 0.0, 16.0, &s));
    CHECK(!trn_water_query(&w, &f, 5.0, 0.0, 16.001, &s));
    CHECK(!trn_water_query(&w, &f, 5.0, 0.0, -0.001, &s));
    CHECK(!trn_water_query(&w, &f, 32.001, 0.0, 1.0, &s));
    trn_water_dispose(&w);
    /* A sea rising to the right: between the corner column (h = 22 = level) and the sea, the
     * column at x = 10 has ground at the surface: dry, not a zero-depth column. */
    trn_field down;
    make_field(&down, 32, 16, ramp_down);
    b.level = 22.0;
    CHECK_OK(trn_water_resolve(&down, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 11, 3)] && !w.wet[at(&w, 10, 3)] && w.owner[at(&w, 10, 3)] == 0);
    CHECK(!trn_water_query(&w, &down, 10.0, 0.0, 3.5, &s));
    CHECK(trn_water_query(&w, &down, 10.25, 0.0, 3.5, &s) && s.depth == 0.25);
    trn_water_dispose(&w);
    trn_field_dispose(&down);
    /* A level no float holds: queries give it exactly (the stored surface is a float). */
    b.level = 10.3;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(trn_water_query(&w, &f, 5.0, 0.0, 3.0, &s) && s.surface[1] == 10.3 &&
          s.depth == 10.3 - 5.0);
    CHECK(w.surface[at(&w, 5, 3)] == 10.3f && w.bodies[0].min_surface == 10.3);
    trn_water_dispose(&w);
    b.level = 10.5;

    /* A boundary cutting the sea at x = 5 (on the edge is inside) leaks at x = 6. */
    const double rect[8] = {-1, -1, 5, -1, 5, 20, -1, 20};
    set_boundary(&b, rect, 4);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 6 * 17);
    CHECK_EQ_INT(w.bodies[0].warning_count, 17);
    CHECK(strcmp(w.bodies[0].warning,
                 "wet ground reaches the boundary below the level at (6, 0)") == 0);
    trn_water_dispose(&w);

    /* Ocean carving on a plane: the wet band's shore is column 11. */
    b.carve_depth = 4.0;
    free(b.boundary);
    b.boundary = NULL;
    b.boundary_count = 0;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(f.heights[at(&w, 10, 5)] == 9.0f); /* 1 from column 11 */
    CHECK(f.heights[at(&w, 7, 5)] == 3.0f);  /* 4 from it: full depth */
    CHECK(f.heights[at(&w, 0, 0)] == -4.0f);
    CHECK(f.heights[at(&w, 11, 5)] == 11.0f);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

/* ---- rivers ---- */

static void test_river_follow_bed(void)
{
    trn_field f;
    make_field(&f, 64, 32, ramp_eighth); /* 10 + x / 8 */
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "river");
    const double ctl[6] = {0, 6, 16, 64, 14, 16}; /* bed 6 + x / 8 */
    set_controls(&b, ctl, 2);
    b.surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b.river_depth = 2.0;
    b.width = 8.0;
    b.look.flow_speed = 2.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    /* U-channel: bed + depth (d / 4)^2, d = |z - 16|; edge (d = 4) at the surface. Banks
     * beyond, as wide as half the channel: a straight slope from the surface a cell's diagonal
     * up the path (where the bed is higher) to the ground at d = 8. */
    int bad = 0;
    for (uint32_t i = 0; i <= 64; i++)
        for (int dj = -9; dj <= 9; dj++) {
            const float h = f.heights[at(&w, i, (uint32_t)(16 + dj))];
            const double ground = 10.0 + i / 8.0;
            if (abs(dj) <= 4) {
                if (h != (float)(6.0 + i / 8.0 + 2.0 * dj * dj / 16.0)) bad++;
            } else if (abs(dj) < 8) {
                const double foot = 8.0 + fmin(i + sqrt(2.0), 64.0) / 8.0;
                if (fabs(h - (foot + (ground - foot) * (abs(dj) - 4) / 4.0)) > 1e-5) bad++;
            } else if (h != (float)ground) {
                bad++;
            }
        }
    CHECK_EQ_INT(bad, 0);
    /* Wet where the carved ground is below the surface: |dz| <= 3; |dz| = 4 meets it. */
    CHECK_EQ_INT(w.bodies[0].wet_samples, 65 * 7);
    CHECK(w.wet[at(&w, 30, 19)] && !w.wet[at(&w, 30, 20)] && w.owner[at(&w, 30, 20)] == 0);
    CHECK(w.surface[at(&w, 30, 16)] == (float)(8.0 + 30 / 8.0));
    CHECK(w.surface[at(&w, 30, 20)] == (float)(8.0 + 30 / 8.0)); /* corner: its own point */
    CHECK(w.owner[at(&w, 30, 21)] == -1);
    CHECK(w.bodies[0].min_surface == 8.0 && w.bodies[0].max_surface == 16.0);
    CHECK_EQ_INT(w.bodies[0].warning_count, 0);
    CHECK(b.path == NULL);              /* the input is untouched */
    CHECK(w.bodies[0].path_count == 2); /* the copy got its path */

    /* Query in the channel: cell (20, 16), u .25, v .5 (upper triangle). Surface 8 + x / 8;
     * ground 8.5 + .5 * (8.625 - 8.5) + .25 * (8.75 - 8.625) = 8.59375. */
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 20.25, 9.0, 16.5, &s));
    CHECK(s.body == 0 && strcmp(s.body_id, "river") == 0 && s.kind == TRN_WATER_RIVER);
    CHECK(s.surface[0] == 20.25 && s.surface[1] == 10.53125 && s.surface[2] == 16.5);
    CHECK(s.depth == 10.53125 - 8.59375);
    const double nl = sqrt(1.0 + 1.0 / 64.0);
    CHECK_NEAR(s.normal[0], -0.125 / nl, 1e-15);
    CHECK_NEAR(s.normal[1], 1.0 / nl, 1e-15);
    CHECK(s.normal[2] == 0.0);
    CHECK(s.column_up[0] == 0.0 && s.column_up[1] == 1.0 && s.column_up[2] == 0.0);
    /* Follow-bed flow: along +x up the surface's slope (1 / 8), at the prescribed speed. */
    CHECK_NEAR(s.flow_velocity[0], 2.0 / nl, 1e-15);
    CHECK_NEAR(s.flow_velocity[1], 0.25 / nl, 1e-15);
    CHECK(s.flow_velocity[2] == 0.0);
    CHECK_NEAR(hypot(hypot(s.flow_velocity[0], s.flow_velocity[1]), s.flow_velocity[2]), 2.0,
               1e-15);
    CHECK(s.underwater);
    /* Underwater edges: at the bed yes, at the surface no. */
    CHECK(trn_water_query(&w, &f, 20.25, 8.59375, 16.5, &s) && s.underwater);
    CHECK(trn_water_query(&w, &f, 20.25, nextafter(8.59375, 0.0), 16.5, &s) && !s.underwater);
    CHECK(trn_water_query(&w, &f, 20.25, 10.53125, 16.5, &s) && !s.underwater);
    CHECK(trn_water_query(&w, &f, 20.25, nextafter(10.53125, 0.0), 16.5, &s) && s.underwater);
    trn_water_dispose(&w);

    /* Refresh on raised ground: the same bodies, no carving, less water. */
    trn_field g;
    make_field(&g, 64, 32, ramp_eighth);
    for (size_t k = 0; k < (size_t)65 * 33; k++)
        g.heights[k] = f.heights[k];
    trn_water r1;
    b.carve = false;
    CHECK_OK(trn_water_resolve(&g, &b, 1, NULL, &w, NULL));
    for (uint32_t i = 0; i <= 32; i++)
        g.heights[at(&w, i, 16)] = 50.0f;
    const float before = g.heights[at(&w, 40, 16)];
    CHECK_OK(trn_water_refresh(&w, &g, NULL, &r1, NULL));
    CHECK(g.heights[at(&w, 40, 16)] == before);
    CHECK_EQ_INT(r1.body_count, 1);
    CHECK(strcmp(r1.bodies[0].id, "river") == 0 && !r1.bodies[0].carve);
    CHECK(r1.bodies[0].path_count == 2);
    CHECK_EQ_INT(r1.bodies[0].wet_samples, 65 * 7 - 33);
    CHECK(!r1.wet[at(&r1, 10, 16)] && r1.wet[at(&r1, 40, 16)]);
    CHECK(r1.ground_hash == trn_water_ground_hash(&g) && r1.ground_hash != w.ground_hash);
    /* Refresh never carves, even a body still marked to carve. */
    trn_water_dispose(&r1);
    w.bodies[0].carve = true;
    const uint64_t g_hash = trn_water_ground_hash(&g);
    CHECK_OK(trn_water_refresh(&w, &g, NULL, &r1, NULL));
    CHECK(trn_water_ground_hash(&g) == g_hash && !r1.bodies[0].carve);
    /* Refreshing in place. */
    CHECK_OK(trn_water_refresh(&w, &g, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, 65 * 7 - 33);
    trn_field other;
    make_field(&other, 32, 32, flat10);
    trn_error err;
    CHECK_STATUS(trn_water_refresh(&w, &other, NULL, &r1 /* untouched */, &err), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(err.message, "64 x 32 cells");
    CHECK(r1.owner != NULL); /* still the earlier result */
    /* A query on a mismatched grid has no sample. */
    CHECK(!trn_water_query(&w, &other, 20.0, 0.0, 16.0, &s) && s.body == -1);
    trn_field_dispose(&other);
    trn_water_dispose(&r1);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static double ramp_z(double x, double z)
{
    (void)x;
    return 10.0 + z / 8.0;
}

static void test_river_follow_bed_z(void)
{
    /* The same channel along +z: the flow climbs the surface's z slope. */
    trn_field f;
    make_field(&f, 32, 64, ramp_z);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "river");
    const double ctl[6] = {16, 6, 0, 16, 14, 64};
    set_controls(&b, ctl, 2);
    b.surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b.river_depth = 2.0;
    b.look.flow_speed = 2.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 16.5, 9.0, 20.25, &s));
    const double nl = sqrt(1.0 + 1.0 / 64.0);
    CHECK(s.surface[1] == 8.0 + 20.25 / 8.0);
    CHECK(s.normal[0] == 0.0);
    CHECK_NEAR(s.normal[2], -0.125 / nl, 1e-15);
    CHECK(s.flow_velocity[0] == 0.0);
    CHECK_NEAR(s.flow_velocity[1], 0.25 / nl, 1e-15);
    CHECK_NEAR(s.flow_velocity[2], 2.0 / nl, 1e-15);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static void test_river_level(void)
{
    trn_field f;
    make_field(&f, 64, 32, ramp_eighth);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "river");
    const double ctl[6] = {0, 6, 16, 64, 14, 16};
    set_controls(&b, ctl, 2);
    b.level = 12.0;
    b.look.flow_speed = 3.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    /* Below the level the channel rises from the bed to 12 at d = 4 (lowering only: the ground
     * under 12 near x = 0 keeps its banks); where the bed is above the level (x > 48) it is cut
     * flat at the bed. The banks (out to d = 8) rise from the level, or from the bed a cell's
     * diagonal up the path where that is higher, to the ground. */
    int bad = 0;
    for (uint32_t i = 0; i <= 64; i++)
        for (int dj = -9; dj <= 9; dj++) {
            const double bed = 6.0 + i / 8.0, ground = 10.0 + i / 8.0;
            const float h = f.heights[at(&w, i, (uint32_t)(16 + dj))];
            if (abs(dj) <= 4) {
                const double want = bed < 12.0 ? bed + (12.0 - bed) * dj * dj / 16.0 : bed;
                if (h != (float)fmin(want, ground)) bad++;
            } else if (abs(dj) < 8) {
                const double foot = fmax(12.0, 6.0 + fmin(i + sqrt(2.0), 64.0) / 8.0);
                const double want = foot + (ground - foot) * (abs(dj) - 4) / 4.0;
                if (fabs(h - fmin(want, ground)) > 1e-5) bad++;
            } else if (h != (float)ground) {
                bad++;
            }
        }
    CHECK_EQ_INT(bad, 0);
    CHECK(w.wet[at(&w, 47, 16)] && !w.wet[at(&w, 48, 16)]);
    CHECK(w.surface[at(&w, 10, 16)] == 12.0f);
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 10.5, 0.0, 16.25, &s));
    CHECK(s.surface[1] == 12.0 && s.normal[1] == 1.0 && s.normal[0] == 0.0);
    CHECK(s.flow_velocity[0] == 3.0 && s.flow_velocity[1] == 0.0 && s.flow_velocity[2] == 0.0);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static void test_river_bank_warning(void)
{
    trn_field f;
    make_field(&f, 64, 32, flat10);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "leaky");
    const double ctl[6] = {8, 0, 16, 56, 0, 16};
    set_controls(&b, ctl, 2);
    b.level = 12.0;
    b.carve = false;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    /* Wet within 4 of the segment; the sides at |dz| = 5 are dry and below 12. The end caps
     * (nearest point an end) are open: x = 8 and x = 56 do not count. */
    CHECK_EQ_INT(w.bodies[0].warning_count, 2 * 47);
    CHECK(strcmp(w.bodies[0].warning,
                 "the river's surface reaches a dry side below it at (9, 11)") == 0);
    CHECK(w.bodies[0].warning_x == 9.0 && w.bodies[0].warning_z == 11.0);
    CHECK(w.wet[at(&w, 4, 16)] && !w.wet[at(&w, 3, 16)]); /* the round end cap */
    CHECK(w.wet[at(&w, 8, 12)] && !w.wet[at(&w, 8, 11)]);
    trn_water_dispose(&w);

    /* The same channel from five collinear controls: samples seen from two segments count once. */
    const double ctl5[15] = {8, 0, 16, 20, 0, 16, 32, 0, 16, 44, 0, 16, 56, 0, 16};
    set_controls(&b, ctl5, 5);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].warning_count, 2 * 47);
    CHECK(strcmp(w.bodies[0].warning,
                 "the river's surface reaches a dry side below it at (9, 11)") == 0);
    trn_water_dispose(&w);
    set_controls(&b, ctl, 2);

    /* Banks exactly at the surface hold: raise |dz| = 5 to 12 for x < 20. */
    for (size_t i = 0; i < 20; i++) {
        f.heights[11 * 65 + i] = 12.0f;
        f.heights[21 * 65 + i] = 12.0f;
    }
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].warning_count, 2 * 36);
    CHECK(strcmp(w.bodies[0].warning,
                 "the river's surface reaches a dry side below it at (20, 11)") == 0);
    trn_water_dispose(&w);
    for (size_t i = 0; i < 20; i++) {
        f.heights[11 * 65 + i] = 10.0f;
        f.heights[21 * 65 + i] = 10.0f;
    }

    /* A lake joining the side: its wet samples are not a leak. */
    trn_water_body two[2];
    trn_water_body_init(&two[0], TRN_WATER_OCEAN, "sea");
    two[0].level = 11.0;
    const double north[8] = {0, 0, 64, 0, 64, 11, 0, 11};
    set_boundary(&two[0], north, 4);
    CHECK_OK(trn_water_body_copy(&b, &two[1], NULL));
    CHECK_OK(trn_water_resolve(&f, two, 2, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[1].warning_count, 47);
    CHECK(strcmp(w.bodies[1].warning,
                 "the river's surface reaches a dry side below it at (9, 21)") == 0);
    trn_water_dispose(&w);
    trn_water_body_dispose(&two[0]);
    trn_water_body_dispose(&two[1]);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static void test_river_segments(void)
{
    trn_field f;
    make_field(&f, 64, 64, flat10);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "bend");
    /* Along +x then +z: a zero-length segment in the middle is skipped. */
    const double ctl[12] = {4, 0, 10, 30, 0, 10, 30, 0, 10, 30, 0, 50};
    set_controls(&b, ctl, 4);
    b.level = 11.0;
    b.width = 4.0;
    b.carve = false;
    b.look.flow_speed = 1.5;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 10, 10)] && w.segment[at(&w, 10, 10)] == 0);
    CHECK(w.wet[at(&w, 30, 40)] && w.segment[at(&w, 30, 40)] == 2);
    /* (31, 9) is as near segment 0's end as segment 2's start: the earlier wins. */
    CHECK(w.segment[at(&w, 31, 9)] == 0);
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 10.0, 10.0, 10.0, &s));
    CHECK(s.flow_velocity[0] == 1.5 && s.flow_velocity[2] == 0.0);
    trn_water_dispose(&w);
    /* A repeated first control: behind the start the nearest real segment still gives the
     * direction (the zero-length one has none). */
    const double rep_ctl[9] = {8, 0, 10, 8, 0, 10, 30, 0, 10};
    set_controls(&b, rep_ctl, 3);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.segment[at(&w, 7, 10)] == 1);
    CHECK(trn_water_query(&w, &f, 7.0, 10.0, 10.0, &s));
    CHECK(s.flow_velocity[0] == 1.5 && s.flow_velocity[2] == 0.0);
    trn_water_dispose(&w);
    set_controls(&b, ctl, 4);
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(trn_water_query(&w, &f, 30.0, 10.0, 40.0, &s));
    CHECK(s.flow_velocity[0] == 0.0 && s.flow_velocity[2] == 1.5);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

static double slope_down(double x, double z)
{
    (void)z;
    return 10.0 - x / 16.0;
}

static void test_river_meets_ocean(void)
{
    /* A follow-bed river running into an earlier ocean: the ocean keeps x >= 40. */
    trn_field f;
    make_field(&f, 64, 32, slope_down);
    trn_water_body b[2];
    trn_water_body_init(&b[0], TRN_WATER_OCEAN, "sea");
    b[0].level = 9.0;
    const double east[8] = {40, 0, 64, 0, 64, 32, 40, 32};
    set_boundary(&b[0], east, 4);
    trn_water_body_init(&b[1], TRN_WATER_RIVER, "in");
    const double ctl[6] = {0, 8, 16, 64, 4, 16}; /* bed 8 - x / 16, surface bed + 3 */
    set_controls(&b[1], ctl, 2);
    b[1].surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b[1].river_depth = 3.0;
    b[1].carve = false;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, b, 2, NULL, &w, NULL));
    CHECK(w.owner[at(&w, 39, 16)] == 1 && w.owner[at(&w, 40, 16)] == 0);
    /* (39, 21) is dry beside both: the earlier body, the ocean, takes the corner. */
    CHECK(!w.wet[at(&w, 39, 21)] && w.owner[at(&w, 39, 21)] == 0);
    CHECK(w.surface[at(&w, 39, 21)] == 9.0f);
    CHECK(!w.wet[at(&w, 38, 21)] && w.owner[at(&w, 38, 21)] == 1);
    CHECK(w.surface[at(&w, 38, 21)] == (float)(11.0 - 38.0 / 16.0));
    /* Cell (39, 16), lower triangle: the river's corner (39, 16) chooses; the ocean's corners
     * take its surface (11 - 39 / 16), so the surface there is flat at that value. */
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 39.5, 0.0, 16.25, &s));
    CHECK(s.body == 1 && s.surface[1] == 11.0 - 39.0 / 16.0);
    CHECK(s.normal[0] == 0.0 && s.normal[1] == 1.0);
    /* Upstream the river's own corners slope: 11 - x / 16. */
    CHECK(trn_water_query(&w, &f, 30.5, 0.0, 16.25, &s));
    CHECK(s.surface[1] == 11.0 - 30.5 / 16.0 && s.normal[0] > 0.0);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b[0]);
    trn_water_body_dispose(&b[1]);
    trn_field_dispose(&f);
}

static void test_river_point(void)
{
    /* All controls at one point: a disc of radius width / 2 with no direction to flow. */
    trn_field f;
    make_field(&f, 16, 16, flat10);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_RIVER, "spring");
    const double ctl[9] = {8, 0, 8, 8, 0, 8, 8, 0, 8};
    set_controls(&b, ctl, 3);
    b.interpolation = TRN_RIVER_CATMULL_ROM;
    b.level = 11.0;
    b.width = 4.0;
    b.carve = false;
    b.look.flow_speed = 1.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(2.0) + 4); /* distance <= 2 */
    CHECK(w.wet[at(&w, 10, 8)] && !w.wet[at(&w, 11, 8)]);
    CHECK_EQ_INT(w.bodies[0].warning_count, 0); /* every side is an open end */
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 8.0, 10.0, 8.0, &s));
    CHECK(s.flow_velocity[0] == 0.0 && s.flow_velocity[1] == 0.0 && s.flow_velocity[2] == 0.0);
    trn_water_dispose(&w);
    trn_water_body_dispose(&b);
    trn_field_dispose(&f);
}

/* ---- several bodies ---- */

static void test_overlap_and_errors(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b[2];
    trn_water_body_init(&b[0], TRN_WATER_LAKE, "low");
    trn_water_body_init(&b[1], TRN_WATER_LAKE, "high");
    for (int k = 0; k < 2; k++) {
        b[k].center_x = 16.0;
        b[k].center_z = 16.0;
        b[k].radius = 100.0;
    }
    b[0].level = 3.0;
    b[1].level = 5.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, b, 2, NULL, &w, NULL));
    CHECK(w.owner[at(&w, 16, 16)] == 0 && w.surface[at(&w, 16, 16)] == 3.0f);
    CHECK(w.owner[at(&w, 19, 16)] == 1 && w.surface[at(&w, 19, 16)] == 5.0f);
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(3.0));
    CHECK_EQ_INT(w.bodies[1].wet_samples, disc_count(5.0) - disc_count(3.0));
    /* Every dry neighbour of the low lake is wet for the high one: no corners for it. */
    int low_corners = 0;
    for (size_t k = 0; k < (size_t)65 * 33; k++)
        if (w.owner[k] == 0 && !w.wet[k]) low_corners++;
    CHECK_EQ_INT(low_corners, 0);
    /* Queries pick the first wet corner's body and its level. */
    trn_water_sample s;
    CHECK(trn_water_query(&w, &f, 16.5, 0.0, 16.0, &s) && s.body == 0 && s.surface[1] == 3.0);
    CHECK(trn_water_query(&w, &f, 19.5, 0.0, 16.0, &s) && s.body == 1 && s.surface[1] == 5.0);
    trn_water_dispose(&w);

    /* The other order: the high lake takes everything. */
    trn_water_body swapped[2] = {b[1], b[0]};
    CHECK_OK(trn_water_resolve(&f, swapped, 2, NULL, &w, NULL));
    CHECK_EQ_INT(w.bodies[0].wet_samples, disc_count(5.0));
    CHECK_EQ_INT(w.bodies[1].wet_samples, 0);
    trn_water_dispose(&w);

    /* Errors: an invalid body names itself; duplicate ids; bad ground; no bodies. */
    trn_error err;
    b[1].radius = 0.0;
    CHECK_STATUS(trn_water_resolve(&f, b, 2, NULL, &w, &err), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(err.message, "water body 'high': radius");
    CHECK(w.owner == NULL && w.body_count == 0);
    b[1].radius = 100.0;
    strcpy(b[1].id, "low");
    CHECK_STATUS(trn_water_resolve(&f, b, 2, NULL, &w, &err), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(err.message,
                   "water body 'low': id: expected a unique id, found it again at body 1");
    CHECK_STATUS(trn_water_resolve(NULL, b, 1, NULL, &w, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_resolve(&f, NULL, 1, NULL, &w, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_resolve(&f, b, 1, NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_water_resolve(&f, NULL, 0, NULL, &w, NULL));
    CHECK(w.body_count == 0 && w.owner == NULL && w.wet == NULL && w.surface == NULL &&
          w.segment == NULL && w.cells_x == 64 && w.ground_hash == trn_water_ground_hash(&f));
    CHECK(!trn_water_query(&w, &f, 16.0, 0.0, 16.0, &s));
    trn_water c;
    CHECK_OK(trn_water_copy(&w, &c, NULL));
    CHECK(c.body_count == 0 && c.owner == NULL);
    trn_water_dispose(&c);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

/* ---- queries ---- */

static void test_query_lake(void)
{
    trn_field f;
    make_field(&f, 64, 32, two_bowls);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "lake");
    b.center_x = 16.0;
    b.center_z = 16.0;
    b.level = 5.0;
    b.look.flow_speed = 10.0;
    b.look.flow_direction[0] = 3.0;
    b.look.flow_direction[1] = 4.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    trn_water_sample s;
    /* Between wet (20, 16) at 4 and the corner (21, 16) at 5: ground 4.5, depth 0.5. */
    CHECK(trn_water_query(&w, &f, 20.5, 4.7, 16.0, &s));
    CHECK(s.body == 0 && s.kind == TRN_WATER_LAKE && s.surface[1] == 5.0);
    CHECK(s.depth == 0.5 && s.underwater);
    CHECK(s.normal[0] == 0.0 && s.normal[1] == 1.0 && s.normal[2] == 0.0);
    CHECK(s.flow_velocity[0] == 6.0 && s.flow_velocity[1] == 0.0 && s.flow_velocity[2] == 8.0);
    CHECK(trn_water_query(&w, &f, 20.5, 4.5, 16.0, &s) && s.underwater);
    CHECK(trn_water_query(&w, &f, 20.5, 4.4999, 16.0, &s) && !s.underwater);
    CHECK(trn_water_query(&w, &f, 20.5, 5.0, 16.0, &s) && !s.underwater);
    /* On the corner itself the ground meets the surface: dry. */
    CHECK(!trn_water_query(&w, &f, 21.0, 4.0, 16.0, &s) && s.body == -1);
    /* Points outside the grid, far from water, NaN. */
    CHECK(!trn_water_query(&w, &f, -0.001, 0.0, 16.0, &s));
    CHECK(!trn_water_query(&w, &f, 64.001, 0.0, 16.0, &s));
    CHECK(!trn_water_query(&w, &f, 16.0, 0.0, NAN, &s));
    CHECK(!trn_water_query(&w, &f, 40.0, 0.0, 16.0, &s));
    CHECK(trn_water_query(&w, &f, 16.0, 0.0, 16.0, NULL)); /* out may be NULL */
    CHECK(!trn_water_query(NULL, &f, 16.0, 0.0, 16.0, &s));
    CHECK(!trn_water_query(&w, NULL, 16.0, 0.0, 16.0, &s));
    /* Depth agrees with the triangle heights everywhere on a line through the lake. */
    int bad = 0;
    for (double x = 10.0; x <= 22.0; x += 0.125) {
        const double g = trn_field_height_at(&f, x, 16.3);
        const bool wet = trn_water_query(&w, &f, x, 0.0, 16.3, &s);
        if (wet != (g < 5.0) || (wet && s.depth != 5.0 - g)) bad++;
    }
    CHECK_EQ_INT(bad, 0);
    /* Still water has no flow. */
    w.bodies[0].look.flow_speed = 0.0;
    CHECK(trn_water_query(&w, &f, 16.0, 0.0, 16.0, &s));
    CHECK(s.flow_velocity[0] == 0.0 && s.flow_velocity[2] == 0.0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

static void test_query_triangle_choice(void)
{
    /* A 1 x 1 grid of two cells: the lake owns corner (1, 0) only. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 1, 1, 2.0, 2.0, NULL));
    const float h[4] = {3, 0, 3, 3};
    memcpy(f.heights, h, sizeof h);
    trn_water_body b;
    trn_water_body_init(&b, TRN_WATER_LAKE, "corner");
    b.center_x = 2.0;
    b.center_z = 0.0;
    b.level = 1.0;
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, &b, 1, NULL, &w, NULL));
    CHECK(w.wet[1] && !w.wet[0] && w.owner[0] == 0 && w.owner[2] == 0 && w.owner[3] == 0);
    trn_water_sample s;
    /* Lower triangle (u >= v) holds corner (1, 0): ground at (1.9, 0.1) is
     * 3 + .95 * (0 - 3) + .05 * (3 - 0) = 0.3. */
    CHECK(trn_water_query(&w, &f, 1.9, 0.0, 0.1, &s));
    CHECK_NEAR(s.depth, 0.7, 1e-12);
    /* The upper triangle has no wet corner: dry although its ground dips near the diagonal. */
    CHECK(!trn_water_query(&w, &f, 1.0, 0.0, 1.01, &s));
    CHECK(trn_water_query(&w, &f, 1.01, 0.0, 1.0, &s) ==
          (trn_field_height_at(&f, 1.01, 1.0) < 1.0));
    trn_water_dispose(&w);

    /* Two lakes on the off-diagonal corners: a point on the diagonal belongs to the (i + 1, j)
     * triangle, so lake A (level 1) decides and the ground there (1.75) is above it. */
    const float h2[4] = {3, 0, 0, 0.5f};
    memcpy(f.heights, h2, sizeof h2);
    trn_water_body two[2];
    trn_water_body_init(&two[0], TRN_WATER_LAKE, "A");
    two[0].center_x = 2.0;
    two[0].radius = 1.0;
    two[0].level = 1.0;
    trn_water_body_init(&two[1], TRN_WATER_LAKE, "B");
    two[1].center_z = 2.0;
    two[1].radius = 1.0;
    two[1].level = 2.0;
    CHECK_OK(trn_water_resolve(&f, two, 2, NULL, &w, NULL));
    CHECK(w.owner[1] == 0 && w.owner[2] == 1 && w.wet[1] && w.wet[2] && !w.wet[3]);
    CHECK(!trn_water_query(&w, &f, 1.0, 0.0, 1.0, &s));
    CHECK(trn_water_query(&w, &f, 0.9, 0.0, 1.1, &s) && s.body == 1 && s.surface[1] == 2.0);
    CHECK(trn_water_query(&w, &f, 1.8, 0.0, 0.2, &s) && s.body == 0 && s.surface[1] == 1.0);
    trn_water_dispose(&w);
    trn_field_dispose(&f);
}

/* ---- determinism ---- */

static uint64_t water_hash(const trn_water *w, const trn_field *f)
{
    const size_t n = ((size_t)w->cells_x + 1) * ((size_t)w->cells_z + 1);
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, w->owner, n * sizeof *w->owner);
    XXH64_update(st, w->wet, n);
    XXH64_update(st, w->surface, n * sizeof *w->surface);
    XXH64_update(st, w->segment, n * sizeof *w->segment);
    XXH64_update(st, f->heights, n * sizeof(float));
    for (uint32_t b = 0; b < w->body_count; b++) {
        const trn_water_body *body = &w->bodies[b];
        XXH64_update(st, &body->wet_samples, sizeof body->wet_samples);
        XXH64_update(st, &body->volume, sizeof body->volume);
        XXH64_update(st, &body->min_surface, sizeof body->min_surface);
        XXH64_update(st, &body->max_surface, sizeof body->max_surface);
        XXH64_update(st, &body->warning_count, sizeof body->warning_count);
        XXH64_update(st, &body->level, sizeof body->level);
        XXH64_update(st, &body->spill_level, sizeof body->spill_level);
        XXH64_update(st, body->warning, strlen(body->warning));
    }
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

/* A grid and bodies big enough (over 2^20 samples per loop) for the parallel paths: the
 * unbounded ocean, the big bounded lake, the wide river and the whole-grid passes. */
static void test_threads(void)
{
    trn_water_body b[5];
    trn_water_body_init(&b[0], TRN_WATER_LAKE, "a");
    b[0].center_x = 400.0;
    b[0].center_z = 360.0;
    b[0].radius = 700.0;
    b[0].level = 2.0;
    b[0].carve_depth = 1.5;
    const double star[12] = {0, 0, 1024, 160, 480, 400, 1024, 1040, 240, 600, 0, 1040};
    set_boundary(&b[0], star, 6);
    trn_water_body_init(&b[1], TRN_WATER_RIVER, "r");
    const double ctl[15] = {20, -3, 20, 240, -2, 560, 480, 0, 240, 760, 1, 680, 1000, 2, 1000};
    set_controls(&b[1], ctl, 5);
    b[1].interpolation = TRN_RIVER_CATMULL_ROM;
    b[1].curve_steps = 32;
    b[1].surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    b[1].river_depth = 3.0;
    b[1].width = 60.0;
    trn_water_body_init(&b[2], TRN_WATER_OCEAN, "o");
    b[2].level = -1.0;
    trn_water_body_init(&b[3], TRN_WATER_RIVER, "flat");
    const double ctl2[6] = {40, 0, 920, 960, 0, 80};
    set_controls(&b[3], ctl2, 2);
    b[3].level = 3.0;
    b[3].width = 20.0;
    trn_water_body_init(&b[4], TRN_WATER_LAKE, "b");
    b[4].center_x = 800.0;
    b[4].center_z = 240.0;
    b[4].radius = 200.0;
    b[4].level = 6.0;
    /* A spill lake on the noise, after the others (their water is its outlet too). */
    trn_water_body *all = calloc(6, sizeof *all);
    memcpy(all, b, sizeof b);
    spill_lake(&all[5], "s", 740.0, 924.0);
    uint64_t hashes[3];
    const int threads[3] = {1, 2, 4};
    for (int t = 0; t < 3; t++) {
        trn_field f;
        CHECK_OK(trn_field_init(&f, 1024, 1040, 1024.0, 1040.0, NULL));
        for (uint32_t j = 0; j <= 1040; j++)
            for (uint32_t i = 0; i <= 1024; i++)
                f.heights[(size_t)j * 1025 + i] = (float)noisy(i, j);
        trn_water_resolve_options o = {threads[t]};
        trn_water w;
        CHECK_OK(trn_water_resolve(&f, all, 6, &o, &w, NULL));
        hashes[t] = water_hash(&w, &f);
        if (t == 0) {
            /* Something of every kind happened, leaks included. */
            uint32_t warnings = 0;
            for (int k = 0; k < 5; k++) {
                CHECK(w.bodies[k].wet_samples > 0);
                warnings += w.bodies[k].warning_count;
            }
            CHECK(warnings > 0);
            CHECK(w.bodies[5].wet_samples > 100 && w.bodies[5].warning_count == 0);
            CHECK(isfinite(w.bodies[5].spill_level));
        }
        trn_water_dispose(&w);
        trn_field_dispose(&f);
    }
    CHECK(hashes[0] == hashes[1] && hashes[0] == hashes[2]);
    for (int k = 0; k < 5; k++)
        trn_water_body_dispose(&b[k]);
    trn_water_body_dispose(&all[5]);
    free(all);
}

/* Two basins split by a wall two samples thick along i + j = 16..17: the wall sample (8, 8)
 * touches basin A's water (up-left) and basin B's (down-right, the last neighbour a scan
 * meets), so its shoreline corner must go to the first body, A. */
static double split_basins(double x, double z)
{
    const double s = x + z;
    return s >= 16.0 && s <= 17.0 ? 10.0 : 0.0;
}

static void test_corner_first_body(void)
{
    trn_field f;
    make_field(&f, 16, 16, split_basins);
    trn_water_body b[2];
    trn_water_body_init(&b[0], TRN_WATER_LAKE, "a");
    trn_water_body_init(&b[1], TRN_WATER_LAKE, "b");
    b[0].center_x = b[0].center_z = 4.0;
    b[1].center_x = b[1].center_z = 12.0;
    for (int k = 0; k < 2; k++) {
        b[k].radius = 100.0;
        b[k].level = 5.0;
    }
    trn_water w;
    CHECK_OK(trn_water_resolve(&f, b, 2, NULL, &w, NULL));
    CHECK(w.wet[at(&w, 7, 7)] && w.owner[at(&w, 7, 7)] == 0);
    CHECK(w.wet[at(&w, 9, 9)] && w.owner[at(&w, 9, 9)] == 1);
    CHECK(!w.wet[at(&w, 8, 8)] && w.owner[at(&w, 8, 8)] == 0);
    /* Swapped order: the first body is now B. */
    trn_water_dispose(&w);
    trn_water_body swapped[2] = {b[1], b[0]};
    CHECK_OK(trn_water_resolve(&f, swapped, 2, NULL, &w, NULL));
    CHECK(!w.wet[at(&w, 8, 8)] && w.owner[at(&w, 8, 8)] == 0);
    CHECK(strcmp(w.bodies[0].id, "b") == 0);
    trn_water_dispose(&w);
    for (int k = 0; k < 2; k++)
        trn_water_body_dispose(&b[k]);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_kinds_and_defaults);
    RUN(test_corner_first_body);
    RUN(test_validate_common);
    RUN(test_orient);
    RUN(test_validate_boundary);
    RUN(test_validate_river);
    RUN(test_sample_path);
    RUN(test_triangle_heights);
    RUN(test_lake_fills_one_bowl);
    RUN(test_lake_dry_centre);
    RUN(test_lake_boundary_warning);
    RUN(test_lake_carving);
    RUN(test_lake_spill);
    RUN(test_lake_leak_fix);
    RUN(test_ocean);
    RUN(test_river_follow_bed);
    RUN(test_river_follow_bed_z);
    RUN(test_river_level);
    RUN(test_river_bank_warning);
    RUN(test_river_segments);
    RUN(test_river_meets_ocean);
    RUN(test_river_point);
    RUN(test_overlap_and_errors);
    RUN(test_query_lake);
    RUN(test_query_triangle_choice);
    RUN(test_threads);
    return trn_test_finish();
}
