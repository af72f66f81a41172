/* Work budgets against the clock: each node's estimated work beside the CPU time it took. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"

/* Per node type: the smallest and largest nanoseconds of CPU per work unit seen, and the
 * smallest and largest CPU time over the budget's estimate. */
typedef struct type_range {
    char type[32];
    double lo, hi;
    uint64_t lo_work, hi_work;
    double ratio_lo, ratio_hi;
    unsigned runs;
} type_range;

static type_range types[64];
static unsigned type_count;
static bool estimate_only; /* --estimate: each graph's total work, nothing evaluated */

static void note(const char *type, uint64_t work, double estimate, double cpu)
{
    /* Below a millisecond the clock and the node's setup dominate: not a cost model's domain. */
    if (work == 0 || cpu < 1e-3 || !(estimate > 0.0)) return;
    const double ns = cpu * 1e9 / (double)work, ratio = cpu / estimate;
    type_range *t = NULL;
    for (unsigned k = 0; k < type_count && !t; k++)
        if (strcmp(types[k].type, type) == 0) t = &types[k];
    if (!t && type_count < sizeof types / sizeof types[0]) {
        t = &types[type_count++];
        snprintf(t->type, sizeof t->type, "%s", type);
        t->lo = t->hi = ns;
        t->lo_work = t->hi_work = work;
        t->ratio_lo = t->ratio_hi = ratio;
    }
    if (!t) return;
    if (ratio < t->ratio_lo) t->ratio_lo = ratio;
    if (ratio > t->ratio_hi) t->ratio_hi = ratio;
    if (ns < t->lo) t->lo = ns, t->lo_work = work;
    if (ns > t->hi) t->hi = ns, t->hi_work = work;
    t->runs++;
}

/* Evaluate the recipe's graph at cells x cells on one thread, no cache; one row per node. */
static void run(const char *name, trn_recipe *r, uint32_t cells)
{
    trn_error e;
    if (cells &&
        trn_recipe_change_grid(r, r->size_x, r->size_z, cells, cells, TRN_EDITS_KEEP, &e)) {
        printf("| %s | %u^2 | %s |\n", name, cells + 1u, e.message);
        return;
    }
    trn_graph g;
    if (trn_graph_from_recipe(r, &g, &e)) {
        printf("| %s | %s |\n", name, e.message);
        return;
    }
    uint64_t *work = calloc(g.node_count ? g.node_count : 1u, sizeof *work);
    double *estimate = calloc(g.node_count ? g.node_count : 1u, sizeof *estimate);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.max_work = TRN_WORK_UNLIMITED;
    o.max_memory = TRN_MEMORY_UNLIMITED;
    trn_graph_run *gr = NULL;
    if (work && estimate_only && !trn_graph_work(&g, r, TRN_EROSION_FINAL, work, &e)) {
        uint64_t total = 0, most = 0;
        uint32_t at = 0;
        for (uint32_t k = 0; k < g.node_count; k++) {
            total += work[k];
            if (work[k] > most) most = work[k], at = k;
        }
        printf("| %s | %u^2 | total | %llu | largest %s (%s) %llu |\n", name, r->cells_x + 1u,
               (unsigned long long)total, g.nodes[at].id, g.nodes[at].type,
               (unsigned long long)most);
        free(work);
        free(estimate);
        trn_graph_dispose(&g);
        return;
    }
    if (!work || !estimate || trn_graph_work(&g, r, TRN_EROSION_FINAL, work, &e) ||
        trn_graph_work_seconds(&g, r, TRN_EROSION_FINAL, estimate, &e) ||
        trn_graph_evaluate(&g, r, &o, &gr, NULL, NULL, &e)) {
        printf("| %s | %u^2 | %s |\n", name, r->cells_x + 1u, e.message);
        free(work);
        free(estimate);
        trn_graph_dispose(&g);
        return;
    }
    uint32_t count = 0;
    const trn_node_report *rep = trn_graph_run_report(gr, &count);
    for (uint32_t k = 0; k < count && k < g.node_count; k++) {
        if (rep[k].outcome != TRN_NODE_EVALUATED) continue;
        const double ns = work[k] ? rep[k].cpu_seconds * 1e9 / (double)work[k] : 0.0;
        printf("| %s | %u^2 | %s | %s | %llu | %.4f | %.2f | %.4f | %.2f |\n", name,
               r->cells_x + 1u, rep[k].id, rep[k].type, (unsigned long long)work[k],
               rep[k].cpu_seconds, ns, estimate[k],
               estimate[k] > 0.0 ? rep[k].cpu_seconds / estimate[k] : 0.0);
        note(rep[k].type, work[k], estimate[k], rep[k].cpu_seconds);
    }
    fflush(stdout);
    trn_graph_run_free(gr);
    free(work);
    free(estimate);
    trn_graph_dispose(&g);
}

/* Arguments: cells per side (0: each recipe's own grid), then "--presets" and/or recipe paths. */
int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_work CELLS [--estimate] [--presets] [RECIPE.json ...]\n");
        return 2;
    }
    const uint32_t cells = (uint32_t)strtoul(argv[1], NULL, 10);
    printf("load average %.2f before; one thread, no cache\n\n", load_average());
    printf("| recipe | grid | node | type | work units | CPU s | ns per unit | estimate s | CPU / "
           "estimate |\n|---|---|---|---|---|---|---|---|---|\n");
    for (int a = 2; a < argc; a++) {
        trn_recipe r;
        trn_error e;
        if (strcmp(argv[a], "--estimate") == 0) {
            estimate_only = true;
            continue;
        }
        if (strcmp(argv[a], "--presets") == 0) {
            for (uint32_t k = 0; k < trn_builtin_preset_count(); k++) {
                const char *id = trn_builtin_preset_id(k);
                const char *text = trn_builtin_preset_text(id);
                if (!text || trn_recipe_parse(text, strlen(text), id, &r, NULL, &e)) continue;
                run(strrchr(id, '/') + 1, &r, cells);
                trn_recipe_dispose(&r);
            }
            continue;
        }
        if (trn_recipe_read(argv[a], &r, NULL, &e)) {
            printf("| %s | %s |\n", argv[a], e.message);
            continue;
        }
        const char *slash = strrchr(argv[a], '/');
        run(slash ? slash + 1 : argv[a], &r, cells);
        trn_recipe_dispose(&r);
    }
    printf("\n| type | runs (>= 1 ms) | ns per unit, lowest (work) | highest (work) | spread | "
           "CPU / estimate, lowest - highest |\n|---|---|---|---|---|---|\n");
    for (unsigned k = 0; k < type_count; k++)
        printf("| %s | %u | %.2f (%llu) | %.2f (%llu) | %.1fx | %.2f - %.2f |\n", types[k].type,
               types[k].runs, types[k].lo, (unsigned long long)types[k].lo_work, types[k].hi,
               (unsigned long long)types[k].hi_work, types[k].hi / types[k].lo, types[k].ratio_lo,
               types[k].ratio_hi);
    printf("\nload average %.2f after\n", load_average());
    return 0;
}
