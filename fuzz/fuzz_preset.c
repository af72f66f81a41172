/* libFuzzer target for terrain_preset documents: parse; on success apply to a fixed recipe. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/presets.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static const char base[] =
    "{\"size\": [64, 64], \"resolution\": [16, 16], \"seed\": 5, \"default_landform\": \"l\", "
    "\"landforms\": {\"l\": {}}, \"default_biome\": \"grass\", \"biomes\": {\"grass\": "
    "{\"color\": [0, 1, 0, 1]}}, \"edits\": [{\"type\": \"raise\", \"radius\": 2, \"center\": "
    "[8, 8]}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_preset p;
    trn_error e;
    trn_status st = trn_preset_parse((const char *)data, size, "fuzz.json", "asset://fuzz", &p, &e);
    if (st != TRN_OK) {
        /* A failure leaves the preset empty and says what and where. */
        FUZZ_ASSERT(p.name == NULL && p.fields_json == NULL && p.recipe.biomes == NULL);
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_LIMIT || st == TRN_ERR_VERSION ||
                    st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        FUZZ_ASSERT(e.line >= 1 && e.column >= 1);
        return 0;
    }
    FUZZ_ASSERT(p.name && *p.name && p.fields_json && p.version == 1);
    /* Applying either gives a valid, stamped recipe that keeps its strokes' meaning, or fails
     * and leaves the recipe exactly as it was. */
    trn_recipe r;
    FUZZ_ASSERT(trn_recipe_parse(base, sizeof base - 1, "base", &r, NULL, NULL) == TRN_OK);
    char *before = NULL, *after = NULL;
    size_t bn = 0, an = 0;
    FUZZ_ASSERT(trn_recipe_canonical_json(&r, &before, &bn, NULL) == TRN_OK);
    st = trn_recipe_apply_preset(&r, &p, TRN_EDITS_KEEP, &e);
    if (st == TRN_OK) {
        FUZZ_ASSERT(trn_recipe_validate(&r, NULL) == TRN_OK);
        FUZZ_ASSERT(r.preset_id && strcmp(r.preset_id, "asset://fuzz") == 0);
        FUZZ_ASSERT(r.has_preset_version && r.preset_version == 1);
        FUZZ_ASSERT(r.stroke_count == 1);
        if (!(p.fields & TRN_PRESET_SEED)) FUZZ_ASSERT(r.seed == 5);
        if (!(p.fields & (TRN_PRESET_SIZE | TRN_PRESET_CELLS_X | TRN_PRESET_CELLS_Z)))
            FUZZ_ASSERT(r.size_x == 64 && r.cells_x == 16 && r.cells_z == 16);
    } else {
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(trn_recipe_canonical_json(&r, &after, &an, NULL) == TRN_OK);
        FUZZ_ASSERT(an == bn && memcmp(before, after, bn) == 0);
    }
    free(before);
    free(after);
    trn_recipe_dispose(&r);
    trn_preset_dispose(&p);
    return 0;
}
