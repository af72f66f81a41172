/* terrane seeds: the sub-seed of every channel for a world seed. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "terrane/recipe.h"

static const char *const help_text =
    "usage: terrane seeds SEED [--format text|json]\n"
    "\n"
    "Print the sub-seed of every seed channel (landform, landform_warp, erosion, hydrology,\n"
    "biome_placement, scatter) for the world seed SEED, a whole number 0..9223372036854775807\n"
    "(a recipe's \"seed\"). Each sub-seed is a hash of the channel's name with the world seed,\n"
    "not of its position in a list, so adding a channel changes no other value; the values\n"
    "are the same whether or not a terrain uses the stage. docs/recipes.md gives the hash.\n"
    "\n"
    "options:\n"
    "  --format json   print the same facts as JSON on stdout\n"
    "\n"
    "exit status: 0 printed, 2 usage error (such as a seed that is not a whole number).\n"
    "\n"
    "examples:\n"
    "  terrane seeds 3\n"
    "  terrane seeds 20240611 --format json\n";

/* Digits only (no sign, no spaces, no hex), at most 2^63-1, as a recipe's seed. */
static bool parse_seed(const char *text, uint64_t *out)
{
    if (!text[0]) return false;
    for (const char *p = text; *p; p++)
        if (*p < '0' || *p > '9') return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno == ERANGE || *end || v > (unsigned long long)INT64_MAX) return false;
    *out = (uint64_t)v;
    return true;
}

int cli_verb_seeds(cli_ctx *ctx, int argc, char **argv)
{
    const char *seed_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(help_text, stdout);
            return CLI_EXIT_OK;
        }
        int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return CLI_EXIT_USAGE;
        if (c > 0) continue;
        /* "-1" is a (refused) seed, not an option. */
        if (a[0] == '-' && !(a[1] >= '0' && a[1] <= '9'))
            return cli_usage_error(ctx, "unknown option '%s'", a);
        if (seed_text) return cli_usage_error(ctx, "takes one seed; unexpected '%s'", a);
        seed_text = a;
    }
    if (!seed_text) return cli_usage_error(ctx, "needs a world seed, such as 'terrane seeds 3'");
    uint64_t seed;
    if (!parse_seed(seed_text, &seed))
        return cli_usage_error(ctx, "SEED must be a whole number 0..9223372036854775807, not '%s'",
                               seed_text);

    if (ctx->json) {
        json_t *o = json_object();
        json_object_set_new(o, "seed", json_integer((json_int_t)seed));
        json_t *arr = json_array();
        for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
            uint64_t v = trn_subseed_of(seed, (trn_seed_channel)c);
            char h[24], d[24];
            snprintf(h, sizeof h, "%016" PRIx64, v);
            snprintf(d, sizeof d, "%" PRIu64, v);
            json_t *so = json_object();
            json_object_set_new(so, "channel",
                                cli_json_string(trn_seed_channel_name((trn_seed_channel)c)));
            /* Sub-seeds use all 64 bits: JSON integers stop at 2^63-1, so both are strings. */
            json_object_set_new(so, "hex", cli_json_string(h));
            json_object_set_new(so, "value", cli_json_string(d));
            json_array_append_new(arr, so);
        }
        json_object_set_new(o, "sub_seeds", arr);
        cli_print_json(o);
        return CLI_EXIT_OK;
    }
    cli_printf("world seed %" PRIu64 "\n", seed);
    for (int c = 0; c < TRN_CHANNEL_COUNT; c++) {
        uint64_t v = trn_subseed_of(seed, (trn_seed_channel)c);
        cli_printf("  %-16s 0x%016" PRIx64 "  %" PRIu64 "\n",
               trn_seed_channel_name((trn_seed_channel)c), v, v);
    }
    return CLI_EXIT_OK;
}
