/* test_ops_control.c — If, Loop, Scan (8 and 9+) in sessions on hand-built graphs: branches,
 * outer values, loop-carried state, scan outputs, directions and axes, zero iterations. */
#include <stdio.h>
#include <string.h>

#include "registry.h"
#include "testutil.h"
#include "session.h"

/* ---- graph building ---------------------------------------------------------------------- */

static om_model *new_model(int64_t opset)
{
	om_model *m = om_model_new();
	m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", opset};
	m->nopsets = 1;
	return m;
}

static void push(om_model *m, om_value ***list, int32_t *n, om_value *v)
{
	om_value **a = om_arena_alloc(m->arena, sizeof *a * (size_t)(*n + 1));
	if (*n)
		memcpy(a, *list, sizeof *a * (size_t)*n);
	a[(*n)++] = v;
	*list = a;
}

static void set_type(om_graph *g, om_value *v, int32_t dtype, int32_t rank, const int64_t *dims)
{
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = dtype, .rank = rank};
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * (size_t)(rank + 1));
	for (int32_t i = 0; i < rank; i++)
		v->type.dims[i] = dims[i] < 0 ? (om_dim){-1, NULL} : (om_dim){dims[i], NULL};
}

static om_value *input(om_graph *g, const char *name, int32_t dtype, int32_t rank,
		       const int64_t *dims)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	set_type(g, v, dtype, rank, dims);
	push(g->model, &g->inputs, &g->ninputs, v);
	return v;
}

static void output(om_graph *g, om_value *v)
{
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	push(g->model, &g->outputs, &g->noutputs, v);
}

static om_value *outer(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_OUTER;
	return v;
}

static om_value *op(om_graph *g, const char *type, const char *name, om_value *a, om_value *b)
{
	om_node *n = om_graph_add_node(g, type, "", name, b ? 2 : 1, 1);
	n->in[0] = a;
	if (b)
		n->in[1] = b;
	om_node_set_output(n, 0, om_graph_value(g, name));
	return n->out[0];
}

static om_node *node(om_graph *g, const char *type, const char *name, int32_t nin,
		     om_value *const *in, int32_t nout, const char *const *out)
{
	om_node *n = om_graph_add_node(g, type, "", name, nin, nout);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = in[i];
	for (int32_t i = 0; i < nout; i++)
		om_node_set_output(n, i, om_graph_value(g, out[i]));
	return n;
}

static void ints_attr(om_node *n, const char *name, const int64_t *v, int64_t count)
{
	om_attr *a = om_node_set_attr(n, name, OM_ATTR_INTS);
	a->ints = om_arena_memdup(n->graph->model->arena, v, sizeof(int64_t) * (size_t)count);
	a->n = count;
}

static om_tensor tensor(int32_t dtype, int32_t rank, const int64_t *dims, void *data)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = data};
	memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
	t.nbytes = om_tensor_bytes_for(dtype, rank, dims);
	return t;
}

static bool have(const char *opname, int64_t opset)
{
	return om_op_find("", opname, opset) != NULL;
}

static void check_f32(const om_tensor *t, int32_t rank, const int64_t *dims, const float *want)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
	for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++)
		assert_true(((const float *)t->data)[i] == want[i]);
}

/* ---- If ---------------------------------------------------------------------------------- */

