/* Sessions: incremental strokes bit-identical to full regeneration (randomised, every kind,
 * several layers, layers toggled), changed chunks, undo/redo, regeneration keeping edits and
 * protection, frozen base, grid-change policies, cancel and failure leaving the state intact. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_helpers.h"
#include "terrane/layers.h"
#include "test.h"

static void parse(trn_recipe *r)
{
    CHECK_OK(trn_recipe_parse(lh_recipe_text, strlen(lh_recipe_text), "t.json", r, NULL, NULL));
}

/* A copy through the canonical form (which round-trips). */
static void copy_recipe(const trn_recipe *src, trn_recipe *dst)
{
    char *text = NULL;
    size_t size = 0;
    CHECK_OK(trn_recipe_canonical_json(src, &text, &size, NULL));
    CHECK_OK(trn_recipe_parse(text, size, "copy.json", dst, NULL, NULL));
    free(text);
}

static uint64_t full_hash(const trn_recipe *r)
{
    trn_generated g;
    trn_status st = trn_recipe_generate(r, NULL, &g, NULL, NULL, NULL);
    CHECK_OK(st);
    if (st) return 0;
    const uint64_t h = lh_hash(&g);
    trn_generated_dispose(&g);
    return h;
}

static uint64_t state = 0x9E3779B97F4A7C15ull;
static double rnd(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (double)(state >> 11) / 9007199254740992.0;
}

static size_t idx(uint32_t i, uint32_t j)
{
    return (size_t)j * 129u + i;
}

/* A random stroke of any kind, anywhere on (or a little off) the terrain; protect snapshots
 * record the current surface plus an offset on a 5x5 patch. */
static void random_stroke(trn_session *ss, trn_stroke *s, double *points, uint32_t *sidx, float *sh)
{
    const trn_recipe *r = trn_session_recipe(ss);
    memset(s, 0, sizeof *s);
    const int kind = (int)(rnd() * 7.0);
    s->kind = (trn_stroke_kind)kind;
    s->radius = 2.0 + rnd() * 24.0;
    s->falloff = rnd();
    s->strength = kind <= 1 ? rnd() * 6.0 : rnd();
    s->target_height = 20.0 + rnd() * 60.0;
    if (kind <= 3) s->layer = rnd() < 0.5 ? (char *)"sculpt" : (char *)"sculpt2";
    s->biome = rnd() < 0.5 ? (char *)"r" : (char *)"s";
    s->erase = rnd() < 0.3;
    s->point_count = 1u + (uint32_t)(rnd() * 3.0);
    const double x = -10.0 + rnd() * (r->size_x + 20.0), z = -10.0 + rnd() * (r->size_z + 20.0);
    for (uint32_t p = 0; p < s->point_count; p++) {
        points[2 * p] = x + 6.0 * p;
        points[2 * p + 1] = z - 3.0 * p;
    }
    s->points = points;
    if (s->kind == TRN_STROKE_PROTECT) {
        const trn_generated *g = trn_session_result(ss);
        const size_t nx = (size_t)r->cells_x + 1u;
        s->grid_cells_x = r->cells_x;
        s->grid_cells_z = r->cells_z;
        const uint32_t i0 = (uint32_t)(rnd() * (r->cells_x - 5)),
                       j0 = (uint32_t)(rnd() * (r->cells_z - 5));
        s->sample_count = 0;
        for (uint32_t j = j0; j < j0 + 5; j++)
            for (uint32_t i = i0; i < i0 + 5; i++) {
                sidx[s->sample_count] = (uint32_t)(j * nx + i);
                sh[s->sample_count++] = g->field.heights[j * nx + i] + 2.5f;
            }
        s->sample_index = sidx;
        s->sample_height = sh;
        s->points = NULL;
        s->point_count = 0;
    }
}

