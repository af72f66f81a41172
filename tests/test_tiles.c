/* Tiled graph evaluation: every node type declares its reach, and tiles of any size (dividing
 * the grid or not) give the whole-grid bytes for a graph with every node type. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tiffio.h>

#include "core/paths.h"
#include "graph/tile_store.h"
#include "graph/tiles.h"
#include "recipe/tiles_replay.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "test.h"

#define CELLS 64u
#define SAMPLES (CELLS + 1u)
#define DEM "tiles_test_dem.r16"

/* Every node type, connected; neighbourhood nodes chained so their halos accumulate (sm2 reads
 * off, which reads the blend b2 whose mask is the slope sm of lf: lf needs a halo of 2). */
static const char graph_all[] =
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"lf\",\"type\":\"landform\",\"params\":{\"landform\":\"hills\"}},"
    "{\"id\":\"flat\",\"type\":\"flat_terrain\",\"params\":{\"height\":3}},"
    "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":50,"
    "\"feature_size\":100,\"warp_amplitude\":20,\"heading\":30,\"stretch\":1.5}},"
    "{\"id\":\"hin\",\"type\":\"heightfield_input\",\"params\":{\"path\":\"" DEM "\","
    "\"format\":\"r16\",\"max_height\":80}},"
    "{\"id\":\"em\",\"type\":\"elevation_mask\",\"params\":{\"min\":10,\"max\":30},"
    "\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"sm\",\"type\":\"slope_mask\",\"params\":{\"min\":5,\"max\":25},"
    "\"inputs\":{\"field\":{\"node\":\"lf\"}}},"
    "{\"id\":\"pm\",\"type\":\"path_distance_mask\",\"params\":{\"points\":[[10,10],[200,150]],"
    "\"edge_warp\":8},\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"po\",\"type\":\"polygon_mask\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"b1\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"lf\"},"
    "\"b\":{\"node\":\"flat\"},\"mask\":{\"node\":\"em\"}}},"
    "{\"id\":\"b2\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"b1\"},"
    "\"b\":{\"node\":\"hin\"},\"mask\":{\"node\":\"sm\"}}},"
    "{\"id\":\"b3\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"b2\"},"
    "\"b\":{\"node\":\"du\"},\"mask\":{\"node\":\"pm\"}}},"
    "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":5},"
    "\"inputs\":{\"field\":{\"node\":\"b3\"},\"mask\":{\"node\":\"po\"}}},"
    "{\"id\":\"sm2\",\"type\":\"slope_mask\",\"params\":{\"min\":2,\"max\":20},"
    "\"inputs\":{\"field\":{\"node\":\"off\"}}},"
    "{\"id\":\"dr\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"off\"}}},"
    "{\"id\":\"fa\",\"type\":\"flow_accumulation\",\"inputs\":{\"drainage\":{\"node\":\"dr\","
    "\"pin\":\"drainage\"}}},"
    "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"inputs\":{\"field\":{\"node\":\"off\"}}},"
    "{\"id\":\"er\",\"type\":\"erosion\",\"params\":{\"droplets\":300,\"thermal_iterations\":2},"
    "\"inputs\":{\"field\":{\"node\":\"dd\"},\"drainage\":{\"node\":\"dr\",\"pin\":\"drainage\"}}},"
    "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":{\"steps\":3,\"uplift_shape\":\"input\"},"
    "\"inputs\":{\"field\":{\"node\":\"er\",\"pin\":\"field\"},\"uplift\":{\"node\":\"fa\"}}},"
    "{\"id\":\"off2\",\"type\":\"height_offset\",\"params\":{\"offset\":-2},"
    "\"inputs\":{\"field\":{\"node\":\"sp\",\"pin\":\"field\"},\"mask\":{\"node\":\"sm2\"}}},"
    "{\"id\":\"wb\",\"type\":\"water_body\",\"params\":{\"level\":\"spill\",\"center\":[128,128],"
    "\"radius\":40},\"inputs\":{\"field\":{\"node\":\"off2\"}}},"
    "{\"id\":\"dr2\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"wb\",\"pin\":"
    "\"field\"}}},"
    "{\"id\":\"bw\",\"type\":\"basin_water\",\"inputs\":{\"drainage\":{\"node\":\"dr2\","
    "\"pin\":\"drainage\"},\"water\":{\"node\":\"wb\",\"pin\":\"water\"}}},"
    "{\"id\":\"we\",\"type\":\"water_edit\",\"inputs\":{\"field\":{\"node\":\"bw\",\"pin\":"
    "\"field\"},"
    "\"water\":{\"node\":\"bw\",\"pin\":\"water\"}}},"
    "{\"id\":\"dr3\",\"type\":\"drainage\",\"inputs\":{\"field\":{\"node\":\"we\",\"pin\":"
    "\"field\"}}},"
    "{\"id\":\"rr\",\"type\":\"river_route\",\"inputs\":{\"drainage\":{\"node\":\"dr3\","
    "\"pin\":\"drainage\"},\"water\":{\"node\":\"we\",\"pin\":\"water\"}}},"
    "{\"id\":\"bi\",\"type\":\"biome_rules\",\"inputs\":{\"field\":{\"node\":\"rr\",\"pin\":"
    "\"field\"},"
    "\"water\":{\"node\":\"rr\",\"pin\":\"water\"}}},"
    "{\"id\":\"sc\",\"type\":\"scatter_palette\",\"inputs\":{\"field\":{\"node\":\"bi\"}}},"
    "{\"id\":\"du\",\"type\":\"dune_field\",\"params\":{\"height\":8,\"wavelength\":60,"
    "\"defect_spacing\":200,\"warp_feature_size\":150,\"crest_warp\":10}},"
    "{\"id\":\"note\",\"type\":\"comment\",\"params\":{\"text\":\"every type\"}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"bi\"},"
    "\"water\":{\"node\":\"rr\",\"pin\":\"water\"},\"instances\":{\"node\":\"sc\"}}}]}";

static bool write_dem(void)
{
    return test_write_r16_33(DEM);
}

static bool load(trn_recipe *r, trn_graph *g, trn_palette *p)
{
    static const char head[] =
        "{\"size\":[256,256],\"resolution\":[%u,%u],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":120,"
        "\"octaves\":4,\"warp_amplitude\":15}},\"default_biome\":\"grass\","
        "\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},\"rock\":{\"color\":[0.5,0.5,0.5,1]}},"
        "\"rules\":[{\"id\":\"steep\",\"biome\":\"rock\",\"priority\":1,\"slope\":[25,90]}],"
        "\"palette\":\"asset://palettes/test\",\"graph\":%s}";
    static const char pal[] =
        "{\"format_version\": 3, \"name\": \"Test\", \"placements\": {"
        "\"grass\": {\"model\": \"asset://models/grass\", \"collision\": \"none\", \"category\": "
        "\"grass\", \"density\": 0.2, \"candidate_spacing\": 2, \"slope\": [0, 30]}}}";
    const size_t n = sizeof head + sizeof graph_all + 64;
    char *text = malloc(n);
    if (!text) return false;
    snprintf(text, n, head, CELLS, CELLS, graph_all);
    trn_error e;
    trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    free(text);
    if (st) {
        fprintf(stderr, "recipe refused: %s\n", e.message);
        return false;
    }
    if ((st = trn_graph_parse(graph_all, strlen(graph_all), "g.json", g, &e))) {
        fprintf(stderr, "graph refused: %s\n", e.message);
        trn_recipe_dispose(r);
        return false;
    }
    if ((st = trn_palette_parse(pal, strlen(pal), "p.json", p, &e))) {
        fprintf(stderr, "palette refused: %s\n", e.message);
        trn_graph_dispose(g);
        trn_recipe_dispose(r);
        return false;
    }
    return true;
}

/* Every registry type declares a reach; the graph above uses every type. */
static void test_every_type_declares_reach(void)
{
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    for (uint32_t k = 0; k < trn_node_type_count(); k++) {
        const trn_node_type *t = trn_node_type_at(k);
        trn_graph_node n;
        memset(&n, 0, sizeof n);
        n.id = (char *)"probe";
        n.type = (char *)t->name;
        trn_node_reach reach;
        const bool declared = trn_graph_node_reach(&n, &r, &reach);
        if (!declared || reach.kind == TRN_REACH_UNDECLARED || !reach.why[0])
            fprintf(stderr, "node type %s declares no reach\n", t->name);
        CHECK(declared && reach.kind != TRN_REACH_UNDECLARED && reach.why[0]);
        CHECK(reach.kind == TRN_REACH_NEIGHBOURHOOD || reach.halo == 0);
        bool used = false;
        for (uint32_t q = 0; q < g.node_count; q++)
            used = used || strcmp(g.nodes[q].type, t->name) == 0;
        if (!used) fprintf(stderr, "the every-type graph lacks a %s node\n", t->name);
        CHECK(used);
    }
    /* What the declarations say for a few. */
    trn_node_reach reach;
    CHECK(trn_graph_node_reach(&g.nodes[5], &r, &reach)); /* sm */
    CHECK(reach.kind == TRN_REACH_NEIGHBOURHOOD && reach.halo == 1);
    CHECK(trn_graph_node_reach(&g.nodes[2], &r, &reach)); /* base */
    CHECK(reach.kind == TRN_REACH_POINTWISE);
    CHECK(trn_graph_node_reach(&g.nodes[13], &r, &reach)); /* dr */
    CHECK(reach.kind == TRN_REACH_GLOBAL);
    CHECK(strcmp(trn_node_reach_name(TRN_REACH_NEIGHBOURHOOD), "neighbourhood") == 0);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

typedef struct collect {
    float *v;
    uint32_t tiles;
    bool row_order_broken;
    uint32_t last_x0, last_z0;
    uint32_t stride; /* samples a row; 0: SAMPLES */
} collect;

static trn_status collect_tile(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                               const float *values, trn_error *err)
{
    (void)err;
    collect *c = user;
    if (c->tiles && (z0 < c->last_z0 || (z0 == c->last_z0 && x0 <= c->last_x0)))
        c->row_order_broken = true;
    c->last_x0 = x0;
    c->last_z0 = z0;
    c->tiles++;
    for (uint32_t j = 0; j < nz; j++)
        memcpy(c->v + (size_t)(z0 + j) * (c->stride ? c->stride : SAMPLES) + x0,
               values + (size_t)j * nx, nx * sizeof(float));
    return TRN_OK;
}

/* Tiled values of a node's float output, compared with the whole-grid run's bytes. */
static bool same_tiled(const trn_graph *g, const trn_recipe *r, const trn_graph_options *o,
                       const char *id, const char *pin, const float *whole, uint32_t tile)
{
    collect c;
    memset(&c, 0, sizeof c);
    c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
    const trn_graph_tile_options to = {.tile = tile, .node_id = id, .pin = pin};
    trn_error e;
    const trn_status st = trn_graph_evaluate_tiles(g, r, o, &to, collect_tile, &c, NULL, NULL, &e);
    if (st) fprintf(stderr, "tiled evaluation failed: %s\n", e.message);
    const uint32_t per = (SAMPLES + tile - 1u) / tile;
    const bool same = st == TRN_OK && c.tiles == per * per && !c.row_order_broken &&
                      memcmp(c.v, whole, (size_t)SAMPLES * SAMPLES * sizeof(float)) == 0;
    if (!same)
        fprintf(stderr, "node %s pin %s: tiles of %u differ from the whole grid\n", id,
                pin ? pin : "-", tile);
    free(c.v);
    return same;
}

static void test_tiles_equal_whole(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.palette = &p;
    trn_graph_run *run = NULL;
    trn_error e;
    trn_status st = trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e);
    if (st) fprintf(stderr, "whole evaluation failed: %s\n", e.message);
    CHECK_EQ_INT(st, TRN_OK);
    const uint32_t tiles[] = {16, 17, 64, 1000, 1};
    uint32_t compared = 0;
    for (uint32_t k = 0; run && k < g.node_count; k++) {
        const trn_node_type *t = trn_node_type_find(g.nodes[k].type);
        for (uint32_t pi = 0; pi < t->output_count; pi++) {
            const trn_pin_kind kind = t->outputs[pi].kind;
            if (kind != TRN_PIN_HEIGHTFIELD && kind != TRN_PIN_MASK) continue;
            trn_graph_value v;
            CHECK_EQ_INT(trn_graph_run_output(run, g.nodes[k].id, t->outputs[pi].name, &v, &e),
                         TRN_OK);
            /* One-sample tiles are slow; the cheap nodes get them. */
            const uint32_t sizes = strcmp(g.nodes[k].id, "sm2") == 0 ? 5u : 4u;
            for (uint32_t s = 0; s < sizes; s++)
                CHECK(
                    same_tiled(&g, &r, &o, g.nodes[k].id, t->outputs[pi].name, v.values, tiles[s]));
            compared++;
        }
    }
    CHECK(compared >= 20);
    /* The published field, on two threads too. */
    trn_graph_value out;
    CHECK_EQ_INT(trn_graph_run_terrain(run, &out, &e), TRN_OK);
    CHECK(same_tiled(&g, &r, &o, NULL, NULL, out.values, 17));
    o.threads = 2;
    CHECK(same_tiled(&g, &r, &o, NULL, NULL, out.values, 16));
    trn_graph_run_free(run);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
}

static void test_tile_errors(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.palette = &p;
    collect c;
    memset(&c, 0, sizeof c);
    trn_error e;
    trn_graph_tile_options to = {.tile = 0};
    CHECK_EQ_INT(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    to.tile = 16;
    to.node_id = "nope";
    CHECK_EQ_INT(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e),
                 TRN_ERR_NOT_FOUND);
    to.node_id = "dr";
    to.pin = "drainage";
    CHECK_EQ_INT(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK(strstr(e.message, "is drainage") != NULL);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
}

static trn_status to_tiff(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                          const float *values, trn_error *err)
{
    return trn_geotiff_tiled_put(user, x0, z0, nx, nz, values, err);
}

/* The evaluator's tiles streamed into a tiled BigTIFF read back as the published field, north
 * up, for tiles that divide neither the grid nor the file's tiles. */
static void test_tiled_geotiff(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.palette = &p;
    trn_graph_run *run = NULL;
    trn_error e;
    CHECK_EQ_INT(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e), TRN_OK);
    trn_graph_value out;
    CHECK_EQ_INT(trn_graph_run_terrain(run, &out, &e), TRN_OK);
    const uint32_t evals[] = {17, 32, 40};
    const uint32_t files[] = {16, 32, 32};
    for (int k = 0; k < 3; k++) {
        trn_geotiff_tiled *w = NULL;
        CHECK_EQ_INT(
            trn_geotiff_tiled_open("tiles_test.tif", CELLS, CELLS, 256, 256, files[k], &w, &e),
            TRN_OK);
        const trn_graph_tile_options to = {.tile = evals[k]};
        CHECK_EQ_INT(trn_graph_evaluate_tiles(&g, &r, &o, &to, to_tiff, w, NULL, NULL, &e), TRN_OK);
        CHECK_EQ_INT(trn_geotiff_tiled_close(w, &e), TRN_OK);
        trn_geotiff t;
        CHECK_EQ_INT(trn_geotiff_read("tiles_test.tif", NULL, &t, NULL, NULL, &e), TRN_OK);
        CHECK(t.info.tiled && t.info.bigtiff && t.info.tile_width == files[k]);
        CHECK(t.info.width == SAMPLES && t.info.height == SAMPLES);
        bool same = t.values != NULL;
        for (uint32_t j = 0; same && j < SAMPLES; j++)
            same = memcmp(t.values + (size_t)(SAMPLES - 1u - j) * SAMPLES,
                          out.values + (size_t)j * SAMPLES, SAMPLES * sizeof(float)) == 0;
        CHECK(same);
        trn_geotiff_dispose(&t);
    }
    /* Out of order: refused, nothing left behind. */
    trn_geotiff_tiled *w = NULL;
    CHECK_EQ_INT(trn_geotiff_tiled_open("tiles_bad.tif", CELLS, CELLS, 256, 256, 16, &w, &e),
                 TRN_OK);
    float v[4] = {0};
    CHECK_EQ_INT(trn_geotiff_tiled_put(w, 2, 0, 2, 2, v, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(trn_geotiff_tiled_close(w, &e), TRN_ERR_INVALID_ARGUMENT);
    FILE *f = fopen("tiles_bad.tif", "rb");
    CHECK(f == NULL);
    if (f) fclose(f);
    remove("tiles_test.tif");
    trn_graph_run_free(run);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
}

typedef struct progress_log {
    double last;
    bool backwards, saw_tiles, saw_node;
    int cancel_after; /* "tiles" reports before asking to stop; < 0: never */
} progress_log;

static int log_progress(double done, const char *stage, void *user)
{
    progress_log *p = user;
    if (done < p->last) p->backwards = true;
    p->last = done;
    if (stage && strcmp(stage, "tiles") == 0) {
        p->saw_tiles = true;
        if (p->cancel_after >= 0 && p->cancel_after-- == 0) return TRN_CANCEL;
    }
    if (stage && strncmp(stage, "node sp: ", 9) == 0) p->saw_node = true;
    return TRN_CONTINUE;
}

/* Progress runs forward to 1 through the global nodes' own stages and the tiles; a cancel
 * stops the run. */
static void test_tile_progress(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.palette = &p;
    collect c;
    memset(&c, 0, sizeof c);
    c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
    trn_error e;
    const trn_graph_tile_options to = {.tile = 32};
    progress_log log = {0.0, false, false, false, -1};
    CHECK_EQ_INT(
        trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, log_progress, &log, &e),
        TRN_OK);
    if (log.backwards || !log.saw_tiles || !log.saw_node)
        fprintf(stderr, "progress: backwards %d, tiles %d, node %d\n", log.backwards, log.saw_tiles,
                log.saw_node);
    CHECK(!log.backwards && log.saw_tiles && log.saw_node);
    CHECK(log.last == 1.0);
    progress_log stop = {0.0, false, false, false, 1};
    free(c.v);
    memset(&c, 0, sizeof c);
    c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
    CHECK_EQ_INT(
        trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, log_progress, &stop, &e),
        TRN_ERR_CANCELLED);
    CHECK_EQ_INT(c.tiles, 2);
    free(c.v);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
}

/* The seam for distributed solvers: every global node the output needs goes through the solver
 * once (the Scatter Palette feeds only instances, which a tiled run does not publish). */
static int solved;
static char solved_ids[64][64];

static trn_status counting_solver(const trn_node_ctx *ctx, trn_node_result *r, trn_error *err)
{
    if (solved < 64) snprintf(solved_ids[solved], sizeof solved_ids[0], "%s", ctx->node->id);
    solved++;
    return trn_tile_solve_whole(ctx, r, err);
}

static void test_global_solver_seam(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    /* No palette: a tiled run publishes heights, never instances, so it never places one. */
    o.palette = NULL;
    collect c;
    memset(&c, 0, sizeof c);
    c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
    trn_error e;
    const trn_graph_tile_options to = {.tile = 32};
    solved = 0;
    CHECK_EQ_INT(trn_graph_evaluate_tiles_with(&g, &r, &o, &to, counting_solver, collect_tile, &c,
                                               NULL, NULL, &e),
                 TRN_OK);
    static const char *const globals[] = {"dr",  "fa", "dd", "er",  "sp", "wb",
                                          "dr2", "bw", "we", "dr3", "rr", "du"};
    CHECK_EQ_INT(solved, 12);
    for (size_t k = 0; k < sizeof globals / sizeof globals[0]; k++) {
        bool found = false;
        for (int q = 0; q < solved && q < 64; q++)
            found = found || strcmp(solved_ids[q], globals[k]) == 0;
        CHECK(found);
    }
    free(c.v);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
}

/* ---- the disk tile cache ---- */

#define TILE_CACHE "tiles_test_cache"

/* Files in the tile cache's folder (its one subfolder) while tiles are delivered. */
static uint32_t cache_files(void)
{
    DIR *d = opendir(TILE_CACHE);
    if (!d) return 0;
    uint32_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char sub[512];
        snprintf(sub, sizeof sub, "%s/%s", TILE_CACHE, e->d_name);
        DIR *s = opendir(sub);
        struct dirent *f;
        while (s && (f = readdir(s)))
            n += strstr(f->d_name, ".tnc") != NULL;
        if (s) closedir(s);
    }
    closedir(d);
    return n;
}

