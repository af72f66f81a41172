/* Moisture: a stable climate field in [0, 1] from the world seed's biome_placement channel. */
#include "gen/noise_internal.h"
#include "terrane/generate.h"

/* Broad, gentle climate zones: 3 octaves of fbm over 512 world units. */
#define MOISTURE_FEATURE_SIZE 512.0
#define MOISTURE_OCTAVES 3u
#define MOISTURE_ROUGHNESS 0.5
/* The fbm sum over its amplitude sum, s in [-1, 1], as v = (s + 1) / 2: 3 octaves keep 96% of
 * v in [0.285, 0.713]; stretching about 0.5 by 2.25 spreads that over [0.02, 0.98] and clamps
 * the rare tails, so rule bands see the whole of [0, 1]. (This is moisture's own mapping, kept
 * bit for bit when landform fbm moved to its standard-deviation scaling in generator version 2:
 * it does not bunch. Measured: 5th..95th percentile 0.103..0.897, 1.7% clamped at each end.) */
#define MOISTURE_CONTRAST 2.25f
#define MOISTURE_BLOCK 256u

/* Moisture at (x[k], z[k]) for k < count. */
static void moisture_points(uint64_t world_seed, const double *x, const double *z, size_t count,
                            float *out)
{
    trn_fractal_params params;
    trn_fractal_params_init(&params, trn_subseed_of(world_seed, TRN_CHANNEL_BIOME_PLACEMENT),
                            TRN_PROFILE_FBM, MOISTURE_OCTAVES, MOISTURE_FEATURE_SIZE,
                            MOISTURE_ROUGHNESS);
    params.signed_output = true;
    trn_fractal_points(&params, x, z, count, out);
    for (size_t k = 0; k < count; k++) {
        /* |s| <= 0.9995, so neither s nor v is ever clamped: v is what fbm's [0, 1] value was
         * before generator version 2, bit for bit. */
        float v = (out[k] + 1.0f) * 0.5f;
        float m = 0.5f + (v - 0.5f) * MOISTURE_CONTRAST;
        m = m < 0.0f ? 0.0f : m;
        out[k] = m > 1.0f ? 1.0f : m;
    }
}

void trn_moisture_row(uint64_t world_seed, double size_x, uint32_t cells_x, double z, float *out)
{
    double bx[MOISTURE_BLOCK], bz[MOISTURE_BLOCK];
    for (size_t k = 0; k < MOISTURE_BLOCK; k++)
        bz[k] = z;
    const size_t count = (size_t)cells_x + 1u;
    const double cells = cells_x ? (double)cells_x : 1.0;
    for (size_t k0 = 0; k0 < count; k0 += MOISTURE_BLOCK) {
        size_t n = count - k0 < MOISTURE_BLOCK ? count - k0 : MOISTURE_BLOCK;
        /* Spelt as the field's sample positions are, so a row and single samples agree
         * (base + (double)k is exactly (double)(k0 + k), converted in vector lanes). */
        const double base = (double)k0;
        for (size_t k = 0; k < n; k++)
            bx[k] = (base + (double)(int32_t)k) * size_x / cells;
        moisture_points(world_seed, bx, bz, n, out + k0);
    }
}

double trn_moisture_at(uint64_t world_seed, double x, double z)
{
    float m;
    moisture_points(world_seed, &x, &z, 1, &m);
    return (double)m;
}
