/* test_ops_conv.c — Conv and ConvTranspose: values against PyTorch (float64, exact dyadic data),
 * every path (im2col, 1x1, depthwise, 1-D/3-D, groups), fast = exact on these sums, errors. */
#include <stdlib.h>

#include "half.h"
#include "nodetest.h"

/* expected outputs computed by torch.nn.functional in float64 (all values are exact) */
static const float conv_basic[] = {
	-0.03125, -0.78125, 0.125, -1.375, 0.375, -0.9375, -0.125, -0.8125, -0.125, -0.5, -0.90625,
	-0.125, -1.5, 0.21875, -1.1875, -0.21875, 0.25, -0.03125, -1, 0.40625, 0.46875, -0.28125,
	0.625, -0.875, 0.875, -0.4375, 0.375, -0.3125, 0.375, 0, -0.40625, 0.375, -1, 0.71875,
	-0.6875, 0.28125, 0.75, 0.46875, -0.5, 0.90625, 0.96875, 0.21875, 1.125, -0.375, 1.375,
	0.0625, 0.875, 0.1875, 0.875, 0.5, 0.09375, 0.875, -0.5, 1.21875, -0.1875, 0.78125, 1.25,
	0.96875, 0, 1.40625
}; /* shape [1, 3, 4, 5] */
static const float conv_strided_group[] = {
	-1.4375, 0.34375, -0.625, -1.25, 0, 0.1875, -0.4375, -1.40625, 0.375, 0.0625, 0.5, -1.625,
	-0.3125, 0.65625, -0.15625, 0.84375, -0.9375, -0.3125, 0.65625, -0.53125, -0.4375, -0.125,
	-0.15625, -0.53125, 0, -0.78125, -0.1875, 0.75, -0.71875, -0.40625, 0.65625, 0.3125, 0.3125,
	1.6875, 0.21875, 0.3125, -0.40625, 1.96875, 0.90625, 0.53125, -0.9375, 1.34375, 1.5625,
	-0.96875, 0.6875, -1, -1.625, 0.15625, -0.8125, -0.96875, -1.4375, 0, -0.625, -1.59375,
	-0.65625, -0.625, 0.34375, -1.78125, -0.46875, -0.03125
}; /* shape [1, 4, 3, 5] */
static const float conv_depthwise[] = {
	0.5, -0.28125, -0.75, -0.6875, -0.75, -0.40625, 0.46875, 0.15625, -1.15625, 1, 0.21875,
	-0.25, -0.1875, -0.25, 0.09375, 0.96875, 0.65625, -0.65625, 1.65625, -0.125, -0.25, 0.40625,
	0.9375, 0.59375, 0.40625, 0.375, -0.25, 0.65625, -1.125, -1.25, -0.59375, -0.0625, -0.40625,
	-0.59375, -0.625, -1.25, -0.0625, -0.4375, -0.5625, -0.34375, 0.4375, -0.9375, -0.125,
	-0.21875, -0.15625, 0.4375, 0.0625, -0.0625, 0.15625, 0.9375, -0.4375, 0.375, 0.28125,
	0.34375, -0.40625, -0.75, -0.53125, -0.75, -0.40625, -0.0625, -0.65625, -1.15625, -0.75,
	0.09375, -0.25, -0.03125, -0.25, 0.09375, 0.4375, -0.15625, -0.65625, -0.25, -0.28125,
	-0.25, 0.65625, 1.03125, 0.59375, 0.9375, 0.3125, -0.25, 1.1875, -1.28125, -1.25, -0.34375,
	0.03125, -0.40625, -0.0625, -0.6875, -1.25, 0.1875, -0.625, -0.5625, 1.03125, 0.625,
	-0.9375, -0.25, -0.21875, -0.15625, 0.59375, -0.125, -0.0625, 1.53125, 1.125, -0.4375, 0.25,
	0.28125, 0.34375, 1.09375
}; /* shape [2, 6, 3, 3] */
static const float conv_depthwise_1d[] = {
	-0.46875, -0.90625, -0.03125, -0.3125, -0.59375, -1.21875, 0.28125, 0.15625, -0.65625, 0,
	0.3125, -0.1875
}; /* shape [1, 2, 6] */
static const float conv_pointwise[] = {
	0.0625, -0.5625, -0.84375, -1.125, -0.375, -0.65625, -0.375, -0.0625, 0.59375, 0.21875,
	-0.15625, 0.5, 1.15625, 0.4375, 0.0625, 0.71875, 0.34375, -0.03125, 0.0625, -0.5625,
	-0.84375, -1.125, -0.375, -0.65625, -0.1875, -0.125, -0.75, 0, 0.0625, -0.5625, -0.25,
	-0.28125, 0.03125, -0.34375, -0.375, -0.0625, 0.25, 1.25, 0.53125, 0.15625, 1.15625, 0.4375,
	-0.1875, -0.125, -0.75, 0, 0.0625, -0.5625
}; /* shape [2, 4, 2, 3] */
static const float conv_1d[] = {
	0.375, -1.4375, -0.40625, -0.03125, 0.8125, 0.25
}; /* shape [1, 2, 3] */
static const float conv_3d_expect[] = {
	-0.78125, 0.59375, -0.84375, 0, -0.46875, -1.5625, -1.09375, -0.5625, -0.0625, -0.75,
	-2.03125, 0.1875, -0.75, -0.0625, -0.25, -1.09375, 0.1875, 0.34375, -0.5625, 0.6875,
	-0.09375, 0.125, -0.21875, -0.65625, 0.40625, -1.34375, 0.28125, 0.34375, -0.53125,
	-0.28125, 0.28125, 0.28125, 0.1875, -0.46875, -0.28125, 0.3125
}; /* shape [1, 2, 3, 2, 3] */
static const float conv_same_upper[] = {
	0.4375, -0.25, 0.625, 0.4375, -0.9375, -0.0625, -0.21875, -0.15625, -0.25
}; /* shape [1, 1, 3, 3] */
static const float conv_same_lower[] = {
	1, 0.21875, -0.25, -0.1875, -0.25, 0.09375, 0.46875, 0.4375, -0.25
}; /* shape [1, 1, 3, 3] */
static const float convt_basic[] = {
	-0.25, -0.6875, 0.59375, -0.8125, 0.15625, -1.5, 0.03125, -2.125, 0.1875, -1.34375, -0.625,
	-0.75, 0.125, -1.3125, -0.3125, -0.40625, -0.09375, -0.03125, -0.53125, -0.5, -0.65625,
	0.21875, -0.875, -0.5, -0.5, 0.25, -0.1875, 1.09375, -0.3125, 0.65625, -1, 0.53125, -1.625,
	0.6875, -0.84375, -0.125, -0.25, 0.625, -0.8125, 0.1875, 0.09375, 0.40625, 0.46875,
	-0.03125, 0, -0.15625, 0.71875, -0.375, 0, 0, 0.75, 0.3125, 1.59375, 0.1875, 1.15625, -0.5,
	1.03125, -1.125, 1.1875, -0.34375, 0.375, 0.25, 1.125, -0.3125, 0.6875, 0.59375, 0.90625,
	0.96875, 0.46875, 0.5, 0.34375, 1.21875, 0.125, 0.5, 0.5
}; /* shape [1, 3, 5, 5] */
static const float convt_strided[] = {
	-0.5, -1.3125, -0.6875, -0.5, -0.5, -1.90625, -1.34375, -0.5, -0.5, -0.125, -0.96875, -0.5,
	-0.5, -0.40625, -0.1875, -0.5, -0.5, -0.3125, -0.21875, -0.5, -0.5, -0.3125, -0.46875, -0.5,
	0, -0.0625, 0.1875, 0, 0, -0.21875, 0.1875, 0, 0, 0.03125, 0.1875, 0, 0, 0.3125, 0.1875, 0,
	0, -0.21875, 0.1875, 0, 0, -0.46875, 0.375, 0
}; /* shape [1, 2, 6, 4] */
static const float convt_1d[] = {
	0.625, -0.15625, 0.21875, 0.0625, 0.0625, -0.0625, -0.4375, 0.15625, -0.46875, -0.3125,
	0.3125, -0.34375, -0.125, 0.0625, 0.125, 0.125, -0.3125, 0.46875, -0.125, 0.03125, 0.28125,
	-0.09375, -0.21875, 0.125, -0.375, 0, 0, 0.0625, -0.0625, -0.09375, 0.1875, -0.03125, -0.25,
	0.375, 0, 0
}; /* shape [2, 2, 9] */

