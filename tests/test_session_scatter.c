/* Sessions with a palette and surface roles: placements refiltered near each edit (equal to a
 * full refilter), undo restoring identities, no invented sites, roles equal to a full
 * classification after local and drainage-rerouting strokes, thread-count independence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers_helpers.h"
#include "terrane/drainage.h"
#include "terrane/layers.h"
#include "terrane/scatter.h"
#include "test.h"

static trn_scatter_rule make_rule(const char *id, double density, double candidate_spacing)
{
    trn_scatter_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.prefab = (char *)"asset://prefabs/cube";
    r.density = density;
    r.candidate_spacing = candidate_spacing;
    r.scale[0] = 0.5;
    r.scale[1] = 1.5;
    r.yaw[1] = 360.0;
    r.cluster_size = 16.0;
    return r;
}

/* "tree" on gentle ground (slope <= 12), "rock" on steep ground (slope >= 12), "grass" anywhere
 * dry and not excluded. */
static trn_scatter_rule rules[3];
static trn_palette palette;

static void make_palette(void)
{
    rules[0] = make_rule("tree", 0.05, 2.0);
    rules[0].slope.has = true;
    rules[0].slope.lo = 0.0;
    rules[0].slope.hi = 12.0;
    rules[1] = make_rule("rock", 0.05, 2.0);
    rules[1].slope.has = true;
    rules[1].slope.lo = 12.0;
    rules[1].slope.hi = 90.0;
    rules[2] = make_rule("grass", 0.05, 1.5);
    memset(&palette, 0, sizeof palette);
    palette.name = (char *)"session";
    palette.art_density = palette.grass_density = palette.tree_density = palette.rock_density = 1;
    palette.rules = rules;
    palette.rule_count = 3;
}

static trn_session *open_text(const char *text, int threads)
{
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(text, strlen(text), "t.json", &r, NULL, NULL));
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.threads = threads;
    o.palette = &palette;
    o.roles = true;
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, &o, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    return ss;
}

static trn_session *open_session(int threads)
{
    return open_text(lh_recipe_text, threads);
}

/* The first placement of rule at least margin from the border. */
static const trn_instance *first_of(const trn_instances *in, uint32_t rule, double margin,
                                    double size)
{
    for (size_t k = 0; k < in->count; k++) {
        const trn_instance *it = &in->items[k];
        if (it->rule == rule && it->x > margin && it->z > margin && it->x < size - margin &&
            it->z < size - margin)
            return it;
    }
    return NULL;
}

static uint64_t hash_instances(const trn_instances *in)
{
    return in->count ? (uint64_t)XXH64(in->items, in->count * sizeof *in->items, 0) : 7u;
}

static trn_instances session_instances(const trn_session *ss)
{
    trn_instances out;
    CHECK_OK(trn_session_instances(ss, &out, NULL));
    return out;
}

static bool same_site(const trn_instance *a, const trn_instance *b)
{
    return a->rule == b->rule && a->cx == b->cx && a->cz == b->cz && a->x == b->x && a->z == b->z &&
           a->yaw == b->yaw && a->scale == b->scale;
}

/* Order of the placement writers: rule, cz, cx. */
static int site_cmp(const trn_instance *a, const trn_instance *b)
{
    if (a->rule != b->rule) return a->rule < b->rule ? -1 : 1;
    if (a->cz != b->cz) return a->cz < b->cz ? -1 : 1;
    if (a->cx != b->cx) return a->cx < b->cx ? -1 : 1;
    return 0;
}

