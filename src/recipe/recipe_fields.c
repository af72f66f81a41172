/* A recipe's fields as table rows, and the four passes every row goes through: reading it from
 * JSON, checking it in a struct built in code, writing its canonical text and hashing it into
 * the fingerprint. A new field of one of these kinds is one row. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numtext.h"
#include "core/textbuf.h"
#include "recipe/recipe_fields.h"

#define F(T, m) TRN_RCP_MEMBER(T, m)
/* Members first .. last of T as one span. */
#define SPAN(T, first, last)                                                                       \
    offsetof(T, first), offsetof(T, last) + sizeof(((T *)0)->last) - offsetof(T, first)
#define NONE 0, 0

static const char *const profiles[] = {"fbm", "ridged", NULL};

/* Keys in the order unknown-key messages list them. */
const trn_rcp_field trn_rcp_recipe_fields[] = {
    {"size", TRN_RCP_PAIR, 0, TRN_NUM_SIZE, F(trn_recipe, size_x), F(trn_recipe, size_z), 0,
     "[x, z], two numbers > 0 (world units)", NULL, NULL},
    {"resolution", TRN_RCP_WHOLE_PAIR, 0, TRN_NUM_CELLS, F(trn_recipe, cells_x),
     F(trn_recipe, cells_z), 0, "[cells_x, cells_z], two whole numbers 1..65536", NULL, NULL},
    {"seed", TRN_RCP_SEED, 0, TRN_NUM_SEED, F(trn_recipe, seed), NONE, 0, NULL, NULL, NULL},
    /* Its upper bound is the grid's longer side: checked with the grid. */
    {"chunk_cells", TRN_RCP_WHOLE, TRN_RCP_OWN_CHECK, TRN_NUM_CHUNK_CELLS,
     F(trn_recipe, chunk_cells), NONE, TRN_RCP_CHUNK_CELLS, NULL, NULL, NULL},
    {"sea_level", TRN_RCP_OPTIONAL, 0, TRN_NUM_SEA_LEVEL, F(trn_recipe, sea_level),
     F(trn_recipe, has_sea_level), 0, NULL, NULL, NULL},
    {"snow_line", TRN_RCP_OPTIONAL, 0, TRN_NUM_SNOW_LINE, F(trn_recipe, snow_line),
     F(trn_recipe, has_snow_line), 0, NULL, NULL, NULL},
    {"default_landform", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK | TRN_RCP_ALWAYS, 0,
     F(trn_recipe, default_landform), NONE, 0, "the name of a landform", NULL, NULL},
    {"landforms", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, landforms), F(trn_recipe, landform_count), 0,
     NULL, NULL, NULL},
    {"default_biome", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK | TRN_RCP_ALWAYS, 0,
     F(trn_recipe, default_biome), NONE, 0, "the name of a biome", NULL, NULL},
    {"biomes", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, biomes), F(trn_recipe, biome_count), 0, NULL,
     NULL, NULL},
    {"rules", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, rules), F(trn_recipe, rule_count), 0, NULL, NULL,
     NULL},
    {"layers", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, layers),
     SPAN(trn_recipe, layer_count, has_layers), 0, NULL, NULL, NULL},
    /* The three stroke sections share the recipe's strokes. */
    {"regions", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, strokes), F(trn_recipe, stroke_count), 0, NULL,
     NULL, NULL},
    {"edits", TRN_RCP_CUSTOM, 0, 0, NONE, NONE, 0, NULL, NULL, NULL},
    {"exclusions", TRN_RCP_CUSTOM, 0, 0, NONE, NONE, 0, NULL, NULL, NULL},
    {"palette", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, palette_json), NONE, 0, NULL, NULL, NULL},
    {"preset_id", TRN_RCP_TEXT, 0, 0, F(trn_recipe, preset_id), NONE, 0,
     "a preset id (a non-empty string)", "expected a non-empty preset id, found \"\"", NULL},
    {"preset_version", TRN_RCP_OPTIONAL, 0, TRN_NUM_PRESET_VERSION, F(trn_recipe, preset_version),
     F(trn_recipe, has_preset_version), 0, NULL, NULL, NULL},
    {"graph", TRN_RCP_CUSTOM, 0, 0, F(trn_recipe, graph_json), NONE, 0, NULL, NULL, NULL},
    /* Accepted, never kept: there is one version. */
    {"format_version", TRN_RCP_CUSTOM, 0, 0, NONE, NONE, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, NONE, NONE, 0, NULL, NULL, NULL}};

