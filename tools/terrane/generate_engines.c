/* terrane generate's engine exports: the BeamNG level (water, forest, checks) and Unity terrain. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "generate_internal.h"

/* Overwrite the flat placeholder base colour of each surface material with its biome's or role's
 * colour (only terrane's placeholders, t_terrane_*, never a texture someone else made). The
 * level's files are staged, not yet in place: read and write them through the run's set. */
static trn_status tint_placeholders(cli_ctx *ctx, const trn_beamng_level_result *res,
                                    const trn_recipe *recipe, const surface_out *so,
                                    uint32_t *tinted, trn_error *err)
{
    *tinted = 0;
    trn_write_set *ws = cli_write_set(ctx);
    trn_material_file mf;
    trn_status st =
        trn_material_file_read(trn_write_set_current(ws, res->materials_path), &mf, err);
    if (st) return st;
    char prefix[300];
    snprintf(prefix, sizeof prefix, "/levels/%s/", res->level_name);
    for (uint32_t b = 0; b < so->sm.labels.name_count && !st; b++) {
        const trn_terrain_material *mat = NULL;
        for (uint32_t k = 0; k < mf.material_count && !mat; k++)
            if (mf.materials[k].internal_name &&
                strcmp(mf.materials[k].internal_name, so->names[b]) == 0)
                mat = &mf.materials[k];
        const char *game = mat ? mat->tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE] : NULL;
        if (!game || strncasecmp(game, prefix, strlen(prefix)) != 0) continue;
        const char *file = strrchr(game, '/') + 1;
        if (strncmp(file, "t_terrane_", 10) != 0 || strstr(game, "..")) continue;
        char disk[4096];
        snprintf(disk, sizeof disk, "%s/%s", res->level_dir, game + strlen(prefix));
        trn_png_info info;
        if (trn_png_read_info(trn_write_set_current(ws, disk), &info, NULL))
            continue; /* validate reports a missing or broken texture */
        const char *target = NULL;
        if ((st = trn_write_set_stage(ws, disk, &target, err))) break;
        trn_image img;
        if ((st = trn_image_init(&img, info.width, info.height, 3, 8, err))) break;
        uint8_t rgb[3];
        gen_surface_rgb(so, recipe, b, rgb);
        uint8_t *px = img.data;
        for (size_t p = 0; p < (size_t)info.width * info.height; p++)
            memcpy(px + p * 3u, rgb, 3);
        trn_png_options po;
        trn_png_options_default(&po);
        po.compression_level = 9;
        po.srgb = true; /* a base colour map is sRGB, as validate checks */
        st = trn_png_write(target, &img, &po, NULL, NULL, err);
        trn_image_dispose(&img);
        *tinted += !st;
    }
    trn_material_file_dispose(&mf);
    return st;
}

/* A mapped material set with triplanar projection: each TerrainMaterial terrane made (its base
 * colour one of terrane's t_terrane_ placeholders) that covers steep ground, a quarter or more of
 * its samples at triplanar_slope or steeper, gets useSideProjection (BeamNG's triplanar
 * projection along cliffs). The engine's height-based blending needs no field: it follows the
 * materials' height maps. */
static trn_status side_projection(cli_ctx *ctx, const trn_beamng_level_result *res,
                                  const trn_generated *gen, const surface_out *so,
                                  const trn_material_mapping *mapping, uint32_t *marked,
                                  trn_error *err)
{
    *marked = 0;
    if (!mapping || !mapping->present || !mapping->triplanar) return TRN_OK;
    const trn_field *f = &gen->field;
    const uint32_t names = so->sm.labels.name_count;
    uint64_t steep[TRN_SURFACE_MATERIALS_MAX] = {0}, all[TRN_SURFACE_MATERIALS_MAX] = {0};
    double *row = malloc(((size_t)f->cells_x + 1u) * sizeof *row);
    if (!row) return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    for (uint32_t j = 0; j <= f->cells_z; j++) {
        trn_field_slope_row(f, j, row);
        for (uint32_t i = 0; i <= f->cells_x; i++) {
            const uint8_t m = so->sm.labels.values[(size_t)j * (f->cells_x + 1u) + i];
            if (m >= names) continue;
            all[m]++;
            steep[m] += row[i] >= mapping->triplanar_slope;
        }
    }
    free(row);
    trn_write_set *ws = cli_write_set(ctx);
    trn_material_file mf;
    trn_status st =
        trn_material_file_read(trn_write_set_current(ws, res->materials_path), &mf, err);
    if (st) return st;
    bool changed = false;
    for (uint32_t b = 0; b < names && !st; b++) {
        if (!all[b] || steep[b] * 4u < all[b]) continue;
        for (uint32_t k = 0; k < mf.material_count; k++) {
            trn_terrain_material *mat = &mf.materials[k];
            const char *tex = mat->tex[TRN_TEX_BASE_COLOR][TRN_TEX_BASE];
            if (!mat->internal_name || strcmp(mat->internal_name, so->names[b]) != 0 || !tex ||
                !strstr(tex, "/t_terrane_"))
                continue;
            json_t *extra = mat->extra_json ? json_loads(mat->extra_json, 0, NULL) : json_object();
            if (!extra) break;
            json_object_set_new(extra, "useSideProjection", json_true());
            char *text = json_dumps(extra, JSON_COMPACT | JSON_PRESERVE_ORDER);
            json_decref(extra);
            if (!text) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            free(mat->extra_json);
            mat->extra_json = text;
            changed = true;
            (*marked)++;
        }
    }
    const char *target = NULL;
    if (!st && changed && !(st = trn_write_set_stage(ws, res->materials_path, &target, err)))
        st = trn_material_file_write(target, &mf, err);
    trn_material_file_dispose(&mf);
    return st;
}

/* Each surface material with a Material document (its manifest found as the palette's project
 * finds it): its albedo, normal, roughness and height maps become the TerrainMaterial's
 * baseColor, normal, roughness and height detail textures, written beside terrane's
 * placeholders at the texture set's detail size (BeamNG wants every texture of a set the same
 * size; the maps are resampled as the tileable textures they are: interpolated where they grow,
 * box-filtered where they shrink, so fine detail averages out instead of aliasing), the detail
 * size in metres divided by the Material's texture_scale. Only slots that hold terrane's
 * placeholders change. */
