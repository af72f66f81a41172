/* A disk tile cache: whole-grid float arrays kept tile by tile as node cache files. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "core/paths.h"
#include "graph/node_result.h"
#include "graph/tile_store.h"

/* Decoded tiles kept between reads: a window grown by a halo meets up to four tiles, and the
 * next tile's window meets two of them again. */
#define STORE_CACHED 8u

typedef struct cached_tile {
    uint64_t fkey; /* 0: empty */
    trn_node_result *r;
    uint64_t used;
} cached_tile;

struct trn_tile_store {
    char *dir;
    uint32_t sx, sz, tile, ntx, ntz;
    uint64_t *files; /* keys of the files written, to remove them */
    size_t nfiles, cap;
    uint64_t bytes, clock;
    cached_tile cache[STORE_CACHED];
};

/* The file's key: the array's key, its pin and the tile, hashed. */
static uint64_t file_key(uint64_t key, uint32_t pin, uint32_t tx, uint32_t tz)
{
    const uint64_t parts[4] = {key, pin, tx, tz};
    uint64_t k = XXH64(parts, sizeof parts, 0x54494C45u /* "TILE" */);
    return k ? k : 1u;
}

/* Tile (tx, tz) as stored: its samples, grown to at least 2 samples each way (a node result
 * holds at least one cell). */
static void stored_axis(uint32_t t, uint32_t size, uint32_t world, uint32_t *a, uint32_t *n)
{
    uint32_t lo = t * size, len = world - lo < size ? world - lo : size;
    if (len < 2u) {
        if (lo + 2u <= world)
            len = 2u;
        else {
            lo = world - 2u;
            len = 2u;
        }
    }
    *a = lo;
    *n = len;
}

trn_status trn_tile_store_open(const char *parent, uint32_t sx, uint32_t sz, uint32_t tile,
                               trn_tile_store **out, trn_error *err)
{
    *out = NULL;
    if (!parent || !*parent || sx < 2 || sz < 2 || tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tile cache: a folder, a grid of at least 2 x 2 samples and a tile "
                             "are required");
    trn_status st = trn_mkdir_p(parent, err);
    if (st) return st;
    trn_tile_store *s = calloc(1, sizeof *s);
    const size_t len = strlen(parent) + 32u;
    if (s) s->dir = malloc(len);
    if (!s || !s->dir) {
        free(s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, parent, -1, "tile cache: out of memory");
    }
    snprintf(s->dir, len, "%s/terrane-tiles-XXXXXX", parent);
    if (!mkdtemp(s->dir)) {
        st = trn_error_set(err, TRN_ERR_IO, parent, -1,
                           "tile cache: cannot make a folder in %s for the tiles", parent);
        free(s->dir);
        free(s);
        return st;
    }
    s->sx = sx;
    s->sz = sz;
    s->tile = tile;
    s->ntx = (uint32_t)(((uint64_t)sx + tile - 1u) / tile);
    s->ntz = (uint32_t)(((uint64_t)sz + tile - 1u) / tile);
    *out = s;
    return TRN_OK;
}

trn_status trn_tile_store_open_in(const char *dir, uint32_t sx, uint32_t sz, uint32_t tile,
                                  trn_tile_store **out, trn_error *err)
{
    *out = NULL;
    if (!dir || !*dir || sx < 2 || sz < 2 || tile < 1)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "tile cache: a folder, a grid of at least 2 x 2 samples and a tile "
                             "are required");
    trn_tile_store *s = calloc(1, sizeof *s);
    if (s) s->dir = malloc(strlen(dir) + 1u);
    if (!s || !s->dir) {
        free(s);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, dir, -1, "tile cache: out of memory");
    }
    strcpy(s->dir, dir);
    s->sx = sx;
    s->sz = sz;
    s->tile = tile;
    s->ntx = (uint32_t)(((uint64_t)sx + tile - 1u) / tile);
    s->ntz = (uint32_t)(((uint64_t)sz + tile - 1u) / tile);
    *out = s;
    return TRN_OK;
}

uint32_t trn_tile_store_tile(const trn_tile_store *s)
{
    return s->tile;
}

static trn_status oom(const trn_tile_store *s, trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, s->dir, -1, "tile cache: out of memory");
}

static trn_gbuf *cut(const float *whole, uint32_t sx, uint32_t x0, uint32_t z0, uint32_t nx,
                     uint32_t nz)
{
    trn_gbuf *b = trn_gbuf_new((size_t)nx * nz, sizeof(float));
    if (!b) return NULL;
    for (uint32_t j = 0; j < nz; j++)
        memcpy((float *)b->data + (size_t)j * nx, whole + (size_t)(z0 + j) * sx + x0,
               (size_t)nx * sizeof(float));
    return b;
}

