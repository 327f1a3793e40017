/* test_conv_dnnl.c — fast-mode Conv and FusedConv in sessions (constant weights: the paths
 * that keep kernel state, oneDNN's when the build has it: 1x1 in NCHW, a 7x7/2 stem, a 3x3
 * stride-1 conv on a small image, a 5x5 depthwise conv blocked with reorders, dilated ones)
 * against exact mode, within float rounding of the sums; a second run reuses the state, a run
 * with another batch remakes it; bias, Z and activations as FusedConv's epilogue; one and two
 * threads. Activation nodes after the conv (QuickGelu, HardSwish, x * HardSigmoid(x),
 * x * Sigmoid(x), Clip of constant bounds) are absorbed into the conv step in fast mode
 * (runtime/plan_absorb.c) and counted; exact mode absorbs none. At 2 and 3 threads oneDNN's
 * convs run as slices of their output channels (groups), or in NHWC with weights smaller than
 * the activations as bands of output rows, on omopt's pool (conv_dnnl_split.c): split_layouts
 * chains two convs big enough to split, of output counts no slice divides and of heights no
 * band divides (strides 2, odd images, even kernels), in each layout between them (NCHW,
 * blocked, NHWC), 1 and 3 images, against exact mode; and
 * QLinearConv's int8 path at 1-3 threads equals the exact kernel. Passes (on the own kernels)
 * without oneDNN too. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clones.h"
#include "nodetest.h"
#include "parallel.h"
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

/* Two convs big enough to split at 2 threads (a dense one above 3e6 multiply-adds, a grouped
 * or depthwise one above 5e5), their outputs kept in the session's layout (b's on both sides):
 * X (N, C, H, W) -> conv a (M, ka x ka, stride sa, pad ka / 2, group ga, FusedConv with act
 * and Z when z) -> conv b (M2, kb x kb, group gb, pad kb / 2) -> conv c (SPLIT_MC, 1 x 1)
 * -> Y */
enum { SPLIT_MC = 8 };
typedef struct split_case {
	int64_t C, H, M, ka, sa, ga;
	const char *act;
	bool z;
	int64_t M2, kb, gb;
} split_case;

static const split_case split_cases[] = {
	{33, 24, 100, 5, 1, 1, "Relu", true, 17, 3, 1},    /* odd C, M 100 -> 17 */
	{64, 40, 5, 3, 2, 1, NULL, false, 48, 5, 1},       /* M 5 (< 16) -> 48, 5x5 */
	{40, 32, 40, 5, 1, 40, "Relu", false, 40, 3, 40},  /* depthwise 40 (not whole blocks) */
	{128, 20, 128, 3, 1, 8, NULL, true, 48, 1, 1},     /* 8 groups of 16, Z; 1x1 after */
	{48, 21, 96, 3, 2, 1, "Sigmoid", false, 96, 3, 6}, /* 6 groups of 16, odd image */
	{32, 28, 96, 5, 1, 1, NULL, true, 96, 3, 96},      /* depthwise after a dense conv */
	{32, 28, 96, 5, 1, 1, "Relu", false, 96, 3, 8},    /* groups of 12 (not whole blocks) */
	/* weights smaller than the activations: in NHWC bands of rows (conv_dnnl_split.c) */
	{16, 64, 32, 3, 2, 1, "Relu", true, 32, 3, 1},     /* stride 2: no bottom padding read */
	{8, 61, 24, 7, 2, 1, NULL, false, 24, 5, 1},       /* 7x7 / 2 over an odd image */
	{16, 48, 32, 4, 2, 1, "Relu", false, 24, 3, 1},    /* an even kernel, pads 2 */
};

