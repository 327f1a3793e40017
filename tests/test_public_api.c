/* test_public_api.c — what a user of include/omopt.h alone can do (built with the public
 * include path only, as the tools are): look at a model (header fields, inputs and outputs,
 * op counts, initializers), list the op rows, draw it as dot text, write a file atomically,
 * profile a session. */
#include <setjmp.h>
#include <stdarg.h>
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
	const int n = om_op_rows(NULL, 0);
	assert_true(n > 200);
	om_op_info *rows = calloc((size_t)n, sizeof *rows);
	assert_int_equal(om_op_rows(rows, n), n);
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
	free(rows);
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
		const om_profile_row *rows;
		const int n = om_session_profile(s, &rows);
		assert_true(n > 0);
		int64_t convs = 0, conv_rows = 0;
		const char *first = NULL;
		for (int i = 0; i < n; i++) {
			assert_true(rows[i].ms >= 0);
			if (i)
				assert_true(rows[i - 1].ms >= rows[i].ms); /* slowest first */
			assert_true(per_node ? rows[i].node != NULL : rows[i].node == NULL);
			/* per node: the implementation a Conv's kernel chose (conv_impl.c) */
			if (!per_node || strcmp(rows[i].op, "Conv"))
				assert_null(rows[i].impl);
			else
				assert_non_null(rows[i].impl);
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
		om_session_profile_reset(s);
		assert_int_equal(om_session_profile(s, &rows), 0);
		om_session_free(s);
		om_model_free(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inspect),
		cmocka_unit_test(test_op_rows),
		cmocka_unit_test(test_dot_and_file),
		cmocka_unit_test(test_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
