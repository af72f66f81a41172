/* The Stream Power node: landscape evolution by uplift, fluvial incision and diffusion. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/rows.h"
#include "graph/nodes/node_common.h"
#include "graph/tiles.h"
#include "terrane/comm.h"
#include "terrane/drainage.h"
#include "terrane/generate.h"
#include "terrane/landscape.h"

static const trn_pin_spec in_sp[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the initial surface (noise or any field)"},
    {"uplift", TRN_PIN_MASK, false, "uplift factor per sample (0..1); absent: uniform"},
};
static const trn_pin_spec out_sp[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "the evolved surface"},
    {"channels", TRN_PIN_MASK, false, "drainage area / channel_area, capped at 1"},
};
static const trn_param_spec p_sp[] = {
    NUM("uplift", 1e-3, 0, 1e3, "uplift rate, metres per time unit"),
    NUM("erodibility", 5e-5, 1e-12, 1e3, "K of the stream-power law"),
    NUM("m", 0.45, 0.01, 2, "drainage-area exponent"),
    NUM("n", 1, 0.1, 4, "slope exponent"),
    NUM("diffusion", 0.05, 0, 1e6, "hillslope diffusivity, world units^2 per time unit"),
    NUM("channel_threshold", 0, 0, 1e15,
        "world units^2 of drainage area below which ground does not incise (hillslopes)"),
    NUM("critical_slope", 0, 0, 89.9, "degrees; steeper slopes collapse (0 = off)"),
    NUM("creep_slope", 0, 0, 89.9,
        "degrees; nonlinear creep: sides creep faster as they near this slope (0 = linear)"),
    NUM("dt", 20000, 1e-6, 1e9, "time step"),
    INT("steps", 200, 1, 100000, "time steps"),
    INT("coarsen", 1, 1, 64, "evolve on a grid this many times coarser, then amplify"),
    NUM("evolution_cell", 0, 0, 1e9,
        "world units per cell of the evolution grid (0 = use coarsen): the grid is coarsened "
        "by the nearest whole factor (1..64), so every output grid evolves the same rivers"),
    NUM("reference_cell", 0, 0, 1e9,
        "read every parameter as if an evolution cell were this many metres wide (0 = world "
        "units as given): the same river network whatever the world's scale"),
    CHOICE("uplift_shape", "uniform", "uniform|input",
           "input: uplift times 0.2..1 following the input's height (times the uplift mask "
           "when given), so the land rises where the input is high and keeps its large shape"),
    CHOICE("lakes", "keep", "keep|fill|breach",
           "fill: closed depressions the run leaves undrained are filled flat to their spill "
           "level at the end (as lake sediment would); breach: a notch is cut from each one's "
           "bottom through its rim instead (heights only lowered); either way every sample "
           "drains to base level"),
    CHOICE("relief", "evolved", "evolved|input",
           "input: heights stretched linearly back to the input's lowest and highest"),
    NUM("detail", 1, 0, 4, "share of the input's finer detail returned after coarsening"),
    NUM("channel_area", 1e6, 1e-6, 1e15,
        "world units^2: drainage area where detail fades out and channels reach 1"),
    INT("fine_steps", 0, 0, 1000,
        "after amplification, this many steps of the same law on the output grid (dt and "
        "diffusion / coarsen): the returned detail is carved into tributaries of the evolved "
        "valleys and "
        "its pits drain (0 = off; used when the evolution grid is coarser)"),
    INT("cascade_steps", 0, 0, 1000,
        "with an evolution grid 4 or more times coarser (an even factor): come back through "
        "each grid twice as fine as the one before, running this many steps on each, so every "
        "halving of the cell cuts tributary valleys of its own size into the larger ones (0 = "
        "straight back to the output grid)"),
    OPT_NUM("sea_level", -TRN_BIG, TRN_BIG,
            "metres; samples at or below are base level; absent = the recipe's sea level"),
    CHOICE("sea", "on", "on|off", "off: only the border is base level"),
    CHOICE("base_level", "bed", "bed|surface",
           "what the samples under the sea level are during the run: bed, base level at their "
           "own heights; surface, base level at the sea level (the water's surface, where "
           "rivers and hillslopes end), their own heights coming back at the end, so no land "
           "beside a lake or the sea is cut or worn below its water and a hollow's lake fills "
           "it up to the hillslopes"),
    NUM("surface_depth", 0, 0, 1e9,
        "with base_level surface: metres below the sea level the bed comes back at most (a "
        "deeper bed is filled flat there, as a lake's sediment would; 0 = the bed as it was)"),
    CHOICE("routing", "rho8", "rho8|mfd|d8",
           "rho8: each sample drains to its steepest neighbour with the diagonals' run drawn "
           "between one and two cells (Fairfield and Leymarie 1991), so valleys follow the land, "
           "not the grid; mfd: to every lower neighbour in proportion to the slope (water "
           "spreads on open slopes, gathers in hollows; about 4 times slower); d8: the steepest "
           "of eight, valleys along the grid's axes and diagonals"),
    CHOICE("fine_routing", "same", "same|rho8|mfd|d8",
           "the routing of the fine steps (same: as routing); mfd keeps the returned detail "
           "free of one-cell rills"),
    CHOICE("upsample", "warped_spline", "warped_spline|cubic",
           "how a coarser evolution grid comes back: warped_spline, a C2 spline sampled through "
           "a smooth warp (no creases along the coarse grid); cubic, Catmull-Rom (creases every "
           "coarse cell)"),
    CHOICE("border", "follow", "follow|fixed|outlets|open",
           "follow: the border is base level and comes down with the land beside it; fixed: it "
           "keeps its heights; outlets: base level only at the edge's low points (where valleys "
           "meet it, at least 1/32 of the edge apart), the rest of the border is land that rises "
           "and erodes with the interior and sheds no water across the edge, so the land does not "
           "ramp down to every edge; open: the land runs on past the edge (the input continued "
           "by point reflection, an eighth of the side or at least 16 evolution cells wide, "
           "with base level at its far border) and the run is cut back to the map, so valleys and "
           "ridges cross the edge as they would a window onto larger land: no gutter, no rim "
           "(about 1.6 times the work)"),
    NUM("rock_variation", 0, 0, 4,
        "rock of varied strength: erodibility times 2^(-v..v) after a noise in world "
        "coordinates, so valleys follow the weak rock and their spacing varies from place to "
        "place instead of repeating one width (0 = uniform rock)"),
    NUM("rock_feature_size", 2000, 1e-6, 1e9,
        "world units of the rock noise's largest features (4 octaves)"),
    NUM("rock_creep", 0, -4, 4,
        "with rock_variation, the creep (diffusion) rate times the rock's erodibility factor to "
        "this power: valley spacing goes with creep over incision, so at -1 the rock that "
        "erodes fastest creeps slowest and valley spacing varies twice as far from place to "
        "place, without lowering the weak rock further (0 = the same creep everywhere)"),
    NUM("rock_critical", 0, -4, 4,
        "with rock_variation and critical_slope, the critical slope's gradient times the rock's "
        "erodibility factor to this power: at -1 strong rock stands steeper and weak rock "
        "gentler, as real threshold slopes do, so the slopes spread instead of pinning one "
        "angle (0 = the same critical slope everywhere)"),
    NUM("deposition", 0, 0, 1000,
        "G, dimensionless: sediment deposition (Yuan et al. 2019); the sediment a river carries, "
        "spread over its drainage area and times G, is laid down where it flows, so fans and "
        "floodplains build where slopes drop and valleys fill and widen downstream (0 = off; "
        "about 0.5-2 for visible fans; needs n = 1 and rho8 or d8 routing)"),
};

/* A routing choice by name; "same" (or none) gives fallback. */
static trn_flow_routing sp_routing(const char *name, trn_flow_routing fallback)
{
    if (!name) return fallback;
    if (strcmp(name, "d8") == 0) return TRN_ROUTING_D8;
    if (strcmp(name, "rho8") == 0) return TRN_ROUTING_RHO8;
    if (strcmp(name, "mfd") == 0) return TRN_ROUTING_MFD;
    return fallback;
}

