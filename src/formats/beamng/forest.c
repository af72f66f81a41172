/* BeamNG vegetation: grass as GroundCover, shaped items as forest files, item data; their checks. */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/numtext.h"
#include "core/write_set.h"
#include "level_internal.h"
#include "terrane/beamng_forest.h"
#include "terrane/beamng_level.h"

#define ITEM_DATA_MAX_BYTES (1u << 28)

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* "terrane_" + the rule id with anything but letters, digits and '_' as '_'. */
static void type_name(const char *id, char *out, size_t size)
{
    snprintf(out, size, "terrane_%s", id);
    for (char *p = out + 8; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
            *p = '_';
}

static int cmp_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Stage text as path's new content. */
static trn_status stage_text(trn_write_set *ws, const char *path, const char *text, size_t size,
                             trn_error *err)
{
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    trn_status st = TRN_OK;
    if (slash && slash != path && (size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = '\0';
        st = trn_mkdir_p(dir, err);
    }
    const char *target = NULL;
    if (!st) st = trn_write_target(ws, path, &target, err);
    if (!st) st = trn_file_write_atomic(target, text, size, err);
    return st;
}

/* What a rule becomes in the level. */
typedef enum rule_kind {
    KIND_COVER,   /* grass: a GroundCover object */
    KIND_FOREST,  /* a tree, rock or prop with a shape: forest items */
    KIND_SKIPPED, /* no shape: a forest item would draw nothing */
} rule_kind;

/* The rule's .dae / .cdae shape, or NULL. */
static const char *rule_shape(const trn_scatter_rule *rule)
{
    const char *geom = rule->model ? rule->model : rule->prefab ? rule->prefab : "";
    return ends_with(geom, ".dae") || ends_with(geom, ".cdae") ? geom : NULL;
}

/* The shape as a game path: an asset or prefab id's path from the game folder
 * ("asset://levels/L/art/shapes/pine.dae" -> "/levels/L/art/shapes/pine.dae"). */
static void shape_game_path(const char *shape, char *out, size_t size)
{
    const char *sep = strstr(shape, "://");
    if (sep)
        snprintf(out, size, "/%s", sep + 3 + (sep[3] == '/'));
    else
        snprintf(out, size, "%s", shape);
}

static rule_kind kind_of(const trn_scatter_rule *rule)
{
    if (rule->category == TRN_CATEGORY_GRASS) return KIND_COVER;
    return rule_shape(rule) ? KIND_FOREST : KIND_SKIPPED;
}

/* An instance's turn: its yaw clockwise seen from above (terrane's yaw, the way Unity and
 * glTF exports turn it) about BeamNG's up axis (z). The rotationMatrix rows are the item's own
 * x, y and z axes in the world (editor-saved guardrail chains run along their first rows and
 * tilt with the road; docs/beamng.md, "Checked against editor-saved levels"); the quaternion is
 * Torque's QuatF of the same turn (its matrix is the transpose of the usual formula). */
void trn_lvl_forest_rotation(double yaw_degrees, double m[9], double q[4])
{
    const double a = yaw_degrees * 3.14159265358979323846 / 180.0;
    const double c = cos(a), s = sin(a);
    const double r[9] = {c, -s, 0, s, c, 0, 0, 0, 1};
    memcpy(m, r, sizeof r);
    q[0] = q[1] = 0.0;
    q[2] = sin(a / 2.0);
    q[3] = cos(a / 2.0);
}

/* One rule's items, a line each, in the instances' order. */
static trn_status write_items(trn_write_set *ws, const char *path, const char *type,
                              const trn_instances *inst, uint32_t rule,
                              const trn_beamng_forest_options *opt, uint64_t *count, trn_error *err)
{
    trn_lvl_buf b = {0};
    char line[768];
    *count = 0;
    for (size_t k = 0; k < inst->count; k++) {
        const trn_instance *in = &inst->items[k];
        if (in->rule != rule) continue;
        double m[9], q[4];
        trn_lvl_forest_rotation(in->yaw, m, q);
        /* The editor's key order; numbers in their shortest round-trip form (the editor
         * writes floats to 9 digits: 17-digit noise helps no reader). */
        const double v[13] = {opt->origin_x + in->x, opt->origin_y + in->z, in->y, m[0], m[1],
                              m[2], m[3], m[4], m[5], m[6], m[7], m[8], in->scale};
        char t[13][40];
        for (int j = 0; j < 13; j++)
            trn_double_text(v[j], t[j]);
        const int n = snprintf(line, sizeof line,
                               "{\"pos\":[%s,%s,%s],\"rotationMatrix\":[%s,%s,%s,%s,%s,%s,%s,%s,%s],"
                               "\"scale\":%s,\"type\":\"%s\"}\n",
                               t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], t[10],
                               t[11], t[12], type);
        if (n < 0 || (size_t)n >= sizeof line) {
            trn_lvl_buf_free(&b);
            return trn_error_set(err, TRN_ERR_LIMIT, path, -1, "a forest item line is too long");
        }
        trn_lvl_buf_append(&b, line, (size_t)n);
        (*count)++;
    }
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, path);
    }
    trn_status st = *count ? stage_text(ws, path, b.data ? b.data : "", b.len, err) : TRN_OK;
    trn_lvl_buf_free(&b);
    return st;
}

/* The level's NAME.forest.json ("JSON Forest Data v2"): each forest rule's instances replace
 * instances[TYPE], rows [x, y, z, qx, qy, qz, qw, scale]; the header and other types stay. */
static trn_status write_v2(trn_write_set *ws, const char *path, const trn_palette *palette,
                           const trn_instances *inst, const trn_beamng_forest_options *opt,
                           uint64_t *per_rule, trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st =
        trn_file_read_all(trn_write_set_current(ws, path), ITEM_DATA_MAX_BYTES, &data, &size, err);
    if (st) return st;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_PRESERVE_ORDER, &je);
    free(data);
    if (!json_is_object(root)) {
        json_decref(root);
        return trn_error_set(err, TRN_ERR_JSON, path, je.position,
                             "line %d column %d: expected the level's forest data object "
                             "({\"header\": ..., \"instances\": {TYPE: [rows]}}), found %s",
                             je.line, je.column, root ? "another value" : je.text);
    }
    json_t *all = json_object_get(root, "instances");
    if (!all) {
        all = json_object();
        if (!all || json_object_set_new(root, "instances", all)) st = oom(err, path);
    } else if (!json_is_object(all)) {
        st = trn_error_set(err, TRN_ERR_JSON, path, -1,
                           "\"instances\" is %s, expected an object of item types",
                           trn_lvl_json_kind(all));
    }
    bool any = false;
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        if (kind_of(&palette->rules[r]) != KIND_FOREST) continue;
        json_t *rows = json_array();
        if (!rows) {
            st = oom(err, path);
            break;
        }
        for (size_t k = 0; k < inst->count; k++) {
            const trn_instance *in = &inst->items[k];
            if (in->rule != r) continue;
            double m[9], q[4];
            trn_lvl_forest_rotation(in->yaw, m, q);
            const double v[8] = {opt->origin_x + in->x,
                                 opt->origin_y + in->z,
                                 in->y,
                                 q[0],
                                 q[1],
                                 q[2],
                                 q[3],
                                 in->scale};
            json_t *row = json_array();
            for (int c = 0; row && c < 8; c++)
                if (json_array_append_new(row, json_real(v[c]))) {
                    json_decref(row);
                    row = NULL;
                }
            if (!row || json_array_append_new(rows, row)) {
                st = oom(err, path);
                break;
            }
            per_rule[r]++;
        }
        if (!st && per_rule[r]) {
            char type[TRN_PALETTE_ID_MAX + 16];
            type_name(palette->rules[r].id, type, sizeof type);
            if (json_object_set(all, type, rows)) st = oom(err, path);
            any = true;
        }
        json_decref(rows);
    }
    if (!st && any) {
        char *text = trn_json_dumps_shortest(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text)
            st = oom(err, path);
        else {
            st = stage_text(ws, path, text, strlen(text), err);
            free(text);
        }
    }
    json_decref(root);
    return st;
}

