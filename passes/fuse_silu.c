/*
 * fuse_silu.c — the fuse_silu pass of om_optimize: SiLU and its scaled form,
 *
 *     y = Mul(x, Sigmoid(x))  |  y = Mul(x, Sigmoid(Mul(x, alpha)))
 *
 * (any operand order of the Muls; alpha a constant scalar of rank <= x's) become ONNX
 * Runtime's com.microsoft QuickGelu(x) with attribute alpha (1 for the first form). Float x
 * only (ONNX Runtime's CPU kernel; omopt's QuickGelu gives Sigmoid-then-Mul's bits there).
 * The Sigmoid's output (and the scaling Mul's) must be private to the chain: read once, no
 * graph output, read by no subgraph. Conv -> QuickGelu stays two nodes (FusedConv has no
 * SiLU activation).
 */
#include <string.h>

#include "match.h"

/* x and alpha when s = Sigmoid(x) or Sigmoid(Mul(x, alpha)) is read only by a Mul with x */
static om_node *match(om_pass_ctx *c, const om_graph *g, om_node *s, om_value **x,
		      double *alpha, om_node **scale)
{
	if (s->nin != 1 || s->nout != 1 || !s->in[0] || !s->out[0])
		return NULL;
	om_node *m = om_match_consumer(c, g, s->out[0], OM_OPC_MUL);
	om_value *o = m && m->nout == 1 && m->out[0] ? om_match_other(m, s->out[0]) : NULL;
	if (!o)
		return NULL;
	*x = s->in[0];
	*alpha = 1;
	*scale = NULL;
	if (o == *x)
		return m;
	/* Sigmoid(Mul(o, alpha)) */
	om_node *p = om_match_producer(g, s->in[0], OM_OPC_MUL);
	const om_type *t = om_match_type(c, g, o);
	if (!p || p->nout != 1 || !t || om_match_other(p, o) == NULL ||
	    !om_match_private(c, g, s->in[0], 1) ||
	    !om_match_scalar(g, om_match_other(p, o), t->rank, alpha))
		return NULL;
	*x = o;
	*scale = p;
	return m;
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *s, bool *done)
{
	*done = false;
	om_value *x;
	double alpha;
	om_node *scale;
	om_node *m = match(c, g, s, &x, &alpha, &scale);
	if (!m)
		return OM_OK;
	const om_type *tx = om_match_type(c, g, x), *ty = om_match_type(c, g, m->out[0]);
	if (!tx || !ty || tx->elem != OM_FLOAT || ty->elem != OM_FLOAT || tx->rank != ty->rank ||
	    !om_match_runnable(c->m, OM_MS_DOMAIN, "QuickGelu"))
		return OM_OK;
	om_kind rc = om_import_domain(c->m, OM_MS_DOMAIN, c->st);
	if (!rc)
		rc = om_node_become(c, g, m, OM_MS_DOMAIN, "QuickGelu", 1, &x, c->st);
	if (rc)
		return rc;
	om_attr *a = om_node_set_attr(m, "alpha", OM_ATTR_FLOAT);
	if (!a)
		return om_error(c->st, OM_ERR_NOMEM, m, "out of memory");
	a->f = (float)alpha;
	om_node_kill(c, s);
	if (scale)
		om_node_kill(c, scale);
	*done = true;
	return OM_OK;
}

om_kind om_pass_fuse_silu(om_pass_ctx *c, om_graph *g, int *changes)
{
	return om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_SIGMOID), fuse, changes);
}
