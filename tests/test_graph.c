/* Tests for terrain graphs: parsing, diagnostics, identity, cached evaluation, quality, nodes. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "test.h"

/* ---- helpers ---- */

/* A small recipe (64x64 cells over 256x256 units by default) with an optional graph. */
static char *recipe_text(uint32_t cells, const char *graph)
{
    static const char head[] =
        "{\"size\":[256,256],\"resolution\":[%u,%u],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":120,"
        "\"octaves\":4},\"plain\":{\"height_variation\":0}},\"default_biome\":\"grass\","
        "\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},\"rock\":{\"color\":[0.5,0.5,0.5,1]}},"
        "\"rules\":[{\"id\":\"steep\",\"biome\":\"rock\",\"priority\":1,\"slope\":[30,90]}]"
        "%s%s}";
    const size_t n = sizeof head + 64 + (graph ? strlen(graph) : 0);
    char *t = malloc(n);
    if (t) snprintf(t, n, head, cells, cells, graph ? ",\"graph\":" : "", graph ? graph : "");
    return t;
}

static bool load_recipe(uint32_t cells, const char *graph, trn_recipe *r)
{
    char *text = recipe_text(cells, graph);
    trn_error e;
    trn_status st =
        text ? trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e) : TRN_ERR_NO_MEMORY;
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    free(text);
    return st == TRN_OK;
}

static bool parse_graph(const char *text, trn_graph *g)
{
    trn_error e;
    trn_status st = trn_graph_parse(text, strlen(text), "g.json", g, &e);
    if (st) fprintf(stderr, "graph refused: %s (line %d col %d)\n", e.message, e.line, e.column);
    return st == TRN_OK;
}

/* The error sits at the first occurrence of marker in text (byte offset, line, column). */
static bool error_at(const trn_error *e, const char *text, const char *marker)
{
    const char *at = strstr(text, marker);
    if (!at) {
        fprintf(stderr, "marker %s not in the text\n", marker);
        return false;
    }
    const long off = (long)(at - text);
    int line = 1, col = 1;
    for (long k = 0; k < off; k++) {
        if (text[k] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    if (e->offset != off || e->line != line || e->column != col) {
        fprintf(stderr, "error \"%s\" at offset %lld line %d col %d, expected %ld %d %d (%s)\n",
                e->message, (long long)e->offset, e->line, e->column, off, line, col, marker);
        return false;
    }
    return true;
}

/* Parse text as a graph expecting code, a message part and the position of marker. */
static bool parse_fails(const char *text, trn_status code, const char *msg, const char *marker)
{
    trn_graph g;
    trn_error e;
    memset(&g, 0xAB, sizeof g);
    trn_status st = trn_graph_parse(text, strlen(text), "g.json", &g, &e);
    bool ok = st == code && e.code == code && strstr(e.message, msg) != NULL &&
              strcmp(e.file, "g.json") == 0 && g.nodes == NULL && g.node_count == 0 &&
              g.output == NULL;
    if (!ok)
        fprintf(stderr, "parse gave %s \"%s\", expected %s \"%s\"\n", trn_status_name(st),
                st ? e.message : "", trn_status_name(code), msg);
    if (ok && marker) ok = error_at(&e, text, marker);
    trn_graph_dispose(&g);
    return ok;
}

static void print_diags(const trn_graph_diagnostics *d)
{
    for (size_t k = 0; k < d->count; k++)
        fprintf(stderr, "  [%s %s] node '%s' pin '%s' path '%s': %s\n",
                d->items[k].severity == TRN_GRAPH_ERROR ? "error" : "warning", d->items[k].check,
                d->items[k].node_id, d->items[k].pin, d->items[k].path, d->items[k].message);
}

static const trn_graph_diagnostic *find_diag(const trn_graph_diagnostics *d, const char *check,
                                             const char *node_id)
{
    for (size_t k = 0; k < d->count; k++)
        if (strcmp(d->items[k].check, check) == 0 &&
            (!node_id || strcmp(d->items[k].node_id, node_id) == 0))
            return &d->items[k];
    return NULL;
}

static size_t count_check(const trn_graph_diagnostics *d, const char *check)
{
    size_t n = 0;
    for (size_t k = 0; k < d->count; k++)
        n += strcmp(d->items[k].check, check) == 0;
    return n;
}

/* Check a graph text and expect one diagnostic with all of these (pin and path NULL = any). */
static bool has_diag(const char *graph, const trn_recipe *recipe, trn_graph_severity sev,
                     const char *check, const char *node_id, const char *pin, const char *path,
                     const char *msg)
{
    trn_graph g;
    if (!parse_graph(graph, &g)) return false;
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    trn_error e;
    bool ok = trn_graph_check(&g, recipe, &d, &e) == TRN_OK;
    const trn_graph_diagnostic *x = ok ? find_diag(&d, check, node_id) : NULL;
    ok = x && x->severity == sev && (!pin || strcmp(x->pin, pin) == 0) &&
         (!path || strcmp(x->path, path) == 0) && (!msg || strstr(x->message, msg)) &&
         x->line == 0 && x->offset == -1;
    if (!ok) {
        fprintf(stderr, "expected %s on '%s' pin '%s' path '%s' \"%s\"; found:\n", check, node_id,
                pin ? pin : "*", path ? path : "*", msg ? msg : "");
        print_diags(&d);
    }
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    return ok;
}

/* Number of diagnostics (errors only when errors_only) of a graph text. */
static size_t diag_count(const char *graph, const trn_recipe *recipe, bool errors_only)
{
    trn_graph g;
    if (!parse_graph(graph, &g)) return 9999;
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    size_t n = 9999;
    if (trn_graph_check(&g, recipe, &d, NULL) == TRN_OK)
        n = errors_only ? trn_graph_diagnostics_errors(&d) : d.count;
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    return n;
}

static trn_graph_run *eval_graph(const trn_graph *g, const trn_recipe *r, trn_erosion_quality q,
                                 int threads, trn_graph_cache *cache)
{
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.quality = q;
    o.cache = cache;
    trn_graph_run *run = NULL;
    trn_error e;
    trn_status st = trn_graph_evaluate(g, r, &o, &run, NULL, NULL, &e);
    if (st) fprintf(stderr, "evaluation failed: %s\n", e.message);
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

static bool outcome_is(const trn_graph_run *run, const char *id, trn_node_outcome want)
{
    const trn_node_report *r = report_of(run, id);
    if (!r || r->outcome != want) {
        fprintf(stderr, "node %s: %s, expected %s\n", id,
                r ? trn_node_outcome_name(r->outcome) : "(no report)", trn_node_outcome_name(want));
        return false;
    }
    return true;
}

static size_t samples_of(const trn_recipe *r)
{
    return ((size_t)r->cells_x + 1u) * ((size_t)r->cells_z + 1u);
}

/* The published terrain of a run, or NULL. */
static const float *terrain_of(const trn_graph_run *run)
{
    trn_graph_value v;
    if (!run || trn_graph_run_terrain(run, &v, NULL) != TRN_OK) return NULL;
    return v.values;
}

static const float *output_of(const trn_graph_run *run, const char *id, const char *pin)
{
    trn_graph_value v;
    if (!run || trn_graph_run_output(run, id, pin, &v, NULL) != TRN_OK) return NULL;
    return v.values;
}

static bool same_floats(const float *a, const float *b, size_t n)
{
    return a && b && memcmp(a, b, n * sizeof *a) == 0;
}

/* Keys of a graph text with a recipe, by node id (0 when the node is absent or skipped). */
static uint64_t key_of(const trn_graph *g, const uint64_t *keys, const char *id)
{
    for (uint32_t k = 0; k < g->node_count; k++)
        if (strcmp(g->nodes[k].id, id) == 0) return keys[k];
    return 0;
}

static size_t count_files(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

static bool key_file_exists(const char *dir, uint64_t key)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%016llx.tnc", dir, (unsigned long long)key);
    return trn_test_exists(path);
}

/* ---- parsing ---- */

static void test_parse_document(void)
{
    const char *text =
        "{\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
        " {\"id\": \"hills\", \"type\": \"noise_terrain\", \"position\": [10.5, -3],\n"
        "  \"params\": {\"profile\": \"ridged\", \"octaves\": 3, \"flag\": true,\n"
        "             \"pts\": [[1, 2], [3.25, 4]], \"obj\": {\"b\": 1, \"a\": [1]},\n"
        "             \"nums\": [1, 2, 3]}},\n"
        " {\"id\": \"ero\", \"type\": \"erosion\", \"inputs\": {\"field\": {\"node\": "
        "\"hills\"}}},\n"
        " {\"id\": \"out\", \"type\": \"terrain_output\",\n"
        "  \"inputs\": {\"field\": {\"node\": \"ero\", \"pin\": \"field\"}}}]}\n";
    trn_graph g;
    CHECK(parse_graph(text, &g));
    CHECK_EQ_INT(g.format_version, 1);
    CHECK(g.output && strcmp(g.output, "out") == 0);
    CHECK_EQ_INT(g.node_count, 3);
    if (g.node_count == 3) {
        const trn_graph_node *h = &g.nodes[0];
        CHECK(strcmp(h->id, "hills") == 0 && strcmp(h->type, "noise_terrain") == 0);
        CHECK(h->has_position && h->x == 10.5 && h->y == -3.0);
        CHECK_EQ_INT(h->param_count, 6);
        CHECK_EQ_INT(h->input_count, 0);
        for (uint32_t k = 0; k < h->param_count; k++) {
            const trn_graph_param *p = &h->params[k];
            if (strcmp(p->name, "profile") == 0)
                CHECK(p->type == TRN_VALUE_STRING && strcmp(p->text, "ridged") == 0);
            else if (strcmp(p->name, "octaves") == 0)
                CHECK(p->type == TRN_VALUE_NUMBER && p->number == 3.0);
            else if (strcmp(p->name, "flag") == 0)
                CHECK(p->type == TRN_VALUE_BOOL && p->boolean);
            else if (strcmp(p->name, "pts") == 0)
                CHECK(p->type == TRN_VALUE_POINTS && p->point_count == 2 && p->point_dim == 2 &&
                      p->points[0] == 1.0 && p->points[1] == 2.0 && p->points[2] == 3.25 &&
                      p->points[3] == 4.0);
            else if (strcmp(p->name, "obj") == 0)
                CHECK(p->type == TRN_VALUE_OTHER && strcmp(p->text, "{\"a\":[1],\"b\":1}") == 0);
            else if (strcmp(p->name, "nums") == 0)
                CHECK(p->type == TRN_VALUE_POINTS && p->point_dim == 1 && p->point_count == 3 &&
                      p->points[2] == 3.0);
            else
                CHECK(false && "unexpected parameter");
        }
        CHECK(!g.nodes[1].has_position);
        CHECK_EQ_INT(g.nodes[1].input_count, 1);
        CHECK(strcmp(g.nodes[1].inputs[0].pin, "field") == 0);
        CHECK(strcmp(g.nodes[1].inputs[0].node, "hills") == 0);
        CHECK(g.nodes[1].inputs[0].output == NULL);
        CHECK(g.nodes[2].inputs[0].output && strcmp(g.nodes[2].inputs[0].output, "field") == 0);
    }
    /* Canonical text: keys sorted, links written in full (the only output named). */
    char *json = NULL;
    size_t n = 0;
    CHECK_OK(trn_graph_to_json(&g, false, &json, &n, NULL));
    CHECK(json && strlen(json) == n);
    CHECK_CONTAINS(json, "\"inputs\":{\"field\":{\"node\":\"hills\",\"pin\":\"field\"}}");
    CHECK_CONTAINS(json, "\"position\":[10.5,-3]");
    CHECK_CONTAINS(json, "\"obj\":{\"a\":[1],\"b\":1}");
    free(json);
    trn_graph_dispose(&g);
    trn_graph_dispose(&g); /* disposing twice (a zeroed graph) is harmless */
    trn_graph_dispose(NULL);

    /* An empty draft parses: no nodes, no output. */
    CHECK(parse_graph("{\"format_version\": 1}", &g));
    CHECK(g.node_count == 0 && g.output == NULL && g.nodes == NULL);
    trn_graph_dispose(&g);
    /* "output": null is an unset output. */
    CHECK(parse_graph("{\"format_version\": 1, \"output\": null, \"nodes\": []}", &g));
    CHECK(g.output == NULL);
    trn_graph_dispose(&g);
    /* A byte order mark is skipped. */
    CHECK(parse_graph("\xEF\xBB\xBF{\"format_version\": 1}", &g));
    trn_graph_dispose(&g);
}

static void test_parse_shape_errors(void)
{
    /* A node without an id: at the node object. */
    CHECK(parse_fails("{\"format_version\": 1,\n"
                      " \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\"},\n"
                      "  {\"type\": \"flat_terrain\"}\n"
                      " ]}",
                      TRN_ERR_JSON, "nodes[1]: a node needs \"id\"", "{\"type\""));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [{\"id\": \"a\"}]}", TRN_ERR_JSON,
                      "nodes[0]: a node needs \"type\"", "{\"id\""));
    /* id and type not strings. */
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n {\"id\": 4, \"type\": \"x\"}]}",
                      TRN_ERR_JSON, "nodes[0].id: expected a string, found 4", "4,"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\",\n"
                      "   \"type\": 12}]}",
                      TRN_ERR_JSON, "nodes[0].type: expected a string, found 12", "12}"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [{\"id\": \"a\", \"type\": null}]}",
                      TRN_ERR_JSON, "nodes[0].type: expected a string, found null", "null"));
    /* position not two numbers */
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"position\": [1]}]}",
                      TRN_ERR_JSON, "nodes[0].position: expected [x, y], found an array", "[1]"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"position\": [1, \"2\"]}]}",
                      TRN_ERR_JSON, "nodes[0].position: expected [x, y]", "[1, \"2\"]"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"position\": [1, 2, 3]}]}",
                      TRN_ERR_JSON, "nodes[0].position: expected [x, y]", "[1, 2, 3]"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"position\": {\"x\": 1}}]}",
                      TRN_ERR_JSON, "found an object", "{\"x\""));
    /* params and inputs not objects */
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"params\": [1]}]}",
                      TRN_ERR_JSON, "nodes[0].params: expected an object, found an array", "[1]"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"inputs\": 3}]}",
                      TRN_ERR_JSON, "nodes[0].inputs: expected an object of links, found 3", "3}"));
    /* links that are not {node, pin} */
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"src\", \"type\": \"flat_terrain\"},\n"
                      "  {\"id\": \"o\", \"type\": \"terrain_output\",\n"
                      "   \"inputs\": {\"field\": \"src\"}}]}",
                      TRN_ERR_JSON,
                      "nodes[1].inputs.field: expected a link {\"node\": ID, \"pin\": OUTPUT}, "
                      "found the string \"src\"",
                      "\"src\"}"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"o\", \"type\": \"terrain_output\",\n"
                      "   \"inputs\": {\"field\": {\"node\": \"a\", \"output\": \"field\"}}}]}",
                      TRN_ERR_JSON,
                      "unknown key 'output' in nodes[0].inputs.field (expected one of: node, pin)",
                      "\"output\""));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"o\", \"type\": \"terrain_output\",\n"
                      "   \"inputs\": {\"field\": {\"pin\": \"field\"}}}]}",
                      TRN_ERR_JSON, "nodes[0].inputs.field: a link needs \"node\"", "{\"pin\""));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"o\", \"type\": \"terrain_output\",\n"
                      "   \"inputs\": {\"field\": {\"node\": 5}}}]}",
                      TRN_ERR_JSON, "nodes[0].inputs.field.node: expected a string, found 5",
                      "5}"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"o\", \"type\": \"terrain_output\",\n"
                      "   \"inputs\": {\"field\": {\"node\": \"a\", \"pin\": [1]}}}]}",
                      TRN_ERR_JSON, "nodes[0].inputs.field.pin: expected a string", "[1]"));
    /* unknown keys: top level, node */
    CHECK(parse_fails("{\"format_version\": 1,\n \"outputs\": \"x\"}", TRN_ERR_JSON,
                      "unknown key 'outputs' in the graph; did you mean 'output'?", "\"outputs\""));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [\n"
                      "  {\"id\": \"a\", \"type\": \"flat_terrain\", \"label\": \"x\"}]}",
                      TRN_ERR_JSON,
                      "unknown key 'label' in nodes[0] (expected one of: id, type, position, "
                      "params, inputs)",
                      "\"label\""));
    /* format_version */
    CHECK(parse_fails("{\"nodes\": []}", TRN_ERR_JSON, "a graph needs \"format_version\"", "{"));
    CHECK(parse_fails("{\"format_version\": 0}", TRN_ERR_JSON,
                      "format_version: expected a whole number >= 1, found 0", "0}"));
    CHECK(parse_fails("{\"format_version\": 1.5}", TRN_ERR_JSON,
                      "format_version: expected a whole number >= 1, found 1.5", "1.5"));
    CHECK(parse_fails("{\"format_version\": \"1\"}", TRN_ERR_JSON,
                      "format_version: expected a whole number >= 1, found the string \"1\"",
                      "\"1\""));
    CHECK(parse_fails("{\n  \"format_version\": 2, \"nodes\": []}", TRN_ERR_VERSION,
                      "format_version: graph format version 2 is newer than 1", "2,"));
    /* not a graph at all */
    CHECK(parse_fails("[1, 2]", TRN_ERR_JSON, "expected a graph object, found an array", "[1"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": {}}", TRN_ERR_JSON,
                      "nodes: expected an array of nodes, found an object", "{}"));
    CHECK(parse_fails("{\"format_version\": 1, \"nodes\": [3]}", TRN_ERR_JSON,
                      "nodes[0]: expected a node object, found 3", "3]"));
    CHECK(parse_fails("{\"format_version\": 1, \"output\": 5}", TRN_ERR_JSON,
                      "output: expected a string, found 5", "5}"));
    /* syntax errors keep jansson's position */
    trn_graph g;
    trn_error e;
    const char *bad = "{\"format_version\": 1,\n \"nodes\": [}";
    CHECK_STATUS(trn_graph_parse(bad, strlen(bad), "g.json", &g, &e), TRN_ERR_JSON);
    CHECK_EQ_INT(e.line, 2);
    CHECK(e.column >= 11 && e.offset >= 32);
    CHECK_STATUS(trn_graph_parse("", 0, "g.json", &g, &e), TRN_ERR_JSON);
    CHECK(e.line == 1 && e.column == 1 && e.offset == 0); /* 1-based even at the end */
    CHECK_STATUS(trn_graph_parse("\xEF\xBB\xBF", 3, "g.json", &g, &e), TRN_ERR_JSON);
    CHECK(e.line == 1 && e.column == 1 && e.offset == 3);
    /* duplicate keys are a JSON error, not a silent overwrite */
    const char *dup = "{\"format_version\": 1, \"format_version\": 1}";
    CHECK_STATUS(trn_graph_parse(dup, strlen(dup), "g.json", &g, &e), TRN_ERR_JSON);
    CHECK_STATUS(trn_graph_parse(NULL, 0, "g.json", &g, &e), TRN_ERR_INVALID_ARGUMENT);
}

