/* The stats verb: realism statistics of any terrain (terrane stats). */
#ifndef TRN_CLI_STATS_VERB_H
#define TRN_CLI_STATS_VERB_H

#include "cli.h"

/* terrane stats (stats.c). */
int cli_verb_stats(cli_ctx *ctx, int argc, char **argv);

#endif
