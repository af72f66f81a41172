/* terrane generate's outputs: heightfields, biome/role/exclusion maps, previews, masks, .ter. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "generate_internal.h"

static uint8_t unit_byte(double v)
{
    if (!(v > 0.0)) return 0;
    if (v >= 1.0) return 255;
    return (uint8_t)lround(v * 255.0);
}

json_t *gen_mapping_json(const height_mapping *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "base", json_real(m->base));
    json_object_set_new(o, "quantum", json_real(m->quantum));
    if (m->max_height > 0) json_object_set_new(o, "max_height", json_real(m->max_height));
    json_object_set_new(o, "clamped_samples", json_integer((json_int_t)m->clamped));
    if (m->rule) json_object_set_new(o, "rule", cli_json_string(m->rule));
    if (m->levels) json_object_set_new(o, "levels", json_integer(m->levels));
    return o;
}

void gen_add_file(json_t *files, const char *path, const char *what)
{
    json_t *f = json_object();
    json_object_set_new(f, "path", cli_json_string(path));
    json_object_set_new(f, "what", cli_json_string(what));
    json_array_append_new(files, f);
}

/* ---- heightfield images ---- */

/* The one 16-bit rule convert uses (--scale, --height-range, --max-height, else the lowest height
 * at 0 and the highest at 65535); clamped samples and few levels are warned about. */
int gen_choose_mapping(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
                          const char *out, height_mapping *m)
{
    memset(m, 0, sizeof *m);
    trn_height_scale scale;
    trn_height_levels levels;
    int rc = cli_scale_choose(ctx, &a->scale, a->has_max_height ? a->max_height : 0.0, &gen->field,
                              &scale, &m->rule);
    if (!rc) rc = cli_scale_report(ctx, out, &gen->field, &scale, &levels);
    if (rc) return rc;
    m->base = scale.base;
    m->quantum = scale.quantum;
    m->max_height = 65536.0 * scale.quantum;
    m->clamped = levels.below + levels.above;
    m->levels = levels.levels;
    return CLI_EXIT_OK;
}

int gen_write_height_image(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
                              height_mapping *m)
{
    trn_error e;
    trn_status st;
    trn_image img;
    memset(&img, 0, sizeof img);
    if (a->format == FMT_R32) {
        /* Float metres, rows north first like every other output. */
        const uint32_t w = gen->field.cells_x + 1u, h = gen->field.cells_z + 1u;
        if ((st = trn_image_init(&img, w, h, 1, 32, &e))) return cli_fail(ctx, &e);
        float *px = img.data;
        for (uint32_t r = 0; r < h; r++)
            memcpy(px + (size_t)r * w, gen->field.heights + (size_t)(h - 1u - r) * w,
                   w * sizeof(float));
        m->base = 0;
        m->quantum = 0;
        st = trn_raw_write(a->out_file, &img, TRN_RAW_F32_LE, &e);
    } else {
        int rc = gen_choose_mapping(ctx, a, gen, a->out, m);
        if (rc) return rc;
        if ((st = trn_image_from_field(&gen->field, m->quantum, m->base, &img, &e)))
            return cli_fail(ctx, &e);
        if (a->format == FMT_PNG) {
            trn_png_options po;
            trn_png_options_default(&po);
            st = trn_png_write(a->out_file, &img, &po, cli_progress, ctx, &e);
        } else {
            st = trn_raw_write(a->out_file, &img, TRN_RAW_U16_LE, &e);
        }
    }
    trn_image_dispose(&img);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    if (a->format == FMT_R32)
        cli_note(ctx, "wrote %s (float metres, %u x %u)", a->out, gen->field.cells_x + 1u,
                 gen->field.cells_z + 1u);
    else
        cli_note(ctx,
                 "wrote %s (16-bit, %s: metres = %.6g + value * %.9g; %u levels; BeamNG import: "
                 "--max-height %.9g, TerrainBlock position z %.6g)",
                 a->out, m->rule, m->base, m->quantum, m->levels, m->max_height, m->base);
    return CLI_EXIT_OK;
}

