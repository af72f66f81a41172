/* terrane cook: recipes and a project's Terrain assets generated into *.terrain.bin payloads. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <dirent.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "cook_verb.h"
#include "core/fileio.h"
#include "core/numtext.h"
#include "terrane/cook.h"
#include "terrane/generate.h"
#include "terrane/palette.h"
#include "terrane/runtime.h"
#include "terrane/presets.h"

static const char *const help_text =
    "usage: terrane cook PROJECT_OR_RECIPE -o OUT_DIR [--threads N] [--format json] [-q]\n"
    "\n"
    "Generate terrain and write it as a cooked payload, NAME.terrain.bin, that a game loads\n"
    "without generating anything (docs/payload.md): heights, biomes, exclusions, water,\n"
    "scatter rules and instances, surface roles, and the recipe itself as the edit checkpoint.\n"
    "\n"
    "A recipe file (a bare recipe or a Terrain asset document) cooks into\n"
    "OUT_DIR/NAME.terrain.bin. A project folder cooks every Terrain asset source\n"
    "(*.terrain.json holding \"format_version\", \"id\" and \"recipe\") under it into OUT_DIR\n"
    "at the same relative path, and writes its cooked manifest NAME.asset.json beside it: the\n"
    "source manifest's fields with \"payload\": \"NAME.terrain.bin\" in place of \"source\".\n"
    "A scene (SCENE.scene.json) whose entity ENTITY has an inline Terrain3D recipe cooks\n"
    "it into SCENE.ENTITY.terrain.bin and writes the cooked scene beside it, that entity's\n"
    "Terrain3D naming \"payload\" instead of holding the recipe; an entity placing a Terrain\n"
    "asset keeps \"asset\" and names the asset's payload, one for all its placements. Every\n"
    "asset a scene places must be in the project (an error at the reference's line and\n"
    "column). Folder links that lead out of the project are not followed.\n"
    "\n"
    "A payload already in OUT_DIR made by this generator version from the same recipe (its\n"
    "cache key), palette and material set, and whose every section checks, is kept and\n"
    "reported as up to date; otherwise it is cooked again and the reason is said (missing,\n"
    "generator version changed, recipe changed, palette changed, material set changed,\n"
    "unreadable: what is damaged). Everything written lands together when the run succeeds;\n"
    "nothing is written when it fails.\n"
    "\n"
    "options:\n"
    "  -o, --output DIR    the folder receiving the payloads (created when missing)\n"
    "  --threads N         worker threads (1..1024; default: all cores); payloads never depend\n"
    "                      on it\n"
    "  -q, --quiet         no progress bar or notes\n"
    "  --format json       the report as JSON on stdout\n"
    "\n"
    "examples:\n"
    "  terrane cook examples/recipes/lakeside.json -o build/cooked\n"
    "  terrane cook my-project -o build/my-project-cooked --format json\n";

typedef struct cook_args {
    const char *input, *out_dir;
    int threads;
} cook_args;

static int parse_args(cli_ctx *ctx, int argc, char **argv, cook_args *a, bool *help)
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
        if (arg[0] != '-') {
            if (a->input)
                return cli_usage_error(ctx, "takes one project or recipe; unexpected '%s'", arg);
            a->input = arg;
            continue;
        }
        const bool out = strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0;
        if (!out && strcmp(arg, "--threads") != 0)
            return cli_usage_error(ctx, "unknown option '%s'", arg);
        const char *v = cli_option_value(ctx, argc, argv, &i);
        if (!v) return CLI_EXIT_USAGE;
        if (out) {
            if (a->out_dir) return cli_usage_error(ctx, "%s is given twice", arg);
            a->out_dir = v;
        } else {
            uint32_t t;
            if (!cli_parse_u32(ctx, arg, v, &t)) return CLI_EXIT_USAGE;
            if (t < 1 || t > 1024)
                return cli_usage_error(ctx, "--threads must be 1 to 1024, not %u", t);
            a->threads = (int)t;
        }
    }
    if (!a->input) return cli_usage_error(ctx, "needs a project folder or a recipe file");
    if (!a->out_dir) return cli_usage_error(ctx, "needs -o OUT_DIR, the folder for the payloads");
    return CLI_EXIT_OK;
}

/* ---- the sources ---- */

typedef struct cook_job {
    char *source;  /* the recipe or asset document */
    char *rel_dir; /* its folder relative to the project ("" for the top or a recipe) */
    char *name;    /* NAME of NAME.terrain.bin */
    bool project;  /* write the cooked manifest too */
    char *entity;  /* a scene's entity whose Terrain3D recipe this is (source is the scene) */
} cook_job;

