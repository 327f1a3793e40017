/*
 * plan_half.c — fast mode: the float16/bfloat16 compute of the main graph planned in float32.
 *
 * Half-precision models lose what float32 ones get: activations absorbed, channel-blocked
 * layouts, vectorized kernels (every half kernel converts its operands per run), and ONNX
 * Runtime on CPU runs such models in float too (its InsertCastTransformer). So fast mode
 * widens them, as ONNX Runtime does, at plan time:
 *
 *   A step widens when it writes a half value, or reads one that a widened step writes, and
 *   its row's inference, given float32 in place of every half input (plan_probe.c's shapes),
 *   gives float32 in place of every half output and changes nothing else. Every half value
 *   then has up to two forms: the half one, which the model's graph outputs, subgraphs and
 *   steps that do not widen read, and the float32 one, which widened steps read. A widened
 *   step writes the float form; a half form still read is made from it by a Cast step (to
 *   the value's type) right after it. A half constant read by a widened step gets its float
 *   form at plan time (the Cast folded: the file keeps its half weights); another half value
 *   (a graph input, a step that does not widen) gets it from a Cast step right after it.
 *
 * So graph inputs and outputs keep their types, a Cast to float16 in the model (a step whose
 * inference gives half whatever it reads) keeps rounding, and the float planner's absorptions,
 * layouts and kernels see float32 steps. Exact mode plans nothing here: its kernels' bits are
 * the contract; nor does a session with keep_half (om_check's: a half model measured as it
 * computes on a runtime with half arithmetic). Subgraphs and steps that run them are left as
 * they are.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "plan.h"
#include "registry.h"

enum { MAX_POS = 32 }; /* steps with more inputs or outputs do not widen */
enum { GATHER_HALF_MIN = 64 << 10 }; /* a gather over a half constant this large stays half */

static bool half_type(int32_t dtype)
{
	return dtype == OM_FLOAT16 || dtype == OM_BFLOAT16;
}

/* What the widening decided, per slot (of the plan before it) and per step. */
typedef struct widen {
	om_session *s;
	om_plan *p;
	const om_tensor *t;  /* om_plan_probe's types and shapes */
	int32_t nslots;      /* p->nslots before the widening */
	bool *half;          /* slot of a half type */
	int32_t *producer;   /* step writing the slot, -1: none (input, constant) */
	uint8_t *wide;       /* step: WIDE, READS_FLOAT or 0 */
	uint8_t *need;       /* slot: NEED_FLOAT, NEED_HALF */
	om_tensor *fconst;   /* half constants' float32 copies, made when first needed */
	int32_t *form;       /* slot: the slot of its other form, -1: none */
	om_status *st;
} widen;

enum { NEED_FLOAT = 1, NEED_HALF = 2 };
enum { WIDE = 1, READS_FLOAT = 2 }; /* a step widens; a Cast to x's half type reads x's float
				      form (one rounding: the bits of two) */

/* the float32 copy of half constant slot k (fconst[k]); NULL when out of memory */
static const om_tensor *float_const(widen *w, int32_t k)
{
	om_tensor *f = &w->fconst[k];
	if (f->data)
		return f;
	const om_tensor *h = &w->p->slots[k].meta;
	if (om_tensor_alloc(f, OM_FLOAT, h->rank, h->dims, w->st))
		return NULL;
	/* byte moves: a Gather's table may be misaligned (OM_OP_UNALIGNED, api/load.c) */
	const unsigned char *src = h->data;
	float *dst = f->data;
	const int64_t n = om_tensor_numel(h);
	for (int64_t i = 0; i < n; i++) {
		uint16_t u;
		memcpy(&u, src + (size_t)i * sizeof u, sizeof u);
		dst[i] = h->dtype == OM_FLOAT16 ? om_half_to_float(u) : om_bf16_to_float(u);
	}
	return f;
}

