/* test_ops_resize.c — Resize (10, 11, 13, 18, 19) and Upsample (7, 9): every mode, coordinate
 * transformation, nearest mode, tf_crop_and_resize with extrapolation, axes, aspect-ratio
 * policies, antialias; values from ONNX Runtime 1.30 on the same inputs (align_corners with
 * scales: from the ONNX reference, see docs/ops.md); errors and NEED_VALUE. */
#include <stdlib.h>

#include "half.h"
#include "nodetest.h"

/* expected outputs: ONNX Runtime (../shared/oracle) */
static const int32_t rs_nearest_i32[] = { /* [1, 4, 4] */
	0, 0, 1, 2, 0, 0, 1, 2, 3, 3, 4, 5, 3, 3, 4, 5
};
static const float rs_linear_sizes[] = { /* [1, 1, 3, 2] */
	0.153333351, 0.772083223, -0.211250007, -0.280000031, -0.57583338, -0.186249986
};
static const float rs_cubic_ac[] = { /* [1, 1, 6, 3] */
	-1.25, 0.0150000304, 1.27999997, -0.246488526, 0.0599713847, 0.616335928, 0.173199952,
	0.182374999, -0.27600044, -0.849199951, 0.397625059, -1.16400063, -0.45374018, 0.451884449,
	-0.72374016, 0.519999981, 0.413124979, 0.25
};
static const float rs_cubic_hp[] = { /* [1, 1, 6, 6] */
	-1.59083509, -0.264761984, 0.602003574, -0.595710993, 0.267867446, 1.59084511, -0.945962846,
	-0.318029791, 0.201280966, -0.140448466, 0.445178211, 1.13752186, 0.134829715, -0.41075927,
	-0.475870907, 0.619440436, 0.756110847, 0.406505913, 0.227798492, -0.316234112,
	-0.369432896, 0.777450979, 0.374378622, -0.509473622, -0.71955657, -0.0878332555,
	0.460488677, 0.244353682, -0.48445189, -1.09315777, -1.28130376, 0.0499511622, 0.956379354,
	-0.0696287975, -1.0030762, -1.45882797
};
static const float rs_crop_linear[] = { /* [1, 1, 3, 5] */
	9.5, -0.442999989, 0.0742499754, 0.270875275, 9.5, 9.5, -0.173500001, 0.0619999692,
	0.247249857, 9.5, 9.5, -0.12650007, 0.31400007, 0.0377495177, 9.5
};
static const float rs_crop_nearest[] = { /* [1, 1, 3, 3] */
	-1, -0.75, 1.00999999, -1, 0.790000021, -0.25, -1, -0.469999999, 1.28999996
};
static const float rs_aspect[] = { /* [1, 1, 3, 5] */
	-1.25, -0.0179999173, 0.0150000006, 0.0479999185, 1.27999997, -0.171999931, -0.312000066,
	0.0954999924, 0.513500035, 0.397999942, 0.289999992, -0.438000053, 0.129999995, 0.713000059,
	0.0199999996
};
static const float rs_antialias[] = { /* [1, 1, 3, 2] */
	0.0111059286, -0.0614880733, 0.116720363, 0.00524234399, -0.0613516867, -0.0899107456
};
static const float rs_antialias_cubic[] = { /* [1, 1, 2, 3] */
	-0.156662211, 0.142628491, -0.0187986847, 0.0273730829, 0.0216402039, -0.123024531
};
static const float rs_symmetric[] = { /* [1, 1, 5, 3] */
	-0.663333416, -0.47999987, 0.620000124, -0.457450986, -0.2741175, 0.448431373, -0.163333356,
	0.0200001188, 0.20333308, -0.408431411, 0.31411761, 0.497450769, -0.579999983, 0.519999802,
	0.70333302
};
static const float rs_floor_asym[] = { /* [1, 1, 7, 2] */
	-1.25, -0.479999989, -0.75, 0.0199999996, -0.75, 0.0199999996, -0.25, 0.519999981, -0.25,
	0.519999981, -0.25, 0.519999981, -0.25, 0.519999981
};
static const float up7[] = { /* [1, 1, 4, 9] */
	-1.25, -1.25, -1.25, 0.50999999, 0.50999999, 0.50999999, -0.479999989, -0.479999989,
	-0.479999989, -1.25, -1.25, -1.25, 0.50999999, 0.50999999, 0.50999999, -0.479999989,
	-0.479999989, -0.479999989, 1.27999997, 1.27999997, 1.27999997, 0.289999992, 0.289999992,
	0.289999992, -0.75, -0.75, -0.75, 1.27999997, 1.27999997, 1.27999997, 0.289999992,
	0.289999992, 0.289999992, -0.75, -0.75, -0.75
};
static const float up9_linear[] = { /* [1, 1, 4, 7] */
	-1.25, -0.546000004, 0.158000007, 0.311999947, -0.0840000361, -0.479999989, -0.479999989,
	0.0149999857, 0.169, 0.322999984, 0.196999937, -0.209000036, -0.61500001, -0.61500001,
	1.27999997, 0.883999944, 0.487999976, 0.0819999427, -0.334000021, -0.75, -0.75, 1.27999997,
	0.883999944, 0.487999976, 0.0819999427, -0.334000021, -0.75, -0.75
};
static const float rs10[] = { /* [1, 1, 2, 6] */
	-1.25, -1.25, 0.50999999, 0.50999999, -0.479999989, 1.27999997, -0.970000029, -0.970000029,
	0.790000021, 0.790000021, -0.25, -1.24000001
};

