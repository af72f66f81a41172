/* A DEM input in tiles: each tile resamples its own part of the file, bit for bit the whole
 * grid's, for every filter, up and down, with NoData filled and a window, under a slope mask's
 * halo; and the memory estimate counts the decoded file it keeps. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"
#include "graph/nodes/node_common.h"
#include "graph/tiles.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"
#include "terrane/resample.h"
#include "test.h"

#define R16 "tiles_dem_test.r16" /* 33 x 33 */
#define R32 "tiles_dem_test.r32" /* 40 x 27 with a hole of NaN */

static bool write_r16(void)
{
    return test_write_r16_33(R16);
}

static bool write_r32(void)
{
    FILE *f = fopen(R32, "wb");
    if (!f) return false;
    for (uint32_t j = 0; j < 27; j++)
        for (uint32_t i = 0; i < 40; i++) {
            float v = (float)(40.0 * sin(i * 0.37) * cos(j * 0.23) + 0.5 * i * j);
            if (i >= 12 && i < 17 && j >= 9 && j < 13) v = NAN; /* NoData, filled whole-file */
            fwrite(&v, sizeof v, 1, f);
        }
    return fclose(f) == 0;
}

/* A recipe of cx x cz cells whose graph reads the DEM with params, a slope mask of it (a halo
 * of 1 on the DEM's tiles) and an offset of the DEM under that mask. */
static bool load(uint32_t cx, uint32_t cz, const char *params, trn_recipe *r, trn_graph *g)
{
    char graph[1024], text[2048];
    snprintf(graph, sizeof graph,
             "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
             "{\"id\":\"hin\",\"type\":\"heightfield_input\",\"params\":%s},"
             "{\"id\":\"sm\",\"type\":\"slope_mask\",\"params\":{\"min\":5,\"max\":40},"
             "\"inputs\":{\"field\":{\"node\":\"hin\"}}},"
             "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":7},"
             "\"inputs\":{\"field\":{\"node\":\"hin\"},\"mask\":{\"node\":\"sm\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
             "\"off\"}}}]}",
             params);
    snprintf(text, sizeof text,
             "{\"size\":[300,240],\"resolution\":[%u,%u],\"seed\":5,\"default_landform\":\"l\","
             "\"landforms\":{\"l\":{}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":"
             "[0.4,0.6,0.3,1]}},\"graph\":%s}",
             cx, cz, graph);
    trn_error e;
    if (trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e)) {
        fprintf(stderr, "recipe refused: %s\n", e.message);
        return false;
    }
    if (trn_graph_parse(graph, strlen(graph), "g.json", g, &e)) {
        fprintf(stderr, "graph refused: %s\n", e.message);
        trn_recipe_dispose(r);
        return false;
    }
    return true;
}

typedef struct collect {
    float *v;
    uint32_t stride, tiles;
} collect;

static trn_status collect_tile(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                               const float *values, trn_error *err)
{
    (void)err;
    collect *c = user;
    c->tiles++;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(c->v + (size_t)(z0 + j) * c->stride + x0, values + (size_t)j * nx,
               nx * sizeof(float));
    return TRN_OK;
}

/* Tiles of each size give the whole grid's bytes for the DEM, its mask and the output. */
static bool tiles_equal_whole(uint32_t cx, uint32_t cz, const char *params)
{
    trn_recipe r;
    trn_graph g;
    if (!load(cx, cz, params, &r, &g)) return false;
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    trn_graph_run *run = NULL;
    trn_error e;
    bool same = true;
    if (trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e)) {
        fprintf(stderr, "whole evaluation failed: %s\n", e.message);
        same = false;
    }
    const size_t n = (size_t)(cx + 1u) * (cz + 1u);
    static const char *const ids[] = {"hin", "sm", "off"};
    static const char *const pins[] = {"field", "mask", "field"};
    const uint32_t sizes[] = {7, 16, 17, 33, 1000};
    for (size_t k = 0; same && k < sizeof ids / sizeof ids[0]; k++) {
        trn_graph_value v;
        if (trn_graph_run_output(run, ids[k], pins[k], &v, &e)) {
            fprintf(stderr, "no output %s: %s\n", ids[k], e.message);
            same = false;
            break;
        }
        for (size_t s = 0; same && s < sizeof sizes / sizeof sizes[0]; s++) {
            collect c = {calloc(n, sizeof(float)), cx + 1u, 0};
            const trn_graph_tile_options to = {.tile = sizes[s], .node_id = ids[k], .pin = pins[k]};
            const trn_status st =
                trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e);
            if (st) fprintf(stderr, "tiled evaluation failed: %s\n", e.message);
            same = c.v && st == TRN_OK && memcmp(c.v, v.values, n * sizeof(float)) == 0;
            if (!same)
                fprintf(stderr, "%s on %ux%u cells, %s: tiles of %u differ from the whole grid\n",
                        params, cx, cz, ids[k], sizes[s]);
            free(c.v);
        }
    }
    trn_graph_run_free(run);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    return same;
}