/* ---- biome map and preview ---- */

int gen_write_biomes(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                        const trn_generated *gen)
{
    const uint32_t w = gen->field.cells_x + 1u, h = gen->field.cells_z + 1u;
    const uint8_t channels = a->biome_index ? 1 : 4;
    trn_image img;
    trn_error e;
    trn_status st = trn_image_init(&img, w, h, channels, 8, &e);
    if (st) return cli_fail(ctx, &e);
    uint8_t palette[256][4];
    memset(palette, 0, sizeof palette);
    for (uint32_t b = 0; b < recipe->biome_count && b < 256; b++)
        for (int c = 0; c < 4; c++)
            palette[b][c] = unit_byte(recipe->biomes[b].color[c]);
    uint8_t *px = img.data;
    for (uint32_t r = 0; r < h; r++) {
        const uint8_t *labels = gen->biomes.values + (size_t)(h - 1u - r) * w;
        uint8_t *out = px + (size_t)r * w * channels;
        for (uint32_t i = 0; i < w; i++) {
            if (a->biome_index)
                out[i] = labels[i];
            else
                memcpy(out + (size_t)i * 4u, palette[labels[i]], 4);
        }
    }
    /* Colours show the published water over the biomes; indices stay numbers. */
    if (!a->biome_index && gen->has_water) {
        trn_raster8 view = {w, h, 4, px};
        if ((st = trn_render_water_overlay(&view, &gen->field, &gen->water, &e))) {
            trn_image_dispose(&img);
            return cli_fail(ctx, &e);
        }
    }
    trn_png_options po;
    trn_png_options_default(&po);
    po.srgb = !a->biome_index; /* colours are sRGB; indices are numbers */
    st = trn_png_write(a->biomes_file, &img, &po, cli_progress, ctx, &e);
    trn_image_dispose(&img);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s (%s, %u x %u)", a->biomes,
             a->biome_index   ? "biome indices in recipe order"
             : gen->has_water ? "biome colours under the published water"
                              : "biome colours",
             w, h);
    return CLI_EXIT_OK;
}

int gen_write_preview(cli_ctx *ctx, const gen_args *a, const trn_generated *gen)
{
    trn_render_options ro;
    trn_render_options_default(&ro);
    ro.multidirectional = true;
    trn_raster8 pic = {0, 0, 0, NULL};
    trn_error e;
    trn_status st = trn_render_hillshade(&gen->field, &ro, &pic, cli_progress, ctx, &e);
    if (!st && gen->has_water) st = trn_render_water_overlay(&pic, &gen->field, &gen->water, &e);
    if (st) {
        trn_raster8_dispose(&pic);
        return cli_fail(ctx, &e);
    }
    trn_image img;
    memset(&img, 0, sizeof img);
    img.width = pic.width;
    img.height = pic.height;
    img.channels = pic.channels;
    img.bit_depth = 8;
    img.data = pic.pixels;
    trn_png_options po;
    trn_png_options_default(&po);
    st = trn_png_write(a->preview_file, &img, &po, cli_progress, ctx, &e);
    const bool with_water = pic.channels == 3; /* the water turned the grey shading RGB */
    trn_raster8_dispose(&pic);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s (multidirectional hillshade%s)", a->preview,
             with_water ? " with the published water" : "");
    return CLI_EXIT_OK;
}

/* The surface roles of the final surface: slope, flow on it (a drainage of the surface),
 * moisture, the water (connected or the inferred sea) and each biome's allow_snow. */
