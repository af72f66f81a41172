/* Benchmark: one recipe at a coarse and a fine grid of the same world, compared (--resolution). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/resample.h"
#include "terrane/stats.h"

/* Generate r at cells x cells over its own extent; wall seconds into *wall. */
static bool gen(trn_recipe *r, uint32_t cells, int threads, trn_generated *g, double *wall)
{
    trn_error e;
    if (trn_recipe_change_grid(r, r->size_x, r->size_z, cells, cells, TRN_EDITS_KEEP, &e)) {
        printf("grid change to %u failed: %s\n", cells, e.message);
        return false;
    }
    trn_generate_options go = {.threads = threads};
    const double t0 = now_s();
    if (trn_recipe_generate(r, &go, g, NULL, NULL, &e)) {
        printf("generation at %u failed: %s\n", cells, e.message);
        return false;
    }
    *wall = now_s() - t0;
    for (uint32_t k = 0; k < g->diagnostic_count; k++)
        printf("  warning at %u^2: %s\n", cells + 1u, g->diagnostics[k]);
    return true;
}

/* Heights with the published water (sea, lakes, rivers) as NaN: the dry ground. */
static float *dry_heights(const trn_generated *g)
{
    const size_t n = trn_field_sample_count(&g->field);
    float *h = malloc(n * sizeof *h);
    if (!h) return NULL;
    for (size_t k = 0; k < n; k++)
        h[k] = g->water_distance && g->water_distance[k] <= 0.0f ? NAN : g->field.heights[k];
    return h;
}

/* Slope statistics of a field (NaN samples skipped). */
static void slope_stats(const trn_field *f, double *median, double *p90)
{
    trn_stats_options so;
    trn_stats_options_default(&so);
    so.which = TRN_STATS_SLOPE;
    trn_terrain_stats st;
    trn_error e;
    *median = *p90 = NAN;
    if (trn_terrain_stats_compute(f, &so, &st, NULL, NULL, &e)) return;
    *median = st.slope_median;
    *p90 = st.slope_p90;
}

static void drainage_stats(const trn_generated *g, double *dep, double *b)
{
    trn_field dry = g->field;
    dry.heights = dry_heights(g);
    *dep = *b = NAN;
    if (!dry.heights) return;
    trn_stats_options so;
    trn_stats_options_default(&so);
    so.which = TRN_STATS_DEPRESSIONS | TRN_STATS_DRAINAGE;
    trn_terrain_stats st;
    trn_error e;
    if (!trn_terrain_stats_compute(&dry, &so, &st, NULL, NULL, &e)) {
        *dep = st.depression_fraction;
        *b = st.area_exponent;
    }
    free(dry.heights);
}

/* Share of each biome, printed on one line. */
static void biome_shares(const trn_generated *g, const trn_recipe *r, const char *label)
{
    const size_t n = trn_field_sample_count(&g->field);
    printf("  biomes %s:", label);
    for (uint32_t b = 0; b < r->biome_count; b++) {
        size_t c = 0;
        for (size_t k = 0; k < n; k++)
            c += g->biomes.values[k] == b;
        printf(" %s %.1f%%", r->biomes[b].name, 100.0 * (double)c / (double)n);
    }
    printf("\n");
}

static double corr(const double *a, const double *b, size_t n)
{
    double ma = 0, mb = 0;
    for (size_t k = 0; k < n; k++) {
        ma += a[k];
        mb += b[k];
    }
    ma /= (double)n;
    mb /= (double)n;
    double sab = 0, saa = 0, sbb = 0;
    for (size_t k = 0; k < n; k++) {
        sab += (a[k] - ma) * (b[k] - mb);
        saa += (a[k] - ma) * (a[k] - ma);
        sbb += (b[k] - mb) * (b[k] - mb);
    }
    return sab / sqrt(saa * sbb);
}

/* The fine result brought to the coarse grid (area average) against the coarse result. */
static void compare(const trn_field *coarse, const trn_field *fine)
{
    trn_field down;
    trn_error e;
    if (trn_field_resample(fine, NULL, coarse->cells_x, coarse->cells_z, TRN_RESAMPLE_AVERAGE,
                           &down, NULL, NULL, &e)) {
        printf("  resample failed: %s\n", e.message);
        return;
    }
    const uint32_t w = coarse->cells_x + 1u, h = coarse->cells_z + 1u;
    const size_t n = (size_t)w * h;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *sa = malloc(w * sizeof *sa), *sb = malloc(w * sizeof *sb);
    double *ra = malloc(n * sizeof *ra), *rb = malloc(n * sizeof *rb);
    if (!a || !b || !sa || !sb || !ra || !rb) return;
    double lo = INFINITY, hi = -INFINITY, ss = 0;
    for (size_t k = 0; k < n; k++) {
        a[k] = coarse->heights[k];
        b[k] = down.heights[k];
        lo = fmin(lo, a[k]);
        hi = fmax(hi, a[k]);
        ss += (a[k] - b[k]) * (a[k] - b[k]);
    }
    for (uint32_t j = 0; j < h; j++) {
        trn_field_slope_row(coarse, j, sa);
        trn_field_slope_row(&down, j, sb);
        memcpy(ra + (size_t)j * w, sa, w * sizeof *sa);
        memcpy(rb + (size_t)j * w, sb, w * sizeof *sb);
    }
    printf("  fine downsampled to %u^2 vs coarse: RMS difference %.2f m = %.2f%% of the %.0f m "
           "relief; correlation of heights %.4f, of slopes %.3f\n",
           w, sqrt(ss / (double)n), 100.0 * sqrt(ss / (double)n) / (hi - lo), hi - lo,
           corr(a, b, n), corr(ra, rb, n));
    free(a);
    free(b);
    free(sa);
    free(sb);
    free(ra);
    free(rb);
    trn_field_dispose(&down);
}

