/* BeamNG terrain materials: v1.5 TerrainMaterial, texture sets, placeholder textures, v1 migration.
 */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "level_internal.h"
#include "recipe/recipe_internal.h"
#include "core/write_set.h"

#define MATERIALS_MAX_BYTES (64u << 20)

static const char *const group_names[TRN_TEX_GROUP_COUNT] = {"baseColor", "normal", "roughness",
                                                             "ao", "height"};
static const char *const scale_names[TRN_TEX_SCALE_COUNT] = {"Base", "Macro", "Detail"};
static const char *const scale_lower[TRN_TEX_SCALE_COUNT] = {"base", "macro", "detail"};

const char *trn_tex_group_name(trn_tex_group group)
{
    return (unsigned)group < TRN_TEX_GROUP_COUNT ? group_names[group] : "unknown";
}

const char *trn_tex_scale_name(trn_tex_scale scale)
{
    return (unsigned)scale < TRN_TEX_SCALE_COUNT ? scale_names[scale] : "unknown";
}

void trn_tex_field_name(trn_tex_group group, trn_tex_scale scale, const char *what, char *buf,
                        size_t buf_size)
{
    snprintf(buf, buf_size, "%s%s%s", trn_tex_group_name(group), trn_tex_scale_name(scale), what);
}

static trn_status oom(trn_error *err, const char *path)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, path, -1, "out of memory");
}

/* ------------------------------------------------------------------------------------------
 * Dispose and small queries.
 * ---------------------------------------------------------------------------------------- */

bool trn_terrain_material_is_v1(const trn_terrain_material *m)
{
    bool v1 = m->diffuse_map || m->normal_map || m->detail_map || m->macro_map;
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++)
            if (m->tex[g][s]) return false;
    return v1;
}

void trn_terrain_material_dispose(trn_terrain_material *m)
{
    if (!m) return;
    free(m->key);
    free(m->internal_name);
    free(m->persistent_id);
    free(m->annotation);
    free(m->groundmodel_name);
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++)
            free(m->tex[g][s]);
    free(m->diffuse_map);
    free(m->normal_map);
    free(m->detail_map);
    free(m->macro_map);
    free(m->extra_json);
    memset(m, 0, sizeof *m);
}

static void texture_set_dispose(trn_texture_set *ts)
{
    free(ts->key);
    free(ts->name);
    free(ts->persistent_id);
    free(ts->extra_json);
    memset(ts, 0, sizeof *ts);
}

void trn_material_file_dispose(trn_material_file *mf)
{
    if (!mf) return;
    for (uint32_t i = 0; i < mf->material_count; i++)
        trn_terrain_material_dispose(&mf->materials[i]);
    free(mf->materials);
    for (uint32_t i = 0; i < mf->texture_set_count; i++)
        texture_set_dispose(&mf->texture_sets[i]);
    free(mf->texture_sets);
    free(mf->other_json);
    memset(mf, 0, sizeof *mf);
}

/* ------------------------------------------------------------------------------------------
 * From JSON.
 * ---------------------------------------------------------------------------------------- */

static trn_status field_error(trn_error *err, const char *path, const char *key, const char *field,
                              const char *expected, const json_t *found)
{
    return trn_error_set(err, TRN_ERR_JSON, path, -1, "%s.%s: expected %s, found %s", key, field,
                         expected, trn_lvl_json_kind(found));
}

static trn_status take_string(const char *key, const char *field, const json_t *v, char **out,
                              const char *path, trn_error *err)
{
    if (!json_is_string(v)) return field_error(err, path, key, field, "a string", v);
    free(*out);
    *out = NULL;
    /* An empty path is an empty slot, as the editor treats it. */
    if (json_string_length(v) == 0) return TRN_OK;
    *out = trn_lvl_strdup(json_string_value(v));
    return *out ? TRN_OK : oom(err, path);
}

static trn_status take_number(const char *key, const char *field, const json_t *v, double *out,
                              const char *path, trn_error *err)
{
    if (!trn_lvl_json_get_number(v, out)) return field_error(err, path, key, field, "a number", v);
    return TRN_OK;
}

/* An array of n numbers; a single number fills all n (older files write scalar strengths). */
static trn_status take_vector(const char *key, const char *field, const json_t *v, double *out,
                              size_t n, const char *path, trn_error *err)
{
    char expected[48];
    snprintf(expected, sizeof expected, "an array of %zu numbers", n);
    double d;
    if (trn_lvl_json_get_number(v, &d) && !json_is_string(v)) {
        for (size_t i = 0; i < n; i++)
            out[i] = d;
        return TRN_OK;
    }
    if (!json_is_array(v) || json_array_size(v) != n)
        return field_error(err, path, key, field, expected, v);
    for (size_t i = 0; i < n; i++)
        if (!trn_lvl_json_get_number(json_array_get(v, i), &out[i]))
            return field_error(err, path, key, field, expected, v);
    return TRN_OK;
}

static trn_status extras_add(json_t **extras, const char *k, json_t *v, const char *path,
                             trn_error *err)
{
    if (!*extras && !(*extras = json_object())) return oom(err, path);
    if (json_object_set(*extras, k, v)) return oom(err, path);
    return TRN_OK;
}

static trn_status extras_finish(json_t *extras, char **out, const char *path, trn_error *err)
{
    *out = NULL;
    if (!extras) return TRN_OK;
    *out = json_dumps(extras, JSON_COMPACT | JSON_REAL_PRECISION(17));
    json_decref(extras);
    return *out ? TRN_OK : oom(err, path);
}

trn_status trn_lvl_material_from_json(const char *key, const json_t *obj, const char *path,
                                      trn_terrain_material *m, trn_error *err)
{
    memset(m, 0, sizeof *m);
    m->key = trn_lvl_strdup(key);
    if (!m->key) return oom(err, path);
    char tex_names[TRN_TEX_GROUP_COUNT][TRN_TEX_SCALE_COUNT][48];
    char size_names[TRN_TEX_GROUP_COUNT][TRN_TEX_SCALE_COUNT][48];
    char strength_names[TRN_TEX_GROUP_COUNT][TRN_TEX_SCALE_COUNT][48];
    for (int g = 0; g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; s < TRN_TEX_SCALE_COUNT; s++) {
            trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "Tex", tex_names[g][s], 48);
            trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "TexSize", size_names[g][s], 48);
            trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "Strength", strength_names[g][s],
                               48);
        }
    json_t *extras = NULL;
    trn_status st = TRN_OK;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        bool known = true;
        if (strcmp(k, "class") == 0)
            continue;
        else if (strcmp(k, "internalName") == 0)
            st = take_string(key, k, v, &m->internal_name, path, err);
        else if (strcmp(k, "persistentId") == 0)
            st = take_string(key, k, v, &m->persistent_id, path, err);
        else if (strcmp(k, "annotation") == 0)
            st = take_string(key, k, v, &m->annotation, path, err);
        else if (strcmp(k, "groundmodelName") == 0)
            st = take_string(key, k, v, &m->groundmodel_name, path, err);
        else if (strcmp(k, "macroDistances") == 0) {
            st = take_vector(key, k, v, m->macro_distances, 4, path, err);
            m->has_macro_distances = true;
        } else if (strcmp(k, "detailDistances") == 0) {
            st = take_vector(key, k, v, m->detail_distances, 4, path, err);
            m->has_detail_distances = true;
        } else if (strcmp(k, "macroDistAtten") == 0) {
            st = take_vector(key, k, v, m->macro_dist_atten, 2, path, err);
            m->has_macro_dist_atten = true;
        } else if (strcmp(k, "detailDistAtten") == 0) {
            st = take_vector(key, k, v, m->detail_dist_atten, 2, path, err);
            m->has_detail_dist_atten = true;
        } else if (strcmp(k, "diffuseMap") == 0)
            st = take_string(key, k, v, &m->diffuse_map, path, err);
        else if (strcmp(k, "normalMap") == 0)
            st = take_string(key, k, v, &m->normal_map, path, err);
        else if (strcmp(k, "detailMap") == 0)
            st = take_string(key, k, v, &m->detail_map, path, err);
        else if (strcmp(k, "macroMap") == 0)
            st = take_string(key, k, v, &m->macro_map, path, err);
        else if (strcmp(k, "diffuseSize") == 0)
            st = take_number(key, k, v, &m->diffuse_size, path, err);
        else if (strcmp(k, "detailSize") == 0)
            st = take_number(key, k, v, &m->detail_size, path, err);
        else if (strcmp(k, "macroSize") == 0)
            st = take_number(key, k, v, &m->macro_size, path, err);
        else if (strcmp(k, "detailStrength") == 0)
            st = take_number(key, k, v, &m->detail_strength, path, err);
        else if (strcmp(k, "macroStrength") == 0)
            st = take_number(key, k, v, &m->macro_strength, path, err);
        else if (strcmp(k, "detailDistance") == 0)
            st = take_number(key, k, v, &m->detail_distance, path, err);
        else if (strcmp(k, "macroDistance") == 0)
            st = take_number(key, k, v, &m->macro_distance, path, err);
        else {
            known = false;
            for (int g = 0; g < TRN_TEX_GROUP_COUNT && !known; g++)
                for (int s = 0; s < TRN_TEX_SCALE_COUNT && !known; s++) {
                    if (strcmp(k, tex_names[g][s]) == 0) {
                        st = take_string(key, k, v, &m->tex[g][s], path, err);
                        known = true;
                    } else if (strcmp(k, size_names[g][s]) == 0) {
                        st = take_number(key, k, v, &m->tex_size[g][s], path, err);
                        known = true;
                    } else if (s > 0 && strcmp(k, strength_names[g][s]) == 0) {
                        st = take_vector(key, k, v, m->strength[g][s - 1], 2, path, err);
                        m->has_strength[g][s - 1] = true;
                        known = true;
                    }
                }
        }
        if (!known) st = extras_add(&extras, k, v, path, err);
        if (st) break;
    }
    if (!st)
        st = extras_finish(extras, &m->extra_json, path, err);
    else
        json_decref(extras);
    if (st) trn_terrain_material_dispose(m);
    return st;
}

