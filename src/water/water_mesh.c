/* Water surface meshes: terrain triangles a body owns, clipped at the shore, vertices shared. */
#include "terrane/water_mesh.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

#define NO_VERTEX UINT32_MAX

/* A corner of a terrain triangle. */
typedef struct corner {
    size_t k;      /* sample index */
    uint32_t i, j; /* sample column and row */
    double x, z, ground;
    double surface, depth; /* in the triangle at hand: depth = surface - ground */
    bool shared;           /* its surface is the same in every triangle of the body */
} corner;

/* A vertex of a clipped polygon: a corner, or the crossing on the edge between two corners. */
typedef struct poly_vertex {
    const corner *a, *b; /* b NULL: the corner a itself; else a has the lower sample index */
    double x, y, z;
    uint32_t id; /* NO_VERTEX until the mesh has it */
} poly_vertex;

typedef struct builder {
    const trn_water *water;
    const trn_field *ground;
    const trn_water_body *body;
    int32_t index;
    bool follow; /* a follow-bed river: the surface varies */
    trn_water_mesh *mesh;
    size_t vertex_cap, triangle_cap;
    double *normal_sum; /* follow-bed: 3 per vertex */
    /* Vertex of each sample / edge crossing, for the rows in use (see build). */
    uint32_t *sample_row[2], *horizontal_row[2], *vertical, *diagonal;
    size_t nx;
    trn_error *err;
} builder;

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the water mesh");
}

void trn_water_mesh_free(trn_water_mesh *mesh)
{
    if (!mesh) return;
    free(mesh->positions);
    free(mesh->normals);
    free(mesh->indices);
    free(mesh);
}

static void make_corner(const builder *bd, uint32_t i, uint32_t j, corner *c)
{
    const trn_water *w = bd->water;
    memset(c, 0, sizeof *c);
    c->i = i;
    c->j = j;
    c->k = (size_t)j * bd->nx + i;
    c->x = (double)i * w->size_x / (double)w->cells_x;
    c->z = (double)j * w->size_z / (double)w->cells_z;
    c->ground = (double)bd->ground->heights[c->k];
}

/* The corner's surface in a triangle chosen by the wet corner `chooser`, as trn_water_query
 * takes it: the level; or on a follow-bed river the corner's own surface where the river owns
 * it, else the chooser's. */
static void corner_surface(const builder *bd, const corner *chooser, corner *c)
{
    const trn_water *w = bd->water;
    c->shared = true;
    if (!bd->follow)
        c->surface = bd->body->level;
    else if (w->owner[c->k] == bd->index)
        c->surface = (double)w->surface[c->k];
    else {
        c->surface = (double)w->surface[chooser->k];
        c->shared = false;
    }
    c->depth = c->surface - c->ground;
}

/* Where the vertex of this polygon vertex is kept: the sample's or the edge's slot; NULL when
 * it depends on the triangle (a follow-bed corner the river does not own). */
static uint32_t *slot_of(builder *bd, const poly_vertex *v)
{
    const corner *a = v->a, *b = v->b;
    if (!a->shared || (b && !b->shared)) return NULL;
    if (!b) return &bd->sample_row[a->j & 1u][a->i];
    if (a->j == b->j) return &bd->horizontal_row[a->j & 1u][a->i < b->i ? a->i : b->i];
    if (a->i == b->i) return &bd->vertical[a->i];
    return &bd->diagonal[a->i < b->i ? a->i : b->i];
}