static trn_status material_maps(cli_ctx *ctx, const gen_args *a, const trn_beamng_level_result *res,
                                const surface_out *so, uint32_t *copied, trn_error *err)
{
    *copied = 0;
    static const int groups[4] = {TRN_TEX_BASE_COLOR, TRN_TEX_NORMAL, TRN_TEX_ROUGHNESS,
                                  TRN_TEX_HEIGHT};
    static const int maps[4] = {TRN_MAP_ALBEDO, TRN_MAP_NORMAL, TRN_MAP_ROUGHNESS, TRN_MAP_HEIGHT};
    static const char *const suffix[4] = {"b", "nm", "r", "h"};
    trn_write_set *ws = cli_write_set(ctx);
    trn_material_file mf;
    trn_status st =
        trn_material_file_read(trn_write_set_current(ws, res->materials_path), &mf, err);
    if (st) return st;
    char prefix[300];
    snprintf(prefix, sizeof prefix, "/levels/%s/", res->level_name);
    bool changed = false;
    for (uint32_t b = 0; b < so->sm.labels.name_count && !st; b++) {
        const char *id = so->sm.labels.names[b];
        if (!id || strncmp(id, "asset://", 8) != 0) continue;
        trn_material doc;
        memset(&doc, 0, sizeof doc);
        bool no_manifest = false;
        const trn_status found = trn_material_find(a->recipe_path, id, &doc, &no_manifest, err);
        if (found) {
            if (!no_manifest) st = found; /* a document that does not resolve fails the export */
            trn_material_dispose(&doc);
            continue;
        }
        trn_terrain_material *mat = NULL;
        for (uint32_t k = 0; k < mf.material_count && !mat; k++)
            if (mf.materials[k].internal_name &&
                strcmp(mf.materials[k].internal_name, so->names[b]) == 0)
                mat = &mf.materials[k];
        for (int g = 0; mat && g < 4 && !st; g++) {
            const char *game = mat->tex[groups[g]][TRN_TEX_DETAIL];
            if (!doc.paths[maps[g]] || !game || strncasecmp(game, prefix, strlen(prefix)) != 0 ||
                !strstr(game, "/t_terrane_") || strstr(game, ".."))
                continue;
            char disk[4096];
            snprintf(disk, sizeof disk, "%s/%s", res->level_dir, game + strlen(prefix));
            trn_png_info info;
            if (trn_png_read_info(trn_write_set_current(ws, disk), &info, NULL)) continue;
            trn_image src, img;
            memset(&src, 0, sizeof src);
            if ((st = trn_png_read(doc.paths[maps[g]], NULL, &src, err))) break;
            const uint8_t channels = g == 0 || g == 1 ? 3 : 1;
            st = trn_image_resample_tiled(&src, info.width, info.height, channels, &img, err);
            trn_image_dispose(&src);
            if (st) break;
            char safe[96], file[160], game_path[1200];
            size_t n = 0;
            for (const char *p = so->names[b]; *p && n + 1 < sizeof safe; p++)
                safe[n++] = isalnum((unsigned char)*p) || *p == '-' ? *p : '_';
            safe[n] = '\0';
            snprintf(file, sizeof file, "t_terrane_%s_%s_d.png", safe, suffix[g]);
            const char *slash = strrchr(game, '/');
            snprintf(game_path, sizeof game_path, "%.*s/%s", (int)(slash - game), game, file);
            snprintf(disk, sizeof disk, "%s/%s", res->level_dir, game_path + strlen(prefix));
            const char *target = NULL;
            if (!(st = trn_write_set_stage(ws, disk, &target, err))) {
                trn_png_options po;
                trn_png_options_default(&po);
                po.compression_level = 9;
                po.srgb = g == 0; /* a base colour map is sRGB, as validate checks */
                st = trn_png_write(target, &img, &po, NULL, NULL, err);
            }
            trn_image_dispose(&img);
            if (st) break;
            char *dup = strdup(game_path);
            if (!dup) {
                st = trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
                break;
            }
            free(mat->tex[groups[g]][TRN_TEX_DETAIL]);
            mat->tex[groups[g]][TRN_TEX_DETAIL] = dup;
            mat->tex_size[groups[g]][TRN_TEX_DETAIL] /=
                doc.texture_scale > 0 ? doc.texture_scale : 1;
            changed = true;
            (*copied)++;
        }
        trn_material_dispose(&doc);
    }
    const char *target = NULL;
    if (!st && changed && !(st = trn_write_set_stage(ws, res->materials_path, &target, err)))
        st = trn_material_file_write(target, &mf, err);
    trn_material_file_dispose(&mf);
    return st;
}

/* The published water as the level's WaterPlane, WaterBlocks and Rivers, placed as the
 * TerrainBlock (centred; its position z is stored 0, so heights are world z as they are). */
static trn_status export_level_water(const gen_args *a, const trn_generated *gen, trn_write_set *ws,
                                     level_export *lx, trn_error *e)
{
    if (!gen->has_water) return TRN_OK;
    trn_beamng_water_options wo;
    memset(&wo, 0, sizeof wo);
    wo.level_dir = a->export_dir;
    wo.placement.origin_x = wo.placement.origin_y = -(double)lx->size * lx->square_size / 2.0;
    wo.writes = ws;
    trn_status st = trn_beamng_level_write_water(&gen->water, &gen->field, &wo, &lx->water_res, e);
    lx->water = st == TRN_OK;
    return st;
}

void gen_placements_dispose(placements *p)
{
    trn_palette_dispose(&p->palette);
    trn_material_set_dispose(&p->set);
    trn_scatter_exclusions_dispose(&p->suppress);
    memset(p, 0, sizeof *p);
}

