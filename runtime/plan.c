/* plan.c — planning a graph: topological order, op rows, plan-time shapes and values, uses. */
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "plan.h"
#include "onnx_io.h"
#include "value.h"

/* folded constants larger than this stay run-time values */
#define FOLD_MAX_BYTES ((size_t)64 << 20)

/* ---- value -> slot map ------------------------------------------------------------------- */

static uint32_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (uint32_t)x;
}

int32_t om_plan_slot(const om_plan *p, const om_value *v)
{
	if (!v)
		return -1;
	for (uint32_t i = hash_ptr(v) & p->hmask;; i = (i + 1) & p->hmask) {
		if (!p->hkeys[i])
			return -1;
		if (p->hkeys[i] == v)
			return p->hvals[i];
	}
}

int32_t om_plan_add_slot(om_plan *p, const om_value *v, int kind)
{
	if (p->nslots == p->capslots)
		return -1;
	int32_t k = p->nslots++;
	om_slot *s = &p->slots[k];
	s->v = v;
	s->kind = (uint8_t)kind;
	s->meta.rank = -1;
	uint32_t i = hash_ptr(v) & p->hmask;
	while (p->hkeys[i])
		i = (i + 1) & p->hmask;
	p->hkeys[i] = v;
	p->hvals[i] = k;
	return k;
}

/* ---- helpers ----------------------------------------------------------------------------- */

static bool same_domain(const char *a, const char *b)
{
	if (!a || !strcmp(a, "ai.onnx"))
		a = "";
	if (!b || !strcmp(b, "ai.onnx"))
		b = "";
	return !strcmp(a, b);
}

static const om_op *find_row(const om_session *s, const om_node *n, int64_t opset)
{
	const om_op *best = NULL;
	for (size_t i = 0; s->extra && i < s->extra->count; i++) {
		const om_op *r = &s->extra->rows[i];
		if (r->since <= opset && !strcmp(r->name, n->op) &&
		    same_domain(r->domain, n->domain) && (!best || r->since > best->since))
			best = r;
	}
	return best ? best : om_op_find(n->domain, n->op, opset);
}

/* A tensor type whose dims are all numbers gives a shape that holds in every run. */
static void meta_from_type(om_slot *s, const om_type *t)
{
	s->meta.dtype = t->kind == OM_TYPE_TENSOR ? t->elem : OM_UNDEFINED;
	s->meta.rank = -1;
	if (t->kind != OM_TYPE_TENSOR || !t->elem || t->rank < 0 || t->rank > OM_MAX_RANK ||
	    !om_dtype_bits(t->elem))
		return;
	for (int32_t i = 0; i < t->rank; i++) {
		if (!om_dim_known(t->dims[i]))
			return;
		s->meta.dims[i] = t->dims[i].value;
	}
	if (om_shape_bytes(t->elem, t->rank, s->meta.dims) < 0)
		return;
	s->meta.rank = t->rank;
	s->meta.nbytes = om_tensor_bytes_for(t->elem, t->rank, s->meta.dims);
	s->known = 1;
}

static void set_const(om_slot *s, const om_tensor *t)
{
	s->kind = OM_SLOT_CONST;
	s->meta = *t;
	s->known = 1;
}

/* Input i of step sp, a constant misaligned for its element type (a large initializer left in
 * the mapped file, api/load.c), gets an aligned copy owned by the plan unless sp's row reads
 * it with byte moves (OM_OP_UNALIGNED, but for in[1]): a pass may have given it new readers. */
static om_kind align_const(om_plan *p, const om_step *sp, int32_t i, om_status *st)
{
	om_slot *s = &p->slots[sp->in[i]];
	if (s->kind != OM_SLOT_CONST || !s->meta.data || !s->meta.nbytes ||
	    s->meta.dtype == OM_STRING || ((sp->op->flags & OM_OP_UNALIGNED) && i != 1))
		return OM_OK;
	size_t align = om_dtype_size(s->meta.dtype);
	align = align > 8 ? 8 : align ? align : 1;
	if ((uintptr_t)s->meta.data % align == 0)
		return OM_OK;
	om_tensor t;
	om_kind rc = om_tensor_alloc(&t, s->meta.dtype, s->meta.rank, s->meta.dims, st);
	if (rc)
		return rc;
	memcpy(t.data, s->meta.data, s->meta.nbytes);
	if (s->owned)
		free(s->meta.data);
	s->meta.data = t.data;
	s->owned = 1;
	return OM_OK;
}

