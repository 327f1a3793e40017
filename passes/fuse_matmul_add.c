/*
 * fuse_matmul_add.c — the fuse_matmul_add pass: Add(MatMul(A, B), C) becomes Gemm(A, B, C)
 * when A and B are 2-D (inferred), the element type is float, double or float16, the MatMul
 * output has no other use and is not a graph output, and C (either Add operand) has rank <= 2
 * with each dim 1 or equal to the product's (Gemm's unidirectional broadcast, so the result's
 * shape is the product's). The Add node becomes the Gemm and keeps its output name.
 */
#include <string.h>

#include "infer.h"
#include "registry.h"

static bool rank2(const om_vinfo *vi)
{
	return om_vi_ranked(vi) && vi->type.rank == 2;
}

static om_node *matmul_of(om_pass_ctx *c, const om_graph *g, om_value *x)
{
	om_node *p = x ? x->producer : NULL;
	if (!p || p->graph != g || (p->flags & OM_NODE_DEAD) ||
	    om_node_code(g->model, p) != OM_OPC_MATMUL || p->nin != 2 || p->nout != 1 ||
	    p->out[0] != x || !p->in[0] || !p->in[1] || x->nuses != 1 ||
	    (x->flags & OM_VALUE_GRAPH_OUTPUT) || om_value_used_by_subgraph(c, g, x))
		return NULL;
	const om_vinfo *a = om_vinfo_get(c, g, p->in[0]), *b = om_vinfo_get(c, g, p->in[1]);
	const om_vinfo *y = om_vinfo_get(c, g, x);
	if (!rank2(a) || !rank2(b) || !rank2(y) || a->type.elem != b->type.elem ||
	    (a->type.elem != OM_FLOAT && a->type.elem != OM_DOUBLE && a->type.elem != OM_FLOAT16))
		return NULL;
	return p;
}

/* True when C broadcasts to the product's shape y without growing it. */
static bool bias_fits(const om_vinfo *cv, const om_vinfo *y)
{
	if (!om_vi_ranked(cv) || cv->type.rank > 2 || cv->type.elem != y->type.elem)
		return false;
	for (int32_t j = 0; j < cv->type.rank; j++) {
		om_dim d = cv->type.dims[j], e = y->type.dims[2 - cv->type.rank + j];
		if (!(d.param == NULL && d.value == 1) && !om_dims_equal(d, e))
			return false;
	}
	return true;
}

/* n is the Add of Add(MatMul(A, B), C) */
static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	if (n->nin != 2 || n->nout != 1 || !n->out[0] || !n->in[0] || !n->in[1] || n->nattr)
		return OM_OK;
	for (int k = 0; k < 2; k++) {
		om_node *mm = matmul_of(c, g, n->in[k]);
		if (!mm || !bias_fits(om_vinfo_get(c, g, n->in[1 - k]), om_vinfo_get(c, g, n->in[k])))
			continue;
		om_value **in = om_arena_alloc(g->model->arena, sizeof *in * 3);
		const char *op = om_arena_strdup(g->model->arena, "Gemm");
		if (!in || !op)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		in[0] = mm->in[0];
		in[1] = mm->in[1];
		in[2] = n->in[1 - k];
		om_rewrite_touch(c, n);
		om_rewrite_touch(c, mm);
		n->in = in;
		n->nin = 3;
		n->op = op;
		n->proto = NULL;
		mm->flags |= OM_NODE_DEAD;
		mm->out[0]->producer = NULL;
		mm->out[0]->producer_slot = -1;
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

om_kind om_pass_fuse_matmul_add(om_pass_ctx *c, om_graph *g, int *changes)
{
	if (om_model_opset(c->m, "") < 11)
		return OM_OK;
	return om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_ADD), fuse, changes);
}
