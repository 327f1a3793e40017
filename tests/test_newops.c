/* test_newops.c — ONNX 1.23's CausalConvWithState, LinearAttention, DeformConv and
 * ai.onnx.preview FlexAttention (kernels/conv/ops_causal_conv.c, ops_deform_conv.c,
 * kernels/nn/ops_linear_attn.c, ops_flex_attn.c) on hand-computed values: with and without
 * past state, bias, SiLU, kernel size 1, an empty sequence, a short input; each update rule
 * at T = 1, grouped query heads, per-head decay, a shared beta, the default scale, T = 0;
 * Operators.md's DeformConv example, a 1-D case with a fractional offset and the input's edge,
 * a mask, offset groups; FlexAttention's softmax, scale and grouped heads; malformed nodes are
 * InvalidModel. (The node tests of ONNX 1.23 run through `conformance`.) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nodetest.h"

/* runs n (outputs out[0..nout)) and expects OM_OK */
static void run_ok(const om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out)
{
	om_status st = {0};
	om_kind rc = om_eval_node(n, opset, in, out, &st);
	if (rc)
		fail_msg("%s: %s", n->op, st.msg);
}

static void expect_bad(const om_node *n, int64_t opset, const om_tensor *const *in)
{
	om_tensor out[2];
	memset(out, 0, sizeof out);
	om_status st = {0};
	assert_int_equal(om_eval_node(n, opset, in, out, &st), OM_ERR_INVALID_MODEL);
}

/* ---- CausalConvWithState ---------------------------------------------------------------- */

/* input [1, 2, 3], weight [10, 1]: padded rows (past or 0) then the input */
static void causal_conv_values(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "CausalConvWithState", 4, 2);
	float x[] = {1, 2, 3}, w[] = {10, 1}, b[] = {0.5f}, past[] = {5};
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, x);
	om_tensor tw = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 2}, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, b);
	om_tensor tp = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, past);
	om_tensor out[2];
	/* no bias, no past: [0*10 + 1, 1*10 + 2, 2*10 + 3], state [3] */
	n->in[2] = n->in[3] = NULL;
	run_ok(n, 27, (const om_tensor *[]){&tx, &tw, NULL, NULL}, out);
	nt_assert_floats(&out[0], (float[]){1, 12, 23}, 3, 0);
	nt_assert_floats(&out[1], (float[]){3}, 1, 0);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* bias and past: the first output sees the past value 5 */
	n->in[2] = nt_value(m, "b", 0), n->in[3] = nt_value(m, "p", 0);
	run_ok(n, 27, (const om_tensor *[]){&tx, &tw, &tb, &tp}, out);
	nt_assert_floats(&out[0], (float[]){51.5f, 12.5f, 23.5f}, 3, 0);
	nt_assert_floats(&out[1], (float[]){3}, 1, 0);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* SiLU (and its alias swish): y * sigmoid(y) */
	const char *acts[] = {"silu", "swish"};
	for (int a = 0; a < 2; a++) {
		nt_str(n, "activation", acts[a]);
		run_ok(n, 27, (const om_tensor *[]){&tx, &tw, &tb, &tp}, out);
		float want[3];
		const double y[3] = {51.5, 12.5, 23.5};
		for (int i = 0; i < 3; i++)
			want[i] = (float)(y[i] / (1 + exp(-y[i])));
		nt_assert_floats(&out[0], want, 3, 1e-6);
		om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	}
	nt_str(n, "activation", "relu");
	expect_bad(n, 27, (const om_tensor *[]){&tx, &tw, &tb, &tp});
	nt_free(m);
}

