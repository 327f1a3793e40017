/* test_gemm_packed.c — products over a constant B packed once (ops/gemm_packed.c): the packed
 * product itself against a naive one in double (transposed A and B, padded strides, alpha and
 * beta, several B matrices, odd sizes, K = 1, M = 1, one and two threads, a second call reusing
 * the state, another geometry remaking it), and MatMul, FusedMatMul and Gemm with initializer
 * weights in fast-mode sessions against exact mode (batch broadcasting on either side, rows
 * that change between runs). Without oneDNN in the build nothing is packed (checked) and the
 * sessions run om_sgemm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "bigbuf.h"
#include "gemm.h"
#include "gemm_packed.h"
#include "session.h"
#include "testutil.h"

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)(seed >> 8) % 20001) / 10000.0f;
	}
}

static float *vec(int64_t n, uint32_t seed)
{
	float *v = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	assert_non_null(v);
	fill(v, n, seed);
	return v;
}

/* |x - r| within float rounding of a K-term sum of terms up to `mag` */
static void near(double x, double r, int64_t K, double mag, const char *what, int64_t at)
{
	if (!(fabs(x - r) <= 1e-6 * (double)(K + 4) * (1 + mag)))
		fail_msg("%s [%lld]: %.9g against %.9g", what, (long long)at, x, r);
}

typedef struct pcase {
	int64_t M, K, N, count;
	bool ta, tb;
	float alpha, beta;
	int threads;
	bool pad; /* A's and C's rows longer than the matrices */
} pcase;

static const pcase pcases[] = {
	{32, 256, 128, 1, false, false, 1.0f, 0.0f, 2, false},
	{7, 129, 131, 1, false, true, 1.0f, 0.0f, 2, false},   /* odd sizes, B stored N x K */
	{1, 128, 160, 1, false, false, 1.0f, 0.0f, 2, false},  /* M = 1 */
	{9, 1, 16384, 1, false, false, 1.0f, 0.0f, 2, false},  /* K = 1 */
	{13, 200, 96, 3, true, false, 0.5f, 0.0f, 2, false},   /* A stored K x M, three Bs */
	{17, 150, 130, 2, true, true, -1.5f, 2.0f, 2, false},  /* beta: C read; two threads */
	{40, 300, 64, 1, false, true, 1.0f, 1.0f, 2, false},
	{32, 256, 128, 1, false, false, 1.0f, 0.0f, 2, true},  /* padded: taken or not */
	{13, 200, 96, 2, true, true, 2.0f, 0.5f, 2, true},
	{130, 96, 200, 2, false, true, 1.0f, 0.0f, 1, false}, /* one thread: 130 rows pack */
	/* from 3e6 multiply-adds at 2+ threads: rows split over the pool, a shorter last piece */
	{131, 300, 257, 2, false, true, 1.0f, 0.0f, 2, false},
	{97, 200, 300, 1, true, false, 0.5f, 1.5f, 3, false},
	{101, 256, 160, 1, false, false, 1.0f, 0.0f, 2, true},
};

/* op(A) op(B_i) in double */
static double ref(const pcase *k, const float *A, int64_t lda, const float *B, int64_t ldb,
		  int64_t i, int64_t j, double *mag)
{
	double s = 0, m = 0;
	for (int64_t t = 0; t < k->K; t++) {
		const double p = (double)(k->ta ? A[t * lda + i] : A[i * lda + t]) *
				 (double)(k->tb ? B[j * ldb + t] : B[t * ldb + j]);
		s += p;
		m = fmax(m, fabs(p));
	}
	*mag = m;
	return s;
}

/* om_sgemv_fast against the double reference: B stored N x K and K x N, K a multiple of the
 * 64 partial sums and not, odd N, a strided a, alpha and beta, one and two threads; a K x N B
 * with beta is not taken */