/* align_corners with scales whose in * scale is not an integer: the ONNX reference
 * (python3-onnx interpolate_nd) maps with the unfloored in * scale. ONNX Runtime maps with the
 * output extent and gives {-1.25, 1.28} and {-1.25, -0.48, 0.29, 0.25, 1.02, -0.96}. */
static const float rs_ac_scales_linear[] = { /* [1, 1, 1, 2]: in * scale = 1.2, 2.4 */
	-1.25, -0.22857143
};
static const float rs_ac_scales_cubic[] = { /* [1, 1, 2, 3]: in * scale = 2.4, 3.5 */
	-1.25, -0.159239992, 1.27471995, -0.150145769, -0.126963049, -0.213985547
};

static float xval(int64_t i) { return (float)(((i * 7) % 11 - 5) * 0.25 + (double)(i % 5) * 0.01); }

typedef struct rcase {
	const char *op;
	int64_t opset;
	int32_t rank;
	int64_t x[4];
	int64_t nroi;
	float roi[8];
	int64_t nscales;
	float scales[4];
	int64_t nsizes;
	int64_t sizes[4];
	void (*attrs)(om_node *);
} rcase;

/* Builds the node with the input layout of its opset; in[] and tensors point into storage. */
static om_node *build(om_model *m, const rcase *k, om_tensor *t, const om_tensor **in)
{
	bool legacy = !strcmp(k->op, "Upsample") || k->opset < 11;
	int32_t nin = legacy ? (k->opset < 9 ? 1 : 2) : (k->nsizes ? 4 : 3);
	om_node *n = nt_add_node(m, k->op, nin, 1);
	if (k->attrs)
		k->attrs(n);
	for (int32_t i = 0; i < nin; i++)
		in[i] = NULL;
	in[0] = &t[0];
	int32_t si = legacy ? 1 : 2;
	if (!legacy && k->nroi) {
		t[1] = nt_tensor(OM_FLOAT, 1, &k->nroi, k->roi);
		in[1] = &t[1];
	}
	if (!legacy && !k->nroi && k->opset < 13) {
		/* roi may not be "" before opset 13: exporters give an empty one */
		static const float none[1];
		t[1] = nt_tensor(OM_FLOAT, 1, (int64_t[]){0}, none);
		in[1] = &t[1];
	}
	if (k->nscales) {
		t[si] = nt_tensor(OM_FLOAT, 1, &k->nscales, k->scales);
		in[si] = &t[si];
	}
	if (k->nsizes) {
		t[3] = nt_tensor(OM_INT64, 1, &k->nsizes, k->sizes);
		in[3] = &t[3];
	}
	for (int32_t i = 1; i < nin; i++)
		if (!in[i])
			n->in[i] = NULL;
	return n;
}

