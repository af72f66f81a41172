/* 2D gradient noise and its fbm / ridged fractals, evaluated in vectorisable blocks. */
#include <math.h>
#include <string.h>

#include "gen/noise_internal.h"
#include "terrane/generate.h"

/* Samples per block: the per-block lattice state (4 x 1 KiB) and sums stay in L1. */
#define BLOCK 256u

#include "core/kernel.h"

/* 512-bit vectors need GCC's prefer-vector-width in the target attribute (GCC 9 and later);
 * its generic tuning would otherwise keep AVX-512 code at 256 bits. */
#if HAVE_AVX2_VARIANT && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 9
#define HAVE_AVX512_VARIANT 1
#define TARGET_AVX512                                                                              \
    __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512")))
#else
#define HAVE_AVX512_VARIANT 0
#endif

/* ---- seeds ---- */

/* splitmix64's finaliser: a bijection that spreads every input bit over the output. */
static uint64_t mix64(uint64_t v)
{
    v ^= v >> 30;
    v *= 0xbf58476d1ce4e5b9ull;
    v ^= v >> 27;
    v *= 0x94d049bb133111ebull;
    v ^= v >> 31;
    return v;
}

uint32_t trn_noise_seed32(uint64_t seed)
{
    return (uint32_t)(mix64(seed) >> 32);
}

void trn_noise_octave_seed(uint64_t seed, uint32_t octave, uint32_t *seed32, uint32_t *offset_x,
                           uint32_t *offset_z)
{
    uint64_t m = mix64(seed + (uint64_t)(octave + 1u) * 0x9e3779b97f4a7c15ull);
    *seed32 = (uint32_t)(m >> 32);
    /* A fractional lattice shift per octave: without it every octave is zero on the coarsest
     * octave's lattice points (they are lattice points of all finer octaves), a visible grid. */
    uint64_t shift = mix64(m);
    *offset_x = (uint32_t)shift;
    *offset_z = (uint32_t)(shift >> 32);
}

/* ---- value mapping ---- */

/* Ridged percentiles (see noise_internal.h), measured with 4 * 10^6 random points at feature
 * size 1 over a 4 * 10^6 world-unit square, a different seed per entry; the sampling error is
 * about 0.0005. One octave, and roughness 0 (where every later octave has amplitude 0), are the
 * same distribution: those entries hold the mean of their 36 measurements, so any octave count
 * at roughness 0 gives exactly one octave's values. */
