/* test_public_api.c — what a user of include/omopt.h alone can do (built with the public
 * include path only, as the tools are): look at a model (header fields, inputs and outputs,
 * op counts, initializers), list the op rows, draw it as dot text, write a file atomically,
 * profile a session; call every kind of entry point with a NULL status; a failed run's
 * outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "omopt.h"

static om_model *example(void)
{
	const char *src = getenv("OMOPT_SOURCE");
	char path[1024];
	snprintf(path, sizeof path, "%s/examples/tiny_shuffle.onnx", src ? src : ".");
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &m, &st), OM_OK);
	return m;
}

static void test_inspect(void **state)
{
	(void)state;
	om_model *m = example();
	om_status st = {0};
	const char *version;
	assert_int_equal(om_model_ir_version(m), 7);
	assert_string_equal(om_model_producer(m, &version), "omopt examples/make_example.py");
	assert_string_equal(version, "");
	assert_int_equal(om_model_opset_count(m), 1);
	int64_t v = 0;
	assert_string_equal(om_model_opset_import(m, 0, &v), "");
	assert_int_equal(v, 13);
	assert_null(om_model_opset_import(m, 1, &v));
	assert_int_equal(om_model_input_count(m), 1);
	assert_int_equal(om_model_output_count(m), 1);
	om_io_info io;
	assert_int_equal(om_model_input_info(m, 0, &io, &st), OM_OK);
	assert_string_equal(io.name, "image");
	assert_int_equal(io.elem, OM_FLOAT);
	assert_int_equal(io.rank, 4);
	assert_int_equal(io.dims[0], -1);
	assert_string_equal(io.dim_params[0], "batch");
	assert_int_equal(io.dims[1], 3);
	assert_int_equal(io.has_initializer, 0);
	assert_int_equal(om_model_output_info(m, 1, &io, &st), OM_ERR_INVALID_INPUT);
	assert_int_equal(om_model_node_count(m), 48);
	int64_t count = 0;
	assert_int_equal(om_model_initializer_bytes(m, &count), 1640);
	assert_int_equal(count, 17);
	om_op_count *rows;
	int n;
	assert_int_equal(om_model_op_counts(m, &rows, &n, &st), OM_OK);
	assert_int_equal(n, 15);
	assert_string_equal(rows[0].op, "Concat"); /* sorted by op */
	assert_int_equal(rows[0].count, 4);
	int64_t total = 0;
	for (int i = 0; i < n; i++)
		total += rows[i].count;
	assert_int_equal(total, 48);
	om_free(rows);
	om_model_free(m);
}

static void test_op_rows(void **state)
{
	(void)state;
	om_op_info *rows;
	int n;
	assert_int_equal(om_op_rows(&rows, &n, NULL), OM_OK);
	assert_true(n > 200);
	int conv = -1;
	for (int i = 0; i < n; i++)
		if (!strcmp(rows[i].name, "Conv") && !rows[i].domain[0] && rows[i].since == 1)
			conv = i;
	assert_true(conv >= 0);
	assert_true(rows[conv].has_kernel);
	int exact = -1;
	for (int b = 0; om_op_flag_name(b); b++)
		if (!strcmp(om_op_flag_name(b), "exact"))
			exact = b;
	assert_true(exact >= 0 && (rows[conv].flags & (1u << exact)));
	assert_null(om_op_flag_name(-1));
	om_free(rows);
	assert_string_equal(om_simplify_pass_name(0), "infer_shapes");
	int passes = 0;
	while (om_simplify_pass_name(passes))
		passes++;
	assert_true(passes > 5);
}

static void test_dot_and_file(void **state)
{
	(void)state;
	om_model *m = example();
	om_status st = {0};
	char *text = NULL;
	size_t len = 0;
	assert_int_equal(om_model_dot(m, NULL, &text, &len, &st), OM_OK);
	assert_int_equal(strlen(text), len);
	assert_true(!strncmp(text, "digraph", 7));
	assert_non_null(strstr(text, "Conv"));
	char dir[] = "/tmp/om_public_XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/m.dot", dir);
	assert_int_equal(om_file_write(path, text, len, &st), OM_OK);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char *back = malloc(len + 1);
	assert_int_equal(fread(back, 1, len + 1, f), len);
	fclose(f);
	assert_memory_equal(back, text, len);
	free(back);
	om_free(text);
	assert_int_equal(om_file_write(dir, "x", 1, &st), OM_ERR_IO); /* a folder */
	unlink(path);
	rmdir(dir);
	assert_int_equal(om_model_dot(m, &(om_dot_options){.plan = 1}, &text, &len, &st), OM_OK);
	assert_non_null(strstr(text, "digraph"));
	om_free(text);
	om_model_free(m);
}