int gen_exclusions_read(cli_ctx *ctx, const gen_args *a, placements *p)
{
    if (!a->scatter_exclusions) return CLI_EXIT_OK;
    if (!p->loaded)
        return cli_usage_error(ctx, "--scatter-exclusions needs an engine export (--export) of a "
                                    "recipe with a palette");
    int rc = cli_input(ctx, a->scatter_exclusions);
    if (rc) return rc;
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(a->scatter_exclusions, 0, &data, &size, &e) ||
        trn_scatter_exclusions_parse((const char *)data, size, a->scatter_exclusions, &p->suppress,
                                     &e))
        rc = cli_fail(ctx, &e);
    free(data);
    return rc;
}

void gen_exclusions_note(cli_ctx *ctx, const gen_args *a, size_t suppressed, size_t unmatched)
{
    cli_note(ctx, "%s: %zu placement%s suppressed, %zu key%s matched none", a->scatter_exclusions,
             suppressed, suppressed == 1 ? "" : "s", unmatched, unmatched == 1 ? "" : "s");
}

/* A recipe with a palette: its instances as the level's forest, placed as the TerrainBlock. */
static int export_level_forest(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                               const trn_generated *gen, const surface_out *so, trn_write_set *ws,
                               level_export *lx, placements *pl)
{
    if (!recipe->palette_json || !pl->loaded) return CLI_EXIT_OK;
    const trn_palette *palette = &pl->palette;
    const trn_instances *inst = &gen->instances;
    int rc = CLI_EXIT_OK;
    {
        trn_beamng_forest_options fo;
        memset(&fo, 0, sizeof fo);
        fo.level_dir = a->export_dir;
        fo.origin_x = fo.origin_y = -(double)lx->size * lx->square_size / 2.0;
        /* The surface's materials (the .ter's names) name the GroundCover layers. */
        const char *names[TRN_SURFACE_MATERIALS_MAX];
        const uint32_t count = so->sm.labels.name_count;
        for (uint32_t k = 0; k < count && k < TRN_SURFACE_MATERIALS_MAX; k++)
            names[k] = so->names[k];
        fo.layers = so->sm.labels.values;
        fo.layers_width = gen->field.cells_x + 1u;
        fo.layers_height = gen->field.cells_z + 1u;
        fo.layers_spacing = lx->square_size;
        fo.layer_names = names;
        fo.layer_count = count < TRN_SURFACE_MATERIALS_MAX ? count : TRN_SURFACE_MATERIALS_MAX;
        fo.writes = ws;
        trn_error e;
        if (trn_beamng_level_write_forest(palette, inst, &fo, &lx->forest_res, &e))
            rc = cli_fail(ctx, &e);
        lx->forest = rc == CLI_EXIT_OK;
    }
    return rc;
}

/* The ground model of a role's material: the role says what the surface is. */
static const char *role_groundmodel(uint8_t role)
{
    switch (role) {
    case TRN_ROLE_GRASS:
        return "GRASS";
    case TRN_ROLE_ROCK:
    case TRN_ROLE_CLIFF:
        return "ROCK";
    case TRN_ROLE_SEDIMENT:
        return "GRAVEL";
    case TRN_ROLE_SAND:
        return "SAND";
    case TRN_ROLE_SNOW:
        return "SNOW";
    case TRN_ROLE_WET_GROUND:
    case TRN_ROLE_UNDERWATER:
        return "MUD";
    default:
        return "DIRT";
    }
}

/* The terrain of a level: ter (heights, layer map, the surface's materials) into level_dir as
 * its TerrainBlock with a TerrainMaterial a material (a biome's "groundmodel" or a role's decides
 * its surface physics), terrane's placeholders tinted, Material documents' maps as detail
 * textures (*mapped counts them; may be NULL). sea_level (when has_sea) keeps a
 * scaffold's spawn point dry. The whole grid's level and each tile's level are made here. */
trn_status gen_level_terrain(cli_ctx *ctx, const gen_args *a, const char *level_dir,
                             const trn_recipe *recipe, const surface_out *so, trn_ter *ter,
                             const height_mapping *m, double square_size, bool has_sea,
                             double sea_level, trn_beamng_level_result *res, uint32_t *tinted,
                             uint32_t *mapped, trn_error *e)
{
    trn_write_set *ws = cli_write_set(ctx);
    if (!ws) return trn_error_set(e, TRN_ERR_IO, level_dir, -1, "cannot stage the level's files");
    trn_beamng_level_options lo_opt;
    memset(&lo_opt, 0, sizeof lo_opt);
    lo_opt.level_dir = level_dir;
    lo_opt.max_height = m->max_height;
    lo_opt.square_size = square_size;
    lo_opt.textures.base_size = lo_opt.textures.macro_size = lo_opt.textures.detail_size =
        a->texture_size;
    lo_opt.position_z = m->base; /* stored 0 is the lowest height */
    lo_opt.scaffold.enabled = a->scaffold;
    lo_opt.scaffold.has_sea_level = has_sea;
    lo_opt.scaffold.sea_level = sea_level;
    const uint32_t mats = so->sm.labels.name_count;
    trn_beamng_surface *surfaces = calloc(mats ? mats : 1, sizeof *surfaces);
    if (!surfaces) return trn_error_set(e, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
    for (uint32_t k = 0; k < mats; k++) {
        const trn_surface_material *sm = &so->sm.materials[k];
        const char *model = NULL;
        if (sm->source == TRN_SURFACE_ROLE)
            model = role_groundmodel(sm->role);
        else if (sm->biome < recipe->biome_count && recipe->biomes[sm->biome].groundmodel[0])
            model = recipe->biomes[sm->biome].groundmodel;
        if (model) surfaces[lo_opt.surface_count++] = (trn_beamng_surface){so->names[k], model};
    }
    lo_opt.surfaces = surfaces;
    lo_opt.writes = ws;
    memset(res, 0, sizeof *res);
    trn_status st = trn_beamng_level_write_terrain(ter, &lo_opt, res, cli_progress, ctx, e);
    free(surfaces);
    cli_progress_end(ctx);
    if (!st) st = tint_placeholders(ctx, res, recipe, so, tinted, e);
    uint32_t maps = 0;
    if (!st) st = material_maps(ctx, a, res, so, &maps, e);
    if (mapped) *mapped = maps;
    return st;
}

int gen_export_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                        const trn_generated *gen, const surface_out *so, level_export *lx)
{
    height_mapping *m = &lx->mapping;
    int rc = gen_choose_mapping(ctx, a, gen, a->export_dir, m);
    if (rc) return rc;
    trn_write_set *ws = cli_write_set(ctx);
    if (!ws) return CLI_EXIT_FAIL;
    trn_ter ter;
    trn_error e;
    trn_status st = gen_build_ter(gen, so, m, &ter, &e);
    if (st) return cli_fail(ctx, &e);
    /* Only a sea level the recipe states is water the level should have. */
    bool has_sea = gen->sea_level_source == TRN_SEA_LEVEL_EXPLICIT;
    double sea_level = gen->sea_level;
    /* An unbounded ocean body is the level's sea (its WaterPlane): the spawn point keeps dry. */
    for (uint32_t b = 0; gen->has_water && b < gen->water.body_count; b++)
        if (gen->water.bodies[b].kind == TRN_WATER_OCEAN && !gen->water.bodies[b].boundary_count) {
            has_sea = true;
            sea_level = gen->water.bodies[b].level;
            break;
        }
    lx->square_size = gen->field.size_x / gen->field.cells_x;
    st = gen_level_terrain(ctx, a, a->export_dir, recipe, so, &ter, m, lx->square_size, has_sea,
                           sea_level, &lx->res, &lx->tinted, &lx->mapped, &e);
    lx->size = ter.size;
    lx->materials = ter.material_count;
    trn_ter_dispose(&ter);
    trn_beamng_level_result *res = &lx->res;
    if (!st)
        st = side_projection(ctx, res, gen, so, pl && pl->loaded ? &pl->set.mapping : NULL,
                             &lx->side_projected, &e);
    if (!st) st = export_level_water(a, gen, ws, lx, &e);
    if (st) return cli_fail(ctx, &e);
    if ((rc = export_level_forest(ctx, a, recipe, gen, so, ws, lx, pl))) return rc;
    lx->staged = true;
    return CLI_EXIT_OK;
}

