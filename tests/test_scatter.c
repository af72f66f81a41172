/* Tests: the placement contract (stable lattices across rule order, density, resolution and
 * exclusion edits, refilter and undo, spacing, threads, budgets, clusters, filters, text). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#include <xxhash.h>

#include "terrane/generate.h"
#include "terrane/recipe.h"
#include "terrane/scatter.h"
#include "terrane/water.h"
#include "test.h"

#define SIZE 128.0

static trn_scatter_rule make_rule(const char *id, double density, double candidate_spacing,
                                  double spacing)
{
    trn_scatter_rule r;
    memset(&r, 0, sizeof r);
    snprintf(r.id, sizeof r.id, "%s", id);
    r.prefab = (char *)"asset://prefabs/cube";
    r.category = TRN_CATEGORY_PROP;
    r.density = density;
    r.candidate_spacing = candidate_spacing;
    r.spacing = spacing;
    r.scale[0] = 0.5;
    r.scale[1] = 1.5;
    r.yaw[0] = 0.0;
    r.yaw[1] = 360.0;
    r.cluster_size = 16.0;
    r.cluster_strength = 0.0;
    r.collision = TRN_COLLISION_STATIC;
    return r;
}

static trn_palette make_palette(trn_scatter_rule *rules, uint32_t count)
{
    trn_palette p;
    memset(&p, 0, sizeof p);
    p.name = (char *)"test";
    p.art_density = p.grass_density = p.tree_density = p.rock_density = 1.0;
    p.rules = rules;
    p.rule_count = count;
    return p;
}

static double hills(double x, double z)
{
    return 10.0 * sin(x * 0.07) * cos(z * 0.05) + 0.2 * x;
}

/* A SIZE x SIZE terrain of cells x cells cells with heights hills(x, z). */
static void make_field(trn_field *f, uint32_t cells)
{
    CHECK_OK(trn_field_init(f, cells, cells, SIZE, SIZE, NULL));
    for (uint32_t j = 0; j <= cells; j++)
        for (uint32_t i = 0; i <= cells; i++)
            f->heights[(size_t)j * (cells + 1) + i] =
                (float)hills(i * SIZE / cells, j * SIZE / cells);
}

static trn_scatter_env make_env(const trn_field *f)
{
    trn_scatter_env env;
    memset(&env, 0, sizeof env);
    env.field = f;
    env.scatter_seed = trn_subseed(1234, "scatter");
    return env;
}

static trn_instances run(const trn_palette *p, const trn_scatter_env *env, int threads,
                         trn_scatter_report *report)
{
    trn_instances out = {NULL, 0};
    trn_scatter_options opt;
    memset(&opt, 0, sizeof opt);
    opt.threads = threads;
    CHECK_OK(trn_scatter_run(p, env, &opt, &out, report, NULL, NULL, NULL));
    return out;
}

static const trn_instance *find_rule(const trn_instances *in, uint32_t rule, size_t *count)
{
    size_t first = in->count, n = 0;
    for (size_t k = 0; k < in->count; k++)
        if (in->items[k].rule == rule) {
            if (first == in->count) first = k;
            n++;
        }
    *count = n;
    return n ? &in->items[first] : NULL;
}

static bool same_site(const trn_instance *a, const trn_instance *b)
{
    return a->cx == b->cx && a->cz == b->cz && a->x == b->x && a->z == b->z && a->yaw == b->yaw &&
           a->scale == b->scale;
}

/* Rule ra's instances in a equal rule rb's in b, field for field (heights too). */
static bool same_rule_output(const trn_instances *a, uint32_t ra, const trn_instances *b,
                             uint32_t rb)
{
    size_t na, nb;
    const trn_instance *ia = find_rule(a, ra, &na), *ib = find_rule(b, rb, &nb);
    if (na != nb) return false;
    for (size_t k = 0; k < na; k++)
        if (!same_site(&ia[k], &ib[k]) || ia[k].y != ib[k].y) return false;
    return true;
}

static bool contains_site(const trn_instances *in, uint32_t rule, const trn_instance *s)
{
    for (size_t k = 0; k < in->count; k++)
        if (in->items[k].rule == rule && same_site(&in->items[k], s)) return true;
    return false;
}

static uint64_t hash_instances(const trn_instances *in)
{
    return in->count ? (uint64_t)XXH64(in->items, in->count * sizeof *in->items, 0) : 0u;
}

static void test_reorder_and_unrelated_density(void)
{
    trn_field f;
    make_field(&f, 64);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[3] = {make_rule("grass", 0.8, 0.5, 0.0),
                                 make_rule("pine", 0.05, 1.0, 3.0),
                                 make_rule("rock", 0.02, 2.0, 4.0)};
    rules[1].cluster_strength = 0.7;
    trn_palette p = make_palette(rules, 3);
    trn_instances a = run(&p, &env, 1, NULL);
    CHECK(a.count > 1000);

    trn_scatter_rule reordered[3] = {rules[2], rules[0], rules[1]};
    trn_palette q = make_palette(reordered, 3);
    trn_instances b = run(&q, &env, 1, NULL);
    CHECK(same_rule_output(&a, 0, &b, 1));
    CHECK(same_rule_output(&a, 1, &b, 2));
    CHECK(same_rule_output(&a, 2, &b, 0));

    /* Another rule's density, spacing and cluster edits leave pine and rock alone. */
    trn_scatter_rule edited[3] = {rules[0], rules[1], rules[2]};
    edited[0].density = 0.3;
    edited[0].spacing = 1.0;
    trn_palette e = make_palette(edited, 3);
    trn_instances c = run(&e, &env, 1, NULL);
    CHECK(!same_rule_output(&a, 0, &c, 0));
    CHECK(same_rule_output(&a, 1, &c, 1));
    CHECK(same_rule_output(&a, 2, &c, 2));

    /* A renamed rule draws other sites. */
    trn_scatter_rule renamed[3] = {rules[0], rules[1], rules[2]};
    snprintf(renamed[2].id, sizeof renamed[2].id, "boulder");
    trn_palette r = make_palette(renamed, 3);
    trn_instances d = run(&r, &env, 1, NULL);
    CHECK(!same_rule_output(&a, 2, &d, 2));
    CHECK(same_rule_output(&a, 1, &d, 1));
    trn_instances_dispose(&a);
    trn_instances_dispose(&b);
    trn_instances_dispose(&c);
    trn_instances_dispose(&d);
    trn_field_dispose(&f);
}

