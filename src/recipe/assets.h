/* Project asset manifests (NAME.asset.json) shared by presets and palettes (internal). */
#ifndef TRN_RECIPE_ASSETS_H
#define TRN_RECIPE_ASSETS_H

#include <stdbool.h>

#include "terrane/core.h"

/* One manifest. Its content type is settings.content_type when given (the DataAsset form:
 * {"type": "DataAsset", "source": ..., "settings": {"content_type": "terrain_palette"}}),
 * else "type" (the older preset form {"type": "terrain_preset", "source": ...}). */
typedef struct trn_rcp_manifest {
    char content_type[64];  /* "" when the manifest gives none */
    bool matches;           /* content_type is the one asked for */
    char source_path[4096]; /* the source document, beside the manifest (when matches) */
    char id[1200];          /* "asset://" + rel without ".asset.json" */
} trn_rcp_manifest;

/* Read the manifest at path (rel: its path relative to the project folder root). A manifest of
 * another content type gives TRN_OK with matches false and the source unchecked; one of
 * want_type must name a source relative to its folder that stays inside root (through '..' or
 * symbolic links it may not leave), else the error names the manifest. */
trn_status trn_rcp_manifest_read(const char *root, const char *path, const char *rel,
                                 const char *want_type, trn_rcp_manifest *m, trn_error *err);

/* Read the source document of a matching manifest (malloc'd, caller frees). */
trn_status trn_rcp_manifest_source(const trn_rcp_manifest *m, char **text, size_t *size,
                                   trn_error *err);

#endif
