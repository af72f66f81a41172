/* Shared command-line plumbing: verbs, options, output format, progress bar, errors. */
#ifndef TRN_CLI_H
#define TRN_CLI_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "terrane/core.h"
#include "terrane/generate.h"
#include "terrane/graph.h"
#include "terrane/io.h"
#include "terrane/recipe.h"

/* Exit codes: 0 success, 1 the work failed (bad input, I/O, validation problems), 2 usage. */
#define CLI_EXIT_OK 0
#define CLI_EXIT_FAIL 1
#define CLI_EXIT_USAGE 2

typedef struct cli_ctx {
    const char *verb; /* "info", "beamng import", ... for messages */
    bool quiet;
    bool json; /* --format json: data on stdout as JSON, messages on stderr */
    bool progress_shown;
    trn_io_guard *inputs;   /* the files this run reads: no output may replace one */
    trn_write_set *outputs; /* what this run writes, landing together when it succeeds */
    bool conflict;          /* an output named an input: the run ends as a usage error (exit 2) */
    /* The verb prints no JSON (cli_text_only): --format json is then a usage error, not a
     * silent run that prints nothing on stdout. */
    bool text_only;
    /* The destinations cli_output staged: two outputs of one run may not name one file. */
    char **claimed;
    size_t claimed_count;
    /* The recipe whose graph this run generates (set by cli_graph_gate): a node's error found
     * while generating is shown at that node's place in the file. */
    char graph_file[512];
    char graph_at[16]; /* "graph" or "recipe.graph" (a Terrain asset source) */
} cli_ctx;

/* Remember path as an input of this run (a missing path is ignored). Returns a CLI exit code. */
int cli_input(cli_ctx *ctx, const char *path);
/* The file to write dest's new content into: staged in the run's write set, it replaces dest
 * when the verb succeeds (or at cli_commit), together with every other output. NULL, with the
 * message printed, when dest may not be written: an input of this run, a folder, or a file
 * another output of this run already writes (both usage errors). */
const char *cli_output(cli_ctx *ctx, const char *dest);
/* The run's write set, for library calls that stage several files; NULL (message printed) only
 * when out of memory. */
trn_write_set *cli_write_set(cli_ctx *ctx);
/* Land everything staged so far (before reading outputs back, as validation does). Returns a
 * CLI exit code. */
int cli_commit(cli_ctx *ctx);
/* End of a run: commit when rc is CLI_EXIT_OK, else discard every staged file; free the guard
 * and the set. Returns the run's exit code. */
int cli_finish(cli_ctx *ctx, int rc);

/* printf and fprintf for text that may hold untrusted strings (names, ids, JSON text from the
 * files read): in every %s argument, control characters, escape sequences, bidirectional
 * overrides and bytes that are not UTF-8 are shown escaped ("\x1b", "\n", "\u202e"), so a
 * file cannot move the cursor, recolour the terminal or forge output lines. */
