/*
 * fuse_layernorm.c — the fuse_layernorm pass of om_optimize: the element-wise chain that
 * exporters write for a layer normalization over the trailing k axes of x,
 *
 *     mean = ReduceMean(x, axes)               d = Sub(x, mean)
 *     var = ReduceMean(Pow(d, 2) | Mul(d, d), axes)
 *     n = Div(d, Sqrt(Add(var, eps)))  |  Mul(d, Reciprocal(Sqrt(Add(var, eps))))
 *     y = Add(Mul(n, gamma), beta)             (gamma and beta optional, any operand order)
 *
 * becomes LayerNormalization(x, scale, bias) with axis = rank - k and epsilon = eps, in the
 * default domain: the ONNX op from opset 17, and before it ONNX Runtime's own
 * LayerNormalization (its contrib op registered in the ONNX domain since version 1, the one its
 * LayerNormFusion writes; omopt's row in kernels/math/ops_contrib.c). Conditions: both ReduceMeans
 * reduce the same trailing axes with keepdims 1; x is float or double of known rank with
 * numeric normalized dims; eps and the exponent 2 are constant scalars; gamma and beta are
 * constants that broadcast over the normalized dims only (else the chain stops before them);
 * every intermediate is private to the chain. scale and bias are written out in full (the
 * normalized shape, ones and zeros when absent): ONNX Runtime's kernel indexes them so.
 */
#include <math.h>
#include <string.h>

#include "float_elem.h"
#include "match.h"

typedef struct ln_match {
	om_value *x;
	int32_t rank, axis; /* normalized dims: axis .. rank-1 */
	int64_t nd[OM_MAX_RANK];
	double eps;
	om_node *dead[9];
	int32_t ndead;
	om_node *last;
	const om_tensor *gamma, *beta;
} ln_match;

/* axes of a ReduceMean over x (rank r): the trailing ones, keepdims 1; returns k or 0 */
static int32_t trailing_axes(const om_graph *g, const om_node *rm, int32_t r)
{
	int64_t ax[OM_MAX_RANK * 2];
	if (om_attr_int(rm, "keepdims", 1) != 1 || rm->nout != 1)
		return 0;
	int32_t k = om_node_axes(g, rm, 18, 1, r, ax);
	if (k <= 0 || k > r)
		return 0;
	for (int32_t i = 0; i < k; i++)
		if (ax[i] != r - k + i)
			return 0;
	return k;
}

/* The std input: Sqrt(Add(var, eps)); fills eps and returns var, or NULL. */
static om_value *std_chain(om_pass_ctx *c, om_graph *g, om_value *sd, ln_match *lm)
{
	om_node *sq = om_match_producer(g, sd, OM_OPC_SQRT);
	if (!sq || sq->nin != 1 || !om_match_private(c, g, sd, 1) ||
	    !om_match_private(c, g, sq->in[0], 1))
		return NULL;
	om_node *add = om_match_producer(g, sq->in[0], OM_OPC_ADD);
	if (!add || add->nin != 2)
		return NULL;
	for (int i = 0; i < 2; i++) {
		if (!add->in[i] || !om_match_scalar(g, add->in[1 - i], lm->rank, &lm->eps) ||
		    !isfinite(lm->eps))
			continue;
		lm->dead[lm->ndead++] = sq;
		lm->dead[lm->ndead++] = add;
		return add->in[i];
	}
	return NULL;
}

