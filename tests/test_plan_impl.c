/* test_plan_impl.c — the implementation each step records at plan time (om_op.choose,
 * runtime/plan_choose.c): Conv's table names Winograd for a 3x3 conv in fast mode, im2col in
 * exact mode, gemm-1x1 and depthwise; the pools, Gemm, MatMul and Transpose name their paths;
 * the kernels then run what was recorded; a step shaped per run (a symbolic batch) has no
 * plan-time record, only its kernel's. */
#include <string.h>

#include "nodetest.h"
#include "session.h"
#include "testutil.h"

/* ---- one-node models: x (a graph input) -> op -> y, W an initializer ------------------- */

static om_model *model_of(const char *op, int32_t nin)
{
	om_model *m = om_model_new();
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 17};
	m->nopsets = 1;
	om_graph *g = m->graph;
	om_node *n = om_graph_add_node(g, op, "", "n0", nin, 1);
	om_node_set_output(n, 0, om_graph_value(g, "y"));
	g->outputs = om_arena_alloc(m->arena, sizeof *g->outputs);
	g->outputs[g->noutputs++] = n->out[0];
	n->out[0]->flags |= OM_VALUE_GRAPH_OUTPUT;
	return m;
}

static om_node *node_of(om_model *m)
{
	return m->graph->nodes[0];
}

/* x: float, dims[i] < 0 a symbolic extent "N" */
static void set_input(om_model *m, int32_t rank, const int64_t *dims)
{
	om_graph *g = m->graph;
	om_value *v = om_graph_value(g, "x");
	v->flags |= OM_VALUE_GRAPH_INPUT;
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = rank};
	v->type.dims = om_arena_alloc(m->arena, sizeof(om_dim) * (size_t)(rank + 1));
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = dims[i] < 0 ? (om_dim){-1, "N"} : (om_dim){dims[i], NULL};
	g->inputs = om_arena_alloc(m->arena, sizeof *g->inputs);
	g->inputs[g->ninputs++] = v;
	node_of(m)->in[0] = v;
}

/* A Conv of C -> M channels, k x k, group g, pads k / 2, on (batch, C, H, H); batch < 0: a
 * symbolic batch */
static om_model *conv_model(int64_t batch, int64_t C, int64_t M, int64_t g, int64_t k,
			    int64_t H)
{
	om_model *m = model_of("Conv", 2);
	om_node *n = node_of(m);
	set_input(m, 4, (int64_t[]){batch, C, H, H});
	const int64_t wd[4] = {M, C / g, k, k}, p = k / 2;
	om_value *w = om_graph_value(m->graph, "w");
	w->flags |= OM_VALUE_INITIALIZER;
	w->init = om_model_tensor(m, OM_FLOAT, 4, wd);
	memset(w->init->data, 0, w->init->nbytes);
	om_type_from_tensor(m, &w->type, w->init);
	m->graph->inits = om_arena_alloc(m->arena, sizeof *m->graph->inits);
	m->graph->inits[m->graph->ninits++] = w;
	n->in[1] = w;
	nt_int(n, "group", g);
	nt_ints(n, "pads", ((const int64_t[]){p, p, p, p}), 4);
	return m;
}

typedef struct choice {
	const char *plan, *ran, *how;
} choice;

/* Plans m (fast or exact, one thread), runs it once on zeros of the input's shape (symbolic
 * extents 1) and returns node 0's plan-time and run-time records */
static choice plan_and_run(om_model *m, int exact)
{
	om_session *s = NULL;
	om_status st = {0};
	const om_session_options opt = {.exact = exact, .threads = 1};
	if (om_session_create(m, &opt, &s, &st))
		fail_msg("%s", st.msg);
	const om_node_info before = om_session_node_info(s, 0);
	const om_value *x = m->graph->inputs[0];
	int64_t dims[OM_MAX_RANK];
	for (int32_t i = 0; i < x->type.rank; i++)
		dims[i] = x->type.dims[i].value >= 0 ? x->type.dims[i].value : 1;
	om_tensor in = {0}, out = {0};
	assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, x->type.rank, dims, &st), OM_OK);
	memset(in.data, 0, in.nbytes);
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
	const om_node_info after = om_session_node_info(s, 0);
	/* the record is the planner's: a run does not write it */
	assert_ptr_equal(before.plan_impl, after.plan_impl);
	static char how[64];
	snprintf(how, sizeof how, "%s", after.plan_how ? after.plan_how : "");
	const choice r = {after.plan_impl, after.impl, how};
	om_tensor_free(&in), om_tensor_free(&out);
	om_session_free(s);
	return r;
}

