/* Benchmark: .ter read and write speed against memcpy and plain 1 MiB writes, and peak memory. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE /* wait4 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#include "terrane/beamng.h"

#define BENCH_SIZE 8192u
#define BENCH_RUNS 3
#define BLOCK ((size_t)1 << 20)

static void die(const char *what, const trn_error *e)
{
    char buf[1200];
    fprintf(stderr, "bench_ter: %s: %s\n", what,
            e ? trn_error_format(e, buf, sizeof buf) : strerror(errno));
    exit(1);
}

/* Child mode: convert .ter -> .ter and print the peak resident set in KiB. */
static int peak_child(const char *in, const char *out)
{
    trn_ter t;
    trn_error e;
    if (trn_ter_read(in, NULL, &t, NULL, NULL, &e)) die("child read", &e);
    if (trn_ter_write(out, &t, t.version, NULL, NULL, &e)) die("child write", &e);
    trn_ter_dispose(&t);
    return 0;
}

/* Run self in child mode in a fresh process (a fork would inherit our resident buffers). */
static long peak_kib_of_conversion(const char *self, const char *in, const char *out)
{
    pid_t pid = fork();
    if (pid < 0) die("fork", NULL);
    if (pid == 0) {
        execl(self, self, "--peak-child", in, out, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) die("wait4", NULL);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "bench_ter: peak child failed\n");
        exit(1);
    }
    return ru.ru_maxrss; /* KiB on Linux */
}

