/* test_ops_pool.c — MaxPool (Indices, ceil_mode, dilations, storage_order), AveragePool
 * (count_include_pad, ceil_mode, auto_pad, 1-D/3-D), LpPool, Global pools: values from ONNX
 * Runtime 1.30 on the same inputs; uint8 through the bridge; errors. */
#include <stdlib.h>

#include "nodetest.h"

/* expected outputs: ONNX Runtime (../shared/oracle) on x[i] below */
static const float max_2d[] = { /* [1, 2, 3, 3] */
	1.00999999, 1.27999997, 1.27999997, 1.00999999, 1.28999996, 1.01999998, 1.25, 1.25,
	1.02999997, 1.25999999, 1.03999996, 1.03999996, 1.25999999, 1.03999996, 1.26999998,
	0.280000001, 1, 1.27999997
};
static const int64_t max_2d_ind[] = { /* [1, 2, 3, 3] */
	6, 3, 3, 6, 14, 17, 25, 25, 28, 36, 39, 39, 36, 39, 47, 48, 50, 58
};
static const float max_ceil_dil[] = { /* [1, 1, 3, 3] */
	1.28999996, 1.27999997, 1.00999999, 1.28999996, 1.01999998, 0.75, 1.02999997, 0.75999999,
	0.540000021
};
static const int64_t max_ceil_dil_ind[] = { /* [1, 1, 3, 3] */
	14, 3, 6, 14, 17, 20, 28, 31, 34
};
static const float max_colmajor[] = { /* [2, 1, 3, 2] */
	1.00999999, 1.27999997, 1.00999999, 1.28999996, 1.01999998, 1.28999996, 1.25, 1.02999997,
	1.25, 1.02999997, 1.25999999, 1.03999996
};
static const int64_t max_colmajor_ind[] = { /* [2, 1, 3, 2] */
	5, 12, 5, 18, 11, 18, 21, 33, 21, 33, 27, 39
};
static const float avg_pad_excl[] = { /* [1, 1, 3, 3] */
	-0.120000005, 0.228333309, 0.347499967, -0.286666662, -0.091111131, -0.0483333357,
	0.00499999896, -0.105000019, -0.215000004
};
static const float avg_pad_incl_ceil[] = { /* [1, 1, 3, 3] */
	0.0322222225, 0.127777755, 0.0133333206, 0.0166666582, 0.0511111096, -0.12333335,
	-0.0422222205, -0.040000014, -0.197777808
};
static const float avg_3d_dil[] = { /* [1, 1, 3, 3, 3] */
	0.0649999976, 0.32249999, 0.257499993, 0.161249995, 0.0199999809, -0.141250014,
	-0.370000005, -0.355000019, 0.0149999931, 0.00249999948, 0.19749999, 0.194999993,
	0.379999995, 0.113749981, -0.266250014, -0.151250005, -0.261250019, -0.109999999,
	0.00124999997, 0.0987499952, 0.0974999964, 0.189999998, 0.22874999, 0.0387499928,
	-0.247500002, -0.30250001, -0.0549999997
};
static const float avg_1d_same[] = { /* [1, 2, 4] */
	-0.370000005, 0.0149999857, 0.0849999785, 0.183333322, -0.475000024, -0.102500007,
	-0.0450000018, -0.396666676
};
static const float lp_2d[] = { /* [1, 1, 2, 2] */
	1.36298227, 1.47943079, 1.18169987, 1.59850943
};
static const float gavg[] = { /* [2, 3, 1, 1] */
	-0.0666666776, -0.106666677, 0.311666638, -0.186666667, 0.231666639, -0.275000006
};
static const float gmax[] = { /* [2, 3, 1, 1] */
	1.27999997, 1.00999999, 1.28999996, 0.75, 1.25, 0.75999999
};

static float xval(int64_t i) { return (float)(((i * 7) % 11 - 5) * 0.25 + (double)(i % 5) * 0.01); }

