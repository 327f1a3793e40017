/* test_ops_misc.c — DepthToSpace, SpaceToDepth, Compress, ReverseSequence, EyeLike (hand
 * computation). */
#include "nodetest.h"

static void check_i32(const om_tensor *t, int64_t n, const int32_t *want)
{
	assert_int_equal(om_tensor_numel(t), n);
	const int32_t *y = t->data;
	for (int64_t i = 0; i < n; i++)
		assert_int_equal(y[i], want[i]);
}

static const int32_t iota8[] = {0, 1, 2, 3, 4, 5, 6, 7};

static void depth_space(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DepthToSpace", 1, 1);
	nt_int(n, "blocksize", 2);
	om_tensor x = nt_tensor(OM_INT32, 4, (int64_t[]){1, 8, 1, 1}, iota8);
	const om_tensor *in[] = {&x};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dims[1], 2), assert_int_equal(out[0].dims[2], 2);
	const int32_t dcr[] = {0, 2, 4, 6, 1, 3, 5, 7};
	check_i32(&out[0], 8, dcr);
	om_tensor_free(&out[0]);
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"CRD", 3};
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	check_i32(&out[0], 8, iota8);
	om_tensor_free(&out[0]);
	/* SpaceToDepth undoes DCR */
	n->op = "SpaceToDepth";
	om_tensor s = nt_tensor(OM_INT32, 4, (int64_t[]){1, 2, 2, 2}, dcr);
	in[0] = &s;
	assert_int_equal(nt_run(n, 13, in, out), OM_OK);
	assert_int_equal(out[0].dims[1], 8);
	check_i32(&out[0], 8, iota8);
	om_tensor_free(&out[0]);
	nt_int(n, "blocksize", 3);
	assert_int_equal(nt_run(n, 13, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

static void compress(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Compress", 2, 1);
	om_tensor x = nt_tensor(OM_INT32, 2, (int64_t[]){3, 2}, iota8);
	om_tensor c1 = nt_tensor(OM_BOOL, 1, (int64_t[]){3}, (uint8_t[]){0, 1, 1});
	const om_tensor *in[] = {&x, &c1};
	om_tensor out[1];
	nt_int(n, "axis", 0);
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	assert_int_equal(out[0].dims[0], 2), assert_int_equal(out[0].dims[1], 2);
	check_i32(&out[0], 4, (int32_t[]){2, 3, 4, 5});
	om_tensor_free(&out[0]);
	n->nattr = 0; /* flattened */
	om_tensor c2 = nt_tensor(OM_BOOL, 1, (int64_t[]){5}, (uint8_t[]){0, 1, 0, 0, 1});
	in[1] = &c2;
	assert_int_equal(nt_run(n, 11, in, out), OM_OK);
	check_i32(&out[0], 2, (int32_t[]){1, 4});
	om_tensor_free(&out[0]);
	om_tensor c3 = nt_tensor(OM_BOOL, 1, (int64_t[]){7}, (uint8_t[]){0, 0, 0, 0, 0, 0, 1});
	in[1] = &c3;
	assert_int_equal(nt_run(n, 11, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* x [time 3, batch 2] = [[0, 1], [2, 3], [4, 5]], lengths [3, 1] */
static void reverse_sequence(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "ReverseSequence", 2, 1);
	om_tensor x = nt_tensor(OM_INT32, 2, (int64_t[]){3, 2}, iota8);
	int64_t lens[] = {3, 1};
	om_tensor tl = nt_tensor(OM_INT64, 1, (int64_t[]){2}, lens);
	const om_tensor *in[] = {&x, &tl};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 10, in, out), OM_OK);
	check_i32(&out[0], 6, (int32_t[]){4, 1, 2, 3, 0, 5});
	om_tensor_free(&out[0]);
	lens[1] = 4;
	assert_int_equal(nt_run(n, 10, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

static void eye_like(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "EyeLike", 1, 1);
	nt_int(n, "k", 1);
	om_tensor x = nt_tensor(OM_INT32, 2, (int64_t[]){2, 3}, iota8);
	const om_tensor *in[] = {&x};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 9, in, out), OM_OK);
	check_i32(&out[0], 6, (int32_t[]){0, 1, 0, 0, 0, 1});
	om_tensor_free(&out[0]);
	nt_int(n, "k", INT64_MAX); /* no diagonal inside: zeros */
	nt_int(n, "dtype", OM_FLOAT);
	assert_int_equal(nt_run(n, 9, in, out), OM_OK);
	nt_check_f32(&out[0], 2, (int64_t[]){2, 3}, (float[]){0, 0, 0, 0, 0, 0}, 0);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* x [1, 4] = [0, 1, 2, 3] to [3, 2]: rows padded around, columns cropped to [1, 2] */
static void center_crop_pad(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "CenterCropPad", 2, 1);
	om_tensor x = nt_tensor(OM_INT32, 2, (int64_t[]){1, 4}, iota8);
	int64_t shape[] = {3, 2};
	om_tensor ts = nt_tensor(OM_INT64, 1, (int64_t[]){2}, shape);
	const om_tensor *in[] = {&x, &ts};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	assert_int_equal(out[0].dims[0], 3), assert_int_equal(out[0].dims[1], 2);
	check_i32(&out[0], 6, (int32_t[]){0, 0, 1, 2, 0, 0});
	om_tensor_free(&out[0]);
	/* axes [-1]: one extent */
	nt_ints(n, "axes", (int64_t[]){-1}, 1);
	ts = nt_tensor(OM_INT64, 1, (int64_t[]){1}, shape);
	assert_int_equal(nt_run(n, 18, in, out), OM_OK);
	check_i32(&out[0], 3, (int32_t[]){0, 1, 2}); /* crop start floor(1 / 2) = 0 */
	om_tensor_free(&out[0]);
	ts = nt_tensor(OM_INT64, 1, (int64_t[]){2}, shape);
	assert_int_equal(nt_run(n, 18, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(depth_space),
		cmocka_unit_test(compress),
		cmocka_unit_test(reverse_sequence),
		cmocka_unit_test(eye_like),
		cmocka_unit_test(center_crop_pad),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
