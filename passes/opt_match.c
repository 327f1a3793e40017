/* opt_match.c — pattern matching and rewriting helpers of the om_optimize fusions (see
 * optimize.h). */
#include <math.h>
#include <string.h>

#include "fuse_util.h"
#include "infer.h"
#include "registry.h"
#include "optimize.h"

om_node *om_opt_producer(const om_graph *g, const om_value *v, enum om_opcode code)
{
	om_node *p = v ? v->producer : NULL;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || v->producer_slot < 0 ||
	    v->producer_slot >= p->nout || p->out[v->producer_slot] != v ||
	    om_node_code(g->model, p) != code)
		return NULL;
	return p;
}

bool om_opt_private(om_pass_ctx *c, const om_graph *g, const om_value *v, int32_t uses)
{
	return v && v->nuses == uses && !(v->flags & OM_VALUE_GRAPH_OUTPUT) &&
	       !om_value_used_by_subgraph(c, g, v);
}

om_node *om_opt_consumer(om_pass_ctx *c, const om_graph *g, const om_value *v,
			 enum om_opcode code)
{
	if (!om_opt_private(c, g, v, 1))
		return NULL;
	for (int32_t i = 0; i < g->nnodes; i++) {
		om_node *n = g->nodes[i];
		if (n->flags & OM_NODE_DEAD)
			continue;
		for (int32_t k = 0; k < n->nin; k++)
			if (n->in[k] == v)
				return code ? (om_node_code(c->m, n) == code ? n : NULL)
					    : (om_node_default_domain(n) ? n : NULL);
	}
	return NULL;
}

om_value *om_opt_other(const om_node *n, const om_value *v)
{
	if (!n || n->nin != 2 || !n->in[0] || !n->in[1] || n->in[0] == n->in[1])
		return NULL;
	return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : NULL;
}

bool om_opt_scalar(const om_graph *g, om_value *v, int32_t max_rank, double *out)
{
	const om_tensor *t = om_value_const(g, v);
	if (!t || !om_fuse_float_type(t->dtype) || t->rank > max_rank || om_tensor_numel(t) != 1 ||
	    !t->data || t->nbytes < om_dtype_size(t->dtype))
		return false;
	*out = om_fuse_get(t, 0);
	return true;
}

bool om_opt_scalar_is(const om_graph *g, om_value *v, int32_t max_rank, double want)
{
	double x;
	return om_opt_scalar(g, v, max_rank, &x) && fabs(x - want) <= 1e-5 * fabs(want);
}

const om_type *om_opt_type(om_pass_ctx *c, const om_graph *g, om_value *v)
{
	const om_vinfo *vi = v ? om_vinfo_get(c, g, v) : NULL;
	return om_vi_ranked(vi) ? &vi->type : NULL;
}

bool om_opt_runnable(const om_model *m, const char *domain, const char *op)
{
	int64_t opset = om_model_opset(m, domain);
	const om_op *r = om_op_find(domain, op, opset ? opset : 1);
	return r && r->kernel;
}

om_kind om_opt_become(om_pass_ctx *c, om_graph *g, om_node *n, const char *domain,
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

void om_opt_kill(om_pass_ctx *c, om_node *n)
{
	om_rewrite_touch(c, n);
	n->flags |= OM_NODE_DEAD;
	for (int32_t k = 0; k < n->nout; k++)
		if (n->out[k] && n->out[k]->producer == n) {
			n->out[k]->producer = NULL;
			n->out[k]->producer_slot = -1;
		}
}

om_kind om_opt_import(om_model *m, const char *domain, om_status *st)
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
