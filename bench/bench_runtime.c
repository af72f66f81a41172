/* Benchmark: a 4097^2 cooked payload (heights, biomes, 16 lakes and an ocean): open time, and
 * height and water queries per second on one core (random and coherent points). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/cook.h"
#include "terrane/runtime.h"
#include "terrane/water.h"

#define RUNS 5
#define QUERIES 10000000

static void loadavg(char *buf, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");
    buf[0] = '\0';
    if (f) {
        if (!fgets(buf, (int)size, f)) buf[0] = '\0';
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
}

/* Rolling hills of value noise, 0..~300 m, sloping up from the sea along z. */
static void fill_terrain(trn_field *f)
{
    const size_t nx = (size_t)f->cells_x + 1u;
    for (size_t j = 0; j <= f->cells_z; j++)
        for (size_t i = 0; i < nx; i++) {
            const double x = (double)i, z = (double)j;
            double h = 0.0, amp = 160.0, freq = 1.0 / 700.0;
            for (int o = 0; o < 5; o++) {
                h += amp * value_noise(x * freq, z * freq, 17u + (uint32_t)o);
                amp *= 0.5;
                freq *= 2.0;
            }
            f->heights[j * nx + i] = (float)(h + z * 0.02);
        }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* CPU seconds of this process: on a loaded machine the wall clock also counts others' turns. */
static double cpu_t[RUNS]; /* CPU seconds of the runs report() is given */

static void report(const char *what, double *t, double per_run)
{
    qsort(t, RUNS, sizeof *t, cmp_double);
    qsort(cpu_t, RUNS, sizeof *cpu_t, cmp_double);
    printf("%s: median %.2f M/s, best %.2f M/s (per CPU second: median %.2f M/s, best %.2f M/s)\n",
           what, per_run / t[RUNS / 2] * 1e-6, per_run / t[0] * 1e-6,
           per_run / cpu_t[RUNS / 2] * 1e-6, per_run / cpu_t[0] * 1e-6);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "/tmp";
    const uint32_t cells = 4096;
    char load0[128], load1[128], path[1024];
    loadavg(load0, sizeof load0);
    snprintf(path, sizeof path, "%s/bench_runtime.terrain.bin", dir);
    trn_error e;

    /* The terrain, its water and biomes, cooked once. */
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    if (trn_field_init(&gen.field, cells, cells, cells, cells, &e)) return 1;
    fill_terrain(&gen.field);
    trn_water_body bodies[17];
    for (int k = 0; k < 16; k++) {
        char id[32];
        snprintf(id, sizeof id, "lake%d", k);
        trn_water_body_init(&bodies[k], TRN_WATER_LAKE, id);
        bodies[k].center_x = cells * (0.1 + 0.8 * (double)(k % 4) / 3.0);
        bodies[k].center_z = cells * (0.15 + 0.75 * (double)(k / 4) / 3.0);
        bodies[k].radius = 300.0;
        bodies[k].level =
            trn_field_height_at(&gen.field, bodies[k].center_x, bodies[k].center_z) + 5.0;
        bodies[k].carve = false;
    }
    trn_water_body_init(&bodies[16], TRN_WATER_OCEAN, "sea");
    bodies[16].level = 60.0;
    bodies[16].carve = false;
    bodies[16].look.flow_speed = 0.5;
    if (trn_water_resolve(&gen.field, bodies, 17, NULL, &gen.water, &e)) {
        fprintf(stderr, "water: %s\n", e.message);
        return 1;
    }
    gen.has_water = true;
    gen.sea_level = 60.0;
    gen.cache_key = 1;
    const size_t n = trn_field_sample_count(&gen.field);
    if (trn_labels_init(&gen.biomes, cells, cells, &e) ||
        trn_labels_add_name(&gen.biomes, "low", 3, &e) ||
        trn_labels_add_name(&gen.biomes, "high", 4, &e))
        return 1;
    for (size_t k = 0; k < n; k++)
        gen.biomes.values[k] = gen.field.heights[k] > 150.0f;
    const char *recipe_text =
        "{\"size\": [4096, 4096], \"resolution\": [4096, 4096], \"seed\": 1, \"default_landform\": "
        "\"hills\", \"landforms\": {\"hills\": {}}, \"default_biome\": \"low\", \"biomes\": "
        "{\"low\": "
        "{\"color\": [0.3, 0.5, 0.2, 1]}, \"high\": {\"color\": [0.5, 0.5, 0.5, 1]}}}";
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    if (trn_recipe_parse(recipe_text, strlen(recipe_text), "bench.json", &recipe, NULL, &e)) {
        fprintf(stderr, "recipe: %s\n", e.message);
        return 1;
    }
    trn_cook_input ci = {&gen, &recipe, "asset://terrain/bench", NULL, NULL, NULL, NULL, NULL, 0};
    double t0 = now_s();
    if (trn_cook_write(&ci, path, &e)) {
        fprintf(stderr, "cook: %s\n", e.message);
        return 1;
    }
    const double cook_s = now_s() - t0;
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    const long file_size = ftell(f);
    fclose(f);
    printf("4097^2 payload: %.1f MB written in %.2f s (zstd level %d)\n", (double)file_size / 1e6,
           cook_s, TRN_COOK_ZSTD_LEVEL);

    /* Open: every section checked and decoded (the file in the page cache). */
    double t[RUNS], cpu[RUNS];
    trn_payload *p = NULL;
    for (int r = 0; r < RUNS; r++) {
        t0 = now_s();
        const double c0 = cpu_s();
        if (trn_payload_open(path, NULL, &p, &e)) {
            fprintf(stderr, "open: %s\n", e.message);
            return 1;
        }
        t[r] = now_s() - t0;
        cpu[r] = cpu_s() - c0;
        if (r + 1 < RUNS) trn_payload_free(p);
    }
    qsort(t, RUNS, sizeof *t, cmp_double);
    qsort(cpu, RUNS, sizeof *cpu, cmp_double);
    printf("open: median %.3f s, best %.3f s (CPU: median %.3f s, best %.3f s)\n", t[RUNS / 2],
           t[0], cpu[RUNS / 2], cpu[0]);

    /* Points: uniform random, and coherent (rows walked in 0.37-unit steps). */
    double *xs = malloc(QUERIES * sizeof *xs), *zs = malloc(QUERIES * sizeof *zs);
    double *ys = malloc(QUERIES * sizeof *ys);
    for (size_t k = 0; k < QUERIES; k++) {
        xs[k] = uniform() * cells;
        zs[k] = uniform() * cells;
        ys[k] = uniform() * 200.0;
    }
    volatile double sink = 0.0;
    for (int r = 0; r < RUNS; r++) {
        double s = 0.0;
        t0 = now_s();
        const double c0 = cpu_s();
        for (size_t k = 0; k < QUERIES; k++)
            s += trn_payload_height_at(p, xs[k], zs[k]);
        t[r] = now_s() - t0;
        cpu_t[r] = cpu_s() - c0;
        sink += s;
    }
    report("height, random points", t, QUERIES);
    for (int r = 0; r < RUNS; r++) {
        double s = 0.0, x = 0.0, z = 0.5;
        t0 = now_s();
        const double c0 = cpu_s();
        for (size_t k = 0; k < QUERIES; k++) {
            s += trn_payload_height_at(p, x, z);
            x += 0.37;
            if (x > cells) x -= cells, z += 1.0;
        }
        t[r] = now_s() - t0;
        cpu_t[r] = cpu_s() - c0;
        sink += s;
    }
    report("height, coherent points", t, QUERIES);
    size_t wet = 0;
    for (int r = 0; r < RUNS; r++) {
        trn_water_sample s;
        wet = 0;
        t0 = now_s();
        const double c0 = cpu_s();
        for (size_t k = 0; k < QUERIES; k++)
            wet += trn_payload_water_at(p, xs[k], ys[k], zs[k], &s);
        t[r] = now_s() - t0;
        cpu_t[r] = cpu_s() - c0;
    }
    printf("(water: %.1f%% of random columns wet)\n", 100.0 * (double)wet / QUERIES);
    report("water sample, random points", t, QUERIES);
    /* The same through a placed, rotated and scaled terrain. */
    trn_world *world = NULL;
    trn_transform tr;
    trn_transform_identity(&tr);
    tr.translation[0] = 1000.0;
    tr.rotation[1] = sin(0.3);
    tr.rotation[3] = cos(0.3);
    tr.scale[0] = tr.scale[2] = 2.0;
    if (trn_world_new(&world, &e) || trn_world_place(world, "bench", p, &tr, &e)) return 1;
    for (int r = 0; r < RUNS; r++) {
        trn_world_water_sample s;
        t0 = now_s();
        const double c0 = cpu_s();
        for (size_t k = 0; k < QUERIES; k++) {
            const double pos[3] = {xs[k] * 2.0, ys[k], zs[k] * 2.0};
            wet += trn_world_water_sample_at(world, pos, NULL, &s);
        }
        t[r] = now_s() - t0;
        cpu_t[r] = cpu_s() - c0;
    }
    report("world water sample (placed), random points", t, QUERIES);
    loadavg(load1, sizeof load1);
    printf("load average before: %s; after: %s\n", load0, load1);
    (void)sink;
    trn_world_free(world);
    trn_payload_free(p);
    free(xs);
    free(ys);
    free(zs);
    trn_recipe_dispose(&recipe);
    trn_generated_dispose(&gen);
    remove(path);
    return 0;
}
