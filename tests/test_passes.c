/* test_passes.c — the simplify passes on hand-built graphs: exact resulting graphs (node
 * counts and ops, folded values, names kept). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "registry.h"
#include "pass.h"

/* ---- graph building ------------------------------------------------------------------ */

/* dims: "N,3,?,W" — numbers, symbols, "?" unknown; "" is a scalar */
static void set_type(om_graph *g, om_value *v, int32_t elem, const char *dims)
{
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * OM_MAX_RANK);
	v->type.rank = 0;
	char buf[128];
	snprintf(buf, sizeof buf, "%s", dims);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		om_dim *d = &v->type.dims[v->type.rank++];
		if (t[0] >= '0' && t[0] <= '9')
			*d = (om_dim){atoll(t), NULL};
		else if (!strcmp(t, "?"))
			*d = (om_dim){-1, NULL};
		else
			*d = (om_dim){-1, om_arena_strdup(g->model->arena, t)};
	}
}

static om_value *input(om_graph *g, const char *name, int32_t elem, const char *dims)
{
	om_value *v = om_graph_value(g, name);
	set_type(g, v, elem, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
	return v;
}

static void output(om_graph *g, const char *name, int32_t elem, const char *dims)
{
	om_value *v = om_graph_value(g, name);
	if (elem)
		set_type(g, v, elem, dims);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

/* t (in the model arena) as the initializer `name` */
static om_value *initializer(om_graph *g, const char *name, om_tensor *t)
{
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
	return v;
}

static om_value *ints(om_graph *g, const char *name, int32_t rank, int32_t n, const int64_t *x)
{
	int64_t dims[1] = {n};
	om_tensor *t = om_model_tensor(g->model, OM_INT64, rank, dims);
	if (n)
		memcpy(t->data, x, sizeof(int64_t) * (size_t)n);
	return initializer(g, name, t);
}

static om_value *floats(om_graph *g, const char *name, int32_t n, const float *x)
{
	int64_t dims[1] = {n};
	om_tensor *t = om_model_tensor(g->model, OM_FLOAT, 1, dims);
	memcpy(t->data, x, sizeof(float) * (size_t)n);
	return initializer(g, name, t);
}

static void attr_int(om_node *n, const char *name, int64_t v)
{
	om_node_set_attr(n, name, OM_ATTR_INT)->i = v;
}

static void simplify(om_model *m, const char *const *skip)
{
	om_simplify_options o = {.verify = 1, .skip = skip};
	om_status st = {0};
	om_kind rc = om_simplify(m, &o, &st);
	if (rc) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		fail_msg("simplify: %s", buf);
	}
}

static void assert_ints(const om_value *v, int32_t n, const int64_t *want)
{
	assert_non_null(v);
	assert_non_null(v->init);
	assert_int_equal(v->init->dtype, OM_INT64);
	assert_int_equal(om_tensor_numel(v->init), n);
	for (int32_t i = 0; i < n; i++)
		assert_int_equal(((const int64_t *)v->init->data)[i], want[i]);
}

static bool has_kernel(const char *op, int64_t opset)
{
	const om_op *r = om_op_find("", op, opset);
	return r && r->kernel;
}

/* Shape(x) -> Gather(0) -> Unsqueeze -> Concat(., [3], [-1]) -> Reshape, x:[N,3,H,W] */
static om_model *shufflenet_chain(int64_t opset, int64_t allowzero)
{
	om_model *m = tu_model(opset);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,3,H,W");
	ints(g, "i0", 0, 1, (int64_t[]){0});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "three", 1, 1, (int64_t[]){3});
	ints(g, "minus1", 1, 1, (int64_t[]){-1});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i0", "n");
	tu_graph_node(g, "Unsqueeze", "n,ax0", "nu");
	attr_int(tu_graph_node(g, "Concat", "nu,three,minus1", "target"), "axis", 0);
	om_node *r = tu_graph_node(g, "Reshape", "x,target", "y");
	if (allowzero)
		attr_int(r, "allowzero", 1);
	output(g, "y", OM_FLOAT, "N,3,?");
	return m;
}

/* ---- tests --------------------------------------------------------------------------- */

static void reshape_target_becomes_literal(void **state)
{
	(void)state;
	om_model *m = shufflenet_chain(13, 0);
	simplify(m, NULL);
	om_graph *g = m->graph;
	assert_int_equal(g->nnodes, 1);
	om_node *r = g->nodes[0];
	assert_string_equal(r->op, "Reshape");
	assert_string_equal(r->out[0]->name, "y");
	assert_string_equal(r->in[0]->name, "x");
	assert_ints(r->in[1], 3, (int64_t[]){0, 3, -1}); /* N is x's dim 0: copy it */
	/* the graph input keeps its symbols, the chain's constants are gone */
	assert_int_equal(g->ninputs, 1);
	assert_string_equal(g->inputs[0]->type.dims[0].param, "N");
	assert_int_equal(g->inputs[0]->type.dims[0].value, -1);
	assert_int_equal(g->ninits, 1);
	om_model_free(m);
}

static void allowzero_uses_minus_one(void **state)
{
	(void)state;
	/* allowzero: N cannot be written as 0; with -1 already present nothing is free */
	om_model *m = shufflenet_chain(14, 1);
	simplify(m, NULL);
	assert_int_equal(m->graph->nnodes, 5);
	om_model_free(m);

	m = tu_model(14);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,3,4,5");
	ints(g, "i0", 0, 1, (int64_t[]){0});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "rest", 1, 2, (int64_t[]){3, 20});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i0", "n");
	tu_graph_node(g, "Unsqueeze", "n,ax0", "nu");
	attr_int(tu_graph_node(g, "Concat", "nu,rest", "target"), "axis", 0);
	attr_int(tu_graph_node(g, "Reshape", "x,target", "y"), "allowzero", 1);
	output(g, "y", OM_FLOAT, "");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	assert_ints(g->nodes[0]->in[1], 3, (int64_t[]){-1, 3, 20});
	om_model_free(m);
}

static void symbols_at_other_positions_stay(void **state)
{
	(void)state;
	/* x:[N,S,8] -> Reshape to [S, N, 8]: two extents unknown as numbers: no literal */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,S,8");
	ints(g, "i0", 0, 1, (int64_t[]){0});
	ints(g, "i1", 0, 1, (int64_t[]){1});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "eight", 1, 1, (int64_t[]){8});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i0", "n");
	tu_graph_node(g, "Gather", "s,i1", "sq");
	tu_graph_node(g, "Unsqueeze", "n,ax0", "nu");
	tu_graph_node(g, "Unsqueeze", "sq,ax0", "su");
	attr_int(tu_graph_node(g, "Concat", "su,nu,eight", "target"), "axis", 0);
	tu_graph_node(g, "Reshape", "x,target", "y");
	output(g, "y", OM_FLOAT, "");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 7);
	assert_int_equal(tu_count_op(g, "Shape"), 1);
	om_model_free(m);
}

/* x:[1,N,C] reshaped to [1, N, 2, C/2] (issue 9 #4), or x:[1,4,C] to [4, 2, C/2]: -1 for C/2
 * only where the other entries can never be 0 */
static om_model *reshape_half_chain(const char *xdims, int64_t ncopy)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, xdims);
	ints(g, "i1", 0, 1, (int64_t[]){1});
	ints(g, "i2", 0, 1, (int64_t[]){2});
	ints(g, "two", 0, 1, (int64_t[]){2});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "lead", 1, 1, (int64_t[]){1});
	ints(g, "mid", 1, 1, (int64_t[]){2});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i1", "n");
	tu_graph_node(g, "Unsqueeze", "n,ax0", "nu");
	tu_graph_node(g, "Gather", "s,i2", "c");
	tu_graph_node(g, "Div", "c,two", "h");
	tu_graph_node(g, "Unsqueeze", "h,ax0", "hu");
	if (ncopy)
		attr_int(tu_graph_node(g, "Concat", "lead,nu,mid,hu", "target"), "axis", 0);
	else
		attr_int(tu_graph_node(g, "Concat", "nu,mid,hu", "target"), "axis", 0);
	tu_graph_node(g, "Reshape", "x,target", "y");
	output(g, "y", OM_FLOAT, "");
	return m;
}

static void minus_one_only_where_resolvable(void **state)
{
	(void)state;
	/* N is copied (0) and may be 0 at run time: [1,0,2,-1] would be rejected there */
	om_model *m = reshape_half_chain("1,N,C", 1);
	simplify(m, NULL);
	om_graph *g = m->graph;
	assert_int_equal(tu_count_op(g, "Reshape"), 1);
	assert_int_equal(tu_count_op(g, "Shape"), 1);
	assert_int_equal(tu_count_op(g, "Concat"), 1);
	om_model_free(m);

	/* x:[1,4,C] -> [4, 2, C/2]: every other entry a positive number, -1 is exact */
	m = reshape_half_chain("1,4,C", 0);
	simplify(m, NULL);
	g = m->graph;
	assert_int_equal(g->nnodes, 1);
	assert_ints(g->nodes[0]->in[1], 3, (int64_t[]){4, 2, -1});
	om_model_free(m);
}

/* Slice(x:[N,4], starts, ends, axes [1,0], steps) -> Relu -> y */
static int32_t slices_left(int64_t end1, int64_t step0)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,4");
	ints(g, "st", 1, 2, (int64_t[]){0, 0});
	ints(g, "en", 1, 2, (int64_t[]){end1, INT64_MAX});
	ints(g, "ax", 1, 2, (int64_t[]){1, -2});
	ints(g, "sp", 1, 2, (int64_t[]){1, step0});
	tu_graph_node(g, "Slice", "x,st,en,ax,sp", "s");
	tu_graph_node(g, "Relu", "s", "y");
	output(g, "y", OM_FLOAT, "");
	simplify(m, NULL);
	int32_t k = tu_count_op(g, "Slice");
	if (!k)
		assert_string_equal(g->nodes[0]->in[0]->name, "x");
	om_model_free(m);
	return k;
}

