/* test_ops_scatter.c — ScatterElements and Scatter (the spec's examples, hand computation). */
#include "nodetest.h"

/* the spec's example 2: data [[1, 2, 3, 4, 5]], indices [[1, 3]], updates [[1.1, 2.1]], axis 1 */
static void scatter_elements(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "ScatterElements", 3, 1);
	nt_int(n, "axis", 1);
	const int64_t dx[] = {1, 5}, di[] = {1, 2};
	om_tensor x = nt_tensor(OM_FLOAT, 2, dx, (float[]){1, 2, 3, 4, 5});
	int64_t ix[] = {1, -2};
	om_tensor ti = nt_tensor(OM_INT64, 2, di, ix);
	om_tensor u = nt_tensor(OM_FLOAT, 2, di, (float[]){1.1f, 2.1f});
	const om_tensor *in[] = {&x, &ti, &u};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 2, dx, (float[]){1, 1.1f, 3, 2.1f, 5}, 0);
	om_tensor_free(&out[0]);
	/* reduction add onto the same element twice */
	ix[0] = 3, ix[1] = 3;
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"add", 3};
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 2, dx, (float[]){1, 2, 3, 7.2f, 5}, 1e-6);
	om_tensor_free(&out[0]);
	/* add from opset 16; before, no reduction: the later update replaces the first */
	assert_int_equal(nt_run(n, 16, in, out), OM_OK);
	nt_check_f32(&out[0], 2, dx, (float[]){1, 2, 3, 7.2f, 5}, 1e-6);
	om_tensor_free(&out[0]);
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	nt_check_f32(&out[0], 2, dx, (float[]){1, 2, 3, 2.1f, 5}, 0);
	om_tensor_free(&out[0]);
	/* max needs opset 18 */
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"max", 3};
	assert_int_equal(nt_run(n, 16, in, out), OM_ERR_INVALID_MODEL);
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 2, dx, (float[]){1, 2, 3, 4, 5}, 0);
	om_tensor_free(&out[0]);
	/* an index outside [-5, 5) */
	ix[1] = 5;
	assert_int_equal(nt_run(n, 18, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* Scatter (opset 9) on axis 0: data zeros [3, 2], indices [[1, 0]], updates [[7, 8]] */
static void scatter_deprecated(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Scatter", 3, 1);
	const int64_t dx[] = {3, 2}, di[] = {1, 2};
	om_tensor x = nt_tensor(OM_INT32, 2, dx, (int32_t[]){0, 0, 0, 0, 0, 0});
	om_tensor ti = nt_tensor(OM_INT32, 2, di, (int32_t[]){1, 0});
	om_tensor u = nt_tensor(OM_INT32, 2, di, (int32_t[]){7, 8});
	const om_tensor *in[] = {&x, &ti, &u};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 9, in, out), OM_OK);
	const int32_t *y = out[0].data, want[] = {0, 8, 7, 0, 0, 0};
	for (int i = 0; i < 6; i++)
		assert_int_equal(y[i], want[i]);
	om_tensor_free(&out[0]);
	/* Scatter has no reduction attribute: one given is not read, at any opset */
	om_node_set_attr(n, "reduction", OM_ATTR_STRING)->s = (om_str){"add", 3};
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	assert_memory_equal(out[0].data, want, sizeof want);
	om_tensor_free(&out[0]);
	/* updates wider than data along a non-axis dim */
	om_tensor wide = nt_tensor(OM_INT32, 2, (int64_t[]){1, 3}, (int32_t[]){1, 1, 1});
	in[1] = &wide, in[2] = &wide;
	assert_int_equal(nt_run(n, 9, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(scatter_elements),
		cmocka_unit_test(scatter_deprecated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
