/* Runtime payloads: a *.terrain.bin checked and decoded through a bounded cursor, then queried. */
#define _DEFAULT_SOURCE /* madvise's MADV_HUGEPAGE */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "core/checked.h"
#include "core/cursor.h"
#include "water/water_internal.h"
#include "runtime/payload_format.h"
#include "runtime/payload_internal.h"
#include "terrane/runtime.h"

void trn_payload_limits_default(trn_payload_limits *limits)
{
    if (!limits) return;
    limits->max_samples = (uint64_t)1 << 30;
    limits->max_instances = (uint64_t)1 << 26;
    limits->max_section_bytes = (uint64_t)1 << 33;
}

const char *trn_payload_section_name(const char id[4])
{
    static const char *const names[][2] = {
        {TRN_SEC_HEIGHTS, "heights"},     {TRN_SEC_BIOMES, "biomes"},
        {TRN_SEC_EXCLUSION, "exclusion"}, {TRN_SEC_WATER, "water"},
        {TRN_SEC_SCATTER, "scatter"},     {TRN_SEC_ROLES, "surface roles"},
        {TRN_SEC_RECIPE, "recipe"},       {TRN_SEC_MANIFEST, "manifest"},
        {TRN_SEC_BIOME_MATERIALS, "biome materials"},
        {TRN_SEC_LEDGERS, "erosion ledgers"}, {TRN_SEC_MAPPING, "material mapping"},
        {TRN_SEC_MATERIAL_DOCS, "material documents"}};
    if (!id) return NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (memcmp(names[k][0], id, 4) == 0) return names[k][1];
    return NULL;
}

/* ---- errors: "section 'ID' (name) at offset N: ..." with the file and offset set ---- */

