/* Unity SerializedFile reader: header, metadata (types with their trees), object table, externals.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/fileio.h"
#include "unity_internal.h"

#define SF_MIN_VERSION 9u
#define SF_MAX_VERSION 50u
#define SF_FIRST_BLOB_VERSION 12u /* type trees as node array + string buffer (and 10) */

void trn_unity_limits_default(trn_unity_limits *limits)
{
    limits->max_types = 4096u;
    limits->max_nodes = 65536u;
    limits->max_string_buffer = 1u << 20;
    limits->max_objects = 1u << 20;
    limits->max_externals = 65536u;
    limits->max_depth = 64u;
    limits->max_array_elements = (uint64_t)1 << 28;
    limits->max_values = (uint64_t)1 << 22;
    limits->max_resolution = 8193u;
    limits->max_samples = TRN_UNITY_DEFAULT_MAX_SAMPLES;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)trn_unity_load(p, 4, true);
}

bool trn_unity_sniff(const uint8_t *data, size_t size)
{
    if (!data || size < 21) return false;
    uint32_t version = be32(data + 8);
    if (version < SF_MIN_VERSION || version > SF_MAX_VERSION) return false;
    if (data[16] > 1 || data[17] || data[18] || data[19]) return false;
    size_t text_at;
    if (version >= 22) {
        if (size < 49) return false;
        uint64_t file_size = trn_unity_load(data + 24, 8, true);
        uint64_t data_offset = trn_unity_load(data + 32, 8, true);
        if (file_size == 0 || data_offset > file_size) return false;
        text_at = 48;
    } else {
        uint32_t metadata_size = be32(data), file_size = be32(data + 4);
        uint32_t data_offset = be32(data + 12);
        if (metadata_size == 0 || data_offset > file_size || metadata_size > file_size)
            return false;
        text_at = 20;
    }
    return data[text_at] >= '0' && data[text_at] <= '9';
}

const char *trn_unity_class_name(int32_t class_id)
{
    switch (class_id) {
    case 1:
        return "GameObject";
    case 4:
        return "Transform";
    case 21:
        return "Material";
    case 28:
        return "Texture2D";
    case 48:
        return "Shader";
    case 114:
        return "MonoBehaviour";
    case 115:
        return "MonoScript";
    case 156:
        return "TerrainData";
    case 218:
        return "Terrain";
    case 1153:
        return "TerrainLayer";
    default:
        return NULL;
    }
}

/* Metadata reader: a bounded cursor plus the file's byte order. */
typedef struct sf_reader {
    trn_cursor c;
    bool be;
    const char *path;
    trn_error *err;
    const trn_unity_limits *lim;
    uint32_t version;
} sf_reader;

static trn_status sf_truncated(sf_reader *r, const char *what, size_t need)
{
    return trn_error_set(r->err, TRN_ERR_TRUNCATED, r->path, (int64_t)r->c.pos,
                         "metadata: %s: expected %zu bytes at offset %zu, found %zu (the "
                         "metadata ends at offset %zu)",
                         what, need, r->c.pos, trn_cursor_left(&r->c), r->c.size);
}

static bool sf_take(sf_reader *r, size_t n, uint64_t *v)
{
    const uint8_t *p = trn_cursor_take(&r->c, n);
    if (!p) return false;
    *v = trn_unity_load(p, n, r->be);
    return true;
}

#define SF_READ(r, n, out, what)                                                                   \
    do {                                                                                           \
        uint64_t v_;                                                                               \
        if (!sf_take((r), (n), &v_)) return sf_truncated((r), (what), (n));                        \
        (out) = v_;                                                                                \
    } while (0)

