/* Waiting OpenMP threads sleep by default in terrane's programs, and the user's setting wins. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "terrane/wait_policy.h"
#include "test.h"

TRN_WAIT_POLICY_PASSIVE_DEFAULT()

/* In this program: the constructor set passive unless the environment already chose, and
 * restore takes it out again. */
static void test_in_process(void)
{
    const char *before = getenv("OMP_WAIT_POLICY");
    const int set = trn_wait_policy_restore();
    if (set) {
        CHECK(before && strcmp(before, "passive") == 0);
        CHECK(getenv("OMP_WAIT_POLICY") == NULL);
    } else {
        /* Only a choice already in the environment keeps the default away. */
        CHECK(getenv("OMP_WAIT_POLICY") != NULL || getenv("GOMP_SPINCOUNT") != NULL);
    }
}

/* The command line: libgomp's own report of its spin count (OMP_DISPLAY_ENV=verbose). */
static void test_cli_spin_count(void)
{
#if TRN_CLI_STATIC_LIBGOMP
    char *out = NULL, *err = NULL;
    unsetenv("OMP_WAIT_POLICY");
    unsetenv("GOMP_SPINCOUNT");
    setenv("OMP_DISPLAY_ENV", "verbose", 1);
    CHECK_EQ_INT(trn_test_run_cli("--version", &out, &err), 0);
    CHECK_CONTAINS(err, "GOMP_SPINCOUNT = '0'");
    free(out), free(err);
    setenv("OMP_WAIT_POLICY", "active", 1);
    CHECK_EQ_INT(trn_test_run_cli("--version", &out, &err), 0);
    CHECK_CONTAINS(err, "GOMP_SPINCOUNT = '30000000000'");
    free(out), free(err);
    unsetenv("OMP_WAIT_POLICY");
    setenv("GOMP_SPINCOUNT", "1234", 1);
    CHECK_EQ_INT(trn_test_run_cli("--version", &out, &err), 0);
    CHECK_CONTAINS(err, "GOMP_SPINCOUNT = '1234'");
    free(out), free(err);
    unsetenv("GOMP_SPINCOUNT");
    unsetenv("OMP_DISPLAY_ENV");
#endif
}

int main(void)
{
    RUN(test_in_process);
    RUN(test_cli_spin_count);
    return trn_test_finish();
}
