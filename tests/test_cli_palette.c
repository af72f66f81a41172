/* terrane inspect and info on palettes and material sets: text, JSON, refusals at their place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "test.h"

static const char meadow[] =
    "{\n"
    "\"format_version\": 3,\n"
    "\"name\": \"Meadow\",\n"
    "\"material_set\": \"asset://terrain/material_sets/meadow\",\n"
    "\"art_density\": 0.5,\n"
    "\"tree_density\": 2,\n"
    "\"placements\": {\n"
    "\"pine_sparse\": {\"prefab\": \"prefab://vegetation/pine\", \"category\": \"tree\", "
    "\"density\": 0.02, \"candidate_spacing\": 4, \"spacing\": 12, \"biomes\": [\"meadow\"], "
    "\"slope\": [0, 35]},\n"
    "\"stones\": {\"model\": \"asset://models/stone\", \"density\": 0.1, \"collision\": "
    "\"none\"}\n"
    "}\n"
    "}\n";

static const char surfaces[] = "{\"format_version\": 1, \"name\": \"Landscape surfaces\", "
                               "\"roles\": {\"ground\": \"asset://materials/soil\", \"rock\": "
                               "\"asset://materials/rock\", \"underwater\": "
                               "\"asset://materials/riverbed\"}}";

static void put(const char *dir, const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, name);
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static void test_palette_text_and_json(void)
{
    char dir[512], path[1200];
    trn_test_tmpdir(dir, sizeof dir);
    put(dir, "meadow.palette.json", meadow, path, sizeof path);
    static const char *const verbs[] = {"inspect", "info"};
    for (int v = 0; v < 2; v++) {
        char *out = NULL, *err = NULL;
        CHECK_EQ_INT(trn_test_run_clif("%s '%s'", &out, &err, verbs[v], path), 0);
        CHECK_CONTAINS(out, "terrain_palette 'Meadow' (format_version 3)");
        CHECK_CONTAINS(out, "  material set: asset://terrain/material_sets/meadow\n");
        CHECK_CONTAINS(out, "  density multipliers: art 0.5, grass 1, tree 2, rock 1\n");
        CHECK_CONTAINS(out, "  placements (2):\n");
        CHECK_CONTAINS(out, "    pine_sparse: prefab prefab://vegetation/pine, tree, density "
                            "0.02 (scattered 0.02), candidate_spacing 4, spacing 12, collision "
                            "static\n");
        CHECK_CONTAINS(out, "    stones: model asset://models/stone, prop, density 0.1 "
                            "(scattered 0.05), candidate_spacing 0.25, spacing 0, collision "
                            "none\n");
        CHECK(strstr(out, "recipe") == NULL && strstr(out, "preset") == NULL);
        free(out);
        free(err);

        CHECK_EQ_INT(trn_test_run_clif("%s '%s' --format json", &out, &err, verbs[v], path), 0);
        json_t *root = json_loads(out ? out : "", 0, NULL);
        CHECK(root != NULL);
        CHECK(strcmp(json_string_value(json_object_get(root, "input_format")), "terrain_palette") == 0);
        CHECK(strcmp(json_string_value(json_object_get(root, "name")), "Meadow") == 0);
        CHECK(json_integer_value(json_object_get(root, "format_version")) == 3);
        CHECK(json_number_value(json_object_get(root, "art_density")) == 0.5);
        CHECK(json_number_value(json_object_get(root, "tree_density")) == 2);
        json_t *rules = json_object_get(root, "placements");
        CHECK_EQ_INT(json_array_size(rules), 2);
        json_t *pine = json_array_get(rules, 0), *stones = json_array_get(rules, 1);
        CHECK(strcmp(json_string_value(json_object_get(pine, "id")), "pine_sparse") == 0);
        CHECK(strcmp(json_string_value(json_object_get(pine, "geometry")), "prefab") == 0);
        CHECK(strcmp(json_string_value(json_object_get(pine, "prefab")),
                     "prefab://vegetation/pine") == 0);
        CHECK(strcmp(json_string_value(json_object_get(pine, "category")), "tree") == 0);
        CHECK(json_number_value(json_object_get(pine, "density")) == 0.02);
        CHECK(json_number_value(json_object_get(pine, "scattered_density")) == 0.02);
        CHECK(json_number_value(json_object_get(pine, "candidate_spacing")) == 4);
        CHECK(json_number_value(json_object_get(pine, "spacing")) == 12);
        CHECK(json_number_value(json_array_get(json_object_get(pine, "slope"), 1)) == 35);
        CHECK(json_is_null(json_object_get(pine, "moisture")));
        CHECK(strcmp(json_string_value(json_array_get(json_object_get(pine, "biomes"), 0)),
                     "meadow") == 0);
        CHECK(json_number_value(json_object_get(json_object_get(pine, "cluster"), "size")) == 16);
        CHECK(strcmp(json_string_value(json_object_get(stones, "geometry")), "model") == 0);
        CHECK(strcmp(json_string_value(json_object_get(stones, "model")), "asset://models/stone") ==
              0);
        CHECK(json_object_get(stones, "prefab") == NULL);
        CHECK(strcmp(json_string_value(json_object_get(stones, "collision")), "none") == 0);
        CHECK(json_number_value(json_object_get(stones, "scattered_density")) == 0.05);
        CHECK(json_number_value(json_object_get(stones, "candidate_spacing")) == 0.25);
        json_decref(root);
        free(out);
        free(err);
    }
}

static void test_material_set(void)
{
    char dir[512], path[1200];
    trn_test_tmpdir(dir, sizeof dir);
    put(dir, "surfaces.materials.json", surfaces, path, sizeof path);
    static const char *const verbs[] = {"inspect", "info"};
    for (int v = 0; v < 2; v++) {
        char *out = NULL, *err = NULL;
        CHECK_EQ_INT(trn_test_run_clif("%s '%s'", &out, &err, verbs[v], path), 0);
        CHECK_CONTAINS(out, "terrain_material_set 'Landscape surfaces' (format_version 1)\n");
        CHECK_CONTAINS(out, "  roles (3 of 9 bound):\n");
        CHECK_CONTAINS(out, "    ground      asset://materials/soil\n");
        CHECK_CONTAINS(out, "    grass       unbound (the biome tint)\n");
        CHECK_CONTAINS(out, "    rock        asset://materials/rock\n");
        CHECK_CONTAINS(out, "    wet_ground  unbound (the biome tint)\n");
        CHECK_CONTAINS(out, "    underwater  asset://materials/riverbed\n");
        free(out);
        free(err);
        CHECK_EQ_INT(trn_test_run_clif("%s '%s' --format json", &out, &err, verbs[v], path), 0);
        json_t *root = json_loads(out ? out : "", 0, NULL);
        CHECK(root != NULL);
        CHECK(strcmp(json_string_value(json_object_get(root, "input_format")),
                     "terrain_material_set") == 0);
        json_t *roles = json_object_get(root, "roles");
        CHECK_EQ_INT(json_object_size(roles), 9);
        CHECK(strcmp(json_string_value(json_object_get(roles, "rock")), "asset://materials/rock") ==
              0);
        CHECK(json_is_null(json_object_get(roles, "snow")));
        CHECK_EQ_INT(json_integer_value(json_object_get(root, "bound")), 3);
        json_decref(root);
        free(out);
        free(err);
    }
}

static void test_refusals(void)
{
    char dir[512], path[1200];
    trn_test_tmpdir(dir, sizeof dir);
    put(dir, "bad.palette.json",
        "{\"format_version\": 3, \"name\": \"B\", \"placements\": {\"r\": {\"prefab\": "
        "\"prefab://x\", \"density\": 1, \"lod\": 2}}}",
        path, sizeof path);
    static const char *const verbs[] = {"inspect", "info"};
    for (int v = 0; v < 2; v++) {
        char *out = NULL, *err = NULL;
        CHECK_EQ_INT(trn_test_run_clif("%s '%s'", &out, &err, verbs[v], path), 1);
        CHECK_CONTAINS(err, "bad.palette.json:1:95: unknown key 'lod' in placements.r: 'lod' was "
                            "unused and is refused in format_version 3");
        CHECK(out && out[0] == '\0');
        free(out);
        free(err);
    }
    put(dir, "old.palette.json",
        "{\"format_version\": 2, \"name\": \"Old\", \"placements\": {\"r\": {\"weight\": 3}}}",
        path, sizeof path);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s'", &out, &err, path), 1);
    CHECK_CONTAINS(err, "old.palette.json:1:20: format_version: format_version 2 is no longer "
                        "read: placement weight was replaced by physical density");
    free(out);
    free(err);
    put(dir, "bad.materials.json",
        "{\"format_version\": 1, \"name\": \"S\", \"roles\": {\"dirt\": \"asset://m\"}}", path,
        sizeof path);
    CHECK_EQ_INT(trn_test_run_clif("info '%s'", &out, &err, path), 1);
    CHECK_CONTAINS(err, "bad.materials.json:1:46: unknown key 'dirt' in roles");
    free(out);
    free(err);
    /* a preset is still a preset for inspect (not described as a palette) */
    put(dir, "hills.preset.json", "{\"format_version\": 1, \"name\": \"Hills\", \"seed\": 9}", path,
        sizeof path);
    CHECK_EQ_INT(trn_test_run_clif("inspect '%s'", &out, &err, path), 1);
    CHECK_CONTAINS(err, "this is a terrain_preset document");
    free(out);
    free(err);
}

int main(void)
{
    RUN(test_palette_text_and_json);
    RUN(test_material_set);
    RUN(test_refusals);
    return trn_test_finish();
}
