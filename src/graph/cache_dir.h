/* The node cache directory's budget (internal): least recently used results removed first. */
#ifndef TRN_GRAPH_CACHE_DIR_H
#define TRN_GRAPH_CACHE_DIR_H

#include <stdint.h>

/* Remove DIR's result files (16 hex digits + ".tnc"; nothing else is touched), the least
 * recently used first (modification time, then name), until their total is at most limit
 * bytes; keep (a file name, may be NULL) is never removed. Returns the bytes removed. */
uint64_t trn_cache_dir_trim(const char *dir, uint64_t limit, const char *keep);

/* Mark DIR/name as used now (its modification time), so trimming keeps it longest. */
void trn_cache_file_touch(const char *dir, const char *name);

#endif
