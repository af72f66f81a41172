/* Tests: sub-seeds, gradient noise and fractals against a scalar reference, landform fields,
 * the sampling-domain diagnostic, moisture. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "gen/noise_internal.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "test.h"

/* ---- helpers ---- */

static uint64_t hash_floats(const float *v, size_t n)
{
    return (uint64_t)XXH64(v, n * sizeof *v, 0);
}

static void check_hash(const char *what, uint64_t actual, uint64_t expected)
{
    trn_test_checks++;
    if (actual != expected) {
        trn_test_failures++;
        fprintf(stderr, "golden %s: got 0x%016llxull, expected 0x%016llxull\n", what,
                (unsigned long long)actual, (unsigned long long)expected);
    }
}

static bool same_bits(const float *a, const float *b, size_t n, const char *what)
{
    for (size_t k = 0; k < n; k++) {
        if (memcmp(&a[k], &b[k], sizeof a[k]) != 0) {
            fprintf(stderr, "%s: sample %zu differs: %.9g vs %.9g\n", what, k, (double)a[k],
                    (double)b[k]);
            return false;
        }
    }
    return true;
}

/* xorshift64*: test coordinates only. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545f4914f6cdd1dull;
}

static double rng_unit(uint64_t *state)
{
    return (double)(rng_next(state) >> 11) * 0x1p-53;
}

/* Coordinates that probe every path: small and huge, negative, near and on lattice lines, just
 * either side of zero, beyond the 2^62 clamp, infinities and NaN. */
static void probe_coordinates(double *x, double *z, size_t n, uint64_t seed)
{
    static const double special[] = {0.0,
                                     -0.0,
                                     1.0,
                                     -1.0,
                                     0.5,
                                     -0.5,
                                     1e-300,
                                     -1e-300,
                                     -1e-12,
                                     -0x1p-32,
                                     -0x1p-33,
                                     0.999999999999,
                                     -0.999999999999,
                                     2147483647.5,
                                     -2147483648.25,
                                     2147483648.0,
                                     4294967295.75,
                                     -4294967296.5,
                                     4294967296.0,
                                     1e9 + 0.123,
                                     -1e12 - 0.77,
                                     0x1p52 + 1.0,
                                     -0x1p53,
                                     0x1p62,
                                     -0x1p62,
                                     0x1p63,
                                     -1e300,
                                     1e300,
                                     INFINITY,
                                     -INFINITY,
                                     NAN};
    const size_t ns = sizeof special / sizeof special[0];
    uint64_t state = seed | 1u;
    for (size_t k = 0; k < n; k++) {
        double magnitude = ldexp(1.0, (int)(rng_next(&state) % 80u) - 12);
        double a = (rng_unit(&state) * 2.0 - 1.0) * magnitude;
        double b = (rng_unit(&state) * 2.0 - 1.0) * magnitude;
        if (k % 7u == 3u) a = special[(k / 7u) % ns];
        if (k % 11u == 5u) b = special[(k / 11u) % ns];
        x[k] = a;
        z[k] = b;
    }
}

/* ---- a deliberately scalar reference: one point at a time, floor() and int64, no shared
 * code with src/gen/noise.c, so it pins the definition ---- */

static uint64_t ref_mix64(uint64_t v)
{
    v ^= v >> 30;
    v *= 0xbf58476d1ce4e5b9ull;
    v ^= v >> 27;
    v *= 0x94d049bb133111ebull;
    v ^= v >> 31;
    return v;
}

static void ref_lattice(double t, uint32_t *cell, uint32_t *frac)
{
    if (isnan(t)) t = 0.0;
    if (t < -0x1p62) t = -0x1p62;
    if (t > 0x1p62) t = 0x1p62;
    if (t < 0.0 && t > -0x1p-32) t = 0.0;
    double whole = floor(t);
    *cell = (uint32_t)(uint64_t)(int64_t)whole;
    *frac = (uint32_t)floor((t - whole) * 4294967296.0);
}

static float ref_corner(uint32_t h, float x, float z)
{
    h *= 0x27d4eb2du;
    float a = x, b = z;
    if (h & 0x80000000u) {
        a = z;
        b = x;
    }
    if (h & 0x40000000u) a = -a;
    if (h & 0x20000000u) b = -b;
    return a * 2.41421356237309505f + b;
}

static float ref_fade(float t)
{
    return t * t * t * (t * (t * 6.0f - 15.0f) + 10.0f);
}

static float ref_gradient(uint32_t seed, uint32_t cx, uint32_t fx, uint32_t cz, uint32_t fz)
{
    float x0 = (float)(fx >> 8) / 16777216.0f, z0 = (float)(fz >> 8) / 16777216.0f;
    float x1 = x0 - 1.0f, z1 = z0 - 1.0f;
    uint32_t px0 = cx * 501125321u, px1 = px0 + 501125321u;
    uint32_t pz0 = cz * 1136930381u, pz1 = pz0 + 1136930381u;
    float d00 = ref_corner(seed ^ px0 ^ pz0, x0, z0);
    float d10 = ref_corner(seed ^ px1 ^ pz0, x1, z0);
    float d01 = ref_corner(seed ^ px0 ^ pz1, x0, z1);
    float d11 = ref_corner(seed ^ px1 ^ pz1, x1, z1);
    float ux = ref_fade(x0), uz = ref_fade(z0);
    float a = d00 + ux * (d10 - d00);
    float b = d01 + ux * (d11 - d01);
    return (a + uz * (b - a)) * 0.5788f;
}

static float ref_clamp(float v, float lo)
{
    if (v < lo) v = lo;
    if (v > 1.0f) v = 1.0f;
    return v;
}

static float ref_noise2(uint64_t seed, double x, double z)
{
    uint32_t cx, fx, cz, fz;
    ref_lattice(x, &cx, &fx);
    ref_lattice(z, &cz, &fz);
    return ref_clamp(ref_gradient((uint32_t)(ref_mix64(seed) >> 32), cx, fx, cz, fz), -1.0f);
}

