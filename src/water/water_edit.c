/* Water Edit: remove bodies by id and patch others field by field from JSON parameters. */
#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_fields.h"
#include "core/json_pos.h"
#include "terrane/water.h"
#include "water/water_edit.h"

/* Kinds a field applies to, as a bit mask of 1 << trn_water_kind. */
#define K_LAKE (1u << TRN_WATER_LAKE)
#define K_OCEAN (1u << TRN_WATER_OCEAN)
#define K_RIVER (1u << TRN_WATER_RIVER)
#define K_ALL (K_LAKE | K_OCEAN | K_RIVER)

/* Kinds of field the body's own code reads (the shared reader reads the others). */
enum {
    F_CENTER = 1, /* [x, z] into center_x, center_z */
    F_BOUNDARY,   /* [[x, z], ...] or null */
    F_PATH,       /* [[x, y, z], ...] */
    F_STEPS,      /* integer 1..64 */
    F_LEVEL,      /* a number (a fixed level) or, for lakes, "spill" */
    F_KIND        /* not editable */
};

/* A row's tag: the kinds the field applies to, WITH_PATH for a field only given beside a
 * replacement river_path, and for a TRN_DOC_OTHER row its kind of field in the bits above. */
#define WITH_PATH 0x80u
#define KINDS(tag) ((tag) & K_ALL)
#define OWN(tag) ((tag) >> 8)

#define NUMBER(key, kinds, member)                                                                 \
    {.name = (key), .type = TRN_DOC_NUMBER,                                                        \
     .range = {-HUGE_VAL, HUGE_VAL, TRN_DOC_KINDS, "a number"},                                    \
     .offset = offsetof(trn_water_body, member), .tag = (kinds)}
#define LOOK(member) (offsetof(trn_water_body, look) + offsetof(trn_water_look, member))
#define LOOK_NUMBER(key, member)                                                                   \
    {.name = (key), .type = TRN_DOC_NUMBER,                                                        \
     .range = {-HUGE_VAL, HUGE_VAL, TRN_DOC_KINDS, "a number"}, .offset = LOOK(member),           \
     .tag = K_ALL}
#define LOOK_VECTOR(key, expect, member)                                                           \
    {.name = (key), .type = TRN_DOC_NUMBERS,                                                       \
     .range = {-HUGE_VAL, HUGE_VAL, TRN_DOC_KINDS, (expect)}, .offset = LOOK(member),             \
     .len = (uint32_t)(sizeof(((trn_water_look *)0)->member) / sizeof(double)), .tag = K_ALL}
#define WORD(key, words, expect, member, tag_)                                                      \
    {.name = (key), .type = TRN_DOC_WORD, .range = {0, 0, TRN_DOC_KINDS, (expect)},               \
     .offset = offsetof(trn_water_body, member), .schemes = (words), .tag = (tag_)}
#define OWN_ROW(key, kinds, own) {.name = (key), .type = TRN_DOC_OTHER, .tag = (kinds) | ((own) << 8)}

/* In the enums' order. */
static const char *const interpolations[] = {"linear", "catmull_rom", NULL};
static const char *const surfaces[] = {"level", "follow_bed", NULL};

/* Every Water Body parameter, named as the node names them: one row each, the shared reader's
 * (src/core/json_fields.h). */