static long idle_child_kib(const char *self)
{
    pid_t pid = fork();
    if (pid < 0) die("fork", NULL);
    if (pid == 0) {
        execl(self, self, "--idle-child", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) die("wait4", NULL);
    return ru.ru_maxrss;
}

/* dd bs=1M equivalent: 1 MiB write() calls into a new file, then fsync. */
static double plain_write(const char *path, const uint8_t *data, size_t size)
{
    unlink(path);
    double t0 = now_s();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open plain", NULL);
    for (size_t done = 0; done < size;) {
        size_t n = size - done < BLOCK ? size - done : BLOCK;
        ssize_t w = write(fd, data + done, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("write plain", NULL);
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) die("fsync plain", NULL);
    close(fd);
    return now_s() - t0;
}

static void prime_cache(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("open for priming", NULL);
    uint8_t *buf = malloc(BLOCK);
    while (read(fd, buf, BLOCK) > 0) {
    }
    free(buf);
    close(fd);
}

static double best(const double *v, int n)
{
    double b = v[0];
    for (int i = 1; i < n; i++)
        if (v[i] < b) b = v[i];
    return b;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--peak-child") == 0 && argc == 4)
        return peak_child(argv[2], argv[3]);
    if (argc >= 2 && strcmp(argv[1], "--idle-child") == 0) return 0;
    const char *base = argc >= 2 ? argv[1] : "/tmp";
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/bench_ter-XXXXXX", base);
    if (!mkdtemp(dir)) die("mkdtemp", NULL);
    char ter_path[1100], out_path[1100], plain_path[1100], conv_path[1100];
    snprintf(ter_path, sizeof ter_path, "%s/in.ter", dir);
    snprintf(out_path, sizeof out_path, "%s/out.ter", dir);
    snprintf(plain_path, sizeof plain_path, "%s/plain.bin", dir);
    snprintf(conv_path, sizeof conv_path, "%s/conv.ter", dir);

    /* A deterministic 8192 x 8192 terrain with four materials. */
    const size_t samples = (size_t)BENCH_SIZE * BENCH_SIZE;
    trn_ter t;
    memset(&t, 0, sizeof t);
    t.version = 9;
    t.size = BENCH_SIZE;
    t.heights = malloc(samples * 2);
    t.layers = malloc(samples);
    if (!t.heights || !t.layers) die("malloc", NULL);
    uint32_t x = 2463534242u;
    for (size_t i = 0; i < samples; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        t.heights[i] = (uint16_t)((i % BENCH_SIZE) * 4 + (x & 63));
        t.layers[i] = (uint8_t)((x >> 8) & 3);
    }
    char *names[4] = {"grass", "rock", "sand", "dirt"};
    t.materials = names;
    t.material_count = 4;
    trn_error e;
    if (trn_ter_write(ter_path, &t, 9, NULL, NULL, &e)) die("create", &e);
    struct stat st;
    stat(ter_path, &st);
    const size_t file_bytes = (size_t)st.st_size;

    /* (a) memcpy of the same bytes, both buffers already faulted in. */
    uint8_t *src = malloc(file_bytes), *dst = malloc(file_bytes);
    if (!src || !dst) die("malloc", NULL);
    memset(src, 1, file_bytes);
    memset(dst, 2, file_bytes);
    double runs[BENCH_RUNS];
    for (int r = 0; r < BENCH_RUNS; r++) {
        double t0 = now_s();
        memcpy(dst, src, file_bytes);
        runs[r] = now_s() - t0;
        if (dst[file_bytes / 2] != 1) die("memcpy check", NULL);
    }
    double t_memcpy = best(runs, BENCH_RUNS);
    free(dst);

    /* (b) trn_ter_read from the page cache. */
    prime_cache(ter_path);
    for (int r = 0; r < BENCH_RUNS; r++) {
        trn_ter in;
        double t0 = now_s();
        if (trn_ter_read(ter_path, NULL, &in, NULL, NULL, &e)) die("read", &e);
        runs[r] = now_s() - t0;
        if (in.size != BENCH_SIZE || in.heights[12345] != t.heights[12345]) die("read check", NULL);
        trn_ter_dispose(&in);
    }
    double t_read = best(runs, BENCH_RUNS);

    /* (c) trn_ter_write (atomic: temp file, fsync, rename) to the same disk. */
    for (int r = 0; r < BENCH_RUNS; r++) {
        double t0 = now_s();
        if (trn_ter_write(out_path, &t, 9, NULL, NULL, &e)) die("write", &e);
        runs[r] = now_s() - t0;
    }
    double t_write = best(runs, BENCH_RUNS);

    /* (d) plain 1 MiB writes + fsync of the same byte count. */
    for (int r = 0; r < BENCH_RUNS; r++)
        runs[r] = plain_write(plain_path, src, file_bytes);
    double t_plain = best(runs, BENCH_RUNS);
    free(src);

    /* Peak memory of a .ter -> .ter conversion in a fresh process. */
    free(t.heights);
    free(t.layers);
    long idle_kib = idle_child_kib(argv[0]);
    long peak_kib = peak_kib_of_conversion(argv[0], ter_path, conv_path);

    double gb = (double)file_bytes / 1e9;
    printf("bench_ter: %u x %u .ter, %zu bytes (%.1f MiB), best of %d, folder %s\n", BENCH_SIZE,
           BENCH_SIZE, file_bytes, (double)file_bytes / 1048576.0, BENCH_RUNS, dir);
    printf("%-36s %10s %9s %12s\n", "operation", "seconds", "GB/s", "ratio");
    printf("%-36s %10.4f %9.2f %12s\n", "memcpy (same bytes)", t_memcpy, gb / t_memcpy, "1.00");
    printf("%-36s %10.4f %9.2f %8.2f (vs memcpy, need >= 0.50)\n", "trn_ter_read (page cache)",
           t_read, gb / t_read, t_memcpy / t_read);
    printf("%-36s %10.4f %9.2f %12s\n", "plain write 1 MiB blocks + fsync", t_plain, gb / t_plain,
           "1.00");
    printf("%-36s %10.4f %9.2f %8.2f (vs plain write, need >= 0.50)\n",
           "trn_ter_write (atomic, fsync)", t_write, gb / t_write, t_plain / t_write);
    printf("%-36s %7.1f MiB (%.2f x file size, need < 2; idle process %.1f MiB)\n",
           "peak RSS of .ter -> .ter convert", (double)peak_kib / 1024.0,
           (double)peak_kib * 1024.0 / (double)file_bytes, (double)idle_kib / 1024.0);

    unlink(ter_path);
    unlink(out_path);
    unlink(plain_path);
    unlink(conv_path);
    rmdir(dir);
    return 0;
}
