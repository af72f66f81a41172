/* Unity SerializedFile and TerrainData: real files, synthetic files of several versions and byte
 * orders, errors, export. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include "formats/unity/unity_internal.h"
#include "terrane/image.h"
#include "terrane/unity.h"
#include "test.h"
#include "unity_writer.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

static void test_common_strings(void)
{
    CHECK(strcmp(trn_unity_common_string(0), "AABB") == 0);
    CHECK(strcmp(trn_unity_common_string(222), "int") == 0);
    CHECK(strcmp(trn_unity_common_string(1161), "Hash128") == 0);
    CHECK(strcmp(trn_unity_common_string(1200), "EntityId") == 0);
    CHECK(strcmp(trn_unity_common_string(981), "vector") == 0);
    CHECK(trn_unity_common_string(1) == NULL); /* inside "AABB", not a string start */
    CHECK(trn_unity_common_string(1209) == NULL);
    CHECK(trn_unity_common_string(0x7fffffff) == NULL);
}

static void test_real_2021(void)
{
    char path[1024];
    if (!trn_test_real_path("unity_2021.3.1f1_Terrain.asset", path, sizeof path)) return;
    trn_unity_file f;
    trn_error e;
    CHECK_OK(trn_unity_file_read(path, NULL, &f, &e));
    CHECK_EQ_INT(f.version, 22);
    CHECK(!f.big_endian);
    CHECK(strcmp(f.unity_version, "2021.3.1f1") == 0);
    CHECK_EQ_INT(f.target_platform, -2);
    CHECK_EQ_INT(f.file_size, 557080);
    CHECK_EQ_INT(f.data_offset, 5984);
    CHECK_EQ_INT(f.object_count, 1);
    CHECK_EQ_INT(f.objects[0].class_id, 156);
    CHECK_EQ_INT(f.objects[0].path_id, 15600000);
    trn_unity_terrain t;
    CHECK_OK(trn_unity_terrain_from_file(&f, 0, NULL, &t, &e));
    CHECK_EQ_INT(t.resolution, 513);
    CHECK(t.scale[0] == 1.953125f && t.scale[1] == 600.0f && t.scale[2] == 1.953125f);
    CHECK(strcmp(t.name, "Terrain") == 0);
    CHECK_EQ_INT(t.layer_count, 0);
    CHECK_EQ_INT(t.tree_count, 0);
    CHECK_EQ_INT(t.hole_count, 0);
    CHECK(t.holes == NULL);
    CHECK_EQ_INT(t.alphamap_resolution, 512);
    /* Byte for byte: the heights follow their element count 513 * 513 in the file, int16
     * little-endian; found by searching the bytes, not through the reader. */
    size_t n = 513u * 513u;
    const uint8_t *p = NULL;
    for (size_t k = 0; k + 4 < f.size && !p; k++)
        if (trn_unity_load(f.data + k, 4, false) == n) p = f.data + k + 4;
    CHECK(p != NULL);
    long long sum = 0;
    int lo = 99999, hi = -99999;
    size_t mismatches = 0, at_max = 0;
    for (size_t k = 0; p && k < n; k++) {
        int16_t v = (int16_t)trn_unity_load(p + 2 * k, 2, false);
        mismatches += v != t.heights[k];
        sum += t.heights[k];
        if (t.heights[k] < lo) lo = t.heights[k];
        if (t.heights[k] > hi) hi = t.heights[k], at_max = k;
    }
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(lo, 0);
    CHECK_EQ_INT(hi, 675);
    CHECK_EQ_INT(at_max, 17517);
    CHECK_EQ_INT(sum, 1934622);
    CHECK_EQ_INT(t.heights[11], 7);
    /* README: a stored value v is v / 32766 of m_Scale.y. */
    CHECK(fabs(trn_unity_height_metres(&t, 675) - 675.0 / 32766.0 * 600.0) < 1e-9);
    trn_field field;
    CHECK_OK(trn_unity_terrain_to_field(&t, &field, &e));
    CHECK_EQ_INT(field.cells_x, 512);
    CHECK(field.size_x == 1000.0 && field.size_z == 1000.0);
    CHECK(fabs(field.heights[17517] - 675.0 / 32766.0 * 600.0) < 1e-4);
    CHECK(fabs(field.quantum - 600.0 / 32766.0) < 1e-12);
    trn_field_dispose(&field);
    trn_unity_terrain_dispose(&t);
    trn_unity_file_dispose(&f);
}

