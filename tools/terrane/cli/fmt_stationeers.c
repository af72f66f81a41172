/* Stationeers terrain.dat and .save for info, convert and render (detection, load, write). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fileio.h"
#include "fmt_stationeers.h"
#include "terrane/beamng.h"
#include "terrane/stationeers.h"

cli_format cli_stationeers_detect(const char *path, const uint8_t *head, size_t head_size)
{
    /* A ZIP: a whole local file header (30 bytes) after its signature; 4 bytes alone are not
     * an archive, and stay an unknown format. */
    if (head_size >= 30 && memcmp(head, "PK\x03\x04", 4) == 0) return CLI_FORMAT_STATIONEERS_SAVE;
    /* The octree has no magic: a .r16 could start with the same bytes, so rasters named by
     * their extension stay rasters. */
    if (cli_raw_type_from_path(path)) return CLI_FORMAT_UNKNOWN;
    if (trn_stationeers_sniff(head, head_size)) return CLI_FORMAT_STATIONEERS_DAT;
    /* A whole file of 4 bytes holding a MaxDepth and nothing else is a terrain.dat cut after
     * its header (the reader says so), unless it reads as a legacy .ter (versions 1..6) and is
     * not named .dat: the name decides between the two readings. */
    size_t len = strlen(path);
    bool named_dat = len >= 4 && strcasecmp(path + len - 4, ".dat") == 0;
    if (head_size == 4 && head[0] <= TRN_STATIONEERS_DEPTH_ABSURD && head[1] == 0 && head[2] == 0 &&
        head[3] == 0 && (named_dat || !trn_ter_sniff(head, head_size)))
        return CLI_FORMAT_STATIONEERS_DAT;
    return CLI_FORMAT_UNKNOWN;
}

