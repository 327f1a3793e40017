/*
 * unroll_loops.c — the unroll_loops pass: a Loop with a static trip count becomes its body
 * repeated. The trip count is a constant (int64 or int32, one element; a negative one runs
 * nothing); the condition is absent, or a constant (false: no iteration) whose body output is
 * the body's condition input or a constant true, so that no iteration ends the loop early.
 * Each copy of the body reads the iteration number as a new int64 scalar constant, the
 * condition as a constant true, and the loop-carried values the copy before wrote (the Loop's
 * initial values first); values of the enclosing graphs keep their names, the body's own take
 * fresh names, its initializers become the graph's once. The Loop's outputs stay: an Identity
 * writes each final loop-carried value (eliminate_identities then bypasses it), and each scan
 * output is the Concat over axis 0 of the copies' values each unsqueezed at axis 0.
 *
 * Bounds: at most UNROLL_MAX_NODES body nodes in all copies, no subgraph in the body, no scan
 * output when nothing runs (its empty shape would come from the body's declared type), and
 * the estimated growth of the saved model (the copies past the first, the iteration numbers
 * and scan nodes, less the Loop node and its body's wrapper) within c->slack, what earlier
 * rewrites saved: never larger. So a Loop of two or more iterations is kept unless earlier
 * rewrites saved room for its copies, even when all it reads is constant (the folder does not
 * evaluate Loops).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "uses.h"
#include "match.h"
#include "value_map.h"

enum { UNROLL_MAX_NODES = 256, MAX_VALS = 64 };

/* A bool scalar constant (of g or outer) holding true / any value. */
static bool const_bool(const om_graph *g, om_value *v, bool *x)
{
	const om_tensor *t = v ? om_value_const(g, v) : NULL;
	if (!t || t->dtype != OM_BOOL || om_tensor_numel(t) != 1 || !t->data)
		return false;
	*x = *(const uint8_t *)t->data != 0;
	return true;
}

/* True when the body's condition output is always true given a true condition input: the
 * input itself or a constant true (eliminate_identities has bypassed Identities before). */
static bool body_keeps_going(const om_graph *b)
{
	bool x;
	return b->outputs[0] && (b->outputs[0] == b->inputs[1] ||
				 (const_bool(b, b->outputs[0], &x) && x));
}

/* Overestimated saved bytes of a node entry (names, attributes; subgraphs not counted). */
static int64_t node_bytes(const om_node *n)
{
	int64_t b = 16 + (int64_t)strlen(n->op) + (int64_t)strlen(n->name) +
		    (int64_t)strlen(n->domain);
	for (int32_t i = 0; i < n->nin; i++)
		b += 4 + (n->in[i] ? (int64_t)strlen(n->in[i]->name) : 0);
	for (int32_t o = 0; o < n->nout; o++)
		b += 4 + (n->out[o] ? (int64_t)strlen(n->out[o]->name) : 0);
	for (int32_t a = 0; a < n->nattr; a++) {
		const om_attr *at = &n->attrs[a];
		b += 24 + (int64_t)strlen(at->name) + 11 * at->n + (int64_t)at->s.len +
		     (at->t ? (int64_t)at->t->nbytes + 64 : 0);
	}
	return b;
}

/* What one Loop is: its body, counts, trip count. */
typedef struct loop {
	om_node *n;
	om_graph *b;
	int32_t nc, ns; /* loop-carried values, scan outputs */
	int64_t trips;
	int64_t grow;   /* estimated saved-size growth */
} loop;

static bool trip_count(const om_graph *g, const om_node *n, int64_t *trips)
{
	const om_tensor *t = n->in[0] ? om_value_const(g, n->in[0]) : NULL;
	if (!t || om_tensor_numel(t) != 1 || !t->data ||
	    (t->dtype != OM_INT64 && t->dtype != OM_INT32))
		return false;
	const int64_t m = t->dtype == OM_INT64 ? *(const int64_t *)t->data
					       : *(const int32_t *)t->data;
	*trips = m < 0 ? 0 : m;
	return true;
}

/* Fills l when n is a Loop this pass unrolls within the size slack. */
/* v (of the body b) is defined: by a node, as a graph input or initializer, of b or of the
 * enclosing graph an outer reference resolves to */
