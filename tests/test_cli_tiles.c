/* terrane generate --tiles / --memory: a tiled BigTIFF with the whole-grid run's heights, for
 * tile sizes that do not divide the grid and any thread count; budgets and misuse refused. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "terrane/beamng.h"
#include "terrane/beamng_forest.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/image.h"
#include "terrane/layers.h"
#include "terrane/scatter.h"
#include "terrane/unity.h"
#include "test.h"

static char tmp[512];

static const char *at(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

/* The tiled file's samples, south row first (as .r32 stores them), equal the raw file's. */
static bool same_heights(const char *tif, const char *r32, unsigned samples)
{
    trn_geotiff t;
    trn_error e;
    if (trn_geotiff_read(tif, NULL, &t, NULL, NULL, &e)) {
        fprintf(stderr, "%s: %s\n", tif, e.message);
        return false;
    }
    size_t size = 0;
    uint8_t *raw = trn_test_read_file(r32, &size);
    bool same = raw && t.info.tiled && t.info.bigtiff && t.info.width == samples &&
                t.info.height == samples && size == (size_t)samples * samples * 4u;
    /* .r32 is north up too (its first row is the north edge), as the GeoTIFF. */
    if (same) same = memcmp(raw, t.values, size) == 0;
    free(raw);
    trn_geotiff_dispose(&t);
    return same;
}

/* A tile cache folder (terrane-tiles-*) or engine tiles' pieces folder (terrane-pieces-*) left
 * in dir. */
static bool leftover_tiles(const char *dir)
{
    DIR *d = opendir(dir);
    bool found = false;
    struct dirent *e;
    while (d && (e = readdir(d)))
        found = found || strncmp(e->d_name, "terrane-tiles-", 14) == 0 ||
                strncmp(e->d_name, "terrane-pieces-", 15) == 0;
    if (d) closedir(d);
    return found;
}

/* The valley example (stream power, erosion: global nodes) tiled: its global results wait in a
 * tile cache beside the output, removed at the end. */
static void test_tiles_match_whole_grid(void)
{
    char recipe[1024], r32[600], tif[600];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/valley.json", TRN_SOURCE_DIR);
    at(r32, sizeof r32, "valley.r32");
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --resolution 48x48 -q -o '%s'", NULL, NULL, recipe, r32),
        0);
    static const struct {
        unsigned tile, threads;
    } runs[] = {{16, 1}, {32, 2}, {48, 1}, {128, 2}};
    for (size_t k = 0; k < sizeof runs / sizeof runs[0]; k++) {
        at(tif, sizeof tif, "valley.tif");
        char *err = NULL;
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 48x48 --tiles %u --threads %u "
                                       "--memory 64MiB -o '%s'",
                                       NULL, &err, recipe, runs[k].tile, runs[k].threads, tif),
                     0);
        CHECK_CONTAINS(err, "peak resident");
        free(err);
        CHECK(same_heights(tif, r32, 49));
        CHECK(!leftover_tiles(tmp)); /* the tile cache beside the output is gone */
        remove(tif);
    }
    /* The tile cache elsewhere: the same heights, and nothing left in its folder. */
    char cache[600];
    at(cache, sizeof cache, "tilecache");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 48x48 --tiles 16 --tile-cache '%s' "
                                   "-q -o '%s'",
                                   NULL, NULL, recipe, cache, tif),
                 0);
    CHECK(same_heights(tif, r32, 49));
    DIR *d = opendir(cache);
    CHECK(d != NULL);
    struct dirent *e;
    unsigned entries = 0;
    while (d && (e = readdir(d)))
        entries += e->d_name[0] != '.';
    if (d) closedir(d);
    CHECK_EQ_INT(entries, 0);
    remove(cache);
    remove(tif);
    char *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tile-cache '%s' -o '%s'", NULL, &err, recipe,
                                   cache, r32),
                 2);
    CHECK_CONTAINS(err, "--tile-cache is where a tiled run keeps its tiles: give --tiles N too");
    free(err);
}

/* File a equals file b byte for byte. */
static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    uint8_t *da = trn_test_read_file(a, &na), *db = trn_test_read_file(b, &nb);
    const bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}

/* The tiles' splat maps against the whole grid: every NAME_X_Z_splatK.png is the file
 * 'terrane unity export' writes from the whole grid's .ter (its materials per sample) with
 * --tiles KxK, and each tile's JSON lists the layers (names and sources) the whole grid's
 * --export unity lists. Returns the splat maps compared. */
static int same_splats(const char *recipe, const char *stem, unsigned cells, unsigned tile)
{
    char ter[600], whole[600], ref[600], dir[600], tif[600], a[1400], b[1400];
    at(ter, sizeof ter, "w.ter");
    at(whole, sizeof whole, "unity_whole");
    at(ref, sizeof ref, "unity_ter");
    at(dir, sizeof dir, "unity_tiles");
    at(tif, sizeof tif, "s.tif");
    const unsigned k = cells / tile;
    int compared = 0;
    if (trn_test_run_clif("generate '%s' --resolution %ux%u -q -o '%s' --export unity:'%s'", NULL,
                          NULL, recipe, cells, cells, ter, whole) ||
        trn_test_run_clif("unity export '%s' '%s' --tiles %ux%u --name %s -q", NULL, NULL, ter, ref,
                          k, k, stem) ||
        trn_test_run_clif("generate '%s' --resolution %ux%u --tiles %u -q -o '%s' --export "
                          "unity:'%s'",
                          NULL, NULL, recipe, cells, cells, tile, tif, dir))
        return -1;
    snprintf(a, sizeof a, "%s/%s.json", whole, stem);
    json_t *wj = json_load_file(a, 0, NULL);
    json_t *want = json_object_get(wj, "splat");
    for (unsigned z = 0; z < k; z++)
        for (unsigned x = 0; x < k; x++) {
            /* One terrain is NAME, several NAME_X_Z. */
            char tn[300];
            if (k == 1)
                snprintf(tn, sizeof tn, "%s", stem);
            else
                snprintf(tn, sizeof tn, "%s_%u_%u", stem, x, z);
            for (unsigned m = 0;; m++) {
                snprintf(a, sizeof a, "%s/%s_splat%u.png", dir, tn, m);
                snprintf(b, sizeof b, "%s/%s_splat%u.png", ref, tn, m);
                FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
                if (fa) fclose(fa);
                if (fb) fclose(fb);
                if (!fa && !fb) break;
                if (!same_file(a, b)) return -1;
                compared++;
            }
            snprintf(a, sizeof a, "%s/%s.json", dir, tn);
            json_t *tj = json_load_file(a, 0, NULL);
            json_t *got = json_object_get(tj, "splat");
            const bool same =
                want && got &&
                json_equal(json_object_get(want, "layers"), json_object_get(got, "layers")) &&
                json_equal(json_object_get(want, "sources"), json_object_get(got, "sources")) &&
                /* the terrain layers: the whole grid's, their textures written once for all */
                json_array_size(json_object_get(got, "terrain_layers")) ==
                    json_array_size(json_object_get(got, "layers")) &&
                json_equal(json_object_get(want, "terrain_layers"),
                           json_object_get(got, "terrain_layers"));
            for (size_t q = 0; same && q < json_array_size(json_object_get(got, "terrain_layers"));
                 q++) {
                const char *f = json_string_value(json_object_get(
                    json_array_get(json_object_get(got, "terrain_layers"), q), "diffuse"));
                snprintf(a, sizeof a, "%s/%s", dir, f ? f : "");
                snprintf(b, sizeof b, "%s/%s", whole, f ? f : "");
                if (!f || !same_file(a, b)) {
                    json_decref(tj);
                    json_decref(wj);
                    return -1;
                }
            }
            json_decref(tj);
            if (!same) {
                json_decref(wj);
                return -1;
            }
        }
    json_decref(wj);
    remove(tif);
    remove(ter);
    return compared;
}