typedef struct cached_collect {
    collect c;
    uint32_t most_files;
} cached_collect;

static trn_status collect_cached(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                                 const float *values, trn_error *err)
{
    cached_collect *cc = user;
    const uint32_t n = cache_files();
    if (n > cc->most_files) cc->most_files = n;
    return collect_tile(&cc->c, x0, z0, nx, nz, values, err);
}

/* Global results kept on disk tile by tile (the node cache's files) and read back window by
 * window give the whole grid's bytes for tiles that divide the grid and tiles that do not;
 * the files exist while tiles are delivered and are gone afterwards. */
static void test_tile_cache_equal_whole(void)
{
    CHECK(write_dem());
    trn_recipe r;
    trn_graph g;
    trn_palette p;
    CHECK(load(&r, &g, &p));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.palette = &p;
    trn_graph_run *run = NULL;
    trn_error e;
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
    /* The published field (the last global node's tiles), a tile node reading a global one
     * (off2 reads the stream power's field), and a global node's mask. */
    static const char *const ids[] = {NULL, "off2", "sp"};
    static const char *const pins[] = {NULL, NULL, "channels"};
    const uint32_t sizes[] = {16, 17, 1000};
    for (uint32_t q = 0; q < 3 && run; q++) {
        trn_graph_value v;
        if (ids[q])
            CHECK_OK(trn_graph_run_output(run, ids[q], pins[q], &v, &e));
        else
            CHECK_OK(trn_graph_run_terrain(run, &v, &e));
        for (uint32_t k = 0; k < 3; k++) {
            cached_collect cc;
            memset(&cc, 0, sizeof cc);
            cc.c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
            const trn_graph_tile_options to = {
                .tile = sizes[k], .node_id = ids[q], .pin = pins[q], .cache_dir = TILE_CACHE};
            CHECK_OK(
                trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_cached, &cc, NULL, NULL, &e));
            const uint32_t per = (SAMPLES + sizes[k] - 1u) / sizes[k];
            CHECK_EQ_INT(cc.c.tiles, per * per);
            CHECK(memcmp(cc.c.v, v.values, (size_t)SAMPLES * SAMPLES * sizeof(float)) == 0);
            /* At least one float output of each global node upstream, a file a cache tile
             * (cache tiles are at least 64 samples: 2 x 2 of them here for small tiles). */
            const uint32_t stored = sizes[k] < 64u ? 64u : sizes[k];
            const uint32_t per_stored = (SAMPLES + stored - 1u) / stored;
            CHECK(cc.most_files >= per_stored * per_stored);
            CHECK_EQ_INT(cache_files(), 0);
            free(cc.c.v);
        }
    }
    trn_graph_run_free(run);
    trn_palette_dispose(&p);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
    remove(TILE_CACHE);
}

