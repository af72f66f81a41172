/* terrane compact: merged entries, the whole document kept, --write, refusals and usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/recipe.h"
#include "test.h"

static char dir[1024];

static const char *tmp(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

static const char *const asset =
    "{\"id\": \"asset://terrain/x\", \"format_version\": 1, \"recipe\": {\"size\": [64, 64], "
    "\"resolution\": [32, 32], \"seed\": 5, \"default_landform\": \"a\", \"landforms\": {\"a\": "
    "{\"height_variation\": 0.1}}, \"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0.1, "
    "0.5, 0, 1]}, \"s\": {\"color\": [1, 1, 1, 1]}},\n"
    " \"edits\": [{\"type\": \"raise\", \"radius\": 4, \"center\": [10, 10]}, {\"radius\": 4, "
    "\"type\": \"raise\", \"strength\": 1, \"points\": [[12, 10], [12, 10]]}, {\"type\": "
    "\"lower\", \"radius\": 4, \"center\": [3, 3]}, {\"type\": \"raise\", \"radius\": 4, "
    "\"center\": [10, 10]},\n"
    "  {\"type\": \"protect\", \"grid\": [32, 32], \"samples\": [[0, 0, 1]]}, {\"type\": "
    "\"protect\", \"grid\": [32, 32], \"samples\": [[0, 0, 1]]}],\n"
    " \"regions\": [{\"biome\": \"s\", \"type\": \"region\", \"radius\": 2.5, \"center\": [1, 1]}, "
    "{\"type\": \"region\", \"biome\": \"s\", \"radius\": 2.5, \"center\": [2, 1]}, {\"type\": "
    "\"region\", \"biome\": \"g\", \"radius\": 2.5, \"center\": [2, 1]}],\n"
    " \"exclusions\": [{\"type\": \"exclusion\", \"radius\": 3, \"center\": [5, 5]}, {\"type\": "
    "\"exclusion\", \"mode\": \"erase\", \"radius\": 3, \"center\": [5, 5]}]}}";

static const char *const expected = "{\n"
                                    "  \"id\": \"asset://terrain/x\",\n"
                                    "  \"format_version\": 1,\n"
                                    "  \"recipe\": {\n"
                                    "    \"size\": [64, 64],\n"
                                    "    \"resolution\": [32, 32],\n"
                                    "    \"seed\": 5,\n"
                                    "    \"default_landform\": \"a\",\n"
                                    "    \"landforms\": {\n"
                                    "      \"a\": {\n"
                                    "        \"height_variation\": 0.1\n"
                                    "      }\n"
                                    "    },\n"
                                    "    \"default_biome\": \"g\",\n"
                                    "    \"biomes\": {\n"
                                    "      \"g\": {\n"
                                    "        \"color\": [0.1, 0.5, 0, 1]\n"
                                    "      },\n"
                                    "      \"s\": {\n"
                                    "        \"color\": [1, 1, 1, 1]\n"
                                    "      }\n"
                                    "    },\n"
                                    "    \"edits\": [\n"
                                    "      {\n"
                                    "        \"type\": \"raise\",\n"
                                    "        \"radius\": 4,\n"
                                    "        \"points\": [[10, 10], [12, 10], [12, 10]]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"lower\",\n"
                                    "        \"radius\": 4,\n"
                                    "        \"center\": [3, 3]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"raise\",\n"
                                    "        \"radius\": 4,\n"
                                    "        \"center\": [10, 10]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"protect\",\n"
                                    "        \"grid\": [32, 32],\n"
                                    "        \"samples\": [[0, 0, 1]]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"protect\",\n"
                                    "        \"grid\": [32, 32],\n"
                                    "        \"samples\": [[0, 0, 1]]\n"
                                    "      }\n"
                                    "    ],\n"
                                    "    \"regions\": [\n"
                                    "      {\n"
                                    "        \"biome\": \"s\",\n"
                                    "        \"type\": \"region\",\n"
                                    "        \"radius\": 2.5,\n"
                                    "        \"points\": [[1, 1], [2, 1]]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"region\",\n"
                                    "        \"biome\": \"g\",\n"
                                    "        \"radius\": 2.5,\n"
                                    "        \"center\": [2, 1]\n"
                                    "      }\n"
                                    "    ],\n"
                                    "    \"exclusions\": [\n"
                                    "      {\n"
                                    "        \"type\": \"exclusion\",\n"
                                    "        \"radius\": 3,\n"
                                    "        \"center\": [5, 5]\n"
                                    "      },\n"
                                    "      {\n"
                                    "        \"type\": \"exclusion\",\n"
                                    "        \"mode\": \"erase\",\n"
                                    "        \"radius\": 3,\n"
                                    "        \"center\": [5, 5]\n"
                                    "      }\n"
                                    "    ]\n"
                                    "  }\n"
                                    "}\n";

static uint64_t key_of_text(const char *text)
{
    trn_recipe r;
    trn_error e;
    uint64_t key = 0;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "k.json", &r, NULL, &e));
    CHECK_OK(trn_recipe_cache_key(&r, &key, &e));
    trn_recipe_dispose(&r);
    return key;
}

static void test_print(void)
{
    char path[1100];
    tmp(path, sizeof path, "x.terrain.json");
    CHECK(trn_test_write_file(path, asset, strlen(asset)));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("compact '%s'", &out, &err, path), 0);
    CHECK(out && strcmp(out, expected) == 0);
    if (out && strcmp(out, expected) != 0) fprintf(stderr, "got:\n%s", out);
    CHECK_CONTAINS(err, "x.terrain.json: 11 entries -> 9, generation checked identical");
    /* The same meaning, so the same cache key; the input is untouched. */
    if (out) CHECK(key_of_text(out) == key_of_text(asset));
    size_t size = 0;
    uint8_t *now = trn_test_read_file(path, &size);
    CHECK(now && size == strlen(asset) && memcmp(now, asset, size) == 0);
    free(now);
    free(out), free(err);

    /* JSON summary with the document. */
    CHECK_EQ_INT(trn_test_run_clif("compact '%s' --format json", &out, &err, path), 0);
    json_error_t je;
    json_t *o = json_loads(out ? out : "", 0, &je);
    CHECK(o != NULL);
    if (o) {
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "entries_before")), 11);
        CHECK_EQ_INT(json_integer_value(json_object_get(o, "entries_after")), 9);
        CHECK(json_is_true(json_object_get(o, "identical")));
        CHECK(json_is_false(json_object_get(o, "written")));
        json_t *edits =
            json_object_get(json_object_get(json_object_get(o, "document"), "recipe"), "edits");
        CHECK_EQ_INT(json_array_size(edits), 5);
        json_decref(o);
    }
    free(out), free(err);
}