/* A NUL-terminated string of the metadata into a malloc'd copy (or buf when given). */
static trn_status sf_cstring(sf_reader *r, const char *what, char *buf, size_t buf_size, char **out)
{
    size_t start = r->c.pos;
    const uint8_t *p = r->c.data + start;
    const void *nul = memchr(p, 0, trn_cursor_left(&r->c));
    if (!nul)
        return trn_error_set(r->err, TRN_ERR_TRUNCATED, r->path, (int64_t)start,
                             "metadata: %s: expected a NUL-terminated string at offset %zu, "
                             "found none before the metadata ends at offset %zu",
                             what, start, r->c.size);
    size_t len = (size_t)((const uint8_t *)nul - p);
    if (buf) {
        if (len >= buf_size)
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)start,
                                 "metadata: %s: expected at most %zu characters, found %zu", what,
                                 buf_size - 1, len);
        memcpy(buf, p, len);
        buf[len] = '\0';
    } else {
        char *s = malloc(len + 1);
        if (!s)
            return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, (int64_t)start,
                                 "metadata: %s: out of memory", what);
        memcpy(s, p, len);
        s[len] = '\0';
        *out = s;
    }
    r->c.pos += len + 1;
    return TRN_OK;
}

static void sf_align4(sf_reader *r)
{
    size_t pad = (4 - (r->c.pos & 3)) & 3;
    if (pad > trn_cursor_left(&r->c)) pad = trn_cursor_left(&r->c);
    r->c.pos += pad;
}

static void type_dispose(trn_unity_type *t)
{
    free(t->nodes);
    free(t->strings);
    memset(t, 0, sizeof *t);
}

/* The type tree blob: node array then string buffer. Checks levels, depth and names. */
static trn_status sf_type_tree(sf_reader *r, uint32_t type_index, trn_unity_type *t)
{
    size_t at = r->c.pos;
    uint64_t node_count, string_size;
    SF_READ(r, 4, node_count, "type tree node count");
    SF_READ(r, 4, string_size, "type tree string buffer size");
    if ((uint32_t)node_count == 0 || (uint32_t)node_count > r->lim->max_nodes)
        return trn_error_set(r->err, (uint32_t)node_count ? TRN_ERR_LIMIT : TRN_ERR_FORMAT, r->path,
                             (int64_t)at,
                             "metadata: type %u: expected 1..%u type tree nodes, found %d",
                             type_index, r->lim->max_nodes, (int32_t)node_count);
    if ((uint32_t)string_size > r->lim->max_string_buffer)
        return trn_error_set(r->err, TRN_ERR_LIMIT, r->path, (int64_t)at + 4,
                             "metadata: type %u: type tree string buffer of %u bytes exceeds "
                             "the limit of %u",
                             type_index, (uint32_t)string_size, r->lim->max_string_buffer);
    size_t node_bytes = r->version >= 19 ? 32u : 24u;
    size_t nodes_at = r->c.pos;
    size_t total = (size_t)node_count * node_bytes;
    if (!trn_cursor_has(&r->c, total)) return sf_truncated(r, "type tree nodes", total);
    if (!trn_cursor_has(&r->c, total + (size_t)string_size)) {
        r->c.pos += total;
        return sf_truncated(r, "type tree string buffer", (size_t)string_size);
    }
    t->nodes = calloc((size_t)node_count, sizeof *t->nodes);
    t->strings = malloc((size_t)string_size + 1);
    if (!t->nodes || !t->strings)
        return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, (int64_t)at,
                             "metadata: type %u: out of memory for %u nodes", type_index,
                             (uint32_t)node_count);
    const uint8_t *sbuf = r->c.data + nodes_at + total;
    memcpy(t->strings, sbuf, (size_t)string_size);
    t->strings[string_size] = '\0';
    t->node_count = (uint32_t)node_count;
    for (uint32_t k = 0; k < t->node_count; k++) {
        const uint8_t *p = r->c.data + nodes_at + (size_t)k * node_bytes;
        trn_unity_node *n = &t->nodes[k];
        n->version = (uint16_t)trn_unity_load(p, 2, r->be);
        n->level = p[2];
        n->type_flags = p[3];
        uint32_t offs[2] = {(uint32_t)trn_unity_load(p + 4, 4, r->be),
                            (uint32_t)trn_unity_load(p + 8, 4, r->be)};
        n->byte_size = (int32_t)(uint32_t)trn_unity_load(p + 12, 4, r->be);
        n->index = (int32_t)(uint32_t)trn_unity_load(p + 16, 4, r->be);
        n->meta_flag = (uint32_t)trn_unity_load(p + 20, 4, r->be);
        const char *names[2];
        for (int w = 0; w < 2; w++) {
            uint32_t o = offs[w];
            size_t field_at = nodes_at + (size_t)k * node_bytes + 4u + 4u * (size_t)w;
            if (o & 0x80000000u) {
                names[w] = trn_unity_common_string(o & 0x7fffffffu);
                if (!names[w])
                    return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)field_at,
                                         "metadata: type %u node %u: %s offset 0x%08x is not "
                                         "a string of Unity's common string table",
                                         type_index, k, w ? "name" : "type", o);
            } else {
                if (o >= (uint32_t)string_size ||
                    !memchr(t->strings + o, 0, (size_t)string_size - o))
                    return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)field_at,
                                         "metadata: type %u node %u: %s offset %u: expected a "
                                         "NUL-terminated string inside the %u-byte buffer",
                                         type_index, k, w ? "name" : "type", o,
                                         (uint32_t)string_size);
                names[w] = t->strings + o;
            }
        }
        n->type = names[0];
        n->name = names[1];
        /* The tree is depth-first: one root at level 0, each node at most one level deeper
         * than the node before it. */
        bool level_ok =
            k == 0 ? n->level == 0 : n->level >= 1 && n->level <= t->nodes[k - 1].level + 1u;
        if (!level_ok)
            return trn_error_set(r->err, TRN_ERR_FORMAT, r->path,
                                 (int64_t)(nodes_at + (size_t)k * node_bytes + 2),
                                 "metadata: type %u node %u ('%s'): level %u does not follow "
                                 "level %u of the node before (expected %s)",
                                 type_index, k, n->name, n->level, k ? t->nodes[k - 1].level : 0,
                                 k ? "1 .. previous + 1" : "0 for the root");
        if (n->level >= r->lim->max_depth)
            return trn_error_set(r->err, TRN_ERR_LIMIT, r->path,
                                 (int64_t)(nodes_at + (size_t)k * node_bytes + 2),
                                 "metadata: type %u node %u: level %u exceeds the depth limit %u",
                                 type_index, k, n->level, r->lim->max_depth);
    }
    r->c.pos = nodes_at + total + (size_t)string_size;
    return TRN_OK;
}

