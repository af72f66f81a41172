/* libFuzzer target for graph documents: parse; on success check, locate, print, reparse, reprint.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/graph.h"
#include "terrane/recipe.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A small recipe whose landform names the check looks up ("hills", "plain"). */
static const char recipe_text[] =
    "{\"size\":[64,64],\"resolution\":[8,8],\"seed\":5,\"default_landform\":\"hills\","
    "\"landforms\":{\"hills\":{},\"plain\":{\"height_variation\":0}},"
    "\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0,1,0,1]}}}";

/* Diagnostics are well formed; located ones point into the text. */
static void check_diagnostics(const trn_graph *g, const trn_recipe *recipe, const char *text,
                              size_t size)
{
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    FUZZ_ASSERT(trn_graph_check(g, recipe, &d, NULL) == TRN_OK);
    size_t errors = 0;
    for (size_t k = 0; k < d.count; k++) {
        const trn_graph_diagnostic *x = &d.items[k];
        FUZZ_ASSERT(x->severity == TRN_GRAPH_ERROR || x->severity == TRN_GRAPH_WARNING);
        FUZZ_ASSERT(x->check[0] != '\0' && x->message[0] != '\0');
        FUZZ_ASSERT(x->line == 0 && x->offset == -1);
        FUZZ_ASSERT(memchr(x->node_id, '\0', sizeof x->node_id) != NULL);
        FUZZ_ASSERT(memchr(x->path, '\0', sizeof x->path) != NULL);
        errors += x->severity == TRN_GRAPH_ERROR;
    }
    FUZZ_ASSERT(errors == trn_graph_diagnostics_errors(&d));
    /* Without any node, only the output can be wrong. */
    if (g->node_count == 0) FUZZ_ASSERT(d.count == 1);
    trn_graph_diagnostics_locate(&d, text, size, "");
    for (size_t k = 0; k < d.count; k++) {
        FUZZ_ASSERT(d.items[k].offset >= 0 && d.items[k].offset <= (int64_t)size);
        FUZZ_ASSERT(d.items[k].line >= 1 && d.items[k].column >= 1);
    }
    if (recipe) {
        /* Keys are computed exactly when the check finds no error, and never evaluate. */
        uint64_t *keys = calloc(g->node_count ? g->node_count : 1u, sizeof *keys);
        FUZZ_ASSERT(keys != NULL);
        trn_error e;
        trn_status st = trn_graph_keys(g, recipe, TRN_EROSION_FINAL, keys, &e);
        if (errors) {
            FUZZ_ASSERT(st == TRN_ERR_VALIDATION && e.code == st);
            const trn_graph_diagnostic *first = NULL;
            for (size_t k = 0; k < d.count && !first; k++)
                if (d.items[k].severity == TRN_GRAPH_ERROR) first = &d.items[k];
            FUZZ_ASSERT(first && strcmp(e.node_id, first->node_id) == 0);
        } else {
            FUZZ_ASSERT(st == TRN_OK);
            int out = -1;
            for (uint32_t k = 0; k < g->node_count; k++)
                if (strcmp(g->nodes[k].id, g->output) == 0) out = (int)k;
            FUZZ_ASSERT(out >= 0 && keys[out] != 0);
            for (uint32_t k = 0; k < g->node_count; k++)
                if (strcmp(g->nodes[k].type, "comment") == 0) FUZZ_ASSERT(keys[k] == 0);
            /* Work is estimated for exactly the nodes that get keys (never evaluating), and the
             * budget's diagnostics are the nodes above it, each at a path that locates. */
            uint64_t *work = calloc(g->node_count ? g->node_count : 1u, sizeof *work);
            FUZZ_ASSERT(work != NULL);
            FUZZ_ASSERT(trn_graph_work(g, recipe, TRN_EROSION_FINAL, work, &e) == TRN_OK);
            size_t over = 0;
            for (uint32_t k = 0; k < g->node_count; k++) {
                FUZZ_ASSERT((work[k] != 0) == (keys[k] != 0));
                over += work[k] > TRN_WORK_BUDGET_DEFAULT;
            }
            trn_graph_diagnostics w;
            memset(&w, 0, sizeof w);
            FUZZ_ASSERT(trn_graph_check_work(g, recipe, TRN_EROSION_FINAL, 0, &w, &e) == TRN_OK);
            size_t node_level = 0;
            for (size_t k = 0; k < w.count; k++)
                node_level += w.items[k].node_id[0] != '\0';
            FUZZ_ASSERT(node_level == over && w.count <= over + 1);
            trn_graph_diagnostics_locate(&w, text, size, "");
            for (size_t k = 0; k < w.count; k++) {
                FUZZ_ASSERT(strcmp(w.items[k].check, "work-budget") == 0);
                FUZZ_ASSERT(w.items[k].severity == TRN_GRAPH_ERROR && w.items[k].line >= 1);
            }
            trn_graph_diagnostics_dispose(&w);
            FUZZ_ASSERT(trn_graph_check_work(g, recipe, TRN_EROSION_FINAL, TRN_WORK_UNLIMITED, &w,
                                             &e) == TRN_OK);
            FUZZ_ASSERT(w.count == 0);
            trn_graph_diagnostics_dispose(&w);
            free(work);
        }
        free(keys);
    }
    trn_graph_diagnostics_dispose(&d);
}

