/* Benchmark: encode an 8192x8192 16-bit terrain PNG at zlib levels 1 and 6 (best of 3; 1 and all
 * threads give the same bytes) and leave the same samples as R16 + ENVI header so
 * bench/png_vs_gdal.sh can time gdal_translate on them. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"

#include "terrane/image.h"

/* Terrain-like heights in metres: broad fBm hills, a ridged middle band, fine detail. Each
 * sample depends only on its coordinates, so the result is the same on any thread count. */
static void make_terrain(trn_field *field)
{
    uint32_t n = field->cells_x + 1;
    double scale = 8.0 / n;
#ifdef _OPENMP
#pragma omp parallel for schedule(static)
#endif
    for (int64_t j = 0; j < (int64_t)n; j++) {
        for (uint32_t i = 0; i < n; i++) {
            double x = i * scale, z = (double)j * scale, h = 0.0, amp = 1.0, f = 1.0;
            for (int o = 0; o < 5; o++) {
                h += amp * value_noise(x * f, z * f, (uint32_t)o);
                amp *= 0.5;
                f *= 2.03;
            }
            double r = 1.0 - fabs(2.0 * value_noise(x * 4.0, z * 4.0, 77) - 1.0);
            h = h * 600.0 + r * r * 150.0 + value_noise(x * 256.0, z * 256.0, 99) * 0.8;
            field->heights[(size_t)j * n + i] = (float)h;
        }
    }
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* True when both files hold the same bytes. */
static bool same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    bool same = fa && fb;
    static char ba[1 << 16], bb[1 << 16];
    while (same) {
        size_t na = fread(ba, 1, sizeof ba, fa), nb = fread(bb, 1, sizeof bb, fb);
        if (na != nb || memcmp(ba, bb, na) != 0) same = false;
        if (na < sizeof ba) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static int fail(const char *what, const trn_error *err)
{
    char buf[1200];
    fprintf(stderr, "bench_png: %s: %s\n", what, trn_error_format(err, buf, sizeof buf));
    return 1;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    uint32_t size = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 8192;
    bool filters = argc > 3 && strcmp(argv[3], "--filters") == 0;
    if (size < 2) {
        fprintf(stderr, "usage: bench_png [OUT_DIR] [SIZE] [--filters]\n");
        return 2;
    }
    trn_error err;
    trn_field field;
    double t0 = now_s();
    if (trn_field_init(&field, size - 1, size - 1, size - 1, size - 1, &err))
        return fail("field", &err);
    make_terrain(&field);
    double t_gen = now_s() - t0;
    trn_image img;
    t0 = now_s();
    if (trn_image_from_field(&field, 0.0, 0.0, &img, &err)) return fail("quantise", &err);
    double t_quant = now_s() - t0;
    trn_field_dispose(&field);
    double raw_mb = (double)size * size * 2 / 1e6;
    printf("terrain %ux%u 16-bit (%.1f MB of samples): generated in %.2f s, quantised in "
           "%.3f s\n",
           size, size, raw_mb, t_gen, t_quant);

    char png_path[4096], r16_path[4096], hdr_path[4096];
    snprintf(png_path, sizeof png_path, "%s/bench_terrane.png", dir);
    snprintf(r16_path, sizeof r16_path, "%s/bench_input.r16", dir);
    snprintf(hdr_path, sizeof hdr_path, "%s/bench_input.hdr", dir);

    /* The GDAL input: headerless little-endian u16 plus an ENVI header that describes it. */
    if (trn_raw_write(r16_path, &img, TRN_RAW_U16_LE, &err)) return fail("R16", &err);
    char hdr[512];
    int hdr_n = snprintf(hdr, sizeof hdr,
                         "ENVI\nsamples = %u\nlines = %u\nbands = 1\nheader offset = 0\n"
                         "file type = ENVI Standard\ndata type = 12\ninterleave = bsq\n"
                         "byte order = 0\n",
                         size, size);
    if (trn_file_write_atomic(hdr_path, hdr, (size_t)hdr_n, &err)) return fail("header", &err);

    /* Levels 1 (the GeoTIFF target) and 6 (the default; its file is the one
     * png_vs_gdal.sh compares), each on every thread and on one: the bytes must match. */
    trn_png_options opt;
    trn_png_options_default(&opt);
    char one_path[4096];
    snprintf(one_path, sizeof one_path, "%s/bench_one_thread.png", dir);
    static const int levels[2] = {1, 6};
    for (int l = 0; l < 2; l++) {
        opt.compression_level = levels[l];
        double best = 1e30;
        for (int run = 0; run < 3; run++) {
            t0 = now_s();
            if (trn_png_write(png_path, &img, &opt, NULL, NULL, &err)) return fail("PNG", &err);
            double t = now_s() - t0;
            if (t < best) best = t;
        }
        int threads = 1;
#ifdef _OPENMP
        threads = omp_get_max_threads();
        omp_set_num_threads(1);
#endif
        t0 = now_s();
        if (trn_png_write(one_path, &img, &opt, NULL, NULL, &err)) return fail("PNG", &err);
        double t_one = now_s() - t0;
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        bool same = same_file(png_path, one_path);
        trn_image back;
        if (trn_png_read(png_path, NULL, &back, &err)) return fail("PNG read back", &err);
        bool round_trip = memcmp(back.data, img.data, (size_t)size * size * 2) == 0;
        trn_image_dispose(&back);
        printf("terrane png level %d (auto filter): best of 3 %.3f s on %d threads (%.1f MB/s of "
               "samples), %.3f s on 1 thread, %.2f MB; bytes %s across thread counts; read back "
               "%s\n",
               levels[l], best, threads, raw_mb / best, t_one, (double)file_size(png_path) / 1e6,
               same ? "identical" : "DIFFER", round_trip ? "identical" : "DIFFERENT");
        if (!same || !round_trip) return 1;
    }
    remove(one_path);

    if (filters) {
        /* One run per fixed filter, to show why AUTO picks what it picks. */
        static const char *const names[] = {"auto",    "none",  "sub",     "up",
                                            "average", "paeth", "adaptive"};
        char alt[4096];
        snprintf(alt, sizeof alt, "%s/bench_filter.png", dir);
        for (int f = TRN_PNG_FILTER_NONE; f <= TRN_PNG_FILTER_ADAPTIVE; f++) {
            opt.filter = (trn_png_filter)f;
            t0 = now_s();
            if (trn_png_write(alt, &img, &opt, NULL, NULL, &err)) return fail("PNG", &err);
            printf("  filter %-8s %.3f s, %.2f MB\n", names[f], now_s() - t0,
                   (double)file_size(alt) / 1e6);
        }
        remove(alt);
    }
    trn_image_dispose(&img);
    printf("wrote %s, %s and %s\n", png_path, r16_path, hdr_path);
    return 0;
}
