/* bench_transpose.c — Transpose of a (64,64,64,64) float tensor with perm (0,2,1,3) through an
 * omopt session against ONNX Runtime (single-threaded, same run), printing the time ratio.
 *
 *     build/bench/transpose/bench_transpose [SHARED_DIR] [RUNS]
 *
 * SHARED_DIR defaults to $OMOPT_SHARED, else ../shared beside the source tree. The model and
 * input are written to a temporary folder; ONNX Runtime runs them through
 * SHARED_DIR/oracle/ort_run.js --time RUNS, and its output must equal ours bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ir.h"
#include "transpose.h"

enum { D = 64 };

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	const double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static om_value *typed_value(om_graph *g, const char *name, const int64_t *dims, uint32_t flag,
			     om_value ***list, int32_t *count)
{
	om_value *v = om_graph_value(g, name);
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = OM_FLOAT;
	v->type.rank = 4;
	v->type.dims = om_arena_alloc(g->model->arena, 4 * sizeof(om_dim));
	for (int i = 0; i < 4; i++)
		v->type.dims[i] = (om_dim){dims[i], NULL};
	v->flags |= flag;
	*list = om_arena_alloc(g->model->arena, sizeof(om_value *));
	(*list)[0] = v;
	*count = 1;
	return v;
}

static om_model *build_model(void)
{
	om_model *m = om_model_new();
	om_graph *g = m->graph = om_graph_new(m, NULL);
	m->opsets = om_arena_alloc(m->arena, sizeof *m->opsets);
	m->opsets[0] = (om_opset){"", 13};
	m->nopsets = 1;
	m->ir_version = 8;
	m->producer_name = "bench_transpose";
	const int64_t in[4] = {D, D, D, D};
	om_value *x = typed_value(g, "x", in, OM_VALUE_GRAPH_INPUT, &g->inputs, &g->ninputs);
	om_value *y = typed_value(g, "y", in, OM_VALUE_GRAPH_OUTPUT, &g->outputs, &g->noutputs);
	om_node *n = om_graph_add_node(g, "Transpose", "", "transpose", 1, 1);
	n->in[0] = x;
	om_node_set_output(n, 0, y);
	om_attr *p = om_node_set_attr(n, "perm", OM_ATTR_INTS);
	p->ints = om_arena_alloc(m->arena, 4 * sizeof(int64_t));
	memcpy(p->ints, (int64_t[]){0, 2, 1, 3}, 4 * sizeof(int64_t));
	p->n = 4;
	return m;
}

static const char *shared_dir(int argc, char **argv)
{
	if (argc > 1)
		return argv[1];
	const char *e = getenv("OMOPT_SHARED");
	return e ? e : OM_SOURCE_DIR "/../shared";
}

/* runs ONNX Runtime; returns its median ms or a negative value */
static double ort_median(const char *shared, const char *dir, int runs)
{
	char cmd[4096], line[4096];
	snprintf(cmd, sizeof cmd,
		 "node '%s/oracle/ort_run.js' '%s/model.onnx' '%s/ort' x='%s/x.npy' --time %d",
		 shared, dir, dir, dir, runs);
	FILE *f = popen(cmd, "r");
	if (!f)
		return -1;
	double ms = -1;
	while (fgets(line, sizeof line, f)) {
		const char *k = strstr(line, "\"run_ms_median\":");
		if (k)
			ms = atof(k + strlen("\"run_ms_median\":"));
	}
	return pclose(f) == 0 ? ms : -1;
}

static int fail(const om_status *st)
{
	char buf[1024];
	om_status_format(st, buf, sizeof buf);
	fprintf(stderr, "bench_transpose: %s\n", buf);
	return 1;
}

int main(int argc, char **argv)
{
	const char *shared = shared_dir(argc, argv);
	const int runs = argc > 2 ? atoi(argv[2]) : 30;
	char dir[] = "/tmp/bench_transpose_XXXXXX", path[4200];
	if (!mkdtemp(dir) || runs < 1)
		return 1;
	om_status st = {0};
	om_model *m = build_model();
	snprintf(path, sizeof path, "%s/model.onnx", dir);
	if (om_model_save(m, path, NULL, &st))
		return fail(&st);
	om_tensor x;
	const int64_t dims[4] = {D, D, D, D};
	if (om_tensor_alloc(&x, OM_FLOAT, 4, dims, &st))
		return fail(&st);
	float *xd = x.data;
	for (int64_t i = 0; i < (int64_t)D * D * D * D; i++)
		xd[i] = (float)(i % 1000003) * 0.5f;
	snprintf(path, sizeof path, "%s/x.npy", dir);
	if (om_tensor_write_file(path, &x, "x", &st))
		return fail(&st);

	om_session *s;
	const om_session_options opt = {.exact = 1, .threads = 1};
	if (om_session_create(m, &opt, &s, &st))
		return fail(&st);
	double *t = calloc((size_t)runs, sizeof *t);
	om_tensor y = {0};
	for (int r = -1; r < runs; r++) { /* one warm-up run */
		om_tensor_free(&y);
		const double t0 = now_ms();
		if (om_session_run(s, &x, 1, &y, 1, &st))
			return fail(&st);
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	const double ours = t[runs / 2];
	/* the kernel alone, into a warm buffer (the session adds the result's allocation) */
	void *buf = malloc(y.nbytes);
	if (!buf)
		return 1;
	for (int r = -1; r < runs; r++) {
		const double t0 = now_ms();
		om_transpose(buf, x.data, 4, 4, dims, (const int32_t[]){0, 2, 1, 3});
		if (r >= 0)
			t[r] = now_ms() - t0;
	}
	qsort(t, (size_t)runs, sizeof *t, cmp_double);
	const double kernel = t[runs / 2];
	const int kernel_same = !memcmp(buf, y.data, y.nbytes);
	free(buf);

	const double ort = ort_median(shared, dir, runs);
	int same = -1;
	om_tensor yo;
	snprintf(path, sizeof path, "%s/ort/0.npy", dir);
	if (ort > 0 && !om_tensor_read_file(path, &yo, &st)) {
		same = yo.nbytes == y.nbytes && !memcmp(yo.data, y.data, y.nbytes);
		om_tensor_free(&yo);
	}
	printf("Transpose (64,64,64,64) float perm (0,2,1,3), %d runs, median\n", runs);
	printf("  omopt session        %8.3f ms\n", ours);
	printf("  omopt kernel only    %8.3f ms  (om_transpose into a warm buffer%s)\n", kernel,
	       kernel_same ? "" : ", DIFFERS");
	if (ort > 0) {
		printf("  ONNX Runtime (1 thr) %8.3f ms\n", ort);
		printf("  ratio omopt/ORT      %8.3f  (%s)\n", ours / ort,
		       same == 1 ? "outputs bit-identical" : "OUTPUTS DIFFER");
		printf("  ratio kernel/ORT     %8.3f\n", kernel / ort);
	} else {
		printf("  ONNX Runtime: not available (%s/oracle/ort_run.js)\n", shared);
	}
	om_tensor_free(&y);
	om_tensor_free(&x);
	free(t);
	om_session_free(s);
	om_model_free(m);
	snprintf(path, sizeof path, "rm -rf '%s'", dir);
	if (system(path) != 0)
		return 1;
	return (ort > 0 && same != 1) || !kernel_same;
}