/* Every sample that changed (and, for heights, its 8 neighbours) lies in a reported chunk. */
static int chunk_misses(const trn_recipe *r, const trn_chunk_set *set, const trn_generated *before,
                        const trn_generated *after, uint32_t *changed_samples)
{
    int miss = 0;
    *changed_samples = 0;
    const uint32_t cc = r->chunk_cells;
    const size_t nx = (size_t)r->cells_x + 1u;
    for (uint32_t j = 0; j <= r->cells_z; j++)
        for (uint32_t i = 0; i <= r->cells_x; i++) {
            const size_t k = j * nx + i;
            const bool h = before->field.heights[k] != after->field.heights[k];
            const bool other = before->biomes.values[k] != after->biomes.values[k] ||
                               before->sources[k] != after->sources[k] ||
                               (after->exclusion && (before->exclusion ? before->exclusion[k]
                                                                       : 0) != after->exclusion[k]);
            if (!h && !other) continue;
            (*changed_samples)++;
            const int rr = h ? 1 : 0;
            for (int b = (int)j - rr; b <= (int)j + rr; b++)
                for (int a = (int)i - rr; a <= (int)i + rr; a++) {
                    if (a < 0 || b < 0 || a > (int)r->cells_x || b > (int)r->cells_z) continue;
                    for (uint32_t cz = 0; cz < set->chunks_z; cz++)
                        for (uint32_t cx = 0; cx < set->chunks_x; cx++)
                            if ((uint32_t)a >= cx * cc && (uint32_t)a <= cx * cc + cc &&
                                (uint32_t)b >= cz * cc && (uint32_t)b <= cz * cc + cc)
                                miss += !set->changed[cz * set->chunks_x + cx];
                }
        }
    return miss;
}

static void snapshot(const trn_generated *g, trn_generated *copy)
{
    const size_t n = trn_field_sample_count(&g->field);
    memset(copy, 0, sizeof *copy);
    copy->field.heights = malloc(n * sizeof(float));
    copy->biomes.values = malloc(n);
    copy->sources = malloc(n);
    memcpy(copy->field.heights, g->field.heights, n * sizeof(float));
    memcpy(copy->biomes.values, g->biomes.values, n);
    memcpy(copy->sources, g->sources, n);
    if (g->exclusion) {
        copy->exclusion = malloc(n);
        memcpy(copy->exclusion, g->exclusion, n);
    }
}

static void snapshot_free(trn_generated *c)
{
    free(c->field.heights);
    free(c->biomes.values);
    free(c->sources);
    free(c->exclusion);
}

/* steps random strokes on the recipe (grid changed when cells_x != 0), compared with full
 * regeneration every 6th stroke; layers toggled at a third and two thirds. */
static void random_session(double size_x, double size_z, uint32_t cells_x, uint32_t cells_z,
                           uint32_t chunk_cells, int steps)
{
    trn_recipe r;
    parse(&r);
    if (cells_x) {
        r.size_x = size_x;
        r.size_z = size_z;
        r.cells_x = cells_x;
        r.cells_z = cells_z;
        r.chunk_cells = chunk_cells;
    }
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    const uint32_t cc = trn_session_recipe(ss)->chunk_cells;
    const uint32_t want_chunks_x = (trn_session_recipe(ss)->cells_x + cc - 1u) / cc;
    int mismatches = 0, misses = 0, compared = 0;
    uint32_t kinds[TRN_STROKE_KIND_COUNT] = {0};
    for (int step = 0; step < steps; step++) {
        if (step == steps / 3 || step == 2 * steps / 3) {
            /* toggle the first sculpt layer, and the biome layer once: full regeneration */
            trn_recipe c;
            copy_recipe(trn_session_recipe(ss), &c);
            c.layers[2].enabled = !c.layers[2].enabled;
            if (step == 2 * steps / 3) c.layers[1].enabled = false;
            CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, NULL));
            trn_recipe_dispose(&c);
            CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
        }
        trn_stroke s;
        double points[6];
        uint32_t sidx[25];
        float sh[25];
        random_stroke(ss, &s, points, sidx, sh);
        trn_generated before;
        snapshot(trn_session_result(ss), &before);
        trn_chunk_set set;
        trn_error e;
        trn_error_clear(&e);
        const trn_status st = trn_session_apply_stroke(ss, &s, &set, &e);
        CHECK_OK(st);
        if (st) {
            fprintf(stderr, "  step %d: %s\n", step, e.message);
            snapshot_free(&before);
            break;
        }
        kinds[s.kind]++;
        uint32_t n_changed = 0;
        misses +=
            chunk_misses(trn_session_recipe(ss), &set, &before, trn_session_result(ss), &n_changed);
        uint32_t flagged = 0;
        for (uint32_t k = 0; k < set.chunks_x * set.chunks_z; k++)
            flagged += set.changed[k] != 0;
        CHECK_EQ_INT(flagged, set.changed_count);
        CHECK_EQ_INT(set.chunks_x, want_chunks_x);
        trn_chunk_set_dispose(&set);
        snapshot_free(&before);
        if (step % 6 == 5 || step < 12) {
            compared++;
            const uint64_t a = lh_hash(trn_session_result(ss)),
                           b = full_hash(trn_session_recipe(ss));
            if (a != b) {
                mismatches++;
                fprintf(stderr, "  step %d (kind %s): session and full generation differ\n", step,
                        trn_stroke_kind_name(s.kind));
            }
        }
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(misses, 0);
    CHECK(compared > steps / 6);
    for (int k = 0; k < TRN_STROKE_KIND_COUNT; k++)
        CHECK(kinds[k] > (uint32_t)steps / 20);
    CHECK(trn_session_recipe(ss)->stroke_count == (uint32_t)steps);
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    trn_session_free(ss);
}