const trn_rcp_field trn_rcp_landform_fields[] = {
    {"profile", TRN_RCP_CHOICE, 0, 0, F(trn_landform, profile), NONE, TRN_PROFILE_FBM,
     "\"fbm\" or \"ridged\"", NULL, profiles},
    {"height_variation", TRN_RCP_NUMBER, 0, TRN_NUM_HEIGHT_VARIATION,
     F(trn_landform, height_variation), NONE, 100, NULL, NULL, NULL},
    {"base_height", TRN_RCP_NUMBER, 0, TRN_NUM_BASE_HEIGHT, F(trn_landform, base_height), NONE, 0,
     NULL, NULL, NULL},
    {"feature_size", TRN_RCP_NUMBER, 0, TRN_NUM_FEATURE_SIZE, F(trn_landform, feature_size), NONE,
     256, NULL, NULL, NULL},
    {"roughness", TRN_RCP_NUMBER, 0, TRN_NUM_ROUGHNESS, F(trn_landform, roughness), NONE, 0.5, NULL,
     NULL, NULL},
    {"octaves", TRN_RCP_WHOLE, 0, TRN_NUM_OCTAVES, F(trn_landform, octaves), NONE, 5, NULL, NULL,
     NULL},
    {"warp_amplitude", TRN_RCP_NUMBER, 0, TRN_NUM_WARP_AMPLITUDE, F(trn_landform, warp_amplitude),
     NONE, 0, NULL, NULL, NULL},
    {"warp_feature_size", TRN_RCP_NUMBER, 0, TRN_NUM_WARP_FEATURE_SIZE,
     F(trn_landform, warp_feature_size), NONE, 128, NULL, NULL, NULL},
    {"stretch", TRN_RCP_NUMBER, 0, TRN_NUM_STRETCH, F(trn_landform, stretch), NONE, 1, NULL, NULL,
     NULL},
    {"heading", TRN_RCP_NUMBER, 0, TRN_NUM_HEADING, F(trn_landform, heading), NONE, 0, NULL, NULL,
     NULL},
    /* Stream Power's parameters, read and checked by the graph's node registry. */
    {"evolution", TRN_RCP_CUSTOM, 0, 0, F(trn_landform, evolution), NONE, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, NONE, NONE, 0, NULL, NULL, NULL}};

const trn_rcp_field trn_rcp_biome_fields[] = {
    {"color", TRN_RCP_COLOR, TRN_RCP_ALWAYS, TRN_NUM_COLOR, F(trn_biome, color), NONE, 0,
     "[r, g, b, a], four numbers from 0 to 1", NULL, NULL},
    {"material", TRN_RCP_TEXT, 0, 0, F(trn_biome, material), NONE, 0,
     "a material asset id (a non-empty string)",
     "expected a non-empty material asset id, found \"\"", NULL},
    {"texture_scale", TRN_RCP_NUMBER, 0, TRN_NUM_TEXTURE_SCALE, F(trn_biome, texture_scale), NONE,
     1, NULL, NULL, NULL},
    {"landform", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK, 0, F(trn_biome, landform), NONE, 0,
     "the name of a landform", NULL, NULL},
    {"allow_snow", TRN_RCP_BOOL, 0, 0, F(trn_biome, allow_snow), NONE, 1, "true or false", NULL,
     NULL},
    /* BeamNG's ground models: a list the recipe layer keeps (groundmodels.c). */
    {"groundmodel", TRN_RCP_CUSTOM, 0, 0, F(trn_biome, groundmodel), NONE, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, NONE, NONE, 0, NULL, NULL, NULL}};