static float ref_fractal(uint64_t seed, trn_profile profile, bool signed_output, uint32_t octaves,
                         double feature_size, double roughness, double x, double z)
{
    if (octaves < 1) octaves = 1;
    if (octaves > 16) octaves = 16;
    double r = roughness >= 0.0 ? roughness : 0.0;
    if (r > 1.0) r = 1.0;
    const double inv = 1.0 / feature_size;
    uint32_t cx, fx, cz, fz;
    ref_lattice(x * inv, &cx, &fx);
    ref_lattice(z * inv, &cz, &fz);
    double amp = 1.0, amp_sum = 0.0, squares = 0.0;
    float sum = 0.0f, weight = 1.0f;
    for (uint32_t o = 0; o < octaves; o++) {
        const float a = (float)amp;
        amp_sum += (double)a;
        squares += (double)a * (double)a;
        amp *= r;
        uint64_t m = ref_mix64(seed + (uint64_t)(o + 1u) * 0x9e3779b97f4a7c15ull);
        uint64_t shift = ref_mix64(m);
        uint32_t sx = fx + (uint32_t)shift, sz = fz + (uint32_t)(shift >> 32);
        float n = ref_gradient((uint32_t)(m >> 32), cx + (sx < fx ? 1u : 0u), sx,
                               cz + (sz < fz ? 1u : 0u), sz);
        if (profile == TRN_PROFILE_RIDGED) {
            float s = 1.0f - fabsf(n);
            s = s * s * weight;
            weight = s * 2.0f > 1.0f ? 1.0f : s * 2.0f;
            sum = sum + s * a;
        } else {
            sum = sum + n * a;
        }
        /* the next octave: twice the coordinate */
        uint64_t dx = ((uint64_t)cx << 32 | fx) << 1, dz = ((uint64_t)cz << 32 | fz) << 1;
        cx = (uint32_t)(dx >> 32);
        fx = (uint32_t)dx;
        cz = (uint32_t)(dz >> 32);
        fz = (uint32_t)dz;
    }
    if (profile == TRN_PROFILE_RIDGED) {
        /* the tabled 1st and 99th percentiles of sum / amp_sum, linear in roughness, to 0.02
         * and 0.98 */
        const double t = r * 20.0;
        const int k = t >= 19.0 ? 19 : (int)floor(t);
        const double f = t - (double)k;
        const float *lo = trn_ridged_percentiles[octaves - 1u][k];
        const float *hi = trn_ridged_percentiles[octaves - 1u][k + 1];
        const double p1 = (double)lo[0] + ((double)hi[0] - (double)lo[0]) * f;
        const double p99 = (double)lo[1] + ((double)hi[1] - (double)lo[1]) * f;
        const double span = (0.98 - 0.02) / (p99 - p1);
        return ref_clamp(sum * (float)(span / amp_sum) + (float)(0.02 - p1 * span), 0.0f);
    }
    if (signed_output) return ref_clamp(sum * (float)(1.0 / amp_sum), -1.0f);
    /* +-2.5 standard deviations of the sum (one octave's 0.32625770 times the root of the
     * summed squared amplitudes) span [0, 1] */
    const float scale = (float)(0.5 / (2.5 * 0.32625770 * sqrt(squares)));
    return ref_clamp(sum * scale + 0.5f, 0.0f);
}

static void ref_landform_field(const trn_landform *lf, uint64_t world_seed, const trn_field *f,
                               float *out)
{
    const uint64_t relief = trn_subseed_of(world_seed, TRN_CHANNEL_LANDFORM);
    const uint64_t warp = trn_subseed_of(world_seed, TRN_CHANNEL_LANDFORM_WARP);
    const double radians = lf->heading * (3.14159265358979323846 / 180.0);
    const double c = cos(radians), s = sin(radians), inv_stretch = 1.0 / lf->stretch;
    for (uint32_t j = 0; j <= f->cells_z; j++) {
        for (uint32_t i = 0; i <= f->cells_x; i++) {
            double x = (double)i * f->size_x / (double)f->cells_x;
            double z = (double)j * f->size_z / (double)f->cells_z;
            if (lf->warp_amplitude > 0.0) {
                float a =
                    ref_fractal(warp, TRN_PROFILE_FBM, true, 1, lf->warp_feature_size, 0.5, x, z);
                float b = ref_fractal(warp + 1u, TRN_PROFILE_FBM, true, 1, lf->warp_feature_size,
                                      0.5, x, z);
                x = x + lf->warp_amplitude * (double)a;
                z = z + lf->warp_amplitude * (double)b;
            }
            double u = (x * c + z * s) * inv_stretch, v = z * c - x * s;
            float value = ref_fractal(relief, lf->profile, false, lf->octaves, lf->feature_size,
                                      lf->roughness, u, v);
            out[(size_t)j * (f->cells_x + 1u) + i] =
                (float)(lf->base_height + lf->height_variation * (double)value);
        }
    }
}

static trn_landform landform_defaults(const char *name)
{
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = (char *)name;
    lf.profile = TRN_PROFILE_FBM;
    lf.base_height = 0.0;
    lf.height_variation = 100.0;
    lf.feature_size = 256.0;
    lf.roughness = 0.5;
    lf.octaves = 5;
    lf.warp_amplitude = 0.0;
    lf.warp_feature_size = 128.0;
    lf.stretch = 1.0;
    lf.heading = 0.0;
    return lf;
}

/* ---- sub-seeds ---- */

static void test_subseed_goldens(void)
{
    /* Computed with an independent Python implementation of XXH64 (the name's bytes, the world
     * seed as XXH64's seed), in channel order. */
    static const uint64_t seeds[4] = {0u, 1u, 42u, 0x7fffffffffffffffull};
    static const uint64_t expected[4][TRN_CHANNEL_COUNT] = {
        {0x0d857f7c1709d20bull, 0xc7990d76ecf61104ull, 0xa73d6d19b4c819b7ull, 0xe5ec0aa71575eff9ull,
         0xc21a04b24c044f98ull, 0xcca3ecb2b500e38full},
        {0xb24aec4d8a40172bull, 0x6a4a960af95ce0bbull, 0x679e43c88ab2ebc0ull, 0x45665e1682f6535cull,
         0x19aca3b0be37c72bull, 0x16254bdf57a0cf48ull},
        {0x02d78489549589f8ull, 0x87916f4ac69a423dull, 0xf761d6d5bc533607ull, 0xb2e0cd0d70862939ull,
         0x9b25e3fc5589261full, 0xf9803dc543405670ull},
        {0x9ce723371a435293ull, 0xa36d481399a3f94cull, 0x1cdc3e1f489d1aa0ull, 0x950cd1db4c739a3cull,
         0x7f794844407ad89eull, 0x6c627d0aa13e009bull},
    };
    static const char *names[TRN_CHANNEL_COUNT] = {"landform",  "landform_warp",   "erosion",
                                                   "hydrology", "biome_placement", "scatter"};
    for (int s = 0; s < 4; s++) {
        for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
            char what[64];
            snprintf(what, sizeof what, "subseed(%llu, %s)", (unsigned long long)seeds[s],
                     names[c]);
            check_hash(what, trn_subseed_of(seeds[s], (trn_seed_channel)c), expected[s][c]);
            check_hash(what, trn_subseed(seeds[s], names[c]), expected[s][c]);
        }
    }
    for (int c = 0; c < TRN_CHANNEL_COUNT; c++)
        CHECK(strcmp(trn_seed_channel_name((trn_seed_channel)c), names[c]) == 0);
    CHECK(strcmp(trn_seed_channel_name(TRN_CHANNEL_COUNT), "unknown") == 0);
    CHECK(strcmp(trn_seed_channel_name((trn_seed_channel)-1), "unknown") == 0);
    /* XXH64's published vector for empty input and seed 0. */
    check_hash("subseed(0, \"\")", trn_subseed(0, ""), 0xef46db3751d8e999ull);
    CHECK(trn_subseed(0, NULL) == trn_subseed(0, ""));
    /* A channel this build does not know hashes like any other name, and leaves the known
     * channels alone. */
    CHECK(trn_subseed(42, "weather") != trn_subseed(42, "landform"));
    CHECK(trn_subseed(42, "weather") == (uint64_t)XXH64("weather", 7, 42));
    CHECK(trn_subseed(43, "landform") != trn_subseed(42, "landform"));
}