/* Catmull-Rom value of a grid of nx x nz samples at fractional sample (fx, fz), edges clamped. */
static double cubic_at(const float *g, size_t nx, size_t nz, double fx, double fz)
{
    const int64_t i = (int64_t)floor(fx), j = (int64_t)floor(fz);
    const double tx = fx - (double)i, tz = fz - (double)j;
    double wx[4], wz[4];
    const double *tt[2] = {&tx, &tz};
    double *ww[2] = {wx, wz};
    for (int a = 0; a < 2; a++) {
        const double u = *tt[a], u2 = u * u, u3 = u2 * u;
        ww[a][0] = 0.5 * (-u3 + 2 * u2 - u);
        ww[a][1] = 0.5 * (3 * u3 - 5 * u2 + 2);
        ww[a][2] = 0.5 * (-3 * u3 + 4 * u2 + u);
        ww[a][3] = 0.5 * (u3 - u2);
    }
    double v = 0;
    for (int b = 0; b < 4; b++) {
        int64_t jj = j - 1 + b;
        jj = jj < 0 ? 0 : jj >= (int64_t)nz ? (int64_t)nz - 1 : jj;
        double row = 0;
        for (int a = 0; a < 4; a++) {
            int64_t ii = i - 1 + a;
            ii = ii < 0 ? 0 : ii >= (int64_t)nx ? (int64_t)nx - 1 : ii;
            row += wx[a] * g[(size_t)jj * nx + (size_t)ii];
        }
        v += wz[b] * row;
    }
    return v;
}

/* Bilinear value of a grid of nx x nz samples at fractional sample (fx, fz), edges clamped. */
static double bilinear_at(const float *g, size_t nx, size_t nz, double fx, double fz)
{
    size_t i = (size_t)fx, j = (size_t)fz;
    if (i + 1u >= nx) i = nx - 2u;
    if (j + 1u >= nz) j = nz - 2u;
    double tx = fx - (double)i, tz = fz - (double)j;
    tx = tx < 0 ? 0 : tx > 1 ? 1 : tx;
    tz = tz < 0 ? 0 : tz > 1 ? 1 : tz;
    const float *p = g + j * nx + i;
    return (p[0] * (1.0 - tx) + p[1] * tx) * (1.0 - tz) +
           (p[nx] * (1.0 - tx) + p[nx + 1] * tx) * tz;
}

/* Filter a grid refine times finer back onto the output grid: tent weights (refine - |d|) each
 * way, so a smooth surface comes back unchanged and channels a fine cell wide stay visible. */