static float xval(int64_t i) { return (float)((i * 7) % 11 - 5) * 0.25f; }
static float wval(int64_t i) { return (float)((i * 5) % 9 - 4) * 0.125f; }
static float bval(int64_t i) { return (float)(i % 3 - 1) * 0.5f; }

static float *fill(int32_t rank, const int64_t *d, float (*f)(int64_t))
{
	int64_t n = om_shape_numel(rank, d);
	float *p = malloc(sizeof(float) * (size_t)(n + 1));
	for (int64_t i = 0; i < n; i++)
		p[i] = f(i);
	return p;
}

typedef struct cfg {
	const char *op;
	int32_t rank;
	int64_t x[5], w[5];
	int64_t group;
	int64_t strides[3], dil[3], pads[6], opad[3];
	const char *auto_pad;
	int bias;
} cfg;

/* Runs the case in exact and fast mode and compares both with expect. */
static void run_case(const cfg *k, const float *expect, int64_t nexpect, const int64_t *yshape)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, k->op, k->bias ? 3 : 2, 1);
	int32_t sp = k->rank - 2;
	if (k->group != 1)
		nt_int(n, "group", k->group);
	if (k->strides[0])
		nt_ints(n, "strides", k->strides, sp);
	if (k->dil[0])
		nt_ints(n, "dilations", k->dil, sp);
	if (k->opad[0])
		nt_ints(n, "output_padding", k->opad, sp);
	int64_t nz = 0;
	for (int i = 0; i < 6; i++)
		nz |= k->pads[i];
	if (nz)
		nt_ints(n, "pads", k->pads, 2 * sp);
	if (k->auto_pad)
		nt_str(n, "auto_pad", k->auto_pad);
	float *x = fill(k->rank, k->x, xval), *w = fill(k->rank, k->w, wval);
	int64_t M = !strcmp(k->op, "Conv") ? k->w[0] : k->w[1] * k->group;
	float *b = fill(1, &M, bval);
	om_tensor tx = nt_tensor(OM_FLOAT, k->rank, k->x, x);
	om_tensor tw = nt_tensor(OM_FLOAT, k->rank, k->w, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, &M, b);
	const om_tensor *in[] = {&tx, &tw, &tb};
	for (int exact = 1; exact >= 0; exact--) {
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 13, in, out, exact, &st), OM_OK);
		nt_assert_shape(&out[0], k->rank, yshape);
		nt_assert_floats(&out[0], expect, nexpect, 1e-6f);
		om_tensor_free(&out[0]);
	}
	free(x), free(w), free(b);
	om_model_free(m);
}