/* Check the level in level_dir as a modder would ('terrane validate'): its findings on stderr
 * (a size that is no power of two said elsewhere when !pow2), their counts in *errors and
 * *warnings. */
int gen_level_check(cli_ctx *ctx, const char *level_dir, bool pow2, size_t *errors,
                    size_t *warnings)
{
    trn_findings findings = {NULL, 0, 0};
    trn_error e;
    trn_status st = trn_beamng_validate(level_dir, NULL, &findings, NULL, NULL, &e);
    if (st) {
        trn_findings_dispose(&findings);
        return cli_fail(ctx, &e);
    }
    *errors = trn_findings_count(&findings, TRN_SEVERITY_ERROR);
    *warnings = trn_findings_count(&findings, TRN_SEVERITY_WARNING) - *errors;
    for (size_t k = 0; k < findings.count; k++) {
        const trn_finding *f = &findings.items[k];
        if (f->severity == TRN_SEVERITY_INFO || (ctx->quiet && f->severity < TRN_SEVERITY_ERROR))
            continue;
        if (!pow2 && strcmp(f->check, "ter-size") == 0) continue; /* said above, with the fix */
        cli_fprintf(stderr, "terrane generate: validate %s [%s]: %s\n",
                    trn_severity_name(f->severity), f->check, f->message);
    }
    trn_findings_dispose(&findings);
    cli_note(ctx, "validated %s: %zu error(s), %zu warning(s)", level_dir, *errors, *warnings);
    return CLI_EXIT_OK;
}

