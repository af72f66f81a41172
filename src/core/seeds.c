/* Sub-seeds: each random stream of a world is keyed by the hash of its channel's name. */
#include <string.h>
#include <xxhash.h>

#include "terrane/recipe.h"

/* Indexed by trn_seed_channel. These spellings are part of the file format: they appear in
 * recipes, in `terrane seeds` and in docs/recipes.md, and every generated value hangs off them. */
static const char *const channel_names[TRN_CHANNEL_COUNT] = {
    "landform", "landform_warp", "erosion", "hydrology", "biome_placement", "scatter",
};

const char *trn_seed_channel_name(trn_seed_channel channel)
{
    if ((unsigned)channel >= (unsigned)TRN_CHANNEL_COUNT) return "unknown";
    return channel_names[channel];
}

uint64_t trn_subseed(uint64_t world_seed, const char *channel_name)
{
    /* The name's bytes without the terminating NUL, hashed with the world seed as XXH64's own
     * seed: no list position enters, so a new channel leaves every other sub-seed alone. */
    const char *name = channel_name ? channel_name : "";
    return (uint64_t)XXH64(name, strlen(name), (XXH64_hash_t)world_seed);
}

uint64_t trn_subseed_of(uint64_t world_seed, trn_seed_channel channel)
{
    return trn_subseed(world_seed, trn_seed_channel_name(channel));
}