static void test_recipe_graph_position(void)
{
    /* A malformed graph in a recipe is reported at its line and column in the recipe file. */
    char *text = recipe_text(16, "{\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
                                 "   {\"id\": \"a\", \"type\": \"flat_terrain\"},\n"
                                 "   {\"id\": \"b\", \"type\": 7}]}");
    trn_recipe r;
    trn_error e;
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "graph.nodes[1].type: expected a string, found 7");
    CHECK(strcmp(e.file, "t.json") == 0);
    CHECK(error_at(&e, text, "7}]}"));
    free(text);
    text = recipe_text(16, "{\"format_version\": 9}");
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e), TRN_ERR_VERSION);
    CHECK_CONTAINS(e.message, "graph.format_version");
    CHECK(error_at(&e, text, "9}"));
    free(text);
    text = recipe_text(16, "[1]");
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, "graph");
    CHECK(error_at(&e, text, "[1]"));
    free(text);
}

/* ---- diagnostics ---- */

#define G_HEAD "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
#define N_BASE                                                                                     \
    "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":50,"             \
    "\"feature_size\":100}}"
#define N_OUT(src)                                                                                 \
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"" src "\"}}}"

static void test_check_valid(void)
{
    trn_recipe r;
    CHECK(load_recipe(16, NULL, &r));
    CHECK_EQ_INT(diag_count(G_HEAD N_BASE "," N_OUT("base") "]}", &r, false), 0);
    /* Every node type, connected: no findings at all. */
    const char *all = G_HEAD
        "{\"id\":\"lf\",\"type\":\"landform\",\"params\":{\"landform\":\"plain\"}},"
        "{\"id\":\"flat\",\"type\":\"flat_terrain\",\"params\":{\"height\":3}}," N_BASE ","
        "{\"id\":\"em\",\"type\":\"elevation_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
        "{\"id\":\"sm\",\"type\":\"slope_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
        "{\"id\":\"pm\",\"type\":\"path_distance_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}}"
        ","
        "{\"id\":\"po\",\"type\":\"polygon_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
        "{\"id\":\"b1\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"lf\"},"
        "\"b\":{\"node\":\"flat\"},\"mask\":{\"node\":\"em\"}}},"
        "{\"id\":\"b2\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"b1\"},"
        "\"b\":{\"node\":\"base\"},\"mask\":{\"node\":\"sm\"}}},"
        "{\"id\":\"b3\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"b2\"},"
        "\"b\":{\"node\":\"base\"},\"mask\":{\"node\":\"pm\"}}},"
        "{\"id\":\"off\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"b3\"},"
        "\"mask\":{\"node\":\"po\"}}},"
        "{\"id\":\"dr\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"off\"}}},"
        "{\"id\":\"off2\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"off\"},"
        "\"mask\":{\"node\":\"dr\",\"pin\":\"accumulation\"}}},"
        "{\"id\":\"er\",\"type\":\"erosion\",\"inputs\":{\"field\":{\"node\":\"off2\"},"
        "\"drainage\":{\"node\":\"dr\",\"pin\":\"drainage\"}}},"
        "{\"id\":\"bi\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"er\","
        "\"pin\":\"field\"}}},"
        "{\"id\":\"note\",\"type\":\"comment\",\"params\":{\"text\":\"hello\"}}," N_OUT("bi") "]}";
    CHECK_EQ_INT(diag_count(all, &r, false), 0);
    trn_recipe_dispose(&r);
    /* The registry covers every type the issue names. */
    const char *types[] = {
        "landform",          "noise_terrain",     "flat_terrain",       "elevation_mask",
        "slope_mask",        "height_blend",      "height_offset",      "drainage",
        "erosion",           "biome_rules",       "path_distance_mask", "polygon_mask",
        "comment",           "terrain_output",    "water_body",         "basin_water",
        "water_edit",        "river_route",       "scatter_palette",    "stream_power",
        "flow_accumulation", "drain_depressions", "heightfield_input",  "dune_field"};
    for (size_t k = 0; k < sizeof types / sizeof *types; k++)
        CHECK(trn_node_type_find(types[k]) != NULL);
    CHECK_EQ_INT(trn_node_type_count(), sizeof types / sizeof *types);
    CHECK(trn_node_type_at(trn_node_type_count()) == NULL);
    CHECK(trn_node_type_find("nope") == NULL);
    const trn_node_type *er = trn_node_type_find("erosion");
    CHECK(er && er->quality_dependent && er->output_count == 3);
    uint32_t idx = 99;
    CHECK(trn_node_type_output(er, "eroded", &idx) && idx == 2);
    CHECK(trn_node_type_input(er, "drainage", &idx) && idx == 1 &&
          trn_node_type_input(er, "drainage", NULL)->kind == TRN_PIN_DRAINAGE);
    CHECK(strcmp(trn_pin_kind_name(TRN_PIN_INSTANCES), "instances") == 0);
    CHECK(strcmp(trn_node_outcome_name(TRN_NODE_REUSED_DISK), "reused-disk") == 0);
}

static void test_check_ids_and_types(void)
{
    trn_recipe r;
    CHECK(load_recipe(16, NULL, &r));
    /* duplicate-id: the second use */
    CHECK(has_diag(G_HEAD N_BASE "," N_BASE "," N_OUT("base") "]}", &r, TRN_GRAPH_ERROR,
                   "duplicate-id", "base", "", "nodes[1].id",
                   "id 'base' is already used by node 0"));
    /* bad-id: empty and too long */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"\",\"type\":\"flat_terrain\"}," N_OUT("base") "]}", &r,
                   TRN_GRAPH_ERROR, "bad-id", "", "", "nodes[1].id",
                   "node 1: an id must be 1 to 63 bytes, found 0"));
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"" /* 64 bytes */
                                 "0123456789012345678901234567890123456789012345678901234567890123"
                                 "\",\"type\":\"flat_terrain\"}," N_OUT("base") "]}",
                   &r, TRN_GRAPH_ERROR, "bad-id", "", "", "nodes[1].id", "found 64"));
    CHECK_EQ_INT(diag_count(G_HEAD N_BASE
                            ",{\"id\":\""
                            "012345678901234567890123456789012345678901234567890123"
                            "456789012\",\"type\":\"flat_terrain\"}," N_OUT("base") "]}",
                            &r, true),
                 0);
    /* unknown-type, with and without a near name */
    CHECK(has_diag(G_HEAD "{\"id\":\"base\",\"type\":\"noise_terain\"}," N_OUT("base") "]}", &r,
                   TRN_GRAPH_ERROR, "unknown-type", "base", "", "nodes[0].type",
                   "unknown node type 'noise_terain'; did you mean 'noise_terrain'?"));
    CHECK(has_diag(G_HEAD "{\"id\":\"base\",\"type\":\"qqqqqqqq\"}," N_OUT("base") "]}", &r,
                   TRN_GRAPH_ERROR, "unknown-type", "base", "", "nodes[0].type",
                   "unknown node type 'qqqqqqqq' (`terrane graph types` lists them)"));
    trn_recipe_dispose(&r);
}

static void test_check_params(void)
{
    trn_recipe r;
    CHECK(load_recipe(16, NULL, &r));
#define NOISE_WITH(params)                                                                         \
    G_HEAD "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{" params                       \
           "}}," N_OUT("base") "]}"
    CHECK(has_diag(NOISE_WITH("\"heigth_variation\":3"), &r, TRN_GRAPH_ERROR, "unknown-param",
                   "base", "heigth_variation", "nodes[0].params.heigth_variation",
                   "unknown key 'heigth_variation' in nodes[0].params; did you mean "
                   "'height_variation'?"));
    CHECK(has_diag(
        G_HEAD
        "{\"id\":\"base\",\"type\":\"flat_terrain\",\"params\":{\"zzzzzz\":1}}," N_OUT("base") "]}",
        &r, TRN_GRAPH_ERROR, "unknown-param", "base", "zzzzzz", "nodes[0].params.zzzzzz",
        "unknown key 'zzzzzz' in nodes[0].params (expected one of: height)"));
    /* range, exclusive minimum, type, whole number, choice */
    CHECK(has_diag(NOISE_WITH("\"roughness\":2"), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "roughness", "nodes[0].params.roughness",
                   "roughness: expected a number from 0 to 1, found 2"));
    CHECK(has_diag(NOISE_WITH("\"roughness\":-0.5"), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "roughness", NULL, "found -0.5"));
    CHECK(has_diag(NOISE_WITH("\"feature_size\":0"), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "feature_size", "nodes[0].params.feature_size",
                   "feature_size: expected a number > 0, found 0"));
    CHECK(has_diag(NOISE_WITH("\"octaves\":\"five\""), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "octaves", NULL, "octaves: expected a whole number, found a string"));
    CHECK(has_diag(NOISE_WITH("\"octaves\":2.5"), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "octaves", NULL, "octaves: expected a whole number from 1 to 16, found 2.5"));
    CHECK(has_diag(NOISE_WITH("\"octaves\":17"), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "octaves", NULL, "found 17"));
    CHECK(has_diag(NOISE_WITH("\"height_variation\":true"), &r, TRN_GRAPH_ERROR, "bad-param",
                   "base", "height_variation", NULL, "another kind of value"));
    CHECK(has_diag(NOISE_WITH("\"profile\":\"billow\""), &r, TRN_GRAPH_ERROR, "bad-param", "base",
                   "profile", "nodes[0].params.profile",
                   "profile: expected one of fbm|ridged, found \"billow\""));
    CHECK(has_diag(NOISE_WITH("\"profile\":3"), &r, TRN_GRAPH_ERROR, "bad-param", "base", "profile",
                   NULL, "found another kind of value"));
    CHECK_EQ_INT(diag_count(NOISE_WITH("\"profile\":\"ridged\",\"octaves\":16,\"roughness\":1,"
                                       "\"seed\":12"),
                            &r, false),
                 0);
    /* string parameters: a comment's text and a landform name must be strings */
    CHECK(
        has_diag(G_HEAD N_BASE
                 ",{\"id\":\"c\",\"type\":\"comment\",\"params\":{\"text\":5}}," N_OUT("base") "]}",
                 &r, TRN_GRAPH_ERROR, "bad-param", "c", "text", "nodes[1].params.text",
                 "text: expected a string"));
    /* points: a path needs 2 points, a polygon 3 noncollinear ones, coordinates finite floats */
#define MASK_WITH(type, params)                                                                    \
    G_HEAD N_BASE                                                                                  \
        ",{\"id\":\"m\",\"type\":\"" type "\",\"inputs\":{\"field\":{\"node\":\"base\"}},"         \
        "\"params\":{" params "}},{\"id\":\"off\",\"type\":\"height_offset\","                     \
        "\"inputs\":{\"field\":{\"node\":\"base\"},\"mask\":{\"node\":\"m\"}}}," N_OUT("off") "]}"
    CHECK_EQ_INT(
        diag_count(MASK_WITH("path_distance_mask", "\"points\":[[0,0],[10,5]]"), &r, false), 0);
    CHECK(has_diag(MASK_WITH("path_distance_mask", "\"points\":[[0,0]]"), &r, TRN_GRAPH_ERROR,
                   "bad-param", "m", "points", "nodes[1].params.points", "points"));
    CHECK(has_diag(MASK_WITH("path_distance_mask", "\"points\":[[0,0]]"), &r, TRN_GRAPH_ERROR,
                   "bad-param", "m", "points", NULL, "2"));
    CHECK(has_diag(MASK_WITH("polygon_mask", "\"points\":[[0,0],[10,10],[20,20],[5,5]]"), &r,
                   TRN_GRAPH_ERROR, "bad-param", "m", "points", "nodes[1].params.points",
                   "collinear"));
    CHECK(has_diag(MASK_WITH("polygon_mask", "\"points\":[[0,0],[10,0]]"), &r, TRN_GRAPH_ERROR,
                   "bad-param", "m", "points", NULL, "3"));
    CHECK(has_diag(MASK_WITH("polygon_mask", "\"points\":[[0,0],[1e39,0],[0,10]]"), &r,
                   TRN_GRAPH_ERROR, "bad-param", "m", "points", NULL,
                   "points[1][0]: expected a finite number within the float range, found 1e+39"));
    CHECK(has_diag(MASK_WITH("path_distance_mask", "\"points\":[0,1]"), &r, TRN_GRAPH_ERROR,
                   "bad-param", "m", "points", NULL,
                   "points: expected an array of [x, z] number pairs"));
    CHECK(has_diag(MASK_WITH("path_distance_mask", "\"points\":[[0,0],[1,1]],\"width\":-1"), &r,
                   TRN_GRAPH_ERROR, "bad-param", "m", "width", NULL, "found -1"));
    CHECK_EQ_INT(diag_count(MASK_WITH("polygon_mask", "\"points\":[[0,0],[10,0],[0,10]],"
                                                      "\"falloff\":0"),
                            &r, false),
                 0);
    /* a band whose min is above its max */
    CHECK(has_diag(MASK_WITH("elevation_mask", "\"min\":50,\"max\":10"), &r, TRN_GRAPH_ERROR,
                   "bad-param", "m", "min", "nodes[1].params.min", "min is above max"));
    CHECK(has_diag(MASK_WITH("slope_mask", "\"max\":91"), &r, TRN_GRAPH_ERROR, "bad-param", "m",
                   "max", NULL, "found 91"));
    /* landform-unknown: only with a recipe to look names up in */
    const char *lf = G_HEAD "{\"id\":\"lf\",\"type\":\"landform\",\"params\":{\"landform\":"
                            "\"mesa\"}}," N_OUT("lf") "]}";
    CHECK(has_diag(lf, &r, TRN_GRAPH_ERROR, "landform-unknown", "lf", "landform",
                   "nodes[0].params.landform", "the recipe has no landform named 'mesa'"));
    CHECK_EQ_INT(diag_count(lf, NULL, false), 0);
    CHECK_EQ_INT(
        diag_count(G_HEAD "{\"id\":\"lf\",\"type\":\"landform\"}," N_OUT("lf") "]}", &r, false), 0);
    trn_recipe_dispose(&r);
}

