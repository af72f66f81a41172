/* terrane mesh: a terrain as chunked triangle meshes with levels of detail, glTF 2.0 or OBJ. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "detect.h"
#include "terrane/generate.h"
#include "terrane/mesh.h"
#include "terrane/palette.h"
#include "terrane/recipe.h"
#include "terrane/roles.h"
#include "terrane/scatter.h"
#include "fmt_document.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane mesh INPUT -o OUT.glb|OUT.gltf|OUT.obj [options]\n"
    "\n"
    "Triangulate a terrain into chunked meshes with levels of detail and write them as glTF 2.0\n"
    "(.glb binary, or .gltf JSON with its buffer in OUT.bin beside it) or Wavefront OBJ (with\n"
    "OUT.mtl beside it). INPUT is any file terrane reads ('terrane formats'), detected from its\n"
    "content, or a terrain recipe (NAME.json), which is generated first: its water bodies become\n"
    "their own translucent meshes, its palette's instances nodes with a proxy box per rule\n"
    "(glTF), and its surface roles (slope, water, biomes' snow) one material per role. A plain\n"
    "heightfield gets roles by slope alone.\n"
    "\n"
    "Chunks are --chunk-cells cells square (a recipe's chunk_cells, else 64). Level L keeps every\n"
    "2^L-th sample and the chunk's border; its error is the largest height difference between\n"
    "the full surface and the level's, and skirts hang below each chunk's border so neighbours at\n"
    "different levels show no cracks. --max-error levels adapt instead: a right-triangulated\n"
    "network over the whole terrain, thinned vertex by vertex, keeps each triangle within the\n"
    "error, and neighbouring chunks share their border vertices exactly at any two levels, with\n"
    "no skirt (docs/meshes.md). Axes are glTF's (OBJ the same): +x east,\n"
    "+y up, -z north (the terrain's far edge, the top of 'terrane render' pictures), in\n"
    "terrain-local units; faces are counter-clockwise seen from above. --camera takes the\n"
    "terrain's own coordinates: x east, y up, z north.\n"
    "\n"
    "Level selection (default: the finest level everywhere):\n"
    "  --lod N                  level N in every chunk (0 = full resolution)\n"
    "  --max-error M            one adaptive level: every triangle within M metres of every\n"
    "                           sample it covers, and as few triangles as that needs; with\n"
    "                           --camera, adaptive levels within M, 2M, 4M, ... metres\n"
    "  --camera X,Y,Z           per chunk the coarsest level whose error seen from this camera\n"
    "                           stays within --lod-error-pixels: error * viewport_height /\n"
    "                           (2 * distance * tan(fov / 2)), distance to the chunk's box\n"
    "  --fov DEG                the camera's vertical field of view (default 60)\n"
    "  --viewport-height PX     the viewport's height in pixels (default 1080)\n"
    "  --lod-error-pixels P     the largest projected error (default 2; 0 = no LOD)\n"
    "\n"
    "options:\n"
    "  -o, --output OUT         .glb, .gltf or .obj (replaced atomically with its .bin/.mtl)\n"
    "  --chunks                 one node (OBJ: object) per chunk, named chunk_X_Z; else one\n"
    "                           merged mesh\n"
    "  --chunk-cells N          cells per chunk side (1..8192)\n"
    "  --skirt-depth D          skirt depth in metres (0: none; default: the level's error or\n"
    "                           the largest border error, plus one cell)\n"
    "  --embed                  .gltf: the buffer inside the JSON as a data: URI, no .bin\n"
    "  --uvs                    texture coordinates: u = x * S, v = z * S (S: the recipe's biomes'\n"
    "                           texture_scale when they all share one, else 1: UVs in metres,\n"
    "                           each biome's texture_scale in the material extras)\n"
    "  --uv-scale S             texture coordinates at S repetitions per metre (> 0)\n"
    "  --collider-error M       add a node \"collider\": one adaptive mesh within M metres of\n"
    "                           every sample, without materials, normals or UVs\n"
    "  --sections role|biome    one primitive (material) per surface role (default) or, for a\n"
    "                           recipe, per biome: named by it, with its material id and\n"
    "                           texture_scale in the material's extras\n"
    "  --no-water               leave a recipe's water out\n"
    "  --no-instances           leave a recipe's palette instances out\n"
    "  --threads N              worker threads (1..1024; default: all cores); results never "
    "depend on it\n"
    "  --max-height M           BeamNG maxHeight: metres of the 16-bit range (default 2048)\n"
    "  --square-size S          metres per sample step (default 1)\n"
    "  --size WxH               size of a headerless input\n"
    "  --raw-type T             headerless input type: r16le, r16be, u8, r32\n"
    "  --format json            a summary on stdout: vertices, triangles, chunks, levels chosen,\n"
    "                           bytes, outputs\n"
    "  -q, --quiet              no progress bar or notes\n"
    "\n"
    "examples:\n"
    "  terrane mesh theTerrain.ter -o terrain.glb --max-error 0.25\n"
    "  terrane mesh valley.json -o valley.gltf --chunks --camera 512,300,-200\n"
    "  terrane mesh dem.tif -o dem.obj --lod 2 --square-size 30\n";

typedef enum select_mode { SELECT_FINEST, SELECT_LOD, SELECT_ERROR, SELECT_CAMERA } select_mode;
static const char *const select_names[] = {"finest", "lod", "max-error", "camera"};

typedef struct mesh_args {
    const char *in, *out;
    select_mode mode;
    uint32_t lod;
    double max_error;
    trn_mesh_camera camera;
    bool fov_given, viewport_given, pixels_given;
    bool chunks, embed, no_water, no_instances, uvs;
    bool biome_sections; /* --sections biome */
    double uv_scale;       /* --uv-scale; 0: none given */
    double collider_error; /* --collider-error; < 0: no collider */
    bool camera_adaptive; /* --camera with --max-error: adaptive levels */
    uint32_t chunk_cells;
    double skirt_depth;
    int threads;
    cli_load_options load;
} mesh_args;

