/* test_concurrent.c — one session run from many threads at once (runtime/runner.h).
 *
 * For each model and session configuration, every input variant is first run alone on the
 * session (the reference); then THREADS threads run the same session at once, each run taking
 * variant (thread + k) % VARIANTS, and every output must have the reference's bytes. Variants
 * differ in values and, for symbolic dims, in shape (1, 2, 3), so that runs under way at once
 * hold different buffers, inference caches and kernel states.
 *
 * The models: one built here (Conv 3x3 whose fast path keeps transformed weights as kernel
 * state, a batch taken from a symbolic dim through Shape/Concat/Reshape, inferred per run, a
 * MatMul, a Cast to strings, whose elements the run owns), in fast mode at 1 and 2 threads, in
 * exact mode, and with profiling (the counters of all runs add up); and the real models of
 * ../shared/models (a Loop/If voice detector, a GPT decoder, a CNN with 77 shape chains, a text
 * detector) with their own inputs, values scaled per variant. Runs per thread:
 * $OM_CONCURRENT_RUNS (default 200 for the small model, a quarter of it for the real ones). */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>

#include "testutil.h"

enum { THREADS = 8, VARIANTS = 3, MAX_IO = 16, C = 8, H = 12, M = 16 };

typedef struct job {
	om_session *s;
	int nin, nout, runs;
	om_tensor in[VARIANTS][MAX_IO];
	om_tensor ref[VARIANTS][MAX_IO];
} job;

typedef struct worker {
	job *j;
	int id, mismatches, failures;
	char msg[256];
} worker;

static bool same(const om_tensor *a, const om_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
	    memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank))
		return false;
	if (a->dtype != OM_STRING)
		return !memcmp(a->data, b->data, a->nbytes);
	const om_str *x = a->data, *y = b->data;
	for (size_t i = 0; i < a->nbytes / sizeof *x; i++)
		if (x[i].len != y[i].len || memcmp(x[i].ptr, y[i].ptr, x[i].len))
			return false;
	return true;
}

static void *work(void *arg)
{
	worker *w = arg;
	job *j = w->j;
	for (int k = 0; k < j->runs; k++) {
		const int v = (w->id + k) % VARIANTS;
		om_tensor out[MAX_IO];
		om_status st = {0};
		if (om_session_run(j->s, j->in[v], j->nin, out, j->nout, &st)) {
			if (!w->failures++)
				snprintf(w->msg, sizeof w->msg, "run %d: %.200s", k, st.msg);
			continue;
		}
		for (int i = 0; i < j->nout; i++) {
			w->mismatches += !same(&out[i], &j->ref[v][i]);
			om_tensor_free(&out[i]);
		}
	}
	return NULL;
}

/* The references, then THREADS threads at once; returns the runs that went through. */
static int run_job(job *j, const char *what)
{
	for (int v = 0; v < VARIANTS; v++) {
		om_status st = {0};
		if (om_session_run(j->s, j->in[v], j->nin, j->ref[v], j->nout, &st))
			fail_msg("%s: variant %d alone: %s", what, v, st.msg);
	}
	worker w[THREADS];
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		w[i] = (worker){.j = j, .id = i};
		assert_int_equal(pthread_create(&t[i], NULL, work, &w[i]), 0);
	}
	int bad = 0, failed = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		bad += w[i].mismatches;
		failed += w[i].failures;
		if (w[i].failures)
			printf("%s: thread %d: %s\n", what, i, w[i].msg);
	}
	printf("%s: %d threads x %d runs, %d outputs differ, %d runs failed\n", what, THREADS,
	       j->runs, bad, failed);
	assert_int_equal(failed, 0);
	assert_int_equal(bad, 0);
	for (int v = 0; v < VARIANTS; v++)
		for (int i = 0; i < j->nout; i++)
			om_tensor_free(&j->ref[v][i]);
	return THREADS * j->runs;
}

static int runs_asked(int dflt)
{
	const char *e = getenv("OM_CONCURRENT_RUNS");
	const int n = e ? atoi(e) : 0;
	return n > 0 ? n : dflt;
}

/* ---- the model built here ---------------------------------------------------------------- */

/* an int64 initializer of one element */
static void int_init(om_graph *g, const char *name, int64_t x)
{
	om_value *v = om_graph_value(g, name);
	v->init = om_model_tensor(g->model, OM_INT64, 1, (int64_t[]){1});
	*(int64_t *)v->init->data = x;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, v->init);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

/* x (N, C, H, H) -> Conv 3x3 (pads 1) -> Relu -> r; r reshaped to (N, M*H*H) by a shape
 * Concat(Slice(Shape(x), 0, 1), -1) read at run time -> MatMul (M*H*H, 4) -> y;
 * Cast(y, string) -> z */
