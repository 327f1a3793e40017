/* test_conv_fused.c — com.microsoft FusedConv against Conv -> Add(Z) -> activation run node by
 * node: bit-identical in exact mode (the epilogue adds bias, then Z, then applies the
 * activation in the same order and arithmetic as the separate kernels), within float rounding
 * of the GEMM in fast mode; every activation, with and without B and Z, on each Conv path
 * (im2col, 1x1, depthwise, 3x3 stride 1); attribute errors. */
#include <stdlib.h>

#include "nodetest.h"

typedef struct act_case {
	const char *name; /* NULL: no activation attribute */
	int nparams;
	float params[2];
} act_case;

static const act_case acts[] = {
	{NULL, 0, {0}},           {"Relu", 0, {0}},     {"Tanh", 0, {0}},
	{"Sigmoid", 0, {0}},      {"LeakyRelu", 1, {0.1f}}, {"Clip", 2, {-0.5f, 0.75f}},
	{"HardSigmoid", 2, {0.2f, 0.5f}},
};

typedef struct shape_case {
	int64_t x[4], w[4];
	int64_t group, stride, pad;
} shape_case;

static const shape_case shapes[] = {
	{{2, 3, 9, 7}, {5, 3, 3, 3}, 1, 1, 1},   /* 3x3 stride 1 (Winograd in fast mode) */
	{{1, 4, 6, 5}, {6, 4, 1, 1}, 1, 1, 0},   /* 1x1: GEMM on the input */
	{{1, 4, 7, 7}, {4, 1, 3, 3}, 4, 2, 1},   /* depthwise */
	{{1, 4, 11, 8}, {6, 2, 5, 5}, 2, 2, 2},  /* grouped im2col */
};

static void fill(float *v, int64_t n, uint32_t seed)
{
	for (int64_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		v[i] = (float)((int32_t)(seed >> 8) % 20001) / 10000.0f; /* [-2, 2] */
	}
}

static int64_t numel(const int64_t *d)
{
	return d[0] * d[1] * d[2] * d[3];
}

static om_node *conv_node(om_model *m, const char *op, const char *domain, int32_t nin,
			  const shape_case *k)
{
	if (!m->graph)
		m->graph = om_graph_new(m, NULL);
	om_node *n = om_graph_add_node(m->graph, op, domain, op, nin, 1);
	for (int32_t i = 0; i < nin; i++)
		n->in[i] = nt_value(m, "i", i);
	om_node_set_output(n, 0, nt_value(m, "o", 0));
	nt_int(n, "group", k->group);
	nt_ints(n, "strides", (int64_t[]){k->stride, k->stride}, 2);
	nt_ints(n, "pads", (int64_t[]){k->pad, k->pad, k->pad, k->pad}, 4);
	return n;
}

/* y = act(y) by the activation's own kernel (in place through a copy). */
static void activation(om_model *m, const act_case *a, om_tensor *y, int exact)
{
	if (!a->name)
		return;
	bool clip = !strcmp(a->name, "Clip");
	om_node *n = nt_add_node(m, a->name, clip ? 3 : 1, 1);
	if (!strcmp(a->name, "LeakyRelu"))
		nt_float(n, "alpha", a->params[0]);
	if (!strcmp(a->name, "HardSigmoid")) {
		nt_float(n, "alpha", a->params[0]);
		nt_float(n, "beta", a->params[1]);
	}
	om_tensor lo = nt_tensor(OM_FLOAT, 0, NULL, &a->params[0]);
	om_tensor hi = nt_tensor(OM_FLOAT, 0, NULL, &a->params[1]);
	const om_tensor *in[] = {y, &lo, &hi};
	om_tensor out[1];
	om_status st = {0};
	assert_int_equal(nt_run_mode(n, 13, in, out, exact, &st), OM_OK);
	memcpy(y->data, out[0].data, y->nbytes);
	om_tensor_free(&out[0]);
}

static void check_case(const shape_case *k, const act_case *a, bool bias, bool z, int exact)
{
	int64_t M = k->w[0];
	float *x = malloc(sizeof(float) * (size_t)numel(k->x));
	float *w = malloc(sizeof(float) * (size_t)numel(k->w));
	float b[8];
	fill(x, numel(k->x), 1);
	fill(w, numel(k->w), 2);
	fill(b, M, 3);
	om_model *m = om_model_new();
	om_tensor tx = nt_tensor(OM_FLOAT, 4, k->x, x), tw = nt_tensor(OM_FLOAT, 4, k->w, w);
	om_tensor tb = nt_tensor(OM_FLOAT, 1, &M, b);
	/* the reference: Conv, then Add, then the activation */
	om_node *cn = conv_node(m, "Conv", "", bias ? 3 : 2, k);
	om_tensor ref[1], got[1];
	om_status st = {0};
	assert_int_equal(nt_run_mode(cn, 13, (const om_tensor *[]){&tx, &tw, &tb}, ref, exact, &st),
			 OM_OK);
	int64_t ny = om_tensor_numel(&ref[0]);
	float *zv = malloc(sizeof(float) * (size_t)ny);
	fill(zv, ny, 4);
	om_tensor tz = nt_tensor(OM_FLOAT, 4, ref[0].dims, zv);
	if (z) {
		om_node *an = nt_add_node(m, "Add", 2, 1);
		om_tensor sum[1];
		assert_int_equal(nt_run_mode(an, 13, (const om_tensor *[]){&ref[0], &tz}, sum, exact,
					&st), OM_OK);
		memcpy(ref[0].data, sum[0].data, ref[0].nbytes);
		om_tensor_free(&sum[0]);
	}
	activation(m, a, &ref[0], exact);
	/* FusedConv(X, W, B or omitted, Z or omitted) */
	om_node *fn = conv_node(m, "FusedConv", "com.microsoft", z ? 4 : bias ? 3 : 2, k);
	if (z && !bias)
		fn->in[2] = NULL;
	if (a->name)
		nt_str(fn, "activation", a->name);
	if (a->nparams)
		nt_floats(fn, "activation_params", a->params, a->nparams);
	assert_int_equal(nt_run_mode(fn, 1, (const om_tensor *[]){&tx, &tw, bias ? &tb : NULL, &tz},
				got, exact, &st), OM_OK);
	nt_assert_shape(&got[0], 4, ref[0].dims);
	if (exact)
		assert_memory_equal(got[0].data, ref[0].data, ref[0].nbytes);
	else
		nt_assert_floats(&got[0], ref[0].data, ny, 1e-5f);
	om_tensor_free(&ref[0]);
	om_tensor_free(&got[0]);
	om_model_free(m);
	free(x), free(w), free(zv);
}

