/* Water: lakes, oceans and rivers over a terrain grid; carving, resolved coverage and queries. */
#ifndef TERRANE_WATER_H
#define TERRANE_WATER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/drainage.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Positions are terrain-local: x and z in world units from the grid's corner sample (0, 0), y
 * in metres. Sample (i, j) sits at (i * size_x / cells_x, j * size_z / cells_z), index
 * j * (cells_x + 1) + i, as in trn_field. */

/* ---------------------------------------------------------------------------------------------
 * The terrain-triangle surface. Cell (i, j) is split along its diagonal from sample (i, j) to
 * sample (i + 1, j + 1); every height lookup (water queries, bed depth, exports) interpolates
 * linearly on those two triangles, so the same point always gets the same height.
 * ------------------------------------------------------------------------------------------- */

/* The ground height at (x, z), clamped to the grid; NAN for an empty field. */
double trn_field_height_at(const trn_field *field, double x, double z);
/* The same interpolation over any per-sample float array of the field's grid (NaN corners give
 * NaN). */
double trn_grid_value_at(const float *values, uint32_t cells_x, uint32_t cells_z, double size_x,
                         double size_z, double x, double z);

/* ---------------------------------------------------------------------------------------------
 * Bodies: what a Water Body node (or a proposal, an edit, a routed river) describes.
 * ------------------------------------------------------------------------------------------- */

typedef enum trn_water_kind {
    TRN_WATER_LAKE = 0,
    TRN_WATER_OCEAN = 1,
    TRN_WATER_RIVER = 2,
} trn_water_kind;

/* "lake", "ocean", "river"; trn_water_kind_parse returns false for anything else. */
const char *trn_water_kind_name(trn_water_kind kind);
bool trn_water_kind_parse(const char *name, trn_water_kind *kind);

typedef enum trn_river_interpolation {
    TRN_RIVER_LINEAR = 0,      /* exact straight segments between the control points */
    TRN_RIVER_CATMULL_ROM = 1, /* uniform Catmull-Rom through the control points */
} trn_river_interpolation;

typedef enum trn_river_surface {
    TRN_RIVER_SURFACE_LEVEL = 0,      /* the body's level */
    TRN_RIVER_SURFACE_FOLLOW_BED = 1, /* the path's bed elevation + river_depth */
} trn_river_surface;

/* How a lake's level is chosen. */
typedef enum trn_lake_level {
    TRN_LAKE_LEVEL_FIXED = 0, /* the body's level as given */
    TRN_LAKE_LEVEL_SPILL = 1, /* the spill level of the basin at the centre, less spill_offset */
} trn_lake_level;

/* Where the water of a lake would run out first (see spill_level). */
typedef enum trn_spill_outlet {
    TRN_SPILL_NONE = 0,  /* not computed */
    TRN_SPILL_LIMIT = 1, /* past the footprint's limit: the radius or the boundary */
    TRN_SPILL_EDGE = 2,  /* over the grid's edge */
    TRN_SPILL_WATER = 3, /* into an earlier body's water */
} trn_spill_outlet;

/* "none", "limit", "edge", "water". */
const char *trn_spill_outlet_name(trn_spill_outlet outlet);

/* Appearance and motion, carried unchanged to every output (exports, cooked payloads). */
typedef struct trn_water_look {
    double shallow_color[4];    /* RGBA 0..1; alpha = shallow opacity; default .10 .45 .50 .35 */
    double deep_color[4];       /* RGBA 0..1; default .02 .10 .16 .90 */
    double absorption_distance; /* > 0 world units: shallow contribution ~37% there; default 4 */
    double roughness;           /* 0..1; default 0.05 */
    double flow_speed;          /* >= 0 m/s; default 0 (still) */
    double flow_direction[2];   /* XZ; default (1, 0); nonzero when a lake/ocean moves */
    double wave_amplitude;      /* >= 0; default 0.05 */
    double wave_length;         /* > 0 m; default 2 */
    double wave_speed;          /* >= 0 m/s; default 0.5 */
    double normal_strength;     /* >= 0; default 1 */
    double foam_width;          /* >= 0 m; default 0.5 (0 = no foam band) */
    double foam_strength;       /* 0..1; default 0.5 */
    double foam_color[4];       /* RGBA 0..1; default 1 1 1 1 */
} trn_water_look;

void trn_water_look_default(trn_water_look *look);

