/* test_plan_half.c — fast mode plans float16/bfloat16 compute in float32 (runtime/plan_half.c):
 * an element-wise chain rounds once, at the graph output (checked bit for bit against that
 * computed here, and against exact mode, which rounds after every node); a CNN block (Conv,
 * Relu, MaxPool, 1x1 Conv, residual Add, GlobalAveragePool, Flatten, a Cast to float32 at
 * the end, a Cast to float16 the model uses to clamp) against exact mode on random inputs,
 * float16 and bfloat16, a fixed and a symbolic batch run at 0, 1 and 3 images, 1 and 2
 * threads: within the half type's rounding, the clamping Cast's infinities where exact mode
 * has them, graph inputs and outputs of their declared types, the Relu absorbed (the float
 * planner ran) and Cast steps at the region's edges; exact mode and keep_half (om_check's
 * sessions) plan as before. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "session.h"
#include "testutil.h"

static uint16_t to_half(int32_t dt, float v)
{
	return dt == OM_FLOAT16 ? om_float_to_half(v) : om_float_to_bf16(v);
}

static float from_half(int32_t dt, uint16_t h)
{
	return dt == OM_FLOAT16 ? om_half_to_float(h) : om_bf16_to_float(h);
}

/* a half initializer filled by tu_fill(seed, scale), rounded */
static om_value *half_init(om_graph *g, int32_t dt, const char *name, int32_t rank,
			   const int64_t *dims, uint32_t seed, float scale)
{
	om_value *v = om_graph_value(g, name);
	v->init = om_model_tensor(g->model, dt, rank, dims);
	const int64_t n = om_tensor_numel(v->init);
	float *f = malloc(sizeof *f * (size_t)(n ? n : 1));
	assert_non_null(f);
	tu_fill(f, n, seed, scale);
	for (int64_t i = 0; i < n; i++)
		((uint16_t *)v->init->data)[i] = to_half(dt, f[i]);
	free(f);
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, v->init);
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

static om_node *node(om_graph *g, const char *op, const char *ins, const char *out)
{
	om_node *n = tu_graph_node(g, op, ins, out);
	n->name = out;
	return n;
}

/* the steps of s's main graph that are not nodes of its graph (the widening's Casts) */
static int extra_steps(const om_session *s, const om_graph *g)
{
	int n = 0;
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node *nd = om_session_node_info(s, i).node;
		bool found = false;
		for (int32_t k = 0; k < g->nnodes && !found; k++)
			found = g->nodes[k] == nd;
		n += !found;
		if (getenv("HALF_DEBUG"))
			fprintf(stderr, "%d %s %s in %s out %s\n", i, nd->op, found ? "" : "(extra)",
				nd->nin ? nd->in[0]->name : "", om_session_node_info(s, i).out0->name);
	}
	return n;
}

/* exact 2: fast mode with keep_half */
static om_session *session(const om_model *m, int exact, int threads)
{
	om_status st = {0};
	om_session *s = NULL;
	const om_session_options o = {.exact = exact == 1, .threads = threads,
				      .keep_half = exact == 2};
	if (om_session_create(m, &o, &s, &st))
		fail_msg("session: %s", st.msg);
	return s;
}

/* ---- an element-wise chain: y = (x + c) * x ----------------------------------------------- */

