/* terrane command line: dispatches to one verb per file. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct verb_entry {
    const char *name;
    cli_verb_fn fn;
    const char *summary;
} verb_entry;

static const verb_entry verbs[] = {
    {"generate", cli_verb_generate, "generate a terrain recipe into heightmaps or a BeamNG level"},
    {"inspect", cli_verb_inspect, "describe a terrain recipe without generating it"},
    {"explain", cli_verb_explain, "why is this point this biome? (generates, then explains)"},
    {"compact", cli_verb_compact, "merge a recipe's consecutive strokes with the same settings"},
    {"graph", cli_verb_graph, "terrain graphs: node types, check a recipe's graph, a starter"},
    {"presets", cli_verb_presets, "list built-in and project terrain presets"},
    {"apply-preset", cli_verb_apply_preset, "merge a preset into a scene's inline terrain recipe"},
    {"seeds", cli_verb_seeds, "the sub-seed of every channel for a world seed"},
    {"info", cli_verb_info, "describe any supported terrain or image file (format from content)"},
    {"convert", cli_verb_convert, "convert between .ter, PNG, R16/RAW, R32 and Terragen"},
    {"render", cli_verb_render, "draw a hillshade, height, slope or layer picture as PNG"},
    {"beamng", cli_verb_beamng, "BeamNG levels: import, create, export, validate, migrate"},
    {"stationeers", cli_verb_stationeers,
     "Stationeers terrain.dat and .save: extract, replace, from-heightfield"},
    {"unity", cli_verb_unity, "Unity terrains: info, extract maps, export RAW tiles and splats"},
    {"recover", cli_verb_recover, "finish or discard writes that a crash or kill interrupted"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "terrane %s: game terrain toolkit\n\n"
            "usage: terrane <verb> [options] inputs... [output]\n\nverbs:\n",
            TRN_VERSION_STRING);
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++)
        fprintf(out, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(out, "\ncommon options: -h/--help, -q/--quiet, --format text|json, --version\n"
                 "run 'terrane <verb> --help' for a verb's options and examples.\n");
}

/* Ctrl-C, SIGTERM, a closed terminal: remove our temporaries, then die of the signal. */
static void on_signal(int sig)
{
    trn_io_remove_temporaries();
    signal(sig, SIG_DFL);
    raise(sig);
}

int main(int argc, char **argv)
{
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
    if (cli_is_help(argv[1])) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        cli_printf("terrane %s\n", TRN_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
        if (strcmp(argv[1], verbs[i].name) == 0) {
            cli_ctx ctx = {0};
            ctx.verb = verbs[i].name;
            return cli_finish(&ctx, verbs[i].fn(&ctx, argc - 1, argv + 1));
        }
    }
    cli_fprintf(stderr, "terrane: unknown verb '%s'\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
