/* Stationeers octree <-> heightfield: column surfaces from densities, and canonical octrees. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "core/progress.h"
#include "terrane/stationeers.h"

/* Heightfield conversions allocate per column: 2^14 a side is 268 M columns, already 1 GiB
 * of float heights; deeper worlds would need streaming. */
#define FIELD_MAX_DEPTH 14u

void trn_stationeers_field_options_default(trn_stationeers_field_options *options)
{
    options->voxel_size = 1.0;
    options->base = 0.0;
    options->max_depth = 0;
    options->min_depth = 0;
    options->crust_depth = 2;
    /* Four rows: a power of two on the grid of 4-voxel nodes costs (n / 4)^2 leaves; one row
     * would take n^2 single-voxel leaves, as many as the whole surface. */
    options->bedrock_layers = 4;
    options->max_samples = TRN_STATIONEERS_MAX_SAMPLES_DEFAULT;
}

/* TRN_ERR_LIMIT when a conversion at this depth would work on more samples than allowed. */
static trn_status check_samples(const trn_stationeers_field_options *o, uint32_t depth,
                                const char *what, trn_error *err)
{
    const uint64_t limit = o->max_samples ? o->max_samples : TRN_STATIONEERS_MAX_SAMPLES_DEFAULT;
    const uint64_t samples = (uint64_t)1 << (2 * depth);
    if (samples <= limit) return TRN_OK;
    return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                         "%s: MaxDepth %u means %llu x %llu = %llu samples, over the limit of "
                         "%llu samples (about %u bytes each); raise max_samples (terrane: "
                         "--max-samples N) if the memory is there",
                         what, depth, 1ull << depth, 1ull << depth, (unsigned long long)samples,
                         (unsigned long long)limit, TRN_STATIONEERS_SAMPLE_BYTES);
}

static trn_status check_options(const trn_stationeers_field_options *o, trn_error *err)
{
    if (!(o->voxel_size > 0) || !isfinite(o->voxel_size) || !isfinite(o->base))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "stationeers: voxel size must be a finite number > 0 and base "
                             "finite (got %g and %g)",
                             o->voxel_size, o->base);
    return TRN_OK;
}

/* A frame of the explicit walk over stored node bytes. */
typedef struct walk_frame {
    uint32_t x, y, z, size;
    uint32_t next;
} walk_frame;

/* Per column (all int16: depth <= 14 keeps voxel rows under 2^14). Pass 1 finds the highest
 * solid voxel and the highest leaf of partial density (1..127); when that leaf holds the voxel
 * right above the solid one, or lies wholly below it, the column is settled without looking
 * again. Only when some partial leaf floats higher (caves, overhangs, stray voxels) does pass 2
 * walk the tree again to find what lies right above each top. */
typedef struct column_state {
    int16_t *top;  /* highest solid voxel, -1 when none */
    uint8_t *dtop; /* its density */
    int16_t *plo;  /* highest partial leaf in the column: rows plo..phi, density pd */
    int16_t *phi;  /* -1 when none */
    uint8_t *pd;
    uint8_t *above; /* density of the voxel right above top when 1..127, else 0 */
    uint32_t n;     /* columns a side */
    /* With a report, pass 2 also counts what the field loses: phi then holds a pyramid of the
     * highest top per 2^k x 2^k block (level k at phi + level_at[k]), pd the LOSS_* bits. */
    bool losses;
    size_t level_at[FIELD_MAX_DEPTH + 1];
    uint64_t cave, buried, floating;
} column_state;

#define LOSS_CAVE 1u
#define LOSS_BURIED 2u
#define LOSS_FLOATING 4u

/* Pass 2 with a report, for one leaf of density d over rows ylo..yhi: count its voxels that
 * differ from what the field implies. The field keeps each column's top solid voxel t and the
 * one above it, and implies full voxels below t and air above t + 1; whether t itself is lost
 * (not full under a partial voxel) is settled once `above` is known. */
