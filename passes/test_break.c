/*
 * test_break.c — the deliberately wrong rewrite behind om_simplify_with_break (a test's entry
 * point, include/omopt_testing.h).
 *
 * Tests of om_check and om_bisect need a pass that changes results: after the named pass has
 * run in the first round, the driver calls om_test_break, which gives the first Conv, MatMul or
 * Gemm node of the main graph (in its topological order) whose weight (input 1) is a float
 * initializer a copy of that weight with 1 added to the elements whose index has an odd number
 * of 1 bits (the Thue-Morse sequence: no period, so that no structure of the input, such as
 * LayerNorm's zero-mean rows or a following normalization, cancels the change). Other users
 * of the weight keep the original. Only the testing entry points reach this file.
 */
#include "omopt_testing.h"
#include "op.h"
#include "pass.h"
#include "registry.h"
#include "match.h"

om_kind om_simplify_with_break(om_model *m, const om_simplify_options *opt,
			       const char *break_pass, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return om_simplify_steps(m, opt, break_pass, NULL, NULL, st);
}

om_kind om_test_break(om_pass_ctx *c, om_graph *g, int *changes)
{
	const uint64_t codes = OM_OPC_BIT(OM_OPC_CONV) | OM_OPC_BIT(OM_OPC_MATMUL) |
			       OM_OPC_BIT(OM_OPC_GEMM);
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || n->nin < 2 ||
		    !(codes & OM_OPC_BIT(om_node_code(g->model, n))))
			continue;
		const om_tensor *w = om_value_const(g, n->in[1]);
		if (!w || w->dtype != OM_FLOAT || om_tensor_numel(w) < 1)
			continue;
		om_tensor *copy = om_model_tensor_copy(g->model, w);
		if (!copy)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		float *x = copy->data;
		for (int64_t k = 0; k < om_tensor_numel(copy); k++) {
			int bits = 0;
			for (uint64_t b = (uint64_t)k; b; b &= b - 1)
				bits++;
			x[k] += (float)(bits & 1);
		}
		om_value *v = om_new_constant(c, g, n->in[1]->name, copy);
		if (!v)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		n->in[1] = v;
		if (c->verbose)
			fprintf(stderr, "simplify: test_break_pass: node '%s' (%s) now reads '%s', its "
					"weight changed on purpose\n",
				n->name, n->op, v->name);
		*changes += 1;
		return OM_OK;
	}
	return om_error(c->st, OM_ERR_INVALID_INPUT, NULL,
			"test_break_pass: no Conv, MatMul or Gemm node of the main graph has a "
			"float initializer as its weight");
}