static void test_density_only_thins(void)
{
    trn_field f;
    make_field(&f, 64);
    trn_scatter_env env = make_env(&f);
    /* Spacing and clusters both on: the hardest case for "survivors never move". */
    trn_scatter_rule rules[1] = {make_rule("shrub", 0.4, 0.75, 1.5)};
    rules[0].cluster_strength = 1.0;
    rules[0].cluster_size = 10.0;
    trn_palette p = make_palette(rules, 1);
    trn_instances hi = run(&p, &env, 1, NULL);
    rules[0].density = 0.15;
    trn_instances lo = run(&p, &env, 1, NULL);
    CHECK(lo.count > 0 && lo.count < hi.count);
    size_t missing = 0;
    for (size_t k = 0; k < lo.count; k++)
        if (!contains_site(&hi, 0, &lo.items[k])) missing++;
    CHECK_EQ_INT(missing, 0);
    /* The palette's art density scales the same way. */
    rules[0].density = 0.4;
    p.art_density = 0.375;
    trn_instances art = run(&p, &env, 1, NULL);
    CHECK(art.count == lo.count);
    CHECK(hash_instances(&art) == hash_instances(&lo));
    /* A category multiplier only reaches its category. */
    p.art_density = 1.0;
    p.tree_density = 0.1;
    trn_instances prop = run(&p, &env, 1, NULL);
    CHECK(hash_instances(&prop) == hash_instances(&hi));
    rules[0].category = TRN_CATEGORY_TREE;
    trn_instances tree = run(&p, &env, 1, NULL);
    CHECK(tree.count < hi.count);
    /* Zero density disables the rule. */
    rules[0].density = 0.0;
    trn_scatter_report rep = {0};
    trn_instances none = run(&p, &env, 1, &rep);
    CHECK_EQ_INT(none.count, 0);
    CHECK_EQ_INT(rep.rules[0].candidates, 0);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&hi);
    trn_instances_dispose(&lo);
    trn_instances_dispose(&art);
    trn_instances_dispose(&prop);
    trn_instances_dispose(&tree);
    trn_field_dispose(&f);
}

static void test_resolution_keeps_candidates(void)
{
    trn_field coarse, fine;
    make_field(&coarse, 32);
    make_field(&fine, 256);
    trn_scatter_env ec = make_env(&coarse), ef = make_env(&fine);
    trn_scatter_rule rules[2] = {make_rule("tree", 0.05, 1.0, 3.0),
                                 make_rule("grass", 1.0, 0.5, 0)};
    rules[0].cluster_strength = 0.5;
    trn_palette p = make_palette(rules, 2);
    trn_instances a = run(&p, &ec, 1, NULL), b = run(&p, &ef, 1, NULL);
    CHECK(a.count == b.count && a.count > 100);
    size_t same = 0, height_differs = 0;
    for (size_t k = 0; k < a.count && k < b.count; k++) {
        same += same_site(&a.items[k], &b.items[k]) && a.items[k].rule == b.items[k].rule;
        height_differs += a.items[k].y != b.items[k].y;
        /* Each height is the terrain triangles' at the site. */
        if (k % 97 == 0) {
            CHECK(a.items[k].y == trn_field_height_at(&coarse, a.items[k].x, a.items[k].z));
            CHECK(b.items[k].y == trn_field_height_at(&fine, b.items[k].x, b.items[k].z));
        }
    }
    CHECK_EQ_INT(same, a.count);
    CHECK(height_differs > a.count / 2);
    trn_instances_dispose(&a);
    trn_instances_dispose(&b);
    trn_field_dispose(&coarse);
    trn_field_dispose(&fine);
}

/* Nearest sample of (x, z) on a 64-cell SIZE grid. */
static size_t nearest(const trn_field *f, double x, double z)
{
    const double d = SIZE / f->cells_x;
    size_t i = (size_t)floor(x / d + 0.5), j = (size_t)floor(z / d + 0.5);
    if (i > f->cells_x) i = f->cells_x;
    if (j > f->cells_z) j = f->cells_z;
    return j * (f->cells_x + 1u) + i;
}

static void test_exclusion_and_undo(void)
{
    trn_field f;
    make_field(&f, 64);
    const size_t samples = 65u * 65u;
    uint8_t *excl = calloc(samples, 1);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[2] = {make_rule("pine", 0.1, 1.0, 3.0), make_rule("grass", 1.0, 0.5, 0)};
    trn_palette p = make_palette(rules, 2);
    env.exclusion = excl;
    trn_instances base = run(&p, &env, 2, NULL);

    /* Exclude a disc of radius 10 around (60, 60): 127 does not block, 128 does. */
    for (uint32_t j = 0; j <= 64; j++)
        for (uint32_t i = 0; i <= 64; i++) {
            const double d = hypot(i * 2.0 - 60.0, j * 2.0 - 60.0);
            excl[j * 65u + i] = d <= 10.0 ? 128 : d <= 14.0 ? 127 : 0;
        }
    trn_scatter_report rep = {0};
    trn_instances cut = run(&p, &env, 2, &rep);
    size_t inside = 0, grass_inside = 0;
    for (size_t k = 0; k < base.count; k++) {
        const bool blocked = excl[nearest(&f, base.items[k].x, base.items[k].z)] >= 128;
        inside += blocked;
        grass_inside += blocked && base.items[k].rule == 1;
    }
    CHECK(inside > grass_inside && grass_inside > 10);
    CHECK_EQ_INT(cut.count, base.count - inside);
    /* Filters count before spacing: grass (no spacing) counts exactly its lost sites. */
    CHECK_EQ_INT(rep.rules[1].filtered[TRN_SCATTER_FILTER_EXCLUSION], grass_inside);
    CHECK(rep.rules[0].filtered[TRN_SCATTER_FILTER_EXCLUSION] >= inside - grass_inside);
    size_t fresh = 0;
    for (size_t k = 0; k < cut.count; k++)
        fresh += !contains_site(&base, cut.items[k].rule, &cut.items[k]);
    CHECK_EQ_INT(fresh, 0);

    /* Refiltering the base against the edit gives the same; undo gives back the base. */
    trn_instances re = {NULL, 0}, undo = {NULL, 0};
    trn_scatter_report rrep = {0};
    CHECK_OK(trn_scatter_refilter(&p, &base, &env, &re, &rrep, NULL));
    CHECK(re.count == cut.count && hash_instances(&re) == hash_instances(&cut));
    CHECK_EQ_INT(rrep.rule_count, 2);
    CHECK_EQ_INT(rrep.rules[0].selected + rrep.rules[1].selected, base.count);
    CHECK_EQ_INT(rrep.rules[0].filtered[TRN_SCATTER_FILTER_EXCLUSION] +
                     rrep.rules[1].filtered[TRN_SCATTER_FILTER_EXCLUSION],
                 inside);
    CHECK_EQ_INT(rrep.rules[0].placed + rrep.rules[1].placed, cut.count);
    CHECK_EQ_INT(rrep.placed, cut.count);
    trn_scatter_report_dispose(&rrep);
    memset(excl, 0, samples);
    CHECK_OK(trn_scatter_refilter(&p, &base, &env, &undo, NULL, NULL));
    CHECK(undo.count == base.count && hash_instances(&undo) == hash_instances(&base));

    /* A sculpt: refilter snaps heights, keeps x/z/yaw/scale and identities. */
    trn_field g;
    make_field(&g, 64);
    for (size_t k = 0; k < samples; k++)
        g.heights[k] += 5.0f;
    trn_scatter_env moved = make_env(&g);
    trn_instances snapped = {NULL, 0};
    CHECK_OK(trn_scatter_refilter(&p, &base, &moved, &snapped, NULL, NULL));
    CHECK_EQ_INT(snapped.count, base.count);
    size_t ok = 0;
    for (size_t k = 0; k < snapped.count; k++)
        ok += same_site(&snapped.items[k], &base.items[k]) &&
              snapped.items[k].y == trn_field_height_at(&g, base.items[k].x, base.items[k].z) &&
              snapped.items[k].y != base.items[k].y;
    CHECK_EQ_INT(ok, base.count);
    /* Refilter never invents: a base missing a site keeps missing it. */
    trn_instances half = {base.items, base.count / 2}, re_half = {NULL, 0};
    CHECK_OK(trn_scatter_refilter(&p, &half, &env, &re_half, NULL, NULL));
    CHECK_EQ_INT(re_half.count, half.count);

    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&base);
    trn_instances_dispose(&cut);
    trn_instances_dispose(&re);
    trn_instances_dispose(&undo);
    trn_instances_dispose(&snapped);
    trn_instances_dispose(&re_half);
    free(excl);
    trn_field_dispose(&f);
    trn_field_dispose(&g);
}

