/* Generation's last pass: palette placements and surface roles on the result, the snow line. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/generate.h"
#include "test.h"

/* Hills from 0 to 150 m over 512 units, a sea at 45 m, a meadow below 80 m and alpine above. */
static const char *recipe_text(const char *extra)
{
    static char text[2048];
    snprintf(text, sizeof text,
             "{\"size\": [512, 512], \"resolution\": [128, 128], \"seed\": 77, \"sea_level\": 45,"
             " \"default_landform\": \"hills\", \"landforms\": {\"hills\": {\"base_height\": 0,"
             " \"height_variation\": 150, \"feature_size\": 400}},"
             " \"default_biome\": \"meadow\", \"biomes\": {\"meadow\": {\"color\": [0.3, 0.6, "
             "0.2, 1]}, \"alpine\": {\"color\": [0.6, 0.6, 0.6, 1], \"allow_snow\": %s}},"
             " \"rules\": [{\"id\": \"high\", \"biome\": \"alpine\", \"priority\": 1,"
             " \"elevation\": [80, 100000]}]%s}",
             strstr(extra, "nosnow") ? "false" : "true",
             strstr(extra, "snow_line") ? ", \"snow_line\": 110" : "");
    return text;
}

static void parse_recipe(const char *extra, trn_recipe *r)
{
    const char *t = recipe_text(extra);
    trn_error e;
    if (trn_recipe_parse(t, strlen(t), "surface.json", r, NULL, &e)) {
        fprintf(stderr, "%s\n", e.message);
        CHECK(false);
    }
}

static const char *palette_json =
    "{\"format_version\": 3, \"name\": \"meadow\", \"placements\": {"
    " \"grass\": {\"model\": \"asset://models/grass\", \"collision\": \"none\", \"category\": \"grass\","
    "  \"density\": 0.5, \"candidate_spacing\": 1, \"slope\": [0, 30]},"
    " \"pine\": {\"prefab\": \"asset://prefabs/pine\", \"category\": \"tree\", \"density\": 0.01,"
    "  \"spacing\": 6, \"biomes\": [\"alpine\"], \"moisture\": [0.2, 1]}}}";

static uint64_t hash_instances(const trn_instances *in)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = (const unsigned char *)in->items;
    for (size_t k = 0; k < in->count * sizeof *in->items; k++)
        h = (h ^ p[k]) * 1099511628211ull;
    return h ^ in->count;
}

/* The palette placed during generation equals scattering the finished result by hand, for
 * any thread count; without a palette nothing is placed and no roles are made. */
static void test_palette_placed_on_final_surface(void)
{
    trn_recipe r;
    parse_recipe("", &r);
    trn_palette pal;
    trn_error e;
    CHECK_OK(trn_palette_parse(palette_json, strlen(palette_json), "p.json", &pal, &e));
    trn_generate_options one = {.threads = 1, .palette = &pal};
    trn_generate_options two = {.threads = 2, .palette = &pal};
    trn_generated a, b, plain;
    CHECK_OK(trn_recipe_generate(&r, &one, &a, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&r, &two, &b, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&r, NULL, &plain, NULL, NULL, &e));
    CHECK(a.instances.count > 1000);
    CHECK(a.scatter_base.count == 0); /* the instances are their own candidates */
    CHECK(a.scatter.rule_count == 2);
    CHECK(a.scatter.placed == a.instances.count);
    CHECK(hash_instances(&a.instances) == hash_instances(&b.instances));
    CHECK(plain.instances.count == 0 && plain.roles == NULL && plain.scatter.rule_count == 0);
    /* By hand: the same environment and options. */
    trn_generated_scatter_env env;
    CHECK_OK(trn_generated_scatter_env_init(&plain, &r, &pal, &env, &e));
    CHECK(env.moisture != NULL); /* pine reads moisture */
    CHECK(env.env.scatter_seed == trn_subseed(77, "scatter"));
    trn_instances hand;
    memset(&hand, 0, sizeof hand);
    CHECK_OK(trn_scatter_run(&pal, &env.env, NULL, &hand, NULL, NULL, NULL, &e));
    CHECK(hash_instances(&hand) == hash_instances(&a.instances));
    /* Pines only in the alpine biome, which the rule puts above 120 m. */
    size_t pines = 0;
    for (size_t k = 0; k < a.instances.count; k++)
        if (a.instances.items[k].rule == 1) {
            pines++;
            CHECK(a.instances.items[k].y >= 79.0);
        }
    CHECK(pines > 0);
    trn_instances_dispose(&hand);
    trn_generated_scatter_env_dispose(&env);
    trn_generated_scatter_env_dispose(NULL);
    /* The ceiling reaches the scatter. */
    trn_generate_options capped = {.threads = 1, .palette = &pal, .max_placements = 10};
    trn_generated c;
    CHECK_OK(trn_recipe_generate(&r, &capped, &c, NULL, NULL, &e));
    CHECK(c.instances.count == 10 && c.scatter.truncated == a.instances.count - 10);
    trn_generated_dispose(&c);
    trn_generated_dispose(&a);
    trn_generated_dispose(&b);
    trn_generated_dispose(&plain);
    trn_palette_dispose(&pal);
    trn_recipe_dispose(&r);
}

