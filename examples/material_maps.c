/* Makes the terrain_3d example's Material image maps: small tileable albedo, normal, roughness and
 * height PNGs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "terrane/image.h"

#include "lattice_hash.h"

/* 64 x 64: enough to see a texture repeat in the studio, small enough to keep in the repository
 * (the twenty maps are committed; this program is how they were made). */
#define SIZE 64

/* Value noise whose lattice wraps every `period` cells, so the map tiles without a seam. */
static double tiled_noise(double x, double y, int period, uint32_t seed)
{
    const double fx = floor(x), fy = floor(y);
    const int ix = (int)fx, iy = (int)fy;
    double tx = x - fx, ty = y - fy;
    tx = tx * tx * (3.0 - 2.0 * tx);
    ty = ty * ty * (3.0 - 2.0 * ty);
#define L(i, j)                                                                                    \
    ((double)hash2((int32_t)((((i) % period) + period) % period),                                  \
                   (int32_t)((((j) % period) + period) % period), seed) /                          \
     4294967295.0)
    const double a = L(ix, iy), b = L(ix + 1, iy), c = L(ix, iy + 1), d = L(ix + 1, iy + 1);
#undef L
    const double top = a + (b - a) * tx, bottom = c + (d - c) * tx;
    return top + (bottom - top) * ty;
}

/* Three octaves, each with a whole number of lattice cells across the map. */
static double tiled_fbm(int px, int py, int cells, uint32_t seed)
{
    double sum = 0, amp = 0.5, norm = 0;
    for (int o = 0; o < 3; o++) {
        const int period = cells << o;
        sum += amp * tiled_noise((double)px * period / SIZE, (double)py * period / SIZE, period,
                                 seed + (uint32_t)o * 101u);
        norm += amp;
        amp *= 0.5;
    }
    return sum / norm;
}

typedef struct material {
    const char *name;
    uint32_t seed;
    int cells;           /* lattice cells across the map at the coarsest octave */
    double colour[3];    /* sRGB 0..1 at mid height */
    double variation;    /* colour change from lowest to highest, as a fraction */
    double roughness[2]; /* roughness at the lowest and highest point */
    double bump;         /* normal strength */
} material;

static const material MATERIALS[] = {
    {"soil", 11u, 4, {0.36, 0.27, 0.18}, 0.35, {0.95, 0.80}, 2.0},
    {"sand", 23u, 8, {0.76, 0.66, 0.46}, 0.15, {0.90, 0.85}, 1.0},
    {"snow", 37u, 2, {0.90, 0.93, 0.97}, 0.06, {0.45, 0.60}, 0.6},
    {"wet_ground", 41u, 4, {0.22, 0.18, 0.13}, 0.25, {0.35, 0.70}, 1.5},
    {"rock", 53u, 2, {0.47, 0.46, 0.44}, 0.45, {0.85, 0.65}, 4.0},
};

static uint8_t byte(double v)
{
    v = v < 0 ? 0 : v > 1 ? 1 : v;
    return (uint8_t)lrint(v * 255.0);
}

static int save(const char *path, uint8_t *data, uint8_t channels, bool srgb)
{
    const trn_image img = {SIZE, SIZE, channels, 8, data, srgb};
    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 9;
    opt.srgb = srgb;
    trn_error e;
    if (trn_png_write(path, &img, &opt, NULL, NULL, &e) != TRN_OK) {
        fprintf(stderr, "%s: %s\n", path, e.message);
        return 1;
    }
    return 0;
}

static int make(const char *dir, const material *m)
{
    static double h[SIZE * SIZE];
    static uint8_t rgb[SIZE * SIZE * 3], grey[SIZE * SIZE];
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, m->name);
    mkdir(path, 0755);
    for (int y = 0; y < SIZE; y++)
        for (int x = 0; x < SIZE; x++)
            h[y * SIZE + x] = tiled_fbm(x, y, m->cells, m->seed);
    int rc = 0;
    for (size_t k = 0; k < SIZE * SIZE; k++)
        grey[k] = byte(h[k]);
    snprintf(path, sizeof path, "%s/%s/height.png", dir, m->name);
    rc |= save(path, grey, 1, false);
    for (size_t k = 0; k < SIZE * SIZE; k++) {
        const double f = 1.0 + m->variation * (h[k] - 0.5) * 2.0;
        for (int c = 0; c < 3; c++)
            rgb[k * 3 + c] = byte(m->colour[c] * f);
    }
    snprintf(path, sizeof path, "%s/%s/albedo.png", dir, m->name);
    rc |= save(path, rgb, 3, true);
    for (size_t k = 0; k < SIZE * SIZE; k++)
        grey[k] = byte(m->roughness[0] + (m->roughness[1] - m->roughness[0]) * h[k]);
    snprintf(path, sizeof path, "%s/%s/roughness.png", dir, m->name);
    rc |= save(path, grey, 1, false);
    /* Tangent-space normals, OpenGL convention (+Y up): image rows run down, so up is -row. */
    for (int y = 0; y < SIZE; y++)
        for (int x = 0; x < SIZE; x++) {
            const double dx = h[y * SIZE + (x + 1) % SIZE] - h[y * SIZE + (x + SIZE - 1) % SIZE];
            const double dy =
                h[((y + SIZE - 1) % SIZE) * SIZE + x] - h[((y + 1) % SIZE) * SIZE + x];
            double n[3] = {-dx * m->bump, -dy * m->bump, 1.0};
            const double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
            for (int c = 0; c < 3; c++)
                rgb[(y * SIZE + x) * 3 + c] = byte(n[c] / len * 0.5 + 0.5);
        }
    snprintf(path, sizeof path, "%s/%s/normal.png", dir, m->name);
    rc |= save(path, rgb, 3, false);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR (writes DIR/NAME/{albedo,normal,roughness,height}.png)\n",
                argv[0]);
        return 2;
    }
    int rc = 0;
    for (size_t k = 0; k < sizeof MATERIALS / sizeof MATERIALS[0]; k++)
        rc |= make(argv[1], &MATERIALS[k]);
    return rc;
}
