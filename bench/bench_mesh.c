/* Benchmark: every chunk and level of detail of a 4097^2 surface, camera selection, .glb write. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "bench_util.h"
#include "terrane/mesh.h"

/* Usage: bench_mesh [CELLS [RUNS [OUT.glb]]] (defaults 4096, 5, /tmp/bench_mesh.glb). */
int main(int argc, char **argv)
{
    const uint32_t cells = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 4096u;
    const int runs = argc > 2 ? atoi(argv[2]) : 5;
    const char *out = argc > 3 ? argv[3] : "/tmp/bench_mesh.glb";
    if (cells == 0 || runs < 1 || runs > 100) return 1;
    trn_error e;
    trn_field f;
    if (trn_field_init(&f, cells, cells, (double)cells, (double)cells, &e) != TRN_OK) return 1;
    const size_t nx = (size_t)cells + 1u, n = nx * nx;
    uint8_t *roles = malloc(n);
    if (!roles) return 1;
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++) {
            const size_t k = (size_t)j * nx + i;
            const double h = 400.0 * value_noise(i / 256.0, j / 256.0, 7) +
                             60.0 * value_noise(i / 32.0, j / 32.0, 8) +
                             4.0 * value_noise(i / 4.0, j / 4.0, 9);
            f.heights[k] = (float)h;
            roles[k] = (uint8_t)(h < 120.0 ? 8 : h > 380.0 ? 6 : (uint8_t)(hash3(i, j, 3) % 3u));
        }
    trn_mesh_options o;
    trn_mesh_options_default(&o);
    o.chunk_cells = 64;
    int max_threads = 1;
#ifdef _OPENMP
    max_threads = omp_get_max_threads();
#endif
    printf("bench_mesh: %zu x %zu samples, chunks of %u cells, %d runs, load average %.2f "
           "before\n",
           nx, nx, o.chunk_cells, runs, load_average());
    for (int threads = 1; threads <= max_threads;
         threads = threads == 1 && max_threads > 1 ? max_threads : threads + max_threads) {
        o.threads = threads;
        double t_build[100], t_select[100], t_write[100], t_full[100];
        uint64_t full_bytes = 0;
        uint64_t tris = 0, verts = 0, bytes = 0, all_tris = 0;
        uint32_t histogram[16] = {0};
        for (int r = 0; r < runs; r++) {
            trn_mesh *m = NULL;
            double t0 = now_s();
            if (trn_mesh_build(&f, roles, &o, &m, NULL, NULL, &e) != TRN_OK) {
                fprintf(stderr, "build: %s\n", e.message);
                return 1;
            }
            t_build[r] = now_s() - t0;
            const size_t chunks = (size_t)m->chunks_x * m->chunks_z;
            uint32_t *levels = malloc(chunks * sizeof *levels);
            if (!levels) return 1;
            /* A camera 700 units above one corner, 60 degrees, 1080 pixels, 2 pixels. */
            trn_mesh_camera cam = {{0.0, 700.0, 0.0}, 60.0, 1080.0, 2.0};
            t0 = now_s();
            if (trn_mesh_select_camera(m, &cam, levels, &e) != TRN_OK) return 1;
            t_select[r] = now_s() - t0;
            trn_mesh_scene scene;
            memset(&scene, 0, sizeof scene);
            scene.mesh = m;
            scene.levels = levels;
            scene.chunks = true;
            trn_mesh_write_report rep;
            t0 = now_s();
            if (trn_gltf_write(out, TRN_GLTF_GLB, &scene, &rep, &e) != TRN_OK) {
                fprintf(stderr, "write: %s\n", e.message);
                return 1;
            }
            t_write[r] = now_s() - t0;
            /* The finest level everywhere: the largest file (merged, one mesh). */
            trn_mesh_scene finest = scene;
            finest.levels = NULL;
            finest.chunks = false;
            trn_mesh_write_report full;
            t0 = now_s();
            if (trn_gltf_write(out, TRN_GLTF_GLB, &finest, &full, &e) != TRN_OK) {
                fprintf(stderr, "write: %s\n", e.message);
                return 1;
            }
            t_full[r] = now_s() - t0;
            full_bytes = full.bytes;
            tris = rep.triangles;
            verts = rep.vertices;
            bytes = rep.bytes;
            all_tris = 0;
            memset(histogram, 0, sizeof histogram);
            for (size_t k = 0; k < chunks; k++) {
                histogram[levels[k] < 16 ? levels[k] : 15]++;
                for (uint32_t l = 0; l < m->level_count; l++)
                    all_tris += m->chunks[k].levels[l].index_count / 3u;
            }
            free(levels);
            trn_mesh_free(m);
        }
        qsort(t_build, (size_t)runs, sizeof(double), cmp_double);
        qsort(t_select, (size_t)runs, sizeof(double), cmp_double);
        qsort(t_write, (size_t)runs, sizeof(double), cmp_double);
        qsort(t_full, (size_t)runs, sizeof(double), cmp_double);
        printf("  %d thread%s: build (all levels, %llu triangles) median %.3f s best %.3f s | "
               "camera selection median %.5f s | .glb write (%llu vertices, %llu triangles, %.1f "
               "MB) median %.3f s best %.3f s\n",
               threads, threads == 1 ? " " : "s", (unsigned long long)all_tris, t_build[runs / 2],
               t_build[0], t_select[runs / 2], (unsigned long long)verts, (unsigned long long)tris,
               (double)bytes / 1e6, t_write[runs / 2], t_write[0]);
        printf("    level 0 everywhere, merged .glb (%.1f MB): median %.3f s best %.3f s\n",
               (double)full_bytes / 1e6, t_full[runs / 2], t_full[0]);
        printf("    chunks per level:");
        for (int l = 0; l < 8; l++)
            printf(" %u", histogram[l]);
        printf("\n");
    }
    printf("load average %.2f after\n", load_average());
    free(roles);
    trn_field_dispose(&f);
    return 0;
}
