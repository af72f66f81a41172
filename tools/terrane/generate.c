/* terrane generate: a recipe into heightmaps, biome maps, a preview and BeamNG levels. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "generate_internal.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane generate RECIPE -o OUT [options]\n"
    "\n"
    "Generate a terrain recipe (a bare recipe object, a Terrain asset document\n"
    "NAME.terrain.json, or a built-in preset's id such as builtin://terrain/basin) and write\n"
    "what is asked: the heightfield, the biome map, a hillshade\n"
    "preview and a complete BeamNG level. The same recipe and seed give the same bytes on any\n"
    "thread count.\n"
    "\n"
    "heightfield formats, chosen by OUT's extension:\n"
    "  .png   16-bit grey, north up, by the one 16-bit rule of convert: --scale, else\n"
    "         --height-range, else --max-height M (metres = value * M / 65536, BeamNG's), else\n"
    "         the lowest height at 0 and the highest at 65535 (metres = min + value * quantum)\n"
    "  .r16   the same values, headerless little-endian, north row first\n"
    "  .r32   float metres, headerless little-endian, north row first (exact)\n"
    "  .ter   BeamNG terrain (version 9) with the biomes as materials, by the same rule:\n"
    "         maxHeight = 65536 x the step, and the height of stored 0 is printed (put it in\n"
    "         the TerrainBlock's position z)\n"
    "  .dat   Stationeers terrain.dat octree: 1 m voxels, the bedrock rows just under the\n"
    "         lowest height (voxel row 0 is printed), the smallest world size that holds it\n"
    "         (MaxDepth 10, 11 or 12), one file ('terrane convert OUT.dat DIR --world NAME'\n"
    "         splits it into the game's Terrain*.dat files; 'terrane stationeers\n"
    "         from-heightfield' has the options)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT           the heightfield (.png, .r16, .r32, .ter or .dat)\n"
    "  --max-height M             metres of the 16-bit range, as above (0 m stored as 0)\n"
    "  --scale SRC_MIN SRC_MAX [DST_MIN DST_MAX]\n"
    "                             store SRC_MIN..SRC_MAX metres as DST_MIN..DST_MAX (default\n"
    "                             0..65535), as gdal_translate -scale\n"
    "  --height-range LO,HI       store LO..HI metres as 0..65535\n"
    "  --biomes OUT.png           biome map, north up: each biome in its recipe colour (RGBA),\n"
    "                             the published water drawn over it (as --preview)\n"
    "  --biome-index              --biomes writes 8-bit biome indices (recipe order) instead\n"
    "  --roles OUT.png            automatic surface roles (ground, grass, rock, cliff, sediment,\n"
    "                             sand, snow, wet_ground, underwater) from slope, flow,\n"
    "                             moisture, water and snow lines, one colour each, north up;\n"
    "                             the legend in the JSON output (docs/roles.md)\n"
    "  --preview OUT.png          multidirectional hillshade preview, north up; with published\n"
    "                             water an RGB picture, each wet sample tinted by its body's\n"
    "                             shallow and deep colours by depth\n"
    "  --export beamng:DIR/levels/NAME\n"
    "                             write a BeamNG level: theTerrain.ter (heights offset by the\n"
    "                             minimum, which goes into the TerrainBlock's position z), one\n"
    "                             TerrainMaterial per surface material used: a biome's own\n"
    "                             material, else the palette's material set binding of the\n"
    "                             sample's surface role, else the biome (named after it,\n"
    "                             placeholder base colour in the biome's or role's colour;\n"
    "                             docs/roles.md), the layer map from them, .terrain.json,\n"
    "                             TerrainBlock and materials file, the palette's grass as\n"
    "                             GroundCover and its shaped trees and rocks as forest items,\n"
    "                             and\n"
    "                             the published water (ocean: the WaterPlane; lakes: WaterBlocks;\n"
    "                             rivers: Rivers); then validates it. Needs a square grid of\n"
    "                             square cells\n"
    "  --scaffold                 with --export beamng: also info.json, a preview, a spawn point\n"
    "                             on a flat dry spot above the sea level, sky, sun, time of day,\n"
    "                             a water plane at the sea level (an ocean body's level when\n"
    "                             there is one) and the editor's groups\n"
    "  --export unity:DIR          write the terrain for Unity's Terrain import into DIR: "
    "NAME.raw\n"
    "                             (16-bit, Windows byte order, heights from the lowest to the\n"
    "                             highest), NAME.json with the import settings, splat maps\n"
    "                             NAME_splat<K>.png from the surface materials (four per RGBA\n"
    "                             map, in the BeamNG export's order), the palette's grass as\n"
    "                             detail layers NAME_detail<K>.png and its other instances as\n"
    "                             trees in NAME_trees.json (docs/unity.md), and the\n"
    "                             published water's surfaces as\n"
    "                             NAME_water_ID.obj with NAME.water.json; NAME is the recipe's\n"
    "                             file name. Needs a square\n"
    "                             grid of 2^n cells (33..4097 samples); both --export kinds may\n"
    "                             be given\n"
    "  --export gltf:DIR          with --tiles: a glTF mesh (.glb) a tile (below)\n"
    "  --texture-size N           pixel size of the level's placeholder textures (default 256)\n"
    "  --tiles N                  out of core: evaluate the graph tile by tile (N samples a\n"
    "                             tile edge, a multiple of 16) and write -o OUT.tif, one\n"
    "                             Cloud-Optimized GeoTIFF with overviews, as tiles finish;\n"
    "                             the same heights as without --tiles.\n"
    "                             Global nodes (drainage, water) still hold the whole grid\n"
    "                             while they run; stream power runs its fine steps tile by\n"
    "                             tile and droplet erosion row band by row band through the\n"
    "                             tile cache (docs/scale.md). With\n"
    "                             --export unity:DIR (N a power of two dividing the grid):\n"
    "                             Unity terrains of N + 1 samples sharing their edges, one\n"
    "                             height scale for all, with splat maps; with --export\n"
    "                             beamng:DIR/levels/NAME (N a power of two, 128..8192,\n"
    "                             dividing the grid): a level NAME_X_Z a tile, the whole\n"
    "                             grid's level cut to it, each validated; with --export\n"
    "                             gltf:DIR (N dividing the grid): NAME_X_Z.glb a tile, the\n"
    "                             whole grid's 'terrane mesh --chunks' chunks, no seams\n"
    "                             (docs/scale.md)\n"
    "  --memory SIZE              with --tiles: refuse up front when one tile with its halos\n"
    "                             (and the whole grids global nodes hold) needs more than SIZE\n"
    "                             (4GiB, 512MiB); the summary reports the peak resident size\n"
    "  --tile-cache DIR           with --tiles: the folder where global nodes' results wait on\n"
    "                             disk, tile by tile, while tiles read them (default: the\n"
    "                             output's folder; removed when the run ends)\n"
    "  --threads N                worker threads (default: all); results never depend on it\n"
    "  --max-work N               work budget of each graph node and of the strokes (default\n"
    "                             1e10 work units, about a droplet step each; docs/graph.md):\n"
    "                             a recipe asking for more stops before anything runs\n"
    "  --max-memory SIZE          memory the graph's node results may hold (default 8GiB;\n"
    "                             4GiB, 512MiB): a larger estimate stops before anything runs\n"
    "  --no-work-limit            no work or memory budget (only for recipes you trust)\n"
    "  --max-placements N         the palette's placement ceiling (default 2000000): the whole\n"
    "                             grid keeps the first N in placement order, --tiles refuses\n"
    "                             a world that places more\n"
    "  --quality final|preview    final (default) or preview: erosion nodes run fewer droplets,\n"
    "                             shorter droplet walks and no thermal pass (same grid, noise\n"
    "                             and drainage), for a quick look; the summary says it is a\n"
    "                             preview, not a final result. Graphs without erosion give the\n"
    "                             same bytes either way\n"
    "  --cache DIR                keep each graph node's result in DIR (created when missing):\n"
    "                             a later run reuses every node whose type, parameters, inputs\n"
    "                             and grid are unchanged. Outputs are the same bytes with or\n"
    "                             without it. Preview results are never written there. Without\n"
    "                             it, results are kept in $XDG_CACHE_HOME/terrane/nodes (else\n"
    "                             ~/.cache/terrane/nodes) within 4 GiB, least recently used\n"
    "                             first out; TERRANE_CACHE=off turns that off for every verb\n"
    "  --no-cache                 keep nothing on disk for this run\n"
    "  --exclusion OUT.png        the exclusion mask painted by exclusion strokes (8-bit grey)\n"
    "  --scatter-exclusions FILE.json\n"
    "                             placements the engine exports leave out: a scene's\n"
    "                             Terrain3D.scatter_exclusions (an entity with\n"
    "                             components.Terrain3D, a Terrain3D object or a bare array of\n"
    "                             keys \"RULE/CX_CZ\" as terrane scatter prints them); the recipe\n"
    "                             and its cache key do not change\n"
    "  --mask NODE[.PIN]=OUT.png  a graph node's mask output as a 16-bit grey PNG (0..1 as\n"
    "                             0..65535, north up), e.g. erode.deposited=deposits.png or\n"
    "                             drain.accumulation=flow.png; repeatable. A water output\n"
    "                             writes its coverage (wet 65535, dry 0): lake.water=wet.png;\n"
    "                             NODE.PIN:depth=OUT.png its depth (surface - ground, 0 where\n"
    "                             dry), the deepest as 65535 and metres = value x the printed\n"
    "                             step\n"
    "  --resolution CXxCZ         generate at another grid than the recipe's (cells) over\n"
    "                             the same world: more detail, the same landscape\n"
    "  --world-size XxZ           ... or over another extent (metres; overrides the\n"
    "                             recipe's size)\n"
    "  --keep-edits               with a grid change: radial edits keep their terrain-local\n"
    "                             positions (protection snapshots refuse: they are tied to\n"
    "                             their grid)\n"
    "  --clear-edits              with a grid change: drop regions, edits and exclusions\n"
    "  --format json              print a summary as JSON (outputs, sea level, cache key,\n"
    "                             timings, samples per biome, quality, the graph's nodes)\n"
    "  -q, --quiet                no progress bar, notes or node report\n"
    "\n"
    "The recipe's graph (recipe.graph; without one, landform -> biome_rules -> terrain_output)\n"
    "is checked first: an error stops here (exit 1) with its file:line:column and node, and\n"
    "nothing is written ('terrane graph check RECIPE' lists every finding). After generating,\n"
    "one line per graph node says what happened to it: evaluated in N s CPU, reused (cost N s),\n"
    "reused from disk (cost N s) or skipped (it does not feed the output, or a comment), and\n"
    "a node's note under it (proposals a budget left out, where a routed river ended, a water\n"
    "body's first leak warning).\n"
    "\n"
    "examples:\n"
    "  terrane generate examples/recipes/island.json -o island.png --preview shade.png\n"
    "  terrane generate builtin://terrain/mountain-range --resolution 1024x1024 -o range.png\n"
    "  terrane generate island.json -o island.r32 --biomes biomes.png\n"
    "  terrane generate island.json --export beamng:out/levels/island --preview shade.png\n"
    "  terrane generate island.json -o island.ter --format json\n"
    "  terrane generate valley.json -o valley.png --cache .terrane-cache\n"
    "  terrane generate valley.json --preview quick.png --quality preview\n"
    "  terrane generate island.json --resolution 1023x1023 --keep-edits \\\n"
    "      --export beamng:levels/island_hd\n";

/* ---- the graph: its check and its per-node report ---- */