/* A value of a subgraph that this graph does not define: an outer reference. */
static bool is_outer(const om_value *v)
{
	return (v->flags & OM_VALUE_OUTER) ||
	       (!v->producer && !v->init &&
		!(v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_INITIALIZER)));
}

/* The slot for a value a node (or the graph's output list) reads: known already, an
 * initializer, or a reference to an enclosing graph's value. */
static om_kind read_slot(om_plan *p, const om_value *v, const om_node *n, int32_t *out,
			 om_status *st)
{
	int32_t k = om_plan_slot(p, v);
	if (k >= 0) {
		*out = k;
		return OM_OK;
	}
	if (v->init) {
		if ((k = om_plan_add_slot(p, v, OM_SLOT_CONST)) < 0)
			return om_error(st, OM_ERR_INTERNAL, n, "plan ran out of slots");
		set_const(&p->slots[k], v->init);
		*out = k;
		return OM_OK;
	}
	int32_t up = 1;
	for (const om_plan *q = p->parent; q; q = q->parent, up++) {
		const om_value *ov = om_graph_find(q->g, v->name);
		int32_t from = ov ? om_plan_slot(q, ov) : -1;
		if (from < 0)
			continue;
		if ((k = om_plan_add_slot(p, v, OM_SLOT_OUTER)) < 0)
			return om_error(st, OM_ERR_INTERNAL, n, "plan ran out of slots");
		om_slot *s = &p->slots[k];
		const om_slot *os = &q->slots[from];
		s->up = up;
		s->from = from;
		s->known = os->known;
		s->meta = os->meta;
		if (os->kind == OM_SLOT_CONST)
			s->kind = OM_SLOT_CONST; /* borrowed from the enclosing plan */
		else
			s->meta.data = NULL;
		*out = k;
		return OM_OK;
	}
	return om_error(st, OM_ERR_INVALID_MODEL, n, "value '%s' is not defined before it is used",
			v->name);
}

/* Whether every node input produced in g comes from an earlier node (files are usually in
 * topological order, as ONNX asks); then the model need not be touched at all. */
static om_kind in_order(const om_graph *g, bool *yes, om_status *st)
{
	uint32_t cap = 16;
	int64_t nout = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		nout += g->nodes[i]->nout;
	while (cap < 2 * (uint64_t)nout + 2 && cap < (1u << 31))
		cap *= 2;
	const om_value **set = calloc(cap, sizeof *set);
	if (!set)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	*yes = true;
	for (int32_t i = 0; i < g->nnodes && *yes; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t k = 0; k < n->nin && *yes; k++) {
			const om_value *v = n->in[k];
			if (!v || !v->producer || v->producer->graph != g)
				continue;
			uint32_t h = hash_ptr(v) & (cap - 1);
			while (set[h] && set[h] != v)
				h = (h + 1) & (cap - 1);
			*yes = set[h] == v;
		}
		for (int32_t k = 0; k < n->nout; k++) {
			const om_value *v = n->out[k];
			if (!v)
				continue;
			uint32_t h = hash_ptr(v) & (cap - 1);
			while (set[h] && set[h] != v)
				h = (h + 1) & (cap - 1);
			set[h] = v;
		}
	}
	free(set);
	return OM_OK;
}

static om_kind sorted_nodes(om_session *s, const om_graph *g, om_node ***out, om_status *st)
{
	size_t size = sizeof(om_node *) * (size_t)(g->nnodes ? g->nnodes : 1);
	om_node **sorted = om_arena_alloc(s->arena, size), **saved = malloc(size);
	bool sorted_already = false;
	om_kind rc = OM_OK;
	if (!sorted || !saved) {
		free(saved);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	}
	if ((rc = in_order(g, &sorted_already, st)) || sorted_already) {
		if (g->nnodes)
			memcpy(sorted, g->nodes, size);
		free(saved);
		*out = sorted;
		return rc;
	}
	/* the model is const to the session: sort in place, keep the result, restore the order */
	om_graph *mg = (om_graph *)g;
	if (g->nnodes)
		memcpy(saved, g->nodes, size);
	rc = om_graph_toposort(mg, st);
	if (!rc && g->nnodes)
		memcpy(sorted, g->nodes, size);
	if (g->nnodes)
		memcpy(mg->nodes, saved, size);
	free(saved);
	*out = sorted;
	return rc;
}

