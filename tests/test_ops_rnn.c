/* test_ops_rnn.c — RNN/GRU/LSTM: a hand-computed LSTM step, errors, exact mode.
 * Values against ONNX Runtime are in tests/cases/rnn (gen_cases_rnn.py). */
#include "nodetest.h"

static float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/* hidden 1, input 1, one step, all weights given: the LSTM equations by hand */
static void lstm_one_step(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "LSTM", 3, 3);
	nt_int(n, "hidden_size", 1);
	const float x[] = {0.5f}, w[] = {0.1f, 0.2f, 0.3f, 0.4f}, r[] = {0.5f, -0.6f, 0.7f, -0.8f};
	const om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, x);
	const om_tensor tw = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 4, 1}, w);
	const om_tensor tr = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 4, 1}, r);
	const om_tensor *in[] = {&tx, &tw, &tr};
	om_tensor out[3];
	assert_int_equal(nt_run(n, 14, in, out), OM_OK);
	/* h0 = c0 = 0: gates i, o, f, c from x alone */
	const float i = sigmoid(0.05f), o = sigmoid(0.1f), cg = tanhf(0.2f);
	const float c1 = i * cg, h1 = o * tanhf(c1);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 1, 1}, &h1, 1e-6);
	nt_check_f32(&out[1], 3, (int64_t[]){1, 1, 1}, &h1, 1e-6);
	nt_check_f32(&out[2], 3, (int64_t[]){1, 1, 1}, &c1, 1e-6);
	for (int k = 0; k < 3; k++)
		om_tensor_free(&out[k]);
	om_model_free(m);
}

static void errors(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "GRU", 5, 1);
	nt_int(n, "hidden_size", 2);
	float buf[64] = {0};
	const om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){2, 1, 3}, buf);
	const om_tensor tw = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 6, 3}, buf);
	const om_tensor tr = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 6, 2}, buf);
	const om_tensor bad_r = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 6, 3}, buf);
	const int32_t lens[] = {3};
	const om_tensor tl = nt_tensor(OM_INT32, 1, (int64_t[]){1}, lens);
	om_tensor out[1];
	const om_tensor *bad_shape[] = {&tx, &tw, &bad_r, NULL, NULL};
	assert_int_equal(nt_run(n, 14, bad_shape, out), OM_ERR_INVALID_MODEL);
	/* a sequence length past the sequence is a run-time input error */
	const om_tensor *bad_len[] = {&tx, &tw, &tr, NULL, &tl};
	assert_int_equal(nt_run(n, 14, bad_len, out), OM_ERR_INVALID_INPUT);
	om_node_set_attr(n, "activations", OM_ATTR_STRINGS)->n = 0;
	const om_tensor *ok[] = {&tx, &tw, &tr, NULL, NULL};
	assert_int_equal(nt_run(n, 14, ok, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(lstm_one_step),
					   cmocka_unit_test(errors)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
