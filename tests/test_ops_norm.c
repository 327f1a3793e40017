/* test_ops_norm.c — Softmax, LogSoftmax, Hardmax, LpNormalization, LayerNormalization,
 * RMSNormalization, InstanceNormalization, GroupNormalization, BatchNormalization,
 * MeanVarianceNormalization, LRN, and the losses of ops_loss.c (values from hand computation and
 * numpy). */
#include "half.h"
#include "nodetest.h"

/* one float input through op at opset with `axis` (INT64_MIN: left out) */
static void axis_case(const char *op, int64_t opset, int64_t axis, int32_t rank,
		      const int64_t *dims, const float *x, const float *want)
{
	om_model *m;
	om_node *n = nt_node(&m, op, 1, 1);
	if (axis != INT64_MIN)
		nt_int(n, "axis", axis);
	om_tensor t = nt_tensor(OM_FLOAT, rank, dims, x);
	const om_tensor *in[] = {&t};
	om_tensor out[1];
	assert_int_equal(nt_run(n, opset, in, out), OM_OK);
	nt_check_f32(&out[0], rank, dims, want, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static const int64_t d3[] = {3}, d23[] = {2, 3};
static const float x123[] = {1, 2, 3}, x23[] = {1, 2, 3, 4, 5, 6};

static void softmax_forms(void **state)
{
	(void)state;
	axis_case("Softmax", 13, INT64_MIN, 1, d3, x123,
		  (float[]){0.09003057f, 0.24472847f, 0.66524096f});
	axis_case("LogSoftmax", 13, -1, 1, d3, x123,
		  (float[]){-2.40760596f, -1.40760596f, -0.40760596f});
	/* 13+: along axis 0 only, each column is [a, a + 3] */
	const float col[] = {0.04742587f, 0.04742587f, 0.04742587f,
			     0.95257413f, 0.95257413f, 0.95257413f};
	axis_case("Softmax", 13, 0, 2, d23, x23, col);
	/* before 13: coerced to 2-D at axis 0, one row of all six */
	axis_case("Softmax", 11, 0, 2, d23, x23,
		  (float[]){0.00426978f, 0.01160646f, 0.03154963f, 0.08576079f, 0.233122f,
			    0.6336913f});
	/* default axis 1 before 13: each row */
	axis_case("Softmax", 11, INT64_MIN, 2, d23, x23,
		  (float[]){0.09003057f, 0.24472847f, 0.66524096f, 0.09003057f, 0.24472847f,
			    0.66524096f});
	/* large inputs do not overflow */
	axis_case("Softmax", 13, -1, 1, (int64_t[]){2}, (float[]){1000, 1001},
		  (float[]){0.26894142f, 0.73105858f});
	axis_case("LogSoftmax", 1, 1, 2, (int64_t[]){1, 2}, (float[]){1000, 1001},
		  (float[]){-1.31326169f, -0.31326169f});
	/* LogSoftmax's rows as Softmax's: coerced to 2-D before 13 (the logs of the six
	 * above), along the one axis from 13 (the logs of col) */
	axis_case("LogSoftmax", 11, 0, 2, d23, x23,
		  (float[]){-5.45619332f, -4.45619332f, -3.45619332f,
			    -2.45619332f, -1.45619332f, -0.45619332f});
	axis_case("LogSoftmax", 13, 0, 2, d23, x23,
		  (float[]){-3.04858735f, -3.04858735f, -3.04858735f, -0.04858735f, -0.04858735f,
			    -0.04858735f});
}

static void hardmax_and_lp(void **state)
{
	(void)state;
	const float h[] = {1, 3, 3, 2, 0, 1};
	axis_case("Hardmax", 13, -1, 2, d23, h, (float[]){0, 1, 0, 1, 0, 0});
	axis_case("Hardmax", 13, 0, 2, d23, h, (float[]){0, 1, 1, 1, 0, 0});
	/* before 13 at axis 0: one row of six, the first 3 wins */
	axis_case("Hardmax", 11, 0, 2, d23, h, (float[]){0, 1, 0, 0, 0, 0});
	axis_case("LpNormalization", 1, -1, 2, (int64_t[]){2, 2}, (float[]){3, 4, 0, 0},
		  (float[]){0.6f, 0.8f, 0, 0});
	axis_case("LpNormalization", 1, 0, 2, (int64_t[]){2, 2}, (float[]){3, 4, 4, 3},
		  (float[]){0.6f, 0.8f, 0.8f, 0.6f});
	om_model *m;
	om_node *n = nt_node(&m, "LpNormalization", 1, 1);
	nt_int(n, "p", 1);
	om_tensor t = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){3, -4});
	const om_tensor *in[] = {&t};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 1, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){2}, (float[]){3.0f / 7, -4.0f / 7}, 1e-6);
	om_tensor_free(&out[0]);
	nt_int(n, "p", 3);
	assert_int_equal(nt_run(n, 1, in, out), OM_ERR_INVALID_MODEL);
	/* planning refuses it too: infer without the input's value (test_diff_nodes found it) */
	om_tensor shape_only = t;
	shape_only.data = NULL;
	const om_tensor *pin[] = {&shape_only};
	om_status st = {0};
	assert_int_equal(om_infer_node(n, 1, pin, out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	om_model_free(m);
}

static void softmax_types_and_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Softmax", 1, 1);
	const uint16_t h[] = {om_float_to_half(0), om_float_to_half(0)};
	om_tensor t = nt_tensor(OM_FLOAT16, 1, (int64_t[]){2}, h);
	const om_tensor *in[] = {&t};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	assert_true(om_half_to_float(((uint16_t *)out[0].data)[1]) == 0.5f);
	om_tensor_free(&out[0]);
	const double dd[] = {0, 0, 0, 0};
	t = nt_tensor(OM_DOUBLE, 1, (int64_t[]){4}, dd);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_true(((double *)out[0].data)[3] == 0.25);
	om_tensor_free(&out[0]);
	nt_int(n, "axis", 1);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	const int32_t iv[] = {1, 2};
	t = nt_tensor(OM_INT32, 1, (int64_t[]){2}, iv);
	nt_int(n, "axis", 0);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* x = [1, 2, 3, 4]: mean 2.5, variance 1.25 */
static void layer_norm(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "LayerNormalization", 3, 3);
	const float x[] = {1, 2, 3, 4, 4, 4, 4, 4};
	om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 4}, x);
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 1, 2, 2});
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){0, 0, 0, 1});
	const om_tensor *in[] = {&tx, &ts, &tb};
	om_tensor out[3];
	for (int opset = 1; opset <= 17; opset += 16) { /* ONNX Runtime's (1) and ONNX's (17) */
		assert_int_equal(nt_run(n, opset, in, out), OM_OK);
		nt_check_f32(&out[0], 2, (int64_t[]){2, 4},
			     (float[]){-1.3416355f, -0.4472118f, 0.8944236f, 3.683271f, 0, 0, 0, 1},
			     1e-6);
		nt_check_f32(&out[1], 2, (int64_t[]){2, 1}, (float[]){2.5f, 4}, 1e-7);
		nt_check_f32(&out[2], 2, (int64_t[]){2, 1}, (float[]){0.8944236f, 316.22776f},
			     1e-6);
		for (int i = 0; i < 3; i++)
			om_tensor_free(&out[i]);
	}
	/* axis 0 normalizes all 8 (mean 3.25, var 1.1875); scale [4] broadcasts over [2, 4]
	 * and B is left out */
	nt_int(n, "axis", 0);
	n->nin = 2;
	n->out[1] = n->out[2] = NULL;
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	const double inv = 1 / sqrt(1.1875 + 1e-5);
	float want[8];
	for (int i = 0; i < 8; i++)
		want[i] = (float)((x[i] - 3.25) * inv * ((const float *)ts.data)[i % 4]);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 4}, want, 1e-6);
	om_tensor_free(&out[0]);
	/* a scale that does not broadcast */
	ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, (float[]){1, 1, 1});
	assert_int_equal(nt_run(n, 17, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* LayerNormalization, Softmax, LogSoftmax and SimplifiedLayerNormalization (root mean square)
 * over rows of n = 1, 7, 8, 9, 15, 16, 17, 33, 128
 * (sums in 8 or 16 lanes: whole lanes, tails), exact and fast mode, against a double two-pass
 * reference */
enum { ROWS = 3, MAXN = 128 };
static const char *const row_ops[] = {"LayerNormalization", "Softmax", "LogSoftmax",
				       "SimplifiedLayerNormalization"};
static const int row_inputs[] = {3, 1, 1, 2};

/* the reference of element k of row xr (n elements) for row_ops[op] */
static double row_ref(int op, const float *xr, int64_t n, int64_t k, const float *sc,
		      const float *bi)
{
	double mean = 0, var = 0, mx = -INFINITY, se = 0, sq = 0;
	for (int64_t i = 0; i < n; i++)
		mean += xr[i] / (double)n, mx = fmax(mx, xr[i]), sq += (double)xr[i] * xr[i];
	if (op == 3) /* root mean square */
		return xr[k] / sqrt(sq / (double)n + 1e-5) * sc[k];
	for (int64_t i = 0; i < n; i++) {
		var += (xr[i] - mean) * (xr[i] - mean) / (double)n;
		se += exp(xr[i] - mx);
	}
	if (op == 0)
		return (xr[k] - mean) / sqrt(var + 1e-5) * sc[k] + bi[k];
	return op == 1 ? exp(xr[k] - mx) / se : xr[k] - mx - log(se);
}

static void row_case(int op, int exact, int64_t n, const float *x, const float *sc,
		     const float *bi)
{
	const int64_t dims[] = {ROWS, n};
	om_model *m = om_model_new();
	om_node *nd = nt_add_node(m, row_ops[op], row_inputs[op], 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, dims, x);
	om_tensor ts = nt_tensor(OM_FLOAT, 1, &n, sc), tb = nt_tensor(OM_FLOAT, 1, &n, bi);
	om_tensor out[1];
	om_status st = {0};
	const om_tensor *in[] = {&tx, &ts, &tb};
	assert_int_equal(nt_run_mode(nd, 17, in, out, exact, &st), OM_OK);
	const float *y = out[0].data;
	for (int64_t i = 0; i < ROWS * n; i++) {
		const double want = row_ref(op, x + i / n * n, n, i % n, sc, bi);
		if (!(fabs(y[i] - want) <= 2e-6 * fabs(want) + 1e-6))
			fail_msg("%s exact %d n %lld element %lld: %.9g, want %.9g", row_ops[op],
				 exact, (long long)n, (long long)i, (double)y[i], want);
	}
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void row_sizes(void **state)
{
	(void)state;
	static const int64_t sizes[] = {1, 7, 8, 9, 15, 16, 17, 33, 128};
	float x[ROWS * MAXN], sc[MAXN], bi[MAXN];
	for (int i = 0; i < ROWS * MAXN; i++)
		x[i] = 10.0f + (float)((i * 7919) % 601) / 100.0f - 3.0f;
	for (int i = 0; i < MAXN; i++)
		sc[i] = 0.5f + (float)(i % 5) * 0.25f, bi[i] = (float)(i % 3) - 1.0f;
	for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
		for (int op = 0; op < 4; op++)
			for (int exact = 0; exact < 2; exact++)
				row_case(op, exact, sizes[si], x, sc, bi);
}

/* Softmax and LogSoftmax in both modes: a NaN makes its row NaN, as does +inf (inf - inf);
 * -inf elements give 0 (Softmax) and -inf (LogSoftmax) */
static void softmax_specials(void **state)
{
	(void)state;
	enum { N = 19 };
	float x[3 * N];
	for (int i = 0; i < 3 * N; i++)
		x[i] = (float)(i % 7) - 3.0f;
	x[4] = NAN;
	x[N + 2] = INFINITY;
	for (int i = 2 * N; i < 3 * N; i++)
		x[i] = i == 2 * N + 5 ? 1.0f : -INFINITY;
	for (int op = 1; op < 3; op++)
		for (int exact = 0; exact < 2; exact++) {
			om_model *m = om_model_new();
			om_node *nd = nt_add_node(m, row_ops[op], 1, 1);
			om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){3, N}, x), out[1];
			om_status st = {0};
			assert_int_equal(nt_run_mode(nd, 17, (const om_tensor *[]){&tx}, out, exact,
						     &st), OM_OK);
			const float *y = out[0].data;
			for (int i = 0; i < 2 * N; i++)
				assert_true(isnan(y[i]));
			for (int i = 2 * N; i < 3 * N; i++) {
				const bool one = i == 2 * N + 5;
				if (op == 1)
					assert_true(y[i] == (one ? 1.0f : 0.0f));
				else
					assert_true(one ? y[i] == 0.0f : isinf(y[i]) && y[i] < 0);
			}
			om_tensor_free(&out[0]);
			om_model_free(m);
		}
}

static void instance_norm(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "InstanceNormalization", 3, 1);
	nt_float(n, "epsilon", 0);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 2}, (float[]){1, 3, 5, 9});
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){0, 1});
	const om_tensor *in[] = {&tx, &ts, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 6, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 2, 2}, (float[]){-1, 1, -1, 3}, 1e-6);
	om_tensor_free(&out[0]);
	tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, (float[]){0});
	assert_int_equal(nt_run(n, 6, in, out), OM_ERR_INVALID_MODEL);
	/* zero channels: an empty result (it divided by the channel count: SIGFPE) */
	tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 0, 3}, (float[]){0});
	ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){0}, (float[]){0});
	tb = ts;
	assert_int_equal(nt_run(n, 6, in, out), OM_OK);
	nt_assert_shape(&out[0], 3, (int64_t[]){2, 0, 3});
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void batch_norm(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "BatchNormalization", 5, 1);
	nt_float(n, "epsilon", 0);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 2, 1, 2}, (float[]){1, 2, 3, 4});
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){0, 1});
	om_tensor tm = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 3});
	om_tensor tv = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){4, 1});
	const om_tensor *in[] = {&tx, &ts, &tb, &tm, &tv};
	om_tensor out[3];
	for (int opset = 7; opset <= 15; opset += 2) {
		assert_int_equal(nt_run(n, opset, in, out), OM_OK);
		nt_check_f32(&out[0], 4, (int64_t[]){1, 2, 1, 2}, (float[]){0, 0.5f, 1, 3}, 1e-6);
		om_tensor_free(&out[0]);
	}
	/* opset 7, spatial = 0: one parameter per element of a sample */
	nt_int(n, "spatial", 0);
	om_tensor s4 = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 1, 1, 1});
	om_tensor z4 = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){0, 0, 0, 0});
	om_tensor m4 = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 1, 1, 1});
	om_tensor v4 = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 4, 1, 4});
	const om_tensor *in4[] = {&tx, &s4, &z4, &m4, &v4};
	assert_int_equal(nt_run(n, 7, in4, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 2, 1, 2}, (float[]){0, 0.5f, 2, 1.5f}, 1e-6);
	om_tensor_free(&out[0]);
	/* from 9 spatial is gone: [4] parameters for C = 2 are an error */
	assert_int_equal(nt_run(n, 9, in4, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* training mode: batch statistics, running statistics out */
static void batch_norm_training(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "BatchNormalization", 5, 3);
	nt_float(n, "epsilon", 0);
	nt_int(n, "training_mode", 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){2, 1, 1, 1}, (float[]){1, 3});
	om_tensor one = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, (float[]){1});
	om_tensor zero = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, (float[]){0});
	const om_tensor *in[] = {&tx, &one, &zero, &zero, &one};
	om_tensor out[3];
	assert_int_equal(nt_run(n, 15, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){2, 1, 1, 1}, (float[]){-1, 1}, 1e-6);
	nt_check_f32(&out[1], 1, (int64_t[]){1}, (float[]){0.2f}, 1e-6);
	nt_check_f32(&out[2], 1, (int64_t[]){1}, (float[]){1}, 1e-6);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	/* before 14 training_mode is not BatchNormalization's: the node is in inference, where
	 * the extra outputs do not exist; with Y alone, the running statistics (0, 1) apply */
	assert_int_equal(nt_run(n, 9, in, out), OM_ERR_UNSUPPORTED);
	n->out[1] = n->out[2] = NULL;
	assert_int_equal(nt_run(n, 9, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){2, 1, 1, 1}, (float[]){1, 3}, 1e-6);
	om_tensor_free(&out[0]);
	assert_int_equal(nt_run(n, 14, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){2, 1, 1, 1}, (float[]){-1, 1}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
	/* the extra outputs do not exist in inference mode */
	n = nt_node(&m, "BatchNormalization", 5, 3);
	assert_int_equal(nt_run(n, 15, in, out), OM_ERR_UNSUPPORTED);
	om_model_free(m);
}