static void test_check_links(void)
{
    trn_recipe r;
    CHECK(load_recipe(16, NULL, &r));
    /* unknown-input: a pin the type does not have; links on a type without inputs */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{"
                                 "\"field\":{\"node\":\"base\"},\"fieldz\":{\"node\":\"base\"}}}]}",
                   &r, TRN_GRAPH_ERROR, "unknown-input", "out", "fieldz", "nodes[1].inputs.fieldz",
                   "no input pin 'fieldz' (inputs: field, water, instances)"));
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"f\",\"type\":\"flat_terrain\",\"inputs\":{\"x\":{"
                                 "\"node\":\"base\"}}}," N_OUT("f") "]}",
                   &r, TRN_GRAPH_ERROR, "unknown-input", "f", "", "nodes[1].inputs",
                   "this node type has no inputs, found 1 link(s)"));
    /* unknown-node */
    CHECK(has_diag(G_HEAD N_BASE "," N_OUT("nowhere") "]}", &r, TRN_GRAPH_ERROR, "unknown-node",
                   "out", "field", "nodes[1].inputs.field",
                   "input 'field' links to node 'nowhere', which does not exist"));
    /* unknown-output-pin: a named pin the source lacks, a source with no outputs */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{"
                                 "\"field\":{\"node\":\"base\",\"pin\":\"mask\"}}}]}",
                   &r, TRN_GRAPH_ERROR, "unknown-output-pin", "out", "field",
                   "nodes[1].inputs.field",
                   "input 'field' links to output 'mask' of node 'base' (noise_terrain), which has "
                   "outputs: field"));
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"c\",\"type\":\"comment\"}," N_OUT("c") "]}", &r,
                   TRN_GRAPH_ERROR, "unknown-output-pin", "out", "field", "nodes[2].inputs.field",
                   "without naming its output (none)"));
    /* ambiguous-output-pin: erosion has three outputs */
    const char *amb =
        G_HEAD N_BASE ",{\"id\":\"er\",\"type\":\"erosion\",\"inputs\":{\"field\":{\"node\":"
                      "\"base\"}}},{\"id\":\"bi\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{"
                      "\"node\":\"er\"}}}," N_OUT("bi") "]}";
    CHECK(has_diag(amb, &r, TRN_GRAPH_ERROR, "ambiguous-output-pin", "bi", "field",
                   "nodes[2].inputs.field",
                   "input 'field' links to node 'er' without naming its output (field, deposited, "
                   "eroded)"));
    /* kind-mismatch: a mask into a heightfield pin, drainage into a mask pin */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"em\",\"type\":\"elevation_mask\",\"inputs\":{"
                                 "\"field\":{\"node\":\"base\"}}}," N_OUT("em") "]}",
                   &r, TRN_GRAPH_ERROR, "kind-mismatch", "out", "field", "nodes[2].inputs.field",
                   "input 'field' takes a heightfield, but output 'mask' of node 'em' gives a "
                   "mask"));
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"dr\",\"type\":\"drainage\",\"inputs\":{\"field\":{"
                                 "\"node\":\"base\"}}},{\"id\":\"off\",\"type\":\"height_offset\","
                                 "\"inputs\":{\"field\":{\"node\":\"base\"},\"mask\":{\"node\":"
                                 "\"dr\",\"pin\":\"drainage\"}}}," N_OUT("off") "]}",
                   &r, TRN_GRAPH_ERROR, "kind-mismatch", "off", "mask", "nodes[2].inputs.mask",
                   "input 'mask' takes a mask, but output 'drainage' of node 'dr' gives a "
                   "drainage"));
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"er\",\"type\":\"erosion\",\"inputs\":{\"field\":{"
                                 "\"node\":\"base\"},\"drainage\":{\"node\":\"base\"}}},"
                                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{"
                                 "\"field\":{\"node\":\"er\",\"pin\":\"field\"}}}]}",
                   &r, TRN_GRAPH_ERROR, "kind-mismatch", "er", "drainage", NULL,
                   "takes a drainage, but output 'field' of node 'base' gives a heightfield"));
    /* self-link */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"off\",\"type\":\"height_offset\",\"inputs\":{"
                                 "\"field\":{\"node\":\"off\"}}}," N_OUT("off") "]}",
                   &r, TRN_GRAPH_ERROR, "self-link", "off", "field", "nodes[1].inputs.field",
                   "input 'field' links to the node itself"));
    /* comment-pins */
    CHECK(has_diag(G_HEAD N_BASE ",{\"id\":\"c\",\"type\":\"comment\",\"inputs\":{\"field\":{"
                                 "\"node\":\"base\"}}}," N_OUT("base") "]}",
                   &r, TRN_GRAPH_ERROR, "comment-pins", "c", "", "nodes[1].inputs",
                   "this node type has no inputs"));
    trn_recipe_dispose(&r);
}

static void test_check_structure(void)
{
    trn_recipe r;
    CHECK(load_recipe(16, NULL, &r));
    /* missing-input: an error upstream of the output, a warning on a node that feeds nothing */
    const char *missing =
        G_HEAD N_BASE ",{\"id\":\"lone\",\"type\":\"height_offset\"},{\"id\":\"off\","
                      "\"type\":\"height_offset\",\"inputs\":{\"mask\":{\"node\":\"em\"}}},"
                      "{\"id\":\"em\",\"type\":\"elevation_mask\",\"inputs\":{\"field\":{\"node\":"
                      "\"base\"}}}," N_OUT("off") "]}";
    CHECK(has_diag(missing, &r, TRN_GRAPH_ERROR, "missing-input", "off", "field", "nodes[2].inputs",
                   "required input 'field' (heightfield) is not connected"));
    CHECK(has_diag(missing, &r, TRN_GRAPH_WARNING, "missing-input", "lone", "field",
                   "nodes[1].inputs", "does not feed the output"));
    CHECK(has_diag(missing, &r, TRN_GRAPH_WARNING, "unreachable", "lone", "", "nodes[1]",
                   "does not feed the output 'out'; generation skips it"));
    CHECK_EQ_INT(diag_count(missing, &r, true), 1);
    CHECK(has_diag(G_HEAD "{\"id\":\"out\",\"type\":\"terrain_output\"}]}", &r, TRN_GRAPH_ERROR,
                   "missing-input", "out", "field", "nodes[0].inputs", "'field'"));
    /* unreachable alone is a warning: generation goes ahead */
    const char *extra =
        G_HEAD N_BASE ",{\"id\":\"spare\",\"type\":\"flat_terrain\"}," N_OUT("base") "]}";
    CHECK(has_diag(extra, &r, TRN_GRAPH_WARNING, "unreachable", "spare", "", "nodes[1]", NULL));
    CHECK_EQ_INT(diag_count(extra, &r, true), 0);
    /* cycle: three nodes; the message names the chain; reported once */
    const char *cycle = G_HEAD
        "{\"id\":\"a\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"c\"}}},"
        "{\"id\":\"b\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"a\"}}},"
        "{\"id\":\"c\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"b\"}}}," N_OUT(
            "c") "]}";
    CHECK(has_diag(cycle, &r, TRN_GRAPH_ERROR, "cycle", "b", "", "nodes[1].inputs",
                   "its inputs form a cycle (a <- c <- b <- a)"));
    trn_graph g;
    CHECK(parse_graph(cycle, &g));
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&g, &r, &d, NULL));
    CHECK_EQ_INT(count_check(&d, "cycle"), 1);
    CHECK_EQ_INT(count_check(&d, "unreachable"), 0);
    trn_graph_diagnostics_dispose(&d);
    /* Evaluation and keys refuse the cycle instead of recursing forever. */
    trn_graph_run *run = (trn_graph_run *)&d;
    trn_error e;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, NULL, &run, NULL, NULL, &e), TRN_ERR_VALIDATION);
    CHECK(run == NULL);
    CHECK_CONTAINS(e.message, "cycle");
    CHECK_EQ_INT(e.node_id[0] != '\0', 1);
    uint64_t keys[8];
    CHECK_STATUS(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, &e), TRN_ERR_VALIDATION);
    trn_graph_dispose(&g);
    /* output-unset, output-unknown, output-not-terminal */
    CHECK(has_diag("{\"format_version\":1,\"nodes\":[" N_BASE "]}", &r, TRN_GRAPH_ERROR,
                   "output-unset", "", "", "output", "the graph names no Terrain Output"));
    CHECK(has_diag("{\"format_version\":1,\"output\":\"nope\",\"nodes\":[" N_BASE "]}", &r,
                   TRN_GRAPH_ERROR, "output-unknown", "", "", "output",
                   "output names node 'nope', which does not exist"));
    CHECK(has_diag("{\"format_version\":1,\"output\":\"base\",\"nodes\":[" N_BASE "]}", &r,
                   TRN_GRAPH_ERROR, "output-not-terminal", "base", "", "output",
                   "must be a terrain_output node, not a noise_terrain"));
    /* An empty draft: just the output. */
    CHECK(has_diag("{\"format_version\":1}", &r, TRN_GRAPH_ERROR, "output-unset", "", "", "output",
                   NULL));
    CHECK_EQ_INT(diag_count("{\"format_version\":1}", &r, false), 1);
    /* Argument errors. */
    CHECK_STATUS(trn_graph_check(NULL, &r, &d, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_graph_diagnostics_dispose(NULL);
    CHECK_EQ_INT(trn_graph_diagnostics_errors(NULL), 0);
    trn_recipe_dispose(&r);
}

static void test_locate(void)
{
    /* Diagnostics located in the recipe text: keys for unknown parameters, values otherwise. */
    const char *graph = "{\"format_version\": 1, \"output\": \"out\",\n"
                        " \"nodes\": [\n"
                        "  {\"id\": \"base\", \"type\": \"noise_terrain\",\n"
                        "   \"params\": {\"octaves\": 40, \"heigth\": 1}},\n"
                        "  {\"id\": \"em\", \"type\": \"elevation_mask\",\n"
                        "   \"inputs\": {\"field\": {\"node\": \"base\"}}},\n"
                        "  {\"id\": \"out\", \"type\": \"terrain_output\",\n"
                        "   \"inputs\": {\"field\": {\"node\": \"em\"}}},\n"
                        "  {\"id\": \"x\", \"type\": \"noise_terrian\"}\n"
                        " ]}";
    char *text = recipe_text(16, graph);
    trn_recipe r;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&g, &r, &d, &e));
    trn_graph_diagnostics_locate(&d, text, strlen(text), "graph");
    struct {
        const char *check, *marker;
    } want[] = {{"bad-param", "40,"},
                {"unknown-param", "\"heigth\""},
                {"kind-mismatch", "{\"node\": \"em\"}"},
                {"unknown-type", "\"noise_terrian\""}};
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        const trn_graph_diagnostic *x = find_diag(&d, want[k].check, NULL);
        CHECK(x != NULL);
        if (!x) continue;
        trn_error at;
        memset(&at, 0, sizeof at);
        at.offset = x->offset;
        at.line = x->line;
        at.column = x->column;
        snprintf(at.message, sizeof at.message, "%s", x->message);
        CHECK(error_at(&at, text, want[k].marker));
    }
    /* The same graph on its own: graph_path "" and positions in that text. */
    trn_graph_diagnostics d2;
    memset(&d2, 0, sizeof d2);
    trn_graph g2;
    CHECK(parse_graph(graph, &g2));
    CHECK_OK(trn_graph_check(&g2, &r, &d2, &e));
    trn_graph_diagnostics_locate(&d2, graph, strlen(graph), "");
    const trn_graph_diagnostic *x = find_diag(&d2, "bad-param", "base");
    CHECK(x && x->line == 4 && x->column == 26 &&
          x->offset == (int64_t)(strstr(graph, "40,") - graph));
    x = find_diag(&d2, "output-unknown", NULL);
    CHECK(x == NULL);
    trn_graph_diagnostics_dispose(&d2);
    trn_graph_dispose(&g2);
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    free(text);
}