static const trn_doc_field fields[] = {
    OWN_ROW("kind", K_ALL, F_KIND),
    OWN_ROW("level", K_ALL, F_LEVEL),
    NUMBER("spill_offset", K_LAKE, spill_offset),
    OWN_ROW("center", K_LAKE, F_CENTER),
    NUMBER("radius", K_LAKE, radius),
    OWN_ROW("boundary", K_LAKE | K_OCEAN, F_BOUNDARY),
    NUMBER("carve_depth", K_LAKE | K_OCEAN, carve_depth),
    OWN_ROW("river_path", K_RIVER, F_PATH),
    WORD("river_path_interpolation", interpolations, "\"linear\" or \"catmull_rom\"",
         interpolation, K_RIVER | WITH_PATH),
    OWN_ROW("river_curve_steps", K_RIVER | WITH_PATH, F_STEPS),
    WORD("river_surface_mode", surfaces, "\"level\" or \"follow_bed\"", surface_mode, K_RIVER),
    NUMBER("river_depth", K_RIVER, river_depth),
    NUMBER("width", K_RIVER, width),
    LOOK_VECTOR("shallow_color", "[r, g, b, a]", shallow_color),
    LOOK_VECTOR("deep_color", "[r, g, b, a]", deep_color),
    LOOK_NUMBER("absorption_distance", absorption_distance),
    LOOK_NUMBER("roughness", roughness),
    LOOK_NUMBER("flow_speed", flow_speed),
    LOOK_VECTOR("flow_direction", "[x, z]", flow_direction),
    LOOK_NUMBER("wave_amplitude", wave_amplitude),
    LOOK_NUMBER("wave_length", wave_length),
    LOOK_NUMBER("wave_speed", wave_speed),
    LOOK_NUMBER("normal_strength", normal_strength),
    LOOK_NUMBER("foam_width", foam_width),
    LOOK_NUMBER("foam_strength", foam_strength),
    LOOK_VECTOR("foam_color", "[r, g, b, a]", foam_color),
    TRN_DOC_END_ROW};

#undef NUMBER
#undef LOOK
#undef LOOK_NUMBER
#undef LOOK_VECTOR
#undef WORD
#undef OWN_ROW

/* The state of one edit: the parameter being read, its text (and the tree it reads as, when the
 * caller kept one) and where errors go. */
typedef struct edit {
    const char *param; /* "excluded_ids" or "overrides" */
    const char *text;
    const json_t *tree;
    trn_json_path path; /* inside the parameter */
    char *where;
    size_t where_size;
    trn_error *err;
} edit;

static const char *json_kind(const json_t *v)
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
        return "true";
    case JSON_FALSE:
        return "false";
    case JSON_NULL:
        return "null";
    }
    return "a value";
}

static const char *kind_plural(trn_water_kind kind)
{
    return kind == TRN_WATER_RIVER ? "rivers" : kind == TRN_WATER_OCEAN ? "oceans" : "lakes";
}

/* "rivers", "lakes and oceans", ... for a kinds mask. */
static void kinds_text(unsigned kinds, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t at = 0;
    unsigned left = kinds;
    for (int k = TRN_WATER_LAKE; k <= TRN_WATER_RIVER; k++) {
        if (!(kinds & (1u << k))) continue;
        left &= ~(1u << k);
        const char *sep = at == 0 ? "" : left ? ", " : " and ";
        int n = snprintf(buf + at, size - at, "%s%s", sep, kind_plural((trn_water_kind)k));
        if (n < 0 || (size_t)n >= size - at) return;
        at += (size_t)n;
    }
}

/* Fail with TRN_ERR_VALIDATION (or code) at the current path: *where gets
 * "param[i].field", the message "water edit: param[i].field: ..." and the error the line and
 * column of the value in the parameter's text. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static trn_status
fail(edit *e, trn_status code, const char *fmt, ...)
{
    char inner[160], where[200];
    trn_json_path_format(&e->path, inner, sizeof inner);
    snprintf(where, sizeof where, "%s%s%s", e->param,
             e->path.depth && e->path.steps[0].key ? "." : "", inner);
    if (e->where && e->where_size) snprintf(e->where, e->where_size, "%s", where);
    char message[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    trn_error_set(e->err, code, NULL, -1, "water edit: %s: %s", where, message);
    trn_json_pos pos;
    if (e->text) {
        trn_json_locate(e->text, strlen(e->text), e->path.steps, e->path.depth, TRN_JSON_VALUE,
                        &pos);
        trn_error_set_position(e->err, pos.line, pos.column);
    }
    return code;
}

/* key (the path at it) is not a Water Body field: the documents' unknown-key form, "water
 * edit: unknown key 'K' in overrides[i]; did you mean ...?", at the key's line and column. */