static void test_window_refilter(void)
{
    trn_field f;
    make_field(&f, 64);
    const size_t samples = 65u * 65u;
    uint8_t *wet = calloc(samples, 1);
    trn_scatter_env env = make_env(&f);
    env.wet = wet;
    trn_scatter_rule rules[2] = {make_rule("pine", 0.1, 1.0, 3.0), make_rule("grass", 1.0, 0.5, 0)};
    rules[0].slope.has = true;
    rules[0].slope.lo = 0.0;
    rules[0].slope.hi = 25.0;
    trn_palette p = make_palette(rules, 2);
    trn_instances base = run(&p, &env, 1, NULL);
    trn_scatter_view view;
    CHECK_OK(trn_scatter_view_init(&base, &view, NULL));

    float *saved = malloc(65u * 65u * sizeof *saved);
    memcpy(saved, f.heights, 65u * 65u * sizeof *saved);
    /* A stroke: samples 20..24 x 30..34 raised steeply and marked wet at 22, 32. */
    for (uint32_t j = 30; j <= 34; j++)
        for (uint32_t i = 20; i <= 24; i++)
            f.heights[j * 65u + i] += 8.0f;
    wet[32u * 65u + 22u] = 1;
    size_t changed = 0;
    CHECK_OK(trn_scatter_refilter_window(&p, &base, &env, 40.0, 60.0, 48.0, 68.0, &view, &changed,
                                         NULL));
    CHECK(changed > 0);
    trn_instances win = {NULL, 0}, full = {NULL, 0};
    CHECK_OK(trn_scatter_view_collect(&base, &view, &win, NULL));
    CHECK_OK(trn_scatter_refilter(&p, &base, &env, &full, NULL, NULL));
    CHECK(win.count == full.count && win.count < base.count);
    CHECK(hash_instances(&win) == hash_instances(&full));
    size_t wet_blocked = 0;
    for (size_t k = 0; k < view.count; k++)
        wet_blocked += view.blocked[k] == 1 + TRN_SCATTER_FILTER_WATER;
    CHECK(wet_blocked > 0);
    /* Undo through the window: the base again. */
    memcpy(f.heights, saved, 65u * 65u * sizeof *saved);
    free(saved);
    wet[32u * 65u + 22u] = 0;
    CHECK_OK(trn_scatter_refilter_window(&p, &base, &env, 40.0, 60.0, 48.0, 68.0, &view, &changed,
                                         NULL));
    trn_instances back = {NULL, 0};
    CHECK_OK(trn_scatter_view_collect(&base, &view, &back, NULL));
    CHECK(back.count == base.count && hash_instances(&back) == hash_instances(&base));
    /* An empty rectangle changes nothing. */
    CHECK_OK(
        trn_scatter_refilter_window(&p, &base, &env, 10.0, 10.0, 5.0, 5.0, &view, &changed, NULL));
    CHECK_EQ_INT(changed, 0);
    trn_scatter_view other = {NULL, NULL, 3};
    CHECK_STATUS(trn_scatter_refilter_window(&p, &base, &env, 0, 0, 1, 1, &other, NULL, NULL),
                 TRN_ERR_MISMATCH);
    trn_scatter_view_dispose(&view);
    trn_instances_dispose(&base);
    trn_instances_dispose(&win);
    trn_instances_dispose(&full);
    trn_instances_dispose(&back);
    free(wet);
    trn_field_dispose(&f);
}

static void test_spacing_holds(void)
{
    trn_field f;
    make_field(&f, 64);
    trn_scatter_env env = make_env(&f);
    /* Dense request, wide spacing: most selected sites conflict. */
    trn_scatter_rule rules[2] = {make_rule("oak", 0.9, 1.0, 4.0), make_rule("birch", 0.2, 0, 2.5)};
    rules[0].cluster_strength = 0.8;
    trn_palette p = make_palette(rules, 2);
    trn_scatter_report rep = {0};
    trn_instances a = run(&p, &env, 2, &rep);
    CHECK(rep.rules[0].spaced_out > rep.rules[0].placed);
    for (int r = 0; r < 2; r++) {
        uint64_t sum = rep.rules[r].spaced_out + rep.rules[r].placed + rep.rules[r].truncated;
        for (int k = 0; k < TRN_SCATTER_FILTER_COUNT; k++)
            sum += rep.rules[r].filtered[k];
        CHECK_EQ_INT(sum, rep.rules[r].selected);
    }
    CHECK_EQ_INT(rep.placed, a.count);
    CHECK(rep.rules[1].spaced_out > 0);
    size_t close = 0, cross = 0;
    for (size_t m = 0; m < a.count; m++)
        for (size_t n = m + 1; n < a.count; n++) {
            const trn_instance *s = &a.items[m], *t = &a.items[n];
            const double d = hypot(s->x - t->x, s->z - t->z);
            const double spacing = rules[s->rule].spacing;
            if (s->rule == t->rule && d < spacing) close++;
            if (s->rule != t->rule && d < 1.0) cross++; /* rules do not compete */
        }
    CHECK_EQ_INT(close, 0);
    CHECK(cross > 0);
    /* Saturated: every selected site that was spaced out has a placed or filtered higher
     * neighbour, so placed sites are packed (the Matern type II density bound). */
    const double area = SIZE * SIZE;
    CHECK((double)rep.rules[0].placed > 0.3 * area / (3.141592653589793 * 16.0));
    /* Default candidate spacing: half the spacing (2.5 / 2), sites on that lattice. */
    CHECK(rep.rules[1].candidates > 102 * 102 && rep.rules[1].candidates < 103 * 103);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&a);
    trn_field_dispose(&f);
}