/* ---- drafts ---- */

static uint64_t heights_hash(const trn_generated *gen)
{
    return XXH64(gen->field.heights, trn_field_sample_count(&gen->field) * sizeof(float), 0);
}

static void test_draft(void)
{
    /* A draft with errors is a recipe that saves and round-trips, but never generates. */
    const char *draft =
        G_HEAD N_BASE ",{\"id\":\"em\",\"type\":\"elevation_mask\",\"position\":[3,4],\"inputs\":"
                      "{\"field\":{\"node\":\"base\"}}},{\"id\":\"off\",\"type\":\"height_offset\","
                      "\"params\":{\"offset\":\"high\",\"zzz\":[1,{\"a\":null}]},\"inputs\":{"
                      "\"field\":{\"node\":\"em\"},\"mask\":{\"node\":\"ghost\",\"pin\":\"x\"}}},"
                      "{\"id\":\"odd\",\"type\":\"mystery\",\"params\":{\"p\":[[1,2]]}},"
                      "{\"id\":\"note\",\"type\":\"comment\",\"params\":{\"text\":\"a \\\"q\\\"\\n"
                      "line\"}}," N_OUT("off") "]}";
    trn_recipe r;
    CHECK(load_recipe(16, draft, &r));
    trn_graph g;
    trn_error e;
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    for (int identity = 0; identity < 2; identity++) {
        char *t1 = NULL, *t2 = NULL;
        size_t n1 = 0, n2 = 0;
        CHECK_OK(trn_graph_to_json(&g, identity != 0, &t1, &n1, &e));
        trn_graph back;
        CHECK(t1 && parse_graph(t1, &back));
        CHECK_OK(trn_graph_to_json(&back, identity != 0, &t2, &n2, &e));
        CHECK(t1 && t2 && n1 == n2 && memcmp(t1, t2, n1) == 0);
        if (!identity) {
            CHECK_EQ_INT(back.node_count, 6);
            CHECK_CONTAINS(t1, "\"zzz\":[1,{\"a\":null}]");
            CHECK_CONTAINS(t1, "\"type\":\"mystery\"");
            CHECK_CONTAINS(t1, "\"position\":[3,4]");
            CHECK_CONTAINS(t1, "\"text\":\"a \\\"q\\\"\\u000aline\"");
        } else {
            CHECK_EQ_INT(back.node_count, 5); /* no comment */
            CHECK(strstr(t1, "position") == NULL && strstr(t1, "comment") == NULL);
        }
        trn_graph_dispose(&back);
        free(t1);
        free(t2);
    }
    /* The recipe itself round-trips through its canonical text with the draft graph. */
    char *c1 = NULL, *c2 = NULL;
    size_t cn1 = 0, cn2 = 0;
    CHECK_OK(trn_recipe_canonical_json(&r, &c1, &cn1, &e));
    trn_recipe r2;
    CHECK(c1 && trn_recipe_parse(c1, cn1, "c.json", &r2, NULL, &e) == TRN_OK);
    CHECK_OK(trn_recipe_canonical_json(&r2, &c2, &cn2, &e));
    CHECK(c1 && c2 && cn1 == cn2 && memcmp(c1, c2, cn1) == 0);
    free(c1);
    free(c2);
    trn_recipe_dispose(&r2);
    /* Generation refuses it with the first error's node. */
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&g, &r, &d, &e));
    CHECK(trn_graph_diagnostics_errors(&d) >= 4);
    CHECK(d.count > 0 && d.items[0].severity == TRN_GRAPH_ERROR);
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    trn_error_clear(&e);
    CHECK_STATUS(trn_recipe_generate(&r, NULL, &gen, NULL, NULL, &e), TRN_ERR_VALIDATION);
    CHECK_EQ_INT(e.code, TRN_ERR_VALIDATION);
    if (d.count) CHECK(strcmp(e.node_id, d.items[0].node_id) == 0 && e.node_id[0] != '\0');
    CHECK_CONTAINS(e.message, "more error");
    CHECK(gen.field.heights == NULL && gen.nodes == NULL);
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);

    /* A single error: its message, path and node. */
    trn_recipe one;
    CHECK(load_recipe(
        16,
        G_HEAD N_BASE
        ",{\"id\":\"off\",\"type\":\"height_offset\",\"inputs\":{"
        "\"field\":{\"node\":\"base\"},\"mask\":{\"node\":\"base\"}}}," N_OUT("off") "]}",
        &one));
    CHECK_STATUS(trn_recipe_generate(&one, NULL, &gen, NULL, NULL, &e), TRN_ERR_VALIDATION);
    CHECK_EQ_INT(strcmp(e.node_id, "off"), 0);
    CHECK_CONTAINS(e.message, "graph.nodes[1].inputs.mask: node 'off' (height_offset): input "
                              "'mask' takes a mask");

    /* A session keeps its previous result when regenerating a bad graph. */
    trn_session *s = NULL;
    trn_recipe good;
    CHECK(load_recipe(16, G_HEAD N_BASE "," N_OUT("base") "]}", &good));
    CHECK_OK(trn_session_new(&good, NULL, &s, NULL, NULL, &e));
    if (s) {
        const uint64_t before = heights_hash(trn_session_result(s));
        const char *json_before = trn_session_recipe(s)->graph_json;
        char *saved = json_before ? strdup(json_before) : NULL;
        CHECK_STATUS(trn_session_regenerate(s, &one, TRN_EDITS_REFUSE, NULL, NULL, &e),
                     TRN_ERR_VALIDATION);
        CHECK_EQ_INT(strcmp(e.node_id, "off"), 0);
        CHECK(heights_hash(trn_session_result(s)) == before);
        CHECK(saved && trn_session_recipe(s)->graph_json &&
              strcmp(saved, trn_session_recipe(s)->graph_json) == 0);
        CHECK_STATUS(trn_session_regenerate(s, &r, TRN_EDITS_REFUSE, NULL, NULL, &e),
                     TRN_ERR_VALIDATION);
        CHECK(heights_hash(trn_session_result(s)) == before);
        /* and a good graph still regenerates afterwards */
        CHECK_OK(trn_session_regenerate(s, &good, TRN_EDITS_REFUSE, NULL, NULL, &e));
        CHECK(heights_hash(trn_session_result(s)) == before);
        free(saved);
    }
    trn_session_free(s);
    trn_recipe_dispose(&good);
    trn_recipe_dispose(&one);
    trn_recipe_dispose(&r);
}

/* ---- identity ---- */

static const char *const IDENT_A =
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"base\",\"type\":\"noise_terrain\",\"position\":[0,0],\"params\":{\"feature_size\":"
    "90}},"
    "{\"id\":\"em\",\"type\":\"elevation_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":4},\"inputs\":{"
    "\"field\":{\"node\":\"base\"},\"mask\":{\"node\":\"em\"}}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"off\"}}}]}";
/* A with every node moved, a comment added and nodes reordered: the same identity. */
static const char *const IDENT_B =
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"note\",\"type\":\"comment\",\"position\":[5,5],\"params\":{\"text\":\"hi\"}},"
    "{\"id\":\"out\",\"position\":[900,1],\"type\":\"terrain_output\",\"inputs\":{\"field\":{"
    "\"node\":\"off\",\"pin\":\"field\"}}},"
    "{\"id\":\"em\",\"type\":\"elevation_mask\",\"position\":[-40,2.5],\"inputs\":{\"field\":{"
    "\"node\":\"base\"}}},"
    "{\"id\":\"base\",\"type\":\"noise_terrain\",\"position\":[100,-7],\"params\":{"
    "\"feature_size\":90}},"
    "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":4},\"inputs\":{"
    "\"mask\":{\"node\":\"em\"},\"field\":{\"node\":\"base\"}}}]}";

static void test_identity(void)
{
    const char *variants[] = {
        IDENT_A, IDENT_B,
        /* the comment's text edited */
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"note\",\"type\":\"comment\",\"position\":[5,5],\"params\":{\"text\":\"edited\"}}"
        ","
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"off\"}}},"
        "{\"id\":\"em\",\"type\":\"elevation_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
        "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{\"feature_size\":90}},"
        "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":4},\"inputs\":{"
        "\"mask\":{\"node\":\"em\"},\"field\":{\"node\":\"base\"}}}]}"};
    uint64_t rkey[3] = {0, 0, 0};
    uint64_t nkeys[3][4];
    const char *ids[4] = {"base", "em", "off", "out"};
    for (int v = 0; v < 3; v++) {
        trn_recipe r;
        CHECK(load_recipe(16, variants[v], &r));
        CHECK_OK(trn_recipe_cache_key(&r, &rkey[v], NULL));
        trn_graph g;
        CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
        uint64_t keys[8] = {0};
        CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
        for (int k = 0; k < 4; k++) {
            nkeys[v][k] = key_of(&g, keys, ids[k]);
            CHECK(nkeys[v][k] != 0);
        }
        /* a comment is skipped: key 0 */
        if (v > 0) CHECK_EQ_INT(key_of(&g, keys, "note"), 0);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    CHECK(rkey[0] == rkey[1] && rkey[1] == rkey[2]);
    CHECK(memcmp(nkeys[0], nkeys[1], sizeof nkeys[0]) == 0);
    CHECK(memcmp(nkeys[0], nkeys[2], sizeof nkeys[0]) == 0);
    CHECK(nkeys[0][0] != nkeys[0][1] && nkeys[0][1] != nkeys[0][2]);

    /* Changing a parameter (the offset) changes the recipe key and that node and downstream
     * only; a default written out changes nothing in the node keys. */
    char changed[2048];
    snprintf(changed, sizeof changed, "%s", IDENT_A);
    char *p = strstr(changed, "\"offset\":4");
    CHECK(p != NULL);
    if (p) p[9] = '5';
    trn_recipe r;
    CHECK(load_recipe(16, changed, &r));
    uint64_t key = 0;
    CHECK_OK(trn_recipe_cache_key(&r, &key, NULL));
    CHECK(key != rkey[0]);
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t keys[8];
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(key_of(&g, keys, "base") == nkeys[0][0] && key_of(&g, keys, "em") == nkeys[0][1]);
    CHECK(key_of(&g, keys, "off") != nkeys[0][2] && key_of(&g, keys, "out") != nkeys[0][3]);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    /* the mask's default falloff written out: same node keys */
    CHECK(load_recipe(16, IDENT_A, &r));
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    trn_recipe_dispose(&r);
    free(g.nodes[1].params);
    g.nodes[1].params = calloc(1, sizeof *g.nodes[1].params);
    g.nodes[1].params[0].name = strdup("falloff");
    g.nodes[1].params[0].type = TRN_VALUE_NUMBER;
    g.nodes[1].params[0].number = 10.0;
    g.nodes[1].param_count = 1;
    CHECK(load_recipe(16, NULL, &r));
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[1] == nkeys[0][1]);
    g.nodes[1].params[0].number = 11.0;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[1] != nkeys[0][1] && keys[0] == nkeys[0][0]);
    /* A recipe change a node depends on (the world seed drives noise seeds) changes its key. */
    r.seed = 78;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] != nkeys[0][0]);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* ---- implicit graph ---- */

static void test_implicit_graph(void)
{
    trn_recipe r;
    CHECK(load_recipe(48, NULL, &r));
    trn_generated gen;
    trn_error e;
    CHECK_OK(trn_recipe_generate(&r, NULL, &gen, NULL, NULL, &e));
    trn_field f;
    CHECK_OK(trn_field_init(&f, r.cells_x, r.cells_z, r.size_x, r.size_z, NULL));
    const int lf = trn_recipe_find_landform(&r, r.default_landform);
    CHECK(lf >= 0);
    if (lf >= 0) CHECK_OK(trn_landform_fill(&r.landforms[lf], r.seed, &f, NULL, NULL, NULL));
    CHECK(same_floats(gen.field.heights, f.heights, samples_of(&r)));
    CHECK_EQ_INT(gen.node_count, 3);
    if (gen.node_count == 3) {
        CHECK(strcmp(gen.nodes[0].id, "landform") == 0 &&
              strcmp(gen.nodes[0].type, "landform") == 0);
        CHECK(strcmp(gen.nodes[1].id, "biome_rules") == 0);
        CHECK(strcmp(gen.nodes[2].id, "output") == 0 &&
              strcmp(gen.nodes[2].type, "terrain_output") == 0);
        for (int k = 0; k < 3; k++)
            CHECK(gen.nodes[k].outcome == TRN_NODE_EVALUATED && gen.nodes[k].key != 0);
        CHECK(gen.nodes[0].cpu_seconds > 0.0);
    }
    CHECK(gen.biome_rules);
    CHECK(gen.quality == TRN_EROSION_FINAL);
    trn_generated_dispose(&gen);
    /* The implicit graph as a document. */
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    CHECK(g.node_count == 3 && g.output && strcmp(g.output, "output") == 0);
    trn_graph_dispose(&g);

    /* The same graph spelled out in the recipe generates the same bytes; a graph without a
     * Biome Rules node gives every sample the default biome. */
    trn_recipe spelled;
    CHECK(load_recipe(48,
                      G_HEAD "{\"id\":\"landform\",\"type\":\"landform\"},{\"id\":\"out\","
                             "\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                             "\"landform\"}}}]}",
                      &spelled));
    CHECK_OK(trn_recipe_generate(&spelled, NULL, &gen, NULL, NULL, &e));
    CHECK(same_floats(gen.field.heights, f.heights, samples_of(&r)));
    CHECK(!gen.biome_rules);
    CHECK_EQ_INT(gen.node_count, 2);
    bool all_default = true;
    for (size_t k = 0; k < samples_of(&r); k++)
        all_default = all_default && gen.rule_index[k] == -1;
    CHECK(all_default);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&spelled);
    trn_field_dispose(&f);
    trn_recipe_dispose(&r);
}

/* ---- cache reuse ---- */

static void cache_graph(char *buf, size_t size, double offset)
{
    snprintf(
        buf, size,
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"noise\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":80,"
        "\"feature_size\":100,\"octaves\":4}},"
        "{\"id\":\"erode\",\"type\":\"erosion\",\"inputs\":{\"field\":{\"node\":\"noise\"}},"
        "\"params\":{\"droplets\":1500,\"thermal_iterations\":3}},"
        "{\"id\":\"band\",\"type\":\"elevation_mask\",\"inputs\":{\"field\":{\"node\":"
        "\"noise\"}},\"params\":{\"min\":20,\"max\":50,\"falloff\":5}},"
        "{\"id\":\"lift\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"erode\","
        "\"pin\":\"field\"},\"mask\":{\"node\":\"band\"}},\"params\":{\"offset\":%g}},"
        "{\"id\":\"biomes\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":"
        "\"lift\"}}},"
        "{\"id\":\"note\",\"type\":\"comment\"},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
        "\"biomes\"}}}]}",
        offset);
}