/* --export unity with --tiles: Unity terrains of tile + 1 samples sharing their edges, one
 * height scale for all, the heights and import settings 'terrane unity export' writes from the
 * whole grid's GeoTIFF with --tiles KxK, and the splat maps of the whole grid's surface
 * materials (several tile sizes, one and two splat maps a tile); shapes Unity cannot take are
 * refused; a recipe whose biomes need the whole surface gets heights only, and says why. */
static void test_tiles_unity(void)
{
    char recipe[1024], tif[600], dir[600], ref[600], a[700], b[700];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/valley.json", TRN_SOURCE_DIR);
    at(tif, sizeof tif, "u.tif");
    at(dir, sizeof dir, "unity");
    at(ref, sizeof ref, "unity_ref");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 64x64 --tiles 32 -q -o '%s' "
                                   "--export unity:'%s'",
                                   NULL, NULL, recipe, tif, dir),
                 0);
    CHECK_EQ_INT(trn_test_run_clif("unity export '%s' '%s' --tiles 2x2 --name valley -q", NULL,
                                   NULL, tif, ref),
                 0);
    static const char *const names[] = {"valley_0_0", "valley_1_0", "valley_0_1", "valley_1_1"};
    for (int k = 0; k < 4; k++) {
        snprintf(a, sizeof a, "%s/%s.raw", dir, names[k]);
        snprintf(b, sizeof b, "%s/%s.raw", ref, names[k]);
        CHECK(same_file(a, b));
        /* The import settings as unity export's, which has no materials to splat from a
         * GeoTIFF: equal without the splat section. */
        snprintf(a, sizeof a, "%s/%s.json", dir, names[k]);
        snprintf(b, sizeof b, "%s/%s.json", ref, names[k]);
        json_t *ja = json_load_file(a, 0, NULL), *jb = json_load_file(b, 0, NULL);
        CHECK(ja && jb && json_object_get(ja, "splat") && !json_object_get(jb, "splat"));
        json_object_del(ja, "splat");
        CHECK(json_equal(ja, jb));
        json_decref(ja);
        json_decref(jb);
    }
    CHECK_EQ_INT(same_splats(recipe, "valley", 64, 32), 4);
    char hills[1024], mountains[1024], island[1024];
    snprintf(hills, sizeof hills, "%s/examples/recipes/hills.json", TRN_SOURCE_DIR);
    snprintf(mountains, sizeof mountains, "%s/examples/recipes/mountains.json", TRN_SOURCE_DIR);
    snprintf(island, sizeof island, "%s/examples/recipes/island.json", TRN_SOURCE_DIR);
    CHECK_EQ_INT(same_splats(hills, "hills", 64, 32), 4);
    CHECK_EQ_INT(same_splats(hills, "hills", 64, 64), 1);
    CHECK_EQ_INT(same_splats(mountains, "mountains", 64, 32), 8);
    /* The island's rules read the distance to the sea: heights only, and the note says why. */
    char *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 64x64 --tiles 32 -o '%s' "
                                   "--export unity:'%s'",
                                   NULL, &err, island, tif, dir),
                 0);
    CHECK_CONTAINS(err, "no splat maps: a biome rule measures the distance to water");
    free(err);
    snprintf(a, sizeof a, "%s/island_0_0_splat0.png", dir);
    FILE *f = fopen(a, "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    CHECK(!leftover_tiles(tmp));
    /* Only heights: the Unity tiles alone are enough output; the summary says what one is. */
    char *out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 64x64 --tiles 32 -q --export "
                                   "unity:'%s' --format json",
                                   &out, NULL, recipe, dir),
                 0);
    CHECK_CONTAINS(out, "\"resolution\": 33");
    CHECK_CONTAINS(out, "\"splat_maps\": 1");
    free(out);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 64x64 --tiles 48 --export "
                                   "unity:'%s'",
                                   NULL, &err, recipe, dir),
                 1);
    CHECK_CONTAINS(err, "--tiles must be a power of two from 32 to 4096 that divides the grid's "
                        "64 x 64 cells, not 48");
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 80x64 --tiles 32 --export "
                                   "unity:'%s'",
                                   NULL, &err, recipe, dir),
                 1);
    CHECK_CONTAINS(err, "80 x 64 cells, not 32");
    free(err);
    remove(tif);
}

/* Tile (ux, uz) of t samples of the whole grid's .ter (its heights and layer map) is the tile
 * level's .ter, which lists the whole world's materials in the same order. */
static bool ter_is_cut(const trn_ter *whole, const char *tile_ter, uint32_t ux, uint32_t uz,
                       uint32_t t)
{
    trn_ter piece;
    trn_error e;
    if (trn_ter_read(tile_ter, NULL, &piece, NULL, NULL, &e)) {
        fprintf(stderr, "%s: %s\n", tile_ter, e.message);
        return false;
    }
    bool same = piece.size == t && piece.material_count == whole->material_count;
    for (uint32_t k = 0; same && k < piece.material_count; k++)
        same = strcmp(piece.materials[k], whole->materials[k]) == 0;
    for (uint32_t j = 0; same && j < t; j++) {
        const size_t w = (size_t)(uz * t + j) * whole->size + ux * t, p = (size_t)j * t;
        same = memcmp(whole->heights + w, piece.heights + p, t * sizeof *piece.heights) == 0 &&
               memcmp(whole->layers + w, piece.layers + p, t) == 0;
    }
    trn_ter_dispose(&piece);
    return same;
}

/* --export beamng with --tiles: one level a tile, each the whole grid's level cut to the tile
 * (heights under one rule, layer map, the world's materials), each passing 'terrane validate';
 * tile sizes BeamNG cannot take and recipes whose materials need the whole surface are refused. */