static void slice_of_everything_goes(void **state)
{
	(void)state;
	assert_int_equal(slices_left(4, 1), 0);
	assert_int_equal(slices_left(INT64_MAX, 1), 0);
	assert_int_equal(slices_left(3, 1), 1);  /* drops the last column */
	assert_int_equal(slices_left(4, -1), 1); /* reverses the rows (start 0 clamps to N-1) */
	assert_int_equal(slices_left(4, 2), 1);  /* every other row */
}

/* Pad(x) -> out at `opset` in `mode`: pads (n values) as Pad-2's attribute or Pad-11's input,
 * the constant value (when not 0) as Pad-2's attribute or Pad-11's scalar input */
static om_node *pad_node(om_graph *g, int64_t opset, const int64_t *pads, int32_t n,
			 const char *mode, float value, const char *out)
{
	const bool attr = opset < 11;
	om_node *p = tu_graph_node(g, "Pad", attr ? "x" : value ? "x,pads,v" : "x,pads", out);
	if (attr) {
		tu_attr_ints(p, "pads", n, pads);
		if (value)
			om_node_set_attr(p, "value", OM_ATTR_FLOAT)->f = value;
	} else {
		ints(g, "pads", 1, n, pads);
		if (value)
			floats(g, "v", 1, &value)->init->rank = 0;
	}
	om_node_set_attr(p, "mode", OM_ATTR_STRING)->s = (om_str){mode, (int64_t)strlen(mode)};
	return p;
}

/* m (simplified) agrees with orig on random inputs (om_check, N = 1..3) and on an x of the
 * shape zero (N = 0) */
static void agrees_with_original(const om_model *orig, const om_model *m, int32_t rank,
				 const int64_t *zero, const char *what)
{
	om_status st = {0};
	om_check_report rep;
	om_check_options o = {.runs = 3};
	if (om_check(orig, m, &o, &rep, &st))
		fail_msg("%s: %s: %s", what, st.op, st.msg);
	if (!rep.passed)
		fail_msg("%s: results differ (%s)", what, rep.error);
	om_check_report_free(&rep);
	om_tensor x0 = {0};
	assert_int_equal(om_tensor_alloc(&x0, OM_FLOAT, rank, zero, &st), OM_OK);
	o = (om_check_options){.runs = 1, .input_names = (const char *const[]){"x"},
			       .inputs = &x0, .ninputs = 1};
	if (om_check(orig, m, &o, &rep, &st))
		fail_msg("%s, N = 0: %s: %s", what, st.op, st.msg);
	if (!rep.passed)
		fail_msg("%s, N = 0: results differ (%s)", what, rep.error);
	om_check_report_free(&rep);
	om_tensor_free(&x0);
}

/* Pad(x:[N,4]) -> Relu -> y at `opset` (pads: Pad-2's attribute, Pad-11's input) in `mode`:
 * the Pads simplify leaves, the simplified model checked against the original at N = 1..3
 * and 0 */
static int32_t pads_left(int64_t opset, const int64_t *pads, const char *mode)
{
	om_model *m = tu_model(opset);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,4");
	pad_node(g, opset, pads, 4, mode, 0, "s");
	tu_graph_node(g, "Relu", "s", "y");
	output(g, "y", OM_FLOAT, "");
	om_model *orig = tu_reload(m);
	simplify(m, NULL);
	const int32_t k = tu_count_op(g, "Pad");
	if (!k)
		assert_string_equal(g->nodes[0]->in[0]->name, "x");
	agrees_with_original(orig, m, 2, (int64_t[]){0, 4}, mode);
	om_model_free(orig);
	om_model_free(m);
	return k;
}

static void pad_of_nothing_goes(void **state)
{
	(void)state;
	const int64_t zero[] = {0, 0, 0, 0}, shift[] = {0, 1, 0, -1}, grow[] = {1, 0, 0, 0};
	assert_int_equal(pads_left(13, zero, "constant"), 0);
	assert_int_equal(pads_left(18, zero, "reflect"), 0);
	assert_int_equal(pads_left(2, zero, "edge"), 0);
	assert_int_equal(pads_left(13, shift, "constant"), 1); /* the same shape, shifted */
	assert_int_equal(pads_left(2, shift, "constant"), 1);
	assert_int_equal(pads_left(13, grow, "constant"), 1);
}

/* the cases of pad_into_reader: Pad(x [N,2,5,6]) -> reader -> y */
typedef struct pad_case {
	const char *reader; /* "Conv" (3x3, W [3,2,3,3]), "AveragePool" (3x3), "MaxPool" */
	int64_t opset;
	int64_t pads[8];     /* Pad's */
	int64_t rpads;       /* the reader's pads on every side (-1: no attribute) */
	int64_t cip, ceil;   /* AveragePool's count_include_pad, ceil_mode */
	const char *mode;    /* Pad's */
	float value;         /* Pad's constant value */
	bool second_reader;  /* the padded value is a graph output too */
	bool fuses;
} pad_case;

/* Pad(x) -> reader -> y simplified: the Pad goes into the reader's pads (and AveragePool's
 * count_include_pad) exactly when the case says so, and the result agrees with the original
 * (om_check at N = 1..3 and at N = 0) */
static void pad_case_run(const pad_case *k)
{
	om_model *m = tu_model(k->opset);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,2,5,6");
	pad_node(g, k->opset, k->pads, 8, k->mode, k->value, "xp");
	om_node *r;
	if (!strcmp(k->reader, "Conv")) {
		om_tensor *w = om_model_tensor(m, OM_FLOAT, 4, (int64_t[]){3, 2, 3, 3});
		tu_fill(w->data, 54, 3, 0.3f);
		initializer(g, "W", w);
		r = tu_graph_node(g, "Conv", "xp,W", "y");
	} else {
		r = tu_graph_node(g, k->reader, "xp", "y");
		tu_attr_ints(r, "kernel_shape", 2, (int64_t[]){3, 3});
		if (!strcmp(k->reader, "AveragePool")) {
			attr_int(r, "count_include_pad", k->cip);
			attr_int(r, "ceil_mode", k->ceil);
			tu_attr_ints(r, "strides", 2, (int64_t[]){2, 1});
		}
	}
	if (k->rpads >= 0)
		tu_attr_ints(r, "pads", 4, (int64_t[]){k->rpads, k->rpads, k->rpads, k->rpads});
	output(g, "y", OM_FLOAT, "");
	if (k->second_reader)
		output(g, "xp", OM_FLOAT, "");
	om_model *orig = tu_reload(m);
	simplify(m, NULL);
	if ((tu_count_op(g, "Pad") == 0) != k->fuses)
		fail_msg("%s opset %lld mode %s: the Pad %s", k->reader, (long long)k->opset,
			 k->mode, k->fuses ? "stays" : "went");
	char what[64];
	snprintf(what, sizeof what, "%s opset %lld", k->reader, (long long)k->opset);
	agrees_with_original(orig, m, 4, (int64_t[]){0, 2, 5, 6}, what);
	om_model_free(orig);
	om_model_free(m);
}

static void pad_into_reader(void **state)
{
	(void)state;
	/* spatial pads: H begin 1, W begin 2, H end 2, W end 0 */
	static const pad_case cases[] = {
		{"Conv", 13, {0, 0, 1, 2, 0, 0, 2, 0}, 1, 0, 0, "constant", 0, false, true},
		{"Conv", 13, {0, 0, 1, 2, 0, 0, 2, 0}, -1, 0, 0, "constant", 0, false, true},
		{"Conv", 2, {0, 0, 1, 2, 0, 0, 2, 0}, 0, 0, 0, "constant", 0, false, true},
		{"Conv", 18, {0, 0, 1, 2, 0, 0, 2, 0}, 1, 0, 0, "constant", 0, false, true},
		{"AveragePool", 13, {0, 0, 1, 1, 0, 0, 1, 1}, -1, 0, 0, "constant", 0, false, true},
		{"AveragePool", 13, {0, 0, 1, 2, 0, 0, 2, 0}, 1, 1, 0, "constant", 0, false, true},
		{"AveragePool", 11, {0, 0, 1, 1, 0, 0, 1, 1}, 0, 0, 0, "constant", 0, false, true},
		/* stay: the pool's own pads not counted, ceil_mode, a value not 0, a channel pad,
		 * reflect, a second reader, MaxPool */
		{"AveragePool", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 1, 0, 0, "constant", 0, false, false},
		{"AveragePool", 13, {0, 0, 1, 1, 0, 0, 1, 1}, -1, 1, 1, "constant", 0, false, false},
		{"Conv", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0, 0, 0, "constant", 1.5f, false, false},
		{"Conv", 2, {0, 0, 1, 1, 0, 0, 1, 1}, 0, 0, 0, "constant", 1.5f, false, false},
		{"AveragePool", 13, {0, 1, 1, 1, 0, 0, 1, 1}, 0, 1, 0, "constant", 0, false, false},
		{"Conv", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0, 0, 0, "reflect", 0, false, false},
		{"Conv", 13, {0, 0, 1, 1, 0, 0, 1, 1}, 0, 0, 0, "constant", 0, true, false},
		{"MaxPool", 13, {0, 0, 1, 1, 0, 0, 1, 1}, -1, 0, 0, "constant", 0, false, false},
	};
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
		pad_case_run(&cases[i]);
}

/* Slice(x:[N,C], starts, ends, axes=[axis], steps=[step]) -> Relu -> y where the bound in
 * `slot` (1 starts, 2 ends) is Shape(x)[dim] and the other one the number `other` */
static om_model *slice_to_extent(int32_t slot, int64_t dim, int64_t axis, int64_t step,
				 int64_t other)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,C");
	ints(g, "d", 0, 1, (int64_t[]){dim});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "other", 1, 1, (int64_t[]){other});
	ints(g, "axes", 1, 1, (int64_t[]){axis});
	ints(g, "steps", 1, 1, (int64_t[]){step});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,d", "e");
	tu_graph_node(g, "Unsqueeze", "e,ax0", "b");
	tu_graph_node(g, "Slice", slot == 1 ? "x,b,other,axes,steps" : "x,other,b,axes,steps",
		      "sl");
	tu_graph_node(g, "Relu", "sl", "y");
	output(g, "y", OM_FLOAT, "");
	simplify(m, NULL);
	return m;
}