static void test_real_56(void)
{
    char path[1024];
    if (!trn_test_real_path("unity_5.6.0f3_NewTerrain.asset", path, sizeof path)) return;
    trn_unity_file f;
    trn_error e;
    CHECK_OK(trn_unity_file_read(path, NULL, &f, &e));
    CHECK_EQ_INT(f.version, 17);
    CHECK(strcmp(f.unity_version, "5.6.0f3") == 0);
    CHECK_EQ_INT(f.object_count, 2);
    CHECK_EQ_INT(f.objects[1].class_id, 28);
    CHECK_EQ_INT(f.external_count, 1);
    trn_unity_terrain t;
    CHECK_OK(trn_unity_terrain_from_file(&f, 0, NULL, &t, &e));
    CHECK_EQ_INT(t.resolution, 513); /* from m_Width / m_Height */
    CHECK(t.scale[0] == 3.90625f && t.scale[1] == 600.0f && t.scale[2] == 3.90625f);
    int hi = 0;
    for (size_t k = 0; k < 513u * 513u; k++)
        if (t.heights[k] != 0) hi = 1;
    CHECK_EQ_INT(hi, 0); /* a new, flat terrain */
    CHECK_EQ_INT(t.layer_count, 1);
    CHECK(t.layers[0].is_splat_prototype);
    CHECK_EQ_INT(t.layers[0].ref.file_id, 1);
    CHECK_EQ_INT(t.layers[0].ref.path_id, 2800000);
    CHECK_EQ_INT(t.alphamap_count, 1);
    const trn_unity_alphamap *a = &t.alphamaps[0];
    CHECK(strcmp(a->name, "SplatAlpha 0") == 0);
    CHECK(a->found);
    CHECK_EQ_INT(a->width, 512);
    CHECK_EQ_INT(a->height, 512);
    CHECK_EQ_INT(a->format, 5);
    CHECK_EQ_INT(a->mip_count, 10);
    /* ARGB32 stored (0, 255, 0, 0) per texel: all weight on layer 0 (R). */
    size_t other = 0;
    for (size_t k = 0; a->rgba && k < 512u * 512u; k++)
        other +=
            a->rgba[4 * k] != 255 || a->rgba[4 * k + 1] || a->rgba[4 * k + 2] || a->rgba[4 * k + 3];
    CHECK_EQ_INT(other, 0);
    CHECK(trn_unity_terrain_weight(&t, 0, 0.3, 0.7) == 1.0f);
    trn_labels labels;
    CHECK_OK(trn_unity_terrain_to_labels(&t, &labels, &e));
    CHECK_EQ_INT(labels.name_count, 1);
    CHECK_EQ_INT(labels.values[12345], 0);
    trn_labels_dispose(&labels);
    trn_unity_terrain_dispose(&t);
    trn_unity_file_dispose(&f);
}

static int16_t *make_heights(uint32_t res)
{
    int16_t *h = malloc(sizeof *h * res * res);
    for (uint32_t j = 0; j < res; j++)
        for (uint32_t i = 0; i < res; i++)
            h[j * res + i] = (int16_t)(i * 100 + j * 7);
    return h;
}

static void check_synthetic(uint32_t version, bool be)
{
    uint32_t res = 33;
    int16_t *h = make_heights(res);
    uint8_t *holes = malloc(32 * 32);
    memset(holes, 1, 32 * 32);
    holes[5 * 32 + 7] = 0;
    holes[31 * 32 + 31] = 0;
    uwr_terrain_spec s = {res, {2.0f, 300.0f, 3.0f}, h, holes, 5, 2, 3, false};
    size_t size;
    uint8_t *file = uwr_terrain_file(version, be, &s, &size, NULL);
    trn_unity_file f;
    trn_error e;
    CHECK_OK(trn_unity_file_parse(file, size, "synth.asset", NULL, &f, &e));
    CHECK_EQ_INT(f.version, version);
    CHECK(f.big_endian == be);
    CHECK_EQ_INT(f.object_count, 8);
    CHECK_EQ_INT(f.external_count, 1);
    CHECK(f.external_count && strcmp(f.externals[0].path, "Assets/Other.asset") == 0);
    trn_unity_terrain t;
    trn_status st = trn_unity_terrain_from_file(&f, 0, NULL, &t, &e);
    CHECK_OK(st);
    if (st) {
        fprintf(stderr, "  v%u be %d: %s\n", version, be, e.message);
        trn_unity_file_dispose(&f);
        free(file), free(h), free(holes);
        return;
    }
    CHECK_EQ_INT(t.resolution, 33);
    CHECK(t.scale[0] == 2.0f && t.scale[1] == 300.0f && t.scale[2] == 3.0f);
    CHECK_EQ_INT(t.heights[5 * 33 + 4], 4 * 100 + 5 * 7);
    CHECK_EQ_INT(t.heights[32 * 33 + 32], 3200 + 224);
    CHECK_EQ_INT(t.hole_count, 32 * 32);
    CHECK_EQ_INT(t.holes[5 * 32 + 7], 0);
    CHECK_EQ_INT(t.holes[5 * 32 + 8], 1);
    CHECK_EQ_INT(t.layer_count, 5);
    CHECK(strcmp(t.layers[3].name, "Layer3") == 0);
    CHECK(!t.layers[0].is_splat_prototype);
    CHECK_EQ_INT(t.layers[4].ref.path_id, 104);
    CHECK_EQ_INT(t.alphamap_count, 2);
    CHECK(t.alphamaps[1].found && t.alphamaps[1].format == 5);
    CHECK(strcmp(t.alphamaps[1].name, "SplatAlpha 1") == 0);
    /* Texel (x=3, z=2) of texture 1 favours channel (3 + 2 + 1) % 4 = 2, both formats. */
    CHECK_EQ_INT(t.alphamaps[1].rgba[(2 * 16 + 3) * 4 + 2], 200);
    CHECK_EQ_INT(t.alphamaps[1].rgba[(2 * 16 + 3) * 4 + 3], 10);
    CHECK_EQ_INT(t.alphamaps[0].rgba[(2 * 16 + 3) * 4 + 1], 200);
    CHECK_EQ_INT(t.alphamap_resolution, 16);
    CHECK_EQ_INT(t.tree_count, 3);
    CHECK(fabs(t.trees[2].position[0] - 0.5f) < 1e-6 && t.trees[2].position[1] == 0.25f);
    CHECK(t.trees[1].width_scale == 2.0f && t.trees[1].height_scale == 3.0f);
    CHECK(t.trees[2].rotation == 1.0f);
    CHECK_EQ_INT(t.trees[1].color, 0xff804021u);
    CHECK_EQ_INT(t.trees[1].prototype, 1);
    CHECK_EQ_INT(t.prototype_count, 2);
    CHECK_EQ_INT(t.prototypes[1].prefab.path_id, 5001);
    CHECK_EQ_INT(t.prototypes[1].prefab.file_id, 1);
    trn_labels labels;
    CHECK_OK(trn_unity_terrain_to_labels(&t, &labels, &e));
    CHECK_EQ_INT(labels.name_count, 5);
    CHECK_EQ_INT(labels.values[5 * 33 + 7], TRN_LABEL_NONE);   /* cell (7, 5) is a hole */
    CHECK_EQ_INT(labels.values[32 * 33 + 32], TRN_LABEL_NONE); /* last row uses cell 31 */
    /* Sample (16, 16) sits between texels; texels 7/8 of texture 0 favour layers 2 and 3
     * there, layer 4 is in texture 1's R: weights of a layer never exceed 200/255. */
    CHECK(labels.values[16 * 33 + 16] < 5);
    trn_labels_dispose(&labels);
    trn_unity_terrain_dispose(&t);
    trn_unity_file_dispose(&f);
    free(file);
    free(h);
    free(holes);
}

