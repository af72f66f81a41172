/* terrane beamng: import, create, export, validate and migrate BeamNG levels. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "detect.h"
#include "fmt_geotiff.h"
#include "level_export.h"
#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/image.h"

static const char *const overview_text =
    "usage: terrane beamng <import|create|export|validate|migrate> [options]\n"
    "\n"
    "BeamNG levels, with the World Editor's rules and layout:\n"
    "  import    build a terrain from a heightmap and opacity maps, into a level or a .ter\n"
    "  create    make a new level (or a new terrain in one) with a flat terrain\n"
    "  export    write a .ter's heightmap, layer map, hole mask, opacity maps and R16\n"
    "  validate  check a level for the common issues, each with a fix hint\n"
    "  migrate   upgrade a level's v1 terrain materials to v1.5 (deprecated materials.json too)\n"
    "\n"
    "examples:\n"
    "  terrane beamng create island --resolution 2048      # levels/island, a flat terrain\n"
    "  terrane beamng import height.png --level levels/island --materials grass,rock\n"
    "  terrane beamng validate levels/island\n"
    "  terrane beamng migrate levels/island\n"
    "\n"
    "run 'terrane beamng <sub-verb> --help' for its options and examples.\n";

static const char *const import_help =
    "usage: terrane beamng import HEIGHTMAP (--level LEVEL_DIR | -o OUT.ter) [options]\n"
    "\n"
    "Build a BeamNG terrain as the World Editor's importer does. HEIGHTMAP is a 16-bit PNG or a\n"
    "headerless R16 (.r16/.raw, little-endian unless --byte-order big), used as stored values;\n"
    "an 8-bit PNG is widened v/255*65535. An R32 (.r32, little-endian float metres) needs\n"
    "--max-height: stored = round(h / maxHeight * 65536), and heights outside 0 .. maxHeight\n"
    "are clamped with a warning that counts them. The heightmap must be square, a power of\n"
    "two, 128 to 8192. Each opacity map belongs to one material, in --materials order; per\n"
    "sample the material with the highest opacity wins, a later material winning a tie. A\n"
    "hole map pixel of 255 makes a hole (layer 255).\n"
    "By default rows are reversed while copying (image top = north = the terrain's last row;\n"
    "BeamNG's origin is bottom-left); --flip-y-axis copies them as they are.\n"
    "\n"
    "With --level, writes into the level folder (levels/NAME). A level that has a TerrainBlock\n"
    "(--name, else its only one) keeps it: the heights go into the .ter its terrainFile names\n"
    "(terrain2.ter, with terrain2.terrain.json and terrain2.terrainheightmap.png beside it), and\n"
    "its position, maxHeight, squareSize, persistentId and every other field stay, except what\n"
    "--max-height, --square-size or --center change. Otherwise NAME.ter, NAME.terrain.json,\n"
    "NAME.terrainheightmap.png and a new TerrainBlock in main/MissionGroup/items.level.json, as\n"
    "the World Editor keeps it. Materials missing from the level are added to\n"
    "art/terrains/main.materials.json with placeholder textures, in the level's material\n"
    "version: v1 fields when its TerrainBlock has no materialTextureSet (a level never upgraded),\n"
    "else v1.5 with a texture set. Each change to what the level had is printed.\n"
    "--scaffold adds what the level needs to open and drive (docs/beamng.md lists it).\n"
    "\n"
    "options:\n"
    "  --level DIR             the level folder to write into (created when missing)\n"
    "  -o, --output OUT.ter    also (or only) write the .ter here\n"
    "  --name NAME             TerrainBlock and file name (default theTerrain)\n"
    "  --materials A,B,C       material names in layer order (default grass)\n"
    "  --opacity FILE[:C]      an opacity map, C = R, G, B or A (default R); once per material\n"
    "  --layer-map FILE        an 8-bit PNG of layer indices, instead of opacity maps\n"
    "  --holes FILE            a PNG whose 255 pixels are holes\n"
    "  --flip-y-axis           copy rows as they are (the editor's flipYAxis)\n"
    "  --max-height M          TerrainBlock maxHeight in metres (default: the level's, else\n"
    "                          2048); for an R32\n"
    "                          heightmap also its scale, and required\n"
    "  --byte-order little|big R16 byte order (default little; big is Mac order)\n"
    "  --square-size S         TerrainBlock squareSize, metres per sample (default: the\n"
    "                          level's, else 1)\n"
    "  --ter-version N         .ter version to write: 7, 8 or 9 (default 9)\n"
    "  --texture-size N        pixel size of generated placeholder textures (default 256)\n"
    "  --center                with --level: centre the terrain on the level's origin (x, y;\n"
    "                          z kept) instead of keeping the TerrainBlock's position\n"
    "  --material-version V    1 or 1.5: the terrain materials to use (default: the level's);\n"
    "                          1.5 in a v1 level upgrades its v1 materials where they are\n"
    "  --scaffold              with --level: also info.json, a preview, a spawn point on a flat\n"
    "                          dry spot, sky, sun, time of day, level info, a camera bookmark and\n"
    "                          the editor's groups (what the level has already is kept)\n"
    "  --format json           print what was written as JSON\n"
    "  -q, --quiet             no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane beamng import height.png --level levels/island --materials grass,rock,sand \\\n"
    "      --opacity grass.png --opacity rock.png --opacity sand.png --holes holes.png\n"
    "  terrane beamng import height.r16 --level levels/island --max-height 512\n"
    "  terrane beamng import height.png --level levels/editor_saved --material-version 1.5\n"
    "  terrane beamng import mac_height.raw --byte-order big --level levels/island\n"
    "  terrane beamng import height.r32 --max-height 900 --level levels/island\n"
    "  terrane beamng import height.png --materials grass,rock --opacity splat.png:R \\\n"
    "      --opacity splat.png:G -o theTerrain.ter\n";

static const char *const create_help =
    "usage: terrane beamng create NAME [options]\n"
    "\n"
    "Create levels/NAME/ (under --root) with a new flat terrain, as the World Editor does: a\n"
    "unique .ter name (theTerrain.ter, then theTerrain_1.ter, ...), the resolution rounded up\n"
    "to a power of two (at least 128, at most 8192), one material, and heights above zero so\n"
    "there is room to dig: by default a quarter of maxHeight (stored value 16384), which leaves\n"
    "a quarter of the range below the surface and three quarters above it. Writes the .ter,\n"
    ".terrain.json, heightmap PNG, TerrainBlock (in main/MissionGroup/items.level.json, as the\n"
    "World Editor keeps it), main.materials.json and placeholder textures. An existing level\n"
    "gets one more terrain. --scaffold makes a level that opens and drives.\n"
    "\n"
    "options:\n"
    "  --root DIR              the folder that holds levels/ (default .)\n"
    "  --resolution N          samples per side (default 1024)\n"
    "  --material NAME         the initial material (default grass)\n"
    "  --terrain-name NAME     TerrainBlock and .ter base name (default theTerrain)\n"
    "  --max-height M          TerrainBlock maxHeight in metres (default 2048)\n"
    "  --square-size S         metres per sample (default 1)\n"
    "  --initial-height M      starting height in metres (default maxHeight/4)\n"
    "  --texture-size N        pixel size of generated placeholder textures (default 256)\n"
    "  --scaffold              also info.json, a preview, a spawn point, sky, sun, time of day,\n"
    "                          level info, a camera bookmark and the editor's groups\n"
    "  --format json           print what was written as JSON\n"
    "  -q, --quiet             no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane beamng create island --scaffold\n"
    "  terrane beamng create island\n"
    "  terrane beamng create island --root ~/BeamNG/mods/unpacked/island --resolution 2048\n"
    "  terrane beamng create flats --resolution 512 --square-size 2 --material asphalt\n";

static const char *const export_help =
    "usage: terrane beamng export IN.ter [-o DIR] [options]\n"
    "\n"
    "Write images of a .ter with the import's orientation rule, so importing them back (same\n"
    "material order, same --flip-y-axis) gives the same .ter byte for byte:\n"
    "  BASE_heightmap.png          16-bit grey, the stored height values\n"
    "  BASE_layers.png             8-bit grey, the layer index of each sample (255 = hole)\n"
    "  BASE_holes.png              8-bit grey, 255 hole, 0 solid\n"
    "  BASE_opacity_I_NAME.png     per material, 255 where the sample is that material\n"
    "  BASE.r16                    little-endian 16-bit heights\n"
    "It then prints the import command that rebuilds the terrain.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR        folder for the images (default .)\n"
    "  --name BASE             file name prefix (default: the .ter's name)\n"
    "  --only LIST             some of heightmap,layers,holes,opacity,r16 (default all)\n"
    "  --flip-y-axis           image rows in terrain order (row 0 = south)\n"
    "  --compression N         zlib level 0-9 for the PNGs (default 3)\n"
    "  --format json           print the files as JSON\n"
    "  -q, --quiet             no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane beamng export levels/island/theTerrain.ter -o island_maps\n"
    "  terrane beamng export theTerrain.ter --only heightmap,r16 -o out\n";

static const char *const validate_help =
    "usage: terrane beamng validate LEVEL_DIR [options]\n"
    "\n"
    "Check a level (a levels/NAME folder) for the common issues of BeamNG terrains and of the\n"
    "World Editor's scene tree, and print each with a fix hint. Game paths (\"/levels/NAME/...\") "
    "are resolved from the folder that\n"
    "contains levels/, or from LEVEL_DIR itself when its name is NAME. A folder holding none\n"
    "of main/, info.json, main.level.json, a .mis file or art/terrains/ is not a level: it is\n"
    "refused, naming the levels inside it. docs/beamng.md explains every check.\n"
    "\n"
    "checks: terrain-file-missing, terrain-file-case, terrain-file-elsewhere,\n"
    "  terrain-block-missing, terrain-block-invalid, level-items-invalid, ter-version-too-new,\n"
    "  ter-lfs-pointer, ter-corrupt, ter-warning, ter-extra-maps, ter-version-old, ter-size,\n"
    "  too-many-materials, layer-index-out-of-range, material-unresolved, material-name-case,\n"
    "  materials-invalid, materials-deprecated-file, texture-set-missing,\n"
    "  terrain-v1-materials, material-v1-only, texture-slot-empty, texture-missing,\n"
    "  texture-path-case, texture-unreadable, texture-not-png, texture-size-not-pow2,\n"
    "  texture-size-mismatch, texture-colorspace, texture-not-checked, terrain-json-missing,\n"
    "  terrain-json-invalid, terrain-json-mismatch, object-name-duplicate,\n"
    "  object-unparented, group-folder-orphaned, persistent-id-missing,\n"
    "  forest-item-data-invalid, forest-item-invalid, forest-item-type-unknown,\n"
    "  forest-item-no-shape, forest-item-outside-terrain, forest-object-missing,\n"
    "  forest-shape-missing, ground-cover-layer-unknown\n"
    "\n"
    "exit status: 0 no errors (warnings and notes allowed), 1 errors found (or, with --strict,\n"
    "warnings), 2 usage.\n"
    "\n"
    "With --fix-terrain-json it first rewrites each TerrainBlock's .terrain.json from its .ter\n"
    "(atomically, only when it differs; the .ter is only read), then checks the level.\n"
    "\n"
    "options:\n"
    "  --fix-terrain-json      rewrite the .terrain.json files from the .ter files first\n"
    "  --skip-textures         do not open texture files\n"
    "  --strict                warnings fail too\n"
    "  --format json           findings as JSON on stdout\n"
    "  -q, --quiet             print only problems, no summary\n"
    "\n"
    "examples:\n"
    "  terrane beamng validate levels/island\n"
    "  terrane beamng validate ~/BeamNG/mods/unpacked/island/levels/island --format json\n"
    "  terrane beamng validate levels/island --fix-terrain-json\n";

static const char *const migrate_help =
    "usage: terrane beamng migrate LEVEL_DIR [options]\n"
    "\n"
    "Upgrade a level's terrain materials to v1.5: move the TerrainMaterials of a deprecated\n"
    "art/terrains/materials.json into art/terrains/main.materials.json, and upgrade the\n"
    "materials with only v1 fields in the level's other materials files (where the World Editor\n"
    "keeps them) in place, keeping their keys, persistentIds and other fields (names,\n"
    "groundmodelName and annotation carried over; diffuseMap -> baseColorBaseTex, macroMap ->\n"
    "baseColorMacroTex, detailMap -> baseColorDetailTex, normalMap -> normalDetailTex). Adds a\n"
    "TerrainMaterialTextureSet when there is none and assigns it to the level's TerrainBlocks.\n"
    "Entries already in main.materials.json are never overwritten; the old file is kept unless\n"
    "--delete-old. A level that already uses v1.5 materials is left alone (exit 1, saying so).\n"
    "\n"
    "options:\n"
    "  --delete-old            remove the migrated entries from the old file (deleting it when\n"
    "                          nothing else is left)\n"
    "  --no-placeholders       leave slots without a v1 texture empty (default: placeholders)\n"
    "  --no-assign             do not set materialTextureSet on the TerrainBlocks\n"
    "  --texture-size N        pixel size of placeholder textures (default 256)\n"
    "  -q, --quiet             no notes\n"
    "\n"
    "examples:\n"
    "  terrane beamng migrate levels/oldmap\n"
    "  terrane beamng migrate levels/oldmap --delete-old\n"
    "  terrane beamng migrate levels/editor_saved_v1_level\n";

/* ------------------------------------------------------------------------------------------
 * Shared option handling.
 * ---------------------------------------------------------------------------------------- */