static void gemv_against_naive(void **state)
{
	(void)state;
	static const struct {
		int64_t N, K, inca;
		bool tb;
		float alpha, beta;
		int threads;
	} cases[] = {
		{1000, 1280, 1, true, 1.0f, 1.0f, 2}, {7, 1283, 1, true, -0.5f, 0.0f, 1},
		{1, 64, 3, true, 2.0f, 1.5f, 2},      {257, 300, 1, false, 1.0f, 0.0f, 2},
		{33, 5, 2, false, -1.0f, 0.0f, 1},    {129, 1000, 1, true, 1.0f, 0.0f, 2},
	};
	for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
		const int64_t N = cases[t].N, K = cases[t].K, inca = cases[t].inca;
		const bool tb = cases[t].tb;
		float *a = vec(K * inca, 5), *B = vec(N * K, 7), *y = vec(N, 11), *y0 = vec(N, 11);
		float *buf = malloc(sizeof(float) * (size_t)K);
		assert_true(om_sgemv_fast(cases[t].threads, tb, N, K, cases[t].alpha, a, inca, B,
					  tb ? K : N, cases[t].beta, y, buf));
		for (int64_t j = 0; j < N; j++) {
			double s = 0, mag = 0;
			for (int64_t k = 0; k < K; k++) {
				const double p = (double)a[k * inca] * (double)(tb ? B[j * K + k]
										  : B[k * N + j]);
				s += p;
				mag = fmax(mag, fabs(p));
			}
			const double r = cases[t].alpha * s + cases[t].beta * (double)y0[j];
			near(y[j], r, K, mag * 2 + fabs(y0[j]), "gemv", j);
		}
		assert_false(om_sgemv_fast(1, false, N, K, 1.0f, a, 1, B, N, 1.0f, y, buf));
		free(a), free(B), free(y), free(y0), free(buf);
	}
}