static void count_losses(column_state *cs, uint32_t x, uint32_t z, uint32_t s, int32_t ylo,
                         int32_t yhi, uint8_t d)
{
    if (d == 255) return; /* full: below t it is implied, and nothing above t is solid */
    const uint32_t n = cs->n;
    if (d == 0) {
        /* Air at or above every top of its footprint loses nothing: one look-up. */
        uint32_t k = 0;
        while ((1u << k) < s)
            k++;
        int32_t highest = k == 0
                              ? cs->top[(size_t)z * n + x]
                              : cs->phi[cs->level_at[k] + (size_t)(z >> k) * (n >> k) + (x >> k)];
        if (ylo >= highest) return;
    }
    for (uint32_t zz = z; zz < z + s; zz++) {
        size_t row = (size_t)zz * n;
        for (uint32_t xx = x; xx < x + s; xx++) {
            size_t c = row + xx;
            int32_t t = cs->top[c];
            int32_t hi = yhi < t - 1 ? yhi : t - 1;
            if (hi >= ylo) {
                uint64_t below = (uint64_t)(hi - ylo + 1);
                if (d < TRN_STATIONEERS_SOLID) {
                    cs->cave += below;
                    cs->pd[c] |= LOSS_CAVE;
                } else {
                    cs->buried += below;
                    cs->pd[c] |= LOSS_BURIED;
                }
            }
            /* Voxel t + 1 is the kept partial one or air: only higher ones float. */
            int32_t lo = ylo > t + 2 ? ylo : t + 2;
            if (d > 0 && yhi >= lo) {
                cs->floating += (uint64_t)(yhi - lo + 1);
                cs->pd[c] |= LOSS_FLOATING;
            }
        }
    }
}

/* Walk every leaf in stored order, calling pass 1 or 2. Returns TRN_ERR_CANCELLED when asked,
 * TRN_ERR_INVALID_ARGUMENT when the node bytes are not a consistent tree. */
static trn_status walk_leaves(const trn_stationeers_terrain *t, column_state *cs, int pass,
                              const trn_progress *prog, trn_error *err)
{
    const uint8_t *b = t->nodes;
    const size_t end = t->nodes_size;
    const uint32_t n = cs->n;
    walk_frame st[TRN_STATIONEERS_DEPTH_ABSURD + 2];
    uint32_t top = 0;
    uint32_t x = 0, y = 0, z = 0, s = n;
    size_t pos = 0;
    size_t next_report = (size_t)1 << 24;
    for (;;) {
        if (pos >= end) goto bad;
        uint8_t f = b[pos];
        if (!(f & TRN_STATIONEERS_LEAF)) {
            if (s <= 1 || top > TRN_STATIONEERS_DEPTH_ABSURD) goto bad;
            pos++;
            st[top].x = x;
            st[top].y = y;
            st[top].z = z;
            st[top].size = s;
            st[top].next = 1;
            top++;
            s >>= 1; /* child 0 keeps the low corner */
            continue;
        }
        if (end - pos < 3) goto bad;
        uint8_t d = b[pos + 1];
        pos += 3;
        const int16_t ylo = (int16_t)y, yhi = (int16_t)(y + s - 1);
        if (pass == 1) {
            if (d >= TRN_STATIONEERS_SOLID) {
                for (uint32_t zz = z; zz < z + s; zz++) {
                    size_t row = (size_t)zz * n;
                    int16_t *tp = cs->top + row;
                    uint8_t *dp = cs->dtop + row;
                    for (uint32_t xx = x; xx < x + s; xx++)
                        if (yhi > tp[xx]) {
                            tp[xx] = yhi;
                            dp[xx] = d;
                        }
                }
            } else if (d > 0) {
                for (uint32_t zz = z; zz < z + s; zz++) {
                    size_t row = (size_t)zz * n;
                    int16_t *lo = cs->plo + row, *hi = cs->phi + row;
                    uint8_t *pd = cs->pd + row;
                    for (uint32_t xx = x; xx < x + s; xx++)
                        if (yhi > hi[xx]) {
                            lo[xx] = ylo;
                            hi[xx] = yhi;
                            pd[xx] = d;
                        }
                }
            }
        } else {
            if (cs->losses) count_losses(cs, x, z, s, ylo, yhi, d);
            if (d > 0 && d < TRN_STATIONEERS_SOLID) {
                for (uint32_t zz = z; zz < z + s; zz++) {
                    size_t row = (size_t)zz * n;
                    const int16_t *tp = cs->top + row;
                    uint8_t *ap = cs->above + row;
                    /* The voxel above the top solid one is in this leaf: top + 1 in [y, y + s). */
                    for (uint32_t xx = x; xx < x + s; xx++)
                        if (tp[xx] + 1 >= ylo && tp[xx] + 1 <= yhi) ap[xx] = d;
                }
            }
        }
        if (pos >= next_report) {
            next_report = pos + ((size_t)1 << 24);
            if (trn_progress_report(prog, (double)pos / (double)end, "octree to heightfield"))
                return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1,
                                     "octree to heightfield: cancelled");
        }
        while (top > 0 && st[top - 1].next == 8)
            top--;
        if (top == 0) break;
        walk_frame *fr = &st[top - 1];
        uint32_t k = fr->next++;
        s = fr->size >> 1;
        x = fr->x + (k & 1u) * s;
        y = fr->y + ((k >> 1) & 1u) * s;
        z = fr->z + ((k >> 2) & 1u) * s;
    }
    if (pos != end) goto bad;
    return TRN_OK;
