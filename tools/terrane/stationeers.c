/* terrane stationeers: terrain.dat out of and into .save archives, heightfields to octrees. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "core/fileio.h"
#include "fmt_stationeers.h"
#include "terrane/stationeers.h"

static const char *const overview_text =
    "usage: terrane stationeers <sub-verb> [options]\n"
    "\n"
    "Stationeers voxel terrain (terrain.dat octrees and .save archives). `terrane info` describes\n"
    "either; `terrane convert`/`render` read either as a heightfield.\n"
    "\n"
    "sub-verbs:\n"
    "  extract SAVE OUT.dat                      copy terrain.dat out of a .save\n"
    "  replace SAVE NEW.dat (--write | -o OUT)   put NEW.dat into a .save, every other entry\n"
    "                                            kept as stored\n"
    "  from-heightfield IN OUT.dat [options]     build an octree from any heightmap\n"
    "  from-heightfield IN DIR --world NAME      ... as a world's base files DIR/Terrain*.dat\n"
    "\n"
    "examples:\n"
    "  terrane stationeers extract Lunar.save terrain.dat\n"
    "  terrane stationeers from-heightfield dem.png terrain.dat --max-depth 10 --max-height 400\n"
    "  terrane stationeers replace Lunar.save terrain.dat -o Lunar-new.save\n"
    "  terrane stationeers replace Lunar.save terrain.dat --write   # in place, atomically\n";

static const char *const extract_help =
    "usage: terrane stationeers extract SAVE OUT.dat [-q]\n"
    "\n"
    "Copy the terrain.dat entry of a Stationeers .save (a ZIP) to OUT.dat, byte for byte, after\n"
    "checking that it parses. The .save is not modified.\n"
    "\n"
    "example:\n"
    "  terrane stationeers extract Lunar.save terrain.dat\n";

static const char *const replace_help =
    "usage: terrane stationeers replace SAVE NEW.dat (--write | -o OUT.save) [-q]\n"
    "\n"
    "Replace the terrain.dat inside a .save with NEW.dat (checked to parse first). Every other\n"
    "entry (world.xml, world_meta.xml, previews) keeps its stored bytes, order and compression;\n"
    "terrain.dat keeps its compression method and time stamp. The archive is written to a\n"
    "temporary file and renamed, so a failure leaves every file as it was.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT  write the new archive to OUT (SAVE is not modified)\n"
    "  --write           update SAVE itself\n"
    "\n"
    "examples:\n"
    "  terrane stationeers replace Lunar.save terrain.dat -o Lunar-new.save\n"
    "  terrane stationeers replace Lunar.save terrain.dat --write\n";

static const char *const from_help =
    "usage: terrane stationeers from-heightfield IN OUT.dat [options]\n"
    "       terrane stationeers from-heightfield IN DIR --world small|medium|large [options]\n"
    "\n"
    "Build a terrain.dat octree from any heightmap `terrane convert` reads. Sample (i, j) is the\n"
    "voxel column x = i, z = j; a column is solid up to its height and its top voxel's density\n"
    "(0 air .. 255 full) says how far up that voxel the surface is, so reading the file back\n"
    "gives each height within half a density step (1/510 voxel). Bedrock fills the bottom rows,\n"
    "Crust the top voxels of each column, Dirt what is between; uniform blocks are single\n"
    "leaves. Columns past the heightmap's edge repeat its last row or column.\n"
    "\n"
    "options:\n"
    "  --world NAME      a game world, written as its base terrain files into the folder DIR:\n"
    "                    small = MaxDepth 10, 1024^3 voxels, Terrain0.dat; medium = 11, 2048^3,\n"
    "                    Terrain0..7.dat; large = 12, 4096^3 (the Lunar world's),\n"
    "                    Terrain0..63.dat; each file a MaxDepth-10 octree of one 1024^3 block\n"
    "  --max-depth N     one file of exactly this depth, 1..14 (2^N voxels a side), for tools\n"
    "                    that want one (default: the smallest world size, 10, 11 or 12, that\n"
    "                    holds the samples and the highest point)\n"
    "  --voxel-size M    metres per voxel (default 1)\n"
    "  --base M          metres at the floor of voxel row 0 (default 0)\n"
    "  --crust N         Crust voxels at the top of each column (default 2)\n"
    "  --bedrock N       Bedrock voxel rows at the bottom (default 4); lower samples are raised\n"
    "  --max-height M, --square-size S, --size WxH, --raw-type T   how to read IN (as convert)\n"
    "  --max-samples N   the most samples to read, and voxel columns to build (default\n"
    "                    660764199: 8 GiB at 13 bytes each)\n"
    "  --format json     a JSON report on stdout\n"
    "\n"
    "examples:\n"
    "  terrane stationeers from-heightfield island.png terrain.dat --max-depth 10 \\\n"
    "      --max-height 300\n"
    "  terrane stationeers from-heightfield dem.r32 terrain.dat --size 1024x1024 --base -50\n"
    "  terrane stationeers from-heightfield dem.tif Terrain --world medium\n";

typedef int (*sub_fn)(cli_ctx *ctx, int argc, char **argv);

/* Collect positional arguments, handling help and the common options. Returns -1 when done
 * with the exit code in *rc, else the number of positionals. */
