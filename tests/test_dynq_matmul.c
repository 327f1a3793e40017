/* test_dynq_matmul.c — com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul against a
 * reference computed here (int64 sums of the zero-point-shifted operands, then
 * float(acc) * (as * bs[j]) [+ bias[j]], A quantized by the DynamicQuantizeLinear formula):
 * the same bits in exact and fast mode, 1 and 2 threads, with B packed (a constant int8 B of
 * zero point 0 with a state slot) and not, over per-tensor and per-column scales and zero
 * points, int8 and uint8 A and B, A of rank 1 to 3, edge sizes (K or N of 1, M of 0, K and
 * N off multiples of 16 and 64); and the shapes and types it refuses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nodetest.h"

typedef struct qcase {
	bool dynamic;              /* DynamicQuantizeMatMul (A float) */
	int32_t adt, bdt;          /* 8-bit types (adt unused when dynamic) */
	int32_t rank;              /* A's rank, 1..3 */
	int64_t batch, M, K, N;    /* A [batch, M, K] (rank 3), [M, K] (2) or [K] (1, M = 1) */
	bool per_col, azp, bzp, bias;
} qcase;

static float frand(nt_rng *r)
{
	return (float)nt_rand(r, -4096, 4096) / 1024.0f;
}

static int32_t at8(int32_t dt, const void *p, int64_t i)
{
	return dt == OM_INT8 ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static void fill8(nt_rng *r, int32_t dt, void *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		const int64_t v = dt == OM_INT8 ? nt_rand(r, -128, 127) : nt_rand(r, 0, 255);
		if (dt == OM_INT8)
			((int8_t *)p)[i] = (int8_t)v;
		else
			((uint8_t *)p)[i] = (uint8_t)v;
	}
}

/* DynamicQuantizeLinear of x as its definition says it */
static void ref_quantize(const float *x, int64_t n, uint8_t *q, float *scale, int32_t *zp)
{
	float lo = 0, hi = 0;
	for (int64_t i = 0; i < n; i++) {
		lo = x[i] < lo ? x[i] : lo;
		hi = x[i] > hi ? x[i] : hi;
	}
	*scale = (hi - lo) / 255.0f;
	*zp = 0;
	if (!(*scale > 0)) {
		memset(q, 0, (size_t)n);
		return;
	}
	float z = rintf(0 - lo / *scale);
	*zp = (int32_t)(z < 0 ? 0 : z > 255 ? 255 : z);
	for (int64_t i = 0; i < n; i++) {
		float v = rintf(x[i] / *scale) + (float)*zp;
		q[i] = (uint8_t)(v != v ? 0 : v < 0 ? 0 : v > 255 ? 255 : v);
	}
}

/* y[m][j] from A's bytes (adt), B, the parameters */
static void reference(const qcase *k, int64_t rows, const void *a, int32_t adt, float as,
		      int32_t za, const void *b, const float *bs, const void *bz, const float *bias,
		      float *y)
{
	const int64_t K = k->K, N = k->N;
	for (int64_t i = 0; i < rows; i++)
		for (int64_t j = 0; j < N; j++) {
			const int64_t c = k->per_col ? j : 0;
			const int32_t zb = k->bzp ? at8(k->bdt, bz, c) : 0;
			int64_t acc = 0;
			for (int64_t t = 0; t < K; t++)
				acc += (int64_t)(at8(adt, a, i * K + t) - za) *
				       (at8(k->bdt, b, t * N + j) - zb);
			const float s = as * bs[c];
			float v = (float)(int32_t)acc * s;
			if (bias) {
				volatile float p = v; /* two roundings, as the unfused nodes */
				v = p + bias[j];
			}
			y[i * N + j] = v;
		}
}

