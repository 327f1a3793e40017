/* test_conv_winograd.c — Winograd F(2x2,3x3) and F(4x4,3x3) Conv against a float64 direct
 * convolution on random shapes (groups, batches, asymmetric pads, odd extents, channel counts
 * that are not multiples of 8, several tile blocks); sessions: exact mode never takes it, the
 * transformed weights kept in the step's state stay right across runs of changing shapes,
 * weights fed as an input are transformed again in every run.
 *
 * Tolerance: every output must be within TOL * S of the float64 value, S the largest
 * sum |w| |x| + |b| of the outputs within 3 rows and columns (a Winograd tile mixes its
 * outputs: one that sees only padding next to ones that see data carries their rounding). A
 * float32 dot product in any order is within a few 2^-24 of that scale (blocked sums grow like
 * sqrt(K)); Winograd's transforms amplify it by a bounded factor (F(4x4)'s matrices hold 1/24
 * .. 8). Measured on these cases: at most 9 ulps of S for F(2x2), 18 for F(4x4); TOL =
 * 128 * 2^-24 (7.6e-6) leaves room for other compilers' rounding, and is still 100x tighter
 * than the 1e-3 relative error allowed on whole models. */
#include <stdlib.h>

#include "conv_winograd.h"
#include "session.h"
#include "nodetest.h"

#define TOL (128.0 / 16777216.0)

typedef struct wcase {
	int64_t N, C, H, W, M, group, pads[4]; /* pads: top, left, bottom, right */
} wcase;

static const wcase cases[] = {
	{1, 3, 5, 5, 4, 1, {1, 1, 1, 1}},
	{2, 6, 7, 9, 4, 2, {0, 1, 2, 0}},   /* groups with 3 channels, batch, asymmetric pads */
	{1, 5, 1, 1, 3, 1, {1, 1, 1, 1}},   /* 1x1 image */
	{3, 10, 11, 6, 9, 1, {1, 0, 0, 1}}, /* odd extents */
	{1, 4, 3, 3, 2, 1, {0, 0, 0, 0}},   /* one output */
	{1, 16, 12, 13, 12, 4, {2, 2, 2, 2}},
	{2, 64, 48, 47, 64, 1, {1, 1, 1, 1}}, /* several blocks of tiles (both sizes) */
	{1, 8, 6, 80, 8, 1, {1, 1, 1, 1}},    /* wide rows: groups of tiles read in place */
	{2, 9, 7, 75, 5, 1, {0, 0, 0, 0}},
	{1, 8, 5, 6, 4, 1, {3, 40, 2, 1}},    /* whole groups of tiles in the padding */
	{1, 8, 4, 3, 3, 1, {6, 2, 7, 45}},
};

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)(seed >> 8) % 20001) / 10000.0f;
	}
}

static void out_hw(const wcase *k, int64_t *oh, int64_t *ow)
{
	*oh = k->H + k->pads[0] + k->pads[2] - 2;
	*ow = k->W + k->pads[1] + k->pads[3] - 2;
}

/* scale[o] = the largest scale within 3 rows and columns of o (same image and channel) */
static void widen(double *scale, int64_t planes, int64_t OH, int64_t OW)
{
	double *s = malloc(sizeof(double) * (size_t)(planes * OH * OW));
	memcpy(s, scale, sizeof(double) * (size_t)(planes * OH * OW));
	for (int64_t o = 0; o < planes * OH * OW; o++) {
		int64_t ox = o % OW, oy = o / OW % OH, base = o - oy * OW - ox;
		for (int64_t y = oy - 3; y <= oy + 3; y++)
			for (int64_t x = ox - 3; x <= ox + 3; x++)
				if (y >= 0 && y < OH && x >= 0 && x < OW &&
				    s[base + y * OW + x] > scale[o])
					scale[o] = s[base + y * OW + x];
	}
	free(s);
}

