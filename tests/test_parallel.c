/* test_parallel.c — om_par_for (num/parallel.h) covers its range once, in pieces of whole
 * grains, on more than one piece when given threads; and the kernels that split their loops
 * with it give the same bits at 1, 2 and 3 threads (an odd split) on sizes that cross their
 * grains: elementwise unary (exact and fast), broadcasting binary and ternary ops, pools, the
 * row ops (Softmax, LogSoftmax, LpNormalization, LayerNormalization with its Mean,
 * SkipLayerNormalization, BiasGelu, ReduceMean of rows), Conv's im2col and pointwise GEMM paths, the depthwise
 * Conv loop (padded and row paths) and Winograd's transforms. Every output buffer starts as
 * NaN, so an output no piece writes shows. */
#include <stdlib.h>

#include "conv_depthwise.h"
#include "conv_winograd.h"
#include "ew.h"
#include "gemm.h"
#include "nodetest.h"
#include "parallel.h"

/* ---- om_par_for ---------------------------------------------------------------------------- */

typedef struct cover {
	int64_t grain;
	unsigned char *hits; /* per iteration: pieces that covered it */
	unsigned char *starts; /* per iteration: a piece started there */
} cover;

static void mark(void *arg, int64_t lo, int64_t hi)
{
	cover *c = arg;
	c->starts[lo] = 1;
	for (int64_t i = lo; i < hi; i++)
		c->hits[i]++;
}

static void par_for_covers_once_in_whole_grains(void **state)
{
	(void)state;
	static const int64_t grains[] = {1, 7, 64};
	for (int threads = 1; threads <= 3; threads++)
		for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++) {
			const int64_t g = grains[gi];
			const int64_t ns[] = {0, 1, g - 1, g, g + 1, 2 * g, 10 * g + 3, 1000 * g + 1};
			for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
				const int64_t n = ns[ni];
				cover c = {g, calloc((size_t)n + 1, 1), calloc((size_t)n + 1, 1)};
				om_par_for(threads, n, g, mark, &c);
				int64_t pieces = 0;
				for (int64_t i = 0; i < n; i++) {
					if (c.hits[i] != 1)
						fail_msg("threads %d grain %lld n %lld: iteration %lld "
							 "covered %d times", threads, (long long)g,
							 (long long)n, (long long)i, c.hits[i]);
					if (c.starts[i] && i % g)
						fail_msg("a piece starts at %lld, grain %lld",
							 (long long)i, (long long)g);
					pieces += c.starts[i];
				}
				if (threads == 1 || n <= g)
					assert_true(pieces == (n > 0));
#ifdef OM_HAVE_DNNL /* builds with oneDNN have OpenMP: the loop is split */
				else
					assert_true(pieces > 1);
#endif
				free(c.hits), free(c.starts);
			}
		}
}

/* ---- kernels through their rows, at a given thread count ----------------------------------- */

/* Runs node n's kernel (exact or fast mode) on `threads` threads; its n->nout (<= 2) outputs
 * are allocated here, filled with NaN first. */
static void run_threads(const om_node *n, int64_t opset, const om_tensor *const *in,
			om_tensor *out, int exact, int threads)
{
	om_status st = {0};
	assert_true(n->nout <= 2);
	assert_int_equal(om_infer_node(n, opset, in, out, &st), OM_OK);
	om_tensor *outp[2] = {0};
	for (int32_t i = 0; i < n->nout; i++) {
		om_tensor shape = out[i];
		assert_int_equal(om_tensor_alloc(&out[i], shape.dtype, shape.rank, shape.dims, &st),
				 OM_OK);
		memset(out[i].data, 0xff, out[i].nbytes);
		outp[i] = &out[i];
	}
	const om_op *op = om_op_find(n->domain, n->op, opset);
	om_ctx c = {.node = n, .op = op, .opset = opset, .nin = n->nin, .nout = n->nout,
		    .in = in, .out = outp, .st = &st, .exact = exact, .threads = threads};
	/* as a session's run sets the products' threads */
	const int saved = om_par_threads_set(threads);
	const om_kind rc = op->kernel(&c);
	om_par_threads_restore(saved);
	if (rc)
		fail_msg("%s at %d threads: %s", n->op, threads, st.msg);
}

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)(seed >> 8) % 20001) / 2500.0f; /* [-8, 8] */
	}
}

