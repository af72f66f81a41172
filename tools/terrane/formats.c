/* terrane formats: every file format terrane reads or writes, as 'gdalinfo --formats' lists GDAL's.
 */
#include <string.h>

#include "cli.h"

static const char *const help_text =
    "usage: terrane formats [NAME] [--format json]\n"
    "\n"
    "List every file format terrane reads or writes: its name (as --input-format takes it),\n"
    "whether it is read (r) and written (w), its extensions and what it is. With NAME, print\n"
    "that format in full: what is read and written, how a file is recognised, which verbs\n"
    "use it and notes. --format json prints every field of every format (or of NAME).\n"
    "\n"
    "Formats are recognised by content, not by extension, except the headerless rasters\n"
    "(.r16/.raw/.r8/.r32), which have no header to recognise (docs/cli.md, 'Reading inputs').\n"
    "\n"
    "options:\n"
    "  --format json   the table as JSON on stdout\n"
    "\n"
    "examples:\n"
    "  terrane formats\n"
    "  terrane formats beamng-ter\n"
    "  terrane formats --format json\n";

/* One format. read/write say what is supported ("" = not at all); the verbs lists are
 * space-separated. */
typedef struct format_entry {
    const char *name; /* id; the --input-format name for inputs */
    const char *title;
    const char *extensions; /* space-separated; "" for folders */
    const char *kind;       /* "file" or "folder" */
    const char *read;
    const char *write;
    const char *detection;
    const char *verbs_read;
    const char *verbs_write;
    const char *notes;
} format_entry;

