/* test_mha.c — com.microsoft MultiHeadAttention, Attention and QAttention (kernels/nn/ops_mha.c,
 * ops_attention_ms.c, mha_core.c): MultiHeadAttention against a straightforward double
 * reference over batches 1-3, queries 1-6, heads 1-3, odd head sizes, another value head size,
 * keys of another length, pasts 0-9, bias, every mask form (end positions, end and start
 * positions, the first B of 3B + 2, 2-D and 3-D 0/1 masks), attention_bias full and broadcast,
 * unidirectional, scale and mask_filter_value: exact mode within float rounding of the
 * reference and the same bits on 1 and 3 threads, fast mode on 2 threads within float rounding;
 * a hand-computed case; Attention equal to MultiHeadAttention on the projection it computes;
 * QAttention's integer projection against exact sums; the Unsupported forms and malformed
 * inputs are errors naming the node. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nodetest.h"

static uint32_t rng = 2424;
static float frand(void) /* [-1, 1) */
{
	rng = rng * 1664525u + 1013904223u;
	return (float)(rng >> 8) / (float)(1u << 23) - 1.0f;
}

static float *rand_floats(int64_t n)
{
	float *x = malloc(sizeof(float) * (size_t)(n + 1));
	for (int64_t i = 0; i < n; i++)
		x[i] = frand();
	return x;
}

enum { MK_NONE, MK_END, MK_END_START, MK_3B2, MK_2D, MK_3D };

typedef struct mh_case {
	int64_t B, S, N, H, Hv, L, P; /* P 0: no past */
	int bias, mask, abias;        /* abias 1 full, 2 broadcast over batch and heads */
	int causal;
	float scale, filter;          /* 0: default */
} mh_case;

typedef struct mh_data {
	float *q, *k, *v, *bias, *pk, *pv, *ab;
	int32_t *mask;
	int64_t nmask, T;
} mh_data;

static bool ref_masked(const mh_case *t, const mh_data *d, int64_t b, int64_t s, int64_t j)
{
	const int32_t *m = d->mask;
	switch (t->mask) {
	case MK_END:
	case MK_3B2:
		return j >= m[b];
	case MK_END_START:
		return j >= m[b] || j < m[t->B + b];
	case MK_2D:
		return !m[b * d->T + j];
	case MK_3D:
		return !m[(b * t->S + s) * d->T + j];
	default:
		return false;
	}
}

/* y [B, S, N Hv] and presents [B, N, T, H] / [B, N, T, Hv] in double */
static void reference(const mh_case *t, const mh_data *d, double *y, double *pk, double *pv)
{
	const int64_t N = t->N, H = t->H, Hv = t->Hv, T = d->T, D = N * H, Dv = N * Hv;
	const double scale = t->scale != 0 ? t->scale : 1.0 / sqrt((double)H);
	const double filter = t->filter != 0 ? t->filter : -10000.0;
	double *sc = malloc(sizeof(double) * (size_t)(T + 1));
	for (int64_t b = 0; b < t->B; b++)
		for (int64_t h = 0; h < N; h++) {
			double *K = pk + (b * N + h) * T * H, *V = pv + (b * N + h) * T * Hv;
			for (int64_t j = 0; j < T; j++) {
				const bool old = j < t->P;
				const int64_t r = j - t->P;
				for (int64_t e = 0; e < H; e++)
					K[j * H + e] = old ? d->pk[((b * N + h) * t->P + j) * H + e]
						: (double)d->k[(b * t->L + r) * D + h * H + e] +
						  (t->bias ? d->bias[D + h * H + e] : 0);
				for (int64_t e = 0; e < Hv; e++)
					V[j * Hv + e] = old ? d->pv[((b * N + h) * t->P + j) * Hv + e]
						: (double)d->v[(b * t->L + r) * Dv + h * Hv + e] +
						  (t->bias ? d->bias[2 * D + h * Hv + e] : 0);
			}
			for (int64_t s = 0; s < t->S; s++) {
				const int64_t hi = t->causal && t->S > 1 && t->P + s + 1 < T ?
						   t->P + s + 1 : T;
				double m = -INFINITY, sum = 0;
				for (int64_t j = 0; j < hi; j++) {
					double dot = 0;
					for (int64_t e = 0; e < H; e++)
						dot += ((double)d->q[(b * t->S + s) * D + h * H + e] +
							(t->bias ? d->bias[h * H + e] : 0)) * K[j * H + e];
					sc[j] = scale * dot + (ref_masked(t, d, b, s, j) ? filter : 0);
					if (t->abias)
						sc[j] += d->ab[((t->abias == 1 ? b * N + h : 0) * t->S +
								s) * T + j];
					m = sc[j] > m ? sc[j] : m;
				}
				for (int64_t j = 0; j < hi; j++)
					sum += sc[j] = exp(sc[j] - m);
				for (int64_t e = 0; e < Hv; e++) {
					double acc = 0;
					for (int64_t j = 0; j < hi; j++)
						acc += sc[j] / sum * V[j * Hv + e];
					y[(b * t->S + s) * Dv + h * Hv + e] = acc;
				}
			}
		}
	free(sc);
}