static void refine_down(const float *fine, size_t fnx, size_t fnz, uint32_t refine, float *out,
                        size_t nx, size_t nz)
{
    const int64_t r = refine;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < nx; i++) {
            double sum = 0, wsum = 0;
            for (int64_t dj = 1 - r; dj < r; dj++) {
                const int64_t fj = (int64_t)j * r + dj;
                if (fj < 0 || fj >= (int64_t)fnz) continue;
                for (int64_t di = 1 - r; di < r; di++) {
                    const int64_t fi = (int64_t)i * r + di;
                    if (fi < 0 || fi >= (int64_t)fnx) continue;
                    const double w =
                        (double)(r - (di < 0 ? -di : di)) * (double)(r - (dj < 0 ? -dj : dj));
                    sum += w * fine[(size_t)fj * fnx + (size_t)fi];
                    wsum += w;
                }
            }
            out[j * nx + i] = (float)(sum / wsum);
        }
}

/* The parameters, one row each: the numbers the evolution takes as members of
 * trn_evolve_options, the rest (the grid factors, the reference scale, the masks' settings and
 * the choices, by their names) beside them; the sea level is read as every drainage reads it. */
typedef struct sp_params {
    trn_evolve_options o;
    uint32_t coarsen;
    double evolution_cell, reference_cell, rock_variation, rock_feature_size;
    const char *uplift_shape, *lakes, *relief, *base_level, *routing, *fine_routing, *upsample,
        *border;
    bool steps_given;
} sp_params;

#define ROW(name, as, member) TRN_PARAM_##as##_ROW(name, sp_params, member)
static const trn_param_field sp_fields[] = {
    ROW("uplift", DOUBLE, o.sp.uplift),
    ROW("erodibility", DOUBLE, o.sp.erodibility),
    ROW("m", DOUBLE, o.sp.m),
    ROW("n", DOUBLE, o.sp.n),
    ROW("diffusion", DOUBLE, o.sp.diffusion),
    ROW("channel_threshold", DOUBLE, o.sp.channel_threshold),
    ROW("critical_slope", DOUBLE, o.sp.critical_slope),
    ROW("creep_slope", DOUBLE, o.sp.creep_slope),
    ROW("dt", DOUBLE, o.sp.dt),
    ROW("steps", U32, o.sp.steps),
    ROW("steps", NUMBER_GIVEN, steps_given),
    ROW("coarsen", U32, coarsen),
    ROW("evolution_cell", DOUBLE, evolution_cell),
    ROW("reference_cell", DOUBLE, reference_cell),
    ROW("uplift_shape", TEXT, uplift_shape),
    ROW("lakes", TEXT, lakes),
    ROW("relief", TEXT, relief),
    ROW("detail", DOUBLE, o.detail),
    ROW("channel_area", DOUBLE, o.channel_area),
    ROW("fine_steps", U32, o.fine_steps),
    ROW("cascade_steps", U32, o.cascade_steps),
    ROW("base_level", TEXT, base_level),
    ROW("surface_depth", DOUBLE, o.sp.sea_surface_depth),
    ROW("routing", TEXT, routing),
    ROW("fine_routing", TEXT, fine_routing),
    ROW("upsample", TEXT, upsample),
    ROW("border", TEXT, border),
    ROW("rock_variation", DOUBLE, rock_variation),
    ROW("rock_feature_size", DOUBLE, rock_feature_size),
    ROW("rock_creep", DOUBLE, o.sp.diffusion_rock),
    ROW("rock_critical", DOUBLE, o.sp.critical_rock),
    ROW("deposition", DOUBLE, o.sp.deposition),
};
#undef ROW

/* The evolution grid against the output grid: with evolution_cell > 0, its ratio to the grid's
 * coarser cell rounded to a whole factor in 1..64, coarser (coarsen, amplified after) or finer
 * (refine: the input upsampled, evolved, filtered back down); else the coarsen parameter. */
static void sp_factors(const sp_params *p, uint32_t cells_x, uint32_t cells_z, double size_x,
                       double size_z, uint32_t *coarsen, uint32_t *refine)
{
    *refine = 1;
    *coarsen = p->coarsen;
    const double cell_w = p->evolution_cell;
    if (!(cell_w > 0)) return;
    double cell = size_x / cells_x;
    if (size_z / cells_z > cell) cell = size_z / cells_z;
    const double up = floor(cell_w / cell + 0.5), down = floor(cell / cell_w + 0.5);
    *coarsen = up < 1 ? 1u : up > 64 ? 64u : (uint32_t)up;
    if (down > 1) *refine = down > 64 ? 64u : (uint32_t)down;
}

/* Whether a choice's text is word. */
static bool is(const char *text, const char *word)
{
    return text && strcmp(text, word) == 0;
}

/* Preview: a quarter of the steps (at least one) over the same total time: the implicit
 * scheme stays stable at the longer step. */
static void sp_read(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                    trn_erosion_quality quality, sp_params *p)
{
    trn_evolve_options *o = &p->o;
    trn_evolve_options_default(o);
    trn_graph_params_fill(n, t, TRN_PARAM_ROWS(sp_fields), p);
    o->sp.sea_level = trn_node_drainage_sea(n, t, recipe);
    o->sp.sea_surface = is(p->base_level, "surface");
    o->sp.fixed_border = is(p->border, "fixed");
    o->sp.border_outlets = is(p->border, "outlets");
    o->sp.routing = sp_routing(p->routing, TRN_ROUTING_RHO8);
    o->fine_routing = sp_routing(p->fine_routing, TRN_ROUTING_SAME);
    o->upsample = is(p->upsample, "cubic") ? TRN_UPSAMPLE_CUBIC : TRN_UPSAMPLE_WARPED_SPLINE;
    o->sp.seed = trn_subseed(recipe->seed, "stream_power");
    uint32_t refine;
    sp_factors(p, recipe->cells_x, recipe->cells_z, recipe->size_x, recipe->size_z, &o->coarsen,
               &refine);
    if (quality == TRN_EROSION_PREVIEW && o->sp.steps > 1) {
        const uint32_t steps = (o->sp.steps + 3u) / 4u;
        o->sp.dt *= (double)o->sp.steps / (double)steps;
        o->sp.steps = steps;
    }
}