/* direct convolution in float64: the value and the scale sum |w| |x| + |b| */
static void reference(const wcase *k, const float *x, const float *w, const float *b,
		      double *val, double *scale)
{
	int64_t OH, OW, Cg = k->C / k->group, Mg = k->M / k->group;
	out_hw(k, &OH, &OW);
	for (int64_t o = 0; o < k->N * k->M * OH * OW; o++) {
		int64_t ox = o % OW, oy = o / OW % OH, m = o / (OW * OH) % k->M;
		int64_t n = o / (OW * OH * k->M);
		double s = b ? b[m] : 0, a = b ? fabs(b[m]) : 0;
		for (int64_t c = 0; c < Cg; c++)
			for (int64_t i = 0; i < 3; i++)
				for (int64_t j = 0; j < 3; j++) {
					int64_t yy = oy + i - k->pads[0], xx = ox + j - k->pads[1];
					if (yy < 0 || yy >= k->H || xx < 0 || xx >= k->W)
						continue;
					const float *xc =
						x + (n * k->C + m / Mg * Cg + c) * k->H * k->W;
					double p = (double)w[((m * Cg + c) * 3 + i) * 3 + j] *
						   xc[yy * k->W + xx];
					s += p;
					a += fabs(p);
				}
		val[o] = s;
		scale[o] = a;
	}
	widen(scale, k->N * k->M, OH, OW);
}

static void assert_close(const float *got, const double *val, const double *scale, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabs(got[i] - val[i]) <= TOL * scale[i] + 1e-30))
			fail_msg("element %lld: got %.9g, expected %.9g (scale %.3g)", (long long)i,
				 got[i], val[i], scale[i]);
}

static om_spatial geometry(const wcase *k)
{
	om_spatial sp = {.n = 2, .in = {k->H, k->W}, .k = {3, 3}, .stride = {1, 1},
			 .dil = {1, 1}, .pb = {k->pads[0], k->pads[1]},
			 .pe = {k->pads[2], k->pads[3]}};
	out_hw(k, &sp.out[0], &sp.out[1]);
	return sp;
}

static void both_tiles_match_reference(void **state)
{
	(void)state;
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
		const wcase *k = &cases[ci];
		om_spatial sp = geometry(k);
		int64_t nx = k->N * k->C * k->H * k->W, nw = k->M * (k->C / k->group) * 9;
		int64_t ny = k->N * k->M * sp.out[0] * sp.out[1];
		float *x = malloc(sizeof(float) * (size_t)nx);
		float *w = malloc(sizeof(float) * (size_t)nw);
		float *b = malloc(sizeof(float) * (size_t)k->M);
		float *y = malloc(sizeof(float) * (size_t)ny);
		double *val = malloc(sizeof(double) * (size_t)ny);
		double *scale = malloc(sizeof(double) * (size_t)ny);
		fill(x, nx, 11 + (uint32_t)ci), fill(w, nw, 12), fill(b, k->M, 13);
		reference(k, x, w, b, val, scale);
		/* at 2 and 3 threads the transforms and the a * a products go over the pool:
		 * the same bytes as at one thread */
		float *y1 = malloc(sizeof(float) * (size_t)ny);
		for (int tile = 2; tile <= 4; tile += 2)
			for (int threads = 1; threads <= 3; threads++) {
				om_status st = {0};
				om_ctx c = {.st = &st, .threads = threads};
				om_conv_epi e = {.bias = b};
				float *out = threads == 1 ? y1 : y;
				memset(out, 0xff, sizeof(float) * (size_t)ny); /* NaN: all written */
				assert_int_equal(om_conv_winograd(&c, tile, &sp, k->N, k->C, k->M,
								  k->group, x, w, &e, out),
						 OM_OK);
				if (threads == 1)
					assert_close(y1, val, scale, ny);
				else
					assert_memory_equal(y, y1, sizeof(float) * (size_t)ny);
			}
		free(x), free(w), free(b), free(y), free(y1), free(val), free(scale);
	}
}

/* The epilogue written with the output transform: bias or not, Z or not, Relu, none, and an
 * activation of the general path (LeakyRelu), on a case with partial tiles and tile groups. */
