/* test_layout.c — the channel-blocked layout (runtime/plan_layout.c) on a block of the shape
 * mobile CNNs have: a 1x1 conv with SiLU, a strided depthwise conv, squeeze-excitation (global
 * pool, 1x1 convs, Sigmoid, the channel Mul), a 1x1 conv, a residual Add and a last conv, with
 * channel counts that are and are not multiples of the block. Fast mode keeps the values
 * between the convs blocked (which steps read and write blocked values is asserted) and
 * agrees with exact mode, at one and two threads, batch 1 and 2 and a symbolic batch (steps
 * shaped per run) run on 1 and 3 images; a value that a graph output or a step without a
 * layout function reads stays plain. Global pools reading a blocked conv output; windowed
 * MaxPool and AveragePool between convs (padding, ceil_mode, dilation; Indices: plain); a Concat
 * of conv outputs along C (blocked when each is whole blocks); BatchNormalization between convs;
 * HardSwish
 * written out with a Div by a constant (blocked unless the constant is 0); a Winograd 3x3 conv
 * (blocked at two threads only, or with fewer than 64 inputs or outputs). Also the
 * broadcast of short innermost runs (kernels/math/broadcast.c) that the channel Mul takes,
 * against a plain loop. The squeeze-excitation Mul absorbed into the conv reading it
 * (plan_absorb.c, om_ctx.in_scale). A QDQ model's 8-bit values kept NHWC between its
 * QLinearConvs, through per-tensor QuantizeLinear, DequantizeLinear and an Add. Residual Adds
 * and the Relu after them absorbed into a conv (OM_OP_SUM), not when they broadcast in some
 * run. Without oneDNN
 * in the build (om_layout_block() 0) nothing
 * is blocked, which is asserted. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "gemm_int.h"
#include "layout.h"
#include "session.h"
#include "testutil.h"

static om_node *conv(om_graph *g, const char *ins, const char *out, int64_t K, int64_t stride,
		     int64_t group)
{
	om_node *n = tu_graph_node(g, "Conv", ins, out);
	n->name = out;
	const int64_t pad = K / 2;
	tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){K, K});
	tu_attr_ints(n, "strides", 2, (int64_t[]){stride, stride});
	tu_attr_ints(n, "pads", 4, (int64_t[]){pad, pad, pad, pad});
	om_node_set_attr(n, "group", OM_ATTR_INT)->i = group;
	return n;
}

static om_node *node(om_graph *g, const char *op, const char *ins, const char *out)
{
	om_node *n = tu_graph_node(g, op, ins, out);
	n->name = out;
	return n;
}

/* x (N, C, H, H) -> a = SiLU(conv1x1 C->E) -> b = dwconv3x3/2 (E; `dense`: a conv of one
 * group) -> e = b * Sigmoid(conv(conv(GAP(b)))) -> r = conv1x1(e) + e -> y = conv1x1 E->C (a
 * graph output); `side`: also t = Transpose(b) as a graph output, which keeps b plain; N -1:
 * the batch is a symbol */
static om_model *block_model(int64_t N, int64_t C, int64_t E, int64_t H, bool side, bool dense)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	const int64_t H2 = (H - 1) / 2 + 1;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "W1", 4, (int64_t[]){E, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	tu_float_init(g, "B1", 1, (int64_t[]){E}, 2, 0.2f);
	tu_float_init(g, "Wd", 4, (int64_t[]){E, dense ? E : 1, 3, 3}, 3,
		      1.0f / (dense ? 3 * sqrtf((float)E) : 3));
	tu_float_init(g, "Wf", 4, (int64_t[]){E, E, 1, 1}, 4, 1.0f / sqrtf((float)E));
	tu_float_init(g, "Wg", 4, (int64_t[]){E, E, 1, 1}, 5, 1.0f / sqrtf((float)E));
	tu_float_init(g, "W3", 4, (int64_t[]){E, E, 1, 1}, 6, 1.0f / sqrtf((float)E));
	tu_float_init(g, "W4", 4, (int64_t[]){C, E, 1, 1}, 7, 1.0f / sqrtf((float)E));
	conv(g, "x,W1,B1", "a0", 1, 1, 1);
	node(g, "Sigmoid", "a0", "a1");
	node(g, "Mul", "a0,a1", "a");
	conv(g, "a,Wd", "b", 3, 2, dense ? 1 : E);
	node(g, "GlobalAveragePool", "b", "p");
	conv(g, "p,Wf", "f0", 1, 1, 1);
	node(g, "Relu", "f0", "f");
	conv(g, "f,Wg", "s0", 1, 1, 1);
	node(g, "Sigmoid", "s0", "s");
	node(g, "Mul", "b,s", "e");
	conv(g, "e,W3", "c", 1, 1, 1);
	node(g, "Add", "c,e", "r");
	conv(g, "r,W4", "y", 1, 1, 1);
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){N, C, H2, H2}));
	if (side) {
		om_node *t = node(g, "Transpose", "b", "t");
		tu_attr_ints(t, "perm", 4, (int64_t[]){0, 2, 3, 1});
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "t", OM_FLOAT, 4, (int64_t[]){N, H2, H2, E}));
	}
	return m;
}

/* the blocked positions of the node named `name`, as "in,out" bit strings: "r" reads, "w"
 * writes, "rw" both, "" neither */
static const char *blocked_of(const om_session *s, const char *name)
{
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		if (ni.node->name && !strcmp(ni.node->name, name)) {
			const bool r = ni.blocked & 0xffffffffu, w = ni.blocked >> 32;
			return r && w ? "rw" : r ? "r" : w ? "w" : "";
		}
	}
	fail_msg("no node %s", name);
	return NULL;
}

/* whether the step of node `name` adds an absorbed Add's addend */
static bool summed_of(const om_session *s, const char *name)
{
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		if (ni.node->name && !strcmp(ni.node->name, name))
			return ni.summed;
	}
	fail_msg("no node %s", name);
	return false;
}

/* the plan's layout: "nhwc", "blocked" (nChw16c or nChw8c) or "" (nothing blocked) */
static const char *layout_of(const om_session *s)
{
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		if (ni.blocked)
			return ni.block == 16 || ni.block == 8 ? "blocked"
			       : ni.block == OM_BLOCK_NHWC ? "nhwc"
							: "?";
	}
	return "";
}

/* the forced layouts every case runs in (OM_LAYOUT_AUTO: blocked_against_exact) */
static const om_layout_choice forced[] = {OM_LAYOUT_BLOCKED, OM_LAYOUT_NHWC};
enum { NFORCED = sizeof forced / sizeof *forced };

typedef struct expect {
	const char *node, *blocked;
} expect;

/* the conv a0 writes SiLU(a0) (the Sigmoid and Mul absorbed); which steps take blocked
 * values when b feeds the side Transpose (side) or not */
static const expect full[] = {
	{"a0", "w"}, {"b", "rw"}, {"p", "rw"}, {"f0", "rw"}, {"s0", "rw"},
	{"e", "rw"}, {"c", "rw"}, {"r", "rw"}, {"y", "r"},
};
static const expect with_side[] = {
	{"a0", "w"}, {"b", "r"}, {"p", "w"}, {"f0", "rw"}, {"s0", "r"},
	{"e", ""}, {"c", ""}, {"r", ""}, {"y", ""},
};

static void run(om_session *s, int64_t N, int64_t C, int64_t H, int nout, om_tensor *out)
{
	om_tensor in = {0};
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, 4, (int64_t[]){N, C, H, H}, &st), OM_OK);
	tu_fill(in.data, om_tensor_numel(&in), 9, 1.0f);
	if (om_session_run(s, &in, 1, out, nout, &st))
		fail_msg("%s", st.msg);
	om_tensor_free(&in);
}

static void close_to(const om_tensor *a, const om_tensor *b, const char *what)
{
	assert_int_equal(a->nbytes, b->nbytes);
	const float *x = a->data, *y = b->data;
	for (int64_t j = 0; j < om_tensor_numel(b); j++)
		if (!(fabsf(x[j] - y[j]) <= 2e-5f * (1 + fabsf(y[j]))))
			fail_msg("%s [%lld]: %.9g against %.9g", what, (long long)j, (double)x[j],
				 (double)y[j]);
}

/* sessions of m in fast mode at `threads` with `layout` and in exact mode */
static void sessions(const om_model *m, int threads, om_layout_choice layout, om_session **fast,
		     om_session **exact)
{
	om_status st = {0};
	const om_session_options fo = {.threads = threads, .layout = layout}, eo = {.exact = 1};
	assert_int_equal(om_session_create(m, &fo, fast, &st), OM_OK);
	assert_int_equal(om_session_create(m, &eo, exact, &st), OM_OK);
}

