/* Every shipped example opens in every verb that reads a recipe, and the project in its verbs. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"

static char dir[512];

static const char *const EXAMPLES[] = {"dem_level", "hills",  "island", "lakeside",
                                       "mountains", "valley", "waters", NULL};

/* Run one command line; on an unexpected exit, say which and show its stderr. */
static void expect(int want, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void expect(int want, const char *what, const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    char *out = NULL, *err = NULL;
    const int rc = trn_test_run_cli(cmd, &out, &err);
    if (rc != want) fprintf(stderr, "%s: 'terrane %s' exited %d:\n%s\n", what, cmd, rc, err);
    CHECK_EQ_INT(rc, want);
    free(out);
    free(err);
}

/* The examples folder copied beside the demo's dem.tif (dem_level reads it beside itself). */
static void prepare(void)
{
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "'%s' '%s' 16 > /dev/null && cp '%s'/examples/recipes/*.json '%s'/",
             TRN_DEMO_INPUTS_PATH, dir, TRN_SOURCE_DIR, dir);
    CHECK(system(cmd) == 0);
}

static void test_every_verb(void)
{
    for (size_t k = 0; EXAMPLES[k]; k++) {
        const char *name = EXAMPLES[k];
        char recipe[700];
        snprintf(recipe, sizeof recipe, "%s/%s.json", dir, name);
        json_error_t je;
        json_t *doc = json_load_file(recipe, 0, &je);
        CHECK(doc != NULL);
        const json_t *size = json_object_get(doc, "size");
        const double cx = json_number_value(json_array_get(size, 0)) / 2.0;
        const double cz = json_number_value(json_array_get(size, 1)) / 2.0;
        const bool palette = json_object_get(doc, "palette") != NULL;
        json_decref(doc);
        expect(0, name, "info '%s'", recipe);
        expect(0, name, "inspect '%s'", recipe);
        expect(0, name, "graph check '%s'", recipe);
        expect(0, name, "generate '%s' --resolution 64x64 -o '%s/%s.png' -q", recipe, dir, name);
        expect(0, name, "stats '%s' --resolution 64x64", recipe);
        expect(0, name, "explain '%s' --at %g,%g -q", recipe, cx, cz);
        expect(0, name, "water '%s' -q", recipe);
        expect(0, name, "render '%s' -o '%s/%s_shade.png' -q", recipe, dir, name);
        expect(0, name, "mesh '%s' -o '%s/%s.glb' --lod 3 -q", recipe, dir, name);
        expect(0, name, "cook '%s' -o '%s/cooked' -q", recipe, dir);
        /* scatter needs a palette; without one it says so (exit 1), never crashes. */
        expect(palette ? 0 : 1, name, "scatter '%s' -o '%s/%s.txt' -q", recipe, dir, name);
    }
}

/* The project folder: its scene's terrain cooks, and its presets list. */
static void test_project(void)
{
    expect(0, "project", "info '%s/examples/project/world.scene.json'", TRN_SOURCE_DIR);
    expect(0, "project", "presets '%s/examples/project'", TRN_SOURCE_DIR);
    expect(0, "project", "cook '%s/examples/project' -o '%s/project_cooked' -q", TRN_SOURCE_DIR,
           dir);
}

int main(void)
{
    if (!trn_test_tmpdir(dir, sizeof dir)) return 1;
    prepare();
    RUN(test_every_verb);
    RUN(test_project);
    return trn_test_finish();
}
