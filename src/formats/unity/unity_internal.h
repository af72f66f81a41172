/* Unity SerializedFile internals: endian-aware reads, common strings, the type-tree value walker.
 */
#ifndef TRN_UNITY_INTERNAL_H
#define TRN_UNITY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cursor.h"
#include "terrane/unity.h"

/* Unity's common string table: the names a type tree's string offset reaches when its high bit
 * is set. Returns the string at offset, or NULL when offset is not the start of one. */
const char *trn_unity_common_string(uint32_t offset);

/* Load a value of n (1, 2, 4, 8) bytes at p in the given byte order, zero-extended. */
static inline uint64_t trn_unity_load(const uint8_t *p, size_t n, bool big_endian)
{
    uint64_t v = 0;
    if (big_endian)
        for (size_t k = 0; k < n; k++)
            v = (v << 8) | p[k];
    else
        for (size_t k = n; k-- > 0;)
            v = (v << 8) | p[k];
    return v;
}

#define UW_NONE UINT32_MAX

/* One value of a walked object. Arrays of primitives and TypelessData keep their elements in
 * the file (data_offset, count, elem_size) instead of one value per element. */
typedef struct uw_value {
    uint32_t node;         /* index into the type's nodes */
    uint32_t first_child;  /* UW_NONE when none */
    uint32_t next_sibling; /* UW_NONE when last */
    uint64_t offset;       /* absolute file offset where the value starts */
    uint64_t count;        /* arrays: elements; TypelessData: bytes */
    uint64_t data_offset;  /* arrays of primitives and TypelessData: first element */
    uint8_t elem_size;     /* arrays of primitives: bytes per element, else 0 */
    bool is_array;
} uw_value;

/* A walked object: values[0] is the root. */
typedef struct uw_object {
    const trn_unity_file *file;
    const trn_unity_type *type;
    const trn_unity_object *object;
    uint32_t object_index;
    uw_value *values;
    uint32_t count, cap;
} uw_object;

/* Walk object object_index by its type tree. Errors name the field and the byte offset. */
trn_status uw_walk(const trn_unity_file *file, uint32_t object_index,
                   const trn_unity_limits *limits, uw_object *out, trn_error *err);
void uw_dispose(uw_object *obj);

/* The child of v named name, or UW_NONE. */
uint32_t uw_child(const uw_object *obj, uint32_t v, const char *name);
/* The array inside v: v itself when it is an array, else its "Array" child; UW_NONE if none. */
uint32_t uw_array(const uw_object *obj, uint32_t v);
/* Node type and name of a value. */
const char *uw_type(const uw_object *obj, uint32_t v);
const char *uw_name(const uw_object *obj, uint32_t v);
/* Numbers: false when v is not a primitive of that kind (message in err). */
bool uw_int(const uw_object *obj, uint32_t v, int64_t *out);
bool uw_float(const uw_object *obj, uint32_t v, double *out);
/* A "string" value into buf (truncated to fit, NUL-terminated); false when not a string. */
bool uw_string(const uw_object *obj, uint32_t v, char *buf, size_t size);
/* A PPtr value (m_FileID, m_PathID). */
bool uw_pptr(const uw_object *obj, uint32_t v, trn_unity_pptr *out);

#endif
