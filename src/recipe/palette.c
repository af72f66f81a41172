/* terrain_material_set (version 1), Material (version 1) and terrain_palette (version 3)
 * documents, each error at its position. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/textbuf.h"
#include "core/numtext.h"
#include "core/json_fields.h"
#include "recipe/recipe_internal.h"
#include "scatter/scatter_internal.h"
#include "terrane/palette.h"

/* A document cannot ask for unbounded allocations. */
#define PAL_MAX_RULES 65536u
#define PAL_MAX_BIOMES 255u

/* NULL-terminated for did-you-mean hints. */
static const char *const role_names[TRN_ROLE_COUNT + 1] = {
    "ground", "grass", "rock",       "cliff",      "sediment",
    "sand",   "snow",  "wet_ground", "underwater", NULL};

const char *trn_surface_role_name(trn_surface_role role)
{
    if ((unsigned)role < TRN_ROLE_COUNT) return role_names[role];
    return role == TRN_ROLE_NONE ? "none" : "unknown";
}

bool trn_surface_role_parse(const char *name, trn_surface_role *role)
{
    if (!name) return false;
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++)
        if (strcmp(name, role_names[i]) == 0) {
            if (role) *role = (trn_surface_role)i;
            return true;
        }
    return false;
}

static const char *const asset_scheme[] = {"asset://", NULL};

/* The palette's fields, one row each, in the order suggestions prefer: key, type, range, what
 * errors expect, where the value goes. */
static const trn_doc_field palette_fields[] = {
    TRN_DOC_OTHER_ROW("format_version"),
    TRN_DOC_TEXT_ROW("name", TRN_DOC_NONEMPTY,
                     "a non-empty string (the terrain_palette's display name)", trn_palette, name),
    TRN_DOC_ID_ROW("material_set", asset_scheme,
                   "a terrain_material_set asset id (\"asset://...\")", trn_palette, material_set),
    TRN_DOC_NUM_ROW("art_density", 0, INFINITY, 0,
                    "a number >= 0 (multiplies every rule's density)", trn_palette, art_density),
    TRN_DOC_NUM_ROW("grass_density", 0, INFINITY, 0,
                    "a number >= 0 (multiplies the grass rules' density)", trn_palette,
                    grass_density),
    TRN_DOC_NUM_ROW("tree_density", 0, INFINITY, 0,
                    "a number >= 0 (multiplies the tree rules' density)", trn_palette,
                    tree_density),
    TRN_DOC_NUM_ROW("rock_density", 0, INFINITY, 0,
                    "a number >= 0 (multiplies the rock rules' density)", trn_palette,
                    rock_density),
    TRN_DOC_OTHER_ROW("placements"),
    TRN_DOC_END_ROW};
static const trn_doc_field cluster_numbers[] = {
    TRN_DOC_NUM_ROW("size", 0, INFINITY, TRN_DOC_LO_OPEN,
                    "a number > 0 (the patches' size in units)", trn_scatter_rule, cluster_size),
    TRN_DOC_NUM_ROW("strength", 0, 1, 0, "a number 0..1 (0 uniform, 1 patches)", trn_scatter_rule,
                    cluster_strength),
    TRN_DOC_END_ROW};
static const trn_doc_field rule_numbers[] = {
    TRN_DOC_NUM_ROW("density", 0, INFINITY, 0, "a number >= 0 (instances per square unit)",
                    trn_scatter_rule, density),
    TRN_DOC_NUM_ROW("candidate_spacing", 0, INFINITY, TRN_DOC_LO_OPEN,
                    "a number > 0 (units between candidate sites)", trn_scatter_rule,
                    candidate_spacing),
    TRN_DOC_NUM_ROW("spacing", 0, INFINITY, 0, "a number >= 0 (minimum separation in units)",
                    trn_scatter_rule, spacing),
    TRN_DOC_END_ROW};

/* A placement's geometry: exactly one of these. */
static const char *const prefab_scheme[] = {"prefab://", "asset://", NULL};
static const trn_doc_field geometry_fields[] = {
    TRN_DOC_ID_ROW("model", asset_scheme, "a Model3D asset id (\"asset://...\")",
                   trn_scatter_rule, model),
    TRN_DOC_ID_ROW("prefab", prefab_scheme,
                   "an entity prefab id (\"prefab://...\" or \"asset://...\")", trn_scatter_rule,
                   prefab),
    TRN_DOC_END_ROW};