static void test_tiles_beamng(void)
{
    char recipe[1024], whole[600], tiled[600], path[1400];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/hills.json", TRN_SOURCE_DIR);
    at(whole, sizeof whole, "bw/levels/hills");
    at(tiled, sizeof tiled, "bt/levels/hills");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 -q --export beamng:'%s'",
                                   NULL, NULL, recipe, whole),
                 0);
    char *out = NULL, *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --format json "
                                   "--export beamng:'%s'",
                                   &out, &err, recipe, tiled),
                 0);
    CHECK_CONTAINS(out, "\"levels\": 4,");
    CHECK_CONTAINS(out, "\"validate_error_count\": 0,");
    CHECK_CONTAINS(err, "wrote 2 x 2 BeamNG level(s) of 128 x 128 samples");
    CHECK_CONTAINS(err, "hills_1_1: 0 error(s), 0 warning(s)");
    free(out);
    free(err);
    trn_ter w;
    trn_error e;
    snprintf(path, sizeof path, "%s/theTerrain.ter", whole);
    CHECK(trn_ter_read(path, NULL, &w, NULL, NULL, &e) == TRN_OK);
    CHECK_EQ_INT(w.size, 256);
    CHECK(w.material_count >= 2);
    for (uint32_t uz = 0; uz < 2; uz++)
        for (uint32_t ux = 0; ux < 2; ux++) {
            snprintf(path, sizeof path, "%s_%u_%u/theTerrain.ter", tiled, ux, uz);
            CHECK(ter_is_cut(&w, path, ux, uz, 128));
            snprintf(path, sizeof path, "beamng validate '%s_%u_%u'", tiled, ux, uz);
            CHECK_EQ_INT(trn_test_run_clif("%s", NULL, NULL, path), 0);
        }
    trn_ter_dispose(&w);
    CHECK(!leftover_tiles(tmp));
    /* One tile: the level is the folder --export names; --scaffold makes it open and drive. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 128x128 --tiles 128 -q --scaffold "
                                   "--export beamng:'%s'",
                                   NULL, NULL, recipe, tiled),
                 0);
    snprintf(path, sizeof path, "%s/theTerrain.ter", tiled);
    CHECK(trn_test_exists(path));
    snprintf(path, sizeof path, "%s/info.json", tiled);
    CHECK(trn_test_exists(path));
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 64 --export "
                                   "beamng:'%s'",
                                   NULL, &err, recipe, tiled),
                 1);
    CHECK_CONTAINS(err, "--tiles must be a power of two in that range that divides the grid's "
                        "256 x 256 cells, not 64");
    free(err);
    char island[1024];
    snprintf(island, sizeof island, "%s/examples/recipes/island.json", TRN_SOURCE_DIR);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --export "
                                   "beamng:'%s'",
                                   NULL, &err, island, tiled),
                 1);
    CHECK_CONTAINS(err, "a level's terrain needs its surface materials, and a biome rule "
                        "measures the distance to water");
    free(err);
}

/* A .glb read back: its JSON and its binary chunk. */
typedef struct glb_file {
    json_t *doc;
    uint8_t *data;
    size_t size;
    const uint8_t *bin;
    size_t bin_size;
} glb_file;

static bool glb_read(const char *path, glb_file *g)
{
    memset(g, 0, sizeof *g);
    g->data = trn_test_read_file(path, &g->size);
    if (!g->data || g->size < 28) return false;
    uint32_t h[5];
    memcpy(h, g->data, sizeof h);
    if (h[0] != 0x46546C67u || h[1] != 2u || h[2] != g->size || (size_t)h[3] + 28u > g->size)
        return false;
    g->doc = json_loadb((const char *)g->data + 20, h[3], 0, NULL);
    uint32_t b[2];
    memcpy(b, g->data + 20 + h[3], sizeof b);
    g->bin = g->data + 28 + h[3];
    g->bin_size = b[0];
    return g->doc && b[1] == 0x004E4942u && (size_t)28u + h[3] + b[0] <= g->size;
}

static void glb_dispose(glb_file *g)
{
    json_decref(g->doc);
    free(g->data);
}

/* Accessor k's bytes (tightly packed, as terrane writes them) and their count. */
static const uint8_t *glb_accessor(const glb_file *g, json_int_t k, size_t *bytes)
{
    json_t *a = json_array_get(json_object_get(g->doc, "accessors"), (size_t)k);
    json_t *v = json_array_get(json_object_get(g->doc, "bufferViews"),
                               (size_t)json_integer_value(json_object_get(a, "bufferView")));
    const json_int_t comp = json_integer_value(json_object_get(a, "componentType"));
    const char *type = json_string_value(json_object_get(a, "type"));
    const size_t per = (comp == 5123 ? 2u : 4u) * (type && !strcmp(type, "VEC3") ? 3u : 1u);
    const size_t at = (size_t)json_integer_value(json_object_get(v, "byteOffset")) +
                      (size_t)json_integer_value(json_object_get(a, "byteOffset"));
    *bytes = per * (size_t)json_integer_value(json_object_get(a, "count"));
    return at + *bytes <= g->bin_size ? g->bin + at : NULL;
}

/* The node named name's mesh. */
static json_t *glb_node_mesh(const glb_file *g, const char *name)
{
    json_t *nodes = json_object_get(g->doc, "nodes"), *n;
    size_t k;
    json_array_foreach(nodes, k, n)
    {
        const char *nm = json_string_value(json_object_get(n, "name"));
        if (nm && !strcmp(nm, name) && json_object_get(n, "mesh"))
            return json_array_get(json_object_get(g->doc, "meshes"),
                                  (size_t)json_integer_value(json_object_get(n, "mesh")));
    }
    return NULL;
}

/* Chunk (cx, cz) of tile t's .glb is chunk (cx + ox, cz + oz) of the whole grid's: its
 * primitives' materials, normals and indices byte for byte, its positions moved by one offset. */