/* A scene found in the project: its cooked copy names every terrain's payload. */
typedef struct cook_scene {
    char *source, *rel_dir;
} cook_scene;

typedef struct job_list {
    cook_job *items;
    size_t count, capacity;
    cook_scene *scenes;
    size_t scene_count;
} job_list;

static char *text_dup(const char *s)
{
    const size_t n = strlen(s);
    char *d = malloc(n + 1u);
    if (d) memcpy(d, s, n + 1u);
    return d;
}

static char *join(const char *a, const char *b)
{
    const size_t na = strlen(a), nb = strlen(b);
    char *s = malloc(na + nb + 2u);
    if (!s) return NULL;
    memcpy(s, a, na);
    size_t k = na;
    if (na && nb && a[na - 1u] != '/') s[k++] = '/';
    memcpy(s + k, b, nb + 1u);
    return s;
}

static bool ends_with(const char *s, const char *tail)
{
    const size_t n = strlen(s), t = strlen(tail);
    return n > t && strcmp(s + n - t, tail) == 0;
}

static bool add_job(job_list *l, const char *source, const char *rel_dir, const char *name,
                    bool project)
{
    if (l->count == l->capacity) {
        const size_t cap = l->capacity ? l->capacity * 2u : 8u;
        cook_job *grown = realloc(l->items, cap * sizeof *grown);
        if (!grown) return false;
        l->items = grown;
        l->capacity = cap;
    }
    cook_job *j = &l->items[l->count];
    j->source = text_dup(source);
    j->rel_dir = text_dup(rel_dir);
    j->name = text_dup(name);
    j->project = project;
    j->entity = NULL;
    if (!j->source || !j->rel_dir || !j->name) {
        free(j->source);
        free(j->rel_dir);
        free(j->name);
        return false;
    }
    l->count++;
    return true;
}