/* the step's row in the profile: its op type's, or with profile 2 a row of its own */
int32_t om_plan_profile_row(om_session *s, const om_node *n)
{
	const char *op = n->op, *node = NULL;
	if (s->opt.profile == 2)
		node = n->name && n->name[0]		 ? n->name
		       : n->nout > 0 && n->out[0] ? n->out[0]->name
						 : "";
	for (int32_t i = 0; i < s->nprof && !node; i++)
		if (!strcmp(s->prof[i].op, op))
			return i;
	if (s->nprof == s->capprof) {
		int32_t cap = s->capprof ? 2 * s->capprof : 32;
		om_profile_row *r = realloc(s->prof, sizeof *r * (size_t)cap);
		if (!r)
			return -1;
		s->prof = r;
		s->capprof = cap;
	}
	s->prof[s->nprof] = (om_profile_row){.op = op, .node = node};
	return s->nprof++;
}

/* ---- subgraph references ----------------------------------------------------------------- */

static om_kind add_implicit(om_session *s, om_step *sp, int32_t k, int32_t *cap)
{
	for (int32_t i = 0; i < sp->nimplicit; i++)
		if (sp->implicit[i] == k)
			return OM_OK;
	if (sp->nimplicit == *cap) {
		int32_t nc = *cap ? 2 * *cap : 8;
		int32_t *a = om_arena_alloc(s->arena, sizeof *a * (size_t)nc);
		if (!a)
			return OM_ERR_NOMEM;
		if (sp->nimplicit)
			memcpy(a, sp->implicit, sizeof *a * (size_t)sp->nimplicit);
		sp->implicit = a;
		*cap = nc;
	}
	sp->implicit[sp->nimplicit++] = k;
	return OM_OK;
}

/* Values of p's graph that subgraph `sub` (or its own subgraphs) reads by outer reference. */
static om_kind collect_refs(om_session *s, om_plan *p, om_step *sp, const om_graph *sub,
			    int32_t *cap)
{
	const om_value *v, *tmp;
	HASH_ITER(hh, sub->values, v, tmp) {
		if (!is_outer(v))
			continue;
		const om_value *ov = om_graph_find(p->g, v->name);
		int32_t k = ov ? om_plan_slot(p, ov) : -1;
		if (k >= 0 && add_implicit(s, sp, k, cap))
			return OM_ERR_NOMEM;
	}
	for (int32_t i = 0; i < sub->nnodes; i++) {
		const om_node *n = sub->nodes[i];
		for (int32_t a = 0; a < n->nattr; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g && collect_refs(s, p, sp, at->g, cap))
				return OM_ERR_NOMEM;
			for (int64_t j = 0; at->graphs && j < at->n; j++)
				if (at->graphs[j] && collect_refs(s, p, sp, at->graphs[j], cap))
					return OM_ERR_NOMEM;
		}
	}
	return OM_OK;
}

static om_kind plan_subgraphs(om_session *s, om_plan *p, om_step *sp, om_status *st)
{
	const om_node *n = sp->node;
	int32_t cap = 0;
	for (int32_t a = 0; a < n->nattr; a++) {
		const om_attr *at = &n->attrs[a];
		for (int64_t j = -1; j < (at->graphs ? at->n : 0); j++) {
			const om_graph *sub = j < 0 ? at->g : at->graphs[j];
			if (!sub)
				continue;
			om_plan *sp_plan;
			om_kind rc = om_plan_graph(s, sub, p, &sp_plan, st);
			if (rc)
				return rc;
			if (collect_refs(s, p, sp, sub, &cap))
				return om_error(st, OM_ERR_NOMEM, n, "out of memory planning");
		}
	}
	return OM_OK;
}

/* ---- plan-time inference and folding ----------------------------------------------------- */

static const unsigned char no_bytes[16];

/* A view (OM_OP_VIEW: Reshape, Squeeze, ...) of a constant: the constant's bytes under the
 * view's shape, borrowed, not copied (a tied lm_head's Reshape of its 16 MB embedding table
 * was a copy in every session). False when it is not one, or its shape is in error (nothing
 * set: the evaluation then says what is wrong). */
