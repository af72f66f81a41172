/* The command line's shared polish: common options before the verb, did-you-mean, the verb list,
 * 'terrane formats', and a JSON result from every verb that takes --format json. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>

#include <jansson.h>

#include "test.h"

static char dir[1024];

static const char *tmp(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", dir, name);
    return buf;
}

/* A version-9 BeamNG .ter of 4 x 4 samples with two materials. */
static bool write_small_ter(const char *path)
{
    uint8_t b[5 + 32 + 16 + 4 + 4];
    size_t n = 0;
    b[n++] = 9;
    b[n++] = 4, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    for (int k = 0; k < 16; k++) {
        uint16_t h = (uint16_t)(1000 * (k / 4) + 10 * (k % 4));
        b[n++] = (uint8_t)h, b[n++] = (uint8_t)(h >> 8);
    }
    for (int k = 0; k < 16; k++)
        b[n++] = (uint8_t)(k % 2);
    b[n++] = 2, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    b[n++] = 1, b[n++] = 'a';
    b[n++] = 1, b[n++] = 'b';
    return trn_test_write_file(path, b, n);
}

static const char *const recipe =
    "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5, \"default_landform\": \"a\", "
    "\"landforms\": {\"a\": {\"height_variation\": 3}}, \"default_biome\": \"g\", \"biomes\": "
    "{\"g\": {\"color\": [0.1, 0.5, 0, 1]}}}\n";

static void test_options_before_verb(void)
{
    char ter[1100], *out = NULL, *err = NULL;
    tmp(ter, sizeof ter, "small.ter");
    CHECK(write_small_ter(ter));

    /* The common options work before the verb as after it. */
    CHECK_EQ_INT(trn_test_run_clif("--format json info '%s'", &out, &err, ter), 0);
    CHECK(out && out[0] == '{');
    CHECK_CONTAINS(out, "\"input_format\": \"beamng-ter\"");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("-q --format=json info '%s'", &out, &err, ter), 0);
    CHECK(out && out[0] == '{');
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("--quiet --format text info '%s'", &out, &err, ter), 0);
    CHECK(out && out[0] != '{');
    free(out), free(err);
    /* After the verb, a later --format wins. */
    CHECK_EQ_INT(trn_test_run_clif("--format json info '%s' --format text", &out, &err, ter), 0);
    CHECK(out && out[0] != '{');
    free(out), free(err);
    /* -q before the verb silences the verb's notes. */
    CHECK_EQ_INT(trn_test_run_clif("-q convert '%s' '%s/a.png'", &out, &err, ter, dir), 0);
    CHECK(err && err[0] == '\0');
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert '%s' '%s/b.png'", &out, &err, ter, dir), 0);
    CHECK(err && err[0] != '\0');
    free(out), free(err);

    /* Bad common options before the verb are usage errors that say what is wrong. */
    CHECK_EQ_INT(trn_test_run_clif("--format xml info '%s'", &out, &err, ter), 2);
    CHECK_CONTAINS(err, "--format takes 'text' or 'json', not 'xml'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--format jsno info x", &out, &err), 2);
    CHECK_CONTAINS(err, "did you mean 'json'?");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--format", &out, &err), 2);
    CHECK_CONTAINS(err, "--format needs a value");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--bogus info x", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--bogus'");
    CHECK(!strstr(err, "did you mean"));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--quite info x", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown option '--quite'; did you mean '--quiet'?");
    free(out), free(err);
    /* Options and no verb: the usage, as a usage error. */
    CHECK_EQ_INT(trn_test_run_cli("-q", &out, &err), 2);
    CHECK_CONTAINS(err, "verbs:");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("-q --help", &out, &err), 0);
    CHECK_CONTAINS(out, "verbs:");
    free(out), free(err);

    /* --version, as text or JSON, in either order. */
    CHECK_EQ_INT(trn_test_run_cli("--version", &out, &err), 0);
    CHECK(out && strcmp(out, "terrane " TRN_VERSION_STRING "\n") == 0);
    free(out), free(err);
    const char *orders[] = {"--format json --version", "--version --format json"};
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_INT(trn_test_run_cli(orders[k], &out, &err), 0);
        json_t *j = json_loads(out ? out : "", 0, NULL);
        CHECK(j != NULL);
        CHECK(j &&
              strcmp(json_string_value(json_object_get(j, "version")), TRN_VERSION_STRING) == 0);
        json_decref(j);
        free(out), free(err);
    }
}