/* one run of each on N images of C channels, H x H: the nout outputs close (values), or only
 * of the same size */
static void agree(om_session *fast, om_session *exact, int64_t N, int64_t C, int64_t H,
		  int nout, bool values)
{
	om_tensor a[8] = {{0}}, b[8] = {{0}};
	run(fast, N, C, H, nout, a);
	run(exact, N, C, H, nout, b);
	for (int o = 0; o < nout; o++) {
		char what[16];
		snprintf(what, sizeof what, "output %d", o);
		if (values)
			close_to(&a[o], &b[o], what);
		else
			assert_int_equal(a[o].nbytes, b[o].nbytes);
		om_tensor_free(&a[o]);
		om_tensor_free(&b[o]);
	}
}

/* the auto layout of plans whose convs are all of one group: NHWC where oneDNN runs them on
 * its brgemm kernels (AVX-512, the CPU's block 16), else the CPU's block (plan_layout.c) */
static const char *dense_layout(void)
{
	return om_layout_block() == 16 ? "nhwc" : "blocked";
}

/* block_model against exact mode: with a depthwise conv the planner picks the channel-blocked
 * layout, with a dense one NHWC (OM_LAYOUT_AUTO), each with the same values blocked; NHWC
 * forced on the depthwise conv leaves that conv plain */
static void blocked_against_exact(void **state)
{
	(void)state;
	/* N, C, E, H; N -1: a batch symbol, runs of 1 and 3 images */
	const int64_t shapes[][4] = {{1, 24, 40, 13}, {2, 16, 32, 8}, {1, 8, 20, 7}, {-1, 24, 40, 9}};
	const int32_t block = om_layout_block();
	for (size_t t = 0; t < 3 * 2 * 2 * sizeof shapes / sizeof *shapes; t++) {
		const int64_t *d = shapes[t / 12];
		const bool side = t % 4 >= 2, dense = t % 12 >= 4 && t % 12 < 8;
		const bool dw_nhwc = t % 12 >= 8; /* NHWC forced on the depthwise conv */
		const int threads = 1 + (int)(t % 2);
		om_model *m = block_model(d[0], d[1], d[2], d[3], side, dense);
		om_session *fast, *exact;
		sessions(m, threads, dw_nhwc ? OM_LAYOUT_NHWC : OM_LAYOUT_AUTO, &fast, &exact);
		/* absorbed into the convs: a1 and a (SiLU), f (Relu), s (Sigmoid), the residual
		 * r (c adds e); with a symbolic batch too, where only the probes (plan_probe.c)
		 * know the types */
		assert_int_equal(tu_absorbed(fast), 5);
		assert_true(summed_of(fast, "c"));
		assert_int_equal(tu_absorbed(exact), 0);
		if (!dw_nhwc)
			assert_string_equal(layout_of(fast), !block  ? ""
							     : dense ? dense_layout()
								     : "blocked");
		const expect *ex = side ? with_side : full;
		for (size_t i = 0; !dw_nhwc && i < sizeof full / sizeof *full; i++) {
			const char *want = block ? ex[i].blocked : "";
			if (strcmp(blocked_of(fast, ex[i].node), want))
				fail_msg("shape %zu%s: %s takes '%s' blocked, '%s' expected",
					 t / 12, side ? " (side)" : "", ex[i].node,
					 blocked_of(fast, ex[i].node), want);
			assert_string_equal(blocked_of(exact, ex[i].node), "");
		}
		if (dw_nhwc)
			assert_string_equal(blocked_of(fast, "b"), "");
		const int nout = side ? 2 : 1;
		for (int r = 0; r < 2; r++) /* the second run reuses the kernels' states */
			agree(fast, exact, d[0] > 0 ? d[0] : 1 + 2 * r, d[1], d[3], nout, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* a 1x1 conv (writes blocked) read by a GlobalAveragePool and a GlobalMaxPool (read blocked,
 * write the graph outputs plain), N images of C channels, against exact mode, in each forced
 * layout */
static void global_pools(void **state)
{
	(void)state;
	const int64_t N = 2, C = 24, M = 40, H = 9;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "W", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	conv(g, "x,W", "c", 1, 1, 1);
	node(g, "GlobalAveragePool", "c", "avg");
	node(g, "GlobalMaxPool", "c", "max");
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "avg", OM_FLOAT, 4, (int64_t[]){N, M, 1, 1}));
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "max", OM_FLOAT, 4, (int64_t[]){N, M, 1, 1}));
	for (int k = 0; k < NFORCED; k++) {
		om_session *fast, *exact;
		sessions(m, 2, forced[k], &fast, &exact);
		const bool blocked = om_layout_block() != 0;
		assert_string_equal(blocked_of(fast, "c"), blocked ? "w" : "");
		assert_string_equal(blocked_of(fast, "avg"), blocked ? "r" : "");
		assert_string_equal(blocked_of(fast, "max"), blocked ? "r" : "");
		agree(fast, exact, N, C, H, 2, true);
		om_session_free(fast);
		om_session_free(exact);
	}
	om_model_free(m);
}

/* a 1x1 conv (writes blocked) read by windowed pools between convs: MaxPool 3x3/2 padded,
 * AveragePool 3x3/2 with ceil_mode (windows past the edge, count_include_pad 0 and 1), MaxPool
 * 2x2 dilated by 2 (all read and write blocked), and a MaxPool with Indices of x (plain), each
 * followed by a 1x1 conv writing a graph output; C and M not multiples of the block; against
 * exact mode at one and two threads, in each forced layout */
