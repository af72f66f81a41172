/* Landscape evolution with amplification: stream power on a coarse grid, bicubic upsampling
 * and the input's finer detail returned along the evolved ridges and valleys. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/landscape.h"

static trn_status check_param(trn_error *err, const char *name, bool ok, const char *expect,
                              double found)
{
    if (ok) return TRN_OK;
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "stream power: %s: expected %s, found %.17g", name, expect, found);
}

void trn_evolve_options_default(trn_evolve_options *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    trn_stream_power_params_default(&o->sp);
    o->coarsen = 1;
    o->detail = 1.0;
    o->channel_area = 1e6;
}

/* Bilinear value of a coarse grid (cx x cz cells over the same extent) at fine sample (i, j). */
static double coarse_at(const float *g, uint32_t cx, uint32_t cz, double fx, double fz)
{
    if (fx < 0) fx = 0;
    if (fz < 0) fz = 0;
    if (fx > cx) fx = cx;
    if (fz > cz) fz = cz;
    uint32_t i = (uint32_t)fx, j = (uint32_t)fz;
    if (i >= cx) i = cx - 1u;
    if (j >= cz) j = cz - 1u;
    const double u = fx - i, v = fz - j;
    const size_t nx = (size_t)cx + 1u;
    const double a = g[(size_t)j * nx + i], b = g[(size_t)j * nx + i + 1];
    const double c = g[(size_t)(j + 1) * nx + i], d = g[(size_t)(j + 1) * nx + i + 1];
    return (a * (1 - u) + b * u) * (1 - v) + (c * (1 - u) + d * u) * v;
}

/* Catmull-Rom weights at t in [0, 1]. */
static void cr_weights(double t, double w[4])
{
    const double t2 = t * t, t3 = t2 * t;
    w[0] = 0.5 * (-t3 + 2 * t2 - t);
    w[1] = 0.5 * (3 * t3 - 5 * t2 + 2);
    w[2] = 0.5 * (-3 * t3 + 4 * t2 + t);
    w[3] = 0.5 * (t3 - t2);
}

/* Bicubic (Catmull-Rom, edges clamped) value of a coarse grid: smooth in slope across coarse
 * cells, so hillshades show no coarse grid. */
static double coarse_cubic(const float *g, uint32_t cx, uint32_t cz, double fx, double fz)
{
    if (fx < 0) fx = 0;
    if (fz < 0) fz = 0;
    if (fx > cx) fx = cx;
    if (fz > cz) fz = cz;
    int64_t i = (int64_t)fx, j = (int64_t)fz;
    if (i >= (int64_t)cx) i = (int64_t)cx - 1;
    if (j >= (int64_t)cz) j = (int64_t)cz - 1;
    double wx[4], wz[4];
    cr_weights(fx - (double)i, wx);
    cr_weights(fz - (double)j, wz);
    const size_t nx = (size_t)cx + 1u;
    double v = 0;
    for (int b = 0; b < 4; b++) {
        int64_t jj = j - 1 + b;
        if (jj < 0) jj = 0;
        if (jj > (int64_t)cz) jj = (int64_t)cz;
        double row = 0;
        for (int a = 0; a < 4; a++) {
            int64_t ii = i - 1 + a;
            if (ii < 0) ii = 0;
            if (ii > (int64_t)cx) ii = (int64_t)cx;
            row += wx[a] * g[(size_t)jj * nx + (size_t)ii];
        }
        v += wz[b] * row;
    }
    return v;
}

