/* test_conv_inplace.c — FusedConv writes Y over Z (OM_OP_INPLACE_LAST) when Z dies there: the
 * session places Y in Z's block (checked through the node hook), and every conv path gets the
 * sum right: oneDNN's sum post-op (Relu or none) on plain Z and Y through its reorders and on
 * channel-blocked ones in place (Y read by another conv, so that the planner blocks it),
 * oneDNN without post-ops (a SiLU the planner folded in: the epilogue reads a copy of Z), and
 * omopt's own kernels (the small 1x1 convs in fast mode, every conv in exact mode). Each agrees
 * with exact mode at one and two threads; in exact mode the in-place run is bit-identical to
 * one where Z is also a graph output (so Y gets its own block). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "session.h"
#include "testutil.h"

typedef struct conv_case {
	const char *what;
	int64_t C, M, H, K, group;
	const char *act; /* NULL, "Relu" (FusedConv's own) or "SiLU" (Sigmoid and Mul after) */
	bool tail;       /* y feeds a 1x1 conv (the graph output) instead of being one */
} conv_case;

static const conv_case cases[] = {
	{"1x1", 24, 32, 10, 1, 1, NULL, false},
	{"1x1 Relu", 24, 32, 10, 1, 1, "Relu", false},
	{"1x1 SiLU", 24, 32, 10, 1, 1, "SiLU", false},
	{"3x3 of 64", 64, 64, 9, 3, 1, NULL, false},
	{"3x3 of 64 SiLU", 64, 64, 9, 3, 1, "SiLU", false},
	{"depthwise", 32, 32, 12, 3, 32, "Relu", false},
	{"depthwise SiLU", 32, 32, 12, 3, 32, "SiLU", false},
	{"1x1 Relu, blocked", 24, 32, 10, 1, 1, "Relu", true},
	{"3x3 of 64, blocked", 64, 64, 9, 3, 1, NULL, true},
	{"3x3 of 64 SiLU, blocked", 64, 64, 9, 3, 1, "SiLU", true},
};

/* x (1, C, H, H) -> z = conv1x1(x) (C -> M) -> y = FusedConv(x, W, B, Z = z) (K x K, same
 * padding) with k's activation (k->tail: -> out = conv1x1(y)); `shared`: z is a graph output
 * too */
static om_model *fused_model(const conv_case *k, bool shared)
{
	om_model *m = tu_model_ms(13);
	om_graph *g = m->graph;
	const int64_t C = k->C, M = k->M, H = k->H, K = k->K, pad = K / 2;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){1, C, H, H}));
	tu_float_init(g, "Wz", 4, (int64_t[]){M, C, 1, 1}, 1, 1.0f / sqrtf((float)C));
	tu_float_init(g, "W", 4, (int64_t[]){M, C / k->group, K, K}, 2,
		      1.0f / sqrtf((float)(C / k->group * K * K)));
	tu_float_init(g, "B", 1, (int64_t[]){M}, 3, 0.5f);
	tu_graph_node(g, "Conv", "x,Wz", "z")->name = "z";
	const bool silu = k->act && !strcmp(k->act, "SiLU");
	om_node *f = tu_graph_node(g, "FusedConv", "x,W,B,z", silu ? "y0" : "y");
	f->domain = "com.microsoft", f->name = "y";
	tu_attr_ints(f, "kernel_shape", 2, (int64_t[]){K, K});
	tu_attr_ints(f, "pads", 4, (int64_t[]){pad, pad, pad, pad});
	om_node_set_attr(f, "group", OM_ATTR_INT)->i = k->group;
	if (k->act && !silu)
		om_node_set_attr(f, "activation", OM_ATTR_STRING)->s =
			(om_str){k->act, (int64_t)strlen(k->act)};
	if (silu) {
		tu_graph_node(g, "Sigmoid", "y0", "s");
		tu_graph_node(g, "Mul", "y0,s", "y");
	}
	if (k->tail) {
		tu_float_init(g, "Wo", 4, (int64_t[]){M, M, 1, 1}, 4, 1.0f / sqrtf((float)M));
		tu_graph_node(g, "Conv", "y,Wo", "out")->name = "out";
	}
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, k->tail ? "out" : "y", OM_FLOAT, 4,
				     (int64_t[]){1, M, H, H}));
	if (shared)
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, "z", OM_FLOAT, 4, (int64_t[]){1, M, H, H}));
	return m;
}