static bool chunk_is_whole(const glb_file *tile, const glb_file *whole, unsigned cx, unsigned cz,
                           unsigned ox, unsigned oz)
{
    char a[64], b[64];
    snprintf(a, sizeof a, "chunk_%u_%u", cx, cz);
    snprintf(b, sizeof b, "chunk_%u_%u", cx + ox, cz + oz);
    json_t *pa = json_object_get(glb_node_mesh(tile, a), "primitives"),
           *pb = json_object_get(glb_node_mesh(whole, b), "primitives");
    if (!pa || !pb || json_array_size(pa) != json_array_size(pb) || !json_array_size(pa))
        return false;
    float shift[2] = {NAN, NAN};
    for (size_t p = 0; p < json_array_size(pa); p++) {
        json_t *x = json_array_get(pa, p), *y = json_array_get(pb, p);
        if (!json_equal(json_object_get(x, "material"), json_object_get(y, "material")))
            return false;
        static const char *const attrs[] = {"NORMAL", "POSITION", NULL};
        for (int k = 0; k < 3; k++) {
            json_t *ix = k < 2 ? json_object_get(json_object_get(x, "attributes"), attrs[k])
                               : json_object_get(x, "indices");
            json_t *iy = k < 2 ? json_object_get(json_object_get(y, "attributes"), attrs[k])
                               : json_object_get(y, "indices");
            size_t nx = 0, ny = 0;
            const uint8_t *dx = glb_accessor(tile, json_integer_value(ix), &nx);
            const uint8_t *dy = glb_accessor(whole, json_integer_value(iy), &ny);
            if (!dx || !dy || nx != ny) return false;
            if (k != 1) {
                if (memcmp(dx, dy, nx) != 0) return false;
                continue;
            }
            for (size_t v = 0; v < nx / 12u; v++) {
                float fx[3], fy[3];
                memcpy(fx, dx + 12u * v, sizeof fx);
                memcpy(fy, dy + 12u * v, sizeof fy);
                if (isnan(shift[0])) shift[0] = fy[0] - fx[0], shift[1] = fy[2] - fx[2];
                if (fx[1] != fy[1] || fy[0] - fx[0] != shift[0] || fy[2] - fx[2] != shift[1])
                    return false;
            }
        }
    }
    return true;
}

/* --export gltf with --tiles: a .glb a tile of tile + 1 samples, each chunk of it the whole
 * grid's 'terrane mesh --chunks' chunk (normals and roles at the tile's edges from beyond it, so
 * no seam), positions in the tile's own frame; misuse refused. */
static void test_tiles_gltf(void)
{
    char recipe[1024], tif[600], dir[600], whole[600], path[1400];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/hills.json", TRN_SOURCE_DIR);
    at(tif, sizeof tif, "g.tif");
    at(dir, sizeof dir, "gltf");
    at(whole, sizeof whole, "whole.glb");
    char *out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 128x128 --tiles 64 --format json "
                                   "-q -o '%s' --export gltf:'%s'",
                                   &out, NULL, recipe, tif, dir),
                 0);
    CHECK_CONTAINS(out, "\"files\": 4,");
    CHECK_CONTAINS(out, "\"chunk_cells\": 32,");
    free(out);
    CHECK_EQ_INT(
        trn_test_run_clif("mesh '%s' -o '%s' --chunks --chunk-cells 32 -q", NULL, NULL, tif, whole),
        0);
    glb_file w;
    CHECK(glb_read(whole, &w));
    unsigned compared = 0;
    for (unsigned uz = 0; uz < 2; uz++)
        for (unsigned ux = 0; ux < 2; ux++) {
            snprintf(path, sizeof path, "%s/hills_%u_%u.glb", dir, ux, uz);
            glb_file g;
            CHECK(glb_read(path, &g));
            for (unsigned cz = 0; cz < 2; cz++)
                for (unsigned cx = 0; cx < 2; cx++) {
                    CHECK(chunk_is_whole(&g, &w, cx, cz, 2u * ux, 2u * uz));
                    compared++;
                }
            glb_dispose(&g);
        }
    CHECK_EQ_INT(compared, 16);
    glb_dispose(&w);
    CHECK(!leftover_tiles(tmp));
    /* Every engine's tiles from one run: each as the run with it alone writes it. */
    char one[600], all[600], lv[600], a[1400], b[1400];
    at(one, sizeof one, "gltf_one");
    at(all, sizeof all, "all");
    at(lv, sizeof lv, "all/levels/hills");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 -q --export "
                                   "gltf:'%s'",
                                   NULL, NULL, recipe, one),
                 0);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 -q --export "
                                   "gltf:'%s/g' --export unity:'%s/u' --export beamng:'%s'",
                                   NULL, NULL, recipe, all, all, lv),
                 0);
    snprintf(a, sizeof a, "%s/hills_1_1.glb", one);
    snprintf(b, sizeof b, "%s/g/hills_1_1.glb", all);
    CHECK(same_file(a, b));
    snprintf(a, sizeof a, "%s/u/hills_1_1.raw", all);
    CHECK(trn_test_exists(a));
    snprintf(a, sizeof a, "%s_1_1/theTerrain.ter", lv);
    CHECK(trn_test_exists(a));
    CHECK(!leftover_tiles(tmp) && !leftover_tiles(all));
    /* A recipe with water and a palette: the tiles say what they leave out. */
    char lakeside[1024];
    snprintf(lakeside, sizeof lakeside, "%s/examples/recipes/lakeside.json", TRN_SOURCE_DIR);
    char *notes = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 64x64 --tiles 32 --export "
                                   "gltf:'%s'",
                                   NULL, &notes, lakeside, one),
                 0);
    CHECK_CONTAINS(notes, "the engine tiles have no water: the recipe's water is resolved over "
                          "the whole surface");
    CHECK_CONTAINS(notes, "the glTF tiles have no trees, rocks or grass");
    free(notes);
    char *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 128x128 --tiles 48 --export "
                                   "gltf:'%s'",
                                   NULL, &err, recipe, dir),
                 1);
    CHECK_CONTAINS(err, "--tiles must divide the grid's 128 x 128 cells, not 48");
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export gltf:'%s'", NULL, &err, recipe, dir), 2);
    CHECK_CONTAINS(err, "--export gltf:DIR writes a tiled run's tiles: give --tiles N");
    free(err);
    remove(tif);
    remove(whole);
}

/* graph types says each type's reach. */
static void test_types_reach(void)
{
    char *out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("graph types", &out, NULL), 0);
    CHECK_CONTAINS(out, "  reach: neighbourhood of 1 sample (Horn's gradient");
    CHECK_CONTAINS(out, "  reach: global (depression filling and flow routing");
    CHECK_CONTAINS(out, "  reach: pointwise (its noise is pointwise; a landform with an evolution");
    free(out);
    out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("graph types --format json", &out, NULL), 0);
    CHECK_CONTAINS(out, "\"kind\": \"neighbourhood\",\n      \"halo\": 1,");
    free(out);
}

/* --format json: the summary with what the tiled run measured. */
static void test_tiles_json(void)
{
    char recipe[1024], tif[600];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/valley.json", TRN_SOURCE_DIR);
    at(tif, sizeof tif, "json.tif");
    char *out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 48x48 --tiles 32 --memory 32MiB "
                                   "--format json -o '%s'",
                                   &out, NULL, recipe, tif),
                 0);
    CHECK_CONTAINS(out, "\"tiles\": {\n    \"size\": 32,");
    CHECK_CONTAINS(out, "\"memory_budget\": 33554432,");
    CHECK_CONTAINS(out, "\"peak_resident_bytes\": ");
    CHECK_CONTAINS(out, "\"samples\": 2401");
    CHECK_CONTAINS(out, "json.tif");
    free(out);
    CHECK(trn_test_exists(tif));
    remove(tif);
}

