/* libFuzzer target for scene documents: check; a refusal says what and where, inside the text. */
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
    trn_error e;
    trn_error_clear(&e);
    const trn_status st = trn_scene_document_check((const char *)data, size, "fuzz.scene.json", &e);
    if (st == TRN_OK) return 0;
    FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
    FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_VALIDATION || st == TRN_ERR_NO_MEMORY);
    FUZZ_ASSERT(strcmp(e.file, "fuzz.scene.json") == 0);
    FUZZ_ASSERT(st == TRN_ERR_NO_MEMORY || (e.offset >= 0 && e.offset <= (int64_t)size));
    /* A check: the same answer twice (no state kept between calls). */
    trn_error again;
    FUZZ_ASSERT(trn_scene_document_check((const char *)data, size, "fuzz.scene.json", &again) ==
                st);
    FUZZ_ASSERT(strcmp(again.message, e.message) == 0);
    return 0;
}
