/*
 * half_convert.c — om_half_convert: the main graph's float32 compute in float16 or bfloat16;
 * om_half_widen: the way back, a half type's compute in float32 (the same code with the two
 * types' roles swapped: `from`, the type converted, and `to`, the one it becomes).
 *
 * Per node: converted (every float32 slot whose ONNX type constraint at the model's opset
 * admits the half type: its row's signature there, om_sig in_f16...) or kept float32 (asked,
 * no half type, subgraphs, quantize/dequantize, other domains, untyped values). Every float32 value then has up to two
 * forms, float32 and half: the form its producer writes, and the other made on demand by one
 * Cast shared by its readers. Initializers read only in half become half in place; graph
 * inputs and outputs and values that subgraphs read keep their names in float32 (a converted
 * producer of one writes a fresh half value, and a Cast writes the name). An initializer that
 * nodes kept with OM_HALF_KEEP_STORED read too (and nothing else in float32) is stored in half
 * all the same, and they read it through one Cast to float32. Finally the rows' inference runs
 * over the result: a converted node whose outputs it types otherwise is reported for the
 * caller to keep.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "half.h"
#include "half_convert.h"
#include "registry.h"

/* the two forms of a value of the type converted: `flt` its own (float32 when converting to
 * half; the half type when widening), `half` the converted one */
typedef struct form {
	const om_value *key;
	om_value *flt, *half;
	int32_t half_readers, float_readers;
	int32_t stored_readers; /* OM_HALF_KEEP_STORED readers that take it stored in half */
	int8_t storable;        /* an initializer: 1 when it may be stored in half, -1 not, 0 not
				   yet known */
	UT_hash_handle hh;
} form;

typedef struct hc {
	om_pass_ctx pc;
	om_model *m;
	om_graph *g;
	int32_t dtype; /* the type values become (`to` above) */
	int32_t from;  /* the type of the values converted: OM_FLOAT, or a half type widened */
	form *forms;
	int64_t *clamped;
	om_status *st;
} hc;

static form *form_of(hc *h, const om_value *v)
{
	form *f = NULL;
	HASH_FIND_PTR(h->forms, &v, f);
	if (f)
		return f;
	if (!(f = om_arena_alloc(h->pc.scratch, sizeof *f)))
		return NULL;
	f->key = v;
	HASH_ADD_PTR(h->forms, key, f);
	form *back = NULL;
	HASH_FIND_PTR(h->forms, &v, back);
	return back;
}

/* Whether initializer v, read in float32 by a kept node, may be stored in half: large enough
 * for its Cast to pay, and every finite value within the half type's range (never when
 * widening: OM_HALF_KEEP_STORED is the half conversion's). */
static bool storable(hc *h, form *f, const om_value *v)
{
	if (!f->storable) {
		const om_tensor *t = v->init;
		const int64_t n = om_tensor_numel(t);
		const float top = h->dtype == OM_FLOAT16 ? 65504.0f : FLT_MAX;
		bool ok = h->from == OM_FLOAT && t->dtype == OM_FLOAT && n >= OM_HALF_STORED_MIN;
		for (int64_t i = 0; ok && i < n; i++)
			ok = !isfinite(((const float *)t->data)[i]) ||
			     fabsf(((const float *)t->data)[i]) <= top;
		f->storable = ok ? 1 : -1;
	}
	return f->storable > 0;
}

/* The element type of v in the model as given: its data, inference, or its declaration. */
static int32_t elem_of(hc *h, om_value *v)
{
	if (!v)
		return OM_UNDEFINED;
	if (v->init)
		return v->init->dtype;
	const om_vinfo *vi = om_vinfo_get(&h->pc, h->g, v);
	if (vi && vi->type.kind == OM_TYPE_TENSOR && vi->type.elem)
		return vi->type.elem;
	return v->type.kind == OM_TYPE_TENSOR ? v->type.elem : OM_UNDEFINED;
}

om_tensor *om_half_tensor(om_model *m, const om_tensor *t, int32_t dtype, int64_t *clamped)
{
	om_tensor *h = om_model_tensor(m, dtype, t->rank, t->dims);
	if (!h)
		return NULL;
	const float *s = t->data;
	uint16_t *d = h->data;
	const float top = dtype == OM_FLOAT16 ? 65504.0f : FLT_MAX;
	for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++) {
		float x = s[i];
		if (isfinite(x) && fabsf(x) > top) {
			x = x < 0 ? -top : top;
			(*clamped)++;
		}
		d[i] = dtype == OM_FLOAT16 ? om_float_to_half(x) : om_float_to_bf16(x);
	}
	return h;
}

