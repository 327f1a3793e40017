/* test_qlinear.c — ONNX Runtime's QOperator ops (com.microsoft QLinearAdd, QLinearMul,
 * QLinearSigmoid, QLinearLeakyRelu, QLinearConcat, QLinearGlobalAveragePool,
 * QLinearAveragePool, QGemm) against references computed here in double from the ops'
 * definitions (dequantize, the float op, quantize: round half to even, saturate), over int8 and
 * uint8, zero points at the extremes, broadcasting shapes, every pooling attribute and QGemm's
 * transposes, C broadcasts, per-column B and both outputs. A result must be the reference's
 * rounding, either neighbour only where the reference lies within 1e-3 of a tie (there MLAS's
 * float arithmetic decides, which the oracle cases of tests/gen_cases_qlinear.py pin). Every
 * op gives the same bytes in exact and fast mode, on 1 and 2 threads; channels_last gives the
 * channels-first bytes transposed; the tables kept in a step's state follow new parameters;
 * om_simplify keeps the ops (no folding of a quantized model to float). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lut8.h"
#include "nodetest.h"
#include "testutil.h"

#define MS "com.microsoft"

static int32_t at8(bool sgn, const void *p, int64_t i)
{
	return sgn ? ((const int8_t *)p)[i] : ((const uint8_t *)p)[i];
}

static void fill8(nt_rng *r, bool sgn, uint8_t *p, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		p[i] = (uint8_t)(sgn ? nt_rand(r, -128, 127) : nt_rand(r, 0, 255));
}

/* got (a byte of the type) is r rounded half to even and saturated, or (r within 1e-3 of a
 * tie) either neighbour */
static void check_q(const void *got, int64_t i, bool sgn, double r, const char *what)
{
	const double lo = sgn ? -128 : 0, hi = sgn ? 127 : 255;
	const int32_t g = at8(sgn, got, i);
	const double f = floor(r), frac = r - f;
	double want = frac > 0.5 ? f + 1 : frac < 0.5 ? f : fmod(f, 2) == 0 ? f : f + 1;
	want = want < lo ? lo : want > hi ? hi : want;
	if (g == (int32_t)want)
		return;
	if (fabs(frac - 0.5) < 1e-3) {
		const double other = frac >= 0.5 ? f : f + 1;
		if (g == (int32_t)(other < lo ? lo : other > hi ? hi : other))
			return;
	}
	fail_msg("%s: element %lld is %d, the reference %.6f rounds to %d", what, (long long)i, g,
		 r, (int32_t)want);
}

/* runs n in exact mode on 1 thread, fast on 1 and on 2: the same bytes, left in *out */
static void run3(const om_node *n, const om_tensor *const *in, om_tensor *out)
{
	om_tensor o[3];
	for (int v = 0; v < 3; v++) {
		om_status st = {0};
		memset(&o[v], 0, sizeof o[v]);
		if (nt_run_threads(n, 1, in, &o[v], v == 0, v == 2 ? 2 : 1, &st))
			fail_msg("%s: %s", n->op, st.msg);
		if (v && (o[v].nbytes != o[0].nbytes || memcmp(o[v].data, o[0].data, o[0].nbytes)))
			fail_msg("%s: run %d differs from exact mode", n->op, v);
	}
	om_tensor_free(&o[1]), om_tensor_free(&o[2]);
	*out = o[0];
}

static om_node *ms_node(om_model **m, const char *op, int32_t nin)
{
	om_node *n = nt_node(m, op, nin, 1);
	n->domain = MS;
	return n;
}

/* ---- QLinearAdd, QLinearMul ------------------------------------------------------------- */

/* the broadcast index into a shape of `rank` dims (right-aligned to the output's) */
static int64_t bidx(int64_t i, int32_t orank, const int64_t *od, int32_t rank, const int64_t *d)
{
	int64_t k = 0, mul = 1;
	for (int32_t a = orank - 1; a >= 0; a--) {
		const int64_t c = i % od[a];
		i /= od[a];
		const int32_t b = a - (orank - rank);
		if (b >= 0) {
			k += (d[b] == 1 ? 0 : c) * mul;
			mul *= d[b];
		}
	}
	return k;
}

