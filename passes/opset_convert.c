/*
 * opset_convert.c — om_opset_convert: a model's default-domain opset import moved up or down,
 * as ONNX's version converter does, node by node.
 *
 * The op rows say what changed: a node resolves to a row at the source opset and to one at
 * the target (om_op_find), each with its signature there (om_op_sig_at). The same row and the
 * same signature: the node is left alone. Another signature of the same row (types widened,
 * an attribute or input added or dropped): the node must fit the target's signature, with
 * attributes the target does not know dropped when they hold ONNX's default. Another row (a
 * change of meaning) or an attribute moved to an input: the op's adapter (opset_adapters.c)
 * rewrites the node; without one the node is refused. The driver keeps no list of versions.
 * A node that cannot be expressed at the target, or a value of an element type the target
 * lacks (bfloat16 before 13, float8 before 19, 4-bit before 21), is OM_ERR_UNSUPPORTED naming
 * the node and op; the model is then partly rewritten and is to be discarded.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "omopt.h"
#include "opset_convert.h"

om_kind om_adapt_fail(om_adapt *a, const char *why)
{
	return om_error(a->c->st, OM_ERR_UNSUPPORTED, a->n, "%s from opset %lld to %lld: %s",
			a->n->op, (long long)a->src, (long long)a->dst, why);
}

/* The first opset of the default domain whose type system has element type t (ONNX's IR:
 * bfloat16 came with opset 13, float8 with 19, 4-bit integers with 21, float4 with 23,
 * float8e8m0 with 24, 2-bit integers with 25). */
static int64_t dtype_since(int32_t t)
{
	switch (t) {
	case OM_BFLOAT16:
		return 13;
	case OM_FLOAT8E4M3FN: case OM_FLOAT8E4M3FNUZ: case OM_FLOAT8E5M2: case OM_FLOAT8E5M2FNUZ:
		return 19;
	case OM_UINT4: case OM_INT4:
		return 21;
	case OM_FLOAT4E2M1:
		return 23;
	case OM_FLOAT8E8M0:
		return 24;
	case OM_UINT2: case OM_INT2:
		return 25;
	default:
		return 1;
	}
}

static int32_t value_dtype(const om_value *v)
{
	if (!v)
		return 0;
	if (v->init)
		return v->init->dtype;
	return v->type.kind == OM_TYPE_TENSOR ? v->type.elem : 0;
}

/* ONNX's defaults of the attributes later opsets added: dropped when the target's signature
 * does not know them and the node holds the default (anything else has no meaning there).
 * `any`: the attribute never changes the result of an inference run (legacy or training
 * only). */
typedef struct attr_default {
	const char *name;
	int32_t type;
	int64_t i;
	const char *s;
	bool any;
} attr_default;

static const attr_default defaults[] = {
	{"consumed_inputs", OM_ATTR_INTS, 0, NULL, true}, /* opset-1 legacy */
	{"is_test", OM_ATTR_INT, 0, NULL, true},          /* opset < 7 legacy */
	{"seed", OM_ATTR_INT, 0, NULL, true},             /* Dropout's, inference ignores it */
	{"training_mode", OM_ATTR_INT, 0, NULL, false},   /* BatchNormalization 14 */
	{"spatial", OM_ATTR_INT, 1, NULL, false},         /* BatchNormalization before 9 */
	{"batch_dims", OM_ATTR_INT, 0, NULL, false},      /* GatherND 12 */
	{"reduction", OM_ATTR_STRING, 0, "none", false},  /* ScatterElements/ND 16 */
	{"largest", OM_ATTR_INT, 1, NULL, false},         /* TopK 11 */
	{"sorted", OM_ATTR_INT, 1, NULL, false},          /* TopK 11 */
	{"noop_with_empty_axes", OM_ATTR_INT, 0, NULL, false}, /* Reduce* 13/18 */
	{"allowzero", OM_ATTR_INT, 0, NULL, false},       /* Reshape 14 */
	{"antialias", OM_ATTR_INT, 0, NULL, false},       /* Resize 18 */
	{"keep_aspect_ratio_policy", OM_ATTR_STRING, 0, "stretch", false}, /* Resize 18 */
	{"start", OM_ATTR_INT, 0, NULL, false},           /* Shape 15 */
	{"stash_type", OM_ATTR_INT, 1, NULL, false},      /* LayerNormalization */
	{"select_last_index", OM_ATTR_INT, 0, NULL, false}, /* ArgMax/ArgMin 12 */
	{"fmod", OM_ATTR_INT, 0, NULL, false},
	{"saturate", OM_ATTR_INT, 1, NULL, false},       /* Cast 19: float8 only */
	{"ceil_mode", OM_ATTR_INT, 0, NULL, false},       /* pools 10 */
};