/* Read the terrain; max_samples 0 = no sample limit (nothing per sample is built). */
static int read_terrain(cli_ctx *ctx, const char *path, cli_format format, uint64_t max_samples,
                        trn_stationeers_terrain *t)
{
    trn_stationeers_limits limits;
    trn_stationeers_limits_default(&limits);
    limits.max_samples = max_samples;
    trn_error e;
    /* Read through the captured copy of a pipe; messages name the user's path. */
    const char *reader = cli_input_path(path);
    trn_status st = format == CLI_FORMAT_STATIONEERS_SAVE
                        ? trn_stationeers_save_read(reader, &limits, t, &e)
                        : trn_stationeers_read(reader, &limits, t, &e);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

/* "Crust|Dirt" for a node type byte; "None" for 0; unknown bits in hex. */
static const char *type_name(unsigned type, char *buf, size_t size)
{
    static const char *const names[4] = {"Crust", "Dirt", "Macro", "Bedrock"};
    if (type == 0) return "None";
    size_t k = 0;
    buf[0] = 0;
    for (unsigned bit = 0; bit < 4; bit++)
        if (type & (1u << bit))
            k += (size_t)snprintf(buf + k, size - k, "%s%s", k ? "|" : "", names[bit]);
    if (type & ~0x0fu) snprintf(buf + k, size - k, "%s0x%02x", k ? "|" : "", type & ~0x0fu);
    return buf;
}

int cli_stationeers_info(cli_ctx *ctx, const char *path, cli_format format)
{
    /* Everything info prints comes from the tree itself: no heightfield, no sample limit. */
    trn_stationeers_terrain t;
    int rc = read_terrain(ctx, path, format, 0, &t);
    if (rc) return rc;
    trn_stationeers_stats s;
    trn_stationeers_stats_compute(&t, &s);
    unsigned long long side = 1ull << t.max_depth;
    bool save = format == CLI_FORMAT_STATIONEERS_SAVE;
    char tn[64];
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "input_format",
                            cli_json_string(save ? "stationeers-save" : "stationeers-dat"));
        json_object_set_new(o, "max_depth", json_integer(t.max_depth));
        json_object_set_new(o, "world_size", json_integer((json_int_t)side));
        json_object_set_new(o, "octree_bytes", json_integer((json_int_t)t.nodes_size));
        json_object_set_new(o, "octree_nodes", json_integer((json_int_t)t.node_count));
        json_object_set_new(o, "branches", json_integer((json_int_t)s.branches));
        json_object_set_new(o, "leaves", json_integer((json_int_t)s.leaves));
        json_object_set_new(o, "modified_branches", json_integer((json_int_t)s.modified_branches));
        json_object_set_new(o, "modified_leaves", json_integer((json_int_t)s.modified_leaves));
        json_t *depths = json_array();
        for (uint32_t d = 0; d <= t.max_depth; d++)
            json_array_append_new(depths, json_integer((json_int_t)s.leaves_by_depth[d]));
        json_object_set_new(o, "leaves_by_depth", depths);
        json_t *hist = json_array();
        for (int d = 0; d < 256; d++)
            json_array_append_new(hist, json_integer((json_int_t)s.density_leaves[d]));
        json_object_set_new(o, "density_histogram", hist);
        json_object_set_new(o, "solid_threshold", json_integer(TRN_STATIONEERS_SOLID));
        json_object_set_new(o, "solid_voxels", json_real(s.solid_voxels));
        json_t *types = json_object();
        for (unsigned k = 0; k < 256; k++)
            if (s.type_leaves[k])
                json_object_set_new(types, type_name(k, tn, sizeof tn),
                                    json_integer((json_int_t)s.type_leaves[k]));
        json_object_set_new(o, "node_types", types);
        json_object_set_new(o, "vein_count", json_integer((json_int_t)s.veins));
        json_object_set_new(o, "minables", json_integer((json_int_t)s.minables));
        json_object_set_new(o, "active_minables", json_integer((json_int_t)s.active_minables));
        json_t *veins = json_array();
        for (uint32_t v = 0; v < t.vein_count; v++) {
            const trn_stationeers_vein *vn = &t.veins[v];
            json_t *vo = json_object();
            json_object_set_new(vo, "id_hash", json_integer(vn->id_hash));
            json_object_set_new(vo, "world_position",
                                json_pack("[iii]", vn->world_position[0], vn->world_position[1],
                                          vn->world_position[2]));
            json_object_set_new(vo, "cluster_position",
                                json_pack("[iii]", vn->cluster_position[0], vn->cluster_position[1],
                                          vn->cluster_position[2]));
            json_object_set_new(vo, "minables", json_integer(vn->minable_count));
            json_array_append_new(veins, vo);
        }
        json_object_set_new(o, "veins", veins);
        cli_print_json(o);
    } else {
        cli_printf("file:      %s%s\n", path, save ? " (terrain.dat inside the .save)" : "");
        cli_printf("format:    Stationeers terrain.dat (voxel octree, little-endian)%s\n",
                   save ? ", in a .save archive" : "");
        cli_printf("max depth: %u (world %llu x %llu x %llu voxels)\n", t.max_depth, side, side,
                   side);
        cli_printf("nodes:     %llu (%llu branches, %llu leaves), %zu octree bytes\n",
                   (unsigned long long)t.node_count, (unsigned long long)s.branches,
                   (unsigned long long)s.leaves, t.nodes_size);
        cli_printf("modified:  %llu branches, %llu leaves\n",
                   (unsigned long long)s.modified_branches, (unsigned long long)s.modified_leaves);
        cli_printf("leaves by depth:");
        for (uint32_t d = 0; d <= t.max_depth; d++)
            if (s.leaves_by_depth[d])
                cli_printf(" %u:%llu", d, (unsigned long long)s.leaves_by_depth[d]);
        cli_printf("\n");
        uint64_t partial = 0;
        for (int d = 1; d < 255; d++)
            partial += s.density_leaves[d];
        cli_printf(
            "density:   %llu air (0), %llu full (255), %llu partial leaves; %.0f solid voxels "
            "(density >= %u)\n",
            (unsigned long long)s.density_leaves[0], (unsigned long long)s.density_leaves[255],
            (unsigned long long)partial, s.solid_voxels, TRN_STATIONEERS_SOLID);
        for (int b = 0; b < 16; b++) {
            uint64_t c = 0;
            for (int d = b * 16; d < b * 16 + 16; d++)
                c += s.density_leaves[d];
            if (c)
                cli_printf("  %3d..%3d  %llu leaves\n", b * 16, b * 16 + 15, (unsigned long long)c);
        }
        cli_printf("types:    ");
        for (unsigned k = 0; k < 256; k++)
            if (s.type_leaves[k])
                cli_printf(" %s %llu", type_name(k, tn, sizeof tn),
                           (unsigned long long)s.type_leaves[k]);
        cli_printf(" (leaves)\n");
        cli_printf("veins:     %llu, %llu minables (%llu active)\n", (unsigned long long)s.veins,
                   (unsigned long long)s.minables, (unsigned long long)s.active_minables);
    }
    trn_stationeers_dispose(&t);
    return CLI_EXIT_OK;
}