static void test_did_you_mean(void)
{
    char ter[1100], *out = NULL, *err = NULL;
    tmp(ter, sizeof ter, "small.ter");
    static const struct {
        const char *args;
        const char *says;
    } cases[] = {
        {"convrt", "unknown verb 'convrt'; did you mean 'convert'?"},
        {"infp x", "unknown verb 'infp'; did you mean 'info'?"},
        {"fromats", "did you mean 'formats'?"},
        {"render x -o y.png --max-hieght 5", "unknown option '--max-hieght'; did you mean "
                                             "'--max-height'?"},
        {"render x -o y.png --max-hieght=5", "did you mean '--max-height'?"},
        /* A misspelt beginning of a longer option. */
        {"render x -o y.png --multi", "did you mean '--multidirectional'?"},
        /* Two changes in a 7-letter option are within a third of it. */
        {"render x -o y.png --axxmuth 3", "did you mean '--azimuth'?"},
        /* Options every verb takes, from its help. */
        {"seeds 1 --quite", "did you mean '--quiet'?"},
        {"info x --fromat json", "did you mean '--format'?"},
        {"info x --format jsn", "did you mean 'json'?"},
        /* Sub-verbs and their options. */
        {"beamng imprt", "did you mean 'import'?"},
        {"beamng import h.png --materails a,b", "did you mean '--materials'?"},
        {"unity extrct x", "did you mean 'extract'?"},
        {"graph chek x.json", "did you mean 'check'?"},
        {"stationeers extarct a b", "did you mean 'extract'?"},
        {"stationeers extract a b --qiuet", "did you mean '--quiet'?"},
        {"formats geotif", "did you mean 'geotiff'?"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        CHECK_EQ_INT(trn_test_run_cli(cases[k].args, &out, &err), 2);
        CHECK_CONTAINS(err, cases[k].says);
        free(out), free(err);
    }
    /* Nothing close, three changes in seven letters, or under three letters: no guess. */
    static const char *const none[] = {"frobnicate", "render x -o y.png --axxxuth 3",
                                       "render x -o y.png -x", "xy"};
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++) {
        CHECK_EQ_INT(trn_test_run_cli(none[k], &out, &err), 2);
        CHECK(err && !strstr(err, "did you mean"));
        if (err && strstr(err, "did you mean")) fprintf(stderr, "  for: %s\n", none[k]);
        free(out), free(err);
    }
    /* The hint never breaks what the message said before. */
    CHECK_EQ_INT(trn_test_run_clif("info '%s' --bogus", &out, &err, ter), 2);
    CHECK_CONTAINS(err, "terrane info: unknown option '--bogus'\n(run 'terrane info --help'");
    free(out), free(err);
}

static void test_verb_list(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli("--help", &out, &err), 0);
    CHECK_CONTAINS(out, "common options, before or after the verb");
    /* Every summary starts in one column, two spaces past the longest verb name. */
    const char *verbs = out ? strstr(out, "verbs:\n") : NULL;
    CHECK(verbs != NULL);
    int column = -1, lines = 0, longest = 0;
    const char *p = verbs ? verbs + 7 : "";
    while (*p == ' ') {
        const char *name = p + 2, *end = strchr(p, '\n');
        size_t n = strcspn(name, " ");
        if ((int)n > longest) longest = (int)n;
        const char *summary = name + n;
        while (*summary == ' ')
            summary++;
        int c = (int)(summary - p);
        if (column < 0) column = c;
        CHECK_EQ_INT(c, column);
        lines++;
        p = end ? end + 1 : "";
    }
    CHECK_EQ_INT(lines, 23);
    CHECK_EQ_INT(column, 2 + longest + 2);
    CHECK_CONTAINS(out, "  apply-preset  merge a preset");
    CHECK_CONTAINS(out, "  formats       every file format");
    CHECK_CONTAINS(out, "  scatter       place a recipe's palette");
    CHECK_CONTAINS(out, "  mesh          chunked terrain meshes");
    CHECK_CONTAINS(out, "  studio        ");
    /* Format lists name every format family. */
    CHECK_CONTAINS(out, "R32, GeoTIFF, Unity and Stationeers");
    free(out), free(err);
}