typedef struct seen {
	int runs, over_z; /* FusedConv runs, and those whose Y was Z's memory */
} seen;

static void hook(void *arg, const om_node *n, const om_tensor *const *in, int nin,
		 const om_tensor *const *out, int nout)
{
	seen *s = arg;
	if (strcmp(n->op, "FusedConv") || nin < 4 || nout < 1)
		return;
	s->runs++;
	s->over_z += in[3]->data == out[0]->data;
}

/* y of one run of m (a malloc'd tensor) with the given options; *over: whether Y was placed
 * over Z */
static om_tensor run(const om_model *m, const conv_case *k, const om_session_options *o,
		     bool *over)
{
	om_session *s = NULL;
	om_status st = {0};
	if (om_session_create(m, o, &s, &st))
		fail_msg("%s: %s", k->what, st.msg);
	seen sn = {0};
	om_session_set_hook(s, hook, &sn);
	if (k->tail && !o->exact && om_layout_block()) /* the planner keeps y blocked */
		for (int i = 0; i < om_session_node_count(s); i++) {
			const om_node_info ni = om_session_node_info(s, i);
			if (ni.node->name && !strcmp(ni.node->name, "y") && !ni.blocked)
				fail_msg("%s: y is not blocked", k->what);
		}
	om_tensor x = {0}, y[2] = {{0}, {0}};
	assert_int_equal(om_tensor_alloc(&x, OM_FLOAT, 4, (int64_t[]){1, k->C, k->H, k->H}, &st),
			 OM_OK);
	tu_fill(x.data, om_tensor_numel(&x), 9, 1.0f);
	if (om_session_run(s, &x, 1, y, om_session_output_count(s), &st))
		fail_msg("%s: %s", k->what, st.msg);
	assert_int_equal(sn.runs, 1);
	*over = sn.over_z == 1;
	om_tensor_free(&x);
	om_tensor_free(&y[1]);
	om_session_free(s);
	return y[0];
}

static void y_over_z(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const conv_case *k = &cases[i];
		om_model *m = fused_model(k, false), *ms = fused_model(k, true);
		const om_session_options exact = {.exact = 1};
		bool over;
		om_tensor ref = run(m, k, &exact, &over);
		if (!over)
			fail_msg("%s: exact mode did not place Y over Z", k->what);
		om_tensor apart = run(ms, k, &exact, &over);
		if (over)
			fail_msg("%s: Y placed over Z, a graph output", k->what);
		assert_int_equal(ref.nbytes, apart.nbytes);
		assert_memory_equal(ref.data, apart.data, ref.nbytes);
		for (int threads = 1; threads <= 2; threads++) {
			const om_session_options fast = {.threads = threads};
			om_tensor y = run(m, k, &fast, &over);
			if (!over)
				fail_msg("%s at %d threads: Y not placed over Z", k->what, threads);
			assert_int_equal(y.nbytes, ref.nbytes);
			const float *a = y.data, *b = ref.data;
			for (int64_t j = 0; j < om_tensor_numel(&ref); j++)
				if (!(fabsf(a[j] - b[j]) <= 2e-5f * (1 + fabsf(b[j]))))
					fail_msg("%s at %d threads [%lld]: %.9g, exact %.9g",
						 k->what, threads, (long long)j, (double)a[j],
						 (double)b[j]);
			om_tensor_free(&y);
		}
		om_tensor_free(&ref);
		om_tensor_free(&apart);
		om_model_free(m);
		om_model_free(ms);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(y_over_z)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