static void binary_case(bool mul, bool sgn, int32_t ra, const int64_t *da, int32_t rb,
			const int64_t *db, const int32_t zps[3], uint64_t seed)
{
	nt_rng r = {seed};
	const int32_t dt = sgn ? OM_INT8 : OM_UINT8;
	int64_t na = 1, nb = 1;
	for (int32_t i = 0; i < ra; i++)
		na *= da[i];
	for (int32_t i = 0; i < rb; i++)
		nb *= db[i];
	uint8_t *a = malloc((size_t)na + 1), *b = malloc((size_t)nb + 1), z[3];
	fill8(&r, sgn, a, na), fill8(&r, sgn, b, nb);
	float s[3];
	for (int k = 0; k < 3; k++) {
		s[k] = (float)nt_rand(&r, 20, 2000) / (mul && k == 2 ? 1000.0f : 20000.0f);
		z[k] = (uint8_t)zps[k];
	}
	om_model *m;
	om_node *n = ms_node(&m, mul ? "QLinearMul" : "QLinearAdd", 8);
	om_tensor ta = nt_tensor(dt, ra, da, a), tb = nt_tensor(dt, rb, db, b), ts[3], tz[3];
	for (int k = 0; k < 3; k++) {
		ts[k] = nt_tensor(OM_FLOAT, 0, NULL, &s[k]);
		tz[k] = nt_tensor(dt, k == 1 ? 1 : 0, (int64_t[]){1}, &z[k]);
	}
	const om_tensor *in[8] = {&ta, &ts[0], &tz[0], &tb, &ts[1], &tz[1], &ts[2], &tz[2]};
	om_tensor out;
	run3(n, in, &out);
	const int64_t ny = om_tensor_numel(&out);
	for (int64_t i = 0; i < ny; i++) {
		const double x = (double)s[0] * (at8(sgn, a, bidx(i, out.rank, out.dims, ra, da)) -
						 at8(sgn, z, 0));
		const double y = (double)s[1] * (at8(sgn, b, bidx(i, out.rank, out.dims, rb, db)) -
						 at8(sgn, z, 1));
		check_q(out.data, i, sgn, (mul ? x * y : x + y) / s[2] + at8(sgn, z, 2), n->op);
	}
	om_tensor_free(&out);
	nt_free(m);
	free(a), free(b);
}

static void add_mul(void **state)
{
	(void)state;
	static const struct {
		int32_t ra, rb;
		int64_t da[3], db[3];
	} shapes[] = {
		{2, 2, {3, 37}, {3, 37}}, {2, 1, {4, 33}, {33}},       {3, 2, {2, 6, 9}, {6, 1}},
		{2, 0, {7, 11}, {0}},     {1, 2, {1}, {3, 41}},         {3, 3, {3, 1, 5}, {1, 4, 1}},
		{1, 1, {4099}, {4099}},   {2, 2, {1, 1}, {1, 1}},       {3, 1, {2, 0, 3}, {3}},
	};
	static const int32_t zu[][3] = {{0, 255, 128}, {255, 0, 0}, {17, 3, 255}};
	static const int32_t zs[][3] = {{-128, 127, 0}, {127, -128, -128}, {5, -9, 127}};
	uint64_t seed = 1;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (int v = 0; v < 12; v++) {
			const bool mul = v & 1, sgn = v & 2;
			const int32_t *z = sgn ? zs[v / 4] : zu[v / 4];
			binary_case(mul, sgn, shapes[s].ra, shapes[s].da, shapes[s].rb,
				    shapes[s].db, z, ++seed);
		}
}

/* ---- QLinearSigmoid, QLinearLeakyRelu (tables) ------------------------------------------ */

