/* The shared table reader of JSON documents (src/core/json_fields.h): arrays of numbers and
 * words as rows, how an error describes what it found, and a document that frames its errors
 * itself (the fail hook). */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "core/json_fields.h"
#include "test.h"

typedef struct thing {
    double xz[2];
    double rgba[4];
    int mode;
    int group;
} thing;

static const char *const modes[] = {"linear", "catmull_rom", NULL};
static const char *const groups[] = {"a", "b", "c", NULL};

static const trn_doc_field rows[] = {
    TRN_DOC_NUMBERS_ROW("xz", TRN_DOC_KINDS, "[x, z]", thing, xz),
    TRN_DOC_NUMBERS_ROW("rgba", 0, "[r, g, b, a]", thing, rgba),
    TRN_DOC_WORD_ROW("mode", modes, TRN_DOC_KINDS, "\"linear\" or \"catmull_rom\"", thing, mode),
    TRN_DOC_WORD_ROW("group", groups, 0, "a, b or c", thing, group),
    TRN_DOC_END_ROW};

/* The value of key in the object text into t: the status, the message in msg. */
static trn_status read_key(const char *text, const char *key, thing *t, char *msg, size_t size)
{
    json_t *root = json_loads(text, 0, NULL);
    CHECK(root != NULL);
    trn_json_path path;
    memset(&path, 0, sizeof path);
    trn_error e;
    trn_error_clear(&e);
    const trn_doc d = {text, strlen(text), "t.json", &path, &e, NULL, NULL};
    trn_json_path_push_key(&path, key);
    const trn_status st =
        trn_doc_read_field(&d, trn_doc_field_find(rows, key), json_object_get(root, key), t, "t");
    snprintf(msg, size, "%s", e.message);
    json_decref(root);
    return st;
}

static void test_numbers(void)
{
    thing t;
    char msg[600];
    memset(&t, 0, sizeof t);
    CHECK_OK(read_key("{\"xz\": [1.5, -2]}", "xz", &t, msg, sizeof msg));
    CHECK(t.xz[0] == 1.5 && t.xz[1] == -2.0);
    CHECK_OK(read_key("{\"rgba\": [0, 0.25, 0.5, 1]}", "rgba", &t, msg, sizeof msg));
    CHECK(t.rgba[1] == 0.25 && t.rgba[3] == 1.0);
    /* The shape, the count, an element: each at its path, nothing stored. */
    CHECK_STATUS(read_key("{\"xz\": [1, 2, 3]}", "xz", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "xz: expected [x, z] (2 numbers), found 3 values") == 0);
    CHECK_STATUS(read_key("{\"xz\": [7]}", "xz", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "xz: expected [x, z] (2 numbers), found 1 value") == 0);
    CHECK_STATUS(read_key("{\"xz\": [9, true]}", "xz", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "xz[1]: expected a number, found true") == 0);
    CHECK(t.xz[0] == 1.5);
    CHECK_STATUS(read_key("{\"xz\": \"no\"}", "xz", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "xz: expected [x, z], found a string") == 0);
    /* Without TRN_DOC_KINDS the value itself is described. */
    CHECK_STATUS(read_key("{\"rgba\": [0, 0, \"red\", 1]}", "rgba", &t, msg, sizeof msg),
                 TRN_ERR_JSON);
    CHECK(strcmp(msg, "rgba[2]: expected a number, found the string \"red\"") == 0);
}

static void test_words(void)
{
    thing t;
    char msg[600];
    memset(&t, 0, sizeof t);
    CHECK_OK(read_key("{\"mode\": \"catmull_rom\"}", "mode", &t, msg, sizeof msg));
    CHECK(t.mode == 1);
    CHECK_OK(read_key("{\"group\": \"c\"}", "group", &t, msg, sizeof msg));
    CHECK(t.group == 2);
    CHECK_STATUS(read_key("{\"mode\": \"cubic\"}", "mode", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "mode: expected \"linear\" or \"catmull_rom\", found \"cubic\"") == 0);
    CHECK_STATUS(read_key("{\"mode\": false}", "mode", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "mode: expected \"linear\" or \"catmull_rom\", found false") == 0);
    CHECK_STATUS(read_key("{\"group\": \"d\"}", "group", &t, msg, sizeof msg), TRN_ERR_JSON);
    CHECK(strcmp(msg, "group: expected a, b or c, found the string \"d\"") == 0);
    CHECK(t.mode == 1 && t.group == 2);
}

/* A document that frames its errors: the hook gets the message and decides the status. */
static int hook_calls;
static trn_status hook(const trn_doc *d, trn_json_target target, const char *msg)
{
    hook_calls++;
    CHECK(target == TRN_JSON_VALUE);
    CHECK(d->ctx == &hook_calls);
    trn_error_set(d->err, TRN_ERR_VALIDATION, NULL, -1, "framed: %s", msg);
    return TRN_ERR_VALIDATION;
}

static void test_hook(void)
{
    json_t *v = json_loads("[1, 2, 3]", 0, NULL);
    trn_json_path path;
    memset(&path, 0, sizeof path);
    trn_error e;
    trn_error_clear(&e);
    const trn_doc d = {NULL, 0, NULL, &path, &e, hook, &hook_calls};
    thing t;
    CHECK_STATUS(trn_doc_read_field(&d, &rows[0], v, &t, "t"), TRN_ERR_VALIDATION);
    CHECK(hook_calls == 1);
    CHECK(strcmp(e.message, "framed: expected [x, z] (2 numbers), found 3 values") == 0);
    json_decref(v);
    const char *known[65];
    trn_doc_field_names(rows, known);
    CHECK(strcmp(known[0], "xz") == 0 && strcmp(known[3], "group") == 0 && !known[4]);
}

int main(void)
{
    RUN(test_numbers);
    RUN(test_words);
    RUN(test_hook);
    return trn_test_finish();
}