/* "s" unless n is one. */
static const char *plural(double n)
{
    return n == 1 ? "" : "s";
}

/* The octree's contents the heightfield cannot carry, counted, into drops (nothing when
 * nothing is lost). */
static void list_drops(const trn_stationeers_terrain *t, const trn_stationeers_field_report *rep,
                       cli_drops *drops)
{
    trn_stationeers_stats s;
    trn_stationeers_stats_compute(t, &s);
    if (s.veins)
        cli_drops_add(drops, "%llu vein%s with %llu minable%s (%llu active)",
                      (unsigned long long)s.veins, plural((double)s.veins),
                      (unsigned long long)s.minables, plural((double)s.minables),
                      (unsigned long long)s.active_minables);
    uint64_t modified = s.modified_branches + s.modified_leaves;
    if (modified)
        cli_drops_add(drops,
                      "IS_MODIFIED flags on %llu node%s (%llu branch%s; %llu lea%s holding %.0f "
                      "voxel%s)",
                      (unsigned long long)modified, plural((double)modified),
                      (unsigned long long)s.modified_branches, s.modified_branches == 1 ? "" : "es",
                      (unsigned long long)s.modified_leaves, s.modified_leaves == 1 ? "f" : "ves",
                      s.modified_voxels, plural(s.modified_voxels));
    double typed = 0;
    char list[160] = "", tn[64];
    size_t k = 0;
    for (unsigned type = 1; type < 256; type++) {
        if (s.type_voxels[type] == 0) continue;
        typed += s.type_voxels[type];
        if (k < sizeof list)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s %.0f", k ? ", " : "",
                                  type_name(type, tn, sizeof tn), s.type_voxels[type]);
    }
    if (typed > 0)
        cli_drops_add(drops, "node types of %.0f voxel%s (%s)", typed, plural(typed), list);
    if (rep->cave_voxels)
        cli_drops_add(drops,
                      "caves and overhangs: %llu voxel%s of air or partial density below the "
                      "surface in %llu column%s",
                      (unsigned long long)rep->cave_voxels, plural((double)rep->cave_voxels),
                      (unsigned long long)rep->cave_columns, plural((double)rep->cave_columns));
    if (rep->buried_voxels)
        cli_drops_add(drops,
                      "%llu solid voxel%s below the surface not full (density 128..254) in %llu "
                      "column%s",
                      (unsigned long long)rep->buried_voxels, plural((double)rep->buried_voxels),
                      (unsigned long long)rep->buried_columns, plural((double)rep->buried_columns));
    if (rep->floating_voxels)
        cli_drops_add(
            drops, "%llu voxel%s of partial density above the surface in %llu column%s",
            (unsigned long long)rep->floating_voxels, plural((double)rep->floating_voxels),
            (unsigned long long)rep->floating_columns, plural((double)rep->floating_columns));
}