static void test_tiles_refused(void)
{
    char recipe[1024], tif[600];
    snprintf(recipe, sizeof recipe, "%s/examples/recipes/valley.json", TRN_SOURCE_DIR);
    at(tif, sizeof tif, "refused.tif");
    char *err = NULL;
    /* A budget below one tile with its halos: the minimum is named, nothing is written. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 48x48 --tiles 32 --memory 100KiB "
                                   "-o '%s'",
                                   NULL, &err, recipe, tif),
                 1);
    CHECK_CONTAINS(err, "--memory 100 KiB is below the");
    CHECK_CONTAINS(err, "a tile of 32 samples with its halos is estimated to need on this 49 x "
                        "49-sample grid");
    CHECK_CONTAINS(err, "node 'evolve' (stream_power) reads the whole grid");
    /* The program's own 24 MiB: the grids here need a fraction of a MiB. */
    CHECK_CONTAINS(err, "give --memory 25MiB or more");
    CHECK(!trn_test_exists(tif));
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 20 -o '%s'", NULL, &err, recipe, tif), 2);
    CHECK_CONTAINS(err, "steps of 16");
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --memory 4GiB -o '%s'", NULL, &err, recipe, tif),
                 2);
    CHECK_CONTAINS(err, "give --tiles N too");
    free(err);
    err = NULL;
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --tiles 32 --memory 4XB -o '%s'", NULL, &err, recipe, tif),
        2);
    CHECK_CONTAINS(err, "--memory takes a size such as 4GiB");
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 32 -o '%s' --preview '%s/p.png'", NULL,
                                   &err, recipe, tif, tmp),
                 2);
    CHECK_CONTAINS(err, "--tiles writes -o OUT.tif and engine tiles only");
    free(err);
    err = NULL;
    CHECK_EQ_INT(
        trn_test_run_clif("generate '%s' --tiles 32 -o '%s/x.r32'", NULL, &err, recipe, tmp), 2);
    CHECK_CONTAINS(err, "give -o OUT.tif");
    free(err);
    /* Sculpt strokes are replayed on the tiles: the whole grid's heights. */
    char edited[600], r32[600];
    at(edited, sizeof edited, "edited.json");
    at(r32, sizeof r32, "edited.r32");
    static const char text[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"height_variation\":60}},\"default_biome\":\"grass\","
        "\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},\"edits\":[{\"type\":\"raise\","
        "\"radius\":60,\"strength\":8,\"center\":[128,128]}]}";
    CHECK(trn_test_write_file(edited, text, sizeof text - 1));
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' -q -o '%s'", NULL, NULL, edited, r32), 0);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 32 -q -o '%s'", NULL, NULL, edited, tif),
                 0);
    CHECK(same_heights(tif, r32, 65));
    remove(tif);
    remove(r32);
}

/* A recipe with a sea (pieces of it reach the border only through other tiles, both across and
 * along the tiles' rows; inland pits below it stay dry), biomes by rules and a palette of
 * trees (spacing, clusters, a biome list), rocks (a slope band) and grass (moisture). */
static const char palette_recipe[] =
    "{\"format_version\": 1, \"size\": [200, 200], \"resolution\": [128, 128], \"seed\": 7,\n"
    " \"sea_level\": 10, \"default_landform\": \"l\",\n"
    " \"landforms\": {\"l\": {\"base_height\": -6, \"height_variation\": 40,\n"
    "   \"feature_size\": 60, \"octaves\": 4}},\n"
    " \"default_biome\": \"meadow\",\n"
    " \"biomes\": {\"meadow\": {\"color\": [0.4, 0.6, 0.3, 1]},\n"
    "   \"forest\": {\"color\": [0.2, 0.4, 0.2, 1]}},\n"
    " \"rules\": [{\"id\": \"high\", \"biome\": \"forest\", \"elevation\": [14, 1000],\n"
    "   \"priority\": 1}],\n"
    " \"palette\": {\"format_version\": 3, \"name\": \"t\", \"placements\": {\n"
    "   \"grass\": {\"prefab\": \"prefab://grass\", \"category\": \"grass\", \"density\": 0.2,\n"
    "     \"candidate_spacing\": 1.5, \"moisture\": [0.2, 0.9], \"collision\": \"none\"},\n"
    "   \"pine\": {\"model\": \"asset://levels/scatter/art/shapes/pine.dae\",\n"
    "     \"collision\": \"none\", \"category\": \"tree\", \"density\": 0.02,\n"
    "     \"candidate_spacing\": 3, \"spacing\": 5, \"biomes\": [\"forest\"],\n"
    "     \"cluster\": {\"size\": 30, \"strength\": 0.7}, \"scale\": [0.8, 1.3]},\n"
    "   \"rock\": {\"model\": \"asset://models/rock\", \"category\": \"rock\", \"density\": 0.01,\n"
    "     \"collision\": \"none\","
    "     \"candidate_spacing\": 4, \"spacing\": 6, \"slope\": [10, 60]}}}}\n";

/* The whole grid's Unity export NAME of these instances in k x k terrains, trees and grass built
 * as generate builds them (grass rule 0, trees rules 1 and 2 of palette_recipe), into ref. */
static bool unity_reference(const trn_instances *inst, const trn_field *field, const char *ref,
                            const char *name, unsigned k)
{
    trn_unity_tree *trees = calloc(inst->count + 1u, sizeof *trees);
    double *points = calloc(2u * inst->count + 2u, sizeof *points);
    trn_unity_placed_prototype protos[2] = {
        {"pine", NULL, "asset://levels/scatter/art/shapes/pine.dae"},
        {"rock", NULL, "asset://models/rock"}};
    uint32_t nt = 0;
    size_t np = 0;
    for (size_t q = 0; trees && points && q < inst->count; q++) {
        const trn_instance *in = &inst->items[q];
        if (in->rule == 0) {
            points[2u * np] = in->x;
            points[2u * np + 1u] = in->z;
            np++;
            continue;
        }
        trn_unity_tree *tr = &trees[nt++];
        tr->position[0] = (float)(in->x / field->size_x);
        tr->position[1] = (float)in->y;
        tr->position[2] = (float)(in->z / field->size_z);
        tr->width_scale = tr->height_scale = (float)in->scale;
        tr->rotation = (float)(in->yaw * 3.14159265358979323846 / 180.0);
        tr->color = tr->lightmap_color = 0xffffffffu;
        tr->prototype = (int32_t)in->rule - 1;
    }
    trn_unity_detail_layer grass = {"grass", "prefab://grass", points, np};
    trn_unity_export_options uo;
    trn_unity_export_options_default(&uo);
    uo.name = name;
    uo.tiles_x = uo.tiles_z = k;
    uo.trees = trees;
    uo.tree_count = nt;
    uo.placed_prototypes = protos;
    uo.placed_prototype_count = 2;
    uo.details = &grass;
    uo.detail_count = 1;
    trn_error e;
    const bool ok =
        trees && points && !trn_unity_export(ref, field, NULL, NULL, &uo, NULL, NULL, NULL, &e);
    free(trees);
    free(points);
    return ok;
}

