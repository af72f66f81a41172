/* River Route: a river traced down a drainage along nonascending terrain-triangle edges. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "terrane/water.h"
#include "gen/d8.h"

const char *trn_route_end_name(trn_route_end end)
{
    switch (end) {
    case TRN_ROUTE_SEA_LEVEL:
        return "sea-level";
    case TRN_ROUTE_FIELD_EDGE:
        return "field-edge";
    case TRN_ROUTE_EXISTING_BODY:
        return "existing-body";
    case TRN_ROUTE_CLOSED_BASIN:
        return "closed-basin";
    case TRN_ROUTE_BLOCKED:
        return "blocked";
    case TRN_ROUTE_NOT_PLACED:
        return "not-placed";
    }
    return "unknown";
}

void trn_river_route_params_default(trn_river_route_params *params)
{
    if (!params) return;
    params->source_x = 64.0;
    params->source_z = 64.0;
    params->channel_width = 4.0;
    params->channel_depth = 2.0;
    params->water_depth = 1.0;
    params->flow_speed = 0.0;
    params->head_length = 0.0;
}

/* The terrain-triangle edges from a sample, as D8 codes (E, SE, S, W, NW, N): the 4 axis
 * neighbours and the cell diagonals from (i, j) to (i + 1, j + 1). SW and NE cross a cell
 * against its split, so the route never takes them. The order breaks ties. */
static const int edge_codes[6] = {0, 1, 2, 4, 5, 6};

static bool is_edge_code(unsigned code)
{
    return code < 8u && code != 3u && code != 7u;
}

static trn_status check_params(const trn_river_route_params *p, trn_error *err)
{
    if (!isfinite(p->channel_width) || !(p->channel_width > 0.0))
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: channel_width: expected a finite number > 0, found %g",
                             p->channel_width);
    if (!isfinite(p->channel_depth) || !(p->channel_depth > 0.0))
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: channel_depth: expected a finite number > 0, found %g",
                             p->channel_depth);
    if (!isfinite(p->water_depth) || !(p->water_depth > 0.0) || p->water_depth > p->channel_depth)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: water_depth: expected a finite number > 0 and at most "
                             "channel_depth (%g), found %g",
                             p->channel_depth, p->water_depth);
    if (!isfinite(p->flow_speed) || p->flow_speed < 0.0)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: flow_speed: expected a finite number >= 0, found %g",
                             p->flow_speed);
    if (!isfinite(p->head_length) || p->head_length < 0.0)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: head_length: expected a finite number >= 0, found %g",
                             p->head_length);
    return TRN_OK;
}

/* Nearest sample index along one axis of n cells over size (ties: the smaller index). */
static uint32_t snap(double at, uint32_t cells, double size)
{
    const double f = at * cells / size;
    double lower = floor(f);
    if (lower < 0.0) lower = 0.0;
    if (lower > cells) lower = cells;
    uint32_t i = (uint32_t)lower;
    if (i < cells && f - lower > 0.5) i++;
    return i;
}

/* Wet in existing water: the owner of a wet sample, or -1. */
static int32_t wet_owner(const trn_water *existing, size_t k)
{
    if (!existing || !existing->body_count || !existing->owner || !existing->wet) return -1;
    if (!existing->wet[k]) return -1;
    int32_t o = existing->owner[k];
    return o >= 0 && (uint32_t)o < existing->body_count ? o : -1;
}

/* Two passes of a moving average over half points on either side, in place (tmp holds n),
 * the window narrowing at the ends so that they stay. */
static void smooth_twice(double *v, double *tmp, size_t n, size_t half)
{
    for (int pass = 0; pass < 2 && half > 0; pass++) {
        for (size_t p = 0; p < n; p++) {
            size_t m = half;
            if (m > p) m = p;
            if (m > n - 1u - p) m = n - 1u - p;
            double sum = 0.0;
            for (size_t q = p - m; q <= p + m; q++)
                sum += v[q];
            tmp[p] = sum / (double)(2u * m + 1u);
        }
        memcpy(v, tmp, n * sizeof *v);
    }
}

/* The mouth: a route that joins a lake or the sea goes on down the bed under it (steepest
 * descent along the triangle edges, within the body it joined) until the bed lies water_depth under
 * the water's surface, so its channel, cut to water_depth under that surface, runs out onto the bed
 * instead of ending at the shore in a round pit with a back wall: a pool in a shallow lake's
 * margin. At most MOUTH_MAX samples (a flat shelf ends it early). Returns the trace's new length.
 */