static void jobs_free(job_list *l)
{
    for (size_t k = 0; k < l->scene_count; k++) {
        free(l->scenes[k].source);
        free(l->scenes[k].rel_dir);
    }
    free(l->scenes);
    for (size_t k = 0; k < l->count; k++) {
        free(l->items[k].source);
        free(l->items[k].rel_dir);
        free(l->items[k].name);
        free(l->items[k].entity);
    }
    free(l->items);
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* True when path is a Terrain asset source (by content, not only by name). */
static bool is_terrain_asset(const char *path)
{
    uint8_t *data = NULL;
    size_t size = 0;
    if (trn_file_read_all(path, (size_t)64 << 20, &data, &size, NULL)) return false;
    const bool yes = trn_document_classify((const char *)data, size) == TRN_DOCUMENT_TERRAIN_ASSET;
    free(data);
    return yes;
}

static int stage_bytes(cli_ctx *ctx, const char *dest, const void *data, size_t size);

/* The entities of a scene whose Terrain3D component holds an inline recipe: one job each,
 * cooked as SCENE.ENTITY.terrain.bin beside the cooked scene. An asset reference is cooked with
 * its asset; an empty Terrain3D is a placeholder with nothing to cook. */
static int add_scene_jobs(cli_ctx *ctx, const char *path, const char *rel, const char *file,
                          job_list *jobs)
{
    uint8_t *data = NULL;
    size_t size = 0;
    trn_error e;
    if (trn_file_read_all(path, (size_t)64 << 20, &data, &size, &e)) return cli_fail(ctx, &e);
    /* Every asset reference must name a Terrain asset of the project, at its position. */
    if (trn_scene_assets_check((const char *)data, size, path, &e)) {
        free(data);
        return cli_fail(ctx, &e);
    }
    /* Checked, so it parses: the same bytes (after a byte order mark), read once. */
    const size_t bom = size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    json_error_t je;
    json_t *doc = json_loadb((const char *)data + bom, size - bom, 0, &je);
    free(data);
    if (!doc)
        return cli_failf(ctx, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    const json_t *ents = json_object_get(doc, "entities");
    int rc = CLI_EXIT_OK;
    bool terrains = false;
    for (size_t k = 0; k < json_array_size(ents); k++) {
        const json_t *t =
            json_object_get(json_object_get(json_array_get(ents, k), "components"), "Terrain3D");
        terrains = terrains || json_object_get(t, "recipe") || json_object_get(t, "asset");
    }
    if (terrains) {
        cook_scene *grown = realloc(jobs->scenes, (jobs->scene_count + 1u) * sizeof *grown);
        if (!grown) {
            json_decref(doc);
            return cli_failf(ctx, "out of memory listing %s", path);
        }
        jobs->scenes = grown;
        cook_scene *sc = &jobs->scenes[jobs->scene_count];
        sc->source = text_dup(path);
        sc->rel_dir = text_dup(rel);
        if (!sc->source || !sc->rel_dir) {
            free(sc->source);
            free(sc->rel_dir);
            json_decref(doc);
            return cli_failf(ctx, "out of memory listing %s", path);
        }
        jobs->scene_count++;
    }
    char stem[256];
    snprintf(stem, sizeof stem, "%.*s", (int)(strlen(file) - strlen(".scene.json")), file);
    for (size_t k = 0; !rc && k < json_array_size(ents); k++) {
        const json_t *ent = json_array_get(ents, k);
        const json_t *t = json_object_get(json_object_get(ent, "components"), "Terrain3D");
        const char *id = json_string_value(json_object_get(ent, "id"));
        if (!json_is_object(json_object_get(t, "recipe"))) continue;
        if (!id || !id[0] || strchr(id, '/') || strcmp(id, ".") == 0 || strcmp(id, "..") == 0) {
            rc = cli_failf(ctx,
                           "%s: entities[%zu]: an entity with a Terrain3D recipe needs an id that "
                           "can name its payload (no '/'), found '%s'",
                           path, k, id ? id : "");
            break;
        }
        char name[600];
        snprintf(name, sizeof name, "%s.%s", stem, id);
        if (!add_job(jobs, path, rel, name, false) ||
            !(jobs->items[jobs->count - 1].entity = text_dup(id)))
            rc = cli_failf(ctx, "out of memory listing %s", path);
    }
    json_decref(doc);
    return rc;
}

/* The recipe of a scene entity's Terrain3D component, parsed with the scene's folder as its
 * base (a Heightfield Input's path is relative to the scene). */
static trn_status scene_recipe(const char *scene, const char *entity, trn_recipe *out,
                               trn_error *err)
{
    json_error_t je;
    json_t *doc = json_load_file(scene, 0, &je);
    if (!doc) return trn_error_set(err, TRN_ERR_JSON, scene, -1, "%s", je.text);
    const json_t *ents = json_object_get(doc, "entities");
    const json_t *recipe = NULL;
    for (size_t k = 0; k < json_array_size(ents) && !recipe; k++) {
        const json_t *ent = json_array_get(ents, k);
        const char *id = json_string_value(json_object_get(ent, "id"));
        if (id && strcmp(id, entity) == 0)
            recipe = json_object_get(
                json_object_get(json_object_get(ent, "components"), "Terrain3D"), "recipe");
    }
    char *text = recipe ? json_dumps(recipe, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(doc);
    if (!text)
        return trn_error_set(err, TRN_ERR_NOT_FOUND, scene, -1,
                             "entity '%s' has no Terrain3D recipe any more", entity);
    trn_status st = trn_recipe_parse(text, strlen(text), scene, out, NULL, err);
    free(text);
    if (!st && (st = trn_recipe_set_base_dir_of(out, scene, err))) trn_recipe_dispose(out);
    if (st && err && !strstr(err->message, entity)) {
        char m[sizeof err->message + 600];
        snprintf(m, sizeof m, "entity '%.200s': Terrain3D.recipe: %s", entity, err->message);
        snprintf(err->message, sizeof err->message, "%.*s", (int)sizeof err->message - 1, m);
    }
    return st;
}

/* The payload of job seen from a file in folder rel_dir of the output: "../" for each of
 * rel_dir's parts, then the job's folder and NAME.terrain.bin. */
static bool payload_from(const char *rel_dir, const cook_job *job, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (const char *p = rel_dir; *p;) {
        const char *slash = strchr(p, '/');
        n += (size_t)snprintf(out + n, n < size ? size - n : 0, "../");
        if (!slash) break;
        p = slash + 1;
    }
    const int m = snprintf(out + (n < size ? n : size), n < size ? size - n : 0, "%s%s%s.terrain.bin",
                           job->rel_dir, job->rel_dir[0] ? "/" : "", job->name);
    return m >= 0 && n + (size_t)m < size;
}

/* The cooked copy of a scene: an inline recipe's Terrain3D names its payload instead of
 * carrying the recipe; an asset reference keeps its id and names the asset's payload, the one
 * payload every placement of that asset shares (the runtime loads payloads; it never
 * generates). */
static int write_cooked_scene(cli_ctx *ctx, const cook_args *a, const job_list *jobs,
                              const cook_scene *sc)
{
    json_error_t je;
    json_t *doc = json_load_file(sc->source, JSON_PRESERVE_ORDER, &je);
    if (!doc) return cli_failf(ctx, "%s:%d:%d: %s", sc->source, je.line, je.column, je.text);
    json_t *ents = json_object_get(doc, "entities");
    int rc = CLI_EXIT_OK;
    for (size_t e = 0; !rc && e < json_array_size(ents); e++) {
        json_t *ent = json_array_get(ents, e);
        const char *id = json_string_value(json_object_get(ent, "id"));
        json_t *t = json_object_get(json_object_get(ent, "components"), "Terrain3D");
        const char *asset = json_string_value(json_object_get(t, "asset"));
        char payload[PATH_MAX];
        const cook_job *found = NULL;
        if (json_is_object(json_object_get(t, "recipe"))) {
            for (size_t k = 0; k < jobs->count && !found; k++) {
                const cook_job *j = &jobs->items[k];
                if (j->entity && id && strcmp(j->entity, id) == 0 &&
                    strcmp(j->source, sc->source) == 0)
                    found = j;
            }
            if (!found) continue;
            snprintf(payload, sizeof payload, "%s.terrain.bin", found->name);
            json_object_del(t, "recipe");
        } else if (asset) {
            char source[4096], want[PATH_MAX], have[PATH_MAX];
            trn_error err;
            if (trn_terrain_asset_resolve(sc->source, asset, source, sizeof source, &err) ||
                !realpath(source, want)) {
                rc = cli_failf(ctx, "%s: entities[%zu]: asset '%s' does not resolve", sc->source,
                               e, asset);
                break;
            }
            for (size_t k = 0; k < jobs->count && !found; k++) {
                const cook_job *j = &jobs->items[k];
                if (j->project && !j->entity && realpath(j->source, have) &&
                    strcmp(have, want) == 0)
                    found = j;
            }
            if (!found) {
                rc = cli_failf(ctx,
                               "%s: entities[%zu]: asset '%s' is %s, outside the folder being "
                               "cooked: cook the project that holds both",
                               sc->source, e, asset, source);
                break;
            }
            if (!payload_from(sc->rel_dir, found, payload, sizeof payload)) {
                rc = cli_failf(ctx, "%s: the payload path is too long", sc->source);
                break;
            }
        } else {
            continue; /* a placeholder */
        }
        json_object_set_new(t, "payload", cli_json_string(payload));
    }
    const char *base = strrchr(sc->source, '/');
    base = base ? base + 1 : sc->source;
    char dest[PATH_MAX];
    const int n = snprintf(dest, sizeof dest, "%s%s%s/%s", a->out_dir, sc->rel_dir[0] ? "/" : "",
                           sc->rel_dir, base);
    /* Numbers as written or in their shortest form, never 17-digit noise (0.1, not
     * 0.10000000000000001). */
    char *text = rc ? NULL : trn_json_dumps_shortest(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (rc) return rc;
    const size_t len = text ? strlen(text) : 0;
    char *line = text ? malloc(len + 1) : NULL;
    if (n < 0 || (size_t)n >= sizeof dest || !line) {
        free(text);
        free(line);
        return cli_failf(ctx, "%s: cannot write its cooked copy", sc->source);
    }
    memcpy(line, text, len);
    line[len] = '\n';
    free(text);
    trn_error e;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", dest);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    if (slash && trn_mkdir_p(dir, &e)) {
        free(line);
        return cli_fail(ctx, &e);
    }
    rc = stage_bytes(ctx, dest, line, len + 1);
    free(line);
    return rc;
}

/* Every Terrain asset source under dir (names sorted, hidden folders and out_real skipped). */
static int walk(cli_ctx *ctx, const char *dir, const char *rel, const char *out_real,
                const char *root_real, job_list *jobs, int depth)
{
    if (depth > 64) return cli_failf(ctx, "%s: folders nest more than 64 deep", dir);
    char resolved[PATH_MAX];
    if (out_real && realpath(dir, resolved) && strcmp(resolved, out_real) == 0) return CLI_EXIT_OK;
    DIR *d = opendir(dir);
    if (!d) return cli_failf(ctx, "%s: cannot read the folder", dir);
    char **names = NULL;
    size_t count = 0, cap = 0;
    int rc = CLI_EXIT_OK;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        if (count == cap) {
            cap = cap ? cap * 2u : 32u;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown) {
                rc = cli_failf(ctx, "out of memory listing %s", dir);
                break;
            }
            names = grown;
        }
        if (!(names[count] = text_dup(e->d_name))) {
            rc = cli_failf(ctx, "out of memory listing %s", dir);
            break;
        }
        count++;
    }
    closedir(d);
    if (!rc && count) qsort(names, count, sizeof *names, cmp_names);
    for (size_t k = 0; !rc && k < count; k++) {
        char *path = join(dir, names[k]);
        char *sub = join(rel, names[k]);
        struct stat sb;
        if (!path || !sub) {
            rc = cli_failf(ctx, "out of memory listing %s", dir);
        } else if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) &&
                   !trn_path_inside(root_real, path)) {
            /* A link out of the project is not the project's: never followed. */
            cli_note(ctx, "%s: skipped: a symbolic link to outside the project", path);
        } else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            rc = walk(ctx, path, sub, out_real, root_real, jobs, depth + 1);
        } else if (ends_with(names[k], ".scene.json")) {
            rc = add_scene_jobs(ctx, path, rel, names[k], jobs);
        } else if (ends_with(names[k], ".terrain.json") && is_terrain_asset(path)) {
            char *stem = text_dup(names[k]);
            if (stem) stem[strlen(stem) - strlen(".terrain.json")] = '\0';
            if (!stem || !add_job(jobs, path, rel, stem, true))
                rc = cli_failf(ctx, "out of memory listing %s", dir);
            free(stem);
        }
        free(path);
        free(sub);
    }
    for (size_t k = 0; k < count; k++)
        free(names[k]);
    free(names);
    return rc;
}