/* Whether step sp's row, given float32 for every half input, types its outputs as the
 * widening would: float32 for the half ones, the same as before for the others. */
static bool infers_widened(widen *w, const om_step *sp)
{
	const om_node *n = sp->node;
	const om_plan *p = w->p;
	if (n->nin > MAX_POS || n->nout > MAX_POS)
		return false;
	om_tensor tin[MAX_POS], res[MAX_POS];
	const om_tensor *in[MAX_POS];
	om_tensor *out[MAX_POS];
	for (int32_t k = 0; k < n->nin; k++) {
		const int32_t v = sp->in[k];
		in[k] = NULL;
		if (v < 0)
			continue;
		if (w->t[v].rank < 0)
			return false;
		tin[k] = w->t[v];
		if (w->half[v]) {
			if (p->slots[v].kind == OM_SLOT_CONST && p->slots[v].meta.data) {
				const om_tensor *f = float_const(w, v);
				if (!f)
					return false;
				tin[k] = *f;
			} else {
				tin[k].dtype = OM_FLOAT;
				tin[k].data = NULL;
				tin[k].nbytes = om_tensor_bytes_for(OM_FLOAT, tin[k].rank, tin[k].dims);
			}
		}
		in[k] = &tin[k];
	}
	for (int32_t k = 0; k < n->nout; k++) {
		res[k] = (om_tensor){.rank = -1};
		out[k] = sp->out[k] >= 0 ? &res[k] : NULL;
	}
	om_status st = {0};
	om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset, .nin = n->nin, .nout = n->nout,
		    .in = in, .out = out, .st = &st, .threads = 1};
	if (sp->op->infer(&c))
		return false;
	for (int32_t k = 0; k < n->nout; k++) {
		const int32_t v = sp->out[k];
		if (v < 0)
			continue;
		const om_tensor *was = &w->t[v];
		const int32_t want = w->half[v] ? OM_FLOAT : was->dtype;
		if (was->rank < 0 || res[k].dtype != want || res[k].rank != was->rank ||
		    memcmp(res[k].dims, was->dims, sizeof(int64_t) * (size_t)was->rank))
			return false;
	}
	return true;
}

/* step sp is a Cast from a value a widened step writes to that value's half type */
static bool recast(const widen *w, const om_step *sp)
{
	const int32_t x = sp->node->nin == 1 ? sp->in[0] : -1, y = sp->out[0];
	return sp->op->code == OM_OPC_CAST && x >= 0 && y >= 0 && w->half[x] &&
	       w->producer[x] >= 0 && w->wide[w->producer[x]] == WIDE && w->t[y].rank >= 0 &&
	       w->t[y].dtype == w->t[x].dtype;
}

/* What step i does: WIDE, READS_FLOAT or 0 (steps are in topological order: producers were
 * decided before). */
static uint8_t decide(widen *w, int32_t i)
{
	const om_step *sp = &w->p->steps[i];
	const om_node *n = sp->node;
	const uint32_t fl = sp->op->flags;
	if (sp->folded || sp->nimplicit || (fl & (OM_OP_CONTROL | OM_OP_RANDOM)) ||
	    (!sp->op->kernel && !sp->view) || n->nout < 1)
		return 0;
	bool touches = false;
	for (int32_t k = 0; k < n->nout && !touches; k++)
		touches = sp->out[k] >= 0 && w->half[sp->out[k]];
	for (int32_t k = 0; k < n->nin && !touches; k++) {
		const int32_t v = sp->in[k];
		touches = v >= 0 && w->half[v] && w->producer[v] >= 0 &&
			  w->wide[w->producer[v]] == WIDE;
	}
	if (!touches)
		return 0;
	/* a gather (OM_OP_UNALIGNED) over a large half constant stays half: widened, it would
	 * read a float copy of the whole table made at plan time (twice its bytes, every page of
	 * the file's read) for the few rows a run gathers; a Cast step widens its output */
	for (int32_t k = 0; (fl & OM_OP_UNALIGNED) && k < n->nin; k++) {
		const int32_t v = sp->in[k];
		if (k != 1 && v >= 0 && w->half[v] && w->p->slots[v].kind == OM_SLOT_CONST &&
		    w->p->slots[v].meta.nbytes >= GATHER_HALF_MIN)
			return 0;
	}
	return infers_widened(w, sp) ? WIDE : recast(w, sp) ? READS_FLOAT : 0;
}

