/*
 * plan_probe.c — plan-time shapes of the values shaped per run, for the planner's decisions.
 *
 * A step whose input shapes are not all settled is shaped again in every run, so its slots
 * hold no plan-time shape. Models exported with a symbolic batch (dynamic_axes) are shaped
 * per run throughout, yet every dim but the batch is known: when the graph inputs are
 * symbolic in axis 0 only, the rows' inference runs here with that axis at 1 (the probe). What
 * the planner decides from it holds for every batch: element types, ranks and channel counts
 * do not depend on the batch unless a value carries it there (Shape, then Reshape), and such
 * steps need a value the probe does not have, so their outputs stay unknown.
 */
#include <stdlib.h>

#include "plan.h"

enum { MAX_POS = 32 }; /* steps with more inputs or outputs are not probed */

om_tensor *om_plan_probe(const om_plan *p)
{
	om_tensor *t = calloc((size_t)p->nslots, sizeof *t);
	if (!t)
		return NULL;
	bool batch_only = true;
	for (int32_t v = 0; v < p->nslots; v++) {
		const om_slot *sl = &p->slots[v];
		t[v] = sl->meta;
		if (sl->known)
			continue;
		t[v].rank = -1;
		const om_type *ty = &sl->v->type;
		if (sl->kind != OM_SLOT_INPUT)
			continue;
		batch_only &= ty->kind == OM_TYPE_TENSOR && ty->rank >= 1 && ty->rank <= OM_MAX_RANK;
		for (int32_t i = 0; batch_only && i < ty->rank; i++) {
			batch_only = i == 0 || om_dim_known(ty->dims[i]);
			t[v].dims[i] = i == 0 ? 1 : ty->dims[i].value;
		}
		t[v].dtype = ty->elem, t[v].rank = batch_only ? ty->rank : -1;
	}
	for (int32_t i = 0; batch_only && i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		const om_node *n = sp->node;
		if (!sp->dynamic || sp->folded || (sp->op->flags & OM_OP_CONTROL) ||
		    n->nin > MAX_POS || n->nout > MAX_POS)
			continue;
		const om_tensor *in[MAX_POS];
		om_tensor *out[MAX_POS], res[MAX_POS];
		bool all = true;
		for (int32_t k = 0; k < n->nin; k++) {
			in[k] = sp->in[k] >= 0 ? &t[sp->in[k]] : NULL;
			all &= !in[k] || in[k]->rank >= 0;
		}
		for (int32_t k = 0; k < n->nout; k++) {
			res[k] = (om_tensor){.rank = -1};
			out[k] = sp->out[k] >= 0 ? &res[k] : NULL;
		}
		om_status st = {0};
		om_ctx c = {.node = n, .opset = sp->opset, .nin = n->nin, .nout = n->nout,
			    .in = in, .out = out, .st = &st, .threads = 1};
		if (!all || sp->op->infer(&c))
			continue;
		for (int32_t k = 0; k < n->nout; k++)
			if (out[k] && om_shape_bytes(res[k].dtype, res[k].rank, res[k].dims) >= 0)
				t[sp->out[k]] = res[k], t[sp->out[k]].data = NULL;
	}
	return t;
}

