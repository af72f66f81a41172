/* Built-in presets, terrain_preset project assets, and merging a preset into a recipe. */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/fileio.h"
#include "recipe/recipe_internal.h"
#include "terrane/presets.h"

/* ---- built-in presets ------------------------------------------------------------------
 * Bare recipes, read by the ordinary recipe parser so they obey the same grammar. 128 x 128
 * world units, 64 x 64 cells. Shapes come from what landforms express today (fbm or ridged
 * noise, warp, stretch along a heading, sea level); the graph issue will give the basin, the
 * plateau and the river their proper shapes, and bump their versions. */

typedef struct builtin {
    const char *id;
    const char *name;
    const char *description;
    double version;
    const char *text;
} builtin;

#define BI_GRID "\"size\": [128, 128], \"resolution\": [64, 64], "

static const builtin builtins[] = {
    {"builtin://terrain/flat-building-site", "Flat building site",
     "Nearly level ground (2 m of gentle relief) of packed earth, with gravel where it tilts "
     "and grass on the slightly higher parts: a site to build on.",
     1,
     "{" BI_GRID "\"seed\": 101, \"sea_level\": -10, \"default_landform\": \"level\", "
     "\"landforms\": {\"level\": "
     "{\"height_variation\": 2, \"feature_size\": 96, \"roughness\": 0.3, \"octaves\": 3}}, "
     "\"default_biome\": \"packed_earth\", \"biomes\": {\"packed_earth\": {\"color\": [0.55, "
     "0.47, 0.36, 1]}, \"gravel\": {\"color\": [0.6, 0.6, 0.58, 1]}, \"grass\": {\"color\": "
     "[0.42, 0.6, 0.3, 1]}}, \"rules\": [{\"id\": \"tilted\", \"biome\": \"gravel\", "
     "\"priority\": 20, \"slope\": [1.6, 90]}, {\"id\": \"verge\", \"biome\": \"grass\", "
     "\"priority\": 10, \"elevation\": [1.3, 1000]}]}"},
    {"builtin://terrain/desert-dunes", "Desert dunes",
     "Long sand dunes stretched across the wind (heading 30 degrees), pale crests, darker "
     "troughs and rock where the lee faces turn steep.",
     1,
     "{" BI_GRID "\"seed\": 202, \"default_landform\": \"dunes\", \"landforms\": {\"dunes\": "
     "{\"height_variation\": 10, \"feature_size\": 36, \"roughness\": 0.3, \"octaves\": 3, "
     "\"stretch\": 4, \"heading\": 30, \"warp_amplitude\": 5, \"warp_feature_size\": 48}}, "
     "\"sea_level\": -100, \"default_biome\": \"sand\", \"biomes\": {\"sand\": {\"color\": "
     "[0.86, 0.72, 0.48, 1], \"allow_snow\": false}, \"crest_sand\": {\"color\": [0.95, 0.85, "
     "0.62, 1], \"allow_snow\": false}, \"trough_sand\": {\"color\": [0.74, 0.58, 0.38, 1], "
     "\"allow_snow\": false}, \"rock\": {\"color\": [0.55, 0.4, 0.3, 1], \"allow_snow\": "
     "false}}, \"rules\": [{\"id\": \"steep_faces\", \"biome\": \"rock\", \"priority\": 30, "
     "\"slope\": [24, 90]}, {\"id\": \"crests\", \"biome\": \"crest_sand\", \"priority\": 20, "
     "\"elevation\": [6.5, 1000], \"blend\": 1}, {\"id\": \"troughs\", \"biome\": "
     "\"trough_sand\", \"priority\": 10, \"elevation\": [-1000, 3]}]}"},
    {"builtin://terrain/rolling-hills", "Rolling hills",
     "Soft grassy hills about 20 m high, meadows in the damp hollows and bare earth on the "
     "steeper banks.",
     1,
     "{" BI_GRID "\"seed\": 303, \"default_landform\": \"hills\", \"landforms\": {\"hills\": "
     "{\"height_variation\": 20, \"feature_size\": 90, \"roughness\": 0.4, \"octaves\": 4, "
     "\"warp_amplitude\": 8, \"warp_feature_size\": 64}}, \"sea_level\": -100, "
     "\"default_biome\": \"grass\", \"biomes\": {\"grass\": {\"color\": [0.38, 0.6, 0.28, 1]}, "
     "\"meadow\": {\"color\": [0.3, 0.52, 0.32, 1]}, \"bare_earth\": {\"color\": [0.5, 0.4, "
     "0.3, 1]}}, \"rules\": [{\"id\": \"banks\", \"biome\": \"bare_earth\", \"priority\": 20, "
     "\"slope\": [22, 90]}, {\"id\": \"hollows\", \"biome\": \"meadow\", \"priority\": 10, "
     "\"elevation\": [-1000, 6], \"blend\": 2}]}"},
    {"builtin://terrain/mountain-range", "Mountain range",
     "Sharp ridged peaks up to 70 m in a range running at 60 degrees: forest below, rock on "
     "the steep faces, alpine meadow higher up and snow on the summits.",
     1,
     "{" BI_GRID "\"seed\": 404, \"default_landform\": \"range\", \"landforms\": {\"range\": "
     "{\"profile\": \"ridged\", \"height_variation\": 70, \"feature_size\": 110, "
     "\"roughness\": 0.5, \"octaves\": 6, \"stretch\": 1.8, \"heading\": 60, "
     "\"warp_amplitude\": 10, \"warp_feature_size\": 80}}, \"sea_level\": -100, "
     "\"default_biome\": \"forest\", \"biomes\": {\"forest\": {\"color\": [0.2, 0.38, 0.2, "
     "1]}, \"alpine_meadow\": {\"color\": [0.5, 0.6, 0.35, 1]}, \"rock\": {\"color\": [0.45, "
     "0.43, 0.42, 1]}, \"snow\": {\"color\": [0.95, 0.96, 0.98, 1]}}, \"rules\": [{\"id\": "
     "\"summits\", \"biome\": \"snow\", \"priority\": 40, \"elevation\": [52, 1000], "
     "\"blend\": 4}, {\"id\": \"faces\", \"biome\": \"rock\", \"priority\": 30, \"slope\": "
     "[38, 90]}, {\"id\": \"alpine\", \"biome\": \"alpine_meadow\", \"priority\": 20, "
     "\"elevation\": [32, 1000], \"blend\": 4}]}"},
    {"builtin://terrain/basin", "Basin",
     "A low hollow with a shallow lake (sea level 12 m): one broad feature larger than the terrain "
     "gives a "
     "floor and rising rims (the bowl shape itself arrives with terrain graphs); reeds on the "
     "wet floor, grass on the sides, scrub and rock on the rims.",
     1,
     "{" BI_GRID "\"seed\": 194, \"default_landform\": \"hollow\", \"landforms\": "
     "{\"hollow\": {\"height_variation\": 30, \"feature_size\": 200, \"roughness\": 0.3, "
     "\"octaves\": 3}}, \"sea_level\": 12, \"default_biome\": \"grass\", \"biomes\": "
     "{\"lake_bed\": {\"color\": [0.25, 0.35, 0.45, 1]}, \"reeds\": {\"color\": [0.35, 0.5, "
     "0.3, 1]}, \"grass\": {\"color\": [0.45, 0.6, 0.3, 1]}, \"scrub\": {\"color\": [0.58, "
     "0.55, 0.36, 1]}, \"rock\": {\"color\": [0.5, 0.46, 0.42, 1]}}, \"rules\": [{\"id\": "
     "\"lake\", \"biome\": \"lake_bed\", \"priority\": 40, \"elevation\": [-1000, 12]}, "
     "{\"id\": \"shore\", \"biome\": \"reeds\", \"priority\": 30, \"elevation\": [-1000, 13.5]}, "
     "{\"id\": \"rim_rock\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [11, 90]}, "
     "{\"id\": \"rims\", \"biome\": \"scrub\", \"priority\": 10, \"elevation\": [20, 1000], "
     "\"blend\": 3}]}"},
    {"builtin://terrain/plateau", "Plateau",
     "High, gently undulating ground 20 to 47 m up with rock where it breaks away: a smooth broad "
     "landform whose flat top carries grassland and whose steep sides show cliffs (true "
     "terraces and flat tops arrive with terrain graphs).",
     1,
     "{" BI_GRID "\"seed\": 606, \"default_landform\": \"tableland\", \"landforms\": "
     "{\"tableland\": {\"base_height\": 20, \"height_variation\": 40, \"feature_size\": 140, "
     "\"roughness\": 0.25, \"octaves\": 3, \"warp_amplitude\": 12, \"warp_feature_size\": "
     "90}}, \"sea_level\": -100, \"default_biome\": \"steppe\", \"biomes\": {\"steppe\": "
     "{\"color\": [0.62, 0.6, 0.38, 1]}, \"tableland_grass\": {\"color\": [0.48, 0.62, 0.32, "
     "1]}, \"cliff\": {\"color\": [0.6, 0.45, 0.35, 1]}, \"scree\": {\"color\": [0.55, 0.52, "
     "0.48, 1]}}, \"rules\": [{\"id\": \"cliffs\", \"biome\": \"cliff\", \"priority\": 30, "
     "\"slope\": [20, 90]}, {\"id\": \"scree_slopes\", \"biome\": \"scree\", \"priority\": "
     "20, \"slope\": [14, 90]}, {\"id\": \"top\", \"biome\": \"tableland_grass\", "
     "\"priority\": 10, \"elevation\": [36, 1000], \"blend\": 3}]}"},
    {"builtin://terrain/coastal-island", "Coastal island",
     "Land rising out of the sea (sea level 14 m, land up to about 32 m) with water along "
     "the borders: sandy beaches at the shore, grass and woods inland, rock on the steep "
     "slopes. The coast comes from noise and a chosen seed; an island mask that guarantees "
     "water at every border arrives with terrain graphs.",
     1,
     "{" BI_GRID "\"seed\": 230, \"default_landform\": \"island\", \"landforms\": "
     "{\"island\": {\"height_variation\": 40, \"feature_size\": 110, \"roughness\": 0.45, "
     "\"octaves\": 5, \"warp_amplitude\": 12, \"warp_feature_size\": 70}}, \"sea_level\": 14, "
     "\"default_biome\": \"grass\", \"biomes\": {\"sea_floor\": {\"color\": [0.2, 0.4, 0.55, "
     "1]}, \"beach\": {\"color\": [0.9, 0.82, 0.6, 1], \"allow_snow\": false}, \"grass\": "
     "{\"color\": [0.4, 0.62, 0.3, 1]}, \"woods\": {\"color\": [0.22, 0.42, 0.22, 1]}, "
     "\"rock\": {\"color\": [0.5, 0.48, 0.45, 1]}}, \"rules\": [{\"id\": \"underwater\", "
     "\"biome\": \"sea_floor\", \"priority\": 40, \"elevation\": [-1000, 14]}, {\"id\": "
     "\"beaches\", \"biome\": \"beach\", \"priority\": 30, \"elevation\": [-1000, 16.5]}, "
     "{\"id\": \"cliffs\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [30, 90]}, "
     "{\"id\": \"inland\", \"biome\": \"woods\", \"priority\": 10, \"elevation\": [24, 1000], "
     "\"blend\": 3}]}"},
    {"builtin://terrain/drainage-river", "Drainage river",
     "A valley stretched along one heading (90 degrees) whose lowest ground (below 9 m) holds "
     "water: "
     "river bed, wet banks by water distance, grass above and rock on steep valley sides (a "
     "carved, continuous river channel arrives with terrain graphs).",
     1,
     "{" BI_GRID "\"seed\": 539, \"default_landform\": \"valley\", \"landforms\": "
     "{\"valley\": {\"height_variation\": 30, \"feature_size\": 120, \"roughness\": 0.35, "
     "\"octaves\": 4, \"stretch\": 4, \"heading\": 90, \"warp_amplitude\": 10, "
     "\"warp_feature_size\": 60}}, \"sea_level\": 9, \"default_biome\": \"grass\", "
     "\"biomes\": {\"river_bed\": {\"color\": [0.22, 0.38, 0.5, 1]}, \"wet_bank\": "
     "{\"color\": [0.32, 0.46, 0.3, 1]}, \"grass\": {\"color\": [0.42, 0.6, 0.3, 1]}, "
     "\"rock\": {\"color\": [0.5, 0.47, 0.44, 1]}}, \"rules\": [{\"id\": \"river\", "
     "\"biome\": \"river_bed\", \"priority\": 40, \"elevation\": [-1000, 9]}, {\"id\": "
     "\"banks\", \"biome\": \"wet_bank\", \"priority\": 30, \"water_distance\": [0, 6]}, "
     "{\"id\": \"valley_sides\", \"biome\": \"rock\", \"priority\": 20, \"slope\": [17, "
     "90]}]}"},
};

