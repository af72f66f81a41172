/* Command-line tests for terrain graphs: generate's node report, --cache reuse, --quality,
 * graph errors with file:line:column, inspect's graph section, graph types/check/starter. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "test.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* A small recipe (32 x 32 cells over 1024 world units) around a graph text. */
static char *recipe_with_graph(const char *graph)
{
    static const char *const head =
        "{\n"
        "  \"size\": [1024, 1024],\n"
        "  \"resolution\": [32, 32],\n"
        "  \"seed\": 4242,\n"
        "  \"default_landform\": \"rolling\",\n"
        "  \"landforms\": {\"rolling\": {\"base_height\": 0, \"height_variation\": 36,\n"
        "                \"feature_size\": 300, \"octaves\": 5}},\n"
        "  \"default_biome\": \"grass\",\n"
        "  \"biomes\": {\"grass\": {\"color\": [0.38, 0.6, 0.28, 1]},\n"
        "             \"bare_earth\": {\"color\": [0.5, 0.4, 0.3, 1]}},\n"
        "  \"rules\": [{\"id\": \"steep\", \"biome\": \"bare_earth\", \"priority\": 20,\n"
        "             \"slope\": [12, 90]}]";
    const size_t n = strlen(head) + (graph ? strlen(graph) : 0) + 64;
    char *s = malloc(n);
    if (!s) return NULL;
    if (graph)
        snprintf(s, n, "%s,\n  \"graph\": %s\n}\n", head, graph);
    else
        snprintf(s, n, "%s\n}\n", head);
    return s;
}

/* The valley graph of the issue, one node a line: ridged mountains with a flat valley blended
 * in along a path, drainage feeding erosion, biome rules and the output, plus a comment. */
static char *valley_graph(int iterations, const char *note, const char *erode_position)
{
    char *g = malloc(4096);
    if (!g) return NULL;
    snprintf(
        g, 4096,
        "{\n"
        "    \"format_version\": 1,\n"
        "    \"output\": \"out\",\n"
        "    \"nodes\": [\n"
        "      {\"id\": \"mountains\", \"type\": \"noise_terrain\", \"position\": [0, 0], "
        "\"params\": {\"profile\": \"ridged\", \"height_variation\": 120, \"feature_size\": "
        "400}},\n"
        "      {\"id\": \"low\", \"type\": \"flat_terrain\", \"params\": {\"height\": 5}},\n"
        "      {\"id\": \"valley\", \"type\": \"path_distance_mask\", \"inputs\": {\"field\": "
        "{\"node\": \"mountains\"}}, \"params\": {\"points\": [[0, 500], [1024, 520]], "
        "\"width\": 60, \"falloff\": 120}},\n"
        "      {\"id\": \"blend\", \"type\": \"height_blend\", \"inputs\": {\"a\": {\"node\": "
        "\"mountains\"}, \"b\": {\"node\": \"low\"}, \"mask\": {\"node\": \"valley\", \"pin\": "
        "\"mask\"}}, \"params\": {\"amount\": 1}},\n"
        "      {\"id\": \"drain\", \"type\": \"drainage\", \"inputs\": {\"field\": {\"node\": "
        "\"blend\"}}},\n"
        "      {\"id\": \"erode\", \"type\": \"erosion\", \"position\": %s, \"inputs\": "
        "{\"field\": {\"node\": \"blend\"}, \"drainage\": {\"node\": \"drain\", \"pin\": "
        "\"drainage\"}}, \"params\": {\"iterations\": %d}},\n"
        "      {\"id\": \"biomes\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
        "\"erode\", \"pin\": \"field\"}}},\n"
        "      {\"id\": \"note\", \"type\": \"comment\", \"params\": {\"text\": \"%s\"}},\n"
        "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
        "\"biomes\"}}}\n"
        "    ]\n"
        "  }",
        erode_position, iterations, note);
    return g;
}

/* The same without drainage and erosion: nothing in it depends on the quality. */
static const char *const plain_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"mountains\", \"type\": \"noise_terrain\", \"params\": {\"profile\": "
    "\"ridged\", \"height_variation\": 120, \"feature_size\": 400}},\n"
    "      {\"id\": \"lift\", \"type\": \"height_offset\", \"inputs\": {\"field\": {\"node\": "
    "\"mountains\"}}, \"params\": {\"offset\": 3}},\n"
    "      {\"id\": \"biomes\", \"type\": \"biome_rules\", \"inputs\": {\"field\": {\"node\": "
    "\"lift\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"biomes\"}}}\n"
    "    ]\n"
    "  }";

/* a and b feed each other: a cycle (and nothing else wrong). */
static const char *const cycle_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"base\", \"type\": \"flat_terrain\"},\n"
    "      {\"id\": \"a\", \"type\": \"height_offset\", \"inputs\": {\"field\": {\"node\": "
    "\"b\"}}},\n"
    "      {\"id\": \"b\", \"type\": \"height_offset\", \"inputs\": {\"field\": {\"node\": "
    "\"a\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"a\"}}}\n"
    "    ]\n"
    "  }";

/* A draft: a heightfield linked into a mask pin (kind-mismatch, an error) and a node that
 * feeds nothing (unreachable, a warning). */
static const char *const draft_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"base\", \"type\": \"flat_terrain\", \"params\": {\"height\": 7}},\n"
    "      {\"id\": \"mix\", \"type\": \"height_blend\", \"inputs\": {\"a\": {\"node\": "
    "\"base\"}, \"b\": {\"node\": \"base\"}, \"mask\": {\"node\": \"base\"}}},\n"
    "      {\"id\": \"spare\", \"type\": \"flat_terrain\"},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"mix\"}}}\n"
    "    ]\n"
    "  }";

/* Only the warning of the draft: spare feeds nothing. */
static const char *const warning_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"base\", \"type\": \"flat_terrain\", \"params\": {\"height\": 7}},\n"
    "      {\"id\": \"spare\", \"type\": \"flat_terrain\"},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"base\"}}}\n"
    "    ]\n"
    "  }";

static bool write_recipe(const char *name, const char *graph, char *path, size_t n)
{
    char *text = recipe_with_graph(graph);
    tmp_path(path, n, name);
    const bool ok = text && trn_test_write_file(path, text, strlen(text));
    free(text);
    return ok;
}

static bool write_valley(const char *name, int iterations, const char *note, const char *pos,
                         char *path, size_t n)
{
    char *g = valley_graph(iterations, note, pos);
    const bool ok = g && write_recipe(name, g, path, n);
    free(g);
    return ok;
}

