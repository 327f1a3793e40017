/* gemm.c — om_sgemm/om_dgemm: a fixed-order blocked loop in exact mode; in fast mode oneDNN's
 * sgemm (the loop for the smallest products and, compiled per ISA, for double) when the build
 * has it, else cblas (gemm for rows in blocks of 4, gemv for the rest and for few columns). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#ifdef OM_HAVE_DNNL
#include <dnnl.h>
#include <omp.h>
#endif

#include "clones.h"
#include "gemm.h"
#include "omopt.h"
#include "parallel.h"

#ifndef OM_HAVE_DNNL
#include <cblas.h>
#endif

/* The exact loop must not be contracted into FMAs (that would differ between instruction
 * sets): the pragmas switch contraction off, with GCC even under -ffp-contract=fast (clang's
 * -ffp-contract=fast ignores pragmas: do not build exact kernels with it). The product and
 * the sum are also separate statements, which no compiler contracts in "on" mode. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/*
 * Exact mode. Every element of C is computed as
 *     acc = 0; for k = 0 .. K-1: p = a_ik * b_kj (rounded); acc = acc + p (rounded);
 *     c = alpha * acc (+ beta * c_old)
 * whatever path computes it: the 4 x (4 vectors) register tile, the edge loop, or the
 * fallback when the packing buffer cannot be allocated. Vector lanes are independent
 * elements, so the vector width does not change a bit.
 */