static void causal_conv_edges(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "CausalConvWithState", 4, 2);
	n->in[2] = NULL;
	om_tensor out[2];
	/* kernel size 1: y = 2 x, an empty state */
	float x[] = {1, -2, 3}, w1[] = {2};
	om_tensor tx = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, x);
	om_tensor tw1 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, w1);
	om_tensor tp0 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 0}, x);
	run_ok(n, 27, (const om_tensor *[]){&tx, &tw1, NULL, &tp0}, out);
	nt_assert_floats(&out[0], (float[]){2, -4, 6}, 3, 0);
	nt_assert_shape(&out[1], 3, (int64_t[]){1, 1, 0});
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* an empty sequence: no output, the past state carried as it is */
	float w3[] = {1, 1, 1}, past[] = {7, 8};
	om_tensor tw3 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 3}, w3);
	om_tensor te = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 0}, x);
	om_tensor tp = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 2}, past);
	run_ok(n, 27, (const om_tensor *[]){&te, &tw3, NULL, &tp}, out);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 1, 0});
	nt_assert_floats(&out[1], (float[]){7, 8}, 2, 0);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* an input shorter than k - 1: the state keeps the past's tail and the input */
	om_tensor t1 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, x);
	run_ok(n, 27, (const om_tensor *[]){&t1, &tw3, NULL, &tp}, out);
	nt_assert_floats(&out[0], (float[]){16}, 1, 0);
	nt_assert_floats(&out[1], (float[]){8, 1}, 2, 0);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* malformed: a past of the wrong length, a weight not (C, 1, k), k = 0, int64 input */
	expect_bad(n, 27, (const om_tensor *[]){&tx, &tw3, NULL, &tp0});
	om_tensor tw0 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 0}, w3);
	om_tensor tpn = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 0}, x);
	expect_bad(n, 27, (const om_tensor *[]){&tx, &tw0, NULL, &tpn});
	om_tensor twb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, w3);
	expect_bad(n, 27, (const om_tensor *[]){&tx, &twb, NULL, &tp0});
	int64_t xi[] = {1, 2, 3};
	om_tensor txi = nt_tensor(OM_INT64, 3, (int64_t[]){1, 1, 3}, xi);
	expect_bad(n, 27, (const om_tensor *[]){&txi, &tw1, NULL, &tp0});
	nt_free(m);
}

/* ---- LinearAttention -------------------------------------------------------------------- */

/* one head, d_k = d_v = 1, T = 1, scale 1: q 2, k 3, v 4, past 8 (decay log 0.5, beta 0.5) */
static void linear_attention_rules(void **state)
{
	(void)state;
	const char *rules[] = {"linear", "gated", "delta", "gated_delta"};
	/* linear: S = 8 + 12 = 20; gated: 4 + 12 = 16; delta: v' = 0.5 (4 - 24) = -10,
	 * S = 8 - 30 = -22; gated_delta: S0 = 4, v' = 0.5 (4 - 12) = -4, S = 4 - 12 = -8 */
	const float want_s[] = {20, 16, -22, -8};
	float q[] = {2}, k[] = {3}, v[] = {4}, past[] = {8}, g[] = {(float)log(0.5)}, be[] = {0.5f};
	om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, q);
	om_tensor tk = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, k);
	om_tensor tv = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, v);
	om_tensor tp = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 1, 1}, past);
	om_tensor tg = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, g);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 1, 1}, be);
	for (int r = 0; r < 4; r++) {
		om_model *m;
		om_node *n = nt_node(&m, "LinearAttention", 6, 2);
		nt_int(n, "q_num_heads", 1), nt_int(n, "kv_num_heads", 1);
		nt_float(n, "scale", 1);
		nt_str(n, "update_rule", rules[r]);
		const bool gated = r & 1, delta = r & 2;
		if (!gated)
			n->in[4] = NULL;
		if (!delta)
			n->in[5] = NULL;
		const om_tensor *in[] = {&tq, &tk, &tv, &tp, gated ? &tg : NULL, delta ? &tb : NULL};
		om_tensor out[2];
		run_ok(n, 27, in, out);
		nt_assert_floats(&out[1], &want_s[r], 1, 1e-6);
		const float o = 2 * want_s[r];
		nt_assert_floats(&out[0], &o, 1, 1e-6);
		om_tensor_free(&out[0]), om_tensor_free(&out[1]);
		/* the other rule's gate is refused, a missing one too */
		const om_tensor *wrong[] = {&tq, &tk, &tv, &tp, gated ? NULL : &tg, delta ? &tb : NULL};
		n->in[4] = gated ? NULL : nt_value(m, "g", 0);
		expect_bad(n, 27, wrong);
		nt_free(m);
	}
}

/* two query heads on one KV head (d_k 2, d_v 1), per-head decay, beta shared (last dim 1),
 * the default scale 1 / sqrt(2), two tokens, no past */
