/* Shared test helpers: summary, temp folders, file I/O, running the command line. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"

int trn_test_failures = 0;
int trn_test_checks = 0;

/* Temporary folders made by trn_test_tmpdir, removed when the test finishes. */
static char *tmpdirs[256];
static int tmpdir_count = 0;

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tmpdirs(void)
{
    if (getenv("TRN_TEST_KEEP")) return; /* keep outputs for a look after a failure */
    for (int i = 0; i < tmpdir_count; i++) {
        nftw(tmpdirs[i], remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(tmpdirs[i]);
    }
    tmpdir_count = 0;
}

int trn_test_finish(void)
{
    remove_tmpdirs();
    printf("%d passed, %d failed\n", trn_test_checks - trn_test_failures, trn_test_failures);
    return trn_test_failures ? 1 : 0;
}

int trn_test_skip(const char *why)
{
    remove_tmpdirs();
    printf("skipped: %s\n", why);
    return 77;
}

const char *trn_test_real_path(const char *name, char *buf, size_t buf_size)
{
    snprintf(buf, buf_size, "%s/testdata/real/%s", TRN_SHARED_DIR, name);
    struct stat st;
    if (stat(buf, &st) != 0) {
        /* Say so once per test program, so a run without ../shared shows what it skipped. */
        static bool reported = false;
        if (!reported) printf("skipped: real-file checks (%s is absent)\n", buf);
        reported = true;
        return NULL;
    }
    return buf;
}

const char *trn_test_tmpdir(char *buf, size_t buf_size)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, buf_size, "%s/terrane-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(buf)) return NULL;
    if (tmpdir_count < (int)(sizeof tmpdirs / sizeof tmpdirs[0])) {
        size_t n = strlen(buf) + 1;
        char *copy = malloc(n);
        if (copy) {
            memcpy(copy, buf, n);
            tmpdirs[tmpdir_count++] = copy;
        }
    }
    return buf;
}

bool trn_test_write_file(const char *path, const void *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return false;
    bool ok = fwrite(data, 1, size, fp) == size;
    return fclose(fp) == 0 && ok;
}

uint8_t *trn_test_read_file(const char *path, size_t *size_out)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return NULL;
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    uint8_t *buf = malloc(n > 0 ? (size_t)n + 1 : 1);
    size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), fp) : 0;
    fclose(fp);
    if (buf) buf[got] = 0;
    if (size_out) *size_out = got;
    return buf;
}

static char *slurp_text(const char *path)
{
    size_t n;
    uint8_t *b = trn_test_read_file(path, &n);
    return (char *)b;
}

/* Run by hand as under ctest: the user's platform node cache stays out of every test binary
 * and the servers and commands it starts (a test of that default turns it on again). */
__attribute__((constructor)) static void cache_off(void)
{
    setenv("TERRANE_CACHE", "off", 0);
}

int trn_test_run_cli(const char *args, char **out, char **errout)
{
    char dir[512];
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/terrane-cli-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return -1; /* removed below, not registered */
    char cmd[8192], outp[600], errp[600];
    snprintf(outp, sizeof outp, "%s/stdout", dir);
    snprintf(errp, sizeof errp, "%s/stderr", dir);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s' </dev/null", TRN_CLI_PATH, args, outp, errp);
    int rc = system(cmd);
    if (out) *out = slurp_text(outp);
    if (errout) *errout = slurp_text(errp);
    unlink(outp);
    unlink(errp);
    rmdir(dir);
    if (rc == -1 || !WIFEXITED(rc)) return -1;
    return WEXITSTATUS(rc);
}

int trn_test_run_clif(const char *fmt, char **out, char **errout, ...)
{
    char args[8192];
    va_list ap;
    va_start(ap, errout);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return trn_test_run_cli(args, out, errout);
}

uint32_t trn_test_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

bool trn_test_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

bool trn_test_same_bytes(const char *a, const char *b)
{
    size_t na, nb;
    uint8_t *da = trn_test_read_file(a, &na), *db = trn_test_read_file(b, &nb);
    bool same = da && db && na == nb && memcmp(da, db, na) == 0;
    free(da);
    free(db);
    return same;
}
