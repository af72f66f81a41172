/* Basin Water: lakes proposed at the spill levels of a drainage's closed basins. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "water/water_internal.h"
#include "terrane/water.h"
#include "gen/d8.h"

void trn_basin_water_params_default(trn_basin_water_params *params)
{
    if (!params) return;
    params->minimum_depth = 1.0;
    params->minimum_area = 16.0;
    params->maximum_bodies = 16u;
    params->level_offset = 0.0;
}

/* An eligible basin while ranking: its index in drainage->basins and what ranks it. */
typedef struct basin_rank {
    size_t basin;
    double depth;
    uint64_t area;
    uint64_t sink; /* sink sample index */
} basin_rank;

/* Deepest first; ties: larger area, then smaller sink index (unique, so the order is total). */
static int rank_cmp(const void *a, const void *b)
{
    const basin_rank *x = a, *y = b;
    if (x->depth != y->depth) return x->depth > y->depth ? -1 : 1;
    if (x->area != y->area) return x->area > y->area ? -1 : 1;
    return (x->sink > y->sink) - (x->sink < y->sink);
}

static int sink_cmp(const void *a, const void *b)
{
    const basin_rank *x = a, *y = b;
    return (x->sink > y->sink) - (x->sink < y->sink);
}

/* Distance from the sink to the farthest sample the fill raised in this basin: a flood over the
 * 8-connected raised samples at its spill level, which is how the drainage delimits a basin.
 * stamp holds, per sample, the number of the last flood that reached it (so one array serves
 * every basin without clearing); queue has room for every sample. */
static double basin_reach(const trn_drainage *d, const float *source, const trn_basin *b,
                          uint32_t flood, uint32_t *stamp, uint32_t *queue)
{
    const size_t nx = (size_t)d->cells_x + 1u;
    const double dx = d->size_x / d->cells_x, dz = d->size_z / d->cells_z;
    const uint32_t sink = (uint32_t)((size_t)b->sink_j * nx + b->sink_i);
    size_t head = 0, tail = 0;
    double far2 = 0.0;
    queue[tail++] = sink;
    stamp[sink] = flood;
    while (head < tail) {
        const uint32_t k = queue[head++];
        const int64_t i = (int64_t)(k % nx), j = (int64_t)(k / nx);
        const double ex = (double)(i - (int64_t)b->sink_i) * dx;
        const double ez = (double)(j - (int64_t)b->sink_j) * dz;
        if (ex * ex + ez * ez > far2) far2 = ex * ex + ez * ez;
        for (int c = 0; c < 8; c++) {
            const int64_t ni = i + TRN_D8_DI[c], nj = j + TRN_D8_DJ[c];
            if (ni < 0 || nj < 0 || ni > (int64_t)d->cells_x || nj > (int64_t)d->cells_z) continue;
            const uint32_t n = (uint32_t)((size_t)nj * nx + (size_t)ni);
            if (stamp[n] == flood) continue;
            /* Raised by the fill: raised samples that touch are one basin in the drainage. */
            if (!(source[n] < d->filled[n])) continue;
            stamp[n] = flood;
            queue[tail++] = n;
        }
    }
    return sqrt(far2);
}

static trn_status check_params(const trn_basin_water_params *p, trn_error *err)
{
    if (!isfinite(p->minimum_depth) || p->minimum_depth < 0.0)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "basin water: minimum_depth: expected a finite number >= 0, found %g",
                             p->minimum_depth);
    if (!isfinite(p->minimum_area) || p->minimum_area < 0.0)
        return trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                             "basin water: minimum_area: expected a finite number >= 0, found %g",
                             p->minimum_area);
    if (!isfinite(p->level_offset) || p->level_offset > 0.0)
        return trn_error_set(
            err, TRN_ERR_VALIDATION, NULL, -1,
            "basin water: level_offset: expected a finite number <= 0 (it can only "
            "lower a lake below its spill level), found %g",
            p->level_offset);
    return TRN_OK;
}

void trn_water_bodies_free(trn_water_body *bodies, uint32_t count)
{
    if (!bodies) return;
    for (uint32_t k = 0; k < count; k++)
        trn_water_body_dispose(&bodies[k]);
    free(bodies);
}

