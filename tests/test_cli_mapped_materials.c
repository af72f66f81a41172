/* Mapped materials: a material set's "mapping" read, cooked, decoded and written into exports. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/palette.h"
#include "terrane/runtime.h"
#include "test.h"

static char tmp[512];
static char *out_text, *err_text;

static void reset_output(void)
{
    free(out_text);
    free(err_text);
    out_text = err_text = NULL;
}

#define cli(fmt, ...) (reset_output(), trn_test_run_clif(fmt, &out_text, &err_text, __VA_ARGS__))

static const char *const GRAPH_PROJECT = TRN_SOURCE_DIR "/examples/terrain_graph_3d";

/* The mapping's keys, defaults and ranges; each error at the value's line and column. */
static void test_material_set_mapping_parse(void)
{
    trn_material_set s;
    trn_error e;
    const char *none = "{\"format_version\": 1, \"name\": \"n\", \"roles\": {}}";
    CHECK_OK(trn_material_set_parse(none, strlen(none), "s.json", &s, &e));
    CHECK(!s.mapping.present);
    trn_material_set_dispose(&s);

    const char *empty = "{\"format_version\": 1, \"name\": \"n\", \"roles\": {}, \"mapping\": {}}";
    CHECK_OK(trn_material_set_parse(empty, strlen(empty), "s.json", &s, &e));
    CHECK(s.mapping.present && s.mapping.texture_arrays && s.mapping.triplanar &&
          s.mapping.height_blend);
    CHECK(s.mapping.triplanar_slope == 35.0 && s.mapping.triplanar_sharpness == 4.0);
    CHECK(s.mapping.height_blend_contrast == 0.2 && s.mapping.macro_variation == 0.0);
    CHECK(s.mapping.macro_scale == 0.01);
    trn_material_set_dispose(&s);

    const char *set = "{\"format_version\": 1, \"name\": \"n\", \"roles\": {}, \"mapping\": "
                      "{\"triplanar\": false, \"triplanar_slope\": 50, \"triplanar_sharpness\": 8, "
                      "\"height_blend\": false, \"height_blend_contrast\": 1, "
                      "\"texture_arrays\": false, \"macro_variation\": 0.5, \"macro_scale\": 2}}";
    CHECK_OK(trn_material_set_parse(set, strlen(set), "s.json", &s, &e));
    CHECK(!s.mapping.triplanar && !s.mapping.height_blend && !s.mapping.texture_arrays);
    CHECK(s.mapping.triplanar_slope == 50.0 && s.mapping.triplanar_sharpness == 8.0);
    CHECK(s.mapping.height_blend_contrast == 1.0 && s.mapping.macro_variation == 0.5);
    CHECK(s.mapping.macro_scale == 2.0);
    trn_material_set_dispose(&s);

    static const struct {
        const char *mapping, *message;
        int column;
    } bad[] = {
        {"{\"triplanar_slope\": 95}", "mapping.triplanar_slope: expected a slope in degrees 0..90", 80},
        {"{\"triplanar_sharpness\": 0.5}", "mapping.triplanar_sharpness: expected a number 1..64", 84},
        {"{\"height_blend_contrast\": 0}", "mapping.height_blend_contrast: expected a number in (0, 1]", 86},
        {"{\"macro_variation\": 1.5}", "mapping.macro_variation: expected a number 0..1", 80},
        {"{\"macro_scale\": 0}", "mapping.macro_scale: expected a number > 0", 76},
        {"{\"triplanar\": 1}", "mapping.triplanar: expected true or false", 74},
        {"{\"triplaner\": true}", "did you mean 'triplanar'", 61},
        {"[]", "mapping: expected an object", 60},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        char text[400];
        snprintf(text, sizeof text,
                 "{\"format_version\": 1, \"name\": \"n\", \"roles\": {}, \"mapping\": %s}",
                 bad[k].mapping);
        memset(&e, 0, sizeof e);
        CHECK(trn_material_set_parse(text, strlen(text), "s.json", &s, &e) != TRN_OK);
        CHECK_CONTAINS(e.message, bad[k].message);
        CHECK_EQ_INT((int)e.line, 1);
        if (e.column != bad[k].column) fprintf(stderr, "case %zu: column %d\n", k, (int)e.column);
        CHECK_EQ_INT((int)e.column, bad[k].column);
    }
}

