/*
 * shape_chains.c — the fold_shape_chains pass: plan-time values from inference become
 * literals. A value whose elements are all numbers (Shape(x:[N,3,H,W]) -> Gather(1) is 3)
 * becomes an initializer. A Reshape target with symbols becomes a literal with 0 (copy the
 * input's extent, when the symbol is the input's extent at that position and allowzero is
 * off) or -1 (the one extent left, only when every other entry is a positive number: -1 must
 * be resolvable for every value of every symbol, 0 included); an Expand shape with symbols
 * becomes 1 where the symbol is the input's extent; a Slice start or end that is the input's
 * extent on its axis becomes INT64_MAX. A symbol is never written as a number; Tile repeats and
 * Pad pads with symbols have no such stand-in and stay dynamic.
 */
#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "registry.h"
#include "match.h"
#include "reshape_literal.h"

static bool literal_ok(const om_graph *g, const om_value *v, const om_vinfo *vi)
{
	(void)g;
	if (!v || !vi || vi->npv < 0 || v->init)
		return false;
	if (vi->type.elem != OM_INT64 && vi->type.elem != OM_INT32 && vi->type.elem != OM_BOOL)
		return false;
	for (int32_t i = 0; i < vi->npv; i++)
		if (vi->pv[i].kind != OM_PE_NUM)
			return false;
	int64_t dims[OM_MAX_RANK];
	return om_pv_dims(vi, dims);
}

static om_kind make_literal(om_pass_ctx *c, om_graph *g, om_node *n, om_value *v,
			   const om_vinfo *vi)
{
	int64_t dims[OM_MAX_RANK];
	if (!om_pv_dims(vi, dims))
		return OM_OK;
	om_tensor *t = om_model_tensor(c->m, vi->type.elem, vi->pvrank, dims);
	if (!t)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory for a literal");
	for (int32_t i = 0; i < vi->npv; i++) {
		int64_t x = vi->pv[i].num;
		if (vi->type.elem == OM_INT64)
			((int64_t *)t->data)[i] = x;
		else if (vi->type.elem == OM_INT32)
			((int32_t *)t->data)[i] = (int32_t)x;
		else
			((uint8_t *)t->data)[i] = x != 0;
	}
	/* a graph output stays produced by a node: a Constant */
	if (v->flags & OM_VALUE_GRAPH_OUTPUT)
		return om_node_to_constant(g, n, t, c->st);
	return om_make_constant(c, g, v, t);
}

/* Folds the node when every output it has is a literal. */
static om_kind fold_literals(om_pass_ctx *c, om_graph *g, om_node *n, int *changes)
{
	int32_t live = 0;
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		if (!literal_ok(g, n->out[o], om_vinfo_get(c, g, n->out[o])))
			return OM_OK;
		live++;
	}
	if (!live || om_node_code(c->m, n) == OM_OPC_CONSTANT)
		return OM_OK;
	bool graph_output = false;
	for (int32_t o = 0; o < n->nout; o++)
		graph_output |= n->out[o] && (n->out[o]->flags & OM_VALUE_GRAPH_OUTPUT);
	if (graph_output && (live > 1 || !n->out[0]))
		return OM_OK;
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		om_kind rc = make_literal(c, g, n, n->out[o], om_vinfo_get(c, g, n->out[o]));
		if (rc)
			return rc;
	}
	if (!graph_output)
		n->flags |= OM_NODE_DEAD;
	(*changes)++;
	return OM_OK;
}

/* Writes the new int64 literal into input slot `slot` of n (named after n and `what`). */
static om_kind set_literal_input(om_pass_ctx *c, om_graph *g, om_node *n, int32_t slot,
				 const char *what, const int64_t *lit, int32_t k, int *changes)
{
	int64_t dims[1] = {k};
	om_tensor *t = om_model_tensor(c->m, OM_INT64, 1, dims);
	if (!t)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory for a literal");
	memcpy(t->data, lit, sizeof(int64_t) * (size_t)k);
	char hint[256];
	snprintf(hint, sizeof hint, "%s_%s", n->name[0] ? n->name : n->op, what);
	om_value *v = om_new_constant(c, g, hint, t);
	if (!v)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory for a literal");
	n->in[slot] = v;
	(*changes)++;
	return OM_OK;
}

/* Writes the new int64 literal into input slot 1 of n. */
static om_kind set_shape_input(om_pass_ctx *c, om_graph *g, om_node *n, const int64_t *lit,
			       int32_t k, int *changes)
{
	return set_literal_input(c, g, n, 1, "shape", lit, k, changes);
}

static om_kind reshape_target(om_pass_ctx *c, om_graph *g, om_node *n, int *changes)
{
	if (n->nin < 2 || !n->in[0] || !n->in[1] || om_value_const(g, n->in[1]) ||
	    om_model_opset(c->m, n->domain) < 5)
		return OM_OK;
	const om_vinfo *x = om_vinfo_get(c, g, n->in[0]), *s = om_vinfo_get(c, g, n->in[1]);
	if (!s || s->npv < 1 || s->pvrank != 1 || s->npv > OM_MAX_RANK)
		return OM_OK;
	bool allowzero = om_model_opset(c->m, n->domain) >= 14 && om_attr_int(n, "allowzero", 0);
	int64_t lit[OM_MAX_RANK];
	if (!om_reshape_literal(x, allowzero, s->npv, s->pv, lit))
		return OM_OK;
	return set_shape_input(c, g, n, lit, s->npv, changes);
}

