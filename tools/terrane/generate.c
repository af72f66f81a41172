/* terrane generate: a recipe into heightmaps, biome maps, a preview and BeamNG levels. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "cli.h"
#include "fmt_geotiff.h"
#include "fmt_stationeers.h"
#include "level_export.h"
#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/beamng_forest.h"
#include "terrane/beamng_water.h"
#include "terrane/unity.h"
#include "terrane/unity_water.h"
#include "terrane/generate.h"
#include "terrane/geotiff.h"
#include "terrane/graph.h"
#include "terrane/layers.h"
#include "terrane/image.h"
#include "terrane/recipe.h"
#include "terrane/render.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"

static const char *const help_text =
    "usage: terrane generate RECIPE -o OUT [options]\n"
    "\n"
    "Generate a terrain recipe (a bare recipe object or a Terrain asset document\n"
    "NAME.terrain.json) and write what is asked: the heightfield, the biome map, a hillshade\n"
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
    "  --texture-size N           pixel size of the level's placeholder textures (default 256)\n"
    "  --tiles N                  out of core: evaluate the graph tile by tile (N samples a\n"
    "                             tile edge, a multiple of 16) and write -o OUT.tif, one tiled\n"
    "                             BigTIFF, as tiles finish; the same heights as without --tiles.\n"
    "                             Global nodes (drainage, erosion, stream power, water) still\n"
    "                             hold the whole grid (docs/scale.md)\n"
    "  --memory SIZE              with --tiles: refuse up front when one tile with its halos\n"
    "                             (and the whole grids global nodes hold) needs more than SIZE\n"
    "                             (4GiB, 512MiB); the summary reports the peak resident size\n"
    "  --threads N                worker threads (default: all); results never depend on it\n"
    "  --max-work N               work budget of each graph node and of the strokes (default\n"
    "                             1e10 work units, about a droplet step each; docs/graph.md):\n"
    "                             a recipe asking for more stops before anything runs\n"
    "  --no-work-limit            no work budget (only for recipes you trust)\n"
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
    "  terrane generate island.json -o island.r32 --biomes biomes.png\n"
    "  terrane generate island.json --export beamng:out/levels/island --preview shade.png\n"
    "  terrane generate island.json -o island.ter --format json\n"
    "  terrane generate valley.json -o valley.png --cache .terrane-cache\n"
    "  terrane generate valley.json --preview quick.png --quality preview\n"
    "  terrane generate island.json --resolution 1023x1023 --keep-edits \\\n"
    "      --export beamng:levels/island_hd\n";

typedef enum height_format { FMT_NONE, FMT_PNG, FMT_R16, FMT_R32, FMT_TER, FMT_DAT } height_format;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

static height_format format_of(const char *path)
{
    if (ends_with(path, ".png")) return FMT_PNG;
    if (ends_with(path, ".r16")) return FMT_R16;
    if (ends_with(path, ".r32")) return FMT_R32;
    if (ends_with(path, ".ter")) return FMT_TER;
    if (ends_with(path, ".dat")) return FMT_DAT;
    return FMT_NONE;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint8_t unit_byte(double v)
{
    if (!(v > 0.0)) return 0;
    if (v >= 1.0) return 255;
    return (uint8_t)lround(v * 255.0);
}

typedef struct gen_args {
    const char *recipe_path, *out, *biomes, *preview, *export_dir, *exclusion, *roles;
    const char *unity_dir;          /* --export unity:DIR */
    const char *scatter_exclusions; /* --scatter-exclusions FILE.json */
    /* --mask NODE[.PIN]=FILE.png: a graph node's mask output written as a 16-bit PNG. */
    const char *masks[16];
    uint32_t mask_count;
    const char *cache_dir; /* --cache DIR: graph node results kept between runs */
    bool no_cache;         /* --no-cache: not even the platform cache directory */
    trn_erosion_quality quality;
    uint64_t max_work; /* --max-work N / --no-work-limit; 0 = the library's default budget */
    height_format format;
    bool biome_index, has_max_height;
    bool scaffold; /* --scaffold: the BeamNG level opens and drives */
    double max_height;
    uint32_t texture_size;
    int threads;
    /* Grid overrides: generate at another resolution or size than the recipe's. */
    uint32_t cells_x, cells_z;
    double size_x, size_z;
    trn_edit_policy edit_policy;
    cli_scale_options scale; /* --scale, --height-range: the one 16-bit rule */
    /* Where -o, --biomes, --preview and --exclusion are written: their staged temporaries,
     * which land together with every other output when the run succeeds. */
    const char *out_file, *biomes_file, *preview_file, *exclusion_file, *roles_file;
    uint32_t tiles;  /* --tiles N: tile by tile, samples per tile edge; 0 = whole grid */
    uint64_t memory; /* --memory SIZE: the budget --tiles must fit in; 0 = none */
} gen_args;

/* How heights became stored values. */
typedef struct height_mapping {
    double base, quantum, max_height; /* metres = base + value * quantum */
    uint64_t clamped;
    uint32_t levels; /* distinct 16-bit values used */
    const char *rule;
} height_mapping;

