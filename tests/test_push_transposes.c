/* test_push_transposes.c — the push_transposes pass on hand-built NHWC-style graphs, one per op
 * class: the Transposes om_simplify leaves (counted against the expected number), and the
 * original against the simplified model through omopt's executor (om_check) at symbol values
 * 0, 1 and 3 (batch N and height H), on the same random inputs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "registry.h"

#define D(...) (int64_t[]){__VA_ARGS__}
static const int64_t TO_NCHW[4] = {0, 3, 1, 2}, TO_NHWC[4] = {0, 2, 3, 1};

/* dims: "N,H,5,4": numbers or symbols */
static om_value *typed(om_graph *g, const char *name, int32_t elem, const char *dims)
{
	om_value *v = om_graph_value(g, name);
	v->type.kind = OM_TYPE_TENSOR;
	v->type.elem = elem;
	v->type.dims = om_arena_alloc(g->model->arena, sizeof(om_dim) * OM_MAX_RANK);
	v->type.rank = 0;
	char buf[64];
	snprintf(buf, sizeof buf, "%s", dims);
	for (char *save, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		v->type.dims[v->type.rank++] = t[0] >= '0' && t[0] <= '9'
			? (om_dim){atoll(t), NULL} : (om_dim){-1, om_arena_strdup(g->model->arena, t)};
	return v;
}

static void input(om_graph *g, const char *name, int32_t elem, const char *dims)
{
	om_value *v = typed(g, name, elem, dims);
	v->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, v);
}

static void output(om_graph *g, const char *name)
{
	om_value *v = om_graph_value(g, name);
	v->flags |= OM_VALUE_GRAPH_OUTPUT;
	tu_push_value(g, &g->outputs, &g->noutputs, v);
}

static void constant(om_graph *g, const char *name, int32_t rank, const int64_t *dims)
{
	static uint32_t seed = 1;
	tu_float_init(g, name, rank, dims, seed++, 2.0f);
}