/* Is s one of in's sites (same identity, position, yaw and scale)? Binary search. */
static bool contains(const trn_instances *in, const trn_instance *s)
{
    size_t lo = 0, hi = in->count;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        const int c = site_cmp(&in->items[mid], s);
        if (c == 0) return same_site(&in->items[mid], s);
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* The session's placements equal a full refilter of base on its current result, its result's
 * instances equal them, every placement is a base candidate, and its roles equal a full
 * classification. */
static void check_full(const trn_session *ss, const trn_instances *base)
{
    const trn_generated *g = trn_session_result(ss);
    const trn_recipe *r = trn_session_recipe(ss);
    trn_generated_scatter_env env;
    CHECK_OK(trn_generated_scatter_env_init(g, r, &palette, &env, NULL));
    trn_instances full = {NULL, 0};
    CHECK_OK(trn_scatter_refilter(&palette, base, &env.env, &full, NULL, NULL));
    trn_generated_scatter_env_dispose(&env);
    trn_instances mine = session_instances(ss);
    CHECK_EQ_INT(mine.count, full.count);
    CHECK(hash_instances(&mine) == hash_instances(&full));
    CHECK(hash_instances(&g->instances) == hash_instances(&full));
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements, full.count);
    for (size_t k = 0; k < mine.count; k++)
        if (!contains(base, &mine.items[k])) {
            CHECK(!"a placement the base lacks");
            break;
        }
    trn_instances_dispose(&mine);
    trn_instances_dispose(&full);
    const size_t n = trn_field_sample_count(&g->field);
    uint8_t *roles = malloc(n);
    CHECK_OK(trn_generated_classify_roles(g, r, NULL, roles, NULL));
    CHECK(trn_session_roles(ss) != NULL);
    CHECK(trn_session_roles(ss) == g->roles);
    CHECK(trn_session_roles(ss) && memcmp(roles, trn_session_roles(ss), n) == 0);
    free(roles);
}

static trn_stroke radial(trn_stroke_kind kind, double *p, double radius, double strength)
{
    trn_stroke s;
    memset(&s, 0, sizeof s);
    s.kind = kind;
    s.radius = radius;
    s.strength = strength;
    s.falloff = 0.5;
    s.points = p;
    s.point_count = 1;
    return s;
}

/* Count base placements that differ between a and b, and check each lies within reach of
 * (x, z): the stroke's radius plus the refilter's margin. */
static size_t diff_near(const trn_instances *a, const trn_instances *b, double x, double z,
                        double reach)
{
    size_t diffs = 0;
    for (int pass = 0; pass < 2; pass++) {
        const trn_instances *p = pass ? b : a, *q = pass ? a : b;
        for (size_t k = 0; k < p->count; k++) {
            const trn_instance *it = &p->items[k];
            if (contains(q, it)) continue;
            diffs++;
            const double d = hypot(it->x - x, it->z - z);
            if (d > reach) {
                fprintf(stderr, "placement %s at %.2f from the stroke\n", pass ? "added" : "lost",
                        d);
                CHECK(d <= reach);
            }
        }
    }
    return diffs;
}

