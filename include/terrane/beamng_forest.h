/* Scatter instances as a BeamNG level's forest: item files, item data and the Forest object. */
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
    /* Stage every file into this set (the caller commits); NULL: the call's own set. */
    trn_write_set *writes;
} trn_beamng_forest_options;

typedef struct trn_beamng_forest_result {
    uint32_t types;    /* item types written (one per rule with instances) */
    uint64_t items;    /* forest items written */
    uint32_t unshaped; /* types whose model or prefab names no .dae / .cdae shape */
    bool forest_added; /* the level had no Forest object: one was added */
} trn_beamng_forest_result;

/* Write each rule's instances as forest items: level_dir/forest/terrane_RULE.forest4.json, one
 * item a line {"pos": [x, y, z], "rotationMatrix": [9 numbers, the yaw about z], "scale": s,
 * "type": "terrane_RULE"}; a TSForestItemData entry "terrane_RULE" per type in
 * level_dir/art/forest/managedItemData.json (other entries kept; shapeFile is the rule's model
 * or prefab when it names a .dae or .cdae file, else "" for the modder to set: counted in
 * unshaped); and a Forest object "theForest" in MissionGroup when the level has none. A rule
 * without instances writes nothing (an earlier file of it stays). Ids that are not letters,
 * digits or '_' become '_' in type names. */
trn_status trn_beamng_level_write_forest(const trn_palette *palette, const trn_instances *instances,
                                         const trn_beamng_forest_options *opt,
                                         trn_beamng_forest_result *result, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