static void test_synthetic_versions(void)
{
    static const uint32_t versions[] = {17, 19, 20, 21, 22};
    for (size_t k = 0; k < sizeof versions / sizeof versions[0]; k++) {
        check_synthetic(versions[k], false);
        check_synthetic(versions[k], true);
    }
}

static void test_old_layout(void)
{
    int16_t *h = make_heights(65);
    uwr_terrain_spec s = {65, {1.0f, 50.0f, 1.0f}, h, NULL, 0, 0, 0, true};
    size_t size;
    uwr_layout lay;
    uint8_t *file = uwr_terrain_file(17, false, &s, &size, &lay);
    trn_unity_file f;
    trn_unity_terrain t;
    trn_error e;
    CHECK_OK(trn_unity_file_parse(file, size, NULL, NULL, &f, &e));
    CHECK_OK(trn_unity_terrain_from_file(&f, 1, NULL, &t, &e));
    CHECK_EQ_INT(t.resolution, 65);
    CHECK(t.holes == NULL);
    CHECK_STATUS(trn_unity_terrain_to_labels(&t, &(trn_labels){0}, &e), TRN_ERR_NOT_FOUND);
    trn_unity_terrain_dispose(&t);
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 77, NULL, &t, &e), TRN_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.message, "path id 77");
    trn_unity_file_dispose(&f);
    /* m_Width and m_Height (before m_Scale): a non-square one points at m_Height, a bad
     * width at m_Width. */
    const int64_t height_at = (int64_t)(lay.object_offset[0] + lay.object_size[0] - 16);
    const int64_t width_at = height_at - 4;
    uint32_t v = 64;
    memcpy(file + height_at, &v, 4);
    CHECK_OK(trn_unity_file_parse(file, size, NULL, NULL, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 1, NULL, &t, &e), TRN_ERR_UNSUPPORTED);
    CHECK_EQ_INT(e.offset, height_at);
    CHECK_CONTAINS(e.message, "65 x 64");
    trn_unity_file_dispose(&f);
    v = 1;
    memcpy(file + height_at, &v, 4);
    memcpy(file + width_at, &v, 4);
    CHECK_OK(trn_unity_file_parse(file, size, NULL, NULL, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 1, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, width_at);
    CHECK_CONTAINS(e.message, "m_Width: heightmap resolution 1");
    trn_unity_file_dispose(&f);
    free(file);
    free(h);
}