static void test_strokes_undo_redo(void)
{
    make_palette();
    trn_session *ss = open_session(0);
    if (!ss) return;
    trn_instances base = session_instances(ss);
    CHECK(base.count > 100);
    const uint64_t h0 = hash_instances(&base);
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements_removed, 0);
    CHECK(trn_session_last_edit(ss)->roles_changed.changed == NULL);
    check_full(ss, &base);
    /* A steep mound on a tree: trees on it leave (slope above 12), rocks may come back only
     * where the base had them, and everything away from it stays. */
    const trn_instance *tree = first_of(&base, 0, 40.0, 256.0);
    CHECK(tree != NULL);
    if (!tree) return;
    double p1[2] = {tree->x, tree->z};
    trn_stroke s = radial(TRN_STROKE_RAISE, p1, 12, 25);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    check_full(ss, &base);
    trn_instances after1 = session_instances(ss);
    const trn_session_edit *e = trn_session_last_edit(ss);
    CHECK(e->placements_removed > 0);
    CHECK_EQ_INT(e->placements, after1.count);
    CHECK_EQ_INT(base.count - e->placements_removed + e->placements_restored, after1.count);
    /* Reach: radius 12 + two cells (2 units each) of margin + the nearest sample's half cell
     * + Horn's stencil, generously 18. */
    CHECK_EQ_INT(diff_near(&base, &after1, p1[0], p1[1], 18.0),
                 e->placements_removed + e->placements_restored);
    /* An exclusion stroke removes every placement in its core. */
    const trn_instance *grass = first_of(&after1, 2, 60.0, 256.0);
    CHECK(grass != NULL);
    if (!grass) return;
    double p2[2] = {grass->x, grass->z};
    s = radial(TRN_STROKE_EXCLUSION, p2, 10, 1);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    check_full(ss, &base);
    trn_instances after2 = session_instances(ss);
    CHECK(trn_session_last_edit(ss)->placements_removed > 0);
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements_restored, 0);
    for (size_t k = 0; k < after2.count; k++)
        CHECK(hypot(after2.items[k].x - p2[0], after2.items[k].z - p2[1]) > 4.0);
    CHECK_EQ_INT(diff_near(&after1, &after2, p2[0], p2[1], 16.0),
                 trn_session_last_edit(ss)->placements_removed);
    /* Lowering the mound back restores trees where the slope falls into the band again. */
    s = radial(TRN_STROKE_LOWER, p1, 12, 25);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    check_full(ss, &base);
    CHECK(trn_session_last_edit(ss)->placements_restored > 0);
    /* Undo three times: the exact base again (identities, yaw, scale, heights). */
    for (int k = 0; k < 3; k++) {
        CHECK_OK(trn_session_undo(ss, NULL, NULL));
        check_full(ss, &base);
    }
    trn_instances back = session_instances(ss);
    CHECK(hash_instances(&back) == h0);
    trn_instances_dispose(&back);
    /* Redo twice: the same placements as after the second stroke. */
    CHECK_OK(trn_session_redo(ss, NULL, NULL));
    CHECK(trn_session_last_edit(ss)->placements_removed > 0);
    CHECK_OK(trn_session_redo(ss, NULL, NULL));
    check_full(ss, &base);
    back = session_instances(ss);
    CHECK(hash_instances(&back) == hash_instances(&after2));
    trn_instances_dispose(&back);
    trn_instances_dispose(&after1);
    trn_instances_dispose(&after2);
    trn_instances_dispose(&base);
    trn_session_free(ss);
}

/* Refiltering never invents: painting a biome region or flattening a steep slope can only
 * bring back sites the base held. */
static void test_never_invents(void)
{
    make_palette();
    trn_session *ss = open_session(0);
    if (!ss) return;
    trn_instances base = session_instances(ss);
    /* Flatten a wide area: many samples enter the tree band, none adds a tree. */
    double p[2] = {128, 128};
    trn_stroke s = radial(TRN_STROKE_FLATTEN, p, 40, 1);
    s.target_height = 45;
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements_restored, 0);
    check_full(ss, &base);
    trn_instances now = session_instances(ss);
    CHECK(now.count <= base.count);
    trn_instances_dispose(&now);
    /* Regenerate: placement runs afresh on the edited surface (the edits are in the recipe), so
     * sites the flattening made suitable can appear, and the report starts over. */
    CHECK_OK(
        trn_session_regenerate(ss, trn_session_recipe(ss), TRN_EDITS_REFUSE, NULL, NULL, NULL));
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements_removed, 0);
    trn_instances fresh = session_instances(ss);
    trn_generated full;
    trn_generate_options o;
    memset(&o, 0, sizeof o);
    o.palette = &palette;
    CHECK_OK(trn_recipe_generate(trn_session_recipe(ss), &o, &full, NULL, NULL, NULL));
    CHECK(hash_instances(&fresh) == hash_instances(&full.instances));
    check_full(ss, &fresh);
    trn_generated_dispose(&full);
    trn_instances_dispose(&fresh);
    trn_instances_dispose(&base);
    trn_session_free(ss);
}

/* A dam across a river: the lake behind it spills another way, so drainage changes far from
 * the stroke, and so do the roles (channels are sediment or wet ground). The session reports
 * those chunks too. Dam sites are tried down the channels (largest flow first) until one
 * changes a role chunk the stroke's samples do not touch; each try that does not is undone. */
/* A plain at 50 m with sixteen valleys running south (x 16, 32, ..., 240; lowered more to the
 * south, the border there is their outlet). Valley A (x 96) alone starts at the north edge and
 * has a head basin (a wide bowl at (96, 24)) that gathers over a thousand samples, so it is a
 * channel (accumulation >= 1024) all the way to its mouth; the others start at z 64 and collect
 * only their side strips. 128 x 128 cells over 256 units, chunks of 16 cells (8 x 8). */
