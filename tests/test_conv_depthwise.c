/* test_conv_depthwise.c — depthwise Conv (one input channel per group, channel multiplier 1
 * or 2) against a float64 direct loop on random shapes: 1x1, 3x3, 5x5, 7x7 and uneven kernels,
 * strides 1-3, dilations 1-2, asymmetric and large pads, odd channel counts, 1-D; exact and
 * fast mode give the same bits (the loop is the same in both), with bias, Z and an activation;
 * without the epilogue, the bits of a float32 loop summing each output's taps in (kh, kw) order
 * from +0 (conv_depthwise.h's contract, which the phase loop keeps by adding padding taps). */
#include <math.h>
#include <stdlib.h>

#include "nodetest.h"

typedef struct dcase {
	int32_t sp;              /* spatial axes: 1 or 2 */
	int64_t N, C, mult, H, W, kh, kw, s, d, pads[4]; /* pads: top, left, bottom, right */
} dcase;

static const dcase cases[] = {
	{2, 1, 3, 1, 9, 10, 3, 3, 1, 1, {1, 1, 1, 1}},
	{2, 2, 4, 2, 8, 7, 3, 3, 1, 1, {0, 0, 1, 2}},  /* left pad 0: interior from column 0 */
	{2, 1, 5, 1, 11, 12, 3, 3, 2, 1, {1, 0, 0, 1}},
	{2, 1, 2, 1, 10, 9, 3, 3, 3, 2, {2, 2, 2, 2}},
	{2, 1, 3, 1, 6, 33, 3, 3, 1, 2, {0, 2, 0, 2}},
	{2, 1, 2, 1, 3, 2, 3, 3, 1, 1, {1, 1, 1, 1}},  /* smaller than the kernel */
	{2, 1, 3, 1, 9, 9, 5, 5, 2, 1, {2, 2, 2, 2}},
	{1, 2, 3, 1, 1, 17, 1, 3, 2, 1, {0, 1, 0, 1}},
	/* the epilogue runs on runs of rows of at least 256 outputs: 2 rows of 100 (last run
	 * one row), whole 300-wide rows, a whole 7 x 7 plane, runs of 25 rows of 10 */
	{2, 1, 2, 1, 5, 100, 3, 3, 1, 1, {1, 1, 1, 1}},
	{2, 2, 2, 1, 3, 300, 3, 3, 1, 1, {1, 1, 1, 1}},
	{2, 2, 3, 1, 7, 7, 3, 3, 1, 1, {1, 1, 1, 1}},
	{2, 1, 2, 1, 60, 20, 3, 3, 2, 1, {1, 1, 1, 1}},
	/* 5x5 and 7x7 at strides 1-3 (mobilenet_v3's and efficientnet's 5x5, 7x7 maps) */
	{2, 1, 5, 1, 7, 7, 5, 5, 1, 1, {2, 2, 2, 2}},
	{2, 2, 3, 1, 14, 14, 5, 5, 2, 1, {2, 2, 2, 2}},
	{2, 1, 7, 1, 15, 13, 5, 5, 2, 1, {1, 2, 2, 1}},
	{2, 1, 3, 2, 11, 10, 5, 5, 3, 1, {2, 2, 2, 2}},
	{2, 1, 3, 1, 16, 17, 7, 7, 1, 1, {3, 3, 3, 3}},
	{2, 1, 5, 1, 23, 21, 7, 7, 2, 1, {3, 3, 3, 3}},
	{2, 1, 3, 1, 19, 20, 7, 7, 2, 2, {6, 5, 6, 7}}, /* dilated, strided, uneven pads */
	{2, 1, 3, 1, 12, 12, 5, 5, 1, 2, {4, 4, 4, 4}},
	{2, 1, 3, 1, 9, 11, 3, 5, 1, 1, {1, 2, 1, 2}},  /* uneven kernel */
	{2, 1, 5, 1, 10, 9, 5, 3, 2, 1, {2, 1, 2, 1}},
	{2, 1, 7, 1, 6, 9, 1, 1, 1, 1, {0, 0, 0, 0}},   /* 1x1 */
	{2, 1, 3, 1, 6, 9, 1, 1, 2, 1, {1, 1, 0, 0}},   /* 1x1 strided, padded */
	{2, 1, 3, 1, 4, 3, 5, 5, 1, 1, {6, 6, 6, 6}},   /* pads beyond the kernel: padding rows */
	{2, 1, 2, 1, 3, 3, 7, 7, 2, 1, {3, 3, 3, 3}},   /* image smaller than the kernel */
	{2, 1, 2, 1, 40, 3, 3, 3, 5, 1, {1, 1, 1, 1}},  /* stride above the kernel */
	{1, 2, 3, 1, 1, 40, 1, 5, 2, 1, {0, 2, 0, 2}},  /* 1-D 5 taps */
	{1, 1, 3, 2, 1, 33, 1, 7, 1, 2, {0, 6, 0, 5}},
	{2, 1, 9, 1, 50, 50, 3, 3, 1, 1, {1, 1, 1, 1}}, /* runs of 32 outputs and a tail */
};

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)(seed >> 8) % 20001) / 10000.0f;
	}
}

