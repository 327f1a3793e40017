/* test_run_cli.c — `omopt run` as a user runs it: inputs by name and by folder, .pb and .npy
 * outputs, --bench and --profile lines, exit codes 0/1/2 and the node in error messages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

static char tmpdir[256];

/* Runs `omopt run ARGS` in the test folder; returns the exit code, stdout and stderr. */
static int run(const char *args, char *out, char *err, size_t size)
{
	char full[8192];
	snprintf(full, sizeof full, "run %s", args);
	return tu_run_omopt(tmpdir, full, out, size, err, size);
}

/* `omopt run ARGS` exits with `status` and says `message` on stderr */
static void fails_with(const char *args, int status, const char *message)
{
	char out[8192], err[8192];
	assert_int_equal(run(args, out, err, sizeof out), status);
	if (!strstr(err, message))
		fail_msg("run %s: no '%s' in: %s", args, message, err);
}

static om_value *typed_input(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = 1};
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim));
	v->type.dims[0] = (om_dim){3, NULL};
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

/* s = a + b, d = a - b (or an op nobody knows, named "mystery") */
static void write_model(const char *path, const char *op2)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	om_value *a = typed_input(g, "a"), *b = typed_input(g, "b");
	const char *ops[2] = {"Add", op2}, *names[2] = {"s", "d"};
	for (int i = 0; i < 2; i++) {
		om_node *n = om_graph_add_node(g, ops[i], "", i ? "mystery" : "add", 2, 1);
		n->in[0] = a, n->in[1] = b;
		om_value *y = om_graph_value(g, names[i]);
		om_node_set_output(n, 0, y);
		y->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(g, &g->outputs, &g->noutputs, y);
	}
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
}

/* y = If(c) with then = Neg(a) and an else branch whose two nodes feed
 * each other (a cycle): the passes cannot sort it, so optimizing fails */
static void write_cyclic_model(const char *path)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	om_value *a = typed_input(g, "a");
	om_value *c = om_graph_value(g, "c");
	c->flags |= OM_VALUE_GRAPH_INPUT;
	c->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_BOOL, .rank = 0};
	tu_push_value(g, &g->inputs, &g->ninputs, c);
	om_node *iff = om_graph_add_node(g, "If", "", "branch", 1, 1);
	iff->in[0] = c;
	om_value *y = om_graph_value(g, "y");
	om_node_set_output(iff, 0, y);
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	om_graph *then = om_graph_new(m, g), *els = om_graph_new(m, g);
	om_value *ao = om_graph_value(then, a->name);
	ao->flags |= OM_VALUE_OUTER;
	om_node *neg = om_graph_add_node(then, "Neg", "", "neg", 1, 1);
	neg->in[0] = ao;
	om_node_set_output(neg, 0, om_graph_value(then, "t"));
	tu_push_value(then, &then->outputs, &then->noutputs, neg->out[0]);
	om_node *n1 = om_graph_add_node(els, "Neg", "", "n1", 1, 1);
	om_node *n2 = om_graph_add_node(els, "Neg", "", "n2", 1, 1);
	om_node_set_output(n1, 0, om_graph_value(els, "e1"));
	om_node_set_output(n2, 0, om_graph_value(els, "e2"));
	n1->in[0] = n2->out[0], n2->in[0] = n1->out[0];
	tu_push_value(els, &els->outputs, &els->noutputs, n1->out[0]);
	om_node_set_attr(iff, "then_branch", OM_ATTR_GRAPH)->g = then;
	om_node_set_attr(iff, "else_branch", OM_ATTR_GRAPH)->g = els;
	om_status st = {0};
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
}

static void write_input(const char *name, const float *v)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	om_tensor t = {.dtype = OM_FLOAT, .rank = 1, .dims = {3}, .data = (void *)v,
		       .nbytes = 12};
	om_status st = {0};
	assert_int_equal(om_tensor_write_file(path, &t, "x", &st), OM_OK);
}

static void check_output(const char *name, const float *want)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	om_tensor t;
	om_status st = {0};
	assert_int_equal(om_tensor_read_file(path, &t, &st), OM_OK);
	assert_int_equal(t.dtype, OM_FLOAT);
	assert_int_equal(t.rank, 1);
	assert_int_equal(t.dims[0], 3);
	for (int i = 0; i < 3; i++)
		assert_true(((float *)t.data)[i] == want[i]);
	om_tensor_free(&t);
}

