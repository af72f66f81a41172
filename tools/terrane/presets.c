/* terrane presets / apply-preset: list presets, and patch a scene's inline terrain recipe. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/fileio.h"
#include "core/json_pos.h"
#include "recipe/recipe_internal.h"
#include "terrane/presets.h"

static const char *const presets_help =
    "usage: terrane presets [PROJECT] [--format text|json]\n"
    "\n"
    "List the built-in presets (builtin://terrain/...) and, given a PROJECT folder, its\n"
    "terrain_preset assets: every NAME.asset.json manifest whose settings.content_type (or,\n"
    "in the older form, \"type\") is \"terrain_preset\" names its preset document in \"source\";\n"
    "its id is asset:// followed by the manifest's path in the project without .asset.json.\n"
    "Each preset shows its name, description and a summary of its biomes and rules. A project\n"
    "without presets lists none and succeeds. A built-in preset's id stands for its whole\n"
    "recipe wherever a verb takes a recipe (generate, inspect, stats, mesh, cook, ...).\n"
    "\n"
    "exit status: 0 listed, 1 a preset or manifest does not read, 2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane presets\n"
    "  terrane presets mygame --format json\n"
    "  terrane generate builtin://terrain/basin --resolution 1024x1024 -o basin.png\n";

static const char *const apply_help =
    "usage: terrane apply-preset PROJECT --preset ID [--entity ID] [--keep-edits|--clear-edits]\n"
    "                            [--write] [--format text|json]\n"
    "\n"
    "Merge a preset (builtin://terrain/NAME or a project's asset://...) into the inline recipe\n"
    "of a terrain in the project's scenes (*.scene.json: {\"entities\": [{\"id\", \"components\":\n"
    "{\"Terrain3D\": {\"recipe\": {...}}}}]}) and stamp preset_id and preset_version. Regions,\n"
    "edits and exclusions stay the recipe's own; the merged recipe must validate as a whole.\n"
    "Only the recipe value's bytes change: every other byte of the scene file is kept. A\n"
    "terrain that names an asset (\"asset\": \"asset://...\") is not followed yet.\n"
    "\n"
    "options:\n"
    "  --preset ID     the preset to apply (see 'terrane presets PROJECT')\n"
    "  --entity ID     the terrain entity, needed when the project has more than one\n"
    "  --keep-edits    a preset that changes the grid keeps radial strokes where they are\n"
    "  --clear-edits   a preset that changes the grid drops regions, edits and exclusions\n"
    "                  (without either, a grid change with strokes is refused; protection\n"
    "                  snapshots refuse --keep-edits)\n"
    "  --write         save the patched scene (atomically) instead of printing it\n"
    "  --format json   print a summary as JSON (scene, entity, preset, byte range)\n"
    "\n"
    "exit status: 0 printed or written, 1 not found, refused or invalid, 2 usage error.\n"
    "\n"
    "examples:\n"
    "  terrane apply-preset mygame --preset builtin://terrain/rolling-hills\n"
    "  terrane apply-preset mygame --preset asset://presets/lowland --entity ground --write\n";

/* ---- terrane presets ------------------------------------------------------------------- */

json_t *cli_preset_json(const trn_preset *p)
{
    json_t *o = json_object();
    json_t *biomes = json_array(), *rules = json_array();
    if (!o || !biomes || !rules) {
        json_decref(o);
        json_decref(biomes);
        json_decref(rules);
        return NULL;
    }
    json_object_set_new(o, "id", cli_json_string(p->id));
    json_object_set_new(o, "name", cli_json_string(p->name));
    if (p->label) json_object_set_new(o, "label", cli_json_string(p->label));
    json_object_set_new(o, "description",
                        p->description ? cli_json_string(p->description) : json_null());
    json_object_set_new(o, "version", json_real(p->version));
    for (uint32_t i = 0; i < p->recipe.biome_count; i++)
        json_array_append_new(biomes, cli_json_string(p->recipe.biomes[i].name));
    json_object_set_new(o, "biomes", biomes);
    if (p->recipe.default_biome)
        json_object_set_new(o, "default_biome", cli_json_string(p->recipe.default_biome));
    for (uint32_t i = 0; i < p->recipe.rule_count; i++) {
        json_t *r = json_object();
        json_object_set_new(r, "id", cli_json_string(p->recipe.rules[i].id));
        json_object_set_new(r, "biome", cli_json_string(p->recipe.rules[i].biome));
        json_array_append_new(rules, r);
    }
    json_object_set_new(o, "rules", rules);
    json_t *sets = json_loads(p->fields_json, 0, NULL);
    json_t *keys = json_array();
    const char *k;
    json_t *v;
    json_object_foreach(sets, k, v) json_array_append_new(keys, cli_json_string(k));
    json_decref(sets);
    json_object_set_new(o, "sets", keys);
    return o;
}

