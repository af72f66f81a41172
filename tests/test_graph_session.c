/* Graphs with layers: sculpt replay reuses the eroded base, sessions reuse graph results. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_helpers.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "test.h"

/* lh_recipe_text with a graph: landform "a" -> erosion -> biome_rules -> output. */
static char *recipe_text_with(const char *erosion_params)
{
    static const char graph_fmt[] =
        ", \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": ["
        "{\"id\": \"base\", \"type\": \"landform\", \"position\": [0, 0]},"
        "{\"id\": \"erode\", \"type\": \"erosion\", \"inputs\": {\"field\": {\"node\": "
        "\"base\"}}, \"params\": {%s}},"
        "{\"id\": \"rules\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
        "\"erode\", \"pin\": \"field\"}}},"
        "{\"id\": \"why\", \"type\": \"comment\", \"params\": {\"text\": \"eroded hills\"}},"
        "{\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"rules\"}}}]}}";
    const size_t base = strlen(lh_recipe_text);
    const size_t cap = base + sizeof graph_fmt + strlen(erosion_params) + 16;
    char *t = malloc(cap);
    if (!t) abort();
    memcpy(t, lh_recipe_text, base - 1); /* without the closing brace */
    snprintf(t + base - 1, cap - (base - 1), graph_fmt, erosion_params);
    return t;
}

static void parse(const char *text, trn_recipe *r)
{
    trn_error e;
    trn_error_clear(&e);
    const trn_status st = trn_recipe_parse(text, strlen(text), "g.json", r, NULL, &e);
    CHECK_OK(st);
    if (st) fprintf(stderr, "  %s\n", e.message);
}

static const trn_node_report *report_of(const trn_generated *g, const char *id)
{
    for (uint32_t k = 0; k < g->node_count; k++)
        if (strcmp(g->nodes[k].id, id) == 0) return &g->nodes[k];
    return NULL;
}

static uint64_t heights_hash(const trn_generated *g)
{
    return XXH64(g->field.heights, trn_field_sample_count(&g->field) * sizeof(float), 0);
}

/* A stroke applied to a session equals a full regeneration with it, and the session never
 * reruns erosion for it; a regeneration whose graph is unchanged reuses erosion. */
static void test_sculpt_reuses_eroded_base(void)
{
    char *text = recipe_text_with("\"droplet_density\": 0.6, \"thermal_iterations\": 4");
    trn_recipe r;
    parse(text, &r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    if (!ss) {
        trn_recipe_dispose(&r);
        free(text);
        return;
    }
    const trn_node_report *er = report_of(trn_session_result(ss), "erode");
    CHECK(er && er->outcome == TRN_NODE_EVALUATED && er->has_ledger && er->ledger.eroded > 0.0);
    const double eroded = er ? er->ledger.eroded : 0.0;
    const trn_node_report *note = report_of(trn_session_result(ss), "why");
    CHECK(note && note->outcome == TRN_NODE_SKIPPED && note->key == 0);

    const double pts[4] = {100, 120, 140, 90};
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = 18;
    s.strength = 3;
    s.falloff = 0.5;
    s.points = (double *)pts;
    s.point_count = 2;
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    /* The ledger stays inspectable after local replay. */
    er = report_of(trn_session_result(ss), "erode");
    CHECK(er && er->has_ledger && er->ledger.eroded == eroded);

    /* Full regeneration of the same recipe (stroke included), without any cache. */
    trn_generated full;
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, NULL));
    CHECK(lh_hash(&full) == lh_hash(trn_session_result(ss)));
    CHECK(heights_hash(&full) == heights_hash(trn_session_result(ss)));
    const trn_node_report *fer = report_of(&full, "erode");
    CHECK(fer && fer->outcome == TRN_NODE_EVALUATED);
    trn_generated_dispose(&full);

    /* A recipe change outside the graph (another stroke): erosion is reused, not rerun. */
    trn_recipe c;
    char *ctext = NULL;
    size_t csize = 0;
    CHECK_OK(trn_recipe_canonical_json(trn_session_recipe(ss), &ctext, &csize, NULL));
    parse(ctext, &c);
    free(ctext);
    const double pts2[2] = {60, 60};
    lh_add(&c, TRN_STROKE_LOWER, NULL, 12, 2, pts2, 1);
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, NULL));
    er = report_of(trn_session_result(ss), "erode");
    CHECK(er && er->outcome == TRN_NODE_REUSED && er->cpu_seconds == 0.0 &&
          er->cached_cpu_seconds > 0.0);
    const trn_node_report *base = report_of(trn_session_result(ss), "base");
    CHECK(base && base->outcome == TRN_NODE_REUSED);
    CHECK_OK(trn_recipe_generate(&c, NULL, &full, NULL, NULL, NULL));
    CHECK(heights_hash(&full) == heights_hash(trn_session_result(ss)));
    trn_generated_dispose(&full);
    trn_recipe_dispose(&c);

    /* A bad graph: refused, and the session keeps its previous recipe and surface. */
    const uint64_t before = lh_hash(trn_session_result(ss));
    char *bad = recipe_text_with("\"lifetime\": 0");
    trn_recipe b;
    parse(bad, &b);
    trn_error e;
    trn_error_clear(&e);
    CHECK_STATUS(trn_session_regenerate(ss, &b, TRN_EDITS_CLEAR, NULL, NULL, &e),
                 TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "lifetime");
    CHECK(strcmp(e.node_id, "erode") == 0);
    CHECK(lh_hash(trn_session_result(ss)) == before);
    trn_recipe_dispose(&b);
    free(bad);

    /* An erosion parameter change reruns erosion (and only what depends on it). */
    char *other = recipe_text_with("\"droplet_density\": 0.3, \"thermal_iterations\": 4");
    trn_recipe o;
    parse(other, &o);
    CHECK_OK(trn_session_regenerate(ss, &o, TRN_EDITS_CLEAR, NULL, NULL, NULL));
    er = report_of(trn_session_result(ss), "erode");
    CHECK(er && er->outcome == TRN_NODE_EVALUATED);
    base = report_of(trn_session_result(ss), "base");
    CHECK(base && base->outcome == TRN_NODE_REUSED);
    trn_recipe_dispose(&o);
    free(other);

    trn_session_free(ss);
    trn_recipe_dispose(&r);
    free(text);
}