static bool parse_xyz(cli_ctx *ctx, const char *opt, const char *text, double out[3])
{
    char buf[256];
    const char *c1 = strchr(text, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
    /* exactly two commas: three numbers */
    if (strlen(text) >= sizeof buf || !c2 || strchr(c2 + 1, ',')) {
        cli_usage_error(ctx, "%s expects X,Y,Z (three numbers), got '%s'", opt, text);
        return false;
    }
    strcpy(buf, text);
    char *parts[3] = {buf, buf + (c1 - text) + 1, buf + (c2 - text) + 1};
    buf[c1 - text] = '\0';
    buf[c2 - text] = '\0';
    for (int k = 0; k < 3; k++)
        if (!cli_parse_double(ctx, opt, parts[k], &out[k])) return false;
    return true;
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), t = strlen(tail);
    return n > t && strcasecmp(s + n - t, tail) == 0;
}

static int parse_args(cli_ctx *ctx, int argc, char **argv, mesh_args *a, bool *help)
{
    memset(a, 0, sizeof *a);
    a->camera.fov_y_degrees = 60.0;
    a->camera.viewport_height = 1080.0;
    a->camera.lod_error_pixels = 2.0;
    a->skirt_depth = -1.0;
    a->collider_error = -1.0;
    *help = false;
    const char *mode_option = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is_help(arg)) {
            *help = true;
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        static const char *const flags[] = {"--chunks",       "--embed", "--no-water",
                                            "--no-instances", "--uvs",   NULL};
        int f = 0;
        while (flags[f] && strcmp(arg, flags[f]) != 0)
            f++;
        if (flags[f]) {
            bool *slot = f == 0   ? &a->chunks
                         : f == 1 ? &a->embed
                         : f == 2 ? &a->no_water
                         : f == 3 ? &a->no_instances
                                  : &a->uvs;
            *slot = true;
            continue;
        }
        if (arg[0] != '-' || strcmp(arg, "-") == 0) {
            if (!a->in) {
                a->in = arg;
            } else if (!a->out) {
                a->out = arg;
            } else {
                return cli_usage_error(ctx, "takes one input and one output; unexpected '%s'", arg);
            }
            continue;
        }
        static const char *const names[] = {"-o",
                                            "--output",
                                            "--lod",
                                            "--max-error",
                                            "--camera",
                                            "--fov",
                                            "--viewport-height",
                                            "--chunk-cells",
                                            "--lod-error-pixels",
                                            "--skirt-depth",
                                            "--threads",
                                            "--uv-scale",
                                            "--collider-error",
                                            "--sections",
                                            NULL};
        if (!cli_known_option(ctx, arg, names)) return CLI_EXIT_USAGE;
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
            if (a->out)
                return cli_usage_error(ctx, "the output is given twice ('%s' and '%s')", a->out, v);
            a->out = v;
        } else if (strcmp(arg, "--lod") == 0 || strcmp(arg, "--max-error") == 0 ||
                   strcmp(arg, "--camera") == 0) {
            /* --camera and --max-error combine: adaptive levels picked by the camera */
            const bool pair = mode_option && strcmp(arg, "--lod") != 0 &&
                              strcmp(mode_option, "--lod") != 0 && strcmp(arg, mode_option) != 0;
            if (mode_option && !pair)
                return cli_usage_error(ctx, "%s and %s exclude each other: choose one selection",
                                       mode_option, arg);
            if (pair) a->camera_adaptive = true;
            mode_option = arg;
            if (strcmp(arg, "--lod") == 0) {
                a->mode = SELECT_LOD;
                if (!cli_parse_u32(ctx, arg, v, &a->lod)) return CLI_EXIT_USAGE;
            } else if (strcmp(arg, "--max-error") == 0) {
                if (!pair) a->mode = SELECT_ERROR;
                if (!cli_parse_double(ctx, arg, v, &a->max_error)) return CLI_EXIT_USAGE;
                if (a->max_error < 0)
                    return cli_usage_error(ctx, "--max-error must be >= 0 metres, not %s", v);
            } else {
                a->mode = SELECT_CAMERA;
                if (!parse_xyz(ctx, arg, v, a->camera.position)) return CLI_EXIT_USAGE;
            }
        } else if (strcmp(arg, "--sections") == 0) {
            if (strcmp(v, "biome") != 0 && strcmp(v, "role") != 0)
                return cli_usage_error(ctx, "--sections expects role or biome, not '%s'", v);
            a->biome_sections = strcmp(v, "biome") == 0;
        } else if (strcmp(arg, "--uv-scale") == 0) {
            if (!cli_parse_double(ctx, arg, v, &a->uv_scale)) return CLI_EXIT_USAGE;
            if (!(a->uv_scale > 0.0) || !isfinite(a->uv_scale))
                return cli_usage_error(ctx, "--uv-scale must be a finite number > 0, not %s", v);
        } else if (strcmp(arg, "--collider-error") == 0) {
            if (!cli_parse_double(ctx, arg, v, &a->collider_error)) return CLI_EXIT_USAGE;
            if (!(a->collider_error >= 0.0) || !isfinite(a->collider_error))
                return cli_usage_error(ctx, "--collider-error must be a finite number >= 0 metres, "
                                            "not %s",
                                       v);
        } else if (strcmp(arg, "--fov") == 0) {
            if (!cli_parse_double(ctx, arg, v, &a->camera.fov_y_degrees)) return CLI_EXIT_USAGE;
            if (!(a->camera.fov_y_degrees > 0 && a->camera.fov_y_degrees < 180))
                return cli_usage_error(ctx, "--fov must be between 0 and 180 degrees, not %s", v);
            a->fov_given = true;
        } else if (strcmp(arg, "--viewport-height") == 0) {
            if (!cli_parse_positive(ctx, arg, v, &a->camera.viewport_height)) return CLI_EXIT_USAGE;
            a->viewport_given = true;
        } else if (strcmp(arg, "--lod-error-pixels") == 0) {
            if (!cli_parse_double(ctx, arg, v, &a->camera.lod_error_pixels)) return CLI_EXIT_USAGE;
            if (a->camera.lod_error_pixels < 0)
                return cli_usage_error(ctx,
                                       "--lod-error-pixels must be finite and >= 0 (0 disables "
                                       "LOD), not %s",
                                       v);
            a->pixels_given = true;
        } else if (strcmp(arg, "--chunk-cells") == 0) {
            if (!cli_parse_u32(ctx, arg, v, &a->chunk_cells)) return CLI_EXIT_USAGE;
            if (a->chunk_cells < 1 || a->chunk_cells > TRN_MESH_CHUNK_CELLS_MAX)
                return cli_usage_error(ctx, "--chunk-cells must be 1 to %u, not %s",
                                       TRN_MESH_CHUNK_CELLS_MAX, v);
        } else if (strcmp(arg, "--skirt-depth") == 0) {
            if (!cli_parse_double(ctx, arg, v, &a->skirt_depth)) return CLI_EXIT_USAGE;
            if (a->skirt_depth < 0)
                return cli_usage_error(ctx, "--skirt-depth must be >= 0 metres, not %s", v);
        } else if (strcmp(arg, "--threads") == 0) {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 1024)
                return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
            a->threads = (int)t;
        } else {
            c = cli_load_option(ctx, arg, v, &a->load);
            if (c < 0) return CLI_EXIT_USAGE;
            if (c == 0) return cli_usage_error(ctx, "unknown option '%s'", arg);
        }
    }
    if (!a->in) return cli_usage_error(ctx, "needs an input terrain or recipe");
    if (!a->out) return cli_usage_error(ctx, "needs an output: -o OUT.glb, OUT.gltf or OUT.obj");
    if (!ends_with(a->out, ".glb") && !ends_with(a->out, ".gltf") && !ends_with(a->out, ".obj"))
        return cli_usage_error(ctx, "mesh writes .glb, .gltf or .obj; name the output so, not '%s'",
                               a->out);
    if ((a->mode == SELECT_ERROR || a->camera_adaptive) && a->skirt_depth > 0.0)
        return cli_usage_error(ctx, "--skirt-depth is for --lod and --camera levels; --max-error "
                                    "meshes share chunk borders exactly and take no skirt");
    if (a->embed && !ends_with(a->out, ".gltf"))
        return cli_usage_error(ctx, "--embed is for .gltf outputs, not '%s'", a->out);
    if (a->mode != SELECT_CAMERA && (a->fov_given || a->viewport_given || a->pixels_given))
        return cli_usage_error(ctx, "%s is for --camera selection; give --camera X,Y,Z",
                               a->fov_given        ? "--fov"
                               : a->viewport_given ? "--viewport-height"
                                                   : "--lod-error-pixels");
    return CLI_EXIT_OK;
}