static om_model *small_model(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){-1, C, H, H}));
	tu_float_init(g, "W", 4, (int64_t[]){M, C, 3, 3}, 1, 0.2f);
	tu_float_init(g, "B", 2, (int64_t[]){M * H * H, 4}, 2, 0.05f);
	int_init(g, "zero", 0);
	int_init(g, "one", 1);
	int_init(g, "rest", -1);
	om_node *conv = tu_graph_node(g, "Conv", "x,W", "c");
	tu_attr_ints(conv, "kernel_shape", 2, (int64_t[]){3, 3});
	tu_attr_ints(conv, "pads", 4, (int64_t[]){1, 1, 1, 1});
	tu_graph_node(g, "Relu", "c", "r");
	tu_graph_node(g, "Shape", "x", "sx");
	tu_graph_node(g, "Slice", "sx,zero,one", "n");
	om_node_set_attr(tu_graph_node(g, "Concat", "n,rest", "shape"), "axis", OM_ATTR_INT)->i = 0;
	tu_graph_node(g, "Reshape", "r,shape", "flat");
	tu_graph_node(g, "MatMul", "flat,B", "y");
	om_node_set_attr(tu_graph_node(g, "Cast", "y", "z"), "to", OM_ATTR_INT)->i = OM_STRING;
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y", OM_FLOAT, 2, (int64_t[]){-1, 4}));
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "z", OM_STRING, 2, (int64_t[]){-1, 4}));
	return m;
}

static void small_job(const om_session_options *opt, const char *what)
{
	om_model *m = small_model();
	job j = {.nin = 1, .nout = 2, .runs = runs_asked(200)};
	om_status st = {0};
	assert_int_equal(om_session_create(m, opt, &j.s, &st), OM_OK);
	for (int v = 0; v < VARIANTS; v++) {
		const int64_t n = v + 1;
		om_tensor *t = &j.in[v][0];
		assert_int_equal(om_tensor_alloc(t, OM_FLOAT, 4, (int64_t[]){n, C, H, H}, &st), OM_OK);
		tu_fill(t->data, n * C * H * H, 10 + (uint32_t)v, 1.0f);
	}
	const int done = run_job(&j, what);
	if (opt->profile) { /* every node of every run counted once: the runners' counters add up */
		om_profile_row *rows;
		int nrows;
		assert_int_equal(om_session_profile(j.s, &rows, &nrows, &st), OM_OK);
		for (int i = 0; i < nrows; i++)
			if (!strcmp(rows[i].op, "Conv") || !strcmp(rows[i].op, "MatMul"))
				assert_int_equal(rows[i].calls, done + VARIANTS);
		om_free(rows);
	}
	for (int v = 0; v < VARIANTS; v++)
		om_tensor_free(&j.in[v][0]);
	om_session_free(j.s);
	om_model_free(m);
}

static void small_fast(void **state)
{
	(void)state;
	small_job(&(om_session_options){.threads = 1}, "small, fast, 1 thread");
}

static void small_fast_2(void **state)
{
	(void)state;
	small_job(&(om_session_options){.threads = 2}, "small, fast, 2 threads");
}

static void small_exact(void **state)
{
	(void)state;
	small_job(&(om_session_options){.exact = 1}, "small, exact");
}

static void small_profile(void **state)
{
	(void)state;
	small_job(&(om_session_options){.profile = 1}, "small, profiled");
}

/* ---- the real models --------------------------------------------------------------------- */

/* variant v of a model input: floats scaled by 1 + v/8 (other types as given) */
static void scaled(const om_tensor *t, int v, om_tensor *out)
{
	om_status st = {0};
	assert_int_equal(om_tensor_alloc(out, t->dtype, t->rank, t->dims, &st), OM_OK);
	memcpy(out->data, t->data, t->nbytes);
	if (t->dtype == OM_FLOAT)
		for (size_t i = 0; i < t->nbytes / sizeof(float); i++)
			((float *)out->data)[i] *= 1.0f + (float)v / 8;
}

static void real_model(const char *dir)
{
	om_model *m;
	om_status st = {0};
	assert_int_equal(om_model_load(tu_join(dir, "model.onnx"), &m, &st), OM_OK);
	job j = {.runs = runs_asked(200) / 4};
	assert_int_equal(om_session_create(m, &(om_session_options){.threads = 1}, &j.s, &st),
			 OM_OK);
	j.nin = om_session_input_count(j.s);
	j.nout = om_session_output_count(j.s);
	assert_true(j.nin <= MAX_IO && j.nout <= MAX_IO);
	for (int i = 0; i < j.nin; i++) {
		char name[512];
		snprintf(name, sizeof name, "in/%s.npy", om_session_input_name(j.s, i));
		om_tensor t;
		if (om_tensor_read_file(tu_join(dir, name), &t, &st))
			fail_msg("%s: %s", dir, st.msg);
		for (int v = 0; v < VARIANTS; v++)
			scaled(&t, v, &j.in[v][i]);
		om_tensor_free(&t);
	}
	run_job(&j, dir);
	for (int v = 0; v < VARIANTS; v++)
		for (int i = 0; i < j.nin; i++)
			om_tensor_free(&j.in[v][i]);
	om_session_free(j.s);
	om_model_free(m);
}

static void real_models(void **state)
{
	(void)state;
	const char *shared = tu_shared_dir();
	if (!shared) {
		printf("skipped: ../shared (OMOPT_SHARED) is missing: its models/ are run here\n");
		skip();
	}
	char models[4096];
	snprintf(models, sizeof models, "%s/models", shared);
	DIR *d = opendir(models);
	if (!d) {
		printf("skipped: %s is missing\n", models);
		skip();
	}
	struct dirent *e;
	int n = 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.') {
			char dir[4096 + 256];
			snprintf(dir, sizeof dir, "%s/%s", models, e->d_name);
			real_model(dir);
			n++;
		}
	closedir(d);
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_fast),    cmocka_unit_test(small_fast_2),
		cmocka_unit_test(small_exact),   cmocka_unit_test(small_profile),
		cmocka_unit_test(real_models),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