static void preset_text(const trn_preset *p)
{
    cli_printf("  %s  %s%s%s%s\n", p->id, p->name, p->label ? " [" : "", p->label ? p->label : "",
           p->label ? "]" : "");
    if (p->description) cli_printf("    %s\n", p->description);
    if (p->recipe.biome_count) {
        cli_printf("    biomes (%u):", p->recipe.biome_count);
        for (uint32_t i = 0; i < p->recipe.biome_count; i++)
            cli_printf("%s %s", i ? "," : "", p->recipe.biomes[i].name);
        if (p->recipe.default_biome) cli_printf("; default %s", p->recipe.default_biome);
        cli_printf("\n");
    } else if (p->recipe.default_biome) {
        cli_printf("    default biome %s\n", p->recipe.default_biome);
    }
    if (p->recipe.rule_count) {
        cli_printf("    rules (%u):", p->recipe.rule_count);
        for (uint32_t i = 0; i < p->recipe.rule_count; i++)
            cli_printf("%s %s -> %s", i ? "," : "", p->recipe.rules[i].id, p->recipe.rules[i].biome);
        cli_printf("\n");
    }
}

int cli_verb_presets(cli_ctx *ctx, int argc, char **argv)
{
    const char *project = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(presets_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (a[0] == '-' && a[1]) return cli_usage_error(ctx, "unknown option '%s'", a);
        if (project) return cli_usage_error(ctx, "takes one project folder; unexpected '%s'", a);
        project = a;
    }
    trn_error err;
    trn_error_clear(&err);
    uint32_t nb = trn_builtin_preset_count(), np = 0;
    trn_preset *builtin = calloc(nb, sizeof *builtin), *proj = NULL;
    if (!builtin) return cli_failf(ctx, "out of memory");
    int rc = CLI_EXIT_OK;
    for (uint32_t i = 0; i < nb && rc == CLI_EXIT_OK; i++)
        if (trn_builtin_preset_load(trn_builtin_preset_id(i), &builtin[i], &err))
            rc = cli_fail(ctx, &err);
    if (rc == CLI_EXIT_OK && project && trn_project_presets_load(project, &proj, &np, &err))
        rc = cli_fail(ctx, &err);
    if (rc == CLI_EXIT_OK) {
        if (ctx->json) {
            json_t *root = json_object(), *b = json_array();
            for (uint32_t i = 0; i < nb; i++)
                json_array_append_new(b, cli_preset_json(&builtin[i]));
            json_object_set_new(root, "builtin", b);
            if (project) {
                json_t *p = json_array();
                for (uint32_t i = 0; i < np; i++)
                    json_array_append_new(p, cli_preset_json(&proj[i]));
                json_object_set_new(root, "input", cli_json_string(project));
                json_object_set_new(root, "project_presets", p);
            }
            cli_print_json(root); /* takes the reference */
        } else {
            cli_printf("built-in presets (%u):\n", nb);
            for (uint32_t i = 0; i < nb; i++)
                preset_text(&builtin[i]);
            if (project) {
                cli_printf("project presets in %s (%u)%s\n", project, np, np ? ":" : "");
                for (uint32_t i = 0; i < np; i++)
                    preset_text(&proj[i]);
            }
        }
    }
    trn_presets_free(builtin, nb);
    trn_presets_free(proj, np);
    return rc;
}

/* ---- terrane apply-preset --------------------------------------------------------------- */

typedef struct terrain_ref {
    char *scene;  /* path */
    char *entity; /* entity id */
    size_t index; /* in "entities" */
    bool inline_recipe;
    char *asset; /* the asset id when not inline */
} terrain_ref;

typedef struct scan {
    terrain_ref *items;
    size_t count, cap;
} scan;

static void scan_free(scan *s)
{
    for (size_t i = 0; i < s->count; i++) {
        free(s->items[i].scene);
        free(s->items[i].entity);
        free(s->items[i].asset);
    }
    free(s->items);
}