/* ---- managedItemData.json, edited as text: entries we do not change keep their bytes ---- */

/* One member of the file's top-level object: where its key and value lie in the text. */
typedef struct item_span {
    char *key; /* decoded */
    size_t value_start, value_end, line_start;
} item_span;

static size_t skip_ws(const char *t, size_t n, size_t k)
{
    while (k < n && (t[k] == ' ' || t[k] == '\t' || t[k] == '\n' || t[k] == '\r'))
        k++;
    return k;
}

/* Past a JSON string starting at t[k] == '"'; n on a string that does not end. */
static size_t skip_string(const char *t, size_t n, size_t k)
{
    for (k++; k < n; k++) {
        if (t[k] == '\\') {
            k++;
            continue;
        }
        if (t[k] == '"') return k + 1;
    }
    return n;
}

/* Past one JSON value at t[k] (already validated by the parser: only its extent is found). */
static size_t skip_value(const char *t, size_t n, size_t k)
{
    if (k >= n) return n;
    if (t[k] == '"') return skip_string(t, n, k);
    if (t[k] == '{' || t[k] == '[') {
        int depth = 0;
        while (k < n) {
            if (t[k] == '"') {
                k = skip_string(t, n, k);
                continue;
            }
            if (t[k] == '{' || t[k] == '[') depth++;
            if (t[k] == '}' || t[k] == ']') {
                if (--depth == 0) return k + 1;
            }
            k++;
        }
        return n;
    }
    while (k < n && t[k] != ',' && t[k] != '}' && t[k] != ']' && t[k] != ' ' && t[k] != '\t' &&
           t[k] != '\n' && t[k] != '\r')
        k++;
    return k;
}

/* The members of the top-level object of t (a document the parser accepted), in order; *close
 * the offset of its closing brace. */
static bool item_spans(const char *t, size_t n, item_span **out, size_t *count, size_t *close)
{
    *out = NULL;
    *count = 0;
    size_t k = skip_ws(t, n, 0), cap = 0;
    if (k >= n || t[k] != '{') return false;
    k = skip_ws(t, n, k + 1);
    while (k < n && t[k] != '}') {
        if (t[k] != '"') return false;
        const size_t key_end = skip_string(t, n, k);
        json_t *key = json_loadb(t + k, key_end - k, JSON_DECODE_ANY, NULL);
        if (!json_is_string(key)) {
            json_decref(key);
            return false;
        }
        size_t line = k;
        while (line > 0 && t[line - 1] != '\n')
            line--;
        k = skip_ws(t, n, key_end);
        if (k >= n || t[k] != ':') {
            json_decref(key);
            return false;
        }
        k = skip_ws(t, n, k + 1);
        const size_t v0 = k;
        k = skip_value(t, n, k);
        if (*count == cap) {
            cap = cap ? 2 * cap : 16;
            item_span *grown = realloc(*out, cap * sizeof *grown);
            if (!grown) {
                json_decref(key);
                return false;
            }
            *out = grown;
        }
        char *name = trn_lvl_strdup(json_string_value(key));
        json_decref(key);
        if (!name) return false;
        (*out)[(*count)++] = (item_span){name, v0, k, line};
        k = skip_ws(t, n, k);
        if (k < n && t[k] == ',') k = skip_ws(t, n, k + 1);
    }
    *close = k;
    return k < n;
}

static void item_spans_free(item_span *spans, size_t count)
{
    for (size_t k = 0; k < count; k++)
        free(spans[k].key);
    free(spans);
}

