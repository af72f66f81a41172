/* Tests for the surface material assignment: precedence, fallbacks, order, engine names, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/roles.h"
#include "test.h"

/* A labels map of cells_x x cells_z cells with the given values and names. */
static void make_labels(trn_labels *l, uint32_t cells_x, uint32_t cells_z, const uint8_t *values,
                        const char *const *names, uint32_t name_count)
{
    CHECK_OK(trn_labels_init(l, cells_x, cells_z, NULL));
    memcpy(l->values, values, ((size_t)cells_x + 1) * (cells_z + 1));
    for (uint32_t k = 0; k < name_count; k++)
        CHECK_OK(trn_labels_add_name(l, names[k], strlen(names[k]), NULL));
}

static int name_index(const trn_surface_materials *m, const char *name)
{
    for (uint32_t k = 0; k < m->labels.name_count; k++)
        if (strcmp(m->labels.names[k], name) == 0) return (int)k;
    return -1;
}

enum {
    G = TRN_ROLE_GROUND,
    GR = TRN_ROLE_GRASS,
    R = TRN_ROLE_ROCK,
    S = TRN_ROLE_SNOW,
    W = TRN_ROLE_WET_GROUND,
    U = TRN_ROLE_UNDERWATER,
    N = TRN_ROLE_NONE
};

/* 3 x 3 cells: meadow (0) and alpine (1) without materials, quarry (2) with marble; a hole. */
static const uint8_t grid_biomes[16] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 255, 0};
static const uint8_t grid_roles[16] = {R, G, GR, N, U, S, S, G, R, W, R, N, G, 200, R, G};

static void grid_input(trn_labels *bl, trn_biome biomes[3], trn_material_set *set,
                       trn_surface_materials_input *in)
{
    static const char *const names[3] = {"meadow", "alpine", "quarry"};
    make_labels(bl, 3, 3, grid_biomes, names, 3);
    memset(biomes, 0, 3 * sizeof *biomes);
    for (int b = 0; b < 3; b++)
        biomes[b].name = (char *)names[b];
    biomes[2].material = (char *)"asset://materials/marble";
    memset(set, 0, sizeof *set);
    set->roles[TRN_ROLE_ROCK] = (char *)"asset://materials/granite";
    set->roles[TRN_ROLE_CLIFF] = (char *)"asset://materials/granite"; /* no cliff samples */
    set->roles[TRN_ROLE_SNOW] = (char *)"asset://materials/snow";
    set->roles[TRN_ROLE_WET_GROUND] = (char *)"asset://materials/snow"; /* a second claim */
    set->roles[TRN_ROLE_UNDERWATER] = (char *)"asset://materials/riverbed";
    memset(in, 0, sizeof *in);
    in->biomes = bl;
    in->roles = grid_roles;
    in->role_count = 16;
    in->recipe_biomes = biomes;
    in->recipe_biome_count = 3;
    in->set = set;
}

