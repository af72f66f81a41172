/* Landform heightfields: domain warp, heading and stretch, then fbm or ridged relief. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/progress.h"
#include "core/rows.h"
#include "gen/noise_internal.h"
#include "terrane/generate.h"

/* Samples per pass through the noise kernels. */
#define ROW_BLOCK 256u
/* Beyond 2^22 a float keeps at most one bit of a lattice coordinate's fraction. */
#define PRECISION_LIMIT 4194304.0
#define LANDFORM_STAGE "landform"

/* Everything fill_row needs, derived once from the landform. */
typedef struct landform_plan {
    trn_fractal_params relief;         /* channel landform */
    trn_fractal_params warp_x, warp_z; /* channel landform_warp: one octave each, signed */
    bool warped;
    double warp_amplitude;
    double cos_heading, sin_heading, inv_stretch;
    double base_height, height_variation;
    double size_x, size_z, cells_x, cells_z; /* the world's */
    size_t samples_x;                        /* the field's (a window's on a tile) */
    uint32_t x0, z0;                         /* world sample of the field's first sample */
} landform_plan;

static const char *landform_name(const trn_landform *landform)
{
    return landform->name ? landform->name : "(unnamed)";
}

static trn_status bad_control(const trn_landform *landform, const char *control,
                              const char *expected, double found, trn_error *err)
{
    return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                         "landform \"%s\": %s must be %s, found %g", landform_name(landform),
                         control, expected, found);
}

/* The same ranges as recipe validation; repeated here because the call takes any landform. */
static trn_status check_landform(const trn_landform *landform, trn_error *err)
{
    if (landform->profile != TRN_PROFILE_FBM && landform->profile != TRN_PROFILE_RIDGED)
        return bad_control(landform, "profile", "fbm (0) or ridged (1)", (double)landform->profile,
                           err);
    if (!isfinite(landform->base_height))
        return bad_control(landform, "base_height", "finite", landform->base_height, err);
    if (!(landform->height_variation >= 0.0) || !isfinite(landform->height_variation))
        return bad_control(landform, "height_variation", "finite and >= 0",
                           landform->height_variation, err);
    if (fabs(landform->base_height) + landform->height_variation > (double)FLT_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landform \"%s\": heights up to %g do not fit in a float height "
                             "(largest %g)",
                             landform_name(landform),
                             fabs(landform->base_height) + landform->height_variation,
                             (double)FLT_MAX);
    if (!(landform->feature_size > 0.0) || !isfinite(landform->feature_size))
        return bad_control(landform, "feature_size", "positive and finite", landform->feature_size,
                           err);
    if (!(landform->roughness >= 0.0 && landform->roughness <= 1.0))
        return bad_control(landform, "roughness", "in [0, 1]", landform->roughness, err);
    if (landform->octaves < 1 || landform->octaves > TRN_NOISE_MAX_OCTAVES)
        return bad_control(landform, "octaves", "a whole number 1..16", (double)landform->octaves,
                           err);
    if (!(landform->warp_amplitude >= 0.0) || !isfinite(landform->warp_amplitude))
        return bad_control(landform, "warp_amplitude", "finite and >= 0", landform->warp_amplitude,
                           err);
    if (!(landform->warp_feature_size > 0.0) || !isfinite(landform->warp_feature_size))
        return bad_control(landform, "warp_feature_size", "positive and finite",
                           landform->warp_feature_size, err);
    if (!(landform->stretch > 0.0) || !isfinite(landform->stretch))
        return bad_control(landform, "stretch", "positive and finite", landform->stretch, err);
    if (!isfinite(landform->heading))
        return bad_control(landform, "heading", "finite", landform->heading, err);
    return TRN_OK;
}