static bool defined(const om_graph *b, om_value *v)
{
	if (!v)
		return true;
	v = om_graph_resolve(b, v);
	return v->producer || (v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_INITIALIZER));
}

/* Every value the body reads or returns is defined: a malformed body (an output nothing
 * writes, as a fuzzed model had) stays a Loop, which the runtime refuses by name, instead of
 * copies that read a value no node writes. */
static bool body_defined(const om_graph *b)
{
	for (int32_t i = 0; i < b->nnodes; i++)
		for (int32_t k = 0; k < b->nodes[i]->nin; k++)
			if (!defined(b, b->nodes[i]->in[k]))
				return false;
	for (int32_t o = 0; o < b->noutputs; o++)
		if (!defined(b, b->outputs[o]))
			return false;
	return true;
}

static bool unrollable(om_pass_ctx *c, const om_graph *g, om_node *n, loop *l)
{
	const om_attr *a = om_node_attr(n, "body");
	om_graph *b = a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
	if (!b || n->nin < 2 || b->ninputs != n->nin || b->noutputs < n->nin - 1 ||
	    n->nout != b->noutputs - 1 || om_graph_has_subgraph(b) || n->nin - 2 > MAX_VALS ||
	    n->nout > MAX_VALS || !body_defined(b))
		return false;
	*l = (loop){.n = n, .b = b, .nc = n->nin - 2, .ns = n->nout - (n->nin - 2)};
	if (!trip_count(g, n, &l->trips))
		return false;
	bool cond = true;
	if (n->nin > 1 && n->in[1] && !const_bool(g, n->in[1], &cond))
		return false;
	if (!cond)
		l->trips = 0;
	else if (n->in[1] && l->trips > 1 && !body_keeps_going(b))
		return false;
	for (int32_t j = 0; j < l->nc; j++)
		if (!n->in[2 + j])
			return false;
	if (l->trips > UNROLL_MAX_NODES || l->trips * b->nnodes > UNROLL_MAX_NODES ||
	    (l->trips == 0 && l->ns > 0))
		return false;
	int64_t body = 0, wrapper = 8;
	bool reads_iter = false, reads_cond = false;
	for (int32_t i = 0; i < b->nnodes; i++) {
		body += node_bytes(b->nodes[i]);
		for (int32_t k = 0; k < b->nodes[i]->nin; k++) {
			reads_iter |= b->nodes[i]->in[k] == b->inputs[0];
			reads_cond |= b->nodes[i]->in[k] == b->inputs[1];
		}
	}
	for (int32_t i = 0; i < b->ninits; i++)
		if (!b->inits[i]->init)
			return false; /* an initializer without data */
	for (int32_t i = 0; i < b->ninputs; i++)
		wrapper += 4 + (int64_t)strlen(b->inputs[i]->name);
	for (int32_t i = 0; i < b->noutputs; i++)
		wrapper += 4 + (int64_t)strlen(b->outputs[i]->name);
	/* the copies past the first, the iteration numbers and condition read, each scan
	 * output's Unsqueezes and Concat (the Identities of the carried values are bypassed by
	 * eliminate_identities in the same round), against the Loop node and the body's wrapper
	 * (and the body's nodes when nothing runs) */
	int64_t scans = 0;
	for (int32_t k = 0; k < l->ns; k++) {
		const int64_t nm = 8 + (int64_t)strlen(n->out[l->nc + k] ? n->out[l->nc + k]->name
									: "");
		scans += l->trips * (16 + 2 * nm) + (l->trips > 1 ? 16 + (l->trips + 1) * nm : 0) +
			 32;
	}
	const int64_t copies = l->trips > 1 ? (l->trips - 1) * body : 0;
	const int64_t extra = (reads_iter ? 40 * l->trips : 0) + (reads_cond ? 40 : 0) + scans;
	const int64_t gone = node_bytes(n) - 24 * n->nattr + wrapper + (l->trips ? 0 : body);
	l->grow = copies + extra - gone;
	if (c->verbose >= 2)
		fprintf(stderr, "unroll_loops: '%s': %lld iterations, growth %lld bytes, "
			"slack %lld%s\n", n->name, (long long)l->trips, (long long)l->grow, (long long)c->slack,
			l->grow <= c->slack ? "" : ": kept");
	return l->grow <= c->slack;
}