const trn_rcp_field trn_rcp_rule_fields[] = {
    {"id", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK | TRN_RCP_ALWAYS, 0, F(trn_rule, id), NONE, 0,
     "a rule id (a non-empty string)", NULL, NULL},
    {"biome", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK | TRN_RCP_ALWAYS, 0, F(trn_rule, biome), NONE, 0,
     "the name of a biome", NULL, NULL},
    {"layer", TRN_RCP_TEXT, TRN_RCP_OWN_CHECK, 0, F(trn_rule, layer), NONE, 0,
     "a layer name (a non-empty string)", "expected a non-empty layer name, found \"\"", NULL},
    {"priority", TRN_RCP_NUMBER, 0, TRN_NUM_PRIORITY, F(trn_rule, priority), NONE, 0, NULL, NULL,
     NULL},
    {"blend", TRN_RCP_NUMBER, 0, TRN_NUM_BLEND, F(trn_rule, blend), NONE, 0, NULL, NULL, NULL},
    {"elevation", TRN_RCP_BAND, 0, TRN_NUM_ELEVATION, F(trn_rule, elevation), NONE, 0, NULL, NULL,
     NULL},
    {"slope", TRN_RCP_BAND, 0, TRN_NUM_SLOPE, F(trn_rule, slope), NONE, 0, NULL, NULL, NULL},
    {"moisture", TRN_RCP_BAND, 0, TRN_NUM_MOISTURE, F(trn_rule, moisture), NONE, 0, NULL, NULL,
     NULL},
    {"water_distance", TRN_RCP_BAND, 0, TRN_NUM_WATER_DISTANCE, F(trn_rule, water_distance), NONE,
     0, NULL, NULL, NULL},
    {"substrate", TRN_RCP_CUSTOM, 0, 0, F(trn_rule, substrate_mask), NONE, 0, NULL, NULL, NULL},
    {NULL, 0, 0, 0, NONE, NONE, 0, NULL, NULL, NULL}};

/* ---- tables ---- */

const trn_rcp_field *trn_rcp_field_find(const trn_rcp_field *rows, const char *key)
{
    for (const trn_rcp_field *f = rows; f->name; f++)
        if (strcmp(f->name, key) == 0) return f;
    return NULL;
}

void trn_rcp_field_names(const trn_rcp_field *rows, const char *known[65])
{
    size_t n = 0;
    for (const trn_rcp_field *f = rows; f->name && n < 64; f++)
        known[n++] = f->name;
    known[n] = NULL;
}

size_t trn_rcp_field_sorted(const trn_rcp_field *rows, const trn_rcp_field *out[64])
{
    size_t n = 0;
    for (const trn_rcp_field *f = rows; f->name && n < 64; f++) {
        /* Insertion: the tables are short. */
        size_t at = n++;
        while (at > 0 && strcmp(out[at - 1]->name, f->name) > 0) {
            out[at] = out[at - 1];
            at--;
        }
        out[at] = f;
    }
    return n;
}

#define AT(T, base, off) ((T *)(void *)((char *)(base) + (off)))
#define CAT(T, base, off) ((const T *)(const void *)((const char *)(base) + (off)))

void trn_rcp_field_defaults(const trn_rcp_field *rows, void *base)
{
    for (const trn_rcp_field *f = rows; f->name; f++) {
        switch (f->kind) {
        case TRN_RCP_NUMBER:
            *AT(double, base, f->offset) = f->def;
            break;
        case TRN_RCP_WHOLE:
            *AT(uint32_t, base, f->offset) = (uint32_t)f->def;
            break;
        case TRN_RCP_BOOL:
            *AT(bool, base, f->offset) = f->def != 0;
            break;
        case TRN_RCP_CHOICE:
            *AT(int, base, f->offset) = (int)f->def;
            break;
        default:
            break;
        }
    }
}

