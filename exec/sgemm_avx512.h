/* sgemm_avx512.h — a packed AVX-512 single-precision GEMM for fast mode (C = A B, row-major,
 * no transposes), used where OpenBLAS picks narrower kernels than the machine has. */
#ifndef OM_SGEMM_AVX512_H
#define OM_SGEMM_AVX512_H

#include <stdbool.h>
#include <stdint.h>

/** True when this machine and build can run om_sgemm_avx512. */
bool om_sgemm_avx512_ok(void);

/** C (M x N, row stride ldc) = A (M x K, lda) * B (K x N, ldb). Uses FMA: fast mode only.
 *  False (C untouched) when the work buffer cannot be allocated. */
bool om_sgemm_avx512(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
		     const float *B, int64_t ldb, float *C, int64_t ldc);

#endif