/* The cooked payload keeps the mapping (MAPM), the runtime lists the texture layers (the nine
 * role bindings, then the snow biome's own material) and gives each sample its layer: the
 * biome's material first, else its role's binding. */
static void test_mapping_cooked(void)
{
    char out[700], payload[800];
    snprintf(out, sizeof out, "%s/cooked", tmp);
    snprintf(payload, sizeof payload, "%s/terrain/landscape.terrain.bin", out);
    CHECK_EQ_INT(cli("cook %s -o %s -q", GRAPH_PROJECT, out), 0);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open(payload, NULL, &p, &e));
    if (!p) return;
    const trn_material_mapping *m = trn_payload_mapping(p);
    CHECK(m != NULL);
    if (m) {
        CHECK(m->texture_arrays && m->triplanar && m->height_blend);
        CHECK(m->triplanar_slope == 35.0 && m->triplanar_sharpness == 4.0);
        CHECK(m->height_blend_contrast == 0.2 && m->macro_variation == 0.15);
        CHECK(m->macro_scale == 0.004);
    }
    CHECK_EQ_INT((int)trn_payload_layer_count(p), 10);
    const trn_material_set *set = trn_payload_material_set(p);
    for (uint32_t r = 0; set && r < TRN_ROLE_COUNT; r++)
        CHECK(strcmp(trn_payload_layer_material(p, r), set->roles[r]) == 0);
    CHECK(strcmp(trn_payload_layer_material(p, 9), "asset://materials/glacier") == 0);
    CHECK(trn_payload_layer_material(p, 10) == NULL);
    const uint8_t *roles = trn_payload_roles(p), *biomes = trn_payload_biomes(p);
    int snow = -1;
    for (uint32_t b = 0; b < trn_payload_biome_count(p); b++)
        if (strcmp(trn_payload_biome_name(p, b), "snow") == 0) snow = (int)b;
    CHECK(snow >= 0);
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    const size_t n = ((size_t)info.cells_x + 1u) * ((size_t)info.cells_z + 1u);
    size_t glacier = 0, by_role = 0;
    for (size_t k = 0; k < n; k++) {
        const int want = biomes[k] == snow ? 9 : roles[k] < TRN_ROLE_COUNT ? roles[k] : -1;
        if (trn_payload_layer_of_sample(p, k) != want) {
            CHECK_EQ_INT(trn_payload_layer_of_sample(p, k), want);
            break;
        }
        glacier += want == 9;
        by_role += want >= 0 && want < 9;
    }
    CHECK(glacier > 0 && by_role > 0);
    CHECK_EQ_INT(trn_payload_layer_of_sample(p, n), -1);
    CHECK_EQ_INT(trn_payload_layer_at(p, -1.0, 5.0), -1);
    trn_payload_free(p);

    /* info names the mapping; a changed mapping cooks again, as a changed material set. */
    CHECK_EQ_INT(cli("info %s", payload), 0);
    CHECK_CONTAINS(out_text, "texture layers: 10");
    CHECK_CONTAINS(out_text, "material mapping: texture arrays yes, triplanar from 35 degrees");
    CHECK_CONTAINS(out_text, "MAPM");
    CHECK_CONTAINS(out_text, "render plan at the default budgets: GPU patches (0.19 MiB), texture "
                             "arrays of 10 layers at 512 (66.67 MiB)");
    char copy[800], cmd[2000], sets[900];
    snprintf(copy, sizeof copy, "%s/project", tmp);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s'", copy, GRAPH_PROJECT, copy);
    CHECK(system(cmd) == 0);
    /* The copy cooks into its own folder: the payload above stays as the example cooks it. */
    char out2[600];
    snprintf(out2, sizeof out2, "%s/cooked_copy", tmp);
    snprintf(payload, sizeof payload, "%s/terrain/landscape.terrain.bin", out2);
    CHECK_EQ_INT(cli("cook %s -o %s -q", copy, out2), 0);
    CHECK_EQ_INT(cli("cook %s -o %s -q", copy, out2), 0);
    CHECK_CONTAINS(out_text, "up to date");
    snprintf(sets, sizeof sets, "%s/materials/landscape.materials.json", copy);
    snprintf(cmd, sizeof cmd, "sed -i 's/\"triplanar_slope\": 35/\"triplanar_slope\": 40/' '%s'",
             sets);
    CHECK(system(cmd) == 0);
    CHECK_EQ_INT(cli("cook %s -o %s -q", copy, out2), 0);
    CHECK_CONTAINS(out_text, "cooked (material set changed)");
    CHECK_OK(trn_payload_open(payload, NULL, &p, &e));
    m = p ? trn_payload_mapping(p) : NULL;
    CHECK(m && m->triplanar_slope == 40.0);
    trn_payload_free(p);
}