static void chain_rounds_once(int32_t dt)
{
	const int64_t n = 257, dims[1] = {n};
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs, tu_typed_value(g, "x", dt, 1, dims));
	half_init(g, dt, "c", 1, dims, 11, 3.0f);
	node(g, "Add", "x,c", "a");
	node(g, "Mul", "a,x", "y");
	tu_push_value(g, &g->outputs, &g->noutputs, tu_typed_value(g, "y", dt, 1, dims));
	om_session *fast = session(m, 0, 1), *exact = session(m, 1, 1), *kept = session(m, 2, 1);
	assert_int_equal(extra_steps(fast, g), 2); /* x's float form, y's half form */
	assert_int_equal(extra_steps(exact, g), 0);
	assert_int_equal(extra_steps(kept, g), 0);
	float xf[257];
	uint16_t xh[257];
	tu_fill(xf, n, 12, 5.0f);
	for (int64_t i = 0; i < n; i++)
		xh[i] = to_half(dt, xf[i]);
	om_tensor in = {.dtype = dt, .rank = 1, .dims = {n}, .data = xh, .nbytes = sizeof xh};
	om_tensor yf = {0}, ye = {0}, yk = {0};
	om_status st = {0};
	assert_int_equal(om_session_run(fast, &in, 1, &yf, 1, &st), OM_OK);
	assert_int_equal(om_session_run(exact, &in, 1, &ye, 1, &st), OM_OK);
	assert_int_equal(om_session_run(kept, &in, 1, &yk, 1, &st), OM_OK);
	assert_memory_equal(yk.data, ye.data, sizeof xh); /* keep_half: a rounding per node */
	assert_int_equal(yf.dtype, dt);
	const uint16_t *c = g->inits[0]->init->data, *a = yf.data, *b = ye.data;
	int differ = 0;
	for (int64_t i = 0; i < n; i++) {
		const float x = from_half(dt, xh[i]), cv = from_half(dt, c[i]);
		const float once = (x + cv) * x;
		const float twice = from_half(dt, to_half(dt, x + cv)) * x;
		assert_int_equal(a[i], to_half(dt, once));
		assert_int_equal(b[i], to_half(dt, twice));
		differ += a[i] != b[i];
	}
	assert_true(differ > 0); /* the widening is observable: one rounding fewer */
	om_tensor_free(&yf);
	om_tensor_free(&ye);
	om_tensor_free(&yk);
	om_session_free(fast);
	om_session_free(exact);
	om_session_free(kept);
	om_model_free(m);
}

static void chain_f16(void **state)
{
	(void)state;
	chain_rounds_once(OM_FLOAT16);
}

static void chain_bf16(void **state)
{
	(void)state;
	chain_rounds_once(OM_BFLOAT16);
}

/* ---- a CNN block ------------------------------------------------------------------------- */

enum { C = 5, K = 6, H = 9, H2 = 5 };

static om_node *conv(om_graph *g, const char *ins, const char *out, int64_t k)
{
	om_node *n = node(g, "Conv", ins, out);
	tu_attr_ints(n, "kernel_shape", 2, (int64_t[]){k, k});
	tu_attr_ints(n, "pads", 4, (int64_t[]){k / 2, k / 2, k / 2, k / 2});
	return n;
}

/* x (N, C, H, H) -> r = Relu(Conv3x3(x) + B) -> p = MaxPool3x3/2(r) -> a = Conv1x1(p) + p
 * (output y1, half) -> y2 = Cast(Flatten(GlobalAveragePool(a)), float32) (output);
 * z = Cast(r * 30000, to float16) (inf where over its range) -> y3 = z / 30000 (output) */
static om_model *block(int32_t dt, int64_t N)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	tu_push_value(g, &g->inputs, &g->ninputs,
		      tu_typed_value(g, "x", dt, 4, (int64_t[]){N, C, H, H}));
	half_init(g, dt, "W", 4, (int64_t[]){K, C, 3, 3}, 1, 0.3f);
	half_init(g, dt, "B", 1, (int64_t[]){K}, 2, 0.2f);
	half_init(g, dt, "W2", 4, (int64_t[]){K, K, 1, 1}, 3, 0.5f);
	half_init(g, dt, "big", 0, NULL, 4, 1.0f);
	half_init(g, OM_FLOAT16, "big16", 0, NULL, 5, 1.0f);
	((uint16_t *)g->inits[3]->init->data)[0] = to_half(dt, 30000.0f);
	((uint16_t *)g->inits[4]->init->data)[0] = om_float_to_half(30000.0f);
	conv(g, "x,W,B", "c", 3);
	node(g, "Relu", "c", "r");
	om_node *mp = node(g, "MaxPool", "r", "p");
	tu_attr_ints(mp, "kernel_shape", 2, (int64_t[]){3, 3});
	tu_attr_ints(mp, "strides", 2, (int64_t[]){2, 2});
	tu_attr_ints(mp, "pads", 4, (int64_t[]){1, 1, 1, 1});
	conv(g, "p,W2", "q", 1);
	node(g, "Add", "q,p", "y1");
	node(g, "GlobalAveragePool", "y1", "gp");
	node(g, "Flatten", "gp", "f");
	om_node_set_attr(node(g, "Cast", "f", "y2"), "to", OM_ATTR_INT)->i = OM_FLOAT;
	node(g, "Mul", "r,big", "rb");
	om_node_set_attr(node(g, "Cast", "rb", "z"), "to", OM_ATTR_INT)->i = OM_FLOAT16;
	node(g, "Div", "z,big16", "y3");
	const int64_t n = N;
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y1", dt, 4, (int64_t[]){n, K, H2, H2}));
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y2", OM_FLOAT, 2, (int64_t[]){n, K}));
	tu_push_value(g, &g->outputs, &g->noutputs,
		      tu_typed_value(g, "y3", OM_FLOAT16, 4, (int64_t[]){n, K, H, H}));
	return m;
}

