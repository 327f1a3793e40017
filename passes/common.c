/*
 * common.c — the merge_common pass: a node that computes what an earlier node computes (same
 * op, inputs and attributes) is replaced by it, and so is a value whose plan-time value equals
 * an earlier value's element by element (numbers and symbols: the same run-time tensor, e.g.
 * Shape(a)[1] and Shape(b)[1] when both are the extent `seq`). The later node dies.
 * Initializers with the same element type, shape and bytes are merged too (exporters share
 * weights through Identity nodes; folding those must not leave two copies): candidates are
 * found by a hash of their type, shape and a bounded sample of their bytes, then compared whole
 * (up to COMPARE_MAX bytes; larger ones merge when they are the same bytes).
 * Not merged: other domains, randomness, QuantizeLinear/DequantizeLinear (a quantized model
 * keeps one QDQ pair per consumer as exported), subgraphs, graph outputs.
 */
#include <stdlib.h>
#include <string.h>

#include "infer.h"
#include "registry.h"
#include "uses.h"

static uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h;
}

static uint64_t hash_str(uint64_t h, const char *s)
{
	while (*s)
		h = mix(h, (unsigned char)*s++);
	return mix(h, 0);
}

static uint64_t node_hash(const om_node *n)
{
	uint64_t h = hash_str(hash_str(1469598103934665603ull, n->op), n->domain);
	h = mix(h, (uint64_t)n->nin);
	for (int32_t i = 0; i < n->nin; i++)
		h = mix(h, (uint64_t)(uintptr_t)n->in[i]);
	return mix(h, (uint64_t)n->nout);
}

/* Payloads compared byte for byte at most: two larger tensors are the same only when they are
 * the same bytes (one mapped weight named twice). Reading two sparse 1 TiB external files
 * whole to find them equal would cost their size; such a merge is left undone. */
enum { COMPARE_MAX = 1 << 30 };

static bool same_tensor(const om_tensor *a, const om_tensor *b)
{
	if (!a || !b || a->dtype != b->dtype || a->rank != b->rank || a->nbytes != b->nbytes ||
	    a->dtype == OM_STRING)
		return false;
	for (int32_t i = 0; i < a->rank; i++)
		if (a->dims[i] != b->dims[i])
			return false;
	/* one payload (two initializers naming the same external bytes) is not read */
	return !a->nbytes || (a->data && b->data &&
			      (a->data == b->data || (a->nbytes <= COMPARE_MAX &&
						      !memcmp(a->data, b->data, a->nbytes))));
}

static bool same_attr(const om_attr *a, const om_attr *b)
{
	if (a->type != b->type || a->ref_attr_name || b->ref_attr_name)
		return false;
	switch (a->type) {
	case OM_ATTR_INT: return a->i == b->i;
	case OM_ATTR_FLOAT: return !memcmp(&a->f, &b->f, sizeof a->f);
	case OM_ATTR_STRING:
		return a->s.len == b->s.len && (!a->s.len || !memcmp(a->s.ptr, b->s.ptr,
								     (size_t)a->s.len));
	case OM_ATTR_INTS:
		return a->n == b->n && (!a->n || !memcmp(a->ints, b->ints, sizeof(int64_t) *
									  (size_t)a->n));
	case OM_ATTR_FLOATS:
		return a->n == b->n && (!a->n || !memcmp(a->floats, b->floats, sizeof(float) *
									       (size_t)a->n));
	case OM_ATTR_STRINGS:
		if (a->n != b->n)
			return false;
		for (int64_t i = 0; i < a->n; i++)
			if (a->strings[i].len != b->strings[i].len ||
			    (a->strings[i].len && memcmp(a->strings[i].ptr, b->strings[i].ptr,
							 (size_t)a->strings[i].len)))
				return false;
		return true;
	case OM_ATTR_TENSOR: return same_tensor(a->t, b->t);
	default: return false; /* graphs, sparse tensors, type protos: never merged */
	}
}

static bool same_node(const om_node *a, const om_node *b)
{
	if (strcmp(a->op, b->op) || strcmp(a->domain, b->domain) || a->nin != b->nin ||
	    a->nout != b->nout || a->nattr != b->nattr)
		return false;
	for (int32_t i = 0; i < a->nin; i++)
		if (a->in[i] != b->in[i])
			return false;
	for (int32_t o = 0; o < a->nout; o++)
		if (!a->out[o] && b->out[o])
			return false;
	for (int32_t i = 0; i < a->nattr; i++) {
		const om_attr *y = om_node_attr(b, a->attrs[i].name);
		if (!y || !same_attr(&a->attrs[i], y))
			return false;
	}
	return true;
}

