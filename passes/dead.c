/* dead.c — the eliminate_dead pass: nodes of the default domain whose outputs nobody uses
 * (graph outputs and subgraph references count as uses), then initializers and value_info
 * entries that no longer name anything. Nodes of other domains stay. */
#include <string.h>

#include "pass.h"

static bool removable(const om_node *n)
{
	return !n->domain[0] || !strcmp(n->domain, "ai.onnx");
}

static bool unused(const om_node *n)
{
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && n->out[o]->nuses > 0)
			return false;
	return true;
}

static bool live_value(const om_value *v)
{
	if (v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT | OM_VALUE_OUTER))
		return true;
	if (v->flags & OM_VALUE_INITIALIZER)
		return v->nuses > 0;
	return v->producer && !(v->producer->flags & OM_NODE_DEAD) &&
	       v->producer->out[v->producer_slot] == v;
}

om_kind om_pass_dead(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_graph_count_uses(g);
	for (int32_t i = g->nnodes - 1; i >= 0; i--) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !removable(n) || !unused(n))
			continue;
		n->flags |= OM_NODE_DEAD;
		(*changes)++;
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k] && n->in[k]->nuses > 0)
				n->in[k]->nuses--;
		/* outer references of its subgraphs are recounted on the next run */
	}
	om_graph_compact(g);
	om_graph_count_uses(g);
	for (int32_t i = 0; i < g->ninits; i++) {
		om_value *v = g->inits[i];
		if (v->nuses == 0 && !(v->flags & OM_VALUE_GRAPH_INPUT))
			om_drop_initializer(c->m, v);
	}
	*changes += om_compact_initializers(g);
	int32_t k = 0;
	for (int32_t i = 0; i < g->ninfos; i++) {
		om_value *v = g->infos[i];
		if (live_value(v) && !(v->flags & OM_VALUE_INITIALIZER))
			g->infos[k++] = v;
		else
			v->flags &= ~(uint32_t)OM_VALUE_INFO;
	}
	g->ninfos = k;
	return OM_OK;
}