#define BUILTIN_COUNT (sizeof builtins / sizeof builtins[0])

static char *dup_str(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

void trn_preset_dispose(trn_preset *p)
{
    if (!p) return;
    free(p->id);
    free(p->name);
    free(p->label);
    free(p->description);
    free(p->fields_json);
    trn_recipe_dispose(&p->recipe);
    memset(p, 0, sizeof *p);
}

void trn_presets_free(trn_preset *presets, uint32_t count)
{
    if (!presets) return;
    for (uint32_t i = 0; i < count; i++)
        trn_preset_dispose(&presets[i]);
    free(presets);
}

uint32_t trn_builtin_preset_count(void)
{
    return (uint32_t)BUILTIN_COUNT;
}

const char *trn_builtin_preset_id(uint32_t index)
{
    return index < BUILTIN_COUNT ? builtins[index].id : NULL;
}

static const builtin *find_builtin(const char *id)
{
    for (size_t i = 0; id && i < BUILTIN_COUNT; i++)
        if (strcmp(builtins[i].id, id) == 0) return &builtins[i];
    return NULL;
}

const char *trn_builtin_preset_text(const char *id)
{
    const builtin *b = find_builtin(id);
    return b ? b->text : NULL;
}

static trn_status preset_oom(const char *file, trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, file, -1, "out of memory reading a preset");
}