static void make_mask(const mh_case *t, mh_data *d)
{
	const int64_t B = t->B, T = d->T;
	d->nmask = t->mask == MK_END ? B : t->mask == MK_END_START ? 2 * B : t->mask == MK_3B2 ?
		   3 * B + 2 : t->mask == MK_2D ? B * T : t->mask == MK_3D ? B * t->S * T : 0;
	d->mask = calloc((size_t)d->nmask + 1, sizeof(int32_t));
	for (int64_t b = 0; b < B; b++) {
		if (t->mask == MK_END || t->mask == MK_3B2 || t->mask == MK_END_START)
			d->mask[b] = (int32_t)(T - b % 3); /* different lengths per batch */
		if (t->mask == MK_END_START)
			d->mask[B + b] = (int32_t)(b % 2);
	}
	for (int64_t i = 0; (t->mask == MK_2D || t->mask == MK_3D) && i < d->nmask; i++)
		d->mask[i] = frand() > -0.4f;
	if (t->mask == MK_2D && B > 1) /* a batch with only its first key */
		for (int64_t j = 0; j < T; j++)
			d->mask[T + j] = j == 0;
}

static om_node *mh_node(om_model **m, const mh_case *t)
{
	om_node *n = nt_node(m, "MultiHeadAttention", 8, t->P ? 3 : 1);
	n->domain = "com.microsoft";
	nt_int(n, "num_heads", t->N);
	if (t->causal)
		nt_int(n, "unidirectional", 1);
	if (t->scale != 0)
		nt_float(n, "scale", t->scale);
	if (t->filter != 0)
		nt_float(n, "mask_filter_value", t->filter);
	return n;
}

static void check_close(const om_tensor *y, const double *want, int64_t n, double tol)
{
	const float *g = y->data;
	for (int64_t i = 0; i < n; i++)
		if (!(fabs(g[i] - want[i]) <= tol * (1 + fabs(want[i]))))
			fail_msg("element %lld: got %.9g, want %.9g", (long long)i, g[i], want[i]);
}

