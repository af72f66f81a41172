/* terrane command line: dispatches to one verb per file. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cook_verb.h"
#include "stats_verb.h"
#include "lua_verb.h"
#include "terrane/wait_policy.h"

typedef struct verb_entry {
    const char *name;
    cli_verb_fn fn;
    const char *summary;
} verb_entry;

static const verb_entry verbs[] = {
    {"generate", cli_verb_generate, "generate a terrain recipe into heightmaps or a BeamNG level"},
    {"inspect", cli_verb_inspect, "describe a terrain recipe without generating it"},
    {"explain", cli_verb_explain, "why is this point this biome? (generates, then explains)"},
    {"water", cli_verb_water, "a recipe's water: bodies, levels, areas, volumes, a point's column"},
    {"scatter", cli_verb_scatter,
     "place a recipe's palette on its surface: instances and a picture"},
    {"cook", cli_verb_cook,
     "cook recipes or a project's Terrain assets into *.terrain.bin payloads for games"},
    {"mesh", cli_verb_mesh,
     "chunked terrain meshes with levels of detail as glTF 2.0 (.glb/.gltf) or OBJ"},
    {"lua", cli_verb_lua,
     "run a Lua 5.4 script with cooked payloads: ground, water samples, immersion events"},
    {"stats", cli_verb_stats,
     "realism statistics: relief, slopes, depressions, drainage, spectrum vs real land"},
    {"compact", cli_verb_compact, "merge a recipe's consecutive strokes with the same settings"},
    {"graph", cli_verb_graph, "terrain graphs: node types, check a recipe's graph, a starter"},
    {"presets", cli_verb_presets, "list built-in and project terrain presets"},
    {"apply-preset", cli_verb_apply_preset, "merge a preset into a scene's inline terrain recipe"},
    {"seeds", cli_verb_seeds, "the sub-seed of every channel for a world seed"},
    {"info", cli_verb_info, "describe any supported terrain or image file (format from content)"},
    {"convert", cli_verb_convert,
     "convert between .ter, Terragen, PNG, R16/RAW, R32, GeoTIFF, Unity and Stationeers"},
    {"render", cli_verb_render,
     "draw a hillshade, height, slope, aspect, colour relief or layer map as PNG"},
    {"formats", cli_verb_formats, "every file format: extensions, read/write, detection"},
    {"beamng", cli_verb_beamng, "BeamNG levels: import, create, export, validate, migrate"},
    {"stationeers", cli_verb_stationeers,
     "Stationeers terrain.dat and .save: extract, replace, from-heightfield"},
    {"unity", cli_verb_unity, "Unity terrains: info, extract maps, export RAW tiles and splats"},
    {"studio", cli_verb_studio,
     "a local 3D web editor: sculpt, undo, regenerate, save (loopback, token-guarded)"},
    {"recover", cli_verb_recover, "finish or discard writes that a crash or kill interrupted"},
};

#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

static void usage(FILE *out)
{
    fprintf(out,
            "terrane %s: game terrain toolkit\n\n"
            "usage: terrane [common options] <verb> [options] inputs... [output]\n\nverbs:\n",
            TRN_VERSION_STRING);
    /* The summaries start one column past the longest verb name. */
    int width = 0;
    for (size_t i = 0; i < VERB_COUNT; i++)
        if ((int)strlen(verbs[i].name) > width) width = (int)strlen(verbs[i].name);
    for (size_t i = 0; i < VERB_COUNT; i++)
        fprintf(out, "  %-*s  %s\n", width, verbs[i].name, verbs[i].summary);
    fprintf(out, "\ncommon options, before or after the verb: -h/--help, -q/--quiet,\n"
                 "--format text|json, --version\n"
                 "run 'terrane <verb> --help' for a verb's options and examples.\n");
}

static const verb_entry *find_verb(const char *name, size_t n)
{
    for (size_t i = 0; i < VERB_COUNT; i++)
        if (strlen(verbs[i].name) == n && strncmp(name, verbs[i].name, n) == 0) return &verbs[i];
    return NULL;
}

/* Guards against a help text whose printing asks for help again. */
static bool probing_help;

