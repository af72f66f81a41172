/* Replaying layers over a window: evaluation order of strokes, their stamps, and the height,
 * exclusion and painted-region stages. */
#include "recipe/replay.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "graph/graph_internal.h"

static const char *const default_layer_ids[TRN_LAYER_GROUP_COUNT] = {
    "generation", "biomes", "sculpt", "protection", "exclusions"};

static trn_layer_group kind_group(trn_stroke_kind kind)
{
    switch (kind) {
    case TRN_STROKE_PROTECT:
        return TRN_LAYER_PROTECTION;
    case TRN_STROKE_EXCLUSION:
        return TRN_LAYER_EXCLUSIONS;
    case TRN_STROKE_REGION:
        return TRN_LAYER_BIOMES;
    default:
        return TRN_LAYER_SCULPT;
    }
}

static uint32_t layer_count(const trn_recipe *r)
{
    return r->layer_count && r->layers ? r->layer_count : (uint32_t)TRN_LAYER_GROUP_COUNT;
}

static trn_layer_group layer_group(const trn_recipe *r, uint32_t l)
{
    return r->layer_count && r->layers ? r->layers[l].group : (trn_layer_group)l;
}

static const char *layer_id(const trn_recipe *r, uint32_t l)
{
    return r->layer_count && r->layers ? r->layers[l].id : default_layer_ids[l];
}

bool trn_replay_layer_enabled(const trn_recipe *r, int l)
{
    if (l < 0) return false;
    return r->layer_count && r->layers ? r->layers[l].enabled : true;
}

int trn_replay_stroke_layer(const trn_recipe *r, const trn_stroke *s)
{
    const trn_layer_group g = kind_group(s->kind);
    for (uint32_t l = 0; l < layer_count(r); l++) {
        const char *id = layer_id(r, l);
        if (s->layer ? (id && strcmp(id, s->layer) == 0) : layer_group(r, l) == g)
            return layer_group(r, l) == g ? (int)l : -1;
    }
    return -1;
}

trn_grid trn_replay_grid(const trn_recipe *r)
{
    trn_grid g = {r->cells_x, r->cells_z, r->size_x, r->size_z};
    return g;
}

void trn_replay_plan_dispose(trn_replay_plan *plan)
{
    if (!plan) return;
    free(plan->order);
    free(plan->biome);
    free(plan->landform);
    free(plan->position);
    memset(plan, 0, sizeof *plan);
}

trn_status trn_replay_plan_make(const trn_recipe *r, trn_replay_plan *plan, trn_error *err)
{
    memset(plan, 0, sizeof *plan);
    const uint32_t n = r->stroke_count;
    const size_t cap = n ? n : 1u;
    plan->order = malloc(cap * sizeof *plan->order);
    plan->biome = malloc(cap * sizeof *plan->biome);
    plan->landform = malloc(cap * sizeof *plan->landform);
    plan->position = malloc(cap * sizeof *plan->position);
    int *layer = malloc(cap * sizeof *layer);
    if (!plan->order || !plan->biome || !plan->landform || !plan->position || !layer) {
        free(layer);
        trn_replay_plan_dispose(plan);
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "layers: out of memory for %u strokes", n);
    }
    trn_status st = TRN_OK;
    for (uint32_t s = 0; s < n && !st; s++) {
        const trn_stroke *k = &r->strokes[s];
        plan->biome[s] = -1;
        plan->landform[s] = -1;
        plan->position[s] = -1;
        layer[s] = trn_replay_stroke_layer(r, k);
        if (layer[s] < 0 || (unsigned)k->kind >= (unsigned)TRN_STROKE_KIND_COUNT) {
            st = trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                               "strokes[%u].layer: expected a %s layer, found \"%s\"", s,
                               (unsigned)k->kind < (unsigned)TRN_STROKE_KIND_COUNT
                                   ? default_layer_ids[kind_group(k->kind)]
                                   : "known",
                               k->layer ? k->layer : "(none)");
            break;
        }
        if (k->kind == TRN_STROKE_REGION) {
            const int b = k->biome ? trn_recipe_find_biome(r, k->biome) : -1;
            if (b < 0) {
                st = trn_error_set(err, TRN_ERR_VALIDATION, NULL, -1,
                                   "strokes[%u].biome: expected a biome of this recipe, found "
                                   "\"%s\"",
                                   s, k->biome ? k->biome : "(none)");
                break;
            }
            plan->biome[s] = b;
            /* With a graph the graph makes the shape: painting only relabels. */
            const char *lf = r->biomes[b].landform;
            if (lf && !r->graph_json) plan->landform[s] = trn_recipe_find_landform(r, lf);
        }
    }
    static const trn_layer_group stages[4] = {TRN_LAYER_BIOMES, TRN_LAYER_SCULPT,
                                              TRN_LAYER_PROTECTION, TRN_LAYER_EXCLUSIONS};
    uint32_t m = 0;
    for (int g = 0; g < 4 && !st; g++) {
        for (uint32_t l = 0; l < layer_count(r); l++) {
            if (layer_group(r, l) != stages[g] || !trn_replay_layer_enabled(r, (int)l)) continue;
            for (uint32_t s = 0; s < n; s++)
                if (layer[s] == (int)l) {
                    plan->position[s] = (int32_t)m;
                    plan->order[m++] = s;
                }
        }
        plan->stage_end[g] = m;
    }
    free(layer);
    if (st) trn_replay_plan_dispose(plan);
    return st;
}