static bool holds_default(const om_attr *at)
{
	for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
		const attr_default *d = &defaults[i];
		if (strcmp(d->name, at->name))
			continue;
		if (d->any)
			return true;
		if (d->type == OM_ATTR_INT)
			return at->type == OM_ATTR_INT && at->i == d->i;
		return at->type == OM_ATTR_STRING && at->s.len == (int64_t)strlen(d->s) &&
		       !memcmp(at->s.ptr, d->s, strlen(d->s));
	}
	return false;
}

/* Attributes the target's signature does not know: dropped when they hold the default. */
static om_kind drop_unknown_attrs(om_adapt *a)
{
	om_node *n = a->n;
	for (int32_t i = 0; i < n->nattr;) {
		const om_attr *at = &n->attrs[i];
		if (om_sig_knows(a->sto, at->name)) {
			i++;
			continue;
		}
		if (!holds_default(at)) {
			char why[160];
			snprintf(why, sizeof why, "attribute %.60s has no meaning at the target",
				 at->name);
			return om_adapt_fail(a, why);
		}
		om_adapt_drop_attr(n, at->name);
	}
	return OM_OK;
}

static bool bit(uint64_t bits, int32_t slot)
{
	return (bits >> (slot < 63 ? slot : 63)) & 1;
}

/* Element types the target lacks, in the node's slots: the type system's (dtype_since), and
 * float16/bfloat16 where the source's signature admitted them and the target's does not. */
static om_kind check_types(om_adapt *a)
{
	const om_node *n = a->n;
	for (int32_t k = 0; k < n->nin + n->nout; k++) {
		const bool in = k < n->nin;
		const int32_t slot = in ? k : k - n->nin;
		const int32_t t = om_adapt_elem(a, in ? n->in[slot] : n->out[slot]);
		char why[160];
		if (t && dtype_since(t) > a->dst) {
			snprintf(why, sizeof why, "%s %d has element type %d, which opset %lld "
				 "lacks", in ? "input" : "output", (int)slot, (int)t,
				 (long long)a->dst);
			return om_adapt_fail(a, why);
		}
		if (!a->sfrom || !a->sto || (t != OM_FLOAT16 && t != OM_BFLOAT16))
			continue;
		const om_sig *f = a->sfrom, *s = a->sto;
		const bool h = t == OM_FLOAT16;
		const uint64_t was = h ? (in ? f->in_f16 : f->out_f16)
				       : (in ? f->in_bf16 : f->out_bf16);
		const uint64_t now = h ? (in ? s->in_f16 : s->out_f16)
				       : (in ? s->in_bf16 : s->out_bf16);
		if (bit(was, slot) && !bit(now, slot)) {
			snprintf(why, sizeof why, "%s %d is %s, which the op does not take there",
				 in ? "input" : "output", (int)slot,
				 t == OM_FLOAT16 ? "float16" : "bfloat16");
			return om_adapt_fail(a, why);
		}
	}
	/* element types named by attributes (Cast's `to`, the generators' `dtype`) and held by
	 * Constant values */
	for (int32_t i = 0; i < n->nattr; i++) {
		const om_attr *at = &n->attrs[i];
		int32_t t = 0;
		if (at->type == OM_ATTR_INT &&
		    (!strcmp(at->name, "to") || !strcmp(at->name, "dtype")))
			t = (int32_t)at->i;
		else if (at->type == OM_ATTR_TENSOR && at->t)
			t = at->t->dtype;
		if (t > 0 && dtype_since(t) > a->dst) {
			char why[160];
			snprintf(why, sizeof why, "attribute %.60s names element type %d, which "
				 "opset %lld lacks", at->name, (int)t, (long long)a->dst);
			return om_adapt_fail(a, why);
		}
	}
	return OM_OK;
}

