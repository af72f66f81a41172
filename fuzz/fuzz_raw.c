/* libFuzzer target: headerless RAW decode; what decodes must re-encode to the same bytes. */
#include <stdlib.h>
#include <string.h>

#include "terrane/image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* Byte 0: bits 0-1 the sample type, bits 2-3 how the size is given (0 inferred square,
     * 1 width from byte 1, 2 height from byte 1, 3 both from bytes 1 and 2). */
    if (size < 3) {
        trn_image img;
        trn_error err;
        trn_status st = trn_raw_decode(data, size, NULL, TRN_RAW_U16_LE, 0, 0, NULL, &img, &err);
        if (st == TRN_OK) {
            /* Only 2 bytes make a (1 x 1) raster. */
            if (size != 2 || img.width != 1 || img.height != 1) abort();
            trn_image_dispose(&img);
        } else if (err.code != st) {
            abort();
        }
        return 0;
    }
    trn_raw_type type = (trn_raw_type)(data[0] & 3);
    unsigned mode = (data[0] >> 2) & 3;
    uint32_t width = (mode & 1) ? data[1] + 1u : 0, height = 0;
    if (mode == 2) height = data[1] + 1u;
    if (mode == 3) height = data[2] + 1u;
    const uint8_t *payload = data + 3;
    size_t payload_size = size - 3;

    trn_image_limits lim;
    trn_image_limits_default(&lim);
    lim.max_width = 4096;
    lim.max_height = 4096;
    lim.max_bytes = 1u << 22;
    lim.max_samples = 1024;
    trn_image img;
    trn_error err;
    trn_status st =
        trn_raw_decode(payload, payload_size, "fuzz.raw", type, width, height, &lim, &img, &err);
    if (st) {
        if (err.code != st || err.message[0] == '\0') abort();
        if (err.offset < -1 || err.offset > (int64_t)payload_size) abort();
        return 0;
    }
    if ((uint64_t)img.width * img.height > lim.max_samples) abort();
    size_t sample = trn_raw_sample_bytes(type);
    if ((size_t)img.width * img.height * sample != payload_size) abort();
    if ((width && img.width != width) || (height && img.height != height)) abort();
    if (!width && !height && img.width != img.height) abort();

    uint8_t *out = NULL;
    size_t out_size = 0;
    if (trn_raw_encode(&img, type, &out, &out_size, &err) != TRN_OK) abort();
    if (out_size != payload_size || memcmp(out, payload, out_size) != 0) abort();
    free(out);

    /* Integer rasters go through a field and back to the same 16-bit values. */
    if (img.bit_depth != 32 && img.width >= 2 && img.height >= 2) {
        size_t n = (size_t)img.width * img.height;
        uint16_t *expect = malloc(n * sizeof *expect);
        if (!expect) abort();
        if (trn_image_channel_u16(&img, 0, expect, NULL) != TRN_OK) abort();
        trn_field field;
        trn_image q;
        if (trn_image_to_field(&img, 0, 0.125, 10.0, 1.0, &field, NULL) != TRN_OK) abort();
        if (trn_image_from_field(&field, 0.125, 10.0, &q, NULL) != TRN_OK) abort();
        if (memcmp(q.data, expect, n * sizeof *expect) != 0) abort();
        trn_image_dispose(&q);
        trn_field_dispose(&field);
        free(expect);
    }
    trn_image_dispose(&img);
    return 0;
}