bool trn_rcp_field_is_default(const trn_rcp_field *row, const void *base)
{
    switch (row->kind) {
    case TRN_RCP_NUMBER:
        return *CAT(double, base, row->offset) == row->def;
    case TRN_RCP_WHOLE:
        return *CAT(uint32_t, base, row->offset) == (uint32_t)row->def;
    case TRN_RCP_OPTIONAL:
        return !*CAT(bool, base, row->offset2);
    case TRN_RCP_TEXT:
        return *CAT(char *, base, row->offset) == NULL;
    case TRN_RCP_BOOL:
        return *CAT(bool, base, row->offset) == (row->def != 0);
    case TRN_RCP_CHOICE:
        return *CAT(int, base, row->offset) == (int)row->def;
    case TRN_RCP_BAND:
        return !CAT(trn_band, base, row->offset)->set;
    default:
        return false;
    }
}

void trn_rcp_landform_defaults(trn_landform *lf)
{
    trn_rcp_field_defaults(trn_rcp_landform_fields, lf);
}

bool trn_rcp_landform_field_is_default(const trn_landform *lf, const char *key)
{
    const trn_rcp_field *row = trn_rcp_field_find(trn_rcp_landform_fields, key);
    if (!row) return false;
    if (row->kind == TRN_RCP_CUSTOM) return lf->evolution == NULL; /* evolution */
    return trn_rcp_field_is_default(row, lf);
}

/* ---- reading ---- */

static trn_status refuse(const trn_doc *d, const char *expect, const json_t *v)
{
    char buf[120];
    return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", expect,
                        trn_json_describe(v, buf, sizeof buf));
}

/* A whole number of which's range, converted only once it is known to fit: converting a
 * double outside the target's range is undefined behaviour. */
static trn_status read_u32(const trn_doc *d, const json_t *v, trn_rcp_num which, uint32_t *out)
{
    double x = 0.0;
    trn_status st = trn_doc_number(d, v, trn_rcp_num_range(which), &x);
    if (st) return st;
    if (!trn_rcp_num_whole(which) || !(x >= 0.0 && x <= 4294967295.0))
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "expected %s, found a number out of range", trn_rcp_num_expect(which));
    *out = (uint32_t)x;
    return TRN_OK;
}

/* [a, b] of two numbers of which's range. */
static trn_status read_pair(const trn_doc *d, const json_t *v, trn_rcp_num which, const char *shape,
                            double out[2])
{
    char buf[120];
    if (!json_is_array(v) || json_array_size(v) != 2) {
        if (json_is_array(v))
            return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %zu elements",
                                shape, json_array_size(v));
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", shape,
                            trn_json_describe(v, buf, sizeof buf));
    }
    for (size_t i = 0; i < 2; i++) {
        trn_json_path_push_index(d->path, i);
        trn_status st = trn_doc_number(d, json_array_get(v, i), trn_rcp_num_range(which), &out[i]);
        if (st) return st;
        trn_json_path_pop(d->path);
    }
    return TRN_OK;
}

static trn_status read_band(const trn_doc *d, const json_t *v, trn_rcp_num which, trn_band *band)
{
    double mm[2] = {0.0, 0.0};
    char shape[160];
    snprintf(shape, sizeof shape, "[min, max], two numbers (%s)", trn_rcp_num_expect(which));
    trn_status st = read_pair(d, v, which, shape, mm);
    if (st) return st;
    if (mm[0] > mm[1]) {
        char a[40], b[40];
        trn_rcp_format_double(mm[0], a);
        trn_rcp_format_double(mm[1], b);
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                            "the band is [min, max] and min %s is greater than max %s", a, b);
    }
    band->set = true;
    band->min = mm[0];
    band->max = mm[1];
    return TRN_OK;
}

