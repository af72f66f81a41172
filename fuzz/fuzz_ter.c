/* libFuzzer target for the .ter reader: parse, and on success write back and re-read (round trip).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/beamng.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static size_t name_len(const trn_ter *t, uint32_t i)
{
    return t->material_lengths ? t->material_lengths[i] : strlen(t->materials[i]);
}

/* Everything the modern layout stores must survive serialise + parse unchanged. */
static void assert_same_modern(const trn_ter *a, const trn_ter *b, bool same_warnings)
{
    FUZZ_ASSERT(a->size == b->size);
    FUZZ_ASSERT(a->material_count == b->material_count);
    FUZZ_ASSERT(a->extra_count == b->extra_count);
    size_t n = (size_t)a->size * a->size;
    FUZZ_ASSERT(memcmp(a->heights, b->heights, n * 2) == 0);
    FUZZ_ASSERT(memcmp(a->layers, b->layers, n) == 0);
    if (a->extra_count) FUZZ_ASSERT(memcmp(a->extra_maps, b->extra_maps, n * a->extra_count) == 0);
    for (uint32_t i = 0; i < a->material_count; i++) {
        FUZZ_ASSERT(name_len(a, i) == name_len(b, i));
        FUZZ_ASSERT(memcmp(a->materials[i], b->materials[i], name_len(a, i)) == 0);
        bool la = a->material_long_form && a->material_long_form[i];
        bool lb = b->material_long_form && b->material_long_form[i];
        FUZZ_ASSERT(la == lb);
    }
    if (same_warnings) {
        FUZZ_ASSERT(a->warning_count == b->warning_count);
        for (uint32_t i = 0; i < a->warning_count; i++) {
            FUZZ_ASSERT(strcmp(a->warnings[i].message, b->warnings[i].message) == 0);
            FUZZ_ASSERT(a->warnings[i].offset == b->warnings[i].offset);
        }
    }
}

/* Legacy files are 256 x 256 maps (196 KiB and more), too large for the fuzzer to reach their
 * tail by mutation: an input starting with TER_COMPACT is a short description expanded into a
 * whole legacy file, so names, alpha maps, scripts and edge paths are fuzzed at small-input speed.
 * Layout: TER_COMPACT, version, then for the heights and the material map a length byte and that
 * many bytes repeated over the map, then the tail as the file has it (eight u8-length names),
 * where each alpha map is given as a length byte and a pattern, and the rest is copied as is. */
#define TER_COMPACT 0xA5u
#define LEGACY_SAMPLES ((size_t)TRN_TER_LEGACY_SIZE * TRN_TER_LEGACY_SIZE)

typedef struct {
    const uint8_t *p;
    size_t n, at;
    uint8_t *out;
    size_t len, cap;
} expander;

static void put(expander *x, const uint8_t *b, size_t n)
{
    if (x->len + n > x->cap) {
        size_t cap = x->cap ? x->cap : 1u << 18;
        while (cap < x->len + n)
            cap *= 2;
        uint8_t *o = realloc(x->out, cap);
        FUZZ_ASSERT(o);
        x->out = o;
        x->cap = cap;
    }
    if (b) memcpy(x->out + x->len, b, n); /* NULL reserves n bytes for the caller to fill */
    x->len += n;
}

/* A length byte and a pattern from the input, repeated to fill n bytes (zeros for length 0). */
static void put_pattern(expander *x, size_t n)
{
    size_t plen = x->at < x->n ? x->p[x->at++] : 0;
    if (plen > x->n - x->at) plen = x->n - x->at;
    const uint8_t *pat = x->p + x->at;
    x->at += plen;
    const size_t start = x->len;
    put(x, NULL, n);
    uint8_t *o = x->out + start;
    if (!plen) {
        memset(o, 0, n);
        return;
    }
    /* Doubling copies: a per-byte loop here would be traced by the fuzzer and cost most of a run. */
    size_t have = plen < n ? plen : n;
    memcpy(o, pat, have);
    while (have < n) {
        const size_t k = have < n - have ? have : n - have;
        memcpy(o + have, o, k);
        have += k;
    }
}

/* The legacy file the compact input describes; NULL unless it starts with TER_COMPACT. */
static uint8_t *expand_legacy(const uint8_t *data, size_t size, size_t *out_size)
{
    if (size < 2 || data[0] != TER_COMPACT) return NULL;
    expander x = {data, size, 2, NULL, 0, 0};
    const uint8_t version = (uint8_t)(1u + data[1] % 6u);
    put(&x, &version, 1);
    put_pattern(&x, (size_t)LEGACY_SAMPLES * 2);
    put_pattern(&x, LEGACY_SAMPLES);
    unsigned named = 0;
    for (unsigned slot = 0; slot < 8 && x.at < x.n; slot++) {
        size_t len = x.p[x.at];
        if (len > x.n - x.at - 1) len = x.n - x.at - 1;
        if (len) named++;
        put(&x, x.p + x.at, len + 1);
        x.at += len + 1;
    }
    if (version >= 2)
        for (unsigned k = 0; k < named && x.at < x.n; k++)
            put_pattern(&x, LEGACY_SAMPLES);
    if (x.at < x.n) put(&x, x.p + x.at, x.n - x.at);
    *out_size = x.len;
    return x.out;
}