#define OM_EXACT_GEMM(NAME, T, L, ATTR)                                                         \
	typedef T NAME##_vec __attribute__((vector_size(sizeof(T) * L)));                      \
	enum { NAME##_NR = 4 * L };                                                             \
                                                                                                \
	/* acc[r][j] for one element (i, j) of the tile: the reference order */                 \
	OM_INLINE T NAME##_dot(bool ta, int64_t K, const T *A, int64_t lda, int64_t i,          \
			    const T *bcol, int64_t bstep)                                        \
	{                                                                                       \
		T acc = 0;                                                                      \
		for (int64_t k = 0; k < K; k++) {                                               \
			const T p = (ta ? A[k * lda + i] : A[i * lda + k]) * bcol[k * bstep];   \
			acc += p;                                                               \
		}                                                                               \
		return acc;                                                                     \
	}                                                                                       \
                                                                                                \
	/* 4 rows x NR columns; brow(k) = B row k at column j0 (stride bstep between rows) */   \
	OM_INLINE void NAME##_tile(bool ta, int64_t K, const T *A, int64_t lda, int64_t i0,     \
				const T *b, int64_t bstep, T out[4][NAME##_NR])                  \
	{                                                                                       \
		NAME##_vec acc[4][4];                                                           \
		memset(acc, 0, sizeof acc);                                                     \
		for (int64_t k = 0; k < K; k++) {                                               \
			NAME##_vec bv[4];                                                       \
			memcpy(bv, b + k * bstep, sizeof bv);                                   \
			_Pragma("GCC unroll 4")                                                 \
			for (int r = 0; r < 4; r++) {                                           \
				const T a = ta ? A[k * lda + i0 + r] : A[(i0 + r) * lda + k];   \
				_Pragma("GCC unroll 4")                                         \
				for (int v = 0; v < 4; v++) {                                   \
					const NAME##_vec p = a * bv[v];                         \
					acc[r][v] += p;                                         \
				}                                                               \
			}                                                                       \
		}                                                                               \
		memcpy(out, acc, sizeof acc);                                                   \
	}                                                                                       \
                                                                                                \
	ATTR static void NAME(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha,       \
			 const T *A, int64_t lda, const T *B, int64_t ldb, T beta, T *C,        \
			 int64_t ldc)                                                            \
	{                                                                                       \
		/* B^T is packed one panel of NR columns at a time: [K][NR] */                  \
		T *pack = tb && K > 0 ? malloc(sizeof(T) * (size_t)K * NAME##_NR) : NULL;       \
		T tile[4][NAME##_NR];                                                           \
		for (int64_t j0 = 0; j0 < N; j0 += NAME##_NR) {                                 \
			const int64_t nc = N - j0 < NAME##_NR ? N - j0 : NAME##_NR;             \
			const bool full_n = nc == NAME##_NR && (!tb || pack);                   \
			if (full_n && tb)                                                       \
				for (int64_t k = 0; k < K; k++)                                 \
					for (int64_t j = 0; j < NAME##_NR; j++)                 \
						pack[k * NAME##_NR + j] = B[(j0 + j) * ldb + k]; \
			const T *bp = tb ? pack : B + j0;                                       \
			const int64_t bstep = tb ? NAME##_NR : ldb;                             \
			for (int64_t i0 = 0; i0 < M; i0 += 4) {                                 \
				const int64_t mc = M - i0 < 4 ? M - i0 : 4;                     \
				if (full_n && mc == 4 && K > 0)                                 \
					NAME##_tile(ta, K, A, lda, i0, bp, bstep, tile);        \
				for (int64_t r = 0; r < mc; r++)                                \
					for (int64_t j = 0; j < nc; j++) {                      \
						T s = full_n && mc == 4 && K > 0 ? tile[r][j] \
							: tb ? NAME##_dot(ta, K, A, lda, i0 + r, \
									  B + (j0 + j) * ldb, 1) \
							     : NAME##_dot(ta, K, A, lda, i0 + r, \
									  B + j0 + j, ldb);      \
						T *c = &C[(i0 + r) * ldc + j0 + j];             \
						s = alpha * s;                                  \
						if (beta != 0) {                                \
							const T bc = beta * *c;                 \
							s = s + bc;                             \
						}                                               \
						*c = s;                                         \
					}                                                       \
			}                                                                       \
		}                                                                               \
		free(pack);                                                                     \
	}

OM_EXACT_GEMM(exact_sgemm, float, 4, )
OM_EXACT_GEMM(exact_dgemm, double, 2, )
#ifdef OM_HAVE_DNNL
/* fast mode's double products (attention's scores, double MatMul): the same arithmetic,
 * wider and for the CPU's instruction set, so the same bits as exact mode */
OM_EXACT_GEMM(wide_dgemm, double, 4, OM_CLONES)
#endif

/* cblas takes int extents: anything larger, or empty, goes through the exact loop (which
 * handles K == 0 as C = beta * C without reading A or B). */
static bool blas_ok(int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc)
{
	return M > 0 && N > 0 && K > 0 && M <= INT_MAX && N <= INT_MAX && K <= INT_MAX &&
	       lda > 0 && lda <= INT_MAX && ldb > 0 && ldb <= INT_MAX && ldc > 0 && ldc <= INT_MAX;
}

#ifndef OM_HAVE_DNNL
/*
 * Fast mode. OpenBLAS's sgemm packs all of op(B) in every call and its kernel runs C's rows in
 * blocks of 4, with slow tails: up to 3 rows go through one gemv each (1 x 512 x 1000: 109 us
 * through sgemm, 22 us through sgemv), and so do the rows past the last multiple of 4 when op(B)
 * has at least GEMV_SPLIT_NK elements (7 x 128 x 64: 2.24 -> 1.85 us; below, the calls cost
 * more: 7 x 16 x 7 0.07 -> 0.13 us), the rest through one gemm. A product of at most 3 columns
 * and more rows is one gemv per column. A gemv destination is zeroed first when beta == 0 (C
 * is never read then).
 */
enum { GEMV_MAX = 3, GEMM_ROWS = 4, GEMV_SPLIT_NK = 4096 };

#define OM_FAST_GEMM(NAME, T, GEMM, GEMV)                                                       \
	/* rows i0 .. M-1: row i of C = alpha * op(B)^T (row i of op(A)) + beta * row i */       \
	static void NAME##_rows(bool ta, bool tb, int i0, int M, int N, int K, T alpha,         \
				const T *A, int lda, const T *B, int ldb, T beta, T *C,        \
				int ldc)                                                        \
	{                                                                                       \
		for (int i = i0; i < M; i++) {                                                  \
			T *c = C + (size_t)i * (size_t)ldc;                                     \
			if (beta == 0)                                                          \
				memset(c, 0, sizeof(T) * (size_t)N);                            \
			const T *x = ta ? A + i : A + (size_t)i * (size_t)lda;                  \
			GEMV(CblasRowMajor, tb ? CblasNoTrans : CblasTrans, tb ? N : K,         \
			     tb ? K : N, alpha, B, ldb, x, ta ? lda : 1, beta, c, 1);           \
		}                                                                               \
	}                                                                                       \
                                                                                                \
	/* column j of C = alpha * op(A) (column j of op(B)) + beta * column j */                \
	static void NAME##_cols(bool ta, bool tb, int M, int N, int K, T alpha, const T *A,     \
				int lda, const T *B, int ldb, T beta, T *C, int ldc)           \
	{                                                                                       \
		for (int j = 0; j < N; j++) {                                                   \
			if (beta == 0)                                                          \
				for (int i = 0; i < M; i++)                                     \
					C[(size_t)i * (size_t)ldc + (size_t)j] = 0;             \
			const T *y = tb ? B + (size_t)j * (size_t)ldb : B + j;                  \
			GEMV(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, ta ? K : M,         \
			     ta ? M : K, alpha, A, lda, y, tb ? 1 : ldb, beta, C + j, ldc);     \
		}                                                                               \
	}                                                                                       \
                                                                                                \
	static void NAME(bool ta, bool tb, int M, int N, int K, T alpha, const T *A, int lda,   \
			 const T *B, int ldb, T beta, T *C, int ldc)                            \
	{                                                                                       \
		if (N <= GEMV_MAX && N < M) {                                                   \
			NAME##_cols(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);      \
			return;                                                                 \
		}                                                                               \
		int m4 = M - M % GEMM_ROWS; /* rows through gemm */                            \
		if (M <= GEMV_MAX)                                                              \
			m4 = 0;                                                                 \
		else if ((int64_t)N * K < GEMV_SPLIT_NK)                                        \
			m4 = M;                                                                 \
		if (m4)                                                                         \
			GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,                     \
			     tb ? CblasTrans : CblasNoTrans, m4, N, K, alpha, A, lda, B, ldb,   \
			     beta, C, ldc);                                                     \
		NAME##_rows(ta, tb, m4, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);          \
	}