static void run_case(const mh_case *t)
{
	mh_data d = {0};
	const int64_t D = t->N * t->H, Dv = t->N * t->Hv;
	d.T = t->P + t->L;
	d.q = rand_floats(t->B * t->S * D);
	d.k = rand_floats(t->B * t->L * D);
	d.v = rand_floats(t->B * t->L * Dv);
	d.bias = rand_floats(2 * D + Dv);
	d.pk = rand_floats(t->B * t->N * t->P * t->H);
	d.pv = rand_floats(t->B * t->N * t->P * t->Hv);
	d.ab = rand_floats(t->B * t->N * t->S * d.T);
	make_mask(t, &d);
	om_tensor q = nt_tensor(OM_FLOAT, 3, (int64_t[]){t->B, t->S, D}, d.q);
	om_tensor k = nt_tensor(OM_FLOAT, 3, (int64_t[]){t->B, t->L, D}, d.k);
	om_tensor v = nt_tensor(OM_FLOAT, 3, (int64_t[]){t->B, t->L, Dv}, d.v);
	om_tensor bias = nt_tensor(OM_FLOAT, 1, (int64_t[]){2 * D + Dv}, d.bias);
	const int32_t mrank = t->mask == MK_2D ? 2 : t->mask == MK_3D ? 3 : 1;
	const int64_t mdims[3] = {mrank == 1 ? d.nmask : t->B, mrank == 2 ? d.T : t->S, d.T};
	om_tensor mask = nt_tensor(OM_INT32, mrank, mdims, d.mask);
	const int64_t ab0 = t->abias == 1 ? t->B : 1, ab1 = t->abias == 1 ? t->N : 1;
	om_tensor ab = nt_tensor(OM_FLOAT, 4, (int64_t[]){ab0, ab1, t->S, d.T}, d.ab);
	om_tensor pk = nt_tensor(OM_FLOAT, 4, (int64_t[]){t->B, t->N, t->P, t->H}, d.pk);
	om_tensor pv = nt_tensor(OM_FLOAT, 4, (int64_t[]){t->B, t->N, t->P, t->Hv}, d.pv);
	const om_tensor *in[8] = {&q, &k, &v, t->bias ? &bias : NULL, t->mask ? &mask : NULL,
				  t->abias ? &ab : NULL, t->P ? &pk : NULL, t->P ? &pv : NULL};
	const int64_t ny = t->B * t->S * Dv, nk = t->B * t->N * d.T * t->H;
	const int64_t nv = t->B * t->N * d.T * t->Hv;
	double *y = malloc(sizeof(double) * (size_t)ny), *rk = malloc(sizeof(double) * (size_t)nk);
	double *rv = malloc(sizeof(double) * (size_t)nv);
	reference(t, &d, y, rk, rv);
	om_model *m;
	om_node *n = mh_node(&m, t);
	om_tensor e1[3] = {0}, e3[3] = {0}, f2[3] = {0};
	om_status st = {0};
	assert_int_equal(nt_run_threads(n, 1, in, e1, 1, 1, &st), OM_OK);
	assert_int_equal(nt_run_threads(n, 1, in, e3, 1, 3, &st), OM_OK);
	assert_int_equal(nt_run_threads(n, 1, in, f2, 0, 2, &st), OM_OK);
	nt_assert_shape(&e1[0], 3, (int64_t[]){t->B, t->S, Dv});
	check_close(&e1[0], y, ny, 1e-5);
	check_close(&f2[0], y, ny, 1e-5);
	assert_memory_equal(e1[0].data, e3[0].data, sizeof(float) * (size_t)ny);
	if (t->P) {
		nt_assert_shape(&e1[1], 4, (int64_t[]){t->B, t->N, d.T, t->H});
		check_close(&e1[1], rk, nk, 1e-6);
		check_close(&e1[2], rv, nv, 1e-6);
		check_close(&f2[1], rk, nk, 1e-6);
	}
	for (int i = 0; i < 3; i++)
		om_tensor_free(&e1[i]), om_tensor_free(&e3[i]), om_tensor_free(&f2[i]);
	nt_free(m);
	free(y), free(rk), free(rv);
	free(d.q), free(d.k), free(d.v), free(d.bias), free(d.pk), free(d.pv), free(d.ab);
	free(d.mask);
}

static void mha_against_reference(void **state)
{
	(void)state;
	static const mh_case cases[] = {
		{1, 5, 2, 8, 8, 5, 0, 0, MK_NONE, 0, 0, 0, 0},
		{2, 4, 3, 7, 7, 4, 0, 1, MK_END, 0, 0, 0, 0},
		{3, 3, 2, 5, 9, 6, 0, 1, MK_2D, 1, 0, 0.3f, 0},
		{2, 1, 2, 16, 16, 1, 9, 1, MK_2D, 0, 1, 0, 0},
		{2, 6, 1, 4, 4, 6, 3, 0, MK_END_START, 2, 1, 0, -50.0f},
		{2, 3, 2, 6, 6, 3, 2, 1, MK_3D, 1, 1, 0, 0},
		{3, 2, 2, 4, 4, 5, 0, 0, MK_3B2, 0, 0, 0, -1e9f},
		{1, 6, 3, 3, 3, 6, 0, 0, MK_NONE, 0, 1, 0, 0},
		{2, 1, 1, 1, 1, 1, 0, 0, MK_END, 0, 0, 0, 0},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
}

/* softmax(0, ln 3) = (1/4, 3/4) over values 4 and 8: 7; key 1 masked (end position 1): 4 */
static void mha_hand_values(void **state)
{
	(void)state;
	float q = 1, k[2] = {0, logf(3)}, v[2] = {4, 8};
	int32_t end = 1;
	om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, &q);
	om_tensor tk = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, k);
	om_tensor tv = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, v);
	om_tensor tm = nt_tensor(OM_INT32, 1, (int64_t[]){1}, &end);
	for (int exact = 0; exact < 2; exact++)
		for (int masked = 0; masked < 2; masked++) {
			om_model *m;
			om_node *n = nt_node(&m, "MultiHeadAttention", 5, 1);
			n->domain = "com.microsoft";
			nt_int(n, "num_heads", 1);
			const om_tensor *in[5] = {&tq, &tk, &tv, NULL, masked ? &tm : NULL};
			om_tensor y = {0};
			om_status st = {0};
			assert_int_equal(nt_run_mode(n, 1, in, &y, exact, &st), OM_OK);
			nt_assert_floats(&y, (float[]){masked ? 4.0f : 7.0f}, 1, 1e-6);
			om_tensor_free(&y);
			nt_free(m);
		}
}

