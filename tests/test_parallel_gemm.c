/* test_parallel_gemm.c — fast mode's products that oneDNN does not run (num/gemm.c): float
 * products under 8192 multiply-adds and every double product give the bits of the reference
 * order (acc = 0; acc += a_ik * b_kj for k ascending, rounded each step; alpha * acc + beta *
 * c), computed here by a plain loop, over transposes, strides, beta 0 (C's NaN not read) and
 * not, and sizes around the kernel's 4-row and 16-column tiles; at 1 and 2 OpenMP threads.
 * Larger float products (oneDNN's; from 3e6 multiply-adds cut into rows, or columns when C
 * has more, over the pool), and batches of them, agree with the reference to 1e-5 of the sum
 * of magnitudes at 1, 2 and 3 threads. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "gemm.h"
#include "nodetest.h"
#include "parallel.h"

#define REF_GEMM(NAME, T)                                                                       \
	static void NAME(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T alpha, const T *A, \
			 int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc)       \
	{                                                                                       \
		for (int64_t i = 0; i < M; i++)                                                 \
			for (int64_t j = 0; j < N; j++) {                                       \
				volatile T acc = 0;                                             \
				for (int64_t k = 0; k < K; k++) {                               \
					volatile T p = (ta ? A[k * lda + i] : A[i * lda + k]) * \
						       (tb ? B[j * ldb + k] : B[k * ldb + j]);  \
					acc = acc + p;                                          \
				}                                                               \
				volatile T s = alpha * acc;                                     \
				if (beta != 0) {                                                \
					volatile T bc = beta * C[i * ldc + j];                  \
					s = s + bc;                                             \
				}                                                               \
				C[i * ldc + j] = s;                                             \
			}                                                                       \
	}

REF_GEMM(ref_sgemm, float)
REF_GEMM(ref_dgemm, double)

static uint32_t next(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed >> 8;
}

/* op(A) M x K, op(B) K x N, strides 3 past the least, C's 5 past N */
#define CASE(NAME, T, GEMM, REF)                                                                \
	static void NAME(bool ta, bool tb, int64_t M, int64_t N, int64_t K, T beta,             \
			 uint32_t seed)                                                         \
	{                                                                                       \
		const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 3, ldc = N + 5;      \
		const int64_t na = (ta ? K : M) * lda, nb = (tb ? N : K) * ldb, nc = M * ldc;   \
		T *A = malloc(sizeof(T) * (size_t)na), *B = malloc(sizeof(T) * (size_t)nb);     \
		T *C = malloc(sizeof(T) * (size_t)nc), *R = malloc(sizeof(T) * (size_t)nc);     \
		for (int64_t i = 0; i < na; i++)                                                \
			A[i] = (T)((int)(next(&seed) % 2001) - 1000) / (T)317;                  \
		for (int64_t i = 0; i < nb; i++)                                                \
			B[i] = (T)((int)(next(&seed) % 2001) - 1000) / (T)293;                  \
		for (int64_t i = 0; i < nc; i++)                                                \
			C[i] = beta != 0 ? (T)((int)(next(&seed) % 201) - 100) / 7 : (T)NAN;    \
		memcpy(R, C, sizeof(T) * (size_t)nc);                                           \
		GEMM(0, ta, tb, M, N, K, (T)1.25, A, lda, B, ldb, beta, C, ldc);                \
		REF(ta, tb, M, N, K, (T)1.25, A, lda, B, ldb, beta, R, ldc);                    \
		for (int64_t i = 0; i < M; i++)                                                 \
			for (int64_t j = 0; j < N; j++)                                         \
				if (memcmp(&C[i * ldc + j], &R[i * ldc + j], sizeof(T)))        \
					fail_msg(#T " %s%s %lldx%lldx%lld beta %g: C[%lld][%lld] " \
						 "%.17g, reference %.17g", ta ? "T" : "N",      \
						 tb ? "T" : "N", (long long)M, (long long)N,    \
						 (long long)K, (double)beta, (long long)i,      \
						 (long long)j, (double)C[i * ldc + j],          \
						 (double)R[i * ldc + j]);                       \
		free(A), free(B), free(C), free(R);                                             \
	}

CASE(case_s, float, om_sgemm, ref_sgemm)
CASE(case_d, double, om_dgemm, ref_dgemm)

static const int64_t sizes[] = {1, 3, 4, 5, 16, 17, 33};

static void small_float_products_exact_bits(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 2; threads++) {
		const int saved = om_par_threads_set(threads);
		uint32_t seed = 1;
		for (int t = 0; t < 4; t++)
			for (size_t m = 0; m < 7; m++)
				for (size_t n = 0; n < 7; n++)
					for (size_t k = 0; k < 7; k++) {
						const int64_t M = sizes[m], N = sizes[n];
						const int64_t K = sizes[k];
						if (M * N * K >= 8192)
							continue; /* oneDNN's */
						case_s(t & 1, t >> 1, M, N, K, 0, seed++);
						case_s(t & 1, t >> 1, M, N, K, 0.5f, seed++);
					}
		om_par_threads_restore(saved);
	}
}

