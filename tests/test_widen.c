/* test_widen.c — om_convert_dtype to OM_FLOAT (`omopt simplify --dtype fp32`, issue 36): a half
 * model's compute back in float32 (passes/half_convert.c's om_half_widen). A float32 model
 * made float16 and widened again matches the original within float16's tolerance; a model
 * float16 from the start (tests/widen, tests/gen_cases_widen.py) widens to float32
 * compute with its float16 interface kept and matches ONNX Runtime 1.30 on the original. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "testutil.h"

static const char *case_path(const char *name)
{
	static char buf[1024];
	snprintf(buf, sizeof buf, "%s/%s", tu_source_path("tests/widen"), name);
	return buf;
}

static om_model *load(const char *name)
{
	om_model *m = NULL;
	om_status st;
	if (om_model_load(case_path(name), &m, &st))
		fail_msg("%s: %s", name, st.msg);
	return m;
}

/* elements of type elem among m's main-graph initializers, and Casts to elem */
static void count_type(const om_model *m, int32_t elem, int *inits, int *casts)
{
	*inits = *casts = 0;
	const om_graph *g = m->graph;
	for (int32_t i = 0; i < g->ninits; i++)
		*inits += g->inits[i]->init && g->inits[i]->init->dtype == elem;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (strcmp(n->op, "Cast"))
			continue;
		for (int32_t a = 0; a < n->nattr; a++)
			*casts += !strcmp(n->attrs[a].name, "to") && n->attrs[a].i == elem;
	}
}

static void convert(om_model *m, int32_t dtype, int *converted)
{
	om_dtype_options o = {.dtype = dtype, .no_measure = 1};
	om_dtype_report rep;
	om_status st;
	if (om_convert_dtype(m, &o, &rep, &st))
		fail_msg("to %s: %s", om_dtype_name(dtype), st.msg);
	assert_int_equal(rep.unchanged, 0);
	*converted = rep.converted;
	om_dtype_report_free(&rep);
}

/* runs m on one input; the output as float32 values (malloc'd, n of them) */
static float *run_one(const om_model *m, const om_tensor *x, int64_t *n, int32_t *dtype)
{
	om_session *s = tu_session_create(m);
	om_tensor y = {0};
	om_status st;
	if (om_session_run(s, x, 1, &y, 1, &st))
		fail_msg("run: %s", st.msg);
	*n = om_tensor_numel(&y);
	*dtype = y.dtype;
	float *v = malloc(sizeof *v * (size_t)(*n + 1));
	assert_non_null(v);
	for (int64_t i = 0; i < *n; i++)
		v[i] = y.dtype == OM_FLOAT ? ((const float *)y.data)[i]
					   : om_half_to_float(((const uint16_t *)y.data)[i]);
	om_tensor_free(&y);
	om_session_free(s);
	return v;
}

static void assert_close(const float *got, const float *want, int64_t n, float rtol, float atol)
{
	for (int64_t i = 0; i < n; i++)
		if (!(fabsf(got[i] - want[i]) <= atol + rtol * fabsf(want[i])))
			fail_msg("element %lld: %g, want %g", (long long)i, (double)got[i],
				 (double)want[i]);
}

/* float32 -> float16 -> float32: weights and compute float32 again, no Cast left, the
 * interface float32 throughout; outputs within float16's rounding of the original's */