#define TRN_WATER_ID_MAX 128u            /* bytes of a body id, terminator included */
#define TRN_WATER_MAX_BOUNDARY 4096u     /* boundary vertices */
#define TRN_WATER_MAX_RIVER_POINTS 4096u /* control points of river_path */
#define TRN_RIVER_CURVE_STEPS_MAX 64u
/* A lake radius no grid reaches: a spill lake limited by the ground alone. */
#define TRN_WATER_RADIUS_UNLIMITED 1e300

typedef struct trn_water_body {
    char id[TRN_WATER_ID_MAX]; /* stable: the node id, "<node>/basin/<x>_<z>", ... */
    trn_water_kind kind;
    double level; /* lake and ocean surface; a level-mode river's surface (metres); a spill
                     lake's is set by resolution */
    /* Lake: TRN_LAKE_LEVEL_SPILL fills the basin holding the centre up to the level at which its
     * water would run out (past the footprint, over the grid's edge or into earlier water), less
     * spill_offset metres (>= 0; default 0.5). The radius and boundary then only limit how far
     * the water may reach: the level drops until it stays inside them. */
    trn_lake_level level_mode;
    double spill_offset;
    /* Lake: its centre and the radius of its footprint (world units, > 0). */
    double center_x, center_z, radius;
    /* Lake and ocean: an optional simple polygon limiting the footprint, XZ pairs, either
     * winding, no repeated closing vertex (owned; NULL / 0 = none). */
    double *boundary;
    uint32_t boundary_count;
    /* Lake and ocean: metres the bed of the submerged region is lowered, ramped in over the
     * first 4 cells from the shore (0 = no carving; default 0). */
    double carve_depth;
    /* River: the control points as authored (XYZ triples, y = bed elevation; owned) and the
     * polyline generation samples from them once (XYZ triples; owned; filled by
     * trn_water_body_sample_path). */
    double *control;
    uint32_t control_count;
    trn_river_interpolation interpolation;
    uint32_t curve_steps; /* 1..64, default 8 */
    double *path;
    uint32_t path_count;
    double width; /* river: full channel width, world units, > 0; default 8 */
    trn_river_surface surface_mode;
    double river_depth; /* follow-bed rivers: metres of water above the bed, > 0; default 1 */
    trn_water_look look;
    bool carve; /* carve it when resolved (a new body); false keeps the ground (chained, proposed,
                   edited, refreshed bodies) */

    /* Filled by resolution: */
    uint64_t wet_samples;
    double area;                     /* wet samples x cell area, world units^2 */
    double volume;                   /* sum over wet samples of (surface - ground) x cell area */
    double min_surface, max_surface; /* over the wet samples it owns; 0 / 0 when none */
    uint32_t warning_count;          /* shore or bank leaks found (see trn_water_resolve) */
    char warning[256];               /* the first one's text, "" when none */
    double warning_x, warning_z;     /* where the first one is */
    /* Lakes in spill mode, and fixed-level lakes that leak: the level at which the water
     * connected to the lake's seed would run out (the lowest such level; NaN when not computed),
     * the pass it would cross (the highest sample on the way out) and where it would go. */
    double spill_level;
    double spill_x, spill_z;
    trn_spill_outlet spill_outlet;
} trn_water_body;

/* A body with kind's defaults: level 0 (fixed), spill_offset 0.5, centre (0, 0), radius 64, no
 * boundary, carve_depth 0,
 * linear path with curve_steps 8 (no control points), width 8, level surface mode, river_depth
 * 1, the look defaults, carve true. id is copied (truncated to TRN_WATER_ID_MAX - 1 bytes). */
void trn_water_body_init(trn_water_body *body, trn_water_kind kind, const char *id);
void trn_water_body_dispose(trn_water_body *body); /* frees owned arrays; NULL-safe */
trn_status trn_water_body_copy(const trn_water_body *from, trn_water_body *to, trn_error *err);