static void run_case(const qcase *k, uint64_t seed)
{
	nt_rng r = {seed};
	const int64_t rows = k->rank == 3 ? k->batch * k->M : k->rank == 2 ? k->M : 1;
	const int64_t K = k->K, N = k->N, nc = k->per_col ? N : 1;
	float *af = malloc(sizeof(float) * (size_t)(rows * K + 1));
	uint8_t *a8 = malloc((size_t)(rows * K + 1)), *b8 = malloc((size_t)(K * N + 1));
	float *bs = malloc(sizeof(float) * (size_t)nc), *bias = malloc(sizeof(float) * (size_t)N);
	uint8_t bz[4096], az[1];
	float *want = malloc(sizeof(float) * (size_t)(rows * N + 1));
	for (int64_t i = 0; i < rows * K; i++)
		af[i] = frand(&r);
	fill8(&r, k->adt, a8, rows * K);
	fill8(&r, k->bdt, b8, K * N);
	fill8(&r, k->bdt, bz, nc);
	fill8(&r, k->adt, az, 1);
	for (int64_t j = 0; j < nc; j++)
		bs[j] = (float)nt_rand(&r, 1, 1000) / 65536.0f;
	for (int64_t j = 0; j < N; j++)
		bias[j] = frand(&r);
	float as = (float)nt_rand(&r, 1, 1000) / 4096.0f;
	int32_t za = k->azp ? at8(k->adt, az, 0) : 0;
	uint8_t *aq = malloc((size_t)(rows * K + 1));
	if (k->dynamic) {
		ref_quantize(af, rows * K, aq, &as, &za);
		reference(k, rows, aq, OM_UINT8, as, za, b8, bs, bz, k->bias ? bias : NULL, want);
	} else {
		reference(k, rows, a8, k->adt, as, za, b8, bs, k->bzp ? bz : NULL,
			  k->bias ? bias : NULL, want);
	}

	om_model *m;
	const int32_t nin = k->dynamic ? 5 : 7;
	om_node *n = nt_node(&m, k->dynamic ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat",
			     nin, 1);
	n->domain = "com.microsoft";
	int64_t adims[3] = {k->batch, k->M, K};
	const int64_t *ad = k->rank == 3 ? adims : k->rank == 2 ? adims + 1 : adims + 2;
	om_tensor ta = nt_tensor(k->dynamic ? OM_FLOAT : k->adt, k->rank, ad,
				 k->dynamic ? (void *)af : (void *)a8);
	om_tensor tb = nt_tensor(k->bdt, 2, (int64_t[]){K, N}, b8);
	om_tensor tas = nt_tensor(OM_FLOAT, 0, NULL, &as);
	om_tensor tbs = nt_tensor(OM_FLOAT, k->per_col ? 1 : 0, &nc, bs);
	om_tensor taz = nt_tensor(k->adt, 1, (int64_t[]){1}, az);
	om_tensor tbz = nt_tensor(k->bdt, k->per_col ? 1 : 0, &nc, bz);
	om_tensor tbias = nt_tensor(OM_FLOAT, 1, &N, bias);
	const om_tensor *in[7] = {&ta, &tb};
	if (k->dynamic) {
		in[2] = &tbs, in[3] = k->bzp ? &tbz : NULL, in[4] = k->bias ? &tbias : NULL;
	} else {
		in[2] = &tas, in[3] = &tbs, in[4] = k->azp ? &taz : NULL;
		in[5] = k->bzp ? &tbz : NULL, in[6] = k->bias ? &tbias : NULL;
	}
	for (int32_t i = 0; i < nin; i++)
		if (!in[i])
			n->in[i] = NULL;
	/* exact, fast at 1 and 2 threads, fast with a state slot and B constant (packed) */
	for (int v = 0; v < 4; v++) {
		void *slot = NULL;
		void (*rel)(void *) = NULL;
		om_ctx c = {.exact = v == 0, .threads = v == 2 ? 2 : 1};
		if (v == 3)
			c.state = &slot, c.state_release = &rel, c.const_in = 2, c.threads = 2;
		for (int rep = 0; rep < (v == 3 ? 2 : 1); rep++) {
			om_tensor out = {0};
			om_status st = {0};
			if (nt_run_ctx(n, 1, in, &out, c, &st))
				fail_msg("run %d: %s", v, st.msg);
			assert_int_equal(out.dtype, OM_FLOAT);
			assert_int_equal(out.rank, k->rank);
			assert_int_equal(out.dims[out.rank - 1], N);
			if (memcmp(out.data, want, sizeof(float) * (size_t)(rows * N)))
				fail_msg("case M %lld K %lld N %lld dyn %d variant %d differs",
					 (long long)rows, (long long)K, (long long)N, k->dynamic, v);
			om_tensor_free(&out);
		}
		if (slot && rel)
			rel(slot);
		free(slot);
	}
	nt_free(m);
	free(af), free(a8), free(b8), free(bs), free(bias), free(want), free(aq);
}

