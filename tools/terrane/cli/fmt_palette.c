/* Describing terrain_palette, terrain_material_set and Material documents for inspect and
 * info. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/paths.h"
#include "detect.h"
#include "fmt_palette.h"
#include "recipe/recipe_internal.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"

static const char *category_name(trn_scatter_category c)
{
    switch (c) {
    case TRN_CATEGORY_GRASS:
        return "grass";
    case TRN_CATEGORY_TREE:
        return "tree";
    case TRN_CATEGORY_ROCK:
        return "rock";
    case TRN_CATEGORY_PROP:
        break;
    }
    return "prop";
}

static const char *collision_name(trn_scatter_collision c)
{
    switch (c) {
    case TRN_COLLISION_NONE:
        return "none";
    case TRN_COLLISION_TRIGGER:
        return "trigger";
    case TRN_COLLISION_STATIC:
        break;
    }
    return "static";
}

static json_t *pair(double lo, double hi)
{
    json_t *a = json_array();
    json_array_append_new(a, json_real(lo));
    json_array_append_new(a, json_real(hi));
    return a;
}

static json_t *band(const trn_scatter_band *b)
{
    return b->has ? pair(b->lo, b->hi) : json_null();
}

static json_t *palette_json(const char *path, const trn_palette *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(o, "input_format", json_string("terrain_palette"));
    json_object_set_new(o, "format_version", json_integer(TRN_PALETTE_FORMAT_VERSION));
    json_object_set_new(o, "name", cli_json_string(p->name));
    json_object_set_new(o, "material_set",
                        p->material_set ? cli_json_string(p->material_set) : json_null());
    json_object_set_new(o, "art_density", json_real(p->art_density));
    json_object_set_new(o, "grass_density", json_real(p->grass_density));
    json_object_set_new(o, "tree_density", json_real(p->tree_density));
    json_object_set_new(o, "rock_density", json_real(p->rock_density));
    json_t *rules = json_array();
    for (uint32_t i = 0; i < p->rule_count; i++) {
        const trn_scatter_rule *r = &p->rules[i];
        json_t *j = json_object();
        json_object_set_new(j, "id", cli_json_string(r->id));
        json_object_set_new(j, "geometry", json_string(r->model ? "model" : "prefab"));
        json_object_set_new(j, r->model ? "model" : "prefab",
                            cli_json_string(r->model ? r->model : r->prefab));
        json_object_set_new(j, "category", json_string(category_name(r->category)));
        json_object_set_new(j, "density", json_real(r->density));
        json_object_set_new(j, "scattered_density", json_real(trn_palette_rule_density(p, r)));
        json_object_set_new(j, "candidate_spacing", json_real(r->candidate_spacing));
        json_object_set_new(j, "spacing", json_real(r->spacing));
        json_object_set_new(j, "scale", pair(r->scale[0], r->scale[1]));
        json_object_set_new(j, "yaw", pair(r->yaw[0], r->yaw[1]));
        json_t *biomes = json_array();
        for (uint32_t b = 0; b < r->biome_count; b++)
            json_array_append_new(biomes, cli_json_string(r->biomes[b]));
        json_object_set_new(j, "biomes", biomes);
        json_object_set_new(j, "slope", band(&r->slope));
        json_object_set_new(j, "moisture", band(&r->moisture));
        json_object_set_new(j, "water_distance", band(&r->water_distance));
        json_t *cluster = json_object();
        json_object_set_new(cluster, "size", json_real(r->cluster_size));
        json_object_set_new(cluster, "strength", json_real(r->cluster_strength));
        json_object_set_new(j, "cluster", cluster);
        json_object_set_new(j, "collision", json_string(collision_name(r->collision)));
        json_array_append_new(rules, j);
    }
    json_object_set_new(o, "placements", rules);
    return o;
}

static json_t *set_json(const char *path, const trn_material_set *s)
{
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(o, "input_format", json_string("terrain_material_set"));
    json_object_set_new(o, "format_version", json_integer(TRN_MATERIAL_SET_FORMAT_VERSION));
    json_object_set_new(o, "name", cli_json_string(s->name));
    json_t *roles = json_object();
    int bound = 0;
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++) {
        json_object_set_new(roles, trn_surface_role_name((trn_surface_role)i),
                            s->roles[i] ? cli_json_string(s->roles[i]) : json_null());
        bound += s->roles[i] != NULL;
    }
    json_object_set_new(o, "roles", roles);
    json_object_set_new(o, "bound", json_integer(bound));
    const trn_material_mapping *m = &s->mapping;
    if (m->present)
        json_object_set_new(
            o, "mapping",
            json_pack("{s:b, s:b, s:f, s:f, s:b, s:f, s:f, s:f}", "texture_arrays",
                      m->texture_arrays, "triplanar", m->triplanar, "triplanar_slope",
                      m->triplanar_slope, "triplanar_sharpness", m->triplanar_sharpness,
                      "height_blend", m->height_blend, "height_blend_contrast",
                      m->height_blend_contrast, "macro_variation", m->macro_variation,
                      "macro_scale", m->macro_scale));
    else
        json_object_set_new(o, "mapping", json_null());
    return o;
}

static void num(double v, char out[40])
{
    trn_rcp_format_double(v, out);
}

static void print_palette(const char *path, const trn_palette *p)
{
    char a[40], g[40], t[40], r4[40];
    cli_printf("%s: terrain_palette '%s' (format_version %u)\n", path, p->name,
               TRN_PALETTE_FORMAT_VERSION);
    cli_printf("  material set: %s\n", p->material_set ? p->material_set : "none");
    num(p->art_density, a);
    num(p->grass_density, g);
    num(p->tree_density, t);
    num(p->rock_density, r4);
    cli_printf("  density multipliers: art %s, grass %s, tree %s, rock %s\n", a, g, t, r4);
    cli_printf("  placements (%u)%s\n", p->rule_count, p->rule_count ? ":" : "");
    for (uint32_t i = 0; i < p->rule_count; i++) {
        const trn_scatter_rule *r = &p->rules[i];
        char d[40], e[40], cs[40], sp[40];
        num(r->density, d);
        num(trn_palette_rule_density(p, r), e);
        num(r->candidate_spacing, cs);
        num(r->spacing, sp);
        cli_printf("    %s: %s %s, %s, density %s (scattered %s), candidate_spacing %s, "
                   "spacing %s, collision %s\n",
                   r->id, r->model ? "model" : "prefab", r->model ? r->model : r->prefab,
                   category_name(r->category), d, e, cs, sp, collision_name(r->collision));
    }
}

static void print_set(const char *path, const trn_material_set *s)
{
    int bound = 0;
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++)
        bound += s->roles[i] != NULL;
    cli_printf("%s: terrain_material_set '%s' (format_version %u)\n", path, s->name,
               TRN_MATERIAL_SET_FORMAT_VERSION);
    cli_printf("  roles (%d of %d bound):\n", bound, (int)TRN_ROLE_COUNT);
    for (unsigned i = 0; i < TRN_ROLE_COUNT; i++)
        cli_printf("    %-11s %s\n", trn_surface_role_name((trn_surface_role)i),
                   s->roles[i] ? s->roles[i] : "unbound (the biome tint)");
    const trn_material_mapping *m = &s->mapping;
    if (!m->present) {
        cli_printf("  mapping: none (each engine draws the materials its own way)\n");
        return;
    }
    char a[40], b[40], c[40], d[40], e[40];
    num(m->triplanar_slope, a);
    num(m->triplanar_sharpness, b);
    num(m->height_blend_contrast, c);
    num(m->macro_variation, d);
    num(m->macro_scale, e);
    cli_printf("  mapping: texture arrays %s; triplanar %s (from %s degrees, sharpness %s); "
               "height blend %s (contrast %s); macro variation %s at %s per unit\n",
               m->texture_arrays ? "on" : "off", m->triplanar ? "on" : "off", a, b,
               m->height_blend ? "on" : "off", c, d, e);
}

/* A Material's map file, relative to its document's folder: whether it is there. */
static bool map_exists(const char *doc, const char *map)
{
    const char *slash = strrchr(doc, '/');
    char file[4096];
    const int n = snprintf(file, sizeof file, "%.*s%s", slash ? (int)(slash - doc + 1) : 0, doc,
                           map);
    return n > 0 && (size_t)n < sizeof file && trn_file_exists(file);
}

