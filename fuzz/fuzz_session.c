/* libFuzzer target for sessions: every 8 bytes are one stroke (any kind, position, radius,
 * strength, falloff, layer) or an undo/redo on a small terrain; the session's result must equal
 * generating its recipe in full, after every step's end and after undoing everything. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/layers.h"
#include "terrane/recipe.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static uint64_t result_hash(const trn_generated *g)
{
    const size_t n = trn_field_sample_count(&g->field);
    uint64_t h = XXH64(g->field.heights, n * sizeof(float), 0);
    h = XXH64(g->biomes.values, n, h);
    h = XXH64(g->sources, n, h);
    h = XXH64(g->rule_index, n * sizeof(int16_t), h);
    if (g->exclusion) h = XXH64(g->exclusion, n, h ^ 1u);
    return h ^ g->cache_key;
}

static uint64_t full_hash(const trn_recipe *r)
{
    trn_generated g;
    FUZZ_ASSERT(trn_recipe_generate(r, NULL, &g, NULL, NULL, NULL) == TRN_OK);
    const uint64_t h = result_hash(&g);
    trn_generated_dispose(&g);
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_landform lands[2];
    memset(lands, 0, sizeof lands);
    lands[0].name = (char *)"a";
    lands[0].height_variation = 40;
    lands[0].feature_size = 24;
    lands[0].roughness = 0.5;
    lands[0].octaves = 3;
    lands[0].warp_feature_size = 128;
    lands[0].stretch = 1;
    lands[1] = lands[0];
    lands[1].name = (char *)"m";
    lands[1].profile = TRN_PROFILE_RIDGED;
    lands[1].base_height = 20;
    trn_biome biomes[3];
    memset(biomes, 0, sizeof biomes);
    const char *names[3] = {"g", "s", "r"};
    for (int k = 0; k < 3; k++) {
        biomes[k].name = (char *)names[k];
        biomes[k].color[3] = 1;
        biomes[k].texture_scale = 1;
        biomes[k].allow_snow = true;
    }
    biomes[2].landform = (char *)"m";
    trn_rule rules[1];
    memset(rules, 0, sizeof rules);
    rules[0].id = (char *)"steep";
    rules[0].biome = (char *)"s";
    rules[0].slope.set = true;
    rules[0].slope.min = 20;
    rules[0].slope.max = 90;
    trn_recipe r;
    memset(&r, 0, sizeof r);
    r.size_x = 48;
    r.size_z = 40;
    r.cells_x = 24;
    r.cells_z = 15;
    r.seed = 3;
    r.chunk_cells = 5;
    r.has_sea_level = true;
    r.sea_level = 12;
    r.default_landform = (char *)"a";
    r.landforms = lands;
    r.landform_count = 2;
    r.default_biome = (char *)"g";
    r.biomes = biomes;
    r.biome_count = 3;
    r.rules = rules;
    r.rule_count = 1;
    trn_session *ss = NULL;
    FUZZ_ASSERT(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL) == TRN_OK);
    const uint64_t initial = result_hash(trn_session_result(ss));
    for (size_t at = 0; at + 8 <= size && at < 8 * 48; at += 8) {
        const uint8_t *b = data + at;
        if (b[7] >= 240) {
            trn_status st =
                b[7] & 1 ? trn_session_redo(ss, NULL, NULL) : trn_session_undo(ss, NULL, NULL);
            FUZZ_ASSERT(st == TRN_OK ||
                        !(b[7] & 1 ? trn_session_can_redo(ss) : trn_session_can_undo(ss)));
            continue;
        }
        trn_stroke s;
        memset(&s, 0, sizeof s);
        s.kind = (trn_stroke_kind)(b[0] % TRN_STROKE_KIND_COUNT);
        double points[4] = {-6.0 + b[1] * (60.0 / 255.0), -6.0 + b[2] * (52.0 / 255.0), 0, 0};
        points[2] = points[0] + (b[6] & 15);
        points[3] = points[1] - (b[6] >> 4);
        s.points = points;
        s.point_count = 1u + (b[7] & 1u);
        s.radius = 0.25 + b[3] / 16.0;
        s.strength = s.kind <= TRN_STROKE_LOWER ? b[4] / 16.0 : b[4] / 255.0;
        s.falloff = b[5] / 255.0;
        s.target_height = b[4] / 4.0;
        s.erase = (b[7] & 2) != 0;
        s.biome = (char *)names[b[6] % 3];
        uint32_t sidx[4];
        float sh[4];
        if (s.kind == TRN_STROKE_PROTECT) {
            s.points = NULL;
            s.point_count = 0;
            s.grid_cells_x = (b[7] & 4) ? 12 : 24;
            s.grid_cells_z = 15;
            s.sample_count = 1u + b[3] % 4u;
            for (uint32_t k = 0; k < s.sample_count; k++) {
                sidx[k] = (uint32_t)(b[1] + 37u * k) % ((s.grid_cells_x + 1u) * 16u);
                sh[k] = (float)b[2 + k] - 20.0f;
            }
            s.sample_index = sidx;
            s.sample_height = sh;
        }
        trn_chunk_set set;
        if (trn_session_apply_stroke(ss, &s, &set, NULL) == TRN_OK) trn_chunk_set_dispose(&set);
    }
    FUZZ_ASSERT(result_hash(trn_session_result(ss)) == full_hash(trn_session_recipe(ss)));
    while (trn_session_can_undo(ss))
        FUZZ_ASSERT(trn_session_undo(ss, NULL, NULL) == TRN_OK);
    FUZZ_ASSERT(result_hash(trn_session_result(ss)) == initial);
    FUZZ_ASSERT(trn_session_recipe(ss)->stroke_count == 0);
    trn_session_free(ss);
    return 0;
}
