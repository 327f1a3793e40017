/* test_ops_quant.c — QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul
 * (values from hand computation). */
#include "nodetest.h"

/* half to even, saturation, a per-axis scale */
static void quantize_linear(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "QuantizeLinear", 3, 1);
	const int64_t dx[] = {2, 2};
	om_tensor x = nt_tensor(OM_FLOAT, 2, dx, (float[]){2.5f, 3.5f, -300, 1});
	om_tensor s = nt_tensor(OM_FLOAT, 0, NULL, (float[]){1});
	om_tensor zp = nt_tensor(OM_INT8, 0, NULL, (int8_t[]){0});
	const om_tensor *in[] = {&x, &s, &zp};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 21, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT8);
	const int8_t *y = out[0].data;
	assert_int_equal(y[0], 2), assert_int_equal(y[1], 4);
	assert_int_equal(y[2], -128), assert_int_equal(y[3], 1);
	om_tensor_free(&out[0]);
	/* per axis 0: scales [1, 2], zero points [0, 10] */
	om_tensor s2 = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, (float[]){1, 2});
	om_tensor z2 = nt_tensor(OM_UINT8, 1, (int64_t[]){2}, (uint8_t[]){0, 10});
	in[1] = &s2, in[2] = &z2;
	nt_int(n, "axis", 0);
	assert_int_equal(nt_run(n, 21, in, out), OM_OK);
	const uint8_t *u = out[0].data;
	assert_int_equal(u[0], 2), assert_int_equal(u[1], 4);
	assert_int_equal(u[2], 0), assert_int_equal(u[3], 10);
	om_tensor_free(&out[0]);
	/* three scales for an axis of two */
	om_tensor s3 = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, (float[]){1, 2, 3});
	in[1] = &s3, in[2] = NULL;
	assert_int_equal(nt_run(n, 21, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void dequantize_linear(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DequantizeLinear", 3, 1);
	const int64_t dx[] = {3};
	om_tensor x = nt_tensor(OM_UINT8, 1, dx, (uint8_t[]){0, 128, 255});
	om_tensor s = nt_tensor(OM_FLOAT, 0, NULL, (float[]){2});
	om_tensor zp = nt_tensor(OM_UINT8, 0, NULL, (uint8_t[]){128});
	const om_tensor *in[] = {&x, &s, &zp};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 21, in, out), OM_OK);
	nt_check_f32(&out[0], 1, dx, (float[]){-256, 0, 254}, 0);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* x in [-1, 2]: scale 3/255, zero point 85, y = [0, 85, 255] */
static void dynamic_quantize_linear(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DynamicQuantizeLinear", 1, 3);
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){3}, (float[]){-1, 0, 2});
	const om_tensor *in[] = {&x};
	om_tensor out[3];
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	const uint8_t *y = out[0].data;
	assert_int_equal(y[0], 0), assert_int_equal(y[1], 85), assert_int_equal(y[2], 255);
	nt_check_f32(&out[1], 0, NULL, (float[]){3.0f / 255}, 1e-6);
	assert_int_equal(*(uint8_t *)out[2].data, 85);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	om_model_free(m);
}

