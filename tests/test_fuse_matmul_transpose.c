/* test_fuse_matmul_transpose.c — the fuse_matmul_transpose pass on hand-built graphs: the
 * nodes and attributes it leaves, the graphs it must leave alone, and the same outputs before
 * and after through sessions (within float tolerance in fast mode, bit-identical in exact). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "pass.h"

/* ---- graph building ------------------------------------------------------------------ */

static om_model *model(bool ms)
{
	om_model *m = om_model_new();
	assert_non_null(m);
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets * 2);
	m->opsets[0] = (om_opset){"", 14};
	m->opsets[1] = (om_opset){"com.microsoft", 1};
	m->nopsets = ms ? 2 : 1;
	return m;
}

static void set_type(om_graph *g, om_value *v, int32_t elem, int32_t rank, const int64_t *dims)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.rank = rank;
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * OM_MAX_RANK);
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = (om_dim){dims[i], NULL};
}

static void input(om_graph *g, const char *name, int32_t elem, int32_t rank,
		  const int64_t *dims)
{
	om_value *v = om_graph_value(g, name);
	set_type(g, v, elem, rank, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
}

static void output(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

/* an initializer of `elem` (float or double) filled with v, v + 1, ... */
static void constant(om_graph *g, const char *name, int32_t elem, int32_t rank,
		     const int64_t *dims, double v)
{
	om_tensor *t = om_model_tensor(g->model, elem, rank, dims);
	for (int64_t i = 0; i < om_tensor_numel(t); i++)
		if (elem == OM_DOUBLE)
			((double *)t->data)[i] = v + (double)i;
		else
			((float *)t->data)[i] = (float)(v + (double)i);
	om_value *val = om_graph_value(g, name);
	val->init = t;
	val->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &val->type, t);
	tu_push_value(g, &g->inits, &g->ninits, val);
}

static om_node *node(om_graph *g, const char *op, const char *a, const char *b, const char *y)
{
	om_node *n = om_graph_add_node(g, op, strcmp(op, "FusedMatMul") ? "" : "com.microsoft",
				       y, b ? 2 : 1, 1);
	assert_non_null(n);
	n->in[0] = om_graph_value(g, a);
	if (b)
		n->in[1] = om_graph_value(g, b);
	om_node_set_output(n, 0, om_graph_value(g, y));
	return n;
}

static om_node *transpose(om_graph *g, const char *x, const char *y, int32_t r,
			  const int64_t *perm)
{
	om_node *n = node(g, "Transpose", x, NULL, y);
	om_attr *a = om_node_set_attr(n, "perm", OM_ATTR_INTS);
	a->n = r;
	a->ints = om_arena_memdup(g->model->arena, perm, sizeof(int64_t) * (size_t)r);
	return n;
}

#define D(...) (int64_t[]){__VA_ARGS__}

/* ---- the cases: each builds one graph ------------------------------------------------ */

/* MatMul(A, Transpose(X, swap)) * 0.3 -> FusedMatMul(A, X, transB, alpha 0.3) */
static om_model *g_swap_scale(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 4, D(2, 3, 4, 5));
	input(g, "X", OM_FLOAT, 4, D(2, 3, 6, 5));
	constant(g, "s", OM_FLOAT, 0, NULL, 0.3);
	transpose(g, "X", "T", 4, D(0, 1, 3, 2));
	node(g, "MatMul", "A", "T", "Y");
	node(g, "Mul", "s", "Y", "out");
	output(g, "out");
	return m;
}

/* attention: Q K^T / 8 with K^T = Transpose(X [B, T, H, D], (0,2,3,1)) */
static om_model *g_attention(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "Q", OM_FLOAT, 4, D(2, 4, 16, 32));
	input(g, "X", OM_FLOAT, 4, D(2, 16, 4, 32));
	constant(g, "d", OM_FLOAT, 1, D(1), 8);
	transpose(g, "X", "KT", 4, D(0, 2, 3, 1));
	node(g, "MatMul", "Q", "KT", "S");
	node(g, "Div", "S", "d", "out");
	output(g, "out");
	return m;
}

/* A = Transpose(X [4, 2, 3, 5], (1, 2, 0, 3)): transBatchA */
static om_model *g_batch_a(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "X", OM_FLOAT, 4, D(4, 2, 3, 5));
	input(g, "B", OM_FLOAT, 4, D(2, 3, 5, 6));
	transpose(g, "X", "T", 4, D(1, 2, 0, 3));
	node(g, "MatMul", "T", "B", "out");
	output(g, "out");
	return m;
}