/* ---- noise and fractals ---- */

static void test_noise2_matches_reference(void)
{
    enum { N = 4000 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    float *fx = malloc(N * sizeof *fx), *fz = malloc(N * sizeof *fz);
    float *got = malloc(N * sizeof *got), *want = malloc(N * sizeof *want);
    CHECK(x && z && fx && fz && got && want);
    if (!x || !z || !fx || !fz || !got || !want) goto done;
    probe_coordinates(x, z, N, 99);
    for (size_t k = 0; k < N; k++) {
        fx[k] = (float)x[k];
        fz[k] = (float)z[k];
    }
    const uint64_t seeds[3] = {0, 42, 0xfedcba9876543210ull};
    for (int s = 0; s < 3; s++) {
        trn_noise2_points(seeds[s], fx, fz, N, got);
        for (size_t k = 0; k < N; k++)
            want[k] = ref_noise2(seeds[s], (double)fx[k], (double)fz[k]);
        CHECK(same_bits(got, want, N, "trn_noise2_points vs scalar reference"));
        for (int isa = 0; isa < TRN_NOISE_ISA_COUNT; isa++) {
            if (!trn_noise_isa_available((trn_noise_isa)isa)) continue;
            trn_noise2_points_isa(seeds[s], (trn_noise_isa)isa, x, z, N, got);
            for (size_t k = 0; k < N; k++)
                want[k] = ref_noise2(seeds[s], x[k], z[k]);
            CHECK(same_bits(got, want, N, trn_noise_isa_name((trn_noise_isa)isa)));
        }
    }
    /* Every value finite and inside [-1, 1]; the range is used. */
    float lo = 1.0f, hi = -1.0f;
    for (size_t k = 0; k < N; k++) {
        CHECK(isfinite(got[k]) && got[k] >= -1.0f && got[k] <= 1.0f);
        if (got[k] < lo) lo = got[k];
        if (got[k] > hi) hi = got[k];
    }
    CHECK(lo < -0.5f && hi > 0.5f);
done:
    free(x);
    free(z);
    free(fx);
    free(fz);
    free(got);
    free(want);
}

static void test_noise2_range_and_continuity(void)
{
    enum { N = 1 << 16 };
    float *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z), *v = malloc(N * sizeof *v);
    CHECK(x && z && v);
    if (!x || !z || !v) goto done;
    uint64_t st = 7;
    for (size_t k = 0; k < N; k++) {
        x[k] = (float)((rng_unit(&st) - 0.5) * 2000.0);
        z[k] = (float)((rng_unit(&st) - 0.5) * 2000.0);
    }
    trn_noise2_points(5, x, z, N, v);
    double sum = 0.0, peak = 0.0;
    for (size_t k = 0; k < N; k++) {
        CHECK(v[k] >= -1.0f && v[k] <= 1.0f);
        sum += v[k];
        if (fabs(v[k]) > peak) peak = fabs(v[k]);
    }
    CHECK(fabs(sum / N) < 0.02);
    CHECK(peak > 0.8);
    /* Zero on lattice points, continuous across cell edges on both sides of the origin. */
    const float lattice[4] = {0.0f, -3.0f, 17.0f, -1024.0f};
    for (int a = 0; a < 4; a++) {
        float px[3] = {lattice[a], lattice[a] - 1e-3f, lattice[a] + 1e-3f};
        float pz[3] = {-7.0f, -7.25f, -7.25f};
        float out[3];
        trn_noise2_points(11, px, pz, 3, out);
        CHECK(out[0] == 0.0f);
        CHECK(fabsf(out[1] - out[2]) < 0.02f);
    }
done:
    free(x);
    free(z);
    free(v);
}

static void test_fractal_matches_reference(void)
{
    enum { N = 3000 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    float *got = malloc(N * sizeof *got), *want = malloc(N * sizeof *want);
    float *other = malloc(N * sizeof *other);
    CHECK(x && z && got && want && other);
    if (!x || !z || !got || !want || !other) goto done;
    probe_coordinates(x, z, N, 1234);
    typedef struct {
        trn_profile profile;
        bool signed_output;
        uint32_t octaves;
        double feature_size, roughness;
    } set;
    const set sets[] = {
        {TRN_PROFILE_FBM, false, 6, 256.0, 0.5},   {TRN_PROFILE_RIDGED, false, 6, 100.0, 0.5},
        {TRN_PROFILE_FBM, true, 1, 128.0, 0.5},    {TRN_PROFILE_FBM, false, 16, 0.001, 1.0},
        {TRN_PROFILE_RIDGED, false, 16, 1e9, 0.0}, {TRN_PROFILE_FBM, false, 3, 1e-300, 0.3},
        {TRN_PROFILE_RIDGED, false, 40, 7.5, 2.0}, {TRN_PROFILE_FBM, false, 0, 64.0, -1.0},
    };
    for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++) {
        const set *p = &sets[s];
        trn_fractal_params params;
        trn_fractal_params_init(&params, 77u + s, p->profile, p->octaves, p->feature_size,
                                p->roughness);
        params.signed_output = p->signed_output;
        for (size_t k = 0; k < N; k++)
            want[k] = ref_fractal(77u + s, p->profile, p->signed_output, p->octaves,
                                  p->feature_size, p->roughness, x[k], z[k]);
        for (int isa = 0; isa < TRN_NOISE_ISA_COUNT; isa++) {
            if (!trn_noise_isa_available((trn_noise_isa)isa)) continue;
            /* Counts that leave vector tails of every length. */
            const size_t counts[] = {1, 3, 7, 8, 255, 256, 257, N};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                memset(got, 0, N * sizeof *got);
                trn_fractal_points_isa(&params, (trn_noise_isa)isa, x, z, counts[c], got);
                char what[96];
                snprintf(what, sizeof what, "fractal set %zu, %s, count %zu", s,
                         trn_noise_isa_name((trn_noise_isa)isa), counts[c]);
                CHECK(same_bits(got, want, counts[c], what));
            }
        }
        trn_fractal_points(&params, x, z, N, other);
        CHECK(same_bits(other, want, N, "trn_fractal_points"));
        for (size_t k = 0; k < N; k++) {
            float lo = p->signed_output ? -1.0f : 0.0f;
            CHECK(isfinite(other[k]) && other[k] >= lo && other[k] <= 1.0f);
        }
    }
    /* The row form: sample k at x0 + k * dx. */
    const double x0 = -1234.5, dx = 0.75, row_z = -88.125;
    for (int profile = 0; profile < 2; profile++) {
        trn_fractal_row(9, (trn_profile)profile, 6, 200.0, 0.45, x0, dx, row_z, N, got);
        for (size_t k = 0; k < N; k++)
            want[k] = ref_fractal(9, (trn_profile)profile, false, 6, 200.0, 0.45,
                                  x0 + (double)k * dx, row_z);
        CHECK(same_bits(got, want, N, "trn_fractal_row vs scalar reference"));
        /* A sample does not depend on the row it was computed in. */
        for (size_t k = 0; k < N; k += 97) {
            float one;
            trn_fractal_row(9, (trn_profile)profile, 6, 200.0, 0.45, x0 + (double)k * dx, 3.0,
                            row_z, 1, &one);
            CHECK(memcmp(&one, &got[k], sizeof one) == 0);
        }
    }