bad:
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "octree to heightfield: the node bytes are not a complete tree of "
                         "MaxDepth %u (stopped at node byte %zu of %zu)",
                         t->max_depth, pos, end);
}

trn_status trn_stationeers_to_field(const trn_stationeers_terrain *terrain,
                                    const trn_stationeers_field_options *options, trn_field *field,
                                    trn_stationeers_field_report *report, trn_progress_fn progress,
                                    void *user, trn_error *err)
{
    trn_stationeers_field_options defaults;
    if (!options) {
        trn_stationeers_field_options_default(&defaults);
        options = &defaults;
    }
    trn_status st = check_options(options, err);
    if (st) return st;
    if (!terrain || !terrain->nodes || terrain->nodes_size == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "octree to heightfield: no octree");
    if (terrain->max_depth == 0 || terrain->max_depth > FIELD_MAX_DEPTH)
        return trn_error_set(err, TRN_ERR_UNSUPPORTED, NULL, -1,
                             "octree to heightfield: MaxDepth %u: heightfields need 1..%u "
                             "(2 to %u columns a side)",
                             terrain->max_depth, FIELD_MAX_DEPTH, 1u << FIELD_MAX_DEPTH);
    st = check_samples(options, terrain->max_depth, "octree to heightfield", err);
    if (st) return st;
    trn_progress prog = trn_progress_make(progress, user);
    const uint32_t n = 1u << terrain->max_depth;
    const size_t columns = (size_t)n * n;
    column_state cs = {0};
    cs.n = n;
    cs.top = malloc(columns * sizeof *cs.top);
    cs.dtop = calloc(columns, 1);
    cs.plo = malloc(columns * sizeof *cs.plo);
    cs.phi = malloc(columns * sizeof *cs.phi);
    cs.pd = calloc(columns, 1);
    cs.above = calloc(columns, 1);
    trn_field f = {0};
    if (!cs.top || !cs.dtop || !cs.plo || !cs.phi || !cs.pd || !cs.above) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                           "octree to heightfield: no memory for %zu columns", columns);
        goto done;
    }
    for (size_t c = 0; c < columns; c++) {
        cs.top[c] = -1;
        cs.phi[c] = -1;
    }
    trn_progress p1 = trn_progress_sub(&prog, 0.0, 0.5);
    st = walk_leaves(terrain, &cs, 1, &p1, err);
    if (st) goto done;
    uint64_t unsettled = 0;
    for (size_t c = 0; c < columns; c++) {
        int32_t want = cs.top[c] + 1;
        if (cs.phi[c] < want) continue; /* every partial leaf lies below: nothing above */
        if (cs.plo[c] <= want)
            cs.above[c] = cs.pd[c];
        else
            unsettled++;
    }
    /* Pass 2 finds what lies right above unsettled tops; with a report it always runs, and
     * counts the losses on the same walk. */
    if (unsettled || report) {
        if (report) {
            cs.losses = true;
            memset(cs.pd, 0, columns); /* free once the columns are settled, as is phi */
            size_t at = 0;
            for (uint32_t k = 1; k <= terrain->max_depth; k++) {
                const size_t side = (size_t)n >> k, below = side * 2;
                const int16_t *src = k == 1 ? cs.top : cs.phi + cs.level_at[k - 1];
                int16_t *dst = cs.phi + at;
                cs.level_at[k] = at;
                for (size_t j = 0; j < side; j++)
                    for (size_t i = 0; i < side; i++) {
                        const int16_t *q = src + 2 * j * below + 2 * i;
                        int16_t m = q[0] > q[1] ? q[0] : q[1];
                        if (q[below] > m) m = q[below];
                        if (q[below + 1] > m) m = q[below + 1];
                        dst[j * side + i] = m;
                    }
                at += side * side;
            }
        }
        memset(cs.above, 0, columns);
        trn_progress p2 = trn_progress_sub(&prog, 0.5, 0.95);
        st = walk_leaves(terrain, &cs, 2, &p2, err);
        if (st) goto done;
    }
    st = trn_field_init(&f, n - 1, n - 1, (double)(n - 1) * options->voxel_size,
                        (double)(n - 1) * options->voxel_size, err);
    if (st) goto done;
    uint64_t empty = 0;
    const double step = 1.0 / 255.0;
    for (size_t c = 0; c < columns; c++) {
        double h;
        if (cs.above[c])
            h = (double)(cs.top[c] + 1) + cs.above[c] * step;
        else if (cs.top[c] >= 0)
            h = (double)cs.top[c] + cs.dtop[c] * step;
        else {
            h = 0.0;
            empty++;
        }
        f.heights[c] = (float)(options->base + h * options->voxel_size);
    }
    if (report) {
        /* A top voxel that is not full, under a kept partial voxel, is implied full. */
        for (size_t c = 0; c < columns; c++)
            if (cs.top[c] >= 0 && cs.above[c] && cs.dtop[c] < 255) {
                cs.buried++;
                cs.pd[c] |= LOSS_BURIED;
            }
        memset(report, 0, sizeof *report);
        report->empty_columns = empty;
        report->max_depth = terrain->max_depth;
        report->cave_voxels = cs.cave;
        report->buried_voxels = cs.buried;
        report->floating_voxels = cs.floating;
        for (size_t c = 0; c < columns; c++) {
            report->cave_columns += (cs.pd[c] & LOSS_CAVE) != 0;
            report->buried_columns += (cs.pd[c] & LOSS_BURIED) != 0;
            report->floating_columns += (cs.pd[c] & LOSS_FLOATING) != 0;
        }
    }
    trn_progress_report(&prog, 1.0, "octree to heightfield");
    *field = f;
    memset(&f, 0, sizeof f);
