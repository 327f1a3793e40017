/* test_gqa.c — com.microsoft GroupQueryAttention (kernels/nn/ops_gqa.c, gqa_group.c) against a
 * straightforward double reference (ONNX Runtime's layout: a batch's past rows, then its new
 * tokens, zeros after; causal frontier min(past + s + 1, total of the batch), a window of the
 * last local_window_size keys) over prompts (absent, empty and shared-shape past, right-padded
 * batches), decoding (past 1-40, growing and shared-shape present), prompts after a past, GQA
 * ratios 1-4, head sizes 5-64 (odd ones too, which ONNX Runtime refuses), rotary half and
 * interleaved, partial, position ids (a first prompt's from position_ids[0][0], as ONNX
 * Runtime 1.30 does), softcap, windows, packed QKV, bias (full and broadcast),
 * head sinks and smooth softmax, causal 0, qk_output 1 and 2, float16; exact mode on 1 and 3
 * threads gives the same bits, fast mode on 2 threads agrees within float rounding; quantized
 * caches (int8 and int4, per tensor and per channel) against the float path on their
 * dequantized values (the same bits) with their present codes computed here; malformed inputs
 * are errors, the Q/K norms, sliding_window_cache and different k/v quant types Unsupported. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "nodetest.h"

typedef struct gq_case {
	int64_t B, S, Hq, Hkv, D, P, total; /* P -1: no past */
	int32_t seqlens[2];
	int64_t rd;                         /* rotary width, 0: none */
	bool interleaved, packed, pos, f16;
	int64_t window;
	float softcap;
	int causal, bias, sink, qk;         /* bias 1 full, 2 broadcast; sink 1 head, 2 smooth */
} gq_case;

static uint32_t rng = 4242;
static float frand(void) /* [-1, 1) */
{
	rng = rng * 1664525u + 1013904223u;
	return (float)(rng >> 8) / (float)(1u << 23) - 1.0f;
}

static float *rand_floats(int64_t n, bool f16)
{
	float *x = malloc(sizeof(float) * (size_t)(n + 1));
	for (int64_t i = 0; i < n; i++)
		x[i] = f16 ? om_half_to_float(om_float_to_half(frand())) : frand();
	return x;
}

typedef struct gq_data {
	float *q, *k, *v, *pk, *pv, *cs, *sn, *bias, *sink;
	int32_t seqlens[2], total;
	int64_t *pos, rows, Tp;
} gq_data;

