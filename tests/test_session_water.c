/* Sessions keep the published water on the edited surface: equal to a full generation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/layers.h"
#include "terrane/recipe.h"
#include "test.h"

static const char recipe_text[] =
    "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":5,\"sea_level\":-50,"
    "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
    "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},"
    "\"sand\":{\"color\":[0.8,0.7,0.5,1]},\"bed\":{\"color\":[0.3,0.3,0.4,1]}},"
    "\"rules\":[{\"id\":\"under\",\"biome\":\"bed\",\"priority\":20,\"water_distance\":[0,0]},"
    "{\"id\":\"shore\",\"biome\":\"sand\",\"priority\":10,\"water_distance\":[0,14]}],"
    "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"land\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":40,"
    "\"feature_size\":90}},"
    "{\"id\":\"sea\",\"type\":\"water_body\",\"params\":{\"kind\":\"ocean\",\"level\":15},"
    "\"inputs\":{\"field\":{\"node\":\"land\"}}},"
    "{\"id\":\"rules\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"sea\","
    "\"pin\":\"field\"},\"water\":{\"node\":\"sea\",\"pin\":\"water\"}}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"rules\"},"
    "\"water\":{\"node\":\"sea\",\"pin\":\"water\"}}}]}}";

/* The same land with no water bodies: the sea is inferred from the sea level (15 m). */
static const char inferred_text[] =
    "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":5,\"sea_level\":15,"
    "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
    "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},"
    "\"sand\":{\"color\":[0.8,0.7,0.5,1]}},"
    "\"rules\":[{\"id\":\"shore\",\"biome\":\"sand\",\"priority\":10,\"water_distance\":[0,14]}],"
    "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"land\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":40,"
    "\"feature_size\":90}},"
    "{\"id\":\"rules\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"land\"}}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"rules\"}}}]}}";

/* A session of text's recipe (NULL, with a failed check, when it does not open). */
static trn_session *open_session(const char *text)
{
    trn_recipe r;
    trn_error e;
    trn_session *ss = NULL;
    const trn_status st = trn_recipe_parse(text, strlen(text), "w.json", &r, NULL, &e);
    CHECK_OK(st);
    if (st) return NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, &e));
    trn_recipe_dispose(&r);
    return ss;
}

static size_t samples(const trn_generated *g)
{
    return ((size_t)g->field.cells_x + 1u) * ((size_t)g->field.cells_z + 1u);
}

/* Coverage, owners and surfaces of a and b agree bit for bit, and so do the distances to the
 * water and the biomes the rules give from them. */
static bool same_water(const trn_generated *a, const trn_generated *b)
{
    if (a->has_water != b->has_water) return false;
    const size_t n = samples(a);
    if (n != samples(b) ||
        memcmp(a->water_distance, b->water_distance, n * sizeof *a->water_distance) != 0 ||
        memcmp(a->biomes.values, b->biomes.values, n) != 0 ||
        memcmp(a->rule_index, b->rule_index, n * sizeof *a->rule_index) != 0)
        return false;
    if (!a->has_water) return true;
    return memcmp(a->water.wet, b->water.wet, n) == 0 &&
           memcmp(a->water.owner, b->water.owner, n * sizeof *a->water.owner) == 0 &&
           memcmp(a->water.surface, b->water.surface, n * sizeof *a->water.surface) == 0 &&
           a->water.ground_hash == b->water.ground_hash;
}

static size_t wet_count(const trn_generated *g)
{
    size_t c = 0;
    for (size_t k = 0; k < samples(g); k++) c += g->water.wet[k] != 0;
    return c;
}

/* A lower stroke along z = 128 from the west edge inland (8 points into points), strength m. */
static trn_stroke channel(double points[16], double strength)
{
    for (int p = 0; p < 8; p++) {
        points[2 * p] = 16.0 + 32.0 * p;
        points[2 * p + 1] = 128.0;
    }
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_LOWER;
    s.radius = 30;
    s.strength = strength;
    s.falloff = 0.3;
    s.points = points;
    s.point_count = 8;
    return s;
}

