/* Path and file-mode helpers beneath both single-file and multi-file atomic writes. */
#define _GNU_SOURCE
#include "paths.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

trn_status trn_mkdir_p(const char *path, trn_error *err)
{
    size_t n = strlen(path);
    char *buf = malloc(n + 1);
    if (!buf) return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                trn_error_set(err, TRN_ERR_IO, buf, -1, "cannot create directory: %s", strerror(e));
                free(buf);
                return TRN_ERR_IO;
            }
            buf[i] = c;
        }
    }
    free(buf);
    return TRN_OK;
}

/* path made absolute without touching the file system below its deepest existing folder: that
 * folder is resolved (symbolic links included), the rest is appended with "." and ".." applied
 * by name. NULL when nothing of it resolves or out of memory. */
char *trn_path_resolve_lexically(const char *path)
{
    size_t n = strlen(path);
    char *work = malloc(n + 3);
    if (!work) return NULL;
    if (path[0] == '/')
        memcpy(work, path, n + 1);
    else {
        work[0] = '.';
        work[1] = '/';
        memcpy(work + 2, path, n + 1);
        n += 2;
    }
    /* Strip trailing components until the rest resolves. */
    size_t cut = n;
    char *base = NULL;
    for (;;) {
        char saved = work[cut];
        work[cut] = '\0';
        base = realpath(cut ? work : "/", NULL);
        work[cut] = saved;
        if (base || cut == 0) break;
        while (cut > 0 && work[cut - 1] != '/')
            cut--;
        while (cut > 1 && work[cut - 1] == '/')
            cut--;
        if (cut == 1 && work[0] == '/') cut = 0;
    }
    if (!base) {
        free(work);
        return NULL;
    }
    size_t blen = strlen(base), cap = blen + (n - cut) + 2;
    char *out = malloc(cap);
    if (!out) {
        free(base);
        free(work);
        return NULL;
    }
    memcpy(out, base, blen + 1);
    free(base);
    if (blen == 1) blen = 0; /* "/" */
    const char *p = work + cut;
    while (*p) {
        while (*p == '/')
            p++;
        const char *e = p;
        while (*e && *e != '/')
            e++;
        size_t len = (size_t)(e - p);
        if (len == 0 || (len == 1 && p[0] == '.')) {
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (blen > 0 && out[blen - 1] != '/')
                blen--;
            if (blen > 0) blen--;
        } else {
            out[blen++] = '/';
            memcpy(out + blen, p, len);
            blen += len;
        }
        out[blen] = '\0';
        p = e;
    }
    if (blen == 0) memcpy(out, "/", 2);
    free(work);
    return out;
}

bool trn_path_inside(const char *root, const char *path)
{
    char *real_root = realpath(root, NULL);
    if (!real_root) return false;
    char *real = trn_path_resolve_lexically(path);
    bool inside = false;
    if (real) {
        size_t n = strlen(real_root);
        if (n == 1) n = 0; /* root "/" holds everything */
        inside = strncmp(real, real_root, n) == 0 && (real[n] == '\0' || real[n] == '/');
    }
    free(real);
    free(real_root);
    return inside;
}

bool trn_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

void trn_file_keep_mode(int fd, const char *dest)
{
    struct stat st;
    if (stat(dest, &st) != 0 || !S_ISREG(st.st_mode)) return; /* a new file: the umask's mode */
    /* Owner and group first: changing them may clear set-id bits that the mode then restores. */
    if (st.st_uid != geteuid() || st.st_gid != getegid()) (void)fchown(fd, st.st_uid, st.st_gid);
    (void)fchmod(fd, st.st_mode & 07777);
}

void trn_file_output_mode(int fd)
{
    /* mkstemp creates 0600; outputs should get the usual umask-governed mode. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
}