/* Errors: each with its code and offset. */
static void test_errors(void)
{
    int16_t *h = make_heights(33);
    uwr_terrain_spec s = {33, {1.0f, 10.0f, 1.0f}, h, NULL, 1, 1, 1, false};
    size_t size;
    uwr_layout lay;
    uint8_t *file = uwr_terrain_file(19, false, &s, &size, &lay);
    uint8_t *copy = malloc(size);
    trn_unity_file f;
    trn_unity_terrain t;
    trn_error e;

    /* Cut anywhere: the header's file size is checked first (offset = the actual length). */
    for (size_t cut = 20; cut < size; cut += 97) {
        CHECK_STATUS(trn_unity_file_parse(file, cut, "cut.asset", NULL, &f, &e), TRN_ERR_TRUNCATED);
        CHECK_EQ_INT(e.offset, (int64_t)cut);
        CHECK(f.types == NULL && f.object_count == 0);
    }
    CHECK_STATUS(trn_unity_file_parse(file, 10, NULL, NULL, &f, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 10);

    /* Metadata cut short at many points (smaller metadata size): the error lies inside it. */
    int truncated = 0;
    for (size_t m = 1; m < lay.metadata_size; m += 13) {
        memcpy(copy, file, size);
        copy[0] = (uint8_t)(m >> 24), copy[1] = (uint8_t)(m >> 16);
        copy[2] = (uint8_t)(m >> 8), copy[3] = (uint8_t)m;
        trn_status st = trn_unity_file_parse(copy, size, NULL, NULL, &f, &e);
        CHECK(st != TRN_OK);
        truncated += st == TRN_ERR_TRUNCATED;
        CHECK(e.offset >= (int64_t)lay.header_size && e.offset <= (int64_t)(lay.header_size + m));
    }
    CHECK(truncated > (int)(lay.metadata_size / 13) - 3);
    /* Exactly: cut inside the Unity version string. */
    memcpy(copy, file, size);
    copy[3] = 5;
    copy[0] = copy[1] = copy[2] = 0;
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, 20);
    CHECK_CONTAINS(e.message, "Unity version");

    /* The TerrainData one byte short: its last float (m_Scale.z) cannot be read. */
    memcpy(copy, file, size);
    size_t at = lay.object_size_field[0];
    uint32_t osz = (uint32_t)lay.object_size[0] - 1;
    memcpy(copy + at, &osz, 4); /* little-endian file on a little-endian host */
    CHECK_OK(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, NULL, &t, &e), TRN_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, (int64_t)(lay.object_offset[0] + lay.object_size[0] - 4));
    CHECK_CONTAINS(e.message, "'z'");
    trn_unity_file_dispose(&f);
    /* One byte long: the tree does not cover the object. */
    osz = (uint32_t)lay.object_size[0] + 1;
    memcpy(copy + at, &osz, 4);
    CHECK_OK(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, (int64_t)(lay.object_offset[0] + lay.object_size[0]));
    trn_unity_file_dispose(&f);

    /* No type trees. */
    memcpy(copy, file, size);
    copy[lay.tree_flag_at] = 0;
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_UNSUPPORTED);
    CHECK_EQ_INT(e.offset, (int64_t)lay.tree_flag_at);
    CHECK_CONTAINS(e.message, "no type trees");

    /* Versions out of range, bad endianness flag. */
    memcpy(copy, file, size);
    copy[11] = 8;
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_VERSION);
    CHECK_EQ_INT(e.offset, 8);
    memcpy(copy, file, size);
    copy[16] = 2;
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, 16);

    /* The first node's type string offset: node array starts after class id, stripped flag,
     * script index, hash, node count and string size. */
    size_t nodes_at = lay.tree_flag_at + 1 + 4 + 4 + 1 + 2 + 16 + 8;
    memcpy(copy, file, size);
    uint32_t bad = 0x80000001u; /* inside "AABB" */
    memcpy(copy + nodes_at + 4, &bad, 4);
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, (int64_t)(nodes_at + 4));
    CHECK_CONTAINS(e.message, "common string");
    /* The second node claiming level 3 after the root. */
    memcpy(copy, file, size);
    copy[nodes_at + 32 + 2] = 3;
    CHECK_STATUS(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, (int64_t)(nodes_at + 32 + 2));
    /* Limits. */
    trn_unity_limits lim;
    trn_unity_limits_default(&lim);
    lim.max_nodes = 10;
    CHECK_STATUS(trn_unity_file_parse(file, size, NULL, &lim, &f, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, (int64_t)(nodes_at - 8));
    trn_unity_limits_default(&lim);
    lim.max_array_elements = 1000; /* 33 * 33 heights */
    CHECK_OK(trn_unity_file_parse(file, size, NULL, &lim, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "1089 elements");
    trn_unity_file_dispose(&f);
    /* Size errors point at m_Resolution itself (the last int before m_Scale), not at
     * m_Heightmap or m_Heights, which start the heightmap. */
    const int64_t res_at = (int64_t)(lay.object_offset[0] + lay.object_size[0] - 16);
    uint32_t stored_res;
    memcpy(&stored_res, file + res_at, 4);
    CHECK_EQ_INT(stored_res, 33);
    trn_unity_limits_default(&lim);
    lim.max_resolution = 32;
    CHECK_OK(trn_unity_file_parse(file, size, NULL, &lim, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, res_at);
    CHECK_CONTAINS(e.message, "m_Resolution: heightmap resolution 33, expected 2..32");
    trn_unity_file_dispose(&f);
    /* The sample limit: 33 x 33 = 1089 is accepted at 1089, refused at 1088. */
    trn_unity_limits_default(&lim);
    CHECK(lim.max_samples == 1227133513u);
    CHECK(lim.max_samples == TRN_UNITY_DEFAULT_MAX_SAMPLES);
    lim.max_samples = 1089;
    CHECK_OK(trn_unity_file_parse(file, size, "u.asset", &lim, &f, &e));
    CHECK_OK(trn_unity_terrain_from_file(&f, 0, &lim, &t, &e));
    trn_unity_terrain_dispose(&t);
    lim.max_samples = 1088;
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, &lim, &t, &e), TRN_ERR_LIMIT);
    CHECK_EQ_INT(e.offset, res_at);
    CHECK(strcmp(e.file, "u.asset") == 0);
    CHECK_CONTAINS(e.message, "33 x 33 = 1089 samples, more than the limit of 1088");
    CHECK_CONTAINS(e.message, "--max-samples");
    CHECK(t.heights == NULL);
    trn_unity_file_dispose(&f);
    /* A resolution of 1: a format error, at the same field. */
    memcpy(copy, file, size);
    uint32_t one = 1;
    memcpy(copy + res_at, &one, 4);
    CHECK_OK(trn_unity_file_parse(copy, size, NULL, NULL, &f, &e));
    CHECK_STATUS(trn_unity_terrain_from_file(&f, 0, NULL, &t, &e), TRN_ERR_FORMAT);
    CHECK_EQ_INT(e.offset, res_at);
    trn_unity_file_dispose(&f);
    /* Not a Unity file at all. */
    CHECK(!trn_unity_sniff((const uint8_t *)"\x89PNG\r\n\x1a\n0000000000000000000000", 24));
    CHECK(trn_unity_sniff(file, 64));
    free(copy);
    free(file);
    free(h);
}