/* The material set's fields; each role's binding is read by role_binding's rule. */
static const trn_doc_field set_fields[] = {
    TRN_DOC_OTHER_ROW("format_version"),
    TRN_DOC_TEXT_ROW("name", TRN_DOC_NONEMPTY,
                     "a non-empty string (the terrain_material_set's display name)",
                     trn_material_set, name),
    TRN_DOC_OTHER_ROW("roles"),
    TRN_DOC_OTHER_ROW("mapping"),
    TRN_DOC_END_ROW};
static const trn_doc_field mapping_fields[] = {
    TRN_DOC_BOOL_ROW("texture_arrays", "true or false (pack the layers into texture arrays)",
                     trn_material_mapping, texture_arrays),
    TRN_DOC_BOOL_ROW("triplanar", "true or false (triplanar projection on steep faces)",
                     trn_material_mapping, triplanar),
    TRN_DOC_NUM_ROW("triplanar_slope", 0, 90, 0,
                    "a slope in degrees 0..90 (where triplanar projection starts)",
                    trn_material_mapping, triplanar_slope),
    TRN_DOC_NUM_ROW("triplanar_sharpness", 1, 64, 0,
                    "a number 1..64 (the exponent of the projection axes' weights)",
                    trn_material_mapping, triplanar_sharpness),
    TRN_DOC_BOOL_ROW("height_blend", "true or false (height maps bias the layer weights)",
                     trn_material_mapping, height_blend),
    TRN_DOC_NUM_ROW("height_blend_contrast", 0, 1, TRN_DOC_LO_OPEN,
                    "a number in (0, 1] (the blend's transition width in normalised height)",
                    trn_material_mapping, height_blend_contrast),
    TRN_DOC_NUM_ROW("macro_variation", 0, 1, 0,
                    "a number 0..1 (how strongly large-scale variation modulates albedo)",
                    trn_material_mapping, macro_variation),
    TRN_DOC_NUM_ROW("macro_scale", 0, INFINITY, TRN_DOC_LO_OPEN,
                    "a number > 0 (macro variation repetitions per world unit)",
                    trn_material_mapping, macro_scale),
    TRN_DOC_END_ROW};
/* A Material document's fields; its maps are read by material_maps' rows. */
static const trn_doc_field material_fields[] = {
    TRN_DOC_OTHER_ROW("format_version"),
    TRN_DOC_TEXT_ROW("name", TRN_DOC_NONEMPTY,
                     "a non-empty string (the Material's display name)", trn_material, name),
    TRN_DOC_OTHER_ROW("maps"),
    TRN_DOC_NUM_ROW("texture_scale", 0, INFINITY, TRN_DOC_LO_OPEN,
                    "a number > 0 (multiplies the repetitions per world unit)", trn_material,
                    texture_scale),
    TRN_DOC_END_ROW};
#define MAP_EXPECT "a PNG file's path relative to the material document (such as \"soil.png\")"
static const trn_doc_field material_maps[] = {
    TRN_DOC_TEXT_ROW("albedo", TRN_DOC_NONEMPTY, MAP_EXPECT, trn_material, maps[TRN_MAP_ALBEDO]),
    TRN_DOC_TEXT_ROW("normal", TRN_DOC_NONEMPTY, MAP_EXPECT, trn_material, maps[TRN_MAP_NORMAL]),
    TRN_DOC_TEXT_ROW("roughness", TRN_DOC_NONEMPTY, MAP_EXPECT, trn_material,
                     maps[TRN_MAP_ROUGHNESS]),
    TRN_DOC_TEXT_ROW("height", TRN_DOC_NONEMPTY, MAP_EXPECT, trn_material, maps[TRN_MAP_HEIGHT]),
    TRN_DOC_TEXT_ROW("emissive", TRN_DOC_NONEMPTY, MAP_EXPECT, trn_material,
                     maps[TRN_MAP_EMISSIVE]),
    TRN_DOC_END_ROW};
static const trn_doc_field role_binding = {.name = "",
                                           .type = TRN_DOC_ID,
                                           .range = {0, 0, 0,
                                                     "a Material asset id (\"asset://...\")"},
                                           .schemes = asset_scheme};

/* ---- shared parsing context ------------------------------------------------------------ */

typedef struct pal_ctx {
    const char *text; /* the whole text, byte order mark included, for positions */
    size_t size;
    const char *file;
    const char *what; /* "terrain_palette" or "terrain_material_set" */
    trn_json_path path;
    trn_error *err;
} pal_ctx;