bool trn_replay_has_exclusions(const trn_replay_plan *plan)
{
    return plan->stage_end[3] > plan->stage_end[2];
}

trn_box trn_replay_stroke_box(const trn_recipe *r, const trn_stroke *s)
{
    const trn_grid grid = trn_replay_grid(r);
    trn_box box = trn_box_none();
    if (s->kind == TRN_STROKE_PROTECT) {
        if (s->grid_cells_x != r->cells_x || s->grid_cells_z != r->cells_z) return box;
        const uint64_t nx = (uint64_t)r->cells_x + 1u, total = nx * ((uint64_t)r->cells_z + 1u);
        for (uint32_t k = 0; k < s->sample_count; k++) {
            if (s->sample_index[k] >= total) continue;
            const trn_box one = {
                (int64_t)(s->sample_index[k] % nx), (int64_t)(s->sample_index[k] / nx),
                (int64_t)(s->sample_index[k] % nx), (int64_t)(s->sample_index[k] / nx)};
            box = trn_box_union(box, one);
        }
        return box;
    }
    for (uint32_t p = 0; p < s->point_count; p++)
        box = trn_box_union(
            box, trn_stamp_box(&grid, s->points[2 * p], s->points[2 * p + 1], s->radius));
    return box;
}

uint64_t trn_replay_stroke_work(const trn_recipe *r, const trn_stroke *s)
{
    if (s->kind == TRN_STROKE_PROTECT) return s->sample_count;
    const trn_grid grid = trn_replay_grid(r);
    uint64_t total = 0;
    for (uint32_t p = 0; p < s->point_count; p++) {
        const trn_box b = trn_stamp_box(&grid, s->points[2 * p], s->points[2 * p + 1], s->radius);
        if (trn_box_empty(&b)) continue;
        uint64_t area;
        if (!trn_mul_u64((uint64_t)(b.i1 - b.i0 + 1), (uint64_t)(b.j1 - b.j0 + 1), &area) ||
            !trn_add_u64(total, area, &total))
            return UINT64_MAX;
    }
    return total;
}

/* "edits[3]": a stroke's place in the document, whose sections hold regions, edits and
 * exclusions in that order. */
static void stroke_path(const trn_recipe *r, uint32_t s, char *out, size_t size)
{
    const trn_stroke_kind kind = r->strokes[s].kind;
    const int section = kind == TRN_STROKE_REGION ? 0 : kind == TRN_STROKE_EXCLUSION ? 2 : 1;
    uint32_t index = 0;
    for (uint32_t k = 0; k < s; k++) {
        const trn_stroke_kind o = r->strokes[k].kind;
        index += (o == TRN_STROKE_REGION ? 0 : o == TRN_STROKE_EXCLUSION ? 2 : 1) == section;
    }
    static const char *const names[3] = {"regions", "edits", "exclusions"};
    snprintf(out, size, "%s[%" PRIu32 "]", names[section], index);
}