/* Element types ONNX's type constraints added to an op at `since` other than float16 and
 * bfloat16 (the signatures carry those two only): below `since` a node reading one of them
 * is refused. ONNX's Changelog; a stopgap until the signatures carry every type. */
#define TB(t) (UINT64_C(1) << (t))
#define INTS_SIGNED (TB(OM_INT8) | TB(OM_INT16) | TB(OM_INT32) | TB(OM_INT64))
#define INTS_ALL (INTS_SIGNED | TB(OM_UINT8) | TB(OM_UINT16) | TB(OM_UINT32) | TB(OM_UINT64))
typedef struct types_added {
	const char *op;
	int32_t since;
	uint64_t types;
} types_added;

static const types_added added[] = {
	/* from onnx.defs (ONNX 1.12: opsets to 17), inputs' types a later version admits */
	{"Add", 14, TB(OM_INT8) | TB(OM_INT16) | TB(OM_UINT8) | TB(OM_UINT16)},
	{"Sub", 14, TB(OM_INT8) | TB(OM_INT16) | TB(OM_UINT8) | TB(OM_UINT16)},
	{"Mul", 14, TB(OM_INT8) | TB(OM_INT16) | TB(OM_UINT8) | TB(OM_UINT16)},
	{"Div", 14, TB(OM_INT8) | TB(OM_INT16) | TB(OM_UINT8) | TB(OM_UINT16)},
	{"Cast", 9, TB(OM_STRING)},
	{"Clip", 12, INTS_ALL}, {"Max", 12, INTS_ALL}, {"Min", 12, INTS_ALL},
	{"Pow", 12, INTS_ALL},
	{"Equal", 11, TB(OM_FLOAT) | TB(OM_DOUBLE) | TB(OM_INT8) | TB(OM_INT16) | TB(OM_UINT8) |
		      TB(OM_UINT16) | TB(OM_UINT32) | TB(OM_UINT64)},
	{"Flatten", 9, INTS_ALL | TB(OM_BOOL) | TB(OM_STRING) | TB(OM_COMPLEX64) |
		       TB(OM_COMPLEX128)},
	{"Gemm", 9, TB(OM_INT32) | TB(OM_INT64) | TB(OM_UINT32) | TB(OM_UINT64)},
	{"MatMul", 9, TB(OM_INT32) | TB(OM_INT64) | TB(OM_UINT32) | TB(OM_UINT64)},
	{"PRelu", 9, TB(OM_INT32) | TB(OM_INT64) | TB(OM_UINT32) | TB(OM_UINT64)},
	{"Greater", 9, INTS_ALL}, {"Less", 9, INTS_ALL},
	{"MaxPool", 12, TB(OM_INT8) | TB(OM_UINT8)},
	{"Pad", 11, INTS_ALL},
	{"Pad", 13, TB(OM_BOOL) | TB(OM_STRING) | TB(OM_COMPLEX64) | TB(OM_COMPLEX128)},
	{"ReduceMax", 12, TB(OM_INT8) | TB(OM_UINT8)},
	{"ReduceMin", 12, TB(OM_INT8) | TB(OM_UINT8)},
	{"Relu", 14, INTS_SIGNED},
	{"TopK", 11, INTS_ALL & ~TB(OM_INT64)}, /* K is int64 before too */
	/* ONNX's Changelog after 17 */
	{"ReduceMax", 20, TB(OM_BOOL)}, {"ReduceMin", 20, TB(OM_BOOL)},
	{"Equal", 19, TB(OM_STRING)},
};

