/* rewrite.c — the small graph edits the passes share: constants, use replacement, bypassing a
 * node while graph outputs keep their names. */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "uses.h"

const om_tensor *om_value_const(const om_graph *g, om_value *v)
{
	if (!v)
		return NULL;
	v = om_graph_resolve(g, v);
	if (!v || !v->init || (v->flags & OM_VALUE_GRAPH_INPUT) || (v->flags & OM_VALUE_OUTER))
		return NULL;
	return v->init;
}

bool om_bypass_node(om_pass_ctx *c, om_graph *g, om_node *n, om_value *src)
{
	om_value *out = n->out[0];
	if (!out || !src || out == src)
		return false;
	if (!(out->flags & OM_VALUE_GRAPH_OUTPUT)) {
		if (om_value_used_by_subgraph(c, g, out))
			return false;
		om_rewrite_touch(c, n);
		/* an outer value cannot replace a local one by pointer unless it is this graph's */
		om_uses_replace(c, g, out, src);
		n->flags |= OM_NODE_DEAD;
		return true;
	}
	/* out is a graph output: keep its name by renaming src's producer's output instead */
	om_node *p = src->producer;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) ||
	    (src->flags & (OM_VALUE_GRAPH_OUTPUT | OM_VALUE_GRAPH_INPUT | OM_VALUE_INITIALIZER |
			   OM_VALUE_OUTER)) ||
	    om_value_used_by_subgraph(c, g, src))
		return false;
	om_rewrite_touch(c, n);
	om_node_set_output(p, src->producer_slot, out);
	src->producer = NULL;
	src->producer_slot = -1;
	n->flags |= OM_NODE_DEAD;
	om_uses_replace(c, g, src, out);
	n->in[0] = NULL; /* n is dead; keep it from naming src */
	return true;
}

/* An initializer list this simplify run allocated, and its room. */
struct om_inits_cap {
	const om_graph *g;
	om_value **list;
	int32_t cap;
};

/* Appends v to g's initializers, growing the list geometrically (arena memory is not freed,
 * so growing by one would leave a quadratic trail). */
static om_kind add_init(om_pass_ctx *c, om_graph *g, om_value *v)
{
	struct om_inits_cap *e = NULL;
	for (int32_t i = 0; i < c->ncaps; i++)
		if (c->caps[i].g == g)
			e = &c->caps[i];
	if (!e) {
		struct om_inits_cap *nc = realloc(c->caps, sizeof *nc * (size_t)(c->ncaps + 1));
		if (!nc)
			return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory");
		c->caps = nc;
		e = &c->caps[c->ncaps++];
		*e = (struct om_inits_cap){g, NULL, 0};
	}
	if (e->list != g->inits || g->ninits >= e->cap) {
		int32_t cap = g->ninits < 8 ? 16 : 2 * g->ninits;
		om_value **na = om_arena_alloc(g->model->arena, sizeof *na * (size_t)cap);
		if (!na)
			return om_error(c->st, OM_ERR_NOMEM, NULL,
					"out of memory for an initializer");
		if (g->ninits)
			memcpy(na, g->inits, sizeof *na * (size_t)g->ninits);
		g->inits = e->list = na;
		e->cap = cap;
	}
	g->inits[g->ninits++] = v;
	return OM_OK;
}

om_kind om_make_constant(om_pass_ctx *c, om_graph *g, om_value *v, const om_tensor *t)
{
	om_tensor *copy = om_model_tensor_copy(g->model, t);
	if (!copy)
		return om_error(c->st, OM_ERR_NOMEM, NULL, "out of memory for a folded constant");
	bool listed = (v->flags & OM_VALUE_INITIALIZER) != 0;
	v->init = copy;
	v->init_proto = NULL;
	v->flags |= OM_VALUE_INITIALIZER;
	v->producer = NULL;
	v->producer_slot = -1;
	if (v->type.kind != OM_TYPE_TENSOR || v->type.rank != t->rank)
		om_type_from_tensor(g->model, &v->type, t);
	return listed ? OM_OK : add_init(c, g, v);
}