static void test_incremental_equals_full(void)
{
    random_session(0, 0, 0, 0, 0, 360);
}

/* Cell sizes that are not whole numbers, a grid that is not square, chunks of 7 cells. */
static void test_incremental_odd_grid(void)
{
    random_session(300, 170, 97, 61, 7, 240);
}

static void test_undo_redo(void)
{
    trn_recipe r;
    parse(&r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    CHECK(!trn_session_can_undo(ss) && !trn_session_can_redo(ss));
    trn_chunk_set set;
    CHECK_STATUS(trn_session_undo(ss, &set, NULL), TRN_ERR_INVALID_ARGUMENT);
    enum { N = 40 };
    uint64_t hashes[N + 1];
    hashes[0] = lh_hash(trn_session_result(ss));
    for (int k = 0; k < N; k++) {
        trn_stroke s;
        double points[6];
        uint32_t sidx[25];
        float sh[25];
        random_stroke(ss, &s, points, sidx, sh);
        CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
        hashes[k + 1] = lh_hash(trn_session_result(ss));
    }
    for (int k = N; k > 0; k--) {
        CHECK(trn_session_can_undo(ss));
        CHECK_OK(trn_session_undo(ss, &set, NULL));
        trn_chunk_set_dispose(&set);
        CHECK(lh_hash(trn_session_result(ss)) == hashes[k - 1]);
        CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, (uint32_t)(k - 1));
    }
    CHECK(!trn_session_can_undo(ss));
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    for (int k = 0; k < N; k++) {
        CHECK_OK(trn_session_redo(ss, NULL, NULL));
        CHECK(lh_hash(trn_session_result(ss)) == hashes[k + 1]);
    }
    CHECK(!trn_session_can_redo(ss));
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    /* undo 5, then a new stroke drops the redo branch */
    for (int k = 0; k < 5; k++)
        CHECK_OK(trn_session_undo(ss, NULL, NULL));
    CHECK(trn_session_can_redo(ss));
    const double p[2] = {128, 128};
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = 30;
    s.strength = 4;
    s.falloff = 0.5;
    s.points = (double *)p;
    s.point_count = 1;
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    CHECK(!trn_session_can_redo(ss));
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, N - 5 + 1);
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    trn_session_free(ss);
}

static void test_chunks(void)
{
    trn_recipe r;
    parse(&r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    /* the middle of chunk (2, 2) (samples 32..48): one chunk */
    double p[2] = {80, 80};
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = 8;
    s.strength = 2;
    s.falloff = 0.5;
    s.points = p;
    s.point_count = 1;
    trn_chunk_set set;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &set, NULL));
    CHECK_EQ_INT(set.chunks_x, 8);
    CHECK_EQ_INT(set.chunks_z, 8);
    CHECK_EQ_INT(set.changed_count, 1);
    CHECK(set.changed && set.changed[2 * 8 + 2]);
    trn_chunk_set_dispose(&set);
    /* heights change on samples 28..30 only (x 56..60 of a radius 3.9 at x 58), yet the slope
     * border reaches sample 31 and the stamp box's margin sample 32, shared with chunk 2 */
    p[0] = 58;
    p[1] = 80;
    s.radius = 3.9;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &set, NULL));
    CHECK(set.changed && set.changed[2 * 8 + 1] && set.changed[2 * 8 + 2]);
    CHECK_EQ_INT(set.changed_count, 2);
    trn_chunk_set_dispose(&set);
    /* off the terrain: nothing changes, no chunk */
    p[0] = -100;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &set, NULL));
    CHECK_EQ_INT(set.changed_count, 0);
    trn_chunk_set_dispose(&set);
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    trn_session_free(ss);
}