static trn_status unknown_field(edit *e, const char *key)
{
    const char *known[65];
    trn_doc_field_names(fields, known);
    char inner[160], place[200], where[240], message[400];
    trn_json_path_format(&e->path, inner, sizeof inner);
    snprintf(where, sizeof where, "%s%s%s", e->param, e->path.steps[0].key ? "." : "", inner);
    if (e->where && e->where_size) snprintf(e->where, e->where_size, "%s", where);
    trn_json_path_pop(&e->path);
    trn_json_path_format(&e->path, inner, sizeof inner);
    snprintf(place, sizeof place, "%s%s", e->param, inner);
    trn_json_path_push_key(&e->path, key);
    trn_doc_unknown_key_text(message, sizeof message, key, place, known, NULL);
    trn_error_set(e->err, TRN_ERR_VALIDATION, NULL, -1, "water edit: %s", message);
    trn_json_pos pos;
    if (e->text) {
        trn_json_locate(e->text, strlen(e->text), e->path.steps, e->path.depth, TRN_JSON_KEY, &pos);
        trn_error_set_position(e->err, pos.line, pos.column);
    }
    return TRN_ERR_VALIDATION;
}

/* One parameter as an array: the kept tree, else its text read (NULL or blank text, and the
 * default's "[]", are an empty array without reading). */
static trn_status load_array(edit *e, json_t **out)
{
    *out = NULL;
    if (e->tree) {
        if (!json_is_array(e->tree))
            return fail(e, TRN_ERR_VALIDATION, "expected an array, found %s", json_kind(e->tree));
        *out = json_incref((json_t *)e->tree);
        return TRN_OK;
    }
    const char *p = e->text;
    while (p && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    if (!p || !*p || strcmp(p, "[]") == 0) {
        *out = json_array();
        return *out ? TRN_OK
                    : trn_error_set(e->err, TRN_ERR_NO_MEMORY, NULL, -1,
                                    "water edit: out of memory");
    }
    json_error_t je;
    trn_json_parse_counted();
    json_t *root = json_loads(e->text, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (e->where && e->where_size) snprintf(e->where, e->where_size, "%s", e->param);
        trn_error_set(e->err, TRN_ERR_JSON, NULL, -1, "water edit: %s: %s", e->param, je.text);
        trn_error_set_position(e->err, je.line, je.column);
        return TRN_ERR_JSON;
    }
    if (!json_is_array(root)) {
        trn_status st = fail(e, TRN_ERR_VALIDATION, "expected an array, found %s", json_kind(root));
        json_decref(root);
        return st;
    }
    *out = root;
    return TRN_OK;
}

/* Ids sorted for lookup; ties keep the earlier body. */
typedef struct id_entry {
    const char *id;
    uint32_t index;
} id_entry;

static int id_cmp(const void *a, const void *b)
{
    const id_entry *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    if (c) return c;
    return (x->index > y->index) - (x->index < y->index);
}

/* Index of the first body with this id, or -1. */
static int64_t find_id(const id_entry *ids, uint32_t count, const char *id)
{
    size_t lo = 0, hi = count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ids[mid].id, id) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < count && strcmp(ids[lo].id, id) == 0) return ids[lo].index;
    return -1;
}

/* Read a JSON number (the path already names it). */
static trn_status get_number(edit *e, const json_t *v, double *out)
{
    if (!json_is_number(v))
        return fail(e, TRN_ERR_VALIDATION, "expected a number, found %s", json_kind(v));
    *out = json_number_value(v);
    return TRN_OK;
}

/* Read an array of exactly n numbers; what names the form in messages ("[x, z]"). */
static trn_status get_numbers(edit *e, const json_t *v, size_t n, const char *what, double *out)
{
    if (!json_is_array(v))
        return fail(e, TRN_ERR_VALIDATION, "expected %s, found %s", what, json_kind(v));
    if (json_array_size(v) != n)
        return fail(e, TRN_ERR_VALIDATION, "expected %s (%zu numbers), found %zu value%s", what, n,
                    json_array_size(v), json_array_size(v) == 1 ? "" : "s");
    for (size_t k = 0; k < n; k++) {
        trn_json_path_push_index(&e->path, k);
        trn_status st = get_number(e, json_array_get(v, k), &out[k]);
        if (st) return st;
        trn_json_path_pop(&e->path);
    }
    return TRN_OK;
}

