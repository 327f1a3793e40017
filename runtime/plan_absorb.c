/*
 * plan_absorb.c — activations absorbed into the step that produces their input (fast mode).
 *
 * A step whose row applies a trailing activation itself (OM_OP_EPILOGUE: Conv, FusedConv
 * without an activation of its own, ConvTranspose, BatchNormalization) and whose float output
 * x is read by nothing but
 *
 *     an activation A (ops/activation.h: Relu, Sigmoid, Clip of constant bounds, QuickGelu,
 *     HardSwish, ...)                                     y = A(x)
 *  or an activation and a Mul of x with it (SiLU, the HardSwish of opsets before 14)
 *                                                         y = Mul(x, A(x))
 *
 * writes y itself, applying the activation while its output is in cache (om_ctx.post); the
 * absorbed steps do not run and x is never stored. x must be float (so is y: an activation
 * and that Mul keep x's type and shape, so shapes may wait for the run), no graph output and
 * read by no subgraph.
 *
 * After the layouts are planned, a step whose row scales its input 0 itself (OM_OP_IN_SCALE:
 * Conv, FusedConv) and whose input 0 is
 *
 *     Mul(x, s) or Mul(s, x), s a factor per image and channel: (N or 1, C, 1, 1) or (C, 1, 1)
 *
 * read by nothing else (the squeeze-excitation block's scale before its projection conv)
 * reads x and s itself (om_ctx.in_scale) and the Mul does not run: x s is never stored. With
 * one image oneDNN's path scales the weights instead (a pass over them in each run), so the
 * rule takes convs of at most half as many weights as X has elements an image (efficientnet_b0's
 * stages 2-4; later stages' weights outnumber their 14x14 and 7x7 images and their Muls cost
 * less than the pass: +0.02-0.05 ms each at 672 -> 112). x, s and the Mul's output must be float,
 * the output no graph output and read by no subgraph; x and s keep the Mul's layout.
 *
 * After the layouts are planned too, a step whose row adds an addend itself (OM_OP_SUM: Conv)
 * and whose float output x is read by nothing but
 *
 *     Add(x, z) or Add(z, x), z float of x's shape and layout     y = x + z
 *
 * reads z as its input 3 and writes y itself (a FusedConv's Z: the residual Add of a float16
 * model, which the float32 graph's fuse_conv_activation cannot rewrite as ONNX Runtime runs
 * no float16 FusedConv on CPU); then an activation reading y is absorbed as above, applied
 * after the sum. The step must have no activation absorbed already (that would come before
 * the sum); x, z and y must have the same shape (settled at plan time, or, shaped per run,
 * the same in two probes of other symbol values: no broadcast; run.c checks it in each run).
 *
 * Exact mode keeps every step: its kernels' bits are the contract.
 *
 * Why these are absorbed here and not rewritten in the graph (a fusion another runtime can run
 * is a pass of passes/pass_registry.c; one that is the executor's own, or depends on mode,
 * layout or algorithm, is here): docs/passes.md, "Graph rewrite or plan-time absorption".
 */
#include <stdlib.h>
#include <string.h>

#include "activation.h"
#include "plan.h"

typedef struct readers {
	int32_t n;       /* steps reading the slot (a step reading it twice counts twice) */
	int32_t step[2]; /* the first two */
} readers;

typedef struct scalar_arg {
	const om_plan *p;
	const om_step *sp;
} scalar_arg;

/* input k of the step as a float scalar, when a plan-time constant */
static bool const_scalar(void *arg, int32_t k, double *v)
{
	const scalar_arg *a = arg;
	const int32_t s = a->sp->in[k];
	const om_tensor *t = s >= 0 ? &a->p->slots[s].meta : NULL;
	if (!t || a->p->slots[s].kind != OM_SLOT_CONST || !t->data || om_tensor_numel(t) != 1)
		return false;
	if (t->dtype == OM_FLOAT)
		*v = *(const float *)t->data;
	else if (t->dtype == OM_DOUBLE)
		*v = *(const double *)t->data;
	else
		return false;
	return true;
}

static bool runs(const om_step *sp)
{
	return !sp->folded && !sp->dead && !sp->absorbed;
}

/* step sp's output 0 is float: its plan-time type (t: om_plan_probe's), or (a step shaped
 * per run that the probe did not reach) its input 0's (OM_OP_EPILOGUE rows: out[0] has
 * in[0]'s type) */
static bool float_out(const om_plan *p, const om_tensor *t, const om_step *sp)
{
	const int32_t x = sp->out[0], i = sp->node->nin >= 1 ? sp->in[0] : -1;
	const int32_t dt = t[x].dtype ? t[x].dtype : i >= 0 ? t[i].dtype : OM_UNDEFINED;
	return p->slots[x].kind == OM_SLOT_NODE && dt == OM_FLOAT;
}

/* the activation step r computes from slot x alone */
static bool activation_of(const om_plan *p, const om_step *r, int32_t x, om_act *a)
{
	scalar_arg arg = {p, r};
	return runs(r) && r->node->nout == 1 && r->in[0] == x && r->out[0] >= 0 &&
	       om_act_of(r->node, r->op->code, r->opset, const_scalar, &arg, a);
}

