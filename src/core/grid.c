/* Field, mask and label-map allocation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "terrane/core.h"

static trn_status grid_count(uint32_t cells_x, uint32_t cells_z, size_t elem, size_t *count,
                             size_t *bytes, trn_error *err)
{
    size_t n;
    if (!trn_mul_size((size_t)cells_x + 1u, (size_t)cells_z + 1u, &n) ||
        !trn_mul_size(n, elem, bytes))
        return trn_error_set(err, TRN_ERR_OVERFLOW, NULL, -1,
                             "grid of %u x %u cells is too large for this machine", cells_x,
                             cells_z);
    *count = n;
    return TRN_OK;
}

trn_status trn_field_init(trn_field *field, uint32_t cells_x, uint32_t cells_z, double size_x,
                          double size_z, trn_error *err)
{
    memset(field, 0, sizeof *field);
    size_t n = 0, bytes = 0;
    trn_status st = grid_count(cells_x, cells_z, sizeof(float), &n, &bytes, err);
    if (st) return st;
    field->heights = calloc(n, sizeof(float));
    if (!field->heights)
        return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for %zu samples",
                             n);
    field->cells_x = cells_x;
    field->cells_z = cells_z;
    field->size_x = size_x;
    field->size_z = size_z;
    return TRN_OK;
}

void trn_field_dispose(trn_field *field)
{
    if (!field) return;
    free(field->heights);
    memset(field, 0, sizeof *field);
}

size_t trn_field_sample_count(const trn_field *field)
{
    size_t n;
    if (!trn_mul_size((size_t)field->cells_x + 1u, (size_t)field->cells_z + 1u, &n)) return 0;
    return n;
}

void trn_field_range(const trn_field *field, float *min_out, float *max_out)
{
    size_t n = trn_field_sample_count(field);
    float lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        float h = field->heights[i];
        if (h < lo) lo = h;
        if (h > hi) hi = h;
    }
    if (lo > hi) lo = hi = 0.0f;
    if (min_out) *min_out = lo;
    if (max_out) *max_out = hi;
}

trn_status trn_mask_init(trn_mask *mask, uint32_t cells_x, uint32_t cells_z, trn_error *err)
{
    memset(mask, 0, sizeof *mask);
    size_t n = 0, bytes = 0;
    trn_status st = grid_count(cells_x, cells_z, sizeof(float), &n, &bytes, err);
    if (st) return st;
    mask->values = calloc(n, sizeof(float));
    if (!mask->values) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    mask->cells_x = cells_x;
    mask->cells_z = cells_z;
    return TRN_OK;
}

void trn_mask_dispose(trn_mask *mask)
{
    if (!mask) return;
    free(mask->values);
    memset(mask, 0, sizeof *mask);
}

trn_status trn_labels_init(trn_labels *labels, uint32_t cells_x, uint32_t cells_z,
                           trn_error *err)
{
    memset(labels, 0, sizeof *labels);
    size_t n = 0, bytes = 0;
    trn_status st = grid_count(cells_x, cells_z, 1, &n, &bytes, err);
    if (st) return st;
    labels->values = calloc(n, 1);
    if (!labels->values) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    labels->cells_x = cells_x;
    labels->cells_z = cells_z;
    return TRN_OK;
}

trn_status trn_labels_add_name(trn_labels *labels, const char *name, size_t name_len,
                               trn_error *err)
{
    char **grown = realloc(labels->names, ((size_t)labels->name_count + 1) * sizeof *grown);
    if (!grown) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    labels->names = grown;
    char *copy = malloc(name_len + 1);
    if (!copy) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    memcpy(copy, name, name_len);
    copy[name_len] = '\0';
    labels->names[labels->name_count++] = copy;
    return TRN_OK;
}

void trn_labels_dispose(trn_labels *labels)
{
    if (!labels) return;
    for (uint32_t i = 0; i < labels->name_count; i++) free(labels->names[i]);
    free(labels->names);
    free(labels->values);
    memset(labels, 0, sizeof *labels);
}
