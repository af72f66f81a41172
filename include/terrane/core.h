/* terrane core: status codes, error reports, progress, and the in-memory grid types. */
#ifndef TERRANE_CORE_H
#define TERRANE_CORE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRN_VERSION_MAJOR 0
#define TRN_VERSION_MINOR 1
#define TRN_VERSION_PATCH 0
#define TRN_VERSION_STRING "0.1.0"

/* Status codes. Never renumbered; new codes are appended. */
typedef enum trn_status {
    TRN_OK = 0,
    TRN_ERR_INVALID_ARGUMENT = 1, /* a caller passed something impossible */
    TRN_ERR_NO_MEMORY = 2,
    TRN_ERR_IO = 3,          /* open/read/write/rename failed; errno text in the message */
    TRN_ERR_NOT_FOUND = 4,   /* a file or named item does not exist */
    TRN_ERR_TRUNCATED = 5,   /* input ended inside a section */
    TRN_ERR_FORMAT = 6,      /* input is malformed or not the expected format */
    TRN_ERR_VERSION = 7,     /* version newer than supported */
    TRN_ERR_LIMIT = 8,       /* input exceeds a limits struct bound */
    TRN_ERR_OVERFLOW = 9,    /* size arithmetic would overflow */
    TRN_ERR_UNSUPPORTED = 10, /* valid input that this build cannot handle */
    TRN_ERR_CANCELLED = 11,  /* the progress callback asked to stop */
    TRN_ERR_TRAILING_DATA = 12, /* bytes left after the last section */
    TRN_ERR_JSON = 13,       /* JSON syntax or schema error; line/column set */
    TRN_ERR_VALIDATION = 14, /* checks ran and found problems */
    TRN_ERR_MISMATCH = 15,   /* two inputs disagree (sizes, grids) */
    TRN_ERR_CONFLICT = 16,   /* an output would replace an input of the same run */
} trn_status;

/* Stable upper-case name of a status ("TRN_ERR_TRUNCATED"); never NULL. */
const char *trn_status_name(trn_status status);

/* Where and why a call failed. Every field is optional; unknown numbers are -1 / 0. */
typedef struct trn_error {
    trn_status code;
    char message[512];
    char file[512];   /* path of the file being read or written, "" if none */
    int64_t offset;   /* byte offset in file, -1 if not applicable */
    int line, column; /* 1-based JSON/text position, 0 if not applicable */
    char node_id[64]; /* graph node id, "" if none */
    /* With node_id: the JSON path of the value inside the node's object
     * ("params.overrides[1].level"), so a caller holding the document can point at it; "" if
     * none. */
    char node_path[128];
} trn_error;

/* Reset an error to "no error" (offset -1). NULL is a no-op. */
void trn_error_clear(trn_error *err);

/* Fill err (if non-NULL) and return code. file may be NULL; offset -1 if unknown. */
trn_status trn_error_set(trn_error *err, trn_status code, const char *file, int64_t offset,
                         const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Set the JSON/text position of an error already filled. NULL is a no-op. */
void trn_error_set_position(trn_error *err, int line, int column);

/* One line "file: offset N: message" (or "file:line:col: message") into buf. Returns buf. */
const char *trn_error_format(const trn_error *err, char *buf, size_t buf_size);

/* Progress: done in 0..1, stage is a short label, valid only during the call (copy it to keep
 * it). Return TRN_CANCEL to stop the work, which then returns TRN_ERR_CANCELLED and leaves its
 * outputs untouched. */
#define TRN_CONTINUE 0
#define TRN_CANCEL 1
typedef int (*trn_progress_fn)(double done, const char *stage, void *user);

/* A heightfield: cells_x * cells_z cells over size_x * size_z terrain-local world units,
 * so (cells_x+1) * (cells_z+1) float samples, row by row (z), x fastest. Sample (i, j) sits at
 * x = i*size_x/cells_x, z = j*size_z/cells_z; index j*(cells_x+1)+i. Heights are metres (+Y). */
typedef struct trn_field {
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    float *heights;
    /* When the heights came from 16-bit storage: metres per stored unit and the metres of
     * stored 0, so writers can recover the stored values exactly. 0 / 0 when not quantised. */
    double quantum;
    double quantum_base;
} trn_field;

/* Where a grid that covers part of a larger world grid sits (a tile): its sample (i, j) is
 * world sample (x0 + i, z0 + j) of a world of world_cells and world_size; positions are
 * computed from the world sample index exactly as on the whole world, so tiles assemble into
 * the whole world's bytes. */
typedef struct trn_sample_window {
    uint32_t x0, z0;
    uint32_t world_cells_x, world_cells_z;
    double world_size_x, world_size_z;
} trn_sample_window;

/* A 0..1 mask over the same grid layout as a field. */
typedef struct trn_mask {
    uint32_t cells_x, cells_z;
    float *values;
} trn_mask;

/* Small-integer labels (materials, biomes) over the same grid layout with a name table.
 * TRN_LABEL_NONE (255) is "none / hole" where a format needs it. */
#define TRN_LABEL_NONE 255u
typedef struct trn_labels {
    uint32_t cells_x, cells_z;
    uint8_t *values;
    char **names; /* names[i] is the label i's name (NUL-terminated, owned) */
    uint32_t name_count;
} trn_labels;

/* Samples per row and per column of a grid of cells. */
static inline size_t trn_grid_samples_x(uint32_t cells_x)
{
    return (size_t)cells_x + 1u;
}

/* Allocate a field with all heights 0. Fails with TRN_ERR_OVERFLOW / TRN_ERR_NO_MEMORY. */
trn_status trn_field_init(trn_field *field, uint32_t cells_x, uint32_t cells_z, double size_x,
                          double size_z, trn_error *err);
/* Free a field's heights and zero it. NULL is a no-op. */
void trn_field_dispose(trn_field *field);
/* Number of samples; 0 on overflow. */
size_t trn_field_sample_count(const trn_field *field);
/* Lowest and highest height (ignores NaN). */
void trn_field_range(const trn_field *field, float *min_out, float *max_out);

trn_status trn_mask_init(trn_mask *mask, uint32_t cells_x, uint32_t cells_z, trn_error *err);
void trn_mask_dispose(trn_mask *mask);

trn_status trn_labels_init(trn_labels *labels, uint32_t cells_x, uint32_t cells_z,
                           trn_error *err);
/* Append a copy of name to the table. */
trn_status trn_labels_add_name(trn_labels *labels, const char *name, size_t name_len,
                               trn_error *err);
void trn_labels_dispose(trn_labels *labels);

/* Write a file atomically: data goes to a temporary file beside path which is fsynced and
 * renamed over path, so an existing file is never left half-written. */
trn_status trn_file_write_atomic(const char *path, const void *data, size_t size, trn_error *err);

/* Read a whole file into a malloc'd buffer (caller frees). max_size bounds it (0 = 4 GiB). */
trn_status trn_file_read_all(const char *path, size_t max_size, uint8_t **data_out,
                             size_t *size_out, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