om_tensor *om_float_tensor(om_model *m, const om_tensor *t)
{
	om_tensor *f = om_model_tensor(m, OM_FLOAT, t->rank, t->dims);
	if (!f)
		return NULL;
	const uint16_t *s = t->data;
	float *d = f->data;
	for (int64_t i = 0, n = om_tensor_numel(t); i < n; i++)
		d[i] = t->dtype == OM_FLOAT16 ? om_half_to_float(s[i]) : om_bf16_to_float(s[i]);
	return f;
}

/* t (of h->from) as h->dtype: into the half type, or widened */
static om_tensor *convert_tensor(hc *h, const om_tensor *t)
{
	return h->dtype == OM_FLOAT ? om_float_tensor(h->m, t)
				    : om_half_tensor(h->m, t, h->dtype, h->clamped);
}

/* Whether slot i of a signature's mask is set (bit 63: slot 63 and every later one). */
static bool slot_admits(uint64_t mask, int32_t i)
{
	return (mask >> (i < 63 ? i : 63)) & 1u;
}

/* What a node's row and ONNX's types (its signature at the model's opset) say about converting
 * it. A node without a row, or whose row is another domain's (a signature admitting no half
 * type), is kept for that before its value types are looked at. */
static uint8_t decide(hc *h, const om_node *n, uint64_t *in_mask, uint64_t *out_mask)
{
	bool touches = false, untyped = false;
	for (int32_t k = 0; k < n->nin + n->nout; k++) {
		om_value *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
		int32_t e = elem_of(h, v);
		touches |= e == h->from;
		untyped |= v && !e;
	}
	if (!touches)
		return OM_HALF_UNTOUCHED;
	if (om_node_has_subgraph(n))
		return OM_HALF_KEEP_SUBGRAPH;
	if (om_node_has(h->m, n, OM_OP_QDQ))
		return OM_HALF_KEEP_QDQ;
	const om_op *op = om_node_op(h->m, n);
	const om_sig *s = op && !op->domain[0]
		? om_op_sig_at(op, om_model_opset(h->m, n->domain))
		: NULL;
	if (!s)
		return OM_HALF_KEEP_TYPE;
	if (untyped)
		return OM_HALF_KEEP_UNTYPED;
	/* the half type's slots: when widening, the slots that hold it (an ai.onnx type
	 * constraint that admits float16 or bfloat16 admits float too) */
	const int32_t half = h->dtype == OM_FLOAT ? h->from : h->dtype;
	*in_mask = half == OM_FLOAT16 ? s->in_f16 : s->in_bf16;
	*out_mask = half == OM_FLOAT16 ? s->out_f16 : s->out_bf16;
	bool any = false;
	for (int32_t k = 0; k < n->nin; k++)
		any |= elem_of(h, n->in[k]) == h->from && slot_admits(*in_mask, k);
	for (int32_t k = 0; k < n->nout; k++) {
		bool f = elem_of(h, n->out[k]) == h->from;
		if (f && !slot_admits(*out_mask, k))
			return OM_HALF_KEEP_TYPE; /* an output only `from` may be: keep it whole */
		any |= f;
	}
	return any ? OM_HALF_CONVERTED : OM_HALF_KEEP_TYPE;
}

/* v's type with element type elem (internal symbols become unknown dims). */
static void set_type(hc *h, om_value *dst, om_value *like, int32_t elem)
{
	const om_vinfo *vi = om_vinfo_get(&h->pc, h->g, like);
	const om_type *src = vi && vi->type.kind == OM_TYPE_TENSOR ? &vi->type : &like->type;
	om_type t = {.kind = OM_TYPE_TENSOR, .elem = elem, .rank = -1};
	if (src->kind == OM_TYPE_TENSOR && src->rank >= 0 && src->rank <= OM_MAX_RANK) {
		om_dim *d = om_arena_alloc(h->m->arena, sizeof *d * (size_t)(src->rank + 1));
		if (d) {
			for (int32_t i = 0; i < src->rank; i++) {
				d[i] = src->dims[i];
				if (om_symbol_internal(d[i].param))
					d[i] = (om_dim){.value = -1};
			}
			t.rank = src->rank;
			t.dims = d;
		}
	}
	if (dst->type.kind == OM_TYPE_TENSOR && dst->type.rank >= 0 && t.rank < 0) {
		dst->type.elem = elem; /* keep the declared shape */
		return;
	}
	dst->type = t;
}