static void fused_matches_separate(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
		for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++)
			for (int v = 0; v < 8; v++)
				check_case(&shapes[s], &acts[a], v & 1, v & 2, v & 4);
}

/* Hand-computed: a 1x1 kernel of weight 1 with B = 1 and Z = -3 over x = {-2, 0.5, 4}. */
static void fused_hand_values(void **state)
{
	(void)state;
	const float x[] = {-2, 0.5f, 4}, w[] = {1}, b[] = {1}, zv[] = {-3, -3, -3};
	const struct {
		const char *act;
		int np;
		float p[2];
		float expect[3]; /* act((x + 1) - 3) = act({-4, -1.5, 2}) */
	} cases[] = {
		{"Relu", 0, {0}, {0, 0, 2}},
		{"LeakyRelu", 1, {0.5f}, {-2, -0.75f, 2}},
		{"Clip", 2, {-1, 1}, {-1, -1, 1}},
		{"HardSigmoid", 2, {0.25f, 0.5f}, {0, 0.125f, 1}},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		om_model *m = om_model_new();
		shape_case k = {{1, 1, 1, 3}, {1, 1, 1, 1}, 1, 1, 0};
		om_node *n = conv_node(m, "FusedConv", "com.microsoft", 4, &k);
		nt_str(n, "activation", cases[i].act);
		if (cases[i].np)
			nt_floats(n, "activation_params", cases[i].p, cases[i].np);
		om_tensor tx = nt_tensor(OM_FLOAT, 4, k.x, x), tw = nt_tensor(OM_FLOAT, 4, k.w, w);
		om_tensor tb = nt_tensor(OM_FLOAT, 1, (int64_t[]){1}, b);
		om_tensor tz = nt_tensor(OM_FLOAT, 4, k.x, zv);
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 1, (const om_tensor *[]){&tx, &tw, &tb, &tz}, out, 1,
					&st), OM_OK);
		nt_assert_floats(&out[0], cases[i].expect, 3, 0);
		om_tensor_free(&out[0]);
		om_model_free(m);
	}
}

static void fused_errors(void **state)
{
	(void)state;
	const float x[12] = {0}, w[1] = {1}, zv[12] = {0};
	shape_case k = {{1, 1, 3, 4}, {1, 1, 1, 1}, 1, 1, 0};
	for (int i = 0; i < 4; i++) {
		om_model *m = om_model_new();
		om_node *n = conv_node(m, "FusedConv", "com.microsoft", 4, &k);
		n->in[2] = NULL;
		if (i == 0)
			nt_str(n, "activation", "Gelu");
		if (i == 1)
			nt_str(n, "activation", "LeakyRelu"); /* no activation_params */
		if (i == 2) {
			nt_str(n, "activation", "Clip");
			nt_floats(n, "activation_params", (float[]){0}, 1);
		}
		om_tensor tx = nt_tensor(OM_FLOAT, 4, k.x, x), tw = nt_tensor(OM_FLOAT, 4, k.w, w);
		/* case 3: Z of another shape */
		om_tensor tz = nt_tensor(OM_FLOAT, 4, i == 3 ? (int64_t[]){1, 1, 4, 3} : k.x, zv);
		om_tensor out[1];
		om_status st = {0};
		assert_int_equal(nt_run_mode(n, 1, (const om_tensor *[]){&tx, &tw, NULL, &tz}, out, 1,
					&st), OM_ERR_INVALID_MODEL);
		om_model_free(m);
	}
}

/* The row is registered where the fusion pass looks for it. */
static void fused_row_registered(void **state)
{
	(void)state;
	const om_op *r = om_op_find("com.microsoft", "FusedConv", 1);
	assert_non_null(r);
	assert_true(r->flags & OM_OP_EXACT);
	assert_null(om_op_find("", "FusedConv", 21));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(fused_matches_separate),
		cmocka_unit_test(fused_hand_values),
		cmocka_unit_test(fused_errors),
		cmocka_unit_test(fused_row_registered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
