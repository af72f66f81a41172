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
    zip_int64_t idx[3];
    idx[0] = zip_file_add(za, "world.xml", zip_source_buffer(za, world, sizeof world - 1, 0), 0);
    idx[1] = zip_file_add(za, "world_meta.xml", zip_source_buffer(za, meta, sizeof meta - 1, 0), 0);
    idx[2] = dat ? zip_file_add(za, "terrain.dat", zip_source_buffer(za, dat, dat_size, 0), 0) : -1;
    /* A fixed time: two saves made a second apart must hold the same bytes. */
    for (int k = 0; k < 3; k++)
        if (idx[k] >= 0) zip_file_set_mtime(za, (zip_uint64_t)idx[k], (time_t)1700000000, 0);
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
        CHECK(strcmp(json_string_value(json_object_get(j, "input_format")), "stationeers-dat") ==
              0);
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
    /* convert OUT.dat picks the smallest world size (MaxDepth 10: not the 4 that would hold
     * these 16 x 16 samples, which the game has no world of); --max-depth N any depth. */
    tmp_path(dat, sizeof dat, "auto.dat");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, dat), 0);
    CHECK_CONTAINS(err, "MaxDepth 10, 1024 x 1024 x 1024 voxels");
    free(out), free(err);
    tmp_path(dat, sizeof dat, "four.dat");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --max-depth 4", &out, &err, in, dat), 0);
    CHECK_CONTAINS(err, "MaxDepth 4, 16 x 16 x 16 voxels");
    CHECK_CONTAINS(err, "MaxDepth 4 is no world size of the game");
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
    CHECK_EQ_INT(
        trn_test_run_clif("stationeers extract %s %s --format json", &out, &err, out_save, x), 0);
    CHECK(trn_test_same_bytes(x, newdat));
    CHECK_CONTAINS(out, "\"output\": ");
    CHECK_CONTAINS(out, "\"max_depth\": ");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("render %s %s/save.png", &out, &err, out_save, tmp), 0);
    free(out), free(err);

    /* In place, and refusing a NEW.dat that does not parse (the save stays as it was). */
    CHECK_EQ_INT(trn_test_run_clif("stationeers replace %s %s --write --format json", &out, &err,
                                   save_copy, newdat),
                 0);
    CHECK_CONTAINS(out, "\"in_place\": true");
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

/* terrain.dat -> terrain.dat and .save -> terrain.dat copy the octree byte for byte; options
 * that would reshape it are refused and write nothing. */
static void test_same_format_convert(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char in[600], save[600], copy[600], *out, *err;
    tmp_path(in, sizeof in, "same.dat");
    tmp_path(save, sizeof save, "same.save");
    tmp_path(copy, sizeof copy, "copy.dat");
    CHECK(trn_test_write_file(in, dat, n));
    CHECK(make_save(save, dat, n));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, copy), 0);
    CHECK(trn_test_same_bytes(in, copy));
    CHECK_CONTAINS(err, "unchanged");
    free(out), free(err);
    remove(copy);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --format json", &out, &err, in, copy), 0);
    json_t *j = json_loads(out ? out : "", 0, NULL);
    CHECK_EQ_INT(json_integer_value(json_object_get(j, "copied_bytes")), n);
    CHECK_EQ_INT(json_array_size(json_object_get(j, "dropped")), 0);
    CHECK(json_is_array(json_object_get(j, "dropped")));
    CHECK(strcmp(json_string_value(json_object_get(j, "output")), copy) == 0);
    json_decref(j);
    free(out), free(err);
    remove(copy);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --of stationeers -q", &out, &err, save, copy), 0);
    CHECK(trn_test_same_bytes(in, copy));
    free(out), free(err);
    remove(copy);
    static const char *const reshaping[][2] = {{"--size 4x4", "--size"},
                                               {"--crop 0,0,2,2", "--crop"},
                                               {"--window 0,0,1,1", "--window"},
                                               {"--pow2", "--pow2"},
                                               {"--pow2plus1", "--pow2plus1"},
                                               {"--max-height 100", "--max-height"},
                                               {"--square-size 2", "--square-size"},
                                               {"--crs utm", "--crs"},
                                               {"--cell 5", "--cell"}};
    for (size_t k = 0; k < sizeof reshaping / sizeof reshaping[0]; k++) {
        CHECK_EQ_INT(trn_test_run_clif("convert %s %s %s", &out, &err, in, copy, reshaping[k][0]),
                     2);
        CHECK_CONTAINS(err, "copies its octree unchanged");
        char expect[100];
        snprintf(expect, sizeof expect, "takes no %s,", reshaping[k][1]);
        CHECK_CONTAINS(err, expect);
        CHECK_CONTAINS(err, "stationeers from-heightfield");
        CHECK(!trn_test_exists(copy));
        free(out), free(err);
    }
    /* A file that does not parse is not copied. */
    tmp_path(in, sizeof in, "same-cut.dat");
    CHECK(trn_test_write_file(in, dat, n - 1));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, copy), 1);
    CHECK_CONTAINS(err, "minable 1 of 2");
    CHECK(!trn_test_exists(copy));
    free(out), free(err);
    /* --raw-type says the input is a headerless raster: an ordinary heightfield conversion. */
    tmp_path(in, sizeof in, "same.dat");
    CHECK_EQ_INT(n % 2, 0);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --raw-type u8 --size %zux2 -q", &out, &err, in,
                                   copy, n / 2),
                 0);
    CHECK(trn_test_exists(copy) && !trn_test_same_bytes(in, copy));
    free(out), free(err);
}

