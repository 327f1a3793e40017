/* clones.h — kernels compiled for several instruction sets, the best the CPU has picked when
 * the library loads (GCC's target_clones, x86-64 Linux; elsewhere one build for the target).
 * A cloned loop's vector lanes must be distinct outputs, each computed in a fixed order
 * without contraction (detmath.h), so that every clone gives the same bits. */
#ifndef OM_CLONES_H
#define OM_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
/* AVX-512 (x86-64-v4), AVX2 and baseline clones */
#define OM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define OM_CLONES
#endif
/* a helper of cloned functions, compiled inside each clone (a call would run the baseline) */
#define OM_INLINE static inline __attribute__((always_inline))

#endif