/* x / sqrt(mean(x^2) + eps) * scale: [3, 4] has rms sqrt(12.5) */
static void rms_norm(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "RMSNormalization", 2, 1);
	nt_float(n, "epsilon", 0);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){3, 4, -1, 1});
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
	const om_tensor *in[] = {&tx, &ts};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0.84852814f, 2.2627417f, -1, 2},
		     1e-6);
	om_tensor_free(&out[0]);
	/* not before opset 23 */
	assert_int_equal(nt_run(n, 22, in, out), OM_ERR_UNSUPPORTED);
	om_model_free(m);
	/* LayerNormalization, the same kernel, takes the mean out: rows [-1, 1] * scale */
	n = nt_node(&m, "LayerNormalization", 2, 1);
	nt_float(n, "epsilon", 0);
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){-1, 2, -1, 2}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* groups {1, 3} and {5, 9} standardize to [-1, 1] each; the parameters are per group at 18,
 * per channel from 21 */
static void group_norm(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "GroupNormalization", 3, 1);
	nt_float(n, "epsilon", 0);
	nt_int(n, "num_groups", 2);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 4, 1}, (float[]){1, 3, 5, 9});
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){0, 1});
	const om_tensor *in[] = {&tx, &ts, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 4, 1}, (float[]){-1, 1, -1, 3}, 1e-6);
	om_tensor_free(&out[0]);
	assert_int_equal(nt_run(n, 21, in, out), OM_ERR_INVALID_MODEL);
	ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){1, 2, 3, 4});
	tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, (float[]){0, 0, 0, 1});
	assert_int_equal(nt_run(n, 21, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 4, 1}, (float[]){-1, 2, -3, 5}, 1e-6);
	om_tensor_free(&out[0]);
	nt_int(n, "num_groups", 3);
	assert_int_equal(nt_run(n, 21, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
	/* InstanceNormalization, the same kernel, standardizes each channel (a value alone
	 * gives 0, then B) whatever num_groups says */
	n = nt_node(&m, "InstanceNormalization", 3, 1);
	nt_int(n, "num_groups", 2);
	assert_int_equal(nt_run(n, 21, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 4, 1}, (float[]){0, 0, 0, 1}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* over axes [0, 2] of [2, 2, 1]: channel 0 holds {1, 3}, channel 1 holds {2, 2} */
static void mean_variance(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MeanVarianceNormalization", 1, 1);
	nt_ints(n, "axes", (int64_t[]){0, 2}, 2);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 2, 1}, (float[]){1, 2, 3, 2});
	const om_tensor *in[] = {&tx};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){2, 2, 1}, (float[]){-1, 0, 1, 0}, 1e-6);
	om_tensor_free(&out[0]);
	/* the default axes [0, 2, 3] need rank 4 */
	n->nattr = 0;
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* the examples of the NegativeLogLikelihoodLoss spec: N, C, d1 = 2, 3, 2 */
static const float nll_x[] = {1, 2, 2, 2, 3, 2, 0, 1, 2, 2, 1, 2};
static const int64_t nll_t[] = {2, 1, 0, 2};

