/* terrane-mpi: drainage, stream power or a recipe's heights across mpirun's processes. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "core/fileio.h"
#include "graph/nodes/node_common.h"
#include "gen/stream_power_tiled.h"
#include "graph/tiles.h"
#include "mpi/comm_mpi.h"
#include "recipe/tiles_replay.h"
#include "terrane/drainage.h"
#include "terrane/drainage_tiled.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/heightfield.h"
#include "terrane/layers.h"
#include "terrane/presets.h"
#include "terrane/recipe.h"

static const char usage[] =
    "usage: mpirun -np N terrane-mpi generate RECIPE --tiles SAMPLES -o OUT.tif\n"
    "                 [--resolution CXxCZ [--keep-edits | --clear-edits]] [--threads T]\n"
    "                 [--max-work N] [--progress]\n"
    "Evaluates the recipe's graph tile by tile, each process the tile rows [R*r/N, R*(r+1)/N)\n"
    "of the R rows of tiles (Drainage nodes are split across the processes by tiles, Barnes'\n"
    "method, their results kept in tiles in a folder beside the output that every process\n"
    "shares, and so are a stream power evolution's steps on the output grid and the droplets\n"
    "of an erosion run by rows, by bands of rows; other global nodes run on every process),\n"
    "and writes one Cloud-Optimized\n"
    "GeoTIFF (BigTIFF, with overviews) on process 0: the same bytes as 'terrane generate RECIPE\n"
    "--tiles SAMPLES -o OUT.tif' on any process count. Sculpt strokes and protection\n"
    "snapshots are replayed: each process also evaluates the rows of tiles the strokes meeting\n"
    "its rows need. Process 0 prints the heights' xxh64, the time and each process's peak\n"
    "resident size.\n"
    "\n"
    "usage: mpirun -np N terrane-mpi drainage (INPUT | --landform SAMPLES [--seed S])\n"
    "                 [--tile SAMPLES] [--sea LEVEL] [--out PREFIX] [--runs R] [--whole]\n"
    "                 [--progress]\n"
    "Fills depressions, finds D8 directions and accumulates flow over tiles of SAMPLES a side\n"
    "(default 512), each process solving its share; process 0 prints the grid's xxh64 hashes\n"
    "(the same bytes on any process count), timings and the bytes each process moved.\n"
    "INPUT: a heightmap terrane reads (GeoTIFF, PNG, .ter, raw); --landform: ridged mountains\n"
    "of SAMPLES x SAMPLES generated on every process. --out writes PREFIX-filled.tif (float32\n"
    "GeoTIFF), PREFIX-flow_dir.u8 and PREFIX-accumulation.u32 (row-major, little-endian, row 0\n"
    "south). --whole also runs the one-process fill on process 0 and says whether it matches.\n"
    "\n"
    "usage: mpirun -np N terrane-mpi stream-power (INPUT | --landform SAMPLES [--seed S])\n"
    "                 [--tile SAMPLES] [--steps K] [--dir DIR] [--runs R] [--whole]\n"
    "Runs K steps (default 2) of stream-power erosion (Braun and Willett's implicit solve, Rho8\n"
    "routing, closed depressions routed, diffusion, outlets at each edge's low points) over tiles\n"
    "of SAMPLES a side (default 512), each process its run of tiles, their state in files under\n"
    "DIR (default: in memory); process 0 prints the xxh64 of the heights and the drainage area\n"
    "(the same bytes on any process count), the bytes moved by kind, per tile and step, and the\n"
    "time of each run. --whole also runs the whole-grid solve on process 0 and says whether it\n"
    "matches.\n";

/* One message for a failure, not one per process: process 0's, unless it only knows that
 * another failed; then the lowest-numbered process that failed itself speaks (processes that
 * fail alike, as on a bad recipe, would otherwise print the same message each). Collective. */
