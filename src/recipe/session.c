/* Sessions: a generated terrain kept with its base, updated incrementally by each new stroke
 * (bit-identical to regenerating the recipe with the stroke appended), with undo and redo. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recipe/recipe_internal.h"
#include "recipe/recipe_model.h"
#include "recipe/replay.h"
#include "terrane/drainage.h"
#include "terrane/layers.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"

/* One applied stroke: where it went in the recipe and the touched window before and after. */
typedef struct hist_entry {
    trn_stroke stroke;
    uint32_t index;
    trn_box box;
    bool heights; /* the stroke changed heights (so drainage, not only biomes, may change) */
    float *h[2];
    uint8_t *b[2], *s[2], *x[2];
    int16_t *r[2];
} hist_entry;

/* What a session derives from its result besides the surface: the placements (immutable
 * candidates, their view on the current surface and the environment the view reads) and the
 * roles' inputs that edits leave alone (moisture, snow flags) plus the last drainage's flow
 * accumulation, so an edit finds the samples whose accumulation it changed. */
typedef struct derived {
    const trn_palette *palette; /* NULL: no placements */
    trn_instances base;         /* owned copy */
    trn_scatter_view view;
    trn_generated_scatter_env env;
    bool roles;
    trn_roles_params params;
    uint32_t *accumulation;
    float *moisture;
    bool *snow;
    /* Lakes and oceans cover samples strictly below their level only, so an edit whose samples
     * stay at or above the highest level, before and after, leaves the coverage alone. */
    bool water_by_level; /* every body is a lake or an ocean */
    double water_top;    /* their highest level */
    uint8_t *water_low;  /* 1: the sample's height was below water_top at the last look */
} derived;

struct trn_session {
    trn_recipe recipe;
    trn_generated gen;
    trn_replay_keep keep;
    trn_generate_options options;
    /* Graph results kept for regenerations (the caller's cache, or the session's own in memory),
     * so a recipe change that leaves the graph alone never reruns erosion. */
    trn_graph_cache *own_cache;
    hist_entry *hist;
    uint32_t hist_count, hist_pos, hist_cap;
    /* The result's cache key is the canonical JSON's hash of the whole recipe: O(recipe), far
     * more than one stroke's samples, so it is brought up to date when the result is read. */
    bool key_stale;
    derived d;
    /* gen.instances lags the view after edits until the result is read. */
    bool instances_stale;
    trn_session_edit last;
};

static trn_status oom(trn_error *err, const char *what)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "session: out of memory for %s", what);
}

/* ---- recipe copies ---- */

static bool dup_str(char **dst, const char *src)
{
    *dst = NULL;
    if (!src) return true;
    size_t n = strlen(src) + 1;
    *dst = malloc(n);
    if (!*dst) return false;
    memcpy(*dst, src, n);
    return true;
}

static bool dup_mem(void **dst, const void *src, size_t n)
{
    *dst = NULL;
    if (!src || !n) return true;
    *dst = malloc(n);
    if (!*dst) return false;
    memcpy(*dst, src, n);
    return true;
}

static void stroke_free(trn_stroke *s)
{
    free(s->layer);
    free(s->biome);
    free(s->points);
    free(s->sample_index);
    free(s->sample_height);
    memset(s, 0, sizeof *s);
}

static bool stroke_copy(trn_stroke *dst, const trn_stroke *src)
{
    *dst = *src;
    dst->layer = dst->biome = NULL;
    dst->points = NULL;
    dst->sample_index = NULL;
    dst->sample_height = NULL;
    bool ok = dup_str(&dst->layer, src->layer) && dup_str(&dst->biome, src->biome) &&
              dup_mem((void **)&dst->points, src->points,
                      (size_t)src->point_count * 2u * sizeof *src->points) &&
              dup_mem((void **)&dst->sample_index, src->sample_index,
                      (size_t)src->sample_count * sizeof *src->sample_index) &&
              dup_mem((void **)&dst->sample_height, src->sample_height,
                      (size_t)src->sample_count * sizeof *src->sample_height);
    if (!ok) stroke_free(dst);
    return ok;
}

/* Layers and strokes are released here, then trn_recipe_dispose releases the rest (it does not
 * own them in every version of the parser). */
static void recipe_free(trn_recipe *r)
{
    for (uint32_t k = 0; r->strokes && k < r->stroke_count; k++)
        stroke_free(&r->strokes[k]);
    free(r->strokes);
    for (uint32_t k = 0; r->layers && k < r->layer_count; k++) {
        free(r->layers[k].id);
        free(r->layers[k].name);
    }
    free(r->layers);
    r->strokes = NULL;
    r->stroke_count = 0;
    r->layers = NULL;
    r->layer_count = 0;
    trn_recipe_dispose(r);
}

