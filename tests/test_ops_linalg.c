/* test_ops_linalg.c — om_sgemm/om_dgemm (exact and BLAS paths), MatMul, Gemm. */
#include <math.h>
#include <string.h>

#include "gemm.h"
#include "testutil.h"

/* a small deterministic generator: values in [-1, 1) with 2^-10 steps (exact in float) */
static float gen(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return (float)((int32_t)(*s >> 21) - 1024) / 1024.0f;
}

static double ref_at(bool ta, bool tb, int64_t K, const float *A, int64_t lda, const float *B,
		     int64_t ldb, int64_t i, int64_t j)
{
	double s = 0;
	for (int64_t k = 0; k < K; k++)
		s += (double)(ta ? A[k * lda + i] : A[i * lda + k]) *
		     (double)(tb ? B[j * ldb + k] : B[k * ldb + j]);
	return s;
}

/* every transpose combination, extents across the block edges, padded strides */
static void sgemm_matches_reference(void **state)
{
	(void)state;
	static const int64_t ext[][3] = {{1, 1, 1}, {3, 5, 7}, {9, 65, 130}, {17, 128, 64},
					 {8, 64, 0}, {2, 3, 200}};
	enum { CAP = 40000 };
	static float A[CAP], B[CAP], C[CAP], C0[CAP];
	for (size_t e = 0; e < sizeof ext / sizeof ext[0]; e++)
		for (int t = 0; t < 4; t++)
			for (int exact = 0; exact < 2; exact++) {
				const int64_t M = ext[e][0], N = ext[e][1], K = ext[e][2];
				const bool ta = t & 1, tb = t & 2;
				const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1;
				const int64_t ldc = N + 2;
				uint32_t s = (uint32_t)(e * 8 + t);
				for (int i = 0; i < CAP; i++)
					A[i] = gen(&s), B[i] = gen(&s), C0[i] = gen(&s);
				memcpy(C, C0, sizeof C);
				om_sgemm(exact, ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C, ldc);
				for (int64_t i = 0; i < M; i++)
					for (int64_t j = 0; j < N; j++) {
						double r = 0.5 * ref_at(ta, tb, K, A, lda, B, ldb,
									i, j) +
							   2.0 * C0[i * ldc + j];
						assert_true(fabs(C[i * ldc + j] - r) <
							    1e-5 * (1 + fabs(r)));
					}
				/* padding columns untouched */
				assert_true(M == 0 || C[N] == C0[N]);
			}
}

/* beta == 0 must not read C: NaN there stays out of the result */
static void sgemm_beta_zero_ignores_c(void **state)
{
	(void)state;
	const float A[] = {1, 2, 3, 4}, B[] = {5, 6, 7, 8};
	for (int exact = 0; exact < 2; exact++) {
		float C[4] = {NAN, NAN, NAN, NAN};
		om_sgemm(exact, false, false, 2, 2, 2, 1.0f, A, 2, B, 2, 0.0f, C, 2);
		assert_true(C[0] == 19 && C[1] == 22 && C[2] == 43 && C[3] == 50);
	}
}

/* exact: the documented order, (0 + a0*b0) + a1*b1 + ... in float, is what comes out */
static void sgemm_exact_order(void **state)
{
	(void)state;
	const float A[] = {1e8f, 1.0f, -1e8f}, B[] = {1.0f, 1.0f, 1.0f};
	float C[1];
	om_sgemm(1, false, false, 1, 1, 3, 1.0f, A, 3, B, 1, 0.0f, C, 1);
	/* (1e8 + 1) rounds to 1e8 in float, minus 1e8 is 0 */
	assert_true(C[0] == 0.0f);
}

static void dgemm_matches(void **state)
{
	(void)state;
	const double A[] = {1, 2, 3, 4, 5, 6}, B[] = {1, 0, -1, 2, 0.5, 0.25};
	for (int exact = 0; exact < 2; exact++) {
		double C[4] = {1, 1, 1, 1};
		/* A 2x3, B^T where B is 2x3: C = A B^T + C */
		om_dgemm(exact, false, true, 2, 2, 3, 1.0, A, 3, B, 3, 1.0, C, 2);
		assert_true(C[0] == 1 + 0 - 3 + 1 && C[1] == 2 + 1 + 0.75 + 1);
		assert_true(C[2] == 4 + 0 - 6 + 1 && C[3] == 8 + 2.5 + 1.5 + 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sgemm_matches_reference),
		cmocka_unit_test(sgemm_beta_zero_ignores_c),
		cmocka_unit_test(sgemm_exact_order),
		cmocka_unit_test(dgemm_matches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
