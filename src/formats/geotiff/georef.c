/* GeoTIFF georeferencing: derived CRS facts, metres per pixel on WGS84, grid remapping. */
#include <math.h>
#include <string.h>

#include "terrane/geotiff.h"

/* WGS84 ellipsoid (EPSG:7030). */
#define WGS84_A 6378137.0
#define WGS84_F (1.0 / 298.257223563)

static const double deg = 3.14159265358979323846 / 180.0;

static double unit_metres(uint16_t code, bool *known)
{
    switch (code) {
    case 0:    /* absent: metre, the unit of nearly every EPSG projected CRS */
    case 9001: /* metre */
        return 1.0;
    case 9002: /* international foot */
        return 0.3048;
    case 9003: /* US survey foot */
        return 1200.0 / 3937.0;
    case 9036: /* kilometre */
        return 1000.0;
    default:
        if (known) *known = false;
        return 1.0;
    }
}

/* Degrees per angular unit; 0 when unknown. */
static double unit_degrees(uint16_t code)
{
    switch (code) {
    case 0:    /* absent: degree */
    case 9102: /* degree */
    case 9122: /* degree (supplier to define representation) */
        return 1.0;
    case 9101: /* radian */
        return 180.0 / 3.14159265358979323846;
    case 9105: /* grad */
        return 0.9;
    default:
        return 0.0;
    }
}

void trn_geotiff_pixel_to_model(const trn_geotiff_georef *g, double col, double row, double *x,
                                double *y)
{
    const double *t = g->transform;
    *x = t[0] + col * t[1] + row * t[2];
    *y = t[3] + col * t[4] + row * t[5];
}

bool trn_geotiff_model_to_pixel(const trn_geotiff_georef *g, double x, double y, double *col,
                                double *row)
{
    if (!g->has_transform) return false;
    const double *t = g->transform;
    double det = t[1] * t[5] - t[2] * t[4];
    if (det == 0 || !isfinite(det)) return false;
    double dx = x - t[0], dy = y - t[3];
    *col = (dx * t[5] - dy * t[2]) / det;
    *row = (dy * t[1] - dx * t[4]) / det;
    return true;
}

void trn_geotiff_georef_derive(trn_geotiff_georef *g, uint32_t width, uint32_t height)
{
    g->epsg = g->projected_epsg ? g->projected_epsg : g->geographic_epsg;
    g->geographic = g->model_type == TRN_GEOTIFF_MODEL_GEOGRAPHIC ||
                    (g->model_type == 0 && g->geographic_epsg && !g->projected_epsg);
    g->units_known = true;
    g->linear_unit_metres = unit_metres(g->linear_units, &g->units_known);
    /* The unit the CRS itself implies (libgeotiff): a US State Plane code in feet needs no
     * ProjLinearUnitsGeoKey, and units our table lacks are still known. */
    if (g->crs_unit_metres > 0 && !g->geographic && (!g->linear_units || !g->units_known)) {
        g->linear_unit_metres = g->crs_unit_metres;
        g->units_known = true;
    }
    bool vertical_known = true;
    g->vertical_unit_metres = unit_metres(g->vertical_units, &vertical_known);
    g->metres_per_pixel_x = g->metres_per_pixel_y = 0;
    g->centre_latitude = 0;
    if (!g->has_transform) return;
    const double *t = g->transform;
    double step_x = hypot(t[1], t[4]), step_y = hypot(t[2], t[5]);
    if (!g->geographic) {
        g->metres_per_pixel_x = step_x * g->linear_unit_metres;
        g->metres_per_pixel_y = step_y * g->linear_unit_metres;
        return;
    }
    double to_deg = unit_degrees(g->angular_units);
    if (to_deg == 0) {
        g->units_known = false;
        to_deg = 1.0;
    }
    double lon, lat;
    trn_geotiff_pixel_to_model(g, width / 2.0, height / 2.0, &lon, &lat);
    lat *= to_deg;
    if (lat > 90) lat = 90;
    if (lat < -90) lat = -90;
    g->centre_latitude = lat;
    /* The file's ellipsoid when libgeotiff named it, else WGS84. */
    double a = WGS84_A, e2 = WGS84_F * (2.0 - WGS84_F);
    /* (WGS84 itself keeps the constants above, bit for bit.) */
    if (g->semi_major > 0 && g->semi_minor > 0 && g->semi_minor <= g->semi_major &&
        (fabs(g->semi_major - WGS84_A) > 1e-3 ||
         fabs(g->semi_minor - WGS84_A * (1.0 - WGS84_F)) > 1e-3)) {
        a = g->semi_major;
        e2 = 1.0 - (g->semi_minor * g->semi_minor) / (a * a);
    }
    double s = sin(lat * deg), w = sqrt(1.0 - e2 * s * s);
    double meridional = a * (1.0 - e2) / (w * w * w); /* M: north-south curvature */
    double prime = a / w;                             /* N: east-west curvature */
    g->metres_per_pixel_x = step_x * to_deg * deg * prime * cos(lat * deg);
    g->metres_per_pixel_y = step_y * to_deg * deg * meridional;
}

void trn_geotiff_georef_remap(const trn_geotiff_georef *src, double col0, double row0,
                              double col_step, double row_step, uint32_t width, uint32_t height,
                              trn_geotiff_georef *dst)
{
    if (dst != src) memcpy(dst, src, sizeof *dst);
    if (!src->has_transform) return;
    const double *t = src->transform;
    /* dst corner position (a, b) is src corner position
     * (0.5 + col0 + (a - 0.5) col_step, 0.5 + row0 + (b - 0.5) row_step). */
    double oc = 0.5 + col0 - 0.5 * col_step, orow = 0.5 + row0 - 0.5 * row_step;
    double n[6];
    n[0] = t[0] + oc * t[1] + orow * t[2];
    n[1] = t[1] * col_step;
    n[2] = t[2] * row_step;
    n[3] = t[3] + oc * t[4] + orow * t[5];
    n[4] = t[4] * col_step;
    n[5] = t[5] * row_step;
    memcpy(dst->transform, n, sizeof n);
    /* The tags are re-expressed from the transform (the writer uses the transform). */
    dst->has_model_transformation = n[2] != 0 || n[4] != 0;
    dst->has_pixel_scale = dst->has_tiepoint = !dst->has_model_transformation;
    if (dst->has_pixel_scale) {
        bool point = dst->raster_type == TRN_GEOTIFF_RASTER_PIXEL_IS_POINT;
        double shift = point ? 0.5 : 0.0;
        dst->pixel_scale[0] = n[1];
        dst->pixel_scale[1] = -n[5];
        dst->pixel_scale[2] = src->has_pixel_scale ? src->pixel_scale[2] : 0.0;
        double tp[6] = {0, 0, 0, n[0] + shift * n[1], n[3] + shift * n[5], 0};
        memcpy(dst->tiepoint, tp, sizeof tp);
        dst->tiepoint_count = 1;
    } else {
        double m[16] = {n[1], n[2], 0, n[0], n[4], n[5], 0, n[3], 0, 0, 0, 0, 0, 0, 0, 1};
        bool point = dst->raster_type == TRN_GEOTIFF_RASTER_PIXEL_IS_POINT;
        if (point) {
            m[3] += 0.5 * n[1] + 0.5 * n[2];
            m[7] += 0.5 * n[4] + 0.5 * n[5];
        }
        memcpy(dst->model_transformation, m, sizeof m);
    }
    trn_geotiff_georef_derive(dst, width, height);
}