om_kind om_node_to_constant(om_graph *g, om_node *n, const om_tensor *t, om_status *st)
{
	om_arena *a = g->model->arena;
	om_tensor *copy = om_model_tensor_copy(g->model, t);
	om_attr *attr = om_arena_alloc(a, sizeof *attr);
	const char *op = om_arena_strdup(a, "Constant"), *name = om_arena_strdup(a, "value");
	if (!copy || !attr || !op || !name)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory for a constant");
	attr->name = name;
	attr->type = OM_ATTR_TENSOR;
	attr->t = copy;
	n->op = op;
	n->domain = "";
	n->overload = "";
	n->proto = NULL;
	n->attrs = attr;
	n->nattr = 1;
	n->nin = 0;
	return OM_OK;
}

om_value *om_new_constant(om_pass_ctx *c, om_graph *g, const char *hint, const om_tensor *t)
{
	om_value *v = om_graph_fresh_value(g, hint);
	if (!v)
		return NULL;
	om_type_from_tensor(g->model, &v->type, t);
	return om_make_constant(c, g, v, t) ? NULL : v;
}

int32_t om_node_axes(const om_graph *g, const om_node *n, int64_t opset_input, int32_t slot,
		     int32_t rank, int64_t *out)
{
	int64_t raw[OM_MAX_RANK * 2];
	int64_t cnt = 0;
	int64_t opset = om_model_opset(g->model, n->domain);
	if (opset < opset_input) {
		const int64_t *a = om_attr_ints(n, "axes", &cnt);
		if (cnt > OM_MAX_RANK * 2)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			raw[i] = a[i];
	} else if (slot < n->nin && n->in[slot]) {
		const om_tensor *t = om_value_const(g, n->in[slot]);
		if (!t || (t->dtype != OM_INT64 && t->dtype != OM_INT32))
			return -1;
		cnt = om_tensor_numel(t);
		if (cnt < 0 || cnt > OM_MAX_RANK * 2)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			raw[i] = t->dtype == OM_INT64 ? ((const int64_t *)t->data)[i]
						      : ((const int32_t *)t->data)[i];
	}
	for (int64_t i = 0; i < cnt; i++) {
		int64_t a = raw[i] < 0 ? raw[i] + rank : raw[i];
		if (a < 0 || a >= rank)
			return -1;
		/* insertion sort; duplicates are invalid */
		int64_t j = i;
		while (j > 0 && out[j - 1] > a) {
			out[j] = out[j - 1];
			j--;
		}
		if (j > 0 && out[j - 1] == a)
			return -1;
		out[j] = a;
	}
	return (int32_t)cnt;
}

static bool selected(const om_model *m, const om_node *n, uint64_t codes)
{
	if (!codes)
		return om_node_default_domain(n);
	const enum om_opcode k = om_node_code(m, n);
	return k != OM_OPC_NONE && (codes & OM_OPC_BIT(k));
}

#ifndef OM_CHECK_USE_COUNTS
#define OM_CHECK_USE_COUNTS OM_VERIFY_PASSES
#endif

void om_rewrite_touch(om_pass_ctx *c, om_node *n)
{
	if (!c->touched.g || n->graph != c->touched.g)
		return;
	const om_graph *g = c->touched.g;
	for (int32_t i = c->touched.n0; i < g->nnodes; i++)
		if (g->nodes[i] == n)
			return; /* appended by this rewrite: counted when it ends */
	for (int32_t i = 0; i < c->touched.n; i++)
		if (c->touched.nodes[i] == n)
			return;
	if (c->touched.n == c->touched.cap) {
		int32_t cap = c->touched.cap ? 2 * c->touched.cap : 16;
		om_node **nn = realloc(c->touched.nodes, sizeof *nn * (size_t)cap);
		if (!nn) {
			c->touched.nomem = true;
			return;
		}
		c->touched.nodes = nn;
		c->touched.cap = cap;
	}
	c->touched.nodes[c->touched.n++] = n;
	if (!(n->flags & OM_NODE_DEAD))
		om_node_add_uses(n->graph, n, -1);
}

