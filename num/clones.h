/* clones.h — kernels compiled for several instruction sets, the best the CPU has picked when
 * the library loads (GCC's target_clones, x86-64 Linux; elsewhere one build for the target).
 * A cloned loop's vector lanes must be distinct outputs, each computed in a fixed order
 * without contraction (detmath.h), so that every clone gives the same bits. */
#ifndef OM_CLONES_H
#define OM_CLONES_H

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
	!defined(__SANITIZE_THREAD__)
/* AVX-512 (x86-64-v4), AVX2 and baseline clones */
#define OM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
/* the same with x86-64-v3 (AVX2, FMA, BMI) in place of AVX2 alone */
#define OM_CLONES_V3 \
	__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
/* AVX2 and baseline */
#define OM_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
/* one build for the target: other compilers, and ThreadSanitizer builds (their resolvers
 * would be instrumented, and the loader calls resolvers before the sanitizer is up) */
#define OM_CLONES
#define OM_CLONES_V3
#define OM_CLONES_AVX2
#endif
/* Whether the CPU has AVX2 and FMA but no AVX-512: a 16-lane generic vector (vector_size(64))
 * has no machine mode there, and GCC keeps such values on the stack, copied in 16-byte pieces,
 * in every clone; the hot loops written in them have 8-lane builds for such CPUs. */
#if defined(__GNUC__) && defined(__x86_64__)
static inline int om_cpu_avx2_only(void)
{
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
	       !__builtin_cpu_supports("avx512f");
}
#else
static inline int om_cpu_avx2_only(void)
{
	return 0;
}
#endif
/* GCC's clones of the loops written in 16-lane generic vectors have 8-lane builds beside them */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define OM_HAVE_AVX2_BUILDS 1
#endif
/* a helper of cloned functions, compiled inside each clone (a call would run the baseline) */
#define OM_INLINE static inline __attribute__((always_inline))

#endif