static void packed_against_naive(void **state)
{
	(void)state;
	for (size_t e = 0; e < sizeof pcases / sizeof *pcases; e++) {
		const pcase *k = &pcases[e];
		/* B's rows are longer than its matrix, and so are A's and C's when padded; B's
		 * matrices are apart */
		const int64_t lda = (k->ta ? k->M : k->K) + (k->pad ? 3 : 0);
		const int64_t ldb = (k->tb ? k->K : k->N) + 5, ldc = k->N + (k->pad ? 2 : 0);
		const int64_t bstride = (k->tb ? k->N : k->K) * ldb + 7;
		float *A = vec((k->ta ? k->K : k->M) * lda, 1 + (uint32_t)e);
		float *B = vec(k->count * bstride, 100 + (uint32_t)e);
		float *C0 = vec(k->M * ldc, 200 + (uint32_t)e), *C = vec(k->M * ldc, 0);
		void *slot = NULL;
		void (*release)(void *) = NULL;
		om_status st = {0};
		om_ctx c = {.st = &st, .threads = k->threads, .state = &slot,
			    .state_release = &release, .const_in = 2};
		const om_gemm_b b = {k->tb, k->count, k->K, k->N, ldb, bstride, B};
		/* taken as the plan was told; packed wherever oneDNN 2.6 blocks B (AVX-512) or
		 * omopt's panels take it (AVX2 and FMA) */
		const bool takes = om_gemm_packed_takes(&c, 1, &b, k->M);
		om_gemm_packed *p = om_gemm_packed_get(&c, 1, &b, k->M);
		assert_int_equal(p != NULL, takes);
#ifdef OM_HAVE_DNNL
		if (__builtin_cpu_supports("avx512f") ||
		    (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")))
			assert_true(takes);
#else
		assert_false(takes);
#endif
		for (int call = 0; p && call < 2; call++) /* the second call reuses the state */
			for (int64_t bi = 0; bi < k->count; bi++) {
				memcpy(C, C0, sizeof(float) * (size_t)(k->M * ldc));
				if (k->beta == 0) /* C is not read */
					for (int64_t i = 0; i < k->M * ldc; i++)
						C[i] = NAN;
				om_kind rc = OM_ERR_INTERNAL;
				if (!om_gemm_packed_mul(&c, p, bi, k->ta, k->M, k->alpha, A, lda,
							k->beta, C, ldc, &rc)) {
					/* oneDNN 2.6 keeps B plain for strided A or C: not
					 * taken, and nothing written */
					assert_true(k->pad);
					for (int64_t i = 0; i < k->M * ldc; i++)
						assert_true(k->beta == 0 ? isnan(C[i])
									 : C[i] == C0[i]);
					continue;
				}
				assert_int_equal(rc, OM_OK);
				for (int64_t i = 0; i < k->M; i++)
					for (int64_t j = 0; j < k->N; j++) {
						double mag;
						const double r =
							k->alpha * ref(k, A, lda, B + bi * bstride,
								       ldb, i, j, &mag) +
							(k->beta != 0 ? k->beta * C0[i * ldc + j] : 0);
						near(C[i * ldc + j], r, k->K, mag * fabs(k->alpha),
						     "packed", (int64_t)e * 1000000 + i * k->N + j);
					}
				if (p && om_gemm_packed_get(&c, 1, &b, k->M) != p)
					fail_msg("case %zu: the state was not reused", e);
			}
		/* another geometry remakes the block (B read as N x K); B too small, or not a
		 * constant, or exact mode: not taken */
		const om_gemm_b other = {false, 1, k->N, k->K, k->K, 0, B};
		om_gemm_packed *q = om_gemm_packed_get(&c, 1, &other, k->M);
		if (takes)
			assert_ptr_equal(q, slot);
		else
			assert_null(q);
		const om_gemm_b small = {false, 1, 64, 64, 64, 0, B};
		assert_null(om_gemm_packed_get(&c, 1, &small, k->M));
		c.const_in = 1;
		assert_null(om_gemm_packed_get(&c, 1, &b, k->M));
		/* one thread: one row is never packed; 2 rows are when B is small (this B) or its
		 * pages can be given back (only a session's run knows: not here), and a B over
		 * 16 MiB is from OM_GEMM_PACKED_ROWS_1T rows on (its data is not read) */
		c.const_in = 2, c.threads = 1;
		assert_null(om_gemm_packed_get(&c, 1, &b, 1));
		const om_gemm_b big = {false, 1, 2048, 2049, 2049, 0, NULL};
		assert_false(om_gemm_packed_takes(&c, 1, &big, OM_GEMM_PACKED_ROWS_1T - 1));
		if (takes) {
			assert_non_null(om_gemm_packed_get(&c, 1, &b, 2));
			assert_true(om_gemm_packed_takes(&c, 1, &big, OM_GEMM_PACKED_ROWS_1T));
		}
		c.threads = 2, c.exact = 1;
		assert_null(om_gemm_packed_get(&c, 1, &b, k->M));
		if (slot && release)
			release(slot);
		free(slot);
		free(A), free(B), free(C0), free(C);
	}
}

/* ---- in sessions -------------------------------------------------------------------------- */

typedef struct scase {
	const char *op;
	int32_t ra, rb;
	int64_t adims[4], bdims[4];
	int64_t trans_a, trans_b; /* FusedMatMul's and Gemm's */
	float alpha, beta;
	bool bias; /* Gemm's C, [N] */
	int threads;
} scase;

static const scase scases[] = {
	/* A [2, 3, M, K] x B [K, N]: the batches fold into rows */
	{"MatMul", 4, 2, {2, 3, 5, 160}, {160, 130}, 0, 0, 1, 0, false, 1},
	/* A [M, K] x B [3, K, N]: A broadcast over B's matrices */
	{"MatMul", 2, 3, {7, 129}, {3, 129, 131}, 0, 0, 1, 0, false, 1},
	/* A [2, 1, M, K] x B [1, 3, K, N] */
	{"MatMul", 4, 4, {2, 1, 4, 128}, {1, 3, 128, 144}, 0, 0, 1, 0, false, 2},
	/* K = 1; M = 1 */
	{"MatMul", 3, 2, {2, 9, 1}, {1, 16384}, 0, 0, 1, 0, false, 1},
	{"MatMul", 2, 2, {1, 256}, {256, 100}, 0, 0, 1, 0, false, 1},
	/* FusedMatMul: transposes and alpha */
	{"FusedMatMul", 3, 2, {2, 6, 200}, {96, 200}, 0, 1, 0.25f, 0, false, 1},
	{"FusedMatMul", 2, 2, {150, 11}, {150, 130}, 1, 0, -2.0f, 0, false, 2},
	/* Gemm: transB with a bias, and transA with alpha and beta */
	{"Gemm", 2, 2, {8, 300}, {120, 300}, 0, 1, 1.0f, 1.0f, true, 1},
	{"Gemm", 2, 2, {200, 9}, {200, 100}, 1, 0, 0.5f, -1.5f, true, 2},
	{"Gemm", 2, 2, {3, 128}, {128, 256}, 0, 0, 1.0f, 0.0f, false, 1},
	/* Gemm of one row (om_sgemv_fast): a classifier with a bias, and a transposed A */
	{"Gemm", 2, 2, {1, 1280}, {1000, 1280}, 0, 1, 1.0f, 1.0f, true, 2},
	{"Gemm", 2, 2, {300, 1}, {300, 257}, 1, 0, -0.5f, 0.0f, false, 1},
};

/* A's first dim changes between runs (the symbol N) unless it is Gemm's or a transposed A's K */
static bool rows_vary(const scase *k)
{
	return strcmp(k->op, "Gemm") && (k->ra > 2 || !k->trans_a);
}

/* A's dims in a run: the first dim (rows or a batch dim) grows in the third */
static void run_dims(const scase *k, int r, int64_t *d)
{
	memcpy(d, k->adims, sizeof k->adims);
	if (r == 2 && rows_vary(k)) /* a third run: another batch (or more rows) */
		d[0] += 1;
}

static om_model *scase_model(const scase *k, int64_t N)
{
	om_model *m = tu_model_ms(13);
	om_graph *g = m->graph;
	int64_t ad[4];
	memcpy(ad, k->adims, sizeof ad);
	if (rows_vary(k))
		ad[0] = -1; /* the symbol N: runs of other sizes */
	tu_push_value(g, &g->inputs, &g->ninputs, tu_typed_value(g, "a", OM_FLOAT, k->ra, ad));
	g->inputs[0]->flags |= OM_VALUE_GRAPH_INPUT;
	om_value *b = om_graph_value(g, "b");
	b->init = om_model_tensor(m, OM_FLOAT, k->rb, k->bdims);
	fill(b->init->data, om_tensor_numel(b->init), 17);
	b->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &b->type, b->init);
	tu_push_value(g, &g->inits, &g->ninits, b);
	if (k->bias) {
		om_value *cv = om_graph_value(g, "c");
		cv->init = om_model_tensor(m, OM_FLOAT, 1, (int64_t[]){N});
		fill(cv->init->data, N, 23);
		cv->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &cv->type, cv->init);
		tu_push_value(g, &g->inits, &g->ninits, cv);
	}
	om_node *n = tu_graph_node(g, k->op, k->bias ? "a,b,c" : "a,b", "y");
	if (!strcmp(k->op, "FusedMatMul")) {
		n->domain = "com.microsoft";
		om_node_set_attr(n, "alpha", OM_ATTR_FLOAT)->f = k->alpha;
	}
	if (strcmp(k->op, "MatMul")) {
		om_node_set_attr(n, "transA", OM_ATTR_INT)->i = k->trans_a;
		om_node_set_attr(n, "transB", OM_ATTR_INT)->i = k->trans_b;
	}
	if (!strcmp(k->op, "Gemm")) {
		om_node_set_attr(n, "alpha", OM_ATTR_FLOAT)->f = k->alpha;
		om_node_set_attr(n, "beta", OM_ATTR_FLOAT)->f = k->beta;
	}
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

static void run(om_session *s, const scase *k, int r, om_tensor *out)
{
	int64_t d[4];
	run_dims(k, r, d);
	om_tensor in = {0};
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, k->ra, d, &st), OM_OK);
	fill(in.data, om_tensor_numel(&in), 3 + (uint32_t)r);
	if (om_session_run(s, &in, 1, out, 1, &st))
		fail_msg("%s: %s", k->op, st.msg);
	om_tensor_free(&in);
}