#define CASE(cfgv, name, ...)                                                                  \
	run_case(&(cfgv), name, sizeof name / sizeof name[0], (const int64_t[]){__VA_ARGS__})

static void conv_basic_padded(void **state)
{
	(void)state;
	cfg k = {"Conv", 4, {1, 2, 4, 5}, {3, 2, 3, 3}, 1, .pads = {1, 1, 1, 1}, .bias = 1};
	CASE(k, conv_basic, 1, 3, 4, 5);
}

static void conv_strides_dilations_groups(void **state)
{
	(void)state;
	cfg k = {"Conv", 4, {1, 4, 7, 6}, {4, 2, 3, 2}, 2, {2, 1}, {2, 2}, {1, 0, 2, 1}, .bias = 1};
	CASE(k, conv_strided_group, 1, 4, 3, 5);
}

static void conv_depthwise_2d(void **state)
{
	(void)state;
	cfg k = {"Conv", 4, {2, 3, 5, 6}, {6, 1, 3, 3}, 3, {2, 2}, .pads = {1, 1, 1, 1}, .bias = 1};
	CASE(k, conv_depthwise, 2, 6, 3, 3);
}

static void conv_depthwise_1d_dilated(void **state)
{
	(void)state;
	cfg k = {"Conv", 3, {1, 2, 7}, {2, 1, 3}, 2, {1}, {2}, {2, 1}, .bias = 1};
	CASE(k, conv_depthwise_1d, 1, 2, 6);
}

