/* terrane studio: the recipe file as text: a span scanner and Save's minimal textual edit. */
#include "studio_doc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"

#define NPOS ((size_t)-1)

static bool is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *s, size_t n, size_t p)
{
    while (p < n && is_ws(s[p]))
        p++;
    return p;
}

static size_t skip_string(const char *s, size_t n, size_t p)
{
    if (p >= n || s[p] != '"') return NPOS;
    for (p++; p < n; p++) {
        if (s[p] == '\\')
            p++;
        else if (s[p] == '"')
            return p + 1;
    }
    return NPOS;
}

/* The end of the value starting at p (after whitespace), NPOS when unterminated. */
static size_t skip_value(const char *s, size_t n, size_t p)
{
    p = skip_ws(s, n, p);
    if (p >= n) return NPOS;
    if (s[p] == '"') return skip_string(s, n, p);
    if (s[p] == '{' || s[p] == '[') {
        size_t depth = 0;
        while (p < n) {
            const char c = s[p];
            if (c == '"') {
                if ((p = skip_string(s, n, p)) == NPOS) return NPOS;
                continue;
            }
            if (c == '{' || c == '[') depth++;
            if (c == '}' || c == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NPOS;
    }
    const size_t from = p;
    while (p < n && !is_ws(s[p]) && s[p] != ',' && s[p] != ']' && s[p] != '}')
        p++;
    return p > from ? p : NPOS;
}

/* One member of an object or one element of an array: [key, key_end) (quotes included; empty
 * for elements) and [value, value_end). */
typedef struct item {
    size_t key, key_end, value, value_end;
} item;

/* The items of the object or array at p ('{' or '['): at most max into out; the count, or NPOS
 * when malformed. *close receives the closing bracket's offset. */
static size_t items(const char *s, size_t n, size_t p, item *out, size_t max, size_t *close)
{
    const char open = s[p];
    const bool object = open == '{';
    size_t count = 0;
    p = skip_ws(s, n, p + 1);
    if (p < n && s[p] == (object ? '}' : ']')) {
        *close = p;
        return 0;
    }
    while (p < n) {
        item it = {p, p, p, p};
        if (object) {
            if ((it.key_end = skip_string(s, n, p)) == NPOS) return NPOS;
            p = skip_ws(s, n, it.key_end);
            if (p >= n || s[p] != ':') return NPOS;
            p = skip_ws(s, n, p + 1);
        }
        it.value = p;
        if ((it.value_end = skip_value(s, n, p)) == NPOS) return NPOS;
        if (count < max) out[count] = it;
        count++;
        p = skip_ws(s, n, it.value_end);
        if (p < n && s[p] == ',') {
            p = skip_ws(s, n, p + 1);
            continue;
        }
        if (p < n && s[p] == (object ? '}' : ']')) {
            *close = p;
            return count;
        }
        return NPOS;
    }
    return NPOS;
}

/* The member named key (plain ASCII, no escapes) among an object's items, or NULL. */
static const item *member(const char *s, const item *list, size_t count, const char *key)
{
    const size_t len = strlen(key);
    for (size_t k = 0; k < count; k++)
        if (list[k].key_end - list[k].key == len + 2 && memcmp(s + list[k].key + 1, key, len) == 0)
            return &list[k];
    return NULL;
}

/* The object member key of the object at p, as an offset (NPOS when absent). */
static size_t member_at(const char *s, size_t n, size_t p, const char *key)
{
    if (p >= n || s[p] != '{') return NPOS;
    size_t close, count = items(s, n, p, NULL, 0, &close);
    if (count == NPOS) return NPOS;
    item *list = malloc((count ? count : 1) * sizeof *list);
    if (!list) return NPOS;
    items(s, n, p, list, count, &close);
    const item *m = member(s, list, count, key);
    const size_t at = m ? m->value : NPOS;
    free(list);
    return at;
}

bool studio_doc_recipe_span(const char *text, size_t size, size_t *start, size_t *end)
{
    size_t p = skip_ws(text, size, 0);
    if (p >= size || text[p] != '{') return false;
    size_t at = member_at(text, size, p, "recipe");
    if (at == NPOS) {
        /* A scene: the one entity whose Terrain3D component holds a recipe. */
        const size_t entities = member_at(text, size, p, "entities");
        if (entities != NPOS && text[entities] == '[') {
            size_t close, count = items(text, size, entities, NULL, 0, &close);
            item *list = count != NPOS && count ? malloc(count * sizeof *list) : NULL;
            size_t found = NPOS, how_many = 0;
            if (list) items(text, size, entities, list, count, &close);
            for (size_t k = 0; list && k < count; k++) {
                const size_t comp = member_at(text, size, list[k].value, "components");
                const size_t t3 = comp == NPOS ? NPOS : member_at(text, size, comp, "Terrain3D");
                const size_t r = t3 == NPOS ? NPOS : member_at(text, size, t3, "recipe");
                if (r != NPOS && text[r] == '{') {
                    found = r;
                    how_many++;
                }
            }
            free(list);
            if (how_many != 1) return false;
            at = found;
        } else {
            at = p; /* a bare recipe */
        }
    }
    if (text[at] != '{') return false;
    const size_t e = skip_value(text, size, at);
    if (e == NPOS) return false;
    *start = at;
    *end = e;
    return true;
}

unsigned long long studio_doc_hash(const void *data, size_t size)
{
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < size; k++) {
        h ^= p[k];
        h *= 1099511628211ull;
    }
    return (unsigned long long)h;
}

/* A value on one line, as people write strokes: ", " and ": " between items, numbers as short as
 * they read back. */
static void print_line(trn_rcp_buf *b, const json_t *v)
{
    char num[40];
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        const char *key;
        json_t *val;
        bool first = true;
        trn_rcp_buf_put(b, "{", 1);
        json_object_foreach((json_t *)(uintptr_t)v, key, val)
        {
            if (!first) trn_rcp_buf_put(b, ", ", 2);
            first = false;
            json_t *k = json_string(key);
            char *ks = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
            json_decref(k);
            if (!ks) {
                b->failed = true;
                return;
            }
            trn_rcp_buf_puts(b, ks);
            free(ks);
            trn_rcp_buf_put(b, ": ", 2);
            print_line(b, val);
        }
        trn_rcp_buf_put(b, "}", 1);
        return;
    }
    case JSON_ARRAY:
        trn_rcp_buf_put(b, "[", 1);
        for (size_t k = 0; k < json_array_size(v); k++) {
            if (k) trn_rcp_buf_put(b, ", ", 2);
            print_line(b, json_array_get(v, k));
        }
        trn_rcp_buf_put(b, "]", 1);
        return;
    case JSON_REAL:
        trn_rcp_format_double(json_real_value(v), num);
        trn_rcp_buf_puts(b, num);
        return;
    default: {
        char *t = json_dumps(v, JSON_ENCODE_ANY);
        if (!t) {
            b->failed = true;
            return;
        }
        trn_rcp_buf_puts(b, t);
        free(t);
        return;
    }
    }
}

