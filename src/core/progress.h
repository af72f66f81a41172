/* Scaled progress reporting: a sub-step maps its 0..1 into a slice of its parent's range. */
#ifndef TRN_CORE_PROGRESS_H
#define TRN_CORE_PROGRESS_H

#include <stdbool.h>

#include "terrane/core.h"

typedef struct trn_progress {
    trn_progress_fn fn;
    void *user;
    double lo, hi;
} trn_progress;

static inline trn_progress trn_progress_make(trn_progress_fn fn, void *user)
{
    trn_progress p = {fn, user, 0.0, 1.0};
    return p;
}

/* The slice [a, b] (0..1) of parent's range. */
static inline trn_progress trn_progress_sub(const trn_progress *parent, double a, double b)
{
    trn_progress p = *parent;
    double w = parent->hi - parent->lo;
    p.lo = parent->lo + w * a;
    p.hi = parent->lo + w * b;
    return p;
}

/* Report done (0..1 of this slice). Returns true when the callback asked to cancel. */
static inline bool trn_progress_report(const trn_progress *p, double done, const char *stage)
{
    if (!p || !p->fn) return false;
    double v = p->lo + (p->hi - p->lo) * done;
    return p->fn(v, stage, p->user) == TRN_CANCEL;
}

#endif
