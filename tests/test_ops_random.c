/* test_ops_random.c — the random ops (RandomNormal, RandomUniform, their -Like forms,
 * Bernoulli, Multinomial, Dropout in training mode) and ai.onnx.preview.training's optimizers:
 * Philox4x32-10 against Random123's known answers; a seeded node gives the same bits at 1 and
 * 2 threads, in exact mode and outside a session; the draws have the mean and variance of
 * their law (fixed seeds, bounds of 4 standard errors or more); an unseeded node differs from
 * run to run and is safe from several threads; the folder and the planner never fold one; the
 * optimizers against hand computations from the spec's formulas. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodetest.h"
#include "pass.h"
#include "philox.h"

/* ---- Philox4x32-10 ---------------------------------------------------------------------- */

/* Random123's kat_vectors: philox4x32 10 rounds */
static void philox_known_answers(void **state)
{
	(void)state;
	uint32_t w[4];
	om_philox4x32((om_philox_key){{0, 0}}, 0, 0, w);
	assert_int_equal(w[0], 0x6627e8d5u);
	assert_int_equal(w[1], 0xe169c58du);
	assert_int_equal(w[2], 0xbc57ac4cu);
	assert_int_equal(w[3], 0x9b00dbd8u);
	om_philox4x32((om_philox_key){{0xffffffffu, 0xffffffffu}}, UINT64_MAX, UINT64_MAX, w);
	assert_int_equal(w[0], 0x408f276du);
	assert_int_equal(w[1], 0x41c83b0eu);
	assert_int_equal(w[2], 0xa20bc7c6u);
	assert_int_equal(w[3], 0x6d5451fdu);
	om_philox4x32((om_philox_key){{0xa4093822u, 0x299f31d0u}}, 0x85a308d3243f6a88u,
		      0x0370734413198a2eu, w);
	assert_int_equal(w[0], 0xd16cfe09u);
	assert_int_equal(w[1], 0x94fdccebu);
	assert_int_equal(w[2], 0x5001e420u);
	assert_int_equal(w[3], 0x24126ea1u);
}

/* ---- models ------------------------------------------------------------------------------ */