typedef struct pcfg {
	const char *op;
	int32_t rank;
	int64_t x[5];
	int64_t k[3], strides[3], dil[3], pads[6];
	int64_t ceil_mode, include_pad, storage_order, p;
	const char *auto_pad;
} pcfg;

static void run_pool(const pcfg *k, int64_t opset, const float *expect, const int64_t *expect_ind,
		     int64_t nexpect, const int64_t *yshape)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, k->op, 1, expect_ind ? 2 : 1);
	int32_t sp = k->rank - 2;
	if (k->k[0])
		nt_ints(n, "kernel_shape", k->k, sp);
	if (k->strides[0])
		nt_ints(n, "strides", k->strides, sp);
	if (k->dil[0])
		nt_ints(n, "dilations", k->dil, sp);
	int64_t nz = 0;
	for (int i = 0; i < 6; i++)
		nz |= k->pads[i];
	if (nz)
		nt_ints(n, "pads", k->pads, 2 * sp);
	if (k->ceil_mode)
		nt_int(n, "ceil_mode", 1);
	if (k->include_pad)
		nt_int(n, "count_include_pad", 1);
	if (k->storage_order)
		nt_int(n, "storage_order", 1);
	if (k->p)
		nt_int(n, "p", k->p);
	if (k->auto_pad)
		nt_str(n, "auto_pad", k->auto_pad);
	int64_t nx = om_shape_numel(k->rank, k->x);
	float *x = malloc(sizeof(float) * (size_t)nx);
	for (int64_t i = 0; i < nx; i++)
		x[i] = xval(i);
	om_tensor tx = nt_tensor(OM_FLOAT, k->rank, k->x, x);
	const om_tensor *in[] = {&tx};
	om_tensor out[2];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, opset, in, out, &st), OM_OK);
	nt_assert_shape(&out[0], k->rank, yshape);
	nt_assert_floats(&out[0], expect, nexpect, 1e-6f);
	if (expect_ind) {
		assert_int_equal(out[1].dtype, OM_INT64);
		nt_assert_shape(&out[1], k->rank, yshape);
		assert_memory_equal(out[1].data, expect_ind, sizeof(int64_t) * (size_t)nexpect);
		om_tensor_free(&out[1]);
	}
	om_tensor_free(&out[0]);
	free(x);
	om_model_free(m);
}

#define POOL(cfgv, opset, name, ind, ...)                                                      \
	run_pool(&(cfgv), opset, name, ind, sizeof name / sizeof name[0],                          \
		 (const int64_t[]){__VA_ARGS__})

static void maxpool_indices(void **state)
{
	(void)state;
	pcfg a = {"MaxPool", 4, {1, 2, 5, 6}, {3, 3}, {2, 2}, .pads = {1, 1, 1, 1}};
	POOL(a, 12, max_2d, max_2d_ind, 1, 2, 3, 3);
	pcfg b = {"MaxPool", 4, {1, 1, 7, 7}, {2, 2}, {2, 3}, {2, 1}, .ceil_mode = 1};
	POOL(b, 12, max_ceil_dil, max_ceil_dil_ind, 1, 1, 3, 3);
	pcfg c = {"MaxPool", 4, {2, 1, 4, 5}, {2, 3}, {1, 2}, .storage_order = 1};
	POOL(c, 12, max_colmajor, max_colmajor_ind, 2, 1, 3, 2);
}

static void averagepool_variants(void **state)
{
	(void)state;
	pcfg a = {"AveragePool", 4, {1, 1, 5, 5}, {3, 3}, {2, 2}, .pads = {1, 1, 1, 1}};
	POOL(a, 19, avg_pad_excl, NULL, 1, 1, 3, 3);
	pcfg b = {"AveragePool", 4, {1, 1, 6, 6}, {3, 3}, {2, 2}, .pads = {1, 1, 0, 0},
		  .ceil_mode = 1, .include_pad = 1};
	POOL(b, 19, avg_pad_incl_ceil, NULL, 1, 1, 3, 3);
	pcfg c = {"AveragePool", 5, {1, 1, 4, 5, 5}, {2, 2, 2}, {1, 2, 2}, {2, 1, 2},
		  {0, 1, 1, 1, 0, 1}, .include_pad = 1};
	POOL(c, 19, avg_3d_dil, NULL, 1, 1, 3, 3, 3);
	pcfg d = {"AveragePool", 3, {1, 2, 7}, {4}, {2}, .auto_pad = "SAME_LOWER"};
	POOL(d, 19, avg_1d_same, NULL, 1, 2, 4);
}