static void ints_init(om_graph *g, const char *name, int64_t n, const int64_t *x)
{
	om_tensor *t = om_model_tensor(g->model, OM_INT64, 1, D(n));
	memcpy(t->data, x, sizeof(int64_t) * (size_t)n);
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static void floats_init(om_graph *g, const char *name, int64_t n, const float *x)
{
	om_tensor *t = om_model_tensor(g->model, OM_FLOAT, 1, D(n));
	memcpy(t->data, x, sizeof(float) * (size_t)n);
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

static om_node *node(om_graph *g, const char *op, const char *ins, const char *outs)
{
	return tu_graph_node(g, op, ins, outs);
}

static void transpose(om_graph *g, const char *x, const char *y, const int64_t *perm)
{
	tu_attr_ints(node(g, "Transpose", x, y), "perm", 4, perm);
}

static void attr_int(om_node *n, const char *name, int64_t v)
{
	om_node_set_attr(n, name, OM_ATTR_INT)->i = v;
}

/* x [N,H,5,4] (NHWC) -> Transpose to NCHW "t" -> (the case's nodes: "t" -> "z") ->
 * Transpose back to NHWC -> "y" */
static om_model *wrapped(int64_t opset)
{
	om_model *m = tu_model(opset);
	input(m->graph, "x", OM_FLOAT, "N,H,5,4");
	transpose(m->graph, "x", "t", TO_NCHW);
	return m;
}

static om_model *back(om_model *m)
{
	transpose(m->graph, "z", "y", TO_NHWC);
	output(m->graph, "y");
	return m;
}

/* ---- the cases ----------------------------------------------------------------------- */

static om_model *c_unary_chain(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	constant(g, "s", 3, D(4, 1, 1)); /* per channel, NCHW */
	node(g, "Relu", "t", "a");
	node(g, "Mul", "a,s", "b");
	node(g, "Sigmoid", "b", "z");
	return back(m);
}

static om_model *c_binary_consts(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	constant(g, "k4", 4, D(1, 4, 1, 5)); /* rank 4, broadcast on N and H */
	constant(g, "k0", 0, NULL);          /* scalar */
	constant(g, "k1", 3, D(1, 1, 1));    /* all ones: stays */
	node(g, "Sub", "k4,t", "a");
	node(g, "Div", "a,k0", "b");
	node(g, "Add", "b,k1", "z");
	return back(m);
}

static om_model *c_two_transposed(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	input(g, "x2", OM_FLOAT, "N,H,5,4");
	transpose(g, "x2", "t2", TO_NCHW);
	node(g, "Max", "t,t2", "z");
	return back(m);
}

/* the other input is a plain NCHW tensor: it gets the inverse Transpose (one left of two) */
static om_model *c_wrap_other(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	input(g, "w", OM_FLOAT, "N,4,H,5");
	node(g, "Add", "t,w", "z");
	return back(m);
}

static om_model *c_where_prelu_sum(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	input(g, "c", OM_BOOL, "N,H,5,4");
	transpose(g, "c", "tc", TO_NCHW);
	constant(g, "slope", 3, D(4, 1, 1));
	constant(g, "k", 1, D(5));
	constant(g, "zero", 0, NULL);
	node(g, "PRelu", "t,slope", "a");
	node(g, "Where", "tc,a,zero", "b");
	node(g, "Sum", "b,t,k", "z");
	return back(m);
}

static om_model *c_clip_cast(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	constant(g, "lo", 0, NULL);
	om_tensor *hi = om_model_tensor(m, OM_FLOAT, 0, NULL);
	*(float *)hi->data = 1.5f;
	om_value *v = om_graph_value(g, "hi");
	v->init = hi;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, hi);
	tu_push_value(g, &g->inits, &g->ninits, v);
	node(g, "Clip", "t,lo,hi", "a");
	attr_int(node(g, "Cast", "a", "z"), "to", OM_DOUBLE);
	return back(m);
}

static om_model *c_concat(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	input(g, "x2", OM_FLOAT, "N,H,5,3");
	transpose(g, "x2", "t2", TO_NCHW);
	attr_int(node(g, "Concat", "t,t2", "a"), "axis", 1);
	attr_int(node(g, "Softmax", "a", "z"), "axis", -3);
	return back(m);
}

static om_model *c_reduce_keep(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	ints_init(g, "axes", 1, D(-1));
	node(g, "ReduceSum", "t,axes", "a"); /* opset 13: axes an input; keepdims 1 */
	node(g, "Exp", "a", "z");
	return back(m);
}

/* ReduceMean over NCHW's H, W with keepdims 0: [N, C], no Transpose at all after */
static om_model *c_reduce_drop(void)
{
	om_model *m = wrapped(12);
	om_graph *g = m->graph;
	om_node *n = node(g, "ReduceMean", "t", "y");
	tu_attr_ints(n, "axes", 2, D(2, 3));
	attr_int(n, "keepdims", 0);
	output(g, "y");
	return m;
}

/* ArgMax over C with keepdims 0: [N, H, W], the identity on the axes kept */
static om_model *c_argmax(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	om_node *n = node(g, "ArgMax", "t", "y");
	attr_int(n, "axis", 1);
	attr_int(n, "keepdims", 0);
	output(g, "y");
	return m;
}

/* ReduceMax over W only, keepdims 0: [N, C, H] whose Transpose (0, 2, 1) cancels nothing;
 * pushed (1 before, 1 after) */
static om_model *c_reduce_perm(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	om_node *n = node(g, "ReduceMax", "t", "a");
	tu_attr_ints(n, "axes", 1, D(3));
	attr_int(n, "keepdims", 0);
	node(g, "Neg", "a", "y");
	output(g, "y");
	return m;
}

/* tf2onnx's SAME padding: Relu then Pad (pads an input, reflect) between the pair */
static om_model *c_pad_input(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	/* NCHW: C 1+0, W 2+1 (H may be 0 or 1: reflect needs more) */
	ints_init(g, "pads", 8, D(0, 1, 0, 2, 0, 0, 0, 1));
	node(g, "Relu", "t", "a");
	om_node *n = node(g, "Pad", "a,pads", "z");
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"reflect", 7};
	return back(m);
}

/* Pad-2's `pads` attribute, constant mode with a value; C padded too */
static om_model *c_pad_attr(void)
{
	om_model *m = wrapped(10);
	om_graph *g = m->graph;
	om_node *n = node(g, "Pad", "t", "z");
	tu_attr_ints(n, "pads", 8, D(0, 1, 0, 3, 0, 0, 2, 0));
	om_node_set_attr(n, "value", OM_ATTR_FLOAT)->f = 0.5f;
	return back(m);
}