static void act_case(bool leaky, bool sgn, float alpha, float xs, int32_t xz, float ys,
		     int32_t yz, void **slot)
{
	const int32_t dt = sgn ? OM_INT8 : OM_UINT8;
	uint8_t x[300], zx = (uint8_t)xz, zy = (uint8_t)yz;
	for (int i = 0; i < 300; i++)
		x[i] = (uint8_t)(i * 7);
	om_model *m;
	om_node *n = ms_node(&m, leaky ? "QLinearLeakyRelu" : "QLinearSigmoid", 5);
	if (leaky)
		nt_float(n, "alpha", alpha);
	om_tensor tx = nt_tensor(dt, 2, (int64_t[]){3, 100}, x);
	om_tensor txs = nt_tensor(OM_FLOAT, 0, NULL, &xs), tys = nt_tensor(OM_FLOAT, 0, NULL, &ys);
	om_tensor txz = nt_tensor(dt, 0, NULL, &zx), tyz = nt_tensor(dt, 0, NULL, &zy);
	const om_tensor *in[5] = {&tx, &txs, &txz, &tys, &tyz};
	om_tensor out;
	run3(n, in, &out);
	/* and with the step's state slot (the table kept by its parameters): the same bytes */
	void (*rel)(void *) = NULL;
	om_tensor o2 = {0};
	om_status st = {0};
	om_ctx c = {.threads = 1, .state = slot, .state_release = &rel};
	assert_int_equal(nt_run_ctx(n, 1, in, &o2, c, &st), OM_OK);
	assert_memory_equal(o2.data, out.data, 300);
	om_tensor_free(&o2);
	for (int i = 0; i < 300; i++) {
		const double v = (double)xs * (at8(sgn, x, i) - xz);
		const double f = leaky ? (v >= 0 ? v : (double)alpha * v) : 1 / (1 + exp(-v));
		check_q(out.data, i, sgn, f / ys + yz, n->op);
	}
	om_tensor_free(&out);
	nt_free(m);
}

static void tables(void **state)
{
	(void)state;
	void *slot = NULL; /* one slot through every case: each must rebuild its table */
	for (int v = 0; v < 8; v++) {
		const bool leaky = v & 1, sgn = v & 2, wide = v & 4;
		const int32_t xz = sgn ? (wide ? -128 : 127) : (wide ? 0 : 255);
		const int32_t yz = sgn ? (wide ? 127 : -128) : (wide ? 255 : 0);
		act_case(leaky, sgn, wide ? 0.3f : 0.01f, wide ? 0.09f : 0.031f, xz,
			 leaky ? 0.05f : 1 / 256.0f, leaky ? yz : (sgn ? -128 : 0), &slot);
		act_case(leaky, sgn, 1.7f, 0.02f, sgn ? 3 : 131, leaky ? 0.07f : 0.004f,
			 sgn ? -7 : 9, &slot);
	}
	free(slot);
}

/* ---- QLinearConcat ----------------------------------------------------------------------- */