done:
    trn_field_dispose(&f);
    free(cs.top);
    free(cs.dtop);
    free(cs.plo);
    free(cs.phi);
    free(cs.pd);
    free(cs.above);
    return st;
}

/* ------------------------------------------------------------------------------------------ */

/* Per column, in 1/255 voxel steps: `full` voxels of density 255 from the floor, then voxel
 * `full` with density `part` (0 = air); tn = the highest non-air voxel. Pyramid level k > 0
 * holds, per 2^k x 2^k block of columns, the least full, the least tn and the greatest tn. */
typedef struct build_state {
    uint32_t n, depth;
    int16_t *full;
    uint8_t *part;
    int16_t *min_full[FIELD_MAX_DEPTH + 1];
    int16_t *min_tn[FIELD_MAX_DEPTH + 1];
    int16_t *max_tn[FIELD_MAX_DEPTH + 1];
    int32_t crust, bedrock;
    uint8_t *out;
    size_t out_size, out_cap;
    uint64_t branches, leaves;
    bool oom;
} build_state;

static inline int32_t col_tn(const build_state *b, size_t c)
{
    return b->part[c] ? b->full[c] : b->full[c] - 1;
}

static void emit(build_state *b, const uint8_t *bytes, size_t count)
{
    if (b->out_cap - b->out_size < count) {
        size_t cap = b->out_cap ? b->out_cap : (size_t)1 << 16;
        while (cap - b->out_size < count)
            cap *= 2;
        uint8_t *grown = realloc(b->out, cap);
        if (!grown) {
            b->oom = true;
            return;
        }
        b->out = grown;
        b->out_cap = cap;
    }
    memcpy(b->out + b->out_size, bytes, count);
    b->out_size += count;
}