/* NAME of a recipe file: its base name without ".terrain.json" or ".json". */
static char *recipe_stem(const char *path)
{
    const char *base = strrchr(path, '/');
    char *stem = text_dup(base ? base + 1 : path);
    if (!stem) return NULL;
    const char *tails[] = {".terrain.json", ".json"};
    for (int k = 0; k < 2; k++)
        if (ends_with(stem, tails[k])) {
            stem[strlen(stem) - strlen(tails[k])] = '\0';
            break;
        }
    return stem;
}

/* ---- one terrain ---- */

/* The asset document's "id", or NULL for a bare recipe. */
static char *asset_id(const char *path)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    const char *id = json_string_value(json_object_get(root, "id"));
    char *out = id ? text_dup(id) : NULL;
    json_decref(root);
    return out;
}

/* The recipe's palette and the material set it names (both left empty without a palette). */
static int load_palette(cli_ctx *ctx, const char *path, const trn_recipe *recipe,
                        trn_palette *palette, trn_material_set *set, bool *has_palette,
                        bool *has_set)
{
    *has_palette = *has_set = false;
    if (!recipe->palette_json) return CLI_EXIT_OK;
    json_error_t je;
    json_t *v = json_loads(recipe->palette_json, JSON_DECODE_ANY, &je);
    trn_error e;
    int rc = CLI_EXIT_OK;
    if (json_is_string(v)) {
        if (trn_palette_resolve(path, json_string_value(v), palette, set, &e))
            rc = cli_fail(ctx, &e);
        else
            *has_set = palette->material_set != NULL;
    } else if (trn_palette_parse(recipe->palette_json, strlen(recipe->palette_json), path, palette,
                                 &e)) {
        rc = cli_failf(ctx, "%s: palette: %s", path, e.message);
    } else if (palette->material_set) {
        /* An inline palette may still name a material set asset. */
        if (trn_material_set_resolve(path, palette->material_set, set, &e))
            rc = cli_fail(ctx, &e);
        else
            *has_set = true;
    }
    json_decref(v);
    *has_palette = rc == CLI_EXIT_OK;
    return rc;
}