/* Explicit > role > tint, sample by sample, in the documented name order. */
static void test_precedence(void)
{
    trn_labels bl;
    trn_biome biomes[3];
    trn_material_set set;
    trn_surface_materials_input in;
    grid_input(&bl, biomes, &set, &in);
    trn_surface_materials m;
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    /* Explicit first, then role bindings in role order, then tints in biome order. */
    static const char *const expect_names[6] = {"asset://materials/marble",
                                                "asset://materials/granite",
                                                "asset://materials/snow",
                                                "asset://materials/riverbed",
                                                "meadow",
                                                "alpine"};
    CHECK_EQ_INT(m.labels.name_count, 6);
    for (int k = 0; k < 6 && k < (int)m.labels.name_count; k++)
        CHECK(strcmp(m.labels.names[k], expect_names[k]) == 0);
    static const uint8_t expect[16] = {1, 4, 4, 4, 3, 2, 2, 5, 1, 2, 0, 0, 0, 0, 255, 4};
    for (int k = 0; k < 16; k++)
        CHECK_EQ_INT(m.labels.values[k], expect[k]);
    static const uint64_t samples[6] = {4, 2, 3, 1, 4, 1};
    for (int k = 0; k < 6; k++)
        CHECK(m.materials[k].samples == samples[k]);
    CHECK_EQ_INT(m.materials[0].source, TRN_SURFACE_EXPLICIT);
    CHECK_EQ_INT(m.materials[0].biome, 2);
    CHECK_EQ_INT(m.materials[0].role, TRN_ROLE_NONE);
    CHECK_EQ_INT(m.materials[1].source, TRN_SURFACE_ROLE);
    CHECK_EQ_INT(m.materials[1].role, TRN_ROLE_ROCK);
    CHECK_EQ_INT(m.materials[1].biome, TRN_LABEL_NONE);
    CHECK_EQ_INT(m.materials[2].role, TRN_ROLE_SNOW); /* snow claims before wet_ground */
    CHECK_EQ_INT(m.materials[4].source, TRN_SURFACE_TINT);
    CHECK_EQ_INT(m.materials[4].biome, 0);
    CHECK_EQ_INT(m.materials[5].biome, 1);
    /* Fallbacks: ground at samples 1, 7, 15; grass at 2; no role at 3 (13 is explicit). */
    CHECK(m.unbound[TRN_ROLE_GROUND] == 3);
    CHECK(m.unbound[TRN_ROLE_GRASS] == 1);
    CHECK(m.unbound[TRN_ROLE_WET_GROUND] == 0);
    CHECK(m.unbound[TRN_ROLE_ROCK] == 0);
    CHECK(m.no_role == 1);
    CHECK(m.holes == 1);
    CHECK(strcmp(trn_surface_source_name(TRN_SURFACE_EXPLICIT), "explicit") == 0);
    CHECK(strcmp(trn_surface_source_name(TRN_SURFACE_ROLE), "role") == 0);
    CHECK(strcmp(trn_surface_source_name(TRN_SURFACE_TINT), "biome") == 0);
    CHECK(strcmp(trn_surface_source_name((trn_surface_source)7), "unknown") == 0);
    char names[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX];
    CHECK_OK(trn_surface_materials_engine_names(&m, names, NULL));
    static const char *const engine[6] = {"marble",   "granite", "snow",
                                          "riverbed", "meadow",  "alpine"};
    for (int k = 0; k < 6; k++)
        CHECK(strcmp(names[k], engine[k]) == 0);
    trn_surface_materials_dispose(&m);
    CHECK(m.labels.values == NULL && m.labels.name_count == 0);
    trn_surface_materials_dispose(NULL);

    /* Without the explicit material the quarry's samples take their roles' bindings or its
     * tint; the unknown role 200 counts as no role. */
    biomes[2].material = (char *)"";
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK(name_index(&m, "asset://materials/marble") < 0);
    CHECK_EQ_INT(m.labels.values[10], name_index(&m, "asset://materials/granite"));
    CHECK_EQ_INT(m.labels.values[11], name_index(&m, "quarry"));
    CHECK(m.no_role == 3);
    CHECK(m.unbound[TRN_ROLE_GROUND] == 4);
    trn_surface_materials_dispose(&m);

    /* No set: every role is unbound; no roles at all: every sample is without a role. */
    biomes[2].material = NULL;
    in.set = NULL;
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK_EQ_INT(m.labels.name_count, 3);
    CHECK(m.unbound[TRN_ROLE_ROCK] == 3 && m.unbound[TRN_ROLE_SNOW] == 2);
    CHECK(m.unbound[TRN_ROLE_UNDERWATER] == 1 && m.no_role == 3);
    trn_surface_materials_dispose(&m);
    in.set = &set;
    in.roles = NULL;
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK(m.no_role == 15 && m.unbound[TRN_ROLE_ROCK] == 0);
    CHECK_EQ_INT(m.labels.name_count, 3);
    CHECK(strcmp(m.labels.names[0], "meadow") == 0);
    trn_surface_materials_dispose(&m);
    /* Without recipe biomes there is no explicit material. */
    in.roles = grid_roles;
    in.recipe_biomes = NULL;
    in.recipe_biome_count = 0;
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK(name_index(&m, "asset://materials/marble") < 0);
    trn_surface_materials_dispose(&m);
    trn_labels_dispose(&bl);
}

/* Engine names: tints keep theirs; derived names are sanitised and take the first free suffix,
 * ignoring case, in label order. */