static char *valley_text(void)
{
    const size_t cap = (size_t)1 << 18;
    char *t = malloc(cap);
    if (!t) return NULL;
    size_t n = (size_t)snprintf(
        t, cap,
        "{\"size\": [256, 256], \"resolution\": [128, 128], \"seed\": 5, \"chunk_cells\": 16, "
        "\"sea_level\": -100, \"default_landform\": \"plain\", \"landforms\": {\"plain\": "
        "{\"base_height\": 50, \"height_variation\": 0}}, \"default_biome\": \"g\", "
        "\"biomes\": {\"g\": {\"color\": [0, 1, 0, 1]}}, \"edits\": [{\"type\": \"lower\", "
        "\"radius\": 30, \"falloff\": 1, \"strength\": 6, \"center\": [96, 24]}");
    for (int x = 16; x <= 240; x += 16)
        for (int z = x == 96 ? 0 : 64; z <= 256 && n < cap; z += 4)
            n += (size_t)snprintf(t + n, cap - n,
                                  ", {\"type\": \"lower\", \"radius\": 5, \"falloff\": 1, "
                                  "\"strength\": %g, \"center\": [%d, %d]}",
                                  x == 96 ? 8.0 + 12.0 * z / 256.0 : 4.0 + 6.0 * z / 256.0, x, z);
    if (n < cap) snprintf(t + n, cap - n, "]}");
    return t;
}

/* A dam across valley A below its head basin: the lake behind it rises to the plain and drains
 * away over it, so valley A downstream loses the basin's flow and stops being a channel down to
 * its mouth, 60 samples (four chunks) beyond anything the stroke touched. The session reports
 * those downstream chunks, and its roles equal a full classification; undo brings the channel
 * back and reports them again. */
static void test_dam_reroutes_roles(void)
{
    make_palette();
    char *text = valley_text();
    trn_session *ss = text ? open_text(text, 0) : NULL;
    free(text);
    if (!ss) return;
    trn_instances base = session_instances(ss);
    check_full(ss, &base);
    const size_t mouth = (size_t)120 * 129u + 48u; /* valley A, 8 samples above the border */
    CHECK(trn_session_roles(ss)[mouth] == TRN_ROLE_SEDIMENT);
    double p[2] = {96, 60};
    trn_stroke s = radial(TRN_STROKE_RAISE, p, 14, 30);
    trn_chunk_set surface;
    CHECK_OK(trn_session_apply_stroke(ss, &s, &surface, NULL));
    check_full(ss, &base);
    CHECK(trn_session_roles(ss)[mouth] == TRN_ROLE_GROUND);
    const trn_chunk_set *rc = &trn_session_last_edit(ss)->roles_changed;
    CHECK_EQ_INT(rc->chunks_x, 8);
    CHECK_EQ_INT(rc->chunks_z, 8);
    /* The stroke's samples reach chunk rows 1..2 only; the valley's chunks (columns 2 and 3)
     * change in every row down to the mouth. */
    for (uint32_t cz = 3; cz < 8; cz++) {
        CHECK(!surface.changed[cz * 8 + 2] && !surface.changed[cz * 8 + 3]);
        CHECK(rc->changed && rc->changed[cz * 8 + 3]);
    }
    trn_chunk_set_dispose(&surface);
    CHECK_OK(trn_session_undo(ss, NULL, NULL));
    check_full(ss, &base);
    CHECK(trn_session_roles(ss)[mouth] == TRN_ROLE_SEDIMENT);
    rc = &trn_session_last_edit(ss)->roles_changed;
    CHECK(rc->changed && rc->changed[7 * 8 + 3]);
    CHECK_OK(trn_session_redo(ss, NULL, NULL));
    check_full(ss, &base);
    /* An exclusion stroke changes no heights: no role changes at all. */
    double q[2] = {200, 200};
    s = radial(TRN_STROKE_EXCLUSION, q, 8, 1);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    CHECK_EQ_INT(trn_session_last_edit(ss)->roles_changed.changed_count, 0);
    check_full(ss, &base);
    trn_instances_dispose(&base);
    trn_session_free(ss);
}