static trn_status perr(pal_ctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* "path: message" at the position of the current path. */
static trn_status perr(pal_ctx *c, trn_status code, trn_json_target target, const char *fmt, ...)
{
    char msg[420];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return trn_json_error_at(c->err, code, c->file, c->text, c->size, &c->path, target, msg);
}

/* The shared document reader's view of the context. */
static trn_doc doc_of(pal_ctx *c)
{
    return (trn_doc){c->text, c->size, c->file, &c->path, c->err, NULL, NULL};
}

static trn_status oom(pal_ctx *c)
{
    return trn_error_set(c->err, TRN_ERR_NO_MEMORY, c->file, -1, "out of memory reading a %s",
                         c->what);
}

static void push(pal_ctx *c, const char *key)
{
    trn_json_path_push_key(&c->path, key);
}

static void push_index(pal_ctx *c, size_t index)
{
    trn_json_path_push_index(&c->path, index);
}

static void pop(pal_ctx *c)
{
    trn_json_path_pop(&c->path);
}

static const char *describe(const json_t *v, char *buf, size_t size)
{
    return trn_json_describe(v, buf, size);
}

/* Called with the path at the object holding key; the error sits on the key. */
static trn_status unknown_key(pal_ctx *c, const char *key, const char *const *known,
                              const char *what, const char *why)
{
    trn_doc d = doc_of(c);
    return trn_doc_unknown_key(&d, key, known, what, why);
}

/* unknown_key with the table's keys as suggestions. */
static trn_status unknown_field(pal_ctx *c, const char *key, const trn_doc_field *rows,
                                const char *what, const char *why)
{
    trn_doc d = doc_of(c);
    return trn_doc_unknown_field(&d, key, rows, what, why);
}

/* Called with the path at the object that lacks key. */
static trn_status missing_key(pal_ctx *c, const char *key, const char *expect)
{
    trn_doc d = doc_of(c);
    return trn_doc_missing_key(&d, key, expect);
}

/* The value at the current path: a number inside [lo, hi] (open at lo when lo_open). */
static trn_status want_number(pal_ctx *c, const json_t *v, const char *expect, double lo,
                              bool lo_open, double hi, double *out)
{
    trn_doc d = doc_of(c);
    const trn_doc_range range = {lo, hi, lo_open ? TRN_DOC_LO_OPEN : 0u, expect};
    return trn_doc_number(&d, v, &range, out);
}

/* A field of numbers rows (the path at its key) into base. */
static trn_status read_field(pal_ctx *c, const trn_doc_field *row, const json_t *v, void *base)
{
    trn_doc d = doc_of(c);
    return trn_doc_read_field(&d, row, v, base, c->what);
}

/* format_version must be `want`; older versions get the advice in older[version]. */
static trn_status check_version(pal_ctx *c, const json_t *root, unsigned want,
                                const char *const *older)
{
    char buf[120];
    const json_t *v = json_object_get(root, "format_version");
    if (!v) {
        char expect[100];
        snprintf(expect, sizeof expect, "%u, the version of the %s document", want, c->what);
        return missing_key(c, "format_version", expect);
    }
    push(c, "format_version");
    trn_status st = TRN_OK;
    if (!json_is_integer(v) || json_integer_value(v) < 1)
        st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %u, found %s", want,
                  describe(v, buf, sizeof buf));
    else if (json_integer_value(v) > (json_int_t)want)
        st = perr(c, TRN_ERR_VERSION, TRN_JSON_VALUE,
                  "format_version %" JSON_INTEGER_FORMAT " is newer than this build reads (%u)",
                  json_integer_value(v), want);
    else if (json_integer_value(v) < (json_int_t)want)
        st = perr(c, TRN_ERR_VERSION, TRN_JSON_VALUE, "%s", older[json_integer_value(v) - 1]);
    pop(c);
    return st;
}

static trn_status parse_root_object(pal_ctx *c, const char *text, size_t size, json_t **root)
{
    size_t bom = size >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB &&
                         (unsigned char)text[2] == 0xBF
                     ? 3
                     : 0;
    json_error_t je;
    trn_json_parse_counted();
    *root = json_loadb(text + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    if (!*root) {
        size_t at = je.position > 0 ? (size_t)je.position - 1 : 0;
        trn_json_pos pos = trn_json_pos_of_offset(text, size, bom + at);
        trn_error_set(c->err, TRN_ERR_JSON, c->file, (int64_t)pos.offset, "invalid JSON: %s",
                      je.text);
        trn_error_set_position(c->err, pos.line, pos.column);
        return TRN_ERR_JSON;
    }
    if (!json_is_object(*root)) {
        char buf[120];
        trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a %s object, found %s",
                             c->what, describe(*root, buf, sizeof buf));
        json_decref(*root);
        *root = NULL;
        return st;
    }
    return TRN_OK;
}