int gen_write_roles(cli_ctx *ctx, const gen_args *a, const trn_generated *gen, json_t **legend)
{
    trn_error e;
    trn_roles_map map;
    memset(&map, 0, sizeof map);
    int rc = CLI_EXIT_OK;
    if (trn_roles_map_render(gen->field.cells_x, gen->field.cells_z, gen->roles, &map, &e)) {
        rc = cli_fail(ctx, &e);
    } else {
        trn_image img = {map.picture.width,    map.picture.height,
                         map.picture.channels, 8,
                         map.picture.pixels,   false};
        trn_png_options po;
        trn_png_options_default(&po);
        if (trn_png_write(a->roles_file, &img, &po, NULL, NULL, &e)) rc = cli_fail(ctx, &e);
        json_error_t je;
        *legend = json_loads(map.legend_json, 0, &je);
        cli_note(ctx, "wrote %s (surface roles, %u x %u)", a->roles, map.picture.width,
                 map.picture.height);
    }
    trn_roles_map_dispose(&map);
    return rc;
}

/* The exclusion mask as 8-bit grey, north up (all 0 when the recipe paints none). */
int gen_write_exclusion(cli_ctx *ctx, const gen_args *a, const trn_generated *gen)
{
    const uint32_t w = gen->field.cells_x + 1u, h = gen->field.cells_z + 1u;
    trn_image img;
    trn_error e;
    trn_status st = trn_image_init(&img, w, h, 1, 8, &e);
    if (st) return cli_fail(ctx, &e);
    uint8_t *px = img.data;
    for (uint32_t r = 0; r < h; r++) {
        uint8_t *row = px + (size_t)r * w;
        if (gen->exclusion)
            memcpy(row, gen->exclusion + (size_t)(h - 1u - r) * w, w);
        else
            memset(row, 0, w);
    }
    trn_png_options po;
    trn_png_options_default(&po);
    st = trn_png_write(a->exclusion_file, &img, &po, cli_progress, ctx, &e);
    trn_image_dispose(&img);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s (exclusion mask, 0..255 = 0..1%s)", a->exclusion,
             gen->exclusion ? "" : "; the recipe paints no exclusions, so it is all 0");
    return CLI_EXIT_OK;
}

/* A water pin drawn as a 16-bit mask, north up: its coverage (wet 1 as 65535, else 0) or, with
 * depth, surface - ground on wet samples (0 dry) with the deepest as 65535. The ground is the
 * node's own field output, which the water was resolved on (its ground hash must match).
 * *quantum receives metres per step (0 when nothing is wet), *deepest the deepest depth. */
static trn_status water_mask(const trn_graph_run *run, const char *node, const trn_water *w,
                             bool depth, trn_image *img, double *quantum, double *deepest,
                             trn_error *e)
{
    const uint32_t cols = w->cells_x + 1u, rows = w->cells_z + 1u;
    const size_t n = (size_t)cols * rows;
    trn_field ground;
    memset(&ground, 0, sizeof ground);
    *quantum = *deepest = 0.0;
    if (depth) {
        trn_graph_value g;
        if (trn_graph_run_output(run, node, "field", &g, e) || g.kind != TRN_PIN_HEIGHTFIELD ||
            g.cells_x != w->cells_x || g.cells_z != w->cells_z)
            return trn_error_set(e, TRN_ERR_NOT_FOUND, NULL, -1,
                                 "node '%s' has no field output on the water's grid to measure "
                                 "depth from",
                                 node);
        ground.cells_x = g.cells_x;
        ground.cells_z = g.cells_z;
        ground.size_x = g.size_x;
        ground.size_z = g.size_z;
        ground.heights = (float *)(uintptr_t)g.values; /* only read */
        if (w->body_count && trn_water_ground_hash(&ground) != w->ground_hash)
            return trn_error_set(e, TRN_ERR_MISMATCH, NULL, -1,
                                 "node '%s': its water was not resolved on its field output, so "
                                 "the depth is unknown",
                                 node);
        for (size_t k = 0; w->wet && k < n; k++)
            if (w->wet[k]) {
                const double d = (double)w->surface[k] - (double)ground.heights[k];
                if (d > *deepest) *deepest = d;
            }
        if (*deepest > 0.0) *quantum = *deepest / 65535.0;
    }
    trn_status st = trn_image_init(img, cols, rows, 1, 16, e);
    if (st) return st;
    uint16_t *px = img->data;
    for (uint32_t r = 0; r < rows; r++)
        for (uint32_t c = 0; c < cols; c++) {
            const size_t k = (size_t)(rows - 1u - r) * cols + c;
            uint16_t v = 0;
            if (w->wet && w->wet[k]) {
                if (!depth) {
                    v = 65535;
                } else if (*quantum > 0.0) {
                    const double d = ((double)w->surface[k] - (double)ground.heights[k]) / *quantum;
                    v = !(d > 0.0) ? 0 : d >= 65535.0 ? 65535 : (uint16_t)lround(d);
                }
            }
            px[(size_t)r * cols + c] = v;
        }
    return TRN_OK;
}

