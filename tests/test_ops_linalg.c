/* test_ops_linalg.c — om_sgemm/om_dgemm (exact and BLAS paths), MatMul, MatMulInteger, Det,
 * Gemm. */
#include <math.h>
#include <string.h>

#include <cblas.h>
#include <stdlib.h>

#include "gemm.h"
#include "half.h"
#include "parallel.h"
#include "nodetest.h"

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
					 {8, 64, 0}, {2, 3, 200}, {1, 100, 37}, {3, 70, 20},
					 {40, 1, 33}, {50, 2, 9}, {4, 3, 5}, {4, 4, 4},
					 {6, 5, 11}, {13, 40, 3}, {6, 70, 64}};
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
				om_sgemm(exact, ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C,
					 ldc);
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

/* beta == 0 must not read C: NaN there stays out of the result (the GEMV path for few rows
 * or columns, and sgemm for more) */
static void sgemm_beta_zero_ignores_c(void **state)
{
	(void)state;
	const float A[] = {1, 2, 3, 4}, B[] = {5, 6, 7, 8};
	for (int exact = 0; exact < 2; exact++) {
		float C[4] = {NAN, NAN, NAN, NAN};
		om_sgemm(exact, false, false, 2, 2, 2, 1.0f, A, 2, B, 2, 0.0f, C, 2);
		assert_true(C[0] == 19 && C[1] == 22 && C[2] == 43 && C[3] == 50);
		/* one row; one column (C's column 1 of a 2-column buffer) */
		float r[2] = {NAN, NAN}, c[4] = {NAN, NAN, NAN, NAN};
		om_sgemm(exact, false, false, 1, 2, 2, 1.0f, A, 2, B, 2, 0.0f, r, 2);
		assert_true(r[0] == 19 && r[1] == 22);
		om_sgemm(exact, false, true, 2, 1, 2, 1.0f, A, 2, B, 2, 0.0f, c + 1, 2);
		assert_true(c[1] == 17 && c[3] == 39 && isnan(c[0]) && isnan(c[2]));
		/* more rows and columns than the GEMV path takes */
		float big[16];
		static const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
		for (int i = 0; i < 16; i++)
			big[i] = NAN;
		om_sgemm(exact, false, false, 4, 4, 4, 1.0f, ones, 4, ones, 4, 0.0f, big, 4);
		for (int i = 0; i < 16; i++)
			assert_true(big[i] == 4);
		/* one that oneDNN's sgemm takes (at least 8192 multiply-adds) when built in */
		static float ones32[32 * 32], c32[32 * 32];
		for (int i = 0; i < 32 * 32; i++)
			ones32[i] = 1, c32[i] = NAN;
		om_sgemm(exact, false, false, 32, 32, 32, 1.0f, ones32, 32, ones32, 32, 0.0f, c32,
			 32);
		for (int i = 0; i < 32 * 32; i++)
			assert_true(c32[i] == 32);
	}
	double d[2] = {NAN, NAN};
	const double da[] = {1, 2}, db[] = {3, 4, 5, 6};
	om_dgemm(0, false, false, 1, 2, 2, 1.0, da, 2, db, 2, 0.0, d, 2);
	assert_true(d[0] == 13 && d[1] == 16);
}

/* om_sgemm_batch: each product as om_sgemm computes it alone, on one thread and on two (where
 * oneDNN's products are spread over OpenMP's threads when the build has it); exact mode
 * bit-identical */
