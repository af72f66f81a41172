/* Each thread's CPU time over one library call: erosion, or cooking a generated recipe. */
/*
 * The busiest thread's share of the CPU the call used bounds what more cores can give
 * (total / busiest), whatever else the machine runs: on a shared machine the wall clock
 * measures the queue for a core, the per-thread CPU times measure the program. Each thread's
 * time is read from /proc/self/task/TID/schedstat (nanoseconds on the CPU; the calling thread's
 * from its own CPU clock) before and after the call; OpenMP's threads stay alive between parallel regions, so a warm-up call first
 * makes them, and the call measured runs on them.
 *
 * usage: bench_thread_share erosion CELLS DROPLETS THREADS RUNS
 *        bench_thread_share evolve CELLS STEPS THREADS RUNS
 *        bench_thread_share cook RECIPE.json THREADS RUNS
 * prints per run: "seconds S cpu C busiest B share P bound X threads T digest D"
 */
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <omp.h>

#include "bench_util.h"
#include "terrane/cook.h"
#include "terrane/erosion.h"
#include "terrane/generate.h"
#include "terrane/landscape.h"
#include "terrane/presets.h"

#define MAX_TASKS 256

typedef struct task_times {
    long tid[MAX_TASKS];
    double cpu[MAX_TASKS];
    int count;
} task_times;

static void read_tasks(task_times *t)
{
    t->count = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) && t->count < MAX_TASKS) {
        if (e->d_name[0] == '.') continue;
        char path[300];
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned long long ns = 0;
        if (fscanf(f, "%llu", &ns) == 1) {
            t->tid[t->count] = strtol(e->d_name, NULL, 10);
            t->cpu[t->count] = (double)ns * 1e-9;
            /* A running thread's schedstat lags by up to a scheduler tick: the calling thread's
             * own time from its clock, which counts to the moment. */
            if (t->tid[t->count] == (long)getpid()) {
                struct timespec ts;
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
                t->cpu[t->count] = (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
            }
            t->count++;
        }
        fclose(f);
    }
    closedir(d);
}

/* The CPU each thread used between a and b: prints the run's line. */
static void report(const task_times *a, const task_times *b, double seconds, uint64_t digest)
{
    double total = 0.0, busiest = 0.0;
    int used = 0;
    for (int k = 0; k < b->count; k++) {
        double before = 0.0;
        for (int j = 0; j < a->count; j++)
            if (a->tid[j] == b->tid[k]) before = a->cpu[j];
        const double d = b->cpu[k] - before;
        total += d;
        if (d > busiest) busiest = d;
        if (d > 1e-3) used++;
    }
    printf("seconds %.4f cpu %.4f busiest %.4f share %.1f%% bound %.2f threads %d digest %016" PRIx64
           "\n",
           seconds, total, busiest, busiest > 0 ? 100.0 * busiest / total : 0.0,
           busiest > 0 ? total / busiest : 0.0, used, digest);
    fflush(stdout);
}

static uint64_t fnv(const void *v, size_t bytes)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = v;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

static int fail(const char *what, const trn_error *e)
{
    fprintf(stderr, "bench_thread_share: %s: %s\n", what, e->message);
    return 1;
}

/* bench_busy's erosion terrain: ridged mountains, 1 m cells. */
static int erosion(uint32_t size, uint32_t droplets, int runs)
{
    trn_error e;
    trn_field f;
    if (trn_field_init(&f, size, size, (double)size, (double)size, &e)) return fail("field", &e);
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
    if (trn_landform_fill(&lf, 42, &f, NULL, NULL, NULL)) return 1;
    trn_erosion_params p;
    trn_erosion_params_default(&p, TRN_EROSION_FINAL);
    p.droplets = droplets;
    p.threads = 0;
    for (int r = 0; r <= runs; r++) {
        task_times a, b;
        trn_erosion_result out;
        read_tasks(&a);
        const double t0 = now_s();
        if (trn_erosion_run(&f, &p, 42, &out, NULL, NULL, &e)) return fail("erosion", &e);
        const double t = now_s() - t0;
        read_tasks(&b);
        if (r) report(&a, &b, t, fnv(out.field.heights, trn_field_sample_count(&f) * 4u));
        trn_erosion_result_dispose(&out);
    }
    trn_field_dispose(&f);
    return 0;
}

