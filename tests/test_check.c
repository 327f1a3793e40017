/* test_check.c — om_check, om_compare and om_bisect (check/): a model whose outputs are known
 * by hand, simplified plainly and with a wrong rewrite on purpose (om_simplify_with_break),
 * checked on random and given inputs. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "omopt_testing.h"
#include "testutil.h"

static void init_ones(om_model *m, const char *name, int64_t rows, int64_t cols)
{
	om_graph *g = m->graph;
	om_tensor *t = om_model_tensor(m, OM_FLOAT, 2, (int64_t[]){rows, cols});
	for (int64_t i = 0; i < rows * cols; i++)
		((float *)t->data)[i] = 1;
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static void named(om_node *n, const char *name)
{
	n->name = om_arena_strdup(n->graph->model->arena, name);
}

/*
 * x:[N,4] float, ids:[N] int64 -> mm = MatMul(x, W[4,3] of ones) -> h
 *                                 gather = Gather(E[rows,3] of ones, ids) -> e
 * add = Add(h, e) -> s; id = Identity(s) -> y; relu = Relu(y) -> out:[N,3]
 * out = sum(x row) + 1 in every column; simplify drops the Identity.
 */
static om_model *make_model(int64_t rows)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 2, (int64_t[]){-1, 4});
	om_value *ids = tu_typed_value(g, "ids", OM_INT64, 1, (int64_t[]){-1});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	ids->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	tu_push_value(g, &g->inputs, &g->ninputs, ids);
	init_ones(m, "W", 4, 3);
	init_ones(m, "E", rows, 3);
	named(tu_graph_node(g, "MatMul", "x,W", "h"), "mm");
	named(tu_graph_node(g, "Gather", "E,ids", "e"), "gather");
	named(tu_graph_node(g, "Add", "h,e", "s"), "add");
	named(tu_graph_node(g, "Identity", "s", "y"), "id");
	named(tu_graph_node(g, "Relu", "y", "out"), "relu");
	om_value *out = tu_typed_value(g, "out", OM_FLOAT, 2, (int64_t[]){-1, 3});
	out->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, out);
	return m;
}

/* A copy of m through the file format, simplified with a wrong rewrite after pass `brk`
 * (om_simplify_with_break), or plainly when brk is NULL. */
static om_model *simplified(const om_model *m, const char *brk)
{
	om_model *s = tu_reload(m);
	om_status st = {0};
	assert_int_equal(om_simplify_with_break(s, NULL, brk, &st), OM_OK);
	return s;
}

/* x = [[1,0,0,0]], ids = [0]: out = [2,2,2]. The break adds 1 to W's elements whose index
 * has an odd number of 1 bits: row 0 is [+0,+1,+1], so the broken out is [2,3,3]. */
static const float given_x[4] = {1, 0, 0, 0};
static const int64_t given_ids[1] = {0};

static om_check_options given(const char **names, om_tensor *t)
{
	names[0] = "x";
	names[1] = "ids";
	t[0] = (om_tensor){.dtype = OM_FLOAT, .rank = 2, .dims = {1, 4}, .data = (void *)given_x,
			   .nbytes = sizeof given_x};
	t[1] = (om_tensor){.dtype = OM_INT64, .rank = 1, .dims = {1},
			   .data = (void *)given_ids, .nbytes = sizeof given_ids};
	return (om_check_options){.runs = 1, .input_names = names, .inputs = t, .ninputs = 2};
}

static void check_passes_on_random_inputs(void **state)
{
	(void)state;
	om_model *m = make_model(16), *s = simplified(m, NULL);
	assert_int_equal(tu_count_op(s->graph, "Identity"), 0);
	om_check_report r;
	om_status st = {0};
	om_check_options o = {.runs = 3};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_int_equal(r.runs, 3);
	assert_int_equal(r.failed_run, -1);
	assert_int_equal(r.noutputs, 1);
	assert_string_equal(r.outputs[0].name, "out");
	assert_string_equal(r.outputs[0].ref_node, "relu");
	assert_int_equal(r.outputs[0].state, OM_DIFF_OK);
	assert_true(r.outputs[0].max_abs == 0 && r.outputs[0].ref_max > 0);
	assert_true(r.rtol == 1e-4 && r.atol == 1e-5);
	/* N takes 1, 2, 3: the same in x and ids (Gather on 16 rows: ids within [0,16)) */
	assert_non_null(strstr(r.how, "run 1: N=1"));
	assert_non_null(strstr(r.how, "run 2: N=2"));
	assert_non_null(strstr(r.how, "run 3: N=3"));
	assert_non_null(strstr(r.how, "integers in [0,16)"));
	/* the output's shape over the runs: [1..3, 3] */
	assert_int_equal(r.outputs[0].rank, 2);
	assert_true(r.outputs[0].dims[0] == 1 && r.outputs[0].dims_max[0] == 3);
	assert_true(r.outputs[0].dims[1] == 3 && r.outputs[0].dims_max[1] == 3);
	om_check_report_free(&r);
	om_model_free(s);
	om_model_free(m);
}

