/* BeamNG water: lakes, oceans and rivers as the level's WaterPlane, WaterBlocks and Rivers. */
#ifndef TERRANE_BEAMNG_WATER_H
#define TERRANE_BEAMNG_WATER_H

#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"
#include "terrane/io.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the terrain sits in the level. Terrain-local (x, y, z) (y up, as trn_water) becomes
 * BeamNG's z-up world point (origin_x + x, origin_y + z, origin_z + y): sample (i, j) lands on
 * the .ter sample (i, j), which the TerrainBlock puts at its position + (i, j) x squareSize. */
typedef struct trn_beamng_water_placement {
    double origin_x, origin_y; /* the TerrainBlock's position x and y */
    double origin_z;           /* added to heights: 0 for the levels terrane writes, whose
                                  TerrainBlock position z is the height of stored 0, so stored
                                  heights read back as the terrain-local metres */
} trn_beamng_water_placement;

/* The objects, one per body that has water (a body with no wet sample, or a river path of
 * fewer than 2 points, gets none), in body order. Each is named "water_" + the body id with
 * every character outside [A-Za-z0-9_] made '_' (a name two bodies would share gets _1, _2...).
 *  - The first ocean without a boundary: a WaterPlane at its level (BeamNG's sea: infinite,
 *    only position z counts).
 *  - Lakes, and oceans with a boundary or after the first: a WaterBlock. Its box is centred on
 *    its position and the surface is the box's middle plane (the engine counts the lower half as
 *    water), so: position = the centre of the body's mesh bounds (trn_water_mesh: the wet area up
 *    to the clipped shore) at the level; scale = the bounds' width and length and twice the
 *    deepest depth; gridElementSize = the smaller of the engine's default 5 and the shorter
 *    side (the engine clamps larger ones with a warning).
 *  - Rivers: a River whose nodes are [x, y, z, width, depth, 0, 0, 1] at the sampled path points
 *    with z the surface (the level, or the bed + river_depth) and depth the surface - the bed,
 *    width and depth clamped to the World Editor's 0.25..1000 and 0.25..500 m; listed from the
 *    path's last point to its first, because the engine's River pushes objects toward its first
 *    node; position = the first node. The engine draws a Catmull-Rom spline through the nodes.
 * Every object carries the look BeamNG has a field for: baseColor = deep_color x 255,
 * waterFogDensity = 1 / absorption_distance with waterFogDensityOffset 0 (the engine's
 * underwater fog keeps exp(-density x depth), so the shallow colour falls to 37% at the
 * absorption distance, as ours), overallRippleMagnitude = normal_strength (both scale the normal
 * ripples), overallFoamOpacity = foam_strength, foamMaxDepth = foam_width, overallWaveMagnitude
 * = 0 (our waves never move the surface); Rivers FlowMagnitude = flow_speed (the engine's push
 * along the river, a force scale rather than a speed). Dropped, as BeamNG has no such field:
 * shallow_color, roughness, wave_amplitude, wave_length, wave_speed, foam_color, and the
 * flow of lakes and oceans (WaterBlock and WaterPlane have no current). New objects also name
 * the depth gradient, foam and ripple textures the level scaffold uses. Positions, scales,
 * widths and depths are rounded to the millimetre; colours to whole 0..255 steps. */

/* The objects as NDJSON lines (name, class, then the fields; no persistentId or __parent), each
 * ending in "\n", into *text (malloc'd, NUL-terminated; caller frees; "" when none) and its
 * length into *size (may be NULL). *skipped (may be NULL): bodies that got no object. ground:
 * the heights the water was resolved or refreshed on (TRN_ERR_MISMATCH for another grid). */
trn_status trn_beamng_water_objects(const trn_water *water, const trn_field *ground,
                                    const trn_beamng_water_placement *placement, char **text,
                                    size_t *size, uint32_t *skipped, trn_error *err);

typedef struct trn_beamng_water_options {
    const char *level_dir; /* the levels/NAME folder */
    trn_beamng_water_placement placement;
    /* Stage every file into this set (the caller commits); NULL: the call's own set, committed
     * before it returns. */
    trn_write_set *writes;
} trn_beamng_water_options;

typedef struct trn_beamng_water_result {
    uint32_t planes, blocks, rivers; /* objects written, by class */
    uint32_t replaced;               /* of them, objects updated where they were */
    uint32_t skipped;                /* bodies that got no object */
    char plane_name[256];            /* the WaterPlane the ocean set, "" when none */
    char items_path[1024];           /* where new objects went, "" when none was new */
} trn_beamng_water_result;

/* Put the objects into the level. An object whose class and name (case ignored, as the engine
 * finds names) the level already has is updated in place: the fields above are set, every other
 * field, its persistentId and its line's place are kept. The ocean's WaterPlane is the level's
 * first WaterPlane when it has one (the scaffold's "ocean", or the modder's): its position z and
 * look are set. Other objects are added to the "Water" SimGroup (made in MissionGroup, and
 * MissionGroup in main/items.level.json, when missing) with a persistentId from the level, class
 * and name; a name another object of the level holds gets _1, _2... Objects of bodies that are
 * gone stay. Files are staged in opt->writes (or the call's own set, committed before it
 * returns). result may be NULL. */
trn_status trn_beamng_level_write_water(const trn_water *water, const trn_field *ground,
                                        const trn_beamng_water_options *opt,
                                        trn_beamng_water_result *result, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
