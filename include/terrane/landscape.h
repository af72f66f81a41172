/* Landscape evolution: tectonic uplift against stream-power fluvial incision and hillslope
 * diffusion, solved with the implicit O(n) scheme of Braun and Willett (2013). */
#ifndef TERRANE_LANDSCAPE_H
#define TERRANE_LANDSCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dz/dt = U - K A^m S^n + Kd laplacian(z), on the field's grid:
 * - U: uplift (height units per time unit), times uplift_mask[k] when a mask is given;
 * - A: drainage area in world units^2 (samples draining through the sample, itself included,
 *   times the cell area dx * dz), over the receivers of routing (below) on the current surface;
 * - S: slope to the receiver (drop over the true distance, dx, dz or the diagonal);
 * - base level: every border sample and every sample at or below sea_level (when finite); they
 *   do not rise. A border sample follows the land down: after each step it is lowered to its
 *   lowest non-border neighbour when that is lower, so rivers leave the map where they meet
 *   its edge and no wall of initial heights remains (fixed_border keeps the border's heights
 *   instead); samples under the sea stay as they are. With border_outlets only the edges' low
 *   points are base level (a ring of samples outside the map, walls elsewhere);
 * - with deposition G > 0 (Yuan et al. 2019) the law gains + (G / A) Qs, Qs the sediment flux
 *   (uplift minus change, summed over the drainage area), solved implicitly and exactly in two
 *   passes over the stack (each height affine in its receiver's); n = 1, D8 or Rho8 only.
 * Each step: uplift; receivers (routing: D8 steepest strict descent, Rho8 or MFD); closed
 * depressions (an interior sample with no lower neighbour) are routed without changing heights, after Cordonnier, Bovy
 * and Braun (2019): the basins of the receiver forest joined by their lowest passes in a
 * minimum spanning tree grown from the base level, and the receivers from each basin's pass
 * back to its pit reversed, so it drains over its sill; the stack order and drainage area (Braun
 * and Willett 2013); incision, implicit along the stack from base level upstream, skipping samples
 * not above their receiver (lakes): with n = 1 z_i = (z_i + F z_r) / (1 + F), F = K dt A^m / d;
 * other n by Newton's method on z_i - z_old + F ((z_i - z_r) / d)^n = 0; then explicit diffusion
 * (substepped to stay stable) and the critical-slope limit (a sample higher above its receiver than
 * tan(critical_slope) x d is lowered to that, downstream first). Heights are kept in double
 * precision during the run and stored as float at the end; every stage either runs in stack order
 * or computes each sample from the previous stage's values, so results are bit-identical for any
 * thread count. */
/* How each sample picks its receiver. D8: the steepest of the eight neighbours, which locks
 * channels onto the grid's axes and diagonals (straight valleys, slopes facing multiples of 45
 * degrees). Rho8 (Fairfield and Leymarie 1991): the steepest with the diagonals' run drawn
 * between one and two cells per sample (a hash of the sample and the seed, the same each step),
 * unbiased in direction on average, so valleys follow the land, not the grid; one receiver
 * per sample, so the implicit solve, the lakes' routing and the cost are D8's. MFD (Quinn et
 * al. 1991; Schott et al. 2023): every lower neighbour takes a share of the water in
 * proportion to the slope to it (samples under a lake keep their one Rho8 receiver), and the
 * implicit incision runs over all receivers in a topological order: water spreads on open
 * slopes and gathers in hollows, so no one-cell rills; about 4 times D8's cost per step. */
typedef enum trn_flow_routing {
    TRN_ROUTING_D8 = 0,
    TRN_ROUTING_RHO8 = 1,
    TRN_ROUTING_MFD = 2,
    TRN_ROUTING_SAME = 3, /* trn_evolve_options.fine_routing only: as sp.routing */
} trn_flow_routing;

typedef struct trn_stream_power_params {
    double uplift;            /* U >= 0 (default 1e-3) */
    const float *uplift_mask; /* optional per-sample factor (field layout), finite >= 0 */
    double erodibility;       /* K > 0 (default 2e-5) */
    const float *erodibility_mask; /* optional per-sample factor on K (field layout), finite
                                      > 0: rock of varied strength, so channels find the weak
                                      rock and valley spacing varies from place to place */
    double m;                 /* area exponent, 0 < m <= 2 (default 0.45) */
    double n;                 /* slope exponent, 0 < n <= 4 (default 1) */
    double diffusion;         /* Kd >= 0, world units^2 per time unit (default 0.01) */
    double diffusion_rock;    /* -4..4 (default 0: uniform creep): with an erodibility_mask,
                                 Kd at each sample times the mask to this power (between two
                                 samples the mean of theirs). Valley spacing goes with creep
                                 over incision (Perron et al. 2008), so at -1 the rock that
                                 incises fastest creeps slowest and the spacing varies twice as
                                 far as with the mask alone, without lowering the weak rock
                                 further */
    double channel_threshold; /* drainage area (world units^2) below which a sample does not
                                 incise: hillslopes shaped by diffusion and the critical slope
                                 alone (default 0: every sample incises) */
    double critical_slope;    /* degrees, 0 (off) or 0 < c < 90 (default 0) */
    double critical_rock;     /* -4..4 (default 0: one critical slope everywhere): with a
                                 critical_slope and an erodibility_mask, tan(critical_slope) at
                                 each sample times the mask to this power, so at -1 strong rock
                                 (mask 1/2) stands at twice the gradient weak rock (mask 2) does
                                 at half: threshold slopes follow rock strength (Schmidt and
                                 Montgomery 1995; Korup 2008) instead of pinning one angle */
    double creep_slope;       /* degrees, 0 (off, linear creep) or 0 < c < 90 (default 0):
                                 nonlinear creep (Roering, Kirchner and Dietrich 1999): the
                                 flux between two samples is Kd S / (1 - (S / Sc)^2), S their
                                 gradient and Sc tan(creep_slope), so steep sides creep fast
                                 towards a planar threshold while gentle crests creep at Kd;
                                 the factor stops at TRN_CREEP_FACTOR_MAX (S >= 0.87 Sc), and
                                 the creep's substeps grow by that factor */
    double dt;                /* time step > 0 (default 1000) */
    uint32_t steps;           /* >= 1 (default 100) */
    double sea_level;         /* samples at or below are base level; NaN: only the border */
    bool sea_surface;         /* the samples under the sea level stand at it during the run
                                 (default false: at their own heights): the water's surface,
                                 not the bed under it, is the level their tributaries reach, so
                                 no land is cut or worn below it beside a lake or the sea and a
                                 hollow's lake fills it to the hillslopes; their own heights come
                                 back at the end (through trn_landscape_evolve, which runs every
                                 level of a coarser evolution on the input held at the sea level,
                                 ramped up toward the shore at about 15 degrees so the land's
                                 foot stands on no step) */
    double sea_surface_depth; /* with sea_surface, > 0: the heights come back at most this far
                                 below the sea level (a bed deeper than that is filled flat to
                                 it, as lake sediment would); 0 (default): as they came */
    int threads;              /* 0: OpenMP's default (one thread under 2^17 samples, where more
                                 only add waiting); results never depend on it */
    bool fixed_border;        /* keep the border's initial heights (default false: follow) */
    bool border_outlets;      /* base level only where the land leaves the map (default false:
                                 every border sample): the border samples that are the lowest
                                 of their stretch of edge (within 1/32 of its length either
                                 side) drain off the map; the rest of the border is land like the
                                 interior, rising and eroding, with no flow across the edge, so
                                 the land does not ramp down to the edge and rivers leave it at
                                 the outlets (with fixed_border the outlets keep their heights) */
    double deposition;        /* G >= 0, dimensionless (default 0: none): sediment deposition
                                 after Yuan et al. 2019, dz/dt gains G Qs / A, Qs the sediment
                                 flux (uplift minus change, integrated over the drainage area);
                                 needs n = 1 and single-flow routing (D8 or Rho8) */
    trn_flow_routing routing; /* default TRN_ROUTING_RHO8 */
    uint64_t seed;            /* Rho8's draws (default 0); the same seed, the same result */
    float *drainage_area;     /* optional output (field layout): each sample's drainage area in
                                 world units^2 after the last step */
} trn_stream_power_params;

/* The largest factor nonlinear creep puts on Kd (creep_slope). */
#define TRN_CREEP_FACTOR_MAX 4.0

void trn_stream_power_params_default(trn_stream_power_params *p);

typedef struct trn_stream_power_report {
    uint32_t steps;           /* steps run */
    uint64_t pits_routed;     /* closed depressions routed across their passes, all steps */
    uint32_t steps_with_pits; /* steps that had any */
    double last_max_change;   /* largest |dz| of a sample in the last step */
    double last_mean_change;  /* mean dz over non-base samples in the last step (uplift minus
                                 erosion: 0 at steady state) */
    double max_area;          /* largest drainage area, world units^2 */
} trn_stream_power_report;

/* Evolve field in place for p->steps steps. Errors: TRN_ERR_INVALID_ARGUMENT for a missing field
 * or heights, a NaN height (named), a parameter out of range (named: "erodibility: expected > 0,
 * found 0"), a grid under 3 x 3 samples; TRN_ERR_NO_MEMORY; TRN_ERR_CANCELLED when progress asks
 * (stage "stream power"; the field is left as it was). report may be NULL. */
trn_status trn_stream_power_run(trn_field *field, const trn_stream_power_params *p,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err);

/* Evolution with amplification: large terrains evolve on a coarser grid (every coarsen-th
 * cell: coarse cells = ceil(cells / coarsen) over the same extent, each coarse sample the mean
 * of the fine samples nearest to it), are brought back to the full grid by bicubic
 * (Catmull-Rom) interpolation, and get back the input's finer detail (the input minus its own
 * coarse version, interpolated the same way), scaled by detail x min(1, tan(slope) / tan(30
 * degrees)) of the evolved surface and faded out of channels (1 - min(1, area / channel_area), area
 * interpolated from the coarse run): ridges and hillslopes keep texture that follows the new
 * valleys, valley floors stay smooth. sp.drainage_area (optional, full grid) receives the coarse
 * run's drainage area interpolated bilinearly. coarsen 1 runs trn_stream_power_run on the
 * field itself (detail and fine_steps unused).
 * fine_steps > 0 (coarsened runs): the amplified surface then runs that many steps of the same
 * law on the full grid (the same K, m, n, channel threshold, critical slope, sea level, border
 * and uplift, the uplift mask interpolated bilinearly) with dt / coarsen and diffusion /
 * coarsen, so each step keeps the coarse run's numbers per cell (a fine cell is coarsen times
 * shorter): a channel of a given drainage area keeps the implicit weight K dt A^m / d, so a
 * step cuts the returned detail as deeply, relative to its drops, as a coarse step cut the
 * coarse relief, and creep keeps the diffusion number Kd dt / d^2, so it rounds the detail no
 * faster than the coarse run rounded its cells (with the world-unit Kd and dt it would smooth
 * the detail away before rivers cut it). The evolved network moves by a coarsen-th of a coarse
 * step (uplift holds it at its steady state): the large shape stays, and the fine drainage
 * carves the detail into tributaries of the evolved valleys and drains its pits over their
 * sills. sp.drainage_area then receives the full grid's own drainage area; report stays the
 * coarse run's. */
/* How a coarsened run comes back to the full grid. WARPED_SPLINE: an interpolating cubic
 * B-spline (C2: no curvature jumps at the coarse samples) sampled through a smooth warp of
 * about half a coarse cell drawn from sp.seed, so its knot lines are not straight lines of the
 * grid; the input's detail (Catmull-Rom on the full grid), the slope weight, the drainage area
 * and the uplift mask through the same warp (area and mask smoothed, never below 0), so the
 * whole amplified surface is warped. CUBIC:
 * Catmull-Rom heights with bilinear area and slope, whose curvature jumps every coarse cell and
 * leaves creases along the grid (the earlier method). */
typedef enum trn_upsample_method {
    TRN_UPSAMPLE_WARPED_SPLINE = 0,
    TRN_UPSAMPLE_CUBIC = 1,
} trn_upsample_method;

typedef struct trn_evolve_options {
    trn_stream_power_params sp; /* the run on the coarse grid */
    uint32_t coarsen;           /* 1..64 (default 1) */
    double detail;              /* 0..4 (default 1) */
    double channel_area;        /* > 0, world units^2 (default 1e6) */
    uint32_t fine_steps;        /* 0..1000 (default 0: the amplified surface as it is) */
    trn_upsample_method upsample; /* default TRN_UPSAMPLE_WARPED_SPLINE */
    trn_flow_routing fine_routing; /* the fine steps' routing (default TRN_ROUTING_SAME: as
                                      sp.routing) */
    uint32_t cascade_steps; /* 0..1000 (default 0: straight from the coarse grid to the full
                               one). N: with an even coarsen of 4 or more, the run comes back
                               through every grid twice as fine as the one before (coarsen / 2,
                               / 4, ... of the full grid's cell), each brought back from the
                               one before as the full grid is and running N steps of the same
                               law there (dt and diffusion divided by its factor, as the fine
                               steps): each level cuts valleys at its own scale, tributaries of
                               the coarser ones, so valleys of several sizes nest. */
    /* fine_tile > 0: the fine steps keep their state in square tiles of that many samples,
     * worked on one at a time, in unlinked files under fine_dir (NULL: in memory), so their
     * memory no longer grows with the grid (about 26 bytes a sample on disk instead of about 47
     * in memory); the same bytes as on the whole grid. Fine steps with mfd routing or a
     * critical slope, and a cascade's levels of at most a sixteenth of the output grid's cells
     * (whose whole-grid state is smaller than the output grid's tiled steps hold around them),
     * run on the whole grid whatever this says (default 0: whole grid). */
    uint32_t fine_tile;
    const char *fine_dir;
    /* With fine_tile: the processes that share the fine steps' tiles (terrane/comm.h; each
     * process calls with the same field and options and works on its run of tiles, the bytes
     * of one process). NULL (default): this process alone. */
    struct trn_comm *fine_comm;
    /* With fine_comm: NULL (default), every process gets the whole result; else the output
     * grid's fine steps hand process k only its rows fine_bands[k] .. fine_bands[k + 1] - 1
     * (comm's size + 1 row starts from 0 to the field's rows, in order) of the heights and
     * drainage area, the other rows left unspecified: no process receives the whole result.
     * Ignored (the whole result on every process) with a sea surface, whose shore ramp reads
     * the whole grid. */
    const uint32_t *fine_bands;
    /* true: the field's heights (malloc'd) are freed as soon as the fine steps' input is made,
     * a whole grid less at the peak; on an error the field is then left without heights
     * (NULL). Default false: on an error the field is as it was. */
    bool free_input;
} trn_evolve_options;

void trn_evolve_options_default(trn_evolve_options *o);

/* Evolve field in place. Errors: those of trn_stream_power_run (on the coarse grid, so a
 * coarsened grid under 3 x 3 samples is refused naming coarsen), a parameter out of range
 * (named), TRN_ERR_NO_MEMORY, TRN_ERR_CANCELLED (field unchanged). Deterministic for any
 * thread count. */
trn_status trn_landscape_evolve(trn_field *field, const trn_evolve_options *o,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