static void test_threads_and_golden(void)
{
    trn_field f;
    make_field(&f, 100);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[3] = {make_rule("grass", 2.0, 0.5, 0.0),
                                 make_rule("pine", 0.05, 1.0, 3.0),
                                 make_rule("rock", 0.02, 2.0, 4.0)};
    rules[1].cluster_strength = 0.7;
    rules[2].slope.has = true;
    rules[2].slope.hi = 20.0;
    trn_palette p = make_palette(rules, 3);
    trn_instances a = run(&p, &env, 1, NULL), b = run(&p, &env, 2, NULL),
                  c = run(&p, &env, 4, NULL);
    const uint64_t h = hash_instances(&a);
    CHECK(a.count == b.count && a.count == c.count);
    CHECK(h == hash_instances(&b) && h == hash_instances(&c));
    /* Sorted by rule, cz, cx. */
    size_t unsorted = 0;
    for (size_t k = 1; k < a.count; k++) {
        const trn_instance *s = &a.items[k - 1], *t = &a.items[k];
        const bool before =
            s->rule < t->rule ||
            (s->rule == t->rule && (s->cz < t->cz || (s->cz == t->cz && s->cx < t->cx)));
        unsorted += !before;
    }
    CHECK_EQ_INT(unsorted, 0);
    /* Golden: the lattice hash, streams, cluster field and filters pinned bit for bit. */
    CHECK_EQ_INT(a.count, 33232);
    CHECK(h == 0xea5dd6fa8787b1b9ull);
    /* Another seed, other sites. */
    env.scatter_seed = trn_subseed(1235, "scatter");
    trn_instances d = run(&p, &env, 1, NULL);
    CHECK(hash_instances(&d) != h);
    trn_instances_dispose(&a);
    trn_instances_dispose(&b);
    trn_instances_dispose(&c);
    trn_instances_dispose(&d);
    trn_field_dispose(&f);
}

static void test_budgets_and_ceiling(void)
{
    trn_field f;
    make_field(&f, 64);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[2] = {make_rule("grass", 1.0, 0.5, 0.0),
                                 make_rule("pine", 0.04, 1.0, 3.0)};
    trn_palette p = make_palette(rules, 2);
    uint64_t cand = 0, checks = 0;
    CHECK_OK(trn_scatter_estimate(&p, &env, &cand, &checks, NULL));
    CHECK_EQ_INT(cand, 256 * 256 + 128 * 128);
    /* pine: ceil(16384 x 0.04) = 656 sites x (7^2 - 1) neighbours. */
    CHECK_EQ_INT(checks, 656 * 48);

    trn_scatter_options opt;
    memset(&opt, 0, sizeof opt);
    trn_instances out = {NULL, 0};
    trn_error err;
    trn_scatter_report rep = {0};
    opt.max_candidates = cand;
    opt.max_spacing_checks = checks;
    CHECK_OK(trn_scatter_run(&p, &env, &opt, &out, &rep, NULL, NULL, &err));
    CHECK_EQ_INT(rep.candidates_estimate, cand);
    CHECK_EQ_INT(rep.spacing_checks_estimate, checks);
    CHECK_EQ_INT(rep.rules[0].candidates, 256 * 256);
    const size_t total = out.count;
    trn_instances full = out;
    out.items = NULL;
    out.count = 0;

    opt.max_candidates = cand - 1;
    CHECK_STATUS(trn_scatter_run(&p, &env, &opt, &out, &rep, NULL, NULL, &err), TRN_ERR_LIMIT);
    CHECK_CONTAINS(err.message, "placement \"grass\"");
    CHECK_CONTAINS(err.message, "candidate_spacing 0.5");
    CHECK_CONTAINS(err.message, "max_candidates");
    CHECK(out.items == NULL && out.count == 0);
    CHECK_EQ_INT(rep.candidates_estimate, cand);
    opt.max_candidates = cand;
    opt.max_spacing_checks = checks - 1;
    CHECK_STATUS(trn_scatter_run(&p, &env, &opt, &out, NULL, NULL, NULL, &err), TRN_ERR_LIMIT);
    CHECK_CONTAINS(err.message, "placement \"pine\": spacing 3");
    CHECK_CONTAINS(err.message, "max_spacing_checks");

    /* Ceiling: exactly the count passes untouched, one less drops the last instance. */
    opt.max_spacing_checks = 0;
    opt.max_candidates = 0;
    opt.max_placements = total;
    CHECK_OK(trn_scatter_run(&p, &env, &opt, &out, &rep, NULL, NULL, &err));
    CHECK_EQ_INT(out.count, total);
    CHECK_EQ_INT(rep.truncated, 0);
    trn_instances_dispose(&out);
    opt.max_placements = total - 1;
    CHECK_OK(trn_scatter_run(&p, &env, &opt, &out, &rep, NULL, NULL, &err));
    CHECK_EQ_INT(out.count, total - 1);
    CHECK_EQ_INT(rep.truncated, 1);
    CHECK_EQ_INT(rep.rules[1].truncated, 1);
    CHECK_EQ_INT(rep.rules[1].placed + 1 + rep.rules[1].spaced_out, rep.rules[1].selected);
    CHECK(memcmp(out.items, full.items, out.count * sizeof *out.items) == 0);
    trn_instances_dispose(&out);
    trn_instances_dispose(&full);
    trn_scatter_report_dispose(&rep);
    trn_field_dispose(&f);
}

/* Count per cluster-sized tile; returns the variance over mean of the counts. */
static double dispersion(const trn_instances *in, double tile, double size, double *mean_out)
{
    const int n = (int)(size / tile);
    double *counts = calloc((size_t)(n * n), sizeof *counts);
    for (size_t k = 0; k < in->count; k++) {
        int i = (int)(in->items[k].x / tile), j = (int)(in->items[k].z / tile);
        if (i >= n) i = n - 1;
        if (j >= n) j = n - 1;
        counts[j * n + i] += 1.0;
    }
    double mean = 0, var = 0;
    for (int k = 0; k < n * n; k++)
        mean += counts[k];
    mean /= n * n;
    for (int k = 0; k < n * n; k++)
        var += (counts[k] - mean) * (counts[k] - mean);
    var /= n * n;
    free(counts);
    *mean_out = mean;
    return var / mean;
}

