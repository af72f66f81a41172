/* Tests for the Scatter Palette graph node: exact placement, palette keys and reuse, the missing
 * palette, cache files and thread counts. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/scatter.h"
#include "test.h"

/* ---- helpers ---- */

/* Grass everywhere moist and gentle enough, boulders spaced out on rock (or, with "grass",
 * anywhere the default biome lies). */
static char *palette_text(double grass_density, const char *boulder_biome)
{
    char *t = malloc(2048);
    snprintf(
        t, 2048,
        "{\"format_version\": 3, \"name\": \"Test\", \"placements\": {"
        "\"grass\": {\"model\": \"asset://models/grass\", \"collision\": \"none\", \"category\": "
        "\"grass\", \"density\": %g, \"candidate_spacing\": 2, \"slope\": [0, 30], "
        "\"moisture\": [0.2, 0.9]},"
        "\"boulder\": {\"prefab\": \"asset://prefabs/boulder\", \"category\": \"rock\", "
        "\"density\": "
        "0.02, \"candidate_spacing\": 3, \"spacing\": 6, \"biomes\": [\"%s\"], \"cluster\": "
        "{\"size\": 20, \"strength\": 0.5}}}}",
        grass_density, boulder_biome);
    return t;
}

static bool load_palette(double grass_density, const char *boulder_biome, trn_palette *p)
{
    char *text = palette_text(grass_density, boulder_biome);
    trn_error e;
    const trn_status st = trn_palette_parse(text, strlen(text), "p.json", p, &e);
    if (st) fprintf(stderr, "palette refused: %s\n", e.message);
    free(text);
    return st == TRN_OK;
}

/* 64x64 cells over 256x256 with a steep-rock rule; palette: whether the recipe names one. */
static bool load_recipe(const char *graph, bool palette, trn_recipe *r)
{
    static const char head[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":120,"
        "\"octaves\":4}},\"default_biome\":\"grass\","
        "\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},\"rock\":{\"color\":[0.5,0.5,0.5,1]}},"
        "\"rules\":[{\"id\":\"steep\",\"biome\":\"rock\",\"priority\":1,\"slope\":[25,90]}]"
        "%s,\"graph\":%s}";
    const size_t n = sizeof head + strlen(graph) + 64;
    char *text = malloc(n);
    snprintf(text, n, head, palette ? ",\"palette\":\"asset://palettes/test\"" : "", graph);
    trn_error e;
    const trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    free(text);
    return st == TRN_OK;
}

/* landform -> (biome_rules) -> scatter_palette; landform -> offset -> output(instances). */
static char *graph_text(bool rules, double offset)
{
    char *t = malloc(2048);
    snprintf(
        t, 2048,
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"lf\",\"type\":\"landform\"},"
        "{\"id\":\"bi\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"lf\"}}},"
        "{\"id\":\"sc\",\"type\":\"scatter_palette\",\"inputs\":{\"field\":{\"node\":\"%s\"}}},"
        "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":%g},\"inputs\":{"
        "\"field\":{\"node\":\"lf\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"off\"},"
        "\"instances\":{\"node\":\"sc\"}}}]}",
        rules ? "bi" : "lf", offset);
    return t;
}

typedef struct fixture {
    trn_recipe recipe;
    trn_graph graph;
    trn_graph_run *run;
    trn_error err;
    trn_status status;
} fixture;

static void fixture_run(fixture *f, bool rules, double offset, bool recipe_palette,
                        const trn_palette *palette, int threads, trn_graph_cache *cache)
{
    memset(f, 0, sizeof *f);
    char *g = graph_text(rules, offset);
    f->status = load_recipe(g, recipe_palette, &f->recipe) ? TRN_OK : TRN_ERR_JSON;
    if (!f->status) f->status = trn_graph_parse(g, strlen(g), "g.json", &f->graph, &f->err);
    free(g);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.cache = cache;
    o.palette = palette;
    if (!f->status)
        f->status = trn_graph_evaluate(&f->graph, &f->recipe, &o, &f->run, NULL, NULL, &f->err);
}