static void conv_pointwise_1x1(void **state)
{
	(void)state;
	cfg k = {"Conv", 4, {2, 3, 2, 3}, {4, 3, 1, 1}, 1, .bias = 1};
	CASE(k, conv_pointwise, 2, 4, 2, 3);
}

static void conv_1d_no_bias(void **state)
{
	(void)state;
	cfg k = {"Conv", 3, {1, 2, 9}, {2, 2, 4}, 1, {3}, .pads = {2, 0}};
	CASE(k, conv_1d, 1, 2, 3);
}

static void conv_3d(void **state)
{
	(void)state;
	cfg k = {"Conv", 5, {1, 2, 3, 4, 3}, {2, 2, 2, 2, 2}, 1, {1, 2, 1},
		 .pads = {1, 0, 1, 0, 1, 0}, .bias = 1};
	CASE(k, conv_3d_expect, 1, 2, 3, 2, 3);
}

static void conv_auto_pad_same(void **state)
{
	(void)state;
	cfg up = {"Conv", 4, {1, 1, 6, 6}, {1, 1, 3, 3}, 1, {2, 2}, .auto_pad = "SAME_UPPER"};
	CASE(up, conv_same_upper, 1, 1, 3, 3);
	cfg lo = {"Conv", 4, {1, 1, 6, 6}, {1, 1, 3, 3}, 1, {2, 2}, .auto_pad = "SAME_LOWER"};
	CASE(lo, conv_same_lower, 1, 1, 3, 3);
}

static void convtranspose_basic(void **state)
{
	(void)state;
	cfg k = {"ConvTranspose", 4, {1, 2, 3, 3}, {2, 3, 3, 3}, 1, .bias = 1};
	CASE(k, convt_basic, 1, 3, 5, 5);
}

static void convtranspose_strided_grouped(void **state)
{
	(void)state;
	cfg k = {"ConvTranspose", 4, {1, 4, 3, 2}, {4, 1, 3, 2}, 2, {2, 3}, {1, 2}, {1, 1, 1, 1},
		 {1, 0}, .bias = 1};
	CASE(k, convt_strided, 1, 2, 6, 4);
}

static void convtranspose_1d(void **state)
{
	(void)state;
	cfg k = {"ConvTranspose", 3, {2, 1, 4}, {1, 2, 3}, 1, .strides = {2}};
	CASE(k, convt_1d, 2, 2, 9);
}

/* output_shape fixes the extent and the pads follow: NOTSET and SAME_LOWER put the odd pad at
 * the start, SAME_UPPER at the end (ONNX Runtime agrees). SAME_* alone give in * stride. */
