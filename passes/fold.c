/*
 * fold.c — the fold_constants pass: a node whose inputs are all constants is evaluated with
 * its op row's kernel (om_eval_node, the executor's own semantics) and its outputs become
 * initializers, when each fits the size budget. Constant nodes become initializers.
 * Not folded: other domains, ops with randomness, control flow. A single-output node that
 * produces a graph output becomes a Constant node (the name stays produced by a node).
 */
#include <stdio.h>
#include <string.h>

#include "eval.h"
#include "pass.h"

enum { MAX_IO = 64 };

static bool has_subgraph(const om_node *n)
{
	for (int32_t a = 0; a < n->nattr; a++)
		if (n->attrs[a].type == OM_ATTR_GRAPH || n->attrs[a].type == OM_ATTR_GRAPHS)
			return true;
	return false;
}

static bool writes_graph_output(const om_node *n)
{
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && (n->out[o]->flags & OM_VALUE_GRAPH_OUTPUT))
			return true;
	return false;
}

/* Evaluates n and turns its outputs into initializers. False when it was left alone. */
static bool fold_node(om_pass_ctx *c, om_graph *g, om_node *n, om_kind *err)
{
	const om_tensor *in[MAX_IO];
	om_tensor out[MAX_IO];
	if (n->nin > MAX_IO || n->nout > MAX_IO || n->nout == 0)
		return false;
	for (int32_t i = 0; i < n->nin; i++) {
		in[i] = NULL;
		if (n->in[i] && !(in[i] = om_value_const(g, n->in[i])))
			return false;
	}
	bool is_constant = !strcmp(n->op, "Constant");
	bool to_node = writes_graph_output(n);
	if ((n->nin == 0 && !is_constant) || (to_node && (is_constant || n->nout != 1)))
		return false;
	const om_tensor *value = is_constant ? om_attr_tensor(n, "value") : NULL;
	if (value && n->out[0]) {
		if ((*err = om_make_constant(c, g, n->out[0], value)))
			return false;
		n->flags |= OM_NODE_DEAD;
		return true;
	}
	int64_t opset = om_model_opset(c->m, n->domain);
	if (om_infer_node(n, opset, in, out, NULL) != OM_OK)
		return false;
	for (int32_t o = 0; o < n->nout; o++)
		if (n->out[o] && out[o].nbytes > c->fold_max && !is_constant)
			return false;
	if (om_eval_node(n, opset, in, out, NULL) != OM_OK)
		return false; /* best effort: the node stays */
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

om_kind om_pass_fold(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind err = OM_OK;
	for (int32_t i = 0; i < g->nnodes && !err; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || (n->domain[0] && strcmp(n->domain, "ai.onnx")) ||
		    om_node_has(c->m, n, OM_OP_RANDOM) || has_subgraph(n))
			continue;
		if (fold_node(c, g, n, &err)) {
			(*changes)++;
			if (c->verbose >= 2)
				fprintf(stderr, "fold: %s '%s'\n", n->op, n->name);
		}
	}
	om_graph_compact(g);
	return err;
}
