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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(quantize_linear),
		cmocka_unit_test(dequantize_linear),
		cmocka_unit_test(dynamic_quantize_linear),
		cmocka_unit_test(qlinear_matmul),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
