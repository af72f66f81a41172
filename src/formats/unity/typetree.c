/* Walks a Unity object's bytes by its type tree into a light value tree (arrays of numbers stay in
 * the file). */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "unity_internal.h"

#define UW_ALIGN_FLAG 0x4000u

/* Bytes of a primitive type by name; 0 when the name is not a primitive. */
static uint8_t primitive_size(const char *type)
{
    static const struct {
        const char *name;
        uint8_t size;
    } prims[] = {{"SInt8", 1},  {"UInt8", 1},          {"char", 1},
                 {"bool", 1},   {"short", 2},          {"SInt16", 2},
                 {"UInt16", 2}, {"unsigned short", 2}, {"int", 4},
                 {"SInt32", 4}, {"UInt32", 4},         {"unsigned int", 4},
                 {"float", 4},  {"Type*", 4},          {"long long", 8},
                 {"SInt64", 8}, {"UInt64", 8},         {"unsigned long long", 8},
                 {"double", 8}, {"FileSize", 8}};
    for (size_t k = 0; k < sizeof prims / sizeof prims[0]; k++)
        if (strcmp(type, prims[k].name) == 0) return prims[k].size;
    return 0;
}

typedef struct uw_walker {
    uw_object *obj;
    const trn_unity_limits *lim;
    trn_error *err;
    const char *path;
    const uint8_t *data;
    uint64_t base, pos, end; /* absolute offsets: object start, cursor, object end */
    uint32_t *subtree_end;   /* per node: index of the first node after its subtree */
} uw_walker;

static trn_status uw_truncated(uw_walker *w, uint32_t node, uint64_t need)
{
    const trn_unity_node *n = &w->obj->type->nodes[node];
    const trn_unity_object *o = w->obj->object;
    return trn_error_set(w->err, TRN_ERR_TRUNCATED, w->path, (int64_t)w->pos,
                         "object %u (%s, path id %lld): field '%s' (%s): expected %llu bytes at "
                         "offset %llu, found %llu (the object ends at offset %llu)",
                         w->obj->object_index,
                         trn_unity_class_name(o->class_id) ? trn_unity_class_name(o->class_id)
                                                           : "class",
                         (long long)o->path_id, n->name, n->type, (unsigned long long)need,
                         (unsigned long long)w->pos, (unsigned long long)(w->end - w->pos),
                         (unsigned long long)w->end);
}

static trn_status uw_new_value(uw_walker *w, uint32_t node, uint32_t *out)
{
    uw_object *obj = w->obj;
    if (obj->count >= w->lim->max_values || obj->count == UW_NONE - 1)
        return trn_error_set(w->err, TRN_ERR_LIMIT, w->path, (int64_t)w->pos,
                             "object %u: more than %llu values (the limit) while reading field "
                             "'%s'",
                             obj->object_index, (unsigned long long)w->lim->max_values,
                             obj->type->nodes[node].name);
    if (obj->count == obj->cap) {
        uint32_t cap = obj->cap ? obj->cap * 2u : 64u;
        uw_value *v = realloc(obj->values, (size_t)cap * sizeof *v);
        if (!v)
            return trn_error_set(w->err, TRN_ERR_NO_MEMORY, w->path, (int64_t)w->pos,
                                 "out of memory walking object %u", obj->object_index);
        obj->values = v;
        obj->cap = cap;
    }
    uw_value *v = &obj->values[obj->count];
    memset(v, 0, sizeof *v);
    v->node = node;
    v->first_child = UW_NONE;
    v->next_sibling = UW_NONE;
    v->offset = w->pos;
    *out = obj->count++;
    return TRN_OK;
}

static void uw_link(uw_object *obj, uint32_t parent, uint32_t *last, uint32_t child)
{
    if (*last == UW_NONE)
        obj->values[parent].first_child = child;
    else
        obj->values[*last].next_sibling = child;
    *last = child;
}

static void uw_align(uw_walker *w)
{
    uint64_t rel = w->pos - w->base;
    uint64_t pad = (4u - (rel & 3u)) & 3u;
    /* Padding at the very end may be absent; the final size check catches real shortfalls. */
    if (pad > w->end - w->pos) pad = w->end - w->pos;
    w->pos += pad;
}

static bool uw_is_array_node(const trn_unity_node *n)
{
    return (n->type_flags & 1u) || strcmp(n->type, "Array") == 0;
}

static trn_status uw_read_count(uw_walker *w, uint32_t node, uint64_t *count)
{
    if (w->end - w->pos < 4) return uw_truncated(w, node, 4);
    int32_t n = (int32_t)(uint32_t)trn_unity_load(w->data + w->pos, 4, w->obj->file->big_endian);
    if (n < 0)
        return trn_error_set(w->err, TRN_ERR_FORMAT, w->path, (int64_t)w->pos,
                             "object %u: field '%s' (%s): expected an element count of 0 or "
                             "more, found %d",
                             w->obj->object_index, w->obj->type->nodes[node].name,
                             w->obj->type->nodes[node].type, n);
    if ((uint64_t)n > w->lim->max_array_elements)
        return trn_error_set(w->err, TRN_ERR_LIMIT, w->path, (int64_t)w->pos,
                             "object %u: field '%s': %d elements exceed the limit %llu",
                             w->obj->object_index, w->obj->type->nodes[node].name, n,
                             (unsigned long long)w->lim->max_array_elements);
    w->pos += 4;
    *count = (uint64_t)n;
    return TRN_OK;
}

