/* test_ml_maps.c — maps as values (om_box_new OM_MAP, om_value_check), their files
 * (om_value_file_write / om_value_file_read: MapProto, SequenceProto of maps, OptionalProto of
 * a map) and the C API running the ai.onnx.ml map ops (om_session_run_values) on the models of
 * tests/cases/ml_maps (tests/gen_cases_ml_maps.py), with the values the definitions give. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ir.h"
#include "omopt.h"
#include "testutil.h"

static om_tensor str_tensor(om_str *s, int64_t n)
{
	om_tensor t = {.dtype = OM_STRING, .rank = 1, .dims = {n}, .data = s,
		       .nbytes = sizeof *s * (size_t)n};
	return t;
}

static om_tensor f32_tensor(float *v, int64_t n)
{
	om_tensor t = {.dtype = OM_FLOAT, .rank = 1, .dims = {n}, .data = v,
		       .nbytes = sizeof *v * (size_t)n};
	return t;
}

/* a map(string, float) from n keys and values */
static om_tensor make_map(const char *const *keys, const float *vals, int64_t n)
{
	om_str s[8];
	float v[8];
	for (int64_t i = 0; i < n; i++) {
		s[i] = (om_str){keys[i], (int64_t)strlen(keys[i])};
		v[i] = vals[i];
	}
	om_tensor m, k = str_tensor(s, n), x = f32_tensor(v, n);
	om_status st;
	assert_int_equal(om_box_new(OM_MAP, OM_STRING, &m, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 0, &k, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 1, &x, &st), OM_OK);
	return m;
}

static void assert_map(const om_tensor *m, const char *const *keys, const float *vals,
		       int64_t n)
{
	assert_int_equal(m->dtype, OM_MAP);
	const om_seq *b = m->data;
	assert_int_equal(b->n, 2);
	assert_int_equal(b->items[0].dtype, OM_STRING);
	assert_int_equal(b->items[0].dims[0], n);
	assert_int_equal(b->items[1].dtype, OM_FLOAT);
	assert_int_equal(b->items[1].dims[0], n);
	const om_str *s = b->items[0].data;
	const float *v = b->items[1].data;
	for (int64_t i = 0; i < n; i++) {
		assert_int_equal(s[i].len, (int64_t)strlen(keys[i]));
		assert_memory_equal(s[i].ptr, keys[i], (size_t)s[i].len);
		assert_true(v[i] == vals[i]);
	}
}

static void test_check(void **state)
{
	(void)state;
	om_status st;
	static const char *const k[] = {"a", "b", "a"};
	static const float v[] = {1, 2, 3};
	om_tensor m = make_map(k, v, 2);
	assert_int_equal(om_value_check(&m, &st), OM_OK);
	om_value_free(&m);
	m = make_map(k, v, 3); /* "a" twice */
	assert_int_equal(om_value_check(&m, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "twice"));
	om_value_free(&m);
	/* values of another count than the keys */
	om_str s[1] = {{"a", 1}};
	float x[2] = {1, 2};
	om_tensor kt = str_tensor(s, 1), vt = f32_tensor(x, 2);
	assert_int_equal(om_box_new(OM_MAP, OM_STRING, &m, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 0, &kt, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 1, &vt, &st), OM_OK);
	assert_int_equal(om_value_check(&m, &st), OM_ERR_INVALID_INPUT);
	om_value_free(&m);
	/* keys of another type than the map's */
	assert_int_equal(om_box_new(OM_MAP, OM_INT64, &m, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 0, &kt, &st), OM_OK);
	assert_int_equal(om_box_insert(m.data, 1, &vt, &st), OM_OK);
	assert_int_equal(om_value_check(&m, &st), OM_ERR_INVALID_INPUT);
	om_value_free(&m);
	assert_int_equal(om_box_new(OM_MAP, OM_FLOAT, &m, &st), OM_ERR_INVALID_INPUT);
}