/* Check one body's fields (ranges above; boundary: at least 3 distinct vertices after dropping
 * one repeated closing vertex, no zero-length edge, no self-intersection, nonzero area; a lake's
 * centre inside its boundary; a river's path: at least 2 control points, finite). On failure
 * returns TRN_ERR_VALIDATION with "water body 'ID': FIELD: what was expected, what was found"
 * and, when field is not NULL, *field = the offending field's parameter name, so callers can
 * point at it: "id", "kind", "level", "center" (centre_x/z, and a lake centre outside its
 * boundary), "radius", "boundary", "carve_depth", "river_path" (control points and path),
 * "river_path_interpolation", "river_curve_steps", "width", "river_surface_mode",
 * "river_depth", "shallow_color", "deep_color", "absorption_distance", "roughness",
 * "flow_speed", "flow_direction", "wave_amplitude", "wave_length", "wave_speed",
 * "normal_strength", "foam_width", "foam_strength", "foam_color". Lakes check centre, radius,
 * boundary and carve_depth; oceans boundary and carve_depth; rivers the river fields (and path
 * when present); every kind level and the look. TRN_WATER_MAX_BOUNDARY counts the vertices
 * after the closing one is dropped. */
trn_status trn_water_body_validate(const trn_water_body *body, const char **field, trn_error *err);

/* Sample a river's control points into body->path: linear keeps the control points as they
 * are; Catmull-Rom puts curve_steps segments in each interval (end tangents from repeating the
 * end points), keeping every control point exactly; coincident control points stay valid. */
trn_status trn_water_body_sample_path(trn_water_body *body, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Resolved water: bodies plus, per sample, who owns it and its surface.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_water {
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    trn_water_body *bodies; /* in order: earlier bodies win overlapping samples */
    uint32_t body_count;
    /* Per sample (samples = (cells_x + 1) * (cells_z + 1)), all NULL when body_count is 0: */
    int32_t *owner;       /* body index of a wet sample or of a dry shoreline corner (a dry sample
                             next to a wet one, kept for triangulation), -1 otherwise */
    uint8_t *wet;         /* 1 where the ground is under the owner's surface; shoreline corners 0 */
    float *surface;       /* the owner's surface height (NaN where owner is -1) */
    uint32_t *segment;    /* rivers: index of the polyline segment nearest the sample, else 0 */
    uint64_t ground_hash; /* XXH64 of the heights the coverage was resolved on */
    /* wet as bits (bit k % 64 of word k / 64), made by resolve, refresh, decode and copy: a
     * query over dry ground reads an eighth of the memory. NULL: queries read wet. */
    uint64_t *wet_bits;
} trn_water;

void trn_water_dispose(trn_water *water); /* NULL-safe */
trn_status trn_water_copy(const trn_water *from, trn_water *to, trn_error *err);
/* XXH64 of a field's heights, as ground_hash holds it. */
uint64_t trn_water_ground_hash(const trn_field *ground);

typedef struct trn_water_resolve_options {
    int threads; /* 0 = OpenMP default; at most 64 are used; results never depend on it */
} trn_water_resolve_options;

/* Validate every body (TRN_ERR_VALIDATION naming it; ids must be unique), sample river paths
 * that have none yet, carve the bodies whose carve flag is set into *ground, body after body
 * (lowering only: a lake or ocean lowers the region it covers by carve_depth x min(d, 4) / 4, d
 * the Chebyshev distance in samples to the nearest uncovered sample of the grid; a river lowers
 * the samples within width / 2 of its path to the U-shaped channel bed + max(0, surface - bed)
 * x (distance / (width / 2))^2, bed and surface taken at the nearest path point, so its centre
 * is the path's bed and its edge meets the surface), then resolve coverage on the carved ground
 * in body order:
 *  - lake: samples with ground < level inside its footprint (within radius of the centre and
 *    inside the boundary, its edge included), 4-connected to the wet footprint sample nearest
 *    the centre (ties: smallest index), which is the centre's own when that is wet, so a dry
 *    centre takes the basin of the nearest wet sample; none wet = an empty lake;
 *  - spill lake: first its level, spill_level - spill_offset, where spill_level is the lowest
 *    level at which water 4-connected to the sample nearest the centre (ties: smallest index)
 *    reaches a sample outside the footprint, on the grid's edge or wet with an earlier body
 *    (a priority flood from the centre; its cost grows with the basin's area, O(n log n)); then
 *    the samples with ground below it 4-connected to the centre's sample, which cannot leak. A
 *    centre not below that level (no closed basin there, or one shallower than the offset) gives
 *    an empty lake and a warning naming what was found;
 *  - ocean: every sample with ground < level inside its boundary (the whole grid without one);
 *  - river: samples within width / 2 of the polyline whose ground is below the river's surface
 *    there (level, or the bed at the nearest polyline point + river_depth; the nearest point's
 *    segment is the first nearest in source order, zero-length segments skipped).
 * A sample already owned by an earlier body stays with it. Dry shoreline corners: dry samples
 * 8-adjacent to wet ones, owned by the first of those wet samples' bodies, with that body's
 * surface there. Each body gets its statistics and its warnings, counting the distinct leaking
 * samples and placing the first in sample order: for a lake or ocean, a sample outside its
 * footprint with ground below the level, 4-adjacent to one of its wet samples ("wet ground
 * reaches the boundary below the level at (x, z)"); for a river, a sample beyond width / 2
 * whose nearest path point is not one of the path's two ends (open ends are allowed), with
 * ground below the surface of a 4-adjacent wet sample of the river ("the river's surface
 * reaches a dry side below it at (x, z)"). A leaking lake's warning adds the level it would
 * hold without leaking (its spill_level, computed then) and suggests the spill level. A sample
 * another body holds wet is a join, never a leak. The bodies array is copied; the copies have carve
 * cleared (the ground holds them now). *out is initialised here (zeroed on failure). ground's grid
 * sets the water's grid. Only when memory runs out part way can *ground be left partly carved. */
trn_status trn_water_resolve(trn_field *ground, const trn_water_body *bodies, uint32_t count,
                             const trn_water_resolve_options *options, trn_water *out,
                             trn_error *err);

/* Coverage of the same bodies on other ground (after erosion or height changes downstream):
 * no carving, carve flags cleared. TRN_ERR_MISMATCH when the grids differ. out may be water
 * (replaced only on success). */
trn_status trn_water_refresh(const trn_water *water, const trn_field *ground,
                             const trn_water_resolve_options *options, trn_water *out,
                             trn_error *err);

/* Index of a body by id, or -1. */
int32_t trn_water_find(const trn_water *water, const char *id);

/* ---------------------------------------------------------------------------------------------
 * Queries.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_water_sample {
    int32_t body; /* index into water->bodies */
    const char *body_id;
    trn_water_kind kind;
    double surface[3];       /* the surface point above (x, z) */
    double normal[3];        /* unit surface normal */
    double depth;            /* bed-to-surface depth at (x, z) */
    double column_up[3];     /* unit axis from the bed toward the surface: (0, 1, 0) locally */
    double flow_velocity[3]; /* m/s: lakes, oceans: flow_speed x normalised flow_direction;
                                rivers: along their nearest path segment (source order);
                                follow-bed rivers: along the surface triangle's tangent */
    bool underwater;         /* bed <= y < surface */
} trn_water_sample;

