/* Water in terrain graphs: the water nodes' checks, chaining, notes, refreshed coverage, caching
 * and what generation does with the published water. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/water.h"
#include "test.h"

/* A bowl: 64 x 64 cells over 256 x 256 units (4 units a cell), ground 10 m, except 0 m inside
 * the square [64, 192] x [64, 192] (a hard-edged polygon mask: its edge counts as inside), so
 * 33 x 33 = 1089 samples lie at 0 m. */
#define BOWL_NODES                                                                                 \
    "{\"id\":\"rim\",\"type\":\"flat_terrain\",\"params\":{\"height\":10}},"                       \
    "{\"id\":\"floor\",\"type\":\"flat_terrain\",\"params\":{\"height\":0}},"                      \
    "{\"id\":\"square\",\"type\":\"polygon_mask\",\"params\":{\"points\":[[64,64],[192,64],"       \
    "[192,192],[64,192]],\"falloff\":0},\"inputs\":{\"field\":{\"node\":\"rim\"}}},"               \
    "{\"id\":\"bowl\",\"type\":\"height_blend\",\"params\":{\"amount\":1},\"inputs\":{\"a\":"      \
    "{\"node\":\"rim\"},\"b\":{\"node\":\"floor\"},\"mask\":{\"node\":\"square\"}}},"

