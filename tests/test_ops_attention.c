/* test_ops_attention.c — Attention and RotaryEmbedding (values from hand computation). */
#include "nodetest.h"

/* q = 1, keys [0, ln 3], values [4, 8]: softmax [1/4, 3/4], y = 7 */
static const float ln3 = 1.0986122886681098f;

static void attention_basic(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Attention", 3, 4);
	const int64_t dq[] = {1, 1, 1, 1}, dk[] = {1, 1, 2, 1};
	om_tensor q = nt_tensor(OM_FLOAT, 4, dq, (float[]){1});
	om_tensor k = nt_tensor(OM_FLOAT, 4, dk, (float[]){0, ln3});
	om_tensor v = nt_tensor(OM_FLOAT, 4, dk, (float[]){4, 8});
	const om_tensor *in[] = {&q, &k, &v};
	om_tensor out[4];
	nt_int(n, "qk_matmul_output_mode", 3);
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){7}, 1e-6);
	nt_check_f32(&out[1], 4, dk, (float[]){0, ln3}, 1e-6);
	nt_check_f32(&out[2], 4, dk, (float[]){4, 8}, 1e-6);
	nt_check_f32(&out[3], 4, (int64_t[]){1, 1, 1, 2}, (float[]){0.25f, 0.75f}, 1e-6);
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	/* causal: the one query (position 0) sees key 0 only */
	nt_int(n, "is_causal", 1);
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){4}, 1e-6);
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	/* scale 0: uniform weights, y = 6 */
	nt_int(n, "is_causal", 0);
	nt_float(n, "scale", 0);
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){6}, 1e-6);
	for (int i = 0; i < 4; i++)
		om_tensor_free(&out[i]);
	om_model_free(m);
}

/* a bool mask [false, true] keeps key 1 only; a fully masked row gives zeros */
static void attention_mask_and_past(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Attention", 6, 3);
	const int64_t dq[] = {1, 1, 1, 1}, d1[] = {1, 1, 1, 1};
	om_tensor q = nt_tensor(OM_FLOAT, 4, dq, (float[]){1});
	om_tensor k = nt_tensor(OM_FLOAT, 4, d1, (float[]){ln3});
	om_tensor v = nt_tensor(OM_FLOAT, 4, d1, (float[]){8});
	om_tensor pk = nt_tensor(OM_FLOAT, 4, d1, (float[]){0});
	om_tensor pv = nt_tensor(OM_FLOAT, 4, d1, (float[]){4});
	om_tensor mask = nt_tensor(OM_BOOL, 2, (int64_t[]){1, 2}, (uint8_t[]){0, 1});
	const om_tensor *in[] = {&q, &k, &v, NULL, &pk, &pv};
	om_tensor out[3];
	/* past key 0 / value 4 and the new key ln 3 / value 8: y = 7, present = [0, ln 3] */
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){7}, 1e-6);
	nt_check_f32(&out[1], 4, (int64_t[]){1, 1, 2, 1}, (float[]){0, ln3}, 1e-6);
	nt_check_f32(&out[2], 4, (int64_t[]){1, 1, 2, 1}, (float[]){4, 8}, 1e-6);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	in[3] = &mask;
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){8}, 1e-6);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	const uint8_t none[] = {0, 0};
	mask = nt_tensor(OM_BOOL, 2, (int64_t[]){1, 2}, none);
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dq, (float[]){0}, 1e-6);
	for (int i = 0; i < 3; i++)
		om_tensor_free(&out[i]);
	/* a mask longer than the total sequence, and a past without its value */
	mask = nt_tensor(OM_BOOL, 2, (int64_t[]){1, 3}, (uint8_t[]){1, 1, 1});
	assert_int_equal(nt_run(n, 23, in, out), OM_ERR_INVALID_MODEL);
	in[3] = NULL, in[5] = NULL;
	assert_int_equal(nt_run(n, 23, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* 3-D, two query heads over one KV head: head 0 (q = 1) gives 7, head 1 (q = 0) gives 6 */
static void attention_3d_gqa(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Attention", 3, 1);
	nt_int(n, "q_num_heads", 2);
	nt_int(n, "kv_num_heads", 1);
	const int64_t dq[] = {1, 1, 2}, dk[] = {1, 2, 1};
	om_tensor q = nt_tensor(OM_FLOAT, 3, dq, (float[]){1, 0});
	om_tensor k = nt_tensor(OM_FLOAT, 3, dk, (float[]){0, ln3});
	om_tensor v = nt_tensor(OM_FLOAT, 3, dk, (float[]){4, 8});
	const om_tensor *in[] = {&q, &k, &v};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 3, dq, (float[]){7, 6}, 1e-6);
	om_tensor_free(&out[0]);
	/* 2 query heads do not group over 3 kv heads... nor split a hidden size of 2 into 3 */
	nt_int(n, "kv_num_heads", 3);
	assert_int_equal(nt_run(n, 23, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* x = [1, 0] rotated by 90 degrees (cos 0, sin 1): [0, 1]; caches picked by position id */
static void rotary_embedding(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "RotaryEmbedding", 4, 1);
	const int64_t dx[] = {1, 1, 1, 2};
	om_tensor x = nt_tensor(OM_FLOAT, 4, dx, (float[]){1, 0});
	om_tensor cs = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 1}, (float[]){1, 0});
	om_tensor sn = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 1}, (float[]){0, 1});
	int64_t pos[] = {1};
	om_tensor tp = nt_tensor(OM_INT64, 2, (int64_t[]){1, 1}, pos);
	const om_tensor *in[] = {&x, &cs, &sn, &tp};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dx, (float[]){0, 1}, 1e-6);
	om_tensor_free(&out[0]);
	pos[0] = 0;
	assert_int_equal(nt_run(n, 23, in, out), OM_OK);
	nt_check_f32(&out[0], 4, dx, (float[]){1, 0}, 1e-6);
	om_tensor_free(&out[0]);
	pos[0] = 2;
	assert_int_equal(nt_run(n, 23, in, out), OM_ERR_INVALID_INPUT);
	/* without position ids the caches are [batch, sequence, *] */
	in[3] = NULL;
	assert_int_equal(nt_run(n, 23, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(attention_basic),
		cmocka_unit_test(attention_mask_and_past),
		cmocka_unit_test(attention_3d_gqa),
		cmocka_unit_test(rotary_embedding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
