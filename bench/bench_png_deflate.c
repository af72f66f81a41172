/* Benchmark: where a 16-bit PNG's encode time goes. The rows of an R16 file (bench_png writes
 * one) are "up"-filtered as trn_png_write does, then compressed as one stream on one thread
 * with each zlib setting (level, strategy, memLevel) and, where the build found it, with
 * libdeflate: CPU seconds (median of RUNS) and bytes of each, and what filtering and the
 * checksums cost beside them. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#ifdef TRN_HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif

static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define RUNS_MAX 9

typedef struct zopt {
    int level, strategy, mem_level;
    const char *name;
} zopt;

/* One raw deflate stream over in (as one band); returns its size or 0. */
static size_t zlib_once(const zopt *o, const uint8_t *in, size_t n, uint8_t *out, size_t cap)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, o->level, Z_DEFLATED, -15, o->mem_level, o->strategy) != Z_OK) return 0;
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH);
    size_t size = zs.total_out;
    deflateEnd(&zs);
    return rc == Z_STREAM_END ? size : 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_png_deflate FILE.r16 SIZE|WIDTHxHEIGHT [RUNS 3]\n");
        return 2;
    }
    char *end = NULL;
    const size_t side = strtoul(argv[2], &end, 10);
    const size_t rows = end && *end == 'x' ? strtoul(end + 1, NULL, 10) : side;
    int runs = argc > 3 ? atoi(argv[3]) : 3;
    if (runs < 1) runs = 1;
    if (runs > RUNS_MAX) runs = RUNS_MAX;
    const size_t row = side * 2u, line = row + 1u, n = line * rows;
    uint8_t *raw = malloc(row * rows), *filtered = malloc(n);
    const size_t cap = n + n / 8u + 65536u;
    uint8_t *out = malloc(cap);
    FILE *f = fopen(argv[1], "rb");
    if (!raw || !filtered || !out || !f || fread(raw, 1, row * rows, f) != row * rows) {
        fprintf(stderr, "bench_png_deflate: cannot read %zu x %zu 16-bit samples from %s\n", side,
                rows, argv[1]);
        return 1;
    }
    fclose(f);
    /* PNG samples are big-endian; R16 is little-endian. "Up": each byte minus the one above. */
    double t0 = cpu_s();
    for (size_t y = 0; y < rows; y++) {
        uint8_t *dst = filtered + y * line;
        const uint8_t *cur = raw + y * row, *prev = y ? raw + (y - 1u) * row : NULL;
        dst[0] = 2;
        for (size_t i = 0; i < row; i += 2) {
            uint8_t hi = cur[i + 1], lo = cur[i];
            uint8_t phi = prev ? prev[i + 1] : 0, plo = prev ? prev[i] : 0;
            dst[1 + i] = (uint8_t)(hi - phi);
            dst[2 + i] = (uint8_t)(lo - plo);
        }
    }
    const double t_filter = cpu_s() - t0;
    t0 = cpu_s();
    uLong adler = adler32(adler32(0L, Z_NULL, 0), filtered, (uInt)n);
    const double t_adler = cpu_s() - t0;
    t0 = cpu_s();
    uLong crc = crc32(crc32(0L, Z_NULL, 0), filtered, (uInt)n);
    const double t_crc = cpu_s() - t0;
    printf("%zu x %zu 16-bit, %.1f MB filtered; one thread, CPU seconds, median of %d\n", side,
           rows, (double)n / 1e6, runs);
    printf("%-44s %8.3f s\n", "\"up\" filter (byte swap included)", t_filter);
    printf("%-44s %8.3f s   (%08lx)\n", "adler32 of the filtered bytes", t_adler, adler);
    printf("%-44s %8.3f s   (%08lx)\n", "crc32 of the same (IDAT chunks)", t_crc, crc);

    static const zopt zopts[] = {
        {9, Z_DEFAULT_STRATEGY, 9, "zlib 9"},
        {8, Z_DEFAULT_STRATEGY, 9, "zlib 8"},
        {7, Z_DEFAULT_STRATEGY, 9, "zlib 7"},
        {6, Z_DEFAULT_STRATEGY, 9, "zlib 6, default strategy, memLevel 9 (ours)"},
        {6, Z_DEFAULT_STRATEGY, 8, "zlib 6, memLevel 8 (libpng/GDAL's)"},
        {6, Z_FILTERED, 8, "zlib 6, Z_FILTERED, memLevel 8"},
        {6, Z_RLE, 9, "zlib 6, Z_RLE"},
        {6, Z_HUFFMAN_ONLY, 9, "zlib, Huffman only"},
        {5, Z_DEFAULT_STRATEGY, 9, "zlib 5"},
        {4, Z_DEFAULT_STRATEGY, 9, "zlib 4"},
        {3, Z_DEFAULT_STRATEGY, 9, "zlib 3"},
        {2, Z_DEFAULT_STRATEGY, 9, "zlib 2"},
        {1, Z_DEFAULT_STRATEGY, 9, "zlib 1"},
    };
    for (size_t k = 0; k < sizeof zopts / sizeof zopts[0]; k++) {
        double t[RUNS_MAX];
        size_t size = 0;
        for (int r = 0; r < runs; r++) {
            double c0 = cpu_s();
            size = zlib_once(&zopts[k], filtered, n, out, cap);
            t[r] = cpu_s() - c0;
        }
        qsort(t, (size_t)runs, sizeof t[0], compare_doubles);
        printf("%-44s %8.3f s %10zu bytes\n", zopts[k].name, t[runs / 2], size);
    }
#ifdef TRN_HAVE_LIBDEFLATE
    static const int dlevels[] = {1, 4, 6, 9};
    for (size_t k = 0; k < sizeof dlevels / sizeof dlevels[0]; k++) {
        struct libdeflate_compressor *c = libdeflate_alloc_compressor(dlevels[k]);
        if (!c) continue;
        double t[RUNS_MAX];
        size_t size = 0;
        for (int r = 0; r < runs; r++) {
            double c0 = cpu_s();
            size = libdeflate_deflate_compress(c, filtered, n, out, cap);
            t[r] = cpu_s() - c0;
        }
        libdeflate_free_compressor(c);
        qsort(t, (size_t)runs, sizeof t[0], compare_doubles);
        char name[64];
        snprintf(name, sizeof name, "libdeflate %s, level %d", LIBDEFLATE_VERSION_STRING,
                 dlevels[k]);
        printf("%-44s %8.3f s %10zu bytes\n", name, t[runs / 2], size);
    }
#else
    printf("(libdeflate not found when this was built)\n");
#endif
    free(raw);
    free(filtered);
    free(out);
    return 0;
}
