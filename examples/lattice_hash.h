/* Integer hash of lattice coordinates shared by the example-input generators. */
#ifndef TERRANE_EXAMPLES_LATTICE_HASH_H
#define TERRANE_EXAMPLES_LATTICE_HASH_H

#include <stdint.h>

/* Deterministic on every machine: integer operations only. */
static inline uint32_t hash2(int32_t x, int32_t y, uint32_t seed)
{
    uint32_t h = seed ^ 0x9e3779b9u;
    h ^= (uint32_t)x * 0x85ebca6bu;
    h = (h << 13) | (h >> 19);
    h ^= (uint32_t)y * 0xc2b2ae35u;
    h ^= h >> 16;
    h *= 0x7feb352du;
    h ^= h >> 15;
    h *= 0x846ca68bu;
    h ^= h >> 16;
    return h;
}

#endif