typedef struct reader {
    const char *name; /* the file, for messages */
    const uint8_t *data;
    size_t size;
    trn_payload_limits limits;
    trn_error *err;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static trn_status
fail(const reader *r, trn_status code, const char *section, uint64_t offset, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return trn_error_set(r->err, code, r->name, (int64_t)offset, "%s at offset %" PRIu64 ": %s",
                         section, offset, msg);
}

/* "section 'HGHT' (heights)" for messages. */
static const char *section_text(const char id[4], char *buf, size_t size)
{
    char clean[5];
    for (int k = 0; k < 4; k++)
        clean[k] = id[k] >= 0x20 && id[k] < 0x7f && id[k] != '\'' ? id[k] : '?';
    clean[4] = '\0';
    const char *name = trn_payload_section_name(id);
    snprintf(buf, size, "section '%s' (%s)", clean, name ? name : "unknown");
    return buf;
}

/* ---- the header ---- */

static trn_status truncated(const reader *r, const char *where, size_t pos)
{
    return fail(r, TRN_ERR_TRUNCATED, where, pos, "the file ends after %zu bytes, inside %s",
                r->size, where);
}

static char *dup_bytes(const uint8_t *p, size_t n)
{
    char *s = malloc(n + 1u);
    if (!s) return NULL;
    if (n) memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

static void header_dispose(trn_payload_header *h)
{
    free(h->generator);
    free(h->terrain_id);
    free(h->sections);
    memset(h, 0, sizeof *h);
}

static trn_status parse_header(const reader *r, trn_payload_header *h)
{
    memset(h, 0, sizeof *h);
    trn_cursor c;
    trn_cursor_init(&c, r->data, r->size);
    const uint8_t *magic = trn_cursor_take(&c, 8);
    if (!magic) {
        if (r->size == 0) return fail(r, TRN_ERR_TRUNCATED, "header", 0, "the file is empty");
        if (memcmp(r->data, trn_payload_magic, r->size) != 0)
            return fail(r, TRN_ERR_FORMAT, "header", 0,
                        "not a terrane payload (expected the magic \"TRNBIN\")");
        return truncated(r, "the header", r->size);
    }
    if (memcmp(magic, trn_payload_magic, 8) != 0)
        return fail(r, TRN_ERR_FORMAT, "header", 0,
                    "not a terrane payload: expected the magic \"TRNBIN\\0\\0\", found "
                    "%02x %02x %02x %02x %02x %02x %02x %02x",
                    magic[0], magic[1], magic[2], magic[3], magic[4], magic[5], magic[6], magic[7]);
    uint32_t header_size = 0, count = 0;
    uint16_t gen_len = 0, id_len = 0;
    uint64_t u = 0;
    if (!trn_cursor_u32le(&c, &h->format_version)) return truncated(r, "the header", c.pos);
    if (h->format_version == 0 || h->format_version > TRN_PAYLOAD_FORMAT_VERSION)
        return fail(r, h->format_version ? TRN_ERR_VERSION : TRN_ERR_FORMAT, "header", 8,
                    "payload format version %u; this build reads version %u (cook it again with "
                    "this terrane)",
                    h->format_version, TRN_PAYLOAD_FORMAT_VERSION);
    if (!trn_cursor_u32le(&c, &header_size) || !trn_cursor_u32le(&c, &h->generator_version) ||
        !trn_cursor_u32le(&c, &count))
        return truncated(r, "the header", c.pos);
    if (count == 0 || count > TRN_PAYLOAD_MAX_SECTIONS)
        return fail(r, TRN_ERR_FORMAT, "header", 20, "%u sections; a payload has 1 to %u", count,
                    TRN_PAYLOAD_MAX_SECTIONS);
    const uint8_t *p = trn_cursor_take(&c, 56);
    if (!p) return truncated(r, "the header", c.pos);
    trn_cursor fixed;
    trn_cursor_init(&fixed, p, 56);
    double f[3];
    uint32_t lo, hi;
    uint64_t *keys[3] = {&h->cache_key, &h->palette_digest, &h->material_digest};
    for (int k = 0; k < 3; k++) {
        trn_cursor_u32le(&fixed, &lo);
        trn_cursor_u32le(&fixed, &hi);
        *keys[k] = (uint64_t)lo | ((uint64_t)hi << 32);
    }
    trn_cursor_u32le(&fixed, &h->cells_x);
    trn_cursor_u32le(&fixed, &h->cells_z);
    for (int k = 0; k < 3; k++) {
        trn_cursor_u32le(&fixed, &lo);
        trn_cursor_u32le(&fixed, &hi);
        u = (uint64_t)lo | ((uint64_t)hi << 32);
        memcpy(&f[k], &u, sizeof u);
    }
    h->size_x = f[0];
    h->size_z = f[1];
    h->sea_level = f[2];
    if (h->cells_x == 0 || h->cells_z == 0)
        return fail(r, TRN_ERR_FORMAT, "header", 48, "a grid of %u x %u cells (each at least 1)",
                    h->cells_x, h->cells_z);
    if (!(isfinite(h->size_x) && h->size_x > 0.0 && isfinite(h->size_z) && h->size_z > 0.0))
        return fail(r, TRN_ERR_FORMAT, "header", 56, "size %g x %g (finite and > 0 expected)",
                    h->size_x, h->size_z);
    if (!isfinite(h->sea_level))
        return fail(r, TRN_ERR_FORMAT, "header", 72, "a sea level that is not finite");
    h->samples = ((uint64_t)h->cells_x + 1u) * ((uint64_t)h->cells_z + 1u);
    if (h->samples > r->limits.max_samples)
        return fail(r, TRN_ERR_LIMIT, "header", 48,
                    "%" PRIu64 " samples, more than the limit of %" PRIu64, h->samples,
                    r->limits.max_samples);
    if (!trn_cursor_u16le(&c, &gen_len) || !trn_cursor_u16le(&c, &id_len))
        return truncated(r, "the header", c.pos);
    const uint64_t expect_size = (uint64_t)TRN_PAYLOAD_FIXED_HEADER + gen_len + id_len +
                                 (uint64_t)TRN_PAYLOAD_ENTRY_SIZE * count + 8u;
    if (header_size != expect_size)
        return fail(r, TRN_ERR_FORMAT, "header", 12,
                    "header size %u; its strings and %u sections make %" PRIu64, header_size, count,
                    expect_size);
    const uint8_t *gp = trn_cursor_take(&c, gen_len);
    if (!gp) return truncated(r, "the generator name", c.pos);
    const uint8_t *ip = trn_cursor_take(&c, id_len);
    if (!ip) return truncated(r, "the terrain id", c.pos);
    h->generator = dup_bytes(gp, gen_len);
    h->terrain_id = dup_bytes(ip, id_len);
    h->section_count = count;
    h->sections = calloc(count, sizeof *h->sections);
    if (!h->generator || !h->terrain_id || !h->sections)
        return fail(r, TRN_ERR_NO_MEMORY, "header", 0, "out of memory");
    if (memchr(h->generator, '\0', gen_len) || memchr(h->terrain_id, '\0', id_len))
        return fail(r, TRN_ERR_FORMAT, "header", TRN_PAYLOAD_FIXED_HEADER,
                    "a NUL byte inside the generator name or terrain id");
    for (uint32_t k = 0; k < count; k++) {
        trn_payload_section *s = &h->sections[k];
        const size_t at = c.pos;
        const uint8_t *id = trn_cursor_take(&c, 4);
        uint32_t flags = 0;
        uint64_t *v[5] = {&s->offset, &s->compressed_size, &s->raw_size, &s->raw_hash,
                          &s->compressed_hash};
        bool ok = id && trn_cursor_u32le(&c, &flags);
        for (int j = 0; ok && j < 5; j++) {
            ok = trn_cursor_u32le(&c, &lo) && trn_cursor_u32le(&c, &hi);
            *v[j] = (uint64_t)lo | ((uint64_t)hi << 32);
        }
        if (!ok) return truncated(r, "the section table", c.pos);
        memcpy(s->id, id, 4);
        s->id[4] = '\0';
        s->required = (flags & TRN_PAYLOAD_FLAG_REQUIRED) != 0;
        char where[64];
        section_text(s->id, where, sizeof where);
        if (flags & ~TRN_PAYLOAD_FLAG_REQUIRED)
            return fail(r, TRN_ERR_FORMAT, where, at + 4, "unknown flags 0x%x", flags);
        for (uint32_t j = 0; j < k; j++)
            if (memcmp(h->sections[j].id, s->id, 4) == 0)
                return fail(r, TRN_ERR_FORMAT, where, at, "the section appears twice");
        if (s->compressed_size > r->limits.max_section_bytes ||
            s->raw_size > r->limits.max_section_bytes)
            return fail(r, TRN_ERR_LIMIT, where, at + 16,
                        "%" PRIu64 " compressed, %" PRIu64 " raw bytes; the limit is %" PRIu64
                        " bytes a section",
                        s->compressed_size, s->raw_size, r->limits.max_section_bytes);
    }
    const size_t sum_at = c.pos;
    if (!trn_cursor_u32le(&c, &lo) || !trn_cursor_u32le(&c, &hi))
        return truncated(r, "the header checksum", c.pos);
    const uint64_t sum = (uint64_t)lo | ((uint64_t)hi << 32), want = XXH64(r->data, sum_at, 0);
    if (sum != want)
        return fail(r, TRN_ERR_FORMAT, "header", sum_at,
                    "header checksum %016" PRIx64 ", its bytes give %016" PRIx64
                    " (the header or section table is damaged)",
                    sum, want);
    /* Sections follow the header back to back, in table order, to the file's end. */
    uint64_t next = header_size;
    for (uint32_t k = 0; k < count; k++) {
        const trn_payload_section *s = &h->sections[k];
        char where[64];
        section_text(s->id, where, sizeof where);
        const size_t entry =
            TRN_PAYLOAD_FIXED_HEADER + gen_len + id_len + (size_t)TRN_PAYLOAD_ENTRY_SIZE * k;
        if (s->offset != next)
            return fail(r, TRN_ERR_FORMAT, where, entry + 8,
                        "starts at %" PRIu64 "; the previous one ends at %" PRIu64, s->offset,
                        next);
        uint64_t end;
        if (!trn_add_u64(s->offset, s->compressed_size, &end) || end > r->size)
            return fail(r, TRN_ERR_TRUNCATED, where, s->offset,
                        "%" PRIu64 " bytes from here run past the end of the file (%zu bytes)",
                        s->compressed_size, r->size);
        next = end;
    }
    if (next != r->size)
        return fail(r, TRN_ERR_TRAILING_DATA, "end", next,
                    "%" PRIu64 " bytes after the last section", (uint64_t)r->size - next);
    return TRN_OK;
}

/* ---- sections ---- */

/* A buffer for a section's raw bytes: large ones 2 MiB-aligned and advised onto huge pages,
 * as first touching hundreds of MiB of small pages costs more than decompressing into them. */
static uint8_t *raw_alloc(size_t size)
{
    const size_t huge = (size_t)2 << 20;
    if (size < 4u * huge) return malloc(size ? size : 1u);
    void *p = NULL;
    if (posix_memalign(&p, huge, size) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, size, MADV_HUGEPAGE);
#endif
    return p;
}

/* Check both hashes and decompress a section into a new buffer of exactly raw_size bytes. */
static trn_status unpack(const reader *r, const trn_payload_section *s, uint8_t **out)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    *out = NULL;
    const uint8_t *src = r->data + s->offset;
    const size_t csize = (size_t)s->compressed_size, rsize = (size_t)s->raw_size;
    uint64_t h = XXH64(src, csize, 0);
    if (h != s->compressed_hash)
        return fail(r, TRN_ERR_FORMAT, where, s->offset,
                    "checksum of its %zu compressed bytes is %016" PRIx64
                    ", the table says %016" PRIx64 " (the section is damaged)",
                    csize, h, s->compressed_hash);
    const unsigned long long content = ZSTD_getFrameContentSize(src, csize);
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN ||
        content != s->raw_size || ZSTD_findFrameCompressedSize(src, csize) != csize)
        return fail(r, TRN_ERR_FORMAT, where, s->offset, "not one zstd frame of %" PRIu64 " bytes",
                    s->raw_size);
    uint8_t *buf = raw_alloc(rsize);
    if (!buf) return fail(r, TRN_ERR_NO_MEMORY, where, s->offset, "out of memory");
    const size_t got = ZSTD_decompress(buf, rsize, src, csize);
    if (ZSTD_isError(got) || got != rsize) {
        free(buf);
        return fail(r, TRN_ERR_FORMAT, where, s->offset, "zstd could not decompress it (%s)",
                    ZSTD_isError(got) ? ZSTD_getErrorName(got) : "short");
    }
    h = XXH64(buf, rsize, 0);
    if (h != s->raw_hash) {
        free(buf);
        return fail(r, TRN_ERR_FORMAT, where, s->offset,
                    "checksum of its %zu bytes is %016" PRIx64 ", the table says %016" PRIx64,
                    rsize, h, s->raw_hash);
    }
    *out = buf;
    return TRN_OK;
}