static void linear_attention_gqa(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "LinearAttention", 6, 2);
	nt_int(n, "q_num_heads", 2), nt_int(n, "kv_num_heads", 1);
	n->in[3] = NULL;
	/* token 0: k (1, 0), v 2; token 1: k (0, 1), v 3; decay log 0.5 both; beta 1 */
	float q[] = {1, 0, 0, 1, 1, 1, 2, 0}, k[] = {1, 0, 0, 1}, v[] = {2, 3};
	float g[] = {(float)log(0.5), (float)log(0.5)}, be[] = {1, 1};
	om_tensor tq = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 4}, q);
	om_tensor tk = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 2}, k);
	om_tensor tv = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, v);
	om_tensor tg = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, g);
	om_tensor tb = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 1}, be);
	om_tensor out[2];
	run_ok(n, 27, (const om_tensor *[]){&tq, &tk, &tv, NULL, &tg, &tb}, out);
	/* t0: S = (2, 0); heads q (1, 0) -> 2, q (0, 1) -> 0.
	 * t1: S = (1, 0), retrieved 0, v' = 3, S = (1, 3); q (1, 1) -> 4, q (2, 0) -> 2 */
	const double s = 1 / sqrt(2.0);
	const float want[] = {(float)(2 * s), 0, (float)(4 * s), (float)(2 * s)};
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 2, 2});
	nt_assert_floats(&out[0], want, 4, 1e-6);
	nt_assert_shape(&out[1], 4, (int64_t[]){1, 1, 2, 1});
	nt_assert_floats(&out[1], (float[]){1, 3}, 2, 1e-6);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* T = 0: an empty output, the state zeros */
	om_tensor e3 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 0, 4}, q);
	om_tensor e2 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 0, 2}, q);
	om_tensor e1 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 0, 1}, q);
	run_ok(n, 27, (const om_tensor *[]){&e3, &e2, &e1, NULL, &e1, &e1}, out);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 0, 2});
	nt_assert_floats(&out[1], (float[]){0, 0}, 2, 0);
	om_tensor_free(&out[0]), om_tensor_free(&out[1]);
	/* malformed: heads that do not divide, a decay of another width, beta of 2 heads */
	om_tensor tg3 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 3}, q);
	expect_bad(n, 27, (const om_tensor *[]){&tq, &tk, &tv, NULL, &tg3, &tb});
	om_tensor tb2 = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 2}, q);
	expect_bad(n, 27, (const om_tensor *[]){&tq, &tk, &tv, NULL, &tg, &tb2});
	nt_int(n, "q_num_heads", 3);
	expect_bad(n, 27, (const om_tensor *[]){&tq, &tk, &tv, NULL, &tg, &tb});
	nt_free(m);
}

/* ---- DeformConv ------------------------------------------------------------------------- */

/* ONNX's Operators.md example: X = 0..8 (3x3), W ones (2x2), pads 1, two offsets */
static void deform_conv_example(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DeformConv", 3, 1);
	nt_ints(n, "kernel_shape", (int64_t[]){2, 2}, 2);
	nt_ints(n, "pads", (int64_t[]){1, 1, 1, 1}, 4);
	float x[9], w[] = {1, 1, 1, 1}, off[8 * 16] = {0};
	for (int i = 0; i < 9; i++)
		x[i] = (float)i;
	off[0] = 0.5f;               /* offset[0, 0, 0, 0] */
	off[5 * 16 + 1 * 4 + 2] = -0.1f; /* offset[0, 5, 1, 2] */
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 3, 3}, x);
	om_tensor tw = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, w);
	om_tensor to = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 8, 4, 4}, off);
	om_tensor out[1];
	run_ok(n, 19, (const om_tensor *[]){&tx, &tw, &to}, out);
	const float want[] = {0, 1, 3, 2, 3, 8, 11.9f, 7, 9, 20, 24, 13, 6, 13, 15, 8};
	nt_assert_floats(&out[0], want, 16, 1e-6);
	om_tensor_free(&out[0]);
	/* an offset field that does not match the output (3x3 instead of 4x4) */
	om_tensor tob = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 8, 3, 3}, off);
	expect_bad(n, 19, (const om_tensor *[]){&tx, &tw, &tob});
	nt_free(m);
}

