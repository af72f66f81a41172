/* The ground models BeamNG knows, by which a biome names the surface a vehicle feels: the recipe
 * checks a biome's "groundmodel" against them, the BeamNG export writes them. */
#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>

#include "recipe/recipe_internal.h"

/* The ground models of the game's art/groundmodels.json, then aliases it defines for them. */
static const char *const groundmodels[] = {
    "ASPHALT",
    "ASPHALT_OLD",
    "ASPHALT_PREPPED",
    "ASPHALT_WET",
    "BRANCHES_STRONG",
    "COBBLESTONE",
    "DIRT",
    "DIRT_DUSTY",
    "DIRT_DUSTY_LOOSE",
    "FRICTIONLESS",
    "GRASS",
    "GRAVEL",
    "GRAVEL_WET",
    "ICE",
    "KICKPLATE",
    "LEAVES_STRONG",
    "LEAVES_THIN",
    "METAL",
    "METAL_TREAD",
    "MUD",
    "PLASTIC",
    "ROCK",
    "RUMBLE_STRIP",
    "SAND",
    "SHOCK_ABSORBER",
    "SLIPPERY",
    "SNOW",
    "SPIKE_STRIP",
    "WOOD",
    "BEACHSAND",
    "CONCRETE",
    "CONCRETE2",
    "DERBY_DIRT",
    "DIRT_GRASS",
    "DIRT_LOOSE",
    "DIRT_LOOSE_DUSTY",
    "DIRT_ROCKY",
    "DIRT_ROCKY_LARGE",
    "DIRT_SANDY",
    "FOREST",
    "GRASS2",
    "GRID",
    "GROUNDMODEL_ASPHALT1",
    "ROCK_CLIFF",
    "ROCKS_LARGE",
    "ROCKYDIRT",
};

static bool same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

const char *trn_rcp_groundmodel_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof groundmodels / sizeof groundmodels[0]; i++)
        if (same_name(name, groundmodels[i])) return groundmodels[i];
    return NULL;
}

const char *trn_rcp_groundmodel_names(void)
{
    return "ASPHALT, ASPHALT_OLD, ASPHALT_PREPPED, ASPHALT_WET, BRANCHES_STRONG, COBBLESTONE, "
           "DIRT, DIRT_DUSTY, DIRT_DUSTY_LOOSE, FRICTIONLESS, GRASS, GRAVEL, GRAVEL_WET, ICE, "
           "KICKPLATE, LEAVES_STRONG, LEAVES_THIN, METAL, METAL_TREAD, MUD, PLASTIC, ROCK, "
           "RUMBLE_STRIP, SAND, SHOCK_ABSORBER, SLIPPERY, SNOW, SPIKE_STRIP, WOOD, and the "
           "aliases BEACHSAND, CONCRETE, CONCRETE2, DERBY_DIRT, DIRT_GRASS, DIRT_LOOSE, "
           "DIRT_LOOSE_DUSTY, DIRT_ROCKY, DIRT_ROCKY_LARGE, DIRT_SANDY, FOREST, GRASS2, GRID, "
           "GROUNDMODEL_ASPHALT1, ROCK_CLIFF, ROCKS_LARGE, ROCKYDIRT";
}