/* A Cast of `from` into a fresh value of type `to`, appended (the graph is sorted after). */
static om_value *cast(hc *h, om_value *from, om_value *like, int32_t to)
{
	char hint[300];
	snprintf(hint, sizeof hint, "%s_%s", like->name, to == OM_FLOAT ? "fp32" : "half");
	om_value *v = om_graph_fresh_value(h->g, hint);
	om_node *n = v ? om_graph_add_node(h->g, "Cast", "", v->name, 1, 1) : NULL;
	om_attr *a = n ? om_node_set_attr(n, "to", OM_ATTR_INT) : NULL;
	if (!a)
		return NULL;
	a->i = to;
	n->in[0] = from;
	om_node_set_output(n, 0, v);
	set_type(h, v, like, to);
	return v;
}

/* The form of value v (of h->from) that a reader wants (want: h->from or h->dtype). */
static om_value *get_form(hc *h, om_value *v, int32_t want)
{
	form *f = form_of(h, v);
	if (!f)
		return NULL;
	if (!f->flt && !f->half)
		f->flt = v; /* a graph input, an initializer, or a kept node's output */
	om_value **have = want == h->from ? &f->flt : &f->half;
	if (*have)
		return *have;
	if (want != h->from && v->init && !(v->flags & OM_VALUE_GRAPH_INPUT)) {
		om_tensor *t = convert_tensor(h, v->init);
		if (!t)
			return NULL;
		if (!f->float_readers) { /* read only converted: the initializer itself changes */
			v->init = t;
			v->init_proto = NULL;
			v->type.elem = want;
			f->flt = NULL;
			return *have = v;
		}
		char hint[300];
		snprintf(hint, sizeof hint, "%s_half", v->name);
		return *have = om_new_constant(&h->pc, h->g, hint, t);
	}
	return *have = cast(h, want == h->from ? f->half : f->flt, v, want);
}

/* Whether initializer v is stored in half for OM_HALF_KEEP_STORED readers: nothing reads it
 * in float32 otherwise. */
static bool stored_half(hc *h, const om_value *v)
{
	form *f = NULL;
	HASH_FIND_PTR(h->forms, &v, f);
	return f && f->stored_readers && !f->float_readers;
}

/* Tensor attributes and output-type attributes (Cast's to, ...) of h->from in a converted
 * node. */
static om_kind convert_attrs(hc *h, om_node *n)
{
	for (int32_t a = 0; a < n->nattr; a++) {
		om_attr *at = &n->attrs[a];
		if (at->type == OM_ATTR_INT && at->i == h->from && at->name &&
		    (!strcmp(at->name, "to") || !strcmp(at->name, "dtype")))
			at->i = h->dtype;
		if (at->type == OM_ATTR_TENSOR && at->t && at->t->dtype == h->from &&
		    !(at->t = convert_tensor(h, at->t)))
			return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
	}
	return OM_OK;
}

/* A converted node's outputs of h->from become h->dtype; one that must keep its name and type
 * (a graph output, a value subgraphs read) is written by a Cast of a fresh converted value. */
static om_kind convert_outputs(hc *h, om_node *n, uint64_t out_mask)
{
	for (int32_t k = 0; k < n->nout; k++) {
		om_value *v = n->out[k];
		if (!v || elem_of(h, v) != h->from || !slot_admits(out_mask, k))
			continue;
		form *f = form_of(h, v);
		if (!f)
			return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
		if ((v->flags & OM_VALUE_GRAPH_OUTPUT) ||
		    om_value_used_by_subgraph(&h->pc, h->g, v)) {
			char hint[300];
			snprintf(hint, sizeof hint, "%s_half", v->name);
			om_value *w = om_graph_fresh_value(h->g, hint);
			if (!w)
				return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
			set_type(h, w, v, h->dtype);
			om_node_set_output(n, k, w);
			f->half = w;
			v->producer = NULL;
			if (!(f->flt = cast(h, w, v, h->from)))
				return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
			/* the Cast writes v itself: its fresh output is replaced by v */
			om_node *c = f->flt->producer;
			om_node_set_output(c, 0, v);
			f->flt = v;
			set_type(h, v, w, h->from);
		} else {
			set_type(h, v, v, h->dtype);
			f->half = v;
		}
	}
	return OM_OK;
}

/* The unknown-shape types of elem_of come from the side table, which the rewrite makes stale:
 * the element types of the model as given, per node slot, are read once before it. */