/* The water column at terrain-local (x, y, z) on ground (the heights the water was resolved or
 * refreshed on; same grid). The point's terrain triangle chooses the body: its first wet corner
 * in the order (i, j), (i + 1, j), (i, j + 1), (i + 1, j + 1) of the cell's corners that are in
 * the triangle (points on the diagonal, u == v, belong to the (i + 1, j) triangle). The column
 * is wet when a corner is wet and the surface, interpolated on the triangle, is above the
 * interpolated ground. Corner surfaces: a lake, ocean or level river is its level everywhere;
 * a follow-bed river takes water->surface at the corners it owns and the choosing corner's
 * surface at the others. Its normal is the surface triangle's; a river's flow follows the
 * choosing corner's segment. Returns false for a dry column, a point outside the grid (or NaN)
 * or a mismatched ground (grid differs), filling out (when not NULL) with body -1 and zeros.
 * Thread-safe; no allocation. */
bool trn_water_query(const trn_water *water, const trn_field *ground, double x, double y, double z,
                     trn_water_sample *out);

/* ---------------------------------------------------------------------------------------------
 * Proposals and edits.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_basin_water_params {
    double minimum_depth;    /* metres from the lowest sink to the spill level; default 1 */
    double minimum_area;     /* world units^2 of the filled region; default 16 */
    uint32_t maximum_bodies; /* default 16 */
    double level_offset;     /* metres added to the spill level, <= 0; default 0 */
} trn_basin_water_params;

void trn_basin_water_params_default(trn_basin_water_params *params);