/* ---- material sets ----------------------------------------------------------------------- */

void trn_material_set_dispose(trn_material_set *set)
{
    if (!set) return;
    free(set->name);
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++)
        free(set->roles[i]);
    memset(set, 0, sizeof *set);
}

static trn_status parse_roles(pal_ctx *c, const json_t *roles, trn_material_set *s)
{
    char buf[120];
    if (!json_is_object(roles))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected an object of role names to Material asset ids, found %s",
                    describe(roles, buf, sizeof buf));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)roles, key, v)
    {
        trn_surface_role role;
        if (!trn_surface_role_parse(key, &role))
            return unknown_key(c, key, role_names, "roles",
                               " (the roles are ground, grass, rock, cliff, sediment, sand, "
                               "snow, wet_ground and underwater)");
        push(c, key);
        trn_status st = read_field(c, &role_binding, v, &s->roles[role]);
        pop(c);
        if (st) return st;
    }
    return TRN_OK;
}

void trn_material_mapping_default(trn_material_mapping *m)
{
    *m = (trn_material_mapping){.present = true,
                                .texture_arrays = true,
                                .triplanar = true,
                                .triplanar_slope = 35.0,
                                .triplanar_sharpness = 4.0,
                                .height_blend = true,
                                .height_blend_contrast = 0.2,
                                .macro_variation = 0.0,
                                .macro_scale = 0.01};
}

static trn_status parse_mapping(pal_ctx *c, const json_t *obj, trn_material_mapping *m)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected an object such as {\"triplanar\": true, \"height_blend\": true}, "
                    "found %s",
                    describe(obj, buf, sizeof buf));
    trn_material_mapping_default(m);
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_doc_field *row = trn_doc_field_find(mapping_fields, key);
        if (!row) return unknown_field(c, key, mapping_fields, "mapping", NULL);
        push(c, key);
        trn_status st = read_field(c, row, v, m);
        pop(c);
        if (st) return st;
    }
    return TRN_OK;
}

trn_status trn_material_set_parse(const char *text, size_t size, const char *path,
                                  trn_material_set *out, trn_error *err)
{
    if (!out || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_material_set_parse: set and text are required");
    memset(out, 0, sizeof *out);
    if (!text) text = "";
    pal_ctx c = {text, size, path, "terrain_material_set", {{{0}}, 0}, err};
    json_t *root = NULL;
    trn_status st = parse_root_object(&c, text, size, &root);
    if (st) return st;
    static const char *const older[] = {""};
    st = check_version(&c, root, TRN_MATERIAL_SET_FORMAT_VERSION, older);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (st) break;
        if (strcmp(key, "format_version") == 0) continue;
        const trn_doc_field *row = trn_doc_field_find(set_fields, key);
        if (!row) {
            st = unknown_field(&c, key, set_fields, "the terrain_material_set document", NULL);
            break;
        }
        push(&c, key);
        if (strcmp(key, "mapping") == 0)
            st = parse_mapping(&c, v, &out->mapping);
        else
            st = row->type == TRN_DOC_OTHER ? parse_roles(&c, v, out)
                                            : read_field(&c, row, v, out);
        pop(&c);
    }
    if (!st && !out->name) st = missing_key(&c, "name", "the material set's display name");
    if (!st && !json_object_get(root, "roles"))
        st = missing_key(&c, "roles",
                         "an object binding surface roles to Material assets, such as "
                         "{\"ground\": \"asset://materials/soil\"}");
    json_decref(root);
    if (st) trn_material_set_dispose(out);
    return st;
}

/* ---- Material documents -------------------------------------------------------------------- */

const char *trn_material_map_name(int map)
{
    return map >= 0 && map < TRN_MAP_COUNT ? material_maps[map].name : NULL;
}

void trn_material_dispose(trn_material *m)
{
    if (!m) return;
    free(m->name);
    free(m->source);
    free(m->id);
    free(m->project);
    for (int k = 0; k < TRN_MAP_COUNT; k++) {
        free(m->maps[k]);
        free(m->paths[k]);
    }
    memset(m, 0, sizeof *m);
}

/* A map's path: relative, "/"-separated parts none empty, "." or "..", ending in ".png" (the
 * one image format every consumer reads). */