static void slice_bound_at_extent_is_int64_max(void **state)
{
	(void)state;
	/* x[:, 0:C] is x */
	om_model *m = slice_to_extent(2, 1, 1, 1, 0);
	assert_int_equal(m->graph->nnodes, 1);
	assert_string_equal(m->graph->nodes[0]->in[0]->name, "x");
	om_model_free(m);
	/* x[:, C:0:-1] (axis -1): start INT64_MAX, clamped to C-1 as C is */
	m = slice_to_extent(1, 1, -1, -1, 0);
	assert_int_equal(m->graph->nnodes, 2);
	assert_int_equal(tu_count_op(m->graph, "Shape"), 0);
	om_node *sl = m->graph->nodes[0];
	assert_string_equal(sl->op, "Slice");
	assert_ints(sl->in[1], 1, (int64_t[]){INT64_MAX});
	om_model_free(m);
	/* x[:, 0:C:-1]: an end of INT64_MAX would mean "through element 0", INT64_MAX - 1 is
	 * clamped to C - 1 as C is */
	m = slice_to_extent(2, 1, 1, -1, 0);
	assert_int_equal(tu_count_op(m->graph, "Shape"), 0);
	assert_ints(m->graph->nodes[0]->in[2], 1, (int64_t[]){INT64_MAX - 1});
	om_model_free(m);
	/* x[:, 1:N]: N is not the extent of axis 1, it stays a shape chain */
	m = slice_to_extent(2, 0, 1, 1, 1);
	assert_int_equal(tu_count_op(m->graph, "Shape"), 1);
	om_model_free(m);
}

static void known_dims_fold_to_numbers(void **state)
{
	(void)state;
	/* Shape(x:[N,3,H,W])[1] is the literal 3; Reshape of Relu(x) to Shape(Relu(x)) is the
	 * identity, and the graph output keeps its name */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,3,H,W");
	ints(g, "i1", 0, 1, (int64_t[]){1});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i1", "c");
	tu_graph_node(g, "Relu", "x", "r");
	tu_graph_node(g, "Shape", "r", "rs");
	tu_graph_node(g, "Reshape", "r,rs", "y");
	output(g, "y", OM_FLOAT, "N,3,H,W");
	output(g, "c", OM_INT64, "");
	simplify(m, NULL);
	/* c is a graph output: its producer becomes a Constant node of that name */
	assert_int_equal(g->nnodes, 2);
	assert_string_equal(g->nodes[0]->op, "Constant");
	assert_string_equal(g->nodes[0]->out[0]->name, "c");
	const om_tensor *t = om_attr_tensor(g->nodes[0], "value");
	assert_non_null(t);
	assert_int_equal(t->rank, 0);
	assert_int_equal(*(const int64_t *)t->data, 3);
	assert_string_equal(g->nodes[1]->op, "Relu");
	assert_string_equal(g->nodes[1]->out[0]->name, "y");
	assert_int_equal(g->ninits, 0);
	om_model_free(m);
}

static void unknown_extents_are_not_numbers(void **state)
{
	(void)state;
	/* a Reshape to a run-time target has rank 2 but no known extents: its Shape stays */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,4");
	input(g, "t", OM_INT64, "2");
	ints(g, "i1", 0, 1, (int64_t[]){1});
	tu_graph_node(g, "Reshape", "x,t", "r");
	tu_graph_node(g, "Shape", "r", "s");
	tu_graph_node(g, "Gather", "s,i1", "y");
	output(g, "y", OM_INT64, "");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 3);
	assert_int_equal(tu_count_op(g, "Constant"), 0);
	om_model_free(m);
}

static void identity_keeps_output_name(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,3");
	tu_graph_node(g, "Relu", "x", "a");
	tu_graph_node(g, "Identity", "a", "b");
	tu_graph_node(g, "Dropout", "b", "c");
	tu_graph_node(g, "Cast", "c", "y");
	attr_int(g->nodes[2], "to", OM_FLOAT);
	attr_int(g->nodes[3], "to", OM_FLOAT);
	tu_graph_node(g, "Identity", "x", "z"); /* graph input to graph output: must stay */
	output(g, "y", OM_FLOAT, "2,3");
	output(g, "z", OM_FLOAT, "2,3");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 2);
	assert_string_equal(g->nodes[0]->op, "Relu");
	assert_string_equal(g->nodes[0]->out[0]->name, "y");
	assert_ptr_equal(g->outputs[0]->producer, g->nodes[0]);
	assert_string_equal(g->nodes[1]->op, "Identity");
	assert_string_equal(g->nodes[1]->out[0]->name, "z");
	om_model_free(m);
}

/* Exporters share a weight through Identity(initializer); folding those and merging equal
 * initializers must leave one copy, read by both consumers. Twin nodes then merge too. */
static void shared_weights_stay_shared(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,3");
	const float w[] = {1, 2, 3};
	floats(g, "w", 3, w);
	floats(g, "w_copy", 3, w); /* a second initializer with the same bytes */
	tu_graph_node(g, "Identity", "w", "w_shared");
	tu_graph_node(g, "Mul", "x,w_shared", "a");
	tu_graph_node(g, "Mul", "x,w_copy", "b");
	tu_graph_node(g, "Add", "a,b", "y");
	output(g, "y", OM_FLOAT, "2,3");
	simplify(m, NULL);
	int weights = 0;
	for (int32_t i = 0; i < g->ninits; i++)
		weights += g->inits[i]->init && g->inits[i]->init->dtype == OM_FLOAT;
	assert_int_equal(weights, 1);
	assert_int_equal(tu_count_op(g, "Identity"), 0);
	/* Mul(x, w) twice is one Mul now: Add reads it twice */
	assert_int_equal(tu_count_op(g, "Mul"), 1);
	const om_node *add = g->outputs[0]->producer;
	assert_string_equal(add->op, "Add");
	assert_ptr_equal(add->in[0], add->in[1]);
	om_model_free(m);
}

static void reshapes_merge_and_expand_goes(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,3,4");
	input(g, "z", OM_FLOAT, "N,3");
	ints(g, "s64", 1, 2, (int64_t[]){6, 4});
	ints(g, "s24", 1, 1, (int64_t[]){24});
	ints(g, "e13", 1, 2, (int64_t[]){1, 3});
	tu_graph_node(g, "Reshape", "x,s64", "a");
	tu_graph_node(g, "Reshape", "a,s24", "y");
	tu_graph_node(g, "Expand", "z,e13", "ez"); /* broadcast to [N,3]: nothing to do */
	tu_graph_node(g, "Relu", "ez", "w");
	output(g, "y", OM_FLOAT, "24");
	output(g, "w", OM_FLOAT, "N,3");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 2);
	assert_string_equal(g->nodes[0]->op, "Reshape");
	assert_string_equal(g->nodes[0]->in[0]->name, "x");
	assert_ints(g->nodes[0]->in[1], 1, (int64_t[]){24});
	assert_string_equal(g->nodes[1]->op, "Relu");
	assert_string_equal(g->nodes[1]->in[0]->name, "z");
	assert_int_equal(g->ninits, 1);
	om_model_free(m);
}

static void dropout_with_mask_stays(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "4");
	tu_graph_node(g, "Relu", "x", "a");
	tu_graph_node(g, "Dropout", "a", "y,mask");
	output(g, "y", OM_FLOAT, "4");
	output(g, "mask", OM_BOOL, "4");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 2);
	om_model_free(m);
}

/* training_mode true with ratio 0 drops nothing (torchvision's swin_t): an identity; with
 * another ratio, or one not known, the Dropout stays */
static void dropout_of_ratio_zero_goes(void **state)
{
	(void)state;
	const float ratios[3] = {0.0f, 0.1f, 0.0f};
	for (int k = 0; k < 3; k++) {
		om_model *m = tu_model(13);
		om_graph *g = m->graph;
		input(g, "x", OM_FLOAT, "4");
		if (k == 2)
			input(g, "r", OM_FLOAT, "");
		else
			floats(g, "r", 1, &ratios[k]);
		om_tensor *t = om_model_tensor(m, OM_BOOL, 0, NULL);
		*(uint8_t *)t->data = 1;
		initializer(g, "train", t);
		tu_graph_node(g, "Relu", "x", "a");
		tu_graph_node(g, "Dropout", "a,r,train", "y");
		output(g, "y", OM_FLOAT, "4");
		simplify(m, NULL);
		assert_int_equal(g->nnodes, k == 0 ? 1 : 2);
		om_model_free(m);
	}
}

static void transposes_merge(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,3,4");
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "t1"), "perm", 3, (int64_t[]){1, 0, 2});
	tu_attr_ints(tu_graph_node(g, "Transpose", "t1", "t2"), "perm", 3, (int64_t[]){0, 2, 1});
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "u1"), "perm", 3, (int64_t[]){0, 2, 1});
	tu_attr_ints(tu_graph_node(g, "Transpose", "u1", "u2"), "perm", 3, (int64_t[]){0, 2, 1});
	tu_graph_node(g, "Relu", "u2", "z");
	tu_attr_ints(tu_graph_node(g, "Transpose", "z", "w"), "perm", 3, (int64_t[]){0, 1, 2});
	tu_graph_node(g, "Neg", "w", "v");
	output(g, "t2", OM_FLOAT, "3,4,2");
	output(g, "v", OM_FLOAT, "2,3,4");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 3);
	om_node *t = g->nodes[0];
	assert_string_equal(t->op, "Transpose");
	assert_string_equal(t->in[0]->name, "x");
	assert_string_equal(t->out[0]->name, "t2");
	int64_t k;
	const int64_t *perm = om_attr_ints(t, "perm", &k);
	assert_int_equal(k, 3);
	assert_int_equal(perm[0], 1); /* t2[i] = x[p[q[i]]]: [1, 2, 0] */
	assert_int_equal(perm[1], 2);
	assert_int_equal(perm[2], 0);
	assert_string_equal(g->nodes[1]->op, "Relu");
	assert_string_equal(g->nodes[1]->in[0]->name, "x");
	assert_string_equal(g->nodes[2]->op, "Neg");
	assert_string_equal(g->nodes[2]->in[0]->name, "z");
	om_model_free(m);
}

