/* The chunk grid that surface roles, meshes and the editing session number chunks by. */
#include "terrane/roles.h"

void trn_roles_chunk_grid(uint32_t cells_x, uint32_t cells_z, uint32_t chunk_cells,
                          uint32_t *chunks_x, uint32_t *chunks_z)
{
    const uint32_t c = chunk_cells ? chunk_cells : TRN_ROLES_CHUNK_CELLS;
    if (chunks_x) *chunks_x = cells_x / c + (cells_x % c != 0);
    if (chunks_z) *chunks_z = cells_z / c + (cells_z % c != 0);
}
