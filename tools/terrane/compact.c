/* terrane compact: merge consecutive stroke entries with the same settings, proven unchanged. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "recipe/recipe_internal.h"
#include "terrane/generate.h"
#include "terrane/recipe.h"

static const char *const help_text =
    "usage: terrane compact FILE [--write] [--format text|json]\n"
    "\n"
    "Rewrite the stroke data of a recipe or Terrain asset document (FILE.terrain.json) in the\n"
    "compact form: consecutive entries of \"regions\", \"edits\" or \"exclusions\" with the same\n"
    "settings (type, layer, radius, strength, falloff and the kind's own fields) become one\n"
    "entry whose \"points\" are theirs in order. Repeated and overlapping stamps are kept (they\n"
    "change the result); protection snapshots are never merged. Every other field is kept,\n"
    "keys in their order.\n"
    "\n"
    "Before printing or writing, both documents are generated and their heights, biomes,\n"
    "biome sources, rules, water distance and exclusion mask compared byte for byte; any\n"
    "difference refuses the rewrite. Their cache keys are the same too.\n"
    "\n"
    "options:\n"
    "  --write         save the compact document over FILE (atomically) instead of printing it\n"
    "  --format json   print a summary as JSON on stdout (with the document unless --write)\n"
    "\n"
    "exit status: 0 printed or written (or already compact), 1 unreadable, invalid, or the\n"
    "results differ, 2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane compact landscape.terrain.json > compact.terrain.json\n"
    "  terrane compact landscape.terrain.json --write\n";

static const char *const sections[3] = {"regions", "edits", "exclusions"};

static size_t bom_length(const uint8_t *s, size_t size)
{
    return size >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF ? 3 : 0;
}

/* Append the entry's stamp positions ("points" pairs, or its "center") to points. */
static bool append_positions(json_t *points, const json_t *entry)
{
    const json_t *list = json_object_get(entry, "points");
    if (list) {
        for (size_t i = 0; i < json_array_size(list); i++)
            if (json_array_append_new(points, json_deep_copy(json_array_get(list, i))) != 0)
                return false;
        return true;
    }
    return json_array_append_new(points, json_deep_copy(json_object_get(entry, "center"))) == 0;
}

/* Merge runs of one section in place. strokes are the parsed entries of that section, in the
 * same order. *before / *after count entries. */
static bool compact_section(json_t *robj, const char *name, const trn_stroke *strokes,
                            size_t *before, size_t *after)
{
    json_t *arr = json_object_get(robj, name);
    if (!arr) return true;
    size_t n = json_array_size(arr);
    *before += n;
    json_t *out = json_array();
    if (!out) return false;
    size_t i = 0;
    while (i < n) {
        size_t end = i + 1;
        uint64_t count = strokes[i].point_count;
        while (end < n && trn_rcp_strokes_mergeable(&strokes[i], &strokes[end]) &&
               count + strokes[end].point_count <= TRN_RCP_MAX_POINTS)
            count += strokes[end++].point_count;
        json_t *first = json_array_get(arr, i);
        if (end == i + 1) {
            if (json_array_append(out, first) != 0) goto fail;
        } else {
            /* The first entry's keys in their order; "center" becomes "points". */
            json_t *merged = json_copy(first);
            json_t *points = json_array();
            bool ok = merged && points;
            for (size_t k = i; ok && k < end; k++)
                ok = append_positions(points, json_array_get(arr, k));
            if (ok) {
                json_object_del(merged, "center");
                ok = json_object_set(merged, "points", points) == 0;
            }
            json_decref(points);
            if (!ok || json_array_append_new(out, merged) != 0) {
                json_decref(merged);
                goto fail;
            }
        }
        i = end;
    }
    *after += json_array_size(out);
    if (json_object_set_new(robj, name, out) != 0) return false;
    return true;
fail:
    json_decref(out);
    return false;
}

/* Byte comparison of everything generation produced; NULL names the first difference. */
static const char *first_difference(const trn_generated *a, const trn_generated *b)
{
    if (a->field.cells_x != b->field.cells_x || a->field.cells_z != b->field.cells_z) return "grid";
    size_t n = trn_grid_samples_x(a->field.cells_x) * trn_grid_samples_x(a->field.cells_z);
    if (memcmp(a->field.heights, b->field.heights, n * sizeof *a->field.heights) != 0)
        return "heights";
    if (memcmp(a->biomes.values, b->biomes.values, n) != 0) return "biomes";
    if ((a->sources == NULL) != (b->sources == NULL) ||
        (a->sources && memcmp(a->sources, b->sources, n) != 0))
        return "biome sources";
    if ((a->rule_index == NULL) != (b->rule_index == NULL) ||
        (a->rule_index && memcmp(a->rule_index, b->rule_index, n * sizeof *a->rule_index) != 0))
        return "rules";
    if ((a->water_distance == NULL) != (b->water_distance == NULL) ||
        (a->water_distance &&
         memcmp(a->water_distance, b->water_distance, n * sizeof *a->water_distance) != 0))
        return "water distance";
    if ((a->exclusion == NULL) != (b->exclusion == NULL) ||
        (a->exclusion && memcmp(a->exclusion, b->exclusion, n) != 0))
        return "exclusion mask";
    if (a->sea_level != b->sea_level) return "sea level";
    return NULL;
}

