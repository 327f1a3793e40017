/* test_conv_random.c — Conv on random geometries (batch, channels, groups, kernel 1-5, strides
 * 1-3, dilations 1-2, asymmetric pads, 1-D and 2-D): fast mode (Winograd, depthwise, 1x1 GEMM,
 * im2col, whichever each geometry takes) against exact mode (fixed-order im2col, depthwise),
 * within 128 ulps of the largest sum |w| |x| + |b| of the output's neighbourhood (see
 * test_conv_winograd.c for why a neighbourhood), and exact mode against a float64 loop. */
#include <stdlib.h>

#include "nodetest.h"

static uint32_t rnd(uint32_t *s, uint32_t n)
{
	*s = *s * 1664525u + 1013904223u;
	return (*s >> 8) % n;
}

static void fill(float *v, int64_t n, uint32_t *s)
{
	for (int64_t i = 0; i < n; i++)
		v[i] = (float)((int32_t)rnd(s, 20001) - 10000) / 10000.0f;
}

typedef struct geo {
	int32_t n; /* spatial axes */
	int64_t N, C, M, group, in[2], k[2], s[2], d[2], pb[2], pe[2], out[2];
} geo;

static bool draw(geo *g, uint32_t *s)
{
	g->n = rnd(s, 4) ? 2 : 1;
	g->N = 1 + rnd(s, 2);
	g->group = rnd(s, 3) ? 1 : 1 + rnd(s, 4);
	int64_t cg = rnd(s, 2) ? 1 + rnd(s, 4) : 6 + rnd(s, 12), mg = 1 + rnd(s, 6);
	if (g->group > 1 && rnd(s, 2))
		cg = 1; /* depthwise */
	g->C = cg * g->group;
	g->M = mg * g->group;
	for (int32_t i = 0; i < g->n; i++) {
		bool w3 = rnd(s, 2);
		g->k[i] = w3 ? 3 : 1 + rnd(s, 5);
		g->s[i] = w3 ? 1 : 1 + rnd(s, 3);
		g->d[i] = w3 ? 1 : 1 + rnd(s, 2);
		g->in[i] = 1 + rnd(s, w3 ? 30 : 18);
		g->pb[i] = rnd(s, 4);
		g->pe[i] = rnd(s, 4);
		int64_t span = g->in[i] + g->pb[i] + g->pe[i] - (g->k[i] - 1) * g->d[i];
		if (span < 1)
			return false;
		g->out[i] = (span - 1) / g->s[i] + 1;
	}
	return true;
}

static int64_t prod(const int64_t *d, int32_t n)
{
	int64_t p = 1;
	for (int32_t i = 0; i < n; i++)
		p *= d[i];
	return p;
}

/* float64 value and scale of output o */
static void direct(const geo *g, const float *x, const float *w, const float *b, int64_t o,
		   double *val, double *scale)
{
	int64_t P = prod(g->out, g->n), Cg = g->C / g->group, Mg = g->M / g->group;
	int64_t K = prod(g->k, g->n), Pin = prod(g->in, g->n);
	int64_t n = o / (g->M * P), m = o / P % g->M, p = o % P;
	int64_t op[2] = {g->n == 2 ? p / g->out[1] : p, g->n == 2 ? p % g->out[1] : 0};
	double v = b[m], a = fabs(b[m]);
	for (int64_t c = 0; c < Cg; c++)
		for (int64_t t = 0; t < K; t++) {
			int64_t tk[2] = {g->n == 2 ? t / g->k[1] : t, g->n == 2 ? t % g->k[1] : 0};
			int64_t pos = 0;
			bool in = true;
			for (int32_t i = 0; i < g->n; i++) {
				int64_t q = op[i] * g->s[i] - g->pb[i] + tk[i] * g->d[i];
				in = in && q >= 0 && q < g->in[i];
				pos = pos * g->in[i] + q;
			}
			if (!in)
				continue;
			double pr = (double)w[(m * Cg + c) * K + t] *
				    x[(n * g->C + m / Mg * Cg + c) * Pin + pos];
			v += pr;
			a += fabs(pr);
		}
	*val = v;
	*scale = a;
}