static void test_cluster_statistics(void)
{
    trn_field f;
    CHECK_OK(trn_field_init(&f, 16, 16, 1024.0, 1024.0, NULL));
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("fern", 0.05, 1.0, 0.0)};
    trn_palette p = make_palette(rules, 1);
    const double expected = 0.05 * 1024.0 * 1024.0, sigma = sqrt(expected);
    trn_instances flat = run(&p, &env, 2, NULL);
    rules[0].cluster_strength = 1.0;
    rules[0].cluster_size = 16.0;
    trn_instances clustered = run(&p, &env, 2, NULL);
    /* Both keep the requested density (strength 0 within 4 sigma of binomial, clusters
     * within 6%, about 4 standard deviations of the patch field's mean over 4096 lattice values).
     */
    CHECK(fabs((double)flat.count - expected) < 4.0 * sigma);
    CHECK(fabs((double)clustered.count - expected) < 0.06 * expected);
    double m0, m1;
    const double d0 = dispersion(&flat, 16.0, 1024.0, &m0);
    const double d1 = dispersion(&clustered, 16.0, 1024.0, &m1);
    CHECK(d0 > 0.8 && d0 < 1.25); /* Poisson-like: variance = mean */
    CHECK(d1 > 2.5);              /* patches: measured 3.3 */
    /* Half strength lies between. */
    rules[0].cluster_strength = 0.5;
    trn_instances half = run(&p, &env, 2, NULL);
    double mh;
    const double dh = dispersion(&half, 16.0, 1024.0, &mh);
    CHECK(dh > d0 && dh < d1);
    trn_instances_dispose(&flat);
    trn_instances_dispose(&clustered);
    trn_instances_dispose(&half);
    trn_field_dispose(&f);
}

static void test_filters_exact(void)
{
    trn_field f;
    make_field(&f, 64);
    const size_t samples = 65u * 65u;
    float *slope = malloc(samples * sizeof *slope), *moist = malloc(samples * sizeof *moist);
    float *wdist = malloc(samples * sizeof *wdist);
    uint8_t *biome = malloc(samples), *wet = calloc(samples, 1);
    for (uint32_t j = 0; j <= 64; j++)
        for (uint32_t i = 0; i <= 64; i++) {
            const size_t k = j * 65u + i;
            slope[k] = (float)(i * 90.0 / 64.0);
            moist[k] = (float)(j / 64.0);
            wdist[k] = (float)((i + j) * 1.0);
            biome[k] = (uint8_t)(i < 20 ? 0 : i < 40 ? 1 : j < 10 ? TRN_LABEL_NONE : 2);
            wet[k] = i + j < 8;
        }
    const char *names[3] = {"meadow", "forest", "alpine"};
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("x", 1.0, 0.5, 0.0)};
    trn_palette p = make_palette(rules, 1);
    trn_instances all = run(&p, &env, 1, NULL);

    char *biome_list[2] = {(char *)"forest", (char *)"alpine"};
    rules[0].biomes = biome_list;
    rules[0].biome_count = 2;
    rules[0].slope = (trn_scatter_band){true, 30.0, 80.0};
    rules[0].moisture = (trn_scatter_band){true, 0.25, 0.75};
    rules[0].water_distance = (trn_scatter_band){true, 10.0, 100.0};
    env.biome = biome;
    env.biome_names = names;
    env.biome_name_count = 3;
    env.slope = slope;
    env.moisture = moist;
    env.water_distance = wdist;
    env.wet = wet;
    trn_scatter_report rep = {0};
    trn_instances kept = run(&p, &env, 1, &rep);
    uint64_t reasons[TRN_SCATTER_FILTER_COUNT] = {0};
    size_t expect = 0, mismatch = 0;
    for (size_t n = 0; n < all.count; n++) {
        const size_t k = nearest(&f, all.items[n].x, all.items[n].z);
        int why = -1;
        if (wet[k])
            why = TRN_SCATTER_FILTER_WATER;
        else if (biome[k] != 1 && biome[k] != 2)
            why = TRN_SCATTER_FILTER_BIOME;
        else if (!(slope[k] >= 30.0 && slope[k] <= 80.0))
            why = TRN_SCATTER_FILTER_SLOPE;
        else if (!(moist[k] >= 0.25 && moist[k] <= 0.75))
            why = TRN_SCATTER_FILTER_MOISTURE;
        else if (!(wdist[k] >= 10.0 && wdist[k] <= 100.0))
            why = TRN_SCATTER_FILTER_WATER_DISTANCE;
        if (why >= 0) {
            reasons[why]++;
            continue;
        }
        if (expect >= kept.count || !same_site(&kept.items[expect], &all.items[n])) mismatch++;
        expect++;
    }
    CHECK_EQ_INT(expect, kept.count);
    CHECK_EQ_INT(mismatch, 0);
    for (int r = 0; r < TRN_SCATTER_FILTER_COUNT; r++)
        CHECK_EQ_INT(rep.rules[0].filtered[r], reasons[r]);
    for (int r = TRN_SCATTER_FILTER_WATER; r < TRN_SCATTER_FILTER_COUNT; r++)
        if (r != TRN_SCATTER_FILTER_EXCLUSION) CHECK(reasons[r] > 0);
    CHECK_EQ_INT(rep.rules[0].selected, all.count);
    CHECK_EQ_INT(rep.rules[0].placed, kept.count);

    /* Slope from the heights when no slope layer is given: Horn's slope at the nearest sample. */
    env.slope = NULL;
    rules[0].biome_count = 0;
    rules[0].moisture.has = false;
    rules[0].water_distance.has = false;
    env.wet = NULL;
    rules[0].slope = (trn_scatter_band){true, 0.0, 12.0};
    trn_instances gentle = run(&p, &env, 1, NULL);
    size_t want = 0;
    for (size_t n = 0; n < all.count; n++) {
        const double d = SIZE / 64.0;
        uint32_t i = (uint32_t)floor(all.items[n].x / d + 0.5),
                 j = (uint32_t)floor(all.items[n].z / d + 0.5);
        if (i > 64) i = 64;
        if (j > 64) j = 64;
        want += trn_field_slope_at(&f, i, j) <= 12.0;
    }
    CHECK(want > 0 && want < all.count);
    CHECK_EQ_INT(gentle.count, want);
    /* An unknown biome name matches nothing; label 255 is never a biome. */
    char *unknown[1] = {(char *)"tundra"};
    rules[0].slope.has = false;
    rules[0].biomes = unknown;
    rules[0].biome_count = 1;
    trn_instances none = run(&p, &env, 1, NULL);
    CHECK_EQ_INT(none.count, 0);
    /* Without a water distance layer nothing is wet: every distance is infinite. */
    rules[0].biome_count = 0;
    rules[0].water_distance = (trn_scatter_band){true, 0.0, 1.0e9};
    env.water_distance = NULL;
    trn_instances dry = run(&p, &env, 1, &rep);
    CHECK_EQ_INT(dry.count, 0);
    CHECK_EQ_INT(rep.rules[0].filtered[TRN_SCATTER_FILTER_WATER_DISTANCE], all.count);
    rules[0].water_distance.hi = INFINITY;
    trn_instances open = run(&p, &env, 1, NULL);
    CHECK_EQ_INT(open.count, all.count);
    rules[0].water_distance.has = false;
    trn_instances_dispose(&dry);
    trn_instances_dispose(&open);
    CHECK(strcmp(trn_scatter_filter_name(TRN_SCATTER_FILTER_HOLE), "hole") == 0);
    CHECK(strcmp(trn_scatter_filter_name(TRN_SCATTER_FILTER_WATER_DISTANCE), "water_distance") ==
          0);
    CHECK(strcmp(trn_scatter_filter_name(TRN_SCATTER_FILTER_EXCLUSION), "exclusion") == 0);
    CHECK(strcmp(trn_scatter_filter_name(TRN_SCATTER_FILTER_COUNT), "unknown") == 0);
    /* Holes block. */
    rules[0].biome_count = 0;
    for (size_t k = 0; k < samples; k++)
        f.heights[k] = NAN;
    trn_instances holes = run(&p, &env, 1, &rep);
    CHECK_EQ_INT(holes.count, 0);
    CHECK_EQ_INT(rep.rules[0].filtered[TRN_SCATTER_FILTER_HOLE], all.count);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&all);
    trn_instances_dispose(&kept);
    trn_instances_dispose(&gentle);
    trn_instances_dispose(&none);
    trn_instances_dispose(&holes);
    free(slope);
    free(moist);
    free(wdist);
    free(biome);
    free(wet);
    trn_field_dispose(&f);
}

