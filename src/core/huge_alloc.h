/* Large arrays aligned to 2 MiB and advised onto huge pages where the system offers them. */
#ifndef TRN_CORE_HUGE_ALLOC_H
#define TRN_CORE_HUGE_ALLOC_H

#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define TRN_HUGE_PAGE ((size_t)2 << 20)

/* A block of `bytes` (uninitialised): from `min_bytes` (at least one huge page) up, aligned to
 * a huge page with MADV_HUGEPAGE on its whole pages, so a first write faults once per 2 MiB
 * instead of once per 4 KiB; smaller blocks from malloc. free() releases either. The including
 * file defines _DEFAULT_SOURCE before its first include (posix_memalign, madvise). */
static inline void *trn_huge_alloc(size_t bytes, size_t min_bytes)
{
    if (bytes < min_bytes || bytes < TRN_HUGE_PAGE) return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, TRN_HUGE_PAGE, bytes) != 0) return NULL;
#ifdef MADV_HUGEPAGE
    (void)madvise(p, bytes & ~(TRN_HUGE_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

#endif