static trn_status take_tex_size(const char *key, const char *field, const json_t *v,
                                uint32_t out[2], const char *path, trn_error *err)
{
    double d[2];
    trn_status st = take_vector(key, field, v, d, 2, path, err);
    if (st) return st;
    for (int i = 0; i < 2; i++) {
        if (!(d[i] >= 0 && d[i] <= 65536 && d[i] == floor(d[i])))
            return trn_error_set(err, TRN_ERR_JSON, path, -1,
                                 "%s.%s: expected whole pixel sizes 0..65536, found %g", key, field,
                                 d[i]);
        out[i] = (uint32_t)d[i];
    }
    return TRN_OK;
}

trn_status trn_lvl_texture_set_from_json(const char *key, const json_t *obj, const char *path,
                                         trn_texture_set *ts, trn_error *err)
{
    memset(ts, 0, sizeof *ts);
    ts->key = trn_lvl_strdup(key);
    if (!ts->key) return oom(err, path);
    json_t *extras = NULL;
    trn_status st = TRN_OK;
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)obj, k, v)
    {
        if (strcmp(k, "class") == 0) continue;
        if (strcmp(k, "name") == 0)
            st = take_string(key, k, v, &ts->name, path, err);
        else if (strcmp(k, "persistentId") == 0)
            st = take_string(key, k, v, &ts->persistent_id, path, err);
        else if (strcmp(k, "baseTexSize") == 0)
            st = take_tex_size(key, k, v, ts->base_tex_size, path, err);
        else if (strcmp(k, "macroTexSize") == 0)
            st = take_tex_size(key, k, v, ts->macro_tex_size, path, err);
        else if (strcmp(k, "detailTexSize") == 0)
            st = take_tex_size(key, k, v, ts->detail_tex_size, path, err);
        else
            st = extras_add(&extras, k, v, path, err);
        if (st) break;
    }
    /* The engine finds the set by its object name; the key stands in when name is absent. */
    if (!st && !ts->name && !(ts->name = trn_lvl_strdup(key))) st = oom(err, path);
    if (!st)
        st = extras_finish(extras, &ts->extra_json, path, err);
    else
        json_decref(extras);
    if (st) texture_set_dispose(ts);
    return st;
}

trn_status trn_material_file_parse(const char *text, size_t text_size, const char *path,
                                   trn_material_file *mf, trn_error *err)
{
    memset(mf, 0, sizeof *mf);
    json_error_t je;
    size_t bom = trn_lvl_bom_length(text, text_size);
    json_t *root = json_loadb(text + bom, text_size - bom, 0, &je);
    if (!root) return trn_lvl_json_syntax_error(err, path, &je, 0, bom);
    trn_status st = TRN_OK;
    json_t *others = NULL;
    if (!json_is_object(root)) {
        st = trn_error_set(err, TRN_ERR_JSON, path, -1,
                           "$: expected an object of named materials, found %s",
                           trn_lvl_json_kind(root));
        goto done;
    }
    size_t n = json_object_size(root);
    if (n) {
        mf->materials = calloc(n, sizeof *mf->materials);
        mf->texture_sets = calloc(n, sizeof *mf->texture_sets);
        if (!mf->materials || !mf->texture_sets) {
            st = oom(err, path);
            goto done;
        }
    }
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        if (!json_is_object(v)) {
            st = trn_error_set(err, TRN_ERR_JSON, path, -1, "%s: expected an object, found %s", k,
                               trn_lvl_json_kind(v));
            goto done;
        }
        const json_t *cls = json_object_get(v, "class");
        const char *c = json_is_string(cls) ? json_string_value(cls) : "";
        if (strcmp(c, "TerrainMaterial") == 0) {
            st = trn_lvl_material_from_json(k, v, path, &mf->materials[mf->material_count], err);
            if (st) goto done;
            mf->material_count++;
        } else if (strcmp(c, "TerrainMaterialTextureSet") == 0) {
            st = trn_lvl_texture_set_from_json(k, v, path, &mf->texture_sets[mf->texture_set_count],
                                               err);
            if (st) goto done;
            mf->texture_set_count++;
        } else {
            if (!others && !(others = json_object())) {
                st = oom(err, path);
                goto done;
            }
            if (json_object_set(others, k, v)) {
                st = oom(err, path);
                goto done;
            }
        }
    }
    if (others) {
        mf->other_json = json_dumps(others, JSON_COMPACT | JSON_REAL_PRECISION(17));
        if (!mf->other_json) st = oom(err, path);
    }
done:
    json_decref(others);
    json_decref(root);
    if (st) trn_material_file_dispose(mf);
    return st;
}