OM_FAST_GEMM(fast_sgemm, float, cblas_sgemm, cblas_sgemv)
OM_FAST_GEMM(fast_dgemm, double, cblas_dgemm, cblas_dgemv)
#endif

#ifdef OM_HAVE_DNNL
/*
 * oneDNN's sgemm (row-major, its JIT AVX-512/AVX2 kernels, threads from OpenMP) against
 * OpenBLAS's (pinned to its Haswell kernels here), one thread, us per product: 32x768x2304
 * 1573 -> 618, 197x768x3072 9585 -> 5121, 1x768x768 125 (34 as gemv rows) -> 29, 1000x512x1
 * 114 -> 33, 7x128x64 6.0 -> 0.85; below about 8192 multiply-adds its call costs more
 * (16x16x16 0.26 -> 0.47, 4x4x4 0.10 -> 0.40): those run the blocked loop.
 */
enum { DNNL_MIN_MNK = 8192 };

/* Below this many multiply-adds a product runs on one thread whatever the run's count: the
 * pool's wake-up costs more than the split gains (conv_dnnl.c's small dense convs likewise; a
 * unidirectional LSTM of 128 units on 16 sequences, 16x512x128 a step: 16.3 ms a run at two
 * threads against 13.8 at one) */
#define DNNL_1T_MNK 3e6

/* Multiply-adds a piece of a split product at least (oneDNN's call and packing per piece) */
#define SPLIT_MNK 5e5

/* A product split over omopt's pool (om_par_for): rows of C, or columns when it has more */
typedef struct split_job {
	bool ta, tb, rows;
	int64_t M, N, K, lda, ldb, ldc;
	float alpha, beta;
	const float *A, *B;
	float *C;
} split_job;

/* Rows or columns [lo, hi) of C: one dnnl_sgemm on this thread (om_par_for's pieces run at an
 * OpenMP count of 1), the blocked loop if oneDNN refuses it (it checks only its arguments) */
static void split_piece(void *arg, int64_t lo, int64_t hi)
{
	const split_job *j = arg;
	const int64_t m = j->rows ? hi - lo : j->M, n = j->rows ? j->N : hi - lo;
	const float *A = j->rows ? j->A + (j->ta ? lo : lo * j->lda) : j->A;
	const float *B = j->rows ? j->B : j->B + (j->tb ? lo * j->ldb : lo);
	float *C = j->C + (j->rows ? lo * j->ldc : lo);
	if (dnnl_sgemm(j->ta ? 'T' : 'N', j->tb ? 'T' : 'N', m, n, j->K, j->alpha, A, j->lda, B,
		       j->ldb, j->beta, C, j->ldc) != dnnl_success)
		exact_sgemm(j->ta, j->tb, m, n, j->K, j->alpha, A, j->lda, B, j->ldb, j->beta, C,
			    j->ldc);
}

/*
 * oneDNN's sgemm; false when not taken (too small: the blocked loop). At more than one thread
 * (the calling thread's OpenMP count, a session's run's) and DNNL_1T_MNK multiply-adds, the
 * product is cut into rows (or columns) over omopt's pool, each piece one single-threaded
 * dnnl_sgemm: no OpenMP team, whose idle workers spin (libgomp's default: about 300,000 spins
 * after each region; resnet18 at 2 threads with one core busy spent 140-157 ms of CPU a run
 * against 24 without the spin). A piece's bounds depend on the extents and the thread count
 * alone (parallel.h).
 */
