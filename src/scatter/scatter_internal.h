/* Palette densities shared by the scatter engine and palette validation (internal). */
#ifndef TRN_SCATTER_SCATTER_INTERNAL_H
#define TRN_SCATTER_SCATTER_INTERNAL_H

#include "terrane/palette.h"
#include "terrane/scatter.h"

/* The palette's multiplier for a category (1 for props); *name is its field, NULL for props. */
double trn_palette_category_multiplier(const trn_palette *p, trn_scatter_category category,
                                       const char **name);

#endif
