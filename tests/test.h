/* Minimal test harness: CHECK macros, a per-executable summary, temp folders, shared data. */
#ifndef TRN_TEST_H
#define TRN_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "terrane/core.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* OpenMP's thread count for the calls that follow (a no-op in a build without OpenMP). */
static inline void test_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

/* A 33 x 33 little-endian R16 of uneven heights (the tiled tests' DEM input); false if unwritten. */
static inline bool test_write_r16_33(const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) return false;
    for (uint32_t j = 0; j < 33; j++)
        for (uint32_t i = 0; i < 33; i++) {
            const uint16_t v = (uint16_t)((i * 977u + j * 1531u + i * j * 37u) % 65536u);
            const uint8_t b[2] = {(uint8_t)(v & 0xffu), (uint8_t)(v >> 8)};
            fwrite(b, 1, 2, f);
        }
    return fclose(f) == 0;
}

extern int trn_test_failures;
extern int trn_test_checks;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        trn_test_checks++;                                                                         \
        if (!(cond)) {                                                                             \
            trn_test_failures++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);               \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        trn_test_checks++;                                                                         \
        if (va_ != vb_) {                                                                          \
            trn_test_failures++;                                                                   \
            fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__,  \
                    #a, #b, va_, vb_);                                                             \
        }                                                                                          \
    } while (0)

#define CHECK_STATUS(call, expected)                                                               \
    do {                                                                                           \
        trn_status st_ = (call);                                                                   \
        trn_test_checks++;                                                                         \
        if (st_ != (expected)) {                                                                   \
            trn_test_failures++;                                                                   \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call,     \
                    trn_status_name(st_), trn_status_name(expected));                              \
        }                                                                                          \
    } while (0)

#define CHECK_OK(call) CHECK_STATUS(call, TRN_OK)

#define CHECK_CONTAINS(haystack, needle)                                                           \
    do {                                                                                           \
        const char *h_ = (haystack);                                                               \
        trn_test_checks++;                                                                         \
        if (!h_ || !strstr(h_, (needle))) {                                                        \
            trn_test_failures++;                                                                   \
            fprintf(stderr, "%s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, __LINE__,         \
                    h_ ? h_ : "(null)", (needle));                                                 \
        }                                                                                          \
    } while (0)

/* Run a named test function. */
#define RUN(fn)                                                                                    \
    do {                                                                                           \
        int before_ = trn_test_failures;                                                           \
        fn();                                                                                      \
        fprintf(stderr, "%s %s\n", trn_test_failures == before_ ? "ok  " : "FAIL", #fn);           \
    } while (0)

/* Print the summary and return the exit code (0 pass, 1 fail). */
int trn_test_finish(void);
/* Like finish, but exit 77 ("skipped") when nothing ran because shared data is missing. */
int trn_test_skip(const char *why);

/* Path of a file in ../shared/testdata/real, or NULL when ../shared is absent. */
const char *trn_test_real_path(const char *name, char *buf, size_t buf_size);
/* A fresh empty temporary folder (under $TMPDIR), removed with its contents by
 * trn_test_finish / trn_test_skip unless TRN_TEST_KEEP is set. */
const char *trn_test_tmpdir(char *buf, size_t buf_size);
/* Write/read whole files. */
bool trn_test_write_file(const char *path, const void *data, size_t size);
uint8_t *trn_test_read_file(const char *path, size_t *size_out);

/* A 32-bit integer hash (a well-mixed avalanche): the tests' pseudo-random terrains. */
uint32_t trn_test_mix32(uint32_t x);

/* True when path exists (file or folder). */
bool trn_test_exists(const char *path);
/* True when both files exist and hold the same bytes. */
bool trn_test_same_bytes(const char *a, const char *b);

/* Run the terrane CLI with a shell-quoted argument string; captures stdout and stderr into
 * malloc'd strings (caller frees); returns the exit code, or -1 when it could not run. */
int trn_test_run_cli(const char *args, char **out, char **errout);
/* The same with the argument string built printf-style from fmt and the trailing arguments. */
int trn_test_run_clif(const char *fmt, char **out, char **errout, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 4)))
#endif
    ;

#endif