static void unsqueeze_squeeze_cancel(void **state)
{
	(void)state;
	om_model *m = tu_model(11);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,5");
	tu_graph_node(g, "Relu", "x", "r");
	tu_attr_ints(tu_graph_node(g, "Unsqueeze", "r", "u"), "axes", 2, (int64_t[]){0, -1});
	tu_attr_ints(tu_graph_node(g, "Squeeze", "u", "y"), "axes", 2, (int64_t[]){3, 0});
	tu_attr_ints(tu_graph_node(g, "Unsqueeze", "r", "u2"), "axes", 1, (int64_t[]){0});
	tu_attr_ints(tu_graph_node(g, "Squeeze", "u2", "y2"), "axes", 1, (int64_t[]){1});
	output(g, "y", OM_FLOAT, "N,5");
	output(g, "y2", OM_FLOAT, "");
	simplify(m, NULL);
	/* y is r; Squeeze(Unsqueeze(r, [0]), [1]) (valid only for N = 1, declared a scalar)
	 * stays: its element count is not r's for every N */
	assert_int_equal(g->nnodes, 3);
	assert_string_equal(g->nodes[0]->out[0]->name, "y");
	assert_int_equal(tu_count_op(g, "Unsqueeze"), 1);
	assert_int_equal(tu_count_op(g, "Squeeze"), 1);
	om_model_free(m);
}

/* chains of views become one Reshape: its target copies a symbol at its own position (0) or
 * takes the one extent left (-1); a chain that ends with its input's shape goes */
static void view_chains_collapse(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,3,4");
	tu_graph_node(g, "Relu", "x", "r");
	ints(g, "ax1", 1, 1, (int64_t[]){1});
	ints(g, "s034", 1, 3, (int64_t[]){0, 3, 4});
	ints(g, "sm34", 1, 3, (int64_t[]){-1, 3, 4});
	/* Flatten -> Unsqueeze -> Reshape: back to [N,3,4] */
	attr_int(tu_graph_node(g, "Flatten", "r", "f"), "axis", 1);
	tu_graph_node(g, "Unsqueeze", "f,ax1", "fu");
	tu_graph_node(g, "Reshape", "fu,s034", "back");
	tu_graph_node(g, "Neg", "back", "y1");
	/* Unsqueeze -> Flatten(axis 0): [1, N*12] */
	tu_graph_node(g, "Unsqueeze", "r,ax1", "u");
	attr_int(tu_graph_node(g, "Flatten", "u", "flat"), "axis", 0);
	/* Flatten(axis 2) -> Reshape -> Unsqueeze: [N, 3, 1, 4] */
	attr_int(tu_graph_node(g, "Flatten", "r", "f2"), "axis", 2);
	ints(g, "ax2", 1, 1, (int64_t[]){2});
	tu_graph_node(g, "Reshape", "f2,sm34", "f3");
	tu_graph_node(g, "Unsqueeze", "f3,ax2", "y3");
	output(g, "y1", 0, NULL);
	output(g, "flat", 0, NULL);
	output(g, "y3", 0, NULL);
	simplify(m, NULL);
	/* Relu, Neg(r), Reshape(r, [1,-1]), Reshape(r, [-1,3,1,4]) */
	assert_int_equal(g->nnodes, 4);
	assert_int_equal(tu_count_op(g, "Reshape"), 2);
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (!strcmp(n->op, "Neg"))
			assert_string_equal(n->in[0]->name, "r");
		if (strcmp(n->op, "Reshape"))
			continue;
		assert_string_equal(n->in[0]->name, "r");
		const om_tensor *t = n->in[1]->init;
		assert_non_null(t);
		const int64_t *s = t->data;
		if (!strcmp(n->out[0]->name, "flat")) {
			assert_int_equal(om_tensor_numel(t), 2);
			assert_true(s[0] == 1 && s[1] == -1);
		} else {
			assert_string_equal(n->out[0]->name, "y3");
			assert_int_equal(om_tensor_numel(t), 4);
			/* f3's first extent is 3N / 3, a symbol of its own: the one -1 */
			assert_true(s[0] == -1 && s[1] == 3 && s[2] == 1 && s[3] == 4);
		}
	}
	om_model_free(m);
}

static void dead_code_and_unknown_domains(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "4");
	floats(g, "w", 4, (float[]){1, 2, 3, 4});
	floats(g, "unused_w", 2, (float[]){1, 2});
	tu_graph_node(g, "Mul", "x,w", "a");
	tu_graph_node(g, "Relu", "a", "dead1");
	tu_graph_node(g, "Neg", "dead1", "dead2");
	om_node *custom = om_graph_add_node(g, "MyOp", "com.example", "custom", 1, 1);
	custom->in[0] = om_graph_value(g, "a");
	om_node_set_output(custom, 0, om_graph_value(g, "side"));
	attr_int(custom, "alpha", 7);
	om_node *custom2 = om_graph_add_node(g, "MyOp", "com.example", "custom2", 1, 1);
	custom2->in[0] = om_graph_value(g, "a");
	om_node_set_output(custom2, 0, om_graph_value(g, "y"));
	output(g, "y", OM_FLOAT, "4");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 3); /* Mul, the unused MyOp (other domain) and MyOp */
	assert_string_equal(g->nodes[0]->op, "Mul");
	assert_string_equal(g->nodes[1]->domain, "com.example");
	assert_int_equal(om_attr_int(g->nodes[1], "alpha", 0), 7);
	assert_int_equal(g->ninits, 1);
	assert_string_equal(g->inits[0]->name, "w");
	om_model_free(m);
}

static void skip_by_name(void **state)
{
	(void)state;
	om_model *m = shufflenet_chain(13, 0);
	const char *const skip[] = {"fold_shape_chains", NULL};
	simplify(m, skip);
	assert_int_equal(m->graph->nnodes, 5);
	om_model_free(m);

	m = shufflenet_chain(13, 0);
	const char *const bad[] = {"no_such_pass", NULL};
	om_simplify_options o = {.skip = bad};
	om_status st = {0};
	assert_int_equal(om_simplify(m, &o, &st), OM_ERR_INVALID_INPUT);
	assert_non_null(strstr(st.msg, "no_such_pass"));
	assert_int_equal(m->graph->nnodes, 5);
	om_model_free(m);
	for (int i = 0; om_simplify_pass_name(i); i++)
		assert_true(strlen(om_simplify_pass_name(i)) > 0);
	assert_string_equal(om_simplify_pass_name(0), "infer_shapes");
}

static void constant_node_becomes_initializer(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_INT64, "3");
	om_node *k = tu_graph_node(g, "Constant", "", "k");
	om_attr *a = om_node_set_attr(k, "value", OM_ATTR_TENSOR);
	a->t = om_model_tensor(m, OM_INT64, 1, (int64_t[]){3});
	memcpy(a->t->data, (int64_t[]){5, 6, 7}, 24);
	tu_graph_node(g, "Add", "x,k", "y");
	output(g, "y", OM_INT64, "3");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	assert_string_equal(g->nodes[0]->op, "Add");
	assert_ints(g->nodes[0]->in[1], 3, (int64_t[]){5, 6, 7});
	assert_string_equal(g->nodes[0]->in[1]->name, "k");
	om_model_free(m);
}

static void where_equal_expand(void **state)
{
	(void)state;
	/* PyTorch's expand: Where(Equal(shape, -1), ones, shape) with shape = [N, 3] of x:[N,1] */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,1");
	ints(g, "i0", 1, 1, (int64_t[]){0});
	ints(g, "three", 1, 1, (int64_t[]){3});
	ints(g, "m1", 0, 1, (int64_t[]){-1});
	ints(g, "ones", 1, 2, (int64_t[]){1, 1});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i0", "n");
	attr_int(tu_graph_node(g, "Concat", "n,three", "shape"), "axis", 0);
	tu_graph_node(g, "Equal", "shape,m1", "eq");
	tu_graph_node(g, "Where", "eq,ones,shape", "w");
	tu_graph_node(g, "Expand", "x,w", "y");
	output(g, "y", OM_FLOAT, "N,3");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	assert_string_equal(g->nodes[0]->op, "Expand");
	assert_ints(g->nodes[0]->in[1], 2, (int64_t[]){1, 3});
	om_model_free(m);
}

static void subgraph_is_simplified(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "c", OM_BOOL, "");
	input(g, "x", OM_FLOAT, "2");
	om_node *iff = tu_graph_node(g, "If", "c", "y");
	output(g, "y", OM_FLOAT, "2");
	for (int b = 0; b < 2; b++) {
		om_graph *sub = om_graph_new(m, g);
		om_value *xo = om_graph_value(sub, "x");
		xo->flags |= OM_VALUE_OUTER;
		tu_graph_node(sub, b ? "Neg" : "Relu", "x", "r");
		tu_graph_node(sub, "Identity", "r", b ? "out_else" : "out_then");
		output(sub, b ? "out_else" : "out_then", OM_FLOAT, "2");
		const char *attr = b ? "else_branch" : "then_branch";
		om_node_set_attr(iff, attr, OM_ATTR_GRAPH)->g = sub;
	}
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	for (int b = 0; b < 2; b++) {
		const om_graph *sub = om_node_attr(iff, b ? "else_branch" : "then_branch")->g;
		assert_int_equal(sub->nnodes, 1);
		assert_string_equal(sub->nodes[0]->out[0]->name, b ? "out_else" : "out_then");
	}
	om_model_free(m);
}

static om_graph *branch(om_model *m, om_node *iff, const char *attr)
{
	om_graph *sub = om_graph_new(m, m->graph);
	om_node_set_attr(iff, attr, OM_ATTR_GRAPH)->g = sub;
	return sub;
}