static void report_failure(int rank, trn_status st, const trn_error *err)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int own = st != TRN_OK && st != TRN_ERR_MISMATCH ? rank : size;
    int speaker = size;
    MPI_Allreduce(&own, &speaker, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (rank == speaker) {
        /* Where in the file, as terrane's own messages say it: line:column, else the byte. */
        char where[64] = "";
        if (err->line > 0)
            snprintf(where, sizeof where, ":%d:%d", err->line, err->column);
        else if (err->offset >= 0)
            snprintf(where, sizeof where, " (byte %lld)", (long long)err->offset);
        if (err->file[0])
            fprintf(stderr, "terrane-mpi: %s%s: %s\n", err->file, where, err->message);
        else
            fprintf(stderr, "terrane-mpi: %s\n", err->message);
    }
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static trn_status field_tile(void *user, uint32_t i0, uint32_t j0, uint32_t w, uint32_t h,
                             float *out, trn_error *err)
{
    (void)err;
    const trn_field *f = user;
    const size_t nx = (size_t)f->cells_x + 1u;
    for (uint32_t lj = 0; lj < h; lj++)
        memcpy(out + (size_t)lj * w, f->heights + (size_t)(j0 + lj) * nx + i0, w * sizeof(float));
    return TRN_OK;
}

static int progress_print(double done, const char *stage, void *user)
{
    (void)user;
    fprintf(stderr, "\r%s %5.1f%%", stage, done * 100.0);
    if (done >= 1.0) fputc('\n', stderr);
    return 0;
}

static unsigned long long hash(const void *p, size_t n)
{
    return (unsigned long long)XXH64(p, n, 0);
}

static trn_status load_input(const char *path, uint32_t landform, uint64_t seed, trn_field *f,
                             trn_error *err)
{
    memset(f, 0, sizeof *f);
    if (!path) {
        trn_status st =
            trn_field_init(f, landform - 1, landform - 1, landform - 1.0, landform - 1.0, err);
        if (st != TRN_OK) return st;
        trn_landform lf;
        memset(&lf, 0, sizeof lf);
        lf.name = "mpi";
        lf.profile = TRN_PROFILE_RIDGED;
        lf.height_variation = 450.0;
        lf.feature_size = 700.0;
        lf.roughness = 0.5;
        lf.octaves = 8;
        lf.warp_feature_size = 500.0;
        lf.warp_amplitude = 120.0;
        lf.stretch = 1.5;
        lf.heading = 20.0;
        st = trn_landform_fill(&lf, seed, f, NULL, NULL, err);
        if (st != TRN_OK) trn_field_dispose(f);
        return st;
    }
    trn_mapped_file mf;
    trn_status st = trn_mapped_file_open(&mf, path, 0, err);
    if (st != TRN_OK) return st;
    trn_heightfield_file file;
    st = trn_heightfield_decode(mf.data, mf.size, path, NULL, &file, NULL, NULL, err);
    trn_mapped_file_close(&mf);
    if (st != TRN_OK) return st;
    *f = file.field;
    return TRN_OK;
}

static trn_status write_raw(const char *path, const void *data, size_t bytes, trn_error *err)
{
    trn_atomic_file af;
    trn_status st = trn_atomic_file_open(&af, path, err);
    if (st != TRN_OK) return st;
    trn_atomic_file_write(&af, data, bytes);
    return trn_atomic_file_commit(&af, err);
}

static trn_status write_outputs(const char *prefix, const trn_drainage *d, trn_error *err)
{
    const size_t n = ((size_t)d->cells_x + 1u) * ((size_t)d->cells_z + 1u);
    char path[4096];
    trn_field f = {d->cells_x, d->cells_z, d->size_x, d->size_z, d->filled, 0.0, 0.0};
    snprintf(path, sizeof path, "%s-filled.tif", prefix);
    trn_status st = trn_geotiff_write(path, &f, NULL, TRN_GEOTIFF_COMPRESS_DEFLATE, err);
    if (st != TRN_OK) return st;
    snprintf(path, sizeof path, "%s-flow_dir.u8", prefix);
    st = write_raw(path, d->flow_dir, n, err);
    if (st != TRN_OK) return st;
    snprintf(path, sizeof path, "%s-accumulation.u32", prefix);
    return write_raw(path, d->accumulation, n * sizeof(uint32_t), err);
}


/* ---- generate: each process its rows of tiles, process 0 writes ---- */

/* A process's rows, full width, as raw floats in a file of its own (south row first). */
typedef struct band_writer {
    FILE *f;
    uint32_t width, tile;
    float *band; /* one row of tiles across the width */
    uint32_t rows;
} band_writer;

static trn_status band_put(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                           const float *values, trn_error *err)
{
    (void)z0;
    band_writer *b = user;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(b->band + (size_t)j * b->width + x0, values + (size_t)j * nx, nx * sizeof(float));
    if (x0 + nx < b->width) return TRN_OK;
    const size_t n = (size_t)nz * b->width;
    if (fwrite(b->band, sizeof(float), n, b->f) != n)
        return trn_error_set(err, TRN_ERR_IO, NULL, -1, "cannot write a band of tiles: disk full?");
    b->rows += nz;
    return TRN_OK;
}

static int progress_quiet(double done, const char *stage, void *user)
{
    (void)done;
    (void)stage;
    (void)user;
    return 0;
}

/* Global nodes across the processes that evaluate tiles: each Drainage node by Barnes' tiled
 * method (trn_drainage_tiled_compute: every process floods and accumulates its own tiles, the
 * spill and flow graphs are solved on process 0, the tiles fixed up), its result gathered on
 * process 0 and sent to the others, which need the whole of it as every global result; the
 * basins found from the filled surface, as the whole grid's drainage lists them. Other global
 * nodes run whole on every process. The same bytes as one process. */
typedef struct mpi_solver {
    trn_comm *comm; /* the processes that evaluate tiles; NULL: every node whole */
    uint32_t tile;
    unsigned drainages;
    trn_drainage_tiled_stats stats; /* summed over the drainages */
    uint64_t sent;                  /* bytes this process sent sharing results */
    unsigned evolutions;            /* global nodes whose stream power tiles were shared */
    uint64_t sp_sent;               /* bytes this process sent for them */
} mpi_solver;

static mpi_solver g_solver;

static trn_status share_array(trn_comm *comm, void **data, uint64_t bytes, trn_error *err)
{
    uint64_t got = bytes;
    trn_status st = trn_comm_broadcast(comm, data, &got, err);
    if (!st && got != bytes)
        st = trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                           "process 0 sent %llu bytes of a drainage, %llu expected",
                           (unsigned long long)got, (unsigned long long)bytes);
    return st;
}

