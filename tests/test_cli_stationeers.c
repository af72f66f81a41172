/* Command-line tests for Stationeers files: info, convert, render and terrane stationeers. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>

#include <zip.h>

#include "terrane/stationeers.h"
#include "test.h"

static char tmp[512];

static const char *tmp_path(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* MaxDepth 2: a modified root branch, a solid leaf, a branch of 8 voxels, 6 air leaves; one
 * vein with two minables (one active). */
static size_t make_dat(uint8_t *b)
{
    size_t n = 0;
    b[n++] = 2, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    b[n++] = 0x02;
    b[n++] = 0x01, b[n++] = 255, b[n++] = 2;
    b[n++] = 0x00;
    for (int k = 0; k < 8; k++)
        b[n++] = k % 3 == 0 ? 0x03 : 0x01, b[n++] = (uint8_t)(k * 30),
        b[n++] = (uint8_t)(k < 4 ? 1 : 8);
    for (int k = 2; k < 8; k++)
        b[n++] = 0x01, b[n++] = 0, b[n++] = 0;
    b[n++] = 1, b[n++] = 0, b[n++] = 0, b[n++] = 0;
    for (int k = 0; k < 12; k++)
        b[n++] = (uint8_t)k;
    b[n++] = 0xb3, b[n++] = 0xff, b[n++] = 0xff, b[n++] = 0xff; /* IdHash -77 */
    b[n++] = 2;
    const uint8_t minables[10] = {1, 2, 3, 0, 1, 4, 5, 6, 0, 0};
    memcpy(b + n, minables, 10);
    return n + 10;
}

static bool make_save(const char *path, const uint8_t *dat, size_t dat_size)
{
    static const char world[] = "<WorldData><WorldName>Mars</WorldName></WorldData>";
    static const char meta[] = "<WorldMetaData/>";
    int zerr;
    zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    if (!za) return false;
    zip_file_add(za, "world.xml", zip_source_buffer(za, world, sizeof world - 1, 0), 0);
    zip_file_add(za, "world_meta.xml", zip_source_buffer(za, meta, sizeof meta - 1, 0), 0);
    if (dat) zip_file_add(za, "terrain.dat", zip_source_buffer(za, dat, dat_size, 0), 0);
    return zip_close(za) == 0;
}

static void test_usage(void)
{
    char *out, *err;
    CHECK_EQ_INT(trn_test_run_cli("stationeers", &out, &err), 2);
    CHECK_CONTAINS(err, "from-heightfield");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("stationeers --help", &out, &err), 0);
    CHECK_CONTAINS(out, "extract SAVE OUT.dat");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("stationeers frob", &out, &err), 2);
    CHECK_CONTAINS(err, "unknown sub-verb 'frob'");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("stationeers replace a.save b.dat", &out, &err), 2);
    CHECK_CONTAINS(err, "--write (update SAVE) or -o OUT.save");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_cli("stationeers from-heightfield a.png b.dat --max-depth 15", &out, &err), 2);
    CHECK_CONTAINS(err, "--max-depth must be 1 to 14");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_cli("stationeers extract only.save", &out, &err), 2);
    free(out), free(err);
}

static void test_info(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char p[600], *out, *err;
    tmp_path(p, sizeof p, "terrain.dat");
    CHECK(trn_test_write_file(p, dat, n));
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 0);
    CHECK_CONTAINS(out, "max depth: 2 (world 4 x 4 x 4 voxels)");
    CHECK_CONTAINS(out, "nodes:     17 (2 branches, 15 leaves)");
    CHECK_CONTAINS(out, "modified:  1 branches, 3 leaves");
    CHECK_CONTAINS(out, "veins:     1, 2 minables (1 active)");
    CHECK_CONTAINS(out, "Bedrock 4");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info %s --format json", &out, &err, p), 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK(j != NULL);
    if (j) {
        CHECK(strcmp(json_string_value(json_object_get(j, "format")), "stationeers-dat") == 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(j, "world_size")), 4);
        CHECK_EQ_INT(json_array_size(json_object_get(j, "density_histogram")), 256);
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(j, "density_histogram"), 0)),
                     7);
        CHECK_EQ_INT(json_integer_value(json_object_get(json_object_get(j, "node_types"), "Crust")),
                     4);
        json_t *v = json_array_get(json_object_get(j, "veins"), 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(v, "id_hash")), -77);
        CHECK_EQ_INT(json_integer_value(json_array_get(json_object_get(v, "cluster_position"), 0)),
                     0x0706);
        json_decref(j);
    }
    free(out), free(err);

    /* A file cut inside its vein: the message names the vein and the offset. */
    tmp_path(p, sizeof p, "cut.dat");
    CHECK(trn_test_write_file(p, dat, n - 3));
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
    CHECK_CONTAINS(err, "vein 0, minable 1 of 2");
    CHECK_CONTAINS(err, "offset 77");
    free(out), free(err);
}

static bool write_r32(const char *path, const float *v, size_t count)
{
    return trn_test_write_file(path, v, count * sizeof(float));
}