static int simple_args(cli_ctx *ctx, int argc, char **argv, const char *help, const char **pos,
                       int max_pos, bool *write, const char **output, int *rc)
{
    int n = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help, stdout);
            *rc = CLI_EXIT_OK;
            return -1;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) {
            *rc = CLI_EXIT_USAGE;
            return -1;
        }
        if (c > 0) continue;
        if (write && strcmp(a, "--write") == 0) {
            *write = true;
        } else if (output && (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)) {
            *output = cli_option_value(ctx, argc, argv, &i);
            if (!*output) {
                *rc = CLI_EXIT_USAGE;
                return -1;
            }
        } else if (a[0] == '-' && a[1]) {
            *rc = cli_usage_error(ctx, "unknown option '%s'", a);
            return -1;
        } else if (n < max_pos) {
            pos[n++] = a;
        } else {
            *rc = cli_usage_error(ctx, "unexpected argument '%s'", a);
            return -1;
        }
    }
    return n;
}

static int cmd_extract(cli_ctx *ctx, int argc, char **argv)
{
    const char *pos[2];
    int rc = 0;
    int n = simple_args(ctx, argc, argv, extract_help, pos, 2, NULL, NULL, &rc);
    if (n < 0) return rc;
    if (n != 2) return cli_usage_error(ctx, "needs SAVE and OUT.dat");
    if ((rc = cli_input(ctx, pos[0]))) return rc;
    const char *out_file = cli_output(ctx, pos[1]);
    if (!out_file) return CLI_EXIT_FAIL;
    uint8_t *data;
    size_t size;
    trn_error e;
    if (trn_stationeers_save_extract(pos[0], 0, &data, &size, &e) != TRN_OK)
        return cli_fail(ctx, &e);
    char where[4200];
    snprintf(where, sizeof where, "%s:terrain.dat", pos[0]);
    trn_stationeers_terrain t;
    trn_status st = trn_stationeers_parse(data, size, where, NULL, &t, &e);
    if (st == TRN_OK) st = trn_file_write_atomic(out_file, data, size, &e);
    free(data);
    rc = st ? cli_fail(ctx, &e) : cli_commit(ctx);
    if (rc) {
        trn_stationeers_dispose(&t);
        return rc;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(pos[0]));
        json_object_set_new(o, "output", cli_json_string(pos[1]));
        json_object_set_new(o, "bytes", json_integer((json_int_t)size));
        json_object_set_new(o, "max_depth", json_integer(t.max_depth));
        json_object_set_new(o, "octree_nodes", json_integer((json_int_t)t.node_count));
        json_object_set_new(o, "veins", json_integer(t.vein_count));
        cli_print_json(o);
    }
    cli_note(ctx, "wrote %s (%zu bytes, MaxDepth %u, %llu nodes, %u veins)", pos[1], size,
             t.max_depth, (unsigned long long)t.node_count, t.vein_count);
    trn_stationeers_dispose(&t);
    return CLI_EXIT_OK;
}

