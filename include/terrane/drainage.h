/* Drainage of a heightfield: depression filling, D8 flow, flow accumulation and closed basins. */
#ifndef TERRANE_DRAINAGE_H
#define TERRANE_DRAINAGE_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* D8 direction codes in flow_dir: code d moves (di, dj) = E (+1,0), SE (+1,+1), S (0,+1),
 * SW (-1,+1), W (-1,0), NW (-1,-1), N (0,-1), NE (+1,-1) for d = 0..7 (j grows with z).
 * TRN_DRAIN_OUTLET marks a sample whose water leaves the grid: every border sample and every
 * sample at or below sea level. */
#define TRN_DRAIN_OUTLET 8u

/* A closed basin: a depression of the input (8-connected samples that the fill raised, all to
 * the same spill level). A water pass can propose a lake of that level over it. */
typedef struct trn_basin {
    uint64_t id;               /* sink_j * (cells_x + 1) + sink_i: stable for this grid */
    uint32_t sink_i, sink_j;   /* the lowest input sample inside (ties: smallest index) */
    float sink_height;         /* input height there */
    float spill_level;         /* height the depression fills to before it overflows */
    uint32_t spill_i, spill_j; /* the unraised sample at spill_level the overflow leaves by
                                  (of several touching the basin: the smallest index) */
    uint64_t area;             /* samples raised by the fill (input height < spill_level) */
} trn_basin;

/* Results, tied to the grid they came from (cells and size copied from the field). */
typedef struct trn_drainage {
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    double sea_level;       /* as passed (NaN = no sea) */
    float *filled;          /* depression-filled heights (no epsilon: lakes are flat) */
    uint8_t *flow_dir;      /* D8 code 0..7 or TRN_DRAIN_OUTLET per sample */
    uint32_t *accumulation; /* samples draining through each sample, itself included */
    trn_basin *basins;      /* closed basins sorted by id */
    size_t basin_count;
    size_t temp_bytes_peak; /* peak of the working memory beyond these outputs */
} trn_drainage;

/* Fill depressions, derive D8 directions on the filled surface and accumulate flow. The fill
 * works by watersheds: every sample drains to its lowest lower neighbour (or an equal one
 * earlier in index order), each pit's watershed is labelled by following those links, the
 * lowest spill level of each watershed towards the outlets is solved on the graph of touching
 * watersheds (Barnes 2016's label graph), and each sample is raised to its watershed's level;
 * every pass reads the grid in row order. The filled heights are those of a priority flood
 * (Barnes et al. 2014): the lowest level at which each sample's water leaves the grid.
 * sea_level: samples at or below it drain out like the border; NaN for no sea. Directions:
 * the steepest strict descent on the filled surface (drop over the true sample spacing, ties to
 * the lowest code); a sample with no lower neighbour (a flat or a filled lake) points to the
 * neighbour of equal filled height that is fewest 8-connected steps, over the flat, from a
 * sample with a strict descent or an outlet (ties to a side before a diagonal, then the lowest
 * code), so flats drain along shortest paths towards their outlet and the directions depend
 * only on the filled surface (trn_drainage_tiled_compute gives the same bytes). Where several
 * samples qualify for a basin's spill sample the one with the smallest index is taken. Grids of
 * 2^18 samples or more run on OpenMP's threads (one strip of at least 256 rows each): every
 * pass of the fill, flat distances and the accumulation run by strips, and only the watershed
 * graph is solved on one; the closed basins come from that graph (watersheds whose pit the
 * fill raises, joined where they touch below their level). Results depend only on the grid and sea level, never
 * on the thread count. Memory beyond the outputs (9 bytes per sample): the watershed graph
 * (up to about 64 bytes per pair of touching watersheds and 24 per watershed: 0.17-0.32 bytes
 * per sample on 4096^2 landform terrain, 5.4 on noise with a pit every few samples) or 4 bytes
 * per flat sample queued while measuring flats, whichever is larger, reported in
 * temp_bytes_peak.
 * Errors:
 * TRN_ERR_INVALID_ARGUMENT for a field without heights or cells or with a NaN height (the message
 * names the sample); TRN_ERR_OVERFLOW / TRN_ERR_NO_MEMORY; TRN_ERR_CANCELLED when progress asks to
 * stop (out is left untouched). Progress stage "drainage". On success out owns new arrays (dispose
 * them with trn_drainage_dispose). */
