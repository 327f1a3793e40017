/*
 * drop_outputs.c — om_simplify_options.drop_unused_outputs (`--drop-unused-outputs`): a node
 * output that nothing reads (no node, no subgraph, no graph output) becomes "" when the op's
 * signature at the model's opset marks that slot optional: Dropout's mask, the running and
 * saved statistics of BatchNormalization, LSTM's Y, Y_h, Y_c, MaxPool's Indices. Outputs
 * that are not optional (TopK's), those of variadic ops (Split: their count is what it
 * computes) and those of ops without a row (unknown domains) stay. Trailing "" outputs are then left out of the node, down to the op's
 * minimum output count.
 */
#include "pass.h"
#include "registry.h"

om_kind om_pass_drop_outputs(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_graph_count_uses(g);
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		const om_op *op = om_node_op(c->m, n);
		const om_sig *s = op ? om_op_sig_at(op, om_model_opset(c->m, n->domain)) : NULL;
		if (!s || s->max_out == OM_MANY)
			continue; /* variadic outputs (Split's): their count is the op's meaning */
		for (int32_t o = 0; o < n->nout; o++) {
			om_value *v = n->out[o];
			const bool optional = (s->opt_out >> (o < 63 ? o : 63)) & 1u;
			if (!v || !optional || v->nuses > 0 ||
			    (v->flags & (OM_VALUE_GRAPH_OUTPUT | OM_VALUE_OUTER)) ||
			    om_value_used_by_subgraph(c, g, v))
				continue;
			n->out[o] = NULL;
			v->producer = NULL;
			v->producer_slot = -1;
			v->flags &= ~(uint32_t)OM_VALUE_INFO;
			(*changes)++;
		}
		while (n->nout > s->min_out && n->nout > 1 && !n->out[n->nout - 1])
			n->nout--;
	}
	int32_t k = 0; /* the dropped values leave value_info too */
	for (int32_t i = 0; i < g->ninfos; i++)
		if (g->infos[i]->flags & OM_VALUE_INFO)
			g->infos[k++] = g->infos[i];
	g->ninfos = k;
	return OM_OK;
}