/* ---- the plan rewritten ------------------------------------------------------------------ */

/* A new slot for the other form of slot k, of type dtype, with a value of its own. */
static int32_t new_form(widen *w, int32_t k, int32_t dtype)
{
	om_plan *p = w->p;
	const om_slot *from = &p->slots[k];
	om_value *v = om_arena_alloc(w->s->arena, sizeof *v);
	if (!v)
		return -1;
	memset(v, 0, sizeof *v);
	v->name = from->v->name;
	v->type = from->v->type;
	v->type.elem = dtype;
	const int32_t f = om_plan_add_slot(p, v, OM_SLOT_NODE);
	if (f < 0)
		return -1;
	om_slot *s = &p->slots[f];
	s->known = from->known;
	s->meta = from->meta;
	s->meta.data = NULL;
	s->meta.dtype = dtype;
	if (from->known)
		s->meta.nbytes = om_tensor_bytes_for(dtype, s->meta.rank, s->meta.dims);
	return f;
}

/* A Cast step from slot `src` to slot `dst` (of dst's type). */
static om_kind cast_step(widen *w, const om_op *cast, int64_t opset, int32_t src, int32_t dst,
			 om_step *sp)
{
	om_arena *a = w->s->arena;
	om_plan *p = w->p;
	om_node *n = om_arena_alloc(a, sizeof *n);
	om_attr *to = om_arena_alloc(a, sizeof *to);
	om_value **io = om_arena_alloc(a, 2 * sizeof *io);
	int32_t *slots = om_arena_alloc(a, 2 * sizeof *slots);
	if (!n || !to || !io || !slots)
		return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
	memset(to, 0, sizeof *to);
	to->name = "to";
	to->type = OM_ATTR_INT;
	to->i = dst < w->nslots ? w->t[dst].dtype : OM_FLOAT;
	io[0] = (om_value *)p->slots[src].v;
	io[1] = (om_value *)p->slots[dst].v;
	/* named for profiles (--profile-nodes): "x as float32" */
	const char *vname = p->slots[src].v->name, *tname = om_dtype_name((int32_t)to->i);
	const size_t len = strlen(vname) + strlen(tname) + 5;
	char *name = om_arena_alloc(a, len);
	if (!name)
		return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
	snprintf(name, len, "%s as %s", vname, tname);
	memset(n, 0, sizeof *n);
	n->name = name;
	n->op = "Cast";
	n->domain = "";
	n->nin = n->nout = n->nattr = 1;
	n->in = io;
	n->out = io + 1;
	n->attrs = to;
	n->graph = (om_graph *)p->g;
	slots[0] = src;
	slots[1] = dst;
	memset(sp, 0, sizeof *sp);
	sp->node = n;
	sp->op = cast;
	sp->opset = opset;
	sp->in = slots;
	sp->out = slots + 1;
	sp->scale = -1;
	sp->sum = -1;
	sp->dynamic = !p->slots[src].known || !p->slots[dst].known;
	sp->ix = w->s->nsteps_all++;
	if ((sp->prof = om_plan_profile_row(w->s, n)) < 0)
		return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
	if (dst >= w->nslots) /* a value of the widening's own */
		((om_value *)p->slots[dst].v)->producer = n;
	return OM_OK;
}