static void count_roles(const uint8_t *roles, size_t n, uint64_t counts[TRN_ROLE_COUNT])
{
    memset(counts, 0, TRN_ROLE_COUNT * sizeof *counts);
    for (size_t k = 0; k < n; k++)
        if (roles[k] < TRN_ROLE_COUNT) counts[roles[k]]++;
}

/* Roles on the result equal classifying it by hand; snow needs the recipe's snow line and a
 * biome that allows it, and lies only above the line. */
static void test_roles_and_snow_line(void)
{
    trn_error e;
    trn_generate_options go = {.threads = 2, .roles = true};
    trn_recipe none, line, blocked;
    parse_recipe("", &none);
    parse_recipe("snow_line", &line);
    parse_recipe("snow_line nosnow", &blocked);
    CHECK(!none.has_snow_line && line.has_snow_line && line.snow_line == 110.0);
    trn_generated g0, g1, g2;
    CHECK_OK(trn_recipe_generate(&none, &go, &g0, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&line, &go, &g1, NULL, NULL, &e));
    CHECK_OK(trn_recipe_generate(&blocked, &go, &g2, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&g1.field);
    uint8_t *hand = malloc(n);
    CHECK_OK(trn_generated_classify_roles(&g1, &line, NULL, hand, &e));
    CHECK(memcmp(hand, g1.roles, n) == 0);
    uint64_t c0[TRN_ROLE_COUNT], c1[TRN_ROLE_COUNT], c2[TRN_ROLE_COUNT];
    count_roles(g0.roles, n, c0);
    count_roles(g1.roles, n, c1);
    count_roles(g2.roles, n, c2);
    CHECK(c0[TRN_ROLE_SNOW] == 0);
    CHECK(c1[TRN_ROLE_SNOW] > 0);
    CHECK(c2[TRN_ROLE_SNOW] == 0);
    CHECK(c0[TRN_ROLE_UNDERWATER] > 0); /* the sea at 45 m */
    for (size_t k = 0; k < n; k++)
        if (g1.roles[k] == TRN_ROLE_SNOW) CHECK(g1.field.heights[k] >= 110.0f);
    /* Explicit parameters win over the recipe's line. */
    trn_roles_params p;
    trn_recipe_roles_params(&line, &p);
    CHECK(p.snow_height == 110.0);
    trn_recipe_roles_params(&none, &p);
    CHECK(isinf(p.snow_height));
    CHECK_OK(trn_generated_classify_roles(&g1, &line, &p, hand, &e));
    CHECK(memcmp(hand, g0.roles, n) == 0);
    CHECK(trn_generated_classify_roles(&g1, &line, NULL, NULL, &e) == TRN_ERR_INVALID_ARGUMENT);
    free(hand);
    trn_generated_dispose(&g0);
    trn_generated_dispose(&g1);
    trn_generated_dispose(&g2);
    trn_recipe_dispose(&none);
    trn_recipe_dispose(&line);
    trn_recipe_dispose(&blocked);
}

/* The last pass's inputs made on the threads: the moisture layer (each sample what
 * trn_moisture_at gives there), the wet mask and the roles, the same bytes on 1 and 3 threads. */
static void test_finish_inputs_threads(void)
{
    trn_recipe r;
    parse_recipe("snow_line", &r);
    trn_palette pal;
    trn_error e;
    CHECK_OK(trn_palette_parse(palette_json, strlen(palette_json), "p.json", &pal, &e));
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, &e));
    const size_t n = trn_field_sample_count(&g.field), nx = g.field.cells_x + 1u;
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
#endif
    trn_generated_scatter_env env[2];
    uint8_t *roles[2] = {malloc(n), malloc(n)};
    for (int t = 0; t < 2; t++) {
        test_set_threads(t ? 3 : 1);
        CHECK_OK(trn_generated_scatter_env_init(&g, &r, &pal, &env[t], &e));
        CHECK_OK(trn_generated_classify_roles(&g, &r, NULL, roles[t], &e));
    }
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    CHECK(env[0].moisture && env[1].moisture);
    CHECK(memcmp(env[0].moisture, env[1].moisture, n * sizeof *env[0].moisture) == 0);
    CHECK(memcmp(env[0].wet, env[1].wet, n * sizeof *env[0].wet) == 0);
    CHECK(memcmp(roles[0], roles[1], n) == 0);
    size_t bad = 0, wet = 0;
    for (size_t k = 0; k < n; k++) {
        const size_t i = k % nx, j = k / nx;
        const double m = trn_moisture_at(r.seed, (double)i * r.size_x / r.cells_x,
                                         (double)j * r.size_z / r.cells_z);
        bad += env[1].moisture[k] != (float)m;
        bad += env[1].wet[k] != (g.water_distance[k] == 0.0f);
        wet += env[1].wet[k];
    }
    CHECK(bad == 0);
    CHECK(wet > 0 && wet < n); /* the sea at 45 m and the land above it */
    free(roles[0]);
    free(roles[1]);
    trn_generated_scatter_env_dispose(&env[0]);
    trn_generated_scatter_env_dispose(&env[1]);
    trn_generated_dispose(&g);
    trn_palette_dispose(&pal);
    trn_recipe_dispose(&r);
}