trn_status trn_drainage_compute(const trn_field *field, double sea_level, trn_drainage *out,
                                trn_progress_fn progress, void *user, trn_error *err);

/* The closed basins trn_drainage_compute lists (the same array, sorted by id) from the source
 * heights it was given and the filled surface it made: for a drainage whose filled surface came
 * from elsewhere (trn_drainage_tiled_compute lists no basins). *basins is malloc'd (NULL when
 * there are none). Errors: TRN_ERR_INVALID_ARGUMENT (a missing argument, a field without cells),
 * TRN_ERR_OVERFLOW, TRN_ERR_NO_MEMORY. */
trn_status trn_drainage_basins(const trn_field *source, const float *filled, trn_basin **basins,
                               size_t *count, trn_error *err);

/* Free a drainage result's arrays and zero it. NULL is a no-op. */
void trn_drainage_dispose(trn_drainage *drainage);

/* Breach the closed depressions of field along drainage (trn_drainage_compute of this field):
 * its D8 directions, taken on the filled surface, lead from each pit over its spill sample to
 * an outlet; samples are taken in order of increasing accumulation (a donor always drains less
 * than its receiver, so each comes after all its donors) and each receiver not already lower
 * than the sample draining into it is lowered to just under it (the next float down). Heights
 * only fall: a notch is cut through each rim down to the pit, no flat is made; afterwards every
 * sample but the outlets has a strictly lower neighbour, so none lies in a closed depression.
 * Errors: TRN_ERR_INVALID_ARGUMENT (no field, heights or drainage), TRN_ERR_MISMATCH (grids
 * differ), TRN_ERR_NO_MEMORY (field unchanged). */
trn_status trn_drainage_breach(trn_field *field, const trn_drainage *drainage, trn_error *err);

/* The flow accumulation mask: accumulation / the largest accumulation of a non-outlet sample
 * for every non-outlet sample, 0 on outlets (border and sea). All 0 when every sample is an
 * outlet. mask is initialised here (same grid). */
trn_status trn_drainage_accumulation_mask(const trn_drainage *drainage, trn_mask *mask,
                                          trn_error *err);

/* Multiple-flow-direction accumulation (Freeman 1991, "Calculating catchment area with
 * divergent flow based on a regular grid", Computers & Geosciences 17; Quinn et al. 1991): each
 * sample passes its water to every strictly lower neighbour of the filled surface in proportion
 * to (drop / distance)^exponent, or along its D8 direction where no neighbour is lower (flats
 * and filled lakes drain as the flood reached them); outlets keep what they receive. Water
 * spreads over hillslopes instead of collapsing onto single D8 lines, which gives smoother
 * wetness and erosion masks; on a channel it converges as D8 does. out (caller-allocated, one
 * float per sample) receives samples' worth of water draining through each, itself included;
 * the water leaving through outlets sums to the sample count (up to float rounding). Samples
 * are processed in a topological order of the flow graph (a queue seeded in sample order), so
 * the result depends only on the drainage. exponent: finite, 0 < exponent <= 100 (Freeman's
 * 1.1; large values approach D8). Errors: TRN_ERR_INVALID_ARGUMENT (no drainage arrays, no
 * output, exponent out of range, named), TRN_ERR_NO_MEMORY. */
trn_status trn_drainage_mfd_accumulation(const trn_drainage *drainage, double exponent, float *out,
                                         trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
