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

/* tests/overridable/model.onnx (tests/gen_cases_overridable.py): X [N,3], W [3,4] and B [4]
 * inputs with initializers (IR 8: overridable), C [3,4] a plain initializer;
 * Y = Relu(X (W * C) + B), Z = ReduceMax(W * C, axis 0). */
static om_model *load_overridable(void)
{
	char path[1024];
	snprintf(path, sizeof path, "%s/model.onnx", tu_source_path("tests/overridable"));
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), OM_OK);
	assert_int_equal(m->ir_version >= 4, 1);
	return m;
}

static const float *init_data(const om_model *m, const char *name)
{
	for (int32_t i = 0; i < m->graph->ninits; i++)
		if (!strcmp(m->graph->inits[i]->name, name))
			return m->graph->inits[i]->init->data;
	fail_msg("no initializer %s", name);
	return NULL;
}

static const om_tensor *fed(const om_check_report *r, const char *name)
{
	for (int i = 0; i < r->nfailed_inputs; i++)
		if (!strcmp(r->failed_input_names[i], name))
			return &r->failed_inputs[i];
	return NULL;
}

/* Z = max over rows of W * C, by hand */
static void reduce_wc(const float *w, const float *c, float z[4])
{
	for (int j = 0; j < 4; j++) {
		z[j] = w[j] * c[j];
		for (int i = 1; i < 3; i++)
			z[j] = fmaxf(z[j], w[4 * i + j] * c[4 * i + j]);
	}
}

/* An IR >= 4 model's overridable initializers (W, B) take their defaults in run 1 and random
 * values of their declared type and shape in run 2; with every required input (X) given the
 * check makes those two runs, with W given too one overriding B, with all given one. A second
 * model that folded W * C (the same model with W and B plain initializers) agrees at the
 * defaults and differs in run 2 by what the hand computation on the fed W says. */