static void convt_shape_case(const char *auto_pad, int with_shape, int head)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "ConvTranspose", 2, 1);
	nt_ints(n, "strides", (int64_t[]){2}, 1);
	if (with_shape)
		nt_ints(n, "output_shape", (int64_t[]){6}, 1);
	if (auto_pad)
		nt_str(n, "auto_pad", auto_pad);
	const float x[] = {1, 2, 3}, w[] = {1, 10, 100};
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, x);
	om_tensor tw = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, w);
	const om_tensor *in[] = {&tx, &tw};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_OK);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 1, 6});
	/* the full extent (3-1)*2 + 3 = 7 is 1 10 102 20 203 30 300 */
	const float full[] = {1, 10, 102, 20, 203, 30, 300};
	nt_assert_floats(&out[0], full + head, 6, 0);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void convtranspose_output_shape(void **state)
{
	(void)state;
	convt_shape_case(NULL, 1, 1);
	convt_shape_case("SAME_LOWER", 1, 1);
	convt_shape_case("SAME_UPPER", 1, 0);
	convt_shape_case("SAME_UPPER", 0, 0);
	convt_shape_case("SAME_LOWER", 0, 1);
}

static void conv_float16(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Conv", 3, 1);
	uint16_t x[6], w[2], b[1] = {om_float_to_half(0.5f)};
	for (int i = 0; i < 6; i++)
		x[i] = om_float_to_half((float)i);
	w[0] = om_float_to_half(1), w[1] = om_float_to_half(-2);
	om_tensor tx = nt_tensor(OM_FLOAT16, 3, (int64_t[]){1, 1, 6}, x);
	om_tensor tw = nt_tensor(OM_FLOAT16, 3, (int64_t[]){1, 1, 2}, w);
	om_tensor tb = nt_tensor(OM_FLOAT16, 1, (int64_t[]){1}, b);
	const om_tensor *in[] = {&tx, &tw, &tb};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 1, 5});
	const uint16_t *y = out[0].data;
	for (int i = 0; i < 5; i++)
		assert_true(om_half_to_float(y[i]) == (float)i - 2.0f * (float)(i + 1) + 0.5f);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static om_kind infer_conv(const int64_t *xd, const int64_t *wd, int64_t group,
			  void (*attrs)(om_node *), om_tensor *out, om_status *st)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Conv", 2, 1);
	if (group != 1)
		nt_int(n, "group", group);
	if (attrs)
		attrs(n);
	om_tensor tx = nt_tensor(OM_FLOAT, 4, xd, NULL), tw = nt_tensor(OM_FLOAT, 4, wd, NULL);
	const om_tensor *in[] = {&tx, &tw};
	om_kind rc = om_infer_node(n, 13, in, out, st);
	om_model_free(m);
	return rc;
}

static void big_pads(om_node *n) { nt_ints(n, "pads", (int64_t[]){0, 0, -1, 0}, 4); }
static void bad_kernel_shape(om_node *n) { nt_ints(n, "kernel_shape", (int64_t[]){3, 2}, 2); }
static void zero_stride(om_node *n) { nt_ints(n, "strides", (int64_t[]){0, 1}, 2); }
static void bad_auto_pad(om_node *n) { nt_str(n, "auto_pad", "SAME"); }
static void valid_pad(om_node *n)
{
	nt_str(n, "auto_pad", "VALID");
	nt_ints(n, "pads", (int64_t[]){5, 5, 5, 5}, 4);
	nt_ints(n, "strides", (int64_t[]){2, 3}, 2);
}

static void conv_shape_errors(void **state)
{
	(void)state;
	om_tensor out[1];
	om_status st = {0};
	const int64_t x[] = {1, 4, 5, 5};
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 1, valid_pad, out, &st), OM_OK);
	nt_assert_shape(&out[0], 4, (int64_t[]){1, 2, 2, 1});
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 2, NULL, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "Conv");
	assert_int_equal(infer_conv(x, (int64_t[]){3, 2, 3, 3}, 2, NULL, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 7, 3}, 1, NULL, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 1, big_pads, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 1, bad_kernel_shape, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 1, zero_stride, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 1, bad_auto_pad, out, &st),
			 OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_conv(x, (int64_t[]){2, 4, 3, 3}, 0, NULL, out, &st),
			 OM_ERR_INVALID_MODEL);
}