bool trn_node_evolve_fine_in_tiles(const trn_graph_node *n, const trn_node_type *t,
                                   const trn_recipe *recipe, trn_erosion_quality quality)
{
    if (strcmp(t->name, "stream_power") != 0) return false;
    sp_params p;
    sp_read(n, t, recipe, quality, &p);
    const trn_evolve_options o = p.o;
    const trn_flow_routing fine =
        o.fine_routing != TRN_ROUTING_SAME ? o.fine_routing : o.sp.routing;
    return o.coarsen > 1 && !o.cascade_steps && fine != TRN_ROUTING_MFD &&
           !(o.sp.critical_slope > 0) && !(o.sp.creep_slope > 0) && !is(p.border, "open");
}

uint64_t trn_node_evolve_handover_bytes(const trn_graph_node *n, const trn_node_type *t,
                                        const trn_recipe *recipe, trn_erosion_quality quality)
{
    if (strcmp(t->name, "stream_power") != 0) return 0;
    sp_params p;
    sp_read(n, t, recipe, quality, &p);
    if (p.o.coarsen <= 1) return 0;
    /* A cascade comes back from the level twice as coarse; otherwise from the coarsened grid. */
    const uint64_t c = p.o.cascade_steps && p.o.coarsen >= 4 && p.o.coarsen % 2u == 0
                           ? 2u
                           : p.o.coarsen;
    const uint64_t nx = (uint64_t)recipe->cells_x + 1u, nz = (uint64_t)recipe->cells_z + 1u;
    const uint64_t cn = ((uint64_t)(recipe->cells_x + c - 1u) / c + 1u) *
                        ((uint64_t)(recipe->cells_z + c - 1u) / c + 1u);
    return nx * nz * 6u * sizeof(float) + cn * (5u * sizeof(float) + 5u * sizeof(double));
}

void trn_node_evolve_key(XXH64_state_t *h, const trn_graph_node *n, const trn_node_type *t,
                         const trn_recipe *recipe, trn_erosion_quality quality)
{
    sp_params p;
    sp_read(n, t, recipe, quality, &p);
    const trn_evolve_options o = p.o;
    trn_key_f64(h, o.sp.sea_level);
    XXH64_update(h, &o.sp.seed, sizeof o.sp.seed);
    trn_key_f64(h, o.sp.dt);
    const uint32_t steps = o.sp.steps;
    XXH64_update(h, &steps, sizeof steps);
}

/* Samples an open border adds on each side: an eighth of the longer side, at least 16
 * evolution cells, a whole number of evolution cells (so the coarse grid keeps its alignment
 * with the map). */
static uint32_t open_pad(uint32_t cells_x, uint32_t cells_z, uint32_t coarsen)
{
    const uint32_t cells = cells_x > cells_z ? cells_x : cells_z;
    uint32_t evo = cells / coarsen / 8u;
    if (evo < 16u) evo = 16u;
    return evo * coarsen;
}

void trn_node_evolve_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                          trn_erosion_quality quality, trn_node_work_info *out)
{
    sp_params p;
    sp_read(n, t, recipe, quality, &p);
    const trn_evolve_options o = p.o;
    uint32_t coarsen, refine;
    sp_factors(&p, recipe->cells_x, recipe->cells_z, recipe->size_x, recipe->size_z, &coarsen,
               &refine);
    /* An open border runs on the grid grown past every edge. */
    const uint64_t grow = is(p.border, "open")
                              ? 2u * (uint64_t)open_pad(recipe->cells_x, recipe->cells_z, coarsen)
                              : 0u;
    const uint64_t gx = recipe->cells_x + grow, gz = recipe->cells_z + grow;
    const uint64_t cx = (gx * refine + o.coarsen - 1u) / o.coarsen + 1u;
    const uint64_t cz = (gz * refine + o.coarsen - 1u) / o.coarsen + 1u;
    const uint64_t samples = (gx + 1u) * (gz + 1u);
    /* A step (receivers, stack, area, incision, diffusion) measured at 0.5 droplet steps a
     * sample on 2049^2 and up to 2.2 on small grids routing many closed depressions: 4. */
    const uint64_t steps_work = trn_sat_mul(trn_sat_mul(cx * cz, o.sp.steps), 4u);
    /* Fine steps run on the output grid, after amplification (coarsened runs only). */
    const uint32_t fine = o.coarsen > 1 ? o.fine_steps : 0u;
    uint64_t fine_work = trn_sat_mul(trn_sat_mul(samples, fine), 4u);
    /* Cascade levels: grids 2, 4, ... times coarser than the output, cascade_steps each. */
    uint64_t cascade_samples = 0;
    for (uint32_t cc = o.coarsen, f = 2u; o.cascade_steps && cc >= 4u && cc % 2u == 0;
         cc /= 2u, f *= 2u)
        cascade_samples += (gx / f + 2u) * (gz / f + 2u);
    fine_work =
        trn_sat_add(fine_work, trn_sat_mul(trn_sat_mul(cascade_samples, o.cascade_steps), 4u));
    out->work = trn_sat_add(trn_sat_add(samples, steps_work), fine_work);
    snprintf(out->detail, sizeof out->detail,
             "%" PRIu64 " x %" PRIu64 " samples x %" PRIu32 " steps x 4 + %" PRIu64
             " samples x %" PRIu32 " fine steps x 4",
             cx, cz, o.sp.steps, samples, fine);
    out->param = p.steps_given ? "steps" : NULL;
}