/* How many of the k x k terrains NAME_X_Z's trees.json and detail0.png in dir differ from ref's (a
 * missing file differs). */
static size_t unity_differ(const char *dir, const char *ref, const char *name, unsigned k)
{
    size_t differ = 0;
    for (unsigned uz = 0; uz < k; uz++)
        for (unsigned ux = 0; ux < k; ux++) {
            static const char *const kinds[2] = {"trees.json", "detail0.png"};
            for (int q = 0; q < 2; q++) {
                char a[700], b[700];
                snprintf(a, sizeof a, "%s/%s_%u_%u_%s", dir, name, ux, uz, kinds[q]);
                snprintf(b, sizeof b, "%s/%s_%u_%u_%s", ref, name, ux, uz, kinds[q]);
                differ += !same_file(a, b);
            }
        }
    return differ;
}

/* --export unity with --tiles and a palette: each terrain's trees and detail layers are the
 * files the whole grid's export writes for that tile (trn_unity_export of the whole grid with
 * its instances, tiled), byte for byte, the sea flooded across tiles as over the whole grid;
 * --export beamng: each level's forest items are the whole grid's instances in its cells as the
 * forest writer writes them; recipes whose placements the tiles cannot decide are refused,
 * naming why. */
static void test_tiles_unity_palette(void)
{
    char recipe[600], dir[600], ref[600];
    at(recipe, sizeof recipe, "scatter.json");
    FILE *f = fopen(recipe, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(palette_recipe, f);
    fclose(f);
    trn_recipe r;
    trn_error e;
    memset(&r, 0, sizeof r);
    trn_palette pal;
    memset(&pal, 0, sizeof pal);
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.palette = &pal;
    if (trn_recipe_read(recipe, &r, NULL, &e) ||
        trn_palette_parse(r.palette_json, strlen(r.palette_json), recipe, &pal, &e) ||
        trn_recipe_generate(&r, &go, &gen, NULL, NULL, &e)) {
        fprintf(stderr, "the palette recipe: %s\n", e.message);
        CHECK(false);
        trn_recipe_dispose(&r);
        return;
    }
    size_t wet = 0;
    for (size_t k = 0; k < trn_field_sample_count(&gen.field); k++)
        wet += gen.water_distance[k] == 0.0f;
    CHECK(wet > 100 && gen.instances.count > 1000); /* the sea and the palette both matter */
    static const unsigned tiles[2] = {32, 64};
    for (int v = 0; v < 2; v++) {
        const unsigned t = tiles[v], k = 128u / t;
        at(dir, sizeof dir, v ? "unity_pal64" : "unity_pal32");
        at(ref, sizeof ref, v ? "unity_palref64" : "unity_palref32");
        char *notes = NULL;
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles %u --export unity:'%s'", NULL,
                                       &notes, recipe, t, dir),
                     0);
        CHECK_CONTAINS(notes, "the palette's instances, as the whole grid places them");
        free(notes);
        /* The whole grid's export, tiled: trees and grass built as generate builds them. */
        CHECK(unity_reference(&gen.instances, &gen.field, ref, "scatter", k));
        CHECK_EQ_INT(unity_differ(dir, ref, "scatter", k), 0);
        CHECK(!leftover_tiles(tmp));
    }
    /* A palette without a material set leaves the biomes' materials: each terrain's splat map
     * is the whole grid's --export unity splat map cut to the terrain (texels are cells; PNG
     * row 0 the far edge). */
    {
        char whole[600], a[800];
        at(whole, sizeof whole, "unity_palwhole");
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' -q --export unity:'%s'", NULL, NULL, recipe,
                                       whole),
                     0);
        snprintf(a, sizeof a, "%s/scatter_splat0.png", whole);
        trn_image wi, ti;
        memset(&wi, 0, sizeof wi);
        size_t bad = 0, texels = 0;
        if (!trn_png_read(a, NULL, &wi, &e) && wi.channels == 4 && wi.width == 128)
            for (unsigned uz = 0; uz < 4; uz++)
                for (unsigned ux = 0; ux < 4; ux++) {
                    snprintf(a, sizeof a, "%s/unity_pal32/scatter_%u_%u_splat0.png", tmp, ux,
                             uz);
                    memset(&ti, 0, sizeof ti);
                    if (trn_png_read(a, NULL, &ti, &e) || ti.width != 32 || ti.channels != 4) {
                        bad++;
                        continue;
                    }
                    for (unsigned y = 0; y < 32; y++)
                        for (unsigned x = 0; x < 32; x++) {
                            const unsigned wz = 127u - (uz * 32u + (31u - y));
                            bad += memcmp((const uint8_t *)ti.data + ((size_t)y * 32u + x) * 4u,
                                          (const uint8_t *)wi.data +
                                              ((size_t)wz * 128u + ux * 32u + x) * 4u,
                                          4) != 0;
                            texels++;
                        }
                    trn_image_dispose(&ti);
                }
        trn_image_dispose(&wi);
        CHECK_EQ_INT(texels, 16u * 32u * 32u);
        CHECK_EQ_INT(bad, 0);
    }
    /* BeamNG levels of 128 on a 256 x 256 world: each level's forest items are the whole grid's
     * instances in its cells, in its own frame, as the forest writer writes them. */
    trn_generated_dispose(&gen);
    memset(&gen, 0, sizeof gen);
    char lv[600];
    at(lv, sizeof lv, "bng/levels/scatter");
    if (trn_recipe_change_grid(&r, 200.0, 200.0, 256, 256, TRN_EDITS_REFUSE, &e) ||
        trn_recipe_generate(&r, &go, &gen, NULL, NULL, &e)) {
        fprintf(stderr, "the palette recipe at 256: %s\n", e.message);
        CHECK(false);
    } else {
        char *notes = NULL;
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --export "
                                       "beamng:'%s'",
                                       NULL, &notes, recipe, lv),
                     0);
        CHECK_CONTAINS(notes, "forest: ");
        free(notes);
        char *out = NULL;
        CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --export "
                                       "beamng:'%s' --format json",
                                       &out, NULL, recipe, lv),
                     0);
        json_t *sj = json_loads(out ? out : "", 0, NULL);
        const json_int_t fi =
            json_integer_value(json_object_get(json_object_get(sj, "beamng"), "forest_items"));
        json_decref(sj);
        free(out);
        const double dx = 200.0 / 256.0;
        size_t differ = 0, items = 0;
        for (unsigned uz = 0; uz < 2; uz++)
            for (unsigned ux = 0; ux < 2; ux++) {
                trn_instances cut = {calloc(gen.instances.count + 1u, sizeof(trn_instance)), 0};
                const double ox = (double)(ux * 128u) * dx, oz = (double)(uz * 128u) * dx;
                for (size_t q = 0; q < gen.instances.count; q++) {
                    trn_instance in = gen.instances.items[q];
                    if ((ux && in.x < ox) || (!ux && in.x >= 128.0 * dx) || (uz && in.z < oz) ||
                        (!uz && in.z >= 128.0 * dx))
                        continue;
                    in.x -= ox;
                    in.z -= oz;
                    cut.items[cut.count++] = in;
                }
                char rdir[700], a[800], b[800];
                snprintf(rdir, sizeof rdir, "%s/bngref_%u_%u", tmp, ux, uz);
                trn_beamng_forest_options fo;
                memset(&fo, 0, sizeof fo);
                fo.level_dir = rdir;
                fo.origin_x = fo.origin_y = -128.0 * dx / 2.0;
                trn_beamng_forest_result fr;
                CHECK_OK(trn_beamng_level_write_forest(&pal, &cut, &fo, &fr, &e));
                items += fr.items;
                snprintf(a, sizeof a, "%s_%u_%u/forest/terrane_pine.forest4.json", lv, ux, uz);
                snprintf(b, sizeof b, "%s/forest/terrane_pine.forest4.json", rdir);
                differ += !same_file(a, b);
                free(cut.items);
            }
        CHECK(items > 20);
        CHECK_EQ_INT(fi, items);
        CHECK_EQ_INT(differ, 0);
    }
    /* Placements that read the distance to water: refused, naming the placement. */
    char *err = NULL;
    char bad[600];
    at(bad, sizeof bad, "scatter_wd.json");
    f = fopen(bad, "wb");
    if (f) {
        const char *slope = strstr(palette_recipe, "\"slope\": [10, 60]");
        if (slope)
            fprintf(f, "%.*s\"water_distance\": [1, 9]%s", (int)(slope - palette_recipe),
                    palette_recipe, slope + strlen("\"slope\": [10, 60]"));
        fclose(f);
    }
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 64 --export unity:'%s'", NULL, &err,
                                   bad, dir),
                 1);
    CHECK_CONTAINS(err, "placement \"rock\" reads the distance to water");
    free(err);
    trn_generated_dispose(&gen);
    trn_palette_dispose(&pal);
    trn_recipe_dispose(&r);
}