static om_kind check_added_types(om_adapt *a)
{
	const om_node *n = a->n;
	for (size_t i = 0; i < sizeof added / sizeof added[0]; i++) {
		if (a->dst >= added[i].since || a->src < added[i].since ||
		    om_op_find(n->domain, added[i].op, a->src) != a->from)
			continue;
		for (int32_t k = 0; k < n->nin; k++) {
			const int32_t t = om_adapt_elem(a, n->in[k]);
			if (t <= 0 || t >= 64 || !(added[i].types >> t & 1))
				continue;
			char why[160];
			snprintf(why, sizeof why, "input %d has element type %d, which the op "
				 "takes from opset %d", (int)k, (int)t, (int)added[i].since);
			return om_adapt_fail(a, why);
		}
	}
	return OM_OK;
}

static void resolve(om_adapt *a)
{
	a->from = om_op_find(a->n->domain, a->n->op, a->src);
	a->to = om_op_find(a->n->domain, a->n->op, a->dst);
	a->sfrom = a->from ? om_op_sig_at(a->from, a->src) : NULL;
	a->sto = a->to ? om_op_sig_at(a->to, a->dst) : NULL;
}

static om_kind convert_node(om_pass_ctx *c, om_graph *g, om_node *n, int64_t src, int64_t dst,
			    bool *sort)
{
	om_adapt a = {.c = c, .g = g, .n = n, .src = src, .dst = dst};
	resolve(&a);
	if (!a.from)
		return om_adapt_fail(&a, "omopt has no row for the op at the source opset, so it "
					 "cannot tell what changed");
	const om_adapt_fn fn = om_adapter_of(&a);
	om_kind rc = check_added_types(&a);
	if (rc)
		return rc;
	if (a.from == a.to && a.sfrom == a.sto && !fn)
		return check_types(&a);
	if (fn) {
		rc = fn(&a);
		if (a.toposort)
			*sort = true;
		if (rc)
			return rc;
		const om_adapt keep = a;
		resolve(&a); /* the adapter may have made it another op (Upsample -> Resize) */
		a.src = keep.src;
	} else if (a.from != a.to) {
		return om_adapt_fail(&a, a.to ? "its meaning changed in between and omopt has no "
						"adapter for it"
					      : "the op does not exist at the target");
	}
	if (!a.sto)
		return om_adapt_fail(&a, "the op does not exist at the target");
	rc = drop_unknown_attrs(&a);
	if (rc)
		return rc;
	if (om_node_check(a.to, n, dst, c->st)) {
		char why[400];
		snprintf(why, sizeof why, "it does not fit the target's signature (%.300s)",
			 c->st->msg);
		return om_adapt_fail(&a, why);
	}
	return check_types(&a);
}

/* Element types of the graph's inputs, outputs and initializers the target lacks. */
static om_kind check_graph_types(const om_graph *g, int64_t dst, om_status *st)
{
	om_value *const *lists[3] = {g->inputs, g->outputs, g->inits};
	const int32_t counts[3] = {g->ninputs, g->noutputs, g->ninits};
	for (int l = 0; l < 3; l++)
		for (int32_t i = 0; i < counts[l]; i++) {
			const int32_t t = value_dtype(lists[l][i]);
			if (t && dtype_since(t) > dst)
				return om_error(st, OM_ERR_UNSUPPORTED, NULL,
						"%s has element type %d, which opset %lld lacks",
						lists[l][i]->name, (int)t, (long long)dst);
		}
	return OM_OK;
}