static void test_write(void)
{
    char path[1100];
    tmp(path, sizeof path, "w.terrain.json");
    CHECK(trn_test_write_file(path, asset, strlen(asset)));
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("compact '%s' --write", &out, &err, path), 0);
    CHECK(out && out[0] == '\0');
    CHECK_CONTAINS(err, "11 entries -> 9, generation checked identical; written");
    size_t size = 0;
    uint8_t *now = trn_test_read_file(path, &size);
    CHECK(now && size == strlen(expected) && memcmp(now, expected, size) == 0);
    free(now);
    free(out), free(err);
    /* Again: nothing to merge, nothing written. */
    CHECK_EQ_INT(trn_test_run_clif("compact '%s' --write", &out, &err, path), 0);
    CHECK_CONTAINS(err, "already compact (9 entries)");
    now = trn_test_read_file(path, &size);
    CHECK(now && size == strlen(expected) && memcmp(now, expected, size) == 0);
    free(now);
    free(out), free(err);

    /* A bare recipe with nothing to merge prints as it is (keys in order). */
    const char *bare = "{\"seed\": 1, \"size\": [8, 8], \"resolution\": [4, 4], "
                       "\"default_landform\": \"a\", \"landforms\": {\"a\": {}}, "
                       "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, 0, 0, 1]}}}";
    tmp(path, sizeof path, "bare.json");
    CHECK(trn_test_write_file(path, bare, strlen(bare)));
    CHECK_EQ_INT(trn_test_run_clif("compact '%s'", &out, &err, path), 0);
    CHECK_CONTAINS(out, "{\n  \"seed\": 1,\n  \"size\": [8, 8],\n  \"resolution\": [4, 4],\n");
    CHECK_CONTAINS(err, "already compact (0 entries)");
    free(out), free(err);
}

static void test_refusals(void)
{
    char path[1100];
    char *out = NULL, *err = NULL;
    /* An invalid document: the error with its position; the file is not touched. */
    const char *bad = "{\"seed\": 1, \"size\": [8, 8], \"resolution\": [4, 4], "
                      "\"default_landform\": \"a\", \"landforms\": {\"a\": {}}, "
                      "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, 0, 0, 1]}},\n"
                      " \"edits\": [{\"type\": \"raise\", \"radius\": -1, \"center\": [0, 0]}]}";
    tmp(path, sizeof path, "bad.json");
    CHECK(trn_test_write_file(path, bad, strlen(bad)));
    CHECK_EQ_INT(trn_test_run_clif("compact '%s' --write", &out, &err, path), 1);
    CHECK_CONTAINS(err, "bad.json:2:40: edits[0].radius: expected a radius > 0 and <= 1e9, "
                        "found -1");
    CHECK(out && out[0] == '\0');
    size_t size = 0;
    uint8_t *now = trn_test_read_file(path, &size);
    CHECK(now && size == strlen(bad) && memcmp(now, bad, size) == 0);
    free(now);
    free(out), free(err);

    tmp(path, sizeof path, "missing.json");
    CHECK_EQ_INT(trn_test_run_clif("compact '%s'", &out, &err, path), 1);
    CHECK_CONTAINS(err, "missing.json");
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_clif("compact", &out, &err), 2);
    CHECK_CONTAINS(err, "needs a recipe or Terrain asset document");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("compact a.json --wrte", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--wrte'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("compact a.json b.json", &out, &err), 2);
    CHECK_CONTAINS(err, "takes one document; unexpected 'b.json'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("compact --help", &out, &err), 0);
    CHECK_CONTAINS(out, "usage: terrane compact FILE [--write]");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("--help", &out, &err), 0);
    CHECK_CONTAINS(out, "compact");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(dir, sizeof dir)) {
        fprintf(stderr, "no temporary folder\n");
        return 1;
    }
    RUN(test_print);
    RUN(test_write);
    RUN(test_refusals);
    return trn_test_finish();
}