static void plan_make(landform_plan *plan, const trn_landform *landform, uint64_t world_seed,
                      const trn_field *field)
{
    memset(plan, 0, sizeof *plan);
    trn_fractal_params_init(&plan->relief, trn_subseed_of(world_seed, TRN_CHANNEL_LANDFORM),
                            landform->profile, landform->octaves, landform->feature_size,
                            landform->roughness);
    /* A zero amplitude skips the warp: the coordinates are then exactly the unwarped ones
     * (x + 0 * n would be too, but costs two noise fields). */
    plan->warped = landform->warp_amplitude > 0.0;
    plan->warp_amplitude = landform->warp_amplitude;
    uint64_t warp_seed = trn_subseed_of(world_seed, TRN_CHANNEL_LANDFORM_WARP);
    trn_fractal_params_init(&plan->warp_x, warp_seed, TRN_PROFILE_FBM, 1,
                            landform->warp_feature_size, 0.5);
    trn_fractal_params_init(&plan->warp_z, warp_seed + 1u, TRN_PROFILE_FBM, 1,
                            landform->warp_feature_size, 0.5);
    plan->warp_x.signed_output = true;
    plan->warp_z.signed_output = true;
    /* Rotating the sample by -heading turns the heading direction into the noise's +u axis,
     * where dividing by stretch lengthens the features. At heading 0 cos is exactly 1 and sin
     * exactly 0, so the coordinates pass through unchanged. */
    const double radians = landform->heading * (3.14159265358979323846 / 180.0);
    plan->cos_heading = cos(radians);
    plan->sin_heading = sin(radians);
    plan->inv_stretch = 1.0 / landform->stretch;
    plan->base_height = landform->base_height;
    plan->height_variation = landform->height_variation;
    plan->size_x = field->size_x;
    plan->size_z = field->size_z;
    plan->cells_x = (double)field->cells_x;
    plan->cells_z = (double)field->cells_z;
    plan->samples_x = trn_grid_samples_x(field->cells_x);
}

/* Heights of row j. Each sample depends only on (i, j) and the plan, so rows can go to any
 * thread. Sample (i, j) sits at x = i * size_x / cells_x, z = j * size_z / cells_z, computed
 * exactly so, as the generator and explain compute it. */
static void fill_row(const landform_plan *plan, uint32_t j, float *heights)
{
    double x[ROW_BLOCK], z[ROW_BLOCK], u[ROW_BLOCK], v[ROW_BLOCK];
    float shift_x[ROW_BLOCK], shift_z[ROW_BLOCK], value[ROW_BLOCK];
    const double row_z = (double)(j + plan->z0) * plan->size_z / plan->cells_z;
    const double c = plan->cos_heading, s = plan->sin_heading, inv_stretch = plan->inv_stretch;
    for (size_t i0 = 0; i0 < plan->samples_x; i0 += ROW_BLOCK) {
        size_t n = plan->samples_x - i0 < ROW_BLOCK ? plan->samples_x - i0 : ROW_BLOCK;
        /* base + (double)k is exactly (double)(x0 + i0 + k); int32 converts in vector lanes. */
        const double base = (double)((size_t)plan->x0 + i0);
        for (size_t k = 0; k < n; k++) {
            x[k] = (base + (double)(int32_t)k) * plan->size_x / plan->cells_x;
            z[k] = row_z;
        }
        if (plan->warped) {
            /* Both displacements are sampled at the unwarped position. */
            trn_fractal_points(&plan->warp_x, x, z, n, shift_x);
            trn_fractal_points(&plan->warp_z, x, z, n, shift_z);
            const double a = plan->warp_amplitude;
            for (size_t k = 0; k < n; k++) {
                x[k] = x[k] + a * (double)shift_x[k];
                z[k] = z[k] + a * (double)shift_z[k];
            }
        }
        for (size_t k = 0; k < n; k++) {
            u[k] = (x[k] * c + z[k] * s) * inv_stretch;
            v[k] = z[k] * c - x[k] * s;
        }
        trn_fractal_points(&plan->relief, u, v, n, value);
        for (size_t k = 0; k < n; k++)
            heights[i0 + k] =
                (float)(plan->base_height + plan->height_variation * (double)value[k]);
    }
}