static void epilogue_in_output_transform(void **state)
{
	(void)state;
	const wcase *k = &cases[3]; /* 3 x 10 x 11 x 6 -> 9 channels */
	om_spatial sp = geometry(k);
	int64_t nx = k->N * k->C * k->H * k->W, nw = k->M * k->C * 9;
	int64_t ny = k->N * k->M * sp.out[0] * sp.out[1], P = sp.out[0] * sp.out[1];
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float *b = malloc(sizeof(float) * (size_t)k->M), *z = malloc(sizeof(float) * (size_t)ny);
	float *y = malloc(sizeof(float) * (size_t)ny);
	double *val = malloc(sizeof(double) * (size_t)ny), *sc = malloc(sizeof(double) * (size_t)ny);
	double *want = malloc(sizeof(double) * (size_t)ny), *ws = malloc(sizeof(double) * (size_t)ny);
	fill(x, nx, 21), fill(w, nw, 22), fill(b, k->M, 23), fill(z, ny, 24);
	reference(k, x, w, NULL, val, sc);
	static const int acts[] = {OM_ACT_NONE, OM_ACT_RELU, OM_ACT_LEAKY_RELU};
	for (int v = 0; v < 12; v++) {
		const bool hb = v & 1, hz = v & 2;
		const int act = acts[v / 4];
		for (int64_t i = 0; i < ny; i++) {
			double t = val[i] + (hb ? b[i / P % k->M] : 0) + (hz ? z[i] : 0);
			want[i] = act == OM_ACT_NONE ? t : t >= 0 ? t : act == OM_ACT_RELU ? 0 : 0.25 * t;
			ws[i] = sc[i] + (hb ? fabs(b[i / P % k->M]) : 0) + (hz ? fabs(z[i]) : 0);
		}
		for (int tile = 2; tile <= 4; tile += 2) {
			om_status st = {0};
			om_ctx c = {.st = &st};
			om_conv_epi e = {.bias = hb ? b : NULL, .z = hz ? z : NULL, .act = act,
					 .alpha = 0.25f};
			memset(y, 0xff, sizeof(float) * (size_t)ny);
			assert_int_equal(om_conv_winograd(&c, tile, &sp, k->N, k->C, k->M, 1, x, w,
							  &e, y),
					 OM_OK);
			assert_close(y, want, ws, ny);
		}
	}
	free(x), free(w), free(b), free(z), free(y), free(val), free(sc), free(want), free(ws);
}

/* ---- sessions ------------------------------------------------------------------------------ */

static void push(om_model *m, om_value ***list, int32_t *n, om_value *v)
{
	om_value **a = om_arena_alloc(m->arena, sizeof *a * (size_t)(*n + 1));
	if (*n)
		memcpy(a, *list, sizeof *a * (size_t)*n);
	a[(*n)++] = v;
	*list = a;
}

static om_value *graph_input(om_model *m, const char *name, int32_t rank, const int64_t *dims)
{
	om_graph *g = m->graph;
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = rank};
	v->type.dims = om_arena_alloc(m->arena, sizeof(om_dim) * (size_t)rank);
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = dims[i] < 0 ? (om_dim){-1, NULL} : (om_dim){dims[i], NULL};
	push(m, &g->inputs, &g->ninputs, v);
	return v;
}

static om_value *initializer(om_model *m, const char *name, int32_t rank, const int64_t *dims,
			     const float *data)
{
	om_value *v = om_graph_value(m->graph, name);
	om_tensor *t = om_arena_alloc(m->arena, sizeof *t);
	*t = nt_tensor(OM_FLOAT, rank, dims, om_arena_memdup(m->arena, data,
							     om_tensor_bytes_for(OM_FLOAT, rank,
										 dims)));
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = -1};
	push(m, &m->graph->inits, &m->graph->ninits, v);
	return v;
}

/* Y = Conv(X [N, C, H, W all dynamic], W (initializer, or an input), B), pads 1. */
static om_model *conv_model(int64_t C, int64_t M, const float *w, const float *b)
{
	om_model *m = om_model_new();
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	m->graph = om_graph_new(m, NULL);
	om_node *n = om_graph_add_node(m->graph, "Conv", "", "conv", 3, 1);
	n->in[0] = graph_input(m, "X", 4, (int64_t[]){-1, C, -1, -1});
	n->in[1] = w ? initializer(m, "W", 4, (int64_t[]){M, C, 3, 3}, w)
		     : graph_input(m, "W", 4, (int64_t[]){M, C, 3, 3});
	n->in[2] = initializer(m, "B", 1, &M, b);
	nt_ints(n, "pads", (int64_t[]){1, 1, 1, 1}, 4);
	om_value *y = om_graph_value(m->graph, "Y");
	om_node_set_output(n, 0, y);
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	push(m, &m->graph->outputs, &m->graph->noutputs, y);
	return m;
}

static om_session *session(const om_model *m, int exact)
{
	om_session_options opt = {.exact = exact};
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, &opt, &s, &st), OM_OK);
	return s;
}

