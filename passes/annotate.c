/* annotate.c — writes what shape inference knows into values that have no type (for tools
 * that show types, such as `omopt dot`); the model's graph structure is not changed. */
#include "pass.h"

static void annotate_graph(om_pass_ctx *c, om_graph *g)
{
	int changes = 0;
	om_pass_infer(c, g, &changes); /* best effort: what it cannot type stays unknown */
	om_value *v, *tmp;
	HASH_ITER(hh, g->values, v, tmp) {
		if (v->type.kind == OM_TYPE_TENSOR && v->type.rank >= 0)
			continue;
		const om_vinfo *vi = om_vinfo_get(c, g, v);
		if (!vi || vi->type.kind != OM_TYPE_TENSOR || vi->type.rank < 0)
			continue;
		om_dim *dims = om_arena_alloc(g->model->arena,
					      sizeof *dims * (size_t)(vi->type.rank + 1));
		if (!dims)
			return;
		for (int32_t i = 0; i < vi->type.rank; i++) {
			dims[i] = vi->type.dims[i];
			if (om_symbol_internal(dims[i].param))
				dims[i] = (om_dim){-1, NULL};
		}
		v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = vi->type.elem,
				    .rank = vi->type.rank, .dims = dims};
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			if (n->attrs[a].g)
				annotate_graph(c, n->attrs[a].g);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n; k++)
				annotate_graph(c, n->attrs[a].graphs[k]);
		}
	}
}

om_kind om_annotate_types(om_model *m, om_status *st)
{
	if (!m->graph)
		return OM_OK;
	om_pass_ctx c;
	if (om_pass_ctx_open(&c, m, NULL, st))
		return st->kind;
	c.nofold = 1;
	c.fold_max = 0; /* types only: no plan-time values computed through kernels */
	annotate_graph(&c, m->graph);
	om_pass_ctx_close(&c);
	return OM_OK;
}
