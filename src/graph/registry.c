/* The node registry: every terrain graph node type with its pins and parameters. */
#include <math.h>
#include <string.h>

#include "terrane/graph.h"

#define BIG 1e9
#define COUNT(a) ((uint32_t)(sizeof(a) / sizeof((a)[0])))

/* Parameter table rows: NUM(name, default, min, max, description) and friends. */
#define NUM(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, false, d, lo, hi, false, NULL, NULL, 0, desc                          \
    }
#define POS(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, false, d, lo, hi, true, NULL, NULL, 0, desc                           \
    }
#define INT(n, d, lo, hi, desc)                                                                    \
    {                                                                                              \
        n, TRN_PARAM_INTEGER, false, d, lo, hi, false, NULL, NULL, 0, desc                         \
    }
#define OPT_INT(n, lo, hi, desc)                                                                   \
    {                                                                                              \
        n, TRN_PARAM_INTEGER, true, 0, lo, hi, false, NULL, NULL, 0, desc                          \
    }
#define OPT_NUM(n, lo, hi, desc)                                                                   \
    {                                                                                              \
        n, TRN_PARAM_NUMBER, true, 0, lo, hi, false, NULL, NULL, 0, desc                           \
    }
#define STR(n, d, desc)                                                                            \
    {                                                                                              \
        n, TRN_PARAM_STRING, false, 0, 0, 0, false, d, NULL, 0, desc                               \
    }
#define OPT_STR(n, desc)                                                                           \
    {                                                                                              \
        n, TRN_PARAM_STRING, true, 0, 0, 0, false, NULL, NULL, 0, desc                             \
    }
#define CHOICE(n, d, c, desc)                                                                      \
    {                                                                                              \
        n, TRN_PARAM_CHOICE, false, 0, 0, 0, false, d, c, 0, desc                                  \
    }
#define POINTS(n, d, m, desc)                                                                      \
    {                                                                                              \
        n, TRN_PARAM_POINTS, false, 0, 0, 0, false, d, NULL, m, desc                               \
    }

static const trn_pin_spec out_field[] = {{"field", TRN_PIN_HEIGHTFIELD, false, "the heights"}};
static const trn_pin_spec out_mask[] = {{"mask", TRN_PIN_MASK, false, "weights 0..1"}};
static const trn_pin_spec in_field[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the terrain whose grid (and heights) it uses"}};

/* ---- generators ---- */

static const trn_param_spec p_landform[] = {
    OPT_STR("landform", "name of a recipe landform; absent = the recipe's default_landform")};

static const trn_param_spec p_noise[] = {
    CHOICE("profile", "fbm", "fbm|ridged", "noise profile: rolling fbm or sharp-crested ridged"),
    NUM("base_height", 0, -BIG, BIG, "metres at noise value 0"),
    NUM("height_variation", 100, 0, BIG, "metres between noise values 0 and 1"),
    POS("feature_size", 256, 0, HUGE_VAL, "world units of the largest octave's period"),
    NUM("roughness", 0.5, 0, 1, "amplitude gain per octave"),
    INT("octaves", 5, 1, 16, "noise octaves"),
    NUM("warp_amplitude", 0, 0, BIG, "world units of domain warp (0 = none)"),
    POS("warp_feature_size", 128, 0, HUGE_VAL, "world units of the warp noise's period"),
    POS("stretch", 1, 0, BIG, "elongation along heading"),
    NUM("heading", 0, -BIG, BIG, "degrees from +X toward +Z"),
    OPT_INT("seed", 0, 9007199254740992.0,
            "noise seed; absent = the sub-seed of channel \"node:<id>\" of the world seed"),
};

static const trn_param_spec p_flat[] = {NUM("height", 0, -BIG, BIG, "metres")};

/* ---- masks ---- */

static const trn_param_spec p_elevation[] = {
    NUM("min", 0, -BIG, BIG, "metres, lower edge of the fully weighted band"),
    NUM("max", 100, -BIG, BIG, "metres, upper edge of the fully weighted band"),
    NUM("falloff", 10, 0, BIG, "metres of smooth transition outside the band (0 = hard edge)"),
};

static const trn_param_spec p_slope[] = {
    NUM("min", 0, 0, 90, "degrees, lower edge of the fully weighted band"),
    NUM("max", 30, 0, 90, "degrees, upper edge of the fully weighted band"),
    NUM("falloff", 5, 0, 90, "degrees of smooth transition outside the band (0 = hard edge)"),
};

static const trn_param_spec p_path[] = {
    POINTS("points", "[[0,0],[0,100]]", 2, "polyline [x, z] points, terrain-local world units"),
    NUM("width", 20, 0, HUGE_VAL, "fully weighted HALF width, world units"),
    NUM("falloff", 40, 0, HUGE_VAL, "world units of smooth transition beyond width (0 = hard)"),
};

static const trn_param_spec p_polygon[] = {
    POINTS("points", "[[0,0],[100,0],[100,100],[0,100]]", 3,
           "closed polygon [x, z] points (even-odd fill), terrain-local world units"),
    NUM("falloff", 20, 0, HUGE_VAL, "world units of smooth transition outside (0 = hard)"),
};

/* ---- modifiers ---- */

static const trn_pin_spec in_blend[] = {
    {"a", TRN_PIN_HEIGHTFIELD, true, "heights where the weight is 0"},
    {"b", TRN_PIN_HEIGHTFIELD, true, "heights where the weight is 1"},
    {"mask", TRN_PIN_MASK, false, "weight per sample (absent = 1)"},
};
static const trn_param_spec p_blend[] = {
    NUM("amount", 0.5, 0, 1, "weight of B where the mask is 1: out = A + (B - A) * amount * mask")};

static const trn_pin_spec in_offset[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "heights to raise or lower"},
    {"mask", TRN_PIN_MASK, false, "weight per sample (absent = 1)"},
};
static const trn_param_spec p_offset[] = {
    NUM("offset", 10, -BIG, BIG, "metres added where the mask is 1")};