static void sessions_against_exact(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof scases / sizeof *scases; i++) {
		const scase *k = &scases[i];
		const int64_t N = k->bdims[k->rb - 1 - (k->trans_b ? 1 : 0)];
		om_model *m = scase_model(k, N);
		om_session *fast = NULL, *exact = NULL;
		om_status st = {0};
		const om_session_options fo = {.threads = k->threads}, eo = {.exact = 1};
		if (om_session_create(m, &fo, &fast, &st) || om_session_create(m, &eo, &exact, &st))
			fail_msg("case %zu: %s", i, st.msg);
		const int64_t K = k->ra == 1 ? k->adims[0]
				  : k->adims[k->ra - 1 - (k->trans_a ? 1 : 0)];
		for (int r = 0; r < 3; r++) {
			om_tensor a = {0}, b = {0};
			run(fast, k, r, &a);
			run(exact, k, r, &b);
			assert_int_equal(a.rank, b.rank);
			assert_int_equal(a.nbytes, b.nbytes);
			const float *x = a.data, *y = b.data;
			for (int64_t j = 0; j < om_tensor_numel(&b); j++)
				near(x[j], y[j], K, 4 * fabs(y[j]) + 8, k->op,
				     (int64_t)i * 1000000 + j);
			om_tensor_free(&a);
			om_tensor_free(&b);
		}
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* ---- the packed B's memory (num/bigbuf.c) ------------------------------------------------ */

/* zeroed, writable to its last byte, 4 KB aligned; from 2 MB on aligned to 2 MB (whole huge
 * pages possible) at sizes that round up to whole huge pages and not */
static void bigbuf_zeroed_aligned(void **state)
{
	(void)state;
	const size_t sizes[] = {1, 4095, 4097, 100000, (size_t)2 << 20, ((size_t)7 << 20) + 12345,
				((size_t)2 << 20) + 4096};
	assert_null(om_bigbuf_alloc(0));
	assert_null(om_bigbuf_alloc(SIZE_MAX));
	om_bigbuf_free(NULL, 10);
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		unsigned char *p = om_bigbuf_alloc(sizes[i]);
		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 4096, 0);
		if (sizes[i] >= ((size_t)2 << 20))
			assert_int_equal((uintptr_t)p % ((size_t)2 << 20), 0);
		for (size_t k = 0; k < sizes[i]; k += 511)
			assert_int_equal(p[k], 0);
		assert_int_equal(p[sizes[i] - 1], 0);
		memset(p, 0xab, sizes[i]);
		assert_int_equal(p[sizes[i] - 1], 0xab);
		om_bigbuf_free(p, sizes[i]);
	}
}