static bool map_path_ok(const char *p)
{
    const size_t n = strlen(p);
    if (n < 5 || p[0] == '/' || strchr(p, '\\')) return false;
    const char *ext = p + n - 4;
    if (!(ext[0] == '.' && (ext[1] | 32) == 'p' && (ext[2] | 32) == 'n' && (ext[3] | 32) == 'g'))
        return false;
    for (const char *s = p; *s;) {
        const char *e = strchr(s, '/');
        const size_t k = e ? (size_t)(e - s) : strlen(s);
        if (k == 0 || (k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += k + (e ? 1 : 0);
    }
    return true;
}

static trn_status parse_material_maps(pal_ctx *c, const json_t *obj, trn_material *m)
{
    char buf[120];
    if (!json_is_object(obj))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected an object of image maps such as {\"albedo\": \"soil.png\"}, "
                    "found %s",
                    describe(obj, buf, sizeof buf));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        const trn_doc_field *row = trn_doc_field_find(material_maps, key);
        if (!row)
            return unknown_field(c, key, material_maps, "maps",
                                 " (the maps are albedo, normal, roughness, height and "
                                 "emissive)");
        push(c, key);
        trn_status st = read_field(c, row, v, m);
        const char *p = *(char *const *)((const char *)m + row->offset);
        if (!st && !map_path_ok(p))
            st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                      "expected %s, without \".\" or \"..\" parts, found \"%.200s\"", MAP_EXPECT,
                      p);
        pop(c);
        if (st) return st;
    }
    return TRN_OK;
}

trn_status trn_material_parse(const char *text, size_t size, const char *path, trn_material *out,
                              trn_error *err)
{
    if (!out || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_material_parse: material and text are required");
    memset(out, 0, sizeof *out);
    out->texture_scale = 1;
    if (!text) text = "";
    pal_ctx c = {text, size, path, "Material", {{{0}}, 0}, err};
    json_t *root = NULL;
    trn_status st = parse_root_object(&c, text, size, &root);
    if (st) return st;
    static const char *const older[] = {""};
    st = check_version(&c, root, TRN_MATERIAL_FORMAT_VERSION, older);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (st) break;
        if (strcmp(key, "format_version") == 0) continue;
        const trn_doc_field *row = trn_doc_field_find(material_fields, key);
        if (!row) {
            st = unknown_field(&c, key, material_fields, "the Material document", NULL);
            break;
        }
        push(&c, key);
        st = row->type == TRN_DOC_OTHER ? parse_material_maps(&c, v, out)
                                        : read_field(&c, row, v, out);
        pop(&c);
    }
    if (!st && !out->name) st = missing_key(&c, "name", "the Material's display name");
    if (!st && !json_object_get(root, "maps"))
        st = missing_key(&c, "maps",
                         "an object of image maps, such as {\"albedo\": \"soil.png\"} ({} for "
                         "none)");
    json_decref(root);
    if (st) trn_material_dispose(out);
    return st;
}

/* ---- palettes ------------------------------------------------------------------------------ */

static const char *const rule_keys[] = {
    "model",    "prefab",         "category", "density",   "candidate_spacing",
    "spacing",  "scale",          "yaw",      "biomes",    "slope",
    "moisture", "water_distance", "cluster",  "collision", NULL};
static const char *const cluster_keys[] = {"size", "strength", NULL};
static const char *const category_names[] = {"prop", "grass", "tree", "rock", NULL};
static const char *const collision_names[] = {"static", "none", "trigger", NULL};

static const char *const palette_older[] = {
    "format_version 1 is no longer read: move the ground bindings into a terrain_material_set "
    "document (named by material_set) and the objects into named placements, then set "
    "format_version 3",
    "format_version 2 is no longer read: placement weight was replaced by physical density; "
    "give each placement a density (instances per square unit) and a candidate_spacing for the "
    "landscape's scale, then set format_version 3"};

void trn_palette_dispose(trn_palette *p)
{
    if (!p) return;
    free(p->name);
    free(p->material_set);
    for (uint32_t i = 0; p->rules && i < p->rule_count; i++) {
        trn_scatter_rule *r = &p->rules[i];
        free(r->model);
        free(r->prefab);
        for (uint32_t b = 0; r->biomes && b < r->biome_count; b++)
            free(r->biomes[b]);
        free(r->biomes);
    }
    free(p->rules);
    memset(p, 0, sizeof *p);
}

static bool valid_rule_id(const char *id)
{
    size_t n = strlen(id);
    if (n == 0 || n >= TRN_PALETTE_ID_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char ch = id[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_' || ch == '-'))
            return false;
    }
    return true;
}

static trn_status want_choice(pal_ctx *c, const json_t *v, const char *const *names,
                              const char *expect, int *out)
{
    char buf[120];
    const char *s = json_string_value(v);
    for (int i = 0; s && names[i]; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return TRN_OK;
        }
    return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                describe(v, buf, sizeof buf));
}