/* After the level's files landed: say what was written and check it as a modder would. */
int gen_validate_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                          const trn_generated *gen, const surface_out *so, const level_export *lx,
                          json_t *summary)
{
    const trn_beamng_level_result *res = &lx->res;
    const height_mapping *m = &lx->mapping;
    const uint32_t size = lx->size;
    if (size != gen->field.cells_x + 1u)
        cli_note(ctx,
                 "%u samples a side: BeamNG terrains are a power of two, so the last row "
                 "and column (the far edges, one cell wide) are left out: %u x %u",
                 gen->field.cells_x + 1u, size, size);
    cli_note(ctx, "wrote %s (%u x %u, maxHeight %g m, squareSize %g m), %s and %s", res->ter_path,
             size, size, m->max_height, lx->square_size, res->terrain_json_path,
             res->heightmap_png_path);
    cli_note(ctx,
             "TerrainBlock \"%s\" in %s: position z %.6g (stored 0 is the lowest height, "
             "%.6g m), texture set %s",
             res->terrain_name, res->items_path, m->base, m->base, res->texture_set);
    cli_note(ctx, "%u material(s) in %s (%u added, %u placeholder(s) tinted):", lx->materials,
             res->materials_path, res->materials_added, lx->tinted);
    gen_surface_notes(ctx, so, recipe);
    if (lx->mapped)
        cli_note(ctx, "%u detail texture(s) from Material documents' maps", lx->mapped);
    cli_note_scaffold(ctx, res);
    const trn_beamng_water_result *wr = &lx->water_res;
    if (lx->water)
        cli_note(ctx,
                 "water: %u WaterPlane, %u WaterBlock(s), %u River(s) (%u updated in place)%s%s; "
                 "%u bod%s without water left out",
                 wr->planes, wr->blocks, wr->rivers, wr->replaced, wr->items_path[0] ? " in " : "",
                 wr->items_path, wr->skipped, wr->skipped == 1 ? "y" : "ies");
    const trn_beamng_forest_result *fr = &lx->forest_res;
    if (lx->forest && fr->types)
        cli_note(ctx, "forest: %" PRIu64 " item(s) of %u type(s) in %s%s%s%s", fr->items,
                 fr->types, fr->forest_path,
                 fr->format == TRN_BEAMNG_FOREST_V2 ? " (the level's own forest file, v2)" : "",
                 fr->forest_added ? ", a Forest object added to MissionGroup" : "",
                 fr->wind_added ? ", a ForestWindEmitter added" : "");
    if (lx->forest && fr->covers)
        cli_note(ctx,
                 "ground cover: %u GroundCover object(s) for %" PRIu64
                 " grass instance(s) (%u added); the engine strews them "
                 "around the camera on the terrain materials they stood on",
                 fr->covers, fr->cover_instances, fr->covers_added);
    if (lx->forest && fr->stale_removed)
        cli_note(ctx,
                 "forest: removed %u item file(s) an earlier export wrote for grass or "
                 "shapeless rules (their items drew nothing)",
                 fr->stale_removed);
    if (lx->forest && fr->unshaped)
        cli_note(ctx,
                 "forest: %" PRIu64 " instance(s) of %u rule(s) left out: their model or prefab "
                 "names no .dae or .cdae shape, and a forest item without one draws nothing "
                 "(give the rule a model such as \"asset://levels/NAME/art/shapes/tree.dae\")",
                 fr->unshaped_items, fr->unshaped);
    bool pow2 = size >= TRN_BEAMNG_MIN_RESOLUTION && size <= TRN_BEAMNG_MAX_RESOLUTION &&
                (size & (size - 1u)) == 0;
    if (!pow2 && !ctx->quiet)
        cli_fprintf(stderr,
                    "terrane generate: warning: %u samples a side; BeamNG expects a power of two "
                    "from 128 to 8192 (give the recipe a resolution of 2^k - 1 cells)\n",
                    size);

    size_t errors = 0, warnings = 0;
    int rc = gen_level_check(ctx, a->export_dir, pow2, &errors, &warnings);
    if (rc) return rc;
    json_t *lvl = json_object();
    json_object_set_new(lvl, "level", cli_json_string(res->level_dir));
    json_object_set_new(lvl, "level_name", cli_json_string(res->level_name));
    json_object_set_new(lvl, "terrain_name", cli_json_string(res->terrain_name));
    json_object_set_new(lvl, "terrain_file", cli_json_string(res->terrain_file));
    json_object_set_new(lvl, "ter_file", cli_json_string(res->ter_path));
    json_object_set_new(lvl, "terrain_json_file", cli_json_string(res->terrain_json_path));
    json_object_set_new(lvl, "heightmap_file", cli_json_string(res->heightmap_png_path));
    json_object_set_new(lvl, "items_file", cli_json_string(res->items_path));
    json_object_set_new(lvl, "materials_file", cli_json_string(res->materials_path));
    json_object_set_new(lvl, "texture_set", cli_json_string(res->texture_set));
    json_object_set_new(lvl, "resolution", json_integer(size));
    json_object_set_new(lvl, "square_size", json_real(lx->square_size));
    json_object_set_new(lvl, "position_z", json_real(m->base));
    json_object_set_new(lvl, "heights", gen_mapping_json(m));
    json_object_set_new(lvl, "materials_added", json_integer(res->materials_added));
    json_object_set_new(lvl, "textures_tinted", json_integer(lx->tinted));
    json_object_set_new(lvl, "textures_mapped", json_integer(lx->mapped));
    json_object_set_new(lvl, "surface", gen_surface_json(so, recipe));
    json_object_set_new(lvl, "validate_error_count", json_integer((json_int_t)errors));
    json_object_set_new(lvl, "validate_warning_count", json_integer((json_int_t)warnings));
    if (lx->water) {
        json_t *wj = json_object();
        json_object_set_new(wj, "planes", json_integer(wr->planes));
        json_object_set_new(wj, "blocks", json_integer(wr->blocks));
        json_object_set_new(wj, "rivers", json_integer(wr->rivers));
        json_object_set_new(wj, "updated", json_integer(wr->replaced));
        json_object_set_new(wj, "without_water", json_integer(wr->skipped));
        json_object_set_new(wj, "plane", cli_json_string(wr->plane_name));
        json_object_set_new(lvl, "water", wj);
    }
    if (lx->forest) {
        static const char *const formats[] = {NULL, "forest4", "v2"};
        json_t *vj = json_object();
        json_object_set_new(vj, "forest_items", json_integer((json_int_t)fr->items));
        json_object_set_new(vj, "forest_types", json_integer(fr->types));
        json_object_set_new(vj, "forest_format", formats[fr->format]
                                                     ? json_string(formats[fr->format])
                                                     : json_null());
        json_object_set_new(vj, "forest_path", fr->forest_path[0]
                                                   ? cli_json_string(fr->forest_path)
                                                   : json_null());
        json_object_set_new(vj, "ground_covers", json_integer(fr->covers));
        json_object_set_new(vj, "ground_cover_instances",
                            json_integer((json_int_t)fr->cover_instances));
        json_object_set_new(vj, "left_out_rules", json_integer(fr->unshaped));
        json_object_set_new(vj, "left_out_instances",
                            json_integer((json_int_t)fr->unshaped_items));
        json_object_set_new(vj, "removed_files", json_integer(fr->stale_removed));
        json_object_set_new(lvl, "vegetation", vj);
    }
    json_object_set_new(summary, "beamng", lvl);
    if (errors)
        return cli_failf(ctx, "the level %s has %zu validation error(s) (listed above)",
                         a->export_dir, errors);
    return CLI_EXIT_OK;
}

/* Unity's importer takes square heightmaps of 2^n + 1 samples (33..4097). */
int gen_check_unity_shape(cli_ctx *ctx, const trn_recipe *r)
{
    if (r->cells_x != r->cells_z || !trn_unity_resolution_valid(r->cells_x + 1u))
        return cli_failf(ctx,
                         "--export unity: Unity heightmaps are square with 2^n + 1 samples "
                         "(33..4097); the recipe has %u x %u cells: give it a resolution of "
                         "[2^n, 2^n] cells (--resolution 512x512), or write a heightfield and use "
                         "'terrane unity export' with --fit resample or pad",
                         r->cells_x, r->cells_z);
    return CLI_EXIT_OK;
}

/* The recipe file's name without folders and extensions: the Unity terrain's name. */
static void stem_of(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    snprintf(out, size, "%s", slash ? slash + 1 : path);
    char *dot = strchr(out, '.');
    if (dot && dot != out) *dot = '\0';
    if (!out[0]) snprintf(out, size, "terrain");
}