static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t pb, int64_t pe)
{
	return (in + pb + pe - (k - 1) * d - 1) / s + 1;
}

static void check(const dcase *k, int act)
{
	const int64_t M = k->C * k->mult;
	const int64_t OH = out_extent(k->H, k->kh, k->s, k->d, k->pads[0], k->pads[2]);
	const int64_t OW = out_extent(k->W, k->kw, k->s, k->d, k->pads[1], k->pads[3]);
	const int64_t nx = k->N * k->C * k->H * k->W, nw = M * k->kh * k->kw;
	const int64_t ny = k->N * M * OH * OW;
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float *b = malloc(sizeof(float) * (size_t)M), *z = malloc(sizeof(float) * (size_t)ny);
	float *ref = malloc(sizeof(float) * (size_t)ny);
	fill(x, nx, 1), fill(w, nw, 2), fill(b, M, 3), fill(z, ny, 4);
	for (int64_t o = 0; o < ny; o++) {
		int64_t ow = o % OW, oh = o / OW % OH, m = o / (OW * OH) % M, n = o / (OW * OH * M);
		double v = b[m];
		for (int64_t i = 0; i < k->kh; i++)
			for (int64_t j = 0; j < k->kw; j++) {
				int64_t ih = oh * k->s - k->pads[0] + i * k->d;
				int64_t iw = ow * k->s - k->pads[1] + j * k->d;
				if (ih >= 0 && ih < k->H && iw >= 0 && iw < k->W)
					v += (double)w[(m * k->kh + i) * k->kw + j] *
					     x[((n * k->C + m / k->mult) * k->H + ih) * k->W + iw];
			}
		v += z[o];
		ref[o] = act && v < 0 ? 0.0f : (float)v;
	}
	om_model *mo = om_model_new();
	mo->graph = om_graph_new(mo, NULL);
	om_node *nd = om_graph_add_node(mo->graph, "FusedConv", "com.microsoft", "f", 4, 1);
	for (int32_t i = 0; i < 4; i++)
		nd->in[i] = nt_value(mo, "i", i);
	om_node_set_output(nd, 0, nt_value(mo, "o", 0));
	nt_int(nd, "group", k->C);
	const int32_t n = k->sp;
	const int64_t *pads = k->pads;
	nt_ints(nd, "strides", (int64_t[]){k->s, k->s}, n);
	nt_ints(nd, "dilations", (int64_t[]){k->d, k->d}, n);
	nt_ints(nd, "pads", n == 2 ? pads : (int64_t[]){pads[1], pads[3]}, 2 * n);
	if (act)
		nt_str(nd, "activation", "Relu");
	const int64_t xd[] = {k->N, k->C, k->H, k->W}, wd[] = {M, 1, k->kh, k->kw};
	const int64_t yd[] = {k->N, M, OH, OW};
	const int64_t *xs = n == 2 ? xd : (int64_t[]){k->N, k->C, k->W};
	const int64_t *ws = n == 2 ? wd : (int64_t[]){M, 1, k->kw};
	const int64_t *ys = n == 2 ? yd : (int64_t[]){k->N, M, OW};
	om_tensor tx = nt_tensor(OM_FLOAT, n + 2, xs, x), tw = nt_tensor(OM_FLOAT, n + 2, ws, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, &M, b), tz = nt_tensor(OM_FLOAT, n + 2, ys, z);
	om_tensor out[2][1];
	om_status st = {0};
	for (int exact = 0; exact < 2; exact++) {
		assert_int_equal(nt_run_mode(nd, 1, (const om_tensor *[]){&tx, &tw, &tb, &tz},
					out[exact], exact, &st), OM_OK);
		nt_assert_shape(&out[exact][0], n + 2, ys);
		nt_assert_floats(&out[exact][0], ref, ny, 1e-5f);
	}
	assert_memory_equal(out[0][0].data, out[1][0].data, out[0][0].nbytes);
	om_tensor_free(&out[0][0]), om_tensor_free(&out[1][0]);
	om_model_free(mo);
	free(x), free(w), free(b), free(z), free(ref);
}

static void depthwise_matches_reference(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		for (int act = 0; act < 2; act++)
			check(&cases[i], act);
}

/* The bits of the contract: plain Conv (no epilogue), each output +0 plus its taps inside the
 * image in (kh, kw) order, in float32 without contraction (C11: -ffp-contract=off), in both
 * modes */
