/* Shared command-line plumbing: errors, options, number parsing, progress bar, JSON output. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_fail(cli_ctx *ctx, const trn_error *err)
{
    cli_progress_end(ctx);
    char buf[2048];
    trn_error_format(err, buf, sizeof buf);
    fprintf(stderr, "terrane %s: error: %s\n", ctx->verb, buf);
    return CLI_EXIT_FAIL;
}

int cli_failf(cli_ctx *ctx, const char *fmt, ...)
{
    cli_progress_end(ctx);
    fprintf(stderr, "terrane %s: error: ", ctx->verb);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_FAIL;
}

int cli_usage_error(cli_ctx *ctx, const char *fmt, ...)
{
    fprintf(stderr, "terrane %s: ", ctx->verb);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run 'terrane %s --help' for usage)\n", ctx->verb);
    return CLI_EXIT_USAGE;
}

void cli_note(cli_ctx *ctx, const char *fmt, ...)
{
    if (ctx->quiet) return;
    cli_progress_end(ctx);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

bool cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

int cli_common_option(cli_ctx *ctx, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
        ctx->quiet = true;
        return 1;
    }
    if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
        const char *v = a[8] == '=' ? a + 9 : cli_option_value(ctx, argc, argv, i);
        if (!v) return -1;
        if (strcmp(v, "json") == 0)
            ctx->json = true;
        else if (strcmp(v, "text") == 0)
            ctx->json = false;
        else {
            cli_usage_error(ctx, "--format takes 'text' or 'json', not '%s'", v);
            return -1;
        }
        return 1;
    }
    return 0;
}

bool cli_known_option(cli_ctx *ctx, const char *arg, const char *const *names)
{
    static const char *const load_options[] = {"--max-height", "--square-size", "--size",
                                               "--raw-type", NULL};
    for (const char *const *n = names; n && *n; n++)
        if (strcmp(arg, *n) == 0) return true;
    for (const char *const *n = load_options; *n; n++)
        if (strcmp(arg, *n) == 0) return true;
    cli_usage_error(ctx, "unknown option '%s'", arg);
    return false;
}

const char *cli_option_value(cli_ctx *ctx, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        cli_usage_error(ctx, "option %s needs a value", argv[*i]);
        return NULL;
    }
    (*i)++;
    return argv[*i];
}

bool cli_parse_double(cli_ctx *ctx, const char *opt, const char *text, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !isfinite(v)) {
        cli_usage_error(ctx, "%s expects a finite number, got '%s'", opt, text);
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_positive(cli_ctx *ctx, const char *opt, const char *text, double *out)
{
    if (!cli_parse_double(ctx, opt, text, out)) return false;
    if (!(*out > 0)) {
        cli_usage_error(ctx, "%s must be positive, not '%s'", opt, text);
        return false;
    }
    return true;
}

bool cli_parse_u32(cli_ctx *ctx, const char *opt, const char *text, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v > UINT32_MAX || text[0] == '-') {
        cli_usage_error(ctx, "%s expects a whole number, got '%s'", opt, text);
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

bool cli_parse_size(cli_ctx *ctx, const char *opt, const char *text, uint32_t *w, uint32_t *h)
{
    unsigned long a, b;
    char x, tail;
    if (sscanf(text, "%lu%c%lu%c", &a, &x, &b, &tail) != 3 || (x != 'x' && x != 'X') || a == 0 ||
        b == 0 || a > UINT32_MAX || b > UINT32_MAX) {
        cli_usage_error(ctx, "%s expects WIDTHxHEIGHT such as 1024x1024, got '%s'", opt, text);
        return false;
    }
    *w = (uint32_t)a;
    *h = (uint32_t)b;
    return true;
}

int cli_progress(double done, const char *stage, void *user)
{
    cli_ctx *ctx = user;
    if (!ctx || ctx->quiet || !isatty(STDERR_FILENO)) return TRN_CONTINUE;
    /* Graph stages read "node ID: stage" ("node erode: erosion"): room for them, still within
     * an 80-column terminal. The padding overwrites a longer previous stage. */
    int width = 24, filled = (int)(done * width + 0.5);
    if (filled < 0) filled = 0;
    if (filled > width) filled = width;
    fprintf(stderr, "\r%-40.40s [", stage ? stage : "");
    for (int k = 0; k < width; k++)
        fputc(k < filled ? '#' : '.', stderr);
    fprintf(stderr, "] %3d%%", (int)(done * 100 + 0.5));
    fflush(stderr);
    ctx->progress_shown = true;
    return TRN_CONTINUE;
}

void cli_progress_end(cli_ctx *ctx)
{
    if (ctx && ctx->progress_shown) {
        fputc('\n', stderr);
        ctx->progress_shown = false;
    }
}

void cli_print_json(json_t *value)
{
    json_dumpf(value, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    fputc('\n', stdout);
    json_decref(value);
}

bool cli_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
        return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    return strcmp(a, b) == 0;
}

void cli_drops_add(cli_drops *drops, const char *fmt, ...)
{
    if (!drops) return;
    if (drops->count >= CLI_DROPS_MAX) {
        snprintf(drops->items[CLI_DROPS_MAX - 1], sizeof drops->items[0], "and more");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(drops->items[drops->count], sizeof drops->items[0], fmt, ap);
    va_end(ap);
    drops->count++;
}