/* Pads far larger than the image: every window reads only padding, output is the bias. */
static void conv_pads_larger_than_input(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Conv", 3, 1);
	nt_ints(n, "pads", (int64_t[]){4, 4, 4, 4}, 4);
	const float x[] = {1, 2, 3, 4}, w[] = {1, 1, 1, 1}, b[] = {0.5f};
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, x);
	om_tensor tw = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, b);
	const om_tensor *in[] = {&tx, &tw, &tb};
	for (int exact = 1; exact >= 0; exact--) {
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 13, in, out, exact, &st), OM_OK);
		nt_assert_shape(&out[0], 4, (int64_t[]){1, 1, 9, 9});
		const float *y = out[0].data;
		/* (4,4) covers the whole image, (3,3) only its first pixel, corners nothing */
		assert_true(y[0] == 0.5f && y[40] == 10.5f && y[30] == 1.5f && y[80] == 0.5f);
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

/* Fast mode (Winograd F(4x4,3x3) for this 3x3 stride-1 conv, its products through BLAS)
 * agrees with the exact fixed-order path to float rounding: the sums here reach |w||x| ~ 40,
 * so 5e-5 is about 20 ulps of that scale (test_conv_winograd.c bounds the error tightly). */
static void conv_fast_matches_exact(void **state)
{
	(void)state;
	const int64_t xd[] = {2, 32, 20, 21}, wd[] = {30, 32, 3, 3}, bd[] = {30};
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Conv", 3, 1);
	nt_ints(n, "pads", (int64_t[]){1, 1, 1, 0}, 4);
	float *x = fill(4, xd, xval), *w = fill(4, wd, wval), *b = fill(1, bd, bval);
	for (int64_t i = 0; i < om_shape_numel(4, xd); i++)
		x[i] += (float)(i % 97) * 0.001f;
	om_tensor tx = nt_tensor(OM_FLOAT, 4, xd, x), tw = nt_tensor(OM_FLOAT, 4, wd, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, bd, b);
	const om_tensor *in[] = {&tx, &tw, &tb};
	om_tensor exact[1], fast[1];
	om_status st = {0};
	assert_int_equal(nt_run_mode(n, 13, in, exact, 1, &st), OM_OK);
	assert_int_equal(nt_run_mode(n, 13, in, fast, 0, &st), OM_OK);
	nt_assert_shape(&fast[0], 4, (int64_t[]){2, 30, 20, 20});
	nt_assert_floats(&fast[0], exact[0].data, om_tensor_numel(&exact[0]), 5e-5f);
	om_tensor_free(&exact[0]);
	om_tensor_free(&fast[0]);
	free(x), free(w), free(b);
	om_model_free(m);
}

/* ConvInteger: uint8 x with a zero point, per-channel w zero points, pads; int32 out (torch). */
static void convinteger_per_channel(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "ConvInteger", 4, 1);
	nt_ints(n, "pads", (int64_t[]){1, 1, 1, 1}, 4);
	const uint8_t x[] = {2, 3, 4, 5, 6, 7, 8, 9, 10}, w[] = {1, 2, 3, 4, 5, 6, 7, 8};
	const uint8_t xz[] = {1}, wz[] = {1, 2};
	om_tensor tx = nt_tensor(OM_UINT8, 4, (int64_t[]){1, 1, 3, 3}, x);
	om_tensor tw = nt_tensor(OM_UINT8, 4, (int64_t[]){2, 1, 2, 2}, w);
	om_tensor txz = nt_tensor(OM_UINT8, 0, NULL, xz);
	om_tensor twz = nt_tensor(OM_UINT8, 1, (int64_t[]){2}, wz);
	const om_tensor *in[] = {&tx, &tw, &txz, &twz};
	const int32_t want[] = {3,  8,  13, 6,  13, 25, 31,  12,  25, 43, 49, 18, 7,  8,  9,  0,
				6,  17, 28, 15, 28, 61, 79,  39,  58, 115, 133, 63, 28, 53, 60, 27};
	for (int exact = 1; exact >= 0; exact--) {
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 10, in, out, exact, &st), OM_OK);
		assert_int_equal(out[0].dtype, OM_INT32);
		nt_assert_shape(&out[0], 4, (int64_t[]){1, 2, 4, 4});
		assert_memory_equal(out[0].data, want, sizeof want);
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