static trn_status vertex_of(builder *bd, poly_vertex *v)
{
    if (v->id != NO_VERTEX) return TRN_OK;
    uint32_t *slot = slot_of(bd, v);
    if (slot && *slot != NO_VERTEX) {
        v->id = *slot;
        return TRN_OK;
    }
    trn_water_mesh *m = bd->mesh;
    if (m->vertex_count == NO_VERTEX)
        return trn_error_set(bd->err, TRN_ERR_LIMIT, NULL, -1,
                             "water body '%s': more than %u mesh vertices", bd->body->id,
                             NO_VERTEX - 1u);
    if (m->vertex_count == bd->vertex_cap) {
        size_t cap = bd->vertex_cap ? bd->vertex_cap * 2 : 256, bytes;
        if (!trn_mul_size(cap, 3 * sizeof(double), &bytes)) return oom(bd->err);
        float *p = realloc(m->positions, cap * 3 * sizeof *p);
        if (!p) return oom(bd->err);
        m->positions = p;
        if (bd->follow) {
            double *n = realloc(bd->normal_sum, bytes);
            if (!n) return oom(bd->err);
            bd->normal_sum = n;
        }
        bd->vertex_cap = cap;
    }
    const uint32_t id = m->vertex_count++;
    m->positions[3u * (size_t)id] = (float)v->x;
    m->positions[3u * (size_t)id + 1] = (float)v->y;
    m->positions[3u * (size_t)id + 2] = (float)v->z;
    if (bd->follow) memset(bd->normal_sum + 3u * (size_t)id, 0, 3 * sizeof(double));
    const double xyz[3] = {v->x, v->y, v->z};
    for (int c = 0; c < 3; c++) {
        if (id == 0 || xyz[c] < m->bounds_min[c]) m->bounds_min[c] = xyz[c];
        if (id == 0 || xyz[c] > m->bounds_max[c]) m->bounds_max[c] = xyz[c];
    }
    if (slot) *slot = id;
    v->id = id;
    return TRN_OK;
}

static void crossing(const corner *p, const corner *q, poly_vertex *v)
{
    /* From the lower sample index, so both triangles of an edge get the same bits. */
    if (q->k < p->k) {
        const corner *t = p;
        p = q;
        q = t;
    }
    const double t = p->depth / (p->depth - q->depth);
    v->a = p;
    v->b = q;
    v->x = p->x + (q->x - p->x) * t;
    v->z = p->z + (q->z - p->z) * t;
    v->y = p->surface + (q->surface - p->surface) * t;
    v->id = NO_VERTEX;
}

static trn_status emit(builder *bd, poly_vertex *p0, poly_vertex *p1, poly_vertex *p2)
{
    /* Plan area: the y of (b - a) x (c - a), positive for the up-facing order. */
    const double twice = (p1->z - p0->z) * (p2->x - p0->x) - (p1->x - p0->x) * (p2->z - p0->z);
    if (!(twice > 0.0)) return TRN_OK; /* degenerate */
    poly_vertex *p[3] = {p0, p1, p2};
    uint32_t id[3];
    trn_status st;
    for (int c = 0; c < 3; c++) {
        if ((st = vertex_of(bd, p[c]))) return st;
        id[c] = p[c]->id;
    }
    trn_water_mesh *m = bd->mesh;
    if (m->triangle_count == bd->triangle_cap) {
        size_t cap = bd->triangle_cap ? bd->triangle_cap * 2 : 256, bytes;
        if (cap > UINT32_MAX || !trn_mul_size(cap, 3 * sizeof(uint32_t), &bytes))
            return trn_error_set(bd->err, TRN_ERR_LIMIT, NULL, -1,
                                 "water body '%s': too many mesh triangles", bd->body->id);
        uint32_t *ix = realloc(m->indices, bytes);
        if (!ix) return oom(bd->err);
        m->indices = ix;
        bd->triangle_cap = cap;
    }
    memcpy(m->indices + 3u * (size_t)m->triangle_count, id, sizeof id);
    m->triangle_count++;
    m->area += twice / 2.0;
    if (bd->follow) {
        /* The unnormalised face normal weighs each triangle by its area. */
        const double ux = p1->x - p0->x, uy = p1->y - p0->y, uz = p1->z - p0->z;
        const double vx = p2->x - p0->x, vy = p2->y - p0->y, vz = p2->z - p0->z;
        const double n[3] = {uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx};
        for (int c = 0; c < 3; c++)
            for (int a = 0; a < 3; a++)
                bd->normal_sum[3u * (size_t)id[c] + (size_t)a] += n[a];
    }
    return TRN_OK;
}

