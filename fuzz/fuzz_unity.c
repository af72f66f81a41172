/* Fuzz the Unity SerializedFile reader: parse, walk every object, extract the TerrainData and check
 * its invariants. */
#include <stdlib.h>
#include <string.h>

#include "formats/unity/unity_internal.h"
#include "terrane/unity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    trn_unity_limits lim;
    trn_unity_limits_default(&lim);
    lim.max_values = 1u << 16;
    lim.max_array_elements = 1u << 20;
    lim.max_resolution = 1025;
    trn_unity_file f;
    trn_error err;
    trn_status st = trn_unity_file_parse(data, size, "fuzz.asset", &lim, &f, &err);
    if (st != TRN_OK) {
        /* A failure leaves nothing behind and always says where. */
        if (f.types || f.objects || f.object_count || err.code != st) abort();
        if (st != TRN_ERR_NO_MEMORY && (err.offset < 0 || (uint64_t)err.offset > size)) abort();
        return 0;
    }
    for (uint32_t k = 0; k < f.object_count; k++) {
        const trn_unity_object *o = &f.objects[k];
        if (o->offset + o->size > size) abort();
        uw_object obj;
        st = uw_walk(&f, k, &lim, &obj, &err);
        if (st == TRN_OK) {
            /* Every value lies inside the object. */
            for (uint32_t v = 0; v < obj.count; v++)
                if (obj.values[v].offset < o->offset || obj.values[v].offset > o->offset + o->size)
                    abort();
            uw_dispose(&obj);
        } else if (obj.values || err.offset < 0 || (uint64_t)err.offset > size) {
            abort();
        }
    }
    trn_unity_terrain t;
    if (trn_unity_terrain_from_file(&f, 0, &lim, &t, &err) == TRN_OK) {
        if (t.resolution < 2 || !t.heights) abort();
        if (t.hole_count && t.hole_count != (size_t)(t.resolution - 1) * (t.resolution - 1))
            abort();
        for (uint32_t k = 0; k < t.alphamap_count; k++)
            if (t.alphamaps[k].found && !t.alphamaps[k].rgba) abort();
        trn_field field;
        if (trn_unity_terrain_to_field(&t, &field, &err) == TRN_OK) {
            if (field.cells_x != t.resolution - 1) abort();
            trn_field_dispose(&field);
        }
        trn_labels labels;
        if (t.layer_count && trn_unity_terrain_to_labels(&t, &labels, &err) == TRN_OK) {
            for (size_t k = 0; k < (size_t)t.resolution * t.resolution; k++)
                if (labels.values[k] >= t.layer_count && labels.values[k] != TRN_LABEL_NONE)
                    abort();
            trn_labels_dispose(&labels);
        }
        trn_unity_terrain_dispose(&t);
    }
    trn_unity_file_dispose(&f);
    return 0;
}
