/* test_boundary.c — sequences, optionals and maps across the boundary (issue 35): the model of
 * tests/cases/boundary/boxes (tests/gen_cases_boundary.py) returns a sequence of tensors, an
 * optional tensor, a map(int64, float) and a map(string, float) it is given (Identity) and
 * ZipMap's sequence of map(int64, float). The C API (om_session_run_values) and `omopt run`
 * (value files in and out) must give back the values fed, and ZipMap's rows keyed by its labels
 * [7, -1, 3]; both with the optional present and the boxes non-empty, and with all empty.
 * An empty map read from a file (no value type in a MapProto) fed to an ml op by omopt run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "omopt.h"
#include "testutil.h"

#define CASE "tests/cases/boundary/boxes"

static om_tensor f32(int32_t rank, const int64_t *dims, float *v, int64_t n)
{
	om_tensor t = {.dtype = OM_FLOAT, .rank = rank, .data = v,
		       .nbytes = sizeof *v * (size_t)n};
	for (int32_t i = 0; i < rank; i++)
		t.dims[i] = dims[i];
	return t;
}

/* the values of tests/gen_cases_boundary.py */
static float s0[] = {1.5f, -2}, s1[] = {3}, ov[] = {4, 5, 6};
static const int64_t s0d[] = {2}, s1d[] = {1, 1}, s2d[] = {0, 2}, od[] = {3};
static int64_t mik[] = {5, -9, 0};
static float miv[] = {0.25f, 1e30f, -3.5f};
static const char *const msk[] = {"alpha", "", "\xce\xb2"}; /* β */
static float msv[] = {1.0f, -0.0f, 2.5f};
static float xv[] = {0.5f, 0.25f, 0.125f, 1, -2, 3};
static const int64_t labels[] = {7, -1, 3};

/* the five inputs of data set k (0: values, 1: all empty) */
static void make_inputs(int k, om_tensor in[5])
{
	om_status st;
	int64_t n = k == 0 ? 3 : 0;
	assert_int_equal(om_box_new(OM_SEQUENCE, OM_FLOAT, &in[0], &st), OM_OK);
	if (k == 0) {
		om_tensor a = f32(1, s0d, s0, 2), b = f32(2, s1d, s1, 1), c = f32(2, s2d, NULL, 0);
		assert_int_equal(om_box_insert(in[0].data, 0, &a, &st), OM_OK);
		assert_int_equal(om_box_insert(in[0].data, 1, &b, &st), OM_OK);
		assert_int_equal(om_box_insert(in[0].data, 2, &c, &st), OM_OK);
	}
	assert_int_equal(om_box_new(OM_OPTIONAL, OM_FLOAT, &in[1], &st), OM_OK);
	if (k == 0) {
		om_tensor o = f32(1, od, ov, 3);
		assert_int_equal(om_box_insert(in[1].data, 0, &o, &st), OM_OK);
	}
	om_tensor keys = {.dtype = OM_INT64, .rank = 1, .dims = {n}, .data = mik,
			  .nbytes = sizeof *mik * (size_t)n};
	om_tensor vals = f32(1, &n, miv, n);
	assert_int_equal(om_box_new(OM_MAP, OM_INT64, &in[2], &st), OM_OK);
	assert_int_equal(om_box_insert(in[2].data, 0, &keys, &st), OM_OK);
	assert_int_equal(om_box_insert(in[2].data, 1, &vals, &st), OM_OK);
	om_str s[3];
	for (int i = 0; i < 3; i++)
		s[i] = (om_str){msk[i], (int64_t)strlen(msk[i])};
	om_tensor skeys = {.dtype = OM_STRING, .rank = 1, .dims = {n}, .data = s,
			   .nbytes = sizeof *s * (size_t)n};
	vals = f32(1, &n, msv, n);
	assert_int_equal(om_box_new(OM_MAP, OM_STRING, &in[3], &st), OM_OK);
	assert_int_equal(om_box_insert(in[3].data, 0, &skeys, &st), OM_OK);
	assert_int_equal(om_box_insert(in[3].data, 1, &vals, &st), OM_OK);
	const int64_t xd[2] = {k == 0 ? 2 : 0, 3};
	assert_int_equal(om_tensor_alloc(&in[4], OM_FLOAT, 2, xd, &st), OM_OK);
	memcpy(in[4].data, xv, sizeof *xv * (size_t)(xd[0] * 3));
}

