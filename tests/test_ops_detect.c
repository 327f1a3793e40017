/* test_ops_detect.c — NonMaxSuppression and RoiAlign (hand computation). */
#include "nodetest.h"

/* boxes A [0, 0, 1, 1], B [0, 0.1, 1, 1.1] (IoU with A 0.9 / 1.1), C [0, 2, 1, 3] */
static const float boxes[] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3};
static const float scores[] = {0.9f, 0.8f, 0.7f};

static void nms_case(int64_t max_out, float iou, float score, int64_t n, const int64_t *want)
{
	om_model *m;
	om_node *nd = nt_node(&m, "NonMaxSuppression", 5, 1);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 3, 4}, boxes);
	om_tensor ts = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, scores);
	om_tensor tm = nt_tensor(OM_INT64, 1, (int64_t[]){1}, &max_out);
	om_tensor ti = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, &iou);
	om_tensor tsc = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, &score);
	const om_tensor *in[] = {&tb, &ts, &tm, &ti, score >= 0 ? &tsc : NULL};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 11, in, out), OM_OK);
	assert_int_equal(out[0].dtype, OM_INT64);
	assert_int_equal(out[0].dims[0], n);
	assert_int_equal(out[0].dims[1], 3);
	const int64_t *y = out[0].data;
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(y[i * 3], 0), assert_int_equal(y[i * 3 + 1], 0);
		assert_int_equal(y[i * 3 + 2], want[i]);
	}
	om_tensor_free(&out[0]);
	om_model_free(m);
}

static void non_max_suppression(void **state)
{
	(void)state;
	nms_case(3, 0.5f, -1, 2, (int64_t[]){0, 2});
	nms_case(3, 0.9f, -1, 3, (int64_t[]){0, 1, 2});
	nms_case(1, 0.5f, -1, 1, (int64_t[]){0});
	nms_case(3, 0.5f, 0.75f, 1, (int64_t[]){0});
	nms_case(0, 0.5f, -1, 0, NULL);
}

static void nms_errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "NonMaxSuppression", 2, 1);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 3, 4}, boxes);
	om_tensor ts = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 2}, scores);
	const om_tensor *in[] = {&tb, &ts};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 11, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* X = [[1, 2], [3, 4]], roi [0, 0, 2, 2] (half_pixel), one bin of one sample: the centre 2.5 */
static void roi_align(void **state)
{
	(void)state;
	om_model *m;
	om_node *nd = nt_node(&m, "RoiAlign", 3, 1);
	nt_int(nd, "sampling_ratio", 1);
	om_tensor x = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, (float[]){1, 2, 3, 4});
	om_tensor r = nt_tensor(OM_FLOAT, 2, (int64_t[]){1, 4}, (float[]){0, 0, 2, 2});
	int64_t b[] = {0};
	om_tensor tb = nt_tensor(OM_INT64, 1, (int64_t[]){1}, b);
	const om_tensor *in[] = {&x, &r, &tb};
	om_tensor out[1];
	assert_int_equal(nt_run(nd, 16, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, (float[]){2.5f}, 1e-6);
	om_tensor_free(&out[0]);
	b[0] = 1;
	assert_int_equal(nt_run(nd, 16, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(non_max_suppression),
		cmocka_unit_test(nms_errors),
		cmocka_unit_test(roi_align),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