/* Print g, parse the text, print again: the same bytes. Returns the first text. */
static char *reprint(const trn_graph *g, bool identity)
{
    char *t1 = NULL, *t2 = NULL;
    size_t n1 = 0, n2 = 0;
    trn_error e;
    FUZZ_ASSERT(trn_graph_to_json(g, identity, &t1, &n1, &e) == TRN_OK);
    FUZZ_ASSERT(t1 && strlen(t1) == n1);
    trn_graph back;
    trn_status st = trn_graph_parse(t1, n1, "printed.json", &back, &e);
    if (st != TRN_OK) fprintf(stderr, "printed graph refused: %s\n%s\n", e.message, t1);
    FUZZ_ASSERT(st == TRN_OK);
    FUZZ_ASSERT(trn_graph_to_json(&back, identity, &t2, &n2, &e) == TRN_OK);
    if (n1 != n2 || memcmp(t1, t2, n1) != 0) fprintf(stderr, "reprinted:\n%s\n%s\n", t1, t2);
    FUZZ_ASSERT(n1 == n2 && memcmp(t1, t2, n1) == 0);
    if (!identity) {
        /* Nothing is lost: the same nodes, ids, types, positions and parameter counts. */
        FUZZ_ASSERT(back.node_count == g->node_count);
        FUZZ_ASSERT((back.output == NULL) == (g->output == NULL));
        for (uint32_t k = 0; k < g->node_count; k++) {
            const trn_graph_node *a = &g->nodes[k], *b = &back.nodes[k];
            FUZZ_ASSERT(strcmp(a->id, b->id) == 0 && strcmp(a->type, b->type) == 0);
            FUZZ_ASSERT(a->has_position == b->has_position);
            FUZZ_ASSERT(!a->has_position || (a->x == b->x && a->y == b->y));
            FUZZ_ASSERT(a->param_count == b->param_count && a->input_count == b->input_count);
        }
    }
    trn_graph_dispose(&back);
    free(t2);
    return t1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    trn_graph g;
    trn_error e;
    trn_status st = trn_graph_parse(text, size, "fuzz.json", &g, &e);
    if (st != TRN_OK) {
        /* A failure leaves the graph empty and says what and where. */
        FUZZ_ASSERT(g.nodes == NULL && g.node_count == 0 && g.output == NULL);
        FUZZ_ASSERT(st == e.code);
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_VERSION || st == TRN_ERR_LIMIT ||
                    st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        FUZZ_ASSERT(e.line >= 1 && e.column >= 1);
        return 0;
    }
    FUZZ_ASSERT(g.format_version == TRN_GRAPH_FORMAT_VERSION);
    for (uint32_t k = 0; k < g.node_count; k++)
        FUZZ_ASSERT(g.nodes[k].id && g.nodes[k].type);

    trn_recipe recipe;
    FUZZ_ASSERT(trn_recipe_parse(recipe_text, sizeof recipe_text - 1, "r.json", &recipe, NULL,
                                 &e) == TRN_OK);
    check_diagnostics(&g, NULL, text, size);
    check_diagnostics(&g, &recipe, text, size);

    char *full = reprint(&g, false);
    char *identity = reprint(&g, true);
    /* The identity of the canonical text is the identity of the document (what recipe cache
     * keys hash). */
    trn_graph canon;
    FUZZ_ASSERT(trn_graph_parse(full, strlen(full), "c.json", &canon, &e) == TRN_OK);
    char *id2 = NULL;
    FUZZ_ASSERT(trn_graph_to_json(&canon, true, &id2, NULL, &e) == TRN_OK);
    FUZZ_ASSERT(strcmp(identity, id2) == 0);
    free(id2);
    trn_graph_dispose(&canon);
    free(full);
    free(identity);
    trn_recipe_dispose(&recipe);
    trn_graph_dispose(&g);
    return 0;
}