/* clang-format off */
const float trn_ridged_percentiles[TRN_NOISE_MAX_OCTAVES][TRN_RIDGED_STEPS + 1u][2] = {
    { /* 1 octave, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f},
        {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f},
        {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f},
        {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f},
        {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f}, {0.0658f, 0.9918f},
        {0.0658f, 0.9918f}
    },
    { /* 2 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0660f, 0.9744f}, {0.0665f, 0.9656f}, {0.0668f, 0.9596f},
        {0.0662f, 0.9539f}, {0.0661f, 0.9504f}, {0.0668f, 0.9484f}, {0.0664f, 0.9454f},
        {0.0659f, 0.9436f}, {0.0653f, 0.9426f}, {0.0644f, 0.9419f}, {0.0652f, 0.9396f},
        {0.0647f, 0.9387f}, {0.0643f, 0.9392f}, {0.0656f, 0.9408f}, {0.0639f, 0.9406f},
        {0.0621f, 0.9387f}, {0.0645f, 0.9391f}, {0.0631f, 0.9407f}, {0.0607f, 0.9382f},
        {0.0619f, 0.9381f}
    },
    { /* 3 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9747f}, {0.0667f, 0.9623f}, {0.0671f, 0.9525f},
        {0.0674f, 0.9433f}, {0.0663f, 0.9350f}, {0.0669f, 0.9262f}, {0.0669f, 0.9239f},
        {0.0663f, 0.9177f}, {0.0645f, 0.9083f}, {0.0658f, 0.9062f}, {0.0649f, 0.9030f},
        {0.0615f, 0.8942f}, {0.0638f, 0.8962f}, {0.0616f, 0.8908f}, {0.0610f, 0.8896f},
        {0.0616f, 0.8896f}, {0.0570f, 0.8865f}, {0.0597f, 0.8898f}, {0.0566f, 0.8852f},
        {0.0545f, 0.8846f}
    },
    { /* 4 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0664f, 0.9740f}, {0.0666f, 0.9611f}, {0.0672f, 0.9519f},
        {0.0671f, 0.9409f}, {0.0670f, 0.9312f}, {0.0667f, 0.9192f}, {0.0655f, 0.9096f},
        {0.0667f, 0.9022f}, {0.0661f, 0.8944f}, {0.0644f, 0.8848f}, {0.0621f, 0.8752f},
        {0.0612f, 0.8694f}, {0.0627f, 0.8671f}, {0.0621f, 0.8613f}, {0.0584f, 0.8595f},
        {0.0577f, 0.8548f}, {0.0547f, 0.8510f}, {0.0527f, 0.8499f}, {0.0521f, 0.8500f},
        {0.0507f, 0.8517f}
    },
    { /* 5 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0660f, 0.9734f}, {0.0667f, 0.9633f}, {0.0669f, 0.9510f},
        {0.0672f, 0.9412f}, {0.0672f, 0.9293f}, {0.0672f, 0.9175f}, {0.0675f, 0.9072f},
        {0.0639f, 0.8937f}, {0.0656f, 0.8848f}, {0.0646f, 0.8745f}, {0.0623f, 0.8655f},
        {0.0626f, 0.8569f}, {0.0603f, 0.8496f}, {0.0590f, 0.8425f}, {0.0554f, 0.8338f},
        {0.0557f, 0.8304f}, {0.0536f, 0.8280f}, {0.0512f, 0.8241f}, {0.0519f, 0.8236f},
        {0.0479f, 0.8235f}
    },
    { /* 6 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9741f}, {0.0666f, 0.9614f}, {0.0671f, 0.9521f},
        {0.0668f, 0.9390f}, {0.0669f, 0.9282f}, {0.0662f, 0.9155f}, {0.0664f, 0.9041f},
        {0.0668f, 0.8957f}, {0.0659f, 0.8797f}, {0.0651f, 0.8703f}, {0.0620f, 0.8559f},
        {0.0619f, 0.8441f}, {0.0580f, 0.8358f}, {0.0570f, 0.8238f}, {0.0539f, 0.8177f},
        {0.0541f, 0.8116f}, {0.0530f, 0.8072f}, {0.0513f, 0.8045f}, {0.0501f, 0.8026f},
        {0.0446f, 0.7988f}
    },
    { /* 7 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0664f, 0.9741f}, {0.0664f, 0.9610f}, {0.0670f, 0.9523f},
        {0.0670f, 0.9393f}, {0.0665f, 0.9270f}, {0.0673f, 0.9176f}, {0.0669f, 0.9148f},
        {0.0663f, 0.8909f}, {0.0667f, 0.8780f}, {0.0648f, 0.8641f}, {0.0627f, 0.8537f},
        {0.0603f, 0.8393f}, {0.0609f, 0.8286f}, {0.0577f, 0.8145f}, {0.0528f, 0.8043f},
        {0.0534f, 0.7958f}, {0.0514f, 0.7905f}, {0.0495f, 0.7889f}, {0.0448f, 0.7812f},
        {0.0433f, 0.7842f}
    },
    { /* 8 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0664f, 0.9743f}, {0.0666f, 0.9617f}, {0.0667f, 0.9505f},
        {0.0672f, 0.9400f}, {0.0662f, 0.9274f}, {0.0671f, 0.9168f}, {0.0671f, 0.9049f},
        {0.0646f, 0.8907f}, {0.0660f, 0.8779f}, {0.0652f, 0.8630f}, {0.0610f, 0.8474f},
        {0.0588f, 0.8333f}, {0.0584f, 0.8183f}, {0.0563f, 0.8052f}, {0.0552f, 0.7947f},
        {0.0511f, 0.7844f}, {0.0505f, 0.7761f}, {0.0466f, 0.7711f}, {0.0452f, 0.7699f},
        {0.0395f, 0.7663f}
    },
    { /* 9 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0662f, 0.9739f}, {0.0664f, 0.9619f}, {0.0668f, 0.9499f},
        {0.0669f, 0.9385f}, {0.0677f, 0.9278f}, {0.0676f, 0.9157f}, {0.0675f, 0.9059f},
        {0.0673f, 0.8926f}, {0.0642f, 0.8750f}, {0.0636f, 0.8641f}, {0.0648f, 0.8481f},
        {0.0607f, 0.8306f}, {0.0591f, 0.8148f}, {0.0566f, 0.8009f}, {0.0523f, 0.7846f},
        {0.0503f, 0.7754f}, {0.0491f, 0.7658f}, {0.0469f, 0.7589f}, {0.0439f, 0.7536f},
        {0.0393f, 0.7510f}
    },
    { /* 10 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9738f}, {0.0669f, 0.9615f}, {0.0671f, 0.9514f},
        {0.0675f, 0.9398f}, {0.0673f, 0.9279f}, {0.0673f, 0.9168f}, {0.0669f, 0.9044f},
        {0.0663f, 0.8896f}, {0.0634f, 0.8752f}, {0.0640f, 0.8600f}, {0.0632f, 0.8445f},
        {0.0612f, 0.8317f}, {0.0589f, 0.8117f}, {0.0581f, 0.7968f}, {0.0539f, 0.7830f},
        {0.0509f, 0.7665f}, {0.0467f, 0.7557f}, {0.0464f, 0.7487f}, {0.0390f, 0.7408f},
        {0.0369f, 0.7363f}
    },
    { /* 11 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9732f}, {0.0663f, 0.9612f}, {0.0670f, 0.9532f},
        {0.0672f, 0.9394f}, {0.0674f, 0.9282f}, {0.0664f, 0.9162f}, {0.0675f, 0.9055f},
        {0.0665f, 0.8904f}, {0.0663f, 0.8806f}, {0.0636f, 0.8595f}, {0.0598f, 0.8434f},
        {0.0600f, 0.8262f}, {0.0602f, 0.8139f}, {0.0567f, 0.7946f}, {0.0553f, 0.7751f},
        {0.0488f, 0.7589f}, {0.0493f, 0.7480f}, {0.0419f, 0.7373f}, {0.0393f, 0.7302f},
        {0.0369f, 0.7263f}
    },
    { /* 12 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9740f}, {0.0668f, 0.9612f}, {0.0671f, 0.9511f},
        {0.0673f, 0.9415f}, {0.0675f, 0.9282f}, {0.0677f, 0.9169f}, {0.0658f, 0.9023f},
        {0.0665f, 0.8897f}, {0.0655f, 0.8778f}, {0.0649f, 0.8624f}, {0.0603f, 0.8430f},
        {0.0621f, 0.8273f}, {0.0591f, 0.8104f}, {0.0565f, 0.7904f}, {0.0524f, 0.7712f},
        {0.0515f, 0.7555f}, {0.0491f, 0.7409f}, {0.0435f, 0.7276f}, {0.0386f, 0.7197f},
        {0.0348f, 0.7177f}
    },
    { /* 13 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0662f, 0.9754f}, {0.0664f, 0.9642f}, {0.0670f, 0.9502f},
        {0.0664f, 0.9387f}, {0.0670f, 0.9285f}, {0.0676f, 0.9168f}, {0.0668f, 0.9027f},
        {0.0669f, 0.8925f}, {0.0659f, 0.8766f}, {0.0644f, 0.8598f}, {0.0639f, 0.8470f},
        {0.0604f, 0.8262f}, {0.0602f, 0.8097f}, {0.0545f, 0.7872f}, {0.0530f, 0.7675f},
        {0.0524f, 0.7513f}, {0.0469f, 0.7319f}, {0.0427f, 0.7208f}, {0.0365f, 0.7113f},
        {0.0337f, 0.7068f}
    },
    { /* 14 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9745f}, {0.0667f, 0.9622f}, {0.0667f, 0.9504f},
        {0.0676f, 0.9408f}, {0.0670f, 0.9285f}, {0.0667f, 0.9163f}, {0.0666f, 0.9036f},
        {0.0672f, 0.8915f}, {0.0665f, 0.8829f}, {0.0647f, 0.8609f}, {0.0614f, 0.8430f},
        {0.0613f, 0.8294f}, {0.0614f, 0.8105f}, {0.0556f, 0.7866f}, {0.0567f, 0.7709f},
        {0.0516f, 0.7464f}, {0.0463f, 0.7279f}, {0.0415f, 0.7128f}, {0.0371f, 0.7034f},
        {0.0317f, 0.6967f}
    },
    { /* 15 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0663f, 0.9738f}, {0.0670f, 0.9619f}, {0.0666f, 0.9495f},
        {0.0665f, 0.9389f}, {0.0661f, 0.9283f}, {0.0671f, 0.9152f}, {0.0664f, 0.9024f},
        {0.0667f, 0.8924f}, {0.0657f, 0.8763f}, {0.0658f, 0.8648f}, {0.0638f, 0.8451f},
        {0.0621f, 0.8271f}, {0.0578f, 0.8062f}, {0.0574f, 0.7873f}, {0.0555f, 0.7653f},
        {0.0508f, 0.7438f}, {0.0462f, 0.7219f}, {0.0419f, 0.7058f}, {0.0362f, 0.6937f},
        {0.0294f, 0.6881f}
    },
    { /* 16 octaves, roughness 0, 0.05, ..., 1 */
        {0.0658f, 0.9918f}, {0.0664f, 0.9735f}, {0.0664f, 0.9611f}, {0.0671f, 0.9507f},
        {0.0665f, 0.9385f}, {0.0676f, 0.9302f}, {0.0675f, 0.9178f}, {0.0664f, 0.9021f},
        {0.0663f, 0.8903f}, {0.0642f, 0.8752f}, {0.0641f, 0.8656f}, {0.0609f, 0.8427f},
        {0.0585f, 0.8251f}, {0.0586f, 0.8068f}, {0.0578f, 0.7877f}, {0.0543f, 0.7631f},
        {0.0506f, 0.7402f}, {0.0481f, 0.7207f}, {0.0405f, 0.6993f}, {0.0357f, 0.6886f},
        {0.0295f, 0.6787f}
    },
};
/* clang-format on */