/* Every verb's and sub-verb's --help ends with examples a user can copy: an "example:" or
 * "examples:" heading followed by lines running that very verb. The verbs are the ones
 * 'terrane --help' lists; the sub-verbs those each verb of sub-verbs dispatches to. */
static void check_help_examples(const char *verb)
{
    char *out = NULL, *err = NULL;
    char cmd[200];
    snprintf(cmd, sizeof cmd, "%s --help", verb);
    CHECK_EQ_INT(trn_test_run_cli(cmd, &out, &err), 0);
    const char *heading = out ? strstr(out, "\nexample") : NULL;
    if (heading && strncmp(heading, "\nexample:\n", 10) != 0 &&
        strncmp(heading, "\nexamples:\n", 11) != 0)
        heading = NULL;
    char want[220];
    snprintf(want, sizeof want, "\n  terrane %s", verb);
    bool ok = false;
    for (const char *at = heading; at && !ok; at = strstr(at + 1, want)) {
        const char after = at == heading ? '\0' : at[strlen(want)];
        ok = at != heading && (after == ' ' || after == '\n');
    }
    if (!ok) fprintf(stderr, "  terrane %s --help: no examples running 'terrane %s'\n", verb, verb);
    CHECK(ok);
    free(out), free(err);
}

static void test_help_examples(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli("--help", &out, &err), 0);
    const char *p = out ? strstr(out, "verbs:\n") : NULL;
    int verbs = 0;
    for (p = p ? p + 7 : ""; p[0] == ' ' && p[1] == ' ' && p[2] != ' ';) {
        char verb[64];
        const size_t n = strcspn(p + 2, " \n");
        snprintf(verb, sizeof verb, "%.*s", (int)(n < 63 ? n : 63), p + 2);
        check_help_examples(verb);
        verbs++;
        const char *end = strchr(p, '\n');
        p = end ? end + 1 : "";
    }
    CHECK_EQ_INT(verbs, 23);
    free(out), free(err);
    static const char *const subs[] = {
        "beamng import",       "beamng create",       "beamng export",
        "beamng validate",     "beamng migrate",      "stationeers extract",
        "stationeers replace", "stationeers from-heightfield", "unity info",
        "unity extract",       "unity export",        "graph types",
        "graph check",         "graph starter",
    };
    for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++)
        check_help_examples(subs[k]);
}

static const char *const format_names[] = {"beamng-ter",
                                           "terragen",
                                           "png",
                                           "raw",
                                           "r32",
                                           "geotiff",
                                           "unity",
                                           "stationeers-dat",
                                           "stationeers-save",
                                           "beamng-terrain-json",
                                           "beamng-level",
                                           "unity-export",
                                           "recipe",
                                           "terrane-payload",
                                           "gltf",
                                           "obj"};

