/* terrane info on cooked payloads (*.terrain.bin): header, contents and the section table. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "fmt_payload.h"
#include "detect.h"
#include "terrane/runtime.h"

/* True when path is a regular file whose first bytes are the payload magic (pipes are left
 * alone: reading them here would eat what the real reader needs). */
static bool has_magic(const char *path)
{
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) return false;
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char head[8];
    const size_t n = fread(head, 1, sizeof head, f);
    fclose(f);
    return n >= 6 && memcmp(head, "TRNBIN", 6) == 0;
}

static void height_range(const trn_field *f, float *lo, float *hi)
{
    trn_field_range(f, lo, hi);
}

static json_t *describe_json(const char *path, const trn_payload *p)
{
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    json_t *o = json_object();
    char key[17];
    json_object_set_new(o, "input", cli_json_string(path));
    json_object_set_new(o, "input_format", json_string("terrane-payload"));
    json_object_set_new(o, "format_version", json_integer(info.format_version));
    json_object_set_new(o, "generator", cli_json_string(info.generator));
    json_object_set_new(o, "generator_version", json_integer(info.generator_version));
    json_object_set_new(o, "terrain_id", cli_json_string(info.terrain_id));
    snprintf(key, sizeof key, "%016" PRIx64, info.cache_key);
    json_object_set_new(o, "cache_key", json_string(key));
    json_object_set_new(o, "cells",
                        json_pack("[I, I]", (json_int_t)info.cells_x, (json_int_t)info.cells_z));
    json_object_set_new(o, "size", json_pack("[f, f]", info.size_x, info.size_z));
    json_object_set_new(o, "sea_level", json_real(info.sea_level));
    float lo, hi;
    height_range(trn_payload_field(p), &lo, &hi);
    json_object_set_new(o, "height_range",
                        json_pack("{s:f, s:f}", "min", (double)lo, "max", (double)hi));
    json_t *biomes = json_array();
    for (uint32_t b = 0; b < trn_payload_biome_count(p); b++)
        json_array_append_new(biomes, cli_json_string(trn_payload_biome_name(p, b)));
    json_object_set_new(o, "biomes", biomes);
    const trn_water *w = trn_payload_water(p);
    json_t *bodies = json_array();
    for (uint32_t b = 0; w && b < w->body_count; b++)
        json_array_append_new(
            bodies, json_pack("{s:o, s:s, s:f}", "id", cli_json_string(w->bodies[b].id), "kind",
                              trn_water_kind_name(w->bodies[b].kind), "level", w->bodies[b].level));
    json_object_set_new(o, "water_bodies", bodies);
    size_t count = 0;
    trn_payload_instances(p, &count);
    json_object_set_new(o, "scatter_rules", json_integer(trn_payload_rule_count(p)));
    json_object_set_new(o, "instances", json_integer((json_int_t)count));
    json_object_set_new(o, "roles", json_boolean(trn_payload_roles(p) != NULL));
    json_object_set_new(o, "exclusion", json_boolean(trn_payload_exclusion(p) != NULL));
    const trn_material_set *set = trn_payload_material_set(p);
    if (set) json_object_set_new(o, "material_set", cli_json_string(set->name ? set->name : ""));
    json_t *layers = json_array();
    for (uint32_t k = 0; k < trn_payload_layer_count(p); k++)
        json_array_append_new(layers, cli_json_string(trn_payload_layer_material(p, k)));
    json_object_set_new(o, "layers", layers);
    const trn_material_mapping *m = trn_payload_mapping(p);
    if (m)
        json_object_set_new(
            o, "mapping",
            json_pack("{s:b, s:b, s:f, s:f, s:b, s:f, s:f, s:f}", "texture_arrays",
                      m->texture_arrays, "triplanar", m->triplanar, "triplanar_slope",
                      m->triplanar_slope, "triplanar_sharpness", m->triplanar_sharpness,
                      "height_blend", m->height_blend, "height_blend_contrast",
                      m->height_blend_contrast, "macro_variation", m->macro_variation,
                      "macro_scale", m->macro_scale));
    trn_render_plan plan;
    if (!trn_environment_plan(p, NULL, NULL, &plan, NULL)) {
        json_t *rp = json_pack("{s:b, s:I, s:b, s:I, s:I, s:I, s:b, s:I}", "gpu_patches",
                               plan.gpu_patches, "gpu_field_bytes", (json_int_t)plan.gpu_field_bytes,
                               "texture_arrays", plan.texture_arrays, "texture_size",
                               (json_int_t)plan.texture_size, "texture_layers",
                               (json_int_t)plan.texture_layers, "texture_bytes",
                               (json_int_t)plan.texture_bytes, "lod", plan.lod, "lod_bytes",
                               (json_int_t)plan.lod_bytes);
        if (rp && !plan.gpu_patches)
            json_object_set_new(rp, "gpu_fallback", cli_json_string(plan.gpu_fallback));
        if (rp && !plan.texture_arrays)
            json_object_set_new(rp, "texture_fallback", cli_json_string(plan.texture_fallback));
        if (rp) json_object_set_new(o, "render_plan", rp);
    }
    json_t *secs = json_array();
    for (uint32_t k = 0; k < info.section_count; k++) {
        trn_payload_section s;
        trn_payload_section_at(p, k, &s);
        const char *name = trn_payload_section_name(s.id);
        json_array_append_new(
            secs, json_pack("{s:o, s:s, s:b, s:I, s:I, s:I}", "id", cli_json_string(s.id), "name",
                            name ? name : "unknown", "required", s.required, "offset",
                            (json_int_t)s.offset, "compressed_size", (json_int_t)s.compressed_size,
                            "raw_size", (json_int_t)s.raw_size));
    }
    json_object_set_new(o, "sections", secs);
    return o;
}