/* Attention = MultiHeadAttention on input x weights + bias split in three (float) */
static void attention_is_mha_of_projection(void **state)
{
	(void)state;
	const int64_t B = 2, S = 3, N = 2, H = 4, Hin = 5, W = 3 * N * H;
	float *x = rand_floats(B * S * Hin), *w = rand_floats(Hin * W), *bias = rand_floats(W);
	float *qkv[3];
	for (int i = 0; i < 3; i++)
		qkv[i] = malloc(sizeof(float) * (size_t)(B * S * N * H));
	for (int64_t r = 0; r < B * S; r++)
		for (int64_t c = 0; c < W; c++) {
			double acc = bias[c];
			for (int64_t e = 0; e < Hin; e++)
				acc += (double)x[r * Hin + e] * w[e * W + c];
			qkv[c / (N * H)][r * N * H + c % (N * H)] = (float)acc;
		}
	int32_t ends[2] = {3, 2};
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, S, Hin}, x);
	om_tensor tw = nt_tensor(OM_FLOAT, 2, (int64_t[]){Hin, W}, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){W}, bias);
	om_tensor tm = nt_tensor(OM_INT32, 1, (int64_t[]){B}, ends);
	om_tensor tq[3];
	for (int i = 0; i < 3; i++)
		tq[i] = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, S, N * H}, qkv[i]);
	om_model *ma, *mm;
	om_node *a = nt_node(&ma, "Attention", 4, 1), *n = nt_node(&mm, "MultiHeadAttention", 5, 1);
	a->domain = n->domain = "com.microsoft";
	nt_int(a, "num_heads", N), nt_int(n, "num_heads", N);
	nt_int(a, "unidirectional", 1), nt_int(n, "unidirectional", 1);
	const om_tensor *ia[4] = {&tx, &tw, &tb, &tm};
	const om_tensor *im[5] = {&tq[0], &tq[1], &tq[2], NULL, &tm};
	om_tensor ya = {0}, ym = {0};
	om_status st = {0};
	assert_int_equal(nt_run_mode(a, 1, ia, &ya, 1, &st), OM_OK);
	assert_int_equal(nt_run_mode(n, 1, im, &ym, 1, &st), OM_OK);
	nt_assert_floats(&ya, ym.data, B * S * N * H, 1e-5);
	om_tensor_free(&ya), om_tensor_free(&ym);
	nt_free(ma), nt_free(mm);
	for (int i = 0; i < 3; i++)
		free(qkv[i]);
	free(x), free(w), free(bias);
}