static void emit_leaf(build_state *b, uint8_t density, uint8_t type)
{
    uint8_t leaf[3] = {TRN_STATIONEERS_LEAF, density, type};
    if (density == 0) leaf[2] = TRN_STATIONEERS_TYPE_NONE;
    emit(b, leaf, 3);
    b->leaves++;
}

/* The single voxel (x, y, z). */
static void voxel_of(const build_state *b, uint32_t x, uint32_t y, uint32_t z, uint8_t *density,
                     uint8_t *type)
{
    size_t c = (size_t)z * b->n + x;
    int32_t yy = (int32_t)y, full = b->full[c];
    *density = yy < full ? 255 : yy == full ? b->part[c] : 0;
    if (*density == 0) {
        *type = TRN_STATIONEERS_TYPE_NONE;
        return;
    }
    int32_t tn = col_tn(b, c);
    if (yy < b->bedrock)
        *type = TRN_STATIONEERS_TYPE_BEDROCK;
    else if (b->crust > 0 && yy > tn - b->crust)
        *type = TRN_STATIONEERS_TYPE_CRUST;
    else
        *type = TRN_STATIONEERS_TYPE_DIRT;
}

/* True (and the leaf) when every voxel of the node is alike, judged from the column bounds. */
static bool uniform_node(const build_state *b, uint32_t x, uint32_t y, uint32_t z, uint32_t s,
                         uint32_t level, uint8_t *density, uint8_t *type)
{
    int32_t mn_full, mn_tn, mx_tn;
    if (level == 0) {
        size_t c = (size_t)z * b->n + x;
        mn_full = b->full[c];
        mn_tn = mx_tn = col_tn(b, c);
    } else {
        size_t side = b->n >> level;
        size_t c = (size_t)(z >> level) * side + (x >> level);
        mn_full = b->min_full[level][c];
        mn_tn = b->min_tn[level][c];
        mx_tn = b->max_tn[level][c];
    }
    int32_t y0 = (int32_t)y, y1 = (int32_t)(y + s) - 1;
    if (y0 > mx_tn) {
        *density = 0;
        *type = TRN_STATIONEERS_TYPE_NONE;
        return true;
    }
    if (y1 >= mn_full) return false; /* some voxel is partly full or air */
    *density = 255;
    if (y1 < b->bedrock) {
        *type = TRN_STATIONEERS_TYPE_BEDROCK;
        return true;
    }
    if (y0 < b->bedrock) return false;
    if (b->crust == 0 || y1 <= mn_tn - b->crust) {
        *type = TRN_STATIONEERS_TYPE_DIRT;
        return true;
    }
    if (y0 > mx_tn - b->crust) {
        *type = TRN_STATIONEERS_TYPE_CRUST;
        return true;
    }
    return false;
}

typedef struct build_frame {
    uint32_t x, y, z, size, level;
    uint32_t next;
    size_t branch_pos;
} build_frame;

static trn_status build_tree(build_state *b, const trn_progress *prog, trn_error *err)
{
    build_frame st[FIELD_MAX_DEPTH + 2];
    uint32_t top = 0;
    uint32_t x = 0, y = 0, z = 0, s = b->n, level = b->depth;
    for (;;) {
        uint8_t density, type;
        if (uniform_node(b, x, y, z, s, level, &density, &type)) {
            emit_leaf(b, density, type);
        } else if (s == 1) {
            voxel_of(b, x, y, z, &density, &type);
            emit_leaf(b, density, type);
        } else {
            uint8_t flags = 0;
            st[top].x = x;
            st[top].y = y;
            st[top].z = z;
            st[top].size = s;
            st[top].level = level;
            st[top].next = 1;
            st[top].branch_pos = b->out_size;
            top++;
            emit(b, &flags, 1);
            b->branches++;
            s >>= 1;
            level--;
            if (b->oom) break;
            continue;
        }
        if (b->oom) break;
        /* Close finished branches; one whose 8 children are equal leaves becomes that leaf. */
        while (top > 0 && st[top - 1].next == 8) {
            size_t p = st[top - 1].branch_pos;
            if (b->out_size == p + 25) {
                const uint8_t *c = b->out + p + 1;
                bool same = true;
                for (int k = 1; k < 8 && same; k++)
                    same = memcmp(c, c + 3 * k, 3) == 0;
                if (same) {
                    memmove(b->out + p, c, 3);
                    b->out_size = p + 3;
                    b->branches--;
                    b->leaves -= 7;
                }
            }
            top--;
            if (top == 2 || (top == 1 && b->depth == 1)) {
                double done = (double)(st[0].next - 1) / 8.0;
                if (top == 2) done += (double)(st[1].next - 1) / 64.0;
                if (trn_progress_report(prog, done, "heightfield to octree"))
                    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1,
                                         "heightfield to octree: cancelled");
            }
        }
        if (top == 0) break;
        build_frame *fr = &st[top - 1];
        uint32_t k = fr->next++;
        s = fr->size >> 1;
        level = fr->level - 1;
        x = fr->x + (k & 1u) * s;
        y = fr->y + ((k >> 1) & 1u) * s;
        z = fr->z + ((k >> 2) & 1u) * s;
    }
    if (b->oom)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                             "heightfield to octree: no memory for %zu node bytes", b->out_size);
    return TRN_OK;
}

