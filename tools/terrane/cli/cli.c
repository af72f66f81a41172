/* Shared command-line plumbing: errors, options, number parsing, progress bar, JSON output. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "core/fileio.h"
#include "core/numtext.h"

#include "core/textbuf.h"
#include "core/write_set.h"
#include "terrane/graph.h"
#include "recipe/recipe_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

/* ---------------------------------------------------------------------------------------------
 * Printing untrusted text.
 * ------------------------------------------------------------------------------------------- */

/* Length of the UTF-8 sequence at s (at most n bytes) and its code point; 0 when invalid
 * (overlong forms, surrogates and values past U+10FFFF included). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t v, min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if ((c & 0xe0) == 0xc0) {
        len = 2, v = c & 0x1fu, min = 0x80;
    } else if ((c & 0xf0) == 0xe0) {
        len = 3, v = c & 0x0fu, min = 0x800;
    } else if ((c & 0xf8) == 0xf0) {
        len = 4, v = c & 0x07u, min = 0x10000;
    } else {
        return 0;
    }
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        v = (v << 6) | (s[i] & 0x3fu);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
    *cp = v;
    return len;
}

/* Code points a terminal acts on instead of showing: C1 controls and bidirectional controls. */
static bool invisible_control(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* text (n bytes) made safe for a terminal; terminal false: only bad UTF-8 bytes are escaped. */
static void esc_text(trn_text_buf *b, const char *text, size_t n, bool terminal)
{
    const unsigned char *s = (const unsigned char *)text;
    size_t i = 0;
    while (i < n) {
        uint32_t cp = 0;
        size_t len = utf8_decode(s + i, n - i, &cp);
        char tmp[16];
        if (len == 0) {
            snprintf(tmp, sizeof tmp, "\\x%02x", s[i]);
            trn_text_put(b, tmp, 4);
            i++;
            continue;
        }
        if (terminal && (cp < 0x20 || cp == 0x7f)) {
            const char *e = cp == '\n' ? "\\n" : cp == '\r' ? "\\r" : cp == '\t' ? "\\t" : NULL;
            if (e)
                trn_text_put(b, e, 2);
            else {
                snprintf(tmp, sizeof tmp, "\\x%02x", (unsigned)cp);
                trn_text_put(b, tmp, 4);
            }
        } else if (terminal && invisible_control(cp)) {
            snprintf(tmp, sizeof tmp, "\\u%04x", (unsigned)cp);
            trn_text_put(b, tmp, 6);
        } else {
            trn_text_put(b, (const char *)s + i, len);
        }
        i += len;
    }
    if (!b->data) trn_text_put(b, "", 0);
}

json_t *cli_json_string(const char *text)
{
    if (!text) return json_null();
    json_t *j = json_string(text);
    if (j) return j;
    trn_text_buf b = {0};
    esc_text(&b, text, strlen(text), false);
    j = json_string(b.data ? b.data : "");
    trn_text_free(&b);
    return j;
}

/* The run whose staged outputs messages name by their destination (one run per process). */
static const cli_ctx *active_run;
/* The run whose JSON result cli_print_json completes (cli_run_begin), and whether landing its
 * outputs there failed (the run then ends as a failure). */
static cli_ctx *json_run;
static bool result_commit_failed;
static const char *shown_path(const cli_ctx *ctx, const char *file);

static const char *shown_name(const char *text)
{
    return active_run ? shown_path(active_run, text) : text;
}

/* Our formats are literal and checked at each call site (format attributes); here each
 * conversion is re-issued alone, so the spec string cannot be a literal. */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
int cli_vfprintf(FILE *out, const char *fmt, va_list ap)
{
    va_list args;
    va_copy(args, ap);
    trn_text_buf b = {0};
    const char *p = fmt;
    while (*p) {
        if (*p != '%') {
            const char *q = strchr(p, '%');
            size_t n = q ? (size_t)(q - p) : strlen(p);
            trn_text_put(&b, p, n);
            p += n;
            continue;
        }
        /* One conversion: flags, width, precision, length, type. */
        char spec[32];
        size_t k = 0;
        spec[k++] = *p++;
        while (*p && strchr("-+ #0", *p) && k < 8)
            spec[k++] = *p++;
        int width = -1, precision = -1;
        if (*p == '*') {
            width = va_arg(args, int);
            p++;
        } else {
            while (*p >= '0' && *p <= '9') {
                width = (width < 0 ? 0 : width) * 10 + (*p - '0');
                p++;
            }
        }
        if (*p == '.') {
            p++;
            precision = 0;
            if (*p == '*') {
                precision = va_arg(args, int);
                p++;
            } else {
                while (*p >= '0' && *p <= '9')
                    precision = precision * 10 + (*p++ - '0');
            }
        }
        char length[3] = "";
        size_t ln = 0;
        while (*p && strchr("hlzjtL", *p) && ln < 2)
            length[ln++] = *p++;
        length[ln] = '\0';
        char type = *p ? *p++ : '\0';
        if (width >= 0) k += (size_t)snprintf(spec + k, sizeof spec - k, "%d", width);
        if (precision >= 0 && type != 's')
            k += (size_t)snprintf(spec + k, sizeof spec - k, ".%d", precision);
        k += (size_t)snprintf(spec + k, sizeof spec - k, "%s%c", length, type);
        char num[512];
        num[0] = '\0';
        bool longl = strcmp(length, "ll") == 0, lng = strcmp(length, "l") == 0,
             z = strcmp(length, "z") == 0, j = strcmp(length, "j") == 0,
             t = strcmp(length, "t") == 0;
        switch (type) {
        case 's': {
            const char *arg = va_arg(args, const char *);
            if (!arg) arg = "(null)";
            arg = shown_name(arg);
            size_t n = strlen(arg);
            if (precision >= 0 && (size_t)precision < n) n = (size_t)precision;
            trn_text_buf e = {0};
            esc_text(&e, arg, n, true);
            /* Pad by hand: the escaped text may exceed any fixed buffer. */
            size_t shown = e.len;
            bool left = strchr(spec, '-') != NULL;
            size_t pad = width > 0 && (size_t)width > shown ? (size_t)width - shown : 0;
            for (size_t i = 0; !left && i < pad; i++)
                trn_text_put(&b, " ", 1);
            if (e.data) trn_text_put(&b, e.data, e.len);
            for (size_t i = 0; left && i < pad; i++)
                trn_text_put(&b, " ", 1);
            trn_text_free(&e);
            num[0] = '\0';
            break;
        }
        case 'c': {
            char c = (char)va_arg(args, int);
            trn_text_buf e = {0};
            esc_text(&e, &c, 1, true);
            if (e.data) trn_text_put(&b, e.data, e.len);
            trn_text_free(&e);
            break;
        }
        case 'd':
        case 'i':
            if (longl)
                snprintf(num, sizeof num, spec, va_arg(args, long long));
            else if (lng)
                snprintf(num, sizeof num, spec, va_arg(args, long));
            else if (z)
                snprintf(num, sizeof num, spec, va_arg(args, ssize_t));
            else if (j)
                snprintf(num, sizeof num, spec, va_arg(args, intmax_t));
            else if (t)
                snprintf(num, sizeof num, spec, va_arg(args, ptrdiff_t));
            else
                snprintf(num, sizeof num, spec, va_arg(args, int));
            break;
        case 'u':
        case 'x':
        case 'X':
        case 'o':
            if (longl)
                snprintf(num, sizeof num, spec, va_arg(args, unsigned long long));
            else if (lng)
                snprintf(num, sizeof num, spec, va_arg(args, unsigned long));
            else if (z)
                snprintf(num, sizeof num, spec, va_arg(args, size_t));
            else if (j)
                snprintf(num, sizeof num, spec, va_arg(args, uintmax_t));
            else
                snprintf(num, sizeof num, spec, va_arg(args, unsigned));
            break;
        case 'f':
        case 'F':
        case 'g':
        case 'G':
        case 'e':
        case 'E':
        case 'a':
        case 'A':
            if (strcmp(length, "L") == 0)
                snprintf(num, sizeof num, spec, va_arg(args, long double));
            else
                snprintf(num, sizeof num, spec, va_arg(args, double));
            break;
        case 'p':
            snprintf(num, sizeof num, spec, va_arg(args, void *));
            break;
        case '%':
            trn_text_put(&b, "%", 1);
            break;
        default:
            trn_text_put(&b, spec, k); /* not a conversion we know: shown as written */
            break;
        }
        if (num[0]) trn_text_put(&b, num, strlen(num));
    }
    va_end(args);
    int n = 0;
    if (b.data) {
        n = (int)b.len;
        fwrite(b.data, 1, b.len, out);
    }
    trn_text_free(&b);
    return n;
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

int cli_fprintf(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = cli_vfprintf(out, fmt, ap);
    va_end(ap);
    return n;
}

int cli_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = cli_vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}

/* ---------------------------------------------------------------------------------------------
 * Messages.
 * ------------------------------------------------------------------------------------------- */

/* The user's name for a file: a staged output's temporary is shown as the output itself. */
static const char *shown_path(const cli_ctx *ctx, const char *file)
{
    for (size_t i = 0; i < trn_write_set_count(ctx->outputs); i++) {
        const char *dest = trn_write_set_dest(ctx->outputs, i);
        const char *temp = trn_write_set_current(ctx->outputs, dest);
        size_t n = strlen(temp);
        if (strncmp(file, temp, n) == 0 && (file[n] == '\0' || file[n] == '.')) return dest;
    }
    return cli_input_user_path(file);
}

static void json_error(cli_ctx *ctx, const trn_error *err, const char *message, int exit_code);

bool cli_cache_default_on(void)
{
    const char *env = getenv("TERRANE_CACHE");
    return !(env && (strcmp(env, "off") == 0 || strcmp(env, "0") == 0));
}

trn_graph_cache *cli_cache_default(char *dir, size_t dir_size)
{
    if (dir && dir_size) dir[0] = '\0';
    if (!cli_cache_default_on()) return NULL;
    char path[4096];
    trn_graph_cache *cache = NULL;
    if (trn_graph_cache_dir_default(path, sizeof path, NULL) ||
        trn_graph_cache_new(path, 0, &cache, NULL))
        return NULL;
    trn_graph_cache_set_disk_limit(cache, TRN_GRAPH_CACHE_DISK_DEFAULT);
    if (dir && dir_size) snprintf(dir, dir_size, "%s", path);
    return cache;
}

/* Where node node_id sits in the recipe this run generates: the file, line and column of its
 * object in "nodes", or of the value at node_path inside it (its key for an unknown key), false
 * when the file or the node cannot be found. */
static bool locate_node(const cli_ctx *ctx, const char *node_id, const char *node_path,
                        trn_error *shown)
{
    json_t *doc = json_load_file(ctx->graph_file, JSON_DECODE_ANY, NULL);
    const json_t *graph = doc;
    for (const char *at = ctx->graph_at; graph && *at;) {
        const char *dot = strchr(at, '.');
        const size_t n = dot ? (size_t)(dot - at) : strlen(at);
        char key[16];
        snprintf(key, sizeof key, "%.*s", (int)n, at);
        graph = json_object_get(graph, key);
        at += n + (dot ? 1 : 0);
    }
    const json_t *nodes = json_object_get(graph, "nodes");
    int index = -1;
    for (size_t k = 0; k < json_array_size(nodes) && index < 0; k++) {
        const char *id = json_string_value(json_object_get(json_array_get(nodes, k), "id"));
        if (id && strcmp(id, node_id) == 0) index = (int)k;
    }
    json_decref(doc);
    if (index < 0) return false;
    trn_graph_diagnostic d;
    memset(&d, 0, sizeof d);
    snprintf(d.path, sizeof d.path, "nodes[%d]%s%.100s", index, node_path[0] ? "." : "", node_path);
    if (strncmp(shown->message, "unknown key '", 13) == 0 ||
        strstr(shown->message, ": unknown key '"))
        snprintf(d.check, sizeof d.check, "unknown-param");
    trn_graph_diagnostics one = {&d, 1, 1};
    trn_mapped_file mf;
    memset(&mf, 0, sizeof mf);
    if (trn_mapped_file_open(&mf, ctx->graph_file, 0, NULL) != TRN_OK) return false;
    trn_graph_diagnostics_locate(&one, (const char *)mf.data, mf.size, ctx->graph_at);
    trn_mapped_file_close(&mf);
    if (d.line <= 0) return false;
    snprintf(shown->file, sizeof shown->file, "%s", cli_input_user_path(ctx->graph_file));
    shown->line = d.line;
    shown->column = d.column;
    return true;
}

int cli_fail(cli_ctx *ctx, const trn_error *err)
{
    cli_progress_end(ctx);
    if (err->code == TRN_ERR_CONFLICT) ctx->conflict = true;
    trn_error shown = *err;
    if (shown.file[0]) {
        const char *name = shown_path(ctx, err->file);
        if (name != err->file) snprintf(shown.file, sizeof shown.file, "%s", name);
    } else if (shown.node_id[0] && ctx->graph_file[0]) {
        locate_node(ctx, shown.node_id, shown.node_path, &shown);
    }
    char buf[2048];
    trn_error_format(&shown, buf, sizeof buf);
    cli_fprintf(stderr, "terrane %s: error: %s\n", ctx->verb, buf);
    json_error(ctx, &shown, shown.message, ctx->conflict ? CLI_EXIT_USAGE : CLI_EXIT_FAIL);
    return CLI_EXIT_FAIL;
}

static int fail_v(cli_ctx *ctx, const trn_error *at, const char *fmt, va_list ap)
{
    cli_progress_end(ctx);
    fprintf(stderr, "terrane %s: error: ", ctx->verb);
    char message[2048];
    vsnprintf(message, sizeof message, fmt, ap);
    cli_fprintf(stderr, "%s", message);
    fputc('\n', stderr);
    json_error(ctx, at, message, CLI_EXIT_FAIL);
    return CLI_EXIT_FAIL;
}

int cli_failf(cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int rc = fail_v(ctx, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int cli_failf_at(cli_ctx *ctx, const trn_error *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const int rc = fail_v(ctx, at, fmt, ap);
    va_end(ap);
    return rc;
}

/* ---------------------------------------------------------------------------------------------
 * Did you mean: the words a verb knows come from its own help text, so every verb and
 * sub-verb gets suggestions and they can never list an option the help does not.
 * ------------------------------------------------------------------------------------------- */

typedef struct word_list {
    char **items;
    size_t count, cap;
} word_list;

static void words_add(word_list *w, const char *text, size_t n)
{
    for (size_t k = 0; k < w->count; k++)
        if (strlen(w->items[k]) == n && strncmp(w->items[k], text, n) == 0) return;
    if (w->count + 2 > w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        char **items = realloc(w->items, cap * sizeof *items);
        if (!items) return;
        w->items = items;
        w->cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy) return;
    memcpy(copy, text, n);
    copy[n] = '\0';
    w->items[w->count++] = copy;
    w->items[w->count] = NULL;
}

static void words_free(word_list *w)
{
    for (size_t k = 0; k < w->count; k++)
        free(w->items[k]);
    free(w->items);
    memset(w, 0, sizeof *w);
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_';
}

/* Every option a help text names: "-o" and "--long-name" starting a word. */
static void help_options(const char *text, word_list *out)
{
    for (const char *p = text; *p; p++) {
        if (*p != '-' || (p > text && (word_char(p[-1]) || p[-1] == '.'))) continue;
        const char *q = p + (p[1] == '-' ? 2 : 1);
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z'))) continue;
        const char *end = q;
        while (word_char(*end))
            end++;
        if (q == p + 1 && end != q + 1) continue; /* "-abc" is not a short option */
        while (end > q && end[-1] == '-')
            end--;
        words_add(out, p, (size_t)(end - p));
        p = end - 1;
    }
}

/* The sub-verbs a help text names: the words after "terrane VERB " ("<a|b|c>" lists too). */
static void help_subverbs(const char *text, const char *verb, word_list *out)
{
    char lead[96];
    snprintf(lead, sizeof lead, "terrane %s ", verb);
    size_t lead_n = strlen(lead);
    for (const char *p = strstr(text, lead); p; p = strstr(p + 1, lead)) {
        const char *q = p + lead_n;
        bool list = *q == '<';
        if (list) q++;
        for (;;) {
            const char *end = q;
            while ((*end >= 'a' && *end <= 'z') || (*end >= '0' && *end <= '9') || *end == '-')
                end++;
            if (end > q && *q != '-') words_add(out, q, (size_t)(end - q));
            if (!list || *end != '|') break;
            q = end + 1;
        }
    }
}

static const char *bare_word(const char *s)
{
    while (*s == '-')
        s++;
    return s;
}

const char *cli_did_you_mean(const char *word, const char *const *candidates)
{
    char w[128];
    const char *b = bare_word(word);
    size_t n = strcspn(b, "=");
    if (n < 3 || n >= sizeof w || !candidates) return NULL;
    memcpy(w, b, n);
    w[n] = '\0';
    size_t count = 0;
    while (candidates[count])
        count++;
    const char **stripped = malloc((count + 1) * sizeof *stripped);
    if (!stripped) return NULL;
    size_t kept = 0;
    for (size_t k = 0; k < count; k++)
        if (*bare_word(candidates[k])) stripped[kept++] = bare_word(candidates[k]);
    stripped[kept] = NULL;
    const char *hit = trn_doc_did_you_mean(w, stripped);
    const char *found = NULL;
    /* The word itself is no suggestion (an option another verb's help mentions). */
    for (size_t k = 0; hit && strcmp(hit, w) != 0 && k < count; k++)
        if (bare_word(candidates[k]) == hit) found = candidates[k];
    free(stripped);
    return found;
}

/* Which "unknown X" message fmt starts, as the kind of word it names. */
typedef enum unknown_kind { UNKNOWN_NONE, UNKNOWN_OPTION, UNKNOWN_SUBVERB } unknown_kind;

static unknown_kind unknown_of(const char *fmt)
{
    if (strncmp(fmt, "unknown option '%s'", 19) == 0) return UNKNOWN_OPTION;
    if (strncmp(fmt, "unknown sub-verb '%s'", 21) == 0 ||
        strncmp(fmt, "unknown command '%s'", 20) == 0 ||
        strncmp(fmt, "unknown graph command '%s'", 26) == 0)
        return UNKNOWN_SUBVERB;
    return UNKNOWN_NONE;
}

static cli_verb_help_fn verb_help_fn;

void cli_set_verb_help(cli_verb_help_fn fn)
{
    verb_help_fn = fn;
}

char *cli_verb_help(const char *label)
{
    return verb_help_fn ? verb_help_fn(label) : NULL;
}

/* The suggestion for an unknown word of the run's verb, from its help and extra (NULL or a
 * NULL-terminated list); copied into hint ("" when none). */
static void suggest(const cli_ctx *ctx, unknown_kind kind, const char *word,
                    const char *const *extra, char *hint, size_t size)
{
    static const char *const common[] = {"--quiet", "--format", "--help", NULL};
    hint[0] = '\0';
    word_list words = {0};
    char *help = cli_verb_help(ctx->verb);
    if (kind == UNKNOWN_OPTION) {
        for (const char *const *c = common; *c; c++)
            words_add(&words, *c, strlen(*c));
        for (const char *const *c = extra; c && *c; c++)
            words_add(&words, *c, strlen(*c));
        if (help) help_options(help, &words);
    } else if (help) {
        help_subverbs(help, ctx->verb, &words);
    }
    const char *hit = words.items ? cli_did_you_mean(word, (const char *const *)words.items) : NULL;
    if (hit) snprintf(hint, size, "%s", hit);
    words_free(&words);
    free(help);
}

static int usage_error_v(cli_ctx *ctx, const char *const *extra, const char *fmt, va_list ap)
{
    char hint[128] = "";
    unknown_kind kind = unknown_of(fmt);
    if (kind != UNKNOWN_NONE) {
        va_list first;
        va_copy(first, ap);
        const char *word = va_arg(first, const char *);
        va_end(first);
        if (word) suggest(ctx, kind, word, extra, hint, sizeof hint);
    }
    fprintf(stderr, "terrane %s: ", ctx->verb);
    char message[2048];
    vsnprintf(message, sizeof message, fmt, ap);
    cli_fprintf(stderr, "%s", message);
    if (hint[0]) cli_fprintf(stderr, "; did you mean '%s'?", hint);
    fprintf(stderr, "\n(run 'terrane %s --help' for usage)\n", ctx->verb);
    json_error(ctx, NULL, message, CLI_EXIT_USAGE);
    return CLI_EXIT_USAGE;
}

int cli_usage_error(cli_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_error_v(ctx, NULL, fmt, ap);
    va_end(ap);
    return rc;
}

static int usage_error_with(cli_ctx *ctx, const char *const *extra, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int usage_error_with(cli_ctx *ctx, const char *const *extra, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = usage_error_v(ctx, extra, fmt, ap);
    va_end(ap);
    return rc;
}

void cli_note(cli_ctx *ctx, const char *fmt, ...)
{
    if (ctx->quiet) return;
    cli_progress_end(ctx);
    va_list ap;
    va_start(ap, fmt);
    cli_vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------------------------------------
 * Inputs and outputs of a run.
 * ------------------------------------------------------------------------------------------- */

int cli_input(cli_ctx *ctx, const char *path)
{
    trn_error e;
    if (!ctx->inputs && trn_io_guard_new(&ctx->inputs, &e)) return cli_fail(ctx, &e);
    if (trn_io_guard_add(ctx->inputs, path, &e)) return cli_fail(ctx, &e);
    return CLI_EXIT_OK;
}

/* TERRANE_TEST_CRASH_STEP=N: die (as a crash would, no cleanup) at step N of the final commit,
 * for the crash-injection tests (docs/testing.md). */
static int crash_hook(int step, void *user)
{
    (void)user;
    const char *v = getenv("TERRANE_TEST_CRASH_STEP");
    if (v && atoi(v) == step) _exit(86);
    return 0;
}

trn_write_set *cli_write_set(cli_ctx *ctx)
{
    trn_error e;
    if (!ctx->inputs && trn_io_guard_new(&ctx->inputs, &e)) {
        cli_fail(ctx, &e);
        return NULL;
    }
    if (!ctx->outputs) {
        active_run = ctx;
        if (trn_write_set_new(ctx->inputs, &ctx->outputs, &e)) {
            cli_fail(ctx, &e);
            return NULL;
        }
        if (getenv("TERRANE_TEST_CRASH_STEP"))
            trn_write_set_set_step_hook(ctx->outputs, crash_hook, NULL);
    }
    return ctx->outputs;
}

/* Whether a and b name one file: the same inode, or the same resolved name when one is new. */
static bool same_output(const char *a, const char *b)
{
    if (cli_same_file(a, b)) return true;
    char *ra = trn_path_resolve_lexically(a), *rb = trn_path_resolve_lexically(b);
    const bool same = ra && rb && strcmp(ra, rb) == 0;
    free(ra);
    free(rb);
    return same;
}

const char *cli_output(cli_ctx *ctx, const char *dest)
{
    trn_write_set *ws = cli_write_set(ctx);
    if (!ws) return NULL;
    for (size_t k = 0; k < ctx->claimed_count; k++)
        if (same_output(ctx->claimed[k], dest)) {
            ctx->conflict = true;
            cli_failf(ctx, "two outputs name the same file: %s%s%s", dest,
                      strcmp(ctx->claimed[k], dest) ? " and " : "",
                      strcmp(ctx->claimed[k], dest) ? ctx->claimed[k] : "");
            return NULL;
        }
    char **grown = realloc(ctx->claimed, (ctx->claimed_count + 1) * sizeof *grown);
    char *copy = grown ? strdup(dest) : NULL;
    if (grown) ctx->claimed = grown;
    if (!copy) {
        cli_failf(ctx, "out of memory");
        return NULL;
    }
    ctx->claimed[ctx->claimed_count++] = copy;
    const char *temp = NULL;
    trn_error e;
    if (trn_write_set_stage(ws, dest, &temp, &e)) {
        cli_fail(ctx, &e);
        return NULL;
    }
    return temp;
}

/* Every file this process's commits landed, in staging order: the "outputs" of a JSON result. */
static json_t *landed;

int cli_commit(cli_ctx *ctx)
{
    if (!ctx->outputs || trn_write_set_count(ctx->outputs) == 0) return CLI_EXIT_OK;
    /* The destinations as staged (the set owns its copies until it is freed). */
    const size_t count = trn_write_set_count(ctx->outputs);
    char **dests = calloc(count, sizeof *dests);
    for (size_t i = 0; dests && i < count; i++) {
        const char *d = trn_write_set_dest(ctx->outputs, i);
        dests[i] = malloc(strlen(d) + 1);
        if (dests[i]) memcpy(dests[i], d, strlen(d) + 1);
    }
    trn_error e;
    trn_status st = trn_write_set_commit(ctx->outputs, &e);
    trn_write_set_free(ctx->outputs);
    ctx->outputs = NULL;
    if (!landed) landed = json_array();
    for (size_t i = 0; dests && i < count; i++) {
        /* A destination the set deleted (a migrated-away file) is no output. */
        if (!st && dests[i] && access(dests[i], F_OK) == 0)
            json_array_append_new(landed, cli_json_string(dests[i]));
        free(dests[i]);
    }
    free(dests);
    return st ? cli_fail(ctx, &e) : CLI_EXIT_OK;
}

int cli_finish(cli_ctx *ctx, int rc)
{
    if (rc == CLI_EXIT_OK) rc = cli_commit(ctx);
    if (rc == CLI_EXIT_OK && result_commit_failed) rc = CLI_EXIT_FAIL;
    if (rc == CLI_EXIT_FAIL && ctx->conflict) rc = CLI_EXIT_USAGE;
    trn_write_set_free(ctx->outputs); /* uncommitted: the staged files go, the old ones stay */
    ctx->outputs = NULL;
    trn_io_guard_free(ctx->inputs);
    ctx->inputs = NULL;
    for (size_t k = 0; k < ctx->claimed_count; k++)
        free(ctx->claimed[k]);
    free(ctx->claimed);
    ctx->claimed = NULL;
    ctx->claimed_count = 0;
    if (active_run == ctx) active_run = NULL;
    return rc;
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
        if (strcmp(v, "json") == 0) {
            if (ctx->text_only) {
                cli_usage_error(ctx, "prints no JSON (its messages are notes on stderr); drop "
                                     "--format json");
                return -1;
            }
            ctx->json = true;
        } else if (strcmp(v, "text") == 0) {
            ctx->json = false;
        } else {
            static const char *const values[] = {"text", "json", NULL};
            const char *hint = cli_did_you_mean(v, values);
            cli_usage_error(ctx, "--format takes 'text' or 'json', not '%s'%s%s%s", v,
                            hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
            return -1;
        }
        return 1;
    }
    return 0;
}

int cli_sub_verb_at(cli_ctx *ctx, int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        const int c = cli_common_option(ctx, argc, argv, &i);
        if (c < 0) return -1;
        if (c == 0) break;
    }
    return i;
}

int cli_top_usage_error(cli_ctx *ctx, const char *message)
{
    cli_fprintf(stderr, "terrane: %s\n(run 'terrane --help' for the verbs and common options)\n",
                message);
    json_error(ctx, NULL, message, CLI_EXIT_USAGE);
    return CLI_EXIT_USAGE;
}

int cli_text_only(cli_ctx *ctx)
{
    ctx->text_only = true;
    if (!ctx->json) return CLI_EXIT_OK;
    return cli_usage_error(ctx, "prints no JSON (its messages are notes on stderr); drop "
                                "--format json");
}

bool cli_known_option(cli_ctx *ctx, const char *arg, const char *const *names)
{
    static const char *const load_options[] = {
        "--max-height",  "--square-size", "--size",         "--raw-type",
        "--max-samples", "--channel",     "--input-format", NULL};
    for (const char *const *n = names; n && *n; n++)
        if (strcmp(arg, *n) == 0) return true;
    for (const char *const *n = load_options; *n; n++)
        if (strcmp(arg, *n) == 0) return true;
    word_list known = {0};
    for (const char *const *n = names; n && *n; n++)
        words_add(&known, *n, strlen(*n));
    for (const char *const *n = load_options; *n; n++)
        words_add(&known, *n, strlen(*n));
    usage_error_with(ctx, (const char *const *)known.items, "unknown option '%s'", arg);
    words_free(&known);
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

bool cli_parse_max_work(cli_ctx *ctx, const char *text, uint64_t *out)
{
    double d;
    if (!cli_parse_double(ctx, "--max-work", text, &d)) return false;
    if (!(d >= 1.0 && d <= 1.8e19) || floor(d) != d) {
        cli_usage_error(
            ctx, "--max-work takes a whole number of work units from 1 to 1.8e19, not '%s'", text);
        return false;
    }
    *out = (uint64_t)d;
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

/* Whether this process has printed its JSON result (a failure after it adds no error object). */
static bool json_result_printed;

/* The verbs whose result lists what they wrote ("outputs", [] when nothing was), docs/cli.md. */
static bool verb_writes(const char *verb)
{
    static const char *const writers[] = {"generate",
                                          "convert",
                                          "render",
                                          "mesh",
                                          "cook",
                                          "scatter",
                                          "compact",
                                          "apply-preset",
                                          "beamng import",
                                          "beamng create",
                                          "beamng export",
                                          "beamng migrate",
                                          "beamng validate",
                                          "stationeers extract",
                                          "stationeers replace",
                                          "stationeers from-heightfield",
                                          "unity extract",
                                          "unity export",
                                          NULL};
    for (size_t i = 0; verb && writers[i]; i++)
        if (strcmp(verb, writers[i]) == 0) return true;
    return false;
}

void cli_run_begin(cli_ctx *ctx)
{
    json_run = ctx;
}

void cli_print_json(json_t *value)
{
    /* A run's result lists the files it wrote, so they land first: a failure to land them is
     * then the run's answer (the error object) instead of a result naming files that are not
     * there. */
    if (json_run && json_is_object(value) && !json_object_get(value, "error")) {
        if (json_run->outputs && trn_write_set_count(json_run->outputs) > 0 &&
            cli_commit(json_run) != CLI_EXIT_OK) {
            result_commit_failed = true;
            json_decref(value);
            return;
        }
        if (!json_object_get(value, "outputs") &&
            (verb_writes(json_run->verb) || json_array_size(landed) > 0))
            json_object_set_new(value, "outputs", landed ? json_copy(landed) : json_array());
    }
    /* Reals in their shortest round-trip form (0.2, not 0.20000000000000001). */
    char *text = trn_json_dumps_shortest(value, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(value);
    if (!text) return;
    fputs(text, stdout);
    fputc('\n', stdout);
    free(text);
    json_result_printed = true;
}

/* With --format json, a failure still answers on stdout: {"error": {...}} (what stderr says,
 * by field), unless the result was already printed. */
static void json_error(cli_ctx *ctx, const trn_error *err, const char *message, int exit_code)
{
    if (!ctx->json || json_result_printed) return;
    json_t *e = json_object();
    if (ctx->verb) json_object_set_new(e, "verb", json_string(ctx->verb));
    json_object_set_new(e, "exit_code", json_integer(exit_code));
    json_object_set_new(e, "message", cli_json_string(message));
    if (err) {
        json_object_set_new(e, "code", json_string(trn_status_name(err->code)));
        if (err->file[0]) json_object_set_new(e, "file", cli_json_string(err->file));
        if (err->offset >= 0) json_object_set_new(e, "offset", json_integer(err->offset));
        if (err->line > 0) {
            json_object_set_new(e, "line", json_integer(err->line));
            json_object_set_new(e, "column", json_integer(err->column));
        }
        if (err->node_id[0]) json_object_set_new(e, "node", cli_json_string(err->node_id));
    }
    json_t *o = json_object();
    json_object_set_new(o, "error", e);
    cli_print_json(o);
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

/* A verb allocates and frees grids of the same few sizes many times (each node's result, each
 * stream-power level's arrays), and glibc returns each one to the kernel (a block over its
 * dynamic mmap threshold, or the heap's top over 128 KiB): the next array's first touch then
 * faults every page in again and the kernel zeroes it (a third of the CPU time of a 4097^2
 * generate; on a 2-core virtual machine 32k faults of the Mountain Range's 1025^2, 18k with
 * this). Blocks up to 32 MiB (2896^2 floats) now come from the heap, and up to 256 MiB of free
 * heap is kept; larger blocks are still mapped and unmapped. */
void cli_keep_freed_memory(void)
{
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}