static const format_entry formats[] = {
    {"beamng-ter", "BeamNG / Torque3D terrain", ".ter", "file",
     "versions 1-9: the Torque Game Engine layout (1-6: heights, materials, alpha maps, "
     "scripts) and the modern layout (7-9: u16 heights, u8 layer map with 255 = hole, up to "
     "254 material names); the extra-map layout some community tools describe is detected",
     "versions 7, 8 and 9 (default 9); a file written with its own version is byte-identical",
     "content, no magic number: version byte 1-9, size field, and the exact length the "
     "layout gives (a modern file ends with its material names)",
     "info convert render beamng unity stationeers", "convert generate beamng",
     "heights in metres are stored x maxHeight / 65536 (maxHeight is the TerrainBlock's, "
     "--max-height, default 2048); row 0 is the south edge"},
    {"terragen", "Terragen terrain", ".ter", "file",
     "heights with their size and scale (SIZE, XPTS/YPTS, SCAL, ALTW chunks)",
     "convert --of terragen (the .ter extension alone means BeamNG)",
     "magic 'TERRAGENTERRAIN ' at offset 0", "info convert render beamng unity stationeers",
     "convert", "shares the .ter extension with BeamNG; the content tells them apart"},
    {"png", "PNG image", ".png", "file",
     "1-16 bit grey, grey + alpha, RGB(A) and palette images; --channel picks the channel "
     "heights come from",
     "8- and 16-bit grey heightmaps (16-bit by default); RGBA pictures and masks", "PNG signature",
     "info convert render beamng unity stationeers", "convert generate render beamng unity",
     "row 0 is north, as BeamNG's importer expects"},
    {"raw", "R16 / RAW headerless raster", ".r16 .raw .r8", "file",
     "16-bit little- or big-endian, 8-bit (--raw-type r16le, r16be, u8)",
     "16-bit, little-endian (Windows) or big-endian (--byte-order big, Mac)",
     "extension, or --raw-type / --input-format raw; the size is a square from the length, "
     "or --size WxH",
     "info convert render beamng unity stationeers", "convert generate unity",
     "no header: nothing in the file says its size or byte order"},
    {"r32", "R32 headerless float raster", ".r32", "file", "float32 metres, little-endian",
     "float32 metres, little-endian (exact)",
     "extension, or --raw-type r32 / --input-format r32; the size as for RAW",
     "info convert render beamng unity stationeers", "convert generate",
     "beamng import needs --max-height to store float metres as 16-bit"},
    {"geotiff", "GeoTIFF elevation model (DEM)", ".tif .tiff", "file",
     "8/16/32-bit integer and 32/64-bit float samples, strips or tiles, any libtiff "
     "compression, BigTIFF; CRS and metres per pixel kept, NoData filled smoothly",
     "float32 GeoTIFF (deflate), keeping a GeoTIFF input's georeferencing",
     "TIFF header: 'II*\\0' or 'MM\\0*', BigTIFF '+'",
     "info convert render beamng unity stationeers", "convert",
     "--crop and --window cut a DEM before converting (docs/dem.md)"},
    {"unity", "Unity TerrainData", ".asset", "file",
     "binary SerializedFile (versions 10 and 12-50; tested 17-22), walked by its type trees: "
     "heights (0..32766 of the terrain height), holes, splat layers and alpha maps, trees",
     "", "SerializedFile header (metadata size, file size, version, data offset)",
     "info convert render unity stationeers", "",
     "not written: 'terrane unity export' writes files for Unity's Terrain import (the "
     "unity-export folder)"},
    {"stationeers-dat", "Stationeers terrain.dat voxel octree", ".dat", "file",
     "the octree (depth-first, pre-order) and its vein table, byte for byte; as a heightfield, "
     "the top of the solid voxels",
     "byte-exact; from any heightfield (stationeers from-heightfield, convert OUT.dat)",
     "content, no magic number: the MaxDepth header, and the octree and vein table ending "
     "exactly at the end of the file",
     "info convert render unity stationeers", "convert generate stationeers",
     "MaxDepth 10-12 in the game (1024-4096 voxels a side)"},
    {"stationeers-save", "Stationeers .save archive", ".save", "file",
     "the terrain.dat entry of the ZIP, read straight from the archive",
     "stationeers replace: terrain.dat replaced, every other entry kept as stored",
     "ZIP signature (the archive must hold one terrain.dat entry)",
     "info convert render unity stationeers", "stationeers",
     "world.xml, world_meta.xml and previews are never changed"},
    {"beamng-terrain-json", "BeamNG terrain metadata", ".terrain.json", "file",
     "info: its fields, compared with the .ter beside it (size, version, materials)",
     "with every level written (beamng import, create, convert beamng:, generate --export)",
     "content: a JSON object (any file opening with '{'); info then tells a BeamNG "
     "metadata file from the other JSON documents",
     "info beamng", "beamng convert generate",
     "a Terrain asset source is also named NAME.terrain.json: the content tells them apart"},
    {"beamng-level", "BeamNG level folder", "", "folder",
     "beamng validate and migrate read a levels/NAME folder",
     "a whole level: NAME.ter, NAME.terrain.json, NAME.terrainheightmap.png, the TerrainBlock "
     "in main/items.level.json, art/terrains/main.materials.json and textures",
     "output only, named beamng:DIR/levels/NAME (convert, generate --export) or --level", "beamng",
     "convert generate beamng", "written levels are validated with the World Editor's rules"},
    {"unity-export", "Unity Terrain import files", "", "folder", "",
     "per terrain (or tile): NAME.raw (16-bit), NAME.json (import settings), splat PNGs, "
     "hole mask, trees JSON",
     "output only: unity export IN DIR, generate --export unity:DIR", "", "unity generate",
     "what Unity's Terrain 'Import Raw...' and a small script need"},
    {"recipe", "terrane recipe and Terrain asset", ".json .terrain.json .scene.json", "file",
     "bare recipes, Terrain asset sources (NAME.terrain.json), scenes with inline recipes, "
     "terrain presets (NAME.asset.json)",
     "compact --write and apply-preset --write rewrite them with small diffs",
     "content: a JSON object, its kind from its keys (docs/recipes.md, 'Documents')",
     "generate inspect explain graph compact presets apply-preset", "compact apply-preset",
     "versioned JSON; errors give the line and column"},
    {"terrane-payload", "terrane cooked payload", ".terrain.bin", "file",
     "heights and biome labels (with their names) of a payload terrane cook wrote; every "
     "section's checksum checked, nothing generated",
     "terrane cook", "magic 'TRNBIN\\0\\0'", "info convert render mesh stats beamng unity", "cook",
     "the payload's water, placements and roles stay with the runtime (docs/payload.md)"},
    {"gltf", "glTF 2.0 mesh", ".glb .gltf", "file", "",
     "chunked terrain meshes with levels of detail and skirts, a material per surface role, "
     "water meshes and instance proxy nodes; .glb binary, or .gltf with OUT.bin beside it or "
     "the buffer embedded",
     "not read: an output format", "", "mesh generate",
     "glTF's frame: +x east, +y up, -z north; faces counter-clockwise seen from above "
     "(docs/meshes.md); passes the Khronos glTF-Validator; generate writes one a tile "
     "(--tiles with --export gltf:DIR)"},
    {"obj", "Wavefront OBJ mesh", ".obj", "file", "",
     "the same terrain meshes as text, OUT.mtl beside it with a material per surface role and "
     "water",
     "not read: an output format", "", "mesh generate",
     "the glTF frame (+x east, +y up, -z north); one object per chunk with --chunks; the "
     "water meshes of generate --export unity:DIR hold x negated, as Unity's importer "
     "negates it back (docs/unity.md)"},
};