static void test_dem_tiles_equal_whole(void)
{
    CHECK(write_r16());
    CHECK(write_r32());
    static const char r16[] = "{\"path\":\"" R16 "\",\"format\":\"r16\",\"max_height\":80";
    char p[256];
    /* Enlarged (33 -> 65 and 49 samples) and shrunk (33 -> 21 and 14), each filter. */
    const char *filters[] = {"bilinear", "bicubic", "average", "spline"};
    for (size_t f = 0; f < 4; f++) {
        snprintf(p, sizeof p, "%s,\"resample\":\"%s\"}", r16, filters[f]);
        CHECK(tiles_equal_whole(64, 48, p));
        CHECK(tiles_equal_whole(20, 13, p));
    }
    /* A window of a non-square file with NoData (filled over the whole file), scaled. */
    static const char r32[] =
        "{\"path\":\"" R32 "\",\"format\":\"r32\",\"raw_width\":40,\"raw_height\":27,"
        "\"height_scale\":1.5,\"height_offset\":-3";
    for (size_t f = 0; f < 4; f++) {
        snprintf(p, sizeof p, "%s,\"pixel_window\":[3,2,37,25],\"resample\":\"%s\"}", r32,
                 filters[f]);
        CHECK(tiles_equal_whole(70, 45, p));
        CHECK(tiles_equal_whole(25, 16, p));
    }
    remove(R16);
    remove(R32);
}