static void concat_case(bool sgn, int32_t axis, int32_t k, const int64_t (*dims)[3], bool same)
{
	const int32_t dt = sgn ? OM_INT8 : OM_UINT8;
	nt_rng r = {(uint64_t)(axis + 7 * k + 100 * sgn)};
	uint8_t data[4][256], z[5];
	float s[5];
	om_tensor t[4], ts[5], tz[5];
	const om_tensor *in[14];
	om_model *m;
	om_node *n = ms_node(&m, "QLinearConcat", 2 + 3 * k);
	nt_int(n, "axis", axis);
	for (int i = 0; i <= k; i++) {
		s[i] = same && i ? s[0] : (float)nt_rand(&r, 50, 500) / 5000.0f;
		z[i] = same && i ? z[0] : (uint8_t)(sgn ? nt_rand(&r, -128, 127) : nt_rand(&r, 0, 255));
		if (i == 2)
			z[i] = sgn ? (uint8_t)-128 : 255;
		ts[i] = nt_tensor(OM_FLOAT, 0, NULL, &s[i]);
		tz[i] = nt_tensor(dt, 0, NULL, &z[i]);
	}
	in[0] = &ts[0], in[1] = &tz[0];
	for (int i = 0; i < k; i++) {
		fill8(&r, sgn, data[i], 256);
		t[i] = nt_tensor(dt, 3, dims[i], data[i]);
		in[2 + 3 * i] = &t[i], in[3 + 3 * i] = &ts[i + 1], in[4 + 3 * i] = &tz[i + 1];
	}
	om_tensor out;
	run3(n, in, &out);
	const int32_t ax = axis < 0 ? axis + 3 : axis;
	for (int64_t e = 0; e < om_tensor_numel(&out); e++) {
		int64_t c[3], rem = e;
		for (int d = 2; d >= 0; d--)
			c[d] = rem % out.dims[d], rem /= out.dims[d];
		int i = 0;
		while (c[ax] >= dims[i][ax])
			c[ax] -= dims[i++][ax];
		const int64_t src = (c[0] * dims[i][1] + c[1]) * dims[i][2] + c[2];
		const double v = (double)s[i + 1] * (at8(sgn, data[i], src) - at8(sgn, z, i + 1));
		check_q(out.data, e, sgn, v / s[0] + at8(sgn, z, 0), "QLinearConcat");
	}
	om_tensor_free(&out);
	nt_free(m);
}

static void concat(void **state)
{
	(void)state;
	const int64_t d1[3][3] = {{2, 3, 5}, {2, 7, 5}, {2, 1, 5}};
	const int64_t d0[3][3] = {{3, 4, 2}, {1, 4, 2}, {5, 4, 2}};
	const int64_t d2[3][3] = {{2, 3, 5}, {2, 3, 2}, {2, 3, 9}};
	const int64_t de[2][3] = {{2, 0, 3}, {2, 4, 3}};
	for (int sgn = 0; sgn < 2; sgn++)
		for (int same = 0; same < 2; same++) {
			concat_case(sgn, 1, 3, d1, same);
			concat_case(sgn, 0, 3, d0, same);
			concat_case(sgn, -1, 3, d2, same);
			concat_case(sgn, 1, 2, de, same);
			concat_case(sgn, 2, 1, d2, same);
		}
}

/* ---- QLinearGlobalAveragePool, QLinearAveragePool ---------------------------------------- */

typedef struct pcase {
	bool global, sgn, incl, ceil;
	int64_t x[4];           /* N, C, H, W */
	int64_t k[2], s[2], p[4]; /* kernel, strides, pads (AveragePool) */
	const char *auto_pad;
} pcase;

/* runs c on X (NCHW bytes, or the same values NHWC when last): Y in out */
static void pool_run(const pcase *c, const uint8_t *x, bool last, float xs, uint8_t xz, float ys,
		     uint8_t yz, om_tensor *out)
{
	const int32_t dt = c->sgn ? OM_INT8 : OM_UINT8;
	om_model *m;
	om_node *n = ms_node(&m, c->global ? "QLinearGlobalAveragePool" : "QLinearAveragePool", 5);
	if (last)
		nt_int(n, "channels_last", 1);
	if (!c->global) {
		nt_ints(n, "kernel_shape", c->k, 2);
		nt_ints(n, "strides", c->s, 2);
		if (c->auto_pad)
			nt_str(n, "auto_pad", c->auto_pad);
		else
			nt_ints(n, "pads", c->p, 4);
		nt_int(n, "count_include_pad", c->incl);
		nt_int(n, "ceil_mode", c->ceil);
	}
	const int64_t nhwc[4] = {c->x[0], c->x[2], c->x[3], c->x[1]};
	om_tensor tx = nt_tensor(dt, 4, last ? nhwc : c->x, x);
	om_tensor txs = nt_tensor(OM_FLOAT, 0, NULL, &xs), tys = nt_tensor(OM_FLOAT, 0, NULL, &ys);
	om_tensor txz = nt_tensor(dt, 0, NULL, &xz), tyz = nt_tensor(dt, 0, NULL, &yz);
	const om_tensor *in[5] = {&tx, &txs, &txz, &tys, &tyz};
	run3(n, in, out);
	nt_free(m);
}

