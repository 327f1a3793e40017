/* test_overridable.c — overridable initializers (issue 35): a main-graph input that has an
 * initializer in an IR >= 4 model is optional, the initializer its default. The session lists
 * it after the required inputs (om_session_overridable_count), runs it unfed or fed, checks a
 * feed like any input's and never folds through it; om_optimize and om_simplify keep it an
 * input; omopt run feeds it by --input NAME=FILE. Values: ONNX Runtime 1.30's on
 * tests/overridable (tests/gen_cases_overridable.py says how they were made). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir.h"
#include "omopt.h"
#include "session.h"
#include "testutil.h"

static const char *case_path(const char *name)
{
	static char buf[4][1024];
	static int turn;
	char *b = buf[turn++ % 4];
	snprintf(b, sizeof buf[0], "%s", tu_source_path("tests/overridable"));
	size_t n = strlen(b);
	snprintf(b + n, sizeof buf[0] - n, "/%s", name);
	return b;
}

static om_tensor npy(const char *name)
{
	om_tensor t;
	om_status st;
	assert_int_equal(om_tensor_read_file(case_path(name), &t, &st), OM_OK);
	return t;
}

static om_model *load(const char *name)
{
	om_model *m = NULL;
	om_status st;
	assert_int_equal(om_model_load(case_path(name), &m, &st), OM_OK);
	return m;
}

/* got equals ONNX Runtime's <prefix>_<out>.npy within float rounding */
static void assert_ort(const om_tensor *got, const char *prefix, const char *out)
{
	char name[64];
	snprintf(name, sizeof name, "%s_%s.npy", prefix, out);
	om_tensor want = npy(name);
	assert_int_equal(got->dtype, OM_FLOAT);
	assert_int_equal(got->rank, want.rank);
	for (int32_t d = 0; d < want.rank; d++)
		assert_int_equal(got->dims[d], want.dims[d]);
	const float *g = got->data, *w = want.data;
	for (int64_t i = 0; i < om_tensor_numel(&want); i++) {
		const float tol = 1e-5f * (1.0f + (w[i] < 0 ? -w[i] : w[i]));
		if (!(g[i] - w[i] <= tol && w[i] - g[i] <= tol))
			fail_msg("%s element %lld: %g, ONNX Runtime %g", name, (long long)i,
				 (double)g[i], (double)w[i]);
	}
	om_tensor_free(&want);
}

/* runs s on n of in[] and checks Y and Z against ONNX Runtime's <prefix> outputs */
static void run_ort(om_session *s, const om_tensor *in, int n, const char *prefix)
{
	om_tensor out[2] = {0};
	om_status st;
	if (om_session_run(s, in, n, out, 2, &st))
		fail_msg("%s: %s", prefix, st.msg);
	assert_ort(&out[0], prefix, "y");
	assert_ort(&out[1], prefix, "z");
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
}

/* a run that fails with kind, leaving its outputs zeroed */
static void run_fails(om_session *s, const om_tensor *in, int n, om_kind kind, const char *msg)
{
	om_tensor out[2];
	memset(out, 0x5a, sizeof out);
	om_status st;
	assert_int_equal(om_session_run(s, in, n, out, 2, &st), kind);
	if (!strstr(st.msg, msg))
		fail_msg("'%s' does not say '%s'", st.msg, msg);
	assert_null(out[0].data);
	assert_null(out[1].data);
}

/* the names and declarations the session lists, and the runs: unfed, W fed, W and B fed, and
 * unfed again (nothing of a feed stays behind) */