static bool recipe_copy(trn_recipe *d, const trn_recipe *s, bool with_strokes)
{
    memset(d, 0, sizeof *d);
    d->size_x = s->size_x;
    d->size_z = s->size_z;
    d->cells_x = s->cells_x;
    d->cells_z = s->cells_z;
    d->seed = s->seed;
    d->chunk_cells = s->chunk_cells;
    d->has_sea_level = s->has_sea_level;
    d->sea_level = s->sea_level;
    d->has_snow_line = s->has_snow_line;
    d->snow_line = s->snow_line;
    d->has_layers = s->has_layers;
    d->has_preset_version = s->has_preset_version;
    d->preset_version = s->preset_version;
    bool ok = dup_str(&d->default_landform, s->default_landform) &&
              dup_str(&d->default_biome, s->default_biome) &&
              dup_str(&d->palette_json, s->palette_json) &&
              dup_str(&d->graph_json, s->graph_json) && dup_str(&d->preset_id, s->preset_id) &&
              dup_str(&d->base_dir, s->base_dir);
    d->model = trn_rcp_model_ref(s->model); /* immutable: copies share the graph read once */
    if (ok && s->landform_count) {
        d->landforms = calloc(s->landform_count, sizeof *d->landforms);
        ok = d->landforms != NULL;
        for (uint32_t k = 0; ok && k < s->landform_count; k++) {
            d->landforms[k] = s->landforms[k];
            d->landform_count = k + 1;
            d->landforms[k].evolution = NULL;
            ok = dup_str(&d->landforms[k].name, s->landforms[k].name) &&
                 dup_str(&d->landforms[k].evolution, s->landforms[k].evolution);
        }
    }
    if (ok && s->biome_count) {
        d->biomes = calloc(s->biome_count, sizeof *d->biomes);
        ok = d->biomes != NULL;
        for (uint32_t k = 0; ok && k < s->biome_count; k++) {
            d->biomes[k] = s->biomes[k];
            d->biomes[k].name = d->biomes[k].material = d->biomes[k].landform = NULL;
            d->biome_count = k + 1;
            ok = dup_str(&d->biomes[k].name, s->biomes[k].name) &&
                 dup_str(&d->biomes[k].material, s->biomes[k].material) &&
                 dup_str(&d->biomes[k].landform, s->biomes[k].landform);
        }
    }
    if (ok && s->rule_count) {
        d->rules = calloc(s->rule_count, sizeof *d->rules);
        ok = d->rules != NULL;
        for (uint32_t k = 0; ok && k < s->rule_count; k++) {
            d->rules[k] = s->rules[k];
            d->rules[k].id = d->rules[k].biome = d->rules[k].layer = NULL;
            d->rule_count = k + 1;
            ok = dup_str(&d->rules[k].id, s->rules[k].id) &&
                 dup_str(&d->rules[k].biome, s->rules[k].biome) &&
                 dup_str(&d->rules[k].layer, s->rules[k].layer);
        }
    }
    if (ok && s->layer_count && s->layers) {
        d->layers = calloc(s->layer_count, sizeof *d->layers);
        ok = d->layers != NULL;
        for (uint32_t k = 0; ok && k < s->layer_count; k++) {
            d->layers[k] = s->layers[k];
            d->layers[k].id = d->layers[k].name = NULL;
            d->layer_count = k + 1;
            ok = dup_str(&d->layers[k].id, s->layers[k].id) &&
                 dup_str(&d->layers[k].name, s->layers[k].name);
        }
    }
    if (ok && with_strokes && s->stroke_count) {
        d->strokes = calloc(s->stroke_count, sizeof *d->strokes);
        ok = d->strokes != NULL;
        for (uint32_t k = 0; ok && k < s->stroke_count; k++) {
            ok = stroke_copy(&d->strokes[k], &s->strokes[k]);
            if (ok) d->stroke_count = k + 1;
        }
    }
    if (!ok) recipe_free(d);
    return ok;
}

static bool recipe_insert(trn_recipe *r, uint32_t at, const trn_stroke *s)
{
    trn_stroke *list = realloc(r->strokes, ((size_t)r->stroke_count + 1u) * sizeof *list);
    if (!list) return false;
    r->strokes = list;
    trn_stroke copy;
    if (!stroke_copy(&copy, s)) return false;
    memmove(list + at + 1, list + at, (size_t)(r->stroke_count - at) * sizeof *list);
    list[at] = copy;
    r->stroke_count++;
    return true;
}

static void recipe_remove(trn_recipe *r, uint32_t at)
{
    stroke_free(&r->strokes[at]);
    memmove(r->strokes + at, r->strokes + at + 1,
            (size_t)(r->stroke_count - at - 1u) * sizeof *r->strokes);
    r->stroke_count--;
}

/* ---- history ---- */

static void entry_free(hist_entry *e)
{
    stroke_free(&e->stroke);
    for (int k = 0; k < 2; k++) {
        free(e->h[k]);
        free(e->b[k]);
        free(e->s[k]);
        free(e->x[k]);
        free(e->r[k]);
    }
    memset(e, 0, sizeof *e);
}

static size_t box_count(const trn_box *b)
{
    return trn_box_empty(b) ? 0 : (size_t)(b->i1 - b->i0 + 1) * (size_t)(b->j1 - b->j0 + 1);
}

static bool entry_alloc(hist_entry *e)
{
    const size_t n = box_count(&e->box) ? box_count(&e->box) : 1u;
    for (int k = 0; k < 2; k++) {
        e->h[k] = malloc(n * sizeof(float));
        e->b[k] = malloc(n);
        e->s[k] = malloc(n);
        e->x[k] = malloc(n);
        e->r[k] = malloc(n * sizeof(int16_t));
        if (!e->h[k] || !e->b[k] || !e->s[k] || !e->x[k] || !e->r[k]) return false;
    }
    return true;
}

/* Copy the session's samples of the entry's box into side k (save) or back (restore). */
static void entry_window(trn_session *ss, hist_entry *e, int k, bool save)
{
    const trn_box b = e->box;
    if (trn_box_empty(&b)) return;
    const size_t nx = (size_t)ss->recipe.cells_x + 1u, bw = (size_t)(b.i1 - b.i0 + 1);
    trn_generated *g = &ss->gen;
    for (int64_t j = b.j0; j <= b.j1; j++) {
        const size_t at = (size_t)j * nx + (size_t)b.i0, w = (size_t)(j - b.j0) * bw;
        if (save) {
            memcpy(e->h[k] + w, g->field.heights + at, bw * sizeof(float));
            memcpy(e->b[k] + w, g->biomes.values + at, bw);
            memcpy(e->s[k] + w, g->sources + at, bw);
            memcpy(e->r[k] + w, g->rule_index + at, bw * sizeof(int16_t));
            if (g->exclusion)
                memcpy(e->x[k] + w, g->exclusion + at, bw);
            else
                memset(e->x[k] + w, 0, bw);
        } else {
            memcpy(g->field.heights + at, e->h[k] + w, bw * sizeof(float));
            memcpy(g->biomes.values + at, e->b[k] + w, bw);
            memcpy(g->sources + at, e->s[k] + w, bw);
            memcpy(g->rule_index + at, e->r[k] + w, bw * sizeof(int16_t));
            if (g->exclusion) memcpy(g->exclusion + at, e->x[k] + w, bw);
        }
    }
}

static void history_clear(trn_session *ss)
{
    for (uint32_t k = 0; k < ss->hist_count; k++)
        entry_free(&ss->hist[k]);
    free(ss->hist);
    ss->hist = NULL;
    ss->hist_count = ss->hist_pos = ss->hist_cap = 0;
}

/* ---- chunks ---- */

void trn_chunk_set_dispose(trn_chunk_set *set)
{
    if (!set) return;
    free(set->changed);
    memset(set, 0, sizeof *set);
}