static void test_cache_reuse(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    const size_t n = samples_of(&r);
    char text[4096];
    trn_graph g1, g2;
    cache_graph(text, sizeof text, 5.0);
    CHECK(parse_graph(text, &g1));
    cache_graph(text, sizeof text, 9.0);
    CHECK(parse_graph(text, &g2));
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    trn_graph_run *a = eval_graph(&g1, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(a != NULL);
    const char *all[] = {"noise", "erode", "band", "lift", "biomes", "out"};
    for (int k = 0; k < 6; k++) {
        CHECK(outcome_is(a, all[k], TRN_NODE_EVALUATED));
        const trn_node_report *rep = report_of(a, all[k]);
        CHECK(rep && rep->key != 0 && rep->cached_cpu_seconds == 0.0);
        CHECK(rep && trn_graph_cache_has(cache, rep->key, NULL));
    }
    CHECK(outcome_is(a, "note", TRN_NODE_SKIPPED));
    CHECK(report_of(a, "note") && report_of(a, "note")->key == 0);
    CHECK(report_of(a, "noise")->cpu_seconds > 0.0 && report_of(a, "erode")->cpu_seconds > 0.0);
    CHECK(report_of(a, "erode")->has_ledger && !report_of(a, "noise")->has_ledger);
    CHECK(trn_graph_run_biome_rules(a));
    /* evaluating the same graph again reuses everything */
    trn_graph_run *same = eval_graph(&g1, &r, TRN_EROSION_FINAL, 1, cache);
    for (int k = 0; k < 6; k++)
        CHECK(outcome_is(same, all[k], TRN_NODE_REUSED));
    CHECK(same_floats(terrain_of(same), terrain_of(a), n));
    trn_graph_run_free(same);

    /* One downstream parameter changes: upstream reused, it and downstream evaluated. */
    trn_graph_run *b = eval_graph(&g2, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(b != NULL);
    const char *reused[] = {"noise", "erode", "band"};
    for (int k = 0; k < 3; k++) {
        CHECK(outcome_is(b, reused[k], TRN_NODE_REUSED));
        const trn_node_report *rb = report_of(b, reused[k]), *ra = report_of(a, reused[k]);
        CHECK(rb && ra && rb->cpu_seconds == 0.0 && rb->cached_cpu_seconds > 0.0 &&
              rb->cached_cpu_seconds == ra->cpu_seconds && rb->key == ra->key);
    }
    CHECK(report_of(b, "erode")->has_ledger &&
          report_of(b, "erode")->ledger.eroded == report_of(a, "erode")->ledger.eroded);
    for (int k = 3; k < 6; k++) {
        CHECK(outcome_is(b, all[k], TRN_NODE_EVALUATED));
        CHECK(report_of(b, all[k])->key != report_of(a, all[k])->key);
    }
    /* identical to a fresh evaluation without a cache */
    trn_graph_run *fresh = eval_graph(&g2, &r, TRN_EROSION_FINAL, 1, NULL);
    CHECK(same_floats(terrain_of(b), terrain_of(fresh), n));
    CHECK(
        same_floats(output_of(b, "erode", "deposited"), output_of(fresh, "erode", "deposited"), n));
    CHECK(same_floats(output_of(b, "band", NULL), output_of(fresh, "band", "mask"), n));
    CHECK(!same_floats(terrain_of(a), terrain_of(b), n));
    for (int k = 0; k < 6; k++)
        CHECK(outcome_is(fresh, all[k], TRN_NODE_EVALUATED));
    /* the offset is what it says: out = erode + 9 * band */
    const float *er = output_of(b, "erode", "field"), *band = output_of(b, "band", "mask");
    const float *out = terrain_of(b);
    bool exact = er && band && out;
    for (size_t k = 0; exact && k < n; k++)
        exact = out[k] == (float)((double)er[k] + 9.0 * (double)band[k]);
    CHECK(exact);
    /* outputs that are not there */
    trn_graph_value v;
    trn_error e;
    CHECK_STATUS(trn_graph_run_output(b, "note", NULL, &v, &e), TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_graph_run_output(b, "ghost", NULL, &v, &e), TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_graph_run_output(b, "erode", "mask", &v, &e), TRN_ERR_NOT_FOUND);
    CHECK(trn_graph_run_change(b, "noise") == NULL && trn_graph_run_change(b, "erode") != NULL);
    trn_graph_run_free(fresh);
    trn_graph_run_free(b);
    trn_graph_run_free(a);

    /* A tiny memory limit keeps the most recent result only; evaluation still works. */
    trn_graph_cache *small = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 1, &small, NULL));
    a = eval_graph(&g1, &r, TRN_EROSION_FINAL, 1, small);
    b = eval_graph(&g1, &r, TRN_EROSION_FINAL, 1, small);
    CHECK(a && b && same_floats(terrain_of(a), terrain_of(b), n));
    CHECK(outcome_is(b, "noise", TRN_NODE_EVALUATED));
    trn_graph_run_free(a);
    trn_graph_run_free(b);
    trn_graph_cache_free(small);
    trn_graph_cache_free(cache);
    trn_graph_cache_free(NULL);
    trn_graph_dispose(&g1);
    trn_graph_dispose(&g2);
    trn_recipe_dispose(&r);
}

static void test_disk_cache(void)
{
    char dir[512], cdir[600];
    if (!trn_test_tmpdir(dir, sizeof dir)) {
        CHECK(false && "no temporary folder");
        return;
    }
    snprintf(cdir, sizeof cdir, "%s/cache/nested", dir);
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    const size_t n = samples_of(&r);
    char text[4096];
    trn_graph g;
    cache_graph(text, sizeof text, 5.0);
    CHECK(parse_graph(text, &g));
    const char *all[] = {"noise", "erode", "band", "lift", "biomes", "out"};

    trn_graph_cache *c1 = NULL, *c2 = NULL, *c3 = NULL, *c4 = NULL;
    CHECK_OK(trn_graph_cache_new(cdir, 0, &c1, NULL));
    CHECK(trn_test_exists(cdir));
    trn_graph_run *a = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c1);
    CHECK(a != NULL);
    CHECK_EQ_INT(count_files(cdir), 6);
    for (int k = 0; k < 6; k++)
        CHECK(report_of(a, all[k]) && key_file_exists(cdir, report_of(a, all[k])->key));

    /* Another cache object on the directory (another process): everything from disk. */
    CHECK_OK(trn_graph_cache_new(cdir, 0, &c2, NULL));
    double cost = -1.0;
    CHECK(trn_graph_cache_has(c2, report_of(a, "erode")->key, &cost));
    CHECK(cost == report_of(a, "erode")->cpu_seconds);
    CHECK(!trn_graph_cache_has(c2, 12345, &cost) && cost == 0.0);
    trn_graph_run *b = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c2);
    for (int k = 0; k < 6; k++) {
        CHECK(outcome_is(b, all[k], TRN_NODE_REUSED_DISK));
        const trn_node_report *rb = report_of(b, all[k]);
        CHECK(rb && rb->cpu_seconds == 0.0 &&
              rb->cached_cpu_seconds == report_of(a, all[k])->cpu_seconds);
    }
    CHECK(same_floats(terrain_of(a), terrain_of(b), n));
    CHECK(same_floats(output_of(a, "erode", "eroded"), output_of(b, "erode", "eroded"), n));
    CHECK(same_floats(trn_graph_run_change(a, "erode"), trn_graph_run_change(b, "erode"), n));
    CHECK(report_of(b, "erode")->has_ledger &&
          memcmp(&report_of(b, "erode")->ledger, &report_of(a, "erode")->ledger,
                 sizeof(trn_erosion_ledger)) == 0);
    CHECK(trn_graph_run_biome_rules(b));
    trn_graph_run_free(b);
    /* the same cache again: now from memory */
    b = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c2);
    CHECK(outcome_is(b, "erode", TRN_NODE_REUSED));
    trn_graph_run_free(b);

    /* A corrupted file is recomputed, not trusted (and rewritten). */
    char path[1024];
    snprintf(path, sizeof path, "%s/%016llx.tnc", cdir,
             (unsigned long long)report_of(a, "erode")->key);
    size_t size = 0;
    uint8_t *bytes = trn_test_read_file(path, &size);
    CHECK(bytes && size > 200);
    if (bytes && size > 200) {
        bytes[size / 2] ^= 0x40;
        CHECK(trn_test_write_file(path, bytes, size));
    }
    free(bytes);
    CHECK_OK(trn_graph_cache_new(cdir, 0, &c3, NULL));
    CHECK(!trn_graph_cache_has(c3, report_of(a, "erode")->key, NULL));
    b = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c3);
    CHECK(outcome_is(b, "noise", TRN_NODE_REUSED_DISK));
    CHECK(outcome_is(b, "erode", TRN_NODE_EVALUATED));
    CHECK(outcome_is(b, "lift", TRN_NODE_REUSED_DISK));
    CHECK(same_floats(terrain_of(a), terrain_of(b), n));
    CHECK(same_floats(output_of(a, "erode", "field"), output_of(b, "erode", "field"), n));
    trn_graph_run_free(b);
    /* A truncated file too. */
    snprintf(path, sizeof path, "%s/%016llx.tnc", cdir,
             (unsigned long long)report_of(a, "noise")->key);
    bytes = trn_test_read_file(path, &size);
    CHECK(bytes && trn_test_write_file(path, bytes, size / 3));
    free(bytes);
    CHECK_OK(trn_graph_cache_new(cdir, 0, &c4, NULL));
    b = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c4);
    CHECK(outcome_is(b, "noise", TRN_NODE_EVALUATED));
    CHECK(outcome_is(b, "erode", TRN_NODE_REUSED_DISK)); /* rewritten by c3 */
    CHECK(same_floats(terrain_of(a), terrain_of(b), n));
    trn_graph_run_free(b);
    CHECK_EQ_INT(count_files(cdir), 6);

    /* A cache directory that cannot be made is an error. */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/file", dir);
    CHECK(trn_test_write_file(bad, "x", 1));
    snprintf(bad, sizeof bad, "%s/file/sub", dir);
    trn_graph_cache *c5 = (trn_graph_cache *)&g;
    trn_error e;
    CHECK(trn_graph_cache_new(bad, 0, &c5, &e) != TRN_OK);
    CHECK(c5 == NULL);

    /* A disk budget of one byte: setting it empties the folder; each result written pushes out
     * the one before, so only the last node's stays; the memory side still reuses everything. */
    trn_graph_cache *c6 = NULL;
    CHECK_OK(trn_graph_cache_new(cdir, 0, &c6, NULL));
    trn_graph_cache_set_disk_limit(c6, 1);
    CHECK_EQ_INT(count_files(cdir), 0);
    trn_graph_run *f = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c6);
    CHECK(f != NULL);
    CHECK_EQ_INT(count_files(cdir), 1);
    CHECK(f && key_file_exists(cdir, report_of(f, "out")->key));
    CHECK(same_floats(terrain_of(a), terrain_of(f), n));
    trn_graph_run_free(f);
    f = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, c6);
    CHECK(outcome_is(f, "erode", TRN_NODE_REUSED));
    trn_graph_run_free(f);
    trn_graph_cache_set_disk_limit(NULL, 1); /* no-op */
    trn_graph_cache_free(c6);

    trn_graph_run_free(a);
    trn_graph_cache_free(c1);
    trn_graph_cache_free(c2);
    trn_graph_cache_free(c3);
    trn_graph_cache_free(c4);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* ---- quality ---- */

static void test_quality(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    const size_t n = samples_of(&r);
    /* Without erosion, preview and final are the same bytes and the same keys. */
    trn_graph plain;
    CHECK(parse_graph(G_HEAD N_BASE
                      ",{\"id\":\"dr\",\"type\":\"drainage\",\"inputs\":{\"field\":"
                      "{\"node\":\"base\"}}},{\"id\":\"off\",\"type\":"
                      "\"height_offset\",\"inputs\":{\"field\":{\"node\":\"base\"},"
                      "\"mask\":{\"node\":\"dr\",\"pin\":\"accumulation\"}}}," N_OUT("off") "]}",
                      &plain));
    trn_graph_run *p = eval_graph(&plain, &r, TRN_EROSION_PREVIEW, 1, NULL);
    trn_graph_run *f = eval_graph(&plain, &r, TRN_EROSION_FINAL, 1, NULL);
    CHECK(same_floats(terrain_of(p), terrain_of(f), n));
    uint64_t kp[4], kf[4];
    CHECK_OK(trn_graph_keys(&plain, &r, TRN_EROSION_PREVIEW, kp, NULL));
    CHECK_OK(trn_graph_keys(&plain, &r, TRN_EROSION_FINAL, kf, NULL));
    CHECK(memcmp(kp, kf, sizeof kp) == 0);
    trn_graph_run_free(p);
    trn_graph_run_free(f);
    trn_graph_dispose(&plain);

    /* With erosion they differ, and so do the erosion node's keys and everything downstream. */
    char text[4096];
    trn_graph g;
    cache_graph(text, sizeof text, 5.0);
    CHECK(parse_graph(text, &g));
    uint64_t qp[7], qf[7];
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_PREVIEW, qp, NULL));
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, qf, NULL));
    CHECK(key_of(&g, qp, "noise") == key_of(&g, qf, "noise"));
    CHECK(key_of(&g, qp, "band") == key_of(&g, qf, "band"));
    CHECK(key_of(&g, qp, "erode") != key_of(&g, qf, "erode"));
    CHECK(key_of(&g, qp, "lift") != key_of(&g, qf, "lift"));
    CHECK(key_of(&g, qp, "out") != key_of(&g, qf, "out"));

    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(dir, 0, &cache, NULL));
    p = eval_graph(&g, &r, TRN_EROSION_PREVIEW, 1, cache);
    CHECK(p != NULL);
    for (uint32_t k = 0; k < g.node_count; k++)
        if (qp[k]) CHECK(trn_graph_cache_has(cache, qp[k], NULL));
    /* only the quality-independent results reach the directory */
    CHECK_EQ_INT(count_files(dir), 2);
    CHECK(key_file_exists(dir, key_of(&g, qp, "noise")));
    CHECK(key_file_exists(dir, key_of(&g, qp, "band")));
    CHECK(!key_file_exists(dir, key_of(&g, qp, "erode")));
    CHECK(!key_file_exists(dir, key_of(&g, qp, "out")));
    /* preview erosion ran with fewer droplets and no thermal pass */
    const trn_node_report *pe = report_of(p, "erode");
    CHECK(pe && pe->has_ledger && pe->ledger.droplets == 450);

    f = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(outcome_is(f, "noise", TRN_NODE_REUSED));
    CHECK(outcome_is(f, "band", TRN_NODE_REUSED));
    CHECK(outcome_is(f, "erode", TRN_NODE_EVALUATED));
    CHECK(outcome_is(f, "lift", TRN_NODE_EVALUATED));
    CHECK(report_of(f, "erode")->ledger.droplets == 1500);
    CHECK_EQ_INT(count_files(dir), 6);
    CHECK(!same_floats(terrain_of(p), terrain_of(f), n));
    /* preview differs only where erosion reached: the noise and mask are the same bytes */
    CHECK(same_floats(output_of(p, "noise", NULL), output_of(f, "noise", NULL), n));
    CHECK(same_floats(output_of(p, "band", NULL), output_of(f, "band", NULL), n));
    /* final equals a fresh final evaluation; a second cache never hands out preview results */
    trn_graph_run *fresh = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, NULL);
    CHECK(same_floats(terrain_of(f), terrain_of(fresh), n));
    trn_graph_cache *other = NULL;
    CHECK_OK(trn_graph_cache_new(dir, 0, &other, NULL));
    trn_graph_run *p2 = eval_graph(&g, &r, TRN_EROSION_PREVIEW, 1, other);
    CHECK(outcome_is(p2, "noise", TRN_NODE_REUSED_DISK));
    CHECK(outcome_is(p2, "erode", TRN_NODE_EVALUATED));
    CHECK(same_floats(terrain_of(p), terrain_of(p2), n));
    CHECK_EQ_INT(count_files(dir), 6);
    trn_graph_run_free(p2);
    trn_graph_cache_free(other);
    trn_graph_run_free(fresh);
    trn_graph_run_free(p);
    trn_graph_run_free(f);

    /* Through generation: preview is reported and differs from final. */
    trn_recipe rg;
    CHECK(load_recipe(64, text, &rg));
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.quality = TRN_EROSION_PREVIEW;
    o.cache = cache;
    trn_generated gp, gf;
    CHECK_OK(trn_recipe_generate(&rg, &o, &gp, NULL, NULL, NULL));
    CHECK(gp.quality == TRN_EROSION_PREVIEW && gp.node_count == 7);
    o.quality = TRN_EROSION_FINAL;
    CHECK_OK(trn_recipe_generate(&rg, &o, &gf, NULL, NULL, NULL));
    CHECK(gf.quality == TRN_EROSION_FINAL);
    CHECK(gf.node_count == 7 && gf.nodes[1].outcome == TRN_NODE_REUSED);
    CHECK(heights_hash(&gp) != heights_hash(&gf));
    trn_generated_dispose(&gp);
    trn_generated_dispose(&gf);
    trn_recipe_dispose(&rg);
    /* an unknown quality is refused */
    o.quality = (trn_erosion_quality)7;
    trn_graph_options go;
    memset(&go, 0, sizeof go);
    go.quality = (trn_erosion_quality)7;
    trn_graph_run *run = NULL;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &go, &run, NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    go.quality = TRN_EROSION_FINAL;
    go.threads = -1;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &go, &run, NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK(run == NULL);
    trn_graph_cache_free(cache);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* ---- determinism, ledger, drainage, masks ---- */

