/* The lua verb: run a Lua 5.4 script with the terrane modules and a world of payloads. */
#ifndef TRN_CLI_LUA_VERB_H
#define TRN_CLI_LUA_VERB_H

#include "cli.h"

/* terrane lua (lua.c). */
int cli_verb_lua(cli_ctx *ctx, int argc, char **argv);

#endif