/* One terrain triangle (corners in up-facing order; chosen by the first wet corner of order). */
static trn_status triangle(builder *bd, const corner *const cell[3], const corner *const order[3])
{
    const trn_water *w = bd->water;
    const corner *chooser = NULL;
    for (int c = 0; c < 3 && !chooser; c++)
        if (w->wet[order[c]->k]) chooser = order[c];
    if (!chooser || w->owner[chooser->k] != bd->index) return TRN_OK;
    corner t[3];
    bool any = false;
    for (int c = 0; c < 3; c++) {
        t[c] = *cell[c];
        corner_surface(bd, chooser, &t[c]);
        if (isnan(t[c].depth)) return TRN_OK;
        any = any || t[c].depth > 0.0;
    }
    if (!any) return TRN_OK;
    /* Keep depth >= 0 (Sutherland-Hodgman against one plane): 3 or 4 vertices. */
    poly_vertex poly[4];
    int n = 0;
    for (int c = 0; c < 3; c++) {
        const corner *a = &t[c], *b = &t[(c + 1) % 3];
        if (a->depth >= 0.0) poly[n++] = (poly_vertex){a, NULL, a->x, a->surface, a->z, NO_VERTEX};
        if ((a->depth > 0.0 && b->depth < 0.0) || (a->depth < 0.0 && b->depth > 0.0))
            crossing(a, b, &poly[n++]);
    }
    trn_status st = TRN_OK;
    for (int f = 1; f + 1 < n && !st; f++)
        st = emit(bd, &poly[0], &poly[f], &poly[f + 1]);
    return st;
}

static trn_status alloc_rows(builder *bd)
{
    const size_t nx = bd->nx;
    bd->sample_row[0] = malloc(nx * sizeof(uint32_t));
    bd->sample_row[1] = malloc(nx * sizeof(uint32_t));
    bd->horizontal_row[0] = malloc(nx * sizeof(uint32_t));
    bd->horizontal_row[1] = malloc(nx * sizeof(uint32_t));
    bd->vertical = malloc(nx * sizeof(uint32_t));
    bd->diagonal = malloc(nx * sizeof(uint32_t));
    if (!bd->sample_row[0] || !bd->sample_row[1] || !bd->horizontal_row[0] ||
        !bd->horizontal_row[1] || !bd->vertical || !bd->diagonal)
        return oom(bd->err);
    return TRN_OK;
}

static void free_rows(builder *bd)
{
    free(bd->sample_row[0]);
    free(bd->sample_row[1]);
    free(bd->horizontal_row[0]);
    free(bd->horizontal_row[1]);
    free(bd->vertical);
    free(bd->diagonal);
}

/* Cells row by row over the cells that touch the body's wet samples. Sample and horizontal-edge
 * slots of sample row j live in buffer j & 1, so rows j and j + 1 roll between two buffers;
 * vertical and diagonal edges live in one cell row. All bits set is NO_VERTEX. */
static trn_status build(builder *bd, uint32_t i0, uint32_t i1, uint32_t j0, uint32_t j1)
{
    trn_status st = alloc_rows(bd);
    const size_t bytes = bd->nx * sizeof(uint32_t);
    for (uint32_t j = j0; !st && j <= j1; j++) {
        if (j == j0) {
            memset(bd->sample_row[j & 1u], 0xff, bytes);
            memset(bd->horizontal_row[j & 1u], 0xff, bytes);
        }
        memset(bd->sample_row[(j + 1u) & 1u], 0xff, bytes);
        memset(bd->horizontal_row[(j + 1u) & 1u], 0xff, bytes);
        memset(bd->vertical, 0xff, bytes);
        memset(bd->diagonal, 0xff, bytes);
        const uint8_t *wet = bd->water->wet + (size_t)j * bd->nx;
        for (uint32_t i = i0; !st && i <= i1; i++) {
            /* A cell with no wet corner has no triangle of any body. */
            if (!(wet[i] | wet[i + 1u] | wet[i + bd->nx] | wet[i + 1u + bd->nx])) continue;
            corner c00, c10, c01, c11;
            make_corner(bd, i, j, &c00);
            make_corner(bd, i + 1u, j, &c10);
            make_corner(bd, i, j + 1u, &c01);
            make_corner(bd, i + 1u, j + 1u, &c11);
            const corner *const lower[3] = {&c00, &c11, &c10};
            const corner *const lower_order[3] = {&c00, &c10, &c11};
            const corner *const upper[3] = {&c00, &c01, &c11};
            const corner *const upper_order[3] = {&c00, &c01, &c11};
            st = triangle(bd, lower, lower_order);
            if (!st) st = triangle(bd, upper, upper_order);
        }
    }
    free_rows(bd);
    return st;
}