static trn_status read_color(const trn_doc *d, const trn_rcp_field *row, const json_t *v,
                             float color[4])
{
    char buf[120];
    if (!json_is_array(v) || json_array_size(v) != 4) {
        if (json_is_array(v))
            return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %zu elements",
                                row->expect, json_array_size(v));
        return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE, "expected %s, found %s", row->expect,
                            trn_json_describe(v, buf, sizeof buf));
    }
    for (size_t i = 0; i < 4; i++) {
        double x = 0.0;
        trn_json_path_push_index(d->path, i);
        trn_status st = trn_doc_number(d, json_array_get(v, i), trn_rcp_num_range(row->num), &x);
        if (st) return st;
        color[i] = (float)x;
        trn_json_path_pop(d->path);
    }
    return TRN_OK;
}

trn_status trn_rcp_field_read(const trn_doc *d, const trn_rcp_field *row, const json_t *v,
                              void *base)
{
    trn_status st;
    switch (row->kind) {
    case TRN_RCP_NUMBER:
        return trn_doc_number(d, v, trn_rcp_num_range(row->num), AT(double, base, row->offset));
    case TRN_RCP_WHOLE:
        return read_u32(d, v, row->num, AT(uint32_t, base, row->offset));
    case TRN_RCP_OPTIONAL:
        st = trn_doc_number(d, v, trn_rcp_num_range(row->num), AT(double, base, row->offset));
        *AT(bool, base, row->offset2) = true;
        return st;
    case TRN_RCP_TEXT: {
        if (!json_is_string(v) || json_string_length(v) == 0) return refuse(d, row->expect, v);
        char **out = AT(char *, base, row->offset);
        free(*out);
        *out = trn_text_dup(json_string_value(v));
        if (!*out)
            return trn_error_set(d->err, TRN_ERR_NO_MEMORY, d->file, -1,
                                 "out of memory reading a recipe");
        return TRN_OK;
    }
    case TRN_RCP_BOOL:
        if (!json_is_boolean(v)) return refuse(d, row->expect, v);
        *AT(bool, base, row->offset) = json_is_true(v);
        return TRN_OK;
    case TRN_RCP_CHOICE: {
        const char *s = json_string_value(v);
        for (int k = 0; s && row->choices[k]; k++)
            if (strcmp(s, row->choices[k]) == 0) {
                *AT(int, base, row->offset) = k;
                return TRN_OK;
            }
        return refuse(d, row->expect, v);
    }
    case TRN_RCP_PAIR: {
        double xz[2] = {0.0, 0.0};
        if ((st = read_pair(d, v, row->num, row->expect, xz))) return st;
        *AT(double, base, row->offset) = xz[0];
        *AT(double, base, row->offset2) = xz[1];
        return TRN_OK;
    }
    case TRN_RCP_WHOLE_PAIR: {
        double xz[2] = {0.0, 0.0};
        if ((st = read_pair(d, v, row->num, row->expect, xz))) return st;
        for (size_t i = 0; i < 2; i++)
            if (!trn_rcp_num_whole(row->num) || !(xz[i] >= 0.0 && xz[i] <= 4294967295.0)) {
                trn_json_path_push_index(d->path, i);
                return trn_doc_fail(d, TRN_ERR_JSON, TRN_JSON_VALUE,
                                    "expected %s, found a number out of range",
                                    trn_rcp_num_expect(row->num));
            }
        *AT(uint32_t, base, row->offset) = (uint32_t)xz[0];
        *AT(uint32_t, base, row->offset2) = (uint32_t)xz[1];
        return TRN_OK;
    }
    case TRN_RCP_BAND:
        return read_band(d, v, row->num, AT(trn_band, base, row->offset));
    case TRN_RCP_COLOR:
        return read_color(d, row, v, AT(float, base, row->offset));
    case TRN_RCP_SEED: {
        /* Read as an integer: 2^63-1 does not survive a trip through double. */
        uint64_t *out = AT(uint64_t, base, row->offset);
        if (json_is_integer(v) && json_integer_value(v) >= 0) {
            *out = (uint64_t)json_integer_value(v);
            return TRN_OK;
        }
        if (json_is_real(v)) {
            double x = json_real_value(v);
            if (x >= 0 && x <= 9007199254740992.0 && floor(x) == x) {
                *out = (uint64_t)x;
                return TRN_OK;
            }
        }
        return refuse(d, trn_rcp_num_expect(row->num), v);
    }
    case TRN_RCP_CUSTOM:
        break;
    }
    return TRN_OK;
}