static void test_formats_verb(void)
{
    char *out = NULL, *err = NULL;
    size_t count = sizeof format_names / sizeof format_names[0];
    CHECK_EQ_INT(trn_test_run_cli("formats", &out, &err), 0);
    for (size_t k = 0; k < count; k++) {
        char line[64];
        snprintf(line, sizeof line, "\n  %s ", format_names[k]);
        CHECK_CONTAINS(out, line);
    }
    CHECK_CONTAINS(out, "\n  unity                r-  .asset                           Unity");
    CHECK_CONTAINS(out, "\n  unity-export         -w  (a folder)                       Unity");
    CHECK_CONTAINS(out, "\n  recipe               rw  .json .terrain.json .scene.json  terrane");
    CHECK_CONTAINS(out, "\n  gltf                 -w  .glb .gltf                       glTF 2.0");
    CHECK_CONTAINS(out, "\n  obj                  -w  .obj                             Wavefront");
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_cli("formats --format json", &out, &err), 0);
    json_error_t je;
    json_t *all = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_array(all));
    CHECK_EQ_INT(json_array_size(all), count);
    for (size_t k = 0; all && k < json_array_size(all); k++) {
        json_t *f = json_array_get(all, k);
        CHECK(strcmp(json_string_value(json_object_get(f, "name")), format_names[k]) == 0);
        CHECK(json_is_array(json_object_get(f, "extensions")));
        CHECK(json_is_boolean(json_object_get(f, "read")));
        CHECK(json_is_boolean(json_object_get(f, "write")));
        CHECK(json_string_length(json_object_get(f, "detection")) > 10);
        /* read/write support texts exactly when read/write is true */
        CHECK(json_is_true(json_object_get(f, "read")) ==
              json_is_string(json_object_get(f, "read_support")));
        CHECK(json_is_true(json_object_get(f, "write")) ==
              json_is_string(json_object_get(f, "write_support")));
    }
    json_t *ter = all ? json_array_get(all, 0) : NULL;
    CHECK(ter && strstr(json_string_value(json_object_get(ter, "read_support")), "versions 1-9"));
    CHECK(ter &&
          strstr(json_string_value(json_object_get(ter, "write_support")), "versions 7, 8 and 9"));
    CHECK(ter && strcmp(json_string_value(json_array_get(json_object_get(ter, "extensions"), 0)),
                        ".ter") == 0);
    json_t *unity = all ? json_array_get(all, 6) : NULL;
    CHECK(unity && json_is_false(json_object_get(unity, "write")));
    /* Meshes: written by mesh, and by generate (glTF tiles, Unity water OBJs). */
    for (size_t k = 14; k <= 15; k++) {
        json_t *verbs = all ? json_object_get(json_array_get(all, k), "verbs_write") : NULL;
        bool mesh = false, generate = false;
        size_t v;
        json_t *word;
        json_array_foreach(verbs, v, word)
        {
            mesh |= strcmp(json_string_value(word), "mesh") == 0;
            generate |= strcmp(json_string_value(word), "generate") == 0;
        }
        CHECK(mesh && generate);
    }
    json_decref(all);
    free(out), free(err);

    CHECK_EQ_INT(trn_test_run_cli("formats terragen --format json", &out, &err), 0);
    json_t *one = json_loads(out ? out : "", 0, &je);
    CHECK(json_is_object(one));
    CHECK(one && strstr(json_string_value(json_object_get(one, "detection")), "TERRAGENTERRAIN"));
    json_decref(one);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("formats stationeers-save", &out, &err), 0);
    CHECK_CONTAINS(out, "stationeers-save: Stationeers .save archive (rw)");
    CHECK_CONTAINS(out, "  detection:  ZIP signature");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("formats png jpeg", &out, &err), 2);
    CHECK_CONTAINS(err, "takes one format name");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("formats jpeg", &out, &err), 2);
    CHECK_CONTAINS(err, "no format named 'jpeg'");
    free(out), free(err);

    /* Every format read from a file is a name --input-format takes. */
    for (size_t k = 0; k < 10; k++) {
        CHECK_EQ_INT(
            trn_test_run_clif("info '%s/none' --input-format %s", &out, &err, dir, format_names[k]),
            1);
        CHECK(err && !strstr(err, "--input-format"));
        free(out), free(err);
    }
}