/* Chunks holding a sample of box: a sample on a chunk boundary belongs to both chunks. */
static trn_status chunks_report(const trn_recipe *r, trn_box box, trn_chunk_set *out,
                                trn_error *err)
{
    if (!out) return TRN_OK;
    memset(out, 0, sizeof *out);
    const uint32_t cc = r->chunk_cells ? r->chunk_cells : 1u;
    out->chunks_x = (r->cells_x + cc - 1u) / cc;
    out->chunks_z = (r->cells_z + cc - 1u) / cc;
    out->changed = calloc((size_t)out->chunks_x * out->chunks_z, 1);
    if (!out->changed) return oom(err, "the chunk set");
    if (trn_box_empty(&box)) return TRN_OK;
    const int64_t cx0 = box.i0 > 0 ? (box.i0 - 1) / cc : 0,
                  cz0 = box.j0 > 0 ? (box.j0 - 1) / cc : 0;
    int64_t cx1 = box.i1 / cc, cz1 = box.j1 / cc;
    if (cx1 >= out->chunks_x) cx1 = out->chunks_x - 1;
    if (cz1 >= out->chunks_z) cz1 = out->chunks_z - 1;
    for (int64_t cz = cz0; cz <= cz1; cz++)
        for (int64_t cx = cx0; cx <= cx1; cx++) {
            out->changed[(size_t)cz * out->chunks_x + (size_t)cx] = 1;
            out->changed_count++;
        }
    return TRN_OK;
}

/* ---- placements and roles ---- */

static void derived_dispose(derived *d)
{
    trn_instances_dispose(&d->base);
    trn_scatter_view_dispose(&d->view);
    trn_generated_scatter_env_dispose(&d->env);
    free(d->accumulation);
    free(d->moisture);
    free(d->snow);
    free(d->water_low);
    memset(d, 0, sizeof *d);
}

/* Point the placement environment at the session's result: its field lives in the session,
 * and the exclusion mask comes and goes with the exclusion strokes. */
static void derived_bind(derived *d, const trn_generated *gen)
{
    if (!d->palette) return;
    d->env.env.field = &gen->field;
    d->env.env.biome = gen->biomes.values;
    d->env.env.water_distance = gen->water_distance;
    d->env.env.exclusion = gen->exclusion;
}

static void roles_input(const derived *d, const trn_generated *gen, const trn_recipe *r,
                        const uint32_t *accumulation, trn_roles_input *in)
{
    memset(in, 0, sizeof *in);
    in->field = &gen->field;
    in->transport = gen->transport;
    in->accumulation = accumulation;
    in->moisture = d->moisture;
    in->wet = gen->has_water ? gen->water.wet : NULL;
    in->water_distance = gen->water_distance;
    in->biomes = gen->biomes.values;
    in->allow_snow = d->snow;
    in->allow_snow_count = r->biome_count;
}

/* Flow accumulation of the result's current surface (malloc'd into *out). */
static trn_status accumulation_of(const trn_generated *gen, uint32_t **out, trn_error *err)
{
    trn_drainage dr;
    trn_status st = trn_drainage_compute(&gen->field, gen->sea_level, &dr, NULL, NULL, err);
    if (st) return st;
    *out = dr.accumulation;
    dr.accumulation = NULL;
    trn_drainage_dispose(&dr);
    return TRN_OK;
}

static uint32_t chunk_cells_of(const trn_recipe *r)
{
    return r->chunk_cells ? r->chunk_cells : 1u;
}

/* Set up d for a fresh result (generated with the session's options): candidates, view and
 * environment when the options carry a palette; roles' inputs when they ask for roles. */
static trn_status derived_init(derived *d, const trn_generated *gen, const trn_recipe *r,
                               const trn_generate_options *o, trn_error *err)
{
    memset(d, 0, sizeof *d);
    trn_status st = TRN_OK;
    if (o->palette) {
        d->palette = o->palette;
        /* The graph's candidates when it placed them before the layers, else the placements. */
        const trn_instances *src = gen->scatter_from_graph ? &gen->scatter_base : &gen->instances;
        d->base.count = src->count;
        d->base.items = malloc((src->count ? src->count : 1u) * sizeof *d->base.items);
        if (!d->base.items) {
            derived_dispose(d);
            return oom(err, "the placement candidates");
        }
        if (src->count) memcpy(d->base.items, src->items, src->count * sizeof *src->items);
        if ((st = trn_scatter_view_init(&d->base, &d->view, err)) ||
            (st = trn_generated_scatter_env_init(gen, r, o->palette, &d->env, err))) {
            derived_dispose(d);
            return st;
        }
        derived_bind(d, gen);
        /* Graph candidates were placed before the layers: filter them on the final surface. */
        if (gen->scatter_from_graph &&
            (st = trn_scatter_refilter_window(d->palette, &d->base, &d->env.env, 0.0, 0.0,
                                              r->size_x, r->size_z, &d->view, NULL, err))) {
            derived_dispose(d);
            return st;
        }
    }
    {
        /* Where an edit can change what is wet: below the highest level of the bodies (any
         * height with a river), or below the sea level when the sea is inferred from it. */
        d->water_by_level = true;
        d->water_top = gen->has_water || gen->has_biome_water ? -HUGE_VAL : gen->sea_level;
        for (int w = 0; w < 2; w++) {
            const trn_water *water = w ? &gen->biome_water : &gen->water;
            if (!(w ? gen->has_biome_water : gen->has_water)) continue;
            for (uint32_t b = 0; b < water->body_count; b++) {
                const trn_water_body *wb = &water->bodies[b];
                if (wb->kind == TRN_WATER_RIVER) d->water_by_level = false;
                if (wb->level > d->water_top) d->water_top = wb->level;
            }
        }
        if (d->water_by_level) {
            const size_t n = trn_field_sample_count(&gen->field);
            d->water_low = malloc(n ? n : 1u);
            if (!d->water_low) {
                derived_dispose(d);
                return oom(err, "the samples below the water");
            }
            for (size_t k = 0; k < n; k++)
                d->water_low[k] = (double)gen->field.heights[k] < d->water_top;
        }
    }
    if (o->roles) {
        d->roles = true;
        trn_recipe_roles_params(r, &d->params);
        d->params.threads = o->threads;
        const size_t nx = (size_t)r->cells_x + 1u, nz = (size_t)r->cells_z + 1u;
        d->moisture = malloc(nx * nz * sizeof *d->moisture);
        d->snow = calloc(r->biome_count ? r->biome_count : 1u, sizeof *d->snow);
        if (!d->moisture || !d->snow) {
            derived_dispose(d);
            return oom(err, "the surface roles' inputs");
        }
        /* Bit for bit the moisture trn_generated_classify_roles reads. */
        for (size_t j = 0; j < nz; j++)
            trn_moisture_row(r->seed, gen->field.size_x, gen->field.cells_x,
                             (double)j * gen->field.size_z / (double)gen->field.cells_z,
                             d->moisture + j * nx);
        for (uint32_t b = 0; b < r->biome_count; b++)
            d->snow[b] = r->biomes[b].allow_snow;
        if ((st = accumulation_of(gen, &d->accumulation, err))) {
            derived_dispose(d);
            return st;
        }
    }
    return TRN_OK;
}