/* y = If(c) then Add(x, x) else Mul(x, x) with x an outer value; z = Add(y, x) after it. */
static void if_branches(void **state)
{
	(void)state;
	if (!have("Add", 13) || !have("Mul", 13))
		skip();
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {3};
	om_value *c = input(g, "c", OM_BOOL, 0, d), *x = input(g, "x", OM_FLOAT, 1, d);
	om_graph *tb = om_graph_new(m, g), *eb = om_graph_new(m, g);
	output(tb, op(tb, "Add", "t", outer(tb, "x"), outer(tb, "x")));
	output(eb, op(eb, "Mul", "e", outer(eb, "x"), outer(eb, "x")));
	om_node *n = node(g, "If", "if", 1, &c, 1, (const char *const[]){"y"});
	om_node_set_attr(n, "then_branch", OM_ATTR_GRAPH)->g = tb;
	om_node_set_attr(n, "else_branch", OM_ATTR_GRAPH)->g = eb;
	output(g, op(g, "Add", "z", n->out[0], x));
	om_session *s = tu_session_create(m);
	float xv[] = {1, 2, 3};
	unsigned char cv = 1;
	om_tensor in[2] = {tensor(OM_BOOL, 0, d, &cv), tensor(OM_FLOAT, 1, d, xv)}, out;
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_OK);
	check_f32(&out, 1, d, (const float[]){3, 6, 9});
	om_tensor_free(&out);
	cv = 0;
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_OK);
	check_f32(&out, 1, d, (const float[]){2, 6, 12});
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

static void if_errors(void **state)
{
	(void)state;
	if (!have("Add", 13))
		skip();
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {2};
	om_value *c = input(g, "c", OM_BOOL, 1, (const int64_t[]){-1}); /* checked anyway */
	om_graph *tb = om_graph_new(m, g), *eb = om_graph_new(m, g);
	output(tb, op(tb, "Identity", "t", outer(tb, "c"), NULL));
	om_node *n = node(g, "If", "bad_if", 1, &c, 1, (const char *const[]){"y"});
	om_node_set_attr(n, "then_branch", OM_ATTR_GRAPH)->g = tb;
	om_node_set_attr(n, "else_branch", OM_ATTR_GRAPH)->g = eb; /* no outputs */
	output(g, n->out[0]);
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "bad_if");
	/* the same with matching branches: a 2-element condition is an input error */
	output(eb, op(eb, "Identity", "e", outer(eb, "c"), NULL));
	s = tu_session_create(m);
	unsigned char cv[2] = {1, 0};
	om_tensor in = tensor(OM_BOOL, 1, d, cv), out;
	assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_string_equal(st.node, "bad_if");
	om_session_free(s);
	om_model_free(m);
}

/* ---- Loop -------------------------------------------------------------------------------- */

/* Loop(M, cond, s0): body (i, c, s) -> (c2, s + x, s + x) with c2 = i < limit (or c). */
static om_model *loop_model(bool stop_early)
{
	om_model *m = new_model(13);
	om_graph *g = m->graph;
	const int64_t d[] = {2}, none[1] = {0};
	om_value *mv = input(g, "M", OM_INT64, 0, none), *cv = input(g, "cond", OM_BOOL, 0, none);
	om_value *s0 = input(g, "s0", OM_FLOAT, 1, d);
	input(g, "x", OM_FLOAT, 1, d);
	om_graph *b = om_graph_new(m, g);
	om_value *bi = input(b, "i", OM_INT64, 0, none), *bc = input(b, "c", OM_BOOL, 0, none);
	om_value *bs = input(b, "s", OM_FLOAT, 1, d);
	om_value *c2 = stop_early ? op(b, "Less", "c2", bi, outer(b, "limit"))
				  : op(b, "Identity", "c2", bc, NULL);
	om_value *s2 = op(b, "Add", "s2", bs, outer(b, "x"));
	output(b, c2);
	output(b, s2);
	output(b, op(b, "Identity", "scan", s2, NULL));
	set_type(b, b->outputs[2], OM_FLOAT, 1, d);
	if (stop_early)
		input(g, "limit", OM_INT64, 0, none);
	om_node *n = node(g, "Loop", "loop", 3, (om_value *[]){mv, cv, s0}, 2,
			  (const char *const[]){"s_final", "s_all"});
	om_node_set_attr(n, "body", OM_ATTR_GRAPH)->g = b;
	output(g, n->out[0]);
	output(g, n->out[1]);
	return m;
}