/* glTF: every terrain material's extras carry the mapping and the layers in array order. */
static void test_mapping_gltf_extras(void)
{
    char gltf[800];
    snprintf(gltf, sizeof gltf, "%s/land.gltf", tmp);
    CHECK_EQ_INT(cli("mesh %s/terrain/landscape.terrain.json -o %s --lod 3 -q", GRAPH_PROJECT, gltf),
                 0);
    json_error_t je;
    json_t *doc = json_load_file(gltf, 0, &je);
    CHECK(doc != NULL);
    const json_t *mats = json_object_get(doc, "materials");
    size_t mapped = 0;
    for (size_t k = 0; k < json_array_size(mats); k++) {
        const json_t *map =
            json_object_get(json_object_get(json_array_get(mats, k), "extras"), "mapping");
        if (!map) continue;
        mapped++;
        const json_t *layers = json_object_get(map, "layers");
        CHECK_EQ_INT((int)json_array_size(layers), 10);
        CHECK(strcmp(json_string_value(json_array_get(layers, 0)), "asset://materials/soil") == 0);
        CHECK(strcmp(json_string_value(json_array_get(layers, 9)), "asset://materials/glacier") ==
              0);
        CHECK_EQ_INT((int)json_array_size(json_object_get(map, "texture_arrays")), 5);
        CHECK(json_number_value(json_object_get(json_object_get(map, "triplanar"), "slope")) ==
              35.0);
        CHECK(json_number_value(json_object_get(json_object_get(map, "height_blend"),
                                                "contrast")) == 0.2);
        CHECK(json_number_value(json_object_get(json_object_get(map, "macro_variation"),
                                                "strength")) == 0.15);
    }
    CHECK(mapped > 0);
    json_decref(doc);
}

/* glTF: a role's Material document becomes that material's textures (base colour, normal,
 * roughness as metallicRoughness with metallic 0, emissive; the texture scale as
 * KHR_texture_transform), image URIs relative to the glTF file; every layer's maps are in the
 * mapping extras; without UVs only the extras; a document that does not resolve fails the
 * export at its line and column. */
