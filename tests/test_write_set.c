/* Safe outputs: input guards, journaled write sets, crash recovery, stale temporaries. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/fileio.h"
#include "core/write_set.h"
#include "terrane/io.h"
#include "test.h"

static char tmp[512];

static const char *path_in(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmp, name);
    return buf;
}

static bool file_is(const char *path, const char *text)
{
    size_t n = 0;
    uint8_t *d = trn_test_read_file(path, &n);
    bool same = d && n == strlen(text) && memcmp(d, text, n) == 0;
    free(d);
    return same;
}

/* Names in dir that are temporaries or journals (what a clean run leaves none of). */
static int leftovers(const char *dir)
{
    DIR *dh = opendir(dir);
    if (!dh) return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dh)) != NULL)
        if (strstr(de->d_name, ".tmp-") || strstr(de->d_name, ".terrane-journal-")) n++;
    closedir(dh);
    return n;
}

static void write_text(const char *path, const char *text)
{
    CHECK(trn_test_write_file(path, text, strlen(text)));
}

static void test_guard(void)
{
    char in[600], other[600], link_path[600], hard[600], spelled[700];
    write_text(path_in(in, sizeof in, "input.png"), "input");
    write_text(path_in(other, sizeof other, "other.png"), "other");
    path_in(link_path, sizeof link_path, "link.png");
    path_in(hard, sizeof hard, "hard.png");
    CHECK(symlink(in, link_path) == 0);
    CHECK(link(in, hard) == 0);
    snprintf(spelled, sizeof spelled, "%s/./sub/../input.png", tmp);
    char sub[600];
    mkdir(path_in(sub, sizeof sub, "sub"), 0777);

    trn_io_guard *g = NULL;
    trn_error e;
    CHECK_OK(trn_io_guard_new(&g, &e));
    CHECK_OK(trn_io_guard_add(g, in, &e));
    CHECK_OK(trn_io_guard_add(g, in, &e)); /* twice is harmless */
    char missing[600];
    CHECK_OK(trn_io_guard_add(g, path_in(missing, sizeof missing, "missing.png"), &e));

    CHECK_STATUS(trn_io_guard_check(g, in, &e), TRN_ERR_CONFLICT);
    CHECK_CONTAINS(e.message, "is the input");
    CHECK_CONTAINS(e.message, "never overwritten");
    CHECK_CONTAINS(e.message, in);
    CHECK_CONTAINS(e.file, "input.png");
    CHECK_STATUS(trn_io_guard_check(g, spelled, &e), TRN_ERR_CONFLICT);
    CHECK_STATUS(trn_io_guard_check(g, hard, &e), TRN_ERR_CONFLICT);
    CHECK_CONTAINS(e.message, "hard link");
    CHECK_STATUS(trn_io_guard_check(g, link_path, &e), TRN_ERR_CONFLICT);
    CHECK_CONTAINS(e.message, "symbolic link");
    CHECK_OK(trn_io_guard_check(g, other, &e));
    /* A missing input is guarded by name, however it is spelled. */
    CHECK_STATUS(trn_io_guard_check(g, missing, &e), TRN_ERR_CONFLICT);
    char missing2[700];
    snprintf(missing2, sizeof missing2, "%s/sub/../missing.png", tmp);
    CHECK_STATUS(trn_io_guard_check(g, missing2, &e), TRN_ERR_CONFLICT);
    snprintf(missing2, sizeof missing2, "%s/sub/missing.png", tmp);
    CHECK_OK(trn_io_guard_check(g, missing2, &e));
    /* Through a folder that does not exist yet: "nosuch/.." is this folder once it is made. */
    snprintf(missing2, sizeof missing2, "%s/nosuch/../input.png", tmp);
    CHECK_STATUS(trn_io_guard_check(g, missing2, &e), TRN_ERR_CONFLICT);
    CHECK_OK(trn_io_guard_check(NULL, in, &e));

    /* A write set refuses to stage a guarded file, before writing anything. */
    trn_write_set *ws = NULL;
    CHECK_OK(trn_write_set_new(g, &ws, &e));
    const char *t = NULL;
    CHECK_STATUS(trn_write_set_stage(ws, hard, &t, &e), TRN_ERR_CONFLICT);
    CHECK(t == NULL);
    CHECK_EQ_INT(trn_write_set_count(ws), 0);
    trn_write_set_free(ws);
    CHECK(file_is(in, "input"));
    trn_io_guard_free(g);
    trn_io_guard_free(NULL);
    trn_write_set_free(NULL);
    unlink(link_path);
    unlink(hard);
}

