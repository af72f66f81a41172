/* terrane seeds (being written). */
#include "cli.h"

int cli_verb_seeds(cli_ctx *ctx, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_failf(ctx, "not built yet");
}