/* Keys of a built-in recipe that applying it sets. */
static const char *const builtin_keys[] = {
    "size",   "resolution",    "seed",  "sea_level", "landforms", "default_landform",
    "biomes", "default_biome", "rules", "graph",     NULL};

trn_status trn_builtin_preset_load(const char *id, trn_preset *p, trn_error *err)
{
    if (!p)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_builtin_preset_load: preset is required");
    memset(p, 0, sizeof *p);
    const builtin *b = find_builtin(id);
    if (!b) {
        char list[600] = "";
        for (size_t i = 0; i < BUILTIN_COUNT; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, builtins[i].id + 18, sizeof list - strlen(list) - 1);
        }
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "no built-in preset '%.200s'; built-in presets are "
                             "builtin://terrain/ followed by one of %s",
                             id ? id : "(null)", list);
    }
    trn_status st = trn_recipe_parse(b->text, strlen(b->text), b->id, &p->recipe, NULL, err);
    if (st) return st;
    p->version = b->version;
    p->fields = TRN_PRESET_SIZE | TRN_PRESET_CELLS_X | TRN_PRESET_CELLS_Z | TRN_PRESET_SEED |
                TRN_PRESET_DEFAULT_BIOME | TRN_PRESET_BIOMES | TRN_PRESET_RULES |
                TRN_PRESET_LANDFORMS | TRN_PRESET_SEA_LEVEL |
                (p->recipe.graph_json ? TRN_PRESET_GRAPH : 0u);
    json_t *full = trn_rcp_recipe_to_json(&p->recipe);
    json_t *fields = json_object();
    bool ok = full && fields;
    for (const char *const *k = builtin_keys; ok && *k; k++) {
        json_t *v = json_object_get(full, *k);
        if (v) ok = json_object_set(fields, *k, v) == 0;
    }
    if (ok) p->fields_json = trn_rcp_canonical_text(fields);
    json_decref(full);
    json_decref(fields);
    p->id = dup_str(b->id);
    p->name = dup_str(b->name);
    p->description = dup_str(b->description);
    if (!p->fields_json || !p->id || !p->name || !p->description) {
        trn_preset_dispose(p);
        return preset_oom(b->id, err);
    }
    return TRN_OK;
}

