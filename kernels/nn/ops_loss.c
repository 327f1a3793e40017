/* ops_loss.c — NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12/13): the loss
 * per sample, then none / sum / mean (weighted) reductions, in double and ascending order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "numrun.h"
#include "op.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

/* The rows' param: which loss */
enum { LOSS_NLL, LOSS_SCE };

/* scores/input [N, C, d...], target [N, d...], optional weight [C] */
typedef struct loss_plan {
	int64_t N, C, D;
	int reduction;
	bool has_ignore, sce;
	int64_t ignore;
} loss_plan;

static om_kind loss_plan_make(om_ctx *c, loss_plan *p)
{
	const om_tensor *x = c->in[0], *t = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *w = c->nin > 2 ? c->in[2] : NULL;
	p->sce = c->op->param == LOSS_SCE;
	if (!x || !t || !om_is_float_type(x->dtype) ||
	    (t->dtype != OM_INT32 && t->dtype != OM_INT64))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs float scores and int32/int64 labels");
	if (x->rank < 2 || t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"labels must have the scores' shape without C");
	for (int32_t d = 1; d < t->rank; d++)
		if (t->dims[d] != x->dims[d + 1])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"labels dim %d is %lld, scores have %lld", d,
					(long long)t->dims[d], (long long)x->dims[d + 1]);
	p->N = x->dims[0];
	p->C = x->dims[1];
	p->D = 1;
	for (int32_t d = 2; d < x->rank; d++)
		p->D *= x->dims[d];
	if (w && (w->dtype != x->dtype || w->rank != 1 || w->dims[0] != p->C))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "weights must be [C] of %s",
				om_dtype_name(x->dtype));
	const char *r = om_attr_string(c->node, "reduction", "mean");
	p->reduction = !strcmp(r, "none") ? RED_NONE : !strcmp(r, "sum") ? RED_SUM
			 : !strcmp(r, "mean") ? RED_MEAN : -1;
	if (p->reduction < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "reduction '%s'", r);
	p->has_ignore = om_node_attr(c->node, "ignore_index") != NULL;
	p->ignore = om_attr_int(c->node, "ignore_index", 0);
	return OM_OK;
}

static om_kind loss_infer(om_ctx *c)
{
	loss_plan p = {0};
	om_kind rc = loss_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *t = c->in[1];
	if (p.reduction == RED_NONE)
		om_set_shape(c->out[0], x->dtype, t->rank, t->dims);
	else
		om_set_shape(c->out[0], x->dtype, 0, NULL);
	if (p.sce && c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], x->dtype, x->rank, x->dims);
	return OM_OK;
}

/* lp[n, c, d] = log softmax over c (SoftmaxCrossEntropyLoss), in place */
static void log_softmax_c(const loss_plan *p, double *lp)
{
	for (int64_t n = 0; n < p->N; n++)
		for (int64_t d = 0; d < p->D; d++) {
			double *v = lp + n * p->C * p->D + d, m = -INFINITY, s = 0;
			for (int64_t k = 0; k < p->C; k++)
				m = v[k * p->D] > m ? v[k * p->D] : m;
			for (int64_t k = 0; k < p->C; k++)
				s += om_det_exp(v[k * p->D] - m);
			const double ls = om_det_log(s);
			for (int64_t k = 0; k < p->C; k++)
				v[k * p->D] = (v[k * p->D] - m) - ls;
		}
}

