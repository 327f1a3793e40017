/*
 * if_conds.c — part of merge_ifs: a condition that is a function of an If's condition becomes
 * that condition. PyTorch exports test the rank of a value an If computed (an LSTM cell's
 * "is the input batched", Size(Shape(If(...)))): when the two branches give known, different
 * ranks (or a dim Gather reads, known in both), Equal(that, k) is the If's condition c when
 * only the then branch's value equals k, Not(c) when only the else branch's does. The Equal's
 * output must only serve as a condition (If inputs, through Nots), since c may have another
 * shape of one element. Then an If whose condition is Not(x) reads x with its branches
 * swapped, so that Ifs on c and on Not(c) read one value (merge_ifs merges them).
 */
#include "registry.h"
#include "pass.h"
#include "match.h"
#include "merge_ifs.h"

static bool const_int1(const om_graph *g, om_value *v, int64_t *out)
{
	const om_tensor *t = v ? om_value_const(g, v) : NULL;
	if (!t || !t->data || om_tensor_numel(t) != 1)
		return false;
	if (t->dtype == OM_INT64)
		*out = *(const int64_t *)t->data;
	else if (t->dtype == OM_INT32)
		*out = *(const int32_t *)t->data;
	else
		return false;
	return true;
}

/* v = Size(Shape(y)) or Gather(Shape(y), i) (axis 0, i a constant of one element), y an
 * output of If f: its value in the then branch (*a) and the else branch (*b). */
static om_node *branch_values(om_pass_ctx *c, const om_graph *g, om_value *v, int64_t *a,
			      int64_t *b)
{
	om_node *p = v ? v->producer : NULL;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || !p->nin || !p->in[0])
		return NULL;
	enum om_opcode code = om_node_code(c->m, p);
	int64_t idx = 0;
	bool rank = code == OM_OPC_SIZE && p->nin == 1;
	if (!rank && !(code == OM_OPC_GATHER && p->nin == 2 && om_attr_int(p, "axis", 0) == 0 &&
		       const_int1(g, p->in[1], &idx)))
		return NULL;
	om_node *sh = om_match_producer(g, p->in[0], OM_OPC_SHAPE);
	if (!sh || sh->nin != 1 || !sh->in[0] || om_attr_int(sh, "start", 0) != 0 ||
	    om_node_attr(sh, "end"))
		return NULL;
	om_value *y = sh->in[0];
	om_node *f = om_match_producer(g, y, OM_OPC_IF);
	if (!f)
		return NULL;
	const om_attr *t = om_node_attr(f, "then_branch"), *e = om_node_attr(f, "else_branch");
	int32_t slot = y->producer_slot;
	if (!t || !e || !t->g || !e->g || slot < 0 || slot >= t->g->noutputs ||
	    slot >= e->g->noutputs)
		return NULL;
	om_graph *br[2] = {t->g, e->g};
	int64_t r[2];
	for (int k = 0; k < 2; k++) {
		const om_type *ty = om_match_type(c, br[k], br[k]->outputs[slot]);
		if (!ty)
			return NULL;
		if (rank) {
			r[k] = ty->rank;
			continue;
		}
		int64_t i = idx < 0 ? idx + ty->rank : idx;
		if (i < 0 || i >= ty->rank || !om_dim_known(ty->dims[i]))
			return NULL;
		r[k] = ty->dims[i].value;
	}
	*a = r[0], *b = r[1];
	return f;
}

/* v only serves as a condition: every reader is an If (its condition) or a Not whose output
 * only serves as one; v is no graph output and no subgraph reads it. */
static bool cond_only(om_pass_ctx *c, const om_graph *g, const om_value *v, int depth)
{
	if (depth > 8 || (v->flags & OM_VALUE_GRAPH_OUTPUT))
		return false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		if (om_node_sub_refers(n, v->name))
			return false;
		for (int32_t k = 0; k < n->nin; k++) {
			if (n->in[k] != v)
				continue;
			enum om_opcode code = om_node_code(c->m, n);
			if (code == OM_OPC_IF && k == 0)
				continue;
			if (code == OM_OPC_NOT && n->nout == 1 && n->out[0] &&
			    cond_only(c, g, n->out[0], depth + 1))
				continue;
			return false;
		}
	}
	return true;
}

static void replace_reads(om_graph *g, const om_value *from, om_value *to)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		for (int32_t k = 0; !(g->nodes[i]->flags & OM_NODE_DEAD) && k < g->nodes[i]->nin; k++)
			if (g->nodes[i]->in[k] == from)
				g->nodes[i]->in[k] = to;
}

static om_kind rewrite_equal(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	if (n->nin != 2 || n->nout != 1 || !n->out[0] || !n->in[0] || !n->in[1])
		return OM_OK;
	for (int s = 0; s < 2; s++) {
		int64_t k, a, b;
		if (!const_int1(g, n->in[1 - s], &k))
			continue;
		om_node *f = branch_values(c, g, n->in[s], &a, &b);
		if (!f || (a == k) == (b == k) || !f->in[0] || !cond_only(c, g, n->out[0], 0))
			continue;
		om_value *r = f->in[0];
		if (b == k) { /* only the else branch's value is k: Not(c) */
			om_node *nn = om_graph_add_node(g, "Not", "", n->name, 1, 1);
			om_value *o = om_graph_fresh_value(g, n->out[0]->name);
			if (!nn || !o)
				return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
			nn->in[0] = r;
			om_node_set_output(nn, 0, o);
			r = o;
		}
		replace_reads(g, n->out[0], r);
		n->flags |= OM_NODE_DEAD;
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

/* If(Not(x)) -> If(x), the branches swapped. */
static bool swap_not(om_pass_ctx *c, const om_graph *g, om_node *n)
{
	om_node *p = n->nin == 1 ? om_match_producer(g, n->in[0], OM_OPC_NOT) : NULL;
	if (!p || p->nin != 1 || !p->in[0])
		return false;
	om_attr *t = NULL, *e = NULL;
	for (int32_t a = 0; a < n->nattr; a++) {
		if (!strcmp(n->attrs[a].name, "then_branch"))
			t = &n->attrs[a];
		else if (!strcmp(n->attrs[a].name, "else_branch"))
			e = &n->attrs[a];
	}
	if (!t || !e || !t->g || !e->g || t->type != OM_ATTR_GRAPH || e->type != OM_ATTR_GRAPH)
		return false;
	om_graph *tmp = t->g;
	t->g = e->g;
	e->g = tmp;
	n->in[0] = p->in[0];
	(void)c;
	return true;
}

om_kind om_if_conditions(om_pass_ctx *c, om_graph *g, int *changes)
{
	if (om_model_opset(c->m, "") < 7) /* Equal-1's legacy broadcast */
		return OM_OK;
	int done_any = 0;
	int32_t n0 = g->nnodes; /* the Nots appended are looked at by swap_not below */
	for (int32_t i = 0; i < n0; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || om_node_code(c->m, n) != OM_OPC_EQUAL)
			continue;
		bool done;
		om_kind rc = rewrite_equal(c, g, n, &done);
		if (rc)
			return rc;
		done_any += done;
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (!(n->flags & OM_NODE_DEAD) && om_node_code(c->m, n) == OM_OPC_IF)
			done_any += swap_not(c, g, n);
	}
	*changes += done_any;
	if (!done_any)
		return OM_OK;
	om_graph_compact(g);
	return om_graph_toposort(g, c->st);
}
