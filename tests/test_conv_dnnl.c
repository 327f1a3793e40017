/* test_conv_dnnl.c — fast-mode Conv and FusedConv in sessions (constant weights: the paths
 * that keep kernel state, oneDNN's when the build has it: 1x1 in NCHW, a 7x7/2 stem, a 3x3
 * stride-1 conv on a small image, a 5x5 depthwise conv blocked with reorders, dilated ones)
 * against exact mode, within float rounding of the sums; a second run reuses the state, a run
 * with another batch remakes it; bias, Z and activations as FusedConv's epilogue; one and two
 * threads. Activation nodes after the conv (QuickGelu, HardSwish, x * HardSigmoid(x),
 * x * Sigmoid(x), Clip of constant bounds) are absorbed into the conv step in fast mode
 * (runtime/plan_absorb.c) and counted; exact mode absorbs none. Passes (on the own kernels)
 * without oneDNN too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "session.h"

/* the nodes after the conv: y = post(c), or y = Mul(c, post(c)) when gated; Clip reads the
 * initializers lo and hi; `other`: Mul(z, post(c)) instead (z, not the conv output) */
typedef struct post_chain {
	const char *op; /* NULL: none */
	bool gated, other;
	int absorbed;   /* steps absorbed into the conv in fast mode */
} post_chain;

typedef struct conv_case {
	int64_t C, H, W, M, K, stride, pad, group;
	const char *act; /* FusedConv's activation, or NULL: Conv */
	bool z, bias;
	int64_t dil;
	post_chain post;
} conv_case;

static const conv_case cases[] = {
	{16, 9, 7, 24, 1, 1, 0, 1, NULL, false, true, 1, {0}},     /* 1x1 */
	{3, 20, 20, 8, 7, 2, 3, 1, NULL, false, true, 1, {0}},     /* stem */
	{32, 6, 6, 16, 3, 1, 1, 1, NULL, false, false, 1, {0}},    /* 3x3, small image */
	{24, 10, 10, 24, 5, 1, 2, 24, NULL, false, true, 1, {0}},  /* depthwise 5x5 */
	{16, 9, 7, 24, 1, 1, 0, 1, "Sigmoid", true, true, 1, {0}}, /* FusedConv 1x1 */
	{3, 20, 20, 8, 7, 2, 3, 1, "Relu", true, true, 1, {0}},    /* FusedConv stem */
	{24, 10, 10, 24, 5, 1, 2, 24, "Relu", false, true, 1, {0}},
	{8, 9, 9, 8, 3, 2, 1, 2, NULL, false, true, 1, {0}},       /* grouped, with reorders */
	{16, 12, 12, 8, 3, 1, 4, 1, NULL, false, true, 4, {0}},    /* dilated 3x3 */
	{24, 10, 10, 24, 5, 1, 4, 24, "Relu", false, true, 2, {0}}, /* dilated depthwise */
	{64, 32, 32, 64, 1, 1, 0, 1, "Relu", true, true, 1, {0}},  /* 4M MACs: split at 2 threads */
	{32, 30, 30, 48, 3, 2, 1, 1, NULL, false, true, 1, {0}},   /* 3x3/2, 3M MACs, blocked */
	/* activations absorbed by the planner, on each path */
	{16, 9, 7, 24, 1, 1, 0, 1, NULL, false, true, 1, {"QuickGelu", false, false, 1}},
	{3, 20, 20, 8, 7, 2, 3, 1, NULL, false, true, 1, {"HardSwish", false, false, 1}},
	{24, 10, 10, 24, 5, 1, 2, 24, NULL, false, true, 1, {"HardSigmoid", true, false, 2}},
	{24, 11, 11, 24, 3, 2, 1, 24, NULL, false, true, 1, {"Sigmoid", true, false, 2}},
	{32, 6, 6, 16, 3, 1, 1, 1, NULL, false, false, 1, {"Clip", false, false, 1}},
	{16, 12, 12, 16, 3, 1, 1, 1, NULL, false, true, 1, {"Sigmoid", true, false, 2}},
	{16, 9, 7, 24, 1, 1, 0, 1, NULL, true, true, 1, {"HardSigmoid", true, false, 2}},
	{3, 20, 20, 8, 7, 2, 3, 1, NULL, true, true, 1, {"Sigmoid", true, false, 2}},
	{16, 9, 7, 24, 1, 1, 0, 1, "Relu", false, true, 1, {"Sigmoid", false, false, 0}},
	{16, 9, 7, 24, 1, 1, 0, 1, NULL, true, true, 1, {"Sigmoid", false, true, 1}},
};

static om_value *value(om_graph *g, const char *name, int32_t flags, int32_t rank,
		       const int64_t *dims, bool batch_symbol)
{
	om_value *v = om_graph_value(g, name);
	om_tensor like = {.dtype = OM_FLOAT, .rank = rank};
	memcpy(like.dims, dims, sizeof(int64_t) * (size_t)rank);
	om_type_from_tensor(g->model, &v->type, &like);
	if (batch_symbol)
		v->type.dims[0] = (om_dim){-1, "N"};
	v->flags |= flags;
	return v;
}