/* B = Transpose(X [6, 2, 3, 5], (1, 2, 3, 0)): transBatchB and transB */
static om_model *g_batch_b(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 4, D(2, 3, 4, 5));
	input(g, "X", OM_FLOAT, 4, D(6, 2, 3, 5));
	transpose(g, "X", "T", 4, D(1, 2, 3, 0));
	node(g, "MatMul", "A", "T", "out");
	output(g, "out");
	return m;
}

/* left alone: Div by 3 (1/3 is not exact) */
static om_model *g_div3(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "d", OM_FLOAT, 0, NULL, 3);
	node(g, "MatMul", "A", "B", "Y");
	node(g, "Div", "Y", "d", "out");
	output(g, "out");
	return m;
}

/* left alone: Mul by a per-column vector */
static om_model *g_vector(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "s", OM_FLOAT, 2, D(1, 5), 0.5);
	node(g, "MatMul", "A", "B", "Y");
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	return m;
}

/* left alone: a scalar of higher rank than the product (the Mul grows the shape) */
static om_model *g_rank_grows(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "s", OM_FLOAT, 3, D(1, 1, 1), 0.5);
	node(g, "MatMul", "A", "B", "Y");
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	return m;
}

/* left alone: the product is read by the Mul and is a graph output too */
static om_model *g_two_readers(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "s", OM_FLOAT, 0, NULL, 0.5);
	node(g, "MatMul", "A", "B", "Y");
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	output(g, "Y");
	return m;
}

/* left alone: a constant's Transpose (the folder's), double products, a rank-3 batch
 * rotation against a 2-D B (transBatch needs one rank), alpha already set */
static om_model *g_const_weight(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	constant(g, "W", OM_FLOAT, 2, D(5, 4), -2);
	transpose(g, "W", "WT", 2, D(1, 0));
	node(g, "MatMul", "A", "WT", "out");
	output(g, "out");
	return m;
}

static om_model *g_double(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_DOUBLE, 3, D(2, 3, 4));
	input(g, "X", OM_DOUBLE, 3, D(2, 5, 4));
	constant(g, "s", OM_DOUBLE, 0, NULL, 0.5);
	transpose(g, "X", "T", 3, D(0, 2, 1));
	node(g, "MatMul", "A", "T", "Y");
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	return m;
}

static om_model *g_rank_mismatch(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "X", OM_FLOAT, 3, D(4, 3, 5));
	input(g, "B", OM_FLOAT, 2, D(5, 6));
	transpose(g, "X", "T", 3, D(1, 0, 2));
	node(g, "MatMul", "T", "B", "out");
	output(g, "out");
	return m;
}

static om_model *g_alpha_set(void)
{
	om_model *m = model(true);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "s", OM_FLOAT, 0, NULL, 0.3);
	om_node *f = node(g, "FusedMatMul", "A", "B", "Y");
	om_node_set_attr(f, "alpha", OM_ATTR_FLOAT)->f = 3.0f;
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	return m;
}

/* a power of two on top of alpha 3: alpha 0.75 */
static om_model *g_alpha_pow2(void)
{
	om_model *m = model(true);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "s", OM_FLOAT, 0, NULL, 0.25);
	om_node *f = node(g, "FusedMatMul", "A", "B", "Y");
	om_node_set_attr(f, "alpha", OM_ATTR_FLOAT)->f = 3.0f;
	node(g, "Mul", "Y", "s", "out");
	output(g, "out");
	return m;
}

/* nn.MultiheadAttention's Q K^T: X, Y [T, B*H, D]; (Transpose(X, (1,0,2)) / 4) x
 * Transpose(Y, (1,2,0)) -> FusedMatMul(X, Y, 0.25, transBatchA, transB, transBatchB) */
static om_model *g_mha(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "X", OM_FLOAT, 3, D(7, 8, 16));
	input(g, "Y", OM_FLOAT, 3, D(7, 8, 16));
	constant(g, "d", OM_FLOAT, 0, NULL, 4);
	transpose(g, "X", "Q", 3, D(1, 0, 2));
	node(g, "Div", "Q", "d", "Qs");
	transpose(g, "Y", "KT", 3, D(1, 2, 0));
	node(g, "MatMul", "Qs", "KT", "out");
	output(g, "out");
	return m;
}

/* left alone: an operand divided by 3 or multiplied by 0.3 (not powers of two) */
static om_model *g_input_div3(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "A", OM_FLOAT, 2, D(3, 4));
	input(g, "B", OM_FLOAT, 2, D(4, 5));
	constant(g, "d", OM_FLOAT, 0, NULL, 3);
	constant(g, "s", OM_FLOAT, 0, NULL, 0.3);
	node(g, "Div", "A", "d", "Ad");
	node(g, "Mul", "s", "B", "Bs");
	node(g, "MatMul", "Ad", "Bs", "out");
	output(g, "out");
	return m;
}