static bool fold_view(om_plan *p, om_step *sp, om_tensor *const *in)
{
	const om_node *n = sp->node;
	if (!(sp->op->flags & OM_OP_VIEW) || n->nout != 1 || sp->out[0] < 0 || n->nin < 1 ||
	    !in[0] || !in[0]->data || !sp->op->infer)
		return false;
	om_tensor res = {0}, *outp = &res;
	om_status ignored = {0};
	om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset, .nin = n->nin, .nout = 1,
		    .in = (const om_tensor *const *)in, .out = &outp, .st = &ignored,
		    .exact = sp->exact, .threads = 1};
	if (sp->op->infer(&c) != OM_OK || res.rank < 0 || res.dtype != in[0]->dtype ||
	    om_tensor_bytes_for(res.dtype, res.rank, res.dims) != in[0]->nbytes)
		return false;
	res.data = in[0]->data;
	res.nbytes = in[0]->nbytes;
	set_const(&p->slots[sp->out[0]], &res);
	sp->folded = 1;
	return true;
}

/* Runs sp's node at plan time on constant inputs (om_eval_node: the folder's semantics);
 * outputs become owned constants, a view's the bytes of its input (fold_view). Returns
 * OM_NEED_VALUE when the step cannot be folded after all (an output over FOLD_MAX_BYTES or
 * the session's limit). */
static om_kind fold_step(om_plan *p, om_step *sp, om_tensor *const *in, size_t limit,
			 om_status *st)
{
	const om_node *n = sp->node;
	const int32_t nout = n->nout;
	if (fold_view(p, sp, in))
		return OM_OK;
	om_tensor *res = calloc((size_t)(nout ? nout : 1), sizeof *res);
	if (!res)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory folding");
	const size_t max = limit && limit < FOLD_MAX_BYTES ? limit : FOLD_MAX_BYTES;
	om_kind rc = om_eval_row(sp->op, n, sp->opset, (const om_tensor *const *)in, res, max, st);
	if (rc == OM_ERR_INVALID_INPUT) /* constant inputs: a problem of the model */
		st->kind = rc = OM_ERR_INVALID_MODEL;
	for (int32_t i = 0; !rc && i < nout; i++) {
		if (sp->out[i] < 0)
			continue;
		om_slot *s = &p->slots[sp->out[i]];
		set_const(s, &res[i]);
		s->owned = 1;
		memset(&res[i], 0, sizeof res[i]);
	}
	if (!rc)
		sp->folded = 1;
	for (int32_t i = 0; i < nout; i++)
		om_tensor_free(&res[i]);
	free(res);
	return rc;
}