static void nll_loss(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "NegativeLogLikelihoodLoss", 3, 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 3, 2}, nll_x);
	om_tensor tt = nt_tensor(OM_INT64, 2, (int64_t[]){2, 2}, nll_t);
	om_tensor tw = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, (float[]){0.2f, 0.3f, 0.1f});
	const om_tensor *in[] = {&tx, &tt, NULL};
	om_tensor out[1];
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"none", 4};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){-3, -2, 0, -2}, 1e-6);
	om_tensor_free(&out[0]);
	in[2] = &tw;
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"sum", 3};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 0, NULL, (float[]){-1.1f}, 1e-6);
	om_tensor_free(&out[0]);
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"mean", 4};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 0, NULL, (float[]){-1.1f / 0.7f}, 1e-6);
	om_tensor_free(&out[0]);
	/* ignore_index 2 leaves two samples, -2 and -0, without weights: mean -1 */
	in[2] = NULL;
	nt_int(n, "ignore_index", 2);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 0, NULL, (float[]){-1}, 1e-6);
	om_tensor_free(&out[0]);
	/* a label outside [0, C) that is not ignored */
	const int64_t bad[] = {2, 3, 0, 2};
	tt = nt_tensor(OM_INT64, 2, (int64_t[]){2, 2}, bad);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* scores [[0, 0], [0, ln 3]]: log-probabilities [-ln 2, -ln 2] and [-ln 4, ln 3 - ln 4] */