static void test_material_gltf_textures(void)
{
    char project[600], cmd[4000], path[1000], gltf[900];
    snprintf(project, sizeof project, "%s/textured", tmp);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && cp -r '%s' '%s' && mkdir -p '%s/materials/soil' '%s/out'",
             project, GRAPH_PROJECT, project, project, project);
    CHECK_EQ_INT(system(cmd), 0);
    static const char manifest[] = "{\"type\": \"Material\", \"source\": \"soil.material.json\"}";
    snprintf(path, sizeof path, "%s/materials/soil.asset.json", project);
    CHECK(trn_test_write_file(path, manifest, strlen(manifest)));
    static const char soil[] =
        "{\"format_version\": 1, \"name\": \"Soil\", \"texture_scale\": 0.5,\n"
        "\"maps\": {\"albedo\": \"soil/a b.png\", \"normal\": \"soil/n.png\", \"roughness\": "
        "\"soil/r.png\", \"height\": \"soil/h.png\", \"emissive\": \"soil/e.png\"}}";
    snprintf(path, sizeof path, "%s/materials/soil.material.json", project);
    CHECK(trn_test_write_file(path, soil, strlen(soil)));
    static const char *const files[] = {"a b.png", "n.png", "r.png", "h.png", "e.png"};
    for (int k = 0; k < 5; k++) {
        snprintf(path, sizeof path, "%s/materials/soil/%s", project, files[k]);
        CHECK(trn_test_write_file(path, "png", 3));
    }
    snprintf(gltf, sizeof gltf, "%s/out/land.gltf", project);
    CHECK_EQ_INT(cli("mesh %s/terrain/landscape.terrain.json -o %s --lod 3 --uvs -q", project, gltf),
                 0);
    json_error_t je;
    json_t *doc = json_load_file(gltf, 0, &je);
    CHECK(doc != NULL);
    const json_t *images = json_object_get(doc, "images"), *textures = json_object_get(doc, "textures");
    CHECK_EQ_INT((int)json_array_size(images), 4); /* the height map is for the mapped path */
    CHECK_EQ_INT((int)json_array_size(textures), 4);
    CHECK(strcmp(json_string_value(json_object_get(json_array_get(images, 0), "uri")),
                 "../materials/soil/a%20b.png") == 0);
    CHECK(strcmp(json_string_value(json_array_get(json_object_get(doc, "extensionsUsed"), 0)),
                 "KHR_texture_transform") == 0);
    const json_t *ground = NULL, *mats = json_object_get(doc, "materials");
    for (size_t k = 0; k < json_array_size(mats); k++)
        if (strcmp(json_string_value(json_object_get(json_array_get(mats, k), "name")), "ground") == 0)
            ground = json_array_get(mats, k);
    CHECK(ground != NULL);
    const json_t *pbr = json_object_get(ground, "pbrMetallicRoughness");
    const json_t *base = json_object_get(pbr, "baseColorTexture");
    CHECK(base && json_integer_value(json_object_get(base, "texCoord")) == 0);
    CHECK(json_number_value(json_array_get(json_object_get(json_object_get(json_object_get(base, "extensions"), "KHR_texture_transform"), "scale"), 0)) == 0.5);
    CHECK(json_number_value(json_object_get(pbr, "metallicFactor")) == 0.0);
    CHECK(json_object_get(pbr, "metallicRoughnessTexture") != NULL);
    CHECK(json_object_get(ground, "normalTexture") != NULL);
    CHECK(json_object_get(ground, "emissiveTexture") != NULL);
    const json_t *mine = json_object_get(json_object_get(ground, "extras"), "material");
    CHECK(strcmp(json_string_value(json_object_get(mine, "height")), "../materials/soil/h.png") == 0);
    /* a material without a document (rock) has no textures; every layer's maps in the extras */
    for (size_t k = 0; k < json_array_size(mats); k++) {
        const json_t *m = json_array_get(mats, k);
        if (strcmp(json_string_value(json_object_get(m, "name")), "rock") != 0) continue;
        CHECK(!json_object_get(json_object_get(m, "pbrMetallicRoughness"), "baseColorTexture"));
        const json_t *lm = json_object_get(json_object_get(json_object_get(m, "extras"), "mapping"), "layer_maps");
        CHECK_EQ_INT((int)json_array_size(lm), 10);
        CHECK(strcmp(json_string_value(json_object_get(json_array_get(lm, 0), "emissive")), "../materials/soil/e.png") == 0);
        CHECK(json_is_null(json_array_get(lm, 2)));
    }
    json_decref(doc);
    /* without UVs: no textures (glTF needs TEXCOORD_0 for them), the maps still in the extras */
    CHECK_EQ_INT(cli("mesh %s/terrain/landscape.terrain.json -o %s --lod 3 -q", project, gltf), 0);
    doc = json_load_file(gltf, 0, &je);
    CHECK(doc && !json_object_get(doc, "images") && !json_object_get(doc, "extensionsUsed"));
    json_decref(doc);
    /* a missing map fails the export at its line and column */
    snprintf(path, sizeof path, "%s/materials/soil/n.png", project);
    CHECK(remove(path) == 0);
    CHECK(cli("mesh %s/terrain/landscape.terrain.json -o %s --lod 3 --uvs -q", project, gltf) != 0);
    CHECK_CONTAINS(err_text, "soil.material.json:2:");
    CHECK_CONTAINS(err_text, "maps.normal: the normal map soil/n.png is missing");
}