static void check_session(om_model *m)
{
	om_session *s = tu_session_create(m);
	assert_int_equal(om_session_input_count(s), 1);
	assert_int_equal(om_session_overridable_count(s), 2);
	assert_string_equal(om_session_input_name(s, 0), "X");
	assert_string_equal(om_session_input_name(s, 1), "W");
	assert_string_equal(om_session_input_name(s, 2), "B");
	assert_null(om_session_input_name(s, 3));
	om_io_info io;
	om_status st;
	assert_int_equal(om_session_input_info(s, 0, &io, &st), OM_OK);
	assert_int_equal(io.has_initializer, 0);
	assert_int_equal(om_session_input_info(s, 1, &io, &st), OM_OK);
	assert_int_equal(io.has_initializer, 1);
	assert_int_equal(io.elem, OM_FLOAT);
	assert_int_equal(io.rank, 2);
	assert_int_equal(io.dims[0], 3);
	assert_int_equal(io.dims[1], 4);
	assert_int_equal(om_session_input_info(s, 3, &io, &st), OM_ERR_INVALID_INPUT);
	/* W * C is not folded at plan time: W is not a constant */
	int muls = 0;
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		if (!strcmp(ni.node->op, "Mul")) {
			muls++;
			assert_false(ni.folded);
		}
	}
	assert_int_equal(muls, 1);

	om_tensor in[3] = {npy("x.npy"), npy("w.npy"), npy("b.npy")};
	om_tensor unset[3] = {in[0], {0}, {0}};
	om_tensor only_w[3] = {in[0], in[1], {0}};
	run_ort(s, in, 1, "default");
	run_ort(s, unset, 3, "default");
	run_ort(s, only_w, 3, "override_w");
	run_ort(s, in, 3, "override_wb");
	run_ort(s, in, 1, "default");
	run_fails(s, in, 2, OM_ERR_INVALID_INPUT,
		  "2 inputs given, graph 'overridable' has 1 (and 2 overridable initializers)");
	run_fails(s, in, 0, OM_ERR_INVALID_INPUT, "0 inputs given");

	/* a feed is checked against the input's declaration like any input */
	double wd[12] = {0};
	om_tensor bad = {.dtype = OM_DOUBLE, .rank = 2, .dims = {3, 4}, .data = wd,
			 .nbytes = sizeof wd};
	om_tensor with_bad[3] = {in[0], bad, {0}};
	run_fails(s, with_bad, 3, OM_ERR_INVALID_INPUT, "element type double");
	with_bad[1] = in[1];
	with_bad[1].dims[0] = 4, with_bad[1].dims[1] = 3; /* same bytes, wrong shape */
	run_fails(s, with_bad, 3, OM_ERR_INVALID_INPUT, "extent 4 on axis 0");
	with_bad[1] = in[1];
	with_bad[1].rank = 1, with_bad[1].dims[0] = 12;
	run_fails(s, with_bad, 3, OM_ERR_INVALID_INPUT, "rank 1");
	with_bad[1] = in[1];
	with_bad[1].nbytes = 8; /* fewer bytes than its shape needs */
	run_fails(s, with_bad, 3, OM_ERR_INVALID_INPUT, "bytes");
	with_bad[1] = in[1];
	with_bad[2] = in[1]; /* W's tensor for B */
	run_fails(s, with_bad, 3, OM_ERR_INVALID_INPUT, "input 'B' has rank 2");
	/* a required input is never "unset" */
	om_tensor no_x[3] = {{0}, in[1], in[2]};
	run_fails(s, no_x, 3, OM_ERR_INVALID_INPUT, "input 'X'");
	run_ort(s, in, 3, "override_wb"); /* the session is still whole */
	for (int i = 0; i < 3; i++)
		om_tensor_free(&in[i]);
	om_session_free(s);
}

static void test_session(void **state)
{
	(void)state;
	om_model *m = load("model.onnx");
	check_session(m);
	om_model_free(m);
}

/* om_optimize and om_simplify keep W and B inputs with their initializers (names, types) and
 * fold nothing through them: the rewritten model's runs are ONNX Runtime's (ONNX Runtime's
 * basic level keeps them too, Mul(W, C) unfolded) */
static void test_rewritten(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		om_model *m = load("model.onnx");
		om_status st;
		assert_int_equal(k ? om_optimize(m, NULL, &st) : om_simplify(m, NULL, &st), OM_OK);
		om_model *r = tu_reload(m);
		const om_graph *g = r->graph;
		assert_int_equal(g->ninputs, 3);
		for (int i = 1; i < 3; i++) {
			const om_value *v = g->inputs[i];
			assert_string_equal(v->name, i == 1 ? "W" : "B");
			assert_non_null(v->init);
			assert_true(v->flags & OM_VALUE_INITIALIZER);
			assert_int_equal(v->type.elem, OM_FLOAT);
			assert_int_equal(v->type.rank, i == 1 ? 2 : 1);
		}
		assert_int_equal(tu_count_op(g, "Mul"), 1);
		check_session(r);
		om_model_free(r);
		om_model_free(m);
	}
}

/* IR 3: every initializer is listed as an input and is a constant (ONNX Runtime lists none of
 * them as an input or an overridable initializer and folds through them at its basic level) */
