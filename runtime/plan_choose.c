/*
 * plan_choose.c — the implementation each step will run, recorded at plan time.
 *
 * A row whose kernel has several implementations has a choose function (op.h): asked with the
 * step's settled shapes, its plan-time constants, the session's mode and threads and the
 * layout and absorptions the planner chose, it names the implementation the kernel will take
 * through the same functions. The answer goes into the step's plan_impl, which only this file
 * writes; `omopt dot --plan`, `run --profile-nodes` (om_profile_row.plan_impl) and
 * om_session_node_info read it. Steps shaped per run have none: their kernel's run-time record
 * (om_step.impl) is all there is.
 */
#include <string.h>

#include "plan.h"

enum { MAX_POS = 32 }; /* steps with more inputs or outputs are not asked */

/* A slot's plan-time tensor as the kernel will see it: no data unless a constant */
static om_tensor seen(const om_slot *sl)
{
	om_tensor t = sl->meta;
	if (sl->kind != OM_SLOT_CONST)
		t.data = NULL;
	return t;
}

static void choose_step(const om_session *s, const om_plan *p, om_step *sp)
{
	const om_node *n = sp->node;
	if (n->nin > MAX_POS || n->nout > MAX_POS)
		return;
	om_tensor tin[MAX_POS], tout[MAX_POS], scale;
	const om_tensor *in[MAX_POS];
	om_tensor *out[MAX_POS];
	uint64_t const_in = 0;
	for (int32_t i = 0; i < n->nin; i++) {
		in[i] = NULL;
		if (sp->in[i] < 0)
			continue;
		const om_slot *sl = &p->slots[sp->in[i]];
		if (!sl->known)
			return;
		tin[i] = seen(sl);
		in[i] = &tin[i];
		if (sl->kind == OM_SLOT_CONST)
			const_in |= (uint64_t)1 << i;
	}
	for (int32_t i = 0; i < n->nout; i++) {
		out[i] = NULL;
		if (sp->out[i] < 0)
			continue;
		const om_slot *sl = &p->slots[sp->out[i]];
		if (!sl->known)
			return;
		tout[i] = seen(sl);
		out[i] = &tout[i];
	}
	if (sp->scale >= 0)
		scale = seen(&p->slots[sp->scale]);
	om_status st = {0};
	const om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset, .nin = n->nin,
			  .nout = n->nout, .in = in, .out = out, .st = &st, .exact = s->opt.exact,
			  .threads = s->opt.threads > 1 ? s->opt.threads : 1, .const_in = const_in,
			  .post = sp->post.kind ? &sp->post : NULL,
			  .in_scale = sp->scale >= 0 ? &scale : NULL, .blocked = sp->blocked,
			  .block = sp->blocked ? p->block : 0};
	sp->op->choose(&c, &sp->plan_impl);
}

void om_plan_choose(om_session *s, om_plan *p)
{
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		memset(&sp->plan_impl, 0, sizeof sp->plan_impl);
		if (!sp->op->choose || sp->folded || sp->dead || sp->absorbed || sp->dynamic ||
		    (sp->op->flags & OM_OP_CONTROL))
			continue;
		choose_step(s, p, sp);
		if (s->prof && s->prof[sp->prof].node) /* a profile row of its own */
			s->prof[sp->prof].plan_impl = sp->plan_impl.name;
	}
}
