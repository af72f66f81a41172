/* Threads that sleep instead of spinning while they wait: a program-wide default for OpenMP. */
#ifndef TERRANE_WAIT_POLICY_H
#define TERRANE_WAIT_POLICY_H

/* GCC's OpenMP runtime (libgomp) makes a thread that waits at the end of a parallel stage spin
 * for about 3 ms (300000 polls, GOMP_SPINCOUNT) before it sleeps. On a machine whose cores
 * other programs also want, that spinning takes the time slice the thread being waited for
 * needs, and two threads can run a stage slower than one. OMP_WAIT_POLICY=passive makes a
 * waiting thread sleep at once (a spin count of 0). There is no call that changes it: libgomp
 * reads the environment once, in its own constructor, and a shared libgomp runs that
 * constructor before any library that depends on it (libterrane.so included) and before any
 * constructor of the program. A program's .preinit_array runs earlier still, but glibc resets
 * the environment after it, so a variable set there is lost (checked on Debian 12: GCC 12,
 * glibc 2.36, with OMP_DISPLAY_ENV=verbose printing GOMP_SPINCOUNT).
 *
 * What works: TRN_WAIT_POLICY_PASSIVE_DEFAULT() at file scope in the file holding main()
 * defines a constructor of priority 101, which runs before every constructor without a
 * priority in the same program, so before libgomp's when libgomp is linked into the program
 * statically (CMake: terrane and the benchmarks link libgomp.a when the compiler ships it);
 * LLVM's libomp reads the environment when the first parallel stage starts, so with it the
 * constructor is early enough either way. It sets OMP_WAIT_POLICY=passive unless the
 * environment already says OMP_WAIT_POLICY or GOMP_SPINCOUNT (the user's choice wins). Call
 * trn_wait_policy_restore() first thing in main(): it takes the variable out again (the
 * runtime has read it by then) so programs started from this one see the environment they
 * were given, and says whether the passive default was applied. A program using libterrane.so
 * with a shared libgomp gets no passive default from this; run it with OMP_WAIT_POLICY=passive. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(TRN_NO_WAIT_POLICY)
#include <stdlib.h>
/* POSIX declares these in <stdlib.h> only with _POSIX_C_SOURCE; a file need not define it. */
int setenv(const char *name, const char *value, int overwrite);
int unsetenv(const char *name);
#define TRN_WAIT_POLICY_PASSIVE_DEFAULT()                                                          \
    static int trn_wait_policy_set_;                                                               \
    __attribute__((constructor(101))) static void trn_wait_policy_early_(void)                     \
    {                                                                                              \
        if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) return;                         \
        trn_wait_policy_set_ = setenv("OMP_WAIT_POLICY", "passive", 0) == 0;                       \
    }                                                                                              \
    __attribute__((unused)) static int trn_wait_policy_restore(void)                               \
    {                                                                                              \
        if (trn_wait_policy_set_) unsetenv("OMP_WAIT_POLICY");                                     \
        return trn_wait_policy_set_;                                                               \
    }
#else
#define TRN_WAIT_POLICY_PASSIVE_DEFAULT()                                                          \
    static int trn_wait_policy_restore(void)                                                       \
    {                                                                                              \
        return 0;                                                                                  \
    }
#endif

#endif
