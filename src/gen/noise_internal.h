/* Gradient-noise kernels shared by landforms and moisture (internal to src/gen and tests). */
#ifndef TRN_GEN_NOISE_INTERNAL_H
#define TRN_GEN_NOISE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/recipe.h"

#define TRN_NOISE_MAX_OCTAVES 16u

/* Largest |value| of one octave before scaling is 1.72679661 (found by maximising the corner
 * weights times the best-aligned of the 8 gradients over the cell); this scale keeps every
 * octave inside [-0.9995, 0.9995], so sums normalised by the amplitude sum stay in [-1, 1]. */
#define TRN_NOISE_SCALE 0.5788f
/* Standard deviation of one octave over the plane. With independent corner gradients g (mean
 * 0, E[g_x^2] = E[g_z^2] = (L^2 + 1) / 2 for L = 1 + sqrt(2)) and the faded bilinear weights,
 * the variance is TRN_NOISE_SCALE^2 * 4 (L^2 + 1) A B with A = int (1 - fade(t))^2 t^2 dt =
 * 535/18018 and B = int (1 - fade(t))^2 dt = 181/462 over [0, 1]: sd 0.32625770. Measured
 * over 10^8 random points: 0.32625 (tests/test_noise.c checks it over fewer). Octaves have
 * independent lattice seeds, so a sum of octaves with amplitudes a_i has sd TRN_NOISE_OCTAVE_SD *
 * sqrt(sum a_i^2). */
#define TRN_NOISE_OCTAVE_SD 0.32625770
/* fbm's value is 0.5 + 0.5 * z / TRN_FBM_SPAN_SIGMAS for the sum z in standard deviations,
 * clamped to [0, 1]: +-2.5 sd spans the range. */
#define TRN_FBM_SPAN_SIGMAS 2.5
/* Ridged values map the 1st and 99th percentiles of their sum to these, clamped to [0, 1]. */
#define TRN_RIDGED_LOW 0.02
#define TRN_RIDGED_HIGH 0.98
/* Roughness steps of the ridged percentile table: roughness k / TRN_RIDGED_STEPS. */
#define TRN_RIDGED_STEPS 20u
/* Lattice hashing: a cell's hash is (seed ^ x*PRIME_X ^ z*PRIME_Z) * HASH_MUL, all modulo 2^32;
 * its top bit swaps the gradient's axes and the next two give the signs (8 directions, 22.5
 * degrees off the axes, every 45 degrees). */
#define TRN_NOISE_PRIME_X 501125321u
#define TRN_NOISE_PRIME_Z 1136930381u
#define TRN_NOISE_HASH_MUL 0x27d4eb2du
/* 1 + sqrt(2): the long component of a gradient (the short one is 1). */
#define TRN_NOISE_GRADIENT_LONG 2.41421356237309505f

/* Instruction sets the kernels are compiled for; TRN_NOISE_ISA_BEST picks the best this CPU
 * runs. Every variant gives bit-identical results (same operations in the same order). */
typedef enum trn_noise_isa {
    TRN_NOISE_ISA_BEST = -1,
    TRN_NOISE_ISA_DEFAULT = 0, /* the build's baseline (SSE2 on x86-64) */
    TRN_NOISE_ISA_AVX2 = 1,    /* x86-64 with AVX2 */
    TRN_NOISE_ISA_AVX512 = 2,  /* x86-64 with AVX-512 F, VL, BW, DQ (GCC 9 and later) */
    TRN_NOISE_ISA_COUNT
} trn_noise_isa;

/* Whether this build has the variant and this CPU can run it. */
bool trn_noise_isa_available(trn_noise_isa isa);
/* "avx512", "avx2" or "default": the variant isa resolves to (BEST: the best available;
 * one that is not available: default). */
const char *trn_noise_isa_name(trn_noise_isa isa);

/* The ridged sum divided by the amplitude sum, (1 - |n|)^2 weighted as in the kernel: its 1st
 * and 99th percentiles ([0] and [1]) for octaves o + 1 (index o) at roughness k /
 * TRN_RIDGED_STEPS (index k), measured over 4 * 10^6 random points each. Between roughness
 * steps they are interpolated linearly. */
extern const float trn_ridged_percentiles[TRN_NOISE_MAX_OCTAVES][TRN_RIDGED_STEPS + 1u][2];

/* Everything a fractal evaluation needs, derived once from the public parameters. */
typedef struct trn_fractal_params {
    trn_profile profile;
    bool signed_output;      /* fbm only: the sum over the amplitude sum, in [-1, 1] */
    uint32_t octaves;        /* 1..16 */
    double inv_feature_size; /* world units to octave-0 lattice cells */
    float amplitude[TRN_NOISE_MAX_OCTAVES];
    float inv_amplitude_sum; /* the signed output's scale */
    /* The value in [0, 1]: clamp(sum * value_scale + value_offset, 0, 1). fbm: value_scale
     * = 0.5 / (TRN_FBM_SPAN_SIGMAS * TRN_NOISE_OCTAVE_SD * sqrt(sum a_i^2)), value_offset 0.5.
     * Ridged: the affine map taking the tabled percentiles p1, p99 of sum / sum a_i to
     * TRN_RIDGED_LOW and TRN_RIDGED_HIGH. Both computed in double, rounded to float once. */
    float value_scale, value_offset;
    uint32_t seed[TRN_NOISE_MAX_OCTAVES];     /* per-octave lattice hash seed */
    uint32_t offset_x[TRN_NOISE_MAX_OCTAVES]; /* per-octave lattice shift, 32-bit fraction */
    uint32_t offset_z[TRN_NOISE_MAX_OCTAVES];
} trn_fractal_params;

/* Derive the parameters. Out-of-range values are clamped (octaves to 1..16, roughness to
 * [0, 1]; a feature size that is not positive and finite samples a clamped domain), so every
 * input gives finite output in range. */
void trn_fractal_params_init(trn_fractal_params *params, uint64_t seed, trn_profile profile,
                             uint32_t octaves, double feature_size, double roughness);

/* Fractal values at world points (x[k], z[k]), k < count: in [0, 1] (spread so that most of
 * the range is used, see value_scale), or [-1, 1] with signed_output. Each value depends only
 * on its own point and the parameters. */
void trn_fractal_points(const trn_fractal_params *params, const double *x, const double *z,
                        size_t count, float *out);
/* The same with a chosen kernel variant (tests compare variants). */
void trn_fractal_points_isa(const trn_fractal_params *params, trn_noise_isa isa, const double *x,
                            const double *z, size_t count, float *out);

/* Fractal values along a row: sample k at world (x0 + (first + k) * dx, z), as
 * trn_fractal_row_from, with a chosen kernel variant. */
void trn_fractal_row_isa(const trn_fractal_params *params, trn_noise_isa isa, double x0,
                         double dx, uint64_t first, double z, size_t count, float *out);

/* Single-octave noise in [-1, 1] at lattice coordinates (x[k], z[k]) with a seed of 64 bits,
 * as trn_noise2_points but in double coordinates. */
void trn_noise2_points_isa(uint64_t seed, trn_noise_isa isa, const double *x, const double *z,
                           size_t count, float *out);

/* The 32-bit lattice hash seed of a 64-bit seed (single-octave noise), and of octave o of a
 * fractal, with that octave's lattice shift. */
uint32_t trn_noise_seed32(uint64_t seed);
void trn_noise_octave_seed(uint64_t seed, uint32_t octave, uint32_t *seed32, uint32_t *offset_x,
                           uint32_t *offset_z);

#endif