static trn_status mpi_solve(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    mpi_solver *s = &g_solver;
    if (s->comm && strcmp(c->node->type, "drainage") != 0) {
        /* Every other global node whole on every process, but a stream power evolution's steps
         * on the output grid (in tiles with the tile cache) share their tiles across the
         * processes: each its run of tiles, the result whole on each. */
        trn_node_ctx shared = *c;
        shared.solve_comm = s->comm;
        uint64_t before = 0, after = 0;
        trn_comm_traffic(s->comm, &before, NULL);
        const trn_status st = trn_tile_solve_whole(&shared, r, err);
        trn_comm_traffic(s->comm, &after, NULL);
        if (after != before) {
            s->evolutions++;
            s->sp_sent += after - before;
        }
        return st;
    }
    if (!s->comm) return trn_tile_solve_whole(c, r, err);
    trn_field f = trn_node_field_view(r, c->inputs[0]);
    trn_drainage_tiling t;
    memset(&t, 0, sizeof t);
    t.cells_x = f.cells_x;
    t.cells_z = f.cells_z;
    t.size_x = f.size_x;
    t.size_z = f.size_z;
    t.sea_level = trn_node_drainage_sea(c->node, c->type, c->recipe);
    t.tile = s->tile;
    trn_drainage_tiles *tiles = NULL;
    trn_status st = trn_drainage_tiled_compute(s->comm, &t, field_tile, &f, &tiles, NULL, NULL, err);
    trn_drainage d;
    memset(&d, 0, sizeof d);
    if (!st) {
        trn_drainage_tiled_stats ts;
        trn_drainage_tiles_stats(tiles, &ts);
        s->stats.tiles += ts.tiles;
        s->stats.tiles_owned += ts.tiles_owned;
        s->stats.spill_nodes += ts.spill_nodes;
        s->stats.spill_edges += ts.spill_edges;
        s->stats.flow_links += ts.flow_links;
        s->stats.bytes_sent += ts.bytes_sent;
        s->stats.bytes_received += ts.bytes_received;
        st = trn_drainage_tiles_gather(tiles, s->comm, &d, err);
    }
    trn_drainage_tiles_free(tiles);
    st = trn_comm_agree(s->comm, st, err);
    const size_t n = ((size_t)f.cells_x + 1u) * ((size_t)f.cells_z + 1u);
    uint64_t before = 0, after = 0;
    trn_comm_traffic(s->comm, &before, NULL);
    if (!st) st = share_array(s->comm, (void **)&d.filled, n * sizeof(float), err);
    if (!st) st = share_array(s->comm, (void **)&d.flow_dir, n, err);
    if (!st) st = share_array(s->comm, (void **)&d.accumulation, n * sizeof(uint32_t), err);
    trn_comm_traffic(s->comm, &after, NULL);
    s->sent += after - before;
    if (!st) {
        d.sea_level = t.sea_level;
        st = trn_drainage_basins(&f, d.filled, &d.basins, &d.basin_count, err);
    }
    st = trn_comm_agree(s->comm, st, err);
    if (st) {
        trn_drainage_dispose(&d);
        return st;
    }
    s->drainages++;
    return trn_node_drainage_publish(c, r, &d, err);
}