static const char *const SIM_GRAPH =
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"noise\",\"type\":\"noise_terrain\",\"params\":{\"profile\":\"ridged\","
    "\"height_variation\":90,\"feature_size\":110,\"warp_amplitude\":20}},"
    "{\"id\":\"low\",\"type\":\"flat_terrain\",\"params\":{\"height\":12}},"
    "{\"id\":\"path\",\"type\":\"path_distance_mask\",\"inputs\":{\"field\":{\"node\":\"noise\"}},"
    "\"params\":{\"points\":[[0,120],[256,140]],\"width\":10,\"falloff\":30}},"
    "{\"id\":\"blend\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"noise\"},"
    "\"b\":{\"node\":\"low\"},\"mask\":{\"node\":\"path\"}},\"params\":{\"amount\":0.8}},"
    "{\"id\":\"drain\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"blend\"}}},"
    "{\"id\":\"erode\",\"type\":\"erosion\",\"inputs\":{\"field\":{\"node\":\"blend\"},"
    "\"drainage\":{\"node\":\"drain\",\"pin\":\"drainage\"}},\"params\":{\"droplets\":6000,"
    "\"iterations\":2,\"thermal_iterations\":4}},"
    "{\"id\":\"steep\",\"type\":\"slope_mask\",\"inputs\":{\"field\":{\"node\":\"erode\","
    "\"pin\":\"field\"}},\"params\":{\"min\":20,\"max\":60}},"
    "{\"id\":\"lift\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":\"erode\","
    "\"pin\":\"field\"},\"mask\":{\"node\":\"steep\"}},\"params\":{\"offset\":3}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"lift\"}}}]}";

static void test_determinism(void)
{
    trn_recipe r;
    CHECK(load_recipe(96, NULL, &r));
    const size_t n = samples_of(&r);
    trn_graph g;
    CHECK(parse_graph(SIM_GRAPH, &g));
    trn_graph_run *runs[3] = {NULL, NULL, NULL};
    for (int t = 0; t < 3; t++) {
        runs[t] = eval_graph(&g, &r, TRN_EROSION_FINAL, t + 1, NULL);
        CHECK(runs[t] != NULL);
    }
    for (int t = 1; t < 3; t++) {
        CHECK(same_floats(terrain_of(runs[0]), terrain_of(runs[t]), n));
        CHECK(same_floats(output_of(runs[0], "erode", "deposited"),
                          output_of(runs[t], "erode", "deposited"), n));
        CHECK(same_floats(output_of(runs[0], "drain", "accumulation"),
                          output_of(runs[t], "drain", "accumulation"), n));
        CHECK(memcmp(&report_of(runs[0], "erode")->ledger, &report_of(runs[t], "erode")->ledger,
                     sizeof(trn_erosion_ledger)) == 0);
    }
    /* A pinned hash catches an accidental change of any node's output (update it, with a
     * reason, when a node's version is bumped). */
    const float *h = terrain_of(runs[0]);
    const uint64_t hash = h ? XXH64(h, n * sizeof *h, 0) : 0;
    const uint64_t pinned = 0x3040c9817161fbc9ull;
    if (hash != pinned)
        fprintf(stderr, "SIM_GRAPH heights hash 0x%016llx (pinned 0x%016llx)\n",
                (unsigned long long)hash, (unsigned long long)pinned);
    CHECK(hash == pinned);
    for (int t = 0; t < 3; t++)
        trn_graph_run_free(runs[t]);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

static void test_ledger(void)
{
    trn_recipe r;
    CHECK(load_recipe(96, NULL, &r));
    const size_t n = samples_of(&r);
    trn_graph g;
    CHECK(parse_graph(SIM_GRAPH, &g));
    trn_graph_run *run = eval_graph(&g, &r, TRN_EROSION_FINAL, 2, NULL);
    const trn_node_report *rep = report_of(run, "erode");
    CHECK(rep && rep->has_ledger);
    if (!rep || !run) {
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
        return;
    }
    const trn_erosion_ledger *l = &rep->ledger;
    CHECK_EQ_INT(l->droplets, 12000);
    CHECK(l->eroded > 0.0 && l->deposited > 0.0);
    CHECK(fabs(l->eroded - (l->deposited + l->exported + l->suspended)) <= 1e-6 * l->eroded);
    const float *in = output_of(run, "blend", NULL), *out = output_of(run, "erode", "field");
    const float *dep = output_of(run, "erode", "deposited"),
                *cut = output_of(run, "erode", "eroded");
    const float *change = trn_graph_run_change(run, "erode");
    CHECK(in && out && dep && cut && change);
    if (in && out && dep && cut && change) {
        double net = 0.0;
        float dmax = 0.0f, cmax = 0.0f;
        bool consistent = true, ranges = true;
        for (size_t k = 0; k < n; k++) {
            net += (double)change[k];
            consistent =
                consistent && fabsf(out[k] - (in[k] + change[k])) <=
                                 1e-6f * (fabsf(out[k]) + fabsf(in[k]) + 1.0f);
            ranges = ranges && dep[k] >= 0.0f && dep[k] <= 1.0f && cut[k] >= 0.0f && cut[k] <= 1.0f;
            if (change[k] > 0.0f) ranges = ranges && cut[k] == 0.0f;
            if (change[k] < 0.0f) ranges = ranges && dep[k] == 0.0f;
            if (dep[k] > dmax) dmax = dep[k];
            if (cut[k] > cmax) cmax = cut[k];
        }
        CHECK(consistent);
        CHECK(ranges);
        CHECK(dmax == 1.0f && cmax == 1.0f);
        /* thermal relaxation moves material without making or losing it */
        CHECK(fabs(net - (l->deposited - l->eroded)) <= 1e-3 * l->eroded);
    }
    /* Zero iterations: no droplets, an unchanged field, all-zero masks. */
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_graph g0;
    CHECK(parse_graph(G_HEAD N_BASE ",{\"id\":\"er\",\"type\":\"erosion\",\"inputs\":{\"field\":{"
                                    "\"node\":\"base\"}},\"params\":{\"iterations\":0,"
                                    "\"thermal_strength\":0}},{\"id\":\"out\",\"type\":"
                                    "\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"er\","
                                    "\"pin\":\"field\"}}}]}",
                      &g0));
    run = eval_graph(&g0, &r, TRN_EROSION_FINAL, 1, NULL);
    CHECK(run && same_floats(terrain_of(run), output_of(run, "base", NULL), n));
    rep = report_of(run, "er");
    CHECK(rep && rep->ledger.droplets == 0 && rep->ledger.eroded == 0.0);
    const float *d0 = output_of(run, "er", "deposited");
    bool zero = d0 != NULL;
    for (size_t k = 0; zero && k < n; k++)
        zero = d0[k] == 0.0f;
    CHECK(zero);
    trn_graph_run_free(run);
    trn_graph_dispose(&g0);
    trn_recipe_dispose(&r);
}

static uint32_t outlets(const trn_graph_run *run, const char *id)
{
    trn_graph_value v;
    if (!run || trn_graph_run_output(run, id, "drainage", &v, NULL) || !v.drainage) return 0;
    uint32_t n = 0;
    const size_t count = ((size_t)v.cells_x + 1u) * ((size_t)v.cells_z + 1u);
    for (size_t k = 0; k < count; k++)
        n += v.drainage->flow_dir[k] == TRN_DRAIN_OUTLET;
    return n;
}

static void test_drainage_node(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    const uint32_t w = r.cells_x + 1u, h = r.cells_z + 1u;
#define DRAIN_FMT                                                                                  \
    G_HEAD N_BASE ",{\"id\":\"dr\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":"         \
                  "\"base\"}},\"params\":{%s}},{\"id\":\"off\",\"type\":\"height_offset\","        \
                  "\"inputs\":{\"field\":{\"node\":\"base\"},\"mask\":{\"node\":\"dr\","           \
                  "\"pin\":\"accumulation\"}}}," N_OUT("off") "]}"
    char text[2048];
    snprintf(text, sizeof text, DRAIN_FMT, "\"sea\":\"off\"");
    trn_graph off, on;
    CHECK(parse_graph(text, &off));
    snprintf(text, sizeof text, DRAIN_FMT, "\"sea\":\"on\",\"sea_level\":25");
    CHECK(parse_graph(text, &on));
    trn_graph_run *a = eval_graph(&off, &r, TRN_EROSION_FINAL, 1, NULL);
    trn_graph_run *b = eval_graph(&on, &r, TRN_EROSION_FINAL, 1, NULL);
    /* sea off: only the border drains out */
    CHECK_EQ_INT(outlets(a, "dr"), 2u * w + 2u * h - 4u);
    CHECK(outlets(b, "dr") > 2u * w + 2u * h - 4u);
    trn_graph_value v;
    CHECK_OK(trn_graph_run_output(a, "dr", NULL, &v, NULL));
    CHECK(v.kind == TRN_PIN_DRAINAGE && v.drainage && isnan(v.drainage->sea_level));
    CHECK(v.source && same_floats(v.source, output_of(a, "base", NULL), (size_t)w * h));
    CHECK_OK(trn_graph_run_output(b, "dr", "drainage", &v, NULL));
    CHECK(v.drainage && v.drainage->sea_level == 25.0);
    /* the accumulation mask: 0 on the border, largest interior value 1 */
    for (int which = 0; which < 2; which++) {
        const float *m = output_of(which ? b : a, "dr", "accumulation");
        CHECK(m != NULL);
        if (!m) continue;
        float inner_max = 0.0f;
        bool border_zero = true, in_range = true;
        for (uint32_t j = 0; j < h; j++)
            for (uint32_t i = 0; i < w; i++) {
                const float x = m[(size_t)j * w + i];
                in_range = in_range && x >= 0.0f && x <= 1.0f;
                if (i == 0 || j == 0 || i == w - 1 || j == h - 1)
                    border_zero = border_zero && x == 0.0f;
                else if (x > inner_max)
                    inner_max = x;
            }
        CHECK(border_zero && in_range);
        CHECK(inner_max == 1.0f);
    }
    /* The recipe's own sea level is used when the node names none. */
    snprintf(text, sizeof text, DRAIN_FMT, "");
    trn_graph dflt;
    CHECK(parse_graph(text, &dflt));
    trn_graph_run *c = eval_graph(&dflt, &r, TRN_EROSION_FINAL, 1, NULL);
    CHECK_OK(trn_graph_run_output(c, "dr", NULL, &v, NULL));
    CHECK(v.drainage && v.drainage->sea_level == trn_recipe_sea_level(&r, NULL, NULL, 0));
    trn_graph_run_free(c);
    trn_graph_dispose(&dflt);
    trn_graph_run_free(a);
    trn_graph_run_free(b);
    trn_graph_dispose(&off);
    trn_graph_dispose(&on);
    trn_recipe_dispose(&r);
}

static void test_blend_polygon(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r)); /* 4 world units per cell */
    trn_graph g;
    CHECK(parse_graph(
        G_HEAD
        "{\"id\":\"a\",\"type\":\"flat_terrain\",\"params\":{\"height\":-2.5}},"
        "{\"id\":\"b\",\"type\":\"flat_terrain\",\"params\":{\"height\":10}},"
        "{\"id\":\"poly\",\"type\":\"polygon_mask\",\"inputs\":{\"field\":{\"node\":\"a\"}},"
        "\"params\":{\"points\":[[64,64],[192,64],[192,192],[64,192]],\"falloff\":16}},"
        "{\"id\":\"mix\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"a\"},"
        "\"b\":{\"node\":\"b\"},\"mask\":{\"node\":\"poly\"}},\"params\":{\"amount\":1}}," N_OUT(
            "mix") "]}",
        &g));
    trn_graph_run *run = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, NULL);
    const float *h = terrain_of(run);
    CHECK(h != NULL);
    if (h) {
        const uint32_t w = r.cells_x + 1u;
        bool inside = true, outside = true, between = true;
        for (uint32_t j = 0; j < w; j++)
            for (uint32_t i = 0; i < w; i++) {
                const float v = h[(size_t)j * w + i];
                const bool in = i >= 16 && i <= 48 && j >= 16 && j <= 48; /* edge included */
                const bool far = i < 12 || i > 52 || j < 12 || j > 52;    /* > falloff away */
                if (in)
                    inside = inside && v == 10.0f;
                else if (far)
                    outside = outside && v == -2.5f;
                else
                    between = between && v >= -2.5f && v <= 10.0f;
            }
        CHECK(inside);
        CHECK(outside);
        CHECK(between);
        /* just outside the edge: partly blended */
        const float edge = h[(size_t)32 * w + 14];
        CHECK(edge > -2.5f && edge < 10.0f);
    }
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* A polygon's outline warped: not the exact square any more, the same bytes each time, keyed
 * and seeded by the world seed unless the node names a seed; unwarped, the seed is no input. */