void trn_fractal_params_init(trn_fractal_params *params, uint64_t seed, trn_profile profile,
                             uint32_t octaves, double feature_size, double roughness)
{
    memset(params, 0, sizeof *params);
    params->profile = profile == TRN_PROFILE_RIDGED ? TRN_PROFILE_RIDGED : TRN_PROFILE_FBM;
    if (octaves < 1) octaves = 1;
    if (octaves > TRN_NOISE_MAX_OCTAVES) octaves = TRN_NOISE_MAX_OCTAVES;
    params->octaves = octaves;
    /* Infinite or NaN scales reach the clamp in to_lattice and give finite values. */
    params->inv_feature_size = 1.0 / feature_size;
    double r = roughness >= 0.0 ? roughness : 0.0; /* NaN too */
    if (r > 1.0) r = 1.0;
    double amp = 1.0, sum = 0.0, sum_squares = 0.0;
    for (uint32_t o = 0; o < octaves; o++) {
        params->amplitude[o] = (float)amp;
        sum += (double)(float)amp;
        sum_squares += (double)(float)amp * (double)(float)amp;
        amp *= r;
        trn_noise_octave_seed(seed, o, &params->seed[o], &params->offset_x[o],
                              &params->offset_z[o]);
    }
    params->inv_amplitude_sum = (float)(1.0 / sum);
    if (params->profile == TRN_PROFILE_RIDGED) {
        /* Ridged sums are skewed and their spread depends on octaves and roughness through the
         * weight chain, which has no closed form: map the measured 1st and 99th percentiles
         * (affinely, so ridge crests keep their shape). */
        const double t = r * (double)TRN_RIDGED_STEPS;
        uint32_t k = (uint32_t)t;
        if (k > TRN_RIDGED_STEPS - 1u) k = TRN_RIDGED_STEPS - 1u;
        const double f = t - (double)k;
        const float *a = trn_ridged_percentiles[octaves - 1u][k];
        const float *b = trn_ridged_percentiles[octaves - 1u][k + 1u];
        const double p1 = (double)a[0] + ((double)b[0] - (double)a[0]) * f;
        const double p99 = (double)a[1] + ((double)b[1] - (double)a[1]) * f;
        const double span = (TRN_RIDGED_HIGH - TRN_RIDGED_LOW) / (p99 - p1);
        params->value_scale = (float)(span / sum);
        params->value_offset = (float)(TRN_RIDGED_LOW - p1 * span);
    } else {
        /* Octaves are independent, so the sum's standard deviation is the single octave's
         * times the root of the summed squared amplitudes, whatever the octave count. */
        params->value_scale =
            (float)(0.5 / (TRN_FBM_SPAN_SIGMAS * TRN_NOISE_OCTAVE_SD * sqrt(sum_squares)));
        params->value_offset = 0.5f;
    }
}

/* ---- the kernel, written once and inlined into every variant ---- */

/* Sampling coordinates are clamped to |t| <= 2^62 (so the conversions below stay in range) and
 * NaN samples 0: any input gives a finite value. A separate pass from to_lattice because GCC
 * does not if-convert the two together. */
KERNEL double sanitize(double t)
{
    t = t == t ? t : 0.0;
    t = t < -0x1p62 ? -0x1p62 : t;
    t = t > 0x1p62 ? 0x1p62 : t;
    /* Negatives closer to 0 than the 2^-32 fraction resolution would leave 1 - |t| as the
     * fraction, which rounds to 1 and leaves the cell; they sample 0 instead. */
    return t > -0x1p-32 && t < 0.0 ? 0.0 : t;
}

/* A lattice coordinate t as its whole cell modulo 2^32 and a 32-bit fraction. Every step is
 * exact in double (or rounds the same way everywhere), so any CPU gets the same bits, and
 * doubling the pair gives the next octave's coordinate without rounding however far from the
 * origin t is; only the cell wraps (the lattice repeats every 2^32 cells). Floors go through
 * int32 truncation (x86's cvttpd2dq) because floor() is a library call under -ftrapping-math and
 * double -> int64 / uint32 conversions do not vectorise on AVX2. */
KERNEL void to_lattice(double t, uint32_t *cell, uint32_t *frac)
{
    /* t = r + wraps * 2^32 with |r| <= 2^31: exact, since |t| >= 2^31 whenever wraps != 0. */
    double q = t * 0x1p-32 + 0.5;
    int32_t wraps = (int32_t)q;
    wraps -= (double)wraps > q;
    double r = t - (double)wraps * 0x1p32;
    /* floor(r) = 2 floor(r / 2) + (0 or 1), as r itself may just exceed int32. */
    double h = r * 0.5;
    int32_t half = (int32_t)h;
    half -= (double)half > h;
    double even = (double)half * 2.0;
    int32_t odd = r - even >= 1.0;
    /* r - floor(r) is below 1 (it could round up to 1 only for r in (-2^-53, 0), which sanitize
     * excludes), so y is in [0, 2^32) and y / 2 converts to int32. */
    double y = (r - (even + (double)odd)) * 0x1p32;
    int32_t yhalf = (int32_t)(y * 0.5);
    int32_t yodd = y - (double)yhalf * 2.0 >= 1.0;
    *cell = (uint32_t)half * 2u + (uint32_t)odd;
    *frac = (uint32_t)yhalf * 2u + (uint32_t)yodd;
}

