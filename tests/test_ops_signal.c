/* test_ops_signal.c — window functions and DFT (hand computation). */
#include "nodetest.h"

static void windows(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "HannWindow", 1, 1);
	int64_t size = 4;
	om_tensor ts = nt_tensor(OM_INT64, 0, NULL, &size);
	const om_tensor *in[] = {&ts};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){4}, (float[]){0, 0.5f, 1, 0.5f}, 1e-6);
	om_tensor_free(&out[0]);
	/* symmetric (periodic 0) Hamming of 3: 0.08696, 1, 0.08696 */
	n->op = "HammingWindow";
	nt_int(n, "periodic", 0);
	size = 3;
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){3}, (float[]){4.0f / 46, 1, 4.0f / 46}, 1e-6);
	om_tensor_free(&out[0]);
	/* periodic Blackman of 4: 0.42 - 0.5 cos(2 pi i / 4) + 0.08 cos(4 pi i / 4) */
	n->op = "BlackmanWindow";
	nt_int(n, "periodic", 1);
	size = 4;
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	nt_check_f32(&out[0], 1, (int64_t[]){4}, (float[]){0, 0.34f, 1, 0.34f}, 1e-6);
	om_tensor_free(&out[0]);
	size = -1;
	assert_int_equal(nt_run(n, 17, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* [1, 2, 3, 4] (real): spectrum 10, -2 + 2i, -2 (onesided) */
static void dft(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DFT", 1, 1);
	nt_int(n, "onesided", 1);
	om_tensor x = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 4, 1}, (float[]){1, 2, 3, 4});
	const om_tensor *in[] = {&x};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 3, 2}, (float[]){10, 0, -2, 2, -2, 0}, 1e-6);
	om_tensor_free(&out[0]);
	/* axis 2 is the complex axis */
	nt_int(n, "axis", 2);
	assert_int_equal(nt_run(n, 17, in, out), OM_ERR_INVALID_MODEL);
	/* DFT-20: the axis is input 2 (default -2), the attribute means nothing */
	assert_int_equal(nt_run(n, 20, in, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 3, 2}, (float[]){10, 0, -2, 2, -2, 0}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
	n = nt_node(&m, "DFT", 3, 1);
	nt_int(n, "onesided", 1);
	int64_t axis = 2;
	om_tensor ta = nt_tensor(OM_INT64, 0, NULL, &axis);
	const om_tensor *in3[] = {&x, NULL, &ta};
	assert_int_equal(nt_run(n, 20, in3, out), OM_ERR_INVALID_MODEL);
	axis = -2;
	assert_int_equal(nt_run(n, 20, in3, out), OM_OK);
	nt_check_f32(&out[0], 3, (int64_t[]){1, 3, 2}, (float[]){10, 0, -2, 2, -2, 0}, 1e-6);
	om_tensor_free(&out[0]);
	om_model_free(m);
}

/* 8 mel bins over 9 DFT bins (length 16, 8192 Hz, 0 to 4096 Hz): the edges land on DFT bins
 * 0 0 0 1 1 2 3 4 5 6, so row 0 is [1, 1, 0...] and rows 6 to 8 are empty */
static void mel_weight_matrix(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "MelWeightMatrix", 5, 1);
	int32_t nmel = 8, dft = 16, rate = 8192;
	float lo = 0, hi = 4096;
	om_tensor t0 = nt_tensor(OM_INT32, 0, NULL, &nmel), t1 = nt_tensor(OM_INT32, 0, NULL, &dft);
	om_tensor t2 = nt_tensor(OM_INT32, 0, NULL, &rate), t3 = nt_tensor(OM_FLOAT, 0, NULL, &lo);
	om_tensor t4 = nt_tensor(OM_FLOAT, 0, NULL, &hi);
	const om_tensor *in[] = {&t0, &t1, &t2, &t3, &t4};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 17, in, out), OM_OK);
	float want[9 * 8] = {0};
	const int at[][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
	for (int i = 0; i < 8; i++)
		want[at[i][0] * 8 + at[i][1]] = 1;
	nt_check_f32(&out[0], 2, (int64_t[]){9, 8}, want, 1e-6);
	om_tensor_free(&out[0]);
	rate = 0;
	assert_int_equal(nt_run(n, 17, in, out), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(windows),
		cmocka_unit_test(dft),
		cmocka_unit_test(mel_weight_matrix),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
