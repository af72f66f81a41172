/* What the glTF and OBJ writers share: scene checks, water meshes, 4-byte little-endian output. */
#ifndef TRN_FORMATS_GLTF_SCENE_H
#define TRN_FORMATS_GLTF_SCENE_H

#include <stdint.h>

#include "core/fileio.h"
#include "terrane/mesh.h"
#include "terrane/water_mesh.h"

/* The level of chunk k the scene draws. */
static inline const trn_mesh_level *trn_scene_level(const trn_mesh_scene *s, size_t k)
{
    const trn_mesh_chunk *ch = &s->mesh->chunks[k];
    return &ch->levels[s->levels ? s->levels[k] : 0u];
}

/* Check a scene before anything is written: a mesh, levels in range, water with its ground,
 * instances naming rules of the palette. what names the writer ("glTF", "OBJ"). */
trn_status trn_scene_check(const trn_mesh_scene *s, const char *what, trn_error *err);

/* The water bodies' meshes (one per body, in body order; NULL entries for none) or none when
 * the scene has no water. Free with trn_scene_water_free. */
trn_status trn_scene_water(const trn_mesh_scene *s, trn_water_mesh ***meshes, uint32_t *count,
                           trn_error *err);
void trn_scene_water_free(trn_water_mesh **meshes, uint32_t count);

/* An error about dest's staged temporary ("DEST.tmp-XXXXXX...") names dest itself. */
void trn_scene_error_dest(trn_error *err, const char *dest);

/* dest with its extension replaced by ext (".bin", ".mtl"); malloc'd. */
char *trn_scene_sibling(const char *dest, const char *ext);
/* The last path component of path (a pointer into it). */
const char *trn_scene_basename(const char *path);

#endif
