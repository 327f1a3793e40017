/*
 * fuse_gelu.c — the fuse_gelu pass of om_optimize: the element-wise chains of GELU,
 *
 *     exact:  p = Add(Erf(Div(x, √2) | Mul(x, 1/√2)), 1)
 *     tanh:   p = Add(Tanh(Mul(Add(x, Mul(x³, 0.044715)), √(2/π))), 1)
 *             x³ = Pow(x, 3) | Mul(x, Mul(x, x)) | Mul(Mul(x, x), x)
 *     then    y = Mul(Mul(x, p), 0.5) | Mul(Mul(x, 0.5), p) | Mul(x, Mul(p, 0.5))
 *
 * (any operand order of Add and Mul), become one node reading x: from opset 20 the ONNX Gelu
 * (approximate "tanh" for the second form); before it ONNX Runtime's com.microsoft Gelu
 * (erf) and FastGelu (tanh, no bias) for float x. The constants are scalars (of rank <= x's)
 * within 1e-5 relative of the exact ones; every intermediate is private to the chain.
 *
 * Then y = Gelu(Add(a, b)) (erf: com.microsoft Gelu, or the ONNX Gelu without approximation),
 * b a constant 1-D float of a's last dim and the sum private to the Gelu, becomes ONNX
 * Runtime's com.microsoft BiasGelu(a, b): the bias added in the Gelu's loop.
 */
#include <string.h>

#include "match.h"

typedef struct gelu_match {
	om_value *x;
	int32_t rank;
	om_node *dead[10];
	int32_t ndead;
	om_node *last;
} gelu_match;

static const double SQRT2 = 1.4142135623730951, SQRT_2_PI = 0.7978845608028654;

/* The binary node of opcode `op` producing v, private with one use, and its operand that is
 * not a constant near `k` (NULL when neither is). */
static om_value *with_const(om_pass_ctx *c, const om_graph *g, om_value *v, enum om_opcode op,
			    double k, gelu_match *gm)
{
	om_node *n = om_match_producer(g, v, op);
	if (!n || n->nin != 2 || !n->in[0] || !n->in[1] || !om_match_private(c, g, v, 1))
		return NULL;
	for (int i = 0; i < 2; i++)
		if (om_match_scalar_is(g, n->in[1 - i], gm->rank, k)) {
			gm->dead[gm->ndead++] = n;
			return n->in[i];
		}
	return NULL;
}

/* x³ for the tanh form */
static bool cube_of(om_pass_ctx *c, const om_graph *g, om_value *v, const om_value *x,
		    gelu_match *gm)
{
	om_node *p = om_match_producer(g, v, OM_OPC_POW);
	if (p && om_match_private(c, g, v, 1) && p->nin == 2 && p->in[0] == x &&
	    om_match_scalar_is(g, p->in[1], gm->rank, 3)) {
		gm->dead[gm->ndead++] = p;
		return true;
	}
	om_node *m = om_match_producer(g, v, OM_OPC_MUL);
	om_value *sq = m && om_match_private(c, g, v, 1) ? om_match_other(m, x) : NULL;
	om_node *mm = om_match_producer(g, sq, OM_OPC_MUL);
	if (!mm || !om_match_private(c, g, sq, 1) || mm->nin != 2 || mm->in[0] != x ||
	    mm->in[1] != x)
		return false;
	gm->dead[gm->ndead++] = m;
	gm->dead[gm->ndead++] = mm;
	return true;
}

/* Matches the inner part: fills x and returns true when p = 1 + f(x) of the given form. */
static bool inner(om_pass_ctx *c, const om_graph *g, om_node *f, bool tanh_form, gelu_match *gm)
{
	om_value *a = f->in[0];
	if (!tanh_form) {
		om_value *x = with_const(c, g, a, OM_OPC_DIV, SQRT2, gm);
		if (x && gm->dead[gm->ndead - 1]->in[0] != x)
			return false; /* Div(√2, x) */
		gm->x = x ? x : with_const(c, g, a, OM_OPC_MUL, 1 / SQRT2, gm);
		return gm->x != NULL;
	}
	om_value *t2 = with_const(c, g, a, OM_OPC_MUL, SQRT_2_PI, gm);
	om_node *add = om_match_producer(g, t2, OM_OPC_ADD);
	if (!add || add->nin != 2 || !om_match_private(c, g, t2, 1))
		return false;
	gm->dead[gm->ndead++] = add;
	for (int i = 0; i < 2; i++) {
		gelu_match save = *gm;
		om_value *x = add->in[i];
		om_value *cube = with_const(c, g, add->in[1 - i], OM_OPC_MUL, 0.044715, gm);
		if (x && cube && cube_of(c, g, cube, x, gm)) {
			gm->x = x;
			return true;
		}
		*gm = save;
	}
	return false;
}

/* y = 0.5 * x * p in one of its orders, from p's reader on */
static bool tail(om_pass_ctx *c, const om_graph *g, om_value *p, gelu_match *gm)
{
	om_node *q = om_match_consumer(c, g, p, OM_OPC_MUL);
	om_value *o = q && q->nout == 1 ? om_match_other(q, p) : NULL;
	if (!o)
		return false;
	if (o == gm->x) { /* Mul(Mul(x, p), 0.5) */
		om_node *r = om_match_consumer(c, g, q->out[0], OM_OPC_MUL);
		if (!r || r->nout != 1 ||
		    !om_match_scalar_is(g, om_match_other(r, q->out[0]), gm->rank, 0.5))
			return false;
		gm->dead[gm->ndead++] = q;
		gm->last = r;
		return true;
	}
	if (om_match_scalar_is(g, o, gm->rank, 0.5)) { /* Mul(x, Mul(p, 0.5)) */
		om_node *r = om_match_consumer(c, g, q->out[0], OM_OPC_MUL);
		if (!r || r->nout != 1 || om_match_other(r, q->out[0]) != gm->x)
			return false;
		gm->dead[gm->ndead++] = q;
		gm->last = r;
		return true;
	}
	/* Mul(Mul(x, 0.5), p) */
	int32_t mark = gm->ndead;
	if (with_const(c, g, o, OM_OPC_MUL, 0.5, gm) == gm->x) {
		gm->last = q;
		return true;
	}
	gm->ndead = mark;
	return false;
}

