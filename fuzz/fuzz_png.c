/* libFuzzer target: PNG decode under small limits; what decodes must re-encode to the same pixels.
 */
#include <stdlib.h>
#include <string.h>

#include "terrane/image.h"

static void check_error(trn_status st, const trn_error *err, size_t size)
{
    /* A failure must say what it is and point inside the input (or nowhere). */
    if (err->code != st || err->message[0] == '\0') abort();
    if (err->offset < -1 || err->offset > (int64_t)size) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_image_limits lim;
    trn_image_limits_default(&lim);
    lim.max_width = 1024;
    lim.max_height = 1024;
    lim.max_bytes = 4u << 20;
    lim.max_chunk_bytes = 1u << 16;
    lim.max_chunk_cache_bytes = 1u << 18;
    lim.max_samples = 1u << 18;

    trn_png_info info;
    trn_error err;
    trn_status info_st = trn_png_decode_info(data, size, NULL, &info, &err);
    if (info_st) check_error(info_st, &err, size);

    trn_image img;
    trn_status st = trn_png_decode(data, size, "fuzz.png", &lim, &img, &err);
    if (st) {
        check_error(st, &err, size);
        return 0;
    }
    /* Decoding reads the header first, so the header facts must agree. */
    if (info_st || info.width != img.width || info.height != img.height ||
        info.channels != img.channels)
        abort();
    if ((uint64_t)img.width * img.height > lim.max_samples) abort();

    trn_png_options opt;
    trn_png_options_default(&opt);
    opt.compression_level = 1;
    opt.srgb = img.srgb;
    uint8_t *png = NULL;
    size_t png_size = 0;
    if (trn_png_encode(&img, &opt, &png, &png_size, &err) != TRN_OK) abort();
    trn_image back;
    if (trn_png_decode(png, png_size, NULL, &lim, &back, &err) != TRN_OK) abort();
    size_t bytes = trn_image_row_bytes(&img) * img.height;
    if (back.width != img.width || back.height != img.height || back.channels != img.channels ||
        back.bit_depth != img.bit_depth || back.srgb != img.srgb ||
        memcmp(back.data, img.data, bytes) != 0)
        abort();
    free(png);
    trn_image_dispose(&back);

    /* Through a field and back: the chosen channel, widened to 16 bits, exactly. */
    if (img.width >= 2 && img.height >= 2) {
        uint8_t channel = (uint8_t)(img.channels - 1);
        trn_field field;
        trn_image q;
        size_t n = (size_t)img.width * img.height;
        uint16_t *expect = malloc(n * sizeof *expect);
        if (!expect) abort();
        if (trn_image_channel_u16(&img, channel, expect, NULL) != TRN_OK) abort();
        if (trn_image_to_field(&img, channel, 1.0 / 32.0, -100.0, 2.0, &field, NULL) != TRN_OK)
            abort();
        if (trn_image_from_field(&field, 0.0, 0.0, &q, NULL) != TRN_OK) abort();
        if (memcmp(q.data, expect, n * sizeof *expect) != 0) abort();
        trn_image_dispose(&q);
        trn_field_dispose(&field);
        free(expect);
    }
    trn_image_dispose(&img);
    return 0;
}
