/* Tests: a landform's "evolution" (landscape evolution in recipes without a graph). */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "terrane/generate.h"
#include "terrane/landscape.h"
#include "terrane/graph.h"
#include "terrane/recipe.h"
#include "terrane/stats.h"
#include "test.h"

#define EVO                                                                                        \
    "{\"steps\":100,\"reference_cell\":120,\"m\":0.5,\"sea\":\"off\",\"lakes\":\"breach\","        \
    "\"uplift_shape\":\"input\",\"relief\":\"input\"}"

/* The same in a few steps, where only equality is checked. */
#define EVO_SHORT                                                                                  \
    "{\"steps\":8,\"reference_cell\":120,\"m\":0.5,\"sea\":\"off\",\"lakes\":\"breach\","          \
    "\"uplift_shape\":\"input\",\"relief\":\"input\"}"

/* A ridged range on 129^2 samples over 2 km; landform "range" carries evo (NULL: none), and
 * graph (NULL: none) is the recipe's graph; extra is spliced into the recipe object. */
static char *recipe_text(const char *evo, const char *graph, const char *extra)
{
    static const char fmt[] =
        "{\"size\":[2048,2048],\"resolution\":[128,128],\"seed\":11,\"default_landform\":"
        "\"range\",\n\"landforms\":{\"range\":{\"profile\":\"ridged\",\"height_variation\":500,"
        "\"feature_size\":1200%s%s},\n\"flat\":{\"height_variation\":0}},\"default_biome\":\"g\","
        "\"biomes\":{\"g\":{\"color\":[0.4,0.6,0.3,1]},\"r\":{\"color\":[0.5,0.5,0.5,1],"
        "\"landform\":\"range\"}}%s%s%s}";
    const size_t n = sizeof fmt + 256 + (evo ? strlen(evo) : 0) + (graph ? strlen(graph) : 0) +
                     (extra ? strlen(extra) : 0);
    char *t = malloc(n);
    if (t)
        snprintf(t, n, fmt, evo ? ",\n\"evolution\":" : "", evo ? evo : "",
                 graph ? ",\"graph\":" : "", graph ? graph : "", extra ? extra : "");
    return t;
}

static bool parse(const char *text, trn_recipe *r)
{
    trn_error e;
    const trn_status st = trn_recipe_parse(text, strlen(text), "t.json", r, NULL, &e);
    if (st) fprintf(stderr, "recipe refused: %s\n", e.message);
    return st == TRN_OK;
}

/* Heights of a generation (malloc'd), NULL on failure. */
static float *heights_of(const char *text, int threads, trn_erosion_quality quality)
{
    trn_recipe r;
    if (!text || !parse(text, &r)) return NULL;
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.quality = quality;
    trn_generated g;
    trn_error e;
    float *out = NULL;
    if (trn_recipe_generate(&r, &o, &g, NULL, NULL, &e) == TRN_OK) {
        const size_t n = trn_field_sample_count(&g.field);
        out = malloc(n * sizeof *out);
        if (out) memcpy(out, g.field.heights, n * sizeof *out);
        trn_generated_dispose(&g);
    } else {
        fprintf(stderr, "generation failed: %s\n", e.message);
    }
    trn_recipe_dispose(&r);
    return out;
}

#define SAMPLES (129u * 129u)

static uint64_t hash_heights(const float *h)
{
    uint64_t x = 1469598103934665603ull;
    const unsigned char *b = (const unsigned char *)h;
    for (size_t k = 0; k < SAMPLES * sizeof *h; k++)
        x = (x ^ b[k]) * 1099511628211ull;
    return x;
}

