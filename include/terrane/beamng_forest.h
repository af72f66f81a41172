/* Scatter instances as a BeamNG level's vegetation: GroundCover, forest items, item data, Forest. */
#ifndef TERRANE_BEAMNG_FOREST_H
#define TERRANE_BEAMNG_FOREST_H

#include <stdint.h>

#include "terrane/core.h"
#include "terrane/io.h"
#include "terrane/palette.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct trn_beamng_forest_options {
    const char *level_dir; /* the levels/NAME folder */
    /* BeamNG position of terrain-local (0, 0): BeamNG x = origin_x + x, y = origin_y + z,
     * z = the instance's height (the TerrainBlock's placement). */
    double origin_x, origin_y;
    /* The terrain's material map, to name each GroundCover type's terrain layer: layers holds
     * layers_width x layers_height material indices, row j at terrain-local z = j *
     * layers_spacing (from the south edge), column i at x = i * layers_spacing, index k naming
     * layer_names[k] (k >= layer_count: no material). NULL: GroundCover types name no layer and
     * cover every material. */
    const uint8_t *layers;
    uint32_t layers_width, layers_height;
    double layers_spacing;
    const char *const *layer_names;
    uint32_t layer_count;
    /* Stage every file into this set (the caller commits); NULL: the call's own set. */
    trn_write_set *writes;
} trn_beamng_forest_options;

typedef enum trn_beamng_forest_format {
    TRN_BEAMNG_FOREST_NONE = 0, /* no forest items were written */
    TRN_BEAMNG_FOREST_FOREST4,  /* forest/TYPE.forest4.json, one item a line */
    TRN_BEAMNG_FOREST_V2,       /* the level's own NAME.forest.json ("JSON Forest Data v2") */
} trn_beamng_forest_format;

typedef struct trn_beamng_forest_result {
    uint32_t types; /* forest item types written (one per shaped rule with instances) */
    uint64_t items; /* forest items written */
    trn_beamng_forest_format format;
    char forest_path[4096];   /* the v2 file, or the forest/ folder; "" when no items */
    uint32_t covers;          /* GroundCover objects of grass rules (added or already there) */
    uint32_t covers_added;    /* of those, added by this call */
    uint64_t cover_instances; /* grass instances the GroundCover objects stand for */
    uint32_t unshaped;        /* tree, rock and prop rules left out: no .dae / .cdae shape */
    uint64_t unshaped_items;  /* their instances */
    uint32_t stale_removed;   /* forest/terrane_RULE.forest4.json files of grass or unshaped
                                 rules (an older export's items that draw nothing), removed */
    bool forest_added;        /* the level had no Forest object: one was added */
    bool wind_added;          /* the level had no ForestWindEmitter: one was added */
} trn_beamng_forest_result;

/* Write a palette's instances into a BeamNG level the way its editors keep vegetation:
 * - grass rules (category "grass") become one GroundCover object each,
 *   "terrane_RULE_groundcover", beside the level's Forest (its group) else in MissionGroup
 *   (kept as it is when the level already has it): the engine strews
 *   it around the camera on the terrain materials the rule's instances stand on (one type a
 *   material, up to 8, probability their share), sizes from the rule's scale, its maxElements
 *   from the rule's density; the rule's .dae model as shapeFilename, else billboards of the
 *   material "BNGGrass_3" (the World Editor's default for a new GroundCover);
 * - tree, rock and prop rules whose model or prefab names a .dae or .cdae shape become forest
 *   items of type "terrane_RULE": in the level's NAME.forest.json ("JSON Forest Data v2",
 *   instances[TYPE] rows [x, y, z, qx, qy, qz, qw, scale], other types and the header kept)
 *   when the level has one and no forest/NAME.forest4.json, else in
 *   forest/terrane_RULE.forest4.json, one item a line
 *   {"pos": [x, y, z], "rotationMatrix": [9 numbers], "scale": s, "type": "terrane_RULE"};
 *   the rotation turns the item by its yaw clockwise seen from above (terrane's yaw): the
 *   matrix's rows are the item's own x, y and z axes in the world, [cos, -sin, 0, sin, cos, 0,
 *   0, 0, 1], the quaternion Torque's (0, 0, sin(yaw / 2), cos(yaw / 2)); a TSForestItemData
 *   entry "terrane_RULE" with the shape in level_dir/art/forest/managedItemData.json (other
 *   entries kept byte for byte); a Forest object "theForest" in MissionGroup and a
 *   ForestWindEmitter "theForestWind" beside the Forest when the level has none;
 * - other rules (no shape) are left out and counted in unshaped: a forest item without a shape
 *   draws nothing. A forest/terrane_RULE.forest4.json of a grass or unshaped rule that places
 *   instances (an older export's) is removed.
 * A rule without instances writes nothing (an earlier file of it stays). Ids that are not
 * letters, digits or '_' become '_' in type and object names. */
trn_status trn_beamng_level_write_forest(const trn_palette *palette, const trn_instances *instances,
                                         const trn_beamng_forest_options *opt,
                                         trn_beamng_forest_result *result, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