static void softmax_cross_entropy(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "SoftmaxCrossEntropyLoss", 2, 2);
	om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, (float[]){0, 0, 0, 1.0986123f});
	om_tensor tt = nt_tensor(OM_INT32, 1, (int64_t[]){2}, (int32_t[]){1, 1});
	const om_tensor *in[] = {&tx, &tt};
	om_tensor out[2];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	/* mean of ln 2 and ln 4 - ln 3 */
	nt_check_f32(&out[0], 0, NULL, (float[]){0.49041462f}, 1e-6);
	nt_check_f32(&out[1], 2, (int64_t[]){2, 2},
		     (float[]){-0.69314718f, -0.69314718f, -1.38629436f, -0.28768207f}, 1e-6);
	om_tensor_free(&out[0]);
	om_tensor_free(&out[1]);
	om_model_free(m);
	/* NegativeLogLikelihoodLoss, the same kernel, takes the scores as log-probabilities:
	 * the mean of -0 and -ln 3 */
	n = nt_node(&m, "NegativeLogLikelihoodLoss", 2, 1);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 0, NULL, (float[]){-0.54930615f}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* channels [1, 2, 3], size 3, alpha / size = 1, bias 1: sums of squares 5, 14, 13 */
static void lrn(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "LRN", 1, 1);
	nt_int(n, "size", 3);
	nt_float(n, "alpha", 3);
	nt_float(n, "beta", 1);
	nt_float(n, "bias", 1);
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 3, 1}, (float[]){1, 2, 3});
	const om_tensor *in[] = {&tx};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 3, 1}, (float[]){1.0f / 6, 2.0f / 15, 3.0f / 14},
		     1e-6);
	om_tensor_free(&out[0]);
	nt_float(n, "beta", 0.5f);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 3, 1},
		     (float[]){0.40824829f, 0.51639778f, 0.80178373f}, 1e-6);
	om_tensor_free(&out[0]);
	nt_int(n, "size", 0);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* com.microsoft SkipSimplifiedLayerNormalization in both modes against a double reference:
 * sum = x + (skip + bias) (output 3, float), y = sum / sqrt(mean(sum^2) + eps) * gamma, the
 * mean output 0 and inv_std_var 1 / sqrt(mean(sum^2) + eps), rows of 5, 16 and 37 */
