/* Stamp kernels: raise/lower, flatten, smooth, region blend, exclusion and region paint, each
 * touching only the stamp's bounding box within a window of the grid. */
#include "gen/stamps.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/recipe.h"

double trn_brush_weight(double distance, double radius, double falloff)
{
    if (!(distance < radius)) return 0.0; /* also NaN and radius <= 0 */
    if (distance < 0) distance = -distance;
    double inner = (1.0 - falloff) * radius;
    if (distance <= inner) return 1.0;
    /* t runs 0 at radius to 1 at the inner edge; smoothstep t^2 (3 - 2t). */
    double t = (radius - distance) / (radius - inner);
    return t * t * (3.0 - 2.0 * t);
}

bool trn_box_empty(const trn_box *b)
{
    return b->i0 > b->i1 || b->j0 > b->j1;
}

trn_box trn_box_none(void)
{
    trn_box b = {1, 1, 0, 0};
    return b;
}

trn_box trn_box_intersect(trn_box a, trn_box b)
{
    trn_box r;
    r.i0 = a.i0 > b.i0 ? a.i0 : b.i0;
    r.j0 = a.j0 > b.j0 ? a.j0 : b.j0;
    r.i1 = a.i1 < b.i1 ? a.i1 : b.i1;
    r.j1 = a.j1 < b.j1 ? a.j1 : b.j1;
    return trn_box_empty(&r) ? trn_box_none() : r;
}

trn_box trn_box_union(trn_box a, trn_box b)
{
    if (trn_box_empty(&a)) return b;
    if (trn_box_empty(&b)) return a;
    trn_box r;
    r.i0 = a.i0 < b.i0 ? a.i0 : b.i0;
    r.j0 = a.j0 < b.j0 ? a.j0 : b.j0;
    r.i1 = a.i1 > b.i1 ? a.i1 : b.i1;
    r.j1 = a.j1 > b.j1 ? a.j1 : b.j1;
    return r;
}

trn_box trn_box_grow(trn_box b, int64_t by)
{
    if (trn_box_empty(&b)) return b;
    b.i0 -= by;
    b.j0 -= by;
    b.i1 += by;
    b.j1 += by;
    return b;
}

trn_box trn_grid_box(const trn_grid *grid)
{
    trn_box b = {0, 0, (int64_t)grid->cells_x, (int64_t)grid->cells_z};
    return b;
}

double trn_stamp_weight(double distance, double radius, double falloff)
{
    return trn_brush_weight(distance, radius, falloff);
}

/* Index range of samples whose coordinate can lie within (c - r, c + r): conservative by one
 * sample each way, as i * size / cells rounds. */
static void axis_range(double c, double r, double size, uint32_t cells, int64_t *lo, int64_t *hi)
{
    const double scale = (double)cells / size;
    double a = floor((c - r) * scale) - 1.0, b = ceil((c + r) * scale) + 1.0;
    if (a < 0.0) a = 0.0;
    if (b > (double)cells) b = (double)cells;
    *lo = (int64_t)a;
    *hi = (int64_t)b;
}

trn_box trn_stamp_box(const trn_grid *grid, double x, double z, double radius)
{
    if (!(radius > 0.0) || !isfinite(radius) || !isfinite(x) || !isfinite(z)) return trn_box_none();
    if (x + radius < 0.0 || z + radius < 0.0 || x - radius > grid->size_x ||
        z - radius > grid->size_z)
        return trn_box_none();
    trn_box b;
    axis_range(x, radius, grid->size_x, grid->cells_x, &b.i0, &b.i1);
    axis_range(z, radius, grid->size_z, grid->cells_z, &b.j0, &b.j1);
    return trn_box_empty(&b) ? trn_box_none() : b;
}

static double sample_weight(const trn_grid *grid, const trn_stamp *s, int64_t i, int64_t j)
{
    const double x = (double)i * grid->size_x / (double)grid->cells_x;
    const double z = (double)j * grid->size_z / (double)grid->cells_z;
    const double dx = x - s->x, dz = z - s->z;
    return trn_stamp_weight(sqrt(dx * dx + dz * dz), s->radius, s->falloff);
}