static json_t *mapping_json(const height_mapping *m)
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

static void add_file(json_t *files, const char *path, const char *what)
{
    json_t *f = json_object();
    json_object_set_new(f, "path", cli_json_string(path));
    json_object_set_new(f, "what", cli_json_string(what));
    json_array_append_new(files, f);
}

/* ---- heightfield images ---- */

/* The one 16-bit rule convert uses (--scale, --height-range, --max-height, else the lowest height
 * at 0 and the highest at 65535); clamped samples and few levels are warned about. */
static int choose_mapping(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
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

static int write_height_image(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
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
        int rc = choose_mapping(ctx, a, gen, a->out, m);
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

static int write_biomes(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
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

static int write_preview(cli_ctx *ctx, const gen_args *a, const trn_generated *gen)
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
static int write_roles(cli_ctx *ctx, const gen_args *a, const trn_generated *gen, json_t **legend)
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
static int write_exclusion(cli_ctx *ctx, const gen_args *a, const trn_generated *gen)
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
static int write_masks(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
                       const trn_palette *palette, trn_graph_cache *cache, json_t *files)
{
    trn_graph graph;
    trn_error e;
    if (trn_graph_from_recipe(recipe, &graph, &e)) return cli_fail(ctx, &e);
    trn_graph_options go = {a->threads, a->quality, cache, a->max_work, palette};
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
            add_file(files, path, "water coverage");
        } else {
            cli_note(ctx, "wrote %s (mask %s, 0..1 as 0..65535, north up)", path, spec);
            add_file(files, path, "mask");
        }
    }
    trn_graph_run_free(run);
    return rc;
}

/* ---- BeamNG ---- */

/* The surface material of every sample (docs/roles.md, "Into the engines"), with engine names:
 * what the .ter's layer map, the level's TerrainMaterials and Unity's splat layers are made of. */
typedef struct surface_out {
    bool bound; /* the palette's material set binds a role: its fallbacks are worth reporting */
    trn_surface_materials sm;
    char names[TRN_SURFACE_MATERIALS_MAX][TRN_SURFACE_NAME_MAX];
} surface_out;

static bool set_binds_any(const trn_material_set *set)
{
    for (uint32_t r = 0; r < TRN_ROLE_COUNT; r++)
        if (set->roles[r] && set->roles[r][0]) return true;
    return false;
}

static void surface_out_free(surface_out *so)
{
    if (!so) return;
    trn_surface_materials_dispose(&so->sm);
    free(so);
}

/* Assign the materials: explicit biome material > role binding > biome tint. */
static int assign_surface(cli_ctx *ctx, const trn_recipe *recipe, const trn_generated *gen,
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
    in.set = set && set_binds_any(set) ? set : NULL;
    so->bound = in.set != NULL;
    trn_error e;
    if (trn_surface_materials_assign(&in, &so->sm, &e) ||
        trn_surface_materials_engine_names(&so->sm, so->names, &e)) {
        surface_out_free(so);
        return cli_fail(ctx, &e);
    }
    *out = so;
    return CLI_EXIT_OK;
}

/* Say which materials were written and why, and where the biome tint stood in for a role. */
static void surface_notes(cli_ctx *ctx, const surface_out *so, const trn_recipe *recipe)
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
static json_t *surface_json(const surface_out *so, const trn_recipe *recipe)
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
static void surface_rgb(const surface_out *so, const trn_recipe *recipe, uint32_t k, uint8_t rgb[3])
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

static trn_status build_ter(const trn_generated *gen, const surface_out *so,
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

static int write_ter(cli_ctx *ctx, const gen_args *a, const trn_generated *gen,
                     const surface_out *so, height_mapping *m)
{
    int rc = choose_mapping(ctx, a, gen, a->out, m);
    if (rc) return rc;
    trn_ter ter;
    trn_error e;
    trn_status st = build_ter(gen, so, m, &ter, &e);
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
        surface_rgb(so, recipe, b, rgb);
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

/* A level staged by export_level, validated once every output has landed. */
typedef struct level_export {
    trn_beamng_level_result res;
    uint32_t size, materials, tinted;
    double square_size;
    height_mapping mapping;
    bool staged;
    bool water; /* the published water went in too (water_res) */
    trn_beamng_water_result water_res;
    bool forest; /* the palette's instances went in as forest items (forest_res) */
    trn_beamng_forest_result forest_res;
} level_export;

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

/* The recipe's palette and material set, loaded before generating: the generation places the
 * palette once (trn_generated.instances) for every engine export that carries it. */
typedef struct placements {
    bool loaded;
    trn_palette palette;
    trn_material_set set;
} placements;

static void placements_dispose(placements *p)
{
    trn_palette_dispose(&p->palette);
    trn_material_set_dispose(&p->set);
    memset(p, 0, sizeof *p);
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

static int export_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                        const trn_generated *gen, const surface_out *so, level_export *lx)
{
    height_mapping *m = &lx->mapping;
    int rc = choose_mapping(ctx, a, gen, a->export_dir, m);
    if (rc) return rc;
    trn_write_set *ws = cli_write_set(ctx);
    if (!ws) return CLI_EXIT_FAIL;
    trn_ter ter;
    trn_error e;
    trn_status st = build_ter(gen, so, m, &ter, &e);
    if (st) return cli_fail(ctx, &e);
    trn_beamng_level_options lo_opt;
    memset(&lo_opt, 0, sizeof lo_opt);
    lo_opt.level_dir = a->export_dir;
    lo_opt.max_height = m->max_height;
    lo_opt.square_size = gen->field.size_x / gen->field.cells_x;
    lo_opt.textures.base_size = lo_opt.textures.macro_size = lo_opt.textures.detail_size =
        a->texture_size;
    lo_opt.position_z = m->base; /* stored 0 is the lowest height */
    lo_opt.scaffold.enabled = a->scaffold;
    /* Only a sea level the recipe states is water the level should have. */
    lo_opt.scaffold.has_sea_level = gen->sea_level_source == TRN_SEA_LEVEL_EXPLICIT;
    lo_opt.scaffold.sea_level = gen->sea_level;
    /* An unbounded ocean body is the level's sea (its WaterPlane): the spawn point keeps dry. */
    for (uint32_t b = 0; gen->has_water && b < gen->water.body_count; b++)
        if (gen->water.bodies[b].kind == TRN_WATER_OCEAN && !gen->water.bodies[b].boundary_count) {
            lo_opt.scaffold.has_sea_level = true;
            lo_opt.scaffold.sea_level = gen->water.bodies[b].level;
            break;
        }
    /* A biome's "groundmodel" decides its materials' surface physics; a role's material takes
     * the role's. */
    const uint32_t mats = so->sm.labels.name_count;
    trn_beamng_surface *surfaces = calloc(mats ? mats : 1, sizeof *surfaces);
    if (!surfaces) {
        trn_ter_dispose(&ter);
        return cli_failf(ctx, "out of memory");
    }
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
    trn_beamng_level_result *res = &lx->res;
    memset(res, 0, sizeof *res);
    st = trn_beamng_level_write_terrain(&ter, &lo_opt, res, cli_progress, ctx, &e);
    free(surfaces);
    lx->size = ter.size;
    lx->materials = ter.material_count;
    lx->square_size = lo_opt.square_size;
    trn_ter_dispose(&ter);
    cli_progress_end(ctx);
    if (!st) st = tint_placeholders(ctx, res, recipe, so, &lx->tinted, &e);
    if (!st) st = export_level_water(a, gen, ws, lx, &e);
    if (st) return cli_fail(ctx, &e);
    if ((rc = export_level_forest(ctx, a, recipe, gen, so, ws, lx, pl))) return rc;
    lx->staged = true;
    return CLI_EXIT_OK;
}

/* After the level's files landed: say what was written and check it as a modder would. */
static int validate_level(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe,
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
    surface_notes(ctx, so, recipe);
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

    trn_findings findings = {NULL, 0, 0};
    trn_error e;
    trn_status st = trn_beamng_validate(a->export_dir, NULL, &findings, NULL, NULL, &e);
    if (st) {
        trn_findings_dispose(&findings);
        return cli_fail(ctx, &e);
    }
    const size_t errors = trn_findings_count(&findings, TRN_SEVERITY_ERROR);
    const size_t warnings = trn_findings_count(&findings, TRN_SEVERITY_WARNING) - errors;
    for (size_t k = 0; k < findings.count; k++) {
        const trn_finding *f = &findings.items[k];
        if (f->severity == TRN_SEVERITY_INFO || (ctx->quiet && f->severity < TRN_SEVERITY_ERROR))
            continue;
        if (!pow2 && strcmp(f->check, "ter-size") == 0) continue; /* said above, with the fix */
        cli_fprintf(stderr, "terrane generate: validate %s [%s]: %s\n",
                    trn_severity_name(f->severity), f->check, f->message);
    }
    cli_note(ctx, "validated %s: %zu error(s), %zu warning(s)", a->export_dir, errors, warnings);
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
    json_object_set_new(lvl, "heights", mapping_json(m));
    json_object_set_new(lvl, "materials_added", json_integer(res->materials_added));
    json_object_set_new(lvl, "textures_tinted", json_integer(lx->tinted));
    json_object_set_new(lvl, "surface", surface_json(so, recipe));
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
    trn_findings_dispose(&findings);
    if (errors)
        return cli_failf(ctx, "the level %s has %zu validation error(s) (listed above)",
                         a->export_dir, errors);
    return CLI_EXIT_OK;
}

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

/* ---- arguments ---- */

/* --max-work N: a whole number of work units >= 1, written plainly or as 5e10. */
static bool parse_max_work(cli_ctx *ctx, const char *v, uint64_t *out)
{
    double d;
    if (!cli_parse_double(ctx, "--max-work", v, &d)) return false;
    if (!(d >= 1.0 && d <= 1.8e19) || floor(d) != d) {
        cli_usage_error(
            ctx, "--max-work takes a whole number of work units from 1 to 1.8e19, not '%s'", v);
        return false;
    }
    *out = (uint64_t)d;
    return true;
}

/* A byte count: a number with an optional KiB, MiB, GiB (powers of 1024) or KB, MB, GB. */
static bool parse_memory(cli_ctx *ctx, const char *v, uint64_t *out)
{
    char *end = NULL;
    const double n = strtod(v, &end);
    double unit = 1.0;
    if (end && *end) {
        static const struct {
            const char *suffix;
            double unit;
        } units[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                     {"KB", 1e3},     {"MB", 1e6},        {"GB", 1e9},
                     {"B", 1.0}};
        unit = 0.0;
        for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
            if (strcmp(end, units[k].suffix) == 0) unit = units[k].unit;
    }
    if (!end || end == v || !(unit > 0.0) || !(n > 0.0) || !isfinite(n) || n * unit > 1e18) {
        cli_usage_error(ctx, "--memory takes a size such as 4GiB, 512MiB or 2000000000, not '%s'",
                        v);
        return false;
    }
    *out = (uint64_t)(n * unit);
    return true;
}

static int parse_args(cli_ctx *ctx, int argc, char **argv, gen_args *a, bool *help)
{
    memset(a, 0, sizeof *a);
    *help = false;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            *help = true;
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(arg, "--biome-index") == 0) {
            a->biome_index = true;
            continue;
        }
        if (strcmp(arg, "--no-work-limit") == 0) {
            a->max_work = TRN_WORK_UNLIMITED;
            continue;
        }
        if (strcmp(arg, "--scaffold") == 0) {
            a->scaffold = true;
            continue;
        }
        if (strcmp(arg, "--no-cache") == 0) {
            a->no_cache = true;
            continue;
        }
        int sc = cli_scale_option(ctx, argc, argv, &i, &a->scale);
        if (sc < 0) return CLI_EXIT_USAGE;
        if (sc > 0) continue;
        if (strcmp(arg, "--keep-edits") == 0 || strcmp(arg, "--clear-edits") == 0) {
            const trn_edit_policy p = arg[2] == 'k' ? TRN_EDITS_KEEP : TRN_EDITS_CLEAR;
            if (a->edit_policy != TRN_EDITS_REFUSE && a->edit_policy != p)
                return cli_usage_error(ctx, "--keep-edits and --clear-edits exclude each other");
            a->edit_policy = p;
            continue;
        }
        if (arg[0] != '-' || !arg[1]) {
            if (a->recipe_path)
                return cli_usage_error(ctx, "takes one recipe; unexpected '%s'", arg);
            a->recipe_path = arg;
            continue;
        }
        static const char *const names[] = {"-o",
                                            "--output",
                                            "--max-height",
                                            "--biomes",
                                            "--preview",
                                            "--export",
                                            "--threads",
                                            "--exclusion",
                                            "--texture-size",
                                            "--resolution",
                                            "--world-size",
                                            "--quality",
                                            "--cache",
                                            "--mask",
                                            "--roles",
                                            "--scatter-exclusions",
                                            "--tiles",
                                            "--memory",
                                            NULL};
        bool known = strcmp(arg, "--max-work") == 0;
        for (const char *const *n = names; *n && !known; n++)
            known = strcmp(arg, *n) == 0;
        if (!known) return cli_usage_error(ctx, "unknown option '%s'", arg);
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        const char **slot = NULL;
        if (strcmp(arg, "--mask") == 0) {
            const char *eq = strchr(v, '=');
            if (!eq || eq == v || !ends_with(eq + 1, ".png"))
                return cli_usage_error(ctx,
                                       "--mask takes NODE[.PIN]=FILE.png, or "
                                       "NODE.PIN:depth=FILE.png for a water pin's depth (e.g. "
                                       "erode.deposited=deposits.png or "
                                       "lake.water:depth=depth.png), not '%s'",
                                       v);
            if (a->mask_count == sizeof a->masks / sizeof a->masks[0])
                return cli_usage_error(ctx, "at most 16 --mask outputs");
            a->masks[a->mask_count++] = v;
            continue;
        }
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0)
            slot = &a->out;
        else if (strcmp(arg, "--biomes") == 0)
            slot = &a->biomes;
        else if (strcmp(arg, "--preview") == 0)
            slot = &a->preview;
        else if (strcmp(arg, "--roles") == 0)
            slot = &a->roles;
        else if (strcmp(arg, "--export") == 0)
            slot = strncmp(v, "unity:", 6) == 0 ? &a->unity_dir : &a->export_dir;
        else if (strcmp(arg, "--exclusion") == 0)
            slot = &a->exclusion;
        else if (strcmp(arg, "--cache") == 0)
            slot = &a->cache_dir;
        else if (strcmp(arg, "--scatter-exclusions") == 0)
            slot = &a->scatter_exclusions;
        if (slot) {
            if (*slot)
                return cli_usage_error(ctx, "%s is given twice ('%s' and '%s')", arg, *slot, v);
            *slot = v;
        } else if (strcmp(arg, "--resolution") == 0) {
            if (!cli_parse_size(ctx, arg, v, &a->cells_x, &a->cells_z)) return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--world-size") == 0) {
            char *end = NULL;
            a->size_x = strtod(v, &end);
            if (end && (*end == 'x' || *end == 'X')) a->size_z = strtod(end + 1, &end);
            if (!end || *end || !(a->size_x > 0) || !(a->size_z > 0) || !isfinite(a->size_x) ||
                !isfinite(a->size_z))
                return cli_usage_error(ctx,
                                       "--world-size expects XxZ in world units such as "
                                       "2048x2048, got '%s'",
                                       v);
        } else if (strcmp(arg, "--tiles") == 0) {
            if (!cli_parse_u32(ctx, arg, v, &a->tiles)) return CLI_EXIT_USAGE;
            if (a->tiles < 16 || a->tiles > 65536 || a->tiles % 16)
                return cli_usage_error(ctx,
                                       "--tiles takes samples per tile edge, 16 to 65536 in "
                                       "steps of 16 (the GeoTIFF's tiles), not %u",
                                       a->tiles);
        } else if (strcmp(arg, "--memory") == 0) {
            if (!parse_memory(ctx, v, &a->memory)) return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--max-work") == 0) {
            if (!parse_max_work(ctx, v, &a->max_work)) return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--quality") == 0) {
            if (strcmp(v, "final") == 0)
                a->quality = TRN_EROSION_FINAL;
            else if (strcmp(v, "preview") == 0)
                a->quality = TRN_EROSION_PREVIEW;
            else
                return cli_usage_error(ctx, "--quality takes 'final' or 'preview', not '%s'", v);
        } else if (strcmp(arg, "--max-height") == 0) {
            if (!cli_parse_positive(ctx, arg, v, &a->max_height)) return CLI_EXIT_USAGE;
            a->has_max_height = true;
        } else if (strcmp(arg, "--threads") == 0) {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 1024)
                return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
            a->threads = (int)t;
        } else {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 8192 || (t & (t - 1u)))
                return cli_usage_error(
                    ctx, "--texture-size must be a power of two from 1 to 8192, not %u", t);
            a->texture_size = t;
        }
    }
    if (!a->recipe_path) return cli_usage_error(ctx, "needs a recipe (a .json file)");
    if (!a->out && !a->biomes && !a->preview && !a->export_dir && !a->exclusion && !a->unity_dir &&
        !a->roles && !a->mask_count)
        return cli_usage_error(ctx,
                               "nothing to write: give -o OUT (.png, .r16, .r32, .ter or .dat), "
                               "--biomes, --preview, --roles, --exclusion, --mask or --export");
    if (a->export_dir) {
        if (strncmp(a->export_dir, "beamng:", 7) != 0 || !a->export_dir[7])
            return cli_usage_error(ctx,
                                   "--export takes beamng:DIR/levels/NAME (the level folder) or "
                                   "unity:DIR, not '%s'",
                                   a->export_dir);
        a->export_dir += 7;
    }
    if (a->scaffold && !a->export_dir)
        return cli_usage_error(ctx, "--scaffold builds a BeamNG level: give --export "
                                    "beamng:DIR/levels/NAME");
    if (a->unity_dir) {
        if (!a->unity_dir[6])
            return cli_usage_error(ctx, "--export unity:DIR needs the folder to write into");
        a->unity_dir += 6;
    }
    /* Outputs never overwrite each other (the run's input guard keeps them off the recipe). */
    const char *outs[8] = {a->out,       a->biomes,    a->preview,   a->export_dir,
                           a->exclusion, a->cache_dir, a->unity_dir, a->roles};
    for (int k = 0; k < 8; k++) {
        if (!outs[k]) continue;
        for (int l = 0; l < k; l++)
            if (outs[l] && cli_same_file(outs[k], outs[l]))
                return cli_usage_error(ctx, "two outputs name the same file: %s", outs[k]);
    }
    if (a->memory && !a->tiles)
        return cli_usage_error(ctx, "--memory is the budget of a tiled run: give --tiles N too");
    if (a->tiles) {
        if (!a->out || !(ends_with(a->out, ".tif") || ends_with(a->out, ".tiff")))
            return cli_usage_error(ctx, "--tiles writes one tiled BigTIFF: give -o OUT.tif");
        if (a->biomes || a->preview || a->export_dir || a->exclusion || a->unity_dir ||
            a->roles || a->mask_count || a->cache_dir)
            return cli_usage_error(ctx, "--tiles writes -o OUT.tif only (no --biomes, "
                                        "--preview, --roles, --exclusion, --mask, --cache or "
                                        "--export)");
        return CLI_EXIT_OK;
    }
    if (a->out && (a->format = format_of(a->out)) == FMT_NONE)
        return cli_usage_error(ctx,
                               "cannot tell the heightfield format of '%s': name it .png, .r16, "
                               ".r32, .ter or .dat",
                               a->out);
    if (a->biomes && !ends_with(a->biomes, ".png"))
        return cli_usage_error(ctx, "--biomes writes a PNG; name it .png, not '%s'", a->biomes);
    if (a->preview && !ends_with(a->preview, ".png"))
        return cli_usage_error(ctx, "--preview writes a PNG; name it .png, not '%s'", a->preview);
    if (a->roles && !ends_with(a->roles, ".png"))
        return cli_usage_error(ctx, "--roles writes a PNG; name it .png, not '%s'", a->roles);
    if (a->exclusion && !ends_with(a->exclusion, ".png"))
        return cli_usage_error(ctx, "--exclusion writes a PNG; name it .png, not '%s'",
                               a->exclusion);
    if (a->biome_index && !a->biomes)
        return cli_usage_error(ctx, "--biome-index changes --biomes OUT.png, which is missing");
    return CLI_EXIT_OK;
}

