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

const trn_node_module *trn_node_module_of(const trn_node_type *type)
{
    /* The type is a module's first member. */
    return (const trn_node_module *)(const void *)type;
}

bool trn_node_reads_palette(const trn_node_type *type)
{
    for (uint32_t k = 0; type && k < type->output_count; k++)
        if (type->outputs[k].kind == TRN_PIN_INSTANCES) return true;
    return false;
}

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

static const trn_pin_spec *find_pin(const trn_pin_spec *pins, uint32_t count, const char *name,
                                    uint32_t *index)
{
    for (uint32_t k = 0; name && k < count; k++)
        if (strcmp(pins[k].name, name) == 0) {
            if (index) *index = k;
            return &pins[k];
        }
    return NULL;
}

const trn_pin_spec *trn_node_type_input(const trn_node_type *type, const char *pin, uint32_t *index)
{
    return type ? find_pin(type->inputs, type->input_count, pin, index) : NULL;
}

const trn_pin_spec *trn_node_type_output(const trn_node_type *type, const char *pin,
                                         uint32_t *index)
{
    return type ? find_pin(type->outputs, type->output_count, pin, index) : NULL;
}

const trn_param_spec *trn_node_type_param(const trn_node_type *type, const char *name)
{
    for (uint32_t k = 0; type && name && k < type->param_count; k++)
        if (strcmp(type->params[k].name, name) == 0) return &type->params[k];
    return NULL;
}

const char *trn_pin_kind_name(trn_pin_kind kind)
{
    static const char *const names[TRN_PIN_KIND_COUNT] = {"heightfield", "mask", "drainage",
                                                          "water", "instances"};
    return (unsigned)kind < TRN_PIN_KIND_COUNT ? names[kind] : "unknown";
}

const char *trn_node_outcome_name(trn_node_outcome outcome)
{
    switch (outcome) {
    case TRN_NODE_EVALUATED:
        return "evaluated";
    case TRN_NODE_REUSED:
        return "reused";
    case TRN_NODE_REUSED_DISK:
        return "reused-disk";
    case TRN_NODE_SKIPPED:
        return "skipped";
    }
    return "unknown";
}
