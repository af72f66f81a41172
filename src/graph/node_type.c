/* Reading one node type: its module, pins, parameters and the names of pin kinds and outcomes
 * (beneath the registry, so node families and the parser need not call into its table). */
#include <string.h>

#include "graph/nodes/node_common.h"

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