static double value_at(const om_tensor *t, int64_t i)
{
	return t->dtype == OM_FLOAT ? ((const float *)t->data)[i]
				    : from_half(t->dtype, ((const uint16_t *)t->data)[i]);
}

/* fast against exact on one input of n images */
static void block_agrees(om_session *fast, om_session *exact, int32_t dt, int64_t n,
			 uint32_t seed)
{
	const int64_t count = n * C * H * H;
	float *xf = malloc(sizeof *xf * (size_t)(count ? count : 1));
	uint16_t *xh = malloc(sizeof *xh * (size_t)(count ? count : 1));
	assert_true(xf && xh);
	tu_fill(xf, count, seed, 2.0f);
	for (int64_t i = 0; i < count; i++)
		xh[i] = to_half(dt, xf[i]);
	om_tensor in = {.dtype = dt, .rank = 4, .dims = {n, C, H, H}, .data = xh,
			.nbytes = sizeof *xh * (size_t)count};
	om_tensor a[3] = {0}, b[3] = {0};
	om_status st = {0};
	if (om_session_run(fast, &in, 1, a, 3, &st) || om_session_run(exact, &in, 1, b, 3, &st))
		fail_msg("run: %s", st.msg);
	const int32_t types[3] = {dt, OM_FLOAT, OM_FLOAT16};
	int infs = 0;
	for (int o = 0; o < 3; o++) {
		assert_int_equal(a[o].dtype, types[o]);
		assert_int_equal(b[o].dtype, types[o]);
		assert_int_equal(om_tensor_numel(&a[o]), om_tensor_numel(&b[o]));
		assert_int_equal(a[o].dims[0], n);
		double top = 0;
		for (int64_t i = 0; i < om_tensor_numel(&b[o]); i++)
			if (isfinite(value_at(&b[o], i)))
				top = fmax(top, fabs(value_at(&b[o], i)));
		/* bfloat16 keeps 8 bits: a few roundings of a sum of 45 products */
		const double tol = (dt == OM_FLOAT16 ? 4e-3 : 3e-2) * (top > 1 ? top : 1);
		for (int64_t i = 0; i < om_tensor_numel(&b[o]); i++) {
			const double x = value_at(&a[o], i), y = value_at(&b[o], i);
			if (isinf(y)) { /* the Cast to float16 kept: its clamp too */
				assert_true(isinf(x) && (x > 0) == (y > 0));
				infs++;
				continue;
			}
			if (fabs(x - y) > tol)
				fail_msg("output %d [%lld]: fast %g, exact %g", o, (long long)i, x, y);
		}
		om_tensor_free(&a[o]);
		om_tensor_free(&b[o]);
	}
	if (n > 0)
		assert_true(infs > 0); /* the clamp is exercised */
	free(xf);
	free(xh);
}

static void block_case(int32_t dt, int64_t N)
{
	om_model *m = block(dt, N);
	for (int threads = 1; threads <= 2; threads++) {
		om_session *fast = session(m, 0, threads), *exact = session(m, 1, threads);
		assert_int_equal(extra_steps(exact, m->graph), 0);
		assert_int_equal(tu_absorbed(exact), 0);
		/* x's float form, y1's, y3's half forms, z's float form (the Cast to float16
		 * reads rb's float form); Relu absorbed into the Conv */
		assert_int_equal(extra_steps(fast, m->graph), dt == OM_FLOAT16 ? 4 : 5);
		assert_true(tu_absorbed(fast) >= 1);
		const int64_t batches[3] = {0, 1, 3};
		for (int b = 0; b < 3; b++)
			if (N < 0 || batches[b] == N)
				block_agrees(fast, exact, dt, batches[b], 100 + (uint32_t)b);
		om_session_free(fast);
		om_session_free(exact);
	}
	om_model_free(m);
}

static void block_f16(void **state)
{
	(void)state;
	block_case(OM_FLOAT16, 1);
	block_case(OM_FLOAT16, 3);
	block_case(OM_FLOAT16, -1);
}

static void block_bf16(void **state)
{
	(void)state;
	block_case(OM_BFLOAT16, 1);
	block_case(OM_BFLOAT16, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(chain_f16),
		cmocka_unit_test(chain_bf16),
		cmocka_unit_test(block_f16),
		cmocka_unit_test(block_bf16),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