/* the plan-time record, and that the kernel ran it */
static const char *recorded(om_model *m, int exact)
{
	const choice c = plan_and_run(m, exact);
	assert_non_null(c.plan);
	assert_non_null(c.ran);
	assert_string_equal(c.plan, c.ran);
	nt_free(m);
	return c.plan;
}

static void conv_choices(void **state)
{
	(void)state;
	/* 3x3 stride 1, 16 channels at 20x20: 5 x 5 tiles of 4x4, Winograd F(4x4) in fast mode
	 * (oneDNN leaves it to omopt's kernel at one thread), im2col in exact mode */
	assert_string_equal(recorded(conv_model(1, 16, 16, 1, 3, 20), 0), "winograd-f4");
	assert_string_equal(recorded(conv_model(1, 16, 16, 1, 3, 20), 1), "im2col-gemm");
	/* 3 x 3 tiles only: F(2x2) in fast mode, which oneDNN's blocked conv takes first in a
	 * build with it (conv_dnnl.c) */
	assert_string_equal(recorded(conv_model(1, 16, 16, 1, 3, 10), 1), "im2col-gemm");
	const char *f2 = recorded(conv_model(1, 16, 16, 1, 3, 10), 0);
	assert_true(!strcmp(f2, "winograd-f2") || !strcmp(f2, "onednn"));
	/* 1x1 (exact: oneDNN is fast mode's) and depthwise, both modes' for depthwise */
	assert_string_equal(recorded(conv_model(1, 16, 24, 1, 1, 12), 1), "gemm-1x1");
	assert_string_equal(recorded(conv_model(1, 8, 8, 8, 3, 12), 1), "depthwise");
	/* fast mode's 1x1: oneDNN's NCHW conv in a build with it */
	const char *pw = recorded(conv_model(1, 16, 24, 1, 1, 12), 0);
	assert_true(!strcmp(pw, "gemm-1x1") || !strcmp(pw, "onednn"));
	/* fast mode's plain stride-1 depthwise convs (conv_impl.c): omopt's loop from 14x14
	 * outputs for 3x3 (before oneDNN), oneDNN's (in a build with it) for 5x5 at 7x7 */
	assert_string_equal(recorded(conv_model(1, 32, 32, 32, 3, 56), 0), "depthwise");
	assert_string_equal(recorded(conv_model(1, 32, 32, 32, 5, 56), 0), "depthwise");
	const char *dw5 = recorded(conv_model(1, 32, 32, 32, 5, 7), 0);
	assert_string_equal(dw5, !strcmp(f2, "onednn") ? "onednn" : "depthwise");
}

/* A symbolic batch: the step is shaped per run, plan time records nothing, the kernel names
 * what it ran */
static void dynamic_has_no_plan_record(void **state)
{
	(void)state;
	om_model *m = conv_model(-1, 16, 16, 1, 3, 20);
	const choice c = plan_and_run(m, 0);
	assert_null(c.plan);
	assert_string_equal(c.ran, "winograd-f4");
	nt_free(m);
}

static om_model *pool_model(const char *op, int64_t k, int64_t s, int64_t H)
{
	om_model *m = model_of(op, 1);
	om_node *n = node_of(m);
	set_input(m, 4, (int64_t[]){1, 24, H, H});
	nt_ints(n, "kernel_shape", ((const int64_t[]){k, k}), 2);
	nt_ints(n, "strides", ((const int64_t[]){s, s}), 2);
	return m;
}

static void pool_choices(void **state)
{
	(void)state;
	/* exact mode: the separable rows (no dilations, no Indices) */
	assert_string_equal(recorded(pool_model("MaxPool", 3, 2, 17), 1), "max-rows");
	assert_string_equal(recorded(pool_model("AveragePool", 3, 2, 17), 1), "avg-rows");
	/* stride 1 keeping the rows' width (pads 1 each side): whole planes, in both modes */
	om_model *m = pool_model("MaxPool", 3, 1, 17);
	nt_ints(node_of(m), "pads", ((const int64_t[]){1, 1, 1, 1}), 4);
	assert_string_equal(recorded(m, 0), "max-plane");
	/* fast mode's 2-D AveragePool: separable planes, or 16 planes at a time on AVX-512 */
	const char *avg = recorded(pool_model("AveragePool", 3, 2, 17), 0);
	assert_true(!strcmp(avg, "avg-plane") || !strcmp(avg, "planes-nchw16c"));
	/* dilations: the general walk */
	m = pool_model("MaxPool", 2, 1, 9);
	nt_ints(node_of(m), "dilations", ((const int64_t[]){2, 2}), 2);
	assert_string_equal(recorded(m, 1), "general");
	m = model_of("GlobalAveragePool", 1);
	set_input(m, 4, (int64_t[]){1, 24, 5, 5});
	assert_string_equal(recorded(m, 0), "plain");
}