static void test_lattice_extent(void)
{
    /* 10.3 units at step 1: 11 columns, the last partial; every site inside the extent. */
    trn_field f;
    CHECK_OK(trn_field_init(&f, 4, 4, 10.3, 10.3, NULL));
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("t", 1.0, 1.0, 0.0)};
    trn_palette p = make_palette(rules, 1);
    trn_scatter_report rep = {0};
    trn_instances a = run(&p, &env, 1, &rep);
    uint64_t cand;
    CHECK_OK(trn_scatter_estimate(&p, &env, &cand, NULL, NULL));
    CHECK_EQ_INT(cand, 121);
    /* Density x step^2 = 1 selects every candidate. */
    CHECK_EQ_INT(a.count, rep.rules[0].candidates);
    size_t outside = 0, last = 0;
    for (size_t k = 0; k < a.count; k++) {
        outside +=
            a.items[k].x > 10.3 || a.items[k].z > 10.3 || a.items[k].x < 0 || a.items[k].z < 0;
        last += a.items[k].cx == 10 || a.items[k].cz == 10;
        CHECK(a.items[k].scale >= 0.5 && a.items[k].scale < 1.5);
        CHECK(a.items[k].yaw >= 0.0 && a.items[k].yaw < 360.0);
        CHECK(a.items[k].x >= (double)a.items[k].cx && a.items[k].x < (double)a.items[k].cx + 1.0);
    }
    CHECK_EQ_INT(outside, 0);
    /* The partial column and row hold the candidates beyond the 10 x 10 whole squares. */
    CHECK(last > 0 && last < 21);
    CHECK_EQ_INT(rep.rules[0].candidates, 100 + last);
    trn_scatter_report_dispose(&rep);
    trn_instances_dispose(&a);
    trn_field_dispose(&f);
}

static void test_argument_errors(void)
{
    trn_field f;
    make_field(&f, 16);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("grass", 4.0, 0.5, 0.0)};
    trn_palette p = make_palette(rules, 1);
    trn_instances out = {NULL, 0};
    trn_error err;
    /* Exactly one candidate per lattice square passes; above it is refused. */
    CHECK_OK(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err));
    trn_instances_dispose(&out);
    p.grass_density = 2.0;
    rules[0].category = TRN_CATEGORY_GRASS;
    CHECK_STATUS(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "placement \"grass\": density 8");
    CHECK_CONTAINS(err.message, "reduce density or candidate_spacing");
    p.grass_density = 1.0;
    char *b[1] = {(char *)"forest"};
    rules[0].biomes = b;
    rules[0].biome_count = 1;
    CHECK_STATUS(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "no biome labels");
    rules[0].biome_count = 0;
    rules[0].moisture = (trn_scatter_band){true, 0.0, 0.5};
    CHECK_STATUS(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "no moisture layer");
    rules[0].moisture.has = false;
    rules[0].cluster_strength = 1.5;
    CHECK_STATUS(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "cluster.strength");
    rules[0].cluster_strength = 0.0;
    rules[0].spacing = -1.0;
    CHECK_STATUS(trn_scatter_run(&p, &env, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "spacing");
    rules[0].spacing = 0.0;
    trn_scatter_env bare = env;
    bare.field = NULL;
    CHECK_STATUS(trn_scatter_run(&p, &bare, NULL, &out, NULL, NULL, NULL, &err),
                 TRN_ERR_INVALID_ARGUMENT);
    trn_instance stray = {5, 0, 0, 1, 1, 1, 0, 1};
    trn_instances bad = {&stray, 1};
    CHECK_STATUS(trn_scatter_refilter(&p, &bad, &env, &out, NULL, &err), TRN_ERR_MISMATCH);
    CHECK(out.items == NULL);
    trn_field_dispose(&f);
}

static int cancel_at_half(double done, const char *stage, void *user)
{
    (void)stage;
    int *calls = user;
    (*calls)++;
    return done >= 0.5 ? TRN_CANCEL : TRN_CONTINUE;
}

static int record_progress(double done, const char *stage, void *user)
{
    double *last = user;
    if (strcmp(stage, "scatter") != 0 || done < last[0]) last[1] += 1.0; /* wrong or backwards */
    last[0] = done;
    return TRN_CONTINUE;
}

static void test_cancel(void)
{
    trn_field f;
    make_field(&f, 16);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("grass", 1.0, 0.25, 0.0)};
    trn_palette p = make_palette(rules, 1);
    trn_instances out = {NULL, 0};
    trn_scatter_options opt = {1, 0, 0, 0};
    int calls = 0;
    CHECK_STATUS(trn_scatter_run(&p, &env, &opt, &out, NULL, cancel_at_half, &calls, NULL),
                 TRN_ERR_CANCELLED);
    CHECK(calls >= 2);
    CHECK(out.items == NULL && out.count == 0);
    double seen[2] = {0.0, 0.0};
    CHECK_OK(trn_scatter_run(&p, &env, &opt, &out, NULL, record_progress, seen, NULL));
    CHECK(seen[0] == 1.0 && seen[1] == 0.0);
    CHECK(out.count > 0);
    trn_instances_dispose(&out);
    trn_field_dispose(&f);
}

