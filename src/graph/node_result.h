/* What one node evaluation produced, shared by reference between runs and the cache (internal). */
#ifndef TRN_GRAPH_NODE_RESULT_H
#define TRN_GRAPH_NODE_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/drainage.h"
#include "terrane/erosion.h"
#include "terrane/graph.h"
#include "terrane/palette.h"
#include "terrane/water.h"

/* A reference-counted array: pass-through outputs (Biome Rules' field, the heights a drainage
 * result keeps) share their upstream's samples instead of copying them. */
typedef struct trn_gbuf {
    uint32_t refs;
    size_t count;     /* elements */
    size_t elem_size; /* bytes per element */
    void *data;
    void (*dispose)(void *data); /* frees what data owns before data itself; NULL: nothing */
} trn_gbuf;

/* count elements of elem_size bytes, zeroed; NULL on overflow or no memory. refs = 1. */
trn_gbuf *trn_gbuf_new(size_t count, size_t elem_size);
/* Takes ownership of data (malloc'd, count * elem_size bytes); frees data on failure. */
trn_gbuf *trn_gbuf_wrap(void *data, size_t count, size_t elem_size);
/* A resolved water (malloc'd struct, owned from now on; disposed and freed with the buffer). */
trn_gbuf *trn_gbuf_wrap_water(trn_water *water);
/* Instances (malloc'd struct, owned from now on; its items freed with the buffer). */
trn_gbuf *trn_gbuf_wrap_instances(trn_instances *instances);
trn_gbuf *trn_gbuf_retain(trn_gbuf *buf); /* NULL-safe, returns buf */
void trn_gbuf_release(trn_gbuf *buf);     /* NULL-safe */

/* One output pin's value. */
typedef struct trn_gout {
    trn_pin_kind kind;
    trn_gbuf *values; /* heightfield / mask: samples floats */
    /* heightfield: signed erosion transport of these heights (samples floats, metres, < 0 cut,
     * > 0 deposition); drainage: its source field's. NULL: no erosion upstream. */
    trn_gbuf *transport;
    /* drainage: */
    trn_gbuf *source;       /* float heights the drainage was computed from */
    trn_gbuf *filled;       /* float */
    trn_gbuf *flow_dir;     /* uint8_t */
    trn_gbuf *accumulation; /* uint32_t */
    trn_gbuf *basins;       /* trn_basin */
    double sea_level;       /* NaN = no sea */
    trn_drainage view;      /* points into the buffers above (owns nothing) */
    /* water: one trn_water (trn_gbuf_wrap_water), shared by the nodes that pass it on */
    trn_gbuf *water;
    /* instances: one trn_instances (trn_gbuf_wrap_instances), candidates of a Scatter Palette */
    trn_gbuf *instances;
} trn_gout;

#define TRN_GRAPH_MAX_OUTPUTS 4u

typedef struct trn_node_result {
    uint32_t refs;
    uint64_t key;
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    uint32_t output_count;
    trn_gout outputs[TRN_GRAPH_MAX_OUTPUTS];
    trn_gbuf *change; /* erosion: signed height change per sample (float), else NULL */
    bool has_ledger;
    trn_erosion_ledger ledger;
    bool biome_rules;   /* a Biome Rules node is upstream of (or is) this result's field */
    char note[256];     /* what the node wants said (truncated proposals, a route's end), or "" */
    double cpu_seconds; /* what computing it cost */
    size_t bytes;       /* memory it holds (shared buffers counted once per result) */
} trn_node_result;

trn_node_result *trn_node_result_new(uint64_t key, uint32_t cells_x, uint32_t cells_z,
                                     double size_x, double size_z);
trn_node_result *trn_node_result_retain(trn_node_result *result);
void trn_node_result_release(trn_node_result *result); /* NULL-safe; frees at refs 0 */
/* Point a drainage output's view at its buffers (after they are set). */
void trn_gout_bind_drainage(trn_gout *out, uint32_t cells_x, uint32_t cells_z, double size_x,
                            double size_z);
/* Recount result->bytes from its buffers. */
void trn_node_result_measure(trn_node_result *result);

/* ---- the cache directory's files (src/graph/cache_file.c) ---- */

/* Bounds a cache file must respect (a corrupt or hostile file must not make us allocate
 * without limit). */
typedef struct trn_cache_file_limits {
    uint64_t max_samples; /* per array; default 1 << 30 */
    uint64_t max_basins;  /* default 1 << 26 */
    uint64_t max_instances; /* per instances output; default 1 << 27 */
} trn_cache_file_limits;

void trn_cache_file_limits_default(trn_cache_file_limits *limits);

/* Serialise a result (everything in trn_node_result except refs and bytes) to a malloc'd
 * buffer, little-endian, versioned, with a checksum. */
trn_status trn_node_result_serialize(const trn_node_result *result, uint8_t **data, size_t *size,
                                     trn_error *err);
/* Parse one through a bounded cursor: TRN_ERR_FORMAT / TRN_ERR_TRUNCATED / TRN_ERR_VERSION /
 * TRN_ERR_LIMIT naming the section and byte offset; a checksum mismatch is TRN_ERR_FORMAT.
 * expected_key != 0 must match the stored key (TRN_ERR_MISMATCH). path is for messages. */
trn_status trn_node_result_parse(const uint8_t *data, size_t size, const char *path,
                                 uint64_t expected_key, const trn_cache_file_limits *limits,
                                 trn_node_result **out, trn_error *err);
/* File helpers: DIR/<16 hex digits>.tnc, written atomically. */
trn_status trn_node_result_write_file(const char *dir, const trn_node_result *result,
                                      trn_error *err);
trn_status trn_node_result_read_file(const char *dir, uint64_t key,
                                     const trn_cache_file_limits *limits, trn_node_result **out,
                                     trn_error *err);
/* The header of DIR/<key>.tnc (magic, version, key, grid, cost) and its checksum, without
 * parsing the body into arrays: what `inspect` needs to say a result is cached. The body's
 * structure is checked in full when the result is used. */
trn_status trn_node_result_peek_file(const char *dir, uint64_t key,
                                     const trn_cache_file_limits *limits, double *cpu_seconds,
                                     trn_error *err);

#endif
