/*
 * fold.c — the fold_constants pass: a node whose inputs are all constants is evaluated with
 * its op row's kernel (om_eval_node, the executor's own semantics) and its outputs become
 * initializers, when the fold does not make the saved model larger (or, with the user's
 * fold_max_bytes, when each output fits that cap). Constant nodes become initializers (over
 * the cap too: their data is in the model already).
 * Not folded: nodes whose constant inputs hold more than OM_EVAL_FOLD_IN_MAX bytes (a mapped external
 * weight costs what a kernel reads of it), other domains, rows flagged OM_OP_RANDOM, control
 * flow, and rows flagged OM_OP_QDQ unless the user asks (fold_qdq). A single-output node that
 * produces a graph output becomes a Constant node (the name stays produced by a node).
 *
 * Growth rule (no fold_max_bytes): a fold replaces the node and the constants that die with it
 * (initializers nobody else reads, counted once); its outputs' bytes may exceed the dead
 * constants' bytes by at most FOLD_ALLOWANCE, and the estimated saved-size growth of the fold
 * (protobuf sizes of the new initializers minus the node's and the dead initializers') must fit
 * c->slack, what earlier rewrites saved (measured by the driver before the pass). A fold that is
 * refused keeps its node, but its value is held as pending so that a later fold reading it can
 * replace the whole chain (Tile -> ReduceSum: the large Tile output is never written).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "pass.h"
#include "match.h"
#include "registry.h"

enum {
	MAX_IO = 64,
	FOLD_ALLOWANCE = 4096,    /* bytes a fold may add: shape-sized tensors */
	OUT_BYTES_MAX = 1 << 30,  /* an output no fold considers (the sums below stay small) */
	MAX_PENDING = 256,        /* refused folds whose values are held for a later fold */
	PENDING_MAX_BYTES = 16 << 20, /* largest pending value */
};

/* A value of a refused fold, held while its node stays. */
typedef struct pending {
	const om_value *v;
	const om_node *n;
	om_tensor t;
	size_t out_bytes;  /* all outputs of n (for the -v message) */
	size_t dead_bytes; /* data bytes of the constants that die with its node */
	int64_t dead_size; /* estimated saved size of the node and those constants */
	bool borrowed;     /* t's data is its node's input's (a view), not its own */
} pending;

typedef struct fold_state {
	om_pass_ctx *c;
	om_graph *g;
	pending *pend;
	int32_t npend;
	size_t pend_bytes;
	int32_t nqdq; /* QDQ nodes on constants kept */
	int32_t nskip; /* nodes not folded because the model would grow, and their bytes */
	size_t skip_out, skip_dead;
	int32_t dropped; /* initializers that died with a fold (taken off the list at the end) */
} fold_state;

/* ---- protobuf size estimates ------------------------------------------------------------- */

static int64_t varint_size(uint64_t x)
{
	int64_t n = 1;
	while (x >= 128)
		x >>= 7, n++;
	return n;
}

/* a length-delimited field with a one-byte tag */
static int64_t field_size(int64_t len)
{
	return 1 + varint_size((uint64_t)len) + len;
}

static int64_t str_field(const char *s)
{
	return field_size(s ? (int64_t)strlen(s) : 0);
}

/* A TensorProto with raw data, dims and type (no name). */
static int64_t tensor_body(const om_tensor *t)
{
	int64_t b = 1 + varint_size((uint64_t)t->dtype);
	for (int32_t d = 0; d < t->rank; d++)
		b += 1 + varint_size((uint64_t)t->dims[d]);
	if (t->dtype == OM_STRING) {
		const om_str *s = t->data;
		for (int64_t i = 0; s && i < om_tensor_numel(t); i++)
			b += field_size(s[i].len);
	} else {
		b += field_size((int64_t)t->nbytes);
	}
	return b;
}

/* An initializer entry of a graph. */
static int64_t init_size(const char *name, const om_tensor *t)
{
	return field_size(str_field(name) + tensor_body(t));
}

static int64_t attr_size(const om_attr *a)
{
	int64_t b = str_field(a->name) + 2;
	switch (a->type) {
	case OM_ATTR_INT: return field_size(b + 1 + varint_size((uint64_t)a->i));
	case OM_ATTR_FLOAT: return field_size(b + 5);
	case OM_ATTR_STRING: return field_size(b + field_size(a->s.len));
	case OM_ATTR_TENSOR: return field_size(b + (a->t ? field_size(tensor_body(a->t)) : 0));
	case OM_ATTR_FLOATS: return field_size(b + 5 * a->n);
	case OM_ATTR_INTS:
		for (int64_t i = 0; a->ints && i < a->n; i++)
			b += 1 + varint_size((uint64_t)a->ints[i]);
		return field_size(b);
	case OM_ATTR_STRINGS:
		for (int64_t i = 0; a->strings && i < a->n; i++)
			b += field_size(a->strings[i].len);
		return field_size(b);
	default: return field_size(b);
	}
}

