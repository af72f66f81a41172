/* The gallery's helper: a recipe or preset generated at a grid into GeoTIFFs, pictures fitted. */
/*
 * tools/gallery/gallery.sh drives everything else through the terrane CLI (render, stats); this
 * program does what the CLI does not:
 *
 *   terrane_gallery generate SOURCE CELLS OUT_BASE
 *     SOURCE is a built-in preset id (builtin://terrain/NAME), a recipe, a Terrain asset
 *     document or a scene (NAME.scene.json: the inline recipe of its first Terrain3D). CELLS
 *     0 keeps its own grid; N regrids it over its own extent to N cells on its longer side
 *     (the other in proportion, so the cells stay square; N x N for a square terrain), edits
 *     kept in place, as `terrane generate --resolution NxN --keep-edits` does. Writes
 *     OUT_BASE.tif (the final heights) and OUT_BASE.dry.tif (the same with every sample under
 *     published water as NoData, so a lake is not counted as a closed depression), float32
 *     GeoTIFFs whose pixel scale is the cell size, and prints one JSON line: the grid, the
 *     cell size, the wet sample count and the generation time.
 *
 *   terrane_gallery fit IN.png OUT.png MAX_WIDTH MIN_WIDTH
 *     An 8-bit picture wider than MAX_WIDTH is area-averaged down to MAX_WIDTH (height in
 *     proportion); one narrower than MIN_WIDTH is enlarged by a whole factor, each pixel a
 *     block, so a 65-sample grid stays visibly 65 samples; anything else is copied.
 *
 *   terrane_gallery crop IN.png OUT.png SIZE
 *     The middle SIZE x SIZE pixels at full resolution (the whole picture when smaller).
 *
 *   terrane_gallery presets
 *     The built-in preset ids, one a line.
 *
 *   terrane_gallery figures STATS.json NAME...
 *     From `terrane stats --format json` output (or any JSON object): each named figure's
 *     value (an entry of "figures" by its name, else a top-level key) on one line, separated
 *     by spaces, "n/a" for a figure the file does not have (or has as null), so the script
 *     reads figures that newer versions add without failing on older ones. A string value is
 *     printed with its blanks as '_'.
 *
 *   terrane_gallery terrain FILE.json
 *     Exit status 0 when FILE is a terrain of its own (a recipe, a Terrain asset, a scene, or
 *     a document that does not read, so that generating it reports why), 1 when it is another
 *     kind of document (a palette, a material set, a preset source): the script passes over
 *     those beside the example recipes.
 *
 * Exit status 0 on success, 1 on an error (printed with the file it concerns), 2 on usage.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"

static int usage(void)
{
    fprintf(stderr, "usage: terrane_gallery generate SOURCE CELLS OUT_BASE\n"
                    "       terrane_gallery fit IN.png OUT.png MAX_WIDTH MIN_WIDTH\n"
                    "       terrane_gallery crop IN.png OUT.png SIZE\n"
                    "       terrane_gallery presets\n"
                    "       terrane_gallery terrain FILE.json\n"
                    "       terrane_gallery figures STATS.json NAME...\n");
    return 2;
}

static int fail(const char *what, const trn_error *e)
{
    fprintf(stderr, "terrane_gallery: %s: %s%s%s\n", what, e->message, e->file[0] ? " in " : "",
            e->file);
    return 1;
}

/* A whole number 0 .. limit from text, or -1. */
static long parse_count(const char *text, long limit)
{
    char *end = NULL;
    const long v = strtol(text, &end, 10);
    return end != text && *end == '\0' && v >= 0 && v <= limit ? v : -1;
}

