/* Surface context and biome rules: slope, substrate classes, band tests and rule picking. */
#include <math.h>
#include <stddef.h>

#include "terrane/generate.h"

/* The same constant and operation order as src/analysis/render.c, so interior slopes are the very
 * angles `terrane render --mode slope` draws. */
#define CLASSIFY_PI 3.14159265358979323846

/* ---- slope ---- */

/* Horn's gradient over a 3x3 window of field samples (rows j-1, j, j+1 given as pointers and
 * columns as indices), in render.c's picture orientation: north is row j+1. */
static double horn_degrees(const float *south, const float *mid, const float *north, size_t w,
                           size_t c, size_t e, double inv_ew, double inv_ns)
{
    const double w0 = north[w], w1 = north[c], w2 = north[e];
    const double w3 = mid[w], w5 = mid[e];
    const double w6 = south[w], w7 = south[c], w8 = south[e];
    const double x = ((w0 + w3 + w3 + w6) - (w2 + w5 + w5 + w8)) * inv_ew;
    const double y = ((w0 + w1 + w1 + w2) - (w6 + w7 + w7 + w8)) * inv_ns;
    /* gdaldem's z / 8 with z_factor 1 (each Horn sum is 8 times the slope component). */
    return atan(0.125 * sqrt(x * x + y * y)) * (180.0 / CLASSIFY_PI);
}

static void cell_inverses(const trn_field *field, double *inv_ew, double *inv_ns)
{
    const double ew = field->size_x / field->cells_x, ns = field->size_z / field->cells_z;
    *inv_ew = 1.0 / ew;
    *inv_ns = 1.0 / ns;
}

static void row_pointers(const trn_field *field, uint32_t j, const float **south, const float **mid,
                         const float **north)
{
    const size_t nx = (size_t)field->cells_x + 1u;
    const uint32_t js = j > 0 ? j - 1 : 0, jn = j < field->cells_z ? j + 1 : field->cells_z;
    *south = field->heights + (size_t)js * nx;
    *mid = field->heights + (size_t)j * nx;
    *north = field->heights + (size_t)jn * nx;
}

double trn_field_slope_at(const trn_field *field, uint32_t i, uint32_t j)
{
    double inv_ew, inv_ns;
    cell_inverses(field, &inv_ew, &inv_ns);
    const float *south, *mid, *north;
    row_pointers(field, j, &south, &mid, &north);
    const size_t w = i > 0 ? i - 1u : 0u, e = i < field->cells_x ? i + 1u : field->cells_x;
    return horn_degrees(south, mid, north, w, i, e, inv_ew, inv_ns);
}

void trn_field_slope_row(const trn_field *field, uint32_t j, double *out)
{
    double inv_ew, inv_ns;
    cell_inverses(field, &inv_ew, &inv_ns);
    const float *south, *mid, *north;
    row_pointers(field, j, &south, &mid, &north);
    const size_t last = field->cells_x;
    out[0] = horn_degrees(south, mid, north, 0, 0, 1, inv_ew, inv_ns);
    for (size_t i = 1; i < last; i++)
        out[i] = horn_degrees(south, mid, north, i - 1, i, i + 1, inv_ew, inv_ns);
    out[last] = horn_degrees(south, mid, north, last - 1, last, last, inv_ew, inv_ns);
}

/* ---- substrate ---- */

trn_substrate trn_substrate_classify(double height, double slope, double water_distance,
                                     double sea_level)
{
    /* Order matters: standing in water beats steepness, and a cliff at the shore is rock. */
    if (water_distance <= TRN_WET_DISTANCE) return TRN_SUBSTRATE_WET;
    if (slope >= TRN_ROCK_SLOPE) return TRN_SUBSTRATE_ROCK;
    if (height - sea_level <= TRN_SAND_HEIGHT && slope < TRN_SAND_SLOPE) return TRN_SUBSTRATE_SAND;
    return TRN_SUBSTRATE_SOIL;
}