static bool mergeable(om_pass_ctx *c, const om_graph *g, const om_node *n)
{
	if ((n->flags & OM_NODE_DEAD) || !om_node_default_domain(n) ||
	    om_node_has(c->m, n, OM_OP_RANDOM) || om_node_has(c->m, n, OM_OP_QDQ) ||
	    om_node_has_subgraph(n))
		return false;
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && ((n->out[o]->flags & OM_VALUE_GRAPH_OUTPUT) ||
				  om_value_used_by_subgraph(c, g, n->out[o])))
			return false;
	return true;
}

/* later's outputs are replaced by earlier's; later dies */
static void merge_into(om_pass_ctx *c, om_graph *g, om_node *later, om_node *earlier)
{
	for (int32_t o = 0; o < later->nout; o++)
		if (later->out[o])
			om_uses_replace(c, g, later->out[o], earlier->out[o]);
	later->flags |= OM_NODE_DEAD;
}

/* Plan-time values that are fully known (numbers and symbols) and equal. */
static bool same_pv(const om_vinfo *a, const om_vinfo *b)
{
	int64_t da[OM_MAX_RANK], db[OM_MAX_RANK];
	if (a->type.elem != b->type.elem || a->npv != b->npv || a->pvrank != b->pvrank ||
	    !om_pv_dims(a, da) || !om_pv_dims(b, db) ||
	    memcmp(da, db, sizeof(int64_t) * (size_t)(a->pvrank ? a->pvrank : 1)))
		return false;
	for (int32_t i = 0; i < a->npv; i++) {
		om_pe x = a->pv[i], y = b->pv[i];
		if (x.kind != y.kind || x.kind == OM_PE_UNK)
			return false;
		if (x.kind == OM_PE_NUM ? x.num != y.num : strcmp(x.sym, y.sym))
			return false;
	}
	return true;
}

static uint64_t pv_hash(const om_vinfo *v)
{
	uint64_t h = mix(mix((uint64_t)v->type.elem, (uint64_t)v->npv), (uint64_t)v->pvrank);
	for (int32_t i = 0; i < v->npv; i++)
		h = v->pv[i].kind == OM_PE_NUM ? mix(h, (uint64_t)v->pv[i].num)
					       : hash_str(h, v->pv[i].sym ? v->pv[i].sym : "");
	return h;
}

typedef struct slot {
	uint64_t h;
	om_node *n;
	const om_vinfo *pv; /* for the plan-time value table */
} slot;

static slot *find(slot *tab, size_t cap, uint64_t h, size_t *at)
{
	size_t i = (size_t)h & (cap - 1);
	while (tab[i].n && tab[i].h != h)
		i = (i + 1) & (cap - 1);
	*at = i;
	return tab[i].n ? &tab[i] : NULL;
}

enum {
	SAMPLE_LEN = 512,    /* bytes of each sample of a large payload */
	SAMPLES = 8,         /* samples, the first at the start and the last at the end */
	FULL_HASH_MAX = SAMPLE_LEN * SAMPLES, /* payloads up to this size are hashed whole */
};

static uint64_t hash_bytes(uint64_t h, const unsigned char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, b + i, sizeof w);
		h = mix(h, w);
	}
	for (; i < n; i++)
		h = mix(h, b[i]);
	return h;
}

/* Element type, shape, size and a bounded sample of the payload: all of it up to FULL_HASH_MAX
 * bytes, else SAMPLES runs of SAMPLE_LEN bytes at fixed offsets from the start to the end. A
 * large payload (a mapped external file of any size) costs 4 KB of reads here; equal hashes are
 * then compared byte for byte, which stops at the first difference. */
static uint64_t tensor_hash(const om_tensor *t)
{
	uint64_t h = mix(mix(1469598103934665603ull, (uint64_t)t->dtype), (uint64_t)t->rank);
	for (int32_t i = 0; i < t->rank; i++)
		h = mix(h, (uint64_t)t->dims[i]);
	h = mix(h, (uint64_t)t->nbytes);
	const unsigned char *b = t->data;
	if (!b || t->nbytes <= FULL_HASH_MAX)
		return b ? hash_bytes(h, b, t->nbytes) : h;
	const size_t span = t->nbytes - SAMPLE_LEN;
	for (size_t k = 0; k < SAMPLES; k++) {
		/* span / (SAMPLES - 1) * k + the remainder's share, without overflow */
		const size_t q = span / (SAMPLES - 1), r = span % (SAMPLES - 1);
		h = hash_bytes(h, b + q * k + r * k / (SAMPLES - 1), SAMPLE_LEN);
	}
	return h;
}