/* v serialized with its continuation lines indented by indent, reals shortest. */
static bool append_value(trn_lvl_buf *b, const json_t *v, const char *indent, size_t indent_len)
{
    char *text = trn_json_dumps_shortest(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    if (!text) return false;
    for (const char *c = text; *c; c++) {
        trn_lvl_buf_append(b, c, 1);
        if (*c == '\n') trn_lvl_buf_append(b, indent, indent_len);
    }
    free(text);
    return !b->failed;
}

/* managedItemData.json with our types set: the file is edited as text, so every entry we leave
 * alone keeps its bytes (numbers, spacing, order); a changed entry is rewritten in place and a
 * new one added before the closing brace, numbers in their shortest form. Unchanged: no write. */
static trn_status write_item_data(trn_write_set *ws, const char *path, const char *level_name,
                                  const trn_palette *palette, const uint64_t *per_rule,
                                  trn_error *err)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_status st =
        trn_file_read_all(trn_write_set_current(ws, path), ITEM_DATA_MAX_BYTES, &data, &size, err);
    json_t *root = NULL;
    const bool existed = st != TRN_ERR_NOT_FOUND;
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        st = TRN_OK;
        root = json_object();
    } else if (!st) {
        json_error_t je;
        root = json_loadb((const char *)data, size, JSON_PRESERVE_ORDER, &je);
        if (!json_is_object(root)) {
            json_decref(root);
            free(data);
            return trn_error_set(err, TRN_ERR_JSON, path, je.position,
                                 "line %d column %d: expected the item data object of the "
                                 "editor (name -> TSForestItemData), found %s",
                                 je.line, je.column, root ? "another value" : je.text);
        }
    }
    if (st || !root) {
        free(data);
        return st ? st : oom(err, path);
    }
    /* What changes: per type, a new entry or a new shapeFile in an existing one. */
    const uint32_t rules = palette->rule_count;
    uint8_t *change = calloc(rules ? rules : 1u, 1); /* 1 new, 2 changed */
    json_t **entry = calloc(rules ? rules : 1u, sizeof *entry);
    if (!change || !entry) st = oom(err, path);
    bool any = false;
    for (uint32_t r = 0; r < rules && !st; r++) {
        if (!per_rule[r] || kind_of(&palette->rules[r]) != KIND_FOREST) continue;
        const trn_scatter_rule *rule = &palette->rules[r];
        char type[TRN_PALETTE_ID_MAX + 16];
        type_name(rule->id, type, sizeof type);
        char geom[1024];
        shape_game_path(rule_shape(rule), geom, sizeof geom);
        json_t *o = json_object_get(root, type);
        if (!json_is_object(o)) {
            char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
            trn_beamng_persistent_id(level_name, "TSForestItemData", type, pid);
            o = json_object();
            if (!o || json_object_set_new(o, "name", json_string(type)) ||
                json_object_set_new(o, "internalName", json_string(type)) ||
                json_object_set_new(o, "class", json_string("TSForestItemData")) ||
                json_object_set_new(o, "persistentId", json_string(pid)) ||
                json_object_set_new(o, "shapeFile", json_string(geom)) ||
                json_object_set(root, type, o)) {
                json_decref(o);
                st = oom(err, path);
                break;
            }
            change[r] = 1;
        } else {
            /* An existing entry keeps its settings; only the shape follows the rule's. */
            const json_t *shape = json_object_get(o, "shapeFile");
            if (!(json_is_string(shape) && strcmp(json_string_value(shape), geom) == 0)) {
                if (json_object_set_new(o, "shapeFile", json_string(geom))) {
                    st = oom(err, path);
                    break;
                }
                change[r] = 2;
            }
            json_incref(o);
        }
        entry[r] = o;
        any = any || change[r];
    }
    trn_lvl_buf b = {0};
    if (!st && any && !existed) {
        char *text = trn_json_dumps_shortest(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (!text)
            st = oom(err, path);
        else {
            trn_lvl_buf_append(&b, text, strlen(text));
            free(text);
        }
    } else if (!st && any) {
        const char *t = (const char *)data;
        item_span *spans = NULL;
        size_t count = 0, close = 0;
        if (!item_spans(t, size, &spans, &count, &close)) {
            st = trn_error_set(err, TRN_ERR_JSON, path, -1,
                               "could not find the entries of the item data object");
        } else {
            /* The members' indentation, for the lines we add. */
            const char *indent = "  ";
            size_t indent_len = 2;
            if (count) {
                indent = t + spans[0].line_start;
                indent_len = strspn(indent, " \t");
            }
            size_t at = 0;
            for (size_t m = 0; m < count; m++) {
                uint32_t r = rules;
                for (uint32_t q = 0; q < rules; q++) {
                    char type[TRN_PALETTE_ID_MAX + 16];
                    if (change[q] != 2) continue;
                    type_name(palette->rules[q].id, type, sizeof type);
                    if (strcmp(type, spans[m].key) == 0) r = q;
                }
                if (r == rules) continue;
                trn_lvl_buf_append(&b, t + at, spans[m].value_start - at);
                append_value(&b, entry[r], indent, indent_len);
                at = spans[m].value_end;
            }
            /* Up to the closing brace, trailing space trimmed, then the new entries. */
            size_t end = close;
            while (end > at && (t[end - 1] == ' ' || t[end - 1] == '\t' || t[end - 1] == '\n' ||
                                t[end - 1] == '\r'))
                end--;
            trn_lvl_buf_append(&b, t + at, end - at);
            bool first = count == 0;
            for (uint32_t r = 0; r < rules; r++) {
                if (change[r] != 1) continue;
                char type[TRN_PALETTE_ID_MAX + 16];
                type_name(palette->rules[r].id, type, sizeof type);
                json_t *key = json_string(type);
                char *key_text = key ? json_dumps(key, JSON_ENCODE_ANY) : NULL;
                json_decref(key);
                if (!key_text) {
                    b.failed = true;
                    break;
                }
                trn_lvl_buf_puts(&b, first ? "\n" : ",\n");
                trn_lvl_buf_append(&b, indent, indent_len);
                trn_lvl_buf_puts(&b, key_text);
                trn_lvl_buf_puts(&b, ": ");
                free(key_text);
                append_value(&b, entry[r], indent, indent_len);
                first = false;
            }
            /* The closing brace and whatever followed it, as they were. */
            trn_lvl_buf_append(&b, t + end, size - end);
        }
        item_spans_free(spans, count);
    }
    for (uint32_t r = 0; entry && r < rules; r++)
        json_decref(entry[r]);
    free(entry);
    free(change);
    json_decref(root);
    free(data);
    if (!st && b.failed) st = oom(err, path);
    if (!st && any) st = stage_text(ws, path, b.data ? b.data : "", b.len, err);
    trn_lvl_buf_free(&b);
    return st;
}

/* Whether dir holds a .forest4.json file. */
static bool has_forest4(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return false;
    bool found = false;
    for (struct dirent *de; !found && (de = readdir(d));)
        found = ends_with(de->d_name, ".forest4.json");
    closedir(d);
    return found;
}

/* ---- GroundCover: grass strewn by the engine around the camera ---- */

#define COVER_TYPES_MAX 8 /* Torque's GroundCover holds at most 8 types */
#define COVER_RADIUS 80.0

/* The material index under terrain-local (x, z), or -1. */
static int layer_at(const trn_beamng_forest_options *opt, double x, double z)
{
    if (!opt->layers || !(opt->layers_spacing > 0) || !opt->layers_width || !opt->layers_height)
        return -1;
    double fi = floor(x / opt->layers_spacing + 0.5), fj = floor(z / opt->layers_spacing + 0.5);
    if (!(fi >= 0)) fi = 0;
    if (!(fj >= 0)) fj = 0;
    if (fi > opt->layers_width - 1.0) fi = opt->layers_width - 1.0;
    if (fj > opt->layers_height - 1.0) fj = opt->layers_height - 1.0;
    const uint8_t k = opt->layers[(size_t)fj * opt->layers_width + (size_t)fi];
    return k < opt->layer_count && opt->layer_names[k] && opt->layer_names[k][0] ? k : -1;
}

static bool set_real(json_t *o, const char *key, double v)
{
    return !json_object_set_new(o, key, trn_lvl_json_number(v));
}

/* A grass rule's GroundCover object: one type per terrain material its instances stand on
 * (the 8 most used, probability their share of the instances), or one type for every material
 * when the terrain's map is not known. */