static void test_ir3(void **state)
{
	(void)state;
	om_model *m = load("model_ir3.onnx");
	om_session *s = tu_session_create(m);
	assert_int_equal(om_session_input_count(s), 1);
	assert_int_equal(om_session_overridable_count(s), 0);
	assert_null(om_session_input_name(s, 1));
	om_tensor in[3] = {npy("x.npy"), npy("w.npy"), npy("b.npy")};
	run_ort(s, in, 1, "ir3");
	run_fails(s, in, 3, OM_ERR_INVALID_INPUT, "3 inputs given");
	for (int i = 0; i < 3; i++)
		om_tensor_free(&in[i]);
	om_session_free(s);
	om_model_free(m);
}

/* an initializer that does not fit its input's declaration (the plan shapes W's readers by the
 * declaration) is the model's fault, found when a run takes the default; a feed of the
 * declared shape still runs */
static void test_default_misfit(void **state)
{
	(void)state;
	om_model *m = load("model.onnx");
	om_value *w = m->graph->inputs[1];
	assert_string_equal(w->name, "W");
	w->init->dims[1] = 2; /* declared [3, 4], the initializer now [3, 2] */
	om_session *s = tu_session_create(m);
	om_tensor in[2] = {npy("x.npy"), npy("w.npy")};
	run_fails(s, in, 1, OM_ERR_INVALID_MODEL,
		  "the initializer of input 'W' does not fit the input's declaration: input 'W' "
		  "has extent 2 on axis 1, the model expects 4");
	om_tensor out[2] = {0};
	om_status st;
	om_tensor fed[3] = {in[0], in[1], {0}};
	assert_int_equal(om_session_run(s, fed, 3, out, 2, &st), OM_OK);
	assert_ort(&out[0], "override_w", "y");
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	om_tensor_free(&in[0]);
	om_tensor_free(&in[1]);
	om_session_free(s);
	om_model_free(m);
}

/* omopt run: --input W=FILE overrides, W left out takes the initializer, a wrong dtype is
 * InvalidInput, C (a plain initializer) and IR 3's W are no inputs */
static void test_cli(void **state)
{
	(void)state;
	char dir[256], out[4096], err[4096], args[8192], model[1024], ir3[1024], cases[1024];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_overridable_cli"), 0);
	snprintf(model, sizeof model, "%s", case_path("model.onnx"));
	snprintf(ir3, sizeof ir3, "%s", case_path("model_ir3.onnx"));
	snprintf(cases, sizeof cases, "%s", case_path(""));
	const struct {
		const char *feeds, *prefix;
	} runs[] = {
		{"", "default"},
		{"--input W=%sw.npy", "override_w"},
		{"--input W=%sw.npy --input B=%sb.npy", "override_wb"},
	};
	for (size_t r = 0; r < sizeof runs / sizeof *runs; r++) {
		char feeds[4096];
		snprintf(feeds, sizeof feeds, runs[r].feeds, cases, cases);
		snprintf(args, sizeof args,
			 "run %s --input X=%sx.npy %s --output-dir out%zu --output-format npy",
			 model, cases, feeds, r);
		if (tu_run_omopt(dir, args, out, sizeof out, err, sizeof err))
			fail_msg("omopt %s: %s", args, err);
		char name[64];
		om_status st;
		for (int o = 0; o < 2; o++) {
			om_tensor t;
			snprintf(name, sizeof name, "out%zu/output_%d.npy", r, o);
			assert_int_equal(om_tensor_read_file(tu_join(dir, name), &t, &st), OM_OK);
			assert_ort(&t, runs[r].prefix, o ? "z" : "y");
			om_tensor_free(&t);
		}
	}
	om_tensor w = npy("w.npy");
	om_tensor wd = {.dtype = OM_DOUBLE, .rank = 2, .dims = {3, 4}};
	om_status st;
	assert_int_equal(om_tensor_alloc(&wd, OM_DOUBLE, 2, wd.dims, &st), OM_OK);
	assert_int_equal(om_tensor_write_file(tu_join(dir, "wd.npy"), &wd, "W", &st), OM_OK);
	om_tensor_free(&wd);
	om_tensor_free(&w);
	snprintf(args, sizeof args, "run %s --input X=%sx.npy --input W=wd.npy --output-dir bad",
		 model, cases);
	assert_int_not_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "input 'W' has element type double"));
	snprintf(args, sizeof args, "run %s --input X=%sx.npy --input C=%sw.npy --output-dir bad",
		 model, cases, cases);
	assert_int_not_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "no input 'C' (its inputs: X, W, B)"));
	snprintf(args, sizeof args, "run %s --input X=%sx.npy --input W=%sw.npy --output-dir bad",
		 ir3, cases, cases);
	assert_int_not_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "no input 'W' (its inputs: X)"));
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_rewritten),
		cmocka_unit_test(test_ir3),
		cmocka_unit_test(test_default_misfit),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