/* The resampler's parts are its whole grid's samples, and a part outside the grid is refused. */
static void test_resample_part(void)
{
    trn_field src;
    trn_error e;
    CHECK_OK(trn_field_init(&src, 9, 6, 90, 60, &e));
    for (size_t k = 0; k < trn_field_sample_count(&src); k++)
        src.heights[k] = (float)(k % 7) * 3.0f + (float)(k / 10);
    const trn_resample_window w = {0.5, 1, 8.25, 5.5};
    const trn_resample_filter fs[] = {TRN_RESAMPLE_BILINEAR, TRN_RESAMPLE_BICUBIC,
                                      TRN_RESAMPLE_AVERAGE};
    for (int f = 0; f < 3; f++) {
        for (int up = 0; up < 2; up++) {
            const uint32_t cx = up ? 23 : 3, cz = up ? 17 : 2;
            trn_field whole;
            CHECK_OK(trn_field_resample(&src, &w, cx, cz, fs[f], &whole, NULL, NULL, &e));
            float part[4 * 3];
            const uint32_t i0 = cx - 3, j0 = cz - 2; /* the far corner: the last sample too */
            CHECK_OK(trn_field_resample_part(&src, &w, cx, cz, fs[f], i0, j0, 4, 3, part, &e));
            bool same = true;
            for (uint32_t j = 0; j < 3; j++)
                same = same && memcmp(part + j * 4, whole.heights + (j0 + j) * (cx + 1u) + i0,
                                      4 * sizeof(float)) == 0;
            CHECK(same);
            CHECK_EQ_INT(
                trn_field_resample_part(&src, &w, cx, cz, fs[f], i0 + 1, j0, 4, 3, part, &e),
                TRN_ERR_INVALID_ARGUMENT);
            trn_field_dispose(&whole);
        }
    }
    /* The spline's parts likewise. */
    trn_field up;
    CHECK_OK(trn_field_upsample_spline(&src, 40, 31, 99, &up, &e));
    trn_spline_surface *s = NULL;
    CHECK_OK(trn_spline_surface_make(&src, 40, 31, 99, &s, &e));
    float part[5 * 4];
    CHECK_OK(trn_spline_surface_sample(s, 36, 28, 5, 4, part, &e));
    bool same = true;
    for (uint32_t j = 0; j < 4; j++)
        same =
            same && memcmp(part + j * 5, up.heights + (28 + j) * 41u + 36, 5 * sizeof(float)) == 0;
    CHECK(same);
    CHECK_EQ_INT(trn_spline_surface_sample(s, 36, 29, 5, 4, part, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_spline_surface_bytes(s) >= 10u * 7u * sizeof(double));
    trn_spline_surface_free(s);
    trn_field_dispose(&up);
    trn_field_dispose(&src);
}

/* The DEM input is a tile node without a halo; the tiled estimate counts what it holds: the
 * file's pages and pixels while it decodes them, the float field it keeps, and an enlarging
 * spline's samples and coefficients. */
static void test_dem_reach_and_memory(void)
{
    CHECK(write_r16());
    trn_recipe r;
    trn_graph g;
    CHECK(load(64, 48, "{\"path\":\"" R16 "\",\"format\":\"r16\"}", &r, &g));
    trn_node_reach reach;
    CHECK(trn_graph_node_reach(&g.nodes[0], &r, &reach));
    CHECK(reach.kind == TRN_REACH_POINTWISE && reach.halo == 0);
    const trn_node_type *t = trn_node_type_find("heightfield_input");
    /* The file's pages, its 16-bit pixels and the float field. */
    CHECK_EQ_INT(trn_node_kept_bytes(&g.nodes[0], t, &r), 33u * 33u * (2u + 2u + 4u));
    CHECK_EQ_INT(trn_node_kept_bytes(&g.nodes[1], trn_node_type_find("slope_mask"), &r), 0);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    uint64_t plain = 0, spline = 0, shrunk = 0;
    trn_error e;
    int global = 0;
    CHECK_OK(trn_graph_tiles_memory(&g, &r, &o, 16, &plain, &global, &e));
    CHECK_EQ_INT(global, -1); /* no node needs the whole grid */
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    CHECK(
        load(64, 48, "{\"path\":\"" R16 "\",\"format\":\"r16\",\"resample\":\"spline\"}", &r, &g));
    /* The field, the window's samples and the coefficients: more than the decoding. */
    CHECK_EQ_INT(trn_node_kept_bytes(&g.nodes[0], t, &r), 33u * 33u * (4u + 4u + 8u));
    CHECK_OK(trn_graph_tiles_memory(&g, &r, &o, 16, &spline, NULL, &e));
    CHECK_EQ_INT(spline - plain, 33u * 33u * 8u);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    /* A spline that shrinks is bicubic: the file alone. */
    CHECK(
        load(20, 13, "{\"path\":\"" R16 "\",\"format\":\"r16\",\"resample\":\"spline\"}", &r, &g));
    CHECK_EQ_INT(trn_node_kept_bytes(&g.nodes[0], t, &r), 33u * 33u * 8u);
    CHECK_OK(trn_graph_tiles_memory(&g, &r, &o, 16, &shrunk, NULL, &e));
    CHECK(shrunk > 33u * 33u * 8u);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    /* An R32: 4-byte pixels decoded. */
    CHECK(write_r32());
    CHECK(load(64, 48,
               "{\"path\":\"" R32 "\",\"format\":\"r32\",\"raw_width\":40,\"raw_height\":27}", &r,
               &g));
    CHECK_EQ_INT(trn_node_kept_bytes(&g.nodes[0], t, &r), 40u * 27u * (4u + 4u + 4u));
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(R16);
    remove(R32);
}

int main(void)
{
    RUN(test_resample_part);
    RUN(test_dem_tiles_equal_whole);
    RUN(test_dem_reach_and_memory);
    return trn_test_finish();
}
