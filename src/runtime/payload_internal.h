/* The decoded payload behind trn_payload (internal to src/runtime). */
#ifndef TRN_RUNTIME_PAYLOAD_INTERNAL_H
#define TRN_RUNTIME_PAYLOAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/erosion.h"
#include "terrane/runtime.h"

typedef struct trn_payload_header {
    uint32_t format_version, generator_version;
    char *generator, *terrain_id;
    uint64_t cache_key, palette_digest, material_digest;
    uint32_t cells_x, cells_z;
    double size_x, size_z, sea_level;
    uint64_t samples;
    uint32_t section_count;
    trn_payload_section *sections;
} trn_payload_header;

typedef struct trn_payload_rule_data {
    char *id, *ref;
    bool prefab; /* ref is a prefab, else a model */
    trn_scatter_collision collision;
    trn_scatter_category category;
} trn_payload_rule_data;

struct trn_payload {
    trn_payload_header header;
    trn_field field;
    uint8_t *biomes;
    char **biome_names;
    float (*biome_colors)[4];
    uint32_t biome_count;
    char **biome_materials;         /* BMAT: per biome, NULL without a material */
    double *biome_texture_scales;   /* BMAT: per biome; NULL without the section (all 1) */
    uint32_t biome_material_count;  /* BMAT's count: must equal biome_count */
    char **ledger_ids;              /* LDGR: the erosion nodes' ids */
    trn_erosion_ledger *ledgers;    /* LDGR: their transport totals */
    uint32_t ledger_count;
    uint8_t *exclusion, *roles;
    trn_material_set set;
    bool has_set, has_water, has_scatter;
    /* MATD: Material documents, by id: texture scale and five map paths ("" none). */
    struct trn_payload_material_doc {
        char *id;
        double texture_scale;
        char *maps[TRN_MAP_COUNT];
    } *docs;
    uint32_t doc_count;
    bool has_docs;
    trn_water water;
    trn_payload_rule_data *rules;
    uint32_t rule_count;
    trn_instance *instances;
    size_t instance_count;
    char *recipe_json;
    size_t recipe_size;
    /* Texture layers (index_layers): distinct material ids, borrowed from set and biome table. */
    const char *layers[TRN_ROLE_COUNT + 255];
    uint32_t layer_count;
    int16_t role_layer[TRN_ROLE_COUNT], biome_layer[255]; /* -1: no material */
};

#endif
