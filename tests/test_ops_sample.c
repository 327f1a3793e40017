/* test_ops_sample.c — GridSample and AffineGrid (values from hand computation). */
#include "nodetest.h"

static float sample(om_node *n, const float *xy, om_kind want)
{
	const float x[] = {1, 2, 3, 4};
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, x);
	om_tensor tg = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 1, 2}, xy);
	const om_tensor *in[] = {&tx, &tg};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 20, in, out), want);
	if (want != OM_OK)
		return NAN;
	assert_int_equal(out[0].rank, 4);
	const float v = *(float *)out[0].data;
	om_tensor_free(&out[0]);
	return v;
}

/* X = [[1, 2], [3, 4]] */
static void grid_sample(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "GridSample", 2, 1);
	/* the centre, without align_corners: the mean */
	assert_float_equal(sample(n, (float[]){0, 0}, OM_OK), 2.5f, 1e-6);
	/* x = -1 (left), y = 1 (bottom) with align_corners: pixel (1, 0) = 3 */
	nt_int(n, "align_corners", 1);
	assert_float_equal(sample(n, (float[]){-1, 1}, OM_OK), 3, 1e-6);
	/* (2, 2) maps to (1.5, 1.5): zeros padding keeps a quarter of X[1][1] */
	assert_float_equal(sample(n, (float[]){2, 2}, OM_OK), 1, 1e-6);
	om_node_set_attr(n, "padding_mode", OM_ATTR_STRING)->s = (om_str){"border", 6};
	assert_float_equal(sample(n, (float[]){2, 2}, OM_OK), 4, 1e-6);
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"nearest", 7};
	assert_float_equal(sample(n, (float[]){0.1f, -0.9f}, OM_OK), 2, 1e-6);
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"area", 4};
	sample(n, (float[]){0, 0}, OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

/* X of no rows (1, 2, 0, 3): every tap reads a zero under each padding mode (border and
 * reflection have no pixel to clamp to; they had read past X's copy, the grid's values here
 * and out of bounds in fuzz_run under ASan). ONNX Runtime refuses such an X. */
static void grid_sample_no_rows(void **state)
{
	(void)state;
	static const char *const pads[] = {"zeros", "border", "reflection"};
	static const char *const modes[] = {"bilinear", "nearest", "bicubic"};
	static const float none[1]; /* X's data: no element */
	om_tensor tx = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 2, 0, 3}, none);
	om_tensor tg = nt_tensor(OM_FLOAT, 4, (int64_t[]){1, 1, 2, 2}, (float[]){-1.5f, 0.2f, 0.7f, 1.4f});
	const om_tensor *in[] = {&tx, &tg};
	for (int pi = 0; pi < 3; pi++)
		for (int mi = 0; mi < 3; mi++) {
			om_model *m;
			om_node *n = nt_node(&m, "GridSample", 2, 1);
			om_node_set_attr(n, "padding_mode", OM_ATTR_STRING)->s =
				(om_str){pads[pi], (int64_t)strlen(pads[pi])};
			om_node_set_attr(n, "mode", OM_ATTR_STRING)->s =
				(om_str){modes[mi], (int64_t)strlen(modes[mi])};
			om_tensor out[1];
			assert_int_equal(nt_run(n, 20, in, out), OM_OK);
			nt_check_f32(&out[0], 4, (int64_t[]){1, 2, 1, 2}, (float[]){0, 0, 0, 0}, 0);
			om_tensor_free(&out[0]);
			om_model_free(m);
		}
}

/* size [1, 1, 1, 2] without align_corners: base x = -0.5, 0.5, y = 0; theta shifts by (1, 2) */
static void affine_grid(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "AffineGrid", 2, 1);
	om_tensor th = nt_tensor(OM_FLOAT, 3, (int64_t[]){1, 2, 3}, (float[]){1, 0, 1, 0, 1, 2});
	int64_t size[] = {1, 1, 1, 2};
	om_tensor ts = nt_tensor(OM_INT64, 1, (int64_t[]){4}, size);
	const om_tensor *in[] = {&th, &ts};
	om_tensor out[1];
	assert_int_equal(nt_run(n, 20, in, out), OM_OK);
	nt_check_f32(&out[0], 4, (int64_t[]){1, 1, 2, 2}, (float[]){0.5f, 2, 1.5f, 2}, 1e-6);
	om_tensor_free(&out[0]);
	size[0] = 2; /* theta has one batch */
	assert_int_equal(nt_run(n, 20, in, out), OM_ERR_INVALID_MODEL);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(grid_sample),
		cmocka_unit_test(grid_sample_no_rows),
		cmocka_unit_test(affine_grid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