static void skip_simplified(void **state)
{
	(void)state;
	enum { R = 3, MAXW = 37 };
	static const int64_t widths[] = {5, 16, 37};
	float x[R * MAXW], sk[R * MAXW], g[MAXW], b[MAXW];
	for (int i = 0; i < R * MAXW; i++)
		x[i] = (float)((i * 37) % 23) / 4.0f - 2.0f, sk[i] = (float)(i % 7) / 8.0f;
	for (int i = 0; i < MAXW; i++)
		g[i] = 0.5f + (float)(i % 4) * 0.25f, b[i] = (float)(i % 3) - 1.0f;
	for (size_t wi = 0; wi < sizeof widths / sizeof *widths; wi++)
		for (int exact = 0; exact < 2; exact++) {
			const int64_t w = widths[wi], dims[] = {R, w};
			om_model *m = om_model_new();
			om_node *nd = nt_add_node(m, "SkipSimplifiedLayerNormalization", 4, 4);
			nd->domain = "com.microsoft";
			nt_float(nd, "epsilon", 1e-5f);
			om_tensor tx = nt_tensor(OM_FLOAT, 2, dims, x);
			om_tensor ts = nt_tensor(OM_FLOAT, 2, dims, sk);
			om_tensor tg = nt_tensor(OM_FLOAT, 1, &w, g), tb = nt_tensor(OM_FLOAT, 1, &w, b);
			const om_tensor *in[] = {&tx, &ts, &tg, &tb};
			om_tensor out[4];
			om_status st = {0};
			assert_int_equal(nt_run_threads(nd, 1, in, out, exact, 2, &st), OM_OK);
			const float *y = out[0].data, *mean = out[1].data, *inv = out[2].data;
			const float *sum = out[3].data;
			for (int64_t r = 0; r < R; r++) {
				double sq = 0;
				for (int64_t k = 0; k < w; k++) {
					const float v = x[r * w + k] + (sk[r * w + k] + b[k]);
					assert_true(sum[r * w + k] == v);
					sq += (double)v * v;
				}
				const double iv = 1 / sqrt(sq / (double)w + 1e-5);
				assert_true(mean[r] == 0.0f);
				assert_true(fabs(inv[r] - iv) <= 2e-6 * iv);
				for (int64_t k = 0; k < w; k++) {
					const double want = sum[r * w + k] * iv * g[k];
					if (!(fabs(y[r * w + k] - want) <= 2e-6 * fabs(want) + 1e-6))
						fail_msg("exact %d w %lld [%lld, %lld]: %.9g, want %.9g",
							 exact, (long long)w, (long long)r,
							 (long long)k, (double)y[r * w + k], want);
				}
			}
			for (int i = 0; i < 4; i++)
				om_tensor_free(&out[i]);
			om_model_free(m);
		}
}