/* a uint8 zero point of rank 0 or [n] (zeros but one: 3) */
static void zero_point(om_graph *g, const char *name, int32_t rank, int64_t n)
{
	om_tensor *t = om_model_tensor(g->model, OM_UINT8, rank, D(n));
	((uint8_t *)t->data)[0] = 3;
	om_value *v = om_graph_value(g, name);
	v->init = t;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(g->model, &v->type, t);
	tu_push_value(g, &g->inits, &g->ninits, v);
}

/* QuantizeLinear per tensor, DequantizeLinear per channel (axis 1 of NCHW) */
static om_model *c_qdq(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	om_tensor *sc = om_model_tensor(m, OM_FLOAT, 0, NULL);
	*(float *)sc->data = 0.05f;
	om_value *v = om_graph_value(g, "qs");
	v->init = sc;
	v->flags |= OM_VALUE_INITIALIZER;
	om_type_from_tensor(m, &v->type, sc);
	tu_push_value(g, &g->inits, &g->ninits, v);
	zero_point(g, "qz", 0, 1);
	tu_float_init(g, "ds", 1, D(4), 9, 0.1f);
	zero_point(g, "dz", 1, 4);
	node(g, "QuantizeLinear", "t,qs,qz", "q");
	attr_int(node(g, "DequantizeLinear", "q,ds,dz", "z"), "axis", -3);
	return back(m);
}

/* Slice without axes (0 and 1 of NCHW: N, C): the pass adds the remapped axes input */
static om_model *c_slice_noaxes(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	ints_init(g, "st", 2, D(0, 1));
	ints_init(g, "en", 2, D(INT64_MAX, 3));
	node(g, "Slice", "t,st,en", "z");
	return back(m);
}

/* Slice with axes (negative), steps */
static om_model *c_slice_axes(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	ints_init(g, "st", 2, D(4, 0));
	ints_init(g, "en", 2, D(0, 3));
	ints_init(g, "ax", 2, D(-1, 1));
	ints_init(g, "sp", 2, D(-2, 1));
	node(g, "Slice", "t,st,en,ax,sp", "z");
	return back(m);
}

/* Slice-1's attributes, no axes */
static om_model *c_slice_attr(void)
{
	om_model *m = wrapped(9);
	om_graph *g = m->graph;
	om_node *n = node(g, "Slice", "t", "z");
	tu_attr_ints(n, "starts", 2, D(0, 1));
	tu_attr_ints(n, "ends", 2, D(1000, 4));
	return back(m);
}

/* the Relu's output is the graph output: it keeps its name, written by the Transpose */
static om_model *c_graph_output(void)
{
	om_model *m = wrapped(13);
	node(m->graph, "Relu", "t", "y");
	output(m->graph, "y");
	return m;
}

/* the Transpose has another reader: a push would add one, so nothing moves */
static om_model *c_shared(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	node(g, "Relu", "t", "y");
	node(g, "Neg", "t", "y2");
	output(g, "y");
	output(g, "y2");
	return m;
}

/* the other input has unknown rank: nothing moves */
static om_model *c_unknown_rank(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	om_value *u = om_graph_value(g, "u");
	u->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = OM_FLOAT, .rank = -1};
	u->flags |= OM_VALUE_GRAPH_INPUT;
	tu_push_value(g, &g->inputs, &g->ninputs, u);
	node(g, "Add", "t,u", "z");
	return back(m);
}

/* an If whose branches hold the pair around Relu / Sigmoid, reading the outer x: pushed
 * inside each branch, the branch output then written by the Relu / Sigmoid */
static om_model *c_subgraph(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "c", OM_BOOL, "");
	input(g, "x", OM_FLOAT, "N,H,5,4");
	om_node *iff = node(g, "If", "c", "y");
	output(g, "y");
	for (int b = 0; b < 2; b++) {
		om_graph *sb = om_graph_new(m, g);
		om_graph_value(sb, "x")->flags |= OM_VALUE_OUTER;
		transpose(sb, "x", "bt", TO_NCHW);
		node(sb, b ? "Sigmoid" : "Relu", "bt", "ba");
		const char *out = b ? "out_else" : "out_then";
		transpose(sb, "ba", out, TO_NHWC);
		om_value *o = om_graph_value(sb, out);
		o->flags |= OM_VALUE_GRAPH_OUTPUT;
		tu_push_value(sb, &sb->outputs, &sb->noutputs, o);
		om_node_set_attr(iff, b ? "else_branch" : "then_branch", OM_ATTR_GRAPH)->g = sb;
	}
	return m;
}