/* to_lattice through 64-bit integers, for AVX-512 (whose DQ extension converts doubles to
 * int64 in vectors; AVX2 has no such conversion). The same bits: trunc(t) fits int64 (|t| <=
 * 2^62) and converts back exactly (below 2^53, or t is whole), so i is floor(t); t - floor(t)
 * is the difference to_lattice takes of r (r = t - wraps * 2^32) and its floor, rounded the
 * same way (exact unless t is in (-1, 0), where both compute t + 1); the fraction truncates
 * as to_lattice's halves do, and the cell is floor(t) modulo 2^32 in both. */
KERNEL void to_lattice64(double t, uint32_t *cell, uint32_t *frac)
{
    int64_t i = (int64_t)t;
    double whole = (double)i;
    int64_t down = whole > t;
    i -= down;
    whole -= (double)down;
    *cell = (uint32_t)(uint64_t)i;
    *frac = (uint32_t)(int64_t)((t - whole) * 0x1p32);
}

KERNEL float flip_sign(float v, uint32_t sign_bit)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u ^= sign_bit;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* Gradient of the cell hashed from h, dotted with the offset (x, z) from that corner. */
KERNEL float corner_dot(uint32_t h, float x, float z)
{
    h *= TRN_NOISE_HASH_MUL;
    bool swap = (h & 0x80000000u) != 0;
    float a = swap ? z : x;
    float b = swap ? x : z;
    a = flip_sign(a, (h << 1) & 0x80000000u);
    b = flip_sign(b, (h << 2) & 0x80000000u);
    return a * TRN_NOISE_GRADIENT_LONG + b;
}

KERNEL float fade(float t)
{
    return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f);
}

/* One octave at lattice cell (cx, cz) with 32-bit fractions (fx, fz); unscaled. */
KERNEL float gradient(uint32_t seed, uint32_t cx, uint32_t fx, uint32_t cz, uint32_t fz)
{
    /* The top 24 bits of the fraction convert exactly to float. */
    float x0 = (float)(int32_t)(fx >> 8) * 0x1p-24f;
    float z0 = (float)(int32_t)(fz >> 8) * 0x1p-24f;
    float x1 = x0 - 1.0f, z1 = z0 - 1.0f;
    uint32_t px0 = cx * TRN_NOISE_PRIME_X, px1 = px0 + TRN_NOISE_PRIME_X;
    uint32_t pz0 = cz * TRN_NOISE_PRIME_Z, pz1 = pz0 + TRN_NOISE_PRIME_Z;
    float d00 = corner_dot(seed ^ px0 ^ pz0, x0, z0);
    float d10 = corner_dot(seed ^ px1 ^ pz0, x1, z0);
    float d01 = corner_dot(seed ^ px0 ^ pz1, x0, z1);
    float d11 = corner_dot(seed ^ px1 ^ pz1, x1, z1);
    float ux = fade(x0), uz = fade(z0);
    float a = d00 + ux * (d10 - d00);
    float b = d01 + ux * (d11 - d01);
    return a + uz * (b - a);
}

KERNEL float clamp_unit(float v, float lo)
{
    v = v < lo ? lo : v;
    return v > 1.0f ? 1.0f : v;
}

typedef struct lattice_block {
    uint32_t cell_x[BLOCK], frac_x[BLOCK], cell_z[BLOCK], frac_z[BLOCK];
} lattice_block;

/* Returns whether the block is a row (one z for every sample). */
KERNEL int block_setup(lattice_block *RESTRICT lat, const double *RESTRICT x,
                       const double *RESTRICT z, double scale, size_t n, int wide)
{
    double tx[BLOCK], tz[BLOCK];
    /* Rows (one z for the whole block) convert z once. Only +0 and -0 compare equal yet differ,
     * and both give cell 0, fraction 0, so the shortcut changes no value. */
    const double z0 = z[0];
    int one_z = 1;
    for (size_t k = 0; k < n; k++)
        one_z &= z[k] == z0;
    for (size_t k = 0; k < n; k++)
        tx[k] = sanitize(x[k] * scale);
    if (wide) {
        for (size_t k = 0; k < n; k++)
            to_lattice64(tx[k], &lat->cell_x[k], &lat->frac_x[k]);
    } else {
        for (size_t k = 0; k < n; k++)
            to_lattice(tx[k], &lat->cell_x[k], &lat->frac_x[k]);
    }
    if (one_z) {
        uint32_t cell, frac;
        to_lattice(sanitize(z0 * scale), &cell, &frac);
        for (size_t k = 0; k < n; k++) {
            lat->cell_z[k] = cell;
            lat->frac_z[k] = frac;
        }
    } else {
        for (size_t k = 0; k < n; k++)
            tz[k] = sanitize(z[k] * scale);
        if (wide) {
            for (size_t k = 0; k < n; k++)
                to_lattice64(tz[k], &lat->cell_z[k], &lat->frac_z[k]);
        } else {
            for (size_t k = 0; k < n; k++)
                to_lattice(tz[k], &lat->cell_z[k], &lat->frac_z[k]);
        }
    }
    return one_z;
}

/* Octave o's value: the shifted coordinate (carrying into the cell), then the noise; the stored
 * coordinate doubles for octave o + 1 in the same pass. */
#define OCTAVE_STEP(k)                                                                             \
    uint32_t cx = lat->cell_x[k], fx = lat->frac_x[k], cz = lat->cell_z[k], fz = lat->frac_z[k];   \
    uint32_t sx = fx + shift_x, sz = fz + shift_z;                                                 \
    float noise = gradient(seed, cx + (uint32_t)(sx < fx), sx, cz + (uint32_t)(sz < fz), sz) *     \
                  TRN_NOISE_SCALE;                                                                 \
    lat->cell_x[k] = (cx << 1) | (fx >> 31);                                                       \
    lat->frac_x[k] = fx << 1;                                                                      \
    lat->cell_z[k] = (cz << 1) | (fz >> 31);                                                       \
    lat->frac_z[k] = fz << 1

/* ---- rows: the cells of a block tabled once per octave ---- */

/* Along a row (one z for the block) every sample of an octave shares the z half of its corners,
 * and where the octave's cells are at least a sample wide, neighbouring samples share cells.
 * Each octave then tables, per cell column the block touches, the gradients at its two corners
 * as an x coefficient gx and a z term c, and a sample looks its four corners up instead of
 * hashing them: dot = gx * x + c. This is corner_dot's value bit for bit: unswapped, gx is
 * +-GRADIENT_LONG (the product rounds as flipped a * GRADIENT_LONG does, round-to-nearest being
 * symmetric) and c the exact +-z; swapped, gx is +-1 (an exact product) and c the rounded
 * +-z * GRADIENT_LONG, added in the other order (addition commutes). The rest of the octave is
 * the same operations in the same order, so rows give the bits of the per-sample path on every
 * instruction set. */
#define ROW_LANES_MAX 16u
#define ROW_COLS (BLOCK + 1u + ROW_LANES_MAX) /* one cell per sample at most, window overrun */