/* [lo, hi] with each element inside [min, max] (open at min when min_open) and lo <= hi. */
static trn_status want_pair(pal_ctx *c, const json_t *v, const char *element, double min,
                            bool min_open, double max, double out[2])
{
    char buf[120];
    if (!json_is_array(v) || json_array_size(v) != 2)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected [lo, hi] (two numbers), found %s",
                    json_is_array(v) ? (json_array_size(v) < 2 ? "fewer than two values"
                                                               : "more than two values")
                                     : describe(v, buf, sizeof buf));
    for (size_t i = 0; i < 2; i++) {
        push_index(c, i);
        trn_status st = want_number(c, json_array_get(v, i), element, min, min_open, max, &out[i]);
        pop(c);
        if (st) return st;
    }
    if (out[0] > out[1]) {
        char lo[40], hi[40];
        trn_double_text(out[0], lo);
        trn_double_text(out[1], hi);
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected lo <= hi, found [%s, %s] (swap them)", lo, hi);
    }
    return TRN_OK;
}

static trn_status want_band(pal_ctx *c, const json_t *v, const char *element, double min,
                            double max, trn_scatter_band *band)
{
    double pair[2];
    trn_status st = want_pair(c, v, element, min, false, max, pair);
    if (st) return st;
    band->has = true;
    band->lo = pair[0];
    band->hi = pair[1];
    return TRN_OK;
}

static trn_status parse_biomes(pal_ctx *c, const json_t *v, trn_scatter_rule *r)
{
    char buf[120];
    if (!json_is_array(v) || json_array_size(v) == 0)
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected a non-empty array of biome names (leave biomes out for every "
                    "biome), found %s",
                    json_is_array(v) ? "[]" : describe(v, buf, sizeof buf));
    size_t n = json_array_size(v);
    if (n > PAL_MAX_BIOMES)
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE,
                    "%zu biome names, more than a recipe can define (%u)", n, PAL_MAX_BIOMES);
    r->biomes = calloc(n, sizeof *r->biomes);
    if (!r->biomes) return oom(c);
    for (size_t i = 0; i < n; i++) {
        const json_t *b = json_array_get(v, i);
        push_index(c, i);
        if (!json_is_string(b) || json_string_length(b) == 0 ||
            strlen(json_string_value(b)) != json_string_length(b)) {
            trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                                 "expected a biome name (a non-empty string), found %s",
                                 describe(b, buf, sizeof buf));
            pop(c);
            return st;
        }
        for (size_t k = 0; k < i; k++)
            if (strcmp(r->biomes[k], json_string_value(b)) == 0) {
                trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                                     "biome '%.80s' is listed twice (biomes[%zu] names it "
                                     "already)",
                                     r->biomes[k], k);
                pop(c);
                return st;
            }
        pop(c);
        r->biomes[i] = trn_text_dup(json_string_value(b));
        if (!r->biomes[i]) return oom(c);
        r->biome_count = (uint32_t)i + 1;
    }
    return TRN_OK;
}

static trn_status parse_cluster(pal_ctx *c, const json_t *v, trn_scatter_rule *r)
{
    char buf[120];
    if (!json_is_object(v))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected an object {\"size\": units > 0, \"strength\": 0..1}, found %s",
                    describe(v, buf, sizeof buf));
    const char *key;
    json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        trn_status st;
        push(c, key);
        const trn_doc_field *row = trn_doc_field_find(cluster_numbers, key);
        if (row) {
            st = read_field(c, row, e, r);
        } else {
            pop(c);
            return unknown_key(c, key, cluster_keys, "cluster", NULL);
        }
        pop(c);
        if (st) return st;
    }
    return TRN_OK;
}

