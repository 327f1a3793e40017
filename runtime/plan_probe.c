/*
 * plan_probe.c — plan-time shapes of the values shaped per run, for the planner's decisions.
 *
 * A step whose input shapes are not all settled is shaped again in every run, so its slots
 * hold no plan-time shape. Models exported with a symbolic batch or image size (dynamic_axes)
 * are shaped per run throughout, yet their element types, ranks and channel counts are fixed.
 * The probe runs the rows' inference with each symbolic dim of a graph input taken as 1 in
 * axis 0 (a batch) and PROBE_DIM elsewhere (an image side: a multiple of the strides CNNs
 * have). The planner decides from what does not depend on those values: element types and
 * ranks, and the channel counts of convolutions' outputs (fixed by their weights) and of what
 * is computed from them element-wise or pooled; a value that carries a symbolic dim into
 * another axis (Shape, then Reshape) needs a value the probe does not have, so it stays
 * unknown. run.c checks a blocked value's channels in every run.
 */
#include <stdlib.h>

#include "plan.h"

enum {
	MAX_POS = 32,  /* steps with more inputs or outputs are not probed */
	PROBE_DIM = 64 /* a symbolic dim past axis 0 */
};

om_tensor *om_plan_probe(const om_plan *p)
{
	return om_plan_probe_with(p, 1, PROBE_DIM);
}

om_tensor *om_plan_probe_with(const om_plan *p, int64_t batch, int64_t side)
{
	om_tensor *t = calloc((size_t)p->nslots, sizeof *t);
	if (!t)
		return NULL;
	for (int32_t v = 0; v < p->nslots; v++) {
		const om_slot *sl = &p->slots[v];
		t[v] = sl->meta;
		if (sl->known)
			continue;
		t[v].rank = -1;
		const om_type *ty = &sl->v->type;
		if (sl->kind != OM_SLOT_INPUT)
			continue;
		if (ty->kind != OM_TYPE_TENSOR || ty->rank < 0 || ty->rank > OM_MAX_RANK)
			continue;
		for (int32_t i = 0; i < ty->rank; i++)
			t[v].dims[i] = om_dim_known(ty->dims[i]) ? ty->dims[i].value
				       : i == 0			 ? batch
								 : side;
		t[v].dtype = ty->elem, t[v].rank = ty->rank;
	}
	for (int32_t i = 0; i < p->nsteps; i++) {
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
		om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset,
			    .nin = n->nin, .nout = n->nout,
			    .in = in, .out = out, .st = &st, .threads = 1};
		if (!all || sp->op->infer(&c))
			continue;
		for (int32_t k = 0; k < n->nout; k++)
			if (out[k] && om_shape_bytes(res[k].dtype, res[k].rank, res[k].dims) >= 0)
				t[sp->out[k]] = res[k], t[sp->out[k]].data = NULL;
	}
	return t;
}