static void run_resize(const rcase *k, const float *expect, int64_t nexpect,
		       const int64_t *yshape)
{
	om_model *m = om_model_new();
	om_tensor t[4];
	const om_tensor *in[4];
	int64_t nx = om_shape_numel(k->rank, k->x);
	float *x = malloc(sizeof(float) * (size_t)nx);
	for (int64_t i = 0; i < nx; i++)
		x[i] = xval(i);
	t[0] = nt_tensor(OM_FLOAT, k->rank, k->x, x);
	om_node *n = build(m, k, t, in);
	om_tensor out[1];
	om_status st = {0};
	om_kind rc = om_eval_node(n, k->opset, in, out, &st);
	if (rc)
		fail_msg("%s", st.msg);
	nt_assert_shape(&out[0], k->rank, yshape);
	nt_assert_floats(&out[0], expect, nexpect, 2e-6f);
	om_tensor_free(&out[0]);
	free(x);
	om_model_free(m);
}

#define RESIZE(k, name, ...)                                                                   \
	run_resize(&(k), name, sizeof name / sizeof name[0], (const int64_t[]){__VA_ARGS__})

static void a_linear(om_node *n) { nt_str(n, "mode", "linear"); }
static void a_cubic_ac(om_node *n)
{
	nt_str(n, "mode", "cubic");
	nt_str(n, "coordinate_transformation_mode", "align_corners");
	nt_float(n, "cubic_coeff_a", -0.5f);
	nt_int(n, "exclude_outside", 1);
}
static void a_cubic(om_node *n) { nt_str(n, "mode", "cubic"); }
static void a_linear_ac(om_node *n)
{
	nt_str(n, "mode", "linear");
	nt_str(n, "coordinate_transformation_mode", "align_corners");
}
static void a_cubic_ac_plain(om_node *n)
{
	nt_str(n, "mode", "cubic");
	nt_str(n, "coordinate_transformation_mode", "align_corners");
}
static void a_crop_linear(om_node *n)
{
	nt_str(n, "mode", "linear");
	nt_str(n, "coordinate_transformation_mode", "tf_crop_and_resize");
	nt_float(n, "extrapolation_value", 9.5f);
}
static void a_crop_nearest(om_node *n)
{
	nt_ints(n, "axes", (int64_t[]){2, 3}, 2);
	nt_str(n, "coordinate_transformation_mode", "tf_crop_and_resize");
	nt_float(n, "extrapolation_value", -1.0f);
	nt_str(n, "nearest_mode", "round_prefer_ceil");
}
static void a_aspect(om_node *n)
{
	nt_ints(n, "axes", (int64_t[]){3, 2}, 2);
	nt_str(n, "mode", "linear");
	nt_str(n, "keep_aspect_ratio_policy", "not_larger");
	nt_str(n, "coordinate_transformation_mode", "pytorch_half_pixel");
}
static void a_antialias(om_node *n)
{
	nt_str(n, "mode", "linear");
	nt_int(n, "antialias", 1);
}
static void a_antialias_cubic(om_node *n)
{
	nt_str(n, "mode", "cubic");
	nt_int(n, "antialias", 1);
}
static void a_symmetric(om_node *n)
{
	nt_str(n, "mode", "linear");
	nt_str(n, "coordinate_transformation_mode", "half_pixel_symmetric");
}
static void a_ceil_asym(om_node *n)
{
	nt_str(n, "nearest_mode", "ceil");
	nt_str(n, "coordinate_transformation_mode", "asymmetric");
}
static void a_up7(om_node *n) { nt_floats(n, "scales", (float[]){1, 1, 2, 3}, 4); }

/* k's node run on xval's input into out[0] (the status kind) */
static om_kind eval_case(const rcase *k, om_tensor *out)
{
	om_model *m = om_model_new();
	om_tensor t[4];
	const om_tensor *in[4];
	const int64_t nx = om_shape_numel(k->rank, k->x);
	float *x = malloc(sizeof(float) * (size_t)nx);
	for (int64_t i = 0; i < nx; i++)
		x[i] = xval(i);
	t[0] = nt_tensor(OM_FLOAT, k->rank, k->x, x);
	om_status st = {0};
	const om_kind rc = om_eval_node(build(m, k, t, in), k->opset, in, out, &st);
	free(x);
	om_model_free(m);
	return rc;
}

