/* Inferred sea coverage (below sea level and connected to the border) and the exact distance
 * transform to it (Felzenszwalb-Huttenlocher, one pass per axis). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/xz_stack.h"
#include "core/progress.h"
#include "core/rows.h"
#include "terrane/generate.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* States of a sample in out[] during the flood fill. Candidates are below sea level but not
 * yet reached from the border; wet samples end as 0 and everything else as INFINITY. */
#define WD_CANDIDATE (-1.0f)
#define WD_WET 0.0f

/* ---- flood fill from the border through candidates (scanline spans, 4-neighbour) ---- */

/* Push one seed per run of candidates in row z between columns lo and hi. */
static bool push_runs(trn_xz_stack *s, const float *row, uint32_t z, uint32_t lo, uint32_t hi)
{
    bool in_run = false;
    for (uint32_t x = lo; x <= hi; x++) {
        const bool cand = row[x] == WD_CANDIDATE;
        if (cand && !in_run && !trn_xz_push(s, x, z)) return false;
        in_run = cand;
    }
    return true;
}

/* Fill from the seed (x, z): the span of candidates through it turns wet, and runs touching it
 * in the rows above and below are queued. The set reached does not depend on the order. */
static bool fill_from(trn_xz_stack *s, float *out, size_t nx, uint32_t nz, uint32_t x, uint32_t z)
{
    if (out[(size_t)z * nx + x] != WD_CANDIDATE) return true;
    if (!trn_xz_push(s, x, z)) return false;
    while (s->count) {
        const uint32_t sz = s->items[--s->count], sx = s->items[--s->count];
        float *row = out + (size_t)sz * nx;
        if (row[sx] != WD_CANDIDATE) continue;
        uint32_t lo = sx, hi = sx;
        while (lo > 0 && row[lo - 1] == WD_CANDIDATE)
            lo--;
        while (hi + 1 < nx && row[hi + 1] == WD_CANDIDATE)
            hi++;
        for (uint32_t k = lo; k <= hi; k++)
            row[k] = WD_WET;
        if (sz > 0 && !push_runs(s, row - nx, sz - 1, lo, hi)) return false;
        if (sz + 1 < nz && !push_runs(s, row + nx, sz + 1, lo, hi)) return false;
    }
    return true;
}

static bool flood_from_border(float *out, size_t nx, uint32_t nz)
{
    trn_xz_stack s = {NULL, 0, 0};
    bool ok = true;
    const uint32_t last_x = (uint32_t)(nx - 1), last_z = nz - 1;
    for (uint32_t x = 0; ok && x <= last_x; x++)
        ok = fill_from(&s, out, nx, nz, x, 0) && fill_from(&s, out, nx, nz, x, last_z);
    for (uint32_t z = 0; ok && z <= last_z; z++)
        ok = fill_from(&s, out, nx, nz, 0, z) && fill_from(&s, out, nx, nz, last_x, z);
    free(s.items);
    return ok;
}

/* ---- the transform ---- */

/* Column pass, written row-major so each step is a contiguous, vectorisable row: afterwards
 * out holds, per sample, the number of rows to the nearest wet sample in its column (exact
 * small integers in float), or INFINITY. Columns [x0, x1) only. */
static void column_pass(float *out, size_t nx, uint32_t nz, size_t x0, size_t x1)
{
    for (size_t x = x0; x < x1; x++)
        out[x] = out[x] == WD_WET ? 0.0f : INFINITY;
    for (uint32_t z = 1; z < nz; z++) {
        float *row = out + (size_t)z * nx;
        const float *prev = row - nx;
        for (size_t x = x0; x < x1; x++)
            row[x] = row[x] == WD_WET ? 0.0f : prev[x] + 1.0f;
    }
    for (uint32_t z = nz - 1; z-- > 0;) {
        float *row = out + (size_t)z * nx;
        const float *next = row + nx;
        for (size_t x = x0; x < x1; x++) {
            const float below = next[x] + 1.0f;
            if (below < row[x]) row[x] = below;
        }
    }
}

/* Per-thread temporaries of the row pass. */
typedef struct row_scratch {
    double *f;   /* squared column distance per sample */
    uint32_t *v; /* parabola vertices of the lower envelope */
    double *zb;  /* boundaries between envelope parabolas (index units) */
} row_scratch;

/* Row pass: the lower envelope of parabolas f(q) + ((x - q) * cell_x)^2 over the row's finite
 * samples q, giving the squared 2D distance; out receives its square root in world units. */
static void row_pass(float *row, size_t nx, double cell_x, double cell_z, row_scratch *s)
{
    const double cx2 = cell_x * cell_x;
    uint32_t k = 0; /* index of the rightmost parabola in the envelope */
    bool any = false;
    for (size_t q = 0; q < nx; q++) {
        if (!isfinite(row[q])) continue;
        const double dz = (double)row[q] * cell_z;
        const double fq = dz * dz;
        s->f[q] = fq;
        if (!any) {
            any = true;
            k = 0;
            s->v[0] = (uint32_t)q;
            s->zb[0] = -INFINITY;
            s->zb[1] = INFINITY;
            continue;
        }
        const double qd = (double)q;
        double sect;
        for (;;) {
            const double pd = (double)s->v[k];
            /* Where parabola q starts to be below the envelope's last one, in index units. */
            sect =
                ((fq + cx2 * qd * qd) - (s->f[s->v[k]] + cx2 * pd * pd)) / (2.0 * cx2 * (qd - pd));
            /* zb[0] is -INFINITY and sect is finite, so this stops at k = 0 at the latest. */
            if (sect > s->zb[k]) break;
            k--;
        }
        k++;
        s->v[k] = (uint32_t)q;
        s->zb[k] = sect;
        s->zb[k + 1] = INFINITY;
    }
    if (!any) {
        for (size_t x = 0; x < nx; x++)
            row[x] = INFINITY;
        return;
    }
    uint32_t e = 0;
    for (size_t x = 0; x < nx; x++) {
        const double xd = (double)x;
        while (s->zb[e + 1] < xd)
            e++;
        const uint32_t p = s->v[e];
        const double dx = (xd - (double)p) * cell_x;
        row[x] = (float)sqrt(dx * dx + s->f[p]);
    }
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "water distance: out of memory");
}