static uint64_t placed_count(const trn_scatter_view *v)
{
    uint64_t n = 0;
    for (size_t k = 0; k < v->count; k++)
        n += v->blocked[k] == 0;
    return n;
}

/* Whether an edit of box's samples can change the water: always with rivers (their surfaces
 * follow the bed), else when a sample is below the highest level now or was before (marks
 * are brought up to date for the box). */
static bool water_touched(derived *d, const trn_field *f, trn_box box)
{
    if (!d->water_by_level) return true;
    if (trn_box_empty(&box)) return false;
    const size_t nx = (size_t)f->cells_x + 1u;
    bool touched = false;
    for (int64_t j = box.j0; j <= box.j1; j++)
        for (int64_t i = box.i0; i <= box.i1; i++) {
            const size_t k = (size_t)j * nx + (size_t)i;
            const uint8_t low = (double)f->heights[k] < d->water_top;
            touched = touched || low || d->water_low[k];
            d->water_low[k] = low;
        }
    return touched;
}

/* Bring roles and placements up to date after the samples of box changed (heights: their
 * heights too) and fill ss->last. Nothing is written when the drainage fails; a later failure
 * (out of memory) is left to the caller, which restores the surface and calls this again. */
/* Resolve water again on the edited ground; *changed is set when its wet samples differ. */
static trn_status refresh_water(trn_water *water, const trn_field *field, int threads,
                                bool *changed, trn_error *err)
{
    trn_water fresh;
    const trn_water_resolve_options wo = {threads};
    trn_status st = trn_water_refresh(water, field, &wo, &fresh, err);
    if (st) return st;
    const size_t n = trn_field_sample_count(field);
    if ((water->wet == NULL) != (fresh.wet == NULL) ||
        (water->wet && memcmp(water->wet, fresh.wet, n) != 0))
        *changed = true;
    trn_water_dispose(water);
    *water = fresh;
    return TRN_OK;
}

/* The distance to water measured again, as a full generation measures it on the final surface;
 * the samples whose distance changed get their biomes again. *spread: their box. */
static trn_status redistance(trn_session *ss, trn_box *spread, trn_error *err)
{
    trn_generated *gen = &ss->gen;
    const size_t n = trn_field_sample_count(&gen->field);
    float *old = malloc(n * sizeof *old);
    if (!old) return oom(err, "the previous water distances");
    memcpy(old, gen->water_distance, n * sizeof *old);
    trn_status st = trn_generated_water_distance(gen, NULL, err);
    if (st) {
        memcpy(gen->water_distance, old, n * sizeof *old);
        free(old);
        return st;
    }
    const size_t nx = (size_t)gen->field.cells_x + 1u;
    for (size_t k = 0; k < n; k++)
        if (memcmp(&old[k], &gen->water_distance[k], sizeof *old) != 0) {
            const trn_box one = {(int64_t)(k % nx), (int64_t)(k / nx), (int64_t)(k % nx),
                                 (int64_t)(k / nx)};
            *spread = trn_box_union(*spread, one);
        }
    free(old);
    if (trn_box_empty(spread)) return TRN_OK;
    trn_replay_plan plan;
    if ((st = trn_replay_plan_make(&ss->recipe, &plan, err))) return st;
    st = trn_generated_biomes_box(&ss->recipe, &plan, gen, *spread, err);
    trn_replay_plan_dispose(&plan);
    return st;
}

static trn_status derived_update(trn_session *ss, trn_box box, bool heights, trn_session_edit *out,
                                 trn_box *spread_out, trn_error *err)
{
    derived *d = &ss->d;
    const trn_recipe *r = &ss->recipe;
    trn_session_edit last;
    memset(&last, 0, sizeof last);
    memset(out, 0, sizeof *out);
    if (spread_out) *spread_out = trn_box_none();
    trn_status st = TRN_OK;
    /* As a full generation settles its water on the final surface and measures the distance to
     * it there, so does every edit; the biomes whose distance moved follow (spread). */
    trn_generated *gen = &ss->gen;
    trn_box spread = trn_box_none();
    const bool inferred = !gen->has_water && !gen->has_biome_water;
    const uint64_t ground = heights && !inferred ? trn_water_ground_hash(&gen->field) : 0;
    const bool moved = heights && (inferred || (gen->has_water && gen->water.ground_hash != ground) ||
                                   (gen->has_biome_water && gen->biome_water.ground_hash != ground));
    if (moved) {
        if (water_touched(d, &gen->field, box)) {
            bool wet_changed = inferred;
            const int t = ss->options.threads;
            if (gen->has_water &&
                (st = refresh_water(&gen->water, &gen->field, t, &wet_changed, err)))
                return st;
            if (gen->has_biome_water &&
                (st = refresh_water(&gen->biome_water, &gen->field, t, &wet_changed, err)))
                return st;
            if (wet_changed && (st = redistance(ss, &spread, err))) return st;
        } else {
            if (gen->has_water) gen->water.ground_hash = ground;
            if (gen->has_biome_water) gen->biome_water.ground_hash = ground;
        }
    }
    if (spread_out) *spread_out = spread;
    box = trn_box_union(box, spread);
    derived_bind(d, &ss->gen);
    if (d->roles) {
        uint32_t *acc = NULL;
        trn_box win = box;
        if (heights) {
            /* Drainage is not local: an edit can reroute flow far downstream. */
            if ((st = accumulation_of(&ss->gen, &acc, err))) return st;
            const size_t nx = (size_t)r->cells_x + 1u, nz = (size_t)r->cells_z + 1u;
            for (size_t j = 0; j < nz; j++) {
                const uint32_t *a = acc + j * nx, *b = d->accumulation + j * nx;
                for (size_t i = 0; i < nx; i++)
                    if (a[i] != b[i]) {
                        const trn_box one = {(int64_t)i, (int64_t)j, (int64_t)i, (int64_t)j};
                        win = trn_box_union(win, one);
                    }
            }
        }
        trn_roles_chunk_grid(r->cells_x, r->cells_z, chunk_cells_of(r),
                             &last.roles_changed.chunks_x, &last.roles_changed.chunks_z);
        last.roles_changed.changed =
            calloc((size_t)last.roles_changed.chunks_x * last.roles_changed.chunks_z, 1);
        if (!last.roles_changed.changed) {
            free(acc);
            return oom(err, "the changed role chunks");
        }
        trn_roles_input in;
        roles_input(d, &ss->gen, r, acc ? acc : d->accumulation, &in);
        if (!trn_box_empty(&win))
            st = trn_roles_classify_window(
                &in, &d->params, (uint32_t)win.i0, (uint32_t)win.j0, (uint32_t)win.i1 + 1u,
                (uint32_t)win.j1 + 1u, chunk_cells_of(r), ss->gen.roles, last.roles_changed.changed,
                &last.roles_changed.changed_count, err);
        if (st) {
            free(acc);
            trn_chunk_set_dispose(&last.roles_changed);
            return st;
        }
        if (acc) {
            free(d->accumulation);
            d->accumulation = acc;
        }
    }
    if (d->palette) {
        const uint64_t before = placed_count(&d->view);
        size_t flips = 0;
        if (!trn_box_empty(&box)) {
            const double dx = r->size_x / (double)r->cells_x, dz = r->size_z / (double)r->cells_z;
            st = trn_scatter_refilter_window(d->palette, &d->base, &d->env.env, (double)box.i0 * dx,
                                             (double)box.j0 * dz, (double)box.i1 * dx,
                                             (double)box.j1 * dz, &d->view, &flips, err);
        }
        if (st) {
            trn_chunk_set_dispose(&last.roles_changed);
            return st;
        }
        const uint64_t after = placed_count(&d->view);
        /* flips = removed + restored, after - before = restored - removed. */
        last.placements = after;
        last.placements_restored = ((uint64_t)flips + after - before) / 2u;
        last.placements_removed = (uint64_t)flips - last.placements_restored;
        ss->instances_stale = ss->instances_stale || flips > 0 || !trn_box_empty(&box);
    }
    *out = last;
    return TRN_OK;
}