/* QLinearConv: (sum (x - 10)(w - 1) + B) * 0.5 * 0.25 / y_scale + y_zp, rounded half to even and
 * saturated: uint8 and int8 outputs. */
static void qlinearconv_requantize(void **state)
{
	(void)state;
	const uint8_t x[] = {10, 20, 30, 40}, xz[] = {10}, w[] = {3}, wz[] = {1}, yzu[] = {100};
	const int8_t yzs[] = {100};
	const float xs[] = {0.5f}, ws[] = {0.25f}, ys[] = {0.125f}, ys2[] = {1.0f};
	const int32_t B[] = {4};
	om_tensor t[9];
	t[0] = nt_tensor(OM_UINT8, 4, (int64_t[]){1, 1, 2, 2}, x);
	t[1] = nt_tensor(OM_FLOAT, 0, NULL, xs);
	t[2] = nt_tensor(OM_UINT8, 0, NULL, xz);
	t[3] = nt_tensor(OM_UINT8, 4, (int64_t[]){1, 1, 1, 1}, w);
	t[4] = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, ws);
	t[5] = nt_tensor(OM_UINT8, 1, (int64_t[]){1}, wz);
	t[8] = nt_tensor(OM_INT32, 1, (int64_t[]){1}, B);
	/* sums 0 20 40 60, + B: 4 24 44 64 */
	struct {
		const float *ys;
		int32_t ydt;
		const void *yz;
		uint8_t want[4];
	} cases[] = {
		{ys, OM_UINT8, yzu, {104, 124, 144, 164}},  /* scale 1 */
		{ys, OM_INT8, yzs, {104, 124, 127, 127}},   /* saturates */
		{ys2, OM_UINT8, yzu, {100, 103, 106, 108}}, /* scale 1/8: 0.5 3 5.5 8, half even */
	};
	for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
		om_model *m = om_model_new();
		om_node *n = nt_add_node(m, "QLinearConv", 9, 1);
		t[6] = nt_tensor(OM_FLOAT, 0, NULL, cases[k].ys);
		t[7] = nt_tensor(cases[k].ydt, 0, NULL, cases[k].yz);
		const om_tensor *in[] = {&t[0], &t[1], &t[2], &t[3], &t[4],
					 &t[5], &t[6], &t[7], &t[8]};
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 10, in, out, &st), OM_OK);
		assert_int_equal(out[0].dtype, cases[k].ydt);
		assert_memory_equal(out[0].data, cases[k].want, 4);
		om_tensor_free(&out[0]);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conv_basic_padded),
		cmocka_unit_test(conv_strides_dilations_groups),
		cmocka_unit_test(conv_depthwise_2d),
		cmocka_unit_test(conv_depthwise_1d_dilated),
		cmocka_unit_test(conv_pointwise_1x1),
		cmocka_unit_test(conv_1d_no_bias),
		cmocka_unit_test(conv_3d),
		cmocka_unit_test(conv_auto_pad_same),
		cmocka_unit_test(convtranspose_basic),
		cmocka_unit_test(convtranspose_strided_grouped),
		cmocka_unit_test(convtranspose_1d),
		cmocka_unit_test(convtranspose_output_shape),
		cmocka_unit_test(conv_float16),
		cmocka_unit_test(conv_shape_errors),
		cmocka_unit_test(conv_pads_larger_than_input),
		cmocka_unit_test(conv_fast_matches_exact),
		cmocka_unit_test(convinteger_per_channel),
		cmocka_unit_test(qlinearconv_requantize),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