static char *recipe_text(const char *nodes, const char *output)
{
    static const char head[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":5,\"sea_level\":-50,"
        "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
        "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},"
        "\"shore\":{\"color\":[0.9,0.8,0.6,1]}},\"rules\":[{\"id\":\"near\",\"biome\":\"shore\","
        "\"priority\":1,\"water_distance\":[0,4]}],"
        "\"graph\":{\"format_version\":1,\"output\":\"%s\",\"nodes\":[%s]}}";
    const size_t n = sizeof head + strlen(nodes) + strlen(output) + 1;
    char *t = malloc(n);
    if (t) snprintf(t, n, head, output, nodes);
    return t;
}

static bool load(const char *nodes, trn_recipe *r, trn_graph *g)
{
    char *text = recipe_text(nodes, "out");
    trn_error e;
    trn_status st = text ? trn_recipe_parse(text, strlen(text), "w.json", r, NULL, &e) : 1;
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    free(text);
    if (st) return false;
    st = trn_graph_from_recipe(r, g, &e);
    if (st) {
        fprintf(stderr, "graph refused: %s\n", e.message);
        trn_recipe_dispose(r);
    }
    return st == TRN_OK;
}

static trn_graph_run *run_of(const trn_graph *g, const trn_recipe *r, int threads,
                             trn_graph_cache *cache, trn_error *e)
{
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.cache = cache;
    trn_graph_run *run = NULL;
    trn_status st = trn_graph_evaluate(g, r, &o, &run, NULL, NULL, e);
    if (st && st != TRN_ERR_VALIDATION && st != TRN_ERR_MISMATCH)
        fprintf(stderr, "evaluation failed: %s\n", e->message);
    return run;
}

static const trn_node_report *report_of(const trn_graph_run *run, const char *id)
{
    uint32_t n = 0;
    const trn_node_report *reps = trn_graph_run_report(run, &n);
    for (uint32_t k = 0; reps && k < n; k++)
        if (strcmp(reps[k].id, id) == 0) return &reps[k];
    return NULL;
}

/* The first error diagnostic of a graph's check: its check id, path and message. */
static bool first_error(const char *nodes, trn_graph_diagnostic *out)
{
    trn_recipe r;
    trn_graph g;
    if (!load(nodes, &r, &g)) return false;
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    bool found = false;
    if (trn_graph_check(&g, &r, &d, NULL) == TRN_OK)
        for (size_t k = 0; k < d.count && !found; k++)
            if (d.items[k].severity == TRN_GRAPH_ERROR) {
                *out = d.items[k];
                found = true;
            }
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    return found;
}

#define OUT_OF(field, water)                                                                       \
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"" field         \
    "\",\"pin\":\"field\"},\"water\":{\"node\":\"" water "\",\"pin\":\"water\"}}}"

#define LAKE(id, level, from, water_in)                                                            \
    "{\"id\":\"" id "\",\"type\":\"water_body\",\"params\":{\"kind\":\"lake\",\"level\":" level    \
    ",\"center\":[128,128],\"radius\":200},\"inputs\":{\"field\":{\"node\":\"" from "\"}" water_in \
    "}},"

static void expect_error(const char *nodes, const char *path, const char *part, int line)
{
    trn_graph_diagnostic d;
    memset(&d, 0, sizeof d);
    trn_test_checks++;
    if (!first_error(nodes, &d) || strcmp(d.path, path) != 0 || !strstr(d.message, part)) {
        trn_test_failures++;
        fprintf(stderr, "%s:%d: expected an error at %s mentioning \"%s\", got %s: %s\n", __FILE__,
                line, path, part, d.path, d.message);
    }
}
#define EXPECT_ERROR(nodes, path, part) expect_error(nodes, path, part, __LINE__)

static void test_checks(void)
{
    /* A self-intersecting boundary, a river without a path, a lake centre outside its boundary,
     * a colour out of range, a route holding more water than its channel, an edit that is not
     * a list: each at its parameter. */
    EXPECT_ERROR(BOWL_NODES "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"boundary\":"
                            "[[0,0],[100,100],[100,0],[0,100]]},\"inputs\":{\"field\":{\"node\":"
                            "\"bowl\"}}}," OUT_OF("l", "l"),
                 "nodes[4].params.boundary", "boundary");
    EXPECT_ERROR(BOWL_NODES
                 "{\"id\":\"r\",\"type\":\"water_body\",\"params\":{\"kind\":"
                 "\"river\"},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("r", "r"),
                 "nodes[4].params.river_path", "at least 2");
    EXPECT_ERROR(BOWL_NODES "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"center\":[10,10],"
                            "\"boundary\":[[50,50],[150,50],[150,150]]},\"inputs\":{\"field\":"
                            "{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
                 "nodes[4].params.center", "center");
    EXPECT_ERROR(BOWL_NODES
                 "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"deep_color\":"
                 "[0,0,1.5,1]},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
                 "nodes[4].params.deep_color", "deep_color[2]");
    EXPECT_ERROR(BOWL_NODES
                 "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"river_path\":"
                 "[[0,0],[1,1]]},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
                 "nodes[4].params.river_path", "[x, y, z] number triples");
    EXPECT_ERROR(BOWL_NODES
                 "{\"id\":\"d\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"bowl\"}}},"
                 "{\"id\":\"r\",\"type\":\"river_route\",\"params\":{\"channel_depth\":1,"
                 "\"water_depth\":1.5},\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":"
                 "\"drainage\"}}}," OUT_OF("r", "r"),
                 "nodes[5].params.water_depth", "at most channel_depth");
    EXPECT_ERROR(
        BOWL_NODES LAKE("l", "5", "bowl", "") "{\"id\":\"e\",\"type\":\"water_edit\","
                                              "\"params\":{\"excluded_ids\":\"l\"},"
                                              "\"inputs\":{\"field\":{\"node\":\"l\","
                                              "\"pin\":\"field\"},\"water\":{\"node\":"
                                              "\"l\",\"pin\":\"water\"}}}," OUT_OF("e", "e"),
        "nodes[5].params.excluded_ids", "expected an array");
    /* The same boundary with its closing vertex repeated is fine. */
    trn_graph_diagnostic d;
    CHECK(!first_error(BOWL_NODES
                       "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"center\":"
                       "[100,100],\"boundary\":[[50,50],[150,50],[150,150],[50,150],"
                       "[50,50]]},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
                       &d));
}

/* Level "spill" on a Water Body: checked at its parameter, the bowl filled to 0.5 m under its
 * rim whatever the radius says when none is given, a clear note when nothing can fill. */
static void test_spill_level(void)
{
    EXPECT_ERROR(BOWL_NODES LAKE("l", "\"full\"", "bowl", "") OUT_OF("l", "l"),
                 "nodes[4].params.level",
                 "level: expected a number or one of \"spill\", found "
                 "\"full\"");
    EXPECT_ERROR(
        BOWL_NODES
        "{\"id\":\"o\",\"type\":\"water_body\",\"params\":{\"kind\":\"ocean\","
        "\"level\":\"spill\"},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("o", "o"),
        "nodes[4].params.level", "\"spill\" fills a lake's basin; an ocean needs");
    EXPECT_ERROR(
        BOWL_NODES
        "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"level\":\"spill\","
        "\"spill_offset\":-1},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
        "nodes[4].params.spill_offset", "spill_offset");
    /* The word is in the cache key: a fixed level 0 evaluated first is not reused for it. */
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    static const char *const levels_text[] = {"0", "\"spill\""};
    for (int k = 0; k < 2; k++) {
        char nodes[2048];
        snprintf(
            nodes, sizeof nodes,
            BOWL_NODES
            "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"level\":%s,"
            "\"center\":[128,128]},\"inputs\":{\"field\":{\"node\":\"bowl\"}}}," OUT_OF("l", "l"),
            levels_text[k]);
        trn_recipe r;
        trn_graph g;
        if (!load(nodes, &r, &g)) continue;
        trn_error e;
        trn_graph_run *run = run_of(&g, &r, 1, cache, &e);
        const trn_water *w = trn_graph_run_water(run);
        CHECK(w && w->body_count == 1 && w->bodies[0].wet_samples == (k ? 1089u : 0u));
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    trn_graph_cache_free(cache);
    static const char *const offsets[] = {"", ",\"spill_offset\":2", ",\"spill_offset\":10"};
    static const double levels[] = {9.5, 8.0, 0.0};
    static const uint64_t wet[] = {1089, 1089, 0};
    for (int k = 0; k < 3; k++) {
        char nodes[2048];
        snprintf(nodes, sizeof nodes,
                 BOWL_NODES "{\"id\":\"l\",\"type\":\"water_body\",\"params\":{\"level\":"
                            "\"spill\",\"center\":[128,128]%s},\"inputs\":{\"field\":{\"node\":"
                            "\"bowl\"}}}," OUT_OF("l", "l"),
                 offsets[k]);
        trn_recipe r;
        trn_graph g;
        if (!load(nodes, &r, &g)) continue;
        trn_error e;
        trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
        const trn_water *w = trn_graph_run_water(run);
        CHECK(w && w->body_count == 1);
        if (w && w->body_count == 1) {
            CHECK(w->bodies[0].level_mode == TRN_LAKE_LEVEL_SPILL);
            CHECK(w->bodies[0].spill_level == 10.0 && w->bodies[0].level == levels[k]);
            CHECK_EQ_INT(w->bodies[0].wet_samples, wet[k]);
            CHECK_EQ_INT(w->bodies[0].warning_count, k == 2 ? 1 : 0);
        }
        const trn_node_report *rep = report_of(run, "l");
        CHECK(rep && (k == 2) == (strncmp(rep->note,
                                          "level spill: the basin at the centre (128, "
                                          "128) is 10.00 m deep",
                                          60) == 0));
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
}

/* The lake fills the square exactly; a second lake node chained after it keeps it (first in the
 * list) and adds its own; the Terrain Output publishes both. */
static void test_chain_and_publish(void)
{
    trn_recipe r;
    trn_graph g;
    if (!load(BOWL_NODES LAKE("pond", "5", "bowl", "")
                  LAKE("more", "7", "pond\",\"pin\":\"field",
                       ",\"water\":{\"node\":\"pond\",\"pin\":\"water\"}") OUT_OF("more", "more"),
              &r, &g))
        return;
    trn_error e;
    trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
    CHECK(run != NULL);
    const trn_water *w = trn_graph_run_water(run);
    CHECK(w && w->body_count == 2);
    if (w && w->body_count == 2) {
        CHECK(strcmp(w->bodies[0].id, "pond") == 0 && strcmp(w->bodies[1].id, "more") == 0);
        /* The earlier body owns every wet sample; the later one finds none left. */
        CHECK_EQ_INT(w->bodies[0].wet_samples, 1089);
        CHECK(w->bodies[0].area == 1089.0 * 16.0);
        CHECK(fabs(w->bodies[0].volume - 1089.0 * 5.0 * 16.0) < 1e-6);
        CHECK_EQ_INT(w->bodies[1].wet_samples, 0);
        CHECK(!w->bodies[0].carve && !w->bodies[1].carve);
    }
    /* The water pin of a node is its own value, as the run reports it. */
    trn_graph_value v;
    CHECK_OK(trn_graph_run_output(run, "pond", "water", &v, &e));
    CHECK(v.kind == TRN_PIN_WATER && v.water && v.water->body_count == 1);
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);

    /* Two bodies with one id: refused at evaluation, naming it. */
    if (!load(BOWL_NODES LAKE("pond", "5", "bowl", "") "{\"id\":\"pond2\",\"type\":\"water_body\","
                                                       "\"params\":{\"level\":3},\"inputs\":{"
                                                       "\"field\":{\"node\":\"bowl\"},\"water\":{"
                                                       "\"node\":\"pond\",\"pin\":\"water\"}}},"
                                                       "{\"id\":\"e\",\"type\":\"water_edit\","
                                                       "\"params\":{\"overrides\":[{\"id\":"
                                                       "\"nope\",\"level\":1}]},\"inputs\":{"
                                                       "\"field\":{\"node\":\"pond2\",\"pin\":"
                                                       "\"field\"},\"water\":{\"node\":\"pond2\","
                                                       "\"pin\":\"water\"}}}," OUT_OF("e", "e"),
              &r, &g))
        return;
    run = run_of(&g, &r, 1, NULL, &e);
    CHECK(run == NULL);
    CHECK_CONTAINS(e.message, "node 'e' (water_edit)");
    CHECK_CONTAINS(e.message, "nope");
    CHECK(strcmp(e.node_id, "e") == 0);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* Heights raised after the water (a Height Offset between the lake and the output): the
 * published water is the same body resolved again on the raised ground, without carving. */
static void test_refresh_downstream(void)
{
    trn_recipe r;
    trn_graph g;
    if (!load(BOWL_NODES LAKE("pond", "5", "bowl", "") "{\"id\":\"up\",\"type\":\"height_offset\","
                                                       "\"params\":{\"offset\":2},\"inputs\":{"
                                                       "\"field\":{\"node\":\"pond\",\"pin\":"
                                                       "\"field\"}}},"
                                                       "{\"id\":\"out\",\"type\":\"terrain_"
                                                       "output\",\"inputs\":{\"field\":{\"node\":"
                                                       "\"up\"},\"water\":{\"node\":\"pond\","
                                                       "\"pin\":\"water\"}}}",
              &r, &g))
        return;
    trn_error e;
    trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
    const trn_water *w = trn_graph_run_water(run);
    CHECK(w && w->body_count == 1);
    if (w && w->body_count == 1) {
        CHECK_EQ_INT(w->bodies[0].wet_samples, 1089);
        /* 3 m deep now, not 5. */
        CHECK(fabs(w->bodies[0].volume - 1089.0 * 3.0 * 16.0) < 1e-6);
        trn_graph_value v;
        CHECK_OK(trn_graph_run_terrain(run, &v, &e));
        trn_field f = {64, 64, 256.0, 256.0, (float *)v.values, 0, 0};
        CHECK(w->ground_hash == trn_water_ground_hash(&f));
        /* The lake node's own water still covers the unraised bowl. */
        trn_graph_value lv;
        CHECK_OK(trn_graph_run_output(run, "pond", "water", &lv, &e));
        CHECK(lv.water && lv.water->ground_hash != w->ground_hash);
        CHECK(lv.water && fabs(lv.water->bodies[0].volume - 1089.0 * 5.0 * 16.0) < 1e-6);
    }
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* Basin Water on the bowl: one closed basin 10 m deep. A budget of 0 keeps none and says how many
 * were eligible; an existing lake in the basin leaves it out. River Route notes its end. */
static void test_notes(void)
{
    static const char *const graphs[] = {
        BOWL_NODES
        "{\"id\":\"d\",\"type\":\"drainage\",\"params\":{\"sea\":\"off\"},\"inputs\":"
        "{\"field\":{\"node\":\"bowl\"}}},"
        "{\"id\":\"b\",\"type\":\"basin_water\",\"params\":{\"maximum_bodies\":0},"
        "\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":\"drainage\"}}}," OUT_OF("b", "b"),
        BOWL_NODES "{\"id\":\"d\",\"type\":\"drainage\",\"params\":{\"sea\":\"off\"},\"inputs\":"
                   "{\"field\":{\"node\":\"bowl\"}}},"
                   "{\"id\":\"b\",\"type\":\"basin_water\",\"inputs\":{\"drainage\":{\"node\":"
                   "\"d\",\"pin\":\"drainage\"}}}," OUT_OF("b", "b"),
        BOWL_NODES LAKE("pond", "5", "bowl", "") "{\"id\":\"d\",\"type\":\"drainage\",\"params\":"
                                                 "{\"sea\":\"off\"},\"inputs\":{\"field\":{"
                                                 "\"node\":\"pond\",\"pin\":\"field\"}}},"
                                                 "{\"id\":\"b\",\"type\":\"basin_water\","
                                                 "\"inputs\":{\"drainage\":{\"node\":\"d\","
                                                 "\"pin\":\"drainage\"},\"water\":{\"node\":"
                                                 "\"pond\",\"pin\":\"water\"}}}," OUT_OF("b", "b"),
    };
    static const uint32_t bodies[] = {0, 1, 1};
    static const char *const notes[] = {"1 basins are eligible, maximum_bodies keeps the 0 deepest",
                                        "", ""};
    for (int k = 0; k < 3; k++) {
        trn_recipe r;
        trn_graph g;
        if (!load(graphs[k], &r, &g)) continue;
        trn_error e;
        trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
        const trn_water *w = trn_graph_run_water(run);
        CHECK(w && w->body_count == bodies[k]);
        const trn_node_report *rep = report_of(run, "b");
        CHECK(rep && strcmp(rep->note, notes[k]) == 0);
        if (rep && strcmp(rep->note, notes[k]) != 0) fprintf(stderr, "note: %s\n", rep->note);
        if (k == 1 && w && w->body_count == 1) {
            /* The proposal: the sink is the lowest sample of the square (smallest index), its
             * level the spill level 10, minus nothing. */
            CHECK(strncmp(w->bodies[0].id, "b/basin/", 8) == 0);
            CHECK(w->bodies[0].level == 10.0);
        }
        if (k == 2 && w) CHECK(strcmp(w->bodies[0].id, "pond") == 0);
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }

    /* A route from the rim: its note says where it ended and the body is placed. */
    trn_recipe r;
    trn_graph g;
    if (!load(BOWL_NODES
              "{\"id\":\"d\",\"type\":\"drainage\",\"params\":{\"sea\":\"off\"},\"inputs\":"
              "{\"field\":{\"node\":\"bowl\"}}},"
              "{\"id\":\"river\",\"type\":\"river_route\",\"params\":{\"source_x\":20,\"source_z\":"
              "128},\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":\"drainage\"}}}," OUT_OF(
                  "river", "river"),
              &r, &g))
        return;
    trn_error e;
    trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
    const trn_node_report *rep = report_of(run, "river");
    /* On the level rim the drainage leads straight (sides before diagonals) to the nearest
     * border. */
    CHECK(rep && strcmp(rep->note, "field-edge at (0, 128), 6 samples") == 0);
    const trn_water *w = trn_graph_run_water(run);
    CHECK(w && w->body_count == 1 && w->bodies[0].kind == TRN_WATER_RIVER &&
          w->bodies[0].path_count == 6);
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

static uint64_t water_hash(const trn_water *w)
{
    if (!w || !w->owner) return 0;
    const size_t n = ((size_t)w->cells_x + 1u) * ((size_t)w->cells_z + 1u);
    XXH64_state_t *h = XXH64_createState();
    XXH64_reset(h, 0);
    XXH64_update(h, w->owner, n * sizeof *w->owner);
    XXH64_update(h, w->wet, n);
    XXH64_update(h, w->surface, n * sizeof *w->surface);
    XXH64_update(h, w->segment, n * sizeof *w->segment);
    for (uint32_t b = 0; b < w->body_count; b++) {
        XXH64_update(h, &w->bodies[b].volume, sizeof w->bodies[b].volume);
        XXH64_update(h, w->bodies[b].path, w->bodies[b].path_count * 3u * sizeof(double));
    }
    const uint64_t v = XXH64_digest(h);
    XXH64_freeState(h);
    return v;
}

/* A noise landscape with a river, a sea and basin lakes: the same water whatever the thread
 * count, and the same from the cache directory as computed. */
static void test_determinism_and_cache(void)
{
    static const char nodes[] =
        "{\"id\":\"land\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":40,"
        "\"feature_size\":90}},"
        "{\"id\":\"sea\",\"type\":\"water_body\",\"params\":{\"kind\":\"ocean\",\"level\":15},"
        "\"inputs\":{\"field\":{\"node\":\"land\"}}},"
        "{\"id\":\"river\",\"type\":\"water_body\",\"params\":{\"kind\":\"river\",\"river_path\":"
        "[[10,30,10],[120,20,140],[250,5,250]],\"river_path_interpolation\":\"catmull_rom\","
        "\"river_surface_mode\":\"follow_bed\",\"width\":12},\"inputs\":{\"field\":{\"node\":"
        "\"sea\",\"pin\":\"field\"},\"water\":{\"node\":\"sea\",\"pin\":\"water\"}}},"
        "{\"id\":\"d\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"river\",\"pin\":"
        "\"field\"}}},"
        "{\"id\":\"ponds\",\"type\":\"basin_water\",\"params\":{\"minimum_depth\":0.2},"
        "\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":\"drainage\"},\"water\":{\"node\":"
        "\"river\",\"pin\":\"water\"}}}," OUT_OF("ponds", "ponds");
    trn_recipe r;
    trn_graph g;
    if (!load(nodes, &r, &g)) return;
    trn_error e;
    uint64_t hashes[3] = {0};
    const int threads[3] = {1, 2, 4};
    for (int k = 0; k < 3; k++) {
        trn_graph_run *run = run_of(&g, &r, threads[k], NULL, &e);
        hashes[k] = water_hash(trn_graph_run_water(run));
        trn_graph_run_free(run);
    }
    CHECK(hashes[0] != 0 && hashes[0] == hashes[1] && hashes[1] == hashes[2]);

    char dir[512], cdir[600];
    if (trn_test_tmpdir(dir, sizeof dir)) {
        snprintf(cdir, sizeof cdir, "%s/cache", dir);
        trn_graph_cache *c1 = NULL, *c2 = NULL;
        CHECK_OK(trn_graph_cache_new(cdir, 0, &c1, NULL));
        trn_graph_run *run = run_of(&g, &r, 1, c1, &e);
        CHECK(report_of(run, "ponds") && report_of(run, "ponds")->outcome == TRN_NODE_EVALUATED);
        const trn_node_report *rep = report_of(run, "ponds");
        char note[256];
        snprintf(note, sizeof note, "%s", rep ? rep->note : "");
        trn_graph_run_free(run);
        trn_graph_cache_free(c1);
        /* Another cache on the same directory: the water nodes come from their files. */
        CHECK_OK(trn_graph_cache_new(cdir, 0, &c2, NULL));
        run = run_of(&g, &r, 1, c2, &e);
        rep = report_of(run, "ponds");
        CHECK(rep && rep->outcome == TRN_NODE_REUSED_DISK);
        CHECK(rep && strcmp(rep->note, note) == 0);
        CHECK(report_of(run, "sea") && report_of(run, "sea")->outcome == TRN_NODE_REUSED_DISK);
        CHECK(water_hash(trn_graph_run_water(run)) == hashes[0]);
        trn_graph_run_free(run);
        trn_graph_cache_free(c2);
    }
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* Generation: Biome Rules with the lake's water measures shore distances from its coverage (the
 * recipe's sea level, -50 m, infers no sea at all); without the link nothing is near water. */
static void test_generate_uses_water(void)
{
    static const char *const graphs[2] = {
        BOWL_NODES LAKE("pond", "5", "bowl", "") "{\"id\":\"bio\",\"type\":\"biome_rules\","
                                                 "\"inputs\":{\"field\":{\"node\":\"pond\","
                                                 "\"pin\":\"field\"},\"water\":{\"node\":\"pond\","
                                                 "\"pin\":\"water\"}}},"
                                                 "{\"id\":\"out\",\"type\":\"terrain_output\","
                                                 "\"inputs\":{\"field\":{\"node\":\"bio\"},"
                                                 "\"water\":{\"node\":\"pond\",\"pin\":"
                                                 "\"water\"}}}",
        BOWL_NODES LAKE("pond", "5", "bowl", "") "{\"id\":\"bio\",\"type\":\"biome_rules\","
                                                 "\"inputs\":{\"field\":{\"node\":\"pond\","
                                                 "\"pin\":\"field\"}}},"
                                                 "{\"id\":\"out\",\"type\":\"terrain_output\","
                                                 "\"inputs\":{\"field\":{\"node\":\"bio\"}}}",
    };
    for (int k = 0; k < 2; k++) {
        char *text = recipe_text(graphs[k], "out");
        trn_recipe r;
        trn_error e;
        if (!text || trn_recipe_parse(text, strlen(text), "w.json", &r, NULL, &e)) {
            free(text);
            CHECK(false);
            continue;
        }
        free(text);
        trn_generated gen;
        CHECK_OK(trn_recipe_generate(&r, NULL, &gen, NULL, NULL, &e));
        CHECK(gen.has_water == (k == 0));
        /* Sample (0, 0) is 64 units from the square; (15, 32) is one cell (4 units) outside
         * its edge at x = 64, (16, 32) on the edge, wet. */
        const size_t row = 65;
        if (k == 0) {
            CHECK(gen.water_distance[32 * row + 16] == 0.0f);
            CHECK(gen.water_distance[32 * row + 15] == 4.0f);
            CHECK(gen.water_distance[0] > 60.0f && isfinite(gen.water_distance[0]));
            CHECK(gen.biomes.values[32 * row + 15] == 1);
            CHECK(gen.biomes.values[32 * row + 14] == 0);
        } else {
            CHECK(isinf(gen.water_distance[32 * row + 16]));
            CHECK(gen.biomes.values[32 * row + 15] == 0);
        }
        trn_generated_dispose(&gen);
        trn_recipe_dispose(&r);
    }
}

static bool bits_match(const trn_water *w)
{
    if (!w || !w->wet || !w->wet_bits) return false;
    const size_t n = ((size_t)w->cells_x + 1u) * ((size_t)w->cells_z + 1u);
    for (size_t k = 0; k < n; k++)
        if (((w->wet_bits[k >> 6] >> (k & 63u)) & 1u) != (w->wet[k] != 0)) return false;
    return true;
}

/* The wet bits queries read: made by resolution, copies and decoding, equal to the wet flags,
 * and a query reads the same with and without them. */
static void test_wet_bits(void)
{
    trn_recipe r;
    trn_graph g;
    if (!load(BOWL_NODES LAKE("pond", "5", "bowl", "") OUT_OF("pond", "pond"), &r, &g)) return;
    trn_error e;
    trn_graph_run *run = run_of(&g, &r, 1, NULL, &e);
    const trn_water *w = trn_graph_run_water(run);
    CHECK(bits_match(w));
    trn_water copy, back;
    memset(&copy, 0, sizeof copy);
    memset(&back, 0, sizeof back);
    CHECK_OK(trn_water_copy(w, &copy, &e));
    CHECK(bits_match(&copy) && copy.wet_bits != w->wet_bits);
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_OK(trn_water_encode(w, &data, &size, &e));
    CHECK_OK(trn_water_decode(data, size, NULL, NULL, &back, &e));
    CHECK(bits_match(&back));
    trn_graph_value v;
    CHECK_OK(trn_graph_run_terrain(run, &v, &e));
    trn_field ground = {64, 64, 256.0, 256.0, (float *)v.values, 0, 0};
    uint64_t *bits = copy.wet_bits;
    size_t same = 0, wet = 0;
    for (int q = 0; q < 400; q++) {
        const double x = 0.37 + 0.64 * q, z = 255.5 - 0.61 * q;
        trn_water_sample a, b;
        copy.wet_bits = bits;
        const bool ha = trn_water_query(&copy, &ground, x, 1.0, z, &a);
        copy.wet_bits = NULL;
        const bool hb = trn_water_query(&copy, &ground, x, 1.0, z, &b);
        same += ha == hb && a.body == b.body && a.depth == b.depth;
        wet += ha;
    }
    copy.wet_bits = bits;
    CHECK_EQ_INT(same, 400);
    CHECK(wet > 50 && wet < 350);
    free(data);
    trn_water_dispose(&copy);
    trn_water_dispose(&back);
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_checks);
    RUN(test_spill_level);
    RUN(test_chain_and_publish);
    RUN(test_refresh_downstream);
    RUN(test_notes);
    RUN(test_determinism_and_cache);
    RUN(test_generate_uses_water);
    RUN(test_wet_bits);
    return trn_test_finish();
}
