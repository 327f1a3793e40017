/* test_ops_unique.c — Unique (hand computation). */
#include "nodetest.h"

static void check_i64(const om_tensor *t, int64_t n, const int64_t *want)
{
	assert_int_equal(t->rank, 1);
	assert_int_equal(t->dims[0], n);
	const int64_t *y = t->data;
	for (int64_t i = 0; i < n; i++)
		assert_int_equal(y[i], want[i]);
}

/* x = [2, 1, 1, 3, 2] */
static void unique(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Unique", 1, 4);
	om_tensor x = nt_tensor(OM_INT64, 1, (int64_t[]){5}, (int64_t[]){2, 1, 1, 3, 2});
	const om_tensor *in[] = {&x};
	om_tensor out[4];
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	check_i64(&out[0], 3, (int64_t[]){1, 2, 3});
	check_i64(&out[1], 3, (int64_t[]){1, 0, 3});
	check_i64(&out[2], 5, (int64_t[]){1, 0, 0, 2, 1});
	check_i64(&out[3], 3, (int64_t[]){2, 2, 1});
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	nt_int(n, "sorted", 0);
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	check_i64(&out[0], 3, (int64_t[]){2, 1, 3});
	check_i64(&out[1], 3, (int64_t[]){0, 1, 3});
	check_i64(&out[2], 5, (int64_t[]){0, 1, 1, 2, 0});
	check_i64(&out[3], 3, (int64_t[]){2, 2, 1});
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	nt_int(n, "axis", 1);
	assert_int_equal(nt_run(n, 11, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* rows of [[1, 0], [0, 1], [1, 0]] along axis 0: [[0, 1], [1, 0]] */
static void unique_axis(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Unique", 1, 4);
	nt_int(n, "axis", 0);
	om_tensor x = nt_tensor(OM_FLOAT, 2, (int64_t[]){3, 2}, (float[]){1, 0, 0, 1, 1, 0});
	const om_tensor *in[] = {&x};
	om_tensor out[4];
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){0, 1, 1, 0}, 0);
	check_i64(&out[2], 3, (int64_t[]){1, 0, 1});
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unique),
		cmocka_unit_test(unique_axis),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