static om_value *graph_input(om_graph *g, const char *name, int32_t dtype, int32_t rank,
			     const int64_t *dims)
{
	om_value *v = tu_typed_value(g, name, dtype, rank, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

static om_value *initializer(om_graph *g, const char *name, int32_t dtype, int32_t rank,
			     const int64_t *dims, const void *data)
{
	om_tensor *t = om_model_tensor(g->model, dtype, rank, dims);
	assert_non_null(t);
	memcpy(t->data, data, t->nbytes);
	om_value *v = om_graph_value(g, name);
	om_type_from_tensor(g->model, &v->type, t);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

static void graph_output(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

enum { N = 1 << 16 };

/* RandomNormalLike(x) (x: float [N]) with mean 2, scale 3 and seed `seed` (none when < 0),
 * saved and loaded again */
static om_model *normal_like_model(double seed)
{
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	graph_input(g, "x", OM_FLOAT, 1, (int64_t[]){N});
	om_node *n = tu_graph_node(g, "RandomNormalLike", "x", "y");
	nt_float(n, "mean", 2.0f);
	nt_float(n, "scale", 3.0f);
	if (seed >= 0)
		nt_float(n, "seed", (float)seed);
	graph_output(g, "y");
	om_model *r = tu_reload(m);
	om_model_free(m);
	return r;
}

/* one run of s on x (float [N], zeros); out must be freed */
static void run_once(om_session *s, om_tensor *out, int nout)
{
	static const float zeros[N];
	om_tensor in = nt_tensor(OM_FLOAT, 1, (int64_t[]){N}, zeros);
	om_status st = {0};
	memset(out, 0, sizeof *out * (size_t)nout);
	om_kind rc = om_session_run(s, &in, 1, out, nout, &st);
	if (rc)
		print_error("%s\n", st.msg);
	assert_int_equal(rc, OM_OK);
}

static om_session *session(const om_model *m, int exact, int threads)
{
	om_session_options o = {.exact = exact, .threads = threads};
	om_session *s = NULL;
	om_status st = {0};
	om_kind rc = om_session_create(m, &o, &s, &st);
	if (rc)
		print_error("%s\n", st.msg);
	assert_int_equal(rc, OM_OK);
	return s;
}

static void mean_var(const om_tensor *t, double *mean, double *var)
{
	const float *v = t->data;
	const int64_t n = om_tensor_numel(t);
	double s = 0, q = 0;
	for (int64_t i = 0; i < n; i++)
		s += v[i];
	*mean = s / (double)n;
	for (int64_t i = 0; i < n; i++)
		q += (v[i] - *mean) * (v[i] - *mean);
	*var = q / (double)(n - 1);
}

/* a seeded RandomNormalLike: the same bits at 1 and 2 threads, in exact mode, in every run and
 * outside a session; mean 2 and variance 9 */
static void seeded_normal_is_deterministic(void **state)
{
	(void)state;
	om_model *m = normal_like_model(7);
	om_tensor ref, out;
	om_session *s1 = session(m, 0, 1), *s2 = session(m, 0, 2), *se = session(m, 1, 1);
	run_once(s1, &ref, 1);
	assert_int_equal(ref.dtype, OM_FLOAT);
	assert_int_equal(ref.dims[0], N);
	om_session *each[] = {s1, s2, se};
	for (int k = 0; k < 3; k++) {
		run_once(each[k], &out, 1);
		assert_memory_equal(out.data, ref.data, ref.nbytes);
		om_tensor_free(&out);
	}
	/* outside a session (om_eval_node) */
	static const float zeros[N];
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){N}, zeros);
	const om_tensor *in[] = {&x};
	om_status st = {0};
	assert_int_equal(om_eval_node(m->graph->nodes[0], 15, in, &out, &st), OM_OK);
	assert_memory_equal(out.data, ref.data, ref.nbytes);
	om_tensor_free(&out);
	/* N(2, 9): the mean's standard error is 3 / 256 = 0.012, the variance's 9 * sqrt(2 / N)
	 * = 0.05 */
	double mean, var;
	mean_var(&ref, &mean, &var);
	assert_true(fabs(mean - 2) < 0.06);
	assert_true(fabs(var - 9) < 0.25);
	/* a standard normal's tails: |z| > 3 in 0.27% of the draws (177 of 65536) */
	int64_t tails = 0;
	for (int64_t i = 0; i < N; i++)
		tails += fabs(((const float *)ref.data)[i] - 2) > 9;
	assert_true(tails > 110 && tails < 250);
	om_tensor_free(&ref);
	/* another seed, other bits */
	om_model *m2 = normal_like_model(8);
	om_session *s3 = session(m2, 0, 1);
	run_once(s3, &out, 1);
	run_once(s1, &ref, 1);
	assert_true(memcmp(out.data, ref.data, ref.nbytes) != 0);
	om_tensor_free(&out);
	om_tensor_free(&ref);
	om_session_free(s1);
	om_session_free(s2);
	om_session_free(se);
	om_session_free(s3);
	om_model_free(m);
	om_model_free(m2);
}

/* without a seed: two runs differ, and so do two sessions; the law is the same */
static void unseeded_normal_differs_per_run(void **state)
{
	(void)state;
	om_model *m = normal_like_model(-1);
	om_session *s = session(m, 0, 1), *t = session(m, 0, 1);
	om_tensor a, b, c;
	run_once(s, &a, 1);
	run_once(s, &b, 1);
	run_once(t, &c, 1);
	assert_true(memcmp(a.data, b.data, a.nbytes) != 0);
	assert_true(memcmp(a.data, c.data, a.nbytes) != 0);
	double mean, var;
	mean_var(&b, &mean, &var);
	assert_true(fabs(mean - 2) < 0.06);
	assert_true(fabs(var - 9) < 0.25);
	om_tensor_free(&a);
	om_tensor_free(&b);
	om_tensor_free(&c);
	om_session_free(s);
	om_session_free(t);
	om_model_free(m);
}

/* RandomUniformLike over [1, 1 + 2^-23): a float range one spacing wide, so about half the
 * double draws round up to high when stored; every stored value is still below high */
static void uniform_stays_below_high(void **state)
{
	(void)state;
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	graph_input(g, "x", OM_FLOAT, 1, (int64_t[]){N});
	om_node *n = tu_graph_node(g, "RandomUniformLike", "x", "y");
	const float high = 1.0f + 0x1p-23f;
	nt_float(n, "low", 1.0f);
	nt_float(n, "high", high);
	nt_float(n, "seed", 5.0f);
	graph_output(g, "y");
	om_session *s = session(m, 0, 1);
	om_tensor out;
	run_once(s, &out, 1);
	const float *v = out.data;
	int64_t bad = 0;
	for (int64_t i = 0; i < N; i++)
		bad += !(v[i] >= 1.0f && v[i] < high);
	assert_int_equal(bad, 0);
	om_tensor_free(&out);
	om_session_free(s);
	om_model_free(m);
}

typedef struct runs {
	om_session *s;
	int bad;
} runs;

static void *run_many(void *arg)
{
	runs *r = arg;
	static const float zeros[N / 16];
	for (int k = 0; k < 100; k++) {
		om_tensor in = nt_tensor(OM_FLOAT, 1, (int64_t[]){N / 16}, zeros), out = {0};
		om_status st = {0};
		if (om_session_run(r->s, &in, 1, &out, 1, &st)) {
			r->bad++;
			continue;
		}
		for (int64_t i = 0; i < om_tensor_numel(&out); i++) {
			const float v = ((const float *)out.data)[i];
			r->bad += !(v >= -1.0f && v < 3.0f);
		}
		om_tensor_free(&out);
	}
	return NULL;
}

/* one session with an unseeded RandomUniformLike run from 4 threads at once: each runner
 * draws its own stream; every value in [low, high) */
static void unseeded_from_threads(void **state)
{
	(void)state;
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	graph_input(g, "x", OM_FLOAT, 1, (int64_t[]){-1});
	om_node *n = tu_graph_node(g, "RandomUniformLike", "x", "y");
	nt_float(n, "low", -1.0f);
	nt_float(n, "high", 3.0f);
	graph_output(g, "y");
	om_session *s = session(m, 0, 1);
	pthread_t th[4];
	runs r[4];
	for (int i = 0; i < 4; i++) {
		r[i] = (runs){s, 0};
		assert_int_equal(pthread_create(&th[i], NULL, run_many, &r[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		assert_int_equal(r[i].bad, 0);
	}
	om_session_free(s);
	om_model_free(m);
}

/* ---- one-node kernels -------------------------------------------------------------------- */

/* RandomUniform: U(-1, 3) has mean 1 and variance 16/12; every value in [-1, 3); dtype double
 * and float16 too */
static void uniform_law(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "RandomUniform", 0, 1);
	nt_ints(n, "shape", (int64_t[]){256, 256}, 2);
	nt_float(n, "low", -1.0f);
	nt_float(n, "high", 3.0f);
	nt_float(n, "seed", 1.0f);
	om_tensor y;
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 22, NULL, &y, &st), OM_OK);
	nt_assert_shape(&y, 2, (int64_t[]){256, 256});
	double mean, var;
	mean_var(&y, &mean, &var);
	for (int64_t i = 0; i < N; i++)
		assert_true(((const float *)y.data)[i] >= -1.0f && ((const float *)y.data)[i] < 3.0f);
	assert_true(fabs(mean - 1) < 0.02);         /* standard error 0.0045 */
	assert_true(fabs(var - 16.0 / 12) < 0.03); /* standard error 0.006 */
	om_tensor_free(&y);
	const int32_t types[] = {OM_DOUBLE, OM_FLOAT16, OM_BFLOAT16};
	for (int k = 0; k < 3; k++) {
		nt_int(n, "dtype", types[k]);
		assert_int_equal(om_eval_node(n, 22, NULL, &y, &st), OM_OK);
		assert_int_equal(y.dtype, types[k]);
		om_tensor_free(&y);
	}
	nt_int(n, "dtype", OM_INT32); /* not a float type */
	assert_int_equal(om_eval_node(n, 22, NULL, &y, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

/* Bernoulli: 0 where p = 0, 1 where p = 1, a fraction p of ones elsewhere; int32 and bool */
static void bernoulli_law(void **state)
{
	(void)state;
	static double p[N];
	for (int64_t i = 0; i < N; i++)
		p[i] = i % 4 == 0 ? 0.0 : i % 4 == 1 ? 1.0 : 0.3;
	const int32_t types[] = {OM_INT32, OM_BOOL, OM_FLOAT};
	for (int k = 0; k < 3; k++) {
		om_model *m;
		om_node *n = nt_node(&m, "Bernoulli", 1, 1);
		nt_float(n, "seed", 3.0f);
		nt_int(n, "dtype", types[k]);
		om_tensor x = nt_tensor(OM_DOUBLE, 1, (int64_t[]){N}, p), y;
		const om_tensor *in[] = {&x};
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 15, in, &y, &st), OM_OK);
		assert_int_equal(y.dtype, types[k]);
		int64_t ones = 0;
		for (int64_t i = 0; i < N; i++) {
			double v = types[k] == OM_INT32 ? ((const int32_t *)y.data)[i]
				   : types[k] == OM_BOOL ? ((const uint8_t *)y.data)[i]
							 : ((const float *)y.data)[i];
			assert_true(v == 0 || v == 1);
			if (i % 4 == 0)
				assert_true(v == 0);
			else if (i % 4 == 1)
				assert_true(v == 1);
			else
				ones += v == 1;
		}
		/* N / 2 draws of p = 0.3: standard error 0.0028 */
		assert_true(fabs((double)ones / (N / 2) - 0.3) < 0.015);
		om_tensor_free(&y);
		nt_free(m);
	}
}

/* Multinomial: classes drawn with the softmax of the row's values */
static void multinomial_law(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = nt_node(&m, "Multinomial", 1, 1);
	nt_int(n, "sample_size", 30000);
	nt_float(n, "seed", 5.0f);
	nt_int(n, "dtype", OM_INT64);
	const float x[] = {logf(0.2f), logf(0.5f), logf(0.3f), 0.0f, -INFINITY, 0.0f};
	om_tensor t = nt_tensor(OM_FLOAT, 2, (int64_t[]){2, 3}, x), y;
	const om_tensor *in[] = {&t};
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 7, in, &y, &st), OM_OK);
	nt_assert_shape(&y, 2, (int64_t[]){2, 30000});
	const double want[2][3] = {{0.2, 0.5, 0.3}, {0.5, 0, 0.5}};
	for (int b = 0; b < 2; b++) {
		int64_t count[3] = {0};
		for (int64_t i = 0; i < 30000; i++) {
			const int64_t k = ((const int64_t *)y.data)[b * 30000 + i];
			assert_true(k >= 0 && k < 3);
			count[k]++;
		}
		for (int k = 0; k < 3; k++) /* standard error <= 0.003 */
			assert_true(fabs((double)count[k] / 30000 - want[b][k]) < 0.015);
	}
	om_tensor_free(&y);
	nt_free(m);
}

/* Dropout-13 in training mode: y = x * mask / (1 - ratio), a fraction 1 - ratio kept; in
 * inference mode y = x and the mask all true; a ratio of 1 is refused */
static void dropout_training(void **state)
{
	(void)state;
	static float xs[N];
	for (int64_t i = 0; i < N; i++)
		xs[i] = (float)(i % 17) - 8.0f;
	om_model *m;
	om_node *n = nt_node(&m, "Dropout", 3, 2);
	nt_int(n, "seed", 11);
	const float r = 0.25f;
	const uint8_t on = 1, off = 0;
	om_tensor x = nt_tensor(OM_FLOAT, 1, (int64_t[]){N}, xs);
	om_tensor ratio = nt_tensor(OM_FLOAT, 0, NULL, &r);
	om_tensor t_on = nt_tensor(OM_BOOL, 0, NULL, &on), t_off = nt_tensor(OM_BOOL, 0, NULL, &off);
	const om_tensor *in[] = {&x, &ratio, &t_on};
	om_tensor y[2];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 13, in, y, &st), OM_OK);
	assert_int_equal(y[1].dtype, OM_BOOL);
	int64_t kept = 0;
	for (int64_t i = 0; i < N; i++) {
		const bool k = ((const uint8_t *)y[1].data)[i];
		kept += k;
		assert_true(((const float *)y[0].data)[i] == (k ? xs[i] / 0.75f : 0.0f));
	}
	assert_true(fabs((double)kept / N - 0.75) < 0.01); /* standard error 0.0017 */
	om_tensor y2[2];
	assert_int_equal(om_eval_node(n, 13, in, y2, &st), OM_OK); /* seeded: the same */
	assert_memory_equal(y2[0].data, y[0].data, y[0].nbytes);
	for (int i = 0; i < 2; i++) {
		om_tensor_free(&y[i]);
		om_tensor_free(&y2[i]);
	}
	in[2] = &t_off;
	assert_int_equal(om_eval_node(n, 13, in, y, &st), OM_OK);
	assert_memory_equal(y[0].data, xs, sizeof xs);
	for (int64_t i = 0; i < N; i++)
		assert_int_equal(((const uint8_t *)y[1].data)[i], 1);
	om_tensor_free(&y[0]);
	om_tensor_free(&y[1]);
	const float one = 1.0f;
	om_tensor r1 = nt_tensor(OM_FLOAT, 0, NULL, &one);
	in[1] = &r1;
	in[2] = &t_on;
	assert_int_equal(om_eval_node(n, 13, in, y, &st), OM_ERR_INVALID_INPUT);
	nt_free(m);
}

