/* test_host_threads.c — a host program's thread settings survive omopt's runs: the host sets
 * OpenMP's count (3) and OpenBLAS's (3), then runs sessions of a model whose Conv, MatMul
 * (constant B: the packed product; a variable B: oneDNN's sgemm), Gemm and double MatMul
 * (OpenBLAS's dgemm, over its threading threshold) take the GEMM paths, at 1 and 2 threads, in
 * fast and exact mode, a run that fails inside the plan (memory limit), and a run from a second
 * pthread; afterwards omp_get_max_threads() and openblas_get_num_threads() are still 3 on the
 * calling thread (the second pthread's own OpenMP count, 5, is what it was too), and OpenBLAS's
 * pool still runs: blas_server_avail, OpenBLAS's flag that its workers are up, which
 * blas_thread_shutdown_ clears (checked when the library exports it, as Debian's pthread
 * build does). The fast outputs agree with the exact ones (the paths ran and computed). */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "testutil.h"

/* OpenBLAS's pthread build: nonzero while its worker threads are up */
extern int blas_server_avail __attribute__((weak));

enum { HOST_THREADS = 3, SECOND_THREADS = 5, NOUT = 5, A_ROWS = 256, C = 32, H = 40, M = 64 };

/* x (1, C, H, H) -> Conv 3x3 (M, W const) -> y0; a (256, 256): y1 = a B (B const), y2 = a a,
 * y3 = Gemm(a, G^T, c), y4 = double(a) double(B) */
static om_model *gemm_model(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	const int64_t n = A_ROWS;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", OM_FLOAT, 4, (int64_t[]){1, C, H, H}));
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "a", OM_FLOAT, 2, (int64_t[]){n, n}));
	tu_float_init(g, "W", 4, (int64_t[]){M, C, 3, 3}, 1, 0.06f);
	tu_float_init(g, "B", 2, (int64_t[]){n, n}, 2, 0.06f);
	tu_float_init(g, "G", 2, (int64_t[]){n, n}, 3, 0.06f);
	tu_float_init(g, "c", 1, (int64_t[]){n}, 4, 1.0f);
	om_node *conv = tu_graph_node(g, "Conv", "x,W", "y0");
	tu_attr_ints(conv, "kernel_shape", 2, (int64_t[]){3, 3});
	tu_attr_ints(conv, "pads", 4, (int64_t[]){1, 1, 1, 1});
	tu_graph_node(g, "MatMul", "a,B", "y1");
	tu_graph_node(g, "MatMul", "a,a", "y2");
	om_node_set_attr(tu_graph_node(g, "Gemm", "a,G,c", "y3"), "transB", OM_ATTR_INT)->i = 1;
	om_node_set_attr(tu_graph_node(g, "Cast", "a", "ad"), "to", OM_ATTR_INT)->i = OM_DOUBLE;
	om_node_set_attr(tu_graph_node(g, "Cast", "B", "Bd"), "to", OM_ATTR_INT)->i = OM_DOUBLE;
	tu_graph_node(g, "MatMul", "ad,Bd", "y4");
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y0", OM_FLOAT, 4, (int64_t[]){1, M, H, H}));
	for (int i = 1; i < NOUT; i++) {
		char name[4];
		snprintf(name, sizeof name, "y%d", i);
		tu_push_value(g, &g->outputs, &g->noutputs,
			      tu_typed_value(g, name, i == 4 ? OM_DOUBLE : OM_FLOAT, 2,
					     (int64_t[]){n, n}));
	}
	return m;
}

typedef struct inputs {
	float *x, *a;
	om_tensor t[2];
} inputs;

static void inputs_make(inputs *in)
{
	const int64_t nx = C * H * H, na = A_ROWS * A_ROWS;
	in->x = malloc(sizeof(float) * (size_t)nx);
	in->a = malloc(sizeof(float) * (size_t)na);
	assert_true(in->x && in->a);
	tu_fill(in->x, nx, 5, 1.0f);
	tu_fill(in->a, na, 6, 1.0f);
	in->t[0] = (om_tensor){.dtype = OM_FLOAT, .rank = 4, .dims = {1, C, H, H}, .data = in->x,
			       .nbytes = sizeof(float) * (size_t)nx};
	in->t[1] = (om_tensor){.dtype = OM_FLOAT, .rank = 2, .dims = {A_ROWS, A_ROWS},
			       .data = in->a, .nbytes = sizeof(float) * (size_t)na};
}