/* The palette's tree, rock and prop instances (every rule but grass) as Unity tree instances:
 * one prototype a rule, in rule order; position x and z 0..1 of the terrain, y in metres. */
typedef struct unity_trees {
    trn_unity_tree *trees;
    trn_unity_placed_prototype *prototypes;
    uint32_t tree_count, prototype_count;
} unity_trees;

static int unity_trees_build(cli_ctx *ctx, const trn_recipe *recipe, const placements *pl,
                             const trn_generated *gen, unity_trees *ut)
{
    memset(ut, 0, sizeof *ut);
    if (!recipe->palette_json || !pl->loaded) return CLI_EXIT_OK;
    const trn_palette *palette = &pl->palette;
    const trn_instances *inst = &gen->instances;
    int32_t *proto_of = malloc((palette->rule_count ? palette->rule_count : 1) * sizeof *proto_of);
    ut->prototypes = malloc((palette->rule_count ? palette->rule_count : 1) *
                            sizeof *ut->prototypes);
    ut->trees = malloc((inst->count ? inst->count : 1) * sizeof *ut->trees);
    if (!proto_of || !ut->prototypes || !ut->trees) {
        free(proto_of);
        free(ut->prototypes);
        free(ut->trees);
        memset(ut, 0, sizeof *ut);
        return cli_failf(ctx, "out of memory for the tree instances");
    }
    for (uint32_t r = 0; r < palette->rule_count; r++) {
        proto_of[r] = -1;
        if (palette->rules[r].category == TRN_CATEGORY_GRASS) continue;
        proto_of[r] = (int32_t)ut->prototype_count;
        ut->prototypes[ut->prototype_count++] = (trn_unity_placed_prototype){
            palette->rules[r].id, palette->rules[r].prefab, palette->rules[r].model};
    }
    const double sx = gen->field.size_x, sz = gen->field.size_z;
    for (size_t k = 0; k < inst->count; k++) {
        const trn_instance *in = &inst->items[k];
        if (in->rule >= palette->rule_count || proto_of[in->rule] < 0) continue;
        trn_unity_tree *t = &ut->trees[ut->tree_count++];
        memset(t, 0, sizeof *t);
        t->position[0] = (float)(in->x / sx);
        t->position[1] = (float)in->y;
        t->position[2] = (float)(in->z / sz);
        t->width_scale = t->height_scale = (float)in->scale;
        t->rotation = (float)(in->yaw * 3.14159265358979323846 / 180.0);
        t->color = 0xffffffffu; /* Unity's default TreeInstance colour: white, opaque */
        t->lightmap_color = 0xffffffffu;
        t->prototype = proto_of[in->rule];
    }
    free(proto_of);
    return CLI_EXIT_OK;
}

/* One texture of a Unity terrain layer: img as dir/file in the run's write set (tagged sRGB when
 * srgb: a colour map), file copied into name, *written counted. */
static trn_status unity_layer_png(trn_write_set *ws, const char *dir, const char *file,
                                  const trn_image *img, bool srgb, char *name, size_t size,
                                  uint32_t *written, trn_error *err)
{
    char disk[4600];
    snprintf(disk, sizeof disk, "%s/%s", dir, file);
    const char *target = NULL;
    trn_status st = trn_write_set_stage(ws, disk, &target, err);
    if (st) return st;
    trn_png_options po;
    trn_png_options_default(&po);
    po.compression_level = 9;
    po.srgb = srgb;
    if ((st = trn_png_write(target, img, &po, NULL, NULL, err))) return st;
    snprintf(name, size, "%s", file);
    (*written)++;
    return TRN_OK;
}

/* Unity's mask map of a Material document: R metallic (0), G ambient occlusion (1), B the height
 * map, A smoothness (1 - roughness), at the larger of the two maps' sizes (the smaller resampled
 * as the tileable texture it is); a missing map leaves its channel mid-grey (height) or half
 * smooth. */
static trn_status unity_mask_map(const trn_material *doc, trn_image *mask, trn_error *err)
{
    memset(mask, 0, sizeof *mask);
    trn_image src[2], grey[2];
    memset(src, 0, sizeof src);
    memset(grey, 0, sizeof grey);
    const int maps[2] = {TRN_MAP_ROUGHNESS, TRN_MAP_HEIGHT};
    uint32_t w = 0, h = 0;
    trn_status st = TRN_OK;
    for (int k = 0; k < 2 && !st; k++) {
        if (!doc->paths[maps[k]]) continue;
        st = trn_png_read(doc->paths[maps[k]], NULL, &src[k], err);
        if (!st && src[k].width * (uint64_t)src[k].height > (uint64_t)w * h) {
            w = src[k].width;
            h = src[k].height;
        }
    }
    for (int k = 0; k < 2 && !st; k++)
        if (src[k].data) st = trn_image_resample_tiled(&src[k], w, h, 1, &grey[k], err);
    if (!st) st = trn_image_init(mask, w, h, 4, 8, err);
    for (size_t p = 0; !st && p < (size_t)w * h; p++) {
        uint8_t *t = (uint8_t *)mask->data + p * 4u;
        t[0] = 0;
        t[1] = 255;
        t[2] = grey[1].data ? ((const uint8_t *)grey[1].data)[p] : 128;
        t[3] = (uint8_t)(255 - (grey[0].data ? ((const uint8_t *)grey[0].data)[p] : 128));
    }
    for (int k = 0; k < 2; k++) {
        trn_image_dispose(&src[k]);
        trn_image_dispose(&grey[k]);
    }
    if (st) trn_image_dispose(mask);
    return st;
}

