/* gemm.h — the one single-precision matrix product every kernel calls (MatMul, Gemm, Conv). */
#ifndef OM_GEMM_H
#define OM_GEMM_H

#include <stdbool.h>
#include <stdint.h>

/**
 * C = alpha * op(A) * op(B) + beta * C, row-major; op(X) is X or its transpose (ta, tb).
 * op(A) is M x K, op(B) is K x N, C is M x N; lda, ldb, ldc are row strides in elements
 * (lda >= K when !ta, >= M when ta; likewise ldb). When beta == 0, C is not read (NaN in C
 * does not leak). The caller checks that the buffers hold the extents.
 *
 * exact != 0: a fixed-order blocked C loop, no BLAS, no threads: every C element is
 * alpha * (((0 + a0*b0) + a1*b1) + ...) in float, k ascending, plus beta * C — bit-identical
 * on every instruction set and thread count. exact == 0: oneDNN's dnnl_sgemm when the build
 * has oneDNN and the product has at least 8192 multiply-adds, else exact mode's loop (such a
 * build neither links nor calls OpenBLAS); without oneDNN, OpenBLAS: cblas_sgemm over the rows
 * of C in blocks of 4 and one cblas_sgemv per remaining row (or per column when C has at most
 * 3 columns), where sgemm's packing and row tails cost more than the product.
 */
void om_sgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
	      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
	      int64_t ldc);

/**
 * nbatch products of one geometry, the b-th on A + aoff[b], B + boff[b] and C + coff[b]
 * (offsets in elements), each as om_sgemm computes it. In fast mode with oneDNN in the build
 * and more than one thread (the calling thread's OpenMP count), the products are spread over
 * omopt's pool (om_par_for), each on one thread (attention heads are too small to split well).
 */
void om_sgemm_batch(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
		    const float *A, const int64_t *aoff, int64_t lda, const float *B,
		    const int64_t *boff, int64_t ldb, float beta, float *C, const int64_t *coff,
		    int64_t ldc, int64_t nbatch);

/** The same in double (the exact loop accumulates in double). Fast mode: with oneDNN, the
 *  exact loop compiled for the CPU's instruction set (the same bits); without, cblas_dgemm. */
void om_dgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
	      const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
	      int64_t ldc);

/** Fast mode, one row: y (N floats) = alpha * a op(B) + beta * y (y not read when beta is
 *  0), a K floats at stride inca (buf: K floats to gather them in when inca != 1), op(B) K x N
 *  (tb: B stored N x K), ldb B's row stride; the columns split over `threads` (parallel.h), each
 *  dot in 16 partial sums (not exact mode's order). False, nothing written, when not taken:
 *  !tb with beta != 0, an empty product, or no buf for a strided a. */
bool om_sgemv_fast(int threads, bool tb, int64_t N, int64_t K, float alpha, const float *a,
		   int64_t inca, const float *B, int64_t ldb, float beta, float *y, float *buf);

/* Their threads: oneDNN's products of at least 3e6 multiply-adds are cut into rows or columns
 * over omopt's pool (om_par_for) at the calling thread's OpenMP count, which a session's run
 * sets (om_par_threads_set, parallel.h; 1 inside om_par_for's pieces), each piece one
 * single-threaded dnnl_sgemm; OpenBLAS's (builds without oneDNN) at its own count, the host's
 * setting (om_blas_threads, omopt.h, is the explicit call that changes it). */

#endif