/* Line and column (1-based, ASCII text) of byte offset off. */
static void position_of(const char *text, size_t off, int *line, int *column)
{
    *line = 1;
    size_t start = 0;
    for (size_t k = 0; k < off; k++)
        if (text[k] == '\n') {
            (*line)++;
            start = k + 1;
        }
    *column = (int)(off - start) + 1;
}

static json_t *parse_out(const char *out)
{
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    if (!o) fprintf(stderr, "not JSON (%s): %s\n", je.text, out ? out : "(null)");
    return o;
}

static json_t *node_of(json_t *nodes, const char *id)
{
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n)
    {
        if (strcmp(json_string_value(json_object_get(n, "id")), id) == 0) return n;
    }
    return NULL;
}

static const char *outcome_of(json_t *nodes, const char *id)
{
    const char *s = json_string_value(json_object_get(node_of(nodes, id), "outcome"));
    return s ? s : "(none)";
}

static bool is_hex16(const char *s)
{
    if (!s || strlen(s) != 16) return false;
    for (int k = 0; k < 16; k++)
        if (!strchr("0123456789abcdef", s[k])) return false;
    return true;
}

/* Run generate -q --format json and return the summary (NULL on failure). */
static json_t *generate_json(const char *recipe, const char *out, const char *extra)
{
    char *o, *e;
    const int rc =
        trn_test_run_clif("generate '%s' -o '%s' -q --format json %s", &o, &e, recipe, out, extra);
    CHECK_EQ_INT(rc, 0);
    if (rc) fprintf(stderr, "%s", e ? e : "");
    json_t *j = rc ? NULL : parse_out(o);
    free(o), free(e);
    return j;
}

static const char *const valley_ids[] = {"mountains", "low",    "valley", "blend", "drain",
                                         "erode",     "biomes", "note",   "out"};

static void test_generate_reports_nodes(void)
{
    char p[1024], r32[1024];
    CHECK(write_valley("valley.json", 1, "valley between ridges", "[0, 0]", p, sizeof p));
    tmp_path(r32, sizeof r32, "valley.r32");
    json_t *j = generate_json(p, r32, "");
    json_t *nodes = json_object_get(j, "nodes");
    CHECK_EQ_INT(json_array_size(nodes), 9);
    CHECK(strcmp(json_string_value(json_object_get(j, "quality")), "final") == 0);
    CHECK(json_is_true(json_object_get(j, "final")));
    for (size_t k = 0; k < 9 && json_array_size(nodes) == 9; k++) {
        json_t *n = json_array_get(nodes, k);
        CHECK(strcmp(json_string_value(json_object_get(n, "id")), valley_ids[k]) == 0);
        const bool note = strcmp(valley_ids[k], "note") == 0;
        CHECK(strcmp(json_string_value(json_object_get(n, "outcome")),
                     note ? "skipped" : "evaluated") == 0);
        if (note)
            CHECK(json_is_null(json_object_get(n, "key")));
        else
            CHECK(is_hex16(json_string_value(json_object_get(n, "key"))));
        CHECK(json_number_value(json_object_get(n, "cpu_seconds")) >= 0.0);
        CHECK(json_is_real(json_object_get(n, "wall_seconds")));
        CHECK(json_number_value(json_object_get(n, "cached_cpu_seconds")) == 0.0);
        CHECK((json_object_get(n, "ledger") != NULL) == (strcmp(valley_ids[k], "erode") == 0));
    }
    CHECK(strcmp(json_string_value(json_object_get(node_of(nodes, "note"), "type")), "comment") ==
          0);
    /* The erosion ledger balances: eroded = deposited + exported + suspended. */
    json_t *l = json_object_get(node_of(nodes, "erode"), "ledger");
    const double eroded = json_number_value(json_object_get(l, "eroded"));
    const double rest = json_number_value(json_object_get(l, "deposited")) +
                        json_number_value(json_object_get(l, "exported")) +
                        json_number_value(json_object_get(l, "suspended"));
    CHECK(eroded > 0.0);
    CHECK(fabs(eroded - rest) <= 1e-3 * eroded);
    CHECK(json_integer_value(json_object_get(l, "droplets")) > 0);
    CHECK(json_integer_value(json_object_get(l, "steps")) >=
          json_integer_value(json_object_get(l, "droplets")));
    json_decref(j);

    /* The file holds what the library generates from the same recipe (rows north first). */
    trn_recipe recipe;
    trn_generated gen;
    trn_error e;
    memset(&gen, 0, sizeof gen);
    CHECK_OK(trn_recipe_read(p, &recipe, NULL, &e));
    CHECK_OK(trn_recipe_generate(&recipe, NULL, &gen, NULL, NULL, &e));
    size_t n = 0;
    uint8_t *data = trn_test_read_file(r32, &n);
    const uint32_t w = 33, h = 33;
    CHECK(data && n == (size_t)w * h * 4u);
    if (data && n == (size_t)w * h * 4u && gen.field.heights) {
        bool same = true;
        for (uint32_t r = 0; r < h; r++)
            same = same && memcmp(data + (size_t)r * w * 4u,
                                  gen.field.heights + (size_t)(h - 1u - r) * w, w * 4u) == 0;
        CHECK(same);
    }
    CHECK_EQ_INT(gen.node_count, 9);
    free(data);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);

    /* Text mode: one line per node on stderr, the ledger under erosion. */
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s'", &out, &err, p, r32), 0);
    CHECK_CONTAINS(err, "graph (final quality), 9 nodes:\n");
    CHECK_CONTAINS(err, "  node mountains (noise_terrain): evaluated in ");
    CHECK_CONTAINS(err, " s CPU (");
    CHECK_CONTAINS(err, "  node note (comment): skipped (does not feed the output)\n");
    CHECK_CONTAINS(err, "  node erode (erosion): evaluated in ");
    CHECK_CONTAINS(err, "    ledger: eroded ");
    CHECK(err && !strstr(err, "PREVIEW"));
    free(out), free(err);
    /* --quiet: no report. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q", &out, &err, p, r32), 0);
    CHECK(err && err[0] == '\0');
    free(out), free(err);
    /* Bad option values. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --quality draft", &out, &err, p, r32), 2);
    CHECK_CONTAINS(err, "--quality takes 'final' or 'preview', not 'draft'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --cache '%s'", &out, &err, p, r32, r32),
                 2);
    CHECK_CONTAINS(err, "two outputs name the same file");
    free(out), free(err);
}

static void test_cache_reuse(void)
{
    char p[1024], cache[1024], a[1024], b[1024], c[1024], extra[1200];
    CHECK(write_valley("cached.json", 1, "first note", "[0, 0]", p, sizeof p));
    tmp_path(cache, sizeof cache, "cache");
    tmp_path(a, sizeof a, "cache_a.r32");
    tmp_path(b, sizeof b, "cache_b.r32");
    tmp_path(c, sizeof c, "cache_c.r32");
    snprintf(extra, sizeof extra, "--cache '%s'", cache);
    json_t *first = generate_json(p, a, extra);
    json_t *second = generate_json(p, b, extra);
    json_t *n1 = json_object_get(first, "nodes"), *n2 = json_object_get(second, "nodes");
    CHECK(strcmp(json_string_value(json_object_get(second, "cache_dir")), cache) == 0);
    for (size_t k = 0; k < 9; k++) {
        const bool note = strcmp(valley_ids[k], "note") == 0;
        CHECK(strcmp(outcome_of(n1, valley_ids[k]), note ? "skipped" : "evaluated") == 0);
        CHECK(strcmp(outcome_of(n2, valley_ids[k]), note ? "skipped" : "reused-disk") == 0);
        json_t *x = node_of(n1, valley_ids[k]), *y = node_of(n2, valley_ids[k]);
        /* Same keys; a reused node costs nothing now and reports what it had cost. */
        CHECK(json_equal(json_object_get(x, "key"), json_object_get(y, "key")));
        CHECK(json_number_value(json_object_get(y, "cpu_seconds")) == 0.0);
        CHECK(fabs(json_number_value(json_object_get(y, "cached_cpu_seconds")) -
                   json_number_value(json_object_get(x, "cpu_seconds"))) < 1e-9);
    }
    /* A reused erosion result keeps its ledger. */
    CHECK(json_equal(json_object_get(node_of(n1, "erode"), "ledger"),
                     json_object_get(node_of(n2, "erode"), "ledger")));
    CHECK(trn_test_same_bytes(a, b));
    /* The files are there, named by key. */
    char f[1400];
    snprintf(f, sizeof f, "%s/%s.tnc", cache,
             json_string_value(json_object_get(node_of(n1, "erode"), "key")));
    CHECK(trn_test_exists(f));

    /* A comment's text and a position change nothing: every node is reused. */
    CHECK(write_valley("cached.json", 1, "another note", "[300, 40]", p, sizeof p));
    json_t *third = generate_json(p, c, extra);
    json_t *n3 = json_object_get(third, "nodes");
    for (size_t k = 0; k < 9; k++)
        if (strcmp(valley_ids[k], "note") != 0)
            CHECK(strcmp(outcome_of(n3, valley_ids[k]), "reused-disk") == 0);
    CHECK(trn_test_same_bytes(a, c));
    json_decref(third);

    /* A downstream parameter: erosion and what follows it are evaluated, the rest reused. */
    CHECK(write_valley("cached.json", 2, "another note", "[300, 40]", p, sizeof p));
    third = generate_json(p, c, extra);
    n3 = json_object_get(third, "nodes");
    static const char *const reused[] = {"mountains", "low", "valley", "blend", "drain"};
    static const char *const fresh[] = {"erode", "biomes", "out"};
    for (size_t k = 0; k < 5; k++) {
        CHECK(strcmp(outcome_of(n3, reused[k]), "reused-disk") == 0);
        CHECK(json_equal(json_object_get(node_of(n3, reused[k]), "key"),
                         json_object_get(node_of(n1, reused[k]), "key")));
    }
    for (size_t k = 0; k < 3; k++) {
        CHECK(strcmp(outcome_of(n3, fresh[k]), "evaluated") == 0);
        CHECK(!json_equal(json_object_get(node_of(n3, fresh[k]), "key"),
                          json_object_get(node_of(n1, fresh[k]), "key")));
    }
    CHECK(strcmp(outcome_of(n3, "note"), "skipped") == 0);
    CHECK(json_integer_value(
              json_object_get(json_object_get(node_of(n3, "erode"), "ledger"), "droplets")) ==
          2 * json_integer_value(
                  json_object_get(json_object_get(node_of(n1, "erode"), "ledger"), "droplets")));
    CHECK(!trn_test_same_bytes(a, c));
    json_decref(third);
    json_decref(first);
    json_decref(second);

    /* Text mode says it in words. */
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' %s", &out, &err, p, c, extra), 0);
    CHECK_CONTAINS(err, "  node erode (erosion): reused from disk (cost ");
    CHECK_CONTAINS(err, "  node mountains (noise_terrain): reused from disk (cost ");
    free(out), free(err);
}