/* Options that take a value; all others are flags. */
static bool takes_value(const char *a)
{
    static const char *const with_value[] = {
        "--level",
        "-o",
        "--output",
        "--name",
        "--materials",
        "--opacity",
        "--layer-map",
        "--holes",
        "--max-height",
        "--square-size",
        "--ter-version",
        "--texture-size",
        "--root",
        "--resolution",
        "--material",
        "--terrain-name",
        "--initial-height",
        "--only",
        "--compression",
        "--byte-order",
        "--material-version",
    };
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; i++)
        if (strcmp(a, with_value[i]) == 0) return true;
    return false;
}

static bool parse_texture_size(cli_ctx *ctx, const char *v, trn_texture_options *t)
{
    uint32_t n;
    if (!cli_parse_u32(ctx, "--texture-size", v, &n)) return false;
    if (n == 0 || (n & (n - 1)) || n > 8192) {
        cli_usage_error(ctx, "--texture-size must be a power of two from 1 to 8192, not %u", n);
        return false;
    }
    t->base_size = t->macro_size = t->detail_size = n;
    return true;
}

/* Split "a,b,c" into a malloc'd array of pointers into a malloc'd copy. */
static bool split_list(cli_ctx *ctx, const char *opt, const char *text, char **storage,
                       const char ***items, uint32_t *count)
{
    *storage = malloc(strlen(text) + 1);
    size_t n = 1;
    for (const char *p = text; *p; p++)
        n += *p == ',';
    *items = calloc(n, sizeof **items);
    if (!*storage || !*items) {
        free(*storage);
        free((void *)*items);
        cli_failf(ctx, "out of memory");
        return false;
    }
    strcpy(*storage, text);
    uint32_t k = 0;
    char *p = *storage;
    for (;;) {
        char *comma = strchr(p, ',');
        if (comma) *comma = '\0';
        if (!*p) {
            cli_usage_error(ctx, "%s has an empty entry in '%s'", opt, text);
            free(*storage);
            free((void *)*items);
            *storage = NULL;
            *items = NULL;
            return false;
        }
        (*items)[k++] = p;
        if (!comma) break;
        p = comma + 1;
    }
    *count = k;
    return true;
}

