/* Fuzz the Terragen reader: parse, convert to a field, and check encode-parse round trips. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/terragen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_terragen_limits limits;
    trn_terragen_limits_default(&limits);
    limits.max_samples = 1u << 22;
    trn_terragen tg;
    trn_error err;
    trn_status st = trn_terragen_parse_limited(data, size, "fuzz.ter", &limits, &tg, &err);
    if (st != TRN_OK) {
        /* A failure leaves nothing behind and always says where. */
        if (tg.elevations || tg.xpts || err.code != st) abort();
        if (st != TRN_ERR_NO_MEMORY && (err.offset < 0 || (uint64_t)err.offset > size)) abort();
        return 0;
    }
    if (tg.xpts < 2 || tg.ypts < 2 || !tg.elevations) abort();
    if (tg.trailing_bytes > size) abort();

    trn_field field;
    if (trn_terragen_to_field(&tg, &field, &err) == TRN_OK) {
        if (field.cells_x != tg.xpts - 1 || field.cells_z != tg.ypts - 1) abort();
        trn_field_dispose(&field);
    }

    /* Encode and parse again: every stored value survives, with an EOF and nothing after. */
    uint8_t *enc;
    size_t enc_size;
    if (trn_terragen_encode(&tg, &enc, &enc_size, &err) != TRN_OK) abort();
    trn_terragen again;
    if (trn_terragen_parse_limited(enc, enc_size, "again.ter", &limits, &again, &err) != TRN_OK)
        abort();
    size_t n = (size_t)tg.xpts * tg.ypts;
    if (again.xpts != tg.xpts || again.ypts != tg.ypts ||
        memcmp(again.scale, tg.scale, sizeof tg.scale) != 0 ||
        memcmp(&again.planet_radius, &tg.planet_radius, sizeof tg.planet_radius) != 0 ||
        again.curve_mode != tg.curve_mode || again.height_scale != tg.height_scale ||
        again.base_height != tg.base_height || !again.has_eof || again.trailing_bytes != 0 ||
        memcmp(again.elevations, tg.elevations, n * sizeof *tg.elevations) != 0)
        abort();
    /* A second encode is byte-identical to the first. */
    uint8_t *enc2;
    size_t enc2_size;
    if (trn_terragen_encode(&again, &enc2, &enc2_size, &err) != TRN_OK) abort();
    if (enc2_size != enc_size || memcmp(enc, enc2, enc_size) != 0) abort();
    free(enc2);
    free(enc);
    trn_terragen_dispose(&again);
    trn_terragen_dispose(&tg);
    return 0;
}