static trn_status sf_type(sf_reader *r, uint32_t type_index, bool tree, bool ref_type,
                          trn_unity_type *t)
{
    uint64_t v;
    SF_READ(r, 4, v, "type class id");
    t->class_id = (int32_t)(uint32_t)v;
    if (r->version >= 16) {
        SF_READ(r, 1, v, "type stripped flag");
        t->stripped = v != 0;
    }
    t->script_type_index = -1;
    if (r->version >= 17) {
        SF_READ(r, 2, v, "type script index");
        t->script_type_index = (int16_t)(uint16_t)v;
    }
    if (r->version >= 13) {
        bool script = ref_type || (r->version < 16 ? t->class_id < 0 : t->class_id == 114);
        if (script) {
            const uint8_t *p = trn_cursor_take(&r->c, 16);
            if (!p) return sf_truncated(r, "type script id", 16);
            memcpy(t->script_id, p, 16);
        }
        const uint8_t *p = trn_cursor_take(&r->c, 16);
        if (!p) return sf_truncated(r, "type hash", 16);
        memcpy(t->old_type_hash, p, 16);
    }
    if (!tree) return TRN_OK;
    trn_status st = sf_type_tree(r, type_index, t);
    if (st) return st;
    if (r->version >= 21) {
        if (ref_type) {
            /* Class name, namespace and assembly of a managed reference type. */
            for (int k = 0; k < 3; k++) {
                char *s = NULL;
                if ((st = sf_cstring(r, "reference type name", NULL, 0, &s))) return st;
                free(s);
            }
        } else {
            uint64_t deps;
            size_t at = r->c.pos;
            SF_READ(r, 4, deps, "type dependency count");
            if ((uint32_t)deps > r->lim->max_types)
                return trn_error_set(r->err, TRN_ERR_LIMIT, r->path, (int64_t)at,
                                     "metadata: type %u: %u dependencies exceed the limit %u",
                                     type_index, (uint32_t)deps, r->lim->max_types);
            if (!trn_cursor_skip(&r->c, (size_t)deps * 4u))
                return sf_truncated(r, "type dependencies", (size_t)deps * 4u);
        }
    }
    return TRN_OK;
}