static char *capture_verb_help(const char *label)
{
    size_t n = strcspn(label, " ");
    const verb_entry *v = find_verb(label, n);
    if (!v || probing_help) return NULL;
    char sub[64] = "";
    if (label[n] == ' ') snprintf(sub, sizeof sub, "%s", label + n + 1);
    char verb[32], help[] = "--help";
    snprintf(verb, sizeof verb, "%s", v->name);
    char *args[4] = {verb, sub[0] ? sub : help, sub[0] ? help : NULL, NULL};
    /* The verb prints its help on stdout: point stdout at a temporary file for the call. */
    fflush(stdout);
    FILE *capture = tmpfile();
    if (!capture) return NULL;
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(fileno(capture), STDOUT_FILENO) < 0) {
        if (saved >= 0) close(saved);
        fclose(capture);
        return NULL;
    }
    cli_ctx probe = {0};
    probe.verb = v->name;
    probe.quiet = true;
    probing_help = true;
    int rc = v->fn(&probe, sub[0] ? 3 : 2, args);
    probing_help = false;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    char *text = NULL;
    long size = ftell(capture);
    if (rc == CLI_EXIT_OK && size > 0 && fseek(capture, 0, SEEK_SET) == 0 &&
        (text = malloc((size_t)size + 1)) != NULL) {
        size_t got = fread(text, 1, (size_t)size, capture);
        text[got] = '\0';
    }
    fclose(capture);
    return text;
}