/* terrane info describes a Material document: its maps, each marked missing when its file is
 * not beside the document; JSON with input_format "material"; a bad document fails at its
 * line and column. */
static void test_material_info(void)
{
    char dir[700], doc[800], map[800];
    snprintf(dir, sizeof dir, "%s/info-material", tmp);
    mkdir(dir, 0755);
    snprintf(doc, sizeof doc, "%s/soil.material.json", dir);
    static const char text[] = "{\"format_version\": 1, \"name\": \"Soil\", \"texture_scale\": 2,\n"
                               "\"maps\": {\"albedo\": \"soil.png\", \"normal\": \"gone.png\"}}\n";
    CHECK(trn_test_write_file(doc, text, strlen(text)));
    snprintf(map, sizeof map, "%s/soil.png", dir);
    CHECK(trn_test_write_file(map, "png", 3));
    CHECK_EQ_INT(cli("info %s", doc), 0);
    CHECK_CONTAINS(out_text, "Material 'Soil' (format_version 1)");
    CHECK_CONTAINS(out_text, "texture scale: 2");
    CHECK_CONTAINS(out_text, "albedo     soil.png\n");
    CHECK_CONTAINS(out_text, "normal     gone.png (missing: no such file beside the document)");
    CHECK_CONTAINS(out_text, "emissive   none");
    CHECK_EQ_INT(cli("info %s --format json", doc), 0);
    json_error_t je;
    json_t *o = json_loads(out_text ? out_text : "", 0, &je);
    CHECK(o && strcmp(json_string_value(json_object_get(o, "input_format")), "material") == 0);
    const json_t *maps = json_object_get(o, "maps");
    CHECK(json_is_true(json_object_get(json_object_get(maps, "albedo"), "exists")));
    CHECK(json_is_false(json_object_get(json_object_get(maps, "normal"), "exists")));
    CHECK(json_is_null(json_object_get(maps, "height")));
    json_decref(o);
    static const char bad[] = "{\"format_version\": 1, \"name\": \"Soil\",\n"
                              "\"maps\": {\"albedo\": \"../soil.png\"}}\n";
    CHECK(trn_test_write_file(doc, bad, strlen(bad)));
    CHECK_EQ_INT(cli("info %s", doc), 1);
    CHECK_CONTAINS(err_text, "soil.material.json:2:20: maps.albedo: expected a PNG file's path");
}

/* The cooked payload carries the Material documents (MATD): the soil's texture scale and map
 * paths relative to the project, by layer; a layer without a document has none; a changed
 * document cooks again as a changed material set. Uses test_material_gltf_textures' project. */