/* --mask NODE[.PIN][:depth]=FILE.png: evaluate the graph again on the cache generation just
 * filled (every node is reused, nothing is recomputed) and write each mask, north up, 0..1 as
 * 0..65535; a water pin writes its coverage, or its depth with :depth. */
int gen_write_masks(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                       const trn_palette *palette, trn_graph_cache *cache, json_t *files)
{
    trn_graph graph;
    trn_error e;
    if (trn_graph_from_recipe(recipe, &graph, &e)) return cli_fail(ctx, &e);
    trn_graph_options go = {a->threads, a->quality, cache, a->max_work, palette, a->max_memory};
    trn_graph_run *run = NULL;
    trn_status st = trn_graph_evaluate(&graph, recipe, &go, &run, NULL, NULL, &e);
    trn_graph_dispose(&graph);
    if (st) return cli_fail(ctx, &e);
    int rc = CLI_EXIT_OK;
    for (uint32_t k = 0; k < a->mask_count && !rc; k++) {
        const char *spec = a->masks[k], *eq = strchr(spec, '=');
        char node[96], *pin = NULL;
        snprintf(node, sizeof node, "%.*s", (int)(eq - spec), spec);
        /* ":depth" after the pin asks a water pin for its depth instead of its coverage. */
        const size_t len = strlen(node);
        const bool depth = len > 6 && strcmp(node + len - 6, ":depth") == 0;
        if (depth) node[len - 6] = '\0';
        char *dot = strchr(node, '.');
        if (dot) {
            *dot = '\0';
            pin = dot + 1;
        }
        const char *path = eq + 1;
        trn_graph_value v;
        if (trn_graph_run_output(run, node, pin, &v, &e)) {
            rc = cli_failf(ctx,
                           "--mask %s: %s (a node that feeds the output, with a mask or water "
                           "output: 'terrane inspect' lists them)",
                           spec, e.message);
            break;
        }
        if (depth && v.kind != TRN_PIN_WATER) {
            rc = cli_failf(ctx, "--mask %s: :depth is for water outputs; that output is a %s", spec,
                           trn_pin_kind_name(v.kind));
            break;
        }
        if (v.kind != TRN_PIN_MASK && v.kind != TRN_PIN_WATER) {
            rc = cli_failf(ctx, "--mask %s: that output is a %s, not a mask or water", spec,
                           trn_pin_kind_name(v.kind));
            break;
        }
        trn_image img;
        double quantum = 0.0, deepest = 0.0;
        if (v.kind == TRN_PIN_WATER) {
            if ((st = water_mask(run, node, v.water, depth, &img, &quantum, &deepest, &e))) {
                rc = cli_failf(ctx, "--mask %s: %s", spec, e.message);
                break;
            }
        } else {
            const uint32_t w = v.cells_x + 1u, h = v.cells_z + 1u;
            if (trn_image_init(&img, w, h, 1, 16, &e)) {
                rc = cli_fail(ctx, &e);
                break;
            }
            uint16_t *px = img.data;
            for (uint32_t r = 0; r < h; r++)
                for (uint32_t c = 0; c < w; c++) {
                    double m = (double)v.values[(size_t)(h - 1u - r) * w + c];
                    m = m > 0.0 ? (m < 1.0 ? m : 1.0) : 0.0;
                    px[(size_t)r * w + c] = (uint16_t)lround(m * 65535.0);
                }
        }
        trn_png_options po;
        trn_png_options_default(&po);
        const char *file = cli_output(ctx, path);
        st = file ? trn_png_write(file, &img, &po, NULL, NULL, &e) : TRN_OK;
        trn_image_dispose(&img);
        if (!file) {
            rc = CLI_EXIT_FAIL;
            break;
        }
        if (st) {
            rc = cli_fail(ctx, &e);
            break;
        }
        if (depth) {
            cli_note(ctx,
                     "wrote %s (water depth of %.*s: metres = value * %.9g, deepest %.6g m as "
                     "65535; dry 0; north up)",
                     path, (int)(eq - spec), spec, quantum, deepest);
            json_t *f = json_object();
            json_object_set_new(f, "path", cli_json_string(path));
            json_object_set_new(f, "what", json_string("water depth"));
            json_object_set_new(f, "quantum", json_real(quantum));
            json_object_set_new(f, "max_depth", json_real(deepest));
            json_array_append_new(files, f);
        } else if (v.kind == TRN_PIN_WATER) {
            cli_note(ctx, "wrote %s (water coverage of %.*s: wet 65535, dry 0, north up)", path,
                     (int)(eq - spec), spec);
            gen_add_file(files, path, "water coverage");
        } else {
            cli_note(ctx, "wrote %s (mask %s, 0..1 as 0..65535, north up)", path, spec);
            gen_add_file(files, path, "mask");
        }
    }
    trn_graph_run_free(run);
    return rc;
}