/* Every verb and sub-verb that takes --format json prints one JSON value on stdout. */
static void test_json_everywhere(void)
{
    char ter[1100], rcp[1100], png[1100], dat[1100], lvl[1100];
    tmp(ter, sizeof ter, "small.ter");
    tmp(rcp, sizeof rcp, "r.json");
    tmp(png, sizeof png, "h.png");
    tmp(dat, sizeof dat, "t.dat");
    tmp(lvl, sizeof lvl, "game/levels/lv");
    CHECK(trn_test_write_file(rcp, recipe, strlen(recipe)));
    char project[1100];
    snprintf(project, sizeof project, "%s/examples/project", TRN_SOURCE_DIR);
    char *cmds[32];
    int n = 0;
#define ADD(...)                                                                                   \
    do {                                                                                           \
        char *c_ = malloc(3000);                                                                   \
        snprintf(c_, 3000, __VA_ARGS__);                                                           \
        cmds[n++] = c_;                                                                            \
    } while (0)
    ADD("info '%s'", ter);
    ADD("convert '%s' '%s'", ter, png);
    ADD("render '%s' -o '%s/r.png'", ter, dir);
    ADD("render '%s' -o '%s/l.png' --mode layers", ter, dir);
    ADD("beamng create lv --resolution 128 --root '%s/game'", dir);
    ADD("beamng export '%s' -o '%s/ex'", ter, dir);
    ADD("beamng validate '%s'", lvl);
    ADD("stationeers from-heightfield '%s' '%s' --max-depth 4", png, dat);
    ADD("unity export '%s' '%s/u' --fit pad", ter, dir);
    ADD("generate '%s' -o '%s/g.png'", rcp, dir);
    ADD("inspect '%s'", rcp);
    ADD("explain '%s' --at 10,10", rcp);
    ADD("seeds 42");
    ADD("graph types");
    ADD("graph check '%s'", rcp);
    ADD("presets");
    ADD("compact '%s'", rcp);
    ADD("recover '%s'", dir);
    ADD("formats");
    ADD("apply-preset '%s' --preset asset://presets/wetlands", project);
#undef ADD
    for (int k = 0; k < n; k++) {
        char *out = NULL, *err = NULL;
        int rc = trn_test_run_clif("%s --format json", &out, &err, cmds[k]);
        json_error_t je;
        json_t *j = json_loads(out ? out : "", 0, &je);
        if (rc != 0 || !j)
            fprintf(stderr, "  %s --format json: rc %d, %s\n%s", cmds[k], rc,
                    j ? "JSON" : "no JSON", err ? err : "");
        CHECK_EQ_INT(rc, 0);
        CHECK(j != NULL);
        json_decref(j);
        free(out), free(err), free(cmds[k]);
    }
}

/* With --format json a failure answers on stdout too: {"error": {...}} with the exit code, the
 * message and, where known, the file and position; a usage error the same with exit code 2. */