/* With a disk tile cache, the stream power's steps on the output grid keep their state in tiles
 * there: the same bytes as the whole grid for each routing (mfd's fine steps stay on the whole
 * grid), border, creep varying with the rock, deposition (with a cascade) and tile size
 * (dividing the grid or not, one tile), heights and channels. */
static void test_fine_steps_in_tiles(void)
{
    static const char *const variants[] = {
        "\"border\":\"outlets\",\"relief\":\"input\"",
        "\"routing\":\"d8\",\"border\":\"fixed\",\"sea_level\":8",
        "\"fine_routing\":\"mfd\"",
        /* creep varying with the rock: the fine steps in tiles too */
        "\"border\":\"outlets\",\"rock_variation\":2,\"rock_feature_size\":200,"
        "\"rock_creep\":-1",
        /* deposition, with the grid twice as coarse as the output's in between (the Mountain
         * Range's way back): every level's steps on the output grid in tiles */
        "\"border\":\"outlets\",\"deposition\":1,\"cascade_steps\":2,\"rock_variation\":2,"
        "\"rock_feature_size\":200,\"rock_creep\":-1",
        "\"routing\":\"d8\",\"sea_level\":8,\"deposition\":2",
    };
    for (size_t v = 0; v < sizeof variants / sizeof *variants; v++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"size\":[640,640],\"resolution\":[%u,%u],\"seed\":5,\"default_landform\":"
                 "\"hills\",\"landforms\":{\"hills\":{\"height_variation\":60,\"feature_size\":"
                 "200,\"octaves\":5}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":"
                 "[0.4,0.6,0.3,1]}},\"graph\":{\"format_version\":1,\"output\":\"out\","
                 "\"nodes\":[{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{"
                 "\"height_variation\":60,\"feature_size\":200,\"octaves\":5}},"
                 "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":{\"coarsen\":4,"
                 "\"fine_steps\":3,\"steps\":6,%s},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                 "\"sp\",\"pin\":\"field\"}}}]}}",
                 CELLS, CELLS, variants[v]);
        trn_recipe r;
        trn_graph g;
        trn_error e;
        CHECK_OK(trn_recipe_parse(text, strlen(text), "fine.json", &r, NULL, &e));
        CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = 1;
        trn_graph_run *run = NULL;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
        static const char *const pins[] = {"field", "channels"};
        const uint32_t sizes[] = {16, 23, 1000};
        for (int q = 0; q < 2 && run; q++) {
            trn_graph_value val;
            CHECK_OK(trn_graph_run_output(run, "sp", pins[q], &val, &e));
            for (int k = 0; k < 3; k++) {
                collect c;
                memset(&c, 0, sizeof c);
                c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
                const trn_graph_tile_options to = {
                    .tile = sizes[k], .node_id = "sp", .pin = pins[q], .cache_dir = TILE_CACHE};
                CHECK_OK(
                    trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e));
                const bool same =
                    memcmp(c.v, val.values, (size_t)SAMPLES * SAMPLES * sizeof(float)) == 0;
                if (!same)
                    fprintf(stderr, "variant %zu pin %s tile %u differs\n", v, pins[q], sizes[k]);
                CHECK(same);
                free(c.v);
            }
        }
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    remove(TILE_CACHE);
}

/* With a disk tile cache, an erosion node of droplets whose field is a global node's runs row
 * band by row band from the cache to the cache: its heights and masks, a tile node reading
 * them and a global node reading them whole (back from the cache) are the whole grid's bytes,
 * for tiles of 16, 23 and 1000 (cache tiles of 64 on 65 samples: a last cache row of one
 * sample), one and two threads. */
static void test_erosion_by_rows_in_tiles(void)
{
    char text[2048];
    snprintf(text, sizeof text,
             "{\"size\":[640,640],\"resolution\":[%u,%u],\"seed\":8,\"default_landform\":"
             "\"hills\",\"landforms\":{\"hills\":{\"height_variation\":60,\"feature_size\":"
             "200,\"octaves\":5}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":"
             "[0.4,0.6,0.3,1]}},\"graph\":{\"format_version\":1,\"output\":\"out\","
             "\"nodes\":[{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{"
             "\"height_variation\":60,\"feature_size\":200,\"octaves\":5}},"
             "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":{\"coarsen\":4,"
             "\"fine_steps\":2,\"steps\":6},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
             "{\"id\":\"er\",\"type\":\"erosion\",\"params\":{\"droplet_density\":0.8,"
             "\"lifetime\":6,\"thermal_iterations\":3,\"talus_angle\":20},\"inputs\":{"
             "\"field\":{\"node\":\"sp\",\"pin\":\"field\"}}},"
             "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":3},"
             "\"inputs\":{\"field\":{\"node\":\"er\",\"pin\":\"field\"},\"mask\":{"
             "\"node\":\"er\",\"pin\":\"eroded\"}}},"
             "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"inputs\":{\"field\":{"
             "\"node\":\"off\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
             "\"dd\"}}}]}}",
             CELLS, CELLS);
    trn_recipe r;
    trn_graph g;
    trn_error e;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "rows.json", &r, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    for (int threads = 1; threads <= 2; threads++) {
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        trn_graph_run *run = NULL;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
        static const char *const ids[] = {"er", "er", "er", "off", "dd"};
        static const char *const pins[] = {"field", "deposited", "eroded", NULL, NULL};
        const uint32_t sizes[] = {16, 23, 1000};
        for (int q = 0; q < 5 && run; q++) {
            trn_graph_value val;
            CHECK_OK(trn_graph_run_output(run, ids[q], pins[q], &val, &e));
            for (int k = 0; k < 3; k++) {
                collect c;
                memset(&c, 0, sizeof c);
                c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
                const trn_graph_tile_options to = {
                    .tile = sizes[k], .node_id = ids[q], .pin = pins[q], .cache_dir = TILE_CACHE};
                CHECK_OK(
                    trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e));
                const bool same =
                    memcmp(c.v, val.values, (size_t)SAMPLES * SAMPLES * sizeof(float)) == 0;
                if (!same)
                    fprintf(stderr, "%s %s tile %u differs\n", ids[q], pins[q] ? pins[q] : "",
                            sizes[k]);
                CHECK(same);
                free(c.v);
            }
        }
        trn_graph_run_free(run);
    }
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(TILE_CACHE);
}

