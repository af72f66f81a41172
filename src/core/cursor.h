/* Bounded little/big-endian read cursor over an in-memory buffer (internal). */
#ifndef TRN_CORE_CURSOR_H
#define TRN_CORE_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "terrane/core.h"

/* Every read checks the bound; a failed read leaves pos unchanged and returns false, so the
 * caller can report the section and pos as the offset of the truncation. */
typedef struct trn_cursor {
    const uint8_t *data;
    size_t size;
    size_t pos;
} trn_cursor;

static inline void trn_cursor_init(trn_cursor *c, const void *data, size_t size)
{
    c->data = (const uint8_t *)data;
    c->size = size;
    c->pos = 0;
}

static inline size_t trn_cursor_left(const trn_cursor *c)
{
    return c->size - c->pos;
}

static inline bool trn_cursor_has(const trn_cursor *c, size_t n)
{
    return n <= c->size - c->pos;
}

/* Pointer to the next n bytes and advance, or NULL when fewer are left. */
static inline const uint8_t *trn_cursor_take(trn_cursor *c, size_t n)
{
    if (!trn_cursor_has(c, n)) return NULL;
    const uint8_t *p = c->data + c->pos;
    c->pos += n;
    return p;
}

static inline bool trn_cursor_skip(trn_cursor *c, size_t n)
{
    return trn_cursor_take(c, n) != NULL;
}

static inline bool trn_cursor_u8(trn_cursor *c, uint8_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 1);
    if (!p) return false;
    *v = p[0];
    return true;
}

static inline bool trn_cursor_u16le(trn_cursor *c, uint16_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 2);
    if (!p) return false;
    *v = (uint16_t)(p[0] | (p[1] << 8));
    return true;
}

static inline bool trn_cursor_u32le(trn_cursor *c, uint32_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 4);
    if (!p) return false;
    *v = (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
    return true;
}

static inline bool trn_cursor_i16le(trn_cursor *c, int16_t *v)
{
    uint16_t u;
    if (!trn_cursor_u16le(c, &u)) return false;
    *v = (int16_t)u;
    return true;
}

static inline bool trn_cursor_i32le(trn_cursor *c, int32_t *v)
{
    uint32_t u;
    if (!trn_cursor_u32le(c, &u)) return false;
    *v = (int32_t)u;
    return true;
}

static inline bool trn_cursor_f32le(trn_cursor *c, float *v)
{
    uint32_t u;
    if (!trn_cursor_u32le(c, &u)) return false;
    memcpy(v, &u, sizeof *v);
    return true;
}

static inline bool trn_cursor_u16be(trn_cursor *c, uint16_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 2);
    if (!p) return false;
    *v = (uint16_t)((p[0] << 8) | p[1]);
    return true;
}

static inline bool trn_cursor_u32be(trn_cursor *c, uint32_t *v)
{
    const uint8_t *p = trn_cursor_take(c, 4);
    if (!p) return false;
    *v = ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
    return true;
}

#endif
