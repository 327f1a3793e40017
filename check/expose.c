/* expose.c — a copy of a model whose main graph also outputs chosen intermediate values, so
 * that one run gives them all (om_compare, om_bisect). */
#include <string.h>

#include "check.h"

om_kind om_model_expose(const om_model *m, const char *const *names, int n, om_model **out,
			om_status *st)
{
	om_model *c;
	om_kind rc = om_model_clone(m, &c, st);
	if (rc)
		return rc;
	om_graph *g = c->graph;
	rc = om_graph_toposort(g, st);
	om_value **outs = rc ? NULL
			     : om_arena_alloc(c->arena, sizeof *outs * (size_t)(g->noutputs + n));
	if (!rc && !outs)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (rc) {
		om_model_free(c);
		return rc;
	}
	memcpy(outs, g->outputs, sizeof *outs * (size_t)g->noutputs);
	int32_t k = g->noutputs;
	for (int i = 0; i < n; i++) {
		om_value *v = om_graph_find(g, names[i]);
		if (!v || !v->producer || (v->flags & OM_VALUE_GRAPH_OUTPUT))
			continue;
		v->flags |= OM_VALUE_GRAPH_OUTPUT;
		outs[k++] = v;
	}
	g->outputs = outs;
	g->noutputs = k;
	*out = c;
	return OM_OK;
}