static json_t *cover_object(const char *level_name, const char *name, const char *group,
                            const trn_palette *palette, uint32_t r, const trn_instances *inst,
                            const trn_beamng_forest_options *opt, uint64_t *count)
{
    const trn_scatter_rule *rule = &palette->rules[r];
    uint64_t per_layer[256] = {0}, unknown = 0;
    *count = 0;
    for (size_t k = 0; k < inst->count; k++) {
        const trn_instance *in = &inst->items[k];
        if (in->rule != r) continue;
        const int l = layer_at(opt, in->x, in->z);
        if (l < 0)
            unknown++;
        else
            per_layer[l]++;
        (*count)++;
    }
    json_t *o = trn_lvl_new_object(level_name, "GroundCover", name, group);
    json_t *types = json_array();
    const char *shape = rule_shape(rule);
    const double density = trn_palette_rule_density(palette, rule);
    double max_elements = ceil(density * 3.14159265358979323846 * COVER_RADIUS * COVER_RADIUS);
    if (!(max_elements >= 1)) max_elements = 1;
    if (max_elements > 1e6) max_elements = 1e6;
    const double pos[3] = {0, 0, 0};
    bool ok =
        o && types && !json_object_set_new(o, "position", json_array()) &&
        !json_object_set_new(o, "material", json_string(shape ? "invisible" : "BNGGrass_3")) &&
        set_real(o, "radius", COVER_RADIUS) && set_real(o, "dissolveRadius", 65) &&
        set_real(o, "gridSize", 7) && set_real(o, "maxElements", max_elements) &&
        set_real(o, "seed", 1);
    for (int c = 0; ok && c < 3; c++)
        ok = !json_array_append_new(json_object_get(o, "position"), trn_lvl_json_number(pos[c]));
    /* The most used materials first; equal counts by index, so the same inputs give the same
     * order. */
    bool taken[256] = {false};
    const uint64_t known = *count - unknown;
    for (int t = 0; ok && t < COVER_TYPES_MAX; t++) {
        int best = -1;
        for (int l = 0; l < 256; l++)
            if (!taken[l] && per_layer[l] && (best < 0 || per_layer[l] > per_layer[best])) best = l;
        if (best < 0 && t > 0) break;
        json_t *type = json_object();
        ok = type && !json_array_append_new(types, type);
        if (!ok) break;
        if (best >= 0) {
            taken[best] = true;
            ok = !json_object_set_new(type, "layer", json_string(opt->layer_names[best])) &&
                 set_real(type, "probability", (double)per_layer[best] / (double)known);
        } else {
            ok = set_real(type, "probability", 1);
        }
        ok = ok && set_real(type, "sizeMin", rule->scale[0]) &&
             set_real(type, "sizeMax", rule->scale[1]) && set_real(type, "sizeExponent", 1) &&
             set_real(type, "maxSlope", rule->slope.has ? rule->slope.hi : 90) &&
             set_real(type, "windScale", 1);
        if (ok && shape) {
            char game[1024];
            shape_game_path(shape, game, sizeof game);
            ok = !json_object_set_new(type, "shapeFilename", json_string(game));
        }
    }
    /* The unused slots as the World Editor saves them: empty objects, every field at its
     * default (a type's probability defaults to 0, so they grow nothing). */
    while (ok && json_array_size(types) < COVER_TYPES_MAX) {
        json_t *empty = json_object();
        ok = empty && !json_array_append_new(types, empty);
    }
    if (!ok || json_object_set_new(o, "Types", types)) {
        if (!ok) json_decref(types);
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The wind that sways the forest's trees, as the World Editor's new-level template has it: a
 * ForestWindEmitter with a position and nothing else, so every wind value is the engine's own
 * default (the editor saves only values that differ from it; public editor-saved levels carry
 * this bare emitter). */
static json_t *wind_object(const char *level_name, const char *group)
{
    json_t *o = trn_lvl_new_object(level_name, "ForestWindEmitter", "theForestWind", group);
    json_t *pos = json_array();
    bool ok = o && pos;
    for (int c = 0; ok && c < 3; c++)
        ok = !json_array_append_new(pos, trn_lvl_json_number(0));
    ok = ok && !json_object_set(o, "position", pos);
    json_decref(pos);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static trn_status put_forest(trn_write_set *ws, const trn_palette *palette,
                             const trn_instances *inst, const trn_beamng_forest_options *opt,
                             const char *level_name, trn_beamng_forest_result *res, trn_error *err)
{
    uint64_t *per_rule = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *per_rule);
    if (!per_rule) return oom(err, opt->level_dir);
    trn_status st = TRN_OK;
    char path[PATH_MAX], dir[PATH_MAX], v2[PATH_MAX];
    /* The level's own forest format: NAME.forest.json (v2) when it has one. */
    char v2_name[300];
    snprintf(v2_name, sizeof v2_name, "%s.forest.json", level_name);
    bool use_v2 = false;
    if (!trn_lvl_join(v2, sizeof v2, opt->level_dir, v2_name) ||
        !trn_lvl_join(dir, sizeof dir, opt->level_dir, "forest"))
        st = TRN_ERR_LIMIT;
    else {
        /* The engine reads forest/ when it holds item files, the older file otherwise. */
        use_v2 = access(trn_write_set_current(ws, v2), F_OK) == 0 && !has_forest4(dir);
    }
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        const rule_kind kind = kind_of(&palette->rules[r]);
        if (kind == KIND_SKIPPED) {
            uint64_t n = 0;
            for (size_t k = 0; k < inst->count; k++)
                n += inst->items[k].rule == r;
            res->unshaped += n > 0;
            res->unshaped_items += n;
        }
        if (use_v2) continue;
        char type[TRN_PALETTE_ID_MAX + 16], file[TRN_PALETTE_ID_MAX + 40];
        type_name(palette->rules[r].id, type, sizeof type);
        snprintf(file, sizeof file, "%s.forest4.json", type);
        if (!trn_lvl_join(path, sizeof path, dir, file)) {
            st = TRN_ERR_LIMIT;
            break;
        }
        if (kind == KIND_FOREST) {
            st = write_items(ws, path, type, inst, r, opt, &per_rule[r], err);
            continue;
        }
        /* An older export wrote this rule's instances as shapeless items: they go. */
        bool placed = false;
        for (size_t k = 0; k < inst->count && !placed; k++)
            placed = inst->items[k].rule == r;
        if (placed && access(path, F_OK) == 0) {
            st = trn_write_set_remove(ws, path, err);
            res->stale_removed += st == TRN_OK;
        }
    }
    if (!st && use_v2) st = write_v2(ws, v2, palette, inst, opt, per_rule, err);
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        res->items += per_rule[r];
        res->types += per_rule[r] > 0;
    }
    if (st == TRN_ERR_LIMIT)
        st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    if (!st && res->types) {
        res->format = use_v2 ? TRN_BEAMNG_FOREST_V2 : TRN_BEAMNG_FOREST_FOREST4;
        trn_lvl_copy(res->forest_path, sizeof res->forest_path, use_v2 ? v2 : dir);
        if (!trn_lvl_join(path, sizeof path, opt->level_dir, "art/forest/managedItemData.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
        else
            st = write_item_data(ws, path, level_name, palette, per_rule, err);
    }
    free(per_rule);
    bool any_cover = false;
    for (uint32_t r = 0; r < palette->rule_count && !any_cover; r++)
        if (kind_of(&palette->rules[r]) == KIND_COVER)
            for (size_t k = 0; k < inst->count && !any_cover; k++)
                any_cover = inst->items[k].rule == r;
    if (st || (!res->types && !any_cover)) return st;
    /* The scene objects: the Forest (the engine loads forest items only through one), its wind
     * and the GroundCovers, each added when the level has none of it. */
    char group[256], group_dir[PATH_MAX], items[PATH_MAX + 20];
    st = trn_lvl_ensure_mission_group(ws, opt->level_dir, level_name, group, sizeof group,
                                      group_dir, sizeof group_dir, NULL, err);
    if (!st && !trn_lvl_join(items, sizeof items, group_dir, "items.level.json"))
        st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    trn_lvl_scene scene;
    memset(&scene, 0, sizeof scene);
    if (!st) st = trn_lvl_scene_read(ws, opt->level_dir, &scene, err);
    if (!st && res->types && trn_lvl_scene_find(&scene, "Forest", NULL) < 0) {
        json_t *o = trn_lvl_new_object(level_name, "Forest", "theForest", group);
        st = o ? trn_lvl_items_append(ws, items, o, err) : oom(err, opt->level_dir);
        json_decref(o);
        res->forest_added = st == TRN_OK;
    }
    /* The wind and the GroundCovers go beside the level's own Forest (in its group, such as the
     * scaffold's vegetation), else into MissionGroup. */
    const ptrdiff_t f = st ? -1 : trn_lvl_scene_find(&scene, "Forest", NULL);
    const trn_lvl_object *forest = f >= 0 ? &scene.objects[f] : NULL;
    const bool beside = forest && forest->parent && forest->file < scene.file_count;
    const char *veg_parent = beside ? forest->parent : group;
    const char *veg_items = beside ? scene.files[forest->file] : items;
    if (!st && res->types && trn_lvl_scene_find(&scene, "ForestWindEmitter", NULL) < 0) {
        json_t *o = wind_object(level_name, veg_parent);
        st = o ? trn_lvl_items_append(ws, veg_items, o, err) : oom(err, opt->level_dir);
        json_decref(o);
        res->wind_added = st == TRN_OK;
    }
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        if (kind_of(&palette->rules[r]) != KIND_COVER) continue;
        char type[TRN_PALETTE_ID_MAX + 16], name[TRN_PALETTE_ID_MAX + 40];
        type_name(palette->rules[r].id, type, sizeof type);
        snprintf(name, sizeof name, "%s_groundcover", type);
        uint64_t n = 0;
        json_t *o = cover_object(level_name, name, veg_parent, palette, r, inst, opt, &n);
        if (!o) {
            st = oom(err, opt->level_dir);
            break;
        }
        if (n && trn_lvl_scene_find(&scene, "GroundCover", name) < 0) {
            st = trn_lvl_items_append(ws, veg_items, o, err);
            res->covers_added += st == TRN_OK;
        }
        json_decref(o);
        res->covers += n > 0;
        res->cover_instances += n;
    }
    trn_lvl_scene_dispose(&scene);
    return st;
}

trn_status trn_beamng_level_write_forest(const trn_palette *palette, const trn_instances *instances,
                                         const trn_beamng_forest_options *opt,
                                         trn_beamng_forest_result *result, trn_error *err)
{
    trn_beamng_forest_result local;
    trn_beamng_forest_result *res = result ? result : &local;
    memset(res, 0, sizeof *res);
    if (!palette || !instances || !opt || !opt->level_dir || !opt->level_dir[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "forest: a palette, instances and a level folder are required");
    for (size_t k = 0; k < instances->count; k++)
        if (instances->items[k].rule >= palette->rule_count)
            return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                                 "forest: instance %zu names rule %u; the palette has %u", k,
                                 instances->items[k].rule, palette->rule_count);
    char level_name[256];
    if (!trn_lvl_level_name(opt->level_dir, level_name, sizeof level_name))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, opt->level_dir, -1,
                             "cannot tell the level's name from its folder");
    trn_write_set *ws = NULL, *own = NULL;
    trn_status st = trn_write_own_begin(opt->writes, &ws, &own, err);
    if (!st) st = put_forest(ws, palette, instances, opt, level_name, res, err);
    st = trn_write_own_finish(own, st, err);
    if (st) memset(res, 0, sizeof *res);
    return st;
}