/* which forms of every half slot are read (need[]) */
static void mark_needs(widen *w)
{
	const om_plan *p = w->p;
	for (int32_t i = 0; i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		if (sp->folded)
			continue;
		for (int32_t k = 0; k < sp->node->nin; k++)
			if (sp->in[k] >= 0 && w->half[sp->in[k]])
				w->need[sp->in[k]] |= w->wide[i] ? NEED_FLOAT : NEED_HALF;
		for (int32_t k = 0; k < sp->nimplicit; k++)
			w->need[sp->implicit[k]] |= NEED_HALF;
	}
	for (int32_t i = 0; i < p->noutputs; i++)
		w->need[p->outputs[i]] |= NEED_HALF;
}

/* Gives every half slot that needs it its other form: *ncast Cast steps, cast_src/cast_dst
 * (by the step after which they run, in `after`: -1 before the first). */
static om_kind make_forms(widen *w, int32_t *after, int32_t *csrc, int32_t *cdst, int32_t *ncast)
{
	om_plan *p = w->p;
	for (int32_t k = 0; k < w->nslots; k++) {
		if (!w->half[k])
			continue;
		const int32_t pr = w->producer[k];
		om_slot *sl = &p->slots[k];
		if (pr >= 0 && w->wide[pr] == WIDE) {
			if (!(w->need[k] & NEED_HALF)) { /* only the float form is read: in place */
				sl->meta.dtype = OM_FLOAT;
				if (sl->known)
					sl->meta.nbytes = om_tensor_bytes_for(OM_FLOAT, sl->meta.rank,
									      sl->meta.dims);
				w->form[k] = k;
				continue;
			}
			const int32_t f = new_form(w, k, OM_FLOAT);
			if (f < 0)
				return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
			om_step *sp = &p->steps[pr];
			for (int32_t j = 0; j < sp->node->nout; j++)
				if (sp->out[j] == k)
					sp->out[j] = f;
			w->form[k] = f;
			after[*ncast] = pr, csrc[*ncast] = f, cdst[*ncast] = k, (*ncast)++;
			continue;
		}
		if (!(w->need[k] & NEED_FLOAT))
			continue;
		if (sl->kind == OM_SLOT_CONST && sl->meta.data) {
			if (!float_const(w, k))
				return w->st->kind;
			const int32_t f = new_form(w, k, OM_FLOAT);
			if (f < 0)
				return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
			p->slots[f].kind = OM_SLOT_CONST;
			p->slots[f].meta = w->fconst[k];
			p->slots[f].owned = 1;
			p->slots[f].known = 1;
			memset(&w->fconst[k], 0, sizeof w->fconst[k]);
			w->form[k] = f;
			continue;
		}
		const int32_t f = new_form(w, k, OM_FLOAT);
		if (f < 0)
			return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
		w->form[k] = f;
		after[*ncast] = pr, csrc[*ncast] = k, cdst[*ncast] = f, (*ncast)++;
	}
	return OM_OK;
}

/* The steps with the Cast steps in place; widened steps read the float forms. */
static om_kind rebuild(widen *w, const int32_t *after, const int32_t *csrc, const int32_t *cdst,
		       int32_t ncast)
{
	om_plan *p = w->p;
	for (int32_t i = 0; i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		for (int32_t k = 0; w->wide[i] && k < sp->node->nin; k++)
			if (sp->in[k] >= 0 && sp->in[k] < w->nslots && w->half[sp->in[k]])
				sp->in[k] = w->form[sp->in[k]];
	}
	if (!ncast)
		return OM_OK;
	const int64_t opset = om_model_opset(w->s->m, "");
	const om_op *cast = om_op_find("", "Cast", opset);
	if (!cast)
		return om_error(w->st, OM_ERR_INTERNAL, NULL, "no Cast row at opset %lld",
				(long long)opset);
	const int32_t n = p->nsteps + ncast;
	om_step *steps = om_arena_alloc(w->s->arena, sizeof *steps * (size_t)n);
	if (!steps)
		return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
	int32_t o = 0;
	for (int32_t i = -1; i < p->nsteps; i++) {
		if (i >= 0)
			steps[o++] = p->steps[i];
		for (int32_t c = 0; c < ncast; c++) {
			if (after[c] != i)
				continue;
			om_kind rc = cast_step(w, cast, opset, csrc[c], cdst[c], &steps[o++]);
			if (rc)
				return rc;
		}
	}
	p->steps = steps;
	p->nsteps = n;
	return OM_OK;
}