static int fail_status(cli_ctx *ctx, const trn_error *e)
{
    cli_progress_end(ctx);
    return cli_fail(ctx, e);
}

static json_t *level_result_json(const trn_beamng_level_result *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "level", cli_json_string(r->level_dir));
    json_object_set_new(o, "level_name", cli_json_string(r->level_name));
    json_object_set_new(o, "terrain_name", cli_json_string(r->terrain_name));
    json_object_set_new(o, "terrain_file", cli_json_string(r->terrain_file));
    json_object_set_new(o, "ter_file", cli_json_string(r->ter_path));
    json_object_set_new(o, "terrain_json_file", cli_json_string(r->terrain_json_path));
    json_object_set_new(o, "heightmap_file", cli_json_string(r->heightmap_png_path));
    json_object_set_new(o, "items_file", cli_json_string(r->items_path));
    json_object_set_new(o, "materials_file", cli_json_string(r->materials_path));
    json_object_set_new(o, "texture_set", cli_json_string(r->texture_set));
    json_object_set_new(o, "materials_added", json_integer(r->materials_added));
    json_object_set_new(o, "textures_written", json_integer(r->textures_written));
    json_object_set_new(o, "block_replaced", json_boolean(r->block_replaced));
    json_object_set_new(o, "material_version", json_string(r->materials_v1 ? "1" : "1.5"));
    json_t *changes = json_array();
    for (uint32_t i = 0; i < r->change_count; i++)
        json_array_append_new(changes, cli_json_string(r->changes[i]));
    if (r->changes_dropped)
        json_array_append_new(changes, json_sprintf("and %u more change(s)", r->changes_dropped));
    json_object_set_new(o, "changes", changes);
    json_object_set_new(o, "info_file", cli_json_string(r->info_path));
    json_object_set_new(o, "preview_file", cli_json_string(r->preview_path));
    json_object_set_new(o, "objects_added", json_integer(r->objects_added));
    if (r->spawn_added) {
        json_t *sp = json_array();
        for (int i = 0; i < 3; i++)
            json_array_append_new(sp, json_real(r->spawn_position[i]));
        json_object_set_new(o, "spawn_position", sp);
        json_object_set_new(o, "spawn_dry", json_boolean(r->spawn_dry));
    }
    return o;
}

static void note_level(cli_ctx *ctx, const trn_beamng_level_result *r, uint32_t size)
{
    cli_note(ctx, "wrote %s (%u x %u), %s and %s", r->ter_path, size, size, r->terrain_json_path,
             r->heightmap_png_path);
    if (r->materials_v1)
        cli_note(ctx, "TerrainBlock \"%s\" in %s (terrainFile %s, v1 materials: no texture set)",
                 r->terrain_name, r->items_path, r->terrain_file);
    else
        cli_note(ctx, "TerrainBlock \"%s\" in %s (terrainFile %s, texture set %s)", r->terrain_name,
                 r->items_path, r->terrain_file, r->texture_set);
    /* Every change to what the level had, so none goes unnoticed. */
    for (uint32_t i = 0; i < r->change_count; i++)
        cli_note(ctx, "changed: %s", r->changes[i]);
    if (r->changes_dropped) cli_note(ctx, "changed: and %u more", r->changes_dropped);
    if (r->materials_added)
        cli_note(ctx, "added %u material(s) to %s with %u placeholder texture(s)",
                 r->materials_added, r->materials_path, r->textures_written);
    cli_note_scaffold(ctx, r);
}

