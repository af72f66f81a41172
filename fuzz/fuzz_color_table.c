/* libFuzzer target for colour tables: parse; on success colour a fixed field in all three modes. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/render.h"

#define FUZZ_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond);           \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* Is rgba one of the table's colours? */
static bool in_table(const trn_color_table *t, const uint8_t *rgba)
{
    for (size_t k = 0; k < t->count; k++)
        if (memcmp(t->entries[k].rgba, rgba, 4) == 0) return true;
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_color_table t;
    trn_error e;
    trn_status st = trn_color_table_parse((const char *)data, size, "fuzz.txt", &t, &e);
    if (st != TRN_OK) {
        /* A failure leaves the table empty and says what and where. */
        FUZZ_ASSERT(t.entries == NULL && t.count == 0);
        FUZZ_ASSERT(st == e.code && e.message[0] != '\0');
        FUZZ_ASSERT(st == TRN_ERR_FORMAT || st == TRN_ERR_NO_MEMORY);
        FUZZ_ASSERT(e.offset >= 0 && e.offset <= (int64_t)size);
        FUZZ_ASSERT((e.line >= 1 && e.column >= 1) || strstr(e.message, "no colour entries"));
        return 0;
    }
    FUZZ_ASSERT(t.count >= 1 && t.entries);
    size_t nodata = 0;
    for (size_t k = 0; k < t.count; k++) {
        const trn_color_entry *c = &t.entries[k];
        FUZZ_ASSERT(c->line >= 1 && (k == 0 || c->line > t.entries[k - 1].line));
        FUZZ_ASSERT(isfinite(c->height));
        if (c->percent) FUZZ_ASSERT(c->height >= 0 && c->height <= 100);
        nodata += c->nodata;
    }
    FUZZ_ASSERT(nodata <= 1);

    /* Heights from -100 to 3100 m and a NaN. */
    trn_field f;
    FUZZ_ASSERT(trn_field_init(&f, 7, 3, 7, 3, NULL) == TRN_OK);
    for (size_t k = 0; k < 32; k++)
        f.heights[k] = (float)k * 100.0f - 100.0f;
    f.heights[5] = NAN;
    static const trn_color_match modes[3] = {TRN_COLOR_INTERPOLATE, TRN_COLOR_NEAREST,
                                             TRN_COLOR_EXACT};
    trn_render_options o;
    trn_render_options_default(&o);
    o.color_alpha = true;
    for (int m = 0; m < 3; m++) {
        o.color_match = modes[m];
        trn_raster8 r;
        st = trn_render_color_relief(&f, &t, &o, &r, NULL, NULL, &e);
        if (nodata == t.count) {
            FUZZ_ASSERT(st == TRN_ERR_INVALID_ARGUMENT);
            continue;
        }
        FUZZ_ASSERT(st == TRN_OK && r.channels == 4 && r.width == 8 && r.height == 4);
        for (size_t p = 0; p < 32; p++) {
            const uint8_t *px = r.pixels + 4 * p;
            const bool none = px[0] == 0 && px[1] == 0 && px[2] == 0 && px[3] == 0;
            /* Nearest and exact give table colours only (exact: or nothing, as NaN without
             * an nv entry); interpolation stays between the channels' extremes. */
            if (m == 1) FUZZ_ASSERT(in_table(&t, px) || none);
            if (m == 2) FUZZ_ASSERT(in_table(&t, px) || none);
            for (int c = 0; m == 0 && c < 4 && !none; c++) {
                int lo = 255, hi = 0;
                for (size_t k = 0; k < t.count; k++) {
                    if (t.entries[k].rgba[c] < lo) lo = t.entries[k].rgba[c];
                    if (t.entries[k].rgba[c] > hi) hi = t.entries[k].rgba[c];
                }
                FUZZ_ASSERT(px[c] >= lo && px[c] <= hi);
            }
        }
        trn_raster8_dispose(&r);
    }
    trn_field_dispose(&f);
    trn_color_table_dispose(&t);
    return 0;
}
