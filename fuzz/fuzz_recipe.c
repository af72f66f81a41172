/* libFuzzer target for recipe documents: parse; on success canonical -> parse -> canonical. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/recipe.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_recipe r;
    trn_error e;
    trn_document_kind kind;
    trn_status st = trn_recipe_parse((const char *)data, size, "fuzz.json", &r, &kind, &e);
    /* Classification agrees with what parsing found once the text was JSON; parsing reads an
     * object with no known key as a (failing) recipe. */
    trn_document_kind classified = trn_document_classify((const char *)data, size);
    if (kind != TRN_DOCUMENT_UNKNOWN)
        FUZZ_ASSERT(classified == kind ||
                    (classified == TRN_DOCUMENT_UNKNOWN && kind == TRN_DOCUMENT_RECIPE));
    if (st != TRN_OK) {
        /* A failure leaves the recipe empty and says what and where. */
        FUZZ_ASSERT(r.landforms == NULL && r.biomes == NULL && r.rules == NULL);
        FUZZ_ASSERT(r.landform_count == 0 && r.default_biome == NULL && r.layers == NULL &&
                    r.strokes == NULL);
        FUZZ_ASSERT(st == e.code);
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_LIMIT || st == TRN_ERR_VERSION ||
                    st == TRN_ERR_FORMAT || st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        FUZZ_ASSERT(e.line >= 1 && e.column >= 1);
        return 0;
    }
    FUZZ_ASSERT(kind == TRN_DOCUMENT_RECIPE || kind == TRN_DOCUMENT_TERRAIN_ASSET);
    FUZZ_ASSERT(trn_recipe_validate(&r, &e) == TRN_OK);

    char *text1 = NULL, *text2 = NULL;
    size_t n1 = 0, n2 = 0;
    uint64_t key1 = 0, key2 = 0;
    FUZZ_ASSERT(trn_recipe_canonical_json(&r, &text1, &n1, &e) == TRN_OK);
    FUZZ_ASSERT(trn_recipe_cache_key(&r, &key1, &e) == TRN_OK);
    FUZZ_ASSERT(strlen(text1) == n1);

    trn_recipe back;
    st = trn_recipe_parse(text1, n1, "canonical.json", &back, &kind, &e);
    if (st != TRN_OK) fprintf(stderr, "canonical text refused: %s\n%s\n", e.message, text1);
    FUZZ_ASSERT(st == TRN_OK);
    FUZZ_ASSERT(kind == TRN_DOCUMENT_RECIPE);
    FUZZ_ASSERT(trn_recipe_canonical_json(&back, &text2, &n2, &e) == TRN_OK);
    FUZZ_ASSERT(trn_recipe_cache_key(&back, &key2, &e) == TRN_OK);
    FUZZ_ASSERT(n1 == n2 && memcmp(text1, text2, n1) == 0);
    FUZZ_ASSERT(key1 == key2);

    /* The parsed values survive the trip exactly. */
    FUZZ_ASSERT(back.seed == r.seed && back.cells_x == r.cells_x && back.cells_z == r.cells_z);
    FUZZ_ASSERT(back.size_x == r.size_x && back.size_z == r.size_z);
    FUZZ_ASSERT(back.landform_count == r.landform_count && back.biome_count == r.biome_count);
    FUZZ_ASSERT(back.rule_count == r.rule_count);
    /* Layers survive; strokes may be merged, but every stamp of every kind survives. */
    FUZZ_ASSERT(back.layer_count == r.layer_count && back.stroke_count <= r.stroke_count);
    for (int k = 0; k < TRN_STROKE_KIND_COUNT; k++) {
        uint64_t a = 0, b = 0;
        for (uint32_t i = 0; i < r.stroke_count; i++)
            if (r.strokes[i].kind == (trn_stroke_kind)k)
                a += r.strokes[i].point_count + r.strokes[i].sample_count;
        for (uint32_t i = 0; i < back.stroke_count; i++)
            if (back.strokes[i].kind == (trn_stroke_kind)k)
                b += back.strokes[i].point_count + back.strokes[i].sample_count;
        FUZZ_ASSERT(a == b);
    }
    for (uint32_t i = 0; i < r.biome_count; i++) {
        int j = trn_recipe_find_biome(&back, r.biomes[i].name);
        FUZZ_ASSERT(j >= 0);
        for (int c = 0; c < 4; c++)
            FUZZ_ASSERT(back.biomes[j].color[c] == r.biomes[i].color[c]);
    }
    for (uint32_t i = 0; i < r.landform_count; i++) {
        int j = trn_recipe_find_landform(&back, r.landforms[i].name);
        FUZZ_ASSERT(j >= 0);
        FUZZ_ASSERT(back.landforms[j].feature_size == r.landforms[i].feature_size);
        FUZZ_ASSERT(back.landforms[j].octaves == r.landforms[i].octaves);
        const char *e1 = r.landforms[i].evolution, *e2 = back.landforms[j].evolution;
        FUZZ_ASSERT((e1 == NULL) == (e2 == NULL) && (!e1 || strcmp(e1, e2) == 0));
    }
    free(text1);
    free(text2);
    trn_recipe_dispose(&back);
    trn_recipe_dispose(&r);
    return 0;
}