static void describe_text(const char *path, const trn_payload *p)
{
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    cli_printf("%s: terrane payload, format %u (%s, generator %u)\n", path, info.format_version,
               info.generator, info.generator_version);
    cli_printf("  terrain id: %s\n", info.terrain_id);
    cli_printf("  recipe cache key: %016" PRIx64 "\n", info.cache_key);
    cli_printf("  grid: %u x %u cells over %g x %g units, sea level %g\n", info.cells_x,
               info.cells_z, info.size_x, info.size_z, info.sea_level);
    float lo, hi;
    height_range(trn_payload_field(p), &lo, &hi);
    cli_printf("  heights: %g .. %g\n", (double)lo, (double)hi);
    cli_printf("  biomes: %u (", trn_payload_biome_count(p));
    for (uint32_t b = 0; b < trn_payload_biome_count(p); b++)
        cli_printf("%s%s", b ? ", " : "", trn_payload_biome_name(p, b));
    cli_printf(")\n");
    const trn_water *w = trn_payload_water(p);
    cli_printf("  water: %u bod%s", w ? w->body_count : 0u, w && w->body_count == 1 ? "y" : "ies");
    for (uint32_t b = 0; w && b < w->body_count; b++)
        cli_printf("%s%s '%s' at %g", b ? ", " : ": ", trn_water_kind_name(w->bodies[b].kind),
                   w->bodies[b].id, w->bodies[b].level);
    cli_printf("\n");
    size_t count = 0;
    trn_payload_instances(p, &count);
    cli_printf("  scatter: %u rule%s, %zu instance%s\n", trn_payload_rule_count(p),
               trn_payload_rule_count(p) == 1 ? "" : "s", count, count == 1 ? "" : "s");
    const trn_material_set *set = trn_payload_material_set(p);
    cli_printf("  surface roles: %s%s%s%s\n", trn_payload_roles(p) ? "yes" : "no",
               set ? ", material set '" : "", set && set->name ? set->name : "", set ? "'" : "");
    cli_printf("  texture layers: %u\n", trn_payload_layer_count(p));
    const trn_material_mapping *m = trn_payload_mapping(p);
    if (m) {
        cli_printf("  material mapping: texture arrays %s, ", m->texture_arrays ? "yes" : "no");
        if (m->triplanar)
            cli_printf("triplanar from %g degrees (sharpness %g), ", m->triplanar_slope,
                       m->triplanar_sharpness);
        else
            cli_printf("no triplanar, ");
        if (m->height_blend)
            cli_printf("height blend %g", m->height_blend_contrast);
        else
            cli_printf("no height blend");
        if (m->macro_variation > 0.0)
            cli_printf(", macro variation %g at %g per unit", m->macro_variation, m->macro_scale);
        cli_printf("\n");
    }
    trn_render_plan plan;
    if (!trn_environment_plan(p, NULL, NULL, &plan, NULL)) {
        cli_printf("  render plan at the default budgets: ");
        if (plan.gpu_patches)
            cli_printf("GPU patches (%.2f MiB)", (double)plan.gpu_field_bytes / 1048576.0);
        else
            cli_printf("ordinary meshes (%s)", plan.gpu_fallback);
        if (plan.texture_arrays)
            cli_printf(", texture arrays of %u layers at %u (%.2f MiB)", plan.texture_layers,
                       plan.texture_size, (double)plan.texture_bytes / 1048576.0);
        else
            cli_printf(", no texture arrays (%s)", plan.texture_fallback);
        cli_printf(", reduced meshes %.2f MiB%s\n", (double)plan.lod_bytes / 1048576.0,
                   plan.lod ? "" : " (over the LOD budget)");
    }
    cli_printf("  exclusion mask: %s\n", trn_payload_exclusion(p) ? "yes" : "no");
    cli_printf("  sections:\n");
    for (uint32_t k = 0; k < info.section_count; k++) {
        trn_payload_section s;
        trn_payload_section_at(p, k, &s);
        const char *name = trn_payload_section_name(s.id);
        cli_printf("    %-4s %-17s %-8s offset %-10" PRIu64 " %" PRIu64 " bytes (%" PRIu64
                   " raw)\n",
                   s.id, name ? name : "unknown", s.required ? "required" : "optional", s.offset,
                   s.compressed_size, s.raw_size);
    }
}