/* [[1, 2]] x [[3], [4]] with zero points 0: 11, scale 1 * 1 / 2 -> round(5.5) = 6, +1 */
static void qlinear_matmul(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "QLinearMatMul", 8, 1);
	om_tensor a = nt_tensor(OM_UINT8, 2, (int64_t[]){1, 2}, (uint8_t[]){1, 2});
	om_tensor b = nt_tensor(OM_UINT8, 2, (int64_t[]){2, 1}, (uint8_t[]){3, 4});
	om_tensor one = nt_tensor(OM_FLOAT, 0, NULL, (float[]){1});
	om_tensor two = nt_tensor(OM_FLOAT, 0, NULL, (float[]){2});
	om_tensor z = nt_tensor(OM_UINT8, 0, NULL, (uint8_t[]){0});
	om_tensor yz = nt_tensor(OM_UINT8, 0, NULL, (uint8_t[]){1});
	const om_tensor *in[] = {&a, &one, &z, &b, &one, &z, &two, &yz};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 10, in, out), OM_OK);
	assert_int_equal(out[0].rank, 2);
	assert_int_equal(*(uint8_t *)out[0].data, 7);
	om_tensor_free(&out[0]);
	in[3] = &a; /* [1, 2] x [1, 2]: K differs */
	assert_int_equal(nt_run(n, 10, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* ---- the one-pass loops (quant_loops.c) against the scalar formula ---------------------- */

/* x's element values: random, NaN, infinities, ties, values past every type's range */
static float qv_value(nt_rng *r)
{
	static const float special[] = {NAN, INFINITY, -INFINITY, 0.5f, 1.5f, -0.5f, -2.5f,
					2.5f, -0.0f, 1e9f, -1e9f, 127.5f, -128.5f, 255.5f, 32767.5f};
	const int64_t u = nt_rand(r, 0, 29);
	if (u < 15)
		return special[u];
	return (float)nt_rand(r, -200000, 200000) / 997.0f;
}

/* the integer range of an 8/16-bit type */
static void qv_range(int32_t dt, float *lo, float *hi)
{
	*lo = dt == OM_INT8 ? -128 : dt == OM_INT16 ? -32768 : 0;
	*hi = dt == OM_INT8 ? 127 : dt == OM_UINT8 ? 255 : dt == OM_INT16 ? 32767 : 65535;
}

/* element i of an integer tensor of type dt as float */
static float qv_get(int32_t dt, const void *p, int64_t i)
{
	switch (dt) {
	case OM_INT8: return ((const int8_t *)p)[i];
	case OM_UINT8: return ((const uint8_t *)p)[i];
	case OM_INT16: return ((const int16_t *)p)[i];
	case OM_UINT16: return ((const uint16_t *)p)[i];
	default: return (float)((const int32_t *)p)[i];
	}
}

/* stores v (an integer in dt's range) as element i */
static void qv_set(int32_t dt, void *p, int64_t i, int64_t v)
{
	switch (dt) {
	case OM_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case OM_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
	case OM_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
	case OM_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
	default: ((int32_t *)p)[i] = (int32_t)v; break;
	}
}

enum { QV_N = 3 * 7 * 2003 }; /* [3, 7, 2003]: odd runs, more than one thread's grain */

/* QuantizeLinear of x [3, 7, 2003] to dt, per tensor (axis < 0) or along axis 1, at 1 and 2
 * threads: every byte as saturate(rint(x / scale) + zp), NaN to 0 */
static void qv_quantize_case(nt_rng *r, const float *x, int32_t dt, int axis)
{
	om_model *m;
	om_node *n = nt_node(&m, "QuantizeLinear", 3, 1);
	const int64_t dx[] = {3, 7, 2003}, ns = axis < 0 ? 1 : 7;
	float sc[7], lo, hi;
	int32_t zpv[7];
	qv_range(dt, &lo, &hi);
	int32_t zpb[7]; /* room for 7 zero points of any of the types */
	for (int64_t a = 0; a < ns; a++) {
		sc[a] = (float)nt_rand(r, 1, 4000) / 1000.0f;
		zpv[a] = (int32_t)nt_rand(r, (int64_t)lo, (int64_t)hi);
		qv_set(dt, zpb, a, zpv[a]);
	}
	sc[0] = axis < 0 ? 1 : sc[0]; /* per tensor: the ties stay ties */
	om_tensor xt = nt_tensor(OM_FLOAT, 3, dx, x);
	om_tensor st = nt_tensor(OM_FLOAT, axis < 0 ? 0 : 1, &ns, sc);
	om_tensor zt = nt_tensor(dt, axis < 0 ? 0 : 1, &ns, zpb);
	const om_tensor *in[] = {&xt, &st, &zt};
	if (axis >= 0)
		nt_int(n, "axis", axis);
	for (int threads = 1; threads <= 2; threads++) {
		om_tensor out[1];
		om_status stat = {0};
		assert_int_equal(nt_run_threads(n, 21, in, out, 1, threads, &stat), OM_OK);
		assert_int_equal(out[0].dtype, dt);
		for (int64_t i = 0; i < QV_N; i++) {
			const int64_t a = axis < 0 ? 0 : (i / 2003) % 7;
			float q = rintf(x[i] / sc[a]) + (float)zpv[a];
			q = q != q ? 0 : q < lo ? lo : q > hi ? hi : q;
			if (qv_get(dt, out[0].data, i) != q)
				fail_msg("type %d axis %d threads %d: element %lld of %g gives %g, "
					 "want %g", dt, axis, threads, (long long)i, (double)x[i],
					 (double)qv_get(dt, out[0].data, i), (double)q);
		}
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

/* DequantizeLinear of random x [3, 7, 2003] of type dt: every float as (x - zp) * scale */
static void qv_dequantize_case(nt_rng *r, void *x, int32_t dt, int axis)
{
	om_model *m;
	om_node *n = nt_node(&m, "DequantizeLinear", 3, 1);
	const int64_t dx[] = {3, 7, 2003}, ns = axis < 0 ? 1 : 7;
	const int64_t lo = dt == OM_INT8 ? -128 : dt == OM_UINT8 ? 0 : -2000000000;
	const int64_t hi = dt == OM_INT8 ? 127 : dt == OM_UINT8 ? 255 : 2000000000;
	float sc[7];
	int32_t zpb[7];
	for (int64_t a = 0; a < ns; a++) {
		sc[a] = (float)nt_rand(r, 1, 4000) / 997.0f;
		qv_set(dt, zpb, a, nt_rand(r, lo, hi));
	}
	for (int64_t i = 0; i < QV_N; i++)
		qv_set(dt, x, i, nt_rand(r, lo, hi));
	om_tensor xt = nt_tensor(dt, 3, dx, x);
	om_tensor st = nt_tensor(OM_FLOAT, axis < 0 ? 0 : 1, &ns, sc);
	om_tensor zt = nt_tensor(dt, axis < 0 ? 0 : 1, &ns, zpb);
	const om_tensor *in[] = {&xt, &st, &zt};
	if (axis >= 0)
		nt_int(n, "axis", axis);
	for (int threads = 1; threads <= 2; threads++) {
		om_tensor out[1];
		om_status stat = {0};
		assert_int_equal(nt_run_threads(n, 21, in, out, 1, threads, &stat), OM_OK);
		const float *y = out[0].data;
		for (int64_t i = 0; i < QV_N; i++) {
			const int64_t a = axis < 0 ? 0 : (i / 2003) % 7;
			const float want = (qv_get(dt, x, i) - qv_get(dt, zpb, a)) * sc[a];
			if (memcmp(&y[i], &want, sizeof want))
				fail_msg("type %d axis %d threads %d: element %lld gives %g, want %g",
					 dt, axis, threads, (long long)i, (double)y[i], (double)want);
		}
		om_tensor_free(&out[0]);
	}
	om_model_free(m);
}

static void quant_loops(void **state)
{
	(void)state;
	nt_rng r = {0x9e3779b97f4a7c15u};
	float *x = malloc(sizeof(float) * QV_N);
	int32_t *xi = malloc(sizeof(int32_t) * QV_N);
	assert_non_null(x), assert_non_null(xi);
	for (int64_t i = 0; i < QV_N; i++)
		x[i] = qv_value(&r);
	const int32_t qt[] = {OM_INT8, OM_UINT8, OM_INT16, OM_UINT16};
	const int32_t dt[] = {OM_INT8, OM_UINT8, OM_INT32};
	for (int axis = -1; axis <= 1; axis += 2) {
		for (int t = 0; t < 4; t++)
			qv_quantize_case(&r, x, qt[t], axis);
		for (int t = 0; t < 3; t++)
			qv_dequantize_case(&r, xi, dt[t], axis);
	}
	free(x), free(xi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantize_linear),
		cmocka_unit_test(dequantize_linear),
		cmocka_unit_test(dynamic_quantize_linear),
		cmocka_unit_test(qlinear_matmul),
		cmocka_unit_test(quant_loops),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