static om_model *split_model(const split_case *k)
{
	om_model *m = tu_model_ms(14);
	om_graph *g = m->graph;
	const int64_t OH = (k->H + 2 * (k->ka / 2) - k->ka) / k->sa + 1;
	om_value *x = value(g, "x", OM_VALUE_GRAPH_INPUT, 4, (int64_t[]){1, k->C, k->H, k->H}, 1);
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_float_init(g, "Wa", 4, (int64_t[]){k->M, k->C / k->ga, k->ka, k->ka}, 7,
		      1.0f / sqrtf((float)(k->C / k->ga * k->ka * k->ka)));
	tu_float_init(g, "Ba", 1, (int64_t[]){k->M}, 11, 0.5f);
	tu_float_init(g, "Wb", 4, (int64_t[]){k->M2, k->M / k->gb, k->kb, k->kb}, 13,
		      1.0f / sqrtf((float)(k->M / k->gb * k->kb * k->kb)));
	tu_float_init(g, "Bb", 1, (int64_t[]){k->M2}, 17, 0.5f);
	if (k->z) {
		om_value *z = value(g, "z", OM_VALUE_GRAPH_INPUT, 4, (int64_t[]){1, k->M, OH, OH},
				    1);
		tu_push_value(g, &g->inputs, &g->ninputs, z);
	}
	const bool fused = k->act || k->z;
	om_node *a = tu_graph_node(g, fused ? "FusedConv" : "Conv", k->z ? "x,Wa,Ba,z" : "x,Wa,Ba",
				   "a");
	if (fused)
		a->domain = "com.microsoft";
	if (k->act) {
		om_attr *at = om_node_set_attr(a, "activation", OM_ATTR_STRING);
		at->s.ptr = om_arena_strndup(m->arena, k->act, strlen(k->act));
		at->s.len = (int64_t)strlen(k->act);
	}
	const int64_t pa = k->ka / 2, pb = k->kb / 2;
	tu_attr_ints(a, "kernel_shape", 2, (int64_t[]){k->ka, k->ka});
	tu_attr_ints(a, "strides", 2, (int64_t[]){k->sa, k->sa});
	tu_attr_ints(a, "pads", 4, (int64_t[]){pa, pa, pa, pa});
	om_node_set_attr(a, "group", OM_ATTR_INT)->i = k->ga;
	om_node *b = tu_graph_node(g, "Conv", "a,Wb,Bb", "b");
	tu_attr_ints(b, "kernel_shape", 2, (int64_t[]){k->kb, k->kb});
	tu_attr_ints(b, "pads", 4, (int64_t[]){pb, pb, pb, pb});
	om_node_set_attr(b, "group", OM_ATTR_INT)->i = k->gb;
	tu_float_init(g, "Wc", 4, (int64_t[]){SPLIT_MC, k->M2, 1, 1}, 19,
		      1.0f / sqrtf((float)k->M2));
	om_node *c = tu_graph_node(g, "Conv", "b,Wc", "y");
	tu_attr_ints(c, "kernel_shape", 2, (int64_t[]){1, 1});
	om_value *y = value(g, "y", OM_VALUE_GRAPH_OUTPUT, 4, (int64_t[]){1, SPLIT_MC, OH, OH},
			    1);
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	return m;
}

/* y of k's model on N images (inputs of seeds 3, 5) */
static void split_run(om_session *s, const split_case *k, int64_t N, om_tensor *y)
{
	const int64_t OH = (k->H + 2 * (k->ka / 2) - k->ka) / k->sa + 1;
	om_tensor in[2] = {{0}, {0}};
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(&in[0], OM_FLOAT, 4, (int64_t[]){N, k->C, k->H, k->H},
					 &st), OM_OK);
	tu_fill(in[0].data, om_tensor_numel(&in[0]), 3, 1.0f);
	if (k->z) {
		assert_int_equal(om_tensor_alloc(&in[1], OM_FLOAT, 4,
						 (int64_t[]){N, k->M, OH, OH}, &st), OM_OK);
		tu_fill(in[1].data, om_tensor_numel(&in[1]), 5, 1.0f);
	}
	if (om_session_run(s, in, k->z ? 2 : 1, y, 1, &st))
		fail_msg("%s", st.msg);
	om_tensor_free(&in[0]);
	om_tensor_free(&in[1]);
}