/* The session's water after stroke, undo and redo equals generating its recipe in full. */
static void test_stroke_moves_the_shore(void)
{
    trn_error e;
    trn_session *ss = open_session(recipe_text);
    if (!ss) return;
    const trn_generated *g = trn_session_result(ss);
    CHECK(g->has_water);
    const size_t wet_before = wet_count(g);
    CHECK(wet_before > 0 && wet_before < samples(g));

    /* Lower a band of land from the sea inland, 30 m at the brush's core. */
    double points[16];
    trn_stroke s = channel(points, 30);
    trn_chunk_set set;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &set, &e));
    trn_chunk_set_dispose(&set);
    g = trn_session_result(ss);
    CHECK(wet_count(g) > wet_before); /* the sea came in */
    /* ... and the rules see it: the lowered channel is under water (distance 0, the bed biome)
     * where it was dry land before. */
    const size_t centre = 32u * 65u + 32u; /* (128, 128) */
    CHECK(g->water.wet[centre] && g->water_distance[centre] == 0.0f);
    CHECK(g->biomes.values[centre] == 2); /* bed */

    trn_generated full;
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
    CHECK(same_water(g, &full));
    trn_generated_dispose(&full);

    CHECK_OK(trn_session_undo(ss, NULL, &e));
    g = trn_session_result(ss);
    CHECK(wet_count(g) == wet_before);
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
    CHECK(same_water(g, &full));
    trn_generated_dispose(&full);

    CHECK_OK(trn_session_redo(ss, NULL, &e));
    g = trn_session_result(ss);
    CHECK(wet_count(g) > wet_before);
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
    CHECK(same_water(g, &full));
    trn_generated_dispose(&full);
    trn_session_free(ss);
}

/* Without water bodies the sea is inferred from the sea level: a channel lowered from the coast
 * below it becomes sea for the rules, in a session as in a full generation, and undo puts the
 * distances back. */
static void test_inferred_sea_follows_strokes(void)
{
    trn_error e;
    trn_session *ss = open_session(inferred_text);
    if (!ss) return;
    const trn_generated *g = trn_session_result(ss);
    const size_t n = samples(g);
    float *before = malloc(n * sizeof *before);
    if (!before) return;
    memcpy(before, g->water_distance, n * sizeof *before);
    const size_t centre = 32u * 65u + 32u;
    CHECK(before[centre] > 0.0f);
    double points[16];
    trn_stroke s = channel(points, 60);
    trn_chunk_set set;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &set, &e));
    trn_chunk_set_dispose(&set);
    g = trn_session_result(ss);
    CHECK(g->water_distance[centre] == 0.0f);
    trn_generated full;
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
    CHECK(same_water(g, &full));
    CHECK(full.water_distance[centre] == 0.0f);
    trn_generated_dispose(&full);
    CHECK_OK(trn_session_undo(ss, &set, &e));
    g = trn_session_result(ss);
    CHECK(memcmp(g->water_distance, before, n * sizeof *before) == 0);
    /* The undo reports every chunk whose biomes the moved sea changed, beyond the brush. */
    CHECK(set.changed_count > 0);
    trn_chunk_set_dispose(&set);
    free(before);
    trn_session_free(ss);
}

/* Strokes over land and shore, raising and lowering, each followed by a full generation of the
 * session's recipe: the water agrees every time (the session skips the water for strokes that
 * stay above the sea, and must not skip one that reaches it). */
static void test_random_strokes(void)
{
    trn_error e;
    trn_session *ss = open_session(recipe_text);
    if (!ss) return;
    uint32_t state = 12345u;
    int changed = 0, unchanged = 0;
    for (int step = 0; step < 24; step++) {
        double p[2];
        state = state * 1664525u + 1013904223u;
        p[0] = (double)(state >> 8) / 16777216.0 * 256.0;
        state = state * 1664525u + 1013904223u;
        p[1] = (double)(state >> 8) / 16777216.0 * 256.0;
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = step % 2 ? TRN_STROKE_RAISE : TRN_STROKE_LOWER;
        s.radius = 12 + step % 5 * 4;
        s.strength = 4 + step % 3 * 5;
        s.falloff = 0.5;
        s.points = p;
        s.point_count = 1;
        const size_t before = wet_count(trn_session_result(ss));
        CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, &e));
        const trn_generated *g = trn_session_result(ss);
        if (wet_count(g) != before)
            changed++;
        else
            unchanged++;
        trn_generated full;
        CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
        CHECK(same_water(g, &full));
        trn_generated_dispose(&full);
    }
    /* Both kinds happened: the comparison covered the skip and the refresh. */
    CHECK(changed > 0 && unchanged > 0);
    trn_session_free(ss);
}

/* One-sample strokes at the shore: a dry sample lowered under the sea's level joins it, a wet
 * one raised above it leaves it; each changes the coverage through that sample alone. */