done:
    free(x);
    free(z);
    free(got);
    free(want);
    free(other);
}

static void test_isa_variants_identical(void)
{
    int variants = 0;
    for (int isa = 1; isa < TRN_NOISE_ISA_COUNT; isa++)
        variants += trn_noise_isa_available((trn_noise_isa)isa);
    if (!variants) {
        fprintf(stderr, "  (no vector variant runs on this CPU: only the default one ran)\n");
        CHECK(strcmp(trn_noise_isa_name(TRN_NOISE_ISA_BEST), "default") == 0);
        return;
    }
    /* The best variant is the widest available. */
    const char *best = trn_noise_isa_available(TRN_NOISE_ISA_AVX512) ? "avx512" : "avx2";
    CHECK(strcmp(trn_noise_isa_name(TRN_NOISE_ISA_BEST), best) == 0);
    enum { N = 20000 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b);
    CHECK(x && z && a && b);
    if (!x || !z || !a || !b) goto done;
    probe_coordinates(x, z, N, 555);
    /* Half the blocks share one z, taking the row shortcut. */
    for (size_t k = 0; k < N / 2; k++)
        z[k] = -3.7 * (double)(k / 300u);
    for (int isa = 1; isa < TRN_NOISE_ISA_COUNT; isa++) {
        if (!trn_noise_isa_available((trn_noise_isa)isa)) continue;
        const char *name = trn_noise_isa_name((trn_noise_isa)isa);
        fprintf(stderr, "  default vs %s\n", name);
        for (int profile = 0; profile < 2; profile++) {
            trn_fractal_params params;
            trn_fractal_params_init(&params, 3, (trn_profile)profile, 8, 37.0, 0.6);
            trn_fractal_points_isa(&params, TRN_NOISE_ISA_DEFAULT, x, z, N, a);
            trn_fractal_points_isa(&params, (trn_noise_isa)isa, x, z, N, b);
            CHECK(same_bits(a, b, N, name));
        }
        trn_noise2_points_isa(3, TRN_NOISE_ISA_DEFAULT, x, z, N, a);
        trn_noise2_points_isa(3, (trn_noise_isa)isa, x, z, N, b);
        CHECK(same_bits(a, b, N, name));
    }
done:
    free(x);
    free(z);
    free(a);
    free(b);
}

/* Rows (one z) go through per-octave gradient tables where cells are at least a sample wide
 * and hash every sample where they are not; both must give the scalar reference's bits on every
 * variant, through the row entry and through points that share a z. */
static void test_rows_match_reference(void)
{
    enum { N = 1100 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    float *got = malloc(N * sizeof *got), *want = malloc(N * sizeof *want);
    CHECK(x && z && got && want);
    if (!x || !z || !got || !want) goto done;
    typedef struct {
        double x0, dx, z, feature_size;
        uint32_t octaves;
        const char *what;
    } row;
    const double wrap = 4294967296.0; /* the lattice repeats every 2^32 cells */
    const row rows[] = {
        {-1234.5, 0.75, -88.125, 200.0, 6, "tables on every octave"},
        {1234.5, -0.75, 17.0, 200.0, 6, "x decreasing: hashed"},
        /* 0.25 cells a sample at octave 0: exactly one at octave 2, two at octave 3 */
        {0.0, 1.0, 3.5, 4.0, 16, "tables, then hashing, by octave"},
        {3.0, 0.999, 3.5, 1.0, 8, "just under a cell a sample"},
        {(wrap - 40.0) * 10.0, 3.7, -5.0, 10.0, 6, "cells wrapping past 2^32"},
        {-(wrap + 12.5) * 3.0, 0.5, 1e9, 3.0, 12, "negative, past the wrap"},
        {5.0, 0.0, 2.0, 64.0, 6, "one point repeated"},
        {NAN, 1.0, 2.0, 64.0, 6, "NaN x"},
        {0.0, INFINITY, -2.0, 64.0, 6, "infinite step"},
        {-0.0, 1e-12, -1e-300, 1.0, 16, "tiny steps around zero"},
    };
    const size_t counts[] = {1, 15, 17, 256, 257, N};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const row *w = &rows[r];
        for (int profile = 0; profile < 2; profile++) {
            trn_fractal_params params;
            trn_fractal_params_init(&params, 11u + r, (trn_profile)profile, w->octaves,
                                    w->feature_size, 0.55);
            for (size_t k = 0; k < N; k++) {
                x[k] = w->x0 + (double)(int32_t)k * w->dx;
                z[k] = w->z;
                want[k] = ref_fractal(11u + r, (trn_profile)profile, false, w->octaves,
                                      w->feature_size, 0.55, x[k], z[k]);
            }
            for (int isa = 0; isa < TRN_NOISE_ISA_COUNT; isa++) {
                if (!trn_noise_isa_available((trn_noise_isa)isa)) continue;
                for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                    char what[160];
                    snprintf(what, sizeof what, "row %zu (%s), %s, %s, count %zu", r, w->what,
                             profile ? "ridged" : "fbm", trn_noise_isa_name((trn_noise_isa)isa),
                             counts[c]);
                    memset(got, 0, N * sizeof *got);
                    trn_fractal_row_isa(&params, (trn_noise_isa)isa, w->x0, w->dx, 0u, w->z,
                                        counts[c], got);
                    CHECK(same_bits(got, want, counts[c], what));
                    memset(got, 0, N * sizeof *got);
                    trn_fractal_points_isa(&params, (trn_noise_isa)isa, x, z, counts[c], got);
                    CHECK(same_bits(got, want, counts[c], what));
                }
            }
        }
    }
done:
    free(x);
    free(z);
    free(got);
    free(want);
}

static void test_fractal_goldens(void)
{
    enum { N = 1024 };
    float row[N];
    trn_fractal_row(42, TRN_PROFILE_FBM, 6, 256.0, 0.5, 0.0, 1.0, 17.0, N, row);
    check_hash("fbm 6 octaves, 256, 0.5", hash_floats(row, N), 0x130e2b469a3e5a7full);
    trn_fractal_row(42, TRN_PROFILE_RIDGED, 6, 256.0, 0.5, 0.0, 1.0, 17.0, N, row);
    check_hash("ridged 6 octaves, 256, 0.5", hash_floats(row, N), 0x10a5367db6f5fa8full);
    trn_fractal_row(7, TRN_PROFILE_FBM, 3, 40.0, 0.8, -5000.25, 0.5, -300.5, N, row);
    check_hash("fbm 3 octaves, 40, 0.8, negative", hash_floats(row, N), 0xe15f0dfd4b69e7a0ull);
    trn_fractal_row(0x7fffffffffffffffull, TRN_PROFILE_RIDGED, 12, 1000.0, 0.35, 1e7, 3.0, 2e7, N,
                    row);
    check_hash("ridged 12 octaves far out", hash_floats(row, N), 0x5f5ca827654a83f2ull);
    float px[4] = {0.5f, -0.5f, 100.25f, -3.75f}, pz[4] = {0.25f, 7.5f, -2.0f, 1e6f}, v[4];
    trn_noise2_points(1, px, pz, 4, v);
    check_hash("noise2 4 points", hash_floats(v, 4), 0x43759d4dc3e6427cull);
    /* fbm centres on 0.5 and reaches both ends over a 16 x 16 feature area. */
    double sum = 0.0;
    float lo = 1.0f, hi = 0.0f;
    for (int j = 0; j < 64; j++) {
        trn_fractal_row(3, TRN_PROFILE_FBM, 6, 64.0, 0.5, 0.0, 1.0, j * 16.0, N, row);
        for (size_t k = 0; k < N; k++) {
            sum += row[k];
            if (row[k] < lo) lo = row[k];
            if (row[k] > hi) hi = row[k];
        }
    }
    CHECK(fabs(sum / (64.0 * N) - 0.5) < 0.05);
    CHECK(lo >= 0.0f && hi <= 1.0f && lo < 0.05f && hi > 0.95f);
}

