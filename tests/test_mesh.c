/* Terrain meshes: chunks, levels of detail, exact errors, skirts, holes, roles, selection. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/mesh.h"
#include "terrane/roles.h"
#include "test.h"

/* A field of cells_x x cells_z unit cells with heights fn(i, j). */
static void make_field(trn_field *f, uint32_t cells_x, uint32_t cells_z,
                       double (*fn)(uint32_t i, uint32_t j))
{
    CHECK_OK(trn_field_init(f, cells_x, cells_z, (double)cells_x, (double)cells_z, NULL));
    for (uint32_t j = 0; j <= cells_z; j++)
        for (uint32_t i = 0; i <= cells_x; i++)
            f->heights[(size_t)j * (cells_x + 1u) + i] = (float)fn(i, j);
}

static double plane(uint32_t i, uint32_t j)
{
    return 3.0 + (double)i - 2.0 * (double)j;
}

static double zero(uint32_t i, uint32_t j)
{
    (void)i;
    (void)j;
    return 0.0;
}

/* A deterministic rough surface: integer hash to 0..16 m. */
static double rough(uint32_t i, uint32_t j)
{
    uint32_t h = i * 73856093u ^ j * 19349663u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(h % 1024u) / 64.0;
}

static trn_mesh *build(const trn_field *f, const uint8_t *roles, uint32_t chunk_cells, int threads)
{
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = chunk_cells;
    o.threads = threads;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(f, roles, &o, &m, NULL, NULL, NULL));
    return m;
}

static void test_levels_and_plane(void)
{
    trn_field f;
    make_field(&f, 13, 6, plane); /* chunks of 8: 2 x 1, the last 5 x 6 cells */
    trn_mesh *m = build(&f, NULL, 8, 1);
    CHECK(m != NULL);
    if (!m) return;
    CHECK_EQ_INT(m->chunks_x, 2);
    CHECK_EQ_INT(m->chunks_z, 1);
    CHECK_EQ_INT(m->level_count, 4); /* steps 1, 2, 4, 8 */
    CHECK_EQ_INT(m->chunks[1].i0, 8);
    CHECK_EQ_INT(m->chunks[1].i1, 13);
    CHECK_EQ_INT(m->chunks[1].j1, 6);
    for (uint32_t k = 0; k < 2; k++)
        for (uint32_t l = 0; l < m->level_count; l++) {
            const trn_mesh_level *lv = &m->chunks[k].levels[l];
            CHECK(lv->error == 0.0);
            CHECK(lv->border_error == 0.0);
            CHECK_EQ_INT(lv->step, 1u << l);
            /* automatic skirts: error 0 + one cell */
            CHECK(lv->skirt_depth == 1.0);
        }
    /* The last chunk (5 x 6 cells) at step 4: columns 0, 4, 5 and rows 0, 4, 6: 9 vertices,
     * 8 triangles; its border of 2 + 2 + 2 + 2 segments hangs 16 skirt triangles. */
    const trn_mesh_level *lv = &m->chunks[1].levels[2];
    CHECK_EQ_INT(lv->surface_vertex_count, 9);
    CHECK_EQ_INT(lv->surface_triangle_count, 8);
    CHECK_EQ_INT(lv->skirt_triangle_count, 16);
    CHECK_EQ_INT(lv->vertex_count, 9 + 8);
    CHECK_EQ_INT(lv->index_count, 3 * (8 + 16));
    /* The coarsest level is a single cell per chunk. */
    CHECK_EQ_INT(m->chunks[1].levels[3].surface_triangle_count, 2);
    /* Every triangle faces up; normals of a plane h = 3 + x - 2z: (-1, 1, 2) / sqrt(6). */
    const trn_mesh_level *l0 = &m->chunks[0].levels[0];
    for (uint32_t t = 0; t < l0->surface_triangle_count; t++) {
        const uint32_t *ix = l0->indices + 3u * t;
        const float *a = l0->positions + 3u * ix[0], *b = l0->positions + 3u * ix[1],
                    *c = l0->positions + 3u * ix[2];
        const double ux = b[0] - a[0], uz = b[2] - a[2], vx = c[0] - a[0], vz = c[2] - a[2];
        CHECK(uz * vx - ux * vz > 0.0); /* y of (b - a) x (c - a) */
    }
    /* every vertex, edges (one-sided) and inside (central) alike */
    uint32_t off = 0;
    for (uint32_t v = 0; v < l0->vertex_count; v++)
        off += fabs(l0->normals[3u * v] - (float)(-1.0 / sqrt(6.0))) > 1e-6 ||
               fabs(l0->normals[3u * v + 1u] - (float)(1.0 / sqrt(6.0))) > 1e-6 ||
               fabs(l0->normals[3u * v + 2u] - (float)(2.0 / sqrt(6.0))) > 1e-6;
    CHECK_EQ_INT(off, 0);
    CHECK_EQ_INT(l0->vertex_count, 63 + 28); /* 9 x 7 surface vertices, 28 border ones under */
    trn_mesh_free(m);
    trn_mesh_free(NULL);
    trn_field_dispose(&f);
}

static double spike(uint32_t i, uint32_t j)
{
    return i == 4 && j == 4 ? 4.0 : i == 1 && j == 6 ? 0.5 : 0.0;
}

