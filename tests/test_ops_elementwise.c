/* test_ops_elementwise.c — broadcasting (shapes, rank 0, empty), arithmetic per type class,
 * Mod sign rules, Round half-even, comparisons, Where, variadic ops, Clip, unary ops. */
#include <stdint.h>

#include "detmath.h"
#include "half.h"
#include "nodetest.h"

/* Runs op over nin tensors; checks status, output dtype and shape; returns the output. */
static om_kind run(om_model **m, const char *op, int64_t opset, int32_t nin,
                   const om_tensor *const *in, om_tensor *out, om_node **np)
{
	om_node *n = nt_node(m, op, nin, 1);
	if (np)
		*np = n;
	return nt_run(n, opset, in, out);
}

static void check_shape(const om_tensor *t, int32_t dtype, int32_t rank, const int64_t *dims)
{
	assert_int_equal(t->dtype, dtype);
	assert_int_equal(t->rank, rank);
	for (int32_t i = 0; i < rank; i++)
		assert_int_equal(t->dims[i], dims[i]);
}

/* (2,1,3) + (4,1) -> (2,4,3): out[i][j][k] = a[i][0][k] + b[j][0] */
static void add_broadcast(void **state)
{
	(void)state;
	const float a[] = {0, 1, 2, 10, 11, 12};
	const float b[] = {100, 200, 300, 400};
	om_tensor ta = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 1, 3}, a);
	om_tensor tb = nt_tensor(OM_FLOAT, 2, (int64_t[]){4, 1}, b);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
	check_shape(&out, OM_FLOAT, 3, (int64_t[]){2, 4, 3});
	const float *y = out.data;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++)
			for (int k = 0; k < 3; k++)
				assert_true(y[(i * 4 + j) * 3 + k] == a[i * 3 + k] + b[j]);
	om_tensor_free(&out);
	om_model_free(m);
	/* the other way round, and Sub keeps the operand order */
	assert_int_equal(run(&m, "Sub", 14, 2, (const om_tensor *[]){&tb, &ta}, &out, NULL), OM_OK);
	check_shape(&out, OM_FLOAT, 3, (int64_t[]){2, 4, 3});
	y = out.data;
	assert_true(y[0] == 100.0f);                   /* 100 - 0 */
	assert_true(y[(1 * 4 + 3) * 3 + 2] == 388.0f); /* 400 - 12 */
	om_tensor_free(&out);
	om_model_free(m);
}

/* rank 0 with rank 0, rank 0 with a vector, an empty dim, and incompatible shapes */
static void scalar_empty_incompatible(void **state)
{
	(void)state;
	const float s = 2.5f, v[] = {1, 2, 3};
	om_tensor ts = nt_tensor(OM_FLOAT, 0, NULL, &s),
	          tv = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, v);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Mul", 14, 2, (const om_tensor *[]){&ts, &ts}, &out, NULL), OM_OK);
	check_shape(&out, OM_FLOAT, 0, NULL);
	assert_true(*(float *)out.data == 6.25f);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Div", 14, 2, (const om_tensor *[]){&tv, &ts}, &out, NULL), OM_OK);
	check_shape(&out, OM_FLOAT, 1, (int64_t[]){3});
	assert_true(((float *)out.data)[2] == 1.2f);
	om_tensor_free(&out);
	om_model_free(m);
	/* (0,1) + (3) -> (0,3) */
	om_tensor te = nt_tensor(OM_FLOAT, 2, (int64_t[]){0, 1}, v);
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&te, &tv}, &out, NULL), OM_OK);
	check_shape(&out, OM_FLOAT, 2, (int64_t[]){0, 3});
	om_tensor_free(&out);
	om_model_free(m);
	/* (2) vs (3) and float vs int32 are model errors */
	om_tensor t2 = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, v);
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&t2, &tv}, &out, NULL),
	                 OM_ERR_INVALID_MODEL);
	om_model_free(m);
	const int32_t iv[] = {1, 2, 3};
	om_tensor ti = nt_tensor(OM_INT32, 1, (int64_t[]){3}, iv);
	om_status st = {0};
	om_node *n = nt_node(&m, "Add", 2, 1);
	assert_int_equal(om_eval_node(n, 14, (const om_tensor *[]){&tv, &ti}, &out, &st),
	                 OM_ERR_INVALID_MODEL);
	assert_string_equal(st.node, "n0");
	om_model_free(m);
	/* a buffer smaller than its shape is refused, not read past */
	om_tensor short_v = tv;
	short_v.nbytes = 8;
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&short_v, &tv}, &out, NULL),
			 OM_ERR_INVALID_INPUT);
	om_model_free(m);
	assert_int_equal(run(&m, "Exp", 14, 1, (const om_tensor *[]){&short_v}, &out, NULL),
			 OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* integer arithmetic wraps; division truncates; a zero divisor gives 0 */
static void integer_arith(void **state)
{
	(void)state;
	const int8_t a[] = {127, -128, 7, -7, 100};
	const int8_t b[] = {1, -1, 2, 2, 0};
	om_tensor ta = nt_tensor(OM_INT8, 1, (int64_t[]){5}, a),
	          tb = nt_tensor(OM_INT8, 1, (int64_t[]){5}, b);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((int8_t[]){-128, 127, 9, -5, 100}), 5);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Div", 14, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((int8_t[]){127, -128, 3, -3, 0}), 5);
	om_tensor_free(&out);
	om_model_free(m);
	const int64_t big[] = {INT64_MAX, INT64_MIN}, two[] = {2, -1};
	om_tensor tl = nt_tensor(OM_INT64, 1, (int64_t[]){2}, big),
	          t2 = nt_tensor(OM_INT64, 1, (int64_t[]){2}, two);
	assert_int_equal(run(&m, "Mul", 14, 2, (const om_tensor *[]){&tl, &t2}, &out, NULL), OM_OK);
	assert_true(((int64_t *)out.data)[0] == -2 && ((int64_t *)out.data)[1] == INT64_MIN);
	om_tensor_free(&out);
	om_model_free(m);
	const uint8_t u[] = {250, 3}, v[] = {10, 5};
	om_tensor tu = nt_tensor(OM_UINT8, 1, (int64_t[]){2}, u),
	          tw = nt_tensor(OM_UINT8, 1, (int64_t[]){2}, v);
	assert_int_equal(run(&m, "Sub", 14, 2, (const om_tensor *[]){&tw, &tu}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){16, 2}), 2);
	om_tensor_free(&out);
	om_model_free(m);
}