/* skip [1, S, H] or [S, H] for an input [B, S, H] (ONNX Runtime 1.30 broadcasts it over the
 * batch; tests/cases/contrib/skip_*_sh hold its values): every output the same bits as the node
 * given the skip repeated to [B, S, H], both ops, both modes; a skip of other rows is refused */
static void skip_run(const char *op, int exact, int32_t rank, const int64_t *sdims,
		     const float *skip, om_tensor *out, om_kind want)
{
	enum { B = 2, S = 3, W = 7 };
	static const int64_t xd[] = {B, S, W}, w = W;
	float x[B * S * W], g[W], b[W];
	for (int i = 0; i < B * S * W; i++)
		x[i] = (float)((i * 37) % 23) / 4.0f - 2.0f;
	for (int i = 0; i < W; i++)
		g[i] = 0.5f + (float)(i % 4) * 0.25f, b[i] = (float)(i % 3) - 1.0f;
	const bool rms = !strcmp(op, "SkipSimplifiedLayerNormalization");
	om_model *m = om_model_new();
	om_node *nd = nt_add_node(m, op, rms ? 4 : 5, 4);
	nd->domain = "com.microsoft";
	om_tensor tx = nt_tensor(OM_FLOAT, 3, xd, x), ts = nt_tensor(OM_FLOAT, rank, sdims, skip);
	om_tensor tg = nt_tensor(OM_FLOAT, 1, &w, g), tb = nt_tensor(OM_FLOAT, 1, &w, b);
	const om_tensor *in[] = {&tx, &ts, &tg, &tb, &tb}; /* LN: beta = the bias's values */
	om_status st = {0};
	assert_int_equal(nt_run_threads(nd, 1, in, out, exact, 2, &st), want);
	om_model_free(m);
}

