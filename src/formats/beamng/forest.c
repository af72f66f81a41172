/* BeamNG forest: scatter instances as forest item files, TSForestItemData and the Forest object. */
#define _XOPEN_SOURCE 700
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
        /* Yaw turns about BeamNG's up axis (z); the matrix is row-major, as the editor saves. */
        const double a = in->yaw * 3.14159265358979323846 / 180.0;
        const double c = cos(a), s = sin(a);
        const int n = snprintf(line, sizeof line,
                               "{\"pos\":[%.17g,%.17g,%.17g],\"rotationMatrix\":[%.17g,%.17g,0,"
                               "%.17g,%.17g,0,0,0,1],\"scale\":%.17g,\"type\":\"%s\"}\n",
                               opt->origin_x + in->x, opt->origin_y + in->z, in->y, c, -s, s, c,
                               in->scale, type);
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
                                  uint32_t *unshaped, trn_error *err)
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
        if (!per_rule[r]) continue;
        const trn_scatter_rule *rule = &palette->rules[r];
        char type[TRN_PALETTE_ID_MAX + 16];
        type_name(rule->id, type, sizeof type);
        const char *geom = rule->model ? rule->model : rule->prefab ? rule->prefab : "";
        const bool shaped = ends_with(geom, ".dae") || ends_with(geom, ".cdae");
        *unshaped += !shaped;
        json_t *o = json_object_get(root, type);
        if (!json_is_object(o)) {
            char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
            trn_beamng_persistent_id(level_name, "TSForestItemData", type, pid);
            o = json_object();
            if (!o || json_object_set_new(o, "name", json_string(type)) ||
                json_object_set_new(o, "internalName", json_string(type)) ||
                json_object_set_new(o, "class", json_string("TSForestItemData")) ||
                json_object_set_new(o, "persistentId", json_string(pid)) ||
                json_object_set_new(o, "shapeFile", json_string(shaped ? geom : "")) ||
                json_object_set(root, type, o)) {
                json_decref(o);
                st = oom(err, path);
                break;
            }
            change[r] = 1;
        } else {
            /* An existing entry keeps its settings; only an unset or our own shape is set. */
            const json_t *shape = json_object_get(o, "shapeFile");
            const char *want = shaped ? geom : "";
            if ((shaped || !json_is_string(shape)) &&
                !(json_is_string(shape) && strcmp(json_string_value(shape), want) == 0)) {
                if (json_object_set_new(o, "shapeFile", json_string(want))) {
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
        if (!text) st = oom(err, path);
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

static trn_status put_forest(trn_write_set *ws, const trn_palette *palette,
                             const trn_instances *inst, const trn_beamng_forest_options *opt,
                             const char *level_name, trn_beamng_forest_result *res, trn_error *err)
{
    uint64_t *per_rule = calloc(palette->rule_count ? palette->rule_count : 1u, sizeof *per_rule);
    if (!per_rule) return oom(err, opt->level_dir);
    trn_status st = TRN_OK;
    char path[PATH_MAX], dir[PATH_MAX];
    if (!trn_lvl_join(dir, sizeof dir, opt->level_dir, "forest")) st = TRN_ERR_LIMIT;
    for (uint32_t r = 0; r < palette->rule_count && !st; r++) {
        char type[TRN_PALETTE_ID_MAX + 16], file[TRN_PALETTE_ID_MAX + 40];
        type_name(palette->rules[r].id, type, sizeof type);
        snprintf(file, sizeof file, "%s.forest4.json", type);
        if (!trn_lvl_join(path, sizeof path, dir, file)) {
            st = TRN_ERR_LIMIT;
            break;
        }
        st = write_items(ws, path, type, inst, r, opt, &per_rule[r], err);
        res->items += per_rule[r];
        res->types += per_rule[r] > 0;
    }
    if (st == TRN_ERR_LIMIT)
        st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
    if (!st && res->types) {
        if (!trn_lvl_join(path, sizeof path, opt->level_dir, "art/forest/managedItemData.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
        else
            st = write_item_data(ws, path, level_name, palette, per_rule, &res->unshaped, err);
    }
    free(per_rule);
    if (st || !res->types) return st;
    /* The scene needs a Forest object for the engine to load the item files. */
    char group[256], group_dir[PATH_MAX], items[PATH_MAX + 20];
    st = trn_lvl_ensure_mission_group(ws, opt->level_dir, level_name, group, sizeof group,
                                      group_dir, sizeof group_dir, NULL, err);
    trn_lvl_scene scene;
    memset(&scene, 0, sizeof scene);
    if (!st) st = trn_lvl_scene_read(ws, opt->level_dir, &scene, err);
    if (!st && trn_lvl_scene_find(&scene, "Forest", NULL) < 0) {
        json_t *o = trn_lvl_new_object(level_name, "Forest", "theForest", group);
        if (!o)
            st = oom(err, opt->level_dir);
        else if (!trn_lvl_join(items, sizeof items, group_dir, "items.level.json"))
            st = trn_error_set(err, TRN_ERR_LIMIT, opt->level_dir, -1, "path too long");
        else
            st = trn_lvl_items_append(ws, items, o, err);
        json_decref(o);
        res->forest_added = st == TRN_OK;
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