/* Make edit the session's last edit (the previous one's chunk set is released). */
static void last_set(trn_session *ss, trn_session_edit *edit)
{
    trn_chunk_set_dispose(&ss->last.roles_changed);
    if (edit)
        ss->last = *edit;
    else
        memset(&ss->last, 0, sizeof ss->last);
}

/* After a failed edit put back what the derived state was for the restored surface. */
static void derived_restore(trn_session *ss, trn_box box, bool heights)
{
    trn_session_edit tmp;
    if (derived_update(ss, box, heights, &tmp, NULL, NULL) == TRN_OK)
        trn_chunk_set_dispose(&tmp.roles_changed);
}

const trn_session_edit *trn_session_last_edit(const trn_session *ss)
{
    return ss ? &ss->last : NULL;
}

trn_status trn_session_instances(const trn_session *ss, trn_instances *out, trn_error *err)
{
    if (!out) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "session: no output");
    memset(out, 0, sizeof *out);
    if (!ss) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "session: no session");
    if (!ss->d.palette) return TRN_OK;
    return trn_scatter_view_collect(&ss->d.base, &ss->d.view, out, err);
}

const uint8_t *trn_session_roles(const trn_session *ss)
{
    return ss && ss->d.roles ? ss->gen.roles : NULL;
}

/* ---- lifecycle ---- */

static int threads_of(const trn_generate_options *o)
{
    return o ? o->threads : 0;
}

trn_status trn_session_new(const trn_recipe *recipe, const trn_generate_options *options,
                           trn_session **out, trn_progress_fn progress, void *user, trn_error *err)
{
    if (!out) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "session: no output");
    *out = NULL;
    if (!recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "session: no recipe");
    trn_session *ss = calloc(1, sizeof *ss);
    if (!ss) return oom(err, "the session");
    ss->options.threads = threads_of(options);
    ss->options.quality = options ? options->quality : TRN_EROSION_FINAL;
    ss->options.cache = options ? options->cache : NULL;
    ss->options.max_work = options ? options->max_work : 0;
    ss->options.max_memory = options ? options->max_memory : 0;
    ss->options.palette = options ? options->palette : NULL;
    ss->options.max_placements = options ? options->max_placements : 0;
    ss->options.roles = options ? options->roles : false;
    if (!ss->options.cache) {
        /* The session's own: small enough for one terrain's chain of results. */
        trn_status cst = trn_graph_cache_new(NULL, (size_t)1 << 30, &ss->own_cache, err);
        if (cst) {
            free(ss);
            return cst;
        }
        ss->options.cache = ss->own_cache;
    }
    if (!recipe_copy(&ss->recipe, recipe, true)) {
        trn_graph_cache_free(ss->own_cache);
        free(ss);
        return oom(err, "the recipe copy");
    }
    trn_status st = trn_recipe_generate_with(&ss->recipe, &ss->options, NULL, &ss->gen, &ss->keep,
                                             progress, user, err);
    if (!st && (st = derived_init(&ss->d, &ss->gen, &ss->recipe, &ss->options, err))) {
        trn_generated_dispose(&ss->gen);
        trn_replay_keep_dispose(&ss->keep);
    }
    if (st) {
        recipe_free(&ss->recipe);
        trn_graph_cache_free(ss->own_cache);
        free(ss);
        return st;
    }
    ss->last.placements = ss->d.palette ? placed_count(&ss->d.view) : 0u;
    *out = ss;
    return TRN_OK;
}

void trn_session_free(trn_session *ss)
{
    if (!ss) return;
    history_clear(ss);
    derived_dispose(&ss->d);
    last_set(ss, NULL);
    trn_generated_dispose(&ss->gen);
    trn_replay_keep_dispose(&ss->keep);
    recipe_free(&ss->recipe);
    trn_graph_cache_free(ss->own_cache);
    free(ss);
}

const trn_recipe *trn_session_recipe(const trn_session *ss)
{
    return ss ? &ss->recipe : NULL;
}

const trn_generated *trn_session_result(const trn_session *ss)
{
    if (!ss) return NULL;
    if (ss->key_stale) {
        /* Sessions are only ever allocated by trn_session_new (never const objects), so the
         * lazily refreshed key may be written through this pointer. */
        trn_session *w = (trn_session *)(uintptr_t)ss;
        uint64_t key = 0;
        /* Every recipe a session holds has been validated (by the generation that opened or
         * regenerated it, by the stroke that changed it, or as the state an undo or redo
         * returns to), so the key is computed without validating it again. */
        if (trn_rcp_cache_key_of_valid(&w->recipe, &key, NULL) == TRN_OK) {
            w->gen.cache_key = key;
            w->key_stale = false;
        }
    }
    if (ss->instances_stale) {
        /* The same lazy refresh for the placements (a copy of the view's placed candidates). */
        trn_session *w = (trn_session *)(uintptr_t)ss;
        trn_instances fresh;
        if (trn_scatter_view_collect(&w->d.base, &w->d.view, &fresh, NULL) == TRN_OK) {
            trn_instances_dispose(&w->gen.instances);
            w->gen.instances = fresh;
            w->instances_stale = false;
        }
    }
    return &ss->gen;
}

