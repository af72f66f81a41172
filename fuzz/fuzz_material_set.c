/* libFuzzer target for terrain_material_set documents: parse; on success check the bindings. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/palette.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_material_set s;
    trn_error e;
    trn_status st = trn_material_set_parse((const char *)data, size, "fuzz.json", &s, &e);
    if (st != TRN_OK) {
        FUZZ_ASSERT(s.name == NULL);
        for (unsigned i = 0; i < TRN_ROLE_COUNT; i++)
            FUZZ_ASSERT(s.roles[i] == NULL);
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_VERSION || st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(st == TRN_ERR_NO_MEMORY ||
                    (e.offset >= 0 && e.offset <= (int64_t)size && e.line >= 1 && e.column >= 1));
        return 0;
    }
    FUZZ_ASSERT(s.name && *s.name);
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++) {
        /* every binding is a Material asset id; each role's name reads back as the role */
        if (s.roles[i]) FUZZ_ASSERT(strncmp(s.roles[i], "asset://", 8) == 0 && s.roles[i][8]);
        trn_surface_role r;
        FUZZ_ASSERT(trn_surface_role_parse(trn_surface_role_name((trn_surface_role)i), &r) &&
                    r == (trn_surface_role)i);
    }
    trn_material_set_dispose(&s);
    return 0;
}