/* A lossy conversion lists, counted, exactly what the octree held and the heightfield cannot;
 * nothing when nothing is lost. */
static void test_drops(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char in[600], r32[600], back[600], *out, *err;
    tmp_path(in, sizeof in, "drops.dat");
    tmp_path(r32, sizeof r32, "drops.r32");
    CHECK(trn_test_write_file(in, dat, n));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --format json", &out, &err, in, r32), 0);
    static const char *const expect[] = {
        "1 vein with 2 minables (1 active)",
        "IS_MODIFIED flags on 4 nodes (1 branch; 3 leaves holding 3 voxels)",
        "node types of 16 voxels (Crust 4, Dirt 8, Bedrock 4)",
        "caves and overhangs: 1 voxel of air or partial density below the surface in 1 column",
        "1 solid voxel below the surface not full (density 128..254) in 1 column",
        "2 voxels of partial density above the surface in 2 columns"};
    json_t *j = json_loads(out ? out : "", 0, NULL);
    json_t *list = json_object_get(j, "dropped");
    CHECK_EQ_INT(json_array_size(list), 6);
    for (size_t k = 0; k < 6 && k < json_array_size(list); k++)
        CHECK_CONTAINS(json_string_value(json_array_get(list, k)), expect[k]);
    json_decref(j);
    free(out), free(err);
    /* The same in the one note. */
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, in, r32), 0);
    CHECK_CONTAINS(err, "dropped 1 vein with 2 minables (1 active); IS_MODIFIED flags on 4 nodes");
    free(out), free(err);
    /* A tree built from heights loses its node types only; an all-air world nothing. */
    tmp_path(back, sizeof back, "drops-rebuilt.dat");
    CHECK_EQ_INT(trn_test_run_clif("stationeers from-heightfield %s %s -q", &out, &err, r32, back),
                 0);
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --format json", &out, &err, back, r32), 0);
    j = json_loads(out ? out : "", 0, NULL);
    list = json_object_get(j, "dropped");
    CHECK_EQ_INT(json_array_size(list), 1);
    CHECK_CONTAINS(json_string_value(json_array_get(list, 0)), "node types of ");
    json_decref(j);
    free(out), free(err);
    static const uint8_t air[11] = {3, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    CHECK(trn_test_write_file(in, air, sizeof air));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --format json", &out, &err, in, r32), 0);
    j = json_loads(out ? out : "", 0, NULL);
    CHECK(json_is_array(json_object_get(j, "dropped")));
    CHECK_EQ_INT(json_array_size(json_object_get(j, "dropped")), 0);
    json_decref(j);
    CHECK(!strstr(err ? err : "", "dropped"));
    free(out), free(err);
}

/* The sample limit: the limit itself accepted, one less refused before anything per sample is
 * built (an 11-byte file claiming MaxDepth 14 stays small); info needs no limit. */
