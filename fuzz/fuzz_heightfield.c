/* Fuzz the heightfield input reader (every format a Heightfield Input node reads) with tight
 * limits. Byte 0 picks the format (0 = detect), byte 1 a headerless raster's width (0 = square);
 * the rest is the file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/heightfield.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2) return 0;
    trn_heightfield_read_options o;
    memset(&o, 0, sizeof o);
    o.format = (trn_heightfield_format)(data[0] % 7u);
    o.raw_width = data[1];
    o.max_samples = 1u << 16;
    const char *name = data[0] & 0x80 ? "fuzz.r32" : "fuzz.r16";
    data += 2;
    size -= 2;
    trn_heightfield_info info;
    trn_error err;
    const trn_status probe = trn_heightfield_probe(data, size, name, &o, &info, &err);
    if (probe != TRN_OK && (err.code != probe || !err.message[0])) abort();
    trn_heightfield_file hf;
    const trn_status st = trn_heightfield_decode(data, size, name, &o, &hf, NULL, NULL, &err);
    if (st != TRN_OK) {
        if (hf.field.heights || err.code != st || !err.message[0]) abort();
        return 0;
    }
    /* What decodes passed the header checks, with the same size, and has finite heights
     * within its reported range. */
    if (probe != TRN_OK || info.width != hf.info.width || info.height != hf.info.height) abort();
    if (hf.field.cells_x + 1u != info.width || hf.field.cells_z + 1u != info.height) abort();
    const size_t n = (size_t)info.width * info.height;
    for (size_t k = 0; k < n; k++)
        if (!isfinite(hf.field.heights[k]) || hf.field.heights[k] < hf.min ||
            hf.field.heights[k] > hf.max)
            abort();
    trn_heightfield_file_dispose(&hf);
    return 0;
}