bool cli_payload_describe(cli_ctx *ctx, const char *path, int *rc)
{
    if (!has_magic(path)) return false;
    *rc = cli_input(ctx, path);
    if (*rc) return true;
    trn_payload *p = NULL;
    trn_error e;
    if (trn_payload_open(path, NULL, &p, &e)) {
        *rc = cli_fail(ctx, &e);
        return true;
    }
    if (ctx->json)
        cli_print_json(describe_json(path, p));
    else
        describe_text(path, p);
    trn_payload_free(p);
    *rc = CLI_EXIT_OK;
    return true;
}

int cli_payload_load(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out)
{
    trn_payload_limits limits;
    trn_payload_limits_default(&limits);
    if (opt && opt->max_samples) limits.max_samples = opt->max_samples;
    trn_payload *p = NULL;
    trn_error e;
    if (trn_payload_open(cli_input_path(path), &limits, &p, &e)) return cli_fail(ctx, &e);
    const trn_field *f = trn_payload_field(p);
    int rc = CLI_EXIT_OK;
    if (trn_field_init(&out->field, f->cells_x, f->cells_z, f->size_x, f->size_z, &e)) {
        rc = cli_fail(ctx, &e);
    } else {
        const size_t n = trn_field_sample_count(f);
        memcpy(out->field.heights, f->heights, n * sizeof *f->heights);
        /* The biome labels come along as the terrain's layers (materials where formats have
         * them), named as the recipe named its biomes. */
        const uint8_t *labels = trn_payload_biomes(p);
        if (labels && trn_labels_init(&out->labels, f->cells_x, f->cells_z, &e) == TRN_OK) {
            memcpy(out->labels.values, labels, n);
            for (uint32_t b = 0; b < trn_payload_biome_count(p) && !rc; b++) {
                const char *name = trn_payload_biome_name(p, b);
                if (trn_labels_add_name(&out->labels, name, strlen(name), &e))
                    rc = cli_fail(ctx, &e);
            }
            out->has_labels = rc == CLI_EXIT_OK;
        } else if (labels) {
            rc = cli_fail(ctx, &e);
        }
    }
    trn_payload_free(p);
    return rc;
}