/* Mod: fmod=0 takes the divisor's sign, fmod=1 the dividend's; floats need fmod=1 */
static void mod_signs(void **state)
{
	(void)state;
	const int32_t a[] = {-4, 7, 5, 4, -7, 8, 5}, b[] = {2, -3, 8, -2, 3, 5, 0};
	om_tensor ta = nt_tensor(OM_INT32, 1, (int64_t[]){7}, a),
	          tb = nt_tensor(OM_INT32, 1, (int64_t[]){7}, b);
	om_model *m;
	om_node *n;
	om_tensor out;
	assert_int_equal(run(&m, "Mod", 13, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((int32_t[]){0, -2, 5, 0, 2, 3, 0}), 28);
	om_tensor_free(&out);
	om_model_free(m);
	n = nt_node(&m, "Mod", 2, 1);
	nt_int(n, "fmod", 1);
	assert_int_equal(nt_run(n, 13, (const om_tensor *[]){&ta, &tb}, &out), OM_OK);
	assert_memory_equal(out.data, ((int32_t[]){0, 1, 5, 0, -1, 3, 0}), 28);
	om_tensor_free(&out);
	const float fa[] = {-4.3f, 7.2f, 5.0f}, fb[] = {2.1f, -3.4f, 8.0f};
	om_tensor tfa = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, fa),
	          tfb = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, fb);
	assert_int_equal(nt_run(n, 13, (const om_tensor *[]){&tfa, &tfb}, &out), OM_OK);
	const float *y = out.data;
	assert_true(y[0] == fmodf(-4.3f, 2.1f) && y[1] == fmodf(7.2f, -3.4f) && y[2] == 5.0f);
	assert_true(y[0] < 0 && y[1] > 0);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Mod", 13, 2, (const om_tensor *[]){&tfa, &tfb}, &out, NULL),
	                 OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void pow_mixed(void **state)
{
	(void)state;
	const int32_t base[] = {1, 2, 3, -2};
	const float e[] = {4, 5, 6, 3};
	om_tensor tb = nt_tensor(OM_INT32, 1, (int64_t[]){4}, base),
	          te = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, e);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Pow", 15, 2, (const om_tensor *[]){&tb, &te}, &out, NULL), OM_OK);
	check_shape(&out, OM_INT32, 1, (int64_t[]){4});
	assert_memory_equal(out.data, ((int32_t[]){1, 32, 729, -8}), 16);
	om_tensor_free(&out);
	om_model_free(m);
	const float x[] = {2, 4, 9};
	const int64_t half[] = {2};
	om_tensor tx = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, x),
	          th = nt_tensor(OM_INT64, 0, NULL, half);
	assert_int_equal(run(&m, "Pow", 15, 2, (const om_tensor *[]){&tx, &th}, &out, NULL), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){3}, (float[]){4, 16, 81}, 0);
	om_tensor_free(&out);
	om_model_free(m);
}

/* the rows flagged exact call detmath.h, not libm: each kernel's float32 output is bit for bit
 * the detmath function (default attributes), Pow's is om_det_pow rounded once */