/* ---- never folded, never evaluated at plan time ------------------------------------------ */

/* RandomUniform (no input) and a training Dropout of a constant: om_simplify keeps both
 * nodes, and two runs of a session give different values (nothing was computed once at plan
 * time) */
static void never_folded(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	static float c[4096];
	for (int i = 0; i < 4096; i++)
		c[i] = 1.0f;
	const uint8_t on = 1;
	const float r = 0.5f;
	initializer(g, "c", OM_FLOAT, 1, (int64_t[]){4096}, c);
	initializer(g, "r", OM_FLOAT, 0, NULL, &r);
	initializer(g, "t", OM_BOOL, 0, NULL, &on);
	om_node *u = tu_graph_node(g, "RandomUniform", "", "u");
	tu_attr_ints(u, "shape", 1, (int64_t[]){4096});
	tu_graph_node(g, "Dropout", "c,r,t", "d");
	tu_graph_node(g, "Add", "u,d", "y");
	graph_output(g, "y");
	om_simplify_options o = {.verify = 1};
	om_status st = {0};
	assert_int_equal(om_simplify(m, &o, &st), OM_OK);
	assert_int_equal(tu_count_op(g, "RandomUniform"), 1);
	assert_int_equal(tu_count_op(g, "Dropout"), 1);
	om_session *s = session(m, 0, 1), *e = session(m, 1, 1);
	om_session *each[] = {s, e};
	for (int k = 0; k < 2; k++) {
		om_tensor a = {0}, b = {0};
		assert_int_equal(om_session_run(each[k], NULL, 0, &a, 1, &st), OM_OK);
		assert_int_equal(om_session_run(each[k], NULL, 0, &b, 1, &st), OM_OK);
		assert_true(memcmp(a.data, b.data, a.nbytes) != 0);
		om_tensor_free(&a);
		om_tensor_free(&b);
	}
	om_session_free(s);
	om_session_free(e);
	om_model_free(m);
}