/* ---- BeamNG ---- */

bool gen_set_binds_any(const trn_material_set *set)
{
    for (uint32_t r = 0; r < TRN_ROLE_COUNT; r++)
        if (set->roles[r] && set->roles[r][0]) return true;
    return false;
}

void gen_surface_out_free(surface_out *so)
{
    if (!so) return;
    trn_surface_materials_dispose(&so->sm);
    free(so);
}

/* Assign the materials: explicit biome material > role binding > biome tint. */
int gen_assign_surface(cli_ctx *ctx, const trn_recipe *recipe, const trn_generated *gen,
                          const trn_material_set *set, surface_out **out)
{
    surface_out *so = calloc(1, sizeof *so);
    if (!so) return cli_failf(ctx, "out of memory for the surface materials");
    trn_surface_materials_input in;
    memset(&in, 0, sizeof in);
    in.biomes = &gen->biomes;
    in.roles = gen->roles;
    in.role_count = gen->roles ? trn_field_sample_count(&gen->field) : 0;
    /* Label b is recipe biome b when the two agree (generation names them so). */
    if (recipe->biome_count == gen->biomes.name_count) {
        in.recipe_biomes = recipe->biomes;
        in.recipe_biome_count = recipe->biome_count;
    }
    in.set = set && gen_set_binds_any(set) ? set : NULL;
    so->bound = in.set != NULL;
    trn_error e;
    if (trn_surface_materials_assign(&in, &so->sm, &e) ||
        trn_surface_materials_engine_names(&so->sm, so->names, &e)) {
        gen_surface_out_free(so);
        return cli_fail(ctx, &e);
    }
    *out = so;
    return CLI_EXIT_OK;
}