/* What each Resize row means (its param): antialias, axes and keep_aspect_ratio_policy are
 * read from opset 18 (before, ignored as attributes the signature does not know),
 * half_pixel_symmetric is a mode from 19, cubic from 11 */
static void resize_rows(void **state)
{
	(void)state;
	om_tensor a, b, c;
	const rcase aa13 = {"Resize", 13, 4, {1, 1, 6, 6}, .nscales = 4,
			    .scales = {1, 1, 0.5f, 0.34f}, .attrs = a_antialias};
	rcase plain18 = aa13, aa18 = aa13;
	plain18.opset = aa18.opset = 18;
	plain18.attrs = a_linear;
	assert_int_equal(eval_case(&aa13, &a), OM_OK);
	assert_int_equal(eval_case(&plain18, &b), OM_OK);
	assert_int_equal(eval_case(&aa18, &c), OM_OK);
	assert_int_equal(a.nbytes, b.nbytes);
	assert_memory_equal(a.data, b.data, a.nbytes);
	nt_assert_floats(&c, rs_antialias, sizeof rs_antialias / sizeof *rs_antialias, 2e-6f);
	assert_memory_not_equal(a.data, c.data, a.nbytes);
	om_tensor_free(&a), om_tensor_free(&b), om_tensor_free(&c);
	/* axes name the two sizes at 18; at 13 two sizes are too few for rank 4 */
	rcase axes = {"Resize", 18, 4, {1, 1, 4, 4}, 4, {0.2f, -0.3f, 0.9f, 0.8f}, .nsizes = 2,
		      .sizes = {3, 3}, .attrs = a_crop_nearest};
	assert_int_equal(eval_case(&axes, &a), OM_OK);
	om_tensor_free(&a);
	axes.opset = 13;
	assert_int_equal(eval_case(&axes, &a), OM_ERR_INVALID_MODEL);
	rcase sym = {"Resize", 19, 4, {1, 1, 3, 5}, .nscales = 4, .scales = {1, 1, 1.7f, 0.6f},
		     .attrs = a_symmetric};
	assert_int_equal(eval_case(&sym, &a), OM_OK);
	om_tensor_free(&a);
	sym.opset = 18;
	assert_int_equal(eval_case(&sym, &a), OM_ERR_INVALID_MODEL);
	rcase cubic = {"Resize", 11, 4, {1, 1, 3, 4}, .nscales = 4, .scales = {1, 1, 2, 1.5f},
		       .attrs = a_cubic};
	assert_int_equal(eval_case(&cubic, &a), OM_OK);
	om_tensor_free(&a);
	cubic.opset = 10;
	assert_int_equal(eval_case(&cubic, &a), OM_ERR_INVALID_MODEL);
}

static void resize_nearest_int32(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	const int32_t x[] = {0, 1, 2, 3, 4, 5};
	const float scales[] = {1, 2, 1.5f};
	om_tensor tx = nt_tensor(OM_INT32, 3, (int64_t[]){1, 2, 3}, x);
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, scales);
	om_node *n = nt_add_node(m, "Resize", 3, 1);
	n->in[1] = NULL;
	const om_tensor *in[] = {&tx, NULL, &ts};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT32);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 4, 4});
	assert_memory_equal(out[0].data, rs_nearest_i32, sizeof rs_nearest_i32);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* Nearest upsampling by whole factors, elements of 1, 2, 4 and 8 bytes: y[n, c, i, j] =
 * x[n, c / fc, i / f, j / f] (half_pixel with round_prefer_floor at 2x, asymmetric with floor
 * at 3x): the doubled rows of 4-byte elements, output rows copied from the previous one (also
 * across a resized channel axis), the element gather of the others. */
static void a_asym_floor(om_node *n)
{
	nt_str(n, "coordinate_transformation_mode", "asymmetric");
	nt_str(n, "nearest_mode", "floor");
}