/* step m is Mul(x, g) or Mul(g, x) */
static bool mul_of(const om_step *m, int32_t x, int32_t g)
{
	return runs(m) && m->op->code == OM_OPC_MUL && m->node->nin == 2 && m->node->nout == 1 &&
	       m->out[0] >= 0 &&
	       ((m->in[0] == x && m->in[1] == g) || (m->in[0] == g && m->in[1] == x));
}

/* the readers of every slot among the steps that run or are absorbed (nslots entries,
 * calloc'd); NULL when out of memory */
static readers *readers_of(const om_plan *p)
{
	readers *rd = calloc((size_t)p->nslots, sizeof *rd);
	for (int32_t i = 0; rd && i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		if (sp->folded || sp->dead)
			continue;
		for (int32_t k = 0; k < sp->node->nin; k++) {
			const int32_t v = sp->in[k];
			if (v < 0)
				continue;
			if (rd[v].n < 2)
				rd[v].step[rd[v].n] = i;
			rd[v].n++;
		}
	}
	return rd;
}

/* absorbs the activation reading producer sp's output, if it qualifies */
static void absorb_one(om_plan *p, const om_tensor *t, om_step *sp, const readers *rd)
{
	const int32_t x = sp->out[0];
	if (!float_out(p, t, sp) || p->slots[x].uses != rd[x].n)
		return; /* a graph output, or read by a subgraph */
	om_act a;
	if (rd[x].n == 1) {
		om_step *r = &p->steps[rd[x].step[0]];
		if (!activation_of(p, r, x, &a))
			return;
		if (!sp->dynamic && !p->slots[r->out[0]].known)
			return; /* a settled step writes its output at its plan-time shape */
		sp->post = a;
		sp->out[0] = r->out[0];
		r->absorbed = OM_ABSORBED_UP;
		p->slots[x].uses = 0;
		return;
	}
	if (rd[x].n != 2)
		return;
	for (int i = 0; i < 2; i++) {
		om_step *r = &p->steps[rd[x].step[i]], *m = &p->steps[rd[x].step[1 - i]];
		om_act g;
		const int32_t gv = r->out[0];
		if (r == m || !activation_of(p, r, x, &a) || !om_act_gated(&a, &g) ||
		    p->slots[gv].uses != 1 || rd[gv].n != 1 || !mul_of(m, x, gv) ||
		    (!sp->dynamic && !p->slots[m->out[0]].known))
			continue;
		sp->post = g;
		sp->out[0] = m->out[0];
		r->absorbed = m->absorbed = OM_ABSORBED_UP;
		p->slots[x].uses = 0;
		p->slots[gv].uses = 0;
		return;
	}
}

om_kind om_plan_absorb(const om_session *s, om_plan *p, const om_tensor *t, om_status *st)
{
	if (s->opt.exact)
		return OM_OK;
	readers *rd = readers_of(p);
	if (!rd)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		if (runs(sp) && (sp->op->flags & OM_OP_EPILOGUE) && sp->node->nout >= 1 &&
		    sp->out[0] >= 0 && !om_attr_string(sp->node, "activation", NULL))
			absorb_one(p, t, sp, rd);
	}
	free(rd);
	return OM_OK;
}

/* probe t's shapes of slots k and j are the same */
static bool same_probe_shape(const om_tensor *t, int32_t k, int32_t j)
{
	return t[k].rank >= 0 && t[k].rank == t[j].rank &&
	       !memcmp(t[k].dims, t[j].dims, sizeof(int64_t) * (size_t)t[k].rank);
}

/* slots k and j: float, of the same layout and the same shape: settled at plan time, or (shaped
 * per run) in two probes of other symbol values (a broadcast in some run would have to make
 * them agree at both; run.c still checks each run) */
static bool same_value_shape(const om_plan *p, const om_tensor *t, const om_tensor *t2,
			     int32_t k, int32_t j)
{
	return k >= 0 && j >= 0 && t[k].dtype == OM_FLOAT && t[j].dtype == OM_FLOAT &&
	       p->slots[k].chans == p->slots[j].chans && same_probe_shape(t, k, j) &&
	       ((p->slots[k].known && p->slots[j].known) || same_probe_shape(t2, k, j));
}

/* step sp writes Add a's output, reading its other addend as input 3, if they qualify: the
 * addend computed before sp runs (written by no step at or after sp, whose index is `at`) */