static void lppool_and_globals(void **state)
{
	(void)state;
	pcfg a = {"LpPool", 4, {1, 1, 4, 4}, {2, 2}, {2, 2}, .p = 3};
	POOL(a, 18, lp_2d, NULL, 1, 1, 2, 2);
	pcfg b = {"GlobalAveragePool", 4, {2, 3, 2, 3}, .p = 0};
	POOL(b, 1, gavg, NULL, 2, 3, 1, 1);
	pcfg c = {"GlobalMaxPool", 4, {2, 3, 2, 3}, .p = 0};
	POOL(c, 1, gmax, NULL, 2, 3, 1, 1);
}

/* The pool a row is (its param): one 2x2 window over [1, -2, 3, 4] through each windowed
 * and Global form, the same attributes (p = 2, LpPool's default; `p` is ignored by the
 * others) */
static void pool_kinds(void **state)
{
	(void)state;
	static const char *const ops[] = {"MaxPool", "AveragePool", "LpPool", "GlobalMaxPool",
					  "GlobalAveragePool", "GlobalLpPool"};
	const float want[] = {4, 1.5f, 5.4772256f}; /* max, mean, sqrt(1 + 4 + 9 + 16) */
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, -2, 3, 4});
	const om_tensor *in[] = {&tx};
	for (int i = 0; i < 6; i++) {
		om_model *m = om_model_new();
		om_node *n = nt_add_node(m, ops[i], 1, 1);
		if (i < 3)
			nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
		nt_int(n, "p", 2);
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 18, in, out, &st), OM_OK);
		nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, &want[i % 3], 1e-6);
		om_tensor_free(&out[0]);
		om_model_free(m);
	}
}

static void maxpool_uint8(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "MaxPool", 1, 1);
	nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
	const uint8_t x[] = {1, 250, 3, 4, 5, 6, 255, 0, 9};
	om_tensor tx = nt_tensor(OM_UINT8, 4, (int64_t[]){1, 1, 3, 3}, x);
	const om_tensor *in[] = {&tx};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 12, in, out, &st), OM_OK);
	assert_int_equal(out[0].dtype, OM_UINT8);
	const uint8_t want[] = {250, 250, 255, 9};
	assert_memory_equal(out[0].data, want, 4);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* MaxPool without Indices takes a separable path: it must agree with the windowed one (with
 * Indices) everywhere, NaN and -inf included, with pads, strides and ceil_mode. */
/* The separable path (no Indices) against the general one (with Indices): windows clipped
 * at every edge, interior columns per stride (1, 2 and 3 take different loops), widths
 * 1, 7, 17, NaN and -inf rows; stride 1 with rows as long as the input's (max_plane_s1:
 * same, asymmetric and over-wide padding, a window of one column) */
typedef struct sep_case {
	int64_t k[2], s[2], pads[4], ceil;
} sep_case;