/* A node entry of a graph (at least what it takes; doc strings and metadata not counted). */
static int64_t node_size(const om_node *n)
{
	int64_t b = str_field(n->op) + (n->name && n->name[0] ? str_field(n->name) : 0) +
		    (n->domain[0] ? str_field(n->domain) : 0);
	for (int32_t i = 0; i < n->nin; i++)
		b += str_field(n->in[i] ? n->in[i]->name : "");
	for (int32_t o = 0; o < n->nout; o++)
		b += str_field(n->out[o] ? n->out[o]->name : "");
	for (int32_t a = 0; a < n->nattr; a++)
		b += attr_size(&n->attrs[a]);
	return field_size(b);
}

/* ---- what dies with a node --------------------------------------------------------------- */

static pending *find_pending(fold_state *s, const om_value *v)
{
	for (int32_t i = 0; i < s->npend; i++)
		if (s->pend[i].v == v)
			return &s->pend[i];
	return NULL;
}

static int32_t reads(const om_node *n, const om_value *v)
{
	int32_t k = 0;
	for (int32_t i = 0; i < n->nin; i++)
		k += n->in[i] == v;
	return k;
}

static bool first_read(const om_node *n, int32_t i)
{
	for (int32_t k = 0; k < i; k++)
		if (n->in[k] == n->in[i])
			return false;
	return true;
}

/* An initializer of this graph that dies when its readers do (outer ones are not counted:
 * a subgraph keeps its reference entry). */
static bool local_init(const om_value *v)
{
	return v->init && (v->flags & OM_VALUE_INITIALIZER) &&
	       !(v->flags & (OM_VALUE_OUTER | OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT));
}

/* True when every output of p but `except` is unused. */
static bool others_unused(const om_node *p, const om_value *except)
{
	for (int32_t o = 0; o < p->nout; o++)
		if (p->out[o] && p->out[o] != except && p->out[o]->nuses > 0)
			return false;
	return true;
}

/* The data bytes and estimated saved size of the constants that die when n dies: inputs
 * that only n reads (local initializers, and pending values with what dies with their node). */
static void dying(fold_state *s, const om_node *n, size_t *bytes, int64_t *size)
{
	*bytes = 0;
	*size = node_size(n);
	for (int32_t a = 0; a < n->nattr; a++) { /* Constant's value, ConstantOfShape's */
		const om_attr *at = &n->attrs[a];
		*bytes += at->type == OM_ATTR_TENSOR && at->t ? at->t->nbytes
			  : at->type == OM_ATTR_INTS		? 8 * (size_t)at->n
			  : at->type == OM_ATTR_FLOATS		? 4 * (size_t)at->n
							: 0;
	}
	for (int32_t i = 0; i < n->nin; i++) {
		const om_value *v = n->in[i];
		if (!v || !first_read(n, i) || v->nuses != reads(n, v))
			continue;
		const pending *p = find_pending(s, v);
		if (local_init(v)) {
			*bytes += v->init->nbytes;
			*size += init_size(v->name, v->init);
		} else if (p && v->producer && others_unused(v->producer, v)) {
			*bytes += p->dead_bytes;
			*size += p->dead_size;
		}
	}
}

/* n died: its inputs lose a use; a pending value nobody reads any more takes its node along,
 * and an initializer nobody reads any more goes at once (its memory is given back before the
 * next fold makes more: a model whose weights are all folded stays near its own size). */
static void release_inputs(fold_state *s, om_node *n)
{
	for (int32_t i = 0; i < n->nin; i++) {
		om_value *v = n->in[i];
		if (!v || v->nuses <= 0 || --v->nuses > 0)
			continue;
		if (local_init(v) && !om_value_used_by_subgraph(s->c, s->g, v)) {
			om_drop_initializer(s->c->m, v);
			s->dropped++;
			continue;
		}
		om_node *p = v->producer;
		if (p && p->graph == s->g && !(p->flags & OM_NODE_DEAD) && find_pending(s, v) &&
		    others_unused(p, NULL)) {
			p->flags |= OM_NODE_DEAD;
			release_inputs(s, p);
		}
	}
}

/* ---- folding ----------------------------------------------------------------------------- */

