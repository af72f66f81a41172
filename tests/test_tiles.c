/* Tiled graph evaluation: every node type declares its reach, and tiles of any size (dividing
 * the grid or not) give the whole-grid bytes for a graph with every node type. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/tiles.h"
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
    FILE *f = fopen(DEM, "wb");
    if (!f) return false;
    for (uint32_t j = 0; j < 33; j++)
        for (uint32_t i = 0; i < 33; i++) {
            const uint16_t v = (uint16_t)((i * 977u + j * 1531u + i * j * 37u) % 65536u);
            const uint8_t b[2] = {(uint8_t)(v & 0xffu), (uint8_t)(v >> 8)};
            fwrite(b, 1, 2, f);
        }
    return fclose(f) == 0;
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
        memcpy(c->v + (size_t)(z0 + j) * SAMPLES + x0, values + (size_t)j * nx, nx * sizeof(float));
    return TRN_OK;
}

/* Tiled values of a node's float output, compared with the whole-grid run's bytes. */
static bool same_tiled(const trn_graph *g, const trn_recipe *r, const trn_graph_options *o,
                       const char *id, const char *pin, const float *whole, uint32_t tile)
{
    collect c;
    memset(&c, 0, sizeof c);
    c.v = calloc((size_t)SAMPLES * SAMPLES, sizeof(float));
    const trn_graph_tile_options to = {tile, id, pin};
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
    trn_graph_tile_options to = {0, NULL, NULL};
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
        const trn_graph_tile_options to = {evals[k], NULL, NULL};
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
    const trn_graph_tile_options to = {32, NULL, NULL};
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
    const trn_graph_tile_options to = {32, NULL, NULL};
    solved = 0;
    CHECK_EQ_INT(trn_graph_evaluate_tiles_with(&g, &r, &o, &to, counting_solver, collect_tile, &c,
                                               NULL, NULL, &e),
                 TRN_OK);
    static const char *const globals[] = {"hin", "dr",  "fa", "dd", "er",  "sp", "wb",
                                          "dr2", "bw",  "we", "dr3", "rr", "du"};
    CHECK_EQ_INT(solved, 13);
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

int main(void)
{
    RUN(test_every_type_declares_reach);
    RUN(test_tiles_equal_whole);
    RUN(test_tile_errors);
    RUN(test_tiled_geotiff);
    RUN(test_tile_progress);
    RUN(test_global_solver_seam);
    return trn_test_finish();
}
