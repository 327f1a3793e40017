/*
 * merge_ifs.c — the merge_ifs pass: two Ifs of one graph that read the same condition value
 * become one If computing both nodes' outputs, each branch the first node's branch followed by
 * the second's (which may read the first's outputs: it then reads the branch values that
 * wrote them). The merged node stands where the second one stood; the merge is made only when
 * no node between the two depends on the first (which also rules out a cycle).
 * Outputs of the first If that only the second read are dropped. Before merging, conditions
 * that are functions of an If's condition become it (if_conds.c); after, views reading an
 * If's output move into its branches (if_sink.c). Branches with subgraphs of their own are
 * left alone (their names would have to be kept).
 */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "match.h"
#include "merge_ifs.h"
#include "value_map.h"

enum { MAX_MERGES = 64 }; /* merges in one call; the driver's next round goes on */

static bool graph_refers(const om_graph *sub, const char *name)
{
	const om_value *v = om_graph_find(sub, name);
	if (v)
		return (v->flags & OM_VALUE_OUTER) != 0; /* else defined here: shadowed */
	for (int32_t i = 0; i < sub->nnodes; i++)
		if (om_node_sub_refers(sub->nodes[i], name))
			return true;
	return false;
}

bool om_node_sub_refers(const om_node *n, const char *name)
{
	for (int32_t a = 0; a < n->nattr; a++) {
		if (n->attrs[a].g && graph_refers(n->attrs[a].g, name))
			return true;
		for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
			if (graph_refers(n->attrs[a].graphs[k], name))
				return true;
	}
	return false;
}

bool om_node_reads(const om_node *n, const om_value *v)
{
	for (int32_t k = 0; k < n->nin; k++)
		if (n->in[k] == v)
			return true;
	return om_node_sub_refers(n, v->name);
}

bool om_only_reader(const om_graph *g, const om_value *v, const om_node *n)
{
	if (v->flags & OM_VALUE_GRAPH_OUTPUT)
		return false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *o = g->nodes[i];
		if (o != n && !(o->flags & OM_NODE_DEAD) && om_node_reads(o, v))
			return false;
	}
	return true;
}

static om_graph *branch(const om_node *n, const char *name)
{
	const om_attr *a = om_node_attr(n, name);
	return a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
}

/* An If whose branches merge_ifs may extend or copy: both present, output counts the node's,
 * no inputs, no subgraphs inside. */
static bool plain_if(om_pass_ctx *c, const om_node *n)
{
	if ((n->flags & OM_NODE_DEAD) || om_node_code(c->m, n) != OM_OPC_IF || n->nin != 1 ||
	    !n->in[0])
		return false;
	const om_graph *t = branch(n, "then_branch"), *e = branch(n, "else_branch");
	return t && e && t != e && t->noutputs == n->nout && e->noutputs == n->nout &&
	       !t->ninputs && !e->ninputs && !om_graph_has_subgraph(t) &&
	       !om_graph_has_subgraph(e);
}

static bool marked(const om_graph *g, const om_value *w, const bool *on, const om_node *first)
{
	const om_node *p = w ? w->producer : NULL;
	return p && p != first && p->graph == g && !(p->flags & OM_NODE_DEAD) && on[p->id];
}

/* the marked nodes of g (`on` by position, ids set), the If `first` excepted */
typedef struct marks {
	const om_graph *g;
	const bool *on;
	const om_node *first;
} marks;

static bool marked_ref(void *arg, om_value *v)
{
	const marks *m = arg;
	return marked(m->g, v, m->on, m->first);
}

/* Whether node n of g reads a value a marked node writes (`on` by position, ids set), the
 * If `first` excepted: as an input or from a subgraph (om_node_outer_refs). */
static bool reads_marked(const om_graph *g, const om_node *n, const bool *on, const om_node *first)
{
	for (int32_t k = 0; k < n->nin; k++)
		if (marked(g, n->in[k], on, first))
			return true;
	marks m = {g, on, first};
	return om_node_outer_refs(g, n, marked_ref, &m);
}

/* No node between g->nodes[i1] and g->nodes[i2] (g sorted, ids set) depends on the first
 * (directly or through others, by input or subgraph reference): the merged node then takes
 * the second's place and every reader stays after what it reads (the sort of the IR does not
 * see subgraph references, so the order must hold without it); no cycle either. */
static om_kind acyclic(om_pass_ctx *c, const om_graph *g, int32_t i1, int32_t i2, bool *ok)
{
	bool *on = calloc((size_t)g->nnodes + 1, sizeof *on);
	if (!on)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	on[i1] = true;
	*ok = true;
	for (int32_t k = i1 + 1; k < i2 && *ok; k++)
		*ok = (g->nodes[k]->flags & OM_NODE_DEAD) || !reads_marked(g, g->nodes[k], on, NULL);
	free(on);
	return OM_OK;
}

/* b2's outer references resolve in b1 to the same values: none is shadowed by a value b1
 * defines (references to n1's outputs excepted: they become b1's outputs). */