/* Softmax-13 without `axis` (default -1: NCHW's W, NHWC's axis 2) */
static om_model *c_softmax_default(void)
{
	om_model *m = wrapped(13);
	node(m->graph, "Softmax", "t", "a");
	node(m->graph, "Relu", "a", "z");
	return back(m);
}

/* Split over C (axis -3, sizes 1 and 3 as input 1), each part back to NHWC; a Relu between
 * on one of them */
static om_model *c_split(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	ints_init(g, "sp", 2, D(1, 3));
	attr_int(node(g, "Split", "t,sp", "a,b"), "axis", -3);
	node(g, "Relu", "a", "ra");
	transpose(g, "ra", "y", TO_NHWC);
	transpose(g, "b", "y2", TO_NHWC);
	output(g, "y");
	output(g, "y2");
	return m;
}

/* Split-18 over W (axis 3) in num_outputs 2 (uneven: 3 and 2) */
static om_model *c_split18(void)
{
	om_model *m = wrapped(18);
	om_graph *g = m->graph;
	om_node *n = node(g, "Split", "t", "a,b");
	attr_int(n, "axis", 3);
	attr_int(n, "num_outputs", 2);
	transpose(g, "a", "y", TO_NHWC);
	transpose(g, "b", "y2", TO_NHWC);
	output(g, "y");
	output(g, "y2");
	return m;
}

/* x [N,1,5,4] (NHWC) -> [N,4,1,5] -> Squeeze H (axes input [2]) -> [N,4,5] -> Transpose
 * (0,2,1) -> [N,5,4]: pushed, Squeeze(x, [1]) is y already */
static om_model *c_squeeze(void)
{
	om_model *m = tu_model(13);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "N,1,5,4");
	transpose(g, "x", "t", TO_NCHW);
	ints_init(g, "ax", 1, D(2));
	node(g, "Squeeze", "t,ax", "z");
	tu_attr_ints(node(g, "Transpose", "z", "y"), "perm", 3, D(0, 2, 1));
	output(g, "y");
	return m;
}

/* Squeeze-11 without axes over known extents [2,4,1,1] (NCHW of x [2,1,1,4]): [2,4], the
 * output's permutation the identity */
static om_model *c_squeeze_noaxes(void)
{
	om_model *m = tu_model(11);
	om_graph *g = m->graph;
	input(g, "x", OM_FLOAT, "2,1,1,4");
	transpose(g, "x", "t", TO_NCHW);
	node(g, "Squeeze", "t", "z");
	node(g, "Neg", "z", "y");
	output(g, "y");
	return m;
}

/* Unsqueeze (axes input [1]) -> [N,1,4,H,5], then the Transpose (0,1,3,4,2) that inverts the
 * pushed one: [N,1,H,5,4] */
static om_model *c_unsqueeze(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	ints_init(g, "ax", 1, D(1));
	node(g, "Unsqueeze", "t,ax", "z");
	tu_attr_ints(node(g, "Transpose", "z", "y"), "perm", 5, D(0, 1, 3, 4, 2));
	output(g, "y");
	return m;
}

/* Unsqueeze-11 (attribute [0, -1]) then Neg: the Transpose moves to the rank-6 output (1
 * before, 1 after) */
static om_model *c_unsqueeze_attr(void)
{
	om_model *m = wrapped(11);
	om_graph *g = m->graph;
	tu_attr_ints(node(g, "Unsqueeze", "t", "z"), "axes", 2, D(0, -1));
	node(g, "Neg", "z", "y");
	output(g, "y");
	return m;
}

/* Resize-13 nearest over H and W of NCHW (scales 1, 1, 2, 3; roi "") */
static om_model *c_resize_nearest(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	floats_init(g, "sc", 4, (const float[]){1, 1, 2, 3});
	node(g, "Resize", "t,,sc", "z");
	return back(m);
}