static void against_reference(void **state)
{
	(void)state;
	const int64_t shapes[][4] = {{1, 5, 7, 3},    {2, 33, 65, 17}, {1, 1, 1, 1},
				     {3, 4, 256, 96}, {1, 70, 300, 130}, {1, 0, 8, 4},
				     {2, 3, 16, 1}};
	uint64_t seed = 11;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int bits = 0; bits < 64; bits++) {
			qcase k = {.dynamic = bits & 1, .adt = bits & 2 ? OM_INT8 : OM_UINT8,
				   .bdt = bits & 4 ? OM_INT8 : OM_UINT8, .per_col = bits & 8,
				   .azp = bits & 16, .bzp = bits & 32, .bias = (bits + s) & 1,
				   .rank = (int32_t)(1 + (bits + (int)s) % 3),
				   .batch = shapes[s][0], .M = shapes[s][1], .K = shapes[s][2],
				   .N = shapes[s][3]};
			if (k.dynamic && (k.azp || k.adt == OM_INT8))
				continue; /* its A is float, quantized to uint8 */
			if (k.rank == 1 && k.M == 0)
				k.rank = 2;
			run_case(&k, ++seed);
		}
}

/* B int8 with zero point 0 (the packed path) and big enough to pack, at rank 3 */
static void packed_sizes(void **state)
{
	(void)state;
	const int64_t shapes[][4] = {{1, 128, 256, 768}, {2, 37, 1024, 200}, {1, 300, 100, 513}};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int d = 0; d < 2; d++) {
			qcase k = {.dynamic = d, .adt = OM_UINT8, .bdt = OM_INT8, .rank = 3,
				   .batch = shapes[s][0], .M = shapes[s][1], .K = shapes[s][2],
				   .N = shapes[s][3], .per_col = s == 1, .bias = d == 0};
			run_case(&k, 100 + s);
		}
}

/* all-zero A: scale 0, every quantized element 0, y = bias (or 0) */
static void dynamic_zero_a(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DynamicQuantizeMatMul", 3, 1);
	n->domain = "com.microsoft";
	float a[6] = {0}, bs = 0.5f;
	int8_t b[6] = {1, 2, 3, 4, 5, 6};
	om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, a);
	om_tensor tb = nt_tensor(OM_INT8, 2, (int64_t[]){3, 2}, b);
	om_tensor ts = nt_tensor(OM_FLOAT, 0, NULL, &bs);
	const om_tensor *in[3] = {&ta, &tb, &ts};
	om_tensor out = {0};
	om_status st = {0};
	assert_int_equal(nt_run(n, 1, in, &out), OM_OK);
	for (int i = 0; i < 4; i++)
		assert_true(((float *)out.data)[i] == 0 && !signbit(((float *)out.data)[i]));
	om_tensor_free(&out);
	(void)st;
	nt_free(m);
}