/* ---- checking ---- */

trn_status trn_rcp_num_check(trn_rcp_num which, double v, char *msg, size_t msg_size)
{
    if (trn_rcp_num_ok(which, v)) return TRN_OK;
    char num[40];
    if (isfinite(v))
        trn_rcp_format_double(v, num);
    else
        snprintf(num, sizeof num, "%s", isnan(v) ? "NaN" : v > 0 ? "Infinity" : "-Infinity");
    snprintf(msg, msg_size, "expected %s, found %s", trn_rcp_num_expect(which), num);
    return TRN_ERR_VALIDATION;
}

/* values[0..n) of range which, at where + [i] each (no index for n == 1). */
static trn_status check_nums(trn_rcp_num which, const double *values, size_t n, bool indexed,
                             trn_json_path *where, char *msg, size_t msg_size)
{
    for (size_t i = 0; i < n; i++) {
        if (indexed) trn_json_path_push_index(where, i);
        trn_status st = trn_rcp_num_check(which, values[i], msg, msg_size);
        if (st) return st;
        if (indexed) trn_json_path_pop(where);
    }
    return TRN_OK;
}

trn_status trn_rcp_field_check(const trn_rcp_field *row, const void *base, trn_json_path *where,
                               char *msg, size_t msg_size)
{
    if (row->flags & TRN_RCP_OWN_CHECK) return TRN_OK;
    const size_t depth = where->depth;
    trn_json_path_push_key(where, row->name);
    trn_status st = TRN_OK;
    double v[4];
    switch (row->kind) {
    case TRN_RCP_NUMBER:
        v[0] = *CAT(double, base, row->offset);
        st = check_nums(row->num, v, 1, false, where, msg, msg_size);
        break;
    case TRN_RCP_WHOLE:
        v[0] = *CAT(uint32_t, base, row->offset);
        st = check_nums(row->num, v, 1, false, where, msg, msg_size);
        break;
    case TRN_RCP_OPTIONAL:
        v[0] = *CAT(double, base, row->offset);
        if (*CAT(bool, base, row->offset2))
            st = check_nums(row->num, v, 1, false, where, msg, msg_size);
        break;
    case TRN_RCP_TEXT: {
        const char *s = *CAT(char *, base, row->offset);
        if (row->empty && s && !*s) {
            snprintf(msg, msg_size, "%s", row->empty);
            st = TRN_ERR_VALIDATION;
        }
        break;
    }
    case TRN_RCP_CHOICE: {
        const int k = *CAT(int, base, row->offset);
        int n = 0;
        while (row->choices[n])
            n++;
        if (k < 0 || k >= n) {
            snprintf(msg, msg_size, "expected %s, found %s %d", row->expect, row->name, k);
            st = TRN_ERR_VALIDATION;
        }
        break;
    }
    case TRN_RCP_PAIR:
        v[0] = *CAT(double, base, row->offset);
        v[1] = *CAT(double, base, row->offset2);
        st = check_nums(row->num, v, 2, true, where, msg, msg_size);
        break;
    case TRN_RCP_WHOLE_PAIR:
        v[0] = *CAT(uint32_t, base, row->offset);
        v[1] = *CAT(uint32_t, base, row->offset2);
        st = check_nums(row->num, v, 2, true, where, msg, msg_size);
        break;
    case TRN_RCP_BAND: {
        const trn_band *band = CAT(trn_band, base, row->offset);
        if (!band->set) break;
        v[0] = band->min;
        v[1] = band->max;
        if ((st = check_nums(row->num, v, 2, true, where, msg, msg_size))) break;
        if (band->min > band->max) {
            char a[40], b[40];
            trn_rcp_format_double(band->min, a);
            trn_rcp_format_double(band->max, b);
            snprintf(msg, msg_size, "the band is [min, max] and min %s is greater than max %s", a,
                     b);
            st = TRN_ERR_VALIDATION;
        }
        break;
    }
    case TRN_RCP_COLOR: {
        const float *c = CAT(float, base, row->offset);
        for (size_t i = 0; i < 4; i++)
            v[i] = c[i];
        st = check_nums(row->num, v, 4, true, where, msg, msg_size);
        break;
    }
    case TRN_RCP_SEED: {
        const uint64_t seed = *CAT(uint64_t, base, row->offset);
        if (seed > (uint64_t)INT64_MAX) {
            snprintf(msg, msg_size, "expected %s, found %llu", trn_rcp_num_expect(row->num),
                     (unsigned long long)seed);
            st = TRN_ERR_VALIDATION;
        }
        break;
    }
    case TRN_RCP_BOOL:
    case TRN_RCP_CUSTOM:
        break;
    }
    if (st == TRN_OK) where->depth = depth;
    return st;
}

