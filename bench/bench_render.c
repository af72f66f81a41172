/* Benchmark: hillshade (default, multidirectional), slope and layer pictures of a 4097x4097
 * terrain on one thread and on all threads (best of 3), and proof the pictures are identical. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>

#include "bench_util.h"
#endif

#include "terrane/render.h"

#define SAMPLES 4097u /* 4096 cells each way, the size of a large BeamNG terrain plus its edge */
#define RUNS 3

/* Terrain-like heights (fBm hills, a ridged band, fine detail) and a label map from them
 * (material by height and steepness, a few holes). Each sample depends only on its coordinates,
 * so the inputs are the same on any machine and thread count. */
static void make_inputs(trn_field *field, trn_labels *labels)
{
    const uint32_t n = SAMPLES;
    const double scale = 8.0 / n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t j = 0; j < (int64_t)n; j++) {
        for (uint32_t i = 0; i < n; i++) {
            double x = i * scale, z = (double)j * scale, h = 0.0, amp = 1.0, f = 1.0;
            for (int o = 0; o < 5; o++) {
                h += amp * value_noise(x * f, z * f, (uint32_t)o);
                amp *= 0.5;
                f *= 2.03;
            }
            double r = 1.0 - fabs(2.0 * value_noise(x * 4.0, z * 4.0, 77) - 1.0);
            h = h * 600.0 + r * r * 150.0 + value_noise(x * 256.0, z * 256.0, 99) * 0.8;
            field->heights[(size_t)j * n + i] = (float)h;
            double band = h / 1200.0 * 6.0 + (r > 0.9 ? 2.0 : 0.0);
            uint8_t label = (uint8_t)(band < 0 ? 0 : band > 7 ? 7 : band);
            if (value_noise(x * 64.0, z * 64.0, 5) > 0.97) label = (uint8_t)TRN_LABEL_NONE;
            labels->values[(size_t)j * n + i] = label;
        }
    }
}

typedef enum job { JOB_HILLSHADE, JOB_MULTIDIRECTIONAL, JOB_SLOPE, JOB_LAYERS, JOB_COUNT } job;

static const char *const job_names[JOB_COUNT] = {"hillshade", "hillshade -multidirectional",
                                                 "slope", "layers (RGBA)"};

static trn_status run_job(job j, const trn_field *field, const trn_labels *labels, trn_raster8 *out,
                          trn_error *err)
{
    trn_render_options opt;
    trn_render_options_default(&opt);
    switch (j) {
    case JOB_HILLSHADE:
        return trn_render_hillshade(field, &opt, out, NULL, NULL, err);
    case JOB_MULTIDIRECTIONAL:
        opt.multidirectional = true;
        return trn_render_hillshade(field, &opt, out, NULL, NULL, err);
    case JOB_SLOPE:
        return trn_render_slope(field, &opt, out, NULL, NULL, err);
    case JOB_LAYERS:
    case JOB_COUNT:
        break;
    }
    return trn_render_layers(labels, out, NULL, NULL, err);
}

/* Best of RUNS wall times; the last picture stays in *keep. */
static int time_job(job j, const trn_field *field, const trn_labels *labels, double *best,
                    trn_raster8 *keep)
{
    *best = INFINITY;
    for (int run = 0; run < RUNS; run++) {
        trn_raster8 out = {0};
        trn_error err;
        double t0 = now_s();
        trn_status st = run_job(j, field, labels, &out, &err);
        double t = now_s() - t0;
        if (st) {
            char buf[1200];
            fprintf(stderr, "bench_render: %s: %s\n", job_names[j],
                    trn_error_format(&err, buf, sizeof buf));
            return 1;
        }
        if (t < *best) *best = t;
        trn_raster8_dispose(keep);
        *keep = out;
    }
    return 0;
}

static void set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

int main(void)
{
    const size_t samples = (size_t)SAMPLES * SAMPLES;
    trn_field field = {0};
    trn_labels labels = {0};
    field.cells_x = field.cells_z = SAMPLES - 1;
    field.size_x = field.size_z = (double)(SAMPLES - 1); /* 1 m squares */
    field.heights = malloc(samples * sizeof *field.heights);
    labels.cells_x = labels.cells_z = SAMPLES - 1;
    labels.values = malloc(samples);
    if (!field.heights || !labels.values) {
        fprintf(stderr, "bench_render: out of memory\n");
        return 1;
    }
    make_inputs(&field, &labels);

    int all = 1;
#ifdef _OPENMP
    all = omp_get_max_threads();
    printf("render %ux%u (%.1f megapixels), best of %d, OpenMP on: 1 and %d threads\n", SAMPLES,
           SAMPLES, (double)samples / 1e6, RUNS, all);
#else
    printf("render %ux%u (%.1f megapixels), best of %d, built without OpenMP: 1 thread only\n",
           SAMPLES, SAMPLES, (double)samples / 1e6, RUNS);
#endif
    printf("%-28s %12s %12s %9s  %s\n", "mode", "1 thread", "all threads", "speed-up", "pictures");
    int rc = 0;
    for (int j = 0; j < JOB_COUNT && rc == 0; j++) {
        trn_raster8 one = {0}, many = {0};
        double t1, tn;
        set_threads(1);
        rc = time_job((job)j, &field, &labels, &t1, &one);
        set_threads(all);
        if (rc == 0) rc = time_job((job)j, &field, &labels, &tn, &many);
        if (rc == 0) {
            size_t bytes = (size_t)one.width * one.height * one.channels;
            bool same = one.width == many.width && one.height == many.height &&
                        one.channels == many.channels &&
                        memcmp(one.pixels, many.pixels, bytes) == 0;
            double mp = (double)one.width * one.height / 1e6;
            printf("%-28s %7.1f MP/s %7.1f MP/s %8.2fx  %s\n", job_names[j], mp / t1, mp / tn,
                   t1 / tn, same ? "identical" : "DIFFERENT");
            if (!same) rc = 1;
        }
        trn_raster8_dispose(&one);
        trn_raster8_dispose(&many);
    }
    set_threads(all);
    if (rc == 0) printf("pictures on 1 and %d threads are byte-identical for every mode\n", all);
    free(field.heights);
    free(labels.values);
    return rc;
}
