/* Input guards, journaled multi-file write sets, recovery and stale-temporary cleanup. */
#define _GNU_SOURCE
#include "write_set.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/textbuf.h"

#include "paths.h"
#include "textbuf.h"

#define JOURNAL_PREFIX ".terrane-journal-"
#define JOURNAL_MAGIC "terrane write set 2\n"
/* Journals are small (a line per file); anything larger is not ours. */
#define JOURNAL_MAX_BYTES (16u << 20)

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    size_t k = a;
    if (k == 0 || p[k - 1] != '/') p[k++] = '/';
    memcpy(p + k, name, b + 1);
    return p;
}

/* The folder part of path ("." when none) as a malloc'd string. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return trn_text_dup(".");
    if (slash == path) return trn_text_dup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (!d) return NULL;
    memcpy(d, path, n);
    d[n] = '\0';
    return d;
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static void fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

static trn_status oom(trn_error *err)
{
    return trn_error_set(err, TRN_ERR_NO_MEMORY, NULL, -1, "out of memory");
}

/* ---------------------------------------------------------------------------------------------
 * Temporaries a signal handler removes.
 * ------------------------------------------------------------------------------------------- */

#define TEMP_SLOTS 256
/* Process-wide by necessity: a signal handler has no other way to find them. */
static _Atomic(const char *) temp_slots[TEMP_SLOTS];

void trn_temp_register(const char *path)
{
    for (size_t i = 0; i < TEMP_SLOTS; i++) {
        const char *expected = NULL;
        if (atomic_compare_exchange_strong(&temp_slots[i], &expected, path)) return;
    }
}

void trn_temp_unregister(const char *path)
{
    for (size_t i = 0; i < TEMP_SLOTS; i++) {
        const char *expected = path;
        if (atomic_compare_exchange_strong(&temp_slots[i], &expected, NULL)) return;
    }
}

_Static_assert(sizeof(sigset_t) <= sizeof(((trn_signal_hold *)0)->old), "sigset_t fits");

void trn_signals_hold(trn_signal_hold *hold)
{
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    memcpy(hold->old, &old, sizeof old);
}