static void exact_rows_no_libm(void **state)
{
	(void)state;
	enum { N = 4001 };
	static float x[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)(i - N / 2) * 0.011f;
	x[0] = -INFINITY, x[1] = INFINITY, x[2] = NAN, x[3] = -0.0f, x[4] = 0x1p-149f;
	x[5] = 1e-30f, x[6] = -1e-30f, x[7] = 0.99f, x[8] = -0.99f, x[9] = 1.5f;
	const int64_t n = N;
	om_tensor tx = nt_tensor(OM_FLOAT, 1, &n, x);
	static const char *const ops[] = {"Sigmoid", "Tanh",  "Elu",   "Selu",  "Celu",
					  "Softplus", "Mish", "Swish", "Sinh",  "Cosh",
					  "Asinh",   "Acosh", "Atanh", "Atan",  "Asin",
					  "Acos",    "Sin",   "Cos",   "Tan"};
	const float sa = 1.67326319217681884765625f, sg = 1.05070102214813232421875f;
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		const om_op *op = om_op_find("", ops[k], 24);
		assert_non_null(op);
		assert_true(op->flags & OM_OP_EXACT);
		om_model *m;
		om_tensor out;
		assert_int_equal(run(&m, ops[k], 24, 1, (const om_tensor *[]){&tx}, &out, NULL),
		                 OM_OK);
		const float *y = out.data;
		for (int i = 0; i < N; i++) {
			const float v = x[i];
			const double d = v;
			const double sp = d > 0 ? d + om_det_log1p(om_det_exp(-d))
						: om_det_log1p(om_det_exp(d));
			float want;
			switch (k) {
			case 0: want = om_det_sigmoidf(v); break;
			case 1: want = om_det_tanhf(v); break;
			case 2: want = v < 0 ? (float)om_det_expm1(d) : v; break;
			case 3: want = sg * (v <= 0 ? sa * (float)om_det_expm1(d) : v); break;
			case 4: want = v > 0 ? v : (float)om_det_expm1(d); break;
			case 5: want = (float)sp; break;
			case 6: want = (float)(d * om_det_tanh(sp)); break;
			case 7: want = v * om_det_sigmoidf(v); break;
			case 8: want = (float)om_det_sinh(d); break;
			case 9: want = (float)om_det_cosh(d); break;
			case 10: want = (float)om_det_asinh(d); break;
			case 11: want = (float)om_det_acosh(d); break;
			case 12: want = (float)om_det_atanh(d); break;
			case 13: want = (float)om_det_atan(d); break;
			case 14: want = (float)om_det_asin(d); break;
			case 15: want = (float)om_det_acos(d); break;
			case 16: want = (float)om_det_sin(d); break;
			case 17: want = (float)om_det_cos(d); break;
			default: want = (float)om_det_tan(d); break;
			}
			if (memcmp(&want, &y[i], sizeof want) && !(want != want && y[i] != y[i]))
				fail_msg("%s(%a) = %a, detmath %a", ops[k], (double)v, (double)y[i],
				         (double)want);
		}
		om_tensor_free(&out);
		om_model_free(m);
	}
	/* Pow: float base, scalar float exponents */
	static const float ex[] = {2, 3, -1, 0.5f, -2.5f, 0, 1.0f / 3};
	for (size_t j = 0; j < sizeof ex / sizeof ex[0]; j++) {
		om_tensor te = nt_tensor(OM_FLOAT, 0, NULL, &ex[j]);
		om_model *m;
		om_tensor out;
		assert_int_equal(run(&m, "Pow", 15, 2, (const om_tensor *[]){&tx, &te}, &out, NULL),
		                 OM_OK);
		const float *y = out.data;
		for (int i = 0; i < N; i++) {
			/* a scalar 3 is x*x*x in float (ONNX Runtime's form) */
			const float want = ex[j] == 3 ? x[i] * x[i] * x[i] : (float)om_det_pow(x[i], ex[j]);
			if (memcmp(&want, &y[i], sizeof want) && !(want != want && y[i] != y[i]))
				fail_msg("Pow(%a, %a) = %a, detmath %a", (double)x[i], (double)ex[j],
				         (double)y[i], (double)want);
		}
		om_tensor_free(&out);
		om_model_free(m);
	}
}

/* comparisons give bool; Equal on strings; NaN is unequal to itself */
static void comparisons(void **state)
{
	(void)state;
	const float a[] = {1, 2, NAN}, b[] = {2};
	om_tensor ta = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, a),
	          tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, b);
	static const struct {
		const char *op;
		uint8_t want[3];
	} cases[] = {{"Equal", {0, 1, 0}},
	             {"Less", {1, 0, 0}},
	             {"LessOrEqual", {1, 1, 0}},
	             {"Greater", {0, 0, 0}},
	             {"GreaterOrEqual", {0, 1, 0}}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_model *m;
		om_tensor out;
		assert_int_equal(
		    run(&m, cases[i].op, 16, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL),
		    OM_OK);
		check_shape(&out, OM_BOOL, 1, (int64_t[]){3});
		assert_memory_equal(out.data, cases[i].want, 3);
		om_tensor_free(&out);
		om_model_free(m);
	}
	const om_str s[] = {{"ab", 2}, {"abc", 3}}, t[] = {{"abc", 3}};
	om_tensor ts = nt_tensor(OM_STRING, 1, (int64_t[]){2}, s),
	          tt = nt_tensor(OM_STRING, 0, NULL, t);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Equal", 19, 2, (const om_tensor *[]){&ts, &tt}, &out, NULL),
	                 OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){0, 1}), 2);
	om_tensor_free(&out);
	om_model_free(m);
	const int64_t big[] = {INT64_MAX}, big1[] = {INT64_MAX - 1};
	om_tensor x = nt_tensor(OM_INT64, 0, NULL, big), y = nt_tensor(OM_INT64, 0, NULL, big1);
	assert_int_equal(run(&m, "Greater", 13, 2, (const om_tensor *[]){&x, &y}, &out, NULL),
	                 OM_OK);
	assert_int_equal(*(uint8_t *)out.data, 1);
	om_tensor_free(&out);
	om_model_free(m);
}

