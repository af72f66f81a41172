/* Aeolian dune fields: bending crest lines, asymmetric profiles, slip faces at repose. */
#ifndef TRN_GEN_DUNES_H
#define TRN_GEN_DUNES_H

#include <stdint.h>

#include "core/progress.h"
#include "terrane/core.h"

typedef enum trn_dune_pattern {
    TRN_DUNES_TRANSVERSE = 0, /* crests across the wind: transverse ridges, barchans */
    TRN_DUNES_LINEAR = 1      /* crests along the wind: linear (seif) dunes */
} trn_dune_pattern;

/* A dune field's shape, every length in metres and every angle in degrees. */
typedef struct trn_dune_params {
    trn_dune_pattern pattern;
    double base_height;       /* the interdune floor */
    double height;            /* the tallest crests above the floor */
    double wavelength;        /* crest to crest */
    double wind_heading;      /* the way the sand moves, from +X toward +Z */
    double stoss_angle;       /* mean slope of the windward side (1..25) */
    double repose_angle;      /* slip faces (20..40) */
    double sand_supply;       /* 0..1: 1 continuous ridges, lower breaks them into barchans */
    double crest_warp;        /* how far crest lines bend */
    double warp_feature_size; /* over what distance they bend */
    double defect_spacing;    /* between crest junctions; 0 = none, else at least 3 wavelengths */
    double horn;              /* wavelengths a crest's low flanks run ahead of its middle */
} trn_dune_params;

/* Defaults: transverse, 30 m crests 400 m apart, wind toward +X, stoss 8, repose 32, supply
 * 0.8, warp 80 m over 1200 m, a junction every 1600 m, horn 0.35. */
void trn_dune_params_default(trn_dune_params *p);

/* A NULL on success, else a static description of the first parameter out of range. */
const char *trn_dune_params_problem(const trn_dune_params *p);

/* The dune field over f (allocated heights; its grid and size as for any generator), from
 * seed, then the avalanche pass. Each sample before the avalanche depends only on its world
 * position, so the result is the same on any thread count. */
trn_status trn_dunes_fill(const trn_dune_params *p, uint64_t seed, trn_field *f, int threads,
                          const trn_progress *pr, trn_error *err);

/* The avalanche pass: where a slope on the grid is steeper than repose, sand slides off it and
 * comes to rest at repose at its foot. Every sample is raised to at least each neighbour's
 * height less tan(repose) times their distance, over 16 directions (the 8 nearest and the 8
 * knight's moves, so a face turned between them stands at most 2.8% steeper in tangent); the
 * foot of an over-steep face grows outward, its brink stays. Deterministic (two raster scans).
 * Returns the samples raised. */
uint64_t trn_dunes_avalanche(trn_field *f, double repose_angle);

#endif