static void split_check(const om_tensor *got, const om_tensor *want, size_t i, int64_t N,
			int layout, int threads)
{
	assert_int_equal(got->nbytes, want->nbytes);
	const float *a = got->data, *b = want->data;
	for (int64_t j = 0; j < om_tensor_numel(want); j++)
		if (!(fabsf(a[j] - b[j]) <= 3e-5f * (1 + fabsf(b[j]))))
			fail_msg("case %zu N %lld layout %d threads %d [%lld]: %.9g against %.9g",
				 i, (long long)N, layout, threads, (long long)j, (double)a[j],
				 (double)b[j]);
}

static void split_layouts(void **state)
{
	(void)state;
	static const om_layout_choice layouts[] = {OM_LAYOUT_NCHW, OM_LAYOUT_BLOCKED,
						   OM_LAYOUT_NHWC};
	for (size_t i = 0; i < sizeof split_cases / sizeof *split_cases; i++) {
		const split_case *k = &split_cases[i];
		om_model *m = split_model(k);
		om_session *exact = NULL;
		om_status st = {0};
		const om_session_options eo = {.exact = 1};
		assert_int_equal(om_session_create(m, &eo, &exact, &st), OM_OK);
		for (int64_t N = 1; N <= 3; N += 2) {
			om_tensor want = {0};
			split_run(exact, k, N, &want);
			for (size_t l = 0; l < 3; l++)
				for (int threads = 1; threads <= 3; threads++) {
					om_session *fast = NULL;
					const om_session_options fo = {.threads = threads,
								       .layout = layouts[l]};
					assert_int_equal(om_session_create(m, &fo, &fast, &st),
							 OM_OK);
					for (int r = 0; r < 2; r++) { /* made, then kept */
						om_tensor got = {0};
						split_run(fast, k, N, &got);
						split_check(&got, &want, i, N, (int)layouts[l],
							    threads);
						om_tensor_free(&got);
					}
					om_session_free(fast);
				}
			om_tensor_free(&want);
		}
		om_session_free(exact);
		om_model_free(m);
	}
}

/* A job of 16 pieces on 2 threads whose worker holds the caller 50 ms (a worker descheduled
 * mid-piece by another process): it lost, so the calling thread's next jobs (16 at least)
 * are held (num/parallel.c) */
typedef struct stall {
	pthread_t caller;
	atomic_int started;
} stall;

static void stall_piece(void *arg, int64_t lo, int64_t hi)
{
	stall *j = arg;
	(void)lo, (void)hi;
	if (!pthread_equal(pthread_self(), j->caller)) {
		atomic_store(&j->started, 1);
		nanosleep(&(struct timespec){0, 50000000}, NULL);
		return;
	}
	for (int w = 0; w < 20000 && !atomic_load(&j->started); w++)
		nanosleep(&(struct timespec){0, 100000}, NULL);
}

static void lose_a_split(void)
{
	while (om_par_held(2)) /* the holds left from before: the stall job must split */
		;
	stall j = {.caller = pthread_self()};
	om_par_for(2, 16, 1, stall_piece, &j);
	assert_true(atomic_load(&j.started));
}

static void same_bytes(const om_tensor *a, const om_tensor *b, const char *what, size_t i)
{
	assert_int_equal(a->nbytes, b->nbytes);
	if (memcmp(a->data, b->data, a->nbytes))
		fail_msg("case %zu: %s", i, what);
}

/* At 2 threads a split conv whose pool is held (a split lost lately) runs its one-thread
 * primitive, made then (om_session_options.deterministic 0; its record "onednn-held"), within
 * float rounding of the one-thread session's. A deterministic session runs the slices, held or
 * not, and gives the same bytes either way. Convs big enough to split, as resnet's, and a 7x7/2 stem;
 * blocked layout. */
static const split_case held_cases[] = {
	{64, 56, 64, 3, 1, 1, "Relu", false, 64, 3, 1},
	{128, 28, 128, 3, 1, 1, "Relu", true, 128, 3, 1},
	{256, 14, 256, 3, 1, 1, NULL, false, 256, 3, 1},
	{3, 112, 64, 7, 2, 1, "Relu", false, 64, 3, 1},
	{33, 24, 100, 5, 1, 1, "Relu", true, 17, 3, 1},
};