/* Why the payload at path must be cooked again, or NULL when it is up to date. */
static const char *stale_reason(const char *path, uint64_t key, uint64_t palette_digest,
                                uint64_t material_digest, const char *terrain_id, char *buf,
                                size_t size)
{
    if (!trn_file_exists(path)) return "missing";
    /* Opened whole, so a damaged section is found (and cooked again), not only the header. */
    trn_payload *p = NULL;
    trn_error e;
    if (trn_payload_open(path, NULL, &p, &e)) {
        snprintf(buf, size, "unreadable: %s", e.message);
        return buf;
    }
    trn_payload_info info;
    trn_payload_get_info(p, &info);
    const char *why = NULL;
    if (info.format_version != TRN_PAYLOAD_FORMAT_VERSION ||
        info.generator_version != TRN_GENERATOR_VERSION ||
        strcmp(info.generator, "terrane " TRN_VERSION_STRING) != 0)
        why = "generator version changed";
    else if (info.cache_key != key)
        why = "recipe changed";
    else if (info.palette_digest != palette_digest)
        why = "palette changed";
    else if (info.material_digest != material_digest)
        why = "material set changed";
    else if (strcmp(info.terrain_id, terrain_id) != 0)
        why = "terrain id changed";
    trn_payload_free(p);
    return why;
}