static void loop_carried_and_scan(void **state)
{
	(void)state;
	if (!have("Add", 13) || !have("Less", 13) || !have("Identity", 13))
		skip();
	for (int early = 0; early < 2; early++) {
		om_model *m = loop_model(early);
		om_session *s = tu_session_create(m);
		int64_t mv = 4, limit = 1;
		unsigned char cv = 1;
		float s0[] = {10, 20}, x[] = {1, 2};
		const int64_t d[] = {2};
		om_tensor in[5] = {tensor(OM_INT64, 0, d, &mv), tensor(OM_BOOL, 0, d, &cv),
				   tensor(OM_FLOAT, 1, d, s0), tensor(OM_FLOAT, 1, d, x),
				   tensor(OM_INT64, 0, d, &limit)};
		om_tensor out[2];
		om_status st = {0};
		assert_int_equal(om_session_run(s, in, early ? 5 : 4, out, 2, &st), OM_OK);
		if (!early) { /* 4 iterations */
			check_f32(&out[0], 1, d, (const float[]){14, 28});
			check_f32(&out[1], 2, (const int64_t[]){4, 2},
				  (const float[]){11, 22, 12, 24, 13, 26, 14, 28});
		} else { /* i = 0: 0 < 1 goes on; i = 1: 1 < 1 stops after that iteration */
			check_f32(&out[0], 1, d, (const float[]){12, 24});
			check_f32(&out[1], 2, (const int64_t[]){2, 2},
				  (const float[]){11, 22, 12, 24});
		}
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
		/* zero iterations: the initial value and an empty scan output */
		mv = 0;
		assert_int_equal(om_session_run(s, in, early ? 5 : 4, out, 2, &st), OM_OK);
		check_f32(&out[0], 1, d, s0);
		assert_int_equal(out[1].rank, 2);
		assert_int_equal(out[1].dims[0], 0);
		assert_int_equal(out[1].dims[1], 2);
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
		/* a cond that is false from the start */
		mv = 3;
		cv = 0;
		assert_int_equal(om_session_run(s, in, early ? 5 : 4, out, 2, &st), OM_OK);
		check_f32(&out[0], 1, d, s0);
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
		/* M must be one integer (the session checks the declared type first) */
		in[0] = tensor(OM_FLOAT, 1, d, x);
		assert_int_equal(om_session_run(s, in, early ? 5 : 4, out, 2, &st),
				 OM_ERR_INVALID_INPUT);
		om_session_free(s);
		om_model_free(m);
	}
}

/* ---- Scan -------------------------------------------------------------------------------- */

/* Scan over X (cumulative sums): body (s, x) -> (s + x, s + x). */
static om_node *scan_node(om_model *m, om_value *const *in, int32_t nin, const int64_t *elem_dims)
{
	om_graph *g = m->graph;
	om_graph *b = om_graph_new(m, g);
	om_value *bs = input(b, "s", OM_FLOAT, 1, elem_dims);
	om_value *bx = input(b, "xe", OM_FLOAT, 1, elem_dims);
	om_value *s2 = op(b, "Add", "s2", bs, bx);
	output(b, s2);
	output(b, op(b, "Identity", "se", s2, NULL));
	om_node *n = node(g, "Scan", "scan", nin, in, 2, (const char *const[]){"sf", "all"});
	om_node_set_attr(n, "body", OM_ATTR_GRAPH)->g = b;
	om_node_set_attr(n, "num_scan_inputs", OM_ATTR_INT)->i = 1;
	output(g, n->out[0]);
	output(g, n->out[1]);
	return n;
}