/* Where marker first occurs in text: line and column (1-based). */
static void position_of(const char *text, const char *marker, int *line, int *col)
{
    const char *at = strstr(text, marker);
    *line = 1;
    *col = 1;
    for (const char *p = text; at && p < at; p++) {
        if (*p == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

static void expect_error(const char *evo, const char *marker, const char *message)
{
    char *text = recipe_text(evo, NULL, NULL);
    trn_recipe r;
    trn_error e;
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message, message);
    int line, col;
    position_of(text, marker, &line, &col);
    CHECK_EQ_INT(e.line, line);
    CHECK_EQ_INT(e.column, col);
    free(text);
}

static void test_errors(void)
{
    /* Each parameter is checked by the Stream Power node's own rules, at its line and column. */
    expect_error("{\"steps\":0}", "0}",
                 "landforms.range.evolution.steps: expected a whole number from 1 to 100000, "
                 "found 0");
    expect_error("{\"steps\":2.5}", "2.5", "steps: expected a whole number");
    expect_error("{\"m\":3}", "3}", "evolution.m: expected a number from 0.01 to 2, found 3");
    expect_error("{\"stepz\":10}", "\"stepz\"",
                 "unknown key 'stepz' in landforms.range.evolution; did you mean 'steps'?");
    expect_error("{\"lakes\":\"drain\"}", "\"drain\"",
                 "evolution.lakes: expected one of keep|fill|breach, found \"drain\"");
    expect_error("{\"uplift\":\"fast\"}", "\"fast\"", "uplift: expected a number, found a string");
    expect_error("[1]", "[1]", "landforms.range.evolution: expected an object of Stream Power");
    expect_error("true", "true}", "expected an object of Stream Power parameters");
    /* The key itself is one a landform knows (a misspelling is suggested). */
    char *text = recipe_text(NULL, NULL, NULL);
    char *bad = strstr(text, "\"feature_size\"");
    memcpy(bad + 1, "evolutoin", 9); /* "feature_size" -> "evolutoinize" */
    trn_recipe r;
    trn_error e;
    CHECK_STATUS(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, &e), TRN_ERR_JSON);
    CHECK_CONTAINS(e.message,
                   "unknown key 'evolutoinize' in landforms.range; did you mean 'evolution'?");
    free(text);
}

static void test_validate(void)
{
    /* A recipe built in code is held to the same rules, the path naming the parameter. */
    char *text = recipe_text(EVO, NULL, NULL);
    trn_recipe r;
    CHECK(parse(text, &r));
    char *keep = r.landforms[0].evolution;
    char bad[] = "{\"dt\":-1}";
    r.landforms[0].evolution = bad;
    trn_error e;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms.range.evolution.dt");
    CHECK_CONTAINS(e.message, "dt: expected a number from");
    char not_object[] = "[]";
    r.landforms[0].evolution = not_object;
    CHECK_STATUS(trn_recipe_validate(&r, &e), TRN_ERR_VALIDATION);
    CHECK_CONTAINS(e.message, "landforms.range.evolution");
    r.landforms[0].evolution = keep;
    CHECK_OK(trn_recipe_validate(&r, &e));
    trn_recipe_dispose(&r);
    free(text);
}

static void test_canonical_and_key(void)
{
    char *with = recipe_text(EVO, NULL, NULL), *without = recipe_text(NULL, NULL, NULL),
         *other =
             recipe_text("{\"steps\":101,\"reference_cell\":120,\"m\":0.5,\"sea\":\"off\","
                         "\"lakes\":\"breach\",\"uplift_shape\":\"input\",\"relief\":\"input\"}",
                         NULL, NULL),
         *empty = recipe_text("{}", NULL, NULL);
    trn_recipe a, b, c, d;
    CHECK(parse(with, &a) && parse(without, &b) && parse(other, &c) && parse(empty, &d));
    char *ta = NULL, *td = NULL;
    size_t na = 0, nd = 0;
    CHECK_OK(trn_recipe_canonical_json(&a, &ta, &na, NULL));
    CHECK_OK(trn_recipe_canonical_json(&d, &td, &nd, NULL));
    /* Kept in the canonical form, keys sorted; "{}" (every default) is kept too. */
    CHECK_CONTAINS(ta, "\"evolution\":{\"lakes\":\"breach\",\"m\":0.5,\"reference_cell\":120,");
    CHECK_CONTAINS(td, "\"evolution\":{}");
    trn_recipe again;
    CHECK(ta && parse(ta, &again));
    char *tb = NULL;
    size_t nb = 0;
    CHECK_OK(trn_recipe_canonical_json(&again, &tb, &nb, NULL));
    CHECK(tb && ta && strcmp(ta, tb) == 0);
    uint64_t ka = 0, kb = 0, kc = 0, kd = 0;
    CHECK_OK(trn_recipe_cache_key(&a, &ka, NULL));
    CHECK_OK(trn_recipe_cache_key(&b, &kb, NULL));
    CHECK_OK(trn_recipe_cache_key(&c, &kc, NULL));
    CHECK_OK(trn_recipe_cache_key(&d, &kd, NULL));
    CHECK(ka != kb && ka != kc && kd != kb);
    free(ta);
    free(tb);
    free(td);
    trn_recipe_dispose(&again);
    trn_recipe_dispose(&a);
    trn_recipe_dispose(&b);
    trn_recipe_dispose(&c);
    trn_recipe_dispose(&d);
    free(with);
    free(without);
    free(other);
    free(empty);
}

static void test_same_as_graph(void)
{
    /* The landform option is exactly a Stream Power node after the landform. */
    char *plain = recipe_text(EVO_SHORT, NULL, NULL);
    char *graph = recipe_text(
        NULL,
        "{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"lf\",\"type\":\"landform\"},"
        "{\"id\":\"sp\",\"type\":\"stream_power\",\"params\":" EVO_SHORT
        ",\"inputs\":{\"field\":{\"node\":\"lf\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"sp\","
        "\"pin\":\"field\"}}}]}",
        NULL);
    char *none = recipe_text(NULL, NULL, NULL);
    float *a = heights_of(plain, 2, TRN_EROSION_FINAL),
          *b = heights_of(graph, 2, TRN_EROSION_FINAL), *c = heights_of(none, 2, TRN_EROSION_FINAL),
          *d = heights_of(plain, 1, TRN_EROSION_FINAL),
          *p = heights_of(plain, 2, TRN_EROSION_PREVIEW);
    CHECK(a && b && c && d && p);
    if (a && b && c && d && p) {
        CHECK(memcmp(a, b, SAMPLES * sizeof *a) == 0);
        CHECK(memcmp(a, c, SAMPLES * sizeof *a) != 0);
        /* Bit-identical on any thread count; preview runs fewer, longer steps. */
        CHECK(hash_heights(a) == hash_heights(d));
        CHECK(memcmp(a, p, SAMPLES * sizeof *a) != 0);
    }
    free(a);
    free(b);
    free(c);
    free(d);
    free(p);
    free(plain);
    free(graph);
    free(none);
}

static double area_in_depressions(const float *h, double *b)
{
    trn_field f;
    if (trn_field_init(&f, 128, 128, 2048, 2048, NULL)) return NAN;
    memcpy(f.heights, h, SAMPLES * sizeof *h);
    trn_stats_options o;
    trn_stats_options_default(&o);
    trn_terrain_stats s;
    const trn_status st = trn_terrain_stats_compute(&f, &o, &s, NULL, NULL, NULL);
    trn_field_dispose(&f);
    *b = st ? NAN : s.area_exponent;
    return st ? NAN : s.depression_fraction;
}

static void test_drains(void)
{
    /* The noise alone is pitted; evolved, it drains to the border through a river network. */
    char *plain = recipe_text(EVO, NULL, NULL), *none = recipe_text(NULL, NULL, NULL);
    float *a = heights_of(plain, 0, TRN_EROSION_FINAL), *c = heights_of(none, 0, TRN_EROSION_FINAL);
    CHECK(a && c);
    if (a && c) {
        double ba, bc;
        const double da = area_in_depressions(a, &ba), dc = area_in_depressions(c, &bc);
        fprintf(stderr, "noise: %.3f in depressions, b %.3f; evolved: %.3f, b %.3f\n", dc, bc, da,
                ba);
        CHECK(dc > 0.05);
        CHECK(da < 0.005);
        CHECK(ba >= 0.38 && ba <= 0.55);
        CHECK(bc > 0.55);
    }
    free(a);
    free(c);
    free(plain);
    free(none);
}

static void test_region_landform(void)
{
    /* A region painting a biome whose landform evolves blends toward the evolved heights: at the
     * stroke's centre (weight 1) the heights are the evolved landform's. */
    char *own = recipe_text(EVO_SHORT, NULL, NULL);
    char *text = malloc(strlen(own) + 512);
    /* The default landform flat, regions painting "r" (landform "range", evolved). */
    snprintf(text, strlen(own) + 512, "%s", own);
    char *def = strstr(text, "\"default_landform\":\"range\"");
    memcpy(def, "\"default_landform\":\"flat\" ", 26);
    char *end = strrchr(text, '}');
    snprintf(end, 400,
             ",\"regions\":[{\"type\":\"region\",\"biome\":\"r\",\"radius\":300,\"falloff\":0.5,"
             "\"center\":[1024,1024]}]}");
    float *evolved = heights_of(own, 0, TRN_EROSION_FINAL),
          *painted = heights_of(text, 0, TRN_EROSION_FINAL);
    CHECK(evolved && painted);
    if (evolved && painted) {
        const size_t centre = 64u * 129u + 64u;
        CHECK(painted[centre] == evolved[centre]);
        CHECK(painted[0] == 0.0f); /* outside: the flat default */
    }
    free(evolved);
    free(painted);
    free(text);
    free(own);
}

static void test_work(void)
{
    /* The budget counts the evolution with the noise: 129^2 samples x 5 octaves, then samples +
     * samples x 100 steps x 4 (no coarsening, so no fine steps). */
    char *text = recipe_text(EVO, NULL, NULL);
    trn_recipe r;
    CHECK(parse(text, &r));
    trn_graph g;
    CHECK_OK(trn_graph_from_recipe(&r, &g, NULL));
    uint64_t work[3] = {0, 0, 0};
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_FINAL, work, NULL));
    CHECK_EQ_INT(work[0], SAMPLES * 5u + SAMPLES + SAMPLES * 100u * 4u);
    /* Preview: a quarter of the steps. */
    CHECK_OK(trn_graph_work(&g, &r, TRN_EROSION_PREVIEW, work, NULL));
    CHECK_EQ_INT(work[0], SAMPLES * 5u + SAMPLES + SAMPLES * 25u * 4u);
    /* Its time: the noise at a landform's rate (2.5 ns a unit), the evolution at Stream Power's
     * (10 ns), not all of it at the noise's rate (a fivefold underestimate at 513^2). */
    double seconds[3] = {0, 0, 0};
    CHECK_OK(trn_graph_work_seconds(&g, &r, TRN_EROSION_FINAL, seconds, NULL));
    const double expect = (SAMPLES * 5.0 * 2.5 + (SAMPLES + SAMPLES * 100.0 * 4.0) * 10.0) * 1e-9;
    CHECK(fabs(seconds[0] - expect) < 1e-9 * expect);
    trn_graph_dispose(&g);
    trn_recipe_dispose(&r);
    free(text);
}

