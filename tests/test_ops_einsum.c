/* test_ops_einsum.c — Einsum (hand computation). */
#include "nodetest.h"

static void set_eq(om_node *n, const char *eq)
{
	om_node_set_attr(n, "equation", OM_ATTR_STRING)->s = (om_str){eq, (int64_t)strlen(eq)};
}

static void einsum(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Einsum", 2, 1);
	om_tensor a = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 2}, (float[]){1, 2});
	om_tensor b = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 1}, (float[]){3, 4});
	const om_tensor *in[] = {&a, &b};
	om_tensor out[1];
	set_eq(n, "ij, jk -> ik");
	assert_int_equal(nt_run(n, 12, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){1, 1}, (float[]){11}, 0);
	om_tensor_free(&out[0]);
	/* implicit output: the labels seen once, sorted: "ik" */
	set_eq(n, "ij,jk");
	assert_int_equal(nt_run(n, 12, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){1, 1}, (float[]){11}, 0);
	om_tensor_free(&out[0]);
	/* outer product */
	set_eq(n, "ij,kl->jk");
	assert_int_equal(nt_run(n, 12, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 2}, (float[]){3, 4, 6, 8}, 0);
	om_tensor_free(&out[0]);
	/* j has extents 2 and 1 */
	set_eq(n, "ij,kj->ik");
	assert_int_equal(nt_run(n, 12, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* the diagonal of [[1, 2], [3, 4]] in a batch of one, and its trace */
static void einsum_diagonal(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Einsum", 1, 1);
	om_tensor x = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 2}, (float[]){1, 2, 3, 4});
	const om_tensor *in[] = {&x};
	om_tensor out[1];
	set_eq(n, "...ii->...i");
	assert_int_equal(nt_run(n, 12, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){1, 2}, (float[]){1, 4}, 0);
	om_tensor_free(&out[0]);
	set_eq(n, "bii");
	assert_int_equal(nt_run(n, 12, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){1}, (float[]){5}, 0);
	om_tensor_free(&out[0]);
	set_eq(n, "b.i");
	assert_int_equal(nt_run(n, 12, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(einsum),
		cmocka_unit_test(einsum_diagonal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
