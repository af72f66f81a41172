/* Path and file-mode helpers shared by fileio and write_set (internal). */
#ifndef TRN_CORE_PATHS_H
#define TRN_CORE_PATHS_H

#include <stdbool.h>

#include "terrane/core.h"

/* Give a freshly made temporary (mkstemp's 0600) the mode a new output gets: 0666 less the
 * process umask, as any program's fopen would create it. */
void trn_file_output_mode(int fd);
/* Give fd (a new version of dest) dest's mode, owner and group when dest is a regular file that
 * exists: a file replaced in place keeps them. Best effort (a group the user is not in stays). */
void trn_file_keep_mode(int fd, const char *dest);

/* Create a directory and its parents (mkdir -p). */
trn_status trn_mkdir_p(const char *path, trn_error *err);

/* path made absolute: its deepest existing folder resolved (symbolic links included), the names
 * below it appended with "." and ".." applied by name. malloc'd; NULL when out of memory. */
char *trn_path_resolve_lexically(const char *path);

/* True when path, after resolving "..", "." and symbolic links (of its deepest existing folder
 * and everything above; names below it taken as written), is root or lies inside root (itself
 * resolved). False when root cannot be resolved. */
bool trn_path_inside(const char *root, const char *path);

/* True when path names an existing regular file. */
bool trn_file_exists(const char *path);

#endif