/* Ctrl-C, SIGTERM, a closed terminal: remove our temporaries, then die of the signal. */
static void on_signal(int sig)
{
    trn_io_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Where the shipped examples are: $TERRANE_EXAMPLES, else the installed copy, else the source
 * tree this binary was built from (a build that was never installed; packages name none). */
static const char *examples_dir(void)
{
    const char *env = getenv("TERRANE_EXAMPLES");
    if (env && env[0]) return env;
    if (access(TRN_EXAMPLES_DIR "/recipes", F_OK) == 0 || !TRN_SOURCE_EXAMPLES_DIR[0])
        return TRN_EXAMPLES_DIR;
    return TRN_SOURCE_EXAMPLES_DIR;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "the recipes there: NAME, ..." for the NAME.json files of dir/recipes (sorted), or that there
 * are none, into out (size bytes): the names a folder really holds. */
static void example_names(const char *dir, char *out, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/recipes", dir);
    char *names[256];
    size_t n = 0;
    DIR *d = opendir(path);
    for (struct dirent *ent; d && n < sizeof names / sizeof names[0] && (ent = readdir(d));) {
        const size_t len = strlen(ent->d_name);
        if (ent->d_name[0] == '.' || len <= 5 || strcmp(ent->d_name + len - 5, ".json") != 0)
            continue;
        names[n] = strdup(ent->d_name);
        if (names[n]) names[n++][len - 5] = '\0';
    }
    if (d) closedir(d);
    qsort(names, n, sizeof names[0], compare_names);
    size_t used =
        (size_t)snprintf(out, size, "%s", n ? "the recipes there: " : "no recipes/*.json there");
    for (size_t i = 0; i < n; i++) {
        if (used < size)
            used += (size_t)snprintf(out + used, size - used, "%s%s", i ? ", " : "", names[i]);
        free(names[i]);
    }
}

/* "example:NAME" -> the shipped example recipe NAME (examples/recipes/NAME.json), or
 * "example:PATH" -> PATH under the examples folder (example:project/world.scene.json). The
 * path is stored in out (size bytes). Returns CLI_EXIT_OK, CLI_EXIT_USAGE for a malformed name
 * or CLI_EXIT_FAIL when there is no such example, with a message (and, with --format json, the
 * error object on stdout, as any failure of the verb). */
static int resolve_example(cli_ctx *ctx, const char *arg, char *out, size_t size)
{
    const char *name = arg + strlen("example:");
    const char *dir = examples_dir();
    if (!name[0] || strstr(name, ".."))
        return cli_usage_error(ctx, "'%s': expected example:NAME, such as example:island", arg);
    if (strchr(name, '/'))
        snprintf(out, size, "%s/%s", dir, name);
    else
        snprintf(out, size, "%s/recipes/%s%s", dir, name,
                 strlen(name) > 5 && strcmp(name + strlen(name) - 5, ".json") == 0 ? "" : ".json");
    if (access(out, R_OK) == 0) return CLI_EXIT_OK;
    char names[2048];
    example_names(dir, names, sizeof names);
    return cli_failf(ctx,
                     "'%s': no such example in %s (%s; or a file under it, such as "
                     "example:project/world.scene.json)",
                     arg, dir, names);
}

/* The last --format of the command line from argv[first] (before a "--"), so that a usage
 * error met before reaching it still answers in JSON when JSON was asked for. */
static void prescan_format(cli_ctx *ctx, int argc, char **argv, int first)
{
    for (int k = first; k < argc && strcmp(argv[k], "--") != 0; k++) {
        const char *v = strncmp(argv[k], "--format=", 9) == 0              ? argv[k] + 9
                        : strcmp(argv[k], "--format") == 0 && k + 1 < argc ? argv[k + 1]
                                                                           : NULL;
        if (v && strcmp(v, "json") == 0) ctx->json = true;
        if (v && strcmp(v, "text") == 0) ctx->json = false;
    }
}

/* A usage error before the verb: "WHAT 'WORD'", the closest name when one is near enough. */
static int top_usage_error(cli_ctx *ctx, const char *what, const char *word, const char *hint)
{
    char message[600];
    snprintf(message, sizeof message, "%s '%s'%s%s%s", what, word, hint ? "; did you mean '" : "",
             hint ? hint : "", hint ? "'?" : "");
    return cli_top_usage_error(ctx, message);
}

/* Waiting threads sleep rather than spin: other programs' work keeps its cores. */
TRN_WAIT_POLICY_PASSIVE_DEFAULT()

int main(int argc, char **argv)
{
    trn_wait_policy_restore();
    cli_set_verb_help(capture_verb_help);
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    /* Common options may come before the verb ("terrane --format json info x.ter"). The last
     * --format anywhere decides first, so that a usage error met before the verb (an unknown
     * verb or option, no verb) still answers in JSON when JSON was asked for. */
    cli_ctx ctx = {0};
    prescan_format(&ctx, argc, argv, 1);
    bool version = false;
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (strcmp(a, "--version") == 0) {
            version = true;
        } else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
            ctx.quiet = true;
        } else if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;
            static const char *const values[] = {"text", "json", NULL};
            if (!v) return cli_top_usage_error(&ctx, "option --format needs a value: text or json");
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0)
                return top_usage_error(&ctx, "--format takes 'text' or 'json', not", v,
                                       cli_did_you_mean(v, values));
        } else {
            static const char *const options[] = {"--help", "--version", "--quiet", "--format",
                                                  NULL};
            return top_usage_error(&ctx, "unknown option", a, cli_did_you_mean(a, options));
        }
    }
    if (version) {
        if (ctx.json) {
            json_t *o = json_object();
            json_object_set_new(o, "name", json_string("terrane"));
            json_object_set_new(o, "version", json_string(TRN_VERSION_STRING));
            cli_print_json(o);
        } else {
            cli_printf("terrane %s\n", TRN_VERSION_STRING);
        }
        return CLI_EXIT_OK;
    }
    if (i >= argc) {
        if (!ctx.json) {
            usage(stderr);
            return CLI_EXIT_USAGE;
        }
        return cli_top_usage_error(&ctx, "needs a verb ('terrane --help' lists them)");
    }
    const verb_entry *v = find_verb(argv[i], strlen(argv[i]));
    if (!v) {
        const char *names[VERB_COUNT + 1];
        for (size_t k = 0; k < VERB_COUNT; k++)
            names[k] = verbs[k].name;
        names[VERB_COUNT] = NULL;
        return top_usage_error(&ctx, "unknown verb", argv[i], cli_did_you_mean(argv[i], names));
    }
    ctx.verb = v->name;
    /* Shipped examples by name, from any folder: "terrane generate example:island -o a.png". */
    for (int k = i + 1; k < argc; k++) {
        if (strncmp(argv[k], "example:", 8) != 0) continue;
        char *path = malloc(4096);
        const int rc = path ? resolve_example(&ctx, argv[k], path, 4096) : CLI_EXIT_FAIL;
        if (rc) {
            free(path);
            return rc;
        }
        argv[k] = path; /* lives as long as the process */
    }
    cli_run_begin(&ctx);
    return cli_finish(&ctx, v->fn(&ctx, argc - i, argv + i));
}