int cli_printf(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
int cli_fprintf(FILE *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
int cli_vfprintf(FILE *out, const char *fmt, va_list ap);
/* A JSON string for text that may not be UTF-8: as is when it is, else with each bad byte
 * written as the four characters "\xNN", so the key or value never vanishes. */
json_t *cli_json_string(const char *text);

typedef int (*cli_verb_fn)(cli_ctx *ctx, int argc, char **argv);

/* Verbs, one file each. argv[0] is the verb name. */
int cli_verb_info(cli_ctx *ctx, int argc, char **argv);
int cli_verb_convert(cli_ctx *ctx, int argc, char **argv);
int cli_verb_render(cli_ctx *ctx, int argc, char **argv);
int cli_verb_beamng(cli_ctx *ctx, int argc, char **argv);
int cli_verb_inspect(cli_ctx *ctx, int argc, char **argv);
int cli_verb_explain(cli_ctx *ctx, int argc, char **argv);
int cli_verb_seeds(cli_ctx *ctx, int argc, char **argv);
int cli_verb_generate(cli_ctx *ctx, int argc, char **argv);
int cli_verb_compact(cli_ctx *ctx, int argc, char **argv);
int cli_verb_presets(cli_ctx *ctx, int argc, char **argv);
int cli_verb_apply_preset(cli_ctx *ctx, int argc, char **argv);
int cli_verb_graph(cli_ctx *ctx, int argc, char **argv);
int cli_verb_stationeers(cli_ctx *ctx, int argc, char **argv);
int cli_verb_unity(cli_ctx *ctx, int argc, char **argv);
int cli_verb_recover(cli_ctx *ctx, int argc, char **argv);
int cli_verb_formats(cli_ctx *ctx, int argc, char **argv);
int cli_verb_water(cli_ctx *ctx, int argc, char **argv);
int cli_verb_scatter(cli_ctx *ctx, int argc, char **argv);
int cli_verb_mesh(cli_ctx *ctx, int argc, char **argv);
int cli_verb_studio(cli_ctx *ctx, int argc, char **argv);

/* Scatter (scatter.c), shared by generate's engine exports: the recipe's palette (its asset id
 * resolved from recipe_path's project, or inline) with its material set when set is not NULL
 * (zeroed when the palette names none), and its instances on a generated surface.
 * Both return a CLI exit code, the message printed. */
typedef struct trn_palette trn_palette;
typedef struct trn_material_set trn_material_set;
typedef struct trn_instances trn_instances;
typedef struct trn_scatter_report trn_scatter_report;
typedef struct trn_generated trn_generated;
int cli_palette_load(cli_ctx *ctx, const char *recipe_path, const trn_recipe *recipe,
                     trn_palette *palette, trn_material_set *set);
/* Whether the recipe's graph has a Scatter Palette node (it needs the palette to evaluate). */
bool cli_graph_places_palette(const trn_recipe *recipe);
/* The node cache for a run whose command line names no --cache DIR: the platform cache
 * directory (trn_graph_cache_dir_default), kept within TRN_GRAPH_CACHE_DISK_DEFAULT. NULL when
 * TERRANE_CACHE is "off" (or "0"), when there is no such folder or it cannot be made: the run
 * then goes on without reuse. *dir (may be NULL) receives the folder used. */
trn_graph_cache *cli_cache_default(char *dir, size_t dir_size);
/* Whether the platform cache directory is in use (TERRANE_CACHE is not "off" or "0"). */
bool cli_cache_default_on(void);
/* trn_recipe_generate for every verb: when the graph places the recipe's palette and options
 * give none, the palette is resolved beside recipe_path for the generation (options may be
 * NULL); options without a cache use cli_cache_default's for the call. */
trn_status cli_recipe_generate(const char *recipe_path, const trn_recipe *recipe,
                               const trn_generate_options *options, trn_generated *out,
                               trn_progress_fn progress, void *user, trn_error *err);
int cli_scatter_place(cli_ctx *ctx, const trn_recipe *recipe, const trn_generated *gen,
                      const trn_palette *palette, int threads, uint64_t max_placements,
                      uint64_t max_candidates, trn_instances *inst, trn_scatter_report *rep);

/* The wet sample of water nearest to terrain-local (x, z) (the first in sample order among
 * equals): true with its distance (world units) and position, false when none is wet
 * (water.c). */
bool cli_water_nearest_wet(const trn_water *water, double x, double z, double *distance,
                           double *wet_x, double *wet_z);

/* Print "terrane VERB: message" for a library error; returns CLI_EXIT_FAIL. */
int cli_fail(cli_ctx *ctx, const trn_error *err);
/* The user's name for a path handed to readers: for the in-memory copy of a captured pipe or
 * device (cli_input_path in detect.h), the path the user gave; else file itself (input_names.c). */
const char *cli_input_user_path(const char *file);
/* Print a formatted error and return CLI_EXIT_FAIL. */
int cli_failf(cli_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* cli_failf, and --format json's error names at's code, file, line, column and node. */
int cli_failf_at(cli_ctx *ctx, const trn_error *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Print a usage error with a pointer to --help; returns CLI_EXIT_USAGE. A message that starts
 * "unknown option '%s'" gets "; did you mean '--NAME'?" when one of the verb's options (those
 * its --help lists, with the common ones) is close to the word; "unknown sub-verb '%s'",
 * "unknown command '%s'" and "unknown graph command '%s'" get the closest sub-verb. */
int cli_usage_error(cli_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Informational message to stderr unless --quiet. */
void cli_note(cli_ctx *ctx, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Option parsing helpers. cli_is_help: -h/--help. Common options (--quiet, -q, --format X)
 * are consumed by cli_common_option, which returns 1 when it used argv[*i] (and maybe the next),
 * 0 when not a common option, -1 on a bad value (message printed). */
bool cli_is_help(const char *arg);
int cli_common_option(cli_ctx *ctx, int argc, char **argv, int *i);
/* The sub-verb of a verb that has several (beamng, stationeers, unity), after any common
 * options before it (terrane beamng -q validate LEVEL), which are taken as anywhere else. Returns
 * its index in argv, argc when there is none, or -1 after a usage error. */
int cli_sub_verb_at(cli_ctx *ctx, int argc, char **argv);
/* A usage error met before any verb runs (no verb, an unknown verb or common option): the
 * message on stderr as given, and with --format json the error object on stdout, without a
 * verb. Returns CLI_EXIT_USAGE. */
int cli_top_usage_error(cli_ctx *ctx, const char *message);
/* For a verb that prints no JSON: marks the run (ctx->text_only), so a later --format json is
 * a usage error. Returns CLI_EXIT_USAGE (message printed) when --format json was already given
 * (before the verb: "terrane --format json VERB"), else CLI_EXIT_OK. Call it before parsing. */
int cli_text_only(cli_ctx *ctx);
/* The closest of candidates (NULL-terminated) to word, or NULL when none is close: the
 * optimal string alignment distance (a swap of two neighbours counts one) within a third of
 * the word's length, a misspelt beginning of a longer name counting one more. Leading dashes
 * and an "=value" tail are ignored on both sides; words under 3 letters get no suggestion. */
const char *cli_did_you_mean(const char *word, const char *const *candidates);
/* A verb's help text as its --help prints it, for "verb" or "verb sub-verb"; malloc'd (caller
 * frees), NULL when there is no such verb or it could not be captured. The verb table lives in
 * main.c, above this layer: main registers the function that captures the text. */
typedef char *(*cli_verb_help_fn)(const char *label);
void cli_set_verb_help(cli_verb_help_fn fn);

/* Freed arrays stay in the process for the next ones (glibc's heap keeps them), for verbs that
 * hold a whole grid at once; out-of-core runs leave the allocator as it is, their peak
 * resident size is what they promise. */
void cli_keep_freed_memory(void);
char *cli_verb_help(const char *label);
/* Value of an option that takes one (argv[*i] is the option): advances *i; NULL + message when
 * missing. */
const char *cli_option_value(cli_ctx *ctx, int argc, char **argv, int *i);
/* For a verb whose options all take a value except a few flags: true when arg is an option
 * (starts with '-') listed in names (NULL-terminated) or one of the shared terrain-reading
 * options; prints "unknown option" and returns false otherwise. */
bool cli_known_option(cli_ctx *ctx, const char *arg, const char *const *names);
/* Parse numbers strictly; false + message on junk. */
bool cli_parse_double(cli_ctx *ctx, const char *opt, const char *text, double *out);
/* --max-work N: a whole number of work units from 1 to 1.8e19, written plainly or as 5e10; a
 * usage error otherwise. */
bool cli_parse_max_work(cli_ctx *ctx, const char *text, uint64_t *out);
bool cli_parse_u32(cli_ctx *ctx, const char *opt, const char *text, uint32_t *out);
/* A finite number greater than zero. */
bool cli_parse_positive(cli_ctx *ctx, const char *opt, const char *text, double *out);
/* "WxH" */
bool cli_parse_size(cli_ctx *ctx, const char *opt, const char *text, uint32_t *w, uint32_t *h);

/* Progress callback for library calls: a bar on stderr when it is a terminal and not quiet. */
int cli_progress(double done, const char *stage, void *user);
/* Finish the bar line, if one was drawn. */
void cli_progress_end(cli_ctx *ctx);

/* What a conversion loses, said in one note and listed by --format json: the loader adds what the
 * heightfield cannot carry from its source (veins, modified flags, overhangs, alpha maps, trees),
 * the writer what the output cannot hold (material layers, holes, georeferencing). */
#define CLI_DROPS_MAX 16
typedef struct cli_drops {
    char items[CLI_DROPS_MAX][160];
    size_t count;
} cli_drops;

/* Append one item ("12 veins with 40 minables"); beyond CLI_DROPS_MAX the last item says so. */
void cli_drops_add(cli_drops *drops, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A terrain loaded by the CLI from any supported file. */
typedef struct cli_terrain {
    trn_field field;
    trn_labels labels;
    bool has_labels;
    char format[32];
    /* GeoTIFF inputs: their georeferencing (owned, freed by cli_terrain_dispose), else NULL. */
    struct trn_geotiff_georef *georef;
    /* What reading the source into a heightfield left behind. */
    cli_drops drops;
} cli_terrain;

/* How to read files that do not say it themselves; 0 = format default. raw_type is a
 * trn_raw_type + 1 (0 = choose from the extension: .r16/.raw little-endian u16, .r32 float). */
typedef struct cli_load_options {
    double max_height;  /* BeamNG maxHeight for .ter (default 2048) */
    double square_size; /* metres per sample step (default 1) */
    uint32_t raw_width, raw_height;
    int raw_type;
    uint64_t max_samples; /* 0 = reader defaults */
    int input_format;     /* --input-format: a cli_format (detect.h); 0 = from the content */
    int channel;          /* --channel: CLI_CHANNEL_* (detect.h); 0 = the first, noted */
} cli_load_options;

/* Detect the format of path by content and load it. Returns a CLI exit code; prints errors. */
int cli_load_terrain(cli_ctx *ctx, const char *path, const cli_load_options *opt, cli_terrain *out);
void cli_terrain_dispose(cli_terrain *t);

/* Options every verb that reads terrain takes (--max-height, --square-size, --size,
 * --raw-type, --max-samples, --channel, --input-format). opt takes a value, which the caller
 * has fetched. Returns 1 when used, 0 when opt is not one of them, -1 on a bad value (message
 * printed). */
int cli_load_option(cli_ctx *ctx, const char *opt, const char *value, cli_load_options *load);

/* True when a and b name the same file: the same inode when both exist (so "./x.png" and a
 * hard link count), else the same spelling. Outputs must never overwrite inputs. */
bool cli_same_file(const char *a, const char *b);

/* The run of this process (main.c, before the verb): its JSON result gets "outputs". */
void cli_run_begin(cli_ctx *ctx);
/* Print a JSON value to stdout (indented, in the order built) and release it. A run's result
 * object (not an error) first lands what the run staged, then gets "outputs": every file the
 * run's commits landed, in staging order, when the verb writes files (docs/cli.md lists them)
 * or wrote some; a failure to land them prints the error object instead and the run fails. */
void cli_print_json(json_t *value);

/* A recipe's graph (recipe.graph, or the implicit one when it has none) checked against the
 * registry and the recipe, its diagnostics located in the file (graph.c). */
typedef struct cli_graph {
    trn_graph graph;
    bool from_recipe; /* the file holds the graph; false: the implicit graph (no positions) */
    trn_graph_diagnostics diags;
    size_t errors, warnings;
} cli_graph;

/* Build and check the graph of recipe, read from path as a document of kind. Returns a CLI
 * exit code (message printed); *out is then empty. */
int cli_graph_load(cli_ctx *ctx, const char *path, const trn_recipe *recipe, trn_document_kind kind,
                   cli_graph *out);
void cli_graph_dispose(cli_graph *g);
/* The recipe's graph checked before anything runs, so an error names its line and column (the
 * library's own refusal knows the node and JSON path, not the line); warnings are printed as
 * "terrane VERB: ..." and the run goes on. Returns a CLI exit code. */
int cli_graph_gate(cli_ctx *ctx, const char *verb, const char *path, const trn_recipe *recipe,
                   trn_document_kind kind);
/* "FILE:LINE:COLUMN: error: message [check]" (no position when it was not located). */
void cli_graph_diagnostic_text(const char *path, const trn_graph_diagnostic *d, char *buf,
                               size_t size);
/* {"severity", "check", "node", "pin", "message", "path", "line", "column", "offset"}. */
json_t *cli_graph_diagnostic_json(const trn_graph_diagnostic *d);
/* Every node type of the registry as `terrane graph types --format json` prints it. */
json_t *cli_graph_types_json(void);
/* One preset as `terrane presets --format json` lists it (presets.c). */
struct trn_preset;
json_t *cli_preset_json(const struct trn_preset *p);
/* A node cache key as 16 lowercase hex digits. */
void cli_graph_key_hex(uint64_t key, char out[17]);

#endif