static void build_dispose(build_state *b)
{
    free(b->full);
    free(b->part);
    for (uint32_t k = 0; k <= FIELD_MAX_DEPTH; k++) {
        free(b->min_full[k]);
        free(b->min_tn[k]);
        free(b->max_tn[k]);
    }
    free(b->out);
}

static int16_t min16(int16_t a, int16_t b)
{
    return a < b ? a : b;
}

static int16_t max16(int16_t a, int16_t b)
{
    return a > b ? a : b;
}

static trn_status build_pyramid(build_state *b, trn_error *err)
{
    for (uint32_t k = 1; k <= b->depth; k++) {
        size_t side = b->n >> k, below = side * 2;
        size_t count = side * side;
        b->min_full[k] = malloc(count * sizeof(int16_t));
        b->min_tn[k] = malloc(count * sizeof(int16_t));
        b->max_tn[k] = malloc(count * sizeof(int16_t));
        if (!b->min_full[k] || !b->min_tn[k] || !b->max_tn[k])
            return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                                 "heightfield to octree: no memory for column bounds");
        for (size_t j = 0; j < side; j++)
            for (size_t i = 0; i < side; i++) {
                size_t c[4] = {(2 * j) * below + 2 * i, (2 * j) * below + 2 * i + 1,
                               (2 * j + 1) * below + 2 * i, (2 * j + 1) * below + 2 * i + 1};
                int16_t mf, mnt, mxt;
                if (k == 1) {
                    mf = b->full[c[0]];
                    mnt = mxt = (int16_t)col_tn(b, c[0]);
                    for (int q = 1; q < 4; q++) {
                        int16_t tn = (int16_t)col_tn(b, c[q]);
                        mf = min16(mf, b->full[c[q]]);
                        mnt = min16(mnt, tn);
                        mxt = max16(mxt, tn);
                    }
                } else {
                    const int16_t *f = b->min_full[k - 1], *a = b->min_tn[k - 1],
                                  *m = b->max_tn[k - 1];
                    mf = min16(min16(f[c[0]], f[c[1]]), min16(f[c[2]], f[c[3]]));
                    mnt = min16(min16(a[c[0]], a[c[1]]), min16(a[c[2]], a[c[3]]));
                    mxt = max16(max16(m[c[0]], m[c[1]]), max16(m[c[2]], m[c[3]]));
                }
                b->min_full[k][j * side + i] = mf;
                b->min_tn[k][j * side + i] = mnt;
                b->max_tn[k][j * side + i] = mxt;
            }
    }
    return TRN_OK;
}