trn_status trn_tile_store_put(trn_tile_store *s, uint64_t key, uint32_t pin, const float *values,
                              const float *transport, trn_error *err)
{
    return trn_tile_store_put_rows(s, key, pin, 0, s->sz, values, transport, err);
}

/* Write tile result r (file key fk) into the folder and list it for removal; releases r. */
static trn_status keep(trn_tile_store *s, trn_node_result *r, uint64_t fk, trn_error *err)
{
    if (s->nfiles == s->cap) {
        const size_t cap = s->cap ? 2u * s->cap : 64u;
        uint64_t *f = realloc(s->files, cap * sizeof *f);
        if (!f) {
            trn_node_result_release(r);
            return oom(s, err);
        }
        s->files = f;
        s->cap = cap;
    }
    trn_status st = trn_node_result_write_file(s->dir, r, err);
    trn_node_result_release(r);
    if (st) return st;
    s->files[s->nfiles++] = fk;
    char *p = malloc(strlen(s->dir) + 32u);
    if (p) {
        sprintf(p, "%s/%016llx.tnc", s->dir, (unsigned long long)fk);
        struct stat sb;
        if (stat(p, &sb) == 0) s->bytes += (uint64_t)sb.st_size;
        free(p);
    }
    return TRN_OK;
}

trn_status trn_tile_store_put_tile(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t tx,
                                   uint32_t tz, const float *values, const float *transport,
                                   trn_error *err)
{
    uint32_t x0, z0, nx, nz;
    stored_axis(tx, s->tile, s->sx, &x0, &nx);
    stored_axis(tz, s->tile, s->sz, &z0, &nz);
    /* The tile's own samples start at (ox, oz) in the stored one (1 where a one-sample tile
     * row or column is stored with the sample before it). */
    const uint32_t ox = tx * s->tile - x0, oz = tz * s->tile - z0;
    const uint32_t w = s->sx - tx * s->tile < s->tile ? s->sx - tx * s->tile : s->tile;
    const uint32_t h = s->sz - tz * s->tile < s->tile ? s->sz - tz * s->tile : s->tile;
    const uint64_t fk = file_key(key, pin, tx, tz);
    trn_node_result *r =
        trn_node_result_new(fk, nx - 1u, nz - 1u, (double)(nx - 1u), (double)(nz - 1u));
    if (!r) return oom(s, err);
    r->output_count = transport ? 2u : 1u;
    const float *src[2] = {values, transport};
    for (uint32_t b = 0; b < r->output_count; b++) {
        r->outputs[b].kind = TRN_PIN_MASK;
        trn_gbuf *g = trn_gbuf_new((size_t)nx * nz, sizeof(float));
        if (!g) {
            trn_node_result_release(r);
            return oom(s, err);
        }
        r->outputs[b].values = g;
        float *d = g->data;
        for (uint32_t j = 0; j < nz; j++) {
            const uint32_t sj = j < oz ? 0u : j - oz < h ? j - oz : h - 1u;
            for (uint32_t i = 0; i < nx; i++) {
                const uint32_t si = i < ox ? 0u : i - ox < w ? i - ox : w - 1u;
                d[(size_t)j * nx + i] = src[b][(size_t)sj * w + si];
            }
        }
    }
    return keep(s, r, fk, err);
}

trn_status trn_tile_store_put_rows(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t row0,
                                   uint32_t rows, const float *values, const float *transport,
                                   trn_error *err)
{
    /* Each tile row whose stored samples lie in the rows given and that starts at or after
     * row0 (a tile row of one sample is stored with the row below it). */
    for (uint32_t tz = (uint32_t)(((uint64_t)row0 + s->tile - 1u) / s->tile); tz < s->ntz; tz++)
        for (uint32_t tx = 0; tx < s->ntx; tx++) {
            uint32_t x0, z0, nx, nz;
            stored_axis(tx, s->tile, s->sx, &x0, &nx);
            stored_axis(tz, s->tile, s->sz, &z0, &nz);
            if (z0 < row0 || (uint64_t)z0 + nz > (uint64_t)row0 + rows) return TRN_OK;
            z0 -= row0;
            const uint64_t fk = file_key(key, pin, tx, tz);
            /* The grid's extent is a label here: one world unit a cell. */
            trn_node_result *r =
                trn_node_result_new(fk, nx - 1u, nz - 1u, (double)(nx - 1u), (double)(nz - 1u));
            if (!r) return oom(s, err);
            r->output_count = transport ? 2u : 1u;
            r->outputs[0].kind = TRN_PIN_MASK;
            r->outputs[1].kind = TRN_PIN_MASK;
            if (!(r->outputs[0].values = cut(values, s->sx, x0, z0, nx, nz)) ||
                (transport && !(r->outputs[1].values = cut(transport, s->sx, x0, z0, nx, nz)))) {
                trn_node_result_release(r);
                return oom(s, err);
            }
            trn_status st = keep(s, r, fk, err);
            if (st) return st;
        }
    return TRN_OK;
}

