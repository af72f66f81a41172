/* Makes the demo's source images: a 16-bit island heightmap, material opacity masks, a hole map,
 * and a small georeferenced GeoTIFF DEM of a mountain valley for examples/recipes/dem_level.json.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/drainage.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/landscape.h"

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
 * 5201028): a valley running north to south between mountains cut by branching side valleys, a
 * basin in its floor where a lake gathers, and a 6 x 6 NoData patch (NaN) that readers fill.
 * Heights about 310 .. 470 m.
 *
 * An analytic valley alone has smooth walls down which water runs side by side (its drainage-
 * area exponent b was 0.82; real land 0.4-0.55), and carving such walls cuts a comb of evenly
 * spaced gullies. So the ground starts as a gently tilted valley with rough noise on it and is
 * raised against river incision and hillslope creep (the library's stream power, read at a
 * 60 m reference cell as the Stream Power node's reference_cell reads it) over rock of varied
 * strength: the uplift grows from a tenth on the valley's axis to full on its sides, so the
 * mountains rise where the walls are, and their valleys branch from the noise's hollows and
 * nest into each other. The lake's basin is pressed into the floor afterwards, so the
 * evolution does not drain it. */
enum { DEM_S = 257 };

static double dem_axis(double z)
{
    return 512 + 90 * sin(z / 260.0);
}

/* How far a sample is from the valley's axis: 0 on it, rising to 1 some 300 m away. */
static double dem_wall(double x, double z)
{
    const double dx = (x - dem_axis(z)) / 180.0;
    return 1 - exp(-dx * dx);
}

/* Before the evolution: the floor rising to the north, low walls and rough ground. */
static double dem_initial(double x, double z)
{
    return 310 + 0.11 * z + 60 * dem_wall(x, z) + 60 * fbm_turned(x / 160, z / 160, 5, 9u);
}

/* The evolution runs on a grid DEM_PAD samples wider than the DEM on every side, cut back after:
 * its border is base level, and the gutters and rims that form along it stay outside the DEM
 * (the Stream Power node's open border does the same), so valleys cross the DEM's edges. */
enum { DEM_PAD = 32, DEM_E = DEM_S + 2 * DEM_PAD };

/* f: the DEM's grid, filled with the evolved heights. */
static int dem_evolve(trn_field *f, trn_error *e)
{
    /* Read at a 60 m cell: the run sees the field scaled by s in all three axes (slopes and
     * drainage paths unchanged) and scales it back after. */
    const double s = 60.0 / 4.0;
    const size_t n = (size_t)DEM_E * DEM_E;
    trn_field w;
    if (trn_field_init(&w, DEM_E - 1, DEM_E - 1, (DEM_E - 1) * 4.0 * s, (DEM_E - 1) * 4.0 * s, e))
        return 1;
    float *uplift = malloc(n * sizeof *uplift), *rock = malloc(n * sizeof *rock);
    if (!uplift || !rock) {
        free(uplift);
        free(rock);
        trn_field_dispose(&w);
        trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the DEM's evolution");
        return 1;
    }
    float lo = INFINITY;
    for (uint32_t j = 0; j < DEM_E; j++)
        for (uint32_t i = 0; i < DEM_E; i++) {
            const size_t k = (size_t)j * DEM_E + i;
            const double x = ((double)i - DEM_PAD) * 4.0, z = ((double)j - DEM_PAD) * 4.0;
            const double h = dem_initial(x, z);
            uplift[k] = (float)(0.1 + 0.9 * dem_wall(x, z));
            /* Rock from a quarter to four times the erodibility, in patches of some 350 m. */
            rock[k] = (float)exp2(2.0 * (2.0 * fbm_turned(x / 350, z / 350, 4, 17u) - 1.0));
            if (i >= DEM_PAD && j >= DEM_PAD && i < DEM_PAD + DEM_S && j < DEM_PAD + DEM_S)
                lo = fminf(lo, (float)h);
            w.heights[k] = (float)(h * s);
        }
    trn_stream_power_params p;
    trn_stream_power_params_default(&p);
    p.uplift = 1e-3;
    p.uplift_mask = uplift;
    p.erodibility = 5e-5;
    p.erodibility_mask = rock;
    p.diffusion = 0.05;
    p.dt = 20000;
    p.steps = 200;
    p.seed = 23;
    const trn_status st = trn_stream_power_run(&w, &p, NULL, NULL, NULL, e);
    free(uplift);
    free(rock);
    if (st) {
        trn_field_dispose(&w);
        return 1;
    }
    /* The DEM's window, its evolved relief stretched from the valley's lowest point up to the
     * top (a monotone map: every drainage path stays). A top of 470 m, some 160 m of relief,
     * gives slopes of about 22 degrees median on the DEM's 4 m cells and 27 at 1 m, as a
     * mountain valley 1 km across reads; stretched to 600 m they were 38 and 45 degrees and
     * the hillshade was black in every gully. */
    float elo = INFINITY, ehi = -INFINITY;
    for (uint32_t j = 0; j < DEM_S; j++)
        for (uint32_t i = 0; i < DEM_S; i++) {
            const float h = w.heights[(size_t)(j + DEM_PAD) * DEM_E + i + DEM_PAD];
            f->heights[(size_t)j * DEM_S + i] = h;
            elo = fminf(elo, h);
            ehi = fmaxf(ehi, h);
        }
    trn_field_dispose(&w);
    const double top = 470.0;
    for (size_t k = 0; k < (size_t)DEM_S * DEM_S; k++)
        f->heights[k] = (float)(lo + (f->heights[k] - elo) * (top - lo) / (ehi - elo));
    return 0;
}

static int save_dem(const char *dir)
{
    enum { S = DEM_S };
    trn_field f;
    trn_error e;
    if (trn_field_init(&f, S - 1, S - 1, (S - 1) * 4.0, (S - 1) * 4.0, &e)) return 1;
    if (dem_evolve(&f, &e)) {
        char buf[1024];
        fprintf(stderr, "demo_inputs: %s\n", trn_error_format(&e, buf, sizeof buf));
        trn_field_dispose(&f);
        return 1;
    }
    /* The hollows the run left undrained are breached (lowered along their outlets), so
     * brooks on the floor run on down to the lake; then the lake's basin is pressed into the
     * valley floor. */
    trn_drainage d;
    trn_status st = trn_drainage_compute(&f, NAN, &d, NULL, NULL, &e);
    if (!st) st = trn_drainage_breach(&f, &d, &e);
    trn_drainage_dispose(&d);
    if (st) {
        char buf[1024];
        fprintf(stderr, "demo_inputs: %s\n", trn_error_format(&e, buf, sizeof buf));
        trn_field_dispose(&f);
        return 1;
    }
    for (uint32_t j = 0; j < S; j++)
        for (uint32_t i = 0; i < S; i++) {
            const double bz = (j * 4.0 - 420) / 70, bx = (i * 4.0 - dem_axis(420)) / 70;
            f.heights[(size_t)j * S + i] -= (float)(24 * exp(-(bx * bx + bz * bz)));
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
    st = trn_geotiff_write(path, &f, &g, TRN_GEOTIFF_COMPRESS_DEFLATE, &e);
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
