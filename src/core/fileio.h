/* File input and output helpers: mapped reads and atomic streaming writes (internal). */
#ifndef TRN_CORE_FILEIO_H
#define TRN_CORE_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "terrane/core.h"

#include "core/paths.h"

/* A read-only view of a whole regular file: mmap for large files, a heap copy for small ones.
 * Pipes, devices and sockets are refused (TRN_ERR_IO), without blocking on a FIFO. data is NULL
 * for an empty file. */
typedef struct trn_mapped_file {
    const uint8_t *data;
    size_t size;
    void *map_base; /* non-NULL when mmap'd */
    uint8_t *heap;  /* non-NULL when read into memory */
} trn_mapped_file;

/* Open path read-only. max_size 0 means no limit beyond SIZE_MAX. */
trn_status trn_mapped_file_open(trn_mapped_file *mf, const char *path, uint64_t max_size,
                                trn_error *err);
void trn_mapped_file_close(trn_mapped_file *mf);

/* Streaming atomic writer: writes go to "<path>.tmp-XXXXXX" beside path, locked while open and
 * registered for trn_io_remove_temporaries; commit fsyncs and renames it over path; abort (or a
 * failed commit) removes it and leaves path untouched. Opening first removes stale temporaries
 * of path left by dead runs. */
typedef struct trn_atomic_file {
    FILE *fp;
    char *final_path;
    char *temp_path;
    bool failed;
    int saved_errno;
} trn_atomic_file;

trn_status trn_atomic_file_open(trn_atomic_file *af, const char *path, trn_error *err);
/* Append bytes; errors are remembered and reported by commit. */
void trn_atomic_file_write(trn_atomic_file *af, const void *data, size_t size);
/* Append len bytes of in_fd from offset, copied inside the kernel where it can be
 * (copy_file_range, else sendfile, else through a 1 MiB buffer): the bytes never pass through
 * a fresh user-space buffer. Buffered writes before it are flushed first; write nothing through
 * the stream after it. Errors are remembered for commit; returns false on an error or when the
 * input ends before len bytes (then sets the error to EIO). */
bool trn_atomic_file_copy(trn_atomic_file *af, int in_fd, uint64_t offset, size_t len);
/* For tests: 0 copies the fastest way the system offers, 1 starts at sendfile, 2 uses the
 * buffer alone (the fallbacks of systems without the kernel copies). Process-wide. */
void trn_atomic_file_copy_way(int way);
trn_status trn_atomic_file_commit(trn_atomic_file *af, trn_error *err);
void trn_atomic_file_abort(trn_atomic_file *af);

/* "a pipe (FIFO)", "a character device", ... for a st_mode, for messages. */
const char *trn_file_kind(unsigned mode);

#endif
