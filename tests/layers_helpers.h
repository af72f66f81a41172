/* Test helpers shared by test_replay and test_session: a small recipe with layers, strokes
 * built in code, and hashes of a generated result. */
#ifndef TRN_TEST_LAYERS_HELPERS_H
#define TRN_TEST_LAYERS_HELPERS_H

#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/recipe.h"

/* 256 x 256 world units over 128 x 128 cells (2 units a cell), chunks of 16 cells; landform
 * "a" (default) and "m" (the biome "r"'s own); sea level 30 so some of it is wet; layers: the
 * five defaults plus a second sculpt layer "sculpt2" after the first. */
static const char *const lh_recipe_text =
    "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 7, \"chunk_cells\": 16, "
    "\"sea_level\": 30, \"default_landform\": \"a\", \"landforms\": {\"a\": {\"feature_size\": "
    "96}, \"m\": {\"profile\": \"ridged\", \"base_height\": 60, \"feature_size\": 64}}, "
    "\"default_biome\": \"g\", \"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}, \"s\": {\"color\": "
    "[1, 1, 0, 1]}, \"r\": {\"color\": [0.5, 0.5, 0.5, 1], \"landform\": \"m\"}}, "
    "\"rules\": [{\"id\": \"steep\", \"biome\": \"s\", \"slope\": [25, 90]}, {\"id\": \"low\", "
    "\"biome\": \"s\", \"elevation\": [-1000, 32], \"moisture\": [0.3, 1]}], "
    "\"layers\": [{\"id\": \"generation\"}, {\"id\": \"biomes\"}, {\"id\": \"sculpt\"}, "
    "{\"id\": \"sculpt2\", \"group\": \"sculpt\"}, {\"id\": \"protection\"}, "
    "{\"id\": \"exclusions\"}]}";

static inline char *lh_dup(const char *s)
{
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* Append a radial stroke (one stamp per point pair) to the recipe, which owns it. */
static inline trn_stroke *lh_add(trn_recipe *r, trn_stroke_kind kind, const char *layer,
                                 double radius, double strength, const double *points,
                                 uint32_t point_count)
{
    trn_stroke *list = realloc(r->strokes, (r->stroke_count + 1u) * sizeof *list);
    if (!list) abort();
    r->strokes = list;
    trn_stroke *s = &list[r->stroke_count++];
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->layer = lh_dup(layer);
    s->radius = radius;
    s->strength = strength;
    s->falloff = 0.5;
    s->points = malloc(point_count * 2u * sizeof *s->points);
    if (!s->points) abort();
    memcpy(s->points, points, point_count * 2u * sizeof *s->points);
    s->point_count = point_count;
    return s;
}

static inline uint64_t lh_hash(const trn_generated *g)
{
    const size_t n = trn_field_sample_count(&g->field);
    XXH64_state_t *st = XXH64_createState();
    XXH64_reset(st, 0);
    XXH64_update(st, g->field.heights, n * sizeof(float));
    XXH64_update(st, g->biomes.values, n);
    XXH64_update(st, g->sources, n);
    XXH64_update(st, g->rule_index, n * sizeof(int16_t));
    XXH64_update(st, g->water_distance, n * sizeof(float));
    const uint8_t flag = g->exclusion != NULL;
    XXH64_update(st, &flag, 1);
    if (g->exclusion) XXH64_update(st, g->exclusion, n);
    XXH64_update(st, &g->cache_key, sizeof g->cache_key);
    const uint64_t h = XXH64_digest(st);
    XXH64_freeState(st);
    return h;
}

#endif
