/*
 * view_chains.c — a chain of two plain views (Squeeze, Unsqueeze, Flatten, Reshape: the rows
 * with OM_OP_VIEW and OM_OP_SAME_SHAPE_COPY) becomes one Reshape of the chain's input, or
 * nothing when the chain ends with the input's shape. Applied node by node in order, a chain
 * of any length collapses into its last node.
 *
 * The Reshape's target is a literal written from the last view's inferred extents: a number
 * stays (0 excepted: without allowzero it would copy an extent), a symbol that is the input's
 * extent at the same position becomes 0 (copy), and one extent left becomes -1, only when
 * every other entry is a positive number so that -1 resolves for every value of every symbol,
 * 0 included. A view and its input hold the same elements in the same order, so any view of
 * x with y's shape is y.
 */
#include <stdio.h>
#include <string.h>

#include "infer.h"
#include "registry.h"
#include "shape_util.h"
#include "uses.h"
#include "match.h"
#include "reshape_literal.h"

static bool plain_view(const om_pass_ctx *c, const om_node *n)
{
	return om_node_default_domain(n) && n->nout == 1 && n->nin >= 1 && n->in[0] &&
	       om_node_has(c->m, n, OM_OP_VIEW | OM_OP_SAME_SHAPE_COPY);
}

static bool same_extents(const om_vinfo *x, const om_vinfo *y)
{
	if (x->type.rank != y->type.rank)
		return false;
	for (int32_t i = 0; i < x->type.rank; i++)
		if (!om_dims_equal(x->type.dims[i], y->type.dims[i]))
			return false;
	return true;
}

/* True when x and y have the same element count for every value of the symbols: the same
 * product of numbers and the same symbols, each as often. (A view's inferred type always
 * does; a declared one that inference could not check may not, and a target written from it
 * would fail where the model runs.) */
static bool same_count(const om_vinfo *x, const om_vinfo *y)
{
	const char *sym[OM_MAX_RANK];
	int32_t nsym = 0;
	int64_t px = 1, py = 1;
	for (int32_t i = 0; i < x->type.rank; i++) {
		const om_dim d = x->type.dims[i];
		if (om_dim_known(d)) {
			if (__builtin_mul_overflow(px, d.value, &px))
				return false;
		} else if (d.param)
			sym[nsym++] = d.param;
		else
			return false;
	}
	for (int32_t i = 0; i < y->type.rank; i++) {
		const om_dim d = y->type.dims[i];
		if (om_dim_known(d)) {
			if (__builtin_mul_overflow(py, d.value, &py))
				return false;
			continue;
		}
		int32_t k = 0;
		while (k < nsym && !(d.param && sym[k] && !strcmp(sym[k], d.param)))
			k++;
		if (k == nsym)
			return false;
		sym[k] = NULL; /* matched once */
	}
	for (int32_t k = 0; k < nsym; k++)
		if (sym[k])
			return false;
	return px == py;
}

/* The Reshape target giving y's extents from x; false when there is none valid for every
 * value of the symbols. y's extents are the target's entries (a known 0 has no literal: without
 * allowzero it would copy x's extent); with no entry left to -1, the element counts must agree. */
static bool target_of(const om_vinfo *x, const om_vinfo *y, int64_t *lit)
{
	om_pe e[OM_MAX_RANK];
	for (int32_t i = 0; i < y->type.rank; i++) {
		const om_dim d = y->type.dims[i];
		if (om_dim_known(d) && d.value == 0)
			return false;
		e[i] = om_dim_known(d) ? (om_pe){.kind = OM_PE_NUM, .num = d.value}
		       : d.param   ? (om_pe){.kind = OM_PE_SYM, .sym = d.param}
				   : (om_pe){.kind = OM_PE_UNK};
	}
	if (!om_reshape_literal(x, false, y->type.rank, e, lit))
		return false;
	for (int32_t i = 0; i < y->type.rank; i++)
		if (lit[i] == -1)
			return true;
	return same_count(x, y);
}

om_kind om_collapse_view_chain(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	if (!plain_view(c, n) || !n->out[0] || om_model_opset(c->m, "") < 5)
		return OM_OK;
	om_value *mid = n->in[0];
	om_node *p = mid->producer;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || !plain_view(c, p))
		return OM_OK;
	om_value *x = p->in[0];
	const om_vinfo *xi = om_vinfo_get(c, g, x), *yi = om_vinfo_get(c, g, n->out[0]);
	if (!om_vi_ranked(xi) || !om_vi_ranked(yi) || !xi->type.elem ||
	    xi->type.elem != yi->type.elem)
		return OM_OK;
	if (same_extents(xi, yi) && om_bypass_node(c, g, n, x)) {
		*done = true;
		return OM_OK;
	}
	int64_t lit[OM_MAX_RANK];
	if (!target_of(xi, yi, lit))
		return OM_OK;
	const int64_t k = yi->type.rank;
	om_tensor *t = om_model_tensor(c->m, OM_INT64, 1, &k);
	char hint[256];
	snprintf(hint, sizeof hint, "%s_shape", n->name[0] ? n->name : "Reshape");
	om_value *shape = t ? (memcpy(t->data, lit, sizeof(int64_t) * (size_t)k),
			       om_new_constant(c, g, hint, t))
			    : NULL;
	if (!shape)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory for a Reshape target");
	om_value *const in[2] = {x, shape};
	om_kind rc = om_node_become(c, g, n, "", "Reshape", 2, in, c->st);
	if (rc)
		return rc;
	om_uses_set_input(c, n, 0, x);
	om_uses_set_input(c, n, 1, shape);
	*done = true;
	return OM_OK;
}
