/* Makes the demo's source images: a 16-bit island heightmap, material opacity masks, a hole map,
 * and a small georeferenced GeoTIFF DEM of a mountain valley for examples/recipes/dem_level.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/geotiff.h"
#include "terrane/image.h"

#include "lattice_hash.h"

static double lattice(int32_t x, int32_t y, uint32_t seed)
{
    return (double)hash2(x, y, seed) / 4294967295.0;
}

static double smooth(double t)
{
    return t * t * (3.0 - 2.0 * t);
}

/* Value noise in 0..1 with smoothstep interpolation. */
static double value_noise(double x, double y, uint32_t seed)
{
    double fx = floor(x), fy = floor(y);
    int32_t ix = (int32_t)fx, iy = (int32_t)fy;
    double tx = smooth(x - fx), ty = smooth(y - fy);
    double a = lattice(ix, iy, seed), b = lattice(ix + 1, iy, seed);
    double c = lattice(ix, iy + 1, seed), d = lattice(ix + 1, iy + 1, seed);
    return (a + (b - a) * tx) + ((c + (d - c) * tx) - (a + (b - a) * tx)) * ty;
}

static double fbm(double x, double y, int octaves, uint32_t seed)
{
    double sum = 0, amp = 0.5, norm = 0;
    for (int o = 0; o < octaves; o++) {
        sum += amp * value_noise(x, y, seed + (uint32_t)o * 101u);
        norm += amp;
        x *= 2.03;
        y *= 2.03;
        amp *= 0.5;
    }
    return sum / norm;
}

/* fbm with each octave's lattice turned by its own angle (golden-angle steps): the DEM's
 * value-noise lattices then line up with neither grid axis, so its curvature does not repeat
 * with the row or column index (unturned, the DEM's curvature repeated every 4 samples at 8
 * times a shuffled profile, a fingerprint no real DEM has). */
static double fbm_turned(double x, double y, int octaves, uint32_t seed)
{
    double sum = 0, amp = 0.5, norm = 0, angle = 0.41;
    for (int o = 0; o < octaves; o++) {
        const double c = cos(angle), s = sin(angle);
        sum += amp * value_noise(c * x - s * y, s * x + c * y, seed + (uint32_t)o * 101u);
        norm += amp;
        x *= 2.03;
        y *= 2.03;
        amp *= 0.5;
        angle += 2.39996322972865332; /* the golden angle */
    }
    return sum / norm;
}

static int save(const char *dir, const char *name, const trn_image *img)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    trn_error e;
    trn_png_options po;
    trn_png_options_default(&po);
    if (trn_png_write(path, img, &po, NULL, NULL, &e) != TRN_OK) {
        char buf[1024];
        fprintf(stderr, "demo_inputs: %s\n", trn_error_format(&e, buf, sizeof buf));
        return 1;
    }
    return 0;
}

/* dem.tif: 257 x 257 float32 samples of 4 m (1024 m across) in UTM zone 33N, corner (500000,
 * 5201028): a valley running north to south between ridges, a basin in its floor where a lake
 * gathers, and a 6 x 6 NoData patch (NaN) that readers fill. Heights 310 .. about 745 m. */
