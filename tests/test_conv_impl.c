/* test_conv_impl.c — the step's record of the implementation a conv kernel chose (om_ctx.impl,
 * om_ctx_chose): Conv's table (conv_impl.c) names the one that ran for depthwise, 1x1, 3x3
 * Winograd-eligible (fast mode) and exact-mode convs; ConvTranspose and ConvInteger name
 * theirs; nothing is recorded where nobody records (impl NULL). */
#include <string.h>

#include "nodetest.h"

/* Runs a float Conv of C -> M channels, k x k, on 1 x C x H x H (pads k / 2, group g) and
 * returns the implementation its kernel named (NULL: none). */
static const char *conv_impl(int64_t C, int64_t M, int64_t g, int64_t k, int64_t H, int exact)
{
	const int64_t nx = C * H * H, nw = M * (C / g) * k * k, p = k / 2;
	float *x = calloc((size_t)nx, sizeof(float)), *w = calloc((size_t)nw, sizeof(float));
	om_tensor tx = nt_tensor(OM_FLOAT, 4, ((int64_t[]){1, C, H, H}), x);
	om_tensor tw = nt_tensor(OM_FLOAT, 4, ((int64_t[]){M, C / g, k, k}), w);
	const om_tensor *in[2] = {&tx, &tw};
	om_model *m;
	om_node *n = nt_node(&m, "Conv", 2, 1);
	nt_int(n, "group", g);
	nt_ints(n, "pads", ((const int64_t[]){p, p, p, p}), 4);
	const char *impl = NULL;
	om_status st = {0};
	om_tensor out = {0};
	/* no state slot: oneDNN's implementation declines (it keeps its primitive there) */
	const om_ctx c = {.exact = exact, .threads = 1, .impl = &impl};
	assert_int_equal(nt_run_ctx(n, 13, in, &out, c, &st), OM_OK);
	om_tensor_free(&out);
	nt_free(m);
	free(x), free(w);
	return impl;
}

static void conv_records(void **state)
{
	(void)state;
	assert_string_equal(conv_impl(8, 8, 8, 3, 12, 1), "depthwise");
	assert_string_equal(conv_impl(8, 8, 8, 3, 12, 0), "depthwise");
	assert_string_equal(conv_impl(16, 24, 1, 1, 12, 1), "gemm-1x1");
	/* 3x3 stride 1, 16 channels: 5 x 5 tiles of 4x4 (over 16) in fast mode, im2col exact */
	assert_string_equal(conv_impl(16, 16, 1, 3, 20, 0), "winograd-f4");
	assert_string_equal(conv_impl(16, 16, 1, 3, 20, 1), "im2col-gemm");
	/* 3 x 3 tiles of 4x4 only: F(2x2) */
	assert_string_equal(conv_impl(16, 16, 1, 3, 10, 0), "winograd-f2");
	/* under 8 input channels a group: not Winograd's */
	assert_string_equal(conv_impl(4, 16, 1, 3, 20, 0), "im2col-gemm");
}

static void other_convs_record(void **state)
{
	(void)state;
	float x[2 * 9] = {0}, w[2 * 3 * 4] = {0};
	om_tensor tx = nt_tensor(OM_FLOAT, 4, ((int64_t[]){1, 2, 3, 3}), x);
	om_tensor tw = nt_tensor(OM_FLOAT, 4, ((int64_t[]){2, 3, 2, 2}), w);
	const om_tensor *in[2] = {&tx, &tw};
	om_model *m;
	om_node *n = nt_node(&m, "ConvTranspose", 2, 1);
	const char *impl = NULL;
	om_status st = {0};
	om_tensor out = {0};
	assert_int_equal(nt_run_ctx(n, 13, in, &out, (om_ctx){.exact = 1, .impl = &impl}, &st),
			 OM_OK);
	assert_string_equal(impl, "gemm-col2im");
	om_tensor_free(&out);
	nt_free(m);

	uint8_t xi[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, wi[4] = {1, 1, 1, 1};
	om_tensor ti = nt_tensor(OM_UINT8, 4, ((int64_t[]){1, 1, 3, 3}), xi);
	om_tensor tk = nt_tensor(OM_UINT8, 4, ((int64_t[]){1, 1, 2, 2}), wi);
	const om_tensor *qin[2] = {&ti, &tk};
	n = nt_node(&m, "ConvInteger", 2, 1);
	impl = NULL;
	assert_int_equal(nt_run_ctx(n, 10, qin, &out, (om_ctx){.exact = 1, .impl = &impl}, &st),
			 OM_OK);
	assert_string_equal(impl, "im2col-dgemm");
	/* the record does not change the result: 1+2+4+5 at (0, 0) */
	assert_int_equal(((const int32_t *)out.data)[0], 12);
	om_tensor_free(&out);
	/* outside a session nobody records: the kernel runs without a record */
	assert_int_equal(nt_run(n, 10, qin, &out), OM_OK);
	assert_int_equal(((const int32_t *)out.data)[3], 28);
	om_tensor_free(&out);
	nt_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(conv_records),
		cmocka_unit_test(other_convs_record),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