static void resize_nearest_whole_factors(void **state)
{
	(void)state;
	static const int32_t types[] = {OM_INT8, OM_FLOAT16, OM_FLOAT, OM_INT64};
	const int64_t xd[] = {2, 3, 5, 4};
	for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
		for (int64_t f = 2; f <= 3; f++) {
			const int64_t fc = 5 - f; /* the channel axis: 3x at 2x, 2x at 3x */
			const size_t es = om_dtype_size(types[ti]);
			const int64_t yd[] = {2, 3 * fc, 5 * f, 4 * f};
			const int64_t nx = om_shape_numel(4, xd), ny = om_shape_numel(4, yd);
			unsigned char *x = malloc(es * (size_t)nx), *ref = malloc(es * (size_t)ny);
			for (size_t b = 0; b < es * (size_t)nx; b++)
				x[b] = (unsigned char)(b * 7 + 3);
			for (int64_t o = 0; o < ny; o++) {
				const int64_t j = o % yd[3], i = o / yd[3] % yd[2];
				const int64_t c = o / (yd[3] * yd[2]) % yd[1];
				const int64_t n = o / (yd[3] * yd[2] * yd[1]);
				const int64_t src = ((n * 3 + c / fc) * 5 + i / f) * 4 + j / f;
				memcpy(ref + (size_t)o * es, x + (size_t)src * es, es);
			}
			const float scales[] = {1, (float)fc, (float)f, (float)f};
			om_model *m = om_model_new();
			om_tensor tx = nt_tensor(types[ti], 4, xd, x);
			om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, scales);
			om_node *nd = nt_add_node(m, "Resize", 3, 1);
			nd->in[1] = NULL;
			if (f == 3)
				a_asym_floor(nd);
			const om_tensor *in[] = {&tx, NULL, &ts};
			om_tensor out[1];
			om_status st = {0};
			assert_int_equal(om_eval_node(nd, 13, in, out, &st), OM_OK);
			nt_assert_shape(&out[0], 4, yd);
			assert_memory_equal(out[0].data, ref, es * (size_t)ny);
			om_tensor_free(&out[0]);
			om_model_free(m);
			free(x), free(ref);
		}
}

static void resize_linear_cubic(void **state)
{
	(void)state;
	rcase a = {"Resize", 13, 4, {1, 1, 4, 5}, .nsizes = 4, .sizes = {1, 1, 3, 2},
		   .attrs = a_linear};
	RESIZE(a, rs_linear_sizes, 1, 1, 3, 2);
	rcase b = {"Resize", 13, 4, {1, 1, 4, 4}, .nscales = 4, .scales = {1, 1, 1.5f, 0.75f},
		   .attrs = a_cubic_ac};
	RESIZE(b, rs_cubic_ac, 1, 1, 6, 3);
	rcase c = {"Resize", 13, 4, {1, 1, 3, 4}, .nscales = 4, .scales = {1, 1, 2, 1.5f},
		   .attrs = a_cubic};
	RESIZE(c, rs_cubic_hp, 1, 1, 6, 6);
}

/* the ONNX reference's length_resized (in * scale) where ONNX Runtime uses the floored extent */
static void resize_align_corners_scales(void **state)
{
	(void)state;
	rcase a = {"Resize", 13, 4, {1, 1, 2, 4}, .nscales = 4, .scales = {1, 1, 0.6f, 0.6f},
		   .attrs = a_linear_ac};
	RESIZE(a, rs_ac_scales_linear, 1, 1, 1, 2);
	rcase b = {"Resize", 13, 4, {1, 1, 4, 5}, .nscales = 4, .scales = {1, 1, 0.6f, 0.7f},
		   .attrs = a_cubic_ac_plain};
	RESIZE(b, rs_ac_scales_cubic, 1, 1, 2, 3);
}

static void resize_tf_crop_and_resize(void **state)
{
	(void)state;
	rcase a = {"Resize", 13, 4, {1, 1, 4, 4}, 8, {0, 0, 0.1f, -0.2f, 1, 1, 0.8f, 1.1f},
		   .nsizes = 4, .sizes = {1, 1, 3, 5}, .attrs = a_crop_linear};
	RESIZE(a, rs_crop_linear, 1, 1, 3, 5);
	rcase b = {"Resize", 18, 4, {1, 1, 4, 4}, 4, {0.2f, -0.3f, 0.9f, 0.8f}, .nsizes = 2,
		   .sizes = {3, 3}, .attrs = a_crop_nearest};
	RESIZE(b, rs_crop_nearest, 1, 1, 3, 3);
}

