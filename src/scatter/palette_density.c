/* A scatter rule's effective density: its own, the palette's art density and its category's. */
#include "scatter/scatter_internal.h"

double trn_palette_category_multiplier(const trn_palette *p, trn_scatter_category category,
                                       const char **name)
{
    *name = NULL;
    switch (category) {
    case TRN_CATEGORY_GRASS:
        *name = "grass_density";
        return p->grass_density;
    case TRN_CATEGORY_TREE:
        *name = "tree_density";
        return p->tree_density;
    case TRN_CATEGORY_ROCK:
        *name = "rock_density";
        return p->rock_density;
    case TRN_CATEGORY_PROP:
        break;
    }
    return 1;
}

double trn_palette_rule_density(const trn_palette *palette, const trn_scatter_rule *rule)
{
    if (!palette || !rule) return 0;
    const char *name;
    return rule->density * palette->art_density *
           trn_palette_category_multiplier(palette, rule->category, &name);
}