/* ------------------------------------------------------------------------------------------
 * import
 * ---------------------------------------------------------------------------------------- */

static bool parse_opacity(cli_ctx *ctx, const char *v, trn_beamng_opacity_source *src)
{
    src->path = v;
    src->channel = TRN_CHANNEL_R;
    const char *colon = strrchr(v, ':');
    /* FILE:C only when C is one channel letter, so paths with colons still work. */
    if (colon && colon[1] && !colon[2] && strchr("RGBArgba", colon[1])) {
        static const char letters[] = "RGBA";
        char c = (char)(colon[1] & ~0x20);
        src->channel = (trn_channel)(strchr(letters, c) - letters);
        size_t n = (size_t)(colon - v);
        if (n == 0) {
            cli_usage_error(ctx, "--opacity needs a file before ':%c'", colon[1]);
            return false;
        }
        char *path = malloc(n + 1);
        if (!path) return false;
        memcpy(path, v, n);
        path[n] = '\0';
        src->path = path;
    } else if (colon && colon[1] && !colon[2]) {
        cli_usage_error(ctx, "--opacity channel must be R, G, B or A, not '%s'", colon + 1);
        return false;
    }
    return true;
}

/* Named as an R32 float heightmap (how import tells it from R16). */
static bool is_r32(const char *path)
{
    size_t n = strlen(path);
    return n >= 4 && strcasecmp(path + n - 4, ".r32") == 0;
}

