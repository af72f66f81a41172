/* Benchmark: realism statistics and generation time of every built-in preset and example. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/stats.h"

/* Generate recipe at cells x cells over its own extent (the grid changed, edits kept), time it
 * and print one row of statistics. */
static int row(const char *name, trn_recipe *r, uint32_t cells, int threads)
{
    trn_error e;
    if (cells &&
        trn_recipe_change_grid(r, r->size_x, r->size_z, cells, cells, TRN_EDITS_KEEP, &e)) {
        printf("| %s | %u^2 | %s |\n", name, cells + 1u, e.message);
        return 0;
    }
    trn_generate_options go = {.threads = threads};
    trn_generated g;
    const double t0 = now_s(), c0 = cpu_s();
    if (trn_recipe_generate(r, &go, &g, NULL, NULL, &e)) {
        printf("| %s | %u^2 | generation failed: %s |\n", name, cells + 1u, e.message);
        return 0;
    }
    const double wall = now_s() - t0, cpu = cpu_s() - c0;
    trn_stats_options so;
    trn_stats_options_default(&so);
    trn_terrain_stats st;
    if (trn_terrain_stats_compute(&g.field, &so, &st, NULL, NULL, &e)) {
        printf("| %s | %u^2 | statistics failed: %s |\n", name, cells + 1u, e.message);
        trn_generated_dispose(&g);
        return 0;
    }
    /* The dry ground alone: samples under published water (sea, lakes, rivers) as no data,
     * so a lake is no depression (tests/test_preset_realism.c measures the same way). */
    const size_t n = trn_field_sample_count(&g.field);
    trn_field dry = g.field;
    dry.heights = malloc(n * sizeof *dry.heights);
    trn_terrain_stats sd;
    memset(&sd, 0, sizeof sd);
    sd.depression_fraction = sd.area_exponent = -1;
    if (dry.heights) {
        for (size_t k = 0; k < n; k++)
            dry.heights[k] =
                g.water_distance && g.water_distance[k] <= 0.0f ? NAN : g.field.heights[k];
        so.which = TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE;
        if (trn_terrain_stats_compute(&dry, &so, &sd, NULL, NULL, &e))
            sd.depression_fraction = sd.area_exponent = -1;
        free(dry.heights);
    }
    printf("| %s | %u^2, %.3g m | %.2f / %.2f s | %.3f | %.1f / %.1f | %.1f%% (%.1f%%) | %.3f "
           "(%.3f) | %.2f | %.3f | %.2f (%c, %.3g) |\n",
           name, g.field.cells_x + 1u, st.cell_x, wall, cpu, st.hypsometric_integral,
           st.slope_median, st.slope_p90, 100.0 * st.depression_fraction,
           100.0 * sd.depression_fraction, st.area_exponent, sd.area_exponent, st.spectral_slope,
           st.axis45_ratio, st.periodic_curvature_ratio, st.periodic_axis ? st.periodic_axis : '-',
           st.periodic_axis == 'z' ? st.periodic_period_z : st.periodic_period_x);
    fflush(stdout);
    trn_generated_dispose(&g);
    return 0;
}

/* Arguments: cells per side (default 1024; 0 = each recipe's own grid), threads, then example
 * recipe paths, "--only PRESET" or "--recipes" and recipe paths. */
int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 1024u;
    const int threads = argc > 2 ? atoi(argv[2]) : 0;
    if (cells == 1 || threads < 0) return 1;
    /* "--only NAME" (third and fourth arguments): that preset alone, no examples;
     * "--recipes" (third argument): the recipe paths after it alone, no presets. */
    const char *only = argc > 4 && strcmp(argv[3], "--only") == 0 ? argv[4] : NULL;
    const bool recipes_only = argc > 3 && strcmp(argv[3], "--recipes") == 0;
    printf("load average %.2f before\n\n", load_average());
    printf("| terrain | grid, cell | generation wall / CPU | HI | slope median / p90 (deg) | in "
           "depressions (dry ground) | b (dry ground) | spectrum slope | 45-degree aspects "
           "(x chance) | periodic curvature (axis, period) |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n");
    for (uint32_t k = 0; !recipes_only && k < trn_builtin_preset_count(); k++) {
        const char *id = trn_builtin_preset_id(k);
        const char *text = trn_builtin_preset_text(id);
        trn_recipe r;
        trn_error e;
        if (only && strcmp(strrchr(id, '/') + 1, only) != 0) continue;
        if (!text || trn_recipe_parse(text, strlen(text), id, &r, NULL, &e)) continue;
        row(strrchr(id, '/') + 1, &r, cells, threads);
        trn_recipe_dispose(&r);
    }
    for (int a = only ? argc : recipes_only ? 4 : 3; a < argc; a++) {
        trn_recipe r;
        trn_error e;
        if (trn_recipe_read(argv[a], &r, NULL, &e)) {
            printf("| %s | %s |\n", argv[a], e.message);
            continue;
        }
        const char *slash = strrchr(argv[a], '/');
        row(slash ? slash + 1 : argv[a], &r, cells, threads);
        trn_recipe_dispose(&r);
    }
    printf("\nload average %.2f after\n", load_average());
    return 0;
}