/* Without --cache, results go to the platform cache directory (XDG_CACHE_HOME), which a later
 * run reuses; TERRANE_CACHE=off and --no-cache keep nothing; inspect reads the same folder. */
static void test_default_cache(void)
{
    char p[1024], xdg[1024], nodes[1100], a[1024], b[1024];
    CHECK(write_valley("default_cache.json", 1, "note", "[0, 0]", p, sizeof p));
    tmp_path(xdg, sizeof xdg, "xdg");
    tmp_path(a, sizeof a, "dc_a.r32");
    tmp_path(b, sizeof b, "dc_b.r32");
    snprintf(nodes, sizeof nodes, "%s/terrane/nodes", xdg);
    setenv("XDG_CACHE_HOME", xdg, 1);
    unsetenv("TERRANE_CACHE");
    json_t *first = generate_json(p, a, "");
    json_t *second = generate_json(p, b, "");
    CHECK(strcmp(json_string_value(json_object_get(first, "cache_dir")), nodes) == 0);
    CHECK(strcmp(outcome_of(json_object_get(first, "nodes"), "erode"), "evaluated") == 0);
    CHECK(strcmp(outcome_of(json_object_get(second, "nodes"), "erode"), "reused-disk") == 0);
    CHECK(trn_test_same_bytes(a, b));
    char f[1400];
    snprintf(f, sizeof f, "%s/%s.tnc", nodes,
             json_string_value(json_object_get(node_of(json_object_get(first, "nodes"), "erode"),
                                               "key")));
    CHECK(trn_test_exists(f));
    /* inspect says what the folder holds. */
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s' --format json -q", &out, &err, p), 0);
    CHECK_CONTAINS(out, "\"cached\": true");
    free(out), free(err);
    /* Off for every verb, or for one run. */
    json_t *third = generate_json(p, b, "--no-cache");
    CHECK(strcmp(outcome_of(json_object_get(third, "nodes"), "erode"), "evaluated") == 0);
    CHECK(json_object_get(third, "cache_dir") == NULL);
    setenv("TERRANE_CACHE", "off", 1);
    json_t *fourth = generate_json(p, b, "");
    CHECK(strcmp(outcome_of(json_object_get(fourth, "nodes"), "erode"), "evaluated") == 0);
    CHECK(trn_test_same_bytes(a, b));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --no-cache --cache '%s'", &out, &err, p,
                                   b, xdg),
                 2);
    CHECK_CONTAINS(err, "--cache and --no-cache exclude each other");
    free(out), free(err);
    json_decref(first), json_decref(second), json_decref(third), json_decref(fourth);
}