/* n's outputs at 2 and 3 threads hold the bytes of its outputs at 1 */
static void same_bits_at_any_threads(const om_node *n, int64_t opset, const om_tensor *const *in,
				     int exact)
{
	om_tensor one[2] = {{0}};
	run_threads(n, opset, in, one, exact, 1);
	for (int threads = 2; threads <= 3; threads++) {
		om_tensor more[2] = {{0}};
		run_threads(n, opset, in, more, exact, threads);
		for (int32_t i = 0; i < n->nout; i++) {
			assert_int_equal(more[i].nbytes, one[i].nbytes);
			if (memcmp(more[i].data, one[i].data, one[i].nbytes))
				fail_msg("%s (%s mode) output %d: %d threads differ from 1", n->op,
					 exact ? "exact" : "fast", i, threads);
			om_tensor_free(&more[i]);
		}
	}
	for (int32_t i = 0; i < n->nout; i++)
		om_tensor_free(&one[i]);
}

/* an odd count of elements over several grains, and below one grain */
static const int64_t EW_SIZES[] = {5 * OM_EW_GRAIN + 37, OM_EW_GRAIN - 3};

static void unary_ops_same_bits(void **state)
{
	(void)state;
	static const char *const ops[] = {"Sigmoid", "HardSigmoid", "Gelu", "Tanh", "Exp",
					  "QuickGelu"};
	for (size_t si = 0; si < sizeof EW_SIZES / sizeof EW_SIZES[0]; si++) {
		const int64_t d[1] = {EW_SIZES[si]};
		float *x = malloc(sizeof(float) * (size_t)d[0]);
		fill(x, d[0], 5);
		om_tensor tx = nt_tensor(OM_FLOAT, 1, d, x);
		const om_tensor *in[1] = {&tx};
		for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++) {
			om_model *m;
			om_node *n = nt_node(&m, ops[oi], 1, 1);
			const bool ms = !strcmp(ops[oi], "QuickGelu");
			if (ms)
				n->domain = "com.microsoft";
			for (int exact = 0; exact <= 1; exact++)
				same_bits_at_any_threads(n, ms ? 1 : 20, in, exact);
			nt_free(m);
		}
		free(x);
	}
}

/* Mul of [2, C, H, W] by [1, C, 1, 1] (runs of H * W that pieces cut), Add of one shape, Where
 * of three operands broadcast on different axes */
static void broadcast_ops_same_bits(void **state)
{
	(void)state;
	const int64_t da[4] = {2, 24, 37, 41}, db[4] = {1, 24, 1, 1}, dc[4] = {2, 1, 37, 41};
	const int64_t na = 2 * 24 * 37 * 41;
	float *a = malloc(sizeof(float) * (size_t)na), *a2 = malloc(sizeof(float) * (size_t)na);
	float b[24];
	uint8_t *cond = malloc((size_t)(2 * 37 * 41));
	fill(a, na, 7), fill(a2, na, 8), fill(b, 24, 9);
	for (int64_t i = 0; i < 2 * 37 * 41; i++)
		cond[i] = (uint8_t)(i % 3 == 0);
	om_tensor ta = nt_tensor(OM_FLOAT, 4, da, a), ta2 = nt_tensor(OM_FLOAT, 4, da, a2);
	om_tensor tb = nt_tensor(OM_FLOAT, 4, db, b), tc = nt_tensor(OM_BOOL, 4, dc, cond);
	struct {
		const char *op;
		int32_t nin;
		const om_tensor *in[3];
	} runs[] = {{"Mul", 2, {&ta, &tb}}, {"Add", 2, {&ta, &ta2}}, {"Pow", 2, {&ta, &tb}},
		    {"Where", 3, {&tc, &ta, &tb}}};
	for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
		om_model *m;
		om_node *n = nt_node(&m, runs[r].op, runs[r].nin, 1);
		same_bits_at_any_threads(n, 20, runs[r].in, 1);
		same_bits_at_any_threads(n, 20, runs[r].in, 0);
		nt_free(m);
	}
	free(a), free(a2), free(cond);
}

/* MaxPool 3x3/2 (the separable path; with Indices the general one), AveragePool 3x3/1 with
 * pads (the row path), GlobalAveragePool and GlobalMaxPool, on 2 x 160 images of 33 x 35
 * (several pieces each) */
static void pools_same_bits(void **state)
{
	(void)state;
	const int64_t d[4] = {2, 160, 33, 35}, n = 2 * 160 * 33 * 35;
	float *x = malloc(sizeof(float) * (size_t)n);
	fill(x, n, 10);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, d, x);
	const om_tensor *in[1] = {&tx};
	static const char *const ops[] = {"MaxPool", "MaxPool", "AveragePool",
					  "GlobalAveragePool", "GlobalMaxPool"};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		om_model *m;
		om_node *nd = nt_node(&m, ops[i], 1, i == 1 ? 2 : 1);
		if (i < 3) {
			nt_ints(nd, "kernel_shape", (const int64_t[]){3, 3}, 2);
			nt_ints(nd, "strides", (const int64_t[]){i < 2 ? 2 : 1, i < 2 ? 2 : 1}, 2);
			nt_ints(nd, "pads", (const int64_t[]){1, 1, 1, 1}, 4);
		}
		for (int exact = 0; exact <= 1; exact++)
			same_bits_at_any_threads(nd, 20, in, exact);
		nt_free(m);
	}
	free(x);
}