static int cmd_replace(cli_ctx *ctx, int argc, char **argv)
{
    const char *pos[2];
    const char *output = NULL;
    bool write = false;
    int rc = 0;
    int n = simple_args(ctx, argc, argv, replace_help, pos, 2, &write, &output, &rc);
    if (n < 0) return rc;
    if (n != 2) return cli_usage_error(ctx, "needs SAVE and NEW.dat");
    if (write == (output != NULL))
        return cli_usage_error(ctx, "say where the result goes: --write (update SAVE) or -o "
                                    "OUT.save");
    /* --write is the explicit in-place edit: SAVE is then the output, not a guarded input. */
    if ((rc = cli_input(ctx, pos[1])) || (output && (rc = cli_input(ctx, pos[0])))) return rc;
    const char *out_file = cli_output(ctx, write ? pos[0] : output);
    if (!out_file) return CLI_EXIT_FAIL;
    trn_mapped_file mf;
    trn_error e;
    if (trn_mapped_file_open(&mf, pos[1], 0, &e) != TRN_OK) return cli_fail(ctx, &e);
    trn_stationeers_terrain t;
    trn_status st = trn_stationeers_parse(mf.data, mf.size, pos[1], NULL, &t, &e);
    if (st == TRN_OK) st = trn_stationeers_save_replace(pos[0], out_file, mf.data, mf.size, &e);
    size_t size = mf.size;
    trn_mapped_file_close(&mf);
    rc = st ? cli_fail(ctx, &e) : cli_commit(ctx);
    if (rc) {
        trn_stationeers_dispose(&t);
        return rc;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "inputs",
                            json_pack("[oo]", cli_json_string(pos[0]), cli_json_string(pos[1])));
        json_object_set_new(o, "output", cli_json_string(write ? pos[0] : output));
        json_object_set_new(o, "in_place", json_boolean(write));
        json_object_set_new(o, "bytes", json_integer((json_int_t)size));
        json_object_set_new(o, "max_depth", json_integer(t.max_depth));
        json_object_set_new(o, "octree_nodes", json_integer((json_int_t)t.node_count));
        cli_print_json(o);
    }
    cli_note(ctx, "wrote %s: terrain.dat replaced (%zu bytes, MaxDepth %u, %llu nodes)",
             write ? pos[0] : output, size, t.max_depth, (unsigned long long)t.node_count);
    trn_stationeers_dispose(&t);
    return CLI_EXIT_OK;
}