trn_status trn_material_file_read(const char *path, trn_material_file *mf, trn_error *err)
{
    memset(mf, 0, sizeof *mf);
    uint8_t *data;
    size_t n;
    trn_status st = trn_file_read_all(path, MATERIALS_MAX_BYTES, &data, &n, err);
    if (st) return st;
    st = trn_material_file_parse((const char *)data, n, path, mf, err);
    free(data);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * To JSON.
 * ---------------------------------------------------------------------------------------- */

static bool set_str(json_t *obj, const char *k, const char *v)
{
    if (!v) return true;
    json_t *s = json_string(v);
    return s && !json_object_set_new(obj, k, s);
}

static bool set_num(json_t *obj, const char *k, double v)
{
    json_t *n = trn_lvl_json_number(v);
    return n && !json_object_set_new(obj, k, n);
}

static bool set_vec(json_t *obj, const char *k, const double *v, size_t n)
{
    json_t *a = json_array();
    if (!a) return false;
    for (size_t i = 0; i < n; i++)
        if (json_array_append_new(a, trn_lvl_json_number(v[i]))) {
            json_decref(a);
            return false;
        }
    return !json_object_set_new(obj, k, a);
}

static bool merge_extras(json_t *obj, const char *extra_json)
{
    if (!extra_json) return true;
    json_t *extras = json_loads(extra_json, 0, NULL);
    if (!json_is_object(extras)) {
        json_decref(extras);
        return false;
    }
    const char *k;
    json_t *v;
    bool ok = true;
    json_object_foreach(extras, k, v)
    {
        if (!json_object_get(obj, k)) ok = ok && !json_object_set(obj, k, v);
    }
    json_decref(extras);
    return ok;
}

json_t *trn_lvl_material_to_json(const trn_terrain_material *m)
{
    json_t *o = json_object();
    if (!o) return NULL;
    /* With a persistentId the editor's leading keys (internalName, class, persistentId), else
     * the older order (class first). */
    bool ok = true;
    if (m->persistent_id) {
        ok = set_str(o, "internalName", m->internal_name);
        ok = ok && set_str(o, "class", "TerrainMaterial");
        ok = ok && set_str(o, "persistentId", m->persistent_id);
    } else {
        ok = set_str(o, "class", "TerrainMaterial");
        ok = ok && set_str(o, "internalName", m->internal_name);
    }
    ok = ok && set_str(o, "annotation", m->annotation);
    ok = ok && set_str(o, "groundmodelName", m->groundmodel_name);
    char name[48];
    /* Field order of BeamNG's documented example: per group Base, Macro (+strength), Detail
     * (+strength). Numbers are left out only when 0 (unset); any other value read, negative ones
     * too, is written back, so rewriting a file never drops what it said. */
    for (int g = 0; ok && g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; ok && s < TRN_TEX_SCALE_COUNT; s++) {
            trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "Tex", name, sizeof name);
            ok = set_str(o, name, m->tex[g][s]);
            if (ok && m->tex_size[g][s] != 0) {
                trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "TexSize", name,
                                   sizeof name);
                ok = set_num(o, name, m->tex_size[g][s]);
            }
            if (ok && s > 0 && m->has_strength[g][s - 1]) {
                trn_tex_field_name((trn_tex_group)g, (trn_tex_scale)s, "Strength", name,
                                   sizeof name);
                ok = set_vec(o, name, m->strength[g][s - 1], 2);
            }
        }
    if (ok && m->has_macro_distances) ok = set_vec(o, "macroDistances", m->macro_distances, 4);
    if (ok && m->has_detail_distances) ok = set_vec(o, "detailDistances", m->detail_distances, 4);
    if (ok && m->has_macro_dist_atten) ok = set_vec(o, "macroDistAtten", m->macro_dist_atten, 2);
    if (ok && m->has_detail_dist_atten) ok = set_vec(o, "detailDistAtten", m->detail_dist_atten, 2);
    ok = ok && set_str(o, "diffuseMap", m->diffuse_map);
    if (ok && m->diffuse_size != 0) ok = set_num(o, "diffuseSize", m->diffuse_size);
    ok = ok && set_str(o, "normalMap", m->normal_map);
    ok = ok && set_str(o, "detailMap", m->detail_map);
    if (ok && m->detail_size != 0) ok = set_num(o, "detailSize", m->detail_size);
    if (ok && m->detail_strength != 0) ok = set_num(o, "detailStrength", m->detail_strength);
    if (ok && m->detail_distance != 0) ok = set_num(o, "detailDistance", m->detail_distance);
    ok = ok && set_str(o, "macroMap", m->macro_map);
    if (ok && m->macro_size != 0) ok = set_num(o, "macroSize", m->macro_size);
    if (ok && m->macro_strength != 0) ok = set_num(o, "macroStrength", m->macro_strength);
    if (ok && m->macro_distance != 0) ok = set_num(o, "macroDistance", m->macro_distance);
    ok = ok && merge_extras(o, m->extra_json);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *trn_lvl_texture_set_to_json(const trn_texture_set *ts)
{
    json_t *o = json_object();
    if (!o) return NULL;
    double b[2] = {ts->base_tex_size[0], ts->base_tex_size[1]};
    double ma[2] = {ts->macro_tex_size[0], ts->macro_tex_size[1]};
    double d[2] = {ts->detail_tex_size[0], ts->detail_tex_size[1]};
    bool ok = true;
    if (ts->persistent_id) {
        ok = set_str(o, "name", ts->name ? ts->name : ts->key);
        ok = ok && set_str(o, "class", "TerrainMaterialTextureSet");
        ok = ok && set_str(o, "persistentId", ts->persistent_id);
    } else {
        ok = set_str(o, "class", "TerrainMaterialTextureSet");
        ok = ok && set_str(o, "name", ts->name ? ts->name : ts->key);
    }
    ok = ok && set_vec(o, "baseTexSize", b, 2);
    ok = ok && set_vec(o, "macroTexSize", ma, 2);
    ok = ok && set_vec(o, "detailTexSize", d, 2);
    ok = ok && merge_extras(o, ts->extra_json);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static trn_status dump_root(json_t *root, char **text, size_t *text_size, trn_error *err)
{
    trn_lvl_buf b = {0};
    trn_lvl_json_pretty(&b, root);
    if (b.failed) {
        trn_lvl_buf_free(&b);
        return oom(err, NULL);
    }
    *text = b.data;
    if (text_size) *text_size = b.len;
    return TRN_OK;
}

trn_status trn_material_file_serialize(const trn_material_file *mf, char **text, size_t *text_size,
                                       trn_error *err)
{
    *text = NULL;
    json_t *root = json_object();
    if (!root) return oom(err, NULL);
    bool ok = true;
    for (uint32_t i = 0; ok && i < mf->texture_set_count; i++) {
        const trn_texture_set *ts = &mf->texture_sets[i];
        const char *key = ts->key ? ts->key : ts->name;
        if (!key) {
            json_decref(root);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "texture set %u has neither key nor name", i);
        }
        json_t *o = trn_lvl_texture_set_to_json(ts);
        ok = o && !json_object_set_new(root, key, o);
    }
    for (uint32_t i = 0; ok && i < mf->material_count; i++) {
        const trn_terrain_material *m = &mf->materials[i];
        const char *key = m->key ? m->key : m->internal_name;
        if (!key) {
            json_decref(root);
            return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                                 "material %u has neither key nor internalName", i);
        }
        json_t *o = trn_lvl_material_to_json(m);
        ok = o && !json_object_set_new(root, key, o);
    }
    if (ok && mf->other_json) {
        json_t *others = json_loads(mf->other_json, 0, NULL);
        ok = json_is_object(others) && !json_object_update_missing(root, others);
        json_decref(others);
    }
    if (!ok) {
        json_decref(root);
        return oom(err, NULL);
    }
    trn_status st = dump_root(root, text, text_size, err);
    json_decref(root);
    return st;
}

trn_status trn_material_file_write(const char *path, const trn_material_file *mf, trn_error *err)
{
    char *text;
    size_t n;
    trn_status st = trn_material_file_serialize(mf, &text, &n, err);
    if (st) return st;
    st = trn_file_write_atomic(path, text, n, err);
    free(text);
    return st;
}

/* ------------------------------------------------------------------------------------------
 * Placeholder materials and textures.
 * ---------------------------------------------------------------------------------------- */

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 16777619u;
    }
    return h;
}

void trn_lvl_safe_name(const char *name, char *buf, size_t buf_size)
{
    size_t n = 0;
    bool changed = false;
    for (const char *p = name; *p && n + 1 < buf_size && n < 64; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) || c == '_' || c == '-') {
            buf[n++] = (char)c;
        } else {
            buf[n++] = '_';
            changed = true;
        }
    }
    if (strlen(name) > n) changed = true;
    buf[n] = '\0';
    if ((changed || n == 0) && buf_size > n + 10)
        snprintf(buf + n, buf_size - n, "_%08x", fnv1a(name));
}

void trn_lvl_texture_file_name(const char *material, trn_tex_group group, trn_tex_scale scale,
                               char *buf, size_t buf_size)
{
    if (material && group == TRN_TEX_BASE_COLOR && scale == TRN_TEX_BASE) {
        char safe[96];
        trn_lvl_safe_name(material, safe, sizeof safe);
        snprintf(buf, buf_size, "t_terrane_%s_b.png", safe);
        return;
    }
    const char *kind = "grey";
    if (group == TRN_TEX_NORMAL)
        kind = "nm";
    else if (group == TRN_TEX_AO && scale == TRN_TEX_BASE)
        kind = "white";
    snprintf(buf, buf_size, "t_terrane_%s_%s.png", kind, scale_lower[scale]);
}

static bool name_has(const char *name, const char *word)
{
    size_t n = strlen(name), k = strlen(word);
    for (size_t i = 0; k <= n && i + k <= n; i++) {
        size_t j = 0;
        while (j < k && tolower((unsigned char)name[i + j]) == word[j])
            j++;
        if (j == k) return true;
    }
    return false;
}

typedef struct look {
    const char *word;
    uint8_t rgb[3];
} look;

/* Plausible colours for common names, so a fresh level reads at a glance. */
static const look looks[] = {
    {"grass", {84, 110, 52}}, {"rock", {112, 106, 98}},  {"stone", {120, 116, 108}},
    {"cliff", {100, 94, 88}}, {"sand", {194, 178, 128}}, {"gravel", {128, 120, 110}},
    {"dirt", {112, 86, 62}},  {"mud", {86, 70, 52}},     {"asphalt", {62, 62, 64}},
    {"road", {70, 70, 72}},   {"snow", {232, 236, 240}}, {"ice", {200, 220, 235}},
};

static const look *find_look(const char *name)
{
    for (size_t i = 0; i < sizeof looks / sizeof looks[0]; i++)
        if (name_has(name, looks[i].word)) return &looks[i];
    return NULL;
}

/* ------------------------------------------------------------------------------------------
 * Ground models.
 * ---------------------------------------------------------------------------------------- */

typedef struct surface_row {
    const char *groundmodel;
    const char *const *words;
} surface_row;

static const char *const w_asphalt[] = {"asphalt", "tarmac", "concrete", "pavement", "paved", NULL};
static const char *const w_beach[] = {"beach", "shore", "coast", NULL};
static const char *const w_mud[] = {"mud", "swamp", "marsh", "wetland", "bog", "paddy", NULL};
static const char *const w_snow[] = {"snow", "glacier", "ice", "frost", NULL};
static const char *const w_gravel[] = {"gravel", "pebble", "shingle", NULL};
static const char *const w_rock[] = {"rock",    "cliff", "scree", "stone", "stony",
                                     "boulder", "crag",  "talus", NULL};