/* --scatter-exclusions with --tiles: each Unity terrain's trees and grass are the whole grid's
 * with the scene's keys suppressed, byte for byte, and the note is the whole grid's: a key
 * counts as matched when any tile matched it (one lies inside a single tile, one within the
 * cell two tiles' rectangles share, counted once), a key no tile matched counts once. The
 * placement ceiling counts each instance once over the tiles: a world of exactly the ceiling
 * passes, one more is refused, in Unity terrains and BeamNG levels alike, where the whole grid
 * keeps the first ones. */
static void test_tiles_exclusions(void)
{
    char recipe[600], dir[600], ref[600], whole[600], keys[600];
    at(recipe, sizeof recipe, "scatter_x.json");
    CHECK(trn_test_write_file(recipe, palette_recipe, sizeof palette_recipe - 1));
    trn_recipe r;
    trn_error e;
    memset(&r, 0, sizeof r);
    trn_palette pal;
    memset(&pal, 0, sizeof pal);
    trn_generated gen;
    memset(&gen, 0, sizeof gen);
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.palette = &pal;
    if (trn_recipe_read(recipe, &r, NULL, &e) ||
        trn_palette_parse(r.palette_json, strlen(r.palette_json), recipe, &pal, &e) ||
        trn_recipe_generate(&r, &go, &gen, NULL, NULL, &e)) {
        fprintf(stderr, "the palette recipe: %s\n", e.message);
        CHECK(false);
        trn_recipe_dispose(&r);
        return;
    }
    /* Tiles of 32 cells: tile 1 holds cells 32..63, its rectangle reaches a cell beyond each
     * way, so x in [63, 64) cells lies in tile 1 and in tile 2's rectangle. */
    const double d = gen.field.size_x / gen.field.cells_x;
    char inner[TRN_INSTANCE_KEY_MAX] = "", edge[TRN_INSTANCE_KEY_MAX] = "",
         grass[TRN_INSTANCE_KEY_MAX] = "";
    for (size_t q = 0; q < gen.instances.count; q++) {
        const trn_instance *in = &gen.instances.items[q];
        const double cx = in->x / d, cz = in->z / d;
        const bool mid_z = cz > 40.0 && cz < 56.0;
        if (!inner[0] && in->rule && cx > 40.0 && cx < 56.0 && mid_z)
            trn_instance_key(&pal, in, inner, sizeof inner);
        else if (!edge[0] && in->rule && cx >= 63.0 && cx < 64.0)
            trn_instance_key(&pal, in, edge, sizeof edge);
        else if (!grass[0] && !in->rule && cx > 8.0 && cx < 24.0)
            trn_instance_key(&pal, in, grass, sizeof grass);
    }
    CHECK(inner[0] && edge[0] && grass[0]);
    at(keys, sizeof keys, "scene_x.json");
    char text[400];
    const int n = snprintf(text, sizeof text,
                           "{\"scatter_exclusions\": [\"%s\", \"pine/999999_999999\", \"%s\", "
                           "\"%s\"]}",
                           inner, edge, grass);
    CHECK(trn_test_write_file(keys, text, (size_t)n));
    trn_scatter_exclusions ex = {NULL, 0};
    size_t suppressed = 0, unmatched = 0;
    CHECK_OK(trn_scatter_exclusions_parse(text, (size_t)n, keys, &ex, &e));
    trn_instances kept = {calloc(gen.instances.count + 1u, sizeof(trn_instance)),
                          gen.instances.count};
    if (kept.items)
        memcpy(kept.items, gen.instances.items, gen.instances.count * sizeof(trn_instance));
    CHECK_OK(trn_instances_suppress(&pal, &kept, &ex, &suppressed, &unmatched, &e));
    CHECK_EQ_INT(suppressed, 3);
    CHECK_EQ_INT(unmatched, 1);
    trn_scatter_exclusions_dispose(&ex);
    char note[800];
    snprintf(note, sizeof note, "%s: 3 placements suppressed, 1 key matched none", keys);
    /* The whole grid's run says it so. */
    char *notes = NULL;
    at(whole, sizeof whole, "unity_xwhole");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export unity:'%s' --scatter-exclusions '%s'",
                                   NULL, &notes, recipe, whole, keys),
                 0);
    CHECK_CONTAINS(notes, note);
    free(notes);
    /* Tiled, as the whole grid's instances with the keys suppressed. */
    at(dir, sizeof dir, "unity_x32");
    at(ref, sizeof ref, "unity_xref32");
    notes = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 32 --export unity:'%s' "
                                   "--scatter-exclusions '%s'",
                                   NULL, &notes, recipe, dir, keys),
                 0);
    CHECK_CONTAINS(notes, note);
    free(notes);
    CHECK(unity_reference(&kept, &gen.field, ref, "scatter_x", 4));
    CHECK_EQ_INT(unity_differ(dir, ref, "scatter_x", 4), 0);
    free(kept.items);
    /* BeamNG levels of 128 on a 256 x 256 world (the keys' sites are placed there too) say what
     * the whole grid says at 256. */
    char lv[600];
    at(lv, sizeof lv, "bngx/levels/scatter");
    notes = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --export unity:'%s' "
                                   "--scatter-exclusions '%s'",
                                   NULL, &notes, recipe, whole, keys),
                 0);
    const char *line = notes ? strstr(notes, keys) : NULL;
    const size_t len = line ? strcspn(line, "\n") : 0;
    snprintf(note, sizeof note, "%.*s", (int)len, line ? line : "");
    CHECK_CONTAINS(note, ": 3 placements suppressed, 1 key matched none"); /* the same sites */
    free(notes);
    notes = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --export "
                                   "beamng:'%s' --scatter-exclusions '%s'",
                                   NULL, &notes, recipe, lv, keys),
                 0);
    CHECK_CONTAINS(notes, note);
    free(notes);
    /* The ceiling over the tiles: every instance counted once, before suppressing. */
    const unsigned total = (unsigned)gen.instances.count;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 32 -q --export unity:'%s' "
                                   "--scatter-exclusions '%s' --max-placements %u",
                                   NULL, NULL, recipe, dir, keys, total),
                 0);
    char *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --tiles 32 --export unity:'%s' "
                                   "--max-placements %u",
                                   NULL, &err, recipe, dir, total - 1u),
                 1);
    char want[200];
    snprintf(want, sizeof want, "the palette places more than %u instances over the world",
             total - 1u);
    CHECK_CONTAINS(err, want);
    free(err);
    err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 256x256 --tiles 128 --export "
                                   "beamng:'%s' --max-placements 10",
                                   NULL, &err, recipe, lv),
                 1);
    CHECK_CONTAINS(err, "the palette places more than 10 instances over the world");
    free(err);
    /* The whole grid keeps the first 10 (grass comes first in rule order). */
    char *out = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --export unity:'%s' --max-placements 10 "
                                   "--format json",
                                   &out, NULL, recipe, whole),
                 0);
    json_t *sj = json_loads(out ? out : "", 0, NULL);
    const json_t *u = json_object_get(sj, "unity");
    CHECK_EQ_INT(json_integer_value(json_object_get(u, "detail_instances")) +
                     json_integer_value(json_object_get(u, "tree_count")),
                 10);
    json_decref(sj);
    free(out);
    CHECK(!leftover_tiles(tmp));
    trn_generated_dispose(&gen);
    trn_palette_dispose(&pal);
    trn_recipe_dispose(&r);
}