/* A section's content error: the section's file offset, the position inside its data. */
#define BAD(code, ...)                                                                             \
    do {                                                                                           \
        char m_[300];                                                                              \
        snprintf(m_, sizeof m_, __VA_ARGS__);                                                      \
        return fail(r, code, where, s->offset, "byte %zu of its data: %s", c.pos, m_);             \
    } while (0)

static char *take_text(trn_cursor *c, bool *ok)
{
    uint16_t n;
    const uint8_t *p;
    if (!trn_cursor_u16le(c, &n) || !(p = trn_cursor_take(c, n)) || memchr(p, '\0', n)) {
        *ok = false;
        return NULL;
    }
    char *s = dup_bytes(p, n);
    *ok = s != NULL;
    return s;
}

static trn_status decode_heights(const reader *r, const trn_payload_section *s, uint8_t *raw,
                                 trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    const size_t n = (size_t)p->header.samples;
    if (s->raw_size != (uint64_t)n * 4u)
        return fail(r, TRN_ERR_FORMAT, where, s->offset,
                    "%" PRIu64 " bytes; %zu samples of 4 bytes expected", s->raw_size, n);
    /* The raw buffer becomes the heights: little-endian floats are the host's on x86 and ARM. */
    float *hts = (float *)(void *)raw;
    if (!trn_host_little_endian())
        for (size_t k = 0; k < n; k++) {
            const uint8_t *b = raw + 4u * k;
            const uint32_t u =
                (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
            memcpy(&hts[k], &u, 4);
        }
    p->field.cells_x = p->header.cells_x;
    p->field.cells_z = p->header.cells_z;
    p->field.size_x = p->header.size_x;
    p->field.size_z = p->header.size_z;
    p->field.heights = hts;
    return TRN_OK;
}

static trn_status decode_biomes(const reader *r, const trn_payload_section *s, const uint8_t *raw,
                                trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    uint32_t count;
    if (!trn_cursor_u32le(&c, &count)) BAD(TRN_ERR_TRUNCATED, "the biome count is cut short");
    if (count == 0 || count > TRN_PAYLOAD_MAX_BIOMES)
        BAD(TRN_ERR_FORMAT, "%u biomes; 1 to 255 expected", count);
    p->biome_names = calloc(count, sizeof *p->biome_names);
    p->biome_colors = calloc(count, sizeof *p->biome_colors);
    if (!p->biome_names || !p->biome_colors) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    p->biome_count = count;
    for (uint32_t b = 0; b < count; b++) {
        bool ok;
        p->biome_names[b] = take_text(&c, &ok);
        for (int k = 0; ok && k < 4; k++)
            ok = trn_cursor_f32le(&c, &p->biome_colors[b][k]);
        if (!ok) BAD(TRN_ERR_FORMAT, "biome %u's name or colour is cut short", b);
    }
    const size_t n = (size_t)p->header.samples;
    if (trn_cursor_left(&c) != n)
        BAD(TRN_ERR_FORMAT, "%zu bytes of labels; %zu samples expected", trn_cursor_left(&c), n);
    const uint8_t *labels = trn_cursor_take(&c, n);
    for (size_t k = 0; k < n; k++)
        if (labels[k] >= count && labels[k] != TRN_LABEL_NONE) {
            c.pos -= n - k;
            BAD(TRN_ERR_FORMAT, "sample %zu has biome %u; there are %u", k, labels[k], count);
        }
    p->biomes = malloc(n);
    if (!p->biomes) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    memcpy(p->biomes, labels, n);
    return TRN_OK;
}

static bool take_f64(trn_cursor *c, double *v)
{
    uint32_t lo = 0, hi = 0;
    if (!trn_cursor_u32le(c, &lo) || !trn_cursor_u32le(c, &hi)) return false;
    const uint64_t bits = (uint64_t)lo | ((uint64_t)hi << 32);
    memcpy(v, &bits, sizeof *v);
    return true;
}

/* BMAT: each biome's material id and texture scale, in BIOM's order (checked against it once
 * every section is read: the order of sections is free). */
static trn_status decode_biome_materials(const reader *r, const trn_payload_section *s,
                                         const uint8_t *raw, trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    uint32_t count;
    if (!trn_cursor_u32le(&c, &count)) BAD(TRN_ERR_TRUNCATED, "the biome count is cut short");
    if (count == 0 || count > TRN_PAYLOAD_MAX_BIOMES)
        BAD(TRN_ERR_FORMAT, "%u biomes; 1 to 255 expected", count);
    p->biome_materials = calloc(count, sizeof *p->biome_materials);
    p->biome_texture_scales = calloc(count, sizeof *p->biome_texture_scales);
    if (!p->biome_materials || !p->biome_texture_scales) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    p->biome_material_count = count;
    for (uint32_t b = 0; b < count; b++) {
        bool ok;
        char *id = take_text(&c, &ok);
        if (ok && id && !id[0]) {
            free(id);
            id = NULL; /* empty: no material */
        }
        p->biome_materials[b] = id;
        const size_t at = c.pos;
        ok = ok && take_f64(&c, &p->biome_texture_scales[b]);
        if (!ok) BAD(TRN_ERR_FORMAT, "biome %u's material or texture scale is cut short", b);
        const double ts = p->biome_texture_scales[b];
        if (!(isfinite(ts) && ts > 0.0)) {
            c.pos = at;
            BAD(TRN_ERR_FORMAT, "biome %u's texture scale is %g; a finite number > 0 expected", b,
                ts);
        }
    }
    if (trn_cursor_left(&c))
        BAD(TRN_ERR_TRAILING_DATA, "%zu bytes after the last biome", trn_cursor_left(&c));
    return TRN_OK;
}

/* LDGR: each erosion node's transport totals, as its generation reported them. */
static trn_status decode_ledgers(const reader *r, const trn_payload_section *s, const uint8_t *raw,
                                 trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    uint32_t count;
    if (!trn_cursor_u32le(&c, &count)) BAD(TRN_ERR_TRUNCATED, "the ledger count is cut short");
    /* Each ledger takes at least 50 bytes: a bound before allocating. */
    if (count == 0 || (uint64_t)count * 50u > trn_cursor_left(&c))
        BAD(TRN_ERR_FORMAT, "%u ledgers cannot fit in %zu bytes (at least 1, 50 bytes each)",
            count, trn_cursor_left(&c));
    p->ledger_ids = calloc(count, sizeof *p->ledger_ids);
    p->ledgers = calloc(count, sizeof *p->ledgers);
    if (!p->ledger_ids || !p->ledgers) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    p->ledger_count = count;
    for (uint32_t k = 0; k < count; k++) {
        bool ok;
        p->ledger_ids[k] = take_text(&c, &ok);
        trn_erosion_ledger *l = &p->ledgers[k];
        double *amounts[4] = {&l->eroded, &l->deposited, &l->exported, &l->suspended};
        const size_t at = c.pos;
        for (int q = 0; ok && q < 4; q++)
            ok = take_f64(&c, amounts[q]);
        double counts[2] = {0, 0};
        for (int q = 0; ok && q < 2; q++)
            ok = take_f64(&c, &counts[q]);
        if (!ok || !p->ledger_ids[k]) BAD(TRN_ERR_FORMAT, "ledger %u is cut short", k);
        uint64_t bits[2];
        memcpy(bits, counts, sizeof bits);
        l->droplets = bits[0];
        l->steps = bits[1];
        for (int q = 0; q < 4; q++)
            if (!(isfinite(*amounts[q]) && *amounts[q] >= 0.0)) {
                c.pos = at + 8u * (size_t)q;
                BAD(TRN_ERR_FORMAT, "ledger %u ('%.60s'): an amount of %g; finite and >= 0 expected",
                    k, p->ledger_ids[k], *amounts[q]);
            }
    }
    if (trn_cursor_left(&c))
        BAD(TRN_ERR_TRAILING_DATA, "%zu bytes after the last ledger", trn_cursor_left(&c));
    return TRN_OK;
}

static trn_status decode_scatter(const reader *r, const trn_payload_section *s, const uint8_t *raw,
                                 trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    uint32_t count;
    if (!trn_cursor_u32le(&c, &count)) BAD(TRN_ERR_TRUNCATED, "the rule count is cut short");
    /* Every rule takes at least 8 bytes: a bound before allocating. */
    if ((uint64_t)count * 8u > trn_cursor_left(&c))
        BAD(TRN_ERR_FORMAT, "%u rules cannot fit in %zu bytes", count, trn_cursor_left(&c));
    p->rules = calloc(count ? count : 1u, sizeof *p->rules);
    if (!p->rules) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    for (uint32_t k = 0; k < count; k++) {
        trn_payload_rule_data *rule = &p->rules[k];
        p->rule_count = k + 1u;
        bool ok;
        uint8_t kind = 0, collision = 0, category = 0;
        rule->id = take_text(&c, &ok);
        ok = ok && trn_cursor_u8(&c, &kind);
        if (ok) rule->ref = take_text(&c, &ok);
        ok = ok && trn_cursor_u8(&c, &collision) && trn_cursor_u8(&c, &category);
        if (!ok) BAD(TRN_ERR_FORMAT, "rule %u is cut short", k);
        if (kind > 1u || collision > TRN_COLLISION_TRIGGER || category > TRN_CATEGORY_ROCK)
            BAD(TRN_ERR_FORMAT, "rule %u: reference kind %u, collision %u, category %u", k, kind,
                collision, category);
        rule->prefab = kind == 1u;
        rule->collision = (trn_scatter_collision)collision;
        rule->category = (trn_scatter_category)category;
    }
    uint32_t lo, hi;
    if (!trn_cursor_u32le(&c, &lo) || !trn_cursor_u32le(&c, &hi))
        BAD(TRN_ERR_FORMAT, "the instance count is cut short");
    const uint64_t n = (uint64_t)lo | ((uint64_t)hi << 32);
    if (n > r->limits.max_instances) {
        c.pos -= 8;
        BAD(TRN_ERR_LIMIT, "%" PRIu64 " instances, more than the limit of %" PRIu64, n,
            r->limits.max_instances);
    }
    if (n != trn_cursor_left(&c) / TRN_PAYLOAD_INSTANCE_SIZE ||
        trn_cursor_left(&c) % TRN_PAYLOAD_INSTANCE_SIZE)
        BAD(TRN_ERR_FORMAT, "%" PRIu64 " instances of %u bytes; %zu bytes are left", n,
            TRN_PAYLOAD_INSTANCE_SIZE, trn_cursor_left(&c));
    p->instances = calloc(n ? (size_t)n : 1u, sizeof *p->instances);
    if (!p->instances) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    p->instance_count = (size_t)n;
    for (size_t k = 0; k < (size_t)n; k++) {
        trn_instance *in = &p->instances[k];
        const uint8_t *b = trn_cursor_take(&c, TRN_PAYLOAD_INSTANCE_SIZE);
        trn_cursor ic;
        trn_cursor_init(&ic, b, TRN_PAYLOAD_INSTANCE_SIZE);
        uint64_t v[7];
        trn_cursor_u32le(&ic, &in->rule);
        for (int j = 0; j < 7; j++) {
            trn_cursor_u32le(&ic, &lo);
            trn_cursor_u32le(&ic, &hi);
            v[j] = (uint64_t)lo | ((uint64_t)hi << 32);
        }
        in->cx = (int64_t)v[0];
        in->cz = (int64_t)v[1];
        double d[5];
        memcpy(d, v + 2, sizeof d);
        in->x = d[0];
        in->y = d[1];
        in->z = d[2];
        in->yaw = d[3];
        in->scale = d[4];
        if (in->rule >= count) {
            c.pos -= TRN_PAYLOAD_INSTANCE_SIZE;
            BAD(TRN_ERR_FORMAT, "instance %zu names rule %u; there are %u", k, in->rule, count);
        }
        if (!(isfinite(in->x) && isfinite(in->y) && isfinite(in->z) && isfinite(in->yaw) &&
              isfinite(in->scale) && in->scale > 0.0)) {
            c.pos -= TRN_PAYLOAD_INSTANCE_SIZE;
            BAD(TRN_ERR_FORMAT,
                "instance %zu: position (%g, %g, %g), yaw %g, scale %g; finite numbers and a "
                "scale above 0 expected",
                k, in->x, in->y, in->z, in->yaw, in->scale);
        }
        /* Queries rely on the order the cook writes: by rule, then cz, then cx, each site once. */
        if (k > 0) {
            const trn_instance *prev = &p->instances[k - 1];
            const bool after = prev->rule != in->rule ? prev->rule < in->rule
                               : prev->cz != in->cz   ? prev->cz < in->cz
                                                      : prev->cx < in->cx;
            if (!after) {
                c.pos -= TRN_PAYLOAD_INSTANCE_SIZE;
                BAD(TRN_ERR_FORMAT,
                    "instance %zu (rule %u, site %" PRId64 ",%" PRId64 ") is %s instance %zu; "
                    "instances are sorted by rule, then z, then x, each site once",
                    k, in->rule, in->cx, in->cz,
                    prev->rule == in->rule && prev->cz == in->cz && prev->cx == in->cx
                        ? "the same site as"
                        : "out of order after",
                    k - 1);
            }
        }
    }
    return TRN_OK;
}

static trn_status decode_roles(const reader *r, const trn_payload_section *s, const uint8_t *raw,
                               trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    const size_t n = (size_t)p->header.samples;
    const uint8_t *roles = trn_cursor_take(&c, n);
    if (!roles) BAD(TRN_ERR_FORMAT, "%" PRIu64 " bytes; %zu samples expected", s->raw_size, n);
    for (size_t k = 0; k < n; k++)
        if (roles[k] >= TRN_ROLE_COUNT && roles[k] != TRN_ROLE_NONE) {
            c.pos = k;
            BAD(TRN_ERR_FORMAT, "sample %zu has role %u", k, roles[k]);
        }
    uint8_t has_set;
    if (!trn_cursor_u8(&c, &has_set) || has_set > 1u)
        BAD(TRN_ERR_FORMAT, "the material set flag is missing or not 0 or 1");
    if (has_set) {
        bool ok;
        p->set.name = take_text(&c, &ok);
        for (int k = 0; ok && k < TRN_ROLE_COUNT; k++) {
            p->set.roles[k] = take_text(&c, &ok);
            if (ok && !p->set.roles[k][0]) {
                free(p->set.roles[k]);
                p->set.roles[k] = NULL; /* an empty id: the role is unbound */
            }
        }
        p->has_set = true;
        if (!ok) BAD(TRN_ERR_FORMAT, "the material set is cut short");
    }
    if (trn_cursor_left(&c)) BAD(TRN_ERR_FORMAT, "%zu bytes after the roles", trn_cursor_left(&c));
    p->roles = malloc(n);
    if (!p->roles) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    memcpy(p->roles, roles, n);
    return TRN_OK;
}

/* MAPM: the material set's mapping, 41 bytes: flags, then five f64 inside their documented
 * ranges. */
static trn_status decode_mapping(const reader *r, const trn_payload_section *s, const uint8_t *raw,
                                 trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    trn_material_mapping *m = &p->set.mapping;
    uint8_t flags = 0;
    if (!trn_cursor_u8(&c, &flags) || flags > 7u)
        BAD(TRN_ERR_FORMAT, "the flags are missing or have bits other than 0..2 set");
    double v[5];
    for (int k = 0; k < 5; k++)
        if (!take_f64(&c, &v[k])) BAD(TRN_ERR_TRUNCATED, "the mapping values are cut short");
    if (trn_cursor_left(&c))
        BAD(TRN_ERR_TRAILING_DATA, "%zu bytes after the mapping", trn_cursor_left(&c));
    static const double lo[5] = {0, 1, 0, 0, 0}, hi[5] = {90, 64, 1, 1, INFINITY};
    static const bool open_lo[5] = {false, false, true, false, true};
    static const char *const names[5] = {"triplanar slope", "triplanar sharpness",
                                         "height blend contrast", "macro variation",
                                         "macro scale"};
    for (int k = 0; k < 5; k++)
        if (!(isfinite(v[k]) && v[k] <= hi[k] && (open_lo[k] ? v[k] > lo[k] : v[k] >= lo[k]))) {
            c.pos = 1u + 8u * (size_t)k;
            BAD(TRN_ERR_FORMAT, "the %s is %g, outside its range", names[k], v[k]);
        }
    *m = (trn_material_mapping){.present = true,
                                .texture_arrays = (flags & 1u) != 0,
                                .triplanar = (flags & 2u) != 0,
                                .height_blend = (flags & 4u) != 0,
                                .triplanar_slope = v[0],
                                .triplanar_sharpness = v[1],
                                .height_blend_contrast = v[2],
                                .macro_variation = v[3],
                                .macro_scale = v[4]};
    return TRN_OK;
}

/* MATD: the Material documents: a count, then each one's id (non-empty, once), texture scale
 * (> 0, finite) and five map paths. */
static trn_status decode_material_docs(const reader *r, const trn_payload_section *s,
                                       const uint8_t *raw, trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    trn_cursor c;
    trn_cursor_init(&c, raw, (size_t)s->raw_size);
    uint32_t count = 0;
    if (!trn_cursor_u32le(&c, &count)) BAD(TRN_ERR_TRUNCATED, "the count is cut short");
    /* Each entry holds at least 2 + 8 + 5 x 2 bytes: a count the section cannot hold is refused
     * before anything is allocated. */
    if ((uint64_t)count * 20u > trn_cursor_left(&c))
        BAD(TRN_ERR_FORMAT, "%u documents, more than its %zu bytes hold", count,
            trn_cursor_left(&c));
    p->has_docs = true;
    p->docs = calloc(count ? count : 1u, sizeof *p->docs);
    if (!p->docs) BAD(TRN_ERR_NO_MEMORY, "out of memory");
    for (uint32_t k = 0; k < count; k++) {
        struct trn_payload_material_doc *d = &p->docs[k];
        p->doc_count = k + 1;
        bool ok = true;
        d->id = take_text(&c, &ok);
        if (!ok || !d->id[0]) BAD(TRN_ERR_FORMAT, "document %u's id is missing or cut short", k);
        for (uint32_t q = 0; q < k; q++)
            if (strcmp(p->docs[q].id, d->id) == 0)
                BAD(TRN_ERR_FORMAT, "document %u repeats the id of document %u", k, q);
        if (!take_f64(&c, &d->texture_scale)) BAD(TRN_ERR_TRUNCATED, "document %u is cut short", k);
        if (!(isfinite(d->texture_scale) && d->texture_scale > 0))
            BAD(TRN_ERR_FORMAT, "document %u's texture scale is %g, not > 0", k, d->texture_scale);
        for (int q = 0; q < TRN_MAP_COUNT && ok; q++) d->maps[q] = take_text(&c, &ok);
        if (!ok) BAD(TRN_ERR_TRUNCATED, "document %u's maps are cut short", k);
    }
    if (trn_cursor_left(&c))
        BAD(TRN_ERR_TRAILING_DATA, "%zu bytes after the documents", trn_cursor_left(&c));
    return TRN_OK;
}

/* Whether text[0..n) is one JSON value (RFC 8259), nesting at most 512 deep; *bad is the
 * byte offset of the first error. Kept here so the runtime needs no JSON library. */
static size_t json_ws(const uint8_t *t, size_t n, size_t i)
{
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

static bool json_string_at(const uint8_t *t, size_t n, size_t *i)
{
    size_t k = *i + 1; /* past the quote */
    while (k < n && t[k] != '"') {
        if (t[k] < 0x20) return *i = k, false;
        if (t[k] == '\\') {
            k++;
            if (k >= n) return *i = k, false;
            if (t[k] == 'u') {
                for (int h = 1; h <= 4; h++)
                    if (k + (size_t)h >= n || !isxdigit(t[k + (size_t)h])) return *i = k, false;
                k += 4;
            } else if (!strchr("\"\\/bfnrt", t[k])) {
                return *i = k, false;
            }
        }
        k++;
    }
    if (k >= n) return *i = k, false;
    *i = k + 1;
    return true;
}

static bool json_number_at(const uint8_t *t, size_t n, size_t *i)
{
    size_t k = *i;
    if (k < n && t[k] == '-') k++;
    if (k < n && t[k] == '0')
        k++;
    else if (k < n && t[k] >= '1' && t[k] <= '9')
        while (k < n && isdigit(t[k]))
            k++;
    else
        return *i = k, false;
    if (k < n && t[k] == '.') {
        if (++k >= n || !isdigit(t[k])) return *i = k, false;
        while (k < n && isdigit(t[k]))
            k++;
    }
    if (k < n && (t[k] == 'e' || t[k] == 'E')) {
        k++;
        if (k < n && (t[k] == '+' || t[k] == '-')) k++;
        if (k >= n || !isdigit(t[k])) return *i = k, false;
        while (k < n && isdigit(t[k]))
            k++;
    }
    *i = k;
    return true;
}

static bool json_valid(const uint8_t *t, size_t n, size_t *bad)
{
    enum { MAX_DEPTH = 512 };
    char stack[MAX_DEPTH]; /* '{' or '[' */
    int depth = 0;
    size_t i = json_ws(t, n, 0);
    for (;;) {
        /* A value. */
        if (i >= n) goto fail;
        if (t[i] == '{' || t[i] == '[') {
            if (depth == MAX_DEPTH) goto fail;
            stack[depth++] = (char)t[i];
            i = json_ws(t, n, i + 1);
            if (i < n && t[i] == (stack[depth - 1] == '{' ? '}' : ']')) {
                depth--;
                i++;
                goto after_value;
            }
            if (stack[depth - 1] == '{') {
                if (i >= n || t[i] != '"' || !json_string_at(t, n, &i)) goto fail;
                i = json_ws(t, n, i);
                if (i >= n || t[i] != ':') goto fail;
                i = json_ws(t, n, i + 1);
            }
            continue;
        }
        if (t[i] == '"') {
            if (!json_string_at(t, n, &i)) goto fail;
        } else if (t[i] == '-' || isdigit(t[i])) {
            if (!json_number_at(t, n, &i)) goto fail;
        } else if (n - i >= 4 && memcmp(t + i, "true", 4) == 0) {
            i += 4;
        } else if (n - i >= 5 && memcmp(t + i, "false", 5) == 0) {
            i += 5;
        } else if (n - i >= 4 && memcmp(t + i, "null", 4) == 0) {
            i += 4;
        } else {
            goto fail;
        }
    after_value:
        i = json_ws(t, n, i);
        for (;;) {
            if (depth == 0) {
                if (i != n) goto fail;
                return true;
            }
            const char close = stack[depth - 1] == '{' ? '}' : ']';
            if (i < n && t[i] == close) {
                depth--;
                i = json_ws(t, n, i + 1);
                continue;
            }
            if (i >= n || t[i] != ',') goto fail;
            i = json_ws(t, n, i + 1);
            if (stack[depth - 1] == '{') {
                if (i >= n || t[i] != '"' || !json_string_at(t, n, &i)) goto fail;
                i = json_ws(t, n, i);
                if (i >= n || t[i] != ':') goto fail;
                i = json_ws(t, n, i + 1);
            }
            break;
        }
    }
fail:
    *bad = i;
    return false;
}

static trn_status decode_section(const reader *r, const trn_payload_section *s, trn_payload *p)
{
    char where[64];
    section_text(s->id, where, sizeof where);
    uint8_t *raw = NULL;
    trn_status st = unpack(r, s, &raw);
    if (st) return st;
    const size_t n = (size_t)p->header.samples;
    if (memcmp(s->id, TRN_SEC_HEIGHTS, 4) == 0) {
        st = decode_heights(r, s, raw, p);
        if (!st) raw = NULL; /* kept as the heights */
    } else if (memcmp(s->id, TRN_SEC_BIOMES, 4) == 0) {
        st = decode_biomes(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_BIOME_MATERIALS, 4) == 0) {
        if (p->biome_materials)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset, "a second biome materials section");
        else
            st = decode_biome_materials(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_LEDGERS, 4) == 0) {
        if (p->ledgers)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset, "a second ledger section");
        else
            st = decode_ledgers(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_EXCLUSION, 4) == 0) {
        if (s->raw_size != n)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset,
                      "%" PRIu64 " bytes; one a sample (%zu) expected", s->raw_size, n);
        else
            p->exclusion = raw, raw = NULL;
    } else if (memcmp(s->id, TRN_SEC_WATER, 4) == 0) {
        trn_water_limits wl;
        trn_water_limits_default(&wl);
        wl.max_samples = r->limits.max_samples;
        trn_error we;
        if (trn_water_decode(raw, (size_t)s->raw_size, NULL, &wl, &p->water, &we))
            st = fail(r, we.code, where, s->offset, "byte %" PRId64 " of its data: %s", we.offset,
                      we.message);
        else if (p->water.cells_x != p->header.cells_x || p->water.cells_z != p->header.cells_z ||
                 p->water.size_x != p->header.size_x || p->water.size_z != p->header.size_z)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset,
                      "water on a %u x %u grid; the terrain's is %u x %u", p->water.cells_x,
                      p->water.cells_z, p->header.cells_x, p->header.cells_z);
        p->has_water = true; /* disposed with the payload either way */
    } else if (memcmp(s->id, TRN_SEC_SCATTER, 4) == 0) {
        st = decode_scatter(r, s, raw, p);
        p->has_scatter = true;
    } else if (memcmp(s->id, TRN_SEC_ROLES, 4) == 0) {
        st = decode_roles(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_MAPPING, 4) == 0) {
        if (p->set.mapping.present)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset, "a second material mapping section");
        else
            st = decode_mapping(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_MATERIAL_DOCS, 4) == 0) {
        if (p->has_docs)
            st = fail(r, TRN_ERR_FORMAT, where, s->offset, "a second material documents section");
        else
            st = decode_material_docs(r, s, raw, p);
    } else if (memcmp(s->id, TRN_SEC_RECIPE, 4) == 0) {
        size_t bad = 0;
        if (memchr(raw, '\0', (size_t)s->raw_size))
            st = fail(r, TRN_ERR_FORMAT, where, s->offset, "a NUL byte inside the recipe text");
        else if (!json_valid(raw, (size_t)s->raw_size, &bad))
            st = fail(r, TRN_ERR_FORMAT, where, s->offset,
                      "the embedded recipe is not JSON (byte %zu of its text)", bad);
        else if (!(p->recipe_json = dup_bytes(raw, (size_t)s->raw_size)))
            st = fail(r, TRN_ERR_NO_MEMORY, where, s->offset, "out of memory");
        p->recipe_size = (size_t)s->raw_size;
    }
    free(raw);
    return st;
}