static char *dup_s(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* An error at a path in a scene file, with its position. */
static int scene_fail(cli_ctx *ctx, const char *path, const uint8_t *data, size_t size,
                      const trn_json_step *steps, size_t depth, const char *msg)
{
    trn_json_pos pos;
    trn_json_locate((const char *)data, size, steps, depth, TRN_JSON_VALUE, &pos);
    trn_json_path p = {{{0}}, 0};
    for (size_t i = 0; i < depth; i++)
        p.steps[p.depth++] = steps[i];
    char where[200];
    trn_json_path_format(&p, where, sizeof where);
    return cli_failf(ctx, "%s:%d:%d: %s: %s", path, pos.line, pos.column, where, msg);
}

static int read_scene(cli_ctx *ctx, const char *path, scan *s)
{
    trn_error err;
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_file_read_all(path, TRN_RCP_MAX_FILE_SIZE, &data, &size, &err))
        return cli_fail(ctx, &err);
    size_t bom = size >= 3 && data[0] == 0xEF && data[1] == 0xBB && data[2] == 0xBF ? 3 : 0;
    json_error_t je;
    json_t *root = json_loadb((const char *)data + bom, size - bom, JSON_REJECT_DUPLICATES, &je);
    int rc = CLI_EXIT_OK;
    json_t *ents = json_object_get(root, "entities");
    if (!root) {
        rc = cli_failf(ctx, "%s:%d:%d: invalid JSON: %s", path, je.line, je.column, je.text);
    } else if (!json_is_array(ents)) {
        rc = scene_fail(ctx, path, data, size, NULL, 0,
                        "expected a scene object with an \"entities\" array");
    }
    for (size_t i = 0; rc == CLI_EXIT_OK && i < json_array_size(ents); i++) {
        json_t *e = json_array_get(ents, i);
        json_t *t = json_object_get(json_object_get(e, "components"), "Terrain3D");
        if (!t) continue;
        trn_json_step steps[4] = {{"entities", 0}, {NULL, i}, {"components", 0}, {"Terrain3D", 0}};
        const char *id = json_string_value(json_object_get(e, "id"));
        json_t *asset = json_object_get(t, "asset"), *recipe = json_object_get(t, "recipe");
        if (!id) {
            rc = scene_fail(ctx, path, data, size, steps, 2,
                            "a terrain entity needs a string \"id\"");
        } else if (asset && recipe) {
            rc = scene_fail(ctx, path, data, size, steps, 4,
                            "a terrain has either an \"asset\" reference or an inline \"recipe\", "
                            "never both");
        } else if (!asset && !recipe) {
            rc = scene_fail(ctx, path, data, size, steps, 4,
                            "a terrain needs an \"asset\" reference or an inline \"recipe\"");
        } else if (asset && !json_is_string(asset)) {
            rc = scene_fail(ctx, path, data, size, steps, 4,
                            "\"asset\" must be an asset id such as \"asset://terrain/landscape\"");
        } else if (recipe && !json_is_object(recipe)) {
            rc = scene_fail(ctx, path, data, size, steps, 4, "\"recipe\" must be a recipe object");
        } else {
            if (s->count == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 8;
                terrain_ref *items = realloc(s->items, cap * sizeof *items);
                if (!items) {
                    rc = cli_failf(ctx, "out of memory");
                    break;
                }
                s->items = items;
                s->cap = cap;
            }
            terrain_ref *r = &s->items[s->count++];
            memset(r, 0, sizeof *r);
            r->scene = dup_s(path);
            r->entity = dup_s(id);
            r->index = i;
            r->inline_recipe = recipe != NULL;
            r->asset = asset ? dup_s(json_string_value(asset)) : NULL;
        }
    }
    json_decref(root);
    free(data);
    return rc;
}

static int walk_scenes(cli_ctx *ctx, const char *dir, int depth, scan *s)
{
    if (depth > 16) return CLI_EXIT_OK;
    DIR *d = opendir(dir);
    if (!d) return cli_failf(ctx, "cannot open the project folder '%s'", dir);
    /* Sorted, so "more than one terrain" lists them in a stable order. */
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    int rc = CLI_EXIT_OK;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) break;
            names = grown;
        }
        names[n] = dup_s(e->d_name);
        if (names[n]) n++;
    }
    closedir(d);
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        struct stat sb;
        if (len < 0 || (size_t)len >= sizeof path || stat(path, &sb) != 0) continue;
        if (S_ISDIR(sb.st_mode))
            rc = walk_scenes(ctx, path, depth + 1, s);
        else if (S_ISREG(sb.st_mode) && ends_with(names[i], ".scene.json"))
            rc = read_scene(ctx, path, s);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* End (one past) of the JSON value starting at start: strings and nesting followed. */
