/* The node cache's place on disk: the platform cache directory, and a size budget kept by removing the least recently used results. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graph/cache_dir.h"
#include "terrane/graph.h"

trn_status trn_graph_cache_dir_default(char *buf, size_t size, trn_error *err)
{
    if (!buf || !size)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_graph_cache_dir_default: a buffer is required");
    buf[0] = '\0';
    /* The XDG Base Directory rule: a relative XDG_CACHE_HOME is invalid and ignored. */
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n;
    if (xdg && xdg[0] == '/')
        n = snprintf(buf, size, "%s/terrane/nodes", xdg);
    else if (home && home[0] == '/')
        n = snprintf(buf, size, "%s/.cache/terrane/nodes", home);
    else
        return trn_error_set(err, TRN_ERR_NOT_FOUND, NULL, -1,
                             "no cache directory: neither XDG_CACHE_HOME nor HOME names an "
                             "absolute folder");
    if (n < 0 || (size_t)n >= size) {
        buf[0] = '\0';
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "the cache directory's path is longer than %zu bytes", size - 1);
    }
    return TRN_OK;
}

typedef struct cfile {
    char name[32];
    uint64_t bytes;
    struct timespec used;
} cfile;

static int older_first(const void *a, const void *b)
{
    const cfile *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec) return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec) return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name); /* the same time: still one order on every machine */
}

/* A node result file: 16 hex digits and ".tnc" (nothing else in the folder is touched). */
static bool is_result_name(const char *s)
{
    for (int k = 0; k < 16; k++)
        if (!((s[k] >= '0' && s[k] <= '9') || (s[k] >= 'a' && s[k] <= 'f'))) return false;
    return strcmp(s + 16, ".tnc") == 0;
}

uint64_t trn_cache_dir_trim(const char *dir, uint64_t limit, const char *keep)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    cfile *files = NULL;
    size_t count = 0, cap = 0;
    uint64_t total = 0;
    const int fd = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (!is_result_name(e->d_name)) continue;
        struct stat st;
        if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
        if (count == cap) {
            const size_t ncap = cap ? cap * 2 : 64;
            cfile *n = realloc(files, ncap * sizeof *n);
            if (!n) break;
            files = n, cap = ncap;
        }
        memcpy(files[count].name, e->d_name, 21); /* is_result_name: exactly 20 bytes + NUL */
        files[count].bytes = (uint64_t)st.st_size;
        files[count].used = st.st_mtim; /* reads touch it: the time of last use */
        total += (uint64_t)st.st_size;
        count++;
    }
    uint64_t removed = 0;
    if (total > limit && count) {
        qsort(files, count, sizeof *files, older_first);
        for (size_t k = 0; k < count && total > limit; k++) {
            if (keep && strcmp(files[k].name, keep) == 0) continue;
            if (unlinkat(fd, files[k].name, 0) != 0) continue; /* another process took it */
            total -= files[k].bytes;
            removed += files[k].bytes;
        }
    }
    closedir(d);
    free(files);
    return removed;
}

void trn_cache_file_touch(const char *dir, const char *name)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path) return;
    utimensat(AT_FDCWD, path, NULL, 0); /* best effort: only the eviction order depends on it */
}