static void test_material_payload(void)
{
    char project[600], out[800], payload[900], path[1000];
    snprintf(project, sizeof project, "%s/textured", tmp);
    snprintf(path, sizeof path, "%s/materials/soil/n.png", project);
    CHECK(trn_test_write_file(path, "png", 3)); /* removed by the glTF test's last step */
    snprintf(out, sizeof out, "%s/cooked_textured", tmp);
    snprintf(payload, sizeof payload, "%s/terrain/landscape.terrain.bin", out);
    CHECK_EQ_INT(cli("cook %s -o %s -q", project, out), 0);
    trn_payload *p = NULL;
    trn_error e;
    CHECK_OK(trn_payload_open(payload, NULL, &p, &e));
    if (!p) return;
    double scale = 0;
    const char *maps[TRN_MAP_COUNT] = {NULL};
    CHECK(strcmp(trn_payload_layer_material(p, 0), "asset://materials/soil") == 0);
    CHECK(trn_payload_layer_maps(p, 0, &scale, maps));
    CHECK(scale == 0.5);
    CHECK(maps[TRN_MAP_ALBEDO] && strcmp(maps[TRN_MAP_ALBEDO], "materials/soil/a b.png") == 0);
    CHECK(maps[TRN_MAP_EMISSIVE] && strcmp(maps[TRN_MAP_EMISSIVE], "materials/soil/e.png") == 0);
    CHECK(!trn_payload_layer_maps(p, 2, &scale, maps)); /* the rock: no document */
    CHECK(scale == 1.0 && maps[TRN_MAP_ALBEDO] && !maps[TRN_MAP_ALBEDO][0]);
    CHECK(!trn_payload_layer_maps(p, 99, NULL, NULL));
    trn_payload_free(p);
    CHECK_EQ_INT(cli("cook %s -o %s -q", project, out), 0);
    CHECK_CONTAINS(out_text, "up to date");
    snprintf(path, sizeof path, "%s/materials/soil.material.json", project);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "sed -i 's/\"texture_scale\": 0.5/\"texture_scale\": 0.25/' '%s'", path);
    CHECK(system(cmd) == 0);
    CHECK_EQ_INT(cli("cook %s -o %s -q", project, out), 0);
    CHECK_CONTAINS(out_text, "cooked (material set changed)");
    /* Lua: the same through payload:layer_maps */
    char script[700];
    snprintf(script, sizeof script, "%s/maps.lua", tmp);
    static const char lua[] =
        "local terrane = require('terrane')\n"
        "local p = terrane.open(arg[1])\n"
        "local soil = p:layer_maps(1)\n"
        "assert(soil.texture_scale == 0.25 and soil.albedo == 'materials/soil/a b.png')\n"
        "assert(soil.height == 'materials/soil/h.png')\n"
        "assert(p:layer_maps(3) == nil and p:layer_maps(0) == nil and p:layer_maps(99) == nil)\n"
        "print('maps ok')\n";
    CHECK(trn_test_write_file(script, lua, strlen(lua)));
    CHECK_EQ_INT(cli("lua %s %s -- %s", script, payload, payload), 0);
    if (err_text && err_text[0]) fprintf(stderr, "%s\n", err_text);
    CHECK_CONTAINS(out_text, "maps ok");
    /* the example without documents: no MATD section, every layer without one */
    CHECK_EQ_INT(cli("info %s/cooked/terrain/landscape.terrain.bin", tmp), 0);
    CHECK(!strstr(out_text, "MATD"));
}

/* BeamNG: terrane's own TerrainMaterials on steep ground get useSideProjection, the others
 * not; without triplanar none does. Unity: the splat lists the mapping. */
static void test_mapping_engine_exports(void)
{
    char level[800], mats[1200];
    snprintf(level, sizeof level, "%s/bng/levels/graph", tmp);
    snprintf(mats, sizeof mats, "%s/art/terrains/main.materials.json", level);
    CHECK_EQ_INT(cli("generate %s/terrain/landscape.terrain.json --export beamng:%s -q",
                     GRAPH_PROJECT, level),
                 0);
    json_error_t je;
    json_t *doc = json_load_file(mats, 0, &je);
    CHECK(doc != NULL);
    const char *key;
    json_t *v;
    bool rock = false, soil = true;
    json_object_foreach(doc, key, v)
    {
        const char *name = json_string_value(json_object_get(v, "internalName"));
        const bool side = json_is_true(json_object_get(v, "useSideProjection"));
        if (name && strcmp(name, "rock") == 0) rock = side;
        if (name && strcmp(name, "soil") == 0) soil = side;
    }
    json_decref(doc);
    CHECK(rock);
    CHECK(!soil);

    /* The same project with triplanar off: no material is projected from the side. */
    char copy[800], cmd[4000], level2[900];
    snprintf(copy, sizeof copy, "%s/flat_project", tmp);
    snprintf(cmd, sizeof cmd,
             "rm -rf '%s' && cp -r '%s' '%s' && sed -i 's/\"triplanar\": true/\"triplanar\": "
             "false/' '%s/materials/landscape.materials.json'",
             copy, GRAPH_PROJECT, copy, copy);
    CHECK(system(cmd) == 0);
    snprintf(level2, sizeof level2, "%s/bng2/levels/graph", tmp);
    CHECK_EQ_INT(cli("generate %s/terrain/landscape.terrain.json --export beamng:%s -q", copy,
                     level2),
                 0);
    snprintf(mats, sizeof mats, "%s/art/terrains/main.materials.json", level2);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(mats, &n);
    CHECK(text && !strstr(text, "useSideProjection"));
    free(text);

    char unity[800], meta[900];
    snprintf(unity, sizeof unity, "%s/unity", tmp);
    snprintf(meta, sizeof meta, "%s/landscape.json", unity);
    CHECK_EQ_INT(cli("generate %s/terrain/landscape.terrain.json --export unity:%s -q",
                     GRAPH_PROJECT, unity),
                 0);
    doc = json_load_file(meta, 0, &je);
    const json_t *map = json_object_get(json_object_get(doc, "splat"), "mapping");
    CHECK(json_is_true(json_object_get(map, "enable_height_based_blend")));
    CHECK(json_number_value(json_object_get(map, "height_transition")) == 0.2);
    json_decref(doc);
}