static void fixture_dispose(fixture *f)
{
    trn_graph_run_free(f->run);
    trn_graph_dispose(&f->graph);
    trn_recipe_dispose(&f->recipe);
}

static trn_node_outcome outcome_of(const fixture *f, const char *id)
{
    uint32_t n = 0;
    const trn_node_report *reps = trn_graph_run_report(f->run, &n);
    for (uint32_t k = 0; reps && k < n; k++)
        if (strcmp(reps[k].id, id) == 0) return reps[k].outcome;
    return TRN_NODE_SKIPPED;
}

static uint64_t key_of(const fixture *f, const char *id)
{
    uint32_t n = 0;
    const trn_node_report *reps = trn_graph_run_report(f->run, &n);
    for (uint32_t k = 0; reps && k < n; k++)
        if (strcmp(reps[k].id, id) == 0) return reps[k].key;
    return 0;
}

static bool same_instances(const trn_instances *a, const trn_instances *b)
{
    if (!a || !b || a->count != b->count) return false;
    for (size_t k = 0; k < a->count; k++) {
        const trn_instance *x = &a->items[k], *y = &b->items[k];
        if (x->rule != y->rule || x->cx != y->cx || x->cz != y->cz || memcmp(&x->x, &y->x, 8) ||
            memcmp(&x->y, &y->y, 8) || memcmp(&x->z, &y->z, 8) || memcmp(&x->yaw, &y->yaw, 8) ||
            memcmp(&x->scale, &y->scale, 8))
            return false;
    }
    return true;
}

static size_t count_rule(const trn_instances *in, uint32_t rule)
{
    size_t n = 0;
    for (size_t k = 0; in && k < in->count; k++)
        n += in->items[k].rule == rule;
    return n;
}