static void skip_broadcast(void **state)
{
	(void)state;
	enum { B = 2, S = 3, W = 7 };
	float full[B * S * W], one[S * W];
	for (int i = 0; i < S * W; i++)
		one[i] = (float)(i % 7) / 8.0f - (float)(i % 5) / 3.0f;
	for (int i = 0; i < B * S * W; i++)
		full[i] = one[i % (S * W)];
	static const int64_t fd[] = {B, S, W}, d1[] = {1, S, W}, d2[] = {S, W};
	static const int64_t bad3[] = {1, 2, W}, bad2[] = {B * S, W};
	static const char *const ops[] = {"SkipSimplifiedLayerNormalization",
					  "SkipLayerNormalization"};
	for (int o = 0; o < 2; o++)
		for (int exact = 0; exact < 2; exact++) {
			om_tensor want[4], got[4];
			skip_run(ops[o], exact, 3, fd, full, want, OM_OK);
			for (int f = 0; f < 2; f++) {
				skip_run(ops[o], exact, f ? 2 : 3, f ? d2 : d1, one, got, OM_OK);
				for (int i = 0; i < 4; i++) {
					assert_int_equal(om_tensor_numel(&got[i]),
							 om_tensor_numel(&want[i]));
					assert_memory_equal(got[i].data, want[i].data,
							    om_tensor_numel(&want[i]) *
								    sizeof(float));
					assert_int_equal(got[i].rank, want[i].rank);
					om_tensor_free(&got[i]);
				}
			}
			for (int i = 0; i < 4; i++)
				om_tensor_free(&want[i]);
			skip_run(ops[o], exact, 3, bad3, one, got, OM_ERR_UNSUPPORTED);
			skip_run(ops[o], exact, 2, bad2, full, got, OM_ERR_UNSUPPORTED);
		}
}

/* the Skip rows on float16 and bfloat16 (through om_run_as_f32): outputs 0 and 3 in the input's
 * type, each the float rows' result rounded to it, mean and inv_std_var float with the float
 * rows' bits, in both modes (inputs exact in both types); a bias of another type is refused */
static uint16_t to_type(int32_t dtype, float v)
{
	return dtype == OM_FLOAT16 ? om_float_to_half(v) : om_float_to_bf16(v);
}