typedef struct plan {
	uint8_t *why;
	uint64_t *in_mask, *out_mask;
	int32_t *in_elem; /* per node, n->nin entries from in_off[i] */
	int32_t *in_off;
} plan;

static om_kind make_plan(hc *h, om_node **nodes, int32_t nn, plan *p)
{
	int32_t total = 0;
	for (int32_t i = 0; i < nn; i++)
		total += nodes[i]->nin;
	p->in_mask = om_arena_alloc(h->pc.scratch, sizeof *p->in_mask * (size_t)(nn + 1));
	p->out_mask = om_arena_alloc(h->pc.scratch, sizeof *p->out_mask * (size_t)(nn + 1));
	p->in_off = om_arena_alloc(h->pc.scratch, sizeof *p->in_off * (size_t)(nn + 1));
	p->in_elem = om_arena_alloc(h->pc.scratch, sizeof *p->in_elem * (size_t)(total + 1));
	if (!p->in_mask || !p->out_mask || !p->in_off || !p->in_elem)
		return om_error(h->st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0, off = 0; i < nn; i++) {
		const om_node *n = nodes[i];
		p->in_off[i] = off;
		for (int32_t k = 0; k < n->nin; k++)
			p->in_elem[off++] = elem_of(h, n->in[k]);
		if (p->why[i] == OM_HALF_KEEP_ASKED)
			continue;
		const uint8_t d = decide(h, n, &p->in_mask[i], &p->out_mask[i]);
		if (p->why[i] != OM_HALF_KEEP_STORED)
			p->why[i] = d;
		else if (d != OM_HALF_CONVERTED) /* no slot would take half weights */
			p->why[i] = OM_HALF_KEEP_ASKED;
	}
	/* readers of each initializer of h->from in each form: one read as it is keeps it */
	for (int32_t i = 0; i < nn; i++) {
		const om_node *n = nodes[i];
		for (int32_t k = 0; k < n->nin; k++) {
			om_value *v = n->in[k];
			if (!v || !v->init || p->in_elem[p->in_off[i] + k] != h->from)
				continue;
			form *f = form_of(h, v);
			if (!f)
				return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
			const bool slot = slot_admits(p->in_mask[i], k);
			const bool half = p->why[i] == OM_HALF_CONVERTED && slot;
			const bool stored = p->why[i] == OM_HALF_KEEP_STORED && slot &&
					    !(v->flags & OM_VALUE_GRAPH_INPUT) && storable(h, f, v);
			f->half_readers += half;
			f->stored_readers += stored;
			f->float_readers += !half && !stored;
			if ((v->flags & (OM_VALUE_GRAPH_OUTPUT | OM_VALUE_GRAPH_INPUT)) ||
			    om_value_used_by_subgraph(&h->pc, h->g, v))
				f->float_readers++;
		}
	}
	return OM_OK;
}

static om_kind apply(hc *h, om_node **nodes, int32_t nn, const plan *p)
{
	for (int32_t i = 0; i < nn; i++) {
		if (p->why[i] != OM_HALF_CONVERTED)
			continue;
		om_kind rc = convert_attrs(h, nodes[i]);
		if (!rc)
			rc = convert_outputs(h, nodes[i], p->out_mask[i]);
		if (rc)
			return rc;
	}
	for (int32_t i = 0; i < nn; i++) {
		om_node *n = nodes[i];
		if (p->why[i] == OM_HALF_UNTOUCHED)
			continue;
		bool conv = p->why[i] == OM_HALF_CONVERTED, took_stored = false;
		for (int32_t k = 0; k < n->nin; k++) {
			if (!n->in[k] || p->in_elem[p->in_off[i] + k] != h->from)
				continue;
			int32_t want = conv && slot_admits(p->in_mask[i], k) ? h->dtype : h->from;
			om_value *v = n->in[k];
			/* stored in half: its half form first (the initializer itself changes) */
			if (want == h->from && p->why[i] == OM_HALF_KEEP_STORED && v->init &&
			    slot_admits(p->in_mask[i], k) && stored_half(h, v)) {
				v = get_form(h, v, h->dtype);
				took_stored = true;
			}
			if (v)
				v = get_form(h, n->in[k], want);
			if (!v)
				return om_error(h->st, OM_ERR_NOMEM, n, "out of memory");
			n->in[k] = v;
		}
		if (p->why[i] == OM_HALF_KEEP_STORED && !took_stored)
			p->why[i] = OM_HALF_KEEP_ASKED; /* no weights stored in half after all */
	}
	return OM_OK;
}

