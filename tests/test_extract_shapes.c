/* test_extract_shapes.c — sub-models (--inputs) whose part reads an original graph input only
 * for its shape: the Shape/Size reads a named input with those dims instead, so the part's
 * inputs are the named ones; where no named input has the dims the original input stays. */
#include <string.h>

#include "testutil.h"

static void io(om_graph *g, const char *name, int32_t elem, int32_t rank, const int64_t *dims,
	       bool input)
{
	om_value *v = tu_typed_value(g, name, elem, rank, dims);
	v->flags |= input ? OM_VALUE_GRAPH_INPUT : OM_VALUE_GRAPH_OUTPUT;
	if (input)
		tu_push_value(g, &g->inputs, &g->ninputs, v);
	else
		tu_push_value(g, &g->outputs, &g->noutputs, v);
}

/* x:[N,4] -> y = Transpose(x) [4,N] -> out = Relu(y); sz = Shape(x); n = Size(x);
 * z = Shape(w) with w:[N,5] another input. */
static om_model *make_model(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	io(g, "x", OM_FLOAT, 2, (int64_t[]){-1, 4}, true);
	io(g, "w", OM_FLOAT, 2, (int64_t[]){-1, 5}, true);
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "y"), "perm", 2, (int64_t[]){1, 0});
	tu_graph_node(g, "Relu", "y", "r");
	tu_graph_node(g, "Identity", "r", "out");
	tu_graph_node(g, "Shape", "x", "sz");
	tu_graph_node(g, "Size", "r", "n");
	tu_graph_node(g, "Shape", "w", "z");
	io(g, "out", OM_FLOAT, 2, (int64_t[]){4, -1}, false);
	io(g, "sz", OM_INT64, 1, (int64_t[]){2}, false);
	io(g, "n", OM_INT64, 0, NULL, false);
	io(g, "z", OM_INT64, 1, (int64_t[]){2}, false);
	return m;
}

static void run_part(om_model *m, const int64_t *want_sz, int64_t want_n)
{
	om_session *s = tu_session_create(m);
	float data[12] = {0};
	om_tensor in = {.dtype = OM_FLOAT, .rank = 2, .dims = {4, 3}, .data = data,
			.nbytes = sizeof data};
	om_tensor out[3] = {{0}};
	om_status st = {0};
	assert_int_equal(om_session_run(s, &in, 1, out, om_session_output_count(s), &st), OM_OK);
	const int64_t *sz = out[1].data;
	assert_int_equal(sz[0], want_sz[0]);
	assert_int_equal(sz[1], want_sz[1]);
	assert_int_equal(*(const int64_t *)out[2].data, want_n);
	for (int i = 0; i < om_session_output_count(s); i++)
		om_tensor_free(&out[i]);
	om_session_free(s);
}

static void shape_of_original_input_reads_named_input(void **state)
{
	(void)state;
	const char *ins[] = {"y", NULL}, *outs[] = {"out", "sz", "n", NULL};
	for (int passes = 0; passes < 2; passes++) {
		om_model *m = make_model();
		om_status st = {0};
		om_simplify_options o = {.inputs = ins, .outputs = outs, .no_passes = !passes};
		assert_int_equal(om_simplify(m, &o, &st), OM_OK);
		/* only y: Shape(x) is Gather(Shape(y), [1, 0]); Size reads r, in the part */
		assert_int_equal(m->graph->ninputs, 1);
		assert_string_equal(m->graph->inputs[0]->name, "y");
		/* y = [4, 3] is x^T with x = [3, 4] */
		run_part(m, (const int64_t[]){3, 4}, 12);
		om_model_free(m);
	}
}

static void input_stays_when_no_named_input_has_its_dims(void **state)
{
	(void)state;
	const char *ins[] = {"y", NULL}, *outs[] = {"out", "z", NULL};
	om_model *m = make_model();
	om_status st = {0};
	om_simplify_options o = {.inputs = ins, .outputs = outs, .no_passes = 1};
	assert_int_equal(om_simplify(m, &o, &st), OM_OK);
	/* w:[N,5]: y [4,N] has N but not 5, so w stays and Shape reads it */
	assert_int_equal(m->graph->ninputs, 2);
	assert_string_equal(m->graph->inputs[0]->name, "y");
	assert_string_equal(m->graph->inputs[1]->name, "w");
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shape_of_original_input_reads_named_input),
		cmocka_unit_test(input_stays_when_no_named_input_has_its_dims),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