static json_t *material_json(const char *path, const trn_material *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(o, "input_format", json_string("material"));
    json_object_set_new(o, "format_version", json_integer(TRN_MATERIAL_FORMAT_VERSION));
    json_object_set_new(o, "name", cli_json_string(m->name));
    json_object_set_new(o, "texture_scale", json_real(m->texture_scale));
    json_t *maps = json_object();
    for (int k = 0; k < TRN_MAP_COUNT; k++)
        json_object_set_new(maps, trn_material_map_name(k),
                            m->maps[k] ? json_pack("{s:o, s:b}", "path",
                                                   cli_json_string(m->maps[k]), "exists",
                                                   map_exists(path, m->maps[k]))
                                       : json_null());
    json_object_set_new(o, "maps", maps);
    return o;
}

static void print_material(const char *path, const trn_material *m)
{
    char scale[40];
    num(m->texture_scale, scale);
    cli_printf("%s: Material '%s' (format_version %u)\n", path, m->name,
               TRN_MATERIAL_FORMAT_VERSION);
    cli_printf("  texture scale: %s\n", scale);
    for (int k = 0; k < TRN_MAP_COUNT; k++)
        cli_printf("  %-10s %s%s\n", trn_material_map_name(k), m->maps[k] ? m->maps[k] : "none",
                   m->maps[k] && !map_exists(path, m->maps[k]) ? " (missing: no such file beside "
                                                                 "the document)"
                                                               : "");
}