/* The uplift factor per sample of the grid the run uses (the coarse one when coarsened, each
 * coarse sample the mean of the fine samples nearest to it, as trn_landscape_evolve averages
 * heights): the uplift mask, times 0.2 + 0.8 x the input's height scaled to 0..1 with
 * uplift_shape input (never 0, so low ground still rises and drains instead of ponding).
 * *out stays NULL when neither applies. */
static trn_status sp_uplift_mask(const trn_node_ctx *c, const sp_params *p, const trn_field *f,
                                 uint32_t coarsen, const float *mask, float **out, trn_error *err)
{
    *out = NULL;
    const bool by_height = is(p->uplift_shape, "input");
    if (!mask && !by_height) return TRN_OK;
    const size_t nx = (size_t)f->cells_x + 1u, nz = (size_t)f->cells_z + 1u;
    const uint32_t cx = (f->cells_x + coarsen - 1u) / coarsen;
    const uint32_t cz = (f->cells_z + coarsen - 1u) / coarsen;
    const size_t cnx = (size_t)cx + 1u, cn = cnx * ((size_t)cz + 1u);
    double lo = INFINITY, hi = -INFINITY;
    if (by_height) {
        /* Each thread a block of rows, then the blocks' extremes: the same two values. */
#pragma omp parallel
        {
            double tlo = INFINITY, thi = -INFINITY;
#pragma omp for schedule(static) nowait
            for (size_t j = 0; j < nz; j++)
                for (size_t k = j * nx; k < (j + 1u) * nx; k++) {
                    if (f->heights[k] < tlo) tlo = f->heights[k];
                    if (f->heights[k] > thi) thi = f->heights[k];
                }
#pragma omp critical(trn_uplift_extremes)
            {
                if (tlo < lo) lo = tlo;
                if (thi > hi) hi = thi;
            }
        }
    }
    double *sum = calloc(cn, sizeof *sum);
    uint32_t *cnt = calloc(cn, sizeof *cnt);
    float *m = malloc(cn * sizeof *m);
    size_t *first = malloc(((size_t)cz + 2u) * sizeof *first);
    if (!sum || !cnt || !m || !first) {
        free(sum);
        free(cnt);
        free(m);
        free(first);
        return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    const double sx = (double)cx / f->cells_x, sz = (double)cz / f->cells_z;
    /* The fine rows of each coarse row: a coarse row's sums are made by one thread, row by row
     * as one thread would, so threads cannot change them (uncoarsened, sz is 1: row j itself). */
    trn_rows_nearest_starts(nz, cz, sz, first);
#pragma omp parallel for schedule(dynamic, 4)
    for (size_t cj = 0; cj <= (size_t)cz; cj++)
        for (size_t j = first[cj]; j < first[cj + 1u]; j++)
            for (size_t i = 0; i < nx; i++) {
                const size_t k = j * nx + i;
                double v = mask ? mask[k] : 1.0;
                if (by_height) v *= hi > lo ? 0.2 + 0.8 * (f->heights[k] - lo) / (hi - lo) : 1.0;
                const size_t ci = coarsen > 1 ? (size_t)floor((double)i * sx + 0.5) : i;
                sum[cj * cnx + ci] += v;
                cnt[cj * cnx + ci]++;
            }
    for (size_t k = 0; k < cn; k++)
        m[k] = cnt[k] ? (float)(sum[k] / cnt[k]) : 0.0f;
    free(sum);
    free(cnt);
    free(first);
    *out = m;
    return TRN_OK;
}

/* The erodibility factor of rock_variation on an evolution grid of cells_x x cells_z cells over
 * the field's extent, its first sample at world (x0, z0) (world coordinates, so every output
 * grid sees the same rock):
 * 2^(v (2 noise - 1)), fbm of 4 octaves. NULL (and TRN_OK) when the rock is uniform. */
static trn_status sp_rock_mask(const trn_node_ctx *c, const sp_params *p, const trn_field *f,
                               uint32_t cells_x, uint32_t cells_z, double x0, double z0, float **out,
                               trn_error *err)
{
    *out = NULL;
    const double v = p->rock_variation;
    if (!(v > 0)) return TRN_OK;
    const double feature = p->rock_feature_size;
    const size_t nx = (size_t)cells_x + 1u, nz = (size_t)cells_z + 1u;
    float *m = malloc(nx * nz * sizeof *m);
    if (!m) return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    const uint64_t seed = trn_subseed(c->recipe->seed, "stream_power_rock");
    const double dx = f->size_x / cells_x, dz = f->size_z / cells_z;
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < nz; j++) {
        float *row = m + j * nx;
        trn_fractal_row(seed, TRN_PROFILE_FBM, 4, feature, 0.5, x0, dx, z0 + (double)j * dz, nx,
                        row);
        for (size_t i = 0; i < nx; i++)
            row[i] = (float)exp2(v * (2.0 * (double)row[i] - 1.0));
    }
    *out = m;
    return TRN_OK;
}

/* ---- open border ---- */

/* Sample a of a line of n values (stride apart) continued past its ends by point reflection
 * through the end sample (v(-k) = 2 v(0) - v(k)): slopes carry on across the end, so a valley
 * that meets it runs on and a rise keeps rising, as land beyond a map's edge would. */
static float odd_at(const float *line, size_t n, size_t stride, long a)
{
    const long last = (long)n - 1;
    if (a >= 0 && a <= last) return line[(size_t)a * stride];
    long k = a < 0 ? -a : 2 * last - a;
    if (k < 0) k = 0;
    if (k > last) k = last;
    const float end = line[(size_t)(a < 0 ? 0 : last) * stride];
    return 2.0f * end - line[(size_t)k * stride];
}