/* om_malloc_touched: writable to its last byte at every size; from 32 KB its whole pages are
 * resident as it returns (mincore), on Linux with MADV_POPULATE_WRITE. 40 MB is above glibc's
 * largest mmap threshold, so that the block is a fresh mapping, not resident before. */
static void malloc_touched_resident(void **state)
{
	(void)state;
	const size_t sizes[] = {1, 4095, (size_t)40 << 10, (size_t)300 << 10, (size_t)40 << 20};
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
		unsigned char *p = om_malloc_touched(sizes[i]);
		assert_non_null(p);
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
		if (sizes[i] >= ((size_t)32 << 10)) {
			const uintptr_t lo = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
			const uintptr_t hi = ((uintptr_t)p + sizes[i]) & ~(uintptr_t)4095;
			const size_t pages = (hi - lo) / 4096;
			unsigned char *vec = malloc(pages);
			assert_non_null(vec);
			assert_int_equal(mincore((void *)lo, hi - lo, vec), 0);
			size_t resident = 0;
			for (size_t k = 0; k < pages; k++)
				resident += vec[k] & 1;
			free(vec);
			assert_int_equal(resident, pages);
		}
#endif
		memset(p, 0xcd, sizes[i]);
		assert_int_equal(p[sizes[i] - 1], 0xcd);
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(bigbuf_zeroed_aligned),
					   cmocka_unit_test(malloc_touched_resident),
					   cmocka_unit_test(gemv_against_naive),
					   cmocka_unit_test(packed_against_naive),
					   cmocka_unit_test(sessions_against_exact)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