static bool any_half(const om_plan *p, const om_tensor *t)
{
	for (int32_t k = 0; k < p->nslots; k++)
		if (half_type(t[k].dtype) && t[k].rank >= 0)
			return true;
	return false;
}

static om_kind widen_plan(widen *w)
{
	om_plan *p = w->p;
	const int32_t ns = w->nslots;
	for (int32_t k = 0; k < ns; k++) {
		w->half[k] = half_type(w->t[k].dtype) && w->t[k].rank >= 0;
		w->producer[k] = w->form[k] = -1;
	}
	for (int32_t i = 0; i < p->nsteps; i++)
		for (int32_t k = 0; !p->steps[i].folded && k < p->steps[i].node->nout; k++)
			if (p->steps[i].out[k] >= 0)
				w->producer[p->steps[i].out[k]] = i;
	int32_t nwide = 0;
	for (int32_t i = 0; i < p->nsteps; i++)
		nwide += (w->wide[i] = decide(w, i)) == WIDE;
	if (!nwide)
		return OM_OK;
	mark_needs(w);
	int32_t forms = 0;
	for (int32_t k = 0; k < ns; k++) {
		const bool by_wide = w->producer[k] >= 0 && w->wide[w->producer[k]] == WIDE;
		forms += w->half[k] && (by_wide ? (w->need[k] & NEED_HALF) != 0
						: (w->need[k] & NEED_FLOAT) != 0);
	}
	if (p->nslots + forms > p->capslots)
		return OM_OK; /* no room for the forms: planned as it is */
	int32_t *buf = malloc(sizeof(int32_t) * 3 * (size_t)(forms ? forms : 1));
	if (!buf)
		return om_error(w->st, OM_ERR_NOMEM, NULL, "out of memory planning");
	int32_t ncast = 0;
	om_kind rc = make_forms(w, buf, buf + forms, buf + 2 * forms, &ncast);
	if (!rc)
		rc = rebuild(w, buf, buf + forms, buf + 2 * forms, ncast);
	free(buf);
	return rc;
}

om_kind om_plan_widen(om_session *s, om_plan *p, om_status *st)
{
	if (s->opt.exact || s->opt.keep_half || p->parent || om_model_opset(s->m, "") < 6)
		return OM_OK; /* Cast's `to` is a string before opset 6 */
	om_tensor *t = om_plan_probe(p);
	if (!t)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	if (!any_half(p, t)) {
		free(t);
		return OM_OK;
	}
	const size_t ns = (size_t)(p->nslots ? p->nslots : 1);
	const size_t nst = (size_t)(p->nsteps ? p->nsteps : 1);
	widen w = {.s = s, .p = p, .t = t, .nslots = p->nslots, .st = st,
		   .half = calloc(ns, sizeof(bool)), .producer = calloc(ns, sizeof(int32_t)),
		   .wide = calloc(nst, 1), .need = calloc(ns, 1),
		   .fconst = calloc(ns, sizeof(om_tensor)), .form = calloc(ns, sizeof(int32_t))};
	om_kind rc = !w.half || !w.producer || !w.wide || !w.need || !w.fconst || !w.form
			     ? om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning")
			     : widen_plan(&w);
	for (size_t k = 0; w.fconst && k < ns; k++)
		om_tensor_free(&w.fconst[k]);
	free(w.half), free(w.producer), free(w.wide), free(w.need), free(w.fconst), free(w.form);
	free(t);
	return rc;
}
