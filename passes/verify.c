/* verify.c — the IR verifier run between passes (--verify): every value a live node reads is
 * this graph's (or an outer reference), defined before it is read, produced once; graph
 * outputs are defined; initializers hold data. Recurses into subgraphs. */
#include <string.h>

#include "pass.h"

static bool defined_outside(const om_value *v)
{
	return (v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_OUTER)) ||
	       ((v->flags & OM_VALUE_INITIALIZER) && v->init);
}

static om_kind check_read(const om_graph *g, const om_node *n, const om_value *v, int32_t at,
			  om_status *st)
{
	if (om_graph_find(g, v->name) != v)
		return om_error(st, OM_ERR_INTERNAL, n, "reads '%s', which is not in graph '%s'",
				v->name, g->name);
	const om_node *p = v->producer;
	if (p && p->out[v->producer_slot] != v)
		p = NULL;
	if (!p && !defined_outside(v))
		return om_error(st, OM_ERR_INTERNAL, n, "reads '%s', which nothing defines",
				v->name);
	if (p && (p->graph != g || (p->flags & OM_NODE_DEAD) || p->id >= at))
		return om_error(st, OM_ERR_INTERNAL, n, "reads '%s' before its producer",
				v->name);
	return OM_OK;
}

om_kind om_verify_graph(const om_graph *g, om_status *st)
{
	for (int32_t i = 0; i < g->nnodes; i++)
		g->nodes[i]->id = i;
	om_kind rc;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			return om_error(st, OM_ERR_INTERNAL, n, "dead node left in the graph");
		if (n->graph != g)
			return om_error(st, OM_ERR_INTERNAL, n, "node in the wrong graph");
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k] && (rc = check_read(g, n, n->in[k], i, st)))
				return rc;
		for (int32_t k = 0; k < n->nout; k++) {
			const om_value *v = n->out[k];
			if (!v)
				continue;
			if (v->producer != n || v->producer_slot != k)
				return om_error(st, OM_ERR_INTERNAL, n,
						"output '%s' has another producer", v->name);
			if (defined_outside(v))
				return om_error(st, OM_ERR_INTERNAL, n,
						"output '%s' is also an input or initializer",
						v->name);
		}
		for (int32_t a = 0; a < n->nattr; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g && (rc = om_verify_graph(at->g, st)))
				return rc;
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				if ((rc = om_verify_graph(at->graphs[k], st)))
					return rc;
		}
		g->nodes[i]->id = i; /* subgraph checks renumber their own nodes only */
	}
	for (int32_t i = 0; i < g->noutputs; i++) {
		const om_value *v = g->outputs[i];
		const om_node *p = v->producer;
		bool produced = p && p->graph == g && !(p->flags & OM_NODE_DEAD) &&
				p->out[v->producer_slot] == v;
		if (!produced && !defined_outside(v))
			return om_error(st, OM_ERR_INTERNAL, NULL,
					"graph output '%s' is not defined", v->name);
	}
	for (int32_t i = 0; i < g->ninits; i++)
		if (!g->inits[i]->init || !(g->inits[i]->flags & OM_VALUE_INITIALIZER))
			return om_error(st, OM_ERR_INTERNAL, NULL, "initializer '%s' has no data",
					g->inits[i]->name);
	return OM_OK;
}