static void check_catches_the_broken_pass(void **state)
{
	(void)state;
	om_model *m = make_model(16), *s = simplified(m, "eliminate_identities");
	const char *names[2];
	om_tensor t[2];
	om_check_options o = given(names, t);
	om_check_report r;
	om_status st = {0};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_false(r.passed);
	assert_int_equal(r.failed_run, 0);
	assert_int_equal(r.outputs[0].state, OM_DIFF_OVER);
	assert_true(r.outputs[0].max_abs == 1 && r.outputs[0].ref_max == 2);
	assert_true(r.outputs[0].max_rel == 0.5);
	assert_int_equal(r.outputs[0].rank, 2);
	assert_true(r.outputs[0].dims[0] == 1 && r.outputs[0].dims[1] == 3);
	assert_true(r.outputs[0].dims_max[0] == 1 && r.outputs[0].dims_max[1] == 3);
	assert_non_null(strstr(r.how, "N=1 (given)"));
	/* the failing run's inputs come back, in the model's input order */
	assert_int_equal(r.nfailed_inputs, 2);
	assert_string_equal(r.failed_input_names[1], "ids");
	assert_memory_equal(r.failed_inputs[0].data, given_x, sizeof given_x);
	om_check_report_free(&r);
	/* on random inputs too, and in every run */
	o = (om_check_options){.runs = 2};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_false(r.passed);
	assert_int_equal(r.failed_run, 0);
	om_check_report_free(&r);
	om_model_free(s);
	om_model_free(m);
}