static void resize_opset18_19(void **state)
{
	(void)state;
	rcase a = {"Resize", 18, 4, {1, 1, 2, 4}, .nsizes = 2, .sizes = {5, 5}, .attrs = a_aspect};
	RESIZE(a, rs_aspect, 1, 1, 3, 5);
	rcase b = {"Resize", 18, 4, {1, 1, 6, 6}, .nscales = 4, .scales = {1, 1, 0.5f, 0.34f},
		   .attrs = a_antialias};
	RESIZE(b, rs_antialias, 1, 1, 3, 2);
	rcase c = {"Resize", 18, 4, {1, 1, 5, 7}, .nsizes = 4, .sizes = {1, 1, 2, 3},
		   .attrs = a_antialias_cubic};
	RESIZE(c, rs_antialias_cubic, 1, 1, 2, 3);
	rcase d = {"Resize", 19, 4, {1, 1, 3, 5}, .nscales = 4, .scales = {1, 1, 1.7f, 0.6f},
		   .attrs = a_symmetric};
	RESIZE(d, rs_symmetric, 1, 1, 5, 3);
}

static void resize_legacy(void **state)
{
	(void)state;
	rcase a = {"Resize", 11, 4, {1, 1, 3, 5}, .nscales = 4, .scales = {1, 1, 2.5f, 0.5f},
		   .attrs = a_ceil_asym};
	RESIZE(a, rs_floor_asym, 1, 1, 7, 2);
	rcase b = {"Upsample", 7, 4, {1, 1, 2, 3}, .attrs = a_up7};
	RESIZE(b, up7, 1, 1, 4, 9);
	rcase c = {"Upsample", 9, 4, {1, 1, 2, 3}, .nscales = 4, .scales = {1, 1, 2, 2.5f},
		   .attrs = a_linear};
	RESIZE(c, up9_linear, 1, 1, 4, 7);
	rcase d = {"Resize", 10, 4, {1, 1, 4, 4}, .nscales = 4, .scales = {1, 1, 0.5f, 1.6f}};
	RESIZE(d, rs10, 1, 1, 2, 6);
}

static void resize_float16(void **state)
{
	(void)state;
	om_model *m = om_model_new();
	uint16_t x[4];
	for (int i = 0; i < 4; i++)
		x[i] = om_float_to_half((float)(i * i));
	const float scales[] = {2};
	om_tensor tx = nt_tensor(OM_FLOAT16, 1, (int64_t[]){4}, x);
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, scales);
	om_node *n = nt_add_node(m, "Resize", 3, 1);
	nt_str(n, "mode", "linear");
	nt_str(n, "coordinate_transformation_mode", "asymmetric");
	n->in[1] = NULL;
	const om_tensor *in[] = {&tx, NULL, &ts};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, out, &st), OM_OK);
	assert_int_equal(out[0].dtype, OM_FLOAT16);
	/* 0 1 4 9 at x/2: 0 .5 1 2.5 4 6.5 9 9 */
	const float want[] = {0, 0.5f, 1, 2.5f, 4, 6.5f, 9, 9};
	const uint16_t *y = out[0].data;
	for (int i = 0; i < 8; i++)
		assert_true(om_half_to_float(y[i]) == want[i]);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static om_kind infer_resize(const om_tensor *scales, const om_tensor *sizes, om_tensor *out,
			    om_status *st)
{
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Resize", 4, 1);
	n->in[1] = NULL;
	om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){3, 4}, NULL);
	const om_tensor *in[] = {&tx, NULL, scales, sizes};
	om_kind rc = om_infer_node(n, 13, in, out, st);
	om_model_free(m);
	return rc;
}

/* Larger images, split over two threads: exact mode gives the same bits at one and two threads;
 * fast mode (the last axis resampled first, plane by plane when only the last two resize) the
 * same bits at one and two, and exact's values within 1e-5 (linear and cubic upsampling,
 * antialiased linear downsampling, three axes resized) */
