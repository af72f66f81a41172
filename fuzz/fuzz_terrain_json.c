/* libFuzzer target for the .terrain.json reader: parse, and on success serialise, parse, serialise.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/beamng_level.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Optional strings: absent heightmapImage is written as "", absent binaryFormat as the engine's
 * text, so a missing field and its written default are the same document. */
static bool same_text(const char *a, const char *b, const char *absent)
{
    return strcmp(a ? a : absent, b ? b : absent) == 0;
}

static void assert_same(const trn_terrain_json *a, const trn_terrain_json *b)
{
    FUZZ_ASSERT(a->version == b->version);
    FUZZ_ASSERT(a->size == b->size);
    FUZZ_ASSERT(a->height_map_size == b->height_map_size);
    FUZZ_ASSERT(a->height_map_item_size == b->height_map_item_size);
    FUZZ_ASSERT(a->layer_map_size == b->layer_map_size);
    FUZZ_ASSERT(a->layer_map_item_size == b->layer_map_item_size);
    FUZZ_ASSERT(a->datafile && b->datafile && strcmp(a->datafile, b->datafile) == 0);
    FUZZ_ASSERT(same_text(a->heightmap_image, b->heightmap_image, ""));
    FUZZ_ASSERT(same_text(a->binary_format, b->binary_format, TRN_TERRAIN_JSON_BINARY_FORMAT));
    FUZZ_ASSERT(a->material_count == b->material_count);
    for (uint32_t i = 0; i < a->material_count; i++)
        FUZZ_ASSERT(strcmp(a->materials[i], b->materials[i]) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_terrain_json tj;
    trn_error e;
    if (trn_terrain_json_parse((const char *)data, size, "fuzz.terrain.json", &tj, &e) != TRN_OK) {
        /* A failure leaves the output empty and says what and where. */
        FUZZ_ASSERT(tj.datafile == NULL && tj.materials == NULL && tj.material_count == 0);
        FUZZ_ASSERT(e.code == TRN_ERR_JSON || e.code == TRN_ERR_LIMIT ||
                    e.code == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= -1 && e.offset <= (int64_t)size);
        return 0;
    }
    FUZZ_ASSERT(tj.datafile != NULL);
    FUZZ_ASSERT(tj.material_count == 0 || tj.materials != NULL);
    FUZZ_ASSERT(tj.version <= 255);

    char *text1 = NULL, *text2 = NULL;
    size_t n1 = 0, n2 = 0;
    FUZZ_ASSERT(trn_terrain_json_serialize(&tj, &text1, &n1, &e) == TRN_OK);
    /* The editor's form: it ends at the closing brace. */
    FUZZ_ASSERT(text1 && n1 == strlen(text1) && n1 > 0 && text1[n1 - 1] == '}');

    /* What we write must read back as the same document and write out identically. */
    trn_terrain_json tj2;
    trn_status st = trn_terrain_json_parse(text1, n1, "again.terrain.json", &tj2, &e);
    if (st) fprintf(stderr, "re-parse failed: %s\n%s", e.message, text1);
    FUZZ_ASSERT(st == TRN_OK);
    assert_same(&tj, &tj2);
    FUZZ_ASSERT(trn_terrain_json_serialize(&tj2, &text2, &n2, &e) == TRN_OK);
    if (n1 != n2 || memcmp(text1, text2, n1) != 0)
        fprintf(stderr, "first:\n%s\nsecond:\n%s", text1, text2);
    FUZZ_ASSERT(n1 == n2 && memcmp(text1, text2, n1) == 0);

    free(text1);
    free(text2);
    trn_terrain_json_dispose(&tj2);
    trn_terrain_json_dispose(&tj);
    trn_terrain_json_dispose(NULL);
    return 0;
}