static void overridable_initializers_are_fed(void **state)
{
	(void)state;
	om_model *m = load_overridable(), *s = load_overridable(), *folded = load_overridable();
	om_status st = {0};
	assert_int_equal(om_simplify(s, NULL, &st), OM_OK);
	int32_t k = 0; /* W and B constants: initializers, no longer inputs */
	for (int32_t i = 0; i < folded->graph->ninputs; i++) {
		om_value *v = folded->graph->inputs[i];
		if (v->init)
			v->flags &= ~OM_VALUE_GRAPH_INPUT;
		else
			folded->graph->inputs[k++] = v;
	}
	folded->graph->ninputs = k;
	assert_int_equal(om_simplify(folded, NULL, &st), OM_OK);
	assert_int_equal(tu_count_op(s->graph, "Mul"), 1);
	assert_int_equal(tu_count_op(folded->graph, "Mul"), 0);
	om_check_report r;
	om_check_options o = {.runs = 1};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_int_equal(r.runs, 2); /* one asked for, and one overriding */
	assert_non_null(strstr(r.how, "run 1: N=1; random floats N(0,1), integers in [0,16); "
				      "run 2: N=2; random floats N(0,1), integers in [0,16), "
				      "overridable initializers W, B"));
	om_check_report_free(&r);

	o.runs = 3;
	assert_int_equal(om_check(m, folded, &o, &r, &st), OM_OK);
	assert_false(r.passed);
	assert_int_equal(r.runs, 3);
	assert_int_equal(r.failed_run, 1);
	assert_int_equal(r.noutputs, 2);
	assert_string_equal(r.outputs[1].name, "Z");
	const om_tensor *w = fed(&r, "W"), *b = fed(&r, "B"), *x = fed(&r, "X");
	assert_non_null(w);
	assert_non_null(b);
	assert_non_null(x);
	assert_int_equal(w->dtype, OM_FLOAT);
	assert_true(w->rank == 2 && w->dims[0] == 3 && w->dims[1] == 4);
	assert_true(b->rank == 1 && b->dims[0] == 4);
	const float *c = init_data(m, "C"), *w0 = init_data(m, "W");
	float zfed[4], zdef[4];
	reduce_wc(w->data, c, zfed);
	reduce_wc(w0, c, zdef);
	double want = 0, ref = 0;
	for (int j = 0; j < 4; j++) {
		want = fmax(want, fabs((double)zfed[j] - zdef[j]));
		ref = fmax(ref, fabs((double)zfed[j]));
	}
	assert_true(want > 0.1); /* the fed W is not the default */
	assert_true(fabs(r.outputs[1].max_abs - want) <= 1e-6 * (1 + want));
	assert_true(fabs(r.outputs[1].ref_max - ref) <= 1e-6 * (1 + ref));
	om_check_report_free(&r);

	/* given inputs: X alone, two runs; X and W, B still overridden in run 2; all, one run */
	const float xv[6] = {1, 2, 3, -1, 0, 1}, wv[12] = {0}, bv[4] = {1, 2, 3, 4};
	const char *names[3] = {"X", "W", "B"};
	om_tensor t[3] = {
		{.dtype = OM_FLOAT, .rank = 2, .dims = {2, 3}, .data = (void *)xv,
		 .nbytes = sizeof xv},
		{.dtype = OM_FLOAT, .rank = 2, .dims = {3, 4}, .data = (void *)wv,
		 .nbytes = sizeof wv},
		{.dtype = OM_FLOAT, .rank = 1, .dims = {4}, .data = (void *)bv,
		 .nbytes = sizeof bv}};
	o = (om_check_options){.runs = 3, .input_names = names, .inputs = t, .ninputs = 1};
	assert_int_equal(om_check(m, folded, &o, &r, &st), OM_OK);
	assert_int_equal(r.runs, 2);
	assert_int_equal(r.failed_run, 1);
	om_check_report_free(&r);
	o.ninputs = 2;
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_int_equal(r.runs, 2);
	assert_non_null(strstr(r.how, "run 2: N=2 (given); random floats N(0,1), integers in "
				      "[0,16) for overridable initializers B"));
	om_check_report_free(&r);
	/* W = 0 and B given: Y = Relu(B) = B and Z = 0 in both models' one run, but folded's W
	 * is its default */
	o.ninputs = 3;
	assert_int_equal(om_check(m, folded, &o, &r, &st), OM_OK);
	assert_int_equal(r.runs, 1);
	assert_int_equal(r.failed_run, 0);
	assert_true(r.outputs[1].ref_max == 0);
	float z0[4];
	reduce_wc(w0, c, z0);
	double zmax = 0;
	for (int j = 0; j < 4; j++)
		zmax = fmax(zmax, fabs((double)z0[j]));
	assert_true(fabs(r.outputs[1].max_abs - zmax) <= 1e-6 * (1 + zmax));
	om_check_report_free(&r);
	om_model_free(folded);
	om_model_free(s);
	om_model_free(m);
}

/* A model that rejects every random value of its overridable initializer (the target shape of
 * a Reshape: [N,6] to [-1, k] only for k dividing 6N, k = 0 or negative refused or wrong) runs
 * run 2 at the default too, and says so. */
static void rejected_overrides_take_defaults(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = tu_typed_value(g, "x", OM_FLOAT, 2, (int64_t[]){-1, 6});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	om_tensor *t = om_model_tensor(m, OM_INT64, 1, (int64_t[]){3});
	const int64_t shape[3] = {-1, 2, 3};
	memcpy(t->data, shape, sizeof shape);
	om_value *sv = tu_typed_value(g, "shape", OM_INT64, 1, (int64_t[]){3});
	sv->init = t;
	sv->flags |= OM_VALUE_INITIALIZER | OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inits, &g->ninits, sv);
	tu_push_value(g, &g->inputs, &g->ninputs, sv);
	tu_graph_node(g, "Reshape", "x,shape", "y");
	om_value *y = tu_typed_value(g, "y", OM_FLOAT, 3, (int64_t[]){-1, 2, 3});
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_model *s = tu_reload(m);
	om_check_options o = {.runs = 2};
	om_check_report r;
	om_status st = {0};
	assert_int_equal(om_check(m, s, &o, &r, &st), OM_OK);
	assert_true(r.passed);
	assert_int_equal(r.runs, 2);
	assert_non_null(strstr(r.how, "run 2: N=2; random floats N(0,1), integers in [0,16), "
				      "overridable initializers at their defaults "
				      "(random values rejected)"));
	om_check_report_free(&r);
	om_model_free(s);
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
		cmocka_unit_test(overridable_initializers_are_fed),
		cmocka_unit_test(rejected_overrides_take_defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