/* a map, a sequence of two maps and an optional of a map written and read back */
static void test_files(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_mlmaps"), 0);
	om_status st;
	static const char *const k[] = {"x", "yy", ""};
	static const float v[] = {0.5f, -2.0f, 1e30f};
	om_tensor m = make_map(k, v, 3), seq, opt, back;
	assert_int_equal(om_box_new(OM_SEQUENCE, 0, &seq, &st), OM_OK);
	assert_int_equal(om_box_insert(seq.data, 0, &m, &st), OM_OK);
	assert_int_equal(om_box_insert(seq.data, 1, &m, &st), OM_OK);
	assert_int_equal(om_box_new(OM_OPTIONAL, 0, &opt, &st), OM_OK);
	assert_int_equal(om_box_insert(opt.data, 0, &m, &st), OM_OK);

	const char *p = tu_join(dir, "map.pb");
	assert_int_equal(om_value_file_write(p, &m, "m", &st), OM_OK);
	assert_int_equal(om_value_file_read(p, OM_MAP, &back, &st), OM_OK);
	assert_map(&back, k, v, 3);
	om_value_free(&back);
	/* the wrong kind for the file */
	assert_int_not_equal(om_value_file_read(p, OM_OPTIONAL, &back, &st), OM_OK);

	p = tu_join(dir, "seq.pb");
	assert_int_equal(om_value_file_write(p, &seq, "s", &st), OM_OK);
	assert_int_equal(om_value_file_read(p, OM_SEQUENCE, &back, &st), OM_OK);
	assert_int_equal(back.dtype, OM_SEQUENCE);
	assert_int_equal(((om_seq *)back.data)->n, 2);
	assert_map(&((om_seq *)back.data)->items[1], k, v, 3);
	om_value_free(&back);

	p = tu_join(dir, "opt.pb");
	assert_int_equal(om_value_file_write(p, &opt, "o", &st), OM_OK);
	assert_int_equal(om_value_file_read(p, OM_OPTIONAL, &back, &st), OM_OK);
	assert_int_equal(((om_seq *)back.data)->n, 1);
	assert_map(&((om_seq *)back.data)->items[0], k, v, 3);
	om_value_free(&back);
	/* an empty optional */
	om_value_free(&opt);
	assert_int_equal(om_box_new(OM_OPTIONAL, 0, &opt, &st), OM_OK);
	assert_int_equal(om_value_file_write(p, &opt, "o", &st), OM_OK);
	assert_int_equal(om_value_file_read(p, OM_OPTIONAL, &back, &st), OM_OK);
	assert_int_equal(((om_seq *)back.data)->n, 0);
	om_value_free(&back);

	om_value_free(&opt);
	om_value_free(&seq);
	om_value_free(&m);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

static om_session *case_session(const char *name, om_model **m)
{
	char rel[256];
	snprintf(rel, sizeof rel, "tests/cases/ml_maps/%s/model.onnx", name);
	om_status st;
	assert_int_equal(om_model_load(tu_source_path(rel), m, &st), OM_OK);
	om_session *s = NULL;
	assert_int_equal(om_session_create(*m, NULL, &s, &st), OM_OK);
	return s;
}

/* DictVectorizer on a map the caller built: {"a": 4, "c": 8, "q": 1} over [a, c, b, z] */
static void test_dictvectorizer_api(void **state)
{
	(void)state;
	om_model *m;
	om_session *s = case_session("dictvectorizer_str_float", &m);
	om_io_info info;
	om_status st;
	assert_int_equal(om_session_input_info(s, 0, &info, &st), OM_OK);
	assert_int_equal(info.kind, OM_MAP);
	static const char *const k[] = {"a", "c", "q"};
	static const float v[] = {4, 8, 1};
	om_tensor x = make_map(k, v, 3), y;
	assert_int_equal(om_session_run_values(s, &x, 1, &y, 1, &st), OM_OK);
	assert_int_equal(y.dtype, OM_FLOAT);
	assert_int_equal(y.rank, 2);
	assert_int_equal(y.dims[0], 1);
	assert_int_equal(y.dims[1], 4);
	const float want[] = {4, 8, 0, 0};
	assert_memory_equal(y.data, want, sizeof want);
	om_value_free(&y);
	/* a tensor where a map belongs, a map with a key twice */
	float f[3] = {1, 2, 3};
	om_tensor t = f32_tensor(f, 3);
	assert_int_equal(om_session_run_values(s, &t, 1, &y, 1, &st), OM_ERR_INVALID_INPUT);
	om_value_free(&x);
	static const char *const k2[] = {"a", "a"};
	x = make_map(k2, v, 2);
	assert_int_equal(om_session_run_values(s, &x, 1, &y, 1, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "twice"));
	om_value_free(&x);
	om_session_free(s);
	om_model_free(m);
}

/* ZipMap: a sequence of maps from the rows of X; om_session_run refuses it (tensors only) */
static void test_zipmap_api(void **state)
{
	(void)state;
	om_model *m;
	om_session *s = case_session("zipmap_strings", &m);
	float xv[6] = {0.1f, 0.2f, 0.7f, 1.0f, -2.0f, 3.5f};
	om_tensor x = {.dtype = OM_FLOAT, .rank = 2, .dims = {2, 3}, .data = xv,
		       .nbytes = sizeof xv}, z;
	om_status st;
	om_io_info info;
	assert_int_equal(om_session_output_info(s, 0, &info, &st), OM_OK);
	assert_int_equal(info.kind, OM_SEQUENCE);
	assert_int_equal(om_session_run_values(s, &x, 1, &z, 1, &st), OM_OK);
	assert_int_equal(z.dtype, OM_SEQUENCE);
	const om_seq *b = z.data;
	assert_int_equal(b->n, 2);
	static const char *const k[] = {"b", "a", "c"};
	assert_map(&b->items[0], k, xv, 3);
	assert_map(&b->items[1], k, xv + 3, 3);
	om_value_free(&z);
	assert_int_equal(om_session_run(s, &x, 1, &z, 1, &st), OM_ERR_UNSUPPORTED);
	/* a row of another width than the labels */
	x.dims[1] = 2;
	x.dims[0] = 3;
	assert_int_equal(om_session_run_values(s, &x, 1, &z, 1, &st), OM_ERR_INVALID_INPUT);
	om_session_free(s);
	om_model_free(m);
}

/* CastMap to strings twice in one session: the text of the numbers stays right */
static void test_castmap_strings(void **state)
{
	(void)state;
	om_model *m;
	om_session *s = case_session("castmap_dense_string", &m);
	om_status st;
	int64_t keys[3] = {4, -7, 0};
	float vals[3] = {1.5f, 2, -0.25f};
	om_tensor kt = {.dtype = OM_INT64, .rank = 1, .dims = {3}, .data = keys,
			.nbytes = sizeof keys};
	om_tensor vt = f32_tensor(vals, 3), x, y;
	assert_int_equal(om_box_new(OM_MAP, OM_INT64, &x, &st), OM_OK);
	assert_int_equal(om_box_insert(x.data, 0, &kt, &st), OM_OK);
	assert_int_equal(om_box_insert(x.data, 1, &vt, &st), OM_OK);
	for (int run = 0; run < 2; run++) {
		assert_int_equal(om_session_run_values(s, &x, 1, &y, 1, &st), OM_OK);
		assert_int_equal(y.dtype, OM_STRING);
		assert_int_equal(y.dims[1], 3);
		const om_str *e = y.data;
		static const char *const want[] = {"2.000000", "-0.250000", "1.500000"};
		for (int i = 0; i < 3; i++) {
			assert_int_equal(e[i].len, (int64_t)strlen(want[i]));
			assert_memory_equal(e[i].ptr, want[i], strlen(want[i]));
		}
		om_value_free(&y);
	}
	om_value_free(&x);
	om_session_free(s);
	om_model_free(m);
}

/* omopt run reads a MapProto input and writes a SequenceProto of maps */
static void test_cli(void **state)
{
	(void)state;
	char dir[256], out[4096], err[4096], args[4096];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "om_mlmaps_cli"), 0);
	char zip[1024]; /* tu_source_path's buffer is static: one path at a time */
	snprintf(zip, sizeof zip, "%s", tu_source_path("tests/cases/ml_maps/zipmap_strings"));
	snprintf(args, sizeof args, "run %s/model.onnx --input-dir %s/test_data_set_0 "
		 "--output-dir out", zip, zip);
	assert_int_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	om_tensor z;
	om_status st;
	assert_int_equal(om_value_file_read(tu_join(dir, "out/output_0.pb"), OM_SEQUENCE, &z, &st),
			 OM_OK);
	static const char *const k[] = {"b", "a", "c"};
	static const float r0[] = {0.1f, 0.2f, 0.7f}, r1[] = {1.0f, -2.0f, 3.5f};
	assert_int_equal(((om_seq *)z.data)->n, 2);
	assert_map(&((om_seq *)z.data)->items[0], k, r0, 3);
	assert_map(&((om_seq *)z.data)->items[1], k, r1, 3);
	om_value_free(&z);
	/* a map file of our own through --input */
	static const char *const dk[] = {"z", "a"};
	static const float dv[] = {3, 4};
	om_tensor m = make_map(dk, dv, 2);
	assert_int_equal(om_value_file_write(tu_join(dir, "d.pb"), &m, "X", &st), OM_OK);
	om_value_free(&m);
	snprintf(args, sizeof args, "run %s --input X=d.pb --output-dir out2 --output-format npy",
		 tu_source_path("tests/cases/ml_maps/dictvectorizer_str_float/model.onnx"));
	assert_int_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	om_tensor y;
	assert_int_equal(om_tensor_read_file(tu_join(dir, "out2/output_0.npy"), &y, &st), OM_OK);
	const float want[] = {4, 0, 0, 3}; /* vocabulary a c b z */
	assert_int_equal(y.rank, 2);
	assert_memory_equal(y.data, want, sizeof want);
	om_tensor_free(&y);
	/* a tensor file where a map belongs */
	snprintf(args, sizeof args, "run %s --input X=%s/test_data_set_0/input_0.pb "
		 "--output-dir out3",
		 tu_source_path("tests/cases/ml_maps/dictvectorizer_str_float/model.onnx"), zip);
	assert_int_not_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

/* An initializer that is also a graph input (IR >= 4) is a default the caller may override:
 * om_simplify must not fold it as a constant (Mul(w, w) stays, w stays an input). */
static void test_initializer_input_not_folded(void **state)
{
	(void)state;
	om_model *m = tu_model(17);
	om_graph *g = m->graph;
	const int64_t d[1] = {2};
	om_value *w = tu_float_init(g, "w", 1, d, 7, 1.0f);
	w->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, w);
	tu_graph_node(g, "Mul", "w,w", "y");
	om_value *y = tu_typed_value(g, "y", OM_FLOAT, 1, d);
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_model *r = tu_reload(m);
	om_status st;
	assert_int_equal(om_simplify(r, NULL, &st), OM_OK);
	assert_int_equal(tu_count_op(r->graph, "Mul"), 1);
	assert_int_equal(r->graph->ninputs, 1);
	assert_string_equal(r->graph->inputs[0]->name, "w");
	om_model_free(r);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_dictvectorizer_api),
		cmocka_unit_test(test_zipmap_api),
		cmocka_unit_test(test_castmap_strings),
		cmocka_unit_test(test_cli),
		cmocka_unit_test(test_initializer_input_not_folded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
