/* test_check_cli.c — `omopt simplify --check/--bisect` and `omopt compare` as a user runs them:
 * exit codes 0/1/2/3, the printed differences, the pass and node named. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char tmpdir[256];
static char out[1 << 16], err[1 << 14];

static int run(const char *args)
{
	return tu_run_omopt(tmpdir, args, out, sizeof out, err, sizeof err);
}

static void typed(om_graph *g, om_value *v, int32_t elem, int32_t rank, const om_dim *d)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.rank = rank;
	v->type.dims = om_arena_memdup(g->model->arena, d, sizeof *d * (size_t)rank);
}

/* x:[N,2] -> mm = MatMul(x, W=[[1,2],[3,4]]) -> h -> id = Identity -> y; x=[[1,1]] gives
 * y = [4,6]; the broken pass adds 1 to W's elements 1 and 2: y = [5,7]. */
static void write_files(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = om_graph_value(g, "x");
	typed(g, x, OM_FLOAT, 2, (om_dim[]){{-1, "N"}, {2, NULL}});
	x->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, x);
	om_tensor *w = om_model_tensor(m, OM_FLOAT, 2, (int64_t[]){2, 2});
	memcpy(w->data, (float[]){1, 2, 3, 4}, 4 * sizeof(float));
	om_value *wv = om_graph_value(g, "W");
	wv->init = w;
	wv->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &wv->type, w);
	tu_push_value(g, &g->inits, &g->ninits, wv);
	tu_graph_node(g, "MatMul", "x,W", "h")->name = "mm";
	tu_graph_node(g, "Identity", "h", "y")->name = "id";
	om_value *y = om_graph_value(g, "y");
	typed(g, y, OM_FLOAT, 2, (om_dim[]){{-1, "N"}, {2, NULL}});
	y->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, y);
	char path[512];
	om_status st = {0};
	snprintf(path, sizeof path, "%s/m.onnx", tmpdir);
	assert_int_equal(om_model_save(m, path, NULL, &st), OM_OK);
	om_model_free(m);
	om_tensor t = {.dtype = OM_FLOAT, .rank = 2, .dims = {1, 2},
		       .data = (float[]){1, 1}, .nbytes = 8};
	snprintf(path, sizeof path, "%s/x.npy", tmpdir);
	assert_int_equal(om_tensor_write_file(path, &t, "x", &st), OM_OK);
	/* x's second dim is 2: a [1,3] and an int64 input do not fit it */
	om_tensor wide = {.dtype = OM_FLOAT, .rank = 2, .dims = {1, 3},
			  .data = (float[]){1, 1, 1}, .nbytes = 12};
	snprintf(path, sizeof path, "%s/wide.npy", tmpdir);
	assert_int_equal(om_tensor_write_file(path, &wide, "x", &st), OM_OK);
	om_tensor ints = {.dtype = OM_INT64, .rank = 2, .dims = {1, 2},
			  .data = (int64_t[]){1, 1}, .nbytes = 16};
	snprintf(path, sizeof path, "%s/ints.npy", tmpdir);
	assert_int_equal(om_tensor_write_file(path, &ints, "x", &st), OM_OK);
}

static int setup(void **state)
{
	(void)state;
	if (tu_tmpdir_make(tmpdir, sizeof tmpdir, "omcheckcli"))
		return -1;
	write_files();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tu_tmpdir_remove(tmpdir);
}

static void check_passes(void **state)
{
	(void)state;
	assert_int_equal(run("simplify m.onnx s.onnx --check 3"), 0);
	assert_non_null(strstr(out, "check: 3 runs"));
	assert_non_null(strstr(out, "run 1: N=1"));
	assert_non_null(strstr(out, "run 3: N=3"));
	assert_non_null(strstr(out, "rtol 0.0001, atol 1e-05"));
	assert_non_null(strstr(out, "check: passed"));
	/* the output's row: name, shape, max abs 0, max rel 0, ok */
	const char *row = strstr(out, "  y ");
	assert_non_null(row);
	char name[8], shape[32], result[8];
	double abs_d = -1, rel_d = -1;
	assert_int_equal(sscanf(row, "%7s %31s %lf %lf %7s", name, shape, &abs_d, &rel_d, result),
			 5);
	assert_string_equal(shape, "float[1..3,2]"); /* N over the three runs */
	assert_true(abs_d == 0 && rel_d == 0);
	assert_string_equal(result, "ok");
	assert_int_equal(run("compare m.onnx s.onnx --input x=x.npy"), 0);
	assert_non_null(strstr(out, "every shared value within tolerance"));
	/* --input-dir: x from ./x.npy, as run reads it: every input given, so one run */
	assert_int_equal(run("compare m.onnx s.onnx --input-dir ."), 0);
	assert_non_null(strstr(out, "every shared value within tolerance"));
	assert_int_equal(run("simplify m.onnx s.onnx --check 3 --input-dir ."), 0);
	assert_non_null(strstr(out, "check: 1 run"));
}

