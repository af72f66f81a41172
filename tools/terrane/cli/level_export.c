/* Any loaded terrain (a DEM, a Unity asset, an octree) into a BeamNG level, then validated. */
#include "level_export.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/beamng.h"
#include "terrane/beamng_level.h"
#include "terrane/io.h"

const char *cli_level_spec_dir(const char *spec)
{
    return spec && strncmp(spec, "beamng:", 7) == 0 && spec[7] ? spec + 7 : NULL;
}

static bool pow2(uint32_t v)
{
    return v && (v & (v - 1u)) == 0;
}

void cli_note_scaffold(cli_ctx *ctx, const trn_beamng_level_result *res)
{
    if (res->objects_added)
        cli_note(ctx, "scaffold: %u object(s) and group(s) added under %s/main", res->objects_added,
                 res->level_dir);
    if (res->spawn_added)
        cli_note(ctx, "scaffold: spawn point at (%.3f, %.3f, %.3f)%s", res->spawn_position[0],
                 res->spawn_position[1], res->spawn_position[2],
                 res->spawn_dry ? "" : ", over water: no dry ground was found");
    if (res->info_path[0]) cli_note(ctx, "scaffold: wrote %s", res->info_path);
    if (res->preview_path[0]) cli_note(ctx, "scaffold: wrote %s", res->preview_path);
    if (res->spawn_added && !res->spawn_dry && !ctx->quiet)
        cli_fprintf(stderr,
                    "terrane %s: warning: the whole terrain lies under the sea level or in holes; "
                    "the spawn point is over water at the centre\n",
                    ctx->verb);
}

int cli_write_beamng_level(cli_ctx *ctx, const cli_terrain *t, const char *level_dir,
                           double max_height, double stored_zero)
{
    return cli_write_beamng_level_scaffold(ctx, t, level_dir, max_height, stored_zero, false);
}