static const char *const w_sand[] = {"sand", "desert", "dune", NULL};
static const char *const w_dust[] = {"dust", NULL};
static const char *const w_dirt[] = {"dirt",  "soil", "earth",  "bare",
                                     "field", "clay", "ground", NULL};
static const char *const w_grass[] = {"grass",   "meadow",  "forest", "lawn", "prairie", "steppe",
                                      "savanna", "pasture", "jungle", "wood", "moss",    NULL};

/* First matching row wins: specific surfaces before the broad ones they may be part of
 * ("sandstone" is rock, "snowfield" snow, "beachsand" beach sand). */
static const surface_row surface_rows[] = {
    {"ASPHALT", w_asphalt}, {"BEACHSAND", w_beach}, {"MUD", w_mud},   {"SNOW", w_snow},
    {"GRAVEL", w_gravel},   {"ROCK", w_rock},       {"SAND", w_sand}, {"DIRT_DUSTY", w_dust},
    {"DIRT", w_dirt},       {"GRASS", w_grass},
};

/* Does word (lower case, n letters) start with kw, or end with it when kw has 4+ letters? */
static bool word_matches(const char *word, size_t n, const char *kw)
{
    size_t k = strlen(kw);
    if (k > n) return false;
    if (memcmp(word, kw, k) == 0) return true;
    return k >= 4 && memcmp(word + n - k, kw, k) == 0;
}

const char *trn_beamng_groundmodel_for_name(const char *name)
{
    const char *s = name ? name : "";
    size_t len = strlen(s);
    for (size_t r = 0; r < sizeof surface_rows / sizeof surface_rows[0]; r++) {
        /* Words: runs of letters, also split where a lower-case letter meets an upper-case one
         * ("BeachSand" is beach + sand). */
        size_t i = 0;
        while (i < len) {
            while (i < len && !isalpha((unsigned char)s[i]))
                i++;
            char word[64];
            size_t n = 0;
            bool long_word = false;
            while (i < len && isalpha((unsigned char)s[i])) {
                if (n && islower((unsigned char)s[i - 1]) && isupper((unsigned char)s[i])) break;
                if (n < sizeof word - 1)
                    word[n++] = (char)tolower((unsigned char)s[i]);
                else
                    long_word = true;
                i++;
            }
            word[n] = '\0';
            for (const char *const *kw = surface_rows[r].words; n && !long_word && *kw; kw++)
                if (word_matches(word, n, *kw)) return surface_rows[r].groundmodel;
        }
    }
    return "DIRT";
}

/* The list lives with the recipe, which checks biomes against it. */
const char *trn_beamng_groundmodel_find(const char *name)
{
    return trn_rcp_groundmodel_find(name);
}

const char *trn_beamng_groundmodel_names(void)
{
    return trn_rcp_groundmodel_names();
}

/* The annotation class a ground model's surface gets (NATURE is the engine's default). */
static const char *annotation_for(const char *groundmodel)
{
    if (strcmp(groundmodel, "GRASS") == 0) return "GRASS";
    if (strncmp(groundmodel, "ASPHALT", 7) == 0) return "ASPHALT";
    return "NATURE";
}

static void base_colour(const char *name, uint8_t rgb[3])
{
    const look *l = find_look(name);
    if (l) {
        memcpy(rgb, l->rgb, 3);
        return;
    }
    /* Unknown names get a muted earthy colour picked by a hash of the name (deterministic). */
    uint32_t h = fnv1a(name);
    rgb[0] = (uint8_t)(80 + (h & 0x3f));
    rgb[1] = (uint8_t)(70 + ((h >> 6) & 0x3f));
    rgb[2] = (uint8_t)(50 + ((h >> 12) & 0x3f));
}

/* Example values from BeamNG's documentation (official levels) for the overlay strengths. */
static const double default_strength[TRN_TEX_GROUP_COUNT][2][2] = {
    {{0.1, 0.2}, {0.25, 0.0}}, {{0.2, 0.4}, {0.7, 0.15}}, {{0.15, 0.8}, {0.3, 0.3}},
    {{0, 0}, {0, 0}},          {{0, 0}, {0, 0}},
};

static void default_distances(trn_terrain_material *m)
{
    static const double macro[4] = {0, 10, 100, 3000}, detail[4] = {0, 0, 30, 60};
    memcpy(m->macro_distances, macro, sizeof macro);
    memcpy(m->detail_distances, detail, sizeof detail);
    m->macro_dist_atten[0] = m->macro_dist_atten[1] = 1.0;
    m->detail_dist_atten[0] = m->detail_dist_atten[1] = 1.0;
    m->has_macro_distances = m->has_detail_distances = true;
    m->has_macro_dist_atten = m->has_detail_dist_atten = true;
}

/* Point slot (g, s) of m at the placeholder texture under game_dir, if the slot is empty. */
static bool fill_slot(trn_terrain_material *m, const char *name, const char *game_dir, int g, int s)
{
    if (m->tex[g][s]) return true;
    char file[160], full[1200];
    trn_lvl_texture_file_name(name, (trn_tex_group)g, (trn_tex_scale)s, file, sizeof file);
    if (!trn_lvl_join(full, sizeof full, game_dir, file)) return false;
    m->tex[g][s] = trn_lvl_strdup(full);
    return m->tex[g][s] != NULL;
}

trn_status trn_terrain_material_init_default(trn_terrain_material *m, const char *name,
                                             const char *game_dir, double world_size,
                                             trn_error *err)
{
    memset(m, 0, sizeof *m);
    if (!name || !name[0] || !game_dir)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "a terrain material needs a name and a texture folder");
    const char *groundmodel = trn_beamng_groundmodel_for_name(name);
    m->key = trn_lvl_strdup(name);
    m->internal_name = trn_lvl_strdup(name);
    m->annotation = trn_lvl_strdup(annotation_for(groundmodel));
    m->groundmodel_name = trn_lvl_strdup(groundmodel);
    bool ok = m->key && m->internal_name && m->annotation && m->groundmodel_name;
    /* Mapping sizes in metres: base spans the terrain (no visible repeat), macro and detail use
     * the engine's defaults (60 m, 2 m). */
    double sizes[TRN_TEX_SCALE_COUNT] = {world_size > 0 ? world_size : 256.0, 60.0, 2.0};
    for (int g = 0; ok && g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; ok && s < TRN_TEX_SCALE_COUNT; s++) {
            ok = fill_slot(m, name, game_dir, g, s);
            m->tex_size[g][s] = sizes[s];
        }
    /* The seed writes strengths for the groups that show them (baseColor, normal, roughness). */
    for (int g = 0; g <= TRN_TEX_ROUGHNESS; g++)
        for (int k = 0; k < 2; k++) {
            memcpy(m->strength[g][k], default_strength[g][k], sizeof m->strength[g][k]);
            m->has_strength[g][k] = true;
        }
    default_distances(m);
    if (!ok) {
        trn_terrain_material_dispose(m);
        return oom(err, NULL);
    }
    return TRN_OK;
}

/* Pixel size of each slot, [w, h]. */
typedef struct slot_sizes {
    uint32_t w[TRN_TEX_SCALE_COUNT], h[TRN_TEX_SCALE_COUNT];
} slot_sizes;

static bool is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

static trn_status check_slot_size(uint32_t v, const char *what, trn_error *err)
{
    if (!is_pow2(v) || v > 8192)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "%s texture size %u must be a power of two from 1 to 8192", what, v);
    return TRN_OK;
}

static trn_status sizes_from_options(const trn_texture_options *o, slot_sizes *ss, trn_error *err)
{
    uint32_t v[3] = {o && o->base_size ? o->base_size : 256,
                     o && o->macro_size ? o->macro_size : 256,
                     o && o->detail_size ? o->detail_size : 256};
    for (int s = 0; s < 3; s++) {
        trn_status st = check_slot_size(v[s], scale_lower[s], err);
        if (st) return st;
        ss->w[s] = ss->h[s] = v[s];
    }
    return TRN_OK;
}

