/* test_session_run.c — runs that repeat: the inference cache of dynamic steps (by shapes, and by
 * values when inference reads them), run-time error kinds, and a shape problem in an If branch
 * that is never taken (models from tests/gen_session_models.py). */
#include <stdio.h>

#include "testutil.h"

static om_model *load(const char *name)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/session/%s", name);
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(tu_source_path(rel), &m, &st), OM_OK);
	return m;
}

static om_session *create(const om_model *m)
{
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_OK);
	return s;
}

static om_tensor tensor(int32_t dtype, int32_t rank, const int64_t *dims, void *data,
			size_t nbytes)
{
	om_tensor t = {.dtype = dtype, .rank = rank, .data = data, .nbytes = nbytes};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	return t;
}

/* y = Reshape(x, s): a run with other values of s gets their shape, not the cached one */
static void cache_keys_values(void **state)
{
	(void)state;
	om_model *m = load("reshape_by_value.onnx");
	om_session *s = create(m);
	float x[4] = {1, 2, 3, 4};
	const int64_t targets[][2] = {{2, 2}, {4, 1}, {2, 2}, {3, 3}, {1, 4}, {1, 4}};
	for (int r = 0; r < 6; r++) {
		int64_t sv[2] = {targets[r][0], targets[r][1]};
		om_tensor in[2] = {tensor(OM_FLOAT, 1, (int64_t[]){4}, x, sizeof x),
				   tensor(OM_INT64, 1, (int64_t[]){2}, sv, sizeof sv)};
		om_tensor y;
		om_status st = {0};
		om_kind rc = om_session_run(s, in, 2, &y, 1, &st);
		if (sv[0] * sv[1] != 4) { /* a bad value of a run: InvalidInput */
			assert_int_equal(rc, OM_ERR_INVALID_INPUT);
			continue;
		}
		assert_int_equal(rc, OM_OK);
		assert_int_equal(y.rank, 2);
		assert_int_equal(y.dims[0], sv[0]);
		assert_int_equal(y.dims[1], sv[1]);
		for (int i = 0; i < 4; i++)
			assert_true(((const float *)y.data)[i] == x[i]);
		om_tensor_free(&y);
	}
	om_session_free(s);
	om_model_free(m);
}

/* y = Reshape(x + x, Concat(Shape(x), [1])) over extents that change and come back */
static void cache_keys_shapes(void **state)
{
	(void)state;
	om_model *m = load("reshape_by_shape.onnx");
	om_session *s = create(m);
	float x[6] = {1, 2, 3, 4, 5, 6};
	const int64_t ns[] = {4, 4, 6, 1, 4, 0};
	for (int r = 0; r < 6; r++) {
		om_tensor in = tensor(OM_FLOAT, 1, (int64_t[]){ns[r]}, x, sizeof x);
		om_tensor y;
		om_status st = {0};
		assert_int_equal(om_session_run(s, &in, 1, &y, 1, &st), OM_OK);
		assert_int_equal(y.rank, 2);
		assert_int_equal(y.dims[0], ns[r]);
		assert_int_equal(y.dims[1], 1);
		for (int64_t i = 0; i < ns[r]; i++)
			assert_true(((const float *)y.data)[i] == 2 * x[i]);
		om_tensor_free(&y);
	}
	om_session_free(s);
	om_model_free(m);
}

/* the then branch reshapes 4 elements into 3 x 3: the session plans, the else branch runs,
 * and taking the then branch is the model's error */
static void untaken_branch(void **state)
{
	(void)state;
	om_model *m = load("if_untaken.onnx");
	om_session *s = create(m);
	float x[4] = {1, 2, 3, 4};
	for (int take = 0; take < 2; take++) {
		uint8_t b = (uint8_t)take;
		om_tensor in[2] = {tensor(OM_FLOAT, 1, (int64_t[]){4}, x, sizeof x),
				   tensor(OM_BOOL, 0, NULL, &b, 1)};
		om_tensor y;
		om_status st = {0};
		om_kind rc = om_session_run(s, in, 2, &y, 1, &st);
		if (take) {
			assert_int_equal(rc, OM_ERR_INVALID_MODEL);
			continue;
		}
		assert_int_equal(rc, OM_OK);
		assert_int_equal(y.rank, 1);
		assert_int_equal(y.dims[0], 4);
		assert_true(((const float *)y.data)[3] == 4);
		om_tensor_free(&y);
	}
	om_session_free(s);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cache_keys_values),
		cmocka_unit_test(cache_keys_shapes),
		cmocka_unit_test(untaken_branch),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