static void test_export(void)
{
    trn_field field;
    CHECK_OK(trn_field_init(&field, 64, 64, 128.0, 64.0, NULL));
    for (uint32_t j = 0; j <= 64; j++)
        for (uint32_t i = 0; i <= 64; i++)
            field.heights[j * 65 + i] = (float)(i + 2 * j);
    trn_labels labels;
    CHECK_OK(trn_labels_init(&labels, 64, 64, NULL));
    for (int k = 0; k < 6; k++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", k);
        CHECK_OK(trn_labels_add_name(&labels, name, strlen(name), NULL));
    }
    for (uint32_t k = 0; k < 65 * 65; k++)
        labels.values[k] = (uint8_t)((k % 65) / 11);
    labels.values[0] = TRN_LABEL_NONE;
    char dir[600], path[700];
    tmp_path(dir, sizeof dir, "export");
    trn_unity_export_options o;
    trn_unity_export_options_default(&o);
    o.tiles_x = o.tiles_z = 2;
    o.name = "T";
    trn_unity_export_report rep;
    trn_error e;
    CHECK_OK(trn_unity_export(dir, &field, &labels, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.resolution, 33);
    CHECK(rep.tile_size[0] == 64.0 && rep.tile_size[2] == 32.0);
    CHECK(rep.height_base == 0.0 && rep.tile_size[1] == 192.0);
    CHECK_EQ_INT(rep.splat_textures, 2);
    CHECK(rep.holes);
    size_t n00, n10, n01;
    uint8_t *t00 = trn_test_read_file(tmp_path(path, sizeof path, "export/T_0_0.raw"), &n00);
    uint8_t *t10 = trn_test_read_file(tmp_path(path, sizeof path, "export/T_1_0.raw"), &n10);
    uint8_t *t01 = trn_test_read_file(tmp_path(path, sizeof path, "export/T_0_1.raw"), &n01);
    CHECK_EQ_INT(n00, 33 * 33 * 2);
    if (t00 && t10 && t01 && n00 == n10 && n00 == n01) {
        /* Shared edges: T_0_0's last column is T_1_0's first, its last row T_0_1's first. */
        size_t diff = 0;
        for (int r = 0; r < 33; r++)
            diff += memcmp(t00 + (r * 33 + 32) * 2, t10 + (r * 33) * 2, 2) != 0;
        diff += memcmp(t00 + 32 * 33 * 2, t01, 33 * 2) != 0;
        CHECK_EQ_INT(diff, 0);
        /* Little-endian; sample (32, 32) = 32 + 64 = 96 m of 192 -> 32768 (rounded). */
        unsigned v = (unsigned)(t00[(32 * 33 + 32) * 2] | (t00[(32 * 33 + 32) * 2 + 1] << 8));
        CHECK_EQ_INT(v, 32768);
    }
    free(t00), free(t10), free(t01);
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "export/T_1_1.json")));
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "export/T_1_1_splat1.png")));
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "export/T_0_0_holes.png")));
    /* Splat weights sum to 255 per texel. */
    trn_image a, b;
    CHECK_OK(trn_png_read(tmp_path(path, sizeof path, "export/T_1_0_splat0.png"), NULL, &a, &e));
    CHECK_OK(trn_png_read(tmp_path(path, sizeof path, "export/T_1_0_splat1.png"), NULL, &b, &e));
    size_t bad = 0;
    for (size_t k = 0; a.data && b.data && k < 32u * 32u; k++) {
        unsigned s = 0;
        for (int c = 0; c < 4; c++)
            s += ((uint8_t *)a.data)[k * 4 + c] + ((uint8_t *)b.data)[k * 4 + c];
        bad += s != 255;
    }
    CHECK_EQ_INT(bad, 0);
    trn_image_dispose(&a), trn_image_dispose(&b);

    /* Big-endian and flipped: RAW row 0 is the far edge (z = 64: 0 + 128 m of 0..192). */
    o.tiles_x = o.tiles_z = 1;
    o.big_endian = true;
    o.flip = true;
    o.name = "one";
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.resolution, 65);
    CHECK_EQ_INT(rep.splat_textures, 0);
    size_t nn;
    uint8_t *raw = trn_test_read_file(tmp_path(path, sizeof path, "export/one.raw"), &nn);
    CHECK_EQ_INT(nn, 65 * 65 * 2);
    if (raw && nn == 65 * 65 * 2) {
        CHECK_EQ_INT((raw[0] << 8) | raw[1], 43690);
        CHECK_EQ_INT((raw[(64 * 65) * 2] << 8) | raw[(64 * 65) * 2 + 1], 0);
    }
    free(raw);
    trn_field_dispose(&field);
    trn_labels_dispose(&labels);

    /* 51 samples: never silently changed; resample keeps the size, pad grows it. */
    CHECK_OK(trn_field_init(&field, 50, 50, 100.0, 100.0, NULL));
    for (size_t k = 0; k < 51u * 51u; k++)
        field.heights[k] = (float)(k % 51);
    trn_unity_export_options_default(&o);
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "--fit resample");
    CHECK_CONTAINS(e.message, "51 x 51");
    o.resolution = 33;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "--fit pad");
    o.fit = TRN_UNITY_FIT_RESAMPLE;
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.resolution, 33);
    CHECK(rep.tile_size[0] == 100.0);
    o.fit = TRN_UNITY_FIT_PAD;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT); /* pad cannot shrink */
    CHECK_CONTAINS(e.message, "cannot shrink");
    o.resolution = 0; /* the smallest that covers 51: 65 */
    o.name = "padded";
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.resolution, 65);
    CHECK(rep.tile_size[0] == 128.0);
    /* The 14 added columns fall from the east edge (50 m, RAW 65535) to the lowest height (0 m,
     * RAW 0) at the far border; none repeats the edge. */
    size_t pn = 0;
    uint8_t *praw = trn_test_read_file(tmp_path(path, sizeof path, "export/padded.raw"), &pn);
    CHECK_EQ_INT(pn, 65 * 65 * 2);
    if (praw && pn == 65 * 65 * 2) {
        size_t border = 0, falling = 0, edge = 0;
        for (uint32_t j = 0; j < 51; j++) {
            const uint8_t *r = praw + (size_t)j * 65 * 2;
            const unsigned at50 = r[100] | r[101] << 8, at57 = r[114] | r[115] << 8,
                           at64 = r[128] | r[129] << 8;
            edge += at50 == 65535;
            border += at64 == 0;
            falling += at57 > 0 && at57 < 65535;
        }
        CHECK_EQ_INT(edge, 51);
        CHECK_EQ_INT(border, 51);
        CHECK_EQ_INT(falling, 51);
    }
    free(praw);
    o.resolution = 100;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "2^n + 1");
    CHECK(!trn_unity_resolution_valid(17) && trn_unity_resolution_valid(4097) &&
          !trn_unity_resolution_valid(8193) && trn_unity_resolution_valid(513));
    trn_field_dispose(&field);
}