/* With a disk tile cache, a Drain Depressions whose field is a global node's runs in tiles
 * (the tiled drainage, then each tile breached or filled) from the cache to the cache: its
 * heights, a tile node reading them and the output are the whole grid's bytes, breaching and
 * filling, with and without a sea (a DEM with closed pits; the droplets' output read back
 * from the cache), for tiles of 16, 23, 100 and 1000 on 129 samples (cache
 * tiles of 64: a last row of one sample; of 100: a short last row; one tile), one and two
 * threads. */
static void test_drain_in_tiles(void)
{
    enum { DC = 128u, DS = DC + 1u };
    char text[4096];
    snprintf(text, sizeof text,
             "{\"size\":[1280,1280],\"resolution\":[%u,%u],\"seed\":11,\"sea_level\":-4,"
             "\"default_landform\":\"hills\",\"landforms\":{\"hills\":{\"height_variation\":60,"
             "\"feature_size\":200,\"octaves\":5}},\"default_biome\":\"g\",\"biomes\":{\"g\":{"
             "\"color\":[0.4,0.6,0.3,1]}},\"graph\":{\"format_version\":1,\"output\":\"out\","
             "\"nodes\":[{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{"
             "\"height_variation\":60,\"feature_size\":200,\"octaves\":5}},"
             "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":{\"coarsen\":4,"
             "\"fine_steps\":2,\"steps\":6},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
             "{\"id\":\"er\",\"type\":\"erosion\",\"params\":{\"droplet_density\":0.8,"
             "\"lifetime\":6,\"thermal_iterations\":3,\"talus_angle\":20},\"inputs\":{"
             "\"field\":{\"node\":\"sp\",\"pin\":\"field\"}}},"
             "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"inputs\":{\"field\":{"
             "\"node\":\"er\",\"pin\":\"field\"}}},"
             "{\"id\":\"df\",\"type\":\"drain_depressions\",\"params\":{\"mode\":\"fill\","
             "\"sea\":\"off\"},\"inputs\":{\"field\":{\"node\":\"hin\"}}},"
             "{\"id\":\"hin\",\"type\":\"heightfield_input\",\"params\":{\"path\":\"" DEM "\","
             "\"format\":\"r16\",\"max_height\":80}},"
             "{\"id\":\"dh\",\"type\":\"drain_depressions\",\"params\":{\"sea\":\"off\"},"
             "\"inputs\":{\"field\":{\"node\":\"hin\"}}},"
             "{\"id\":\"ds\",\"type\":\"drain_depressions\",\"params\":{\"sea_level\":2},"
             "\"inputs\":{\"field\":{\"node\":\"hin\"}}},"
             "{\"id\":\"mix\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":\"dd\"},"
             "\"b\":{\"node\":\"ds\"}}},"
             "{\"id\":\"mix2\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":"
             "\"mix\"},\"b\":{\"node\":\"dh\"}}},"
             "{\"id\":\"mix3\",\"type\":\"height_blend\",\"inputs\":{\"a\":{\"node\":"
             "\"mix2\"},\"b\":{\"node\":\"df\"}}},"
             "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
             "\"mix3\"}}}]}}",
             DC, DC);
    trn_recipe r;
    trn_graph g;
    trn_error e;
    CHECK(write_dem());
    CHECK_OK(trn_recipe_parse(text, strlen(text), "drain.json", &r, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    for (int threads = 1; threads <= 2; threads++) {
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = threads;
        trn_graph_run *run = NULL;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
        static const char *const ids[] = {"dd", "df", "ds", "dh", "mix3"};
        const uint32_t sizes[] = {16, 23, 100, 1000};
        for (int q = 0; q < 5 && run; q++) {
            trn_graph_value val;
            CHECK_OK(trn_graph_run_output(run, ids[q], NULL, &val, &e));
            for (int k = 0; k < 4; k++) {
                collect c;
                memset(&c, 0, sizeof c);
                c.v = calloc((size_t)DS * DS, sizeof(float));
                c.stride = DS;
                const trn_graph_tile_options to = {
                    .tile = sizes[k], .node_id = ids[q], .cache_dir = TILE_CACHE};
                CHECK_OK(
                    trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_tile, &c, NULL, NULL, &e));
                const bool same = memcmp(c.v, val.values, (size_t)DS * DS * sizeof(float)) == 0;
                if (!same)
                    fprintf(stderr, "%s tile %u, %d threads differs\n", ids[q], sizes[k], threads);
                CHECK(same);
                free(c.v);
            }
        }
        /* The depressions are there to drain: breaching and filling give other heights. */
        trn_graph_value in, drained;
        CHECK_OK(trn_graph_run_output(run, "hin", NULL, &in, &e));
        CHECK_OK(trn_graph_run_output(run, "dh", NULL, &drained, &e));
        CHECK(memcmp(in.values, drained.values, (size_t)DS * DS * sizeof(float)) != 0);
        CHECK_OK(trn_graph_run_output(run, "ds", NULL, &drained, &e));
        CHECK(memcmp(in.values, drained.values, (size_t)DS * DS * sizeof(float)) != 0);
        trn_graph_run_free(run);
    }
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(DEM);
    remove(TILE_CACHE);
}

/* ---- global nodes split across processes, their results kept in a shared tile cache ---- */

#define SHARED_DIR "tiles_test_shared"

/* A Drainage read by a D8 Flow Accumulation, and a filling Drain Depressions read through a
 * slope mask (one sample beyond each tile), solved split (one process, the serial transport):
 * the whole grid's bytes for cache tiles that leave a one-sample last row (129 in 64) and that
 * do not divide the grid, nothing left in the shared folder; a multiple-flow accumulation reads
 * the drainage whole, which is then solved whole and named. */
static void test_split_in_tiles(void)
{
    enum { DC = 128u, DS = DC + 1u };
    static const char *const methods[] = {"d8", "mfd"};
    for (int m = 0; m < 2; m++) {
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"size\":[1024,1024],\"resolution\":[%u,%u],\"seed\":7,"
                 "\"default_landform\":\"b\",\"landforms\":{\"b\":{\"height_variation\":100}},"
                 "\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]}},"
                 "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                 "{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":200,"
                 "\"feature_size\":250,\"octaves\":5}},"
                 "{\"id\":\"d\",\"type\":\"drainage\",\"params\":{\"sea\":\"off\"},"
                 "\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                 "{\"id\":\"f\",\"type\":\"flow_accumulation\",\"params\":{\"method\":\"%s\"},"
                 "\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":\"drainage\"}}},"
                 "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"params\":{\"mode\":\"fill\","
                 "\"sea\":\"off\"},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                 "{\"id\":\"s\",\"type\":\"slope_mask\",\"inputs\":{\"field\":{\"node\":\"dd\"}}},"
                 "{\"id\":\"b\",\"type\":\"height_offset\",\"params\":{\"offset\":-20},"
                 "\"inputs\":{\"field\":{\"node\":\"dd\"},\"mask\":{\"node\":\"f\"}}},"
                 "{\"id\":\"c\",\"type\":\"height_offset\",\"params\":{\"offset\":15},"
                 "\"inputs\":{\"field\":{\"node\":\"b\"},\"mask\":{\"node\":\"s\"}}},"
                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{"
                 "\"node\":\"c\"}}}]}}",
                 DC, DC, methods[m]);
        trn_recipe r;
        trn_graph g;
        trn_error e;
        CHECK_OK(trn_recipe_parse(text, strlen(text), "split.json", &r, NULL, &e));
        CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
        trn_graph_options o;
        memset(&o, 0, sizeof o);
        o.threads = 1;
        trn_graph_run *run = NULL;
        CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
        trn_graph_value val;
        CHECK_OK(trn_graph_run_output(run, "c", NULL, &val, &e));
        const uint32_t sizes[] = {16, 23, 64};
        for (int k = 0; k < 3; k++) {
            CHECK(trn_mkdir_p(SHARED_DIR, &e) == TRN_OK);
            trn_tile_split split;
            memset(&split, 0, sizeof split);
            split.comm = trn_comm_serial_new();
            split.shared_dir = SHARED_DIR;
            collect c;
            memset(&c, 0, sizeof c);
            c.v = calloc((size_t)DS * DS, sizeof(float));
            c.stride = DS;
            const trn_graph_tile_options to = {.tile = sizes[k], .cache_dir = TILE_CACHE};
            CHECK_OK(trn_graph_evaluate_tiles_split(&g, &r, &o, &to, NULL, &split, collect_tile, &c,
                                                    NULL, NULL, &e));
            const bool same = memcmp(c.v, val.values, (size_t)DS * DS * sizeof(float)) == 0;
            if (!same) fprintf(stderr, "split %s, tile %u differs\n", methods[m], sizes[k]);
            CHECK(same);
            /* d8: the drainage and the fill split, nothing read whole; mfd: the fill only. */
            CHECK_EQ_INT(split.nodes, (m == 0 ? 2 : 1));
            CHECK(split.stats.tiles_owned == split.stats.tiles && split.stats.tiles > 0);
            if (m == 0)
                CHECK(split.whole_for[0] == '\0');
            else
                CHECK_CONTAINS(split.whole_for, "node 'f' (flow_accumulation)");
            /* Every split tile was removed, and the folder with them. */
            DIR *dir = opendir(SHARED_DIR);
            CHECK(dir == NULL);
            if (dir) closedir(dir);
            (void)rmdir(SHARED_DIR);
            trn_comm_free(split.comm);
            free(c.v);
        }
        trn_graph_run_free(run);
        trn_graph_dispose(&g);
        trn_recipe_dispose(&r);
    }
    remove(TILE_CACHE);
}

/* ---- sculpt and protection strokes on tiles ---- */

/* Strokes that cross tile borders, reach the grid's edge, smooth across a tile border (one with
 * a hard edge, whose outermost samples read neighbours outside every stroke), and a protection
 * snapshot; a region (no landform of its own) and an exclusion leave heights alone. */
static const char recipe_strokes[] =
    "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":9,\"default_landform\":\"hills\","
    "\"landforms\":{\"hills\":{\"height_variation\":40,\"feature_size\":90,\"octaves\":4}},"
    "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]},"
    "\"sand\":{\"color\":[0.8,0.7,0.5,1]}},"
    "\"regions\":[{\"type\":\"region\",\"biome\":\"sand\",\"radius\":30,\"points\":[[60,60]]}],"
    "\"edits\":[{\"type\":\"raise\",\"radius\":20,\"strength\":4,\"points\":[[60,70],[70,70],"
    "[80,75],[90,80]]},"
    "{\"type\":\"smooth\",\"radius\":18,\"strength\":0.8,\"points\":[[64,64],[68,64],[72,66]]},"
    "{\"type\":\"flatten\",\"radius\":15,\"target_height\":12,\"center\":[130,150]},"
    "{\"type\":\"lower\",\"radius\":25,\"strength\":3,\"center\":[250,10]},"
    "{\"type\":\"smooth\",\"radius\":12,\"strength\":1,\"center\":[128,148]},"
    "{\"type\":\"smooth\",\"radius\":12,\"strength\":1,\"falloff\":0,\"center\":[200,60]},"
    "{\"type\":\"protect\",\"grid\":[64,64],\"samples\":[[32,32,7.5],[33,32,-1],[16,40,3]]}],"
    "\"exclusions\":[{\"type\":\"exclusion\",\"radius\":10,\"center\":[200,200]}]}";

/* A recipe with strokes, its whole grid generated on one thread, and its graph with options for
 * one thread: what the tiled runs below are compared with. */
static void strokes_world(const char *json, trn_recipe *r, trn_generated *gen, trn_graph *g,
                          trn_graph_options *o)
{
    trn_error e;
    CHECK_OK(trn_recipe_parse(json, strlen(json), "s.json", r, NULL, &e));
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.threads = 1;
    CHECK_OK(trn_recipe_generate(r, &go, gen, NULL, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(r, g, &e));
    memset(o, 0, sizeof *o);
    o->threads = 1;
}

static void test_strokes_on_tiles(void)
{
    trn_recipe r;
    trn_generated gen;
    trn_graph g;
    trn_graph_options o;
    trn_error e;
    strokes_world(recipe_strokes, &r, &gen, &g, &o);
    /* The strokes change the heights (else the comparison below would prove nothing). */
    trn_graph_run *run = NULL;
    trn_graph_value v;
    CHECK_OK(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e));
    CHECK_OK(trn_graph_run_terrain(run, &v, &e));
    CHECK(memcmp(v.values, gen.field.heights, (size_t)SAMPLES * SAMPLES * sizeof(float)) != 0);
    trn_graph_run_free(run);
    const uint32_t sizes[] = {1, 7, 16, 17, 1000};
    for (uint32_t k = 0; k < 5; k++) {
        collect c;
        memset(&c, 0, sizeof c);
        c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
        const trn_graph_tile_options to = {.tile = sizes[k]};
        CHECK_OK(trn_recipe_evaluate_tiles(&r, &g, &o, &to, collect_tile, &c, NULL, NULL, &e));
        const uint32_t per = (SAMPLES + sizes[k] - 1u) / sizes[k];
        CHECK_EQ_INT(c.tiles, per * per);
        CHECK(!c.row_order_broken);
        if (memcmp(c.v, gen.field.heights, (size_t)SAMPLES * SAMPLES * sizeof(float)) != 0) {
            fprintf(stderr, "tiles of %u differ from the generated heights\n", sizes[k]);
            CHECK(false);
        }
        free(c.v);
    }
    /* What the strokes hold: whole rows of tiles around their box, and the box once more. */
    uint64_t held = 0;
    CHECK_OK(trn_recipe_tiles_held(&r, 16, &held, &e));
    CHECK(held > 0 && held <= 2u * (uint64_t)SAMPLES * SAMPLES * sizeof(float));
    CHECK_EQ_INT(held % ((uint64_t)sizeof(float)), 0);
    uint64_t held_big = 0;
    CHECK_OK(trn_recipe_tiles_held(&r, 1000, &held_big, &e));
    CHECK(held_big > held); /* a tile of 1000 holds every row */
    trn_generated_dispose(&gen);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* A chain of overlapping strokes down the middle (each smooth with a hard edge and many stamps,
 * so what it leaves depends on what the strokes before it left around it), a flatten and a
 * smooth across it, a lower at the far corner and a protection snapshot. */
static const char recipe_chain[] =
    "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":4,\"default_landform\":\"hills\","
    "\"landforms\":{\"hills\":{\"height_variation\":40,\"feature_size\":60,\"octaves\":4}},"
    "\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,0.6,0.3,1]}},"
    "\"edits\":[{\"type\":\"smooth\",\"radius\":20,\"strength\":1,\"falloff\":0,"
    "\"points\":[[128,20],[128,26],[128,32],[128,38],[128,44],[126,50],[124,56]]},"
    "{\"type\":\"raise\",\"radius\":20,\"strength\":5,\"points\":[[120,60],[130,70]]},"
    "{\"type\":\"smooth\",\"radius\":16,\"strength\":1,\"falloff\":0,"
    "\"points\":[[128,64],[128,70],[128,76],[128,82],[128,88],[128,94],[128,100],[128,106]]},"
    "{\"type\":\"flatten\",\"radius\":18,\"target_height\":10,\"center\":[60,140]},"
    "{\"type\":\"smooth\",\"radius\":14,\"strength\":1,\"falloff\":0,"
    "\"points\":[[128,112],[100,130],[80,140],[64,150]]},"
    "{\"type\":\"lower\",\"radius\":25,\"strength\":3,\"center\":[250,250]},"
    "{\"type\":\"protect\",\"grid\":[64,64],\"samples\":[[32,40,7.5],[33,40,-1]]}]}";

/* Windows of the world with strokes give the whole grid's heights over their tiles and
 * deliver no other tile: bands of rows as wide as the grid (as terrane-mpi generate's
 * processes take them) and a window inside the grid, for tiles that do not divide it. */
static void windows_match(const char *json)
{
    trn_recipe r;
    trn_generated gen;
    trn_graph g;
    trn_graph_options o;
    trn_error e;
    strokes_world(json, &r, &gen, &g, &o);
    const size_t n = (size_t)SAMPLES * SAMPLES;
    float *v = malloc(n * sizeof *v);
    CHECK(v != NULL);
    const uint32_t sizes[] = {7, 16};
    for (uint32_t k = 0; k < 2; k++) {
        const uint32_t t = sizes[k], rows = (SAMPLES + t - 1u) / t;
        for (uint32_t band = 1; band <= 2; band++)
            for (uint32_t r0 = 0; r0 < rows; r0 += band) {
                const uint32_t z0 = r0 * t,
                               z1 = (r0 + band) * t < SAMPLES ? (r0 + band) * t : SAMPLES;
                /* Bands, then one window inside the grid (its tiles: columns 1 and 2). */
                for (int inner = 0; inner < 2; inner++) {
                    trn_graph_tile_options to = {
                        .tile = t, .z0 = z0, .samples_z = z1 - z0, .samples_x = SAMPLES};
                    if (inner) {
                        to.x0 = t + 1u;
                        to.samples_x = t;
                    }
                    const uint32_t i0 = inner ? t : 0u,
                                   i1 = inner ? (3u * t < SAMPLES ? 3u * t : SAMPLES) : SAMPLES;
                    for (size_t q = 0; q < n; q++)
                        v[q] = NAN;
                    collect c;
                    memset(&c, 0, sizeof c);
                    c.v = v;
                    trn_tiles_replayed done;
                    CHECK_OK(trn_recipe_evaluate_tiles_split(
                        &r, &g, &o, &to, NULL, NULL, collect_tile, &c, NULL, NULL, &done, &e));
                    CHECK(!c.row_order_broken);
                    CHECK_EQ_INT(c.tiles, ((i1 - i0 + t - 1u) / t) * ((z1 - z0 + t - 1u) / t));
                    bool same = true;
                    for (uint32_t j = 0; j < SAMPLES; j++)
                        for (uint32_t i = 0; i < SAMPLES; i++) {
                            const float got = v[(size_t)j * SAMPLES + i];
                            const bool in = i >= i0 && i < i1 && j >= z0 && j < z1;
                            if (in ? memcmp(&got, &gen.field.heights[(size_t)j * SAMPLES + i],
                                            sizeof got) != 0
                                   : !isnan(got))
                                same = false;
                        }
                    if (!same) {
                        fprintf(stderr, "tiles of %u, rows %u..%u%s differ from the whole grid\n",
                                t, z0, z1, inner ? " (inner window)" : "");
                        CHECK(false);
                    }
                    /* What it cost: the window's tiles and those of the strokes around it. */
                    CHECK(done.z0 <= z0 && done.z0 + done.samples_z >= z1);
                    CHECK_EQ_INT(done.extra, (uint64_t)done.samples_x * done.samples_z -
                                                 (uint64_t)(i1 - i0) * (z1 - z0));
                }
            }
    }
    /* The whole grid as one window: nothing evaluated beyond it, every stroke replayed. */
    trn_tiles_replayed done;
    collect c;
    memset(&c, 0, sizeof c);
    c.v = v;
    const trn_graph_tile_options all = {.tile = 16};
    CHECK_OK(trn_recipe_evaluate_tiles_split(&r, &g, &o, &all, NULL, NULL, collect_tile, &c, NULL,
                                             NULL, &done, &e));
    CHECK_EQ_INT(done.extra, 0);
    CHECK(done.strokes > 0);
    CHECK(memcmp(v, gen.field.heights, n * sizeof *v) == 0);
    free(v);
    trn_generated_dispose(&gen);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

static void test_strokes_on_windows(void)
{
    windows_match(recipe_strokes);
    windows_match(recipe_chain);
}

/* ---- the largest world: 65537 x 65537 samples, more than 2^32 ---- */

#define BIG_CELLS 65536u
#define BIG (BIG_CELLS + 1u)
#define WIN 40u /* the window at the far (north-east) corner */
#define WIN0 (BIG - WIN)

/* Two hard-edged corridors (width w, no falloff) give heights that are a known function of the
 * sample's column and row: 10 on columns 65529..65532 (within 2 of x = 65530.5) plus 100 on
 * rows 65534..65535 (within 1 of z = 65534.5); spacing 1, so sample (i, j) sits at (i, j). The
 * noise and its slope mask (a halo) are compared across tile sizes. */
static const char graph_big[] =
    "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
    "{\"id\":\"base\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":50,"
    "\"feature_size\":100,\"warp_amplitude\":20}},"
    "{\"id\":\"sm\",\"type\":\"slope_mask\",\"params\":{\"min\":5,\"max\":25},"
    "\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"px\",\"type\":\"path_distance_mask\",\"params\":{\"points\":[[65530.5,0],"
    "[65530.5,65536]],\"width\":2,\"falloff\":0},\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"pz\",\"type\":\"path_distance_mask\",\"params\":{\"points\":[[0,65534.5],"
    "[65536,65534.5]],\"width\":1,\"falloff\":0},\"inputs\":{\"field\":{\"node\":\"base\"}}},"
    "{\"id\":\"f0\",\"type\":\"flat_terrain\",\"params\":{\"height\":0}},"
    "{\"id\":\"f10\",\"type\":\"flat_terrain\",\"params\":{\"height\":10}},"
    "{\"id\":\"b\",\"type\":\"height_blend\",\"params\":{\"amount\":1},\"inputs\":{\"a\":{\"node\":"
    "\"f0\"},"
    "\"b\":{\"node\":\"f10\"},\"mask\":{\"node\":\"px\"}}},"
    "{\"id\":\"o\",\"type\":\"height_offset\",\"params\":{\"offset\":100},"
    "\"inputs\":{\"field\":{\"node\":\"b\"},\"mask\":{\"node\":\"pz\"}}},"
    "{\"id\":\"keep\",\"type\":\"height_offset\",\"params\":{\"offset\":0},"
    "\"inputs\":{\"field\":{\"node\":\"o\"},\"mask\":{\"node\":\"sm\"}}},"
    "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"keep\"}}}]}";

typedef struct window_collect {
    float *v; /* WIN x WIN, the window's samples */
    uint32_t tiles;
    bool outside; /* a delivered tile that misses the window */
} window_collect;

static trn_status collect_window(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                                 const float *values, trn_error *err)
{
    (void)err;
    window_collect *c = user;
    c->tiles++;
    if (x0 + nx <= WIN0 || z0 + nz <= WIN0) c->outside = true;
    for (uint32_t j = 0; j < nz; j++)
        for (uint32_t i = 0; i < nx; i++)
            if (x0 + i >= WIN0 && z0 + j >= WIN0)
                c->v[(size_t)(z0 + j - WIN0) * WIN + (x0 + i - WIN0)] = values[(size_t)j * nx + i];
    return TRN_OK;
}

static bool big_recipe(trn_recipe *r, trn_graph *g, const char *graph)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\"size\":[%u,%u],\"resolution\":[%u,%u],\"seed\":5,\"default_landform\":\"a\","
             "\"landforms\":{\"a\":{}},\"default_biome\":\"b\","
             "\"biomes\":{\"b\":{\"color\":[0.4,0.6,0.3,1]}}}",
             BIG_CELLS, BIG_CELLS, BIG_CELLS, BIG_CELLS);
    trn_error e;
    if (trn_recipe_parse(text, strlen(text), "big.json", r, NULL, &e)) {
        fprintf(stderr, "recipe refused: %s\n", e.message);
        return false;
    }
    if (trn_graph_parse(graph, strlen(graph), "big.graph.json", g, &e)) {
        fprintf(stderr, "graph refused: %s\n", e.message);
        trn_recipe_dispose(r);
        return false;
    }
    return true;
}

/* The window at the far corner of a 65537^2 grid (4.3 G samples, never allocated: only the
 * tiles meeting the window are evaluated): sample indices past 2^31 and 2^32 (the last row
 * starts at 65536 x 65537 > 2^32) land where they should, for tiles that divide the grid and
 * tiles that do not. */
static void test_far_corner_of_largest_grid(void)
{
    trn_recipe r;
    trn_graph g;
    CHECK(big_recipe(&r, &g, graph_big));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.max_work = TRN_WORK_UNLIMITED;
    trn_error e;
    const uint32_t sizes[] = {16, 37, 1000};
    float *first_sm = malloc((size_t)WIN * WIN * sizeof(float));
    window_collect c = {malloc((size_t)WIN * WIN * sizeof(float)), 0, false};
    CHECK(first_sm && c.v);
    for (uint32_t s = 0; s < 3 && c.v && first_sm; s++) {
        trn_graph_tile_options to = {
            .tile = sizes[s], .x0 = WIN0, .z0 = WIN0, .samples_x = WIN, .samples_z = WIN};
        c.tiles = 0;
        c.outside = false;
        for (size_t k = 0; k < (size_t)WIN * WIN; k++)
            c.v[k] = NAN;
        CHECK_OK(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_window, &c, NULL, NULL, &e));
        const uint32_t per = (WIN0 + WIN - 1u) / sizes[s] - WIN0 / sizes[s] + 1u;
        CHECK_EQ_INT(c.tiles, per * per);
        CHECK(!c.outside);
        uint32_t wrong = 0;
        for (uint32_t j = 0; j < WIN; j++)
            for (uint32_t i = 0; i < WIN; i++) {
                const uint32_t wi = WIN0 + i, wj = WIN0 + j;
                const float want = (wi >= 65529u && wi <= 65532u ? 10.0f : 0.0f) +
                                   (wj >= 65534u && wj <= 65535u ? 100.0f : 0.0f);
                if (c.v[(size_t)j * WIN + i] != want && wrong++ < 8)
                    fprintf(stderr, "(%u, %u): %g, expected %g\n", wi, wj,
                            (double)c.v[(size_t)j * WIN + i], (double)want);
            }
        CHECK_EQ_INT(wrong, 0);
        /* The noise's slope mask: the same bytes for every tile size. */
        to.node_id = "sm";
        CHECK_OK(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_window, &c, NULL, NULL, &e));
        if (s == 0) {
            memcpy(first_sm, c.v, (size_t)WIN * WIN * sizeof(float));
            uint32_t varied = 0;
            for (size_t k = 1; k < (size_t)WIN * WIN; k++)
                varied += c.v[k] != c.v[0];
            CHECK(varied > WIN); /* a mask that varies, not a constant */
        } else {
            CHECK(memcmp(first_sm, c.v, (size_t)WIN * WIN * sizeof(float)) == 0);
        }
    }
    free(first_sm);
    free(c.v);
    /* A window past the grid is refused. */
    trn_graph_tile_options past = {
        .tile = 16, .x0 = WIN0 + 1u, .z0 = 0, .samples_x = WIN, .samples_z = 1};
    CHECK_STATUS(trn_graph_evaluate_tiles(&g, &r, &o, &past, collect_window, &c, NULL, NULL, &e),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.message, "reaches past the 65537 x 65537-sample grid");
    /* The whole grid is refused where it would be held whole. */
    trn_graph_run *run = NULL;
    CHECK_STATUS(trn_graph_evaluate(&g, &r, &o, &run, NULL, NULL, &e), TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "65536 x 65536 cells make 4295098369 samples; graph evaluation "
                              "holds the whole grid, at most 268435456 samples");
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* Split on the largest grid (65537^2 samples, above 2^32): a Drainage read by a D8 Flow
 * Accumulation and a filling Drain Depressions hold only their tiles, so they are taken (a
 * global node solved whole is refused there, test_global_node_on_largest_grid); the run is
 * stopped once the drainage has flooded its first tile. */
typedef struct stop_at_drainage {
    unsigned calls;
    bool drainage;
} stop_at_drainage;

static int stop_in_drainage(double done, const char *stage, void *user)
{
    (void)done;
    stop_at_drainage *s = user;
    s->calls++;
    if (stage && strstr(stage, "drainage")) s->drainage = true;
    return s->drainage ? TRN_CANCEL : 0;
}

static void test_split_on_largest_grid(void)
{
    static const char graph_split[] =
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{\"octaves\":2}},"
        "{\"id\":\"d\",\"type\":\"drainage\",\"params\":{\"sea\":\"off\"},"
        "\"inputs\":{\"field\":{\"node\":\"n\"}}},"
        "{\"id\":\"f\",\"type\":\"flow_accumulation\",\"params\":{\"method\":\"d8\"},"
        "\"inputs\":{\"drainage\":{\"node\":\"d\",\"pin\":\"drainage\"}}},"
        "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"params\":{\"mode\":\"fill\","
        "\"sea\":\"off\"},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
        "{\"id\":\"b\",\"type\":\"height_offset\",\"params\":{\"offset\":-20},"
        "\"inputs\":{\"field\":{\"node\":\"dd\"},\"mask\":{\"node\":\"f\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\","
        "\"inputs\":{\"field\":{\"node\":\"b\"}}}]}";
    trn_recipe r;
    trn_graph g;
    CHECK(big_recipe(&r, &g, graph_split));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = 1;
    o.max_work = TRN_WORK_UNLIMITED;
    trn_error e;
    trn_error_clear(&e);
    window_collect c = {NULL, 0, false};
    const trn_graph_tile_options to = {.tile = 256,
                                       .cache_dir = TILE_CACHE,
                                       .x0 = WIN0,
                                       .z0 = WIN0,
                                       .samples_x = WIN,
                                       .samples_z = WIN};
    CHECK(trn_mkdir_p(SHARED_DIR, &e) == TRN_OK);
    trn_tile_split split;
    memset(&split, 0, sizeof split);
    split.comm = trn_comm_serial_new();
    split.shared_dir = SHARED_DIR;
    stop_at_drainage stop = {0, false};
    CHECK_STATUS(trn_graph_evaluate_tiles_split(&g, &r, &o, &to, NULL, &split, collect_window, &c,
                                                stop_in_drainage, &stop, &e),
                 TRN_ERR_CANCELLED);
    CHECK(stop.drainage);
    CHECK_EQ_INT(c.tiles, 0);
    /* Without the split (no shared folder) the same graph is refused, naming the node. */
    CHECK_STATUS(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_window, &c, NULL, NULL, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "node 'dd' (drain_depressions) works on the whole grid");
    (void)rmdir(SHARED_DIR);
    trn_comm_free(split.comm);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    remove(TILE_CACHE);
}

/* The disk tile cache at the far corner of a 65537^2 grid (tiles of 1024: the last column and
 * row of tiles one sample wide, stored padded): four tiles put, a window across them read back
 * sample for sample, nothing of the rest of the grid held. */
static float far_value(uint32_t i, uint32_t j)
{
    return (float)(i - 64000u) + (float)(j - 64000u) * 2048.0f;
}

static void test_tile_store_far_corner(void)
{
    char dir[512];
    CHECK(trn_test_tmpdir(dir, sizeof dir) != NULL);
    trn_tile_store *s = NULL;
    trn_error e;
    CHECK_OK(trn_tile_store_open(dir, BIG, BIG, 1024, &s, &e));
    float *v = malloc((size_t)1024 * 1024 * sizeof(float));
    CHECK(v != NULL);
    for (uint32_t tz = 63; s && v && tz <= 64; tz++)
        for (uint32_t tx = 63; tx <= 64; tx++) {
            const uint32_t w = tx == 64 ? 1u : 1024u, h = tz == 64 ? 1u : 1024u;
            for (uint32_t j = 0; j < h; j++)
                for (uint32_t i = 0; i < w; i++)
                    v[(size_t)j * w + i] = far_value(tx * 1024u + i, tz * 1024u + j);
            CHECK_OK(trn_tile_store_put_tile(s, 77, 0, tx, tz, v, NULL, &e));
        }
    /* A window of 9 x 9 ending at the grid's far corner, across all four tiles. */
    float win[81];
    if (s) CHECK_OK(trn_tile_store_read(s, 77, 0, BIG - 9u, BIG - 9u, 9, 9, win, NULL, &e));
    uint32_t wrong = 0;
    for (uint32_t j = 0; s && j < 9; j++)
        for (uint32_t i = 0; i < 9; i++)
            wrong += win[j * 9u + i] != far_value(BIG - 9u + i, BIG - 9u + j);
    CHECK_EQ_INT(wrong, 0);
    trn_tile_store_close(s);
    free(v);
    rmdir(dir);
}

/* A global node upstream works on the whole grid: refused past 2^31 - 1 samples, naming it. */
static void test_global_node_on_largest_grid(void)
{
    static const char graph_global[] =
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"base\",\"type\":\"noise_terrain\"},"
        "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"inputs\":{\"field\":{\"node\":\"base\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"dd\"}}}]}";
    trn_recipe r;
    trn_graph g;
    CHECK(big_recipe(&r, &g, graph_global));
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.max_work = TRN_WORK_UNLIMITED;
    trn_error e;
    window_collect c = {NULL, 0, false};
    trn_graph_tile_options to = {
        .tile = 1024, .x0 = WIN0, .z0 = WIN0, .samples_x = WIN, .samples_z = WIN};
    CHECK_STATUS(trn_graph_evaluate_tiles(&g, &r, &o, &to, collect_window, &c, NULL, NULL, &e),
                 TRN_ERR_LIMIT);
    CHECK_CONTAINS(e.message, "node 'dd' (drain_depressions) works on the whole grid, which may "
                              "hold at most 2147483647 samples");
    CHECK_EQ_INT(c.tiles, 0);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
}

/* A small grid's heights: smooth, with a few NaN (no data) that the overviews must skip. */
static float cog_value(uint32_t i, uint32_t j)
{
    if ((i * 7u + j * 3u) % 97u == 5u) return NAN;
    return (float)(sin(i * 0.13) * 40.0 + cos(j * 0.07) * 25.0 + 0.001 * i * j);
}

/* Every pixel of directory dir (tiles of t) as rows from the top. */
static float *cog_level_read(TIFF *tif, uint32_t t, uint32_t lw, uint32_t lh)
{
    float *all = malloc((size_t)lw * lh * sizeof(float));
    float *buf = malloc((size_t)t * t * sizeof(float));
    bool ok = all && buf;
    for (uint32_t y = 0; ok && y < lh; y += t)
        for (uint32_t x = 0; ok && x < lw; x += t) {
            ok = TIFFReadTile(tif, buf, x, y, 0, 0) > 0;
            for (uint32_t r = 0; ok && r < t && y + r < lh; r++)
                memcpy(all + (size_t)(y + r) * lw + x, buf + (size_t)r * t,
                       (lw - x < t ? lw - x : t) * sizeof(float));
        }
    free(buf);
    if (!ok) {
        free(all);
        return NULL;
    }
    return all;
}

/* The tiled writer's Cloud-Optimized layout, read with libtiff: the ghost area, every IFD before
 * every tile, overviews halving (rounded up) down to one tile, each the mean of the non-NaN
 * pixels of 2 x 2 of the level above, tiles of the smallest level first and row-major in every
 * level; pieces that match neither the file's tiles nor the grid. */
static void test_tiled_geotiff_cog(void)
{
    const uint32_t cx = 100, cz = 70, w = cx + 1u, h = cz + 1u, t = 16;
    trn_geotiff_tiled *wr = NULL;
    trn_error e;
    CHECK_EQ_INT(trn_geotiff_tiled_open("tiles_cog.tif", cx, cz, 50.0, 35.0, t, &wr, &e), TRN_OK);
    float *piece = malloc(30u * 23u * sizeof(float));
    for (uint32_t z0 = 0; z0 < h; z0 += 23u) {
        const uint32_t nz = h - z0 < 23u ? h - z0 : 23u;
        for (uint32_t x0 = 0; x0 < w; x0 += 30u) {
            const uint32_t nx = w - x0 < 30u ? w - x0 : 30u;
            for (uint32_t j = 0; j < nz; j++)
                for (uint32_t i = 0; i < nx; i++)
                    piece[(size_t)j * nx + i] = cog_value(x0 + i, z0 + j);
            CHECK_EQ_INT(trn_geotiff_tiled_put(wr, x0, z0, nx, nz, piece, &e), TRN_OK);
        }
    }
    free(piece);
    CHECK_EQ_INT(trn_geotiff_tiled_close(wr, &e), TRN_OK);

    FILE *f = fopen("tiles_cog.tif", "rb");
    char head[160] = {0};
    CHECK(f && fread(head, 1, sizeof head, f) == sizeof head);
    if (f) fclose(f);
    CHECK(memcmp(head, "II\x2b\x00", 4) == 0);
    CHECK(memcmp(head + 16, "GDAL_STRUCTURAL_METADATA_SIZE=", 30) == 0);
    CHECK(strstr(head + 16, "LAYOUT=IFDS_BEFORE_DATA") != NULL);
    TIFFSetWarningHandler(NULL); /* libtiff does not know the GeoTIFF tags */
    TIFF *tif = TIFFOpen("tiles_cog.tif", "r");
    CHECK(tif != NULL);
    if (!tif) return;
    uint64_t last_ifd = 0, first_data = UINT64_MAX, prev_level_first = UINT64_MAX;
    uint32_t lw = w, lh = h, levels = 0;
    float *above = NULL;
    uint32_t aw = 0, ah = 0;
    do {
        uint32_t iw = 0, ih = 0, tw = 0, sub = 0;
        TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &iw);
        TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &ih);
        TIFFGetField(tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetFieldDefaulted(tif, TIFFTAG_SUBFILETYPE, &sub);
        CHECK(iw == lw && ih == lh && tw == t);
        CHECK_EQ_INT((int)sub, levels ? FILETYPE_REDUCEDIMAGE : 0);
        const uint64_t ifd = TIFFCurrentDirOffset(tif);
        CHECK(ifd > last_ifd);
        if (levels == 0) CHECK(ifd < 160u && ifd % 2u == 0);
        last_ifd = ifd;
        uint64_t *offs = NULL;
        CHECK(TIFFGetField(tif, TIFFTAG_TILEOFFSETS, &offs) && offs);
        const uint32_t ntiles = ((iw + t - 1u) / t) * ((ih + t - 1u) / t);
        CHECK_EQ_INT((int)TIFFNumberOfTiles(tif), (int)ntiles);
        bool row_major = true;
        for (uint32_t k = 1; offs && k < ntiles; k++)
            row_major = row_major && offs[k] > offs[k - 1u];
        CHECK(row_major);
        /* This level's tiles all come after the next (smaller) level's: checked from below. */
        if (offs) {
            CHECK(offs[ntiles - 1u] < prev_level_first);
            prev_level_first = offs[0];
            if (offs[0] < first_data) first_data = offs[0];
        }
        float *px = cog_level_read(tif, t, iw, ih);
        CHECK(px != NULL);
        if (levels == 0 && px) {
            bool same = true; /* north up: raster row y is field row h - 1 - y */
            for (uint32_t y = 0; y < h; y++)
                for (uint32_t x = 0; x < w; x++) {
                    const float a = px[(size_t)y * w + x], b = cog_value(x, h - 1u - y);
                    same = same && (memcmp(&a, &b, sizeof a) == 0);
                }
            CHECK(same);
        } else if (px && above) {
            bool mean = true;
            for (uint32_t y = 0; y < ih; y++)
                for (uint32_t x = 0; x < iw; x++) {
                    double s = 0;
                    int n = 0;
                    for (uint32_t dy = 0; dy < 2u; dy++)
                        for (uint32_t dx = 0; dx < 2u; dx++) {
                            const uint32_t yy = 2u * y + dy, xx = 2u * x + dx;
                            if (yy >= ah || xx >= aw) continue;
                            const float v = above[(size_t)yy * aw + xx];
                            if (!isnan(v)) {
                                s += v;
                                n++;
                            }
                        }
                    const float want = n ? (float)(s / n) : NAN, got = px[(size_t)y * iw + x];
                    mean = mean && (isnan(want) ? isnan(got) : got == want);
                }
            CHECK(mean);
        }
        free(above);
        above = px;
        aw = iw;
        ah = ih;
        levels++;
        lw = (lw + 1u) / 2u;
        lh = (lh + 1u) / 2u;
    } while (TIFFReadDirectory(tif));
    free(above);
    TIFFClose(tif);
    /* 101 x 71 -> 51 x 36 -> 26 x 18 -> 13 x 9: the last fits one tile of 16. */
    CHECK_EQ_INT((int)levels, 4);
    CHECK(last_ifd < first_data);
    remove("tiles_cog.tif");
}

/* The memory estimate of recipe text's graph in tiles of 256 (which names a first tile). */
static uint64_t estimate_256(const char *text)
{
    trn_recipe r;
    trn_graph g;
    trn_error e;
    uint64_t bytes = 0;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "estimate.json", &r, NULL, &e));
    CHECK_OK(trn_graph_from_recipe(&r, &g, &e));
    int first = -2;
    CHECK_OK(trn_graph_tiles_memory(&g, &r, NULL, 256, &bytes, &first, &e));
    CHECK(first >= 0);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    return bytes;
}

/* The memory estimate of a tiled run counts a coarsened Stream Power's hand-over to the output
 * grid: six floats an output sample (its field's copy, heights, drainage area, uplift and
 * erodibility factors, the detail made ahead) with its two inputs, and five floats and five
 * doubles a sample of the grid it comes back from (twice as coarse in a cascade, the
 * coarsened grid otherwise): the peak measured on the Mountain Range, which the whole-grid
 * outputs and inputs alone put under its resident size. */
static void test_memory_estimate_handover(void)
{
    uint64_t bytes[2] = {0, 0};
    for (int cascade = 0; cascade < 2; cascade++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"size\":[4096,4096],\"resolution\":[1024,1024],\"seed\":5,"
                 "\"default_landform\":\"hills\",\"landforms\":{\"hills\":{\"height_variation\":"
                 "60}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]}},"
                 "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                 "{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":60}},"
                 "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":{\"coarsen\":4,"
                 "\"fine_steps\":3,\"steps\":6%s},\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                 "\"sp\",\"pin\":\"field\"}}}]}}",
                 cascade ? ",\"cascade_steps\":2" : "");
        bytes[cascade] = estimate_256(text);
    }
    const uint64_t whole = 1025ull * 1025ull * 4u;
    const uint64_t level = 5u * 4u + 5u * 8u; /* bytes a sample of the coarser grid */
    /* Coarsened 4 times: back from 257^2; each level of the cascade: from 513^2. */
    CHECK(bytes[0] >= (6u + 2u) * whole + 257ull * 257ull * level);
    CHECK(bytes[0] < (6u + 2u) * whole + 257ull * 257ull * level + whole);
    CHECK_EQ_INT((long long)(bytes[1] - bytes[0]),
                 (long long)((513ull * 513ull - 257ull * 257ull) * level));
}

/* A Drain Depressions solved on the whole grid (its field a tile node's) is estimated at what a
 * breach holds beside its input: the drainage (9 bytes a sample), its copy of the heights, a mark
 * and the sort keys of every sample (21 more): above the measured peak (a noise field's breach at
 * 4097^2 in tiles of 512 peaked at 375 MiB, estimated at 309 before). A fill holds no more
 * than the whole-grid default. */
static void test_memory_estimate_breach(void)
{
    uint64_t bytes[2] = {0, 0};
    for (int fill = 0; fill < 2; fill++) {
        char text[2048];
        snprintf(text, sizeof text,
                 "{\"size\":[4096,4096],\"resolution\":[1024,1024],\"seed\":5,"
                 "\"default_landform\":\"hills\",\"landforms\":{\"hills\":{\"height_variation\":"
                 "60}},\"default_biome\":\"g\",\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]}},"
                 "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
                 "{\"id\":\"n\",\"type\":\"noise_terrain\",\"params\":{\"height_variation\":60}},"
                 "{\"id\":\"dd\",\"type\":\"drain_depressions\",\"params\":{\"mode\":\"%s\"},"
                 "\"inputs\":{\"field\":{\"node\":\"n\"}}},"
                 "{\"id\":\"s\",\"type\":\"slope_mask\",\"inputs\":{\"field\":{\"node\":\"dd\"}}},"
                 "{\"id\":\"c\",\"type\":\"height_offset\",\"params\":{\"offset\":-20},"
                 "\"inputs\":{\"field\":{\"node\":\"dd\"},\"mask\":{\"node\":\"s\"}}},"
                 "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":"
                 "\"c\"}}}]}}",
                 fill ? "fill" : "breach");
        bytes[fill] = estimate_256(text);
    }
    const uint64_t samples = 1025ull * 1025ull;
    /* The input (4 bytes a sample) and the breach's 30. */
    CHECK(bytes[0] >= (4u + 30u) * samples);
    /* A fill: the default, input and output twice (16 bytes a sample). */
    CHECK_EQ_INT((long long)(bytes[0] - bytes[1]), (long long)(18u * samples));
}

int main(void)
{
    RUN(test_every_type_declares_reach);
    RUN(test_tiles_equal_whole);
    RUN(test_tile_errors);
    RUN(test_tiled_geotiff);
    RUN(test_tiled_geotiff_cog);
    RUN(test_tile_progress);
    RUN(test_global_solver_seam);
    RUN(test_tile_cache_equal_whole);
    RUN(test_fine_steps_in_tiles);
    RUN(test_erosion_by_rows_in_tiles);
    RUN(test_drain_in_tiles);
    RUN(test_split_in_tiles);
    RUN(test_strokes_on_tiles);
    RUN(test_strokes_on_windows);
    RUN(test_far_corner_of_largest_grid);
    RUN(test_global_node_on_largest_grid);
    RUN(test_tile_store_far_corner);
    RUN(test_split_on_largest_grid);

    RUN(test_memory_estimate_handover);
    RUN(test_memory_estimate_breach);
    return trn_test_finish();
}