static void skip_half_types(void **state)
{
	(void)state;
	enum { R = 3, W = 19, N = R * W };
	const int64_t dims[] = {R, W}, w = W;
	float f[3][N]; /* x, skip, then gamma, beta, bias in the rows of W */
	uint16_t h[3][N];
	for (int i = 0; i < N; i++) {
		f[0][i] = (float)((i * 37) % 23) / 4.0f - 2.0f, f[1][i] = (float)(i % 7) / 8.0f;
		f[2][i] = i < W ? 0.5f + (float)(i % 4) * 0.25f
				: i < 2 * W ? (float)(i % 5) / 4.0f - 0.5f : (float)(i % 3) - 1.0f;
	}
	static const char *const ops[] = {"SkipLayerNormalization",
					  "SkipSimplifiedLayerNormalization"};
	static const int32_t types[] = {OM_FLOAT16, OM_BFLOAT16};
	for (int oi = 0; oi < 2; oi++)
		for (int ti = 0; ti < 2; ti++)
			for (int exact = 0; exact < 2; exact++) {
				const int32_t dt = types[ti], nin = oi ? 4 : 5;
				for (int a = 0; a < 3; a++)
					for (int i = 0; i < N; i++)
						h[a][i] = to_type(dt, f[a][i]);
				om_model *m = om_model_new();
				om_node *nd = nt_add_node(m, ops[oi], nin, 4);
				nd->domain = "com.microsoft";
				nt_float(nd, "epsilon", 1e-5f);
				/* gamma, beta and bias: rows 0, 1 and 2 of the third array (no beta in
				 * the simplified one) */
				om_tensor tf[5], th[5];
				for (int i = 0; i < nin; i++) {
					const int a = i < 2 ? i : 2;
					const int row = i < 2 ? 0 : oi ? 2 * (i - 2) : i - 2;
					tf[i] = nt_tensor(OM_FLOAT, i < 2 ? 2 : 1, i < 2 ? dims : &w,
							  f[a] + row * W);
					th[i] = nt_tensor(dt, i < 2 ? 2 : 1, i < 2 ? dims : &w,
							  h[a] + row * W);
				}
				const om_tensor *inf[] = {&tf[0], &tf[1], &tf[2], &tf[3], &tf[4]};
				const om_tensor *inh[] = {&th[0], &th[1], &th[2], &th[3], &th[4]};
				om_tensor of[4], oh[4];
				om_status st = {0};
				assert_int_equal(nt_run_threads(nd, 1, inf, of, exact, 2, &st), OM_OK);
				assert_int_equal(nt_run_threads(nd, 1, inh, oh, exact, 2, &st), OM_OK);
				for (int o = 0; o < 4; o++) {
					const bool typed = o == 0 || o == 3;
					const int64_t n = typed ? N : R;
					nt_assert_shape(&oh[o], 2, typed ? dims : (int64_t[]){R, 1});
					assert_int_equal(oh[o].dtype, typed ? dt : OM_FLOAT);
					const float *want = of[o].data;
					for (int64_t i = 0; i < n; i++)
						if (typed ? ((const uint16_t *)oh[o].data)[i] !=
							    to_type(dt, want[i])
							  : ((const float *)oh[o].data)[i] != want[i])
							fail_msg("%s type %d exact %d output %d [%lld]",
								 ops[oi], (int)dt, exact, o, (long long)i);
				}
				for (int o = 0; o < 4; o++) {
					om_tensor_free(&of[o]);
					om_tensor_free(&oh[o]);
				}
				inh[nin - 1] = &tf[nin - 1]; /* a float bias on a half input */
				assert_int_equal(nt_run_threads(nd, 1, inh, oh, exact, 2, &st),
						 OM_ERR_UNSUPPORTED);
				om_model_free(m);
			}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(softmax_forms),  cmocka_unit_test(hardmax_and_lp),
		cmocka_unit_test(skip_simplified), cmocka_unit_test(skip_half_types),
		cmocka_unit_test(skip_broadcast),
		cmocka_unit_test(softmax_types_and_errors), cmocka_unit_test(layer_norm),
		cmocka_unit_test(instance_norm),  cmocka_unit_test(batch_norm),
		cmocka_unit_test(batch_norm_training), cmocka_unit_test(mean_variance),
		cmocka_unit_test(rms_norm),       cmocka_unit_test(group_norm),
		cmocka_unit_test(nll_loss),       cmocka_unit_test(softmax_cross_entropy),
		cmocka_unit_test(lrn),            cmocka_unit_test(row_sizes),
		cmocka_unit_test(softmax_specials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