static trn_stroke raise_at(double *p, double radius, double strength)
{
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = radius;
    s.strength = strength;
    s.falloff = 0.5;
    s.points = p;
    s.point_count = 1;
    return s;
}

static void test_regenerate_keeps_edits(void)
{
    trn_recipe r;
    parse(&r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    double p[2] = {128, 128};
    trn_stroke f = raise_at(p, 20, 1);
    f.kind = TRN_STROKE_FLATTEN;
    f.layer = (char *)"sculpt2";
    f.target_height = 55;
    CHECK_OK(trn_session_apply_stroke(ss, &f, NULL, NULL));
    /* protect a 4x4 patch at its current heights + 7 */
    uint32_t sidx[16];
    float sh[16];
    const trn_generated *g = trn_session_result(ss);
    for (uint32_t k = 0; k < 16; k++) {
        sidx[k] = (uint32_t)idx(20 + k % 4, 90 + k / 4);
        sh[k] = g->field.heights[sidx[k]] + 7.0f;
    }
    trn_stroke pr;
    memset(&pr, 0, sizeof pr);
    pr.kind = TRN_STROKE_PROTECT;
    pr.grid_cells_x = pr.grid_cells_z = 128;
    pr.sample_index = sidx;
    pr.sample_height = sh;
    pr.sample_count = 16;
    CHECK_OK(trn_session_apply_stroke(ss, &pr, NULL, NULL));
    /* a new seed */
    trn_recipe c;
    copy_recipe(trn_session_recipe(ss), &c);
    c.seed = 99;
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, NULL));
    trn_recipe_dispose(&c);
    g = trn_session_result(ss);
    CHECK_EQ_INT(trn_session_recipe(ss)->seed, 99);
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, 2);
    /* regeneration clears the history */
    CHECK(!trn_session_can_undo(ss));
    /* weight 1 within (1 - falloff) * radius = 10 units = 5 cells of the centre */
    int flat = 0, inner = 0, kept = 0;
    for (uint32_t j = 58; j <= 70; j++)
        for (uint32_t i = 58; i <= 70; i++) {
            const int di = (int)i - 64, dj = (int)j - 64;
            if (di * di + dj * dj > 25) continue;
            inner++;
            flat += fabs((double)g->field.heights[idx(i, j)] - 55.0) < 1e-4;
        }
    CHECK_EQ_INT(inner, 81);
    for (uint32_t k = 0; k < 16; k++)
        kept += g->field.heights[sidx[k]] == sh[k];
    CHECK_EQ_INT(flat, 81);
    CHECK_EQ_INT(kept, 16);
    /* later sculpting over protected samples leaves them */
    p[0] = 44;
    p[1] = 184;
    trn_stroke up = raise_at(p, 16, 9);
    up.layer = (char *)"sculpt2";
    CHECK_OK(trn_session_apply_stroke(ss, &up, NULL, NULL));
    g = trn_session_result(ss);
    kept = 0;
    for (uint32_t k = 0; k < 16; k++)
        kept += g->field.heights[sidx[k]] == sh[k];
    CHECK_EQ_INT(kept, 16);
    CHECK(g->field.heights[idx(22, 88)] != trn_session_base(ss)->heights[idx(22, 88)]);
    CHECK(lh_hash(g) == full_hash(trn_session_recipe(ss)));
    trn_session_free(ss);
}

static int cancel_at_half(double done, const char *stage, void *user)
{
    (void)stage;
    (void)user;
    return done >= 0.5 ? TRN_CANCEL : TRN_CONTINUE;
}

