/* Heightfield Input benchmark: a DEM through the graph node (hash for the key, read, fill,
 * resample). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"

/* usage: bench_graph_input OUT_DIR [SIZE] [CELLS] [RUNS]
 * Writes OUT_DIR/bench_input.tif (SIZE x SIZE float32, Deflate, UTM 33N, 30 m pixels, 0.4% of
 * it NoData in 16 square holes), then times, best and median of RUNS, on the recipe's CELLS x
 * CELLS grid: the cache keys (one pass of XXH64 over the file) and a whole evaluation of
 * heightfield_input -> terrain_output (read, NoData fill, bicubic resample). */
int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_graph_input OUT_DIR [SIZE] [CELLS] [RUNS]\n");
        return 2;
    }
    const char *dir = argv[1];
    const uint32_t size = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 4097;
    const uint32_t cells = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 10) : 2048;
    const int runs = argc > 4 ? atoi(argv[4]) : 5;
    if (size < 64 || cells < 1 || runs < 1 || runs > 64) return 2;
    char tif[1024];
    snprintf(tif, sizeof tif, "%s/bench_input.tif", dir);
    trn_field f;
    trn_error e;
    if (fractal_dem(&f, size, 0.0)) return 1;
    const uint32_t hole = size / 64;
    for (uint32_t k = 0; k < 16; k++) {
        const uint32_t x0 = (k % 4) * (size / 4) + size / 8, z0 = (k / 4) * (size / 4) + size / 8;
        for (uint32_t j = z0; j < z0 + hole; j++)
            for (uint32_t i = x0; i < x0 + hole; i++)
                f.heights[(size_t)j * size + i] = NAN;
    }
    trn_geotiff_georef g;
    memset(&g, 0, sizeof g);
    g.has_transform = true;
    const double t[6] = {500000, 30, 0, 4100000, 0, -30};
    memcpy(g.transform, t, sizeof t);
    g.has_geokeys = true;
    g.model_type = TRN_GEOTIFF_MODEL_PROJECTED;
    g.projected_epsg = 32633;
    trn_geotiff_georef_derive(&g, size, size);
    if (trn_geotiff_write(tif, &f, &g, TRN_GEOTIFF_COMPRESS_DEFLATE, &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    trn_field_dispose(&f);

    char text[1024];
    snprintf(text, sizeof text,
             "{\"size\":[4096,4096],\"resolution\":[%u,%u],\"seed\":1,\"default_landform\":\"l\","
             "\"landforms\":{\"l\":{}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[1,1,"
             "1,1]}},\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":[{\"id\":\"dem\","
             "\"type\":\"heightfield_input\",\"params\":{\"path\":\"bench_input.tif\","
             "\"resample\":\"bicubic\"}},{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":"
             "{\"field\":{\"node\":\"dem\"}}}]}}",
             cells, cells);
    trn_recipe r;
    trn_graph graph;
    if (trn_recipe_parse(text, strlen(text), "bench", &r, NULL, &e) ||
        trn_recipe_set_base_dir(&r, dir, &e) || trn_graph_from_recipe(&r, &graph, &e)) {
        fprintf(stderr, "%s\n", e.message);
        return 1;
    }
    double keys[64], evals[64];
    char note[400] = "";
    for (int k = 0; k < runs; k++) {
        uint64_t key[2];
        double a = now_s();
        if (trn_graph_keys(&graph, &r, TRN_EROSION_FINAL, key, &e)) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        keys[k] = now_s() - a;
        trn_graph_run *run = NULL;
        a = now_s();
        if (trn_graph_evaluate(&graph, &r, NULL, &run, NULL, NULL, &e)) {
            fprintf(stderr, "%s\n", e.message);
            return 1;
        }
        evals[k] = now_s() - a;
        uint32_t n = 0;
        const trn_node_report *rep = trn_graph_run_report(run, &n);
        snprintf(note, sizeof note, "%s", n ? rep[0].note : "");
        trn_graph_run_free(run);
    }
    qsort(keys, (size_t)runs, sizeof *keys, cmp_double);
    qsort(evals, (size_t)runs, sizeof *evals, cmp_double);
    printf("%u x %u Deflate GeoTIFF onto %u x %u cells, bicubic; load %.2f\n", size, size, cells,
           cells, load_average());
    printf("  keys (check + file hash):      best %.3f s, median %.3f s\n", keys[0],
           keys[runs / 2]);
    printf("  evaluation (keys, read, fill, resample): best %.3f s, median %.3f s\n", evals[0],
           evals[runs / 2]);
    printf("  note: %s\n", note);
    trn_graph_dispose(&graph);
    trn_recipe_dispose(&r);
    return 0;
}