/* Say which materials were written and why, and where the biome tint stood in for a role. */
void gen_surface_notes(cli_ctx *ctx, const surface_out *so, const trn_recipe *recipe)
{
    for (uint32_t k = 0; k < so->sm.labels.name_count; k++) {
        const trn_surface_material *mat = &so->sm.materials[k];
        const char *biome =
            mat->biome < recipe->biome_count ? recipe->biomes[mat->biome].name : "?";
        if (mat->source == TRN_SURFACE_ROLE)
            cli_note(ctx, "  material '%s' (%s): role %s, %" PRIu64 " sample(s)", so->names[k],
                     so->sm.labels.names[k], trn_surface_role_name(mat->role), mat->samples);
        else if (mat->source == TRN_SURFACE_EXPLICIT)
            cli_note(ctx, "  material '%s' (%s): biome '%s''s own material, %" PRIu64 " sample(s)",
                     so->names[k], so->sm.labels.names[k], biome, mat->samples);
        else
            cli_note(ctx, "  material '%s': biome tint, %" PRIu64 " sample(s)", so->names[k],
                     mat->samples);
    }
    if (!so->bound) return; /* without a material set every sample is the biome's, as asked */
    for (uint32_t r = 0; r < TRN_ROLE_COUNT; r++)
        if (so->sm.unbound[r])
            cli_note(ctx, "%" PRIu64 " samples of role '%s' have no binding: biome tint used",
                     so->sm.unbound[r], trn_surface_role_name((trn_surface_role)r));
    if (so->sm.no_role)
        cli_note(ctx, "%" PRIu64 " samples without a winning role: biome tint used",
                 so->sm.no_role);
}

/* The same as JSON: {"materials": [{"name", "material", "source", "role"|"biome", "samples"}],
 * "fallbacks": {"unbound": {"snow": 12034, ...}, "no_role": 0}}. */
json_t *gen_surface_json(const surface_out *so, const trn_recipe *recipe)
{
    json_t *o = json_object(), *list = json_array();
    for (uint32_t k = 0; k < so->sm.labels.name_count; k++) {
        const trn_surface_material *mat = &so->sm.materials[k];
        json_t *m = json_object();
        json_object_set_new(m, "name", cli_json_string(so->names[k]));
        json_object_set_new(m, "material", cli_json_string(so->sm.labels.names[k]));
        json_object_set_new(m, "source", cli_json_string(trn_surface_source_name(mat->source)));
        if (mat->source == TRN_SURFACE_ROLE)
            json_object_set_new(m, "role", cli_json_string(trn_surface_role_name(mat->role)));
        else if (mat->biome < recipe->biome_count)
            json_object_set_new(m, "biome", cli_json_string(recipe->biomes[mat->biome].name));
        json_object_set_new(m, "samples", json_integer((json_int_t)mat->samples));
        json_array_append_new(list, m);
    }
    json_object_set_new(o, "materials", list);
    json_t *fb = json_object(), *unbound = json_object();
    for (uint32_t r = 0; r < TRN_ROLE_COUNT; r++)
        if (so->sm.unbound[r] && so->bound)
            json_object_set_new(unbound, trn_surface_role_name((trn_surface_role)r),
                                json_integer((json_int_t)so->sm.unbound[r]));
    json_object_set_new(fb, "unbound", unbound);
    json_object_set_new(fb, "no_role", json_integer(so->bound ? (json_int_t)so->sm.no_role : 0));
    json_object_set_new(o, "fallbacks", fb);
    json_object_set_new(o, "material_set", json_boolean(so->bound));
    return o;
}

/* The placeholder colour of material k: its biome's colour, or its role's. */
void gen_surface_rgb(const surface_out *so, const trn_recipe *recipe, uint32_t k, uint8_t rgb[3])
{
    const trn_surface_material *mat = &so->sm.materials[k];
    if (mat->source == TRN_SURFACE_ROLE) {
        uint8_t rgba[4];
        trn_roles_color(mat->role, rgba);
        memcpy(rgb, rgba, 3);
        return;
    }
    const float *c = mat->biome < recipe->biome_count ? recipe->biomes[mat->biome].color : NULL;
    for (int i = 0; i < 3; i++)
        rgb[i] = c ? unit_byte(c[i]) : 128;
}