static trn_status write_flat(trn_write_set *ws, const char *dir, const char *file, uint32_t w,
                             uint32_t h, uint8_t channels, const uint8_t *value, bool srgb,
                             trn_error *err)
{
    char path[PATH_MAX];
    if (!trn_lvl_join(path, sizeof path, dir, file))
        return trn_error_set(err, TRN_ERR_LIMIT, dir, -1, "texture path too long");
    const char *target = NULL;
    trn_status st = trn_write_target(ws, path, &target, err);
    if (st) return st;
    trn_image img;
    st = trn_image_init(&img, w, h, channels, 8, err);
    if (st) return st;
    uint8_t *px = img.data;
    size_t n = (size_t)w * h;
    for (size_t i = 0; i < n; i++)
        memcpy(px + i * channels, value, channels);
    trn_png_options po;
    trn_png_options_default(&po);
    po.compression_level = 9; /* flat images: the best level costs nothing and keeps them tiny */
    po.srgb = srgb;
    st = trn_png_write(target, &img, &po, NULL, NULL, err);
    trn_image_dispose(&img);
    return st;
}

static trn_status textures_write_sized(trn_write_set *ws, const char *dir, const char *const *names,
                                       uint32_t count, const slot_sizes *ss, uint32_t *written,
                                       trn_error *err)
{
    uint32_t n = 0;
    trn_status st = trn_mkdir_p(dir, err);
    if (st) return st;
    static const uint8_t grey[1] = {128}, white[1] = {255}, flat_normal[3] = {128, 128, 255};
    char file[160];
    for (int s = 0; s < TRN_TEX_SCALE_COUNT && !st; s++) {
        trn_lvl_texture_file_name(NULL, TRN_TEX_ROUGHNESS, (trn_tex_scale)s, file, sizeof file);
        st = write_flat(ws, dir, file, ss->w[s], ss->h[s], 1, grey, false, err);
        n += !st;
        if (st) break;
        trn_lvl_texture_file_name(NULL, TRN_TEX_NORMAL, (trn_tex_scale)s, file, sizeof file);
        st = write_flat(ws, dir, file, ss->w[s], ss->h[s], 3, flat_normal, false, err);
        n += !st;
    }
    if (!st) {
        /* AO base is an absolute value: white is "no occlusion"; mid-grey would darken it. */
        trn_lvl_texture_file_name(NULL, TRN_TEX_AO, TRN_TEX_BASE, file, sizeof file);
        st = write_flat(ws, dir, file, ss->w[0], ss->h[0], 1, white, false, err);
        n += !st;
    }
    for (uint32_t i = 0; i < count && !st; i++) {
        uint8_t rgb[3];
        base_colour(names[i], rgb);
        trn_lvl_texture_file_name(names[i], TRN_TEX_BASE_COLOR, TRN_TEX_BASE, file, sizeof file);
        st = write_flat(ws, dir, file, ss->w[0], ss->h[0], 3, rgb, true, err);
        n += !st;
    }
    if (written) *written = n;
    return st;
}

trn_status trn_terrain_textures_write(const char *dir, const char *const *material_names,
                                      uint32_t material_count, const trn_texture_options *options,
                                      uint32_t *written, trn_error *err)
{
    if (written) *written = 0;
    slot_sizes ss;
    trn_status st = sizes_from_options(options, &ss, err);
    if (st) return st;
    trn_write_set *ws, *own;
    if ((st = trn_write_own_begin(NULL, &ws, &own, err))) return st;
    st = textures_write_sized(ws, dir, material_names, material_count, &ss, written, err);
    return trn_write_own_finish(own, st, err);
}

/* ------------------------------------------------------------------------------------------
 * v1 -> v1.5
 * ---------------------------------------------------------------------------------------- */

trn_status trn_terrain_material_upgrade(const trn_terrain_material *v1, trn_terrain_material *out,
                                        trn_error *err)
{
    memset(out, 0, sizeof *out);
    out->key = trn_lvl_strdup(v1->key ? v1->key : v1->internal_name);
    out->internal_name = trn_lvl_strdup(v1->internal_name);
    out->persistent_id = trn_lvl_strdup(v1->persistent_id);
    out->annotation = trn_lvl_strdup(v1->annotation);
    out->groundmodel_name = trn_lvl_strdup(v1->groundmodel_name);
    out->extra_json = trn_lvl_strdup(v1->extra_json);
    bool ok = (out->key || !v1->key) && (out->internal_name || !v1->internal_name) &&
              (out->persistent_id || !v1->persistent_id) && (out->annotation || !v1->annotation) &&
              (out->groundmodel_name || !v1->groundmodel_name) &&
              (out->extra_json || !v1->extra_json);
    /* Keep whatever v1.5 data the material already had. */
    for (int g = 0; ok && g < TRN_TEX_GROUP_COUNT; g++)
        for (int s = 0; ok && s < TRN_TEX_SCALE_COUNT; s++) {
            out->tex[g][s] = trn_lvl_strdup(v1->tex[g][s]);
            ok = out->tex[g][s] || !v1->tex[g][s];
            out->tex_size[g][s] = v1->tex_size[g][s];
        }
    memcpy(out->strength, v1->strength, sizeof out->strength);
    memcpy(out->has_strength, v1->has_strength, sizeof out->has_strength);
    default_distances(out);
    if (v1->has_macro_distances)
        memcpy(out->macro_distances, v1->macro_distances, sizeof out->macro_distances);
    if (v1->has_detail_distances)
        memcpy(out->detail_distances, v1->detail_distances, sizeof out->detail_distances);
    if (v1->has_macro_dist_atten)
        memcpy(out->macro_dist_atten, v1->macro_dist_atten, sizeof out->macro_dist_atten);
    if (v1->has_detail_dist_atten)
        memcpy(out->detail_dist_atten, v1->detail_dist_atten, sizeof out->detail_dist_atten);
    /* v1 diffuse is the colour over the whole terrain: the base colour base slot. */
    if (ok && v1->diffuse_map && !out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE]) {
        ok = (out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] = trn_lvl_strdup(v1->diffuse_map)) != NULL;
        if (v1->diffuse_size > 0)
            out->tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] = v1->diffuse_size;
    }
    /* v1 detail and macro maps modulate the colour: the base colour detail / macro slots. */
    if (ok && v1->detail_map && !out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL]) {
        ok =
            (out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL] = trn_lvl_strdup(v1->detail_map)) != NULL;
        if (v1->detail_size > 0)
            out->tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL] = v1->detail_size;
        if (v1->detail_strength > 0 && !out->has_strength[TRN_TEX_BASE_COLOR][1]) {
            out->strength[TRN_TEX_BASE_COLOR][1][0] = v1->detail_strength;
            out->strength[TRN_TEX_BASE_COLOR][1][1] = v1->detail_strength;
            out->has_strength[TRN_TEX_BASE_COLOR][1] = true;
        }
    }
    if (ok && v1->macro_map && !out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_MACRO]) {
        ok = (out->tex[TRN_TEX_BASE_COLOR][TRN_TEX_MACRO] = trn_lvl_strdup(v1->macro_map)) != NULL;
        if (v1->macro_size > 0) out->tex_size[TRN_TEX_BASE_COLOR][TRN_TEX_MACRO] = v1->macro_size;
        if (v1->macro_strength > 0 && !out->has_strength[TRN_TEX_BASE_COLOR][0]) {
            out->strength[TRN_TEX_BASE_COLOR][0][0] = v1->macro_strength;
            out->strength[TRN_TEX_BASE_COLOR][0][1] = v1->macro_strength;
            out->has_strength[TRN_TEX_BASE_COLOR][0] = true;
        }
    }
    /* The v1 normal map tiles with the detail texture (Torque's terrain shader uses the detail
     * coordinates for it): the normal detail slot. */
    if (ok && v1->normal_map && !out->tex[TRN_TEX_NORMAL][TRN_TEX_DETAIL]) {
        ok = (out->tex[TRN_TEX_NORMAL][TRN_TEX_DETAIL] = trn_lvl_strdup(v1->normal_map)) != NULL;
        if (v1->detail_size > 0) out->tex_size[TRN_TEX_NORMAL][TRN_TEX_DETAIL] = v1->detail_size;
    }
    /* v1 fades detail and macro out by one distance; v1.5 holds them fully up to half of it and
     * fades over the rest, which looks closest. */
    if (v1->detail_distance > 0 && !v1->has_detail_distances) {
        double d = v1->detail_distance;
        double dd[4] = {0, 0, d / 2, d};
        memcpy(out->detail_distances, dd, sizeof dd);
    }
    if (v1->macro_distance > 0 && !v1->has_macro_distances) {
        double d = v1->macro_distance;
        double md[4] = {0, 0, d / 2, d};
        memcpy(out->macro_distances, md, sizeof md);
    }
    if (!ok) {
        trn_terrain_material_dispose(out);
        return oom(err, NULL);
    }
    return TRN_OK;
}

/* ------------------------------------------------------------------------------------------
 * Level-wide material handling (shared by import/create and migrate).
 * ---------------------------------------------------------------------------------------- */

/* Everything the level defines: TerrainMaterials and texture sets of all its materials files. */
typedef struct level_materials {
    trn_material_file *files;
    char **paths;
    size_t count;
} level_materials;

