/*
 * fuse_qdq.c — the fuse_qdq pass of om_optimize (ONNX Runtime's QDQ transformer, the Conv
 * group): DequantizeLinear(x) and DequantizeLinear(w) [and DequantizeLinear(b)] -> Conv ->
 * QuantizeLinear becomes QLinearConv(xq, xs, xz, wq, ws, wz, ys, yz [, bq]) with the Conv's
 * attributes, run by int8 kernels (oneDNN's int8 convolution in fast mode). A QDQ Gemm group
 * becomes com.microsoft QGemm alike. DequantizeLinear -> an op that selects elements
 * (OM_OP_SELECT: Reshape, Transpose, Slice, Gather, Concat, MaxPool...) -> QuantizeLinear of
 * the same scale and zero point becomes the op on the 8-bit values (ONNX Runtime's DropQDQ
 * rules, and Concat's with all inputs alike): exact, as Q(DQ(x)) is x for one scale s > 0 and
 * zero point (|x - z| <= 255: (x - z) s / s rounds back to x - z), and a select op commutes
 * with DQ, an increasing map.
 *
 * Conditions: x's scale and zero point are constant scalars, its zero point 8-bit of xq's
 * type; w is a constant int8 initializer with a constant scale and zero point, one or one per
 * output channel (axis 0); the bias, when there is one, is a constant int32 initializer of zero
 * point 0 whose scale is x_scale * w_scale (within 1e-4, relative: ONNX Runtime uses the int32
 * values as they are); the Conv output is float and read by the QuantizeLinear alone, whose
 * scale and zero point are constant scalars, the zero point 8-bit. A DequantizeLinear read by
 * other nodes too stays for them (ONNX Runtime duplicates it). Anything else stays as it is:
 * the model file and om_simplify keep QDQ; exact mode runs no om_optimize.
 */
#include <math.h>
#include <string.h>

#include "match.h"

/* a constant tensor whose data is all there */
static const om_tensor *whole_const(const om_graph *g, om_value *v)
{
	const om_tensor *t = om_value_const(g, v);
	if (!t || !t->data || t->nbytes < (size_t)om_tensor_numel(t) * om_dtype_size(t->dtype))
		return NULL;
	return t;
}

static bool is8(int32_t t)
{
	return t == OM_INT8 || t == OM_UINT8;
}

/* the scale (float) and zero point (8-bit) of a Q or DQ node n: constants of n elements (1:
 * rank <= 1) */
static bool qparams(const om_graph *g, const om_node *n, int64_t count, const om_tensor **s,
		    const om_tensor **z)
{
	if (n->nin != 3 || !n->in[1] || !n->in[2])
		return false;
	*s = whole_const(g, n->in[1]);
	*z = whole_const(g, n->in[2]);
	return *s && *z && (*s)->dtype == OM_FLOAT && is8((*z)->dtype) && (*s)->rank <= 1 &&
	       (*z)->rank <= 1 && om_tensor_numel(*s) == count && om_tensor_numel(*z) == count;
}

/* the DequantizeLinear producing v (any number of readers) */
static om_node *dq_of(const om_graph *g, om_value *v)
{
	om_node *d = om_match_producer(g, v, OM_OPC_DEQUANTIZE_LINEAR);
	return d && d->nout == 1 && d->in[0] ? d : NULL;
}

/* A DQ's axis is the weight's channel axis (or irrelevant: one scale) */
static bool axis_is(const om_node *d, int32_t rank, int64_t count, int32_t axis)
{
	const int64_t a = om_attr_int(d, "axis", 1);
	return count == 1 || a == axis || a == axis - rank;
}

typedef struct qdq_parts {
	om_node *dx, *dw, *db, *op; /* op: the Conv or Gemm */
} qdq_parts;

