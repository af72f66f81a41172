/* Benchmark: Mountain Range preset at 2049x2049 samples: final, preview, nodes, cache reuse. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/presets.h"

/* The preset keeps its 128 x 128 world units: the noise is sampled at 32 times the density,
 * so the range has the same ridges, heights and slopes as the 64 x 64 preset (the biome rules
 * read the same degrees), only finer. Erosion's distances are in samples, so its droplets
 * (0.5 per sample and pass, two passes: 4.2 million) carve finer gullies; the work they do is
 * the full work of a 2049^2 erosion, which the ledger printed below shows. */
#define BENCH_ID "builtin://terrain/mountain-range"

static void print_nodes(const trn_generated *g)
{
    printf("  %-10s %-14s %-12s %9s %9s\n", "node", "type", "outcome", "cpu s", "wall s");
    for (uint32_t k = 0; k < g->node_count; k++) {
        const trn_node_report *n = &g->nodes[k];
        if (n->outcome == TRN_NODE_SKIPPED) continue; /* the comments */
        printf("  %-10s %-14s %-12s %9.3f %9.3f", n->id, n->type, trn_node_outcome_name(n->outcome),
               n->cpu_seconds, n->wall_seconds);
        if (n->outcome != TRN_NODE_EVALUATED)
            printf("   (cached result cost %.3f s CPU)", n->cached_cpu_seconds);
        printf("\n");
    }
    for (uint32_t k = 0; k < g->node_count; k++) {
        const trn_node_report *n = &g->nodes[k];
        if (!n->has_ledger) continue;
        const trn_erosion_ledger *l = &n->ledger;
        const double balance = l->eroded - l->deposited - l->exported - l->suspended;
        printf("  ledger of %s: %llu droplets, %llu steps (%.1f per droplet); eroded %.1f, "
               "deposited %.1f, exported %.1f, suspended %.1f (balance %.3g) sample-metres\n",
               n->id, (unsigned long long)l->droplets, (unsigned long long)l->steps,
               l->droplets ? (double)l->steps / (double)l->droplets : 0.0, l->eroded, l->deposited,
               l->exported, l->suspended, balance);
    }
}

/* One generation, timed; prints its per-node table. Returns the wall time or -1. */
static double run(const char *label, const trn_recipe *r, int threads, trn_erosion_quality q,
                  trn_graph_cache *cache)
{
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.quality = q;
    o.cache = cache;
    trn_generated g;
    trn_error e;
    const double t0 = now_s();
    const double c0 = (double)clock() / CLOCKS_PER_SEC;
    if (trn_recipe_generate(r, &o, &g, NULL, NULL, &e) != TRN_OK) {
        fprintf(stderr, "%s: %s\n", label, e.message);
        return -1.0;
    }
    const double wall = now_s() - t0;
    const double cpu = (double)clock() / CLOCKS_PER_SEC - c0;
    printf("%s: %.3f s wall, %.3f s CPU (whole generation: graph, water distance, biomes)\n", label,
           wall, cpu);
    print_nodes(&g);
    trn_generated_dispose(&g);
    return wall;
}

/* Set a number parameter of one node in the recipe's graph (rewriting recipe.graph). */
static int set_param(trn_recipe *r, const char *node, const char *param, double value)
{
    trn_graph g;
    if (trn_graph_parse(r->graph_json, strlen(r->graph_json), "graph", &g, NULL) != TRN_OK)
        return -1;
    int found = -1;
    for (uint32_t k = 0; k < g.node_count; k++) {
        if (strcmp(g.nodes[k].id, node) != 0) continue;
        for (uint32_t p = 0; p < g.nodes[k].param_count; p++)
            if (strcmp(g.nodes[k].params[p].name, param) == 0 &&
                g.nodes[k].params[p].type == TRN_VALUE_NUMBER) {
                g.nodes[k].params[p].number = value;
                found = 0;
            }
    }
    char *text = NULL;
    size_t size = 0;
    if (!found && trn_graph_to_json(&g, false, &text, &size, NULL) == TRN_OK) {
        free(r->graph_json);
        r->graph_json = text;
    } else {
        found = -1;
    }
    trn_graph_dispose(&g);
    return found;
}

int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 2048u;
    const int threads = argc > 2 ? atoi(argv[2]) : 2;
    if (cells < 2 || threads < 1) {
        fprintf(stderr, "usage: bench_graph [CELLS_PER_SIDE (2048)] [THREADS (2)]\n");
        return 2;
    }
    trn_preset p;
    trn_error e;
    if (trn_builtin_preset_load(BENCH_ID, &p, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    trn_recipe *r = &p.recipe;
    if (trn_recipe_change_grid(r, r->size_x, r->size_z, cells, cells, TRN_EDITS_REFUSE, &e) !=
        TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        trn_preset_dispose(&p);
        return 1;
    }
    printf("%s at %ux%u samples (%gx%g world units), %d threads\n", BENCH_ID, cells + 1, cells + 1,
           r->size_x, r->size_z, threads);
    int rc = 0;
    const double final_s = run("final", r, threads, TRN_EROSION_FINAL, NULL);
    const double preview_s = run("preview", r, threads, TRN_EROSION_PREVIEW, NULL);
    if (final_s < 0 || preview_s < 0) rc = 1;

    /* With a cache: a first final generation fills it; then a downstream change (erosion's
     * drainage weight) reuses the range and its drainage; then a change to the rules alone
     * reuses every node. */
    trn_graph_cache *cache = NULL;
    if (!rc && trn_graph_cache_new(NULL, (size_t)4 << 30, &cache, &e) != TRN_OK) {
        fprintf(stderr, "%s\n", e.message);
        rc = 1;
    }
    if (!rc && run("cached, first", r, threads, TRN_EROSION_FINAL, cache) < 0) rc = 1;
    if (!rc && set_param(r, "erosion", "drainage_weight", 1.0) != 0) {
        fprintf(stderr, "the preset's graph has no erosion.drainage_weight\n");
        rc = 1;
    }
    if (!rc &&
        run("cached, erosion drainage_weight 1.5 -> 1", r, threads, TRN_EROSION_FINAL, cache) < 0)
        rc = 1;
    if (!rc && r->rule_count) r->rules[0].elevation.min -= 2.0;
    if (!rc && run("cached, first rule's elevation band 2 m lower", r, threads, TRN_EROSION_FINAL,
                   cache) < 0)
        rc = 1;
    trn_graph_cache_free(cache);
    if (!rc)
        printf("final %.3f s (bar: under 30 s on 2 cores), preview %.3f s\n", final_s, preview_s);
    trn_preset_dispose(&p);
    return rc;
}