static om_kind loss_kernel(om_ctx *c)
{
	loss_plan p = {0};
	om_kind rc = loss_plan_make(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *t = c->in[1], *w = c->nin > 2 ? c->in[2] : NULL;
	const int64_t nx = p.N * p.C * p.D, nl = p.N * p.D;
	double *lp = malloc(sizeof(double) * (size_t)(nx + 2 * nl + p.C + 1));
	int64_t *lab = malloc(sizeof(int64_t) * (size_t)(nl + 1));
	if (!lp || !lab) {
		free(lp), free(lab);
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	}
	double *loss = lp + nx, *wt = loss + nl, *wc = wt + nl;
	om_load_f64(x->dtype, x->data, 1, nx, lp);
	om_load_i64(t->dtype, t->data, 1, nl, lab);
	for (int64_t k = 0; k < p.C; k++)
		wc[k] = 1;
	if (w)
		om_load_f64(w->dtype, w->data, 1, p.C, wc);
	if (p.sce)
		log_softmax_c(&p, lp);
	for (int64_t n = 0; n < p.N && !rc; n++)
		for (int64_t d = 0; d < p.D; d++) {
			const int64_t i = n * p.D + d, cls = lab[i];
			if (p.has_ignore && cls == p.ignore) {
				loss[i] = wt[i] = 0;
				continue;
			}
			if (cls < 0 || cls >= p.C) {
				rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					      "label %lld is outside [0, %lld)", (long long)cls,
					      (long long)p.C);
				break;
			}
			wt[i] = wc[cls];
			loss[i] = -lp[(n * p.C + cls) * p.D + d] * wt[i];
		}
	if (!rc) {
		om_tensor *y = c->out[0];
		if (p.reduction == RED_NONE) {
			om_store_f64(y->dtype, y->data, 1, loss, nl);
		} else {
			double s = 0, ws = 0;
			for (int64_t i = 0; i < nl; i++)
				s += loss[i], ws += wt[i];
			const double v = p.reduction == RED_SUM ? s : s / ws;
			om_store_f64(y->dtype, y->data, 1, &v, 1);
		}
		if (p.sce && c->nout > 1 && c->out[1])
			om_store_f64(c->out[1]->dtype, c->out[1]->data, 1, lp, nx);
	}
	free(lp), free(lab);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_NegativeLogLikelihoodLoss_12_v22[] = {
	{"ignore_index", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* NegativeLogLikelihoodLoss-22: input target [weight] -> loss */
static const om_sig sig_NegativeLogLikelihoodLoss_12_v22 = {22, 2, 3, 1, 1, 0x4, 0x0, 0x5, 0x1, 0x5,
	0x1, attrs_NegativeLogLikelihoodLoss_12_v22, NULL};
static const om_sig_attr attrs_NegativeLogLikelihoodLoss_12[] = {{"ignore_index", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* NegativeLogLikelihoodLoss-12: input target [weight] -> loss */
static const om_sig sig_NegativeLogLikelihoodLoss_12 = {12, 2, 3, 1, 1, 0x4, 0x0, 0x5, 0x1, 0x0,
	0x0, attrs_NegativeLogLikelihoodLoss_12, &sig_NegativeLogLikelihoodLoss_12_v22};
static const om_sig_attr attrs_SoftmaxCrossEntropyLoss_12_v13[] = {{"ignore_index", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* SoftmaxCrossEntropyLoss-13: scores labels [weights] -> output [log_prob] */
static const om_sig sig_SoftmaxCrossEntropyLoss_12_v13 = {13, 2, 3, 1, 2, 0x4, 0x2, 0x5, 0x3, 0x5,
	0x3, attrs_SoftmaxCrossEntropyLoss_12_v13, NULL};
static const om_sig_attr attrs_SoftmaxCrossEntropyLoss_12[] = {{"ignore_index", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* SoftmaxCrossEntropyLoss-12: scores labels [weights] -> output [log_prob] */
static const om_sig sig_SoftmaxCrossEntropyLoss_12 = {12, 2, 3, 1, 2, 0x4, 0x2, 0x5, 0x3, 0x0, 0x0,
	attrs_SoftmaxCrossEntropyLoss_12, &sig_SoftmaxCrossEntropyLoss_12_v13};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"NegativeLogLikelihoodLoss", "", 12, loss_infer, loss_kernel, OM_OP_EXACT,
	 &sig_NegativeLogLikelihoodLoss_12, OM_OPC_NONE, NULL, LOSS_NLL, NULL},
	{"SoftmaxCrossEntropyLoss", "", 12, loss_infer, loss_kernel, OM_OP_EXACT,
	 &sig_SoftmaxCrossEntropyLoss_12, OM_OPC_NONE, NULL, LOSS_SCE, NULL},
};

const om_op_table om_ops_loss = OM_TABLE(rows);