/* Write bytes to dest through the run's write set. */
static int stage_bytes(cli_ctx *ctx, const char *dest, const void *data, size_t size)
{
    const char *file = cli_output(ctx, dest);
    if (!file) return CLI_EXIT_FAIL;
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(data, 1, size, f) != size) {
        if (f) fclose(f);
        return cli_failf(ctx, "%s: could not write", dest);
    }
    if (fclose(f)) return cli_failf(ctx, "%s: could not write", dest);
    return CLI_EXIT_OK;
}

/* The cooked manifest: the source manifest's fields, "payload" in place of "source". */
static int write_manifest(cli_ctx *ctx, const cook_job *job, const char *dest_dir)
{
    char *src_dir = text_dup(job->source);
    if (!src_dir) return cli_failf(ctx, "out of memory");
    char *slash = strrchr(src_dir, '/');
    if (slash)
        slash[1] = '\0';
    else
        src_dir[0] = '\0';
    char file[PATH_MAX];
    const int flen = snprintf(file, sizeof file, "%s%s.asset.json", src_dir, job->name);
    free(src_dir);
    if (flen < 0 || (size_t)flen >= sizeof file)
        return cli_failf(ctx, "%s: the manifest path is too long", job->source);
    json_error_t je;
    json_t *m = trn_file_exists(file) ? json_load_file(file, 0, &je) : NULL;
    if (m && !json_is_object(m)) {
        json_decref(m);
        m = NULL;
    }
    if (!m) {
        m = json_object();
        json_object_set_new(m, "format_version", json_integer(1));
        json_object_set_new(m, "importer", json_string("terrain_heightfield"));
    }
    char payload[PATH_MAX];
    snprintf(payload, sizeof payload, "%s.terrain.bin", job->name);
    json_object_del(m, "source");
    json_object_set_new(m, "type", json_string("Terrain"));
    json_object_set_new(m, "payload", cli_json_string(payload));
    char *text = trn_json_dumps_shortest(m, JSON_INDENT(2) | JSON_SORT_KEYS);
    json_decref(m);
    if (!text) return cli_failf(ctx, "out of memory writing a manifest");
    char dest[PATH_MAX];
    const int dlen = snprintf(dest, sizeof dest, "%s/%s.asset.json", dest_dir, job->name);
    if (dlen < 0 || (size_t)dlen >= sizeof dest) {
        free(text);
        return cli_failf(ctx, "%s: the manifest path is too long", job->source);
    }
    const size_t n = strlen(text);
    text[n] = '\0';
    /* Unchanged manifests are left alone, so an up-to-date project writes nothing. */
    uint8_t *old = NULL;
    size_t old_size = 0;
    int rc = CLI_EXIT_OK;
    const bool same = trn_file_exists(dest) &&
                      !trn_file_read_all(dest, (size_t)1 << 20, &old, &old_size, NULL) &&
                      old_size == n + 1u && memcmp(old, text, n) == 0 && old[n] == '\n';
    if (!same) {
        char *with_nl = malloc(n + 2u);
        if (!with_nl) {
            rc = cli_failf(ctx, "out of memory writing a manifest");
        } else {
            memcpy(with_nl, text, n);
            with_nl[n] = '\n';
            rc = stage_bytes(ctx, dest, with_nl, n + 1u);
            free(with_nl);
        }
    }
    free(old);
    free(text);
    return rc;
}

typedef struct job_result {
    char payload[PATH_MAX];
    const char *status; /* "cooked" or "up to date" */
    char reason[600];
} job_result;