/* The field grown by pad samples on each side: odd continuation (odd true) or the nearest
 * edge value. NULL when out of memory. */
static float *pad_grid(const float *h, size_t nx, size_t nz, size_t pad, bool odd)
{
    const size_t px = nx + 2u * pad, pz = nz + 2u * pad;
    float *out = malloc(px * pz * sizeof *out);
    if (!out) return NULL;
    for (size_t j = 0; j < nz; j++)
        for (size_t i = 0; i < px; i++) {
            const long a = (long)i - (long)pad;
            const long ac = a < 0 ? 0 : a >= (long)nx ? (long)nx - 1 : a;
            out[(j + pad) * px + i] = odd ? odd_at(h + j * nx, nx, 1, a) : h[j * nx + (size_t)ac];
        }
    /* Then each column, rows past the ends, from the rows just grown. */
    for (size_t i = 0; i < px; i++) {
        const float *col = out + pad * px + i;
        for (size_t j = 0; j < pad; j++) {
            const long below = (long)j - (long)pad, above = (long)(nz + pad + j) - (long)pad;
            out[j * px + i] = odd ? odd_at(col, nz, px, below) : col[0];
            out[(nz + pad + j) * px + i] = odd ? odd_at(col, nz, px, above) : col[(nz - 1u) * px];
        }
    }
    return out;
}

/* The middle nx x nz of a grid grown by pad on each side, into out (which may be h). */
static void crop_grid(const float *h, size_t nx, size_t nz, size_t pad, float *out)
{
    const size_t px = nx + 2u * pad;
    for (size_t j = 0; j < nz; j++)
        memmove(out + j * nx, h + (j + pad) * px + pad, nx * sizeof *out);
}