/* A new int64 or bool scalar constant of g. */
static om_value *scalar(om_pass_ctx *c, om_graph *g, const char *hint, int32_t dtype, int64_t x)
{
	om_tensor *t = om_model_tensor(c->m, dtype, 0, NULL);
	if (!t)
		return NULL;
	if (dtype == OM_INT64)
		*(int64_t *)t->data = x;
	else
		*(uint8_t *)t->data = x != 0;
	return om_new_constant(c, g, hint, t);
}

/* A node of g: op reading in[0..nin), writing out. */
static om_node *add_node(om_pass_ctx *c, om_graph *g, const char *op, const char *name,
			 int32_t nin, om_value *const *in, om_value *out)
{
	om_node *nn = om_graph_add_node(g, op, "", name, nin, 1);
	if (!nn)
		return NULL;
	for (int32_t i = 0; i < nin; i++)
		nn->in[i] = in[i];
	om_node_set_output(nn, 0, out);
	om_uses_add_node(c, nn);
	return nn;
}

/* One copy of the body: the body's inputs read in[], its outputs written into out[]. */
static bool copy_body(om_pass_ctx *c, om_graph *g, const loop *l, om_vmap *inits,
		      om_value *const *in, om_value **out)
{
	const om_graph *b = l->b;
	om_vmap *map = NULL;
	bool ok = om_vmap_add_all(&map, inits);
	for (int32_t i = 0; ok && i < b->ninputs; i++)
		ok = b->inputs[i] && om_vmap_put(&map, b->inputs[i], in[i]);
	for (int32_t i = 0; ok && i < b->nnodes; i++) {
		const om_node *bn = b->nodes[i];
		om_node *nn = om_graph_add_node(g, bn->op, bn->domain, bn->name, bn->nin, bn->nout);
		/* attributes copied per node: a pass may set one on a single copy */
		om_attr *attrs = nn && bn->nattr ? om_arena_memdup(c->m->arena, bn->attrs,
								  sizeof *attrs * (size_t)bn->nattr)
						 : NULL;
		if (!nn || (bn->nattr && !attrs)) {
			ok = false;
			break;
		}
		nn->overload = bn->overload;
		nn->doc = bn->doc;
		nn->attrs = attrs;
		nn->nattr = bn->nattr;
		nn->meta = bn->meta;
		nn->nmeta = bn->nmeta;
		for (int32_t k = 0; ok && k < bn->nin; k++)
			if (bn->in[k] && !(nn->in[k] = om_vmap_get(g, &map, bn->in[k])))
				ok = false;
		for (int32_t k = 0; ok && k < bn->nout; k++) {
			om_value *v = bn->out[k] ? om_vmap_get(g, &map, bn->out[k]) : NULL;
			ok = !bn->out[k] || v;
			om_node_set_output(nn, k, v);
		}
		om_uses_add_node(c, nn);
	}
	for (int32_t o = 0; ok && o < b->noutputs; o++)
		ok = b->outputs[o] && (out[o] = om_vmap_get(g, &map, b->outputs[o])) != NULL;
	om_vmap_free(&map);
	return ok;
}