const trn_field *trn_session_base(const trn_session *ss)
{
    return ss ? &ss->keep.base : NULL;
}

bool trn_session_can_undo(const trn_session *ss)
{
    return ss && ss->hist_pos > 0;
}

bool trn_session_can_redo(const trn_session *ss)
{
    return ss && ss->hist_pos < ss->hist_count;
}

/* ---- applying a stroke ---- */

static trn_status check_stroke(const trn_session *ss, const trn_stroke *s, trn_error *err)
{
    const char *kind = (unsigned)s->kind < (unsigned)TRN_STROKE_KIND_COUNT ? "" : "unknown ";
    if (*kind)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stroke.type: expected a stroke kind, found %d", (int)s->kind);
    if (s->kind == TRN_STROKE_PROTECT) {
        if (s->sample_count && (!s->sample_index || !s->sample_height))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.samples: %u samples without their arrays",
                                 s->sample_count);
        const uint64_t total = ((uint64_t)s->grid_cells_x + 1u) * ((uint64_t)s->grid_cells_z + 1u);
        for (uint32_t k = 0; k < s->sample_count; k++) {
            if (s->sample_index[k] >= total)
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "stroke.samples[%u]: expected an index below %llu, found "
                                     "%u",
                                     k, (unsigned long long)total, s->sample_index[k]);
            if (!isfinite(s->sample_height[k]))
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "stroke.samples[%u]: expected a finite height", k);
        }
    } else {
        if (!(s->radius > 0.0) || !isfinite(s->radius))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.radius: expected a number > 0, found %g", s->radius);
        if (!(s->falloff >= 0.0 && s->falloff <= 1.0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.falloff: expected a number 0..1, found %g", s->falloff);
        const bool blend = s->kind != TRN_STROKE_RAISE && s->kind != TRN_STROKE_LOWER;
        if (!isfinite(s->strength) || (blend && !(s->strength >= 0.0 && s->strength <= 1.0)))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.strength: expected %s, found %g",
                                 blend ? "a number 0..1" : "a finite number", s->strength);
        if (s->kind == TRN_STROKE_FLATTEN && !isfinite(s->target_height))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.target_height: expected a finite number");
        if (!s->point_count || !s->points)
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.points: %u points without their array", s->point_count);
        for (uint32_t p = 0; p < 2u * s->point_count; p++)
            if (!isfinite(s->points[p]))
                return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                     "stroke.points[%u]: expected finite coordinates", p / 2u);
        if (s->kind == TRN_STROKE_REGION &&
            (!s->biome || trn_recipe_find_biome(&ss->recipe, s->biome) < 0))
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "stroke.biome: expected a biome of this recipe, found \"%s\"",
                                 s->biome ? s->biome : "(none)");
    }
    if (trn_replay_stroke_layer(&ss->recipe, s) < 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stroke.layer: no layer \"%s\" of the group holding %s strokes",
                             s->layer ? s->layer : "(default)",
                             s->kind == TRN_STROKE_REGION      ? "region"
                             : s->kind == TRN_STROKE_EXCLUSION ? "exclusion"
                             : s->kind == TRN_STROKE_PROTECT   ? "protect"
                                                               : "sculpt");
    return TRN_OK;
}

/* Height-changing stamps' boxes, for the dependency walk (regions without a landform of their
 * own change no height). */
static bool changes_heights(const trn_replay_plan *plan, const trn_stroke *s, uint32_t index)
{
    if (s->kind == TRN_STROKE_EXCLUSION) return false;
    if (s->kind == TRN_STROKE_REGION) return plan->landform[index] >= 0;
    return true;
}

/* Samples whose final height can differ once stroke at position pos is in: its own box, grown by
 * every later smooth stamp that reads a changed sample. */
static trn_box forward_box(const trn_recipe *r, const trn_replay_plan *plan, uint32_t pos,
                           trn_box c)
{
    const trn_grid grid = trn_replay_grid(r);
    for (uint32_t o = pos + 1; o < plan->stage_end[2] && !trn_box_empty(&c); o++) {
        const trn_stroke *k = &r->strokes[plan->order[o]];
        if (k->kind != TRN_STROKE_SMOOTH) continue;
        for (uint32_t p = 0; p < k->point_count; p++) {
            const trn_box b =
                trn_stamp_box(&grid, k->points[2 * p], k->points[2 * p + 1], k->radius);
            c = trn_box_union(c, trn_box_intersect(trn_box_grow(c, 1), b));
        }
    }
    return c;
}

/* The window of the base a replay needs so that box d comes out exact: each smooth stamp reads
 * one sample around what it writes, so walk them backwards growing the window. */
static trn_box backward_box(const trn_recipe *r, const trn_replay_plan *plan, trn_box d)
{
    const trn_grid grid = trn_replay_grid(r);
    const trn_box all = trn_grid_box(&grid);
    for (uint32_t o = plan->stage_end[2]; o-- > 0;) {
        const trn_stroke *k = &r->strokes[plan->order[o]];
        if (k->kind != TRN_STROKE_SMOOTH) continue;
        for (uint32_t p = k->point_count; p-- > 0;) {
            const trn_box b =
                trn_stamp_box(&grid, k->points[2 * p], k->points[2 * p + 1], k->radius);
            const trn_box x = trn_box_intersect(d, b);
            if (!trn_box_empty(&x))
                d = trn_box_intersect(trn_box_union(d, trn_box_grow(x, 1)), all);
        }
    }
    return d;
}

/* Keep the exclusion mask allocated exactly when enabled exclusion strokes exist, as a full
 * generation would. */
static trn_status sync_exclusion(trn_session *ss, const trn_replay_plan *plan, trn_error *err)
{
    const bool want = trn_replay_has_exclusions(plan);
    if (want && !ss->gen.exclusion) {
        ss->gen.exclusion = calloc(trn_field_sample_count(&ss->gen.field), 1);
        if (!ss->gen.exclusion) return oom(err, "the exclusion mask");
    } else if (!want && ss->gen.exclusion) {
        free(ss->gen.exclusion);
        ss->gen.exclusion = NULL;
    }
    return TRN_OK;
}