static void broken_pass_is_caught_and_named(void **state)
{
	(void)state;
	assert_int_equal(run("simplify m.onnx b.onnx --check 2 --bisect --input x=x.npy "
			     "--test-break-pass eliminate_identities"), 3);
	assert_non_null(strstr(out, "check: FAILED in run 1"));
	const char *row = strstr(out, "  y ");
	assert_non_null(row);
	char name[8], shape[32], result[8];
	double abs_d = -1, rel_d = -1;
	assert_int_equal(sscanf(row, "%7s %31s %lf %lf %7s", name, shape, &abs_d, &rel_d, result),
			 5);
	/* [4,6] against [5,7]: max abs 1, max rel 1/6 */
	assert_true(abs_d == 1 && fabs(rel_d - 1.0 / 6) < 1e-3);
	assert_string_equal(result, "OVER");
	assert_non_null(strstr(out, "bisect: pass 'eliminate_identities' (round 1"));
	/* the Identity went and MatMul writes the graph output y itself: y is the first shared
	 * value, computed by another node in each model */
	assert_non_null(strstr(out, "first differing value: 'y' float[1,2]: max abs 1"));
	assert_non_null(strstr(out, "computed by node 'mm' (MatMul) after the pass, by node 'id' "
				    "(Identity) in the original"));
	assert_non_null(strstr(err, "b.onnx was written anyway"));
	/* compare names the same value; exit 3 */
	assert_int_equal(run("compare m.onnx b.onnx --input x=x.npy"), 3);
	assert_non_null(strstr(out, "first differing value 'y'"));
	assert_non_null(strstr(out, "<- first"));
	/* loose enough tolerances let it pass */
	assert_int_equal(run("simplify m.onnx b.onnx --check 1 --input x=x.npy --rtol 1 "
			     "--test-break-pass eliminate_identities"), 0);
}

static void usage_errors(void **state)
{
	(void)state;
	assert_int_equal(run("simplify --help"), 0);
	assert_non_null(strstr(out, "--check N"));
	assert_non_null(strstr(out, "--bisect"));
	assert_non_null(strstr(out, "3 the check failed"));
	assert_int_equal(run("compare --help"), 0);
	assert_non_null(strstr(out, "usage: omopt compare"));
	assert_int_equal(run("simplify m.onnx s.onnx --check x"), 2);
	assert_int_equal(run("simplify m.onnx s.onnx --check 0"), 2);
	assert_int_equal(run("simplify m.onnx s.onnx --check 1 --rtol -1"), 2);
	assert_int_equal(run("simplify m.onnx s.onnx --check 1 --input x"), 2);
	assert_int_equal(run("simplify m.onnx s.onnx --input x=x.npy"), 2);
	assert_int_equal(run("simplify m.onnx s.onnx --test-break-pass nope"), 2);
	assert_int_equal(run("compare m.onnx"), 2);
	assert_int_equal(run("compare m.onnx s.onnx --bogus"), 2);
	/* a missing input file or an input the model lacks: exit 1 */
	assert_int_equal(run("simplify m.onnx s.onnx --check 1 --input x=none.npy"), 1);
	/* an input that cannot feed the model fails before the passes: OUT is not written */
	assert_int_equal(run("simplify m.onnx w.onnx --check 1 --input x=wide.npy"), 1);
	assert_non_null(strstr(err, "input 'x': dim 1 is 3 in the file, 2 in the model"));
	assert_int_equal(run("simplify m.onnx w.onnx --check 1 --input x=ints.npy"), 1);
	assert_non_null(strstr(err, "input 'x': the file holds int64, the model declares float"));
	char wpath[512];
	snprintf(wpath, sizeof wpath, "%s/w.onnx", tmpdir);
	assert_int_equal(access(wpath, F_OK), -1);
	/* unless --input-shape gives the input that shape */
	assert_int_equal(run("simplify m.onnx w.onnx --check 1 --input x=wide.npy "
			     "--input-shape x:1,3"),
			 1);
	assert_null(strstr(err, "dim 1 is 3"));
	assert_int_equal(run("compare m.onnx m.onnx --input-dir . --input-dir ."), 2);
	assert_int_equal(run("compare m.onnx m.onnx --input-dir nowhere"), 1);
	assert_non_null(
		strstr(err, "input 'x' is in neither nowhere/input_0.pb nor nowhere/x.npy"));
	assert_int_equal(run("compare m.onnx m.onnx --input z=x.npy"), 1);
	assert_non_null(strstr(err, "the model has no input 'z' to feed (its inputs: x)"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(check_passes),
		cmocka_unit_test(broken_pass_is_caught_and_named),
		cmocka_unit_test(usage_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