/* Rows to fill before a second thread helps (a row of a few hundred samples is microseconds). */
#define LANDFORM_PARALLEL_ROWS 64u

typedef struct fill_ctx {
    const landform_plan *plan;
    float *heights;
} fill_ctx;

static void fill_row_task(void *ctx, size_t row, int thread)
{
    (void)thread;
    const fill_ctx *c = ctx;
    fill_row(c->plan, (uint32_t)row, c->heights + row * c->plan->samples_x);
}

trn_status trn_landform_fill(const trn_landform *landform, uint64_t world_seed, trn_field *field,
                             trn_progress_fn progress, void *user, trn_error *err)
{
    trn_sample_window whole;
    memset(&whole, 0, sizeof whole);
    if (field) {
        whole.world_cells_x = field->cells_x;
        whole.world_cells_z = field->cells_z;
        whole.world_size_x = field->size_x;
        whole.world_size_z = field->size_z;
    }
    return trn_landform_fill_window(landform, world_seed, field, &whole, progress, user, err);
}

trn_status trn_landform_fill_window(const trn_landform *landform, uint64_t world_seed,
                                    trn_field *field, const trn_sample_window *window,
                                    trn_progress_fn progress, void *user, trn_error *err)
{
    if (!landform || !field)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "trn_landform_fill: the landform and the field are required");
    if (!field->heights || field->cells_x < 1 || field->cells_z < 1 ||
        field->cells_x == UINT32_MAX || field->cells_z == UINT32_MAX)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landform \"%s\": the field needs allocated heights and 1 to "
                             "4294967294 cells each way, found %u x %u cells%s",
                             landform_name(landform), field->cells_x, field->cells_z,
                             field->heights ? "" : " without heights");
    if (!(field->size_x > 0.0) || !(field->size_z > 0.0) || !isfinite(field->size_x) ||
        !isfinite(field->size_z))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landform \"%s\": the field's size must be positive and finite, "
                             "found %g x %g",
                             landform_name(landform), field->size_x, field->size_z);
    trn_status st = check_landform(landform, err);
    if (st) return st;

    if (!window || window->world_cells_x < 1 || window->world_cells_z < 1 ||
        window->x0 > window->world_cells_x || window->z0 > window->world_cells_z ||
        field->cells_x > window->world_cells_x - window->x0 ||
        field->cells_z > window->world_cells_z - window->z0 || !(window->world_size_x > 0.0) ||
        !(window->world_size_z > 0.0))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "landform \"%s\": the field's window must lie inside the world grid",
                             landform_name(landform));
    landform_plan plan;
    plan_make(&plan, landform, world_seed, field);
    plan.size_x = window->world_size_x;
    plan.size_z = window->world_size_z;
    plan.cells_x = (double)window->world_cells_x;
    plan.cells_z = (double)window->world_cells_z;
    plan.x0 = window->x0;
    plan.z0 = window->z0;
    const size_t rows = (size_t)field->cells_z + 1u;
    trn_progress pr = trn_progress_make(progress, user);
    if (trn_progress_report(&pr, 0.0, LANDFORM_STAGE)) goto cancelled;
    /* Each thread one block of whole rows; a row's heights depend only on its index, so the
     * result is the same on any thread count. */
    fill_ctx fc = {&plan, field->heights};
    if (trn_rows_run(rows, 0, LANDFORM_PARALLEL_ROWS, fill_row_task, &fc, &pr, LANDFORM_STAGE))
        goto cancelled;
    return TRN_OK;
cancelled:
    return trn_error_set(err, TRN_ERR_CANCELLED, NULL, -1, "landform \"%s\": cancelled",
                         landform_name(landform));
}

/* ---- the sampling-domain diagnostic ---- */

/* Largest |u| or |v| the relief samples, in world units: the transform is linear, so over the
 * terrain grown by the warp amplitude on every side it peaks at a corner. */