trn_status trn_landscape_evolve(trn_field *field, const trn_evolve_options *o,
                                trn_stream_power_report *report, trn_progress_fn progress,
                                void *user, trn_error *err)
{
    if (report) memset(report, 0, sizeof *report);
    if (!field || !field->heights || !o)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landscape evolution: a field with heights and options are needed");
    trn_status st;
    if ((st = check_param(err, "coarsen", o->coarsen >= 1 && o->coarsen <= 64, "1..64",
                          (double)o->coarsen)) ||
        (st = check_param(err, "detail", isfinite(o->detail) && o->detail >= 0 && o->detail <= 4,
                          "0..4", o->detail)) ||
        (st = check_param(err, "channel_area", isfinite(o->channel_area) && o->channel_area > 0,
                          "> 0", o->channel_area)) ||
        (st = check_param(err, "fine_steps", o->fine_steps <= 1000, "0..1000",
                          (double)o->fine_steps)))
        return st;
    trn_stream_power_params sp = o->sp;
    float *full_area = o->sp.drainage_area;
    if (o->coarsen == 1) return trn_stream_power_run(field, &sp, report, progress, user, err);
    const uint32_t c = o->coarsen;
    const uint32_t cx = (field->cells_x + c - 1u) / c, cz = (field->cells_z + c - 1u) / c;
    if (cx < 2 || cz < 2)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landscape evolution: coarsen %u leaves %u x %u samples of a %u x "
                             "%u grid; the coarse grid needs at least 3 x 3",
                             c, cx + 1u, cz + 1u, field->cells_x + 1u, field->cells_z + 1u);
    trn_field coarse;
    if ((st = trn_field_init(&coarse, cx, cz, field->size_x, field->size_z, err))) return st;
    const size_t nx = (size_t)field->cells_x + 1u, nz = (size_t)field->cells_z + 1u;
    const size_t cnx = (size_t)cx + 1u, cn = cnx * ((size_t)cz + 1u);
    float *before = malloc(cn * sizeof *before), *area = malloc(cn * sizeof *area);
    if (!before || !area) {
        free(before);
        free(area);
        trn_field_dispose(&coarse);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "landscape evolution: out of memory for the coarse grid");
    }
    /* Scale from fine sample index to coarse coordinates, per axis. */
    const double sx = (double)cx / field->cells_x, sz = (double)cz / field->cells_z;
    /* Each coarse sample: the mean of the fine samples whose nearest coarse sample it is. */
    double *sum = calloc(cn, sizeof *sum);
    uint32_t *cnt = calloc(cn, sizeof *cnt);
    if (!sum || !cnt) {
        free(sum);
        free(cnt);
        free(before);
        free(area);
        trn_field_dispose(&coarse);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "landscape evolution: out of memory for the coarse grid");
    }
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            const size_t ci = (size_t)floor((double)i * sx + 0.5);
            const size_t cj = (size_t)floor((double)j * sz + 0.5);
            sum[cj * cnx + ci] += field->heights[j * nx + i];
            cnt[cj * cnx + ci]++;
        }
    for (size_t k = 0; k < cn; k++)
        coarse.heights[k] = cnt[k] ? (float)(sum[k] / cnt[k]) : 0.0f;
    free(sum);
    free(cnt);
    memcpy(before, coarse.heights, cn * sizeof *before);
    sp.drainage_area = area;
    st = trn_stream_power_run(&coarse, &sp, report, progress, user, err);
    if (!st) {
        const double tan30 = tan(30.0 * 3.14159265358979323846 / 180.0);
        const double dx = field->size_x / field->cells_x, dz = field->size_z / field->cells_z;
        float *out = malloc(nx * nz * sizeof *out);
        if (!out) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "landscape evolution: out of memory for the result");
        } else {
#pragma omp parallel for schedule(static)
            for (size_t j = 0; j < nz; j++)
                for (size_t i = 0; i < nx; i++) {
                    const double fx = (double)i * sx, fz = (double)j * sz;
                    const double evolved = coarse_cubic(coarse.heights, cx, cz, fx, fz);
                    const double detail =
                        (double)field->heights[j * nx + i] - coarse_cubic(before, cx, cz, fx, fz);
                    /* The evolved surface's gradient, from the coarse grid's bilinear patch. */
                    const double gx = (coarse_at(coarse.heights, cx, cz, fx + 0.5 * sx, fz) -
                                       coarse_at(coarse.heights, cx, cz, fx - 0.5 * sx, fz)) /
                                      dx;
                    const double gz = (coarse_at(coarse.heights, cx, cz, fx, fz + 0.5 * sz) -
                                       coarse_at(coarse.heights, cx, cz, fx, fz - 0.5 * sz)) /
                                      dz;
                    double slope_w = sqrt(gx * gx + gz * gz) / tan30;
                    if (slope_w > 1) slope_w = 1;
                    double channel = coarse_at(area, cx, cz, fx, fz) / o->channel_area;
                    if (channel > 1) channel = 1;
                    out[j * nx + i] =
                        (float)(evolved + o->detail * detail * slope_w * (1.0 - channel));
                    if (full_area && !o->fine_steps)
                        full_area[j * nx + i] = (float)coarse_at(area, cx, cz, fx, fz);
                }
            /* Fine steps: the same law on the full grid carves the returned detail into
             * tributaries of the evolved valleys. dt / coarsen and Kd / coarsen keep the coarse
             * run's numbers per cell (d is coarsen times shorter): the implicit weight
             * K dt A^m / d of a channel of a given area and the diffusion number Kd dt / d^2
             * (trn_evolve_options). Uplift as configured, its mask interpolated like the area,
             * so the evolved network stays at its steady state. Run on a view of the result,
             * so a cancelled run leaves the field as it was. */
            float *fine_mask = NULL;
            if (o->fine_steps && o->sp.uplift_mask) {
                fine_mask = malloc(nx * nz * sizeof *fine_mask);
                if (!fine_mask)
                    st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                       "landscape evolution: out of memory for the uplift mask");
                else
#pragma omp parallel for schedule(static)
                    for (size_t j = 0; j < nz; j++)
                        for (size_t i = 0; i < nx; i++)
                            fine_mask[j * nx + i] = (float)coarse_at(
                                o->sp.uplift_mask, cx, cz, (double)i * sx, (double)j * sz);
            }
            if (o->fine_steps && !st) {
                trn_field fine = *field;
                fine.heights = out;
                trn_stream_power_params fsp = o->sp;
                fsp.uplift_mask = fine_mask;
                fsp.dt = o->sp.dt / (double)c;
                fsp.diffusion = o->sp.diffusion / (double)c;
                fsp.steps = o->fine_steps;
                fsp.drainage_area = full_area;
                st = trn_stream_power_run(&fine, &fsp, NULL, progress, user, err);
            }
            free(fine_mask);
            if (st) {
                free(out);
            } else {
                free(field->heights);
                field->heights = out;
                field->quantum = field->quantum_base = 0;
            }
        }
    }
    free(before);
    free(area);
    trn_field_dispose(&coarse);
    return st;
}