int cli_write_beamng_level_scaffold(cli_ctx *ctx, const cli_terrain *t, const char *level_dir,
                                    double max_height, double stored_zero, bool scaffold)
{
    const trn_field *f = &t->field;
    if (f->cells_x != f->cells_z || f->size_x != f->size_z)
        return cli_failf(ctx,
                         "a BeamNG terrain is square with square cells (one squareSize); the "
                         "input is %u x %u samples over %g x %g m: --fit crop (or --fit pad) "
                         "makes it square and keeps the cells square, e.g. --pow2 --fit crop",
                         f->cells_x + 1u, f->cells_z + 1u, f->size_x, f->size_z);
    uint32_t n = f->cells_x + 1u;
    /* 2^k + 1 samples (a recipe's or Unity's grid): drop the far row and column, as generate
     * does, rather than resample. */
    const bool trim = !pow2(n) && pow2(n - 1u);
    if (trim) n--;
    if (!pow2(n) || n < TRN_BEAMNG_MIN_RESOLUTION || n > TRN_BEAMNG_MAX_RESOLUTION)
        return cli_failf(ctx,
                         "BeamNG terrains are a power of two from %u to %u samples a side; the "
                         "input is %u: add --pow2 (or --size NxN) to resample it",
                         TRN_BEAMNG_MIN_RESOLUTION, TRN_BEAMNG_MAX_RESOLUTION, f->cells_x + 1u);
    float lo, hi;
    trn_field_range(f, &lo, &hi);
    const double base = isnan(stored_zero) ? floor((double)lo) : stored_zero;
    const double relief = (double)hi - base;
    double mh = max_height > 0 ? max_height : (relief > 1.0 ? ceil(relief) : 1.0);
    if (relief > mh)
        return cli_failf(ctx,
                         "--max-height %g m cannot hold the terrain's %.3f m of relief (from "
                         "%.3f m); raise it or leave it out",
                         mh, relief, base);
    trn_field g;
    trn_error e;
    if (trn_field_init(&g, n - 1u, n - 1u, f->size_x / f->cells_x * (double)(n - 1u),
                       f->size_z / f->cells_z * (double)(n - 1u), &e))
        return cli_fail(ctx, &e);
    const size_t src_w = (size_t)f->cells_x + 1u;
    for (size_t j = 0; j < n; j++)
        for (size_t i = 0; i < n; i++)
            g.heights[j * n + i] = (float)((double)f->heights[j * src_w + i] - base);
    trn_labels labels;
    memset(&labels, 0, sizeof labels);
    bool have_labels = false;
    if (t->has_labels) {
        if (trn_labels_init(&labels, n - 1u, n - 1u, &e)) {
            trn_field_dispose(&g);
            return cli_fail(ctx, &e);
        }
        trn_status st = TRN_OK;
        for (uint32_t k = 0; k < t->labels.name_count && !st; k++)
            st = trn_labels_add_name(&labels, t->labels.names[k], strlen(t->labels.names[k]), &e);
        for (size_t j = 0; j < n && !st; j++)
            memcpy(labels.values + j * n, t->labels.values + j * src_w, n);
        if (st) {
            trn_labels_dispose(&labels);
            trn_field_dispose(&g);
            return cli_fail(ctx, &e);
        }
        have_labels = true;
    }
    trn_ter ter;
    trn_status st = trn_ter_from_field(&g, mh, have_labels ? &labels : NULL, "default", &ter, &e);
    const double square = g.size_x / g.cells_x;
    trn_field_dispose(&g);
    trn_labels_dispose(&labels);
    if (st) return cli_fail(ctx, &e);
    trn_beamng_level_options lo_opt;
    memset(&lo_opt, 0, sizeof lo_opt);
    lo_opt.level_dir = level_dir;
    lo_opt.max_height = mh;
    lo_opt.square_size = square;
    lo_opt.position_z = base;
    lo_opt.scaffold.enabled = scaffold;
    if (!(lo_opt.writes = cli_write_set(ctx))) {
        trn_ter_dispose(&ter);
        return CLI_EXIT_FAIL;
    }
    trn_beamng_level_result res;
    memset(&res, 0, sizeof res);
    st = trn_beamng_level_write_terrain(&ter, &lo_opt, &res, cli_progress, ctx, &e);
    trn_ter_dispose(&ter);
    cli_progress_end(ctx);
    if (st) return cli_fail(ctx, &e);
    /* Validation reads the level as it is on disk: land it first. */
    int rc = cli_commit(ctx);
    if (rc) return rc;
    if (trim)
        cli_note(ctx, "%u samples a side: the far row and column are left out (%u x %u)", n + 1u, n,
                 n);
    cli_note(ctx,
             "wrote %s (%u x %u, maxHeight %g m, squareSize %g m); TerrainBlock \"%s\" at "
             "position z %g (stored 0)",
             res.ter_path, n, n, mh, square, res.terrain_name, base);
    cli_note_scaffold(ctx, &res);
    trn_findings findings = {NULL, 0, 0};
    st = trn_beamng_validate(level_dir, NULL, &findings, NULL, NULL, &e);
    if (st) {
        trn_findings_dispose(&findings);
        return cli_fail(ctx, &e);
    }
    const size_t errors = trn_findings_count(&findings, TRN_SEVERITY_ERROR);
    for (size_t k = 0; k < findings.count; k++) {
        const trn_finding *x = &findings.items[k];
        if (x->severity == TRN_SEVERITY_INFO || (ctx->quiet && x->severity < TRN_SEVERITY_ERROR))
            continue;
        cli_fprintf(stderr, "terrane %s: validate %s [%s]: %s\n", ctx->verb,
                    trn_severity_name(x->severity), x->check, x->message);
    }
    cli_note(ctx, "validated %s: %zu error(s)", level_dir, errors);
    trn_findings_dispose(&findings);
    return errors ? cli_failf(ctx, "the level %s has %zu validation error(s)", level_dir, errors)
                  : CLI_EXIT_OK;
}
