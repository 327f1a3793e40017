/* test_optimize.c — om_optimize's fusions on hand-built graphs: each fires on its pattern (node
 * counts, the fused op and its attributes, results equal to the unfused graph's run) and not on
 * near-misses; optimized against unoptimized runs of the real models when they are present. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "testutil.h"
#include "registry.h"

/* ---- graph building ------------------------------------------------------------------ */

/* dims: "N,3,8" — numbers or symbols; "" is a scalar */
static void set_type(om_graph *g, om_value *v, const char *dims)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = OM_FLOAT;
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * OM_MAX_RANK);
	v->type.rank = 0;
	char buf[128];
	snprintf(buf, sizeof buf, "%s", dims);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const bool num = t[0] >= '0' && t[0] <= '9';
		v->type.dims[v->type.rank++] =
			num ? (om_dim){atoll(t), NULL}
			    : (om_dim){-1, om_arena_strdup(g->model->arena, t)};
	}
}

static void input(om_graph *g, const char *name, const char *dims)
{
	om_value *v = om_graph_value(g, name);
	set_type(g, v, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
}

static void output(om_graph *g, const char *name, const char *dims)
{
	om_value *v = om_graph_value(g, name);
	set_type(g, v, dims);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

/* a float initializer of shape dims (rank k) with values x, or i * step + start when x NULL */
static void konst(om_graph *g, const char *name, int32_t k, const int64_t *dims,
		  const float *x, float start, float step)
{
	om_tensor *t = om_model_tensor(g->model, OM_FLOAT, k, dims);
	for (int64_t i = 0; i < om_tensor_numel(t); i++)
		((float *)t->data)[i] = x ? x[i] : start + step * (float)i;
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static void scalar(om_graph *g, const char *name, float x)
{
	konst(g, name, 0, NULL, &x, 0, 0);
}

static void axes_init(om_graph *g, const char *name, int32_t n, const int64_t *ax)
{
	int64_t d[1] = {n};
	om_tensor *t = om_model_tensor(g->model, OM_INT64, 1, d);
	memcpy(t->data, ax, sizeof(int64_t) * (size_t)n);
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static const om_node *find_op(const om_graph *g, const char *op)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		if (!strcmp(g->nodes[i]->op, op))
			return g->nodes[i];
	return NULL;
}

static void optimize(om_model *m, const char *const *skip)
{
	om_simplify_options o = {.verify = 1, .skip = skip};
	om_status st = {0};
	if (om_optimize(m, &o, &st)) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		fail_msg("optimize: %s", buf);
	}
}

/* ---- running ----------------------------------------------------------------------------- */

/* Runs m on inputs made from the input types (symbols are 2), values a fixed function of the
 * index spread over [-3, 3]; outputs into out[] (caller frees). */
static void run(const om_model *m, om_tensor *out, int nout)
{
	om_session *s = NULL;
	om_status st = {0};
	char buf[1024];
	if (om_session_create(m, NULL, &s, &st)) {
		om_status_format(&st, buf, sizeof buf);
		fail_msg("session: %s", buf);
	}
	int nin = om_session_input_count(s);
	om_tensor in[4] = {{0}};
	assert_true(nin <= 4);
	for (int i = 0; i < nin; i++) {
		const om_value *v = om_graph_find(m->graph, om_session_input_name(s, i));
		int64_t dims[OM_MAX_RANK];
		for (int32_t d = 0; d < v->type.rank; d++)
			dims[d] = v->type.dims[d].value >= 0 ? v->type.dims[d].value : 2;
		assert_int_equal(om_tensor_alloc(&in[i], OM_FLOAT, v->type.rank, dims, &st), OM_OK);
		for (int64_t k = 0; k < om_tensor_numel(&in[i]); k++)
			((float *)in[i].data)[k] = 3.0f * sinf(0.7f * (float)k + (float)i);
	}
	assert_int_equal(om_session_output_count(s), nout);
	if (om_session_run(s, in, nin, out, nout, &st)) {
		om_status_format(&st, buf, sizeof buf);
		fail_msg("run: %s", buf);
	}
	for (int i = 0; i < nin; i++)
		om_tensor_free(&in[i]);
	om_session_free(s);
}

static void assert_close(const om_tensor *a, const om_tensor *b, double tol)
{
	assert_int_equal(a->dtype, b->dtype);
	assert_int_equal(a->rank, b->rank);
	for (int32_t d = 0; d < a->rank; d++)
		assert_int_equal(a->dims[d], b->dims[d]);
	int64_t n = om_tensor_numel(a);
	for (int64_t i = 0; i < n; i++) {
		double x, y;
		if (a->dtype == OM_FLOAT) {
			x = ((const float *)a->data)[i];
			y = ((const float *)b->data)[i];
		} else if (a->dtype == OM_DOUBLE) {
			x = ((const double *)a->data)[i];
			y = ((const double *)b->data)[i];
		} else {
			assert_memory_equal(a->data, b->data, a->nbytes);
			return;
		}
		if (!(fabs(x - y) <= tol * (1 + fabs(y))) && !(isnan(x) && isnan(y)))
			fail_msg("element %lld: %.9g against %.9g", (long long)i, x, y);
	}
}

typedef void (*build_fn)(om_graph *g, int variant);

/* Builds the graph twice, optimizes one (skipping `skip`), asserts the node count and that op
 * is there (NULL: not checked), and compares both runs' outputs. Returns the optimized model. */
static om_model *check(build_fn build, int variant, int64_t opset, int want_nodes,
		       const char *op)
{
	om_model *plain = tu_model(opset), *opt = tu_model(opset);
	build(plain->graph, variant);
	build(opt->graph, variant);
	optimize(opt, NULL);
	if (opt->graph->nnodes != want_nodes || (op && !find_op(opt->graph, op))) {
		for (int32_t i = 0; i < opt->graph->nnodes; i++)
			fprintf(stderr, "  %s.%s\n", opt->graph->nodes[i]->domain,
				opt->graph->nodes[i]->op);
		fail_msg("variant %d: %d nodes (want %d with %s)", variant, opt->graph->nnodes,
			 want_nodes, op ? op : "-");
	}
	int nout = plain->graph->noutputs;
	om_tensor a[4] = {{0}}, b[4] = {{0}};
	run(plain, a, nout);
	run(opt, b, nout);
	for (int i = 0; i < nout; i++) {
		assert_close(b + i, a + i, 1e-5);
		om_tensor_free(a + i);
		om_tensor_free(b + i);
	}
	om_model_free(plain);
	return opt;
}

/* ---- Gelu -------------------------------------------------------------------------------- */

/* 0: Mul(Mul(x, p), 0.5) of Div(x, √2)   1: Mul(Mul(x, 0.5), p) of Mul(x, 1/√2)
 * 2: Mul(x, Mul(p, 0.5)), operands swapped   3: tanh form with Pow(x, 3)
 * 4: tanh form with Mul(x, Mul(x, x))   near-misses: 10: Erf output also a graph output;
 * 11: 0.6 instead of 0.5   12: Div(√2, x)   13: a vector [1, 8] of 0.5 (broadcasts x up) */
static void gelu(om_graph *g, int v)
{
	input(g, "x", "N,8");
	output(g, "y", v == 13 ? "1,N,8" : "N,8");
	scalar(g, "sqrt2", 1.4142135f);
	scalar(g, "isqrt2", 0.70710678f);
	scalar(g, "one", 1);
	scalar(g, "half", v == 11 ? 0.6f : 0.5f);
	scalar(g, "three", 3);
	scalar(g, "k044", 0.044715f);
	scalar(g, "k079", 0.7978846f);
	konst(g, "halfv", 3, (const int64_t[]){1, 1, 8}, NULL, 0.5f, 0);
	if (v == 3 || v == 4) {
		if (v == 3)
			tu_graph_node(g, "Pow", "x,three", "x3");
		else {
			tu_graph_node(g, "Mul", "x,x", "xx");
			tu_graph_node(g, "Mul", "x,xx", "x3");
		}
		tu_graph_node(g, "Mul", "k044,x3", "t1");
		tu_graph_node(g, "Add", "x,t1", "t2");
		tu_graph_node(g, "Mul", "t2,k079", "t3");
		tu_graph_node(g, "Tanh", "t3", "e");
	} else {
		if (v == 1)
			tu_graph_node(g, "Mul", "x,isqrt2", "a");
		else
			tu_graph_node(g, "Div", v == 12 ? "sqrt2,x" : "x,sqrt2", "a");
		tu_graph_node(g, "Erf", "a", "e");
	}
	tu_graph_node(g, "Add", v == 2 ? "one,e" : "e,one", "p");
	if (v == 1) {
		tu_graph_node(g, "Mul", "x,half", "h");
		tu_graph_node(g, "Mul", "h,p", "y");
	} else if (v == 2) {
		tu_graph_node(g, "Mul", "half,p", "q");
		tu_graph_node(g, "Mul", "x,q", "y");
	} else {
		tu_graph_node(g, "Mul", "x,p", "m");
		tu_graph_node(g, "Mul", v == 13 ? "m,halfv" : "m,half", "y");
	}
	if (v == 10)
		output(g, "e", "N,8");
}

static void gelu_fuses(void **state)
{
	(void)state;
	for (int v = 0; v <= 4; v++) {
		om_model *m = check(gelu, v, 14, 1, v >= 3 ? "FastGelu" : "Gelu");
		const om_node *n = m->graph->nodes[0];
		assert_string_equal(n->domain, "com.microsoft");
		assert_int_equal(n->nin, 1);
		assert_string_equal(n->in[0]->name, "x");
		assert_string_equal(n->out[0]->name, "y");
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
		om_model_free(m);
	}
	/* opset 20: the ONNX Gelu, approximate "tanh" for the tanh form */
	for (int v = 0; v <= 3; v += 3) {
		om_model *m = check(gelu, v, 20, 1, "Gelu");
		assert_string_equal(m->graph->nodes[0]->domain, "");
		assert_string_equal(om_attr_string(m->graph->nodes[0], "approximate", "none"),
				    v ? "tanh" : "none");
		assert_int_equal(om_model_opset(m, "com.microsoft"), 0);
		om_model_free(m);
	}
}

static void gelu_near_misses(void **state)
{
	(void)state;
	const int nodes[] = {[10] = 5, [11] = 5, [12] = 5, [13] = 5};
	for (int v = 10; v <= 13; v++) {
		om_model *m = check(gelu, v, 14, nodes[v], "Erf");
		assert_int_equal(tu_count_op(m->graph, "Gelu"), 0);
		om_model_free(m);
	}
}

/* ---- SiLU -> QuickGelu ------------------------------------------------------------------- */

/* 0: Mul(x, Sigmoid(x))   1: Mul(Sigmoid(x), x)   2: Mul(Sigmoid(Mul(x, 1.702)), x)
 * 3: Conv -> SiLU (stays Conv + QuickGelu)   near-misses: 10: the Sigmoid's output also a
 * graph output   11: it has another reader   12: Mul(z, Sigmoid(x)) with z not x (the SE
 * gate)   13: the scaling Mul's output has another reader   14: Sigmoid(x) * x * 2 chain
 * where the Mul reads x twice through Sigmoid(x)·Sigmoid(x) */
static void silu(om_graph *g, int v)
{
	const char *dims = v == 3 ? "N,2,3,3" : "N,8";
	input(g, "x0", dims);
	output(g, "y", dims);
	if (v == 12)
		input(g, "z", dims);
	if (v == 3) {
		konst(g, "w", 4, (const int64_t[]){2, 2, 1, 1}, NULL, -0.5f, 0.3f);
		tu_graph_node(g, "Conv", "x0,w", "x");
	} else
		tu_graph_node(g, "Identity", "x0", "x");
	scalar(g, "alpha", 1.702f);
	if (v == 2 || v == 13) {
		tu_graph_node(g, "Mul", "x,alpha", "ax");
		tu_graph_node(g, "Sigmoid", "ax", "s");
	} else
		tu_graph_node(g, "Sigmoid", "x", "s");
	if (v == 14)
		tu_graph_node(g, "Mul", "s,s", "y");
	else
		tu_graph_node(g, "Mul", v == 1 || v == 2 ? "s,x" : v == 12 ? "z,s" : "x,s", "y");
	if (v == 10)
		output(g, "s", dims);
	if (v == 11) {
		tu_graph_node(g, "Add", "s,x", "t");
		output(g, "t", dims);
	}
	if (v == 13)
		output(g, "ax", dims);
}

/* the optimized and the plain model's outputs, bit for bit */
static void assert_same_bits_at(build_fn build, int v, int64_t opset)
{
	om_model *plain = tu_model(opset), *opt = tu_model(opset);
	build(plain->graph, v);
	build(opt->graph, v);
	optimize(opt, NULL);
	const int nout = plain->graph->noutputs;
	om_tensor a[4] = {{0}}, b[4] = {{0}};
	assert_true(nout <= 4);
	run(plain, a, nout);
	run(opt, b, nout);
	for (int i = 0; i < nout; i++) {
		assert_int_equal(a[i].nbytes, b[i].nbytes);
		assert_memory_equal(a[i].data, b[i].data, a[i].nbytes);
		om_tensor_free(&a[i]);
		om_tensor_free(&b[i]);
	}
	om_model_free(plain);
	om_model_free(opt);
}

static void assert_same_bits(build_fn build, int v)
{
	assert_same_bits_at(build, v, 14);
}

static void silu_fuses(void **state)
{
	(void)state;
	for (int v = 0; v <= 3; v++) {
		om_model *m = check(silu, v, 14, v == 3 ? 2 : 1, "QuickGelu");
		const om_node *n = find_op(m->graph, "QuickGelu");
		assert_string_equal(n->domain, "com.microsoft");
		assert_int_equal(n->nin, 1);
		assert_string_equal(n->in[0]->name, v == 3 ? "x" : "x0");
		assert_string_equal(n->out[0]->name, "y");
		assert_true(om_node_attr(n, "alpha") != NULL);
		assert_true(om_attr_float(n, "alpha", 0) == (v == 2 ? 1.702f : 1.0f));
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
		if (v == 3)
			assert_int_equal(tu_count_op(m->graph, "Conv"), 1);
		om_model_free(m);
		/* Sigmoid then Mul and QuickGelu give the same bits */
		assert_same_bits(silu, v);
	}
}

static void silu_near_misses(void **state)
{
	(void)state;
	const int nodes[] = {[10] = 2, [11] = 3, [12] = 2, [13] = 3, [14] = 2};
	for (int v = 10; v <= 14; v++) {
		om_model *m = check(silu, v, 14, nodes[v], "Sigmoid");
		assert_int_equal(tu_count_op(m->graph, "QuickGelu"), 0);
		om_model_free(m);
	}
}

/* ---- Add(bias) + Gelu -> BiasGelu ------------------------------------------------------- */

/* y = Gelu(Add(a, b)), a [N,3,300] (rows longer than the kernel's blocks), b 1-D [300]:
 * 0: opset 14, Add(b, a) then the erf chain (com.microsoft Gelu first)   1: opset 20, the ONNX
 * Gelu   near-misses: 11: b [1,300]   12: b [1]   13: the sum has a second reader   14: b a
 * graph input   15: opset 20 Gelu with approximate "tanh" */
static void bias_gelu(om_graph *g, int v)
{
	input(g, "a", "N,3,300");
	output(g, "y", "N,3,300");
	if (v == 14)
		input(g, "b", "300");
	else if (v == 11)
		konst(g, "b", 2, (const int64_t[]){1, 300}, NULL, -1.5f, 0.01f);
	else
		konst(g, "b", 1, (const int64_t[]){v == 12 ? 1 : 300}, NULL, -1.5f, 0.01f);
	tu_graph_node(g, "Add", v == 0 ? "b,a" : "a,b", "s");
	if (v == 0) {
		scalar(g, "sqrt2", 1.4142135f);
		scalar(g, "one", 1);
		scalar(g, "half", 0.5f);
		tu_graph_node(g, "Div", "s,sqrt2", "d");
		tu_graph_node(g, "Erf", "d", "e");
		tu_graph_node(g, "Add", "e,one", "p");
		tu_graph_node(g, "Mul", "s,p", "m");
		tu_graph_node(g, "Mul", "m,half", "y");
	} else {
		om_node *n = tu_graph_node(g, "Gelu", "s", "y");
		if (v == 15) {
			om_attr *at = om_node_set_attr(n, "approximate", OM_ATTR_STRING);
			at->s = (om_str){"tanh", 4};
		}
	}
	if (v == 13) {
		tu_graph_node(g, "Neg", "s", "t");
		output(g, "t", "N,3,300");
	}
}

static void bias_gelu_fuses(void **state)
{
	(void)state;
	for (int v = 0; v <= 1; v++) {
		const int64_t opset = v ? 20 : 14;
		om_model *m = check(bias_gelu, v, opset, 1, "BiasGelu");
		const om_node *n = m->graph->nodes[0];
		assert_string_equal(n->domain, "com.microsoft");
		assert_int_equal(n->nin, 2);
		assert_string_equal(n->in[0]->name, "a");
		assert_string_equal(n->in[1]->name, "b");
		assert_string_equal(n->out[0]->name, "y");
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
		om_model_free(m);
	}
	/* Add then the ONNX Gelu and BiasGelu give the same bits (the erf chain of variant 0 has
	 * its own rounding: within check's tolerance) */
	assert_same_bits_at(bias_gelu, 1, 20);
}

static void bias_gelu_near_misses(void **state)
{
	(void)state;
	for (int v = 11; v <= 15; v++) {
		om_model *m = check(bias_gelu, v, 20, v == 13 ? 3 : 2, "Gelu");
		assert_int_equal(tu_count_op(m->graph, "BiasGelu"), 0);
		assert_int_equal(tu_count_op(m->graph, "Add"), 1);
		om_model_free(m);
	}
}

/* ---- residual Add [+ bias Add] + LayerNormalization -> SkipLayerNormalization ------------- */

/* z = LayerNormalization(s = Add(r, t), gamma, beta), r, y [N,3,16], t = Add(bias, y):
 * 0: s also read after the LayerNormalization (Mul(s, s): the 4th output), bias folded in
 * 1: s = Add(r, y) read by the LayerNormalization alone   near-misses: 11: bias [1,16] (the
 * bias Add stays)   12: s read by a Mul before the LayerNormalization   13: bias a graph input
 * (stays)   14: r [1,3,16] (broadcast)   15: t has another reader (the bias Add stays)
 * 16: rank 4 */
static void skip_ln(om_graph *g, int v)
{
	const char *dims = v == 16 ? "N,2,3,16" : "N,3,16";
	input(g, "r", v == 14 ? "1,3,16" : dims);
	input(g, "y", dims);
	output(g, "z", dims);
	konst(g, "gamma", 1, (const int64_t[]){16}, NULL, 0.5f, 0.1f);
	konst(g, "beta", 1, (const int64_t[]){16}, NULL, -0.4f, 0.05f);
	if (v == 13)
		input(g, "bias", "16");
	else if (v == 11)
		konst(g, "bias", 2, (const int64_t[]){1, 16}, NULL, -1.0f, 0.125f);
	else
		konst(g, "bias", 1, (const int64_t[]){16}, NULL, -1.0f, 0.125f);
	if (v != 1)
		tu_graph_node(g, "Add", "bias,y", "t");
	tu_graph_node(g, "Add", v == 1 ? "r,y" : "r,t", "s");
	if (v == 12) {
		tu_graph_node(g, "Mul", "s,s", "w");
		output(g, "w", dims);
	}
	tu_graph_node(g, "LayerNormalization", "s,gamma,beta", "z");
	if (v == 0) {
		tu_graph_node(g, "Mul", "s,s", "w");
		output(g, "w", dims);
	}
	if (v == 15) {
		tu_graph_node(g, "Neg", "t", "u");
		output(g, "u", dims);
	}
}

static void skip_ln_fuses(void **state)
{
	(void)state;
	for (int v = 0; v <= 1; v++) {
		om_model *m = check(skip_ln, v, 17, v ? 1 : 2, "SkipLayerNormalization");
		const om_node *n = find_op(m->graph, "SkipLayerNormalization");
		assert_string_equal(n->domain, "com.microsoft");
		assert_int_equal(n->nin, v ? 4 : 5);
		assert_string_equal(n->in[0]->name, "r");
		assert_string_equal(n->in[1]->name, "y");
		assert_string_equal(n->in[2]->name, "gamma");
		assert_string_equal(n->in[3]->name, "beta");
		if (!v)
			assert_string_equal(n->in[4]->name, "bias");
		assert_string_equal(n->out[0]->name, "z");
		assert_int_equal(n->nout, v ? 1 : 4);
		if (!v) {
			assert_null(n->out[1]);
			assert_null(n->out[2]);
			assert_string_equal(n->out[3]->name, "s");
		}
		assert_true(om_attr_float(n, "epsilon", 0) == 1e-5f);
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
		assert_int_equal(tu_count_op(m->graph, "Add"), 0);
		om_model_free(m);
		/* the Adds then LayerNormalization and SkipLayerNormalization give the same bits */
		assert_same_bits_at(skip_ln, v, 17);
	}
}

static void skip_ln_near_misses(void **state)
{
	(void)state;
	for (int v = 11; v <= 16; v++) {
		const bool partial = v == 11 || v == 13 || v == 15; /* fuses, the bias Add stays */
		const int want[] = {[11] = 2, [12] = 4, [13] = 2, [14] = 3, [15] = 3, [16] = 3};
		om_model *m = check(skip_ln, v, 17, want[v], partial ? "SkipLayerNormalization"
								     : "LayerNormalization");
		assert_int_equal(tu_count_op(m->graph, "SkipLayerNormalization"), partial);
		assert_int_equal(tu_count_op(m->graph, "Add"), partial ? 1 : 2);
		if (partial)
			assert_int_equal(find_op(m->graph, "SkipLayerNormalization")->nin, 4);
		om_model_free(m);
	}
}

static uint32_t f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

/* distance in units in the last place between floats of the same sign (or zero) */
static int64_t ulps(float a, float b)
{
	const int64_t ia = (int32_t)f32_bits(a), ib = (int32_t)f32_bits(b);
	const int64_t sa = ia < 0 ? INT32_MIN - ia : ia, sb = ib < 0 ? INT32_MIN - ib : ib;
	return sa > sb ? sa - sb : sb - sa;
}

/* QuickGelu's values: x sigmoid(alpha x) against double (alpha x rounded to float first, as
 * the kernel and the unfused Mul do) for alpha 1, the default 1.702 and -0.25, every 1/64
 * in [-100, 100] */
static void quick_gelu_values(void **state)
{
	(void)state;
	enum { N = 12801 };
	for (int k = 0; k < 3; k++) {
		om_model *m = tu_model_ms(14);
		om_graph *g = m->graph;
		input(g, "x", "12801");
		output(g, "y", "12801");
		om_node *n = om_graph_add_node(g, "QuickGelu", "com.microsoft", "q", 1, 1);
		n->in[0] = om_graph_value(g, "x");
		om_node_set_output(n, 0, om_graph_value(g, "y"));
		const float alpha = k == 0 ? 1.0f : k == 1 ? 1.702f : -0.25f;
		if (k != 1)
			om_node_set_attr(n, "alpha", OM_ATTR_FLOAT)->f = alpha;
		om_session *s = NULL;
		om_status st = {0};
		assert_int_equal(om_session_create(m, NULL, &s, &st), OM_OK);
		om_tensor in = {0}, out = {0};
		assert_int_equal(om_tensor_alloc(&in, OM_FLOAT, 1, (const int64_t[]){N}, &st), OM_OK);
		float *x = in.data;
		for (int i = 0; i < N; i++)
			x[i] = -100.0f + (float)i / 64.0f;
		assert_int_equal(om_session_run(s, &in, 1, &out, 1, &st), OM_OK);
		const float *y = out.data;
		for (int i = 0; i < N; i++) {
			const double ax = (double)(alpha * x[i]);
			const float want = (float)((double)x[i] / (1.0 + exp(-ax)));
			/* 5 ulp while sigmoid(alpha x) is a normal float; below, the subnormal
			 * sigmoid's absolute error (2^-148) times |x| */
			const int64_t u = ax > -87 ? ulps(y[i], want) : 0;
			if (ax > -87 ? u > 5
				     : fabs((double)y[i] - (double)want) > fabs((double)x[i]) * 0x1p-148)
				fail_msg("alpha %g x %g: %.9g against %.9g (%lld ulp)", (double)alpha,
					 (double)x[i], (double)y[i], (double)want, (long long)u);
		}
		assert_true(y[N / 2] == 0.0f && f32_bits(y[N / 2]) == 0); /* x = 0 */
		om_tensor_free(&in);
		om_tensor_free(&out);
		om_session_free(s);
		om_model_free(m);
	}
}

/* ---- LayerNormalization ------------------------------------------------------------------ */

/* x:[N,4,8] normalized over the last axis, gamma/beta [8].
 * 0: Pow + Div + gamma + beta   1: Mul(d, d) + Reciprocal, Add(beta, .) and Mul(gamma, .)
 * 2: no gamma, no beta   3: over the last two axes with gamma [4, 8] and beta [1, 8]
 * 4: opset-18 axes input   near-misses: 10: d also a graph output   11: eps a graph input
 * 12: gamma a graph input (the LayerNormalization stops before it)   13: second ReduceMean
 * over axis 1   14: gamma [2, 1, 1] (varies along the batch: no LayerNormalization scale; it
 * stops before it)   15: Pow(d, 3) */
static void layernorm(om_graph *g, int v)
{
	input(g, "x", "N,4,8");
	output(g, "y", "N,4,8");
	const int64_t last1[1] = {-1}, last2[2] = {-2, -1}, mid[1] = {1};
	if (v == 11)
		input(g, "eps", "");
	else
		scalar(g, "eps", 1e-5f);
	scalar(g, "two", v == 15 ? 3 : 2);
	if (v == 12)
		input(g, "gamma", "8");
	else if (v == 3)
		konst(g, "gamma", 2, (const int64_t[]){4, 8}, NULL, 0.5f, 0.05f);
	else if (v == 14)
		konst(g, "gamma", 3, (const int64_t[]){2, 1, 1}, NULL, 0.5f, 1);
	else
		konst(g, "gamma", 1, (const int64_t[]){8}, NULL, 0.5f, 0.25f);
	if (v == 3)
		konst(g, "beta", 2, (const int64_t[]){1, 8}, NULL, -1, 0.3f);
	else
		konst(g, "beta", 1, (const int64_t[]){8}, NULL, -1, 0.3f);
	axes_init(g, "axes", 1, last1);
	om_node *r1 = tu_graph_node(g, "ReduceMean", v == 4 ? "x,axes" : "x", "mean");
	tu_graph_node(g, "Sub", "x,mean", "d");
	tu_graph_node(g, v == 1 ? "Mul" : "Pow", v == 1 ? "d,d" : "d,two", "sq");
	om_node *r2 = tu_graph_node(g, "ReduceMean", v == 4 ? "sq,axes" : "sq", "var");
	if (v != 4) {
		tu_attr_ints(r1, "axes", v == 3 ? 2 : 1, v == 3 ? last2 : last1);
		tu_attr_ints(r2, "axes", v == 3 ? 2 : 1, v == 3 ? last2 : v == 13 ? mid : last1);
	}
	tu_graph_node(g, "Add", "var,eps", "ve");
	tu_graph_node(g, "Sqrt", "ve", "sd");
	if (v == 1) {
		tu_graph_node(g, "Reciprocal", "sd", "inv");
		tu_graph_node(g, "Mul", "inv,d", "n");
	} else {
		tu_graph_node(g, "Div", "d,sd", v == 2 ? "y" : "n");
	}
	if (v != 2) {
		tu_graph_node(g, "Mul", v == 1 ? "gamma,n" : "n,gamma", "s");
		tu_graph_node(g, "Add", v == 1 ? "beta,s" : "s,beta", "y");
	}
	if (v == 10)
		output(g, "d", "N,4,8");
}

static void layernorm_fuses(void **state)
{
	(void)state;
	for (int v = 0; v <= 4; v++) {
		om_model *m = check(layernorm, v, v == 4 ? 18 : 14, 1, "LayerNormalization");
		const om_node *n = m->graph->nodes[0];
		assert_string_equal(n->domain, "");
		assert_int_equal(om_attr_int(n, "axis", -1), v == 3 ? 1 : 2);
		assert_float_equal(om_attr_float(n, "epsilon", 0), 1e-5f, 1e-12);
		assert_int_equal(n->nin, 3);
		assert_string_equal(n->out[0]->name, "y");
		for (int k = 1; k < 3; k++) /* Scale and B have the normalized shape */
			assert_int_equal(om_tensor_numel(n->in[k]->init), v == 3 ? 32 : 8);
		/* the graph input keeps its symbol */
		assert_string_equal(m->graph->inputs[0]->type.dims[0].param, "N");
		assert_int_equal(om_model_opset(m, "com.microsoft"), 0);
		om_model_free(m);
	}
	/* opset 17: the ONNX row runs it */
	om_model *m = check(layernorm, 0, 17, 1, "LayerNormalization");
	om_model_free(m);
}

static void layernorm_near_misses(void **state)
{
	(void)state;
	const int nodes[] = {[10] = 9, [11] = 9, [12] = 3, [13] = 9, [14] = 3, [15] = 9};
	for (int v = 10; v <= 15; v++) {
		om_model *m = check(layernorm, v, 14, nodes[v], v == 12 || v == 14 ? "Mul" : NULL);
		assert_int_equal(tu_count_op(m->graph, "LayerNormalization"), v == 12 || v == 14);
		om_model_free(m);
	}
}

/* ---- FusedConv --------------------------------------------------------------------------- */

static bool have_fused_conv(void)
{
	const om_op *r = om_op_find("com.microsoft", "FusedConv", 1);
	return r && r->kernel;
}

/* x:[1,2,5,5] -> Conv(W [3,2,3,3], B, pads 1) -> ... -> y [1,3,5,5]
 * 0: Relu   1: Add(z [1,3,5,5], .) + Relu   2: LeakyRelu 0.2   3: Clip(-1, 1.5)
 * 4: HardSigmoid   5: Sigmoid   6: Tanh   7: Add(z) alone   near-misses: 10: Add of a
 * [1,3,1,1] tensor (broadcast: no Z) + Relu   11: the Conv output also a graph output
 * 12: the Add output read twice (Relu and a graph output) */
static void conv_act(om_graph *g, int v)
{
	input(g, "x", "1,2,5,5");
	output(g, "y", "1,3,5,5");
	konst(g, "W", 4, (const int64_t[]){3, 2, 3, 3}, NULL, -0.8f, 0.03f);
	konst(g, "B", 1, (const int64_t[]){3}, NULL, -0.2f, 0.3f);
	if (v == 10) /* an input: a constant one would be folded into B by simplify */
		input(g, "z", "1,3,1,1");
	else if (v == 1 || v == 7 || v == 12)
		input(g, "z", "1,3,5,5");
	scalar(g, "lo", -1);
	scalar(g, "hi", 1.5f);
	om_node *c = tu_graph_node(g, "Conv", "x,W,B", "c");
	tu_attr_ints(c, "pads", 4, (const int64_t[]){1, 1, 1, 1});
	tu_attr_ints(c, "kernel_shape", 2, (const int64_t[]){3, 3});
	const char *a = "c";
	if (v == 1 || v == 7 || v == 10 || v == 12) {
		tu_graph_node(g, "Add", "z,c", v == 7 ? "y" : "s");
		a = "s";
	}
	if (v == 7)
		return;
	static const char *const act[] = {"Relu", "Relu", "LeakyRelu", "Clip", "HardSigmoid",
					  "Sigmoid", "Tanh"};
	char ins[32];
	snprintf(ins, sizeof ins, "%s%s", a, v == 3 ? ",lo,hi" : "");
	om_node *n = tu_graph_node(g, v < 7 ? act[v] : "Relu", ins, "y");
	if (v == 2)
		om_node_set_attr(n, "alpha", OM_ATTR_FLOAT)->f = 0.2f;
	if (v == 4) {
		om_node_set_attr(n, "alpha", OM_ATTR_FLOAT)->f = 0.3f;
		om_node_set_attr(n, "beta", OM_ATTR_FLOAT)->f = 0.4f;
	}
	if (v == 11)
		output(g, "c", "1,3,5,5");
	if (v == 12)
		output(g, "s", "1,3,5,5");
}

static void conv_activation_fuses(void **state)
{
	(void)state;
	if (!have_fused_conv())
		skip();
	static const char *const act[] = {"Relu", "Relu", "LeakyRelu", "Clip", "HardSigmoid",
					  "Sigmoid", "Tanh", NULL};
	static const int nparams[] = {0, 0, 1, 2, 2, 0, 0, 0};
	static const float params[][2] = {{0}, {0}, {0.2f}, {-1, 1.5f}, {0.3f, 0.4f}};
	for (int v = 0; v <= 7; v++) {
		om_model *m = check(conv_act, v, 13, 1, "FusedConv");
		const om_node *n = m->graph->nodes[0];
		assert_string_equal(n->domain, "com.microsoft");
		assert_int_equal(n->nin, v == 1 || v == 7 ? 4 : 3);
		if (n->nin == 4)
			assert_string_equal(n->in[3]->name, "z");
		assert_string_equal(n->out[0]->name, "y");
		int64_t np = 0;
		const int64_t *pads = om_attr_ints(n, "pads", &np);
		assert_int_equal(np, 4);
		assert_int_equal(pads[0], 1);
		if (act[v])
			assert_string_equal(om_attr_string(n, "activation", ""), act[v]);
		else
			assert_null(om_node_attr(n, "activation"));
		const float *p = om_attr_floats(n, "activation_params", &np);
		assert_int_equal(np, nparams[v]);
		for (int k = 0; k < nparams[v]; k++)
			assert_float_equal(p[k], params[v][k], 0);
		assert_int_equal(om_model_opset(m, "com.microsoft"), 1);
		om_model_free(m);
	}
}

static void conv_activation_near_misses(void **state)
{
	(void)state;
	if (!have_fused_conv())
		skip();
	/* 10: Conv, Add, Relu stay   11: Conv stays (Relu unfused)   12: Conv + Add fuse, the
	 * Relu of the twice-read sum stays */
	const int nodes[] = {[10] = 3, [11] = 2, [12] = 2};
	const char *const op[] = {[10] = "Conv", [11] = "Conv", [12] = "FusedConv"};
	for (int v = 10; v <= 12; v++) {
		om_model *m = check(conv_act, v, 13, nodes[v], op[v]);
		assert_int_equal(tu_count_op(m->graph, "Relu"), 1);
		om_model_free(m);
	}
}

/* ---- pipeline ---------------------------------------------------------------------------- */

static void skip_names_and_simplify_stays_onnx(void **state)
{
	(void)state;
	/* a fusion can be skipped by name; simplify never fuses */
	om_model *m = tu_model(14);
	gelu(m->graph, 0);
	const char *const skip[] = {"fuse_gelu", "merge_common", NULL};
	optimize(m, skip);
	assert_int_equal(tu_count_op(m->graph, "Erf"), 1);
	om_model_free(m);
	m = tu_model(14);
	layernorm(m->graph, 0);
	om_simplify_options so = {.verify = 1};
	om_status st = {0};
	assert_int_equal(om_simplify(m, &so, &st), OM_OK);
	assert_int_equal(tu_count_op(m->graph, "LayerNormalization"), 0);
	assert_int_equal(om_model_opset(m, "com.microsoft"), 0);
	const char *const bad[] = {"fuse_everything", NULL};
	om_simplify_options bo = {.skip = bad};
	assert_int_equal(om_optimize(m, &bo, &st), OM_ERR_INVALID_INPUT);
	om_model_free(m);
}

/* ---- real models ------------------------------------------------------------------------- */

/* Feeds in/NAME.npy by input name; runs m; outputs into out. */
static void run_dir(const char *dir, const om_model *m, om_tensor *out, int nout)
{
	om_session *s = NULL;
	om_status st = {0};
	char path[4096], buf[1024];
	if (om_session_create(m, NULL, &s, &st)) {
		om_status_format(&st, buf, sizeof buf);
		fail_msg("%s: session: %s", dir, buf);
	}
	int nin = om_session_input_count(s);
	om_tensor *in = calloc((size_t)nin + 1, sizeof *in);
	for (int i = 0; i < nin; i++) {
		snprintf(path, sizeof path, "%s/in/%s.npy", dir, om_session_input_name(s, i));
		assert_int_equal(om_tensor_read_file(path, &in[i], &st), OM_OK);
	}
	assert_int_equal(om_session_output_count(s), nout);
	if (om_session_run(s, in, nin, out, nout, &st)) {
		om_status_format(&st, buf, sizeof buf);
		fail_msg("%s: run: %s", dir, buf);
	}
	for (int i = 0; i < nin; i++)
		om_tensor_free(&in[i]);
	free(in);
	om_session_free(s);
}

static int check_models_in(const char *root)
{
	DIR *d = opendir(root);
	int seen = 0;
	if (!d)
		return 0;
	for (struct dirent *e; (e = readdir(d));) {
		char dir[2048], path[4096];
		struct stat sb;
		snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
		snprintf(path, sizeof path, "%s/model.onnx", dir);
		if (e->d_name[0] == '.' || stat(path, &sb))
			continue;
		om_model *a = NULL, *b = NULL;
		om_status st = {0};
		assert_int_equal(om_model_load(path, &a, &st), OM_OK);
		assert_int_equal(om_model_load(path, &b, &st), OM_OK);
		int32_t before = b->graph->nnodes;
		optimize(b, NULL);
		print_message("%-16s %5d nodes -> %d\n", e->d_name, before, b->graph->nnodes);
		assert_true(b->graph->nnodes <= before);
		int nout = a->graph->noutputs;
		om_tensor *x = calloc((size_t)nout, sizeof *x);
		om_tensor *y = calloc((size_t)nout, sizeof *y);
		run_dir(dir, a, x, nout);
		run_dir(dir, b, y, nout);
		for (int i = 0; i < nout; i++) {
			assert_close(&y[i], &x[i], 1e-4);
			om_tensor_free(&x[i]);
			om_tensor_free(&y[i]);
		}
		free(x);
		free(y);
		om_model_free(a);
		om_model_free(b);
		seen++;
	}
	closedir(d);
	return seen;
}

static void models_match_unoptimized(void **state)
{
	(void)state;
	const char *sh = tu_shared_dir();
	if (!sh)
		skip();
	char root[4096];
	snprintf(root, sizeof root, "%s/models", sh);
	int seen = check_models_in(root);
	snprintf(root, sizeof root, "%s/../models", sh); /* /work/models beside ../shared */
	seen += check_models_in(root);
	if (!seen)
		skip();
}

/* omopt run optimizes by default: --profile names the fused ops; --no-optimize runs the
 * model as loaded; --save-optimized writes what is run without running it */
static void run_command(void **state)
{
	(void)state;
	const char *sh = tu_shared_dir();
	if (!sh)
		skip();
	char dir[256], args[2048], out[16384], err[4096];
	assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "omopt_runopt_"), 0);
	char model[1024];
	snprintf(model, sizeof model, "%s/models/gpt_tiny_dyn/model.onnx --input idx=%s%s", sh, sh,
		 "/models/gpt_tiny_dyn/in/idx.npy");
	snprintf(args, sizeof args, "run %s --profile", model);
	assert_int_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "graph: 318 nodes as loaded, 58 after om_optimize"));
	assert_non_null(strstr(out, "\nLayerNormalization "));
	assert_non_null(strstr(out, "\nBiasGelu "));
	assert_null(strstr(out, "\nReduceMean "));
	snprintf(args, sizeof args, "run %s --profile --no-optimize", model);
	assert_int_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	assert_non_null(strstr(out, "graph: 318 nodes as loaded, not optimized"));
	assert_non_null(strstr(out, "\nReduceMean "));
	assert_null(strstr(out, "\nLayerNormalization "));
	snprintf(args, sizeof args, "run %s/models/gpt_tiny_dyn/model.onnx --save-optimized o.onnx",
		 sh);
	assert_int_equal(tu_run_omopt(dir, args, out, sizeof out, err, sizeof err), 0);
	char path[512];
	snprintf(path, sizeof path, "%s/o.onnx", dir);
	om_model *o = NULL;
	om_status st = {0};
	assert_int_equal(om_model_load(path, &o, &st), OM_OK);
	assert_int_equal(o->graph->nnodes, 58);
	assert_int_equal(tu_count_op(o->graph, "SkipLayerNormalization"), 4);
	assert_int_equal(tu_count_op(o->graph, "BiasGelu"), 2);
	assert_int_equal(om_model_opset(o, "com.microsoft"), 1);
	assert_string_equal(o->graph->inputs[0]->type.dims[1].param, "seq");
	om_model_free(o);
	assert_int_equal(tu_tmpdir_remove(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(gelu_fuses),
		cmocka_unit_test(gelu_near_misses),
		cmocka_unit_test(layernorm_fuses),
		cmocka_unit_test(layernorm_near_misses),
		cmocka_unit_test(bias_gelu_fuses),
		cmocka_unit_test(bias_gelu_near_misses),
		cmocka_unit_test(skip_ln_fuses),
		cmocka_unit_test(skip_ln_near_misses),
		cmocka_unit_test(silu_fuses),
		cmocka_unit_test(silu_near_misses),
		cmocka_unit_test(quick_gelu_values),
		cmocka_unit_test(conv_activation_fuses),
		cmocka_unit_test(conv_activation_near_misses),
		cmocka_unit_test(skip_names_and_simplify_stays_onnx),
		cmocka_unit_test(models_match_unoptimized),
		cmocka_unit_test(run_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
