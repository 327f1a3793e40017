/*
 * fuse_skip_layernorm.c — the fuse_skip_layernorm pass of om_optimize: the residual sum before
 * a LayerNormalization,
 *
 *     s = Add(r, t)   [t = Add(y, bias), bias a constant 1-D of the last dim, t private]
 *     z = LayerNormalization(s, gamma, beta)   (last axis, float stash, only output Y)
 *
 * becomes ONNX Runtime's com.microsoft SkipLayerNormalization(r, t | y, gamma, beta[, bias])
 * with the LayerNormalization's epsilon. When s has other readers (the residual stream) the
 * fused node also writes s as its 4th output, input_skip_bias_sum; those readers must come
 * after the LayerNormalization. r, t (y) and s are float of one shape of rank 2 or 3 (ONNX
 * Runtime's contract), gamma and beta constant 1-D of the last dim. The kernel adds
 * r + (y + bias) in float: the bits of the Adds.
 */
#include <string.h>

#include "match.h"

/* True when v's type is float with x's rank and dims (numbers or the same symbols) */
static bool same_shape(om_pass_ctx *c, const om_graph *g, om_value *v, const om_type *x)
{
	const om_type *t = om_match_type(c, g, v);
	if (!t || t->elem != OM_FLOAT || t->rank != x->rank)
		return false;
	for (int32_t d = 0; d < t->rank; d++) {
		const om_dim a = t->dims[d], b = x->dims[d];
		if (om_dim_known(a) ? a.value != b.value
				    : !a.param || !b.param || strcmp(a.param, b.param))
			return false;
	}
	return true;
}

/* A constant float 1-D of h elements */
static bool vec_of(const om_graph *g, om_value *v, int64_t h)
{
	const om_tensor *t = v ? om_value_const(g, v) : NULL;
	return t && t->dtype == OM_FLOAT && t->rank == 1 && om_match_vector(t, h);
}

/* Every reader of v other than ln comes after ln in g's order */
static bool readers_after(const om_graph *g, const om_value *v, const om_node *ln)
{
	bool seen = false;
	for (int32_t i = 0; i < g->nnodes; i++) {
		const om_node *n = g->nodes[i];
		if (n == ln) {
			seen = true;
			continue;
		}
		if (n->flags & OM_NODE_DEAD)
			continue;
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k] == v && !seen)
				return false;
	}
	return true;
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *ln, bool *done)
{
	*done = false;
	om_value *s = ln->nin >= 3 ? ln->in[0] : NULL;
	if (!s || ln->nin != 3 || !ln->in[1] || !ln->in[2] || ln->nout != 1 || !ln->out[0] ||
	    om_node_attr(ln, "stash_type") ||
	    !om_match_runnable(c->m, OM_MS_DOMAIN, "SkipLayerNormalization"))
		return OM_OK;
	const om_type *xt = om_match_type(c, g, s);
	if (!xt || xt->elem != OM_FLOAT || (xt->rank != 2 && xt->rank != 3))
		return OM_OK;
	const int64_t axis = om_attr_int(ln, "axis", -1), h = xt->dims[xt->rank - 1].value;
	if ((axis != -1 && axis != xt->rank - 1) || h < 1 || !vec_of(g, ln->in[1], h) ||
	    !vec_of(g, ln->in[2], h))
		return OM_OK;
	om_node *add = om_match_producer(g, s, OM_OPC_ADD);
	if (!add || add->nin != 2 || add->nout != 1 || !same_shape(c, g, add->in[0], xt) ||
	    !same_shape(c, g, add->in[1], xt))
		return OM_OK;
	const bool keep_sum = !om_match_private(c, g, s, 1);
	if (keep_sum && (om_value_used_by_subgraph(c, g, s) || !readers_after(g, s, ln)))
		return OM_OK;
	om_value *in[5] = {add->in[0], add->in[1], ln->in[1], ln->in[2], NULL};
	om_node *bias_add = NULL;
	for (int i = 0; i < 2 && !bias_add; i++) {
		om_node *b = om_match_producer(g, add->in[i], OM_OPC_ADD);
		if (!b || b->nin != 2 || b->nout != 1 || !om_match_private(c, g, add->in[i], 1))
			continue;
		for (int j = 0; j < 2; j++)
			if (vec_of(g, b->in[j], h) && same_shape(c, g, b->in[1 - j], xt) &&
			    !om_value_const(g, b->in[1 - j])) {
				in[0] = add->in[1 - i];
				in[1] = b->in[1 - j];
				in[4] = b->in[j];
				bias_add = b;
				break;
			}
	}
	const float eps = om_attr_float(ln, "epsilon", 1e-5f);
	om_value **outs = keep_sum ? om_arena_alloc(g->model->arena, sizeof *outs * 4) : NULL;
	if (keep_sum && !outs)
		return om_error(c->st, OM_ERR_NOMEM, ln, "out of memory");
	om_kind rc = om_import_domain(c->m, OM_MS_DOMAIN, c->st);
	if (!rc)
		rc = om_node_become(c, g, ln, OM_MS_DOMAIN, "SkipLayerNormalization",
				    bias_add ? 5 : 4, in, c->st);
	if (rc)
		return rc;
	om_attr *a = om_node_set_attr(ln, "epsilon", OM_ATTR_FLOAT);
	if (!a)
		return om_error(c->st, OM_ERR_NOMEM, ln, "out of memory");
	a->f = eps;
	om_node_kill(c, add);
	if (bias_add)
		om_node_kill(c, bias_add);
	if (keep_sum) {
		outs[0] = ln->out[0];
		outs[1] = outs[2] = NULL;
		ln->out = outs;
		ln->nout = 4;
		om_node_set_output(ln, 3, s);
	}
	*done = true;
	return OM_OK;
}

om_kind om_pass_fuse_skip_layernorm(om_pass_ctx *c, om_graph *g, int *changes)
{
	return om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_LAYER_NORM), fuse,
			       changes);
}