#define FORMAT_COUNT (sizeof formats / sizeof formats[0])

static json_t *words_json(const char *list)
{
    json_t *a = json_array();
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, " ");
        if (n) json_array_append_new(a, json_stringn(p, n));
        p += n;
        while (*p == ' ')
            p++;
    }
    return a;
}

static json_t *format_json(const format_entry *f)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(f->name));
    json_object_set_new(o, "title", json_string(f->title));
    json_object_set_new(o, "kind", json_string(f->kind));
    json_object_set_new(o, "extensions", words_json(f->extensions));
    json_object_set_new(o, "read", json_boolean(f->read[0] != '\0'));
    json_object_set_new(o, "write", json_boolean(f->write[0] != '\0'));
    json_object_set_new(o, "read_support", f->read[0] ? json_string(f->read) : json_null());
    json_object_set_new(o, "write_support", f->write[0] ? json_string(f->write) : json_null());
    json_object_set_new(o, "detection", json_string(f->detection));
    json_object_set_new(o, "verbs_read", words_json(f->verbs_read));
    json_object_set_new(o, "verbs_write", words_json(f->verbs_write));
    json_object_set_new(o, "notes", json_string(f->notes));
    return o;
}

static const char *flags(const format_entry *f)
{
    static const char *const rw[4] = {"--", "r-", "-w", "rw"};
    return rw[(f->read[0] ? 1 : 0) + (f->write[0] ? 2 : 0)];
}

static const char *extensions_text(const format_entry *f)
{
    return f->extensions[0] ? f->extensions : "(a folder)";
}

static void print_table(void)
{
    /* Columns as wide as their widest entry, two spaces apart. */
    int name_w = 0, ext_w = 0;
    for (size_t k = 0; k < FORMAT_COUNT; k++) {
        if ((int)strlen(formats[k].name) > name_w) name_w = (int)strlen(formats[k].name);
        if ((int)strlen(extensions_text(&formats[k])) > ext_w)
            ext_w = (int)strlen(extensions_text(&formats[k]));
    }
    cli_printf("Formats (r read, w written); 'terrane formats NAME' for one in full:\n\n");
    for (size_t k = 0; k < FORMAT_COUNT; k++) {
        const format_entry *f = &formats[k];
        cli_printf("  %-*s  %s  %-*s  %s\n", name_w, f->name, flags(f), ext_w, extensions_text(f),
                   f->title);
    }
}

static void print_one(const format_entry *f)
{
    cli_printf("%s: %s (%s)\n", f->name, f->title, flags(f));
    cli_printf("  extensions: %s\n", f->extensions[0] ? f->extensions : "none (a folder)");
    cli_printf("  read:       %s\n", f->read[0] ? f->read : "no");
    cli_printf("  write:      %s\n", f->write[0] ? f->write : "no");
    cli_printf("  detection:  %s\n", f->detection);
    if (f->verbs_read[0]) cli_printf("  read by:    %s\n", f->verbs_read);
    if (f->verbs_write[0]) cli_printf("  written by: %s\n", f->verbs_write);
    cli_printf("  notes:      %s\n", f->notes);
}

int cli_verb_formats(cli_ctx *ctx, int argc, char **argv)
{
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (a[0] == '-' && a[1]) return cli_usage_error(ctx, "unknown option '%s'", a);
        if (name) return cli_usage_error(ctx, "takes one format name; unexpected '%s'", a);
        name = a;
    }
    const format_entry *one = NULL;
    if (name) {
        const char *names[FORMAT_COUNT + 1];
        for (size_t k = 0; k < FORMAT_COUNT; k++) {
            names[k] = formats[k].name;
            if (strcmp(name, formats[k].name) == 0) one = &formats[k];
        }
        names[FORMAT_COUNT] = NULL;
        if (!one) {
            const char *hint = cli_did_you_mean(name, names);
            return cli_usage_error(ctx, "no format named '%s'%s%s%s ('terrane formats' lists them)",
                                   name, hint ? "; did you mean '" : "", hint ? hint : "",
                                   hint ? "'?" : "");
        }
    }
    if (ctx->json) {
        if (one) {
            cli_print_json(format_json(one));
        } else {
            json_t *a = json_array();
            for (size_t k = 0; k < FORMAT_COUNT; k++)
                json_array_append_new(a, format_json(&formats[k]));
            cli_print_json(a);
        }
    } else if (one) {
        print_one(one);
    } else {
        print_table();
    }
    return CLI_EXIT_OK;
}
