/* Tests for water surface meshes: ownership, shore clipping at the contour, shared vertices,
 * winding, normals and areas, exact on analytic fields. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/water_mesh.h"
#include "test.h"
#include "water_helpers.h"

static double flat_low(double x, double z)
{
    (void)x;
    (void)z;
    return -0.5;
}

/* Up-facing winding, V - E + F of the triangle set and its edges used once (the border). */
static void check_topology(const trn_water_mesh *m, long *euler, long *border)
{
    size_t n = (size_t)m->triangle_count * 3;
    uint64_t *edges = malloc((n ? n : 1) * sizeof *edges);
    for (uint32_t t = 0; t < m->triangle_count; t++) {
        const uint32_t *ix = m->indices + 3 * t;
        const float *a = m->positions + 3 * ix[0], *b = m->positions + 3 * ix[1],
                    *c = m->positions + 3 * ix[2];
        double up = ((double)b[2] - a[2]) * ((double)c[0] - a[0]) -
                    ((double)b[0] - a[0]) * ((double)c[2] - a[2]);
        CHECK(up > 0);
        for (int e = 0; e < 3; e++) {
            uint64_t p = ix[e], q = ix[(e + 1) % 3];
            edges[3 * t + (size_t)e] = p < q ? p << 32 | q : q << 32 | p;
        }
    }
    long unique = 0, once = 0;
    for (size_t e = 0; e < n; e++) {
        size_t same = 0, first = e;
        for (size_t f = 0; f < n; f++)
            if (edges[f] == edges[e]) {
                same++;
                if (f < first) first = f;
            }
        if (first == e) {
            unique++;
            once += same == 1;
        }
        CHECK(same <= 2);
    }
    free(edges);
    *euler = (long)m->vertex_count - unique + (long)m->triangle_count;
    *border = once;
}

/* A ramp (ground = x) under a sea at 3.5: whole cells up to x = 3, then the shore cell clipped
 * at x = 3.5 exactly: 3 triangles a cell there. */
static void test_ramp_shore_at_contour(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, ramp);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_OCEAN);
    w.bodies[0].level = 3.5;
    water_plane p = {3.5, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    trn_water_mesh *m = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, NULL));
    CHECK_EQ_INT(m->body, 0);
    CHECK_EQ_INT(m->kind, TRN_WATER_OCEAN);
    CHECK_EQ_INT(m->triangle_count, 8 * (3 * 2 + 3));
    CHECK_EQ_INT(m->vertex_count, 4 * 9 + 17);
    CHECK(m->area == 28.0);
    CHECK(m->deepest == 3.5);
    CHECK(m->bounds_min[0] == 0.0 && m->bounds_max[0] == 3.5);
    CHECK(m->bounds_min[1] == 3.5 && m->bounds_max[1] == 3.5);
    CHECK(m->bounds_min[2] == 0.0 && m->bounds_max[2] == 8.0);
    int on_contour = 0;
    for (uint32_t v = 0; v < m->vertex_count; v++) {
        const float *q = m->positions + 3 * v, *n = m->normals + 3 * v;
        CHECK(q[1] == 3.5f);
        CHECK(n[0] == 0.0f && n[1] == 1.0f && n[2] == 0.0f);
        if (q[0] == 3.5f) {
            on_contour++;
            CHECK(q[2] * 2.0f == floorf(q[2] * 2.0f)); /* rows and diagonals: z = k / 2 */
        } else {
            CHECK(q[0] == floorf(q[0]) && q[0] <= 3.0f);
        }
    }
    CHECK_EQ_INT(on_contour, 17);
    long euler, border;
    check_topology(m, &euler, &border);
    CHECK_EQ_INT(euler, 1);
    CHECK_EQ_INT(border, 8 + 16 + 4 + 4); /* x = 0, x = 3.5 (17 contour points), z = 0, z = 8 */
    /* Equal inputs, equal bits. */
    trn_water_mesh *again = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &again, NULL));
    CHECK(again->vertex_count == m->vertex_count && again->triangle_count == m->triangle_count);
    CHECK(memcmp(again->positions, m->positions, m->vertex_count * 3 * sizeof(float)) == 0);
    CHECK(memcmp(again->indices, m->indices, m->triangle_count * 3 * sizeof(uint32_t)) == 0);
    trn_water_mesh_free(again);
    trn_water_mesh_free(m);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* Ground exactly at the level: that corner is kept (depth 0 counts), no crossing is made, and
 * the cell beyond (no wet corner) is not the body's. */
static void test_level_touching_a_sample(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, ramp);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_LAKE);
    w.bodies[0].level = 3.0;
    water_plane p = {3.0, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    trn_water_mesh *m = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, NULL));
    CHECK_EQ_INT(m->triangle_count, 8 * 3 * 2);
    CHECK_EQ_INT(m->vertex_count, 4 * 9);
    CHECK(m->area == 24.0);
    CHECK(m->bounds_max[0] == 3.0);
    trn_water_mesh_free(m);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* A diamond pit (|x - 4| + |z - 4|, linear on every terrain triangle) filled to 2.5: the mesh
 * is the wet diamond, area 2 x 2.5^2, every vertex off the grid exactly on the contour. */