static void windowed_pools(void **state)
{
	(void)state;
	const int64_t N = 2, C = 24, M = 40, H = 9;
	const bool blocked = om_layout_block() != 0;
	for (int t = 0; t < 2 * NFORCED; t++) {
		const int threads = 1 + t % 2;
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "W", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
		tu_float_init(g, "V", 4, (int64_t[]){C, M, 1, 1}, 2, 1.0f / sqrtf((float)M));
		conv(g, "x,W", "c", 1, 1, 1);
		static const char *const pools[] = {"max", "avg", "avg1", "dil", "ind"};
		om_node *p = node(g, "MaxPool", "c", "max");
		tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){3, 3});
		tu_attr_ints(p, "strides", 2, (int64_t[]){2, 2});
		tu_attr_ints(p, "pads", 4, (int64_t[]){1, 1, 1, 1});
		for (int k = 0; k < 2; k++) {
			p = node(g, "AveragePool", "c", k ? "avg1" : "avg");
			tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){3, 3});
			tu_attr_ints(p, "strides", 2, (int64_t[]){2, 2});
			tu_attr_ints(p, "pads", 4, (int64_t[]){1, 0, 1, 0});
			om_node_set_attr(p, "ceil_mode", OM_ATTR_INT)->i = 1;
			om_node_set_attr(p, "count_include_pad", OM_ATTR_INT)->i = k;
		}
		p = node(g, "MaxPool", "c", "dil");
		tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){2, 2});
		tu_attr_ints(p, "dilations", 2, (int64_t[]){2, 2});
		p = tu_graph_node(g, "MaxPool", "x", "ind,indices"); /* a plain reader of c
								       would keep c plain */
		p->name = "ind";
		tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){2, 2});
		static const char *const ins[] = {"max,V", "avg,V", "avg1,V", "dil,V", "ind,W"};
		static const char *const outs[] = {"y_max", "y_avg", "y_avg1", "y_dil", "y_ind"};
		for (int k = 0; k < 5; k++) {
			conv(g, ins[k], outs[k], 1, 1, 1);
			tu_push_value(g, &g->outputs, &g->noutputs,
				      tu_typed_value(g, outs[k], OM_FLOAT, -1, NULL));
		}
		om_session *fast, *exact;
		sessions(m, threads, forced[t / 2], &fast, &exact);
		assert_string_equal(blocked_of(fast, "c"), blocked ? "w" : "");
		for (int k = 0; k < 4; k++)
			assert_string_equal(blocked_of(fast, pools[k]), blocked ? "rw" : "");
		assert_string_equal(blocked_of(fast, "ind"), "");
		assert_string_equal(blocked_of(fast, "y_max"), blocked ? "r" : "");
		for (int r = 0; r < 2; r++)
			agree(fast, exact, N, C, H, 5, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* windowed pools with one side blocked: a 1x1 conv's output (blocked) pooled into a graph
 * output (plain: the pool reads blocked and writes plain, as resnet's stem MaxPool before its
 * plain Winograd convs), and x (plain) pooled into a 1x1 conv (the pool writes blocked);
 * MaxPool 3x3/2 padded and AveragePool 3x3/2 with ceil_mode, C and M not multiples of the
 * block, batch 2, against exact mode at one and two threads, in each forced layout */
static void pools_one_side(void **state)
{
	(void)state;
	const int64_t N = 2, C = 24, M = 40, H = 11;
	const bool blocked = om_layout_block() != 0;
	for (int t = 0; t < 2 * NFORCED; t++) {
		const int threads = 1 + t % 2;
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "W", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
		conv(g, "x,W", "c", 1, 1, 1);
		static const char *const ins[] = {"c", "c", "x", "x"};
		static const char *const pools[] = {"max_out", "avg_out", "max_in", "avg_in"};
		for (int k = 0; k < 4; k++) {
			om_node *p = node(g, k % 2 ? "AveragePool" : "MaxPool", ins[k], pools[k]);
			tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){3, 3});
			tu_attr_ints(p, "strides", 2, (int64_t[]){2, 2});
			tu_attr_ints(p, "pads", 4, (int64_t[]){1, 0, 1, 0});
			om_node_set_attr(p, "ceil_mode", OM_ATTR_INT)->i = k % 2;
		}
		conv(g, "max_in,W", "y_max", 1, 1, 1);
		conv(g, "avg_in,W", "y_avg", 1, 1, 1);
		static const char *const outs[] = {"max_out", "avg_out", "y_max", "y_avg"};
		for (int k = 0; k < 4; k++)
			tu_push_value(g, &g->outputs, &g->noutputs,
				      tu_typed_value(g, outs[k], OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, threads, forced[t / 2], &fast, &exact);
		assert_string_equal(blocked_of(fast, "c"), blocked ? "w" : "");
		for (int k = 0; k < 4; k++)
			assert_string_equal(blocked_of(fast, pools[k]), !blocked ? ""
									: k < 2	 ? "r"
										 : "w");
		for (int r = 0; r < 2; r++)
			agree(fast, exact, N, C, H, 4, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* a blocked MaxPool 3x3 (stride 1 and 2) of 32, 36 or 256 channels between 1x1 convs with
 * NaNs in x (each conv output reads every x channel: NaN in every channel): the windows over
 * them NaN in fast mode as in exact mode (the AVX-512 path: blocks of 16, or NHWC's 36 lanes
 * as 16 + 16 + 4; at 256 channels of 64x64 the rows without a NaN a few output rows read take
 * vmaxps alone), the rest close, in each forced layout */
static void max_pool_nans(void **state)
{
	(void)state;
	const int64_t N = 1, C = 16;
	for (int t = 0; t < 2 * 3 * NFORCED; t++) {
		const int64_t stride = 1 + t % 2, M = (int64_t[]){32, 36, 256}[t / 2 % 3];
		const int64_t H = M == 256 ? 64 : 12;
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "W", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
		tu_float_init(g, "V", 4, (int64_t[]){C, M, 1, 1}, 2, 1.0f / sqrtf((float)M));
		conv(g, "x,W", "c", 1, 1, 1);
		om_node *p = node(g, "MaxPool", "c", "max");
		tu_attr_ints(p, "kernel_shape", 2, (int64_t[]){3, 3});
		tu_attr_ints(p, "strides", 2, (int64_t[]){stride, stride});
		tu_attr_ints(p, "pads", 4, (int64_t[]){1, 1, 1, 1});
		conv(g, "max,V", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, 1, forced[t / 6], &fast, &exact);
		assert_string_equal(blocked_of(fast, "max"), om_layout_block() ? "rw" : "");
		om_tensor in = {0}, a = {0}, b = {0};
		om_status st = {0};
		assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, 4, (int64_t[]){N, C, H, H}, &st),
				 OM_OK);
		float *v = in.data;
		tu_fill(v, om_tensor_numel(&in), 9, 1.0f);
		v[3 * H + 5] = NAN;            /* channel 0, (3, 5) */
		v[(C - 1) * H * H + H * H - 1] = NAN; /* the last channel's corner */
		if (om_session_run(fast, &in, 1, &a, 1, &st) ||
		    om_session_run(exact, &in, 1, &b, 1, &st))
			fail_msg("%s", st.msg);
		const float *fy = a.data, *ey = b.data;
		int64_t nans = 0;
		for (int64_t i = 0; i < om_tensor_numel(&b); i++) {
			const bool nan = ey[i] != ey[i];
			nans += nan;
			if ((fy[i] != fy[i]) != nan ||
			    (!nan && !(fabsf(fy[i] - ey[i]) <= 2e-5f * (1 + fabsf(ey[i])))))
				fail_msg("stride %lld [%lld]: %g against %g", (long long)stride,
					 (long long)i, (double)fy[i], (double)ey[i]);
		}
		assert_true(nans > 0);
		om_tensor_free(&in), om_tensor_free(&a), om_tensor_free(&b);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* Inception's shape: two 1x1 convs of x concatenated along C (axis 1, and -3), then a 1x1 conv
 * of the result: blocked throughout in NHWC, and channel-blocked when each conv's channels are
 * whole blocks (32 and 16: also for 8-lane blocks), plain when one is not (24 + 20); against
 * exact mode, batch 2 and a symbolic batch (run on 3 images), at one and two threads */
static void concat_of_blocks(void **state)
{
	(void)state;
	const int32_t block = om_layout_block();
	const int64_t C = 8, H = 7;
	const int64_t widths[][2] = {{32, 16}, {24, 20}};
	for (int t = 0; t < 8 * NFORCED; t++) {
		const int64_t *w = widths[t % 2], N = t / 2 % 2 ? -1 : 2;
		const int threads = 1 + t / 4 % 2;
		const bool nhwc = forced[t / 8] == OM_LAYOUT_NHWC;
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "A", 4, (int64_t[]){w[0], C, 1, 1}, 1, 0.3f);
		tu_float_init(g, "B", 4, (int64_t[]){w[1], C, 1, 1}, 2, 0.3f);
		tu_float_init(g, "D", 4, (int64_t[]){C, w[0] + w[1], 1, 1}, 3, 0.2f);
		conv(g, "x,A", "a", 1, 1, 1);
		conv(g, "x,B", "b", 1, 1, 1);
		om_node *k = node(g, "Concat", "a,b", "cat");
		om_node_set_attr(k, "axis", OM_ATTR_INT)->i = t % 4 < 2 ? 1 : -3;
		conv(g, "cat,D", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, threads, forced[t / 8], &fast, &exact);
		const bool whole = block && (nhwc || (w[0] % block == 0 && w[1] % block == 0));
		assert_string_equal(blocked_of(fast, "a"), whole ? "w" : "");
		assert_string_equal(blocked_of(fast, "cat"), whole ? "rw" : "");
		assert_string_equal(blocked_of(fast, "y"), whole ? "r" : "");
		for (int r = 0; r < 2; r++)
			agree(fast, exact, N > 0 ? N : 3, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

static void string_attr(om_node *n, const char *name, const char *v)
{
	om_node_set_attr(n, name, OM_ATTR_STRING)->s = (om_str){v, (int64_t)strlen(v)};
}

/* a Resize's case: its attributes and scales, or sizes (n_sizes > 0), of x (N, C, H, H) */
typedef struct rs_case {
	int64_t opset;
	const char *mode, *coord;
	float scales[4];
	int64_t sizes[2]; /* H, W out when not 0 */
	bool antialias, plain; /* plain: the Resize keeps its values plain in either layout */
	int side; /* 1: it reads the graph input (plain), 2: its output is a graph output too */
} rs_case;

/* A UNet's or a detector's neck: a 1x1 conv, a Resize of H and W, a 1x1 conv: the Resize takes
 * the conv's blocked values and gives the next conv blocked ones (NHWC, or whole blocks of
 * channels: 32 and, for the channel-blocked layout only, not 24), in every mode, by scales or
 * sizes, up and down (antialias); plain when it samples outside the input
 * (tf_crop_and_resize's extrapolation) or resizes a channel; only writes blocked values when
 * it reads the graph input, only reads them when its output is a graph output too. Against
 * exact mode, batch 2 and a symbolic batch run on 3 images, one and two threads, each forced
 * layout. */
static void resize_between_convs(void **state)
{
	(void)state;
	const rs_case cases[] = {
		{13, "linear", "half_pixel", {1, 1, 2, 2}, {0}, false, false, 0},
		{13, "nearest", "asymmetric", {1, 1, 2, 2}, {0}, false, false, 0},
		{13, "cubic", "align_corners", {1, 1, 1.5f, 2.5f}, {0}, false, false, 0},
		{18, "linear", "pytorch_half_pixel", {0}, {11, 7}, false, false, 0},
		{18, "linear", "half_pixel", {1, 1, 0.5f, 0.6f}, {0}, true, false, 0},
		{13, "linear", "tf_crop_and_resize", {1, 1, 2, 2}, {0}, false, true, 0},
		{13, "nearest", "asymmetric", {1, 2, 2, 2}, {0}, false, true, 0},
		{13, "linear", "half_pixel", {1, 1, 2, 2}, {0}, false, false, 1},
		{13, "linear", "align_corners", {1, 1, 0.5f, 0.7f}, {0}, false, false, 2},
	};
	const int32_t block = om_layout_block();
	const int64_t C = 8, H = 9;
	const int ncases = (int)(sizeof cases / sizeof *cases);
	for (int t = 0; t < ncases * 2 * 2 * NFORCED; t++) {
		const rs_case *k = &cases[t % ncases];
		const int64_t E = t / ncases % 2 ? 24 : 32, N = t / ncases / 2 % 2 ? -1 : 2;
		const int threads = 1 + t / ncases % 2;
		const om_layout_choice layout = forced[t / (ncases * 4)];
		const int64_t E2 = k->scales[1] == 2 ? 2 * E : E, X = k->side == 1 ? E : C;
		om_model *m = tu_model(k->opset);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, X, H, H}));
		tu_float_init(g, "A", 4, (int64_t[]){E, C, 1, 1}, 1, 0.3f);
		tu_float_init(g, "D", 4, (int64_t[]){C, E2, 1, 1}, 2, 0.2f);
		if (k->side == 1)
			node(g, "Identity", "x", "a");
		else
			conv(g, "x,A", "a", 1, 1, 1);
		om_node *r;
		if (k->sizes[0]) {
			om_value *v = om_graph_value(g, "sizes");
			v->init = om_model_tensor(m, OM_INT64, 1, (int64_t[]){2});
			memcpy(v->init->data, k->sizes, sizeof k->sizes);
			v->flags |= OM_VALUE_INITIALIZER;
			om_type_from_tensor(m, &v->type, v->init);
			tu_push_value(g, &g->inits, &g->ninits, v);
			r = node(g, "Resize", "a,,,sizes", "rs");
			/* sizes of H and W alone (axes, opset 18): the batch may be a symbol */
			tu_attr_ints(r, "axes", 2, (int64_t[]){2, 3});
		} else {
			om_value *v = tu_float_init(g, "scales", 1, (int64_t[]){4}, 3, 1.0f);
			memcpy(v->init->data, k->scales, sizeof k->scales);
			om_value *roi = tu_float_init(g, "roi", 1, (int64_t[]){8}, 4, 1.0f);
			memcpy(roi->init->data, (float[]){0, 0, -0.2f, 0.1f, 1, 1, 0.9f, 1.2f},
			       8 * sizeof(float));
			r = node(g, "Resize", "a,roi,scales", "rs");
		}
		string_attr(r, "mode", k->mode);
		string_attr(r, "coordinate_transformation_mode", k->coord);
		if (!strcmp(k->mode, "nearest"))
			string_attr(r, "nearest_mode", "floor");
		if (k->antialias)
			om_node_set_attr(r, "antialias", OM_ATTR_INT)->i = 1;
		conv(g, "rs,D", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		if (k->side == 2)
			tu_push_value(g, &g->outputs, &g->noutputs,
				      tu_typed_value(g, "rs", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, threads, layout, &fast, &exact);
		const bool whole = block && (layout == OM_LAYOUT_NHWC || E % block == 0);
		static const char *const sides[] = {"rw", "w", "r"};
		assert_string_equal(blocked_of(fast, "rs"),
				    whole && !k->plain ? sides[k->side] : "");
		for (int i = 0; i < 2; i++)
			agree(fast, exact, N > 0 ? N : 3, X, H, k->side == 2 ? 2 : 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* a ConvTranspose's case: kernel, stride, pads (begin = end), output_padding, dilation,
 * group, bias, auto_pad (NULL: NOTSET), whether its output is also a graph output (read
 * plain), and the activation after it (NULL: none) */
typedef struct ct_case {
	int64_t k, stride, pad, opad, dil, group;
	bool bias;
	const char *auto_pad;
	bool side;
	const char *act;
} ct_case;

/* A UNet's up-convolution: a 1x1 conv, a ConvTranspose, a 1x1 conv: in NHWC the ConvTranspose
 * reads and writes NHWC (om_convt_nhwc), only reads it when its output is also a graph
 * output, and stays plain when grouped or in the channel-blocked layout; kernels 2 (the
 * stride: no overlap), 3 and 4 (overlapping taps, output_padding, SAME_UPPER), dilation 2, with
 * and without a bias; a Relu or Sigmoid after it is absorbed in fast mode (om_ctx.post) unless
 * the ConvTranspose's output is also a graph output. Against exact mode, batch 2 and a
 * symbolic batch run on 3 images, one and two threads, each forced layout. */
static void convt_between_convs(void **state)
{
	(void)state;
	const ct_case cases[] = {
		{2, 2, 0, 0, 1, 1, true, NULL, false, "Relu"},
		{3, 2, 1, 1, 1, 1, true, NULL, false, NULL},
		{4, 2, 1, 0, 1, 1, false, NULL, false, "Sigmoid"},
		{3, 1, 0, 0, 2, 1, true, NULL, false, NULL},
		{3, 2, 0, 0, 1, 1, true, "SAME_UPPER", false, NULL},
		{2, 2, 0, 0, 1, 1, true, NULL, true, "Relu"},
		{3, 2, 1, 0, 1, 4, true, NULL, false, "Sigmoid"},
	};
	const int32_t block = om_layout_block();
	const int64_t C = 8, E = 24, F = 20, H = 7;
	const int ncases = (int)(sizeof cases / sizeof *cases);
	for (int t = 0; t < ncases * 2 * 2 * NFORCED; t++) {
		const ct_case *k = &cases[t % ncases];
		const int64_t N = t / ncases % 2 ? -1 : 2;
		const int threads = 1 + t / ncases / 2 % 2;
		const om_layout_choice layout = forced[t / (ncases * 4)];
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "A", 4, (int64_t[]){E, C, 1, 1}, 1, 0.3f);
		tu_float_init(g, "T", 4, (int64_t[]){E, F / k->group, k->k, k->k}, 2, 0.2f);
		tu_float_init(g, "B", 1, (int64_t[]){F}, 3, 0.5f);
		tu_float_init(g, "D", 4, (int64_t[]){C, F, 1, 1}, 4, 0.2f);
		conv(g, "x,A", "a", 1, 1, 1);
		om_node *r = node(g, "ConvTranspose", k->bias ? "a,T,B" : "a,T", "ct");
		tu_attr_ints(r, "kernel_shape", 2, (int64_t[]){k->k, k->k});
		tu_attr_ints(r, "strides", 2, (int64_t[]){k->stride, k->stride});
		tu_attr_ints(r, "dilations", 2, (int64_t[]){k->dil, k->dil});
		om_node_set_attr(r, "group", OM_ATTR_INT)->i = k->group;
		if (k->auto_pad)
			string_attr(r, "auto_pad", k->auto_pad);
		else
			tu_attr_ints(r, "pads", 4, (int64_t[]){k->pad, k->pad, k->pad, k->pad});
		if (k->opad)
			tu_attr_ints(r, "output_padding", 2, (int64_t[]){k->opad, k->opad});
		if (k->act)
			node(g, k->act, "ct", "ca");
		conv(g, k->act ? "ca,D" : "ct,D", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		if (k->side)
			tu_push_value(g, &g->outputs, &g->noutputs,
				      tu_typed_value(g, "ct", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, threads, layout, &fast, &exact);
		const bool nhwc = block && layout == OM_LAYOUT_NHWC && k->group == 1;
		assert_string_equal(blocked_of(fast, "ct"), !nhwc ? "" : k->side ? "r" : "rw");
		assert_int_equal(tu_absorbed(fast), k->act && !k->side);
		assert_int_equal(tu_absorbed(exact), 0);
		for (int i = 0; i < 2; i++)
			agree(fast, exact, N > 0 ? N : 3, C, H, k->side ? 2 : 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* DenseNet's shape: a conv, BatchNormalization (inference) -> Relu, a conv; C = 40, not a
 * multiple of the block, on 6x6 and 30x30 images: blocked throughout, against exact mode
 * (batch 2 and a symbolic batch run on 3 images, one and two threads), in each forced layout */
static void batchnorm_between_convs(void **state)
{
	(void)state;
	const bool blocked = om_layout_block() != 0;
	const int64_t C = 8, M = 40;
	for (int t = 0; t < 8 * NFORCED; t++) {
		const int64_t N = t % 2 ? -1 : 2, H = t / 4 % 2 ? 30 : 6; /* 30: images of 36000
									 floats, in pieces */
		om_model *m = tu_model(15);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
		tu_float_init(g, "A", 4, (int64_t[]){M, C, 1, 1}, 1, 0.3f);
		tu_float_init(g, "D", 4, (int64_t[]){C, M, 1, 1}, 2, 0.2f);
		tu_float_init(g, "s", 1, (int64_t[]){M}, 3, 1.0f);
		tu_float_init(g, "bias", 1, (int64_t[]){M}, 4, 0.5f);
		tu_float_init(g, "mean", 1, (int64_t[]){M}, 5, 0.5f);
		float *var = tu_float_init(g, "var", 1, (int64_t[]){M}, 6, 1.0f)->init->data;
		for (int64_t k = 0; k < M; k++)
			var[k] = 0.5f + fabsf(var[k]); /* variances */
		conv(g, "x,A", "a", 1, 1, 1);
		om_node *bn = node(g, "BatchNormalization", "a,s,bias,mean,var", "bn");
		om_node_set_attr(bn, "epsilon", OM_ATTR_FLOAT)->f = 1e-3f;
		node(g, "Relu", "bn", "r");
		conv(g, "r,D", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, 1 + t / 2 % 2, forced[t / 8], &fast, &exact);
		assert_string_equal(blocked_of(fast, "bn"), blocked ? "rw" : "");
		assert_string_equal(blocked_of(fast, "y"), blocked ? "r" : "");
		assert_int_equal(tu_absorbed(fast), 1); /* the Relu: bn writes r */
		for (int r = 0; r < 2; r++)
			agree(fast, exact, N > 0 ? N : 3, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* x (N, C, H, H) -> BatchNormalization -> an activation -> y, plain: the activation absorbed
 * into the BatchNormalization (OM_OP_EPILOGUE), which applies it to each row, against exact
 * mode; at opset 7 with spatial 0 (per-element parameters) the kernel's general path applies
 * it to the whole output */
static void batchnorm_absorbs_activation(void **state)
{
	(void)state;
	const char *acts[] = {"Relu", "Sigmoid", "LeakyRelu", "HardSigmoid"};
	const int64_t C = 5, H = 7;
	for (int t = 0; t < 2 * 4; t++) {
		const bool spatial0 = t >= 4;
		om_model *m = tu_model(spatial0 ? 7 : 15);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){2, C, H, H}));
		const int32_t pr = spatial0 ? 3 : 1;
		const int64_t *pd = spatial0 ? (const int64_t[]){C, H, H} : (const int64_t[]){C};
		tu_float_init(g, "s", pr, pd, 3, 1.0f);
		tu_float_init(g, "bias", pr, pd, 4, 0.5f);
		tu_float_init(g, "mean", pr, pd, 5, 0.5f);
		om_value *vv = tu_float_init(g, "var", pr, pd, 6, 1.0f);
		float *var = vv->init->data;
		for (int64_t k = 0; k < om_tensor_numel(vv->init); k++)
			var[k] = 0.5f + fabsf(var[k]);
		om_node *bn = node(g, "BatchNormalization", "x,s,bias,mean,var", "bn");
		if (spatial0)
			om_node_set_attr(bn, "spatial", OM_ATTR_INT)->i = 0;
		node(g, acts[t % 4], "bn", "y");
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, -1, NULL));
		om_session *fast, *exact;
		sessions(m, 1, OM_LAYOUT_AUTO, &fast, &exact);
		if (tu_absorbed(fast) != 1)
			fail_msg("%s%s: %d absorbed", acts[t % 4], spatial0 ? " (spatial 0)" : "",
				 tu_absorbed(fast));
		assert_int_equal(tu_absorbed(exact), 0);
		agree(fast, exact, 2, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* HardSwish written out between two convs, c * Clip(c + 3, 0, 6) / d: blocked throughout
 * when d is 6, plain when d is 0 (0 / 0 in the padding would be NaN), against exact mode */
static void hardswish_written_out(void **state)
{
	(void)state;
	const int64_t N = 1, C = 24, M = 40, H = 10;
	for (int t = 0; t < 2 * NFORCED; t++) {
		const int zero = t % 2;
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){-1, C, H, H}));
		tu_float_init(g, "W1", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
		tu_float_init(g, "W2", 4, (int64_t[]){C, M, 1, 1}, 2, 1.0f / sqrtf((float)M));
		const float k[4] = {3, 0, 6, zero ? 0 : 6};
		const char *names[4] = {"three", "lo", "hi", "d"};
		for (int i = 0; i < 4; i++) {
			tu_float_init(g, names[i], 0, NULL, 1, 1.0f);
			*(float *)om_graph_value(g, names[i])->init->data = k[i];
		}
		conv(g, "x,W1", "c", 1, 1, 1);
		node(g, "Add", "c,three", "a");
		node(g, "Clip", "a,lo,hi", "k");
		node(g, "Mul", "c,k", "h");
		node(g, "Div", "h,d", "q");
		conv(g, "q,W2", "y", 1, 1, 1);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){-1, C, H, H}));
		om_session *fast, *exact;
		sessions(m, 1, forced[t / 2], &fast, &exact);
		const bool blocked = om_layout_block() != 0 && !zero;
		assert_string_equal(blocked_of(fast, "c"), blocked ? "w" : "");
		assert_string_equal(blocked_of(fast, "q"), blocked ? "rw" : "");
		assert_string_equal(blocked_of(fast, "y"), blocked ? "r" : "");
		agree(fast, exact, N, C, H, 1, !zero); /* x / 0: infinities and NaNs alike */
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* a 3x3 conv of C channels that Winograd F(4x4) takes between two 1x1 convs: in nChw16c plain
 * at one thread when C is 64 or more (omopt's Winograd wins), blocked at two (oneDNN's conv
 * splits better) but on AVX2 without AVX-512 (Winograd wins there too), and blocked for fewer
 * outputs; in NHWC blocked where oneDNN has its brgemm NHWC conv (AVX-512); against exact mode */
static void winograd_case(int64_t C, int64_t M)
{
	const int64_t N = 1, H = 20;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "W1", 4, (int64_t[]){C, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	tu_float_init(g, "W3", 4, (int64_t[]){M, C, 3, 3}, 2, 1.0f / sqrtf((float)(9 * C)));
	tu_float_init(g, "W2", 4, (int64_t[]){C, M, 1, 1}, 3, 1.0f / sqrtf((float)M));
	conv(g, "x,W1", "p", 1, 1, 1);
	conv(g, "p,W3", "w3", 3, 1, 1);
	conv(g, "w3,W2", "y", 1, 1, 1);
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	for (int t = 0; t < 2 * NFORCED; t++) {
		const int threads = 1 + t % 2;
		om_session *fast, *exact;
		sessions(m, threads, forced[t / 2], &fast, &exact);
		/* NHWC's Winograd-sized convs are oneDNN's where it has brgemm (AVX-512) */
		const bool nhwc = forced[t / 2] == OM_LAYOUT_NHWC && om_layout_block() == 16;
		const bool blocked = om_layout_block() != 0 &&
				     ((threads > 1 && !om_cpu_avx2_only()) || C < 64 || M < 64 ||
				      nhwc);
		assert_string_equal(blocked_of(fast, "p"), blocked ? "w" : "");
		assert_string_equal(blocked_of(fast, "w3"), blocked ? "rw" : "");
		assert_string_equal(blocked_of(fast, "y"), blocked ? "r" : "");
		agree(fast, exact, N, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
	}
	om_model_free(m);
}

/* x -> 1x1 conv (C) -> grouped 3x3 conv (C, G groups, stride s) -> 1x1 conv -> y, against
 * exact mode: NHWC through (OM_LAYOUT_AUTO); channel-blocked (forced) through when each group
 * is whole blocks, plain around the grouped conv (which oneDNN then runs with reorders) when
 * not */
static void grouped_case(int64_t C, int64_t G, int64_t stride)
{
	const int64_t N = 2, H = 15, H2 = (H - 1) / stride + 1;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "W1", 4, (int64_t[]){C, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	tu_float_init(g, "Wg", 4, (int64_t[]){C, C / G, 3, 3}, 2,
		      1.0f / sqrtf((float)(9 * C / G)));
	tu_float_init(g, "W2", 4, (int64_t[]){C, C, 1, 1}, 3, 1.0f / sqrtf((float)C));
	conv(g, "x,W1", "p", 1, 1, 1);
	conv(g, "p,Wg", "q", 3, stride, G);
	conv(g, "q,W2", "y", 1, 1, 1);
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){N, C, H2, H2}));
	const int32_t b = om_layout_block();
	for (int t = 0; t < 4; t++) {
		const int threads = 1 + t % 2;
		/* auto: NHWC where oneDNN has brgemm (AVX-512), else the CPU's block */
		const bool autol = t < 2, nhwc = autol && b == 16;
		const bool whole = b && (nhwc || (C / G) % b == 0);
		om_session *fast, *exact;
		sessions(m, threads, autol ? OM_LAYOUT_AUTO : OM_LAYOUT_BLOCKED, &fast, &exact);
		assert_string_equal(layout_of(fast), !whole ? "" : nhwc ? "nhwc" : "blocked");
		if (strcmp(blocked_of(fast, "q"), whole ? "rw" : ""))
			fail_msg("C %lld in %lld groups%s: q takes '%s' blocked", (long long)C,
				 (long long)G, nhwc ? "" : " (blocked)", blocked_of(fast, "q"));
		agree(fast, exact, N, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
	}
	om_model_free(m);
}

static void grouped_convs(void **state)
{
	(void)state;
	grouped_case(32, 2, 1);  /* 16 a group: whole blocks at 8 and 16 */
	grouped_case(48, 3, 2);
	grouped_case(48, 6, 1);  /* 8 a group: whole blocks at 8 only (regnet's first stages) */
	grouped_case(24, 3, 1);
}

static void winograd_by_threads(void **state)
{
	(void)state;
	winograd_case(16, 16);
	winograd_case(64, 64);
	winograd_case(32, 64); /* few inputs: blocked at one thread too (squeezenet's expands) */
}

/* the node named `name` */
static om_node_info info_of(const om_session *s, const char *name)
{
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		if (ni.node->name && !strcmp(ni.node->name, name))
			return ni;
	}
	fail_msg("no node %s", name);
	return (om_node_info){0};
}

/* the squeeze-excitation cases of se_case */
enum se_kind {
	SE_BLOCKED, /* b blocked through: oneDNN scales the weights, image by image */
	SE_PLAIN,   /* b also read by a Transpose (a graph output), so plain, and a Relu after y:
		       at one thread oneDNN declines y, and X s is formed in a buffer */
	SE_CONST,   /* a constant (E, 1, 1) factor (no 4-D value: the Mul is plain) */
	SE_SHARED,  /* e is a graph output too: the Mul runs */
	SE_RESIDUAL, /* y is a com.microsoft FusedConv with Z = conv1x1(x) C->M, blocked too */
};

/* x (N, C, H, H) -> b = dwconv3x3(conv1x1 C->E) (`dense`: a 3x3 conv of one group, so that the
 * plan is NHWC) -> squeeze-excitation e = Mul(b, s) (either order; s = Sigmoid(conv(Relu(conv(
 * GAP(b))))), or a constant) -> y = conv1x1 E->M (+ Relu): the Mul is absorbed into y
 * (om_ctx.in_scale) when y has at most half as many weights as b has elements an image and
 * nothing else reads e, and agrees with exact mode at one and two threads; N -1: a symbolic
 * batch, run on 1 and 3 images */
static void se_case(int64_t N, int64_t M, int order, enum se_kind kind, bool dense)
{
	const int64_t C = 8, E = 24, H = 10, R = 6;
	om_model *m = tu_model_ms(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "W1", 4, (int64_t[]){E, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	tu_float_init(g, "Wr", 4, (int64_t[]){M, C, 1, 1}, 8, 1.0f / sqrtf((float)C));
	tu_float_init(g, "Wd", 4, (int64_t[]){E, dense ? E : 1, 3, 3}, 2,
		      1.0f / (dense ? 3 * sqrtf((float)E) : 3));
	tu_float_init(g, "Wf", 4, (int64_t[]){R, E, 1, 1}, 3, 1.0f / sqrtf((float)E));
	/* the fills are positive: a small Wg keeps Sigmoid(s0) near 0.7, apart between images */
	tu_float_init(g, "Wg", 4, (int64_t[]){E, R, 1, 1}, 4, 0.01f / sqrtf((float)R));
	tu_float_init(g, "Wy", 4, (int64_t[]){M, E, 1, 1}, 5, 1.0f / sqrtf((float)E));
	tu_float_init(g, "By", 1, (int64_t[]){M}, 6, 0.3f);
	tu_float_init(g, "k", 3, (int64_t[]){E, 1, 1}, 7, 1.0f);
	conv(g, "x,W1", "a", 1, 1, 1);
	conv(g, "a,Wd", "b", 3, 1, dense ? 1 : E);
	node(g, "GlobalAveragePool", "b", "p");
	conv(g, "p,Wf", "f0", 1, 1, 1);
	node(g, "Relu", "f0", "f");
	conv(g, "f,Wg", "s0", 1, 1, 1);
	node(g, "Sigmoid", "s0", "s");
	const char *fac = kind == SE_CONST ? "k" : "s";
	char ins[8];
	snprintf(ins, sizeof ins, "%s,%s", order ? fac : "b", order ? "b" : fac);
	node(g, "Mul", ins, "e");
	if (kind == SE_RESIDUAL) {
		conv(g, "x,Wr", "r", 1, 1, 1);
		om_node *f = conv(g, "e,Wy,By,r", "y", 1, 1, 1);
		f->op = "FusedConv", f->domain = "com.microsoft";
	} else {
		conv(g, "e,Wy,By", kind == SE_PLAIN ? "y0" : "y", 1, 1, 1);
	}
	if (kind == SE_PLAIN)
		node(g, "Relu", "y0", "y");
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){N, M, H, H}));
	const char *side = kind == SE_PLAIN ? "t" : kind == SE_SHARED ? "e" : NULL;
	if (kind == SE_PLAIN)
		tu_attr_ints(node(g, "Transpose", "b", "t"), "perm", 4, (int64_t[]){0, 2, 3, 1});
	if (side)
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, side, OM_FLOAT, -1, NULL));
	const bool absorbed = 2 * M * E <= E * H * H && kind != SE_SHARED;
	const char *conv_y = kind == SE_PLAIN ? "y0" : "y";
	for (int threads = 1; threads <= 2; threads++) {
		om_session *fast, *exact;
		sessions(m, threads, OM_LAYOUT_AUTO, &fast, &exact);
		const om_node_info mul = info_of(fast, "e"), y = info_of(fast, conv_y);
		char what[64];
		snprintf(what, sizeof what, "N %lld M %lld order %d kind %d%s", (long long)N,
			 (long long)M, order, (int)kind, dense ? " dense" : "");
		if (mul.absorbed != (absorbed ? 2 : 0) || y.scaled != absorbed)
			fail_msg("%s: Mul absorbed %d, conv scaled %d", what, mul.absorbed,
				 y.scaled);
		assert_int_equal(info_of(exact, "e").absorbed, 0);
		const bool blocked =
			om_layout_block() != 0 && (kind == SE_BLOCKED || kind == SE_RESIDUAL);
		if (kind != SE_CONST && strcmp(blocked_of(fast, conv_y), blocked ? "r" : ""))
			fail_msg("%s: y takes '%s' blocked", what, blocked_of(fast, conv_y));
		if (blocked && strcmp(layout_of(fast), dense ? dense_layout() : "blocked"))
			fail_msg("%s: layout '%s'", what, layout_of(fast));
		for (int64_t n = N > 0 ? N : 1; n <= (N > 0 ? N : 3); n += 2)
			agree(fast, exact, n, C, H, side ? 2 : 1, true);
		om_session_free(fast);
		om_session_free(exact);
	}
	om_model_free(m);
}

static void se_mul_absorbed(void **state)
{
	(void)state;
	for (int t = 0; t < 4; t++) /* depthwise and dense b: channel-blocked and NHWC */
		for (int kind = SE_BLOCKED; kind <= SE_RESIDUAL; kind++) {
			se_case(1, 16, t % 2, (enum se_kind)kind, t / 2);
			se_case(2, 16, t % 2, (enum se_kind)kind, t / 2);
			se_case(-1, 16, t % 2, (enum se_kind)kind, t / 2);
		}
	se_case(1, 60, 0, SE_BLOCKED, false); /* 60 x 24 weights against 24 x 10 x 10: the Mul
						 runs */
}

/* om_layout_block_f32 and om_layout_unblock_f32 against their definitions: lane l of pixel p of
 * block cb is channel cb * b + l of pixel p, 0 past C; unblocking gives X back. Channels and
 * pixels that are and are not multiples of the block and of a 16x16 transposition's tile. */
static void conversion(int64_t N, int64_t C, int64_t P, int64_t b)
{
	const int64_t Cb = (C + b - 1) / b, nx = N * C * P, ny = N * Cb * P * b;
	float *x = malloc(sizeof(float) * (size_t)nx), *y = malloc(sizeof(float) * (size_t)ny);
	float *back = malloc(sizeof(float) * (size_t)nx);
	for (int64_t i = 0; i < nx; i++)
		x[i] = (float)i + 0.5f;
	for (int64_t i = 0; i < ny; i++)
		y[i] = NAN;
	om_layout_block_f32(x, N, C, P, b, y);
	for (int64_t i = 0; i < ny; i++) {
		const int64_t l = i % b, p = i / b % P, cb = i / (b * P) % Cb, n = i / (b * P * Cb);
		const int64_t ch = cb * b + l;
		const float want = ch < C ? x[(n * C + ch) * P + p] : 0.0f;
		if (!(y[i] == want))
			fail_msg("C %lld P %lld b %lld: blocked %lld is %g, not %g", (long long)C,
				 (long long)P, (long long)b, (long long)i, (double)y[i],
				 (double)want);
	}
	om_layout_unblock_f32(y, N, C, P, b, back);
	assert_memory_equal(back, x, sizeof(float) * (size_t)nx);
	free(x), free(y), free(back);
}

static void conversions(void **state)
{
	(void)state;
	const int64_t Cs[] = {1, 5, 16, 17, 40}, Ps[] = {1, 15, 16, 17, 33, 100}, bs[] = {8, 16};
	for (size_t ci = 0; ci < sizeof Cs / sizeof Cs[0]; ci++)
		for (size_t pi = 0; pi < sizeof Ps / sizeof Ps[0]; pi++)
			for (size_t bi = 0; bi < 2; bi++)
				conversion(2, Cs[ci], Ps[pi], bs[bi]);
}

/* x (N, C, H, H) -> a = conv 3x3 (x), b = conv 1x1 (x) -> r = Relu(a + b) -> y = conv 1x1 (r)
 * (a graph output); with `broadcast` also q = Relu(y + K), K a constant (1, C, H, H) that
 * broadcasts over a batch of more than one image (the graph output then q) */
static om_model *sum_model(int64_t N, int64_t C, int64_t H, bool broadcast)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	tu_float_init(g, "Wa", 4, (int64_t[]){C, C, 3, 3}, 21, 1.0f / (3 * sqrtf((float)C)));
	tu_float_init(g, "Ba", 1, (int64_t[]){C}, 22, 0.2f);
	tu_float_init(g, "Wb", 4, (int64_t[]){C, C, 1, 1}, 23, 1.0f / sqrtf((float)C));
	tu_float_init(g, "Wy", 4, (int64_t[]){C, C, 1, 1}, 24, 1.0f / sqrtf((float)C));
	tu_float_init(g, "K", 4, (int64_t[]){1, C, H, H}, 25, 0.5f);
	conv(g, "x,Wa,Ba", "a", 3, 1, 1);
	conv(g, "x,Wb", "b", 1, 1, 1);
	node(g, "Add", "a,b", "s");
	node(g, "Relu", "s", "r");
	conv(g, "r,Wy", "y", 1, 1, 1);
	if (broadcast) {
		node(g, "Add", "y,K", "t");
		node(g, "Relu", "t", "q");
	}
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, broadcast ? "q" : "y", OM_FLOAT, 4,
				     (int64_t[]){N, C, H, H}));
	return m;
}

/* Adds absorbed into the conv writing one addend (plan_absorb.c, OM_OP_SUM), the Relu after
 * them too: b, whose addend a is computed before it (a's addend b is not yet), against exact
 * mode, in each layout, at one and two threads, with a fixed and a symbolic batch (runs of 1
 * and 3 images); the Add of a constant (1, C, H, H) absorbed with one image, not with a
 * symbolic batch, which it broadcasts over at 3 */
static void sums_absorbed(void **state)
{
	(void)state;
	static const om_layout_choice layouts[] = {OM_LAYOUT_AUTO, OM_LAYOUT_NCHW,
						   OM_LAYOUT_BLOCKED, OM_LAYOUT_NHWC};
	for (size_t t = 0; t < 2 * 2 * 2 * 4; t++) {
		const bool broadcast = t & 1, symbolic = t & 2;
		const int threads = 1 + (int)(t >> 2 & 1);
		const om_layout_choice layout = layouts[t >> 3];
		const int64_t C = 32, H = 12;
		om_model *m = sum_model(symbolic ? -1 : 1, C, H, broadcast);
		om_session *fast, *exact;
		sessions(m, threads, layout, &fast, &exact);
		assert_false(summed_of(fast, "a"));
		assert_true(summed_of(fast, "b"));
		assert_false(summed_of(exact, "b"));
		if (broadcast)
			assert_int_equal(summed_of(fast, "y"), !symbolic);
		assert_int_equal(tu_absorbed(fast), 2 + (broadcast && !symbolic ? 2 : 0));
		for (int r = 0; r < 2; r++)
			agree(fast, exact, symbolic ? 1 + 2 * r : 1, C, H, 1, true);
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

/* an initializer of type `dtype` holding the bytes `data` */
static void init_bytes(om_graph *g, const char *name, int32_t dtype, int32_t rank,
		       const int64_t *dims, const void *data)
{
	om_value *v = om_graph_value(g, name);
	v->init = om_model_tensor(g->model, dtype, rank, dims);
	memcpy(v->init->data, data, v->init->nbytes);
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, v->init);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

/* QLinearConv `out` = conv k x k (stride, group) of the 8-bit `in` (scale sx, zero point zx),
 * M outputs of Cg inputs a group, int8 weights in [-64, 64] (which oneDNN's int8 conv takes
 * on CPUs without VNNI too) per output channel, int32 bias, uint8 out */
static void qconv(om_graph *g, const char *in, const char *out, int64_t Cg, int64_t M,
		  int64_t k, int64_t stride, int64_t group, uint32_t seed)
{
	char names[6][16];
	const char *what[] = {"w", "ws", "wz", "b", "ys", "yz"};
	for (int i = 0; i < 6; i++)
		snprintf(names[i], sizeof names[i], "%s_%s", out, what[i]);
	const size_t nw = (size_t)(M * Cg * k * k);
	int8_t *w = malloc(nw), *wz = calloc((size_t)M, 1);
	float *ws = malloc(sizeof(float) * (size_t)M);
	int32_t *b = malloc(sizeof(int32_t) * (size_t)M);
	assert_true(w && wz && ws && b);
	for (size_t i = 0; i < nw; i++) {
		seed = seed * 1103515245u + 12345u;
		w[i] = (int8_t)((int)(seed >> 16 & 0xff) % 129 - 64);
	}
	for (int64_t m = 0; m < M; m++) {
		ws[m] = 0.5f / (64.0f * sqrtf((float)(Cg * k * k))) * (float)(1 + m % 3);
		b[m] = (int32_t)(m * 53 % 401) - 200;
	}
	const float ys = 0.03f;
	const uint8_t yz = 128;
	init_bytes(g, names[0], OM_INT8, 4, (int64_t[]){M, Cg, k, k}, w);
	init_bytes(g, names[1], OM_FLOAT, 1, &M, ws);
	init_bytes(g, names[2], OM_INT8, 1, &M, wz);
	init_bytes(g, names[3], OM_INT32, 1, &M, b);
	init_bytes(g, names[4], OM_FLOAT, 0, NULL, &ys);
	init_bytes(g, names[5], OM_UINT8, 0, NULL, &yz);
	char ins[160];
	snprintf(ins, sizeof ins, "%s,q_s,q_z,%s,%s,%s,%s,%s,%s", in, names[0], names[1], names[2],
		 names[4], names[5], names[3]);
	om_node *n = node(g, "QLinearConv", ins, out);
	const int64_t p = k / 2;
	tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){k, k});
	tu_attr_ints(n, "strides", 2, (int64_t[]){stride, stride});
	tu_attr_ints(n, "pads", 4, (int64_t[]){p, p, p, p});
	om_node_set_attr(n, "group", OM_ATTR_INT)->i = group;
	free(w), free(wz), free(ws), free(b);
}

/* the QDQ model ONNX Runtime's quantizer leaves once its groups are QLinearConvs: x (N, C, H,
 * H) float -> q = Q(x) -> a = qconv 3x3 C->M -> ap = MaxPool 3x3 (pads 1) of a -> b =
 * depthwise 3x3/2 -> e = Q(DQ(b) + DQ(c)),
 * c = qconv 1x1 of b -> y = DQ(qconv 1x1 M->C of e) (a graph output). Every 8-bit value
 * has scale 0.03 and zero point 128 (q_s, q_z) */
static om_model *qdq_model(int64_t N, int64_t C, int64_t M, int64_t H)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	const int64_t H2 = (H - 1) / 2 + 1;
	const float qs = 0.03f;
	const uint8_t qz = 128;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){N, C, H, H}));
	init_bytes(g, "q_s", OM_FLOAT, 0, NULL, &qs);
	init_bytes(g, "q_z", OM_UINT8, 0, NULL, &qz);
	node(g, "QuantizeLinear", "x,q_s,q_z", "q");
	qconv(g, "q", "a", C, M, 3, 1, 1, 1);
	om_node *mp = node(g, "MaxPool", "a", "ap"); /* uint8, the shape kept */
	tu_attr_ints(mp, "kernel_shape", 2, (int64_t[]){3, 3});
	tu_attr_ints(mp, "pads", 4, (int64_t[]){1, 1, 1, 1});
	qconv(g, "ap", "b", 1, M, 3, 2, M, 2);
	qconv(g, "b", "c", M, M, 1, 1, 1, 3);
	node(g, "DequantizeLinear", "b,q_s,q_z", "bf");
	node(g, "DequantizeLinear", "c,q_s,q_z", "cf");
	node(g, "Add", "bf,cf", "sum");
	node(g, "QuantizeLinear", "sum,q_s,q_z", "e");
	qconv(g, "e", "o", M, C, 1, 1, 1, 4);
	node(g, "DequantizeLinear", "o,q_s,q_z", "y");
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 4, (int64_t[]){N, C, H2, H2}));
	return m;
}