static void test_max_samples(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char in[600], png[600], *out, *err;
    tmp_path(in, sizeof in, "limit.dat");
    tmp_path(png, sizeof png, "limit.png");
    CHECK(trn_test_write_file(in, dat, n));
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --max-samples 16 -q", &out, &err, in, png), 0);
    free(out), free(err);
    remove(png);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --max-samples 15", &out, &err, in, png), 1);
    CHECK_CONTAINS(err, "limit.dat: offset 0: header: MaxDepth 2 means a heightfield of 4 x 4 = "
                        "16 samples, over the limit of 15 samples");
    CHECK_CONTAINS(err, "--max-samples N");
    CHECK(!trn_test_exists(png));
    free(out), free(err);
    static const uint8_t tiny[11] = {14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    CHECK(trn_test_write_file(in, tiny, sizeof tiny));
    CHECK_EQ_INT(trn_test_run_clif("render %s %s --max-samples 268435455", &out, &err, in, png), 1);
    CHECK_CONTAINS(err, "16384 x 16384 = 268435456 samples, over the limit of 268435455");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("info %s --max-samples 1", &out, &err, in), 0);
    CHECK_CONTAINS(out, "max depth: 14");
    free(out), free(err);
    /* A few samples reaching 16000 m ask for MaxDepth 14: refused before building it. */
    float high[4] = {1.0f, 2.0f, 3.0f, 16000.0f};
    char r32[600];
    tmp_path(r32, sizeof r32, "high.r32");
    CHECK(write_r32(r32, high, 4));
    CHECK_EQ_INT(trn_test_run_clif("stationeers from-heightfield %s %s/high.dat --max-samples "
                                   "268435455",
                                   &out, &err, r32, tmp),
                 1);
    CHECK_CONTAINS(err, "heightfield to octree: MaxDepth 14 means 16384 x 16384 = 268435456 "
                        "samples, over the limit of 268435455");
    free(out), free(err);
    /* Copying the octree builds nothing per sample either. */
    CHECK_EQ_INT(
        trn_test_run_clif("convert %s %s/limit-copy.dat --max-samples 1 -q", &out, &err, in, tmp),
        0);
    free(out), free(err);
}

/* Messages that say what is wrong: a terrain.dat cut after its header. */
static void test_truncated_header(void)
{
    char p[600], *out, *err;
    tmp_path(p, sizeof p, "four.dat");
    CHECK(trn_test_write_file(p, "\x0c\x00\x00\x00", 4));
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
    CHECK_CONTAINS(err, "offset 4: terrain.dat truncated after MaxDepth at offset 4");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s/four.png", &out, &err, p, tmp), 1);
    CHECK_CONTAINS(err, "truncated after MaxDepth");
    free(out), free(err);
    /* Not a MaxDepth (25, bytes above the lowest): not a cut terrain.dat. */
    static const char *const others[] = {"\x19\x00\x00\x00", "\x0c\x01\x00\x00", "\x0c\x00\x01\x00",
                                         "\x0c\x00\x00\x01"};
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++) {
        CHECK(trn_test_write_file(p, others[k], 4));
        CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
        CHECK(!strstr(err ? err : "", "terrain.dat truncated"));
        free(out), free(err);
    }
    /* Bytes that also read as a legacy .ter header (version 1 or 2): the name decides. A
     * terrain.dat gets the octree reader's message, not the .ter reader's. */
    static const char *const ambiguous[] = {"\x01\x00\x00\x00", "\x02\x00\x00\x00"};
    for (size_t k = 0; k < 2; k++) {
        tmp_path(p, sizeof p, "terrain.dat");
        CHECK(trn_test_write_file(p, ambiguous[k], 4));
        CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
        CHECK_CONTAINS(err, "terrain.dat truncated after MaxDepth at offset 4");
        CHECK(!strstr(err ? err : "", "heights: expected"));
        free(out), free(err);
        tmp_path(p, sizeof p, "legacy.ter");
        CHECK(trn_test_write_file(p, ambiguous[k], 4));
        CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
        CHECK(!strstr(err ? err : "", "terrain.dat truncated"));
        free(out), free(err);
    }
    tmp_path(p, sizeof p, "four.r16");
    CHECK(trn_test_write_file(p, "\x0c\x00\x00\x00", 4));
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, p), 1);
    CHECK_CONTAINS(err, "16-bit little-endian samples");
    free(out), free(err);
}