/* The recipe of load_recipe with the graph and a raise stroke over the middle. */
static bool load_recipe_with_edit(const char *graph, trn_recipe *r)
{
    static const char head[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":120,"
        "\"octaves\":4}},\"default_biome\":\"grass\","
        "\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},\"rock\":{\"color\":[0.5,0.5,0.5,1]}},"
        "\"rules\":[{\"id\":\"steep\",\"biome\":\"rock\",\"priority\":1,\"slope\":[25,90]}],"
        "\"palette\":\"asset://palettes/test\",\"edits\":[{\"type\":\"raise\",\"radius\":60,"
        "\"strength\":8,\"center\":[128,128]}],\"graph\":%s}";
    const size_t n = sizeof head + strlen(graph);
    char *text = malloc(n);
    snprintf(text, n, head, graph);
    trn_error e;
    const trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    free(text);
    return st == TRN_OK;
}

/* ---- tests ---- */

/* The node's instances are trn_scatter_run's on its input field with the environment generation
 * would give it before the layers: the inferred sea, moisture, the default biome without Biome
 * Rules, the scatter sub-seed. Terrain Output publishes them (they stand on the landform, not on
 * the offset field the output publishes). */
static void test_exact_placement(void)
{
    trn_palette pal;
    CHECK(load_palette(0.2, "grass", &pal));
    fixture f;
    fixture_run(&f, false, 5.0, true, &pal, 2, NULL);
    CHECK_OK(f.status);
    trn_graph_value lf, sc;
    CHECK_OK(trn_graph_run_output(f.run, "lf", NULL, &lf, NULL));
    CHECK_OK(trn_graph_run_output(f.run, "sc", NULL, &sc, NULL));
    CHECK(sc.kind == TRN_PIN_INSTANCES && sc.instances && sc.values == NULL);
    CHECK(trn_graph_run_instances(f.run) == sc.instances);

    trn_field field = {lf.cells_x, lf.cells_z, lf.size_x, lf.size_z, (float *)lf.values, 0, 0};
    const size_t n = trn_field_sample_count(&field);
    float *distance = malloc(n * sizeof *distance), *moisture = malloc(n * sizeof *moisture);
    uint8_t *wet = malloc(n), *labels = malloc(n);
    CHECK_OK(trn_water_distance_fill(&field, trn_recipe_sea_level(&f.recipe, NULL, NULL, 0),
                                     distance, NULL, NULL, NULL));
    size_t wet_count = 0;
    for (size_t k = 0; k < n; k++) {
        wet[k] = distance[k] == 0.0f;
        wet_count += wet[k];
        labels[k] = 0; /* grass, the default: no Biome Rules upstream */
    }
    for (uint32_t j = 0; j <= field.cells_z; j++)
        trn_moisture_row(f.recipe.seed, field.size_x, field.cells_x,
                         (double)j * field.size_z / (double)field.cells_z,
                         moisture + (size_t)j * (field.cells_x + 1u));
    const char *names[2] = {"grass", "rock"};
    trn_scatter_env env;
    memset(&env, 0, sizeof env);
    env.field = &field;
    env.biome = labels;
    env.biome_names = names;
    env.biome_name_count = 2;
    env.moisture = moisture;
    env.water_distance = distance;
    env.wet = wet;
    env.scatter_seed = trn_subseed(f.recipe.seed, "scatter");
    trn_instances want = {NULL, 0};
    CHECK_OK(trn_scatter_run(&pal, &env, NULL, &want, NULL, NULL, NULL, NULL));
    CHECK(same_instances(sc.instances, &want));
    CHECK(count_rule(&want, 0) > 100 && count_rule(&want, 1) > 10);
    CHECK(wet_count > 0); /* the sea blocked something */
    /* The note says what was placed. */
    uint32_t count = 0;
    const trn_node_report *reps = trn_graph_run_report(f.run, &count);
    for (uint32_t k = 0; k < count; k++)
        if (strcmp(reps[k].id, "sc") == 0) {
            char lead[64];
            snprintf(lead, sizeof lead, "%zu candidates placed from ", want.count);
            CHECK_CONTAINS(reps[k].note, lead);
        }
    trn_instances_dispose(&want);
    free(distance);
    free(moisture);
    free(wet);
    free(labels);
    fixture_dispose(&f);
    trn_palette_dispose(&pal);
}

/* Biome lists read the labels generation would give the node's field: without Biome Rules
 * upstream every sample is the default biome, so a rock-only rule places nothing; past Biome
 * Rules the steep rule's rock takes them. */
static void test_biomes_follow_rules(void)
{
    trn_palette pal;
    CHECK(load_palette(0.2, "rock", &pal));
    fixture a, b;
    fixture_run(&a, false, 0.0, true, &pal, 1, NULL);
    fixture_run(&b, true, 0.0, true, &pal, 1, NULL);
    CHECK_OK(a.status);
    CHECK_OK(b.status);
    const trn_instances *ia = trn_graph_run_instances(a.run), *ib = trn_graph_run_instances(b.run);
    CHECK(ia && count_rule(ia, 1) == 0 && count_rule(ia, 0) > 0);
    CHECK(ib && count_rule(ib, 1) > 0 && count_rule(ib, 0) == count_rule(ia, 0));
    fixture_dispose(&a);
    fixture_dispose(&b);
    trn_palette_dispose(&pal);
}

/* A palette edit changes the node's key: the node and the output are evaluated again, the
 * landform and the offset reused. An edit downstream (the offset) keeps the node cached. */
static void test_palette_edit_reuse(void)
{
    trn_palette p1, p2, p1_again;
    CHECK(load_palette(0.2, "grass", &p1));
    CHECK(load_palette(0.15, "grass", &p2));
    CHECK(load_palette(0.2, "grass", &p1_again));
    CHECK(trn_palette_digest(&p1) == trn_palette_digest(&p1_again));
    CHECK(trn_palette_digest(&p1) != trn_palette_digest(&p2));
    CHECK(trn_palette_digest(NULL) == 0);
    /* The palette's name is not placement: same digest. */
    char *old = p1_again.name;
    p1_again.name = (char *)"Renamed";
    CHECK(trn_palette_digest(&p1) == trn_palette_digest(&p1_again));
    p1_again.name = old;
    p1_again.rules[1].spacing = 7.0;
    CHECK(trn_palette_digest(&p1) != trn_palette_digest(&p1_again));
    p1_again.rules[1].spacing = 6.0;
    p1_again.rules[0].moisture.hi = 0.8;
    CHECK(trn_palette_digest(&p1) != trn_palette_digest(&p1_again));

    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    fixture a, b, c;
    fixture_run(&a, false, 5.0, true, &p1, 2, cache);
    fixture_run(&b, false, 5.0, true, &p2, 2, cache);
    fixture_run(&c, false, 9.0, true, &p2, 2, cache);
    CHECK_OK(a.status);
    CHECK_OK(b.status);
    CHECK_OK(c.status);
    CHECK(key_of(&a, "sc") != key_of(&b, "sc") && key_of(&a, "out") != key_of(&b, "out"));
    CHECK(key_of(&a, "lf") == key_of(&b, "lf") && key_of(&a, "off") == key_of(&b, "off"));
    CHECK(outcome_of(&b, "lf") == TRN_NODE_REUSED && outcome_of(&b, "off") == TRN_NODE_REUSED);
    CHECK(outcome_of(&b, "sc") == TRN_NODE_EVALUATED &&
          outcome_of(&b, "out") == TRN_NODE_EVALUATED);
    CHECK(trn_graph_run_instances(b.run)->count < trn_graph_run_instances(a.run)->count);
    CHECK(outcome_of(&c, "sc") == TRN_NODE_REUSED && outcome_of(&c, "lf") == TRN_NODE_REUSED);
    CHECK(outcome_of(&c, "off") == TRN_NODE_EVALUATED &&
          outcome_of(&c, "out") == TRN_NODE_EVALUATED);
    CHECK(same_instances(trn_graph_run_instances(b.run), trn_graph_run_instances(c.run)));
    /* trn_graph_keys_for gives the keys evaluation used; trn_graph_keys (no palette) another. */
    uint64_t keys[5] = {0}, plain[5] = {0};
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.palette = &p2;
    CHECK_OK(trn_graph_keys_for(&b.graph, &b.recipe, &o, keys, NULL));
    CHECK_OK(trn_graph_keys(&b.graph, &b.recipe, TRN_EROSION_FINAL, plain, NULL));
    CHECK(keys[2] == key_of(&b, "sc") && keys[4] == key_of(&b, "out"));
    CHECK(plain[2] != keys[2] && plain[0] == keys[0]);
    fixture_dispose(&a);
    fixture_dispose(&b);
    fixture_dispose(&c);
    trn_graph_cache_free(cache);
    trn_palette_dispose(&p1);
    trn_palette_dispose(&p2);
    trn_palette_dispose(&p1_again);
}

/* No palette: a recipe that names none is a check error naming the node; a recipe that names
 * one, evaluated without the resolved palette, is refused before anything runs. */
static void test_missing_palette(void)
{
    fixture f;
    fixture_run(&f, false, 0.0, false, NULL, 1, NULL);
    CHECK_STATUS(f.status, TRN_ERR_VALIDATION);
    CHECK_CONTAINS(f.err.message, "graph.nodes[2]: node 'sc' (scatter_palette): the recipe "
                                  "names no palette");
    CHECK(strcmp(f.err.node_id, "sc") == 0);
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&f.graph, &f.recipe, &d, NULL));
    CHECK_EQ_INT(trn_graph_diagnostics_errors(&d), 1);
    for (size_t k = 0; k < d.count; k++)
        if (d.items[k].severity == TRN_GRAPH_ERROR)
            CHECK(strcmp(d.items[k].check, "palette-missing") == 0 &&
                  strcmp(d.items[k].node_id, "sc") == 0 &&
                  strcmp(d.items[k].path, "nodes[2]") == 0);
    trn_graph_diagnostics_dispose(&d);
    /* Without a recipe the check cannot know: nothing reported. */
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&f.graph, NULL, &d, NULL));
    CHECK_EQ_INT(trn_graph_diagnostics_errors(&d), 0);
    trn_graph_diagnostics_dispose(&d);
    fixture_dispose(&f);

    fixture_run(&f, false, 0.0, true, NULL, 1, NULL);
    CHECK_STATUS(f.status, TRN_ERR_VALIDATION);
    CHECK_CONTAINS(f.err.message, "scatter_palette 'sc': no resolved palette was given");
    CHECK(strcmp(f.err.node_id, "sc") == 0 && f.run == NULL);
    fixture_dispose(&f);
    /* A graph whose scatter node does not feed the output needs no palette. */
    trn_recipe r;
    const char *g = "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                    "{\"id\":\"lf\",\"type\":\"landform\"},"
                    "{\"id\":\"sc\",\"type\":\"scatter_palette\",\"inputs\":{\"field\":{\"node\":"
                    "\"lf\"}}},"
                    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                    "\"lf\"}}}]}";
    CHECK(load_recipe(g, true, &r));
    trn_graph graph;
    CHECK_OK(trn_graph_parse(g, strlen(g), "g.json", &graph, NULL));
    trn_graph_run *run = NULL;
    CHECK_OK(trn_graph_evaluate(&graph, &r, NULL, &run, NULL, NULL, NULL));
    CHECK(run && trn_graph_run_instances(run) == NULL);
    trn_graph_run_free(run);
    trn_graph_dispose(&graph);
    trn_recipe_dispose(&r);
}