static void held_conv_runs_whole(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof held_cases / sizeof *held_cases; i++) {
		const split_case *k = &held_cases[i];
		om_model *m = split_model(k);
		om_session *one = NULL, *det = NULL, *two = NULL;
		om_status st = {0};
		const om_session_options o1 = {.threads = 1, .layout = OM_LAYOUT_BLOCKED};
		const om_session_options od = {.threads = 2, .layout = OM_LAYOUT_BLOCKED,
					       .deterministic = 1};
		const om_session_options o2 = {.threads = 2, .layout = OM_LAYOUT_BLOCKED};
		assert_int_equal(om_session_create(m, &o1, &one, &st), OM_OK);
		assert_int_equal(om_session_create(m, &od, &det, &st), OM_OK);
		assert_int_equal(om_session_create(m, &o2, &two, &st), OM_OK);
		om_tensor r1 = {0}, rd = {0}, hd = {0}, h2 = {0};
		split_run(one, k, 1, &r1);
		split_run(det, k, 1, &rd);
		om_tensor_free(&rd);
		split_run(det, k, 1, &rd); /* made, then kept */
		lose_a_split();
		split_run(det, k, 1, &hd);
		same_bytes(&hd, &rd, "deterministic: held and split runs differ", i);
		lose_a_split();
		split_run(two, k, 1, &h2);
		split_check(&h2, &r1, i, 1, (int)OM_LAYOUT_BLOCKED, 2);
#ifdef OM_HAVE_DNNL
		/* step 1 (conv b, split at 2 threads) ran whole; the deterministic one its slices;
		 * a 3x3 conv Winograd takes at one thread is Winograd's at two on AVX2 without
		 * AVX-512 (om_conv_dnnl_blockable) */
		const bool wino = !strcmp(om_session_node_info(one, 1).impl, "winograd-f4") &&
				  om_cpu_avx2_only();
		assert_string_equal(om_session_node_info(two, 1).impl,
				    wino ? "winograd-f4" : "onednn-held");
		assert_string_equal(om_session_node_info(det, 1).impl,
				    wino ? "winograd-f4" : "onednn");
#endif
		om_tensor_free(&r1), om_tensor_free(&rd), om_tensor_free(&hd), om_tensor_free(&h2);
		om_session_free(one), om_session_free(det), om_session_free(two);
		om_model_free(m);
	}
}

/* QLinearConv through oneDNN's int8 path at 1-3 threads: N x C x H x H -> M (k x k, stride,
 * pad k / 2, group), X u8 (zero point 7; weights in [-64, 64] but depthwise, which on CPUs
 * without VNNI the phase loop of conv_dw_int.c takes, exactly) or s8 (-3; weights of full
 * range, which oneDNN takes with VNNI only, and the integer sums' quads on AVX2 without it),
 * w_scale per channel or per tensor, Y u8 of zero point 120 */
typedef struct qcase {
	int64_t N, C, H, M, k, stride, group;
} qcase;

static const qcase qcases[] = {
	{1, 19, 24, 100, 3, 1, 1}, {3, 19, 24, 17, 3, 2, 1}, {1, 64, 24, 48, 1, 1, 1},
	{1, 40, 40, 40, 5, 1, 40}, {3, 64, 24, 64, 3, 1, 4}, {1, 64, 40, 5, 3, 1, 1},
};

static void qfill(uint8_t *v, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		v[i] = (uint8_t)(seed >> 16);
	}
}

/* a (N, C, P) <-> (N, P, C) of bytes, written here apart from ops/layout.c's */
static void nhwc_bytes(const uint8_t *x, int64_t N, int64_t C, int64_t P, bool to_nhwc,
		       uint8_t *y)
{
	for (int64_t i = 0; i < N * C * P; i++) {
		const int64_t n = i / (C * P), c = i / P % C, p = i % P;
		if (to_nhwc)
			y[(n * P + p) * C + c] = x[i];
		else
			y[i] = x[(n * P + p) * C + c];
	}
}