/* ---- terrain_preset documents ------------------------------------------------------------ */

static const char *const preset_keys[] = {"format_version", "name",    "label",   "description",
                                          "size",           "cells_x", "cells_z", "chunk_cells",
                                          "default_biome",  "biomes",  "layers",  "rules",
                                          "graph",          "seed",    NULL};
/* Read here rather than by the recipe parser. */
static const char *const own_keys[] = {"format_version", "name",    "label", "description",
                                       "cells_x",        "cells_z", NULL};

/* An error at the value (or key) of a path in the document. */
static trn_status at_path(trn_error *err, trn_status code, const char *text, size_t size,
                          const char *file, const trn_json_step *steps, size_t depth,
                          trn_json_target target, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 9, 10)))
#endif
    ;

static trn_status at_path(trn_error *err, trn_status code, const char *text, size_t size,
                          const char *file, const trn_json_step *steps, size_t depth,
                          trn_json_target target, const char *fmt, ...)
{
    char msg[420];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    trn_json_path path = {{{0}}, 0};
    for (size_t i = 0; i < depth; i++)
        path.steps[path.depth++] = steps[i];
    char where[200];
    trn_json_path_format(&path, where, sizeof where);
    trn_json_pos pos;
    trn_json_locate(text, size, steps, depth, target, &pos);
    trn_error_set(err, code, file, (int64_t)pos.offset, "%s%s%s", where, where[0] ? ": " : "", msg);
    trn_error_set_position(err, pos.line, pos.column);
    return code;
}

static const char *kind_of(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
    case JSON_REAL:
        return "a number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        break;
    }
    return "null";
}

static trn_status want_text(const char *text, size_t size, const char *file, const char *key,
                            const json_t *v, bool non_empty, char **out, trn_error *err)
{
    trn_json_step step = {key, 0};
    if (!json_is_string(v) || (non_empty && json_string_length(v) == 0))
        return at_path(err, TRN_ERR_JSON, text, size, file, &step, 1, TRN_JSON_VALUE,
                       "expected %s, found %s", non_empty ? "a non-empty string" : "a string",
                       json_is_string(v) ? "\"\"" : kind_of(v));
    *out = dup_str(json_string_value(v));
    return *out ? TRN_OK : preset_oom(file, err);
}