static void test_text_output(void)
{
    trn_field f;
    make_field(&f, 16);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[2] = {make_rule("pine_1", 0.05, 1.0, 0.0),
                                 make_rule("grass-a", 0.05, 2.0, 0.0)};
    rules[1].prefab = NULL;
    rules[1].model = (char *)"asset://models/blade,\"v2\"";
    rules[1].collision = TRN_COLLISION_NONE;
    trn_palette p = make_palette(rules, 2);
    trn_instances a = run(&p, &env, 1, NULL);
    CHECK(a.count > 3);
    char *json = NULL, *csv = NULL;
    size_t jn = 0, cn = 0;
    CHECK_OK(trn_instances_write_json(&p, &a, &json, &jn, NULL));
    CHECK_OK(trn_instances_write_csv(&p, &a, &csv, &cn, NULL));
    CHECK(jn == strlen(json) && cn == strlen(csv));
    json_error_t jerr;
    json_t *root = json_loads(json, 0, &jerr);
    CHECK(root != NULL);
    json_t *list = json_object_get(root, "instances");
    CHECK(json_array_size(list) == a.count);
    size_t exact = 0;
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *o = json_array_get(list, k);
        const trn_instance *it = &a.items[k];
        char id[128];
        snprintf(id, sizeof id, "%s/%lld_%lld", rules[it->rule].id, (long long)it->cx,
                 (long long)it->cz);
        exact += strcmp(json_string_value(json_object_get(o, "id")), id) == 0 &&
                 json_number_value(json_object_get(o, "x")) == it->x &&
                 json_number_value(json_object_get(o, "y")) == it->y &&
                 json_number_value(json_object_get(o, "z")) == it->z &&
                 json_number_value(json_object_get(o, "yaw")) == it->yaw &&
                 json_number_value(json_object_get(o, "scale")) == it->scale;
        if (it->rule == 1) {
            CHECK(strcmp(json_string_value(json_object_get(o, "model")), rules[1].model) == 0);
            CHECK(json_object_get(o, "prefab") == NULL);
            CHECK(strcmp(json_string_value(json_object_get(o, "collision")), "none") == 0);
        } else {
            CHECK(strcmp(json_string_value(json_object_get(o, "prefab")), "asset://prefabs/cube") ==
                  0);
            CHECK(strcmp(json_string_value(json_object_get(o, "collision")), "static") == 0);
        }
    }
    CHECK_EQ_INT(exact, a.count);
    json_decref(root);
    static const char header[] = "id,rule,x,y,z,yaw,scale,model,prefab,collision\n";
    CHECK(strncmp(csv, header, strlen(header)) == 0);
    CHECK_CONTAINS(csv, ",\"asset://models/blade,\"\"v2\"\"\",,none\n");
    CHECK_CONTAINS(csv, ",asset://prefabs/cube,static\n");
    size_t lines = 0;
    for (const char *c = csv; *c; c++)
        lines += *c == '\n';
    CHECK_EQ_INT(lines, a.count + 1);
    free(json);
    free(csv);
    /* Empty output, a stray rule index, a NaN. */
    trn_instances none = {NULL, 0};
    CHECK_OK(trn_instances_write_json(&p, &none, &json, &jn, NULL));
    CHECK(strcmp(json, "{\"instances\": []}\n") == 0);
    free(json);
    a.items[0].rule = 2;
    CHECK_STATUS(trn_instances_write_csv(&p, &a, &csv, &cn, NULL), TRN_ERR_MISMATCH);
    a.items[0].rule = 0;
    a.items[0].y = NAN;
    trn_error err;
    CHECK_STATUS(trn_instances_write_json(&p, &a, &json, &jn, &err), TRN_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.message, "pine_1/");
    trn_instances_dispose(&a);
    trn_field_dispose(&f);
}

/* More instances than a piece of text holds (4096): written on several threads and joined,
 * every instance in its place, the bytes those of one thread. */
static void test_text_pieces(void)
{
    trn_field f;
    make_field(&f, 16);
    trn_scatter_env env = make_env(&f);
    trn_scatter_rule rules[1] = {make_rule("pine_1", 0.05, 1.0, 0.0)};
    trn_palette p = make_palette(rules, 1);
    trn_instances a = run(&p, &env, 1, NULL);
    CHECK(a.count > 0);
    enum { BIG = 3 * 4096 + 5 };
    trn_instances big = {calloc(BIG, sizeof(trn_instance)), BIG};
    CHECK(big.items != NULL);
    if (!big.items || !a.count) goto done;
    for (size_t k = 0; k < BIG; k++) {
        big.items[k] = a.items[k % a.count];
        big.items[k].cx = (int64_t)k; /* each instance's id names its place */
        big.items[k].x += 0.001 * (double)k;
    }
    char *text[2][2] = {{NULL, NULL}, {NULL, NULL}};
    size_t len[2][2] = {{0, 0}, {0, 0}};
#ifdef _OPENMP
    const int was = omp_get_max_threads();
#endif
    for (int t = 0; t < 2; t++) {
#ifdef _OPENMP
        omp_set_num_threads(t ? 3 : 1);
#endif
        CHECK_OK(trn_instances_write_json(&p, &big, &text[t][0], &len[t][0], NULL));
        CHECK_OK(trn_instances_write_csv(&p, &big, &text[t][1], &len[t][1], NULL));
    }
#ifdef _OPENMP
    omp_set_num_threads(was);
#endif
    for (int k = 0; k < 2; k++)
        CHECK(text[0][k] && text[1][k] && len[0][k] == len[1][k] &&
              memcmp(text[0][k], text[1][k], len[0][k]) == 0);
    json_error_t jerr;
    json_t *root = text[1][0] ? json_loads(text[1][0], 0, &jerr) : NULL;
    json_t *list = json_object_get(root, "instances");
    CHECK_EQ_INT(json_array_size(list), BIG);
    size_t placed = 0;
    for (size_t k = 0; k < json_array_size(list); k++) {
        json_t *o = json_array_get(list, k);
        char id[64];
        snprintf(id, sizeof id, "pine_1/%zu_%lld", k, (long long)big.items[k].cz);
        placed += strcmp(json_string_value(json_object_get(o, "id")), id) == 0 &&
                  json_number_value(json_object_get(o, "x")) == big.items[k].x;
    }
    CHECK_EQ_INT(placed, BIG);
    json_decref(root);
    size_t lines = 0;
    for (const char *c = text[1][1]; c && *c; c++)
        lines += *c == '\n';
    CHECK_EQ_INT(lines, BIG + 1);
    for (int t = 0; t < 2; t++)
        for (int k = 0; k < 2; k++)
            free(text[t][k]);
done:
    free(big.items);
    trn_instances_dispose(&a);
    trn_field_dispose(&f);
}

/* env's layers cut to samples [i0, i1] x [j0, j1] of a world of n + 1 samples a side. */
static void cut_u8(const uint8_t *src, uint32_t n, uint32_t i0, uint32_t j0, uint32_t w,
                   uint32_t h, uint8_t *dst)
{
    for (uint32_t j = 0; j < h; j++)
        memcpy(dst + (size_t)j * w, src + (size_t)(j0 + j) * (n + 1u) + i0, w);
}