/* An array of [x, z] or [x, y, z] points into a new array (owned by the caller). */
static trn_status get_points(edit *e, const json_t *v, size_t dims, size_t min, size_t max,
                             const char *what, double **out, uint32_t *count)
{
    *out = NULL;
    *count = 0;
    const char *point = dims == 2 ? "[x, z]" : "[x, y, z]";
    if (!json_is_array(v))
        return fail(e, TRN_ERR_VALIDATION, "expected %s, found %s", what, json_kind(v));
    size_t n = json_array_size(v);
    if (n < min || n > max)
        return fail(e, TRN_ERR_VALIDATION, "expected %s: %zu to %zu %s points, found %zu", what,
                    min, max, point, n);
    double *pts = malloc(n * dims * sizeof *pts);
    if (!pts)
        return trn_error_set(e->err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "water edit: out of memory for %zu points", n);
    for (size_t k = 0; k < n; k++) {
        trn_json_path_push_index(&e->path, k);
        trn_status st = get_numbers(e, json_array_get(v, k), dims, point, &pts[k * dims]);
        if (st) {
            free(pts);
            return st;
        }
        trn_json_path_pop(&e->path);
    }
    *out = pts;
    *count = (uint32_t)n;
    return TRN_OK;
}

/* The shared reader's errors in the edit's frame: "water edit: overrides[i].FIELD: ...". */
static trn_status doc_fail(const trn_doc *d, trn_json_target target, const char *msg)
{
    (void)target;
    return fail(d->ctx, TRN_ERR_VALIDATION, "%s", msg);
}

/* Patch one field of body from v; the path names the field. */
static trn_status apply_field(edit *e, const trn_doc_field *f, const json_t *v,
                              trn_water_body *body)
{
    if (f->type != TRN_DOC_OTHER) {
        /* Numbers, colours and words: the shared reader's rows, in the edit's frame. */
        const trn_doc d = {NULL, 0, NULL, &e->path, e->err, doc_fail, e};
        return trn_doc_read_field(&d, f, v, body, "water edit");
    }
    trn_status st;
    switch (OWN(f->tag)) {
    case F_KIND:
        return fail(e, TRN_ERR_VALIDATION,
                    "expected no kind (a body's kind is not editable: '%s' stays a %s), "
                    "found %s",
                    body->id, trn_water_kind_name(body->kind), json_kind(v));
    case F_LEVEL: {
        if (json_is_string(v) && strcmp(json_string_value(v), "spill") == 0) {
            if (body->kind != TRN_WATER_LAKE)
                return fail(e, TRN_ERR_VALIDATION,
                            "expected a number (\"spill\" fills a lake's basin; body '%s' is "
                            "a%s %s), found \"spill\"",
                            body->id, body->kind == TRN_WATER_OCEAN ? "n" : "",
                            trn_water_kind_name(body->kind));
            body->level_mode = TRN_LAKE_LEVEL_SPILL;
            return TRN_OK;
        }
        double x = 0.0;
        if (!json_is_number(v) && body->kind == TRN_WATER_LAKE)
            return fail(e, TRN_ERR_VALIDATION, "expected a number or \"spill\", found %s",
                        json_kind(v));
        if ((st = get_number(e, v, &x))) return st;
        body->level = x;
        body->level_mode = TRN_LAKE_LEVEL_FIXED; /* a number fixes a spill lake's level */
        return TRN_OK;
    }
    case F_CENTER: {
        double xz[2] = {0.0, 0.0};
        if ((st = get_numbers(e, v, 2, "[x, z]", xz))) return st;
        body->center_x = xz[0];
        body->center_z = xz[1];
        return TRN_OK;
    }
    case F_BOUNDARY: {
        double *pts = NULL;
        uint32_t n = 0;
        if (!json_is_null(v) && (st = get_points(e, v, 2, 3, TRN_WATER_MAX_BOUNDARY,
                                                 "an array of [x, z] vertices or null", &pts, &n)))
            return st;
        free(body->boundary);
        body->boundary = pts;
        body->boundary_count = n;
        return TRN_OK;
    }
    case F_PATH: {
        double *pts = NULL;
        uint32_t n = 0;
        if ((st = get_points(e, v, 3, 2, TRN_WATER_MAX_RIVER_POINTS,
                             "an array of [x, y, z] control points", &pts, &n)))
            return st;
        free(body->control);
        body->control = pts;
        body->control_count = n;
        return TRN_OK;
    }
    case F_STEPS: {
        if (!json_is_integer(v))
            return fail(e, TRN_ERR_VALIDATION, "expected an integer 1..%u, found %s",
                        TRN_RIVER_CURVE_STEPS_MAX, json_kind(v));
        json_int_t n = json_integer_value(v);
        if (n < 1 || n > (json_int_t)TRN_RIVER_CURVE_STEPS_MAX)
            return fail(e, TRN_ERR_VALIDATION,
                        "expected an integer 1..%u, found %" JSON_INTEGER_FORMAT,
                        TRN_RIVER_CURVE_STEPS_MAX, n);
        body->curve_steps = (uint32_t)n;
        return TRN_OK;
    }
    }
    return TRN_OK;
}

