/* Fuzz the GeoTIFF reader over memory with tight limits: decode, fill NoData, convert to a field.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/geotiff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_geotiff_limits limits;
    trn_geotiff_limits_default(&limits);
    limits.max_width = 4096;
    limits.max_height = 4096;
    limits.max_samples = 1u << 20;
    limits.max_ifd_entries = 256;
    limits.max_tag_values = 1u << 16;
    limits.max_geokeys = 256;
    limits.max_alloc = 64u << 20;

    trn_geotiff_info info;
    trn_error err;
    trn_status info_st = trn_geotiff_decode_info(data, size, "fuzz.tif", &limits, &info, &err);
    if (info_st != TRN_OK && err.code != info_st) abort();

    trn_geotiff dem;
    trn_status st = trn_geotiff_decode(data, size, "fuzz.tif", &limits, &dem, NULL, NULL, &err);
    if (st != TRN_OK) {
        /* A failure leaves nothing behind and says why, in numbers that mean something (not
         * libtiff's negative byte counts printed unsigned). */
        if (dem.values || dem.info.width || err.code != st || !err.message[0]) abort();
        if (strstr(err.message, "18446744")) abort();
        return 0;
    }
    /* Whatever decodes fully also passes the header-only path, with the same answers. */
    if (info_st != TRN_OK || info.width != dem.info.width || info.height != dem.info.height ||
        info.sample != dem.info.sample)
        abort();
    size_t n = (size_t)dem.info.width * dem.info.height;
    if (!dem.values || n == 0 || n > limits.max_samples || dem.nodata_count > n) abort();
    size_t nan_count = 0;
    for (size_t i = 0; i < n; i++) {
        float v = dem.values[i];
        if (isnan(v))
            nan_count++;
        else if (!isfinite(v) || v < dem.min || v > dem.max)
            abort(); /* the range covers every valid sample */
    }
    if (nan_count != dem.nodata_count) abort();
    uint64_t filled = 0;
    st = trn_geotiff_fill_nodata(&dem, &filled, NULL, NULL, &err);
    if (st == TRN_OK) {
        if (filled != nan_count) abort();
        for (size_t i = 0; i < n; i++)
            if (isnan(dem.values[i])) abort(); /* no holes left */
    }
    trn_field field;
    if (trn_geotiff_to_field(&dem, &field, &err) == TRN_OK) {
        if (field.cells_x + 1 != dem.info.width || field.cells_z + 1 != dem.info.height) abort();
        trn_field_dispose(&field);
    }
    trn_geotiff_dispose(&dem);
    return 0;
}
