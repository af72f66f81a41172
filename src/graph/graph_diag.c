/* Graph diagnostics: what the checker and node families report, collected in order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_internal.h"

const trn_recipe *trn_check_recipe(const trn_check_ctx *c)
{
    return c->recipe;
}

static void diag(trn_check_ctx *c, trn_graph_severity sev, const char *check, const trn_graph_node *node,
                 const char *pin, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 7, 8)))
#endif
    ;

static void diag(trn_check_ctx *c, trn_graph_severity sev, const char *check, const trn_graph_node *node,
                 const char *pin, const char *path, const char *fmt, ...)
{
    trn_graph_diagnostics *d = c->out;
    if (d->count == d->capacity) {
        size_t cap = d->capacity ? d->capacity * 2 : 8;
        trn_graph_diagnostic *items = realloc(d->items, cap * sizeof *items);
        if (!items) {
            c->failed = true;
            return;
        }
        d->items = items;
        d->capacity = cap;
    }
    trn_graph_diagnostic *x = &d->items[d->count++];
    memset(x, 0, sizeof *x);
    x->severity = sev;
    snprintf(x->check, sizeof x->check, "%s", check);
    if (node && node->id) snprintf(x->node_id, sizeof x->node_id, "%s", node->id);
    if (pin) snprintf(x->pin, sizeof x->pin, "%s", pin);
    snprintf(x->path, sizeof x->path, "%s", path ? path : "");
    x->offset = -1;
    char msg[380];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* Messages name the node first so a list of them reads on its own. */
    if (node && node->id)
        snprintf(x->message, sizeof x->message, "node '%.60s' (%.32s): %s", node->id,
                 node->type ? node->type : "?", msg);
    else
        snprintf(x->message, sizeof x->message, "%s", msg);
}

void trn_check_diag(trn_check_ctx *c, trn_graph_severity sev, const char *check,
                    const trn_graph_node *node, const char *pin, const char *path, const char *fmt,
                    ...)
{
    char msg[380];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag(c, sev, check, node, pin, path, "%s", msg);
}

void trn_graph_diagnostics_dispose(trn_graph_diagnostics *diagnostics)
{
    if (!diagnostics) return;
    free(diagnostics->items);
    memset(diagnostics, 0, sizeof *diagnostics);
}

size_t trn_graph_diagnostics_errors(const trn_graph_diagnostics *diagnostics)
{
    size_t n = 0;
    for (size_t k = 0; diagnostics && k < diagnostics->count; k++)
        n += diagnostics->items[k].severity == TRN_GRAPH_ERROR;
    return n;
}