/* Apply override object o (overrides[index]) to body; the path is at overrides[index]. check:
 * body is a scratch lake and only what holds for any body is checked (the fields' names and
 * values, not which kinds they apply to, nor the patched body). */
static trn_status apply_override(edit *e, const json_t *o, trn_water_body *body, bool check)
{
    const bool new_path = json_object_get(o, "river_path") != NULL;
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        if (strcmp(key, "id") == 0) continue;
        trn_json_path_push_key(&e->path, key);
        const trn_doc_field *f = trn_doc_field_find(fields, key);
        if (!f) return unknown_field(e, key);
        const bool is_kind = f->type == TRN_DOC_OTHER && OWN(f->tag) == F_KIND;
        if (check && is_kind) { /* refused by the body's kind, which is not known yet */
            trn_json_path_pop(&e->path);
            continue;
        }
        if (!check && !is_kind && !(KINDS(f->tag) & (1u << body->kind))) {
            char kinds[64];
            kinds_text(KINDS(f->tag), kinds, sizeof kinds);
            return fail(e, TRN_ERR_VALIDATION,
                        "expected a field of %s (body '%s' is a %s), found %s, which applies "
                        "to %s only",
                        kind_plural(body->kind), body->id, trn_water_kind_name(body->kind), key,
                        kinds);
        }
        if ((f->tag & WITH_PATH) && !new_path)
            return fail(e, TRN_ERR_VALIDATION,
                        "expected a replacement river_path beside %s (an edit never resamples "
                        "the existing path), found none",
                        key);
        trn_status st = apply_field(e, f, v, body);
        if (st) return st;
        trn_json_path_pop(&e->path);
    }
    if (check) return TRN_OK;
    if (new_path) {
        free(body->path);
        body->path = NULL;
        body->path_count = 0;
        trn_error inner;
        trn_error_clear(&inner);
        if (trn_water_body_sample_path(body, &inner) != TRN_OK) {
            trn_json_path_push_key(&e->path, "river_path");
            return fail(e, inner.code == TRN_OK ? TRN_ERR_VALIDATION : inner.code, "%s",
                        inner.message);
        }
    }
    const char *field = NULL;
    trn_error inner;
    trn_error_clear(&inner);
    if (trn_water_body_validate(body, &field, &inner) != TRN_OK) {
        /* Point at the field when this override set it; else at the override. */
        if (field && json_object_get(o, field)) trn_json_path_push_key(&e->path, field);
        return fail(e, TRN_ERR_VALIDATION, "%s", inner.message);
    }
    return TRN_OK;
}

/* Override o (the path at it) as an object with a string "id": *id, and the path at its id. */
static trn_status override_id(edit *e, const json_t *o, const char **id)
{
    if (!json_is_object(o))
        return fail(e, TRN_ERR_VALIDATION,
                    "expected an object {\"id\": ..., FIELD: value, ...}, found %s", json_kind(o));
    const json_t *idv = json_object_get(o, "id");
    if (!idv)
        return fail(e, TRN_ERR_VALIDATION,
                    "expected an \"id\" naming the body to patch, found none");
    trn_json_path_push_key(&e->path, "id");
    if (!json_is_string(idv))
        return fail(e, TRN_ERR_VALIDATION, "expected a body id string, found %s", json_kind(idv));
    *id = json_string_value(idv);
    return TRN_OK;
}