static size_t value_end(const char *t, size_t size, size_t start)
{
    int depth = 0;
    bool in_string = false;
    for (size_t i = start; i < size; i++) {
        char c = t[i];
        if (in_string) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{' || c == '[')
            depth++;
        else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return size;
}

int cli_verb_apply_preset(cli_ctx *ctx, int argc, char **argv)
{
    const char *project = NULL, *preset_id = NULL, *entity = NULL;
    bool write = false;
    trn_edit_policy policy = TRN_EDITS_REFUSE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(apply_help, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        if (strcmp(a, "--write") == 0) {
            write = true;
        } else if (strcmp(a, "--keep-edits") == 0 || strcmp(a, "--clear-edits") == 0) {
            trn_edit_policy want = a[2] == 'k' ? TRN_EDITS_KEEP : TRN_EDITS_CLEAR;
            if (policy != TRN_EDITS_REFUSE && policy != want)
                return cli_usage_error(ctx, "--keep-edits and --clear-edits exclude each other");
            policy = want;
        } else if (strcmp(a, "--preset") == 0 || strcmp(a, "--entity") == 0) {
            const char *v = cli_option_value(ctx, argc, argv, &i);
            if (!v) return CLI_EXIT_USAGE;
            if (a[2] == 'p')
                preset_id = v;
            else
                entity = v;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error(ctx, "unknown option '%s'", a);
        } else if (project) {
            return cli_usage_error(ctx, "takes one project folder; unexpected '%s'", a);
        } else {
            project = a;
        }
    }
    if (!project) return cli_usage_error(ctx, "needs a PROJECT folder");
    if (!preset_id)
        return cli_usage_error(ctx, "needs --preset ID (see 'terrane presets %s')", project);

    trn_error err;
    trn_error_clear(&err);
    trn_preset preset;
    memset(&preset, 0, sizeof preset);
    scan s = {NULL, 0, 0};
    uint8_t *data = NULL;
    size_t size = 0;
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    json_t *tree = NULL;
    trn_rcp_buf out = {0};
    int rc = CLI_EXIT_FAIL;
    struct stat sb;
    if (stat(project, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        rc = cli_failf(ctx, "'%s' is not a project folder", project);
        goto done;
    }
    if (trn_preset_find(project, preset_id, &preset, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    if ((rc = walk_scenes(ctx, project, 0, &s)) != CLI_EXIT_OK) goto done;
    rc = CLI_EXIT_FAIL;
    terrain_ref *pick = NULL;
    size_t matches = 0;
    for (size_t i = 0; i < s.count; i++)
        if (!entity || strcmp(s.items[i].entity, entity) == 0) {
            if (!pick) pick = &s.items[i];
            matches++;
        }
    if (!pick) {
        if (entity)
            rc = cli_failf(ctx, "no terrain entity '%s' in the scenes (*.scene.json) of '%s'",
                           entity, project);
        else
            rc = cli_failf(ctx,
                           "no terrain in the scenes (*.scene.json) of '%s': an entity with a "
                           "Terrain3D component",
                           project);
        goto done;
    }
    if (matches > 1) {
        cli_fprintf(stderr, "terrane %s: %zu terrains%s%s%s; choose one with --entity:\n", ctx->verb,
                matches, entity ? " have the id '" : "", entity ? entity : "", entity ? "'" : "");
        for (size_t i = 0; i < s.count; i++)
            if (!entity || strcmp(s.items[i].entity, entity) == 0)
                cli_fprintf(stderr, "  %s in %s\n", s.items[i].entity, s.items[i].scene);
        goto done;
    }
    if (!pick->inline_recipe) {
        rc = cli_failf(ctx,
                       "terrain '%s' in %s refers to the asset '%s'; apply-preset does not "
                       "follow asset references yet: apply the preset to an inline recipe",
                       pick->entity, pick->scene, pick->asset);
        goto done;
    }
    if (trn_file_read_all(pick->scene, TRN_RCP_MAX_FILE_SIZE, &data, &size, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    /* The recipe value's bytes: located by path, ended by following its nesting. */
    trn_json_step steps[5] = {
        {"entities", 0}, {NULL, pick->index}, {"components", 0}, {"Terrain3D", 0}, {"recipe", 0}};
    trn_json_pos pos;
    if (!trn_json_locate((const char *)data, size, steps, 5, TRN_JSON_VALUE, &pos) ||
        data[pos.offset] != '{') {
        rc = cli_failf(ctx, "cannot locate the recipe of '%s' in %s", pick->entity, pick->scene);
        goto done;
    }
    size_t start = pos.offset, end = value_end((const char *)data, size, start);
    if (trn_recipe_parse((const char *)data + start, end - start, pick->scene, &recipe, NULL,
                         &err)) {
        /* Positions into the scene file, not the recipe alone. */
        trn_json_pos at = trn_json_pos_of_offset((const char *)data, size,
                                                 start + (size_t)(err.offset > 0 ? err.offset : 0));
        rc = cli_failf(ctx, "%s:%d:%d: the recipe of terrain '%s': %s", pick->scene, at.line,
                       at.column, pick->entity, err.message);
        goto done;
    }
    if (trn_recipe_apply_preset(&recipe, &preset, policy, &err)) {
        rc = cli_fail(ctx, &err);
        goto done;
    }
    tree = trn_rcp_recipe_to_json(&recipe);
    if (!tree) {
        rc = cli_failf(ctx, "out of memory");
        goto done;
    }
    /* Keep the value's style: one line stays one line, otherwise pretty-printed at the
     * indentation of the line the recipe's key is on. */
    bool one_line = memchr(data + start, '\n', end - start) == NULL;
    size_t line_start = start;
    while (line_start > 0 && data[line_start - 1] != '\n')
        line_start--;
    size_t spaces = 0;
    while (line_start + spaces < start && data[line_start + spaces] == ' ')
        spaces++;
    trn_rcp_buf value = {0};
    trn_rcp_emit_json(&value, tree, one_line ? 0 : 2, one_line ? 0 : (int)(spaces / 2));
    /* A file written with CRLF line ends gets CRLF inside the new value too. */
    const uint8_t *first_nl = memchr(data, '\n', size);
    bool crlf = first_nl && first_nl > data && first_nl[-1] == '\r';
    size_t new_len = value.len;
    trn_rcp_buf_put(&out, (const char *)data, start);
    for (size_t i = 0, run = 0; i <= value.len; i++) {
        if (i < value.len && !(crlf && value.data[i] == '\n')) continue;
        trn_rcp_buf_put(&out, value.data + run, i - run);
        if (i < value.len) {
            trn_rcp_buf_put(&out, "\r\n", 2);
            new_len++;
        }
        run = i + 1;
    }
    trn_rcp_buf_put(&out, (const char *)data + end, size - end);
    bool failed = value.failed || out.failed;
    trn_rcp_buf_free(&value);
    if (failed) {
        rc = cli_failf(ctx, "out of memory");
        goto done;
    }
    if (write) {
        trn_atomic_file af;
        if (trn_atomic_file_open(&af, pick->scene, &err)) {
            rc = cli_fail(ctx, &err);
            goto done;
        }
        trn_atomic_file_write(&af, out.data, out.len);
        if (trn_atomic_file_commit(&af, &err)) {
            rc = cli_fail(ctx, &err);
            goto done;
        }
    }
    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "input", cli_json_string(pick->scene));
        json_object_set_new(o, "entity", cli_json_string(pick->entity));
        json_object_set_new(o, "preset_id", cli_json_string(preset.id));
        json_object_set_new(o, "preset_version", json_real(preset.version));
        json_object_set_new(o, "recipe_offset", json_integer((json_int_t)start));
        json_object_set_new(o, "recipe_bytes_before", json_integer((json_int_t)(end - start)));
        json_object_set_new(o, "recipe_bytes_after", json_integer((json_int_t)new_len));
        json_object_set_new(o, "written", json_boolean(write));
        if (!write) {
            json_t *text = json_stringn(out.data, out.len);
            json_object_set_new(o, "scene_text", text ? text : json_null());
        }
        cli_print_json(o); /* takes the reference */
    } else if (write) {
        cli_note(ctx, "applied %s to terrain '%s' in %s (recipe bytes %zu..%zu, %zu -> %zu)",
                 preset.id, pick->entity, pick->scene, start, end, end - start, new_len);
    } else {
        fwrite(out.data, 1, out.len, stdout);
        cli_note(ctx,
                 "applied %s to terrain '%s' of %s (recipe bytes %zu..%zu replaced; run "
                 "with --write to save)",
                 preset.id, pick->entity, pick->scene, start, end);
    }
    rc = CLI_EXIT_OK;
done:
    trn_rcp_buf_free(&out);
    json_decref(tree);
    trn_recipe_dispose(&recipe);
    free(data);
    scan_free(&s);
    trn_preset_dispose(&preset);
    return rc;
}
