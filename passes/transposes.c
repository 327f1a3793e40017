/* transposes.c — the fuse_transposes pass: Transpose(Transpose(x, p), q) becomes one Transpose
 * with the composed permutation, and a Transpose whose permutation is the identity goes. */
#include <string.h>

#include "infer.h"
#include "registry.h"
#include "uses.h"

/* The permutation of Transpose n over an input of rank r (default: reversed). */
static bool perm_of(const om_node *n, int32_t r, int64_t *perm)
{
	int64_t k;
	const int64_t *p = om_attr_ints(n, "perm", &k);
	if (p && k != r)
		return false;
	bool seen[OM_MAX_RANK] = {0};
	for (int32_t i = 0; i < r; i++) {
		perm[i] = p ? p[i] : r - 1 - i;
		if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
			return false;
		seen[perm[i]] = true;
	}
	return true;
}

static bool is_identity(const int64_t *perm, int32_t r)
{
	for (int32_t i = 0; i < r; i++)
		if (perm[i] != i)
			return false;
	return true;
}

static bool is_transpose(const om_graph *g, const om_node *n)
{
	return n && n->graph == g && !(n->flags & OM_NODE_DEAD) &&
	       om_node_code(g->model, n) == OM_OPC_TRANSPOSE && n->nin >= 1 && n->in[0];
}

static bool fuse(om_pass_ctx *c, om_graph *g, om_node *n)
{
	const om_vinfo *vi = om_vinfo_get(c, g, n->in[0]);
	if (!om_vi_ranked(vi))
		return false;
	int32_t r = vi->type.rank;
	int64_t q[OM_MAX_RANK], p[OM_MAX_RANK];
	if (!perm_of(n, r, q))
		return false;
	if (is_identity(q, r))
		return om_bypass_node(c, g, n, n->in[0]);
	om_node *prev = n->in[0]->producer;
	if (!is_transpose(g, prev) || !perm_of(prev, r, p))
		return false;
	/* out[i] = mid[q[i]] = x[p[q[i]]] */
	int64_t composed[OM_MAX_RANK];
	for (int32_t i = 0; i < r; i++)
		composed[i] = p[q[i]];
	if (is_identity(composed, r))
		return om_bypass_node(c, g, n, prev->in[0]);
	om_attr *a = om_node_set_attr(n, "perm", OM_ATTR_INTS);
	int64_t *ints = a ? om_arena_memdup(g->model->arena, composed, sizeof composed) : NULL;
	if (!ints)
		return false;
	a->n = r;
	a->ints = ints;
	om_uses_set_input(c, n, 0, prev->in[0]);
	return true;
}

om_kind om_pass_transposes(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_uses_open(c, g);
	for (int32_t i = 0; i < g->nnodes; i++)
		if (is_transpose(g, g->nodes[i]) && fuse(c, g, g->nodes[i]))
			(*changes)++;
	om_uses_close(c);
	om_graph_compact(g);
	return OM_OK;
}