/* A cache folder keeps the candidates: a new cache on it reads the node from disk, bit for bit. */
static void test_cache_round_trip(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_palette pal;
    CHECK(load_palette(0.2, "grass", &pal));
    trn_graph_cache *c1 = NULL, *c2 = NULL;
    CHECK_OK(trn_graph_cache_new(dir, 0, &c1, NULL));
    CHECK_OK(trn_graph_cache_new(dir, 0, &c2, NULL));
    fixture a, b;
    fixture_run(&a, true, 5.0, true, &pal, 2, c1);
    fixture_run(&b, true, 5.0, true, &pal, 2, c2);
    CHECK_OK(a.status);
    CHECK_OK(b.status);
    CHECK(outcome_of(&a, "sc") == TRN_NODE_EVALUATED);
    CHECK(outcome_of(&b, "sc") == TRN_NODE_REUSED_DISK);
    CHECK(trn_graph_run_instances(b.run) && trn_graph_run_instances(b.run)->count > 0);
    CHECK(same_instances(trn_graph_run_instances(a.run), trn_graph_run_instances(b.run)));
    fixture_dispose(&a);
    fixture_dispose(&b);
    trn_graph_cache_free(c1);
    trn_graph_cache_free(c2);
    trn_palette_dispose(&pal);
}