/* Runs s on X of extents (n, C, h, w) (and W when fed) and checks Y against float64. */
static void run_check(om_session *s, const wcase *k, const float *w, const float *b, bool feed_w)
{
	om_spatial sp = geometry(k);
	int64_t nx = k->N * k->C * k->H * k->W, ny = k->N * k->M * sp.out[0] * sp.out[1];
	float *x = malloc(sizeof(float) * (size_t)nx);
	double *val = malloc(sizeof(double) * (size_t)ny);
	double *scale = malloc(sizeof(double) * (size_t)ny);
	fill(x, nx, (uint32_t)(k->N * 1000 + k->H * 10 + k->W));
	reference(k, x, w, b, val, scale);
	om_tensor in[2] = {nt_tensor(OM_FLOAT, 4, (int64_t[]){k->N, k->C, k->H, k->W}, x),
			   nt_tensor(OM_FLOAT, 4, (int64_t[]){k->M, k->C, 3, 3}, w)};
	om_tensor y;
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, feed_w ? 2 : 1, &y, 1, &st), OM_OK);
	nt_assert_shape(&y, 4, (int64_t[]){k->N, k->M, sp.out[0], sp.out[1]});
	assert_close(y.data, val, scale, ny);
	om_tensor_free(&y);
	free(x), free(val), free(scale);
}

/* The kept transform serves every shape of X (batch and extents change; small maps may go
 * through im2col and back). */
static void state_across_shapes(void **state)
{
	(void)state;
	const int64_t C = 7, M = 10;
	float w[10 * 7 * 9], b[10];
	fill(w, M * C * 9, 21), fill(b, M, 22);
	om_model *m = conv_model(C, M, w, b);
	om_session *s = session(m, 0);
	const int64_t shapes[][3] = {{1, 8, 8}, {3, 8, 8}, {2, 5, 7}, {1, 20, 20}, {1, 2, 2},
				     {3, 8, 8}, {2, 17, 9}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		wcase k = {shapes[i][0], C, shapes[i][1], shapes[i][2], M, 1, {1, 1, 1, 1}};
		run_check(s, &k, w, b, false);
	}
	om_session_free(s);
	om_model_free(m);
}

/* W fed at run time: no state is trusted, each run transforms its own W. */
static void weights_fed_each_run(void **state)
{
	(void)state;
	const int64_t C = 9, M = 5;
	float w[2][5 * 9 * 9], b[5];
	fill(w[0], M * C * 9, 31), fill(w[1], M * C * 9, 32), fill(b, M, 33);
	om_model *m = conv_model(C, M, NULL, b);
	om_session *s = session(m, 0);
	for (int r = 0; r < 4; r++) {
		wcase k = {2, C, 12, 12, M, 1, {1, 1, 1, 1}};
		run_check(s, &k, w[r % 2], b, true);
	}
	om_session_free(s);
	om_model_free(m);
}

/* Exact mode runs the fixed-order im2col path: bit-identical to om_eval_node's exact result;
 * fast mode takes Winograd here (its bits differ from the exact ones). */
static void exact_mode_never_winograd(void **state)
{
	(void)state;
	const int64_t C = 16, M = 16;
	float *w = malloc(sizeof(float) * (size_t)(M * C * 9)), b[16];
	float *x = malloc(sizeof(float) * (size_t)(2 * C * 24 * 24));
	fill(w, M * C * 9, 41), fill(b, M, 42), fill(x, 2 * C * 24 * 24, 43);
	om_model *m = conv_model(C, M, w, b);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){2, C, 24, 24}, x);
	const om_tensor *in3[] = {&tx, m->graph->nodes[0]->in[1]->init,
				  m->graph->nodes[0]->in[2]->init};
	om_tensor ref[1], ye, yf;
	om_status st = {0};
	assert_int_equal(om_eval_node(m->graph->nodes[0], 13, in3, ref, &st), OM_OK);
	om_session *se = session(m, 1), *sf = session(m, 0);
	assert_int_equal(om_session_run(se, &tx, 1, &ye, 1, &st), OM_OK);
	assert_int_equal(om_session_run(sf, &tx, 1, &yf, 1, &st), OM_OK);
	assert_int_equal(om_session_node_info(se, 0).mode, OM_MODE_EXACT);
	assert_int_equal(om_session_node_info(sf, 0).mode, OM_MODE_FAST);
	assert_memory_equal(ye.data, ref[0].data, ref[0].nbytes);
	assert_true(memcmp(yf.data, ref[0].data, ref[0].nbytes) != 0);
	nt_assert_floats(&yf, ref[0].data, om_tensor_numel(&ref[0]), 1e-4f);
	om_tensor_free(&ref[0]), om_tensor_free(&ye), om_tensor_free(&yf);
	om_session_free(se), om_session_free(sf);
	om_model_free(m);
	free(w), free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(both_tiles_match_reference),
		cmocka_unit_test(epilogue_in_output_transform),
		cmocka_unit_test(state_across_shapes),
		cmocka_unit_test(weights_fed_each_run),
		cmocka_unit_test(exact_mode_never_winograd),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