int cli_stationeers_load(cli_ctx *ctx, const char *path, const cli_load_options *opt,
                         cli_format format, cli_terrain *out)
{
    /* The header check names the file before the tree is even read. */
    uint64_t max_samples =
        opt && opt->max_samples ? opt->max_samples : TRN_STATIONEERS_MAX_SAMPLES_DEFAULT;
    trn_stationeers_terrain t;
    int rc = read_terrain(ctx, path, format, max_samples, &t);
    if (rc) return rc;
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    fo.max_samples = max_samples;
    if (opt && opt->square_size > 0) fo.voxel_size = opt->square_size;
    trn_stationeers_field_report rep;
    trn_error e;
    trn_status st = trn_stationeers_to_field(&t, &fo, &out->field, &rep, cli_progress, ctx, &e);
    if (st == TRN_OK) list_drops(&t, &rep, &out->drops);
    trn_stationeers_dispose(&t);
    if (st) {
        if (!e.file[0]) snprintf(e.file, sizeof e.file, "%s", path);
        return cli_fail(ctx, &e);
    }
    if (rep.empty_columns)
        cli_note(ctx, "note: %s: %llu columns hold no solid voxel (height 0)", path,
                 (unsigned long long)rep.empty_columns);
    return CLI_EXIT_OK;
}

uint32_t cli_stationeers_world_depth(cli_ctx *ctx, const char *name)
{
    static const struct {
        const char *name;
        uint32_t depth;
    } worlds[] = {{"small", TRN_STATIONEERS_WORLD_SMALL},   {"1024", TRN_STATIONEERS_WORLD_SMALL},
                  {"medium", TRN_STATIONEERS_WORLD_MEDIUM}, {"2048", TRN_STATIONEERS_WORLD_MEDIUM},
                  {"large", TRN_STATIONEERS_WORLD_LARGE},   {"4096", TRN_STATIONEERS_WORLD_LARGE},
                  {"lunar", TRN_STATIONEERS_WORLD_LARGE}};
    for (size_t k = 0; k < sizeof worlds / sizeof worlds[0]; k++)
        if (strcasecmp(name, worlds[k].name) == 0) return worlds[k].depth;
    cli_usage_error(ctx,
                    "--world takes small (MaxDepth 10, 1024^3 voxels, 1 file), medium (11, "
                    "2048^3, 8 files) or large (12, 4096^3, 64 files; the Lunar world's), not "
                    "'%s'",
                    name);
    return 0;
}

int cli_stationeers_write_world_files(cli_ctx *ctx, const trn_stationeers_terrain *world,
                                      const char *dir)
{
    const uint32_t files = trn_stationeers_world_files(world->max_depth);
    trn_error e;
    if (!files)
        return cli_failf(ctx, "%s: a MaxDepth-%u octree is no world size (10, 11 or 12)", dir,
                         world->max_depth);
    if (trn_mkdir_p(dir, &e) != TRN_OK) return cli_fail(ctx, &e);
    for (uint32_t k = 0; k < files; k++) {
        char path[4200];
        snprintf(path, sizeof path, "%s/Terrain%u.dat", dir, k);
        const char *file = cli_output(ctx, path);
        if (!file) return CLI_EXIT_FAIL;
        trn_stationeers_terrain part;
        if (trn_stationeers_world_part(world, k, &part, NULL, &e) != TRN_OK)
            return cli_fail(ctx, &e);
        trn_status st = trn_stationeers_write(file, &part, &e);
        trn_stationeers_dispose(&part);
        if (st) return cli_fail(ctx, &e);
    }
    if (files == 1)
        cli_note(ctx, "wrote %s/Terrain0.dat: a MaxDepth-10 world (1024^3 voxels) in one file",
                 dir);
    else
        cli_note(ctx,
                 "wrote %s/Terrain0.dat .. Terrain%u.dat: a MaxDepth-%u world (%llu^3 voxels) as "
                 "%u base files of 1024^3 voxels (MaxDepth 10 each, in the order "
                 "docs/stationeers.md gives)",
                 dir, files - 1u, world->max_depth, 1ull << world->max_depth, files);
    return CLI_EXIT_OK;
}