typedef struct row_table {
    uint32_t gx[2][ROW_COLS]; /* bits of the x coefficient at (column, lattice row cz + r) */
    uint32_t c[2][ROW_COLS];  /* bits of the z term at (column, lattice row cz + r) */
} row_table;

/* One octave's constants along a row. */
typedef struct row_octave {
    uint32_t shift_x; /* the octave's lattice shift in x (32-bit fraction) */
    uint32_t first;   /* the table's first column: the first sample's carried cell */
    float uz;         /* the faded z fraction */
} row_octave;

KERNEL uint32_t float_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

KERNEL float bits_float(uint32_t u)
{
    float v;
    memcpy(&v, &u, sizeof v);
    return v;
}

/* The gradient hashed from h as corner_dot applies it, at lattice row offset zr (bits z_bits;
 * z_long_bits: zr * GRADIENT_LONG), as bits: selects by mask, so that the column loop
 * vectorises (random hash bits would defeat branch prediction). */
KERNEL void corner_terms(uint32_t h, uint32_t z_bits, uint32_t z_long_bits, uint32_t *gx,
                         uint32_t *c)
{
    h *= TRN_NOISE_HASH_MUL;
    const uint32_t swap = (uint32_t)((int32_t)h >> 31); /* all ones where swapped */
    const uint32_t sign_a = (h << 1) & 0x80000000u, sign_b = (h << 2) & 0x80000000u;
    const uint32_t one = float_bits(1.0f), long_bits = float_bits(TRN_NOISE_GRADIENT_LONG);
    *gx = (swap & (one ^ sign_b)) | (~swap & (long_bits ^ sign_a));
    *c = (swap & (z_long_bits ^ sign_a)) | (~swap & (z_bits ^ sign_b));
}

/* Samples [0, n) of an octave through the table, from the lattice state (which doubles for
 * the next octave as in OCTAVE_STEP), into noise (scaled). One sample at a time: compilers
 * without variable vector shuffles, and the baseline variant (SSE2 has none). */
KERNEL void row_values_scalar(lattice_block *RESTRICT lat, const row_table *RESTRICT t,
                              const row_octave *o, size_t n, float *RESTRICT noise)
{
    for (size_t k = 0; k < n; k++) {
        uint32_t cx = lat->cell_x[k], fx = lat->frac_x[k];
        uint32_t sx = fx + o->shift_x;
        uint32_t j = cx + (uint32_t)(sx < fx) - o->first;
        lat->cell_x[k] = (cx << 1) | (fx >> 31);
        lat->frac_x[k] = fx << 1;
        float x0 = (float)(int32_t)(sx >> 8) * 0x1p-24f;
        float x1 = x0 - 1.0f;
        float d00 = bits_float(t->gx[0][j]) * x0 + bits_float(t->c[0][j]);
        float d10 = bits_float(t->gx[0][j + 1u]) * x1 + bits_float(t->c[0][j + 1u]);
        float d01 = bits_float(t->gx[1][j]) * x0 + bits_float(t->c[1][j]);
        float d11 = bits_float(t->gx[1][j + 1u]) * x1 + bits_float(t->c[1][j + 1u]);
        float ux = fade(x0);
        float a = d00 + ux * (d10 - d00);
        float b = d01 + ux * (d11 - d01);
        noise[k] = (a + o->uz * (b - a)) * TRN_NOISE_SCALE;
    }
}

#if defined(__GNUC__) && !defined(__clang__)
#define HAVE_ROW_SHUFFLE 1
/* row_values_scalar W lanes at a time, over whole vectors (the block's state is padded). A
 * lane's cell is within W - 1 of the vector's first lane (steps of at most one cell), so each
 * corner's terms are one window of W table entries permuted by the lane's offset (vpermps),
 * not a gather. GCC's vector extensions; the arithmetic is row_values_scalar's, lane by lane. */
#define DEFINE_ROW_VALUES(NAME, W)                                                                 \
    KERNEL void NAME(lattice_block *RESTRICT lat, const row_table *RESTRICT t,                     \
                     const row_octave *o, size_t n, float *RESTRICT noise)                         \
    {                                                                                              \
        typedef float vf __attribute__((vector_size(4 * (W))));                                    \
        typedef int32_t vi __attribute__((vector_size(4 * (W))));                                  \
        typedef uint32_t vu __attribute__((vector_size(4 * (W))));                                 \
        const uint32_t shift = o->shift_x, first = o->first;                                       \
        const float uz = o->uz;                                                                    \
        for (size_t k = 0; k < n; k += (W)) {                                                      \
            vu cx, fx;                                                                             \
            memcpy(&cx, lat->cell_x + k, sizeof cx);                                               \
            memcpy(&fx, lat->frac_x + k, sizeof fx);                                               \
            const vu sx = fx + shift;                                                              \
            const vu col = cx - (vu)(sx < fx);                                                     \
            const vu cx2 = (cx << 1) | (fx >> 31), fx2 = fx << 1;                                  \
            memcpy(lat->cell_x + k, &cx2, sizeof cx2);                                             \
            memcpy(lat->frac_x + k, &fx2, sizeof fx2);                                             \
            const uint32_t base = col[0] - first;                                                  \
            const vi lane = (vi)(col - col[0]);                                                    \
            vf w, g00, g10, g01, g11, c00, c10, c01, c11;                                          \
            memcpy(&w, t->gx[0] + base, sizeof w);                                                 \
            g00 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->gx[0] + base + 1u, sizeof w);                                            \
            g10 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->gx[1] + base, sizeof w);                                                 \
            g01 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->gx[1] + base + 1u, sizeof w);                                            \
            g11 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->c[0] + base, sizeof w);                                                  \
            c00 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->c[0] + base + 1u, sizeof w);                                             \
            c10 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->c[1] + base, sizeof w);                                                  \
            c01 = __builtin_shuffle(w, lane);                                                      \
            memcpy(&w, t->c[1] + base + 1u, sizeof w);                                             \
            c11 = __builtin_shuffle(w, lane);                                                      \
            const vf x0 = __builtin_convertvector((vi)(sx >> 8), vf) * 0x1p-24f;                   \
            const vf x1 = x0 - 1.0f;                                                               \
            const vf d00 = g00 * x0 + c00;                                                         \
            const vf d10 = g10 * x1 + c10;                                                         \
            const vf d01 = g01 * x0 + c01;                                                         \
            const vf d11 = g11 * x1 + c11;                                                         \
            const vf ux = x0 * x0 * x0 * (x0 * (x0 * 6.0f - 15.0f) + 10.0f);                       \
            const vf a = d00 + ux * (d10 - d00);                                                   \
            const vf b = d01 + ux * (d11 - d01);                                                   \
            const vf v = (a + uz * (b - a)) * TRN_NOISE_SCALE;                                     \
            memcpy(noise + k, &v, sizeof v);                                                       \
        }                                                                                          \
    }