static int save_dem(const char *dir)
{
    enum { S = 257 };
    trn_field f;
    trn_error e;
    if (trn_field_init(&f, S - 1, S - 1, (S - 1) * 4.0, (S - 1) * 4.0, &e)) return 1;
    for (uint32_t j = 0; j < S; j++)
        for (uint32_t i = 0; i < S; i++) {
            const double x = i * 4.0, z = j * 4.0;
            /* The valley's axis wanders; its floor rises to the north. */
            const double axis = 512 + 90 * sin(z / 260.0), dx = (x - axis) / 210.0;
            const double floor_h = 310 + 0.11 * z;
            const double walls =
                220 * (1 - exp(-dx * dx)) * (0.7 + 0.6 * fbm_turned(x / 300, z / 300, 3, 5u));
            const double rough = 40 * fbm_turned(x / 90, z / 90, 5, 9u) * (1 - exp(-dx * dx * 4));
            const double bz = (z - 420) / 70, bx = (x - 512 - 90 * sin(420 / 260.0)) / 70;
            const double basin = 24 * exp(-(bx * bx + bz * bz));
            f.heights[(size_t)j * S + i] = (float)(floor_h + walls + rough - basin);
        }
    for (uint32_t j = 200; j < 206; j++)
        for (uint32_t i = 30; i < 36; i++)
            f.heights[(size_t)j * S + i] = NAN;
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    const double t[6] = {500000, 4, 0, 5200000 + S * 4.0, 0, -4};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.raster_type = TRN_GEOTIFF_RASTER_PIXEL_IS_AREA;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, S, S);
    char path[4096];
    snprintf(path, sizeof path, "%s/dem.tif", dir);
    const trn_status st = trn_geotiff_write(path, &f, &g, TRN_GEOTIFF_COMPRESS_DEFLATE, &e);
    trn_field_dispose(&f);
    if (st) {
        char buf[1024];
        fprintf(stderr, "demo_inputs: %s\n", trn_error_format(&e, buf, sizeof buf));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : ".";
    const uint32_t size = argc > 2 ? (uint32_t)atoi(argv[2]) : 512;
    trn_image height, opacity, holes;
    trn_error e;
    if (trn_image_init(&height, size, size, 1, 16, &e) || trn_image_init(&opacity, size, size, 3, 8, &e) ||
        trn_image_init(&holes, size, size, 1, 8, &e)) {
        fprintf(stderr, "demo_inputs: out of memory\n");
        return 1;
    }
    double *h = malloc(sizeof(double) * size * size);
    if (!h) return 1;
    /* An island: a noisy dome that falls into the sea at the edges, with a ridge line. */
    for (uint32_t y = 0; y < size; y++) {
        for (uint32_t x = 0; x < size; x++) {
            double u = (x + 0.5) / size * 2.0 - 1.0, v = (y + 0.5) / size * 2.0 - 1.0;
            double r = sqrt(u * u + v * v);
            double dome = 1.0 - smooth(fmin(1.0, r / 0.95));
            double n = fbm(x / 64.0, y / 64.0, 6, 7u);
            double ridge = 1.0 - fabs(2.0 * fbm(x / 90.0 + 13.1, y / 90.0 - 4.2, 4, 11u) - 1.0);
            double z = dome * (0.35 + 0.45 * n + 0.35 * ridge * ridge) - 0.08;
            h[y * size + x] = z < 0 ? z * 0.3 : z;
        }
    }
    uint16_t *hp = height.data;
    uint8_t *op = opacity.data, *hl = holes.data;
    for (uint32_t y = 0; y < size; y++) {
        for (uint32_t x = 0; x < size; x++) {
            size_t i = (size_t)y * size + x;
            double z = h[i];
            /* 0.1 above zero so the sea floor stays diggable. */
            double stored = (z + 0.1) / 1.1 * 65535.0;
            hp[i] = (uint16_t)fmax(0.0, fmin(65535.0, floor(stored + 0.5)));
            uint32_t x1 = x + 1 < size ? x + 1 : x, y1 = y + 1 < size ? y + 1 : y;
            double slope = fabs(h[(size_t)y * size + x1] - z) + fabs(h[(size_t)y1 * size + x] - z);
            double rock = fmin(1.0, slope * 55.0 + fmax(0.0, z - 0.7) * 5.0);
            double sand = z < 0.04 ? 1.0 : fmax(0.0, 1.0 - (z - 0.04) * 25.0);
            double grass = fmax(0.0, 1.0 - rock - sand * 0.8);
            op[i * 3 + 0] = (uint8_t)(grass * 255.0 + 0.5);
            op[i * 3 + 1] = (uint8_t)(rock * 255.0 + 0.5);
            op[i * 3 + 2] = (uint8_t)(fmin(1.0, sand) * 255.0 + 0.5);
            /* A cave mouth: a small round hole on the island's flank. */
            double dx = (double)x - size * 0.62, dy = (double)y - size * 0.40;
            hl[i] = dx * dx + dy * dy < (size / 128.0) * (size / 128.0) ? 255 : 0;
        }
    }
    free(h);
    int rc = save(dir, "heightmap.png", &height) | save(dir, "opacity.png", &opacity) |
             save(dir, "holes.png", &holes) | save_dem(dir);
    trn_image_dispose(&height);
    trn_image_dispose(&opacity);
    trn_image_dispose(&holes);
    if (!rc) printf("demo inputs (%ux%u) written to %s\n", size, size, dir);
    return rc;
}
