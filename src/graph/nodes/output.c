/* Appearance, output and note nodes: Biome Rules, Terrain Output and Comment. */
#include "graph/nodes/node_common.h"

static const trn_pin_spec out_field[] = {{"field", TRN_PIN_HEIGHTFIELD, false, "the heights"}};

static const trn_pin_spec in_biome[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the surface the recipe's rules classify"},
    {"water", TRN_PIN_WATER, false,
     "water whose resolved coverage sets wet ground and water_distance; absent = the sea inferred "
     "from the sea level"},
};

static const trn_pin_spec in_output[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the published terrain"},
    {"water", TRN_PIN_WATER, false, "published water surfaces"},
    {"instances", TRN_PIN_INSTANCES, false, "published scatter instances"},
};

static const trn_param_spec p_comment[] = {STR("text", "", "the note (any text)")};

/* Pass-through: the published field is the input's, shared, never copied. */
static trn_status pass_compute(const trn_node_ctx *c, trn_node_result *r, trn_error *err)
{
    (void)err;
    r->biome_rules = trn_node_module_of(c->type)->biome_rules || c->input_results[0]->biome_rules;
    return trn_node_share(r, 0, c->inputs[0]);
}

/* A comment costs nothing: it is never evaluated. */
static void comment_work(const trn_graph_node *n, const trn_node_type *t, const trn_recipe *recipe,
                         trn_erosion_quality quality, trn_node_work_info *out)
{
    (void)n;
    (void)t;
    (void)recipe;
    (void)quality;
    out->work = 0;
}

const trn_node_module trn_node_biome_rules = {
    {"biome_rules", "Biome Rules", "appearance",
     "Assigns the recipe's rule-based biomes to the published surface.", 1, in_biome,
     TRN_COUNT(in_biome), out_field, 1, NULL, 0, false},
    1.0,
    true,
    pass_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_pointwise};

const trn_node_module trn_node_terrain_output = {
    {"terrain_output", "Terrain Output", "output",
     "Publishes the connected heightfield (and water and instances).", 1, in_output,
     TRN_COUNT(in_output), NULL, 0, NULL, 0, false},
    1.0,
    false,
    pass_compute,
    NULL,
    NULL,
    NULL,
    trn_reach_pointwise};

const trn_node_module trn_node_comment = {
    {"comment", "Comment", "note", "A note on the canvas; no pins, never generates anything.", 1,
     NULL, 0, NULL, 0, p_comment, TRN_COUNT(p_comment), false},
    1.0,
    false,
    NULL,
    NULL,
    comment_work,
    NULL,
    trn_reach_none};