static void sgemm_batch_matches_single(void **state)
{
	(void)state;
	enum { NB = 5, M = 24, N = 20, K = 30, CAP = 8000 };
	static float A[CAP], B[CAP], C[CAP], R[CAP];
	const int64_t aoff[NB] = {0, 900, 77, 2000, 3100}, boff[NB] = {5, 5, 700, 1500, 0};
	const int64_t coff[NB] = {0, 700, 1400, 2100, 2800};
	uint32_t s = 99;
	for (int i = 0; i < CAP; i++)
		A[i] = gen(&s), B[i] = gen(&s);
	const int host = om_par_threads_set(1); /* as a session's run sets the products' threads */
	for (int threads = 1; threads <= 2; threads++)
		for (int exact = 0; exact < 2; exact++)
			for (int t = 0; t < 4; t++) {
				const bool ta = t & 1, tb = t & 2;
				const int64_t lda = ta ? M : K, ldb = tb ? K : N;
				om_par_threads_set(1);
				for (int b = 0; b < NB; b++)
					om_sgemm(exact, ta, tb, M, N, K, 1.5f, A + aoff[b], lda,
						 B + boff[b], ldb, 0.0f, R + coff[b], N);
				om_par_threads_set(threads);
				om_sgemm_batch(exact, ta, tb, M, N, K, 1.5f, A, aoff, lda, B, boff,
					       ldb, 0.0f, C, coff, N, NB);
				for (int b = 0; b < NB; b++)
					for (int i = 0; i < M * N; i++) {
						const float x = C[coff[b] + i], r = R[coff[b] + i];
						if (exact ? x != r : !(fabsf(x - r) <= 1e-5f * (1 + fabsf(r))))
							fail_msg("threads %d exact %d t %d batch %d [%d]: "
								 "%.9g against %.9g", threads, exact, t,
								 b, i, (double)x, (double)r);
					}
			}
	om_par_threads_restore(host);
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

/* exact: the register tile and the edge loop give the same bits for the same element */
static void sgemm_exact_paths_agree(void **state)
{
	(void)state;
	enum { M = 9, N = 35, K = 77 };
	static float A[M * K], B[K * N], BT[N * K], C[M * N], one;
	uint32_t s = 3;
	for (int i = 0; i < M * K; i++)
		A[i] = gen(&s) * 3.3f;
	for (int k = 0; k < K; k++)
		for (int j = 0; j < N; j++)
			BT[j * K + k] = B[k * N + j] = gen(&s) * 0.7f;
	for (int tb = 0; tb < 2; tb++) {
		om_sgemm(1, false, tb, M, N, K, 1.5f, A, K, tb ? BT : B, tb ? K : N, 0.0f, C, N);
		for (int i = 0; i < M; i++)
			for (int j = 0; j < N; j++) {
				om_sgemm(1, false, tb, 1, 1, K, 1.5f, A + i * K, K,
					 tb ? BT + j * K : B + j, tb ? K : N, 0.0f, &one, 1);
				assert_memory_equal(&one, &C[i * N + j], sizeof one);
			}
	}
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


/* ---- MatMul ------------------------------------------------------------------------------ */

static void matmul_f32_case(int32_t ra, const int64_t *da, const float *a, int32_t rb,
			    const int64_t *db, const float *b, int32_t ry, const int64_t *dy,
			    const float *want)
{
	om_model *m;
	om_node *n = nt_node(&m, "MatMul", 2, 1);
	om_tensor ta = nt_tensor(OM_FLOAT, ra, da, a), tb = nt_tensor(OM_FLOAT, rb, db, b);
	const om_tensor *in[] = {&ta, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], ry, dy, want, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void matmul_shapes(void **state)
{
	(void)state;
	matmul_f32_case(2, (int64_t[]){2, 2}, (float[]){1, 2, 3, 4}, 2, (int64_t[]){2, 2},
			(float[]){5, 6, 7, 8}, 2, (int64_t[]){2, 2}, (float[]){19, 22, 43, 50});
	/* 1-D x 1-D: a scalar */
	matmul_f32_case(1, (int64_t[]){3}, (float[]){1, 2, 3}, 1, (int64_t[]){3},
			(float[]){4, 5, 6}, 0, NULL, (float[]){32});
	/* 1-D x 3-D: the promoted 1 is removed again */
	const float b3[] = {1, 2, 3, 4, 5, 6, 0, 1, 0, 1, 0, 1};
	matmul_f32_case(1, (int64_t[]){2}, (float[]){1, 2}, 3, (int64_t[]){2, 2, 3}, b3, 2,
			(int64_t[]){2, 3}, (float[]){9, 12, 15, 2, 1, 2});
	/* 3-D x 1-D */
	matmul_f32_case(3, (int64_t[]){2, 2, 3}, b3, 1, (int64_t[]){3}, (float[]){1, 0, -1}, 2,
			(int64_t[]){2, 2}, (float[]){-2, -2, 0, 0});
}

/* batch broadcast against a plain loop: A [2,1,3,4] x B [3,4,5] -> [2,3,3,5], and the
 * shared-B forms [2,3,4] x [4,5] and [2,3,4] x [1,4,5] */
static void matmul_broadcast(void **state)
{
	(void)state;
	float a[24 * 2], b[60];
	uint32_t s = 7;
	for (int i = 0; i < 48; i++)
		a[i] = gen(&s);
	for (int i = 0; i < 60; i++)
		b[i] = gen(&s);
	float want[2 * 3 * 3 * 5];
	for (int p = 0; p < 2; p++)
		for (int q = 0; q < 3; q++)
			for (int i = 0; i < 3; i++)
				for (int j = 0; j < 5; j++) {
					double acc = 0;
					for (int k = 0; k < 4; k++)
						acc += (double)a[p * 12 + i * 4 + k] *
						       b[q * 20 + k * 5 + j];
					want[((p * 3 + q) * 3 + i) * 5 + j] = (float)acc;
				}
	matmul_f32_case(4, (int64_t[]){2, 1, 3, 4}, a, 3, (int64_t[]){3, 4, 5}, b, 4,
			(int64_t[]){2, 3, 3, 5}, want);
	float want2[2 * 3 * 5];
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 5; j++) {
				double acc = 0;
				for (int k = 0; k < 4; k++)
					acc += (double)a[p * 12 + i * 4 + k] * b[k * 5 + j];
				want2[(p * 3 + i) * 5 + j] = (float)acc;
			}
	matmul_f32_case(3, (int64_t[]){2, 3, 4}, a, 2, (int64_t[]){4, 5}, b, 3,
			(int64_t[]){2, 3, 5}, want2);
	matmul_f32_case(3, (int64_t[]){2, 3, 4}, a, 3, (int64_t[]){1, 4, 5}, b, 3,
			(int64_t[]){2, 3, 5}, want2);
}

static void matmul_types_and_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MatMul", 2, 1);
	om_tensor out[1];
	const int32_t ia[] = {1, 2}, ib[] = {3, -4};
	om_tensor ta = nt_tensor(OM_INT32, 2, (int64_t[]){1, 2}, ia);
	om_tensor tb = nt_tensor(OM_INT32, 2, (int64_t[]){2, 1}, ib);
	const om_tensor *in[] = {&ta, &tb};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT32);
	assert_int_equal(((int32_t *)out[0].data)[0], -5);
	om_tensor_free(&out[0]);
	const uint16_t ha[] = {om_float_to_half(1.5f), om_float_to_half(2)};
	const uint16_t hb[] = {om_float_to_half(4), om_float_to_half(-0.25f)};
	ta = nt_tensor(OM_FLOAT16, 2, (int64_t[]){1, 2}, ha);
	tb = nt_tensor(OM_FLOAT16, 2, (int64_t[]){2, 1}, hb);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	assert_true(om_half_to_float(((uint16_t *)out[0].data)[0]) == 5.5f);
	om_tensor_free(&out[0]);
	/* inner dims differ; rank 0; mixed types */
	const float f[6] = {0};
	ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, f);
	tb = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, f);
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	tb = nt_tensor(OM_FLOAT, 0, NULL, f);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	tb = nt_tensor(OM_DOUBLE, 2, (int64_t[]){3, 2}, f);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* Calls the MatMul kernel directly in fast or exact mode with OpenBLAS at `threads`. */
static void matmul_direct(const om_node *n, const om_tensor *a, const om_tensor *b, om_tensor *y,
			  int exact, int threads)
{
	openblas_set_num_threads(threads);
	const om_op *op = om_op_find("", "MatMul", 13);
	om_status st = {0};
	const om_tensor *in[] = {a, b};
	om_tensor *outs[] = {y};
	om_ctx c = {.node = n, .op = op, .opset = 13, .nin = 2, .nout = 1, .in = in,
		    .out = outs, .st = &st, .exact = exact, .threads = threads};
	memset(y->data, 0xff, y->nbytes);
	assert_int_equal(op->kernel(&c), OM_OK);
}