/* f is the Erf of the exact form or the Tanh of the tanh approximation */
static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *f, bool *done)
{
	const bool tanh_form = om_node_code(c->m, f) == OM_OPC_TANH;
	*done = false;
	gelu_match gm = {0};
	if (f->nin != 1 || f->nout != 1 || !f->in[0] || !f->out[0])
		return OM_OK;
	const om_type *ty = om_match_type(c, g, f->out[0]);
	if (!ty)
		return OM_OK;
	gm.rank = ty->rank;
	const int64_t opset = om_model_opset(c->m, "");
	const char *domain = opset >= 20 ? "" : OM_MS_DOMAIN;
	const char *op = opset >= 20 || !tanh_form ? "Gelu" : "FastGelu";
	if (opset >= 20 ? (ty->elem != OM_FLOAT && ty->elem != OM_DOUBLE && ty->elem != OM_FLOAT16)
			: ty->elem != OM_FLOAT)
		return OM_OK;
	if (!om_match_runnable(c->m, domain, op) || !om_match_private(c, g, f->out[0], 1))
		return OM_OK;
	om_node *add = om_match_consumer(c, g, f->out[0], OM_OPC_ADD);
	om_value *one = add && add->nout == 1 ? om_match_other(add, f->out[0]) : NULL;
	if (!one || !om_match_scalar_is(g, one, gm.rank, 1) || !inner(c, g, f, tanh_form, &gm))
		return OM_OK;
	const om_type *xt = om_match_type(c, g, gm.x);
	if (!xt || xt->rank != ty->rank || xt->elem != ty->elem || !tail(c, g, add->out[0], &gm))
		return OM_OK;
	gm.dead[gm.ndead++] = f;
	gm.dead[gm.ndead++] = add;
	om_kind rc = domain[0] ? om_import_domain(c->m, domain, c->st) : OM_OK;
	if (!rc)
		rc = om_node_become(c, g, gm.last, domain, op, 1, &gm.x, c->st);
	if (!rc && tanh_form && !domain[0]) {
		om_attr *a = om_node_set_attr(gm.last, "approximate", OM_ATTR_STRING);
		if (!a)
			return om_error(c->st, OM_ERR_NOMEM, f, "out of memory");
		a->s = (om_str){"tanh", 4};
	}
	if (rc)
		return rc;
	for (int32_t i = 0; i < gm.ndead; i++)
		om_node_kill(c, gm.dead[i]);
	*done = true;
	return OM_OK;
}

/* The only reader of v when it is an erf Gelu reading v alone (either domain); else NULL */
static om_node *gelu_reader(om_pass_ctx *c, const om_graph *g, const om_value *v)
{
	if (!om_match_private(c, g, v, 1))
		return NULL;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if ((n->flags & OM_NODE_DEAD) || n->nin != 1 || n->in[0] != v)
			continue;
		const enum om_opcode k = om_node_code(c->m, n);
		if (n->nout != 1 || !n->out[0] ||
		    !(k == OM_OPC_MS_GELU ||
		      (k == OM_OPC_GELU && !strcmp(om_attr_string(n, "approximate", "none"), "none"))))
			return NULL;
		return n;
	}
	return NULL;
}

/* add is the Add(a, b) of Gelu(Add(a, b)) */
static om_kind fuse_bias(om_pass_ctx *c, om_graph *g, om_node *add, bool *done)
{
	*done = false;
	if (add->nin != 2 || add->nout != 1 || !add->in[0] || !add->in[1] || !add->out[0] ||
	    !om_match_runnable(c->m, OM_MS_DOMAIN, "BiasGelu"))
		return OM_OK;
	om_node *gelu = gelu_reader(c, g, add->out[0]);
	if (!gelu)
		return OM_OK;
	for (int i = 0; i < 2; i++) {
		om_value *in[2] = {add->in[1 - i], add->in[i]}; /* A, B */
		const om_tensor *b = om_value_const(g, in[1]);
		const om_type *at = om_match_type(c, g, in[0]);
		if (!b || b->dtype != OM_FLOAT || b->rank != 1 || !at || at->elem != OM_FLOAT ||
		    at->rank < 1 || at->dims[at->rank - 1].value != b->dims[0] ||
		    !om_match_vector(b, b->dims[0]) || om_value_const(g, in[0]))
			continue;
		om_kind rc = om_import_domain(c->m, OM_MS_DOMAIN, c->st);
		if (!rc)
			rc = om_node_become(c, g, gelu, OM_MS_DOMAIN, "BiasGelu", 2, in, c->st);
		if (rc)
			return rc;
		om_node_kill(c, add);
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

om_kind om_pass_fuse_gelu(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_ERF) | OM_OPC_BIT(OM_OPC_TANH), fuse,
				     changes);
	return rc ? rc : om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_ADD), fuse_bias, changes);
}
