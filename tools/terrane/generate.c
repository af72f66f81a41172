/* terrane generate (being written). */
#include "cli.h"

int cli_verb_generate(cli_ctx *ctx, int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return cli_failf(ctx, "not built yet");
}
