/* test_ops_fold.c — Col2Im (hand computation). */
#include "nodetest.h"

/* image [3], block [2]: columns [[1, 2], [3, 4]] sum into [1, 2 + 3, 4] */
static void col2im(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Col2Im", 3, 1);
	om_tensor x = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 2}, (float[]){1, 2, 3, 4});
	int64_t image[] = {3}, block[] = {2};
	om_tensor ti = nt_tensor(OM_INT64, 1, (int64_t[]){1}, image);
	om_tensor tb = nt_tensor(OM_INT64, 1, (int64_t[]){1}, block);
	const om_tensor *in[] = {&x, &ti, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 1, 3}, (float[]){1, 5, 4}, 0);
	om_tensor_free(&out[0]);
	image[0] = 4; /* three blocks, two columns */
	assert_int_equal(nt_run(n, 18, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(col2im),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