static void test_diamond_lake_area(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, diamond);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_LAKE);
    w.bodies[0].level = 2.5;
    water_plane p = {2.5, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    trn_water_mesh *m = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, NULL));
    CHECK(m->area == 12.5);
    CHECK(m->deepest == 2.5);
    CHECK(m->bounds_min[0] == 1.5 && m->bounds_max[0] == 6.5);
    CHECK(m->bounds_min[2] == 1.5 && m->bounds_max[2] == 6.5);
    int grid = 0, contour = 0;
    for (uint32_t v = 0; v < m->vertex_count; v++) {
        const float *q = m->positions + 3 * v;
        double d = diamond(q[0], q[2]);
        CHECK(d <= 2.5);
        if (q[0] == floorf(q[0]) && q[2] == floorf(q[2]))
            grid++;
        else {
            contour++;
            CHECK(d == 2.5);
        }
    }
    CHECK_EQ_INT(grid, 13); /* |i - 4| + |j - 4| <= 2 */
    CHECK(contour > 0);
    long euler, border;
    check_topology(m, &euler, &border);
    CHECK_EQ_INT(euler, 1);
    CHECK_EQ_INT(border, contour); /* one closed shore line through every contour vertex */
    trn_water_mesh_free(m);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* A NaN ground sample drops the six triangles around it. */
static void test_nan_ground_drops_triangles(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, ramp);
    g.heights[1 * 9 + 1] = NAN;
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_OCEAN);
    w.bodies[0].level = 3.5;
    water_plane p = {3.5, 0, 0};
    water_test_cover(&w, &g, 0, &p, 0, 8, 0, 8);
    water_test_shore(&w, &g, &p);
    trn_water_mesh *m = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, NULL));
    CHECK(m->area == 25.0);
    CHECK_EQ_INT(m->triangle_count, 72 - 6);
    trn_water_mesh_free(m);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* Two lakes side by side: a cell goes to the owner of its triangle's first wet corner, so the
 * higher lake's level covers the cell between them and each keeps its own level. */
static void test_two_bodies_split_cells(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, flat);
    trn_water w;
    water_test_init(&w, &g, 2, TRN_WATER_LAKE);
    w.bodies[0].level = 5.0;
    w.bodies[1].level = 2.0;
    water_plane p[2] = {{5.0, 0, 0}, {2.0, 0, 0}};
    water_test_cover(&w, &g, 0, &p[0], 0, 3, 0, 8);
    water_test_cover(&w, &g, 1, &p[1], 4, 8, 0, 8);
    trn_water_mesh *a = NULL, *b = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &a, NULL));
    CHECK_OK(trn_water_mesh_new(&w, &g, 1, &b, NULL));
    CHECK(a->area == 32.0 && b->area == 32.0);
    CHECK(a->bounds_max[0] == 4.0 && a->bounds_min[1] == 5.0 && a->bounds_max[1] == 5.0);
    CHECK(b->bounds_min[0] == 4.0 && b->bounds_min[1] == 2.0 && b->bounds_max[1] == 2.0);
    CHECK(a->deepest == 5.0 && b->deepest == 2.0);
    trn_water_mesh_free(a);
    trn_water_mesh_free(b);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* A follow-bed river whose surface slopes down z: its vertices follow the surface and its
 * normals tilt back toward +z; a corner it does not own takes, as trn_water_query does, the
 * surface of the wet corner that chose the triangle, so such a vertex is not shared between
 * triangles. */
static void test_follow_bed_surface_and_normals(void)
{
    trn_field g;
    water_test_field(&g, 8, 8, 1.0, 1.0, flat_low);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_RIVER);
    trn_water_body *r = &w.bodies[0];
    r->surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    r->river_depth = 1.0;
    water_plane p = {2.0, 0, -0.25};
    /* Columns 0..1 owned; column 2 is nobody's. */
    water_test_cover(&w, &g, 0, &p, 0, 1, 0, 8);
    trn_water_mesh *m = NULL;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, NULL));
    CHECK(m->area == 16.0);
    CHECK(m->deepest == 2.5);
    int far_own_row = 0, far_row_above = 0, near = 0;
    const double len = sqrt(1.0 + 0.0625);
    for (uint32_t v = 0; v < m->vertex_count; v++) {
        const float *q = m->positions + 3 * v, *n = m->normals + 3 * v;
        if (q[0] == 2.0f) {
            /* Cell row j's chooser is sample (1, j): its surface 2 - j / 4. */
            far_own_row += q[1] == (float)(2.0 - 0.25 * q[2]);
            far_row_above += q[1] == (float)(2.0 - 0.25 * (q[2] - 1.0));
            continue;
        }
        near++;
        CHECK(q[1] == (float)(2.0 - 0.25 * q[2]));
        if (q[0] == 0.0f)
            CHECK(fabs(n[0]) < 1e-6 && fabs(n[1] - 1.0 / len) < 1e-6 &&
                  fabs(n[2] - 0.25 / len) < 1e-6);
    }
    CHECK_EQ_INT(near, 2 * 9);
    CHECK_EQ_INT(far_own_row, 8);    /* (2, j) of each lower triangle */
    CHECK_EQ_INT(far_row_above, 16); /* (2, j + 1) of each lower and upper triangle */
    CHECK_EQ_INT(m->vertex_count, 2 * 9 + 24);
    trn_water_mesh_free(m);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
}

