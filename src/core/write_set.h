/* Write sets and temporaries: the internal side (test hooks, stale-temporary cleanup). */
#ifndef TRN_CORE_WRITE_SET_H
#define TRN_CORE_WRITE_SET_H

#include <stdbool.h>

#include "terrane/io.h"

/* Called at each step of a commit: 0 all staged and synced, 1 journals complete, 2 + i after
 * the i-th rename, 2 + count after the journals are gone. A non-zero return stops the commit
 * there as a crash would: nothing is cleaned up, the call fails with TRN_ERR_IO and freeing the
 * set leaves every file in place (only its locks go, as when a process dies). For tests. */
typedef int (*trn_write_set_step_fn)(int step, void *user);
void trn_write_set_set_step_hook(trn_write_set *set, trn_write_set_step_fn fn, void *user);

/* Where a writer puts dest: its staged temporary when set is non-NULL, else dest itself (then
 * written by an atomic single-file write). */
trn_status trn_write_target(trn_write_set *set, const char *dest, const char **path,
                            trn_error *err);

/* Multi-file writers take an optional set: *use is given when non-NULL, else a new set kept in
 * *own that trn_write_own_finish commits (when st is TRN_OK) and frees; returns the final status. */
trn_status trn_write_own_begin(trn_write_set *given, trn_write_set **use, trn_write_set **own,
                               trn_error *err);
trn_status trn_write_own_finish(trn_write_set *own, trn_status st, trn_error *err);

/* Before writing path: finish or discard dead sets whose journal sits in path's folder and
 * delete the unlocked temporaries "BASE.tmp-XXXXXX" (and their own ".tmp-XXXXXX") of path left
 * by dead runs. Nothing is removed while a live set stages in that folder. Best effort: errors
 * are ignored, as the write that follows reports its own. */
void trn_clean_stale_temporaries(const char *path);

/* The process-wide list of temporaries trn_io_remove_temporaries deletes. path must stay valid
 * until unregistered. Best effort: past 256 live entries new ones are not registered. */
void trn_temp_register(const char *path);
void trn_temp_unregister(const char *path);

/* Hold off SIGINT, SIGTERM and SIGHUP (the signals whose handler removes temporaries) while a
 * temporary is created and registered, so none is ever on disk unregistered. */
typedef struct trn_signal_hold {
    /* the previous sigset_t, kept as bytes so this header needs no POSIX feature macros */
    _Alignas(8) unsigned char old[256];
} trn_signal_hold;
void trn_signals_hold(trn_signal_hold *hold);
void trn_signals_release(const trn_signal_hold *hold);

#endif