/* Where broadcasts all three operands: cond (2,1), x (3), y scalar */
static void where_broadcast(void **state)
{
	(void)state;
	const uint8_t c[] = {1, 0};
	const int64_t x[] = {1, 2, 3}, y[] = {-1};
	om_tensor tc = nt_tensor(OM_BOOL, 2, (int64_t[]){2, 1}, c),
	          tx = nt_tensor(OM_INT64, 1, (int64_t[]){3}, x),
	          ty = nt_tensor(OM_INT64, 0, NULL, y);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Where", 16, 3, (const om_tensor *[]){&tc, &tx, &ty}, &out, NULL),
	                 OM_OK);
	check_shape(&out, OM_INT64, 2, (int64_t[]){2, 3});
	assert_memory_equal(out.data, ((int64_t[]){1, 2, 3, -1, -1, -1}), 48);
	om_tensor_free(&out);
	om_model_free(m);
	/* strings are copied into the output */
	const om_str xs[] = {{"yes", 3}}, ys[] = {{"no", 2}};
	om_tensor sx = nt_tensor(OM_STRING, 0, NULL, xs), sy = nt_tensor(OM_STRING, 0, NULL, ys);
	assert_int_equal(run(&m, "Where", 16, 3, (const om_tensor *[]){&tc, &sx, &sy}, &out, NULL),
	                 OM_OK);
	const om_str *o = out.data;
	assert_true(o[0].len == 3 && !memcmp(o[0].ptr, "yes", 3) && o[0].ptr != xs[0].ptr);
	assert_true(o[1].len == 2 && !memcmp(o[1].ptr, "no", 2));
	om_tensor_free(&out);
	om_model_free(m);
	/* a non-bool condition is a model error */
	om_tensor bad = nt_tensor(OM_INT64, 1, (int64_t[]){3}, x);
	assert_int_equal(run(&m, "Where", 16, 3, (const om_tensor *[]){&bad, &tx, &ty}, &out, NULL),
	                 OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* Sum/Mean/Max/Min over three broadcast inputs; Max propagates NaN */
static void variadic(void **state)
{
	(void)state;
	const float a[] = {1, 6}, b[] = {3}, c[] = {2, NAN, 5, -1};
	om_tensor ta = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, a),
	          tb = nt_tensor(OM_FLOAT, 0, NULL, b),
	          tc = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, c);
	const om_tensor *in[] = {&ta, &tb, &tc};
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Sum", 13, 3, in, &out, NULL), OM_OK);
	nt_check_f32(&out, 2, (int64_t[]){2, 2}, (float[]){6, NAN, 9, 8}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Mean", 13, 3, in, &out, NULL), OM_OK);
	nt_check_f32(&out, 2, (int64_t[]){2, 2}, (float[]){2, NAN, 3, 8.0f / 3}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Max", 13, 3, in, &out, NULL), OM_OK);
	nt_check_f32(&out, 2, (int64_t[]){2, 2}, (float[]){3, NAN, 5, 6}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Min", 13, 1, in, &out, NULL), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){2}, a, 0);
	om_tensor_free(&out);
	om_model_free(m);
	const uint32_t u[] = {7, 4000000000u}, v[] = {9};
	om_tensor tu = nt_tensor(OM_UINT32, 1, (int64_t[]){2}, u),
	          tv = nt_tensor(OM_UINT32, 0, NULL, v);
	assert_int_equal(run(&m, "Max", 13, 2, (const om_tensor *[]){&tu, &tv}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((uint32_t[]){9, 4000000000u}), 8);
	om_tensor_free(&out);
	om_model_free(m);
}

static void clip_forms(void **state)
{
	(void)state;
	const float x[] = {-3, -1, 0, 2, 5, NAN};
	om_tensor tx = nt_tensor(OM_FLOAT, 1, (int64_t[]){6}, x);
	const float lo = -1.5f, hi = 2.5f;
	om_tensor tl = nt_tensor(OM_FLOAT, 0, NULL, &lo), th = nt_tensor(OM_FLOAT, 0, NULL, &hi);
	om_model *m;
	om_node *n;
	om_tensor out;
	assert_int_equal(run(&m, "Clip", 13, 3, (const om_tensor *[]){&tx, &tl, &th}, &out, NULL),
	                 OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){6}, (float[]){-1.5f, -1, 0, 2, 2.5f, NAN}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	/* only max (min omitted) */
	assert_int_equal(run(&m, "Clip", 13, 3, (const om_tensor *[]){&tx, NULL, &th}, &out, NULL),
	                 OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){6}, (float[]){-3, -1, 0, 2, 2.5f, NAN}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	/* attribute form (opset 6) */
	n = nt_node(&m, "Clip", 1, 1);
	nt_float(n, "min", 0);
	assert_int_equal(nt_run(n, 6, (const om_tensor *[]){&tx}, &out), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){6}, (float[]){0, 0, 0, 2, 5, NAN}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	/* int8 with min > max: everything becomes max */
	const int8_t xi[] = {-100, 0, 100}, li[] = {10}, hi8[] = {5};
	om_tensor txi = nt_tensor(OM_INT8, 1, (int64_t[]){3}, xi),
	          tli = nt_tensor(OM_INT8, 0, NULL, li), thi = nt_tensor(OM_INT8, 0, NULL, hi8);
	assert_int_equal(
	    run(&m, "Clip", 13, 3, (const om_tensor *[]){&txi, &tli, &thi}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((int8_t[]){5, 5, 5}), 3);
	om_tensor_free(&out);
	om_model_free(m);
}

/* unary float ops on a few exact points */
static void unary_exact_points(void **state)
{
	(void)state;
	const float x[] = {-2.5f, -0.5f, 0.5f, 1.5f, 2.5f, -0.0f};
	om_tensor tx = nt_tensor(OM_FLOAT, 1, (int64_t[]){6}, x);
	static const struct {
		const char *op;
		float want[6];
	} cases[] = {
	    {"Round", {-2, -0.0f, 0, 2, 2, -0.0f}},
	    {"Floor", {-3, -1, 0, 1, 2, -0.0f}},
	    {"Ceil", {-2, -0.0f, 1, 2, 3, -0.0f}},
	    {"Abs", {2.5f, 0.5f, 0.5f, 1.5f, 2.5f, 0}},
	    {"Neg", {2.5f, 0.5f, -0.5f, -1.5f, -2.5f, 0}},
	    {"Relu", {0, 0, 0.5f, 1.5f, 2.5f, -0.0f}},
	    {"Sign", {-1, -1, 1, 1, 1, 0}},
	    {"Reciprocal", {-0.4f, -2, 2, 1.0f / 1.5f, 0.4f, -INFINITY}},
	    {"HardSwish",
	     {-2.5f * (0.5f / 6), -0.5f * (2.5f / 6), 0.5f * (3.5f / 6), 1.5f * (4.5f / 6),
	      2.5f * (5.5f / 6), -0.0f}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_model *m;
		om_tensor out;
		assert_int_equal(
		    run(&m, cases[i].op, 14, 1, (const om_tensor *[]){&tx}, &out, NULL), OM_OK);
		nt_check_f32(&out, 1, (int64_t[]){6}, cases[i].want, 1e-6);
		om_tensor_free(&out);
		om_model_free(m);
	}
	om_model *m;
	om_tensor out;
	/* Gelu exact and tanh forms, LeakyRelu alpha, Sigmoid far out */
	om_node *n = nt_node(&m, "Gelu", 1, 1);
	assert_int_equal(nt_run(n, 20, (const om_tensor *[]){&tx}, &out), OM_OK);
	const float *y = out.data;
	for (int i = 0; i < 6; i++)
		assert_float_equal(y[i], 0.5 * x[i] * (1 + erf(x[i] / sqrt(2.0))), 1e-6);
	om_tensor_free(&out);
	nt_str(n, "approximate", "tanh");
	assert_int_equal(nt_run(n, 20, (const om_tensor *[]){&tx}, &out), OM_OK);
	y = out.data;
	for (int i = 0; i < 6; i++)
		assert_float_equal(
		    y[i],
		    0.5 * x[i] * (1 + tanh(sqrt(2 / M_PI) * (x[i] + 0.044715 * pow(x[i], 3)))),
		    1e-6);
	om_tensor_free(&out);
	om_model_free(m);
	n = nt_node(&m, "LeakyRelu", 1, 1);
	nt_float(n, "alpha", 0.5f);
	assert_int_equal(nt_run(n, 16, (const om_tensor *[]){&tx}, &out), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){6}, (float[]){-1.25f, -0.25f, 0.5f, 1.5f, 2.5f, 0}, 0);
	om_tensor_free(&out);
	om_model_free(m);
	const float far[] = {-100, 100, 0};
	om_tensor tf = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, far);
	assert_int_equal(run(&m, "Sigmoid", 13, 1, (const om_tensor *[]){&tf}, &out, NULL), OM_OK);
	nt_check_f32(&out, 1, (int64_t[]){3}, (float[]){expf(-100), 1, 0.5f}, 1e-7);
	om_tensor_free(&out);
	om_model_free(m);
	/* unary ops reject types they do not take */
	const int32_t iv[] = {1};
	om_tensor ti = nt_tensor(OM_INT32, 1, (int64_t[]){1}, iv);
	assert_int_equal(run(&m, "Exp", 13, 1, (const om_tensor *[]){&ti}, &out, NULL),
	                 OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* error of got against the double ref in units of the float spacing at ref (0: both NaN or
 * both the same infinity) */
static double ulp_err(float got, double ref)
{
	if (ref != ref)
		return got != got ? 0 : 1e9;
	const float rf = (float)ref;
	if (isinf(rf) || isinf(got))
		return got == rf ? 0 : 1e9;
	const float a = fabsf(rf);
	const double u = a < 1.17549435e-38f ? 0x1p-149 : (double)(nextafterf(a, INFINITY) - a);
	return fabs((double)got - ref) / u;
}

/* Erf, Exp and Log over a dense sweep of float32 bit patterns (every sign, subnormals,
 * tails, +-inf, NaN), against double precision; runs of 1, 7 and 17 elements give the
 * same bits as the long run (vector body and scalar tail agree) */
static void unary_det_sweep(void **state)
{
	(void)state;
	enum { STEP = 4093 };
	const int64_t n = (int64_t)(0x100000000ull / STEP) + 1;
	float *x = malloc(sizeof(float) * (size_t)n);
	assert_non_null(x);
	for (int64_t i = 0; i < n; i++) {
		const uint32_t b = (uint32_t)((uint64_t)i * STEP);
		memcpy(&x[i], &b, sizeof b);
	}
	x[0] = INFINITY, x[1] = -INFINITY, x[2] = NAN, x[3] = -0.0f, x[4] = 0x1p-149f;
	x[5] = -0x1p-149f, x[6] = 3.925f, x[7] = -0.921875f, x[8] = 88.7f, x[9] = -103.9f;
	om_tensor tx = nt_tensor(OM_FLOAT, 1, &n, x);
	static const struct {
		const char *op;
		double max_ulp;
	} ops[] = {{"Erf", 4}, {"Exp", 2}, {"Log", 0.501}};
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		om_model *m;
		om_tensor out;
		assert_int_equal(run(&m, ops[k].op, 13, 1, (const om_tensor *[]){&tx}, &out, NULL),
		                 OM_OK);
		const float *y = out.data;
		double worst = 0;
		int64_t at = 0;
		for (int64_t i = 0; i < n; i++) {
			const double v = x[i];
			const double ref = k == 0 ? erf(v) : k == 1 ? exp(v) : log(v);
			const double e = ulp_err(y[i], ref);
			if (e > worst)
				worst = e, at = i;
		}
		if (worst > ops[k].max_ulp)
			fail_msg("%s(%a) = %a: %.2f ulp", ops[k].op, (double)x[at], (double)y[at],
			         worst);
		if (k == 0) { /* signs of zero and the tails exactly */
			assert_true(y[3] == 0 && signbit(y[3]) && y[4] == 0x1p-149f);
			assert_true(y[0] == 1 && y[1] == -1 && y[2] != y[2] && y[6] == 1);
		}
		for (int64_t len = 1; len <= 17; len += len == 1 ? 6 : 10) {
			om_model *m2;
			om_tensor o2, t2 = nt_tensor(OM_FLOAT, 1, &len, x + 3);
			const om_tensor *in2[] = {&t2};
			assert_int_equal(run(&m2, ops[k].op, 13, 1, in2, &o2, NULL), OM_OK);
			assert_memory_equal(o2.data, y + 3, sizeof(float) * (size_t)len);
			om_tensor_free(&o2);
			om_model_free(m2);
		}
		om_tensor_free(&out);
		om_model_free(m);
	}
	free(x);
	/* Exp and Log in double (detmath.h's double forms): within 2 ulp of libm */
	double xd[2801];
	for (int i = 0; i < 2801; i++)
		xd[i] = (i - 1400) * 0.5 + 0.123;
	const int64_t nd = 2801;
	om_tensor txd = nt_tensor(OM_DOUBLE, 1, &nd, xd);
	for (int k = 0; k < 2; k++) {
		om_model *m;
		om_tensor out;
		const om_tensor *ind[] = {&txd};
		assert_int_equal(run(&m, k ? "Log" : "Exp", 13, 1, ind, &out, NULL), OM_OK);
		const double *yd = out.data;
		for (int i = 0; i < 2801; i++) {
			const double want = k ? log(xd[i]) : exp(xd[i]);
			if (want != want ? yd[i] == yd[i]
					 : !(fabs(yd[i] - want) <= 4.5e-16 * fabs(want)))
				fail_msg("%s(%.17g) = %.17g, libm %.17g", k ? "Log" : "Exp", xd[i],
				         yd[i], want);
		}
		om_tensor_free(&out);
		om_model_free(m);
	}
	/* a block of small |x| only (small half alone) and the same values beside a large one
	 * (both halves, one picked): the same bits */
	float sm[65];
	sm[0] = 2.0f;
	for (int i = 1; i < 65; i++)
		sm[i] = (float)(i - 32) * 0.0287f;
	const int64_t n64 = 64;
	om_tensor ta = nt_tensor(OM_FLOAT, 1, &n64, sm), tb = nt_tensor(OM_FLOAT, 1, &n64, sm + 1);
	om_model *m1, *m2;
	om_tensor oa, ob;
	assert_int_equal(run(&m1, "Erf", 13, 1, (const om_tensor *[]){&ta}, &oa, NULL), OM_OK);
	assert_int_equal(run(&m2, "Erf", 13, 1, (const om_tensor *[]){&tb}, &ob, NULL), OM_OK);
	assert_memory_equal((float *)oa.data + 1, ob.data, sizeof(float) * 63);
	assert_true(((float *)ob.data)[31] == 0 && ((float *)ob.data)[32] > 0.0323f);
	om_tensor_free(&oa);
	om_tensor_free(&ob);
	om_model_free(m1);
	om_model_free(m2);
}

/* Gelu (opset 20) both forms against the double formulas, over [-12, 12]; 1 + erf cancels
 * for x < 0 (as in ONNX Runtime), hence an absolute part in the tolerance */
static void gelu_forms(void **state)
{
	(void)state;
	enum { N = 2401 };
	float x[N];
	for (int i = 0; i < N; i++)
		x[i] = (float)(i - N / 2) / 100.0f;
	const int64_t d = N;
	om_tensor tx = nt_tensor(OM_FLOAT, 1, &d, x);
	for (int form = 0; form < 2; form++) {
		om_model *m;
		om_tensor out;
		om_node *nd = nt_node(&m, "Gelu", 1, 1);
		if (form)
			nt_str(nd, "approximate", "tanh");
		assert_int_equal(nt_run(nd, 20, (const om_tensor *[]){&tx}, &out), OM_OK);
		const float *y = out.data;
		for (int i = 0; i < N; i++) {
			const double v = x[i];
			const double ref =
			    form ? 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)))
			         : 0.5 * v * (1 + erf(v / sqrt(2.0)));
			if (!(fabs(y[i] - ref) <= 1e-6 * fabs(ref) + 3e-7))
				fail_msg("Gelu form %d at %g: %.9g, want %.9g", form, v,
				         (double)y[i], ref);
		}
		om_tensor_free(&out);
		om_model_free(m);
	}
}

/* Round half-even and Add in float16 (computed in float, rounded to nearest even) */
static void half_types(void **state)
{
	(void)state;
	const uint16_t x[] = {om_float_to_half(0.5f), om_float_to_half(1.5f),
	                      om_float_to_half(2.5f), om_float_to_half(-3.5f)};
	om_tensor tx = nt_tensor(OM_FLOAT16, 1, (int64_t[]){4}, x);
	om_model *m;
	om_tensor out;
	assert_int_equal(run(&m, "Round", 13, 1, (const om_tensor *[]){&tx}, &out, NULL), OM_OK);
	const uint16_t *y = out.data;
	assert_true(om_half_to_float(y[0]) == 0 && om_half_to_float(y[1]) == 2 &&
	            om_half_to_float(y[2]) == 2 && om_half_to_float(y[3]) == -4);
	om_tensor_free(&out);
	om_model_free(m);
	/* 2048 + 1 is a tie in float16: rounds to even 2048; 2048 + 3 -> 2052 */
	const uint16_t a[] = {om_float_to_half(2048), om_float_to_half(2048)},
	               b[] = {om_float_to_half(1), om_float_to_half(3)};
	om_tensor ta = nt_tensor(OM_FLOAT16, 1, (int64_t[]){2}, a),
	          tb = nt_tensor(OM_FLOAT16, 1, (int64_t[]){2}, b);
	assert_int_equal(run(&m, "Add", 14, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
	y = out.data;
	assert_true(om_half_to_float(y[0]) == 2048 && om_half_to_float(y[1]) == 2052);
	om_tensor_free(&out);
	om_model_free(m);
}

static void logic_and_bits(void **state)
{
	(void)state;
	const uint8_t a[] = {0, 0, 1, 1}, b[] = {0, 1, 0, 1};
	om_tensor ta = nt_tensor(OM_BOOL, 1, (int64_t[]){4}, a),
	          tb = nt_tensor(OM_BOOL, 1, (int64_t[]){4}, b);
	static const struct {
		const char *op;
		uint8_t want[4];
	} cases[] = {{"And", {0, 0, 0, 1}}, {"Or", {0, 1, 1, 1}}, {"Xor", {0, 1, 1, 0}}};
	om_model *m;
	om_node *n;
	om_tensor out;
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(
		    run(&m, cases[i].op, 7, 2, (const om_tensor *[]){&ta, &tb}, &out, NULL), OM_OK);
		check_shape(&out, OM_BOOL, 1, (int64_t[]){4});
		assert_memory_equal(out.data, cases[i].want, 4);
		om_tensor_free(&out);
		om_model_free(m);
	}
	assert_int_equal(run(&m, "Not", 1, 1, (const om_tensor *[]){&ta}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){1, 1, 0, 0}), 4);
	om_tensor_free(&out);
	om_model_free(m);
	const uint8_t x[] = {16, 4, 1}, s[] = {1, 2, 9};
	om_tensor tx = nt_tensor(OM_UINT8, 1, (int64_t[]){3}, x),
	          ts = nt_tensor(OM_UINT8, 1, (int64_t[]){3}, s);
	n = nt_node(&m, "BitShift", 2, 1);
	nt_str(n, "direction", "LEFT");
	assert_int_equal(nt_run(n, 11, (const om_tensor *[]){&tx, &ts}, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){32, 16, 0}), 3);
	om_tensor_free(&out);
	om_model_free(m);
	const int16_t p[] = {12, -1}, q[] = {10, 3};
	om_tensor tp = nt_tensor(OM_INT16, 1, (int64_t[]){2}, p),
	          tq = nt_tensor(OM_INT16, 1, (int64_t[]){2}, q);
	assert_int_equal(run(&m, "BitwiseAnd", 18, 2, (const om_tensor *[]){&tp, &tq}, &out, NULL),
	                 OM_OK);
	assert_memory_equal(out.data, ((int16_t[]){8, 3}), 4);
	om_tensor_free(&out);
	om_model_free(m);
	const float f[] = {NAN, INFINITY, -INFINITY, 1};
	om_tensor tf = nt_tensor(OM_FLOAT, 1, (int64_t[]){4}, f);
	n = nt_node(&m, "IsInf", 1, 1);
	nt_int(n, "detect_positive", 0);
	assert_int_equal(nt_run(n, 10, (const om_tensor *[]){&tf}, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){0, 0, 1, 0}), 4);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "IsNaN", 13, 1, (const om_tensor *[]){&tf}, &out, NULL), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){1, 0, 0, 0}), 4);
	om_tensor_free(&out);
	om_model_free(m);
}