static void check_bits(const dcase *k)
{
	const int64_t M = k->C * k->mult;
	const int64_t OH = out_extent(k->H, k->kh, k->s, k->d, k->pads[0], k->pads[2]);
	const int64_t OW = out_extent(k->W, k->kw, k->s, k->d, k->pads[1], k->pads[3]);
	const int64_t nx = k->N * k->C * k->H * k->W, nw = M * k->kh * k->kw;
	const int64_t ny = k->N * M * OH * OW;
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float *ref = malloc(sizeof(float) * (size_t)ny);
	fill(x, nx, 5), fill(w, nw, 6);
	for (int64_t o = 0; o < ny; o++) {
		int64_t ow = o % OW, oh = o / OW % OH, m = o / (OW * OH) % M, n = o / (OW * OH * M);
		float v = 0.0f;
		for (int64_t i = 0; i < k->kh; i++)
			for (int64_t j = 0; j < k->kw; j++) {
				int64_t ih = oh * k->s - k->pads[0] + i * k->d;
				int64_t iw = ow * k->s - k->pads[1] + j * k->d;
				if (ih >= 0 && ih < k->H && iw >= 0 && iw < k->W)
					v = v + w[(m * k->kh + i) * k->kw + j] *
							x[((n * k->C + m / k->mult) * k->H + ih) *
								  k->W + iw];
			}
		ref[o] = v;
	}
	om_model *mo = om_model_new();
	om_node *nd = nt_add_node(mo, "Conv", 2, 1);
	const int32_t n = k->sp;
	nt_int(nd, "group", k->C);
	nt_ints(nd, "strides", (int64_t[]){k->s, k->s}, n);
	nt_ints(nd, "dilations", (int64_t[]){k->d, k->d}, n);
	nt_ints(nd, "pads", n == 2 ? k->pads : (int64_t[]){k->pads[1], k->pads[3]}, 2 * n);
	const int64_t xd[] = {k->N, k->C, k->H, k->W}, wd[] = {M, 1, k->kh, k->kw};
	const int64_t *xs = n == 2 ? xd : (int64_t[]){k->N, k->C, k->W};
	const int64_t *ws = n == 2 ? wd : (int64_t[]){M, 1, k->kw};
	om_tensor tx = nt_tensor(OM_FLOAT, n + 2, xs, x), tw = nt_tensor(OM_FLOAT, n + 2, ws, w);
	om_status st = {0};
	for (int exact = 0; exact < 2; exact++) {
		om_tensor out[1];
		assert_int_equal(nt_run_mode(nd, 13, (const om_tensor *[]){&tx, &tw}, out, exact,
					     &st),
				 OM_OK);
		assert_int_equal(out[0].nbytes, sizeof(float) * (size_t)ny);
		assert_memory_equal(out[0].data, ref, out[0].nbytes);
		om_tensor_free(&out[0]);
	}
	om_model_free(mo);
	free(x), free(w), free(ref);
}

static void depthwise_sums_taps_in_order(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		check_bits(&cases[i]);
}

/* A padding tap is skipped, never multiplied: an infinite weight on a tap that only ever
 * reads padding leaves the outputs finite (the zero-padded phase loop would give inf * 0 =
 * NaN there, so a channel with a non-finite weight keeps the border loops). x = 1, 2 x 2,
 * pads 1: every output reads four taps, the infinite one (top left) only at output (1, 1);
 * channel 1 has 0 there. */
static void depthwise_skips_padding_taps(void **state)
{
	(void)state;
	float x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
	float w[18] = {INFINITY, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1, 2, 3, 4, 5, 6, 7, 8};
	const int64_t xd[] = {1, 2, 2, 2}, wd[] = {2, 1, 3, 3};
	om_model *mo = om_model_new();
	om_node *nd = nt_add_node(mo, "Conv", 2, 1);
	nt_int(nd, "group", 2);
	nt_ints(nd, "pads", (int64_t[]){1, 1, 1, 1}, 4);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, xd, x), tw = nt_tensor(OM_FLOAT, 4, wd, w);
	om_status st = {0};
	for (int exact = 0; exact < 2; exact++) {
		om_tensor out[1];
		assert_int_equal(nt_run_mode(nd, 13, (const om_tensor *[]){&tx, &tw}, out, exact,
					     &st),
				 OM_OK);
		const float *y = out[0].data;
		/* (0,0): w4 w5 w7 w8; (0,1): w3 w4 w6 w7; (1,0): w1 w2 w4 w5; (1,1): w0 .. */
		assert_true(y[0] == 24.0f && y[1] == 20.0f && y[2] == 12.0f);
		assert_true(isinf(y[3]));
		/* channel 1: finite weights (the padded path) */
		assert_true(y[4] == 24.0f && y[5] == 20.0f && y[6] == 12.0f && y[7] == 8.0f);
		om_tensor_free(&out[0]);
	}
	om_model_free(mo);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(depthwise_matches_reference),
		cmocka_unit_test(depthwise_sums_taps_in_order),
		cmocka_unit_test(depthwise_skips_padding_taps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