/* Exact errors of a known bump: the spike of 4 m at (4, 4) in a chunk of 8 cells. */
static void test_bump_error(void)
{
    trn_field f;
    make_field(&f, 8, 8, spike);
    trn_mesh *m = build(&f, NULL, 8, 1);
    if (!m) return;
    const trn_mesh_chunk *ch = &m->chunks[0];
    CHECK(ch->levels[0].error == 0.0);
    /* step 2: (4, 4) is a vertex; (1, 6) is not: 0.5 off the flat coarse surface there, and
     * (3, 3) lies on the diagonal of cell (2, 2)-(4, 4) at 4 / 2 = 2 m: error 2 */
    CHECK(ch->levels[1].error == 2.0);
    /* step 4: (3, 3) sits at 3 / 4 of the way up the diagonal to the spike: 3 m */
    CHECK(ch->levels[2].error == 3.0);
    /* step 8: one flat cell, the spike itself is 4 m off */
    CHECK(ch->levels[3].error == 4.0);
    /* the border is flat at every level */
    for (int l = 0; l < 4; l++)
        CHECK(ch->levels[l].border_error == 0.0);
    CHECK(ch->bounds_max[1] == 4.0 && ch->bounds_min[1] == 0.0);
    /* selection by error */
    uint32_t level = 99;
    CHECK_OK(trn_mesh_select_max_error(m, 3.0, &level, NULL));
    CHECK_EQ_INT(level, 2);
    CHECK_OK(trn_mesh_select_max_error(m, 2.9999, &level, NULL));
    CHECK_EQ_INT(level, 1);
    CHECK_OK(trn_mesh_select_max_error(m, 0.0, &level, NULL));
    CHECK_EQ_INT(level, 0);
    CHECK_OK(trn_mesh_select_max_error(m, 4.0, &level, NULL));
    CHECK_EQ_INT(level, 3);
    CHECK_STATUS(trn_mesh_select_max_error(m, -1.0, &level, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_mesh_select_max_error(m, NAN, &level, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_OK(trn_mesh_select_level(m, 3, &level, NULL));
    CHECK_EQ_INT(level, 3);
    trn_error e;
    CHECK_STATUS(trn_mesh_select_level(m, 4, &level, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "expected 0..3, found 4");
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

/* The level's polyline along a chunk border line: vertex heights at sample positions t (in
 * samples along the line), from the level's own surface vertices. */
typedef struct polyline {
    uint32_t count;
    double t[64];
    double h[64];
    float normal[64][3];
} polyline;

static void border_line(const trn_mesh_level *lv, int axis, double at, double from, double to,
                        polyline *p)
{
    p->count = 0;
    for (uint32_t v = 0; v < lv->surface_vertex_count; v++) {
        const float *q = lv->positions + 3u * v;
        const double fixed = axis == 0 ? q[0] : q[2], along = axis == 0 ? q[2] : q[0];
        if (fixed != at || along < from || along > to) continue;
        uint32_t k = p->count++;
        /* insertion by position */
        while (k > 0 && p->t[k - 1] > along) {
            p->t[k] = p->t[k - 1];
            p->h[k] = p->h[k - 1];
            memcpy(p->normal[k], p->normal[k - 1], sizeof p->normal[k]);
            k--;
        }
        p->t[k] = along;
        p->h[k] = q[1];
        memcpy(p->normal[k], lv->normals + 3u * v, sizeof p->normal[k]);
    }
}

static double poly_at(const polyline *p, double t)
{
    for (uint32_t k = 0; k + 1u < p->count; k++)
        if (t >= p->t[k] && t <= p->t[k + 1])
            return p->h[k] + (t - p->t[k]) * (p->h[k + 1] - p->h[k]) / (p->t[k + 1] - p->t[k]);
    return NAN;
}

/* No cracks: on every shared border, at every pair of levels, each vertex of the coarser side is
 * a vertex of the finer side (same height, same normal), and wherever the two border lines part,
 * the higher side's skirt reaches the lower. */
static void test_no_cracks(void)
{
    trn_field f;
    make_field(&f, 20, 19, rough); /* chunks of 8: 3 x 3, the last ones 4 and 3 cells */
    trn_mesh *m = build(&f, NULL, 8, 1);
    if (!m) return;
    int pairs = 0, gaps = 0;
    for (uint32_t cz = 0; cz < m->chunks_z; cz++)
        for (uint32_t cx = 0; cx < m->chunks_x; cx++)
            for (int axis = 0; axis < 2; axis++) {
                /* axis 0: the neighbour to the right (+x), sharing the line x = i1 */
                const uint32_t nx = cx + (axis == 0), nz = cz + (axis == 1);
                if (nx >= m->chunks_x || nz >= m->chunks_z) continue;
                const trn_mesh_chunk *a = &m->chunks[cz * m->chunks_x + cx];
                const trn_mesh_chunk *b = &m->chunks[nz * m->chunks_x + nx];
                const double at = axis == 0 ? a->i1 : a->j1;
                const double from = axis == 0 ? a->j0 : a->i0, to = axis == 0 ? a->j1 : a->i1;
                for (uint32_t la = 0; la < m->level_count; la++)
                    for (uint32_t lb = 0; lb < m->level_count; lb++) {
                        polyline pa, pb;
                        border_line(&a->levels[la], axis, at, from, to, &pa);
                        border_line(&b->levels[lb], axis, at, from, to, &pb);
                        const polyline *coarse = la >= lb ? &pa : &pb, *fine = la >= lb ? &pb : &pa;
                        CHECK(coarse->count >= 2 && fine->count >= coarse->count);
                        for (uint32_t k = 0; k < coarse->count; k++) {
                            uint32_t q = 0;
                            while (q < fine->count && fine->t[q] != coarse->t[k])
                                q++;
                            CHECK(q < fine->count);
                            if (q < fine->count) {
                                CHECK(fine->h[q] == coarse->h[k]);
                                CHECK(memcmp(fine->normal[q], coarse->normal[k],
                                             sizeof fine->normal[q]) == 0);
                            }
                        }
                        for (double t = from; t <= to; t += 1.0) {
                            const double ha = poly_at(&pa, t), hb = poly_at(&pb, t);
                            const double gap = fabs(ha - hb);
                            const double skirt =
                                ha > hb ? a->levels[la].skirt_depth : b->levels[lb].skirt_depth;
                            CHECK(gap <= skirt);
                            if (gap > 0) gaps++;
                        }
                        pairs++;
                    }
            }
    CHECK(pairs == 12 * 16);
    CHECK(gaps > 0); /* the rough surface does open gaps that the skirts must cover */
    /* The skirt hangs each border vertex straight down by the depth. */
    const trn_mesh_level *lv = &m->chunks[4].levels[2];
    CHECK(lv->vertex_count > lv->surface_vertex_count);
    for (uint32_t t = lv->surface_triangle_count; t < lv->surface_triangle_count; t++)
        (void)t;
    uint32_t low = 0;
    for (uint32_t v = lv->surface_vertex_count; v < lv->vertex_count; v++) {
        const float *s = lv->positions + 3u * v;
        for (uint32_t u = 0; u < lv->surface_vertex_count; u++) {
            const float *p = lv->positions + 3u * u;
            if (p[0] == s[0] && p[2] == s[2] && s[1] == (float)((double)p[1] - lv->skirt_depth))
                low++;
        }
    }
    CHECK_EQ_INT(low, lv->vertex_count - lv->surface_vertex_count);
    /* With skirts off there are none; a fixed depth is used as it is. */
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    o.skirt_depth = 0.0;
    trn_mesh *bare = NULL;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &bare, NULL, NULL, NULL));
    if (bare) {
        CHECK_EQ_INT(bare->chunks[0].levels[1].skirt_triangle_count, 0);
        CHECK_EQ_INT(bare->chunks[0].levels[1].vertex_count,
                     bare->chunks[0].levels[1].surface_vertex_count);
    }
    trn_mesh_free(bare);
    o.skirt_depth = 2.5;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &bare, NULL, NULL, NULL));
    if (bare) CHECK(bare->chunks[3].levels[2].skirt_depth == 2.5);
    trn_mesh_free(bare);
    /* Positions are 32-bit floats: a skirt or a size past their range is refused, not inf. */
    trn_error fe;
    o.skirt_depth = 1e39;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &bare, NULL, NULL, &fe), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(fe.message, "would overflow 32-bit floats");
    CHECK(bare == NULL);
    o.skirt_depth = 2.5;
    trn_field wide = f;
    wide.size_x = 1e39;
    CHECK_STATUS(trn_mesh_build(&wide, NULL, &o, &bare, NULL, NULL, &fe), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(fe.message, "smaller square size");
    wide.size_x = 3e38; /* right at the edge of float: still finite */
    CHECK_OK(trn_mesh_build(&wide, NULL, &o, &bare, NULL, NULL, NULL));
    trn_mesh_free(bare);
    /* Automatic: the level's error or the largest border error, plus the margin. */
    o.skirt_depth = -1.0;
    o.skirt_margin = 0.25;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &bare, NULL, NULL, NULL));
    if (bare) {
        const trn_mesh_chunk *ch = &bare->chunks[4];
        double border = 0;
        for (uint32_t l = 0; l < ch->level_count; l++)
            if (ch->levels[l].border_error > border) border = ch->levels[l].border_error;
        CHECK(border > 0);
        for (uint32_t l = 0; l < ch->level_count; l++) {
            const double e = ch->levels[l].error;
            CHECK(ch->levels[l].skirt_depth == (e > border ? e : border) + 0.25);
        }
    }
    trn_mesh_free(bare);
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