static int cached_files(const char *dir)
{
    int count = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strstr(e->d_name, ".tnc")) count++;
    if (d) closedir(d);
    return count;
}

static void test_preview_not_cached_on_disk(void)
{
    /* A Preview of an evolving landform is a stand-in: like erosion's, it never reaches the
     * cache directory, so a later Final run cannot mistake it for its own. */
    char tmp[512];
    CHECK(trn_test_tmpdir(tmp, sizeof tmp) != NULL);
    char dir[600];
    snprintf(dir, sizeof dir, "%s/cache", tmp);
    trn_graph_cache *cache = NULL;
    CHECK_OK(trn_graph_cache_new(dir, 0, &cache, NULL));
    char *text = recipe_text(EVO_SHORT, NULL, NULL);
    trn_recipe r;
    CHECK(parse(text, &r));
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.cache = cache;
    o.quality = TRN_EROSION_PREVIEW;
    trn_generated g;
    CHECK_OK(trn_recipe_generate(&r, &o, &g, NULL, NULL, NULL));
    trn_generated_dispose(&g);
    CHECK_EQ_INT(cached_files(dir), 0);
    o.quality = TRN_EROSION_FINAL;
    CHECK_OK(trn_recipe_generate(&r, &o, &g, NULL, NULL, NULL));
    trn_generated_dispose(&g);
    CHECK(cached_files(dir) > 0);
    trn_recipe_dispose(&r);
    trn_graph_cache_free(cache);
    free(text);
}

