/* test_ops_reduce.c — Reduce* (axes as attribute and as input), ArgMax, ArgMin, CumSum,
 * CumProd. */
#include <stdint.h>

#include "half.h"
#include "nodetest.h"

static const int64_t d23[] = {2, 3};
static const float x23[] = {1, 2, 3, 4, 5, 6};

/* Runs a one-input (or input + axes) reduction over float x and checks a float result. */
static void red_f32(const char *op, int64_t opset, int32_t rank, const int64_t *dims,
		    const float *x, const int64_t *axes, int64_t naxes, bool axes_input,
		    int64_t keepdims, int32_t orank, const int64_t *odims, const float *want)
{
	om_model *m;
	om_node *n = nt_node(&m, op, axes_input ? 2 : 1, 1);
	if (keepdims >= 0)
		nt_int(n, "keepdims", keepdims);
	om_tensor tx = nt_tensor(OM_FLOAT, rank, dims, x);
	om_tensor ta = nt_tensor(OM_INT64, 1, (int64_t[]){naxes}, axes);
	if (!axes_input && axes)
		nt_ints(n, "axes", axes, naxes);
	const om_tensor *in[] = {&tx, axes_input && axes ? &ta : NULL};
	om_tensor out[1];
	assert_int_equal(nt_run(n, opset, in, out), OM_OK);
	nt_check_f32(&out[0], orank, odims, want, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void sum_mean_max_min(void **state)
{
	(void)state;
	const int64_t a1[] = {1}, a0[] = {0}, am1[] = {-1};
	red_f32("ReduceSum", 13, 2, d23, x23, a1, 1, true, -1, 2, (int64_t[]){2, 1},
		(float[]){6, 15});
	red_f32("ReduceSum", 11, 2, d23, x23, a1, 1, false, 0, 1, (int64_t[]){2},
		(float[]){6, 15});
	red_f32("ReduceMean", 11, 2, d23, x23, a0, 1, false, 0, 1, (int64_t[]){3},
		(float[]){2.5f, 3.5f, 4.5f});
	red_f32("ReduceMean", 18, 2, d23, x23, a0, 1, true, 1, 2, (int64_t[]){1, 3},
		(float[]){2.5f, 3.5f, 4.5f});
	red_f32("ReduceMax", 18, 2, d23, x23, am1, 1, true, 0, 1, (int64_t[]){2},
		(float[]){3, 6});
	red_f32("ReduceMin", 13, 2, d23, x23, am1, 1, false, 0, 1, (int64_t[]){2},
		(float[]){1, 4});
	/* no axes: everything, keepdims gives [1, 1] */
	red_f32("ReduceProd", 13, 2, d23, x23, NULL, 0, false, -1, 2, (int64_t[]){1, 1},
		(float[]){720});
	red_f32("ReduceSum", 13, 2, d23, x23, NULL, 0, true, 0, 0, NULL, (float[]){21});
}

static void norms_and_logs(void **state)
{
	(void)state;
	const float v[] = {-3, 4, 0, 1, -2, 2};
	const int64_t a1[] = {1};
	red_f32("ReduceL1", 18, 2, d23, v, a1, 1, true, 0, 1, (int64_t[]){2}, (float[]){7, 5});
	red_f32("ReduceL2", 13, 2, d23, v, a1, 1, false, 0, 1, (int64_t[]){2}, (float[]){5, 3});
	red_f32("ReduceSumSquare", 13, 2, d23, v, a1, 1, false, 0, 1, (int64_t[]){2},
		(float[]){25, 9});
	red_f32("ReduceLogSum", 13, 2, d23, x23, a1, 1, false, 0, 1, (int64_t[]){2},
		(float[]){1.79175947f, 2.70805020f});
	/* log-sum-exp does not overflow: 1000 + log(1 + e^-1 + e^-2) */
	const float big[] = {1000, 999, 998, 0, 0, 0};
	red_f32("ReduceLogSumExp", 18, 2, d23, big, a1, 1, true, 0, 1, (int64_t[]){2},
		(float[]){1000.40760596f, 1.09861229f});
}

/* axes 0 and 2 of a [2, 3, 4] iota: sum over i, k of 12i + 4j + k = 32j + 60 */
static void non_adjacent_axes(void **state)
{
	(void)state;
	float x[24];
	for (int i = 0; i < 24; i++)
		x[i] = (float)i;
	red_f32("ReduceSum", 13, 3, (int64_t[]){2, 3, 4}, x, (int64_t[]){0, 2}, 2, true, 1, 3,
		(int64_t[]){1, 3, 1}, (float[]){60, 92, 124});
	red_f32("ReduceMax", 13, 3, (int64_t[]){2, 3, 4}, x, (int64_t[]){2, 0}, 2, false, 0, 1,
		(int64_t[]){3}, (float[]){15, 19, 23});
}

/* reducing an axis of extent 0 gives each op's identity */
static void empty_set(void **state)
{
	(void)state;
	const int64_t d[] = {2, 0, 2}, od[] = {2, 1, 2}, a1[] = {1};
	const float x[1] = {0};
	red_f32("ReduceSum", 18, 3, d, x, a1, 1, true, 1, 3, od, (float[]){0, 0, 0, 0});
	red_f32("ReduceProd", 18, 3, d, x, a1, 1, true, 1, 3, od, (float[]){1, 1, 1, 1});
	red_f32("ReduceMax", 18, 3, d, x, a1, 1, true, 1, 3, od,
		(float[]){-INFINITY, -INFINITY, -INFINITY, -INFINITY});
	red_f32("ReduceMin", 18, 3, d, x, a1, 1, true, 1, 3, od,
		(float[]){INFINITY, INFINITY, INFINITY, INFINITY});
	red_f32("ReduceLogSumExp", 18, 3, d, x, a1, 1, true, 1, 3, od,
		(float[]){-INFINITY, -INFINITY, -INFINITY, -INFINITY});
	red_f32("ReduceL2", 18, 3, d, x, a1, 1, true, 1, 3, od, (float[]){0, 0, 0, 0});
}

static void nan_propagates(void **state)
{
	(void)state;
	const float x[] = {1, NAN, 3};
	red_f32("ReduceMax", 13, 1, (int64_t[]){3}, x, NULL, 0, false, 0, 0, NULL,
		(float[]){NAN});
	red_f32("ReduceMin", 13, 1, (int64_t[]){3}, x, NULL, 0, false, 0, 0, NULL,
		(float[]){NAN});
}

static void noop_with_empty_axes(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "ReduceSum", 2, 1);
	nt_int(n, "noop_with_empty_axes", 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, d23, x23);
	om_tensor ta = nt_tensor(OM_INT64, 1, (int64_t[]){0}, NULL);
	const int64_t one = 0;
	ta.data = (void *)&one;
	const om_tensor *in[] = {&tx, &ta};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 2, d23, x23, 0);
	om_tensor_free(&out[0]);
	/* the axes input left out entirely behaves the same */
	in[1] = NULL;
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 2, d23, x23, 0);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* noop_with_empty_axes with no axes still applies the element-wise part (the ONNX text's 2025
 * clarification; ONNX Runtime 1.30 agrees: tests/cases/reduce/noop_*): each output element is
 * the reduction of its one input element, in fast and exact mode */