/* ---- opening ---- */

static trn_status map_file(const char *path, const uint8_t **data, size_t *size, void **base,
                           trn_error *err)
{
    *data = NULL;
    *size = 0;
    *base = NULL;
    /* Non-blocking: opening a named pipe must not wait for a writer; it is refused below. */
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        const int e = errno;
        return trn_error_set(err, e == ENOENT ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, path, -1,
                             "cannot open the payload: %s", strerror(e));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return trn_error_set(err, TRN_ERR_IO, path, -1,
                             "not a regular file (a payload is read from a file, not a pipe or "
                             "device)");
    }
    if ((uint64_t)sb.st_size > (uint64_t)SIZE_MAX) {
        close(fd);
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1, "too large for this machine");
    }
    *size = (size_t)sb.st_size;
    if (*size) {
        void *m = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            const int e = errno;
            close(fd);
            return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot map the payload: %s",
                                 strerror(e));
        }
        *base = m;
        *data = m;
    }
    close(fd);
    return TRN_OK;
}

void trn_payload_free(trn_payload *p)
{
    if (!p) return;
    header_dispose(&p->header);
    free(p->field.heights);
    free(p->biomes);
    for (uint32_t b = 0; p->biome_names && b < p->biome_count; b++)
        free(p->biome_names[b]);
    free(p->biome_names);
    free(p->biome_colors);
    for (uint32_t b = 0; p->biome_materials && b < p->biome_material_count; b++)
        free(p->biome_materials[b]);
    free(p->biome_materials);
    free(p->biome_texture_scales);
    for (uint32_t k = 0; p->ledger_ids && k < p->ledger_count; k++)
        free(p->ledger_ids[k]);
    free(p->ledger_ids);
    free(p->ledgers);
    free(p->exclusion);
    free(p->roles);
    free(p->set.name);
    for (int k = 0; k < TRN_ROLE_COUNT; k++)
        free(p->set.roles[k]);
    for (uint32_t k = 0; p->docs && k < p->doc_count; k++) {
        free(p->docs[k].id);
        for (int q = 0; q < TRN_MAP_COUNT; q++) free(p->docs[k].maps[q]);
    }
    free(p->docs);
    if (p->has_water) trn_water_dispose(&p->water);
    for (uint32_t k = 0; p->rules && k < p->rule_count; k++) {
        free(p->rules[k].id);
        free(p->rules[k].ref);
    }
    free(p->rules);
    free(p->instances);
    free(p->recipe_json);
    free(p);
}

