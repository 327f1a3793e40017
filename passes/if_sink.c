/*
 * if_sink.c — part of merge_ifs: a view (Squeeze, Unsqueeze, Reshape) that alone reads an
 * If's output, its other inputs constants, moves into both branches, applied there to the
 * value each branch returns; the If then writes the view's output. Made only when each branch
 * writes that output with a view or an Identity that nothing else in the branch reads, so that
 * eliminate_identities joins the two there (a view chain becomes one node, an Identity goes):
 * the main graph loses a node and the branches gain none.
 *
 * Also a node that only an If's branches read (no subgraph of its own, not random) moves into
 * the branches that read it: the main graph loses a node, the branches gain one each (the
 * node runs only when a branch that needs it runs).
 */
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "match.h"
#include "merge_ifs.h"

static bool view_code(enum om_opcode k)
{
	return k == OM_OPC_SQUEEZE || k == OM_OPC_UNSQUEEZE || k == OM_OPC_RESHAPE;
}

/* Branch b writes output j with a view or an Identity nothing else in b reads. */
static bool view_tail(om_pass_ctx *c, const om_graph *b, int32_t j)
{
	const om_value *v = b->outputs[j];
	const om_node *p = v->producer;
	if (!p || p->graph != b || (p->flags & OM_NODE_DEAD) || p->nout != 1 ||
	    !om_node_default_domain(p) ||
	    !(view_code(om_node_code(c->m, p)) || om_node_has(c->m, p, OM_OP_PASSTHROUGH)))
		return false;
	for (int32_t k = 0; k < b->noutputs; k++)
		if (k != j && b->outputs[k] == v)
			return false;
	for (int32_t i = 0; i < b->nnodes; i++)
		for (int32_t k = 0; !(b->nodes[i]->flags & OM_NODE_DEAD) && k < b->nodes[i]->nin; k++)
			if (b->nodes[i]->in[k] == v)
				return false;
	return true;
}

/* b's reference to g's value v (one more outer reference when b has none); NULL when b
 * defines a value of that name itself or out of memory. */
static om_value *outer_ref(om_graph *b, const om_value *v)
{
	om_value *w = om_graph_find(b, v->name);
	if (w)
		return (w->flags & OM_VALUE_OUTER) ? w : NULL;
	w = om_graph_value(b, v->name);
	if (w)
		w->flags |= OM_VALUE_OUTER;
	return w;
}

static om_graph *branch_of(const om_node *n, const char *name)
{
	const om_attr *a = om_node_attr(n, name);
	return a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
}

/* Moves view x (reading output j of If f) into branch b. */
static om_kind sink_into(om_pass_ctx *c, om_graph *b, const om_node *x, int32_t j)
{
	om_node *nn = om_graph_add_node_like(b, x, x->nin, 1);
	om_value *w = om_graph_fresh_value(b, x->out[0]->name);
	om_value **list = om_arena_alloc(c->m->arena, sizeof *list * (size_t)(b->noutputs + 1));
	if (!nn || !w || !list)
		return om_error(c->st, OM_ERR_NOMEM, x, "out of memory");
	nn->in[0] = b->outputs[j];
	for (int32_t k = 1; k < x->nin; k++)
		if (x->in[k] && !(nn->in[k] = outer_ref(b, x->in[k])))
			return om_error(c->st, OM_ERR_NOMEM, x, "out of memory");
	w->type = x->out[0]->type;
	om_node_set_output(nn, 0, w);
	memcpy(list, b->outputs, sizeof *list * (size_t)b->noutputs);
	b->outputs[j]->flags &= ~(uint32_t)OM_VALUE_GRAPH_OUTPUT;
	list[j] = w;
	w->flags |= OM_VALUE_GRAPH_OUTPUT;
	b->outputs = list;
	return OM_OK;
}

static om_kind try_sink(om_pass_ctx *c, om_graph *g, om_node *x, bool *done)
{
	*done = false;
	if (x->nout != 1 || !x->out[0] || !x->nin || !x->in[0] || !om_node_default_domain(x) ||
	    !view_code(om_node_code(c->m, x)))
		return OM_OK;
	om_node *f = om_match_producer(g, x->in[0], OM_OPC_IF);
	int32_t j = x->in[0]->producer_slot;
	if (!f || !om_node_default_domain(f) || !om_only_reader(g, x->in[0], x) ||
	    om_node_reads(x, x->out[0]))
		return OM_OK;
	om_graph *t = branch_of(f, "then_branch"), *e = branch_of(f, "else_branch");
	if (!t || !e || t == e || j < 0 || j >= t->noutputs || j >= e->noutputs ||
	    !view_tail(c, t, j) || !view_tail(c, e, j))
		return OM_OK;
	for (int32_t k = 1; k < x->nin; k++) {
		if (!x->in[k])
			continue;
		const om_value *ti = om_graph_find(t, x->in[k]->name),
			       *ei = om_graph_find(e, x->in[k]->name);
		if (!om_value_const(g, x->in[k]) || (ti && !(ti->flags & OM_VALUE_OUTER)) ||
		    (ei && !(ei->flags & OM_VALUE_OUTER)))
			return OM_OK;
	}
	om_kind rc = sink_into(c, t, x, j);
	if (!rc)
		rc = sink_into(c, e, x, j);
	if (rc)
		return rc;
	om_value *y = x->in[0];
	om_node_set_output(f, j, x->out[0]);
	y->producer = NULL;
	x->flags |= OM_NODE_DEAD;
	*done = true;
	return OM_OK;
}