trn_status gen_unity_terrain_layers(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                                    const surface_out *so, const char *dir, const char *name,
                                    unity_layers *ul, trn_error *err)
{
    memset(ul, 0, sizeof *ul);
    trn_write_set *ws = cli_write_set(ctx);
    if (!ws) return trn_error_set(err, TRN_ERR_IO, dir, -1, "cannot stage the terrain layers");
    trn_status st = TRN_OK;
    for (uint32_t k = 0; k < so->sm.labels.name_count && !st; k++) {
        const trn_surface_material *sm = &so->sm.materials[k];
        trn_unity_terrain_layer *l = &ul->layers[k];
        double scale = sm->source != TRN_SURFACE_ROLE && sm->biome < recipe->biome_count
                           ? recipe->biomes[sm->biome].texture_scale
                           : 1.0;
        if (!(scale > 0)) scale = 1.0;
        const char *id = so->sm.labels.names[k];
        trn_material doc;
        memset(&doc, 0, sizeof doc);
        bool no_manifest = true, have = false;
        if (id && strncmp(id, "asset://", 8) == 0) {
            const trn_status found = trn_material_find(a->recipe_path, id, &doc, &no_manifest, err);
            have = !found;
            if (found && !no_manifest) st = found; /* a document that does not resolve */
        }
        char file[300];
        if (!st && have) {
            scale *= doc.texture_scale > 0 ? doc.texture_scale : 1.0;
            const size_t root = doc.project ? strlen(doc.project) : 0;
            snprintf(ul->documents[k], sizeof ul->documents[k], "%s",
                     doc.source && root && strncmp(doc.source, doc.project, root) == 0 &&
                             doc.source[root] == '/'
                         ? doc.source + root + 1u
                         : doc.source ? doc.source : id);
            l->document = ul->documents[k];
            ul->documented++;
            static const int maps[2] = {TRN_MAP_ALBEDO, TRN_MAP_NORMAL};
            static const char *const kinds[2] = {"diffuse", "normal"};
            for (int m = 0; m < 2 && !st; m++) {
                if (!doc.paths[maps[m]]) continue;
                trn_image src, img;
                memset(&src, 0, sizeof src);
                if ((st = trn_png_read(doc.paths[maps[m]], NULL, &src, err))) break;
                st = trn_image_resample_tiled(&src, src.width, src.height, 3, &img, err);
                trn_image_dispose(&src);
                if (st) break;
                snprintf(file, sizeof file, "%s_layer%u_%s.png", name, k, kinds[m]);
                st = unity_layer_png(ws, dir, file, &img, m == 0, ul->files[k][m],
                                     sizeof ul->files[k][m], &ul->textures, err);
                trn_image_dispose(&img);
            }
            if (!st && (doc.paths[TRN_MAP_ROUGHNESS] || doc.paths[TRN_MAP_HEIGHT])) {
                trn_image mask;
                if (!(st = unity_mask_map(&doc, &mask, err))) {
                    snprintf(file, sizeof file, "%s_layer%u_mask.png", name, k);
                    st = unity_layer_png(ws, dir, file, &mask, false, ul->files[k][2],
                                         sizeof ul->files[k][2], &ul->textures, err);
                    trn_image_dispose(&mask);
                }
            }
        }
        trn_material_dispose(&doc);
        if (!st && !ul->files[k][0][0]) {
            /* no albedo: a flat diffuse of the layer's colour */
            trn_image img;
            if (!(st = trn_image_init(&img, 4, 4, 3, 8, err))) {
                uint8_t rgb[3];
                gen_surface_rgb(so, recipe, k, rgb);
                for (size_t p = 0; p < 16; p++)
                    memcpy((uint8_t *)img.data + p * 3u, rgb, 3);
                snprintf(file, sizeof file, "%s_layer%u_diffuse.png", name, k);
                st = unity_layer_png(ws, dir, file, &img, true, ul->files[k][0],
                                     sizeof ul->files[k][0], &ul->textures, err);
                trn_image_dispose(&img);
            }
        }
        l->diffuse = ul->files[k][0][0] ? ul->files[k][0] : NULL;
        l->normal = ul->files[k][1][0] ? ul->files[k][1] : NULL;
        l->mask = ul->files[k][2][0] ? ul->files[k][2] : NULL;
        l->tile_size = 1.0 / scale;
    }
    return st;
}