static void test_engine_names(void)
{
    static const uint8_t biomes[9] = {0, 0, 0, 0, 0, 0, 1, 1, 1};
    static const uint8_t roles[9] = {R, TRN_ROLE_CLIFF, TRN_ROLE_SAND, G, S, N, N, G, G};
    static const char *const names[2] = {"granite", "Granite_2"};
    trn_labels bl;
    make_labels(&bl, 2, 2, biomes, names, 2);
    trn_material_set set;
    memset(&set, 0, sizeof set);
    set.roles[TRN_ROLE_GROUND] = (char *)"asset://d/";
    set.roles[TRN_ROLE_ROCK] = (char *)"asset://a/granite";
    set.roles[TRN_ROLE_CLIFF] = (char *)"asset://b/granite";
    set.roles[TRN_ROLE_SAND] = (char *)"asset://c/GRANITE";
    set.roles[TRN_ROLE_SNOW] = (char *)"asset://e/wet sand.v2";
    trn_surface_materials_input in;
    memset(&in, 0, sizeof in);
    in.biomes = &bl;
    in.roles = roles;
    in.role_count = 9;
    in.set = &set;
    trn_surface_materials m;
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK_EQ_INT(m.labels.name_count, 7);
    /* Zeroed: the names are compared whole below, and the bytes past a name's end are not set. */
    char out[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX];
    memset(out, 0, sizeof out);
    CHECK_OK(trn_surface_materials_engine_names(&m, out, NULL));
    static const char *const expect[7] = {"material",    "granite_3", "granite_4", "GRANITE_5",
                                          "wet_sand_v2", "granite",   "Granite_2"};
    for (int k = 0; k < 7; k++) {
        if (strcmp(out[k], expect[k]) != 0) fprintf(stderr, "name %d: %s\n", k, out[k]);
        CHECK(strcmp(out[k], expect[k]) == 0);
    }
    /* The same input gives the same names. */
    char again[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX];
    memset(again, 0, sizeof again);
    CHECK_OK(trn_surface_materials_engine_names(&m, again, NULL));
    CHECK(memcmp(out, again, 7 * sizeof out[0]) == 0);
    /* A long id is cut to 56 bytes before its suffix. */
    char long_id[128];
    snprintf(long_id, sizeof long_id, "asset://m/%070d", 7);
    set.roles[TRN_ROLE_ROCK] = long_id;
    set.roles[TRN_ROLE_CLIFF] = long_id + 1; /* a different id, the same last part */
    trn_surface_materials_dispose(&m);
    CHECK_OK(trn_surface_materials_assign(&in, &m, NULL));
    CHECK_OK(trn_surface_materials_engine_names(&m, out, NULL));
    CHECK_EQ_INT(strlen(out[1]), 56);
    CHECK_EQ_INT(strlen(out[2]), 58);
    CHECK(strncmp(out[1], out[2], 56) == 0 && strcmp(out[2] + 56, "_2") == 0);
    CHECK_STATUS(trn_surface_materials_engine_names(NULL, out, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_surface_materials_engine_names(&m, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    trn_surface_materials_dispose(&m);
    trn_labels_dispose(&bl);
}

/* Mismatched sizes, unnamed labels, missing inputs and the material limit. */
static void test_errors(void)
{
    trn_labels bl;
    trn_biome biomes[3];
    trn_material_set set;
    trn_surface_materials_input in;
    grid_input(&bl, biomes, &set, &in);
    trn_surface_materials m;
    trn_error e;
    in.role_count = 15;
    CHECK_STATUS(trn_surface_materials_assign(&in, &m, &e), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(e.message, "15 roles for 16 samples (3 x 3 cells)");
    CHECK(m.labels.values == NULL);
    in.role_count = 17;
    CHECK_STATUS(trn_surface_materials_assign(&in, &m, &e), TRN_ERR_MISMATCH);
    in.role_count = 16;
    in.recipe_biome_count = 2;
    CHECK_STATUS(trn_surface_materials_assign(&in, &m, &e), TRN_ERR_MISMATCH);
    CHECK_CONTAINS(e.message, "2 recipe biomes for a map naming 3 biomes");
    in.recipe_biome_count = 3;
    bl.values[5] = 3;
    CHECK_STATUS(trn_surface_materials_assign(&in, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "sample 5: biome label 3, but the map names 3 biomes");
    CHECK(m.labels.values == NULL && m.labels.name_count == 0);
    bl.values[5] = 2;
    CHECK_OK(trn_surface_materials_assign(&in, &m, &e));
    trn_surface_materials_dispose(&m);
    CHECK_STATUS(trn_surface_materials_assign(&in, NULL, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_surface_materials_assign(NULL, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    in.biomes = NULL;
    CHECK_STATUS(trn_surface_materials_assign(&in, &m, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_labels_dispose(&bl);

    /* 255 materials fit: 246 biome tints and 9 role bindings; one more biome is refused. */
    for (int extra = 0; extra < 2; extra++) {
        const uint32_t tints = 246u + (uint32_t)extra;
        uint8_t values[17 * 17], roles[17 * 17];
        memset(values, 255, sizeof values);
        memset(roles, TRN_ROLE_NONE, sizeof roles);
        for (uint32_t k = 0; k < tints; k++)
            values[k] = (uint8_t)k;
        char ids[TRN_ROLE_COUNT][32];
        memset(&set, 0, sizeof set);
        for (uint32_t r = 0; r < TRN_ROLE_COUNT; r++) {
            values[tints + r] = 0;
            roles[tints + r] = (uint8_t)r;
            snprintf(ids[r], sizeof ids[r], "asset://m/r%u", r);
            set.roles[r] = ids[r];
        }
        CHECK_OK(trn_labels_init(&bl, 16, 16, NULL));
        memcpy(bl.values, values, sizeof values);
        for (uint32_t k = 0; k < tints; k++) {
            char name[16];
            snprintf(name, sizeof name, "b%u", k);
            CHECK_OK(trn_labels_add_name(&bl, name, strlen(name), NULL));
        }
        memset(&in, 0, sizeof in);
        in.biomes = &bl;
        in.roles = roles;
        in.role_count = sizeof roles;
        in.set = &set;
        trn_status st = trn_surface_materials_assign(&in, &m, &e);
        if (!extra) {
            CHECK_OK(st);
            CHECK_EQ_INT(m.labels.name_count, 255);
            CHECK(m.holes == 17 * 17 - 255);
        } else {
            CHECK_EQ_INT(st, TRN_ERR_LIMIT);
            CHECK_CONTAINS(e.message, "more than 255 materials ('b246' is one too many)");
            CHECK(m.labels.values == NULL);
        }
        trn_surface_materials_dispose(&m);
        trn_labels_dispose(&bl);
    }
}

int main(void)
{
    RUN(test_precedence);
    RUN(test_engine_names);
    RUN(test_errors);
    return trn_test_finish();
}