static trn_status push_entry(trn_session *ss, hist_entry *e, trn_error *err)
{
    for (uint32_t k = ss->hist_pos; k < ss->hist_count; k++)
        entry_free(&ss->hist[k]);
    ss->hist_count = ss->hist_pos;
    if (ss->hist_count == ss->hist_cap) {
        uint32_t cap = ss->hist_cap ? ss->hist_cap * 2u : 16u;
        hist_entry *h = realloc(ss->hist, cap * sizeof *h);
        if (!h) return oom(err, "the history");
        ss->hist = h;
        ss->hist_cap = cap;
    }
    ss->hist[ss->hist_count++] = *e;
    ss->hist_pos = ss->hist_count;
    return TRN_OK;
}

trn_status trn_session_apply_stroke(trn_session *ss, const trn_stroke *stroke,
                                    trn_chunk_set *changed, trn_error *err)
{
    if (changed) memset(changed, 0, sizeof *changed);
    if (!ss || !stroke)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "session: no session or no stroke");
    trn_status st = check_stroke(ss, stroke, err);
    if (st) return st;
    trn_recipe *r = &ss->recipe;
    /* The end of its layer's strokes: after the last stroke of the same layer. */
    const int layer = trn_replay_stroke_layer(r, stroke);
    uint32_t at = r->stroke_count;
    for (uint32_t k = r->stroke_count; k-- > 0;)
        if (trn_replay_stroke_layer(r, &r->strokes[k]) == layer) {
            at = k + 1;
            break;
        }
    hist_entry e;
    memset(&e, 0, sizeof e);
    if (!stroke_copy(&e.stroke, stroke)) return oom(err, "the stroke");
    e.index = at;
    if (!recipe_insert(r, at, stroke)) {
        entry_free(&e);
        return oom(err, "the stroke");
    }
    trn_replay_plan plan;
    float *win_values = NULL;
    bool rederive = false;
    /* The recipe as a whole must still validate (stroke limits, ranges), as generation checks. */
    if ((st = trn_recipe_validate(r, err)) || (st = trn_replay_plan_make(r, &plan, err))) {
        recipe_remove(r, at);
        entry_free(&e);
        return st;
    }
    /* The strokes with this one must fit the work budget, as generation holds them. */
    if ((st = trn_replay_check_work(r, &plan, ss->options.max_work, err))) goto fail;
    const trn_grid grid = trn_replay_grid(r);
    const trn_box all = trn_grid_box(&grid);
    const trn_stroke *s = &r->strokes[at];
    const int32_t pos = plan.position[at];
    const int lf = plan.landform[at];
    if (pos >= 0 && lf >= 0 && !ss->keep.lf[lf] &&
        (st = trn_replay_landform_heights(r, lf, &ss->keep.base, ss->options.threads,
                                          ss->options.quality, &ss->keep.lf[lf], err)))
        goto fail;
    trn_box c = trn_box_none(), bio = trn_box_none(), ex = trn_box_none();
    if (pos >= 0) {
        const trn_box own = trn_box_intersect(trn_replay_stroke_box(r, s), all);
        if (changes_heights(&plan, s, at)) c = forward_box(r, &plan, (uint32_t)pos, own);
        bio = trn_box_intersect(trn_box_grow(c, 1), all);
        if (s->kind == TRN_STROKE_REGION) bio = trn_box_union(bio, own);
        if (s->kind == TRN_STROKE_EXCLUSION) ex = own;
    }
    e.box = trn_box_union(bio, ex);
    if (!entry_alloc(&e)) {
        st = oom(err, "the history");
        goto fail;
    }
    /* Replay the heights of the window c needs, from the base. */
    trn_window win;
    win.grid = grid;
    win.box = backward_box(r, &plan, c);
    const size_t nx = (size_t)r->cells_x + 1u;
    if (!trn_box_empty(&c)) {
        const size_t ww = (size_t)(win.box.i1 - win.box.i0 + 1);
        win_values = malloc(box_count(&win.box) * sizeof *win_values);
        if (!win_values) {
            st = oom(err, "the replay window");
            goto fail;
        }
        for (int64_t j = win.box.j0; j <= win.box.j1; j++)
            memcpy(win_values + (size_t)(j - win.box.j0) * ww,
                   ss->keep.base.heights + (size_t)j * nx + (size_t)win.box.i0,
                   ww * sizeof *win_values);
        win.values = win_values;
        if ((st = trn_replay_heights(r, &plan, ss->keep.lf, &win, err))) goto fail;
    }
    entry_window(ss, &e, 0, true);
    if ((st = sync_exclusion(ss, &plan, err))) goto fail;
    /* From here nothing fails but the biome window's allocation, which restores on failure. */
    if (!trn_box_empty(&c)) {
        const size_t ww = (size_t)(win.box.i1 - win.box.i0 + 1);
        for (int64_t j = c.j0; j <= c.j1; j++)
            memcpy(ss->gen.field.heights + (size_t)j * nx + (size_t)c.i0,
                   win_values + (size_t)(j - win.box.j0) * ww + (size_t)(c.i0 - win.box.i0),
                   (size_t)(c.i1 - c.i0 + 1) * sizeof *win_values);
    }
    if ((st = trn_generated_biomes_box(r, &plan, &ss->gen, bio, err))) {
        entry_window(ss, &e, 0, false);
        goto fail;
    }
    if (!trn_box_empty(&ex)) {
        trn_window m;
        m.grid = grid;
        m.box = ex;
        m.values = calloc(box_count(&ex), sizeof *m.values);
        if (!m.values) {
            entry_window(ss, &e, 0, false);
            st = oom(err, "the exclusion window");
            goto fail;
        }
        st = trn_replay_exclusion(r, &plan, &m, err);
        const size_t ww = (size_t)(ex.i1 - ex.i0 + 1);
        for (int64_t j = ex.j0; !st && j <= ex.j1; j++)
            for (int64_t i = ex.i0; i <= ex.i1; i++)
                ss->gen.exclusion[(size_t)j * nx + (size_t)i] =
                    trn_replay_quantise(m.values[(size_t)(j - ex.j0) * ww + (size_t)(i - ex.i0)]);
        free(m.values);
        if (st) {
            entry_window(ss, &e, 0, false);
            goto fail;
        }
    }
    entry_window(ss, &e, 1, true);
    e.heights = !trn_box_empty(&c);
    trn_session_edit last;
    trn_box spread;
    if ((st = derived_update(ss, e.box, e.heights, &last, &spread, err))) {
        entry_window(ss, &e, 0, false);
        rederive = true;
        goto fail;
    }
    if ((st = chunks_report(r, trn_box_union(e.box, spread), changed, err)) ||
        (st = push_entry(ss, &e, err))) {
        /* Put the surface and the recipe back as they were. */
        entry_window(ss, &e, 0, false);
        trn_chunk_set_dispose(changed);
        trn_chunk_set_dispose(&last.roles_changed);
        rederive = true;
        goto fail;
    }
    last_set(ss, &last);
    free(win_values);
    trn_replay_plan_dispose(&plan);
    ss->key_stale = true;
    return TRN_OK;
