/* The seam between the tiled evaluator and the solvers of global nodes (internal). */
#ifndef TRN_GRAPH_TILES_H
#define TRN_GRAPH_TILES_H

#include "gen/erosion_internal.h"
#include "graph/graph_internal.h"
#include "terrane/comm.h"
#include "terrane/drainage_tiled.h"

/* Solves one global node (drainage, filling, accumulation, stream power, water, ...) for the
 * tiled evaluator: ctx holds the node and its inputs on the whole grid (tile nodes' outputs
 * assembled from their tiles, ctx->window NULL); fill r (the whole grid) as trn_node_compute
 * would, bit for bit. A distributed solver (Barnes' tile-local priority-flood with a spill
 * graph, MPI ranks) plugs in here and must give the same bytes as trn_tile_solve_whole. */
typedef trn_status (*trn_global_solver)(const trn_node_ctx *ctx, trn_node_result *r,
                                        trn_error *err);

/* The default: the node's own whole-grid computation. */
trn_status trn_tile_solve_whole(const trn_node_ctx *ctx, trn_node_result *r, trn_error *err);

/* trn_graph_evaluate_tiles with global nodes solved by solve (NULL: trn_tile_solve_whole). */
trn_status trn_graph_evaluate_tiles_with(const trn_graph *graph, const trn_recipe *recipe,
                                         const trn_graph_options *options,
                                         const trn_graph_tile_options *tiles,
                                         trn_global_solver solve, trn_graph_tile_sink sink,
                                         void *user, trn_progress_fn progress, void *progress_user,
                                         trn_error *err);

/* Global work shared by the processes of a tiled run (terrane-mpi generate).
 * Global nodes split with their results kept in tiles: a Drainage whose drainage pin only D8
 * Flow Accumulation nodes read (its accumulation mask and theirs go to the tile cache), those
 * Flow Accumulations, and a Drain Depressions (filling, or breaching: the heights its tiles'
 * exits pass on solved as a small graph on process 0). Each process solves its run of the
 * cache's tiles (trn_drainage_tiled_compute over comm, inputs read a tile at a time: a tile
 * node's computed on the tile, a global node's from memory or the cache) and writes them into
 * the folder shared_dir, which every process of comm reads and writes (the same folder on each,
 * existing already); downstream nodes read the windows they need from it. Nothing is gathered
 * whole. An erosion run by rows (below) has its droplets shared by comm's processes, each its
 * band of rows (trn_erosion_run_rows_comm), its results kept in the shared folder as well, each
 * process writing the rows it keeps (trn_erosion_rows_io.own_rows). Every process of comm
 * evaluates together (each its own window). */
typedef struct trn_tile_split {
    trn_comm *comm;         /* NULL: nothing split */
    const char *shared_dir; /* the shared folder (NULL: no drainage split; the tile cache's own
                               folder is cache_dir's) */
    /* Filled by the evaluator: */
    unsigned nodes;                 /* drainages, fills and breaches solved split */
    unsigned breaches;              /* of them, Drain Depressions that breach */
    trn_drainage_tiled_stats stats; /* summed over them */
    /* The first node that read a drainage or a split result whole, "node 'ID' (TYPE)" (a
     * Drainage is then gathered for it, a split result read from the shared folder), else "". */
    char whole_for[160];
    unsigned erosions; /* erosion nodes run by rows across comm's processes */
    unsigned banded;   /* Stream Power results kept by bands of rows in the shared folder */
    uint64_t droplets; /* droplets this process ran for them, all passes */
    uint64_t sent;     /* bytes this process sent for them */
    double cpu;        /* CPU seconds this process spent in them outside the transport */
    uint64_t kept;     /* bytes this process wrote of their results to the shared folder (each
                          process its own rows; 0 without a shared folder) */
} trn_tile_split;

/* trn_graph_evaluate_tiles_with, with global work shared as split says (NULL: as _with). */
trn_status trn_graph_evaluate_tiles_split(const trn_graph *graph, const trn_recipe *recipe,
                                          const trn_graph_options *options,
                                          const trn_graph_tile_options *tiles,
                                          trn_global_solver solve, trn_tile_split *split,
                                          trn_graph_tile_sink sink, void *user,
                                          trn_progress_fn progress, void *progress_user,
                                          trn_error *err);

/* Whether a Flow Accumulation node routes by D8 (its mask is then its drainage's
 * accumulation mask, bit for bit). */
bool trn_node_flow_d8(const trn_graph_node *n, const trn_node_type *t);

/* Whether an erosion node runs row band by row band in a tiled run with a disk tile cache:
 * droplets (detach mode) on the output grid (no coarser droplet_cell). The tiled evaluator also
 * asks that its drainage input be left unconnected and its field come from a global node. */
bool trn_node_erosion_by_rows(const trn_graph_node *n, const trn_node_type *t,
                              const trn_recipe *recipe, trn_erosion_quality quality);

/* Run erosion node c->node on the recipe's whole grid through io (trn_erosion_run_rows): the
 * heights of trn_node_compute's field output, bit for bit; lo and hi are its input's lowest and
 * highest height. With c->solve_comm, its processes share the droplets
 * (trn_erosion_run_rows_comm); *droplets_run (may be NULL): the droplets this process ran. */
trn_status trn_node_erosion_rows(const trn_node_ctx *c, float lo, float hi,
                                 const trn_erosion_rows_io *io, uint64_t *droplets_run,
                                 trn_error *err);

/* What trn_node_erosion_rows holds, estimated, with cache tiles of chunk samples. */
uint64_t trn_node_erosion_rows_bytes(const trn_graph_node *n, const trn_node_type *t,
                                     const trn_recipe *recipe, trn_erosion_quality quality,
                                     uint32_t chunk);

/* Whether a Stream Power node's steps on the output grid run in tiles in a tiled run with a
 * disk tile cache (a coarsened evolution's fine steps, D8 or Rho8, no critical slope, cascade
 * or open border): the node then holds its input, the amplified surface and the drainage area
 * on the whole grid, not the whole-grid solve's arrays. */
bool trn_node_evolve_fine_in_tiles(const trn_graph_node *n, const trn_node_type *t,
                                   const trn_recipe *recipe, trn_erosion_quality quality);

/* What a coarsened Stream Power evolution holds on the whole grid as it brings its coarsest
 * result back to the output grid (0 when it does not coarsen), beside its inputs: the copy of
 * its field it evolves, the heights and drainage area it makes, the uplift and erodibility
 * factors and the detail made ahead (a float a sample each), and the coarser level's grid
 * (five floats and five spline coefficients, doubles, a sample of that grid). Its steps in
 * tiles hold less than this after it. */
uint64_t trn_node_evolve_handover_bytes(const trn_graph_node *n, const trn_node_type *t,
                                        const trn_recipe *recipe, trn_erosion_quality quality);

/* Whether a Drain Depressions node fills (mode fill) rather than breaches. */
bool trn_node_drain_fills(const trn_graph_node *n, const trn_node_type *t);

/* What a Drain Depressions node solved on the whole grid (samples of it) holds at its peak,
 * beside its input (0 for another node): the drainage (filled heights, directions,
 * accumulation: 9 bytes a sample); a breach also its result, a mark a sample and its sort keys,
 * 16 bytes for each sample downstream of a pit, counted for every sample (a third of them on a
 * noise field at 4097^2; all of them where every sample lies in a depression). */
uint64_t trn_node_drain_whole_bytes(const trn_graph_node *n, const trn_node_type *t,
                                    uint64_t samples);

#endif