static void print_node_reports(cli_ctx *ctx, const trn_generated *gen)
{
    if (ctx->quiet) return;
    cli_note(ctx, "graph (%s quality), %u node%s:",
             gen->quality == TRN_EROSION_PREVIEW ? "preview" : "final", gen->node_count,
             gen->node_count == 1 ? "" : "s");
    for (uint32_t k = 0; k < gen->node_count; k++) {
        const trn_node_report *r = &gen->nodes[k];
        char what[160];
        switch (r->outcome) {
        case TRN_NODE_EVALUATED:
            snprintf(what, sizeof what, "evaluated in %.2f s CPU (%.2f s wall)", r->cpu_seconds,
                     r->wall_seconds);
            break;
        case TRN_NODE_REUSED:
            snprintf(what, sizeof what, "reused (cost %.2f s CPU when evaluated)",
                     r->cached_cpu_seconds);
            break;
        case TRN_NODE_REUSED_DISK:
            snprintf(what, sizeof what, "reused from disk (cost %.2f s CPU when evaluated)",
                     r->cached_cpu_seconds);
            break;
        default:
            snprintf(what, sizeof what, "skipped (does not feed the output)");
            break;
        }
        cli_note(ctx, "  node %s (%s): %s", r->id, r->type, what);
        if (r->note[0]) cli_note(ctx, "    note: %s", r->note);
        if (r->has_ledger)
            cli_note(ctx,
                     "    ledger: eroded %.6g, deposited %.6g, exported %.6g, suspended %.6g "
                     "(sample-height units); %" PRIu64 " droplets, %" PRIu64 " steps",
                     r->ledger.eroded, r->ledger.deposited, r->ledger.exported, r->ledger.suspended,
                     r->ledger.droplets, r->ledger.steps);
    }
}

