/* test_gradient.c — ai.onnx.preview.training Gradient lowered by a session
 * (passes/lower_gradient.c, the rows' rules in kernels/math/grad_math.c and
 * kernels/move/grad_move.c): hand-derived gradients of (a + b) * a with a [3,1] and b [1,4]
 * broadcast and of a MatMul; a node without a derivative rule on the path is Unsupported
 * naming its op; a Gradient no output reads, and one fed other values than xs, are not
 * lowered; the model given to the session keeps its Gradient, and om_simplify passes it
 * through with the forward nodes it names. (tests/cases/gradient: finite differences over
 * every rule, tests/gen_cases_gradient.py.) */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#define TRAINING "ai.onnx.preview.training"

static om_model *model(void)
{
	om_model *m = tu_model(17);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets * 2);
	assert_non_null(m->opsets);
	m->opsets[0] = (om_opset){"", 17};
	m->opsets[1] = (om_opset){TRAINING, 1};
	m->nopsets = 2;
	return m;
}

static om_value *input(om_graph *g, const char *name, int32_t rank, const int64_t *dims)
{
	om_value *v = tu_typed_value(g, name, OM_FLOAT, rank, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

static void output(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

static void set_strings(om_graph *g, om_node *n, const char *attr, int32_t k,
			const char *const *s)
{
	om_attr *a = om_node_set_attr(n, attr, k < 0 ? OM_ATTR_STRING : OM_ATTR_STRINGS);
	assert_non_null(a);
	if (k < 0) {
		a->s = (om_str){s[0], (int64_t)strlen(s[0])};
		return;
	}
	a->strings = om_arena_alloc(g->model->arena, sizeof *a->strings * (size_t)k);
	for (int32_t i = 0; i < k; i++)
		a->strings[i] = (om_str){s[i], (int64_t)strlen(s[i])};
	a->n = k;
}

/* Gradient(xs, y) reading ins, writing outs (comma lists) */
static om_node *gradient(om_graph *g, const char *ins, const char *outs, int32_t nx,
			 const char *const *xs, const char *y)
{
	om_node *n = tu_graph_node(g, "Gradient", ins, outs);
	n->domain = TRAINING;
	set_strings(g, n, "xs", nx, xs);
	set_strings(g, n, "y", -1, &y);
	return n;
}

static om_tensor ftensor(float *v, int32_t rank, const int64_t *dims)
{
	om_tensor t = {.dtype = OM_FLOAT, .rank = rank, .data = v};
	for (int32_t d = 0; d < rank; d++)
		t.dims[d] = dims[d];
	t.nbytes = (size_t)om_shape_numel(rank, dims) * sizeof(float);
	return t;
}

static void expect_floats(const om_tensor *t, const float *want, int64_t n)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(om_tensor_numel(t), n);
	for (int64_t i = 0; i < n; i++)
		if (fabsf(((const float *)t->data)[i] - want[i]) > 1e-5f)
			fail_msg("element %lld: %g, expected %g", (long long)i,
				 (double)((const float *)t->data)[i], (double)want[i]);
}

/* y = (a + b) * a, a [3,1], b [1,4]: dy/da[i] = sum_j (2 a_i + b_j), dy/db[j] = sum_i a_i */
static void broadcast_add_mul(void **state)
{
	(void)state;
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "a", 2, (int64_t[]){3, 1});
	input(g, "b", 2, (int64_t[]){1, 4});
	tu_graph_node(g, "Add", "a,b", "c");
	tu_graph_node(g, "Mul", "c,a", "y");
	gradient(g, "a,b", "da,db", 2, (const char *[]){"a", "b"}, "y");
	output(g, "y"), output(g, "da"), output(g, "db");
	om_session *s = NULL;
	om_status st = {0};
	if (om_session_create(m, NULL, &s, &st))
		fail_msg("%s", st.msg);
	assert_int_equal(tu_count_op(g, "Gradient"), 1); /* the caller's model is as it was */
	float av[] = {1, 2, 3}, bv[] = {10, 20, 30, 40};
	om_tensor in[2] = {ftensor(av, 2, (int64_t[]){3, 1}), ftensor(bv, 2, (int64_t[]){1, 4})};
	om_tensor out[3];
	assert_int_equal(om_session_run(s, in, 2, out, 3, &st), OM_OK);
	/* da_i = 8 a_i + 100; db_j = 1 + 2 + 3 */
	expect_floats(&out[1], (float[]){108, 116, 124}, 3);
	expect_floats(&out[2], (float[]){6, 6, 6, 6}, 4);
	assert_int_equal(out[1].rank, 2), assert_int_equal(out[1].dims[0], 3);
	assert_int_equal(out[2].rank, 2), assert_int_equal(out[2].dims[1], 4);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	om_session_free(s);
	om_model_free(m);
}

/* y = A @ B, A [2,3], B [3,2]: dA = ones(2,2) B^T (row sums of B), dB = A^T ones (column
 * sums of A, repeated) */
static void matmul(void **state)
{
	(void)state;
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "A", 2, (int64_t[]){2, 3});
	input(g, "B", 2, (int64_t[]){3, 2});
	tu_graph_node(g, "MatMul", "A,B", "y");
	gradient(g, "A,B", "dA,dB", 2, (const char *[]){"A", "B"}, "y");
	output(g, "dA"), output(g, "dB");
	om_session *s = NULL;
	om_status st = {0};
	if (om_session_create(m, NULL, &s, &st))
		fail_msg("%s", st.msg);
	float av[] = {1, 2, 3, 4, 5, 6}, bv[] = {1, 2, 3, 4, 5, 6};
	om_tensor in[2] = {ftensor(av, 2, (int64_t[]){2, 3}), ftensor(bv, 2, (int64_t[]){3, 2})};
	om_tensor out[2];
	assert_int_equal(om_session_run(s, in, 2, out, 2, &st), OM_OK);
	expect_floats(&out[0], (float[]){3, 7, 11, 3, 7, 11}, 6);
	expect_floats(&out[1], (float[]){5, 5, 7, 7, 9, 9}, 6);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	om_session_free(s);
	om_model_free(m);
}