static void maxpool_paths_agree(void **state)
{
	(void)state;
	static const sep_case cases[] = {
		{{3, 2}, {2, 3}, {1, 0, 1, 1}, 1}, {{3, 3}, {2, 2}, {1, 1, 1, 1}, 0},
		{{3, 3}, {1, 1}, {1, 1, 1, 1}, 0}, {{2, 2}, {2, 2}, {0, 0, 0, 0}, 0},
		{{1, 4}, {1, 3}, {0, 2, 0, 2}, 1}, {{2, 5}, {1, 1}, {0, 0, 0, 0}, 0},
		{{5, 3}, {1, 1}, {2, 0, 2, 2}, 0}, {{3, 3}, {1, 1}, {0, 1, 2, 1}, 0},
		{{3, 1}, {1, 1}, {1, 0, 1, 0}, 0}, {{2, 2}, {1, 1}, {2, 0, 0, 1}, 0},
	};
	static const int64_t widths[] = {1, 7, 11, 17};
	int nans = 0;
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
		for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
			const sep_case *k = &cases[ci];
			const int64_t xd[] = {2, 3, 9, widths[wi]}, nx = 2 * 3 * 9 * widths[wi];
			float x[2 * 3 * 9 * 17];
			for (int i = 0; i < nx; i++)
				x[i] = i % 17 == 3   ? NAN
				       : i % 13 == 5 ? -INFINITY
						     : (float)((i * 37) % 101) - 50;
			for (int64_t i = 4 * widths[wi]; i < 5 * widths[wi]; i++)
				x[i] = -INFINITY; /* a row of -inf */
			om_tensor tx = nt_tensor(OM_FLOAT, 4, xd, x);
			const om_tensor *in[] = {&tx};
			om_tensor with[2], without[1];
			om_status st = {0};
			int ok = 0;
			for (int nout = 1; nout <= 2; nout++) {
				om_model *m = om_model_new();
				om_node *n = nt_add_node(m, "MaxPool", 1, nout);
				nt_ints(n, "kernel_shape", k->k, 2);
				nt_ints(n, "strides", k->s, 2);
				nt_ints(n, "pads", k->pads, 4);
				nt_int(n, "ceil_mode", k->ceil);
				ok += om_eval_node(n, 12, in, nout == 2 ? with : without,
						   &st) == OM_OK;
				om_model_free(m);
			}
			if (!ok) /* both refuse a kernel wider than the padded input */
				continue;
			assert_int_equal(ok, 2);
			nt_assert_shape(&without[0], 4, with[0].dims);
			const float *a = with[0].data, *b = without[0].data;
			for (int64_t i = 0; i < om_tensor_numel(&with[0]); i++) {
				nans += isnan(a[i]);
				if (isnan(a[i]) ? !isnan(b[i]) : a[i] != b[i])
					fail_msg("case %zu width %lld at %lld: %g, general %g", ci,
						 (long long)widths[wi], (long long)i, (double)b[i],
						 (double)a[i]);
			}
			om_tensor_free(&with[0]);
			om_tensor_free(&with[1]);
			om_tensor_free(&without[0]);
		}
	assert_true(nans > 0);
}

/* AveragePool (2-D, no dilations): every output is the float sum of its taps in row-major
 * order divided by its count (inside the input, or inside the padded input with
 * count_include_pad), bit for bit, over window shapes, strides 1, 2 and 3, widths 1, 7, 17 */
static float avg_ref(const float *x, int64_t H, int64_t W, const sep_case *k, int pad_count,
		     int64_t oh, int64_t ow)
{
	float acc = 0;
	int64_t cnt = 0;
	for (int64_t th = 0; th < k->k[0]; th++)
		for (int64_t tw = 0; tw < k->k[1]; tw++) {
			const int64_t ih = oh * k->s[0] - k->pads[0] + th;
			const int64_t iw = ow * k->s[1] - k->pads[1] + tw;
			const bool in_pad = ih < H + k->pads[2] && iw < W + k->pads[3];
			if (ih >= 0 && ih < H && iw >= 0 && iw < W) {
				acc += x[ih * W + iw];
				cnt++;
			} else if (pad_count && in_pad) {
				cnt++;
			}
		}
	return acc / (float)cnt;
}