static int check_one(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_one(data, size);
    size_t big_size = 0;
    uint8_t *big = expand_legacy(data, size, &big_size);
    if (big) {
        check_one(big, big_size);
        free(big);
    }
    return 0;
}

static int check_one(const uint8_t *data, size_t size)
{
    trn_ter_limits lim;
    trn_ter_limits_default(&lim);
    lim.max_size = 4096;
    lim.max_file_bytes = (uint64_t)64 << 20;
    (void)trn_ter_sniff(data, size);
    /* The detection probe: where it stops lies in the file; a whole fit ends at the end. */
    uint64_t fit_end = UINT64_MAX;
    bool fits = trn_ter_probe(data, size, &fit_end);
    FUZZ_ASSERT(fit_end <= size && (!fits || fit_end == size));

    trn_ter t;
    trn_error e;
    trn_status parsed = trn_ter_parse(data, size, "fuzz.ter", &lim, &t, &e);
    /* A file that fits the layout parses, unless a limit or memory stops it. */
    FUZZ_ASSERT(!fits || parsed == TRN_OK || parsed == TRN_ERR_LIMIT ||
                parsed == TRN_ERR_NO_MEMORY);
    if (parsed != TRN_OK) {
        /* A failure leaves the output empty and says where. */
        FUZZ_ASSERT(t.heights == NULL && t.layers == NULL && t.materials == NULL);
        FUZZ_ASSERT(e.code != TRN_OK && e.message[0] != '\0');
        FUZZ_ASSERT(e.offset <= (int64_t)size);
        return 0;
    }
    FUZZ_ASSERT(fits); /* what parses is laid out as a .ter, so detection finds it */
    FUZZ_ASSERT(t.size > 0 && t.heights && t.layers);
    bool legacy = t.layout == TRN_TER_LAYOUT_LEGACY;
    FUZZ_ASSERT(legacy ? t.size == TRN_TER_LEGACY_SIZE && t.version >= 1 && t.version <= 6
                       : t.version >= 7 && t.version <= 9);
    FUZZ_ASSERT(t.extra_count == (legacy ? 0u : (uint32_t)t.layout));

    uint64_t counts[256];
    trn_ter_layer_histogram(&t, counts);
    uint64_t total = 0;
    for (unsigned v = 0; v < 256; v++)
        total += counts[v];
    FUZZ_ASSERT(total == (uint64_t)t.size * t.size);

    /* Modern files come back byte for byte; legacy files convert to version 9. */
    uint8_t version = legacy ? (uint8_t)9 : t.version;
    uint8_t *out = NULL;
    size_t out_size = 0;
    FUZZ_ASSERT(trn_ter_serialize(&t, version, &out, &out_size, &e) == TRN_OK);
    if (!legacy) FUZZ_ASSERT(out_size == size && memcmp(out, data, size) == 0);
    trn_ter back;
    FUZZ_ASSERT(trn_ter_parse(out, out_size, NULL, &lim, &back, &e) == TRN_OK);
    FUZZ_ASSERT(back.version == version);
    FUZZ_ASSERT(back.layout == (legacy ? TRN_TER_LAYOUT_MODERN : t.layout));
    /* Legacy warnings point at no byte; the modern copy's do. */
    assert_same_modern(&t, &back, !legacy);

    /* Field conversion gives the stored heights and layers back exactly. */
    trn_field field;
    trn_labels labels;
    FUZZ_ASSERT(trn_ter_to_field(&t, 1234.5, 2.0, &field, &labels, &e) == TRN_OK);
    FUZZ_ASSERT(field.cells_x == t.size - 1 && labels.name_count == t.material_count);
    trn_ter again;
    FUZZ_ASSERT(trn_ter_from_field(&field, 1234.5, &labels, NULL, &again, &e) == TRN_OK);
    size_t n = (size_t)t.size * t.size;
    FUZZ_ASSERT(memcmp(again.heights, t.heights, n * 2) == 0);
    FUZZ_ASSERT(memcmp(again.layers, t.layers, n) == 0);

    trn_ter_dispose(&again);
    trn_labels_dispose(&labels);
    trn_field_dispose(&field);
    trn_ter_dispose(&back);
    free(out);
    trn_ter_dispose(&t);
    return 0;
}