/* Shapes what plan time can: fold, infer, or leave the step dynamic. */
/* limit: the session's memory limit (0: none), which bounds plan-time folding too */
static om_kind shape_step(om_plan *p, om_step *sp, size_t limit, om_status *st)
{
	const om_node *n = sp->node;
	int32_t nin = n->nin;
	om_tensor *tin = calloc((size_t)(nin ? nin : 1), sizeof *tin);
	om_tensor **in = calloc((size_t)(nin ? nin : 1), sizeof *in);
	om_tensor *res = calloc((size_t)(n->nout ? n->nout : 1), sizeof *res);
	om_tensor **outp = calloc((size_t)(n->nout ? n->nout : 1), sizeof *outp);
	om_kind rc = OM_OK;
	if (!tin || !in || !res || !outp) {
		rc = om_error(st, OM_ERR_NOMEM, n, "out of memory planning");
		goto out;
	}
	bool all_const = !(sp->op->flags & (OM_OP_CONTROL | OM_OP_RANDOM)), all_known = true;
	for (int32_t i = 0; i < nin; i++) {
		if (sp->in[i] < 0)
			continue;
		const om_slot *s = &p->slots[sp->in[i]];
		tin[i] = s->meta;
		in[i] = &tin[i];
		if (s->kind != OM_SLOT_CONST)
			all_const = false;
		if (!s->known)
			all_known = false;
	}
	if (!all_const && all_known && (sp->op->flags & OM_OP_SHAPE_OF) && nin >= 1 && in[0]) {
		/* Shape and Size are plan constants: their kernels read dims, never bytes */
		if (!tin[0].data)
			tin[0].data = (void *)no_bytes;
		all_const = true;
	}
	/* a fold reads its constant inputs: not past OM_EVAL_FOLD_IN_MAX (a mapped 1 TiB weight
	 * is read by the kernels of the runs that need it, within their limits) */
	if (all_const && om_eval_fold_input_bytes(sp->op, (const om_tensor *const *)in, nin) >
				 OM_EVAL_FOLD_IN_MAX)
		all_const = false;
	if (all_const && (sp->op->kernel || (sp->op->flags & OM_OP_VIEW))) {
		rc = fold_step(p, sp, in, limit, st);
		if (rc != OM_NEED_VALUE)
			goto out;
		rc = OM_OK;
		for (int32_t i = 0; i < nin; i++)
			if (sp->in[i] >= 0)
				tin[i].data = p->slots[sp->in[i]].meta.data;
	}
	if (!all_known) {
		sp->dynamic = 1;
		/* control ops check their attributes and subgraphs whatever the shapes */
		if (sp->op->flags & OM_OP_CONTROL) {
			for (int32_t i = 0; i < n->nout; i++)
				outp[i] = sp->out[i] >= 0 ? &res[i] : NULL;
			om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset,
				    .nin = nin, .nout = n->nout,
				    .in = (const om_tensor *const *)in, .out = outp, .st = st,
				    .exact = sp->exact, .threads = 1};
			if ((rc = sp->op->infer(&c)) == OM_NEED_VALUE)
				rc = OM_OK;
		}
		goto out;
	}
	for (int32_t i = 0; i < n->nout; i++)
		outp[i] = sp->out[i] >= 0 ? &res[i] : NULL;
	om_ctx c = {.node = n, .op = sp->op, .opset = sp->opset, .nin = nin, .nout = n->nout,
		    .in = (const om_tensor *const *)in, .out = outp, .st = st, .exact = sp->exact,
		    .threads = 1};
	rc = sp->op->infer(&c);
	if (rc == OM_NEED_VALUE) {
		sp->dynamic = 1;
		rc = OM_OK;
		goto out;
	}
	if (rc)
		goto out;
	for (int32_t i = 0; i < n->nout; i++) {
		if (!outp[i])
			continue;
		om_tensor *t = &res[i];
		if (!om_dtype_bits(t->dtype) || om_shape_bytes(t->dtype, t->rank, t->dims) < 0) {
			rc = om_error(st, OM_ERR_INVALID_MODEL, n, "output %d has no valid shape",
				      i);
			goto out;
		}
		om_slot *s = &p->slots[sp->out[i]];
		s->meta = *t;
		s->meta.data = NULL;
		s->meta.nbytes = om_tensor_bytes_for(t->dtype, t->rank, t->dims);
		s->known = 1;
	}
out:
	free(tin), free(in), free(res), free(outp);
	return rc;
}

/* ---- a step ------------------------------------------------------------------------------ */

static om_kind plan_step(om_session *s, om_plan *p, om_step *sp, const om_node *n,
			 om_status *st)
{
	om_arena *a = s->arena;
	sp->node = n;
	sp->scale = -1;
	sp->sum = -1;
	sp->ix = s->nsteps_all++;
	sp->opset = om_model_opset(s->m, n->domain);
	sp->op = find_row(s, n, sp->opset);
	if (!sp->op)
		return om_error(st, OM_ERR_UNSUPPORTED, n, "no kernel for %s%s%s at opset %lld",
				n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op,
				(long long)sp->opset);
	om_kind rc = om_node_check(sp->op, n, sp->opset, st);
	if (rc)
		return rc;
	uint32_t fl = sp->op->flags;
	if (!sp->op->infer || (!sp->op->kernel && !(fl & OM_OP_VIEW)))
		return om_error(st, OM_ERR_UNSUPPORTED, n, "no kernel for %s", n->op);
	if (s->opt.exact && !(fl & (OM_OP_EXACT | OM_OP_VIEW)))
		return om_error(st, OM_ERR_UNSUPPORTED, n, "no exact kernel for %s (exact mode)",
				n->op);
	/* OM_OP_EXACT says the row has an exact path; fast mode lets it take its fast one */
	sp->exact = s->opt.exact;
	sp->in = om_arena_alloc(a, sizeof(int32_t) * (size_t)(n->nin ? n->nin : 1));
	sp->out = om_arena_alloc(a, sizeof(int32_t) * (size_t)(n->nout ? n->nout : 1));
	if (!sp->in || !sp->out)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory planning");
	for (int32_t i = 0; i < n->nin; i++) {
		sp->in[i] = -1;
		if (n->in[i] && (rc = read_slot(p, n->in[i], n, &sp->in[i], st)))
			return rc;
		if (sp->in[i] >= 0 && (rc = align_const(p, sp, i, st)))
			return rc;
	}
	for (int32_t i = 0; i < n->nout; i++) {
		sp->out[i] = -1;
		if (!n->out[i])
			continue;
		if (om_plan_slot(p, n->out[i]) >= 0)
			return om_error(st, OM_ERR_INVALID_MODEL, n, "value '%s' is defined twice",
					n->out[i]->name);
		if ((sp->out[i] = om_plan_add_slot(p, n->out[i], OM_SLOT_NODE)) < 0)
			return om_error(st, OM_ERR_INTERNAL, n, "plan ran out of slots");
	}
	bool extra_outs = false;
	for (int32_t i = 1; i < n->nout; i++)
		extra_outs |= sp->out[i] >= 0;
	sp->view = (fl & OM_OP_VIEW) && n->nin >= 1 && sp->in[0] >= 0 && n->nout >= 1 &&
		   sp->out[0] >= 0 && !extra_outs;
	if ((rc = plan_subgraphs(s, p, sp, st)))
		return rc;
	if ((sp->prof = om_plan_profile_row(s, n)) < 0)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory planning");
	rc = shape_step(p, sp, s->mem_limit, st);
	if (rc == OM_ERR_INVALID_MODEL && p->parent && !(fl & OM_OP_CONTROL)) {
		/* a subgraph may be an If branch never taken: its shape problem is the step's
		 * run-time inference error, raised only if the graph runs */
		for (int32_t i = 0; i < n->nout; i++)
			if (sp->out[i] >= 0)
				p->slots[sp->out[i]].known = 0;
		sp->dynamic = sp->deferred = 1;
		memset(st, 0, sizeof *st);
		rc = OM_OK;
	}
	return rc;
}

