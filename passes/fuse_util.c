/* fuse_util.c — helpers of the Conv fusions (see fuse_util.h). */
#include <string.h>

#include "fuse_util.h"
#include "half.h"

enum { SHARED_WEIGHT_ALLOWANCE = 4096 }; /* bytes a fusion may duplicate (fold.c's allowance) */

om_node *om_fuse_conv_producer(om_pass_ctx *c, const om_graph *g, const om_value *x,
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

bool om_fuse_float_type(int32_t dtype)
{
	return dtype == OM_FLOAT || dtype == OM_DOUBLE || dtype == OM_FLOAT16 ||
	       dtype == OM_BFLOAT16;
}

static bool data_ok(const om_tensor *t)
{
	return t && om_fuse_float_type(t->dtype) && t->data && om_tensor_numel(t) >= 0 &&
	       t->nbytes >= om_tensor_bytes_for(t->dtype, t->rank, t->dims);
}

int64_t om_fuse_weight_channels(const om_tensor *w)
{
	if (!data_ok(w) || w->rank < 3 || w->dims[0] <= 0 || om_tensor_numel(w) <= 0)
		return -1;
	return w->dims[0];
}

bool om_fuse_vector_ok(const om_tensor *t, int64_t m)
{
	return data_ok(t) && om_tensor_numel(t) == m;
}

double om_fuse_get(const om_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case OM_FLOAT:
		return ((const float *)t->data)[i];
	case OM_DOUBLE:
		return ((const double *)t->data)[i];
	case OM_FLOAT16:
		return om_half_to_float(((const uint16_t *)t->data)[i]);
	default:
		return om_bf16_to_float(((const uint16_t *)t->data)[i]);
	}
}

void om_fuse_set(om_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case OM_FLOAT:
		((float *)t->data)[i] = (float)v;
		break;
	case OM_DOUBLE:
		((double *)t->data)[i] = v;
		break;
	case OM_FLOAT16:
		((uint16_t *)t->data)[i] = om_float_to_half((float)v);
		break;
	default:
		((uint16_t *)t->data)[i] = om_float_to_bf16((float)v);
		break;
	}
}

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
