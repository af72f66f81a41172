/* Aeolian dune fields: bending crest lines, asymmetric profiles, slip faces at repose. */
#include "gen/dunes.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/rows.h"
#include "gen/noise_internal.h"

#define PI 3.14159265358979323846
#define ROW_BLOCK 128u
#define DUNES_PARALLEL_ROWS 32u
#define DUNES_STAGE "dunes"
/* Junction cores: crest height fades to nothing within this many wavelengths of a crest end. */
#define CORE_WAVELENGTHS 0.6
/* The local crest spacing stays within these multiples of the wavelength: a phase gradient
 * near a junction core or under a strong warp would otherwise make dunes of any size. */
#define SPACING_MIN 0.3
#define SPACING_MAX 3.0
/* Wavelengths of the spacing noise's shift of the crests (its sum's amplitude). */
#define SPACING_JITTER 0.25

void trn_dune_params_default(trn_dune_params *p)
{
    memset(p, 0, sizeof *p);
    p->pattern = TRN_DUNES_TRANSVERSE;
    p->height = 30.0;
    p->wavelength = 400.0;
    p->stoss_angle = 8.0;
    p->repose_angle = 32.0;
    p->sand_supply = 0.8;
    p->crest_warp = 80.0;
    p->warp_feature_size = 1200.0;
    p->defect_spacing = 1600.0;
    p->horn = 0.35;
}

