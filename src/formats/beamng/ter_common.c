/* What both .ter readers (modern and legacy) share: warnings, layer checks, name copies. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ter_internal.h"

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

char *trn_ter_priv_strndup(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

trn_status trn_ter_priv_warn(trn_ter *ter, int64_t offset, trn_error *err, const char *fmt, ...)
{
    trn_ter_warning *grown =
        realloc(ter->warnings, ((size_t)ter->warning_count + 1) * sizeof *grown);
    if (!grown) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    ter->warnings = grown;
    trn_ter_warning *w = &grown[ter->warning_count++];
    memset(w, 0, sizeof *w);
    w->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->message, sizeof w->message, fmt, ap);
    va_end(ap);
    return TRN_OK;
}

unsigned trn_ter_priv_layers_max(const uint8_t *p, size_t n, unsigned current)
{
    /* This runs over every sample while the bytes are still in cache, so it must vectorise at
     * -O2: v + 1 (mod 256) sends holes to 0 and keeps the order of the others, and fixed
     * 64-byte blocks need no scalar epilogue inside. */
    uint8_t m = (uint8_t)(current + 1u);
    size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        uint8_t block = 0;
        for (size_t k = 0; k < 64; k++) {
            uint8_t v = (uint8_t)(p[i + k] + 1u);
            block = v > block ? v : block;
        }
        m = block > m ? block : m;
    }
    for (; i < n; i++) {
        uint8_t v = (uint8_t)(p[i] + 1u);
        m = v > m ? v : m;
    }
    return m ? m - 1u : 0u;
}

trn_status trn_ter_priv_check_layers(trn_ter *ter, unsigned max_non_hole, int64_t layers_offset,
                                     int64_t count_offset, trn_error *err)
{
    trn_status st;
    if (ter->material_count > TRN_TER_MAX_MATERIALS) {
        st = trn_ter_priv_warn(ter, count_offset, err,
                               "%u materials are listed; the engine uses at most %u and ignores "
                               "the rest",
                               ter->material_count, TRN_TER_MAX_MATERIALS);
        if (st) return st;
    }
    if (max_non_hole < ter->material_count) return TRN_OK;
    size_t samples = (size_t)ter->size * ter->size;
    uint64_t counts[256] = {0};
    size_t first[256];
    for (unsigned v = 0; v < 256; v++)
        first[v] = SIZE_MAX;
    for (size_t i = 0; i < samples; i++) {
        uint8_t v = ter->layers[i];
        if (counts[v]++ == 0) first[v] = i;
    }
    for (unsigned v = ter->material_count; v < TRN_TER_HOLE; v++) {
        if (!counts[v]) continue;
        int64_t at = layers_offset >= 0 ? layers_offset + (int64_t)first[v] : -1;
        st = trn_ter_priv_warn(
            ter, at, err, "%llu %s layer index %u but only %u %s listed",
            (unsigned long long)counts[v], plural(counts[v], "sample uses", "samples use"), v,
            ter->material_count, plural(ter->material_count, "material is", "materials are"));
        if (st) return st;
    }
    return TRN_OK;
}
