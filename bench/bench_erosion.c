/* Benchmark: droplet erosion throughput (droplets per second) and the transport mode's steps, on
 * 1 and 2 threads, median and best of several runs, with the machine's load. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/erosion.h"
#include "terrane/generate.h"

static uint64_t fnv(const float *v, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < n * sizeof(float); i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#define MAX_REPS 9

/* Best wall time of reps runs of the whole call (copy, droplets or steps, masks), the median in
 * *median; 0 on failure. */
static double time_runs(const trn_field *f, trn_erosion_params *p, int threads, int reps,
                        double *median, uint64_t *digest, uint64_t *steps)
{
    double t[MAX_REPS];
    p->threads = threads;
    for (int rep = 0; rep < reps; rep++) {
        trn_erosion_result r;
        double t0 = now_s();
        if (trn_erosion_run(f, p, 42, &r, NULL, NULL, NULL) != TRN_OK) return 0.0;
        t[rep] = now_s() - t0;
        *digest = fnv(r.field.heights, trn_field_sample_count(f));
        *steps = r.ledger.steps;
        trn_erosion_result_dispose(&r);
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp_double);
    *median = t[reps / 2];
    return t[0];
}

static double time_run(const trn_field *f, trn_erosion_params *p, int threads, uint64_t *digest,
                       uint64_t *steps)
{
    double median;
    return time_runs(f, p, threads, 3, &median, digest, steps);
}

static void print_load(void)
{
    FILE *fp = fopen("/proc/loadavg", "r");
    char line[128] = "unknown";
    if (fp) {
        if (!fgets(line, sizeof line, fp)) line[0] = 0;
        fclose(fp);
    }
    line[strcspn(line, "\n")] = 0;
    printf("  load average (/proc/loadavg): %s\n", line);
}

int main(int argc, char **argv)
{
    const uint32_t samples = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1024u;
    const uint32_t droplets = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 500000u;
    if (samples < 2 || !droplets) {
        fprintf(stderr, "usage: bench_erosion [SAMPLES_PER_SIDE] [DROPLETS] [TRANSPORT_RUNS]\n");
        return 2;
    }
    trn_field f;
    if (trn_field_init(&f, samples - 1, samples - 1, (double)(samples - 1), (double)(samples - 1),
                       NULL) != TRN_OK)
        return 1;
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "mountains";
    lf.profile = TRN_PROFILE_RIDGED;
    lf.height_variation = 300.0;
    lf.feature_size = 400.0;
    lf.roughness = 0.45;
    lf.octaves = 6;
    lf.warp_feature_size = 128.0;
    lf.stretch = 1.0;
    if (trn_landform_fill(&lf, 42, &f, NULL, NULL, NULL) != TRN_OK) return 1;

    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = droplets;
    p.lifetime = 30;
    p.inertia = 0.05;
    p.radius = 3;
    p.thermal_iterations = 0;
    uint64_t d1 = 0, d2 = 0, steps = 0;
    double t1 = time_run(&f, &p, 1, &d1, &steps);
    double t2 = time_run(&f, &p, 2, &d2, &steps);
    if (t1 <= 0.0 || t2 <= 0.0) {
        fprintf(stderr, "erosion failed\n");
        return 1;
    }
    printf("erosion %ux%u, %u droplets, lifetime 30, inertia 0.05, radius 3\n", samples, samples,
           droplets);
    printf("  %.1f steps per droplet on average (30 at most)\n", (double)steps / droplets);
    printf("  1 thread  %6.3f s  %9.0f droplets/s\n", t1, (double)droplets / t1);
    printf("  2 threads %6.3f s  %9.0f droplets/s  speed-up %.2f  %s\n", t2, (double)droplets / t2,
           t1 / t2, d1 == d2 ? "bit-identical" : "DIFFERENT RESULT");

    /* Thermal pass alone, 10 iterations, for its share of a Final run. */
    p.droplets = 1;
    p.thermal_iterations = 10;
    uint64_t d3 = 0;
    double t3 = time_run(&f, &p, 1, &d3, &steps);
    printf("  thermal relaxation, 10 passes, 1 thread: %.3f s\n", t3);

    /* Transport mode, its defaults (40 steps, capacity 4, diffusion 0.02), no thermal pass. */
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.mode = TRN_EROSION_TRANSPORT;
    p.thermal_iterations = 0;
    const int reps = argc > 3 ? (int)strtol(argv[3], NULL, 10) : 5;
    if (reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "runs must be 1..%d\n", MAX_REPS);
        return 2;
    }
    print_load();
    double m1 = 0.0, m2 = 0.0;
    uint64_t e1 = 0, e2 = 0;
    double b1 = time_runs(&f, &p, 1, reps, &m1, &e1, &steps);
    double b2 = time_runs(&f, &p, 2, reps, &m2, &e2, &steps);
    if (b1 <= 0.0 || b2 <= 0.0) {
        fprintf(stderr, "transport failed\n");
        return 1;
    }
    const double sample_steps = (double)samples * (double)samples * (double)p.transport_steps;
    printf("transport mode %ux%u, %u steps, %d runs each\n", samples, samples, p.transport_steps,
           reps);
    printf("  1 thread  median %6.3f s  best %6.3f s  %5.1f ns per sample-step\n", m1, b1,
           1e9 * m1 / sample_steps);
    printf("  2 threads median %6.3f s  best %6.3f s  %s\n", m2, b2,
           e1 == e2 ? "bit-identical" : "DIFFERENT RESULT");
    print_load();
    trn_field_dispose(&f);
    return d1 == d2 && e1 == e2 ? 0 : 1;
}
