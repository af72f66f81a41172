/* How many cores no other process is running on now: for work whose result is the same on
 * any thread count. */
#ifndef TRN_CORE_IDLE_H
#define TRN_CORE_IDLE_H

/* The online CPUs less one for the calling thread and less the runnable tasks in
 * /proc/loadavg that are not this process's (-1 where unknown: no such file). An instant's
 * count, not the load average: it follows the machine within a run. */
int trn_idle_cores(void);

/* Threads for a parallel stage whose bytes do not depend on the thread count: `threads` where
 * the caller asked for a count (asked > 0), else at most one more than the idle cores (all of
 * them where that is unknown). On a machine whose every core is taken, threads beyond the
 * first cannot get a core of their own: they only add waiting at each barrier and moving data
 * between caches, so such a stage runs on one thread there and on all of them where the
 * cores are free. */
int trn_threads_free(int threads, int asked);

#endif