/* ---- simulation ---- */

static const trn_pin_spec out_drainage[] = {
    {"drainage", TRN_PIN_DRAINAGE, false,
     "filled surface, D8 directions, accumulation, basins (keeps its source field)"},
    {"accumulation", TRN_PIN_MASK, false,
     "flow accumulation / the largest interior value; 0 on outlets"},
};
static const trn_param_spec p_drainage[] = {
    OPT_NUM("sea_level", -BIG, BIG,
            "metres; samples at or below drain out like the border; absent = the recipe's sea "
            "level"),
    CHOICE("sea", "on", "on|off", "off: only the border is an outlet"),
};

static const trn_pin_spec in_erosion[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "heights to erode"},
    {"drainage", TRN_PIN_DRAINAGE, false,
     "drainage of the same grid: channels (high accumulation) erode more"},
};
static const trn_pin_spec out_erosion[] = {
    {"field", TRN_PIN_HEIGHTFIELD, false, "eroded heights"},
    {"deposited", TRN_PIN_MASK, false, "net deposit / the largest net deposit"},
    {"eroded", TRN_PIN_MASK, false, "net cut / the largest net cut"},
};
static const trn_param_spec p_erosion[] = {
    INT("iterations", 1, 0, 1000, "droplet passes (0 = no droplets)"),
    INT("droplets", 0, 0, 4294967295.0, "droplets per pass (0 = droplet_density per sample)"),
    NUM("droplet_density", 0.5, 0, 64, "droplets per sample and pass when droplets is 0"),
    INT("lifetime", 30, 1, 512, "steps per droplet"),
    NUM("inertia", 0.05, 0, 1, "share of the old direction kept"),
    NUM("capacity", 4, 0, 1e6, "sediment capacity factor"),
    NUM("min_slope", 0.01, 0, 1e6, "floor of the normalised slope in the capacity formula"),
    NUM("erosion_rate", 0.3, 0, 1, "share of free capacity taken per step"),
    NUM("deposition_rate", 0.3, 0, 1, "share of excess sediment dropped per step"),
    NUM("evaporation", 0.01, 0, 1, "water lost per step"),
    INT("radius", 3, 1, 16, "erosion brush radius, samples"),
    NUM("gravity", 4, 0, 1e6, "speed gained per unit slope"),
    NUM("talus_angle", 35, 0, 89, "degrees; steeper neighbours exchange material (final only)"),
    NUM("thermal_strength", 0.5, 0, 1, "thermal relaxation strength (0 = none; final only)"),
    INT("thermal_iterations", 10, 0, 10000, "thermal passes (final only)"),
    NUM("drainage_weight", 1, 0, 100,
        "with a drainage input: erosion rate x (1 + weight * sqrt(accumulation mask))"),
};