/* What the run meshes: the heights, their roles, and a recipe's water and instances. */
typedef struct mesh_input {
    cli_terrain terrain;
    bool recipe_loaded;
    trn_recipe recipe;
    trn_generated gen;
    bool generated;
    trn_palette palette;
    bool has_palette;
    trn_material_set set; /* the palette's material set, zeroed without one */
    trn_instances instances;
    uint8_t *roles;
    const trn_field *field;
} mesh_input;

static void input_dispose(mesh_input *in)
{
    free(in->roles);
    trn_instances_dispose(&in->instances);
    if (in->has_palette) trn_palette_dispose(&in->palette);
    trn_material_set_dispose(&in->set);
    if (in->generated) trn_generated_dispose(&in->gen);
    if (in->recipe_loaded) trn_recipe_dispose(&in->recipe);
    cli_terrain_dispose(&in->terrain);
}

static int load_recipe(cli_ctx *ctx, const mesh_args *a, mesh_input *in)
{
    trn_error e;
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    const char *path = cli_input_path(a->in);
    if (trn_recipe_read_source(path, &in->recipe, &kind, &e)) return cli_fail(ctx, &e);
    in->recipe_loaded = true;
    int rc = cli_graph_gate(ctx, "mesh", a->in, &in->recipe, kind);
    if (rc) return rc;
    if (in->recipe.palette_json && !a->no_instances) {
        if ((rc = cli_palette_load(ctx, a->in, &in->recipe, &in->palette, &in->set))) return rc;
        in->has_palette = true;
    }
    trn_generate_options go;
    memset(&go, 0, sizeof go);
    go.threads = a->threads;
    go.quality = TRN_EROSION_FINAL;
    go.palette = in->has_palette ? &in->palette : NULL;
    trn_status st = cli_recipe_generate(path, &in->recipe, &go, &in->gen, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    in->generated = true;
    in->field = &in->gen.field;
    snprintf(in->terrain.format, sizeof in->terrain.format, "recipe");
    if (in->has_palette) {
        trn_scatter_report rep;
        memset(&rep, 0, sizeof rep);
        rc = cli_scatter_place(ctx, &in->recipe, &in->gen, &in->palette, a->threads, 0, 0,
                               &in->instances, &rep);
        trn_scatter_report_dispose(&rep);
        if (rc) return rc;
    }
    return CLI_EXIT_OK;
}

/* Roles per sample: slope always; a recipe adds its water distance, biomes and snow line. */
static int classify(cli_ctx *ctx, mesh_input *in, int threads)
{
    const size_t n = trn_field_sample_count(in->field);
    in->roles = malloc(n ? n : 1u);
    bool *snow = NULL;
    if (!in->roles) return cli_failf(ctx, "out of memory for the surface roles");
    trn_roles_input ri;
    memset(&ri, 0, sizeof ri);
    ri.field = in->field;
    trn_roles_params rp;
    trn_roles_params_default(&rp);
    rp.threads = threads;
    if (in->generated) {
        ri.water_distance = in->gen.water_distance;
        ri.biomes = in->gen.biomes.values;
        const trn_recipe *r = &in->recipe;
        if (r->biome_count) {
            snow = malloc(r->biome_count * sizeof *snow);
            if (!snow) return cli_failf(ctx, "out of memory for the surface roles");
            for (uint32_t b = 0; b < r->biome_count; b++)
                snow[b] = r->biomes[b].allow_snow;
            ri.allow_snow = snow;
            ri.allow_snow_count = r->biome_count;
        }
        if (r->has_snow_line) rp.snow_height = r->snow_line;
    }
    trn_error e;
    trn_status st = trn_roles_classify(&ri, &rp, in->roles, &e);
    free(snow);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

static void print_summary(cli_ctx *ctx, const mesh_args *a, const mesh_input *in, const trn_mesh *m,
                          const uint32_t *levels, const trn_mesh_write_report *rep)
{
    const size_t n = (size_t)m->chunks_x * m->chunks_z;
    uint64_t histogram[32] = {0};
    for (size_t k = 0; k < n; k++)
        histogram[levels[k]]++;
    if (!ctx->json) {
        cli_note(ctx, "wrote %s: %llu vertices, %llu triangles, %zu chunk%s of %u cells (%s)",
                 a->out, (unsigned long long)rep->vertices, (unsigned long long)rep->triangles, n,
                 n == 1 ? "" : "s", m->chunk_cells, select_names[a->mode]);
        return;
    }
    json_t *o = json_object();
    json_object_set_new(o, "input", cli_json_string(a->in));
    json_object_set_new(o, "input_format", cli_json_string(in->terrain.format));
    json_object_set_new(o, "output", cli_json_string(a->out));
    json_object_set_new(o, "output_format",
                        json_string(ends_with(a->out, ".obj")   ? "obj"
                                    : ends_with(a->out, ".glb") ? "glb"
                                                                : "gltf"));
    json_object_set_new(o, "selection", json_string(select_names[a->mode]));
    if (a->mode == SELECT_CAMERA)
        json_object_set_new(o, "lod_error_pixels", json_real(a->camera.lod_error_pixels));
    if (a->mode == SELECT_ERROR || a->camera_adaptive)
        json_object_set_new(o, "max_error", json_real(a->max_error));
    json_object_set_new(o, "vertices", json_integer((json_int_t)rep->vertices));
    json_object_set_new(o, "triangles", json_integer((json_int_t)rep->triangles));
    json_object_set_new(o, "chunks", json_integer((json_int_t)n));
    json_object_set_new(o, "chunk_grid", json_pack("[ii]", (int)m->chunks_x, (int)m->chunks_z));
    json_object_set_new(o, "chunk_cells", json_integer(m->chunk_cells));
    json_object_set_new(o, "lod_count", json_integer(m->level_count));
    json_t *hist = json_array(), *per = json_array();
    for (uint32_t l = 0; l < m->level_count; l++)
        json_array_append_new(hist, json_integer((json_int_t)histogram[l]));
    for (size_t k = 0; k < n; k++)
        json_array_append_new(per, json_integer(levels[k]));
    json_object_set_new(o, "chunks_per_lod", hist);
    json_object_set_new(o, "chunk_lods", per);
    json_object_set_new(o, "roles", json_boolean(m->has_roles));
    json_object_set_new(o, "water_body_count", json_integer((json_int_t)rep->water_bodies));
    json_object_set_new(o, "instances", json_integer((json_int_t)rep->instances));
    json_object_set_new(o, "bytes", json_integer((json_int_t)rep->bytes));
    cli_print_json(o);
}

int cli_verb_mesh(cli_ctx *ctx, int argc, char **argv)
{
    mesh_args a;
    bool help;
    int rc = parse_args(ctx, argc, argv, &a, &help);
    if (help) {
        fputs(help_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    if ((rc = cli_input(ctx, a.in))) return rc;
    /* Reserve the outputs first: an output naming an input is refused before any work. */
    const bool obj = ends_with(a.out, ".obj"), glb = ends_with(a.out, ".glb");
    if (!cli_output(ctx, a.out)) return CLI_EXIT_FAIL;
    if (obj || (!glb && !a.embed)) {
        char side[4096];
        const char *base = strrchr(a.out, '/');
        const char *dot = strrchr(base ? base + 1 : a.out, '.');
        snprintf(side, sizeof side, "%.*s%s", (int)(dot - a.out), a.out, obj ? ".mtl" : ".bin");
        if (!cli_output(ctx, side)) return CLI_EXIT_FAIL;
    }

    mesh_input in;
    memset(&in, 0, sizeof in);
    if (cli_is_recipe(cli_input_path(a.in))) {
        rc = load_recipe(ctx, &a, &in);
    } else {
        if (a.biome_sections)
            return cli_usage_error(ctx,
                                   "--sections biome is for recipes, whose biome map it follows; "
                                   "%s is not one",
                                   a.in);
        if (a.no_water || a.no_instances)
            return cli_usage_error(ctx,
                                   "%s is for recipes, which publish water and instances; "
                                   "%s is not one",
                                   a.no_water ? "--no-water" : "--no-instances", a.in);
        rc = cli_load_terrain(ctx, a.in, &a.load, &in.terrain);
        in.field = &in.terrain.field;
    }
    if (!rc) rc = classify(ctx, &in, a.threads);
    if (!rc && a.biome_sections && !(in.generated && in.gen.biomes.values))
        rc = cli_failf(ctx, "--sections biome: %s has no biome map", a.in);
    if (rc) {
        input_dispose(&in);
        return rc;
    }

    trn_mesh_options mo;
    trn_mesh_options_default(&mo);
    mo.chunk_cells = a.chunk_cells      ? a.chunk_cells
                     : in.recipe_loaded ? in.recipe.chunk_cells
                                        : TRN_ROLES_CHUNK_CELLS;
    if (mo.chunk_cells > TRN_MESH_CHUNK_CELLS_MAX) mo.chunk_cells = TRN_MESH_CHUNK_CELLS_MAX;
    mo.skirt_depth = a.skirt_depth;
    mo.threads = a.threads;
    if (a.mode == SELECT_ERROR) {
        /* One adaptive level within the error: the triangles it needs, no more. */
        mo.adaptive = true;
        mo.adaptive_error = a.max_error;
        mo.max_levels = 1;
    } else if (a.camera_adaptive) {
        mo.adaptive = true;
        mo.adaptive_error = a.max_error; /* level L within max_error * 2^L */
    } else {
        /* Regular levels: every level's error for the selection, geometry for the selected
         * level of each chunk only (built after the selection, trn_mesh_realize). */
        mo.defer_levels = true;
    }
    trn_mesh *m = NULL;
    trn_error e;
    /* Biome sections: the mesh's sections follow the biome map instead of the roles. */
    const uint8_t *sections = a.biome_sections ? in.gen.biomes.values : in.roles;
    trn_status st = trn_mesh_build(in.field, sections, &mo, &m, cli_progress, ctx, &e);
    cli_progress_end(ctx);
    if (st) {
        input_dispose(&in);
        return cli_fail(ctx, &e);
    }
    const size_t n = (size_t)m->chunks_x * m->chunks_z;
    uint32_t *levels = calloc(n, sizeof *levels);
    if (!levels) {
        rc = cli_failf(ctx, "out of memory for the chunk levels");
    } else if (a.mode == SELECT_LOD) {
        if (a.lod >= m->level_count)
            rc = cli_usage_error(ctx, "--lod %u: chunks of %u cells have levels 0 to %u", a.lod,
                                 m->chunk_cells, m->level_count - 1u);
        else
            trn_mesh_select_level(m, a.lod, levels, NULL);
    } else if (a.mode == SELECT_ERROR) {
        if (trn_mesh_select_max_error(m, a.max_error, levels, &e)) rc = cli_fail(ctx, &e);
    } else if (a.mode == SELECT_CAMERA) {
        if (trn_mesh_select_camera(m, &a.camera, levels, &e)) rc = cli_fail(ctx, &e);
    }
    /* OBJ needs the chosen levels built; glTF builds them chunk by chunk as it writes. */
    if (!rc && mo.defer_levels && obj &&
        trn_mesh_realize(in.field, sections, m, levels, a.threads, &e))
        rc = cli_fail(ctx, &e);
    /* The collider: one adaptive level within --collider-error, chunked as the terrain. */
    trn_mesh *collider = NULL;
    if (!rc && a.collider_error >= 0.0) {
        trn_mesh_options co;
        trn_mesh_options_default(&co);
        co.chunk_cells = mo.chunk_cells;
        co.threads = a.threads;
        co.adaptive = true;
        co.adaptive_error = a.collider_error;
        co.max_levels = 1;
        co.skirt_depth = 0.0;
        if (trn_mesh_build(in.field, NULL, &co, &collider, cli_progress, ctx, &e))
            rc = cli_fail(ctx, &e);
        cli_progress_end(ctx);
    }
    /* The recipe's biomes as ground materials; UVs at their shared texture_scale, else in
     * metres (the material extras carry each biome's scale). */
    trn_mesh_biome_material *biomes = NULL;
    uint32_t biome_count = 0;
    double uv_scale = a.uv_scale;
    /* In the biome map's label order (the sections' numbers), each found in the recipe. */
    if (!rc && in.generated && in.gen.biomes.name_count) {
        biomes = calloc(in.gen.biomes.name_count, sizeof *biomes);
        if (!biomes) {
            rc = cli_failf(ctx, "out of memory for the biome materials");
        } else {
            biome_count = in.gen.biomes.name_count;
            for (uint32_t b = 0; b < biome_count; b++) {
                const int r = trn_recipe_find_biome(&in.recipe, in.gen.biomes.names[b]);
                biomes[b].name = in.gen.biomes.names[b];
                biomes[b].texture_scale = r >= 0 ? in.recipe.biomes[r].texture_scale : 1.0;
                biomes[b].material = r >= 0 ? in.recipe.biomes[r].material : NULL;
                for (int c = 0; c < 4; c++)
                    biomes[b].color[c] = r >= 0 ? in.recipe.biomes[r].color[c] : 0.6f;
            }
        }
    }
    if (a.uvs && !(uv_scale > 0.0)) {
        uv_scale = biome_count ? biomes[0].texture_scale : 1.0;
        for (uint32_t b = 1; b < biome_count; b++)
            if (biomes[b].texture_scale != biomes[0].texture_scale) uv_scale = 1.0;
    }
    /* The texture layers of a mapped material set: its role bindings in role order, then the
     * biome materials, each distinct id once (the cooked payload's order). */
    const char *layers[TRN_ROLE_COUNT + 256];
    uint32_t layer_count = 0;
    if (in.set.mapping.present) {
        const char *ids[TRN_ROLE_COUNT + 256];
        uint32_t n_ids = 0;
        for (int r = 0; r < TRN_ROLE_COUNT; r++)
            ids[n_ids++] = in.set.roles[r];
        for (uint32_t b = 0; b < biome_count && b < 256u; b++)
            ids[n_ids++] = biomes[b].material;
        for (uint32_t k = 0; k < n_ids; k++) {
            bool seen = !ids[k];
            for (uint32_t q = 0; q < layer_count && !seen; q++)
                seen = strcmp(layers[q], ids[k]) == 0;
            if (!seen) layers[layer_count++] = ids[k];
        }
    }
    /* Each layer's Material document, found as the palette's project finds it (none: no
     * manifest; a document that does not resolve fails the export with its error). */
    trn_material layer_mats[TRN_ROLE_COUNT + 256];
    memset(layer_mats, 0, sizeof layer_mats);
    for (uint32_t k = 0; !rc && k < layer_count; k++) {
        bool no_manifest = false;
        if (trn_material_find(cli_input_path(a.in), layers[k], &layer_mats[k], &no_manifest, &e) &&
            !no_manifest)
            rc = cli_fail(ctx, &e);
    }
    trn_mesh_write_report rep;
    memset(&rep, 0, sizeof rep);
    if (!rc) {
        trn_mesh_scene scene;
        memset(&scene, 0, sizeof scene);
        scene.mesh = m;
        scene.levels = levels;
        scene.chunks = a.chunks;
        if (in.generated && in.gen.has_water && !a.no_water) {
            scene.water = &in.gen.water;
            scene.ground = in.field;
        }
        if (in.has_palette && in.instances.count) {
            scene.palette = &in.palette;
            scene.instances = &in.instances;
        }
        scene.uv_scale = uv_scale;
        scene.biome_materials = biomes;
        scene.biome_material_count = biome_count;
        scene.collider = collider;
        scene.biome_sections = a.biome_sections;
        if (mo.defer_levels && !obj) {
            scene.deferred_field = in.field;
            scene.deferred_roles = sections;
        }
        scene.mapping = in.set.mapping.present ? &in.set.mapping : NULL;
        scene.layers = layers;
        scene.layer_count = layer_count;
        scene.layer_materials = layer_count ? layer_mats : NULL;
        for (int r = 0; r < TRN_ROLE_COUNT; r++)
            for (uint32_t k = 0; k < layer_count && in.set.roles[r]; k++)
                if (strcmp(layers[k], in.set.roles[r]) == 0)
                    scene.role_materials[r] = &layer_mats[k];
        scene.writes = cli_write_set(ctx);
        if (!scene.writes) {
            rc = CLI_EXIT_FAIL;
        } else {
            st = obj ? trn_obj_write(a.out, &scene, &rep, &e)
                     : trn_gltf_write(a.out,
                                      glb       ? TRN_GLTF_GLB
                                      : a.embed ? TRN_GLTF_EMBEDDED
                                                : TRN_GLTF_SEPARATE,
                                      &scene, &rep, &e);
            if (st) rc = cli_fail(ctx, &e);
            /* the writer reports its files through the run's set: land them */
            if (!rc) rc = cli_commit(ctx);
        }
    }
    for (uint32_t k = 0; k < layer_count; k++) trn_material_dispose(&layer_mats[k]);
    if (!rc) print_summary(ctx, &a, &in, m, levels, &rep);
    free(levels);
    free(biomes);
    trn_mesh_free(collider);
    trn_mesh_free(m);
    input_dispose(&in);
    return rc;
}
