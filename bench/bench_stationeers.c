/* Benchmark: Stationeers octree to heightfield on a MaxDepth-12 (4096^3) synthetic world. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "terrane/generate.h"
#include "terrane/stationeers.h"

/* usage: bench_stationeers [MAX_DEPTH (default 12)] [RUNS (default 3)]
 * The world comes from a landform heightfield of 2^MAX_DEPTH samples a side (heights 300 ..
 * 900 voxels), through trn_stationeers_from_field and the terrain.dat writer and reader; only
 * trn_stationeers_to_field is timed (best of RUNS). */
int main(int argc, char **argv)
{
    uint32_t depth = argc > 1 ? (uint32_t)atoi(argv[1]) : 12u;
    int runs = argc > 2 ? atoi(argv[2]) : 3;
    if (depth < 1 || depth > 14 || runs < 1) {
        fprintf(stderr, "usage: bench_stationeers [MAX_DEPTH 1..14] [RUNS]\n");
        return 2;
    }
    const uint32_t side = 1u << depth;
    trn_field field;
    trn_error err;
    if (trn_field_init(&field, side - 1, side - 1, side - 1, side - 1, &err) != TRN_OK) return 1;
    trn_landform lf;
    memset(&lf, 0, sizeof lf);
    lf.name = "bench";
    lf.profile = TRN_PROFILE_FBM;
    lf.base_height = 300.0 * side / 4096.0;
    lf.height_variation = 600.0 * side / 4096.0;
    lf.feature_size = 1024.0;
    lf.roughness = 0.5;
    lf.octaves = 8;
    lf.warp_feature_size = 500.0;
    lf.warp_amplitude = 120.0;
    lf.stretch = 1.0;
    if (trn_landform_fill(&lf, 1234, &field, NULL, NULL, &err) != TRN_OK) {
        fprintf(stderr, "landform: %s\n", err.message);
        return 1;
    }
    trn_stationeers_field_options o;
    trn_stationeers_field_options_default(&o);
    o.max_depth = depth;
    trn_stationeers_terrain built;
    double t0 = now_s();
    if (trn_stationeers_from_field(&field, &o, &built, NULL, NULL, NULL, &err) != TRN_OK) {
        fprintf(stderr, "from_field: %s\n", err.message);
        return 1;
    }
    double t_build = now_s() - t0;
    uint8_t *bytes;
    size_t size;
    if (trn_stationeers_encode(&built, &bytes, &size, &err) != TRN_OK) return 1;
    trn_stationeers_dispose(&built);
    trn_stationeers_terrain t;
    t0 = now_s();
    if (trn_stationeers_parse(bytes, size, "bench.dat", NULL, &t, &err) != TRN_OK) {
        fprintf(stderr, "parse: %s\n", err.message);
        return 1;
    }
    double t_parse = now_s() - t0;
    free(bytes);
    printf("world: MaxDepth %u (%u^3 voxels), %llu nodes (%llu branches, %llu leaves), %.1f MB "
           "terrain.dat\n",
           depth, side, (unsigned long long)t.node_count, (unsigned long long)t.branch_count,
           (unsigned long long)t.leaf_count, (double)size / 1e6);
    printf("heightfield -> octree: %.3f s; parse terrain.dat: %.3f s\n", t_build, t_parse);
    double best = 1e30;
    double worst_err = 0;
    for (int r = 0; r < runs; r++) {
        trn_field back;
        t0 = now_s();
        if (trn_stationeers_to_field(&t, &o, &back, NULL, NULL, NULL, &err) != TRN_OK) {
            fprintf(stderr, "to_field: %s\n", err.message);
            return 1;
        }
        double dt = now_s() - t0;
        if (dt < best) best = dt;
        if (r == 0)
            for (size_t k = 0; k < (size_t)side * side; k++) {
                double d = (double)back.heights[k] - (double)field.heights[k];
                if (d < 0) d = -d;
                if (d > worst_err) worst_err = d;
            }
        trn_field_dispose(&back);
    }
    printf("octree -> heightfield (%u x %u columns): %.3f s best of %d (target < 2 s); largest "
           "height error %.5f voxels (half a density step is %.5f)\n",
           side, side, best, runs, worst_err, 0.5 / 255.0);
    trn_stationeers_dispose(&t);
    trn_field_dispose(&field);
    return 0;
}