static int generate_main(int rank, int size, int argc, char **argv)
{
    const char *recipe_path = NULL, *out = NULL;
    unsigned long tiles = 0, cx = 0, cz = 0, threads = 0;
    unsigned long long max_work = 0;
    int progress = 0, bad = 0;
    const char *bad_arg = NULL, *bad_why = NULL; /* what the message names */
    trn_edit_policy edits = TRN_EDITS_REFUSE;
    for (int a = 2; a < argc && !bad; a++) {
        const char *s = argv[a];
        const int more = a + 1 < argc;
        if (!strcmp(s, "--tiles") && more)
            tiles = strtoul(argv[++a], NULL, 10);
        else if ((!strcmp(s, "-o") || !strcmp(s, "--output")) && more)
            out = argv[++a];
        else if (!strcmp(s, "--resolution") && more) {
            bad = sscanf(argv[++a], "%lux%lu", &cx, &cz) != 2 || !cx || !cz;
            bad_arg = argv[a];
            bad_why = "--resolution takes CXxCZ, two cell counts above 0";
        } else if (!strcmp(s, "--threads") && more)
            threads = strtoul(argv[++a], NULL, 10);
        else if (!strcmp(s, "--max-work") && more)
            max_work = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(s, "--progress"))
            progress = 1;
        else if (!strcmp(s, "--keep-edits") || !strcmp(s, "--clear-edits")) {
            const trn_edit_policy p = s[2] == 'k' ? TRN_EDITS_KEEP : TRN_EDITS_CLEAR;
            bad = edits != TRN_EDITS_REFUSE && edits != p;
            bad_arg = s;
            bad_why = "--keep-edits and --clear-edits exclude each other";
            edits = p;
        } else if (s[0] != '-' && !recipe_path)
            recipe_path = s;
        else {
            bad = 1;
            bad_arg = s;
            bad_why = s[0] == '-' ? "an unknown option, or an option without its value"
                                  : "a second recipe (one is taken)";
        }
    }
    if (bad || !recipe_path || !out || tiles < 16 || tiles > 65536 || tiles % 16 ||
        threads > 4096) {
        if (rank == 0) {
            /* Say what is wrong before the usage. */
            if (!bad && recipe_path && out && threads <= 4096)
                fprintf(stderr, "terrane-mpi generate: --tiles must be a multiple of 16 from 16 "
                                "to 65536 (the GeoTIFF's tile), not %lu\n", tiles);
            else if (!bad && (!recipe_path || !out))
                fprintf(stderr, "terrane-mpi generate: %s\n",
                        !recipe_path ? "a recipe is required" : "-o OUT.tif is required");
            else if (!bad)
                fprintf(stderr, "terrane-mpi generate: --threads %lu is more than 4096\n",
                        threads);
            else
                fprintf(stderr, "terrane-mpi generate: %s: %s (see the usage below)\n", bad_arg,
                        bad_why);
            fputs(usage, stderr);
        }
        MPI_Finalize();
        return 2;
    }
    trn_error err;
    memset(&err, 0, sizeof err);
    trn_comm *comm = trn_comm_mpi_new(MPI_COMM_WORLD);
    trn_recipe r;
    memset(&r, 0, sizeof r);
    trn_graph g;
    memset(&g, 0, sizeof g);
    bool have_recipe = false, have_graph = false;
    trn_status st = comm ? TRN_OK : trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    if (!st) st = trn_recipe_read_source(recipe_path, &r, NULL, &err);
    have_recipe = st == TRN_OK;
    if (!st && cx)
        st =
            trn_recipe_change_grid(&r, r.size_x, r.size_z, (uint32_t)cx, (uint32_t)cz, edits, &err);
    if (!st) st = trn_graph_from_recipe(&r, &g, &err);
    have_graph = st == TRN_OK;
    /* This process's rows of tiles, and its band file beside the output. */
    const uint32_t width = r.cells_x + 1u, height = r.cells_z + 1u;
    const uint32_t rows = have_recipe ? (height + (uint32_t)tiles - 1u) / (uint32_t)tiles : 0u;
    const uint32_t r0 = (uint32_t)((uint64_t)rows * (uint64_t)rank / (uint64_t)size);
    const uint32_t r1 = (uint32_t)((uint64_t)rows * (uint64_t)(rank + 1) / (uint64_t)size);
    char *folder = NULL;
    {
        const char *slash = strrchr(out, '/');
        const size_t n = slash ? (size_t)(slash - out) : 0u;
        folder = malloc(n + 2u);
        if (folder) snprintf(folder, n + 2u, "%.*s", slash ? (int)(n ? n : 1u) : 1, slash ? out : ".");
    }
    const size_t plen = strlen(out) + 32u;
    char *part = malloc(plen);
    if (!folder || !part) st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    /* Global nodes are solved together by the processes that evaluate tiles (all of them
     * but those left without a row of tiles). */
    MPI_Comm work = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, !st && r1 > r0 ? 0 : MPI_UNDEFINED, rank, &work);
    /* Split nodes' tiles wait in a folder beside the output that every process shares (the
     * band files' folder, which every process can already reach): process 0 makes it. */
    char shared[4096] = "";
    trn_tile_split split;
    memset(&split, 0, sizeof split);
    if (work != MPI_COMM_NULL) {
        g_solver.comm = trn_comm_mpi_new(work);
        g_solver.tile = (uint32_t)tiles;
        if (!g_solver.comm) st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        int wrank = 0;
        MPI_Comm_rank(work, &wrank);
        if (wrank == 0 && folder) {
            snprintf(shared, sizeof shared, "%s/terrane-tiles-XXXXXX", folder);
            if (!mkdtemp(shared)) shared[0] = '\0';
        }
        MPI_Bcast(shared, (int)sizeof shared, MPI_CHAR, 0, work);
        if (!st && !shared[0])
            st = trn_error_set(&err, TRN_ERR_IO, folder, -1,
                               "cannot make a folder beside the output for the shared tiles");
        split.comm = g_solver.comm;
        split.shared_dir = shared;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = now_s();
    trn_tiles_replayed replayed;
    memset(&replayed, 0, sizeof replayed);
    band_writer b;
    memset(&b, 0, sizeof b);
    b.width = width;
    b.tile = (uint32_t)tiles;
    if (!st && r1 > r0) {
        snprintf(part, plen, "%s.part%d", out, rank);
        b.f = fopen(part, "wb");
        b.band = malloc((size_t)width * tiles * sizeof(float));
        if (!b.f)
            st = trn_error_set(&err, TRN_ERR_IO, part, -1, "cannot create this process's band file");
        else if (!b.band)
            st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for a band");
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = (int)threads;
        o.max_work = max_work;
        const uint32_t z0 = r0 * (uint32_t)tiles;
        const uint32_t z1 = r1 * (uint32_t)tiles < height ? r1 * (uint32_t)tiles : height;
        const trn_graph_tile_options to = {.tile = (uint32_t)tiles, .x0 = 0, .z0 = z0,
                                           .samples_x = width, .samples_z = z1 - z0,
                                           .cache_dir = folder};
        if (!st)
            /* Sculpt strokes: the rows of tiles the strokes meeting this band need are
             * evaluated too, the strokes replayed over them, and only the band kept. */
            st = trn_recipe_evaluate_tiles_split(
                &r, &g, &o, &to, mpi_solve, &split, band_put, &b,
                progress && rank == 0 ? progress_print : progress_quiet, NULL, &replayed, &err);
        if (b.f && fclose(b.f) != 0 && !st)
            st = trn_error_set(&err, TRN_ERR_IO, part, -1, "cannot write this process's band file");
        b.f = NULL;
        free(b.band);
    }
    st = comm ? trn_comm_agree(comm, st, &err) : st;
    const double t_eval = now_s() - t0;
    /* Process 0 puts the bands into the BigTIFF in row order, one row of tiles at a time. */
    XXH64_state_t *h = XXH64_createState();
    XXH64_reset(h, 0);
    trn_status wst = TRN_OK;
    if (!st && rank == 0) {
        trn_geotiff_tiled *w = NULL;
        float *rowbuf = malloc((size_t)width * tiles * sizeof(float));
        wst = rowbuf ? trn_geotiff_tiled_open(out, r.cells_x, r.cells_z, r.size_x, r.size_z,
                                              (uint32_t)tiles, &w, &err)
                     : trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
        uint32_t z = 0;
        for (int p = 0; p < size && !wst; p++) {
            snprintf(part, plen, "%s.part%d", out, p);
            const uint32_t q0 = (uint32_t)((uint64_t)rows * (uint64_t)p / (uint64_t)size);
            const uint32_t q1 = (uint32_t)((uint64_t)rows * (uint64_t)(p + 1) / (uint64_t)size);
            if (q1 == q0) continue;
            FILE *f = fopen(part, "rb");
            if (!f) wst = trn_error_set(&err, TRN_ERR_IO, part, -1, "cannot read a band file");
            for (uint32_t q = q0; q < q1 && !wst; q++) {
                const uint32_t nz = height - z < (uint32_t)tiles ? height - z : (uint32_t)tiles;
                const size_t n = (size_t)nz * width;
                if (fread(rowbuf, sizeof(float), n, f) != n) {
                    wst = trn_error_set(&err, TRN_ERR_TRUNCATED, part, -1, "a band file is short");
                    break;
                }
                XXH64_update(h, rowbuf, n * sizeof(float));
                wst = trn_geotiff_tiled_put(w, 0, z, width, nz, rowbuf, &err);
                z += nz;
            }
            if (f) fclose(f);
        }
        if (!wst) wst = trn_geotiff_tiled_close(w, &err);
        else if (w) trn_geotiff_tiled_abort(w);
        free(rowbuf);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* process 0 has read every band */
    if (part && r1 > r0) {
        snprintf(part, plen, "%s.part%d", out, rank);
        (void)remove(part);
    }
    if (shared[0]) (void)rmdir(shared); /* empty once every process closed its tiles */
    if (!st) st = comm ? trn_comm_agree(comm, wst, &err) : wst;
    const double wall = now_s() - t0;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    long mine = ru.ru_maxrss, most = 0;
    MPI_Reduce(&mine, &most, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    long *each_rss = rank == 0 ? calloc((size_t)size, sizeof *each_rss) : NULL;
    MPI_Gather(&mine, 1, MPI_LONG, each_rss, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    /* What splitting the drainages cost: the spill graph is process 0's (of those that
     * evaluate), the bytes every process's. */
    unsigned long long mine_d[6] = {g_solver.drainages + split.nodes,
                                    g_solver.stats.spill_nodes + split.stats.spill_nodes,
                                    g_solver.stats.flow_links + split.stats.flow_links,
                                    g_solver.evolutions, g_solver.drainages, split.banded},
                       most_d[6] = {0, 0, 0, 0, 0, 0};
    unsigned long long moved = g_solver.stats.bytes_sent + g_solver.sent + split.stats.bytes_sent,
                       moved_all = 0;
    /* The name of the node that read a drainage whole, from process 0 (every process agrees). */
    unsigned long long sp_moved = g_solver.sp_sent, sp_moved_all = 0;
    MPI_Reduce(mine_d, most_d, 6, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&moved, &moved_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&sp_moved, &sp_moved_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    /* The droplets of erosions run by rows: each process's count, to say how they were shared. */
    unsigned long long drops = split.droplets, er_moved = split.sent, er_moved_all = 0;
    unsigned long long *drops_all = rank == 0 ? calloc((size_t)size, sizeof *drops_all) : NULL;
    double er_cpu = split.cpu;
    double *er_cpu_all = rank == 0 ? calloc((size_t)size, sizeof *er_cpu_all) : NULL;
    MPI_Gather(&er_cpu, 1, MPI_DOUBLE, er_cpu_all, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    unsigned er_nodes = split.erosions, er_nodes_most = 0;
    MPI_Gather(&drops, 1, MPI_UNSIGNED_LONG_LONG, drops_all, 1, MPI_UNSIGNED_LONG_LONG, 0,
               MPI_COMM_WORLD);
    MPI_Reduce(&er_moved, &er_moved_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&er_nodes, &er_nodes_most, 1, MPI_UNSIGNED, MPI_MAX, 0, MPI_COMM_WORLD);
    /* What each process wrote of their results to the shared folder: its own rows. */
    unsigned long long er_kept = split.kept, er_kept_most = 0, er_kept_all = 0;
    MPI_Reduce(&er_kept, &er_kept_most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&er_kept, &er_kept_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    /* Breaches split: counted by the processes that evaluate, which need not include 0. */
    unsigned breaches = split.breaches, breaches_most = 0;
    MPI_Reduce(&breaches, &breaches_most, 1, MPI_UNSIGNED, MPI_MAX, 0, MPI_COMM_WORLD);
    /* What the strokes cost: rows evaluated beyond each process's own (the band is as wide as
     * the grid, so the extra samples are whole rows). */
    unsigned long long extra_rows = width ? replayed.extra / width : 0u, extra_all = 0,
                       extra_most = 0, strokes_most = 0, strokes_mine = replayed.strokes;
    MPI_Reduce(&extra_rows, &extra_all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&extra_rows, &extra_most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&strokes_mine, &strokes_most, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    int workers = work != MPI_COMM_NULL, workers_all = 0;
    MPI_Reduce(&workers, &workers_all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    int status = 0;
    if (st) {
        report_failure(rank, st, &err);
        status = 1;
    } else if (rank == 0) {
        printf("grid %ux%u samples, %u rows of tiles of %lu, %d processes\n", width, height, rows,
               tiles, size);
        if (most_d[0])
            printf("drainage: %llu node(s) split across %d processes (Barnes' spill graph: %llu "
                   "nodes; %llu flow links between tiles), %.2f MiB sent in all; %llu kept in "
                   "tiles of %u, %llu gathered whole on every process\n",
                   most_d[0], workers_all, most_d[1], most_d[2], (double)moved_all / 1048576.0,
                   most_d[0] - most_d[4], tiles < 64 ? 64u : (unsigned)tiles, most_d[4]);
        if (split.whole_for[0])
            printf("drainage: gathered whole for %s, which reads it whole\n", split.whole_for);
        if (breaches_most)
            printf("drain depressions: %u breach(es) split across %d processes (each breaches its "
                   "tiles; the heights passed between tiles solved on process 0)\n",
                   breaches_most, workers_all);
        if (most_d[3])
            printf("stream power: %llu node(s) with their steps on the output grid split across "
                   "%d processes by tiles of %lu, %.2f MiB sent in all; %llu result(s) kept by "
                   "bands of rows in the shared folder\n",
                   most_d[3], workers_all, tiles, (double)sp_moved_all / 1048576.0, most_d[5]);
        if (er_nodes_most && drops_all) {
            printf("erosion: %u node(s) by rows with their droplets %s %d process%s, "
                   "droplets per process:",
                   er_nodes_most, workers_all > 1 ? "split across" : "on", workers_all,
                   workers_all > 1 ? "es" : "");
            for (int p = 0; p < size; p++)
                printf(" %llu", drops_all[p]);
            printf(", %.2f MiB sent in all; CPU s outside the transport:",
                   (double)er_moved_all / 1048576.0);
            for (int p = 0; p < size && er_cpu_all; p++)
                printf(" %.2f", er_cpu_all[p]);
            printf("\n");
            if (er_kept_all)
                printf("erosion: kept in tiles, each process writing its own rows: %.3f MiB "
                       "written by the busiest process, %.3f MiB in all\n",
                       (double)er_kept_most / 1048576.0, (double)er_kept_all / 1048576.0);
        }
        if (strokes_most)
            printf("strokes: up to %llu sculpt and protection stroke(s) replayed on a process; "
                   "%llu rows evaluated again for them beyond the processes' own (%.1f%% of the "
                   "grid's %u), at most %llu by one process\n",
                   strokes_most, extra_all, 100.0 * (double)extra_all / (double)height, height,
                   extra_most);
        printf("heights xxh64 %016llx\n", (unsigned long long)XXH64_digest(h));
        printf("time s: %.3f (tiles %.3f), peak resident MiB (largest process): %.0f\n", wall,
               t_eval, (double)most / 1024.0);
        printf("peak resident MiB by process:");
        for (int p = 0; each_rss && p < size; p++)
            printf(" %.0f", (double)each_rss[p] / 1024.0);
        printf("\n");
    }
    XXH64_freeState(h);
    free(drops_all);
    free(er_cpu_all);
    free(each_rss);
    free(part);
    free(folder);
    if (have_graph) trn_graph_dispose(&g);
    if (have_recipe) trn_recipe_dispose(&r);
    trn_comm_free(comm);
    trn_comm_free(g_solver.comm);
    g_solver.comm = NULL;
    if (work != MPI_COMM_NULL) MPI_Comm_free(&work);
    MPI_Finalize();
    return status;
}

/* ---- stream-power: the tiled solver alone, for its bytes and its traffic ---- */

static double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void sp_params_of(trn_stream_power_params *p, uint32_t steps)
{
    trn_stream_power_params_default(p);
    p->steps = steps;
    p->border_outlets = true;
    p->seed = 77;
}

static int stream_power_main(int rank, int size, int argc, char **argv)
{
    const char *input = NULL, *dir = NULL;
    long landform = 0, tile = 512, runs = 1, steps = 2;
    uint64_t seed = 1234;
    int whole = 0, bad = 0;
    for (int a = 2; a < argc && !bad; a++) {
        const char *s = argv[a];
        const int more = a + 1 < argc;
        if (!strcmp(s, "--landform") && more)
            landform = atol(argv[++a]);
        else if (!strcmp(s, "--seed") && more)
            seed = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(s, "--tile") && more)
            tile = atol(argv[++a]);
        else if (!strcmp(s, "--steps") && more)
            steps = atol(argv[++a]);
        else if (!strcmp(s, "--dir") && more)
            dir = argv[++a];
        else if (!strcmp(s, "--runs") && more)
            runs = atol(argv[++a]);
        else if (!strcmp(s, "--whole"))
            whole = 1;
        else if (s[0] != '-' && !input)
            input = s;
        else
            bad = 1;
    }
    if (!bad && (input ? landform != 0 : (landform < 2 || landform > 65537))) bad = 1;
    if (!bad && (tile < 1 || tile > 1 << 20 || runs < 1 || steps < 1 || steps > 1000)) bad = 1;
    if (bad) {
        if (rank == 0) fputs(usage, stderr);
        MPI_Finalize();
        return 2;
    }
    trn_error err;
    memset(&err, 0, sizeof err);
    trn_field field, work;
    memset(&work, 0, sizeof work);
    trn_status st = load_input(input, (uint32_t)landform, seed, &field, &err);
    trn_comm *comm = trn_comm_mpi_new(MPI_COMM_WORLD);
    if (!comm) st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    const size_t n = st ? 0 : trn_field_sample_count(&field);
    float *area = NULL;
    if (!st) {
        st = trn_field_init(&work, field.cells_x, field.cells_z, field.size_x, field.size_z, &err);
        area = malloc(n * sizeof *area);
        if (!st && !area) st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    }
    if (comm) st = trn_comm_agree(comm, st, &err);
    if (st != TRN_OK) {
        report_failure(rank, st, &err);
        trn_comm_free(comm);
        if (field.heights) trn_field_dispose(&field);
        if (work.heights) trn_field_dispose(&work);
        free(area);
        MPI_Finalize();
        return 1;
    }
    trn_stream_power_params p;
    sp_params_of(&p, (uint32_t)steps);
    p.drainage_area = area;
    double *times = calloc((size_t)runs, sizeof *times);
    double *cpu = calloc((size_t)runs, sizeof *cpu);
    double *work_cpu = calloc((size_t)runs, sizeof *work_cpu);
    trn_sp_tiled_stats stats;
    memset(&stats, 0, sizeof stats);
    for (long r = 0; r < runs && st == TRN_OK; r++) {
        memcpy(work.heights, field.heights, n * sizeof(float));
        MPI_Barrier(MPI_COMM_WORLD);
        double w0 = 0.0, k0 = 0.0, w1 = 0.0, k1 = 0.0;
        trn_comm_time(comm, &w0, &k0);
        const double t0 = now_s(), c0 = cpu_s();
        st = trn_stream_power_run_tiled_comm(&work, &p, (uint32_t)tile, dir, comm, &stats, NULL,
                                             NULL, NULL, &err);
        cpu[r] = cpu_s() - c0;
        trn_comm_time(comm, &w1, &k1);
        work_cpu[r] = cpu[r] - (k1 - k0);
        MPI_Barrier(MPI_COMM_WORLD);
        times[r] = now_s() - t0;
    }
    if (st != TRN_OK) {
        report_failure(rank, st, &err);
        trn_comm_free(comm);
        trn_field_dispose(&field);
        trn_field_dispose(&work);
        free(area);
        free(times);
        free(cpu);
        free(work_cpu);
        MPI_Finalize();
        return 1;
    }
    /* The last run's traffic by kind: the sum over processes of what each received, and the
     * largest process's. */
    unsigned long long mine[8], sum[8], most[8];
    for (int k = 0; k < 4; k++) {
        mine[k] = stats.sent[k];
        mine[4 + k] = stats.received[k];
    }
    MPI_Reduce(mine, sum, 8, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, most, 8, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    unsigned rounds = stats.incision_rounds, rounds_max = 0;
    MPI_Reduce(&rounds, &rounds_max, 1, MPI_UNSIGNED, MPI_MAX, 0, MPI_COMM_WORLD);
    double *cpu_sum = calloc((size_t)runs, sizeof *cpu_sum),
           *cpu_max = calloc((size_t)runs, sizeof *cpu_max);
    MPI_Reduce(cpu, cpu_sum, (int)runs, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(cpu, cpu_max, (int)runs, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    double *work_sum = calloc((size_t)runs, sizeof *work_sum);
    double *work_max = calloc((size_t)runs, sizeof *work_max);
    MPI_Reduce(work_cpu, work_sum, (int)runs, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(work_cpu, work_max, (int)runs, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        printf("grid %ux%u samples, %u tiles of %ld, %d processes, %ld steps\n", field.cells_x + 1,
               field.cells_z + 1, stats.tiles, tile, size, steps);
        printf("heights xxh64 %016llx\n", hash(work.heights, n * sizeof(float)));
        printf("area xxh64 %016llx\n", hash(area, n * sizeof(float)));
        static const char *kind[4] = {"frames", "graphs", "incision", "result"};
        const double per = (double)stats.tiles * (double)steps;
        /* Sent counts each copy (an all-gather sends a block to each other process); a tile's
         * own share is that over size - 1. */
        for (int k = 0; k < 4; k++) {
            const double each =
                (k == 3 ? (double)sum[k] / stats.tiles : (double)sum[k] / per) / 1024.0;
            printf("%-8s sent %.3f MiB (largest process %.3f), received %.3f MiB (largest %.3f)"
                   "; %s %.1f KiB, %.2f KiB a copy\n",
                   kind[k], (double)sum[k] / 1048576.0, (double)most[k] / 1048576.0,
                   (double)sum[4 + k] / 1048576.0, (double)most[4 + k] / 1048576.0,
                   k == 3 ? "per tile" : "per tile and step", each,
                   size > 1 ? each / (size - 1) : 0.0);
        }
        printf("incision rounds %u over %ld steps\n", rounds_max, steps);
        printf("time s:");
        for (long r = 0; r < runs; r++)
            printf(" %.3f", times[r]);
        printf("\ncpu s (all processes / the busiest):");
        for (long r = 0; r < runs; r++)
            printf(" %.3f/%.3f", cpu_sum[r], cpu_max[r]);
        printf("\ncpu s outside the collectives (all processes / the busiest):");
        for (long r = 0; r < runs; r++)
            printf(" %.3f/%.3f", work_sum[r], work_max[r]);
        printf("\n");
        if (whole) {
            trn_field w;
            float *wa = malloc(n * sizeof *wa);
            st = trn_field_init(&w, field.cells_x, field.cells_z, field.size_x, field.size_z, &err);
            if (!st && wa) {
                memcpy(w.heights, field.heights, n * sizeof(float));
                p.drainage_area = wa;
                const double t0 = now_s();
                st = trn_stream_power_run(&w, &p, NULL, NULL, NULL, &err);
                const double tw = now_s() - t0;
                if (st) {
                    fprintf(stderr, "terrane-mpi: %s\n", err.message);
                    status = 1;
                } else {
                    const int same = !memcmp(w.heights, work.heights, n * sizeof(float)) &&
                                     !memcmp(wa, area, n * sizeof(float));
                    printf("whole grid: %s (whole-grid solve %.3f s)\n",
                           same ? "same bytes" : "DIFFERENT", tw);
                    status = same ? 0 : 3;
                }
                trn_field_dispose(&w);
            } else {
                status = 1;
            }
            free(wa);
        }
    }
    trn_comm_free(comm);
    trn_field_dispose(&field);
    trn_field_dispose(&work);
    free(area);
    free(times);
    free(cpu);
    free(cpu_sum);
    free(cpu_max);
    free(work_cpu);
    free(work_sum);
    free(work_max);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 2 && strcmp(argv[1], "generate") == 0) return generate_main(rank, size, argc, argv);
    if (argc >= 2 && strcmp(argv[1], "stream-power") == 0)
        return stream_power_main(rank, size, argc, argv);
    const char *input = NULL, *out = NULL;
    long landform = 0, tile = 512, runs = 1;
    uint64_t seed = 1234;
    double sea = NAN;
    int whole = 0, progress = 0, bad = argc < 2 || strcmp(argv[1], "drainage") != 0;
    for (int a = 2; a < argc && !bad; a++) {
        const char *s = argv[a];
        const int more = a + 1 < argc;
        if (!strcmp(s, "--landform") && more)
            landform = atol(argv[++a]);
        else if (!strcmp(s, "--seed") && more)
            seed = strtoull(argv[++a], NULL, 10);
        else if (!strcmp(s, "--tile") && more)
            tile = atol(argv[++a]);
        else if (!strcmp(s, "--sea") && more)
            sea = atof(argv[++a]);
        else if (!strcmp(s, "--out") && more)
            out = argv[++a];
        else if (!strcmp(s, "--runs") && more)
            runs = atol(argv[++a]);
        else if (!strcmp(s, "--whole"))
            whole = 1;
        else if (!strcmp(s, "--progress"))
            progress = 1;
        else if (s[0] != '-' && !input)
            input = s;
        else
            bad = 1;
    }
    if (!bad && (input ? landform != 0 : (landform < 2 || landform > 65537))) bad = 1;
    if (!bad && (tile < 1 || tile > 1 << 20 || runs < 1)) bad = 1;
    if (bad) {
        if (rank == 0) fputs(usage, stderr);
        MPI_Finalize();
        return 2;
    }
    trn_error err;
    memset(&err, 0, sizeof err);
    trn_field field;
    trn_status st = load_input(input, (uint32_t)landform, seed, &field, &err);
    trn_comm *comm = trn_comm_mpi_new(MPI_COMM_WORLD);
    if (!comm) st = trn_error_set(&err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    if (comm) st = trn_comm_agree(comm, st, &err);
    if (st != TRN_OK) {
        report_failure(rank, st, &err);
        trn_comm_free(comm);
        MPI_Finalize();
        return 1;
    }
    trn_drainage_tiling g = {field.cells_x, field.cells_z, field.size_x, field.size_z, sea,
                             (uint32_t)tile, 0, 0};
    double *times = calloc((size_t)runs, sizeof *times);
    trn_drainage_tiles *tiles = NULL;
    for (long r = 0; r < runs && st == TRN_OK; r++) {
        trn_drainage_tiles_free(tiles);
        tiles = NULL;
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = now_s();
        st = trn_drainage_tiled_compute(comm, &g, field_tile, &field, &tiles,
                                        progress && rank == 0 ? progress_print : NULL, NULL, &err);
        MPI_Barrier(MPI_COMM_WORLD);
        times[r] = now_s() - t0;
    }
    trn_drainage_tiled_stats s;
    trn_drainage_tiles_stats(tiles, &s);
    trn_drainage d;
    memset(&d, 0, sizeof d);
    double t_gather = 0.0;
    if (st == TRN_OK) {
        const double t0 = now_s();
        st = trn_drainage_tiles_gather(tiles, comm, &d, &err);
        t_gather = now_s() - t0;
    }
    st = trn_comm_agree(comm, st, &err);
    if (st != TRN_OK) {
        report_failure(rank, st, &err);
        trn_drainage_tiles_free(tiles);
        trn_comm_free(comm);
        trn_field_dispose(&field);
        free(times);
        MPI_Finalize();
        return 1;
    }
    /* Traffic of the computation itself (the gather of the results is counted apart). */
    unsigned long long mine[2] = {s.bytes_sent, s.bytes_received}, most[2], sum[2];
    MPI_Reduce(mine, most, 2, MPI_UNSIGNED_LONG_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, sum, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        const size_t n = ((size_t)field.cells_x + 1u) * ((size_t)field.cells_z + 1u);
        printf("grid %ux%u samples, %zu tiles of %ld, %d processes\n", field.cells_x + 1,
               field.cells_z + 1, s.tiles, tile, size);
        printf("filled xxh64 %016llx\n", hash(d.filled, n * sizeof(float)));
        printf("flow_dir xxh64 %016llx\n", hash(d.flow_dir, n));
        printf("accumulation xxh64 %016llx\n", hash(d.accumulation, n * sizeof(uint32_t)));
        printf("spill graph %zu nodes %zu edges, flat rounds %zu, flow links %zu\n", s.spill_nodes,
               s.spill_edges, s.flat_rounds, s.flow_links);
        printf("traffic bytes: sent max %llu total %llu, received max %llu total %llu, per tile "
               "%.0f\n",
               most[0], sum[0], most[1], sum[1], (double)sum[1] / (double)s.tiles);
        printf("time s:");
        for (long r = 0; r < runs; r++)
            printf(" %.3f", times[r]);
        printf(" (gather %.3f)\n", t_gather);
        if (whole) {
            trn_drainage w;
            const double t0 = now_s();
            const trn_status ws = trn_drainage_compute(&field, sea, &w, NULL, NULL, &err);
            const double tw = now_s() - t0;
            if (ws != TRN_OK) {
                fprintf(stderr, "terrane-mpi: %s\n", err.message);
                status = 1;
            } else {
                const int same = !memcmp(w.filled, d.filled, n * sizeof(float)) &&
                                 !memcmp(w.flow_dir, d.flow_dir, n) &&
                                 !memcmp(w.accumulation, d.accumulation, n * sizeof(uint32_t));
                printf("one process: %s (whole-grid fill %.3f s)\n",
                       same ? "same bytes" : "DIFFERENT", tw);
                status = same ? 0 : 3;
                trn_drainage_dispose(&w);
            }
        }
        if (out && write_outputs(out, &d, &err) != TRN_OK) {
            fprintf(stderr, "terrane-mpi: %s\n", err.message);
            status = 1;
        }
    }
    trn_drainage_dispose(&d);
    trn_drainage_tiles_free(tiles);
    trn_comm_free(comm);
    trn_field_dispose(&field);
    free(times);
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