static void test_polygon_edge_warp(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    const char *head =
        G_HEAD "{\"id\":\"a\",\"type\":\"flat_terrain\",\"params\":{\"height\":0}},"
               "{\"id\":\"b\",\"type\":\"flat_terrain\",\"params\":{\"height\":10}},"
               "{\"id\":\"poly\",\"type\":\"polygon_mask\",\"inputs\":{\"field\":{\"node\":\"a\"}},"
               "\"params\":{\"points\":[[64,64],[192,64],[192,192],[64,192]],\"falloff\":0";
    const char *tail =
        "}},"
        "{\"id\":\"mix\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"a\"},"
        "\"b\":{\"node\":\"b\"},\"mask\":{\"node\":\"poly\"}},\"params\":{\"amount\":1}}," N_OUT(
            "mix") "]}";
    const char *variants[4] = {"", ",\"edge_warp\":24,\"edge_warp_size\":64",
                               ",\"edge_warp\":24,\"edge_warp_size\":64,\"seed\":5",
                               ",\"edge_warp\":0,\"seed\":5"};
    const size_t n = samples_of(&r);
    float *h[2][4] = {{NULL}};
    uint64_t keys[2][4];
    for (int world = 0; world < 2; world++) {
        r.seed = world == 0 ? 1u : 2u;
        for (int v = 0; v < 4; v++) {
            char text[4096];
            snprintf(text, sizeof text, "%s%s%s", head, variants[v], tail);
            trn_graph g;
            CHECK(parse_graph(text, &g));
            uint64_t k[8] = {0};
            trn_error e;
            CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, k, &e));
            keys[world][v] = key_of(&g, k, "poly");
            trn_graph_run *run = eval_graph(&g, &r, TRN_EROSION_FINAL, 1 + v % 2, NULL);
            const float *t = terrain_of(run);
            h[world][v] = malloc(n * sizeof(float));
            if (t && h[world][v]) memcpy(h[world][v], t, n * sizeof(float));
            trn_graph_run_free(run);
            trn_graph_dispose(&g);
        }
    }
    /* Warped differs from exact; an explicit edge_warp of 0 is the exact shape. */
    CHECK(!same_floats(h[0][0], h[0][1], n));
    CHECK(same_floats(h[0][0], h[0][3], n));
    /* The world seed moves a warp without its own seed, and nothing else. */
    CHECK(!same_floats(h[0][1], h[1][1], n));
    CHECK(keys[0][1] != keys[1][1]);
    CHECK(same_floats(h[0][2], h[1][2], n));
    CHECK(keys[0][2] == keys[1][2]);
    CHECK(same_floats(h[0][0], h[1][0], n));
    CHECK(keys[0][0] == keys[1][0]);
    CHECK(!same_floats(h[0][1], h[0][2], n));
    /* Deep inside and far outside keep the exact heights; the edge band wanders. */
    const uint32_t w = r.cells_x + 1u;
    if (h[0][1]) {
        CHECK(h[0][1][(size_t)32 * w + 32] == 10.0f);
        CHECK(h[0][1][(size_t)2 * w + 2] == 0.0f);
        int partial = 0;
        for (size_t k = 0; k < n; k++)
            partial += h[0][1][k] != h[0][0][k];
        CHECK(partial > 40);
    }
    for (int world = 0; world < 2; world++)
        for (int v = 0; v < 4; v++)
            free(h[world][v]);
    trn_recipe_dispose(&r);
}

/* ---- progress and cancel ---- */

typedef struct prog {
    int calls, erode_calls, bad_prefix;
    int cancel_after; /* erosion reports before cancelling; -1 = never */
    double last;
    bool backwards;
} prog;

static int on_progress(double done, const char *stage, void *user)
{
    prog *p = user;
    p->calls++;
    if (done + 1e-12 < p->last) p->backwards = true;
    p->last = done;
    if (!stage || strncmp(stage, "node ", 5) != 0 || !strstr(stage, ": ")) {
        if (p->bad_prefix++ == 0) fprintf(stderr, "stage without a node prefix: %s\n", stage);
    }
    if (p->backwards) fprintf(stderr, "progress went back to %g at %s\n", done, stage);
    if (stage && strncmp(stage, "node erode: ", 12) == 0) {
        p->erode_calls++;
        if (p->cancel_after >= 0 && p->erode_calls > p->cancel_after) return TRN_CANCEL;
    }
    return TRN_CONTINUE;
}

static void test_progress_cancel(void)
{
    trn_recipe r;
    CHECK(load_recipe(64, NULL, &r));
    char text[4096];
    trn_graph g;
    cache_graph(text, sizeof text, 5.0);
    CHECK(parse_graph(text, &g));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_graph_run *run = NULL;
    prog p = {0, 0, 0, -1, 0.0, false};
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, on_progress, &p, NULL));
    CHECK(run != NULL);
    CHECK(p.bad_prefix == 0 && !p.backwards);
    CHECK(p.erode_calls >= 3); /* erosion reports within */
    const int erode_total = p.erode_calls;
    trn_graph_run_free(run);

    /* Cancel inside erosion: no run, TRN_ERR_CANCELLED; completed nodes stay cached. */
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    o.cache = cache;
    prog c = {0, 0, 0, 2, 0.0, false};
    run = (trn_graph_run *)&c;
    trn_error e;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, on_progress, &c, &e), TRN_ERR_CANCELLED);
    CHECK(run == NULL);
    CHECK_EQ_INT(e.code, TRN_ERR_CANCELLED);
    CHECK(c.erode_calls == 3 && c.erode_calls < erode_total);
    uint64_t keys[7];
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(trn_graph_cache_has(cache, key_of(&g, keys, "noise"), NULL));
    CHECK(!trn_graph_cache_has(cache, key_of(&g, keys, "erode"), NULL));
    CHECK(!trn_graph_cache_has(cache, key_of(&g, keys, "out"), NULL));
    /* the next evaluation picks up where it stopped */
    run = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(outcome_is(run, "noise", TRN_NODE_REUSED));
    CHECK(outcome_is(run, "erode", TRN_NODE_EVALUATED));
    trn_graph_run_free(run);
    /* Cancelling at the first report of all. */
    prog first = {0, 0, 0, 0, 0.0, false};
    o.cache = NULL;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, on_progress, &first, &e), TRN_ERR_CANCELLED);
    CHECK(run == NULL);
    trn_graph_cache_free(cache);

    /* Through generation: stages keep the node prefix, a cancel leaves the output empty. */
    trn_recipe rg;
    CHECK(load_recipe(64, text, &rg));
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    prog gc = {0, 0, 0, 1, 0.0, false};
    CHECK_STATUS(trn_recipe_generate(&rg, NULL, &gen, on_progress, &gc, &e), TRN_ERR_CANCELLED);
    CHECK(gen.field.heights == NULL && gen.nodes == NULL);
    CHECK(gc.erode_calls == 2);
    trn_recipe_dispose(&rg);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* ---- large documents ---- */

/* A chain of count nodes listed output first (the order that makes a depth-first walk from the
 * first node as deep as the chain): out <- n[count-2] <- ... <- n1 <- n0 (flat). */
static bool make_chain(uint32_t count, trn_graph *g)
{
    memset(g, 0, sizeof *g);
    g->format_version = 1;
    g->nodes = calloc(count, sizeof *g->nodes);
    g->output = strdup("out");
    if (!g->nodes || !g->output) return false;
    g->node_count = count;
    for (uint32_t k = 0; k < count; k++) {
        /* document position k holds chain index count-1-k */
        const uint32_t c = count - 1u - k;
        trn_graph_node *n = &g->nodes[k];
        char id[32], src[32];
        snprintf(id, sizeof id, c == count - 1u ? "out" : "n%u", c);
        snprintf(src, sizeof src, "n%u", c ? c - 1u : 0u);
        n->id = strdup(id);
        n->type = strdup(c == 0            ? "flat_terrain"
                         : c == count - 1u ? "terrain_output"
                                           : "height_offset");
        if (!n->id || !n->type) return false;
        if (c > 0) {
            n->inputs = calloc(1, sizeof *n->inputs);
            if (!n->inputs) return false;
            n->input_count = 1;
            n->inputs[0].pin = strdup("field");
            n->inputs[0].node = strdup(src);
            if (!n->inputs[0].pin || !n->inputs[0].node) return false;
        }
    }
    return true;
}

static void test_long_chain(void)
{
    /* 20,000 nodes (a 1.6 MB document, well within the parser's 100,000): checking, keys and
     * printing must neither overflow the stack (recursive walks) nor take minutes. */
    trn_graph g;
    CHECK(make_chain(20000, &g));
    trn_recipe r;
    CHECK(load_recipe(8, NULL, &r));
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check(&g, &r, &d, NULL));
    CHECK_EQ_INT(d.count, 0);
    trn_graph_diagnostics_dispose(&d);
    uint64_t *keys = calloc(g.node_count, sizeof *keys);
    CHECK(keys != NULL);
    if (keys) {
        CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
        CHECK(keys[0] != 0 && keys[g.node_count - 1] != 0 && keys[0] != keys[1]);
    }
    free(keys);
    /* closing the chain into a cycle: found, without recursion trouble either */
    free(g.nodes[g.node_count - 1].type);
    g.nodes[g.node_count - 1].type = strdup("height_offset");
    g.nodes[g.node_count - 1].inputs = calloc(1, sizeof *g.nodes->inputs);
    if (g.nodes[g.node_count - 1].inputs) {
        g.nodes[g.node_count - 1].input_count = 1;
        g.nodes[g.node_count - 1].inputs[0].pin = strdup("field");
        g.nodes[g.node_count - 1].inputs[0].node = strdup("n19998");
    }
    CHECK_OK(trn_graph_check(&g, &r, &d, NULL));
    CHECK_EQ_INT(count_check(&d, "cycle"), 1);
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* The world size is part of every node key: a result computed for another size (same cells,
 * same heights for a flat field) is never reused, and its value reports the size it has. */
static void test_key_world_size(void)
{
    const char *graph = "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                        "{\"id\":\"flat\",\"type\":\"flat_terrain\",\"params\":{\"height\":3}},"
                        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":"
                        "{\"field\":{\"node\":\"flat\"}}}]}";
    trn_recipe r;
    CHECK(load_recipe(8, graph, &r));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t base[2], keys[2];
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, base, NULL));
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] == base[0] && keys[1] == base[1]);
    r.size_x = 512;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] != base[0] && keys[1] != base[1]);
    r.size_x = 256;
    r.size_z = 512;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] != base[0] && keys[1] != base[1]);
    r.size_z = 256;
    r.cells_x = 9;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] != base[0]);
    r.cells_x = 8;
    r.cells_z = 9;
    CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys, NULL));
    CHECK(keys[0] != base[0]);
    r.cells_z = 8;

    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(NULL, 0, &cache, NULL));
    trn_graph_run *a = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(outcome_is(a, "flat", TRN_NODE_EVALUATED));
    r.size_x = 512;
    trn_graph_run *b = eval_graph(&g, &r, TRN_EROSION_FINAL, 1, cache);
    CHECK(outcome_is(b, "flat", TRN_NODE_EVALUATED));
    trn_graph_value v;
    CHECK_OK(trn_graph_run_terrain(b, &v, NULL));
    CHECK(v.size_x == 512 && v.size_z == 256 && v.cells_x == 8 && v.values[0] == 3.0f);
    trn_graph_run_free(a);
    trn_graph_run_free(b);
    trn_graph_cache_free(cache);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* ---- work budgets ---- */

/* flat -> erosion (params as given) -> output, on 8 x 8 cells (81 samples) over 256 x 256. */
static char *erosion_graph(const char *params)
{
    static const char fmt[] =
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"flat\",\"type\":\"noise_terrain\",\"params\":{\"octaves\":2}},"
        "{\"id\":\"erode\",\"type\":\"erosion\",\"params\":{%s},"
        "\"inputs\":{\"field\":{\"node\":\"flat\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
        "\"erode\",\"pin\":\"field\"}}}]}";
    char graph[1024];
    snprintf(graph, sizeof graph, fmt, params);
    return recipe_text(8, graph);
}

static trn_status eval_budget(const char *params, uint64_t max_work, trn_error *e)
{
    char *text = erosion_graph(params);
    trn_recipe r;
    trn_status st = trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, e);
    free(text);
    if (st) return st;
    trn_graph g;
    st = trn_graph_from_recipe(&r, &g, e);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.max_work = max_work;
    trn_graph_run *run = NULL;
    if (!st) st = trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, e);
    CHECK(st ? run == NULL : run != NULL);
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    return st;
}