/* the bias DQ: int32 constant of M, zero point 0 (or absent), scale xs * ws[m] */
static bool bias_fits(const om_graph *g, const om_node *db, int64_t M, float xs,
		      const om_tensor *ws)
{
	const om_tensor *b = whole_const(g, db->in[0]);
	const om_tensor *s = db->nin > 1 ? whole_const(g, db->in[1]) : NULL;
	const om_tensor *z = db->nin > 2 && db->in[2] ? whole_const(g, db->in[2]) : NULL;
	const int64_t ns = s ? om_tensor_numel(s) : 0, nw = om_tensor_numel(ws);
	if (!b || b->dtype != OM_INT32 || b->rank != 1 || b->dims[0] != M || !s ||
	    s->dtype != OM_FLOAT || (ns != 1 && ns != M) || (ns > 1 && nw == 1) ||
	    (db->nin > 2 && db->in[2] && !z) || (z && om_tensor_numel(z) != ns))
		return false;
	for (int64_t m = 0; z && m < ns; m++)
		if (((const int32_t *)z->data)[m])
			return false;
	for (int64_t m = 0; m < M; m++) {
		const double want = (double)xs * ((const float *)ws->data)[nw == 1 ? 0 : m];
		const double got = ((const float *)s->data)[ns == 1 ? 0 : m];
		if (!(fabs(got - want) <= 1e-4 * fabs(want)))
			return false;
	}
	return true;
}

/* op's operands through their DequantizeLinear nodes: x 8-bit with one scale and zero point;
 * w a constant int8 initializer (a Conv's of rank 3 or more, a Gemm's of rank 2) with an int8
 * zero point, its scale one or one an output channel (W's axis 0, or 1 for a Gemm without
 * transB); a bias through bias_fits */
static bool match_operands(om_pass_ctx *c, const om_graph *g, om_node *op, bool gemm,
			   qdq_parts *p)
{
	const om_tensor *xs, *xz, *ws, *wz, *w;
	om_node *dx = op->in[0] ? dq_of(g, op->in[0]) : NULL;
	om_node *dw = op->in[1] ? dq_of(g, op->in[1]) : NULL;
	om_node *db = op->nin > 2 && op->in[2] ? dq_of(g, op->in[2]) : NULL;
	const om_type *tx = dx ? om_match_type(c, g, dx->in[0]) : NULL;
	if (!dx || !dw || (op->nin > 2 && op->in[2] && !db) || !tx || !is8(tx->elem) ||
	    !qparams(g, dx, 1, &xs, &xz) || xz->dtype != tx->elem ||
	    !(w = whole_const(g, dw->in[0])) || w->dtype != OM_INT8 ||
	    (gemm ? w->rank != 2 : w->rank < 3))
		return false;
	const int32_t axis = gemm && !om_attr_int(op, "transB", 0) ? 1 : 0;
	const int64_t M = w->dims[axis];
	const int64_t nws = dw->nin > 1 && dw->in[1] && om_value_const(g, dw->in[1])
				    ? om_tensor_numel(om_value_const(g, dw->in[1]))
				    : -1;
	if ((nws != 1 && nws != M) || !qparams(g, dw, nws, &ws, &wz) || wz->dtype != OM_INT8 ||
	    !axis_is(dw, w->rank, nws, axis) || om_tensor_numel(xs) != 1)
		return false;
	if (db && !bias_fits(g, db, M, *(const float *)xs->data, ws))
		return false;
	*p = (qdq_parts){dx, dw, db, op};
	return true;
}

/* a Gemm QGemm runs: alpha and beta 1 where there is a bias (QGemm's alpha scales the bias
 * with the products, and it has no beta) */
static bool gemm_fits(const om_node *gm)
{
	return gm->nin < 3 || !gm->in[2] ||
	       (om_attr_float(gm, "beta", 1.0f) == 1.0f && om_attr_float(gm, "alpha", 1.0f) == 1.0f);
}

/* The Conv or Gemm group ending at QuantizeLinear q, its quantized op runnable: its parts, or
 * false (a Gemm gemm_fits) */
