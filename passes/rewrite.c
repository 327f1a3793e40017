/* rewrite.c — the small graph edits the passes share: constants, use replacement, bypassing a
 * node while graph outputs keep their names. */
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "pass.h"
#include "uses.h"

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

void om_drop_initializer(om_model *m, om_value *v)
{
	om_model_drop_payload(m, v);
	v->flags &= ~(uint32_t)OM_VALUE_INITIALIZER;
	v->init = NULL;
	v->init_proto = NULL;
}

int32_t om_compact_initializers(om_graph *g)
{
	int32_t k = 0;
	for (int32_t i = 0; i < g->ninits; i++)
		if (g->inits[i]->flags & OM_VALUE_INITIALIZER)
			g->inits[k++] = g->inits[i];
	const int32_t gone = g->ninits - k;
	g->ninits = k;
	return gone;
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

om_kind om_node_become(om_pass_ctx *c, om_graph *g, om_node *n, const char *domain,
		       const char *op, int32_t nin, om_value *const *in, om_status *st)
{
	om_value **nv = om_arena_alloc(g->model->arena, sizeof *nv * (size_t)(nin ? nin : 1));
	const char *name = om_arena_strdup(g->model->arena, op);
	if (!nv || !name)
		return om_error(st, OM_ERR_NOMEM, n, "out of memory for a fused node");
	memcpy(nv, in, sizeof *nv * (size_t)nin);
	om_rewrite_touch(c, n);
	n->in = nv;
	n->nin = nin;
	n->op = name;
	n->domain = domain;
	n->overload = "";
	n->proto = NULL;
	n->attrs = NULL;
	n->nattr = 0;
	return OM_OK;
}

void om_node_kill(om_pass_ctx *c, om_node *n)
{
	om_rewrite_touch(c, n);
	n->flags |= OM_NODE_DEAD;
	for (int32_t k = 0; k < n->nout; k++)
		if (n->out[k] && n->out[k]->producer == n) {
			n->out[k]->producer = NULL;
			n->out[k]->producer_slot = -1;
		}
}

om_kind om_import_domain(om_model *m, const char *domain, om_status *st)
{
	if (om_model_opset(m, domain))
		return OM_OK;
	om_opset *o = om_arena_alloc(m->arena, sizeof *o * (size_t)(m->nopsets + 1));
	if (!o)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for an opset import");
	if (m->nopsets)
		memcpy(o, m->opsets, sizeof *o * (size_t)m->nopsets);
	o[m->nopsets] = (om_opset){domain, 1};
	m->opsets = o;
	m->nopsets++;
	return OM_OK;
}

/* ---- Conv weights ---- */

enum { SHARED_WEIGHT_ALLOWANCE = 4096 }; /* bytes a fusion may duplicate (fold.c's allowance) */

static om_kind set_weights(om_pass_ctx *c, om_graph *g, om_node *conv, const om_tensor *w,
			   const om_tensor *b)
{
	om_value *vw = w ? om_new_constant(c, g, conv->in[1]->name, w) : conv->in[1];
	om_value *vb = om_new_constant(c, g, conv->nin > 2 && conv->in[2] ? conv->in[2]->name
									: conv->in[1]->name, b);
	if (!vw || !vb)
		return om_error(c->st, OM_ERR_NOMEM, conv, "out of memory for fused weights");
	om_value **in = conv->in;
	if (conv->nin < 3) {
		in = om_arena_alloc(g->model->arena, sizeof *in * 3);
		if (!in)
			return om_error(c->st, OM_ERR_NOMEM, conv, "out of memory");
		memcpy(in, conv->in, sizeof *in * (size_t)conv->nin);
	}
	om_rewrite_touch(c, conv); /* the use counts follow (om_rewrite_each) */
	conv->in = in;
	conv->nin = 3;
	conv->in[1] = vw;
	conv->in[2] = vb;
	return OM_OK;
}

om_kind om_fuse_into_conv(om_pass_ctx *c, om_graph *g, om_node *conv, const om_tensor *w,
			  const om_tensor *b, om_node *fused, bool *done)
{
	/* a weight other nodes read too would be duplicated: the model would grow */
	*done = false;
	if (w && conv->in[1]->nuses > 1 && w->nbytes > SHARED_WEIGHT_ALLOWANCE)
		return OM_OK;
	om_kind rc = set_weights(c, g, conv, w, b);
	if (rc)
		return rc;
	*done = om_bypass_node(c, g, fused, conv->out[0]);
	return OM_OK;
}