static trn_status finish_normals(builder *bd)
{
    trn_water_mesh *m = bd->mesh;
    if (!m->vertex_count) return TRN_OK;
    m->normals = malloc((size_t)m->vertex_count * 3 * sizeof *m->normals);
    if (!m->normals) return oom(bd->err);
    for (size_t v = 0; v < m->vertex_count; v++) {
        double n[3] = {0.0, 1.0, 0.0};
        if (bd->follow) {
            const double *s = bd->normal_sum + 3 * v;
            const double len = sqrt(s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
            if (len > 0.0)
                for (int c = 0; c < 3; c++)
                    n[c] = s[c] / len;
        }
        for (int c = 0; c < 3; c++)
            m->normals[3 * v + (size_t)c] = (float)n[c];
    }
    return TRN_OK;
}

trn_status trn_water_mesh_new(const trn_water *water, const trn_field *ground, uint32_t body,
                              trn_water_mesh **mesh, trn_error *err)
{
    if (mesh) *mesh = NULL;
    if (!water || !ground || !mesh || !ground->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "a water mesh needs the water, its ground and an output");
    if (body >= water->body_count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water body %u does not exist (the water has %u)", body,
                             water->body_count);
    if (!water->owner || !water->wet || !water->surface || water->cells_x == 0 ||
        water->cells_z == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "the water has bodies but no resolved coverage");
    if (ground->cells_x != water->cells_x || ground->cells_z != water->cells_z ||
        ground->size_x != water->size_x || ground->size_z != water->size_z)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "the ground is %u x %u cells over %g x %g but the water was resolved "
                             "on %u x %u cells over %g x %g",
                             ground->cells_x, ground->cells_z, ground->size_x, ground->size_z,
                             water->cells_x, water->cells_z, water->size_x, water->size_z);
    trn_water_mesh *m = calloc(1, sizeof *m);
    if (!m) return oom(err);
    const trn_water_body *b = &water->bodies[body];
    m->body = (int32_t)body;
    m->kind = b->kind;
    builder bd;
    memset(&bd, 0, sizeof bd);
    bd.water = water;
    bd.ground = ground;
    bd.body = b;
    bd.index = (int32_t)body;
    bd.follow = b->kind == TRN_WATER_RIVER && b->surface_mode == TRN_RIVER_SURFACE_FOLLOW_BED;
    bd.mesh = m;
    bd.nx = (size_t)water->cells_x + 1u;
    bd.err = err;

    /* The wet samples' extent and depth: only cells touching them can be the body's. */
    const size_t nz = (size_t)water->cells_z + 1u;
    uint32_t i0 = UINT32_MAX, i1 = 0, j0 = UINT32_MAX, j1 = 0;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < bd.nx; i++) {
            const size_t k = j * bd.nx + i;
            if (!water->wet[k] || water->owner[k] != bd.index) continue;
            i0 = (uint32_t)i < i0 ? (uint32_t)i : i0;
            i1 = (uint32_t)i > i1 ? (uint32_t)i : i1;
            j0 = (uint32_t)j < j0 ? (uint32_t)j : j0;
            j1 = (uint32_t)j > j1 ? (uint32_t)j : j1;
            const double surface = bd.follow ? (double)water->surface[k] : b->level;
            const double depth = surface - (double)ground->heights[k];
            if (depth > m->deepest) m->deepest = depth;
        }
    trn_status st = TRN_OK;
    if (i0 != UINT32_MAX) {
        /* Cells whose corners include a wet sample, clamped to the grid. */
        i0 = i0 ? i0 - 1u : 0;
        j0 = j0 ? j0 - 1u : 0;
        if (i1 == water->cells_x) i1--;
        if (j1 == water->cells_z) j1--;
        st = build(&bd, i0, i1, j0, j1);
        if (!st) st = finish_normals(&bd);
    }
    free(bd.normal_sum);
    if (st) {
        trn_water_mesh_free(m);
        return st;
    }
    *mesh = m;
    return TRN_OK;
}
