/* libFuzzer target for the terrain materials reader: parse, and on success serialise, parse,
 * serialise. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/beamng_level.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static bool same_str(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    return strcmp(a, b) == 0;
}

/* JSON values equal, numbers by value: the writer prints whole reals as integers (2.0 as 2),
 * as the engine does, so only the number, not its JSON type, has to survive. */
static bool json_same(const json_t *a, const json_t *b)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_is_integer(a) && json_is_integer(b))
            return json_integer_value(a) == json_integer_value(b);
        return json_number_value(a) == json_number_value(b);
    }
    if (json_typeof(a) != json_typeof(b)) return false;
    if (json_is_object(a)) {
        if (json_object_size(a) != json_object_size(b)) return false;
        const char *k;
        json_t *v;
        json_object_foreach((json_t *)a, k, v)
        {
            const json_t *w = json_object_get(b, k);
            if (!w || !json_same(v, w)) return false;
        }
        return true;
    }
    if (json_is_array(a)) {
        if (json_array_size(a) != json_array_size(b)) return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!json_same(json_array_get(a, i), json_array_get(b, i))) return false;
        return true;
    }
    return json_equal((json_t *)a, (json_t *)b) != 0;
}

/* Kept-as-text extras (unknown fields, other entries): the same JSON objects. */
static bool same_json_text(const char *a, const char *b)
{
    if (!a || !b) return a == b;
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    bool same = json_is_object(ja) && json_is_object(jb) && json_same(ja, jb);
    json_decref(ja);
    json_decref(jb);
    return same;
}

static bool same_doubles(const double *a, const double *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i]) return false;
    return true;
}

static void assert_same_material(const trn_terrain_material *a, const trn_terrain_material *b)
{
    FUZZ_ASSERT(a->key && b->key && strcmp(a->key, b->key) == 0);
    FUZZ_ASSERT(same_str(a->internal_name, b->internal_name));
    FUZZ_ASSERT(same_str(a->persistent_id, b->persistent_id));
    FUZZ_ASSERT(same_str(a->annotation, b->annotation));
    FUZZ_ASSERT(same_str(a->groundmodel_name, b->groundmodel_name));
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++) {
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++) {
            FUZZ_ASSERT(same_str(a->tex[g][s], b->tex[g][s]));
            FUZZ_ASSERT(a->tex_size[g][s] == b->tex_size[g][s]);
        }
        for (int s = 0; s < 2; s++) {
            FUZZ_ASSERT(a->has_strength[g][s] == b->has_strength[g][s]);
            if (a->has_strength[g][s])
                FUZZ_ASSERT(same_doubles(a->strength[g][s], b->strength[g][s], 2));
        }
    }
    FUZZ_ASSERT(a->has_macro_distances == b->has_macro_distances);
    FUZZ_ASSERT(a->has_detail_distances == b->has_detail_distances);
    FUZZ_ASSERT(a->has_macro_dist_atten == b->has_macro_dist_atten);
    FUZZ_ASSERT(a->has_detail_dist_atten == b->has_detail_dist_atten);
    if (a->has_macro_distances)
        FUZZ_ASSERT(same_doubles(a->macro_distances, b->macro_distances, 4));
    if (a->has_detail_distances)
        FUZZ_ASSERT(same_doubles(a->detail_distances, b->detail_distances, 4));
    if (a->has_macro_dist_atten)
        FUZZ_ASSERT(same_doubles(a->macro_dist_atten, b->macro_dist_atten, 2));
    if (a->has_detail_dist_atten)
        FUZZ_ASSERT(same_doubles(a->detail_dist_atten, b->detail_dist_atten, 2));
    FUZZ_ASSERT(same_str(a->diffuse_map, b->diffuse_map));
    FUZZ_ASSERT(same_str(a->normal_map, b->normal_map));
    FUZZ_ASSERT(same_str(a->detail_map, b->detail_map));
    FUZZ_ASSERT(same_str(a->macro_map, b->macro_map));
    FUZZ_ASSERT(a->diffuse_size == b->diffuse_size);
    FUZZ_ASSERT(a->detail_size == b->detail_size);
    FUZZ_ASSERT(a->macro_size == b->macro_size);
    FUZZ_ASSERT(a->detail_strength == b->detail_strength);
    FUZZ_ASSERT(a->macro_strength == b->macro_strength);
    FUZZ_ASSERT(a->detail_distance == b->detail_distance);
    FUZZ_ASSERT(a->macro_distance == b->macro_distance);
    FUZZ_ASSERT(same_json_text(a->extra_json, b->extra_json));
    FUZZ_ASSERT(trn_terrain_material_is_v1(a) == trn_terrain_material_is_v1(b));
}