static void constant_if_is_inlined(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2");
	om_value *c = om_graph_value(g, "c");
	c->init = om_model_tensor(m, OM_BOOL, 0, NULL);
	*(uint8_t *)c->init->data = 1;
	c->flags |= OM_VALUE_INITIALIZER;
	tu_push_value(g, &g->inits, &g->ninits, c);
	tu_graph_node(g, "Relu", "x", "r"); /* the then branch uses the name r too */
	om_node *iff = tu_graph_node(g, "If", "c", "y,z");
	tu_graph_node(g, "Neg", "y", "out");
	output(g, "out", OM_FLOAT, "2");
	output(g, "z", OM_FLOAT, "2");
	om_graph *t = branch(m, iff, "then_branch");
	om_graph_value(t, "x")->flags |= OM_VALUE_OUTER;
	om_graph_value(t, "r")->flags |= OM_VALUE_OUTER;
	tu_graph_node(t, "Sigmoid", "x", "s");
	tu_graph_node(t, "Mul", "s,r", "r_1");
	output(t, "r_1", OM_FLOAT, "2");
	output(t, "x", OM_FLOAT, "2"); /* an outer value as a branch output */
	om_graph *e = branch(m, iff, "else_branch");
	om_graph_value(e, "x")->flags |= OM_VALUE_OUTER;
	tu_graph_node(e, "Tanh", "x", "te");
	output(e, "te", OM_FLOAT, "2");
	output(e, "te", OM_FLOAT, "2");
	simplify(m, NULL);
	/* Relu, Sigmoid, Mul (writing y), Identity (x -> z), Neg */
	assert_int_equal(g->nnodes, 5);
	assert_int_equal(tu_count_op(g, "If"), 0);
	const om_node *mul = om_graph_find(g, "y")->producer;
	assert_non_null(mul);
	assert_string_equal(mul->op, "Mul");
	assert_string_equal(mul->in[1]->name, "r");
	assert_string_equal(mul->in[0]->producer->op, "Sigmoid");
	const om_node *id = g->outputs[1]->producer;
	assert_string_equal(id->op, "Identity");
	assert_string_equal(id->in[0]->name, "x");
	assert_string_equal(g->outputs[0]->producer->in[0]->name, "y");
	om_model_free(m);
}

/* c, x:[N,4] -> If(c) with untyped branch outputs Unsqueeze(Relu(x)) and Unsqueeze(Neg(x)),
 * y1:[1,N,4]; z = If(Size(Shape(y1)) == 3) of Squeeze(y1) and Identity(y1): silero's
 * pattern, a condition on the rank of another If's output. */
static om_model *if_on_if_rank(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "c", OM_BOOL, "");
	input(g, "x", OM_FLOAT, "N,4");
	om_node *if1 = tu_graph_node(g, "If", "c", "y1");
	for (int b = 0; b < 2; b++) {
		om_graph *sub = branch(m, if1, b ? "else_branch" : "then_branch");
		om_graph_value(sub, "x")->flags |= OM_VALUE_OUTER;
		ints(sub, "ax", 1, 1, (int64_t[]){0});
		tu_graph_node(sub, b ? "Neg" : "Relu", "x", "r");
		tu_graph_node(sub, "Unsqueeze", "r,ax", b ? "u_else" : "u_then");
		output(sub, b ? "u_else" : "u_then", 0, ""); /* no type declared */
	}
	ints(g, "three", 0, 1, (int64_t[]){3});
	tu_graph_node(g, "Shape", "y1", "s");
	tu_graph_node(g, "Size", "s", "rank");
	tu_graph_node(g, "Equal", "rank,three", "is3");
	om_node *if2 = tu_graph_node(g, "If", "is3", "z");
	om_graph *t = branch(m, if2, "then_branch");
	om_graph_value(t, "y1")->flags |= OM_VALUE_OUTER;
	ints(t, "ax", 1, 1, (int64_t[]){0});
	tu_graph_node(t, "Squeeze", "y1,ax", "sq");
	output(t, "sq", 0, "");
	om_graph *e = branch(m, if2, "else_branch");
	om_graph_value(e, "y1")->flags |= OM_VALUE_OUTER;
	tu_graph_node(e, "Identity", "y1", "id");
	output(e, "id", 0, "");
	output(g, "z", OM_FLOAT, "");
	g->outputs[0]->type.rank = -1; /* declared float, rank unknown */
	return m;
}

/* An If's output type is the join of its branches' inferred outputs (written into the
 * branches' output declarations), so a condition on its rank folds and the second If goes;
 * the graph output, declared without a shape, takes the inferred one. Differential: the same z at N = 0, 1, 3 for
 * both conditions. */
static void if_output_typed_from_branches(void **state)
{
	(void)state;
	om_model *a = if_on_if_rank(), *b = if_on_if_rank();
	simplify(b, NULL);
	const om_graph *g = b->graph;
	assert_int_equal(tu_count_op(g, "If"), 1);
	assert_int_equal(tu_count_op(g, "Squeeze"), 1);
	const om_type *zt = &g->outputs[0]->type;
	assert_int_equal(zt->rank, 2); /* If's join keeps numbers only: [?, 4] */
	assert_false(om_dim_known(zt->dims[0]));
	assert_int_equal(zt->dims[1].value, 4);
	const om_node *if1 = g->outputs[0]->producer->in[0]->producer;
	assert_non_null(if1);
	assert_string_equal(if1->op, "If");
	assert_int_equal(om_node_attr(if1, "then_branch")->g->outputs[0]->type.rank, 3);
	om_session *sa = tu_session_create(a), *sb = tu_session_create(b);
	for (int64_t n = 0; n <= 3; n += n ? 2 : 1)
		for (int cond = 0; cond < 2; cond++) {
			float xd[12];
			for (int i = 0; i < 12; i++)
				xd[i] = (float)(i % 5) - 2.0f;
			uint8_t cd = (uint8_t)cond;
			om_tensor in[2] = {{.dtype = OM_BOOL, .rank = 0, .data = &cd, .nbytes = 1},
					   {.dtype = OM_FLOAT, .rank = 2, .dims = {n, 4}, .data = xd,
					    .nbytes = sizeof(float) * (size_t)(n * 4)}};
			om_tensor ya, yb;
			om_status st = {0};
			if (om_session_run(sa, in, 2, &ya, 1, &st) || om_session_run(sb, in, 2, &yb, 1, &st))
				fail_msg("run: %s", st.msg);
			assert_int_equal(ya.rank, 2);
			assert_int_equal(yb.rank, 2);
			assert_int_equal(ya.dims[0], n);
			assert_int_equal(yb.dims[0], n);
			assert_int_equal(yb.nbytes, ya.nbytes);
			for (int64_t i = 0; i < n * 4; i++) {
				const float want = cond ? (xd[i] > 0 ? xd[i] : 0) : -xd[i];
				assert_true(((const float *)ya.data)[i] == want);
				assert_true(((const float *)yb.data)[i] == want);
			}
			om_tensor_free(&ya);
			om_tensor_free(&yb);
		}
	om_session_free(sa);
	om_session_free(sb);
	om_model_free(a);
	om_model_free(b);
}

static void torch_pad_pattern(void **state)
{
	(void)state;
	if (!has_kernel("Mod", 13) || !has_kernel("Slice", 13) || !has_kernel("Transpose", 13))
		skip();
	/* F.pad's pads: a shape-derived vector as pairs, reversed, transposed, flattened */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,5");
	ints(g, "i1", 0, 1, (int64_t[]){1});
	ints(g, "four", 0, 1, (int64_t[]){4});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	ints(g, "rest", 1, 3, (int64_t[]){0, 0, 2});
	ints(g, "pairs", 1, 2, (int64_t[]){-1, 2});
	ints(g, "flat", 1, 1, (int64_t[]){-1});
	ints(g, "st", 1, 1, (int64_t[]){-1});
	ints(g, "en", 1, 1, (int64_t[]){INT64_MIN});
	ints(g, "sp", 1, 1, (int64_t[]){-1});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i1", "w");
	tu_graph_node(g, "Mod", "w,four", "r");
	tu_graph_node(g, "Unsqueeze", "r,ax0", "ru");
	attr_int(tu_graph_node(g, "Concat", "ru,rest", "p4"), "axis", 0);
	tu_graph_node(g, "Reshape", "p4,pairs", "p22");
	tu_graph_node(g, "Slice", "p22,st,en,ax0,sp", "rev");
	tu_attr_ints(tu_graph_node(g, "Transpose", "rev", "tr"), "perm", 2, (int64_t[]){1, 0});
	tu_graph_node(g, "Reshape", "tr,flat", "pads");
	tu_graph_node(g, "Pad", "x,pads", "y");
	output(g, "y", OM_FLOAT, "");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 1);
	assert_string_equal(g->nodes[0]->op, "Pad");
	/* [[1,0],[0,2]] reversed [[0,2],[1,0]], transposed [[0,1],[2,0]] */
	assert_ints(g->nodes[0]->in[1], 4, (int64_t[]){0, 1, 2, 0});
	om_model_free(m);
}

static void fold_with_kernels(void **state)
{
	(void)state;
	if (!has_kernel("Add", 13) || !has_kernel("Mul", 13))
		skip();
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "4");
	floats(g, "a", 4, (float[]){1, 2, 3, 4});
	floats(g, "b", 4, (float[]){10, 20, 30, 40});
	tu_graph_node(g, "Add", "a,b", "s");
	tu_graph_node(g, "Mul", "x,s", "y");
	tu_graph_node(g, "Neg", "a", "z"); /* a constant graph output: a Constant node named z */
	output(g, "y", OM_FLOAT, "4");
	output(g, "z", OM_FLOAT, "4");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 2);
	assert_string_equal(g->nodes[1]->op, "Constant");
	assert_string_equal(g->nodes[1]->out[0]->name, "z");
	assert_true(((const float *)om_attr_tensor(g->nodes[1], "value")->data)[3] == -4);
	const om_value *s = g->nodes[0]->in[1];
	assert_string_equal(s->name, "s");
	assert_non_null(s->init);
	const float *f = s->init->data;
	assert_true(f[0] == 11 && f[1] == 22 && f[2] == 33 && f[3] == 44);
	assert_int_equal(g->ninits, 1); /* a and b are gone */
	om_model_free(m);

	/* over the budget: left alone */
	m = tu_model(13);
	g = m->graph;
	input(g, "x", OM_FLOAT, "4");
	floats(g, "a", 4, (float[]){1, 2, 3, 4});
	floats(g, "b", 4, (float[]){10, 20, 30, 40});
	tu_graph_node(g, "Add", "a,b", "s");
	tu_graph_node(g, "Mul", "x,s", "y");
	output(g, "y", OM_FLOAT, "4");
	om_simplify_options o = {.fold_max_bytes = 8, .verify = 1};
	assert_int_equal(om_simplify(m, &o, NULL), OM_OK);
	assert_int_equal(g->nnodes, 2);
	om_model_free(m);
}

