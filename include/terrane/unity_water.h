/* Unity water: each body's surface mesh as a Wavefront OBJ beside the terrain's RAW, and a
 * NAME.water.json describing the bodies. */
#ifndef TERRANE_UNITY_WATER_H
#define TERRANE_UNITY_WATER_H

#include <stdint.h>

#include "terrane/core.h"
#include "terrane/io.h"
#include "terrane/water.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct trn_unity_water_options {
    const char *name;   /* the terrain's file stem (trn_unity_export_options.name); NULL or ""
                           = "terrain" */
    double position[3]; /* the terrain's corner position (trn_unity_export_options.position) */
    double height_base; /* metres at RAW 0 (trn_unity_export_report.height_base): the Terrain's
                           own y is position[1] + height_base */
    /* Stage every file into this set (the caller commits); NULL: the call's own set, committed
     * before it returns. */
    trn_write_set *writes;
} trn_unity_water_options;

typedef struct trn_unity_water_report {
    uint32_t meshes;  /* OBJ files written */
    uint32_t skipped; /* bodies without a triangle: no mesh (listed in the JSON) */
    uint32_t files;   /* files written: the meshes and the JSON */
} trn_unity_water_report;

/* Write, for each body with a surface (trn_water_mesh_new), DIR/NAME_water_ID.obj (ID with
 * every character outside [A-Za-z0-9_-] made '_'; a name two bodies would share gets _1, _2...),
 * and DIR/NAME.water.json listing every body (id, kind, level, surface mode, mesh file or null,
 * vertex and triangle counts, plan area, deepest depth, the whole look, the flow: speed and unit
 * direction for lakes and oceans, speed and the path for rivers, whose current follows the
 * nearest path segment in path order).
 * Axes: Unity's, as the terrain export places the heightmap: x and z from the terrain's corner
 * sample, y up. A mesh's vertices are relative to the Terrain's own position (the corner at
 * height_base), so each mesh goes at that same position, which the JSON gives; world y = the
 * JSON's position y + (metres - height_base). The file itself is a right-handed OBJ as Unity's
 * importer expects: x negated and faces wound counter-clockwise seen from above, which the
 * importer turns back into Unity's left-handed x with up-facing, clockwise faces. Positions are
 * written as the mesh's floats ("%.9g"), normals likewise.
 * Errors: TRN_ERR_INVALID_ARGUMENT, TRN_ERR_MISMATCH (ground on another grid), I/O errors. */
trn_status trn_unity_export_water(const char *dir, const trn_water *water, const trn_field *ground,
                                  const trn_unity_water_options *options,
                                  trn_unity_water_report *report, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