/* ---- ai.onnx.preview.training ------------------------------------------------------------ */

static om_node *training_node(om_model **m, const char *op, int32_t nin, int32_t nout)
{
	om_node *n = nt_node(m, op, nin, nout);
	n->domain = "ai.onnx.preview.training";
	return n;
}

/* Momentum, standard and Nesterov, by hand: x = 1, g = 0.5, v = 2, r = 0.1, alpha 0.9,
 * beta 0.5, norm 0.1: g' = 0.6; t = 0: v' = 1.8 + 0.6 = 2.4 (beta taken as 1),
 * x' = 1 - 0.24 = 0.76; Nesterov x' = 1 - 0.1 * (0.6 + 0.9 * 2.4) = 0.724; t = 3:
 * v' = 1.8 + 0.3 = 2.1, x' = 0.79 */
static void momentum_by_hand(void **state)
{
	(void)state;
	const double r = 0.1, x = 1, g = 0.5, v = 2;
	const int64_t t0 = 0, t3 = 3;
	const struct { const char *mode; const int64_t *t; double x, v; } c[] = {
		{"standard", &t0, 0.76, 2.4}, {"nesterov", &t0, 0.724, 2.4},
		{"standard", &t3, 0.79, 2.1}};
	for (int k = 0; k < 3; k++) {
		om_model *m;
		om_node *n = training_node(&m, "Momentum", 5, 2);
		nt_float(n, "alpha", 0.9f);
		nt_float(n, "beta", 0.5f);
		nt_float(n, "norm_coefficient", 0.1f);
		nt_str(n, "mode", c[k].mode);
		om_tensor tr = nt_tensor(OM_DOUBLE, 0, NULL, &r), tt = nt_tensor(OM_INT64, 0, NULL, c[k].t);
		om_tensor tx = nt_tensor(OM_DOUBLE, 1, (int64_t[]){1}, &x);
		om_tensor tg = nt_tensor(OM_DOUBLE, 1, (int64_t[]){1}, &g);
		om_tensor tv = nt_tensor(OM_DOUBLE, 1, (int64_t[]){1}, &v);
		const om_tensor *in[] = {&tr, &tt, &tx, &tg, &tv};
		om_tensor y[2];
		om_status st = {0};
		assert_int_equal(om_eval_node(n, 1, in, y, &st), OM_OK);
		/* the float attributes are float32: 0.9f, 0.1f differ from 0.9, 0.1 by ~1e-8 */
		assert_true(fabs(((const double *)y[0].data)[0] - c[k].x) < 1e-6);
		assert_true(fabs(((const double *)y[1].data)[0] - c[k].v) < 1e-6);
		om_tensor_free(&y[0]);
		om_tensor_free(&y[1]);
		nt_free(m);
	}
}

