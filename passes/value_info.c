/*
 * value_info.c — the inferred shapes written to the model: after the passes, every value a
 * live node writes whose element type inference knows is listed in its graph's value_info
 * with the inferred shape (numbers, the model's symbols as dim_param; inference's internal
 * symbols become dims without a value). What the model declared stays where inference knows
 * less or disagrees (another element type or rank); a dim declared as a number is never
 * replaced. Graph inputs, outputs and initializers are never listed; neither are sequences,
 * optionals and maps. Netron and other tools then show a shape on every edge.
 * om_declare_outputs merges the same way into a graph's output declarations (inputs stay as
 * declared): what inference knows for every value of every symbol, so a dim declared as a
 * symbol that inference knows as a number becomes that number.
 */
#include <string.h>

#include "pass.h"

static bool tensor_elem(int32_t elem)
{
	return elem > OM_UNDEFINED && elem < OM_DTYPE_COUNT;
}

/* The declared type of v merged with what inference knows (vi); false when nothing changes
 * (*oom set when the dims could not be allocated). */
static bool merged(om_pass_ctx *c, const om_value *v, const om_vinfo *vi, om_type *out,
		   bool *oom)
{
	const om_type *d = &v->type;
	const om_type *t = &vi->type;
	if (d->kind == OM_TYPE_OTHER || (d->kind == OM_TYPE_TENSOR && d->elem &&
					 d->elem != t->elem))
		return false;
	const bool declared_shape = d->kind == OM_TYPE_TENSOR && d->rank >= 0;
	if (declared_shape && t->rank >= 0 && t->rank != d->rank)
		return false;
	const int32_t rank = t->rank >= 0 ? t->rank : declared_shape ? d->rank : -1;
	*out = (om_type){.kind = OM_TYPE_TENSOR, .elem = t->elem, .rank = rank};
	bool changed = d->kind != OM_TYPE_TENSOR || d->elem != t->elem ||
		       (!declared_shape && rank >= 0);
	if (rank < 0)
		return changed;
	out->dims = om_arena_alloc(c->m->arena, sizeof(om_dim) * (size_t)(rank + 1));
	if (!out->dims) {
		*oom = true;
		return false;
	}
	for (int32_t i = 0; i < rank; i++) {
		om_dim dd = declared_shape ? d->dims[i] : (om_dim){-1, NULL};
		om_dim ti = t->rank >= 0 ? t->dims[i] : (om_dim){-1, NULL};
		if (om_symbol_internal(ti.param))
			ti.param = NULL;
		om_dim r = dd;
		if (!om_dim_known(dd) && (om_dim_known(ti) || (!dd.param && ti.param)))
			r = ti;
		changed |= !om_dims_equal(r, dd) || (!om_dim_known(r) && !r.param && dd.param);
		out->dims[i] = r;
	}
	return changed;
}

static bool listed(const om_value *v)
{
	const uint32_t skip = OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT |
			      OM_VALUE_INITIALIZER | OM_VALUE_OUTER;
	return !(v->flags & skip);
}

om_kind om_pass_value_info(om_pass_ctx *c, om_graph *g, int *changes)
{
	int64_t nouts = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		nouts += g->nodes[i]->nout;
	/* the values listed here, in node order, after what the model listed */
	om_value **add = om_arena_alloc(c->scratch, sizeof *add * (size_t)(nouts + 1));
	if (!add)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory writing value_info");
	int32_t nadd = 0;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t o = 0; !(n->flags & OM_NODE_DEAD) && o < n->nout; o++) {
			om_value *v = n->out[o];
			if (!v || !listed(v) || v->producer != n)
				continue;
			const om_vinfo *vi = om_vinfo_get(c, g, v);
			if (!vi || vi->type.kind != OM_TYPE_TENSOR || !tensor_elem(vi->type.elem))
				continue;
			om_type t;
			bool oom = false;
			if (merged(c, v, vi, &t, &oom)) {
				v->type = t;
				(*changes)++;
			}
			if (oom)
				return om_error(c->st, OM_ERR_NOMEM, NULL,
						"out of memory writing value_info");
			if (!(v->flags & OM_VALUE_INFO) && v->type.kind == OM_TYPE_TENSOR) {
				v->flags |= OM_VALUE_INFO;
				add[nadd++] = v;
			}
		}
	}
	if (!nadd)
		return OM_OK;
	om_value **infos = om_arena_alloc(c->m->arena, sizeof *infos * (size_t)(g->ninfos + nadd));
	if (!infos)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory writing value_info");
	if (g->ninfos)
		memcpy(infos, g->infos, sizeof *infos * (size_t)g->ninfos);
	memcpy(infos + g->ninfos, add, sizeof *infos * (size_t)nadd);
	g->infos = infos;
	g->ninfos += nadd;
	*changes += nadd;
	return OM_OK;
}

om_kind om_declare_outputs(om_pass_ctx *c, om_graph *g, int *changes)
{
	for (int32_t i = 0; i < g->noutputs; i++) {
		om_value *v = g->outputs[i];
		const om_vinfo *vi = om_vinfo_get(c, g, v);
		if (!vi || vi->type.kind != OM_TYPE_TENSOR || !tensor_elem(vi->type.elem))
			continue;
		om_type t;
		bool oom = false;
		if (merged(c, v, vi, &t, &oom)) {
			v->type = t;
			(*changes)++;
		}
		if (oom)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	return OM_OK;
}