/* Swish, SwiGLU (b broadcast over a), StringConcat with a scalar */
static void swish_swiglu_concat(void **state)
{
	(void)state;
	const float a[] = {-1, 0, 2, 3}, b[] = {2, -1};
	om_tensor ta = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 2}, a);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, b);
	om_model *m;
	om_tensor out;
	om_node *n = nt_node(&m, "SwiGLU", 2, 1);
	nt_float(n, "alpha", 0.5f);
	assert_int_equal(nt_run(n, 28, (const om_tensor *[]){&ta, &tb}, &out), OM_OK);
	float want[4];
	for (int i = 0; i < 4; i++)
		want[i] = a[i] / (1 + expf(-0.5f * a[i])) * b[i % 2];
	nt_check_f32(&out, 2, (int64_t[]){2, 2}, want, 1e-6);
	om_tensor_free(&out);
	om_model_free(m);
	assert_int_equal(run(&m, "Swish", 24, 1, (const om_tensor *[]){&ta}, &out, NULL), OM_OK);
	for (int i = 0; i < 4; i++)
		want[i] = a[i] / (1 + expf(-a[i]));
	nt_check_f32(&out, 2, (int64_t[]){2, 2}, want, 1e-6);
	om_tensor_free(&out);
	om_model_free(m);
	const om_str x[] = {{"ab", 2}, {"", 0}}, y[] = {{"-z", 2}};
	om_tensor tx = nt_tensor(OM_STRING, 1, (int64_t[]){2}, x);
	om_tensor ty = nt_tensor(OM_STRING, 0, NULL, y);
	const om_tensor *in[] = {&tx, &ty};
	assert_int_equal(run(&m, "StringConcat", 20, 2, in, &out, NULL), OM_OK);
	const om_str *o = out.data;
	assert_true(o[0].len == 4 && !memcmp(o[0].ptr, "ab-z", 4));
	assert_true(o[1].len == 2 && !memcmp(o[1].ptr, "-z", 2));
	om_tensor_free(&out);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(add_broadcast),   cmocka_unit_test(scalar_empty_incompatible),
	    cmocka_unit_test(integer_arith),   cmocka_unit_test(mod_signs),
	    cmocka_unit_test(pow_mixed),       cmocka_unit_test(comparisons),
	    cmocka_unit_test(where_broadcast), cmocka_unit_test(variadic),
	    cmocka_unit_test(clip_forms),      cmocka_unit_test(unary_exact_points),
	    cmocka_unit_test(half_types),      cmocka_unit_test(logic_and_bits),
		cmocka_unit_test(swish_swiglu_concat), cmocka_unit_test(unary_det_sweep),
		cmocka_unit_test(gelu_forms), cmocka_unit_test(exact_rows_no_libm),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