static trn_status uw_read(uw_walker *w, uint32_t node, uint32_t *out);

/* An array node: children "size" then the element node. */
static trn_status uw_read_array(uw_walker *w, uint32_t node, uint32_t self)
{
    const trn_unity_type *t = w->obj->type;
    uint32_t size_node = node + 1;
    uint32_t elem = size_node < w->subtree_end[node] ? w->subtree_end[size_node] : node;
    if (size_node >= w->subtree_end[node] || elem >= w->subtree_end[node])
        return trn_error_set(w->err, TRN_ERR_FORMAT, w->path, (int64_t)w->pos,
                             "object %u: array '%s' (%s) has no size and element nodes in its "
                             "type tree",
                             w->obj->object_index, t->nodes[node].name, t->nodes[node].type);
    uint64_t count;
    trn_status st = uw_read_count(w, node, &count);
    if (st) return st;
    uw_value *v = &w->obj->values[self];
    v->is_array = true;
    v->count = count;
    v->data_offset = w->pos;
    const trn_unity_node *e = &t->nodes[elem];
    uint8_t prim = w->subtree_end[elem] == elem + 1 ? primitive_size(e->type) : 0;
    if (prim) {
        v->elem_size = prim;
        uint64_t bytes = count * prim;
        if (bytes > w->end - w->pos) return uw_truncated(w, elem, bytes);
        w->pos += bytes;
        return TRN_OK;
    }
    uint32_t last = UW_NONE;
    for (uint64_t k = 0; k < count; k++) {
        uint32_t child = UW_NONE;
        if ((st = uw_read(w, elem, &child))) return st;
        uw_link(w->obj, self, &last, child);
    }
    return TRN_OK;
}

static trn_status uw_read(uw_walker *w, uint32_t node, uint32_t *out)
{
    const trn_unity_type *t = w->obj->type;
    const trn_unity_node *n = &t->nodes[node];
    uint32_t self = UW_NONE;
    trn_status st = uw_new_value(w, node, &self);
    if (st) return st;
    *out = self;
    bool leaf = w->subtree_end[node] == node + 1;
    if (leaf) {
        uint8_t size = primitive_size(n->type);
        if (!size && n->byte_size != 0)
            return trn_error_set(w->err, TRN_ERR_FORMAT, w->path, (int64_t)w->pos,
                                 "object %u: field '%s' has type '%s' with no fields, which is "
                                 "not a primitive this reader knows (%d bytes)",
                                 w->obj->object_index, n->name, n->type, n->byte_size);
        if (size > w->end - w->pos) return uw_truncated(w, node, size);
        w->pos += size;
    } else if (strcmp(n->type, "TypelessData") == 0) {
        /* Raw bytes (texture pixels): a byte count then the bytes. */
        uint64_t count;
        if ((st = uw_read_count(w, node, &count))) return st;
        if (count > w->end - w->pos) return uw_truncated(w, node, count);
        uw_value *v = &w->obj->values[self];
        v->is_array = true;
        v->count = count;
        v->data_offset = w->pos;
        v->elem_size = 1;
        w->pos += count;
    } else if (uw_is_array_node(n)) {
        if ((st = uw_read_array(w, node, self))) return st;
    } else {
        uint32_t last = UW_NONE;
        for (uint32_t c = node + 1; c < w->subtree_end[node]; c = w->subtree_end[c]) {
            uint32_t child = UW_NONE;
            if ((st = uw_read(w, c, &child))) return st;
            uw_link(w->obj, self, &last, child);
        }
    }
    if (n->meta_flag & UW_ALIGN_FLAG) uw_align(w);
    return TRN_OK;
}

void uw_dispose(uw_object *obj)
{
    if (!obj) return;
    free(obj->values);
    memset(obj, 0, sizeof *obj);
}