static bool writes_graph_output(const om_node *n)
{
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && (n->out[o]->flags & OM_VALUE_GRAPH_OUTPUT))
			return true;
	return false;
}

static const om_tensor *input_tensor(fold_state *s, om_value *v)
{
	const om_tensor *t = om_value_const(s->g, v);
	if (t)
		return t;
	const pending *p = find_pending(s, v);
	return p ? &p->t : NULL;
}

enum verdict { SKIP, FOLD, HOLD };

/* Whether n, whose outputs `out` would have (inferred), may be folded: FOLD, HOLD (evaluate
 * and keep as pending: the node stays) or SKIP. */
static enum verdict judge(fold_state *s, const om_node *n, const om_tensor *out, bool qdq,
			  size_t *out_total, size_t *dead_total)
{
	om_pass_ctx *c = s->c;
	size_t out_bytes = 0, largest = 0;
	int64_t new_size = 0;
	*out_total = *dead_total = 0;
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		if (out[o].nbytes > OUT_BYTES_MAX)
			return SKIP; /* SIZE_MAX when the shape's bytes overflow: no sum may wrap */
		out_bytes += out[o].nbytes;
		largest = out[o].nbytes > largest ? out[o].nbytes : largest;
		new_size += init_size(n->out[o]->name, &out[o]) + 8; /* a margin per output */
	}
	bool ok;
	size_t dead_bytes;
	int64_t dead_size;
	dying(s, n, &dead_bytes, &dead_size);
	const int64_t grow = new_size - dead_size;
	if (c->fold_cap) /* a node without inputs holds its data already (a Constant node) */
		ok = largest <= c->fold_cap || (n->nin == 0 && out_bytes <= dead_bytes);
	else if (qdq)
		ok = true; /* the user asked for a float model */
	else
		ok = out_bytes <= dead_bytes + FOLD_ALLOWANCE && grow <= c->slack;
	*out_total = out_bytes;
	*dead_total = dead_bytes;
	if (ok) {
		if (!c->fold_cap && !qdq)
			c->slack -= grow;
		return FOLD;
	}
	if (s->npend + n->nout > MAX_PENDING || largest > PENDING_MAX_BYTES ||
	    s->pend_bytes + out_bytes > (size_t)4 * PENDING_MAX_BYTES)
		return SKIP;
	return HOLD;
}

/* Keeps n's evaluated outputs as pending values (takes out[]'s data; borrowed: out[0]'s data
 * is n's input's, a view's, and stays it). */
static void hold(fold_state *s, const om_node *n, om_tensor *out, size_t out_bytes,
		 bool borrowed)
{
	size_t dead_bytes;
	int64_t dead_size;
	dying(s, n, &dead_bytes, &dead_size);
	for (int32_t o = 0; o < n->nout; o++) {
		if (!n->out[o])
			continue;
		s->pend[s->npend++] = (pending){n->out[o], n, out[o], out_bytes, dead_bytes,
						  dead_size, borrowed};
		s->pend_bytes += out[o].nbytes;
		memset(&out[o], 0, sizeof out[o]);
	}
}

/* A node left alone because the model would grow: named at -vv, counted for -v. */
static void skipped(fold_state *s, const om_node *n, size_t out_bytes, size_t dead_bytes)
{
	if (s->c->verbose >= 2)
		fprintf(stderr, "fold: skipped %s '%s': %zu bytes would replace %zu\n", n->op,
			n->name, out_bytes, dead_bytes);
	s->nskip++;
	s->skip_out += out_bytes;
	s->skip_dead += dead_bytes;
}