static void level_materials_dispose(level_materials *lm)
{
    for (size_t i = 0; i < lm->count; i++)
        trn_material_file_dispose(&lm->files[i]);
    free(lm->files);
    trn_lvl_free_paths(lm->paths, lm->count);
    memset(lm, 0, sizeof *lm);
}

static trn_status level_materials_load(const char *level_dir, level_materials *lm, trn_error *err)
{
    memset(lm, 0, sizeof *lm);
    trn_status st = trn_lvl_material_files(level_dir, &lm->paths, &lm->count, err);
    if (st) return st;
    if (lm->count && !(lm->files = calloc(lm->count, sizeof *lm->files))) {
        level_materials_dispose(lm);
        return oom(err, level_dir);
    }
    for (size_t i = 0; i < lm->count; i++) {
        trn_error file_err;
        st = trn_material_file_read(lm->paths[i], &lm->files[i], &file_err);
        /* Another file that cannot be read only means its materials are unknown here (validate
         * reports it); the file we edit is read again, strictly, by its writer. Memory is not
         * something to skip over. */
        if (st == TRN_ERR_NO_MEMORY) {
            if (err) *err = file_err;
            level_materials_dispose(lm);
            return st;
        }
    }
    return TRN_OK;
}

static bool level_has_material(const level_materials *lm, const char *name)
{
    for (size_t f = 0; f < lm->count; f++)
        for (uint32_t i = 0; i < lm->files[f].material_count; i++) {
            const char *in = lm->files[f].materials[i].internal_name;
            if (in && trn_lvl_ieq(in, name)) return true;
        }
    return false;
}

static const trn_texture_set *level_texture_set(const level_materials *lm)
{
    for (size_t f = 0; f < lm->count; f++)
        if (lm->files[f].texture_set_count) return &lm->files[f].texture_sets[0];
    return NULL;
}

/* Load path as a JSON object (a new empty one when the file does not exist), as ws will leave
 * it (ws may be NULL). */
static trn_status load_root(const trn_write_set *ws, const char *path, json_t **root,
                            trn_error *err)
{
    *root = NULL;
    uint8_t *data;
    size_t n;
    trn_status st =
        trn_file_read_all(trn_write_set_current(ws, path), MATERIALS_MAX_BYTES, &data, &n, err);
    if (st == TRN_ERR_NOT_FOUND) {
        trn_error_clear(err);
        *root = json_object();
        return *root ? TRN_OK : oom(err, path);
    }
    if (st) return st;
    json_error_t je;
    size_t bom = trn_lvl_bom_length((const char *)data, n);
    *root = json_loadb((const char *)data + bom, n - bom, 0, &je);
    free(data);
    if (!*root) return trn_lvl_json_syntax_error(err, path, &je, 0, bom);
    if (!json_is_object(*root)) {
        json_decref(*root);
        *root = NULL;
        return trn_error_set(err, TRN_ERR_JSON, path, -1,
                             "$: expected an object of named materials");
    }
    return TRN_OK;
}

/* A key not yet used in root: base, base_1, base_2... */
static void unique_key(json_t *root, const char *base, char *out, size_t out_size)
{
    snprintf(out, out_size, "%s", base);
    for (unsigned i = 1; json_object_get(root, out) && i < 100000; i++)
        snprintf(out, out_size, "%s_%u", base, i);
}

static trn_status write_root(trn_write_set *ws, const char *path, json_t *root, trn_error *err)
{
    char *text = NULL;
    size_t n = 0;
    trn_status st = dump_root(root, &text, &n, err);
    if (st) return st;
    const char *target = NULL;
    if (!(st = trn_write_target(ws, path, &target, err)))
        st = trn_file_write_atomic(target, text, n, err);
    free(text);
    return st;
}

static trn_status add_texture_set(json_t *root, const char *level_name, const slot_sizes *ss,
                                  char *set_name, size_t set_name_size, trn_error *err)
{
    char name[300];
    snprintf(name, sizeof name, "%sTerrainMaterialTextureSet", level_name);
    char key[320];
    unique_key(root, name, key, sizeof key);
    char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE];
    trn_beamng_persistent_id(level_name, "TerrainMaterialTextureSet", key, pid);
    trn_texture_set ts = {0};
    ts.key = key;
    ts.name = key;
    ts.persistent_id = pid;
    for (int i = 0; i < 2; i++) {
        ts.base_tex_size[i] = i ? ss->h[0] : ss->w[0];
        ts.macro_tex_size[i] = i ? ss->h[1] : ss->w[1];
        ts.detail_tex_size[i] = i ? ss->h[2] : ss->w[2];
    }
    json_t *o = trn_lvl_texture_set_to_json(&ts);
    if (!o || json_object_set_new(root, key, o)) return oom(err, NULL);
    trn_lvl_copy(set_name, set_name_size, key);
    return TRN_OK;
}

static bool ts_sizes(const trn_texture_set *ts, slot_sizes *ss)
{
    const uint32_t *v[3] = {ts->base_tex_size, ts->macro_tex_size, ts->detail_tex_size};
    for (int s = 0; s < 3; s++) {
        if (!is_pow2(v[s][0]) || !is_pow2(v[s][1]) || v[s][0] > 8192 || v[s][1] > 8192)
            return false;
        ss->w[s] = v[s][0];
        ss->h[s] = v[s][1];
    }
    return true;
}

static bool game_dir_of(const char *level_name, char *out, size_t out_size)
{
    int n = snprintf(out, out_size, "/levels/%s/art/terrains", level_name);
    return n > 0 && (size_t)n < out_size;
}

/* The ground model a new material named name gets: the caller's choice, else the name table. */
static const char *surface_of(const char *name, const trn_beamng_surface *surfaces,
                              uint32_t surface_count)
{
    for (uint32_t i = 0; i < surface_count; i++)
        if (surfaces[i].material && strcmp(surfaces[i].material, name) == 0) {
            const char *known = trn_beamng_groundmodel_find(surfaces[i].groundmodel);
            if (known) return known;
        }
    return trn_beamng_groundmodel_for_name(name);
}

/* A v1 material (the deprecated fields a level without texture sets uses) whose maps are the
 * placeholders of its v1.5 default: diffuse = the base colour, detail and macro = the shared
 * grey maps, normal = the flat normal map. Sizes and fades are Torque's TerrainMaterial
 * defaults, but for diffuseSize, which spans the terrain as the v1.5 base slot does. */
static trn_status material_init_v1(trn_terrain_material *m, const char *name, const char *game_dir,
                                   double world_size, trn_error *err)
{
    trn_terrain_material full;
    trn_status st = trn_terrain_material_init_default(&full, name, game_dir, world_size, err);
    if (st) return st;
    memset(m, 0, sizeof *m);
    m->key = full.key;
    m->internal_name = full.internal_name;
    m->annotation = full.annotation;
    m->groundmodel_name = full.groundmodel_name;
    full.key = full.internal_name = full.annotation = full.groundmodel_name = NULL;
    m->diffuse_map = trn_lvl_strdup(full.tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE]);
    m->detail_map = trn_lvl_strdup(full.tex[TRN_TEX_BASE_COLOR][TRN_TEX_DETAIL]);
    m->macro_map = trn_lvl_strdup(full.tex[TRN_TEX_BASE_COLOR][TRN_TEX_MACRO]);
    m->normal_map = trn_lvl_strdup(full.tex[TRN_TEX_NORMAL][TRN_TEX_DETAIL]);
    trn_terrain_material_dispose(&full);
    m->diffuse_size = world_size > 0 ? world_size : 256.0;
    m->detail_size = 2.0;
    m->detail_strength = 1.0;
    m->detail_distance = 50.0;
    m->macro_size = 200.0;
    m->macro_strength = 0.7;
    m->macro_distance = 500.0;
    if (!m->diffuse_map || !m->detail_map || !m->macro_map || !m->normal_map) {
        trn_terrain_material_dispose(m);
        return oom(err, NULL);
    }
    return TRN_OK;
}