int gen_export_unity(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                        const trn_generated *gen, const surface_out *so, json_t *summary)
{
    height_mapping m;
    int rc = gen_choose_mapping(ctx, a, gen, a->unity_dir, &m);
    if (rc) return rc;
    char name[256];
    stem_of(a->recipe_path, name, sizeof name);
    trn_unity_export_options uo;
    trn_unity_export_options_default(&uo);
    uo.name = name;
    if (!(uo.writes = cli_write_set(ctx))) return CLI_EXIT_FAIL;
    uo.height_base = m.base;
    uo.height_size = 65535.0 * m.quantum;
    /* Each splat layer's material and where it came from. */
    const char *sources[TRN_SURFACE_MATERIALS_MAX];
    for (uint32_t k = 0; k < so->sm.labels.name_count; k++)
        sources[k] = trn_surface_source_name(so->sm.materials[k].source);
    uo.layer_sources = sources;
    uo.mapping = pl && pl->loaded ? &pl->set.mapping : NULL;
    /* Each splat layer's TerrainLayer: the Material documents' maps, else a flat colour. */
    unity_layers *ul = calloc(1, sizeof *ul);
    if (!ul) return cli_failf(ctx, "out of memory for the terrain layers");
    {
        trn_error le;
        if (gen_unity_terrain_layers(ctx, a, recipe, so, a->unity_dir, name, ul, &le)) {
            free(ul);
            return cli_fail(ctx, &le);
        }
    }
    uo.terrain_layers = ul->layers;
    /* The palette's grass rules as detail layers: their instances' (x, z), rule by rule. */
    trn_unity_detail_layer details[TRN_UNITY_MAX_DETAIL_LAYERS];
    double *points = NULL;
    if (recipe->palette_json && pl->loaded) {
        const trn_palette *palette = &pl->palette;
        const trn_instances *inst = &gen->instances;
        points = malloc((inst->count ? inst->count : 1) * 2 * sizeof *points);
        if (!points) {
            free(ul);
            return cli_failf(ctx, "out of memory for the detail layers");
        }
        size_t used = 0;
        for (uint32_t r = 0; r < palette->rule_count; r++) {
            if (palette->rules[r].category != TRN_CATEGORY_GRASS) continue;
            if (uo.detail_count == TRN_UNITY_MAX_DETAIL_LAYERS) {
                free(points);
                free(ul);
                return cli_failf(ctx,
                                 "--export unity: the palette has more than %u grass rules; "
                                 "Unity detail layers are one a rule",
                                 TRN_UNITY_MAX_DETAIL_LAYERS);
            }
            trn_unity_detail_layer *d = &details[uo.detail_count++];
            d->name = palette->rules[r].id;
            d->prototype =
                palette->rules[r].prefab ? palette->rules[r].prefab : palette->rules[r].model;
            d->points = points + 2 * used;
            d->point_count = 0;
            for (size_t k = 0; k < inst->count; k++)
                if (inst->items[k].rule == r) {
                    points[2 * used] = inst->items[k].x;
                    points[2 * used + 1] = inst->items[k].z;
                    used++;
                    d->point_count++;
                }
        }
        uo.details = details;
    }
    unity_trees trees;
    if ((rc = unity_trees_build(ctx, recipe, pl, gen, &trees))) {
        free(points);
        free(ul);
        return rc;
    }
    uo.trees = trees.trees;
    uo.tree_count = trees.tree_count;
    uo.placed_prototypes = trees.prototypes;
    uo.placed_prototype_count = trees.prototype_count;
    trn_unity_export_report rep;
    trn_error e;
    trn_status st = trn_unity_export(a->unity_dir, &gen->field, &so->sm.labels, NULL, &uo, &rep,
                                     cli_progress, ctx, &e);
    free(points);
    free(trees.trees);
    free(trees.prototypes);
    const uint32_t layer_textures = ul->textures, documented = ul->documented;
    free(ul);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx,
             "wrote %u file(s) in %s: %s.raw, %u x %u samples, terrain %g x %g x %g m (Import "
             "Raw: Depth 16 bit, Byte Order Windows, Flip Vertically off), %u splat map(s) "
             "of %u surface material(s); place it at y = %g",
             rep.files, a->unity_dir, name, rep.resolution, rep.resolution, rep.tile_size[0],
             rep.tile_size[1], rep.tile_size[2], rep.splat_textures, so->sm.labels.name_count,
             rep.height_base);
    gen_surface_notes(ctx, so, recipe);
    cli_note(ctx,
             "terrain layers: %u texture(s) %s_layer<K>_{diffuse,normal,mask}.png for %u "
             "layer(s), %u from Material documents' maps (splat.terrain_layers in %s.json)",
             layer_textures, name, so->sm.labels.name_count, documented, name);
    if (rep.detail_layers)
        cli_note(ctx,
                 "grass: %" PRIu64 " instance(s) in %u detail layer(s) %s_detail<K>.png (%u x %u "
                 "cells, instances per cell%s)",
                 rep.detail_points, rep.detail_layers, name, rep.resolution - 1u,
                 rep.resolution - 1u, rep.detail_clamped ? ", some clamped to 255" : "");
    json_t *u = json_object();
    json_object_set_new(u, "output", cli_json_string(a->unity_dir));
    json_object_set_new(u, "name", cli_json_string(name));
    json_object_set_new(u, "resolution", json_integer(rep.resolution));
    json_t *size = json_array();
    for (int k = 0; k < 3; k++)
        json_array_append_new(size, json_real(rep.tile_size[k]));
    json_object_set_new(u, "tile_size", size);
    json_object_set_new(u, "height_base", json_real(rep.height_base));
    json_object_set_new(u, "splat_maps", json_integer(rep.splat_textures));
    json_object_set_new(u, "layer_textures", json_integer(layer_textures));
    json_object_set_new(u, "layer_documents", json_integer(documented));
    json_object_set_new(u, "surface", gen_surface_json(so, recipe));
    json_object_set_new(u, "detail_layers", json_integer(rep.detail_layers));
    json_object_set_new(u, "detail_instances", json_integer((json_int_t)rep.detail_points));
    json_object_set_new(u, "detail_clamped_cells", json_integer((json_int_t)rep.detail_clamped));
    json_object_set_new(summary, "unity", u);
    if (rep.trees || trees.prototype_count) {
        cli_note(ctx, "trees: %u tree instance(s) of %u prototype(s) in %s_trees.json", rep.trees,
                 trees.prototype_count, name);
        json_object_set_new(u, "tree_count", json_integer(rep.trees));
    }
    if (!gen->has_water) return CLI_EXIT_OK;
    /* The water's meshes and description beside the RAW, in the same write set. */
    trn_unity_water_options wo;
    memset(&wo, 0, sizeof wo);
    wo.name = name;
    memcpy(wo.position, uo.position, sizeof wo.position);
    wo.height_base = rep.height_base;
    wo.writes = uo.writes;
    trn_unity_water_report wr;
    if ((st = trn_unity_export_water(a->unity_dir, &gen->water, &gen->field, &wo, &wr, &e)))
        return cli_fail(ctx, &e);
    cli_note(ctx,
             "water: %u mesh(es) (%s_water_*.obj, placed at the Terrain's position) and "
             "%s.water.json in %s; %u bod%s without water left out",
             wr.meshes, name, name, a->unity_dir, wr.skipped, wr.skipped == 1 ? "y" : "ies");
    json_t *wj = json_object();
    json_object_set_new(wj, "meshes", json_integer(wr.meshes));
    json_object_set_new(wj, "without_water", json_integer(wr.skipped));
    char file[300];
    snprintf(file, sizeof file, "%s.water.json", name);
    json_object_set_new(wj, "description", cli_json_string(file));
    json_object_set_new(u, "water", wj);
    return CLI_EXIT_OK;
}

/* BeamNG terrains are square grids of square cells. */
int gen_check_beamng_shape(cli_ctx *ctx, const trn_recipe *r, const char *what)
{
    const double cx = r->size_x / r->cells_x, cz = r->size_z / r->cells_z;
    if (r->cells_x != r->cells_z || fabs(cx - cz) > 1e-9 * cx)
        return cli_failf(ctx,
                         "%s needs a square grid of square cells; the recipe has %u x %u cells "
                         "of %g x %g",
                         what, r->cells_x, r->cells_z, cx, cz);
    return CLI_EXIT_OK;
}