static double sampling_reach(const trn_landform *landform, double size_x, double size_z)
{
    const double radians = landform->heading * (3.14159265358979323846 / 180.0);
    const double c = cos(radians), s = sin(radians), a = landform->warp_amplitude;
    const double xs[2] = {-a, size_x + a}, zs[2] = {-a, size_z + a};
    double reach = 0.0;
    for (int i = 0; i < 2; i++) {
        for (int k = 0; k < 2; k++) {
            double u = fabs((xs[i] * c + zs[k] * s) / landform->stretch);
            double v = fabs(zs[k] * c - xs[i] * s);
            if (u > reach) reach = u;
            if (v > reach) reach = v;
        }
    }
    return reach;
}

bool trn_landform_precision_check(const trn_landform *landform, double size_x, double size_z,
                                  char *msg, size_t msg_size)
{
    if (msg && msg_size) msg[0] = '\0';
    if (!landform || !(landform->feature_size > 0.0) || !(landform->stretch > 0.0) ||
        !(landform->warp_feature_size > 0.0) || landform->octaves < 1)
        return false;
    const char *name = landform_name(landform);
    const uint32_t octaves = landform->octaves;
    const double reach = sampling_reach(landform, fabs(size_x), fabs(size_z));
    const double finest = reach * ldexp(1.0, (int)octaves - 1) / landform->feature_size;
    const double warp_reach = landform->warp_amplitude > 0.0
                                  ? (fabs(size_x) > fabs(size_z) ? fabs(size_x) : fabs(size_z)) /
                                        landform->warp_feature_size
                                  : 0.0;
    if (finest > PRECISION_LIMIT) {
        /* The most octaves that keep the finest one within the limit, and the feature size
         * that keeps all of them. */
        uint32_t keep = 0;
        while (keep < octaves &&
               reach * ldexp(1.0, (int)keep) / landform->feature_size <= PRECISION_LIMIT)
            keep++;
        char octave_advice[96] = "";
        if (keep >= 1)
            snprintf(octave_advice, sizeof octave_advice, "at most %u octave%s or ", keep,
                     keep == 1 ? "" : "s");
        char warp_note[64] = "";
        if (landform->warp_amplitude > 0.0)
            snprintf(warp_note, sizeof warp_note, " warped by up to %g", landform->warp_amplitude);
        if (msg && msg_size)
            snprintf(
                msg, msg_size,
                "landform \"%s\": the finest of its %u octaves samples noise lattice "
                "coordinates up to %.4g on a %g x %g terrain%s, beyond 2^22 (4194304) where float "
                "coordinates lose their fraction. Heights stay valid (each coordinate is "
                "split into a whole cell and a 32-bit fraction in double precision)%s, but "
                "that detail is far finer than any sample spacing: use %sa feature_size of "
                "at least %.6g%s.",
                name, octaves, finest, size_x, size_z, warp_note,
                finest >= 2147483648.0 ? " and that octave's lattice repeats every 2^32 cells" : "",
                octave_advice, landform->feature_size * finest / PRECISION_LIMIT,
                landform->warp_amplitude > 0.0
                    ? ", or a smaller warp_amplitude"
                    : (landform->stretch < 1.0 ? ", or a stretch nearer 1" : ""));
        return true;
    }
    if (warp_reach > PRECISION_LIMIT) {
        if (msg && msg_size)
            snprintf(msg, msg_size,
                     "landform \"%s\": its warp samples noise lattice coordinates up to %.4g on "
                     "a %g x %g terrain (size / warp_feature_size %g), beyond 2^22 (4194304) "
                     "where float coordinates lose their fraction. Heights stay valid, but the "
                     "warp varies far faster than any sample spacing: use a warp_feature_size "
                     "of at least %.6g.",
                     name, warp_reach, size_x, size_z, landform->warp_feature_size,
                     landform->warp_feature_size * warp_reach / PRECISION_LIMIT);
        return true;
    }
    return false;
}
