/* Mapped whole-file reads and atomic (temp file + rename) writes. */
#define _GNU_SOURCE
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif

#include "core/textbuf.h"

#include "write_set.h"

/* Below this a heap copy is cheaper than setting up a mapping. */
#define TRN_MMAP_MIN_SIZE (1u << 20)

const char *trn_file_kind(unsigned mode)
{
    if (S_ISFIFO(mode)) return "a pipe (FIFO)";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISDIR(mode)) return "a folder";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "a regular file";
}

static trn_status io_error(trn_error *err, const char *path, const char *what, int e)
{
    trn_status code = (e == ENOENT) ? TRN_ERR_NOT_FOUND : TRN_ERR_IO;
    return trn_error_set(err, code, path, -1, "cannot %s: %s", what, strerror(e));
}

trn_status trn_mapped_file_open(trn_mapped_file *mf, const char *path, uint64_t max_size,
                                trn_error *err)
{
    memset(mf, 0, sizeof *mf);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return io_error(err, path, "open file", errno);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return io_error(err, path, "stat file", e);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "is a directory, expected a file");
    }
    if (!S_ISREG(st.st_mode)) {
        /* A pipe or device has no size to check up front and may never end (/dev/zero). */
        close(fd);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "is %s, expected a regular file",
                             trn_file_kind(st.st_mode));
    }
    {
        uint64_t size = (uint64_t)st.st_size;
        if ((max_size && size > max_size) || size > SIZE_MAX) {
            close(fd);
            return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                                 "file is %llu bytes, more than the limit of %llu",
                                 (unsigned long long)size, (unsigned long long)max_size);
        }
        if (size >= TRN_MMAP_MIN_SIZE) {
            void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
            if (p != MAP_FAILED) {
                close(fd);
                mf->map_base = p;
                mf->data = p;
                mf->size = (size_t)size;
                return TRN_OK;
            }
        }
    }
    /* Small files, or mmap refused: read into the heap. */
    size_t cap = (size_t)st.st_size + 1, len = 0;
    uint8_t *buf = malloc(cap ? cap : 1);
    if (!buf) {
        close(fd);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory reading file");
    }
    for (;;) {
        if (len == cap) {
            if (max_size && len > max_size) break;
            size_t ncap = cap * 2;
            uint8_t *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                close(fd);
                return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return io_error(err, path, "read file", e);
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    if (max_size && len > max_size) {
        free(buf);
        return trn_error_set(err, TRN_ERR_LIMIT, path, -1,
                             "input is larger than the limit of %llu bytes",
                             (unsigned long long)max_size);
    }
    mf->heap = buf;
    mf->data = len ? buf : NULL;
    mf->size = len;
    return TRN_OK;
}

void trn_mapped_file_close(trn_mapped_file *mf)
{
    if (!mf) return;
    if (mf->map_base) munmap(mf->map_base, mf->size);
    free(mf->heap);
    memset(mf, 0, sizeof *mf);
}

trn_status trn_file_read_all(const char *path, size_t max_size, uint8_t **data_out,
                             size_t *size_out, trn_error *err)
{
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, max_size ? max_size : (1ull << 32), err);
    if (st) return st;
    if (mf.heap) {
        /* Small files were already read into the heap: hand that buffer over, no second copy. */
        *data_out = mf.heap;
        *size_out = mf.size;
        return TRN_OK;
    }
    uint8_t *copy = malloc(mf.size ? mf.size : 1);
    if (!copy) {
        trn_mapped_file_close(&mf);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    }
    if (mf.size) memcpy(copy, mf.data, mf.size);
    *data_out = copy;
    *size_out = mf.size;
    trn_mapped_file_close(&mf);
    return TRN_OK;
}

trn_status trn_atomic_file_open(trn_atomic_file *af, const char *path, trn_error *err)
{
    memset(af, 0, sizeof *af);
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return trn_error_set(err, TRN_ERR_IO, path, -1, "is a directory, expected a file path");
    size_t n = strlen(path);
    af->final_path = trn_text_dup(path);
    af->temp_path = malloc(n + 16);
    if (!af->final_path || !af->temp_path) {
        free(af->final_path);
        free(af->temp_path);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
    }
    memcpy(af->temp_path, path, n);
    memcpy(af->temp_path + n, ".tmp-XXXXXX", 12);
    trn_clean_stale_temporaries(path);
    trn_signal_hold hold;
    trn_signals_hold(&hold);
    int fd = mkostemp(af->temp_path, O_CLOEXEC);
    if (fd >= 0) trn_temp_register(af->temp_path);
    trn_signals_release(&hold);
    if (fd < 0) {
        int e = errno;
        free(af->final_path);
        free(af->temp_path);
        memset(af, 0, sizeof *af);
        return trn_error_set(err, e == ENOENT ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, path, -1,
                             "cannot create output: %s", strerror(e));
    }
    /* Locked while we write it: an unlocked temporary is a dead run's, for anyone to remove. */
    (void)flock(fd, LOCK_EX);
    trn_file_output_mode(fd);
    af->fp = fdopen(fd, "wb");
    if (!af->fp) {
        int e = errno;
        trn_temp_unregister(af->temp_path);
        close(fd);
        unlink(af->temp_path);
        free(af->final_path);
        free(af->temp_path);
        memset(af, 0, sizeof *af);
        return trn_error_set(err, TRN_ERR_IO, path, -1, "cannot open output: %s", strerror(e));
    }
    setvbuf(af->fp, NULL, _IOFBF, 1u << 20);
    return TRN_OK;
}

