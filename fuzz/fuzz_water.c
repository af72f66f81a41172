/* libFuzzer target for stored water: decode; on success encode back byte for byte, decode again. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "terrane/water.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* What decoded water must satisfy whatever the bytes were. */
static void assert_sane(const trn_water *w, const trn_water_limits *lim)
{
    FUZZ_ASSERT(w->cells_x > 0 && w->cells_z > 0 && w->size_x > 0.0 && w->size_z > 0.0);
    const size_t samples = ((size_t)w->cells_x + 1u) * ((size_t)w->cells_z + 1u);
    FUZZ_ASSERT(samples <= lim->max_samples && w->body_count <= lim->max_bodies);
    FUZZ_ASSERT((w->body_count == 0) == (w->bodies == NULL));
    FUZZ_ASSERT((w->body_count == 0) == (w->owner == NULL));
    for (uint32_t b = 0; b < w->body_count; b++) {
        const trn_water_body *body = &w->bodies[b];
        FUZZ_ASSERT(trn_water_body_validate(body, NULL, NULL) == TRN_OK);
        FUZZ_ASSERT(body->path_count <= lim->max_points && body->control_count <= lim->max_points);
    }
    for (size_t s = 0; s < samples && w->body_count; s++) {
        FUZZ_ASSERT(w->owner[s] >= -1 && w->owner[s] < (int32_t)w->body_count);
        FUZZ_ASSERT(w->wet[s] <= 1 && (!w->wet[s] || w->owner[s] >= 0));
        FUZZ_ASSERT((w->owner[s] < 0) == (isnan(w->surface[s]) != 0));
    }
}

static int check_one(const uint8_t *data, size_t size)
{
    trn_water_limits lim;
    trn_water_limits_default(&lim);
    /* Small limits keep every run fast; the limit checks themselves are tested exactly. */
    lim.max_samples = 1u << 16;
    lim.max_bodies = 64;
    lim.max_points = 1u << 12;
    trn_water w;
    trn_error e;
    if (trn_water_decode(data, size, "fuzz.water", &lim, &w, &e) != TRN_OK) {
        /* A failure returns nothing and says where. */
        FUZZ_ASSERT(w.bodies == NULL && w.owner == NULL && w.body_count == 0);
        FUZZ_ASSERT(e.code != TRN_OK && e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        return 0;
    }
    assert_sane(&w, &lim);

    /* One spelling per water: encoding gives the input's bytes. */
    uint8_t *out = NULL;
    size_t out_size = 0;
    FUZZ_ASSERT(trn_water_encode(&w, &out, &out_size, &e) == TRN_OK);
    FUZZ_ASSERT(out_size == size && memcmp(out, data, size) == 0);

    trn_water back;
    FUZZ_ASSERT(trn_water_decode(out, out_size, NULL, &lim, &back, &e) == TRN_OK);
    uint8_t *again = NULL;
    size_t again_size = 0;
    FUZZ_ASSERT(trn_water_encode(&back, &again, &again_size, &e) == TRN_OK);
    FUZZ_ASSERT(again_size == size && memcmp(again, data, size) == 0);

    free(again);
    free(out);
    trn_water_dispose(&back);
    trn_water_dispose(&w);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_one(data, size);
    /* Again with the trailing checksum made right, so mutations reach the checks behind it. */
    if (size < 8) return 0;
    uint8_t *sealed = malloc(size);
    if (!sealed) return 0;
    memcpy(sealed, data, size);
    const uint64_t sum = (uint64_t)XXH64(sealed, size - 8, 0);
    for (int b = 0; b < 8; b++)
        sealed[size - 8 + (size_t)b] = (uint8_t)(sum >> (8 * b));
    check_one(sealed, size);
    free(sealed);
    return 0;
}