static void avg_case(const sep_case *k, int64_t W, int pc, const float *x)
{
	const int64_t xd[] = {1, 2, 9, W};
	om_tensor tx = nt_tensor(OM_FLOAT, 4, xd, x);
	const om_tensor *in[] = {&tx};
	om_tensor out[1];
	om_status st = {0};
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "AveragePool", 1, 1);
	nt_ints(n, "kernel_shape", k->k, 2);
	nt_ints(n, "strides", k->s, 2);
	nt_ints(n, "pads", k->pads, 4);
	nt_int(n, "count_include_pad", pc);
	if (om_eval_node(n, 11, in, out, &st) != OM_OK) { /* a kernel wider than the input */
		assert_true(W + k->pads[1] + k->pads[3] < k->k[1]);
		om_model_free(m);
		return;
	}
	const float *y = out[0].data;
	const int64_t OH = out[0].dims[2], OW = out[0].dims[3];
	for (int64_t i = 0; i < 2 * OH * OW; i++) {
		const int64_t c = i / (OH * OW), p = i % (OH * OW);
		const float want = avg_ref(x + c * 9 * W, 9, W, k, pc, p / OW, p % OW);
		if (memcmp(&y[i], &want, sizeof want))
			fail_msg("kernel %lldx%lld W %lld pad %d [%lld]: %.9g, want %.9g",
				 (long long)k->k[0], (long long)k->k[1], (long long)W, pc,
				 (long long)i, (double)y[i], (double)want);
	}
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void averagepool_rows(void **state)
{
	(void)state;
	static const sep_case cases[] = {
		{{3, 3}, {2, 2}, {1, 1, 1, 1}, 0}, {{3, 3}, {1, 1}, {1, 1, 1, 1}, 0},
		{{2, 2}, {2, 2}, {0, 0, 0, 0}, 0}, {{1, 4}, {1, 3}, {0, 2, 0, 2}, 0},
		{{2, 5}, {1, 1}, {0, 0, 0, 0}, 0}, {{3, 2}, {2, 3}, {1, 0, 1, 1}, 0},
	};
	static const int64_t widths[] = {1, 7, 17};
	float x[2 * 9 * 17];
	for (int i = 0; i < 2 * 9 * 17; i++)
		x[i] = (float)((i * 37) % 101) / 7.0f - 5.0f;
	for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++)
		for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
			for (int pc = 0; pc < 2; pc++)
				avg_case(&cases[ci], widths[wi], pc, x);
}

/* MaxUnpool moves each value to its flat index (int64 data here: any element type), zeros the
 * rest; output_shape overrides the extent; an index outside the output is an input error. */
static void maxunpool_values(void **state)
{
	(void)state;
	const int64_t x[] = {10, 20, 30, 40}, idx[] = {5, 7, 13, 15}, bad[] = {5, 7, 13, 16};
	const int64_t shape5[] = {1, 1, 5, 5};
	om_tensor tx = nt_tensor(OM_INT64, 4, (int64_t[]){1, 1, 2, 2}, x);
	om_tensor ti = nt_tensor(OM_INT64, 4, (int64_t[]){1, 1, 2, 2}, idx);
	om_tensor tb = nt_tensor(OM_INT64, 4, (int64_t[]){1, 1, 2, 2}, bad);
	om_tensor ts = nt_tensor(OM_INT64, 1, (int64_t[]){4}, shape5);
	for (int with_shape = 0; with_shape <= 1; with_shape++) {
		om_model *m = om_model_new();
		om_node *n = nt_add_node(m, "MaxUnpool", with_shape ? 3 : 2, 1);
		nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
		nt_ints(n, "strides", (int64_t[]){2, 2}, 2);
		const om_tensor *in[] = {&tx, &ti, &ts};
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 11, in, out, &st), OM_OK);
		int64_t side = with_shape ? 5 : 4;
		nt_assert_shape(&out[0], 4, (int64_t[]){1, 1, side, side});
		const int64_t *y = out[0].data;
		int64_t want[25] = {0};
		want[5] = 10, want[7] = 20, want[13] = 30, want[15] = 40;
		assert_memory_equal(y, want, sizeof(int64_t) * (size_t)(side * side));
		om_tensor_free(&out[0]);
		const om_tensor *bad_in[] = {&tx, &tb, &ts};
		assert_int_equal(om_eval_node(n, 11, bad_in, out, &st),
				 with_shape ? OM_OK : OM_ERR_INVALID_INPUT);
		if (with_shape)
			om_tensor_free(&out[0]);
		om_model_free(m);
	}
}