#define MOUTH_MAX 64u
static size_t mouth(const trn_water *existing, const float *heights,
                    const trn_river_route_params *p, uint32_t cx, uint32_t cz,
                    const double step_length[8], uint8_t *visited, uint32_t *trace, size_t n)
{
    const size_t nx = (size_t)cx + 1u;
    const int32_t owner = wet_owner(existing, trace[n - 1]);
    /* A river's surface falls along it: joined at its side, the route ends there. */
    if (owner < 0 || existing->bodies[owner].kind == TRN_WATER_RIVER) return n;
    for (unsigned extra = 0; extra < MOUTH_MAX; extra++) {
        const size_t k = trace[n - 1];
        const uint32_t i = (uint32_t)(k % nx), j = (uint32_t)(k / nx);
        const float surface = existing->surface ? existing->surface[k] : NAN;
        const double level = isnan(surface) ? existing->bodies[owner].level : (double)surface;
        const float h = heights[k];
        /* Deep enough; or ground standing above the water (a wet sample at its very edge:
         * no bed under water to follow, and a channel run down from it would drop its
         * surface below the dry ground beside it); or the field's edge. */
        if (!((double)h > level - p->water_depth) || (double)h > level || i == 0 || j == 0 ||
            i == cx || j == cz)
            break;
        int next = -1;
        double best = 0.0;
        for (int e = 0; e < 6; e++) {
            const int c = edge_codes[e];
            const size_t m =
                (size_t)((int64_t)j + TRN_D8_DJ[c]) * nx + (size_t)((int64_t)i + TRN_D8_DI[c]);
            if (visited[m] || wet_owner(existing, m) != owner) continue;
            const double slope = ((double)h - (double)heights[m]) / step_length[c];
            if (slope > best) {
                best = slope;
                next = (int)m;
            }
        }
        if (next < 0) break;
        visited[next] = 1;
        trace[n++] = (uint32_t)next;
    }
    return n;
}

static trn_status not_placed(trn_water_body *body, trn_route_report *report)
{
    memset(body, 0, sizeof *body);
    report->end = TRN_ROUTE_NOT_PLACED;
    return TRN_OK;
}

/* The channel head cut into ground (a copy of the source heights) along the averaged line
 * from the source (point 0) to where the river's water begins (point last): the river's own
 * cross-section (a bowl from the bed up to the water's surface at the half width, then a bank
 * sloping to the ground; water_resolve.c's river carve) with its half width and bank scaled by
 * the channel's depth over water_depth, so the cut follows the head's own path and narrows and
 * shallows to nothing at the source, its sides converging there. Where the depth is under
 * water_depth the bowl rises to the line's ground (no water there), blended towards each
 * sample's own as the depth shrinks, so the cut fades into the ground instead of ending in a
 * step. Each segment sweeps its section (ends clamped) and the lowest cut wins: the same
 * ground whatever the order. */
static void carve_head(const double *lx, const double *lz, const double *lg, const double *bed,
                       const double *depth, size_t last, const trn_river_route_params *p,
                       uint32_t cx, uint32_t cz, double dx, double dz, const float *source_heights,
                       float *ground)
{
    const size_t nx = (size_t)cx + 1u;
    /* The river's half width and bank (water_resolve.c's river_geom_make). */
    const double half = 0.5 * p->channel_width;
    const double bank = fmax(half, 2.0 * fmax(dx, dz));
    for (size_t s = 0; s < last; s++) {
        const double ax = lx[s], az = lz[s], ex = lx[s + 1u] - ax, ez = lz[s + 1u] - az;
        const double len2 = ex * ex + ez * ez;
        const double fa = depth[s] / p->water_depth, fb = depth[s + 1u] / p->water_depth;
        const double reach = fmin(fmax(fa, fb), 1.0) * (half + bank);
        if (!(reach > 0.0)) continue;
        const double x0 = fmin(ax, ax + ex) - reach, x1 = fmax(ax, ax + ex) + reach;
        const double z0 = fmin(az, az + ez) - reach, z1 = fmax(az, az + ez) + reach;
        const double i0 = fmax(ceil(x0 / dx), 0.0), i1 = fmin(floor(x1 / dx), (double)cx);
        const double j0 = fmax(ceil(z0 / dz), 0.0), j1 = fmin(floor(z1 / dz), (double)cz);
        for (double jd = j0; jd <= j1; jd++) {
            for (double id = i0; id <= i1; id++) {
                const double px = id * dx, pz = jd * dz;
                /* Past the segment's ends the section is its own carried on along the line
                 * (the line's ground rising with the slope, the width narrowing upstream), not
                 * its end's swung round: a round end cut level into the rising ground behind
                 * it would be the ring again, a cell long. */
                const double u = len2 > 0.0 ? ((px - ax) * ex + (pz - az) * ez) / len2 : 0.0;
                const double t = u < 0.0 ? 0.0 : u > 1.0 ? 1.0 : u;
                const double f = fmin(fa + u * (fb - fa), 1.0);
                if (!(f > 0.0)) continue;
                const double d = hypot(px - (ax + t * ex), pz - (az + t * ez));
                const double hw = f * half, bw = f * bank;
                if (!(d < hw + bw)) continue;
                const size_t k = (size_t)jd * nx + (size_t)id;
                const double g = (double)source_heights[k];
                const double line = lg[s] + u * (lg[s + 1u] - lg[s]);
                const double under = line - (bed[s] + u * (bed[s + 1u] - bed[s]));
                const double rim = f * line + (1.0 - f) * g - under + f * p->water_depth;
                double h;
                if (d < hw) {
                    const double r = d / hw;
                    h = rim - f * p->water_depth * (1.0 - r * r);
                } else {
                    h = rim + (g - rim) * ((d - hw) / bw);
                }
                if (h < (double)ground[k]) ground[k] = (float)h;
            }
        }
    }
}