static int emit(cli_ctx *ctx, json_t *o)
{
    trn_rcp_buf b = {NULL, 0, 0, false, NULL};
    trn_rcp_emit_json_in_order(&b, o, 2, 0);
    json_decref(o);
    if (b.failed) {
        trn_rcp_buf_free(&b);
        return cli_failf(ctx, "out of memory");
    }
    fwrite(b.data, 1, b.len, stdout);
    fputc('\n', stdout);
    trn_rcp_buf_free(&b);
    return CLI_EXIT_OK;
}

bool cli_palette_describe(cli_ctx *ctx, const char *path, int *rc)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_file_read_all(cli_input_path(path), TRN_RCP_MAX_FILE_SIZE, &data, &size, NULL))
        return false;
    trn_document_kind kind = trn_document_classify((const char *)data, size);
    if (kind != TRN_DOCUMENT_TERRAIN_PALETTE && kind != TRN_DOCUMENT_MATERIAL_SET &&
        kind != TRN_DOCUMENT_MATERIAL) {
        free(data);
        return false;
    }
    trn_error e;
    if (kind == TRN_DOCUMENT_MATERIAL) {
        trn_material m;
        if (trn_material_parse((const char *)data, size, path, &m, &e)) {
            *rc = cli_fail(ctx, &e);
        } else {
            if (ctx->json)
                *rc = emit(ctx, material_json(path, &m));
            else {
                print_material(path, &m);
                *rc = CLI_EXIT_OK;
            }
            trn_material_dispose(&m);
        }
    } else if (kind == TRN_DOCUMENT_TERRAIN_PALETTE) {
        trn_palette p;
        if (trn_palette_parse((const char *)data, size, path, &p, &e)) {
            *rc = cli_fail(ctx, &e);
        } else {
            if (ctx->json)
                *rc = emit(ctx, palette_json(path, &p));
            else {
                print_palette(path, &p);
                *rc = CLI_EXIT_OK;
            }
            trn_palette_dispose(&p);
        }
    } else {
        trn_material_set s;
        if (trn_material_set_parse((const char *)data, size, path, &s, &e)) {
            *rc = cli_fail(ctx, &e);
        } else {
            if (ctx->json)
                *rc = emit(ctx, set_json(path, &s));
            else {
                print_set(path, &s);
                *rc = CLI_EXIT_OK;
            }
            trn_material_set_dispose(&s);
        }
    }
    free(data);
    return true;
}