/* The Casts (appended after the nn nodes of the original order) go right after the producer
 * of what they read (first when a graph input or initializer): a subgraph's outer reference
 * to a value a Cast writes is then after it too, which a sort over node inputs misses. */
static om_kind place_casts(hc *h, int32_t nn)
{
	om_graph *g = h->g;
	const int32_t total = g->nnodes;
	om_node **order = om_arena_alloc(h->m->arena, sizeof *order * (size_t)(g->cap_nodes + 1));
	if (!order)
		return om_error(h->st, OM_ERR_NOMEM, NULL, "out of memory");
	int32_t k = 0;
	for (int32_t c = nn; c < total; c++)
		if (!g->nodes[c]->in[0]->producer)
			order[k++] = g->nodes[c];
	for (int32_t i = 0; i < nn; i++) {
		order[k++] = g->nodes[i];
		for (int32_t c = nn; c < total; c++)
			if (g->nodes[c]->in[0]->producer == g->nodes[i])
				order[k++] = g->nodes[c];
	}
	if (k != total)
		return om_error(h->st, OM_ERR_INTERNAL, NULL, "a Cast reads another Cast");
	g->nodes = order;
	return OM_OK;
}

/* The rows' inference over the result: a converted node whose output it types otherwise than
 * the conversion did is reported. */
static om_kind verify(hc *h, om_node **nodes, int32_t nn, uint8_t *why, bool *redo)
{
	om_pass_ctx vc;
	om_kind rc = om_pass_ctx_open(&vc, h->m, NULL, h->st);
	int changes = 0;
	if (!rc)
		rc = om_pass_infer(&vc, h->g, &changes);
	for (int32_t i = 0; i < nn && !rc; i++) {
		if (why[i] != OM_HALF_CONVERTED)
			continue;
		const om_node *n = nodes[i];
		for (int32_t k = 0; k < n->nout; k++) {
			const om_vinfo *vi = om_vinfo_get(&vc, h->g, n->out[k]);
			if (!vi || vi->type.kind != OM_TYPE_TENSOR || !vi->type.elem)
				continue;
			if (vi->type.elem != n->out[k]->type.elem && n->out[k]->type.elem) {
				why[i] = OM_HALF_KEEP_INFER;
				*redo = true;
			}
		}
	}
	om_pass_ctx_close(&vc);
	return rc;
}

static om_kind convert(om_model *m, int32_t from, int32_t dtype, uint8_t *why, bool *redo,
		       int64_t *clamped, om_status *st)
{
	*redo = false;
	if (!m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	hc h = {.m = m, .g = m->graph, .dtype = dtype, .from = from, .clamped = clamped, .st = st};
	om_kind rc = om_pass_ctx_open(&h.pc, m, NULL, st);
	if (rc)
		return rc;
	int changes = 0;
	const int32_t nn = h.g->nnodes;
	om_node **nodes = malloc(sizeof *nodes * (size_t)(nn + 1));
	plan p = {.why = why};
	rc = nodes ? om_pass_infer(&h.pc, h.g, &changes)
		   : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (!rc) {
		memcpy(nodes, h.g->nodes, sizeof *nodes * (size_t)nn);
		rc = make_plan(&h, nodes, nn, &p);
	}
	if (!rc)
		rc = apply(&h, nodes, nn, &p);
	if (!rc)
		rc = place_casts(&h, nn);
	if (!rc)
		rc = om_pass_dead(&h.pc, h.g, &changes);
	HASH_CLEAR(hh, h.forms);
	om_pass_ctx_close(&h.pc);
	if (!rc)
		rc = verify(&h, nodes, nn, why, redo);
	free(nodes);
	return rc;
}

om_kind om_half_convert(om_model *m, int32_t dtype, uint8_t *why, bool *redo, int64_t *clamped,
			om_status *st)
{
	if (dtype != OM_FLOAT16 && dtype != OM_BFLOAT16)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"half conversion to %s: float16 or bfloat16 only",
				om_dtype_name(dtype));
	return convert(m, OM_FLOAT, dtype, why, redo, clamped, st);
}

om_kind om_half_widen(om_model *m, int32_t from, uint8_t *why, bool *redo, om_status *st)
{
	if (from != OM_FLOAT16 && from != OM_BFLOAT16)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"widening %s to float32: float16 or bfloat16 only",
				om_dtype_name(from));
	int64_t clamped = 0;
	return convert(m, from, OM_FLOAT, why, redo, &clamped, st);
}