/* the reference: y [B, S, Hq * D], present [B, Hkv, Tp, D], qk [B, Hq, S, total] in double */
static void reference(const gq_case *t, const gq_data *d, double *y, double *pk, double *pv,
		      double *qk)
{
	const int64_t D = t->D, G = t->Hq / t->Hkv, Tp = d->Tp, rd2 = t->rd / 2;
	const bool first = t->S > 1 && t->S == t->total;
	double *qr = malloc(sizeof(double) * (size_t)(t->S * t->Hq * D));
	double *x = malloc(sizeof(double) * (size_t)(Tp + 1));
	for (int64_t b = 0; b < t->B; b++) {
		const int64_t T = d->seqlens[b] + 1, past = first ? 0 : T - t->S;
		for (int64_t kh = 0; kh < t->Hkv; kh++)
			for (int64_t j = 0; j < Tp; j++)
				for (int64_t i = 0; i < D; i++) {
					const int64_t at = ((b * t->Hkv + kh) * Tp + j) * D + i;
					const int64_t from = ((b * t->Hkv + kh) * t->P + j) * D + i;
					const int64_t s = j - past;
					const int64_t n = ((b * t->S + s) * t->Hkv + kh) * D + i;
					pk[at] = j < past ? d->pk[from] : s < t->S ? d->k[n] : 0;
					pv[at] = j < past ? d->pv[from] : s < t->S ? d->v[n] : 0;
				}
		for (int64_t s = 0; s < t->S; s++) {
			const int64_t at = !t->pos ? past + s : first ? d->pos[0] + s
									: d->pos[b * t->S + s];
			for (int64_t h = 0; h < t->Hq; h++) {
				double *r = qr + (s * t->Hq + h) * D;
				for (int64_t i = 0; i < D; i++)
					r[i] = d->q[((b * t->S + s) * t->Hq + h) * D + i];
			}
			for (int64_t h = 0; rd2 && h < t->Hq + t->Hkv; h++) {
				const int64_t kat = ((b * t->Hkv + h - t->Hq) * Tp + past + s) * D;
				double *r = h < t->Hq ? qr + (s * t->Hq + h) * D : pk + kat;
				for (int64_t i = 0; i < rd2; i++) {
					const int64_t a = t->interleaved ? 2 * i : i;
					const int64_t c = t->interleaved ? 2 * i + 1 : i + rd2;
					const double co = d->cs[at * rd2 + i];
					const double si = d->sn[at * rd2 + i];
					const double x1 = r[a], x2 = r[c];
					r[a] = co * x1 - si * x2, r[c] = si * x1 + co * x2;
				}
				if (t->f16 && h >= t->Hq) /* present keeps float16 */
					for (int64_t i = 0; i < D; i++)
						r[i] = om_half_to_float(
							om_float_to_half((float)r[i]));
			}
		}
		for (int64_t h = 0; h < t->Hq; h++)
			for (int64_t s = 0; s < t->S; s++) {
				const double *q = qr + (s * t->Hq + h) * D;
				const double *K = pk + (b * t->Hkv + h / G) * Tp * D;
				const double *V = pv + (b * t->Hkv + h / G) * Tp * D;
				const int64_t L = t->causal && past + s + 1 < T ? past + s + 1 : T;
				const int64_t lo =
					t->window > 0 && L > t->window ? L - t->window : 0;
				const double sk = t->sink == 1 ? d->sink[h] : 0;
				double m = t->sink ? sk : -INFINITY, sum = 0;
				const double scale = 1 / sqrt((double)D);
				double *o = qk + ((b * t->Hq + h) * t->S + s) * t->total;
				for (int64_t j = 0; j < t->total; j++)
					o[j] = 0;
				for (int64_t j = lo; j < L; j++) {
					double e = 0;
					for (int64_t i = 0; i < D; i++)
						e += q[i] * K[j * D + i];
					e *= scale;
					if (t->softcap > 0)
						e = t->softcap * tanh(e / t->softcap);
					if (t->bias) {
						const int64_t bb = t->bias == 1 ? b : 0;
						const int64_t hb = t->bias == 1 ? h : 0;
						const int64_t Hb = t->bias == 1 ? t->Hq : 1;
						e += d->bias[((bb * Hb + hb) * t->S + s) *
								     t->total + j];
					}
					x[j] = o[j] = e;
					m = e > m ? e : m;
				}
				for (int64_t j = lo; j < L; j++)
					sum += x[j] = exp(x[j] - m);
				if (t->sink)
					sum += exp(sk - m);
				double *yr = y + ((b * t->S + s) * t->Hq + h) * D;
				for (int64_t i = 0; i < D; i++)
					yr[i] = 0;
				for (int64_t j = lo; j < L; j++) {
					x[j] /= sum;
					if (t->qk == 2)
						o[j] = x[j];
					for (int64_t i = 0; i < D; i++)
						yr[i] += x[j] * V[j * D + i];
				}
			}
	}
	free(qr), free(x);
}

/* every element of t (float or float16) within tol of want, relative to max(1, |want|) */
static void check_close(const om_tensor *t, const double *want, int64_t n, double tol,
			const char *what)
{
	assert_int_equal(om_tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++) {
		const uint16_t *h = t->data;
		const double got = t->dtype == OM_FLOAT ? ((const float *)t->data)[i]
							: om_half_to_float(h[i]);
		if (!(fabs(got - want[i]) <= tol * (fabs(want[i]) > 1 ? fabs(want[i]) : 1)))
			fail_msg("%s element %lld: got %.9g, want %.9g", what, (long long)i, got,
				 want[i]);
	}
}

/* a float tensor of t's type over x (float16: converted into the returned buffer) */
static om_tensor in_tensor(const gq_case *t, int32_t rank, const int64_t *dims, float *x,
			   uint16_t **keep)
{
	if (!t->f16)
		return nt_tensor(OM_FLOAT, rank, dims, x);
	int64_t n = 1;
	for (int32_t i = 0; i < rank; i++)
		n *= dims[i];
	uint16_t *h = *keep = malloc(sizeof(uint16_t) * (size_t)(n + 1));
	for (int64_t i = 0; i < n; i++)
		h[i] = om_float_to_half(x[i]);
	return nt_tensor(OM_FLOAT16, rank, dims, h);
}