static int cook_one(cli_ctx *ctx, const cook_args *a, const cook_job *job, job_result *res)
{
    int rc = cli_input(ctx, job->source);
    if (rc) return rc;
    char dest_dir[PATH_MAX];
    int len = snprintf(dest_dir, sizeof dest_dir, "%s%s%s", a->out_dir, job->rel_dir[0] ? "/" : "",
                       job->rel_dir);
    if (len < 0 || (size_t)len >= sizeof dest_dir)
        return cli_failf(ctx, "%s: the output path is too long", job->source);
    len = snprintf(res->payload, sizeof res->payload, "%s/%s.terrain.bin", dest_dir, job->name);
    if (len < 0 || (size_t)len >= sizeof res->payload)
        return cli_failf(ctx, "%s: the output path is too long", job->source);
    trn_error e;
    trn_recipe recipe;
    memset(&recipe, 0, sizeof recipe);
    trn_document_kind kind = TRN_DOCUMENT_UNKNOWN;
    if (job->entity) {
        kind = TRN_DOCUMENT_RECIPE;
        if (scene_recipe(job->source, job->entity, &recipe, &e)) return cli_fail(ctx, &e);
    } else if (trn_recipe_read_source(job->source, &recipe, &kind, &e)) {
        return cli_fail(ctx, &e);
    }
    char *id = kind == TRN_DOCUMENT_TERRAIN_ASSET ? asset_id(job->source) : NULL;
    const char *terrain_id = id ? id : job->name; /* a scene's: SCENE.ENTITY */
    trn_palette palette;
    trn_material_set set;
    memset(&palette, 0, sizeof palette);
    memset(&set, 0, sizeof set);
    bool has_palette = false, has_set = false;
    uint64_t key = 0;
    rc = load_palette(ctx, job->source, &recipe, &palette, &set, &has_palette, &has_set);
    if (!rc && trn_recipe_cache_key(&recipe, &key, &e)) rc = cli_fail(ctx, &e);
    /* The Material documents of the set's and the biomes' materials (found as the palette's
     * project is; a material without a manifest has none, a broken one fails the cook). */
    trn_material docs[TRN_ROLE_COUNT + 256];
    uint32_t doc_count = 0;
    for (int k = 0; !rc && has_set && k < TRN_ROLE_COUNT + (int)recipe.biome_count && k < TRN_ROLE_COUNT + 256; k++) {
        const char *mid = k < TRN_ROLE_COUNT ? set.roles[k] : recipe.biomes[k - TRN_ROLE_COUNT].material;
        bool seen = !mid, no_manifest = false;
        for (uint32_t q = 0; q < doc_count && !seen; q++) seen = strcmp(docs[q].id, mid) == 0;
        if (seen) continue;
        if (!trn_material_find(job->source, mid, &docs[doc_count], &no_manifest, &e))
            doc_count++;
        else if (!no_manifest)
            rc = cli_fail(ctx, &e);
    }
    const uint64_t pd = has_palette ? trn_cook_palette_digest(&palette) : 0;
    const uint64_t md = has_set ? trn_cook_materials_digest(&set, docs, doc_count) : 0;
    const char *why =
        rc ? NULL
           : stale_reason(res->payload, key, pd, md, terrain_id, res->reason, sizeof res->reason);
    if (!rc && trn_mkdir_p(dest_dir, &e)) rc = cli_fail(ctx, &e);
    if (!rc && !why) {
        res->status = "up to date";
        res->reason[0] = '\0';
    } else if (!rc) {
        if (why != res->reason) snprintf(res->reason, sizeof res->reason, "%s", why);
        res->status = "cooked";
        rc = cli_graph_gate(ctx, "cook", job->source, &recipe, kind);
        trn_generated gen;
        memset(&gen, 0, sizeof gen);
        trn_generate_options go;
        memset(&go, 0, sizeof go);
        go.threads = a->threads;
        go.quality = TRN_EROSION_FINAL;
        go.palette = has_palette ? &palette : NULL; /* placed on the final surface */
        go.roles = true;
        bool generated = false;
        if (!rc) {
            trn_status st = trn_recipe_generate(&recipe, &go, &gen, cli_progress, ctx, &e);
            cli_progress_end(ctx);
            if (st)
                rc = cli_fail(ctx, &e);
            else
                generated = true;
        }
        if (!rc) {
            trn_cook_input ci = {&gen,
                                 &recipe,
                                 terrain_id,
                                 has_palette ? &palette : NULL,
                                 has_palette ? &gen.instances : NULL,
                                 gen.roles,
                                 has_set && gen.roles ? &set : NULL,
                                 docs,
                                 doc_count};
            uint8_t *data = NULL;
            size_t size = 0;
            if (trn_cook_encode(&ci, &data, &size, &e)) {
                if (!e.file[0]) snprintf(e.file, sizeof e.file, "%s", job->source);
                rc = cli_fail(ctx, &e);
            } else {
                rc = stage_bytes(ctx, res->payload, data, size);
            }
            free(data);
        }
        if (generated) trn_generated_dispose(&gen);
    }
    if (!rc && job->project) rc = write_manifest(ctx, job, dest_dir);
    for (uint32_t k = 0; k < doc_count; k++) trn_material_dispose(&docs[k]);
    trn_palette_dispose(&palette);
    trn_material_set_dispose(&set);
    trn_recipe_dispose(&recipe);
    free(id);
    return rc;
}