static void scan9_forms(void **state)
{
	(void)state;
	if (!have("Add", 13) || !have("Identity", 13))
		skip();
	const int64_t d2[] = {2}, x_d[] = {3, 2}, xt_d[] = {2, 3};
	float s0[] = {0, 0}, x[] = {1, 2, 3, 4, 5, 6}, xt[] = {1, 3, 5, 2, 4, 6};
	for (int form = 0; form < 4; form++) {
		/* 0: forward; 1: reversed input; 2: input axis 1 on X^T; 3: output axis 1,
		 * output reversed */
		om_model *m = new_model(11);
		om_graph *g = m->graph;
		om_value *sv = input(g, "s0", OM_FLOAT, 1, d2);
		om_value *xv = input(g, "x", OM_FLOAT, 2, form == 2 ? xt_d : x_d);
		om_node *n = scan_node(m, (om_value *[]){sv, xv}, 2, d2);
		if (form == 1)
			ints_attr(n, "scan_input_directions", (const int64_t[]){1}, 1);
		if (form == 2)
			ints_attr(n, "scan_input_axes", (const int64_t[]){-1}, 1);
		if (form == 3) {
			ints_attr(n, "scan_output_axes", (const int64_t[]){1}, 1);
			ints_attr(n, "scan_output_directions", (const int64_t[]){1}, 1);
		}
		om_session *s = tu_session_create(m);
		om_tensor in[2] = {tensor(OM_FLOAT, 1, d2, s0),
				   form == 2 ? tensor(OM_FLOAT, 2, xt_d, xt)
					     : tensor(OM_FLOAT, 2, x_d, x)};
		om_tensor out[2];
		om_status st = {0};
		assert_int_equal(om_session_run(s, in, 2, out, 2, &st), OM_OK);
		check_f32(&out[0], 1, d2, (const float[]){9, 12});
		if (form == 0 || form == 2)
			check_f32(&out[1], 2, x_d, (const float[]){1, 2, 4, 6, 9, 12});
		else if (form == 1)
			check_f32(&out[1], 2, x_d, (const float[]){5, 6, 8, 10, 9, 12});
		else /* steps 1, 4, 9 | 2, 6, 12 placed last-first along axis 1 */
			check_f32(&out[1], 2, xt_d, (const float[]){9, 4, 1, 12, 6, 2});
		om_tensor_free(&out[0]);
		om_tensor_free(&out[1]);
		om_session_free(s);
		om_model_free(m);
	}
}

/* Scan-8: batch axis 0, optional sequence_lens (shorter sequences pad with zeros). */
static void scan8_batches(void **state)
{
	(void)state;
	if (!have("Add", 8) || !have("Identity", 8))
		skip();
	const int64_t d2[] = {2}, s_d[] = {2, 2}, x_d[] = {2, 3, 2}, one[] = {2};
	om_model *m = new_model(8);
	om_graph *g = m->graph;
	om_value *lens = input(g, "lens", OM_INT64, 1, one);
	om_value *sv = input(g, "s0", OM_FLOAT, 2, s_d), *xv = input(g, "x", OM_FLOAT, 3, x_d);
	scan_node(m, (om_value *[]){lens, sv, xv}, 3, d2);
	om_session *s = tu_session_create(m);
	float s0[] = {0, 0, 100, 100}, x[] = {1, 2, 3, 4, 5, 6, 10, 20, 30, 40, 50, 60};
	int64_t lv[] = {3, 2};
	om_tensor in[3] = {tensor(OM_INT64, 1, one, lv), tensor(OM_FLOAT, 2, s_d, s0),
			   tensor(OM_FLOAT, 3, x_d, x)};
	om_tensor out[2];
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, 3, out, 2, &st), OM_OK);
	check_f32(&out[0], 2, s_d, (const float[]){9, 12, 140, 160});
	check_f32(&out[1], 3, x_d,
		  (const float[]){1, 2, 4, 6, 9, 12, 110, 120, 140, 160, 0, 0});
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	lv[1] = 4; /* longer than the sequence */
	assert_int_equal(om_session_run(s, in, 3, out, 2, &st), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(if_branches),
		cmocka_unit_test(if_errors),
		cmocka_unit_test(loop_carried_and_scan),
		cmocka_unit_test(scan9_forms),
		cmocka_unit_test(scan8_batches),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