trn_status trn_stamp_apply(trn_window *win, const trn_stamp *stamp, float **scratch,
                           size_t *scratch_cap, trn_error *err)
{
    const trn_box wb = win->box;
    const trn_box box =
        trn_box_intersect(trn_stamp_box(&win->grid, stamp->x, stamp->z, stamp->radius), wb);
    if (trn_box_empty(&box)) return TRN_OK;
    const size_t ww = (size_t)(wb.i1 - wb.i0 + 1);
    float *v = win->values;
    /* Smooth reads the pre-stamp surface of its box plus a one-sample border: copy it first. */
    trn_box pre = trn_box_none();
    size_t pw = 0;
    if (stamp->op == TRN_STAMP_SMOOTH) {
        pre = trn_box_intersect(trn_box_grow(box, 1), wb);
        pw = (size_t)(pre.i1 - pre.i0 + 1);
        const size_t need = pw * (size_t)(pre.j1 - pre.j0 + 1);
        if (need > *scratch_cap) {
            float *p = realloc(*scratch, need * sizeof *p);
            if (!p)
                return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                     "smooth stamp: out of memory for %zu samples", need);
            *scratch = p;
            *scratch_cap = need;
        }
        for (int64_t j = pre.j0; j <= pre.j1; j++)
            memcpy(*scratch + (size_t)(j - pre.j0) * pw,
                   v + (size_t)(j - wb.j0) * ww + (size_t)(pre.i0 - wb.i0), pw * sizeof *v);
    }
    const size_t gw = (size_t)win->grid.cells_x + 1u;
    for (int64_t j = box.j0; j <= box.j1; j++) {
        float *row = v + (size_t)(j - wb.j0) * ww;
        for (int64_t i = box.i0; i <= box.i1; i++) {
            const size_t k = (size_t)(i - wb.i0);
            const double w = sample_weight(&win->grid, stamp, i, j);
            if (w <= 0.0) continue;
            const double t = stamp->amount * w;
            const double h = (double)row[k];
            double out = h;
            switch (stamp->op) {
            case TRN_STAMP_ADD:
                out = h + t;
                break;
            case TRN_STAMP_TOWARD:
                out = h + t * (stamp->target - h);
                break;
            case TRN_STAMP_BLEND:
                out = h + t * ((double)stamp->source[(size_t)j * gw + (size_t)i] - h);
                break;
            case TRN_STAMP_SMOOTH: {
                double sum = 0.0;
                int n = 0;
                for (int64_t b = j - 1; b <= j + 1; b++) {
                    if (b < pre.j0 || b > pre.j1) continue;
                    for (int64_t a = i - 1; a <= i + 1; a++) {
                        if (a < pre.i0 || a > pre.i1) continue;
                        sum += (double)(*scratch)[(size_t)(b - pre.j0) * pw + (size_t)(a - pre.i0)];
                        n++;
                    }
                }
                out = h + t * (sum / (double)n - h);
                break;
            }
            case TRN_STAMP_EXCLUDE:
                out = h + (1.0 - h) * t;
                break;
            case TRN_STAMP_ERASE:
                out = h * (1.0 - t);
                break;
            }
            row[k] = (float)out;
        }
    }
    return TRN_OK;
}

void trn_stamp_paint(const trn_grid *grid, trn_box box, const trn_stamp *stamp, uint8_t biome,
                     uint8_t *biomes, uint8_t *sources, int16_t *rules)
{
    const trn_box sb =
        trn_box_intersect(trn_stamp_box(grid, stamp->x, stamp->z, stamp->radius), box);
    if (trn_box_empty(&sb)) return;
    const size_t bw = (size_t)(box.i1 - box.i0 + 1);
    for (int64_t j = sb.j0; j <= sb.j1; j++) {
        const size_t row = (size_t)(j - box.j0) * bw;
        for (int64_t i = sb.i0; i <= sb.i1; i++) {
            if (!(stamp->amount * sample_weight(grid, stamp, i, j) >= 0.5)) continue;
            const size_t k = row + (size_t)(i - box.i0);
            biomes[k] = biome;
            sources[k] = (uint8_t)TRN_BIOME_FROM_REGION;
            rules[k] = -1;
        }
    }
}