static void assert_f32(const om_tensor *t, int32_t rank, const int64_t *dims, const float *v)
{
	assert_int_equal(t->dtype, OM_FLOAT);
	assert_int_equal(t->rank, rank);
	int64_t n = 1;
	for (int32_t i = 0; i < rank; i++) {
		assert_int_equal(t->dims[i], dims[i]);
		n *= dims[i];
	}
	for (int64_t i = 0; i < n; i++) /* bits: -0.0 stays -0.0 */
		assert_memory_equal((const float *)t->data + i, v + i, sizeof *v);
}

/* a map(int64 or string, float) whose keys are those of keys_i64 or keys_str; read from a
 * file (om_value_file_read, given no type), an empty map's values are an empty sequence: a
 * MapProto of no entries does not say its values' type */
static void assert_map(const om_tensor *m, const int64_t *keys_i64, const char *const *keys_str,
		       const float *vals, int64_t n, int from_file)
{
	assert_int_equal(m->dtype, OM_MAP);
	const om_seq *b = m->data;
	assert_int_equal(b->n, 2);
	assert_int_equal(b->items[0].dtype, keys_i64 ? OM_INT64 : OM_STRING);
	assert_int_equal(b->items[0].dims[0], n);
	if (n == 0 && from_file && b->items[1].dtype == OM_SEQUENCE) /* MapProto: no type */
		assert_int_equal(((const om_seq *)b->items[1].data)->n, 0);
	else
		assert_f32(&b->items[1], 1, &n, vals);
	for (int64_t i = 0; i < n; i++) {
		if (keys_i64) {
			assert_int_equal(((const int64_t *)b->items[0].data)[i], keys_i64[i]);
		} else {
			const om_str *s = (const om_str *)b->items[0].data + i;
			assert_int_equal(s->len, (int64_t)strlen(keys_str[i]));
			assert_memory_equal(s->ptr, keys_str[i], (size_t)s->len);
		}
	}
}

/* the five outputs of data set k (read from files or not: assert_map) */
static void check_outputs(int k, const om_tensor out[5], int from_file)
{
	int64_t n = k == 0 ? 3 : 0;
	assert_int_equal(out[0].dtype, OM_SEQUENCE);
	const om_seq *s = out[0].data;
	assert_int_equal(s->n, n);
	if (k == 0) {
		assert_f32(&s->items[0], 1, s0d, s0);
		assert_f32(&s->items[1], 2, s1d, s1);
		assert_f32(&s->items[2], 2, s2d, NULL);
	}
	assert_int_equal(out[1].dtype, OM_OPTIONAL);
	const om_seq *o = out[1].data;
	assert_int_equal(o->n, k == 0 ? 1 : 0);
	if (k == 0)
		assert_f32(&o->items[0], 1, od, ov);
	assert_map(&out[2], mik, NULL, miv, n, from_file);
	assert_map(&out[3], NULL, msk, msv, n, from_file);
	assert_int_equal(out[4].dtype, OM_SEQUENCE);
	const om_seq *z = out[4].data;
	assert_int_equal(z->n, k == 0 ? 2 : 0);
	for (int64_t r = 0; r < z->n; r++)
		assert_map(&z->items[r], labels, NULL, xv + 3 * r, 3, from_file);
}

static void test_c_api(void **state)
{
	(void)state;
	om_model *m;
	om_status st;
	assert_int_equal(om_model_load(tu_source_path(CASE "/model.onnx"), &m, &st), OM_OK);
	om_session *s = NULL;
	assert_int_equal(om_session_create(m, NULL, &s, &st), OM_OK);
	static const int32_t kinds[5] = {OM_SEQUENCE, OM_OPTIONAL, OM_MAP, OM_MAP, OM_SEQUENCE};
	static const int32_t keys[5] = {0, 0, OM_INT64, OM_STRING, OM_INT64};
	for (int i = 0; i < 5; i++) {
		om_io_info info;
		assert_int_equal(om_session_output_info(s, i, &info, &st), OM_OK);
		assert_int_equal(info.kind, kinds[i]);
		assert_int_equal(info.key, keys[i]);
	}
	for (int k = 0; k < 2; k++) {
		om_tensor in[5], out[5];
		make_inputs(k, in);
		for (int i = 0; i < 5; i++)
			assert_int_equal(om_value_check(&in[i], &st), OM_OK);
		assert_int_equal(om_session_run_values(s, in, 5, out, 5, &st), OM_OK);
		check_outputs(k, out, 0);
		for (int i = 0; i < 5; i++) {
			om_value_free(&in[i]);
			om_value_free(&out[i]);
		}
	}
	om_session_free(s);
	om_model_free(m);
}