static void resize_fast_and_threads(void **state)
{
	(void)state;
	const rcase cases[] = {
		{"Resize", 13, 4, {1, 4, 40, 50}, .nscales = 4, .scales = {1, 1, 3, 3},
		 .attrs = a_linear},
		{"Resize", 13, 4, {1, 4, 40, 50}, .nscales = 4, .scales = {1, 1, 2.5f, 3},
		 .attrs = a_cubic},
		{"Resize", 18, 4, {1, 4, 120, 150}, .nscales = 4, .scales = {1, 1, 0.4f, 0.3f},
		 .attrs = a_antialias},
		/* planes over two leading axes, and over one (fast mode: plane by plane) */
		{"Resize", 13, 4, {2, 3, 30, 20}, .nscales = 4, .scales = {1, 1, 2, 2},
		 .attrs = a_linear},
		{"Resize", 13, 3, {5, 30, 20}, .nscales = 3, .scales = {1, 2, 1.5f},
		 .attrs = a_linear},
		/* one image: its output rows split over the threads in bands, big enough
		 * for several bands a piece (upsampling), or taps spread wide (antialias) */
		{"Resize", 13, 4, {1, 1, 300, 700}, .nscales = 4, .scales = {1, 1, 2.5f, 3},
		 .attrs = a_linear},
		{"Resize", 18, 4, {1, 1, 600, 500}, .nscales = 4, .scales = {1, 1, 0.3f, 0.4f},
		 .attrs = a_antialias},
		/* a third axis resized: the passes over the whole tensor */
		{"Resize", 13, 4, {2, 3, 20, 30}, .nscales = 4, .scales = {1, 2, 2, 2},
		 .attrs = a_linear},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		const rcase *k = &cases[i];
		om_model *m = om_model_new();
		om_tensor t[4], y[4];
		const om_tensor *in[4];
		const int64_t nx = om_shape_numel(k->rank, k->x);
		float *x = malloc(sizeof(float) * (size_t)nx);
		for (int64_t e = 0; e < nx; e++)
			x[e] = xval(e);
		t[0] = nt_tensor(OM_FLOAT, k->rank, k->x, x);
		const om_node *n = build(m, k, t, in);
		om_status st = {0};
		for (int r = 0; r < 4; r++) /* exact 1, exact 2, fast 1, fast 2 threads */
			if (nt_run_threads(n, k->opset, in, &y[r], r < 2, 1 + r % 2, &st))
				fail_msg("case %zu: %s", i, st.msg);
		assert_int_equal(y[0].nbytes, y[2].nbytes);
		assert_memory_equal(y[0].data, y[1].data, y[0].nbytes);
		assert_memory_equal(y[2].data, y[3].data, y[2].nbytes);
		const float *a = y[0].data, *b = y[2].data;
		for (int64_t e = 0; e < om_tensor_numel(&y[0]); e++)
			if (!(fabsf(a[e] - b[e]) <= 1e-5f * (1 + fabsf(a[e]))))
				fail_msg("case %zu [%lld]: fast %.9g, exact %.9g", i, (long long)e,
					 (double)b[e], (double)a[e]);
		for (int r = 0; r < 4; r++)
			om_tensor_free(&y[r]);
		free(x);
		om_model_free(m);
	}
}

static void resize_shapes_and_errors(void **state)
{
	(void)state;
	om_tensor out[1];
	om_status st = {0};
	const float sc[] = {2, 0.5f}, bad[] = {2, -1}, big[] = {1, 1e30f};
	const int64_t sz[] = {5, 6};
	om_tensor ts = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, sc);
	om_tensor tz = nt_tensor(OM_INT64, 1, (int64_t[]){2}, sz);
	om_tensor unknown = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, NULL);
	om_tensor empty = nt_tensor(OM_FLOAT, 1, (int64_t[]){0}, NULL);
	om_tensor tbad = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, bad);
	om_tensor tbig = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, big);
	assert_int_equal(infer_resize(&ts, NULL, out, &st), OM_OK);
	nt_assert_shape(&out[0], 2, (int64_t[]){6, 2});
	assert_int_equal(infer_resize(&empty, &tz, out, &st), OM_OK);
	nt_assert_shape(&out[0], 2, (int64_t[]){5, 6});
	assert_int_equal(infer_resize(&unknown, NULL, out, &st), OM_NEED_VALUE);
	assert_int_equal(infer_resize(&ts, &tz, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_resize(NULL, NULL, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_resize(&tbad, NULL, out, &st), OM_ERR_INVALID_MODEL);
	assert_int_equal(infer_resize(&tbig, NULL, out, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.op, "Resize");
	/* sizes cannot lengthen an empty axis: planning refuses it as the kernel does (infer
	 * accepted it; test_diff_nodes found it) */
	om_model *m = om_model_new();
	om_node *n = nt_add_node(m, "Resize", 4, 1);
	n->in[1] = NULL;
	const om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){0, 4}, NULL);
	const om_tensor *in[] = {&tx, NULL, &empty, &tz};
	assert_int_equal(om_infer_node(n, 13, in, out, &st), OM_ERR_INVALID_MODEL);
	assert_non_null(strstr(st.msg, "empty axis 0"));
	om_model_free(m);
}