static void test_shore_samples(void)
{
    trn_error e;
    trn_session *ss = open_session(recipe_text);
    if (!ss) return;
    for (int raise = 0; raise <= 1; raise++) {
        const trn_generated *g = trn_session_result(ss);
        const size_t nx = (size_t)g->field.cells_x + 1u;
        /* An interior sample that is dry (lowering) or wet (raising) beside the other kind. */
        size_t at = SIZE_MAX;
        for (size_t j = 2; at == SIZE_MAX && j + 2 < nx; j++)
            for (size_t i = 2; at == SIZE_MAX && i + 2 < nx; i++) {
                const size_t k = j * nx + i;
                const bool want = raise ? g->water.wet[k] : !g->water.wet[k];
                const bool other = raise ? !g->water.wet[k + 1] : g->water.wet[k + 1];
                if (want && other) at = k;
            }
        CHECK(at != SIZE_MAX);
        if (at == SIZE_MAX) break;
        const double h = g->field.heights[at];
        double p[2] = {(double)(at % nx) * 4.0, (double)(at / nx) * 4.0};
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = raise ? TRN_STROKE_RAISE : TRN_STROKE_LOWER;
        s.radius = 3; /* under one 4-unit cell: this sample alone */
        s.falloff = 0;
        s.strength = raise ? 15.0 - h + 5.0 : h - 15.0 + 5.0;
        s.points = p;
        s.point_count = 1;
        const size_t before = wet_count(g);
        trn_chunk_set set;
        CHECK_OK(trn_session_apply_stroke(ss, &s, &set, &e));
        trn_chunk_set_dispose(&set);
        g = trn_session_result(ss);
        CHECK(g->water.wet[at] == (raise ? 0 : 1));
        CHECK(raise ? wet_count(g) < before : wet_count(g) > before);
        trn_generated full;
        CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
        CHECK(same_water(g, &full));
        trn_generated_dispose(&full);
    }
    trn_session_free(ss);
}

/* A lake whose footprint is all above its level holds no water until a stroke digs below it:
 * the dug samples were all dry before, and the lake appears. Then a raise over the whole
 * pond (every sample of the stroke above the level afterwards) empties it again. */
static void test_lake_appears_and_goes(void)
{
    static const char text[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":5,\"sea_level\":-50,"
        "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
        "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},"
        "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"land\",\"type\":\"flat_terrain\",\"params\":{\"height\":10}},"
        "{\"id\":\"pond\",\"type\":\"water_body\",\"params\":{\"kind\":\"lake\",\"level\":5,"
        "\"center\":[128,128],\"radius\":60},\"inputs\":{\"field\":{\"node\":\"land\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"pond\","
        "\"pin\":\"field\"},\"water\":{\"node\":\"pond\",\"pin\":\"water\"}}}]}}";
    trn_error e;
    trn_session *ss = open_session(text);
    if (!ss) return;
    CHECK(trn_session_result(ss)->has_water && wet_count(trn_session_result(ss)) == 0);
    for (int step = 0; step < 2; step++) {
        double p[2] = {128, 128};
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = step ? TRN_STROKE_RAISE : TRN_STROKE_LOWER;
        s.radius = step ? 40 : 20;
        s.falloff = step ? 0 : 0.5;
        s.strength = step ? 30 : 10;
        s.points = p;
        s.point_count = 1;
        CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, &e));
        const trn_generated *g = trn_session_result(ss);
        CHECK(step ? wet_count(g) == 0 : wet_count(g) > 0);
        trn_generated full;
        CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
        CHECK(same_water(g, &full));
        trn_generated_dispose(&full);
    }
    trn_session_free(ss);
}

/* A river's surface follows its bed: every stroke settles it again, far from any level. */
static void test_river_follows_the_bed(void)
{
    static const char text[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":5,\"sea_level\":-50,"
        "\"default_landform\":\"flat\",\"landforms\":{\"flat\":{\"height_variation\":0}},"
        "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},"
        "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"land\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":40,"
        "\"feature_size\":90}},"
        "{\"id\":\"river\",\"type\":\"water_body\",\"params\":{\"kind\":\"river\",\"river_path\":"
        "[[10,30,10],[120,20,140],[250,5,250]],\"river_path_interpolation\":\"catmull_rom\","
        "\"river_surface_mode\":\"follow_bed\",\"width\":12},\"inputs\":{\"field\":{\"node\":"
        "\"land\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"river\","
        "\"pin\":\"field\"},\"water\":{\"node\":\"river\",\"pin\":\"water\"}}}]}}";
    trn_error e;
    trn_session *ss = open_session(text);
    if (!ss) return;
    CHECK(trn_session_result(ss)->has_water && wet_count(trn_session_result(ss)) > 0);
    double p[2] = {120, 140};
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = TRN_STROKE_RAISE;
    s.radius = 16;
    s.falloff = 0.5;
    s.strength = 8;
    s.points = p;
    s.point_count = 1;
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, &e));
    trn_generated full;
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), NULL, &full, NULL, NULL, &e));
    CHECK(same_water(trn_session_result(ss), &full));
    trn_generated_dispose(&full);
    trn_session_free(ss);
}

int main(void)
{
    RUN(test_river_follows_the_bed);
    RUN(test_lake_appears_and_goes);
    RUN(test_shore_samples);
    RUN(test_stroke_moves_the_shore);
    RUN(test_random_strokes);
    RUN(test_inferred_sea_follows_strokes);
    return trn_test_finish();
}
