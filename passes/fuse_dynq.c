/*
 * fuse_dynq.c — the fuse_dynq pass of om_optimize (ONNX Runtime's MatMulIntegerToFloat and
 * DynamicQuantizeMatMul fusions): the products of a dynamic-quantized model, as ONNX Runtime's
 * quantize_dynamic writes them,
 *
 *     q, qs, qz = DynamicQuantizeLinear(x)
 *     y = Mul(Cast<float>(MatMulInteger(q, B, qz [, bz])), Mul(qs, bs))   [+ bias]
 *
 * become DynamicQuantizeMatMul(x, B, bs [, bz] [, bias]) when q, qs, qz and the scale product
 * are read by this chain alone, else MatMulIntegerToFloat(A, B, as, bs [, az] [, bz] [, bias])
 * (the DynamicQuantizeLinear, or whatever makes A, stays for its other readers). Then
 * Add(that, bias), bias a 1-D float of B's columns, takes the bias in.
 *
 * Conditions: B is 2-D with N columns known, A of rank >= 1; A's scale and zero point one
 * value, B's scale and zero point one value or a 1-D tensor of N; the Cast is to float; the
 * MatMulInteger and Cast outputs are private to the chain; not int8 A with uint8 B (ONNX Runtime
 * runs no MatMulIntegerToFloat of those types). The fused kernel
 * (kernels/math/ops_dynq_matmul.c) computes float(acc) * (as * bs[j]) [+ bias[j]], each
 * operation rounded as the unfused nodes round it: the same bits, so exact mode runs it too.
 * The model file and om_simplify keep the original nodes.
 */
#include "match.h"

/* a tensor type of one element (rank <= 1) of element type elem (0: any) */
static bool one_value(om_pass_ctx *c, const om_graph *g, om_value *v, int32_t elem)
{
	const om_type *t = v ? om_match_type(c, g, v) : NULL;
	return t && (!elem || t->elem == elem) && t->rank <= 1 &&
	       (t->rank == 0 || t->dims[0].value == 1);
}

/* one value, or a 1-D tensor of n (per column) */
static bool one_or_cols(om_pass_ctx *c, const om_graph *g, om_value *v, int32_t elem,
			int64_t n)
{
	const om_type *t = v ? om_match_type(c, g, v) : NULL;
	return one_value(c, g, v, elem) ||
	       (t && t->elem == elem && t->rank == 1 && t->dims[0].value == n);
}

typedef struct dynq_parts {
	om_node *mmi, *cast, *smul, *dql;
	om_value *as, *bs;
} dynq_parts;

/* the scale product sv = Mul(as, bs): as one float, bs one or N floats */
static bool match_scales(om_pass_ctx *c, const om_graph *g, om_value *sv, int64_t N,
			 dynq_parts *p)
{
	om_node *sm = om_match_producer(g, sv, OM_OPC_MUL);
	if (!sm || sm->nin != 2 || !sm->in[0] || !sm->in[1])
		return false;
	/* the DynamicQuantizeLinear's scale, when A comes from one, is A's */
	const om_value *qs = p->dql ? p->dql->out[1] : NULL;
	for (int k = 0; k < 2; k++) {
		om_value *as = sm->in[k], *bs = sm->in[1 - k];
		if ((qs && as != qs) || !one_value(c, g, as, OM_FLOAT) ||
		    !one_or_cols(c, g, bs, OM_FLOAT, N))
			continue;
		p->smul = sm, p->as = as, p->bs = bs;
		return true;
	}
	if (!qs)
		return false;
	p->dql = NULL; /* another scale than the quantizer's: A as it is */
	return match_scales(c, g, sv, N, p);
}

/* the DynamicQuantizeLinear making the MatMulInteger's A and its zero point */
static om_node *dql_of(const om_graph *g, const om_node *mmi)
{
	om_node *d = om_match_producer(g, mmi->in[0], OM_OPC_DYNAMIC_QUANTIZE_LINEAR);
	if (!d || d->nin != 1 || !d->in[0] || d->nout != 3 || !d->out[0] || !d->out[1] ||
	    !d->out[2] || mmi->nin < 3 || mmi->in[2] != d->out[2] || d->out[0] != mmi->in[0])
		return NULL;
	return d;
}

/* Mul(Cast<float>(MatMulInteger(...)), scales) at mul, reading x in slot i */
static bool match_chain(om_pass_ctx *c, const om_graph *g, const om_node *mul, int i,
			dynq_parts *p)
{
	om_value *x = mul->in[i];
	om_node *cast = om_match_producer(g, x, OM_OPC_CAST);
	if (!cast || cast->nin != 1 || !cast->in[0] || om_attr_int(cast, "to", 0) != OM_FLOAT ||
	    !om_match_private(c, g, x, 1))
		return false;
	om_node *mmi = om_match_producer(g, cast->in[0], OM_OPC_MATMUL_INTEGER);
	if (!mmi || mmi->nout != 1 || mmi->nin < 2 || !mmi->in[0] || !mmi->in[1] ||
	    !om_match_private(c, g, cast->in[0], 1))
		return false;
	const om_type *ta = om_match_type(c, g, mmi->in[0]);
	const om_type *tb = om_match_type(c, g, mmi->in[1]);
	if (!ta || !tb || ta->rank < 1 || tb->rank != 2 || tb->dims[1].value < 0)
		return false;
	/* ONNX Runtime has no MatMulIntegerToFloat kernel for int8 A with uint8 B: an optimized
	 * model that holds one would not run there */
	if (ta->elem == OM_INT8 && tb->elem == OM_UINT8)
		return false;
	const int64_t N = tb->dims[1].value;
	om_value *az = mmi->nin > 2 ? mmi->in[2] : NULL, *bz = mmi->nin > 3 ? mmi->in[3] : NULL;
	if ((az && !one_value(c, g, az, ta->elem)) || (bz && !one_or_cols(c, g, bz, tb->elem, N)))
		return false;
	*p = (dynq_parts){.mmi = mmi, .cast = cast, .dql = dql_of(g, mmi)};
	return match_scales(c, g, mul->in[1 - i], N, p);
}