/* The texture layers: the role bindings in role order, then the biome materials in BIOM's
 * order, each distinct id once; the strings stay owned by the set and the biome table. */
static int layer_of(trn_payload *p, const char *id)
{
    if (!id) return -1;
    for (uint32_t k = 0; k < p->layer_count; k++)
        if (strcmp(p->layers[k], id) == 0) return (int)k;
    p->layers[p->layer_count] = id;
    return (int)p->layer_count++;
}

static void index_layers(trn_payload *p)
{
    p->layer_count = 0;
    for (int r = 0; r < TRN_ROLE_COUNT; r++)
        p->role_layer[r] = (int16_t)(p->has_set ? layer_of(p, p->set.roles[r]) : -1);
    for (uint32_t b = 0; b < TRN_PAYLOAD_MAX_BIOMES; b++)
        p->biome_layer[b] = (int16_t)(p->biome_materials && b < p->biome_material_count
                                          ? layer_of(p, p->biome_materials[b])
                                          : -1);
}

static trn_status decode(const reader *r, trn_payload **out)
{
    trn_payload *p = calloc(1, sizeof *p);
    if (!p) return trn_error_set(r->err, TRN_ERR_NO_MEMORY, r->name, -1, "out of memory");
    trn_status st = parse_header(r, &p->header);
    static const char *const required[] = {TRN_SEC_HEIGHTS, TRN_SEC_BIOMES, TRN_SEC_RECIPE};
    for (size_t q = 0; !st && q < 3; q++) {
        bool found = false;
        for (uint32_t k = 0; k < p->header.section_count; k++)
            found = found || memcmp(p->header.sections[k].id, required[q], 4) == 0;
        if (!found) {
            char where[64];
            section_text(required[q], where, sizeof where);
            st = fail(r, TRN_ERR_FORMAT, where, TRN_PAYLOAD_FIXED_HEADER,
                      "the payload has no such section, which is required");
        }
    }
    for (uint32_t k = 0; !st && k < p->header.section_count; k++) {
        const trn_payload_section *s = &p->header.sections[k];
        if (trn_payload_section_name(s->id)) {
            st = decode_section(r, s, p);
        } else if (s->required) {
            char where[64];
            section_text(s->id, where, sizeof where);
            st = fail(r, TRN_ERR_UNSUPPORTED, where, s->offset,
                      "a required section this build does not know (a newer terrane wrote it)");
        }
    }
    if (!st && p->biome_materials && p->biome_material_count != p->biome_count) {
        const trn_payload_section *bm = NULL;
        for (uint32_t k = 0; k < p->header.section_count && !bm; k++)
            if (memcmp(p->header.sections[k].id, TRN_SEC_BIOME_MATERIALS, 4) == 0)
                bm = &p->header.sections[k];
        char where[64];
        section_text(TRN_SEC_BIOME_MATERIALS, where, sizeof where);
        st = fail(r, TRN_ERR_FORMAT, where, bm ? bm->offset : 0,
                  "%u biomes; the biome section has %u", p->biome_material_count, p->biome_count);
    }
    if (!st) index_layers(p);
    if (st) {
        trn_payload_free(p);
        return st;
    }
    *out = p;
    return TRN_OK;
}

