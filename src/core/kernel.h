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

#endif