/* snow_line: checked where it stands, kept by the canonical form. */
static void test_snow_line_field(void)
{
    trn_recipe r;
    trn_error e;
    const char *bad = "{\"size\": [8, 8], \"resolution\": [8, 8], \"seed\": 1,\n"
                      " \"snow_line\": \"high\", \"default_landform\": \"a\", \"landforms\": "
                      "{\"a\": {}}, \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [1, 1, 1, 1]}}}";
    CHECK(trn_recipe_parse(bad, strlen(bad), "bad.json", &r, NULL, &e) != TRN_OK);
    CHECK_CONTAINS(e.message, "snow_line");
    CHECK_CONTAINS(e.message, "a number from -1e9 to 1e9");
    CHECK(e.line == 2);
    const char *big = "{\"size\": [8, 8], \"resolution\": [8, 8], \"seed\": 1,"
                      " \"snow_line\": 1000000001, \"default_landform\": \"a\", \"landforms\": "
                      "{\"a\": {}}, \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [1, 1, 1, 1]}}}";
    CHECK(trn_recipe_parse(big, strlen(big), "big.json", &r, NULL, &e) != TRN_OK);
    CHECK_CONTAINS(e.message, "snow_line");
    const char *edge = "{\"size\": [8, 8], \"resolution\": [8, 8], \"seed\": 1,"
                       " \"snow_line\": -1000000000, \"default_landform\": \"a\", \"landforms\": "
                       "{\"a\": {}}, \"default_biome\": \"b\", \"biomes\": {\"b\": {\"color\": [1, 1, 1, 1]}}}";
    CHECK_OK(trn_recipe_parse(edge, strlen(edge), "edge.json", &r, NULL, &e));
    CHECK(r.has_snow_line && r.snow_line == -1e9);
    char *text = NULL;
    size_t size = 0;
    CHECK_OK(trn_recipe_canonical_json(&r, &text, &size, &e));
    CHECK_CONTAINS(text, "\"snow_line\"");
    /* Validation of a struct built in code says the same. */
    r.snow_line = NAN;
    CHECK(trn_recipe_validate(&r, &e) == TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "snow_line");
    free(text);
    trn_recipe_dispose(&r);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* A material set resolved on its own (an inline palette that names one). */
static void test_material_set_resolve(void)
{
    char dir[512], sub[600], path[700], recipe[700];
    trn_test_tmpdir(dir, sizeof dir);
    snprintf(sub, sizeof sub, "%s/sets", dir);
    mkdir(sub, 0755);
    snprintf(path, sizeof path, "%s/sets/rocks.asset.json", dir);
    write_file(path, "{\"type\": \"DataAsset\", \"source\": \"rocks.json\", \"settings\": "
                     "{\"content_type\": \"terrain_material_set\"}}");
    snprintf(path, sizeof path, "%s/sets/rocks.json", dir);
    write_file(path, "{\"format_version\": 1, \"name\": \"Rocks\", \"roles\": {\"rock\": "
                     "\"asset://materials/granite\"}}");
    snprintf(path, sizeof path, "%s/sets/meadow.asset.json", dir);
    write_file(path, "{\"type\": \"DataAsset\", \"source\": \"meadow.json\", \"settings\": "
                     "{\"content_type\": \"terrain_palette\"}}");
    snprintf(recipe, sizeof recipe, "%s/recipe.json", dir);
    trn_material_set set;
    trn_error e;
    CHECK_OK(trn_material_set_resolve(recipe, "asset://sets/rocks", &set, &e));
    CHECK(strcmp(set.name, "Rocks") == 0);
    CHECK(set.roles[TRN_ROLE_ROCK] &&
          strcmp(set.roles[TRN_ROLE_ROCK], "asset://materials/granite") == 0);
    CHECK(set.roles[TRN_ROLE_GROUND] == NULL);
    trn_material_set_dispose(&set);
    CHECK(trn_material_set_resolve(recipe, "asset://sets/meadow", &set, &e) == TRN_ERR_FORMAT);
    CHECK_CONTAINS(e.message, "not a terrain_material_set");
    CHECK(trn_material_set_resolve(recipe, "asset://sets/none", &set, &e) == TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "material_set: no asset 'asset://sets/none'");
    CHECK(trn_material_set_resolve(recipe, "asset://../x", &set, &e) == TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_material_set_resolve(recipe, NULL, &set, &e) == TRN_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    RUN(test_palette_placed_on_final_surface);
    RUN(test_roles_and_snow_line);
    RUN(test_finish_inputs_threads);
    RUN(test_snow_line_field);
    RUN(test_material_set_resolve);
    return trn_test_finish();
}