static trn_status want_cells(const char *text, size_t size, const char *file, const char *key,
                             const json_t *v, uint32_t *out, trn_error *err)
{
    trn_json_step step = {key, 0};
    if (!json_is_integer(v) || json_integer_value(v) < 1 ||
        json_integer_value(v) > (json_int_t)TRN_RCP_MAX_CELLS) {
        char found[64];
        if (json_is_number(v))
            snprintf(found, sizeof found, "%.17g", json_number_value(v));
        else
            snprintf(found, sizeof found, "%s", kind_of(v));
        return at_path(err, TRN_ERR_JSON, text, size, file, &step, 1, TRN_JSON_VALUE,
                       "expected a whole number 1..%u (cells along the axis), found %s",
                       TRN_RCP_MAX_CELLS, found);
    }
    *out = (uint32_t)json_integer_value(v);
    return TRN_OK;
}

static trn_status parse_preset_root(const char *text, size_t size, const char *file,
                                    const json_t *root, trn_preset *p, trn_error *err)
{
    if (!json_is_object(root))
        return at_path(err, TRN_ERR_JSON, text, size, file, NULL, 0, TRN_JSON_VALUE,
                       "expected a terrain_preset object, found %s", kind_of(root));
    const char *key;
    json_t *v;
    trn_status st = TRN_OK;
    bool have_version = false;
    json_object_foreach((json_t *)root, key, v)
    {
        trn_json_step step = {key, 0};
        bool known = false;
        for (const char *const *k = preset_keys; *k && !known; k++)
            known = strcmp(*k, key) == 0;
        if (!known) {
            const char *hint = trn_rcp_did_you_mean(key, preset_keys);
            return at_path(err, TRN_ERR_JSON, text, size, file, &step, 1, TRN_JSON_KEY,
                           "unknown key '%.80s' in the terrain_preset document%s%s%s%s", key,
                           hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "",
                           strcmp(key, "landforms") == 0 || strcmp(key, "regions") == 0 ||
                                   strcmp(key, "edits") == 0 || strcmp(key, "exclusions") == 0
                               ? " (a preset sets size, cells_x, cells_z, chunk_cells, seed, "
                                 "default_biome, biomes, layers, rules and graph; regions, "
                                 "edits and exclusions stay the recipe's own)"
                               : "");
        }
        if (strcmp(key, "format_version") == 0) {
            if (json_is_integer(v) && json_integer_value(v) > (json_int_t)TRN_PRESET_FORMAT_VERSION)
                return at_path(err, TRN_ERR_VERSION, text, size, file, &step, 1, TRN_JSON_VALUE,
                               "format_version %" JSON_INTEGER_FORMAT
                               " is newer than this build reads (%u)",
                               json_integer_value(v), TRN_PRESET_FORMAT_VERSION);
            if (!json_is_integer(v) ||
                json_integer_value(v) != (json_int_t)TRN_PRESET_FORMAT_VERSION)
                return at_path(err, TRN_ERR_JSON, text, size, file, &step, 1, TRN_JSON_VALUE,
                               "expected %u, found %s", TRN_PRESET_FORMAT_VERSION,
                               json_is_integer(v) ? "another number" : kind_of(v));
            have_version = true;
        } else if (strcmp(key, "name") == 0) {
            st = want_text(text, size, file, key, v, true, &p->name, err);
        } else if (strcmp(key, "label") == 0) {
            st = want_text(text, size, file, key, v, false, &p->label, err);
        } else if (strcmp(key, "description") == 0) {
            st = want_text(text, size, file, key, v, false, &p->description, err);
        } else if (strcmp(key, "cells_x") == 0) {
            st = want_cells(text, size, file, key, v, &p->recipe.cells_x, err);
            p->fields |= TRN_PRESET_CELLS_X;
        } else if (strcmp(key, "cells_z") == 0) {
            st = want_cells(text, size, file, key, v, &p->recipe.cells_z, err);
            p->fields |= TRN_PRESET_CELLS_Z;
        }
        if (st) return st;
    }
    if (!have_version)
        return at_path(err, TRN_ERR_JSON, text, size, file, NULL, 0, TRN_JSON_VALUE,
                       "missing key 'format_version' (expected %u, the version of the "
                       "terrain_preset document)",
                       TRN_PRESET_FORMAT_VERSION);
    if (!p->name)
        return at_path(err, TRN_ERR_JSON, text, size, file, NULL, 0, TRN_JSON_VALUE,
                       "missing key 'name' (expected the preset's display name)");
    return TRN_OK;
}