DEFINE_ROW_VALUES(row_values_16, 16)
DEFINE_ROW_VALUES(row_values_8, 8)
#else
#define HAVE_ROW_SHUFFLE 0
#endif

/* fractal_block for a row block: lat holds the samples' x state (n of them), cz, fz the row's.
 * lanes: the variant's vector width (1, 8 or 16). */
KERNEL void fractal_row_block(const trn_fractal_params *RESTRICT p, lattice_block *RESTRICT lat,
                              uint32_t cz, uint32_t fz, size_t n, unsigned lanes,
                              float *RESTRICT out)
{
    row_table table_storage;
    row_table *RESTRICT t = &table_storage;
    float sum[BLOCK], weight[BLOCK], noise[BLOCK];
    /* Whole vectors: the tail repeats the last sample. */
    const size_t padded = (n + ROW_LANES_MAX - 1u) & ~(size_t)(ROW_LANES_MAX - 1u);
    for (size_t k = n; k < padded; k++) {
        lat->cell_x[k] = lat->cell_x[n - 1u];
        lat->frac_x[k] = lat->frac_x[n - 1u];
    }
    /* An octave's cells step by 0 or 1 from sample to sample (what the table lookups need)
     * where no sample is behind the one before it and none further ahead than 2^(32 - o) in
     * 32.32 fixed point at octave 0: the state doubles exactly each octave, and the octave's
     * shift moves every sample alike. Differences are modulo 2^64 (the cell wraps); one behind
     * is a huge difference. */
    uint64_t widest = 0;
    for (size_t k = 1; k < n; k++) {
        uint64_t a = (uint64_t)lat->cell_x[k - 1u] << 32 | lat->frac_x[k - 1u];
        uint64_t b = (uint64_t)lat->cell_x[k] << 32 | lat->frac_x[k];
        uint64_t d = b - a;
        widest = d > widest ? d : widest;
    }
    for (size_t k = 0; k < n; k++) {
        sum[k] = 0.0f;
        weight[k] = 1.0f;
    }
    const bool ridged = p->profile == TRN_PROFILE_RIDGED;
    for (uint32_t oct = 0; oct < p->octaves; oct++) {
        const uint32_t seed = p->seed[oct];
        const uint32_t sz = fz + p->offset_z[oct], czc = cz + (uint32_t)(sz < fz);
        cz = (cz << 1) | (fz >> 31);
        fz <<= 1;
        const float z0 = (float)(int32_t)(sz >> 8) * 0x1p-24f, z1 = z0 - 1.0f;
        row_octave o;
        o.shift_x = p->offset_x[oct];
        o.uz = fade(z0);
        if (widest > (UINT64_C(1) << 32 >> oct)) {
            /* Cells narrower than the sample spacing: hash every sample's corners. */
            for (size_t k = 0; k < n; k++) {
                uint32_t cx = lat->cell_x[k], fx = lat->frac_x[k];
                uint32_t sx = fx + o.shift_x;
                noise[k] = gradient(seed, cx + (uint32_t)(sx < fx), sx, czc, sz) * TRN_NOISE_SCALE;
                lat->cell_x[k] = (cx << 1) | (fx >> 31);
                lat->frac_x[k] = fx << 1;
            }
            for (size_t k = n; k < padded; k++) {
                lat->cell_x[k] = lat->cell_x[n - 1u];
                lat->frac_x[k] = lat->frac_x[n - 1u];
            }
        } else {
            const uint32_t f0 = lat->frac_x[0], fl = lat->frac_x[n - 1u];
            o.first = lat->cell_x[0] + (uint32_t)(f0 + o.shift_x < f0);
            const uint32_t last = lat->cell_x[n - 1u] + (uint32_t)(fl + o.shift_x < fl);
            /* Columns up to the last sample's right corner; window loads read up to
             * ROW_LANES_MAX - 1 entries further, which no lane selects (zeros). */
            const uint32_t columns = last - o.first + 2u;
            const uint32_t pz0 = czc * TRN_NOISE_PRIME_Z, pz1 = pz0 + TRN_NOISE_PRIME_Z;
            const uint32_t z0_bits = float_bits(z0), z1_bits = float_bits(z1);
            const uint32_t z0_long = float_bits(z0 * TRN_NOISE_GRADIENT_LONG);
            const uint32_t z1_long = float_bits(z1 * TRN_NOISE_GRADIENT_LONG);
            for (uint32_t j = 0; j < columns; j++) {
                uint32_t hx = seed ^ (o.first + j) * TRN_NOISE_PRIME_X;
                corner_terms(hx ^ pz0, z0_bits, z0_long, &t->gx[0][j], &t->c[0][j]);
                corner_terms(hx ^ pz1, z1_bits, z1_long, &t->gx[1][j], &t->c[1][j]);
            }
            for (uint32_t j = columns; j < columns + ROW_LANES_MAX; j++) {
                t->gx[0][j] = t->gx[1][j] = 0u;
                t->c[0][j] = t->c[1][j] = 0u;
            }
#if HAVE_ROW_SHUFFLE
            if (lanes == 16u)
                row_values_16(lat, t, &o, padded, noise);
            else if (lanes == 8u)
                row_values_8(lat, t, &o, padded, noise);
            else
                row_values_scalar(lat, t, &o, padded, noise);
#else
            (void)lanes;
            row_values_scalar(lat, t, &o, padded, noise);
#endif
        }
        const float amp = p->amplitude[oct];
        if (ridged) {
            for (size_t k = 0; k < n; k++) {
                float v = 1.0f - fabsf(noise[k]);
                v = v * v;
                v = v * weight[k];
                float w = v * 2.0f;
                weight[k] = w > 1.0f ? 1.0f : w;
                sum[k] = sum[k] + v * amp;
            }
        } else {
            for (size_t k = 0; k < n; k++)
                sum[k] = sum[k] + noise[k] * amp;
        }
    }
    if (!ridged && p->signed_output) {
        const float inv = p->inv_amplitude_sum;
        for (size_t k = 0; k < n; k++)
            out[k] = clamp_unit(sum[k] * inv, -1.0f);
    } else {
        const float scale = p->value_scale, offset = p->value_offset;
        for (size_t k = 0; k < n; k++)
            out[k] = clamp_unit(sum[k] * scale + offset, 0.0f);
    }
}

/* A block of fractal values; lanes: the variant's vector width for the row tables (see
 * fractal_row_block). */