static void common_nodes_merge(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "B,S,4");
	input(g, "q", OM_FLOAT, "B,S,8");
	ints(g, "i1", 0, 1, (int64_t[]){1});
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "t1"), "perm", 3, (int64_t[]){0, 2, 1});
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "t2"), "perm", 3, (int64_t[]){0, 2, 1});
	tu_attr_ints(tu_graph_node(g, "Transpose", "x", "t3"), "perm", 3, (int64_t[]){1, 0, 2});
	tu_graph_node(g, "Add", "t1,t2", "sum");
	tu_graph_node(g, "Shape", "x", "sx");
	tu_graph_node(g, "Gather", "sx,i1", "s1");
	tu_graph_node(g, "Shape", "q", "sq");
	tu_graph_node(g, "Gather", "sq,i1", "s2"); /* also S: the same run-time value as s1 */
	tu_graph_node(g, "Add", "s1,s2", "ss");
	output(g, "sum", OM_FLOAT, "");
	output(g, "t3", OM_FLOAT, "");
	output(g, "ss", OM_INT64, "");
	/* push_transposes would move t1/t2 past the Add (Add(x, x), then one Transpose):
	 * this test is about merging */
	simplify(m, (const char *const[]){"push_transposes", NULL});
	assert_int_equal(g->nnodes, 6);
	assert_int_equal(tu_count_op(g, "Transpose"), 2);
	assert_int_equal(tu_count_op(g, "Shape"), 1);
	assert_int_equal(tu_count_op(g, "Gather"), 1);
	const om_node *sum = g->outputs[0]->producer;
	assert_ptr_equal(sum->in[0], sum->in[1]);
	const om_node *ss = g->outputs[2]->producer;
	assert_ptr_equal(ss->in[0], ss->in[1]);
	om_model_free(m);
}

static void verifier_catches_broken_ir(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "4");
	tu_graph_node(g, "Relu", "b", "a"); /* reads b before it is produced */
	tu_graph_node(g, "Neg", "x", "b");
	output(g, "a", OM_FLOAT, "4");
	om_status st = {0};
	assert_int_equal(om_verify_graph(g, &st), OM_ERR_INTERNAL);
	assert_string_equal(st.op, "Relu");
	tu_graph_node(g, "Neg", "nowhere", "c");
	g->nodes[0]->in[0] = g->nodes[1]->in[0];
	assert_int_equal(om_verify_graph(g, &st), OM_ERR_INTERNAL);
	assert_non_null(strstr(st.msg, "nowhere"));
	om_model_free(m);
}

/* a float initializer of shape dims (rank k) */
static om_value *floats_nd(om_graph *g, const char *name, int32_t k, const int64_t *dims,
			   const float *x)
{
	om_tensor *t = om_model_tensor(g->model, OM_FLOAT, k, dims);
	memcpy(t->data, x, sizeof(float) * (size_t)om_tensor_numel(t));
	return initializer(g, name, t);
}

static void assert_floats(const om_value *v, int32_t n, const float *want)
{
	assert_non_null(v);
	assert_non_null(v->init);
	assert_int_equal(v->init->dtype, OM_FLOAT);
	assert_int_equal(om_tensor_numel(v->init), n);
	for (int32_t i = 0; i < n; i++)
		assert_float_equal(((const float *)v->init->data)[i], want[i], 1e-6);
}

/* Conv(x, W, B) -> BatchNormalization(scale, bias, mean, var, epsilon 1) -> y */
static om_model *conv_bn(bool bias, bool conv_used_twice)
{
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "1,1,2,2");
	const int64_t wd[4] = {2, 1, 1, 1};
	floats_nd(g, "W", 4, wd, (const float[]){2, -1});
	floats(g, "B", 2, (const float[]){1, 0.5f});
	floats(g, "scale", 2, (const float[]){3, 1});
	floats(g, "beta", 2, (const float[]){0.5f, -2});
	floats(g, "mean", 2, (const float[]){1, 2});
	floats(g, "var", 2, (const float[]){3, 0});
	tu_graph_node(g, "Conv", bias ? "x,W,B" : "x,W", "c");
	om_node_set_attr(tu_graph_node(g, "BatchNormalization", "c,scale,beta,mean,var", "y"), "epsilon",
			 OM_ATTR_FLOAT)->f = 1.0f;
	tu_graph_node(g, "Conv", "x,W", "w2"); /* another reader of W: W must stay as it is */
	output(g, "y", OM_FLOAT, "1,2,2,2");
	output(g, "w2", OM_FLOAT, "1,2,2,2");
	if (conv_used_twice) {
		tu_graph_node(g, "Relu", "c", "r");
		output(g, "r", OM_FLOAT, "1,2,2,2");
	}
	return m;
}

static void conv_bn_fuses(void **state)
{
	(void)state;
	for (int bias = 0; bias < 2; bias++) {
		om_model *m = conv_bn(bias, false);
		om_graph *g = m->graph;
		simplify(m, NULL);
		assert_int_equal(tu_count_op(g, "BatchNormalization"), 0);
		assert_int_equal(tu_count_op(g, "Conv"), 2);
		const om_node *c = g->outputs[0]->producer;
		assert_non_null(c);
		assert_string_equal(c->op, "Conv");
		assert_string_equal(c->out[0]->name, "y");
		assert_int_equal(c->nin, 3);
		/* s = scale / sqrt(var + 1) = {1.5, 1}; W' = W * s; B' = (B - mean) * s + beta */
		assert_floats(c->in[1], 2, (const float[]){3, -1});
		assert_floats(c->in[2], 2,
			      bias ? (const float[]){0.5f, -3.5f} : (const float[]){-1, -4});
		assert_floats(om_graph_find(g, "W"), 2, (const float[]){2, -1});
		assert_floats(g->outputs[1]->producer->in[1], 2, (const float[]){2, -1});
		om_model_free(m);
	}
}

static void conv_bn_with_other_use_stays(void **state)
{
	(void)state;
	om_model *m = conv_bn(true, true);
	simplify(m, NULL);
	assert_int_equal(tu_count_op(m->graph, "BatchNormalization"), 1);
	om_model_free(m);
	m = conv_bn(true, false);
	simplify(m, (const char *const[]){"fuse_conv_bn", NULL});
	assert_int_equal(tu_count_op(m->graph, "BatchNormalization"), 1);
	om_model_free(m);
}

/* ConvTranspose(x [N,4,3,3], W [4, 3, 2, 2], group, stride 2) -> BatchNormalization -> y,
 * random weights and statistics (var > 0) */
static om_model *convt_bn(int64_t group, bool bias)
{
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,4,3,3");
	const int64_t M = 3 * group;
	float w[4 * 3 * 2 * 2], v[4][6];
	tu_fill(w, 48, 1, 1.0f);
	for (int k = 0; k < 4; k++)
		tu_fill(v[k], M, (uint32_t)(2 + k), 1.0f);
	for (int k = 0; k < M; k++)
		v[3][k] = 0.5f + v[3][k] * v[3][k]; /* var */
	floats_nd(g, "W", 4, (const int64_t[]){4, 3, 2, 2}, w);
	floats(g, "B", (int32_t)M, v[0]);
	floats(g, "scale", (int32_t)M, v[1]);
	floats(g, "beta", (int32_t)M, v[2]);
	floats(g, "var", (int32_t)M, v[3]);
	floats(g, "mean", (int32_t)M, v[0] + 1);
	om_node *t = tu_graph_node(g, "ConvTranspose", bias ? "x,W,B" : "x,W", "c");
	tu_attr_ints(t, "kernel_shape", 2, (int64_t[]){2, 2});
	tu_attr_ints(t, "strides", 2, (int64_t[]){2, 2});
	om_node_set_attr(t, "group", OM_ATTR_INT)->i = group;
	tu_graph_node(g, "BatchNormalization", "c,scale,beta,mean,var", "y");
	output(g, "y", OM_FLOAT, "");
	return m;
}

/* the BatchNormalization after a ConvTranspose (a decoder's) goes into its weight and bias,
 * with one group and two, with and without a bias: the simplified model agrees with the
 * original at N = 1..3 and 0 (a scale put on W's rows rather than its columns fails it) */
static void convt_bn_fuses(void **state)
{
	(void)state;
	for (int t = 0; t < 4; t++) {
		om_model *orig = convt_bn(1 + t / 2, t % 2), *m = convt_bn(1 + t / 2, t % 2);
		simplify(m, NULL);
		assert_int_equal(tu_count_op(m->graph, "BatchNormalization"), 0);
		assert_int_equal(tu_count_op(m->graph, "ConvTranspose"), 1);
		agrees_with_original(orig, m, 4, (const int64_t[]){0, 4, 3, 3}, "ConvTranspose + BN");
		om_model_free(orig);
		om_model_free(m);
	}
}

/* a model built in memory meets the loader's arity check in om_simplify: MatMul(x) alone */
static void simplify_checks_arity(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,2");
	tu_graph_node(g, "MatMul", "x", "y");
	output(g, "y", OM_FLOAT, "2,2");
	om_status st = {0};
	assert_int_equal(om_simplify(m, NULL, &st), OM_ERR_INVALID_MODEL);
	assert_string_equal(st.op, "MatMul");
	assert_non_null(strstr(st.msg, "at least 2"));
	om_model_free(m);
}