/* Evaluates n and turns its outputs into initializers. False when it was left alone. */
static bool fold_node(fold_state *s, om_node *n, om_kind *err)
{
	om_pass_ctx *c = s->c;
	om_graph *g = s->g;
	const om_tensor *in[MAX_IO];
	om_tensor out[MAX_IO];
	if (n->nin > MAX_IO || n->nout > MAX_IO || n->nout == 0)
		return false;
	for (int32_t i = 0; i < n->nin; i++) {
		in[i] = NULL;
		if (n->in[i] && !(in[i] = input_tensor(s, n->in[i])))
			return false;
	}
	const om_op *row = om_node_op(c->m, n);
	if (row && om_eval_fold_input_bytes(row, in, n->nin) > OM_EVAL_FOLD_IN_MAX)
		return false;
	const bool qdq = om_node_has(c->m, n, OM_OP_QDQ);
	if (qdq && !c->fold_qdq) {
		s->nqdq++;
		return false;
	}
	/* a node without inputs that writes a graph output is as small as it gets (Constant) */
	bool to_node = writes_graph_output(n);
	if (to_node && (n->nin == 0 || n->nout != 1))
		return false;
	int64_t opset = om_model_opset(c->m, n->domain);
	memset(out, 0, sizeof(om_tensor) * (size_t)n->nout);
	if (om_infer_node(n, opset, in, out, NULL) != OM_OK)
		return false;
	size_t out_bytes, dead_bytes;
	enum verdict v = judge(s, n, out, qdq, &out_bytes, &dead_bytes);
	if (v != FOLD && c->verbose && (v == SKIP || c->verbose >= 2))
		skipped(s, n, out_bytes, dead_bytes);
	if (v == SKIP)
		return false;
	/* a view (Reshape, Squeeze, ...) holds its input's bytes: not copied (a tied lm_head's
	 * Reshape of its 16 MB embedding table, used by a Gather too, was copied at every load) */
	if (v == HOLD && row && (row->flags & OM_OP_VIEW) && n->nout == 1 && in[0] &&
	    in[0]->data && out[0].nbytes == in[0]->nbytes) {
		out[0].data = in[0]->data;
		hold(s, n, out, out_bytes, true);
		return false;
	}
	if (om_eval_node(n, opset, in, out, NULL) != OM_OK)
		return false; /* best effort: the node stays */
	if (v == HOLD) {
		hold(s, n, out, out_bytes, false);
		for (int32_t o = 0; o < n->nout; o++)
			om_tensor_free(&out[o]);
		return false;
	}
	release_inputs(s, n); /* before a Constant node forgets its inputs */
	if (to_node)
		*err = om_node_to_constant(g, n, &out[0], c->st);
	for (int32_t o = 0; o < n->nout && !*err && !to_node; o++)
		if (n->out[o])
			*err = om_make_constant(c, g, n->out[o], &out[o]);
	for (int32_t o = 0; o < n->nout; o++)
		om_tensor_free(&out[o]);
	if (*err)
		return false;
	if (!to_node)
		n->flags |= OM_NODE_DEAD;
	return true;
}

/* ---- groups of refused folds ------------------------------------------------------------ */

/* Refused folds that share a constant only they read, or read each other's values, are judged
 * together: a weight sliced into pieces (LSTM gate reordering: Slice x3 -> Concat -> Unsqueeze)
 * dies only when all its readers fold. */
typedef struct group_state {
	om_node *held[MAX_PENDING];
	int32_t up[MAX_PENDING];
	int32_t n;
} group_state;

static int32_t root(group_state *gs, int32_t i)
{
	while (gs->up[i] != i)
		i = gs->up[i] = gs->up[gs->up[i]];
	return i;
}

static int32_t held_index(const group_state *gs, const om_node *n)
{
	for (int32_t i = 0; i < gs->n; i++)
		if (gs->held[i] == n)
			return i;
	return -1;
}

/* reads of v by the held nodes whose root is r (every held node when r < 0) */
static int32_t group_reads(group_state *gs, int32_t r, const om_value *v)
{
	int32_t k = 0;
	for (int32_t i = 0; i < gs->n; i++)
		if (r < 0 || root(gs, i) == r)
			k += reads(gs->held[i], v);
	return k;
}

static void link_groups(fold_state *s, group_state *gs)
{
	for (int32_t i = 0; i < s->npend; i++) {
		om_node *n = (om_node *)s->pend[i].n;
		if (!(n->flags & OM_NODE_DEAD) && held_index(gs, n) < 0) {
			gs->up[gs->n] = gs->n;
			gs->held[gs->n++] = n;
		}
	}
	for (int32_t i = 0; i < gs->n; i++) {
		const om_node *n = gs->held[i];
		for (int32_t k = 0; k < n->nin; k++) {
			const om_value *v = n->in[k];
			int32_t j = v && v->producer ? held_index(gs, v->producer) : -1;
			if (j >= 0) {
				gs->up[root(gs, i)] = root(gs, j);
				continue;
			}
			if (!v || !local_init(v) || group_reads(gs, -1, v) != v->nuses)
				continue;
			for (j = 0; j < i; j++)
				if (reads(gs->held[j], v))
					gs->up[root(gs, i)] = root(gs, j);
		}
	}
}

