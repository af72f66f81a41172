/* Hydraulic erosion (droplets, or sediment transport over the drainage tree) plus thermal
 * relaxation over a heightfield, with a transport ledger. */
#ifndef TERRANE_EROSION_H
#define TERRANE_EROSION_H

#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trn_erosion_quality {
    TRN_EROSION_FINAL = 0,   /* default */
    TRN_EROSION_PREVIEW = 1, /* fewer droplets, shorter walks, no thermal pass */
} trn_erosion_quality;

/* How the hydraulic pass moves material. */
typedef enum trn_erosion_mode {
    /* Droplets detach material and drop it where they slow down (the classic particle method
     * below): sharp gullies, some of them closed pits. The default. */
    TRN_EROSION_DETACH = 0,
    /* Transport-limited stream power over the whole grid (Davy and Lague 2009's xi-q model, as
     * in fastscape's sediment term): each step routes water down the depression-filled D8
     * tree, carries sediment up to a capacity capacity / 100 * sqrt(A) * drop per sample (A the
     * drainage area in samples), erodes where the load is below it and deposits where it is
     * above, fills depressions flat up to their spill level, and never lowers a sample below
     * its receiver nor raises it above its lowest donor: flat valley floors and alluvial fans
     * at slope breaks, no pits dug. Droplet parameters (droplets, lifetime, inertia, radius,
     * gravity, evaporation, min_slope) are not used. */
    TRN_EROSION_TRANSPORT = 1,
} trn_erosion_mode;

/* Parameters of the classic particle method (Mei/Beyer, as popularised by S. Lague). Distances
 * are in samples (one step of a droplet is one sample spacing). As the classic method runs on a
 * 0..1 heightmap, heights enter its slope, capacity and speed formulas divided by the field's
 * height range (max - min): the parameters mean the same on any vertical scale and the
 * changes scale with the relief. Defaults are those of trn_erosion_params_default(p,
 * TRN_EROSION_FINAL). */
typedef struct trn_erosion_params {
    uint32_t droplets;      /* per iteration; 0 = droplet_density * samples (default 0) */
    double droplet_density; /* droplets per sample when droplets is 0 (final 0.5, preview 0.15) */
    uint32_t iterations;    /* times the droplet set is run, each with new starts (default 1;
                               0 = no droplets, thermal relaxation only) */
    uint32_t lifetime;      /* steps per droplet, 1..512 (final 30, preview 12) */
    double inertia;         /* 0..1, share of the old direction kept (default 0.05) */
    double capacity;        /* sediment capacity factor, >= 0 (default 4) */
    double min_slope;       /* floor of the normalised slope in the capacity formula (0.01) */
    double erosion_rate;    /* 0..1 share of free capacity taken per step (default 0.3) */
    double deposition_rate; /* 0..1 share of excess sediment dropped per step (default 0.3) */
    double evaporation;     /* 0..1 water lost per step (default 0.01) */
    uint32_t radius;        /* erosion brush radius in samples, 1..16 (default 3) */
    double gravity;         /* speed gained per unit slope descended (default 4) */
    /* Thermal relaxation after the droplets: pairs of neighbours steeper than the talus angle
     * exchange material. */
    double talus_angle;          /* degrees, 0..89 (default 35) */
    double thermal_strength;     /* 0..1 (default 0.5) */
    uint32_t thermal_iterations; /* 0 = no thermal pass (final 10, preview 0) */
    int threads;                 /* 0 = OpenMP default; results never depend on it */
    /* Optional per-sample multiplier of erosion_rate (samples floats, >= 0, the field's
     * layout), read at the droplet's cell: the graph's drainage input makes channels erode
     * more. NULL = 1 everywhere. The caller keeps it alive during the run. */
    const float *rate_scale;
    trn_erosion_mode mode;    /* default TRN_EROSION_DETACH */
    uint32_t transport_steps; /* transport mode: steps over the grid, 1..10000 (final 40,
                                 preview 16); checked in both modes */
    double diffusion;         /* transport mode: hillslope diffusion after each step, the share
                                 of each 4-neighbour difference exchanged, 0..0.25 (default
                                 0.02); checked in both modes */
    /* Detach mode: the droplets' grid cell in world units (default 0: the field's own grid).
     * On a field whose cells are finer, the droplets run on a grid of about this cell over the
     * same extent (the field area-averaged onto it, rate_scale too) and their change comes
     * back by an interpolating C2 spline through a smooth warp (trn_field_upsample_spline), so
     * lifetime, radius and droplet_density are lengths and densities of the world: any finer
     * output grid gets the same gullies instead of narrower, more closely spaced ones, and the
     * droplets cost no more. Thermal relaxation then runs on the field's grid. The ledger's
     * amounts are the droplet grid's times (field samples / droplet-grid samples); droplets
     * and steps are those run. On a field as coarse or coarser it changes nothing. */
    double droplet_cell;
} trn_erosion_params;

/* Material moved by the droplets (or the transport steps), in sample-height units (metres
 * summed over samples).
 * eroded = deposited + exported + suspended up to float rounding. Thermal relaxation is not
 * in it: it moves material between samples and conserves it. */
typedef struct trn_erosion_ledger {
    double eroded;     /* taken from the field into droplets */
    double deposited;  /* put back on the field */
    double exported;   /* carried out over the field's edges (all edges are open) */
    double suspended;  /* still carried when droplets died (lifetime over, stopped on a flat);
                          it is not dropped, so a dying droplet never leaves a spike */
    uint64_t droplets; /* droplets run (0 in transport mode) */
    uint64_t steps;    /* droplet moves made, all droplets together (<= droplets * lifetime);
                          in transport mode the grid steps run */
} trn_erosion_ledger;

typedef struct trn_erosion_result {
    trn_field field;     /* the eroded heights, same grid as the input */
    trn_mask deposition; /* max(change, 0) / largest rise; all 0 when nothing rose */
    trn_mask erosion;    /* max(-change, 0) / largest fall; all 0 when nothing fell */
    float *change;       /* signed height change per sample (eroded - input), samples floats */
    trn_erosion_ledger ledger;
} trn_erosion_result;

/* Fill p with the defaults of a quality preset. */
void trn_erosion_params_default(trn_erosion_params *p, trn_erosion_quality quality);

/* Erode a copy of field. In transport mode the steps run in one thread in the drainage tree's
 * order (ties broken by sample index), so the result does not depend on threads either.
 * Droplet i of iteration k starts at a position hashed from
 * (trn_subseed_of(world_seed, TRN_CHANNEL_EROSION), k * droplets + i), never from a shared
 * random stream. The parallel scheme (tiles in a checkerboard of four phases, see
 * docs/recipes.md) makes the result bit-identical for any thread count.
 * Errors: TRN_ERR_INVALID_ARGUMENT naming the parameter out of range or a field without
 * heights or with fewer than 2x2 samples; TRN_ERR_NO_MEMORY; TRN_ERR_CANCELLED when progress
 * asks to stop (checked between batches or steps; out is then left untouched). Progress
 * stages "erosion" (or "transport") and "thermal". */
trn_status trn_erosion_run(const trn_field *field, const trn_erosion_params *params,
                           uint64_t world_seed, trn_erosion_result *out, trn_progress_fn progress,
                           void *user, trn_error *err);

/* Free a result and zero it. NULL is a no-op. */
void trn_erosion_result_dispose(trn_erosion_result *result);

#ifdef __cplusplus
}
#endif

#endif
