/* Safe outputs: inputs a run never replaces, multi-file writes that land together, and
 * temporaries cleaned up after an interruption. */
#ifndef TERRANE_IO_H
#define TERRANE_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "terrane/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Input guard: the files a run reads. No output of the run may replace one of them: outputs are
 * compared by device and inode, so another spelling ("./a/../x.png"), a hard link or a symbolic
 * link to an input counts as the input. Not thread-safe while adding; checks may run from any
 * thread once all inputs are added.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_io_guard trn_io_guard;

trn_status trn_io_guard_new(trn_io_guard **out, trn_error *err);
/* NULL is a no-op. */
void trn_io_guard_free(trn_io_guard *guard);
/* Remember path as an input. A path that does not exist is remembered by its name (resolved
 * against the current folder), so an output of that name is refused too. Adding the same file
 * twice is harmless. */
trn_status trn_io_guard_add(trn_io_guard *guard, const char *path, trn_error *err);
/* TRN_OK when writing output replaces none of the guarded files (guard NULL: always OK);
 * TRN_ERR_CONFLICT naming both paths otherwise ("is the input X (the same file, through a hard
 * link); inputs are never overwritten"). */
trn_status trn_io_guard_check(const trn_io_guard *guard, const char *output, trn_error *err);

/* ---------------------------------------------------------------------------------------------
 * Write sets: files that land together or not at all (a BeamNG level's .ter, .terrain.json,
 * heightmap, items.level.json and materials; a Unity export's RAW, JSON and splat maps).
 *
 * Each destination is staged: its new content is written to a temporary "DEST.tmp-XXXXXX" beside
 * it. While a set is staging, each folder it writes into holds a locked journal
 * ".terrane-journal-XXXXXX". Commit writes the full list of renames into every journal and fsyncs
 * them, renames each temporary over its destination in staging order, fsyncs the folders and
 * deletes the journals. So after a crash at any instant a folder holds either the old files, or
 * the new ones, or a complete journal from which trn_write_set_recover finishes the set (every
 * temporary it names is complete and synced). A journal without its commit list belongs to a
 * set that never committed: recovery deletes it and its temporaries, leaving the old files.
 * Sets are not thread-safe; use one per thread.
 * ------------------------------------------------------------------------------------------- */

typedef struct trn_write_set trn_write_set;

/* guard (may be NULL) is checked for every destination when staged and again at commit; it
 * must outlive the set. */
trn_status trn_write_set_new(const trn_io_guard *guard, trn_write_set **out, trn_error *err);
/* Without a commit, deletes every temporary and journal of the set: the destinations keep
 * their old contents. NULL is a no-op. */
void trn_write_set_free(trn_write_set *set);
/* Reserve dest (creating its folder when missing): refuses a destination the guard protects
 * (TRN_ERR_CONFLICT) or a folder (TRN_ERR_IO). The set's first file in a folder first finishes
 * or discards the interrupted sets there and removes the temporaries dead runs left in it. *temp_path (owned by the set, valid until it is
 * freed) is the file to write dest's new content into, with any writer of this library
 * (they write atomically, so the temporary is whole or absent). Staging dest again returns the
 * same temporary. */
trn_status trn_write_set_stage(trn_write_set *set, const char *dest, const char **temp_path,
                               trn_error *err);
/* Delete dest when the set commits, in staging order with the renames (recovery deletes it
 * too). Guarded like a staged file. Reads through trn_write_set_current still see dest. */
trn_status trn_write_set_remove(trn_write_set *set, const char *dest, trn_error *err);
/* The file holding dest's content as the set will leave it: its temporary when staged, else
 * dest itself (for read-modify-write of a file staged earlier in the same set). */
const char *trn_write_set_current(const trn_write_set *set, const char *dest);
/* Number of staged destinations and the i-th one (as given to stage). */
size_t trn_write_set_count(const trn_write_set *set);
const char *trn_write_set_dest(const trn_write_set *set, size_t index);
/* Land every staged file as described above. Signals (SIGINT, SIGTERM, SIGHUP) are held off
 * while renaming. Fails when a temporary is missing (nothing is renamed) or a rename fails
 * (the journals stay, and the message names the folder to recover). A set commits once; an
 * empty set commits trivially. */
trn_status trn_write_set_commit(trn_write_set *set, trn_error *err);

/* What recovery found in a folder. */
typedef struct trn_recovery_report {
    uint32_t completed;   /* interrupted commits finished (their new files landed) */
    uint32_t discarded;   /* sets that died before committing (old files kept) */
    uint32_t in_progress; /* journals locked by a live process (left alone) */
    uint32_t temporaries_removed; /* stale DEST.tmp-XXXXXX files deleted */
    /* Journals not replayed because this process did not write them: owned by another user,
     * naming a file outside their own folder, or in an older format. Left as they are. */
    uint32_t refused;
    char first_journal[1024];   /* the first journal found ("" when none) */
    char refused_reason[1400];  /* the first refused journal and why ("" when none) */
} trn_recovery_report;

/* Finish or discard every interrupted set with a journal in dir (and its sub-folders when
 * recursive; symbolic links are not followed), and delete stale temporaries there. report may
 * be NULL. */
trn_status trn_write_set_recover(const char *dir, bool recursive, trn_recovery_report *report,
                                 trn_error *err);
/* The same survey without changing anything: completed counts commits that recovery would
 * finish, discarded the dead staging sets, temporaries_removed the stale temporaries. */
trn_status trn_write_set_scan(const char *dir, bool recursive, trn_recovery_report *report,
                              trn_error *err);

/* Delete every temporary file and staging journal this process is writing. Async-signal-safe:
 * for SIGINT/SIGTERM handlers, which then re-raise the signal. Commits in progress keep theirs
 * (recovery finishes them). */
void trn_io_remove_temporaries(void);

#ifdef __cplusplus
}
#endif

#endif