/* ---- appearance and output ---- */

static const trn_pin_spec in_biome[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the surface the recipe's rules classify"},
    {"water", TRN_PIN_WATER, false, "water bodies (not produced by any node yet); absent = inferred sea"},
};

static const trn_pin_spec in_output[] = {
    {"field", TRN_PIN_HEIGHTFIELD, true, "the published terrain"},
    {"water", TRN_PIN_WATER, false, "published water surfaces"},
    {"instances", TRN_PIN_INSTANCES, false, "published scatter instances"},
};

static const trn_param_spec p_comment[] = {STR("text", "", "the note (any text)")};

#define T(name, title, cat, desc, ver, in, out, params, q)                                         \
    {                                                                                              \
        name, title, cat, desc, ver, in, COUNT(in), out, COUNT(out), params, COUNT(params), q      \
    }
#define T_NOIN(name, title, cat, desc, ver, out, params)                                           \
    {                                                                                              \
        name, title, cat, desc, ver, NULL, 0, out, COUNT(out), params, COUNT(params), false        \
    }

static const trn_node_type registry[] = {
    T_NOIN("landform", "Landform", "generator",
           "Heights of a named recipe landform (the recipe's landscape settings).", 1, out_field,
           p_landform),
    T_NOIN("noise_terrain", "Noise Terrain", "generator",
           "A seeded noise heightfield with the landform controls of its own.", 1, out_field,
           p_noise),
    T_NOIN("flat_terrain", "Flat Terrain", "generator", "A constant-height base.", 1, out_field,
           p_flat),
    T("elevation_mask", "Elevation Mask", "mask", "Selects a height band with a smooth falloff.", 1,
      in_field, out_mask, p_elevation, false),
    T("slope_mask", "Slope Mask", "mask", "Selects a steepness band with a smooth falloff.", 1,
      in_field, out_mask, p_slope, false),
    T("path_distance_mask", "Path Distance Mask", "mask",
      "A corridor around a polyline: 1 within width, smooth falloff beyond.", 1, in_field, out_mask,
      p_path, false),
    T("polygon_mask", "Polygon Mask", "mask",
      "A closed polygon (even-odd fill): 1 inside and on the edge, smooth falloff outside.", 1,
      in_field, out_mask, p_polygon, false),
    T("height_blend", "Height Blend", "modifier",
      "Mixes two heightfields of the same grid, optionally through a mask.", 1, in_blend, out_field,
      p_blend, false),
    T("height_offset", "Height Offset", "modifier",
      "Raises or lowers a heightfield, optionally through a mask.", 1, in_offset, out_field,
      p_offset, false),
    {"drainage", "Drainage", "simulation",
     "Depression filling, D8 flow, accumulation and basins of a surface.", 1, in_field, 1,
     out_drainage, COUNT(out_drainage), p_drainage, COUNT(p_drainage), false},
    T("erosion", "Erosion", "simulation",
      "Droplet hydraulic erosion plus thermal relaxation, with a transport ledger.", 1, in_erosion,
      out_erosion, p_erosion, true),
    {"biome_rules", "Biome Rules", "appearance",
     "Assigns the recipe's rule-based biomes to the published surface.", 1, in_biome,
     COUNT(in_biome), out_field, 1, NULL, 0, false},
    {"terrain_output", "Terrain Output", "output",
     "Publishes the connected heightfield (and water and instances).", 1, in_output,
     COUNT(in_output), NULL, 0, NULL, 0, false},
    {"comment", "Comment", "note", "A note on the canvas; no pins, never generates anything.", 1,
     NULL, 0, NULL, 0, p_comment, COUNT(p_comment), false},
};

uint32_t trn_node_type_count(void)
{
    return COUNT(registry);
}

const trn_node_type *trn_node_type_at(uint32_t index)
{
    return index < COUNT(registry) ? &registry[index] : NULL;
}

const trn_node_type *trn_node_type_find(const char *name)
{
    if (!name) return NULL;
    for (uint32_t k = 0; k < COUNT(registry); k++)
        if (strcmp(registry[k].name, name) == 0) return &registry[k];
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