static void test_holes(void)
{
    /* Next to a hole the gradient is one-sided: a plane keeps its normal everywhere. */
    trn_field pl;
    make_field(&pl, 8, 8, plane);
    pl.heights[3 * 9 + 3] = NAN;
    pl.heights[3 * 9 + 5] = NAN;
    trn_mesh *pm = build(&pl, NULL, 8, 1);
    if (pm) {
        const trn_mesh_level *l0 = &pm->chunks[0].levels[0];
        uint32_t off = 0;
        for (uint32_t v = 0; v < l0->vertex_count; v++)
            off += fabs(l0->normals[3u * v] - (float)(-1.0 / sqrt(6.0))) > 1e-6 ||
                   fabs(l0->normals[3u * v + 2u] - (float)(2.0 / sqrt(6.0))) > 1e-6;
        /* all but (4, 3), with holes on both sides along x: no x gradient there */
        CHECK_EQ_INT(off, 1);
        CHECK_EQ_INT(l0->surface_vertex_count, 79);
        uint32_t flat_x = 0;
        for (uint32_t v = 0; v < l0->surface_vertex_count; v++)
            flat_x += l0->positions[3u * v] == 4.0f && l0->positions[3u * v + 2u] == 3.0f &&
                      l0->normals[3u * v] == 0.0f &&
                      fabs(l0->normals[3u * v + 2u] - (float)(2.0 / sqrt(5.0))) < 1e-6;
        CHECK_EQ_INT(flat_x, 1);
    }
    trn_mesh_free(pm);
    trn_field_dispose(&pl);

    trn_field f;
    make_field(&f, 8, 8, zero);
    f.heights[3 * 9 + 3] = NAN; /* (3, 3): six triangles touch it */
    trn_mesh *m = build(&f, NULL, 8, 1);
    if (!m) return;
    const trn_mesh_chunk *ch = &m->chunks[0];
    CHECK_EQ_INT(ch->levels[0].surface_triangle_count, 128 - 6);
    CHECK_EQ_INT(ch->levels[0].surface_vertex_count, 80);
    for (uint32_t v = 0; v < ch->levels[0].vertex_count * 3u; v++)
        CHECK(isfinite(ch->levels[0].positions[v]));
    CHECK(ch->levels[0].error == 0.0);
    /* step 2: (3, 3) is no vertex, the coarse surface covers it: the hole closes, error 0 */
    CHECK_EQ_INT(ch->levels[1].surface_triangle_count, 32);
    CHECK(ch->levels[1].error == 0.0);
    trn_mesh_free(m);
    /* A hole at a coarse vertex (4, 4): coarse triangles touching it go, and the finite samples
     * under them make the level's error infinite, so selection never widens the hole. */
    f.heights[3 * 9 + 3] = 0.0f;
    f.heights[4 * 9 + 4] = NAN;
    m = build(&f, NULL, 8, 1);
    if (!m) return;
    ch = &m->chunks[0];
    CHECK_EQ_INT(ch->levels[0].surface_triangle_count, 122);
    CHECK(ch->levels[0].error == 0.0);
    CHECK_EQ_INT(ch->levels[1].surface_triangle_count, 26);
    CHECK(isinf(ch->levels[1].error));
    CHECK(isinf(ch->levels[2].error));
    CHECK(ch->levels[3].error == 0.0); /* the single cell has only the corners */
    uint32_t level = 9;
    CHECK_OK(trn_mesh_select_max_error(m, 1e30, &level, NULL));
    CHECK_EQ_INT(level, 3);
    trn_mesh_free(m);
    /* All holes: no triangles, no vertices, no skirts. */
    for (size_t k = 0; k < 81; k++)
        f.heights[k] = NAN;
    m = build(&f, NULL, 8, 1);
    if (m) {
        CHECK_EQ_INT(m->chunks[0].levels[0].index_count, 0);
        CHECK_EQ_INT(m->chunks[0].levels[0].vertex_count, 0);
        CHECK(m->chunks[0].bounds_min[1] == 0.0 && m->chunks[0].bounds_max[1] == 0.0);
    }
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

/* Sections partition the index list in role order; level 0 triangles carry exactly
 * trn_roles_triangles's roles. */
static void test_role_sections(void)
{
    trn_field f;
    make_field(&f, 12, 10, rough);
    const size_t n = 13u * 11u;
    uint8_t *roles = malloc(n);
    uint8_t *tri_roles = malloc(2u * 12u * 10u);
    for (size_t k = 0; k < n; k++)
        roles[k] = (uint8_t)((k * 7u + k / 13u) % 4u * 2u); /* ground, rock, sediment, snow */
    CHECK_OK(trn_roles_triangles(12, 10, roles, tri_roles, NULL));
    trn_mesh *m = build(&f, roles, 5, 2);
    if (m) {
        CHECK(m->has_roles);
        uint64_t want[256] = {0}, got[256] = {0};
        for (size_t t = 0; t < 240; t++)
            want[tri_roles[t]]++;
        for (size_t k = 0; k < (size_t)m->chunks_x * m->chunks_z; k++) {
            for (uint32_t l = 0; l < m->level_count; l++) {
                const trn_mesh_level *lv = &m->chunks[k].levels[l];
                uint32_t next = 0, surface = 0, skirt = 0;
                for (uint32_t s = 0; s < lv->section_count; s++) {
                    const trn_mesh_section *sec = &lv->sections[s];
                    CHECK(sec->first == next);
                    CHECK(sec->count % 3u == 0 && sec->count > 0);
                    CHECK(sec->skirt_count <= sec->count);
                    if (s) CHECK(sec->role > lv->sections[s - 1].role);
                    next += sec->count;
                    skirt += sec->skirt_count;
                    surface += sec->count - sec->skirt_count;
                    if (l == 0) got[sec->role] += (sec->count - sec->skirt_count) / 3u;
                }
                CHECK_EQ_INT(next, lv->index_count);
                CHECK_EQ_INT(surface, 3u * lv->surface_triangle_count);
                CHECK_EQ_INT(skirt, 3u * lv->skirt_triangle_count);
                for (uint32_t q = 0; q < lv->index_count; q++)
                    CHECK(lv->indices[q] < lv->vertex_count);
            }
        }
        for (int r = 0; r < 256; r++)
            CHECK_EQ_INT(got[r], want[r]);
        /* Skirts: in pairs (p, q, q'), (p, q', p') after their section's surface triangles; the
         * edge p-q is an edge of a surface triangle of the same role, and the wall faces out of
         * the chunk. */
        uint32_t pairs = 0, bad_role = 0, inward = 0;
        for (size_t k = 0; k < (size_t)m->chunks_x * m->chunks_z; k++)
            for (uint32_t l = 0; l < m->level_count; l++) {
                const trn_mesh_level *lv = &m->chunks[k].levels[l];
                const trn_mesh_chunk *ch = &m->chunks[k];
                const double cx = 0.5 * (ch->bounds_min[0] + ch->bounds_max[0]);
                const double cz = 0.5 * (ch->bounds_min[2] + ch->bounds_max[2]);
                for (uint32_t s = 0; s < lv->section_count; s++) {
                    const trn_mesh_section *sec = &lv->sections[s];
                    const uint32_t *sk = lv->indices + sec->first + sec->count - sec->skirt_count;
                    CHECK(sec->skirt_count % 6u == 0);
                    for (uint32_t t = 0; t + 6u <= sec->skirt_count; t += 6u) {
                        const uint32_t p = sk[t], q = sk[t + 1u];
                        CHECK(sk[t + 3u] == p && sk[t + 4u] == sk[t + 2u]);
                        CHECK(p < lv->surface_vertex_count && q < lv->surface_vertex_count);
                        CHECK(sk[t + 2u] >= lv->surface_vertex_count);
                        bool found = false;
                        for (uint32_t u = sec->first;
                             u < sec->first + sec->count - sec->skirt_count && !found; u += 3u)
                            for (int e = 0; e < 3; e++)
                                if (lv->indices[u + (uint32_t)e] == p &&
                                    lv->indices[u + (uint32_t)((e + 2) % 3)] == q)
                                    found = true; /* q -> p in the surface triangle: shared edge */
                        bad_role += !found;
                        const float *a = lv->positions + 3u * p, *b = lv->positions + 3u * q,
                                    *c = lv->positions + 3u * sk[t + 2u];
                        const double u3[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
                        const double v3[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
                        const double nx = u3[1] * v3[2] - u3[2] * v3[1];
                        const double nz = u3[0] * v3[1] - u3[1] * v3[0];
                        const double mx = 0.5 * (a[0] + b[0]) - cx, mz = 0.5 * (a[2] + b[2]) - cz;
                        inward += nx * mx + nz * mz <= 0.0;
                        pairs++;
                    }
                }
            }
        CHECK(pairs > 100);
        CHECK_EQ_INT(bad_role, 0);
        CHECK_EQ_INT(inward, 0);
    }
    trn_mesh_free(m);
    /* Without roles: one section per level. */
    m = build(&f, NULL, 5, 1);
    if (m) {
        CHECK(!m->has_roles);
        CHECK_EQ_INT(m->chunks[0].levels[0].section_count, 1);
        CHECK_EQ_INT(m->chunks[0].levels[0].sections[0].role, TRN_MESH_NO_ROLE);
    }
    trn_mesh_free(m);
    free(roles);
    free(tri_roles);
    trn_field_dispose(&f);
}

static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const uint8_t *p = data;
    for (size_t k = 0; k < n; k++)
        h = (h ^ p[k]) * 1099511628211ull;
    return h;
}

static uint64_t mesh_hash(const trn_mesh *m)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < (size_t)m->chunks_x * m->chunks_z; k++)
        for (uint32_t l = 0; l < m->level_count; l++) {
            const trn_mesh_level *lv = &m->chunks[k].levels[l];
            h = fnv(h, lv->positions, 12u * (size_t)lv->vertex_count);
            h = fnv(h, lv->normals, 12u * (size_t)lv->vertex_count);
            h = fnv(h, lv->indices, 4u * (size_t)lv->index_count);
            h = fnv(h, &lv->error, sizeof lv->error);
            h = fnv(h, &lv->skirt_depth, sizeof lv->skirt_depth);
            for (uint32_t s = 0; s < lv->section_count; s++) {
                /* field by field: the struct's padding bytes are not data */
                const trn_mesh_section *sec = &lv->sections[s];
                const uint32_t v[4] = {sec->role, sec->first, sec->count, sec->skirt_count};
                h = fnv(h, v, sizeof v);
            }
        }
    return h;
}