/* qdq_model in fast mode: NHWC planned (8-bit values blocked between the QLinearConvs, the
 * uint8 MaxPool, the per-tensor QuantizeLinear and DequantizeLinear and the Add between them
 * too), the same
 * bytes as a fast session kept NCHW (oneDNN's int8 convs either way, reorders or not), and
 * within a few steps of 0.03 of exact mode (oneDNN's rounding of the requantization may
 * differ by one), at one and two threads */
static void qdq_chain_nhwc(void **state)
{
	(void)state;
	static const expect want[] = {
		{"q", ""},   {"a", "w"},   {"ap", "rw"}, {"b", "rw"},   {"c", "rw"}, {"bf", "rw"},
		{"cf", "rw"}, {"sum", "rw"}, {"e", "rw"}, {"o", "r"},  {"y", ""},
	};
	const int64_t shapes[][4] = {{1, 3, 24, 19}, {2, 8, 32, 12}};
	/* without VNNI the depthwise conv runs the phase loop on NCHW values (conv_dw_int.c) and
	 * the plan stays NCHW */
	const bool dnnl = om_layout_block() != 0 && om_dnnl_int8_exact();
	for (size_t t = 0; t < 2 * sizeof shapes / sizeof *shapes; t++) {
		const int64_t *d = shapes[t / 2];
		const int threads = 1 + (int)(t % 2);
		om_model *m = qdq_model(d[0], d[1], d[2], d[3]);
		om_session *fast, *plain, *exact;
		om_status st = {0};
		const om_session_options po = {.threads = threads, .layout = OM_LAYOUT_NCHW};
		sessions(m, threads, OM_LAYOUT_AUTO, &fast, &exact);
		assert_int_equal(om_session_create(m, &po, &plain, &st), OM_OK);
		assert_string_equal(layout_of(fast), dnnl ? "nhwc" : "");
		for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
			const char *w = dnnl ? want[i].blocked : "";
			if (strcmp(blocked_of(fast, want[i].node), w))
				fail_msg("shape %zu: %s takes '%s' blocked, '%s' expected", t / 2,
					 want[i].node, blocked_of(fast, want[i].node), w);
		}
		for (int r = 0; r < 2; r++) { /* the second run reuses the kernels' states */
			om_tensor a = {0}, b = {0}, e = {0};
			run(fast, d[0], d[1], d[3], 1, &a);
			run(plain, d[0], d[1], d[3], 1, &b);
			run(exact, d[0], d[1], d[3], 1, &e);
			assert_int_equal(a.nbytes, b.nbytes);
			assert_memory_equal(a.data, b.data, a.nbytes);
			const float *x = a.data, *y = e.data;
			for (int64_t j = 0; j < om_tensor_numel(&e); j++)
				if (!(fabsf(x[j] - y[j]) <= 4 * 0.03f + 1e-6f))
					fail_msg("shape %zu [%lld]: %.9g against exact %.9g", t / 2,
						 (long long)j, (double)x[j], (double)y[j]);
			om_tensor_free(&a), om_tensor_free(&b), om_tensor_free(&e);
		}
		om_session_free(fast), om_session_free(plain), om_session_free(exact);
		om_model_free(m);
	}
}