/* profile 1: a row per op type (two Conv nodes, one row); profile 2: a row per node */
static void test_profile(void **state)
{
	(void)state;
	for (int per_node = 0; per_node <= 1; per_node++) {
		om_model *m = example();
		om_status st = {0};
		om_session *s = NULL;
		const om_session_options opt = {.profile = 1 + per_node};
		assert_int_equal(om_session_create(m, &opt, &s, &st), OM_OK);
		float x[2 * 3 * 16 * 16] = {0};
		om_tensor in = {.dtype = OM_FLOAT, .rank = 4, .dims = {2, 3, 16, 16}, .data = x,
				.nbytes = sizeof x};
		om_tensor out = {0};
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		assert_int_equal(out.dims[0], 2);
		assert_int_equal(out.dims[1], 10);
		om_tensor_free(&out);
		om_profile_row *rows;
		int n;
		assert_int_equal(om_session_profile(s, &rows, &n, &st), OM_OK);
		assert_true(n > 0);
		int64_t convs = 0, conv_rows = 0;
		const char *first = NULL;
		for (int i = 0; i < n; i++) {
			assert_true(rows[i].ms >= 0);
			if (i)
				assert_true(rows[i - 1].ms >= rows[i].ms); /* slowest first */
			assert_true(per_node ? rows[i].node != NULL : rows[i].node == NULL);
			/* per node: the implementation a Conv's kernel chose (conv_impl.c); none
			 * chosen at plan time: the example has a symbolic batch, every step is
			 * shaped per run */
			if (!per_node)
				assert_null(rows[i].impl);
			else if (!strcmp(rows[i].op, "Conv"))
				assert_non_null(rows[i].impl);
			assert_null(rows[i].plan_impl);
			if (strcmp(rows[i].op, "Conv"))
				continue;
			convs += rows[i].calls, conv_rows++;
			if (per_node && first)
				assert_string_not_equal(first, rows[i].node);
			first = rows[i].node;
		}
		assert_int_equal(convs, 2);
		assert_int_equal(conv_rows, per_node ? 2 : 1);
		assert_true(om_session_peak_bytes(s) > 0);
		/* the rows are the caller's: a reset and another run leave them as they were */
		const om_profile_row r0 = rows[0];
		om_session_profile_reset(s);
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		om_tensor_free(&out);
		assert_true(rows[0].ms == r0.ms && rows[0].calls == r0.calls);
		om_free(rows);
		om_session_profile_reset(s);
		assert_int_equal(om_session_profile(s, &rows, &n, &st), OM_OK);
		assert_null(rows);
		assert_int_equal(n, 0);
		om_session_free(s);
		om_model_free(m);
	}
}

static om_model *load_source(const char *rel)
{
	const char *src = getenv("OMOPT_SOURCE");
	char path[1024];
	snprintf(path, sizeof path, "%s/%s", src ? src : ".", rel);
	om_model *m = NULL;
	assert_int_equal(om_model_load(path, &m, NULL), OM_OK);
	return m;
}

static bool zeroed(const om_tensor *t)
{
	static const om_tensor zero;
	return !memcmp(t, &zero, sizeof zero);
}

/* Every function that takes an om_status accepts NULL and fails as it would with one. The
 * failures chosen go through code below the entry points that writes to the status (a run's
 * inference error turned into InvalidInput, a tensor file's error renamed, a check's inputs). */
