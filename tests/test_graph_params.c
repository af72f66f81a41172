/* A node family's parameters filled into a typed struct by its rows (trn_graph_params_fill): the
 * node's values where it gives them, the type's defaults elsewhere, counts converted, choices as
 * the index of the text in the type's choices. */
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "terrane/graph.h"
#include "test.h"

typedef struct erosion_like {
    double capacity;
    uint32_t radius;
    int mode;
    double gravity;
} erosion_like;

static const trn_param_field rows[] = {
    TRN_PARAM_DOUBLE_ROW("capacity", erosion_like, capacity),
    TRN_PARAM_U32_ROW("radius", erosion_like, radius),
    TRN_PARAM_CHOICE_ROW("mode", erosion_like, mode),
    TRN_PARAM_DOUBLE_ROW("gravity", erosion_like, gravity),
};

/* The erosion node of a one-node graph with params (JSON object text). */
static void fill(const char *params, erosion_like *out)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"format_version\": 1, \"nodes\": [{\"id\": \"e\", \"type\": \"erosion\", "
             "\"params\": %s}]}",
             params);
    trn_graph g;
    CHECK_OK(trn_graph_parse(text, strlen(text), "g.json", &g, NULL));
    const trn_node_type *t = trn_node_type_find("erosion");
    CHECK(t != NULL && g.node_count == 1);
    memset(out, 0xAB, sizeof *out);
    if (t && g.node_count == 1)
        trn_graph_params_fill(&g.nodes[0], t, rows, sizeof rows / sizeof rows[0], out);
    trn_graph_dispose(&g);
}

static void test_fill(void)
{
    erosion_like p;
    /* Defaults: the type's (capacity 4, radius 3, detach, gravity 4). */
    fill("{}", &p);
    CHECK(p.capacity == 4.0 && p.radius == 3u && p.mode == 0 && p.gravity == 4.0);
    /* The node's values; the second choice is index 1. */
    fill("{\"capacity\": 2.5, \"radius\": 7, \"mode\": \"transport\", \"gravity\": 0.5}", &p);
    CHECK(p.capacity == 2.5 && p.radius == 7u && p.mode == 1 && p.gravity == 0.5);
    fill("{\"mode\": \"detach\", \"radius\": 16}", &p);
    CHECK(p.mode == 0 && p.radius == 16u && p.capacity == 4.0);
    /* A text the choices lack (the check refuses it before a run) reads as the first. */
    fill("{\"mode\": \"transported\"}", &p);
    CHECK(p.mode == 0);
}

int main(void)
{
    RUN(test_fill);
    return trn_test_finish();
}