/* One placement; the path stands at placements.ID. */
static trn_status parse_rule(pal_ctx *c, const json_t *v, trn_scatter_rule *r)
{
    char buf[120];
    if (!json_is_object(v))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE, "expected a placement object, found %s",
                    describe(v, buf, sizeof buf));
    r->category = TRN_CATEGORY_PROP;
    r->scale[0] = r->scale[1] = 1;
    r->yaw[0] = 0;
    r->yaw[1] = 360;
    r->cluster_size = 16;
    r->collision = TRN_COLLISION_STATIC;
    bool have_density = false, have_cs = false, have_collision = false;
    const char *key;
    json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        trn_status st = TRN_OK;
        int choice = 0;
        const trn_doc_field *row;
        push(c, key);
        if ((row = trn_doc_field_find(geometry_fields, key)) != NULL) {
            if (r->model || r->prefab)
                st = perr(c, TRN_ERR_JSON, TRN_JSON_KEY,
                          "a placement has exactly one geometry: model or prefab, not both "
                          "(make two placements to use both)");
            else
                st = read_field(c, row, e, r);
        } else if (strcmp(key, "category") == 0) {
            st = want_choice(c, e, category_names, "\"prop\", \"grass\", \"tree\" or \"rock\"",
                             &choice);
            r->category = (trn_scatter_category)choice;
        } else if ((row = trn_doc_field_find(rule_numbers, key)) != NULL) {
            st = read_field(c, row, e, r);
            if (row->offset == offsetof(trn_scatter_rule, density)) have_density = true;
            if (row->offset == offsetof(trn_scatter_rule, candidate_spacing)) have_cs = true;
        } else if (strcmp(key, "scale") == 0) {
            st = want_pair(c, e, "a number > 0", 0, true, INFINITY, r->scale);
        } else if (strcmp(key, "yaw") == 0) {
            st = want_pair(c, e, "a number (degrees)", -INFINITY, false, INFINITY, r->yaw);
        } else if (strcmp(key, "biomes") == 0) {
            st = parse_biomes(c, e, r);
        } else if (strcmp(key, "slope") == 0) {
            st = want_band(c, e, "a number 0..90 (degrees from horizontal)", 0, 90, &r->slope);
        } else if (strcmp(key, "moisture") == 0) {
            st = want_band(c, e, "a number 0..1", 0, 1, &r->moisture);
        } else if (strcmp(key, "water_distance") == 0) {
            st = want_band(c, e, "a number >= 0 (units)", 0, INFINITY, &r->water_distance);
        } else if (strcmp(key, "cluster") == 0) {
            st = parse_cluster(c, e, r);
        } else if (strcmp(key, "collision") == 0) {
            st = want_choice(c, e, collision_names, "\"none\", \"static\" or \"trigger\"", &choice);
            r->collision = (trn_scatter_collision)choice;
            have_collision = true;
        } else {
            pop(c);
            if (strcmp(key, "lod") == 0)
                return unknown_key(c, key, rule_keys, "the placement",
                                   ": 'lod' was unused and is refused in format_version 3; "
                                   "distance-based LOD and culling are authored on the model "
                                   "or prefab");
            if (strcmp(key, "weight") == 0)
                return unknown_key(c, key, rule_keys, "the placement",
                                   ": weight was replaced by density (instances per square "
                                   "unit) in format_version 3");
            return unknown_key(c, key, rule_keys, "the placement", NULL);
        }
        pop(c);
        if (st) return st;
    }
    if (!r->model && !r->prefab)
        return missing_key(c, "prefab",
                           "exactly one geometry: \"prefab\": \"prefab://...\" or \"model\": "
                           "\"asset://...\"");
    if (!have_density)
        return missing_key(c, "density", "instances per square unit before filters, >= 0");
    if (r->model && (!have_collision || r->collision != TRN_COLLISION_NONE)) {
        if (have_collision) push(c, "collision");
        trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                             "a model rule must say \"collision\": \"none\"%s (the engine does "
                             "not invent collider bounds for arbitrary models); use a prefab "
                             "with authored collider shapes for static or trigger collision",
                             have_collision ? ", found another" : "");
        if (have_collision) pop(c);
        return st;
    }
    if (!have_cs) r->candidate_spacing = r->spacing > 0 ? r->spacing / 2 : 0.25;
    return TRN_OK;
}

/* v rounded down to six significant digits, so the suggestion itself is accepted. */
static double six_digits_down(double v)
{
    if (!(v > 0) || !isfinite(v)) return v;
    double scale = pow(10, 5 - floor(log10(v)));
    double d = floor(v * scale) / scale;
    return d > v ? v : d;
}