static json_t *node_reports_json(const trn_generated *gen)
{
    json_t *a = json_array();
    for (uint32_t k = 0; k < gen->node_count; k++) {
        const trn_node_report *r = &gen->nodes[k];
        json_t *o = json_object();
        json_object_set_new(o, "id", cli_json_string(r->id));
        json_object_set_new(o, "type", cli_json_string(r->type));
        if (r->outcome == TRN_NODE_SKIPPED) {
            json_object_set_new(o, "key", json_null());
        } else {
            char hex[17];
            cli_graph_key_hex(r->key, hex);
            json_object_set_new(o, "key", cli_json_string(hex));
        }
        json_object_set_new(o, "outcome", cli_json_string(trn_node_outcome_name(r->outcome)));
        json_object_set_new(o, "cpu_seconds", json_real(r->cpu_seconds));
        json_object_set_new(o, "wall_seconds", json_real(r->wall_seconds));
        json_object_set_new(o, "cached_cpu_seconds", json_real(r->cached_cpu_seconds));
        json_object_set_new(o, "note", r->note[0] ? cli_json_string(r->note) : json_null());
        if (r->has_ledger) {
            json_t *l = json_object();
            json_object_set_new(l, "eroded", json_real(r->ledger.eroded));
            json_object_set_new(l, "deposited", json_real(r->ledger.deposited));
            json_object_set_new(l, "exported", json_real(r->ledger.exported));
            json_object_set_new(l, "suspended", json_real(r->ledger.suspended));
            json_object_set_new(l, "droplets", json_integer((json_int_t)r->ledger.droplets));
            json_object_set_new(l, "steps", json_integer((json_int_t)r->ledger.steps));
            json_object_set_new(o, "ledger", l);
        }
        json_array_append_new(a, o);
    }
    return a;
}