/* tensor_hash(t), computed once per tensor in the pipeline (om_hash_memo). A memo entry that
 * cannot be stored only costs a hash again; a wrong hash could only miss a merge, since
 * candidates are compared byte for byte. */
static uint64_t payload_hash(om_pass_ctx *c, const om_tensor *t)
{
	om_hash_memo *e;
	HASH_FIND_PTR(c->hashes, &t, e);
	if (e)
		return e->h;
	c->hashed++;
	const uint64_t h = tensor_hash(t);
	e = om_arena_alloc(c->scratch, sizeof *e);
	if (e) {
		*e = (om_hash_memo){.t = t, .h = h};
		HASH_ADD_PTR(c->hashes, t, e);
	}
	return h;
}

/* Uses of a later initializer equal to an earlier one read the earlier one; dead code
 * elimination then drops the later one. Graph inputs (initializers with a default), graph
 * outputs and names that subgraphs refer to keep their own value. */
static om_kind merge_initializers(om_pass_ctx *c, om_graph *g, int *changes)
{
	size_t cap = 16;
	while (cap < (size_t)g->ninits * 2 + 16)
		cap *= 2;
	struct islot {
		uint64_t h;
		om_value *v;
	} *tab = calloc(cap, sizeof *tab);
	if (!tab)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory merging initializers");
	for (int32_t i = 0; i < g->ninits; i++) {
		om_value *v = g->inits[i];
		if (!v->init || v->producer || !(v->flags & OM_VALUE_INITIALIZER) ||
		    v->init->dtype == OM_STRING ||
		    (v->flags & (OM_VALUE_GRAPH_INPUT | OM_VALUE_GRAPH_OUTPUT)) ||
		    om_value_used_by_subgraph(c, g, v))
			continue;
		const uint64_t h = payload_hash(c, v->init);
		size_t at = (size_t)h & (cap - 1);
		while (tab[at].v && !(tab[at].h == h && same_tensor(tab[at].v->init, v->init)))
			at = (at + 1) & (cap - 1);
		if (!tab[at].v) {
			tab[at] = (struct islot){h, v};
			continue;
		}
		om_uses_replace(c, g, v, tab[at].v);
		(*changes)++;
	}
	free(tab);
	return OM_OK;
}

om_kind om_pass_common(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_uses_open(c, g);
	om_kind rc = merge_initializers(c, g, changes);
	if (rc) {
		om_uses_close(c);
		return rc;
	}
	size_t cap = 16;
	while (cap < (size_t)g->nnodes * 4 + 16)
		cap *= 2;
	slot *nodes = calloc(cap, sizeof *nodes), *vals = calloc(cap, sizeof *vals);
	if (!nodes || !vals) {
		free(nodes), free(vals);
		om_uses_close(c);
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory merging nodes");
	}
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (!mergeable(c, g, n))
			continue;
		/* same op on the same inputs; hash collisions probe on while the hash differs,
		 * and a same-hash different node is simply not merged */
		size_t at_node, at;
		const uint64_t hn = node_hash(n);
		slot *s = find(nodes, cap, hn, &at_node);
		if (s && same_node(n, s->n)) {
			merge_into(c, g, n, s->n);
			(*changes)++;
			continue;
		}
		/* the same plan-time value: merged into an earlier node, n must not stay in the
		 * node table (a later twin of n would be merged into a dead node) */
		const om_vinfo *v = n->nout == 1 && n->out[0] ? om_vinfo_get(c, g, n->out[0]) : NULL;
		bool full = v && v->npv >= 1 && v->pv;
		for (int32_t k = 0; full && k < v->npv; k++)
			full = v->pv[k].kind != OM_PE_UNK;
		if (full) {
			const uint64_t hv = pv_hash(v);
			slot *sv = find(vals, cap, hv, &at);
			if (sv && same_pv(v, sv->pv)) {
				merge_into(c, g, n, sv->n);
				(*changes)++;
				continue;
			}
			if (!sv)
				vals[at] = (slot){hv, n, v};
		}
		if (!s)
			nodes[at_node] = (slot){hn, n, NULL};
	}
	free(nodes);
	free(vals);
	om_uses_close(c);
	om_graph_compact(g);
	/* the node kept may stand after a reader of the node merged into it */
	return *changes ? om_graph_toposort(g, c->st) : OM_OK;
}
