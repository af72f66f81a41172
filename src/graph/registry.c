/* The node registry: every terrain graph node type with its pins and parameters. */
#include <math.h>
#include <string.h>

#include "graph/nodes/node_common.h"

/* Every node type, in the order `terrane graph types` lists them: generators, masks,
 * modifiers, simulation, water, appearance, scatter, output, notes. One row per type; the entries
 * live with their families in src/graph/nodes/. */
static const trn_node_module *const registry[] = {
    /* clang-format off */
    &trn_node_landform,
    &trn_node_noise_terrain,
    &trn_node_flat_terrain,
    &trn_node_dune_field,
    &trn_node_heightfield_input,
    &trn_node_elevation_mask,
    &trn_node_slope_mask,
    &trn_node_path_distance_mask,
    &trn_node_polygon_mask,
    &trn_node_height_blend,
    &trn_node_height_offset,
    &trn_node_drainage,
    &trn_node_flow_accumulation,
    &trn_node_drain_depressions,
    &trn_node_erosion,
    &trn_node_stream_power,
    &trn_node_water_body,
    &trn_node_basin_water,
    &trn_node_water_edit,
    &trn_node_river_route,
    &trn_node_biome_rules,
    &trn_node_scatter_palette,
    &trn_node_terrain_output,
    &trn_node_comment,
    /* clang-format on */
};

#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

uint32_t trn_node_type_count(void)
{
    return COUNT(registry);
}

const trn_node_type *trn_node_type_at(uint32_t index)
{
    return index < COUNT(registry) ? &registry[index]->type : NULL;
}

const trn_node_type *trn_node_type_find(const char *name)
{
    if (!name) return NULL;
    for (uint32_t k = 0; k < COUNT(registry); k++)
        if (strcmp(registry[k]->type.name, name) == 0) return &registry[k]->type;
    return NULL;
}
