/* One timed operation on a given thread count, for bench/busy.sh: stream power to steady state,
 * droplet erosion or a 16-bit PNG write; prints "seconds S digest D cpu C" (C: process CPU time).
 * Also writes busy.sh's inputs: a preset's recipe at a grid, a .ter, a geographic GeoTIFF.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_dem.h"
#include "bench_util.h"
#include "terrane/beamng.h"
#include "terrane/erosion.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/landscape.h"
#include "terrane/presets.h"

static uint64_t fnv(const void *v, size_t bytes)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *p = v;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

/* bench_stream_power's evolve ridge: 1500 m across the middle, 30 m cells. */
static void ridge(trn_field *f)
{
    const uint32_t cells = f->cells_x;
    const size_t nx = (size_t)cells + 1u;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f->heights[(size_t)j * nx + i] = ridge_height(i, j, cells);
}

static int fail(const char *what, const trn_error *e)
{
    fprintf(stderr, "bench_busy: %s: %s\n", what, e->message);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: bench_busy evolve CELLS STEPS THREADS\n"
                        "       bench_busy erosion CELLS DROPLETS THREADS\n"
                        "       bench_busy png SIZE OUT.png THREADS\n"
                        "       bench_busy preset ID CELLS > RECIPE.json\n"
                        "       bench_busy ter SIZE OUT.ter\n"
                        "       bench_busy geotiff SIDE OUT.tif\n");
        return 2;
    }
    const char *what = argv[1];
    if (strcmp(what, "preset") == 0) {
        /* The built-in preset's recipe with its grid set to CELLS x CELLS (same world). */
        const char *text = trn_builtin_preset_text(argv[2]);
        const char *res = text ? strstr(text, "\"resolution\": [") : NULL;
        const char *end = res ? strchr(res, ']') : NULL;
        if (!end) return 1;
        printf("%.*s\"resolution\": [%s, %s%s", (int)(res - text), text, argv[3], argv[3], end);
        return 0;
    }
    const uint32_t size = (uint32_t)strtoul(argv[2], NULL, 10);
    if (strcmp(what, "ter") == 0) {
        /* bench_ter's terrain: a ramp with 6 bits of noise, four materials. */
        const size_t samples = (size_t)size * size;
        trn_ter ter;
        memset(&ter, 0, sizeof ter);
        ter.version = 9;
        ter.size = size;
        ter.heights = malloc(samples * 2);
        ter.layers = malloc(samples);
        if (!ter.heights || !ter.layers) return 1;
        uint32_t x = 2463534242u;
        for (size_t i = 0; i < samples; i++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            ter.heights[i] = (uint16_t)((i % size) * 4 + (x & 63));
            ter.layers[i] = (uint8_t)((x >> 8) & 3);
        }
        char *names[4] = {"grass", "rock", "sand", "dirt"};
        ter.materials = names;
        ter.material_count = 4;
        trn_error e;
        if (trn_ter_write(argv[3], &ter, 9, NULL, NULL, &e)) return fail("ter", &e);
        free(ter.heights);
        free(ter.layers);
        return 0;
    }
    if (strcmp(what, "geotiff") == 0) {
        /* bench_reproject's DEM, which 'terrane convert' reprojects to UTM zone 54. */
        trn_field f;
        trn_geotiff_georef g;
        trn_error e;
        if (!bench_geographic_dem(size, &f, &g)) return 1;
        if (trn_geotiff_write(argv[3], &f, &g, TRN_GEOTIFF_COMPRESS_DEFLATE, &e))
            return fail("GeoTIFF", &e);
        trn_field_dispose(&f);
        return 0;
    }
    const int threads = argc > 4 ? atoi(argv[4]) : 1;
#ifdef _OPENMP
    if (threads > 0) omp_set_num_threads(threads);
#endif
    trn_error e;
    trn_field f;
    double t = 0, c0 = cpu_s();
    uint64_t digest = 0;
    if (size < 2) return 2;
    if (strcmp(what, "evolve") == 0) {
        /* The library's default thread use (threads 0: OpenMP's count), as the node runs it. */
        if (trn_field_init(&f, size, size, 30.0 * size, 30.0 * size, &e)) return fail("field", &e);
        ridge(&f);
        trn_stream_power_params p;
        trn_stream_power_params_default(&p);
        p.erodibility = 5e-5;
        p.diffusion = 0.05;
        p.dt = 20000.0;
        p.steps = (uint32_t)strtoul(argv[3], NULL, 10);
        const double t0 = now_s();
        c0 = cpu_s();
        if (trn_stream_power_run(&f, &p, NULL, NULL, NULL, &e)) return fail("stream power", &e);
        t = now_s() - t0;
        c0 = cpu_s() - c0;
        digest = fnv(f.heights, trn_field_sample_count(&f) * sizeof(float));
        trn_field_dispose(&f);
    } else if (strcmp(what, "erosion") == 0) {
        if (trn_field_init(&f, size, size, (double)size, (double)size, &e))
            return fail("field", &e);
        trn_landform lf;
        memset(&lf, 0, sizeof lf);
        lf.name = "mountains";
        lf.profile = TRN_PROFILE_RIDGED;
        lf.height_variation = 300.0;
        lf.feature_size = 400.0;
        lf.roughness = 0.45;
        lf.octaves = 6;
        lf.warp_feature_size = 128.0;
        lf.stretch = 1.0;
        if (trn_landform_fill(&lf, 42, &f, NULL, NULL, NULL)) return 1;
        trn_erosion_params p;
        trn_erosion_params_default(&p, TRN_EROSION_FINAL);
        p.droplets = (uint32_t)strtoul(argv[3], NULL, 10);
        p.threads = 0;
        trn_erosion_result r;
        const double t0 = now_s();
        c0 = cpu_s();
        if (trn_erosion_run(&f, &p, 42, &r, NULL, NULL, &e)) return fail("erosion", &e);
        t = now_s() - t0;
        c0 = cpu_s() - c0;
        digest = fnv(r.field.heights, trn_field_sample_count(&f) * sizeof(float));
        trn_erosion_result_dispose(&r);
        trn_field_dispose(&f);
    } else if (strcmp(what, "png") == 0) {
        if (trn_field_init(&f, size - 1u, size - 1u, size - 1.0, size - 1.0, &e))
            return fail("field", &e);
        const size_t n = (size_t)size * size;
        for (size_t k = 0; k < n; k++) {
            const double x = (double)(k % size) * 8.0 / size, z = (double)(k / size) * 8.0 / size;
            f.heights[k] =
                (float)(600.0 * value_noise(x, z, 1) + 150.0 * value_noise(4 * x, 4 * z, 2) +
                        0.8 * value_noise(256 * x, 256 * z, 3));
        }
        trn_image img;
        if (trn_image_from_field(&f, 0.0, 0.0, &img, &e)) return fail("quantise", &e);
        trn_field_dispose(&f);
        trn_png_options o;
        trn_png_options_default(&o);
        o.compression_level = 6;
        const double t0 = now_s();
        c0 = cpu_s();
        if (trn_png_write(argv[3], &img, &o, NULL, NULL, &e)) return fail("PNG", &e);
        t = now_s() - t0;
        c0 = cpu_s() - c0;
        trn_image_dispose(&img);
    } else {
        fprintf(stderr, "bench_busy: unknown operation '%s'\n", what);
        return 2;
    }
    printf("seconds %.4f digest %016" PRIx64 " cpu %.4f\n", t, digest, c0);
    return 0;
}