/* The end of one rewrite: the uses of the touched and the appended nodes that are live. */
static void settle(om_pass_ctx *c, om_graph *g)
{
	if (c->touched.nomem) {
		c->recounts++;
		om_graph_count_uses(g);
	} else {
		for (int32_t i = 0; i < c->touched.n; i++)
			if (!(c->touched.nodes[i]->flags & OM_NODE_DEAD))
				om_node_add_uses(g, c->touched.nodes[i], 1);
		for (int32_t i = c->touched.n0; i < g->nnodes; i++)
			if (!(g->nodes[i]->flags & OM_NODE_DEAD))
				om_node_add_uses(g, g->nodes[i], 1);
	}
	c->touched.n = 0;
	c->touched.nomem = false;
	c->touched.n0 = g->nnodes;
}

/* Debug builds: the kept counts against a recount. */
static om_kind check_counts(om_pass_ctx *c, om_graph *g, const om_node *n)
{
	if (!OM_CHECK_USE_COUNTS)
		return OM_OK;
	size_t k = 0, nv = HASH_COUNT(g->values);
	int32_t *kept = malloc(sizeof *kept * (nv ? nv : 1));
	if (!kept)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
	om_value *v, *tmp;
	HASH_ITER(hh, g->values, v, tmp) kept[k++] = v->nuses;
	om_graph_count_uses(g);
	k = 0;
	const om_value *bad = NULL;
	HASH_ITER(hh, g->values, v, tmp)
		if (kept[k++] != v->nuses && !bad)
			bad = v;
	free(kept);
	return bad ? om_error(c->st, OM_ERR_INTERNAL, n, "use count of '%s' wrong after a "
			      "rewrite (a change not passed to om_rewrite_touch)", bad->name)
		   : OM_OK;
}

om_kind om_rewrite_each(om_pass_ctx *c, om_graph *g, uint64_t codes, om_node_rewrite_fn fn,
			int *changes)
{
	om_kind rc = OM_OK;
	bool counted = false; /* the uses are counted at the first selected node: a graph
			       * with none (most fusions on most graphs) costs one sweep */
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || !selected(c->m, n, codes))
			continue;
		if (!counted) {
			c->recounts++;
			om_graph_count_uses(g);
			c->touched.g = g;
			c->touched.n = 0;
			c->touched.n0 = g->nnodes;
			c->touched.nomem = false;
			counted = true;
		}
		bool done = false;
		rc = fn(c, g, n, &done);
		if (rc)
			break;
		settle(c, g);
		if (done) {
			(*changes)++;
			rc = check_counts(c, g, n);
		}
	}
	c->touched.g = NULL;
	free(c->touched.nodes);
	c->touched.nodes = NULL;
	c->touched.n = c->touched.cap = 0;
	if (rc)
		return rc;
	om_graph_compact(g);
	return OM_OK;
}

om_kind om_pass_ctx_open(om_pass_ctx *c, om_model *m, const om_simplify_options *opt,
			 om_status *st)
{
	*c = (om_pass_ctx){.m = m, .scratch = om_arena_new(), .st = st};
	if (opt) {
		c->verbose = opt->verbose;
		c->fold_max = opt->fold_max_bytes;
		c->fold_cap = opt->fold_max_bytes;
		c->fold_qdq = opt->fold_qdq;
	}
	if (!c->fold_max)
		c->fold_max = (size_t)1 << 20;
	return c->scratch ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
}

void om_pass_ctx_close(om_pass_ctx *c)
{
	om_uses_close(c);
	om_outer_refs_reset(c);
	HASH_CLEAR(hh, c->info);
	HASH_CLEAR(hh, c->hashes); /* the entries are in scratch */
	om_arena_free(c->scratch);
	free(c->caps);
	c->info = NULL, c->hashes = NULL, c->scratch = NULL, c->caps = NULL;
}