static void test_work_budget(void)
{
    /* 81 samples + 100 droplets x 5 iterations x 10 steps, no thermal pass: 5081 units. */
    const char *cheap = "\"droplets\":100,\"iterations\":5,\"lifetime\":10,"
                        "\"thermal_iterations\":0";
    char *text = erosion_graph(cheap);
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, NULL));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t work[3] = {7, 7, 7}, preview[3];
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
    CHECK(work[0] == 81 * 2 && work[1] == 5081 && work[2] == 81); /* 2 octaves */
    /* preview: 30 droplets x 3 iterations x 4 steps */
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_PREVIEW, preview, NULL));
    CHECK(preview[1] == 81 + 30 * 3 * 4);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    free(text);

    /* The budget itself is allowed, one unit less refuses before anything runs. */
    trn_error e;
    CHECK_OK(eval_budget(cheap, 5081, &e));
    CHECK_STATUS(eval_budget(cheap, 5080, &e), TRN_ERR_LIMIT);
    CHECK(strcmp(e.node_id, "erode") == 0);
    CHECK_CONTAINS(e.message, "graph.nodes[1].params.iterations: node 'erode' (erosion): work "
                              "5081 (100 droplets x 5 iterations x 10 lifetime = 5000 droplet "
                              "steps, + 0 thermal_iterations x 81 samples) exceeds the work budget "
                              "of 5080; lower iterations, or raise the budget");
    CHECK_CONTAINS(e.message, "--max-work N, or --no-work-limit");
    /* Overrides: 0 is the default budget, TRN_WORK_UNLIMITED none. */
    CHECK_OK(eval_budget(cheap, 0, &e));
    CHECK_OK(eval_budget(cheap, TRN_WORK_UNLIMITED, &e));
    CHECK_STATUS(eval_budget(cheap, 100, &e), TRN_ERR_LIMIT);
    /* Thermal passes: 81 x (1 + 20); the parameter named is thermal_iterations. */
    CHECK_STATUS(eval_budget("\"iterations\":0,\"thermal_iterations\":20", 81 * 21 - 1, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "graph.nodes[1].params.thermal_iterations: ");
    CHECK_CONTAINS(e.message,
                   "+ 20 thermal_iterations x 81 samples) exceeds the work budget of 1700;");
    CHECK_OK(eval_budget("\"iterations\":0,\"thermal_iterations\":20", 81 * 21, &e));
    /* The absurd: 2^32 - 1 droplets x 1000 passes x 512 steps is refused by the default
     * budget at once (it would run for days). */
    CHECK_STATUS(eval_budget("\"droplets\":4294967295,\"iterations\":1000,\"lifetime\":512", 0, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "graph.nodes[1].params.droplets: node 'erode' (erosion): work "
                              "2199023255040891 (4294967295 droplets x 1000 iterations x 512 "
                              "lifetime");
    CHECK_CONTAINS(e.message, "exceeds the work budget of 10000000000;");
    /* Droplets from the density: 0.5 x 81 samples rounds to 41 per pass. */
    CHECK_STATUS(eval_budget("\"droplet_density\":0.5,\"lifetime\":512,\"thermal_iterations\":0",
                             81 + 41 * 512 - 1, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "graph.nodes[1].params.lifetime: ");
    CHECK_CONTAINS(e.message, "41 droplets x 1 iterations x 512 lifetime");

    /* At the default budget exactly: 81 + 999999919 x 10 x 1 + 9 x 81 = 10^10; one droplet
     * more is over. Checked without running (trn_graph_check_work), with positions. */
    const char *at_limit = "\"droplets\":999999919,\"iterations\":10,\"lifetime\":1,"
                           "\"thermal_iterations\":9";
    const char *over = "\"droplets\":999999920,\"iterations\":10,\"lifetime\":1,"
                       "\"thermal_iterations\":9";
    for (int k = 0; k < 2; k++) {
        text = erosion_graph(k ? over : at_limit);
        CHECK_OK(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, NULL));
        CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
        CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
        CHECK(work[1] == (k ? UINT64_C(10000000010) : TRN_WORK_BUDGET_DEFAULT));
        trn_graph_diagnostics d;
        memset(&d, 0, sizeof d);
        CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, 0, &d, NULL));
        CHECK_EQ_INT(d.count, k ? 1 : 0);
        if (k && d.count == 1) {
            trn_graph_diagnostics_locate(&d, text, strlen(text), "graph");
            const trn_graph_diagnostic *x = &d.items[0];
            CHECK(x->severity == TRN_GRAPH_ERROR && strcmp(x->check, "work-budget") == 0);
            CHECK(strcmp(x->node_id, "erode") == 0 && strcmp(x->pin, "droplets") == 0);
            CHECK(strcmp(x->path, "nodes[1].params.droplets") == 0);
            CHECK(x->offset == (int64_t)(strstr(text, "999999920") - text) && x->line == 1);
            CHECK_CONTAINS(x->message, "node 'erode' (erosion): work 10000000010 (");
        }
        /* a larger budget, or none, lets it pass */
        trn_graph_diagnostics_dispose(&d);
        CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, UINT64_C(10000000010), &d, NULL));
        CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, TRN_WORK_UNLIMITED, &d, NULL));
        CHECK_EQ_INT(d.count, 0);
        trn_graph_diagnostics_dispose(&d);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
        free(text);
    }
}

/* A mask's work: samples plus, per segment, the samples within width + falloff of its box. */
static void test_mask_work(void)
{
#define MASK_GRAPH_FMT                                                                             \
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["                                         \
    "{\"id\":\"flat\",\"type\":\"flat_terrain\"},"                                                 \
    "{\"id\":\"m\",\"type\":\"%s\",\"params\":{\"points\":%s,%s},"                                 \
    "\"inputs\":{\"field\":{\"node\":\"flat\"}}},"                                                 \
    "{\"id\":\"lift\",\"type\":\"height_offset\",\"inputs\":{\"field\":{\"node\":"                 \
    "\"flat\"},\"mask\":{\"node\":\"m\"}}},"                                                       \
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"                 \
    "\"lift\"}}}]}"
    static const struct {
        const char *type, *points, *params;
        uint64_t work;
    } cases[] = {
        /* one row of 9 samples along z = 0 */
        {"path_distance_mask", "[[0,0],[256,0]]", "\"width\":0,\"falloff\":0", 81 + 9},
        /* reach 32 (one cell) takes row 1 too */
        {"path_distance_mask", "[[0,0],[256,0]]", "\"width\":20,\"falloff\":12", 81 + 18},
        /* two segments, the second a single column x = 256 */
        {"path_distance_mask", "[[0,0],[256,0],[256,256]]", "\"width\":0,\"falloff\":0",
         81 + 9 + 9},
        /* reach beyond the terrain: every sample, per segment */
        {"path_distance_mask", "[[0,0],[256,0]]", "\"width\":1e6,\"falloff\":0", 81 + 81},
        /* a square's four edges, no falloff: 9 + 9 + 9 + 9 */
        {"polygon_mask", "[[0,0],[256,0],[256,256],[0,256]]", "\"falloff\":0", 81 + 36},
        /* a warped outline: its warp's 2 x 5 octaves a sample */
        {"polygon_mask", "[[0,0],[256,0],[256,256],[0,256]]", "\"falloff\":0,\"edge_warp\":5",
         81 + 36 + 810},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char graph[1024];
        snprintf(graph, sizeof graph, MASK_GRAPH_FMT, cases[c].type, cases[c].points,
                 cases[c].params);
        trn_recipe r;
        CHECK(load_recipe(8, graph, &r));
        trn_graph g;
        CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
        uint64_t work[4] = {0};
        CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
        if (work[1] != cases[c].work)
            fprintf(stderr, "case %zu: work %llu, expected %llu\n", c, (unsigned long long)work[1],
                    (unsigned long long)cases[c].work);
        CHECK(work[1] == cases[c].work && work[0] == 81 && work[2] == 81 && work[3] == 81);
        trn_error e;
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.max_work = cases[c].work - 1;
        trn_graph_run *run = NULL;
        CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e), TRN_ERR_LIMIT);
        CHECK_CONTAINS(e.message, "graph.nodes[1].params.points: node 'm'");
        o.max_work = cases[c].work;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
}

/* Which output of a source feeds a pin is part of the key: the same offset through erosion's
 * deposited mask and through its eroded mask are different results. */
static void test_key_output_pin(void)
{
    const char *fmt_head = "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                           "{\"id\":\"n\",\"type\":\"noise_terrain\"},"
                           "{\"id\":\"e\",\"type\":\"erosion\",\"params\":{\"droplets\":10},"
                           "\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                           "{\"id\":\"lift\",\"type\":\"height_offset\",\"inputs\":{\"field\":"
                           "{\"node\":\"n\"},\"mask\":{\"node\":\"e\",\"pin\":\"";
    const char *tail = "\"}}},{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":"
                       "{\"field\":{\"node\":\"lift\"}}}]}";
    uint64_t keys[2][4];
    const char *pins[2] = {"deposited", "eroded"};
    for (int k = 0; k < 2; k++) {
        char graph[1024];
        snprintf(graph, sizeof graph, "%s%s%s", fmt_head, pins[k], tail);
        trn_recipe r;
        CHECK(load_recipe(8, graph, &r));
        trn_graph g;
        CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
        CHECK_OK(trn_graph_keys(&g, &r, TRN_EROSION_FINAL, keys[k], NULL));
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    CHECK(keys[0][0] == keys[1][0] && keys[0][1] == keys[1][1]);
    CHECK(keys[0][2] != keys[1][2] && keys[0][3] != keys[1][3]);
}

/* Many nodes each within the budget still add up: the evaluated nodes together may take
 * TRN_WORK_GRAPH_FACTOR budgets of CPU time, each unit at its node type's measured rate. flat ->
 * 6 erosions (81 samples + 10 droplets x 1 pass x 10 steps = 181 units, at 20 ns) -> output:
 * 81 x 0.7 + 6 x 181 x 20 + 81 x 0.1 = 21784.8 ns, against 3 x budget x 10 ns. */
static void test_graph_work_total(void)
{
    char graph[4096];
    size_t at = (size_t)snprintf(graph, sizeof graph,
                                 "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                                 "{\"id\":\"o0\",\"type\":\"flat_terrain\"}");
    for (int k = 1; k <= 6; k++)
        at += (size_t)snprintf(graph + at, sizeof graph - at,
                               ",{\"id\":\"o%d\",\"type\":\"erosion\",\"params\":{\"droplets\":10,"
                               "\"iterations\":1,\"lifetime\":10,\"thermal_iterations\":0},"
                               "\"inputs\":{\"field\":{\"node\":\"o%d\"%s}}}",
                               k, k - 1, k > 1 ? ",\"pin\":\"field\"" : "");
    snprintf(graph + at, sizeof graph - at,
             ",{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":"
             "{\"node\":\"o6\",\"pin\":\"field\"}}}]}");
    trn_recipe r;
    CHECK(load_recipe(8, graph, &r));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t work[8] = {0};
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
    CHECK(work[0] == 81 && work[1] == 181 && work[6] == 181 && work[7] == 81);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    trn_graph_run *run = NULL;
    trn_error e;
    o.max_work = 726; /* every node within it; together over 3 x 726 x 10 ns = 21780 ns */
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "graph.nodes: the graph's 8 evaluated nodes together would take "
                              "about 2.18e-05 s of one core's CPU time, more than the 2.18e-05 s "
                              "the work budget allows a whole graph (3 budgets of 726 units at "
                              "10 ns); the costliest is node 'o1' (erosion, about 3.62e-06 s)");
    CHECK(strcmp(e.node_id, "o1") == 0);
    trn_graph_diagnostics d;
    memset(&d, 0, sizeof d);
    CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, 726, &d, NULL));
    CHECK_EQ_INT(d.count, 1);
    if (d.count == 1)
        CHECK(strcmp(d.items[0].path, "nodes") == 0 && d.items[0].node_id[0] == '\0' &&
              strcmp(d.items[0].check, "work-budget") == 0);
    trn_graph_diagnostics_dispose(&d);
    o.max_work = 727;
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
    trn_graph_run_free(run);
    CHECK_OK(trn_graph_check_work(&g, &r, TRN_EROSION_FINAL, 727, &d, NULL));
    CHECK_EQ_INT(d.count, 0);
    trn_graph_diagnostics_dispose(&d);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* Water nodes resolve every body they receive again: a chain of lakes pays for its whole
 * upstream, and a river for the samples near its sampled segments (9 x 9 samples here). */
static void test_water_work(void)
{
    static const struct {
        const char *params;
        uint64_t work;
    } rivers[] = {
        /* one segment whose reach covers the grid: 81 x 4 + 2 x 81 */
        {"\"kind\":\"river\",\"level\":1,\"river_path\":[[0,0,0],[256,0,0]],\"width\":1e6", 486},
        /* Catmull-Rom, 4 steps: 4 segments, each reaching every sample */
        {"\"kind\":\"river\",\"level\":1,\"river_path\":[[0,0,0],[256,0,0]],\"width\":1e6,"
         "\"river_path_interpolation\":\"catmull_rom\",\"river_curve_steps\":4",
         324 + 2 * 4 * 81},
        /* a narrow channel along z = 0: one row of 9 samples */
        {"\"kind\":\"river\",\"level\":1,\"river_path\":[[0,0,0],[256,0,0]],\"width\":1", 324 + 18},
    };
    for (size_t c = 0; c < sizeof rivers / sizeof rivers[0]; c++) {
        char graph[1024];
        snprintf(graph, sizeof graph,
                 "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                 "{\"id\":\"flat\",\"type\":\"flat_terrain\"},"
                 "{\"id\":\"r\",\"type\":\"water_body\",\"params\":{%s},"
                 "\"inputs\":{\"field\":{\"node\":\"flat\"}}},"
                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                 "\"r\",\"pin\":\"field\"}}}]}",
                 rivers[c].params);
        trn_recipe r;
        CHECK(load_recipe(8, graph, &r));
        trn_graph g;
        CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
        uint64_t work[3] = {0};
        CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
        if (work[1] != rivers[c].work)
            fprintf(stderr, "river %zu: work %llu, expected %llu\n", c, (unsigned long long)work[1],
                    (unsigned long long)rivers[c].work);
        CHECK(work[1] == rivers[c].work);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    /* flat -> lake a -> lake b (receives a) -> lake c (receives a, b) */
    const char *chain =
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"flat\",\"type\":\"flat_terrain\"},"
        "{\"id\":\"a\",\"type\":\"water_body\",\"params\":{\"level\":1,\"center\":[64,64],"
        "\"radius\":20},\"inputs\":{\"field\":{\"node\":\"flat\"}}},"
        "{\"id\":\"b\",\"type\":\"water_body\",\"params\":{\"level\":1,\"center\":[128,128],"
        "\"radius\":20},\"inputs\":{\"field\":{\"node\":\"a\",\"pin\":\"field\"},\"water\":"
        "{\"node\":\"a\",\"pin\":\"water\"}}},"
        "{\"id\":\"c\",\"type\":\"water_body\",\"params\":{\"level\":1,\"center\":[192,192],"
        "\"radius\":20},\"inputs\":{\"field\":{\"node\":\"b\",\"pin\":\"field\"},\"water\":"
        "{\"node\":\"b\",\"pin\":\"water\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"c\","
        "\"pin\":\"field\"},\"water\":{\"node\":\"c\",\"pin\":\"water\"}}}]}";
    trn_recipe r;
    CHECK(load_recipe(8, chain, &r));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t work[5] = {0};
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
    CHECK(work[0] == 81 && work[1] == 324 && work[2] == 648 && work[3] == 972 && work[4] == 81);
    /* The chain's results would hold more than a tiny memory budget: refused before running,
     * naming the estimate and the option; unlimited runs. */
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.max_memory = 1024;
    trn_graph_run *run = NULL;
    trn_error e;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "graph.nodes: the graph's 5 evaluated nodes would hold about ");
    CHECK_CONTAINS(e.message, "(9 x 9 samples), more than the memory budget of 1.0 KiB");
    CHECK_CONTAINS(e.message, "--max-memory SIZE");
    CHECK(run == NULL);
    o.max_memory = TRN_MEMORY_UNLIMITED;
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
    trn_graph_run_free(run);
    /* The default budget holds a small graph. */
    o.max_memory = 0;
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

int main(void)
{
    RUN(test_parse_document);
    RUN(test_water_work);
    RUN(test_parse_shape_errors);
    RUN(test_recipe_graph_position);
    RUN(test_check_valid);
    RUN(test_check_ids_and_types);
    RUN(test_check_params);
    RUN(test_check_links);
    RUN(test_check_structure);
    RUN(test_locate);
    RUN(test_draft);
    RUN(test_identity);
    RUN(test_implicit_graph);
    RUN(test_cache_reuse);
    RUN(test_disk_cache);
    RUN(test_quality);
    RUN(test_determinism);
    RUN(test_ledger);
    RUN(test_drainage_node);
    RUN(test_blend_polygon);
    RUN(test_polygon_edge_warp);
    RUN(test_progress_cancel);
    RUN(test_key_world_size);
    RUN(test_key_output_pin);
    RUN(test_work_budget);
    RUN(test_mask_work);
    RUN(test_graph_work_total);
    RUN(test_long_chain); /* last: it overflowed the stack (graph_check.c visit) */
    return trn_test_finish();
}