void trn_atomic_file_write(trn_atomic_file *af, const void *data, size_t size)
{
    if (af->failed || size == 0) return;
    if (fwrite(data, 1, size, af->fp) != size) {
        af->failed = true;
        af->saved_errno = errno ? errno : EIO;
    }
}

static bool copy_failed(trn_atomic_file *af, int e)
{
    af->failed = true;
    af->saved_errno = e ? e : EIO;
    return false;
}

static int copy_way; /* trn_atomic_file_copy_way */

void trn_atomic_file_copy_way(int way)
{
    copy_way = way;
}

bool trn_atomic_file_copy(trn_atomic_file *af, int in_fd, uint64_t offset, size_t len)
{
    if (af->failed) return false;
    if (fflush(af->fp) != 0) return copy_failed(af, errno);
    const int out_fd = fileno(af->fp);
    size_t done = 0;
#ifdef __linux__
    /* In the kernel: page cache to page cache (or a reflink where the file system shares
     * extents). Older kernels or crossing file systems say ENOSYS / EXDEV / EINVAL /
     * EOPNOTSUPP before copying anything: then sendfile, then plain reads. */
    bool kernel = copy_way == 0;
    while (kernel && done < len) {
        loff_t at = (loff_t)(offset + done);
        ssize_t r = copy_file_range(in_fd, &at, out_fd, NULL, len - done, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && done == 0 &&
            (errno == ENOSYS || errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP))
            kernel = false;
        else if (r < 0)
            return copy_failed(af, errno);
        else if (r == 0)
            return copy_failed(af, EIO); /* the input ended early */
        else
            done += (size_t)r;
    }
    while (done < len && !kernel && copy_way < 2) {
        off_t at = (off_t)(offset + done);
        ssize_t r = sendfile(out_fd, in_fd, &at, len - done);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && done == 0 && (errno == EINVAL || errno == ENOSYS)) break;
        if (r < 0) return copy_failed(af, errno);
        if (r == 0) return copy_failed(af, EIO);
        done += (size_t)r;
    }
#endif
    if (done == len) return true;
    const size_t cap = (size_t)1 << 20;
    uint8_t *buf = malloc(cap);
    if (!buf) return copy_failed(af, ENOMEM);
    while (done < len) {
        size_t want = len - done < cap ? len - done : cap;
        ssize_t r = pread(in_fd, buf, want, (off_t)(offset + done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(buf);
            return copy_failed(af, r < 0 ? errno : EIO);
        }
        for (size_t w = 0; w < (size_t)r;) {
            ssize_t k = write(out_fd, buf + w, (size_t)r - w);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                free(buf);
                return copy_failed(af, k < 0 ? errno : EIO);
            }
            w += (size_t)k;
        }
        done += (size_t)r;
    }
    free(buf);
    return true;
}

void trn_atomic_file_abort(trn_atomic_file *af)
{
    if (!af || !af->temp_path) return;
    unlink(af->temp_path);
    trn_temp_unregister(af->temp_path);
    if (af->fp) fclose(af->fp);
    free(af->final_path);
    free(af->temp_path);
    memset(af, 0, sizeof *af);
}

trn_status trn_atomic_file_commit(trn_atomic_file *af, trn_error *err)
{
    if (!af->failed && fflush(af->fp) != 0) {
        af->failed = true;
        af->saved_errno = errno;
    }
    /* The data reaches the disk before the name does: after a crash the path holds the old
     * file or the whole new one, never a partial one. */
    if (!af->failed && fsync(fileno(af->fp)) != 0 && errno != EINVAL) {
        af->failed = true;
        af->saved_errno = errno;
    }
    /* A file replaced in place keeps its mode, owner and group. */
    if (!af->failed) trn_file_keep_mode(fileno(af->fp), af->final_path);
    /* Renamed before closing, so the lock covers the temporary until it is the output. */
    if (!af->failed && rename(af->temp_path, af->final_path) != 0) {
        af->failed = true;
        af->saved_errno = errno;
    }
    if (af->failed) unlink(af->temp_path);
    trn_temp_unregister(af->temp_path);
    /* Flushed and synced above, so a close error here cannot lose data. */
    (void)fclose(af->fp);
    af->fp = NULL;
    trn_status st = TRN_OK;
    if (af->failed)
        st = trn_error_set(err, TRN_ERR_IO, af->final_path, -1, "cannot write output: %s",
                           strerror(af->saved_errno));
    free(af->final_path);
    free(af->temp_path);
    memset(af, 0, sizeof *af);
    return st;
}

trn_status trn_file_write_atomic(const char *path, const void *data, size_t size, trn_error *err)
{
    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, path, err);
    if (st) return st;
    trn_atomic_file_write(&af, data, size);
    return trn_atomic_file_commit(&af, err);
}