/* ---- canonical text ---- */

void trn_rcp_emit_key(trn_rcp_buf *b, const char *key)
{
    trn_rcp_emit_text(b, key);
    trn_rcp_buf_put(b, ":", 1);
}

void trn_rcp_emit_double(trn_rcp_buf *b, double v)
{
    /* A tree refuses a non-finite real (json_real): so does this text. */
    if (!isfinite(v)) b->failed = true;
    char num[40];
    trn_rcp_format_double(v, num);
    trn_rcp_buf_puts(b, num);
}

void trn_rcp_emit_float(trn_rcp_buf *b, float v)
{
    /* The float's shortest decimal, so 0.3 stays 0.3 rather than 0.30000001192092896, read as
     * a double and written as one (what the text of the tree it used to be gave). */
    char num[40];
    trn_rcp_format_float(v, num);
    trn_rcp_emit_double(b, trn_rcp_parse_double(num));
}

void trn_rcp_emit_whole(trn_rcp_buf *b, long long v)
{
    char num[32];
    snprintf(num, sizeof num, "%lld", v);
    trn_rcp_buf_puts(b, num);
}

static void emit_pair(trn_rcp_buf *b, double x, double z)
{
    trn_rcp_buf_put(b, "[", 1);
    trn_rcp_emit_double(b, x);
    trn_rcp_buf_put(b, ",", 1);
    trn_rcp_emit_double(b, z);
    trn_rcp_buf_put(b, "]", 1);
}