static om_model *conv_model(const conv_case *k)
{
	om_model *m = tu_model_ms(14); /* HardSwish */
	om_graph *g = m->graph;
	const int64_t d = k->dil;
	const int64_t OH = (k->H + 2 * k->pad - d * (k->K - 1) - 1) / k->stride + 1;
	const int64_t OW = (k->W + 2 * k->pad - d * (k->K - 1) - 1) / k->stride + 1;
	om_value *x = value(g, "x", OM_VALUE_GRAPH_INPUT, 4, (int64_t[]){1, k->C, k->H, k->W}, 1);
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	const float ws = 1.0f / sqrtf((float)(k->C / k->group * k->K * k->K));
	tu_float_init(g, "W", 4, (int64_t[]){k->M, k->C / k->group, k->K, k->K}, 7, ws);
	if (k->bias)
		tu_float_init(g, "B", 1, (int64_t[]){k->M}, 11, 0.5f);
	if (k->z) {
		om_value *z = value(g, "z", OM_VALUE_GRAPH_INPUT, 4, (int64_t[]){1, k->M, OH, OW},
				    1);
		tu_push_value(g, &g->inputs, &g->ninputs, z);
	}
	const char *ins = k->z ? (k->bias ? "x,W,B,z" : "x,W,,z") : (k->bias ? "x,W,B" : "x,W");
	const post_chain *pc = &k->post;
	om_node *n = tu_graph_node(g, k->act || k->z ? "FusedConv" : "Conv", ins,
				   pc->op ? "c" : "y");
	if (k->act || k->z)
		n->domain = "com.microsoft";
	if (k->act) {
		om_attr *a = om_node_set_attr(n, "activation", OM_ATTR_STRING);
		a->s.ptr = om_arena_strndup(m->arena, k->act, strlen(k->act));
		a->s.len = (int64_t)strlen(k->act);
	}
	tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){k->K, k->K});
	tu_attr_ints(n, "strides", 2, (int64_t[]){k->stride, k->stride});
	tu_attr_ints(n, "pads", 4, (int64_t[]){k->pad, k->pad, k->pad, k->pad});
	om_node_set_attr(n, "group", OM_ATTR_INT)->i = k->group;
	tu_attr_ints(n, "dilations", 2, (int64_t[]){d, d});
	if (pc->op) {
		const bool clip = !strcmp(pc->op, "Clip");
		if (clip) {
			tu_float_init(g, "lo", 0, NULL, 13, 0.25f);
			tu_float_init(g, "hi", 0, NULL, 17, 0.75f);
		}
		om_node *a = tu_graph_node(g, pc->op, clip ? "c,lo,hi" : "c",
					   pc->gated || pc->other ? "a" : "y");
		if (!strcmp(pc->op, "QuickGelu")) {
			a->domain = "com.microsoft";
			om_node_set_attr(a, "alpha", OM_ATTR_FLOAT)->f = 1.5f;
		}
		if (pc->gated || pc->other)
			tu_graph_node(g, "Mul", pc->other ? "z,a" : "c,a", "y");
	}
	om_value *y = value(g, "y", OM_VALUE_GRAPH_OUTPUT, 4, (int64_t[]){1, k->M, OH, OW}, 1);
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

static void run(om_session *s, const conv_case *k, int64_t N, om_tensor *out)
{
	const int64_t d = k->dil;
	const int64_t OH = (k->H + 2 * k->pad - d * (k->K - 1) - 1) / k->stride + 1;
	const int64_t OW = (k->W + 2 * k->pad - d * (k->K - 1) - 1) / k->stride + 1;
	om_tensor in[2] = {{0}, {0}};
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&in[0], OM_FLOAT, 4, (int64_t[]){N, k->C, k->H, k->W},
					 &st), OM_OK);
	tu_fill(in[0].data, om_tensor_numel(&in[0]), 3, 1.0f);
	if (k->z) {
		assert_int_equal(om_tensor_alloc(&in[1], OM_FLOAT, 4,
						 (int64_t[]){N, k->M, OH, OW}, &st), OM_OK);
		tu_fill(in[1].data, om_tensor_numel(&in[1]), 5, 1.0f);
	}
	om_kind rc = om_session_run(s, in, k->z ? 2 : 1, out, 1, &st);
	if (rc)
		fail_msg("%s", st.msg);
	om_tensor_free(&in[0]);
	om_tensor_free(&in[1]);
}

static void fast_against_exact(void **state)
{
	(void)state;
	for (size_t t = 0; t < 2 * sizeof cases / sizeof *cases; t++) {
		const size_t i = t / 2;
		const conv_case *k = &cases[i];
		om_model *m = conv_model(k);
		om_session *fast = NULL, *exact = NULL;
		om_status st = {0};
		const om_session_options fo = {.threads = 1 + (int)(t % 2)}, eo = {.exact = 1};
		assert_int_equal(om_session_create(m, &fo, &fast, &st), OM_OK);
		assert_int_equal(om_session_create(m, &eo, &exact, &st), OM_OK);
		if (tu_absorbed(fast) != k->post.absorbed)
			fail_msg("case %zu: %d steps absorbed, %d expected", i, tu_absorbed(fast),
				 k->post.absorbed);
		assert_int_equal(tu_absorbed(exact), 0);
		for (int r = 0; r < 3; r++) {
			const int64_t N = r < 2 ? 1 : 2; /* the third run: another batch */
			om_tensor a = {0}, b = {0};
			run(fast, k, N, &a);
			run(exact, k, N, &b);
			assert_int_equal(a.nbytes, b.nbytes);
			const float *x = a.data, *y = b.data;
			for (int64_t j = 0; j < om_tensor_numel(&b); j++)
				if (!(fabsf(x[j] - y[j]) <= 2e-5f * (1 + fabsf(y[j]))))
					fail_msg("case %zu (%d threads) run %d [%lld]: %.9g against "
						 "%.9g", i, fo.threads, r, (long long)j, (double)x[j],
						 (double)y[j]);
			om_tensor_free(&a);
			om_tensor_free(&b);
		}
		om_session_free(fast);
		om_session_free(exact);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(fast_against_exact)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