/* QLinearConv n with X or Y or both in NHWC as the planner keeps them (om_ctx.blocked,
 * block OM_BLOCK_NHWC: (N, 1, H, W, C) tensors), with the kernel state slot (oneDNN's path,
 * in place: the bytes of its NCHW run, `one`) and without (the integer sums on NCHW copies:
 * the exact result, `want`), at 1 and 2 threads */
static void qlinear_nhwc_check(const om_node *n, const om_tensor *const *ins,
			       const om_tensor *one, const om_tensor *want, size_t t)
{
	const om_tensor *x = ins[0], *y = want;
	const int64_t N = x->dims[0], C = x->dims[1], P = x->dims[2] * x->dims[3];
	const int64_t M = y->dims[1], Q = y->dims[2] * y->dims[3];
	uint8_t *xh = malloc(x->nbytes), *yh = malloc(y->nbytes), *yp = malloc(y->nbytes);
	assert_true(xh && yh && yp);
	nhwc_bytes(x->data, N, C, P, true, xh);
	for (int b = 1; b <= 3; b++) { /* X, Y, both */
		const bool bin = b & 1, bout = b & 2;
		for (int way = 0; way < 4; way++) {
			const bool keep = way & 1;
			const int threads = 1 + (way >> 1);
			om_tensor xt = *x, yt = *y;
			if (bin) {
				xt.rank = 5, xt.data = xh;
				memcpy(xt.dims, (int64_t[]){N, 1, x->dims[2], x->dims[3], C},
				       sizeof(int64_t) * 5);
			}
			yt.data = bout ? yh : yp;
			if (bout) {
				yt.rank = 5;
				memcpy(yt.dims, (int64_t[]){N, 1, y->dims[2], y->dims[3], M},
				       sizeof(int64_t) * 5);
			}
			const om_tensor *in[9];
			for (int i = 0; i < 9; i++)
				in[i] = i ? ins[i] : &xt;
			om_tensor *out[1] = {&yt};
			void *slot = NULL;
			void (*release)(void *) = NULL;
			om_status st = {0};
			om_ctx c = {.node = n, .opset = 10, .nin = 9, .nout = 1, .in = in,
				    .out = out, .st = &st, .threads = threads,
				    .state = keep ? &slot : NULL,
				    .state_release = keep ? &release : NULL,
				    .const_in = 1u << 3 | 1u << 4 | 1u << 5,
				    .blocked = (bin ? OM_LAYOUT_IN(0) : 0) |
					       (bout ? OM_LAYOUT_OUT(0) : 0),
				    .block = OM_BLOCK_NHWC};
			c.op = om_op_find("", "QLinearConv", 10);
			if (c.op->kernel(&c))
				fail_msg("case %zu: %s", t, st.msg);
			if (bout)
				nhwc_bytes(yh, N, M, Q, false, yp);
			const om_tensor *ref = keep ? one : want;
			if (memcmp(yp, ref->data, y->nbytes))
				fail_msg("case %zu NHWC %s%s, %d threads, %s: not its NCHW bytes", t,
					 bin ? "X" : "", bout ? "Y" : "", threads,
					 keep ? "oneDNN" : "the sums");
			if (release)
				release(slot);
			free(slot);
		}
	}
	free(xh), free(yh), free(yp);
}

/* node n run twice at `threads` through one kernel state slot (the state made, then kept),
 * the inputs in const_in constants: the two outputs into got[0], got[1] */
static void run_with_state(const om_node *n, const om_tensor *const *ins, uint64_t const_in,
			   int threads, om_tensor got[2])
{
	void *slot = NULL;
	void (*release)(void *) = NULL;
	om_status st = {0};
	for (int r = 0; r < 2; r++) {
		const om_ctx c = {.threads = threads, .state = &slot, .state_release = &release,
				  .const_in = const_in};
		assert_int_equal(nt_run_ctx(n, 10, ins, &got[r], c, &st), OM_OK);
	}
	if (release)
		release(slot);
	free(slot);
}