static void bisect_names_the_pass_and_the_node(void **state)
{
	(void)state;
	om_model *m = make_model(16);
	const char *names[2];
	om_tensor t[2];
	om_check_options o = given(names, t);
	/* after eliminate_identities, h = MatMul(x, W) is the first value that differs: [1,1,1]
	 * against [1,2,2]; by the end of round 1 fuse_matmul_add has made MatMul + Add a Gemm
	 * (named after the Add), so after eliminate_dead it is s: [2,2,2] against [2,3,3] */
	static const struct {
		const char *pass, *value, *node, *op, *ref_op;
		double ref_max;
	} want[] = {{"eliminate_identities", "h", "mm", "MatMul", "MatMul", 1},
		    {"eliminate_dead", "s", "add", "Gemm", "Add", 2}};
	for (int k = 0; k < 2; k++) {
		om_bisect_report r;
		om_status st = {0};
		assert_int_equal(om_bisect_with_break(m, NULL, want[k].pass, &o, &r, &st), OM_OK);
		assert_true(r.found);
		assert_string_equal(r.pass, want[k].pass);
		assert_int_equal(r.round, 1);
		assert_true(r.steps >= 1);
		assert_string_equal(r.first.name, want[k].value);
		assert_string_equal(r.first.node, want[k].node);
		assert_string_equal(r.first.op, want[k].op);
		assert_string_equal(r.first.ref_node, want[k].node);
		assert_string_equal(r.first.ref_op, want[k].ref_op);
		assert_int_equal(r.first.state, OM_DIFF_OVER);
		assert_true(r.first.max_abs == 1 && r.first.ref_max == want[k].ref_max);
		assert_string_equal(r.error, "");
	}
	/* nothing to find in a correct pipeline */
	om_bisect_report r;
	om_status st = {0};
	assert_int_equal(om_bisect(m, NULL, &o, &r, &st), OM_OK);
	assert_false(r.found);
	/* a pass that does not exist, or is skipped */
	assert_int_equal(om_bisect_with_break(m, NULL, "no_such_pass", &o, &r, &st),
			 OM_ERR_INVALID_INPUT);
	const char *skip[] = {"fold_constants", NULL};
	const om_simplify_options skipping = {.skip = skip};
	assert_int_equal(om_bisect_with_break(m, &skipping, "fold_constants", &o, &r, &st),
			 OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

static void compare_lists_every_shared_value(void **state)
{
	(void)state;
	om_model *m = make_model(16), *s = simplified(m, "eliminate_identities");
	const char *names[2];
	om_tensor t[2];
	om_check_options o = given(names, t);
	om_compare_report r;
	om_status st = {0};
	assert_int_equal(om_compare(m, s, &o, &r, &st), OM_OK);
	/* y went with the Identity and h into the Gemm (MatMul + Add, named "add"); e, s and out
	 * remain, in the original's order */
	assert_int_equal(tu_count_op(s->graph, "Gemm"), 1);
	assert_int_equal(r.n, 3);
	static const char *const want[3] = {"e", "s", "out"};
	static const int states[3] = {OM_DIFF_OK, OM_DIFF_OVER, OM_DIFF_OVER};
	for (int i = 0; i < 3; i++) {
		assert_string_equal(r.values[i].name, want[i]);
		assert_int_equal(r.values[i].state, states[i]);
	}
	assert_int_equal(r.first_over, 1);
	assert_true(r.values[0].max_abs == 0);
	assert_true(r.values[1].max_abs == 1 && r.values[1].ref_max == 2);
	assert_string_equal(r.values[1].node, "add");
	assert_string_equal(r.values[1].op, "Gemm");
	assert_string_equal(r.values[1].ref_op, "Add");
	assert_true(r.values[2].max_abs == 1 && r.values[2].max_rel == 0.5);
	om_compare_report_free(&r);
	/* a model against itself: all equal */
	assert_int_equal(om_compare(m, m, &o, &r, &st), OM_OK);
	assert_int_equal(r.first_over, -1);
	assert_int_equal(r.n, 5);
	om_compare_report_free(&r);
	om_model_free(s);
	om_model_free(m);
}

/* E of 2 rows: ids in [0,16) are out of range, so the check takes them in [0,2) */
static void small_tables_get_small_integers(void **state)
{
	(void)state;
	om_model *m = make_model(2), *s = simplified(m, NULL);
	om_check_options o = {.runs = 2};
	om_check_report r;
	om_status st = {0};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_non_null(strstr(r.how, "integers in [0,2)"));
	om_check_report_free(&r);
	om_model_free(s);
	om_model_free(m);
}

/* img:[N,3,H,W] -> Sub(img, c) -> MaxPool: H and W are an image's height and width, 32 v from
 * the first run; seq:[N,3,L] -> Relu: L stays small (1 + (run + k) % 4) */
static void image_dims_get_image_sizes(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *img = tu_typed_value(g, "img", OM_FLOAT, 4, (int64_t[]){-1, 3, -1, -1});
	om_value *seq = tu_typed_value(g, "seq", OM_FLOAT, 3, (int64_t[]){-1, 3, -1});
	img->type.dims[2].param = "H";
	img->type.dims[3].param = "W";
	seq->type.dims[2].param = "L";
	img->flags |= OM_VALUE_GRAPH_INPUT;
	seq->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, img);
	tu_push_value(g, &g->inputs, &g->ninputs, seq);
	init_ones(m, "c", 1, 1);
	tu_graph_node(g, "Sub", "img,c", "centred");
	tu_attr_ints(tu_graph_node(g, "MaxPool", "centred", "pooled"), "kernel_shape", 2,
		     (int64_t[]){2, 2});
	tu_graph_node(g, "Relu", "seq", "r");
	const char *outs[] = {"pooled", "r"};
	for (int i = 0; i < 2; i++) {
		om_value *o = om_graph_value(g, outs[i]);
		o->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(g, &g->outputs, &g->noutputs, o);
	}
	om_check_options o = {.runs = 2};
	om_check_report r;
	om_status st = {0};
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	/* symbols in declaration order: N (batch), H, W, L */
	if (!strstr(r.how, "N=1 H=64 W=96 L=4") || !strstr(r.how, "N=2 H=96 W=128 L=1"))
		fail_msg("inputs: %s", r.how);
	om_check_report_free(&r);
	om_model_free(m);
}

static void given_inputs_are_checked(void **state)
{
	(void)state;
	om_model *m = make_model(16);
	const char *names[2];
	om_tensor t[2];
	om_check_options o = given(names, t);
	om_check_report r;
	om_status st = {0};
	/* ids of 3 rows and x of 1 disagree about N */
	t[1].dims[0] = 3;
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "'N'"));
	om_check_report_free(&r);
	t[1].dims[0] = 1;
	names[1] = "nope";
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "nope"));
	om_check_report_free(&r);
	names[1] = "ids";
	t[0].dtype = OM_DOUBLE;
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "double"));
	om_check_report_free(&r);
	/* every input given: one run however many are asked for (the others would repeat it);
	 * x alone given: ids random, three runs */
	t[0].dtype = OM_FLOAT;
	o.runs = 3;
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_int_equal(r.runs, 1);
	om_check_report_free(&r);
	o.ninputs = 1;
	assert_int_equal(om_check(m, m, &o, &r, &st), OM_OK);
	assert_int_equal(r.runs, 3);
	om_check_report_free(&r);
	om_model_free(m);
}