/* Conv(x, W) -> BatchNormalization, W (4.4 KB) read by another Conv too: fusing would copy W
 * and grow the model, so the BatchNormalization stays and the model does not grow */
static void conv_bn_shared_big_weight_stays(void **state)
{
	(void)state;
	enum { M = 1100 };
	om_model *m = tu_model(15);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "1,1,2,2");
	static float w[M], one[M], zero[M];
	for (int i = 0; i < M; i++)
		w[i] = (float)i, one[i] = 1, zero[i] = 0;
	floats_nd(g, "W", 4, (const int64_t[]){M, 1, 1, 1}, w);
	floats(g, "scale", M, one);
	floats(g, "beta", M, zero);
	floats(g, "mean", M, zero);
	floats(g, "var", M, one);
	tu_graph_node(g, "Conv", "x,W", "c");
	tu_graph_node(g, "BatchNormalization", "c,scale,beta,mean,var", "y");
	tu_graph_node(g, "Conv", "x,W", "w2");
	tu_graph_node(g, "Relu", "w2", "r");
	output(g, "y", OM_FLOAT, "1,1100,2,2");
	output(g, "r", OM_FLOAT, "1,1100,2,2");
	om_status st = {0};
	size_t before = 0, after = 0;
	assert_int_equal(om_model_saved_size(m, &before, &st), OM_OK);
	simplify(m, NULL);
	assert_int_equal(om_model_saved_size(m, &after, &st), OM_OK);
	assert_int_equal(tu_count_op(g, "BatchNormalization"), 1);
	assert_true(after <= before);
	om_model_free(m);
}

/* Conv(x, W, B) -> Mul(k [2,1,1]) -> Add(k2 [1,2,1,1] first) -> Sub(0.5) -> y; then a Mul by
 * [2,1] (broadcast over the last two axes, not the channel) and a Div by 0 stay */
static void conv_affine_fuses(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "1,1,2,2");
	floats_nd(g, "W", 4, (const int64_t[]){2, 1, 1, 1}, (const float[]){2, -1});
	floats(g, "B", 2, (const float[]){1, 0.5f});
	floats_nd(g, "k", 3, (const int64_t[]){2, 1, 1}, (const float[]){3, -2});
	floats_nd(g, "k2", 4, (const int64_t[]){1, 2, 1, 1}, (const float[]){1, 1});
	floats_nd(g, "half", 0, NULL, (const float[]){0.5f});
	floats_nd(g, "k3", 2, (const int64_t[]){2, 1}, (const float[]){3, 4});
	floats_nd(g, "zero", 1, (const int64_t[]){1}, (const float[]){0});
	tu_graph_node(g, "Conv", "x,W,B", "c");
	tu_graph_node(g, "Mul", "c,k", "m1");
	tu_graph_node(g, "Add", "k2,m1", "a1");
	tu_graph_node(g, "Sub", "a1,half", "y");
	output(g, "y", OM_FLOAT, "1,2,2,2");
	tu_graph_node(g, "Conv", "x,W", "c2");
	tu_graph_node(g, "Mul", "c2,k3", "z");
	output(g, "z", OM_FLOAT, "1,2,2,2");
	tu_graph_node(g, "Conv", "x,W,B", "c3");
	tu_graph_node(g, "Div", "c3,zero", "u");
	output(g, "u", OM_FLOAT, "1,2,2,2");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 5);
	const om_node *c = g->outputs[0]->producer;
	assert_string_equal(c->op, "Conv");
	assert_string_equal(c->out[0]->name, "y");
	/* W' = W * k; B' = (B * k + k2) - 0.5 */
	assert_floats(c->in[1], 2, (const float[]){6, 2});
	assert_floats(c->in[2], 2, (const float[]){3.5f, -0.5f});
	assert_string_equal(g->outputs[1]->producer->op, "Mul");
	assert_string_equal(g->outputs[2]->producer->op, "Div");
	assert_floats(om_graph_find(g, "B"), 2, (const float[]){1, 0.5f});
	om_model_free(m);
}

/* Conv -> Mul(k) -> m1, read by Add(k) and Relu: the Mul fuses, the Add must not (the Conv
 * output now has two readers) */
static void conv_affine_stops_at_second_use(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "1,1,2,2");
	floats_nd(g, "W", 4, (const int64_t[]){2, 1, 1, 1}, (const float[]){2, -1});
	floats_nd(g, "k", 3, (const int64_t[]){2, 1, 1}, (const float[]){3, -2});
	tu_graph_node(g, "Conv", "x,W", "c");
	tu_graph_node(g, "Mul", "c,k", "m1");
	tu_graph_node(g, "Add", "m1,k", "y");
	tu_graph_node(g, "Relu", "m1", "z");
	output(g, "y", OM_FLOAT, "1,2,2,2");
	output(g, "z", OM_FLOAT, "1,2,2,2");
	simplify(m, NULL);
	assert_int_equal(g->nnodes, 3);
	assert_int_equal(tu_count_op(g, "Mul"), 0);
	assert_int_equal(tu_count_op(g, "Add"), 1);
	const om_node *c = g->nodes[0];
	assert_string_equal(c->op, "Conv");
	assert_floats(c->in[1], 2, (const float[]){6, 2});
	assert_floats(c->in[2], 2, (const float[]){0, 0});
	om_model_free(m);
}

/* Add(MatMul(a [n,3], W [3,2]), b [2]) -> Gemm; 3-D MatMul and a C that would grow the result
 * ([4,2] against [n,2]) stay */
static void matmul_add_becomes_gemm(void **state)
{
	(void)state;
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "a", OM_FLOAT, "n,3");
	input(g, "a3", OM_FLOAT, "2,n,3");
	floats_nd(g, "W", 2, (const int64_t[]){3, 2}, (const float[]){1, 2, 3, 4, 5, 6});
	floats(g, "b", 2, (const float[]){1, 2});
	floats_nd(g, "b42", 2, (const int64_t[]){4, 2}, (const float[]){1, 2, 3, 4, 5, 6, 7, 8});
	tu_graph_node(g, "MatMul", "a,W", "p");
	tu_graph_node(g, "Add", "b,p", "y");
	tu_graph_node(g, "MatMul", "a3,W", "p3");
	tu_graph_node(g, "Add", "p3,b", "y3");
	tu_graph_node(g, "MatMul", "a,W", "q");
	tu_graph_node(g, "Add", "q,b42", "z");
	output(g, "y", OM_FLOAT, "n,2");
	output(g, "y3", OM_FLOAT, "2,n,2");
	output(g, "z", OM_FLOAT, "4,2");
	simplify(m, NULL);
	assert_int_equal(tu_count_op(g, "Gemm"), 1);
	assert_int_equal(tu_count_op(g, "MatMul"), 2);
	const om_node *n = g->outputs[0]->producer;
	assert_string_equal(n->op, "Gemm");
	assert_string_equal(n->out[0]->name, "y");
	assert_int_equal(n->nin, 3);
	assert_string_equal(n->in[0]->name, "a");
	assert_string_equal(n->in[1]->name, "W");
	assert_string_equal(n->in[2]->name, "b");
	assert_string_equal(g->outputs[1]->producer->op, "Add");
	assert_string_equal(g->outputs[2]->producer->op, "Add");
	om_model_free(m);
}

/* ---- shape inference: the op rows at sample values of the symbols ------------------------- */

/* Runs infer_shapes on m's main graph; the entry of value `name` is checked by the caller
 * before om_pass_ctx_close. */
static const om_vinfo *inferred(om_pass_ctx *c, om_model *m, const char *name)
{
	om_status st = {0};
	int changes = 0;
	assert_int_equal(om_pass_ctx_open(c, m, NULL, &st), OM_OK);
	assert_int_equal(om_pass_infer(c, m->graph, &changes), OM_OK);
	const om_vinfo *vi = om_vinfo_get(c, m->graph, om_graph_value(m->graph, name));
	assert_non_null(vi);
	return vi;
}

static void squeeze_empty_axes_input(void **state)
{
	(void)state;
	/* issue 9 defect 1: Squeeze-13 with an empty `axes` input drops the extent-1 axes, as
	 * its kernel does (ONNX Runtime: y is (3,)); the Squeeze is not a no-op */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "1,3,1");
	ints(g, "none", 1, 0, NULL);
	tu_graph_node(g, "Relu", "x", "r");
	tu_graph_node(g, "Squeeze", "r,none", "y");
	output(g, "y", 0, "");
	om_pass_ctx c;
	const om_vinfo *y = inferred(&c, m, "y");
	assert_int_equal(y->type.elem, OM_FLOAT);
	assert_int_equal(y->type.rank, 1);
	assert_int_equal(y->type.dims[0].value, 3);
	om_pass_ctx_close(&c);
	simplify(m, NULL);
	assert_int_equal(tu_count_op(g, "Squeeze"), 1);
	om_model_free(m);
}

static void float_range_has_a_type(void **state)
{
	(void)state;
	/* issue 9 defect 5: torch.arange(S, dtype=float): Range(0.0, Cast(Shape(x)[1]), 1.0) is
	 * float[S], and what follows keeps its rank */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "B,S");
	ints(g, "i1", 0, 1, (int64_t[]){1});
	ints(g, "ax0", 1, 1, (int64_t[]){0});
	floats_nd(g, "zero", 0, NULL, (float[]){0.0f});
	floats_nd(g, "one", 0, NULL, (float[]){1.0f});
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Gather", "s,i1", "n");
	attr_int(tu_graph_node(g, "Cast", "n", "nf"), "to", OM_FLOAT);
	tu_graph_node(g, "Range", "zero,nf,one", "r");
	tu_graph_node(g, "Unsqueeze", "r,ax0", "u");
	tu_graph_node(g, "Add", "x,u", "y");
	output(g, "y", 0, "");
	om_pass_ctx c;
	const om_vinfo *r = inferred(&c, m, "r");
	assert_int_equal(r->type.elem, OM_FLOAT);
	assert_int_equal(r->type.rank, 1);
	assert_string_equal(r->type.dims[0].param, "S");
	const om_vinfo *y = om_vinfo_get(&c, g, om_graph_value(g, "y"));
	assert_int_equal(y->type.elem, OM_FLOAT);
	assert_int_equal(y->type.rank, 2);
	assert_string_equal(y->type.dims[0].param, "B");
	assert_string_equal(y->type.dims[1].param, "S");
	om_pass_ctx_close(&c);
	om_model_free(m);
}