static int compare_floats(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Share of values <= lo or >= hi. */
static double share_at(const float *v, size_t n, float lo, float hi)
{
    size_t count = 0;
    for (size_t k = 0; k < n; k++)
        count += v[k] <= lo || v[k] >= hi;
    return (double)count / (double)n;
}

/* Values use most of [0, 1] whatever the octave count and roughness (generator version 2):
 * fbm's +-2.5 standard deviations span it, ridged maps its 1st and 99th percentiles to 0.02 and
 * 0.98. Roughness values between the ridged table's steps are included. */
static void test_fractal_distribution(void)
{
    enum { N = 200000 };
    double *x = malloc(N * sizeof *x), *z = malloc(N * sizeof *z);
    float *v = malloc(N * sizeof *v);
    CHECK(x && z && v);
    if (!x || !z || !v) goto done;
    uint64_t state = 2024;
    /* random points over 10^6 features: independent samples of the distribution */
    for (size_t k = 0; k < N; k++) {
        x[k] = (rng_unit(&state) - 0.5) * 1e6;
        z[k] = (rng_unit(&state) - 0.5) * 1e6;
    }
    /* one octave's standard deviation, as TRN_NOISE_OCTAVE_SD derives it */
    trn_fractal_params params;
    trn_fractal_params_init(&params, 8, TRN_PROFILE_FBM, 1, 1.0, 0.5);
    params.signed_output = true;
    trn_fractal_points(&params, x, z, N, v);
    double s1 = 0.0, s2 = 0.0;
    for (size_t k = 0; k < N; k++) {
        s1 += v[k];
        s2 += (double)v[k] * (double)v[k];
    }
    const double sd = sqrt(s2 / N - (s1 / N) * (s1 / N));
    CHECK(fabs(sd / TRN_NOISE_OCTAVE_SD - 1.0) < 0.01);

    typedef struct {
        trn_profile profile;
        uint32_t octaves;
        double roughness;
    } set;
    const set sets[] = {
        {TRN_PROFILE_FBM, 1, 0.5},      {TRN_PROFILE_FBM, 3, 0.5},
        {TRN_PROFILE_FBM, 6, 0.5},      {TRN_PROFILE_FBM, 6, 0.8},
        {TRN_PROFILE_FBM, 16, 1.0},     {TRN_PROFILE_FBM, 9, 0.23},
        {TRN_PROFILE_RIDGED, 1, 0.5},   {TRN_PROFILE_RIDGED, 4, 0.35},
        {TRN_PROFILE_RIDGED, 6, 0.5},   {TRN_PROFILE_RIDGED, 8, 0.37},
        {TRN_PROFILE_RIDGED, 12, 0.83}, {TRN_PROFILE_RIDGED, 16, 1.0},
        {TRN_PROFILE_RIDGED, 3, 0.12},  {TRN_PROFILE_RIDGED, 16, 0.97},
    };
    for (size_t c = 0; c < sizeof sets / sizeof sets[0]; c++) {
        const set *p = &sets[c];
        trn_fractal_params_init(&params, 100u + c, p->profile, p->octaves, 1.0, p->roughness);
        trn_fractal_points(&params, x, z, N, v);
        const double low = share_at(v, N, 0.0f, 2.0f), high = share_at(v, N, -1.0f, 1.0f);
        qsort(v, N, sizeof *v, compare_floats);
        const double p1 = v[N / 100], p50 = v[N / 2], p99 = v[N - 1 - N / 100];
        const bool fbm = p->profile == TRN_PROFILE_FBM;
        /* fbm: 1 octave is flatter than normal (its 1st percentile is 2.14 sd out), many are
         * nearly normal (2.33 sd); ridged: the table's 0.02 and 0.98, within its sampling and
         * interpolation error */
        const bool ok = fbm ? p1 > 0.025 && p1 < 0.08 && p99 > 0.92 && p99 < 0.975 &&
                                  fabs(p50 - 0.5) < 0.01 && low < 0.01 && high < 0.01
                            : p1 > 0.012 && p1 < 0.028 && p99 > 0.972 && p99 < 0.988 &&
                                  low < 0.012 && high < 0.012;
        if (!ok)
            fprintf(stderr,
                    "%s %u octaves, roughness %g: p1 %.4f p50 %.4f p99 %.4f, %.2f%% at 0, "
                    "%.2f%% at 1\n",
                    fbm ? "fbm" : "ridged", p->octaves, p->roughness, p1, p50, p99, 100.0 * low,
                    100.0 * high);
        CHECK(ok);
    }

    /* Roughness 0 leaves later octaves at amplitude 0: any octave count gives exactly one
     * octave's values, for both profiles. */
    float *w = malloc(1000 * sizeof *w);
    CHECK(w != NULL);
    for (int profile = 0; profile < 2 && w; profile++) {
        trn_fractal_params_init(&params, 5, (trn_profile)profile, 1, 1.0, 0.0);
        trn_fractal_points(&params, x, z, 1000, v);
        trn_fractal_params_init(&params, 5, (trn_profile)profile, 11, 1.0, 0.0);
        trn_fractal_points(&params, x, z, 1000, w);
        CHECK(same_bits(v, w, 1000, "roughness 0: 1 vs 11 octaves"));
    }
    free(w);
done:
    free(x);
    free(z);
    free(v);
}

/* ---- landforms ---- */

static void test_landform_matches_reference(void)
{
    trn_landform forms[4];
    forms[0] = landform_defaults("plain");
    forms[1] = landform_defaults("mountains");
    forms[1].profile = TRN_PROFILE_RIDGED;
    forms[1].height_variation = 450.0;
    forms[1].feature_size = 650.0;
    forms[1].roughness = 0.35;
    forms[1].octaves = 4;
    forms[1].warp_amplitude = 100.0;
    forms[1].warp_feature_size = 500.0;
    forms[1].stretch = 2.0;
    forms[1].heading = 30.0;
    forms[2] = landform_defaults("dunes");
    forms[2].base_height = -20.0;
    forms[2].height_variation = 12.5;
    forms[2].feature_size = 40.0;
    forms[2].octaves = 3;
    forms[2].stretch = 0.25;
    forms[2].heading = -123.0;
    forms[3] = landform_defaults("warped");
    forms[3].warp_amplitude = 3000.0;
    forms[3].warp_feature_size = 64.0;
    forms[3].octaves = 9;
    forms[3].feature_size = 33.0;
    for (int f = 0; f < 4; f++) {
        trn_field field;
        CHECK_OK(trn_field_init(&field, 67, 45, 2048.0, 1500.0, NULL));
        size_t n = trn_field_sample_count(&field);
        float *want = malloc(n * sizeof *want);
        CHECK(want != NULL);
        if (!want) {
            trn_field_dispose(&field);
            return;
        }
        CHECK_OK(trn_landform_fill(&forms[f], 20240601, &field, NULL, NULL, NULL));
        ref_landform_field(&forms[f], 20240601, &field, want);
        CHECK(same_bits(field.heights, want, n, forms[f].name));
        for (size_t k = 0; k < n; k++)
            CHECK(field.heights[k] >= (float)forms[f].base_height &&
                  field.heights[k] <= (float)(forms[f].base_height + forms[f].height_variation));
        free(want);
        trn_field_dispose(&field);
    }
}

static void test_landform_warp_zero_and_transforms(void)
{
    /* One world unit per cell, so sample i sits at exactly x = i and trn_fractal_row with
     * x0 = 0, dx = 1 samples the same coordinates. */
    trn_landform lf = landform_defaults("hills");
    lf.base_height = 10.0;
    lf.height_variation = 250.0;
    lf.octaves = 6;
    trn_field field;
    CHECK_OK(trn_field_init(&field, 300, 40, 300.0, 40.0, NULL));
    CHECK_OK(trn_landform_fill(&lf, 5, &field, NULL, NULL, NULL));
    const uint64_t relief = trn_subseed_of(5, TRN_CHANNEL_LANDFORM);
    float row[301], expect[301];
    bool identical = true;
    for (uint32_t j = 0; j <= 40; j++) {
        trn_fractal_row(relief, TRN_PROFILE_FBM, 6, 256.0, 0.5, 0.0, 1.0, (double)j, 301, row);
        for (size_t i = 0; i <= 300; i++)
            expect[i] = (float)(10.0 + 250.0 * (double)row[i]);
        identical = identical && same_bits(field.heights + (size_t)j * 301, expect, 301,
                                           "warp 0 vs trn_fractal_row");
    }
    CHECK(identical);

    /* A warp changes the heights; the same warp with amplitude 0 gives exactly the above. */
    float *unwarped = malloc(trn_field_sample_count(&field) * sizeof(float));
    CHECK(unwarped != NULL);
    if (!unwarped) {
        trn_field_dispose(&field);
        return;
    }
    const size_t n = trn_field_sample_count(&field);
    memcpy(unwarped, field.heights, n * sizeof(float));
    lf.warp_feature_size = 77.0;
    CHECK_OK(trn_landform_fill(&lf, 5, &field, NULL, NULL, NULL));
    CHECK(same_bits(field.heights, unwarped, n, "warp_amplitude 0 with another feature size"));
    lf.warp_amplitude = 40.0;
    CHECK_OK(trn_landform_fill(&lf, 5, &field, NULL, NULL, NULL));
    size_t changed = 0;
    for (size_t k = 0; k < n; k++)
        changed += field.heights[k] != unwarped[k];
    CHECK(changed > n * 9 / 10);

    /* Stretch 2 along heading 0 samples x / 2: exactly trn_fractal_row with dx = 0.5. */
    lf.warp_amplitude = 0.0;
    lf.stretch = 2.0;
    CHECK_OK(trn_landform_fill(&lf, 5, &field, NULL, NULL, NULL));
    identical = true;
    for (uint32_t j = 0; j <= 40; j += 13) {
        trn_fractal_row(relief, TRN_PROFILE_FBM, 6, 256.0, 0.5, 0.0, 0.5, (double)j, 301, row);
        for (size_t i = 0; i <= 300; i++)
            expect[i] = (float)(10.0 + 250.0 * (double)row[i]);
        identical = identical && same_bits(field.heights + (size_t)j * 301, expect, 301,
                                           "stretch 2 vs trn_fractal_row");
    }
    CHECK(identical);

    /* Heading 90 turns +Z into the noise's +u: height(x, z) is the unrotated field at (z, -x),
     * up to the rounding of cos(90 degrees). */
    lf.stretch = 1.0;
    lf.heading = 90.0;
    CHECK_OK(trn_landform_fill(&lf, 5, &field, NULL, NULL, NULL));
    double worst = 0.0;
    for (uint32_t j = 0; j <= 40; j += 5) {
        for (uint32_t i = 0; i <= 300; i += 23) {
            float v;
            trn_fractal_row(relief, TRN_PROFILE_FBM, 6, 256.0, 0.5, (double)j, 1.0, -(double)i, 1,
                            &v);
            double diff = fabs((double)field.heights[(size_t)j * 301 + i] - (10.0 + 250.0 * v));
            if (diff > worst) worst = diff;
        }
    }
    CHECK(worst < 1e-3);
    free(unwarped);
    trn_field_dispose(&field);
}

static void test_landform_goldens_and_threads(void)
{
    trn_landform lf = landform_defaults("mountains");
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 450.0;
    lf.feature_size = 650.0;
    lf.roughness = 0.35;
    lf.octaves = 4;
    lf.warp_amplitude = 100.0;
    lf.warp_feature_size = 500.0;
    lf.stretch = 2.0;
    lf.heading = 30.0;
    trn_landform hills = landform_defaults("hills");
    const trn_landform *forms[2] = {&lf, &hills};
    const uint64_t expected[2] = {0x71715c6b6beb84ebull, 0xccc6e3061c67c7f4ull};
    for (int f = 0; f < 2; f++) {
        trn_field one, two;
        CHECK_OK(trn_field_init(&one, 511, 300, 4096.0, 2400.0, NULL));
        CHECK_OK(trn_field_init(&two, 511, 300, 4096.0, 2400.0, NULL));
#ifdef _OPENMP
        int saved = omp_get_max_threads();
        omp_set_num_threads(1);
#endif
        CHECK_OK(trn_landform_fill(forms[f], 42, &one, NULL, NULL, NULL));
#ifdef _OPENMP
        omp_set_num_threads(2);
#endif
        CHECK_OK(trn_landform_fill(forms[f], 42, &two, NULL, NULL, NULL));
#ifdef _OPENMP
        omp_set_num_threads(saved);
#endif
        size_t n = trn_field_sample_count(&one);
        CHECK(memcmp(one.heights, two.heights, n * sizeof(float)) == 0);
        check_hash(forms[f]->name, hash_floats(one.heights, n), expected[f]);
        /* height_variation is the relief: the 1st..99th percentile of a few features' heights
         * spans most of it (generator version 1's 5-octave fbm spanned 0.44 of it) */
        qsort(two.heights, n, sizeof(float), compare_floats);
        const double span = (double)two.heights[n - 1 - n / 100] - (double)two.heights[n / 100];
        CHECK(span > 0.85 * forms[f]->height_variation);
        CHECK(two.heights[0] >= (float)forms[f]->base_height &&
              two.heights[n - 1] <= (float)(forms[f]->base_height + forms[f]->height_variation));
        trn_field_dispose(&one);
        trn_field_dispose(&two);
    }
}

typedef struct progress_log {
    int calls, cancel_at;
    double last;
    bool monotonic, stage_ok;
} progress_log;

static int log_progress(double done, const char *stage, void *user)
{
    progress_log *log = user;
    if (done < log->last) log->monotonic = false;
    if (!stage || strcmp(stage, "landform") != 0) log->stage_ok = false;
    log->last = done;
    log->calls++;
    return log->calls == log->cancel_at ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_landform_progress_and_cancel(void)
{
    trn_landform lf = landform_defaults("hills");
    trn_field field;
    CHECK_OK(trn_field_init(&field, 100, 1999, 1000.0, 20000.0, NULL));
    const size_t n = trn_field_sample_count(&field);
    progress_log log = {0, 0, 0.0, true, true};
    CHECK_OK(trn_landform_fill(&lf, 1, &field, log_progress, &log, NULL));
    CHECK(log.monotonic && log.stage_ok);
    CHECK(log.calls >= 10);
    CHECK(log.last == 1.0);

    /* Cancelling at the first report leaves the field untouched. */
    for (size_t k = 0; k < n; k++)
        field.heights[k] = -7.0f;
    progress_log first = {0, 1, 0.0, true, true};
    trn_error err;
    trn_error_clear(&err);
    CHECK_STATUS(trn_landform_fill(&lf, 1, &field, log_progress, &first, &err), TRN_ERR_CANCELLED);
    CHECK_EQ_INT(err.code, TRN_ERR_CANCELLED);
    CHECK_EQ_INT(err.offset, -1);
    CHECK_CONTAINS(err.message, "landform \"hills\": cancelled");
    CHECK_EQ_INT(first.calls, 1);
    size_t untouched = 0;
    for (size_t k = 0; k < n; k++)
        untouched += field.heights[k] == -7.0f;
    CHECK_EQ_INT(untouched, n);

    /* Cancelling later stops between bands: the first rows are written, the last are not. On
     * one thread, so the order is fixed: a second thread could finish its whole block of rows
     * (the last included) before the calling thread reaches its third report when the machine
     * is busy. */
#ifdef _OPENMP
    const int saved_threads = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    progress_log later = {0, 3, 0.0, true, true};
    CHECK_STATUS(trn_landform_fill(&lf, 1, &field, log_progress, &later, &err), TRN_ERR_CANCELLED);
#ifdef _OPENMP
    omp_set_num_threads(saved_threads);
#endif
    CHECK_EQ_INT(later.calls, 3);
    CHECK(later.last > 0.0 && later.last < 1.0);
    CHECK(field.heights[0] != -7.0f);
    CHECK(field.heights[n - 1] == -7.0f);
    trn_field_dispose(&field);
}

static void test_landform_invalid(void)
{
    trn_field field;
    CHECK_OK(trn_field_init(&field, 8, 8, 64.0, 64.0, NULL));
    typedef struct {
        const char *control;
        const char *message;
    } bad;
    const bad cases[] = {
        {"feature_size", "landform \"x\": feature_size must be positive and finite, found 0"},
        {"octaves", "landform \"x\": octaves must be a whole number 1..16, found 17"},
        {"roughness", "landform \"x\": roughness must be in [0, 1], found 1.5"},
        {"stretch", "landform \"x\": stretch must be positive and finite, found -1"},
        {"warp_amplitude", "landform \"x\": warp_amplitude must be finite and >= 0, found -3"},
        {"warp_feature_size",
         "landform \"x\": warp_feature_size must be positive and finite, found inf"},
        {"heading", "landform \"x\": heading must be finite, found nan"},
        {"height_variation", "landform \"x\": height_variation must be finite and >= 0, found -1"},
        {"base_height", "landform \"x\": heights up to 6e+38 do not fit in a float height"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        trn_landform lf = landform_defaults("x");
        const char *k = cases[c].control;
        if (!strcmp(k, "feature_size")) lf.feature_size = 0.0;
        if (!strcmp(k, "octaves")) lf.octaves = 17;
        if (!strcmp(k, "roughness")) lf.roughness = 1.5;
        if (!strcmp(k, "stretch")) lf.stretch = -1.0;
        if (!strcmp(k, "warp_amplitude")) lf.warp_amplitude = -3.0;
        if (!strcmp(k, "warp_feature_size")) lf.warp_feature_size = INFINITY;
        if (!strcmp(k, "heading")) lf.heading = NAN;
        if (!strcmp(k, "height_variation")) lf.height_variation = -1.0;
        if (!strcmp(k, "base_height")) {
            lf.base_height = 3e38;
            lf.height_variation = 3e38;
        }
        field.heights[0] = 123.0f;
        trn_error err;
        trn_error_clear(&err);
        CHECK_STATUS(trn_landform_fill(&lf, 1, &field, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
        CHECK_EQ_INT(err.offset, -1);
        CHECK_CONTAINS(err.message, cases[c].message);
        CHECK(field.heights[0] == 123.0f);
    }
    trn_landform lf = landform_defaults("x");
    trn_error err;
    trn_field empty = field;
    empty.heights = NULL;
    CHECK_STATUS(trn_landform_fill(&lf, 1, &empty, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "found 8 x 8 cells without heights");
    trn_field flat = field;
    flat.size_x = 0.0;
    CHECK_STATUS(trn_landform_fill(&lf, 1, &flat, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "size must be positive and finite, found 0 x 64");
    CHECK_STATUS(trn_landform_fill(NULL, 1, &field, NULL, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&field);
}

static void test_precision_diagnostic(void)
{
    char msg[1024];
    trn_landform lf = landform_defaults("hills");
    /* Ordinary terrains pass. */
    CHECK(!trn_landform_precision_check(&lf, 4096.0, 4096.0, msg, sizeof msg));
    CHECK(msg[0] == '\0');
    lf.octaves = 16;
    lf.feature_size = 2048.0;
    CHECK(!trn_landform_precision_check(&lf, 16384.0, 16384.0, msg, sizeof msg));

    /* 16 octaves of 1-unit features over 10 km: 10000 * 2^15 = 3.3e8. */
    lf.feature_size = 1.0;
    CHECK(trn_landform_precision_check(&lf, 10000.0, 8000.0, msg, sizeof msg));
    CHECK_CONTAINS(msg, "landform \"hills\"");
    CHECK_CONTAINS(msg, "3.277e+08");
    CHECK_CONTAINS(msg, "10000 x 8000 terrain");
    CHECK_CONTAINS(msg, "2^22 (4194304)");
    CHECK_CONTAINS(msg, "Heights stay valid");
    /* 10000 * 2^8 = 2.56e6 fits, 10000 * 2^9 does not: 9 octaves. */
    CHECK_CONTAINS(msg, "use at most 9 octaves or a feature_size of at least 78.125");

    /* The warp amplitude widens the domain; the advice says so. */
    lf.feature_size = 100.0;
    lf.octaves = 6;
    lf.warp_amplitude = 2e7;
    CHECK(trn_landform_precision_check(&lf, 1000.0, 1000.0, msg, sizeof msg));
    CHECK_CONTAINS(msg, "warped by up to 2e+07");
    CHECK_CONTAINS(msg, "or a smaller warp_amplitude");

    /* A tiny stretch multiplies the along-heading coordinate. */
    lf.warp_amplitude = 0.0;
    lf.stretch = 1e-6;
    CHECK(trn_landform_precision_check(&lf, 1000.0, 1000.0, msg, sizeof msg));
    CHECK_CONTAINS(msg, "or a stretch nearer 1");

    /* The warp's own coordinates. */
    lf.stretch = 1.0;
    lf.warp_amplitude = 5.0;
    lf.warp_feature_size = 1e-4;
    CHECK(trn_landform_precision_check(&lf, 1000.0, 1000.0, msg, sizeof msg));
    CHECK_CONTAINS(msg, "its warp samples noise lattice coordinates up to 1e+07");
    CHECK_CONTAINS(msg, "warp_feature_size of at least 0.000238419");
    CHECK(trn_landform_precision_check(&lf, 1000.0, 1000.0, NULL, 0));
    CHECK(!trn_landform_precision_check(NULL, 1000.0, 1000.0, msg, sizeof msg));
}

static void test_extreme_landforms_stay_finite(void)
{
    trn_landform forms[5];
    for (int f = 0; f < 5; f++)
        forms[f] = landform_defaults("extreme");
    forms[0].feature_size = 1e-6;
    forms[0].octaves = 16;
    forms[1].warp_amplitude = 1e300;
    forms[1].warp_feature_size = 1e-300;
    forms[1].octaves = 16;
    forms[1].profile = TRN_PROFILE_RIDGED;
    forms[2].feature_size = 1e300;
    forms[2].stretch = 1e-300;
    forms[2].heading = 1e15;
    forms[3].feature_size = DBL_MIN;
    forms[3].stretch = 1e300;
    forms[3].base_height = -1e37;
    forms[3].height_variation = 2e37;
    forms[4].warp_amplitude = DBL_MAX;
    forms[4].octaves = 1;
    forms[4].roughness = 1.0;
    const double sizes[3] = {1.0, 1e6, 1e300};
    for (int f = 0; f < 5; f++) {
        for (int s = 0; s < 3; s++) {
            trn_field field;
            CHECK_OK(trn_field_init(&field, 16, 9, sizes[s], sizes[s] * 0.5, NULL));
            CHECK_OK(trn_landform_fill(&forms[f], 3, &field, NULL, NULL, NULL));
            size_t n = trn_field_sample_count(&field);
            const float lo = (float)forms[f].base_height,
                        hi = (float)(forms[f].base_height + forms[f].height_variation);
            size_t bad = 0;
            for (size_t k = 0; k < n; k++)
                bad += !(isfinite(field.heights[k]) && field.heights[k] >= lo &&
                         field.heights[k] <= hi);
            CHECK_EQ_INT(bad, 0);
            trn_field_dispose(&field);
        }
    }
    char msg[512];
    CHECK(trn_landform_precision_check(&forms[0], 1e6, 1e6, msg, sizeof msg));
    CHECK(trn_landform_precision_check(&forms[1], 1.0, 1.0, msg, sizeof msg));
    CHECK(trn_landform_precision_check(&forms[2], 1e6, 1e6, msg, sizeof msg));
}

/* ---- moisture ---- */

static void test_moisture(void)
{
    enum { CELLS = 700 };
    float row[CELLS + 1];
    /* The row form is trn_moisture_at at the field's sample positions, bit for bit. */
    const double size_x = 3333.3, z = 1234.5;
    trn_moisture_row(42, size_x, CELLS, z, row);
    bool identical = true;
    for (uint32_t i = 0; i <= CELLS; i++) {
        float at = (float)trn_moisture_at(42, (double)i * size_x / (double)CELLS, z);
        identical = identical && memcmp(&at, &row[i], sizeof at) == 0;
    }
    CHECK(identical);
    check_hash("moisture row", hash_floats(row, CELLS + 1), 0xec50c9d8371c8906ull);
    /* Seeded by channel biome_placement: 3 octaves of fbm at feature size 512. */
    const uint64_t channel = trn_subseed_of(42, TRN_CHANNEL_BIOME_PLACEMENT);
    /* moisture's own mapping, unchanged by generator version 2: v = (s + 1) / 2 of the sum
     * over the amplitude sum, stretched by 2.25 about 0.5, in float */
    bool same = true;
    for (size_t i = 0; i <= CELLS; i++) {
        const float s = ref_fractal(channel, TRN_PROFILE_FBM, true, 3, 512.0, 0.5,
                                    (double)i * size_x / CELLS, z);
        float want = 0.5f + ((s + 1.0f) * 0.5f - 0.5f) * 2.25f;
        want = want < 0.0f ? 0.0f : want > 1.0f ? 1.0f : want;
        same = same && memcmp(&want, &row[i], sizeof want) == 0;
    }
    CHECK(same);
    /* In [0, 1], spread over it, smooth, and a function of the seed. */
    double sum = 0.0, lo = 1.0, hi = 0.0, step = 0.0;
    size_t count = 0;
    for (int j = 0; j < 60; j++) {
        trn_moisture_row(7, 60000.0, CELLS, j * 1000.0, row);
        for (size_t i = 0; i <= CELLS; i++) {
            CHECK(row[i] >= 0.0f && row[i] <= 1.0f);
            sum += row[i];
            if (row[i] < lo) lo = row[i];
            if (row[i] > hi) hi = row[i];
            count++;
        }
    }
    CHECK(fabs(sum / (double)count - 0.5) < 0.05);
    CHECK(lo < 0.1 && hi > 0.9);
    for (int k = 0; k < 1000; k++) {
        double x = k * 37.3 - 9000.0, zz = k * -11.1;
        double d = fabs(trn_moisture_at(7, x + 1.0, zz) - trn_moisture_at(7, x, zz));
        if (d > step) step = d;
    }
    CHECK(step < 0.05);
    CHECK(trn_moisture_at(7, 100.0, 200.0) != trn_moisture_at(8, 100.0, 200.0));
    CHECK(trn_moisture_at(7, 100.0, 200.0) == trn_moisture_at(7, 100.0, 200.0));
}

int main(void)
{
    RUN(test_subseed_goldens);
    RUN(test_noise2_matches_reference);
    RUN(test_noise2_range_and_continuity);
    RUN(test_fractal_matches_reference);
    RUN(test_isa_variants_identical);
    RUN(test_rows_match_reference);
    RUN(test_fractal_goldens);
    RUN(test_fractal_distribution);
    RUN(test_landform_matches_reference);
    RUN(test_landform_warp_zero_and_transforms);
    RUN(test_landform_goldens_and_threads);
    RUN(test_landform_progress_and_cancel);
    RUN(test_landform_invalid);
    RUN(test_precision_diagnostic);
    RUN(test_extreme_landforms_stay_finite);
    RUN(test_moisture);
    return trn_test_finish();
}