/* BeamNG terrains are square grids of square cells. */
/* Unity's importer takes square heightmaps of 2^n + 1 samples (33..4097). */
static int check_unity_shape(cli_ctx *ctx, const trn_recipe *r)
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

static int export_unity(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, placements *pl,
                        const trn_generated *gen, const surface_out *so, json_t *summary)
{
    height_mapping m;
    int rc = choose_mapping(ctx, a, gen, a->unity_dir, &m);
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
    /* The palette's grass rules as detail layers: their instances' (x, z), rule by rule. */
    trn_unity_detail_layer details[TRN_UNITY_MAX_DETAIL_LAYERS];
    double *points = NULL;
    if (recipe->palette_json && pl->loaded) {
        const trn_palette *palette = &pl->palette;
        const trn_instances *inst = &gen->instances;
        points = malloc((inst->count ? inst->count : 1) * 2 * sizeof *points);
        if (!points) return cli_failf(ctx, "out of memory for the detail layers");
        size_t used = 0;
        for (uint32_t r = 0; r < palette->rule_count; r++) {
            if (palette->rules[r].category != TRN_CATEGORY_GRASS) continue;
            if (uo.detail_count == TRN_UNITY_MAX_DETAIL_LAYERS) {
                free(points);
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
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx,
             "wrote %u file(s) in %s: %s.raw, %u x %u samples, terrain %g x %g x %g m (Import "
             "Raw: Depth 16 bit, Byte Order Windows, Flip Vertically off), %u splat map(s) "
             "of %u surface material(s); place it at y = %g",
             rep.files, a->unity_dir, name, rep.resolution, rep.resolution, rep.tile_size[0],
             rep.tile_size[1], rep.tile_size[2], rep.splat_textures, so->sm.labels.name_count,
             rep.height_base);
    surface_notes(ctx, so, recipe);
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
    json_object_set_new(u, "surface", surface_json(so, recipe));
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

static int check_beamng_shape(cli_ctx *ctx, const trn_recipe *r, const char *what)
{
    const double cx = r->size_x / r->cells_x, cz = r->size_z / r->cells_z;
    if (r->cells_x != r->cells_z || fabs(cx - cz) > 1e-9 * cx)
        return cli_failf(ctx,
                         "%s needs a square grid of square cells; the recipe has %u x %u cells "
                         "of %g x %g",
                         what, r->cells_x, r->cells_z, cx, cz);
    return CLI_EXIT_OK;
}

/* ---- tiled, out of core ---- */

static trn_status tiled_put(void *user, uint32_t x0, uint32_t z0, uint32_t nx, uint32_t nz,
                            const float *values, trn_error *err)
{
    return trn_geotiff_tiled_put(user, x0, z0, nx, nz, values, err);
}

static double mib(uint64_t bytes)
{
    return (double)bytes / 1048576.0;
}

/* "100 KiB", "5.5 MiB", "3.25 GiB": a size as people read it. */
static const char *size_text(uint64_t bytes, char *buf, size_t size)
{
    if (bytes < ((uint64_t)1 << 20))
        snprintf(buf, size, "%.0f KiB", (double)bytes / 1024.0);
    else if (bytes < ((uint64_t)1 << 30))
        snprintf(buf, size, "%.1f MiB", mib(bytes));
    else
        snprintf(buf, size, "%.2f GiB", (double)bytes / 1073741824.0);
    return buf;
}

/* The graph's published heights tile by tile straight into a tiled BigTIFF, within the memory
 * budget: refused up front when one tile with its halos (and the whole grids global nodes hold)
 * cannot fit. */
static int generate_tiled(cli_ctx *ctx, const gen_args *a, const trn_recipe *recipe, double t0)
{
    trn_error e;
    /* Without strokes the layers change nothing: the heights are the graph's. */
    if (recipe->stroke_count)
        return cli_failf(ctx,
                         "--tiles generates the graph's heights; this recipe's %u regions, edits "
                         "and exclusions are applied to the whole grid: generate without --tiles",
                         recipe->stroke_count);
    trn_graph g;
    if (trn_graph_from_recipe(recipe, &g, &e)) return cli_fail(ctx, &e);
    trn_graph_options o;
    memset(&o, 0, sizeof o);
    o.threads = a->threads;
    o.quality = a->quality;
    o.max_work = a->max_work;
    uint64_t need = 0;
    int global = -1;
    if (trn_graph_tiles_memory(&g, recipe, &o, a->tiles, &need, &global, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    /* The writer's band: three tile heights across the width. */
    need += (uint64_t)3u * a->tiles * ((uint64_t)recipe->cells_x + 1u) * sizeof(float);
    if (a->memory && need > a->memory) {
        char why[200] = "";
        if (global >= 0)
            snprintf(why, sizeof why,
                     "; node '%.60s' (%.32s) reads the whole grid, so the whole grid is held",
                     g.nodes[global].id, g.nodes[global].type);
        char have[32], want[32];
        const int r = cli_failf(ctx,
                                "--memory %s is below the %s a tile of %u samples with its "
                                "halos is estimated to need on this %u x %u-sample grid%s; give "
                                "--memory %.0fMiB or more%s",
                                size_text(a->memory, have, sizeof have),
                                size_text(need, want, sizeof want), a->tiles, recipe->cells_x + 1u,
                                recipe->cells_z + 1u, why, ceil(mib(need)),
                                global >= 0 ? "" : ", or smaller --tiles");
        trn_graph_dispose(&g);
        return r;
    }
    trn_geotiff_tiled *w = NULL;
    if (trn_geotiff_tiled_open(a->out_file, recipe->cells_x, recipe->cells_z, recipe->size_x,
                               recipe->size_z, a->tiles, &w, &e)) {
        trn_graph_dispose(&g);
        return cli_fail(ctx, &e);
    }
    const trn_graph_tile_options to = {a->tiles, NULL, NULL};
    trn_status st =
        trn_graph_evaluate_tiles(&g, recipe, &o, &to, tiled_put, w, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    trn_graph_dispose(&g);
    if (st) {
        trn_geotiff_tiled_abort(w);
        return cli_fail(ctx, &e);
    }
    if (trn_geotiff_tiled_close(w, &e)) return cli_fail(ctx, &e);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    char peak[32], est[32];
    const uint32_t per_x = (recipe->cells_x + a->tiles) / a->tiles,
                   per_z = (recipe->cells_z + a->tiles) / a->tiles;
    const double seconds = now_s() - t0;
    const uint64_t resident = (uint64_t)ru.ru_maxrss * 1024u;
    cli_note(ctx,
             "wrote %s: %u x %u samples in %u x %u tiles of %u, %.1f s, peak resident %s "
             "(%s estimated before the run)",
             a->out, recipe->cells_x + 1u, recipe->cells_z + 1u, per_x, per_z, a->tiles, seconds,
             size_text(resident, peak, sizeof peak), size_text(need, est, sizeof est));
    if (ctx->json) {
        json_t *summary = json_object();
        json_object_set_new(summary, "input", cli_json_string(a->recipe_path));
        json_object_set_new(summary, "input_format", json_string("recipe"));
        json_t *size = json_array();
        json_array_append_new(size, json_real(recipe->size_x));
        json_array_append_new(size, json_real(recipe->size_z));
        json_object_set_new(summary, "size", size);
        json_t *cells = json_array();
        json_array_append_new(cells, json_integer(recipe->cells_x));
        json_array_append_new(cells, json_integer(recipe->cells_z));
        json_object_set_new(summary, "cells", cells);
        json_object_set_new(summary, "samples",
                            json_integer((json_int_t)(recipe->cells_x + 1u) *
                                         (json_int_t)(recipe->cells_z + 1u)));
        json_t *tiles = json_object();
        json_object_set_new(tiles, "size", json_integer(a->tiles));
        json_t *count = json_array();
        json_array_append_new(count, json_integer(per_x));
        json_array_append_new(count, json_integer(per_z));
        json_object_set_new(tiles, "count", count);
        json_object_set_new(tiles, "memory_budget", json_integer((json_int_t)a->memory));
        json_object_set_new(tiles, "estimated_bytes", json_integer((json_int_t)need));
        json_object_set_new(tiles, "peak_resident_bytes", json_integer((json_int_t)resident));
        json_object_set_new(tiles, "seconds", json_real(seconds));
        json_object_set_new(summary, "tiles", tiles);
        cli_print_json(summary);
    }
    return CLI_EXIT_OK;
}

int cli_verb_generate(cli_ctx *ctx, int argc, char **argv)
{
    gen_args a;
    bool help;
    int rc = parse_args(ctx, argc, argv, &a, &help);
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
    if (trn_recipe_read(a.recipe_path, &recipe, &kind, &e)) return cli_fail(ctx, &e);
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
    if ((a.format == FMT_TER && (rc = check_beamng_shape(ctx, &recipe, "a .ter"))) ||
        (a.export_dir && (rc = check_beamng_shape(ctx, &recipe, "--export beamng"))) ||
        (a.unity_dir && (rc = check_unity_shape(ctx, &recipe)))) {
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
    trn_scatter_exclusions suppress = {NULL, 0};
    if (a.scatter_exclusions) {
        uint8_t *data = NULL;
        size_t size = 0;
        rc = CLI_EXIT_OK;
        if (!pl.loaded)
            rc = cli_usage_error(ctx, "--scatter-exclusions needs an engine export (--export) of a "
                                      "recipe with a palette");
        else if ((rc = cli_input(ctx, a.scatter_exclusions)) == CLI_EXIT_OK &&
                 (trn_file_read_all(a.scatter_exclusions, 0, &data, &size, &e) ||
                  trn_scatter_exclusions_parse((const char *)data, size, a.scatter_exclusions,
                                               &suppress, &e)))
            rc = cli_fail(ctx, &e);
        free(data);
        if (rc) {
            placements_dispose(&pl);
            trn_graph_cache_free(cache);
            trn_recipe_dispose(&recipe);
            return rc;
        }
    }
    trn_generate_options go = {.threads = a.threads,
                               .quality = a.quality,
                               .cache = cache,
                               .max_work = a.max_work,
                               .palette = pl.loaded ? &pl.palette : NULL,
                               /* Roles choose the exports' materials where the set binds any. */
                               .roles = a.roles != NULL || (pl.loaded && set_binds_any(&pl.set) &&
                                                            (a.export_dir || a.unity_dir))};
    trn_generated gen;
    trn_status st = trn_recipe_generate(&recipe, &go, &gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        placements_dispose(&pl);
        trn_graph_cache_free(cache);
        trn_recipe_dispose(&recipe);
        return cli_fail(ctx, &e);
    }
    if (a.scatter_exclusions) {
        size_t suppressed = 0, unmatched = 0;
        st = trn_instances_suppress(&pl.palette, &gen.instances, &suppress, &suppressed, &unmatched,
                                    &e);
        trn_scatter_exclusions_dispose(&suppress);
        if (st) {
            trn_generated_dispose(&gen);
            placements_dispose(&pl);
            trn_graph_cache_free(cache);
            trn_recipe_dispose(&recipe);
            return cli_fail(ctx, &e);
        }
        cli_note(ctx, "%s: %zu placement%s suppressed, %zu key%s matched none",
                 a.scatter_exclusions, suppressed, suppressed == 1 ? "" : "s", unmatched,
                 unmatched == 1 ? "" : "s");
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
        rc = assign_surface(ctx, &recipe, &gen, pl.loaded ? &pl.set : NULL, &so);
    if (rc) {
        /* said by assign_surface */
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
        if (!rc) add_file(files, a.out, "stationeers octree");
    } else if (a.out && a.format != FMT_TER) {
        rc = write_height_image(ctx, &a, &gen, &hm);
        if (!rc) add_file(files, a.out, "heightfield");
    } else if (a.out) {
        rc = write_ter(ctx, &a, &gen, so, &hm);
        if (!rc) add_file(files, a.out, "heightfield");
    }
    if (!rc && a.biomes) {
        rc = write_biomes(ctx, &a, &recipe, &gen);
        if (!rc) add_file(files, a.biomes, a.biome_index ? "biome indices" : "biome colours");
    }
    if (!rc && a.preview) {
        rc = write_preview(ctx, &a, &gen);
        if (!rc) add_file(files, a.preview, "preview");
    }
    if (!rc && a.exclusion) {
        rc = write_exclusion(ctx, &a, &gen);
        if (!rc) add_file(files, a.exclusion, "exclusion mask");
    }
    json_t *legend = NULL;
    if (!rc && a.roles) {
        rc = write_roles(ctx, &a, &gen, &legend);
        if (!rc) add_file(files, a.roles, "surface roles");
        /* The legend goes with the file's entry: role, colour, samples. */
        json_t *last = json_array_get(files, json_array_size(files) - 1);
        if (!rc && last && legend) json_object_set(last, "legend", legend);
    }
    json_decref(legend);
    level_export lx;
    memset(&lx, 0, sizeof lx);
    if (!rc && a.export_dir) {
        rc = export_level(ctx, &a, &recipe, &pl, &gen, so, &lx);
        if (!rc) add_file(files, a.export_dir, "beamng level");
    }
    if (!rc && a.unity_dir) {
        rc = export_unity(ctx, &a, &recipe, &pl, &gen, so, summary);
        if (!rc) add_file(files, a.unity_dir, "unity terrain");
    }
    if (!rc && a.mask_count)
        rc = write_masks(ctx, &a, &recipe, pl.loaded ? &pl.palette : NULL, cache, files);
    /* Every output lands together, then the level is checked as written. */
    if (!rc) rc = cli_commit(ctx);
    if (!rc && lx.staged) rc = validate_level(ctx, &a, &recipe, &gen, so, &lx, summary);
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
            json_object_set_new(summary, "heights", mapping_json(&hm));
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
    surface_out_free(so);
    placements_dispose(&pl);
    trn_generated_dispose(&gen);
    trn_recipe_dispose(&recipe);
    return rc;
}