static void test_threads_deterministic(void)
{
    trn_field f;
    make_field(&f, 70, 45, rough);
    uint8_t *roles = malloc(71u * 46u);
    for (size_t k = 0; k < 71u * 46u; k++)
        roles[k] = (uint8_t)(k % 3u);
    trn_mesh *a = build(&f, roles, 8, 1), *b = build(&f, roles, 8, 2), *c = build(&f, roles, 8, 0);
    if (a && b && c) {
        CHECK(mesh_hash(a) == mesh_hash(b));
        CHECK(mesh_hash(a) == mesh_hash(c));
    }
    trn_mesh_free(a);
    trn_mesh_free(b);
    trn_mesh_free(c);
    free(roles);
    trn_field_dispose(&f);
}

/* One level's geometry and numbers, bit for bit. */
static bool same_level(const trn_mesh_level *a, const trn_mesh_level *b)
{
    if (a->level != b->level || a->step != b->step || a->vertex_count != b->vertex_count ||
        a->surface_vertex_count != b->surface_vertex_count || a->index_count != b->index_count ||
        a->section_count != b->section_count ||
        a->surface_triangle_count != b->surface_triangle_count ||
        a->skirt_triangle_count != b->skirt_triangle_count ||
        memcmp(&a->error, &b->error, sizeof a->error) != 0 ||
        memcmp(&a->border_error, &b->border_error, sizeof a->error) != 0 ||
        memcmp(&a->skirt_depth, &b->skirt_depth, sizeof a->error) != 0 ||
        memcmp(a->bounds_min, b->bounds_min, sizeof a->bounds_min) != 0 ||
        memcmp(a->bounds_max, b->bounds_max, sizeof a->bounds_max) != 0)
        return false;
    if (memcmp(a->positions, b->positions, 12u * (size_t)a->vertex_count) != 0 ||
        memcmp(a->normals, b->normals, 12u * (size_t)a->vertex_count) != 0 ||
        memcmp(a->indices, b->indices, 4u * (size_t)a->index_count) != 0)
        return false;
    for (uint32_t s = 0; s < a->section_count; s++)
        if (a->sections[s].role != b->sections[s].role ||
            a->sections[s].first != b->sections[s].first ||
            a->sections[s].count != b->sections[s].count ||
            a->sections[s].skirt_count != b->sections[s].skirt_count)
            return false;
    return true;
}

/* Level a of a window's mesh is level b of the whole grid's chunk at (ox, oz) cells: the same
 * triangles, sections and normals bit for bit, positions moved by the offset (unit cells, so
 * exactly). */
static bool window_level_is(const trn_mesh_level *a, const trn_mesh_level *b, float ox, float oz)
{
    if (a->vertex_count != b->vertex_count || a->index_count != b->index_count ||
        a->section_count != b->section_count ||
        memcmp(a->normals, b->normals, 12u * (size_t)a->vertex_count) != 0 ||
        memcmp(a->indices, b->indices, 4u * (size_t)a->index_count) != 0 ||
        memcmp(&a->skirt_depth, &b->skirt_depth, sizeof a->skirt_depth) != 0)
        return false;
    for (uint32_t v = 0; v < a->vertex_count; v++)
        if (a->positions[3 * v] + ox != b->positions[3 * v] ||
            a->positions[3 * v + 1] != b->positions[3 * v + 1] ||
            a->positions[3 * v + 2] + oz != b->positions[3 * v + 2])
            return false;
    for (uint32_t k = 0; k < a->section_count; k++)
        if (a->sections[k].role != b->sections[k].role ||
            a->sections[k].count != b->sections[k].count)
            return false;
    return true;
}

/* A window of the grid meshed with the grid around it (trn_mesh_options.around): every level of
 * its chunks is the whole grid's chunk, normals across the window's edges included, in the
 * middle and at the grid's corner, built at once or deferred; without it the edge normals are
 * one-sided and differ; an around of another cell size is refused. */