static bool absorb_sum(om_plan *p, const om_tensor *t, const om_tensor *t2, int32_t at,
		       om_step *a)
{
	om_step *sp = &p->steps[at];
	const int32_t x = sp->out[0];
	if (!runs(a) || a->op->code != OM_OPC_ADD || a->node->nin != 2 ||
	    a->node->nout != 1 || a->out[0] < 0 || a->in[0] == a->in[1] ||
	    p->slots[a->out[0]].kind != OM_SLOT_NODE)
		return false;
	const int32_t z = a->in[0] == x ? a->in[1] : a->in[0], y = a->out[0];
	if (!same_value_shape(p, t, t2, x, z) || !same_value_shape(p, t, t2, x, y))
		return false;
	for (int32_t i = at; i < p->nsteps; i++)
		for (int32_t k = 0; k < p->steps[i].node->nout; k++)
			if (p->steps[i].out[k] == z)
				return false;
	sp->out[0] = y;
	sp->sum = z;
	if (p->slots[z].chans)
		sp->blocked |= OM_LAYOUT_IN(3);
	a->absorbed = OM_ABSORBED_UP;
	p->slots[x].uses = 0;
	return true;
}

om_kind om_plan_absorb_sums(const om_session *s, om_plan *p, const om_tensor *t,
			    const om_tensor *t2, om_status *st)
{
	if (s->opt.exact)
		return OM_OK;
	readers *rd = readers_of(p);
	if (!rd)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		const int32_t x = sp->node->nout >= 1 ? sp->out[0] : -1;
		if (!runs(sp) || !(sp->op->flags & OM_OP_SUM) || sp->node->nin > 3 ||
		    x < 0 || sp->post.kind || om_attr_string(sp->node, "activation", NULL) ||
		    p->slots[x].kind != OM_SLOT_NODE || p->slots[x].uses != 1 || rd[x].n != 1 ||
		    !absorb_sum(p, t, t2, i, &p->steps[rd[x].step[0]]))
			continue;
		absorb_one(p, t, sp, rd); /* the activation after the sum */
	}
	free(rd);
	return OM_OK;
}

/* ---- per-channel factors absorbed into the convolution reading them ---------------------- */

static bool float_slot(const om_tensor *t, int32_t k)
{
	return k >= 0 && t[k].rank >= 0 && t[k].dtype == OM_FLOAT;
}

/* s (shape t) is a factor per image and channel of x (shape u): (N or 1, C, 1, 1), (C, 1, 1) */
static bool channel_factor(const om_tensor *u, const om_tensor *t)
{
	if (u->rank != 4 || (t->rank != 4 && t->rank != 3))
		return false;
	const int64_t *d = t->dims + (t->rank == 4);
	return (t->rank == 3 || t->dims[0] == 1 || t->dims[0] == u->dims[0]) &&
	       d[0] == u->dims[1] && d[1] == 1 && d[2] == 1;
}

/* the product of the weights' dims (M, C / group, k...) */
static int64_t weight_count(const om_tensor *w)
{
	int64_t n = 1;
	for (int32_t i = 0; i < w->rank; i++)
		n *= w->dims[i];
	return n;
}

/* step sp reads the Mul m (its input 0's producer) scaled by s, if they qualify */
static void absorb_scale(om_plan *p, const om_tensor *t, om_step *sp, om_step *m)
{
	const int32_t xm = sp->in[0], w = sp->node->nin >= 2 ? sp->in[1] : -1;
	if (!runs(m) || m->op->code != OM_OPC_MUL || m->node->nin != 2 || m->node->nout != 1 ||
	    m->out[0] != xm || p->slots[xm].uses != 1 || p->slots[xm].kind != OM_SLOT_NODE ||
	    w < 0 || p->slots[w].kind != OM_SLOT_CONST || t[w].rank < 3 || !float_slot(t, xm))
		return;
	for (int i = 0; i < 2; i++) {
		const int32_t x = m->in[i], f = m->in[1 - i];
		if (!float_slot(t, x) || !float_slot(t, f) || t[x].rank != 4 ||
		    t[xm].rank != 4 || memcmp(t[x].dims, t[xm].dims, sizeof(int64_t) * 4) ||
		    !channel_factor(&t[x], &t[f]) || p->slots[x].chans != p->slots[xm].chans ||
		    !p->slots[f].chans != !p->slots[x].chans ||
		    2 * weight_count(&t[w]) > t[x].dims[1] * t[x].dims[2] * t[x].dims[3])
			continue;
		sp->in[0] = x;
		sp->scale = f;
		m->absorbed = OM_ABSORBED_DOWN;
		p->slots[xm].uses = 0;
		return;
	}
}

om_kind om_plan_absorb_scales(const om_session *s, om_plan *p, const om_tensor *t,
			      om_status *st)
{
	if (s->opt.exact)
		return OM_OK;
	int32_t *producer = malloc(sizeof(int32_t) * (size_t)(p->nslots ? p->nslots : 1));
	if (!producer)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	for (int32_t k = 0; k < p->nslots; k++)
		producer[k] = -1;
	for (int32_t i = 0; i < p->nsteps; i++)
		if (runs(&p->steps[i]) && p->steps[i].node->nout >= 1 && p->steps[i].out[0] >= 0)
			producer[p->steps[i].out[0]] = i;
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		const int32_t x = sp->node->nin >= 2 ? sp->in[0] : -1;
		if (runs(sp) && (sp->op->flags & OM_OP_IN_SCALE) && x >= 0 && producer[x] >= 0)
			absorb_scale(p, t, sp, &p->steps[producer[x]]);
	}
	free(producer);
	return OM_OK;
}