/* Rules and the default biome must name a biome the preset defines, when it defines them:
 * the same check a recipe makes, at the rule's position. */
static trn_status check_preset_biomes(const char *text, size_t size, const char *file,
                                      const trn_preset *p, trn_error *err)
{
    const trn_recipe *r = &p->recipe;
    if (!(p->fields & TRN_PRESET_BIOMES)) return TRN_OK;
    if (r->default_biome && trn_recipe_find_biome(r, r->default_biome) < 0) {
        trn_json_step step = {"default_biome", 0};
        return at_path(err, TRN_ERR_JSON, text, size, file, &step, 1, TRN_JSON_VALUE,
                       "unknown biome '%.80s' (the preset's biomes do not define it)",
                       r->default_biome);
    }
    for (uint32_t i = 0; i < r->rule_count; i++) {
        if (trn_recipe_find_biome(r, r->rules[i].biome) >= 0) continue;
        trn_json_step steps[3] = {{"rules", 0}, {NULL, i}, {"biome", 0}};
        return at_path(err, TRN_ERR_JSON, text, size, file, steps, 3, TRN_JSON_VALUE,
                       "unknown biome '%.80s' (the preset's biomes do not define it)",
                       r->rules[i].biome);
    }
    return TRN_OK;
}

trn_status trn_preset_parse(const char *text, size_t size, const char *path, const char *id,
                            trn_preset *p, trn_error *err)
{
    if (!p || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_preset_parse: preset and text are required");
    memset(p, 0, sizeof *p);
    if (!text) text = "";
    size_t bom = size >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                         (unsigned char)text[2] == 0xBF
                     ? 3
                     : 0;
    json_error_t je;
    json_t *root = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;
        trn_json_pos pos = trn_json_pos_of_offset(text, size, bom + at);
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        return TRN_ERR_JSON;
    }
    trn_recipe fields;
    trn_status st = parse_preset_root(text, size, path, root, p, err);
    if (!st) st = trn_rcp_parse_partial(text, size, path, root, own_keys, &fields, err);
    if (!st) {
        uint32_t cx = p->recipe.cells_x, cz = p->recipe.cells_z;
        trn_recipe_dispose(&p->recipe);
        p->recipe = fields;
        p->recipe.cells_x = cx;
        p->recipe.cells_z = cz;
        static const struct {
            const char *key;
            uint32_t bit;
        } bits[] = {{"size", TRN_PRESET_SIZE},     {"chunk_cells", TRN_PRESET_CHUNK_CELLS},
                    {"seed", TRN_PRESET_SEED},     {"default_biome", TRN_PRESET_DEFAULT_BIOME},
                    {"biomes", TRN_PRESET_BIOMES}, {"layers", TRN_PRESET_LAYERS},
                    {"rules", TRN_PRESET_RULES},   {"graph", TRN_PRESET_GRAPH}};
        for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
            if (json_object_get(root, bits[i].key)) p->fields |= bits[i].bit;
        st = check_preset_biomes(text, size, path, p, err);
    }
    if (!st) {
        json_t *copy = json_deep_copy(root);
        for (const char *const *k = own_keys; copy && *k; k++)
            if (strncmp(*k, "cells_", 6) != 0) json_object_del(copy, *k);
        p->fields_json = copy ? trn_rcp_canonical_text(copy) : NULL;
        json_decref(copy);
        p->version = TRN_PRESET_FORMAT_VERSION;
        p->id = dup_str(id ? id : "");
        if (!p->fields_json || !p->id) st = preset_oom(path, err);
    }
    json_decref(root);
    if (st) trn_preset_dispose(p);
    return st;
}

/* ---- projects ---------------------------------------------------------------------------- */