static void test_window_around(void)
{
    trn_field whole;
    make_field(&whole, 48, 40, rough);
    const size_t nw = trn_field_sample_count(&whole);
    uint8_t *roles = malloc(nw);
    for (size_t k = 0; k < nw; k++)
        roles[k] = (uint8_t)((k % 49u * 7u + k / 49u * 3u) % 5u);
    trn_mesh *wm = build(&whole, roles, 16, 1);
    static const struct {
        uint32_t i0, j0;
    } at[] = {{16, 16}, {0, 0}, {32, 16}};
    for (size_t t = 0; t < sizeof at / sizeof at[0]; t++) {
        const uint32_t i0 = at[t].i0, j0 = at[t].j0;
        /* The window and, around it, the grid grown by a sample where it has one. */
        const uint32_t x0 = i0 ? i0 - 1u : 0u, z0 = j0 ? j0 - 1u : 0u;
        const uint32_t x1 = i0 + 17u <= 48u ? i0 + 17u : 48u, z1 = j0 + 17u <= 40u ? j0 + 17u : 40u;
        trn_field win, around;
        CHECK_OK(trn_field_init(&win, 16, 16, 16.0, 16.0, NULL));
        CHECK_OK(
            trn_field_init(&around, x1 - x0, z1 - z0, (double)(x1 - x0), (double)(z1 - z0), NULL));
        uint8_t *wr = malloc(17u * 17u);
        for (uint32_t j = 0; j <= 16; j++)
            for (uint32_t i = 0; i <= 16; i++) {
                win.heights[j * 17u + i] = whole.heights[(j0 + j) * 49u + i0 + i];
                wr[j * 17u + i] = roles[(j0 + j) * 49u + i0 + i];
            }
        for (uint32_t j = z0; j <= z1; j++)
            for (uint32_t i = x0; i <= x1; i++)
                around.heights[(j - z0) * (x1 - x0 + 1u) + (i - x0)] = whole.heights[j * 49u + i];
        const trn_mesh_chunk *wc = &wm->chunks[(j0 / 16u) * wm->chunks_x + i0 / 16u];
        for (int deferred = 0; deferred < 2; deferred++) {
            trn_mesh_options o;
            trn_mesh_options_default(&o);
            o.chunk_cells = 16;
            o.threads = 1;
            o.defer_levels = deferred;
            o.around = &around;
            o.around_i0 = i0 - x0;
            o.around_j0 = j0 - z0;
            trn_mesh *tm = NULL;
            CHECK_OK(trn_mesh_build(&win, wr, &o, &tm, NULL, NULL, NULL));
            CHECK_EQ_INT(tm->level_count, wc->level_count);
            for (uint32_t l = 0; tm && l < tm->level_count; l++) {
                trn_mesh_level made;
                memset(&made, 0, sizeof made);
                if (deferred) CHECK_OK(trn_mesh_level_make(&win, wr, tm, 0, l, &made, NULL));
                const trn_mesh_level *lv = deferred ? &made : &tm->chunks[0].levels[l];
                CHECK(window_level_is(lv, &wc->levels[l], (float)i0, (float)j0));
                trn_mesh_level_dispose(&made);
            }
            trn_mesh_free(tm);
        }
        /* Alone, the window's edges inside the grid get one-sided normals. */
        trn_mesh *alone = build(&win, wr, 16, 1);
        if (i0 || j0)
            CHECK(!window_level_is(&alone->chunks[0].levels[0], &wc->levels[0], (float)i0,
                                   (float)j0));
        trn_mesh_free(alone);
        free(wr);
        trn_field_dispose(&around);
        trn_field_dispose(&win);
    }
    /* An around of another cell size. */
    trn_field win, coarse;
    make_field(&win, 8, 8, rough);
    CHECK_OK(trn_field_init(&coarse, 10, 10, 20.0, 20.0, NULL));
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.around = &coarse;
    trn_mesh *bad = NULL;
    trn_error e;
    CHECK_EQ_INT(trn_mesh_build(&win, NULL, &o, &bad, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "around: expected a grid of the field's cell size");
    CHECK(bad == NULL);
    trn_field_dispose(&coarse);
    trn_field_dispose(&win);
    trn_mesh_free(wm);
    free(roles);
    trn_field_dispose(&whole);
}

/* Deferred levels: errors and skirts for selection without geometry, then the selected levels
 * built bit for bit as a full build makes them (holes and roles included). */
static void test_deferred_levels(void)
{
    trn_field f;
    make_field(&f, 70, 45, rough);
    f.heights[10u * 71u + 20u] = NAN; /* a hole */
    uint8_t *roles = malloc(71u * 46u);
    for (size_t k = 0; k < 71u * 46u; k++)
        roles[k] = (uint8_t)(k % 3u);
    trn_mesh *full = build(&f, roles, 8, 1);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 8;
    o.defer_levels = true;
    trn_mesh *lazy = NULL;
    CHECK_OK(trn_mesh_build(&f, roles, &o, &lazy, NULL, NULL, NULL));
    if (!full || !lazy) goto done;
    const size_t n = (size_t)full->chunks_x * full->chunks_z;
    CHECK_EQ_INT(lazy->chunks_x * lazy->chunks_z, n);
    CHECK_EQ_INT(lazy->level_count, full->level_count);
    for (size_t k = 0; k < n; k++)
        for (uint32_t l = 0; l < full->level_count; l++) {
            const trn_mesh_level *a = &full->chunks[k].levels[l], *b = &lazy->chunks[k].levels[l];
            CHECK(b->positions == NULL && b->indices == NULL && b->vertex_count == 0);
            CHECK(a->level == b->level && a->step == b->step);
            CHECK(memcmp(&a->error, &b->error, sizeof a->error) == 0);
            CHECK(memcmp(&a->border_error, &b->border_error, sizeof a->error) == 0);
            CHECK(memcmp(&a->skirt_depth, &b->skirt_depth, sizeof a->error) == 0);
        }
    /* The same camera picks the same levels from either. */
    uint32_t *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    trn_mesh_camera cam = {{-5.0, 30.0, -5.0}, 60.0, 1080.0, 4.0};
    CHECK_OK(trn_mesh_select_camera(full, &cam, want, NULL));
    CHECK_OK(trn_mesh_select_camera(lazy, &cam, got, NULL));
    CHECK(memcmp(want, got, n * sizeof *got) == 0);
    /* Every level somewhere. */
    for (size_t k = 0; k < n; k++)
        got[k] = (uint32_t)(k % full->level_count);
    /* Realize on two threads: the selected levels match, the others stay empty. */
    CHECK_OK(trn_mesh_realize(&f, roles, lazy, got, 2, NULL));
    for (size_t k = 0; k < n; k++)
        for (uint32_t l = 0; l < full->level_count; l++) {
            const trn_mesh_level *b = &lazy->chunks[k].levels[l];
            if (l == got[k])
                CHECK(same_level(&full->chunks[k].levels[l], b));
            else
                CHECK(b->positions == NULL && b->vertex_count == 0 && b->index_count == 0);
        }
    /* A second selection adds its levels and keeps the first. */
    for (size_t k = 0; k < n; k++)
        want[k] = full->level_count - 1u;
    CHECK_OK(trn_mesh_realize(&f, roles, lazy, want, 1, NULL));
    for (size_t k = 0; k < n; k++) {
        CHECK(same_level(&full->chunks[k].levels[got[k]], &lazy->chunks[k].levels[got[k]]));
        CHECK(same_level(&full->chunks[k].levels[want[k]], &lazy->chunks[k].levels[want[k]]));
    }
    /* Refused: another grid, a level out of range. */
    trn_field other;
    make_field(&other, 70, 44, rough);
    trn_error e;
    CHECK_STATUS(trn_mesh_realize(&other, roles, lazy, got, 1, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "the field is 70 x 44 cells");
    want[3] = full->level_count;
    CHECK_STATUS(trn_mesh_realize(&f, roles, lazy, want, 1, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "has levels 0 to");
    trn_field_dispose(&other);
    free(want);
    free(got);
done:
    trn_mesh_free(full);
    trn_mesh_free(lazy);
    free(roles);
    trn_field_dispose(&f);
}

static double smooth(uint32_t i, uint32_t j)
{
    return 8.0 * sin(0.05 * (double)i) * cos(0.07 * (double)j);
}

static void test_camera_selection(void)
{
    trn_field f;
    make_field(&f, 256, 256, smooth);
    trn_mesh *m = build(&f, NULL, 16, 1);
    if (!m) return;
    CHECK_EQ_INT(m->chunks_x * m->chunks_z, 256);
    uint32_t levels[256];
    trn_mesh_camera cam = {{-10.0, 20.0, -10.0}, 60.0, 1080.0, 2.0};
    CHECK_OK(trn_mesh_select_camera(m, &cam, levels, NULL));
    /* the far corner gets a coarser level than the near one */
    CHECK(levels[255] > levels[0]);
    /* a camera far away picks coarser levels everywhere than a close one */
    uint32_t far[256];
    trn_mesh_camera cam2 = cam;
    cam2.position[0] = cam2.position[2] = -5000.0;
    CHECK_OK(trn_mesh_select_camera(m, &cam2, far, NULL));
    for (int k = 0; k < 256; k++)
        CHECK(far[k] >= levels[k]);
    CHECK_EQ_INT(far[0], m->level_count - 1u);
    /* inside a chunk's box: its finest level */
    trn_mesh_camera inside = cam;
    inside.position[0] = 4.0, inside.position[1] = m->chunks[0].bounds_min[1],
    inside.position[2] = 4.0;
    CHECK_OK(trn_mesh_select_camera(m, &inside, levels, NULL));
    CHECK_EQ_INT(levels[0], 0);
    CHECK(levels[255] > 0);
    /* lod_error_pixels 0: finest everywhere, even far away */
    cam2.lod_error_pixels = 0.0;
    CHECK_OK(trn_mesh_select_camera(m, &cam2, far, NULL));
    for (int k = 0; k < 256; k++)
        CHECK_EQ_INT(far[k], 0);
    /* The threshold itself: chunk 255's level L passes exactly at error * focal / d. */
    const trn_mesh_chunk *ch = &m->chunks[255];
    const double pi = 3.14159265358979323846;
    const double focal = 1080.0 / (2.0 * tan(60.0 * pi / 360.0));
    trn_mesh_camera probe = {
        {ch->bounds_max[0] + 100.0, ch->bounds_min[1], ch->bounds_min[2]}, 60.0, 1080.0, 0.0};
    int probed = 0;
    for (uint32_t l = 1; l < ch->level_count; l++) {
        double need = ch->levels[l].error * focal / 100.0;
        bool coarser_passes = false;
        for (uint32_t q = l + 1u; q < ch->level_count; q++)
            if (ch->levels[q].error * focal / 100.0 <= need) coarser_passes = true;
        if (coarser_passes) continue;
        probe.lod_error_pixels = need;
        CHECK_OK(trn_mesh_select_camera(m, &probe, levels, NULL));
        CHECK_EQ_INT(levels[255], l);
        probe.lod_error_pixels = need * (1.0 - 1e-9);
        CHECK_OK(trn_mesh_select_camera(m, &probe, levels, NULL));
        CHECK(levels[255] < l);
        probed++;
    }
    CHECK(probed >= 3);
    /* Refused values, named; the output untouched. */
    trn_error e;
    const double bad[] = {-1.0, NAN, INFINITY};
    for (int k = 0; k < 3; k++) {
        trn_mesh_camera b = cam;
        b.lod_error_pixels = bad[k];
        levels[0] = 77;
        CHECK_STATUS(trn_mesh_select_camera(m, &b, levels, &e), TRN_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(e.message, "lod_error_pixels");
        CHECK_EQ_INT(levels[0], 77);
    }
    trn_mesh_camera b = cam;
    b.fov_y_degrees = 180.0;
    CHECK_STATUS(trn_mesh_select_camera(m, &b, levels, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "fov");
    b = cam;
    b.viewport_height = 0.0;
    CHECK_STATUS(trn_mesh_select_camera(m, &b, levels, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "viewport_height");
    b = cam;
    b.position[1] = NAN;
    CHECK_STATUS(trn_mesh_select_camera(m, &b, levels, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

static int cancel_progress(double done, const char *stage, void *user)
{
    (void)done;
    (void)user;
    return strcmp(stage, "mesh") == 0 ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_options(void)
{
    trn_field f;
    make_field(&f, 4, 4, plane);
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    CHECK(o.skirt_depth < 0 && o.skirt_margin < 0 && o.chunk_cells == 0);
    trn_mesh *m = NULL;
    trn_error e;
    o.chunk_cells = TRN_MESH_CHUNK_CELLS_MAX; /* the limit is accepted */
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK_EQ_INT(m->level_count, 14);
    trn_mesh_free(m);
    o.chunk_cells = TRN_MESH_CHUNK_CELLS_MAX + 1u;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "chunk_cells: expected 1..8192, found 8193");
    CHECK(m == NULL);
    o.chunk_cells = 0; /* default 64 */
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK_EQ_INT(m->chunk_cells, 64);
    if (m) CHECK_EQ_INT(m->level_count, 7);
    trn_mesh_free(m);
    o.chunk_cells = 1;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK_EQ_INT(m->level_count, 1);
    if (m) CHECK_EQ_INT(m->chunks_x * m->chunks_z, 16);
    trn_mesh_free(m);
    o.chunk_cells = 6; /* steps 1, 2, 4 */
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK_EQ_INT(m->level_count, 3);
    trn_mesh_free(m);
    o.max_levels = 2;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK_EQ_INT(m->level_count, 2);
    trn_mesh_free(m);
    o.max_levels = 0;
    o.skirt_depth = NAN;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "skirt_depth");
    o.skirt_depth = -1;
    o.skirt_margin = INFINITY;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "skirt_margin");
    o.skirt_margin = -1;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, cancel_progress, NULL, &e), TRN_ERR_CANCELLED);
    CHECK(m == NULL);
    CHECK_STATUS(trn_mesh_build(NULL, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    f.size_x = 0;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    f.size_x = 4;
    trn_field_dispose(&f);
    CHECK(fabs(trn_srgb_to_linear(255) - 1.0) < 1e-12);
    CHECK(trn_srgb_to_linear(0) == 0.0);
    CHECK(fabs(trn_srgb_to_linear(10) - 10.0 / 255.0 / 12.92) < 1e-12);
    CHECK(fabs(trn_srgb_to_linear(128) - 0.2158605) < 1e-6);
}

/* trn_mesh_chunk_errors equals the built levels' errors, chunk by chunk, on a rough field with
 * uneven chunks and holes; and its arguments are checked at their limits. */
static void test_chunk_errors(void)
{
    trn_field f;
    make_field(&f, 37, 21, rough);
    f.heights[5 * 38 + 7] = NAN;
    f.heights[4 * 38 + 4] = NAN; /* a corner of levels 1 and 2: infinite errors there */
    f.heights[17 * 38 + 30] = NAN;
    trn_mesh *m = build(&f, NULL, 16, 1);
    if (m) {
        uint32_t compared = 0, infinite = 0;
        for (uint32_t k = 0; k < m->chunks_x * m->chunks_z; k++) {
            const trn_mesh_chunk *ch = &m->chunks[k];
            double e[32];
            CHECK_OK(trn_mesh_chunk_errors(&f, ch->i0, ch->j0, ch->i1 - ch->i0, ch->j1 - ch->j0,
                                           ch->level_count, e, NULL));
            for (uint32_t l = 0; l < ch->level_count; l++) {
                const double want = ch->levels[l].error;
                CHECK(e[l] == want || (isnan(e[l]) && isnan(want)));
                compared++;
                infinite += isinf(want) != 0;
            }
        }
        CHECK(compared >= 3u * 6u && infinite > 0);
    }
    trn_mesh_free(m);
    double e[33];
    trn_error err;
    /* The whole grid is a chunk; one more cell either way is outside. */
    CHECK_OK(trn_mesh_chunk_errors(&f, 0, 0, 37, 21, 32, e, &err));
    CHECK(e[0] == 0.0);
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 1, 0, 37, 21, 1, e, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "not inside the 37 x 21 cell grid");
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 0, 0, 37, 22, 1, e, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 0, 0, 0, 21, 1, e, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 0, 0, 37, 21, 33, e, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "level_count: expected 1..32, found 33");
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 0, 0, 37, 21, 0, e, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_mesh_chunk_errors(&f, 0, 0, 37, 21, 1, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_mesh_chunk_errors(NULL, 0, 0, 1, 1, 1, e, &err), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&f);
}

/* ---- adaptive levels ---- */

static trn_mesh *build_adaptive(const trn_field *f, const uint8_t *roles, uint32_t chunk_cells,
                                double max_error, uint32_t levels, int threads)
{
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = chunk_cells;
    o.adaptive = true;
    o.adaptive_error = max_error;
    o.max_levels = levels;
    o.threads = threads;
    trn_mesh *m = NULL;
    CHECK_OK(trn_mesh_build(f, roles, &o, &m, NULL, NULL, NULL));
    return m;
}

/* The sample a vertex stands on (unit cells in these tests: x = i, z = j). */
static void vertex_sample(const trn_mesh_level *lv, uint32_t v, int64_t *i, int64_t *j)
{
    *i = (int64_t)lrint(lv->positions[3u * v]);
    *j = (int64_t)lrint(lv->positions[3u * v + 2u]);
}

/* Every triangle of every level: faces up, its corners are samples with their heights, and
 * every sample it covers (edges included) lies within the level's allowance of the plane
 * through its corners; the triangles tile each chunk (their areas add up to the chunk's, less
 * the half cells with a NaN corner). Returns the largest deviation seen over all levels,
 * relative to each level's allowance. */
static double check_adaptive(const trn_field *f, const trn_mesh *m, double max_error,
                             uint64_t *triangles)
{
    const size_t nx = f->cells_x + 1u;
    double worst_ratio = 0.0;
    *triangles = 0;
    for (uint32_t k = 0; k < m->chunks_x * m->chunks_z; k++) {
        const trn_mesh_chunk *ch = &m->chunks[k];
        /* twice the area the levels must cover: at least every cell without a NaN corner, at
         * most the chunk (a cell with one NaN corner keeps the half away from it, or none) */
        int64_t full2 = 0, chunk2 = 2 * (int64_t)(ch->i1 - ch->i0) * (ch->j1 - ch->j0);
        for (uint32_t j = ch->j0; j < ch->j1; j++)
            for (uint32_t i = ch->i0; i < ch->i1; i++) {
                const float h00 = f->heights[j * nx + i], h10 = f->heights[j * nx + i + 1];
                const float h01 = f->heights[(j + 1) * nx + i];
                const float h11 = f->heights[(j + 1) * nx + i + 1];
                full2 += 2 * (isfinite(h00) && isfinite(h11) && isfinite(h10) && isfinite(h01));
            }
        for (uint32_t l = 0; l < ch->level_count; l++) {
            const trn_mesh_level *lv = &ch->levels[l];
            const double allow = ldexp(max_error, (int)l);
            CHECK(lv->step == 0 && lv->skirt_depth == 0.0 && lv->skirt_triangle_count == 0);
            CHECK(lv->error <= allow);
            int64_t area2 = 0;
            *triangles += lv->index_count / 3u;
            for (uint32_t t = 0; t < lv->index_count; t += 3) {
                int64_t pi[3], pj[3];
                double ph[3];
                for (int c = 0; c < 3; c++) {
                    const uint32_t v = lv->indices[t + (uint32_t)c];
                    vertex_sample(lv, v, &pi[c], &pj[c]);
                    CHECK(pi[c] >= ch->i0 && pi[c] <= ch->i1 && pj[c] >= ch->j0 && pj[c] <= ch->j1);
                    ph[c] = lv->positions[3u * v + 1u];
                    CHECK(ph[c] == (double)f->heights[(size_t)pj[c] * nx + (size_t)pi[c]]);
                }
                /* up: (b - a) x (c - a) has +y, i.e. dz_b dx_c - dx_b dz_c > 0 */
                const int64_t a2 =
                    (pj[1] - pj[0]) * (pi[2] - pi[0]) - (pi[1] - pi[0]) * (pj[2] - pj[0]);
                CHECK(a2 > 0);
                area2 += a2;
                int64_t i0 = pi[0], i1 = pi[0], j0 = pj[0], j1 = pj[0];
                for (int c = 1; c < 3; c++) {
                    i0 = pi[c] < i0 ? pi[c] : i0, i1 = pi[c] > i1 ? pi[c] : i1;
                    j0 = pj[c] < j0 ? pj[c] : j0, j1 = pj[c] > j1 ? pj[c] : j1;
                }
                for (int64_t j = j0; j <= j1; j++)
                    for (int64_t i = i0; i <= i1; i++) {
                        /* barycentric weights, each >= 0 inside (clockwise in x, z here) */
                        const int64_t w0 =
                            (pj[2] - pj[1]) * (i - pi[1]) - (pi[2] - pi[1]) * (j - pj[1]);
                        const int64_t w1 =
                            (pj[0] - pj[2]) * (i - pi[2]) - (pi[0] - pi[2]) * (j - pj[2]);
                        const int64_t w2 =
                            (pj[1] - pj[0]) * (i - pi[0]) - (pi[1] - pi[0]) * (j - pj[0]);
                        if (w0 < 0 || w1 < 0 || w2 < 0) continue;
                        CHECK(w0 + w1 + w2 == a2);
                        const double h = f->heights[(size_t)j * nx + (size_t)i];
                        CHECK(isfinite(h)); /* holes never widen */
                        const double plane_h =
                            ((double)w0 * ph[0] + (double)w1 * ph[1] + (double)w2 * ph[2]) /
                            (double)a2;
                        const double d = fabs(plane_h - h);
                        CHECK(d <= allow + 1e-9);
                        if (allow > 0 && d / allow > worst_ratio) worst_ratio = d / allow;
                    }
            }
            CHECK(area2 >= full2 && area2 <= chunk2);
            if (full2 == chunk2) CHECK(area2 == chunk2);
        }
    }
    return worst_ratio;
}

/* The vertices of a level on one line (x = at for axis 0, z = at for axis 1), sorted. */
static size_t line_vertices(const trn_mesh_level *lv, int axis, int64_t at, int64_t *out)
{
    size_t n = 0;
    for (uint32_t v = 0; v < lv->vertex_count; v++) {
        int64_t i, j;
        vertex_sample(lv, v, &i, &j);
        if ((axis == 0 ? i : j) == at) out[n++] = axis == 0 ? j : i;
    }
    for (size_t a = 1; a < n; a++) /* insertion sort: short lines */
        for (size_t b = a; b > 0 && out[b - 1] > out[b]; b--) {
            const int64_t t = out[b];
            out[b] = out[b - 1], out[b - 1] = t;
        }
    return n;
}

/* Neighbouring chunks at any two levels have the same vertices on their shared edge, so the
 * surfaces meet without a crack and without skirts. */
static void check_shared_edges(const trn_mesh *m)
{
    int64_t a[1024], b[1024];
    for (uint32_t cz = 0; cz < m->chunks_z; cz++)
        for (uint32_t cx = 0; cx < m->chunks_x; cx++) {
            const trn_mesh_chunk *ch = &m->chunks[cz * m->chunks_x + cx];
            for (int axis = 0; axis < 2; axis++) {
                if (axis == 0 ? cx + 1u >= m->chunks_x : cz + 1u >= m->chunks_z) continue;
                const trn_mesh_chunk *nb = &m->chunks[axis == 0 ? cz * m->chunks_x + cx + 1u
                                                                : (cz + 1u) * m->chunks_x + cx];
                const int64_t at = axis == 0 ? ch->i1 : ch->j1;
                for (uint32_t l1 = 0; l1 < ch->level_count; l1++)
                    for (uint32_t l2 = 0; l2 < nb->level_count; l2++) {
                        const size_t na = line_vertices(&ch->levels[l1], axis, at, a);
                        const size_t nb_n = line_vertices(&nb->levels[l2], axis, at, b);
                        CHECK(na == nb_n);
                        if (na == nb_n) CHECK(memcmp(a, b, na * sizeof *a) == 0);
                    }
            }
        }
}

static double bowl(uint32_t i, uint32_t j)
{
    const double x = (double)i - 40.0, z = (double)j - 30.0;
    return 0.01 * (x * x + 0.5 * z * z) + 0.02 * x * z;
}

static void test_adaptive_error_bound(void)
{
    const struct {
        uint32_t cx, cz, chunk;
        double (*fn)(uint32_t, uint32_t);
        double error;
    } cases[] = {
        {64, 64, 16, rough, 0.5}, /* multiples of 1/64 m: deviations land on the allowance */
        {70, 45, 8, rough, 2.0},  /* uneven last chunks, a chunk line off the square grid */
        {50, 37, 12, bowl, 0.05}, /* chunks not a power of two */
        {80, 60, 32, bowl, 0.0},  /* 0: exact at every sample */
        {33, 17, 64, spike, 0.25}, {5, 3, 1, rough, 0.5}, /* one-cell chunks: half cells only */
        {1, 2, 64, rough, 0.5},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trn_field f;
        make_field(&f, cases[c].cx, cases[c].cz, cases[c].fn);
        trn_mesh *m = build_adaptive(&f, NULL, cases[c].chunk, cases[c].error, 0, 1);
        if (m) {
            uint64_t tris = 0;
            const double ratio = check_adaptive(&f, m, cases[c].error, &tris);
            check_shared_edges(m);
            CHECK(m->adaptive_error == cases[c].error);
            /* fewer triangles than the full grid; a tight allowance is used, not wasted */
            if (cases[c].error > 0 && cases[c].cx > 5)
                CHECK(tris < 2ull * cases[c].cx * cases[c].cz * m->level_count);
            if (cases[c].error > 0 && cases[c].fn != spike && cases[c].cx > 5) CHECK(ratio > 0.5);
        }
        trn_mesh_free(m);
        trn_field_dispose(&f);
    }
}

/* Holes: a half cell with a NaN corner is left out, nothing next to it widens the hole, and
 * both chunks by a hole on their border still agree on the border. */
static void test_adaptive_holes(void)
{
    trn_field f;
    make_field(&f, 40, 24, bowl);
    const size_t nx = 41;
    f.heights[5 * nx + 7] = NAN;
    f.heights[8 * nx + 16] = NAN; /* on the chunk line x = 16 */
    f.heights[20 * nx + 30] = NAN;
    trn_mesh *m = build_adaptive(&f, NULL, 16, 0.5, 3, 1);
    if (m) {
        uint64_t tris = 0;
        check_adaptive(&f, m, 0.5, &tris);
        check_shared_edges(m);
    }
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

/* A smooth surface takes far fewer triangles than the grid: a plane two per chunk, a bowl at a
 * few centimetres a small fraction. */
static void test_adaptive_smooth_counts(void)
{
    trn_field f;
    make_field(&f, 64, 64, plane);
    trn_mesh *m = build_adaptive(&f, NULL, 16, 0.0, 1, 1);
    if (m)
        for (uint32_t k = 0; k < 16; k++)
            CHECK_EQ_INT(m->chunks[k].levels[0].index_count, 6);
    trn_mesh_free(m);
    trn_field_dispose(&f);
    make_field(&f, 128, 128, bowl);
    m = build_adaptive(&f, NULL, 64, 0.05, 0, 1);
    if (m) {
        uint64_t tris = 0;
        check_adaptive(&f, m, 0.05, &tris);
        const trn_mesh_level *l0 = &m->chunks[0].levels[0];
        uint64_t level0 = 0;
        for (uint32_t k = 0; k < 4; k++)
            level0 += m->chunks[k].levels[0].index_count / 3u;
        CHECK(level0 < 2u * 128u * 128u / 8u); /* under 1/8 of the grid's triangles */
        CHECK(l0->error <= 0.05 && l0->error > 0.02);
        /* coarser levels: fewer triangles each */
        for (uint32_t l = 1; l < m->level_count; l++)
            CHECK(m->chunks[0].levels[l].index_count <= m->chunks[0].levels[l - 1].index_count);
        CHECK(m->chunks[0].levels[m->level_count - 1].index_count <
              m->chunks[0].levels[0].index_count);
        uint32_t levels[4];
        CHECK_OK(trn_mesh_select_max_error(m, 0.2, levels, NULL));
        for (uint32_t k = 0; k < 4; k++) {
            const trn_mesh_chunk *ch = &m->chunks[k];
            CHECK(levels[k] >= 1 && ch->levels[levels[k]].error <= 0.2);
            if (levels[k] + 1u < ch->level_count) CHECK(ch->levels[levels[k] + 1u].error > 0.2);
        }
    }
    trn_mesh_free(m);
    trn_field_dispose(&f);
}

static void test_adaptive_deterministic(void)
{
    trn_field f;
    make_field(&f, 70, 45, rough);
    uint8_t *roles = malloc(71u * 46u);
    for (size_t k = 0; k < 71u * 46u; k++)
        roles[k] = (uint8_t)(k % 3u);
    trn_mesh *a = build_adaptive(&f, roles, 8, 1.0, 0, 1);
    trn_mesh *b = build_adaptive(&f, roles, 8, 1.0, 0, 2);
    trn_mesh *c = build_adaptive(&f, roles, 8, 1.0, 0, 0);
    if (a && b && c) {
        CHECK(mesh_hash(a) == mesh_hash(b));
        CHECK(mesh_hash(a) == mesh_hash(c));
        CHECK(a->chunks[0].levels[0].section_count == 3);
    }
    trn_mesh_free(a);
    trn_mesh_free(b);
    trn_mesh_free(c);
    free(roles);
    trn_field_dispose(&f);
    /* A grid whose finest error passes are wide enough for a team (smaller ones run on the
     * calling thread): the same mesh on one thread and three. */
    make_field(&f, 320, 300, smooth);
    a = build_adaptive(&f, NULL, 32, 0.05, 0, 1);
    b = build_adaptive(&f, NULL, 32, 0.05, 0, 3);
    if (a && b) CHECK(mesh_hash(a) == mesh_hash(b));
    trn_mesh_free(a);
    trn_mesh_free(b);
    /* refused: skirts on adaptive levels, a NaN allowance */
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    CHECK(!o.adaptive);
    o.adaptive = true;
    o.adaptive_error = 0.5;
    o.skirt_depth = 2.0;
    trn_mesh *m = NULL;
    trn_error e;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "skirt_depth");
    o.skirt_depth = 0.0;
    o.adaptive_error = NAN;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "adaptive_error");
    o.adaptive_error = -0.5;
    CHECK_STATUS(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "adaptive_error: expected a finite number >= 0, found -0.5");
    /* a zeroed struct keeps the regular levels */
    memset(&o, 0, sizeof o);
    o.chunk_cells = 8;
    CHECK_OK(trn_mesh_build(&f, NULL, &o, &m, NULL, NULL, NULL));
    if (m) CHECK(m->adaptive_error < 0 && m->chunks[0].levels[0].step == 1);
    trn_mesh_free(m);
    m = NULL;
    CHECK(m == NULL);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_chunk_errors);
    RUN(test_levels_and_plane);
    RUN(test_bump_error);
    RUN(test_no_cracks);
    RUN(test_holes);
    RUN(test_role_sections);
    RUN(test_threads_deterministic);
    RUN(test_camera_selection);
    RUN(test_deferred_levels);
    RUN(test_window_around);
    RUN(test_options);
    RUN(test_adaptive_error_bound);
    RUN(test_adaptive_holes);
    RUN(test_adaptive_smooth_counts);
    RUN(test_adaptive_deterministic);
    return trn_test_finish();
}