/* Three files over two folders, the second file edited twice through current(). */
static trn_write_set *stage_three(const char *root, const trn_io_guard *guard)
{
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/a.ter", root);
    snprintf(b, sizeof b, "%s/main/items.level.json", root);
    snprintf(c, sizeof c, "%s/b.json", root);
    trn_write_set *ws = NULL;
    trn_error e;
    CHECK_OK(trn_write_set_new(guard, &ws, &e));
    const char *t;
    CHECK_OK(trn_write_set_stage(ws, a, &t, &e));
    CHECK_OK(trn_file_write_atomic(t, "new a", 5, &e));
    CHECK_OK(trn_write_set_stage(ws, b, &t, &e));
    CHECK_OK(trn_file_write_atomic(t, "new", 3, &e));
    CHECK_OK(trn_write_set_stage(ws, c, &t, &e));
    CHECK_OK(trn_file_write_atomic(t, "new c", 5, &e));
    /* Read-modify-write of a staged file sees the staged content. */
    const char *cur = trn_write_set_current(ws, b);
    CHECK(strcmp(cur, b) != 0);
    CHECK(file_is(cur, "new"));
    const char *t2;
    CHECK_OK(trn_write_set_stage(ws, b, &t2, &e));
    CHECK(strcmp(t2, cur) == 0);
    CHECK_OK(trn_file_write_atomic(t2, "new b", 5, &e));
    CHECK_EQ_INT(trn_write_set_count(ws), 3);
    CHECK(strcmp(trn_write_set_dest(ws, 1), b) == 0);
    CHECK(trn_write_set_dest(ws, 3) == NULL);
    CHECK(strcmp(trn_write_set_current(ws, "/not/staged"), "/not/staged") == 0);
    return ws;
}

static void make_old_set(const char *root)
{
    char p[700];
    snprintf(p, sizeof p, "%s/main", root);
    mkdir(root, 0777);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/a.ter", root);
    write_text(p, "old a");
    snprintf(p, sizeof p, "%s/main/items.level.json", root);
    write_text(p, "old b");
    snprintf(p, sizeof p, "%s/b.json", root);
    write_text(p, "old c");
}

/* 0 when the folder holds the old set, 1 the new one, -1 a mix. */
static int set_state(const char *root)
{
    char a[700], b[700], c[700];
    snprintf(a, sizeof a, "%s/a.ter", root);
    snprintf(b, sizeof b, "%s/main/items.level.json", root);
    snprintf(c, sizeof c, "%s/b.json", root);
    if (file_is(a, "old a") && file_is(b, "old b") && file_is(c, "old c")) return 0;
    if (file_is(a, "new a") && file_is(b, "new b") && file_is(c, "new c")) return 1;
    return -1;
}

static int total_leftovers(const char *root)
{
    char m[700];
    snprintf(m, sizeof m, "%s/main", root);
    return leftovers(root) + leftovers(m);
}