/* One and two threads: the same placements and roles after the same strokes. */
static void test_threads(void)
{
    make_palette();
    uint64_t hi[2] = {0, 0}, hr[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        trn_session *ss = open_session(t + 1);
        if (!ss) return;
        double p[2] = {100, 100}, q[2] = {60, 200};
        trn_stroke s = radial(TRN_STROKE_RAISE, p, 15, 20);
        CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
        s = radial(TRN_STROKE_SMOOTH, q, 20, 1);
        CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
        trn_instances in = session_instances(ss);
        hi[t] = hash_instances(&in);
        const trn_generated *g = trn_session_result(ss);
        hr[t] = XXH64(trn_session_roles(ss), trn_field_sample_count(&g->field), 0);
        trn_instances_dispose(&in);
        trn_session_free(ss);
    }
    CHECK(hi[0] == hi[1]);
    CHECK(hr[0] == hr[1]);
}

/* Without a palette or roles the session places nothing and has no roles. */
static void test_without(void)
{
    trn_recipe r;
    CHECK_OK(trn_recipe_parse(lh_recipe_text, strlen(lh_recipe_text), "t.json", &r, NULL, NULL));
    trn_session *ss = NULL;
    CHECK_OK(trn_session_new(&r, NULL, &ss, NULL, NULL, NULL));
    trn_recipe_dispose(&r);
    if (!ss) return;
    trn_instances in;
    CHECK_OK(trn_session_instances(ss, &in, NULL));
    CHECK_EQ_INT(in.count, 0);
    trn_instances_dispose(&in);
    CHECK(trn_session_roles(ss) == NULL);
    double p[2] = {100, 100};
    trn_stroke s = radial(TRN_STROKE_RAISE, p, 15, 20);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    CHECK_EQ_INT(trn_session_last_edit(ss)->placements, 0);
    CHECK(trn_session_last_edit(ss)->roles_changed.changed == NULL);
    CHECK_STATUS(trn_session_instances(ss, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_session_instances(NULL, &in, NULL), TRN_ERR_INVALID_ARGUMENT);
    CHECK(trn_session_last_edit(NULL) == NULL);
    CHECK(trn_session_roles(NULL) == NULL);
    trn_session_free(ss);
}

/* A graph whose Scatter Palette node places candidates before the layers (on heights 5 lower
 * than the output's): the session keeps those candidates (the result's scatter_base), filters
 * them on the final surface from the start and after every stroke. */
static void test_graph_candidates(void)
{
    make_palette();
    static const char text[] =
        "{\"size\":[256,256],\"resolution\":[64,64],\"seed\":77,\"default_landform\":\"hills\","
        "\"landforms\":{\"hills\":{\"base_height\":0,\"height_variation\":60,\"feature_size\":"
        "120,\"octaves\":4}},\"default_biome\":\"grass\",\"biomes\":{\"grass\":{\"color\":[0.4,"
        "0.6,0.3,1]},\"rock\":{\"color\":[0.5,0.5,0.5,1]}},\"rules\":[{\"id\":\"steep\",\"biome\":"
        "\"rock\",\"priority\":1,\"slope\":[25,90]}],\"palette\":\"asset://palettes/test\","
        "\"graph\":{\"format_version\":1,\"output\":\"out\",\"nodes\":["
        "{\"id\":\"lf\",\"type\":\"landform\"},"
        "{\"id\":\"sc\",\"type\":\"scatter_palette\",\"inputs\":{\"field\":{\"node\":\"lf\"}}},"
        "{\"id\":\"off\",\"type\":\"height_offset\",\"params\":{\"offset\":5},\"inputs\":{"
        "\"field\":{\"node\":\"lf\"}}},"
        "{\"id\":\"out\",\"type\":\"terrain_output\",\"inputs\":{\"field\":{\"node\":\"off\"},"
        "\"instances\":{\"node\":\"sc\"}}}]}}";
    trn_session *ss = open_text(text, 0);
    if (!ss) return;
    const trn_generated *g = trn_session_result(ss);
    CHECK(g->scatter_base.count > 50);
    trn_instances base;
    base.count = g->scatter_base.count;
    base.items = malloc(base.count * sizeof *base.items);
    memcpy(base.items, g->scatter_base.items, base.count * sizeof *base.items);
    /* From the start: the generation's placements, at the output's heights (not the
     * candidates'). */
    trn_instances now = session_instances(ss);
    CHECK(now.count > 0);
    CHECK(hash_instances(&now) == hash_instances(&g->instances));
    CHECK(now.count && base.count && now.items[0].y != base.items[0].y);
    check_full(ss, &base);
    trn_instances_dispose(&now);
    const trn_instance *tree = first_of(&base, 0, 40.0, 256.0);
    CHECK(tree != NULL);
    double p[2] = {tree ? tree->x : 128.0, tree ? tree->z : 128.0};
    trn_stroke s = radial(TRN_STROKE_RAISE, p, 16, 30);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    check_full(ss, &base);
    s = radial(TRN_STROKE_EXCLUSION, p, 20, 1);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    CHECK(trn_session_last_edit(ss)->placements_removed > 0);
    check_full(ss, &base);
    CHECK_OK(trn_session_undo(ss, NULL, NULL));
    CHECK_OK(trn_session_undo(ss, NULL, NULL));
    check_full(ss, &base);
    now = session_instances(ss);
    CHECK(hash_instances(&now) == hash_instances(&trn_session_result(ss)->instances));
    trn_instances_dispose(&now);
    trn_instances_dispose(&base);
    trn_session_free(ss);
}

/* A refused stroke, undo with nothing to undo and redo with nothing to redo leave the
 * placements, the roles and the last edit's report as they were. */
static void test_refusals_keep_state(void)
{
    make_palette();
    trn_session *ss = open_session(0);
    if (!ss) return;
    trn_instances base = session_instances(ss);
    const trn_instance *tree = first_of(&base, 0, 40.0, 256.0);
    double p[2] = {tree ? tree->x : 128.0, tree ? tree->z : 128.0};
    trn_stroke s = radial(TRN_STROKE_RAISE, p, 12, 25);
    CHECK_OK(trn_session_apply_stroke(ss, &s, NULL, NULL));
    const trn_session_edit before = *trn_session_last_edit(ss);
    CHECK(before.placements_removed > 0);
    CHECK(before.roles_changed.changed_count > 0);
    trn_instances now = session_instances(ss);
    const size_t n = trn_field_sample_count(&trn_session_result(ss)->field);
    const uint64_t roles = XXH64(trn_session_roles(ss), n, 0);
    s = radial(TRN_STROKE_FLATTEN, p, 12, 2.0); /* flatten strength must be 0..1 */
    trn_error err;
    CHECK_STATUS(trn_session_apply_stroke(ss, &s, NULL, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_session_redo(ss, NULL, NULL), TRN_ERR_INVALID_ARGUMENT);
    const trn_session_edit *after = trn_session_last_edit(ss);
    CHECK_EQ_INT(after->placements_removed, before.placements_removed);
    CHECK_EQ_INT(after->placements_restored, before.placements_restored);
    CHECK_EQ_INT(after->placements, before.placements);
    CHECK(after->roles_changed.changed == before.roles_changed.changed);
    trn_instances again = session_instances(ss);
    CHECK(hash_instances(&again) == hash_instances(&now));
    CHECK(XXH64(trn_session_roles(ss), n, 0) == roles);
    check_full(ss, &base);
    trn_instances_dispose(&again);
    trn_instances_dispose(&now);
    trn_instances_dispose(&base);
    trn_session_free(ss);
}

int main(void)
{
    RUN(test_strokes_undo_redo);
    RUN(test_never_invents);
    RUN(test_dam_reroutes_roles);
    RUN(test_threads);
    RUN(test_graph_candidates);
    RUN(test_refusals_keep_state);
    RUN(test_without);
    return trn_test_finish();
}