static void pool_case(const pcase *c, uint64_t seed)
{
	nt_rng r = {seed};
	const int64_t N = c->x[0], C = c->x[1], H = c->x[2], W = c->x[3], n = N * C * H * W;
	uint8_t *x = malloc((size_t)n + 1), *xl = malloc((size_t)n + 1);
	fill8(&r, c->sgn, x, n);
	for (int64_t b = 0; b < N; b++) /* the same values NHWC */
		for (int64_t ch = 0; ch < C; ch++)
			for (int64_t i = 0; i < H * W; i++)
				xl[(b * H * W + i) * C + ch] = x[(b * C + ch) * H * W + i];
	/* extreme zero points, y's scale 2 to 3 times x's: averages of either sign stay inside
	 * the type (a saturated result would hide a wrong count) */
	const float xs = (float)nt_rand(&r, 10, 100) / 1000.0f;
	const float ys = xs * (float)nt_rand(&r, 200, 300) / 100.0f;
	const bool low = seed & 1; /* x's zero point at the type's top or bottom */
	const uint8_t xz = c->sgn ? (uint8_t)(low ? -128 : 127) : (low ? 0 : 255);
	const uint8_t yz = xz;
	om_tensor out, outl;
	pool_run(c, x, false, xs, xz, ys, yz, &out);
	pool_run(c, xl, true, xs, xz, ys, yz, &outl);
	const int64_t OH = out.dims[2], OW = out.dims[3];
	assert_int_equal(outl.dims[3], C);
	for (int64_t b = 0; b < N; b++)
		for (int64_t ch = 0; ch < C; ch++)
			for (int64_t oh = 0; oh < OH; oh++)
				for (int64_t ow = 0; ow < OW; ow++) {
					const int64_t o = ((b * C + ch) * OH + oh) * OW + ow;
					const int64_t ol = ((b * OH + oh) * OW + ow) * C + ch;
					assert_int_equal(((uint8_t *)out.data)[o],
							 ((uint8_t *)outl.data)[ol]);
					double sum = 0;
					int64_t cnt = 0, h0 = 0, w0 = 0, kh = H, kw = W;
					if (!c->global) {
						/* pads as the node gives them (auto_pad cases: the
						 * SAME/VALID pads their output extent implies) */
						const int64_t ph = c->auto_pad ? ((OH - 1) * c->s[0] +
							c->k[0] - H) / (strcmp(c->auto_pad, "VALID")
							? 2 : 1 << 30) : c->p[0];
						const int64_t pw = c->auto_pad ? ((OW - 1) * c->s[1] +
							c->k[1] - W) / (strcmp(c->auto_pad, "VALID")
							? 2 : 1 << 30) : c->p[1];
						h0 = oh * c->s[0] - ph, w0 = ow * c->s[1] - pw;
						kh = c->k[0], kw = c->k[1];
					}
					for (int64_t i = h0; i < h0 + kh; i++)
						for (int64_t j = w0; j < w0 + kw; j++) {
							if (i < 0 || j < 0 || i >= H || j >= W)
								continue;
							sum += (double)xs *
							       (at8(c->sgn, x, ((b * C + ch) * H + i) *
										     W + j) -
								at8(c->sgn, &xz, 0));
							cnt++;
						}
					const double avg = sum / (double)(c->incl ? kh * kw : cnt);
					check_q(out.data, o, c->sgn, avg / ys + at8(c->sgn, &yz, 0),
						c->global ? "QLinearGlobalAveragePool"
							  : "QLinearAveragePool");
				}
	om_tensor_free(&out), om_tensor_free(&outl);
	free(x), free(xl);
}

