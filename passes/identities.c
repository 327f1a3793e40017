/*
 * identities.c — the eliminate_identities pass: nodes that do nothing become aliases of their
 * input (Identity, Dropout in inference, Cast to the same type, and any op whose row says
 * OM_OP_SAME_SHAPE_COPY when its output has the input's type and shape: views, Expand, Tile,
 * Concat, Cast; a Slice that takes everything, a Pad that adds nothing), a view of a view
 * becomes one Reshape of the first view's input when the inferred extents allow a literal
 * target (view_chains.c), else Reshape of a plain view reads the view's input, and
 * Squeeze(Unsqueeze(x)) over the same axes is x. A graph output keeps its name.
 */
#include <string.h>

#include "infer.h"
#include "registry.h"
#include "shape_util.h"
#include "uses.h"
#include "match.h"

static bool op_is(const om_pass_ctx *c, const om_node *n, enum om_opcode code)
{
	return om_node_code(c->m, n) == code;
}

/* True when value a and b have the same element type and the same extents. */
static bool same_type(om_pass_ctx *c, const om_graph *g, om_value *a, om_value *b)
{
	const om_vinfo *x = om_vinfo_get(c, g, a), *y = om_vinfo_get(c, g, b);
	if (!om_vi_ranked(x) || !om_vi_ranked(y) || x->type.rank != y->type.rank ||
	    !x->type.elem || x->type.elem != y->type.elem)
		return false;
	for (int32_t i = 0; i < x->type.rank; i++)
		if (!om_dims_equal(x->type.dims[i], y->type.dims[i]))
			return false;
	return true;
}

static bool dropout_is_identity(const om_graph *g, const om_node *n)
{
	if (n->nout > 1 && n->out[1] && n->out[1]->nuses > 0)
		return false; /* the mask is used */
	if (n->nin > 1 && n->in[1] && om_scalar_is_float_zero(om_value_const(g, n->in[1])))
		return true; /* ratio 0 drops nothing, in training mode too */
	if (n->nin > 2 && n->in[2]) {
		const om_tensor *t = om_value_const(g, n->in[2]);
		if (!t || t->dtype != OM_BOOL || !t->data || t->nbytes < 1 ||
		    *(const uint8_t *)t->data)
			return false; /* training mode, or not known */
	}
	return true;
}

/* A view that keeps its input's elements, type and order (Reshape, Flatten, Squeeze, ...). */
static bool is_plain_view(const om_pass_ctx *c, const om_node *n)
{
	return om_node_has(c->m, n, OM_OP_VIEW | OM_OP_SAME_SHAPE_COPY);
}

/* Reshape(view(x), s) -> Reshape(x, s) when s is a literal the view does not matter to. */
static bool reshape_of_view(om_pass_ctx *c, om_graph *g, om_node *n)
{
	if (!op_is(c, n, OM_OPC_RESHAPE) || n->nin < 2 || !n->in[0] || om_model_opset(c->m, "") < 5)
		return false;
	om_node *p = n->in[0]->producer;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || !is_plain_view(c, p) ||
	    !p->in[0] || !om_node_default_domain(p))
		return false;
	const om_tensor *s = om_value_const(g, n->in[1]);
	if (!s || s->dtype != OM_INT64 || !s->data)
		return false;
	bool allowzero = om_model_opset(c->m, "") >= 14 && om_attr_int(n, "allowzero", 0);
	for (int64_t i = 0, k = om_tensor_numel(s); i < k && !allowzero; i++)
		if (((const int64_t *)s->data)[i] == 0)
			return false; /* 0 copies an extent of the view's output */
	om_uses_set_input(c, n, 0, p->in[0]);
	return true;
}

/* Squeeze(Unsqueeze(x, axes), axes) -> x. */
static bool squeeze_of_unsqueeze(om_pass_ctx *c, om_graph *g, om_node *n)
{
	if (!op_is(c, n, OM_OPC_SQUEEZE) || !n->in[0])
		return false;
	om_node *p = n->in[0]->producer;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || !op_is(c, p, OM_OPC_UNSQUEEZE) ||
	    !p->in[0])
		return false;
	const om_vinfo *mid = om_vinfo_get(c, g, n->in[0]);
	if (!om_vi_ranked(mid))
		return false;
	int64_t a[2 * OM_MAX_RANK], b[2 * OM_MAX_RANK];
	int32_t na = om_node_axes(g, p, 13, 1, mid->type.rank, a);
	int32_t nb = om_node_axes(g, n, 13, 1, mid->type.rank, b);
	if (na <= 0 || na != nb || memcmp(a, b, sizeof(int64_t) * (size_t)na))
		return false;
	return om_bypass_node(c, g, n, p->in[0]);
}

/* Element i of an int64/int32 constant. */
static int64_t int_at(const om_tensor *t, int64_t i)
{
	return t->dtype == OM_INT64 ? ((const int64_t *)t->data)[i]
				    : ((const int32_t *)t->data)[i];
}