/* Median slope of the dry ground regridded to cells of about `cell` metres (area average). */
static void slope_at_cell(const trn_generated *g, double cell, const char *label)
{
    trn_field dry = g->field;
    dry.heights = dry_heights(g);
    if (!dry.heights) return;
    const uint32_t cx = (uint32_t)fmax(2.0, round(g->field.size_x / cell));
    const uint32_t cz = (uint32_t)fmax(2.0, round(g->field.size_z / cell));
    trn_field down;
    trn_error e;
    if (!trn_field_resample(&dry, NULL, cx, cz, TRN_RESAMPLE_AVERAGE, &down, NULL, NULL, &e)) {
        double med, p90;
        slope_stats(&down, &med, &p90);
        printf("  %s regridded to %ux%u (%.1f m cells): dry-ground slope median %.1f, p90 %.1f "
               "deg\n",
               label, cx + 1u, cz + 1u, g->field.size_x / cx, med, p90);
        trn_field_dispose(&down);
    }
    free(dry.heights);
}

static void one(const char *name, trn_recipe *r, uint32_t coarse_cells, uint32_t fine_cells,
                int threads)
{
    printf("\n### %s (%g x %g m)\n", name, r->size_x, r->size_z);
    trn_generated gc, gf;
    double wc, wf;
    if (!gen(r, coarse_cells, threads, &gc, &wc)) return;
    double med, p90, dep, b;
    slope_stats(&gc.field, &med, &p90);
    drainage_stats(&gc, &dep, &b);
    printf("  %u^2 (%.2f m cells): %.2f s; slope median %.1f p90 %.1f; dry "
           "ground in depressions %.2f%%, b %.3f\n",
           coarse_cells + 1u, gc.field.size_x / gc.field.cells_x, wc, med, p90, 100 * dep, b);
    biome_shares(&gc, r, "coarse");
    if (fine_cells && gen(r, fine_cells, threads, &gf, &wf)) {
        slope_stats(&gf.field, &med, &p90);
        drainage_stats(&gf, &dep, &b);
        printf("  %u^2 (%.2f m cells): %.2f s; slope median %.1f p90 %.1f; dry ground in "
               "depressions %.2f%%, b %.3f\n",
               fine_cells + 1u, gf.field.size_x / gf.field.cells_x, wf, med, p90, 100 * dep, b);
        biome_shares(&gf, r, "fine");
        compare(&gc.field, &gf.field);
        slope_at_cell(&gf, 30.0, "fine");
        trn_generated_dispose(&gf);
    }
    slope_at_cell(&gc, 30.0, "coarse");
    trn_generated_dispose(&gc);
    fflush(stdout);
}

/* Arguments: coarse cells, fine cells (0: coarse only), threads, then preset names (the part
 * after builtin://terrain/) or recipe paths. */
int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: bench_scale COARSE FINE THREADS PRESET|RECIPE...\n");
        return 1;
    }
    const uint32_t coarse = (uint32_t)strtoul(argv[1], NULL, 10);
    const uint32_t fine = (uint32_t)strtoul(argv[2], NULL, 10);
    const int threads = atoi(argv[3]);
    printf("load average %.2f before\n", load_average());
    for (int a = 4; a < argc; a++) {
        trn_recipe r;
        trn_error e;
        char id[256];
        snprintf(id, sizeof id, "builtin://terrain/%s", argv[a]);
        const char *text = trn_builtin_preset_text(id);
        if (text ? trn_recipe_parse(text, strlen(text), id, &r, NULL, &e)
                 : trn_recipe_read(argv[a], &r, NULL, &e)) {
            printf("%s: %s\n", argv[a], e.message);
            continue;
        }
        one(argv[a], &r, coarse, fine, threads);
        trn_recipe_dispose(&r);
    }
    printf("\nload average %.2f after\n", load_average());
    return 0;
}
