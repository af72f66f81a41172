/* Command-line tests for the work budget: generate and explain refuse a recipe whose graph or
 * strokes cost more than --max-work (default 1e10 units) before anything runs, and
 * --no-work-limit lifts it. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"

static char tmp[512];

/* 8 x 8 cells (81 samples): one-octave noise (81 units), erosion of 81 + droplets x
 * iterations x lifetime units (no thermal pass), the output (81). */
static void write_recipe(const char *name, const char *erosion_params, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", tmp, name);
    char text[2048];
    snprintf(text, sizeof text,
             "{\"size\": [256, 256], \"resolution\": [8, 8], \"seed\": 3,\n"
             " \"landforms\": {\"a\": {\"octaves\": 1}}, \"default_landform\": \"a\",\n"
             " \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"default_biome\": \"g\",\n"
             " \"graph\": {\"format_version\": 1, \"output\": \"out\", \"nodes\": [\n"
             "  {\"id\": \"base\", \"type\": \"landform\"},\n"
             "  {\"id\": \"erode\", \"type\": \"erosion\",\n"
             "   \"params\": {%s},\n"
             "   \"inputs\": {\"field\": {\"node\": \"base\"}}},\n"
             "  {\"id\": \"out\", \"type\": \"terrain_output\",\n"
             "   \"inputs\": {\"field\": {\"node\": \"erode\", \"pin\": \"field\"}}}]}}\n",
             erosion_params);
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static void test_generate_budget(void)
{
    char cheap[700], absurd[700], png[700];
    /* 81 + 100 x 5 x 10 = 5081 units */
    write_recipe("cheap.json",
                 "\"droplets\": 100, \"iterations\": 5, \"lifetime\": 10, "
                 "\"thermal_iterations\": 0",
                 cheap, sizeof cheap);
    write_recipe("absurd.json", "\"droplets\": 4294967295, \"iterations\": 1000, \"lifetime\": 512",
                 absurd, sizeof absurd);
    snprintf(png, sizeof png, "%s/out.png", tmp);
    char *out = NULL, *err = NULL;

    /* The budget itself passes; one unit less stops before anything is written. */
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -q -o '%s' --max-work 5081", &out, &err, cheap, png), 0);
    CHECK(trn_test_exists(png));
    free(out);
    free(err);
    remove(png);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -q -o '%s' --max-work 5080", &out, &err, cheap, png), 1);
    CHECK_CONTAINS(err, "graph.nodes[1].params.iterations: node 'erode' (erosion): work 5081 (");
    CHECK_CONTAINS(err, "exceeds the work budget of 5080");
    CHECK(!trn_test_exists(png));
    free(out);
    free(err);
    /* Written as 5.081e3 it is the same number. */
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -q -o '%s' --max-work 5.081e3", &out, &err, cheap, png),
        0);
    free(out);
    free(err);
    /* --no-work-limit lifts a budget given before it. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -q -o '%s' --max-work 100 --no-work-limit", &out,
                                   &err, cheap, png),
                 0);
    free(out);
    free(err);

    /* 2^32 - 1 droplets x 1000 passes x 512 steps: the default budget refuses at once. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -q -o '%s'", &out, &err, absurd, png), 1);
    CHECK_CONTAINS(err, "node 'erode' (erosion): work 2199023255040891");
    CHECK_CONTAINS(err, "exceeds the work budget of 10000000000; lower droplets");
    CHECK_CONTAINS(err, "--no-work-limit");
    free(out);
    free(err);

    /* Bad values are usage errors. */
    const char *bad[] = {"0", "-5", "1.5", "abc", "2e19"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --max-work %s", &out, &err, cheap,
                                       png, bad[k]),
                     2);
        CHECK_CONTAINS(err, "--max-work");
        free(out);
        free(err);
    }
    /* The memory budget: the results' estimate over it stops before anything is written. */
    remove(png);
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' -q -o '%s' --max-memory 1KiB", &out, &err, cheap, png), 1);
    CHECK_CONTAINS(err, "more than the memory budget of 1.0 KiB");
    CHECK(!trn_test_exists(png));
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -q -o '%s' --max-memory 1KiB --no-work-limit",
                                   &out, &err, cheap, png),
                 0);
    CHECK(trn_test_exists(png));
    free(out);
    free(err);
    const char *bad_memory[] = {"0", "-1GiB", "abc", "4XB"};
    for (size_t k = 0; k < sizeof bad_memory / sizeof bad_memory[0]; k++) {
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' -o '%s' --max-memory %s", &out, &err, cheap,
                                       png, bad_memory[k]),
                     2);
        CHECK_CONTAINS(err, "--max-memory takes a size");
        free(out);
        free(err);
    }
    CHECK_EQ_INT(trn_test_run_clif("generate --help", &out, &err), 0);
    CHECK_CONTAINS(out, "--max-memory SIZE");
    CHECK_CONTAINS(out, "--max-work N");
    CHECK_CONTAINS(out, "--no-work-limit");
    free(out);
    free(err);
}

static void test_explain_budget(void)
{
    char cheap[700];
    write_recipe("explain.json",
                 "\"droplets\": 100, \"iterations\": 5, \"lifetime\": 10, "
                 "\"thermal_iterations\": 0",
                 cheap, sizeof cheap);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 10,10 --max-work 5081", &out, &err, cheap),
                 0);
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 10,10 --max-work 5080", &out, &err, cheap),
                 1);
    CHECK_CONTAINS(err, "exceeds the work budget of 5080");
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 10,10 --max-work 100 --no-work-limit", &out,
                                   &err, cheap),
                 0);
    free(out);
    free(err);
    CHECK_EQ_INT(trn_test_run_clif("explain '%s' --at 10,10 --max-work 0", &out, &err, cheap), 2);
    free(out);
    free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_generate_budget);
    RUN(test_explain_budget);
    return trn_test_finish();
}