/* ==========================================================================================
 * Validation: the level's forest items, their item data and its GroundCover objects.
 * ======================================================================================== */

typedef struct item_data {
    char *name, *shape, *file;
    int line;
    bool used; /* by an item */
} item_data;

typedef struct veg_check {
    const char *level_dir;
    const trn_lvl_terrain_area *areas;
    size_t area_count;
    trn_findings *findings;
    item_data *data;
    size_t data_count, data_cap;
    uint64_t items;  /* forest items found */
    char *last_name; /* find_data's last question and answer */
    item_data *last;
    bool oom;
} veg_check;

#define VADD(c, sev, check, file, at_line, fix, ...)                                               \
    do {                                                                                           \
        if (trn_findings_add((c)->findings, sev, check, file, -1, fix, __VA_ARGS__))               \
            (c)->oom = true;                                                                       \
        else                                                                                       \
            (c)->findings->items[(c)->findings->count - 1].line = (at_line);                       \
    } while (0)

static int line_of(const char *t, size_t at)
{
    int line = 1;
    for (size_t k = 0; k < at; k++)
        line += t[k] == '\n';
    return line;
}

static void add_data(veg_check *c, const char *name, const char *shape, const char *file, int line)
{
    if (c->data_count == c->data_cap) {
        size_t cap = c->data_cap ? 2 * c->data_cap : 32;
        item_data *grown = realloc(c->data, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        c->data = grown;
        c->data_cap = cap;
    }
    item_data *d = &c->data[c->data_count];
    d->name = trn_lvl_strdup(name);
    d->shape = trn_lvl_strdup(shape ? shape : "");
    d->file = trn_lvl_strdup(file);
    d->line = line;
    d->used = false;
    if (!d->name || !d->shape || !d->file) {
        free(d->name);
        free(d->shape);
        free(d->file);
        c->oom = true;
        return;
    }
    c->data_count++;
}

static item_data *find_data(veg_check *c, const char *name)
{
    /* Items of a type come together: the last answer is usually the next. */
    if (c->last_name && strcmp(c->last_name, name) == 0) return c->last;
    item_data *found = NULL;
    for (size_t k = 0; k < c->data_count && !found; k++)
        if (trn_lvl_ieq(c->data[k].name, name)) found = &c->data[k];
    free(c->last_name);
    c->last_name = trn_lvl_strdup(name);
    c->last = found;
    return found;
}

static bool is_item_data_class(const json_t *o)
{
    const char *cls = json_string_value(json_object_get(o, "class"));
    return cls && (strcmp(cls, "TSForestItemData") == 0 || strcmp(cls, "ForestItemData") == 0);
}

static bool cs_ident_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_';
}

/* Past spaces and TorqueScript comments (// to the end of the line, slash-star to star-slash). */
static size_t cs_skip(const char *t, size_t n, size_t k)
{
    for (;;) {
        k = skip_ws(t, n, k);
        if (k + 1 < n && t[k] == '/' && t[k + 1] == '/') {
            while (k < n && t[k] != '\n')
                k++;
        } else if (k + 1 < n && t[k] == '/' && t[k + 1] == '*') {
            const char *end = memmem(t + k + 2, n - k - 2, "*" "/", 2);
            k = end ? (size_t)(end - t) + 2 : n;
        } else {
            return k;
        }
    }
}

/* The identifier at t[k] into out (cut to size); the offset past it. */
static size_t cs_ident(const char *t, size_t n, size_t k, char *out, size_t size)
{
    size_t len = 0;
    while (k < n && cs_ident_char(t[k])) {
        if (len + 1 < size) out[len++] = t[k];
        k++;
    }
    if (size) out[len] = '\0';
    return k;
}

/* A TorqueScript file of the level (the engine executes every .cs file of the level folder;
 * art/forest/managedItemData.cs is where older editors saved item data): each
 * `datablock TSForestItemData(NAME) { shapeFile = "..."; ... };` (or ForestItemData, or `new` in
 * place of `datablock`; TorqueScript ignores case). Only these declarations are read, nothing is
 * run. */
