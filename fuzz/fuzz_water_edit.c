/* libFuzzer target for Water Edit: excluded_ids and overrides JSON over a fixed small body list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/water.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A lake "a", an ocean "o" with a boundary and a Catmull-Rom river "r". */
static void make_bodies(trn_water_body b[3])
{
    trn_water_body_init(&b[0], TRN_WATER_LAKE, "a");
    b[0].center_x = b[0].center_z = 5.0;
    b[0].radius = 10.0;
    trn_water_body_init(&b[1], TRN_WATER_OCEAN, "o");
    static const double square[8] = {0, 0, 20, 0, 20, 20, 0, 20};
    b[1].boundary = malloc(sizeof square);
    if (b[1].boundary) {
        memcpy(b[1].boundary, square, sizeof square);
        b[1].boundary_count = 4;
    }
    trn_water_body_init(&b[2], TRN_WATER_RIVER, "r");
    static const double c[9] = {0, 0, 0, 5, -1, 5, 10, -2, 0};
    b[2].control = malloc(sizeof c);
    if (b[2].control) {
        memcpy(b[2].control, c, sizeof c);
        b[2].control_count = 3;
    }
    b[2].interpolation = TRN_RIVER_CATMULL_ROM;
    b[2].curve_steps = 2;
    trn_water_body_sample_path(&b[2], NULL);
}

/* The input is "EXCLUDED\0OVERRIDES": without a NUL it is the overrides alone. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    const char *excluded = NULL, *overrides = text;
    const size_t first = strlen(text);
    if (first < size) {
        excluded = text;
        overrides = text + first + 1;
    }
    trn_water_body in[3];
    make_bodies(in);
    trn_water_body *out = NULL;
    uint32_t count = 0;
    char where[96];
    trn_error e;
    trn_status st =
        trn_water_edit(in, 3, excluded, overrides, &out, &count, where, sizeof where, &e);
    if (st != TRN_OK) {
        FUZZ_ASSERT(st == TRN_ERR_VALIDATION || st == TRN_ERR_JSON || st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(out == NULL && count == 0 && e.message[0] != '\0');
        if (st != TRN_ERR_NO_MEMORY)
            FUZZ_ASSERT(strncmp(where, "excluded_ids", 12) == 0 ||
                        strncmp(where, "overrides", 9) == 0);
    } else {
        /* Survivors keep their order, validate and never carve. */
        FUZZ_ASSERT(count <= 3 && where[0] == '\0');
        uint32_t next = 0;
        for (uint32_t k = 0; k < count; k++) {
            while (next < 3 && strcmp(in[next].id, out[k].id) != 0)
                next++;
            FUZZ_ASSERT(next < 3 && out[k].kind == in[next].kind);
            next++;
            FUZZ_ASSERT(!out[k].carve);
            FUZZ_ASSERT(trn_water_body_validate(&out[k], NULL, NULL) == TRN_OK);
            FUZZ_ASSERT(out[k].kind != TRN_WATER_RIVER || out[k].path_count >= 2);
        }
        trn_water_bodies_free(out, count);
    }
    for (int k = 0; k < 3; k++)
        trn_water_body_dispose(&in[k]);
    free(text);
    return 0;
}