/* Folds the group of root r when together they do not grow the model. */
static om_kind fold_group(fold_state *s, group_state *gs, int32_t r, int *changes)
{
	om_pass_ctx *c = s->c;
	size_t out_bytes = 0, dead_bytes = 0;
	int64_t grow = 0;
	int32_t members = 0;
	for (int32_t i = 0; i < gs->n; i++) {
		const om_node *n = gs->held[i];
		if (root(gs, i) != r)
			continue;
		members++;
		if (writes_graph_output(n))
			return OM_OK;
		grow -= node_size(n);
		for (int32_t o = 0; o < n->nout; o++) {
			const om_value *w = n->out[o];
			const pending *p = w ? find_pending(s, w) : NULL;
			if (!w)
				continue; /* an omitted output */
			if (!p)
				return OM_OK;
			if (w->nuses > group_reads(gs, r, w)) { /* read outside: written */
				out_bytes += p->t.nbytes;
				grow += init_size(w->name, &p->t) + 8;
			}
		}
		for (int32_t k = 0; k < n->nin; k++) {
			const om_value *v = n->in[k];
			bool first = true; /* counted once in the group */
			for (int32_t j = 0; j < gs->n && first; j++)
				for (int32_t q = 0; root(gs, j) == r && q < gs->held[j]->nin; q++)
					if (gs->held[j]->in[q] == v && (j < i || (j == i && q < k)))
						first = false;
			if (v && first && local_init(v) && group_reads(gs, r, v) == v->nuses) {
				dead_bytes += v->init->nbytes;
				grow -= init_size(v->name, v->init);
			}
		}
	}
	if (members < 2 || out_bytes > dead_bytes + FOLD_ALLOWANCE || grow > c->slack)
		return OM_OK;
	c->slack -= grow;
	for (int32_t i = 0; i < gs->n; i++) {
		om_node *n = gs->held[i];
		if (root(gs, i) != r)
			continue;
		for (int32_t o = 0; o < n->nout; o++) {
			om_value *w = n->out[o];
			if (w && w->nuses > group_reads(gs, r, w)) {
				om_kind err = om_make_constant(c, s->g, w, &find_pending(s, w)->t);
				if (err)
					return err;
			}
		}
	}
	for (int32_t i = 0; i < gs->n; i++) {
		om_node *n = gs->held[i];
		if (root(gs, i) != r || (n->flags & OM_NODE_DEAD))
			continue;
		n->flags |= OM_NODE_DEAD;
		(*changes)++;
		if (c->verbose >= 2)
			fprintf(stderr, "fold: %s '%s' (in a group of %d)\n", n->op, n->name, members);
	}
	return OM_OK;
}

static om_kind fold_groups(fold_state *s, int *changes)
{
	group_state *gs = malloc(sizeof *gs);
	if (!gs)
		return om_error(s->c->st, OM_ERR_NOMEM, NULL, "out of memory folding constants");
	gs->n = 0;
	link_groups(s, gs);
	om_kind err = OM_OK;
	for (int32_t i = 0; i < gs->n && !err; i++)
		if (root(gs, i) == i)
			err = fold_group(s, gs, i, changes);
	free(gs);
	return err;
}

om_kind om_pass_fold(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind err = OM_OK;
	fold_state s = {.c = c, .g = g, .pend = calloc(MAX_PENDING, sizeof(pending))};
	if (!s.pend)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory folding constants");
	om_graph_count_uses(g);
	for (int32_t i = 0; i < g->nnodes && !err; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !om_node_default_domain(n) ||
		    om_node_has(c->m, n, OM_OP_RANDOM) || om_node_has_subgraph(n))
			continue;
		if (fold_node(&s, n, &err)) {
			(*changes)++;
			if (c->verbose >= 2)
				fprintf(stderr, "fold: %s '%s'\n", n->op, n->name);
		}
	}
	if (!err && s.npend && !c->fold_cap)
		err = fold_groups(&s, changes);
	if (c->verbose && s.nqdq)
		fprintf(stderr, "fold: kept %d QuantizeLinear/DequantizeLinear node%s on constants "
			"(fold_qdq folds them)\n", s.nqdq, s.nqdq == 1 ? "" : "s");
	for (int32_t i = 0; i < s.npend; i++) {
		const pending *p = &s.pend[i];
		if (c->verbose == 1 && !(p->n->flags & OM_NODE_DEAD) && (!i || s.pend[i - 1].n != p->n))
			skipped(&s, p->n, p->out_bytes, p->dead_bytes); /* nor in a later fold */
		if (!p->borrowed)
			om_tensor_free(&s.pend[i].t);
	}
	if (c->verbose == 1 && s.nskip)
		fprintf(stderr, "fold: %d node%s not folded: %zu bytes of outputs would replace "
				"%zu (-vv names each)\n", s.nskip, s.nskip == 1 ? "" : "s",
			s.skip_out, s.skip_dead);
	free(s.pend);
	om_graph_compact(g);
	if (s.dropped)
		om_compact_initializers(g);
	return err;
}