KERNEL void fractal_block(const trn_fractal_params *RESTRICT p, const double *RESTRICT x,
                          const double *RESTRICT z, size_t n, unsigned lanes, float *RESTRICT out)
{
    lattice_block lat_storage;
    lattice_block *RESTRICT lat = &lat_storage;
    float sum[BLOCK], weight[BLOCK];
    if (block_setup(lat, x, z, p->inv_feature_size, n, lanes == 16u)) {
        fractal_row_block(p, lat, lat->cell_z[0], lat->frac_z[0], n, lanes, out);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        sum[k] = 0.0f;
        weight[k] = 1.0f;
    }
    const uint32_t octaves = p->octaves;
    if (p->profile == TRN_PROFILE_RIDGED) {
        for (uint32_t o = 0; o < octaves; o++) {
            const uint32_t seed = p->seed[o], shift_x = p->offset_x[o], shift_z = p->offset_z[o];
            const float amp = p->amplitude[o];
            for (size_t k = 0; k < n; k++) {
                OCTAVE_STEP(k);
                /* Musgrave's ridged multifractal: sharp crests where the noise crosses zero,
                 * each octave weighted by the previous one so detail gathers on the ridges. */
                float s = 1.0f - fabsf(noise);
                s = s * s;
                s = s * weight[k];
                float w = s * 2.0f;
                weight[k] = w > 1.0f ? 1.0f : w;
                sum[k] = sum[k] + s * amp;
            }
        }
        const float scale = p->value_scale, offset = p->value_offset;
        for (size_t k = 0; k < n; k++)
            out[k] = clamp_unit(sum[k] * scale + offset, 0.0f);
    } else {
        for (uint32_t o = 0; o < octaves; o++) {
            const uint32_t seed = p->seed[o], shift_x = p->offset_x[o], shift_z = p->offset_z[o];
            const float amp = p->amplitude[o];
            for (size_t k = 0; k < n; k++) {
                OCTAVE_STEP(k);
                sum[k] = sum[k] + noise * amp;
            }
        }
        if (p->signed_output) {
            const float inv = p->inv_amplitude_sum;
            for (size_t k = 0; k < n; k++)
                out[k] = clamp_unit(sum[k] * inv, -1.0f);
        } else {
            const float scale = p->value_scale, offset = p->value_offset;
            for (size_t k = 0; k < n; k++)
                out[k] = clamp_unit(sum[k] * scale + offset, 0.0f);
        }
    }
}

/* A block of a row: sample k at x0 + (base + k) * dx (as trn_fractal_row_from computes it for
 * trn_fractal_points), z shared. */
KERNEL void fractal_row(const trn_fractal_params *RESTRICT p, double x0, double dx, double base,
                        double z, size_t n, unsigned lanes, float *RESTRICT out)
{
    lattice_block lat_storage;
    lattice_block *RESTRICT lat = &lat_storage;
    double tx[BLOCK];
    const double scale = p->inv_feature_size;
    /* Each step (adding or multiplying by a constant, rounded) is monotone in k, so the ends
     * bound the block: when both are numbers within sanitize's range and the block stays clear
     * of (-2^-32, 0), sanitize changes no sample and is skipped. */
    const double t0 = (x0 + (base + (double)(int32_t)0) * dx) * scale;
    const double t1 = (x0 + (base + (double)(int32_t)(n - 1u)) * dx) * scale;
    const double lo = t0 < t1 ? t0 : t1, hi = t0 < t1 ? t1 : t0;
    if (t0 == t0 && t1 == t1 && lo >= -0x1p62 && hi <= 0x1p62 && (lo >= 0.0 || hi <= -0x1p-32)) {
        for (size_t k = 0; k < n; k++)
            tx[k] = (x0 + (base + (double)(int32_t)k) * dx) * scale;
    } else {
        for (size_t k = 0; k < n; k++)
            tx[k] = sanitize((x0 + (base + (double)(int32_t)k) * dx) * scale);
    }
    if (lanes == 16u) {
        for (size_t k = 0; k < n; k++)
            to_lattice64(tx[k], &lat->cell_x[k], &lat->frac_x[k]);
    } else {
        for (size_t k = 0; k < n; k++)
            to_lattice(tx[k], &lat->cell_x[k], &lat->frac_x[k]);
    }
    uint32_t cz, fz;
    to_lattice(sanitize(z * scale), &cz, &fz);
    fractal_row_block(p, lat, cz, fz, n, lanes, out);
}

KERNEL void noise2_block(uint32_t seed, const double *RESTRICT x, const double *RESTRICT z,
                         size_t n, float *RESTRICT out)
{
    lattice_block lat_storage;
    lattice_block *RESTRICT lat = &lat_storage;
    (void)block_setup(lat, x, z, 1.0, n, 0);
    for (size_t k = 0; k < n; k++) {
        float v = gradient(seed, lat->cell_x[k], lat->frac_x[k], lat->cell_z[k], lat->frac_z[k]) *
                  TRN_NOISE_SCALE;
        out[k] = clamp_unit(v, -1.0f);
    }
}

/* ---- variants and dispatch ---- */

static void fractal_block_default(const trn_fractal_params *p, const double *x, const double *z,
                                  size_t n, float *out)
{
    fractal_block(p, x, z, n, 1u, out);
}

static void fractal_row_default(const trn_fractal_params *p, double x0, double dx, double base,
                                double z, size_t n, float *out)
{
    fractal_row(p, x0, dx, base, z, n, 1u, out);
}

static void noise2_block_default(uint32_t seed, const double *x, const double *z, size_t n,
                                 float *out)
{
    noise2_block(seed, x, z, n, out);
}

#if HAVE_AVX2_VARIANT
TARGET_AVX2 static void fractal_block_avx2(const trn_fractal_params *p, const double *x,
                                           const double *z, size_t n, float *out)
{
    fractal_block(p, x, z, n, 8u, out);
}

TARGET_AVX2 static void fractal_row_avx2(const trn_fractal_params *p, double x0, double dx,
                                         double base, double z, size_t n, float *out)
{
    fractal_row(p, x0, dx, base, z, n, 8u, out);
}

TARGET_AVX2 static void noise2_block_avx2(uint32_t seed, const double *x, const double *z, size_t n,
                                          float *out)
{
    noise2_block(seed, x, z, n, out);
}
#endif

#if HAVE_AVX512_VARIANT
TARGET_AVX512 static void fractal_block_avx512(const trn_fractal_params *p, const double *x,
                                               const double *z, size_t n, float *out)
{
    fractal_block(p, x, z, n, 16u, out);
}

TARGET_AVX512 static void fractal_row_avx512(const trn_fractal_params *p, double x0, double dx,
                                             double base, double z, size_t n, float *out)
{
    fractal_row(p, x0, dx, base, z, n, 16u, out);
}