static void test_json_errors(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_cli("--format json info /no/such/file.ter", &out, &err), 1);
    json_t *doc = json_loads(out ? out : "", 0, NULL);
    json_t *e = json_object_get(doc, "error");
    CHECK(e != NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(e, "exit_code")), 1);
    CHECK(strcmp(json_string_value(json_object_get(e, "verb")), "info") == 0);
    CHECK_CONTAINS(json_string_value(json_object_get(e, "file")), "/no/such/file.ter");
    CHECK(strcmp(json_string_value(json_object_get(e, "code")), "TRN_ERR_NOT_FOUND") == 0);
    json_decref(doc);
    CHECK_CONTAINS(err, "/no/such/file.ter");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("--format json stats x --bogus 1", &out, &err), 2);
    doc = json_loads(out ? out : "", 0, NULL);
    e = json_object_get(doc, "error");
    CHECK_EQ_INT(json_integer_value(json_object_get(e, "exit_code")), 2);
    CHECK_CONTAINS(json_string_value(json_object_get(e, "message")), "unknown option '--bogus'");
    json_decref(doc);
    free(out), free(err);
    /* --format json after what fails: the usage error the verb meets first, a shipped example
     * that is not there, a verb that prints no JSON, all still answer in JSON. */
    static const struct {
        const char *cmd;
        int rc;
        const char *message;
    } late[] = {
        {"info --bogus x --format json", 2, "unknown option '--bogus'"},
        {"inspect example:nowhere --format=json", 1, "'example:nowhere': no such example"},
        {"inspect example:.. --format json", 2, "expected example:NAME"},
        {"lua x.lua --format json", 2, "prints no JSON"},
        /* Met before any verb runs: no verb, an unknown verb, an unknown common option. */
        {"--format json", 2, "needs a verb"},
        {"--format json convrt x", 2, "unknown verb 'convrt'; did you mean 'convert'?"},
        {"convrt x --format json", 2, "unknown verb 'convrt'"},
        {"--format json --bogus info x", 2, "unknown option '--bogus'"},
        {"--bogus info x --format=json", 2, "unknown option '--bogus'"},
        {"--format json --format", 2, "option --format needs a value"},
        /* A verb of sub-verbs without one. */
        {"--format json beamng", 2, "needs a sub-verb: import, create"},
        {"stationeers --format json", 2, "needs a sub-verb: extract, replace"},
        {"unity --format json", 2, "needs a command: info, extract or export"},
    };
    for (size_t k = 0; k < sizeof late / sizeof late[0]; k++) {
        CHECK_EQ_INT(trn_test_run_cli(late[k].cmd, &out, &err), late[k].rc);
        doc = json_loads(out ? out : "", 0, NULL);
        e = json_object_get(doc, "error");
        if (!e) fprintf(stderr, "  %s: no error object on stdout: '%s'\n", late[k].cmd, out);
        CHECK_EQ_INT(json_integer_value(json_object_get(e, "exit_code")), late[k].rc);
        CHECK_CONTAINS(json_string_value(json_object_get(e, "message")), late[k].message);
        json_decref(doc);
        free(out), free(err);
    }
    /* Before the verb's own name nothing names a verb; after it, the error names it. */
    CHECK_EQ_INT(trn_test_run_cli("--format json convrt x", &out, &err), 2);
    doc = json_loads(out ? out : "", 0, NULL);
    e = json_object_get(doc, "error");
    CHECK(e && !json_object_get(e, "verb"));
    json_decref(doc);
    free(out), free(err);
    /* Common options may stand between a verb and its sub-verb, as anywhere else. */
    CHECK_EQ_INT(trn_test_run_cli("beamng --format json -q validate /no/such/level", &out, &err), 1);
    doc = json_loads(out ? out : "", 0, NULL);
    e = json_object_get(doc, "error");
    CHECK(e && strcmp(json_string_value(json_object_get(e, "verb")), "beamng validate") == 0);
    CHECK_EQ_INT(json_integer_value(json_object_get(e, "exit_code")), 1);
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("unity -q --format json info /no/such/file.asset", &out, &err), 1);
    doc = json_loads(out ? out : "", 0, NULL);
    e = json_object_get(doc, "error");
    CHECK(e && strcmp(json_string_value(json_object_get(e, "verb")), "unity info") == 0);
    json_decref(doc);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("stationeers -q", &out, &err), 2);
    CHECK(out && out[0] == '\0');
    CHECK_CONTAINS(err, "usage: terrane stationeers");
    free(out), free(err);
    /* Text mode: a top-level usage error leaves stdout empty. */
    CHECK_EQ_INT(trn_test_run_cli("convrt x", &out, &err), 2);
    CHECK(out && out[0] == '\0');
    CHECK_CONTAINS(err, "terrane: unknown verb 'convrt'; did you mean 'convert'?");
    free(out), free(err);
    /* A later --format text wins: no JSON. */
    CHECK_EQ_INT(trn_test_run_cli("info --bogus x --format json --format text", &out, &err), 2);
    CHECK(out && out[0] == '\0');
    free(out), free(err);
    /* Text mode: stdout stays empty. */
    CHECK_EQ_INT(trn_test_run_cli("info /no/such/file.ter", &out, &err), 1);
    CHECK(out && out[0] == '\0');
    free(out), free(err);
}

/* example:NAME runs a shipped example recipe from any folder; TERRANE_EXAMPLES points
 * elsewhere; a name that is no example fails and names the recipes of that folder. */
static void test_examples_by_name(void)
{
    char *out = NULL, *err = NULL;
    char png[1200];
    snprintf(png, sizeof png, "%s/island.png", dir);
    CHECK_EQ_INT(
        trn_test_run_clif("generate example:island --resolution 32x32 -o '%s' -q", &out, &err, png),
        0);
    CHECK(trn_test_exists(png));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect example:nowhere", &out, &err), 1);
    CHECK_CONTAINS(err, "'example:nowhere': no such example");
    CHECK_CONTAINS(err, "the recipes there: dem_level, hills, island, lakeside, mountains, valley, "
                        "waters;");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect example:../recipes/island.json", &out, &err), 2);
    CHECK_CONTAINS(err, "expected example:NAME");
    free(out), free(err);
    /* Another examples folder: its recipes/own.json. */
    char own[1300], sub[1200];
    snprintf(sub, sizeof sub, "%s/ex", dir);
    mkdir(sub, 0755);
    snprintf(sub, sizeof sub, "%s/ex/recipes", dir);
    mkdir(sub, 0755);
    snprintf(own, sizeof own, "%s/own.json", sub);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(TRN_SOURCE_DIR "/examples/recipes/island.json", &n);
    CHECK(text && trn_test_write_file(own, text, n));
    free(text);
    snprintf(sub, sizeof sub, "%s/ex", dir);
    setenv("TERRANE_EXAMPLES", sub, 1);
    CHECK_EQ_INT(trn_test_run_cli("inspect example:own", &out, &err), 0);
    CHECK_CONTAINS(out, "own.json");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("inspect example:island", &out, &err), 1);
    /* The names offered are that folder's, not the shipped ones. */
    CHECK_CONTAINS(err, "(the recipes there: own; or a file under it");
    free(out), free(err);
    unsetenv("TERRANE_EXAMPLES");
}