typedef struct preset_list {
    trn_preset *items;
    uint32_t count, cap;
} preset_list;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Read one manifest; a manifest of another type is skipped (*out untouched, TRN_OK). */
static trn_status read_manifest(const char *path, const char *rel, preset_list *list,
                                trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st = trn_file_read_all(path, TRN_RCP_MAX_FILE_SIZE, &data, &size, err);
    if (st) return st;
    json_error_t je;
    size_t bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF ? 3 : 0;
    json_t *m = json_loadb((const char *)data + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!m) {
        trn_json_pos pos = trn_json_pos_of_offset(
            (const char *)data, size, bom + (je.position > 0 ? (size_t)je.position - 1 : 0));
        trn_error_set(err, TRN_ERR_JSON, path, (int64_t)pos.offset, "invalid JSON: %s", je.text);
        trn_error_set_position(err, pos.line, pos.column);
        free(data);
        return TRN_ERR_JSON;
    }
    const char *type = json_string_value(json_object_get(m, "type"));
    if (!type || strcmp(type, TRN_PRESET_ASSET_TYPE) != 0) {
        json_decref(m);
        free(data);
        return TRN_OK;
    }
    const char *source = json_string_value(json_object_get(m, "source"));
    if (!source || !*source || source[0] == '/') {
        trn_json_step step = {"source", 0};
        st = at_path(err, TRN_ERR_JSON, (const char *)data, size, path, &step, 1, TRN_JSON_VALUE,
                     "expected the preset document's file name relative to the manifest's "
                     "folder (such as \"desert.preset.json\")");
        json_decref(m);
        free(data);
        return st;
    }
    char src_path[4096], id[1200];
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    size_t rel_len = strlen(rel) - strlen(".asset.json");
    int n1 = snprintf(src_path, sizeof src_path, "%.*s%s", dir_len, path, source);
    int n2 = snprintf(id, sizeof id, "asset://%.*s", (int)rel_len, rel);
    json_decref(m);
    free(data);
    if (n1 < 0 || (size_t)n1 >= sizeof src_path || n2 < 0 || (size_t)n2 >= sizeof id)
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1, "the preset's path is too long");
    if (list->count == list->cap) {
        uint32_t cap = list->cap ? list->cap * 2 : 8;
        trn_preset *items = realloc(list->items, cap * sizeof *items);
        if (!items) return preset_oom(path, err);
        list->items = items;
        list->cap = cap;
    }
    st = trn_file_read_all(src_path, TRN_RCP_MAX_FILE_SIZE, &data, &size, err);
    if (st) return st;
    st = trn_preset_parse((const char *)data, size, src_path, id, &list->items[list->count], err);
    free(data);
    if (!st) list->count++;
    return st;
}

static trn_status walk(const char *dir, const char *rel, int depth, preset_list *list,
                       trn_error *err)
{
    if (depth > 16) return TRN_OK;
    DIR *d = opendir(dir);
    if (!d)
        return trn_error_set(err, depth == 0 ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, dir, -1,
                             "cannot open the project folder");
    trn_status st = TRN_OK;
    struct dirent *e;
    while (!st && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[4096], sub[4096];
        int n1 = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        int n2 = snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
        if (n1 < 0 || (size_t)n1 >= sizeof path || n2 < 0 || (size_t)n2 >= sizeof sub) continue;
        struct stat sb;
        if (stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode))
            st = walk(path, sub, depth + 1, list, err);
        else if (S_ISREG(sb.st_mode) && ends_with(e->d_name, ".asset.json"))
            st = read_manifest(path, sub, list, err);
    }
    closedir(d);
    return st;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const trn_preset *)a)->id, ((const trn_preset *)b)->id);
}

trn_status trn_project_presets_load(const char *project_dir, trn_preset **presets, uint32_t *count,
                                    trn_error *err)
{
    if (presets) *presets = NULL;
    if (count) *count = 0;
    if (!project_dir || !presets || !count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_project_presets_load: project_dir, presets and count are "
                             "required");
    struct stat sb;
    if (stat(project_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_NOT_FOUND, project_dir, -1,
                             "expected a project folder, found %s",
                             stat(project_dir, &sb) != 0 ? "nothing" : "a file");
    preset_list list = {NULL, 0, 0};
    trn_status st = walk(project_dir, "", 0, &list, err);
    if (st) {
        trn_presets_free(list.items, list.count);
        return st;
    }
    if (list.count > 1) qsort(list.items, list.count, sizeof *list.items, by_id);
    for (uint32_t i = 1; i < list.count; i++)
        if (strcmp(list.items[i - 1].id, list.items[i].id) == 0) {
            trn_error_set(err, TRN_ERR_VALIDATION, project_dir, -1,
                          "two manifests give the preset id '%.200s'", list.items[i].id);
            trn_presets_free(list.items, list.count);
            return TRN_ERR_VALIDATION;
        }
    *presets = list.items;
    *count = list.count;
    return TRN_OK;
}

trn_status trn_preset_find(const char *project_dir, const char *id, trn_preset *preset,
                           trn_error *err)
{
    if (!id || !preset)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_preset_find: id and preset are required");
    memset(preset, 0, sizeof *preset);
    if (strncmp(id, "builtin://", 10) == 0) return trn_builtin_preset_load(id, preset, err);
    if (strncmp(id, "asset://", 8) != 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "expected a preset id starting with builtin:// or asset://, found "
                             "'%.200s'",
                             id);
    if (!project_dir)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "preset '%.200s' is a project asset; name the project folder", id);
    trn_preset *all = NULL;
    uint32_t n = 0;
    trn_status st = trn_project_presets_load(project_dir, &all, &n, err);
    if (st) return st;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(all[i].id, id) == 0) {
            *preset = all[i];
            memset(&all[i], 0, sizeof all[i]);
            trn_presets_free(all, n);
            return TRN_OK;
        }
    trn_presets_free(all, n);
    return trn_error_set(err, TRN_ERR_NOT_FOUND, project_dir, -1,
                         "no terrain_preset asset '%.200s' in the project (%u found)", id, n);
}

