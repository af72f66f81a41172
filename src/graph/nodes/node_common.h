/* What every node family file shares: registry entries, spec macros and compute helpers (internal).
 */
#ifndef TRN_GRAPH_NODE_COMMON_H
#define TRN_GRAPH_NODE_COMMON_H

#include <math.h>

#include "graph/graph_internal.h"

#define TRN_BIG 1e9
#define TRN_COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* Parameter table rows: NUM(name, default, min, max, description) and friends. */
#define NUM(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, false, d, lo, hi, false, NULL, NULL, 0, desc, NULL                    \
    }
#define POS(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, false, d, lo, hi, true, NULL, NULL, 0, desc, NULL                     \
    }
#define INT(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_INTEGER, false, d, lo, hi, false, NULL, NULL, 0, desc, NULL                   \
    }
#define OPT_INT(n, lo, hi, desc)                                                                   \
    {                                                                                              \
        n, TRN_PARAM_INTEGER, true, 0, lo, hi, false, NULL, NULL, 0, desc, NULL                    \
    }
/* A number that may also be one of the words in kw ("spill"). */
#define NUM_OR(n, d, lo, hi, kw, desc)                                                             \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, false, d, lo, hi, false, NULL, NULL, 0, desc, kw                      \
    }
#define OPT_NUM(n, lo, hi, desc)                                                                   \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, true, 0, lo, hi, false, NULL, NULL, 0, desc, NULL                     \
    }
#define STR(n, d, desc)                                                                            \
    {                                                                                              \
        n, TRN_PARAM_STRING, false, 0, 0, 0, false, d, NULL, 0, desc, NULL                         \
    }
#define OPT_STR(n, desc)                                                                           \
    {                                                                                              \
        n, TRN_PARAM_STRING, true, 0, 0, 0, false, NULL, NULL, 0, desc, NULL                       \
    }
#define CHOICE(n, d, c, desc)                                                                      \
    {                                                                                              \
        n, TRN_PARAM_CHOICE, false, 0, 0, 0, false, d, c, 0, desc, NULL                            \
    }
#define POINTS(n, d, m, desc)                                                                      \
    {                                                                                              \
        n, TRN_PARAM_POINTS, false, 0, 0, 0, false, d, NULL, m, desc, NULL                         \
    }

/* A node type's public spec: T(name, title, category, description, version, inputs, outputs,
 * params, quality_dependent); NULL-able tables use the _NOIN / explicit forms. */
#define TRN_SPEC(name, title, cat, desc, ver, in, out, params, q)                                  \
    {                                                                                              \
        name, title, cat, desc, ver, in, TRN_COUNT(in), out, TRN_COUNT(out), params,               \
            TRN_COUNT(params), q                                                                   \
    }

/* The node's own error: "node 'id' (type): what". */
trn_status trn_node_fail(const trn_node_ctx *c, trn_error *err, trn_status code, const char *what);
/* A library call's error, prefixed with the node. */
trn_status trn_node_wrap(const trn_node_ctx *c, trn_error *err, trn_status code);
/* A sub-call's progress inside the node's slice (user = c->progress). */
int trn_node_bridge(double done, const char *stage, void *user);

size_t trn_node_samples(const trn_node_result *r);
/* A field over the node's grid whose heights are an output's samples (not owned). */
trn_field trn_node_field_view(const trn_node_result *grid, const trn_gout *o);
/* Output k takes ownership of data (samples floats). */
trn_status trn_node_set_floats(const trn_node_ctx *c, trn_node_result *r, uint32_t k,
                               trn_pin_kind kind, float *data, trn_error *err);
/* Output k shares another output's value and its transport (reference counted, never copied). */
trn_status trn_node_share(trn_node_result *r, uint32_t k, const trn_gout *from);
/* Output k carries from's transport unchanged (nodes that reshape heights without moving
 * material: offsets, carving, pass-throughs); from NULL or without transport: none. */
void trn_node_pass_transport(trn_node_result *r, uint32_t k, const trn_gout *from);