/* var = ReduceMean(Pow(d, 2) | Mul(d, d)); d = Sub(x, ReduceMean(x)): fills x, axis, ndead */
static bool variance_chain(om_pass_ctx *c, om_graph *g, om_value *var, om_value *d,
			   ln_match *lm)
{
	om_node *rm2 = om_match_producer(g, var, OM_OPC_REDUCE_MEAN);
	om_node *sub = om_match_producer(g, d, OM_OPC_SUB);
	if (!rm2 || !rm2->in[0] || !sub || sub->nin != 2 || !om_match_private(c, g, var, 1) ||
	    !om_match_private(c, g, rm2->in[0], 1))
		return false;
	om_value *sqv = rm2->in[0];
	om_node *p = om_match_producer(g, sqv, OM_OPC_POW);
	int32_t duses = 2;
	if (p && (p->nin != 2 || p->in[0] != d || !om_match_scalar_is(g, p->in[1], lm->rank, 2)))
		return false;
	if (!p) {
		p = om_match_producer(g, sqv, OM_OPC_MUL);
		if (!p || p->nin != 2 || p->in[0] != d || p->in[1] != d)
			return false;
		duses = 3;
	}
	om_node *rm1 = om_match_producer(g, sub->in[1], OM_OPC_REDUCE_MEAN);
	if (!rm1 || !rm1->in[0] || rm1->in[0] != sub->in[0] || !om_match_private(c, g, d, duses) ||
	    !om_match_private(c, g, sub->in[1], 1))
		return false;
	lm->x = sub->in[0];
	int32_t k1 = trailing_axes(g, rm1, lm->rank), k2 = trailing_axes(g, rm2, lm->rank);
	if (!k1 || k1 != k2)
		return false;
	lm->axis = lm->rank - k1;
	lm->dead[lm->ndead++] = rm2;
	lm->dead[lm->ndead++] = p;
	lm->dead[lm->ndead++] = sub;
	lm->dead[lm->ndead++] = rm1;
	return true;
}

/* n = Div(d, std) or Mul(d, Reciprocal(std)) at node `nn`: the whole standardization */
static bool match_core(om_pass_ctx *c, om_graph *g, om_node *nn, ln_match *lm)
{
	if (nn->nin != 2 || nn->nout != 1 || !nn->in[0] || !nn->in[1] || !nn->out[0])
		return false;
	const om_type *ty = om_match_type(c, g, nn->out[0]);
	if (!ty || (ty->elem != OM_FLOAT && ty->elem != OM_DOUBLE) || ty->rank < 1)
		return false;
	lm->rank = ty->rank;
	const bool div = om_node_code(c->m, nn) == OM_OPC_DIV;
	for (int s = 0; s < (div ? 1 : 2); s++) {
		om_value *d = nn->in[s], *sd = nn->in[1 - s];
		lm->ndead = 0;
		if (!div) { /* Mul(d, Reciprocal(std)) */
			om_node *r = om_match_producer(g, sd, OM_OPC_RECIPROCAL);
			if (!r || r->nin != 1 || !om_match_private(c, g, sd, 1))
				continue;
			lm->dead[lm->ndead++] = r;
			sd = r->in[0];
		}
		om_value *var = std_chain(c, g, sd, lm);
		if (var && variance_chain(c, g, var, d, lm))
			return true;
	}
	return false;
}

/* gamma or beta: a constant of x's type broadcasting over the normalized dims only */
static const om_tensor *param(const om_graph *g, om_value *v, const ln_match *lm, int32_t elem)
{
	const om_tensor *t = om_value_const(g, v);
	if (!t || t->dtype != elem || t->rank > lm->rank || om_tensor_numel(t) <= 0 || !t->data ||
	    t->nbytes < om_tensor_bytes_for(t->dtype, t->rank, t->dims))
		return NULL;
	for (int32_t j = 0; j < t->rank; j++) {
		int32_t d = lm->rank - t->rank + j; /* x's axis of t's dim j */
		if (t->dims[j] != 1 && (d < lm->axis || t->dims[j] != lm->nd[d - lm->axis]))
			return NULL;
	}
	return t;
}