static void pools(void **state)
{
	(void)state;
	const pcase cases[] = {
		{.global = true, .x = {2, 5, 7, 9}},
		{.global = true, .x = {1, 3, 1, 1}},
		{.global = true, .x = {2, 1, 64, 65}},
		{.x = {2, 3, 9, 11}, .k = {3, 3}, .s = {1, 1}},
		{.x = {1, 4, 8, 7}, .k = {3, 2}, .s = {2, 1}, .p = {1, 0, 2, 1}},
		{.x = {1, 2, 7, 7}, .k = {3, 3}, .s = {1, 1}, .p = {1, 1, 1, 1}, .incl = true},
		{.x = {2, 3, 10, 9}, .k = {3, 3}, .s = {2, 2}, .ceil = true},
		{.x = {1, 2, 10, 9}, .k = {3, 3}, .s = {2, 2}, .p = {1, 1, 1, 1}, .ceil = true,
		 .incl = true},
		{.x = {1, 3, 8, 9}, .k = {3, 3}, .s = {2, 2}, .auto_pad = "SAME_UPPER"},
		{.x = {2, 2, 9, 8}, .k = {2, 3}, .s = {2, 2}, .auto_pad = "VALID"},
		{.x = {2, 3, 5, 6}, .k = {5, 6}, .s = {1, 1}},
		{.x = {1, 5, 1, 13}, .k = {1, 4}, .s = {1, 3}, .p = {0, 2, 0, 1}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (int sgn = 0; sgn < 2; sgn++) {
			pcase c = cases[i];
			c.sgn = sgn;
			pool_case(&c, 40 + i);
		}
}

/* ---- QGemm -------------------------------------------------------------------------------- */

typedef struct gcase {
	bool asg, bsg, ta, tb, per_col, yq;
	int64_t M, K, N;
	int32_t crank;   /* -1 no C; 0 scalar; 1 (N); 2 (cm, cn) */
	int64_t cm, cn;
	float alpha;
} gcase;

static void qgemm_case(const gcase *g, uint64_t seed)
{
	nt_rng r = {seed};
	const int64_t M = g->M, K = g->K, N = g->N, nc = g->per_col ? N : 1;
	const int32_t adt = g->asg ? OM_INT8 : OM_UINT8, bdt = g->bsg ? OM_INT8 : OM_UINT8;
	uint8_t *a = malloc((size_t)(M * K + 1)), *b = malloc((size_t)(K * N + 1)), bz[256];
	int32_t *cc = malloc(sizeof(int32_t) * (size_t)(M * N + 1));
	float bs[256], as = (float)nt_rand(&r, 10, 50) / 1000.0f, ys = 1.5f;
	uint8_t az = g->asg ? (uint8_t)-128 : 255, yz = g->asg ? 127 : 0;
	fill8(&r, g->asg, a, M * K), fill8(&r, g->bsg, b, K * N), fill8(&r, g->bsg, bz, nc);
	for (int64_t j = 0; j < nc; j++)
		bs[j] = (float)nt_rand(&r, 1, 100) / 10000.0f;
	for (int64_t i = 0; i < M * N; i++)
		cc[i] = (int32_t)nt_rand(&r, -30000, 30000);
	om_model *m;
	om_node *n = ms_node(&m, "QGemm", g->yq ? 9 : 7);
	nt_int(n, "transA", g->ta), nt_int(n, "transB", g->tb);
	if (g->alpha != 1.0f)
		nt_float(n, "alpha", g->alpha);
	const int64_t cd[2] = {g->crank == 1 ? N : g->cm, g->cn};
	om_tensor ta = nt_tensor(adt, 2, g->ta ? (int64_t[]){K, M} : (int64_t[]){M, K}, a);
	om_tensor tb = nt_tensor(bdt, 2, g->tb ? (int64_t[]){N, K} : (int64_t[]){K, N}, b);
	om_tensor tas = nt_tensor(OM_FLOAT, 0, NULL, &as), taz = nt_tensor(adt, 0, NULL, &az);
	om_tensor tbs = nt_tensor(OM_FLOAT, g->per_col, &nc, bs);
	om_tensor tbz = nt_tensor(bdt, g->per_col, &nc, bz);
	om_tensor tc = nt_tensor(OM_INT32, g->crank < 0 ? 0 : g->crank, cd, cc);
	om_tensor tys = nt_tensor(OM_FLOAT, 0, NULL, &ys), tyz = nt_tensor(adt, 0, NULL, &yz);
	const om_tensor *in[9] = {&ta, &tas, &taz, &tb, &tbs, &tbz, g->crank < 0 ? NULL : &tc,
				  &tys, &tyz};
	if (g->crank < 0)
		n->in[6] = NULL;
	om_tensor out;
	run3(n, in, &out);
	assert_int_equal(out.dtype, g->yq ? adt : OM_FLOAT);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			int64_t acc = 0;
			for (int64_t k = 0; k < K; k++)
				acc += (int64_t)(at8(g->asg, a, g->ta ? k * M + i : i * K + k) -
						 at8(g->asg, &az, 0)) *
				       (at8(g->bsg, b, g->tb ? j * K + k : k * N + j) -
					at8(g->bsg, bz, g->per_col ? j : 0));
			if (g->crank == 0)
				acc += cc[0];
			else if (g->crank == 1)
				acc += cc[j];
			else if (g->crank == 2)
				acc += cc[(g->cm == 1 ? 0 : i) * g->cn + (g->cn == 1 ? 0 : j)];
			const double s = (double)g->alpha * as * bs[g->per_col ? j : 0];
			if (!g->yq) {
				const float want = (float)acc * (g->alpha * as * bs[g->per_col ? j : 0]);
				assert_true(((float *)out.data)[i * N + j] == want);
				assert_true(fabs((double)want - (double)acc * s) <=
					    1e-6 * fabs((double)acc * s) + 1e-30);
				continue;
			}
			check_q(out.data, i * N + j, g->asg, (double)acc * s / ys +
				at8(g->asg, &yz, 0), "QGemm");
		}
	om_tensor_free(&out);
	nt_free(m);
	free(a), free(b), free(cc);
}

static void qgemm(void **state)
{
	(void)state;
	const gcase cases[] = {
		{.M = 5, .K = 37, .N = 19, .crank = -1, .yq = true, .alpha = 1},
		{.M = 7, .K = 64, .N = 33, .crank = 1, .yq = true, .alpha = 1, .per_col = true},
		{.M = 6, .K = 29, .N = 11, .crank = 2, .cm = 6, .cn = 11, .ta = true, .tb = true,
		 .yq = true, .alpha = 0.5f},
		{.M = 4, .K = 50, .N = 23, .crank = 2, .cm = 1, .cn = 23, .per_col = true,
		 .alpha = 1},
		{.M = 8, .K = 21, .N = 5, .crank = 2, .cm = 8, .cn = 1, .ta = true, .yq = true,
		 .alpha = 2},
		{.M = 2, .K = 99, .N = 31, .crank = 0, .tb = true, .alpha = 1},
		{.M = 1, .K = 1, .N = 1, .crank = 0, .yq = true, .alpha = 1},
		{.M = 33, .K = 300, .N = 70, .crank = 1, .per_col = true, .yq = true, .alpha = 1},
		{.M = 3, .K = 0, .N = 4, .crank = 1, .yq = true, .alpha = 1},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (int t = 0; t < 3; t++) { /* u8 x s8, u8 x u8, s8 x s8 */
			gcase g = cases[i];
			g.asg = t == 2, g.bsg = t != 1;
			qgemm_case(&g, 200 + i * 3 + (uint64_t)t);
		}
}

/* ---- the simplifier keeps them ------------------------------------------------------------- */

static om_value *init(om_graph *g, const char *name, int32_t dt, int32_t rank,
		      const int64_t *dims, const void *data)
{
	om_tensor *t = om_model_tensor(g->model, dt, rank, dims);
	assert_non_null(t);
	memcpy(t->data, data, t->nbytes);
	om_value *v = om_graph_value(g, name);
	om_type_from_tensor(g->model, &v->type, t);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

/* every input a constant: a QLinearAdd -> QLinearSigmoid -> QGemm chain is still there after
 * om_simplify, and the model gives the same bytes */
static void simplify_keeps(void **state)
{
	(void)state;
	om_model *m = tu_model_ms(13);
	om_graph *g = m->graph;
	uint8_t x[8] = {1, 50, 100, 150, 200, 250, 7, 9}, z = 128;
	int8_t w[8] = {1, -2, 3, -4, 5, -6, 7, -8}, wz = 0;
	float s = 0.05f;
	init(g, "x", OM_UINT8, 2, (int64_t[]){2, 4}, x);
	init(g, "s", OM_FLOAT, 0, NULL, &s);
	init(g, "z", OM_UINT8, 0, NULL, &z);
	init(g, "w", OM_INT8, 2, (int64_t[]){4, 2}, w);
	init(g, "wz", OM_INT8, 0, NULL, &wz);
	tu_graph_node(g, "QLinearAdd", "x,s,z,x,s,z,s,z", "a")->domain = MS;
	tu_graph_node(g, "QLinearSigmoid", "a,s,z,s,z", "b")->domain = MS;
	tu_graph_node(g, "QGemm", "b,s,z,w,s,wz", "y")->domain = MS;
	om_value *y = om_graph_value(g, "y");
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_simplify_options o = {.verify = 1};
	om_status st = {0};
	assert_int_equal(om_simplify(m, &o, &st), OM_OK);
	assert_int_equal(tu_count_op(g, "QLinearAdd"), 1);
	assert_int_equal(tu_count_op(g, "QLinearSigmoid"), 1);
	assert_int_equal(tu_count_op(g, "QGemm"), 1);
	om_model_free(m);
}

/* om_lut8 (the tables' loop: VBMI's permutes 64 bytes at a time where the CPU has them) against
 * the entries read one by one: every byte value, lengths around the vector's 64, in place */
static void lut8(void **state)
{
	(void)state;
	uint8_t table[256], x[1100], y[1100], z[1100];
	uint32_t r = 7;
	for (int i = 0; i < 256; i++)
		table[i] = (uint8_t)(i * 167 + 13);
	for (int i = 0; i < 1100; i++)
		r = r * 1103515245u + 12345u, x[i] = (uint8_t)(i < 256 ? (uint32_t)i : r >> 16);
	const int64_t lens[] = {0, 1, 63, 64, 65, 127, 128, 200, 1100};
	for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
		const int64_t n = lens[k];
		memset(y, 0xAB, sizeof y);
		om_lut8(table, x, y, n);
		for (int64_t i = 0; i < n; i++)
			if (y[i] != table[x[i]])
				fail_msg("n %lld: y[%lld] %d, table[%d] %d", (long long)n, (long long)i,
					 y[i], x[i], table[x[i]]);
		for (int64_t i = n; i < (int64_t)sizeof y; i++)
			assert_int_equal(y[i], 0xAB); /* nothing past n written */
		memcpy(z, x, sizeof z);
		om_lut8(table, z, z, n);
		assert_memory_equal(z, y, (size_t)n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(add_mul),   cmocka_unit_test(tables), cmocka_unit_test(concat),
		cmocka_unit_test(pools),     cmocka_unit_test(qgemm),
		cmocka_unit_test(simplify_keeps), cmocka_unit_test(lut8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