trn_status trn_river_route(const trn_drainage *drainage, const float *source_heights,
                           const trn_water *existing, const char *node_id,
                           const trn_river_route_params *params, trn_water_body *body,
                           trn_route_report *report, trn_error *err)
{
    return trn_river_route_carve(drainage, source_heights, existing, node_id, params, body, report,
                                 NULL, err);
}

trn_status trn_river_route_carve(const trn_drainage *drainage, const float *source_heights,
                                 const trn_water *existing, const char *node_id,
                                 const trn_river_route_params *params, trn_water_body *body,
                                 trn_route_report *report, float *ground, trn_error *err)
{
    if (!drainage || !source_heights || !node_id || !body || !report)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "river route: expected a drainage, its source heights, a node id and "
                             "outputs, found NULL");
    memset(report, 0, sizeof *report);
    if (!drainage->filled || !drainage->flow_dir || drainage->cells_x == 0 ||
        drainage->cells_z == 0 || !(drainage->size_x > 0.0) || !(drainage->size_z > 0.0))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "river route: expected a computed drainage, found an empty one");
    if (strlen(node_id) >= TRN_WATER_ID_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "river route: expected a node id of at most %u bytes, found %zu",
                             TRN_WATER_ID_MAX - 1u, strlen(node_id));
    trn_river_route_params defaults;
    if (!params) {
        trn_river_route_params_default(&defaults);
        params = &defaults;
    }
    trn_status st = check_params(params, err);
    if (st) return st;
    const uint32_t cx = drainage->cells_x, cz = drainage->cells_z;
    const double sx = drainage->size_x, sz = drainage->size_z;
    if (!isfinite(params->source_x) || !isfinite(params->source_z) || params->source_x < 0.0 ||
        params->source_z < 0.0 || params->source_x > sx || params->source_z > sz)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "river route: source: expected a point inside the field (x 0..%g, "
                             "z 0..%g), found (%g, %g)",
                             sx, sz, params->source_x, params->source_z);
    if (existing && existing->body_count &&
        (existing->cells_x != cx || existing->cells_z != cz || existing->size_x != sx ||
         existing->size_z != sz))
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "river route: existing water: expected the drainage's grid (%ux%u "
                             "cells over %g x %g), found %ux%u cells over %g x %g",
                             cx, cz, sx, sz, existing->cells_x, existing->cells_z, existing->size_x,
                             existing->size_z);
    const size_t nx = (size_t)cx + 1u;
    size_t samples;
    if (!trn_mul_size(nx, (size_t)cz + 1u, &samples) || samples >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "river route: expected fewer than 2^32-1 samples, found %zux%u", nx,
                             cz + 1u);
    if (ground) memcpy(ground, source_heights, samples * sizeof *ground);

    const uint32_t si = snap(params->source_x, cx, sx), sj = snap(params->source_z, cz, sz);
    const size_t source = (size_t)sj * nx + si;
    const double source_x = (double)si * sx / cx, source_z = (double)sj * sz / cz;
    report->end_x = source_x;
    report->end_z = source_z;
    int32_t wet = wet_owner(existing, source);
    if (wet >= 0) {
        report->samples = 1;
        snprintf(report->message, sizeof report->message,
                 "the source sample (%g, %g) is already under water '%s'; no river added", source_x,
                 source_z, existing->bodies[wet].id);
        return not_placed(body, report);
    }

    uint8_t *visited = calloc(samples, 1);
    uint32_t *trace = malloc(samples * sizeof *trace);
    if (!visited || !trace) {
        free(visited);
        free(trace);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "river route: out of memory for %zu samples", samples);
    }
    const double sea = drainage->sea_level;
    const double dx = sx / cx, dz = sz / cz;
    const double step_length[8] = {dx, hypot(dx, dz), dz, hypot(dx, dz),
                                   dx, hypot(dx, dz), dz, hypot(dx, dz)};
    size_t n = 0;
    size_t k = source;
    trn_route_end end;
    for (;;) {
        trace[n++] = (uint32_t)k;
        visited[k] = 1;
        const uint32_t i = (uint32_t)(k % nx), j = (uint32_t)(k / nx);
        const float h = source_heights[k];
        if ((wet = wet_owner(existing, k)) >= 0) { /* never the source: checked above */
            end = TRN_ROUTE_EXISTING_BODY;
            snprintf(report->joined, sizeof report->joined, "%s", existing->bodies[wet].id);
            break;
        }
        if (!isnan(sea) && (double)h <= sea) {
            end = TRN_ROUTE_SEA_LEVEL;
            break;
        }
        if (i == 0 || j == 0 || i == cx || j == cz) {
            end = TRN_ROUTE_FIELD_EDGE;
            break;
        }
        /* The drainage's own direction when it runs along a triangle edge; otherwise the
         * steepest nonascending triangle edge (ties: the order of edge_codes). */
        int next = -1;
        const unsigned flow = drainage->flow_dir[k];
        if (is_edge_code(flow)) {
            const size_t m = (size_t)((int64_t)j + TRN_D8_DJ[flow]) * nx +
                             (size_t)((int64_t)i + TRN_D8_DI[flow]);
            if (!visited[m] && source_heights[m] <= h) next = (int)m;
        }
        if (next < 0) {
            double best = -1.0;
            for (int e = 0; e < 6; e++) {
                const int c = edge_codes[e];
                const size_t m =
                    (size_t)((int64_t)j + TRN_D8_DJ[c]) * nx + (size_t)((int64_t)i + TRN_D8_DI[c]);
                if (visited[m] || !(source_heights[m] <= h)) continue;
                const double slope = ((double)h - (double)source_heights[m]) / step_length[c];
                if (slope > best) {
                    best = slope;
                    next = (int)m;
                }
            }
        }
        if (next < 0 && flow < 8u && !is_edge_code(flow)) {
            /* No triangle edge leads on, but the drainage does, down the diagonal against the
             * cell's split: the last way out before a dead end (a pit in a flat valley floor at
             * fine cells). The ground between may rise by what the cell's other diagonal
             * crosses; the carve cuts through it. */
            const size_t m = (size_t)((int64_t)j + TRN_D8_DJ[flow]) * nx +
                             (size_t)((int64_t)i + TRN_D8_DI[flow]);
            if (!visited[m] && source_heights[m] <= h) next = (int)m;
        }
        if (next < 0) {
            /* A pit the fill raised has no outlet here; anything else is a blocked surface. */
            end = drainage->filled[k] > h ? TRN_ROUTE_CLOSED_BASIN : TRN_ROUTE_BLOCKED;
            break;
        }
        k = (size_t)next;
    }
    const size_t joined_at = trace[n - 1], joined_n = n;
    /* A channel under two cells wide is a row of cells whatever its line (below); its mouth
     * ends within the joining sample's cell, no pit beyond it to run out of. */
    const bool wide = params->channel_width >= 2.0 * (dx > dz ? dx : dz);
    if (end == TRN_ROUTE_EXISTING_BODY && wide)
        n = mouth(existing, source_heights, params, cx, cz, step_length, visited, trace, n);
    free(visited);

    const size_t last = trace[n - 1];
    report->samples = (uint32_t)joined_n;
    report->end_x = (double)(joined_at % nx) * sx / cx;
    report->end_z = (double)(joined_at / nx) * sz / cz;
    report->end = end;
    if (n < 2) {
        free(trace);
        snprintf(report->message, sizeof report->message,
                 "the route from (%g, %g) ends at its source (%s), shorter than the 2 samples a "
                 "river needs; no river added",
                 source_x, source_z, trn_route_end_name(end));
        report->joined[0] = '\0';
        return not_placed(body, report);
    }

    /* The channel head: the depth grows linearly with the distance travelled from the source
     * (nothing there, channel_depth from head_length on). The river begins at the first sample
     * where it reaches water_depth: before that its water would stand above the ground. Ground
     * that never rises under a depth that never shrinks keeps the bed from ascending. */
    double *depth = malloc(n * sizeof *depth);
    if (!depth) {
        free(trace);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "river route: out of memory for %zu path points", n);
    }
    double travelled = 0.0;
    for (size_t p = 0; p < n; p++) {
        if (p > 0) {
            const size_t a = trace[p - 1], b = trace[p];
            const double ddx = ((double)(b % nx) - (double)(a % nx)) * dx;
            const double ddz = ((double)(b / nx) - (double)(a / nx)) * dz;
            travelled += sqrt(ddx * ddx + ddz * ddz);
        }
        depth[p] = travelled >= params->head_length
                       ? params->channel_depth
                       : params->channel_depth * (travelled / params->head_length);
    }
    size_t first = 0;
    while (first < n && depth[first] < params->water_depth)
        first++;
    if (n - first < 2) {
        free(depth);
        free(trace);
        snprintf(report->message, sizeof report->message,
                 "the route from (%g, %g) ends (%s) %.6g along it, before its channel head "
                 "(head_length %g) is %g deep; no river added",
                 source_x, source_z, trn_route_end_name(end), travelled, params->head_length,
                 params->water_depth);
        report->joined[0] = '\0';
        return not_placed(body, report);
    }
    double *points = malloc((n - first) * 3u * sizeof *points);
    if (!points) {
        free(depth);
        free(trace);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "river route: out of memory for %zu path points", n - first);
    }
    /* The bed: the depth below the ground along the centreline (which never rises, so
     * neither does the bed) and no lower than water_depth under the receiving surface, so the
     * river meets it without falling. */
    double floor_level = -INFINITY;
    if (end == TRN_ROUTE_EXISTING_BODY) {
        const float joined = existing->surface ? existing->surface[last] : NAN;
        floor_level =
            (isnan(joined) ? existing->bodies[existing->owner[last]].level : (double)joined) -
            params->water_depth;
    } else if (end == TRN_ROUTE_SEA_LEVEL) {
        floor_level = sea - params->water_depth;
    }
    /* The centreline: the trace steps from sample to neighbouring sample, so a valley that
     * runs between the grid's directions comes out as a staircase whose corners the carve
     * would round one by one, a bead per sample, and whose samples sit by turns on either
     * side of the valley's floor, higher and lower, so a bed under them would pulse too. Two
     * passes of a moving average over about the channel's half width on either side (none
     * under a cell wide) straighten the line and even the ground under it; the
     * window narrows at the ends, which stay where the trace put them (the source, and the
     * sample where it joins water, reaches the sea or the edge). */
    double *cl = malloc(n * 5u * sizeof *cl);
    if (!cl) {
        free(points);
        free(depth);
        free(trace);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "river route: out of memory for %zu path points", n);
    }
    double *lx = cl, *lz = cl + n, *lg = cl + 2u * n, *over = cl + 3u * n, *tmp = cl + 4u * n;
    for (size_t p = 0; p < n; p++) {
        lx[p] = (double)(trace[p] % nx) * sx / cx;
        lz[p] = (double)(trace[p] / nx) * sz / cz;
        lg[p] = (double)source_heights[trace[p]];
    }
    const double reach = floor(0.5 * params->channel_width / (dx < dz ? dx : dz) + 0.5);
    const size_t half = reach > 64.0 ? 64u : (size_t)reach; /* 0: under a cell wide */
    /* A channel under two cells wide is a row of cells whatever its line: left on the trace,
     * whose samples keep the valley's lowest ground within its water. */
    /* Smoothed as far as the shore: the mouth's samples under the water it joined (below)
     * stay on the trace, their bed the floor, so the shore's line is as it would be without
     * them and the channel runs on straight down the bed. */
    const size_t sn = joined_n;
    smooth_twice(lx, tmp, sn, wide ? half : 0u);
    smooth_twice(lz, tmp, sn, wide ? half : 0u);
    /* The averaged ground stands above the trace's own where the valley's floor bends up
     * (below a steep reach); a bed raised there would hold water above the ground beside it.
     * Each point's excess, spread over twice the window and averaged the same way, is at
     * least the excess at every point it reaches: taken off, the ground is smooth and never
     * above the trace's. */
    for (size_t p = 0; p < sn; p++)
        over[p] = lg[p];
    smooth_twice(over, tmp, sn, half);
    for (size_t p = 0; p < sn; p++)
        tmp[p] = over[p] > lg[p] ? over[p] - lg[p] : 0.0;
    for (size_t p = 0; p < sn; p++) {
        const size_t lo = p > 2u * half ? p - 2u * half : 0u;
        const size_t hi = p + 2u * half < sn - 1u ? p + 2u * half : sn - 1u;
        double m = 0.0;
        for (size_t q = lo; q <= hi; q++)
            m = tmp[q] > m ? tmp[q] : m;
        lg[p] = m; /* the spread excess, for now */
    }
    smooth_twice(lg, tmp, sn, half);
    for (size_t p = 0; p < sn; p++)
        lg[p] = over[p] - lg[p];
    /* Neither may it rise where the window narrows at the ends: hold it. */
    for (size_t p = 1; p < n; p++)
        if (lg[p] > lg[p - 1u]) lg[p] = lg[p - 1u];
    double *bed = over; /* done with */
    for (size_t p = 0; p < n; p++)
        bed[p] = lg[p] - depth[p] > floor_level ? lg[p] - depth[p] : floor_level;
    /* With the head cut into the ground, the river's water begins the reach of its
     * cross-section (half width and bank) further down, the head's cut carrying the river's
     * own section and bed over that reach: the river's carve ends in a round cap there, and a
     * cap across the slope above the water (its bank cut back into the rising ground, a ring)
     * is what the head replaces; at the later start the cap lies within the head's channel. */
    size_t start = first;
    if (ground && first > 0) {
        const double hw = 0.5 * params->channel_width;
        const double section = hw + fmax(hw, 2.0 * fmax(dx, dz)); /* water_resolve.c's */
        double past = 0.0;
        while (past < section && n - start > 2u) {
            past += hypot(lx[start + 1u] - lx[start], lz[start + 1u] - lz[start]);
            start++;
        }
        carve_head(lx, lz, lg, bed, depth, start, params, cx, cz, dx, dz, source_heights, ground);
    }
    const size_t count = n - start;
    for (size_t p = start; p < n; p++) {
        const size_t q = p - start;
        points[q * 3u + 0u] = lx[p];
        points[q * 3u + 1u] = bed[p];
        points[q * 3u + 2u] = lz[p];
    }
    free(cl);
    free(depth);
    free(trace);

    trn_water_body_init(body, TRN_WATER_RIVER, node_id);
    body->control = points;
    body->control_count = (uint32_t)count;
    body->interpolation = TRN_RIVER_LINEAR;
    body->surface_mode = TRN_RIVER_SURFACE_FOLLOW_BED;
    body->river_depth = params->water_depth;
    body->width = params->channel_width;
    body->level = points[1] + params->water_depth;
    body->look.flow_speed = params->flow_speed;
    body->carve = true;
    if ((st = trn_water_body_sample_path(body, err))) {
        trn_water_body_dispose(body);
        memset(body, 0, sizeof *body);
        return st;
    }

    switch (end) {
    case TRN_ROUTE_SEA_LEVEL:
        snprintf(report->message, sizeof report->message,
                 "reached the sea level (%g) at (%g, %g) after %zu samples", sea, report->end_x,
                 report->end_z, n);
        break;
    case TRN_ROUTE_FIELD_EDGE:
        snprintf(report->message, sizeof report->message,
                 "reached the field edge at (%g, %g) after %zu samples", report->end_x,
                 report->end_z, n);
        break;
    case TRN_ROUTE_EXISTING_BODY:
        snprintf(report->message, sizeof report->message,
                 "joined water body '%s' at (%g, %g) after %zu samples", report->joined,
                 report->end_x, report->end_z, n);
        break;
    case TRN_ROUTE_CLOSED_BASIN:
        snprintf(report->message, sizeof report->message,
                 "ends in a closed basin at (%g, %g) after %zu samples: the pit has no outlet, "
                 "so this is not a sea outlet",
                 report->end_x, report->end_z, n);
        break;
    case TRN_ROUTE_BLOCKED:
    case TRN_ROUTE_NOT_PLACED:
        snprintf(report->message, sizeof report->message,
                 "blocked at (%g, %g) after %zu samples: no unvisited terrain-triangle edge "
                 "leads on without climbing",
                 report->end_x, report->end_z, n);
        break;
    }
    return TRN_OK;
}