/* A coarsened run held at the sea level (sea_surface): the beds' copy, the hold and the shore
 * ramp's per-sample passes run on the threads; the same bytes on 1 and 3 threads, with beds
 * brought back under the water and land above it. */
static void test_sea_surface_threads(void)
{
    const uint32_t c = 160;
    const size_t nx = c + 1u, n = nx * nx;
    float *out[2] = {NULL, NULL};
#ifdef _OPENMP
    const int saved = omp_get_max_threads();
#endif
    for (int t = 0; t < 2; t++) {
#ifdef _OPENMP
        omp_set_num_threads(t ? 3 : 1);
#endif
        trn_field f;
        CHECK_OK(trn_field_init(&f, c, c, 1600.0, 1600.0, NULL));
        for (size_t j = 0; j < nx; j++)
            for (size_t i = 0; i < nx; i++)
                f.heights[j * nx + i] =
                    (float)(60.0 * sin(0.05 * (double)i) * cos(0.04 * (double)j) + 0.3 * (double)i);
        trn_evolve_options o;
        trn_evolve_options_default(&o);
        o.sp.uplift = 1e-3;
        o.sp.erodibility = 5e-4;
        o.sp.diffusion = 0.5;
        o.sp.dt = 200.0;
        o.sp.steps = 6;
        o.sp.sea_level = 20.0;
        o.sp.sea_surface = true;
        o.sp.sea_surface_depth = 5.0;
        o.coarsen = 2;
        o.fine_steps = 2;
        CHECK_OK(trn_landscape_evolve(&f, &o, NULL, NULL, NULL, NULL));
        out[t] = f.heights;
        f.heights = NULL;
        trn_field_dispose(&f);
    }
#ifdef _OPENMP
    omp_set_num_threads(saved);
#endif
    CHECK(memcmp(out[0], out[1], n * sizeof *out[0]) == 0);
    size_t under = 0, ramped = 0;
    for (size_t k = 0; k < n; k++) {
        under += out[1][k] < 20.0f;
        ramped += out[1][k] < 20.0f && out[1][k] > 15.0f;
    }
    CHECK(under > n / 10 && under < n - n / 10);
    CHECK(ramped > 0);
    free(out[0]);
    free(out[1]);
}

int main(void)
{
    RUN(test_errors);
    RUN(test_validate);
    RUN(test_canonical_and_key);
    RUN(test_same_as_graph);
    RUN(test_drains);
    RUN(test_region_landform);
    RUN(test_preview_not_cached_on_disk);
    RUN(test_work);
    RUN(test_sea_surface_threads);
    return trn_test_finish();
}