/* Resize-11 linear, tf_crop_and_resize (the roi permuted as well), scales 1, 1, 2, 2 */
static om_model *c_resize_linear(void)
{
	om_model *m = wrapped(11);
	om_graph *g = m->graph;
	floats_init(g, "roi", 8, (const float[]){0, 0, 0.1f, 0.2f, 1, 1, 0.9f, 0.7f});
	floats_init(g, "sc", 4, (const float[]){1, 1, 2, 2});
	om_node *n = node(g, "Resize", "t,roi,sc", "z");
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"linear", 6};
	om_node_set_attr(n, "coordinate_transformation_mode", OM_ATTR_STRING)->s =
		(om_str){"tf_crop_and_resize", 18};
	return back(m);
}

/* Resize linear over C and H of NCHW: pushed it would scale NHWC's axes 1 and 3, neither
 * form ONNX Runtime runs linearly; nothing moves */
static om_model *c_resize_refused(void)
{
	om_model *m = wrapped(13);
	om_graph *g = m->graph;
	floats_init(g, "sc", 4, (const float[]){1, 2, 2, 1});
	om_node *n = node(g, "Resize", "t,,sc", "z");
	om_node_set_attr(n, "mode", OM_ATTR_STRING)->s = (om_str){"linear", 6};
	return back(m);
}

/* Pad-18 with an axes input (H, and W as -1): the axes remapped, the pads as they are */
static om_model *c_pad_axes(void)
{
	om_model *m = wrapped(18);
	om_graph *g = m->graph;
	ints_init(g, "pads", 4, D(1, 2, 0, 1));
	ints_init(g, "ax", 2, D(2, -1));
	node(g, "Pad", "t,pads,,ax", "z");
	return back(m);
}

typedef struct tcase {
	const char *name;
	om_model *(*build)(void);
	int before, after; /* Transposes (main graph; with subgraphs, in each branch) */
	bool unknown_rank; /* feed u as [N, 4, H, 5] */
} tcase;

static const tcase cases[] = {
	{"unary_chain", c_unary_chain, 2, 0, false},
	{"binary_consts", c_binary_consts, 2, 0, false},
	{"two_transposed", c_two_transposed, 3, 0, false},
	{"wrap_other", c_wrap_other, 2, 1, false},
	{"where_prelu_sum", c_where_prelu_sum, 3, 0, false},
	{"clip_cast", c_clip_cast, 2, 0, false},
	{"concat_softmax", c_concat, 3, 0, false},
	{"reduce_keep", c_reduce_keep, 2, 0, false},
	{"reduce_drop", c_reduce_drop, 1, 0, false},
	{"argmax", c_argmax, 1, 0, false},
	{"reduce_perm", c_reduce_perm, 1, 1, false},
	{"pad_input", c_pad_input, 2, 0, false},
	{"pad_attr", c_pad_attr, 2, 0, false},
	{"qdq", c_qdq, 2, 0, false},
	{"slice_noaxes", c_slice_noaxes, 2, 0, false},
	{"slice_axes", c_slice_axes, 2, 0, false},
	{"slice_attr", c_slice_attr, 2, 0, false},
	{"graph_output", c_graph_output, 1, 1, false},
	{"shared", c_shared, 1, 1, false},
	{"unknown_rank", c_unknown_rank, 2, 2, true},
	{"subgraph", c_subgraph, 0, 0, false},
	{"softmax_default", c_softmax_default, 2, 0, false},
	{"split", c_split, 3, 0, false},
	{"split18", c_split18, 3, 0, false},
	{"squeeze", c_squeeze, 2, 0, false},
	{"squeeze_noaxes", c_squeeze_noaxes, 1, 0, false},
	{"unsqueeze", c_unsqueeze, 2, 0, false},
	{"unsqueeze_attr", c_unsqueeze_attr, 1, 1, false},
	{"resize_nearest", c_resize_nearest, 2, 0, false},
	{"resize_linear", c_resize_linear, 2, 0, false},
	{"resize_refused", c_resize_refused, 2, 2, false},
	{"pad_axes", c_pad_axes, 2, 0, false},
};