static void noop_keeps_elementwise_part(void **state)
{
	(void)state;
	const float x[] = {-2, 0.5f, 3, -0.25f, 100, 1};
	const struct { const char *op; float want[6]; } c[] = {
		{"ReduceSumSquare", {4, 0.25f, 9, 0.0625f, 10000, 1}},
		{"ReduceL1", {2, 0.5f, 3, 0.25f, 100, 1}},
		{"ReduceL2", {2, 0.5f, 3, 0.25f, 100, 1}},
		{"ReduceLogSumExp", {-2, 0.5f, 3, -0.25f, 100, 1}},
		{"ReduceMean", {-2, 0.5f, 3, -0.25f, 100, 1}},
		{"ReduceProd", {-2, 0.5f, 3, -0.25f, 100, 1}},
	};
	const int64_t none = 0;
	for (size_t k = 0; k < sizeof c / sizeof *c; k++)
		for (int exact = 0; exact < 2; exact++) {
			om_model *m;
			om_node *n = nt_node(&m, c[k].op, 2, 1);
			nt_int(n, "noop_with_empty_axes", 1);
			nt_int(n, "keepdims", 0);
			om_tensor tx = nt_tensor(OM_FLOAT, 2, d23, x);
			om_tensor ta = nt_tensor(OM_INT64, 1, (int64_t[]){0}, &none);
			const om_tensor *in[] = {&tx, &ta};
			om_tensor out[1];
			om_status st = {0};
			assert_int_equal(nt_run_mode(n, 18, in, out, exact, &st), OM_OK);
			nt_check_f32(&out[0], 2, d23, c[k].want, 1e-6);
			om_tensor_free(&out[0]);
			om_model_free(m);
		}
	/* ReduceLogSum: log x (NaN below 0); int32 ReduceSumSquare squares */
	const float xp[] = {1, 2.718281828f, 0.5f, 4, 8, 16};
	const float lp[] = {0, 1, -0.693147181f, 1.386294361f, 2.079441542f, 2.772588722f};
	om_model *m;
	om_node *n = nt_node(&m, "ReduceLogSum", 2, 1);
	nt_int(n, "noop_with_empty_axes", 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, d23, xp);
	om_tensor ta = nt_tensor(OM_INT64, 1, (int64_t[]){0}, &none);
	const om_tensor *in[] = {&tx, &ta};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 2, d23, lp, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
	const int32_t xi[] = {-3, 4, 0, 7, -1, 2}, want_i[] = {9, 16, 0, 49, 1, 4};
	n = nt_node(&m, "ReduceSumSquare", 2, 1);
	nt_int(n, "noop_with_empty_axes", 1);
	tx = nt_tensor(OM_INT32, 2, d23, xi);
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT32);
	assert_memory_equal(out[0].data, want_i, sizeof want_i);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* integer reductions stay integer: sums wrap, means truncate, unsigned compares unsigned */