trn_status uw_walk(const trn_unity_file *file, uint32_t object_index,
                   const trn_unity_limits *limits, uw_object *out, trn_error *err)
{
    memset(out, 0, sizeof *out);
    trn_unity_limits defaults;
    if (!limits) {
        trn_unity_limits_default(&defaults);
        limits = &defaults;
    }
    const char *path = file->path[0] ? file->path : NULL;
    if (object_index >= file->object_count)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, path, -1, "no object %u (the file has %u)",
                             object_index, file->object_count);
    const trn_unity_object *o = &file->objects[object_index];
    if (o->type_index < 0 || (uint32_t)o->type_index >= file->type_count)
        return trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)o->offset,
                             "object %u (path id %lld) has no type tree", object_index,
                             (long long)o->path_id);
    const trn_unity_type *t = &file->types[o->type_index];
    uint32_t *ends = malloc((size_t)t->node_count * sizeof *ends);
    if (!ends) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    /* Subtree ends from the levels: a node's subtree runs until the next node at its level or
     * above. A stack of open nodes makes this one pass. */
    uint32_t stack[256];
    uint32_t depth = 0;
    for (uint32_t k = 0; k < t->node_count; k++) {
        while (depth > 0 && t->nodes[stack[depth - 1]].level >= t->nodes[k].level)
            ends[stack[--depth]] = k;
        if (depth < 256) stack[depth++] = k;
    }
    while (depth > 0)
        ends[stack[--depth]] = t->node_count;

    out->file = file;
    out->type = t;
    out->object = o;
    out->object_index = object_index;
    uw_walker w;
    w.obj = out;
    w.lim = limits;
    w.err = err;
    w.path = path;
    w.data = file->data;
    w.base = o->offset;
    w.pos = o->offset;
    w.end = o->offset + o->size;
    w.subtree_end = ends;
    uint32_t root = UW_NONE;
    trn_status st = uw_read(&w, 0, &root);
    free(ends);
    if (st == TRN_OK && w.pos != w.end)
        st = trn_error_set(err, TRN_ERR_FORMAT, path, (int64_t)w.pos,
                           "object %u (%s, path id %lld): its type tree covers %llu bytes but "
                           "the object has %u: the tree does not describe the data",
                           object_index,
                           trn_unity_class_name(o->class_id) ? trn_unity_class_name(o->class_id)
                                                             : "class",
                           (long long)o->path_id, (unsigned long long)(w.pos - w.base), o->size);
    if (st) uw_dispose(out);
    return st;
}

uint32_t uw_child(const uw_object *obj, uint32_t v, const char *name)
{
    if (v == UW_NONE) return UW_NONE;
    for (uint32_t c = obj->values[v].first_child; c != UW_NONE; c = obj->values[c].next_sibling)
        if (strcmp(obj->type->nodes[obj->values[c].node].name, name) == 0) return c;
    return UW_NONE;
}

uint32_t uw_array(const uw_object *obj, uint32_t v)
{
    if (v == UW_NONE) return UW_NONE;
    if (obj->values[v].is_array) return v;
    uint32_t c = obj->values[v].first_child;
    if (c != UW_NONE && obj->values[c].is_array && obj->values[c].next_sibling == UW_NONE) return c;
    return UW_NONE;
}

const char *uw_type(const uw_object *obj, uint32_t v)
{
    return obj->type->nodes[obj->values[v].node].type;
}

const char *uw_name(const uw_object *obj, uint32_t v)
{
    return obj->type->nodes[obj->values[v].node].name;
}

bool uw_int(const uw_object *obj, uint32_t v, int64_t *out)
{
    if (v == UW_NONE) return false;
    const char *type = uw_type(obj, v);
    uint8_t size = primitive_size(type);
    if (!size || strcmp(type, "float") == 0 || strcmp(type, "double") == 0) return false;
    uint64_t raw =
        trn_unity_load(obj->file->data + obj->values[v].offset, size, obj->file->big_endian);
    bool is_signed = strncmp(type, "SInt", 4) == 0 || strcmp(type, "int") == 0 ||
                     strcmp(type, "short") == 0 || strcmp(type, "long long") == 0;
    if (is_signed && size < 8 && (raw >> (size * 8u - 1u)) & 1u) raw |= ~(uint64_t)0 << (size * 8u);
    *out = (int64_t)raw;
    return true;
}

bool uw_float(const uw_object *obj, uint32_t v, double *out)
{
    if (v == UW_NONE) return false;
    const char *type = uw_type(obj, v);
    const uint8_t *p = obj->file->data + obj->values[v].offset;
    if (strcmp(type, "float") == 0) {
        uint32_t u = (uint32_t)trn_unity_load(p, 4, obj->file->big_endian);
        float f;
        memcpy(&f, &u, sizeof f);
        *out = f;
        return true;
    }
    if (strcmp(type, "double") == 0) {
        uint64_t u = trn_unity_load(p, 8, obj->file->big_endian);
        double d;
        memcpy(&d, &u, sizeof d);
        *out = d;
        return true;
    }
    int64_t i;
    if (!uw_int(obj, v, &i)) return false;
    *out = (double)i;
    return true;
}

bool uw_string(const uw_object *obj, uint32_t v, char *buf, size_t size)
{
    uint32_t a = uw_array(obj, v);
    if (a == UW_NONE || obj->values[a].elem_size != 1 || size == 0) return false;
    uint64_t n = obj->values[a].count;
    if (n >= size) n = size - 1;
    memcpy(buf, obj->file->data + obj->values[a].data_offset, (size_t)n);
    buf[n] = '\0';
    return true;
}

bool uw_pptr(const uw_object *obj, uint32_t v, trn_unity_pptr *out)
{
    int64_t file_id, path_id;
    if (!uw_int(obj, uw_child(obj, v, "m_FileID"), &file_id) ||
        !uw_int(obj, uw_child(obj, v, "m_PathID"), &path_id))
        return false;
    out->file_id = (int32_t)file_id;
    out->path_id = path_id;
    return true;
}