/* Extends the chain over Mul(n, gamma) and Add(., beta) when they fit. */
static void match_affine(om_pass_ctx *c, om_graph *g, ln_match *lm, int32_t elem)
{
	om_node *mul = om_match_consumer(c, g, lm->last->out[0], OM_OPC_MUL);
	om_value *gv = mul && mul->nout == 1 ? om_match_other(mul, lm->last->out[0]) : NULL;
	if (!gv || !(lm->gamma = param(g, gv, lm, elem)))
		return;
	lm->dead[lm->ndead++] = lm->last;
	lm->last = mul;
	om_node *add = om_match_consumer(c, g, mul->out[0], OM_OPC_ADD);
	om_value *bv = add && add->nout == 1 ? om_match_other(add, mul->out[0]) : NULL;
	if (!bv || !(lm->beta = param(g, bv, lm, elem)))
		return;
	lm->dead[lm->ndead++] = lm->last;
	lm->last = add;
}

/* t (NULL: fill) broadcast to the normalized shape, as a new initializer */
static om_value *full_param(om_pass_ctx *c, om_graph *g, const om_tensor *t, double fill,
			    const ln_match *lm, int32_t elem, const char *hint)
{
	const int32_t k = lm->rank - lm->axis;
	om_tensor *o = om_model_tensor(g->model, elem, k, lm->nd);
	if (!o)
		return NULL;
	int64_t str[OM_MAX_RANK] = {0}, s = 1; /* t's strides over the normalized dims */
	for (int32_t j = t ? t->rank - 1 : -1; j >= 0; j--) {
		int32_t d = lm->rank - t->rank + j - lm->axis;
		if (d >= 0)
			str[d] = t->dims[j] == 1 ? 0 : s;
		s *= t->dims[j];
	}
	const int64_t n = om_tensor_numel(o);
	for (int64_t i = 0; i < n; i++) {
		int64_t off = 0, rest = i;
		for (int32_t d = k - 1; d >= 0; d--) {
			off += (rest % lm->nd[d]) * str[d];
			rest /= lm->nd[d];
		}
		om_float_put(o, i, t ? om_float_at(t, off) : fill);
	}
	return om_new_constant(c, g, hint, o);
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *nn, bool *done)
{
	ln_match lm = {0};
	*done = false;
	if (!match_core(c, g, nn, &lm))
		return OM_OK;
	const om_type *xt = om_match_type(c, g, lm.x);
	if (!xt || xt->rank != lm.rank)
		return OM_OK;
	for (int32_t d = lm.axis; d < lm.rank; d++) {
		if (!om_dim_known(xt->dims[d]) || xt->dims[d].value <= 0)
			return OM_OK;
		lm.nd[d - lm.axis] = xt->dims[d].value;
	}
	lm.last = nn;
	match_affine(c, g, &lm, xt->elem);
	om_value *in[3] = {lm.x,
			   full_param(c, g, lm.gamma, 1.0, &lm, xt->elem, "ln_scale"),
			   full_param(c, g, lm.beta, 0.0, &lm, xt->elem, "ln_bias")};
	if (!in[1] || !in[2])
		return om_error(c->st, OM_ERR_NOMEM, nn, "out of memory for LayerNormalization");
	om_kind rc = om_node_become(c, g, lm.last, "", "LayerNormalization", 3, in, c->st);
	if (rc)
		return rc;
	/* om_node_set_attr moves the attribute array: fill each one before adding the next */
	om_attr *a = om_node_set_attr(lm.last, "axis", OM_ATTR_INT);
	if (a)
		a->i = lm.axis;
	if (!a || !(a = om_node_set_attr(lm.last, "epsilon", OM_ATTR_FLOAT)))
		return om_error(c->st, OM_ERR_NOMEM, nn, "out of memory");
	a->f = (float)lm.eps;
	for (int32_t i = 0; i < lm.ndead; i++)
		om_node_kill(c, lm.dead[i]);
	*done = true;
	return OM_OK;
}

om_kind om_pass_fuse_layernorm(om_pass_ctx *c, om_graph *g, int *changes)
{
	if (!om_match_runnable(c->m, "", "LayerNormalization"))
		return OM_OK;
	return om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_DIV) | OM_OPC_BIT(OM_OPC_MUL), fuse, changes);
}