void trn_unity_file_dispose(trn_unity_file *file)
{
    if (!file) return;
    for (uint32_t k = 0; k < file->type_count; k++)
        type_dispose(&file->types[k]);
    free(file->types);
    free(file->objects);
    for (uint32_t k = 0; k < file->external_count; k++)
        free(file->externals[k].path);
    free(file->externals);
    if (file->storage_) {
        trn_mapped_file_close((trn_mapped_file *)file->storage_);
        free(file->storage_);
    }
    memset(file, 0, sizeof *file);
}

static trn_status sf_count(sf_reader *r, const char *what, uint32_t max, uint32_t *out)
{
    size_t at = r->c.pos;
    uint64_t v;
    SF_READ(r, 4, v, what);
    int32_t n = (int32_t)(uint32_t)v;
    if (n < 0)
        return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)at,
                             "metadata: %s: expected a count of 0 or more, found %d", what, n);
    if ((uint32_t)n > max)
        return trn_error_set(r->err, TRN_ERR_LIMIT, r->path, (int64_t)at,
                             "metadata: %s: %d exceeds the limit %u", what, n, max);
    *out = (uint32_t)n;
    return TRN_OK;
}

static trn_status sf_metadata(sf_reader *r, trn_unity_file *f)
{
    trn_status st;
    uint64_t v;
    if ((st = sf_cstring(r, "Unity version", f->unity_version, sizeof f->unity_version, NULL)))
        return st;
    SF_READ(r, 4, v, "target platform");
    f->target_platform = (int32_t)(uint32_t)v;
    f->type_tree_enabled = true;
    if (r->version >= 13) {
        SF_READ(r, 1, v, "type tree flag");
        f->type_tree_enabled = v != 0;
    }
    if (!f->type_tree_enabled)
        return trn_error_set(r->err, TRN_ERR_UNSUPPORTED, r->path, (int64_t)r->c.pos - 1,
                             "metadata: the file has no type trees (a player build's "
                             "SerializedFile): its objects cannot be walked without them; "
                             "read the asset from the project (Assets/...) instead");
    if (r->version < SF_FIRST_BLOB_VERSION && r->version != 10)
        return trn_error_set(r->err, TRN_ERR_UNSUPPORTED, r->path, 8,
                             "header: version %u stores type trees in the old recursive "
                             "layout, which this reader does not handle (versions 10 and 12.."
                             "%u are read)",
                             r->version, SF_MAX_VERSION);
    uint32_t n;
    if ((st = sf_count(r, "type count", r->lim->max_types, &n))) return st;
    f->types = calloc(n ? n : 1, sizeof *f->types);
    if (!f->types) return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, -1, "out of memory");
    for (uint32_t k = 0; k < n; k++) {
        f->type_count = k + 1;
        if ((st = sf_type(r, k, true, false, &f->types[k]))) return st;
    }
    bool big_ids = false;
    if (r->version >= 7 && r->version < 14) {
        SF_READ(r, 4, v, "big id flag");
        big_ids = v != 0;
    }
    if ((st = sf_count(r, "object count", r->lim->max_objects, &n))) return st;
    f->objects = calloc(n ? n : 1, sizeof *f->objects);
    if (!f->objects) return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, -1, "out of memory");
    for (uint32_t k = 0; k < n; k++) {
        trn_unity_object *o = &f->objects[k];
        size_t entry_at;
        if (big_ids) {
            entry_at = r->c.pos;
            SF_READ(r, 8, v, "object path id");
        } else if (r->version < 14) {
            entry_at = r->c.pos;
            SF_READ(r, 4, v, "object path id");
            v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
        } else {
            sf_align4(r);
            entry_at = r->c.pos;
            SF_READ(r, 8, v, "object path id");
        }
        o->path_id = (int64_t)v;
        uint64_t start, size, type_id;
        SF_READ(r, r->version >= 22 ? 8u : 4u, start, "object data offset");
        SF_READ(r, 4, size, "object size");
        SF_READ(r, 4, type_id, "object type");
        o->size = (uint32_t)size;
        if (r->version < 16) {
            uint64_t class_id;
            SF_READ(r, 2, class_id, "object class id");
            o->class_id = (int16_t)(uint16_t)class_id;
            o->type_index = -1;
            for (uint32_t t = 0; t < f->type_count; t++)
                if (f->types[t].class_id == (int32_t)(uint32_t)type_id) o->type_index = (int32_t)t;
        } else {
            if ((uint32_t)type_id >= f->type_count)
                return trn_error_set(r->err, TRN_ERR_FORMAT, r->path, (int64_t)r->c.pos - 4,
                                     "metadata: object %u (path id %lld): type index %d, "
                                     "expected 0..%u",
                                     k, (long long)o->path_id, (int32_t)(uint32_t)type_id,
                                     f->type_count ? f->type_count - 1 : 0);
            o->type_index = (int32_t)type_id;
            o->class_id = f->types[type_id].class_id;
        }
        if (r->version < 11) {
            if (!trn_cursor_skip(&r->c, 2)) return sf_truncated(r, "object destroyed flag", 2);
        }
        if (r->version >= 11 && r->version < 17) {
            if (!trn_cursor_skip(&r->c, 2)) return sf_truncated(r, "object script index", 2);
        }
        if (r->version == 15 || r->version == 16) {
            if (!trn_cursor_skip(&r->c, 1)) return sf_truncated(r, "object stripped flag", 1);
        }
        uint64_t abs, end;
        if (!trn_add_u64(f->data_offset, start, &abs) || !trn_add_u64(abs, o->size, &end) ||
            end > f->size)
            return trn_error_set(r->err, TRN_ERR_TRUNCATED, r->path, (int64_t)f->size,
                                 "object %u (path id %lld, table entry at offset %zu): data at "
                                 "offset %llu..%llu, but the file ends at offset %zu",
                                 k, (long long)o->path_id, entry_at,
                                 (unsigned long long)f->data_offset + start,
                                 (unsigned long long)(f->data_offset + start + o->size), f->size);
        o->offset = abs;
        f->object_count = k + 1;
    }
    if (r->version >= 11) {
        if ((st = sf_count(r, "script type count", r->lim->max_objects, &f->script_type_count)))
            return st;
        for (uint32_t k = 0; k < f->script_type_count; k++) {
            if (!trn_cursor_skip(&r->c, 4)) return sf_truncated(r, "script type file index", 4);
            if (r->version >= 14) sf_align4(r);
            size_t id = r->version >= 14 ? 8u : 4u;
            if (!trn_cursor_skip(&r->c, id)) return sf_truncated(r, "script type path id", id);
        }
    }
    if ((st = sf_count(r, "external count", r->lim->max_externals, &n))) return st;
    f->externals = calloc(n ? n : 1, sizeof *f->externals);
    if (!f->externals)
        return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->path, -1, "out of memory");
    for (uint32_t k = 0; k < n; k++) {
        trn_unity_external *x = &f->externals[k];
        f->external_count = k + 1;
        char *empty = NULL;
        if ((st = sf_cstring(r, "external (empty name)", NULL, 0, &empty))) return st;
        free(empty);
        const uint8_t *g = trn_cursor_take(&r->c, 16);
        if (!g) return sf_truncated(r, "external guid", 16);
        memcpy(x->guid, g, 16);
        SF_READ(r, 4, v, "external type");
        x->type = (int32_t)(uint32_t)v;
        if ((st = sf_cstring(r, "external path", NULL, 0, &x->path))) return st;
    }
    if (r->version >= 20) {
        if ((st = sf_count(r, "reference type count", r->lim->max_types, &f->ref_type_count)))
            return st;
        for (uint32_t k = 0; k < f->ref_type_count; k++) {
            trn_unity_type tmp;
            memset(&tmp, 0, sizeof tmp);
            st = sf_type(r, f->type_count + k, true, true, &tmp);
            type_dispose(&tmp);
            if (st) return st;
        }
    }
    /* The user information string closes the metadata; some writers leave it out. */
    if (trn_cursor_left(&r->c) > 0) {
        char *info = NULL;
        if ((st = sf_cstring(r, "user information", NULL, 0, &info))) return st;
        free(info);
    }
    return TRN_OK;
}

