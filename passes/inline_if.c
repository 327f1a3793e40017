/*
 * inline_if.c — the inline_if pass: an If whose condition is a constant is replaced by the
 * nodes of the branch it takes. Branch values move into the enclosing graph under their own
 * names when those are free there, else under fresh ones (a branch with nested subgraphs is
 * only inlined when no name changes, since those refer to its values by name). The If's
 * output values stay: the branch node that produced each one now writes it, or an Identity
 * does when the branch output is not produced inside the branch.
 */
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "uses.h"
#include "match.h"
#include "value_map.h"

static bool constant_condition(const om_graph *g, const om_node *n, bool *cond)
{
	const om_tensor *t = n->nin == 1 ? om_value_const(g, n->in[0]) : NULL;
	if (!t || t->dtype != OM_BOOL || om_tensor_numel(t) != 1 || !t->data)
		return false;
	*cond = *(const uint8_t *)t->data != 0;
	return true;
}

static bool names_free(const om_graph *g, const om_graph *b)
{
	const om_value *v, *tmp;
	HASH_ITER(hh, b->values, v, tmp)
		if (!(v->flags & OM_VALUE_OUTER) && om_graph_find(g, v->name))
			return false;
	return true;
}

static om_kind inline_branch(om_pass_ctx *c, om_graph *g, om_node *n, om_graph *b)
{
	if (b->noutputs != n->nout)
		return OM_OK;
	if (om_graph_has_subgraph(b) && !names_free(g, b))
		return OM_OK;
	om_vmap *map = NULL;
	bool nomem = false;
	om_kind rc = OM_OK;
	for (int32_t i = 0; i < b->ninits && !rc; i++) {
		om_value *to = om_vmap_get(g, &map, b->inits[i]);
		if (!to)
			nomem = true;
		else if (b->inits[i]->init)
			rc = om_make_constant(c, g, to, b->inits[i]->init);
	}
	for (int32_t i = 0; i < b->nnodes && !rc && !nomem; i++) {
		const om_node *bn = b->nodes[i];
		om_node *nn = om_graph_add_node_like(g, bn, bn->nin, bn->nout);
		if (!nn) {
			nomem = true;
			break;
		}
		for (int32_t a = 0; a < nn->nattr; a++) {
			if (nn->attrs[a].g)
				nn->attrs[a].g->parent = g;
			for (int64_t k = 0; nn->attrs[a].graphs && k < nn->attrs[a].n; k++)
				nn->attrs[a].graphs[k]->parent = g;
		}
		for (int32_t k = 0; k < bn->nin; k++)
			if (bn->in[k] && !(nn->in[k] = om_vmap_get(g, &map, bn->in[k])))
				nomem = true;
		for (int32_t k = 0; k < bn->nout; k++) {
			om_value *v = bn->out[k] ? om_vmap_get(g, &map, bn->out[k]) : NULL;
			if (bn->out[k] && !v)
				nomem = true;
			om_node_set_output(nn, k, v);
		}
		om_uses_add_node(c, nn);
	}
	/* the If's outputs: the moved producer writes them, else an Identity */
	for (int32_t o = 0; o < n->nout && !rc && !nomem; o++) {
		om_value *want = n->out[o];
		if (!want)
			continue;
		om_value *got = om_vmap_get(g, &map, b->outputs[o]);
		if (!got) {
			nomem = true;
			break;
		}
		bool twice = false;
		for (int32_t k = 0; k < o; k++)
			twice |= b->outputs[k] == b->outputs[o];
		om_node *p = got->producer;
		if (p && p->graph == g && !twice && !(got->flags & OM_VALUE_GRAPH_OUTPUT)) {
			om_node_set_output(p, got->producer_slot, want);
			got->producer = NULL;
			om_uses_replace(c, g, got, want);
		} else {
			om_node *id = om_graph_add_node(g, "Identity", "", want->name, 1, 1);
			if (!id) {
				nomem = true;
				break;
			}
			om_uses_set_input(c, id, 0, got);
			om_node_set_output(id, 0, want);
		}
	}
	om_vmap_free(&map);
	if (nomem)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory inlining a branch");
	if (rc)
		return rc;
	n->flags |= OM_NODE_DEAD;
	return OM_OK;
}

om_kind om_pass_inline_if(om_pass_ctx *c, om_graph *g, int *changes)
{
	/* the branch's nodes are appended: the loop reaches them (and the Ifs among them) after
	 * the others; the graph is sorted once at the end, not after every inline */
	int inlined = 0;
	om_kind rc = OM_OK;
	bool indexed = false; /* the consumer index is built at the first If to inline */
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		om_node *n = g->nodes[i];
		bool cond;
		if ((n->flags & OM_NODE_DEAD) || om_node_code(c->m, n) != OM_OPC_IF ||
		    !constant_condition(g, n, &cond))
			continue;
		const om_attr *a = om_node_attr(n, cond ? "then_branch" : "else_branch");
		if (!a || !a->g)
			continue;
		if (!indexed)
			om_uses_open(c, g);
		indexed = true;
		int32_t before = g->nnodes;
		rc = inline_branch(c, g, n, a->g);
		if (!rc && (g->nnodes != before || (n->flags & OM_NODE_DEAD)))
			inlined++;
	}
	if (indexed)
		om_uses_close(c);
	*changes += inlined;
	if (rc || !inlined)
		return rc;
	om_graph_compact(g);
	return om_graph_toposort(g, c->st);
}