static void qlinearconv_threads(void **state)
{
	(void)state;
	for (size_t t = 0; t < 4 * sizeof qcases / sizeof *qcases; t++) {
		const qcase *k = &qcases[t / 4];
		const bool s8 = t & 1, per_channel = t & 2;
		const int64_t Cg = k->C / k->group, p = k->k / 2;
		const size_t nx = (size_t)(k->N * k->C * k->H * k->H);
		const size_t nw = (size_t)(k->M * Cg * k->k * k->k);
		uint8_t *x = malloc(nx), *w = malloc(nw);
		float *ws = malloc(sizeof(float) * (size_t)k->M);
		int8_t *wz = calloc((size_t)k->M, 1);
		int32_t *bias = malloc(sizeof(int32_t) * (size_t)k->M);
		assert_true(x && w && ws && wz && bias);
		qfill(x, nx, 3 + (uint32_t)t);
		qfill(w, nw, 5 + (uint32_t)t);
		const bool dw = k->group == k->C && k->group == k->M;
		for (size_t i = 0; i < nw && !s8 && !dw; i++) /* oneDNN's without VNNI too */
			w[i] = (uint8_t)(int8_t)(w[i] % 129 - 64);
		/* s8: mostly small weights, every 29th of magnitude 127 (a trained conv's tails):
		 * about 3% of the pairs corrected, so the quads take it on AVX2 (igemm_quads.h) */
		for (size_t i = 0; i < nw && s8 && !dw; i++)
			w[i] = (uint8_t)(int8_t)(i % 29 ? w[i] % 65 - 32 : w[i] & 1 ? 127 : -127);
		for (int64_t m = 0; m < k->M; m++) {
			ws[m] = 0.001f * (float)(1 + m % 7);
			bias[m] = (int32_t)(m * 37 % 301) - 150;
		}
		const float xs = 0.02f, ys = 0.05f;
		const uint8_t xzu = 7, yz = 120;
		const int8_t xzs = -3;
		om_model *mdl = om_model_new();
		om_node *n = nt_add_node(mdl, "QLinearConv", 9, 1);
		tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){k->k, k->k});
		tu_attr_ints(n, "strides", 2, (int64_t[]){k->stride, k->stride});
		tu_attr_ints(n, "pads", 4, (int64_t[]){p, p, p, p});
		om_node_set_attr(n, "group", OM_ATTR_INT)->i = k->group;
		const int64_t nsc = per_channel ? k->M : 1;
		om_tensor in[9] = {
			nt_tensor(s8 ? OM_INT8 : OM_UINT8, 4, (int64_t[]){k->N, k->C, k->H, k->H},
				  x),
			nt_tensor(OM_FLOAT, 0, NULL, &xs),
			nt_tensor(s8 ? OM_INT8 : OM_UINT8, 0, NULL, s8 ? (const void *)&xzs : &xzu),
			nt_tensor(OM_INT8, 4, (int64_t[]){k->M, Cg, k->k, k->k}, w),
			nt_tensor(OM_FLOAT, 1, &nsc, ws),
			nt_tensor(OM_INT8, 1, &nsc, wz),
			nt_tensor(OM_FLOAT, 0, NULL, &ys),
			nt_tensor(OM_UINT8, 0, NULL, &yz),
			nt_tensor(OM_INT32, 1, (int64_t[]){k->M}, bias)};
		const om_tensor *ins[9];
		for (int i = 0; i < 9; i++)
			ins[i] = &in[i];
		om_tensor want[1], one[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 10, ins, want, &st), OM_OK);
		for (int threads = 1; threads <= 3; threads++) {
			om_tensor got[2];
			run_with_state(n, ins, 1u << 3 | 1u << 4 | 1u << 5, threads, got);
			for (int r = 0; r < 2; r++) {
				assert_int_equal(got[r].nbytes, want[0].nbytes);
				const uint8_t *a = got[r].data, *b = want[0].data;
				for (size_t j = 0; j < got[r].nbytes; j++)
					if (abs(a[j] - b[j]) > 1)
						fail_msg("case %zu threads %d [%zu]: %d, not %d", t,
							 threads, j, a[j], b[j]);
				if (threads == 1 && r == 0)
					one[0] = got[r];
				else if (memcmp(got[r].data, one[0].data, got[r].nbytes))
					fail_msg("case %zu: %d threads differ from 1", t, threads);
				if (threads > 1 || r > 0)
					om_tensor_free(&got[r]);
			}
		}
		qlinear_nhwc_check(n, ins, &one[0], &want[0], t);
		om_tensor_free(&one[0]);
		om_tensor_free(&want[0]);
		om_model_free(mdl);
		free(x), free(w), free(ws), free(wz), free(bias);
	}
}

