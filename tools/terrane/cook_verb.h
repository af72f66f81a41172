/* The cook verb and the description of cooked payloads (terrane cook, terrane info). */
#ifndef TRN_CLI_COOK_VERB_H
#define TRN_CLI_COOK_VERB_H

#include <stdbool.h>

#include "cli.h"
#include "fmt_payload.h"

/* terrane cook (cook.c). */
int cli_verb_cook(cli_ctx *ctx, int argc, char **argv);

#endif
