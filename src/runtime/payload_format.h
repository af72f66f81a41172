/* The *.terrain.bin layout shared by the cook writer and the runtime reader (internal). */
#ifndef TRN_RUNTIME_PAYLOAD_FORMAT_H
#define TRN_RUNTIME_PAYLOAD_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"

/* docs/payload.md describes every byte; keep the two in step. */
static const uint8_t trn_payload_magic[8] = {'T', 'R', 'N', 'B', 'I', 'N', 0, 0};
#define TRN_PAYLOAD_FIXED_HEADER 84u /* bytes before the generator string */
#define TRN_PAYLOAD_ENTRY_SIZE 48u   /* one section table entry */
#define TRN_PAYLOAD_MAX_SECTIONS 1024u
#define TRN_PAYLOAD_FLAG_REQUIRED 1u
#define TRN_PAYLOAD_INSTANCE_SIZE 60u
#define TRN_PAYLOAD_MAX_BIOMES 255u

/* Section ids as the four ASCII bytes written. */
#define TRN_SEC_HEIGHTS "HGHT"
#define TRN_SEC_BIOMES "BIOM"
#define TRN_SEC_BIOME_MATERIALS "BMAT"
#define TRN_SEC_LEDGERS "LDGR"
#define TRN_SEC_EXCLUSION "EXCL"
#define TRN_SEC_WATER "WATR"
#define TRN_SEC_SCATTER "SCTR"
#define TRN_SEC_ROLES "ROLE"
#define TRN_SEC_MAPPING "MAPM"
#define TRN_SEC_MATERIAL_DOCS "MATD"
#define TRN_SEC_RECIPE "RCPE"
#define TRN_SEC_MANIFEST "MNFS"

/* A growable little-endian byte buffer; failed sticks after the first allocation failure. */
typedef struct trn_pbuf {
    uint8_t *data;
    size_t size, capacity;
    bool failed;
} trn_pbuf;

static inline uint8_t *trn_pbuf_room(trn_pbuf *w, size_t n)
{
    if (w->failed) return NULL;
    size_t need;
    if (!trn_add_size(w->size, n, &need)) {
        w->failed = true;
        return NULL;
    }
    if (need > w->capacity) {
        size_t cap = w->capacity ? w->capacity : 4096u;
        while (cap < need)
            cap = cap > SIZE_MAX / 2u ? need : cap * 2u;
        uint8_t *grown = (uint8_t *)realloc(w->data, cap);
        if (!grown) {
            w->failed = true;
            return NULL;
        }
        w->data = grown;
        w->capacity = cap;
    }
    uint8_t *p = w->data + w->size;
    w->size = need;
    return p;
}

static inline void trn_pbuf_bytes(trn_pbuf *w, const void *src, size_t n)
{
    uint8_t *p = trn_pbuf_room(w, n);
    if (p && n) memcpy(p, src, n);
}

static inline void trn_pbuf_u8(trn_pbuf *w, uint8_t v)
{
    trn_pbuf_bytes(w, &v, 1);
}

static inline void trn_pbuf_u16(trn_pbuf *w, uint16_t v)
{
    uint8_t b[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    trn_pbuf_bytes(w, b, 2);
}

static inline void trn_pbuf_u32(trn_pbuf *w, uint32_t v)
{
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    trn_pbuf_bytes(w, b, 4);
}

static inline void trn_pbuf_u64(trn_pbuf *w, uint64_t v)
{
    trn_pbuf_u32(w, (uint32_t)v);
    trn_pbuf_u32(w, (uint32_t)(v >> 32));
}

static inline void trn_pbuf_f32(trn_pbuf *w, float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    trn_pbuf_u32(w, u);
}

static inline void trn_pbuf_f64(trn_pbuf *w, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    trn_pbuf_u64(w, u);
}

/* A u16 length and the bytes (callers check the length fits). */
static inline void trn_pbuf_text(trn_pbuf *w, const char *s)
{
    const size_t n = s ? strlen(s) : 0;
    trn_pbuf_u16(w, (uint16_t)n);
    trn_pbuf_bytes(w, s, n);
}

static inline bool trn_host_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

#endif