static bool dnnl_sgemm_ok(bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
			  const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
			  float *C, int64_t ldc)
{
	const double mnk = (double)M * (double)N * (double)K;
	if (mnk < DNNL_MIN_MNK)
		return false;
	const int threads = omp_get_max_threads();
	if (threads <= 1 || mnk < DNNL_1T_MNK) {
		const int saved = om_par_threads_set(1);
		const bool ok = dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', M, N, K, alpha, A, lda,
					   B, ldb, beta, C, ldc) == dnnl_success;
		om_par_threads_restore(saved);
		return ok;
	}
	const split_job j = {ta, tb, M >= N, M, N, K, lda, ldb, ldc, alpha, beta, A, B, C};
	const int64_t n = j.rows ? M : N, other = j.rows ? N : M;
	const int64_t grain = (int64_t)(SPLIT_MNK / ((double)other * (double)K)) + 1;
	om_par_for(threads, n, grain, split_piece, (void *)&j);
	return true;
}
#endif

void om_sgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
	      const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
	      int64_t ldc)
{
	if (M <= 0 || N <= 0)
		return;
#ifdef OM_HAVE_DNNL
	/* oneDNN's sgemm, else (under DNNL_MIN_MNK, or refused) the blocked loop: 16x16x16
	 * 0.26 us through OpenBLAS, whose Haswell kernels this environment pins and whose idle
	 * workers spin; OpenBLAS is not linked at all with oneDNN */
	if (exact || !blas_ok(M, N, K, lda, ldb, ldc) ||
	    !dnnl_sgemm_ok(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc))
		exact_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
	if (exact || !blas_ok(M, N, K, lda, ldb, ldc))
		exact_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	else
		fast_sgemm(ta, tb, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta,
			   C, (int)ldc);
#endif
}

#ifdef OM_HAVE_DNNL
typedef struct batch_job {
	bool ta, tb;
	int64_t M, N, K;
	float alpha;
	const float *A;
	const int64_t *aoff;
	int64_t lda;
	const float *B;
	const int64_t *boff;
	int64_t ldb;
	float beta;
	float *C;
	const int64_t *coff;
	int64_t ldc;
} batch_job;

/* products [lo, hi) of a batch, in fast mode */
static void batch_piece(void *arg, int64_t lo, int64_t hi)
{
	const batch_job *j = arg;
	for (int64_t b = lo; b < hi; b++)
		om_sgemm(0, j->ta, j->tb, j->M, j->N, j->K, j->alpha, j->A + j->aoff[b], j->lda,
			 j->B + j->boff[b], j->ldb, j->beta, j->C + j->coff[b], j->ldc);
}
#endif

void om_sgemm_batch(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, float alpha,
		    const float *A, const int64_t *aoff, int64_t lda, const float *B,
		    const int64_t *boff, int64_t ldb, float beta, float *C, const int64_t *coff,
		    int64_t ldc, int64_t nbatch)
{
#ifdef OM_HAVE_DNNL
	const int threads = omp_get_max_threads();
	const double mnk = (double)M * (double)N * (double)K;
	if (!exact && threads > 1 && nbatch > 1) {
		/* the products over omopt's pool, each on one thread (pieces run at an OpenMP
		 * count of 1): attention heads are too small to split well; pieces of at least
		 * SPLIT_MNK multiply-adds */
		const batch_job j = {ta, tb, M, N, K, alpha, A, aoff, lda, B, boff, ldb, beta,
				     C, coff, ldc};
		const int64_t grain = mnk >= SPLIT_MNK ? 1 : (int64_t)(SPLIT_MNK / (mnk + 1)) + 1;
		om_par_for(threads, nbatch, grain, batch_piece, (void *)&j);
		return;
	}
#endif
	for (int64_t b = 0; b < nbatch; b++)
		om_sgemm(exact, ta, tb, M, N, K, alpha, A + aoff[b], lda, B + boff[b], ldb, beta,
			 C + coff[b], ldc);
}

void om_dgemm(int exact, bool ta, bool tb, int64_t M, int64_t N, int64_t K, double alpha,
	      const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
	      int64_t ldc)
{
	if (M <= 0 || N <= 0)
		return;
#ifdef OM_HAVE_DNNL
	(void)blas_ok;
	if (exact)
		exact_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	else
		wide_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
#else
	if (exact || !blas_ok(M, N, K, lda, ldb, ldc))
		exact_dgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
	else
		fast_dgemm(ta, tb, (int)M, (int)N, (int)K, alpha, A, (int)lda, B, (int)ldb, beta,
			   C, (int)ldc);
#endif
}

/* omopt.h: the explicit, process-wide call a host may make; the library never makes it. With
 * oneDNN the library neither links nor calls OpenBLAS: nothing to do. */
void om_blas_threads(int threads)
{
#ifdef OM_HAVE_DNNL
	(void)threads;
#else
	if (threads < 1)
		threads = 1;
	if (openblas_get_num_threads() != threads)
		openblas_set_num_threads(threads);
#endif
}