static void double_products_exact_bits(void **state)
{
	(void)state;
	static const int64_t big[][3] = {{64, 64, 64}, {67, 129, 50}, {1, 300, 200}};
	for (int threads = 1; threads <= 2; threads++) {
		const int saved = om_par_threads_set(threads);
		uint32_t seed = 7;
		for (int t = 0; t < 4; t++) {
			for (size_t m = 0; m < 7; m++)
				for (size_t n = 0; n < 7; n++)
					for (size_t k = 0; k < 7; k += 2)
						case_d(t & 1, t >> 1, sizes[m], sizes[n], sizes[k],
						       t ? 0.5 : 0, seed++);
			for (size_t b = 0; b < 3; b++)
				case_d(t & 1, t >> 1, big[b][0], big[b][1], big[b][2], 0, seed++);
		}
		om_par_threads_restore(saved);
	}
}

/* C (M x N) against the reference in double: within 1e-5 of the sum of |a b| */
static void check_close(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float *A,
			const float *B, const float *C)
{
	const int64_t lda = ta ? M : K, ldb = tb ? K : N;
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			double s = 0, mag = 0;
			for (int64_t k = 0; k < K; k++) {
				const double p = (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
						 (tb ? B[j * ldb + k] : B[k * ldb + j]);
				s += p, mag += fabs(p);
			}
			if (fabs(C[i * N + j] - s) > 1e-5 * mag + 1e-30)
				fail_msg("%lldx%lldx%lld %c%c C[%lld][%lld] %g vs %g", (long long)M,
					 (long long)N, (long long)K, ta ? 'T' : 'N', tb ? 'T' : 'N',
					 (long long)i, (long long)j, C[i * N + j], s);
		}
}

static float *random_floats(int64_t n, uint32_t *seed)
{
	float *v = malloc(sizeof(float) * (size_t)n);
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)((int)(next(seed) % 2001) - 1000) / 317;
	return v;
}

/* oneDNN's products: at least 8192 multiply-adds; the last three split (3e6 and more), by
 * rows, by columns, and by rows with an odd count */
static void large_float_products_close(void **state)
{
	(void)state;
	static const int64_t dims[][3] = {{32, 64, 4},	  {7, 128, 64},	   {100, 3, 50},
					  {1, 512, 40},	  {301, 200, 64},  {8, 1001, 400},
					  {97, 33, 1000}};
	uint32_t seed = 3;
	for (int threads = 1; threads <= 3; threads++) {
		const int saved = om_par_threads_set(threads);
		for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
			for (int t = 0; t < 4; t++) {
				const int64_t M = dims[d][0], N = dims[d][1], K = dims[d][2];
				const bool ta = t & 1, tb = t >> 1;
				float *A = random_floats(M * K, &seed);
				float *B = random_floats(K * N, &seed);
				float *C = malloc(sizeof(float) * (size_t)(M * N));
				for (int64_t i = 0; i < M * N; i++)
					C[i] = NAN;
				om_sgemm(0, ta, tb, M, N, K, 1, A, ta ? M : K, B, tb ? K : N, 0,
					 C, N);
				check_close(ta, tb, M, N, K, A, B, C);
				free(A), free(B), free(C);
			}
		om_par_threads_restore(saved);
	}
}

/* a batch of 5 products (small ones: the blocked loop; larger: oneDNN), over the pool */
static void batches_close(void **state)
{
	(void)state;
	static const int64_t dims[][3] = {{4, 5, 6}, {64, 48, 32}};
	enum { NB = 5 };
	uint32_t seed = 11;
	for (int threads = 1; threads <= 3; threads++) {
		const int saved = om_par_threads_set(threads);
		for (size_t d = 0; d < 2; d++) {
			const int64_t M = dims[d][0], N = dims[d][1], K = dims[d][2];
			float *A = random_floats(NB * M * K, &seed);
			float *B = random_floats(NB * K * N, &seed);
			float *C = malloc(sizeof(float) * (size_t)(NB * M * N));
			int64_t ao[NB], bo[NB], co[NB];
			for (int b = 0; b < NB; b++)
				ao[b] = b * M * K, bo[b] = b * K * N, co[b] = b * M * N;
			om_sgemm_batch(0, false, false, M, N, K, 1, A, ao, K, B, bo, N, 0, C, co, N,
				       NB);
			for (int b = 0; b < NB; b++)
				check_close(false, false, M, N, K, A + ao[b], B + bo[b], C + co[b]);
			free(A), free(B), free(C);
		}
		om_par_threads_restore(saved);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_float_products_exact_bits),
		cmocka_unit_test(double_products_exact_bits),
		cmocka_unit_test(large_float_products_close),
		cmocka_unit_test(batches_close),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