/* The scan output `want`: Concat over axis 0 of each copy's value unsqueezed at axis 0. */
static bool scan_output(om_pass_ctx *c, om_graph *g, const loop *l, om_value **vals,
			om_value *want)
{
	const bool axes_input = om_model_opset(c->m, "") >= 13;
	om_value *axes = NULL;
	if (axes_input) {
		om_tensor *t = om_model_tensor(c->m, OM_INT64, 1, (int64_t[]){1});
		if (!t)
			return false;
		((int64_t *)t->data)[0] = 0;
		if (!(axes = om_new_constant(c, g, "unroll_axes", t)))
			return false;
	}
	om_value **parts = om_arena_alloc(c->scratch, sizeof *parts * (size_t)l->trips);
	if (!parts)
		return false;
	for (int64_t it = 0; it < l->trips; it++) {
		om_value *u = l->trips == 1 ? want : om_graph_fresh_value(g, want->name);
		om_value *const in[2] = {vals[it], axes};
		om_node *un = u ? add_node(c, g, "Unsqueeze", want->name, axes_input ? 2 : 1, in, u)
				: NULL;
		if (!un)
			return false;
		if (!axes_input) {
			om_attr *a = om_node_set_attr(un, "axes", OM_ATTR_INTS);
			int64_t *zero = a ? om_arena_alloc(c->m->arena, sizeof(int64_t)) : NULL;
			if (!zero)
				return false;
			*zero = 0;
			a->n = 1;
			a->ints = zero;
		}
		parts[it] = u;
	}
	if (l->trips == 1)
		return true;
	om_node *cat = add_node(c, g, "Concat", want->name, (int32_t)l->trips, parts, want);
	om_attr *a = cat ? om_node_set_attr(cat, "axis", OM_ATTR_INT) : NULL;
	if (!a)
		return false;
	a->i = 0;
	return true;
}

static om_kind unroll(om_pass_ctx *c, om_graph *g, const loop *l)
{
	om_node *n = l->n;
	const om_graph *b = l->b;
	om_vmap *inits = NULL;
	om_kind rc = OM_OK;
	bool ok = true;
	for (int32_t i = 0; ok && !rc && i < b->ninits; i++) {
		om_value *to = om_graph_fresh_value(g, b->inits[i]->name);
		ok = to && om_vmap_put(&inits, b->inits[i], to);
		if (ok)
			rc = om_make_constant(c, g, to, b->inits[i]->init);
	}
	om_value *cur[MAX_VALS + 2], *res[MAX_VALS + 1];
	om_value **scans = l->ns ? om_arena_alloc(c->scratch, sizeof *scans *
						  (size_t)(l->ns * (l->trips ? l->trips : 1)))
				 : NULL;
	ok &= !l->ns || scans;
	for (int32_t j = 0; j < l->nc; j++)
		cur[2 + j] = n->in[2 + j];
	om_value *yes = ok && !rc && l->trips ? scalar(c, g, "unroll_cond", OM_BOOL, 1) : NULL;
	for (int64_t it = 0; ok && !rc && it < l->trips; it++) {
		cur[0] = scalar(c, g, "unroll_iter", OM_INT64, it);
		cur[1] = yes;
		ok = cur[0] && yes && copy_body(c, g, l, inits, cur, res);
		for (int32_t j = 0; ok && j < l->nc; j++)
			cur[2 + j] = res[1 + j];
		for (int32_t k = 0; ok && k < l->ns; k++)
			scans[k * l->trips + it] = res[1 + l->nc + k];
	}
	for (int32_t j = 0; ok && !rc && j < l->nc; j++)
		ok = !n->out[j] ||
		     add_node(c, g, "Identity", n->out[j]->name, 1, &cur[2 + j], n->out[j]);
	for (int32_t k = 0; ok && !rc && k < l->ns; k++)
		ok = !n->out[l->nc + k] ||
		     scan_output(c, g, l, scans + k * l->trips, n->out[l->nc + k]);
	om_vmap_free(&inits);
	if (rc)
		return rc;
	if (!ok)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory unrolling a Loop");
	n->flags |= OM_NODE_DEAD;
	return OM_OK;
}

om_kind om_pass_unroll_loops(om_pass_ctx *c, om_graph *g, int *changes)
{
	int unrolled = 0;
	om_kind rc = OM_OK;
	bool indexed = false;
	const int32_t n0 = g->nnodes;
	for (int32_t i = 0; i < n0 && !rc; i++) {
		om_node *n = g->nodes[i];
		loop l;
		if ((n->flags & OM_NODE_DEAD) || om_node_code(c->m, n) != OM_OPC_LOOP ||
		    !unrollable(c, g, n, &l))
			continue;
		if (!indexed)
			om_uses_open(c, g);
		indexed = true;
		rc = unroll(c, g, &l);
		unrolled += !rc;
		c->slack -= l.grow;
	}
	if (indexed)
		om_uses_close(c);
	*changes += unrolled;
	if (rc || !unrolled)
		return rc;
	om_graph_compact(g);
	return om_graph_toposort(g, c->st);
}