/* runs m once (twice: a step's first run makes its oneDNN state) at `threads`, exact or fast;
 * max_memory 0: the default; the run's status kind; outputs in out when it succeeds */
static om_kind run(const om_model *m, const inputs *in, int threads, int exact,
		   size_t max_memory, om_tensor *out)
{
	const om_session_options opt = {.exact = exact, .threads = threads,
					.max_memory = max_memory};
	om_session *s = NULL;
	om_status st = {0};
	assert_int_equal(om_session_create(m, &opt, &s, &st), OM_OK);
	om_kind rc = OM_OK;
	for (int r = 0; r < 2 && !rc; r++) {
		om_tensor o[NOUT];
		memset(o, 0, sizeof o);
		rc = om_session_run(s, in->t, 2, o, NOUT, &st);
		for (int i = 0; i < NOUT; i++) {
			if (!rc && r == 1 && out)
				out[i] = o[i];
			else
				om_tensor_free(&o[i]);
		}
	}
	om_session_free(s);
	return rc;
}

/* y (fast) within tolerance of r (exact), element by element */
static void agree(const om_tensor *y, const om_tensor *r)
{
	assert_int_equal(y->nbytes, r->nbytes);
	const int64_t n = om_tensor_numel(r);
	const bool dbl = r->dtype == OM_DOUBLE;
	for (int64_t i = 0; i < n; i++) {
		const double a = dbl ? ((double *)y->data)[i] : ((float *)y->data)[i];
		const double b = dbl ? ((double *)r->data)[i] : ((float *)r->data)[i];
		if (!(fabs(a - b) <= 1e-3 * (1 + fabs(b))))
			fail_msg("element %lld: %.9g against %.9g", (long long)i, a, b);
	}
}

/* the host's settings, as this test set them */
static void assert_host_settings(void)
{
#ifdef _OPENMP
	assert_int_equal(omp_get_max_threads(), HOST_THREADS);
#endif
	assert_int_equal(openblas_get_num_threads(), HOST_THREADS);
	if (&blas_server_avail)
		assert_int_not_equal(blas_server_avail, 0);
}

typedef struct second {
	const om_model *m;
	const inputs *in;
	int before, after; /* the pthread's OpenMP count around its run */
	om_kind rc;
} second;

static void *second_thread(void *arg)
{
	second *p = arg;
#ifdef _OPENMP
	omp_set_num_threads(SECOND_THREADS); /* this thread's own count (OpenMP keeps one each) */
	p->before = omp_get_max_threads();
#endif
	p->rc = run(p->m, p->in, 2, 0, 0, NULL);
#ifdef _OPENMP
	p->after = omp_get_max_threads();
#endif
	return NULL;
}

static void host_settings_survive_runs(void **state)
{
	(void)state;
#ifdef _OPENMP
	omp_set_num_threads(HOST_THREADS);
#endif
	openblas_set_num_threads(HOST_THREADS);
	if (&blas_server_avail) /* OpenBLAS's workers, up at 3 threads */
		assert_int_not_equal(blas_server_avail, 0);
	om_model *m = gemm_model();
	inputs in;
	inputs_make(&in);
	om_tensor ref[NOUT], y[NOUT];
	assert_int_equal(run(m, &in, 1, 1, 0, ref), OM_OK);
	assert_host_settings();
	for (int threads = 1; threads <= 2; threads++) {
		for (int exact = 0; exact < 2; exact++) {
			assert_int_equal(run(m, &in, threads, exact, 0, y), OM_OK);
			assert_host_settings();
			for (int i = 0; i < NOUT; i++) {
				agree(&y[i], &ref[i]);
				om_tensor_free(&y[i]);
			}
		}
		/* a run that fails inside the plan: the inputs fit, the Conv's output does not */
		assert_int_equal(run(m, &in, threads, 0, 300 * 1024, NULL), OM_ERR_INVALID_INPUT);
		assert_host_settings();
	}
	second p = {.m = m, .in = &in};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, second_thread, &p), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(p.rc, OM_OK);
#ifdef _OPENMP
	assert_int_equal(p.before, SECOND_THREADS);
#endif
	assert_int_equal(p.after, p.before);
	assert_host_settings();
	for (int i = 0; i < NOUT; i++)
		om_tensor_free(&ref[i]);
	free(in.x), free(in.a);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(host_settings_survive_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