/* Tile (tx, tz) of array (key, pin), decoded (a borrowed reference, kept in the cache). */
static trn_status tile_of(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t tx, uint32_t tz,
                          const trn_node_result **out, trn_error *err)
{
    const uint64_t fk = file_key(key, pin, tx, tz);
    cached_tile *slot = &s->cache[0];
    for (uint32_t c = 0; c < STORE_CACHED; c++) {
        if (s->cache[c].fkey == fk) {
            s->cache[c].used = ++s->clock;
            *out = s->cache[c].r;
            return TRN_OK;
        }
        if (s->cache[c].used < slot->used) slot = &s->cache[c];
    }
    trn_cache_file_limits limits;
    trn_cache_file_limits_default(&limits);
    trn_node_result *r = NULL;
    trn_status st = trn_node_result_read_file(s->dir, fk, &limits, &r, err);
    if (st) return st;
    trn_node_result_release(slot->r);
    slot->fkey = fk;
    slot->r = r;
    slot->used = ++s->clock;
    *out = r;
    return TRN_OK;
}

trn_status trn_tile_store_read(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t x0,
                               uint32_t z0, uint32_t nx, uint32_t nz, float *values,
                               float *transport, trn_error *err)
{
    const uint32_t t = s->tile;
    for (uint32_t tz = z0 / t; tz <= (z0 + nz - 1u) / t; tz++)
        for (uint32_t tx = x0 / t; tx <= (x0 + nx - 1u) / t; tx++) {
            const trn_node_result *r;
            trn_status st = tile_of(s, key, pin, tx, tz, &r, err);
            if (st) return st;
            uint32_t ax, az, anx, anz;
            stored_axis(tx, t, s->sx, &ax, &anx);
            stored_axis(tz, t, s->sz, &az, &anz);
            /* The samples the tile owns, within the window. */
            const uint32_t ox0 = tx * t, oz0 = tz * t;
            const uint32_t ox1 = ox0 + t < s->sx ? ox0 + t : s->sx;
            const uint32_t oz1 = oz0 + t < s->sz ? oz0 + t : s->sz;
            const uint32_t cx0 = ox0 > x0 ? ox0 : x0, cz0 = oz0 > z0 ? oz0 : z0;
            const uint32_t cx1 = ox1 < x0 + nx ? ox1 : x0 + nx;
            const uint32_t cz1 = oz1 < z0 + nz ? oz1 : z0 + nz;
            const float *src[2] = {r->outputs[0].values->data,
                                   r->output_count > 1 ? r->outputs[1].values->data : NULL};
            float *dst[2] = {values, transport};
            for (int b = 0; b < 2; b++) {
                if (!src[b] || !dst[b]) continue;
                for (uint32_t z = cz0; z < cz1; z++)
                    memcpy(dst[b] + (size_t)(z - z0) * nx + (cx0 - x0),
                           src[b] + (size_t)(z - az) * anx + (cx0 - ax),
                           (size_t)(cx1 - cx0) * sizeof(float));
            }
        }
    return TRN_OK;
}

uint64_t trn_tile_store_bytes(const trn_tile_store *s)
{
    return s ? s->bytes : 0u;
}

const char *trn_tile_store_dir(const trn_tile_store *s)
{
    return s ? s->dir : "";
}

void trn_tile_store_close(trn_tile_store *s)
{
    if (!s) return;
    for (uint32_t c = 0; c < STORE_CACHED; c++)
        trn_node_result_release(s->cache[c].r);
    char *p = malloc(strlen(s->dir) + 32u);
    for (size_t k = 0; p && k < s->nfiles; k++) {
        sprintf(p, "%s/%016llx.tnc", s->dir, (unsigned long long)s->files[k]);
        (void)remove(p);
    }
    free(p);
    (void)rmdir(s->dir);
    free(s->files);
    free(s->dir);
    free(s);
}