static bool no_shadow(const om_graph *b1, const om_graph *b2, const om_node *n1)
{
	const om_value *v, *tmp;
	HASH_ITER(hh, b2->values, v, tmp) {
		if (!(v->flags & OM_VALUE_OUTER))
			continue;
		bool of_n1 = false;
		for (int32_t j = 0; j < n1->nout; j++)
			of_n1 |= n1->out[j] && !strcmp(n1->out[j]->name, v->name);
		const om_value *w = om_graph_find(b1, v->name);
		if (!of_n1 && w && !(w->flags & OM_VALUE_OUTER))
			return false;
	}
	return true;
}

/* Copies b2's initializers and nodes into b1 (b2's references to n1's outputs read b1's
 * values for them); out[o] gets the value of b1 standing for b2's output o. */
static om_kind append_branch(om_pass_ctx *c, om_graph *b1, om_graph *b2, const om_node *n1,
			     om_value **out)
{
	om_vmap *map = NULL;
	bool nomem = false;
	om_kind rc = OM_OK;
	for (int32_t j = 0; j < n1->nout && !nomem; j++) {
		om_value *ov = n1->out[j] ? om_graph_find(b2, n1->out[j]->name) : NULL;
		if (ov && (ov->flags & OM_VALUE_OUTER))
			nomem = !om_vmap_put(&map, ov, b1->outputs[j]);
	}
	for (int32_t i = 0; i < b2->ninits && !rc && !nomem; i++) {
		om_value *to = om_vmap_get(b1, &map, b2->inits[i]);
		if (!to)
			nomem = true;
		else if (b2->inits[i]->init)
			rc = om_make_constant(c, b1, to, b2->inits[i]->init);
	}
	for (int32_t i = 0; i < b2->nnodes && !rc && !nomem; i++) {
		const om_node *bn = b2->nodes[i];
		if (bn->flags & OM_NODE_DEAD)
			continue;
		om_node *nn = om_graph_add_node_like(b1, bn, bn->nin, bn->nout);
		if (!nn) {
			nomem = true;
			break;
		}
		for (int32_t k = 0; k < bn->nin; k++)
			if (bn->in[k] && !(nn->in[k] = om_vmap_get(b1, &map, bn->in[k])))
				nomem = true;
		for (int32_t k = 0; k < bn->nout; k++) {
			om_value *v = bn->out[k] ? om_vmap_get(b1, &map, bn->out[k]) : NULL;
			nomem |= bn->out[k] && !v;
			om_node_set_output(nn, k, v);
		}
	}
	for (int32_t o = 0; o < b2->noutputs && !rc && !nomem; o++)
		nomem = !(out[o] = om_vmap_get(b1, &map, b2->outputs[o]));
	om_vmap_free(&map);
	if (nomem)
		return om_error(c->st, OM_ERR_NOMEM, n1, "out of memory merging Ifs");
	return rc;
}

/* b1's outputs become its kept ones and then `more` (an Identity writes one that b1 does not
 * compute itself or that is listed already). */
static om_kind relist_outputs(om_pass_ctx *c, om_graph *b1, const bool *keep, om_value **more,
			      int32_t nmore)
{
	int32_t n = 0;
	om_value **list = om_arena_alloc(c->m->arena,
					 sizeof *list * (size_t)(b1->noutputs + nmore + 1));
	if (!list)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory merging Ifs");
	for (int32_t j = 0; j < b1->noutputs; j++) {
		if (keep[j])
			list[n++] = b1->outputs[j];
		b1->outputs[j]->flags &= ~(uint32_t)OM_VALUE_GRAPH_OUTPUT;
	}
	for (int32_t o = 0; o < nmore; o++) {
		om_value *v = more[o];
		bool listed = false;
		for (int32_t k = 0; k < n; k++)
			listed |= list[k] == v;
		if (listed || !v->producer || v->producer->graph != b1) {
			om_node *id = om_graph_add_node(b1, "Identity", "", v->name, 1, 1);
			om_value *w = om_graph_fresh_value(b1, v->name);
			if (!id || !w)
				return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory merging Ifs");
			w->type = v->type;
			id->in[0] = v;
			om_node_set_output(id, 0, w);
			v = w;
		}
		list[n++] = v;
	}
	for (int32_t k = 0; k < n; k++)
		list[k]->flags |= OM_VALUE_GRAPH_OUTPUT;
	b1->outputs = list;
	b1->noutputs = n;
	return OM_OK;
}