static void test_quality(void)
{
    char p[1024], q[1024], cache[1024], fin[1024], pre[1024], extra[1200];
    CHECK(write_valley("quality.json", 1, "q", "[0, 0]", p, sizeof p));
    tmp_path(fin, sizeof fin, "final.r32");
    tmp_path(pre, sizeof pre, "preview.r32");
    tmp_path(cache, sizeof cache, "qcache");
    snprintf(extra, sizeof extra, "--quality preview --cache '%s'", cache);
    json_t *jp = generate_json(p, pre, extra);
    CHECK(strcmp(json_string_value(json_object_get(jp, "quality")), "preview") == 0);
    CHECK(json_is_false(json_object_get(jp, "final")));
    /* Preview results never stand in for final ones: erosion is evaluated again. */
    snprintf(extra, sizeof extra, "--cache '%s'", cache);
    json_t *jf = generate_json(p, fin, extra);
    json_t *np = json_object_get(jp, "nodes"), *nf = json_object_get(jf, "nodes");
    CHECK(strcmp(outcome_of(nf, "erode"), "evaluated") == 0);
    CHECK(strcmp(outcome_of(nf, "biomes"), "evaluated") == 0);
    CHECK(!json_equal(json_object_get(node_of(np, "erode"), "key"),
                      json_object_get(node_of(nf, "erode"), "key")));
    /* Quality-independent nodes share keys. */
    CHECK(json_equal(json_object_get(node_of(np, "drain"), "key"),
                     json_object_get(node_of(nf, "drain"), "key")));
    /* Fewer droplet steps in the preview. */
    CHECK(json_integer_value(
              json_object_get(json_object_get(node_of(np, "erode"), "ledger"), "steps")) <
          json_integer_value(
              json_object_get(json_object_get(node_of(nf, "erode"), "ledger"), "steps")));
    CHECK(!trn_test_same_bytes(fin, pre));
    json_decref(jp);
    json_decref(jf);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --quality preview", &out, &err, p, pre),
                 0);
    CHECK_CONTAINS(err, "graph (preview quality), 9 nodes:");
    CHECK_CONTAINS(err, "quality: PREVIEW (");
    CHECK_CONTAINS(err, "not a final result");
    free(out), free(err);

    /* Without erosion the two qualities give the same bytes. */
    CHECK(write_recipe("plain.json", plain_graph, q, sizeof q));
    jf = generate_json(q, fin, "");
    jp = generate_json(q, pre, "--quality preview");
    CHECK(trn_test_same_bytes(fin, pre));
    CHECK_EQ_INT(json_array_size(json_object_get(jp, "nodes")), 4);
    /* No node depends on the quality here: the same keys. */
    CHECK(json_equal(json_object_get(json_array_get(json_object_get(jf, "nodes"), 1), "key"),
                     json_object_get(json_array_get(json_object_get(jp, "nodes"), 1), "key")));
    CHECK(json_is_string(json_object_get(json_array_get(json_object_get(jp, "nodes"), 1), "key")));
    json_decref(jp);
    json_decref(jf);
}

/* The position check: offset points into text at c and line/column agree with it. */
static void check_located(const char *text, json_t *d, char c)
{
    const json_int_t off = json_integer_value(json_object_get(d, "offset"));
    CHECK(off > 0 && (size_t)off < strlen(text));
    if (!(off > 0 && (size_t)off < strlen(text))) return;
    CHECK(text[off] == c);
    int line, column;
    position_of(text, (size_t)off, &line, &column);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "line")), line);
    CHECK_EQ_INT(json_integer_value(json_object_get(d, "column")), column);
}

static void test_graph_errors(void)
{
    char p[1024], png[1024];
    CHECK(write_recipe("cycle.json", cycle_graph, p, sizeof p));
    tmp_path(png, sizeof png, "cycle.png");
    char *text = recipe_with_graph(cycle_graph);
    char *out, *err;
    /* graph check finds the cycle, on a or b, at that node's inputs. */
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s' --format json", &out, &err, p), 1);
    json_t *j = parse_out(out);
    free(out), free(err);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "error_count")), 1);
    json_t *d = json_array_get(json_object_get(j, "diagnostics"), 0);
    const char *node = json_string_value(json_object_get(d, "node"));
    CHECK(strcmp(json_string_value(json_object_get(d, "check")), "cycle") == 0);
    CHECK(node && (strcmp(node, "a") == 0 || strcmp(node, "b") == 0));
    char want[1400];
    if (node && text) {
        /* The located '{' is on that node's line, at its "inputs" value. */
        char id[64];
        snprintf(id, sizeof id, "{\"id\": \"%s\"", node);
        const char *at = strstr(text, id);
        const char *inputs = at ? strstr(at, "\"inputs\": ") : NULL;
        CHECK(inputs != NULL);
        if (inputs) {
            const size_t off = (size_t)(inputs + 10 - text);
            CHECK_EQ_INT(json_integer_value(json_object_get(d, "offset")), (json_int_t)off);
            check_located(text, d, '{');
            int line, column;
            position_of(text, off, &line, &column);
            /* generate refuses with the same place and names the node. */
            CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s'", &out, &err, p, png), 1);
            snprintf(want, sizeof want,
                     "terrane generate: error: %s:%d:%d: the graph cannot be "
                     "generated: node '%s' (height_offset): ",
                     p, line, column, node);
            CHECK_CONTAINS(err, want);
            snprintf(want, sizeof want, "[cycle, node '%s']", node);
            CHECK_CONTAINS(err, want);
            CHECK(!trn_test_exists(png));
            free(out), free(err);
        }
    }
    json_decref(j);
    free(text);
    /* Text form of check. */
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s'", &out, &err, p), 1);
    CHECK_CONTAINS(out, ": error: node '");
    CHECK_CONTAINS(out, "[cycle]\n");
    CHECK_CONTAINS(out, "4 nodes, 1 error, 0 warnings: generate will refuse it\n");
    free(out), free(err);
}

/* A node that fails while generating (its river source lies outside the field) is shown at its
 * own place in the recipe, named once; two check errors add the hint on a line of its own. */