static int cmd_import(cli_ctx *ctx, int argc, char **argv)
{
    const char *heightmap = NULL, *level_dir = NULL, *out_ter = NULL, *materials_arg = NULL;
    trn_beamng_import_options io;
    memset(&io, 0, sizeof io);
    trn_beamng_level_options lo;
    memset(&lo, 0, sizeof lo);
    trn_beamng_opacity_source *ops = calloc((size_t)argc, sizeof *ops);
    bool *ops_owned = calloc((size_t)argc, sizeof *ops_owned);
    char *names_storage = NULL;
    const char **names = NULL;
    uint32_t name_count = 0, op_count = 0, ter_version = 9;
    int rc = CLI_EXIT_OK;
    trn_ter ter;
    memset(&ter, 0, sizeof ter);
    if (!ops || !ops_owned) {
        rc = cli_failf(ctx, "out of memory");
        goto done;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(import_help, stdout);
            goto done;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        if (c > 0) continue;
        if (strcmp(a, "--flip-y-axis") == 0) {
            io.flip_y_axis = true;
            continue;
        }
        if (strcmp(a, "--scaffold") == 0) {
            lo.scaffold.enabled = true;
            continue;
        }
        if (strcmp(a, "--center") == 0) {
            lo.recenter = true;
            continue;
        }
        if (a[0] == '-' && a[1] && !takes_value(a)) {
            rc = cli_usage_error(ctx, "unknown option '%s'", a);
            goto done;
        }
        const char *v = NULL;
        if (a[0] == '-' && a[1] && !(v = cli_option_value(ctx, argc, argv, &i))) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
        bool ok = true;
        if (strcmp(a, "--level") == 0)
            level_dir = v;
        else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            out_ter = v;
        else if (strcmp(a, "--name") == 0)
            lo.terrain_name = v;
        else if (strcmp(a, "--materials") == 0)
            materials_arg = v;
        else if (strcmp(a, "--opacity") == 0) {
            ok = parse_opacity(ctx, v, &ops[op_count]);
            if (ok) ops_owned[op_count] = ops[op_count].path != v;
            op_count += ok;
        } else if (strcmp(a, "--layer-map") == 0)
            io.layer_map_path = v;
        else if (strcmp(a, "--holes") == 0)
            io.holes_path = v;
        else if (strcmp(a, "--max-height") == 0)
            ok = cli_parse_positive(ctx, a, v, &lo.max_height);
        else if (strcmp(a, "--byte-order") == 0) {
            if (strcmp(v, "little") == 0 || strcmp(v, "big") == 0)
                io.raw_big_endian = strcmp(v, "big") == 0;
            else {
                cli_usage_error(ctx, "--byte-order takes little or big, not '%s'", v);
                ok = false;
            }
        } else if (strcmp(a, "--square-size") == 0)
            ok = cli_parse_positive(ctx, a, v, &lo.square_size);
        else if (strcmp(a, "--ter-version") == 0) {
            ok = cli_parse_u32(ctx, a, v, &ter_version);
            if (ok && (ter_version < 7 || ter_version > 9)) {
                cli_usage_error(ctx, "--ter-version must be 7, 8 or 9, not %u", ter_version);
                ok = false;
            }
        } else if (strcmp(a, "--texture-size") == 0)
            ok = parse_texture_size(ctx, v, &lo.textures);
        else if (strcmp(a, "--material-version") == 0) {
            if (strcmp(v, "1") == 0)
                lo.material_version = TRN_BEAMNG_MATERIALS_V1;
            else if (strcmp(v, "1.5") == 0)
                lo.material_version = TRN_BEAMNG_MATERIALS_V15;
            else {
                cli_usage_error(ctx, "--material-version takes 1 or 1.5, not '%s'", v);
                ok = false;
            }
        } else if (a[0] == '-' && a[1]) {
            rc = cli_usage_error(ctx, "option '%s' does not belong to import", a);
            goto done;
        } else if (!heightmap)
            heightmap = a;
        else {
            rc = cli_usage_error(ctx, "takes one heightmap; unexpected '%s'", a);
            goto done;
        }
        if (!ok) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    }
    if (!heightmap) {
        rc = cli_usage_error(ctx, "needs a heightmap (a 16-bit PNG, R16 or R32)");
        goto done;
    }
    if (!level_dir && !out_ter) {
        rc = cli_usage_error(ctx, "needs somewhere to write: --level LEVEL_DIR or -o OUT.ter");
        goto done;
    }
    if (lo.scaffold.enabled && !level_dir) {
        rc = cli_usage_error(ctx, "--scaffold builds a level around the terrain: give --level "
                                  "LEVEL_DIR");
        goto done;
    }
    if (materials_arg) {
        if (!split_list(ctx, "--materials", materials_arg, &names_storage, &names, &name_count)) {
            rc = CLI_EXIT_USAGE;
            goto done;
        }
    } else if (op_count || io.layer_map_path) {
        rc = cli_usage_error(ctx, "give --materials with one name per %s, in layer order",
                             op_count ? "opacity map" : "layer index");
        goto done;
    } else {
        static const char *const default_names[1] = {"grass"};
        names = calloc(1, sizeof *names);
        if (!names) {
            rc = cli_failf(ctx, "out of memory");
            goto done;
        }
        names[0] = default_names[0];
        name_count = 1;
    }
    if (op_count && op_count != name_count) {
        rc = cli_usage_error(ctx,
                             "%u --opacity map(s) for %u material name(s): give one opacity "
                             "map per material, in the same order",
                             op_count, name_count);
        goto done;
    }
    /* Every map read is an input: neither -o nor the level's files may replace one. */
    if ((rc = cli_input(ctx, heightmap)) ||
        (io.layer_map_path && (rc = cli_input(ctx, io.layer_map_path))) ||
        (io.holes_path && (rc = cli_input(ctx, io.holes_path))))
        goto done;
    for (uint32_t i = 0; i < op_count; i++)
        if ((rc = cli_input(ctx, ops[i].path))) goto done;
    const char *out_file = NULL;
    if (out_ter && !(out_file = cli_output(ctx, out_ter))) {
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    if (level_dir && !(lo.writes = cli_write_set(ctx))) {
        rc = CLI_EXIT_FAIL;
        goto done;
    }
    io.heightmap_path = heightmap;
    /* An 8-bit PNG is widened v * 257: 256 levels, terraces; said before importing it. */
    trn_png_info hm_info;
    if (trn_png_read_info(heightmap, &hm_info, NULL) == TRN_OK && hm_info.bit_depth <= 8)
        cli_warn_8bit(ctx, heightmap, lo.max_height);
    /* An R32 is scaled by the maxHeight the TerrainBlock gets (0 when not given: refused). */
    io.float_max_height = lo.max_height;
    io.opacity = ops;
    io.opacity_count = op_count;
    io.material_names = names;
    io.material_count = name_count;
    lo.level_dir = level_dir;
    lo.ter_version = (uint8_t)ter_version;
    /* An editor-saved level keeps its TerrainBlock's file, place and scale unless asked. */
    lo.keep_block = true;
    trn_beamng_level_result res;
    memset(&res, 0, sizeof res);
    trn_error e;
    trn_status st =
        trn_beamng_import(&io, &ter, level_dir ? &lo : NULL, &res, cli_progress, ctx, &e);
    if (!st && out_ter)
        st = trn_ter_write(out_file, &ter, (uint8_t)ter_version, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        rc = fail_status(ctx, &e);
        goto done;
    }
    if ((rc = cli_commit(ctx))) goto done;
    uint64_t counts[256];
    trn_ter_layer_histogram(&ter, counts);
    /* Warnings go to stderr in both formats, so a script reading the JSON still sees them. */
    for (uint32_t i = 0; i < ter.warning_count && !ctx->quiet; i++)
        cli_fprintf(stderr, "terrane %s: warning: %s\n", ctx->verb, ter.warnings[i].message);
    if (ctx->json) {
        json_t *o = level_dir ? level_result_json(&res) : json_object();
        json_object_set_new(o, "resolution", json_integer(ter.size));
        json_object_set_new(o, "ter_version", json_integer(ter_version));
        json_object_set_new(o, "holes", json_integer((json_int_t)counts[255]));
        json_t *mats = json_array();
        for (uint32_t i = 0; i < ter.material_count; i++) {
            json_t *m = json_object();
            json_object_set_new(m, "name", cli_json_string(ter.materials[i]));
            json_object_set_new(m, "samples", json_integer((json_int_t)counts[i & 255]));
            json_array_append_new(mats, m);
        }
        json_object_set_new(o, "materials", mats);
        if (out_ter) json_object_set_new(o, "output", cli_json_string(out_ter));
        json_t *warns = json_array();
        for (uint32_t i = 0; i < ter.warning_count; i++)
            json_array_append_new(warns, cli_json_string(ter.warnings[i].message));
        json_object_set_new(o, "warnings", warns);
        cli_print_json(o);
    } else {
        if (level_dir) note_level(ctx, &res, ter.size);
        if (out_ter)
            cli_note(ctx, "wrote %s (%u x %u, version %u)", out_ter, ter.size, ter.size,
                     ter_version);
        /* Without --level nothing records the scale the float heights were stored with. */
        if (out_ter && !level_dir && io.float_max_height > 0 && is_r32(heightmap))
            cli_note(ctx, "heights stored for maxHeight %g: give its TerrainBlock that maxHeight",
                     io.float_max_height);
        for (uint32_t i = 0; i < ter.material_count; i++)
            cli_note(ctx, "  layer %u %-20s %llu samples", i, ter.materials[i],
                     (unsigned long long)counts[i & 255]);
        if (counts[255]) cli_note(ctx, "  holes %llu samples", (unsigned long long)counts[255]);
    }
done:
    trn_ter_dispose(&ter);
    for (int i = 0; ops && ops_owned && i < argc; i++)
        if (ops_owned[i]) free((void *)ops[i].path);
    free(ops);
    free(ops_owned);
    free(names_storage);
    free((void *)names);
    return rc;
}

/* ------------------------------------------------------------------------------------------
 * create
 * ---------------------------------------------------------------------------------------- */

static int cmd_create(cli_ctx *ctx, int argc, char **argv)
{
    trn_beamng_create_options co;
    memset(&co, 0, sizeof co);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(create_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--scaffold") == 0) {
            co.scaffold.enabled = true;
            continue;
        }
        if (a[0] == '-' && a[1] && !takes_value(a))
            return cli_usage_error(ctx, "unknown option '%s'", a);
        const char *v = NULL;
        if (a[0] == '-' && a[1] && !(v = cli_option_value(ctx, argc, argv, &i)))
            return CLI_EXIT_USAGE;
        bool ok = true;
        if (strcmp(a, "--root") == 0)
            co.root = v;
        else if (strcmp(a, "--resolution") == 0) {
            ok = cli_parse_u32(ctx, a, v, &co.resolution);
            if (ok && co.resolution == 0) {
                cli_usage_error(ctx, "--resolution must be at least 1");
                ok = false;
            }
        } else if (strcmp(a, "--material") == 0)
            co.material = v;
        else if (strcmp(a, "--terrain-name") == 0)
            co.terrain_name = v;
        else if (strcmp(a, "--max-height") == 0)
            ok = cli_parse_positive(ctx, a, v, &co.max_height);
        else if (strcmp(a, "--square-size") == 0)
            ok = cli_parse_positive(ctx, a, v, &co.square_size);
        else if (strcmp(a, "--initial-height") == 0)
            ok = cli_parse_positive(ctx, a, v, &co.initial_height);
        else if (strcmp(a, "--texture-size") == 0)
            ok = parse_texture_size(ctx, v, &co.textures);
        else if (a[0] == '-' && a[1])
            return cli_usage_error(ctx, "option '%s' does not belong to create", a);
        else if (!co.level_name)
            co.level_name = a;
        else
            return cli_usage_error(ctx, "takes one level name; unexpected '%s'", a);
        if (!ok) return CLI_EXIT_USAGE;
    }
    if (!co.level_name) return cli_usage_error(ctx, "needs a level name");
    /* Values the library would refuse are usage errors here: nothing has been read yet. */
    if (co.resolution > TRN_BEAMNG_MAX_RESOLUTION)
        return cli_usage_error(ctx,
                               "--resolution %u is above 8192, the largest terrain BeamNG loads; "
                               "use 8192 and a larger --square-size for more ground",
                               co.resolution);
    if (co.material && !co.material[0]) return cli_usage_error(ctx, "--material needs a name");
    double max_height = co.max_height > 0 ? co.max_height : 2048.0;
    if (co.initial_height > max_height * 65535.0 / 65536.0)
        return cli_usage_error(ctx,
                               "--initial-height %g is above what --max-height %g can store; "
                               "raise --max-height",
                               co.initial_height, max_height);
    if (strchr(co.level_name, '/'))
        return cli_usage_error(ctx,
                               "the level name '%s' has a '/': give a plain name and --root for "
                               "the folder",
                               co.level_name);
    trn_beamng_level_result res;
    trn_error e;
    if (!(co.writes = cli_write_set(ctx))) return CLI_EXIT_FAIL;
    trn_status st = trn_beamng_create(&co, &res, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) return fail_status(ctx, &e);
    int rc = cli_commit(ctx);
    if (rc) return rc;
    uint32_t size = 0;
    trn_beamng_round_resolution(co.resolution ? co.resolution : 1024, &size, NULL);
    if (ctx->json) {
        json_t *o = level_result_json(&res);
        json_object_set_new(o, "resolution", json_integer(size));
        cli_print_json(o);
    } else {
        if (co.resolution && size != co.resolution)
            cli_note(ctx, "resolution %u rounded up to %u (a power of two, at least 128)",
                     co.resolution, size);
        note_level(ctx, &res, size);
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * export
 * ---------------------------------------------------------------------------------------- */

static bool parse_only(cli_ctx *ctx, const char *v, trn_beamng_export_options *eo)
{
    eo->heightmap = eo->layer_map = eo->holes = eo->opacity = eo->r16 = false;
    char *storage;
    const char **items;
    uint32_t n;
    if (!split_list(ctx, "--only", v, &storage, &items, &n)) return false;
    bool ok = true;
    for (uint32_t i = 0; i < n && ok; i++) {
        if (strcmp(items[i], "heightmap") == 0)
            eo->heightmap = true;
        else if (strcmp(items[i], "layers") == 0)
            eo->layer_map = true;
        else if (strcmp(items[i], "holes") == 0)
            eo->holes = true;
        else if (strcmp(items[i], "opacity") == 0)
            eo->opacity = true;
        else if (strcmp(items[i], "r16") == 0)
            eo->r16 = true;
        else {
            cli_usage_error(ctx, "--only takes heightmap, layers, holes, opacity and r16, not '%s'",
                            items[i]);
            ok = false;
        }
    }
    free(storage);
    free((void *)items);
    return ok;
}

/* The .ter's file name without folder and extension. */
static void base_of(const char *path, char *out, size_t out_size)
{
    const char *slash = strrchr(path, '/');
    const char *b = slash ? slash + 1 : path;
    snprintf(out, out_size, "%s", b);
    size_t n = strlen(out);
    if (n > 4 && strcasecmp(out + n - 4, ".ter") == 0) out[n - 4] = '\0';
    if (!out[0]) snprintf(out, out_size, "terrain");
}

/* Single-quote a word for a shell command line. */
static void shell_word(FILE *fp, const char *s)
{
    fputc('\'', fp);
    for (; *s; s++) {
        if (*s == '\'')
            fputs("'\\''", fp);
        else
            fputc(*s, fp);
    }
    fputc('\'', fp);
}

static int cmd_export(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *out_dir = NULL, *name = NULL;
    trn_beamng_export_options eo;
    trn_beamng_export_options_default(&eo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(export_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--flip-y-axis") == 0) {
            eo.flip_y_axis = true;
            continue;
        }
        if (a[0] == '-' && a[1] && !takes_value(a))
            return cli_usage_error(ctx, "unknown option '%s'", a);
        const char *v = NULL;
        if (a[0] == '-' && a[1] && !(v = cli_option_value(ctx, argc, argv, &i)))
            return CLI_EXIT_USAGE;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            out_dir = v;
        else if (strcmp(a, "--name") == 0)
            name = v;
        else if (strcmp(a, "--only") == 0) {
            if (!parse_only(ctx, v, &eo)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--compression") == 0) {
            uint32_t level;
            if (!cli_parse_u32(ctx, a, v, &level)) return CLI_EXIT_USAGE;
            if (level > 9) return cli_usage_error(ctx, "--compression must be 0 to 9");
            eo.compression_level = (int)level;
        } else if (a[0] == '-' && a[1])
            return cli_usage_error(ctx, "option '%s' does not belong to export", a);
        else if (!in)
            in = a;
        else if (!out_dir)
            out_dir = a;
        else
            return cli_usage_error(ctx, "takes one .ter and one output folder; unexpected '%s'", a);
    }
    if (!in) return cli_usage_error(ctx, "needs a .ter to export");
    struct stat sb;
    if (stat(in, &sb) == 0 && S_ISDIR(sb.st_mode))
        return cli_failf(ctx, "%s: is a folder, expected a .ter file", in);
    cli_format fmt;
    int rc = cli_sniff_file(ctx, in, &fmt);
    if (rc) return rc;
    if (fmt != CLI_FORMAT_BEAMNG_TER)
        return cli_failf(ctx, "%s is %s, not a BeamNG/Torque .ter", in, cli_format_name(fmt));
    if ((rc = cli_input(ctx, in))) return rc;
    if (!(eo.writes = cli_write_set(ctx))) return CLI_EXIT_FAIL;
    trn_ter ter;
    trn_error e;
    if (trn_ter_read(cli_input_path(in), NULL, &ter, cli_progress, ctx, &e))
        return fail_status(ctx, &e);
    char base[256];
    if (name)
        snprintf(base, sizeof base, "%s", name);
    else
        base_of(in, base, sizeof base);
    trn_beamng_export_result res;
    trn_status st =
        trn_beamng_export(&ter, out_dir ? out_dir : ".", base, &eo, &res, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    rc = st ? fail_status(ctx, &e) : cli_commit(ctx);
    if (rc) {
        if (!st) trn_beamng_export_result_dispose(&res);
        trn_ter_dispose(&ter);
        return rc;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "resolution", json_integer(ter.size));
        json_object_set_new(o, "ter_version", json_integer(ter.version));
        json_object_set_new(o, "flip_y_axis", json_boolean(eo.flip_y_axis));
        json_t *mats = json_array();
        for (uint32_t i = 0; i < ter.material_count; i++)
            json_array_append_new(
                mats, json_pack("{s:i, s:o}", "index", (int)i, "name",
                                cli_json_string(ter.materials[i] ? ter.materials[i] : "")));
        json_object_set_new(o, "materials", mats);
        cli_print_json(o);
    } else if (!ctx->quiet) {
        for (uint32_t i = 0; i < res.path_count; i++)
            cli_fprintf(stderr, "wrote %s\n", res.paths[i]);
        /* The command that rebuilds the terrain from these images; --materials splits at
         * commas, so a name holding one (or an empty name) cannot be given back that way. */
        bool listable = true;
        for (uint32_t i = 0; i < ter.material_count; i++)
            listable = listable && ter.materials[i] && ter.materials[i][0] &&
                       !strchr(ter.materials[i], ',');
        if (eo.heightmap && eo.opacity && eo.holes && ter.material_count && !listable)
            cli_fprintf(stderr, "(no re-import command: a material name is empty or holds a comma, "
                                "which --materials cannot express)\n");
        if (eo.heightmap && eo.opacity && eo.holes && ter.material_count && listable) {
            cli_fprintf(stderr, "re-import with:\n  terrane beamng import ");
            shell_word(stderr, res.paths[0]);
            cli_fprintf(stderr, " --materials '");
            for (uint32_t i = 0; i < ter.material_count; i++) {
                if (i) fputc(',', stderr);
                for (const char *c = ter.materials[i]; *c; c++) {
                    if (*c == '\'')
                        fputs("'\\''", stderr);
                    else
                        fputc(*c, stderr);
                }
            }
            fputc('\'', stderr);
            for (uint32_t i = 0; i < res.opacity_count; i++) {
                cli_fprintf(stderr, " --opacity ");
                shell_word(stderr, res.paths[res.opacity_first + i]);
            }
            cli_fprintf(stderr, " --holes ");
            shell_word(stderr, res.paths[eo.layer_map ? 2 : 1]);
            if (eo.flip_y_axis) cli_fprintf(stderr, " --flip-y-axis");
            if (ter.version != 9) cli_fprintf(stderr, " --ter-version %u", ter.version);
            cli_fprintf(stderr, " -o OUT.ter\n");
        }
    }
    trn_beamng_export_result_dispose(&res);
    trn_ter_dispose(&ter);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * validate
 * ---------------------------------------------------------------------------------------- */

static int cmd_validate(cli_ctx *ctx, int argc, char **argv)
{
    const char *level = NULL;
    bool strict = false, fix_json = false;
    trn_beamng_validate_options vo;
    memset(&vo, 0, sizeof vo);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(validate_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--strict") == 0)
            strict = true;
        else if (strcmp(a, "--fix-terrain-json") == 0)
            fix_json = true;
        else if (strcmp(a, "--skip-textures") == 0)
            vo.skip_textures = true;
        else if (a[0] == '-' && a[1])
            return cli_usage_error(ctx, "unknown option '%s'", a);
        else if (!level)
            level = a;
        else
            return cli_usage_error(ctx, "takes one level folder; unexpected '%s'", a);
    }
    if (!level) return cli_usage_error(ctx, "needs a level folder (levels/NAME)");
    trn_findings f;
    memset(&f, 0, sizeof f);
    trn_error e;
    /* Fix first, so that the findings describe the level as it is left. */
    trn_beamng_terrain_json_result fixed;
    memset(&fixed, 0, sizeof fixed);
    if (fix_json && trn_beamng_write_terrain_json(level, NULL, &fixed, &e))
        return fail_status(ctx, &e);
    trn_status st = trn_beamng_validate(level, &vo, &f, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        trn_findings_dispose(&f);
        trn_beamng_terrain_json_result_dispose(&fixed);
        return fail_status(ctx, &e);
    }
    /* On stderr in both formats, as the other verbs' notes about files written. */
    for (uint32_t i = 0; i < fixed.written_count; i++)
        cli_note(ctx, "rewrote %s from its .ter", fixed.written[i]);
    for (uint32_t i = 0; i < fixed.outside_count; i++)
        cli_note(ctx,
                 "left %s: it resolves outside the level folder, and --fix-terrain-json writes "
                 "only inside it",
                 fixed.outside[i]);
    if (fix_json && !fixed.written_count && !fixed.outside_count)
        cli_note(ctx, "every .terrain.json already matched its .ter%s",
                 fixed.skipped_count ? " (TerrainBlocks without a readable .ter skipped)" : "");
    size_t errors = 0, warnings = 0, notes = 0;
    for (size_t i = 0; i < f.count; i++) {
        if (f.items[i].severity == TRN_SEVERITY_ERROR)
            errors++;
        else if (f.items[i].severity == TRN_SEVERITY_WARNING)
            warnings++;
        else
            notes++;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "level", cli_json_string(level));
        json_object_set_new(o, "error_count", json_integer((json_int_t)errors));
        json_object_set_new(o, "warning_count", json_integer((json_int_t)warnings));
        json_object_set_new(o, "note_count", json_integer((json_int_t)notes));
        json_t *arr = json_array();
        for (size_t i = 0; i < f.count; i++) {
            const trn_finding *fi = &f.items[i];
            json_t *x = json_object();
            json_object_set_new(x, "severity", cli_json_string(trn_severity_name(fi->severity)));
            json_object_set_new(x, "check", cli_json_string(fi->check));
            json_object_set_new(x, "message", cli_json_string(fi->message));
            json_object_set_new(x, "file", cli_json_string(fi->file));
            if (fi->line > 0) json_object_set_new(x, "line", json_integer(fi->line));
            if (fi->line > 0 && fi->column > 0)
                json_object_set_new(x, "column", json_integer(fi->column));
            if (fi->offset >= 0) json_object_set_new(x, "offset", json_integer(fi->offset));
            json_object_set_new(x, "fix", cli_json_string(fi->fix));
            json_array_append_new(arr, x);
        }
        json_object_set_new(o, "findings", arr);
        if (fix_json) {
            json_t *w = json_array();
            for (uint32_t i = 0; i < fixed.written_count; i++)
                json_array_append_new(w, cli_json_string(fixed.written[i]));
            json_object_set_new(o, "terrain_json_rewritten", w);
            json_t *left = json_array();
            for (uint32_t i = 0; i < fixed.outside_count; i++)
                json_array_append_new(left, cli_json_string(fixed.outside[i]));
            json_object_set_new(o, "terrain_json_outside", left);
        }
        cli_print_json(o);
    } else {
        for (size_t i = 0; i < f.count; i++) {
            const trn_finding *fi = &f.items[i];
            if (ctx->quiet && fi->severity == TRN_SEVERITY_INFO) continue;
            cli_printf("%s [%s] ", trn_severity_name(fi->severity), fi->check);
            if (fi->file[0] && fi->line > 0 && fi->column > 0)
                cli_printf("%s:%d:%d: ", fi->file, fi->line, fi->column);
            else if (fi->file[0] && fi->line > 0)
                cli_printf("%s:%d: ", fi->file, fi->line);
            else if (fi->file[0] && fi->offset >= 0)
                cli_printf("%s: offset %lld: ", fi->file, (long long)fi->offset);
            else if (fi->file[0])
                cli_printf("%s: ", fi->file);
            cli_printf("%s\n", fi->message);
            if (fi->fix[0]) cli_printf("    fix: %s\n", fi->fix);
        }
        if (!ctx->quiet)
            cli_printf("%s: %zu error%s, %zu warning%s, %zu note%s\n", level, errors,
                       errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", notes,
                       notes == 1 ? "" : "s");
    }
    trn_findings_dispose(&f);
    trn_beamng_terrain_json_result_dispose(&fixed);
    return (errors || (strict && warnings)) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * migrate
 * ---------------------------------------------------------------------------------------- */

static int cmd_migrate(cli_ctx *ctx, int argc, char **argv)
{
    const char *level = NULL;
    trn_migrate_options mo;
    memset(&mo, 0, sizeof mo);
    mo.fill_textures = true;
    mo.assign_texture_set = true;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(migrate_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--delete-old") == 0)
            mo.delete_old = true;
        else if (strcmp(a, "--no-placeholders") == 0)
            mo.fill_textures = false;
        else if (strcmp(a, "--no-assign") == 0)
            mo.assign_texture_set = false;
        else if (strcmp(a, "--texture-size") == 0) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v || !parse_texture_size(ctx, v, &mo.textures)) return CLI_EXIT_USAGE;
        } else if (a[0] == '-' && a[1])
            return cli_usage_error(ctx, "unknown option '%s'", a);
        else if (!level)
            level = a;
        else
            return cli_usage_error(ctx, "takes one level folder; unexpected '%s'", a);
    }
    if (!level) return cli_usage_error(ctx, "needs a level folder (levels/NAME)");
    uint32_t migrated = 0;
    trn_error e;
    if (!(mo.writes = cli_write_set(ctx))) return CLI_EXIT_FAIL;
    /* Whether there is a deprecated file at all, for the message: an editor-saved v1 level
     * keeps its v1 materials in main.materials.json, and they are upgraded there. */
    char old_file[4096];
    struct stat osb;
    snprintf(old_file, sizeof old_file, "%s/art/terrains/materials.json", level);
    bool had_old = stat(old_file, &osb) == 0;
    if (trn_beamng_migrate_materials(level, &mo, &migrated, &e)) return fail_status(ctx, &e);
    int rc = cli_commit(ctx);
    if (rc) return rc;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "level", cli_json_string(level));
        json_object_set_new(o, "migrated", json_integer(migrated));
        json_object_set_new(o, "old_file_deleted_or_trimmed",
                            json_boolean(mo.delete_old && had_old));
        cli_print_json(o);
    } else if (had_old) {
        cli_note(ctx, "migrated %u material(s) into art/terrains/main.materials.json%s", migrated,
                 mo.delete_old ? "; removed them from the old file" : "; the old file is kept");
    } else {
        cli_note(ctx, "upgraded %u v1 material(s) to v1.5 where they are%s", migrated,
                 mo.assign_texture_set ? ", and gave the TerrainBlocks a texture set" : "");
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------------------------------
 * Dispatch.
 * ---------------------------------------------------------------------------------------- */

typedef struct sub_verb {
    const char *name;
    const char *label; /* "beamng import", for messages */
    int (*fn)(cli_ctx *ctx, int argc, char **argv);
} sub_verb;

int cli_verb_beamng(cli_ctx *ctx, int argc, char **argv)
{
    static const sub_verb subs[] = {
        {"import", "beamng import", cmd_import},    {"create", "beamng create", cmd_create},
        {"export", "beamng export", cmd_export},    {"validate", "beamng validate", cmd_validate},
        {"migrate", "beamng migrate", cmd_migrate},
    };
    const int at = cli_sub_verb_at(ctx, argc, argv);
    if (at < 0) return CLI_EXIT_USAGE;
    if (at >= argc) {
        if (ctx->json)
            return cli_usage_error(ctx, "needs a sub-verb: import, create, export, validate or "
                                        "migrate");
        fputs(overview_text, stderr);
        return CLI_EXIT_USAGE;
    }
    if (cli_is_help(argv[at])) {
        fputs(overview_text, stdout);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (strcmp(argv[at], subs[i].name) == 0) {
            ctx->verb = subs[i].label;
            return subs[i].fn(ctx, argc - at, argv + at);
        }
    return cli_usage_error(ctx,
                           "unknown sub-verb '%s': use import, create, export, validate or "
                           "migrate",
                           argv[at]);
}