static void test_round_trip(void **state)
{
	(void)state;
	om_model *orig = load("model_fp32.onnx"), *m = load("model_fp32.onnx");
	int conv = 0, inits = 0, casts = 0;
	convert(m, OM_FLOAT16, &conv);
	assert_int_equal(conv, 5);
	count_type(m, OM_FLOAT16, &inits, &casts);
	assert_int_equal(inits, 3);
	assert_int_equal(casts, 1); /* the input's */
	om_model *half = tu_reload(m);
	convert(half, OM_FLOAT, &conv);
	assert_true(conv >= 5); /* the 5 nodes and the Casts at the interface */
	count_type(half, OM_FLOAT16, &inits, &casts);
	assert_int_equal(inits + casts, 0);
	count_type(half, OM_FLOAT, &inits, &casts);
	assert_int_equal(inits, 3);
	assert_int_equal(casts, 0); /* float to float Casts went (eliminate_identities) */
	assert_int_equal(tu_count_op(half->graph, "Cast"), 0);
	assert_int_equal(half->graph->nnodes, 5);
	om_model *back = tu_reload(half);
	assert_int_equal(back->graph->inputs[0]->type.elem, OM_FLOAT);
	assert_int_equal(back->graph->outputs[0]->type.elem, OM_FLOAT);

	float xv[16];
	tu_fill(xv, 16, 5, 2.0f);
	om_tensor x = {.dtype = OM_FLOAT, .rank = 2, .dims = {2, 8}, .data = xv,
		       .nbytes = sizeof xv};
	int64_t n1, n2;
	int32_t t1, t2;
	float *want = run_one(orig, &x, &n1, &t1), *got = run_one(back, &x, &n2, &t2);
	assert_int_equal(n1, 8);
	assert_int_equal(n2, 8);
	assert_int_equal(t2, OM_FLOAT);
	assert_close(got, want, n1, 1e-2f, 1e-3f);
	free(want);
	free(got);
	om_model_free(back);
	om_model_free(half);
	om_model_free(m);
	om_model_free(orig);
}

/* float16 from the start: its float16 initializers become float, the Cast to float16 inside
 * computes float, X and Y stay float16 (as --dtype fp16 keeps the interface float32); the
 * result is ONNX Runtime's on the float16 model within float16's tolerance */
static void test_fp16_model(void **state)
{
	(void)state;
	om_model *m = load("model_fp16.onnx");
	int conv = 0, inits = 0, casts = 0;
	convert(m, OM_FLOAT, &conv);
	count_type(m, OM_FLOAT16, &inits, &casts);
	assert_int_equal(inits, 0);
	assert_int_equal(casts, 1); /* Y's: the interface stays float16 */
	count_type(m, OM_FLOAT, &inits, &casts);
	assert_int_equal(inits, 3);
	assert_int_equal(casts, 1); /* X's */
	om_model *r = tu_reload(m);
	assert_int_equal(r->graph->inputs[0]->type.elem, OM_FLOAT16);
	assert_int_equal(r->graph->outputs[0]->type.elem, OM_FLOAT16);
	assert_int_equal(tu_count_op(r->graph, "Cast"), 2);
	om_tensor x, want;
	om_status st;
	assert_int_equal(om_tensor_read_file(case_path("x.npy"), &x, &st), OM_OK);
	assert_int_equal(om_tensor_read_file(case_path("ort_y.npy"), &want, &st), OM_OK);
	assert_int_equal(want.dtype, OM_FLOAT16);
	int64_t n;
	int32_t t;
	float *got = run_one(r, &x, &n, &t);
	assert_int_equal(t, OM_FLOAT16);
	assert_int_equal(n, om_tensor_numel(&want));
	float wv[8];
	for (int64_t i = 0; i < n && i < 8; i++)
		wv[i] = om_half_to_float(((const uint16_t *)want.data)[i]);
	assert_close(got, wv, n, 1e-2f, 1e-3f);
	free(got);
	om_tensor_free(&x);
	om_tensor_free(&want);
	om_model_free(r);
	om_model_free(m);
}

/* omopt simplify --dtype fp32: converts and checks against the model as given */
static void test_cli(void **state)
{
	(void)state;
	char dir[256], out[8192], err[4096], args[4096];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_widen_cli"), 0);
	snprintf(args, sizeof args, "simplify %s w.onnx --dtype fp32",
		 case_path("model_fp16.onnx"));
	if (tu_run_omopt(dir, args, out, sizeof out, err, sizeof err))
		fail_msg("omopt %s: %s %s", args, out, err);
	assert_non_null(strstr(out, "nodes in float32, 0 kept in its half type"));
	assert_non_null(strstr(out, "dtype: float32 against the model as given"));
	om_model *m = NULL;
	om_status st;
	assert_int_equal(om_model_load(tu_join(dir, "w.onnx"), &m, &st), OM_OK);
	int inits, casts;
	count_type(m, OM_FLOAT16, &inits, &casts);
	assert_int_equal(inits, 0);
	om_model_free(m);
	snprintf(args, sizeof args, "simplify %s w.onnx --dtype fp64",
		 case_path("model_fp16.onnx"));
	assert_int_not_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "--dtype wants fp16, bf16 or fp32, got 'fp64'"));
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_fp16_model),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