/* Initializers no node reads any more (an input an adapter made an attribute). */
static void drop_unread_inits(om_graph *g)
{
	om_graph_count_uses(g);
	int32_t k = 0;
	for (int32_t i = 0; i < g->ninits; i++) {
		om_value *v = g->inits[i];
		if (v->nuses > 0 || (v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT))) {
			g->inits[k++] = v;
		} else {
			v->flags &= ~(uint32_t)OM_VALUE_INITIALIZER;
			v->init = NULL;
			v->init_proto = NULL;
		}
	}
	g->ninits = k;
}

/* The IR version ONNX released with an opset (ONNX's VERSION_TABLE): a model moved up is
 * given at least this one, as ONNX Runtime checks IR version and opset together. */
static int64_t ir_for_opset(int64_t opset)
{
	return opset >= 21 ? 10 : opset >= 19 ? 9 : opset >= 15 ? 8 : opset >= 13 ? 7
	       : opset >= 10 ? 5 : opset >= 9 ? 4 : 3;
}

static om_kind set_opset(om_model *m, int64_t dst, om_status *st)
{
	for (int32_t i = 0; i < m->nopsets; i++) {
		const char *d = m->opsets[i].domain ? m->opsets[i].domain : "";
		if (!d[0] || !strcmp(d, "ai.onnx")) {
			m->opsets[i].version = dst;
			return OM_OK;
		}
	}
	om_opset *o = om_arena_alloc(m->arena, sizeof *o * (size_t)(m->nopsets + 1));
	if (!o)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for the opset import");
	if (m->nopsets)
		memcpy(o, m->opsets, sizeof *o * (size_t)m->nopsets);
	o[m->nopsets].domain = "";
	o[m->nopsets].version = dst;
	m->opsets = o;
	m->nopsets++;
	return OM_OK;
}

om_kind om_opset_convert(om_model *m, int64_t opset, om_status *st)
{
	if (!m || !m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "no model or graph");
	if (opset < OM_OPSET_CONVERT_MIN || opset > OM_OPSET_CONVERT_MAX)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"opset %lld is outside the range omopt converts (%d to %d)",
				(long long)opset, OM_OPSET_CONVERT_MIN, OM_OPSET_CONVERT_MAX);
	const int64_t src = om_model_opset(m, "");
	if (src == opset)
		return OM_OK;
	if (src < 1)
		return OM_OK; /* no default-domain import: no node of it to convert */
	if (m->nfunctions)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL,
				"the model has %d local functions, which import opsets of their "
				"own: inline them first (omopt simplify does unless told not to)",
				(int)m->nfunctions);
	om_pass_ctx c;
	om_kind rc = om_pass_ctx_open(&c, m, NULL, st);
	if (rc)
		return rc;
	/* types of the values the model leaves untyped (the adapters that need a rank or an
	 * element type ask it), inferred at the source opset; best effort */
	int changes = 0;
	om_pass_infer(&c, m->graph, &changes);
	for (om_graph *g = m->all_graphs; g && !rc; g = g->next_in_model) {
		bool sort = false;
		const int32_t nn = g->nnodes; /* adapters append nodes that are already right */
		for (int32_t i = 0; i < nn && !rc; i++)
			if (om_node_default_domain(g->nodes[i]))
				rc = convert_node(&c, g, g->nodes[i], src, opset, &sort);
		if (!rc)
			rc = check_graph_types(g, opset, st);
		if (!rc && sort)
			rc = om_graph_toposort(g, st);
		if (!rc)
			drop_unread_inits(g);
	}
	om_pass_ctx_close(&c);
	if (rc)
		return rc;
	if ((rc = set_opset(m, opset, st)))
		return rc;
	if (opset > src && m->ir_version && m->ir_version < ir_for_opset(opset))
		m->ir_version = ir_for_opset(opset);
	/* every node of every graph against its signature at the new opset (as a load does) */
	return om_model_check(m, st);
}