/* The largest world a recipe may ask for, 65536 x 65536 cells (65537^2 samples, above 2^32),
 * passes validation with --tiles and gets a budget estimate from the tile, not the whole grid:
 * the writer's band of three tile rows (3 x 1024 x 65537 floats) and the tile with its halos.
 * Nothing is generated: the budget given is below the estimate. */
static void test_tiles_largest_world(void)
{
    static const char plain[] =
        "{\"size\": [65536, 65536], \"resolution\": [256, 256], \"seed\": 7,\n"
        " \"default_landform\": \"rolling\",\n"
        " \"landforms\": {\"rolling\": {\"base_height\": 0, \"height_variation\": 36,\n"
        "   \"feature_size\": 300, \"octaves\": 3}},\n"
        " \"default_biome\": \"grass\",\n"
        " \"biomes\": {\"grass\": {\"color\": [0.4, 0.6, 0.3, 1]}}}\n";
    char recipe[600], tif[600], valley[1024];
    at(recipe, sizeof recipe, "largest.json");
    at(tif, sizeof tif, "largest.tif");
    CHECK(trn_test_write_file(recipe, plain, sizeof plain - 1));
    char *err = NULL;
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 65536x65536 --tiles 1024 "
                                   "--memory 1MiB --no-work-limit -o '%s'",
                                   NULL, &err, recipe, tif),
                 1);
    CHECK_CONTAINS(err, "--memory 1.0 MiB is below the 812.0 MiB a tile of 1024 samples with its "
                        "halos is estimated to need on this 65537 x 65537-sample grid");
    CHECK(!trn_test_exists(tif));
    free(err);
    err = NULL;
    /* The work budget names the samples past 2^32 and how to raise it. */
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 65536x65536 --tiles 1024 "
                                   "--memory 4GiB -o '%s'",
                                   NULL, &err, recipe, tif),
                 1);
    CHECK_CONTAINS(err, "work 12885295107 (4295098369 samples x (3 octaves + 0 warp))");
    CHECK_CONTAINS(err, "--max-work N");
    free(err);
    err = NULL;
    /* Without --tiles the whole grid is refused, pointing to --tiles; past 65536 cells, always. */
    char r32[600];
    at(r32, sizeof r32, "largest.r32");
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 65536x65536 -o '%s'", NULL, &err,
                                   recipe, r32),
                 1);
    CHECK_CONTAINS(err, "65536 x 65536 cells make 4295098369 samples");
    CHECK_CONTAINS(err, "terrane generate --tiles");
    CHECK(!trn_test_exists(r32));
    free(err);
    err = NULL;
    CHECK(trn_test_run_clif("generate '%s' --resolution 65537x65536 --tiles 1024 -o '%s'", NULL,
                            &err, recipe, tif) != 0);
    CHECK_CONTAINS(err, "expected two whole numbers 1..65536, found 65537 x 65536");
    free(err);
    err = NULL;
    /* A global node (stream power) on that grid is refused before anything runs, named. */
    snprintf(valley, sizeof valley, "%s/examples/recipes/valley.json", TRN_SOURCE_DIR);
    CHECK_EQ_INT(trn_test_run_clif("generate '%s' --resolution 65536x65536 --tiles 1024 "
                                   "--memory 1024GiB --no-work-limit -o '%s'",
                                   NULL, &err, valley, tif),
                 1);
    CHECK_CONTAINS(err, "node 'evolve' (stream_power) works on the whole grid, which may hold at "
                        "most 2147483647 samples");
    CHECK_CONTAINS(err, "this grid has 65537 x 65537 = 4295098369");
    CHECK(!trn_test_exists(tif));
    free(err);
    remove(recipe);
}

int main(void)
{
    if (!trn_test_tmpdir(tmp, sizeof tmp)) return 1;
    RUN(test_tiles_match_whole_grid);
    RUN(test_tiles_unity);
    RUN(test_tiles_unity_palette);
    RUN(test_tiles_exclusions);
    RUN(test_tiles_beamng);
    RUN(test_tiles_gltf);
    RUN(test_tiles_refused);
    RUN(test_tiles_largest_world);
    RUN(test_tiles_json);
    RUN(test_types_reach);
    return trn_test_finish();
}
