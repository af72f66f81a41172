/* libFuzzer target for scatter exclusion lists (Terrain3D.scatter_exclusions): parse; on success
 * check the keys' invariants and that suppressing with them removes only listed placements. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/scatter.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_scatter_exclusions ex;
    trn_error e;
    trn_status st = trn_scatter_exclusions_parse((const char *)data, size, "fuzz.json", &ex, &e);
    if (st != TRN_OK) {
        /* A refusal leaves the list empty and says what and where. */
        FUZZ_ASSERT(ex.keys == NULL && ex.count == 0);
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(st == TRN_ERR_NO_MEMORY ||
                    (e.offset >= 0 && e.offset <= (int64_t)size && e.line >= 1 && e.column >= 0));
        return 0;
    }
    /* Keys: nonempty, unique. */
    for (size_t k = 0; k < ex.count; k++) {
        FUZZ_ASSERT(ex.keys[k] && ex.keys[k][0]);
        for (size_t m = 0; m < k && m < 64; m++)
            FUZZ_ASSERT(strcmp(ex.keys[m], ex.keys[k]) != 0);
    }
    /* Suppress from a small fixed set: only instances whose key is listed go, the rest keep
     * their order. */
    trn_scatter_rule rules[2];
    memset(rules, 0, sizeof rules);
    snprintf(rules[0].id, sizeof rules[0].id, "a");
    snprintf(rules[1].id, sizeof rules[1].id, "pine");
    trn_palette palette;
    memset(&palette, 0, sizeof palette);
    palette.rules = rules;
    palette.rule_count = 2;
    trn_instance items[6], orig[6];
    memset(items, 0, sizeof items);
    for (int k = 0; k < 6; k++) {
        items[k].rule = (uint32_t)(k % 2);
        items[k].cx = k;
        items[k].cz = 10 - k;
        items[k].yaw = k;
    }
    memcpy(orig, items, sizeof items);
    trn_instances in = {items, 6};
    size_t suppressed = 0, unmatched = 0;
    FUZZ_ASSERT(trn_instances_suppress(&palette, &in, &ex, &suppressed, &unmatched, &e) == TRN_OK);
    FUZZ_ASSERT(in.count + suppressed == 6 && unmatched <= ex.count);
    FUZZ_ASSERT(ex.count - unmatched == suppressed);
    size_t at = 0;
    for (int k = 0; k < 6; k++) {
        char key[TRN_INSTANCE_KEY_MAX];
        trn_instance_key(&palette, &orig[k], key, sizeof key);
        bool listed = false;
        for (size_t m = 0; m < ex.count && !listed; m++)
            listed = strcmp(ex.keys[m], key) == 0;
        if (listed) continue;
        FUZZ_ASSERT(at < in.count && memcmp(&in.items[at], &orig[k], sizeof orig[k]) == 0);
        at++;
    }
    FUZZ_ASSERT(at == in.count);
    trn_scatter_exclusions_dispose(&ex);
    FUZZ_ASSERT(ex.keys == NULL && ex.count == 0);
    return 0;
}
