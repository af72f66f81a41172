/* Suppression lists (Terrain3D.scatter_exclusions): instance keys, the three document forms,
 * every parse error with its path and position, and suppression removing exactly the listed
 * placements while the rest stay bit-identical. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "terrane/scatter.h"
#include "test.h"

static trn_scatter_rule rules[2];
static trn_palette palette;

static void make_palette(void)
{
    memset(rules, 0, sizeof rules);
    snprintf(rules[0].id, sizeof rules[0].id, "pine");
    snprintf(rules[1].id, sizeof rules[1].id, "rock-2");
    memset(&palette, 0, sizeof palette);
    palette.rules = rules;
    palette.rule_count = 2;
}

static trn_instance inst(uint32_t rule, int64_t cx, int64_t cz)
{
    trn_instance it;
    memset(&it, 0, sizeof it);
    it.rule = rule;
    it.cx = cx;
    it.cz = cz;
    it.x = (double)cx * 1.25 + 0.1;
    it.y = 3.5;
    it.z = (double)cz * 1.25 + 0.2;
    it.yaw = (double)(cx * 7 + cz);
    it.scale = 1.0 + (double)rule / 8.0;
    return it;
}

static void test_key(void)
{
    make_palette();
    char buf[TRN_INSTANCE_KEY_MAX];
    trn_instance it = inst(0, 10, 4);
    CHECK_EQ_INT(trn_instance_key(&palette, &it, buf, sizeof buf), 9);
    CHECK(strcmp(buf, "pine/10_4") == 0);
    it = inst(1, 0, 123456789012);
    CHECK_EQ_INT(trn_instance_key(&palette, &it, buf, sizeof buf), 21);
    CHECK(strcmp(buf, "rock-2/0_123456789012") == 0);
    /* Cut like snprintf: the full length comes back. */
    char small[5];
    CHECK_EQ_INT(trn_instance_key(&palette, &it, small, sizeof small), 21);
    CHECK(strcmp(small, "rock") == 0);
    /* The largest key fits TRN_INSTANCE_KEY_MAX. */
    memset(rules[0].id, 'a', TRN_PALETTE_ID_MAX - 1u);
    rules[0].id[TRN_PALETTE_ID_MAX - 1u] = '\0';
    it.rule = 0;
    it.cx = it.cz = INT64_MIN;
    CHECK_EQ_INT(trn_instance_key(&palette, &it, buf, sizeof buf), 63 + 1 + 2 * 20 + 1);
    CHECK(strlen(buf) == 63 + 1 + 2 * 20 + 1);
    make_palette();
    /* A rule beyond the palette, or no palette: "" and 0. */
    it = inst(2, 1, 1);
    CHECK_EQ_INT(trn_instance_key(&palette, &it, buf, sizeof buf), 0);
    CHECK(buf[0] == '\0');
    CHECK_EQ_INT(trn_instance_key(NULL, &it, buf, sizeof buf), 0);
    CHECK_EQ_INT(trn_instance_key(&palette, NULL, buf, sizeof buf), 0);
}

static trn_status parse(const char *text, trn_scatter_exclusions *out, trn_error *err)
{
    return trn_scatter_exclusions_parse(text, strlen(text), "scene.json", out, err);
}

/* The three forms give the same list; Terrain3D without the member gives an empty one. */
static void test_forms(void)
{
    const char *texts[] = {
        "[\"pine/10_4\", \"rock-2/3_3\"]",
        "{\"scatter_exclusions\": [\"pine/10_4\", \"rock-2/3_3\"], \"recipe\": {}}",
        "{\"name\": \"Island\", \"components\": {\"Transform\": {}, \"Terrain3D\": "
        "{\"asset\": \"asset://terrain/island\", \"scatter_exclusions\": [\"pine/10_4\", "
        "\"rock-2/3_3\"]}}}",
        "\xEF\xBB\xBF[\"pine/10_4\", \"rock-2/3_3\"]",
    };
    for (size_t t = 0; t < sizeof texts / sizeof *texts; t++) {
        trn_scatter_exclusions ex;
        CHECK_OK(parse(texts[t], &ex, NULL));
        CHECK_EQ_INT(ex.count, 2);
        CHECK(ex.count == 2 && strcmp(ex.keys[0], "pine/10_4") == 0 &&
              strcmp(ex.keys[1], "rock-2/3_3") == 0);
        trn_scatter_exclusions_dispose(&ex);
    }
    const char *empty[] = {"[]", "{\"components\": {\"Terrain3D\": {\"asset\": \"a\"}}}",
                           "{\"scatter_exclusions\": []}"};
    for (size_t t = 0; t < 3; t++) {
        trn_scatter_exclusions ex;
        CHECK_OK(parse(empty[t], &ex, NULL));
        CHECK_EQ_INT(ex.count, 0);
        trn_scatter_exclusions_dispose(&ex);
    }
    trn_scatter_exclusions_dispose(NULL);
}

