/* Water surface meshes: each body's surface triangulated over the terrain grid, shores clipped. */
#ifndef TERRANE_WATER_MESH_H
#define TERRANE_WATER_MESH_H

#include <stdint.h>

#include "terrane/core.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One body's surface as an indexed triangle list, in terrain-local coordinates (x, z in world
 * units from sample (0, 0), y in metres; the frame of trn_water).
 *
 * Which triangles: every terrain triangle (cell (i, j) split from sample (i, j) to sample
 * (i + 1, j + 1), as trn_field_height_at interpolates) whose first wet corner, in the order
 * (i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1) of the cell's corners in the triangle, the body
 * owns: the triangle trn_water_query answers for with this body.
 * Its surface, as trn_water_query takes it: the body's level (lakes, oceans, level rivers), or
 * for follow-bed rivers water->surface at the corners the river owns and, at a corner it does
 * not own, the surface of the wet corner that chose the triangle; linear on the triangle.
 * The shore: each triangle is clipped to where the ground lies below the surface (both linear on
 * it, so the kept part is a convex polygon of 3 or 4 vertices, fanned from its first vertex), so
 * the mesh ends at the contour where the terrain meets the water, not a cell beyond it. A
 * triangle with a NaN corner is left out.
 * Vertices: grid samples and the single contour crossing on a grid edge (horizontal, vertical or
 * diagonal) are shared by every triangle that uses them, each computed once from the edge's
 * lower-index end, so neighbouring triangles meet exactly; only a follow-bed corner the river
 * does not own (and a crossing next to one) belongs to its triangle alone, its height depending
 * on the triangle. Order: cells row by row (j, then i),
 * the triangle 00-11-10 before 00-01-11, vertices as first used; equal inputs give equal
 * meshes on every run. */
typedef struct trn_water_mesh {
    int32_t body;        /* index into water->bodies */
    trn_water_kind kind; /* the body's kind */
    uint32_t vertex_count;
    float *positions; /* x, y, z per vertex */
    float *normals;   /* unit x, y, z per vertex: (0, 1, 0) on level surfaces; on follow-bed
                         rivers the area-weighted mean of the normals of the triangles that
                         share the vertex */
    uint32_t triangle_count;
    uint32_t *indices;    /* 3 per triangle, wound so that (b - a) x (c - a) points up (+y):
                             clockwise seen from above with x right and z up, which is a front
                             face for Unity's left-handed y-up axes */
    double area;          /* plan (XZ) area of the triangles, world units^2 */
    double bounds_min[3]; /* x, y, z extent of the vertices (0 when there are none) */
    double bounds_max[3];
    double deepest; /* the largest surface - ground at the body's wet samples (0 when
                       none): how deep the water gets */
} trn_water_mesh;

/* Build body's mesh. ground is the heights the water was resolved or refreshed on (same grid:
 * TRN_ERR_MISMATCH otherwise). A body with no wet sample gets an empty mesh (no vertices, no
 * triangles). *mesh is malloc'd; free it with trn_water_mesh_free. Errors: TRN_ERR_INVALID_ARGUMENT
 * (NULL arguments, a body index out of range), TRN_ERR_MISMATCH, TRN_ERR_LIMIT (more than
 * 2^32 - 1 vertices), TRN_ERR_NO_MEMORY. Thread-safe for distinct outputs. */
trn_status trn_water_mesh_new(const trn_water *water, const trn_field *ground, uint32_t body,
                              trn_water_mesh **mesh, trn_error *err);
void trn_water_mesh_free(trn_water_mesh *mesh); /* NULL-safe */

#ifdef __cplusplus
}
#endif

#endif