int cli_verb_cook(cli_ctx *ctx, int argc, char **argv)
{
    cook_args a;
    bool help;
    int rc = parse_args(ctx, argc, argv, &a, &help);
    if (help) {
        fputs(help_text, stdout);
        return CLI_EXIT_OK;
    }
    if (rc) return rc;
    cli_keep_freed_memory();
    struct stat sb;
    memset(&sb, 0, sizeof sb); /* a built-in preset's id is a recipe, not a folder */
    if (strncmp(a.input, "builtin://", 10) != 0 && stat(a.input, &sb) != 0)
        return cli_failf(ctx, "%s: no such file or folder", a.input);
    /* The output folder is made where a payload is staged (cook_one), so a run that fails
     * before leaves none behind. */
    job_list jobs = {NULL, 0, 0, NULL, 0};
    if (S_ISDIR(sb.st_mode)) {
        char out_real[PATH_MAX], root_real[PATH_MAX];
        const bool have_out = realpath(a.out_dir, out_real) != NULL;
        if (!realpath(a.input, root_real)) return cli_failf(ctx, "%s: cannot resolve", a.input);
        if (have_out && strcmp(out_real, root_real) == 0)
            return cli_usage_error(ctx,
                                   "the output folder is the project itself (%s); cooked payloads "
                                   "go into a folder of their own, such as -o %s/cooked",
                                   a.out_dir, a.input);
        rc = walk(ctx, a.input, "", have_out ? out_real : NULL, root_real, &jobs, 0);
        if (!rc && jobs.count == 0)
            rc = cli_failf(ctx,
                           "%s: no Terrain asset sources (*.terrain.json with \"format_version\", "
                           "\"id\" and \"recipe\") and no scene with an inline Terrain3D recipe "
                           "under it",
                           a.input);
    } else {
        char *stem = recipe_stem(a.input);
        if (!stem || !add_job(&jobs, a.input, "", stem, false))
            rc = cli_failf(ctx, "out of memory");
        free(stem);
    }
    job_result *results = rc ? NULL : calloc(jobs.count ? jobs.count : 1u, sizeof *results);
    if (!rc && !results) rc = cli_failf(ctx, "out of memory");
    for (size_t k = 0; !rc && k < jobs.count; k++)
        rc = cook_one(ctx, &a, &jobs.items[k], &results[k]);
    /* Each scene with terrains gets its cooked copy, naming their payloads. */
    for (size_t k = 0; !rc && k < jobs.scene_count; k++)
        rc = write_cooked_scene(ctx, &a, &jobs, &jobs.scenes[k]);
    if (!rc) rc = cli_commit(ctx);
    if (!rc && ctx->json) {
        json_t *arr = json_array();
        for (size_t k = 0; k < jobs.count; k++) {
            json_t *o = json_object();
            json_object_set_new(o, "input", cli_json_string(jobs.items[k].source));
            json_object_set_new(o, "output", cli_json_string(results[k].payload));
            json_object_set_new(o, "status", json_string(results[k].status));
            if (results[k].reason[0])
                json_object_set_new(o, "reason", cli_json_string(results[k].reason));
            json_array_append_new(arr, o);
        }
        json_t *root = json_object();
        json_object_set_new(root, "terrains", arr);
        cli_print_json(root);
    } else if (!rc) {
        for (size_t k = 0; k < jobs.count; k++)
            if (results[k].reason[0])
                cli_printf("%s: cooked (%s)\n", results[k].payload, results[k].reason);
            else
                cli_printf("%s: up to date\n", results[k].payload);
    }
    free(results);
    jobs_free(&jobs);
    return rc;
}