static const char *const route_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"base\", \"type\": \"noise_terrain\"},\n"
    "      {\"id\": \"flow\", \"type\": \"drainage\", \"inputs\": {\"field\": {\"node\": "
    "\"base\"}}},\n"
    "      {\"id\": \"river\", \"type\": \"river_route\", \"params\": {\"source_x\": 99999},\n"
    "       \"inputs\": {\"drainage\": {\"node\": \"flow\", \"pin\": \"drainage\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"river\", \"pin\": \"field\"}}}\n"
    "    ]\n"
    "  }";

static void test_node_error_located(void)
{
    char p[1024], png[1024], want[1400];
    CHECK(write_recipe("route.json", route_graph, p, sizeof p));
    tmp_path(png, sizeof png, "route.png");
    char *text = recipe_with_graph(route_graph);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q", &out, &err, p, png), 1);
    /* The source outside the terrain is the graph check's: at the parameter's value. */
    const char *at = text ? strstr(text, "99999") : NULL;
    CHECK(at != NULL);
    if (at) {
        int line, column;
        position_of(text, (size_t)(at - text), &line, &column);
        snprintf(want, sizeof want,
                 "terrane generate: error: %s:%d:%d: the graph cannot be generated: node 'river' "
                 "(river_route): source: expected a point inside the field",
                 p, line, column);
        CHECK_CONTAINS(err, want);
    }
    CHECK(strstr(err, "node 'river': node 'river'") == NULL);
    CHECK(!trn_test_exists(png));
    free(out), free(err);
    /* JSON names the same place. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q --format json", &out, &err, p, png),
                 1);
    json_t *j = parse_out(out);
    json_t *e = json_object_get(j, "error");
    CHECK(json_integer_value(json_object_get(e, "line")) > 0);
    const char *node = json_string_value(json_object_get(e, "node"));
    CHECK(node && strcmp(node, "river") == 0);
    json_decref(j);
    free(out), free(err);
    free(text);
    /* Two check errors: the count is its own line, no escaped newline. */
    char *g2 = malloc(strlen(route_graph) + 96);
    if (!g2) return;
    const char *cut = strstr(route_graph, "\"noise_terrain\"}");
    CHECK(cut != NULL);
    if (cut) {
        snprintf(g2, strlen(route_graph) + 96,
                 "%.*s\"noise_terrain\", \"params\": {\"octaves\": 0, "
                 "\"frob\": 1}}%s",
                 (int)(cut - route_graph), route_graph, cut + strlen("\"noise_terrain\"}"));
        CHECK(write_recipe("route2.json", g2, p, sizeof p));
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s'", &out, &err, p, png), 1);
        snprintf(want, sizeof want,
                 "\n(the graph has 3 errors; 'terrane graph check %s' lists them all)\n", p);
        CHECK_CONTAINS(err, want);
        CHECK(strstr(err, "\\n") == NULL);
        free(out), free(err);
        /* One out-of-range parameter is one error, reported once in one wording. */
        const char *octaves = strstr(g2, "\"octaves\": 0");
        char *g3 = strdup(g2);
        CHECK(octaves && g3);
        if (octaves && g3) {
            /* drop the unknown key; the route's own fault stays, so count the octaves lines */
            char *frob = strstr(g3, ", \"frob\": 1");
            const size_t cut_len = strlen(", \"frob\": 1");
            if (frob) memmove(frob, frob + cut_len, strlen(frob + cut_len) + 1);
            CHECK(write_recipe("route3.json", g3, p, sizeof p));
            CHECK_EQ_INT(trn_test_run_clif("graph check '%s'", &out, &err, p), 1);
            size_t n = 0;
            for (const char *q = out; q && (q = strstr(q, "octaves")); q++)
                n++;
            CHECK_EQ_INT(n, 1);
            free(out), free(err);
        }
        free(g3);
    }
    free(g2);
}

/* A Water Edit whose override names no input body: found while the node runs, and shown at the
 * value inside the node (the id), not at the node's object. */
static const char *const edit_graph =
    "{\n"
    "    \"format_version\": 1,\n"
    "    \"output\": \"out\",\n"
    "    \"nodes\": [\n"
    "      {\"id\": \"base\", \"type\": \"flat_terrain\", \"params\": {\"height\": 0}},\n"
    "      {\"id\": \"lake\", \"type\": \"water_body\", \"params\": {\"kind\": \"lake\", "
    "\"level\": 5, \"center\": [64, 64], \"radius\": 20},\n"
    "       \"inputs\": {\"field\": {\"node\": \"base\"}}},\n"
    "      {\"id\": \"edit\", \"type\": \"water_edit\",\n"
    "       \"params\": {\"overrides\": [{\"id\": \"nope\", \"radius\": 3}]},\n"
    "       \"inputs\": {\"field\": {\"node\": \"lake\", \"pin\": \"field\"}, \"water\": "
    "{\"node\": \"lake\", \"pin\": \"water\"}}},\n"
    "      {\"id\": \"out\", \"type\": \"terrain_output\", \"inputs\": {\"field\": {\"node\": "
    "\"edit\", \"pin\": \"field\"}}}\n"
    "    ]\n"
    "  }";

static void test_node_value_located(void)
{
    char p[1024], png[1024], want[1400];
    CHECK(write_recipe("edit.json", edit_graph, p, sizeof p));
    tmp_path(png, sizeof png, "edit.png");
    char *text = recipe_with_graph(edit_graph);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q", &out, &err, p, png), 1);
    const char *at = text ? strstr(text, "\"nope\"") : NULL;
    CHECK(at != NULL);
    if (at) {
        int line, column;
        position_of(text, (size_t)(at - text), &line, &column);
        snprintf(want, sizeof want,
                 "terrane generate: error: %s:%d:%d: node 'edit' (water_edit): water edit: "
                 "overrides[0].id: expected the id of an input water body, found \"nope\"",
                 p, line, column);
        CHECK_CONTAINS(err, want);
    }
    free(out), free(err);
    /* A misspelt field: the graph check's, at the key. */
    char *g2 = malloc(strlen(edit_graph) + 8);
    if (g2) {
        snprintf(g2, strlen(edit_graph) + 8, "%s", edit_graph);
        char *id = strstr(g2, "\"nope\"");
        char *radius = strstr(g2, "\"radius\": 3");
        if (id) memcpy(id, "\"lake\"", 6);
        if (radius) memcpy(radius, "\"radios\"", 8);
        CHECK(write_recipe("edit2.json", g2, p, sizeof p));
        char *t2 = recipe_with_graph(g2);
        const char *key = t2 ? strstr(t2, "\"radios\"") : NULL;
        CHECK(key != NULL);
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' -q", &out, &err, p, png), 1);
        if (key) {
            int line, column;
            position_of(t2, (size_t)(key - t2), &line, &column);
            snprintf(
                want, sizeof want,
                "%s:%d:%d: the graph cannot be generated: node 'edit' (water_edit): unknown key "
                "'radios' in overrides[0]; did you mean 'radius'?",
                p, line, column);
            CHECK_CONTAINS(err, want);
        }
        free(out), free(err);
        free(t2);
    }
    free(g2);
    CHECK(!trn_test_exists(png));
    free(text);
}