/* bench_busy's evolve case: stream power on bench_stream_power's ridge (1500 m across the
 * middle, 30 m cells), the library's default thread use, each run from the same input. */
static int evolve(uint32_t size, uint32_t steps, int runs)
{
    trn_error e;
    trn_field in, f;
    if (trn_field_init(&in, size, size, 30.0 * size, 30.0 * size, &e)) return fail("field", &e);
    if (trn_field_init(&f, size, size, 30.0 * size, 30.0 * size, &e)) return fail("field", &e);
    const size_t nx = (size_t)size + 1u;
    for (uint32_t j = 0; j <= size; j++)
        for (uint32_t i = 0; i <= size; i++)
            in.heights[(size_t)j * nx + i] = ridge_height(i, j, size);
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.erodibility = 5e-5;
    p.diffusion = 0.05;
    p.dt = 20000.0;
    p.steps = steps;
    const size_t bytes = trn_field_sample_count(&in) * sizeof(float);
    for (int r = 0; r <= runs; r++) {
        task_times a, b;
        memcpy(f.heights, in.heights, bytes);
        read_tasks(&a);
        const double t0 = now_s();
        if (trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e)) return fail("stream power", &e);
        const double t = now_s() - t0;
        read_tasks(&b);
        if (r) report(&a, &b, t, fnv(f.heights, bytes));
    }
    trn_field_dispose(&in);
    trn_field_dispose(&f);
    return 0;
}

/* The recipe generated once (not measured), then encoded as `terrane cook` does. */
static int cook(const char *path, int runs)
{
    trn_error e;
    trn_recipe recipe;
    trn_document_kind kind;
    if (trn_recipe_read_source(path, &recipe, &kind, &e)) return fail("recipe", &e);
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.quality = TRN_EROSION_FINAL;
    go.roles = true;
    trn_generated gen;
    if (trn_recipe_generate(&recipe, &go, &gen, NULL, NULL, &e)) return fail("generate", &e);
    trn_cook_input ci = {&gen, &recipe, "asset://terrain/bench", NULL, NULL, gen.roles,
                         NULL,  NULL,    0};
    for (int r = 0; r <= runs; r++) {
        task_times a, b;
        uint8_t *data = NULL;
        size_t size = 0;
        read_tasks(&a);
        const double t0 = now_s();
        if (trn_cook_encode(&ci, &data, &size, &e)) return fail("cook", &e);
        const double t = now_s() - t0;
        read_tasks(&b);
        if (r) report(&a, &b, t, fnv(data, size));
        free(data);
    }
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 6 && strcmp(argv[1], "erosion") == 0) {
        omp_set_num_threads(atoi(argv[4]));
        return erosion((uint32_t)strtoul(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10),
                       atoi(argv[5]));
    }
    if (argc == 6 && strcmp(argv[1], "evolve") == 0) {
        omp_set_num_threads(atoi(argv[4]));
        return evolve((uint32_t)strtoul(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10),
                      atoi(argv[5]));
    }
    if (argc == 5 && strcmp(argv[1], "cook") == 0) {
        omp_set_num_threads(atoi(argv[3]));
        return cook(argv[2], atoi(argv[4]));
    }
    fprintf(stderr, "usage: bench_thread_share erosion CELLS DROPLETS THREADS RUNS\n"
                    "       bench_thread_share evolve CELLS STEPS THREADS RUNS\n"
                    "       bench_thread_share cook RECIPE.json THREADS RUNS\n");
    return 2;
}