/* Build the octree of t's field; a CLI exit code. */
static int build_octree(cli_ctx *ctx, const cli_terrain *t, const trn_stationeers_field_options *fo,
                        trn_stationeers_terrain *dat, trn_stationeers_field_report *rep)
{
    trn_error e;
    if (trn_stationeers_from_field(&t->field, fo, dat, rep, cli_progress, ctx, &e) != TRN_OK) {
        cli_progress_end(ctx);
        return cli_fail(ctx, &e);
    }
    cli_progress_end(ctx);
    if (rep->clamped_low || rep->clamped_high)
        cli_note(ctx,
                 "note: %llu samples raised to the bedrock (%u voxels), %llu lowered to the "
                 "world top; 'terrane stationeers from-heightfield' has --base and --voxel-size",
                 (unsigned long long)rep->clamped_low, fo->bedrock_layers,
                 (unsigned long long)rep->clamped_high);
    return CLI_EXIT_OK;
}

int cli_stationeers_write_field(cli_ctx *ctx, const cli_terrain *t, const char *out,
                                const trn_stationeers_field_options *given)
{
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    if (given) fo = *given;
    /* A game world unless a depth was chosen: the smallest of MaxDepth 10, 11, 12 that holds it. */
    if (!fo.max_depth && !fo.min_depth) fo.min_depth = TRN_STATIONEERS_WORLD_SMALL;
    trn_stationeers_terrain dat;
    trn_stationeers_field_report rep;
    trn_error e;
    int rc = build_octree(ctx, t, &fo, &dat, &rep);
    if (rc) return rc;
    trn_status st = trn_stationeers_write(out, &dat, &e);
    const uint32_t depth = dat.max_depth;
    trn_stationeers_dispose(&dat);
    if (st) return cli_fail(ctx, &e);
    cli_note(ctx, "wrote %s (MaxDepth %u, %llu x %llu x %llu voxels of %g m, voxel row 0 at %g m)",
             out, depth, 1ull << depth, 1ull << depth, 1ull << depth, fo.voxel_size, fo.base);
    const uint32_t files = trn_stationeers_world_files(depth);
    if (files > 1)
        cli_note(ctx,
                 "note: the game keeps a MaxDepth-%u world as %u base files of MaxDepth 10 "
                 "(Terrain0.dat ...); 'terrane convert %s DIR --world %s' writes them",
                 depth, files, out, depth == TRN_STATIONEERS_WORLD_MEDIUM ? "medium" : "large");
    else if (!files)
        cli_note(ctx,
                 "note: MaxDepth %u is no world size of the game (10, 11 or 12: --world small, "
                 "medium, large)",
                 depth);
    return CLI_EXIT_OK;
}

int cli_stationeers_write_world(cli_ctx *ctx, const cli_terrain *t, const char *dir,
                                uint32_t world_depth, const trn_stationeers_field_options *given)
{
    trn_stationeers_field_options fo;
    trn_stationeers_field_options_default(&fo);
    if (given) fo = *given;
    fo.max_depth = world_depth;
    trn_stationeers_terrain dat;
    trn_stationeers_field_report rep;
    int rc = build_octree(ctx, t, &fo, &dat, &rep);
    if (rc) return rc;
    if (rep.extended)
        cli_note(ctx,
                 "note: %llu of the world's %llu columns lie past the heightmap's edge and "
                 "repeat it",
                 (unsigned long long)rep.extended, 1ull << (2u * world_depth));
    rc = cli_stationeers_write_world_files(ctx, &dat, dir);
    trn_stationeers_dispose(&dat);
    return rc;
}