/* left alone: the (0,2,3,1) Transpose has another reader, so it cannot become (0,2,1,3) */
static om_model *g_kt_shared(void)
{
	om_model *m = model(false);
	om_graph *g = m->graph;
	input(g, "Q", OM_FLOAT, 4, D(2, 4, 16, 32));
	input(g, "X", OM_FLOAT, 4, D(2, 16, 4, 32));
	transpose(g, "X", "KT", 4, D(0, 2, 3, 1));
	node(g, "MatMul", "Q", "KT", "out");
	output(g, "out");
	output(g, "KT");
	return m;
}

/* ---- running --------------------------------------------------------------------------- */

/* infer_shapes, the pass, eliminate_dead; returns the pass's change count */
static int run_pass(om_model *m)
{
	om_status st = {0};
	om_pass_ctx c = {.m = m, .scratch = om_arena_new(), .st = &st, .fold_max = 1 << 20};
	assert_non_null(c.scratch);
	int other = 0, changes = 0;
	assert_int_equal(om_pass_infer(&c, m->graph, &other), OM_OK);
	assert_int_equal(om_pass_fuse_matmul_transpose(&c, m->graph, &changes), OM_OK);
	/* at most one use count per step's sweep (none for a step with no node to try), none
	 * per rewrite */
	assert_true(c.recounts >= 1 && c.recounts <= 5);
	assert_int_equal(om_pass_dead(&c, m->graph, &other), OM_OK);
	assert_int_equal(om_verify_graph(m->graph, &st), OM_OK);
	om_pass_ctx_close(&c);
	return changes;
}

static void free_model(om_model *m)
{
	HASH_CLEAR(hh, m->graph->values);
	om_model_free(m);
}

/* deterministic inputs: values in [-1, 1) with 2^-10 steps */
static void fill(const om_value *v, om_tensor *t, uint32_t *s)
{
	int64_t dims[OM_MAX_RANK];
	for (int32_t i = 0; i < v->type.rank; i++)
		dims[i] = v->type.dims[i].value;
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(t, v->type.elem, v->type.rank, dims, &st), OM_OK);
	for (int64_t i = 0; i < om_tensor_numel(t); i++) {
		*s = *s * 1664525u + 1013904223u;
		const double x = (double)((int32_t)(*s >> 21) - 1024) / 1024.0;
		if (t->dtype == OM_DOUBLE)
			((double *)t->data)[i] = x;
		else
			((float *)t->data)[i] = (float)x;
	}
}

/* Runs m's first output on the inputs; y receives it. */
static void run_model(const om_model *m, int exact, om_tensor *y)
{
	const om_graph *g = m->graph;
	om_tensor in[4];
	uint32_t s = 17;
	for (int32_t i = 0; i < g->ninputs; i++)
		fill(g->inputs[i], &in[i], &s);
	om_session *ses;
	om_status st = {0};
	om_session_options opt = {.exact = exact, .threads = 1};
	if (om_session_create(m, &opt, &ses, &st))
		fail_msg("session: %s", st.msg);
	om_tensor ys[2];
	if (om_session_run(ses, in, g->ninputs, ys, g->noutputs, &st))
		fail_msg("run: %s", st.msg);
	*y = ys[0];
	for (int32_t i = 1; i < g->noutputs; i++)
		om_tensor_free(&ys[i]);
	for (int32_t i = 0; i < g->ninputs; i++)
		om_tensor_free(&in[i]);
	om_session_free(ses);
}

/* The rewritten graph computes what the original does. */
static void same_outputs(om_model *(*build)(void), const om_model *after)
{
	om_model *before = build();
	for (int exact = 0; exact < 2; exact++) {
		om_tensor y0, y1;
		run_model(before, exact, &y0);
		run_model(after, exact, &y1);
		assert_int_equal(y0.rank, y1.rank);
		assert_int_equal(y0.nbytes, y1.nbytes);
		if (exact) {
			assert_memory_equal(y0.data, y1.data, y0.nbytes);
		} else {
			const int64_t n = om_tensor_numel(&y0);
			for (int64_t i = 0; i < n; i++) {
				const double a = y0.dtype == OM_DOUBLE ? ((double *)y0.data)[i]
								       : ((float *)y0.data)[i];
				const double b = y1.dtype == OM_DOUBLE ? ((double *)y1.data)[i]
								       : ((float *)y1.data)[i];
				assert_true(fabs(a - b) <= 1e-5 * (1 + fabs(a)));
			}
		}
		om_tensor_free(&y0), om_tensor_free(&y1);
	}
	free_model(before);
}