/* QAttention = Attention on the dequantized projection: exact int sums, scale, bias */
static void qattention_projection(void **state)
{
	(void)state;
	const int64_t B = 1, S = 2, N = 1, H = 3, D = N * H, W = 3 * D;
	uint8_t x[6] = {0, 255, 17, 128, 3, 200};
	int8_t w[27];
	float wsc[9], bias[9], proj[18];
	for (int i = 0; i < 27; i++)
		w[i] = (int8_t)(i * 37 % 255 - 127);
	for (int i = 0; i < 9; i++)
		wsc[i] = 0.01f * (float)(i + 1), bias[i] = 0.5f * frand();
	const uint8_t xz = 100;
	const int8_t wz = 5;
	const float xs = 0.02f;
	for (int64_t r = 0; r < B * S; r++)
		for (int64_t c = 0; c < W; c++) {
			int32_t acc = 0;
			for (int64_t e = 0; e < D; e++)
				acc += ((int32_t)x[r * D + e] - xz) * ((int32_t)w[e * W + c] - wz);
			proj[r * W + c] = (float)acc * (xs * wsc[c]) + bias[c];
		}
	/* the float Attention on identity weights reads the projection back as its input */
	float ident[9 * 27] = {0}, zero[27] = {0};
	for (int i = 0; i < 9; i++)
		ident[i * 9 + i] = 1;
	om_tensor tx = nt_tensor(OM_UINT8, 3, (int64_t[]){B, S, D}, x);
	om_tensor tw = nt_tensor(OM_INT8, 2, (int64_t[]){D, W}, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){W}, bias);
	om_tensor ts = nt_tensor(OM_FLOAT, 0, NULL, (float *)&xs);
	om_tensor tws = nt_tensor(OM_FLOAT, 1, (int64_t[]){W}, wsc);
	om_tensor txz = nt_tensor(OM_UINT8, 0, NULL, (uint8_t *)&xz);
	om_tensor twz = nt_tensor(OM_INT8, 0, NULL, (int8_t *)&wz);
	om_tensor tp = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, S, W}, proj);
	om_tensor ti = nt_tensor(OM_FLOAT, 2, (int64_t[]){W, W}, ident);
	om_tensor t0 = nt_tensor(OM_FLOAT, 1, (int64_t[]){W}, zero);
	om_model *mq, *ma;
	om_node *q = nt_node(&mq, "QAttention", 8, 1), *a = nt_node(&ma, "Attention", 3, 1);
	q->domain = a->domain = "com.microsoft";
	nt_int(q, "num_heads", N), nt_int(a, "num_heads", N);
	const om_tensor *iq[8] = {&tx, &tw, &tb, &ts, &tws, NULL, &txz, &twz};
	const om_tensor *ia[3] = {&tp, &ti, &t0};
	for (int exact = 0; exact < 2; exact++) {
		om_tensor yq = {0}, ya = {0};
		om_status st = {0};
		assert_int_equal(nt_run_mode(q, 1, iq, &yq, exact, &st), OM_OK);
		assert_int_equal(nt_run_mode(a, 1, ia, &ya, 1, &st), OM_OK);
		nt_assert_floats(&yq, ya.data, B * S * D, 1e-6);
		om_tensor_free(&yq), om_tensor_free(&ya);
	}
	nt_free(mq), nt_free(ma);
}

/* forms ONNX Runtime's CPU kernels refuse are Unsupported, malformed inputs invalid */
static void refusals(void **state)
{
	(void)state;
	float f[96] = {0};
	int32_t m4[16] = {0};
	om_tensor x = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 4}, f);
	om_tensor w = nt_tensor(OM_FLOAT, 2, (int64_t[]){4, 12}, f);
	om_tensor b = nt_tensor(OM_FLOAT, 1, (int64_t[]){12}, f);
	om_tensor mask4 = nt_tensor(OM_INT32, 4, (int64_t[]){1, 1, 2, 2}, m4);
	om_tensor mask_bad = nt_tensor(OM_INT32, 2, (int64_t[]){1, 3}, m4);
	om_tensor qkv5 = nt_tensor(OM_FLOAT, 5, (int64_t[]){1, 2, 2, 3, 2}, f);
	struct {
		const char *op, *attr;
		const om_tensor *in[5];
		om_kind want;
	} t[] = {
		{"Attention", NULL, {&x, &w, &b, &mask4}, OM_ERR_UNSUPPORTED},
		{"Attention", "do_rotary", {&x, &w, &b}, OM_ERR_UNSUPPORTED},
		{"Attention", "past_present_share_buffer", {&x, &w, &b}, OM_ERR_UNSUPPORTED},
		{"Attention", NULL, {&x, &w, &b, &mask_bad}, OM_ERR_INVALID_MODEL},
		{"MultiHeadAttention", NULL, {&qkv5}, OM_ERR_UNSUPPORTED},
		{"MultiHeadAttention", NULL, {&x}, OM_ERR_UNSUPPORTED},
		{"MultiHeadAttention", NULL, {&x, &x, &x, NULL, &mask_bad}, OM_ERR_INVALID_MODEL},
		{"MultiHeadAttention", NULL, {&x, &x, NULL}, OM_ERR_INVALID_MODEL},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		om_model *m;
		om_node *n = nt_node(&m, t[i].op, 5, 1);
		n->domain = "com.microsoft";
		nt_int(n, "num_heads", 2);
		if (t[i].attr)
			nt_int(n, t[i].attr, 1);
		om_tensor y = {0};
		om_status st = {0};
		assert_int_equal(nt_run(n, 1, t[i].in, &y), t[i].want);
		(void)st;
		nt_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(mha_against_reference),
		cmocka_unit_test(mha_hand_values),
		cmocka_unit_test(attention_is_mha_of_projection),
		cmocka_unit_test(qattention_projection),
		cmocka_unit_test(refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