trn_status trn_lvl_merge_materials(trn_write_set *ws, const char *level_dir, const char *level_name,
                                   const char *const *names, uint32_t count, double world_size,
                                   const trn_texture_options *textures,
                                   const trn_beamng_surface *surfaces, uint32_t surface_count,
                                   bool v1, trn_lvl_merge_result *result, trn_error *err)
{
    trn_texture_set staged;
    bool has_staged = false;
    memset(result, 0, sizeof *result);
    char art[PATH_MAX], game_dir[1024];
    if (!trn_lvl_join(art, sizeof art, level_dir, "art/terrains") ||
        !trn_lvl_join(result->materials_path, sizeof result->materials_path, art,
                      "main.materials.json") ||
        !game_dir_of(level_name, game_dir, sizeof game_dir))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    slot_sizes ss;
    trn_status st = sizes_from_options(textures, &ss, err);
    if (st) return st;
    level_materials lm;
    if ((st = level_materials_load(level_dir, &lm, err))) return st;
    json_t *root = NULL;
    const char **added = count ? calloc(count, sizeof *added) : NULL;
    if (count && !added) {
        st = oom(err, level_dir);
        goto done;
    }
    if ((st = load_root(ws, result->materials_path, &root, err))) goto done;
    bool changed = false;
    const trn_texture_set *existing = level_texture_set(&lm);
    /* One staged in this write set (a migration just before) counts as the level's too. */
    if (!existing) {
        const char *k;
        json_t *v;
        json_object_foreach(root, k, v)
        {
            const json_t *cls = json_object_get(v, "class");
            if (!has_staged && json_is_string(cls) &&
                strcmp(json_string_value(cls), "TerrainMaterialTextureSet") == 0 &&
                trn_lvl_texture_set_from_json(k, v, result->materials_path, &staged, NULL) ==
                    TRN_OK)
                has_staged = true;
        }
        if (has_staged) existing = &staged;
    }
    if (v1) {
        /* A v1 terrain has no texture set, and adding one would switch it to v1.5. */
    } else if (existing) {
        trn_lvl_copy(result->texture_set, sizeof result->texture_set,
                     existing->name ? existing->name : existing->key);
        /* Placeholders must match the level's slot sizes to pack; odd sizes keep ours. */
        slot_sizes from_set;
        if (ts_sizes(existing, &from_set)) ss = from_set;
    } else {
        if ((st = add_texture_set(root, level_name, &ss, result->texture_set,
                                  sizeof result->texture_set, err)))
            goto done;
        changed = true;
    }
    uint32_t n_added = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (level_has_material(&lm, names[i])) continue;
        bool dup = false;
        for (uint32_t j = 0; j < n_added; j++)
            dup = dup || trn_lvl_ieq(added[j], names[i]);
        if (dup) continue;
        trn_terrain_material m;
        if ((st = v1 ? material_init_v1(&m, names[i], game_dir, world_size, err)
                     : trn_terrain_material_init_default(&m, names[i], game_dir, world_size, err)))
            goto done;
        /* The World Editor's form: keyed "NAME-<persistentId>", the id derived from the level
         * and the name so that runs agree byte for byte. */
        char pid[TRN_BEAMNG_PERSISTENT_ID_SIZE], base[300], key[320];
        trn_beamng_persistent_id(level_name, "TerrainMaterial", names[i], pid);
        snprintf(base, sizeof base, "%.250s-%s", names[i], pid);
        unique_key(root, base, key, sizeof key);
        const char *gm = surface_of(names[i], surfaces, surface_count);
        free(m.persistent_id);
        free(m.groundmodel_name);
        free(m.annotation);
        m.persistent_id = trn_lvl_strdup(pid);
        m.groundmodel_name = trn_lvl_strdup(gm);
        m.annotation = trn_lvl_strdup(annotation_for(gm));
        json_t *o = m.persistent_id && m.groundmodel_name && m.annotation
                        ? trn_lvl_material_to_json(&m)
                        : NULL;
        trn_terrain_material_dispose(&m);
        if (!o || json_object_set_new(root, key, o)) {
            st = oom(err, level_dir);
            goto done;
        }
        added[n_added++] = names[i];
        changed = true;
    }
    result->added = n_added;
    if (n_added &&
        (st = textures_write_sized(ws, art, added, n_added, &ss, &result->textures_written, err)))
        goto done;
    if (changed) {
        if ((st = trn_mkdir_p(art, err))) goto done;
        st = write_root(ws, result->materials_path, root, err);
    }
done:
    if (has_staged) texture_set_dispose(&staged);
    free(added);
    json_decref(root);
    level_materials_dispose(&lm);
    return st;
}

void trn_lvl_level_material_kinds(const char *level_dir, uint32_t *v1_count, uint32_t *v15_count,
                                  uint32_t *set_count)
{
    *v1_count = *v15_count = *set_count = 0;
    level_materials lm;
    if (level_materials_load(level_dir, &lm, NULL)) return;
    uint32_t v1 = 0, other = 0, sets = 0;
    for (size_t f = 0; f < lm.count; f++) {
        sets += lm.files[f].texture_set_count;
        for (uint32_t i = 0; i < lm.files[f].material_count; i++) {
            if (trn_terrain_material_is_v1(&lm.files[f].materials[i]))
                v1++;
            else
                other++;
        }
    }
    level_materials_dispose(&lm);
    *v1_count = v1;
    *v15_count = other;
    *set_count = sets;
}

/* ------------------------------------------------------------------------------------------
 * Migration of a deprecated art/terrains/materials.json.
 * ---------------------------------------------------------------------------------------- */

static trn_status assign_texture_set(trn_write_set *ws, const char *level_dir, const char *set_name,
                                     trn_error *err)
{
    trn_terrain_block *blocks;
    size_t n;
    /* Strict: a line it cannot read is reported rather than silently left without the set. */
    trn_status st = trn_level_find_terrain_blocks(level_dir, &blocks, &n, NULL, err);
    if (st) return st;
    for (size_t i = 0; i < n && !st; i++) {
        trn_terrain_block *tb = &blocks[i];
        if (tb->material_texture_set || !tb->name || !tb->name[0]) continue;
        tb->material_texture_set = trn_lvl_strdup(set_name);
        if (!tb->material_texture_set) st = oom(err, tb->source_file);
        if (!st) st = trn_lvl_items_put(ws, tb->source_file, tb, err);
    }
    trn_terrain_blocks_free(blocks, n);
    return st;
}

/* Upgrade the v1-only TerrainMaterials of root (the materials file at path) where they are:
 * each entry keeps its key, place, internalName, persistentId and unknown fields; its v1 maps
 * move to the v1.5 slots (trn_terrain_material_upgrade) and, with fill, the empty slots get
 * placeholders (written into art at the slot sizes ss). *upgraded counts them. This is the
 * editor-saved case: the World Editor keeps v1 materials in main.materials.json, not in a
 * deprecated materials.json. */
static trn_status upgrade_root(trn_write_set *ws, json_t *root, const char *path, const char *art,
                               const char *game_dir, bool fill, const slot_sizes *ss,
                               uint32_t *upgraded, trn_error *err)
{
    *upgraded = 0;
    size_t n = json_object_size(root), nk = 0, nb = 0;
    const char **keys = n ? calloc(n, sizeof *keys) : NULL;
    char **need_base = n ? calloc(n, sizeof *need_base) : NULL;
    if (n && (!keys || !need_base)) {
        free(keys);
        free(need_base);
        return oom(err, path);
    }
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        const json_t *cls = json_object_get(v, "class");
        if (json_is_string(cls) && strcmp(json_string_value(cls), "TerrainMaterial") == 0)
            keys[nk++] = k;
    }
    trn_status st = TRN_OK;
    for (size_t i = 0; i < nk && !st; i++) {
        trn_terrain_material m, up;
        if ((st = trn_lvl_material_from_json(keys[i], json_object_get(root, keys[i]), path, &m,
                                             err)))
            break;
        if (!trn_terrain_material_is_v1(&m)) {
            trn_terrain_material_dispose(&m);
            continue;
        }
        st = trn_terrain_material_upgrade(&m, &up, err);
        trn_terrain_material_dispose(&m);
        if (st) break;
        const char *in = up.internal_name ? up.internal_name : keys[i];
        bool ok = true;
        if (fill) {
            if (!up.tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE])
                ok = (need_base[nb++] = trn_lvl_strdup(in)) != NULL;
            for (int g = 0; ok && g < TRN_TEX_GROUP_COUNT; g++)
                for (int s = 0; ok && s < TRN_TEX_SCALE_COUNT; s++) {
                    ok = fill_slot(&up, in, game_dir, g, s);
                    if (up.tex_size[g][s] <= 0)
                        up.tex_size[g][s] = s == 0 ? 256.0 : s == 1 ? 60.0 : 2.0;
                }
        }
        json_t *jo = ok ? trn_lvl_material_to_json(&up) : NULL;
        trn_terrain_material_dispose(&up);
        /* Setting an existing key replaces its value where it is: the file keeps its order. */
        if (!jo || json_object_set_new(root, keys[i], jo)) {
            st = oom(err, path);
            break;
        }
        (*upgraded)++;
    }
    if (!st && fill && *upgraded)
        st = textures_write_sized(ws, art, (const char *const *)need_base, (uint32_t)nb, ss, NULL,
                                  err);
    for (size_t i = 0; i < nb; i++)
        free(need_base[i]);
    free(need_base);
    free(keys);
    return st;
}