/* Trees terrane placed go through the same writer as a Unity source's: split between tiles,
 * y from metres, prototypes by rule; a prototype index out of range is refused. */
static void test_export_placed_trees(void)
{
    char dir[600], path[700];
    tmp_path(dir, sizeof dir, "placed");
    trn_field field;
    CHECK_OK(trn_field_init(&field, 128, 128, 256.0, 256.0, NULL));
    for (size_t k = 0; k < 129u * 129u; k++)
        field.heights[k] = (float)(10.0 + (double)(k % 129) * 0.5);
    trn_unity_tree trees[3];
    memset(trees, 0, sizeof trees);
    const float xs[3] = {0.1f, 0.9f, 0.6f}, zs[3] = {0.2f, 0.3f, 0.8f};
    for (int k = 0; k < 3; k++) {
        trees[k].position[0] = xs[k];
        trees[k].position[1] = 40.0f; /* metres */
        trees[k].position[2] = zs[k];
        trees[k].width_scale = trees[k].height_scale = 1.5f;
        trees[k].color = 0xffffffffu;
        trees[k].prototype = k == 2 ? 1 : 0;
    }
    const trn_unity_placed_prototype protos[2] = {{"pine", NULL, "asset://pine"},
                                                   {"rock", "prefab://rock", NULL}};
    trn_unity_export_options o;
    trn_unity_export_options_default(&o);
    o.name = "t";
    o.tiles_x = o.tiles_z = 2;
    o.trees = trees;
    o.tree_count = 3;
    o.placed_prototypes = protos;
    o.placed_prototype_count = 2;
    trn_unity_export_report rep;
    trn_error e;
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.trees, 3);
    /* (0.9, 0.3) lies in tile (1, 0), at 0.8 of its width; y: 40 m over 10..74 m. */
    snprintf(path, sizeof path, "%s/t_1_0_trees.json", dir);
    size_t n = 0;
    char *text = (char *)trn_test_read_file(path, &n);
    json_t *doc = text ? json_loadb(text, n, 0, NULL) : NULL;
    json_t *list = json_object_get(doc, "trees");
    CHECK_EQ_INT(json_array_size(list), 1);
    json_t *pos = json_object_get(json_array_get(list, 0), "position");
    CHECK(fabs(json_real_value(json_array_get(pos, 0)) - 0.8) < 1e-5);
    CHECK(fabs(json_real_value(json_array_get(pos, 1)) - 30.0 / 64.0) < 1e-5);
    CHECK(fabs(json_real_value(json_array_get(pos, 2)) - 0.6) < 1e-5);
    json_t *p1 = json_array_get(json_object_get(doc, "prototypes"), 1);
    CHECK(strcmp(json_string_value(json_object_get(p1, "prefab")), "prefab://rock") == 0);
    CHECK(json_object_get(p1, "model") == NULL);
    json_decref(doc);
    free(text);
    snprintf(path, sizeof path, "%s/t_1_1_trees.json", dir);
    text = (char *)trn_test_read_file(path, &n);
    doc = text ? json_loadb(text, n, 0, NULL) : NULL;
    CHECK_EQ_INT(json_array_size(json_object_get(doc, "trees")), 1);
    CHECK_EQ_INT(json_integer_value(
                     json_object_get(json_array_get(json_object_get(doc, "trees"), 0), "prototype")),
                 1);
    json_decref(doc);
    free(text);
    trees[1].prototype = 2;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "placed tree 1: expected a prototype below 2, found 2");
    trees[1].prototype = 0;
    trees[1].position[1] = NAN;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "finite position");
    trn_field_dispose(&field);
}

