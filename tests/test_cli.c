/* test_cli.c — `omopt simplify` and `omopt info` as a user runs them: exit codes 0/1/2,
 * messages, the before/after table, and the written model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char tmpdir[256];

/* Runs `omopt ARGS` in the test folder; returns the exit code, stdout and stderr. */
static int run(const char *args, char *out, size_t nout, char *err, size_t nerr)
{
	return tu_run_omopt(tmpdir, args, out, nout, err, nerr);
}

static void typed(om_graph *g, om_value *v, int32_t elem, int32_t rank, const om_dim *d)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.rank = rank;
	v->type.dims = om_arena_memdup(g->model->arena, d, sizeof *d * (size_t)rank);
}

/* x:[N,3,2] -> Shape -> Gather(0) -> Unsqueeze -> Concat(., [-1]) -> Reshape -> Identity -> y */
static void write_model(const char *path)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	m->ir_version = 8;
	m->producer_name = "test_cli";
	om_value *x = om_graph_value(g, "x");
	typed(g, x, OM_FLOAT, 3, (om_dim[]){{-1, "N"}, {3, NULL}, {2, NULL}});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	const int64_t vals[3] = {0, 0, -1};
	const char *names[3] = {"i0", "ax", "m1"};
	for (int k = 0; k < 3; k++) {
		int64_t one = 1;
		om_tensor *t = om_model_tensor(m, OM_INT64, k ? 1 : 0, &one);
		*(int64_t *)t->data = vals[k];
		om_value *v = om_graph_value(g, names[k]);
		v->init = t;
		v->flags |= OM_VALUE_INITIALIZER;
		om_type_from_tensor(m, &v->type, t);
		tu_push_value(g, &g->inits, &g->ninits, v);
	}
	const char *ops[] = {"Shape", "Gather", "Unsqueeze", "Concat", "Reshape", "Identity"};
	const char *ins[][2] = {{"x", NULL}, {"s", "i0"}, {"n", "ax"}, {"nu", "m1"}, {"x", "t"},
				{"r", NULL}};
	const char *outs[] = {"s", "n", "nu", "t", "r", "y"};
	for (int k = 0; k < 6; k++) {
		om_node *n = om_graph_add_node(g, ops[k], "", ops[k], ins[k][1] ? 2 : 1, 1);
		for (int i = 0; i < n->nin; i++)
			n->in[i] = om_graph_value(g, ins[k][i]);
		om_node_set_output(n, 0, om_graph_value(g, outs[k]));
		if (k == 3)
			om_node_set_attr(n, "axis", OM_ATTR_INT)->i = 0;
	}
	om_value *y = om_graph_value(g, "y");
	typed(g, y, OM_FLOAT, 2, (om_dim[]){{-1, "N"}, {6, NULL}});
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
}