/* ConvInteger with a constant W of zero point 0 through the step's state (the quads on AVX2
 * without VNNI): the int32 sums of exact mode, at 1-3 threads, a second run reusing the packed
 * W; X uint8 (zero point 9) or int8 (-5), 1 and 2 images, groups, odd extents and strides */
static void convinteger_state(void **state)
{
	(void)state;
	static const qcase cases[] = {{1, 19, 40, 24, 3, 1, 1}, {2, 8, 33, 20, 3, 2, 1},
				      {1, 16, 29, 12, 5, 1, 2}, {1, 32, 20, 40, 1, 2, 1}};
	for (size_t t = 0; t < 2 * sizeof cases / sizeof *cases; t++) {
		const qcase *k = &cases[t / 2];
		const bool s8 = t & 1;
		const int64_t Cg = k->C / k->group, p = k->k / 2;
		const size_t nx = (size_t)(k->N * k->C * k->H * k->H);
		const size_t nw = (size_t)(k->M * Cg * k->k * k->k);
		uint8_t *x = malloc(nx), *w = malloc(nw);
		assert_true(x && w);
		qfill(x, nx, 11 + (uint32_t)t);
		qfill(w, nw, 13 + (uint32_t)t);
		for (size_t i = 0; i < nw; i++) /* mostly small, every 23rd of magnitude 127 */
			w[i] = (uint8_t)(int8_t)(i % 23 ? w[i] % 61 - 30 : w[i] & 1 ? 127 : -127);
		const uint8_t xzu = 9, wz0 = 0;
		const int8_t xzs = -5;
		om_model *mdl = om_model_new();
		om_node *n = nt_add_node(mdl, "ConvInteger", 4, 1);
		tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){k->k, k->k});
		tu_attr_ints(n, "strides", 2, (int64_t[]){k->stride, k->stride});
		tu_attr_ints(n, "pads", 4, (int64_t[]){p, p, p, p});
		om_node_set_attr(n, "group", OM_ATTR_INT)->i = k->group;
		om_tensor in[4] = {
			nt_tensor(s8 ? OM_INT8 : OM_UINT8, 4, (int64_t[]){k->N, k->C, k->H, k->H}, x),
			nt_tensor(OM_INT8, 4, (int64_t[]){k->M, Cg, k->k, k->k}, w),
			nt_tensor(s8 ? OM_INT8 : OM_UINT8, 0, NULL, s8 ? (const void *)&xzs : &xzu),
			nt_tensor(OM_INT8, 0, NULL, &wz0)};
		const om_tensor *ins[4] = {&in[0], &in[1], &in[2], &in[3]};
		om_tensor want[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 10, ins, want, &st), OM_OK);
		for (int threads = 1; threads <= 3; threads++) {
			om_tensor got[2];
			run_with_state(n, ins, 1u << 1 | 1u << 3, threads, got);
			for (int r = 0; r < 2; r++) {
				assert_int_equal(got[r].nbytes, want[0].nbytes);
				if (memcmp(got[r].data, want[0].data, got[r].nbytes))
					fail_msg("ConvInteger case %zu threads %d run %d: not exact "
						 "mode's sums", t, threads, r);
				om_tensor_free(&got[r]);
			}
		}
		om_tensor_free(&want[0]);
		om_model_free(mdl);
		free(x), free(w);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(fast_against_exact),
					   cmocka_unit_test(split_layouts),
					   cmocka_unit_test(held_conv_runs_whole),
					   cmocka_unit_test(convinteger_state),
					   cmocka_unit_test(qlinearconv_threads)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