int cli_verb_compact(cli_ctx *ctx, int argc, char **argv)
{
    const char *path = NULL;
    bool write = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--write") == 0) {
            write = true;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (path) {
            return cli_usage_error(ctx, "takes one document; unexpected '%s'", a);
        } else {
            path = a;
        }
    }
    if (!path)
        return cli_usage_error(ctx, "needs a recipe or Terrain asset document, such as "
                                    "'terrane compact landscape.terrain.json'");

    trn_error err;
    trn_error_clear(&err);
    uint8_t *data = NULL;
    size_t size = 0;
    trn_recipe before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    trn_generated gen_before, gen_after;
    memset(&gen_before, 0, sizeof gen_before);
    memset(&gen_after, 0, sizeof gen_after);
    json_t *root = NULL;
    trn_rcp_buf text = {0};
    char *key_text_a = NULL, *key_text_b = NULL;
    int rc = CLI_EXIT_FAIL;
    trn_document_kind kind;

    if (trn_file_read_all(path, TRN_RCP_MAX_FILE_SIZE, &data, &size, &err) ||
        trn_recipe_parse((const char *)data, size, path, &before, &kind, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    size_t bom = bom_length(data, size);
    root = json_loadb((const char *)data + bom, size - bom, JSON_REJECT_DUPLICATES, NULL);
    json_t *robj = kind == TRN_DOCUMENT_TERRAIN_ASSET ? json_object_get(root, "recipe") : root;
    if (!robj) { /* it parsed above, so only memory can fail here */
        rc = cli_failf(ctx, "out of memory reading '%s'", path);
        goto done;
    }
    size_t entries_before = 0, entries_after = 0, offset = 0;
    for (int s = 0; s < 3; s++) {
        size_t n = json_array_size(json_object_get(robj, sections[s]));
        if (offset + n > before.stroke_count ||
            !compact_section(robj, sections[s], before.strokes + offset, &entries_before,
                             &entries_after)) {
            rc = cli_failf(ctx, "out of memory compacting '%s'", path);
            goto done;
        }
        offset += n;
    }
    trn_rcp_emit_json_in_order(&text, root, 2, 0);
    trn_rcp_buf_put(&text, "\n", 1);
    if (text.failed) {
        rc = cli_failf(ctx, "out of memory printing '%s'", path);
        goto done;
    }

    /* The proof: the rewritten document reads back to the same recipe meaning and generates
     * the same bytes. */
    if (trn_recipe_parse(text.data, text.len, path, &after, NULL, &err)) {
        rc = cli_failf(ctx,
                       "refusing to rewrite '%s': the compact document does not read back "
                       "(%s)",
                       path, err.message);
        goto done;
    }
    if (trn_recipe_canonical_json(&before, &key_text_a, NULL, &err) ||
        trn_recipe_canonical_json(&after, &key_text_b, NULL, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    if (strcmp(key_text_a, key_text_b) != 0) {
        rc = cli_failf(ctx,
                       "refusing to rewrite '%s': the compact recipe's canonical form (and "
                       "cache key) differs from the original",
                       path);
        goto done;
    }
    if (cli_recipe_generate(path, &before, NULL, &gen_before, cli_progress, ctx, &err) ||
        cli_recipe_generate(path, &after, NULL, &gen_after, cli_progress, ctx, &err)) {
        cli_progress_end(ctx);
        rc = cli_fail(ctx, &err);
        goto done;
    }
    cli_progress_end(ctx);
    const char *diff = first_difference(&gen_before, &gen_after);
    if (diff) {
        rc = cli_failf(ctx,
                       "refusing to rewrite '%s': generating the compact document gives "
                       "different %s",
                       path, diff);
        goto done;
    }

    bool changed = entries_after != entries_before;
    if (write && changed && trn_file_write_atomic(path, text.data, text.len, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(path));
        json_object_set_new(o, "entries_before", json_integer((json_int_t)entries_before));
        json_object_set_new(o, "entries_after", json_integer((json_int_t)entries_after));
        json_object_set_new(o, "strokes", json_integer(before.stroke_count));
        json_object_set_new(o, "identical", json_true());
        json_object_set_new(o, "written", json_boolean(write && changed));
        if (!write) json_object_set(o, "document", root);
        cli_print_json(o);
    } else {
        if (!write) fwrite(text.data, 1, text.len, stdout);
        if (!changed)
            cli_note(ctx, "%s: already compact (%zu entries)", path, entries_before);
        else
            cli_note(ctx, "%s: %zu entries -> %zu, generation checked identical%s", path,
                     entries_before, entries_after, write ? "; written" : "");
    }
    rc = CLI_EXIT_OK;

done:
    free(data);
    json_decref(root);
    trn_rcp_buf_free(&text);
    free(key_text_a);
    free(key_text_b);
    trn_recipe_dispose(&before);
    trn_recipe_dispose(&after);
    trn_generated_dispose(&gen_before);
    trn_generated_dispose(&gen_after);
    return rc;
}
