/* Stamp kernels: one brush stamp applied to a window of a grid (private to the library). */
#ifndef TRN_GEN_STAMPS_H
#define TRN_GEN_STAMPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

/* An inclusive box of sample indices; empty when i0 > i1 or j0 > j1. */
typedef struct trn_box {
    int64_t i0, j0, i1, j1;
} trn_box;

/* The grid that sample positions come from: x = i * size_x / cells_x, z = j * size_z / cells_z,
 * exactly as generation computes them. */
typedef struct trn_grid {
    uint32_t cells_x, cells_z;
    double size_x, size_z;
} trn_grid;

/* A window of per-sample values: row-major over box, box inside the grid. */
typedef struct trn_window {
    trn_grid grid;
    trn_box box;
    float *values; /* (box.i1 - box.i0 + 1) * (box.j1 - box.j0 + 1) */
} trn_window;

typedef enum trn_stamp_op {
    TRN_STAMP_ADD = 0, /* h += amount * w (raise: +strength, lower: -strength) */
    TRN_STAMP_TOWARD,  /* h += amount * w * (target - h) (flatten) */
    TRN_STAMP_SMOOTH,  /* h += amount * w * (mean of the pre-stamp 3x3 - h) */
    TRN_STAMP_BLEND,   /* h += amount * w * (source[k] - h) (region landform) */
    TRN_STAMP_EXCLUDE, /* m += (1 - m) * amount * w */
    TRN_STAMP_ERASE,   /* m *= 1 - amount * w */
} trn_stamp_op;

typedef struct trn_stamp {
    trn_stamp_op op;
    double x, z, radius, falloff, amount, target;
    const float *source; /* BLEND: full-grid heights to blend toward */
} trn_stamp;

bool trn_box_empty(const trn_box *b);
trn_box trn_box_intersect(trn_box a, trn_box b);
/* The bounding box of two boxes (either may be empty). */
trn_box trn_box_union(trn_box a, trn_box b);
trn_box trn_box_grow(trn_box b, int64_t by);
trn_box trn_grid_box(const trn_grid *grid);
trn_box trn_box_none(void);

/* The brush weight of trn_brush_weight. */
double trn_stamp_weight(double distance, double radius, double falloff);

/* Samples a stamp at (x, z) of radius can touch (weight > 0), clipped to the grid. */
trn_box trn_stamp_box(const trn_grid *grid, double x, double z, double radius);

/* Apply one stamp to the window (only the stamp's box within the window is touched).
 * scratch/scratch_cap: a reusable buffer for smooth's pre-stamp copy (grown with realloc).
 * Smooth's mean is over the 3x3 neighbours inside the window (the grid, when the window is the
 * whole grid). Fails only with TRN_ERR_NO_MEMORY. */
trn_status trn_stamp_apply(trn_window *win, const trn_stamp *stamp, float **scratch,
                           size_t *scratch_cap, trn_error *err);

/* Painted region override: every sample of box (row-major arrays over box) within the stamp
 * where amount * w >= 0.5 takes biome, source TRN_BIOME_FROM_REGION and rule -1. */
void trn_stamp_paint(const trn_grid *grid, trn_box box, const trn_stamp *stamp, uint8_t biome,
                     uint8_t *biomes, uint8_t *sources, int16_t *rules);

#endif