static void run_case(const gq_case *t)
{
	const int64_t B = t->B, S = t->S, D = t->D, P = t->P < 0 ? 0 : t->P;
	gq_data d = {0};
	d.total = (int32_t)t->total, d.Tp = t->total > P ? t->total : P, d.rows = t->total + 8;
	memcpy(d.seqlens, t->seqlens, sizeof d.seqlens);
	d.q = rand_floats(B * S * t->Hq * D, t->f16), d.k = rand_floats(B * S * t->Hkv * D, t->f16);
	d.v = rand_floats(B * S * t->Hkv * D, t->f16);
	d.pk = rand_floats(B * t->Hkv * P * D, t->f16);
	d.pv = rand_floats(B * t->Hkv * P * D, t->f16);
	d.cs = rand_floats(d.rows * t->rd / 2, t->f16);
	d.sn = rand_floats(d.rows * t->rd / 2, t->f16);
	d.bias = rand_floats(B * t->Hq * S * t->total, t->f16), d.sink = rand_floats(t->Hq, t->f16);
	d.pos = malloc(sizeof(int64_t) * (size_t)(B * S));
	for (int64_t i = 0; i < B * S; i++)
		d.pos[i] = (int64_t)((frand() + 1) * 0.5f * (float)(d.rows - 1 - S));
	const int64_t ny = B * S * t->Hq * D, np = B * t->Hkv * d.Tp * D;
	const int64_t nqk = B * t->Hq * S * t->total;
	double *want = malloc(sizeof(double) * (size_t)(ny + 2 * np + nqk));
	reference(t, &d, want, want + ny, want + ny + np, want + ny + 2 * np);

	om_model *m = NULL;
	om_node *node = nt_node(&m, "GroupQueryAttention", 12, t->qk ? 4 : 3);
	node->domain = "com.microsoft";
	nt_int(node, "num_heads", t->Hq), nt_int(node, "kv_num_heads", t->Hkv);
	nt_int(node, "do_rotary", t->rd > 0), nt_int(node, "rotary_interleaved", t->interleaved);
	nt_int(node, "local_window_size", t->window ? t->window : -1);
	nt_float(node, "softcap", t->softcap), nt_int(node, "causal", t->causal);
	nt_int(node, "smooth_softmax", t->sink == 2), nt_int(node, "qk_output", t->qk);
	float *packed = malloc(sizeof(float) * (size_t)(B * S * (t->Hq + 2 * t->Hkv) * D));
	for (int64_t r = 0; r < B * S; r++) {
		float *o = packed + r * (t->Hq + 2 * t->Hkv) * D;
		memcpy(o, d.q + r * t->Hq * D, sizeof(float) * (size_t)(t->Hq * D));
		memcpy(o + t->Hq * D, d.k + r * t->Hkv * D, sizeof(float) * (size_t)(t->Hkv * D));
		memcpy(o + (t->Hq + t->Hkv) * D, d.v + r * t->Hkv * D,
		       sizeof(float) * (size_t)(t->Hkv * D));
	}
	uint16_t *h[9] = {0};
	om_tensor tq = t->packed ? in_tensor(t, 3, (int64_t[]){B, S, (t->Hq + 2 * t->Hkv) * D},
					     packed, &h[0])
				 : in_tensor(t, 3, (int64_t[]){B, S, t->Hq * D}, d.q, &h[0]);
	om_tensor tk = in_tensor(t, 3, (int64_t[]){B, S, t->Hkv * D}, d.k, &h[1]);
	om_tensor tv = in_tensor(t, 3, (int64_t[]){B, S, t->Hkv * D}, d.v, &h[2]);
	om_tensor tpk = in_tensor(t, 4, (int64_t[]){B, t->Hkv, P, D}, d.pk, &h[3]);
	om_tensor tpv = in_tensor(t, 4, (int64_t[]){B, t->Hkv, P, D}, d.pv, &h[4]);
	om_tensor tsl = nt_tensor(OM_INT32, 1, (int64_t[]){B}, d.seqlens);
	om_tensor ttot = nt_tensor(OM_INT32, 0, NULL, &d.total);
	om_tensor tcs = in_tensor(t, 2, (int64_t[]){d.rows, t->rd / 2}, d.cs, &h[5]);
	om_tensor tsn = in_tensor(t, 2, (int64_t[]){d.rows, t->rd / 2}, d.sn, &h[6]);
	om_tensor tpos = nt_tensor(OM_INT64, 2, (int64_t[]){B, S}, d.pos);
	const int64_t bdims[4] = {t->bias == 1 ? B : 1, t->bias == 1 ? t->Hq : 1, S, t->total};
	om_tensor tb = in_tensor(t, 4, bdims, d.bias, &h[7]);
	om_tensor ts = in_tensor(t, 1, (int64_t[]){t->Hq}, d.sink, &h[8]);
	const om_tensor *in[12] = {&tq, t->packed ? NULL : &tk, t->packed ? NULL : &tv,
				   t->P >= 0 ? &tpk : NULL, t->P >= 0 ? &tpv : NULL, &tsl, &ttot,
				   t->rd ? &tcs : NULL, t->rd ? &tsn : NULL,
				   t->pos ? &tpos : NULL, t->bias ? &tb : NULL,
				   t->sink == 1 ? &ts : NULL};
	om_tensor y1[4] = {0}, y3[4] = {0}, yf[4] = {0};
	om_status st = {0};
	assert_int_equal(nt_run_threads(node, 1, in, y1, 1, 1, &st), OM_OK);
	assert_int_equal(nt_run_threads(node, 1, in, y3, 1, 3, &st), OM_OK);
	assert_int_equal(nt_run_threads(node, 1, in, yf, 0, 2, &st), OM_OK);
	nt_assert_shape(&y1[0], 3, (int64_t[]){B, S, t->Hq * D});
	nt_assert_shape(&y1[1], 4, (int64_t[]){B, t->Hkv, d.Tp, D});
	const double tol = t->f16 ? 2e-3 : 2e-5;
	const int64_t n[4] = {ny, np, np, nqk}, off[4] = {0, ny, ny + np, ny + 2 * np};
	for (int i = 0; i < (t->qk ? 4 : 3); i++) {
		/* exact mode: the thread count changes no bit */
		assert_memory_equal(y1[i].data, y3[i].data, y1[i].nbytes);
		check_close(&y1[i], want + off[i], n[i], tol, "exact");
		check_close(&yf[i], want + off[i], n[i], tol, "fast");
		om_tensor_free(&y1[i]), om_tensor_free(&y3[i]), om_tensor_free(&yf[i]);
	}
	nt_free(m);
	for (int i = 0; i < 9; i++)
		free(h[i]);
	free(packed), free(want), free(d.q), free(d.k), free(d.v), free(d.pk), free(d.pv);
	free(d.cs), free(d.sn), free(d.bias), free(d.sink), free(d.pos);
}