trn_status trn_payload_open_memory(const void *data, size_t size, const char *name,
                                   const trn_payload_limits *limits, trn_payload **out,
                                   trn_error *err)
{
    trn_error_clear(err);
    if (!out)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, name, -1,
                             "trn_payload_open_memory: out is required");
    *out = NULL;
    if (!data && size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, name, -1,
                             "trn_payload_open_memory: no data");
    reader r = {name ? name : "payload", data, size, {0, 0, 0}, err};
    if (limits)
        r.limits = *limits;
    else
        trn_payload_limits_default(&r.limits);
    return decode(&r, out);
}

trn_status trn_payload_open(const char *path, const trn_payload_limits *limits, trn_payload **out,
                            trn_error *err)
{
    trn_error_clear(err);
    if (!out || !path)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_payload_open: path and out are required");
    *out = NULL;
    const uint8_t *data;
    size_t size;
    void *base;
    trn_status st = map_file(path, &data, &size, &base, err);
    if (st) return st;
    st = trn_payload_open_memory(data, size, path, limits, out, err);
    if (base) munmap(base, size);
    return st;
}

static void info_from_header(const trn_payload_header *h, trn_payload_info *info)
{
    memset(info, 0, sizeof *info);
    info->format_version = h->format_version;
    info->generator_version = h->generator_version;
    info->generator = h->generator;
    info->terrain_id = h->terrain_id;
    info->cache_key = h->cache_key;
    info->palette_digest = h->palette_digest;
    info->material_digest = h->material_digest;
    info->cells_x = h->cells_x;
    info->cells_z = h->cells_z;
    info->size_x = h->size_x;
    info->size_z = h->size_z;
    info->sea_level = h->sea_level;
    info->section_count = h->section_count;
}