static void load_script(veg_check *c, const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, ITEM_DATA_MAX_BYTES, &data, &size, &e)) return;
    const char *t = (const char *)data;
    for (size_t k = 0; k < size && !c->oom;) {
        k = cs_skip(t, size, k);
        if (k >= size) break;
        if (t[k] == '"') {
            k = skip_string(t, size, k);
            continue;
        }
        if (!cs_ident_char(t[k])) {
            k++;
            continue;
        }
        const size_t start = k;
        char word[32], cls[32], name[TRN_PALETTE_ID_MAX + 200];
        k = cs_ident(t, size, k, word, sizeof word);
        if (strcasecmp(word, "datablock") != 0 && strcasecmp(word, "new") != 0) continue;
        k = cs_ident(t, size, cs_skip(t, size, k), cls, sizeof cls);
        if (strcasecmp(cls, "TSForestItemData") != 0 && strcasecmp(cls, "ForestItemData") != 0)
            continue;
        k = cs_skip(t, size, k);
        if (k >= size || t[k] != '(') continue;
        k = cs_ident(t, size, cs_skip(t, size, k + 1), name, sizeof name);
        if (!name[0]) continue;
        /* The body: up to the brace that closes it, strings skipped. */
        while (k < size && t[k] != '{' && t[k] != ';')
            k++;
        if (k >= size || t[k] != '{') continue;
        char shape[PATH_MAX] = "";
        int depth = 0;
        for (; k < size; k++) {
            k = cs_skip(t, size, k);
            if (k >= size) break;
            if (t[k] == '"') {
                k = skip_string(t, size, k) - 1;
                continue;
            }
            if (t[k] == '{') depth++;
            if (t[k] == '}' && --depth == 0) break;
            if (depth == 1 && cs_ident_char(t[k]) && (k == 0 || !cs_ident_char(t[k - 1]))) {
                char field[32];
                size_t v = cs_ident(t, size, k, field, sizeof field);
                if (strcasecmp(field, "shapeFile") == 0) {
                    v = cs_skip(t, size, v);
                    if (v < size && t[v] == '=') {
                        v = cs_skip(t, size, v + 1);
                        if (v < size && t[v] == '"') {
                            const size_t end = skip_string(t, size, v);
                            const size_t len = end > v + 1 ? end - v - 2 : 0;
                            if (len < sizeof shape) {
                                memcpy(shape, t + v + 1, len);
                                shape[len] = '\0';
                            }
                        }
                    }
                }
                k = v - 1;
            }
        }
        add_data(c, name, shape, path, line_of(t, start));
    }
    free(data);
}

/* A JSON datablock file: name -> {class, shapeFile, ...}. Only art/forest/managedItemData.json,
 * where the World Editor saves item data, is reported when it cannot be read (report). */
static void load_data_json(veg_check *c, const char *path, bool report)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, ITEM_DATA_MAX_BYTES, &data, &size, &e)) return;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, JSON_PRESERVE_ORDER, &je);
    if (!json_is_object(root) && !report) {
        json_decref(root);
        free(data);
        return;
    }
    if (!json_is_object(root)) {
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-data-invalid", path, root ? 1 : je.line,
             "make it one JSON object of item types (name -> {\"class\": \"TSForestItemData\", "
             "\"shapeFile\": ...}), as the World Editor saves it",
             "%s: the forest item types cannot be read (%s); every forest item of the level "
             "loses its type",
             trn_lvl_basename(path), root ? "not an object" : je.text);
        json_decref(root);
        free(data);
        return;
    }
    item_span *spans = NULL;
    size_t count = 0, close = 0;
    const char *t = (const char *)data;
    const bool have_spans = item_spans(t, size, &spans, &count, &close);
    const char *key;
    json_t *o;
    json_object_foreach(root, key, o)
    {
        if (!is_item_data_class(o)) continue;
        int line = 0;
        for (size_t m = 0; have_spans && m < count && !line; m++)
            if (strcmp(spans[m].key, key) == 0) line = line_of(t, spans[m].line_start);
        add_data(c, key, json_string_value(json_object_get(o, "shapeFile")), path, line);
    }
    item_spans_free(spans, count);
    json_decref(root);
    free(data);
}

/* Item data where the engine's level loader finds it: every JSON datablock file and every
 * TorqueScript file of the level folder (lua/ge/server/server.lua of the game loads them all),
 * art/forest/managedItemData.json first. */
static void load_item_data(veg_check *c)
{
    char managed[PATH_MAX];
    if (!trn_lvl_join(managed, sizeof managed, c->level_dir, "art/forest/managedItemData.json"))
        return;
    load_data_json(c, managed, true);
    char **paths = NULL;
    size_t count = 0;
    trn_error e;
    if (trn_lvl_datablock_files(c->level_dir, &paths, &count, &e)) {
        c->oom = c->oom || e.code == TRN_ERR_NO_MEMORY;
        return;
    }
    for (size_t k = 0; k < count && !c->oom; k++) {
        const size_t n = strlen(paths[k]);
        if (n > 3 && strcasecmp(paths[k] + n - 3, ".cs") == 0)
            load_script(c, paths[k]);
        else if (strcmp(paths[k], managed) != 0)
            load_data_json(c, paths[k], false);
    }
    trn_lvl_free_paths(paths, count);
}

/* The names ending in suffix in the level's folder sub (its path in dir), sorted; NULL when
 * there is no such folder or none (c->oom on a failed allocation). */
static char **sorted_names(veg_check *c, const char *sub, const char *suffix, char dir[PATH_MAX],
                           size_t *count)
{
    *count = 0;
    if (!trn_lvl_join(dir, PATH_MAX, c->level_dir, sub)) return NULL;
    DIR *d = opendir(dir);
    if (!d) return NULL;
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (!ends_with(de->d_name, suffix)) continue;
        char **grown = realloc(names, (n + 1) * sizeof *grown);
        if (!grown || !(grown[n] = trn_lvl_strdup(de->d_name))) {
            names = grown ? grown : names;
            c->oom = true;
            break;
        }
        names = grown;
        n++;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, cmp_strings);
    if (!n) {
        free(names);
        return NULL;
    }
    *count = n;
    return names;
}

/* Every NAME.forestbrushes4.json in art/forest: one object a line; its TSForestItemData. */
static void load_brush_data(veg_check *c)
{
    char dir[PATH_MAX];
    size_t n = 0;
    char **names = sorted_names(c, "art/forest", ".forestbrushes4.json", dir, &n);
    if (!names) return;
    for (size_t f = 0; f < n; f++) {
        char path[PATH_MAX];
        uint8_t *data = NULL;
        size_t size = 0;
        trn_error e;
        if (!trn_lvl_join(path, sizeof path, dir, names[f]) ||
            trn_file_read_all(path, ITEM_DATA_MAX_BYTES, &data, &size, &e))
            continue;
        const char *t = (const char *)data;
        int line = 1;
        for (size_t k = 0; k < size; line++) {
            size_t end = k;
            while (end < size && t[end] != '\n')
                end++;
            json_t *o = json_loadb(t + k, end - k, 0, NULL);
            const char *name = json_string_value(json_object_get(o, "name"));
            if (name && is_item_data_class(o))
                add_data(c, name, json_string_value(json_object_get(o, "shapeFile")), path, line);
            json_decref(o);
            k = end + 1;
        }
        free(data);
    }
    for (size_t f = 0; f < n; f++)
        free(names[f]);
    free(names);
}

static bool inside_terrain(const veg_check *c, double x, double y)
{
    if (!c->area_count) return true; /* nothing to compare with */
    for (size_t a = 0; a < c->area_count; a++)
        if (x >= c->areas[a].x0 && x <= c->areas[a].x1 && y >= c->areas[a].y0 &&
            y <= c->areas[a].y1)
            return true;
    return false;
}

/* Per file: what is wrong with which type, counted, with the first line. */
typedef struct type_tally {
    char *type;
    uint64_t count;
    int first_line;
} type_tally;

typedef struct file_tally {
    type_tally *unknown, *unshaped;
    size_t unknown_count, unshaped_count;
    uint64_t invalid, outside;
    int invalid_line, outside_line;
    char invalid_what[160];
} file_tally;