/* Floor has no derivative rule: the session says Unsupported and names it */
static void no_rule_unsupported(void **state)
{
	(void)state;
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "x", 1, (int64_t[]){4});
	tu_graph_node(g, "Floor", "x", "f");
	tu_graph_node(g, "Mul", "f,x", "y");
	gradient(g, "x", "dx", 1, (const char *[]){"x"}, "y");
	output(g, "dx");
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_ERR_UNSUPPORTED);
	assert_null(s);
	assert_non_null(strstr(st.msg, "Floor"));
	om_model_free(m);
}

/* a Gradient no graph output reads is not lowered (its Floor is no error), and the rest runs */
static void unread_gradient_untouched(void **state)
{
	(void)state;
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "x", 1, (int64_t[]){2});
	tu_graph_node(g, "Floor", "x", "y");
	gradient(g, "x", "dx", 1, (const char *[]){"x"}, "y");
	output(g, "y");
	om_session *s = NULL;
	om_status st = {0};
	if (om_session_create(m, NULL, &s, &st))
		fail_msg("%s", st.msg);
	float xv[] = {1.5f, -0.5f};
	om_tensor in = ftensor(xv, 1, (int64_t[]){2}), out;
	om_kind rc = om_session_run(s, &in, 1, &out, 1, &st);
	if (rc)
		fail_msg("%s", st.msg);
	expect_floats(&out, (float[]){1, -1}, 2);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

/* inputs other than the values xs names: the forward graph at other values is not lowered */
static void other_values_unsupported(void **state)
{
	(void)state;
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "x", 1, (int64_t[]){2});
	input(g, "x1", 1, (int64_t[]){2});
	tu_graph_node(g, "Mul", "x,x", "y");
	gradient(g, "x1", "dx", 1, (const char *[]){"x"}, "y");
	output(g, "dx");
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_ERR_UNSUPPORTED);
	assert_non_null(strstr(st.msg, "xs"));
	om_model_free(m);
}

/* om_simplify keeps the Gradient and its forward nodes (which only the Gradient reads, by
 * name, when y_out is 0: dead-node removal took them before) and the graph's outputs as they
 * were; the result still runs right */