/* Lua: payload:mapping(), payload:layers() and the ground sample's layer. */
static void test_mapping_lua(void)
{
    char script[700], payload[800];
    snprintf(script, sizeof script, "%s/probe.lua", tmp);
    snprintf(payload, sizeof payload, "%s/cooked/terrain/landscape.terrain.bin", tmp);
    static const char lua[] =
        "local terrane = require('terrane')\n"
        "local world = terrane.default_world()\n"
        "local p = terrane.open(arg[1])\n"
        "local m = p:mapping()\n"
        "assert(m.triplanar and m.height_blend and m.texture_arrays)\n"
        "assert(m.triplanar_slope == 35 and m.height_blend_contrast == 0.2)\n"
        "assert(m.arrays[1] == 'albedo' and m.arrays[5] == 'emissive' and #m.arrays == 5)\n"
        "local layers = p:layers()\n"
        "assert(#layers == 10 and layers[10] == 'asset://materials/glacier')\n"
        "local seen = 0\n"
        "for x = 8, 2040, 64 do for z = 8, 2040, 64 do\n"
        "  local g = world:ground({x, 1000, z})\n"
        "  if g.layer then\n"
        "    assert(layers[g.layer] == g.layer_material)\n"
        "    if g.biome == 'snow' then assert(g.layer == 10) end\n"
        "    seen = seen + 1\n"
        "  end\n"
        "end end\n"
        "assert(seen > 500)\n"
        "-- ten layers: the five arrays at 1024 need 267 MiB, at 512 67 MiB (of 128)\n"
        "local plan = p:render_plan()\n"
        "assert(plan.texture_arrays and plan.texture_size == 512 and plan.texture_layers == 10)\n"
        "assert(math.abs(plan.texture_mb - 512 * 512 * 4 * 10 * 5 * 4 / 3 / 1048576) < 1e-6)\n"
        "assert(p:render_plan({terrain_texture_max_size = 256}).texture_size == 256)\n"
        "assert(p:render_plan({terrain_texture_cache_mb = 400}).texture_size == 1024)\n"
        "assert(p:render_plan(nil, {max_texture_size = 300}).texture_size == 256)\n"
        "assert(p:render_plan(nil, {max_array_layers = 8}).texture_fallback == "
        "'10 layers; the device\\'s arrays hold 8')\n"
        "assert(p:render_plan({terrain_texture_cache_mb = 0}).texture_fallback == "
        "'terrain_texture_cache_mb is 0: ordinary mesh materials')\n"
        "assert(p:render_plan({terrain_texture_cache_mb = 1}).texture_fallback:find('even at 64 x 64'))\n"
        "assert(p:render_plan({terrain_gpu_cache_mb = 0}).texture_fallback:find('no GPU patches'))\n"
        "print('layers ok', seen)\n";
    CHECK(trn_test_write_file(script, lua, strlen(lua)));
    CHECK_EQ_INT(cli("lua %s %s -- %s", script, payload, payload), 0);
    if (err_text && err_text[0]) fprintf(stderr, "%s\n", err_text);
    CHECK_CONTAINS(out_text, "layers ok");
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return trn_test_finish();
    RUN(test_material_set_mapping_parse);
    RUN(test_mapping_cooked);
    RUN(test_mapping_gltf_extras);
    RUN(test_material_gltf_textures);
    RUN(test_material_payload);
    RUN(test_material_info);
    RUN(test_mapping_engine_exports);
    RUN(test_mapping_lua);
    reset_output();
    return trn_test_finish();
}