void trn_signals_release(const trn_signal_hold *hold)
{
    sigset_t old;
    memcpy(&old, hold->old, sizeof old);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void trn_io_remove_temporaries(void)
{
    for (size_t i = 0; i < TEMP_SLOTS; i++) {
        const char *p = atomic_load(&temp_slots[i]);
        if (p) unlink(p);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Input guard.
 * ------------------------------------------------------------------------------------------- */

typedef struct guard_item {
    bool exists; /* dev and ino are known */
    dev_t dev;
    ino_t ino;
    char *path;     /* as given */
    char *resolved; /* absolute, for inputs that do not exist (yet) */
} guard_item;

struct trn_io_guard {
    guard_item *items;
    size_t count, capacity;
};

trn_status trn_io_guard_new(trn_io_guard **out, trn_error *err)
{
    *out = calloc(1, sizeof **out);
    return *out ? TRN_OK : oom(err);
}

void trn_io_guard_free(trn_io_guard *guard)
{
    if (!guard) return;
    for (size_t i = 0; i < guard->count; i++) {
        free(guard->items[i].path);
        free(guard->items[i].resolved);
    }
    free(guard->items);
    free(guard);
}

trn_status trn_io_guard_add(trn_io_guard *guard, const char *path, trn_error *err)
{
    if (!guard || !path || !path[0]) return TRN_OK;
    struct stat st;
    bool exists = stat(path, &st) == 0;
    for (size_t i = 0; exists && i < guard->count; i++)
        if (guard->items[i].exists && guard->items[i].dev == st.st_dev &&
            guard->items[i].ino == st.st_ino)
            return TRN_OK;
    if (guard->count == guard->capacity) {
        size_t cap = guard->capacity ? guard->capacity * 2 : 8;
        guard_item *n = realloc(guard->items, cap * sizeof *n);
        if (!n) return oom(err);
        guard->items = n;
        guard->capacity = cap;
    }
    guard_item g = {0};
    g.exists = exists;
    if (exists) {
        g.dev = st.st_dev;
        g.ino = st.st_ino;
    }
    g.path = trn_text_dup(path);
    /* A missing input is still the same name as an output: "convert a.ter a.ter". */
    g.resolved = exists ? NULL : trn_path_resolve_lexically(path);
    if (!g.path || (!exists && !g.resolved)) {
        free(g.path);
        free(g.resolved);
        return oom(err);
    }
    guard->items[guard->count++] = g;
    return TRN_OK;
}

static trn_status conflict(trn_error *err, const char *output, const char *input, const char *how)
{
    return trn_error_set(err, TRN_ERR_CONFLICT, output, -1,
                         "is the input %s (the same file%s); inputs are never overwritten: "
                         "choose another output",
                         input, how);
}

trn_status trn_io_guard_check(const trn_io_guard *guard, const char *output, trn_error *err)
{
    if (!guard || !output) return TRN_OK;
    struct stat st;
    bool found = stat(output, &st) == 0;
    if (!found) {
        /* "x/../a.png" with x missing names a.png once x is made: check that file now. */
        char *lexical = trn_path_resolve_lexically(output);
        if (!lexical) return oom(err);
        found = stat(lexical, &st) == 0;
        free(lexical);
    }
    if (!found) {
        char *resolved = NULL;
        for (size_t i = 0; i < guard->count; i++) {
            const guard_item *g = &guard->items[i];
            if (g->exists) continue;
            if (!resolved && !(resolved = trn_path_resolve_lexically(output))) return oom(err);
            if (strcmp(resolved, g->resolved) == 0) {
                free(resolved);
                return conflict(err, output, g->path, "");
            }
        }
        free(resolved);
        return TRN_OK;
    }
    for (size_t i = 0; i < guard->count; i++) {
        const guard_item *g = &guard->items[i];
        if (!g->exists || g->dev != st.st_dev || g->ino != st.st_ino) continue;
        struct stat lst;
        const char *how = "";
        if (lstat(output, &lst) == 0 && S_ISLNK(lst.st_mode))
            how = ", through a symbolic link";
        else if (strcmp(g->path, output) != 0 && st.st_nlink > 1)
            how = ", through a hard link";
        return conflict(err, output, g->path, how);
    }
    return TRN_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Journal text: "terrane write set 2", then "staging" and a "staged NAME" line per temporary;
 * at commit rewritten as "commit", "rename TEMP DEST" per file, "remove DEST" per deletion and
 * "end N". Each folder of a set has its own journal naming only that folder's files, by their
 * bare names ('%', space and control bytes percent-encoded): a journal can never point outside
 * its folder, and recovery replays only journals owned by the user running it.
 * ------------------------------------------------------------------------------------------- */

static bool is_temp_suffix(const char *s)
{
    if (strncmp(s, ".tmp-", 5) != 0) return false;
    for (int i = 0; i < 6; i++) {
        char c = s[5 + i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

/* "BASE.tmp-XXXXXX" or "BASE.tmp-XXXXXX.tmp-XXXXXX" (a staged file's own temporary); with base
 * NULL any name ending so. */
static bool is_temp_name(const char *name, const char *base)
{
    size_t n = strlen(name);
    if (base) {
        size_t b = strlen(base);
        if (n <= b || strncmp(name, base, b) != 0) return false;
        const char *rest = name + b;
        size_t r = n - b;
        if (r == 11) return is_temp_suffix(rest);
        return r == 22 && is_temp_suffix(rest) && is_temp_suffix(rest + 11);
    }
    return n > 11 && is_temp_suffix(name + n - 11);
}

static void tb_path(trn_text_buf *b, const char *path)
{
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        if (*p <= ' ' || *p == '%' || *p == 0x7f) {
            char enc[4];
            snprintf(enc, sizeof enc, "%%%02X", *p);
            trn_text_put(b, enc, 3);
        } else {
            trn_text_put(b, (const char *)p, 1);
        }
    }
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* Decode one percent-encoded word starting at *p (ends at space or newline). NULL when
 * malformed or empty; *bad_name set when it decodes to anything but a plain file name. */
static char *read_word(const char **p, const char *end, bool *bad_name)
{
    const char *s = *p;
    size_t n = 0;
    while (s + n < end && s[n] != ' ' && s[n] != '\n')
        n++;
    if (n == 0) return NULL;
    char *out = malloc(n + 1);
    if (!out) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '%') {
            int hi = i + 2 < n ? hex_value(s[i + 1]) : -1;
            int lo = i + 2 < n ? hex_value(s[i + 2]) : -1;
            if (hi < 0 || lo < 0) {
                free(out);
                return NULL;
            }
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = '\0';
    /* A name in the journal's own folder: no folder part, no "." or "..", no embedded NUL. */
    if (strlen(out) != k || strchr(out, '/') || strcmp(out, ".") == 0 || strcmp(out, "..") == 0) {
        *bad_name = true;
        free(out);
        return NULL;
    }
    *p = s + n;
    return out;
}

typedef struct journal_doc {
    bool complete; /* a commit list with its end line */
    char **staged;
    size_t staged_count;
    char **temps, **dests;
    size_t rename_count, dest_count;
    char **removes;
    size_t remove_count;
} journal_doc;

static void journal_doc_free(journal_doc *d)
{
    for (size_t i = 0; i < d->staged_count; i++)
        free(d->staged[i]);
    for (size_t i = 0; i < d->rename_count; i++)
        free(d->temps[i]);
    for (size_t i = 0; i < d->dest_count; i++)
        free(d->dests[i]);
    for (size_t i = 0; i < d->remove_count; i++)
        free(d->removes[i]);
    free(d->removes);
    free(d->staged);
    free(d->temps);
    free(d->dests);
    memset(d, 0, sizeof *d);
}

static bool push_word(char ***list, size_t *count, char *word)
{
    char **n = realloc(*list, (*count + 1) * sizeof *n);
    if (!n) {
        free(word);
        return false;
    }
    *list = n;
    n[(*count)++] = word;
    return true;
}

/* What reading a journal gave. */
typedef enum { J_NOT_OURS, J_OURS, J_REFUSED } journal_kind;

/* Parse journal text into d. J_NOT_OURS when it is no journal at all (left alone); J_REFUSED
 * with why filled when it is one that must not be replayed (an older format with absolute
 * paths, a name outside its folder, a rename of anything but a temporary over its own file);
 * an unfinished commit list (a crash while writing it) parses as incomplete. */
static journal_kind journal_parse(const char *text, size_t size, journal_doc *d, char *why,
                                  size_t why_size)
{
    memset(d, 0, sizeof *d);
    static const char old_magic[] = "terrane write set 1\n";
    if (size >= sizeof old_magic - 1 && memcmp(text, old_magic, sizeof old_magic - 1) == 0) {
        snprintf(why, why_size,
                 "written by an earlier terrane in a format naming absolute paths");
        return J_REFUSED;
    }
    const size_t magic = strlen(JOURNAL_MAGIC);
    if (size < magic || memcmp(text, JOURNAL_MAGIC, magic) != 0) return J_NOT_OURS;
    const char *p = text + magic, *end = text + size;
    bool commit = false, ended = false, bad_name = false;
    size_t declared = 0, line = 1;
    while (p < end) {
        line++;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) break;   /* a torn last line: the commit list is unfinished */
        if (ended) break; /* nothing follows "end" in a journal we wrote */
        size_t n = (size_t)(nl - p);
        bool ok = true;
        if (n == 7 && memcmp(p, "staging", 7) == 0) {
        } else if (n == 6 && memcmp(p, "commit", 6) == 0) {
            commit = true;
        } else if (n > 7 && memcmp(p, "staged ", 7) == 0) {
            const char *q = p + 7;
            char *w = read_word(&q, nl, &bad_name);
            if (w && !is_temp_name(w, NULL)) {
                snprintf(why, why_size, "lists '%s' as a temporary, which it is not", w);
                free(w);
                journal_doc_free(d);
                return J_REFUSED;
            }
            ok = w && q == nl && push_word(&d->staged, &d->staged_count, w);
        } else if (n > 7 && memcmp(p, "rename ", 7) == 0) {
            const char *q = p + 7;
            char *t = read_word(&q, nl, &bad_name);
            char *dst = NULL;
            if (t && q < nl && *q == ' ') {
                q++;
                dst = read_word(&q, nl, &bad_name);
            }
            if (t && dst && q == nl) {
                /* Only a file's own temporary ever replaces it. */
                size_t dl = strlen(dst);
                if (strlen(t) != dl + 11 || strncmp(t, dst, dl) != 0 ||
                    !is_temp_suffix(t + dl)) {
                    snprintf(why, why_size, "renames '%s' over '%s', which is not its temporary",
                             t, dst);
                    free(t);
                    free(dst);
                    journal_doc_free(d);
                    return J_REFUSED;
                }
                ok = push_word(&d->temps, &d->rename_count, t);
                ok = push_word(&d->dests, &d->dest_count, dst) && ok;
            } else {
                free(t);
                free(dst);
                ok = false;
            }
        } else if (n > 7 && memcmp(p, "remove ", 7) == 0) {
            const char *q = p + 7;
            char *w = read_word(&q, nl, &bad_name);
            ok = w && q == nl && push_word(&d->removes, &d->remove_count, w);
        } else if (n > 4 && memcmp(p, "end ", 4) == 0) {
            char num[24];
            if (n - 4 >= sizeof num) {
                ok = false;
            } else {
                memcpy(num, p + 4, n - 4);
                num[n - 4] = '\0';
                char *e = NULL;
                unsigned long long v = strtoull(num, &e, 10);
                ok = e && *e == '\0' && num[0] >= '0' && num[0] <= '9';
                declared = (size_t)v;
                ended = ok;
            }
        } else {
            ok = false;
        }
        if (!ok) {
            journal_doc_free(d);
            if (bad_name) {
                snprintf(why, why_size, "names a file outside its own folder");
                return J_REFUSED;
            }
            snprintf(why, why_size, "line %zu is not a journal line", line);
            return J_REFUSED;
        }
        p = nl + 1;
    }
    d->complete = commit && ended && declared == d->rename_count + d->remove_count &&
                  d->rename_count == d->dest_count;
    return J_OURS;
}

static bool read_small_file(int fd, char **out, size_t *size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > JOURNAL_MAX_BYTES)
        return false;
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf) return false;
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    *out = buf;
    *size = got;
    return true;
}

/* Check that every temporary a complete journal renames is a regular file of ours (or already
 * gone): a refused journal changes nothing. */
static bool temporaries_are_ours(const journal_doc *d, int dfd, char *why, size_t why_size)
{
    for (size_t i = 0; i < d->rename_count; i++) {
        struct stat st;
        if (fstatat(dfd, d->temps[i], &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
            snprintf(why, why_size, "would rename '%s', which is %s", d->temps[i],
                     S_ISREG(st.st_mode) ? "owned by another user" : "not a regular file");
            return false;
        }
    }
    return true;
}

/* Finish a complete journal in folder dfd: rename every temporary still there over its
 * destination, delete what it deletes, then the journal. Idempotent, so a crash during
 * recovery is recovered too. */
static trn_status roll_forward(const journal_doc *d, int dfd, const char *dir,
                               const char *journal_path, const char *journal_name, trn_error *err)
{
    for (size_t i = 0; i < d->rename_count; i++) {
        struct stat st;
        if (fstatat(dfd, d->temps[i], &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue; /* renamed before the interruption */
        if (renameat(dfd, d->temps[i], dfd, d->dests[i]) != 0)
            return trn_error_set(err, TRN_ERR_IO, dir, -1,
                                 "cannot finish the interrupted write recorded in %s: renaming "
                                 "%s over %s failed: %s",
                                 journal_path, d->temps[i], d->dests[i], strerror(errno));
    }
    for (size_t i = 0; i < d->remove_count; i++)
        if (unlinkat(dfd, d->removes[i], 0) != 0 && errno != ENOENT)
            return trn_error_set(err, TRN_ERR_IO, dir, -1,
                                 "cannot finish the interrupted write recorded in %s: deleting "
                                 "%s failed: %s",
                                 journal_path, d->removes[i], strerror(errno));
    (void)fsync(dfd);
    unlinkat(dfd, journal_name, 0);
    return TRN_OK;
}

/* True when fd's file is not locked by anyone (a dead writer's). */
static bool unlocked(int fd)
{
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) return false;
    flock(fd, LOCK_UN);
    return true;
}

/* Note a journal that is not replayed. */
static void refuse(trn_recovery_report *rep, const char *path, const char *why)
{
    if (!rep) return;
    if (!rep->refused++)
        snprintf(rep->refused_reason, sizeof rep->refused_reason, "%s: %s", path, why);
}

/* Handle the journals and stale temporaries of one folder (see trn_clean_stale_temporaries and
 * trn_write_set_recover). base NULL: every temporary. dry: only count. Journals owned by another
 * user, or naming anything but files of this folder, are refused: never replayed or deleted. */
static trn_status clean_dir(const char *dir, const char *base, bool dry, trn_recovery_report *rep,
                            trn_error *err)
{
    DIR *dh = opendir(dir);
    if (!dh) return TRN_OK;
    const int dfd = dirfd(dh);
    trn_status st = TRN_OK;
    bool live = false;
    struct dirent *de;
    /* Journals first: a dead commit's temporaries must land before any cleanup. */
    while ((de = readdir(dh)) != NULL && !st) {
        if (strncmp(de->d_name, JOURNAL_PREFIX, strlen(JOURNAL_PREFIX)) != 0) continue;
        char *path = join_path(dir, de->d_name);
        if (!path) {
            st = oom(err);
            break;
        }
        int fd = openat(dfd, de->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
            free(path);
            continue;
        }
        struct stat js;
        if (fstat(fd, &js) != 0 || !S_ISREG(js.st_mode)) {
            close(fd);
            free(path);
            continue;
        }
        if (js.st_uid != geteuid()) {
            char why[96];
            snprintf(why, sizeof why, "owned by user id %u, not by the user running terrane",
                     (unsigned)js.st_uid);
            refuse(rep, path, why);
            close(fd);
            free(path);
            continue;
        }
        if (rep && !rep->first_journal[0])
            snprintf(rep->first_journal, sizeof rep->first_journal, "%s", path);
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            live = true;
            if (rep) rep->in_progress++;
            close(fd);
            free(path);
            continue;
        }
        char *text = NULL, why[600] = "";
        size_t size = 0;
        journal_doc d;
        journal_kind kind = J_NOT_OURS;
        if (read_small_file(fd, &text, &size)) kind = journal_parse(text, size, &d, why, sizeof why);
        free(text);
        const bool parsed = kind == J_OURS; /* d holds lists to free */
        if (kind == J_OURS && d.complete && !temporaries_are_ours(&d, dfd, why, sizeof why))
            kind = J_REFUSED;
        if (kind == J_REFUSED) {
            refuse(rep, path, why);
        } else if (kind == J_OURS && d.complete) {
            if (rep) rep->completed++;
            if (!dry) st = roll_forward(&d, dfd, dir, path, de->d_name, err);
        } else if (kind == J_OURS) {
            if (rep) rep->discarded++;
            if (!dry) {
                for (size_t i = 0; i < d.staged_count; i++) {
                    struct stat ts;
                    if (fstatat(dfd, d.staged[i], &ts, AT_SYMLINK_NOFOLLOW) == 0 &&
                        S_ISREG(ts.st_mode) && ts.st_uid == geteuid())
                        unlinkat(dfd, d.staged[i], 0);
                }
                unlinkat(dfd, de->d_name, 0);
            }
        }
        if (parsed) journal_doc_free(&d);
        close(fd); /* after the renames, so no other process saw the journal unlocked */
        free(path);
    }
    if (!st && !live) {
        rewinddir(dh);
        while ((de = readdir(dh)) != NULL) {
            if (!is_temp_name(de->d_name, base)) continue;
            int fd = openat(dfd, de->d_name, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
            struct stat sb;
            /* Only this user's: a shared folder's other temporaries are not ours to delete. */
            if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
                sb.st_uid == geteuid() && unlocked(fd)) {
                if (rep) rep->temporaries_removed++;
                if (!dry) unlinkat(dfd, de->d_name, 0);
            }
            if (fd >= 0) close(fd);
        }
    }
    closedir(dh);
    return st;
}

void trn_clean_stale_temporaries(const char *path)
{
    char *dir = dir_of(path);
    if (!dir) return;
    (void)clean_dir(dir, base_of(path), false, NULL, NULL);
    free(dir);
}

static trn_status survey(const char *dir, bool recursive, bool dry, trn_recovery_report *rep,
                         trn_error *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return trn_error_set(err, errno == ENOENT ? TRN_ERR_NOT_FOUND : TRN_ERR_IO, dir, -1,
                             "cannot open folder: %s", strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dir, -1, "is not a folder");
    trn_status s = clean_dir(dir, NULL, dry, rep, err);
    if (s || !recursive) return s;
    DIR *dh = opendir(dir);
    if (!dh) return TRN_OK;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL && !s) {
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
        char *sub = join_path(dir, de->d_name);
        if (!sub) {
            s = oom(err);
            break;
        }
        struct stat ls;
        if (lstat(sub, &ls) == 0 && S_ISDIR(ls.st_mode)) s = survey(sub, true, dry, rep, err);
        free(sub);
    }
    closedir(dh);
    return s;
}

trn_status trn_write_set_recover(const char *dir, bool recursive, trn_recovery_report *report,
                                 trn_error *err)
{
    trn_recovery_report local;
    trn_recovery_report *rep = report ? report : &local;
    memset(rep, 0, sizeof *rep);
    return survey(dir, recursive, false, rep, err);
}

trn_status trn_write_set_scan(const char *dir, bool recursive, trn_recovery_report *report,
                              trn_error *err)
{
    trn_recovery_report local;
    trn_recovery_report *rep = report ? report : &local;
    memset(rep, 0, sizeof *rep);
    return survey(dir, recursive, true, rep, err);
}

/* ---------------------------------------------------------------------------------------------
 * Write sets.
 * ------------------------------------------------------------------------------------------- */

typedef struct ws_entry {
    bool remove;    /* delete dest at commit; temp and temp_abs are NULL */
    char *dest;     /* as given */
    char *temp;     /* dest + ".tmp-XXXXXX", as given */
    char *dest_abs; /* absolute, for the journal */
    char *temp_abs;
    size_t journal; /* index of its folder's journal */
} ws_entry;

typedef struct ws_journal {
    char *dir;  /* absolute folder */
    char *path; /* absolute journal path */
    int fd;     /* held open and locked until the set ends */
} ws_journal;

enum { WS_STAGING, WS_COMMITTED, WS_ABANDONED };

struct trn_write_set {
    const trn_io_guard *guard;
    ws_entry *entries;
    size_t count, capacity;
    ws_journal *journals;
    size_t journal_count, journal_capacity;
    int state;
    trn_write_set_step_fn hook;
    void *hook_user;
};

trn_status trn_write_set_new(const trn_io_guard *guard, trn_write_set **out, trn_error *err)
{
    *out = calloc(1, sizeof **out);
    if (!*out) return oom(err);
    (*out)->guard = guard;
    return TRN_OK;
}

void trn_write_set_set_step_hook(trn_write_set *set, trn_write_set_step_fn fn, void *user)
{
    set->hook = fn;
    set->hook_user = user;
}

void trn_write_set_free(trn_write_set *set)
{
    if (!set) return;
    for (size_t i = 0; i < set->count; i++) {
        ws_entry *e = &set->entries[i];
        if (e->temp) {
            trn_temp_unregister(e->temp);
            if (set->state == WS_STAGING) unlink(e->temp);
        }
        free(e->dest);
        free(e->temp);
        free(e->dest_abs);
        free(e->temp_abs);
    }
    for (size_t i = 0; i < set->journal_count; i++) {
        ws_journal *j = &set->journals[i];
        trn_temp_unregister(j->path);
        if (set->state == WS_STAGING) unlink(j->path);
        close(j->fd);
        free(j->dir);
        free(j->path);
    }
    free(set->entries);
    free(set->journals);
    free(set);
}

size_t trn_write_set_count(const trn_write_set *set)
{
    return set ? set->count : 0;
}

const char *trn_write_set_dest(const trn_write_set *set, size_t index)
{
    return set && index < set->count ? set->entries[index].dest : NULL;
}

static ws_entry *find_entry(const trn_write_set *set, const char *dest)
{
    for (size_t i = 0; set && i < set->count; i++)
        if (strcmp(set->entries[i].dest, dest) == 0) return &set->entries[i];
    return NULL;
}

const char *trn_write_set_current(const trn_write_set *set, const char *dest)
{
    const ws_entry *e = find_entry(set, dest);
    return e && e->temp ? e->temp : dest;
}

static bool write_all(int fd, const char *data, size_t n, off_t at)
{
    while (n) {
        ssize_t w = pwrite(fd, data, n, at);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data += w;
        n -= (size_t)w;
        at += w;
    }
    return true;
}

/* The set's journal in dir (absolute), created and locked on first use. */
static trn_status journal_for(trn_write_set *set, const char *dir, ws_journal **out, trn_error *err)
{
    for (size_t i = 0; i < set->journal_count; i++)
        if (strcmp(set->journals[i].dir, dir) == 0) {
            *out = &set->journals[i];
            return TRN_OK;
        }
    if (set->journal_count == set->journal_capacity) {
        size_t cap = set->journal_capacity ? set->journal_capacity * 2 : 4;
        ws_journal *n = realloc(set->journals, cap * sizeof *n);
        if (!n) return oom(err);
        set->journals = n;
        set->journal_capacity = cap;
    }
    char *path = join_path(dir, JOURNAL_PREFIX "XXXXXX");
    char *dir_copy = trn_text_dup(dir);
    if (!path || !dir_copy) {
        free(path);
        free(dir_copy);
        return oom(err);
    }
    trn_signal_hold hold;
    trn_signals_hold(&hold);
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0) trn_temp_register(path);
    trn_signals_release(&hold);
    if (fd < 0) {
        int e = errno;
        trn_status st =
            trn_error_set(err, TRN_ERR_IO, dir, -1,
                          "cannot create a write journal in this folder: %s", strerror(e));
        free(path);
        free(dir_copy);
        return st;
    }
    if (flock(fd, LOCK_EX) != 0 ||
        !write_all(fd, JOURNAL_MAGIC "staging\n", strlen(JOURNAL_MAGIC "staging\n"), 0)) {
        int e = errno ? errno : EIO;
        close(fd);
        unlink(path);
        trn_temp_unregister(path);
        trn_status st =
            trn_error_set(err, TRN_ERR_IO, path, -1, "cannot write journal: %s", strerror(e));
        free(path);
        free(dir_copy);
        return st;
    }
    ws_journal *j = &set->journals[set->journal_count];
    j->dir = dir_copy;
    j->path = path;
    j->fd = fd;
    set->journal_count++;
    *out = j;
    return TRN_OK;
}

trn_status trn_write_set_stage(trn_write_set *set, const char *dest, const char **temp_path,
                               trn_error *err)
{
    *temp_path = NULL;
    if (!set || !dest || !dest[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no output path given");
    if (set->state != WS_STAGING)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dest, -1,
                             "this write set has already been committed");
    ws_entry *have = find_entry(set, dest);
    if (have && have->remove)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dest, -1,
                             "is already to be deleted by this write set");
    if (have) {
        *temp_path = have->temp;
        return TRN_OK;
    }
    trn_status st = trn_io_guard_check(set->guard, dest, err);
    if (st) return st;
    const char *base = base_of(dest);
    if (!base[0] || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dest, -1,
                             "is a folder name, expected a file path");
    struct stat sb;
    if (stat(dest, &sb) == 0 && S_ISDIR(sb.st_mode))
        return trn_error_set(err, TRN_ERR_IO, dest, -1, "is a directory, expected a file path");
    char *dir = dir_of(dest);
    if (!dir) return oom(err);
    st = trn_mkdir_p(dir, err);
    char *dir_abs = st ? NULL : realpath(dir, NULL);
    free(dir);
    if (st) return st;
    if (!dir_abs)
        return trn_error_set(err, TRN_ERR_IO, dest, -1, "cannot resolve the output folder: %s",
                             strerror(errno));
    /* The first file a set stages in a folder sweeps it once: dead sets finished or discarded,
     * every dead run's temporaries removed (each later stage there would only rescan it). */
    bool first_here = true;
    for (size_t i = 0; i < set->journal_count && first_here; i++)
        first_here = strcmp(set->journals[i].dir, dir_abs) != 0;
    if (first_here) (void)clean_dir(dir_abs, NULL, false, NULL, NULL);
    ws_journal *j = NULL;
    st = journal_for(set, dir_abs, &j, err);
    if (st) {
        free(dir_abs);
        return st;
    }
    if (set->count == set->capacity) {
        size_t cap = set->capacity ? set->capacity * 2 : 8;
        ws_entry *n = realloc(set->entries, cap * sizeof *n);
        if (!n) {
            free(dir_abs);
            return oom(err);
        }
        set->entries = n;
        set->capacity = cap;
    }
    ws_entry e = {0};
    size_t n = strlen(dest);
    e.dest = trn_text_dup(dest);
    e.temp = malloc(n + 12);
    e.dest_abs = join_path(dir_abs, base);
    free(dir_abs);
    if (!e.dest || !e.temp || !e.dest_abs) goto nomem;
    memcpy(e.temp, dest, n);
    memcpy(e.temp + n, ".tmp-XXXXXX", 12);
    trn_signal_hold hold;
    trn_signals_hold(&hold);
    int fd = mkostemp(e.temp, O_CLOEXEC);
    if (fd >= 0) trn_temp_register(e.temp);
    trn_signals_release(&hold);
    if (fd < 0) {
        int code = errno;
        st = trn_error_set(err, TRN_ERR_IO, dest, -1, "cannot create output: %s", strerror(code));
        goto fail;
    }
    /* Writers that fill the staged file themselves (fopen on it) keep its mode. */
    trn_file_output_mode(fd);
    close(fd);
    e.temp_abs = join_path(j->dir, base_of(e.temp));
    e.journal = (size_t)(j - set->journals);
    if (!e.temp_abs) {
        trn_temp_unregister(e.temp);
        unlink(e.temp);
        goto nomem;
    }
    /* Listed so that recovery can delete it if this run dies before committing. */
    trn_text_buf line = {0};
    trn_text_puts(&line, "staged ");
    tb_path(&line, base_of(e.temp_abs));
    trn_text_puts(&line, "\n");
    struct stat js;
    if (!line.failed && fstat(j->fd, &js) == 0)
        (void)write_all(j->fd, line.data, line.len, js.st_size);
    trn_text_free(&line);
    set->entries[set->count++] = e;
    *temp_path = set->entries[set->count - 1].temp;
    return TRN_OK;
nomem:
    st = oom(err);
fail:
    free(e.dest);
    free(e.temp);
    free(e.dest_abs);
    free(e.temp_abs);
    return st;
}

trn_status trn_write_set_remove(trn_write_set *set, const char *dest, trn_error *err)
{
    if (!set || !dest || !dest[0])
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no path to delete given");
    if (set->state != WS_STAGING)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dest, -1,
                             "this write set has already been committed");
    ws_entry *have = find_entry(set, dest);
    if (have && !have->remove)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, dest, -1,
                             "is already staged for writing by this write set");
    if (have) return TRN_OK;
    trn_status st = trn_io_guard_check(set->guard, dest, err);
    if (st) return st;
    char *dir = dir_of(dest);
    char *dir_abs = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    if (!dir_abs)
        return trn_error_set(err, TRN_ERR_IO, dest, -1, "cannot resolve its folder: %s",
                             strerror(errno ? errno : ENOMEM));
    ws_journal *j = NULL;
    st = journal_for(set, dir_abs, &j, err);
    if (!st && set->count == set->capacity) {
        size_t cap = set->capacity ? set->capacity * 2 : 8;
        ws_entry *n = realloc(set->entries, cap * sizeof *n);
        if (!n)
            st = oom(err);
        else {
            set->entries = n;
            set->capacity = cap;
        }
    }
    ws_entry e = {0};
    e.remove = true;
    if (!st) e.journal = (size_t)(j - set->journals);
    if (!st) {
        e.dest = trn_text_dup(dest);
        e.dest_abs = join_path(dir_abs, base_of(dest));
        if (!e.dest || !e.dest_abs) st = oom(err);
    }
    free(dir_abs);
    if (st) {
        free(e.dest);
        free(e.dest_abs);
        return st;
    }
    set->entries[set->count++] = e;
    return TRN_OK;
}

static int run_hook(trn_write_set *set, int step)
{
    return set->hook && set->hook(step, set->hook_user) != 0;
}

static trn_status interrupted(trn_write_set *set, int step, trn_error *err)
{
    set->state = WS_ABANDONED;
    return trn_error_set(err, TRN_ERR_IO, NULL, -1, "write interrupted at step %d (test hook)",
                         step);
}

trn_status trn_write_set_commit(trn_write_set *set, trn_error *err)
{
    if (!set) return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1, "no write set");
    if (set->state != WS_STAGING)
        return trn_error_set(err, TRN_ERR_INVALID_ARGUMENT, NULL, -1,
                             "this write set has already been committed");
    trn_status st;
    for (size_t i = 0; i < set->count; i++) {
        const ws_entry *e = &set->entries[i];
        if ((st = trn_io_guard_check(set->guard, e->dest, err))) return st;
        if (e->remove) continue;
        struct stat sb;
        if (lstat(e->temp, &sb) != 0 || !S_ISREG(sb.st_mode))
            return trn_error_set(err, TRN_ERR_IO, e->dest, -1,
                                 "its new content (%s) is gone; nothing was replaced", e->temp);
        /* The library's writers sync their files; others may not have. A file replaced in
         * place keeps its mode, owner and group. */
        int fd = open(e->temp, O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            trn_file_keep_mode(fd, e->dest);
            (void)fsync(fd);
            close(fd);
        }
    }
    trn_signal_hold hold;
    trn_signals_hold(&hold);
    if (run_hook(set, 0)) {
        trn_signals_release(&hold);
        return interrupted(set, 0, err);
    }
    /* Each folder's journal lists that folder's files alone, by name. */
    st = TRN_OK;
    for (size_t k = 0; k < set->journal_count && !st; k++) {
        trn_text_buf doc = {0};
        trn_text_puts(&doc, JOURNAL_MAGIC "commit\n");
        size_t listed = 0;
        for (size_t i = 0; i < set->count; i++) {
            const ws_entry *e = &set->entries[i];
            if (e->journal != k) continue;
            if (e->remove) {
                trn_text_puts(&doc, "remove ");
            } else {
                trn_text_puts(&doc, "rename ");
                tb_path(&doc, base_of(e->temp_abs));
                trn_text_puts(&doc, " ");
            }
            tb_path(&doc, base_of(e->dest_abs));
            trn_text_puts(&doc, "\n");
            listed++;
        }
        char end[40];
        snprintf(end, sizeof end, "end %zu\n", listed);
        trn_text_puts(&doc, end);
        ws_journal *j = &set->journals[k];
        if (doc.failed)
            st = oom(err);
        else if (ftruncate(j->fd, 0) != 0 || !write_all(j->fd, doc.data, doc.len, 0) ||
                 fsync(j->fd) != 0)
            st = trn_error_set(err, TRN_ERR_IO, j->path, -1, "cannot write journal: %s",
                               strerror(errno ? errno : EIO));
        trn_text_free(&doc);
    }
    if (st) {
        /* Some journal may now hold a full list: make every one incomplete again so recovery
         * discards instead of finishing a set this call reports as failed. */
        for (size_t i = 0; i < set->journal_count; i++)
            if (ftruncate(set->journals[i].fd, 0) == 0) (void)fsync(set->journals[i].fd);
        trn_signals_release(&hold);
        return st;
    }
    for (size_t i = 0; i < set->journal_count; i++)
        fsync_dir(set->journals[i].dir);
    /* From here the files belong to the journal: a signal must not delete them. */
    for (size_t i = 0; i < set->count; i++)
        if (set->entries[i].temp) trn_temp_unregister(set->entries[i].temp);
    for (size_t i = 0; i < set->journal_count; i++)
        trn_temp_unregister(set->journals[i].path);
    set->state = WS_COMMITTED;
    if (run_hook(set, 1)) {
        trn_signals_release(&hold);
        return interrupted(set, 1, err);
    }
    for (size_t i = 0; i < set->count; i++) {
        const ws_entry *e = &set->entries[i];
        bool failed = e->remove ? unlink(e->dest_abs) != 0 && errno != ENOENT
                                : rename(e->temp_abs, e->dest_abs) != 0;
        if (failed) {
            int code = errno;
            trn_signals_release(&hold);
            set->state = WS_ABANDONED;
            return trn_error_set(err, TRN_ERR_IO, e->dest, -1,
                                 "cannot replace it: %s; %zu of %zu files are written: run "
                                 "'terrane recover %s'%s once the cause is fixed",
                                 strerror(code), i, set->count, set->journals[e->journal].dir,
                                 set->journal_count > 1 ? " (and on each other folder of the write)"
                                                        : "");
        }
        if (run_hook(set, 2 + (int)i)) {
            trn_signals_release(&hold);
            return interrupted(set, 2 + (int)i, err);
        }
    }
    for (size_t i = 0; i < set->journal_count; i++)
        fsync_dir(set->journals[i].dir);
    for (size_t i = 0; i < set->journal_count; i++)
        unlink(set->journals[i].path);
    if (run_hook(set, 2 + (int)set->count)) {
        trn_signals_release(&hold);
        return interrupted(set, 2 + (int)set->count, err);
    }
    trn_signals_release(&hold);
    return TRN_OK;
}

trn_status trn_write_target(trn_write_set *set, const char *dest, const char **path, trn_error *err)
{
    if (!set) {
        *path = dest;
        return TRN_OK;
    }
    return trn_write_set_stage(set, dest, path, err);
}

trn_status trn_write_own_begin(trn_write_set *given, trn_write_set **use, trn_write_set **own,
                               trn_error *err)
{
    *own = NULL;
    *use = given;
    if (given) return TRN_OK;
    trn_status st = trn_write_set_new(NULL, own, err);
    *use = *own;
    return st;
}

trn_status trn_write_own_finish(trn_write_set *own, trn_status st, trn_error *err)
{
    if (!own) return st;
    if (!st) st = trn_write_set_commit(own, err);
    trn_write_set_free(own);
    return st;
}