static void test_cancel_and_failure_keep_state(void)
{
    trn_recipe r;
    parse(&r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    if (!ss) {
        trn_recipe_dispose(&r);
        return;
    }
    double p[2] = {100, 100};
    trn_stroke s = raise_at(p, 10, 3);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    const uint64_t h = lh_hash(trn_session_result(ss));
    trn_recipe c;
    copy_recipe(trn_session_recipe(ss), &c);
    c.seed = 5;
    trn_error e;
    trn_error_clear(&e);
    CHECK_STATUS(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, cancel_at_half, NULL, &e),
                 TRN_ERR_CANCELLED);
    CHECK(lh_hash(trn_session_result(ss)) == h);
    CHECK_EQ_INT(trn_session_recipe(ss)->seed, 7);
    CHECK(trn_session_can_undo(ss));
    /* a recipe that does not validate */
    free(c.default_biome);
    c.default_biome = lh_dup("nope");
    CHECK_STATUS(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, &e),
                 TRN_ERR_VALIDATION);
    CHECK(lh_hash(trn_session_result(ss)) == h);
    trn_recipe_dispose(&c);
    /* a stroke that does not validate leaves recipe and surface alone */
    trn_stroke bad = raise_at(p, -1, 3);
    CHECK_STATUS(trn_session_apply_stroke(ss, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "stroke.radius");
    bad = raise_at(p, 5, 3);
    bad.layer = (char *)"protection";
    CHECK_STATUS(trn_session_apply_stroke(ss, &bad, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "stroke.layer");
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, 1);
    CHECK(lh_hash(trn_session_result(ss)) == h);
    /* cancel while creating: no session */
    trn_session *none = (trn_session *)&e;
    CHECK_STATUS(trn_session_new(&r, NULL, &none, cancel_at_half, NULL, NULL), TRN_ERR_CANCELLED);
    CHECK(none == NULL);
    trn_recipe_dispose(&r);
    trn_session_free(ss);
}

static void test_grid_change_and_frozen_base(void)
{
    trn_recipe r;
    parse(&r);
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    double p[2] = {100, 100};
    trn_stroke s = raise_at(p, 10, 3);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    const uint64_t h = lh_hash(trn_session_result(ss));
    float *base = malloc(129u * 129u * sizeof(float));
    memcpy(base, trn_session_base(ss)->heights, 129u * 129u * sizeof(float));
    /* the generation layer off and a new seed: the base stays */
    trn_recipe c;
    copy_recipe(trn_session_recipe(ss), &c);
    c.seed = 1234;
    c.layers[0].enabled = false;
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, NULL));
    CHECK(memcmp(trn_session_base(ss)->heights, base, 129u * 129u * sizeof(float)) == 0);
    CHECK(memcmp(trn_session_result(ss)->field.heights, base, 129u * 129u * sizeof(float)) != 0);
    /* on again: the new seed's landform */
    c.layers[0].enabled = true;
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, NULL));
    CHECK(memcmp(trn_session_base(ss)->heights, base, 129u * 129u * sizeof(float)) != 0);
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    /* a new grid with edits: refused unless told */
    c.cells_x = c.cells_z = 64;
    trn_error e;
    trn_error_clear(&e);
    CHECK_STATUS(trn_session_regenerate(ss, &c, TRN_EDITS_REFUSE, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "needs a decision");
    CHECK_EQ_INT(trn_session_recipe(ss)->cells_x, 128);
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_KEEP, NULL, NULL, &e));
    CHECK_EQ_INT(trn_session_recipe(ss)->cells_x, 64);
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, 1);
    c.cells_x = c.cells_z = 32;
    CHECK_OK(trn_session_regenerate(ss, &c, TRN_EDITS_CLEAR, NULL, NULL, &e));
    CHECK_EQ_INT(trn_session_recipe(ss)->cells_x, 32);
    CHECK_EQ_INT(trn_session_recipe(ss)->stroke_count, 0);
    CHECK(lh_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    (void)h;
    trn_recipe_dispose(&c);
    free(base);
    trn_session_free(ss);
}

int main(void)
{
    RUN(test_incremental_equals_full);
    RUN(test_incremental_odd_grid);
    RUN(test_undo_redo);
    RUN(test_chunks);
    RUN(test_regenerate_keeps_edits);
    RUN(test_cancel_and_failure_keep_state);
    RUN(test_grid_change_and_frozen_base);
    return trn_test_finish();
}