bool trn_rcp_field_emit(trn_rcp_buf *b, const trn_rcp_field *row, const void *base, bool comma)
{
    if (row->kind == TRN_RCP_CUSTOM) return false;
    if (!(row->flags & TRN_RCP_ALWAYS) && trn_rcp_field_is_default(row, base)) return false;
    if (row->kind == TRN_RCP_TEXT && !*CAT(char *, base, row->offset)) {
        b->failed = true; /* a required text missing: a tree cannot hold it either */
        return false;
    }
    if (comma) trn_rcp_buf_put(b, ",", 1);
    trn_rcp_emit_key(b, row->name);
    switch (row->kind) {
    case TRN_RCP_NUMBER:
    case TRN_RCP_OPTIONAL:
        trn_rcp_emit_double(b, *CAT(double, base, row->offset));
        break;
    case TRN_RCP_WHOLE:
        trn_rcp_emit_whole(b, *CAT(uint32_t, base, row->offset));
        break;
    case TRN_RCP_TEXT:
        trn_rcp_emit_text(b, *CAT(char *, base, row->offset));
        break;
    case TRN_RCP_BOOL:
        trn_rcp_buf_puts(b, *CAT(bool, base, row->offset) ? "true" : "false");
        break;
    case TRN_RCP_CHOICE: {
        const int k = *CAT(int, base, row->offset);
        int n = 0;
        while (row->choices[n])
            n++;
        /* An out-of-range value writes the default's name, as the tree did. */
        trn_rcp_emit_text(b, row->choices[k > 0 && k < n ? k : 0]);
        break;
    }
    case TRN_RCP_PAIR:
        emit_pair(b, *CAT(double, base, row->offset), *CAT(double, base, row->offset2));
        break;
    case TRN_RCP_WHOLE_PAIR:
        trn_rcp_buf_put(b, "[", 1);
        trn_rcp_emit_whole(b, *CAT(uint32_t, base, row->offset));
        trn_rcp_buf_put(b, ",", 1);
        trn_rcp_emit_whole(b, *CAT(uint32_t, base, row->offset2));
        trn_rcp_buf_put(b, "]", 1);
        break;
    case TRN_RCP_BAND: {
        const trn_band *band = CAT(trn_band, base, row->offset);
        emit_pair(b, band->min, band->max);
        break;
    }
    case TRN_RCP_COLOR: {
        const float *c = CAT(float, base, row->offset);
        trn_rcp_buf_put(b, "[", 1);
        for (int i = 0; i < 4; i++) {
            if (i) trn_rcp_buf_put(b, ",", 1);
            trn_rcp_emit_float(b, c[i]);
        }
        trn_rcp_buf_put(b, "]", 1);
        break;
    }
    case TRN_RCP_SEED:
        trn_rcp_emit_whole(b, (long long)*CAT(uint64_t, base, row->offset));
        break;
    case TRN_RCP_CUSTOM:
        break;
    }
    return true;
}

/* ---- the fingerprint ---- */

void trn_rcp_hasher_reset(trn_rcp_hasher *h)
{
    XXH64_reset(&h->state, 0);
    h->used = 0;
}

void trn_rcp_hash_text(trn_rcp_hasher *h, const char *s)
{
    const uint64_t n = s ? (uint64_t)strlen(s) : UINT64_MAX;
    trn_rcp_hash(h, &n, sizeof n);
    if (s) trn_rcp_hash(h, s, (size_t)n);
}

uint64_t trn_rcp_hasher_digest(trn_rcp_hasher *h)
{
    XXH64_update(&h->state, h->buf, h->used);
    h->used = 0;
    return XXH64_digest(&h->state);
}

/* Sizes spelt out, so each copy is a constant-size one. */
static inline void hash_member(trn_rcp_hasher *h, const void *p, size_t n)
{
    switch (n) {
    case 1:
        trn_rcp_hash(h, p, 1);
        return;
    case 4:
        trn_rcp_hash(h, p, 4);
        return;
    case 8:
        trn_rcp_hash(h, p, 8);
        return;
    default:
        trn_rcp_hash(h, p, n);
        return;
    }
}

static inline void field_hash(trn_rcp_hasher *h, const trn_rcp_field *row, const void *base)
{
    switch (row->kind) {
    case TRN_RCP_TEXT:
        trn_rcp_hash_text(h, *CAT(char *, base, row->offset));
        return;
    case TRN_RCP_CUSTOM:
        return;
    case TRN_RCP_BAND: {
        /* Member by member: the struct's padding may hold anything. */
        const trn_band *band = CAT(trn_band, base, row->offset);
        trn_rcp_hash(h, &band->set, sizeof band->set);
        trn_rcp_hash(h, &band->min, sizeof band->min);
        trn_rcp_hash(h, &band->max, sizeof band->max);
        return;
    }
    default:
        /* The members' bytes as they are (none of these kinds has padding). */
        hash_member(h, CAT(char, base, row->offset), row->size);
        if (row->size2) hash_member(h, CAT(char, base, row->offset2), row->size2);
        return;
    }
}

void trn_rcp_field_hash(trn_rcp_hasher *h, const trn_rcp_field *row, const void *base)
{
    field_hash(h, row, base);
}

void trn_rcp_fields_hash(trn_rcp_hasher *h, const trn_rcp_field *rows, const void *base)
{
    for (const trn_rcp_field *f = rows; f->name; f++)
        field_hash(h, f, base);
}