static void test_inspect_graph(void)
{
    char p[1024], cache[1024], r32[1024], want[1400];
    /* The draft: kind mismatch at mix.inputs.mask, spare unreachable. */
    CHECK(write_recipe("draft.json", draft_graph, p, sizeof p));
    char *text = recipe_with_graph(draft_graph);
    const char *mask = text ? strstr(text, "\"mask\": {\"node\": \"base\"}") : NULL;
    const char *spare = text ? strstr(text, "{\"id\": \"spare\"") : NULL;
    CHECK(mask && spare);
    int ml = 0, mc = 0, sl = 0, sc = 0;
    if (mask) position_of(text, (size_t)(mask + 8 - text), &ml, &mc);
    if (spare) position_of(text, (size_t)(spare - text), &sl, &sc);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s'", &out, &err, p), 0);
    CHECK_CONTAINS(out, "\ngraph (recipe.graph, 4 nodes), output out:\n");
    CHECK_CONTAINS(out, "  mix (height_blend)\n    a <- base.field\n    b <- base.field\n"
                        "    mask <- base.field\n");
    CHECK_CONTAINS(out, "  base (flat_terrain)\n    height = 7\n");
    CHECK_CONTAINS(out, "  out (terrain_output) [output]\n    field <- mix.field\n");
    snprintf(want, sizeof want, "    %s:%d:%d: error: node 'mix' (height_blend): ", p, ml, mc);
    CHECK_CONTAINS(out, want);
    CHECK_CONTAINS(out, "[kind-mismatch]\n");
    CHECK_CONTAINS(out, "[unreachable]\n");
    CHECK_CONTAINS(out, "the graph has 1 error; generate will refuse it");
    CHECK(out && !strstr(out, "  key "));
    CHECK_CONTAINS(err, "the graph has 1 error; generate will refuse it");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s' --format json -q", &out, &err, p), 0);
    json_t *j = parse_out(out);
    json_t *g = json_object_get(j, "graph");
    CHECK_EQ_INT(json_integer_value(json_object_get(g, "error_count")), 1);
    CHECK_EQ_INT(json_integer_value(json_object_get(g, "warning_count")), 1);
    CHECK(strcmp(json_string_value(json_object_get(g, "output")), "out") == 0);
    CHECK(json_is_null(json_object_get(g, "keys_quality")));
    json_t *diags = json_object_get(g, "diagnostics");
    CHECK_EQ_INT(json_array_size(diags), 2);
    size_t i;
    json_t *d;
    json_array_foreach(diags, i, d)
    {
        const char *check = json_string_value(json_object_get(d, "check"));
        if (check && strcmp(check, "kind-mismatch") == 0) {
            CHECK(strcmp(json_string_value(json_object_get(d, "severity")), "error") == 0);
            CHECK(strcmp(json_string_value(json_object_get(d, "node")), "mix") == 0);
            CHECK(strcmp(json_string_value(json_object_get(d, "pin")), "mask") == 0);
            CHECK_EQ_INT(json_integer_value(json_object_get(d, "line")), ml);
            CHECK_EQ_INT(json_integer_value(json_object_get(d, "column")), mc);
            if (text) check_located(text, d, '{');
        } else {
            CHECK(check && strcmp(check, "unreachable") == 0);
            CHECK(strcmp(json_string_value(json_object_get(d, "severity")), "warning") == 0);
            CHECK(strcmp(json_string_value(json_object_get(d, "node")), "spare") == 0);
            CHECK_EQ_INT(json_integer_value(json_object_get(d, "line")), sl);
        }
    }
    json_t *mixn = json_array_get(json_object_get(g, "nodes"), 1);
    CHECK(strcmp(json_string_value(json_object_get(mixn, "id")), "mix") == 0);
    CHECK_EQ_INT(json_array_size(json_object_get(mixn, "inputs")), 3);
    CHECK_EQ_INT(json_object_size(json_object_get(mixn, "params")), 0);
    json_decref(j);
    free(out), free(err);
    free(text);

    /* A valid graph: keys (the library's), then what a cache directory holds. */
    CHECK(write_valley("inspected.json", 1, "n", "[0, 0]", p, sizeof p));
    tmp_path(cache, sizeof cache, "icache");
    tmp_path(r32, sizeof r32, "inspected.r32");
    trn_recipe recipe;
    trn_graph graph;
    trn_error e;
    uint64_t keys[9] = {0};
    CHECK_OK(trn_recipe_read(p, &recipe, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&recipe, &graph, &e));
    CHECK_OK(trn_graph_keys(&graph, &recipe, TRN_EROSION_FINAL, keys, &e));
    trn_graph_dispose(&graph);
    trn_recipe_dispose(&recipe);
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s' --format json --cache '%s'", &out, &err, p, cache),
                 0);
    CHECK_CONTAINS(err, "does not exist: nothing is cached there yet");
    CHECK(!trn_test_exists(cache)); /* inspect only reads */
    j = parse_out(out);
    g = json_object_get(j, "graph");
    CHECK(strcmp(json_string_value(json_object_get(g, "keys_quality")), "final") == 0);
    json_t *nodes = json_object_get(g, "nodes");
    CHECK_EQ_INT(json_array_size(nodes), 9);
    for (size_t k = 0; k < 9; k++) {
        json_t *n = json_array_get(nodes, k);
        char hex[17];
        snprintf(hex, sizeof hex, "%016" PRIx64, keys[k]);
        if (keys[k])
            CHECK(strcmp(json_string_value(json_object_get(n, "key")), hex) == 0);
        else
            CHECK(json_is_null(json_object_get(n, "key")));
        CHECK(json_is_false(json_object_get(n, "cached")));
    }
    CHECK(json_is_null(json_object_get(node_of(nodes, "note"), "key")));
    json_t *valley = node_of(nodes, "valley");
    CHECK(json_number_value(json_object_get(json_object_get(valley, "params"), "width")) == 60.0);
    CHECK_EQ_INT(json_array_size(json_object_get(json_object_get(valley, "params"), "points")), 2);
    json_decref(j);
    free(out), free(err);

    char extra[1200];
    snprintf(extra, sizeof extra, "--cache '%s'", cache);
    json_t *gen = generate_json(p, r32, extra);
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s' --format json --cache '%s'", &out, &err, p, cache),
                 0);
    j = parse_out(out);
    nodes = json_object_get(json_object_get(j, "graph"), "nodes");
    for (size_t k = 0; k < 9; k++) {
        json_t *n = json_array_get(nodes, k);
        json_t *gn = json_array_get(json_object_get(gen, "nodes"), k);
        CHECK(json_is_true(json_object_get(n, "cached")) == (keys[k] != 0));
        if (keys[k])
            CHECK(fabs(json_number_value(json_object_get(n, "cached_cpu_seconds")) -
                       json_number_value(json_object_get(gn, "cpu_seconds"))) < 1e-9);
    }
    json_decref(j);
    json_decref(gen);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s' --cache '%s'", &out, &err, p, cache), 0);
    CHECK_CONTAINS(out, "  erode (erosion)  key ");
    /* iterations 1 is the default: not listed. */
    CHECK_CONTAINS(out, "    drainage <- drain.drainage\n    field <- blend.field\n"
                        "    cached (cost ");
    CHECK_CONTAINS(out, "  note (comment)\n    text = \"n\"\n    never evaluated");
    CHECK_CONTAINS(out, "no errors, 0 warnings; the keys are the node cache keys at final");
    free(out), free(err);

    /* A recipe without a graph: the implicit one. */
    CHECK(write_recipe("nograph.json", NULL, p, sizeof p));
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s'", &out, &err, p), 0);
    CHECK_CONTAINS(out, "\ngraph (implicit: the recipe has none, 3 nodes), output output:\n");
    CHECK_CONTAINS(out, "  landform (landform)  key ");
    free(out), free(err);
}