/* 11 bytes claiming a 16384^3 world: info answers from the tree, nothing per sample. */
static void test_header_bomb(void)
{
    static const uint8_t tiny[11] = {14, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
    char p[600], *out, *err;
    tmp_path(p, sizeof p, "tiny.dat");
    CHECK(trn_test_write_file(p, tiny, sizeof tiny));
    CHECK_EQ_INT(trn_test_run_clif("info %s --format json", &out, &err, p), 0);
    CHECK_CONTAINS(out, "\"world_size\": 16384");
    free(out), free(err);
}

/* Damaged and hostile archives through the command line. */
static void test_save_damage(void)
{
    uint8_t dat[256];
    size_t n = make_dat(dat);
    char save[600], x[600], newdat[600], *out, *err;
    tmp_path(save, sizeof save, "damaged.save");
    tmp_path(x, sizeof x, "damaged.dat");
    tmp_path(newdat, sizeof newdat, "new-damaged.dat");
    CHECK(trn_test_write_file(newdat, dat, n));
    /* A stored terrain.dat with one flipped bit. */
    int zerr;
    zip_t *za = zip_open(save, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    CHECK(za != NULL);
    if (!za) return;
    zip_int64_t i = zip_file_add(za, "terrain.dat", zip_source_buffer(za, dat, n, 0), 0);
    CHECK(i >= 0 && zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0) == 0);
    CHECK(zip_close(za) == 0);
    size_t size;
    uint8_t *bytes = trn_test_read_file(save, &size);
    size_t at = SIZE_MAX;
    for (size_t k = 0; bytes && k + n <= size && at == SIZE_MAX; k++)
        if (memcmp(bytes + k, dat, n) == 0) at = k;
    CHECK(at != SIZE_MAX);
    if (at == SIZE_MAX) {
        free(bytes);
        return;
    }
    bytes[at + n - 1] ^= 1;
    CHECK(trn_test_write_file(save, bytes, size));
    free(bytes);
    CHECK_EQ_INT(trn_test_run_clif("stationeers extract %s %s", &out, &err, save, x), 1);
    CHECK_CONTAINS(err, "damaged.save");
    CHECK_CONTAINS(err, "entry 'terrain.dat': CRC-32 mismatch: the central directory expects 0x");
    CHECK(!trn_test_exists(x));
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s", &out, &err, save, x), 1);
    CHECK_CONTAINS(err, "CRC-32 mismatch");
    CHECK(!trn_test_exists(x));
    free(out), free(err);

    /* A link named terrain.dat is not read; a link elsewhere stops replace. */
    za = zip_open(save, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    CHECK(za != NULL);
    if (!za) return;
    zip_file_add(za, "terrain.dat", zip_source_buffer(za, "/etc/passwd", 11, 0), 0);
    CHECK(zip_file_set_external_attributes(za, 0, 0, ZIP_OPSYS_UNIX, 0120777u << 16) == 0);
    CHECK(zip_close(za) == 0);
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, save), 1);
    CHECK_CONTAINS(err, "entry 'terrain.dat' is a symbolic link");
    free(out), free(err);
    CHECK(make_save(save, dat, n));
    za = zip_open(save, 0, &zerr);
    CHECK(za != NULL);
    if (!za) return;
    CHECK(zip_file_set_external_attributes(za, 1, 0, ZIP_OPSYS_UNIX, 0120777u << 16) == 0);
    CHECK(zip_close(za) == 0);
    size_t before_size;
    uint8_t *before = trn_test_read_file(save, &before_size);
    CHECK_EQ_INT(trn_test_run_clif("stationeers replace %s %s --write", &out, &err, save, newdat),
                 1);
    CHECK_CONTAINS(err, "entry 'world_meta.xml' is a symbolic link");
    free(out), free(err);
    size_t after_size;
    uint8_t *after = trn_test_read_file(save, &after_size);
    CHECK(before && after && before_size == after_size && memcmp(before, after, before_size) == 0);
    free(before);
    free(after);

    /* Two entries of one name. */
    za = zip_open(save, ZIP_CREATE | ZIP_TRUNCATE, &zerr);
    CHECK(za != NULL);
    if (!za) return;
    zip_file_add(za, "terrain.dat", zip_source_buffer(za, dat, n, 0), 0);
    zip_file_add(za, "terrain.daX", zip_source_buffer(za, dat, n, 0), 0);
    CHECK(zip_close(za) == 0);
    bytes = trn_test_read_file(save, &size);
    for (size_t k = 0; bytes && k + 11 <= size; k++)
        if (memcmp(bytes + k, "terrain.daX", 11) == 0) bytes[k + 10] = 't';
    CHECK(trn_test_write_file(save, bytes, size));
    free(bytes);
    CHECK_EQ_INT(trn_test_run_clif("info %s", &out, &err, save), 1);
    CHECK_CONTAINS(err, "duplicate entry 'terrain.dat' in archive");
    free(out), free(err);
}

/* --world small|medium|large writes a game world's base files Terrain0.dat ... into a folder:
 * 1 or 8 MaxDepth-10 octrees; a MaxDepth-11 terrain.dat splits into the very same files. */