/* Adagrad by hand: x = 1, g = 3, h = 7, r = 0.5, t = 1, decay 1, norm 0, epsilon 0:
 * r' = 0.25, h' = 16, x' = 1 - 0.25 * 3 / 4 = 0.8125; the groups' shapes must agree */
static void adagrad_by_hand(void **state)
{
	(void)state;
	om_model *m;
	om_node *n = training_node(&m, "Adagrad", 5, 2);
	nt_float(n, "decay_factor", 1.0f);
	nt_float(n, "epsilon", 0.0f);
	const float r = 0.5f, x[2] = {1, 1}, g[2] = {3, 3}, h[2] = {7, 7};
	const int64_t t = 1;
	om_tensor tr = nt_tensor(OM_FLOAT, 0, NULL, &r), tt = nt_tensor(OM_INT64, 0, NULL, &t);
	om_tensor tx = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, x);
	om_tensor tg = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, g);
	om_tensor th = nt_tensor(OM_FLOAT, 1, (int64_t[]){2}, h);
	const om_tensor *in[] = {&tr, &tt, &tx, &tg, &th};
	om_tensor y[2];
	om_status st = {0};
	assert_int_equal(om_eval_node(n, 1, in, y, &st), OM_OK);
	assert_true(((const float *)y[0].data)[1] == 0.8125f);
	assert_true(((const float *)y[1].data)[1] == 16.0f);
	om_tensor_free(&y[0]);
	om_tensor_free(&y[1]);
	om_tensor th1 = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, h);
	in[4] = &th1;
	assert_int_equal(om_eval_node(n, 1, in, y, &st), OM_ERR_INVALID_MODEL);
	nt_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(philox_known_answers),
		cmocka_unit_test(seeded_normal_is_deterministic),
		cmocka_unit_test(unseeded_normal_differs_per_run),
		cmocka_unit_test(unseeded_from_threads),
		cmocka_unit_test(uniform_law),
		cmocka_unit_test(uniform_stays_below_high),
		cmocka_unit_test(bernoulli_law),
		cmocka_unit_test(multinomial_law),
		cmocka_unit_test(dropout_training),
		cmocka_unit_test(never_folded),
		cmocka_unit_test(momentum_by_hand),
		cmocka_unit_test(adagrad_by_hand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