/* Diagnostics of a Terrain asset document are located inside "recipe". */
static void test_asset_document(void)
{
    char p[1024], q[1024];
    CHECK(write_recipe("draft2.json", draft_graph, p, sizeof p));
    trn_recipe recipe;
    trn_error e;
    CHECK_OK(trn_recipe_read(p, &recipe, NULL, &e));
    tmp_path(q, sizeof q, "draft.terrain.json");
    CHECK_OK(trn_terrain_asset_write(q, "asset://terrain/draft", &recipe, NULL));
    trn_recipe_dispose(&recipe);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(q, &n);
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s' --format json", &out, &err, q), 1);
    json_t *j = parse_out(out);
    CHECK(strcmp(json_string_value(json_object_get(j, "input_format")), "terrain_asset") == 0);
    json_t *d = json_array_get(json_object_get(j, "diagnostics"), 0);
    CHECK(strcmp(json_string_value(json_object_get(d, "check")), "kind-mismatch") == 0);
    char *tz = text ? realloc(text, n + 1) : NULL;
    if (tz) {
        text = tz;
        text[n] = '\0';
        const char *mask = strstr(text, "\"mask\"");
        CHECK(mask != NULL);
        if (mask) CHECK(json_integer_value(json_object_get(d, "offset")) > mask - text);
        check_located(text, d, '{');
    }
    json_decref(j);
    free(out), free(err);
    free(text);
}

static void test_graph_check_and_types(void)
{
    char p[1024];
    char *out, *err;
    CHECK(write_recipe("warn.json", warning_graph, p, sizeof p));
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s'", &out, &err, p), 0);
    CHECK_CONTAINS(out, ": warning: node 'spare' (flat_terrain): ");
    CHECK_CONTAINS(out, "3 nodes, 0 errors, 1 warning: ready to generate\n");
    free(out), free(err);
    CHECK(write_valley("checked.json", 1, "n", "[0, 0]", p, sizeof p));
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s' --format json", &out, &err, p), 0);
    json_t *j = parse_out(out);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "node_count")), 9);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "diagnostics")), 0);
    CHECK(strcmp(json_string_value(json_object_get(j, "graph")), "explicit") == 0);
    json_decref(j);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s/missing.json'", &out, &err, tmp), 1);
    CHECK_CONTAINS(err, "missing.json");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("graph check", &out, &err), 2);
    CHECK_CONTAINS(err, "'graph check' needs a recipe");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("graph frob", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown graph command 'frob'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("--help", &out, &err), 0);
    CHECK_CONTAINS(out, "  graph ");
    free(out), free(err);

    /* types: all 24, as the registry has them. */
    CHECK_EQ_INT(trn_node_type_count(), 24);
    CHECK_EQ_INT(trn_test_run_clif("graph types", &out, &err), 0);
    CHECK_CONTAINS(out, "24 node types (graph format_version 1):\n");
    for (uint32_t k = 0; k < trn_node_type_count(); k++) {
        char line[200];
        const trn_node_type *t = trn_node_type_at(k);
        snprintf(line, sizeof line, "\n%s \"%s\" [%s, version %u", t->name, t->title, t->category,
                 t->version);
        CHECK_CONTAINS(out, line);
    }
    CHECK_CONTAINS(out, "    drainage       drainage    optional  ");
    CHECK_CONTAINS(out, "      octaves              integer  default 5, range [1, 16]\n");
    CHECK_CONTAINS(out, "      profile              choice   default fbm, one of fbm|ridged\n");
    CHECK_CONTAINS(out, "      shallow_color        vector   default [0.1,0.45,0.5,0.35], 4 numbers in "
                        "[0, 1]\n");
    /* A vector without a default says it is optional, not "default []". */
    CHECK_CONTAINS(out, "      pixel_window         vector   optional, 4 numbers in [0, 65535]\n");
    CHECK_CONTAINS(out, "      river_path           points3  optional, at least 2 points\n");
    CHECK_CONTAINS(out, "      overrides            json     default \"[]\"\n");
    /* A number that also takes a word says so. */
    CHECK_CONTAINS(out, "      level                number   default 0, range [-1000000000, "
                        "1000000000], or spill\n");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("graph types --format json", &out, &err), 0);
    j = parse_out(out);
    CHECK_EQ_INT(json_array_size(j), 24);
    for (uint32_t k = 0; k < trn_node_type_count() && k < json_array_size(j); k++) {
        const trn_node_type *t = trn_node_type_at(k);
        json_t *o = json_array_get(j, k);
        CHECK(strcmp(json_string_value(json_object_get(o, "name")), t->name) == 0);
        CHECK(strcmp(json_string_value(json_object_get(o, "category")), t->category) == 0);
        CHECK_EQ_INT(json_array_size(json_object_get(o, "inputs")), t->input_count);
        CHECK_EQ_INT(json_array_size(json_object_get(o, "outputs")), t->output_count);
        CHECK_EQ_INT(json_array_size(json_object_get(o, "params")), t->param_count);
        for (uint32_t i = 0; i < t->input_count; i++) {
            json_t *pin = json_array_get(json_object_get(o, "inputs"), i);
            CHECK(strcmp(json_string_value(json_object_get(pin, "kind")),
                         trn_pin_kind_name(t->inputs[i].kind)) == 0);
            CHECK(json_is_true(json_object_get(pin, "required")) == t->inputs[i].required);
        }
    }
    json_t *erosion = NULL;
    size_t i;
    json_t *o;
    json_array_foreach(j, i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "name")), "erosion") == 0) erosion = o;
    }
    CHECK(json_is_true(json_object_get(erosion, "quality_dependent")));
    json_t *lifetime = json_array_get(json_object_get(erosion, "params"), 3);
    CHECK(strcmp(json_string_value(json_object_get(lifetime, "name")), "lifetime") == 0);
    CHECK(json_number_value(json_object_get(lifetime, "default")) == 30.0);
    CHECK(json_number_value(json_object_get(lifetime, "min")) == 1.0);
    CHECK(json_number_value(json_object_get(lifetime, "max")) == 512.0);
    CHECK(json_object_get(lifetime, "keywords") == NULL);
    json_t *body = NULL;
    json_array_foreach(j, i, o)
    {
        if (strcmp(json_string_value(json_object_get(o, "name")), "water_body") == 0) body = o;
    }
    json_t *level = json_array_get(json_object_get(body, "params"), 1);
    CHECK(strcmp(json_string_value(json_object_get(level, "name")), "level") == 0);
    json_t *words = json_object_get(level, "keywords");
    CHECK(json_array_size(words) == 1 &&
          strcmp(json_string_value(json_array_get(words, 0)), "spill") == 0);
    json_decref(j);
    free(out), free(err);
}