trn_status trn_replay_check_work(const trn_recipe *r, const trn_replay_plan *plan,
                                 uint64_t max_work, trn_error *err)
{
    if (max_work == TRN_WORK_UNLIMITED) return TRN_OK;
    const uint64_t budget = max_work ? max_work : TRN_WORK_BUDGET_DEFAULT;
    const uint32_t enabled = plan->stage_end[3];
    uint64_t total = 0, worst_work = 0;
    uint32_t worst = 0;
    for (uint32_t o = 0; o < enabled; o++) {
        const uint32_t s = plan->order[o];
        const uint64_t w = trn_replay_stroke_work(r, &r->strokes[s]);
        if (w > worst_work || o == 0) {
            worst_work = w;
            worst = s;
        }
        if (!trn_add_u64(total, w, &total)) total = UINT64_MAX;
    }
    if (total <= budget) return TRN_OK;
    char path[64];
    stroke_path(r, worst, path, sizeof path);
    const trn_stroke *k = &r->strokes[worst];
    return trn_error_set(
        err, TRN_ERR_LIMIT, NULL, -1,
        "%s: the strokes' work %" PRIu64 " (samples inside each stamp's reach, "
        "%" PRIu32 " strokes) exceeds the work budget of %" PRIu64
        "; the costliest is this %s stroke: %" PRIu32 " stamps of radius %g, work %" PRIu64
        "; use fewer points or a smaller radius, or raise the budget "
        "(max_work in the generation options; terrane generate --max-work N, "
        "or --no-work-limit for a trusted recipe)",
        path, total, enabled, budget, trn_stroke_kind_name(k->kind),
        k->kind == TRN_STROKE_PROTECT ? k->sample_count : k->point_count, k->radius, worst_work);
}

static void make_stamp(const trn_recipe *r, const trn_replay_plan *plan, uint32_t s, uint32_t p,
                       float *const *lf, trn_stamp *st)
{
    const trn_stroke *k = &r->strokes[s];
    memset(st, 0, sizeof *st);
    st->x = k->points[2 * p];
    st->z = k->points[2 * p + 1];
    st->radius = k->radius;
    st->falloff = k->falloff;
    st->amount = k->strength;
    st->target = k->target_height;
    switch (k->kind) {
    case TRN_STROKE_RAISE:
        st->op = TRN_STAMP_ADD;
        break;
    case TRN_STROKE_LOWER:
        st->op = TRN_STAMP_ADD;
        st->amount = -k->strength;
        break;
    case TRN_STROKE_FLATTEN:
        st->op = TRN_STAMP_TOWARD;
        break;
    case TRN_STROKE_SMOOTH:
        st->op = TRN_STAMP_SMOOTH;
        break;
    case TRN_STROKE_REGION:
        st->op = TRN_STAMP_BLEND;
        st->source = plan->landform[s] >= 0 && lf ? lf[plan->landform[s]] : NULL;
        break;
    case TRN_STROKE_EXCLUSION:
        st->op = k->erase ? TRN_STAMP_ERASE : TRN_STAMP_EXCLUDE;
        break;
    default:
        break;
    }
}

static void protect_window(const trn_recipe *r, const trn_stroke *s, trn_window *win)
{
    if (s->grid_cells_x != r->cells_x || s->grid_cells_z != r->cells_z) return;
    const uint64_t nx = (uint64_t)r->cells_x + 1u, total = nx * ((uint64_t)r->cells_z + 1u);
    const trn_box b = win->box;
    const size_t ww = (size_t)(b.i1 - b.i0 + 1);
    for (uint32_t k = 0; k < s->sample_count; k++) {
        const uint64_t idx = s->sample_index[k];
        if (idx >= total) continue;
        const int64_t i = (int64_t)(idx % nx), j = (int64_t)(idx / nx);
        if (i < b.i0 || i > b.i1 || j < b.j0 || j > b.j1) continue;
        win->values[(size_t)(j - b.j0) * ww + (size_t)(i - b.i0)] = s->sample_height[k];
    }
}