static void simplify_case(bool y_out)
{
	om_model *m = model();
	om_graph *g = m->graph;
	input(g, "a", 0, NULL);
	input(g, "b", 0, NULL);
	tu_graph_node(g, "Add", "a,b", "c");
	tu_graph_node(g, "Mul", "c,a", "d");
	gradient(g, "a,b", "da,db", 2, (const char *[]){"a", "b"}, "d");
	if (y_out)
		output(g, "d");
	output(g, "da"), output(g, "db");
	om_status st = {0};
	if (om_simplify(m, NULL, &st))
		fail_msg("%s", st.msg);
	assert_int_equal(tu_count_op(m->graph, "Gradient"), 1);
	assert_int_equal(tu_count_op(m->graph, "Add"), 1);
	assert_int_equal(tu_count_op(m->graph, "Mul"), 1);
	assert_int_equal(m->graph->noutputs, y_out ? 3 : 2);
	assert_false(om_graph_find(m->graph, "c")->flags & OM_VALUE_GRAPH_OUTPUT);
	om_model *r = tu_reload(m);
	om_session *s = NULL;
	if (om_session_create(r, NULL, &s, &st))
		fail_msg("%s", st.msg);
	float av = 1, bv = 2;
	om_tensor in[2] = {ftensor(&av, 0, NULL), ftensor(&bv, 0, NULL)}, out[3];
	const int no = y_out ? 3 : 2;
	assert_int_equal(om_session_run(s, in, 2, out, no, &st), OM_OK);
	if (y_out)
		expect_floats(&out[0], (float[]){3}, 1);
	expect_floats(&out[no - 2], (float[]){4}, 1); /* 2a + b */
	expect_floats(&out[no - 1], (float[]){1}, 1); /* a */
	for (int i = 0; i < no; i++)
		om_tensor_free(&out[i]);
	om_session_free(s);
	om_model_free(r);
	om_model_free(m);
}

static void simplify_passes_through(void **state)
{
	(void)state;
	simplify_case(true);
}

static void simplify_keeps_unread_forward(void **state)
{
	(void)state;
	simplify_case(false);
}

/* element i of a float or double tensor */
static double at(const om_tensor *t, int64_t i)
{
	return t->dtype == OM_DOUBLE ? ((const double *)t->data)[i] : ((const float *)t->data)[i];
}

/* one folder of tests/cases/gradient: the session lowers its Gradient and every output is
 * within the conformance runner's tolerance (rtol 1e-3, atol 1e-7) of the finite differences
 * the generator stored (the runner reports an unsupported case without failing: this fails) */
static void run_case(const char *dir)
{
	char path[8192];
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	om_model *m = NULL;
	om_status st = {0};
	if (om_model_load(path, &m, &st))
		fail_msg("%s: %s", path, st.msg);
	om_session *s = NULL;
	if (om_session_create(m, NULL, &s, &st))
		fail_msg("%s: %s", dir, st.msg);
	om_tensor in[4], want[4], got[4];
	int nin = 0, nout = 0;
	for (; nin < 4; nin++) {
		snprintf(path, sizeof path, "%s/test_data_set_0/input_%d.pb", dir, nin);
		if (om_tensor_read_file(path, &in[nin], &st))
			break;
	}
	for (; nout < 4; nout++) {
		snprintf(path, sizeof path, "%s/test_data_set_0/output_%d.pb", dir, nout);
		if (om_tensor_read_file(path, &want[nout], &st))
			break;
	}
	assert_int_equal(nin, om_session_input_count(s));
	assert_int_equal(nout, om_session_output_count(s));
	if (om_session_run(s, in, nin, got, nout, &st))
		fail_msg("%s: %s", dir, st.msg);
	for (int k = 0; k < nout; k++) {
		assert_int_equal(got[k].dtype, want[k].dtype);
		const int64_t n = om_tensor_numel(&want[k]);
		assert_int_equal(om_tensor_numel(&got[k]), n);
		for (int64_t i = 0; i < n; i++)
			if (fabs(at(&got[k], i) - at(&want[k], i)) > 1e-7 + 1e-3 * fabs(at(&want[k], i)))
				fail_msg("%s output %d element %lld: %g, expected %g", dir, k,
					 (long long)i, at(&got[k], i), at(&want[k], i));
		om_tensor_free(&got[k]);
		om_tensor_free(&want[k]);
	}
	for (int k = 0; k < nin; k++)
		om_tensor_free(&in[k]);
	om_session_free(s);
	om_model_free(m);
}

/* every generated case (tests/gen_cases_gradient.py) */
static void generated_cases(void **state)
{
	(void)state;
	char root[4096];
	snprintf(root, sizeof root, "%s", tu_source_path("tests/cases/gradient"));
	DIR *d = opendir(root);
	assert_non_null(d);
	int cases = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char dir[4096 + 256];
		snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
		run_case(dir);
		cases++;
	}
	closedir(d);
	assert_int_equal(cases, 15);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(broadcast_add_mul),
		cmocka_unit_test(matmul),
		cmocka_unit_test(no_rule_unsupported),
		cmocka_unit_test(unread_gradient_untouched),
		cmocka_unit_test(other_values_unsupported),
		cmocka_unit_test(simplify_passes_through),
		cmocka_unit_test(simplify_keeps_unread_forward),
		cmocka_unit_test(generated_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