int cli_verb_generate(cli_ctx *ctx, int argc, char **argv)
{
    gen_args a;
    bool help;
    int rc = gen_parse_args(ctx, argc, argv, &a, &help);
    if (help) {
        fputs(help_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    const double t0 = now_s();
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    trn_error e;
    if ((rc = cli_input(ctx, a.recipe_path))) return rc;
    if (trn_recipe_read_source(a.recipe_path, &recipe, &kind, &e)) return cli_fail(ctx, &e);
    /* Staged now, so an output that would replace an input fails before generating. */
    if ((a.out && !(a.out_file = cli_output(ctx, a.out))) ||
        (a.biomes && !(a.biomes_file = cli_output(ctx, a.biomes))) ||
        (a.preview && !(a.preview_file = cli_output(ctx, a.preview))) ||
        (a.exclusion && !(a.exclusion_file = cli_output(ctx, a.exclusion))) ||
        (a.roles && !(a.roles_file = cli_output(ctx, a.roles)))) {
        trn_recipe_dispose(&recipe);
        return CLI_EXIT_FAIL;
    }
    if (kind == TRN_DOCUMENT_TERRAIN_ASSET)
        cli_note(ctx, "%s is a Terrain asset document: generating its recipe", a.recipe_path);
    if (a.cells_x || a.size_x > 0.0) {
        const uint32_t cx = a.cells_x ? a.cells_x : recipe.cells_x;
        const uint32_t cz = a.cells_x ? a.cells_z : recipe.cells_z;
        const double sx = a.size_x > 0.0 ? a.size_x : recipe.size_x;
        const double sz = a.size_x > 0.0 ? a.size_z : recipe.size_z;
        if (trn_recipe_change_grid(&recipe, sx, sz, cx, cz, a.edit_policy, &e)) {
            trn_recipe_dispose(&recipe);
            return cli_fail(ctx, &e);
        }
        cli_note(ctx,
                 "generating at %u x %u cells over %g x %g world units (the recipe file is "
                 "not changed)",
                 cx, cz, sx, sz);
    } else if (a.edit_policy != TRN_EDITS_REFUSE) {
        cli_note(ctx, "--keep-edits / --clear-edits only matter with --resolution or --world-size");
    }
    if ((a.format == FMT_TER && (rc = gen_check_beamng_shape(ctx, &recipe, "a .ter"))) ||
        (a.export_dir && (rc = gen_check_beamng_shape(ctx, &recipe, "--export beamng"))) ||
        (a.unity_dir && !a.tiles && (rc = gen_check_unity_shape(ctx, &recipe)))) {
        trn_recipe_dispose(&recipe);
        return rc;
    }

    if ((rc = cli_graph_gate(ctx, "generate", a.recipe_path, &recipe, kind))) {
        trn_recipe_dispose(&recipe);
        return rc;
    }
    if (a.tiles) {
        rc = generate_tiled(ctx, &a, &recipe, t0);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    cli_keep_freed_memory();
    if (a.cache_dir && a.no_cache) {
        trn_recipe_dispose(&recipe);
        return cli_usage_error(ctx, "--cache and --no-cache exclude each other");
    }
    trn_graph_cache *cache = NULL;
    char default_dir[4096] = "";
    if (!a.cache_dir && !a.no_cache) cache = cli_cache_default(default_dir, sizeof default_dir);
    /* --mask reads node outputs after generation: keep the results in memory for that. */
    if (!cache && (a.cache_dir || a.mask_count) && trn_graph_cache_new(a.cache_dir, 0, &cache, &e)) {
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    /* The engine exports carry the palette's instances: it is placed during generation; a
     * graph's Scatter Palette node needs it to evaluate at all. */
    placements pl;
    memset(&pl, 0, sizeof pl);
    if (recipe.palette_json && (a.export_dir || a.unity_dir || cli_graph_places_palette(&recipe))) {
        if ((rc = cli_palette_load(ctx, a.recipe_path, &recipe, &pl.palette, &pl.set))) {
            trn_graph_cache_free(cache);
            trn_recipe_dispose(&recipe);
            return rc;
        }
        pl.loaded = true;
    }
    /* The scene's suppression list, read before generating so a bad file fails fast. */
    if ((rc = gen_exclusions_read(ctx, &a, &pl))) {
        gen_placements_dispose(&pl);
        trn_graph_cache_free(cache);
        trn_recipe_dispose(&recipe);
        return rc;
    }
    trn_generate_options go = {.threads = a.threads,
                               .quality = a.quality,
                               .cache = cache,
                               .max_work = a.max_work,
                               .max_memory = a.max_memory,
                               .max_placements = a.max_placements,
                               .palette = pl.loaded ? &pl.palette : NULL,
                               /* Roles choose the exports' materials where the set binds any. */
                               .roles = a.roles != NULL ||
                                        (pl.loaded && gen_set_binds_any(&pl.set) &&
                                         (a.export_dir || a.unity_dir))};
    trn_generated gen;
    trn_status st = trn_recipe_generate(&recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        gen_placements_dispose(&pl);
        trn_graph_cache_free(cache);
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    if (a.scatter_exclusions) {
        size_t suppressed = 0, unmatched = 0;
        st = trn_instances_suppress(&pl.palette, &gen.instances, &pl.suppress, &suppressed,
                                    &unmatched, &e);
        if (st) {
            trn_generated_dispose(&gen);
            gen_placements_dispose(&pl);
            trn_graph_cache_free(cache);
            trn_recipe_dispose(&recipe);
            return cli_fail(ctx, &e);
        }
        gen_exclusions_note(ctx, &a, suppressed, unmatched);
    }
    print_node_reports(ctx, &gen);
    const double t1 = now_s();
    for (uint32_t k = 0; k < gen.diagnostic_count && !ctx->quiet; k++)
        cli_fprintf(stderr, "terrane generate: warning: %s\n", gen.diagnostics[k]);
    float lo, hi;
    trn_field_range(&gen.field, &lo, &hi);
    uint64_t counts[256];
    memset(counts, 0, sizeof counts);
    const size_t n = trn_field_sample_count(&gen.field);
    for (size_t k = 0; k < n; k++)
        counts[gen.biomes.values[k]]++;

    json_t *summary = json_object();
    json_t *files = json_array();
    height_mapping hm;
    memset(&hm, 0, sizeof hm);
    rc = CLI_EXIT_OK;
    surface_out *so = NULL;
    if (a.export_dir || a.unity_dir || (a.out && a.format == FMT_TER))
        rc = gen_assign_surface(ctx, &recipe, &gen, pl.loaded ? &pl.set : NULL, &so);
    if (rc) {
        /* said by gen_assign_surface */
    } else if (a.out && a.format == FMT_DAT) {
        /* The octree writer takes a loaded terrain: a view of the generated field. */
        cli_terrain view;
        memset(&view, 0, sizeof view);
        view.field = gen.field;
        /* Voxel row 0 under the bedrock rows below the lowest height: nothing is clamped. */
        trn_stationeers_field_options fo;
        trn_stationeers_field_options_default(&fo);
        fo.base = floor((double)lo) - (double)fo.bedrock_layers * fo.voxel_size;
        rc = cli_stationeers_write_field(ctx, &view, a.out_file, &fo);
        if (!rc) gen_add_file(files, a.out, "stationeers octree");
    } else if (a.out && a.format != FMT_TER) {
        rc = gen_write_height_image(ctx, &a, &gen, &hm);
        if (!rc) gen_add_file(files, a.out, "heightfield");
    } else if (a.out) {
        rc = gen_write_ter(ctx, &a, &gen, so, &hm);
        if (!rc) gen_add_file(files, a.out, "heightfield");
    }
    if (!rc && a.biomes) {
        rc = gen_write_biomes(ctx, &a, &recipe, &gen);
        if (!rc) gen_add_file(files, a.biomes, a.biome_index ? "biome indices" : "biome colours");
    }
    if (!rc && a.preview) {
        rc = gen_write_preview(ctx, &a, &gen);
        if (!rc) gen_add_file(files, a.preview, "preview");
    }
    if (!rc && a.exclusion) {
        rc = gen_write_exclusion(ctx, &a, &gen);
        if (!rc) gen_add_file(files, a.exclusion, "exclusion mask");
    }
    json_t *legend = NULL;
    if (!rc && a.roles) {
        rc = gen_write_roles(ctx, &a, &gen, &legend);
        if (!rc) gen_add_file(files, a.roles, "surface roles");
        /* The legend goes with the file's entry: role, colour, samples. */
        json_t *last = json_array_get(files, json_array_size(files) - 1);
        if (!rc && last && legend) json_object_set(last, "legend", legend);
    }
    json_decref(legend);
    level_export lx;
    memset(&lx, 0, sizeof lx);
    if (!rc && a.export_dir) {
        rc = gen_export_level(ctx, &a, &recipe, &pl, &gen, so, &lx);
        if (!rc) gen_add_file(files, a.export_dir, "beamng level");
    }
    if (!rc && a.unity_dir) {
        rc = gen_export_unity(ctx, &a, &recipe, &pl, &gen, so, summary);
        if (!rc) gen_add_file(files, a.unity_dir, "unity terrain");
    }
    if (!rc && a.mask_count)
        rc = gen_write_masks(ctx, &a, &recipe, pl.loaded ? &pl.palette : NULL, cache, files);
    /* Every output lands together, then the level is checked as written. */
    if (!rc) rc = cli_commit(ctx);
    if (!rc && lx.staged) rc = gen_validate_level(ctx, &a, &recipe, &gen, so, &lx, summary);
    /* The results live in gen; the directory keeps what later runs reuse. */
    trn_graph_cache_free(cache);
    cache = NULL;
    const double t2 = now_s();

    if (!rc) {
        cli_note(ctx, "sea level %.3f (%s), heights %.3f..%.3f m, cache key %016" PRIx64,
                 gen.sea_level,
                 gen.sea_level_source == TRN_SEA_LEVEL_EXPLICIT ? "explicit" : "derived",
                 (double)lo, (double)hi, gen.cache_key);
        cli_note(ctx, "generated in %.2f s, wrote in %.2f s", t1 - t0, t2 - t1);
        if (gen.quality == TRN_EROSION_PREVIEW)
            cli_note(ctx, "quality: PREVIEW (fewer erosion droplets, shorter walks, no thermal "
                          "pass): not a final result; generate without --quality preview for "
                          "the final terrain");
    }
    if (!rc && ctx->json) {
        char key[17];
        snprintf(key, sizeof key, "%016" PRIx64, gen.cache_key);
        json_object_set_new(summary, "input", cli_json_string(a.recipe_path));
        json_object_set_new(
            summary, "input_format",
            json_string(kind == TRN_DOCUMENT_TERRAIN_ASSET ? "terrain_asset" : "recipe"));
        json_object_set_new(summary, "output_details", files);
        files = NULL;
        json_t *size = json_array();
        json_array_append_new(size, json_real(recipe.size_x));
        json_array_append_new(size, json_real(recipe.size_z));
        json_object_set_new(summary, "size", size);
        json_t *res = json_array();
        json_array_append_new(res, json_integer(recipe.cells_x));
        json_array_append_new(res, json_integer(recipe.cells_z));
        json_object_set_new(summary, "cells", res);
        json_object_set_new(summary, "samples", json_integer((json_int_t)n));
        json_object_set_new(summary, "seed", json_integer((json_int_t)recipe.seed));
        json_object_set_new(summary, "sea_level", json_real(gen.sea_level));
        json_object_set_new(summary, "sea_level_source",
                            cli_json_string(gen.sea_level_source == TRN_SEA_LEVEL_EXPLICIT
                                                ? "explicit"
                                                : "derived"));
        json_object_set_new(summary, "cache_key", cli_json_string(key));
        json_object_set_new(
            summary, "quality",
            cli_json_string(gen.quality == TRN_EROSION_PREVIEW ? "preview" : "final"));
        json_object_set_new(summary, "final", json_boolean(gen.quality != TRN_EROSION_PREVIEW));
        if (a.cache_dir || default_dir[0])
            json_object_set_new(summary, "cache_dir",
                                cli_json_string(a.cache_dir ? a.cache_dir : default_dir));
        json_object_set_new(summary, "nodes", node_reports_json(&gen));
        json_t *hr = json_object();
        json_object_set_new(hr, "min", json_real(lo));
        json_object_set_new(hr, "max", json_real(hi));
        json_object_set_new(summary, "height_range", hr);
        if (a.out && a.format != FMT_R32 && a.format != FMT_DAT)
            json_object_set_new(summary, "heights", gen_mapping_json(&hm));
        json_t *biomes = json_array();
        for (uint32_t b = 0; b < recipe.biome_count; b++) {
            json_t *o = json_object();
            json_object_set_new(o, "name", cli_json_string(recipe.biomes[b].name));
            json_object_set_new(o, "index", json_integer(b));
            json_object_set_new(o, "samples", json_integer((json_int_t)counts[b]));
            json_array_append_new(biomes, o);
        }
        json_object_set_new(summary, "biomes", biomes);
        json_t *diags = json_array();
        for (uint32_t k = 0; k < gen.diagnostic_count; k++)
            json_array_append_new(diags, cli_json_string(gen.diagnostics[k]));
        json_object_set_new(summary, "diagnostics", diags);
        json_t *tm = json_object();
        json_object_set_new(tm, "generate_s", json_real(t1 - t0));
        json_object_set_new(tm, "write_s", json_real(t2 - t1));
        json_object_set_new(tm, "total_s", json_real(t2 - t0));
        json_object_set_new(summary, "timings", tm);
        cli_print_json(summary);
        summary = NULL;
    }
    json_decref(files);
    json_decref(summary);
    gen_surface_out_free(so);
    gen_placements_dispose(&pl);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return rc;
}