static int cmd_from_heightfield(cli_ctx *ctx, int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    cli_load_options load;
    memset(&load, 0, sizeof load);
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    uint32_t world_depth = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(from_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (!(a[0] == '-' && a[1])) {
            if (!in)
                in = a;
            else if (!out)
                out = a;
            else
                return cli_usage_error(ctx, "takes IN and OUT.dat; unexpected '%s'", a);
            continue;
        }
        static const char *const names[] = {"--max-depth", "--voxel-size", "--base", "--crust",
                                            "--bedrock",   "--world",      NULL};
        if (!cli_known_option(ctx, a, names)) return CLI_EXIT_USAGE;
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        uint32_t u;
        if (strcmp(a, "--world") == 0) {
            if (!(world_depth = cli_stationeers_world_depth(ctx, v))) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--max-depth") == 0) {
            if (!cli_parse_u32(ctx, a, v, &u)) return CLI_EXIT_USAGE;
            if (u < 1 || u > 14)
                return cli_usage_error(ctx, "--max-depth must be 1 to 14, not %u", u);
            fo.max_depth = u;
        } else if (strcmp(a, "--voxel-size") == 0) {
            if (!cli_parse_positive(ctx, a, v, &fo.voxel_size)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--base") == 0) {
            if (!cli_parse_double(ctx, a, v, &fo.base)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--crust") == 0) {
            if (!cli_parse_u32(ctx, a, v, &fo.crust_depth)) return CLI_EXIT_USAGE;
        } else if (strcmp(a, "--bedrock") == 0) {
            if (!cli_parse_u32(ctx, a, v, &fo.bedrock_layers)) return CLI_EXIT_USAGE;
        } else if ((c = cli_load_option(ctx, a, v, &load)) <= 0) {
            return c < 0 ? CLI_EXIT_USAGE : cli_usage_error(ctx, "unknown option '%s'", a);
        }
    }
    if (!in || !out) return cli_usage_error(ctx, "needs IN and OUT.dat");
    if (world_depth && fo.max_depth)
        return cli_usage_error(ctx, "--world and --max-depth both set the MaxDepth; give one");
    int rc = cli_input(ctx, in);
    if (rc) return rc;
    fo.max_samples = load.max_samples; /* 0: the default */
    if (world_depth) {
        cli_terrain w;
        rc = cli_load_terrain(ctx, in, &load, &w);
        if (rc) return rc;
        rc = cli_stationeers_write_world(ctx, &w, out, world_depth, &fo);
        cli_terrain_dispose(&w);
        if (!rc) rc = cli_commit(ctx);
        if (!rc && ctx->json) {
            json_t *o = json_object();
            json_object_set_new(o, "input", cli_json_string(in));
            json_object_set_new(o, "output", cli_json_string(out));
            json_object_set_new(o, "max_depth", json_integer(world_depth));
            cli_print_json(o);
        }
        return rc;
    }
    const char *out_file = cli_output(ctx, out);
    if (!out_file) return CLI_EXIT_FAIL;
    /* Without --max-depth, the smallest of the game's world sizes. */
    if (!fo.max_depth) fo.min_depth = TRN_STATIONEERS_WORLD_SMALL;
    cli_terrain t;
    rc = cli_load_terrain(ctx, in, &load, &t);
    if (rc) return rc;
    trn_stationeers_terrain dat;
    trn_stationeers_field_report rep;
    trn_error e;
    trn_status st = trn_stationeers_from_field(&t.field, &fo, &dat, &rep, cli_progress, ctx, &e);
    uint32_t sx = t.field.cells_x + 1, sz = t.field.cells_z + 1;
    cli_terrain_dispose(&t);
    if (st == TRN_OK) st = trn_stationeers_write(out_file, &dat, &e);
    cli_progress_end(ctx);
    rc = st ? cli_fail(ctx, &e) : cli_commit(ctx);
    if (rc) {
        trn_stationeers_dispose(&dat);
        return rc;
    }
    unsigned long long side = 1ull << dat.max_depth;
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "output", cli_json_string(out));
        json_object_set_new(o, "grid", json_pack("[ii]", (int)sx, (int)sz));
        json_object_set_new(o, "max_depth", json_integer(dat.max_depth));
        json_object_set_new(o, "world_size", json_integer((json_int_t)side));
        json_object_set_new(o, "voxel_size", json_real(fo.voxel_size));
        json_object_set_new(o, "base", json_real(fo.base));
        json_object_set_new(o, "octree_nodes", json_integer((json_int_t)dat.node_count));
        json_object_set_new(o, "branches", json_integer((json_int_t)dat.branch_count));
        json_object_set_new(o, "leaves", json_integer((json_int_t)dat.leaf_count));
        json_object_set_new(o, "bytes", json_integer((json_int_t)(dat.nodes_size + 8)));
        json_object_set_new(o, "clamped_low", json_integer((json_int_t)rep.clamped_low));
        json_object_set_new(o, "clamped_high", json_integer((json_int_t)rep.clamped_high));
        json_object_set_new(o, "extended_columns", json_integer((json_int_t)rep.extended));
        cli_print_json(o);
    } else {
        if (rep.clamped_low || rep.clamped_high)
            cli_note(ctx,
                     "note: %llu samples raised to the bedrock (%u voxels above base %g m), %llu "
                     "lowered to the world top (%llu voxels)",
                     (unsigned long long)rep.clamped_low, fo.bedrock_layers, fo.base,
                     (unsigned long long)rep.clamped_high, side);
        if (rep.extended)
            cli_note(ctx,
                     "note: %u x %u samples on %llu x %llu columns: %llu columns repeat the "
                     "edge",
                     sx, sz, side, side, (unsigned long long)rep.extended);
        cli_note(ctx, "wrote %s (MaxDepth %u, %llu^3 voxels of %g m, %llu nodes)", out,
                 dat.max_depth, side, fo.voxel_size, (unsigned long long)dat.node_count);
        if (trn_stationeers_world_files(dat.max_depth) > 1)
            cli_note(ctx,
                     "note: the game keeps a MaxDepth-%u world as %u base files; --world %s "
                     "writes them into a folder",
                     dat.max_depth, trn_stationeers_world_files(dat.max_depth),
                     dat.max_depth == TRN_STATIONEERS_WORLD_MEDIUM ? "medium" : "large");
    }
    trn_stationeers_dispose(&dat);
    return CLI_EXIT_OK;
}

int cli_verb_stationeers(cli_ctx *ctx, int argc, char **argv)
{
    static const struct {
        const char *name, *label;
        sub_fn fn;
    } subs[] = {
        {"extract", "stationeers extract", cmd_extract},
        {"replace", "stationeers replace", cmd_replace},
        {"from-heightfield", "stationeers from-heightfield", cmd_from_heightfield},
    };
    const int at = cli_sub_verb_at(ctx, argc, argv);
    if (at < 0) return CLI_EXIT_USAGE;
    if (at >= argc) {
        if (ctx->json)
            return cli_usage_error(ctx, "needs a sub-verb: extract, replace or from-heightfield");
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
    return cli_usage_error(ctx, "unknown sub-verb '%s': use extract, replace or from-heightfield",
                           argv[at]);
}