/* A stroke as people write them: its kind first, where and how strong, the points last. */
static void print_stroke(trn_rcp_buf *b, const json_t *v)
{
    static const char *const order[] = {"type",   "layer",    "biome",   "mode",
                                        "radius", "strength", "falloff", "target_height",
                                        "grid",   "center",   "points",  "samples"};
    const size_t n = sizeof order / sizeof order[0];
    if (!json_is_object(v)) {
        print_line(b, v);
        return;
    }
    json_t *sorted = json_object();
    for (size_t k = 0; sorted && k < n; k++) {
        json_t *x = json_object_get(v, order[k]);
        if (x) json_object_set(sorted, order[k], x);
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)(uintptr_t)v, key, val)
    {
        if (sorted && !json_object_get(sorted, key)) json_object_set(sorted, key, val);
    }
    print_line(b, sorted ? sorted : v);
    json_decref(sorted);
}

/* One replacement of the text: [from, to) becomes with. */
typedef struct patch {
    size_t from, to;
    char *with;
    size_t seq;
} patch;

/* In text order; at one offset an insertion (empty range) before a deletion, and otherwise in
 * the order they were made (seq), so two insertions at one place keep their order. */
static int cmp_patch(const void *a, const void *b)
{
    const patch *x = a, *y = b;
    if (x->from != y->from) return x->from < y->from ? -1 : 1;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The patches of one edit, growing. */
typedef struct patch_list {
    patch *items;
    size_t count, cap;
    bool failed;
} patch_list;

/* Take b's text as the replacement of [from, to). */
static void patch_add(patch_list *pl, size_t from, size_t to, trn_rcp_buf *b)
{
    if (!b->data) trn_rcp_buf_put(b, "", 0);
    if (b->failed || !b->data || pl->failed) {
        free(b->data);
        pl->failed = true;
        return;
    }
    if (pl->count == pl->cap) {
        const size_t cap = pl->cap ? 2 * pl->cap : 16;
        patch *grown = realloc(pl->items, cap * sizeof *grown);
        if (!grown) {
            free(b->data);
            pl->failed = true;
            return;
        }
        pl->items = grown;
        pl->cap = cap;
    }
    pl->items[pl->count] = (patch){from, to, b->data, pl->count};
    pl->count++;
}

/* The items of the object or array at p, malloc'd (*count of them); NULL when malformed. */
static item *items_of(const char *s, size_t n, size_t p, size_t *count, size_t *close)
{
    *count = items(s, n, p, NULL, 0, close);
    if (*count == NPOS) return NULL;
    item *list = malloc((*count ? *count : 1) * sizeof *list);
    if (list) items(s, n, p, list, *count, close);
    return list;
}

/* The layout before each new item of a container: what the text has before its first item when
 * that starts a line, else one space (items on one line). */
static void lead_of(const char *s, size_t open, const item *list, size_t count, bool object,
                    trn_rcp_buf *lead)
{
    if (count) {
        const size_t first = object ? list[0].key : list[0].value;
        if (memchr(s + open + 1, '\n', first - open - 1)) {
            trn_rcp_buf_put(lead, s + open + 1, first - open - 1);
            return;
        }
    }
    trn_rcp_buf_put(lead, " ", 1); /* on one line: ", " between items */
}

/* Delete the marked items of a container: each run of deleted items goes with the comma before
 * it (or, at the start, the one after it), so no two deletions touch. */
static void delete_runs(patch_list *pl, const item *list, size_t count, const bool *gone,
                        bool object)
{
    for (size_t a = 0; a < count;) {
        if (!gone[a]) {
            a++;
            continue;
        }
        size_t b = a;
        while (b + 1 < count && gone[b + 1])
            b++;
        trn_rcp_buf none = {0};
        if (a > 0)
            patch_add(pl, list[a - 1].value_end, list[b].value_end, &none);
        else if (b + 1 < count)
            patch_add(pl, object ? list[0].key : list[0].value,
                      object ? list[b + 1].key : list[b + 1].value, &none);
        else
            patch_add(pl, object ? list[0].key : list[0].value, list[b].value_end, &none);
        a = b + 1;
    }
}

static void print_line(trn_rcp_buf *b, const json_t *v);
static void diff_value(const char *s, size_t n, size_t v0, size_t v1, const json_t *fc,
                       const json_t *sc, patch_list *pl, int depth);

/* An object's changed members: changed values edited in place, new members after the last one
 * (in the file's layout), removed members deleted. Members skip[] are someone else's. */
static void diff_object(const char *s, size_t n, size_t at, const json_t *fc, const json_t *sc,
                        const char *const *skip, size_t nskip, patch_list *pl, int depth)
{
    size_t count, close;
    item *list = items_of(s, n, at, &count, &close);
    bool *gone = list ? calloc(count ? count : 1, sizeof *gone) : NULL;
    if (!gone) {
        free(list);
        pl->failed = true;
        return;
    }
    trn_rcp_buf add = {0}, lead = {0};
    lead_of(s, at, list, count, true, &lead);
    bool added = false;
    const char *key;
    json_t *sv;
    json_object_foreach((json_t *)(uintptr_t)sc, key, sv)
    {
        bool skipped = false;
        for (size_t k = 0; k < nskip; k++)
            skipped |= !strcmp(key, skip[k]);
        if (skipped) continue;
        const json_t *fv = json_object_get(fc, key);
        const item *m = member(s, list, count, key);
        if (m) {
            diff_value(s, n, m->value, m->value_end, fv, sv, pl, depth + 1);
        } else if (!fv || !json_equal((json_t *)(uintptr_t)fv, sv)) {
            if (count || added) trn_rcp_buf_put(&add, ",", 1);
            trn_rcp_buf_put(&add, lead.data, lead.len);
            json_t *k = json_string(key);
            char *ks = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
            json_decref(k);
            if (!ks) add.failed = true;
            if (ks) trn_rcp_buf_puts(&add, ks);
            free(ks);
            trn_rcp_buf_put(&add, ": ", 2);
            print_line(&add, sv);
            added = true;
        }
    }
    json_object_foreach((json_t *)(uintptr_t)fc, key, sv)
    {
        bool skipped = false;
        for (size_t k = 0; k < nskip; k++)
            skipped |= !strcmp(key, skip[k]);
        if (skipped || json_object_get(sc, key)) continue;
        const item *m = member(s, list, count, key);
        if (m) gone[m - list] = true;
    }
    delete_runs(pl, list, count, gone, true);
    if (added) {
        if (!count) {
            /* An empty object: its inside becomes the members. */
            trn_rcp_buf_put(&add, " ", 1);
            patch_add(pl, at + 1, close, &add);
        } else {
            patch_add(pl, list[count - 1].value_end, list[count - 1].value_end, &add);
        }
    } else {
        trn_rcp_buf_free(&add);
    }
    trn_rcp_buf_free(&lead);
    free(gone);
    free(list);
}

/* The "id" of an array element that is an object with one, else NULL. */
static const char *element_id(const json_t *v)
{
    return json_string_value(json_object_get(v, "id"));
}

/* An array's changes in place, when they can be told apart: elements with ids (graph nodes)
 * matched by id (edited, deleted, new ones after the one before them), else element by element
 * at one length, or elements added or removed at the end. False: replace the whole array. */
static bool diff_array(const char *s, size_t n, size_t at, const json_t *fc, const json_t *sc,
                       patch_list *pl, int depth)
{
    size_t count, close;
    item *list = items_of(s, n, at, &count, &close);
    const size_t nf = json_array_size(fc), ns = json_array_size(sc);
    if (!list || count != nf || count == 0) {
        free(list);
        return false;
    }
    bool ids = true;
    for (size_t k = 0; k < nf && ids; k++)
        ids = element_id(json_array_get(fc, k)) != NULL;
    for (size_t k = 0; k < ns && ids; k++)
        ids = element_id(json_array_get(sc, k)) != NULL;
    /* match[k]: the file's element for the session's element k, or NPOS when it is new. */
    size_t *match = malloc((ns ? ns : 1) * sizeof *match);
    bool *gone = calloc(nf, sizeof *gone);
    bool ok = match && gone;
    for (size_t k = 0; ok && k < ns; k++) {
        match[k] = NPOS;
        if (ids) {
            const char *id = element_id(json_array_get(sc, k));
            for (size_t f = 0; f < nf; f++)
                if (!strcmp(id, element_id(json_array_get(fc, f)))) match[k] = f;
        } else if (k < nf) {
            match[k] = k;
        }
    }
    /* Kept elements stay in the file's order; at least one stays. */
    size_t last = NPOS, kept = 0;
    for (size_t k = 0; ok && k < ns; k++) {
        if (match[k] == NPOS) continue;
        if (last != NPOS && match[k] <= last) ok = false;
        last = match[k];
        kept++;
    }
    if (ok && !ids && ns > nf)
        for (size_t k = 0; k < nf && ok; k++)
            ok = json_equal(json_array_get(fc, k), json_array_get(sc, k));
    ok = ok && kept > 0;
    if (ok) {
        for (size_t f = 0; f < nf; f++)
            gone[f] = true;
        for (size_t k = 0; k < ns; k++)
            if (match[k] != NPOS) gone[match[k]] = false;
        trn_rcp_buf lead = {0};
        lead_of(s, at, list, count, false, &lead);
        /* New elements after the kept one before them (or before the first kept one). */
        size_t anchor = NPOS;
        trn_rcp_buf add = {0};
        for (size_t k = 0; k <= ns; k++) {
            if (k < ns && match[k] == NPOS) {
                if (anchor != NPOS) {
                    trn_rcp_buf_put(&add, ",", 1);
                    trn_rcp_buf_put(&add, lead.data, lead.len);
                }
                print_line(&add, json_array_get(sc, k));
                if (anchor == NPOS) {
                    trn_rcp_buf_put(&add, ",", 1);
                    trn_rcp_buf_put(&add, lead.data, lead.len);
                }
                continue;
            }
            if (add.len || add.failed) {
                const size_t where = anchor == NPOS ? list[match[k]].value : list[anchor].value_end;
                patch_add(pl, where, where, &add);
                memset(&add, 0, sizeof add);
            }
            if (k == ns) break;
            diff_value(s, n, list[match[k]].value, list[match[k]].value_end,
                       json_array_get(fc, match[k]), json_array_get(sc, k), pl, depth + 1);
            anchor = match[k];
        }
        trn_rcp_buf_free(&add);
        trn_rcp_buf_free(&lead);
        delete_runs(pl, list, count, gone, false);
    }
    free(match);
    free(gone);
    free(list);
    return ok;
}

/* The value at [v0, v1) of the text, fc in the file's recipe and sc in the session's: the
 * smallest edit that makes it sc. */
static void diff_value(const char *s, size_t n, size_t v0, size_t v1, const json_t *fc,
                       const json_t *sc, patch_list *pl, int depth)
{
    if (fc && json_equal((json_t *)(uintptr_t)fc, (json_t *)(uintptr_t)sc)) return;
    if (depth < 48 && json_is_object(fc) && json_is_object(sc) && s[v0] == '{') {
        diff_object(s, n, v0, fc, sc, NULL, 0, pl, depth);
        return;
    }
    if (depth < 48 && json_is_array(fc) && json_is_array(sc) && s[v0] == '[' &&
        diff_array(s, n, v0, fc, sc, pl, depth))
        return;
    trn_rcp_buf b = {0};
    print_line(&b, sc);
    patch_add(pl, v0, v1, &b);
}

/* The whitespace run before offset p on its line (the indentation of what starts at p). */
static void indent_before(const char *s, size_t p, trn_rcp_buf *b)
{
    size_t q = p;
    while (q > 0 && (s[q - 1] == ' ' || s[q - 1] == '\t'))
        q--;
    if (q > 0 && s[q - 1] != '\n') {
        trn_rcp_buf_puts(b, ""); /* not at a line's start: no indentation */
        return;
    }
    trn_rcp_buf_put(b, s + q, p - q);
}

/* New elements of one array member: the layout between '[' and the first element (or a new
 * line one step deeper than the member) before each. */
static void put_elements(trn_rcp_buf *b, const json_t *arr, size_t from, const char *lead,
                         size_t lead_len, bool leading_comma)
{
    for (size_t k = from; k < json_array_size(arr); k++) {
        if (k > from || leading_comma) trn_rcp_buf_put(b, ",", 1);
        trn_rcp_buf_put(b, lead, lead_len);
        print_stroke(b, json_array_get(arr, k));
    }
}

char *studio_doc_minimal_edit(const char *s, size_t n, const json_t *file_canon,
                              const json_t *session_canon)
{
    static const char *const keys[] = {"layers", "edits", "regions", "exclusions"};
    size_t r0, r1;
    if (!studio_doc_recipe_span(s, n, &r0, &r1)) return NULL;
    size_t close = 0, count = items(s, n, r0, NULL, 0, &close);
    if (count == NPOS || count == 0) return NULL;
    item *list = malloc(count * sizeof *list);
    if (!list) return NULL;
    items(s, n, r0, list, count, &close);
    patch_list pl = {0};
    bool ok = true;
    for (size_t k = 0; k < 4 && ok; k++) {
        const json_t *fc = json_object_get(file_canon, keys[k]);
        const json_t *sc = json_object_get(session_canon, keys[k]);
        if (json_equal((json_t *)(uintptr_t)fc, (json_t *)(uintptr_t)sc) || (!fc && !sc)) continue;
        const bool strokes = k > 0;
        const item *m = member(s, list, count, keys[k]);
        trn_rcp_buf b = {0};
        patch p = {0, 0, NULL, 0};
        if (m) {
            trn_rcp_buf ind = {0};
            indent_before(s, m->key, &ind);
            size_t ecl = 0,
                   ecount = s[m->value] == '[' ? items(s, n, m->value, NULL, 0, &ecl) : NPOS;
            const size_t fsize = json_array_size(fc);
            if (json_is_array(sc) && ecount != NPOS && ecount == fsize) {
                item *el = malloc((ecount ? ecount : 1) * sizeof *el);
                if (!el) ok = false;
                if (el) items(s, n, m->value, el, ecount, &ecl);
                size_t same = 0;
                while (el && same < ecount && same < json_array_size(sc) &&
                       json_equal(json_array_get(fc, same), json_array_get(sc, same)))
                    same++;
                /* The layout before each element: what the file has before its first one. */
                trn_rcp_buf lead = {0};
                if (el && ecount) {
                    trn_rcp_buf_put(&lead, s + m->value + 1, el[0].value - m->value - 1);
                } else {
                    trn_rcp_buf_put(&lead, "\n", 1);
                    if (ind.len) trn_rcp_buf_put(&lead, ind.data, ind.len);
                    trn_rcp_buf_put(&lead, "  ", 2);
                }
                if (el && ecount && same > 0) {
                    /* Keep elements [0, same); replace the rest with the session's. */
                    p.from = el[same - 1].value_end;
                    p.to = el[ecount - 1].value_end;
                    put_elements(&b, sc, same, lead.data, lead.len, true);
                } else if (el && ecount) {
                    p.from = el[0].value;
                    p.to = el[ecount - 1].value_end;
                    for (size_t e = 0; e < json_array_size(sc); e++) {
                        if (e) {
                            trn_rcp_buf_put(&b, ",", 1);
                            trn_rcp_buf_put(&b, lead.data, lead.len);
                        }
                        print_stroke(&b, json_array_get(sc, e));
                    }
                } else if (el) {
                    /* An empty array in the file: its inside becomes the elements. */
                    p.from = m->value + 1;
                    p.to = ecl;
                    put_elements(&b, sc, 0, lead.data, lead.len, false);
                    trn_rcp_buf_put(&b, "\n", 1);
                    if (ind.len) trn_rcp_buf_put(&b, ind.data, ind.len);
                }
                trn_rcp_buf_free(&lead);
                free(el);
            } else if (sc || strokes) {
                p.from = m->value;
                p.to = m->value_end;
                if (sc)
                    print_line(&b, sc);
                else
                    trn_rcp_buf_put(&b, "[]", 2);
            } else {
                /* "layers" back at the defaults: the member goes. */
                const size_t at = (size_t)(m - list);
                if (at > 0) {
                    p.from = list[at - 1].value_end;
                    p.to = m->value_end;
                } else if (at + 1 < count) {
                    p.from = m->key;
                    p.to = list[at + 1].key;
                } else {
                    ok = false;
                }
                trn_rcp_buf_puts(&b, "");
            }
            trn_rcp_buf_free(&ind);
        } else if (sc) {
            /* A new member after the last one, indented as that one is. */
            const item *last = &list[count - 1];
            p.from = p.to = last->value_end;
            trn_rcp_buf ind = {0};
            indent_before(s, last->key, &ind);
            const bool multiline = ind.len > 0 || (last->key > 0 && s[last->key - 1] == '\n');
            trn_rcp_buf_put(&b, ",", 1);
            trn_rcp_buf_put(&b, multiline ? "\n" : " ", 1);
            if (ind.len) trn_rcp_buf_put(&b, ind.data, ind.len);
            trn_rcp_buf_puts(&b, "\"");
            trn_rcp_buf_puts(&b, keys[k]);
            trn_rcp_buf_puts(&b, "\": ");
            if (multiline && json_is_array(sc) && json_array_size(sc)) {
                trn_rcp_buf lead = {0};
                trn_rcp_buf_put(&lead, "\n", 1);
                if (ind.len) trn_rcp_buf_put(&lead, ind.data, ind.len);
                trn_rcp_buf_put(&lead, "  ", 2);
                trn_rcp_buf_put(&b, "[", 1);
                put_elements(&b, sc, 0, lead.data, lead.len, false);
                trn_rcp_buf_put(&b, "\n", 1);
                if (ind.len) trn_rcp_buf_put(&b, ind.data, ind.len);
                trn_rcp_buf_put(&b, "]", 1);
                trn_rcp_buf_free(&lead);
            } else {
                print_line(&b, sc);
            }
            trn_rcp_buf_free(&ind);
        } else {
            continue;
        }
        if (ok)
            patch_add(&pl, p.from, p.to, &b);
        else
            trn_rcp_buf_free(&b);
    }
    free(list);
    /* Everything else the page edits (the graph, seed, landforms, biomes, rules, water): each
     * changed value in place, down to the one parameter that changed. */
    if (ok) diff_object(s, n, r0, file_canon, session_canon, keys, 4, &pl, 0);
    ok = ok && !pl.failed;
    patch *patches = pl.items;
    const size_t np = pl.count;
    char *out = NULL;
    if (ok) {
        if (np) qsort(patches, np, sizeof patches[0], cmp_patch);
        trn_rcp_buf o = {0};
        size_t at = 0;
        for (size_t k = 0; k < np; k++) {
            if (patches[k].from < at) ok = false;
            if (!ok) break;
            trn_rcp_buf_put(&o, s + at, patches[k].from - at);
            trn_rcp_buf_puts(&o, patches[k].with);
            at = patches[k].to;
        }
        trn_rcp_buf_put(&o, s + at, n - at);
        if (ok && !o.failed)
            out = o.data;
        else
            trn_rcp_buf_free(&o);
    }
    for (size_t k = 0; k < np; k++)
        free(patches[k].with);
    free(patches);
    return out;
}