trn_status trn_water_edit(const trn_water_body *bodies, uint32_t count, const char *excluded_json,
                          const char *overrides_json, trn_water_body **out, uint32_t *out_count,
                          char *where, size_t where_size, trn_error *err)
{
    return trn_water_edit_read(bodies, count, excluded_json, NULL, overrides_json, NULL, out,
                               out_count, where, where_size, err);
}

trn_status trn_water_edit_read(const trn_water_body *bodies, uint32_t count,
                               const char *excluded_json, const json_t *excluded_tree,
                               const char *overrides_json, const json_t *overrides_tree,
                               trn_water_body **out, uint32_t *out_count, char *where,
                               size_t where_size, trn_error *err)
{
    if (where && where_size) where[0] = '\0';
    if ((!bodies && count) || !out || !out_count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "water edit: expected bodies and outputs, found NULL");
    *out = NULL;
    *out_count = 0;

    id_entry *ids = NULL;
    int64_t *overridden_at = NULL; /* per body: its overrides index, -1 none */
    int64_t *excluded_at = NULL;   /* per body: its excluded_ids index, -1 kept */
    uint32_t *slot = NULL;         /* per body: its index in the output */
    json_t *excluded = NULL, *overrides = NULL;
    trn_water_body *list = NULL;
    uint32_t made = 0;
    trn_status st = TRN_OK;
    if (count) {
        ids = malloc(count * sizeof *ids);
        overridden_at = malloc(count * sizeof *overridden_at);
        excluded_at = malloc(count * sizeof *excluded_at);
        slot = malloc(count * sizeof *slot);
        if (!ids || !overridden_at || !excluded_at || !slot) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "water edit: out of memory for %u bodies", count);
            goto done;
        }
        for (uint32_t k = 0; k < count; k++) {
            ids[k].id = bodies[k].id;
            ids[k].index = k;
            overridden_at[k] = -1;
            excluded_at[k] = -1;
        }
        qsort(ids, count, sizeof *ids, id_cmp);
    }

    edit ex = {.param = "excluded_ids",
               .text = excluded_json,
               .tree = excluded_tree,
               .where = where,
               .where_size = where_size,
               .err = err};
    if ((st = load_array(&ex, &excluded))) goto done;
    for (size_t k = 0; k < json_array_size(excluded); k++) {
        const json_t *v = json_array_get(excluded, k);
        trn_json_path_push_index(&ex.path, k);
        if (!json_is_string(v)) {
            st = fail(&ex, TRN_ERR_VALIDATION, "expected a body id string, found %s", json_kind(v));
            goto done;
        }
        int64_t b = find_id(ids, count, json_string_value(v));
        if (b < 0) {
            st = fail(&ex, TRN_ERR_VALIDATION,
                      "expected the id of an input water body, found \"%.128s\"",
                      json_string_value(v));
            goto done;
        }
        if (excluded_at[b] >= 0) {
            st = fail(&ex, TRN_ERR_VALIDATION,
                      "expected each id once, found \"%.128s\" again (first at "
                      "excluded_ids[%" PRId64 "])",
                      json_string_value(v), excluded_at[b]);
            goto done;
        }
        excluded_at[b] = (int64_t)k;
        trn_json_path_pop(&ex.path);
    }

    /* The survivors, in their order; edits never carve again (the input ground holds it). */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < count; k++)
        kept += excluded_at[k] < 0;
    if (kept) {
        list = calloc(kept, sizeof *list);
        if (!list) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                               "water edit: out of memory for %u bodies", kept);
            goto done;
        }
    }
    for (uint32_t k = 0; k < count; k++) {
        if (excluded_at[k] >= 0) continue;
        if ((st = trn_water_body_copy(&bodies[k], &list[made], err))) goto done;
        list[made].carve = false;
        slot[k] = made++;
    }

    edit ov = {.param = "overrides",
               .text = overrides_json,
               .tree = overrides_tree,
               .where = where,
               .where_size = where_size,
               .err = err};
    if ((st = load_array(&ov, &overrides))) goto done;
    for (size_t k = 0; k < json_array_size(overrides); k++) {
        const json_t *o = json_array_get(overrides, k);
        trn_json_path_push_index(&ov.path, k);
        const char *id = NULL;
        if ((st = override_id(&ov, o, &id))) goto done;
        int64_t b = find_id(ids, count, id);
        if (b < 0) {
            st = fail(&ov, TRN_ERR_VALIDATION,
                      "expected the id of an input water body, found \"%.128s\"", id);
            goto done;
        }
        if (overridden_at[b] >= 0) {
            st = fail(&ov, TRN_ERR_VALIDATION,
                      "expected one override per body, found \"%.128s\" again (first at "
                      "overrides[%" PRId64 "])",
                      id, overridden_at[b]);
            goto done;
        }
        if (excluded_at[b] >= 0) {
            st = fail(&ov, TRN_ERR_VALIDATION,
                      "expected a body that is not excluded, found \"%.128s\", which "
                      "excluded_ids[%" PRId64 "] removes",
                      id, excluded_at[b]);
            goto done;
        }
        overridden_at[b] = (int64_t)k;
        trn_json_path_pop(&ov.path);
        if ((st = apply_override(&ov, o, &list[slot[b]], false))) goto done;
        trn_json_path_pop(&ov.path);
    }
    *out = list;
    *out_count = made;
    list = NULL;
    made = 0;