/* exact: within tolerance of a double reference and the same bytes at 1 and 2 BLAS threads
 * and run to run; fast: within tolerance */
static void matmul_exact_mode(void **state)
{
	(void)state;
	enum { B = 3, M = 37, K = 150, N = 70 };
	float *a = malloc(sizeof(float) * B * M * K), *b = malloc(sizeof(float) * K * N);
	uint32_t s = 11;
	for (int i = 0; i < B * M * K; i++)
		a[i] = gen(&s);
	for (int i = 0; i < K * N; i++)
		b[i] = gen(&s);
	om_model *m;
	om_node *n = nt_node(&m, "MatMul", 2, 1);
	om_tensor ta = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, M, K}, a);
	om_tensor tb = nt_tensor(OM_FLOAT, 2, (int64_t[]){K, N}, b);
	om_tensor y[3];
	om_status st = {0};
	for (int i = 0; i < 3; i++)
		assert_int_equal(om_tensor_alloc(&y[i], OM_FLOAT, 3, (int64_t[]){B, M, N}, &st),
				 OM_OK);
	matmul_direct(n, &ta, &tb, &y[0], 1, 1);
	matmul_direct(n, &ta, &tb, &y[1], 1, 2);
	assert_memory_equal(y[0].data, y[1].data, y[0].nbytes);
	matmul_direct(n, &ta, &tb, &y[1], 1, 1);
	assert_memory_equal(y[0].data, y[1].data, y[0].nbytes);
	for (int exact = 0; exact < 2; exact++) {
		matmul_direct(n, &ta, &tb, &y[2], exact, 2);
		const float *yy = y[2].data;
		for (int p = 0; p < B * M; p++)
			for (int j = 0; j < N; j++) {
				const double r = ref_at(false, false, K, a + p * K, K, b, N, 0, j);
				assert_true(fabs(yy[p * N + j] - r) < 1e-5 * (1 + fabs(r)));
			}
	}
	for (int i = 0; i < 3; i++)
		om_tensor_free(&y[i]);
	openblas_set_num_threads(1);
	om_model_free(m);
	free(a), free(b);
}