/* A second model omopt cannot run (an op of an unknown domain) fails the check, not the call. */
static void a_model_that_cannot_run_fails_the_check(void **state)
{
	(void)state;
	om_model *m = make_model(16), *b = make_model(16);
	for (int32_t i = 0; i < b->graph->nnodes; i++)
		if (!strcmp(b->graph->nodes[i]->op, "Relu"))
			b->graph->nodes[i]->domain = "com.example";
	om_check_options o = {.runs = 2};
	om_check_report r;
	om_status st = {0};
	assert_int_equal(om_check(m, b, &o, &r, &st), OM_OK);
	assert_false(r.passed);
	assert_int_equal(r.failed_run, 0);
	assert_int_equal(r.runs, 2);
	assert_int_equal(r.outputs[0].state, OM_DIFF_MISSING);
	assert_non_null(strstr(r.error, "relu"));
	om_check_report_free(&r);
	om_model_free(b);
	om_model_free(m);
}

/* The same seed gives the same inputs; another seed other ones. */
static void seeds_repeat(void **state)
{
	(void)state;
	om_model *m = make_model(16), *s = simplified(m, "eliminate_identities");
	double got[3];
	const uint64_t seeds[3] = {7, 7, 8};
	for (int k = 0; k < 3; k++) {
		om_check_options o = {.runs = 1, .seed = seeds[k]};
		om_check_report r;
		om_status st = {0};
		assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
		got[k] = r.outputs[0].max_abs;
		om_check_report_free(&r);
	}
	assert_true(got[0] == got[1] && got[0] != got[2]);
	om_model_free(s);
	om_model_free(m);
}

/* The shared real models: the simplified models give the original outputs (max rel <= 1e-5),
 * and a broken pass is named with its node. */
static void shared_models(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared)
		skip(); /* ../shared/models (gpt_tiny_dyn, silero_op15) is not there */
	static const char *const names[] = {"gpt_tiny_dyn", "silero_op15"};
	for (int k = 0; k < 2; k++) {
		char path[512];
		snprintf(path, sizeof path, "%s/models/%s/model.onnx", shared, names[k]);
		om_model *m = NULL, *s = NULL;
		om_status st = {0};
		assert_int_equal(om_model_load(path, &m, &st), OM_OK);
		assert_int_equal(om_model_load(path, &s, &st), OM_OK);
		assert_int_equal(om_simplify(s, NULL, &st), OM_OK);
		om_check_options o = {.runs = 3};
		om_check_report r;
		assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
		assert_true(r.passed);
		for (int i = 0; i < r.noutputs; i++)
			assert_true(r.outputs[i].max_rel <= 1e-5);
		om_check_report_free(&r);
		om_model_free(s);
		om_model_free(m);
	}
	char path[512];
	snprintf(path, sizeof path, "%s/models/gpt_tiny_dyn/model.onnx", shared);
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), OM_OK);
	om_check_options o = {.runs = 1};
	om_bisect_report r;
	assert_int_equal(om_bisect_with_break(m, NULL, "fuse_matmul_add", &o, &r, &st), OM_OK);
	assert_true(r.found);
	assert_string_equal(r.pass, "fuse_matmul_add");
	assert_string_equal(r.first.node, "/blocks.0/qkv/MatMul");
	assert_string_equal(r.first.name, "/blocks.0/qkv/MatMul_output_0");
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(check_passes_on_random_inputs),
		cmocka_unit_test(check_catches_the_broken_pass),
		cmocka_unit_test(bisect_names_the_pass_and_the_node),
		cmocka_unit_test(compare_lists_every_shared_value),
		cmocka_unit_test(small_tables_get_small_integers),
		cmocka_unit_test(image_dims_get_image_sizes),
		cmocka_unit_test(given_inputs_are_checked),
		cmocka_unit_test(a_model_that_cannot_run_fails_the_check),
		cmocka_unit_test(seeds_repeat),
		cmocka_unit_test(shared_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