/* the ops that run along rows (norm_common.c's slices, Softmax's fast rows, SkipLayerNormalization
 * and BiasGelu): 591 rows of 300, the rows split over the threads */
static void row_ops_same_bits(void **state)
{
	(void)state;
	const int64_t d[3] = {3, 197, 300}, n = 3 * 197 * 300, dv[1] = {300};
	float *x = malloc(sizeof(float) * (size_t)n), *s = malloc(sizeof(float) * (size_t)n);
	float *v[3];
	fill(x, n, 12);
	fill(s, n, 13);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, d, x), ts = nt_tensor(OM_FLOAT, 3, d, s), tv[3];
	for (int i = 0; i < 3; i++) {
		v[i] = malloc(sizeof(float) * 300);
		fill(v[i], 300, 14 + (uint32_t)i);
		tv[i] = nt_tensor(OM_FLOAT, 1, dv, v[i]);
	}
	static const struct {
		const char *op, *domain;
		int32_t nin, nout;
		int64_t opset;
	} ops[] = {
		{"Softmax", "", 1, 1, 13},
		{"LogSoftmax", "", 1, 1, 13},
		{"LpNormalization", "", 1, 1, 1},
		{"LayerNormalization", "", 3, 2, 17}, /* Y and Mean */
		{"SkipLayerNormalization", "com.microsoft", 5, 1, 1},
		{"BiasGelu", "com.microsoft", 2, 1, 1},
		{"ReduceMean", "", 1, 1, 13}, /* axes 2: rows (fast mode's float path) */
	};
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		om_model *m;
		om_node *nd = nt_node(&m, ops[i].op, ops[i].nin, ops[i].nout);
		nd->domain = ops[i].domain;
		if (!strcmp(ops[i].op, "ReduceMean"))
			nt_ints(nd, "axes", (const int64_t[]){2}, 1);
		const bool skip = !strcmp(ops[i].op, "SkipLayerNormalization");
		const om_tensor *in[5] = {&tx, skip ? &ts : &tv[0], skip ? &tv[0] : &tv[1],
					  &tv[1], &tv[2]};
		for (int exact = 0; exact <= 1; exact++)
			same_bits_at_any_threads(nd, ops[i].opset, in, exact);
		nt_free(m);
	}
	free(x), free(s);
	for (int i = 0; i < 3; i++)
		free(v[i]);
}

/* Conv's GEMM paths through its row: im2col (3x3 stride 2, and 5x5 in several blocks of output
 * rows) and the pointwise one, grouped, with bias; in fast mode with the products' threads set
 * as a session sets them (om_par_threads_set), in exact mode with its own product */
static void conv_gemm_paths_same_bits(void **state)
{
	(void)state;
	static const struct {
		int64_t C, M, group, H, k, s;
	} cs[] = {{16, 24, 2, 40, 3, 2}, {24, 16, 1, 64, 5, 1}, {32, 48, 2, 50, 1, 1}};
	for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
		const int64_t N = 2, C = cs[i].C, M = cs[i].M, k = cs[i].k, H = cs[i].H, p = k / 2;
		const int64_t dx[4] = {N, C, H, H}, dw[4] = {M, C / cs[i].group, k, k}, db[1] = {M};
		const int64_t nx = N * C * H * H, nw = M * (C / cs[i].group) * k * k;
		float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
		float b[48];
		fill(x, nx, 11), fill(w, nw, 12), fill(b, M, 13);
		om_tensor tx = nt_tensor(OM_FLOAT, 4, dx, x), tw = nt_tensor(OM_FLOAT, 4, dw, w);
		om_tensor tb = nt_tensor(OM_FLOAT, 1, db, b);
		const om_tensor *in[3] = {&tx, &tw, &tb};
		om_model *m;
		om_node *nd = nt_node(&m, "Conv", 3, 1);
		nt_int(nd, "group", cs[i].group);
		nt_ints(nd, "strides", (const int64_t[]){cs[i].s, cs[i].s}, 2);
		nt_ints(nd, "pads", (const int64_t[]){p, p, p, p}, 4);
		same_bits_at_any_threads(nd, 20, in, 1);
		same_bits_at_any_threads(nd, 20, in, 0);
		nt_free(m);
		free(x), free(w);
	}
}

/* ---- Conv loops called directly ------------------------------------------------------------ */

typedef om_kind (*conv_fn)(om_ctx *c, const void *geo, const float *x, const float *w,
			   const om_conv_epi *e, float *y);

typedef struct dw_geo {
	om_spatial sp;
	int64_t N, C;
} dw_geo;