/* Lakes at the spill levels of the drainage's closed basins that are at least minimum_depth deep
 * and minimum_area large: id "<node_id>/basin/<sink_i>_<sink_j>", level spill + level_offset,
 * centre at the sink, radius reaching the basin's farthest raised sample, no carving. When more
 * are eligible than maximum_bodies, the deepest are kept (ties: larger area, then smaller sink
 * index); *eligible receives how many were eligible. Output in sink index order.
 * source_heights are the heights the drainage was computed from (its grid): a basin's raised
 * samples are the ones below their filled height, 8-connected to the sink at its spill level;
 * the radius is the farthest one's distance from the sink plus one cell diagonal. params NULL =
 * defaults; level_offset > 0 or a negative or non-finite minimum is TRN_ERR_VALIDATION. On
 * success *bodies is a new array of *count bodies (NULL when 0; free it with
 * trn_water_bodies_free). */
trn_status trn_water_propose_basins(const trn_drainage *drainage, const float *source_heights,
                                    const char *node_id, const trn_basin_water_params *params,
                                    trn_water_body **bodies, uint32_t *count, uint32_t *eligible,
                                    trn_error *err);

/* Dispose count bodies and free the array (from trn_water_propose_basins or trn_water_edit).
 * NULL is a no-op. */
void trn_water_bodies_free(trn_water_body *bodies, uint32_t count);

/* Water Edit: bodies minus excluded ids, with overrides patched by id. excluded_json is a JSON
 * array of id strings, overrides_json a JSON array of objects {"id": ..., FIELD: value, ...}
 * using the Water Body parameter names (omitted fields kept; river_path_interpolation and
 * river_curve_steps only together with river_path, which resamples the path). Unknown ids,
 * duplicates, an id both excluded and overridden, unknown or invalid fields fail with
 * TRN_ERR_VALIDATION; *where (when not NULL, where_size bytes) receives the JSON path inside the
 * parameter ("overrides[1].level", "excluded_ids[0]") and err the value's line and column in
 * that parameter's text. NULL or blank text is an empty array; a JSON syntax error is
 * TRN_ERR_JSON with *where the parameter's name. Fields apply to their kinds only (center,
 * radius: lakes; boundary, carve_depth: lakes and oceans; river_*, width: rivers); kind is not
 * editable. Patched bodies pass trn_water_body_validate. Edited bodies do not carve. On success
 * *out is a new array of *out_count bodies in input order (NULL when 0; trn_water_bodies_free). */
trn_status trn_water_edit(const trn_water_body *bodies, uint32_t count, const char *excluded_json,
                          const char *overrides_json, trn_water_body **out, uint32_t *out_count,
                          char *where, size_t where_size, trn_error *err);

/* What of Water Edit's parameters holds for any input (the checks of trn_water_edit that need no
 * bodies: JSON syntax, arrays of the right things, override ids as strings, field names, and
 * each field's value form), as trn_water_edit reports them (the same messages, *where and
 * position), so a graph's check finds them at the parameter's place in its file. Ids that name
 * no input body, duplicates, fields of another kind and patched bodies that fail validation are
 * found by trn_water_edit alone. */
trn_status trn_water_edit_check(const char *excluded_json, const char *overrides_json, char *where,
                                size_t where_size, trn_error *err);

/* How a routed river ended. */
typedef enum trn_route_end {
    TRN_ROUTE_SEA_LEVEL = 0,     /* reached the drainage's sea level */
    TRN_ROUTE_FIELD_EDGE = 1,    /* reached the grid's border */
    TRN_ROUTE_EXISTING_BODY = 2, /* reached a wet column of existing water */
    TRN_ROUTE_CLOSED_BASIN = 3,  /* a pit with no outlet (warning) */
    TRN_ROUTE_BLOCKED = 4,       /* no nonascending triangle edge to follow (warning) */
    TRN_ROUTE_NOT_PLACED = 5,    /* too short, or already wet at the source: nothing added */
} trn_route_end;

/* "sea-level", "field-edge", "existing-body", "closed-basin", "blocked", "not-placed". */
const char *trn_route_end_name(trn_route_end end);

typedef struct trn_river_route_params {
    double source_x, source_z; /* world units, inside the grid; default 64, 64 */
    double channel_width;      /* > 0; default 4 */
    double channel_depth;      /* > 0; default 2 */
    double water_depth;        /* > 0, <= channel_depth; default 1 */
    double flow_speed;         /* >= 0; default 0 */
    /* >= 0, world units along the route; default 0 (full depth from the source). Over its first
     * head_length the channel deepens from nothing at the source to channel_depth, as a channel
     * head does; the river (its water and its cut) begins at the first sample where that depth
     * reaches water_depth, so no water stands above the ground and no pit is dug at the head. */
    double head_length;
} trn_river_route_params;

