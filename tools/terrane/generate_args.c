/* terrane generate: its command line read into the run's arguments (gen_args), checked. */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

#include "generate_internal.h"

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

/* ---- arguments ---- */

/* A byte count: a number with an optional KiB, MiB, GiB (powers of 1024) or KB, MB, GB. */
static bool parse_memory(cli_ctx *ctx, const char *option, const char *v, uint64_t *out)
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
        cli_usage_error(ctx, "%s takes a size such as 4GiB, 512MiB or 2000000000, not '%s'",
                        option, v);
        return false;
    }
    *out = (uint64_t)(n * unit);
    return true;
}

int gen_parse_args(cli_ctx *ctx, int argc, char **argv, gen_args *a, bool *help)
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
            a->max_memory = TRN_MEMORY_UNLIMITED;
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
                                            "--tile-cache",
                                            "--max-memory",
                                            "--max-placements",
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
            slot = strncmp(v, "unity:", 6) == 0  ? &a->unity_dir
                   : strncmp(v, "gltf:", 5) == 0 ? &a->gltf_dir
                                                 : &a->export_dir;
        else if (strcmp(arg, "--exclusion") == 0)
            slot = &a->exclusion;
        else if (strcmp(arg, "--cache") == 0)
            slot = &a->cache_dir;
        else if (strcmp(arg, "--scatter-exclusions") == 0)
            slot = &a->scatter_exclusions;
        else if (strcmp(arg, "--tile-cache") == 0)
            slot = &a->tile_cache;
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
            if (!parse_memory(ctx, "--memory", v, &a->memory)) return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--max-memory") == 0) {
            if (!parse_memory(ctx, "--max-memory", v, &a->max_memory)) return CLI_EXIT_USAGE;
        } else if (strcmp(arg, "--max-placements") == 0) {
            uint32_t n;
            if (!cli_parse_u32(ctx, arg, v, &n)) return CLI_EXIT_USAGE;
            if (n < 1) return cli_usage_error(ctx, "--max-placements must be at least 1");
            a->max_placements = n;
        } else if (strcmp(arg, "--max-work") == 0) {
            if (!cli_parse_max_work(ctx, v, &a->max_work)) return CLI_EXIT_USAGE;
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
        !a->gltf_dir && !a->roles && !a->mask_count)
        return cli_usage_error(ctx,
                               "nothing to write: give -o OUT (.png, .r16, .r32, .ter or .dat), "
                               "--biomes, --preview, --roles, --exclusion, --mask or --export");
    if (a->export_dir) {
        if (strncmp(a->export_dir, "beamng:", 7) != 0 || !a->export_dir[7])
            return cli_usage_error(ctx,
                                   "--export takes beamng:DIR/levels/NAME (the level folder), "
                                   "unity:DIR or, with --tiles, gltf:DIR, not '%s'",
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
    if (a->gltf_dir) {
        if (!a->gltf_dir[5])
            return cli_usage_error(ctx, "--export gltf:DIR needs the folder to write into");
        a->gltf_dir += 5;
        if (!a->tiles)
            return cli_usage_error(ctx, "--export gltf:DIR writes a tiled run's tiles: give "
                                        "--tiles N ('terrane mesh RECIPE -o OUT.glb' meshes the "
                                        "whole grid)");
    }
    /* Outputs never overwrite each other (the run's input guard keeps them off the recipe). */
    const char *outs[9] = {a->out,       a->biomes,    a->preview,   a->export_dir, a->exclusion,
                           a->cache_dir, a->unity_dir, a->roles,     a->gltf_dir};
    for (int k = 0; k < 9; k++) {
        if (!outs[k]) continue;
        for (int l = 0; l < k; l++)
            if (outs[l] && cli_same_file(outs[k], outs[l]))
                return cli_usage_error(ctx, "two outputs name the same file: %s", outs[k]);
    }
    if (a->memory && !a->tiles)
        return cli_usage_error(ctx, "--memory is the budget of a tiled run: give --tiles N too");
    if (a->tile_cache && !a->tiles)
        return cli_usage_error(ctx, "--tile-cache is where a tiled run keeps its tiles: give "
                                    "--tiles N too");
    if (a->tiles) {
        if (a->out ? !(ends_with(a->out, ".tif") || ends_with(a->out, ".tiff"))
                   : !a->unity_dir && !a->export_dir && !a->gltf_dir)
            return cli_usage_error(ctx, "--tiles writes one Cloud-Optimized GeoTIFF (-o "
                                        "OUT.tif), Unity terrain tiles (--export unity:DIR), "
                                        "BeamNG levels (--export beamng:DIR/levels/NAME) and "
                                        "glTF meshes (--export gltf:DIR) per tile: give -o "
                                        "OUT.tif");
        if (a->biomes || a->preview || a->exclusion || a->roles || a->mask_count ||
            a->cache_dir)
            return cli_usage_error(ctx, "--tiles writes -o OUT.tif and engine tiles only (no "
                                        "--biomes, --preview, --roles, --exclusion, --mask or "
                                        "--cache; --export unity, beamng and gltf write their "
                                        "tiles)");
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