static void tally(veg_check *c, type_tally **list, size_t *count, const char *type, int line)
{
    for (size_t k = 0; k < *count; k++)
        if (strcmp((*list)[k].type, type) == 0) {
            (*list)[k].count++;
            return;
        }
    type_tally *grown = realloc(*list, (*count + 1) * sizeof *grown);
    if (!grown) {
        c->oom = true;
        return;
    }
    *list = grown;
    if (!(grown[*count].type = trn_lvl_strdup(type))) {
        c->oom = true;
        return;
    }
    grown[*count].count = 1;
    grown[*count].first_line = line;
    (*count)++;
}

/* One item: its type known and shaped, its position on the terrain. */
static void check_item(veg_check *c, file_tally *ft, const char *type, const json_t *pos, int line)
{
    c->items++;
    item_data *d = find_data(c, type);
    if (d) d->used = true;
    if (!d)
        tally(c, &ft->unknown, &ft->unknown_count, type, line);
    else if (!d->shape[0])
        tally(c, &ft->unshaped, &ft->unshaped_count, type, line);
    double x = 0, y = 0;
    if (json_array_size(pos) >= 2 && trn_lvl_json_get_number(json_array_get(pos, 0), &x) &&
        trn_lvl_json_get_number(json_array_get(pos, 1), &y) && !inside_terrain(c, x, y)) {
        if (!ft->outside++) ft->outside_line = line;
    }
}

static void report_tally(veg_check *c, const char *path, file_tally *ft)
{
    const char *file = trn_lvl_basename(path);
    if (ft->invalid)
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-invalid", path, ft->invalid_line,
             "give each item \"type\", \"pos\" [x, y, z], \"rotationMatrix\" (9 numbers) and "
             "\"scale\", one JSON object a line",
             "%s: %" PRIu64 " forest item(s) cannot be read (first at line %d: %s); the engine "
             "skips them",
             file, ft->invalid, ft->invalid_line, ft->invalid_what);
    for (size_t k = 0; k < ft->unknown_count; k++) {
        char fix[400];
        snprintf(fix, sizeof fix,
                 "add a TSForestItemData named \"%s\" with its shapeFile to "
                 "art/forest/managedItemData.json, or correct the items' type",
                 ft->unknown[k].type);
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-type-unknown", path, ft->unknown[k].first_line,
             fix,
             "%s: %" PRIu64 " forest item(s) of type \"%s\" (first at line %d), which no forest "
             "item data defines; the engine cannot draw them",
             file, ft->unknown[k].count, ft->unknown[k].type, ft->unknown[k].first_line);
    }
    for (size_t k = 0; k < ft->unshaped_count; k++) {
        const item_data *d = find_data(c, ft->unshaped[k].type);
        char fix[1400];
        snprintf(fix, sizeof fix,
                 "set the shapeFile of \"%s\" in %s%s%d to the tree's or rock's .dae, or "
                 "remove these items (grass and small plants belong in a GroundCover)",
                 ft->unshaped[k].type, d ? d->file : "", d && d->line ? " line " : "",
                 d ? d->line : 0);
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-no-shape", path, ft->unshaped[k].first_line, fix,
             "%s: %" PRIu64 " forest item(s) of type \"%s\" (first at line %d), whose item data "
             "has no shapeFile; they draw nothing",
             file, ft->unshaped[k].count, ft->unshaped[k].type, ft->unshaped[k].first_line);
    }
    if (ft->outside)
        VADD(c, TRN_SEVERITY_WARNING, "forest-item-outside-terrain", path, ft->outside_line,
             "move or remove the items, or check the TerrainBlock's position and squareSize",
             "%s: %" PRIu64 " forest item(s) stand outside every terrain of the level (first "
             "at line %d)",
             file, ft->outside, ft->outside_line);
    for (size_t k = 0; k < ft->unknown_count; k++)
        free(ft->unknown[k].type);
    for (size_t k = 0; k < ft->unshaped_count; k++)
        free(ft->unshaped[k].type);
    free(ft->unknown);
    free(ft->unshaped);
    memset(ft, 0, sizeof *ft);
}

static void invalid_item(file_tally *ft, int line, const char *what)
{
    if (!ft->invalid++) {
        ft->invalid_line = line;
        trn_lvl_copy(ft->invalid_what, sizeof ft->invalid_what, what);
    }
}

/* One forest/TYPE.forest4.json: one item a line. */
static void check_forest4_file(veg_check *c, const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, (size_t)1 << 31, &data, &size, &e)) {
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-invalid", path, 0, "make the file readable", "%s",
             e.message);
        return;
    }
    file_tally ft;
    memset(&ft, 0, sizeof ft);
    const char *t = (const char *)data;
    int line = 1;
    for (size_t k = 0; k < size && !c->oom; line++) {
        size_t end = k;
        while (end < size && t[end] != '\n')
            end++;
        size_t a = k;
        while (a < end && (t[a] == ' ' || t[a] == '\t' || t[a] == '\r'))
            a++;
        if (a < end) {
            json_error_t je;
            json_t *o = json_loadb(t + a, end - a, 0, &je);
            const char *type = json_string_value(json_object_get(o, "type"));
            const json_t *pos = json_object_get(o, "pos");
            if (!o)
                invalid_item(&ft, line, je.text);
            else if (!type)
                invalid_item(&ft, line, "no \"type\"");
            else if (json_array_size(pos) != 3)
                invalid_item(&ft, line, "\"pos\" is not [x, y, z]");
            else
                check_item(c, &ft, type, pos, line);
            json_decref(o);
        }
        k = end + 1;
    }
    free(data);
    report_tally(c, path, &ft);
}

static void check_forest4(veg_check *c)
{
    char dir[PATH_MAX];
    size_t n = 0;
    char **names = sorted_names(c, "forest", ".forest4.json", dir, &n);
    if (!names) return;
    for (size_t f = 0; f < n && !c->oom; f++) {
        char path[PATH_MAX];
        if (trn_lvl_join(path, sizeof path, dir, names[f])) check_forest4_file(c, path);
    }
    for (size_t f = 0; f < n; f++)
        free(names[f]);
    free(names);
}

/* NAME.forest.json ("JSON Forest Data v2"): instances {TYPE: [[x, y, z, qx, qy, qz, qw, s]]}. */
static void check_forest_v2(veg_check *c, const char *level_name)
{
    char path[PATH_MAX], file[300];
    snprintf(file, sizeof file, "%s.forest.json", level_name);
    if (!trn_lvl_join(path, sizeof path, c->level_dir, file)) return;
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, (size_t)1 << 31, &data, &size, &e)) return;
    json_error_t je;
    json_t *root = json_loadb((const char *)data, size, 0, &je);
    const json_t *all = json_object_get(root, "instances");
    if (!json_is_object(all)) {
        VADD(c, TRN_SEVERITY_ERROR, "forest-item-invalid", path, root ? 1 : je.line,
             "make it {\"header\": ..., \"instances\": {TYPE: [[x, y, z, qx, qy, qz, qw, "
             "scale], ...]}} as the engine saves it, or move the items to forest/TYPE.forest4.json "
             "files",
             "%s: the forest items cannot be read (%s)", file,
             root ? "no \"instances\" object" : je.text);
        json_decref(root);
        free(data);
        return;
    }
    file_tally ft;
    memset(&ft, 0, sizeof ft);
    const char *t = (const char *)data;
    const char *type;
    json_t *rows;
    json_object_foreach((json_t *)all, type, rows)
    {
        /* The line of the type's key (the items of a type sit together). */
        char quoted[TRN_PALETTE_ID_MAX + 300];
        snprintf(quoted, sizeof quoted, "\"%s\"", type);
        const char *at = strstr(t, quoted);
        const int line = at ? line_of(t, (size_t)(at - t)) : 0;
        size_t k;
        json_t *row;
        json_array_foreach(rows, k, row)
        {
            if (json_array_size(row) != 8) {
                invalid_item(&ft, line, "a row is not [x, y, z, qx, qy, qz, qw, scale]");
                continue;
            }
            check_item(c, &ft, type, row, line);
        }
    }
    json_decref(root);
    free(data);
    report_tally(c, path, &ft);
}

