/* match.c — the pattern matchers of the passes (see match.h). */
#include <math.h>
#include <string.h>

#include "float_elem.h"
#include "infer.h"
#include "match.h"
#include "registry.h"

const om_tensor *om_value_const(const om_graph *g, om_value *v)
{
	if (!v)
		return NULL;
	v = om_graph_resolve(g, v);
	if (!v || !v->init || (v->flags & OM_VALUE_GRAPH_INPUT) || (v->flags & OM_VALUE_OUTER))
		return NULL;
	return v->init;
}

/* the live node of g writing v, or NULL */
static om_node *live_producer(const om_graph *g, const om_value *v)
{
	om_node *p = v ? v->producer : NULL;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) || v->producer_slot < 0 ||
	    v->producer_slot >= p->nout || p->out[v->producer_slot] != v)
		return NULL;
	return p;
}

om_node *om_match_producer(const om_graph *g, const om_value *v, enum om_opcode code)
{
	om_node *p = live_producer(g, v);
	return p && om_node_code(g->model, p) == code ? p : NULL;
}

om_node *om_match_producer_with(const om_graph *g, const om_value *v, uint32_t flags)
{
	om_node *p = live_producer(g, v);
	return p && om_node_has(g->model, p, flags) ? p : NULL;
}

om_node *om_match_conv_producer(om_pass_ctx *c, const om_graph *g, const om_value *x,
				uint64_t codes)
{
	om_node *p = x ? x->producer : NULL;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) ||
	    !(codes & OM_OPC_BIT(om_node_code(g->model, p))) || p->nout != 1 || p->nin < 2 ||
	    p->nin > 3 || p->out[0] != x || !p->in[0] || !p->in[1] || x->nuses != 1 ||
	    (x->flags & OM_VALUE_GRAPH_OUTPUT) || om_value_used_by_subgraph(c, g, x))
		return NULL;
	return p;
}

bool om_match_private(om_pass_ctx *c, const om_graph *g, const om_value *v, int32_t uses)
{
	return v && v->nuses == uses && !(v->flags & OM_VALUE_GRAPH_OUTPUT) &&
	       !om_value_used_by_subgraph(c, g, v);
}

om_node *om_match_consumer(om_pass_ctx *c, const om_graph *g, const om_value *v,
			   enum om_opcode code)
{
	if (!om_match_private(c, g, v, 1))
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

om_value *om_match_other(const om_node *n, const om_value *v)
{
	if (!n || n->nin != 2 || !n->in[0] || !n->in[1] || n->in[0] == n->in[1])
		return NULL;
	return n->in[0] == v ? n->in[1] : n->in[1] == v ? n->in[0] : NULL;
}

bool om_match_scalar(const om_graph *g, om_value *v, int32_t max_rank, double *out)
{
	const om_tensor *t = om_value_const(g, v);
	if (!t || !om_float_type(t->dtype) || t->rank > max_rank || om_tensor_numel(t) != 1 ||
	    !t->data || t->nbytes < om_dtype_size(t->dtype))
		return false;
	*out = om_float_at(t, 0);
	return true;
}

bool om_match_scalar_is(const om_graph *g, om_value *v, int32_t max_rank, double want)
{
	double x;
	return om_match_scalar(g, v, max_rank, &x) && fabs(x - want) <= 1e-5 * fabs(want);
}

static bool data_ok(const om_tensor *t)
{
	return t && om_float_type(t->dtype) && t->data && om_tensor_numel(t) >= 0 &&
	       t->nbytes >= om_tensor_bytes_for(t->dtype, t->rank, t->dims);
}

int64_t om_match_weight_channels(const om_tensor *w)
{
	if (!data_ok(w) || w->rank < 3 || w->dims[0] <= 0 || om_tensor_numel(w) <= 0)
		return -1;
	return w->dims[0];
}

bool om_match_vector(const om_tensor *t, int64_t m)
{
	return data_ok(t) && om_tensor_numel(t) == m;
}

const om_type *om_match_type(om_pass_ctx *c, const om_graph *g, om_value *v)
{
	const om_vinfo *vi = v ? om_vinfo_get(c, g, v) : NULL;
	return om_vi_ranked(vi) ? &vi->type : NULL;
}

bool om_match_runnable(const om_model *m, const char *domain, const char *op)
{
	int64_t opset = om_model_opset(m, domain);
	const om_op *r = om_op_find(domain, op, opset ? opset : 1);
	return r && r->kernel;
}

int32_t om_node_axes(const om_graph *g, const om_node *n, int64_t opset_input, int32_t slot,
		     int32_t rank, int64_t *out)
{
	int64_t raw[OM_MAX_RANK * 2];
	int64_t cnt = 0;
	int64_t opset = om_model_opset(g->model, n->domain);
	if (opset < opset_input) {
		const int64_t *a = om_attr_ints(n, "axes", &cnt);
		if (cnt > OM_MAX_RANK * 2)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			raw[i] = a[i];
	} else if (slot < n->nin && n->in[slot]) {
		const om_tensor *t = om_value_const(g, n->in[slot]);
		if (!t || (t->dtype != OM_INT64 && t->dtype != OM_INT32))
			return -1;
		cnt = om_tensor_numel(t);
		if (cnt < 0 || cnt > OM_MAX_RANK * 2)
			return -1;
		for (int64_t i = 0; i < cnt; i++)
			raw[i] = t->dtype == OM_INT64 ? ((const int64_t *)t->data)[i]
						      : ((const int32_t *)t->data)[i];
	}
	for (int64_t i = 0; i < cnt; i++) {
		int64_t a = raw[i] < 0 ? raw[i] + rank : raw[i];
		if (a < 0 || a >= rank)
			return -1;
		/* insertion sort; duplicates are invalid */
		int64_t j = i;
		while (j > 0 && out[j - 1] > a) {
			out[j] = out[j - 1];
			j--;
		}
		if (j > 0 && out[j - 1] == a)
			return -1;
		out[j] = a;
	}
	return (int32_t)cnt;
}