/* Feeds every graph input of m with symbols N = nv, H = hv (u: [N, 4, H, 5]). */
static int make_inputs(const om_model *m, int64_t nv, int64_t hv, const char **names,
		       om_tensor *in, uint32_t seed)
{
	const om_graph *g = m->graph;
	om_status st = {0};
	for (int32_t i = 0; i < g->ninputs; i++) {
		const om_value *v = g->inputs[i];
		int64_t dims[OM_MAX_RANK];
		int32_t rank = v->type.rank;
		if (rank < 0) {
			rank = 4;
			memcpy(dims, D(nv, 4, hv, 5), sizeof(int64_t) * 4);
		}
		for (int32_t d = 0; d < v->type.rank; d++) {
			const om_dim x = v->type.dims[d];
			dims[d] = x.value >= 0 ? x.value : !strcmp(x.param, "N") ? nv : hv;
		}
		assert_int_equal(om_tensor_alloc(&in[i], v->type.elem, rank, dims, &st), OM_OK);
		const int64_t n = om_tensor_numel(&in[i]);
		if (v->type.elem == OM_FLOAT)
			tu_fill(in[i].data, n, seed + (uint32_t)i, 3.0f);
		else if (rank == 0) /* an If's condition: both branches over the runs */
			((uint8_t *)in[i].data)[0] = (uint8_t)(seed % 2);
		else
			for (int64_t e = 0; e < n; e++)
				((uint8_t *)in[i].data)[e] = (uint8_t)((e * 7 + i) % 3 == 0);
		names[i] = v->name;
	}
	return g->ninputs;
}

static void run_case(const tcase *tc)
{
	om_model *orig = tc->build();
	assert_int_equal(tu_count_op(orig->graph, "Transpose"), tc->before);
	om_model *simp = NULL;
	om_status st = {0};
	assert_int_equal(om_model_clone(orig, &simp, &st), OM_OK);
	om_simplify_options o = {.verify = 1};
	if (om_simplify(simp, &o, &st)) {
		char buf[512];
		om_status_format(&st, buf, sizeof buf);
		fail_msg("%s: simplify: %s", tc->name, buf);
	}
	const int after = tu_count_op(simp->graph, "Transpose");
	if (after != tc->after)
		fail_msg("%s: %d Transposes after simplify, want %d", tc->name, after, tc->after);
	for (int32_t i = 0; i < simp->graph->nnodes; i++) /* If branches */
		for (int32_t a = 0; a < simp->graph->nodes[i]->nattr; a++) {
			const om_attr *at = &simp->graph->nodes[i]->attrs[a];
			if (at->type == OM_ATTR_GRAPH && tu_count_op(at->g, "Transpose") != tc->after)
				fail_msg("%s: %d Transposes in %s, want %d", tc->name,
					 tu_count_op(at->g, "Transpose"), at->name, tc->after);
		}
	/* the outputs keep their names and ranks */
	assert_int_equal(simp->graph->noutputs, orig->graph->noutputs);
	for (int32_t i = 0; i < orig->graph->noutputs; i++)
		assert_string_equal(simp->graph->outputs[i]->name, orig->graph->outputs[i]->name);
	static const int64_t sym[][2] = {{0, 1}, {1, 0}, {1, 1}, {3, 2}};
	for (size_t r = 0; r < sizeof sym / sizeof sym[0]; r++) {
		const char *names[8];
		om_tensor in[8] = {{0}};
		const int nin = make_inputs(orig, sym[r][0], sym[r][1], names, in, 37 + (uint32_t)r);
		om_check_options co = {.input_names = names, .inputs = in, .ninputs = nin};
		om_check_report rep = {0};
		if (om_check(orig, simp, &co, &rep, &st)) {
			char buf[512];
			om_status_format(&st, buf, sizeof buf);
			fail_msg("%s: check: %s", tc->name, buf);
		}
		if (!rep.passed)
			fail_msg("%s: N=%lld H=%lld: outputs differ (%s)", tc->name,
				 (long long)sym[r][0], (long long)sym[r][1], rep.error);
		om_check_report_free(&rep);
		for (int i = 0; i < nin; i++)
			om_tensor_free(&in[i]);
	}
	om_model_free(simp);
	om_model_free(orig);
}

static void all_cases(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&cases[i]);
}

/* With the pass skipped, fuse_transposes alone leaves the pairs apart: the cases test it. */
static void skipped_pass_leaves_pairs(void **state)
{
	(void)state;
	om_model *m = c_unary_chain();
	const char *skip[] = {"push_transposes", NULL};
	om_simplify_options o = {.verify = 1, .skip = skip};
	om_status st = {0};
	assert_int_equal(om_simplify(m, &o, &st), OM_OK);
	assert_int_equal(tu_count_op(m->graph, "Transpose"), 2);
	om_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(all_cases),
		cmocka_unit_test(skipped_pass_leaves_pairs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
