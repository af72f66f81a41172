/* A disk tile cache for the tiled evaluator (internal): whole-grid float arrays kept on disk
 * tile by tile in the node cache's file format, read back window by window. */
#ifndef TRN_GRAPH_TILE_STORE_H
#define TRN_GRAPH_TILE_STORE_H

#include <stdint.h>

#include "terrane/core.h"

typedef struct trn_tile_store trn_tile_store;

/* A fresh folder under parent (created when missing) for a grid of sx x sz samples cut into
 * tiles of tile samples. */
trn_status trn_tile_store_open(const char *parent, uint32_t sx, uint32_t sz, uint32_t tile,
                               trn_tile_store **out, trn_error *err);

/* A store in folder dir, which exists already and is shared with the stores of other processes
 * (each writes its own tiles, every one reads any): close removes this store's files and the
 * folder only once it is empty. */
trn_status trn_tile_store_open_in(const char *dir, uint32_t sx, uint32_t sz, uint32_t tile,
                                  trn_tile_store **out, trn_error *err);

/* The store's tile edge (samples). */
uint32_t trn_tile_store_tile(const trn_tile_store *s);

/* Tile (tx, tz) of array (key, pin): the samples it owns ([tx tile, ..) x [tz tile, ..), w x h
 * row-major, w and h the tile's own size) and their transport (NULL: none). A tile row or
 * column of one sample is padded as it is stored; reads never look at the padding. */
trn_status trn_tile_store_put_tile(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t tx,
                                   uint32_t tz, const float *values, const float *transport,
                                   trn_error *err);

/* Keep a whole-grid array (sx x sz floats, row-major) and its transport (NULL: none) as array
 * (key, pin), one file a tile; they read back bit for bit. */
trn_status trn_tile_store_put(trn_tile_store *s, uint64_t key, uint32_t pin, const float *values,
                              const float *transport, trn_error *err);

/* Rows [row0, row0 + rows) of such an array (values and transport hold those rows, sx floats a
 * row): the tile rows among them are written, those from row0 on whose stored samples lie in
 * the rows (a last tile row of one sample is stored with the row before it, so that row comes
 * too). Bands of whole tile rows in any order make the array trn_tile_store_put makes. */
trn_status trn_tile_store_put_rows(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t row0,
                                   uint32_t rows, const float *values, const float *transport,
                                   trn_error *err);

/* The window [x0, x0 + nx) x [z0, z0 + nz) of array (key, pin) into values (and transport,
 * when the array has one and transport is not NULL), nx floats a row. */
trn_status trn_tile_store_read(trn_tile_store *s, uint64_t key, uint32_t pin, uint32_t x0,
                               uint32_t z0, uint32_t nx, uint32_t nz, float *values,
                               float *transport, trn_error *err);

/* Bytes written so far (the files' sizes). */
uint64_t trn_tile_store_bytes(const trn_tile_store *s);
/* The folder (for messages). */
const char *trn_tile_store_dir(const trn_tile_store *s);

/* Remove the files and the folder; NULL-safe. */
void trn_tile_store_close(trn_tile_store *s);

#endif