static void help_and_usage_errors(void **state)
{
	(void)state;
	char out[8192], err[8192];
	assert_int_equal(run("simplify --help", out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "usage: omopt simplify"));
	assert_non_null(strstr(out, "fold_shape_chains"));
	assert_int_equal(run("info --help", out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "usage: omopt info"));
	assert_int_equal(run("simplify", out, sizeof out, err, sizeof err), 2);
	assert_int_equal(run("simplify a.onnx", out, sizeof out, err, sizeof err), 2);
	assert_int_equal(run("simplify a.onnx b.onnx --bogus", out, sizeof out, err, sizeof err),
			 2);
	assert_non_null(strstr(err, "--bogus"));
	assert_int_equal(run("simplify a b --skip nope", out, sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(run("simplify a b --fold-max-bytes x1", out, sizeof out, err, sizeof err),
			 2);
	assert_int_equal(run("info", out, sizeof out, err, sizeof err), 2);
	assert_int_equal(run("info a b", out, sizeof out, err, sizeof err), 2);
}

/* `info --ops`: one line per registry row, sorted, the count line agreeing with them */
static void info_lists_the_op_rows(void **state)
{
	(void)state;
	static char out[1 << 16];
	char err[1024];
	assert_int_equal(run("info --ops", out, sizeof out, err, sizeof err), 0);
	int lines = 0, rows = -1;
	char prev[96] = "";
	for (const char *p = out; *p; p = strchr(p, '\n') + 1) {
		if (sscanf(p, "%d rows", &rows) == 1)
			break;
		lines++;
		assert_non_null(strchr(p, '\n'));
		/* sorted by domain (ai.onnx first: the others' names sort after it) and name */
		char domain[48], name[48], key[96];
		assert_int_equal(sscanf(p, "%47s %47s", domain, name), 2);
		snprintf(key, sizeof key, "%s %s", strcmp(domain, "ai.onnx") ? domain : "", name);
		if (strcmp(prev, key) > 0)
			fail_msg("'%s' listed after '%s'", key, prev);
		memcpy(prev, key, sizeof key);
	}
	assert_int_equal(rows, lines);
	assert_true(rows > 200);
	/* a row, a view row, a contrib row, a random row (kernels/conv/ops_conv.c, ops_view.c,
	 * ops_random.c) */
	static const char *const want[][4] = {
		{"ai.onnx", "Conv", "1", "exact,layout,epilogue,in-scale,sum"},
		{"ai.onnx", "Reshape", "5", "view,exact,same-shape-copy,select"},
		{"com.microsoft", "FusedConv", "1", "exact,layout,epilogue,in-scale,in-place-last"},
		{"ai.onnx", "RandomNormal", "1", "exact,random"}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		char line[128];
		snprintf(line, sizeof line, "\n%-14s %-32s %4s %s\n", want[i][0], want[i][1],
			 want[i][2], want[i][3]);
		if (!strstr(out, line))
			fail_msg("no row %s", line);
	}
	assert_int_equal(run("info --ops x.onnx", out, sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "--ops lists the ops omopt knows and takes no model"));
	assert_int_equal(run("info x.onnx --ops", out, sizeof out, err, sizeof err), 2);
	assert_non_null(strstr(err, "--ops lists the ops omopt knows and takes no model"));
}

static void missing_and_truncated_models(void **state)
{
	(void)state;
	char out[8192], err[8192], args[2048], path[512];
	snprintf(args, sizeof args, "simplify '%s/none.onnx' '%s/o.onnx'", tmpdir, tmpdir);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	assert_non_null(strstr(err, "omopt: "));
	snprintf(path, sizeof path, "%s/m.onnx", tmpdir);
	write_model(path);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 40);
	snprintf(path, sizeof path, "%s/cut.onnx", tmpdir);
	f = fopen(path, "wb");
	assert_int_equal(fwrite(buf, 1, n - 25, f), n - 25);
	fclose(f);
	snprintf(args, sizeof args, "simplify '%s' '%s/o.onnx'", path, tmpdir);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	assert_non_null(strstr(err, "InvalidModel"));
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	assert_non_null(strstr(err, "InvalidModel"));
}

static void simplify_writes_a_smaller_model(void **state)
{
	(void)state;
	char out[8192], err[8192], args[2048], in[512], res[512];
	snprintf(in, sizeof in, "%s/m.onnx", tmpdir);
	snprintf(res, sizeof res, "%s/s.onnx", tmpdir);
	write_model(in);
	snprintf(args, sizeof args, "simplify '%s' '%s' --verify", in, res);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "total nodes"));
	assert_non_null(strstr(out, " ms"));
	/* the table: Shape 1 -> 0, Reshape 1 -> 1, total 6 -> 1 (Reshape writes y) */
	assert_non_null(strstr(out, "Shape                               1        0"));
	assert_non_null(strstr(out, "total nodes                         6        1"));
	om_model *m = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(res, &m, &st), OM_OK);
	const om_graph *g = m->graph;
	assert_int_equal(g->nnodes, 1);
	assert_string_equal(g->nodes[0]->op, "Reshape");
	assert_string_equal(g->outputs[0]->name, "y");
	assert_string_equal(g->inputs[0]->name, "x");
	assert_string_equal(g->inputs[0]->type.dims[0].param, "N");
	const om_tensor *t = g->nodes[0]->in[1]->init;
	assert_non_null(t);
	assert_int_equal(om_tensor_numel(t), 2);
	assert_int_equal(((const int64_t *)t->data)[0], 0);
	assert_int_equal(((const int64_t *)t->data)[1], -1);
	om_model_free(m);

	snprintf(args, sizeof args, "info '%s'", res);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "float[N,3,2]"));
	assert_non_null(strstr(out, "float[N,6]"));
	assert_non_null(strstr(out, "Reshape"));
	assert_non_null(strstr(out, "initializers: 1 (16 bytes)"));

	snprintf(args, sizeof args, "simplify '%s' '%s' --skip fold_shape_chains -v", in, res);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(err, "eliminate_identities"));
	assert_non_null(strstr(out, "total nodes                         6        5"));
}

/* What `omopt info` says about files that are not good models: the file, the facts. */
static void info_explains_bad_files(void **state)
{
	(void)state;
	char out[8192], err[8192], args[2048], path[512];
	/* a model cut to 40 bytes less than it is */
	snprintf(path, sizeof path, "%s/whole.onnx", tmpdir);
	write_model(path);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	char buf[4096];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	assert_true(n > 100 && n < 1000);
	snprintf(path, sizeof path, "%s/short.onnx", tmpdir);
	f = fopen(path, "wb");
	assert_int_equal(fwrite(buf, 1, n - 40, f), n - 40);
	fclose(f);
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	char want[700];
	snprintf(want, sizeof want, "InvalidModel: '%s' is truncated: field 7 (graph)", path);
	assert_non_null(strstr(err, want));
	snprintf(want, sizeof want, "the file ends at byte %zu\n", n - 40);
	assert_non_null(strstr(err, want));
	/* an empty file */
	snprintf(path, sizeof path, "%s/empty.onnx", tmpdir);
	f = fopen(path, "wb");
	fclose(f);
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	snprintf(want, sizeof want, "InvalidModel: '%s' is empty (0 bytes)", path);
	assert_non_null(strstr(err, want));
	/* an image saved with numpy */
	snprintf(path, sizeof path, "%s/image.npy", tmpdir);
	f = fopen(path, "wb");
	static const char npy[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': "
				  "False, 'shape': (1,), }";
	fwrite(npy, 1, sizeof npy - 1, f);
	fclose(f);
	snprintf(args, sizeof args, "info '%s'", path);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	snprintf(want, sizeof want, "InvalidModel: '%s' is a NumPy array, not an ONNX model", path);
	assert_non_null(strstr(err, want));
	/* a missing file stays an I/O error */
	snprintf(args, sizeof args, "info '%s/absent.onnx'", tmpdir);
	assert_int_equal(run(args, out, sizeof out, err, sizeof err), 1);
	assert_non_null(strstr(err, "Io: cannot open"));
	assert_non_null(strstr(err, "absent.onnx"));
}

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(tmpdir, sizeof tmpdir, "omopt_cli_");
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(help_and_usage_errors),
		cmocka_unit_test(info_lists_the_op_rows),
		cmocka_unit_test(missing_and_truncated_models),
		cmocka_unit_test(simplify_writes_a_smaller_model),
		cmocka_unit_test(info_explains_bad_files),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