trn_status trn_unity_file_parse(const uint8_t *data, size_t size, const char *path,
                                const trn_unity_limits *limits, trn_unity_file *file,
                                trn_error *err)
{
    memset(file, 0, sizeof *file);
    trn_unity_limits defaults;
    if (!limits) {
        trn_unity_limits_default(&defaults);
        limits = &defaults;
    }
    if (size < 20)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size,
                             "header: expected at least 20 bytes of SerializedFile header, "
                             "found %zu",
                             size);
    uint32_t version = be32(data + 8);
    if (version < SF_MIN_VERSION || version > SF_MAX_VERSION)
        return trn_error_set(err, TRN_ERR_VERSION, path, 8,
                             "header: expected a SerializedFile version %u..%u, found %u "
                             "(0x%08x)",
                             SF_MIN_VERSION, SF_MAX_VERSION, version, version);
    if (data[16] > 1)
        return trn_error_set(err, TRN_ERR_FORMAT, path, 16,
                             "header: expected endianness 0 (little) or 1 (big), found %u",
                             data[16]);
    uint64_t metadata_size = be32(data), file_size = be32(data + 4);
    uint64_t data_offset = be32(data + 12);
    size_t header_size = 20;
    if (version >= 22) {
        if (size < 48)
            return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size,
                                 "header: version %u needs a 48-byte header, found %zu bytes",
                                 version, size);
        metadata_size = be32(data + 20);
        file_size = trn_unity_load(data + 24, 8, true);
        data_offset = trn_unity_load(data + 32, 8, true);
        header_size = 48;
    }
    if (file_size > size)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size,
                             "header: the file should be %llu bytes, found %zu",
                             (unsigned long long)file_size, size);
    if (data_offset > file_size)
        return trn_error_set(err, TRN_ERR_FORMAT, path, version >= 22 ? 32 : 12,
                             "header: data offset %llu is beyond the file size %llu",
                             (unsigned long long)data_offset, (unsigned long long)file_size);
    if (metadata_size > size - header_size)
        return trn_error_set(err, TRN_ERR_TRUNCATED, path, (int64_t)size,
                             "header: %llu bytes of metadata from offset %zu, but the file ends "
                             "at offset %zu",
                             (unsigned long long)metadata_size, header_size, size);
    if (header_size + metadata_size > data_offset)
        return trn_error_set(err, TRN_ERR_FORMAT, path, version >= 22 ? 20 : 0,
                             "header: metadata (offset %zu, %llu bytes) overlaps the object "
                             "data at offset %llu",
                             header_size, (unsigned long long)metadata_size,
                             (unsigned long long)data_offset);
    file->version = version;
    file->big_endian = data[16] != 0;
    file->metadata_size = metadata_size;
    file->file_size = file_size;
    file->data_offset = data_offset;
    file->data = data;
    file->size = (size_t)file_size;
    if (path) snprintf(file->path, sizeof file->path, "%s", path);

    sf_reader r;
    r.c.data = data;
    r.c.size = header_size + (size_t)metadata_size;
    r.c.pos = header_size;
    r.be = file->big_endian;
    r.path = path;
    r.err = err;
    r.lim = limits;
    r.version = version;
    trn_status st = sf_metadata(&r, file);
    if (st) {
        trn_unity_file_dispose(file);
        return st;
    }
    return TRN_OK;
}

trn_status trn_unity_file_read(const char *path, const trn_unity_limits *limits,
                               trn_unity_file *file, trn_error *err)
{
    memset(file, 0, sizeof *file);
    trn_mapped_file *mf = malloc(sizeof *mf);
    if (!mf) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    trn_status st = trn_mapped_file_open(mf, path, 0, err);
    if (st) {
        free(mf);
        return st;
    }
    st = trn_unity_file_parse(mf->data, mf->size, path, limits, file, err);
    if (st) {
        trn_mapped_file_close(mf);
        free(mf);
        return st;
    }
    file->storage_ = mf;
    return TRN_OK;
}

int64_t trn_unity_file_find_object(const trn_unity_file *file, int64_t path_id)
{
    for (uint32_t k = 0; k < file->object_count; k++)
        if (file->objects[k].path_id == path_id) return (int64_t)k;
    return -1;
}