static om_kind infer_pool(const char *op, void (*attrs)(om_node *), om_tensor *out, om_status *st)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, op, 1, 1);
	attrs(n);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 4, 4}, NULL);
	const om_tensor *in[] = {&tx};
	om_kind rc = om_infer_node(n, 19, in, out, st);
	om_model_free(m);
	return rc;
}

static void no_kernel(om_node *n) { (void)n; }
static void kernel_too_big(om_node *n) { nt_ints(n, "kernel_shape", (int64_t[]){5, 2}, 2); }
static void wrong_rank(om_node *n) { nt_ints(n, "kernel_shape", (int64_t[]){2}, 1); }
static void bad_storage(om_node *n)
{
	nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
	nt_int(n, "storage_order", 2);
}
/* ceil_mode drops a window that would start in the end pad: ceil((4 + 1 - 2) / 2) + 1 = 3
 * windows, but the third starts at 4, past the input: 2 remain (ONNX Runtime agrees). */
static void ceil_drop(om_node *n)
{
	nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
	nt_ints(n, "strides", (int64_t[]){2, 2}, 2);
	nt_ints(n, "pads", (int64_t[]){0, 0, 1, 1}, 4);
	nt_int(n, "ceil_mode", 1);
}

static void pool_shapes_and_errors(void **state)
{
	(void)state;
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(infer_pool("MaxPool", no_kernel, out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.op, "MaxPool");
	assert_int_equal(infer_pool("AveragePool", kernel_too_big, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_pool("MaxPool", wrong_rank, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_pool("MaxPool", bad_storage, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_pool("MaxPool", ceil_drop, out, &st), OM_OK);
	nt_assert_shape(&out[0], 4, (int64_t[]){1, 1, 2, 2});
}

/* GlobalAveragePool in fast mode (16 partial sums) against exact mode's running sum, within
 * float rounding, over spatial sizes below, at and past multiples of 16 */
static void global_average_fast(void **state)
{
	(void)state;
	static const int64_t sizes[][2] = {{1, 1}, {3, 5}, {4, 4}, {7, 7}, {17, 19}, {56, 56}};
	static float x[2 * 3 * 56 * 56];
	for (size_t e = 0; e < sizeof sizes / sizeof *sizes; e++) {
		const int64_t d[] = {2, 3, sizes[e][0], sizes[e][1]};
		const int64_t S = d[2] * d[3];
		for (int64_t i = 0; i < 6 * S; i++)
			x[i] = xval(i) + 3.0f;
		om_tensor tx = nt_tensor(OM_FLOAT, 4, d, x);
		const om_tensor *in[] = {&tx};
		om_tensor fast[1], exact[1];
		om_status st = {0};
		om_model *m = om_model_new();
		om_node *n = nt_add_node(m, "GlobalAveragePool", 1, 1);
		assert_int_equal(nt_run_mode(n, 13, in, fast, 0, &st), OM_OK);
		assert_int_equal(nt_run_mode(n, 13, in, exact, 1, &st), OM_OK);
		const float *a = fast[0].data, *b = exact[0].data;
		for (int64_t i = 0; i < 6; i++) {
			double r = 0;
			for (int64_t j = 0; j < S; j++)
				r += x[i * S + j];
			r /= (double)S;
			assert_true(fabs(a[i] - r) <= 1e-6 * (double)(S + 4) * 4);
			assert_true(fabs(a[i] - b[i]) <= 1e-6 * (double)(S + 4) * 4);
		}
		om_tensor_free(&fast[0]);
		om_tensor_free(&exact[0]);
		om_model_free(m);
	}
}

/* 2-D AveragePool in fast mode (separable: window-column sums, then window-row sums) against
 * exact mode (taps row by row) at one and two threads: kernels, strides, pads (asymmetric,
 * a window past the input with ceil_mode), count_include_pad 0 and 1; within float rounding
 * of nine to 49 terms, where a wrong tap, row or divisor is off by 1e-2 or more */
static void average_fast(void **state)
{
	(void)state;
	static const struct {
		int64_t k, s, pb, pe, ceil, include;
	} cases[] = {{3, 1, 1, 1, 0, 1}, {3, 1, 1, 1, 0, 0}, {3, 2, 1, 1, 1, 0}, {2, 2, 0, 0, 0, 0},
		     {5, 3, 2, 1, 1, 1}, {7, 1, 0, 0, 0, 0}, {3, 1, 0, 2, 0, 0}};
	/* 6 planes of 19x23; one of 131x131 (over 16384 floats: the plain separable kernel even
	 * on AVX-512, where smaller planes go through blocks: pools_through_blocks) */
	static float x[131 * 131];
	const int64_t shapes[2][4] = {{2, 3, 19, 23}, {1, 1, 131, 131}};
	for (int64_t i = 0; i < 131 * 131; i++)
		x[i] = xval(i) + 3.0f;
	for (size_t e = 0; e < 2 * sizeof cases / sizeof *cases; e++) {
		om_tensor tx = nt_tensor(OM_FLOAT, 4, shapes[e % 2], x);
		const om_tensor *in[] = {&tx};
		om_model *m = om_model_new();
		om_node *n = nt_add_node(m, "AveragePool", 1, 1);
		const size_t ci = e / 2;
		const int64_t k = cases[ci].k, s = cases[ci].s;
		const int64_t pb = cases[ci].pb, pe = cases[ci].pe;
		nt_ints(n, "kernel_shape", (int64_t[]){k, k}, 2);
		nt_ints(n, "strides", (int64_t[]){s, s}, 2);
		nt_ints(n, "pads", (int64_t[]){pb, pb, pe, pe}, 4);
		nt_int(n, "ceil_mode", cases[ci].ceil);
		nt_int(n, "count_include_pad", cases[ci].include);
		om_tensor exact[1], fast[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 19, in, exact, 1, &st), OM_OK);
		for (int threads = 1; threads <= 2; threads++) {
			assert_int_equal(nt_run_threads(n, 19, in, fast, 0, threads, &st), OM_OK);
			assert_int_equal(fast[0].nbytes, exact[0].nbytes);
			const float *a = fast[0].data, *b = exact[0].data;
			for (int64_t i = 0; i < om_tensor_numel(&exact[0]); i++)
				if (!(fabsf(a[i] - b[i]) <= 1e-6f * fabsf(b[i]) * 8))
					fail_msg("case %zu [%lld]: fast %.9g, exact %.9g", e,
						 (long long)i, (double)a[i], (double)b[i]);
			om_tensor_free(&fast[0]);
		}
		om_tensor_free(&exact[0]);
		om_model_free(m);
	}
}

/* Fast mode's 2-D MaxPool and AveragePool of plain planes through 16-plane blocks (AVX-512;
 * elsewhere the plain kernels, whose AveragePool is within 8e-6 relative) against exact mode at
 * one and two threads, bit for bit (a NaN for a NaN): planes 3, 2 x 17 and 40 (groups of 16 and a short last one), windows with pads,
 * ceil_mode, strides, dilation and count_include_pad; inputs with NaNs, -inf and a row of
 * -inf, and with one NaN (in plane 21: the 16-plane groups without NaN take vmaxps alone) */
typedef struct via_case {
	int64_t k[2], s[2], d[2], pads[4], ceil, include;
} via_case;

static void through_blocks(const via_case *k, const int64_t *d, bool avg, const float *x)
{
	om_tensor tx = nt_tensor(OM_FLOAT, 4, d, x);
	const om_tensor *in[] = {&tx};
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, avg ? "AveragePool" : "MaxPool", 1, 1);
	nt_ints(n, "kernel_shape", k->k, 2);
	nt_ints(n, "strides", k->s, 2);
	nt_ints(n, "pads", k->pads, 4);
	nt_int(n, "ceil_mode", k->ceil);
	if (avg)
		nt_int(n, "count_include_pad", k->include);
	else
		nt_ints(n, "dilations", k->d, 2);
	/* the plain kernels' separable AveragePool adds in another order than exact mode */
	const bool bitwise = !avg || __builtin_cpu_supports("avx512f");
	om_tensor exact[1], fast[1];
	om_status st = {0};
	assert_int_equal(nt_run_mode(n, 19, in, exact, 1, &st), OM_OK);
	for (int threads = 1; threads <= 2; threads++) {
		assert_int_equal(nt_run_threads(n, 19, in, fast, 0, threads, &st), OM_OK);
		assert_int_equal(fast[0].nbytes, exact[0].nbytes);
		const float *a = fast[0].data, *b = exact[0].data;
		for (int64_t i = 0; i < om_tensor_numel(&exact[0]); i++)
			if (isnan(b[i]) ? !isnan(a[i])
			    : bitwise   ? a[i] != b[i]
					: !(a[i] == b[i] || fabsf(a[i] - b[i]) <= 8e-6f * fabsf(b[i])))
				fail_msg("%s, %lld planes, k %lldx%lld, [%lld]: fast %.9g, "
					 "exact %.9g", avg ? "avg" : "max", (long long)(d[0] * d[1]),
					 (long long)k->k[0], (long long)k->k[1], (long long)i,
					 (double)a[i], (double)b[i]);
		om_tensor_free(&fast[0]);
	}
	om_tensor_free(&exact[0]);
	om_model_free(m);
}

static void pools_through_blocks(void **state)
{
	(void)state;
	static const via_case cases[] = {{{3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1, 0},
					 {{3, 2}, {2, 3}, {1, 1}, {1, 0, 1, 1}, 1, 1},
					 {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0, 0},
					 {{2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0, 0},
					 {{3, 3}, {1, 2}, {2, 1}, {2, 1, 0, 1}, 0, 1},
					 {{5, 3}, {3, 1}, {1, 1}, {2, 0, 2, 2}, 1, 0}};
	static const int64_t planes[][2] = {{1, 3}, {2, 17}, {1, 40}};
	static float x[40 * 13 * 11], one[40 * 13 * 11];
	for (int64_t i = 0; i < 40 * 13 * 11; i++) {
		x[i] = i % 17 == 3 ? NAN : i % 13 == 5 ? -INFINITY : xval(i);
		one[i] = xval(i);
	}
	for (int64_t i = 2 * 11; i < 3 * 11; i++)
		x[i] = -INFINITY;
	one[(21 * 13 + 9) * 11 + 4] = NAN;
	for (size_t e = 0; e < sizeof cases / sizeof *cases; e++)
		for (size_t pi = 0; pi < 3; pi++) {
			const int64_t d[] = {planes[pi][0], planes[pi][1], 13, 11};
			through_blocks(&cases[e], d, false, x);
			through_blocks(&cases[e], d, true, x);
			through_blocks(&cases[e], d, false, one);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(maxpool_indices),    cmocka_unit_test(averagepool_variants),
		cmocka_unit_test(lppool_and_globals), cmocka_unit_test(maxpool_uint8),
		cmocka_unit_test(average_fast),
		cmocka_unit_test(pools_through_blocks),
		cmocka_unit_test(pool_shapes_and_errors), cmocka_unit_test(maxpool_paths_agree),
		cmocka_unit_test(maxunpool_values),   cmocka_unit_test(averagepool_rows),
		cmocka_unit_test(global_average_fast),
		cmocka_unit_test(pool_kinds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
