/* Macros for kernels compiled once per instruction-set variant (function multiversioning). */
#ifndef TRN_CORE_KERNEL_H
#define TRN_CORE_KERNEL_H

#if defined(__GNUC__) || defined(__clang__)
/* The kernel bodies are inlined into each instruction-set variant so each compiles for it. */
#define KERNEL static inline __attribute__((always_inline))
#define RESTRICT __restrict__
#else
#define KERNEL static inline
#define RESTRICT
#endif

/* An AVX2 variant is compiled where the compiler can target it per function (x86 GCC/Clang);
 * callers pick it at run time. */
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AVX2_VARIANT 1
#define TARGET_AVX2 __attribute__((target("avx2")))
#else
#define HAVE_AVX2_VARIANT 0
#endif

#endif