/* Mul of (A, B, P, L) by (A, B, 1, L), L a short run, and Add of the two the other way round:
 * the tiled broadcast against a plain loop, bit for bit */
static void short_runs_broadcast(void **state)
{
	(void)state;
	const int64_t A = 2, B = 3, P = 37, L = 16;
	for (int op = 0; op < 2; op++) {
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		const int64_t big[4] = {A, B, P, L}, sd[4] = {A, B, 1, L};
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "x", OM_FLOAT, 4, big));
		tu_push_value(g, &g->inputs, &g->ninputs,
			      tu_typed_value(g, "v", OM_FLOAT, 4, sd));
		tu_graph_node(g, op ? "Add" : "Mul", op ? "v,x" : "x,v", "y");
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "y", OM_FLOAT, 4, big));
		for (int threads = 1; threads <= 2; threads++) {
			om_session *s = NULL;
			om_status st = {0};
			const om_session_options o = {.threads = threads};
			assert_int_equal(om_session_create(m, &o, &s, &st), OM_OK);
			om_tensor in[2] = {{0}, {0}}, y = {0};
			assert_int_equal(om_tensor_alloc(&in[0], OM_FLOAT, 4, big, &st), OM_OK);
			assert_int_equal(om_tensor_alloc(&in[1], OM_FLOAT, 4, sd, &st), OM_OK);
			tu_fill(in[0].data, om_tensor_numel(&in[0]), 1, 1.0f);
			tu_fill(in[1].data, om_tensor_numel(&in[1]), 2, 1.0f);
			assert_int_equal(om_session_run(s, in, 2, &y, 1, &st), OM_OK);
			const float *x = in[0].data, *v = in[1].data, *o_ = y.data;
			for (int64_t a = 0; a < A; a++)
				for (int64_t b = 0; b < B; b++)
					for (int64_t p = 0; p < P; p++)
						for (int64_t l = 0; l < L; l++) {
							const int64_t i = ((a * B + b) * P + p) * L + l;
							const float w = v[(a * B + b) * L + l];
							const float e = op ? w + x[i] : x[i] * w;
							if (o_[i] != e)
								fail_msg("op %d [%lld]: %g against %g",
									 op, (long long)i,
									 (double)o_[i], (double)e);
						}
			om_tensor_free(&in[0]);
			om_tensor_free(&in[1]);
			om_tensor_free(&y);
			om_session_free(s);
		}
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(blocked_against_exact),
					   cmocka_unit_test(global_pools),
					   cmocka_unit_test(pools_one_side),
					   cmocka_unit_test(windowed_pools),
					   cmocka_unit_test(max_pool_nans),
					   cmocka_unit_test(concat_of_blocks),
					   cmocka_unit_test(resize_between_convs),
					   cmocka_unit_test(convt_between_convs),
					   cmocka_unit_test(batchnorm_between_convs),
					   cmocka_unit_test(batchnorm_absorbs_activation),
					   cmocka_unit_test(hardswish_written_out),
					   cmocka_unit_test(winograd_by_threads),
					   cmocka_unit_test(grouped_convs),
					   cmocka_unit_test(se_mul_absorbed),
					   cmocka_unit_test(short_runs_broadcast),
					   cmocka_unit_test(qdq_chain_nhwc),
					   cmocka_unit_test(sums_absorbed),
					   cmocka_unit_test(conversions)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