int cli_stationeers_split(cli_ctx *ctx, const char *in, cli_format format, const char *dir,
                          uint32_t world_depth)
{
    trn_stationeers_terrain t;
    int rc = read_terrain(ctx, in, format, 0, &t);
    if (rc) return rc;
    if (t.max_depth != world_depth) {
        const uint32_t d = t.max_depth;
        trn_stationeers_dispose(&t);
        return cli_failf(ctx,
                         "%s: a MaxDepth-%u octree, not the %u of the world asked for; its "
                         "octree is split, never rebuilt (convert it to a heightfield first to "
                         "rebuild it at another size)",
                         in, d, world_depth);
    }
    rc = cli_stationeers_write_world_files(ctx, &t, dir);
    trn_stationeers_dispose(&t);
    return rc;
}

int cli_stationeers_copy(cli_ctx *ctx, const char *in, cli_format format, const char *out,
                         const char *out_file, const char *reshaping_option)
{
    if (reshaping_option)
        return cli_usage_error(ctx,
                               "%s: converting a Stationeers terrain to terrain.dat copies its "
                               "octree unchanged (veins, node types, modified flags, caves) and "
                               "takes no %s, which would rebuild it from a heightfield without "
                               "them; to do that on purpose: terrane convert %s heights.r32 %s "
                               "..., then terrane stationeers from-heightfield heights.r32 %s",
                               out, reshaping_option, in, reshaping_option, out);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_mapped_file mf;
    memset(&mf, 0, sizeof mf);
    trn_error e;
    char where[1200];
    trn_status st;
    if (format == CLI_FORMAT_STATIONEERS_SAVE) {
        st = trn_stationeers_save_extract(cli_input_path(in), 0, &data, &size, &e);
        snprintf(where, sizeof where, "%s:terrain.dat", in);
    } else {
        st = trn_mapped_file_open(&mf, cli_input_path(in), 0, &e);
        data = (uint8_t *)mf.data;
        size = mf.size;
        snprintf(where, sizeof where, "%s", in);
    }
    if (st) return cli_fail(ctx, &e);
    /* Parse to check it (no heightfield is built: no sample limit), then copy the very bytes:
     * parse + encode is byte-exact, so this is the file the reader accepted. */
    trn_stationeers_limits limits;
    trn_stationeers_limits_default(&limits);
    limits.max_samples = 0;
    trn_stationeers_terrain t;
    st = trn_stationeers_parse(data, size, where, &limits, &t, &e);
    if (st == TRN_OK) st = trn_file_write_atomic(out_file, data, size, &e);
    if (format == CLI_FORMAT_STATIONEERS_SAVE)
        free(data);
    else
        trn_mapped_file_close(&mf);
    if (st) {
        trn_stationeers_dispose(&t);
        return cli_fail(ctx, &e);
    }
    if (ctx->json) {
        /* The shape of convert's report; nothing is dropped. */
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(in));
        json_object_set_new(o, "input_format", cli_json_string(cli_format_name(format)));
        json_object_set_new(o, "output", cli_json_string(out));
        json_object_set_new(o, "output_format",
                            cli_json_string("a Stationeers terrain.dat, copied byte for byte"));
        json_object_set_new(o, "copied_bytes", json_integer((json_int_t)size));
        json_object_set_new(o, "dropped", json_array());
        cli_print_json(o);
    }
    cli_note(ctx,
             "copied the octree of %s to %s unchanged (%zu bytes: MaxDepth %u, %llu nodes, %u "
             "veins, %zu minables)",
             where, out, size, t.max_depth, (unsigned long long)t.node_count, t.vein_count,
             t.minable_count);
    trn_stationeers_dispose(&t);
    return CLI_EXIT_OK;
}