/* Every rule asks for at most one instance per candidate site. */
static trn_status check_densities(pal_ctx *c, const trn_palette *p, const json_t *placements)
{
    for (uint32_t i = 0; i < p->rule_count; i++) {
        const trn_scatter_rule *r = &p->rules[i];
        const char *cat_name;
        double cat = trn_palette_category_multiplier(p, r->category, &cat_name);
        double eff = trn_palette_rule_density(p, r);
        double cs = r->candidate_spacing;
        if (eff == 0) continue; /* a disabled rule fits any lattice (0 x inf would be NaN) */
        double per_site = eff * cs * cs;
        if (!(per_site > 1)) continue;
        char num[7][40], mult[100] = "";
        trn_double_text(r->density, num[0]);
        trn_double_text(p->art_density, num[1]);
        trn_double_text(cat, num[2]);
        if (cat_name) snprintf(mult, sizeof mult, " x %s %s", cat_name, num[2]);
        trn_double_text(eff, num[3]);
        trn_double_text(cs, num[4]);
        trn_double_text(six_digits_down(1 / (p->art_density * cat * cs * cs)), num[5]);
        trn_double_text(six_digits_down(1 / sqrt(eff)), num[6]);
        char per[40], note[80] = "";
        snprintf(per, sizeof per, "%.6g", per_site);
        if (!json_object_get(json_object_get(placements, r->id), "candidate_spacing"))
            snprintf(note, sizeof note, " (the default: %s)",
                     r->spacing > 0 ? "half the spacing" : "spacing is 0");
        push(c, "placements");
        push(c, r->id);
        push(c, "density");
        trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                             "density %s x art_density %s%s = %s instances per square unit at "
                             "candidate_spacing %s%s asks for %s per candidate site, more than "
                             "the one a site holds: reduce density to %s or less, or "
                             "candidate_spacing to %s or less",
                             num[0], num[1], mult, num[3], num[4], note, per, num[5], num[6]);
        c->path.depth -= 3;
        return st;
    }
    return TRN_OK;
}

static trn_status parse_placements(pal_ctx *c, const json_t *v, trn_palette *p)
{
    char buf[120];
    if (!json_is_object(v))
        return perr(c, TRN_ERR_JSON, TRN_JSON_VALUE,
                    "expected an object of placements keyed by their stable ids, found %s",
                    describe(v, buf, sizeof buf));
    size_t n = json_object_size(v);
    if (n > PAL_MAX_RULES)
        return perr(c, TRN_ERR_LIMIT, TRN_JSON_VALUE, "%zu placements, more than %u", n,
                    PAL_MAX_RULES);
    if (n == 0) return TRN_OK;
    p->rules = calloc(n, sizeof *p->rules);
    if (!p->rules) return oom(c);
    const char *key;
    json_t *e;
    json_object_foreach((json_t *)v, key, e)
    {
        if (!valid_rule_id(key)) {
            push(c, key);
            trn_status st = perr(c, TRN_ERR_JSON, TRN_JSON_KEY,
                                 "a placement id uses letters, digits, '_' and '-' (1 to %u "
                                 "bytes), found '%.80s'%s",
                                 TRN_PALETTE_ID_MAX - 1, key,
                                 strlen(key) >= TRN_PALETTE_ID_MAX ? " (too long)" : "");
            pop(c);
            return st;
        }
        trn_scatter_rule *r = &p->rules[p->rule_count++];
        memcpy(r->id, key, strlen(key) + 1);
        push(c, key);
        trn_status st = parse_rule(c, e, r);
        pop(c);
        if (st) return st;
    }
    return TRN_OK;
}

trn_status trn_palette_parse(const char *text, size_t size, const char *path, trn_palette *out,
                             trn_error *err)
{
    if (!out || (!text && size))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_palette_parse: palette and text are required");
    memset(out, 0, sizeof *out);
    if (!text) text = "";
    pal_ctx c = {text, size, path, "terrain_palette", {{{0}}, 0}, err};
    json_t *root = NULL;
    trn_status st = parse_root_object(&c, text, size, &root);
    if (st) return st;
    out->art_density = out->grass_density = out->tree_density = out->rock_density = 1;
    st = check_version(&c, root, TRN_PALETTE_FORMAT_VERSION, palette_older);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v)
    {
        if (st) break;
        if (strcmp(key, "format_version") == 0) continue;
        const trn_doc_field *row = trn_doc_field_find(palette_fields, key);
        if (!row) {
            st = unknown_field(&c, key, palette_fields, "the terrain_palette document",
                               strcmp(key, "lod") == 0
                                   ? ": 'lod' was unused and is refused in format_version 3; "
                                     "distance-based LOD and culling are authored on the model "
                                     "or prefab"
                                   : NULL);
            break;
        }
        push(&c, key);
        st = row->type == TRN_DOC_OTHER ? parse_placements(&c, v, out) : read_field(&c, row, v, out);
        pop(&c);
    }
    if (!st && !out->name) st = missing_key(&c, "name", "the palette's display name");
    if (!st && !out->material_set && out->rule_count == 0) {
        if (json_object_get(root, "placements")) push(&c, "placements");
        st = perr(&c, TRN_ERR_JSON, TRN_JSON_VALUE,
                  "a palette needs a material_set or at least one placement");
    }
    if (!st) st = check_densities(&c, out, json_object_get(root, "placements"));
    json_decref(root);
    if (st) trn_palette_dispose(out);
    return st;
}