static trn_status replay_range(const trn_recipe *r, const trn_replay_plan *plan, float *const *lf,
                               uint32_t from, uint32_t to, trn_window *win, trn_error *err)
{
    float *scratch = NULL;
    size_t cap = 0;
    trn_status st = TRN_OK;
    const trn_grid grid = trn_replay_grid(r);
    for (uint32_t o = from; o < to && !st; o++) {
        const uint32_t s = plan->order[o];
        const trn_stroke *k = &r->strokes[s];
        if (k->kind == TRN_STROKE_PROTECT) {
            protect_window(r, k, win);
            continue;
        }
        if (k->kind == TRN_STROKE_REGION && plan->landform[s] < 0) continue;
        for (uint32_t p = 0; p < k->point_count && !st; p++) {
            trn_stamp stamp;
            make_stamp(r, plan, s, p, lf, &stamp);
            if (stamp.op == TRN_STAMP_BLEND && !stamp.source) continue;
            /* Cheap reject before the kernel: most stamps miss a small window. */
            trn_box sb =
                trn_box_intersect(trn_stamp_box(&grid, stamp.x, stamp.z, stamp.radius), win->box);
            if (trn_box_empty(&sb)) continue;
            st = trn_stamp_apply(win, &stamp, &scratch, &cap, err);
        }
    }
    free(scratch);
    return st;
}

trn_status trn_replay_heights(const trn_recipe *r, const trn_replay_plan *plan, float *const *lf,
                              trn_window *win, trn_error *err)
{
    return replay_range(r, plan, lf, 0, plan->stage_end[2], win, err);
}

trn_status trn_replay_exclusion(const trn_recipe *r, const trn_replay_plan *plan, trn_window *win,
                                trn_error *err)
{
    return replay_range(r, plan, NULL, plan->stage_end[2], plan->stage_end[3], win, err);
}

uint8_t trn_replay_quantise(float m)
{
    double v = (double)m;
    if (!(v > 0.0)) return 0;
    if (v >= 1.0) return 255;
    return (uint8_t)floor(v * 255.0 + 0.5);
}

void trn_replay_paint(const trn_recipe *r, const trn_replay_plan *plan, trn_box box,
                      uint8_t *biomes, uint8_t *sources, int16_t *rules)
{
    const trn_grid grid = trn_replay_grid(r);
    for (uint32_t o = 0; o < plan->stage_end[0]; o++) {
        const uint32_t s = plan->order[o];
        const trn_stroke *k = &r->strokes[s];
        for (uint32_t p = 0; p < k->point_count; p++) {
            trn_stamp stamp;
            make_stamp(r, plan, s, p, NULL, &stamp);
            trn_stamp_paint(&grid, box, &stamp, (uint8_t)plan->biome[s], biomes, sources, rules);
        }
    }
}

trn_status trn_replay_landform_heights(const trn_recipe *r, int landform, const trn_field *base,
                                       int threads, trn_erosion_quality quality, float **out,
                                       trn_error *err)
{
    *out = NULL;
    const int def = trn_recipe_find_landform(r, r->default_landform);
    trn_field f;
    memset(&f, 0, sizeof f);
    trn_status st = trn_field_init(&f, r->cells_x, r->cells_z, r->size_x, r->size_z, err);
    if (st) return st;
    if (landform == def)
        memcpy(f.heights, base->heights, trn_field_sample_count(&f) * sizeof *f.heights);
    else if ((st = trn_graph_landform_heights(r, landform, threads, quality, &f, err))) {
        trn_field_dispose(&f);
        return st;
    }
    *out = f.heights;
    return TRN_OK;
}

void trn_replay_keep_dispose(trn_replay_keep *keep)
{
    if (!keep) return;
    trn_field_dispose(&keep->base);
    for (uint32_t l = 0; keep->lf && l < keep->lf_count; l++)
        free(keep->lf[l]);
    free(keep->lf);
    memset(keep, 0, sizeof *keep);
}