static om_kind run_depthwise(om_ctx *c, const void *geo, const float *x, const float *w,
			     const om_conv_epi *e, float *y)
{
	const dw_geo *g = geo;
	return om_conv_depthwise(c, &g->sp, g->N, g->C, g->C, g->C, x, w, e, y);
}

typedef struct wino_geo {
	om_spatial sp;
	int64_t N, C, M;
	int tile;
} wino_geo;

static om_kind run_winograd(om_ctx *c, const void *geo, const float *x, const float *w,
			    const om_conv_epi *e, float *y)
{
	const wino_geo *g = geo;
	return om_conv_winograd(c, g->tile, &g->sp, g->N, g->C, g->M, 1, x, w, e, y);
}

/* fn's ny outputs at 2 and 3 threads hold the bytes of its outputs at 1 */
static void conv_same_bits(conv_fn fn, const void *geo, int exact, const float *x,
			   const float *w, const om_conv_epi *e, int64_t ny)
{
	float *y1 = malloc(sizeof(float) * (size_t)ny), *yk = malloc(sizeof(float) * (size_t)ny);
	for (int threads = 1; threads <= 3; threads++) {
		om_status st = {0};
		om_ctx c = {.st = &st, .exact = exact, .threads = threads};
		float *y = threads == 1 ? y1 : yk;
		memset(y, 0xff, sizeof(float) * (size_t)ny);
		assert_int_equal(fn(&c, geo, x, w, e, y), OM_OK);
		if (threads > 1 && memcmp(yk, y1, sizeof(float) * (size_t)ny))
			fail_msg("%d threads differ from 1", threads);
	}
	free(y1), free(yk);
}

/* 3x3 stride 2 (the padded path), 5x5 stride 1 (the row loops), 3x3 with a non-finite weight
 * (the row loops for its channel), with bias and an activation; 2 images of 48 channels */
static void depthwise_same_bits(void **state)
{
	(void)state;
	static const struct {
		int64_t k, s;
	} shapes[] = {{3, 2}, {5, 1}, {3, 1}};
	for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
		const int64_t k = shapes[i].k, s = shapes[i].s, H = 30, W = 29, p = k / 2;
		dw_geo g = {.sp = {.n = 2, .in = {H, W}, .k = {k, k}, .stride = {s, s},
				   .dil = {1, 1}, .pb = {p, p}, .pe = {p, p}},
			    .N = 2, .C = 48};
		for (int a = 0; a < 2; a++)
			g.sp.out[a] = (g.sp.in[a] + 2 * p - k) / s + 1;
		const int64_t nx = g.N * g.C * H * W, nw = g.C * k * k;
		const int64_t ny = g.N * g.C * g.sp.out[0] * g.sp.out[1];
		float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
		float b[48];
		fill(x, nx, 1), fill(w, nw, 2), fill(b, 48, 3);
		if (i == 2)
			w[5 * 9 + 4] = INFINITY;
		const om_conv_epi e = {.bias = b, .act = OM_ACT_HARD_SIGMOID, .alpha = 0.2f,
				       .beta = 0.5f};
		for (int exact = 0; exact <= 1; exact++)
			conv_same_bits(run_depthwise, &g, exact, x, w, &e, ny);
		free(x), free(w);
	}
}

/* F(4x4) and F(2x2) on 64 channels of a 48 x 47 image (several grains of channels in each
 * transform), bias and Relu in the output transform */
static void winograd_same_bits(void **state)
{
	(void)state;
	wino_geo g = {.sp = {.n = 2, .in = {48, 47}, .out = {48, 47}, .k = {3, 3},
			     .stride = {1, 1}, .dil = {1, 1}, .pb = {1, 1}, .pe = {1, 1}},
		      .N = 2, .C = 64, .M = 40};
	const int64_t nx = g.N * g.C * 48 * 47, nw = g.M * g.C * 9, ny = g.N * g.M * 48 * 47;
	float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw);
	float b[40];
	fill(x, nx, 4), fill(w, nw, 5), fill(b, 40, 6);
	const om_conv_epi e = {.bias = b, .act = OM_ACT_RELU};
	for (g.tile = 2; g.tile <= 4; g.tile += 2)
		conv_same_bits(run_winograd, &g, 0, x, w, &e, ny);
	free(x), free(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(par_for_covers_once_in_whole_grains),
		cmocka_unit_test(unary_ops_same_bits),
		cmocka_unit_test(broadcast_ops_same_bits),
		cmocka_unit_test(pools_same_bits),
		cmocka_unit_test(row_ops_same_bits),
		cmocka_unit_test(conv_gemm_paths_same_bits),
		cmocka_unit_test(depthwise_same_bits),
		cmocka_unit_test(winograd_same_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