/* The row pass over the threads: each row one task with its thread's scratch. */
typedef struct distance_rows {
    float *out;
    size_t nx;
    double cell_x, cell_z;
    row_scratch *scratch;
} distance_rows;

static void distance_row_task(void *ctx, size_t z, int t)
{
    const distance_rows *c = ctx;
    row_pass(c->out + z * c->nx, c->nx, c->cell_x, c->cell_z, &c->scratch[t]);
}

/* wet NULL: the sea inferred from sea_level; else the samples wet marks. */
static trn_status distance_fill(const trn_field *field, double sea_level, const uint8_t *wet,
                                float *out, trn_progress_fn progress, void *user, trn_error *err)
{
    if (!field || !field->heights || !out || field->cells_x < 1 || field->cells_z < 1 ||
        field->cells_x == UINT32_MAX || field->cells_z == UINT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water distance: the field needs heights and at least one cell "
                             "each way, and an output");
    const double cell_x = field->size_x / field->cells_x, cell_z = field->size_z / field->cells_z;
    if (!(cell_x > 0.0) || !(cell_z > 0.0) || !isfinite(cell_x) || !isfinite(cell_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water distance: cell size %g x %g is not a positive number", cell_x,
                             cell_z);
    if (!wet && isnan(sea_level))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water distance: the sea level is not a number");
    const size_t nx = (size_t)field->cells_x + 1u;
    const uint32_t nz = field->cells_z + 1u;
    size_t n;
    if (!trn_mul_size(nx, nz, &n))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1, "water distance: grid too large");
    const char *stage = "water distance";
    trn_progress pr = trn_progress_make(progress, user);
    if (trn_progress_report(&pr, 0.0, stage)) goto cancelled;

    /* Candidates: strictly below sea level (NaN heights never are). */
    const float *h = field->heights;
    const long long rows = (long long)nz;
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= 65536)
#endif
    for (long long z = 0; z < rows; z++) {
        const float *hr = h + (size_t)z * nx;
        float *orow = out + (size_t)z * nx;
        if (wet) {
            const uint8_t *wr = wet + (size_t)z * nx;
            for (size_t x = 0; x < nx; x++)
                orow[x] = wr[x] ? 0.0f : INFINITY;
        } else {
            for (size_t x = 0; x < nx; x++)
                orow[x] = (double)hr[x] < sea_level ? WD_CANDIDATE : INFINITY;
        }
    }
    if (!wet && !flood_from_border(out, nx, nz)) return oom(err);
    if (trn_progress_report(&pr, 0.2, stage)) goto cancelled;

    /* Columns in blocks of 256 so each thread streams whole cache lines. */
    const size_t block = 256;
    const long long blocks = (long long)((nx + block - 1) / block);
#ifdef _OPENMP
#pragma omp parallel for schedule(static) if (n >= 65536) /* waking a team costs more below */
#endif
    for (long long b = 0; b < blocks; b++) {
        const size_t x0 = (size_t)b * block, x1 = x0 + block < nx ? x0 + block : nx;
        column_pass(out, nx, nz, x0, x1);
    }
    if (trn_progress_report(&pr, 0.4, stage)) goto cancelled;

    /* Rows, each row one task, so the thread count cannot change anything. */
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    row_scratch *scratch = calloc((size_t)threads, sizeof *scratch);
    if (!scratch) return oom(err);
    bool ok = true;
    for (int t = 0; t < threads && ok; t++) {
        scratch[t].f = malloc(nx * sizeof(double));
        scratch[t].v = malloc(nx * sizeof(uint32_t));
        scratch[t].zb = malloc((nx + 1) * sizeof(double));
        ok = scratch[t].f && scratch[t].v && scratch[t].zb;
    }
    trn_status st = ok ? TRN_OK : oom(err);
    if (st == TRN_OK) {
        const trn_progress rows_pr = trn_progress_sub(&pr, 0.4, 1.0);
        distance_rows dr = {out, nx, cell_x, cell_z, scratch};
        if (trn_rows_run(nz, threads, 64, distance_row_task, &dr, &rows_pr, stage))
            st = trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "%s: cancelled", stage);
    }
    for (int t = 0; t < threads; t++) {
        free(scratch[t].f);
        free(scratch[t].v);
        free(scratch[t].zb);
    }
    free(scratch);
    return st;
cancelled:
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "%s: cancelled", stage);
}

trn_status trn_water_distance_fill(const trn_field *field, double sea_level, float *out,
                                   trn_progress_fn progress, void *user, trn_error *err)
{
    return distance_fill(field, sea_level, NULL, out, progress, user, err);
}

trn_status trn_water_distance_fill_wet(const trn_field *field, const uint8_t *wet, float *out,
                                       trn_progress_fn progress, void *user, trn_error *err)
{
    if (!wet)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water distance: no wet samples given");
    return distance_fill(field, NAN, wet, out, progress, user, err);
}