static void expect_error(const char *text, trn_status code, int line, int column,
                         const char *message)
{
    trn_scatter_exclusions ex;
    trn_error err;
    trn_error_clear(&err);
    CHECK_STATUS(parse(text, &ex, &err), code);
    CHECK_EQ_INT(err.line, line);
    CHECK_EQ_INT(err.column, column);
    CHECK_CONTAINS(err.message, message);
    CHECK(strcmp(err.file, "scene.json") == 0);
    CHECK(ex.count == 0 && ex.keys == NULL);
}

static void test_errors(void)
{
    expect_error("[\"a/1_1\", \"b/2_2\",\n \"c/3_3\", \"b/2_2\"]", TRN_ERR_JSON, 2, 11,
                 "[3]: duplicate key 'b/2_2' (first at [1])");
    expect_error("{\"components\": {\"Terrain3D\": {\"scatter_exclusions\": [\n"
                 "  \"pine/10_4\",\n  \"x\",\n  \"y\",\n  \"pine/10_4\"]}}}",
                 TRN_ERR_JSON, 5, 3,
                 "components.Terrain3D.scatter_exclusions[3]: duplicate key 'pine/10_4' "
                 "(first at [0])");
    /* Two duplicated keys: the one whose repeat comes first is reported. */
    expect_error("[\"q\", \"p\", \"p\", \"q\"]", TRN_ERR_JSON, 1, 12,
                 "[2]: duplicate key 'p' (first at [1])");
    expect_error("[\"a\", \"\"]", TRN_ERR_JSON, 1, 7, "[1]: expected a nonempty placement key");
    expect_error("[\"a\",\n  5]", TRN_ERR_JSON, 2, 3,
                 "[1]: expected a placement key string, found 5");
    expect_error("[null]", TRN_ERR_JSON, 1, 2, "[0]: expected a placement key string, found null");
    expect_error("{\"scatter_exclusions\": [[\"a\"]]}", TRN_ERR_JSON, 1, 25,
                 "scatter_exclusions[0]: expected a placement key string, found an array");
    expect_error("{\"scatter_exclusions\": \"pine/1_1\"}", TRN_ERR_JSON, 1, 24,
                 "scatter_exclusions: expected an array of placement keys");
    expect_error("{\"components\": {\"Transform\": {}}}", TRN_ERR_JSON, 1, 16,
                 "components: expected a Terrain3D component");
    expect_error("{\"components\": []}", TRN_ERR_JSON, 1, 16,
                 "components: expected an object of components, found an array");
    expect_error("{\"components\": {\"Terrain3D\": 3}}", TRN_ERR_JSON, 1, 30,
                 "components.Terrain3D: expected an object, found 3");
    expect_error("{\"name\": \"x\"}", TRN_ERR_JSON, 1, 1,
                 "expected an array of placement keys, a Terrain3D object with "
                 "scatter_exclusions or a scene entity");
    expect_error("\"pine/1_1\"", TRN_ERR_JSON, 1, 1,
                 "expected an array of placement keys, a Terrain3D object or a scene entity, "
                 "found the string \"pine/1_1\"");
    expect_error("[\"a\",\n  ]", TRN_ERR_JSON, 2, 3, "invalid JSON");
    expect_error("{\"scatter_exclusions\": [], \"scatter_exclusions\": []}", TRN_ERR_JSON, 1, 47,
                 "invalid JSON: duplicate object key");
    expect_error("", TRN_ERR_JSON, 1, 1, "invalid JSON");
    expect_error("5", TRN_ERR_JSON, 1, 1,
                 "expected an array of placement keys, a Terrain3D "
                 "object or a scene entity, found 5");
    /* A long duplicate is quoted cut, on a character boundary. */
    char text[600];
    char key[200];
    memset(key, 'k', 120);
    key[120] = '\0';
    snprintf(text, sizeof text, "[\"%s\", \"%s\"]", key, key);
    expect_error(text, TRN_ERR_JSON, 1, 126, "...' (first at [0])");
    trn_scatter_exclusions ex;
    CHECK_STATUS(trn_scatter_exclusions_parse(NULL, 3, "x", &ex, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_scatter_exclusions_parse("[]", 2, "x", NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
}

static uint64_t hash_of(const trn_instance *items, size_t count)
{
    return count ? (uint64_t)XXH64(items, count * sizeof *items, 0) : 0u;
}

static void test_suppress(void)
{
    make_palette();
    trn_instance all[8] = {inst(0, 1, 1), inst(0, 2, 1),  inst(0, 10, 4), inst(0, 4, 10),
                           inst(1, 1, 1), inst(1, 10, 4), inst(1, 3, 3),  inst(1, 30, 3)};
    trn_instance copy[8];
    memcpy(copy, all, sizeof all);
    trn_instances in = {copy, 8};
    trn_scatter_exclusions ex;
    /* pine/10_4 and rock-2/3_3 match; pine/99_99 and "other/1_1" match nothing; "pine/1_1"
     * must not remove rock-2/1_1. */
    CHECK_OK(parse("[\"pine/10_4\", \"pine/99_99\", \"rock-2/3_3\", \"other/1_1\", \"pine/1_1\"]",
                   &ex, NULL));
    size_t suppressed = 99, unmatched = 99;
    CHECK_OK(trn_instances_suppress(&palette, &in, &ex, &suppressed, &unmatched, NULL));
    CHECK_EQ_INT(suppressed, 3);
    CHECK_EQ_INT(unmatched, 2);
    CHECK_EQ_INT(in.count, 5);
    const trn_instance expect[5] = {all[1], all[3], all[4], all[5], all[7]};
    CHECK(hash_of(in.items, in.count) == hash_of(expect, 5));
    /* Again: nothing left to remove, every key unmatched, nothing refilled. */
    CHECK_OK(trn_instances_suppress(&palette, &in, &ex, &suppressed, &unmatched, NULL));
    CHECK_EQ_INT(suppressed, 0);
    CHECK_EQ_INT(unmatched, 5);
    CHECK_EQ_INT(in.count, 5);
    CHECK(hash_of(in.items, in.count) == hash_of(expect, 5));
    trn_scatter_exclusions_dispose(&ex);
    /* An empty list changes nothing; NULL outs are fine. */
    trn_scatter_exclusions none = {NULL, 0};
    CHECK_OK(trn_instances_suppress(&palette, &in, &none, NULL, NULL, NULL));
    CHECK_EQ_INT(in.count, 5);
    /* Every instance listed. */
    CHECK_OK(parse("[\"pine/2_1\", \"pine/4_10\", \"rock-2/1_1\", \"rock-2/10_4\", "
                   "\"rock-2/30_3\"]",
                   &ex, NULL));
    CHECK_OK(trn_instances_suppress(&palette, &in, &ex, &suppressed, &unmatched, NULL));
    CHECK_EQ_INT(suppressed, 5);
    CHECK_EQ_INT(unmatched, 0);
    CHECK_EQ_INT(in.count, 0);
    /* A rule beyond the palette: refused, instances untouched. */
    trn_instance bad[2] = {inst(0, 2, 1), inst(5, 1, 1)};
    trn_instances b = {bad, 2};
    trn_error err;
    CHECK_STATUS(trn_instances_suppress(&palette, &b, &ex, &suppressed, &unmatched, &err),
                 TRN_ERR_MISMATCH);
    CHECK_CONTAINS(err.message, "instance 1 names rule 5");
    CHECK_EQ_INT(b.count, 2);
    CHECK_STATUS(trn_instances_suppress(NULL, &b, &ex, NULL, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_instances_suppress(&palette, &b, NULL, NULL, NULL, NULL),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_scatter_exclusions_dispose(&ex);
}

/* A world in pieces: each piece marks the keys it matched (by list position) and leaves the
 * others' marks alone, so the keys matched nowhere are those still unmarked after every piece. */
static void test_suppress_marking(void)
{
    make_palette();
    trn_instance all[8] = {inst(0, 1, 1), inst(0, 2, 1),  inst(0, 10, 4), inst(0, 4, 10),
                           inst(1, 1, 1), inst(1, 10, 4), inst(1, 3, 3),  inst(1, 30, 3)};
    trn_instance copy[8];
    memcpy(copy, all, sizeof all);
    trn_instances a = {copy, 4}, b = {copy + 4, 4};
    trn_scatter_exclusions ex;
    CHECK_OK(parse("[\"pine/10_4\", \"pine/99_99\", \"rock-2/3_3\", \"other/1_1\", \"pine/1_1\"]",
                   &ex, NULL));
    uint8_t matched[5] = {0, 0, 0, 0, 0};
    size_t suppressed = 99;
    CHECK_OK(trn_instances_suppress_marking(&palette, &a, &ex, matched, &suppressed, NULL));
    CHECK_EQ_INT(suppressed, 2);
    CHECK_EQ_INT(a.count, 2);
    const uint8_t after_a[5] = {1, 0, 0, 0, 1};
    CHECK(memcmp(matched, after_a, 5) == 0);
    CHECK_OK(trn_instances_suppress_marking(&palette, &b, &ex, matched, &suppressed, NULL));
    CHECK_EQ_INT(suppressed, 1);
    CHECK_EQ_INT(b.count, 3);
    const uint8_t after_b[5] = {1, 0, 1, 0, 1};
    CHECK(memcmp(matched, after_b, 5) == 0);
    /* The first piece again: nothing left to match there, yet its marks stay. */
    CHECK_OK(trn_instances_suppress_marking(&palette, &a, &ex, matched, &suppressed, NULL));
    CHECK_EQ_INT(suppressed, 0);
    CHECK(memcmp(matched, after_b, 5) == 0);
    const trn_instance kept_b[3] = {all[4], all[5], all[7]};
    CHECK(hash_of(b.items, b.count) == hash_of(kept_b, 3));
    /* A nonempty list needs somewhere to mark. */
    CHECK_STATUS(trn_instances_suppress_marking(&palette, &b, &ex, NULL, NULL, NULL),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(b.count, 3);
    trn_scatter_exclusions_dispose(&ex);
}

int main(void)
{
    RUN(test_key);
    RUN(test_forms);
    RUN(test_errors);
    RUN(test_suppress);
    RUN(test_suppress_marking);
    return trn_test_finish();
}