/* 1-D, kernel 1: x (1, 2, 3, 4) sampled at i + 0.5 (the last sample half outside: 4 / 2),
 * then a mask; two channels in two offset groups; double */
static void deform_conv_1d(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "DeformConv", 5, 1);
	n->in[3] = NULL;
	double x[] = {1, 2, 3, 4, 10, 20, 30, 40}, w[] = {1, 0.5};
	double off[] = {0.5, 0.5, 0.5, 0.5, -1, -0.25, 0, 9}, mask[] = {1, 0, 2, 1, 1, 1, 1, 1};
	nt_int(n, "offset_group", 2);
	om_tensor tx = nt_tensor(OM_DOUBLE, 3, (int64_t[]){1, 2, 4}, x);
	om_tensor tw = nt_tensor(OM_DOUBLE, 3, (int64_t[]){1, 2, 1}, w);
	om_tensor to = nt_tensor(OM_DOUBLE, 3, (int64_t[]){1, 2, 4}, off);
	om_tensor tm = nt_tensor(OM_DOUBLE, 3, (int64_t[]){1, 2, 4}, mask);
	om_tensor out[1];
	run_ok(n, 22, (const om_tensor *[]){&tx, &tw, &to, NULL, &tm}, out);
	/* channel 0: 1.5 * 1, 2.5 * 0, 3.5 * 2, 2 * 1; channel 1 (times 0.5) at -1 (0),
	 * 0.75 (2.5 + 15 = 17.5), 2 (30), 12 (0) */
	const double want[] = {1.5, 8.75, 7 + 15, 2};
	assert_int_equal(out[0].dtype, OM_DOUBLE);
	nt_assert_shape(&out[0], 3, (int64_t[]){1, 1, 4});
	for (int i = 0; i < 4; i++)
		assert_true(fabs(((double *)out[0].data)[i] - want[i]) < 1e-12);
	om_tensor_free(&out[0]);
	/* a mask of the wrong width; offset_group not dividing the channels */
	om_tensor tmb = nt_tensor(OM_DOUBLE, 3, (int64_t[]){1, 1, 4}, mask);
	expect_bad(n, 22, (const om_tensor *[]){&tx, &tw, &to, NULL, &tmb});
	nt_int(n, "offset_group", 3);
	expect_bad(n, 22, (const om_tensor *[]){&tx, &tw, &to, NULL, &tm});
	nt_free(m);
}

/* ---- FlexAttention ---------------------------------------------------------------------- */

/* one query (1) on keys (0, 1) with scale ln 3: probabilities (1/4, 3/4), values 4 and 8;
 * two query heads on one KV head */
static void flex_attention_values(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "FlexAttention", 3, 1);
	n->domain = "ai.onnx.preview";
	nt_float(n, "scale", (float)log(3.0));
	float q[] = {1, 2}, k[] = {0, 1}, v[] = {4, 8};
	om_tensor tq = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 2, 1, 1}, q);
	om_tensor tk = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 1}, k);
	om_tensor tv = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 1}, v);
	om_tensor out[1];
	run_ok(n, 1, (const om_tensor *[]){&tq, &tk, &tv}, out);
	/* head 1: scores (0, 2 ln 3): (1/10, 9/10) -> 0.4 + 7.2 */
	nt_assert_floats(&out[0], (float[]){7, 7.6f}, 2, 1e-6);
	om_tensor_free(&out[0]);
	/* KV heads that do not divide the query heads; V of another length */
	om_tensor tk3 = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 3, 1, 1}, k);
	expect_bad(n, 1, (const om_tensor *[]){&tq, &tk3, &tv});
	om_tensor tv1 = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 1, 2}, v);
	expect_bad(n, 1, (const om_tensor *[]){&tq, &tk, &tv1});
	nt_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(causal_conv_values),
		cmocka_unit_test(causal_conv_edges),
		cmocka_unit_test(linear_attention_rules),
		cmocka_unit_test(linear_attention_gqa),
		cmocka_unit_test(deform_conv_example),
		cmocka_unit_test(deform_conv_1d),
		cmocka_unit_test(flex_attention_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
