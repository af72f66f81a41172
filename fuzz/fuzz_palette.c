/* libFuzzer target for terrain_palette documents: parse; on success check the rules' invariants. */
#include <math.h>
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

static bool id_ok(const char *id)
{
    const char *end = memchr(id, '\0', TRN_PALETTE_ID_MAX);
    size_t n = end ? (size_t)(end - id) : 0;
    if (n == 0) return false;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return false;
    }
    return true;
}

static void band_ok(const trn_scatter_band *b, double lo, double hi)
{
    if (!b->has) return;
    FUZZ_ASSERT(isfinite(b->lo) && isfinite(b->hi) && b->lo <= b->hi);
    FUZZ_ASSERT(b->lo >= lo && b->hi <= hi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_palette p;
    trn_error e;
    trn_status st = trn_palette_parse((const char *)data, size, "fuzz.json", &p, &e);
    if (st != TRN_OK) {
        /* A refusal leaves the palette empty and says what and where. */
        FUZZ_ASSERT(p.name == NULL && p.material_set == NULL && p.rules == NULL &&
                    p.rule_count == 0);
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(st == TRN_ERR_JSON || st == TRN_ERR_VERSION || st == TRN_ERR_LIMIT ||
                    st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(st == TRN_ERR_NO_MEMORY ||
                    (e.offset >= 0 && e.offset <= (int64_t)size && e.line >= 1 && e.column >= 1));
        return 0;
    }
    FUZZ_ASSERT(p.name && *p.name);
    FUZZ_ASSERT(p.material_set || p.rule_count > 0);
    if (p.material_set) FUZZ_ASSERT(strncmp(p.material_set, "asset://", 8) == 0);
    const double mult[] = {p.art_density, p.grass_density, p.tree_density, p.rock_density};
    for (int i = 0; i < 4; i++)
        FUZZ_ASSERT(isfinite(mult[i]) && mult[i] >= 0);
    for (uint32_t i = 0; i < p.rule_count; i++) {
        const trn_scatter_rule *r = &p.rules[i];
        FUZZ_ASSERT(id_ok(r->id));
        for (uint32_t k = 0; k < i; k++)
            FUZZ_ASSERT(strcmp(p.rules[k].id, r->id) != 0);
        /* exactly one geometry; a model rule never collides */
        FUZZ_ASSERT((r->model != NULL) != (r->prefab != NULL));
        if (r->model) FUZZ_ASSERT(r->collision == TRN_COLLISION_NONE);
        FUZZ_ASSERT(r->category <= TRN_CATEGORY_ROCK && r->collision <= TRN_COLLISION_TRIGGER);
        FUZZ_ASSERT(isfinite(r->density) && r->density >= 0);
        FUZZ_ASSERT(isfinite(r->candidate_spacing) && r->candidate_spacing > 0);
        FUZZ_ASSERT(isfinite(r->spacing) && r->spacing >= 0);
        FUZZ_ASSERT(r->scale[0] > 0 && r->scale[0] <= r->scale[1] && isfinite(r->scale[1]));
        FUZZ_ASSERT(isfinite(r->yaw[0]) && isfinite(r->yaw[1]) && r->yaw[0] <= r->yaw[1]);
        band_ok(&r->slope, 0, 90);
        band_ok(&r->moisture, 0, 1);
        band_ok(&r->water_distance, 0, INFINITY);
        FUZZ_ASSERT(isfinite(r->cluster_size) && r->cluster_size > 0);
        FUZZ_ASSERT(r->cluster_strength >= 0 && r->cluster_strength <= 1);
        FUZZ_ASSERT((r->biome_count == 0) == (r->biomes == NULL));
        for (uint32_t b = 0; b < r->biome_count; b++)
            FUZZ_ASSERT(r->biomes[b] && r->biomes[b][0]);
        /* the accepted density fits one instance per candidate site */
        double d = trn_palette_rule_density(&p, r);
        FUZZ_ASSERT(isfinite(d) && d >= 0);
        FUZZ_ASSERT(d == 0 || d * r->candidate_spacing * r->candidate_spacing <= 1);
    }
    trn_palette_dispose(&p);
    FUZZ_ASSERT(p.name == NULL && p.rules == NULL);
    return 0;
}