trn_status trn_payload_peek(const char *path, trn_payload_info *info, char **storage,
                            trn_error *err)
{
    trn_error_clear(err);
    if (!path || !info || !storage)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, path, -1,
                             "trn_payload_peek: path, info and storage are required");
    *storage = NULL;
    memset(info, 0, sizeof *info);
    const uint8_t *data;
    size_t size;
    void *base;
    trn_status st = map_file(path, &data, &size, &base, err);
    if (st) return st;
    reader r = {path, data, size, {0, 0, 0}, err};
    trn_payload_limits_default(&r.limits);
    r.limits.max_samples = UINT64_MAX; /* a look at the header allocates nothing */
    r.limits.max_section_bytes = UINT64_MAX;
    trn_payload_header h;
    st = parse_header(&r, &h);
    if (base) munmap(base, size);
    if (!st) {
        const size_t gl = strlen(h.generator), il = strlen(h.terrain_id);
        char *block = malloc(gl + il + 2u);
        if (!block) {
            st = trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
        } else {
            memcpy(block, h.generator, gl + 1u);
            memcpy(block + gl + 1u, h.terrain_id, il + 1u);
            info_from_header(&h, info);
            info->generator = block;
            info->terrain_id = block + gl + 1u;
            *storage = block;
        }
    }
    header_dispose(&h);
    return st;
}

/* ---- getters ---- */

void trn_payload_get_info(const trn_payload *p, trn_payload_info *info)
{
    if (!info) return;
    if (!p) {
        memset(info, 0, sizeof *info);
        return;
    }
    info_from_header(&p->header, info);
}

bool trn_payload_section_at(const trn_payload *p, uint32_t index, trn_payload_section *out)
{
    if (!p || !out || index >= p->header.section_count) return false;
    *out = p->header.sections[index];
    return true;
}

const trn_field *trn_payload_field(const trn_payload *p)
{
    return p ? &p->field : NULL;
}

const uint8_t *trn_payload_biomes(const trn_payload *p)
{
    return p ? p->biomes : NULL;
}

uint32_t trn_payload_biome_count(const trn_payload *p)
{
    return p ? p->biome_count : 0;
}

const char *trn_payload_biome_name(const trn_payload *p, uint32_t label)
{
    return p && label < p->biome_count ? p->biome_names[label] : NULL;
}

uint32_t trn_payload_ledger_count(const trn_payload *p)
{
    return p && p->ledgers ? p->ledger_count : 0;
}

const char *trn_payload_ledger_at(const trn_payload *p, uint32_t index, trn_erosion_ledger *out)
{
    if (!p || !p->ledgers || index >= p->ledger_count) return NULL;
    if (out) *out = p->ledgers[index];
    return p->ledger_ids[index];
}