/* A .ter of the generated terrain: heights stored as (h - base) / quantum, the surface
 * materials as its materials (their engine names, in the assignment's order) and the layer map
 * from them. */
/* A 2^k + 1 sample grid (the usual heightfield convention, and Unity's) exports as BeamNG's
 * 2^k by dropping its last row and column; other sizes are kept as they are. */
static uint32_t beamng_size(uint32_t samples)
{
    const uint32_t k = samples - 1u;
    if (samples > TRN_BEAMNG_MIN_RESOLUTION && k <= TRN_BEAMNG_MAX_RESOLUTION &&
        (k & (k - 1u)) == 0)
        return k;
    return samples;
}

trn_status gen_build_ter(const trn_generated *gen, const surface_out *so,
                            const height_mapping *m, trn_ter *ter, trn_error *err)
{
    memset(ter, 0, sizeof *ter);
    const uint32_t samples = gen->field.cells_x + 1u;
    const uint32_t size = beamng_size(samples);
    const size_t n = (size_t)size * size;
    const trn_labels *labels = &so->sm.labels;
    ter->version = TRN_TER_VERSION_CURRENT;
    ter->layout = TRN_TER_LAYOUT_MODERN;
    ter->size = size;
    ter->heights = malloc(n * sizeof *ter->heights);
    ter->layers = malloc(n);
    ter->materials = calloc(labels->name_count ? labels->name_count : 1, sizeof(char *));
    if (!ter->heights || !ter->layers || !ter->materials) goto oom;
    for (uint32_t k = 0; k < labels->name_count; k++) {
        const size_t len = strlen(so->names[k]);
        char *copy = malloc(len + 1);
        if (!copy) goto oom;
        memcpy(copy, so->names[k], len + 1);
        ter->materials[ter->material_count++] = copy;
    }
    for (uint32_t j = 0; j < size; j++)
        for (uint32_t i = 0; i < size; i++) {
            const size_t k = (size_t)j * size + i, src = (size_t)j * samples + i;
            const double v = ((double)gen->field.heights[src] - m->base) / m->quantum;
            ter->heights[k] = !(v > 0.0) ? 0 : v >= 65535.0 ? 65535 : (uint16_t)lround(v);
            const uint8_t layer = labels->values[src];
            ter->layers[k] = layer == TRN_LABEL_NONE ? 0 : layer; /* as biome holes always were */
        }
    return TRN_OK;
oom:
    trn_ter_dispose(ter);
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory for the .ter");
}

int gen_write_ter(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
                     const surface_out *so, height_mapping *m)
{
    int rc = gen_choose_mapping(ctx, a, gen, a->out, m);
    if (rc) return rc;
    trn_ter ter;
    trn_error e;
    trn_status st = gen_build_ter(gen, so, m, &ter, &e);
    if (!st) st = trn_ter_write(a->out_file, &ter, TRN_TER_VERSION_CURRENT, cli_progress, ctx, &e);
    const uint32_t size = ter.size;
    trn_ter_dispose(&ter);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    if (size != gen->field.cells_x + 1u)
        cli_note(ctx,
                 "%u samples a side: BeamNG terrains are a power of two, so the last row "
                 "and column (the far edges, one cell wide) are left out",
                 gen->field.cells_x + 1u);
    cli_note(ctx, "wrote %s (%u x %u, maxHeight %g m, squareSize %g m)", a->out, size, size,
             m->max_height, gen->field.size_x / gen->field.cells_x);
    if (m->base != 0.0)
        cli_note(ctx, "stored 0 is %.6g m (%s): set the TerrainBlock's position z to %.6g", m->base,
                 m->rule, m->base);
    return CLI_EXIT_OK;
}