/* The shapes of the item types in use that point into this level must be there (shapes of the
 * game's own art cannot be checked from a level folder). The editor writes the game path with
 * or without its leading '/' ("levels/NAME/art/..." in levels it saved): both are checked. */
static void check_shapes(veg_check *c, const char *level_name)
{
    char prefix[300];
    snprintf(prefix, sizeof prefix, "levels/%s/", level_name);
    const size_t n = strlen(prefix);
    for (size_t k = 0; k < c->data_count && !c->oom; k++) {
        const item_data *d = &c->data[k];
        const char *rel = d->shape;
        while (*rel == '/')
            rel++;
        if (!d->used || strncasecmp(rel, prefix, n) != 0) continue;
        char disk[PATH_MAX];
        bool mismatch = false;
        trn_error e;
        trn_status st =
            trn_beamng_resolve_path(c->level_dir, d->shape, disk, sizeof disk, &mismatch, &e);
        if (st != TRN_ERR_NOT_FOUND) continue;
        char fix[PATH_MAX + 200];
        snprintf(fix, sizeof fix, "put the shape at %s, or point shapeFile at the level's shape",
                 disk);
        VADD(c, TRN_SEVERITY_WARNING, "forest-shape-missing", d->file, d->line, fix,
             "forest item type \"%s\": shapeFile \"%s\" is not in the level (looked for %s); "
             "its items draw nothing until it is",
             d->name, d->shape, disk);
    }
}

static bool terrain_has_material(const veg_check *c, const char *name)
{
    for (size_t a = 0; a < c->area_count; a++)
        for (uint32_t m = 0; m < c->areas[a].material_count; m++)
            if (trn_lvl_ieq(c->areas[a].materials[m], name)) return true;
    return false;
}

/* seen: the layers of this GroundCover already reported (one finding per object and layer). */
static void check_layer(veg_check *c, const char *path, int line, const char *cover,
                        const char *layer, const char **seen, size_t *seen_count)
{
    if (!layer || !layer[0] || !c->area_count || terrain_has_material(c, layer)) return;
    for (size_t k = 0; k < *seen_count; k++)
        if (trn_lvl_ieq(seen[k], layer)) return;
    if (*seen_count < 16) seen[(*seen_count)++] = layer;
    char fix[600];
    snprintf(fix, sizeof fix,
             "set the layer to one of the terrain's materials (terrane info on the .ter lists "
             "them), or paint a material named \"%s\" onto the terrain",
             layer);
    /* The level loads and the other types grow: a warning. Torque places a type only where the
     * terrain's material name equals its layer (groundCover.cpp), so this one grows nowhere. */
    VADD(c, TRN_SEVERITY_WARNING, "ground-cover-layer-unknown", path, line, fix,
         "GroundCover \"%s\": layer \"%s\" is no material of the level's terrain; that type "
         "grows nowhere",
         cover, layer);
}

/* Each GroundCover of the scene: its types' layers name terrain materials. */
static void check_ground_cover(veg_check *c)
{
    char **paths = NULL;
    size_t count = 0;
    trn_error e;
    if (trn_lvl_items_files(c->level_dir, &paths, &count, &e)) {
        c->oom = c->oom || e.code == TRN_ERR_NO_MEMORY;
        return;
    }
    for (size_t f = 0; f < count && !c->oom; f++) {
        uint8_t *data = NULL;
        size_t size = 0;
        if (trn_file_read_all(paths[f], (size_t)1 << 30, &data, &size, &e)) continue;
        const char *t = (const char *)data;
        int line = 1;
        for (size_t k = 0; k < size; line++) {
            size_t end = k;
            while (end < size && t[end] != '\n')
                end++;
            /* Only lines naming the class are parsed. */
            const void *hit = end - k >= 11 ? memmem(t + k, end - k, "GroundCover", 11) : NULL;
            json_t *o = hit ? json_loadb(t + k, end - k, 0, NULL) : NULL;
            const char *cls = json_string_value(json_object_get(o, "class"));
            if (cls && strcmp(cls, "GroundCover") == 0) {
                const char *name = json_string_value(json_object_get(o, "name"));
                if (!name) name = "";
                const json_t *types = json_object_get(o, "Types");
                const char *seen[16];
                size_t seen_count = 0, i;
                json_t *ty;
                json_array_foreach(types, i, ty)
                {
                    check_layer(c, paths[f], line, name,
                                json_string_value(json_object_get(ty, "layer")), seen,
                                &seen_count);
                }
                /* The older form: parallel arrays, "layer": [names]. */
                const json_t *layers = json_object_get(o, "layer");
                if (json_is_string(layers))
                    check_layer(c, paths[f], line, name, json_string_value(layers), seen,
                                &seen_count);
                json_array_foreach(layers, i, ty)
                {
                    check_layer(c, paths[f], line, name, json_string_value(ty), seen,
                                &seen_count);
                }
            }
            json_decref(o);
            k = end + 1;
        }
        free(data);
    }
    trn_lvl_free_paths(paths, count);
}

void trn_lvl_check_vegetation(const char *level_dir, const char *level_name,
                              const trn_lvl_terrain_area *areas, size_t area_count,
                              trn_findings *findings, bool *oom)
{
    veg_check c;
    memset(&c, 0, sizeof c);
    c.level_dir = level_dir;
    c.areas = areas;
    c.area_count = area_count;
    c.findings = findings;
    load_item_data(&c);
    load_brush_data(&c);
    check_forest4(&c);
    check_forest_v2(&c, level_name);
    check_shapes(&c, level_name);
    check_ground_cover(&c);
    if (c.items && !c.oom) {
        trn_lvl_scene sc;
        trn_error e;
        if (!trn_lvl_scene_read(NULL, level_dir, &sc, &e)) {
            if (trn_lvl_scene_find(&sc, "Forest", NULL) < 0) {
                char items[PATH_MAX];
                trn_lvl_join(items, sizeof items, level_dir, "main/items.level.json");
                VADD(&c, TRN_SEVERITY_WARNING, "forest-object-missing", items, 0,
                     "add {\"class\":\"Forest\",\"name\":\"theForest\"} to MissionGroup (the "
                     "World Editor's Forest tool adds it when you paint)",
                     "the level has %" PRIu64 " forest item(s) but no Forest object: the "
                     "engine loads forest items only through one",
                     c.items);
            }
            trn_lvl_scene_dispose(&sc);
        }
    }
    for (size_t k = 0; k < c.data_count; k++) {
        free(c.data[k].name);
        free(c.data[k].shape);
        free(c.data[k].file);
    }
    free(c.data);
    free(c.last_name);
    if (c.oom && oom) *oom = true;
}