static double now_s(void)
{
    struct timespec t;
    timespec_get(&t, TIME_UTC);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A recipe file, Terrain asset document or scene: a scene's first entity whose Terrain3D
 * component holds an inline "recipe" object is read as that recipe. 0 or 1 (printed). */
/* Whether a JSON document is a terrain of its own (a recipe, a Terrain asset, a scene) or
 * something else that is no terrain to draw (a palette, a material set, a preset source). An
 * unreadable document counts as a terrain, so generating it reports the error. */
static bool is_terrain_document(json_t *doc)
{
    if (!json_is_object(doc) || json_is_array(json_object_get(doc, "entities"))) return true;
    char *text = json_dumps(doc, JSON_COMPACT);
    const trn_document_kind kind =
        text ? trn_document_classify(text, strlen(text)) : TRN_DOCUMENT_UNKNOWN;
    free(text);
    return kind == TRN_DOCUMENT_UNKNOWN || kind == TRN_DOCUMENT_RECIPE ||
           kind == TRN_DOCUMENT_TERRAIN_ASSET;
}

static int scene_recipe(const char *path, trn_recipe *r)
{
    trn_error e;
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    json_t *entities = json_is_object(doc) ? json_object_get(doc, "entities") : NULL;
    if (!json_is_array(entities)) {
        json_decref(doc);
        return trn_recipe_read(path, r, NULL, &e) ? fail(path, &e) : 0;
    }
    size_t i;
    json_t *entity;
    json_array_foreach(entities, i, entity)
    {
        json_t *recipe = json_object_get(
            json_object_get(json_object_get(entity, "components"), "Terrain3D"), "recipe");
        if (!json_is_object(recipe)) continue;
        char *text = json_dumps(recipe, JSON_COMPACT);
        json_decref(doc);
        if (!text) {
            fprintf(stderr, "terrane_gallery: out of memory\n");
            return 1;
        }
        const trn_status st = trn_recipe_parse(text, strlen(text), path, r, NULL, &e);
        free(text);
        return st ? fail(path, &e) : 0;
    }
    json_decref(doc);
    fprintf(stderr,
            "terrane_gallery: %s: no entity has a Terrain3D component with an inline "
            "recipe\n",
            path);
    return 1;
}

static int cmd_generate(const char *source, const char *cells_text, const char *base)
{
    const long cells = parse_count(cells_text, 1 << 16);
    if (cells < 0 || cells == 1) {
        fprintf(stderr,
                "terrane_gallery: CELLS: expected 0 or a whole number 2..65536, found '%s'\n",
                cells_text);
        return 2;
    }
    trn_recipe r;
    trn_error e;
    if (strncmp(source, "builtin://", 10) == 0) {
        const char *text = trn_builtin_preset_text(source);
        if (!text) {
            fprintf(stderr,
                    "terrane_gallery: %s: no such built-in preset ('terrane presets' lists "
                    "them)\n",
                    source);
            return 1;
        }
        if (trn_recipe_parse(text, strlen(text), source, &r, NULL, &e)) return fail(source, &e);
    } else if (scene_recipe(source, &r) != 0) {
        return 1;
    }
    /* CELLS on the longer side, the other in proportion: the cells stay square. */
    const double nc = (double)cells;
    uint32_t cx = (uint32_t)cells, cz = (uint32_t)cells;
    if (r.size_x > r.size_z) cz = (uint32_t)fmax(2.0, floor(nc * r.size_z / r.size_x + 0.5));
    if (r.size_z > r.size_x) cx = (uint32_t)fmax(2.0, floor(nc * r.size_x / r.size_z + 0.5));
    if (cells && trn_recipe_change_grid(&r, r.size_x, r.size_z, cx, cz, TRN_EDITS_KEEP, &e)) {
        trn_recipe_dispose(&r);
        return fail(source, &e);
    }
    trn_generate_options go = {0};
    trn_generated g;
    const double t0 = now_s();
    const trn_status st = trn_recipe_generate(&r, &go, &g, NULL, NULL, &e);
    const double seconds = now_s() - t0;
    /* Wind-blown sand (a Dune Field and no landscape evolution) has no river network: its
     * drainage exponent is not held against that of river land. */
    const int rivers = !(r.graph_json && strstr(r.graph_json, "\"dune_field\"") &&
                         !strstr(r.graph_json, "\"stream_power\""));
    trn_recipe_dispose(&r);
    if (st) return fail(source, &e);

    char path[4096];
    int rc = 0;
    snprintf(path, sizeof path, "%s.tif", base);
    if (trn_geotiff_write(path, &g.field, NULL, TRN_GEOTIFF_COMPRESS_NONE, &e)) rc = fail(path, &e);
    /* The dry ground: samples under the published water (sea, lakes, rivers) as no data, as
     * tests/test_preset_realism.c and bench_realism measure the drainage figures. */
    const size_t n = trn_field_sample_count(&g.field);
    uint64_t wet = 0;
    trn_field dry = g.field;
    dry.heights = rc ? NULL : malloc(n * sizeof *dry.heights);
    if (!rc && !dry.heights) {
        fprintf(stderr, "terrane_gallery: out of memory\n");
        rc = 1;
    }
    if (!rc) {
        for (size_t k = 0; k < n; k++) {
            const int is_wet = g.water_distance && g.water_distance[k] <= 0.0f;
            wet += (uint64_t)is_wet;
            dry.heights[k] = is_wet ? NAN : g.field.heights[k];
        }
        snprintf(path, sizeof path, "%s.dry.tif", base);
        if (trn_geotiff_write(path, &dry, NULL, TRN_GEOTIFF_COMPRESS_NONE, &e)) rc = fail(path, &e);
    }
    free(dry.heights);
    if (!rc)
        printf("{\"cells_x\": %u, \"cells_z\": %u, \"size_x\": %.17g, \"size_z\": %.17g, "
               "\"cell_x\": %.17g, \"cell_z\": %.17g, \"samples\": %llu, \"wet_samples\": %llu, "
               "\"seconds\": %.3f, \"rivers\": %d}\n",
               g.field.cells_x, g.field.cells_z, g.field.size_x, g.field.size_z,
               g.field.size_x / g.field.cells_x, g.field.size_z / g.field.cells_z,
               (unsigned long long)n, (unsigned long long)wet, seconds, rivers);
    trn_generated_dispose(&g);
    return rc;
}

static int read_u8(const char *path, trn_image *img)
{
    trn_error e;
    if (trn_png_read(path, NULL, img, &e)) return fail(path, &e);
    if (img->bit_depth != 8) {
        fprintf(stderr, "terrane_gallery: %s: expected an 8-bit picture, found %u-bit\n", path,
                img->bit_depth);
        trn_image_dispose(img);
        return 1;
    }
    return 0;
}

static int write_png(const char *path, const trn_image *img)
{
    trn_png_options o;
    trn_png_options_default(&o);
    o.compression_level = 9;
    trn_error e;
    return trn_png_write(path, img, &o, NULL, NULL, &e) ? fail(path, &e) : 0;
}

static int cmd_fit(const char *in, const char *out, const char *max_text, const char *min_text)
{
    const long max_w = parse_count(max_text, 1 << 16), min_w = parse_count(min_text, 1 << 16);
    if (max_w < 1 || min_w < 0 || min_w > max_w) return usage();
    trn_image src, dst;
    if (read_u8(in, &src)) return 1;
    const uint32_t w = src.width, h = src.height, ch = src.channels;
    uint32_t dw = w, dh = h;
    if (w > (uint32_t)max_w) {
        dw = (uint32_t)max_w;
        dh = (uint32_t)fmax(1.0, floor((double)h * dw / w + 0.5));
    } else if (w < (uint32_t)min_w) {
        const uint32_t f = ((uint32_t)min_w + w - 1) / w;
        dw = w * f;
        dh = h * f;
    }
    trn_error e;
    if (trn_image_init(&dst, dw, dh, (uint8_t)ch, 8, &e)) {
        trn_image_dispose(&src);
        return fail(out, &e);
    }
    const uint8_t *s = src.data;
    uint8_t *d = dst.data;
    if (dw <= w) {
        /* Area average: each output pixel covers [x0, x1) x [y0, y1) of the source in source
         * pixels; partial pixels weigh by the covered fraction. */
        const double fx = (double)w / dw, fy = (double)h / dh;
        for (uint32_t y = 0; y < dh; y++) {
            const double y0 = y * fy, y1 = (y + 1) * fy;
            for (uint32_t x = 0; x < dw; x++) {
                const double x0 = x * fx, x1 = (x + 1) * fx;
                for (uint32_t c = 0; c < ch; c++) {
                    double sum = 0.0, area = 0.0;
                    for (uint32_t sy = (uint32_t)y0; sy < h && sy < y1; sy++) {
                        const double wy = fmin(y1, sy + 1.0) - fmax(y0, (double)sy);
                        for (uint32_t sx = (uint32_t)x0; sx < w && sx < x1; sx++) {
                            const double wx = fmin(x1, sx + 1.0) - fmax(x0, (double)sx);
                            sum += wx * wy * s[((size_t)sy * w + sx) * ch + c];
                            area += wx * wy;
                        }
                    }
                    d[((size_t)y * dw + x) * ch + c] =
                        (uint8_t)fmin(255.0, floor(sum / area + 0.5));
                }
            }
        }
    } else {
        const uint32_t f = dw / w;
        for (uint32_t y = 0; y < dh; y++)
            for (uint32_t x = 0; x < dw; x++)
                memcpy(d + ((size_t)y * dw + x) * ch, s + ((size_t)(y / f) * w + x / f) * ch, ch);
    }
    trn_image_dispose(&src);
    const int rc = write_png(out, &dst);
    trn_image_dispose(&dst);
    return rc;
}

static int cmd_crop(const char *in, const char *out, const char *size_text)
{
    const long size = parse_count(size_text, 1 << 16);
    if (size < 1) return usage();
    trn_image src, dst;
    if (read_u8(in, &src)) return 1;
    const uint32_t cw = src.width < (uint32_t)size ? src.width : (uint32_t)size;
    const uint32_t chh = src.height < (uint32_t)size ? src.height : (uint32_t)size;
    const uint32_t x0 = (src.width - cw) / 2, y0 = (src.height - chh) / 2, ch = src.channels;
    trn_error e;
    if (trn_image_init(&dst, cw, chh, (uint8_t)ch, 8, &e)) {
        trn_image_dispose(&src);
        return fail(out, &e);
    }
    for (uint32_t y = 0; y < chh; y++)
        memcpy((uint8_t *)dst.data + (size_t)y * cw * ch,
               (const uint8_t *)src.data + ((size_t)(y0 + y) * src.width + x0) * ch,
               (size_t)cw * ch);
    trn_image_dispose(&src);
    const int rc = write_png(out, &dst);
    trn_image_dispose(&dst);
    return rc;
}

static int cmd_figures(const char *path, int count, char **names)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    if (!json_is_object(doc)) {
        fprintf(stderr, "terrane_gallery: %s:%d:%d: %s\n", path, je.line, je.column,
                doc ? "expected a JSON object" : je.text);
        json_decref(doc);
        return 1;
    }
    json_t *figures = json_object_get(doc, "figures");
    for (int k = 0; k < count; k++) {
        /* "key[i]": element i of a top-level array (render's grid and cell_size pairs). */
        char key[128];
        size_t index = 0;
        const char *open = strchr(names[k], '[');
        const bool indexed = open && (size_t)(open - names[k]) < sizeof key;
        if (indexed) {
            snprintf(key, sizeof key, "%.*s", (int)(open - names[k]), names[k]);
            index = strtoul(open + 1, NULL, 10);
        }
        json_t *value = indexed ? json_array_get(json_object_get(doc, key), index)
                                : json_object_get(doc, names[k]);
        size_t i;
        json_t *f;
        json_array_foreach(figures, i, f)
        {
            const char *name = json_string_value(json_object_get(f, "name"));
            if (name && strcmp(name, names[k]) == 0) value = json_object_get(f, "value");
        }
        if (json_is_number(value)) {
            printf("%s%.17g", k ? " " : "", json_number_value(value));
        } else if (json_is_string(value) && json_string_length(value) > 0) {
            /* A word: blanks become '_' so the line still splits into one field a name. */
            printf("%s", k ? " " : "");
            for (const char *c = json_string_value(value); *c; c++)
                putchar(*c == ' ' || *c == '\t' || *c == '\n' ? '_' : *c);
        } else
            printf("%sn/a", k ? " " : "");
    }
    printf("\n");
    json_decref(doc);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "presets") == 0) {
        for (uint32_t k = 0; k < trn_builtin_preset_count(); k++)
            printf("%s\n", trn_builtin_preset_id(k));
        return 0;
    }
    if (argc == 3 && strcmp(argv[1], "terrain") == 0) {
        json_error_t je;
        json_t *doc = json_load_file(argv[2], 0, &je);
        const bool terrain = is_terrain_document(doc);
        json_decref(doc);
        return terrain ? 0 : 1;
    }
    if (argc >= 4 && strcmp(argv[1], "figures") == 0)
        return cmd_figures(argv[2], argc - 3, argv + 3);
    if (argc == 5 && strcmp(argv[1], "generate") == 0)
        return cmd_generate(argv[2], argv[3], argv[4]);
    if (argc == 6 && strcmp(argv[1], "fit") == 0)
        return cmd_fit(argv[2], argv[3], argv[4], argv[5]);
    if (argc == 5 && strcmp(argv[1], "crop") == 0) return cmd_crop(argv[2], argv[3], argv[4]);
    return usage();
}