TARGET_AVX512 static void noise2_block_avx512(uint32_t seed, const double *x, const double *z,
                                              size_t n, float *out)
{
    noise2_block(seed, x, z, n, out);
}
#endif

bool trn_noise_isa_available(trn_noise_isa isa)
{
    switch (isa) {
    case TRN_NOISE_ISA_BEST:
    case TRN_NOISE_ISA_DEFAULT:
        return true;
    case TRN_NOISE_ISA_AVX2:
#if HAVE_AVX2_VARIANT
        return __builtin_cpu_supports("avx2") != 0;
#else
        return false;
#endif
    case TRN_NOISE_ISA_AVX512:
#if HAVE_AVX512_VARIANT
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#else
        return false;
#endif
    default:
        return false;
    }
}

static trn_noise_isa resolve(trn_noise_isa isa)
{
    if (isa == TRN_NOISE_ISA_BEST) {
        if (trn_noise_isa_available(TRN_NOISE_ISA_AVX512)) return TRN_NOISE_ISA_AVX512;
        if (trn_noise_isa_available(TRN_NOISE_ISA_AVX2)) return TRN_NOISE_ISA_AVX2;
        return TRN_NOISE_ISA_DEFAULT;
    }
    return trn_noise_isa_available(isa) ? isa : TRN_NOISE_ISA_DEFAULT;
}

const char *trn_noise_isa_name(trn_noise_isa isa)
{
    switch (resolve(isa)) {
    case TRN_NOISE_ISA_AVX512:
        return "avx512";
    case TRN_NOISE_ISA_AVX2:
        return "avx2";
    default:
        return "default";
    }
}

typedef void (*fractal_block_fn)(const trn_fractal_params *, const double *, const double *, size_t,
                                 float *);
typedef void (*noise2_block_fn)(uint32_t, const double *, const double *, size_t, float *);
typedef void (*fractal_row_fn)(const trn_fractal_params *, double, double, double, double, size_t,
                               float *);

static fractal_row_fn fractal_row_variant(trn_noise_isa isa)
{
    switch (resolve(isa)) {
#if HAVE_AVX512_VARIANT
    case TRN_NOISE_ISA_AVX512:
        return fractal_row_avx512;
#endif
#if HAVE_AVX2_VARIANT
    case TRN_NOISE_ISA_AVX2:
        return fractal_row_avx2;
#endif
    default:
        return fractal_row_default;
    }
}

static fractal_block_fn fractal_variant(trn_noise_isa isa)
{
    switch (resolve(isa)) {
#if HAVE_AVX512_VARIANT
    case TRN_NOISE_ISA_AVX512:
        return fractal_block_avx512;
#endif
#if HAVE_AVX2_VARIANT
    case TRN_NOISE_ISA_AVX2:
        return fractal_block_avx2;
#endif
    default:
        return fractal_block_default;
    }
}

static noise2_block_fn noise2_variant(trn_noise_isa isa)
{
    switch (resolve(isa)) {
#if HAVE_AVX512_VARIANT
    case TRN_NOISE_ISA_AVX512:
        return noise2_block_avx512;
#endif
#if HAVE_AVX2_VARIANT
    case TRN_NOISE_ISA_AVX2:
        return noise2_block_avx2;
#endif
    default:
        return noise2_block_default;
    }
}

/* ---- entry points ---- */

void trn_fractal_points_isa(const trn_fractal_params *params, trn_noise_isa isa, const double *x,
                            const double *z, size_t count, float *out)
{
    fractal_block_fn fn = fractal_variant(isa);
    for (size_t k0 = 0; k0 < count; k0 += BLOCK) {
        size_t n = count - k0 < BLOCK ? count - k0 : BLOCK;
        fn(params, x + k0, z + k0, n, out + k0);
    }
}

void trn_fractal_points(const trn_fractal_params *params, const double *x, const double *z,
                        size_t count, float *out)
{
    trn_fractal_points_isa(params, TRN_NOISE_ISA_BEST, x, z, count, out);
}

void trn_noise2_points_isa(uint64_t seed, trn_noise_isa isa, const double *x, const double *z,
                           size_t count, float *out)
{
    noise2_block_fn fn = noise2_variant(isa);
    uint32_t seed32 = trn_noise_seed32(seed);
    for (size_t k0 = 0; k0 < count; k0 += BLOCK) {
        size_t n = count - k0 < BLOCK ? count - k0 : BLOCK;
        fn(seed32, x + k0, z + k0, n, out + k0);
    }
}

void trn_noise2_points(uint64_t seed, const float *x, const float *z, size_t count, float *out)
{
    noise2_block_fn fn = noise2_variant(TRN_NOISE_ISA_BEST);
    uint32_t seed32 = trn_noise_seed32(seed);
    double bx[BLOCK], bz[BLOCK];
    for (size_t k0 = 0; k0 < count; k0 += BLOCK) {
        size_t n = count - k0 < BLOCK ? count - k0 : BLOCK;
        for (size_t k = 0; k < n; k++) {
            bx[k] = (double)x[k0 + k];
            bz[k] = (double)z[k0 + k];
        }
        fn(seed32, bx, bz, n, out + k0);
    }
}

void trn_fractal_row(uint64_t seed, trn_profile profile, uint32_t octaves, double feature_size,
                     double roughness, double x0, double dx, double z, size_t count, float *out)
{
    trn_fractal_row_from(seed, profile, octaves, feature_size, roughness, x0, dx, 0u, z, count,
                         out);
}

void trn_fractal_row_isa(const trn_fractal_params *params, trn_noise_isa isa, double x0, double dx,
                         uint64_t first, double z, size_t count, float *out)
{
    fractal_row_fn fn = fractal_row_variant(isa);
    for (size_t k0 = 0; k0 < count; k0 += BLOCK) {
        size_t n = count - k0 < BLOCK ? count - k0 : BLOCK;
        /* x0 + k*dx for the row index k, so a block's values do not depend on where the
         * blocks start. base + (double)k is exactly (double)(k0 + k) (integers below 2^53) but
         * converts from int32, which vectorises where size_t -> double does not. */
        fn(params, x0, dx, (double)(first + k0), z, n, out + k0);
    }
}

void trn_fractal_row_from(uint64_t seed, trn_profile profile, uint32_t octaves,
                          double feature_size, double roughness, double x0, double dx,
                          uint64_t first, double z, size_t count, float *out)
{
    trn_fractal_params params;
    trn_fractal_params_init(&params, seed, profile, octaves, feature_size, roughness);
    trn_fractal_row_isa(&params, TRN_NOISE_ISA_BEST, x0, dx, first, z, count, out);
}