/* Alpha-map texel (i, j) covers terrain cell (i, j), whose material is sample (i, j)'s label (the
 * layer map's convention): every texel is one-hot on exactly that label, and a hole at sample
 * (7, 5) is the hole texel (7, 5), not its neighbour (6, 4). With the RAW range by the one
 * 16-bit rule: the lowest height at 0, the highest at 65535. */
static void test_export_splat_cells(void)
{
    trn_field field;
    CHECK_OK(trn_field_init(&field, 64, 64, 64.0, 64.0, NULL));
    for (uint32_t k = 0; k < 65u * 65u; k++)
        field.heights[k] = 10.0f + (float)(k % 65) * 0.5f;
    trn_labels labels;
    CHECK_OK(trn_labels_init(&labels, 64, 64, NULL));
    for (int k = 0; k < 3; k++) {
        char name[16];
        snprintf(name, sizeof name, "m%d", k);
        CHECK_OK(trn_labels_add_name(&labels, name, strlen(name), NULL));
    }
    for (uint32_t j = 0; j <= 64; j++)
        for (uint32_t i = 0; i <= 64; i++)
            labels.values[j * 65 + i] = (uint8_t)((i + j) % 3);
    labels.values[5 * 65 + 7] = TRN_LABEL_NONE;
    char dir[600], path[700];
    tmp_path(dir, sizeof dir, "cells");
    trn_unity_export_options o;
    trn_unity_export_options_default(&o);
    o.name = "C";
    trn_unity_export_report rep;
    trn_error e;
    CHECK_OK(trn_unity_export(dir, &field, &labels, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.resolution, 65);
    CHECK(rep.height_base == 10.0 && rep.tile_size[1] == 32.0);
    trn_image a;
    CHECK_OK(trn_png_read(tmp_path(path, sizeof path, "cells/C_splat0.png"), NULL, &a, &e));
    CHECK(a.width == 64 && a.height == 64);
    size_t right = 0;
    for (uint32_t j = 0; a.data && j < 64; j++)
        for (uint32_t i = 0; i < 64; i++) {
            /* PNG row 0 is the far edge: texel (i, j) is PNG row 63 - j. */
            const uint8_t *px = (const uint8_t *)a.data + ((size_t)(63 - j) * 64 + i) * 4u;
            const uint8_t want = labels.values[j * 65 + i];
            const unsigned layer = want == TRN_LABEL_NONE ? 0u : want;
            right += px[layer] == 255;
        }
    CHECK_EQ_INT(right, 64 * 64);
    trn_image_dispose(&a);
    trn_image h;
    CHECK_OK(trn_png_read(tmp_path(path, sizeof path, "cells/C_holes.png"), NULL, &h, &e));
    if (h.data) {
        const uint8_t *px = h.data;
        CHECK_EQ_INT(px[(63 - 5) * 64 + 7], 0);
        CHECK_EQ_INT(px[(63 - 4) * 64 + 6], 255);
        CHECK_EQ_INT(px[(63 - 6) * 64 + 8], 255);
        size_t holes = 0;
        for (size_t k = 0; k < 64u * 64u; k++)
            holes += px[k] == 0;
        CHECK_EQ_INT(holes, 1);
    }
    trn_image_dispose(&h);
    /* The RAW spans the lowest (10 m) to the highest (42 m) height. */
    size_t n;
    uint8_t *raw = trn_test_read_file(tmp_path(path, sizeof path, "cells/C.raw"), &n);
    CHECK_EQ_INT(n, 65 * 65 * 2);
    if (raw && n == 65 * 65 * 2) {
        CHECK_EQ_INT(raw[0] | raw[1] << 8, 0);
        CHECK_EQ_INT(raw[64 * 2] | raw[64 * 2 + 1] << 8, 65535);
    }
    free(raw);
    trn_field_dispose(&field);
    trn_labels_dispose(&labels);
}

/* The newest SerializedFile version read (50) is recognised, one newer (51) is not, and the
 * parser says which versions it reads. */
static void test_version_edges(void)
{
    int16_t *h = make_heights(33);
    uwr_terrain_spec s = {33, {1.0f, 10.0f, 1.0f}, h, NULL, 1, 1, 1, false};
    size_t size;
    uint8_t *file = uwr_terrain_file(22, false, &s, &size, NULL);
    const uint8_t v50[4] = {0, 0, 0, 50}, v51[4] = {0, 0, 0, 51};
    memcpy(file + 8, v50, 4);
    CHECK(trn_unity_sniff(file, size));
    memcpy(file + 8, v51, 4);
    CHECK(!trn_unity_sniff(file, size));
    trn_unity_file f;
    trn_error e;
    CHECK_STATUS(trn_unity_file_parse(file, size, "v.asset", NULL, &f, &e), TRN_ERR_VERSION);
    CHECK_EQ_INT(e.offset, 8);
    CHECK_CONTAINS(e.message, "expected a SerializedFile version 9..50, found 51");
    free(file);
    free(h);
}

/* Detail layers: points counted per detail cell (the terrain cell), each tile its own map,
 * 255 at most, points outside or not finite dropped, PNG row 0 the far edge. */
static uint8_t detail_px(const char *file, uint32_t row, uint32_t col)
{
    char path[700];
    trn_image img;
    memset(&img, 0, sizeof img);
    if (trn_png_read(tmp_path(path, sizeof path, file), NULL, &img, NULL)) return 77;
    const uint8_t v = img.width == 32 && img.height == 32 && img.channels == 1
                          ? ((const uint8_t *)img.data)[(size_t)row * 32 + col]
                          : 88;
    trn_image_dispose(&img);
    return v;
}

static void test_export_details(void)
{
    trn_field field;
    CHECK_OK(trn_field_init(&field, 64, 64, 128.0, 64.0, NULL));
    /* 300 points in cell (1, 0) of 2 x 1 units; the corners; one on the tiles' border. */
    double pts[2 * 308];
    size_t n = 0;
    pts[2 * n] = 0.0, pts[2 * n + 1] = 0.0, n++;
    for (int k = 0; k < 300; k++)
        pts[2 * n] = 3.0, pts[2 * n + 1] = 0.5, n++;
    pts[2 * n] = 128.0, pts[2 * n + 1] = 64.0, n++;
    pts[2 * n] = 64.0, pts[2 * n + 1] = 32.0, n++;
    pts[2 * n] = -0.1, pts[2 * n + 1] = 5.0, n++;
    pts[2 * n] = NAN, pts[2 * n + 1] = 1.0, n++;
    pts[2 * n] = 128.01, pts[2 * n + 1] = 1.0, n++;
    trn_unity_detail_layer layers[TRN_UNITY_MAX_DETAIL_LAYERS + 1];
    memset(layers, 0, sizeof layers);
    layers[0] = (trn_unity_detail_layer){"grass", "asset://models/grass", pts, n};
    layers[1] = (trn_unity_detail_layer){"empty", NULL, NULL, 0};
    char dir[600], path[700];
    tmp_path(dir, sizeof dir, "details");
    trn_unity_export_options o;
    trn_unity_export_options_default(&o);
    o.tiles_x = o.tiles_z = 2;
    o.name = "D";
    o.details = layers;
    o.detail_count = 2;
    trn_unity_export_report rep;
    trn_error e;
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.detail_layers, 2);
    CHECK(rep.detail_points == 303 && rep.detail_dropped == 3 && rep.detail_clamped == 1);
    CHECK_EQ_INT(detail_px("details/D_0_0_detail0.png", 31, 0), 1);
    CHECK_EQ_INT(detail_px("details/D_0_0_detail0.png", 31, 1), 255);
    CHECK_EQ_INT(detail_px("details/D_0_0_detail0.png", 30, 1), 0);
    CHECK_EQ_INT(detail_px("details/D_1_1_detail0.png", 0, 31), 1);
    CHECK_EQ_INT(detail_px("details/D_1_1_detail0.png", 31, 0), 1);
    CHECK_EQ_INT(detail_px("details/D_1_0_detail0.png", 31, 0), 0);
    CHECK_EQ_INT(detail_px("details/D_0_0_detail1.png", 31, 1), 0);
    size_t size = 0;
    char *text =
        (char *)trn_test_read_file(tmp_path(path, sizeof path, "details/D_0_0.json"), &size);
    CHECK(text && strstr(text, "\"scatter_mode\": \"InstanceCount\"") &&
          strstr(text, "\"file\": \"D_0_0_detail0.png\"") && strstr(text, "\"instances\": 301") &&
          strstr(text, "\"prototype\": \"asset://models/grass\"") &&
          strstr(text, "\"prototype\": null") && strstr(text, "\"resolution\": 32"));
    free(text);
    text = (char *)trn_test_read_file(tmp_path(path, sizeof path, "details/D_1_1.json"), &size);
    CHECK(text && strstr(text, "\"instances\": 2"));
    free(text);

    /* The limit: 64 layers are written, 65 refused; a layer needs a name, and points when it
     * has a count. */
    for (uint32_t k = 0; k <= TRN_UNITY_MAX_DETAIL_LAYERS; k++)
        layers[k] = (trn_unity_detail_layer){"g", NULL, pts, 1};
    o.tiles_x = o.tiles_z = 1;
    field.size_x = 64.0;
    o.detail_count = TRN_UNITY_MAX_DETAIL_LAYERS;
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    CHECK_EQ_INT(rep.detail_layers, 64);
    CHECK(trn_test_exists(tmp_path(path, sizeof path, "details/D_detail63.png")));
    o.detail_count = TRN_UNITY_MAX_DETAIL_LAYERS + 1;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "65 detail layers: at most 64");
    o.detail_count = 2;
    layers[1].name = NULL;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "detail layer 1: expected a name and its points");
    layers[1].name = "g";
    layers[1].points = NULL;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    layers[1].point_count = 0;
    CHECK_OK(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e));
    o.details = NULL;
    CHECK_STATUS(trn_unity_export(dir, &field, NULL, NULL, &o, &rep, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_field_dispose(&field);
}

int main(void)
{
    tmp[0] = '\0';
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_common_strings);
    RUN(test_real_2021);
    RUN(test_real_56);
    RUN(test_synthetic_versions);
    RUN(test_old_layout);
    RUN(test_errors);
    RUN(test_export);
    RUN(test_export_splat_cells);
    RUN(test_export_details);
    RUN(test_export_placed_trees);
    RUN(test_version_edges);
    return trn_test_finish();
}