/* ---- a graph ----------------------------------------------------------------------------- */

static om_kind plan_io(om_session *s, om_plan *p, om_status *st)
{
	const om_graph *g = p->g;
	p->inputs = om_arena_alloc(s->arena, sizeof(int32_t) * (size_t)(g->ninputs + 1));
	p->outputs = om_arena_alloc(s->arena, sizeof(int32_t) * (size_t)(g->noutputs + 1));
	if (!p->inputs || !p->outputs)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	for (int32_t i = 0; i < g->ninputs + g->noutputs; i++) {
		const om_value *v = i < g->ninputs ? g->inputs[i] : g->outputs[i - g->ninputs];
		if (v->type.kind == OM_TYPE_OTHER && !om_type_box_kind(&v->type))
			return om_error(st, OM_ERR_UNSUPPORTED, NULL,
					"'%s' is a map or sparse value", v->name);
	}
	/* a main-graph input with an initializer: in an IR >= 4 model an overridable initializer
	 * (fed or not, never a constant: listed after the required inputs); before IR 4 every
	 * initializer was listed as an input, and it is a constant */
	const bool overridable = !p->parent && g->model && g->model->ir_version >= 4;
	for (int pass = 0; pass < 2; pass++) {
		for (int32_t i = 0; i < g->ninputs; i++) {
			const om_value *v = g->inputs[i];
			const bool dflt = !p->parent && v->init;
			if (dflt != (pass == 1))
				continue;
			if (om_plan_slot(p, v) >= 0)
				return om_error(st, OM_ERR_INVALID_MODEL, NULL,
						"input '%s' is listed twice", v->name);
			const bool fed = !dflt || overridable;
			int32_t k = om_plan_add_slot(p, v, fed ? OM_SLOT_INPUT : OM_SLOT_CONST);
			if (k < 0)
				return om_error(st, OM_ERR_INTERNAL, NULL, "plan ran out of slots");
			if (fed) {
				meta_from_type(&p->slots[k], &v->type);
				p->inputs[p->ninputs++] = k;
			} else {
				set_const(&p->slots[k], v->init);
			}
		}
		if (pass == 0)
			p->nrequired = p->ninputs;
	}
	for (int32_t i = 0; i < g->ninits; i++) {
		int32_t k;
		om_kind rc = read_slot(p, g->inits[i], NULL, &k, st);
		if (rc)
			return rc;
	}
	return OM_OK;
}