static void test_commit_and_abort(void)
{
    char root[600];
    path_in(root, sizeof root, "level_commit");
    make_old_set(root);
    trn_write_set *ws = stage_three(root, NULL);
    trn_error e;
    /* Nothing lands before commit. */
    CHECK_EQ_INT(set_state(root), 0);
    CHECK_OK(trn_write_set_commit(ws, &e));
    CHECK_EQ_INT(set_state(root), 1);
    CHECK_EQ_INT(total_leftovers(root), 0);
    const char *t;
    CHECK_STATUS(trn_write_set_stage(ws, "x", &t, &e), TRN_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(trn_write_set_commit(ws, &e), TRN_ERR_INVALID_ARGUMENT);
    trn_write_set_free(ws);
    CHECK_EQ_INT(set_state(root), 1);

    /* Freed without a commit: the old files stay, no temporaries or journals remain. */
    path_in(root, sizeof root, "level_abort");
    make_old_set(root);
    ws = stage_three(root, NULL);
    trn_write_set_free(ws);
    CHECK_EQ_INT(set_state(root), 0);
    CHECK_EQ_INT(total_leftovers(root), 0);

    /* A destination that is a folder is refused. */
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    CHECK_STATUS(trn_write_set_stage(ws, root, &t, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "is a directory");
    trn_write_set_free(ws);

    /* An empty set commits. */
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    CHECK_OK(trn_write_set_commit(ws, &e));
    trn_write_set_free(ws);
}

/* A staged file filled by plain fopen (as the Unity water OBJ writer does) lands with the mode
 * any new file gets, 0666 less the umask, not mkstemp's 0600. */
static void test_staged_mode(void)
{
    char root[600], dest[700];
    path_in(root, sizeof root, "mode");
    mkdir(root, 0777);
    snprintf(dest, sizeof dest, "%s/water.obj", root);
    const mode_t old_mask = umask(022);
    trn_write_set *ws = NULL;
    trn_error e;
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    const char *t;
    CHECK_OK(trn_write_set_stage(ws, dest, &t, &e));
    FILE *f = fopen(t, "wb");
    CHECK(f != NULL);
    if (f) {
        fputs("o water\n", f);
        fclose(f);
    }
    CHECK_OK(trn_write_set_commit(ws, &e));
    trn_write_set_free(ws);
    struct stat st;
    CHECK(stat(dest, &st) == 0);
    CHECK_EQ_INT(st.st_mode & 0777, 0644);
    /* A file replaced in place keeps its mode (and, as root, a group of somebody else's),
     * through a write set and through a single atomic write alike. */
    CHECK(chmod(dest, 0640) == 0);
    const bool root_user = geteuid() == 0;
    if (root_user) CHECK(chown(dest, 0, 1) == 0);
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    CHECK_OK(trn_write_set_stage(ws, dest, &t, &e));
    CHECK_OK(trn_file_write_atomic(t, "o lake\n", 7, &e));
    CHECK_OK(trn_write_set_commit(ws, &e));
    trn_write_set_free(ws);
    CHECK(stat(dest, &st) == 0 && file_is(dest, "o lake\n"));
    CHECK_EQ_INT(st.st_mode & 0777, 0640);
    if (root_user) CHECK_EQ_INT((int)st.st_gid, 1);
    CHECK(chmod(dest, 0600) == 0);
    CHECK_OK(trn_file_write_atomic(dest, "o sea\n", 6, &e));
    CHECK(stat(dest, &st) == 0 && file_is(dest, "o sea\n"));
    CHECK_EQ_INT(st.st_mode & 0777, 0600);
    if (root_user) CHECK_EQ_INT((int)st.st_gid, 1);
    umask(old_mask);
}

static int crash_step;
static int crash_hook(int step, void *user)
{
    (void)user;
    return step == crash_step;
}

/* A crash at each step of a commit leaves the old set, the new set, or a journal from which
 * recovery finishes the new set; never a mix after recovery, and nothing left behind. */
static void test_crash_every_step(void)
{
    for (int step = 0; step <= 5; step++) {
        char root[600], name[64];
        snprintf(name, sizeof name, "level_crash_%d", step);
        path_in(root, sizeof root, name);
        make_old_set(root);
        trn_write_set *ws = stage_three(root, NULL);
        crash_step = step;
        trn_write_set_set_step_hook(ws, crash_hook, NULL);
        trn_error e;
        CHECK_STATUS(trn_write_set_commit(ws, &e), TRN_ERR_IO);
        trn_write_set_free(ws); /* as a dead process: files stay, locks go */
        int before = set_state(root);
        trn_recovery_report rep;
        CHECK_OK(trn_write_set_scan(root, true, &rep, &e));
        if (step == 0) {
            /* Died before the journals were complete: old files, a dead staging set. */
            CHECK_EQ_INT(before, 0);
            CHECK_EQ_INT(rep.completed, 0);
            CHECK(rep.discarded >= 1);
        } else if (step < 5) {
            CHECK_EQ_INT(rep.completed, 2); /* one journal per folder */
            CHECK(rep.first_journal[0] != '\0');
        } else {
            CHECK_EQ_INT(before, 1);
            CHECK_EQ_INT(rep.completed, 0);
        }
        if (step >= 2 && step < 4) CHECK_EQ_INT(before, -1); /* a real mix before recovery */
        /* The scan changed nothing. */
        CHECK_EQ_INT(set_state(root), before);
        CHECK_OK(trn_write_set_recover(root, true, &rep, &e));
        CHECK_EQ_INT(set_state(root), step == 0 ? 0 : 1);
        CHECK_EQ_INT(total_leftovers(root), 0);
        /* Recovery is idempotent. */
        CHECK_OK(trn_write_set_recover(root, true, &rep, &e));
        CHECK_EQ_INT(rep.completed + rep.discarded + rep.temporaries_removed, 0);
    }
}

/* The next write into a folder with a dead commit finishes that folder's part first; the
 * sub-folder's part is finished by the next write there (or by recover). */
static void test_next_write_recovers(void)
{
    char root[600], sub[700];
    path_in(root, sizeof root, "level_next");
    snprintf(sub, sizeof sub, "%s/main", root);
    make_old_set(root);
    trn_write_set *ws = stage_three(root, NULL);
    crash_step = 2; /* a.ter renamed; main/items.level.json and b.json not yet */
    trn_write_set_set_step_hook(ws, crash_hook, NULL);
    trn_error e;
    CHECK_STATUS(trn_write_set_commit(ws, &e), TRN_ERR_IO);
    trn_write_set_free(ws);
    CHECK_EQ_INT(set_state(root), -1);
    char b[700], c[700];
    snprintf(b, sizeof b, "%s/main/items.level.json", root);
    snprintf(c, sizeof c, "%s/b.json", root);
    const char *t;
    trn_write_set *next = NULL;
    CHECK_OK(trn_write_set_new(NULL, &next, &e));
    char d[720];
    snprintf(d, sizeof d, "%s/other.txt", root);
    CHECK_OK(trn_write_set_stage(next, d, &t, &e));
    CHECK(file_is(c, "new c"));     /* the level folder's part landed */
    CHECK(file_is(b, "old b"));     /* the sub-folder's waits for a write there */
    CHECK_OK(trn_file_write_atomic(t, "x", 1, &e));
    CHECK_OK(trn_write_set_commit(next, &e));
    trn_write_set_free(next);
    CHECK_OK(trn_write_set_new(NULL, &next, &e));
    snprintf(d, sizeof d, "%s/other.txt", sub);
    CHECK_OK(trn_write_set_stage(next, d, &t, &e));
    CHECK_EQ_INT(set_state(root), 1);
    CHECK_OK(trn_file_write_atomic(t, "y", 1, &e));
    CHECK_OK(trn_write_set_commit(next, &e));
    trn_write_set_free(next);
    CHECK_EQ_INT(total_leftovers(root), 0);
}

/* A journal somebody else put into a folder is never replayed: journals name only files of
 * their own folder, a rename only puts a file's own temporary over it, and a journal or a
 * temporary owned by another user is refused. */
static void test_forged_journals(void)
{
    char dir[600], victim[600], j[700], evil[700], mine[700];
    path_in(dir, sizeof dir, "shared");
    mkdir(dir, 0777);
    path_in(victim, sizeof victim, "precious.txt");
    snprintf(j, sizeof j, "%s/.terrane-journal-ZZZZZZ", dir);
    snprintf(evil, sizeof evil, "%s/p.tmp-ZZZZZZ", dir);
    snprintf(mine, sizeof mine, "%s/mine.txt", dir);
    const struct {
        const char *text; /* $D: the folder, $V: the victim (absolute paths) */
        const char *why;
    } forged[] = {
        /* The attack as written against the first journal format: absolute paths. */
        {"terrane write set 1\ncommit\njournal $D/x\nrename $D/p.tmp-ZZZZZZ $V\nend 1\n",
         "earlier terrane"},
        {"terrane write set 2\ncommit\nrename p.tmp-ZZZZZZ ../precious.txt\nend 1\n",
         "outside its own folder"},
        {"terrane write set 2\ncommit\nrename %2Fp.tmp-ZZZZZZ %2Fprecious.txt\nend 1\n",
         "outside its own folder"},
        {"terrane write set 2\ncommit\nremove ..\nend 1\n", "outside its own folder"},
        {"terrane write set 2\ncommit\nrename p.tmp-ZZZZZZ mine.txt\nend 1\n",
         "not its temporary"},
        {"terrane write set 2\nstaging\nstaged mine.txt\n", "as a temporary"},
    };
    for (size_t k = 0; k < sizeof forged / sizeof forged[0]; k++) {
        write_text(victim, "precious");
        write_text(mine, "mine");
        write_text(evil, "evil");
        char text[4000];
        size_t n = 0;
        for (const char *p = forged[k].text; *p && n + 700 < sizeof text; p++) {
            const char *put = p[0] == '$' && p[1] == 'D' ? dir : p[0] == '$' && p[1] == 'V' ? victim : NULL;
            if (put) {
                n += (size_t)snprintf(text + n, sizeof text - n, "%s", put);
                p++;
            } else {
                text[n++] = *p;
            }
        }
        text[n] = '\0';
        write_text(j, text);
        trn_recovery_report rep;
        trn_error e;
        CHECK_OK(trn_write_set_scan(dir, false, &rep, &e));
        CHECK_EQ_INT(rep.refused, 1);
        CHECK_CONTAINS(rep.refused_reason, forged[k].why);
        CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
        CHECK_EQ_INT(rep.refused, 1);
        CHECK_EQ_INT(rep.completed + rep.discarded, 0);
        CHECK_CONTAINS(rep.refused_reason, ".terrane-journal-ZZZZZZ");
        /* An ordinary write into the folder does not replay it either. */
        CHECK_OK(trn_file_write_atomic(mine, "mine2", 5, &e));
        CHECK(file_is(victim, "precious"));
        CHECK(file_is(mine, "mine2"));
        CHECK(trn_test_exists(j)); /* left for the user to look at */
        unlink(j);
    }
    /* A well-formed journal of our own finishes: the form refused above is the only difference. */
    write_text(j, "terrane write set 2\ncommit\nrename mine.txt.tmp-AbCdEf mine.txt\nend 1\n");
    char tmpf[720];
    snprintf(tmpf, sizeof tmpf, "%s.tmp-AbCdEf", mine);
    write_text(tmpf, "landed");
    trn_recovery_report rep;
    trn_error e;
    CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
    CHECK_EQ_INT(rep.completed, 1);
    CHECK_EQ_INT(rep.refused, 0);
    CHECK(file_is(mine, "landed"));
    CHECK(!trn_test_exists(j));
    /* Ownership: only root can hand a file to another user, so this part runs as root. */
    if (geteuid() == 0) {
        const uid_t nobody = 65534;
        write_text(j, "terrane write set 2\ncommit\nrename mine.txt.tmp-AbCdEf mine.txt\nend 1\n");
        write_text(tmpf, "evil");
        CHECK(chown(j, nobody, nobody) == 0);
        CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
        CHECK_EQ_INT(rep.refused, 1);
        CHECK_CONTAINS(rep.refused_reason, "owned by user id 65534");
        CHECK(file_is(mine, "landed"));
        CHECK(chown(j, 0, 0) == 0);
        write_text(tmpf, "evil"); /* the sweep above removed our own stale one */
        CHECK(chown(tmpf, nobody, nobody) == 0); /* our journal, somebody else's temporary */
        CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
        CHECK_EQ_INT(rep.refused, 1);
        CHECK_CONTAINS(rep.refused_reason, "owned by another user");
        CHECK(file_is(mine, "landed"));
        /* Nor is another user's stale temporary ours to delete. */
        unlink(j);
        CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
        CHECK(trn_test_exists(tmpf));
        CHECK_EQ_INT(rep.temporaries_removed, 0);
        unlink(tmpf);
    } else {
        printf("ownership checks skipped: they need root to give a file to another user\n");
        unlink(tmpf);
    }
    unlink(victim);
    unlink(mine);
}

static void test_stale_temporaries(void)
{
    char out[600], stale[700], inner[720], live[700], foreign[700];
    path_in(out, sizeof out, "stale.png");
    snprintf(stale, sizeof stale, "%s.tmp-AbC123", out);
    snprintf(inner, sizeof inner, "%s.tmp-AbC123.tmp-zzZZ99", out);
    snprintf(live, sizeof live, "%s.tmp-LIVE00", out);
    snprintf(foreign, sizeof foreign, "%s.tmp-toolong7", out);
    write_text(stale, "dead");
    write_text(inner, "dead");
    write_text(live, "live");
    write_text(foreign, "not ours");
    int fd = open(live, O_RDONLY);
    CHECK(fd >= 0 && flock(fd, LOCK_EX) == 0);
    trn_error e;
    CHECK_OK(trn_file_write_atomic(out, "png", 3, &e));
    CHECK(!trn_test_exists(stale));
    CHECK(!trn_test_exists(inner));
    CHECK(trn_test_exists(live)); /* a live writer's */
    CHECK(trn_test_exists(foreign));
    close(fd);
    CHECK(file_is(out, "png"));
    /* Unlocked now: the next write removes it. */
    CHECK_OK(trn_file_write_atomic(out, "png2", 4, &e));
    CHECK(!trn_test_exists(live));
    unlink(foreign);

    /* While a live set stages in a folder, nothing there is cleaned. */
    char dir[600], dest[700], orphan[720];
    path_in(dir, sizeof dir, "live_set");
    mkdir(dir, 0777);
    snprintf(dest, sizeof dest, "%s/a.bin", dir);
    snprintf(orphan, sizeof orphan, "%s/b.bin.tmp-qwerty", dir);
    trn_write_set *ws = NULL;
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    const char *t;
    CHECK_OK(trn_write_set_stage(ws, dest, &t, &e));
    write_text(orphan, "x");
    char b[700];
    snprintf(b, sizeof b, "%s/b.bin", dir);
    CHECK_OK(trn_file_write_atomic(b, "b", 1, &e));
    CHECK(trn_test_exists(orphan));
    CHECK(trn_test_exists(t)); /* the live set's staged file survives */
    trn_recovery_report rep;
    CHECK_OK(trn_write_set_scan(dir, false, &rep, &e));
    CHECK_EQ_INT(rep.in_progress, 1);
    trn_write_set_free(ws);
    CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
    CHECK_EQ_INT(rep.temporaries_removed, 1);
    CHECK(!trn_test_exists(orphan));

    /* A file that merely looks like a journal is not ours: left alone. */
    char fake[700];
    snprintf(fake, sizeof fake, "%s/.terrane-journal-abcdef", dir);
    write_text(fake, "hello");
    CHECK_OK(trn_write_set_recover(dir, false, &rep, &e));
    CHECK(trn_test_exists(fake));
    CHECK_EQ_INT(rep.completed + rep.discarded, 0);
    unlink(fake);
    CHECK_STATUS(trn_write_set_recover(fake, false, &rep, &e), TRN_ERR_NOT_FOUND);
    CHECK_STATUS(trn_write_set_recover(b, false, &rep, &e), TRN_ERR_INVALID_ARGUMENT);
}

/* What a SIGINT handler calls: every temporary this process writes disappears. */
static void test_signal_cleanup(void)
{
    char dir[600], dest[700];
    path_in(dir, sizeof dir, "signal");
    mkdir(dir, 0777);
    snprintf(dest, sizeof dest, "%s/x.bin", dir);
    trn_write_set *ws = NULL;
    trn_error e;
    CHECK_OK(trn_write_set_new(NULL, &ws, &e));
    const char *t;
    CHECK_OK(trn_write_set_stage(ws, dest, &t, &e));
    trn_atomic_file af;
    char single[700];
    snprintf(single, sizeof single, "%s/y.bin", dir);
    CHECK_OK(trn_atomic_file_open(&af, single, &e));
    CHECK_EQ_INT(leftovers(dir), 3); /* staged file, journal, atomic temporary */
    trn_io_remove_temporaries();
    CHECK_EQ_INT(leftovers(dir), 0);
    trn_atomic_file_abort(&af);
    trn_write_set_free(ws);
    CHECK(!trn_test_exists(dest));
    CHECK(!trn_test_exists(single));
}

/* A write that fails part-way (a full disk) leaves no temporary behind. */
static void test_full_disk(void)
{
    char out[600];
    path_in(out, sizeof out, "full.bin");
    size_t n = 4u << 20;
    uint8_t *data = calloc(1, n);
    struct rlimit old, small = {1u << 20, 0};
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    small.rlim_max = old.rlim_max;
    signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    trn_error e;
    CHECK_STATUS(trn_file_write_atomic(out, data, n, &e), TRN_ERR_IO);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, SIG_DFL);
    CHECK_CONTAINS(e.message, "cannot write output");
    CHECK(!trn_test_exists(out));
    CHECK_EQ_INT(leftovers(tmp), 0);
    free(data);
}

/* Readers take regular files only: a FIFO is refused at once, a device is not read forever. */
static void test_special_files(void)
{
    char fifo[600];
    path_in(fifo, sizeof fifo, "fifo");
    CHECK(mkfifo(fifo, 0600) == 0);
    uint8_t *d = NULL;
    size_t n = 0;
    trn_error e;
    CHECK_STATUS(trn_file_read_all(fifo, 0, &d, &n, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "is a pipe (FIFO), expected a regular file");
    unlink(fifo);
    CHECK_STATUS(trn_file_read_all("/dev/zero", 0, &d, &n, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "character device");
    CHECK_STATUS(trn_file_read_all(tmp, 0, &d, &n, &e), TRN_ERR_IO);
    CHECK_CONTAINS(e.message, "is a directory");
}

/* Containment: a path is inside a folder only at a separator, never by a shared prefix. */
static void test_path_inside(void)
{
    char root[600], other[600], p[800];
    path_in(root, sizeof root, "project");
    path_in(other, sizeof other, "project-other");
    mkdir(root, 0777);
    mkdir(other, 0777);
    CHECK(trn_path_inside(root, root));
    snprintf(p, sizeof p, "%s/x.json", root);
    CHECK(trn_path_inside(root, p));
    snprintf(p, sizeof p, "%s/sub/../x.json", root);
    CHECK(trn_path_inside(root, p));
    snprintf(p, sizeof p, "%s/x.json", other);
    CHECK(!trn_path_inside(root, p)); /* "/project-other" starts with "/project" */
    CHECK(!trn_path_inside(root, other));
    snprintf(p, sizeof p, "%s/../x.json", root);
    CHECK(!trn_path_inside(root, p));
    snprintf(p, sizeof p, "%sx", root);
    CHECK(!trn_path_inside(root, p));
    CHECK(trn_path_inside("/", p)); /* the root folder holds everything */
    CHECK(!trn_path_inside("/no/such/folder", p));
}

int main(void)
{
    trn_test_tmpdir(tmp, sizeof tmp);
    RUN(test_guard);
    RUN(test_commit_and_abort);
    RUN(test_staged_mode);
    RUN(test_crash_every_step);
    RUN(test_next_write_recovers);
    RUN(test_forged_journals);
    RUN(test_path_inside);
    RUN(test_stale_temporaries);
    RUN(test_signal_cleanup);
    RUN(test_full_disk);
    RUN(test_special_files);
    return trn_test_finish();
}