done:
    trn_water_bodies_free(list, made);
    json_decref(excluded);
    json_decref(overrides);
    free(ids);
    free(overridden_at);
    free(excluded_at);
    free(slot);
    return st;
}

trn_status trn_water_edit_check(const char *excluded_json, const char *overrides_json, char *where,
                                size_t where_size, trn_error *err)
{
    return trn_water_edit_check_read(excluded_json, NULL, overrides_json, NULL, where, where_size,
                                     err);
}

trn_status trn_water_edit_check_read(const char *excluded_json, const json_t *excluded_tree,
                                     const char *overrides_json, const json_t *overrides_tree,
                                     char *where, size_t where_size, trn_error *err)
{
    if (where && where_size) where[0] = '\0';
    json_t *excluded = NULL, *overrides = NULL;
    edit ex = {.param = "excluded_ids",
               .text = excluded_json,
               .tree = excluded_tree,
               .where = where,
               .where_size = where_size,
               .err = err};
    trn_status st = load_array(&ex, &excluded);
    for (size_t k = 0; !st && k < json_array_size(excluded); k++) {
        trn_json_path_push_index(&ex.path, k);
        const json_t *v = json_array_get(excluded, k);
        if (!json_is_string(v))
            st = fail(&ex, TRN_ERR_VALIDATION, "expected a body id string, found %s", json_kind(v));
        trn_json_path_pop(&ex.path);
    }
    edit ov = {.param = "overrides",
               .text = overrides_json,
               .tree = overrides_tree,
               .where = where,
               .where_size = where_size,
               .err = err};
    if (!st) st = load_array(&ov, &overrides);
    for (size_t k = 0; !st && k < json_array_size(overrides); k++) {
        const json_t *o = json_array_get(overrides, k);
        trn_json_path_push_index(&ov.path, k);
        const char *id = NULL;
        if ((st = override_id(&ov, o, &id))) break;
        (void)id; /* which body it names is known when the node runs */
        trn_json_path_pop(&ov.path); /* back at overrides[k] */
        trn_water_body scratch;
        memset(&scratch, 0, sizeof scratch);
        scratch.kind = TRN_WATER_LAKE; /* takes a level of "spill" as well as a number */
        st = apply_override(&ov, o, &scratch, true);
        trn_water_body_dispose(&scratch);
        trn_json_path_pop(&ov.path);
    }
    json_decref(excluded);
    json_decref(overrides);
    return st;
}