static const om_node *only(const om_model *m, const char *op)
{
	const om_node *f = NULL;
	for (int32_t i = 0; i < m->graph->nnodes; i++)
		if (!strcmp(m->graph->nodes[i]->op, op)) {
			assert_null(f);
			f = m->graph->nodes[i];
		}
	assert_non_null(f);
	return f;
}

static void check_fused(const om_node *f, const char *a, const char *b, float alpha, int ta,
			int tb, int tba, int tbb)
{
	assert_string_equal(f->domain, "com.microsoft");
	assert_string_equal(f->in[0]->name, a);
	assert_string_equal(f->in[1]->name, b);
	assert_string_equal(f->out[0]->name, "out");
	assert_true(om_attr_float(f, "alpha", 1) == alpha);
	assert_int_equal(om_attr_int(f, "transA", 0), ta);
	assert_int_equal(om_attr_int(f, "transB", 0), tb);
	assert_int_equal(om_attr_int(f, "transBatchA", 0), tba);
	assert_int_equal(om_attr_int(f, "transBatchB", 0), tbb);
}

/* ---- tests ----------------------------------------------------------------------------- */

static void swap_and_scale(void **state)
{
	(void)state;
	om_model *m = g_swap_scale();
	assert_int_equal(run_pass(m), 2);
	assert_int_equal(m->graph->nnodes, 1);
	check_fused(only(m, "FusedMatMul"), "A", "X", 0.3f, 0, 1, 0, 0);
	assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
	same_outputs(g_swap_scale, m);
	/* nothing left to do */
	assert_int_equal(run_pass(m), 0);
	free_model(m);
}

static void attention_kt(void **state)
{
	(void)state;
	om_model *m = g_attention();
	assert_int_equal(run_pass(m), 2);
	assert_int_equal(m->graph->nnodes, 2);
	const om_node *t = only(m, "Transpose");
	int64_t k = 0;
	const int64_t *p = om_attr_ints(t, "perm", &k);
	assert_int_equal(k, 4);
	assert_true(p[0] == 0 && p[1] == 2 && p[2] == 1 && p[3] == 3);
	check_fused(only(m, "FusedMatMul"), "Q", t->out[0]->name, 0.125f, 0, 1, 0, 0);
	same_outputs(g_attention, m);
	free_model(m);
}

static void batch_transposes(void **state)
{
	(void)state;
	om_model *m = g_batch_a();
	assert_int_equal(run_pass(m), 1);
	assert_int_equal(m->graph->nnodes, 1);
	check_fused(only(m, "FusedMatMul"), "X", "B", 1, 0, 0, 1, 0);
	same_outputs(g_batch_a, m);
	free_model(m);
	m = g_batch_b();
	assert_int_equal(run_pass(m), 1);
	assert_int_equal(m->graph->nnodes, 1);
	check_fused(only(m, "FusedMatMul"), "A", "X", 1, 0, 1, 0, 1);
	same_outputs(g_batch_b, m);
	free_model(m);
}

static void scales(void **state)
{
	(void)state;
	om_model *m = g_alpha_pow2();
	assert_int_equal(run_pass(m), 1);
	assert_int_equal(m->graph->nnodes, 1);
	check_fused(only(m, "FusedMatMul"), "A", "B", 0.75f, 0, 0, 0, 0);
	same_outputs(g_alpha_pow2, m);
	free_model(m);
	m = g_mha();
	assert_int_equal(run_pass(m), 3);
	assert_int_equal(m->graph->nnodes, 1);
	check_fused(only(m, "FusedMatMul"), "X", "Y", 0.25f, 0, 1, 1, 1);
	same_outputs(g_mha, m);
	free_model(m);
}

static void left_alone(void **state)
{
	(void)state;
	om_model *(*const builds[])(void) = {g_div3, g_vector, g_rank_grows, g_two_readers,
					     g_const_weight, g_double, g_rank_mismatch,
					     g_alpha_set, g_kt_shared, g_input_div3};
	for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
		om_model *m = builds[i]();
		const int32_t n0 = m->graph->nnodes;
		const char *ops[8];
		for (int32_t k = 0; k < n0; k++)
			ops[k] = m->graph->nodes[k]->op;
		if (run_pass(m))
			fail_msg("case %zu changed", i);
		assert_int_equal(m->graph->nnodes, n0);
		for (int32_t k = 0; k < n0; k++)
			assert_string_equal(m->graph->nodes[k]->op, ops[k]);
		free_model(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(swap_and_scale),
		cmocka_unit_test(attention_kt),
		cmocka_unit_test(batch_transposes),
		cmocka_unit_test(scales),
		cmocka_unit_test(left_alone),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
