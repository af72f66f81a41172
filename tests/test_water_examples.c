/* Every shipped example recipe and built-in preset with water resolves without a leak: no
 * published body warns, and no water node's note reports a leaking shore or bank or a spill
 * lake left empty. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/generate.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"
#include "test.h"

/* Whether a recipe's graph places water: the others cannot leak (and cost time to generate). */
static bool places_water(const trn_recipe *r)
{
    return r->graph_json &&
           (strstr(r->graph_json, "\"water_body\"") || strstr(r->graph_json, "\"basin_water\"") ||
            strstr(r->graph_json, "\"river_route\""));
}

/* The texts resolution writes when water would run out, or when a spill lake holds none. */
static bool leak_text(const char *text)
{
    return strstr(text, "reaches the boundary below the level") ||
           strstr(text, "reaches a dry side below it") || strstr(text, "level spill:");
}

/* Generates r and counts its leak warnings (published bodies and node notes); *bodies gets the
 * number of published water bodies. */
static uint32_t leaks_of(const char *name, const trn_recipe *r, uint32_t *bodies)
{
    trn_generated g;
    trn_error e;
    trn_generate_options go = {.threads = 0};
    const trn_status s = trn_recipe_generate(r, &go, &g, NULL, NULL, &e);
    CHECK_OK(s);
    *bodies = 0;
    if (s) {
        fprintf(stderr, "%s: %s\n", name, e.message);
        return 0;
    }
    uint32_t leaks = 0;
    for (uint32_t b = 0; g.has_water && b < g.water.body_count; b++) {
        const trn_water_body *body = &g.water.bodies[b];
        if (body->warning_count)
            fprintf(stderr, "%s: body '%s': %s (%u)\n", name, body->id, body->warning,
                    body->warning_count);
        leaks += body->warning_count;
    }
    for (uint32_t k = 0; k < g.node_count; k++)
        if (leak_text(g.nodes[k].note)) {
            fprintf(stderr, "%s: node '%s': %s\n", name, g.nodes[k].id, g.nodes[k].note);
            leaks++;
        }
    *bodies = g.has_water ? g.water.body_count : 0u;
    trn_generated_dispose(&g);
    return leaks;
}

static void test_presets(void)
{
    uint32_t with_water = 0;
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++) {
        const char *id = trn_builtin_preset_id(i);
        const char *text = trn_builtin_preset_text(id);
        trn_recipe r;
        trn_error e;
        CHECK_OK(trn_recipe_parse(text, strlen(text), id, &r, NULL, &e));
        uint32_t bodies = 0;
        if (places_water(&r)) CHECK_EQ_INT(leaks_of(id, &r, &bodies), 0);
        with_water += bodies > 0;
        trn_recipe_dispose(&r);
    }
    CHECK(with_water >= 3); /* the basin's lake, the island's sea, the river */
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .json file in examples/recipes, whatever is added later. */
static void test_examples(void)
{
    const char *dir = TRN_SOURCE_DIR "/examples/recipes";
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d) return;
    char *names[256];
    size_t n = 0;
    struct dirent *ent;
    while ((ent = readdir(d)) && n < 256) {
        const size_t len = strlen(ent->d_name);
        if (len > 5 && strcmp(ent->d_name + len - 5, ".json") == 0)
            names[n++] = strdup(ent->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_name);
    uint32_t with_water = 0;
    for (size_t k = 0; k < n; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        trn_recipe r;
        trn_error e;
        const trn_status s = trn_recipe_read(path, &r, NULL, &e);
        CHECK_OK(s);
        const bool water = !s && places_water(&r);
        if (!s && !water) trn_recipe_dispose(&r);
        if (water) {
            uint32_t bodies = 0;
            CHECK_EQ_INT(leaks_of(names[k], &r, &bodies), 0);
            with_water += bodies > 0;
            trn_recipe_dispose(&r);
        }
        free(names[k]);
    }
    CHECK(with_water >= 2); /* lakeside and waters */
}

/* The example project's scene: every terrain with an inline recipe (the project's one preset,
 * wetlands, has biomes and rules but no graph, so it places no water of its own). */
static void test_project(void)
{
    json_error_t je;
    json_t *scene = json_load_file(TRN_SOURCE_DIR "/examples/project/world.scene.json", 0, &je);
    CHECK(scene != NULL);
    size_t k, terrains = 0;
    json_t *ent;
    json_array_foreach(json_object_get(scene, "entities"), k, ent)
    {
        json_t *recipe = json_object_get(
            json_object_get(json_object_get(ent, "components"), "Terrain3D"), "recipe");
        if (!json_is_object(recipe)) continue;
        char *text = json_dumps(recipe, JSON_COMPACT);
        trn_recipe r;
        trn_error e;
        CHECK_OK(trn_recipe_parse(text, strlen(text), "world.scene.json", &r, NULL, &e));
        uint32_t bodies = 0;
        /* Its terrain places no water today; generated all the same when it does. */
        if (places_water(&r)) CHECK_EQ_INT(leaks_of("world.scene.json", &r, &bodies), 0);
        trn_recipe_dispose(&r);
        free(text);
        terrains++;
    }
    CHECK(terrains >= 1);
    json_decref(scene);
}

int main(void)
{
    RUN(test_presets);
    RUN(test_examples);
    RUN(test_project);
    return trn_test_finish();
}