static void usage_errors(void **state)
{
	(void)state;
	char out[8192], err[8192];
	assert_int_equal(run("--help", out, err, sizeof out), 0);
	assert_non_null(strstr(out, "--output-dir"));
	assert_int_equal(run("", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx", out, err, sizeof out), 2); /* no --output-dir */
	assert_int_equal(run("m.onnx --output-dir o --bogus", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --output-dir o --input a", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --output-dir o --threads 0", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --output-dir o --bench x", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --output-dir o --output-format csv", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --output-dir o --layout nchw16c", out, err, sizeof out), 2);
	assert_non_null(strstr(err, "unknown layout 'nchw16c'"));
	/* a usage error names itself and where the options are, not the whole help (a new
	 * user's trial) */
	assert_non_null(strstr(err, "(omopt run --help lists the options)"));
	assert_null(strstr(err, "usage:"));
	assert_int_equal(run("missing.onnx --output-dir o", out, err, sizeof out), 1);
	assert_true(!strncmp(err, "omopt: ", 7));
}

/* the calls/run column of op's row in a --profile table, -1 when there is no row */
static double calls_per_run(const char *out, const char *op)
{
	char key[64];
	snprintf(key, sizeof key, "\n%s ", op);
	const char *p = strstr(out, key);
	double calls = -1;
	if (!p || sscanf(p + strlen(key), "%lf", &calls) != 1)
		return -1;
	return calls;
}

static void runs_and_writes(void **state)
{
	(void)state;
	char out[8192], err[8192];
	const float a[] = {1, 2, 3}, b[] = {10, 20, 40};
	const float s[] = {11, 22, 43}, d[] = {-9, -18, -37};
	snprintf(out, sizeof out, "%s/m.onnx", tmpdir);
	write_model(out, "Sub");
	write_input("a.npy", a);
	write_input("b.pb", b);
	/* by name, .pb outputs in graph-output order */
	assert_int_equal(run("m.onnx --input a=a.npy --input b=b.pb --output-dir o1", out, err,
			     sizeof out), 0);
	check_output("o1/output_0.pb", s);
	check_output("o1/output_1.pb", d);
	/* by folder (input_<i>.pb), .npy outputs, bench and profile */
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "mkdir -p '%s/in'", tmpdir);
	assert_int_equal(system(cmd), 0);
	write_input("in/input_0.pb", a);
	write_input("in/input_1.pb", b);
	assert_int_equal(run("m.onnx --input-dir in --output-dir o2 --output-format npy --bench 3 "
			     "--profile --threads 2",
			     out, err, sizeof out),
			 0);
	check_output("o2/output_0.npy", s);
	check_output("o2/output_1.npy", d);
	assert_non_null(strstr(out, "bench: 3 runs, median "));
	assert_non_null(strstr(out, " ms, min "));
	assert_non_null(strstr(out, "profile: wall time per op type, mean of 3 runs after a warm-up"));
	/* one Add and one Sub per run, whatever the number of runs */
	assert_true(calls_per_run(out, "Add") == 1);
	assert_true(calls_per_run(out, "Sub") == 1);
	assert_non_null(strstr(out, "MiB busy at once"));
	/* one timed run: "1 run", its CPU time measured like several runs' (a new user saw
	 * "1 runs" and "cpu 0.000") */
	assert_int_equal(run("m.onnx --input-dir in --bench 1 --layout nhwc", out, err, sizeof out),
			 0);
	assert_non_null(strstr(out, "bench: 1 run, median "));
	/* --name=value is --name value (a new user typed --layout=nhwc) */
	assert_int_equal(run("m.onnx --input-dir=in --bench=1 --layout=nhwc --threads=2", out,
			     err, sizeof out),
			 0);
	assert_non_null(strstr(out, "bench: 1 run, median "));
	fails_with("m.onnx --input-dir in --bench 1 --exact --layout nchw", 2,
		   "--layout is for fast mode");
	fails_with("m.onnx --input-dir in --bench=x", 2, "bad run count 'x'");
	/* --input overrides the folder; a name the model lacks is an error */
	assert_int_equal(run("m.onnx --input-dir in --input b=a.npy --output-dir o3 --exact", out,
			     err, sizeof out),
			 0);
	check_output("o3/output_0.pb", (const float[]){2, 4, 6});
	fails_with("m.onnx --input zz=a.npy --input-dir in --output-dir o3", 1,
		   "omopt: InvalidInput: the model has no input 'zz' (its inputs: a, b)");
	/* one input given twice is a usage error, not the last one silently */
	fails_with("m.onnx --input a=a.npy --input b=a.npy --input a=a.npy --bench 1", 2,
		   "omopt run: --input 'a' is given twice");
	/* --input-dir takes NAME.npy where input_<i>.pb is missing */
	snprintf(cmd, sizeof cmd, "cd '%s' && mkdir -p npyin && cp a.npy npyin/a.npy && "
		 "cp a.npy npyin/b.npy", tmpdir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(run("m.onnx --input-dir npyin --output-dir o4 --exact", out, err,
			     sizeof out),
			 0);
	check_output("o4/output_0.pb", (const float[]){2, 4, 6});
	/* more threads than cores: a note, and the run goes on */
	assert_int_equal(run("m.onnx --input-dir in --bench 1 --threads 1000", out, err,
			     sizeof out),
			 0);
	assert_non_null(strstr(err, "omopt run: note: 1000 threads on "));
	/* a missing input */
	fails_with("m.onnx --input a=a.npy --output-dir o3", 1, "'b'");
}

/* optimizing is never fatal: when it fails, the model runs as loaded, with a warning (here
 * the session then refuses the cyclic branch itself) */
static void optimize_failure_runs_as_loaded(void **state)
{
	(void)state;
	char out[8192], err[8192], path[512];
	snprintf(path, sizeof path, "%s/cyc.onnx", tmpdir);
	write_cyclic_model(path);
	write_input("a.npy", (const float[]){1, 2, 3});
	assert_int_equal(run("cyc.onnx --input a=a.npy --output-dir oc", out, err, sizeof out), 1);
	assert_non_null(strstr(err, "omopt run: not optimized (InvalidModel: graph "));
	assert_non_null(strstr(err, "running the model as loaded\n"));
	assert_non_null(strstr(err, "omopt: InvalidModel: graph "));
	assert_non_null(strstr(err, "has a cycle"));
	/* --no-optimize: no warning, the session's own error */
	assert_int_equal(run("cyc.onnx --input a=a.npy --output-dir oc --no-optimize", out, err,
			     sizeof out),
			 1);
	assert_null(strstr(err, "not optimized"));
	assert_non_null(strstr(err, "has a cycle"));
}

static void node_errors(void **state)
{
	(void)state;
	char out[8192], err[8192], path[512];
	snprintf(path, sizeof path, "%s/u.onnx", tmpdir);
	write_model(path, "NoSuchOp");
	assert_int_equal(run("u.onnx --input-dir in --output-dir o4", out, err, sizeof out), 1);
	assert_non_null(strstr(err, "omopt: Unsupported: node 'mystery' (NoSuchOp): "));
}

/* A Loop of 3.4e15 iterations that allocates nothing (fuzz finding Z7): --max-run-ms ends it
 * as InvalidInput naming the node it reached, within a second of the limit. */
static void time_limit(void **state)
{
	(void)state;
	char out[8192], err[8192], args[1024];
	const char *src = getenv("OMOPT_SOURCE");
	if (!src) {
		skip(); /* OMOPT_SOURCE (the repository) is not set: meson test sets it */
		return;
	}
	float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	om_tensor t = {.dtype = OM_FLOAT, .rank = 2, .dims = {2, 4}, .data = x, .nbytes = 32};
	om_status st = {0};
	snprintf(args, sizeof args, "%s/x8.pb", tmpdir);
	assert_int_equal(om_tensor_write_file(args, &t, "x", &st), OM_OK);
	snprintf(args, sizeof args,
		 "%s/fuzz/corpus/models/repro_loop_huge_trip_count.onnx --input x=x8.pb "
		 "--max-run-ms 200 --output-dir o5", src);
	assert_int_equal(run(args, out, err, sizeof out), 1);
	assert_non_null(strstr(err, "omopt: InvalidInput: node '"));
	assert_non_null(strstr(err, "longer than its limit of 200 ms (max_run_ms)"));
	assert_int_equal(run("m.onnx --max-run-ms 0 --output-dir o6", out, err, sizeof out), 2);
	assert_int_equal(run("m.onnx --max-run-ms x --output-dir o6", out, err, sizeof out), 2);
}

static int setup(void **state)
{
	(void)state;
	return tu_tmpdir_make(tmpdir, sizeof tmpdir, "omopt_run_cli_");
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove(tmpdir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(usage_errors),
		cmocka_unit_test(runs_and_writes),
		cmocka_unit_test(node_errors),
		cmocka_unit_test(time_limit),
		cmocka_unit_test(optimize_failure_runs_as_loaded),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