fail:
    free(win_values);
    trn_replay_plan_dispose(&plan);
    recipe_remove(r, at);
    const trn_box undo_box = e.box;
    const bool undo_heights = e.heights;
    entry_free(&e);
    if (trn_replay_plan_make(r, &plan, NULL) == TRN_OK) {
        (void)sync_exclusion(ss, &plan, NULL);
        trn_replay_plan_dispose(&plan);
    }
    if (rederive) derived_restore(ss, undo_box, undo_heights);
    return st;
}

static trn_status undo_redo(trn_session *ss, bool redo, trn_chunk_set *changed, trn_error *err)
{
    if (changed) memset(changed, 0, sizeof *changed);
    if (!ss || (redo ? !trn_session_can_redo(ss) : !trn_session_can_undo(ss)))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "session: nothing to %s",
                             redo ? "redo" : "undo");
    hist_entry *e = &ss->hist[redo ? ss->hist_pos : ss->hist_pos - 1u];
    trn_recipe *r = &ss->recipe;
    trn_chunk_set set;
    trn_status st = chunks_report(r, e->box, changed ? &set : NULL, err);
    if (st) return st;
    if (redo) {
        if (!recipe_insert(r, e->index, &e->stroke)) {
            if (changed) trn_chunk_set_dispose(&set);
            return oom(err, "the stroke");
        }
    } else {
        recipe_remove(r, e->index);
    }
    trn_replay_plan plan;
    st = trn_replay_plan_make(r, &plan, err);
    if (!st) {
        st = sync_exclusion(ss, &plan, err);
        trn_replay_plan_dispose(&plan);
    }
    if (st) {
        /* Put the recipe back; the surface has not changed yet. */
        if (redo)
            recipe_remove(r, e->index);
        else
            (void)recipe_insert(r, e->index, &e->stroke);
        if (changed) trn_chunk_set_dispose(&set);
        return st;
    }
    ss->key_stale = true;
    entry_window(ss, e, redo ? 1 : 0, false);
    trn_session_edit last;
    trn_box spread;
    if ((st = derived_update(ss, e->box, e->heights, &last, &spread, err))) {
        /* Back to the state before this call: the recipe, the exclusion mask's presence, then
         * the samples (which include the mask's), then what derives from them. */
        if (redo)
            recipe_remove(r, e->index);
        else
            (void)recipe_insert(r, e->index, &e->stroke);
        if (trn_replay_plan_make(r, &plan, NULL) == TRN_OK) {
            (void)sync_exclusion(ss, &plan, NULL);
            trn_replay_plan_dispose(&plan);
        }
        entry_window(ss, e, redo ? 0 : 1, false);
        derived_restore(ss, e->box, e->heights);
        if (changed) trn_chunk_set_dispose(&set);
        return st;
    }
    last_set(ss, &last);
    ss->hist_pos = redo ? ss->hist_pos + 1u : ss->hist_pos - 1u;
    if (changed && !trn_box_empty(&spread)) {
        /* Biomes moved beyond the stroke's box (the water moved): report those chunks too. */
        trn_chunk_set wider;
        if (chunks_report(r, trn_box_union(e->box, spread), &wider, NULL) == TRN_OK) {
            trn_chunk_set_dispose(&set);
            set = wider;
        }
    }
    if (changed) *changed = set;
    return TRN_OK;
}

trn_status trn_session_undo(trn_session *ss, trn_chunk_set *changed, trn_error *err)
{
    return undo_redo(ss, false, changed, err);
}

trn_status trn_session_redo(trn_session *ss, trn_chunk_set *changed, trn_error *err)
{
    return undo_redo(ss, true, changed, err);
}

/* ---- regenerating ---- */

static bool generation_enabled(const trn_recipe *r)
{
    for (uint32_t l = 0; r->layers && l < r->layer_count; l++)
        if (r->layers[l].group == TRN_LAYER_GENERATION) return r->layers[l].enabled;
    return true;
}

trn_status trn_session_regenerate(trn_session *ss, const trn_recipe *recipe, trn_edit_policy policy,
                                  trn_progress_fn progress, void *user, trn_error *err)
{
    if (!ss || !recipe)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "session: no session or no recipe");
    const bool same_grid =
        recipe->cells_x == ss->recipe.cells_x && recipe->cells_z == ss->recipe.cells_z &&
        recipe->size_x == ss->recipe.size_x && recipe->size_z == ss->recipe.size_z;
    trn_recipe copy;
    if (!recipe_copy(&copy, recipe, true)) return oom(err, "the recipe copy");
    /* The grid change from the session's grid to the recipe's goes through the policy
     * (refuse, keep radial strokes, clear), exactly as the command line applies it. */
    copy.size_x = ss->recipe.size_x;
    copy.size_z = ss->recipe.size_z;
    copy.cells_x = ss->recipe.cells_x;
    copy.cells_z = ss->recipe.cells_z;
    trn_status st = trn_recipe_change_grid(&copy, recipe->size_x, recipe->size_z, recipe->cells_x,
                                           recipe->cells_z, policy, err);
    if (st) {
        recipe_free(&copy);
        return st;
    }
    /* A disabled generation layer keeps the previous base (only possible on the same grid). */
    const trn_field *frozen = !generation_enabled(&copy) && same_grid ? &ss->keep.base : NULL;
    trn_generated gen;
    trn_replay_keep keep;
    st = trn_recipe_generate_with(&copy, &ss->options, frozen, &gen, &keep, progress, user, err);
    derived nd;
    if (!st && (st = derived_init(&nd, &gen, &copy, &ss->options, err))) {
        trn_generated_dispose(&gen);
        trn_replay_keep_dispose(&keep);
    }
    if (st) {
        recipe_free(&copy);
        return st;
    }
    history_clear(ss);
    derived_dispose(&ss->d);
    last_set(ss, NULL);
    ss->instances_stale = false;
    trn_generated_dispose(&ss->gen);
    trn_replay_keep_dispose(&ss->keep);
    recipe_free(&ss->recipe);
    ss->recipe = copy;
    ss->gen = gen;
    ss->keep = keep;
    ss->d = nd;
    derived_bind(&ss->d, &ss->gen); /* the field moved into the session */
    ss->last.placements = ss->d.palette ? placed_count(&ss->d.view) : 0u;
    ss->key_stale = false;
    return TRN_OK;
}
