/* ops_causal_conv.c — CausalConvWithState (opset 27): a causal depthwise 1-D convolution
 * over (batch, channels, length) with a carried state of the last k - 1 positions, an optional
 * bias and a fused SiLU ("silu", "swish"). Each channel row is the past state (zeros when
 * absent) followed by the input, convolved in double; stores in the input's type. */
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "numrun.h"
#include "op.h"

typedef struct ccs_plan {
	int64_t B, C, L, K; /* batch, channels, length, kernel size */
	int act;            /* 0 none, 1 silu/swish */
	const om_tensor *x, *w, *bias, *past;
} ccs_plan;

static om_kind ccs_bad(om_ctx *c, const char *what)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", what);
}

static om_kind ccs_plan_make(om_ctx *c, ccs_plan *p)
{
	static const char *const acts[] = {"none", "silu", "swish", NULL};
	memset(p, 0, sizeof *p);
	p->x = om_ctx_in(c, 0), p->w = om_ctx_in(c, 1);
	p->bias = om_ctx_in(c, 2), p->past = om_ctx_in(c, 3);
	const om_tensor *x = p->x, *w = p->w;
	if (!x || !w)
		return ccs_bad(c, "needs input and weight");
	const int32_t dt = x->dtype;
	if (dt != OM_FLOAT && dt != OM_FLOAT16 && dt != OM_BFLOAT16)
		return ccs_bad(c, "input must be float, float16 or bfloat16");
	if (w->dtype != dt || (p->bias && p->bias->dtype != dt) || (p->past && p->past->dtype != dt))
		return ccs_bad(c, "input, weight, bias and past_state must be one type");
	if (x->rank != 3 || w->rank != 3)
		return ccs_bad(c, "input and weight must be 3-D");
	p->B = x->dims[0], p->C = x->dims[1], p->L = x->dims[2], p->K = w->dims[2];
	if (w->dims[0] != p->C || w->dims[1] != 1)
		return ccs_bad(c, "weight must be (channels, 1, k)");
	if (p->K < 1)
		return ccs_bad(c, "the kernel size k must be at least 1");
	if (p->bias && (p->bias->rank != 1 || p->bias->dims[0] != p->C))
		return ccs_bad(c, "bias must be (channels)");
	if (p->past && (p->past->rank != 3 || p->past->dims[0] != p->B ||
			p->past->dims[1] != p->C || p->past->dims[2] != p->K - 1))
		return ccs_bad(c, "past_state must be (batch, channels, k - 1)");
	const int a = om_attr_choice(c->node, "activation", acts, 0);
	if (a < 0)
		return ccs_bad(c, "activation must be 'none', 'silu' or 'swish'");
	p->act = a > 0;
	return OM_OK;
}

static om_kind ccs_infer(om_ctx *c)
{
	ccs_plan p;
	om_kind rc = ccs_plan_make(c, &p);
	if (rc)
		return rc;
	const int64_t st[3] = {p.B, p.C, p.K - 1};
	om_set_shape(c->out[0], p.x->dtype, 3, p.x->dims);
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], p.x->dtype, 3, st);
	return OM_OK;
}

static om_kind ccs_kernel(om_ctx *c)
{
	ccs_plan p;
	om_kind rc = ccs_plan_make(c, &p);
	if (rc)
		return rc;
	const int32_t dt = p.x->dtype;
	const size_t es = om_dtype_size(dt);
	const int64_t K1 = p.K - 1, R = p.L + K1; /* the padded row */
	const size_t n = (size_t)R + (size_t)p.L + (size_t)p.K; /* row, output, weights */
	double *row;
	if ((rc = om_ctx_scratch(c, n * sizeof(double), "the padded rows", (void **)&row)))
		return rc;
	double *y = row + R, *wk = y + p.L;
	om_tensor *out = c->out[0], *pres = c->nout > 1 ? c->out[1] : NULL;
	for (int64_t b = 0; b < p.B; b++)
		for (int64_t ch = 0; ch < p.C; ch++) {
			const int64_t bc = b * p.C + ch;
			if (p.past)
				om_load_f64(dt, (const char *)p.past->data + (size_t)(bc * K1) * es, 1,
					    K1, row);
			else
				for (int64_t i = 0; i < K1; i++)
					row[i] = 0;
			om_load_f64(dt, (const char *)p.x->data + (size_t)(bc * p.L) * es, 1, p.L,
				    row + K1);
			om_load_f64(dt, (const char *)p.w->data + (size_t)(ch * p.K) * es, 1, p.K,
				    wk);
			double bias = 0;
			if (p.bias)
				om_load_f64(dt, (const char *)p.bias->data + (size_t)ch * es, 1, 1,
					    &bias);
			for (int64_t t = 0; t < p.L; t++) {
				double s = bias;
				for (int64_t j = 0; j < p.K; j++)
					s += wk[j] * row[t + j];
				y[t] = p.act ? s * om_det_sigmoid(s) : s;
			}
			om_store_f64(dt, (char *)out->data + (size_t)(bc * p.L) * es, 1, y, p.L);
			if (pres) /* the last k - 1 positions of the padded row */
				om_store_f64(dt, (char *)pres->data + (size_t)(bc * K1) * es, 1,
					     row + p.L, K1);
		}
	om_ctx_scratch_done(c, row);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_CausalConvWithState_27[] = {{"activation", OM_ATTR_STRING, 0},
	{NULL, 0, 0}};
/* CausalConvWithState-27: input weight [bias] [past_state] -> output present_state */
static const om_sig sig_CausalConvWithState_27 = {27, 2, 4, 2, 2, 0xc, 0x0, 0xf, 0x3, 0xf, 0x3,
	attrs_CausalConvWithState_27, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"CausalConvWithState", "", 27, ccs_infer, ccs_kernel, OM_OP_EXACT,
	 &sig_CausalConvWithState_27, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_causal_conv = OM_TABLE(rows);