static void one(const geo *g, uint32_t *s)
{
	int32_t r = g->n + 2;
	int64_t xd[4] = {g->N, g->C}, wd[4] = {g->M, g->C / g->group};
	for (int32_t i = 0; i < g->n; i++)
		xd[2 + i] = g->in[i], wd[2 + i] = g->k[i];
	int64_t nx = prod(xd, r), nw = prod(wd, r), ny = g->N * g->M * prod(g->out, g->n);
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float *b = malloc(sizeof(float) * (size_t)g->M);
	double *val = malloc(sizeof(double) * (size_t)ny);
	double *sc = malloc(sizeof(double) * (size_t)ny);
	fill(x, nx, s), fill(w, nw, s), fill(b, g->M, s);
	for (int64_t o = 0; o < ny; o++)
		direct(g, x, w, b, o, &val[o], &sc[o]);
	om_model *mo = om_model_new();
	om_node *nd = nt_add_node(mo, "Conv", 3, 1);
	nt_int(nd, "group", g->group);
	nt_ints(nd, "strides", g->s, g->n);
	nt_ints(nd, "dilations", g->d, g->n);
	int64_t pads[4] = {g->pb[0], g->pb[1], g->pe[0], g->pe[1]};
	if (g->n == 1)
		pads[1] = g->pe[0];
	nt_ints(nd, "pads", pads, 2 * g->n);
	om_tensor tx = nt_tensor(OM_FLOAT, r, xd, x), tw = nt_tensor(OM_FLOAT, r, wd, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, &g->M, b);
	om_tensor out[2][1];
	om_status st = {0};
	for (int exact = 0; exact < 2; exact++)
		assert_int_equal(nt_run_mode(nd, 13, (const om_tensor *[]){&tx, &tw, &tb}, out[exact],
					exact, &st), OM_OK);
	/* neighbourhood scale: the largest within 3 positions on every axis of the same plane */
	int64_t P = prod(g->out, g->n), OW = g->n == 2 ? g->out[1] : g->out[0];
	for (int64_t o = 0; o < ny; o++) {
		double big = 0;
		int64_t p = o % P, base = o - p, oy = p / OW, ox = p % OW;
		for (int64_t y = oy - 3; y <= oy + 3; y++)
			for (int64_t z = ox - 3; z <= ox + 3; z++)
				if (y >= 0 && y * OW < P && z >= 0 && z < OW &&
				    sc[base + y * OW + z] > big)
					big = sc[base + y * OW + z];
		for (int exact = 0; exact < 2; exact++) {
			double got = ((const float *)out[exact][0].data)[o];
			if (!(fabs(got - val[o]) <= 128.0 / 16777216.0 * big + 1e-30))
				fail_msg("%s: output %lld: %.9g, expected %.9g (rank %d, N %lld, "
					 "C %lld, M %lld, group %lld, in %lldx%lld, k %lldx%lld, "
					 "stride %lld, dilation %lld)",
					 exact ? "exact" : "fast", (long long)o, got, val[o],
					 r, (long long)g->N, (long long)g->C, (long long)g->M,
					 (long long)g->group, (long long)g->in[0],
					 (long long)g->in[1], (long long)g->k[0],
					 (long long)g->k[1], (long long)g->s[0],
					 (long long)g->d[0]);
		}
	}
	om_tensor_free(&out[0][0]), om_tensor_free(&out[1][0]);
	om_model_free(mo);
	free(x), free(w), free(b), free(val), free(sc);
}

static void random_geometries(void **state)
{
	(void)state;
	uint32_t s = 20261129;
	for (int done = 0; done < 400;) {
		geo g = {0};
		if (draw(&g, &s)) {
			one(&g, &s);
			done++;
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(random_geometries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
