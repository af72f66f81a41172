/* Benchmark: generate a 4097x4097-sample recipe with domain warp and biome rules; wall time on
 * 2 threads (and 1), peak resident memory (VmHWM) and bytes per sample. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>

#include "bench_util.h"
#endif

#include "terrane/generate.h"
#include "terrane/recipe.h"

/* Peak resident set size of this process in bytes (Linux /proc), 0 when unknown. */
static uint64_t peak_rss(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return 0;
    char line[256];
    uint64_t kib = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "VmHWM:", 6) == 0) {
            kib = strtoull(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib * 1024u;
}

/* Wall time at which each stage first reported, to split the total between stages. */
typedef struct stage_clock {
    char names[8][64]; /* copies: a stage string lives only during its callback */
    double start[8];
    int count;
} stage_clock;

static int stage_progress(double done, const char *stage, void *user)
{
    (void)done;
    stage_clock *c = user;
    if (c->count == 0 || strcmp(c->names[c->count - 1], stage) != 0) {
        if (c->count < 8) {
            snprintf(c->names[c->count], sizeof c->names[c->count], "%s", stage);
            c->start[c->count] = now_s();
            c->count++;
        }
    }
    return TRN_CONTINUE;
}

static trn_band band(double lo, double hi)
{
    trn_band b = {true, lo, hi};
    return b;
}

static trn_rule rule(const char *id, const char *biome, double priority, double blend)
{
    trn_rule r;
    memset(&r, 0, sizeof r);
    r.id = (char *)id;
    r.biome = (char *)biome;
    r.priority = priority;
    r.blend = blend;
    return r;
}

static trn_biome biome(const char *name, float r, float g, float b)
{
    trn_biome o;
    memset(&o, 0, sizeof o);
    o.name = (char *)name;
    o.color[0] = r;
    o.color[1] = g;
    o.color[2] = b;
    o.color[3] = 1.0f;
    o.texture_scale = 1.0;
    o.allow_snow = true;
    return o;
}

int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) - 1u : 4096u;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    /* Seed 003's ridged, warped, stretched mountains; the recipe built in code. */
    trn_landform land;
    memset(&land, 0, sizeof land);
    land.name = (char *)"mountains";
    land.profile = TRN_PROFILE_RIDGED;
    land.base_height = -60.0;
    land.height_variation = 450.0;
    land.feature_size = 650.0;
    land.roughness = 0.35;
    land.octaves = 6;
    land.warp_amplitude = 100.0;
    land.warp_feature_size = 500.0;
    land.stretch = 2.0;
    land.heading = 30.0;
    trn_biome biomes[5] = {biome("meadow", 0.35f, 0.55f, 0.25f), biome("sand", 0.8f, 0.75f, 0.5f),
                           biome("rock", 0.45f, 0.42f, 0.4f), biome("snow", 0.95f, 0.95f, 0.97f),
                           biome("forest", 0.15f, 0.35f, 0.15f)};
    trn_rule rules[6];
    rules[0] = rule("shoreline", "sand", 30, 1.5);
    rules[0].water_distance = band(0.0, 6.0);
    rules[1] = rule("beach", "sand", 25, 0);
    rules[1].substrate_mask = 1u << TRN_SUBSTRATE_SAND;
    rules[2] = rule("cliffs", "rock", 20, 0);
    rules[2].slope = band(35.0, 90.0);
    rules[3] = rule("snowline", "snow", 10, 20.0);
    rules[3].elevation = band(250.0, 1000.0);
    rules[4] = rule("woods", "forest", 5, 0);
    rules[4].moisture = band(0.55, 1.0);
    rules[4].slope = band(0.0, 30.0);
    rules[5] = rule("high_meadow", "meadow", 5, 10.0);
    rules[5].elevation = band(60.0, 250.0);
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    recipe.size_x = recipe.size_z = (double)cells;
    recipe.cells_x = recipe.cells_z = cells;
    recipe.seed = 20240611;
    recipe.chunk_cells = 32;
    recipe.has_sea_level = true;
    recipe.sea_level = 0.0;
    recipe.default_landform = land.name;
    recipe.landforms = &land;
    recipe.landform_count = 1;
    recipe.default_biome = (char *)"meadow";
    recipe.biomes = biomes;
    recipe.biome_count = 5;
    recipe.rules = rules;
    recipe.rule_count = 6;

    const double samples = (double)(cells + 1u) * (double)(cells + 1u);
    const uint64_t rss_before = peak_rss();
    printf("generate %ux%u samples (ridged, warp 100, 6 octaves, %u rules)\n", cells + 1u,
           cells + 1u, recipe.rule_count);
    uint64_t key = 0, heights_hash = 0;
    int counts[2] = {threads, 1};
    for (int run = 0; run < 2; run++) {
        trn_generate_options go = {
            .threads = counts[run], .quality = TRN_EROSION_FINAL, .cache = NULL, .max_work = 0};
        trn_generated gen;
        trn_error e;
        stage_clock clock;
        memset(&clock, 0, sizeof clock);
        const double t0 = now_s();
        trn_status st = trn_recipe_generate(&recipe, &go, &gen, stage_progress, &clock, &e);
        const double t1 = now_s();
        if (st) {
            fprintf(stderr, "generate failed: %s: %s\n", trn_status_name(st), e.message);
            return 1;
        }
        /* A cheap fingerprint so the 1- and 2-thread runs can be compared. */
        uint64_t h = 1469598103934665603ull;
        const size_t n = trn_field_sample_count(&gen.field);
        for (size_t k = 0; k < n; k += 97) {
            uint32_t bits;
            memcpy(&bits, &gen.field.heights[k], 4);
            h = (h ^ bits ^ ((uint64_t)gen.biomes.values[k] << 32)) * 1099511628211ull;
        }
        if (run == 0) {
            const uint64_t rss = peak_rss();
            printf(
                "  %d thread(s): %.2f s, %.1f M samples/s; peak RSS %.1f MiB = %.2f bytes/sample "
                "(%.2f before generating)\n",
                counts[run], t1 - t0, samples / (t1 - t0) / 1e6, (double)rss / 1048576.0,
                (double)rss / samples, (double)rss_before / samples);
            key = gen.cache_key;
            heights_hash = h;
        } else {
            printf("  %d thread(s): %.2f s, %.1f M samples/s; %s\n", counts[run], t1 - t0,
                   samples / (t1 - t0) / 1e6,
                   h == heights_hash && gen.cache_key == key ? "identical output"
                                                             : "OUTPUT DIFFERS");
        }
        printf("   ");
        for (int k = 0; k < clock.count; k++)
            printf(" %s %.2f s", clock.names[k],
                   (k + 1 < clock.count ? clock.start[k + 1] : t1) - clock.start[k]);
        printf("\n");
        trn_generated_dispose(&gen);
    }
    return 0;
}