trn_status trn_water_propose_basins(const trn_drainage *drainage, const float *source_heights,
                                    const char *node_id, const trn_basin_water_params *params,
                                    trn_water_body **bodies, uint32_t *count, uint32_t *eligible,
                                    trn_error *err)
{
    if (!drainage || !source_heights || !node_id || !bodies || !count)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "basin water: expected a drainage, its source heights, a node id "
                             "and outputs, found NULL");
    *bodies = NULL;
    *count = 0;
    if (eligible) *eligible = 0;
    if (!drainage->filled || drainage->cells_x == 0 || drainage->cells_z == 0 ||
        !(drainage->size_x > 0.0) || !(drainage->size_z > 0.0) ||
        (drainage->basin_count && !drainage->basins))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "basin water: expected a computed drainage, found an empty one");
    trn_basin_water_params defaults;
    if (!params) {
        trn_basin_water_params_default(&defaults);
        params = &defaults;
    }
    trn_status st = check_params(params, err);
    if (st) return st;
    /* The longest id: node id, "/basin/", two 10-digit coordinates and '_'. */
    if (strlen(node_id) + 7u + 21u >= TRN_WATER_ID_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "basin water: expected a node id of at most %u bytes, found %zu",
                             TRN_WATER_ID_MAX - 29u, strlen(node_id));

    const size_t nx = (size_t)drainage->cells_x + 1u;
    size_t samples;
    if (!trn_mul_size(nx, (size_t)drainage->cells_z + 1u, &samples) || samples >= UINT32_MAX)
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "basin water: expected fewer than 2^32-1 samples, found %zux%u", nx,
                             drainage->cells_z + 1u);
    const double cell_area =
        (drainage->size_x / drainage->cells_x) * (drainage->size_z / drainage->cells_z);

    basin_rank *ranks = NULL;
    if (drainage->basin_count) {
        ranks = malloc(drainage->basin_count * sizeof *ranks);
        if (!ranks)
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "basin water: out of memory for %zu basins",
                                 drainage->basin_count);
    }
    size_t n = 0;
    for (size_t b = 0; b < drainage->basin_count; b++) {
        const trn_basin *basin = &drainage->basins[b];
        if (basin->sink_i > drainage->cells_x || basin->sink_j > drainage->cells_z) continue;
        const double depth = (double)basin->spill_level - (double)basin->sink_height;
        const double area = (double)basin->area * cell_area;
        if (!(depth >= params->minimum_depth) || !(area >= params->minimum_area)) continue;
        ranks[n].basin = b;
        ranks[n].depth = depth;
        ranks[n].area = basin->area;
        ranks[n].sink = (uint64_t)basin->sink_j * nx + basin->sink_i;
        n++;
    }
    if (eligible) *eligible = n > UINT32_MAX ? UINT32_MAX : (uint32_t)n;
    size_t keep = n;
    if (keep > params->maximum_bodies) {
        qsort(ranks, n, sizeof *ranks, rank_cmp);
        keep = params->maximum_bodies;
    }
    if (keep == 0) {
        free(ranks);
        return TRN_OK;
    }
    qsort(ranks, keep, sizeof *ranks, sink_cmp);

    trn_water_body *out = calloc(keep, sizeof *out);
    uint32_t *stamp = calloc(samples, sizeof *stamp);
    uint32_t *queue = malloc(samples * sizeof *queue);
    if (!out || !stamp || !queue) {
        free(out);
        free(stamp);
        free(queue);
        free(ranks);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "basin water: out of memory for %zu lakes over %zu samples", keep,
                             samples);
    }
    const double dx = drainage->size_x / drainage->cells_x;
    const double dz = drainage->size_z / drainage->cells_z;
    const double diagonal = sqrt(dx * dx + dz * dz);
    for (size_t k = 0; k < keep; k++) {
        const trn_basin *basin = &drainage->basins[ranks[k].basin];
        char id[TRN_WATER_ID_MAX];
        snprintf(id, sizeof id, "%s/basin/%u_%u", node_id, basin->sink_i, basin->sink_j);
        trn_water_body *body = &out[k];
        trn_water_body_init(body, TRN_WATER_LAKE, id);
        body->level = (double)basin->spill_level + params->level_offset;
        body->center_x = trn_water_sample_pos(basin->sink_i, drainage->cells_x, drainage->size_x);
        body->center_z = trn_water_sample_pos(basin->sink_j, drainage->cells_z, drainage->size_z);
        /* One cell diagonal beyond the farthest raised sample keeps its shore cells inside. */
        body->radius =
            basin_reach(drainage, source_heights, basin, (uint32_t)k + 1u, stamp, queue) + diagonal;
        body->carve = false;
    }
    free(stamp);
    free(queue);
    free(ranks);
    *bodies = out;
    *count = (uint32_t)keep;
    return TRN_OK;
}