trn_status trn_stationeers_from_field(const trn_field *field,
                                      const trn_stationeers_field_options *options,
                                      trn_stationeers_terrain *terrain,
                                      trn_stationeers_field_report *report,
                                      trn_progress_fn progress, void *user, trn_error *err)
{
    memset(terrain, 0, sizeof *terrain);
    trn_stationeers_field_options defaults;
    if (!options) {
        trn_stationeers_field_options_default(&defaults);
        options = &defaults;
    }
    trn_status st = check_options(options, err);
    if (st) return st;
    if (!field || !field->heights)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "heightfield to octree: no heights");
    const size_t sx = (size_t)field->cells_x + 1, sz = (size_t)field->cells_z + 1;
    const double inv = 1.0 / options->voxel_size;
    double hv_max = 0;
    for (size_t i = 0; i < sx * sz; i++) {
        double hv = ((double)field->heights[i] - options->base) * inv;
        if (hv > hv_max) hv_max = hv; /* NaN compares false */
    }
    uint32_t depth = options->max_depth;
    if (depth == 0) {
        depth = options->min_depth > 1 ? options->min_depth : 1;
        while (depth < 31 && ((double)(1u << depth) < (double)(sx > sz ? sx : sz) ||
                              (double)(1u << depth) < hv_max))
            depth++;
    }
    if (depth > FIELD_MAX_DEPTH)
        return trn_error_set(err, TRN_ERR_LIMIT, NULL, -1,
                             "heightfield to octree: MaxDepth %u needed (%zu x %zu samples, up "
                             "to %.1f voxels high); at most %u: use a larger voxel size or a "
                             "higher base",
                             depth, sx, sz, hv_max, FIELD_MAX_DEPTH);
    st = check_samples(options, depth, "heightfield to octree", err);
    if (st) return st;
    const uint32_t n = 1u << depth;
    if (sx > n || sz > n)
        return trn_error_set(err, TRN_ERR_MISMATCH, NULL, -1,
                             "heightfield to octree: %zu x %zu samples do not fit the %u x %u "
                             "columns of MaxDepth %u (crop or resample the field, or raise "
                             "MaxDepth)",
                             sx, sz, n, n, depth);
    if (options->bedrock_layers > n)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "heightfield to octree: %u bedrock layers exceed the %u voxel rows",
                             options->bedrock_layers, n);
    trn_progress prog = trn_progress_make(progress, user);
    build_state b;
    memset(&b, 0, sizeof b);
    b.n = n;
    b.depth = depth;
    b.crust = (int32_t)(options->crust_depth > n ? n : options->crust_depth);
    b.bedrock = (int32_t)options->bedrock_layers;
    const size_t columns = (size_t)n * n;
    b.full = malloc(columns * sizeof *b.full);
    b.part = malloc(columns);
    if (!b.full || !b.part) {
        st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1,
                           "heightfield to octree: no memory for %zu columns", columns);
        goto fail;
    }
    trn_stationeers_field_report rep;
    memset(&rep, 0, sizeof rep);
    rep.max_depth = depth;
    const int64_t q_lo = (int64_t)b.bedrock * 255, q_hi = (int64_t)n * 255;
    /* Quantise each field sample once, then copy rows into the columns (edges repeated). */
    for (size_t zc = 0; zc < n; zc++) {
        size_t j = zc < sz ? zc : sz - 1;
        for (size_t xc = 0; xc < n; xc++) {
            size_t i = xc < sx ? xc : sx - 1;
            size_t c = zc * n + xc;
            if (xc > i || zc > j) {
                rep.extended++;
                b.full[c] = b.full[j * n + i];
                b.part[c] = b.part[j * n + i];
                continue;
            }
            double hv = ((double)field->heights[j * sx + i] - options->base) * inv;
            int64_t q;
            if (!(hv * 255.0 >= (double)q_lo)) {
                q = q_lo; /* NaN too */
                rep.clamped_low++;
            } else if (hv * 255.0 > (double)q_hi) {
                q = q_hi;
                rep.clamped_high++;
            } else {
                q = (int64_t)llround(hv * 255.0);
            }
            b.full[c] = (int16_t)(q / 255);
            b.part[c] = (uint8_t)(q % 255);
        }
    }
    st = build_pyramid(&b, err);
    if (st) goto fail;
    st = build_tree(&b, &prog, err);
    if (st) goto fail;
    /* Trim the buffer to what the tree uses. */
    uint8_t *trimmed = realloc(b.out, b.out_size);
    if (trimmed) b.out = trimmed;
    terrain->max_depth = depth;
    terrain->nodes = b.out;
    terrain->nodes_size = b.out_size;
    terrain->branch_count = b.branches;
    terrain->leaf_count = b.leaves;
    terrain->node_count = b.branches + b.leaves;
    b.out = NULL;
    if (report) *report = rep;
    trn_progress_report(&prog, 1.0, "heightfield to octree");
    build_dispose(&b);
    return TRN_OK;
fail:
    build_dispose(&b);
    return st;
}