static void integer_types(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	om_node *n = nt_node(&m, "ReduceSum", 1, 1);
	nt_int(n, "keepdims", 0);
	const int32_t i32[] = {INT32_MAX, 1, 5};
	om_tensor t = nt_tensor(OM_INT32, 1, (int64_t[]){2}, i32);
	const om_tensor *in[] = {&t};
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT32);
	assert_int_equal(((int32_t *)out[0].data)[0], INT32_MIN);
	om_tensor_free(&out[0]);
	n->op = "ReduceMean";
	const int64_t i64[] = {-7, 2};
	t = nt_tensor(OM_INT64, 1, (int64_t[]){2}, i64);
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	assert_int_equal(((int64_t *)out[0].data)[0], -2);
	om_tensor_free(&out[0]);
	n->op = "ReduceMax";
	const uint8_t u8[] = {5, 200, 0};
	t = nt_tensor(OM_UINT8, 1, (int64_t[]){3}, u8);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(((uint8_t *)out[0].data)[0], 200);
	om_tensor_free(&out[0]);
	n->op = "ReduceMin";
	const uint8_t b[] = {1, 0, 1};
	t = nt_tensor(OM_BOOL, 1, (int64_t[]){3}, b);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_BOOL);
	assert_int_equal(((uint8_t *)out[0].data)[0], 0);
	om_tensor_free(&out[0]);
	n->op = "ReduceSum"; /* bool sums are not ONNX */
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void half_types(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	om_node *n = nt_node(&m, "ReduceMean", 1, 1);
	nt_int(n, "keepdims", 0);
	const uint16_t h[] = {om_float_to_half(1), om_float_to_half(2), om_float_to_half(3),
			      om_float_to_half(4.5f)};
	om_tensor t = nt_tensor(OM_FLOAT16, 1, (int64_t[]){4}, h);
	const om_tensor *in[] = {&t};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	assert_true(om_half_to_float(((uint16_t *)out[0].data)[0]) == 2.625f);
	om_tensor_free(&out[0]);
	const uint16_t b[] = {om_float_to_bf16(-1), om_float_to_bf16(8)};
	t = nt_tensor(OM_BFLOAT16, 1, (int64_t[]){2}, b);
	n->op = "ReduceSumSquare";
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_true(om_bf16_to_float(((uint16_t *)out[0].data)[0]) == 65.0f);
	om_tensor_free(&out[0]);
	const double dd[] = {0.1, 0.2};
	t = nt_tensor(OM_DOUBLE, 1, (int64_t[]){2}, dd);
	n->op = "ReduceSum";
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_true(((double *)out[0].data)[0] == 0.1 + 0.2);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void bad_axes(void **state)
{
	(void)state;
	om_model *m;
	om_tensor out[1];
	om_node *n = nt_node(&m, "ReduceSum", 2, 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, d23, x23);
	const int64_t dup[] = {1, -1}, far[] = {2};
	om_tensor ta = nt_tensor(OM_INT64, 1, (int64_t[]){2}, dup);
	const om_tensor *in[] = {&tx, &ta};
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	ta = nt_tensor(OM_INT64, 1, (int64_t[]){1}, far);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	/* axes as attribute before opset 13 */
	n->nin = 1;
	nt_ints(n, "axes", far, 1);
	assert_int_equal(nt_run(n, 11, in, out), OM_ERR_INVALID_MODEL);
	/* plan-time inference without the axes value asks for it */
	n->nin = 2;
	om_tensor shape_only = nt_tensor(OM_INT64, 1, (int64_t[]){1}, NULL);
	in[1] = &shape_only;
	assert_int_equal(om_infer_node(n, 13, in, out, &st), OM_NEED_VALUE);
	om_model_free(m);
}

static void arg_run(const char *op, int64_t axis, int64_t keep, int64_t last, int32_t dtype,
		    int32_t rank, const int64_t *dims, const void *x, int32_t orank,
		    const int64_t *odims, const int64_t *want)
{
	om_model *m;
	om_node *n = nt_node(&m, op, 1, 1);
	nt_int(n, "axis", axis);
	nt_int(n, "keepdims", keep);
	nt_int(n, "select_last_index", last);
	om_tensor t = nt_tensor(dtype, rank, dims, x);
	const om_tensor *in[] = {&t};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT64);
	assert_int_equal(out[0].rank, orank);
	for (int32_t i = 0; i < orank; i++)
		assert_int_equal(out[0].dims[i], odims[i]);
	for (int64_t i = 0; i < om_tensor_numel(&out[0]); i++)
		assert_int_equal(((int64_t *)out[0].data)[i], want[i]);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void argmax_argmin(void **state)
{
	(void)state;
	const float x[] = {2, 1, 3, 10};
	const int64_t d[] = {2, 2};
	arg_run("ArgMax", 0, 1, 0, OM_FLOAT, 2, d, x, 2, (int64_t[]){1, 2}, (int64_t[]){1, 1});
	arg_run("ArgMin", 1, 0, 0, OM_FLOAT, 2, d, x, 1, (int64_t[]){2}, (int64_t[]){1, 0});
	const float t[] = {1, 3, 3, 2};
	arg_run("ArgMax", -1, 0, 0, OM_FLOAT, 1, (int64_t[]){4}, t, 0, NULL, (int64_t[]){1});
	arg_run("ArgMax", -1, 0, 1, OM_FLOAT, 1, (int64_t[]){4}, t, 0, NULL, (int64_t[]){2});
	const float u[] = {1, 0, 0, 2};
	arg_run("ArgMin", 0, 1, 1, OM_FLOAT, 1, (int64_t[]){4}, u, 1, (int64_t[]){1},
		(int64_t[]){2});
	const uint8_t b[] = {5, 200, 0};
	arg_run("ArgMax", 0, 0, 0, OM_UINT8, 1, (int64_t[]){3}, b, 0, NULL, (int64_t[]){1});
	const int64_t s[] = {5, -200, 0};
	arg_run("ArgMin", 0, 0, 0, OM_INT64, 1, (int64_t[]){3}, s, 0, NULL, (int64_t[]){1});
	const float nan[] = {1, NAN, 3};
	arg_run("ArgMax", 0, 0, 0, OM_FLOAT, 1, (int64_t[]){3}, nan, 0, NULL, (int64_t[]){1});
}

static void cum_run(const char *op, int64_t opset, int64_t axis, int excl, int rev,
		    int32_t dtype, const void *x, const void *want)
{
	om_model *m;
	om_node *n = nt_node(&m, op, 2, 1);
	nt_int(n, "exclusive", excl);
	nt_int(n, "reverse", rev);
	om_tensor tx = nt_tensor(dtype, 2, (int64_t[]){2, 3}, x);
	om_tensor ta = nt_tensor(OM_INT32, 0, NULL, (int32_t[]){(int32_t)axis});
	const om_tensor *in[] = {&tx, &ta};
	om_tensor out[1];
	assert_int_equal(nt_run(n, opset, in, out), OM_OK);
	assert_int_equal(out[0].dtype, dtype);
	assert_memory_equal(out[0].data, want, out[0].nbytes);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* x = [[1, 2, 3], [4, 5, 6]] */
static void cumulative(void **state)
{
	(void)state;
	cum_run("CumSum", 14, 1, 0, 0, OM_FLOAT, x23, (float[]){1, 3, 6, 4, 9, 15});
	cum_run("CumSum", 14, 0, 0, 0, OM_FLOAT, x23, (float[]){1, 2, 3, 5, 7, 9});
	cum_run("CumSum", 14, -1, 1, 0, OM_FLOAT, x23, (float[]){0, 1, 3, 0, 4, 9});
	cum_run("CumSum", 14, 1, 0, 1, OM_FLOAT, x23, (float[]){6, 5, 3, 15, 11, 6});
	cum_run("CumSum", 14, 1, 1, 1, OM_FLOAT, x23, (float[]){5, 3, 0, 11, 6, 0});
	const int64_t xi[] = {1, 2, 3, 4, 5, 6};
	cum_run("CumProd", 26, 1, 0, 0, OM_INT64, xi, (int64_t[]){1, 2, 6, 4, 20, 120});
	cum_run("CumProd", 26, 1, 1, 1, OM_INT64, xi, (int64_t[]){6, 3, 1, 30, 6, 1});
	/* the axis must be a value in range */
	om_model *m;
	om_node *n = nt_node(&m, "CumSum", 2, 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, d23, x23);
	om_tensor ta = nt_tensor(OM_INT64, 0, NULL, (int64_t[]){2});
	const om_tensor *in[] = {&tx, &ta};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 14, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* Sums in lanes: ReduceSum, ReduceMean, ReduceL2, ReduceLogSumExp over the last axis (runs of
 * n = 1, 7, 8, 9, 17, 300: whole lanes, tails, more than one load chunk) and over the middle
 * axis of (2, n, 3) (runs of one element), against double sums */
static void lane_sums(void **state)
{
	(void)state;
	static const int64_t sizes[] = {1, 7, 8, 9, 17, 300};
	static const char *const ops[] = {"ReduceSum", "ReduceMean", "ReduceL2",
					  "ReduceLogSumExp"};
	float x[2 * 300 * 3];
	for (int i = 0; i < 2 * 300 * 3; i++)
		x[i] = (float)((i * 7919) % 1001) / 250.0f - 2.0f;
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
		for (int op = 0; op < 4; op++)
			for (int mid = 0; mid < 2; mid++) {
				const int64_t n = sizes[si], axis = 1, step = mid ? 3 : 1;
				const int64_t d3[] = {2, n, 3}, d2[] = {6, n};
				om_model *m;
				om_node *nd = nt_node(&m, ops[op], 1, 1);
				nt_ints(nd, "axes", &axis, 1);
				om_tensor tx = nt_tensor(OM_FLOAT, mid ? 3 : 2, mid ? d3 : d2, x);
				const om_tensor *in[] = {&tx};
				om_tensor out[1];
				/* opset 11: axes is an attribute for every op here */
				assert_int_equal(nt_run(nd, 11, in, out), OM_OK);
				assert_int_equal(om_tensor_numel(&out[0]), 6);
				for (int64_t o = 0; o < 6; o++) {
					const int64_t b = mid ? o / 3 * n * 3 + o % 3 : o * n;
					double s = 0, q = 0, mx = -INFINITY, e = 0;
					for (int64_t k = 0; k < n; k++) {
						const double v = x[b + k * step];
						s += v, q += v * v, mx = fmax(mx, v);
					}
					for (int64_t k = 0; k < n; k++)
						e += exp(x[b + k * step] - mx);
					const double want = op == 0   ? s
							    : op == 1 ? s / (double)n
							    : op == 2 ? sqrt(q)
								      : mx + log(e);
					const float got = ((const float *)out[0].data)[o];
					if (!(fabs(got - want) <= 1e-6 * fabs(want) + 1e-6))
						fail_msg("%s n %lld mid %d [%lld]: %.9g, want %.9g",
							 ops[op], (long long)n, mid, (long long)o,
							 (double)got, want);
				}
				om_tensor_free(&out[0]);
				om_model_free(m);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sum_mean_max_min),  cmocka_unit_test(norms_and_logs),
		cmocka_unit_test(non_adjacent_axes), cmocka_unit_test(empty_set),
		cmocka_unit_test(nan_propagates),    cmocka_unit_test(noop_with_empty_axes),
		cmocka_unit_test(noop_keeps_elementwise_part),
		cmocka_unit_test(integer_types),     cmocka_unit_test(half_types),
		cmocka_unit_test(bad_axes),          cmocka_unit_test(argmax_argmin),
		cmocka_unit_test(cumulative),        cmocka_unit_test(lane_sums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