static void assert_same(const trn_material_file *a, const trn_material_file *b)
{
    FUZZ_ASSERT(a->material_count == b->material_count);
    FUZZ_ASSERT(a->texture_set_count == b->texture_set_count);
    for (uint32_t i = 0; i < a->material_count; i++)
        assert_same_material(&a->materials[i], &b->materials[i]);
    for (uint32_t i = 0; i < a->texture_set_count; i++) {
        const trn_texture_set *x = &a->texture_sets[i], *y = &b->texture_sets[i];
        FUZZ_ASSERT(x->key && y->key && strcmp(x->key, y->key) == 0);
        FUZZ_ASSERT(x->name && y->name && strcmp(x->name, y->name) == 0);
        FUZZ_ASSERT(same_str(x->persistent_id, y->persistent_id));
        for (int k = 0; k < 2; k++) {
            FUZZ_ASSERT(x->base_tex_size[k] == y->base_tex_size[k]);
            FUZZ_ASSERT(x->macro_tex_size[k] == y->macro_tex_size[k]);
            FUZZ_ASSERT(x->detail_tex_size[k] == y->detail_tex_size[k]);
        }
        FUZZ_ASSERT(same_json_text(x->extra_json, y->extra_json));
    }
    FUZZ_ASSERT(same_json_text(a->other_json, b->other_json));
}

/* What the reader gives is what the file said: finite numbers, sizes a texture can have. */
static void assert_sane(const trn_material_file *mf)
{
    FUZZ_ASSERT(mf->material_count == 0 || mf->materials != NULL);
    FUZZ_ASSERT(mf->texture_set_count == 0 || mf->texture_sets != NULL);
    for (uint32_t i = 0; i < mf->material_count; i++) {
        const trn_terrain_material *m = &mf->materials[i];
        FUZZ_ASSERT(m->key != NULL);
        /* persistentId is read into its field (an empty one is none), never kept as extra. */
        FUZZ_ASSERT(!m->persistent_id || m->persistent_id[0] != '\0');
        /* Only the top level: a nested object may have its own persistentId key. */
        if (m->extra_json) {
            json_t *extra = json_loads(m->extra_json, 0, NULL);
            FUZZ_ASSERT(json_is_object(extra));
            FUZZ_ASSERT(!json_object_get(extra, "persistentId"));
            json_decref(extra);
        }
        for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
            for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++) {
                FUZZ_ASSERT(isfinite(m->tex_size[g][s]));
                FUZZ_ASSERT(!m->tex[g][s] || m->tex[g][s][0] != '\0');
            }
    }
    for (uint32_t i = 0; i < mf->texture_set_count; i++) {
        const trn_texture_set *ts = &mf->texture_sets[i];
        FUZZ_ASSERT(ts->key != NULL && ts->name != NULL);
        FUZZ_ASSERT(ts->base_tex_size[0] <= 65536 && ts->base_tex_size[1] <= 65536);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_material_file mf;
    trn_error e;
    if (trn_material_file_parse((const char *)data, size, "fuzz.materials.json", &mf, &e) !=
        TRN_OK) {
        FUZZ_ASSERT(mf.materials == NULL && mf.texture_sets == NULL && mf.other_json == NULL);
        FUZZ_ASSERT(mf.material_count == 0 && mf.texture_set_count == 0);
        FUZZ_ASSERT(e.code == TRN_ERR_JSON || e.code == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.message[0] != '\0');
        FUZZ_ASSERT(e.offset >= -1 && e.offset <= (int64_t)size);
        return 0;
    }
    assert_sane(&mf);
    for (uint32_t i = 0; i < mf.material_count; i++) {
        trn_terrain_material up;
        /* The v1 -> v1.5 upgrade must take anything the reader accepts. */
        FUZZ_ASSERT(trn_terrain_material_upgrade(&mf.materials[i], &up, &e) == TRN_OK);
        trn_terrain_material_dispose(&up);
    }

    char *text1 = NULL, *text2 = NULL;
    size_t n1 = 0, n2 = 0;
    FUZZ_ASSERT(trn_material_file_serialize(&mf, &text1, &n1, &e) == TRN_OK);
    FUZZ_ASSERT(text1 && n1 == strlen(text1) && n1 > 0 && text1[n1 - 1] == '\n');

    trn_material_file mf2;
    trn_status st = trn_material_file_parse(text1, n1, "again.materials.json", &mf2, &e);
    if (st) fprintf(stderr, "re-parse failed: %s\n%s", e.message, text1);
    FUZZ_ASSERT(st == TRN_OK);
    assert_same(&mf, &mf2);
    FUZZ_ASSERT(trn_material_file_serialize(&mf2, &text2, &n2, &e) == TRN_OK);
    if (n1 != n2 || memcmp(text1, text2, n1) != 0)
        fprintf(stderr, "first:\n%s\nsecond:\n%s", text1, text2);
    FUZZ_ASSERT(n1 == n2 && memcmp(text1, text2, n1) == 0);

    free(text1);
    free(text2);
    trn_material_file_dispose(&mf2);
    trn_material_file_dispose(&mf);
    trn_material_file_dispose(NULL);
    return 0;
}
