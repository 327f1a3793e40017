/* forget_protos.h — makes the writer rebuild every message from the IR (round-trip tests). */
#ifndef OM_FORGET_PROTOS_H
#define OM_FORGET_PROTOS_H

#include "ir.h"

/* Clears what lets the writer reuse loaded messages, so that it rebuilds them from the IR. */
static inline void forget_protos(om_graph *g)
{
	for (int32_t i = 0; i < g->ninits; i++)
		if (g->inits[i]->init) /* a tensor the IR cannot hold stays its message */
			g->inits[i]->init_proto = NULL;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i]; /* nodes are always rebuilt (proto: unmodelled fields) */
		for (int32_t a = 0; a < n->nattr; a++) {
			om_attr *at = &n->attrs[a];
			if (at->type >= OM_ATTR_FLOAT && at->type <= OM_ATTR_GRAPHS)
				at->proto = NULL;
			if (at->g)
				forget_protos(at->g);
			for (int64_t k = 0; at->graphs && k < at->n; k++)
				forget_protos(at->graphs[k]);
		}
	}
}

#endif