/* Every triangle of a resolved lake and follow-bed river lies where trn_water_query finds the
 * same body's water, at the same surface height. */
static void test_mesh_matches_query(void)
{
    trn_field g;
    water_test_field(&g, 16, 16, 0.5, 0.5, diamond);
    for (size_t k = 0; k < 17 * 17; k++)
        if (k % 17 < 4) g.heights[k] = -3.0f; /* a low strip at x < 2 for the river */
    trn_water_body bodies[2];
    trn_water_body_init(&bodies[0], TRN_WATER_LAKE, "lake");
    bodies[0].center_x = bodies[0].center_z = 4.0;
    bodies[0].radius = 3.0;
    bodies[0].level = 2.25;
    bodies[0].carve = false;
    trn_water_body_init(&bodies[1], TRN_WATER_RIVER, "river");
    bodies[1].surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    bodies[1].width = 2.0;
    bodies[1].river_depth = 1.0;
    bodies[1].carve = false;
    const double control[6] = {0.75, -1.5, 0.0, 0.75, -3.5, 8.0};
    bodies[1].control = malloc(sizeof control);
    memcpy(bodies[1].control, control, sizeof control);
    bodies[1].control_count = 2;
    trn_water w;
    CHECK_OK(trn_water_resolve(&g, bodies, 2, NULL, &w, NULL));
    for (uint32_t b = 0; b < 2; b++) {
        trn_water_mesh *m = NULL;
        CHECK_OK(trn_water_mesh_new(&w, &g, b, &m, NULL));
        CHECK(m && m->triangle_count > 10);
        int misses = 0;
        for (uint32_t t = 0; m && t < m->triangle_count; t++) {
            double c[3] = {0, 0, 0};
            for (int k = 0; k < 3; k++)
                for (int a = 0; a < 3; a++)
                    c[a] += m->positions[3 * m->indices[3 * t + (uint32_t)k] + (uint32_t)a] / 3.0;
            trn_water_sample q;
            bool wet = trn_water_query(&w, &g, c[0], -100.0, c[2], &q);
            if (!wet || q.body != (int32_t)b || fabs(q.surface[1] - c[1]) > 1e-5) misses++;
        }
        CHECK_EQ_INT(misses, 0);
        trn_water_mesh_free(m);
    }
    trn_water_dispose(&w);
    trn_water_body_dispose(&bodies[0]);
    trn_water_body_dispose(&bodies[1]);
    trn_field_dispose(&g);
}

static void test_arguments(void)
{
    trn_field g, other;
    water_test_field(&g, 4, 4, 1.0, 1.0, flat);
    water_test_field(&other, 4, 4, 2.0, 1.0, flat);
    trn_water w;
    water_test_init(&w, &g, 1, TRN_WATER_LAKE);
    trn_water_mesh *m = (trn_water_mesh *)&w; /* set to NULL on failure */
    trn_error e;
    CHECK_STATUS(trn_water_mesh_new(&w, &g, 1, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(m == NULL);
    CHECK_CONTAINS(e.message, "water body 1 does not exist (the water has 1)");
    CHECK_STATUS(trn_water_mesh_new(&w, &other, 0, &m, &e), TRN_ERR_MISMATCH);
    CHECK_STATUS(trn_water_mesh_new(NULL, &g, 0, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_water_mesh_new(&w, NULL, 0, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    /* A body with no wet sample: an empty mesh. */
    w.bodies[0].level = -1.0;
    CHECK_OK(trn_water_mesh_new(&w, &g, 0, &m, &e));
    CHECK(m && m->vertex_count == 0 && m->triangle_count == 0 && m->area == 0.0);
    CHECK(m && !m->positions && !m->indices && m->deepest == 0.0);
    trn_water_mesh_free(m);
    trn_water_mesh_free(NULL);
    trn_water_dispose(&w);
    trn_field_dispose(&g);
    trn_field_dispose(&other);
}

int main(void)
{
    RUN(test_ramp_shore_at_contour);
    RUN(test_level_touching_a_sample);
    RUN(test_diamond_lake_area);
    RUN(test_nan_ground_drops_triangles);
    RUN(test_two_bodies_split_cells);
    RUN(test_follow_bed_surface_and_normals);
    RUN(test_mesh_matches_query);
    RUN(test_arguments);
    return trn_test_finish();
}