uint64_t trn_sat_mul(uint64_t a, uint64_t b);
uint64_t trn_sat_add(uint64_t a, uint64_t b);
/* Samples within reach (world units) of each segment's bounding box, summed over the segments
 * of count points of stride numbers each (x first, z last; a polygon's closing edge when
 * closed), the boxes clipped to the grid. Saturates. */
uint64_t trn_node_segments_reach(const trn_recipe *r, const double *pts, uint32_t count,
                                 uint32_t stride, bool closed, double reach);
/* -0 and 0 hash alike (the same parameter). */
void trn_key_f64(XXH64_state_t *h, double v);
void trn_key_str(XXH64_state_t *h, const char *s);

/* A Drainage node's result from a drainage of its input (trn_drainage_compute's arrays and
 * basins, however they were computed): its drainage and accumulation outputs. Takes the arrays
 * (d is zeroed); a distributed solver (terrane-mpi) publishes its result through it. */
trn_status trn_node_drainage_publish(const trn_node_ctx *c, trn_node_result *r, trn_drainage *d,
                                     trn_error *err);

/* The recipe's sea level a drainage node uses (NaN = no sea). */
double trn_node_drainage_sea(const trn_graph_node *n, const trn_node_type *t,
                             const trn_recipe *recipe);

/* Landscape evolution as the Stream Power node runs it, its parameters read from (node, type)
 * (a Stream Power node, or a landform's "evolution" as a one-node graph), on input (the node's
 * grid); uplift_mask per input sample or NULL. On success *heights_out and *channels_out are
 * new arrays of the input's samples (the caller owns them) and note says what ran. */
trn_status trn_node_evolve(const trn_node_ctx *c, const trn_graph_node *node,
                           const trn_node_type *type, const trn_field *input,
                           const float *uplift_mask, float **heights_out, float **channels_out,
                           char *note, size_t note_size, trn_error *err);
/* Its cache key inputs beyond the parameters, and its work, as the node's. */
void trn_node_evolve_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality);
void trn_node_evolve_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                          trn_erosion_quality quality, trn_node_work_info *out);

/* Whether a Landform node's landform has an evolution (its preview then differs). */
bool trn_node_landform_evolves(const trn_graph_node *n, const trn_node_type *t,
                               const trn_recipe *recipe);

/* Reach declarations shared by the families (what a module's reach member points at). */
void trn_reach_pointwise(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                         trn_node_reach *out);
void trn_reach_global(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                      trn_node_reach *out);
void trn_reach_none(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                    trn_node_reach *out);

/* The most bytes a tile node holds for a tiled run's tiles at once (trn_node_keep): a DEM
 * input's file while it decodes it, the field it keeps and what it prepares from it; 0 for the
 * other types. */
uint64_t trn_node_kept_bytes(const trn_graph_node *n, const trn_node_type *t,
                             const trn_recipe *recipe);

/* The families, in registry order. */
extern const trn_node_module trn_node_landform, trn_node_noise_terrain, trn_node_flat_terrain,
    trn_node_dune_field, trn_node_heightfield_input;
extern const trn_node_module trn_node_elevation_mask, trn_node_slope_mask,
    trn_node_path_distance_mask, trn_node_polygon_mask;
extern const trn_node_module trn_node_height_blend, trn_node_height_offset;
extern const trn_node_module trn_node_drainage, trn_node_flow_accumulation,
    trn_node_drain_depressions;
extern const trn_node_module trn_node_erosion, trn_node_stream_power;
extern const trn_node_module trn_node_water_body, trn_node_basin_water, trn_node_water_edit,
    trn_node_river_route;
extern const trn_node_module trn_node_biome_rules, trn_node_scatter_palette,
    trn_node_terrain_output, trn_node_comment;

/* A seeded node's seed: its "seed" parameter, else the world seed's sub-seed of channel
 * "node:<id>", so parallel branches differ and renaming another node changes nothing. */
uint64_t trn_node_seed(const trn_graph_node *n, const trn_recipe *recipe);

#endif