static void test_from_heightfield_round_trip(void)
{
    float heights[16 * 16];
    for (int j = 0; j < 16; j++)
        for (int i = 0; i < 16; i++)
            heights[j * 16 + i] =
                (float)(8.0 + 3.0 * sin(i * 0.4) + 2.0 * cos(j * 0.3) + 0.013 * (i * 7 % 11));
    char in[600], dat[600], back[600], *out, *err;
    tmp_path(in, sizeof in, "h.r32");
    tmp_path(dat, sizeof dat, "h.dat");
    tmp_path(back, sizeof back, "back.r32");
    CHECK(write_r32(in, heights, 256));
    CHECK_EQ_INT(trn_test_run_clif("stationeers from-heightfield %s %s --max-depth 4 --bedrock 2 "
                                   "--format json",
                                   &out, &err, in, dat),
                 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK(j != NULL);
    if (j) {
        CHECK_EQ_INT(json_integer_value(json_object_get(j, "max_depth")), 4);
        CHECK_EQ_INT(json_integer_value(json_object_get(j, "clamped_low")), 0);
        CHECK_EQ_INT(json_integer_value(json_object_get(j, "extended_columns")), 0);
        json_decref(j);
    }
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, dat, back), 0);
    free(out), free(err);
    size_t n = 0;
    uint8_t *got = trn_test_read_file(back, &n);
    CHECK_EQ_INT(n, sizeof heights);
    if (got && n == sizeof heights) {
        const float *g = (const float *)got;
        double worst = 0;
        for (int k = 0; k < 256; k++)
            worst = fmax(worst, fabs((double)g[k] - (double)heights[k]));
        CHECK(worst <= 0.5 / 255.0 + 1e-5);
    }
    free(got);
    /* convert OUT.dat picks the depth itself; render reads the octree. */
    tmp_path(dat, sizeof dat, "auto.dat");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, dat), 0);
    CHECK_CONTAINS(err, "MaxDepth 4");
    free(out), free(err);
    tmp_path(back, sizeof back, "shade.png");
    CHECK_EQ_INT(trn_test_run_clif("render %s %s", &out, &err, dat, back), 0);
    CHECK(trn_test_exists(back));
    free(out), free(err);
}

static void test_save(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char save[600], save_copy[600], x[600], newdat[600], out_save[600], bad[600];
    char *out, *err;
    tmp_path(save, sizeof save, "world.save");
    tmp_path(save_copy, sizeof save_copy, "world-copy.save");
    tmp_path(x, sizeof x, "x.dat");
    tmp_path(newdat, sizeof newdat, "new.dat");
    tmp_path(out_save, sizeof out_save, "out.save");
    CHECK(make_save(save, dat, n));
    CHECK(make_save(save_copy, dat, n));

    CHECK_EQ_INT(trn_test_run_clif("info %s --format json", &out, &err, save), 0);
    CHECK_CONTAINS(out, "\"stationeers-save\"");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("stationeers extract %s %s", &out, &err, save, x), 0);
    size_t got_n;
    uint8_t *got = trn_test_read_file(x, &got_n);
    CHECK(got && got_n == n && memcmp(got, dat, n) == 0);
    free(got);
    free(out), free(err);

    /* A new terrain from a heightfield, put into a copy of the save. */
    float h[64];
    for (int k = 0; k < 64; k++)
        h[k] = 5.0f + (float)(k % 8) * 0.25f;
    char r32[600];
    tmp_path(r32, sizeof r32, "flat.r32");
    CHECK(write_r32(r32, h, 64));
    CHECK_EQ_INT(trn_test_run_clif("stationeers from-heightfield %s %s", &out, &err, r32, newdat),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("stationeers replace %s %s -o %s", &out, &err, save, newdat, out_save),
        0);
    free(out), free(err);
    CHECK(trn_test_same_bytes(save, save_copy)); /* input untouched */
    CHECK_EQ_INT(trn_test_run_clif("stationeers extract %s %s", &out, &err, out_save, x), 0);
    CHECK(trn_test_same_bytes(x, newdat));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("render %s %s/save.png", &out, &err, out_save, tmp), 0);
    free(out), free(err);

    /* In place, and refusing a NEW.dat that does not parse (the save stays as it was). */
    CHECK_EQ_INT(
        trn_test_run_clif("stationeers replace %s %s --write", &out, &err, save_copy, newdat), 0);
    free(out), free(err);
    CHECK(trn_test_same_bytes(save_copy, out_save));
    tmp_path(bad, sizeof bad, "bad.dat");
    CHECK(trn_test_write_file(bad, dat, n - 1));
    CHECK_EQ_INT(trn_test_run_clif("stationeers replace %s %s --write", &out, &err, save_copy, bad),
                 1);
    CHECK_CONTAINS(err, "bad.dat");
    free(out), free(err);
    CHECK(trn_test_same_bytes(save_copy, out_save));
    CHECK_EQ_INT(
        trn_test_run_clif("stationeers replace %s %s -o %s", &out, &err, save, newdat, save), 2);
    free(out), free(err);

    /* A ZIP without terrain.dat. */
    CHECK(make_save(bad, NULL, 0));
    CHECK_EQ_INT(trn_test_run_clif("stationeers extract %s %s", &out, &err, bad, x), 1);
    CHECK_CONTAINS(err, "no terrain.dat");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, bad), 1);
    CHECK_CONTAINS(err, "no terrain.dat");
    free(out), free(err);
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_usage);
    RUN(test_info);
    RUN(test_from_heightfield_round_trip);
    RUN(test_save);
    return trn_test_finish();
}