static void count_uses(om_plan *p)
{
	for (int32_t i = 0; i < p->nsteps; i++) {
		const om_step *sp = &p->steps[i];
		if (sp->folded)
			continue;
		for (int32_t k = 0; k < sp->node->nin; k++)
			if (sp->in[k] >= 0)
				p->slots[sp->in[k]].uses++;
		for (int32_t k = 0; k < sp->nimplicit; k++)
			p->slots[sp->implicit[k]].uses++;
	}
	for (int32_t i = 0; i < p->noutputs; i++)
		p->slots[p->outputs[i]].uses++;
	/* steps whose outputs nobody reads do not run (ONNX ops have no side effects); walking
	 * backwards lets a dead step make its producers dead too */
	for (int32_t i = p->nsteps - 1; i >= 0; i--) {
		om_step *sp = &p->steps[i];
		bool read = false;
		for (int32_t k = 0; k < sp->node->nout; k++)
			read |= sp->out[k] >= 0 && p->slots[sp->out[k]].uses > 0;
		if (sp->folded || read)
			continue;
		sp->dead = 1;
		for (int32_t k = 0; k < sp->node->nin; k++)
			if (sp->in[k] >= 0)
				p->slots[sp->in[k]].uses--;
		for (int32_t k = 0; k < sp->nimplicit; k++)
			p->slots[sp->implicit[k]].uses--;
	}
}

/* Slot k of p is a constant whose bytes overlap [lo, hi). */
static bool overlaps(const om_plan *p, int32_t k, uintptr_t lo, uintptr_t hi)
{
	if (k < 0 || p->slots[k].kind != OM_SLOT_CONST || !p->slots[k].meta.data)
		return false;
	const uintptr_t a = (uintptr_t)p->slots[k].meta.data, b = a + p->slots[k].meta.nbytes;
	return a < hi && lo < b;
}

/* Whether step q of plan p reads a constant overlapping [lo, hi) other than with byte moves
 * (OM_OP_UNALIGNED, but for in[1]): as any input, a scale, an absorbed addend, or in its
 * subgraphs (whose own steps are in their plans). */
static bool reads_whole(const om_plan *p, const om_step *q, uintptr_t lo, uintptr_t hi)
{
	const bool bytes = (q->op->flags & OM_OP_UNALIGNED) && !q->absorbed;
	for (int32_t j = 0; j < q->node->nin; j++)
		if ((!bytes || j == 1) && overlaps(p, q->in[j], lo, hi))
			return true;
	for (int32_t j = 0; j < q->nimplicit; j++)
		if (overlaps(p, q->implicit[j], lo, hi))
			return true;
	return overlaps(p, q->scale, lo, hi) || overlaps(p, q->sum, lo, hi);
}

/* Main graph: a constant in the model's file mapping that only byte-move reads use (a Gather
 * over an embedding table, which touches the rows it gathers) is given back after each step
 * that reads it (om_step.give_back): the kernel maps the pages around every page it faults
 * (64 KiB), so a prompt's tokens would otherwise leave much of the table resident. A
 * constant some other step reads whole (a tied lm_head) stays, and so does a table under
 * GIVE_BACK_MIN: faulted in again in every run, a small one costs more time than it holds
 * memory (gpt_tiny_dyn's 256 KiB token table: 0.23 -> 0.50 ms a run). */
enum { GIVE_BACK_MIN = 8 << 20 };

/* Whether a step other than `except` reads constant t (of plan p) whole in any plan, or t is
 * one of p's outputs */
static bool read_whole_by(const om_session *s, const om_plan *p, const om_tensor *t,
			  const om_step *except)
{
	const uintptr_t lo = (uintptr_t)t->data, hi = lo + t->nbytes;
	for (const om_plan *q = s->plans; q; q = q->next)
		for (int32_t r = 0; r < q->nsteps; r++)
			if (&q->steps[r] != except && !q->steps[r].dead &&
			    reads_whole(q, &q->steps[r], lo, hi))
				return true;
	for (int32_t r = 0; r < p->noutputs; r++)
		if (p->slots[p->outputs[r]].meta.data == t->data)
			return true;
	return false;
}

/* A constant a kernel copied (om_ctx_own_copy) is given back from this size on: below, its
 * pages cost little, and a step that remakes its copy faults them in again */
enum { COPIED_MIN = 256 << 10 };

static void plan_give_back(const om_session *s, om_plan *p)
{
	for (int32_t i = 0; !p->parent && i < p->nsteps; i++) {
		om_step *sp = &p->steps[i];
		if (!(sp->op->flags & OM_OP_UNALIGNED) || sp->dead || sp->folded || sp->absorbed)
			continue;
		for (int32_t j = 0; j < sp->node->nin && j < 32; j++) {
			const int32_t k = sp->in[j];
			if (j == 1 || k < 0 || p->slots[k].kind != OM_SLOT_CONST || p->slots[k].owned)
				continue;
			const om_tensor *t = &p->slots[k].meta;
			if (!t->data || t->nbytes < GIVE_BACK_MIN ||
			    !om_model_file_pages(s->m, t->data, t->nbytes, false))
				continue;
			if (read_whole_by(s, p, t, NULL))
				continue;
			sp->give_back |= 1u << j;
			/* what loading faulted in: a kernel that reads the rows from the file
			 * (om_ctx_read_const) never maps them again */
			(void)om_model_file_pages(s->m, t->data, t->nbytes, true);
		}
	}
}

