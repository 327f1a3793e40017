/* gemm.c — om_sgemm/om_dgemm: cblas in fast mode, a fixed-order blocked loop in exact mode. */
#include <cblas.h>
#include <limits.h>

#include "gemm.h"

/* The exact loop must not be contracted into FMAs (that would differ between instruction
 * sets). GCC keeps -ffp-contract=off under -std=c11; clang needs the pragma. The product and
 * the sum are also separate statements, which no compiler contracts in "on" mode. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

enum { MB = 8, NB = 64, KB = 64 };

/* One tile: MB rows of C x NB columns, summed over all of K in ascending order. Each element
 * of acc sees the same operation sequence whatever the vector width the compiler picks. */
#define OM_EXACT_GEMM(NAME, T)                                                                  \
	static void NAME(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha,             \
			 const T *A, int64_t lda, const T *B, int64_t ldb, T beta, T *C,         \
			 int64_t ldc)                                                            \
	{                                                                                        \
		T bp[KB][NB], acc[MB][NB];                                                       \
		for (int64_t j0 = 0; j0 < N; j0 += NB) {                                         \
			const int64_t nc = N - j0 < NB ? N - j0 : NB;                            \
			for (int64_t i0 = 0; i0 < M; i0 += MB) {                                 \
				const int64_t mc = M - i0 < MB ? M - i0 : MB;                    \
				for (int64_t r = 0; r < mc; r++)                                 \
					for (int64_t j = 0; j < nc; j++)                         \
						acc[r][j] = 0;                                   \
				for (int64_t k0 = 0; k0 < K; k0 += KB) {                         \
					const int64_t kc = K - k0 < KB ? K - k0 : KB;            \
					for (int64_t k = 0; tb && k < kc; k++)                   \
						for (int64_t j = 0; j < nc; j++)                 \
							bp[k][j] = B[(j0 + j) * ldb + k0 + k];   \
					for (int64_t r = 0; r < mc; r++) {                       \
						T *restrict ar = acc[r];                         \
						for (int64_t k = 0; k < kc; k++) {               \
							const int64_t i = i0 + r, kk = k0 + k;   \
							const T a = ta ? A[kk * lda + i]         \
								       : A[i * lda + kk];        \
							const T *restrict br =                   \
								tb ? bp[k] : &B[kk * ldb + j0];  \
							for (int64_t j = 0; j < nc; j++) {       \
								const T p = a * br[j];           \
								ar[j] += p;                      \
							}                                        \
						}                                                \
					}                                                        \
				}                                                                \
				for (int64_t r = 0; r < mc; r++) {                               \
					T *c = &C[(i0 + r) * ldc + j0];                          \
					for (int64_t j = 0; j < nc; j++) {                       \
						const T s = alpha * acc[r][j];                   \
						if (beta == 0)                                   \
							c[j] = s;                                \
						else {                                           \
							const T b = beta * c[j];                 \
							c[j] = s + b;                            \
						}                                                \
					}                                                        \
				}                                                                \
			}                                                                        \
		}                                                                                \
	}

OM_EXACT_GEMM(exact_sgemm, float)
OM_EXACT_GEMM(exact_dgemm, double)

/* cblas takes int extents: anything larger, or empty, goes through the exact loop (which
 * handles K == 0 as C = beta * C without reading A or B). */
static bool blas_ok(int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc)
{
	return M > 0 && N > 0 && K > 0 && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX &&
	       lda > 0 && lda <= INT_MAX && ldb > 0 && ldb <= INT_MAX && ldc > 0 && ldc <= INT_MAX;
}

void om_sgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
	      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
	      int64_t ldc)
{
	if (M <= 0 || N <= 0)
		return;
	if (exact || !blas_ok(M, N, K, lda, ldb, ldc)) {
		exact_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
		    (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}

void om_dgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
	      const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
	      int64_t ldc)
{
	if (M <= 0 || N <= 0)
		return;
	if (exact || !blas_ok(M, N, K, lda, ldb, ldc)) {
		exact_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
		return;
	}
	cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
		    (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta, C, (int)ldc);
}