/* info describes every document terrane reads by its content, whatever its name. */
static void test_info_documents(void)
{
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(
        trn_test_run_cli("info " TRN_SOURCE_DIR "/examples/recipes/island.json", &out, &err), 0);
    CHECK_CONTAINS(out, "format:     terrane recipe");
    CHECK_CONTAINS(out, "seed:       3889");
    CHECK_CONTAINS(out, "landforms:  1 (island)");
    CHECK(!strstr(err, "BeamNG")); /* not read as a .terrain.json any more */
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_cli("info " TRN_SOURCE_DIR "/examples/project/world.scene.json", &out, &err),
        0);
    CHECK_CONTAINS(out, "format:     terrane scene");
    CHECK_CONTAINS(out, "landscape: inline recipe");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info " TRN_SOURCE_DIR
                                  "/examples/project/presets/wetlands.preset.json",
                                  &out, &err),
                 0);
    CHECK_CONTAINS(out, "terrane terrain preset");
    CHECK_CONTAINS(out, "name:        Wetlands");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("info " TRN_SOURCE_DIR
                                  "/examples/project/presets/wetlands.asset.json",
                                  &out, &err),
                 0);
    CHECK_CONTAINS(out, "terrane asset manifest");
    CHECK_CONTAINS(out, "source:     wetlands.preset.json");
    free(out), free(err);
    char odd[1200];
    snprintf(odd, sizeof odd, "%s/odd.json", dir);
    CHECK(trn_test_write_file(odd, "{\"foo\": 1}", 10));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, odd), 1);
    CHECK_CONTAINS(err, "a JSON document of no kind terrane reads");
    free(out), free(err);
    /* Broken JSON: where it breaks, not a guess at what it was meant to be. */
    CHECK(trn_test_write_file(odd, "{\"a\": [1,\n 2", 13));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, odd), 1);
    CHECK_CONTAINS(err, "odd.json:2:2: invalid JSON");
    CHECK(!strstr(err, "BeamNG"));
    free(out), free(err);
    /* A scene's Terrain3D settings are checked: info and cook refuse a negative LOD error at
     * its place; a placeholder terrain (no asset, no recipe) is fine. */
    char scene[1200];
    snprintf(scene, sizeof scene, "%s/scn/w.scene.json", dir);
    char sub[1200];
    snprintf(sub, sizeof sub, "%s/scn", dir);
    mkdir(sub, 0755);
    const char *bad = "{\"entities\": [{\"id\": \"t\", \"components\": {\"Terrain3D\":\n"
                      "  {\"lod_error_pixels\": -1}}}]}";
    CHECK(trn_test_write_file(scene, bad, strlen(bad)));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, scene), 1);
    CHECK_CONTAINS(err, "w.scene.json:2:24: entities[0].components.Terrain3D.lod_error_pixels: "
                        "expected a finite number of pixels >= 0");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("cook '%s' -o '%s/cooked' -q", &out, &err, sub, dir), 1);
    CHECK_CONTAINS(err, "w.scene.json:2:24: ");
    free(out), free(err);
    const char *good = "{\"entities\": [{\"id\": \"t\", \"components\": {\"Terrain3D\": {}}}]}";
    CHECK(trn_test_write_file(scene, good, strlen(good)));
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, scene), 0);
    CHECK_CONTAINS(out, "t: none");
    free(out), free(err);
}

int main(void)
{
    if (!trn_test_tmpdir(dir, sizeof dir)) return trn_test_skip("no temporary folder");
    RUN(test_options_before_verb);
    RUN(test_did_you_mean);
    RUN(test_verb_list);
    RUN(test_help_examples);
    RUN(test_formats_verb);
    RUN(test_examples_by_name);
    RUN(test_info_documents);
    RUN(test_json_errors);
    RUN(test_json_everywhere);
    return trn_test_finish();
}