static bool match_q(om_pass_ctx *c, const om_graph *g, const om_node *q, qdq_parts *p)
{
	const om_tensor *ys, *yz;
	om_node *op = q->nout == 1 && q->in[0] ? om_match_producer(g, q->in[0], OM_OPC_CONV)
					       : NULL;
	const bool gemm = !op;
	if (gemm)
		op = q->nout == 1 && q->in[0] ? om_match_producer(g, q->in[0], OM_OPC_GEMM) : NULL;
	const om_type *ty = op ? om_match_type(c, g, q->in[0]) : NULL;
	return op && (gemm ? om_match_runnable(c->m, OM_MS_DOMAIN, "QGemm")
			   : om_match_runnable(c->m, "", "QLinearConv")) &&
	       op->nout == 1 && op->nin >= 2 && op->nin <= 3 && ty &&
	       ty->elem == OM_FLOAT && om_match_private(c, g, q->in[0], 1) &&
	       qparams(g, q, 1, &ys, &yz) && (!gemm || gemm_fits(op)) &&
	       match_operands(c, g, op, gemm, p);
}

/* n becomes op `type` of domain reading in, with op's attributes (but beta: drop_beta) and
 * name; op dies when it is not n */
static om_kind take_over(om_pass_ctx *c, om_graph *g, om_node *n, om_node *op, const char *domain,
			 const char *type, bool drop_beta, int32_t nin, om_value *const *in)
{
	om_attr *attrs = op->nattr ? om_arena_memdup(g->model->arena, op->attrs,
						     sizeof *attrs * (size_t)op->nattr) : NULL;
	int32_t nattr = 0;
	for (int32_t i = 0; i < op->nattr && attrs; i++)
		if (!drop_beta || strcmp(op->attrs[i].name, "beta"))
			attrs[nattr++] = op->attrs[i];
	if (op->nattr && !attrs)
		return om_error(c->st, OM_ERR_NOMEM, op, "out of memory");
	const om_kind rc = om_node_become(c, g, n, domain, type, nin, in, c->st);
	if (rc)
		return rc;
	n->attrs = attrs;
	n->nattr = nattr;
	n->name = op->name;
	if (n != op)
		om_node_kill(c, op);
	return OM_OK;
}

/* n (a Conv or Gemm, or the QuantizeLinear ending the group) becomes the quantized op of the
 * group p with inputs in; a Gemm's attributes but beta go with it */
static om_kind become(om_pass_ctx *c, om_graph *g, om_node *n, const qdq_parts *p, int32_t nin,
		      om_value *const *in)
{
	const bool gemm = om_node_code(g->model, p->op) == OM_OPC_GEMM;
	const om_kind rc = gemm ? om_import_domain(c->m, OM_MS_DOMAIN, c->st) : OM_OK;
	return rc ? rc
		  : take_over(c, g, n, p->op, gemm ? OM_MS_DOMAIN : "",
			      gemm ? "QGemm" : "QLinearConv", gemm, nin, in);
}

static om_kind fuse_q(om_pass_ctx *c, om_graph *g, om_node *q, bool *done)
{
	qdq_parts p;
	*done = false;
	if (!match_q(c, g, q, &p))
		return OM_OK;
	om_value *b = p.db ? p.db->in[0] : NULL;
	*done = true;
	if (om_node_code(g->model, p.op) == OM_OPC_GEMM) {
		om_value *in[9] = {p.dx->in[0], p.dx->in[1], p.dx->in[2], p.dw->in[0], p.dw->in[1],
				   p.dw->in[2], b, q->in[1], q->in[2]};
		return become(c, g, q, &p, 9, in);
	}
	om_value *in[9] = {p.dx->in[0], p.dx->in[1], p.dx->in[2], p.dw->in[0], p.dw->in[1],
			   p.dw->in[2], q->in[1], q->in[2], b};
	return become(c, g, q, &p, b ? 9 : 8, in);
}