static const om_tensor *int_const(const om_graph *g, const om_node *n, int32_t slot, int64_t k)
{
	const om_tensor *t = slot < n->nin && n->in[slot] ? om_value_const(g, n->in[slot]) : NULL;
	if (!t || !t->data || (t->dtype != OM_INT64 && t->dtype != OM_INT32) || t->rank != 1 ||
	    (k >= 0 && om_tensor_numel(t) != k))
		return NULL;
	return t;
}

/* Slice-10+ that takes everything (ONNX Runtime's EliminateSlice): on each axis start 0,
 * step 1 and an end past the extent (INT64_MAX, or at least the extent when it is a number),
 * the axes valid for x's rank. The identity for every value of every symbol, 0 included. */
static bool slice_takes_all(om_pass_ctx *c, om_graph *g, om_node *n)
{
	if (!op_is(c, n, OM_OPC_SLICE) || om_model_opset(c->m, "") < 10 || n->nin < 3)
		return false;
	const om_vinfo *x = om_vinfo_get(c, g, n->in[0]);
	const om_tensor *st = int_const(g, n, 1, -1);
	if (!om_vi_ranked(x) || x->type.rank < 1 || !st)
		return false;
	int64_t k = om_tensor_numel(st), rank = x->type.rank;
	const om_tensor *en = int_const(g, n, 2, k);
	const om_tensor *ax = n->nin > 3 && n->in[3] ? int_const(g, n, 3, k) : NULL;
	const om_tensor *sp = n->nin > 4 && n->in[4] ? int_const(g, n, 4, k) : NULL;
	if (!en || (n->nin > 3 && n->in[3] && !ax) || (n->nin > 4 && n->in[4] && !sp) ||
	    (!ax && k > rank))
		return false;
	bool seen[OM_MAX_RANK] = {false};
	for (int64_t i = 0; i < k; i++) {
		int64_t a = ax ? int_at(ax, i) : i;
		a = a < 0 ? a + rank : a;
		if (a < 0 || a >= rank || seen[a])
			return false;
		seen[a] = true;
		int64_t e = int_at(en, i);
		om_dim d = x->type.dims[a];
		if (int_at(st, i) != 0 || (sp && int_at(sp, i) != 1) ||
		    !(e == INT64_MAX || (om_dim_known(d) && e >= d.value)))
			return false;
	}
	return true;
}

/* Pad whose pads are all 0: nothing is added in any mode (torchvision's densenet pads before
 * each transition's AveragePool so). pads: Pad-1's `paddings`, Pad-2's `pads`, Pad-11's input
 * 1 (a constant; Pad-18's axes do not matter then). */
static bool pad_adds_nothing(const om_pass_ctx *c, const om_graph *g, const om_node *n)
{
	if (!op_is(c, n, OM_OPC_PAD))
		return false;
	const int64_t opset = om_model_opset(c->m, "");
	int64_t k = 0;
	const int64_t *attr = opset < 11 ? om_attr_ints(n, opset < 2 ? "paddings" : "pads", &k)
					 : NULL;
	const om_tensor *t = opset >= 11 ? int_const(g, n, 1, -1) : NULL;
	if (!attr && !t)
		return false;
	if (t)
		k = om_tensor_numel(t);
	for (int64_t i = 0; i < k; i++)
		if ((t ? int_at(t, i) : attr[i]) != 0)
			return false;
	return true;
}

static bool simplify_node(om_pass_ctx *c, om_graph *g, om_node *n)
{
	om_value *x = n->nin > 0 ? n->in[0] : NULL;
	if (!x || !n->out[0])
		return false;
	if (om_node_has(c->m, n, OM_OP_PASSTHROUGH))
		return om_bypass_node(c, g, n, x);
	if (op_is(c, n, OM_OPC_DROPOUT))
		return dropout_is_identity(g, n) && om_bypass_node(c, g, n, x);
	if (pad_adds_nothing(c, g, n))
		return om_bypass_node(c, g, n, x);
	if (op_is(c, n, OM_OPC_CAST)) {
		const om_vinfo *vi = om_vinfo_get(c, g, x);
		return vi && vi->type.elem && vi->type.elem == om_attr_int(n, "to", -1) &&
		       om_bypass_node(c, g, n, x);
	}
	if (om_node_has(c->m, n, OM_OP_SAME_SHAPE_COPY) && n->nout == 1 &&
	    same_type(c, g, x, n->out[0]))
		return om_bypass_node(c, g, n, x);
	if (slice_takes_all(c, g, n))
		return om_bypass_node(c, g, n, x);
	return reshape_of_view(c, g, n) || squeeze_of_unsqueeze(c, g, n);
}

om_kind om_pass_identities(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_graph_count_uses(g);
	om_uses_open(c, g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !om_node_default_domain(n))
			continue;
		bool changed = simplify_node(c, g, n);
		om_kind rc = changed ? OM_OK : om_collapse_view_chain(c, g, n, &changed);
		if (rc) {
			om_uses_close(c);
			return rc;
		}
		if (changed)
			(*changes)++;
	}
	om_uses_close(c);
	om_graph_compact(g);
	return OM_OK;
}