static void null_status(void **state)
{
	(void)state;
	om_model *m = (om_model *)1;
	assert_int_equal(om_model_load("/nonexistent/m.onnx", &m, NULL), OM_ERR_IO);
	assert_null(m);
	m = (om_model *)1;
	assert_int_equal(om_model_load_memory("garbage", 7, NULL, &m, NULL), OM_ERR_INVALID_MODEL);
	assert_null(m);
	om_tensor t;
	assert_int_equal(om_tensor_read_file("/nonexistent/t.npy", &t, NULL), OM_ERR_IO);
	char dir[] = "/tmp/om_null_XXXXXX", path[64];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t.pb", dir);
	assert_int_equal(om_file_write(path, "\x08\x01\xff", 3, NULL), OM_OK);
	assert_int_equal(om_tensor_read_file(path, &t, NULL), OM_ERR_INVALID_INPUT);
	unlink(path);
	const float one = 1;
	const om_tensor scalar = {.dtype = OM_FLOAT, .data = (void *)&one, .nbytes = 4};
	assert_int_equal(om_tensor_write_file(dir, &scalar, "t", NULL), OM_ERR_IO);
	rmdir(dir);
	char buf[64] = "x";
	om_status_format(NULL, buf, sizeof buf);
	assert_string_equal(buf, "");

	/* y = Reshape(x[4], s), s a graph input: shaped at run time from s's value */
	m = load_source("tests/session/reshape_by_value.onnx");
	om_session *s = (om_session *)1;
	assert_int_equal(om_session_create(m, &(om_session_options){.threads = -1}, &s, NULL),
			 OM_ERR_INVALID_INPUT);
	assert_null(s);
	assert_int_equal(om_session_create(m, NULL, &s, NULL), OM_OK);
	om_io_info io;
	assert_int_equal(om_session_input_info(s, 2, &io, NULL), OM_ERR_INVALID_INPUT);
	assert_int_equal(om_model_output_info(m, 1, &io, NULL), OM_ERR_INVALID_INPUT);
	float x[4] = {1, 2, 3, 4};
	int64_t shape[2] = {3, 1}; /* 3 elements from 4: the run's inference fails */
	const om_tensor in[2] = {
		{.dtype = OM_FLOAT, .rank = 1, .dims = {4}, .data = x, .nbytes = sizeof x},
		{.dtype = OM_INT64, .rank = 1, .dims = {2}, .data = shape, .nbytes = sizeof shape}};
	om_tensor out;
	memset(&out, 0xab, sizeof out);
	assert_int_equal(om_session_run(s, in, 2, &out, 1, NULL), OM_ERR_INVALID_INPUT);
	assert_true(zeroed(&out)); /* a failed run leaves its outputs zeroed */
	memset(&out, 0xab, sizeof out);
	om_status st = {0};
	assert_int_equal(om_session_run(s, in, 2, &out, 1, &st), OM_ERR_INVALID_INPUT);
	assert_int_equal(st.kind, OM_ERR_INVALID_INPUT);
	assert_true(zeroed(&out));
	memset(&out, 0xab, sizeof out);
	assert_int_equal(om_session_run(s, in, -1, &out, 1, NULL), OM_ERR_INVALID_INPUT);
	assert_true(zeroed(&out)); /* refused before it ran: zeroed too */
	shape[0] = 2, shape[1] = 2;
	assert_int_equal(om_session_run(s, in, 2, &out, 1, NULL), OM_OK);
	assert_int_equal(out.rank, 2);
	assert_true(out.dims[0] == 2 && out.dims[1] == 2);
	assert_memory_equal(out.data, x, sizeof x);
	om_tensor_free(&out);
	om_session_free(s);

	const char *names[] = {"no_such_input"};
	const om_check_options co = {.input_names = names, .inputs = in, .ninputs = 1};
	om_check_report rep;
	assert_int_equal(om_check(m, m, &co, &rep, NULL), OM_ERR_INVALID_INPUT);
	om_check_report_free(&rep);
	const char *skip[] = {"no_such_pass", NULL};
	assert_int_equal(om_simplify(m, &(om_simplify_options){.skip = skip}, NULL),
			 OM_ERR_INVALID_INPUT);
	assert_int_equal(om_optimize(m, &(om_simplify_options){.skip = skip}, NULL),
			 OM_ERR_INVALID_INPUT);
	assert_int_equal(om_simplify(m, NULL, NULL), OM_OK);
	size_t bytes = 0;
	assert_int_equal(om_model_saved_size(m, &bytes, NULL), OM_OK);
	assert_true(bytes > 0);
	assert_int_equal(om_model_save(m, "/nonexistent/m.onnx", NULL, NULL), OM_ERR_IO);
	om_op_count *rows;
	int n;
	assert_int_equal(om_model_op_counts(m, &rows, &n, NULL), OM_OK);
	assert_int_equal(n, 1);
	assert_string_equal(rows[0].op, "Reshape");
	om_free(rows);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(null_status),
		cmocka_unit_test(test_op_rows),
		cmocka_unit_test(test_dot_and_file),
		cmocka_unit_test(test_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