/* Without a Biome Rules node the rules do not apply: everything unpainted is the default. */
static void test_biome_rules_switch(void)
{
    static const char graph[] =
        ", \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": ["
        "{\"id\": \"base\", \"type\": \"landform\"},"
        "{\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"base\"}}}]}}";
    const size_t n = strlen(lh_recipe_text);
    char *t = malloc(n + sizeof graph);
    if (!t) abort();
    memcpy(t, lh_recipe_text, n - 1);
    memcpy(t + n - 1, graph, sizeof graph);
    trn_recipe with, without;
    parse(t, &without);
    parse(lh_recipe_text, &with);
    trn_generated a, b;
    CHECK_OK(trn_recipe_generate(&with, NULL, &a, NULL, NULL, NULL));
    CHECK_OK(trn_recipe_generate(&without, NULL, &b, NULL, NULL, NULL));
    CHECK(a.biome_rules && !b.biome_rules);
    /* Same heights: the implicit graph and this one both publish landform "a". */
    CHECK(heights_hash(&a) == heights_hash(&b));
    size_t ruled = 0, other = 0;
    const size_t count = trn_field_sample_count(&a.field);
    for (size_t k = 0; k < count; k++) {
        ruled += a.rule_index[k] >= 0;
        other += b.rule_index[k] >= 0 || b.biomes.values[k] != 0;
    }
    CHECK(ruled > 0);
    CHECK_EQ_INT(other, 0);
    CHECK(a.node_count == 3 && strcmp(a.nodes[0].id, "landform") == 0 &&
          strcmp(a.nodes[1].id, "biome_rules") == 0 && strcmp(a.nodes[2].id, "output") == 0);
    trn_generated_dispose(&a);
    trn_generated_dispose(&b);
    trn_recipe_dispose(&with);
    trn_recipe_dispose(&without);
    free(t);
}

/* A session keeps its work budget: a stroke that takes the strokes past it is refused and
 * leaves the recipe and surface as they were; the graph is held to it at creation. */
static void test_session_work_budget(void)
{
    char *text = recipe_text_with("\"droplets\": 1000, \"thermal_iterations\": 0");
    trn_recipe r;
    parse(text, &r);
    free(text);
    /* 129 x 129 = 16641 samples; erosion 16641 + 1000 x 30; the landform 16641 x 5 octaves. */
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.max_work = 16641 * 5 - 1;
    trn_session *ss = NULL;
    trn_error e;
    CHECK_STATUS(trn_session_new(&r, &o, &ss, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK(ss == NULL && strcmp(e.node_id, "base") == 0);
    o.max_work = 16641 * 6;
    CHECK_OK(trn_session_new(&r, &o, &ss, NULL, NULL, &e));
    trn_recipe_dispose(&r);
    if (!ss) return;
    /* Each stamp of radius 1000 covers all 16641 samples: six fit, a seventh does not. */
    double pts[14] = {0};
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = 1000;
    s.strength = 1;
    s.falloff = 0.5;
    s.points = pts;
    s.point_count = 6;
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, &e));
    const uint64_t before = heights_hash(trn_session_result(ss));
    s.point_count = 1;
    CHECK_STATUS(trn_session_apply_stroke(ss, &s, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "edits[0]: the strokes' work 116487 (");
    CHECK_CONTAINS(e.message, "exceeds the work budget of 99846");
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, 1);
    CHECK(heights_hash(trn_session_result(ss)) == before);
    trn_session_free(ss);
}

int main(void)
{
    RUN(test_sculpt_reuses_eroded_base);
    RUN(test_biome_rules_switch);
    RUN(test_session_work_budget);
    return trn_test_finish();
}