static void cut_f32(const float *src, uint32_t n, uint32_t i0, uint32_t j0, uint32_t w,
                    uint32_t h, float *dst)
{
    for (uint32_t j = 0; j < h; j++)
        memcpy(dst + (size_t)j * w, src + (size_t)(j0 + j) * (n + 1u) + i0, w * sizeof *dst);
}

/* An extent of cells cells whose size / cells is spacing bit for bit. */
static double extent_at(double spacing, uint32_t cells)
{
    double s = spacing * (double)cells;
    for (int k = 0; k < 64 && s / (double)cells != spacing; k++)
        s = s / (double)cells < spacing ? nextafter(s, HUGE_VAL) : nextafter(s, -HUGE_VAL);
    return s;
}

/* Rectangles placed on their own (the world's samples around them only) give the whole world's
 * instances in each rectangle, bit for bit and in order, for rectangles that do not divide the
 * world; a field that does not hold the samples the sites read is refused. */
static void test_run_window(void)
{
    const uint32_t n = 100;
    trn_field f;
    make_field(&f, n);
    const size_t samples = (size_t)(n + 1) * (n + 1);
    uint8_t *biome = malloc(samples), *wet = malloc(samples), *excl = malloc(samples);
    float *moist = malloc(samples * sizeof *moist);
    for (uint32_t j = 0; j <= n; j++)
        for (uint32_t i = 0; i <= n; i++) {
            const size_t k = (size_t)j * (n + 1) + i;
            biome[k] = (uint8_t)((i * 7 + j * 3) % 5 < 3 ? 0 : 1);
            wet[k] = (i - 50) * (i - 50) + (j - 40) * (j - 40) < 60;
            excl[k] = (uint8_t)(i > 80 && j < 30 ? 200 : 0);
            moist[k] = (float)((i + 2 * j) % 17) / 16.0f;
        }
    const char *names[2] = {"meadow", "forest"};
    trn_scatter_env env = make_env(&f);
    env.biome = biome;
    env.biome_names = names;
    env.biome_name_count = 2;
    env.wet = wet;
    env.exclusion = excl;
    env.moisture = moist;
    trn_scatter_rule rules[3] = {make_rule("grass", 1.0, 0.7, 0.0),
                                 make_rule("pine", 0.05, 1.0, 3.5),
                                 make_rule("rock", 0.02, 2.0, 5.0)};
    rules[1].cluster_strength = 0.7;
    char *forest[1] = {(char *)"forest"};
    rules[1].biomes = forest;
    rules[1].biome_count = 1;
    rules[2].slope = (trn_scatter_band){true, 0.0, 20.0};
    rules[0].moisture = (trn_scatter_band){true, 0.2, 0.8};
    trn_palette p = make_palette(rules, 3);
    trn_instances all = run(&p, &env, 1, NULL);
    CHECK(all.count > 1000);
    const double steps[3] = {37.0, 13.0 * SIZE / n, SIZE};
    float *hw = malloc(samples * sizeof *hw), *mw = malloc(samples * sizeof *mw);
    uint8_t *bw = malloc(samples), *ww = malloc(samples), *ew = malloc(samples);
    for (int s = 0; s < 3; s++) {
        size_t total = 0, mismatch = 0;
        for (double z0 = 0.0; z0 < SIZE; z0 += steps[s])
            for (double x0 = 0.0; x0 < SIZE; x0 += steps[s]) {
                trn_scatter_window w = {n, n, SIZE, SIZE, 0, 0, x0, z0, x0 + steps[s],
                                        z0 + steps[s]};
                if (w.x1 >= SIZE) w.x1 = INFINITY; /* the far edge's sites */
                if (w.z1 >= SIZE) w.z1 = INFINITY;
                uint32_t i0, j0, i1, j1;
                CHECK_OK(trn_scatter_window_samples(&w, &i0, &j0, &i1, &j1, NULL));
                const uint32_t wx = i1 - i0 + 1u, wz = j1 - j0 + 1u;
                cut_f32(f.heights, n, i0, j0, wx, wz, hw);
                cut_f32(moist, n, i0, j0, wx, wz, mw);
                cut_u8(biome, n, i0, j0, wx, wz, bw);
                cut_u8(wet, n, i0, j0, wx, wz, ww);
                cut_u8(excl, n, i0, j0, wx, wz, ew);
                trn_field part;
                memset(&part, 0, sizeof part);
                part.cells_x = wx - 1u;
                part.cells_z = wz - 1u;
                part.size_x = extent_at(SIZE / n, wx - 1u);
                part.size_z = extent_at(SIZE / n, wz - 1u);
                part.heights = hw;
                trn_scatter_env pe = env;
                pe.field = &part;
                pe.moisture = mw;
                pe.biome = bw;
                pe.wet = ww;
                pe.exclusion = ew;
                w.i0 = i0;
                w.j0 = j0;
                trn_instances got = {NULL, 0};
                CHECK_OK(trn_scatter_run_window(&p, &pe, &w, NULL, &got, NULL, NULL));
                size_t at = 0;
                for (size_t k = 0; k < all.count; k++) {
                    const trn_instance *a = &all.items[k];
                    if (!(a->x >= w.x0 && a->x < w.x1 && a->z >= w.z0 && a->z < w.z1)) continue;
                    if (at >= got.count || memcmp(a, &got.items[at], sizeof *a) != 0) mismatch++;
                    at++;
                }
                CHECK_EQ_INT(at, got.count);
                total += got.count;
                /* One sample short of what the sites read: refused, naming the samples. */
                if (i0 > 0 && s == 1) {
                    w.i0 = i0 - 1u;
                    trn_instances none = {NULL, 0};
                    trn_error e;
                    CHECK(trn_scatter_run_window(&p, &pe, &w, NULL, &none, NULL, &e) ==
                          TRN_ERR_INVALID_ARGUMENT);
                    CHECK(strstr(e.message, "trn_scatter_window_samples") != NULL);
                }
                trn_instances_dispose(&got);
            }
        CHECK_EQ_INT(total, all.count);
        CHECK_EQ_INT(mismatch, 0);
    }
    free(hw);
    free(mw);
    free(bw);
    free(ww);
    free(ew);
    free(biome);
    free(wet);
    free(excl);
    free(moist);
    trn_instances_dispose(&all);
    trn_field_dispose(&f);
}

int main(void)
{
    RUN(test_reorder_and_unrelated_density);
    RUN(test_density_only_thins);
    RUN(test_resolution_keeps_candidates);
    RUN(test_exclusion_and_undo);
    RUN(test_window_refilter);
    RUN(test_spacing_holds);
    RUN(test_threads_and_golden);
    RUN(test_budgets_and_ceiling);
    RUN(test_cluster_statistics);
    RUN(test_filters_exact);
    RUN(test_lattice_extent);
    RUN(test_argument_errors);
    RUN(test_cancel);
    RUN(test_text_output);
    RUN(test_text_pieces);
    RUN(test_run_window);
    return trn_test_finish();
}
