/* test_conv_im2col_big.c — the im2col path with weight blocks of OM_WARM_FLOATS floats or more
 * (each group's block warmed before its first product): 2-D stride-2 3x3 and 1x1 convs, odd and
 * even extents, asymmetric pads, groups, batch 2; and output rows whose im2col columns overflow
 * the column budget (1-D convs of 4000 output positions, a 2-D conv 500 wide: rows in
 * chunks); in exact mode and in fast mode at 1 and 2 threads, against a float64 loop within
 * 128 ulps of the largest sum |w| |x| + |b| within 3 positions (as test_conv_random.c). */
#include <stdlib.h>

#include "conv_winograd.h"
#include "nodetest.h"

typedef struct geo {
	int64_t N, C, M, group, H, W, k, s, pads[4]; /* pads: top, left, bottom, right */
	int32_t rank; /* 3: a 1-D conv along W (H 1, top and bottom pads 0); 4: 2-D */
} geo;

static const geo cases[] = {
	{1, 32, 16, 1, 12, 12, 3, 2, {1, 1, 1, 1}, 4},
	{2, 64, 32, 2, 9, 11, 3, 2, {1, 0, 0, 1}, 4}, /* groups, batch, odd extents */
	{1, 40, 24, 1, 8, 7, 3, 2, {0, 0, 0, 0}, 4},
	{2, 48, 96, 3, 13, 6, 3, 2, {0, 1, 1, 0}, 4},
	{1, 64, 128, 1, 14, 14, 1, 2, {0, 0, 0, 0}, 4}, /* the 1x1 stride-2 downsample */
	/* rows in chunks: an audio stem (80 taps, stride 4), a 3-tap conv, a wide 2-D row */
	{1, 1, 64, 1, 1, 16000, 80, 4, {0, 40, 0, 40}, 3},
	{2, 96, 32, 1, 1, 4001, 3, 1, {0, 1, 0, 0}, 3},
	{1, 128, 16, 1, 5, 1000, 3, 2, {1, 1, 0, 1}, 4},
};

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)((seed >> 8) % 20001) - 10000) / 10000.0f;
	}
}

static int64_t out_len(int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1)
{
	return (in + p0 + p1 - k) / s + 1;
}

static void one(const geo *g, uint32_t seed)
{
	const int32_t rank = g->rank;
	const int64_t kh = rank == 3 ? 1 : g->k, sh = rank == 3 ? 1 : g->s;
	const int64_t Cg = g->C / g->group, Mg = g->M / g->group, K = kh * g->k;
	const int64_t OH = out_len(g->H, kh, sh, g->pads[0], g->pads[2]);
	const int64_t OW = out_len(g->W, g->k, g->s, g->pads[1], g->pads[3]);
	assert_true(Mg * Cg * K >= OM_WARM_FLOATS);
	int64_t xd[4] = {g->N, g->C, g->H, g->W}, wd[4] = {g->M, Cg, kh, g->k};
	if (rank == 3)
		xd[2] = g->W, wd[2] = g->k;
	int64_t nx = g->N * g->C * g->H * g->W, nw = g->M * Cg * K, ny = g->N * g->M * OH * OW;
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float *b = malloc(sizeof(float) * (size_t)g->M);
	double *val = malloc(sizeof(double) * (size_t)ny), *sc = malloc(sizeof(double) * (size_t)ny);
	fill(x, nx, seed), fill(w, nw, seed + 1), fill(b, g->M, seed + 2);
	for (int64_t o = 0; o < ny; o++) {
		int64_t ox = o % OW, oy = o / OW % OH, m = o / (OH * OW) % g->M;
		int64_t n = o / (OH * OW * g->M);
		double v = b[m], a = fabs(b[m]);
		for (int64_t c = 0; c < Cg; c++)
			for (int64_t i = 0; i < kh; i++)
				for (int64_t j = 0; j < g->k; j++) {
					int64_t yy = oy * sh - g->pads[0] + i;
					int64_t xx = ox * g->s - g->pads[1] + j;
					if (yy < 0 || yy >= g->H || xx < 0 || xx >= g->W)
						continue;
					double p = (double)w[(m * Cg + c) * K + i * g->k + j] *
						   x[((n * g->C + m / Mg * Cg + c) * g->H + yy) * g->W +
						     xx];
					v += p;
					a += fabs(p);
				}
		val[o] = v;
		sc[o] = a;
	}
	om_model *mo = om_model_new();
	om_node *nd = nt_add_node(mo, "Conv", 3, 1);
	nt_int(nd, "group", g->group);
	if (rank == 3) {
		nt_ints(nd, "strides", &g->s, 1);
		nt_ints(nd, "pads", (const int64_t[]){g->pads[1], g->pads[3]}, 2);
	} else {
		nt_ints(nd, "strides", (const int64_t[]){g->s, g->s}, 2);
		nt_ints(nd, "pads", g->pads, 4);
	}
	om_tensor tx = nt_tensor(OM_FLOAT, rank, xd, x), tw = nt_tensor(OM_FLOAT, rank, wd, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, &g->M, b);
	/* exact, fast at one thread, fast at two */
	om_tensor out[3][1];
	om_status st = {0};
	for (int r = 0; r < 3; r++) {
		assert_int_equal(nt_run_threads(nd, 13, (const om_tensor *[]){&tx, &tw, &tb},
						out[r], r == 0, r == 2 ? 2 : 1, &st),
				 OM_OK);
		assert_int_equal(out[r][0].dims[rank - 1], OW);
		if (rank == 4)
			assert_int_equal(out[r][0].dims[2], OH);
	}
	for (int64_t o = 0; o < ny; o++) {
		double big = 0;
		int64_t p = o % (OH * OW), base = o - p, oy = p / OW, ox = p % OW;
		for (int64_t y = oy - 3; y <= oy + 3; y++)
			for (int64_t z = ox - 3; z <= ox + 3; z++)
				if (y >= 0 && y < OH && z >= 0 && z < OW && sc[base + y * OW + z] > big)
					big = sc[base + y * OW + z];
		for (int r = 0; r < 3; r++) {
			double got = ((const float *)out[r][0].data)[o];
			if (!(fabs(got - val[o]) <= 128.0 / 16777216.0 * big + 1e-30))
				fail_msg("%s: output %lld: %.9g, expected %.9g (C %lld, M %lld, "
					 "group %lld, %lldx%lld)",
					 r == 0 ? "exact" : r == 1 ? "fast" : "fast, 2 threads",
					 (long long)o, got, val[o],
					 (long long)g->C, (long long)g->M, (long long)g->group,
					 (long long)g->H, (long long)g->W);
		}
	}
	for (int r = 0; r < 3; r++)
		om_tensor_free(&out[r][0]);
	om_model_free(mo);
	free(x), free(w), free(b), free(val), free(sc);
}

static void big_weights_match_reference(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		one(&cases[i], 31 + 7 * (uint32_t)i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(big_weights_match_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