/* (a - za)(b - zb) in int32: A uint8 with per-row zero points, B int8 with one */
static void matmul_integer(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MatMulInteger", 4, 1);
	const uint8_t a[] = {1, 2, 5, 255}, za[] = {1, 5};
	const int8_t b[] = {3, -128, -4, 1}, zb[] = {-1};
	om_tensor ta = nt_tensor(OM_UINT8, 2, (int64_t[]){2, 2}, a);
	om_tensor tb = nt_tensor(OM_INT8, 2, (int64_t[]){2, 2}, b);
	om_tensor tza = nt_tensor(OM_UINT8, 1, (int64_t[]){2}, za);
	om_tensor tzb = nt_tensor(OM_INT8, 0, NULL, zb);
	const om_tensor *in[] = {&ta, &tb, &tza, &tzb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 10, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT32);
	/* rows [0, 1] and [0, 250]; columns [4, -3] and [-127, 2] */
	const int32_t want[] = {-3, 2, -750, 500};
	assert_memory_equal(out[0].data, want, sizeof want);
	om_tensor_free(&out[0]);
	/* a zero point of the wrong size or type */
	tzb = nt_tensor(OM_INT8, 1, (int64_t[]){3}, (int8_t[]){0, 0, 0});
	assert_int_equal(nt_run(n, 10, in, out), OM_ERR_INVALID_MODEL);
	tzb = nt_tensor(OM_UINT8, 0, NULL, za);
	assert_int_equal(nt_run(n, 10, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void det(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Det", 1, 1);
	/* a batch of two 2 x 2 (the second needs a row swap) and a singular one */
	om_tensor t = nt_tensor(OM_FLOAT, 3, (int64_t[]){3, 2, 2},
				(float[]){1, 2, 3, 4, 0, 1, 1, 0, 1, 2, 2, 4});
	const om_tensor *in[] = {&t};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){3}, (float[]){-2, -1, 0}, 1e-6);
	om_tensor_free(&out[0]);
	const double d3[] = {2, 0, 1, 1, 3, 2, 1, 1, 2};
	t = nt_tensor(OM_DOUBLE, 2, (int64_t[]){3, 3}, d3);
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	assert_int_equal(out[0].rank, 0);
	assert_true(fabs(((double *)out[0].data)[0] - 6) < 1e-12);
	om_tensor_free(&out[0]);
	t = nt_tensor(OM_DOUBLE, 2, (int64_t[]){3, 2}, d3);
	assert_int_equal(nt_run(n, 11, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- FusedMatMul (com.microsoft) -------------------------------------------------------- */

/* t [dims] permuted by perm into out; returns out's dims in odims */
static void permute(int32_t r, const int64_t *dims, const double *t, const int32_t *perm,
		    int64_t *odims, double *out)
{
	int64_t st[8], n = 1;
	for (int32_t d = r - 1; d >= 0; d--)
		st[d] = n, n *= dims[d];
	for (int32_t d = 0; d < r; d++)
		odims[d] = dims[perm[d]];
	for (int64_t o = 0; o < n; o++) {
		int64_t rem = o, src = 0;
		for (int32_t d = r - 1; d >= 0; d--) {
			src += rem % odims[d] * st[perm[d]];
			rem /= odims[d];
		}
		out[o] = t[src];
	}
}

/* the logical operand: transBatch (perm [1 .. r-2, 0, r-1]) then trans (last two swapped) */
static void logical(int32_t r, int64_t *dims, double *t, bool trans, bool tbatch)
{
	static double tmp[4096];
	int32_t perm[8];
	int64_t od[8];
	for (int pass = 0; pass < 2; pass++) {
		if (r < 2 || !(pass ? trans : tbatch))
			continue;
		for (int32_t d = 0; d < r; d++)
			perm[d] = d;
		if (pass) {
			perm[r - 2] = r - 1, perm[r - 1] = r - 2;
		} else {
			for (int32_t d = 0; d < r - 2; d++)
				perm[d] = d + 1;
			perm[r - 2] = 0;
		}
		permute(r, dims, t, perm, od, tmp);
		memcpy(dims, od, sizeof(int64_t) * (size_t)r);
		memcpy(t, tmp, sizeof(double) * (size_t)om_shape_numel(r, dims));
	}
}

/* numpy matmul of logical operands (rank >= 2, or 1) in double; returns the output rank */
static int32_t ref_matmul(int32_t ra, const int64_t *da0, const double *a, int32_t rb,
			  const int64_t *db0, const double *b, double alpha, int64_t *dy, double *y)
{
	int64_t da[8], db[8];
	const int32_t r = ra > rb ? (ra > 2 ? ra : 2) : (rb > 2 ? rb : 2);
	/* promote 1-D, then pad the batch with 1s in front */
	for (int32_t d = 0; d < r; d++)
		da[d] = db[d] = 1;
	for (int32_t d = 0; d < ra; d++)
		da[r - (ra == 1 ? 1 : ra) + d] = da0[d];
	for (int32_t d = 0; d < rb; d++)
		db[r - (rb == 1 ? 2 : rb) + d] = db0[d];
	const int64_t M = da[r - 2], K = da[r - 1], N = db[r - 1];
	int64_t bd[8], nb = 1;
	for (int32_t d = 0; d < r - 2; d++)
		bd[d] = da[d] > db[d] ? da[d] : db[d], nb *= bd[d];
	for (int64_t bi = 0; bi < nb; bi++) {
		int64_t rem = bi, ao = 0, bo = 0, sa = M * K, sb = K * N;
		for (int32_t d = r - 3; d >= 0; d--) {
			const int64_t i = rem % bd[d];
			rem /= bd[d];
			ao += (da[d] == 1 ? 0 : i) * sa, bo += (db[d] == 1 ? 0 : i) * sb;
			sa *= da[d], sb *= db[d];
		}
		for (int64_t i = 0; i < M; i++)
			for (int64_t j = 0; j < N; j++) {
				double acc = 0;
				for (int64_t k = 0; k < K; k++)
					acc += a[ao + i * K + k] * b[bo + k * N + j];
				y[(bi * M + i) * N + j] = alpha * acc;
			}
	}
	int32_t ry = 0;
	for (int32_t d = 0; d < r - 2; d++)
		dy[ry++] = bd[d];
	if (ra > 1)
		dy[ry++] = M;
	if (rb > 1)
		dy[ry++] = N;
	return ry;
}

typedef struct fmm_attrs {
	float alpha;
	int ta, tb, tba, tbb;
} fmm_attrs;

static om_node *fmm_node(om_model **m, const fmm_attrs *at)
{
	om_node *n = nt_node(m, "FusedMatMul", 2, 1);
	n->domain = "com.microsoft";
	nt_float(n, "alpha", at->alpha);
	nt_int(n, "transA", at->ta);
	nt_int(n, "transB", at->tb);
	nt_int(n, "transBatchA", at->tba);
	nt_int(n, "transBatchB", at->tbb);
	return n;
}

/* float A [da] x B [db] against the double reference, in fast and exact mode */
static void fmm_case(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db, fmm_attrs at)
{
	static float a[4096], b[4096];
	static double ad[4096], bd[4096], want[4096];
	const int64_t na = om_shape_numel(ra, da), nb = om_shape_numel(rb, db);
	uint32_t s = (uint32_t)(na * 31 + nb);
	for (int64_t i = 0; i < na; i++)
		ad[i] = a[i] = gen(&s);
	for (int64_t i = 0; i < nb; i++)
		bd[i] = b[i] = gen(&s);
	int64_t la[8], lb[8], dy[8];
	memcpy(la, da, sizeof(int64_t) * (size_t)ra);
	memcpy(lb, db, sizeof(int64_t) * (size_t)rb);
	logical(ra, la, ad, at.ta, at.tba);
	logical(rb, lb, bd, at.tb, at.tbb);
	const int32_t ry = ref_matmul(ra, la, ad, rb, lb, bd, at.alpha, dy, want);
	om_model *m;
	om_node *n = fmm_node(&m, &at);
	om_tensor ta = nt_tensor(OM_FLOAT, ra, da, a), tb = nt_tensor(OM_FLOAT, rb, db, b);
	const om_tensor *in[] = {&ta, &tb};
	const om_op *op = om_op_find("com.microsoft", "FusedMatMul", 1);
	assert_non_null(op);
	for (int exact = 0; exact < 2; exact++) {
		om_tensor y;
		om_status st = {0};
		om_tensor *outs[] = {&y};
		om_ctx c = {.node = n, .op = op, .opset = 1, .nin = 2, .nout = 1, .in = in,
			    .out = outs, .st = &st, .exact = exact, .threads = 1};
		if (op->infer(&c))
			fail_msg("%s (%lld, %lld)", st.msg, (long long)na, (long long)nb);
		assert_int_equal(y.rank, ry);
		for (int32_t d = 0; d < ry; d++)
			assert_int_equal(y.dims[d], dy[d]);
		assert_int_equal(om_tensor_alloc(&y, OM_FLOAT, ry, dy, &st), OM_OK);
		memset(y.data, 0xff, y.nbytes);
		assert_int_equal(op->kernel(&c), OM_OK);
		const float *yy = y.data;
		for (int64_t i = 0; i < om_tensor_numel(&y); i++)
			assert_true(fabs(yy[i] - want[i]) < 1e-5 * (1 + fabs(want[i])));
		om_tensor_free(&y);
	}
	om_model_free(m);
}

#define FMM(alpha, ta, tb, tba, tbb) ((fmm_attrs){alpha, ta, tb, tba, tbb})
#define D(...) (int64_t[]){__VA_ARGS__}

/* the forms ONNX Runtime 1.30 accepts, the results checked there too */
static void fused_matmul_forms(void **state)
{
	(void)state;
	fmm_case(4, D(2, 3, 4, 5), 4, D(2, 3, 5, 6), FMM(0.5f, 0, 0, 0, 0));
	fmm_case(4, D(2, 3, 4, 5), 4, D(2, 3, 6, 5), FMM(1, 0, 1, 0, 0));
	fmm_case(4, D(2, 3, 5, 4), 4, D(2, 3, 5, 6), FMM(1, 1, 0, 0, 0));
	fmm_case(4, D(2, 3, 5, 4), 4, D(2, 3, 6, 5), FMM(-2, 1, 1, 0, 0));
	fmm_case(4, D(4, 2, 3, 5), 4, D(2, 3, 5, 6), FMM(1, 0, 0, 1, 0));
	fmm_case(4, D(4, 2, 3, 5), 4, D(2, 3, 6, 5), FMM(1, 0, 1, 1, 0));
	fmm_case(4, D(2, 3, 4, 5), 4, D(5, 2, 3, 6), FMM(1, 0, 0, 0, 1));
	fmm_case(4, D(2, 3, 4, 6), 4, D(5, 2, 3, 6), FMM(1, 0, 1, 0, 1));
	fmm_case(3, D(5, 3, 4), 3, D(6, 3, 5), FMM(0.25f, 1, 1, 1, 1));
	/* batch broadcast after transBatch; 1-sized dims */
	fmm_case(3, D(4, 1, 5), 3, D(1, 5, 6), FMM(1, 0, 0, 1, 0));
	fmm_case(3, D(4, 2, 5), 3, D(1, 5, 6), FMM(1, 0, 0, 1, 0));
	fmm_case(4, D(1, 3, 5, 1), 4, D(2, 1, 6, 5), FMM(1, 1, 1, 0, 0));
	fmm_case(3, D(1, 1, 5), 2, D(7, 5), FMM(1, 0, 1, 0, 0));
	/* 1-D operands: trans is ignored */
	fmm_case(3, D(2, 3, 5), 1, D(5), FMM(1, 0, 1, 0, 0));
	fmm_case(1, D(5), 3, D(2, 6, 5), FMM(1, 0, 1, 0, 0));
	fmm_case(1, D(5), 3, D(2, 5, 6), FMM(1, 1, 0, 0, 0));
	fmm_case(1, D(5), 1, D(5), FMM(3, 1, 1, 0, 0));
	/* empty: no rows; K = 0 gives zeros */
	fmm_case(3, D(2, 0, 5), 3, D(2, 5, 6), FMM(1, 0, 0, 0, 0));
	fmm_case(3, D(2, 0, 3), 3, D(2, 0, 6), FMM(3, 1, 0, 0, 0));
	fmm_case(4, D(0, 2, 3, 5), 4, D(2, 3, 5, 6), FMM(1, 0, 0, 1, 0));
	fmm_case(3, D(4, 0, 5), 3, D(4, 0, 5), FMM(1, 0, 1, 1, 1));
	fmm_case(3, D(4, 3, 0), 3, D(0, 3, 5), FMM(2, 0, 0, 1, 1));
	/* the attention products: Q K^T with K [2, 4, 16, 32], and [16, 16] x [16, 32] heads */
	fmm_case(4, D(2, 4, 16, 32), 4, D(2, 4, 16, 32), FMM(0.17677669f, 0, 1, 0, 0));
	fmm_case(4, D(2, 4, 16, 16), 4, D(2, 4, 16, 32), FMM(1, 0, 0, 0, 0));
}

static void fused_matmul_errors(void **state)
{
	(void)state;
	static const float f[64];
	struct {
		int32_t ra, rb;
		int64_t da[4], db[4];
		fmm_attrs at;
	} bad[] = {
		{3, 2, {4, 3, 5}, {5, 6}, FMM(1, 0, 0, 1, 0)},       /* transBatch: ranks differ */
		{2, 2, {3, 5}, {5, 6}, FMM(1, 0, 0, 0, 1)},          /* transBatch: rank 2 */
		{3, 3, {4, 3, 5}, {6, 3, 5}, FMM(1, 0, 0, 1, 1)},    /* 5 vs 6 after transBatch */
		{3, 3, {3, 4, 5}, {3, 5, 6}, FMM(1, 0, 0, 1, 1)},    /* batch 4 vs 5 */
		{2, 2, {3, 5}, {5, 6}, FMM(1, 1, 0, 0, 0)},          /* transA: 3 vs 5 */
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		om_model *m;
		om_node *n = fmm_node(&m, &bad[i].at);
		om_tensor ta = nt_tensor(OM_FLOAT, bad[i].ra, bad[i].da, f);
		om_tensor tb = nt_tensor(OM_FLOAT, bad[i].rb, bad[i].db, f);
		const om_tensor *in[] = {&ta, &tb};
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 1, in, out, &st), OM_ERR_INVALID_MODEL);
		assert_string_equal(st.node, "n0");
		om_model_free(m);
	}
	/* integers are MatMul's, not FusedMatMul's */
	om_model *m;
	om_node *n = fmm_node(&m, &FMM(1, 0, 0, 0, 0));
	const int32_t ia[] = {1, 2};
	om_tensor ta = nt_tensor(OM_INT32, 2, D(1, 2), ia);
	om_tensor tb = nt_tensor(OM_INT32, 2, D(2, 1), ia);
	const om_tensor *in[] = {&ta, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 1, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* exact mode: a transpose folded into the strides, or a power-of-two alpha, gives the bits of
 * MatMul on the materialized operand (then scaled): the fixed order does not see layouts */
static void fused_matmul_exact_bits(void **state)
{
	(void)state;
	enum { B = 2, M = 13, K = 70, N = 19 };
	static float a[B * M * K], b[B * K * N], bt[B * N * K];
	uint32_t s = 5;
	for (int i = 0; i < B * M * K; i++)
		a[i] = gen(&s) * 1.7f;
	for (int p = 0; p < B; p++)
		for (int k = 0; k < K; k++)
			for (int j = 0; j < N; j++)
				bt[(p * N + j) * K + k] = b[(p * K + k) * N + j] = gen(&s) * 0.3f;
	om_model *m1, *m2;
	om_node *mm = nt_node(&m1, "MatMul", 2, 1);
	om_node *fm = fmm_node(&m2, &FMM(0.125f, 0, 1, 0, 0));
	om_tensor ta = nt_tensor(OM_FLOAT, 3, D(B, M, K), a);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, D(B, K, N), b);
	om_tensor tbt = nt_tensor(OM_FLOAT, 3, D(B, N, K), bt);
	om_status st = {0};
	om_tensor y1, y2;
	for (int i = 0; i < 2; i++)
		assert_int_equal(om_tensor_alloc(i ? &y2 : &y1, OM_FLOAT, 3, D(B, M, N), &st),
				 OM_OK);
	matmul_direct(mm, &ta, &tb, &y1, 1, 1);
	const om_op *op = om_op_find("com.microsoft", "FusedMatMul", 1);
	const om_tensor *in[] = {&ta, &tbt};
	om_tensor *outs[] = {&y2};
	om_ctx c = {.node = fm, .op = op, .opset = 1, .nin = 2, .nout = 1, .in = in,
		    .out = outs, .st = &st, .exact = 1, .threads = 1};
	assert_int_equal(op->kernel(&c), OM_OK);
	float *p1 = y1.data;
	for (int i = 0; i < B * M * N; i++)
		p1[i] *= 0.125f;
	assert_memory_equal(y1.data, y2.data, y1.nbytes);
	om_tensor_free(&y1), om_tensor_free(&y2);
	om_model_free(m1), om_model_free(m2);
}

/* float16 and double go through the same strides */
static void fused_matmul_types(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = fmm_node(&m, &FMM(2, 1, 0, 0, 0));
	/* A^T = [[1, 2]] from A [2, 1]; B [2, 1] = [[3], [-4]]: 2 * (3 - 8) = -10 */
	const uint16_t ha[] = {om_float_to_half(1), om_float_to_half(2)};
	const uint16_t hb[] = {om_float_to_half(3), om_float_to_half(-4)};
	om_tensor ta = nt_tensor(OM_FLOAT16, 2, D(2, 1), ha);
	om_tensor tb = nt_tensor(OM_FLOAT16, 2, D(2, 1), hb);
	const om_tensor *in[] = {&ta, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	assert_true(om_half_to_float(((uint16_t *)out[0].data)[0]) == -10.0f);
	om_tensor_free(&out[0]);
	const double da[] = {1, 2}, db[] = {3, -4};
	ta = nt_tensor(OM_DOUBLE, 2, D(2, 1), da), tb = nt_tensor(OM_DOUBLE, 2, D(2, 1), db);
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	assert_true(((double *)out[0].data)[0] == -10.0);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* ---- Gemm -------------------------------------------------------------------------------- */

/* A = [[1,2,3],[4,5,6]] (2x3), B = [[1,0],[0,1],[1,1]] (3x2): A B = [[4,5],[10,11]] */
static const float ga[] = {1, 2, 3, 4, 5, 6}, gat[] = {1, 4, 2, 5, 3, 6};
static const float gb[] = {1, 0, 0, 1, 1, 1}, gbt[] = {1, 0, 1, 0, 1, 1};

static void gemm_case(int ta, int tb, float alpha, float beta, int32_t rc, const int64_t *dc,
		      const float *cv, om_kind want_rc, const float *want)
{
	om_model *m;
	om_node *n = nt_node(&m, "Gemm", cv ? 3 : 2, 1);
	nt_int(n, "transA", ta);
	nt_int(n, "transB", tb);
	nt_float(n, "alpha", alpha);
	nt_float(n, "beta", beta);
	om_tensor a = nt_tensor(OM_FLOAT, 2, ta ? (int64_t[]){3, 2} : (int64_t[]){2, 3},
				ta ? gat : ga);
	om_tensor b = nt_tensor(OM_FLOAT, 2, tb ? (int64_t[]){2, 3} : (int64_t[]){3, 2},
				tb ? gbt : gb);
	om_tensor c = nt_tensor(OM_FLOAT, rc, dc, cv);
	const om_tensor *in[] = {&a, &b, &c};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), want_rc);
	if (!want_rc) {
		nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, want, 1e-6);
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

static void gemm_forms(void **state)
{
	(void)state;
	gemm_case(0, 0, 1, 1, 0, NULL, NULL, OM_OK, (float[]){4, 5, 10, 11});
	gemm_case(1, 0, 1, 1, 0, NULL, NULL, OM_OK, (float[]){4, 5, 10, 11});
	gemm_case(0, 1, 1, 1, 0, NULL, NULL, OM_OK, (float[]){4, 5, 10, 11});
	gemm_case(1, 1, 0.5f, 1, 0, NULL, NULL, OM_OK, (float[]){2, 2.5f, 5, 5.5f});
	/* C broadcasts: scalar, [N], [M, 1], [M, N] */
	gemm_case(0, 0, 1, 2, 0, NULL, (float[]){1}, OM_OK, (float[]){6, 7, 12, 13});
	gemm_case(0, 0, 1, 1, 1, (int64_t[]){2}, (float[]){1, -1}, OM_OK,
		  (float[]){5, 4, 11, 10});
	gemm_case(0, 0, 2, -1, 2, (int64_t[]){2, 1}, (float[]){1, -1}, OM_OK,
		  (float[]){7, 9, 21, 23});
	gemm_case(0, 0, 1, 0.5f, 2, (int64_t[]){2, 2}, (float[]){2, 4, 6, 8}, OM_OK,
		  (float[]){5, 7, 13, 15});
	/* beta 0 ignores C, even NaN */
	gemm_case(0, 0, 1, 0, 1, (int64_t[]){1}, (float[]){NAN}, OM_OK, (float[]){4, 5, 10, 11});
	/* C that does not broadcast */
	gemm_case(0, 0, 1, 1, 1, (int64_t[]){3}, (float[]){1, 2, 3}, OM_ERR_INVALID_MODEL, NULL);
	gemm_case(0, 0, 1, 1, 2, (int64_t[]){3, 2}, (float[]){1, 2, 3, 4, 5, 6},
		  OM_ERR_INVALID_MODEL, NULL);
}

static void gemm_types(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Gemm", 3, 1);
	om_tensor out[1];
	const double da[] = {1, 2}, db[] = {3, 4}, dc[] = {0.5};
	om_tensor a = nt_tensor(OM_DOUBLE, 2, (int64_t[]){1, 2}, da);
	om_tensor b = nt_tensor(OM_DOUBLE, 2, (int64_t[]){2, 1}, db);
	om_tensor c = nt_tensor(OM_DOUBLE, 1, (int64_t[]){1}, dc);
	const om_tensor *in[] = {&a, &b, &c};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_true(((double *)out[0].data)[0] == 11.5);
	om_tensor_free(&out[0]);
	const int64_t ia[] = {1, 2}, ib[] = {3, 4}, ic[] = {-20};
	a = nt_tensor(OM_INT64, 2, (int64_t[]){1, 2}, ia);
	b = nt_tensor(OM_INT64, 2, (int64_t[]){2, 1}, ib);
	c = nt_tensor(OM_INT64, 1, (int64_t[]){1}, ic);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(((int64_t *)out[0].data)[0], -9);
	om_tensor_free(&out[0]);
	const uint16_t ba[] = {om_float_to_bf16(2), om_float_to_bf16(3)};
	const uint16_t bb[] = {om_float_to_bf16(0.5f), om_float_to_bf16(1)};
	const uint16_t bc[] = {om_float_to_bf16(1)};
	a = nt_tensor(OM_BFLOAT16, 2, (int64_t[]){1, 2}, ba);
	b = nt_tensor(OM_BFLOAT16, 2, (int64_t[]){2, 1}, bb);
	c = nt_tensor(OM_BFLOAT16, 0, NULL, bc);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_true(om_bf16_to_float(((uint16_t *)out[0].data)[0]) == 5.0f);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sgemm_matches_reference),
		cmocka_unit_test(sgemm_beta_zero_ignores_c),
		cmocka_unit_test(sgemm_batch_matches_single),
		cmocka_unit_test(sgemm_exact_order),
		cmocka_unit_test(sgemm_exact_paths_agree),
		cmocka_unit_test(dgemm_matches),
		cmocka_unit_test(matmul_shapes),
		cmocka_unit_test(matmul_broadcast),
		cmocka_unit_test(matmul_types_and_errors),
		cmocka_unit_test(matmul_exact_mode),
		cmocka_unit_test(matmul_integer),
		cmocka_unit_test(fused_matmul_forms),
		cmocka_unit_test(fused_matmul_errors),
		cmocka_unit_test(fused_matmul_exact_bits),
		cmocka_unit_test(fused_matmul_types),
		cmocka_unit_test(det),
		cmocka_unit_test(gemm_forms),
		cmocka_unit_test(gemm_types),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
