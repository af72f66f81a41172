/* A node family's parameters filled into a typed struct by its rows (trn_graph_params_fill): the
 * node's values where it gives them, the type's defaults elsewhere, counts converted, choices as
 * the index of the text in the type's choices; texts, whether a parameter is given, vectors,
 * points and values kept as JSON text. */
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

/* A one-node graph of type with params (JSON object text); dispose it. */
static trn_graph one_node(const char *type, const char *params)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format_version\": 1, \"nodes\": [{\"id\": \"e\", \"type\": \"%s\", "
             "\"params\": %s}]}",
             type, params);
    trn_graph g;
    CHECK_OK(trn_graph_parse(text, strlen(text), "g.json", &g, NULL));
    CHECK(g.node_count == 1);
    return g;
}

/* The erosion node of a one-node graph with params (JSON object text). */
static void fill(const char *params, erosion_like *out)
{
    trn_graph g = one_node("erosion", params);
    const trn_node_type *t = trn_node_type_find("erosion");
    CHECK(t != NULL);
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

/* A Water Body's texts, vectors and points, and whether parameters are given. */
typedef struct body_like {
    const char *kind, *level_word;
    double level;
    bool level_number, radius_given, boundary_given;
    double center[2], flow_direction[2], deep_color[4];
    trn_param_points boundary, river_path;
} body_like;

static const trn_param_field body_rows[] = {
    TRN_PARAM_TEXT_ROW("kind", body_like, kind),
    TRN_PARAM_TEXT_ROW("level", body_like, level_word),
    TRN_PARAM_DOUBLE_ROW("level", body_like, level),
    TRN_PARAM_NUMBER_GIVEN_ROW("level", body_like, level_number),
    TRN_PARAM_GIVEN_ROW("radius", body_like, radius_given),
    TRN_PARAM_GIVEN_ROW("boundary", body_like, boundary_given),
    TRN_PARAM_VECTOR_ROW("center", body_like, center),
    TRN_PARAM_VECTOR_ROW("flow_direction", body_like, flow_direction),
    TRN_PARAM_VECTOR_ROW("deep_color", body_like, deep_color),
    TRN_PARAM_POINTS_ROW("boundary", body_like, boundary, 2),
    TRN_PARAM_POINTS_ROW("river_path", body_like, river_path, 3),
};

static void test_fill_shapes(void)
{
    const trn_node_type *t = trn_node_type_find("water_body");
    CHECK(t != NULL);
    if (!t) return;
    body_like p;
    trn_graph g = one_node("water_body",
                           "{\"kind\": \"river\", \"level\": \"spill\", \"center\": [1, 2], "
                           "\"flow_direction\": [1, 2, 3], \"boundary\": [[0, 0], [4, 0], [4, 4]], "
                           "\"river_path\": [[0, 1, 0], [5, 2, 5]]}");
    memset(&p, 0xAB, sizeof p);
    trn_graph_params_fill(&g.nodes[0], t, TRN_PARAM_ROWS(body_rows), &p);
    CHECK(p.kind && strcmp(p.kind, "river") == 0);
    /* A number parameter given a word: the word as text, the default as the number. */
    CHECK(p.level_word && strcmp(p.level_word, "spill") == 0);
    CHECK(p.level == 0.0 && !p.level_number);
    CHECK(!p.radius_given && p.boundary_given);
    CHECK(p.center[0] == 1.0 && p.center[1] == 2.0);
    /* Three numbers for a two-number vector read as zeros; an absent one as its default. */
    CHECK(p.flow_direction[0] == 0.0 && p.flow_direction[1] == 0.0);
    CHECK(p.deep_color[0] == 0.02 && p.deep_color[3] == 0.9);
    CHECK(p.boundary.count == 3 && p.boundary.v && p.boundary.v[2] == 4.0);
    CHECK(p.river_path.count == 2 && p.river_path.v && p.river_path.v[4] == 2.0);
    trn_graph_dispose(&g);

    g = one_node("water_body", "{\"level\": 3}");
    memset(&p, 0xAB, sizeof p);
    trn_graph_params_fill(&g.nodes[0], t, TRN_PARAM_ROWS(body_rows), &p);
    CHECK(p.kind && strcmp(p.kind, "lake") == 0); /* the default text */
    CHECK(p.level == 3.0 && p.level_number && !p.level_word);
    CHECK(!p.boundary_given && !p.boundary.v && p.boundary.count == 0);
    CHECK(p.flow_direction[0] == 1.0 && p.flow_direction[1] == 0.0);
    trn_graph_dispose(&g);
}

/* A Water Edit's parameters kept as JSON text: the node's, NULL for another kind, the default. */
typedef struct edit_like {
    const char *excluded, *overrides;
} edit_like;

static const trn_param_field edit_rows[] = {
    TRN_PARAM_JSON_ROW("excluded_ids", edit_like, excluded),
    TRN_PARAM_JSON_ROW("overrides", edit_like, overrides),
};

static void test_fill_json(void)
{
    const trn_node_type *t = trn_node_type_find("water_edit");
    CHECK(t != NULL);
    if (!t) return;
    edit_like p;
    trn_graph g = one_node("water_edit", "{\"excluded_ids\": [\"a\"], \"overrides\": 5}");
    trn_graph_params_fill(&g.nodes[0], t, TRN_PARAM_ROWS(edit_rows), &p);
    CHECK(p.excluded && strcmp(p.excluded, "[\"a\"]") == 0);
    CHECK(p.overrides == NULL);
    trn_graph_dispose(&g);
    g = one_node("water_edit", "{}");
    trn_graph_params_fill(&g.nodes[0], t, TRN_PARAM_ROWS(edit_rows), &p);
    CHECK(p.excluded && strcmp(p.excluded, "[]") == 0);
    CHECK(p.overrides && strcmp(p.overrides, "[]") == 0);
    trn_graph_dispose(&g);
}

int main(void)
{
    RUN(test_fill);
    RUN(test_fill_shapes);
    RUN(test_fill_json);
    return trn_test_finish();
}