static om_kind merge(om_pass_ctx *c, om_graph *g, om_node *n1, om_node *n2)
{
	om_graph *t1 = branch(n1, "then_branch"), *e1 = branch(n1, "else_branch");
	om_graph *t2 = branch(n2, "then_branch"), *e2 = branch(n2, "else_branch");
	size_t cap = (size_t)(n1->nout + n2->nout + 1);
	bool *keep = om_arena_alloc(c->scratch, sizeof *keep * cap);
	om_value **more = om_arena_alloc(c->scratch, sizeof *more * cap);
	if (!keep || !more)
		return om_error(c->st, OM_ERR_NOMEM, n1, "out of memory merging Ifs");
	int32_t nout = n2->nout;
	for (int32_t j = 0; j < n1->nout; j++) {
		keep[j] = n1->out[j] && !om_only_reader(g, n1->out[j], n2);
		nout += keep[j];
	}
	om_kind rc = OM_OK;
	om_graph *b1s[2] = {t1, e1}, *b2s[2] = {t2, e2};
	for (int k = 0; k < 2 && !rc; k++)
		if (!(rc = append_branch(c, b1s[k], b2s[k], n1, more)))
			rc = relist_outputs(c, b1s[k], keep, more, n2->nout);
	if (rc)
		return rc;
	om_node *nn = om_graph_add_node_like(g, n1, 1, nout);
	if (!nn)
		return om_error(c->st, OM_ERR_NOMEM, n1, "out of memory merging Ifs");
	nn->in[0] = n1->in[0];
	int32_t o = 0;
	for (int32_t j = 0; j < n1->nout; j++)
		if (keep[j])
			om_node_set_output(nn, o++, n1->out[j]);
	for (int32_t j = 0; j < n2->nout; j++)
		om_node_set_output(nn, o++, n2->out[j]);
	/* nn takes n2's place (ids set by find_pair) */
	g->nodes[n2->id] = nn;
	g->nnodes--;
	nn->id = n2->id;
	n1->flags |= OM_NODE_DEAD;
	n2->flags |= OM_NODE_DEAD;
	return OM_OK;
}

/* The first pair of Ifs on one condition that may merge: *i1 < *i2, or false. */
static om_kind find_pair(om_pass_ctx *c, om_graph *g, int32_t *i1, int32_t *i2, bool *found)
{
	*found = false;
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
	for (int32_t b = 0; b < g->nnodes; b++) {
		om_node *n2 = g->nodes[b];
		if (!plain_if(c, n2) || !n2->nout)
			continue;
		for (int32_t a = 0; a < b; a++) {
			om_node *n1 = g->nodes[a];
			if (!plain_if(c, n1) || n1->in[0] != n2->in[0] ||
			    !no_shadow(branch(n1, "then_branch"), branch(n2, "then_branch"), n1) ||
			    !no_shadow(branch(n1, "else_branch"), branch(n2, "else_branch"), n1))
				continue;
			bool ok = false;
			om_kind rc = acyclic(c, g, a, b, &ok);
			if (rc || ok) {
				*i1 = a, *i2 = b, *found = ok;
				return rc;
			}
		}
	}
	return OM_OK;
}

/* Outputs of If n that nothing reads leave the node and both branches (one output stays). */
static bool prune_outputs(om_pass_ctx *c, om_graph *g, om_node *n)
{
	om_graph *t = branch(n, "then_branch"), *e = branch(n, "else_branch");
	if (!t || !e || t == e || t->noutputs != n->nout || e->noutputs != n->nout)
		return false;
	int32_t used = 0;
	for (int32_t j = 0; j < n->nout; j++)
		used += n->out[j] && !om_only_reader(g, n->out[j], NULL);
	if (!used || used == n->nout)
		return false;
	om_graph *bs[2] = {t, e};
	for (int k = 0; k < 2; k++) {
		om_value **list = om_arena_alloc(c->m->arena, sizeof *list * (size_t)(used + 1));
		if (!list)
			return false;
		int32_t m = 0;
		for (int32_t j = 0; j < n->nout; j++) {
			om_value *v = bs[k]->outputs[j];
			if (n->out[j] && !om_only_reader(g, n->out[j], NULL))
				list[m++] = v;
			else
				v->flags &= ~(uint32_t)OM_VALUE_GRAPH_OUTPUT;
		}
		for (int32_t j = 0; j < m; j++)
			list[j]->flags |= OM_VALUE_GRAPH_OUTPUT;
		bs[k]->outputs = list;
		bs[k]->noutputs = m;
	}
	int32_t m = 0;
	for (int32_t j = 0; j < n->nout; j++) {
		om_value *v = n->out[j];
		if (v && !om_only_reader(g, v, NULL))
			n->out[m++] = v, v->producer_slot = m - 1;
		else if (v)
			v->producer = NULL;
	}
	n->nout = m;
	return true;
}

om_kind om_pass_merge_ifs(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind rc = om_if_conditions(c, g, changes);
	for (int32_t i = 0; !rc && i < g->nnodes; i++)
		if (plain_if(c, g->nodes[i]))
			*changes += prune_outputs(c, g, g->nodes[i]);
	for (int merges = 0; !rc && merges < MAX_MERGES; merges++) {
		int32_t i1, i2;
		bool found;
		if ((rc = find_pair(c, g, &i1, &i2, &found)) || !found)
			break;
		if ((rc = merge(c, g, g->nodes[i1], g->nodes[i2])))
			break;
		(*changes)++;
		om_graph_compact(g);
		rc = om_graph_toposort(g, c->st);
	}
	return rc ? rc : om_if_sink_views(c, g, changes);
}
