/* Water queries: the water column at a terrain-local point, on the terrain triangles. */
#include <math.h>
#include <string.h>

#include "water/water_internal.h"
#include "terrane/water.h"

static bool no_sample(trn_water_sample *out)
{
    if (out) {
        memset(out, 0, sizeof *out);
        out->body = -1;
    }
    return false;
}

bool trn_water_query(const trn_water *water, const trn_field *ground, double x, double y, double z,
                     trn_water_sample *out)
{
    if (!water || !ground || !water->owner || !water->wet || !water->surface || !ground->heights ||
        water->cells_x != ground->cells_x || water->cells_z != ground->cells_z ||
        water->size_x != ground->size_x || water->size_z != ground->size_z || water->cells_x == 0 ||
        water->cells_z == 0)
        return no_sample(out);
    if (!(x >= 0.0 && x <= water->size_x && z >= 0.0 && z <= water->size_z)) return no_sample(out);
    uint32_t i, j;
    double u, v;
    trn_tri_locate(x, z, water->cells_x, water->cells_z, water->size_x, water->size_z, &i, &j, &u,
                   &v);
    const size_t nx = (size_t)water->cells_x + 1u, k00 = (size_t)j * nx + i;
    const bool lower = u >= v; /* the triangle 00-10-11, else 00-01-11 */
    const size_t k10 = k00 + 1, k01 = k00 + nx, k11 = k01 + 1;
    const size_t mid = lower ? k10 : k01;
    size_t kw;
    const uint64_t *wb = water->wet_bits;
    /* The bits when there are: most queries over a large map end here, on dry ground. */
#define WET(k) (wb ? (bool)((wb[(k) >> 6] >> ((k)&63u)) & 1u) : water->wet[k] != 0)
    if (WET(k00))
        kw = k00;
    else if (WET(mid))
        kw = mid;
    else if (WET(k11))
        kw = k11;
    else
        return no_sample(out);
#undef WET
    const int32_t b = water->owner[kw];
    if (b < 0 || (uint32_t)b >= water->body_count) return no_sample(out);
    const trn_water_body *body = &water->bodies[b];
    const bool level =
        body->kind != TRN_WATER_RIVER || body->surface_mode == TRN_RIVER_SURFACE_LEVEL;
    double s00, s10, s01, s11;
    if (level) {
        s00 = s10 = s01 = s11 = body->level;
    } else {
        /* Corners this body does not hold take the surface of the wet corner that chose it. */
        const double sw = (double)water->surface[kw];
        const int32_t *o = water->owner;
        const float *s = water->surface;
        s00 = o[k00] == b ? (double)s[k00] : sw;
        s10 = o[k10] == b ? (double)s[k10] : sw;
        s01 = o[k01] == b ? (double)s[k01] : sw;
        s11 = o[k11] == b ? (double)s[k11] : sw;
    }
    const float *h = ground->heights;
    const double g =
        trn_tri_interp((double)h[k00], (double)h[k10], (double)h[k01], (double)h[k11], u, v);
    const double surf = trn_tri_interp(s00, s10, s01, s11, u, v);
    if (!(surf > g)) return no_sample(out);
    if (!out) return true;
    const double step_x = water->size_x / (double)water->cells_x;
    const double step_z = water->size_z / (double)water->cells_z;
    const double dsdu = lower ? s10 - s00 : s11 - s01, dsdv = lower ? s11 - s10 : s01 - s00;
    const double dsdx = dsdu / step_x, dsdz = dsdv / step_z;
    out->body = b;
    out->body_id = body->id;
    out->kind = body->kind;
    out->surface[0] = x;
    out->surface[1] = surf;
    out->surface[2] = z;
    if (level) {
        out->normal[0] = 0.0;
        out->normal[1] = 1.0;
        out->normal[2] = 0.0;
    } else {
        const double n = sqrt(dsdx * dsdx + 1.0 + dsdz * dsdz);
        out->normal[0] = -dsdx / n;
        out->normal[1] = 1.0 / n;
        out->normal[2] = -dsdz / n;
    }
    out->depth = surf - g;
    out->column_up[0] = 0.0;
    out->column_up[1] = 1.0;
    out->column_up[2] = 0.0;
    out->flow_velocity[0] = out->flow_velocity[1] = out->flow_velocity[2] = 0.0;
    const double speed = body->look.flow_speed;
    if (speed > 0.0) {
        if (body->kind != TRN_WATER_RIVER) {
            const double dx = body->look.flow_direction[0], dz = body->look.flow_direction[1];
            const double len = sqrt(dx * dx + dz * dz);
            if (len > 0.0) {
                out->flow_velocity[0] = speed * dx / len;
                out->flow_velocity[2] = speed * dz / len;
            }
        } else if (body->path && water->segment && water->segment[kw] + 1u < body->path_count) {
            const double *p = body->path + 3 * (size_t)water->segment[kw];
            const double ex = p[3] - p[0], ez = p[5] - p[2], len = sqrt(ex * ex + ez * ez);
            if (len > 0.0) {
                double tx = ex / len, ty = 0.0, tz = ez / len;
                if (!level) {
                    /* Along the surface triangle: the same heading, climbing its slope. */
                    ty = dsdx * tx + dsdz * tz;
                    const double tl = sqrt(tx * tx + ty * ty + tz * tz);
                    tx /= tl;
                    ty /= tl;
                    tz /= tl;
                }
                out->flow_velocity[0] = speed * tx;
                out->flow_velocity[1] = speed * ty;
                out->flow_velocity[2] = speed * tz;
            }
        }
    }
    out->underwater = g <= y && y < surf;
    return true;
}