const char *trn_dune_params_problem(const trn_dune_params *p)
{
    if (p->pattern != TRN_DUNES_TRANSVERSE && p->pattern != TRN_DUNES_LINEAR)
        return "pattern must be transverse or linear";
    if (!isfinite(p->base_height)) return "base_height must be finite";
    if (!(p->height >= 0.0 && p->height < 1e6)) return "height must be 0 to 1e6 metres";
    if (!(p->wavelength > 0.0 && p->wavelength < 1e7)) return "wavelength must be positive";
    if (!isfinite(p->wind_heading)) return "wind_heading must be finite";
    if (!(p->stoss_angle >= 1.0 && p->stoss_angle <= 25.0))
        return "stoss_angle must be 1 to 25 degrees";
    if (!(p->repose_angle >= 20.0 && p->repose_angle <= 40.0))
        return "repose_angle must be 20 to 40 degrees";
    if (!(p->stoss_angle < p->repose_angle)) return "stoss_angle must be under repose_angle";
    if (!(p->sand_supply >= 0.0 && p->sand_supply <= 1.0)) return "sand_supply must be 0 to 1";
    if (!(p->crest_warp >= 0.0 && p->crest_warp < 1e7)) return "crest_warp must be >= 0";
    if (!(p->warp_feature_size > 0.0 && p->warp_feature_size < 1e9))
        return "warp_feature_size must be positive";
    if (!(p->defect_spacing >= 0.0 && p->defect_spacing < 1e9))
        return "defect_spacing must be >= 0";
    if (!(p->horn >= 0.0 && p->horn <= 2.0)) return "horn must be 0 to 2";
    return NULL;
}

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform number in [0, 1) from bits 11..63 of h. */
static double unit(uint64_t h)
{
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double smoothstep(double e0, double e1, double x)
{
    double t = (x - e0) / (e1 - e0);
    t = t < 0.0 ? 0.0 : t > 1.0 ? 1.0 : t;
    return t * t * (3.0 - 2.0 * t);
}

typedef struct dune_plan {
    trn_dune_params p;
    trn_fractal_params warp, supply, flip, spacing_noise;
    double c, s; /* cos and sin of the wind heading */
    double lambda, tan_stoss, tan_repose;
    double spacing; /* of the junction cells; 0: none */
    uint64_t defect_seed;
    double delta; /* finite-difference step of the phase gradient */
    size_t samples_x;
    double size_x, size_z, cells_x, cells_z;
} dune_plan;

static void plan_make(dune_plan *plan, const trn_dune_params *p, uint64_t seed, const trn_field *f)
{
    memset(plan, 0, sizeof *plan);
    plan->p = *p;
    const double lambda = p->wavelength;
    trn_fractal_params_init(&plan->warp, mix64(seed ^ 0x7761727000000000ull), TRN_PROFILE_FBM, 5,
                            p->warp_feature_size, 0.45);
    plan->warp.signed_output = true;
    trn_fractal_params_init(&plan->supply, mix64(seed ^ 0x73616e6400000000ull), TRN_PROFILE_FBM,
                            2, 2.5 * lambda, 0.5);
    trn_fractal_params_init(&plan->spacing_noise, mix64(seed ^ 0x7370616300000000ull),
                            TRN_PROFILE_FBM, 2, 2.0 * lambda, 0.5);
    plan->spacing_noise.signed_output = true;
    trn_fractal_params_init(&plan->flip, mix64(seed ^ 0x666c697000000000ull), TRN_PROFILE_FBM, 1,
                            4.0 * lambda, 0.5);
    const double radians = p->wind_heading * (PI / 180.0);
    plan->c = cos(radians);
    plan->s = sin(radians);
    plan->lambda = lambda;
    plan->tan_stoss = tan(p->stoss_angle * (PI / 180.0));
    /* Built half a degree under repose: where crest lines bend, the spacing changes along the slip
     * face and steepens it a little; the avalanche pass trims what is still over. */
    plan->tan_repose = tan((p->repose_angle - 0.5) * (PI / 180.0));
    plan->spacing = p->defect_spacing > 0.0
                        ? (p->defect_spacing < 3.0 * lambda ? 3.0 * lambda : p->defect_spacing)
                        : 0.0;
    plan->defect_seed = mix64(seed ^ 0x6a756e6300000000ull);
    plan->delta = lambda / 64.0;
    plan->size_x = f->size_x;
    plan->size_z = f->size_z;
    plan->cells_x = (double)f->cells_x;
    plan->cells_z = (double)f->cells_z;
    plan->samples_x = trn_grid_samples_x(f->cells_x);
}

/* One lattice cell's junction pair: its middle, half its length, the sign of its phase. */
typedef struct junction_cell {
    bool present;
    double ca, cb, half, sign;
} junction_cell;

/* The 3 x 3 cells around the last point asked about: consecutive samples nearly always share
 * them, and hashing them again for each was half the generator's time. */
typedef struct junction_cache {
    bool valid;
    int64_t ia0, ib0;
    junction_cell cells[9];
} junction_cache;

static void junction_cells(const dune_plan *plan, int64_t ia0, int64_t ib0, junction_cache *jc)
{
    const double d = plan->spacing, lambda = plan->lambda;
    int k = 0;
    for (int da = -1; da <= 1; da++) {
        for (int db = -1; db <= 1; db++, k++) {
            junction_cell *cell = &jc->cells[k];
            const int64_t ia = ia0 + da, ib = ib0 + db;
            uint64_t h = mix64(plan->defect_seed ^ ((uint64_t)ia * 0x9e3779b97f4a7c15ull));
            h = mix64(h ^ ((uint64_t)ib * 0xc2b2ae3d27d4eb4full));
            cell->present = unit(h) < 0.75; /* three cells in four hold a junction pair */
            if (!cell->present) continue;
            const uint64_t h1 = mix64(h + 1u), h2 = mix64(h + 2u), h3 = mix64(h + 3u);
            cell->ca = ((double)ia + 0.25 + 0.5 * unit(h1)) * d;
            cell->cb = ((double)ib + 0.25 + 0.5 * unit(h2)) * d;
            cell->half = lambda * (0.75 + 0.75 * unit(h3));
            cell->sign = (h >> 7) & 1u ? 1.0 : -1.0;
        }
    }
    jc->ia0 = ia0;
    jc->ib0 = ib0;
    jc->valid = true;
}

/* Crest junctions: each cell of a square lattice (side `spacing`, in the wind's frame) may hold
 * a pair of dislocations, the two ends of one extra crest segment. Its phase is the angle the
 * segment subtends at the point over 2 pi: smooth everywhere but on the segment, where it jumps
 * by exactly one wavelength (invisible in the periodic profile), so two crests meet at each end
 * (a Y-junction). Away from the segment it fades to nothing before the next cell but one.
 * Returns the phase added at (a, b); *fade gets the crest height factor that fades each crest
 * end to nothing. */
static double junctions(const dune_plan *plan, double a, double b, junction_cache *jc,
                        double *fade)
{
    *fade = 1.0;
    const double d = plan->spacing;
    if (d <= 0.0) return 0.0;
    const double lambda = plan->lambda;
    const int64_t ia0 = (int64_t)floor(a / d), ib0 = (int64_t)floor(b / d);
    if (!jc->valid || jc->ia0 != ia0 || jc->ib0 != ib0) junction_cells(plan, ia0, ib0, jc);
    double phase = 0.0;
    for (int k = 0; k < 9; k++) {
        const junction_cell *cell = &jc->cells[k];
        if (!cell->present) continue;
        const double half = cell->half;
        const double ra = a - cell->ca, rb = b - cell->cb;
        const double r = sqrt(ra * ra + rb * rb);
        const double r1 = half + 0.25 * lambda, r2 = r1 + 1.5 * lambda;
        if (r >= r2) continue;
        /* The segment runs along the crests (b), from cb - half to cb + half. */
        const double p1a = ra, p1b = rb + half, p2a = ra, p2b = rb - half;
        const double cross = p1a * p2b - p1b * p2a, dot = p1a * p2a + p1b * p2b;
        const double taper = 1.0 - smoothstep(r1, r2, r);
        phase += cell->sign * atan2(cross, dot) / (2.0 * PI) * taper;
        const double e1 = sqrt(p1a * p1a + p1b * p1b), e2 = sqrt(p2a * p2a + p2b * p2b);
        const double core = CORE_WAVELENGTHS * lambda;
        *fade *= smoothstep(0.0, core, e1 < e2 ? e1 : e2);
    }
    return phase;
}

/* Heights of row j (every sample from its world position alone). */
static void fill_row(const dune_plan *plan, uint32_t j, float *heights)
{
    /* Three points per sample: the sample and one step along x and along z. */
    double x[3 * ROW_BLOCK], z[3 * ROW_BLOCK], a[3 * ROW_BLOCK], b[3 * ROW_BLOCK];
    double sx[3 * ROW_BLOCK], sz[3 * ROW_BLOCK];
    float warp[3 * ROW_BLOCK], supply[3 * ROW_BLOCK], irregular[3 * ROW_BLOCK], flip[ROW_BLOCK];
    double phase[3 * ROW_BLOCK], crest[3 * ROW_BLOCK];
    const trn_dune_params *p = &plan->p;
    const bool linear = p->pattern == TRN_DUNES_LINEAR;
    const double row_z = (double)j * plan->size_z / plan->cells_z;
    const double c = plan->c, s = plan->s, lambda = plan->lambda, delta = plan->delta;
    const double t0 = 1.0 - 1.25 * p->sand_supply;
    junction_cache jc;
    memset(&jc, 0, sizeof jc);
    for (size_t i0 = 0; i0 < plan->samples_x; i0 += ROW_BLOCK) {
        const size_t n = plan->samples_x - i0 < ROW_BLOCK ? plan->samples_x - i0 : ROW_BLOCK;
        for (size_t k = 0; k < n; k++) {
            const double x0 = (double)(i0 + k) * plan->size_x / plan->cells_x;
            x[k] = x0, z[k] = row_z;
            x[n + k] = x0 + delta, z[n + k] = row_z;
            x[2 * n + k] = x0, z[2 * n + k] = row_z + delta;
        }
        for (size_t k = 0; k < 3 * n; k++) {
            const double u = x[k] * c + z[k] * s, v = z[k] * c - x[k] * s;
            a[k] = linear ? v : u; /* across the crests */
            b[k] = linear ? u : v; /* along them */
            /* The supply noise varies twice as slowly across the crests as along them. */
            sx[k] = 0.5 * a[k];
            sz[k] = b[k];
        }
        trn_fractal_points(&plan->warp, x, z, 3 * n, warp);
        trn_fractal_points(&plan->supply, sx, sz, 3 * n, supply);
        trn_fractal_points(&plan->spacing_noise, x, z, 3 * n, irregular);
        if (linear) trn_fractal_points(&plan->flip, x, z, n, flip);
        for (size_t k = 0; k < 3 * n; k++) {
            const double w = (double)supply[k];
            const double amount = smoothstep(t0 - 0.25, t0 + 0.25, w);
            double fade;
            /* Real crest spacings vary by a fifth or more about their mean: a shift of up to
             * a quarter wavelength over two wavelengths. */
            double ph = (a[k] + p->crest_warp * (double)warp[k]) / lambda +
                        SPACING_JITTER * (double)irregular[k] +
                        junctions(plan, a[k], b[k], &jc, &fade);
            /* Low dunes move faster: where a crest is lower, it runs ahead downwind (lobes
             * along a ridge; where the sand thins out, the horns of a barchan). */
            const double relative = amount * (0.6 + 0.4 * w);
            if (!linear) ph -= p->horn * (1.0 - relative);
            phase[k] = ph;
            crest[k] = p->height * relative * fade;
        }
        for (size_t k = 0; k < n; k++) {
            const double gx = remainder(phase[n + k] - phase[k], 1.0) / delta;
            const double gz = remainder(phase[2 * n + k] - phase[k], 1.0) / delta;
            const double glen = sqrt(gx * gx + gz * gz);
            double g = glen * lambda;
            g = g < 1.0 / SPACING_MAX ? 1.0 / SPACING_MAX
                : g > 1.0 / SPACING_MIN ? 1.0 / SPACING_MIN
                                        : g;
            const double spacing = lambda / g;
            const double h = crest[k];
            /* The slip face falls at tan_f along the crests' normal; where the crest height
             * changes along the slip face too, its slope adds, so tan_f is chosen to make the
             * whole slope the face angle: |grad h - tan_f n| = tan_face. */
            double tan_lee = plan->tan_repose, tan_back = plan->tan_repose;
            if (glen > 0.0) {
                const double hx = (crest[n + k] - h) / delta, hz = (crest[2 * n + k] - h) / delta;
                const double along = (hx * gx + hz * gz) / glen, all = hx * hx + hz * hz;
                const double disc = plan->tan_repose * plan->tan_repose - all + along * along;
                if (disc > 0.0) {
                    tan_lee = along + sqrt(disc);
                    tan_back = -along + sqrt(disc);
                }
                if (tan_lee < plan->tan_stoss) tan_lee = plan->tan_stoss;
                if (tan_back < plan->tan_stoss) tan_back = plan->tan_stoss;
            }
            const double t = phase[k] - floor(phase[k]);
            const double past = t * spacing, before = (1.0 - t) * spacing;
            double rise = 0.0;
            if (h > 0.0) {
                const double stoss_len = h / plan->tan_stoss;
                /* Crest at t = 0 (and 1); the slip face downwind of it, the stoss upwind of
                 * the next: convex near the crest, concave at the toe. */
                const double lee_a = h - past * tan_lee;
                const double stoss_a = h * smoothstep(0.0, 1.0, 1.0 - before / stoss_len);
                double prof = lee_a > stoss_a ? lee_a : stoss_a;
                if (linear) {
                    /* Seif dunes: the slip face changes sides along the crest. */
                    const double lee_b = h - before * tan_back;
                    const double stoss_b = h * smoothstep(0.0, 1.0, 1.0 - past / stoss_len);
                    const double prof_b = lee_b > stoss_b ? lee_b : stoss_b;
                    const double m = smoothstep(0.35, 0.65, (double)flip[k]);
                    prof = prof + (prof_b - prof) * m;
                }
                rise = prof > 0.0 ? prof : 0.0;
            }
            heights[i0 + k] = (float)(p->base_height + rise);
        }
    }
}

typedef struct fill_ctx {
    const dune_plan *plan;
    float *heights;
} fill_ctx;

static void fill_row_task(void *ctx, size_t row, int thread)
{
    (void)thread;
    const fill_ctx *fc = ctx;
    fill_row(fc->plan, (uint32_t)row, fc->heights + row * fc->plan->samples_x);
}

/* ---- the avalanche pass ---- */

/* Offsets to the neighbours a raster scan has already visited (rows below, then left): the 8
 * nearest and the 8 knight's moves, 16 directions 22.5 degrees or less apart. The backward
 * scan uses the same offsets negated. */
static const int scan_di[8] = {-1, -1, 0, 1, -2, 2, -1, 1};
static const int scan_dj[8] = {0, -1, -1, -1, -1, -1, -2, -2};

uint64_t trn_dunes_avalanche(trn_field *f, double repose_angle)
{
    const long nx = (long)f->cells_x + 1, nz = (long)f->cells_z + 1;
    const double dx = f->size_x / (double)f->cells_x, dz = f->size_z / (double)f->cells_z;
    const double tan_r = tan(repose_angle * (PI / 180.0));
    double drop[8];
    for (int n = 0; n < 8; n++)
        drop[n] = tan_r * sqrt((double)(scan_di[n] * scan_di[n]) * dx * dx +
                               (double)(scan_dj[n] * scan_dj[n]) * dz * dz);
    float *h = f->heights;
    uint64_t raised = 0;
    /* Forward then backward: each sample is raised to the highest of its scanned neighbours
     * less the drop at repose to it. Two passes reach the fixed point of the 16-direction
     * constraint, as a chamfer distance transform does. */
    for (int pass = 0; pass < 2; pass++) {
        const int sgn = pass == 0 ? 1 : -1;
        for (long jj = 0; jj < nz; jj++) {
            const long j = pass == 0 ? jj : nz - 1 - jj;
            for (long ii = 0; ii < nx; ii++) {
                const long i = pass == 0 ? ii : nx - 1 - ii;
                double v = (double)h[j * nx + i];
                const double v0 = v;
                for (int n = 0; n < 8; n++) {
                    const long ni = i + sgn * scan_di[n], nj = j + sgn * scan_dj[n];
                    if (ni < 0 || nj < 0 || ni >= nx || nj >= nz) continue;
                    const double floor_here = (double)h[nj * nx + ni] - drop[n];
                    if (floor_here > v) v = floor_here;
                }
                if (v > v0) {
                    h[j * nx + i] = (float)v;
                    raised++;
                }
            }
        }
    }
    return raised;
}

trn_status trn_dunes_fill(const trn_dune_params *p, uint64_t seed, trn_field *f, int threads,
                          const trn_progress *pr, trn_error *err)
{
    const char *problem = trn_dune_params_problem(p);
    if (problem)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "dune field: %s", problem);
    if (!f || !f->heights || f->cells_x < 1 || f->cells_z < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "dune field: the field needs allocated heights and at least one "
                             "cell each way");
    dune_plan plan;
    plan_make(&plan, p, seed, f);
    trn_progress whole = pr ? *pr : trn_progress_make(NULL, NULL);
    trn_progress shape = trn_progress_sub(&whole, 0.0, 0.8);
    fill_ctx fc = {&plan, f->heights};
    if (trn_rows_run((size_t)f->cells_z + 1u, threads, DUNES_PARALLEL_ROWS, fill_row_task, &fc,
                     &shape, DUNES_STAGE))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "dune field: cancelled");
    if (trn_progress_report(&whole, 0.8, "avalanche"))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "dune field: cancelled");
    (void)trn_dunes_avalanche(f, p->repose_angle);
    if (trn_progress_report(&whole, 1.0, "avalanche"))
        return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "dune field: cancelled");
    return TRN_OK;
}