/* ---- rules ---- */

/* Inclusive containment; NaN is outside every band. */
static trn_band_result band_test(const trn_band *band, double value)
{
    if (!band->set) return TRN_BAND_UNCONSTRAINED;
    return band->min <= value && value <= band->max ? TRN_BAND_INSIDE : TRN_BAND_OUTSIDE;
}

static double rule_strength(const trn_rule *rule, double height)
{
    if (!(rule->blend > 0.0) || !rule->elevation.set) return 1.0;
    const double s = (height - rule->elevation.min) / rule->blend;
    if (!(s > 0.0)) return 0.0; /* also NaN */
    return s < 1.0 ? s : 1.0;
}

void trn_rule_test_sample(const trn_rule *rule, const trn_sample_context *ctx, trn_rule_test *out)
{
    out->bands[TRN_RULE_BAND_ELEVATION] = band_test(&rule->elevation, ctx->height);
    out->bands[TRN_RULE_BAND_SLOPE] = band_test(&rule->slope, ctx->slope);
    out->bands[TRN_RULE_BAND_MOISTURE] = band_test(&rule->moisture, ctx->moisture);
    out->bands[TRN_RULE_BAND_WATER_DISTANCE] =
        band_test(&rule->water_distance, ctx->water_distance);
    if (rule->substrate_mask == 0)
        out->bands[TRN_RULE_BAND_SUBSTRATE] = TRN_BAND_UNCONSTRAINED;
    else
        out->bands[TRN_RULE_BAND_SUBSTRATE] =
            (unsigned)ctx->substrate < 32u && (rule->substrate_mask >> ctx->substrate) & 1u
                ? TRN_BAND_INSIDE
                : TRN_BAND_OUTSIDE;
    out->first_rejected = -1;
    for (int b = 0; b < TRN_RULE_BAND_COUNT; b++)
        if (out->bands[b] == TRN_BAND_OUTSIDE) {
            out->first_rejected = b;
            break;
        }
    out->matched = out->first_rejected < 0;
    out->strength = rule_strength(rule, ctx->height);
}

/* The match alone, without filling a report: the per-sample hot path of generation. */
static bool rule_matches(const trn_rule *rule, const trn_sample_context *ctx)
{
    if (band_test(&rule->elevation, ctx->height) == TRN_BAND_OUTSIDE) return false;
    if (band_test(&rule->slope, ctx->slope) == TRN_BAND_OUTSIDE) return false;
    if (band_test(&rule->moisture, ctx->moisture) == TRN_BAND_OUTSIDE) return false;
    if (band_test(&rule->water_distance, ctx->water_distance) == TRN_BAND_OUTSIDE) return false;
    if (rule->substrate_mask != 0 &&
        !((unsigned)ctx->substrate < 32u && (rule->substrate_mask >> ctx->substrate) & 1u))
        return false;
    return true;
}

int trn_rules_pick(const trn_rule *rules, uint32_t rule_count, const trn_sample_context *ctx)
{
    return trn_rules_pick_active(rules, rule_count, NULL, ctx);
}

int trn_rules_pick_active(const trn_rule *rules, uint32_t rule_count, const uint8_t *active,
                          const trn_sample_context *ctx)
{
    int best = -1;
    double best_priority = 0.0, best_strength = 0.0;
    for (uint32_t r = 0; r < rule_count; r++) {
        if ((active && !active[r]) || !rule_matches(&rules[r], ctx)) continue;
        const double strength = rule_strength(&rules[r], ctx->height);
        /* Strictly greater only: a full tie keeps the earlier rule. */
        if (best < 0 || rules[r].priority > best_priority ||
            (rules[r].priority == best_priority && strength > best_strength)) {
            best = (int)r;
            best_priority = rules[r].priority;
            best_strength = strength;
        }
    }
    return best;
}