void trn_river_route_params_default(trn_river_route_params *params);

typedef struct trn_route_report {
    trn_route_end end;
    uint32_t samples;              /* samples visited, source included */
    double end_x, end_z;           /* where it stopped */
    char joined[TRN_WATER_ID_MAX]; /* the existing body it joined, "" otherwise */
    char message[256];             /* what happened, for diagnostics */
} trn_route_report;

/* Trace a river from the source sample down the drainage (its source heights) along
 * nonascending terrain-triangle edges, following the drainage's flow direction where that is a
 * triangle edge (and where no such edge leads on, the drainage's nonascending diagonal across
 * the cell's split), to an end in trn_route_end. existing (may be NULL) is water on the same
 * grid. On success with a placed route, *body is a follow-bed river (id node_id, path = the
 * visited samples' line averaged over about channel_width / 2 on either side (two passes of a
 * moving average, the ends kept; none for a channel under two cells wide) with bed = the
 * ground along the trace averaged the same way, never above the trace's own, - channel_depth,
 * floored at the joined surface - water_depth, or at sea level - water_depth, never
 * ascending; with head_length > 0 the depth ramps up from the source and the path starts where
 * it reaches water_depth) that the caller resolves with carve set. With TRN_ROUTE_NOT_PLACED, *body is zeroed and report->message says
 * why. params NULL = defaults; invalid params or a source outside the grid are
 * TRN_ERR_VALIDATION (the source snaps to the nearest sample, ties to the smaller index);
 * existing water on another grid is TRN_ERR_MISMATCH. */
trn_status trn_river_route(const trn_drainage *drainage, const float *source_heights,
                           const trn_water *existing, const char *node_id,
                           const trn_river_route_params *params, trn_water_body *body,
                           trn_route_report *report, trn_error *err);

/* trn_river_route, and ground (may be NULL; cells_x + 1 by cells_z + 1 samples) receives the
 * source heights with the river's channel head cut in. With head_length > 0 and ground given,
 * the head is cut along the route's own (averaged) line with the river's cross-section, its
 * half width and bank scaled by the depth over water_depth (at most 1), so it narrows and
 * shallows to nothing at the source; and the river's path (its water and its own cut) begins
 * the channel's half width plus bank further down than where the depth reaches water_depth,
 * the head carrying the river's section and bed over that stretch, so the river's round end
 * lies within the head's channel instead of cutting a ring into the slope. Resolve the body on
 * ground. Unchanged heights when there is no head or no river. */
trn_status trn_river_route_carve(const trn_drainage *drainage, const float *source_heights,
                                 const trn_water *existing, const char *node_id,
                                 const trn_river_route_params *params, trn_water_body *body,
                                 trn_route_report *report, float *ground, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Storage: the resolved water as bytes (graph cache files, cooked payloads). Little-endian,
 * versioned, checksummed; the reader goes through a bounded cursor.
 * ------------------------------------------------------------------------------------------- */

#define TRN_WATER_FORMAT_VERSION 1u

typedef struct trn_water_limits {
    uint64_t max_samples; /* default 1 << 30 */
    uint32_t max_bodies;  /* default 65536 */
    uint32_t max_points;  /* per boundary or path; default 1 << 20 */
} trn_water_limits;

void trn_water_limits_default(trn_water_limits *limits);

trn_status trn_water_encode(const trn_water *water, uint8_t **data, size_t *size, trn_error *err);
/* TRN_ERR_FORMAT / TRUNCATED / VERSION / LIMIT / TRAILING_DATA with the byte offset and the
 * section ("grid", "body 3 ('id')", "samples", "checksum") in the message; path names the file
 * (may be NULL); limits NULL = defaults. Decoded bodies must pass trn_water_body_validate and
 * the per-sample arrays agree with them (owner -1..body_count-1, wet 0/1 and only where owned,
 * surface NaN exactly where unowned, segment inside the owner river's path). On failure *out is
 * zeroed. Encoding the decoded water gives the same bytes. */
trn_status trn_water_decode(const uint8_t *data, size_t size, const char *path,
                            const trn_water_limits *limits, trn_water *out, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