static void test_worlds(void)
{
    float heights[16 * 16];
    for (int k = 0; k < 256; k++)
        heights[k] = (float)(20.0 + (k % 16) * 0.25 + (k / 16) * 0.5);
    char in[600], dir[600], p[700], q[700], *out, *err;
    tmp_path(in, sizeof in, "w.r32");
    CHECK(write_r32(in, heights, 256));
    tmp_path(dir, sizeof dir, "small");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --world small", &out, &err, in, dir), 0);
    CHECK_CONTAINS(err, "Terrain0.dat: a MaxDepth-10 world (1024^3 voxels) in one file");
    free(out), free(err);
    trn_stationeers_terrain t;
    snprintf(p, sizeof p, "%s/Terrain0.dat", dir);
    CHECK_OK(trn_stationeers_read(p, NULL, &t, NULL));
    CHECK_EQ_INT(t.max_depth, 10);
    trn_stationeers_dispose(&t);
    snprintf(p, sizeof p, "%s/Terrain1.dat", dir);
    CHECK(!trn_test_exists(p));

    tmp_path(dir, sizeof dir, "medium");
    CHECK_EQ_INT(
        trn_test_run_clif("stationeers from-heightfield %s %s --world medium", &out, &err, in, dir),
        0);
    CHECK_CONTAINS(err, "Terrain0.dat .. Terrain7.dat: a MaxDepth-11 world (2048^3 voxels) as 8 "
                        "base files");
    free(out), free(err);
    for (int k = 0; k < 8; k++) {
        snprintf(p, sizeof p, "%s/Terrain%d.dat", dir, k);
        CHECK_OK(trn_stationeers_read(p, NULL, &t, NULL));
        CHECK_EQ_INT(t.max_depth, 10);
        /* Files 2, 3, 6, 7 are the upper half (y >= 1024): one air leaf. */
        if (k & 2) CHECK(t.nodes_size == 3 && t.nodes[1] == 0);
        trn_stationeers_dispose(&t);
    }
    snprintf(p, sizeof p, "%s/Terrain8.dat", dir);
    CHECK(!trn_test_exists(p));
    /* Block 0 holds the whole heightmap: read back, its column (3, 2) is the height of R32
     * row 13 (row 0 is north), column 3. */
    snprintf(p, sizeof p, "%s/Terrain0.dat", dir);
    CHECK_OK(trn_stationeers_read(p, NULL, &t, NULL));
    trn_field f;
    CHECK_OK(trn_stationeers_to_field(&t, NULL, &f, NULL, NULL, NULL, NULL));
    CHECK(fabs((double)f.heights[2 * 1024 + 3] - (20.0 + 3 * 0.25 + 13 * 0.5)) <= 0.5 / 255.0);
    trn_field_dispose(&f);
    trn_stationeers_dispose(&t);

    /* One MaxDepth-11 file (the single-file form for tools), then split: the same 8 files. */
    tmp_path(q, sizeof q, "one11.dat");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --max-depth 11", &out, &err, in, q), 0);
    CHECK_CONTAINS(err, "the game keeps a MaxDepth-11 world as 8 base files of MaxDepth 10");
    free(out), free(err);
    char split[600];
    tmp_path(split, sizeof split, "split");
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --world medium", &out, &err, q, split), 0);
    free(out), free(err);
    size_t same = 0;
    for (int k = 0; k < 8; k++) {
        snprintf(p, sizeof p, "%s/Terrain%d.dat", dir, k);
        char r[700];
        snprintf(r, sizeof r, "%s/Terrain%d.dat", split, k);
        same += trn_test_same_bytes(p, r);
    }
    CHECK_EQ_INT(same, 8);
    /* A terrain.dat of another depth is not rebuilt to fit a world. */
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --world large", &out, &err, q, split), 1);
    CHECK_CONTAINS(err, "a MaxDepth-11 octree, not the 12 of the world asked for");
    free(out), free(err);
    /* Names, and what does not go together. */
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s --world huge", &out, &err, in, split), 2);
    CHECK_CONTAINS(err, "--world takes small (MaxDepth 10, 1024^3 voxels, 1 file), medium");
    free(out), free(err);
    CHECK_EQ_INT(
        trn_test_run_clif("convert %s %s --world small --max-depth 10", &out, &err, in, split), 2);
    CHECK_CONTAINS(err, "give one");
    free(out), free(err);
    CHECK_EQ_INT(trn_test_run_clif("convert %s %s/x --of png --world small", &out, &err, in, tmp),
                 2);
    CHECK_CONTAINS(err, "--world writes a Stationeers world");
    free(out), free(err);
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_usage);
    RUN(test_info);
    RUN(test_from_heightfield_round_trip);
    RUN(test_save);
    RUN(test_same_format_convert);
    RUN(test_drops);
    RUN(test_max_samples);
    RUN(test_truncated_header);
    RUN(test_header_bomb);
    RUN(test_save_damage);
    RUN(test_worlds);
    return trn_test_finish();
}
