/* A growable stack of (x, z) sample pairs, the work list of scanline flood fills (internal). */
#ifndef TRN_CORE_XZ_STACK_H
#define TRN_CORE_XZ_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct trn_xz_stack {
    uint32_t *items; /* x, z, x, z, ... */
    size_t count, capacity;
} trn_xz_stack;

/* Push (x, z), growing by doubling from 512 pairs; false when out of memory (the stack kept). */
static inline bool trn_xz_push(trn_xz_stack *s, uint32_t x, uint32_t z)
{
    if (s->count + 2 > s->capacity) {
        const size_t cap = s->capacity ? s->capacity * 2 : 1024;
        uint32_t *p = (uint32_t *)realloc(s->items, cap * sizeof *p);
        if (!p) return false;
        s->items = p;
        s->capacity = cap;
    }
    s->items[s->count++] = x;
    s->items[s->count++] = z;
    return true;
}

#endif