/* The thread count changes nothing. */
static void test_threads(void)
{
    trn_palette pal;
    CHECK(load_palette(0.2, "rock", &pal));
    fixture f[3];
    for (int t = 0; t < 3; t++) {
        fixture_run(&f[t], true, 0.0, true, &pal, t + 1, NULL);
        CHECK_OK(f[t].status);
    }
    for (int t = 1; t < 3; t++)
        CHECK(same_instances(trn_graph_run_instances(f[0].run), trn_graph_run_instances(f[t].run)));
    for (int t = 0; t < 3; t++)
        fixture_dispose(&f[t]);
    trn_palette_dispose(&pal);
}

/* Generation with a palette and a graph whose output takes the node's instances: the
 * candidates are kept as scatter_base and the instances are their refilter on the final surface
 * (after the raise stroke), never a fresh placement; each instance stands on the edited
 * heights. */
static void test_generate_refilters(void)
{
    trn_palette pal;
    CHECK(load_palette(0.2, "grass", &pal));
    char *g = graph_text(true, 0.0);
    trn_recipe r;
    CHECK(load_recipe_with_edit(g, &r));
    free(g);
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = 2;
    o.palette = &pal;
    trn_generated gen;
    trn_error e;
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    CHECK(gen.scatter_from_graph && gen.scatter_base.count > 0);
    /* The base is the node's output on the graph's field. */
    trn_graph graph;
    CHECK_OK(trn_graph_from_recipe(&r, &graph, NULL));
    trn_graph_options go;
    memset(&go, 0, sizeof go);
    go.palette = &pal;
    trn_graph_run *run = NULL;
    CHECK_OK(trn_graph_evaluate(&graph, &r, &go, &run, NULL, NULL, NULL));
    CHECK(same_instances(trn_graph_run_instances(run), &gen.scatter_base));
    trn_graph_run_free(run);
    trn_graph_dispose(&graph);
    /* The instances: the refilter of the base against the final surface. */
    trn_generated_scatter_env env;
    CHECK_OK(trn_generated_scatter_env_init(&gen, &r, &pal, &env, NULL));
    trn_instances want = {NULL, 0};
    CHECK_OK(trn_scatter_refilter(&pal, &gen.scatter_base, &env.env, &want, NULL, NULL));
    CHECK(same_instances(&gen.instances, &want));
    trn_instances_dispose(&want);
    trn_generated_scatter_env_dispose(&env);
    CHECK(gen.instances.count <= gen.scatter_base.count);
    /* Raised instances stand on the edited surface, higher than their candidates. */
    size_t raised = 0, wrong = 0;
    for (size_t k = 0, b = 0; k < gen.instances.count; k++) {
        const trn_instance *v = &gen.instances.items[k];
        while (b < gen.scatter_base.count &&
               (gen.scatter_base.items[b].rule != v->rule ||
                gen.scatter_base.items[b].cx != v->cx || gen.scatter_base.items[b].cz != v->cz))
            b++;
        if (b == gen.scatter_base.count) {
            wrong++; /* refiltering never invents a candidate */
            break;
        }
        raised += v->y > gen.scatter_base.items[b].y + 1.0;
        wrong += fabs(v->y - trn_field_height_at(&gen.field, v->x, v->z)) > 1e-9;
    }
    CHECK_EQ_INT(wrong, 0);
    CHECK(raised > 0);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&r);

    /* The node placing nothing still means refilter: no fresh placement. */
    trn_palette none;
    CHECK(load_palette(0.2, "rock", &none));
    none.rules[0].biome_count = 0;
    none.rules[0].density = 0.0;
    g = graph_text(false, 0.0); /* no Biome Rules before the node: rock never matches */
    CHECK(load_recipe_with_edit(g, &r));
    free(g);
    o.palette = &none;
    CHECK_OK(trn_recipe_generate(&r, &o, &gen, NULL, NULL, &e));
    CHECK(gen.scatter_from_graph && gen.scatter_base.count == 0 && gen.instances.count == 0);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&r);
    trn_palette_dispose(&none);
    trn_palette_dispose(&pal);
}

int main(void)
{
    RUN(test_exact_placement);
    RUN(test_biomes_follow_rules);
    RUN(test_palette_edit_reuse);
    RUN(test_missing_palette);
    RUN(test_cache_round_trip);
    RUN(test_threads);
    RUN(test_generate_refilters);
    return trn_test_finish();
}