trn_status trn_node_evolve(const trn_node_ctx *c, const trn_graph_node *node,
                           const trn_node_type *type, const trn_field *input,
                           const float *uplift_mask, float **heights_out, float **channels_out,
                           char *note, size_t note_size, trn_error *err)
{
    *heights_out = *channels_out = NULL;
    sp_params p;
    sp_read(node, type, c->recipe, c->quality, &p);
    trn_evolve_options o = p.o;
    /* A tiled run with a disk tile cache: the fine steps on the output grid keep their state in
     * tiles there (the same bytes; memory that does not grow with the grid). */
    if (c->solve_tile && c->solve_dir) {
        o.fine_tile = c->solve_tile;
        o.fine_dir = c->solve_dir;
        o.fine_comm = c->solve_comm;
    }
    /* The result by bands (c->solve_bands): each process makes only its rows of it, where
     * what follows the fine steps reads a sample alone (no lakes, an open border's crop or a
     * finer evolution grid brought down); the extremes of the relief map are agreed. */
    const bool bands = c->solve_bands && c->solve_comm && o.fine_tile && !is(p.border, "open") &&
                       !is(p.lakes, "fill") && !is(p.lakes, "breach");
    /* The scaled copy below is this node's own: the evolution may free it early. */
    o.free_input = true;
    /* An open border runs on the input grown past the map (base level at its far border,
     * following the land down) and cuts the result back to the map before the relief map. */
    const bool open = is(p.border, "open");
    const size_t n_map = trn_field_sample_count(input);
    const size_t map_nx = (size_t)input->cells_x + 1u, map_nz = (size_t)input->cells_z + 1u;
    double in_lo = INFINITY, in_hi = -INFINITY;
    /* min and max are exact: any thread count finds the same pair. */
#pragma omp parallel for schedule(static) reduction(min : in_lo) reduction(max : in_hi)
    for (size_t k = 0; k < n_map; k++) {
        if (input->heights[k] < in_lo) in_lo = input->heights[k];
        if (input->heights[k] > in_hi) in_hi = input->heights[k];
    }
    trn_field f = *input;
    size_t pad = 0;
    float *grown = NULL, *grown_mask = NULL;
    if (open) {
        uint32_t coarse, fine;
        sp_factors(&p, f.cells_x, f.cells_z, f.size_x, f.size_z, &coarse, &fine);
        pad = open_pad(f.cells_x, f.cells_z, coarse);
        grown = pad_grid(input->heights, map_nx, map_nz, pad, true);
        grown_mask = uplift_mask ? pad_grid(uplift_mask, map_nx, map_nz, pad, false) : NULL;
        if (!grown || (uplift_mask && !grown_mask)) {
            free(grown);
            free(grown_mask);
            return trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
        }
        f.size_x *= (double)(f.cells_x + 2u * pad) / (double)f.cells_x;
        f.size_z *= (double)(f.cells_z + 2u * pad) / (double)f.cells_z;
        f.cells_x += 2u * (uint32_t)pad;
        f.cells_z += 2u * (uint32_t)pad;
        f.heights = grown;
        uplift_mask = grown_mask;
        o.sp.fixed_border = false;
        o.sp.border_outlets = false;
    }
    const size_t n = trn_field_sample_count(&f);
    /* The default (0): the graph has set OpenMP's thread count to c->threads, and stream power
     * keeps grids under 2^17 samples on one thread, where a step's dozen short parallel stages
     * cost more in waiting than they save (the evolution grid is often 257^2 whatever the
     * output grid; 513^2 runs on threads). The result is the same on any thread count. */
    o.sp.threads = 0;
    uint32_t coarsen, refine;
    sp_factors(&p, f.cells_x, f.cells_z, f.size_x, f.size_z, &coarsen, &refine);
    /* Only where the output grid's fine steps run in tiles (else their result is whole, and
     * the relief map's extremes need no agreeing). */
    const trn_flow_routing fine_routing =
        o.fine_routing != TRN_ROUTING_SAME ? o.fine_routing : o.sp.routing;
    if (bands && refine == 1 && o.coarsen > 1 && o.fine_steps &&
        fine_routing != TRN_ROUTING_MFD && !(o.sp.critical_slope > 0) &&
        !(o.sp.creep_slope > 0) && !(o.sp.sea_surface && isfinite(o.sp.sea_level)))
        o.fine_bands = c->solve_bands;
    /* reference_cell: run on a copy scaled by s in all three axes, which reads the parameters
     * at the reference scale (slopes and the drainage pattern do not change with s). */
    double cell = f.size_x / f.cells_x;
    if (f.size_z / f.cells_z > cell) cell = f.size_z / f.cells_z;
    const double ref = p.reference_cell;
    const double s = ref > 0 ? ref / (cell * o.coarsen / refine) : 1.0;
    const size_t nx = (size_t)f.cells_x + 1u, nz = (size_t)f.cells_z + 1u;
    const size_t wnx = (size_t)f.cells_x * refine + 1u, wnz = (size_t)f.cells_z * refine + 1u;
    const size_t wn = wnx * wnz;
    trn_field work;
    trn_status st = trn_field_init(&work, f.cells_x * refine, f.cells_z * refine, f.size_x * s,
                                   f.size_z * s, err);
    if (st) {
        free(grown);
        free(grown_mask);
        return trn_node_wrap(c, err, st);
    }
#pragma omp parallel for schedule(static)
    for (size_t j = 0; j < wnz; j++)
        for (size_t i = 0; i < wnx; i++)
            work.heights[j * wnx + i] =
                refine > 1 ? (float)(s * cubic_at(f.heights, nx, nz, (double)i / refine,
                                                  (double)j / refine))
                           : (float)(s * f.heights[j * wnx + i]);
    if (isfinite(o.sp.sea_level)) o.sp.sea_level *= s;
    o.sp.sea_surface_depth *= s; /* metres, read at the same scale */
    float *shape = NULL;
    if (refine > 1) {
        /* The mask is per output sample: on the finer evolution grid it is read bilinearly
         * between them (positive weights, so it stays within 0..1). */
        float *fine_mask = NULL;
        if (uplift_mask) {
            fine_mask = malloc(wn * sizeof *fine_mask);
            if (!fine_mask) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
            for (size_t j = 0; fine_mask && j < wnz; j++)
                for (size_t i = 0; i < wnx; i++)
                    fine_mask[j * wnx + i] = (float)bilinear_at(
                        uplift_mask, nx, nz, (double)i / refine, (double)j / refine);
        }
        trn_field scaled = work;
        if (!st) st = sp_uplift_mask(c, &p, &scaled, 1, fine_mask, &shape, err);
        free(fine_mask);
    } else {
        st = sp_uplift_mask(c, &p, &f, o.coarsen, uplift_mask, &shape, err);
    }
    float *rock = NULL;
    if (!st) {
        const uint32_t ec = refine > 1 ? 1u : o.coarsen;
        /* World coordinates of the map's own samples: an open border's grown grid starts pad
         * samples before the map. */
        const double x0 = -(double)pad * (input->size_x / input->cells_x);
        const double z0 = -(double)pad * (input->size_z / input->cells_z);
        st = sp_rock_mask(
            c, &p, &f, refine > 1 ? f.cells_x * refine : (f.cells_x + ec - 1u) / ec,
            refine > 1 ? f.cells_z * refine : (f.cells_z + ec - 1u) / ec, x0, z0, &rock, err);
    }
    float *area = st ? NULL : malloc(wn * sizeof *area);
    if (!area) {
        free(rock);
        free(shape);
        free(grown);
        free(grown_mask);
        trn_field_dispose(&work);
        return st ? st : trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    o.sp.uplift_mask = shape;
    o.sp.erodibility_mask = rock;
    o.sp.drainage_area = area;
    trn_stream_power_report rep;
    st = trn_landscape_evolve(&work, &o, &rep, trn_node_bridge, (void *)c->progress, err);
    free(shape);
    free(rock);
    free(grown_mask);
    grown_mask = NULL;
    float *heights = NULL, *channels = NULL;
    if (!st) {
        heights = refine > 1 ? malloc(n * sizeof *heights) : work.heights;
        /* On the output grid the drainage area becomes the channels in place. */
        channels = refine > 1 ? malloc(n * sizeof *channels) : area;
        if (!heights || !channels) st = trn_node_fail(c, err, TRN_ERR_NO_MEMORY, "out of memory");
    }
    if (st) {
        if (heights != work.heights) free(heights);
        if (channels != area) free(channels);
        free(area);
        free(grown);
        trn_field_dispose(&work);
        return trn_node_wrap(c, err, st);
    }
    if (refine > 1) {
        refine_down(work.heights, wnx, wnz, refine, heights, nx, nz);
        refine_down(area, wnx, wnz, refine, channels, nx, nz);
        trn_field_dispose(&work);
    } else {
        area = NULL; /* it is channels */
        work.heights = NULL;
    }
    free(area);
    if (open) {
        /* Cut back to the map (in place: the crop only ever moves samples forward). */
        crop_grid(heights, map_nx, map_nz, pad, heights);
        crop_grid(channels, map_nx, map_nz, pad, channels);
        free(grown);
        f = *input;
    }
    /* By bands, this process's rows only, the extremes over every process's (a min and a max:
     * the order does not matter). */
    const int me = o.fine_bands ? trn_comm_rank(c->solve_comm) : 0;
    const size_t k0 = o.fine_bands ? (size_t)o.fine_bands[me] * map_nx : 0;
    const size_t n_out = o.fine_bands ? (size_t)o.fine_bands[me + 1] * map_nx : n_map;
    double lo = INFINITY, hi = -INFINITY;
    const double channel_area = o.channel_area;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
    for (size_t k = k0; k < n_out; k++) {
        const double a = (double)channels[k] / channel_area;
        channels[k] = (float)(a > 1.0 ? 1.0 : a);
        if (heights[k] < lo) lo = heights[k];
        if (heights[k] > hi) hi = heights[k];
    }
    if (o.fine_bands) {
        st = trn_comm_agree(c->solve_comm, TRN_OK, err);
        const double mine[2] = {lo, hi};
        void *all = NULL;
        uint64_t *counts = NULL;
        if (!st) st = trn_comm_allgather(c->solve_comm, mine, sizeof mine, &all, &counts, err);
        for (int q = 0; !st && q < trn_comm_size(c->solve_comm); q++) {
            double v[2];
            memcpy(v, (const uint8_t *)all + (size_t)q * sizeof v, sizeof v);
            if (v[0] < lo) lo = v[0];
            if (v[1] > hi) hi = v[1];
        }
        free(all);
        free(counts);
        if (st) {
            free(heights);
            free(channels);
            return trn_node_wrap(c, err, st);
        }
    }
    /* relief input: the evolved shape stretched onto the input's height range by a monotone
     * map (it keeps every drainage path and adds no pit); with a sea inside the range the map
     * is anchored there, so the sea floor and the coast (base level) stay where they were.
     * Else the reference scale is undone. */
    const bool keep = is(p.relief, "input") && hi > lo;
    const double sea = o.sp.sea_level; /* scaled by s */
    const bool anchor = keep && isfinite(sea) && sea >= lo && sea < hi && sea / s < in_hi;
    double gain = keep ? (in_hi - in_lo) / (hi - lo) : 1.0 / s;
    double base = keep ? in_lo : 0.0, from = keep ? lo : 0.0;
    if (anchor) {
        gain = (in_hi - sea / s) / (hi - sea);
        base = sea / s;
        from = sea;
    }
    if (keep || s != 1.0) {
#pragma omp parallel for schedule(static)
        for (size_t k = k0; k < n_out; k++)
            heights[k] = anchor && heights[k] <= sea ? (float)(heights[k] / s)
                                                     : (float)(base + (heights[k] - from) * gain);
    }
    const char *lakes = p.lakes;
    if (is(lakes, "fill") || is(lakes, "breach")) {
        trn_field out_f = f;
        out_f.heights = heights;
        trn_drainage d;
        st = trn_drainage_compute(&out_f, isfinite(sea) ? sea / s : NAN, &d, NULL, NULL, err);
        if (!st) {
            if (lakes[0] == 'f')
                memcpy(heights, d.filled, n_out * sizeof *heights);
            else
                st = trn_drainage_breach(&out_f, &d, err);
            trn_drainage_dispose(&d);
        }
        if (st) {
            free(heights);
            free(channels);
            return trn_node_wrap(c, err, st);
        }
    }
    *heights_out = heights;
    *channels_out = channels;
    snprintf(note, note_size,
             "%" PRIu32 " steps on %zu x %zu samples, %" PRIu64
             " closed depressions routed, last step mean change %.3g (0 at steady state)",
             rep.steps, refine > 1 ? wnx : (size_t)(f.cells_x + o.coarsen - 1u) / o.coarsen + 1u,
             refine > 1 ? wnz : (size_t)(f.cells_z + o.coarsen - 1u) / o.coarsen + 1u,
             rep.pits_routed, rep.last_mean_change);
    if (open) {
        const size_t used = strlen(note);
        if (used < note_size)
            snprintf(note + used, note_size - used, "; open border: %zu samples past each edge",
                     pad);
    }
    if (o.coarsen > 1 && o.fine_steps) {
        const size_t used = strlen(note);
        if (used < note_size)
            snprintf(note + used, note_size - used, "; then %" PRIu32 " steps on %zu x %zu",
                     o.fine_steps, nx, nz);
    }
    return TRN_OK;
}

static trn_status sp_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    const trn_field f = trn_node_field_view(r, c->inputs[0]);
    const trn_gout *um = c->inputs[1];
    float *heights, *channels;
    trn_status st = trn_node_evolve(c, c->node, c->type, &f, um ? um->values->data : NULL, &heights,
                                    &channels, r->note, sizeof r->note, err);
    if (st) return st;
    st = trn_node_set_floats(c, r, 0, TRN_PIN_HEIGHTFIELD, heights, err);
    if (!st)
        st = trn_node_set_floats(c, r, 1, TRN_PIN_MASK, channels, err);
    else
        free(channels);
    return st;
}

const trn_node_module trn_node_stream_power = {
    TRN_SPEC("stream_power", "Stream Power", "simulation",
             "Landscape evolution: uplift against stream-power incision (Braun and Willett 2013) "
             "over flow directions free of the grid (Rho8 or MFD) with hillslope diffusion; lakes "
             "drain over their sills.",
             2, in_sp, out_sp, p_sp, true),
    40.0,
    false,
    sp_compute,
    trn_node_evolve_key,
    trn_node_evolve_work,
    NULL,
    trn_reach_global};