/* Nearest with `sizes`: source coordinates from the integer extents in double, so exact ties
 * and integers survive (kernels/nn/resize_plan.c, coord_sizes). x = 0, 1, 2, ... so y holds the
 * pixel indices read. half_pixel round_prefer_ceil 20 -> 6: output 4 maps to 4.5 * 20 / 6 - 0.5
 * = 14.5, a tie that goes up to 15, and output 1 to 4.5, up to 5 (float32 gives 14.499999
 * and 4.4999998, so 14 and 4: ONNX Runtime before its fix); half_pixel floor 7 -> 1: 0.5 * 7 - 0.5 = 3 exactly, pixel 3 (float32 2.9999998 and 2,
 * ONNX Runtime 1.30 still: docs/ops.md, Divergences); asymmetric round_prefer_floor 7 -> 38:
 * output 19 maps to 19 * 7 / 38 = 3.5, down to 3. */
static void resize_nearest_sizes_ties(void **state)
{
	(void)state;
	const struct {
		const char *coord, *nearest;
		int64_t in, out;
		int64_t at, want; /* y[at] reads pixel want */
		int64_t want_all[6];
	} c[] = {
		{"half_pixel", "round_prefer_ceil", 20, 6, 4, 15, {1, 5, 8, 11, 15, 18}},
		{"half_pixel", "floor", 7, 1, 0, 3, {3}},
		{"asymmetric", "round_prefer_floor", 7, 38, 19, 3, {0}},
		{"half_pixel", "round_prefer_floor", 20, 6, 4, 14, {1, 4, 8, 11, 14, 18}},
	};
	for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
		om_model *m = om_model_new();
		float x[64];
		for (int i = 0; i < 64; i++)
			x[i] = (float)i;
		const int64_t sizes[] = {1, c[k].out};
		om_tensor tx = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, c[k].in}, x);
		om_tensor tz = nt_tensor(OM_INT64, 1, (int64_t[]){2}, sizes);
		om_node *n = nt_add_node(m, "Resize", 4, 1);
		n->in[1] = n->in[2] = NULL;
		nt_str(n, "mode", "nearest");
		nt_str(n, "coordinate_transformation_mode", c[k].coord);
		nt_str(n, "nearest_mode", c[k].nearest);
		const om_tensor *in[] = {&tx, NULL, NULL, &tz};
		om_tensor out[1];
		om_status st = {0};
		for (int exact = 0; exact < 2; exact++) {
			assert_int_equal(nt_run_mode(n, 19, in, out, exact, &st), OM_OK);
			nt_assert_shape(&out[0], 2, (int64_t[]){1, c[k].out});
			const float *y = out[0].data;
			assert_true(y[c[k].at] == (float)c[k].want);
			for (int64_t o = 0; c[k].out == 6 && o < 6; o++)
				assert_true(y[o] == (float)c[k].want_all[o]);
			om_tensor_free(&out[0]);
		}
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(resize_nearest_int32),      cmocka_unit_test(resize_linear_cubic),
		cmocka_unit_test(resize_nearest_whole_factors),
		cmocka_unit_test(resize_align_corners_scales),
		cmocka_unit_test(resize_tf_crop_and_resize), cmocka_unit_test(resize_opset18_19),
		cmocka_unit_test(resize_legacy),             cmocka_unit_test(resize_float16),
		cmocka_unit_test(resize_shapes_and_errors),
		cmocka_unit_test(resize_fast_and_threads),
		cmocka_unit_test(resize_rows),
		cmocka_unit_test(resize_nearest_sizes_ties),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