/* ---- applying ------------------------------------------------------------------------------ */

static trn_status recipe_copy(const trn_recipe *src, trn_recipe *dst, trn_error *err)
{
    char *text = NULL;
    size_t size = 0;
    trn_status st = trn_recipe_canonical_json(src, &text, &size, err);
    if (st) return st;
    st = trn_recipe_parse(text, size, NULL, dst, NULL, err);
    free(text);
    return st;
}

trn_status trn_recipe_apply_preset(trn_recipe *recipe, const trn_preset *preset,
                                   trn_edit_policy policy, trn_error *err)
{
    if (!recipe || !preset || !preset->id || !preset->fields_json)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_recipe_apply_preset: recipe and a loaded preset are required");
    trn_status st = trn_recipe_validate(recipe, err);
    if (st) return st;
    trn_recipe work;
    if ((st = recipe_copy(recipe, &work, err))) return st;
    const trn_recipe *pr = &preset->recipe;
    uint32_t f = preset->fields;
    double sx = f & TRN_PRESET_SIZE ? pr->size_x : work.size_x;
    double sz = f & TRN_PRESET_SIZE ? pr->size_z : work.size_z;
    uint32_t cx = f & TRN_PRESET_CELLS_X ? pr->cells_x : work.cells_x;
    uint32_t cz = f & TRN_PRESET_CELLS_Z ? pr->cells_z : work.cells_z;
    if (sx != work.size_x || sz != work.size_z || cx != work.cells_x || cz != work.cells_z) {
        st = trn_recipe_change_grid(&work, sx, sz, cx, cz, policy, err);
        if (st) {
            char msg[sizeof err->message];
            if (err) {
                snprintf(msg, sizeof msg, "%s", err->message);
                trn_error_set(err, st, NULL, -1,
                              "applying preset '%.120s' changes the grid (%gx%g units, %ux%u "
                              "cells to %gx%g, %ux%u): %s",
                              preset->id, recipe->size_x, recipe->size_z, recipe->cells_x,
                              recipe->cells_z, sx, sz, cx, cz, msg);
            }
            trn_recipe_dispose(&work);
            return st;
        }
    }
    json_t *tree = trn_rcp_recipe_to_json(&work);
    json_t *fields = json_loads(preset->fields_json, 0, NULL);
    trn_recipe_dispose(&work);
    bool ok = tree && fields;
    const char *key;
    json_t *v;
    if (ok) {
        json_object_foreach(fields, key, v)
        {
            if (strcmp(key, "cells_x") == 0 || strcmp(key, "cells_z") == 0 ||
                strcmp(key, "size") == 0 || strcmp(key, "resolution") == 0)
                continue; /* done by the grid change */
            if (json_object_set(tree, key, v)) ok = false;
        }
        if (f & TRN_PRESET_SEA_LEVEL && !json_object_get(fields, "sea_level"))
            json_object_del(tree, "sea_level");
        if (f & TRN_PRESET_GRAPH && !json_object_get(fields, "graph"))
            json_object_del(tree, "graph");
        ok = ok && !json_object_set_new(tree, "preset_id", json_string(preset->id)) &&
             !json_object_set_new(tree, "preset_version", json_real(preset->version));
    }
    char *text = ok ? trn_rcp_canonical_text(tree) : NULL;
    json_decref(tree);
    json_decref(fields);
    if (!text)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory applying a preset");
    trn_recipe merged;
    st = trn_recipe_parse(text, strlen(text), NULL, &merged, NULL, err);
    free(text);
    if (st) {
        if (err) {
            char msg[sizeof err->message];
            snprintf(msg, sizeof msg, "%s", err->message);
            trn_error_set(err, st == TRN_ERR_JSON ? TRN_ERR_VALIDATION : st, NULL, -1,
                          "the recipe merged with preset '%.120s' does not validate: %s "
                          "(regions, edits and exclusions stay the recipe's own, so they must "
                          "name the preset's biomes and layers)",
                          preset->id, msg);
        }
        return st == TRN_ERR_JSON ? TRN_ERR_VALIDATION : st;
    }
    trn_recipe_dispose(recipe);
    *recipe = merged;
    return TRN_OK;
}
