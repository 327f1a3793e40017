/* test_subbyte.c — the 2-bit element types (int2, uint2; ONNX 1.20): packing (four per byte,
 * lowest bits first, num/subbyte.h), Cast to and from them (the low bits, wrapping, as the
 * ONNX 1.23 node tests expect: -3 -> int2 1), moves, ConstantOfShape, QuantizeLinear.
 * Values by hand. */
#include <stdint.h>

#include "nodetest.h"
#include "subbyte.h"

static void packing(void **state)
{
	(void)state;
	assert_int_equal(om_dtype_bits(OM_INT2), 2);
	assert_int_equal(om_dtype_bits(OM_UINT2), 2);
	assert_int_equal(om_dtype_size(OM_INT2), 0);
	assert_string_equal(om_dtype_name(OM_UINT2), "uint2");
	assert_int_equal(om_tensor_bytes_for(OM_INT2, 1, (int64_t[]){5}), 2);
	assert_int_equal(om_tensor_bytes_for(OM_UINT2, 1, (int64_t[]){8}), 2);
	const uint8_t b[] = {0x39, 0xc4}; /* 01 10 11 00, 00 01 00 11 */
	const uint8_t want[] = {1, 2, 3, 0, 0, 1, 0, 3};
	for (int i = 0; i < 8; i++)
		assert_int_equal(om_sub_get(b, i, 2), want[i]);
	assert_int_equal(om_sub_get(b, 1, 4), 3);
	assert_int_equal(om_sub_signed(2, 2), -2);
	assert_int_equal(om_sub_signed(3, 2), -1);
	assert_int_equal(om_sub_signed(1, 2), 1);
	assert_int_equal(om_sub_signed(9, 4), -7);
	uint8_t d[2] = {0xff, 0xff};
	om_sub_set(d, 5, 2, 0x06); /* only the low 2 bits: 10 at bits 2-3 of byte 1 */
	assert_int_equal(d[0], 0xff);
	assert_int_equal(d[1], 0xfb);
}

static om_kind cast(int32_t sdt, const void *src, int64_t n, int64_t to, om_tensor *out)
{
	om_model *m;
	om_node *nd = nt_node(&m, "Cast", 1, 1);
	nt_int(nd, "to", to);
	om_tensor x = nt_tensor(sdt, 1, (int64_t[]){n}, src);
	om_kind rc = nt_run(nd, 25, (const om_tensor *[]){&x}, out);
	om_model_free(m);
	return rc;
}

static void cast_int2(void **state)
{
	(void)state;
	const float x[] = {-3, -2, -1, 0, 1, 2, 3};
	om_tensor out;
	/* int2: -3 -> 1, 2 -> -2, 3 -> -1 (low bits); uint2: -3 -> 1, -1 -> 3 */
	for (int u = 0; u < 2; u++) {
		assert_int_equal(cast(OM_FLOAT, x, 7, u ? OM_UINT2 : OM_INT2, &out), OM_OK);
		assert_int_equal(out.dtype, u ? OM_UINT2 : OM_INT2);
		assert_int_equal(out.nbytes, 2);
		assert_memory_equal(out.data, ((uint8_t[]){0x39, 0x39}), 2); /* padding zero */
		om_tensor_free(&out);
	}
	const uint8_t packed[] = {0x39, 0x39};
	assert_int_equal(cast(OM_INT2, packed, 7, OM_INT16, &out), OM_OK);
	assert_memory_equal(out.data, ((int16_t[]){1, -2, -1, 0, 1, -2, -1}), 14);
	om_tensor_free(&out);
	assert_int_equal(cast(OM_UINT2, packed, 7, OM_FLOAT, &out), OM_OK);
	assert_memory_equal(out.data, ((float[]){1, 2, 3, 0, 1, 2, 3}), 28);
	om_tensor_free(&out);
	/* int2 -> int4: sign-extended; int4 -> uint2: the low bits */
	assert_int_equal(cast(OM_INT2, packed, 3, OM_INT4, &out), OM_OK);
	assert_memory_equal(out.data, ((uint8_t[]){0xe1, 0x0f}), 2); /* 1, -2, -1 */
	om_tensor_free(&out);
	const uint8_t i4[] = {0x7e}; /* -2, 7 */
	assert_int_equal(cast(OM_INT4, i4, 2, OM_UINT2, &out), OM_OK);
	assert_int_equal(((uint8_t *)out.data)[0], 0x0e); /* 2, 3 */
	om_tensor_free(&out);
}

/* Transpose of a [2, 3] int2 tensor goes through om_move_run's unpacking */
static void transpose_int2(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Transpose", 1, 1);
	nt_ints(n, "perm", (int64_t[]){1, 0}, 2);
	/* [[1, -2, -1], [0, 1, -2]]: 01 10 11 00 | 01 10 */
	om_tensor x = nt_tensor(OM_INT2, 2, (int64_t[]){2, 3}, (uint8_t[]){0x39, 0x09});
	om_tensor out[1];
	assert_int_equal(nt_run(n, 21, (const om_tensor *[]){&x}, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT2);
	assert_int_equal(out[0].dims[0], 3);
	/* [[1, 0], [-2, 1], [-1, -2]]: 01 00 10 01 | 11 10 */
	assert_memory_equal(out[0].data, ((uint8_t[]){0x61, 0x0b}), 2);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void constant_of_shape_uint2(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "ConstantOfShape", 1, 1);
	static const uint8_t v2 = 0x02; /* uint2 2 */
	om_tensor v = nt_tensor(OM_UINT2, 1, (int64_t[]){1}, &v2);
	om_node_set_attr(n, "value", OM_ATTR_TENSOR)->t = &v;
	om_tensor s = nt_tensor(OM_INT64, 1, (int64_t[]){1}, (int64_t[]){5});
	om_tensor out[1];
	assert_int_equal(nt_run(n, 25, (const om_tensor *[]){&s}, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_UINT2);
	assert_int_equal(out[0].nbytes, 2);
	assert_memory_equal(out[0].data, ((uint8_t[]){0xaa, 0x02}), 2);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* rounds half to even and saturates to [-2, 1] */
static void quantize_int2(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "QuantizeLinear", 3, 1);
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){5}, (float[]){-3, -1.2f, 0.5f, 2.6f, 5});
	om_tensor sc = nt_tensor(OM_FLOAT, 0, NULL, (float[]){1});
	om_tensor zp = nt_tensor(OM_INT2, 0, NULL, (uint8_t[]){0});
	om_tensor out[1];
	assert_int_equal(nt_run(n, 25, (const om_tensor *[]){&x, &sc, &zp}, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT2);
	/* -2, -1, 0, 1 | 1: 10 11 00 01 | 01 */
	assert_memory_equal(out[0].data, ((uint8_t[]){0x4e, 0x01}), 2);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(packing),        cmocka_unit_test(cast_int2),
		cmocka_unit_test(transpose_int2), cmocka_unit_test(constant_of_shape_uint2),
		cmocka_unit_test(quantize_int2),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