static void against_reference(void **state)
{
	(void)state;
	/* B S Hq Hkv D P total seqlens rd il packed pos f16 window softcap causal bias sink qk */
	static const gq_case cases[] = {
		{1, 6, 4, 2, 16, -1, 6, {5, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
		{2, 5, 4, 4, 7, -1, 5, {4, 1}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},   /* padded */
		{2, 5, 6, 2, 5, 0, 5, {2, 4}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},    /* empty past */
		{2, 4, 8, 2, 12, 16, 4, {3, 0}, 4, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},  /* shared */
		{1, 1, 4, 2, 64, 7, 8, {7, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},   /* decode */
		{2, 1, 8, 2, 16, 33, 34, {33, 9}, 16, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0},
		{2, 1, 3, 1, 9, 40, 21, {20, 0}, 8, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, /* shared */
		{1, 1, 2, 2, 8, 1, 2, {1, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},
		{1, 3, 4, 2, 16, 7, 10, {9, 0}, 8, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0},  /* after past */
		{2, 7, 4, 2, 20, -1, 7, {6, 3}, 12, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, /* pos ids */
		{2, 1, 4, 2, 16, 9, 10, {9, 5}, 8, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0},
		{1, 9, 4, 2, 16, -1, 9, {8, 0}, 0, 0, 0, 0, 0, 3, 0, 1, 0, 0, 0},  /* window */
		{2, 1, 4, 2, 16, 33, 34, {33, 5}, 0, 0, 0, 0, 0, 8, 1.5f, 1, 0, 0, 0},
		{1, 6, 4, 2, 16, -1, 6, {5, 0}, 8, 1, 1, 0, 0, 0, 2, 1, 0, 0, 0},  /* packed */
		{2, 1, 8, 2, 16, 7, 8, {7, 2}, 8, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0},   /* bias */
		{1, 4, 4, 2, 16, -1, 4, {3, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 0},  /* sink */
		{1, 1, 4, 2, 16, 9, 10, {9, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 0},  /* smooth */
		{2, 1, 4, 2, 16, 7, 8, {7, 4}, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},   /* causal 0 */
		{1, 6, 4, 2, 16, -1, 6, {5, 0}, 0, 0, 0, 0, 0, 2, 3.0f, 1, 1, 0, 1},
		{2, 1, 4, 2, 16, 7, 8, {7, 4}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2},
		{1, 6, 4, 2, 16, -1, 6, {5, 0}, 8, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0},  /* float16 */
		{2, 1, 8, 2, 32, 33, 34, {33, 12}, 16, 1, 1, 0, 1, 4, 0, 1, 0, 0, 0},
		{1, 300, 4, 1, 8, -1, 300, {299, 0}, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, /* passes */
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		run_case(&cases[i]);
}

/* seqlens_k outside [0, total), a past shorter than a batch keeps, a position beyond the
 * caches, a past of another type than the query without quant attributes, too few tokens for
 * total: errors, never reads out of bounds */
static void bad_inputs(void **state)
{
	(void)state;
	float x[4 * 8 * 16] = {0}, cs[4 * 4] = {0};
	uint8_t q8[2 * 4 * 8] = {0};
	const struct {
		int32_t seqlen, total;
		int64_t P, pos;
		bool quant;
		om_kind want;
	} bad[] = {{8, 8, 7, 0, 0, OM_ERR_INVALID_INPUT}, {-1, 8, 7, 0, 0, OM_ERR_INVALID_INPUT},
		   {7, 8, 3, 0, 0, OM_ERR_INVALID_INPUT},  {3, 4, 3, 9, 0, OM_ERR_INVALID_INPUT},
		   {3, 4, 3, 0, 1, OM_ERR_INVALID_MODEL},  {3, 4, 3, -1, 0, OM_ERR_INVALID_INPUT}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		om_model *m = NULL;
		om_node *node = nt_node(&m, "GroupQueryAttention", 10, 3);
		node->domain = "com.microsoft";
		nt_int(node, "num_heads", 2), nt_int(node, "kv_num_heads", 1);
		nt_int(node, "do_rotary", 1);
		int32_t sl = bad[i].seqlen, tot = bad[i].total;
		int64_t pos = bad[i].pos;
		om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 16}, x);
		om_tensor tk = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 8}, x);
		const int64_t pd[4] = {1, 1, bad[i].P, 8};
		om_tensor tp = bad[i].quant ? nt_tensor(OM_UINT8, 4, pd, q8)
					    : nt_tensor(OM_FLOAT, 4, pd, x);
		om_tensor tsl = nt_tensor(OM_INT32, 1, (int64_t[]){1}, &sl);
		om_tensor ttot = nt_tensor(OM_INT32, 0, NULL, &tot);
		om_tensor tc = nt_tensor(OM_FLOAT, 2, (int64_t[]){4, 4}, cs);
		om_tensor tpos = nt_tensor(OM_INT64, 2, (int64_t[]){1, 1}, &pos);
		const om_tensor *in[10] = {&tq, &tk, &tk, &tp, &tp, &tsl, &ttot, &tc, &tc,
					   bad[i].pos ? &tpos : NULL};
		om_tensor y[3] = {0};
		om_status st = {0};
		assert_int_equal(nt_run_threads(node, 1, in, y, 1, 1, &st), bad[i].want);
		nt_free(m);
	}
}

/* ---- quantized caches ---- */

typedef struct gq_qcase {
	int64_t B, S, Hq, Hkv, D, P, total; /* P: the past's rows (0: empty) */
	int32_t seqlens[2];
	int bits, chan;                     /* 8 or 4; per channel or per tensor */
} gq_qcase;

/* the code of x at scale s (ONNX Runtime's: rint(x * (1 / s)), clamped) */
static int qcode(float x, float s, int bits)
{
	const float q = rintf(x * (s != 0 ? 1.0f / s : 1.0f));
	const float lo = bits == 8 ? -128.0f : -8.0f, hi = bits == 8 ? 127.0f : 7.0f;
	return (int)(q < lo ? lo : q > hi ? hi : q);
}

/* code i of a cache row (int8, or int4 two a byte biased by 8, even element low) */
static int row_code(const uint8_t *row, int64_t i, int bits)
{
	return bits == 8 ? (int8_t)row[i] : (row[i / 2] >> (i & 1 ? 4 : 0) & 15) - 8;
}

/* present's codes: the past's rows a batch keeps, its new tokens' codes (computed [B, S, Hkv,
 * D]), zero bytes after */
static void check_present(const gq_qcase *t, const uint8_t *present, const uint8_t *past_codes,
			  const int *codes)
{
	const int64_t S = t->S, D = t->D, Hkv = t->Hkv, P = t->P;
	const int64_t row = t->bits == 8 ? D : (D + 1) / 2, Tp = t->total > P ? t->total : P;
	for (int64_t b = 0; b < t->B; b++) {
		const int64_t T = t->seqlens[b] + 1, past = T - S;
		for (int64_t h = 0; h < Hkv; h++)
			for (int64_t j = 0; j < Tp; j++) {
				const uint8_t *r = present + ((b * Hkv + h) * Tp + j) * row;
				const uint8_t *old = past_codes + ((b * Hkv + h) * P + j) * row;
				for (int64_t i = 0; i < D; i++) {
					const int64_t n = ((b * S + j - past) * Hkv + h) * D + i;
					const int want = j < past ? row_code(old, i, t->bits)
							 : j < T  ? codes[n]
								  : (t->bits == 8 ? 0 : -8);
					assert_int_equal(row_code(r, i, t->bits), want);
				}
			}
	}
}

/* the quantized node's outputs against the float node's on the dequantized values: past codes
 * times scale, the new keys and values quantized and back; present's codes computed here */
static void run_quantized(const gq_qcase *t, int exact)
{
	const int64_t B = t->B, S = t->S, D = t->D, Hkv = t->Hkv, P = t->P;
	const int64_t row = t->bits == 8 ? D : (D + 1) / 2, nsc = t->chan ? Hkv * D : 1;
	const int64_t Tp = t->total > P ? t->total : P, nkv = B * S * Hkv * D;
	float *q = rand_floats(B * S * t->Hq * D, false), *k = rand_floats(nkv, false);
	float *v = rand_floats(nkv, false), sc[2][64];
	float *kd = malloc(sizeof(float) * (size_t)nkv), *vd = malloc(sizeof(float) * (size_t)nkv);
	float *pd[2] = {malloc(sizeof(float) * (size_t)(B * Hkv * P * D + 1)),
			malloc(sizeof(float) * (size_t)(B * Hkv * P * D + 1))};
	uint8_t *pc[2] = {malloc((size_t)(B * Hkv * P * row + 1)),
			  malloc((size_t)(B * Hkv * P * row + 1))};
	int *codes[2] = {malloc(sizeof(int) * (size_t)nkv), malloc(sizeof(int) * (size_t)nkv)};
	for (int kv = 0; kv < 2; kv++) {
		for (int64_t i = 0; i < nsc; i++) /* codes up to about 2.5 sigma past the range */
			sc[kv][i] = (1.0f + 0.25f * frand()) * (t->bits == 8 ? 0.01f : 0.2f);
		for (int64_t i = 0; i < B * Hkv * P * row; i++)
			pc[kv][i] = (uint8_t)((frand() + 1) * 128); /* every byte value */
		for (int64_t r = 0; r < B * Hkv * P; r++)
			for (int64_t i = 0; i < D; i++) {
				const float s = sc[kv][t->chan ? r / P % Hkv * D + i : 0];
				const int code = row_code(pc[kv] + r * row, i, t->bits);
				pd[kv][r * D + i] = (float)code * s;
			}
		const float *x = kv ? v : k;
		float *xd = kv ? vd : kd;
		for (int64_t j = 0; j < nkv; j++) {
			const float s = sc[kv][t->chan ? j % (Hkv * D) : 0];
			codes[kv][j] = qcode(x[j], s, t->bits);
			xd[j] = (float)codes[kv][j] * s;
		}
	}
	int32_t total = (int32_t)t->total;
	om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){B, S, t->Hq * D}, q);
	const int64_t kvd[3] = {B, S, Hkv * D}, pdims[4] = {B, Hkv, P, D}, cd[4] = {B, Hkv, P, row};
	om_tensor tk = nt_tensor(OM_FLOAT, 3, kvd, k), tv = nt_tensor(OM_FLOAT, 3, kvd, v);
	om_tensor tkd = nt_tensor(OM_FLOAT, 3, kvd, kd), tvd = nt_tensor(OM_FLOAT, 3, kvd, vd);
	const int32_t cdt = t->bits == 8 ? OM_INT8 : OM_UINT8;
	om_tensor tpk = nt_tensor(cdt, 4, cd, pc[0]), tpv = nt_tensor(cdt, 4, cd, pc[1]);
	om_tensor tfk = nt_tensor(OM_FLOAT, 4, pdims, pd[0]);
	om_tensor tfv = nt_tensor(OM_FLOAT, 4, pdims, pd[1]);
	om_tensor tsl = nt_tensor(OM_INT32, 1, (int64_t[]){B}, (int32_t *)t->seqlens);
	om_tensor ttot = nt_tensor(OM_INT32, 0, NULL, &total);
	om_tensor tks = nt_tensor(OM_FLOAT, 1, &nsc, sc[0]);
	om_tensor tvs = nt_tensor(OM_FLOAT, 1, &nsc, sc[1]);
	const om_tensor *qin[14] = {&tq, &tk, &tv, &tpk, &tpv, &tsl, &ttot, NULL, NULL, NULL, NULL,
				    NULL, &tks, &tvs};
	const om_tensor *fin[7] = {&tq, &tkd, &tvd, &tfk, &tfv, &tsl, &ttot};
	om_model *mq = NULL, *mf = NULL;
	om_node *nq = nt_node(&mq, "GroupQueryAttention", 14, 3);
	om_node *nf = nt_node(&mf, "GroupQueryAttention", 7, 3);
	nq->domain = nf->domain = "com.microsoft";
	nt_int(nq, "num_heads", t->Hq), nt_int(nq, "kv_num_heads", Hkv);
	nt_int(nf, "num_heads", t->Hq), nt_int(nf, "kv_num_heads", Hkv);
	nt_str(nq, "k_quant_type", t->chan ? "PER_CHANNEL" : "PER_TENSOR");
	nt_str(nq, "v_quant_type", t->chan ? "PER_CHANNEL" : "PER_TENSOR");
	nt_int(nq, "kv_cache_bit_width", t->bits);
	om_tensor yq[3] = {0}, yf[3] = {0};
	om_status st = {0};
	if (nt_run_threads(nq, 1, qin, yq, exact, 2, &st))
		fail_msg("%s", st.msg);
	assert_int_equal(nt_run_threads(nf, 1, fin, yf, exact, 2, &st), OM_OK);
	for (int kv = 0; kv < 2; kv++) {
		assert_int_equal(yq[1 + kv].dtype, cdt);
		nt_assert_shape(&yq[1 + kv], 4, (int64_t[]){B, Hkv, Tp, row});
		check_present(t, yq[1 + kv].data, pc[kv], codes[kv]);
	}
	if (exact) /* the same values through the same path: the same bits */
		assert_memory_equal(yq[0].data, yf[0].data, yf[0].nbytes);
	else
		for (int64_t i = 0; i < om_tensor_numel(&yf[0]); i++) {
			const float *a = yq[0].data, *b = yf[0].data;
			assert_float_equal(a[i], b[i], 1e-5);
		}
	for (int i = 0; i < 3; i++)
		om_tensor_free(&yq[i]), om_tensor_free(&yf[i]);
	nt_free(mq), nt_free(mf);
	free(q), free(k), free(v), free(kd), free(vd);
	for (int kv = 0; kv < 2; kv++)
		free(pd[kv]), free(pc[kv]), free(codes[kv]);
}

static void quantized_caches(void **state)
{
	(void)state;
	/* B S Hq Hkv D P total seqlens bits chan */
	static const gq_qcase cases[] = {
		{1, 1, 4, 2, 16, 7, 8, {7, 0}, 8, 0},     {2, 1, 8, 2, 32, 33, 34, {33, 9}, 8, 1},
		{2, 1, 4, 2, 16, 7, 8, {7, 3}, 4, 0},     {1, 1, 4, 2, 16, 20, 21, {20, 0}, 4, 1},
		{1, 5, 4, 2, 16, 0, 5, {4, 0}, 8, 1},     {2, 4, 4, 4, 16, 0, 4, {3, 3}, 4, 0},
		{1, 3, 4, 2, 16, 6, 9, {8, 0}, 8, 0},     {2, 1, 4, 2, 16, 12, 10, {9, 5}, 4, 1},
		{1, 2, 2, 1, 7, 4, 6, {5, 0}, 4, 1},      {1, 2, 3, 3, 9, 3, 5, {4, 0}, 8, 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		for (int exact = 1; exact >= 0; exact--)
			run_quantized(&cases[i], exact);
}

/* inputs and attributes ONNX Runtime 1.30's CPU kernel refuses too: Unsupported naming the
 * node; a quantized cache's scales of the wrong size or type, a bit width other than 8 or 4:
 * invalid */
static void refused(void **state)
{
	(void)state;
	float x[64] = {0}, sc[16] = {0};
	int8_t codes[64] = {0};
	for (int k = 0; k < 6; k++) {
		om_model *m = NULL;
		om_node *node = nt_node(&m, "GroupQueryAttention", 16, 3);
		node->domain = "com.microsoft", node->name = "gqa_node";
		nt_int(node, "num_heads", 2), nt_int(node, "kv_num_heads", 1);
		const bool quant = k >= 2;
		if (quant) {
			nt_str(node, "k_quant_type", "PER_CHANNEL");
			nt_str(node, "v_quant_type", k == 2 ? "PER_TENSOR" : "PER_CHANNEL");
			nt_int(node, "kv_cache_bit_width", k == 3 ? 2 : 8);
		}
		if (k == 1)
			nt_int(node, "sliding_window_cache", 1),
			nt_int(node, "local_window_size", 2);
		int32_t sl = 3, tot = 4;
		om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 16}, x);
		om_tensor tk = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 8}, x);
		const int64_t pd[4] = {1, 1, 3, 8};
		om_tensor tp = quant ? nt_tensor(OM_INT8, 4, pd, codes)
				     : nt_tensor(OM_FLOAT, 4, pd, x);
		om_tensor tsl = nt_tensor(OM_INT32, 1, (int64_t[]){1}, &sl);
		om_tensor ttot = nt_tensor(OM_INT32, 0, NULL, &tot);
		const int64_t nsc = k == 4 ? 4 : 8; /* case 4: too few scales */
		om_tensor ts = nt_tensor(k == 5 ? OM_INT8 : OM_FLOAT, 1, &nsc, sc);
		om_tensor tn = nt_tensor(OM_FLOAT, 1, (int64_t[]){8}, x);
		const om_tensor *in[16] = {&tq, &tk, &tk, &tp, &tp, &tsl, &ttot, NULL, NULL, NULL,
					   NULL, NULL, quant ? &ts : NULL, quant ? &ts : NULL,
					   k == 0 ? &tn : NULL, k == 0 ? &tn : NULL};
		om_tensor y[3] = {0};
		om_status st = {0};
		const om_kind rc = nt_run_threads(node, 1, in, y, 1, 1, &st);
		assert_int_equal(rc, k < 3 ? OM_ERR_UNSUPPORTED : OM_ERR_INVALID_MODEL);
		if (strcmp(st.node, "gqa_node"))
			fail_msg("case %d: '%s' does not name the node", k, st.msg);
		nt_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(against_reference),
		cmocka_unit_test(bad_inputs),
		cmocka_unit_test(quantized_caches),
		cmocka_unit_test(refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
