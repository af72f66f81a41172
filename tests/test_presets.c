/* Presets: built-ins parse and generate (golden hashes), terrain_preset documents, projects,
 * and applying a preset (stamps, refusals, keep/clear). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/presets.h"
#include "test.h"

static uint64_t hash_of(const void *data, size_t size)
{
    return (uint64_t)XXH64(data, size, 0);
}

/* Golden hashes of each built-in's heights and biomes (regenerate on purpose only: bump the
 * preset's version when they change). */
static const struct {
    const char *id;
    uint64_t heights, biomes;
} golden[] = {
    {"builtin://terrain/flat-building-site", 0x2a1d10b9f0f32cf5ull, 0xafdcabd92fe120f4ull},
    {"builtin://terrain/desert-dunes", 0x9b96df5083473e75ull, 0xd133f395b303ae8eull},
    {"builtin://terrain/rolling-hills", 0xdd220fbfeaf5e0b7ull, 0xb1d88a115e2cef77ull},
    {"builtin://terrain/mountain-range", 0xfb0edaa8ba8aaea9ull, 0x801658ac6d79767cull},
    {"builtin://terrain/basin", 0xc4188bb85ed3e65cull, 0xd6855078e97b4522ull},
    {"builtin://terrain/plateau", 0x31147c80d4f52ec9ull, 0x0de0c0418da34582ull},
    {"builtin://terrain/coastal-island", 0xd54302226cb78408ull, 0xb66e59aa98116d44ull},
    {"builtin://terrain/drainage-river", 0x2f4edc3c464b71dbull, 0xc908ffdd55130454ull},
};

static void test_builtins(void)
{
    CHECK_EQ_INT(trn_builtin_preset_count(), 8u);
    CHECK(trn_builtin_preset_id(8) == NULL);
    for (uint32_t i = 0; i < trn_builtin_preset_count(); i++) {
        const char *id = trn_builtin_preset_id(i);
        CHECK(strcmp(id, golden[i].id) == 0);
        trn_preset p;
        CHECK_OK(trn_builtin_preset_load(id, &p, NULL));
        CHECK(p.name && *p.name && p.description && strlen(p.description) > 40);
        CHECK(p.recipe.size_x == 128 && p.recipe.size_z == 128);
        CHECK(p.recipe.cells_x == 64 && p.recipe.cells_z == 64);
        CHECK(p.recipe.biome_count >= 3 && p.recipe.rule_count >= 2);
        CHECK(p.version == 1);
        /* the embedded text is an ordinary recipe */
        trn_recipe r;
        const char *text = trn_builtin_preset_text(id);
        CHECK_OK(trn_recipe_parse(text, strlen(text), id, &r, NULL, NULL));
        trn_generated g;
        CHECK_OK(trn_recipe_generate(&r, NULL, &g, NULL, NULL, NULL));
        size_t n = trn_field_sample_count(&g.field);
        uint64_t hh = hash_of(g.field.heights, n * sizeof(float));
        uint64_t hb = hash_of(g.biomes.values, n);
        if (hh != golden[i].heights || hb != golden[i].biomes)
            fprintf(stderr, "    {\"%s\", 0x%016llxull, 0x%016llxull},\n", id,
                    (unsigned long long)hh, (unsigned long long)hb);
        CHECK(hh == golden[i].heights);
        CHECK(hb == golden[i].biomes);
        /* every biome of the preset shows up somewhere: the rules are not dead */
        uint32_t seen[256] = {0};
        for (size_t k = 0; k < n; k++)
            seen[g.biomes.values[k]]++;
        for (uint32_t b = 0; b < r.biome_count; b++) {
            if (!seen[b]) fprintf(stderr, "%s: biome %s unused\n", id, r.biomes[b].name);
            CHECK(seen[b] > 0);
        }
        trn_generated_dispose(&g);
        trn_recipe_dispose(&r);
        trn_preset_dispose(&p);
    }
    trn_preset p;
    trn_error err;
    CHECK_STATUS(trn_builtin_preset_load("builtin://terrain/volcano", &p, &err), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.message, "desert-dunes");
    CHECK(trn_builtin_preset_text("builtin://terrain/volcano") == NULL);
    trn_preset_dispose(NULL);
}

int main(void)
{
    RUN(test_builtins);
    return trn_test_finish();
}