/* Whether a and b name the same existing file (spellings of a level folder differ). */
static bool same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0) return true;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Whether a TerrainBlock of the level has no materialTextureSet (migrate would assign one). */
static bool blocks_without_set(const char *level_dir)
{
    trn_terrain_block *blocks;
    size_t n;
    bool any = false;
    if (trn_level_find_terrain_blocks(level_dir, &blocks, &n, NULL, NULL)) return false;
    for (size_t i = 0; i < n; i++)
        any = any || (!blocks[i].material_texture_set && blocks[i].name && blocks[i].name[0]);
    trn_terrain_blocks_free(blocks, n);
    return any;
}

trn_status trn_beamng_migrate_materials(const char *level_dir, const trn_migrate_options *options,
                                        uint32_t *migrated, trn_error *err)
{
    trn_migrate_options defaults = {0};
    const trn_migrate_options *o = options ? options : &defaults;
    if (migrated) *migrated = 0;
    char art[PATH_MAX], old_path[PATH_MAX], main_path[PATH_MAX], level_name[256], game_dir[1024];
    if (!trn_lvl_join(art, sizeof art, level_dir, "art/terrains") ||
        !trn_lvl_join(old_path, sizeof old_path, art, "materials.json") ||
        !trn_lvl_join(main_path, sizeof main_path, art, "main.materials.json"))
        return trn_error_set(err, TRN_ERR_LIMIT, level_dir, -1, "path too long");
    if (!trn_lvl_level_name(level_dir, level_name, sizeof level_name) ||
        !game_dir_of(level_name, game_dir, sizeof game_dir))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, level_dir, -1,
                             "cannot tell the level's name from its folder");
    slot_sizes ss;
    trn_status st = sizes_from_options(&o->textures, &ss, err);
    if (st) return st;
    trn_material_file old;
    st = trn_material_file_read(old_path, &old, err);
    bool has_old = st != TRN_ERR_NOT_FOUND;
    if (!has_old) {
        /* No deprecated file: an editor-saved v1 level keeps its v1 materials in
         * main.materials.json (or another materials file), and that is migrated where it is. */
        trn_error_clear(err);
        memset(&old, 0, sizeof old);
        st = TRN_OK;
    }
    if (st) return st;
    char **files = NULL;
    size_t file_count = 0;
    bool v1_left = false;
    if ((st = trn_lvl_material_files(level_dir, &files, &file_count, err))) {
        trn_material_file_dispose(&old);
        return st;
    }
    for (size_t f = 0; f < file_count && !v1_left; f++) {
        if (same_file(files[f], old_path)) continue;
        trn_material_file mf;
        if (trn_material_file_read(files[f], &mf, NULL)) continue;
        for (uint32_t i = 0; i < mf.material_count; i++)
            v1_left = v1_left || trn_terrain_material_is_v1(&mf.materials[i]);
        trn_material_file_dispose(&mf);
    }
    if (!has_old && !v1_left && !(o->assign_texture_set && blocks_without_set(level_dir))) {
        trn_lvl_free_paths(files, file_count);
        return trn_error_set(err, TRN_ERR_NOT_FOUND, level_dir, -1,
                             "nothing to migrate: no art/terrains/materials.json, no "
                             "TerrainMaterial with only v1 fields, and every TerrainBlock has a "
                             "materialTextureSet (the level already uses v1.5 materials)");
    }
    trn_write_set *ws = NULL, *own = NULL;
    json_t *root = NULL, *old_root = NULL;
    const char **need_base = old.material_count ? calloc(old.material_count, sizeof(char *)) : NULL;
    uint32_t n_need = 0, moved = 0;
    bool *was_moved = old.material_count ? calloc(old.material_count, sizeof(bool)) : NULL;
    if (old.material_count && (!need_base || !was_moved)) {
        st = oom(err, old_path);
        goto done;
    }
    if ((st = trn_write_own_begin(o->writes, &ws, &own, err))) goto done;
    if ((st = load_root(ws, main_path, &root, err))) goto done;
    /* A texture set already in main.materials.json decides the placeholder sizes. */
    char set_name[300] = "";
    const char *k;
    json_t *v;
    json_object_foreach(root, k, v)
    {
        const json_t *cls = json_object_get(v, "class");
        if (!set_name[0] && json_is_string(cls) &&
            strcmp(json_string_value(cls), "TerrainMaterialTextureSet") == 0) {
            trn_texture_set ts;
            if ((st = trn_lvl_texture_set_from_json(k, v, main_path, &ts, err))) goto done;
            trn_lvl_copy(set_name, sizeof set_name, ts.name);
            slot_sizes from_set;
            if (ts_sizes(&ts, &from_set)) ss = from_set;
            texture_set_dispose(&ts);
        }
    }
    bool changed = false;
    if (!set_name[0]) {
        if ((st = add_texture_set(root, level_name, &ss, set_name, sizeof set_name, err)))
            goto done;
        changed = true;
    }
    for (uint32_t i = 0; i < old.material_count; i++) {
        const trn_terrain_material *m = &old.materials[i];
        const char *in = m->internal_name ? m->internal_name : m->key;
        bool exists = false;
        json_object_foreach(root, k, v)
        {
            const json_t *iname = json_object_get(v, "internalName");
            if (json_is_string(iname) && trn_lvl_ieq(json_string_value(iname), in)) exists = true;
        }
        /* Never overwrite what main.materials.json already defines; the old entry is then
         * redundant and may go with delete_old. */
        if (exists) {
            was_moved[i] = true;
            continue;
        }
        trn_terrain_material up;
        if ((st = trn_terrain_material_upgrade(m, &up, err))) goto done;
        if (!up.internal_name && !(up.internal_name = trn_lvl_strdup(in))) {
            trn_terrain_material_dispose(&up);
            st = oom(err, old_path);
            goto done;
        }
        bool ok = true;
        if (o->fill_textures) {
            if (!up.tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE]) need_base[n_need++] = in;
            for (int g = 0; ok && g < TRN_TEX_GROUP_COUNT; g++)
                for (int s = 0; ok && s < TRN_TEX_SCALE_COUNT; s++) {
                    ok = fill_slot(&up, in, game_dir, g, s);
                    if (up.tex_size[g][s] <= 0)
                        up.tex_size[g][s] = s == 0 ? 256.0 : s == 1 ? 60.0 : 2.0;
                }
        }
        char key[300];
        unique_key(root, up.key ? up.key : in, key, sizeof key);
        json_t *jo = ok ? trn_lvl_material_to_json(&up) : NULL;
        trn_terrain_material_dispose(&up);
        if (!jo || json_object_set_new(root, key, jo)) {
            st = oom(err, main_path);
            goto done;
        }
        was_moved[i] = true;
        moved++;
        changed = true;
    }
    if (o->fill_textures && moved &&
        (st = textures_write_sized(ws, art, need_base, n_need, &ss, NULL, err)))
        goto done;
    /* v1-only materials already in the level's own files are upgraded where they are. */
    uint32_t upgraded = 0;
    if ((st = upgrade_root(ws, root, main_path, art, game_dir, o->fill_textures, &ss, &upgraded,
                           err)))
        goto done;
    moved += upgraded;
    changed = changed || upgraded;
    for (size_t f = 0; f < file_count; f++) {
        if (same_file(files[f], old_path) || same_file(files[f], main_path)) continue;
        json_t *other = NULL;
        uint32_t up_other = 0;
        if (load_root(ws, files[f], &other, NULL)) continue; /* validate reports it */
        st =
            upgrade_root(ws, other, files[f], art, game_dir, o->fill_textures, &ss, &up_other, err);
        if (!st && up_other) st = write_root(ws, files[f], other, err);
        json_decref(other);
        if (st) goto done;
        moved += up_other;
    }
    if (changed && (st = write_root(ws, main_path, root, err))) goto done;
    if (o->assign_texture_set && (st = assign_texture_set(ws, level_dir, set_name, err))) goto done;
    if (o->delete_old && has_old) {
        if ((st = load_root(ws, old_path, &old_root, err))) goto done;
        for (uint32_t i = 0; i < old.material_count; i++)
            if (was_moved[i]) json_object_del(old_root, old.materials[i].key);
        if (json_object_size(old_root) == 0)
            st = trn_write_set_remove(ws, old_path, err);
        else
            st = write_root(ws, old_path, old_root, err);
    }
    if (migrated) *migrated = moved;
done:
    st = trn_write_own_finish(own, st, err);
    if (st && migrated) *migrated = 0;
    trn_lvl_free_paths(files, file_count);
    free(need_base);
    free(was_moved);
    json_decref(root);
    json_decref(old_root);
    trn_material_file_dispose(&old);
    return st;
}