/* whether the quantizer goes into the product too: its outputs and the scale product read
 * by this chain alone */
static bool quantizer_private(om_pass_ctx *c, const om_graph *g, const dynq_parts *p)
{
	const om_node *d = p->dql;
	return d && om_match_private(c, g, d->out[0], 1) && om_match_private(c, g, d->out[1], 1) &&
	       om_match_private(c, g, d->out[2], 1) && om_match_private(c, g, p->smul->out[0], 1);
}

static om_kind fuse_mul(om_pass_ctx *c, om_graph *g, om_node *mul, bool *done)
{
	*done = false;
	dynq_parts p;
	if (mul->nin != 2 || mul->nout != 1 || !mul->out[0] || !mul->in[0] || !mul->in[1])
		return OM_OK;
	int i = 0;
	while (i < 2 && !match_chain(c, g, mul, i, &p))
		i++;
	if (i == 2)
		return OM_OK;
	om_node *mmi = p.mmi;
	om_value *bz = mmi->nin > 3 ? mmi->in[3] : NULL;
	const bool whole = quantizer_private(c, g, &p);
	const char *op = whole ? "DynamicQuantizeMatMul" : "MatMulIntegerToFloat";
	if (!om_match_runnable(c->m, OM_MS_DOMAIN, op))
		return OM_OK;
	om_value *az = mmi->nin > 2 ? mmi->in[2] : NULL;
	om_value *dq[4] = {p.dql ? p.dql->in[0] : NULL, mmi->in[1], p.bs, bz};
	om_value *mf[6] = {mmi->in[0], mmi->in[1], p.as, p.bs, az, bz};
	const int32_t nin = whole ? (bz ? 4 : 3) : (bz ? 6 : az ? 5 : 4);
	om_kind rc = om_import_domain(c->m, OM_MS_DOMAIN, c->st);
	if (!rc)
		rc = om_node_become(c, g, mul, OM_MS_DOMAIN, op, nin, whole ? dq : mf, c->st);
	if (rc)
		return rc;
	om_node_kill(c, p.cast);
	om_node_kill(c, mmi);
	if (whole) {
		om_node_kill(c, p.smul);
		om_node_kill(c, p.dql);
	}
	*done = true;
	return OM_OK;
}

/* the fused product producing v, private to its reader, without a bias yet: its bias slot */
static om_node *unbiased_product(om_pass_ctx *c, const om_graph *g, om_value *v, int *slot)
{
	om_node *f = om_match_producer(g, v, OM_OPC_MS_MATMUL_INT_FLOAT);
	*slot = 6;
	if (!f) {
		f = om_match_producer(g, v, OM_OPC_MS_DYNQ_MATMUL);
		*slot = 4;
	}
	if (!f || !om_match_private(c, g, v, 1) || (f->nin > *slot && f->in[*slot]))
		return NULL;
	return f;
}

/* Add(product, bias) -> the product with its bias */
static om_kind fuse_bias(om_pass_ctx *c, om_graph *g, om_node *add, bool *done)
{
	*done = false;
	if (add->nin != 2 || add->nout != 1 || !add->out[0] || !add->in[0] || !add->in[1])
		return OM_OK;
	for (int i = 0; i < 2; i++) {
		int slot;
		om_node *f = unbiased_product(c, g, add->in[i], &slot);
		const om_type *tb = f ? om_match_type(c, g, f->in[1]) : NULL;
		const om_type *tz = f ? om_match_type(c, g, add->in[1 - i]) : NULL;
		if (!tb || tb->rank != 2 || !tz || tz->elem != OM_FLOAT || tz->rank != 1 ||
		    tz->dims[0].value < 0 || tz->dims[0].value != tb->dims[1].value)
			continue;
		om_value *in[7] = {NULL};
		for (int k = 0; k < f->nin && k < slot; k++)
			in[k] = f->in[k];
		in[slot] = add->in[1 - i];
		om_kind rc = om_node_become(c, g, add, OM_MS_DOMAIN, f->op, slot + 1, in, c->st);
		if (rc)
			return rc;
		om_node_kill(c, f);
		*done = true;
		return OM_OK;
	}
	return OM_OK;
}

om_kind om_pass_fuse_dynq(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_MUL), fuse_mul, changes);
	return rc ? rc : om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_ADD), fuse_bias, changes);
}