static const int32_t out_kinds[5] = {OM_SEQUENCE, OM_OPTIONAL, OM_MAP, OM_MAP, OM_SEQUENCE};

static void read_outputs(const char *dir, const char *sub, om_tensor out[5])
{
	om_status st;
	for (int i = 0; i < 5; i++) {
		char name[64];
		snprintf(name, sizeof name, "%s/output_%d.pb", sub, i);
		assert_int_equal(om_value_file_read(tu_join(dir, name), out_kinds[i], &out[i], &st),
				 OM_OK);
	}
}

/* omopt run: the case's files (--input-dir), and files this test writes (--input) */
static void test_cli(void **state)
{
	(void)state;
	char dir[256], out[4096], err[4096], args[4096], model[1024];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_boundary"), 0);
	snprintf(model, sizeof model, "%s", tu_source_path(CASE));
	om_tensor o[5];
	for (int k = 0; k < 2; k++) {
		snprintf(args, sizeof args, "run %s/model.onnx --input-dir %s/test_data_set_%d "
			 "--output-dir out%d", model, model, k, k);
		if (tu_run_omopt(dir, args, out, sizeof out, err, sizeof err) != 0)
			fail_msg("omopt %s: %s", args, err);
		char sub[16];
		snprintf(sub, sizeof sub, "out%d", k);
		read_outputs(dir, sub, o);
		check_outputs(k, o, 1);
		for (int i = 0; i < 5; i++)
			om_value_free(&o[i]);
	}
	/* values written by om_value_file_write, fed by name */
	static const char *const names[5] = {"s", "o", "mi", "ms", "x"};
	om_tensor in[5];
	make_inputs(0, in);
	om_status st;
	int len = snprintf(args, sizeof args, "run %s/model.onnx --output-dir own", model);
	for (int i = 0; i < 5; i++) {
		char file[16];
		snprintf(file, sizeof file, "%s.pb", names[i]);
		assert_int_equal(om_value_file_write(tu_join(dir, file), &in[i], names[i], &st),
				 OM_OK);
		len += snprintf(args + len, sizeof args - (size_t)len, " --input %s=%s", names[i],
				file);
		om_value_free(&in[i]);
	}
	if (tu_run_omopt(dir, args, out, sizeof out, err, sizeof err) != 0)
		fail_msg("omopt %s: %s", args, err);
	read_outputs(dir, "own", o);
	check_outputs(0, o, 1);
	for (int i = 0; i < 5; i++)
		om_value_free(&o[i]);
	/* an empty map file into an ml op, which takes a map of tensor values only: omopt run
	 * gives the map the declared value type (DictVectorizer: its vocabulary's zeros) */
	make_inputs(1, in);
	assert_int_equal(om_value_file_write(tu_join(dir, "empty.pb"), &in[3], "X", &st), OM_OK);
	for (int i = 0; i < 5; i++)
		om_value_free(&in[i]);
	snprintf(args, sizeof args, "run %s --input X=empty.pb --output-dir dv",
		 tu_source_path("tests/cases/ml_maps/dictvectorizer_str_float/model.onnx"));
	if (tu_run_omopt(dir, args, out, sizeof out, err, sizeof err) != 0)
		fail_msg("omopt %s: %s", args, err);
	om_tensor y;
	assert_int_equal(om_value_file_read(tu_join(dir, "dv/output_0.pb"), 0, &y, &st), OM_OK);
	const int64_t yd[2] = {1, 4};
	const float zeros[4] = {0};
	assert_f32(&y, 2, yd, zeros);
	om_value_free(&y);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c_api),
		cmocka_unit_test(test_cli),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