bool om_plan_copied_gives_back(const om_session *s, const om_plan *p, const om_step *sp,
			       int32_t j)
{
	if (j < 0 || j >= sp->node->nin || sp->in[j] < 0)
		return false;
	const om_slot *k = &p->slots[sp->in[j]];
	const om_tensor *t = &k->meta;
	return k->kind == OM_SLOT_CONST && !k->owned && t->data && t->nbytes >= COPIED_MIN &&
	       om_model_file_pages(s->m, t->data, t->nbytes, false) &&
	       !read_whole_by(s, p, t, sp);
}

om_kind om_plan_graph(om_session *s, const om_graph *g, om_plan *parent, om_plan **out,
		      om_status *st)
{
	om_arena *a = s->arena;
	om_plan *p = om_arena_alloc(a, sizeof *p);
	if (!p)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	p->g = g;
	p->parent = parent;
	p->next = s->plans;
	s->plans = p;
	int64_t cap = (int64_t)HASH_COUNT(g->values) + g->ninputs + g->noutputs + g->ninits + 1;
	for (int32_t i = 0; i < g->nnodes; i++)
		cap += g->nodes[i]->nin + g->nodes[i]->nout;
	if (cap > INT32_MAX / 4)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "graph '%s' is too large", g->name);
	uint32_t hcap = 16;
	while (hcap < 2 * (uint32_t)cap)
		hcap *= 2;
	p->capslots = (int32_t)cap;
	p->hmask = hcap - 1;
	p->slots = om_arena_alloc(a, sizeof *p->slots * (size_t)cap);
	p->hkeys = om_arena_alloc(a, sizeof *p->hkeys * hcap);
	p->hvals = om_arena_alloc(a, sizeof *p->hvals * hcap);
	p->steps = om_arena_alloc(a, sizeof *p->steps * (size_t)(g->nnodes ? g->nnodes : 1));
	if (!p->slots || !p->hkeys || !p->hvals || !p->steps)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
	om_kind rc = plan_io(s, p, st);
	om_node **order = NULL;
	if (!rc)
		rc = sorted_nodes(s, g, &order, st);
	for (int32_t i = 0; !rc && i < g->nnodes; i++) {
		rc = plan_step(s, p, &p->steps[i], order[i], st);
		p->nsteps = i + 1;
	}
	for (int32_t i = 0; !rc && i < g->noutputs; i++)
		rc = read_slot(p, g->outputs[i], NULL, &p->outputs[p->noutputs++], st);
	if (!rc)
		rc = om_plan_widen(s, p, st); /* fast mode: half compute in float32 */
	if (rc)
		return rc;
	count_uses(p);
	if (!s->opt.exact) { /* fast mode: activations absorbed, layouts, per-channel Muls */
		om_tensor *t = om_plan_probe(p);
		if (!t)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
		rc = om_plan_absorb(s, p, t, st);
		if (!rc)
			rc = om_plan_layout(s, p, t, st);
		if (!rc)
			rc = om_plan_absorb_scales(s, p, t, st);
		om_tensor *t2 = rc ? NULL : om_plan_probe_with(p, 3, 96);
		if (!rc && !t2)
			rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory planning");
		if (!rc)
			rc = om_plan_absorb_sums(s, p, t, t2, st);
		free(t2);
		free(t);
		if (rc)
			return rc;
	}
	om_plan_choose(s, p);
	plan_give_back(s, p);
	*out = p;
	return OM_OK;
}

om_plan *om_plan_find(const om_session *s, const om_graph *g)
{
	for (om_plan *p = s->plans; p; p = p->next)
		if (p->g == g)
			return p;
	return NULL;
}

void om_plan_release(om_plan *p)
{
	for (int32_t i = 0; i < p->nslots; i++)
		if (p->slots[i].owned) {
			om_tensor_free(&p->slots[i].meta);
			p->slots[i].owned = 0;
		}
}