static om_kind expand_shape(om_pass_ctx *c, om_graph *g, om_node *n, int *changes)
{
	if (n->nin < 2 || !n->in[0] || !n->in[1] || om_value_const(g, n->in[1]))
		return OM_OK;
	const om_vinfo *x = om_vinfo_get(c, g, n->in[0]), *s = om_vinfo_get(c, g, n->in[1]);
	if (!om_vi_ranked(x) || !s || s->npv < 0 || s->pvrank != 1 || s->npv > OM_MAX_RANK)
		return OM_OK;
	int64_t lit[OM_MAX_RANK];
	int32_t k = s->npv, off = k - x->type.rank;
	for (int32_t i = 0; i < k; i++) {
		om_pe e = s->pv[i];
		if (e.kind == OM_PE_NUM) {
			lit[i] = e.num;
			continue;
		}
		int32_t j = i - off;
		if (e.kind != OM_PE_SYM || j < 0 || om_dim_known(x->type.dims[j]) ||
		    !x->type.dims[j].param || strcmp(x->type.dims[j].param, e.sym))
			return OM_OK;
		lit[i] = 1; /* broadcasting 1 against the input's extent gives that extent */
	}
	return set_shape_input(c, g, n, lit, k, changes);
}

/* Slice-10+ starts and ends (slots 1, 2) with symbols: a symbol that is x's extent on the
 * entry's axis becomes INT64_MAX (an end whose step is not known positive: INT64_MAX - 1).
 * Both are at least the extent, so Slice clamps them the same way for either sign of step (to
 * the extent, or to extent - 1 for negative steps), for every value of the symbol, 0
 * included. Numbers stay; any other symbol leaves the input dynamic. */
static om_kind slice_bounds(om_pass_ctx *c, om_graph *g, om_node *n, int *changes)
{
	if (n->nin < 3 || !n->in[0] || om_model_opset(c->m, n->domain) < 10)
		return OM_OK;
	const om_vinfo *x = om_vinfo_get(c, g, n->in[0]);
	if (!om_vi_ranked(x) || x->type.rank < 1)
		return OM_OK;
	int64_t axes[OM_MAX_RANK];
	int32_t k = -1;
	bool dynamic = false;
	for (int32_t slot = 1; slot <= 2; slot++) {
		const om_tensor *t = n->in[slot] ? om_value_const(g, n->in[slot]) : NULL;
		const om_vinfo *s = n->in[slot] && !t ? om_vinfo_get(c, g, n->in[slot]) : NULL;
		int64_t len = t ? (t->rank == 1 ? om_tensor_numel(t) : -1)
				: (s && s->npv >= 1 && s->pvrank == 1 ? s->npv : -1);
		if (len < 1 || len > x->type.rank || (k >= 0 && len != k))
			return OM_OK;
		k = (int32_t)len;
		dynamic |= !t;
	}
	if (!dynamic)
		return OM_OK;
	const om_tensor *ax = n->nin > 3 && n->in[3] ? om_value_const(g, n->in[3]) : NULL;
	if (n->nin > 3 && n->in[3] && (!ax || ax->dtype != OM_INT64 || !ax->data ||
				       om_tensor_numel(ax) != k))
		return OM_OK;
	const om_tensor *sp = n->nin > 4 && n->in[4] ? om_value_const(g, n->in[4]) : NULL;
	if (sp && (sp->dtype != OM_INT64 || !sp->data || om_tensor_numel(sp) != k))
		sp = NULL;
	bool forward[OM_MAX_RANK];
	for (int32_t i = 0; i < k; i++) {
		int64_t a = ax ? ((const int64_t *)ax->data)[i] : i;
		axes[i] = a < 0 ? a + x->type.rank : a;
		if (axes[i] < 0 || axes[i] >= x->type.rank)
			return OM_OK;
		forward[i] = !(n->nin > 4 && n->in[4]) || (sp && ((const int64_t *)sp->data)[i] > 0);
	}
	for (int32_t slot = 1; slot <= 2; slot++) {
		if (om_value_const(g, n->in[slot]))
			continue;
		const om_vinfo *s = om_vinfo_get(c, g, n->in[slot]);
		if (s->type.elem != OM_INT64)
			continue; /* starts and ends share their type: an int32 pair stays */
		int64_t lit[OM_MAX_RANK];
		bool ok = true;
		for (int32_t i = 0; i < k && ok; i++) {
			om_pe e = s->pv[i];
			om_dim d = x->type.dims[axes[i]];
			if (e.kind == OM_PE_NUM)
				lit[i] = e.num;
			else if (e.kind == OM_PE_SYM && !om_dim_known(d) && d.param &&
				 !strcmp(d.param, e.sym))
				/* an end of INT64_MAX with a negative step means "through element
				 * 0" (kernels/move/slice.c, as ONNX Runtime): INT64_MAX - 1 is only clamped */
				lit[i] = slot == 2 && !forward[i] ? INT64_MAX - 1 : INT64_MAX;
			else
				ok = false;
		}
		if (!ok)
			continue;
		om_kind rc = set_literal_input(c, g, n, slot, slot == 1 ? "starts" : "ends", lit,
					       k, changes);
		if (rc)
			return rc;
	}
	return OM_OK;
}

om_kind om_pass_shape_chains(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind rc = OM_OK;
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !om_node_default_domain(n))
			continue;
		rc = fold_literals(c, g, n, changes);
		if (rc || (n->flags & OM_NODE_DEAD))
			continue;
		switch (om_node_code(c->m, n)) {
		case OM_OPC_RESHAPE:
			rc = reshape_target(c, g, n, changes);
			break;
		case OM_OPC_EXPAND:
			rc = expand_shape(c, g, n, changes);
			break;
		case OM_OPC_SLICE:
			rc = slice_bounds(c, g, n, changes);
			break;
		default:
			break;
		}
	}
	om_graph_compact(g);
	return rc;
}