/* a Gemm group whose output stays float (no QuantizeLinear took it): QGemm without y_scale */
static om_kind fuse_gemm(om_pass_ctx *c, om_graph *g, om_node *gm, bool *done)
{
	qdq_parts p;
	*done = false;
	const om_type *ty = gm->nout == 1 && gm->out[0] ? om_match_type(c, g, gm->out[0]) : NULL;
	if (!ty || ty->elem != OM_FLOAT || gm->nin < 2 || gm->nin > 3 || !gemm_fits(gm) ||
	    !match_operands(c, g, gm, true, &p))
		return OM_OK;
	om_value *in[7] = {p.dx->in[0], p.dx->in[1], p.dx->in[2], p.dw->in[0], p.dw->in[1],
			   p.dw->in[2], p.db ? p.db->in[0] : NULL};
	*done = true;
	return become(c, g, gm, &p, p.db ? 7 : 6, in);
}

/* the DequantizeLinear producing v with the scale and zero point (bits, type) of s and z, its
 * input of z's type */
static om_node *dq_alike(om_pass_ctx *c, const om_graph *g, om_value *v, const om_tensor *s,
			 const om_tensor *z)
{
	om_node *d = dq_of(g, v);
	const om_tensor *ds, *dz;
	const om_type *t = d ? om_match_type(c, g, d->in[0]) : NULL;
	return d && t && t->elem == z->dtype && qparams(g, d, 1, &ds, &dz) &&
			       dz->dtype == z->dtype && !memcmp(ds->data, s->data, sizeof(float)) &&
			       !memcmp(dz->data, z->data, 1)
		       ? d
		       : NULL;
}

/* QuantizeLinear q of a DequantizeLinear of its scale (> 0 and finite: DQ(z) is NaN with an
 * infinite one) and zero point: gone, its readers
 * read the 8-bit input (push_transposes leaves these where it moved a Transpose past the DQ).
 * Or q of a select op of one output whose float inputs all come from such DequantizeLinear
 * nodes: q becomes the op reading their 8-bit inputs (its other inputs, Reshape's shape or
 * Gather's indices, stay). */
static om_kind drop_qdq(om_pass_ctx *c, om_graph *g, om_node *q, bool *done)
{
	enum { MOST = 64 }; /* inputs (Concat's) */
	const om_tensor *s, *z;
	*done = false;
	if (q->nout != 1 || !q->in[0] || !qparams(g, q, 1, &s, &z) ||
	    !(*(const float *)s->data > 0) || !isfinite(*(const float *)s->data))
		return OM_OK;
	om_node *d0 = dq_alike(c, g, q->in[0], s, z);
	if (d0) {
		*done = om_bypass_node(c, g, q, d0->in[0]);
		return OM_OK;
	}
	/* from opset 12 every select op of the default domain takes 8-bit types (MaxPool-12;
	 * Reshape, Concat and Flatten earlier), so the model stays valid ONNX */
	om_node *op = om_model_opset(g->model, "") >= 12
			      ? om_match_producer_with(g, q->in[0], OM_OP_SELECT)
			      : NULL;
	const om_type *ty = op ? om_match_type(c, g, q->in[0]) : NULL;
	if (!op || !om_node_default_domain(op) || op->nout != 1 || op->nin < 1 ||
	    op->nin > MOST || !ty || ty->elem != OM_FLOAT || !om_match_private(c, g, q->in[0], 1))
		return OM_OK;
	om_value *in[MOST];
	for (int32_t i = 0; i < op->nin; i++) {
		const om_type *t = op->in[i] ? om_match_type(c, g, op->in[i]) : NULL;
		om_node *d = t && t->elem == OM_FLOAT ? dq_alike(c, g, op->in[i], s, z) : NULL;
		if ((!t || t->elem == OM_FLOAT || i == 0) && op->in[i] && !d)
			return OM_OK;
		in[i] = d ? d->in[0] : op->in[i];
	}
	*done = true;
	return take_over(c, g, q, op, op->domain, op->op, false, op->nin, in);
}

om_kind om_pass_fuse_qdq(om_pass_ctx *c, om_graph *g, int *changes)
{
	om_kind rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_QUANTIZE_LINEAR), drop_qdq, changes);
	if (!rc)
		rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_QUANTIZE_LINEAR), fuse_q, changes);
	if (!rc && om_match_runnable(c->m, OM_MS_DOMAIN, "QGemm"))
		rc = om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_GEMM), fuse_gemm, changes);
	return rc;
}