/* what the rows refuse: a batched B, K mismatch, per-column a scale, a bias of another size */
static void refused(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MatMulIntegerToFloat", 4, 1);
	n->domain = "com.microsoft";
	uint8_t a[24] = {0}, b[24] = {0};
	float s[4] = {1, 1, 1, 1};
	om_tensor ta = nt_tensor(OM_UINT8, 2, (int64_t[]){2, 3}, a);
	om_tensor tb = nt_tensor(OM_INT8, 2, (int64_t[]){3, 4}, b);
	om_tensor tb3 = nt_tensor(OM_INT8, 3, (int64_t[]){2, 3, 4}, b);
	om_tensor tbk = nt_tensor(OM_INT8, 2, (int64_t[]){4, 4}, b);
	om_tensor t1 = nt_tensor(OM_FLOAT, 0, NULL, s);
	om_tensor t4 = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, s);
	om_tensor t3 = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, s);
	om_tensor out = {0};
	const om_tensor *ok[4] = {&ta, &tb, &t1, &t4};
	assert_int_equal(nt_run(n, 1, ok, &out), OM_OK);
	om_tensor_free(&out);
	const om_tensor *batched[4] = {&ta, &tb3, &t1, &t4};
	assert_int_equal(nt_run(n, 1, batched, &out), OM_ERR_UNSUPPORTED);
	const om_tensor *kbad[4] = {&ta, &tbk, &t1, &t4};
	assert_int_equal(nt_run(n, 1, kbad, &out), OM_ERR_INVALID_MODEL);
	const om_tensor *acol[4] = {&ta, &tb, &t4, &t4};
	assert_int_equal(nt_run(n, 1, acol, &out), OM_ERR_INVALID_MODEL);
	const om_tensor *bcol[4] = {&ta, &tb, &t1, &t3};
	assert_int_equal(nt_run(n, 1, bcol, &out), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

/* DynamicQuantizeLinear (om_dynq_params / om_dynq_quantize) against the scalar definition over
 * lengths around the range loop's 64 lanes and the pool's split, with NaN, -0 and all-negative
 * or all-positive inputs, at 1 and 2 threads in both modes */
static void dql_edges(void **state)
{
	(void)state;
	const int64_t lens[] = {0, 1, 15, 63, 64, 65, 130, 16384 * 2 + 7, 100003};
	nt_rng r = {77};
	float *x = malloc(sizeof(float) * 100003);
	uint8_t *want = malloc(100003);
	for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
		for (int kind = 0; kind < 4; kind++) {
			const int64_t n = lens[li];
			for (int64_t i = 0; i < n; i++) {
				const float v = frand(&r);
				x[i] = kind == 1 ? -fabsf(v) - 1 : kind == 2 ? fabsf(v) + 1 : v;
				if (kind == 3 && i % 7 == 2)
					x[i] = i % 2 ? NAN : -0.0f;
			}
			if (n > 40)
				x[n - 1] = kind == 1 ? -9.5f : 9.75f; /* the extreme in the tail */
			float scale;
			int32_t zp;
			ref_quantize(x, n, want, &scale, &zp);
			om_model *m;
			om_node *nd = nt_node(&m, "DynamicQuantizeLinear", 1, 3);
			om_tensor tx = nt_tensor(OM_FLOAT, 1, &n, x);
			const om_tensor *in[1] = {&tx};
			for (int v = 0; v < 3; v++) {
				om_tensor out[3] = {{0}};
				om_status st = {0};
				assert_int_equal(nt_run_threads(nd, 11, in, out, v == 0, v ? v : 1, &st),
						 OM_OK);
				if (n && memcmp(out[0].data, want, (size_t)n))
					fail_msg("n %lld kind %d variant %d: y differs", (long long)n,
						 kind, v);
				assert_memory_equal(out[1].data, &scale, sizeof scale);
				assert_int_equal(*(uint8_t *)out[2].data, zp);
				for (int k = 0; k < 3; k++)
					om_tensor_free(&out[k]);
			}
			nt_free(m);
		}
	free(x), free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(against_reference),
		cmocka_unit_test(packed_sizes),
		cmocka_unit_test(dynamic_zero_a),
		cmocka_unit_test(refused),
		cmocka_unit_test(dql_edges),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