static void sampling_catches_small_symbols(void **state)
{
	(void)state;
	/* Slice(x:[N], 0, 5) is 5 long only when N >= 5; Squeeze(x:[N,3]) without axes keeps N
	 * only when N != 1; Equal(N, 0) and Max(N, 1) are not numbers */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N");
	input(g, "z", OM_FLOAT, "N,3");
	ints(g, "s0", 1, 1, (int64_t[]){0});
	ints(g, "e5", 1, 1, (int64_t[]){5});
	ints(g, "zero", 1, 1, (int64_t[]){0});
	ints(g, "one", 1, 1, (int64_t[]){1});
	tu_graph_node(g, "Slice", "x,s0,e5", "sl");
	tu_graph_node(g, "Squeeze", "z", "sq");
	tu_graph_node(g, "Shape", "x", "n");
	tu_graph_node(g, "Equal", "n,zero", "eq");
	tu_graph_node(g, "Max", "n,one", "mx");
	tu_graph_node(g, "Add", "n,one", "n1");
	om_pass_ctx c;
	const om_vinfo *sl = inferred(&c, m, "sl");
	assert_int_equal(sl->type.rank, 1);
	assert_false(om_dim_known(sl->type.dims[0]));
	assert_true(sl->type.dims[0].param == NULL || strcmp(sl->type.dims[0].param, "N"));
	const om_vinfo *sq = om_vinfo_get(&c, g, om_graph_value(g, "sq"));
	assert_int_equal(sq->type.elem, OM_FLOAT);
	assert_int_equal(sq->type.rank, -1);
	const om_vinfo *eq = om_vinfo_get(&c, g, om_graph_value(g, "eq"));
	assert_int_equal(eq->type.elem, OM_BOOL);
	assert_int_equal(eq->npv, 1);
	assert_int_equal(eq->pv[0].kind, OM_PE_SYM);
	const om_vinfo *mx = om_vinfo_get(&c, g, om_graph_value(g, "mx"));
	assert_int_equal(mx->npv, 1);
	assert_int_equal(mx->pv[0].kind, OM_PE_SYM);
	assert_string_not_equal(mx->pv[0].sym, "N");
	/* N + 1 is a value of its own, the same in each run: a value symbol */
	const om_vinfo *n1 = om_vinfo_get(&c, g, om_graph_value(g, "n1"));
	assert_int_equal(n1->npv, 1);
	assert_int_equal(n1->pv[0].kind, OM_PE_SYM);
	assert_string_not_equal(n1->pv[0].sym, "N");
	om_pass_ctx_close(&c);
	om_model_free(m);
}

static void broadcast_keeps_symbols(void **state)
{
	(void)state;
	/* x:[B,S,D] + pos:[1,S,D]; a fresh symbol against 768 (it must be 1 or 768); two
	 * symbols broadcast against each other are unknown (either may be 1) */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "B,S,D");
	input(g, "pos", OM_FLOAT, "1,S,D");
	input(g, "h", OM_FLOAT, "B,H");
	input(g, "b", OM_FLOAT, "768");
	input(g, "p", OM_FLOAT, "B,P");
	tu_graph_node(g, "Add", "x,pos", "y");
	tu_graph_node(g, "Add", "h,b", "hb");
	tu_graph_node(g, "Add", "h,p", "hp");
	om_pass_ctx c;
	const om_vinfo *y = inferred(&c, m, "y");
	assert_int_equal(y->type.rank, 3);
	assert_string_equal(y->type.dims[0].param, "B");
	assert_string_equal(y->type.dims[1].param, "S");
	assert_string_equal(y->type.dims[2].param, "D");
	const om_vinfo *hb = om_vinfo_get(&c, g, om_graph_value(g, "hb"));
	assert_int_equal(hb->type.rank, 2);
	assert_string_equal(hb->type.dims[0].param, "B");
	assert_int_equal(hb->type.dims[1].value, 768);
	const om_vinfo *hp = om_vinfo_get(&c, g, om_graph_value(g, "hp"));
	assert_int_equal(hp->type.rank, 2);
	assert_string_equal(hp->type.dims[0].param, "B");
	assert_true(om_symbol_internal(hp->type.dims[1].param));
	om_pass_ctx_close(&c);
	om_model_free(m);
}

static void partial_results_keep_type_and_rank(void **state)
{
	(void)state;
	/* rows that need a value still tell the element type and the rank (ops/op.h) */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,4");
	input(g, "t", OM_INT64, "3");
	input(g, "lim", OM_FLOAT, "");
	floats_nd(g, "zero", 0, NULL, (float[]){0.0f});
	floats_nd(g, "one", 0, NULL, (float[]){1.0f});
	tu_graph_node(g, "Range", "zero,lim,one", "r");
	tu_graph_node(g, "Reshape", "x,t", "rs");
	tu_graph_node(g, "ConstantOfShape", "t", "cs");
	tu_graph_node(g, "Expand", "x,t", "ex");
	om_pass_ctx c;
	const om_vinfo *r = inferred(&c, m, "r");
	assert_int_equal(r->type.elem, OM_FLOAT);
	assert_int_equal(r->type.rank, 1);
	assert_false(om_dim_known(r->type.dims[0]));
	const char *want[][2] = {{"rs", "3"}, {"cs", "3"}, {"ex", "3"}};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		const om_vinfo *v = om_vinfo_get(&c, g, om_graph_value(g, want[i][0]));
		assert_int_equal(v->type.elem, OM_FLOAT);
		assert_int_equal(v->type.rank, atoi(want[i][1]));
	}
	om_pass_ctx_close(&c);
	om_model_free(m);
}

static void untyped_inputs_are_sampled(void **state)
{
	(void)state;
	/* x has no type (an If's output whose branches declare none): Cast and Shape do not
	 * depend on its type, Relu does (float16 would do too) */
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	om_value *x = input(g, "x", OM_FLOAT, "");
	x->type.kind = OM_TYPE_UNKNOWN;
	x->type.elem = OM_UNDEFINED;
	x->type.rank = -1;
	attr_int(tu_graph_node(g, "Cast", "x", "c"), "to", OM_FLOAT);
	tu_graph_node(g, "Shape", "x", "s");
	tu_graph_node(g, "Relu", "x", "r");
	om_pass_ctx c;
	const om_vinfo *cv = inferred(&c, m, "c");
	assert_int_equal(cv->type.elem, OM_FLOAT);
	assert_int_equal(cv->type.rank, -1);
	const om_vinfo *sv = om_vinfo_get(&c, g, om_graph_value(g, "s"));
	assert_int_equal(sv->type.elem, OM_INT64);
	assert_int_equal(sv->type.rank, 1);
	assert_false(om_dim_known(sv->type.dims[0]));
	const om_vinfo *rv = om_vinfo_get(&c, g, om_graph_value(g, "r"));
	assert_int_equal(rv->type.elem, OM_UNDEFINED);
	om_pass_ctx_close(&c);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reshape_target_becomes_literal),
		cmocka_unit_test(allowzero_uses_minus_one),
		cmocka_unit_test(symbols_at_other_positions_stay),
		cmocka_unit_test(minus_one_only_where_resolvable),
		cmocka_unit_test(slice_of_everything_goes),
		cmocka_unit_test(pad_of_nothing_goes),
		cmocka_unit_test(slice_bound_at_extent_is_int64_max),
		cmocka_unit_test(known_dims_fold_to_numbers),
		cmocka_unit_test(unknown_extents_are_not_numbers),
		cmocka_unit_test(identity_keeps_output_name),
		cmocka_unit_test(shared_weights_stay_shared),
		cmocka_unit_test(reshapes_merge_and_expand_goes),
		cmocka_unit_test(dropout_with_mask_stays),
		cmocka_unit_test(dropout_of_ratio_zero_goes),
		cmocka_unit_test(transposes_merge),
		cmocka_unit_test(unsqueeze_squeeze_cancel),
		cmocka_unit_test(view_chains_collapse),
		cmocka_unit_test(dead_code_and_unknown_domains),
		cmocka_unit_test(skip_by_name),
		cmocka_unit_test(constant_node_becomes_initializer),
		cmocka_unit_test(where_equal_expand),
		cmocka_unit_test(subgraph_is_simplified),
		cmocka_unit_test(constant_if_is_inlined),
		cmocka_unit_test(if_output_typed_from_branches),
		cmocka_unit_test(torch_pad_pattern),
		cmocka_unit_test(fold_with_kernels),
		cmocka_unit_test(common_nodes_merge),
		cmocka_unit_test(verifier_catches_broken_ir),
		cmocka_unit_test(conv_bn_fuses),
		cmocka_unit_test(convt_bn_fuses),
		cmocka_unit_test(conv_bn_with_other_use_stays),
		cmocka_unit_test(conv_bn_shared_big_weight_stays),
		cmocka_unit_test(simplify_checks_arity),
		cmocka_unit_test(pad_into_reader),
		cmocka_unit_test(conv_affine_fuses),
		cmocka_unit_test(conv_affine_stops_at_second_use),
		cmocka_unit_test(matmul_add_becomes_gemm),
		cmocka_unit_test(squeeze_empty_axes_input),
		cmocka_unit_test(float_range_has_a_type),
		cmocka_unit_test(sampling_catches_small_symbols),
		cmocka_unit_test(broadcast_keeps_symbols),
		cmocka_unit_test(partial_results_keep_type_and_rank),
		cmocka_unit_test(untyped_inputs_are_sampled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
