/* rewrite_each.c — the per-node rewrite driver of the fusion passes, with use counts kept from
 * what each rewrite touched (see pass.h, om_rewrite_each). */
#include <stdlib.h>

#include "registry.h"
#include "pass.h"

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