/* x (M, K) times an initializer B (K, N) */
static om_model *product_model(const char *op, int64_t M, int64_t K, int64_t N)
{
	om_model *m = model_of(op, 2);
	set_input(m, 2, (int64_t[]){M, K});
	om_value *b = om_graph_value(m->graph, "b");
	b->flags |= OM_VALUE_INITIALIZER;
	b->init = om_model_tensor(m, OM_FLOAT, 2, (int64_t[]){K, N});
	memset(b->init->data, 0, b->init->nbytes);
	om_type_from_tensor(m, &b->type, b->init);
	m->graph->inits = om_arena_alloc(m->arena, sizeof *m->graph->inits);
	m->graph->inits[m->graph->ninits++] = b;
	node_of(m)->in[1] = b;
	return m;
}

static void product_choices(void **state)
{
	(void)state;
	/* one row of 256 x 128 multiply-adds: om_sgemv_fast in fast mode */
	assert_string_equal(recorded(product_model("Gemm", 1, 256, 128), 0), "gemv");
	assert_string_equal(recorded(product_model("Gemm", 1, 256, 128), 1), "sgemm");
	assert_string_equal(recorded(product_model("MatMul", 4, 256, 128), 1), "sgemm");
	/* 200 rows at one thread: B packed once where oneDNN is in the build */
	const char *mm = recorded(product_model("MatMul", 200, 256, 128), 0);
	assert_true(!strcmp(mm, "packed-b") || !strcmp(mm, "sgemm"));
}

static om_model *transpose_model(int32_t rank, const int64_t *dims, const int64_t *perm)
{
	om_model *m = model_of("Transpose", 1);
	set_input(m, rank, dims);
	nt_ints(node_of(m), "perm", perm, rank);
	return m;
}

static void transpose_choices(void **state)
{
	(void)state;
	/* the channel shuffle (1, 2, 4, 3, 3) perm (0,2,1,3,4): rank 3 after merging, the
	 * innermost axis stays */
	om_model *m = transpose_model(5, (int64_t[]){1, 2, 4, 3, 3}, (int64_t[]){0, 2, 1, 3, 4});
	choice c = plan_and_run(m, 1);
	assert_string_equal(c.plan, "runs");
	assert_string_equal(c.ran, "runs");
	assert_string_equal(c.how, "moves as rank 3 (1,0,2) merged");
	nt_free(m);
	m = transpose_model(3, (int64_t[]){1, 4, 6}, (int64_t[]){0, 2, 1});
	c = plan_and_run(m, 1);
	assert_string_equal(c.plan, "tiles-32x32");
	assert_string_equal(c.how, "moves as rank 2 (1,0) merged");
	nt_free(m);
	/* only extent-1 axes move: one copy */
	assert_string_equal(recorded(transpose_model(3, (int64_t[]){1, 5, 1},
						     (int64_t[]){2, 1, 0}), 1),
			    "copy");
}

/* The bundled example with its batch fixed at 2: every step that has a plan-time record runs
 * what it records, in both modes (Convs, pools, Gemm, Transposes) */
static void example_runs_its_records(void **state)
{
	(void)state;
	for (int exact = 0; exact <= 1; exact++) {
		om_model *m = NULL;
		om_status st = {0};
		const char *path = tu_source_path("examples/tiny_shuffle.onnx");
		assert_int_equal(om_model_load(path, &m, &st), OM_OK);
		om_value *x = m->graph->inputs[0];
		x->type.dims[0] = (om_dim){2, NULL};
		om_session *s = NULL;
		const om_session_options opt = {.exact = exact, .threads = 1};
		assert_int_equal(om_session_create(m, &opt, &s, &st), OM_OK);
		om_tensor in = {0}, out = {0};
		const int64_t dims[4] = {2, 3, 16, 16};
		assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, 4, dims, &st), OM_OK);
		memset(in.data, 0, in.nbytes);
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		int records = 0;
		for (int i = 0; i < om_session_node_count(s); i++) {
			const om_node_info ni = om_session_node_info(s, i);
			if (!ni.plan_impl)
				continue;
			assert_false(ni.dynamic);
			assert_non_null(ni.impl);
			assert_string_equal(ni.plan_impl, ni.impl);
			records++;
		}
		assert_true(records >= 4); /* its Convs, Transposes, pool and Gemm */
		om_tensor_free(&in), om_tensor_free(&out);
		om_session_free(s);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conv_choices),
		cmocka_unit_test(dynamic_has_no_plan_record),
		cmocka_unit_test(pool_choices),
		cmocka_unit_test(product_choices),
		cmocka_unit_test(transpose_choices),
		cmocka_unit_test(example_runs_its_records),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
