/* Terragen terrain files (.ter, "TERRAGENTERRAIN "), which share BeamNG's extension. */
#ifndef TERRANE_TERRAGEN_H
#define TERRANE_TERRAGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Terragen .ter ("TERRAGENTERRAIN ") read as a heightfield. */
bool trn_terragen_sniff(const uint8_t *data, size_t size);

typedef struct trn_terragen {
    uint32_t xpts, ypts;     /* samples per side */
    float scale[3];          /* SCAL, metres per unit (x, y, z); default 30,30,30 */
    float planet_radius;     /* CRAD km, default 6370 */
    uint32_t curve_mode;     /* CRVM */
    int16_t height_scale;    /* ALTW */
    int16_t base_height;     /* ALTW */
    int16_t *elevations;     /* xpts*ypts, row-major x fastest, as stored */
} trn_terragen;

trn_status trn_terragen_parse(const uint8_t *data, size_t size, const char *path,
                              trn_terragen *tg, trn_error *err);
void trn_terragen_dispose(trn_terragen *tg);
/* Heights in metres: scale[2] * (base_height + elevation * height_scale / 65536). */
trn_status trn_terragen_to_field(const trn_terragen *tg, trn_field *field, trn_error *err);

#ifdef __cplusplus
}
#endif

#endif