static void test_starter(void)
{
    char *out, *err, p[1024], png[1024];
    CHECK_EQ_INT(trn_test_run_clif("graph starter", &out, &err), 0);
    trn_graph g;
    trn_error e;
    memset(&g, 0, sizeof g);
    CHECK_OK(trn_graph_parse(out ? out : "", out ? strlen(out) : 0, "starter", &g, &e));
    static const char *const types[] = {"noise_terrain", "erosion", "biome_rules", "terrain_output",
                                        "comment"};
    CHECK_EQ_INT(g.node_count, 5);
    for (uint32_t k = 0; k < g.node_count && k < 5; k++)
        CHECK(strcmp(g.nodes[k].type, types[k]) == 0);
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&g, NULL, &d, &e));
    CHECK_EQ_INT(d.count, 0);
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    /* Pasted into a recipe it checks clean and generates, erosion included. */
    CHECK(out && write_recipe("starter.json", out, p, sizeof p));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("graph check '%s'", &out, &err, p), 0);
    CHECK_CONTAINS(out, "5 nodes, 0 errors, 0 warnings: ready to generate\n");
    free(out), free(err);
    tmp_path(png, sizeof png, "starter.png");
    json_t *j = generate_json(p, png, "");
    json_t *nodes = json_object_get(j, "nodes");
    CHECK(strcmp(outcome_of(nodes, "erode"), "evaluated") == 0);
    CHECK(strcmp(outcome_of(nodes, "about"), "skipped") == 0);
    CHECK(json_object_get(node_of(nodes, "erode"), "ledger") != NULL);
    json_decref(j);
    /* ... and as a document of its own. */
    CHECK_EQ_INT(trn_test_run_clif("graph starter -q > '%s/starter.graph.json' && '%s' graph check "
                                   "'%s/starter.graph.json'",
                                   &out, &err, tmp, TRN_CLI_PATH, tmp),
                 0);
    CHECK_CONTAINS(out, "5 nodes, 0 errors, 0 warnings: ready to generate\n");
    CHECK_CONTAINS(err, "is a graph document of its own");
    free(out), free(err);
}

/* --mask NODE[.PIN]=FILE.png: a node's mask, north up, equal to the library's output. */
static void test_mask_outputs(void)
{
    char recipe[1024], dep[1024], flow[1024];
    CHECK(write_valley("masks.json", 1, "masks", "[0, 0]", recipe, sizeof recipe));
    tmp_path(dep, sizeof dep, "deposits.png");
    tmp_path(flow, sizeof flow, "flow.png");
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_clif("generate %s --mask erode.deposited=%s --mask "
                                   "drain.accumulation=%s --format json",
                                   &out, &err, recipe, dep, flow),
                 0);
    CHECK_CONTAINS(out, "\"mask\"");
    free(out), free(err);
    /* The same graph through the library. */
    trn_recipe r;
    CHECK_OK(trn_recipe_read(recipe, &r, NULL, NULL));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    trn_graph_run *run = NULL;
    CHECK_OK(trn_graph_evaluate(&g, &r, NULL, &run, NULL, NULL, NULL));
    trn_graph_value v;
    CHECK_OK(trn_graph_run_output(run, "erode", "deposited", &v, NULL));
    trn_image img;
    CHECK_OK(trn_png_read(dep, NULL, &img, NULL));
    const uint32_t w = v.cells_x + 1u, h = v.cells_z + 1u;
    CHECK(img.width == w && img.height == h && img.bit_depth == 16 && img.channels == 1);
    size_t mismatches = 0;
    const uint16_t *px = img.data;
    for (uint32_t row = 0; row < h && img.width == w; row++)
        for (uint32_t c = 0; c < w; c++) {
            const long want = lround((double)v.values[(size_t)(h - 1u - row) * w + c] * 65535.0);
            mismatches += px[(size_t)row * w + c] != (uint16_t)want;
        }
    CHECK_EQ_INT(mismatches, 0);
    trn_image_dispose(&img);
    CHECK(trn_test_exists(flow));
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    /* Not a mask, not evaluated, malformed. */
    CHECK_EQ_INT(trn_test_run_clif("generate %s --mask mountains=%s", &out, &err, recipe, dep), 1);
    CHECK_CONTAINS(err, "that output is a heightfield, not a mask");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate %s --mask note=%s", &out, &err, recipe, dep), 1);
    CHECK_CONTAINS(err, "was not evaluated");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate %s --mask deposits.png", &out, &err, recipe), 2);
    CHECK_CONTAINS(err, "--mask takes NODE[.PIN]=FILE.png");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_skip("no temporary folder");
    RUN(test_generate_reports_nodes);
    RUN(test_cache_reuse);
    RUN(test_default_cache);
    RUN(test_quality);
    RUN(test_graph_errors);
    RUN(test_node_error_located);
    RUN(test_node_value_located);
    RUN(test_inspect_graph);
    RUN(test_asset_document);
    RUN(test_graph_check_and_types);
    RUN(test_starter);
    RUN(test_mask_outputs);
    return trn_test_finish();
}
