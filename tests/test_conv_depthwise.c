/* test_conv_depthwise.c — depthwise Conv (one input channel per group, channel multiplier 1
 * or 2) against a float64 direct loop on random shapes: 3x3 (the fused one-pass rows) and
 * other kernels, strides 1-3, dilations 1-2, asymmetric pads, 1-D; exact and fast mode give
 * the same bits (the loop is the same in both), with bias, Z and an activation. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(depthwise_matches_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