/* Here, not with the material set's parser, so the runtime alone (the Lua module) has it. */
const char *trn_mapping_array_name(int index)
{
    static const char *const names[TRN_MAPPING_ARRAY_COUNT] = {"albedo", "normal", "orm_height",
                                                               "detail_normal", "emissive"};
    return index >= 0 && index < TRN_MAPPING_ARRAY_COUNT ? names[index] : NULL;
}

const trn_material_mapping *trn_payload_mapping(const trn_payload *p)
{
    return p && p->set.mapping.present ? &p->set.mapping : NULL;
}

uint32_t trn_payload_layer_count(const trn_payload *p)
{
    return p ? p->layer_count : 0;
}

bool trn_payload_layer_maps(const trn_payload *p, uint32_t layer, double *texture_scale,
                            const char *maps[TRN_MAP_COUNT])
{
    const char *id = p && layer < p->layer_count ? p->layers[layer] : NULL;
    for (uint32_t k = 0; id && k < p->doc_count; k++) {
        if (strcmp(p->docs[k].id, id) != 0) continue;
        if (texture_scale) *texture_scale = p->docs[k].texture_scale;
        for (int q = 0; maps && q < TRN_MAP_COUNT; q++) maps[q] = p->docs[k].maps[q];
        return true;
    }
    if (texture_scale) *texture_scale = 1.0;
    for (int q = 0; maps && q < TRN_MAP_COUNT; q++) maps[q] = "";
    return false;
}

const char *trn_payload_layer_material(const trn_payload *p, uint32_t layer)
{
    return p && layer < p->layer_count ? p->layers[layer] : NULL;
}

int trn_payload_layer_of_sample(const trn_payload *p, size_t sample)
{
    if (!p || sample >= p->header.samples) return -1;
    const uint8_t b = p->biomes[sample];
    if (b != TRN_LABEL_NONE && b < TRN_PAYLOAD_MAX_BIOMES && p->biome_layer[b] >= 0)
        return p->biome_layer[b];
    const uint8_t r = p->roles ? p->roles[sample] : TRN_ROLE_NONE;
    return r < TRN_ROLE_COUNT ? p->role_layer[r] : -1;
}

const char *trn_payload_biome_material(const trn_payload *p, uint32_t label)
{
    return p && p->biome_materials && label < p->biome_count ? p->biome_materials[label] : NULL;
}

double trn_payload_biome_texture_scale(const trn_payload *p, uint32_t label)
{
    if (!p || label >= p->biome_count) return NAN;
    return p->biome_texture_scales ? p->biome_texture_scales[label] : 1.0;
}

bool trn_payload_biome_color(const trn_payload *p, uint32_t label, float rgba[4])
{
    if (!p || !rgba || label >= p->biome_count) return false;
    memcpy(rgba, p->biome_colors[label], 4 * sizeof(float));
    return true;
}

const uint8_t *trn_payload_exclusion(const trn_payload *p)
{
    return p ? p->exclusion : NULL;
}

const uint8_t *trn_payload_roles(const trn_payload *p)
{
    return p ? p->roles : NULL;
}

const trn_material_set *trn_payload_material_set(const trn_payload *p)
{
    return p && p->has_set ? &p->set : NULL;
}

const trn_water *trn_payload_water(const trn_payload *p)
{
    return p && p->has_water ? &p->water : NULL;
}

const char *trn_payload_recipe_json(const trn_payload *p, size_t *size)
{
    if (size) *size = p ? p->recipe_size : 0;
    return p ? p->recipe_json : NULL;
}

uint32_t trn_payload_rule_count(const trn_payload *p)
{
    return p ? p->rule_count : 0;
}

bool trn_payload_rule_at(const trn_payload *p, uint32_t index, trn_payload_rule *out)
{
    if (!p || !out || index >= p->rule_count) return false;
    const trn_payload_rule_data *d = &p->rules[index];
    out->id = d->id;
    out->model = d->prefab ? NULL : d->ref;
    out->prefab = d->prefab ? d->ref : NULL;
    out->collision = d->collision;
    out->category = d->category;
    return true;
}

const trn_instance *trn_payload_instances(const trn_payload *p, size_t *count)
{
    if (count) *count = p ? p->instance_count : 0;
    return p ? p->instances : NULL;
}

/* ---- terrain-local queries ---- */

static bool on_grid(const trn_payload *p, double x, double z)
{
    return p && x >= 0.0 && x <= p->field.size_x && z >= 0.0 && z <= p->field.size_z;
}

double trn_payload_height_at(const trn_payload *p, double x, double z)
{
    if (!on_grid(p, x, z)) return NAN;
    return trn_field_height_at(&p->field, x, z);
}

bool trn_payload_normal_at(const trn_payload *p, double x, double z, double normal[3])
{
    if (!on_grid(p, x, z) || !normal) return false;
    const trn_field *f = &p->field;
    uint32_t i, j;
    double u, v;
    trn_tri_locate(x, z, f->cells_x, f->cells_z, f->size_x, f->size_z, &i, &j, &u, &v);
    const size_t nx = (size_t)f->cells_x + 1u, k = (size_t)j * nx + i;
    const double h00 = f->heights[k], h10 = f->heights[k + 1], h01 = f->heights[k + nx],
                 h11 = f->heights[k + nx + 1];
    /* The gradient of the triangle trn_tri_interp uses (u >= v: 00-10-11). */
    const double dhdu = u >= v ? h10 - h00 : h11 - h01, dhdv = u >= v ? h11 - h10 : h01 - h00;
    const double dx = dhdu * (double)f->cells_x / f->size_x,
                 dz = dhdv * (double)f->cells_z / f->size_z;
    const double len = sqrt(dx * dx + 1.0 + dz * dz);
    if (!isfinite(len)) return false;
    normal[0] = -dx / len;
    normal[1] = 1.0 / len;
    normal[2] = -dz / len;
    return true;
}

/* Index of the sample nearest (x, z), rounding half up; false outside the grid. */
static bool nearest(const trn_payload *p, double x, double z, size_t *k)
{
    if (!on_grid(p, x, z)) return false;
    double fi = floor(x * (double)p->field.cells_x / p->field.size_x + 0.5);
    double fj = floor(z * (double)p->field.cells_z / p->field.size_z + 0.5);
    if (fi > (double)p->field.cells_x) fi = (double)p->field.cells_x;
    if (fj > (double)p->field.cells_z) fj = (double)p->field.cells_z;
    *k = (size_t)fj * ((size_t)p->field.cells_x + 1u) + (size_t)fi;
    return true;
}

int trn_payload_biome_at(const trn_payload *p, double x, double z)
{
    size_t k;
    if (!nearest(p, x, z, &k) || !p->biomes) return -1;
    return p->biomes[k] == TRN_LABEL_NONE ? -1 : (int)p->biomes[k];
}

int trn_payload_layer_at(const trn_payload *p, double x, double z)
{
    size_t k;
    return nearest(p, x, z, &k) ? trn_payload_layer_of_sample(p, k) : -1;
}

int trn_payload_role_at(const trn_payload *p, double x, double z)
{
    size_t k;
    if (!nearest(p, x, z, &k) || !p->roles) return -1;
    return p->roles[k] == TRN_ROLE_NONE ? -1 : (int)p->roles[k];
}

bool trn_payload_water_at(const trn_payload *p, double x, double y, double z, trn_water_sample *out)
{
    if (!p || !p->has_water) {
        if (out) {
            memset(out, 0, sizeof *out);
            out->body = -1;
        }
        return false;
    }
    return trn_water_query(&p->water, &p->field, x, y, z, out);
}