/* The one If whose branches alone read x's outputs (no subgraph inside them), or NULL. */
static om_node *only_if_reader(om_pass_ctx *c, const om_graph *g, const om_node *x)
{
	om_node *f = NULL;
	for (int32_t k = 0; k < x->nout; k++)
		if (!x->out[k] || (x->out[k]->flags & OM_VALUE_GRAPH_OUTPUT))
			return NULL;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (n == x || (n->flags & OM_NODE_DEAD))
			continue;
		for (int32_t k = 0; k < x->nout; k++) {
			for (int32_t j = 0; j < n->nin; j++)
				if (n->in[j] == x->out[k])
					return NULL;
			if (!om_node_sub_refers(n, x->out[k]->name))
				continue;
			if ((f && f != n) || om_node_code(c->m, n) != OM_OPC_IF)
				return NULL;
			f = n;
		}
	}
	const om_graph *t = f ? branch_of(f, "then_branch") : NULL,
		       *e = f ? branch_of(f, "else_branch") : NULL;
	if (!t || !e || t == e || om_graph_has_subgraph(t) || om_graph_has_subgraph(e))
		return NULL;
	return f;
}

/* A copy of x in branch b, writing the values b referred to by x's output names. */
static om_kind copy_into(om_pass_ctx *c, om_graph *b, const om_node *x, bool *ok)
{
	*ok = false;
	for (int32_t k = 0; k < x->nin; k++) {
		const om_value *w = x->in[k] ? om_graph_find(b, x->in[k]->name) : NULL;
		if (w && !(w->flags & OM_VALUE_OUTER))
			return OM_OK; /* b defines a value of that name */
	}
	om_node *nn = om_graph_add_node_like(b, x, x->nin, x->nout);
	if (!nn)
		return om_error(c->st, OM_ERR_NOMEM, x, "out of memory");
	for (int32_t k = 0; k < x->nin; k++)
		if (x->in[k] && !(nn->in[k] = outer_ref(b, x->in[k])))
			return om_error(c->st, OM_ERR_NOMEM, x, "out of memory");
	for (int32_t k = 0; k < x->nout; k++) {
		om_value *w = om_graph_find(b, x->out[k]->name);
		if (w)
			w->flags &= ~(uint32_t)OM_VALUE_OUTER;
		else if (!(w = om_graph_fresh_value(b, x->out[k]->name)))
			return om_error(c->st, OM_ERR_NOMEM, x, "out of memory");
		w->type = x->out[k]->type;
		om_node_set_output(nn, k, w);
	}
	*ok = true;
	return om_graph_toposort(b, c->st);
}

static om_kind try_sink_node(om_pass_ctx *c, om_graph *g, om_node *x, bool *done)
{
	*done = false;
	if (!om_node_default_domain(x) || om_node_has_subgraph(x) || !x->nout ||
	    om_node_has(c->m, x, OM_OP_RANDOM | OM_OP_CONTROL) || !om_node_has(c->m, x, OM_OP_EXACT))
		return OM_OK;
	om_node *f = only_if_reader(c, g, x);
	if (!f)
		return OM_OK;
	/* the IR's sort does not see subgraph references: x's inputs must come before f */
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
	for (int32_t k = 0; k < x->nin; k++) {
		const om_node *p = x->in[k] ? x->in[k]->producer : NULL;
		if (p && p->graph == g && p->id >= f->id)
			return OM_OK;
	}
	om_graph *bs[2] = {branch_of(f, "then_branch"), branch_of(f, "else_branch")};
	bool reads[2] = {false, false};
	for (int b = 0; b < 2; b++)
		for (int32_t k = 0; k < x->nout; k++) {
			const om_value *w = om_graph_find(bs[b], x->out[k]->name);
			reads[b] |= w && (w->flags & OM_VALUE_OUTER);
		}
	for (int b = 0; b < 2; b++)
		for (int32_t k = 0; k < x->nin; k++) {
			const om_value *w = x->in[k] ? om_graph_find(bs[b], x->in[k]->name) : NULL;
			if (reads[b] && w && !(w->flags & OM_VALUE_OUTER))
				return OM_OK;
		}
	for (int b = 0; b < 2; b++) {
		bool ok = true;
		om_kind rc = reads[b] ? copy_into(c, bs[b], x, &ok) : OM_OK;
		if (rc || !ok)
			return rc ? rc : om_error(c->st, OM_ERR_INTERNAL, x, "sinking a node");
	}
	for (int32_t k = 0; k < x->nout; k++)
		x->out[k]->producer = NULL;
	x->flags |= OM_NODE_DEAD;
	*done = true;
	return OM_OK;
}

om_kind om_if_sink_views(om_pass_ctx *c, om_graph *g, int *changes)
{
	int sunk = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *x = g->nodes[i];
		if (x->flags & OM_NODE_DEAD)
			continue;
		bool done;
		om_kind rc = try_sink(c, g, x, &done);
		if (!rc && !done)
			rc = try_sink_node(c, g, x, &done);
		if (rc)
			return rc;
		sunk += done;
	}
	*changes += sunk;
	if (!sunk)
		return OM_OK;
	om_graph_compact(g);
	return om_graph_toposort(g, c->st);
}
