/* ops_layernorm.c — LayerNormalization (ONNX's, and ONNX Runtime's in the default domain since
 * 1), RMSNormalization, ONNX Runtime's SimplifiedLayerNormalization (default domain since 1)
 * and com.microsoft SkipLayerNormalization and SkipSimplifiedLayerNormalization:
 * standardization over the last axes, in double: exact; fast mode's float rows through
 * om_fast_layer_norm_f32 (om_fast_rms_norm_f32 for the root mean square rows). */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "f32_bridge.h"
#include "fastmath.h"
#include "norm_common.h"
#include "numrun.h"
#include "parallel.h"

/* ---- LayerNormalization ------------------------------------------------------------------ */

/* The rows' param: RMSNormalization and the Simplified ones take no mean out (LN_RMS: root mean
 * square, the Mean output, where there is one, is 0), LayerNormalization does (0); ONNX
 * Runtime's SimplifiedLayerNormalization names its inverse standard deviation as output 1
 * (LN_INV1: it has no Mean output) */
enum { LN_RMS = 1, LN_INV1 = 2 };

typedef struct ln_plan {
	int32_t axis;
	norm_slices sl;
	int32_t stash;
} ln_plan;

static om_kind ln_prepare(om_ctx *c, ln_plan *p)
{
	const om_tensor *x = c->in[0];
	om_kind rc = om_norm_need_float(c, x, "X");
	if (!rc)
		rc = om_norm_need_float(c, c->nin > 1 ? c->in[1] : NULL, "Scale");
	if (!rc && c->nin > 2 && c->in[2])
		rc = om_norm_need_float(c, c->in[2], "B");
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "axis", -1), x->rank, &p->axis);
	if (rc)
		return rc;
	p->stash = (int32_t)om_attr_int(c->node, "stash_type", OM_FLOAT);
	if (!om_is_float_type(p->stash))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "stash_type %d",
				(int)p->stash);
	p->sl = (norm_slices){om_norm_dims_product(x->dims, 0, p->axis),
			      om_norm_dims_product(x->dims, p->axis, x->rank), 1};
	const int32_t m = x->rank - p->axis;
	for (int i = 1; i < 3 && i < c->nin; i++)
		if (c->in[i] && (rc = om_norm_expand_param(c, c->in[i], m, x->dims + p->axis, 0,
							   NULL, i == 1 ? "Scale" : "B")))
			return rc;
	return OM_OK;
}

static om_kind om_ln_infer(om_ctx *c) /* also ONNX Runtime's LayerNormalization (since 1) */
{
	ln_plan p = {0};
	om_kind rc = ln_prepare(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	om_set_shape(c->out[0], x->dtype, x->rank, x->dims);
	int64_t sd[OM_MAX_RANK];
	for (int32_t d = 0; d < x->rank; d++)
		sd[d] = d < p.axis ? x->dims[d] : 1;
	for (int i = 1; i < 3 && i < c->nout; i++)
		if (c->out[i])
			om_set_shape(c->out[i], p.stash, x->rank, sd);
	return OM_OK;
}

/* fast mode's LayerNormalization rows in float (om_fast_layer_norm_f32) */
typedef struct ln_fast_job {
	int64_t n;
	float eps;
	bool rms; /* om_fast_rms_norm_f32 (no bias; the mean, where asked, is 0) */
	const float *x, *scale, *bias;
	float *y, *mean, *inv; /* mean, inv: NULL when not asked */
} ln_fast_job;

static void ln_fast_rows(void *arg, int64_t lo, int64_t hi)
{
	const ln_fast_job *j = arg;
	for (int64_t o = lo; o < hi; o++) {
		float m = 0, r;
		if (j->rms)
			om_fast_rms_norm_f32(j->n, j->y + o * j->n, j->x + o * j->n, j->scale,
					     j->eps, &r);
		else
			om_fast_layer_norm_f32(j->n, j->y + o * j->n, j->x + o * j->n, j->scale,
					       j->bias, j->eps, &m, &r);
		if (j->mean)
			j->mean[o] = m;
		if (j->inv)
			j->inv[o] = r;
	}
}

static om_kind om_ln_kernel(om_ctx *c) /* also ONNX Runtime's LayerNormalization (since 1) */
{
	ln_plan p = {0};
	om_kind rc = ln_prepare(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *b = c->nin > 2 ? c->in[2] : NULL;
	const int64_t n = p.sl.n;
	const int inv_at = c->op->param & LN_INV1 ? 1 : 2;
	om_tensor *mean = inv_at == 2 && c->nout > 1 ? c->out[1] : NULL;
	om_tensor *inv = c->nout > inv_at ? c->out[inv_at] : NULL;
	const bool rms = c->op->param & LN_RMS;
	if (!c->exact && x->dtype == OM_FLOAT && (!rms || !b) &&
	    om_norm_float_row(c->in[1], n, false) && om_norm_float_row(b, n, true) &&
	    (!mean || mean->dtype == OM_FLOAT) && (!inv || inv->dtype == OM_FLOAT)) {
		ln_fast_job j = {n, om_attr_float(c->node, "epsilon", 1e-5f), rms, x->data,
				 c->in[1]->data, b ? b->data : NULL, c->out[0]->data,
				 mean ? mean->data : NULL, inv ? inv->data : NULL};
		om_par_for(c->threads, p.sl.outer, NORM_SLICE_GRAIN / (n + 1) + 1, ln_fast_rows,
			   &j);
		return OM_OK;
	}
	double *buf;
	if ((rc = om_ctx_scratch(c, sizeof(double) * (size_t)(2 * n + 1), "the parameters",
				 (void **)&buf)))
		return rc;
	const int32_t m = x->rank - p.axis;
	rc = om_norm_expand_param(c, c->in[1], m, x->dims + p.axis, n, buf, "Scale");
	if (!rc && b)
		rc = om_norm_expand_param(c, b, m, x->dims + p.axis, n, buf + n, "B");
	norm_std l = {.scale = buf, .bias = b ? buf + n : NULL,
		    .eps = om_attr_float(c->node, "epsilon", 1e-5f), .mean = mean, .inv = inv,
		    .rms = rms, .smod = 1, .kdiv = 1};
	if (!rc)
		rc = om_norm_each_slice(c, x, c->out[0], p.sl, om_norm_standardize, &l);
	om_ctx_scratch_done(c, buf);
	return rc;
}

/* com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
 * SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) (LN_RMS: no beta, no mean taken
 * out, output 1 (mean) is 0), for input and skip of one shape (or skip [1, S, H] or [S, H] for
 * an input [B, S, H]: skip_fits) and a 1-D bias of the last dim,
 * all of one type: float, or float16/bfloat16 through om_run_as_f32 (converted to float, the
 * outputs 0 and 3 rounded back; mean and inv_std_var stay float, ONNX Runtime's type U; its
 * float16 rows also compute in float): per row, the sum input + (skip + bias) in float (for
 * float, the bits of the Adds it replaces), kept in output 3 (input_skip_bias_sum, bias as ONNX
 * Runtime 1.30 does) when asked, then om_norm_standardize over the last axis, as
 * LayerNormalization(sum, gamma, beta) or RMSNormalization(sum, gamma) with the node's epsilon
 * (default 1e-12). */
static const om_tensor *skip_bias(const om_ctx *c)
{
	const int at = c->op->param & LN_RMS ? 3 : 4;
	return c->nin > at ? c->in[at] : NULL;
}

/* skip of input's shape, or, for an input [B, S, H], [1, S, H] or [S, H]: one skip for every
 * batch, as ONNX Runtime 1.30's CPU kernel broadcasts it (skip_layer_norm_helper.h) */
static bool skip_fits(const om_tensor *x, const om_tensor *sk)
{
	if (sk->rank == x->rank && !memcmp(x->dims, sk->dims, sizeof(int64_t) * (size_t)x->rank))
		return true;
	return x->rank == 3 && (sk->rank == 2 || (sk->rank == 3 && sk->dims[0] == 1)) &&
	       sk->dims[sk->rank - 2] == x->dims[1] && sk->dims[sk->rank - 1] == x->dims[2];
}

static om_kind skip_ln_ctx(om_ctx *c, om_ctx *lc, const om_tensor **lin, om_tensor **lout)
{
	const om_tensor *x = c->nin > 1 ? c->in[0] : NULL, *sk = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *b = skip_bias(c);
	const bool rms = c->op->param & LN_RMS;
	const char *name = rms ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization";
	if (!x || !sk || c->nin < 3 || c->nout < 1 || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s takes input, skip and gamma", name);
	if ((x->dtype != OM_FLOAT && !om_f32_bridged(x->dtype, false)) || sk->dtype != x->dtype ||
	    x->rank < 1 || !skip_fits(x, sk) ||
	    (b && (b->dtype != x->dtype || b->rank != 1 || b->dims[0] != x->dims[x->rank - 1])))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"%s: float, float16 or bfloat16 input, skip of its type and shape "
				"(or [1, S, H] or [S, H] for an input [B, S, H]) and a 1-D bias of its "
				"type and last dim only", name);
	lin[0] = x;
	lin[1] = c->in[2];
	lin[2] = !rms && c->nin > 3 ? c->in[3] : NULL;
	for (int i = 0; i < 3; i++)
		lout[i] = i < c->nout ? c->out[i] : NULL;
	*lc = *c;
	lc->in = lin;
	lc->nin = 3;
	lc->out = lout;
	lc->nout = 3;
	return OM_OK;
}

static om_kind om_skip_ln_infer(om_ctx *c)
{
	const om_tensor *lin[3];
	om_tensor *lout[3];
	om_ctx lc;
	om_kind rc = skip_ln_ctx(c, &lc, lin, lout);
	if (!rc)
		rc = om_ln_infer(&lc);
	if (!rc && c->nout > 3 && c->out[3])
		om_set_shape(c->out[3], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

typedef struct skip_job {
	norm_std *l; /* read only (om_norm_standardize's argument) */
	int64_t n;
	int64_t skip_rows;            /* rows of skip: a row o reads skip row o % skip_rows */
	const float *x, *skip, *bias; /* bias: NULL when absent */
	float *sum, *y;               /* sum: input_skip_bias_sum, NULL when not asked */
	double *rows;                 /* per worker: n + 1 doubles, then n + 1 floats */
	const float *gamma, *beta;    /* fast mode: the row in float (om_fast_layer_norm_f32);
					 NULL: om_norm_standardize */
	float *mean, *inv;            /* fast mode's outputs 1 and 2, NULL when not asked */
} skip_job;

/* rows [lo, hi): the sum input + (skip + bias) in float (into output 3 when asked), then
 * normalized in float (fast mode) or by om_norm_standardize */
static void skip_rows(void *arg, int64_t lo, int64_t hi, int slot)
{
	const skip_job *j = arg;
	const int64_t n = j->n;
	double *row = j->rows + (size_t)slot * (size_t)(2 * (n + 1));
	float *tmp = (float *)(row + n + 1);
	for (int64_t o = lo; o < hi; o++) {
		const float *xr = j->x + o * n, *sr = j->skip + (o % j->skip_rows) * n;
		float *s = j->sum ? j->sum + o * n : tmp, *yr = j->y + o * n;
		if (j->bias)
			for (int64_t k = 0; k < n; k++)
				s[k] = xr[k] + (sr[k] + j->bias[k]);
		else
			for (int64_t k = 0; k < n; k++)
				s[k] = xr[k] + sr[k];
		if (j->gamma) {
			float m = 0, r;
			if (j->l->rms)
				om_fast_rms_norm_f32(n, yr, s, j->gamma, (float)j->l->eps, &r);
			else
				om_fast_layer_norm_f32(n, yr, s, j->gamma, j->beta, (float)j->l->eps,
						       &m, &r);
			if (j->mean)
				j->mean[o] = m;
			if (j->inv)
				j->inv[o] = r;
			continue;
		}
		for (int64_t k = 0; k < n; k++)
			row[k] = s[k];
		om_norm_standardize(j->l, row, n, o);
		for (int64_t k = 0; k < n; k++)
			yr[k] = (float)row[k];
	}
}

/* the float rows (input, skip and bias float: skip_ln_ctx) */
static om_kind skip_ln_f32(om_ctx *c)
{
	const om_tensor *lin[3];
	om_tensor *lout[3];
	om_ctx lc;
	ln_plan p = {0};
	om_kind rc = skip_ln_ctx(c, &lc, lin, lout);
	if (!rc)
		rc = ln_prepare(&lc, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *beta = lin[2];
	const int64_t n = p.sl.n;
	/* one buffer: the parameters (2 n + 2 doubles: the rows start 16-byte aligned), then each
	 * slot's rows */
	const int64_t grain = NORM_SLICE_GRAIN / (n + 1) + 1;
	const int slots = om_par_slots(c->threads, p.sl.outer, grain);
	const size_t per = sizeof(double) * (size_t)(2 * (n + 1)); /* skip_job.rows */
	double *buf;
	if ((rc = om_ctx_scratch(c, sizeof(double) * (size_t)(2 * n + 2) + per * (size_t)slots,
				 "the parameters and rows", (void **)&buf)))
		return rc;
	double *rows = buf + 2 * n + 2;
	const int32_t m = x->rank - p.axis;
	rc = om_norm_expand_param(&lc, lin[1], m, x->dims + p.axis, n, buf, "gamma");
	if (!rc && beta)
		rc = om_norm_expand_param(&lc, beta, m, x->dims + p.axis, n, buf + n, "beta");
	const bool rms = c->op->param & LN_RMS;
	norm_std l = {.scale = buf, .bias = beta ? buf + n : NULL,
		    .eps = om_attr_float(c->node, "epsilon", 1e-12f), .mean = lout[1],
		    .inv = lout[2], .rms = rms, .smod = 1, .kdiv = 1};
	/* skip_fits: skip's last dim is n, its rows S or B * S (n = 0: no rows, none read) */
	const int64_t srows = n ? om_tensor_numel(c->in[1]) / n : 1;
	skip_job j = {.l = &l, .n = n, .skip_rows = srows ? srows : 1, .x = x->data,
		      .skip = c->in[1]->data,
		      .bias = skip_bias(c) ? skip_bias(c)->data : NULL,
		      .sum = c->nout > 3 && c->out[3] ? c->out[3]->data : NULL,
		      .y = c->out[0]->data, .rows = rows};
	/* fast mode: in float when gamma and beta are float rows of n and the Mean and InvStdDev
	 * asked for are float (as LayerNormalization's fast rows: the same bits; the root mean
	 * square rows through om_fast_rms_norm_f32) */
	const om_tensor *g = lin[1];
	if (!c->exact && om_norm_float_row(g, n, false) && om_norm_float_row(beta, n, true) &&
	    (!lout[1] || lout[1]->dtype == OM_FLOAT) && (!lout[2] || lout[2]->dtype == OM_FLOAT)) {
		j.gamma = g->data, j.beta = beta ? beta->data : NULL;
		j.mean = lout[1] ? lout[1]->data : NULL, j.inv = lout[2] ? lout[2]->data : NULL;
	}
	if (!rc)
		om_par_for_slots(c->threads, p.sl.outer, grain, skip_rows, &j);
	om_ctx_scratch_done(c, buf);
	return rc;
}

static om_kind om_skip_ln_kernel(om_ctx *c)
{
	const om_tensor *lin[3];
	om_tensor *lout[3];
	om_ctx lc;
	om_kind rc = skip_ln_ctx(c, &lc, lin, lout);
	if (rc)
		return rc;
	return om_f32_bridged(c->in[0]->dtype, false) ? om_run_as_f32(c, skip_ln_f32, false)
							: skip_ln_f32(c);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_SkipLayerNormalization_1[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* SkipLayerNormalization-1: input skip gamma [beta] [bias]
 * -> output [mean] [inv_std_var] [input_skip_bias_sum] */
static const om_sig sig_ms_SkipLayerNormalization_1 = {1, 3, 5, 1, 4, 0x18, 0xe, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_SkipLayerNormalization_1, NULL};
static const om_sig_attr attrs_ms_SkipSimplifiedLayerNormalization_1[] = {
	{"epsilon", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* SkipSimplifiedLayerNormalization-1: input skip gamma [bias]
 * -> output [mean] [inv_std_var] [input_skip_bias_sum] */
static const om_sig sig_ms_SkipSimplifiedLayerNormalization_1 = {1, 3, 4, 1, 4, 0x8, 0xe, 0x0,
	0x0, 0x0, 0x0, attrs_ms_SkipSimplifiedLayerNormalization_1, NULL};
static const om_sig_attr attrs_SimplifiedLayerNormalization_1[] = {{"axis", OM_ATTR_INT, 0},
	{"epsilon", OM_ATTR_FLOAT, 0}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* SimplifiedLayerNormalization-1: X scale -> Y [inv_std_var] */
static const om_sig sig_SimplifiedLayerNormalization_1 = {1, 2, 2, 1, 2, 0x0, 0x2, 0x0, 0x0, 0x0,
	0x0, attrs_SimplifiedLayerNormalization_1, NULL};
static const om_sig_attr attrs_LayerNormalization_1_v17[] = {{"axis", OM_ATTR_INT, 0},
	{"epsilon", OM_ATTR_FLOAT, 0}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LayerNormalization-17: X Scale [B] -> Y [Mean] [InvStdDev] */
static const om_sig sig_LayerNormalization_1_v17 = {17, 2, 3, 1, 3, 0x4, 0x6, 0x7, 0x1, 0x7, 0x7,
	attrs_LayerNormalization_1_v17, NULL};
static const om_sig_attr attrs_LayerNormalization_1[] = {{"axis", OM_ATTR_INT, 0},
	{"epsilon", OM_ATTR_FLOAT, 0}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LayerNormalization-1: X Scale [B] -> Y [Mean] [InvStdDev] */
static const om_sig sig_LayerNormalization_1 = {1, 2, 3, 1, 3, 0x4, 0x6, 0x0, 0x0, 0x0, 0x0,
	attrs_LayerNormalization_1, &sig_LayerNormalization_1_v17};
static const om_sig_attr attrs_RMSNormalization_23[] = {{"axis", OM_ATTR_INT, 0},
	{"epsilon", OM_ATTR_FLOAT, 0}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* RMSNormalization-23: X scale -> Y */
static const om_sig sig_RMSNormalization_23 = {23, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1,
	attrs_RMSNormalization_23, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"SkipLayerNormalization", "com.microsoft", 1, om_skip_ln_infer, om_skip_ln_kernel,
	 OM_OP_EXACT, &sig_ms_SkipLayerNormalization_1, OM_OPC_MS_SKIP_LAYER_NORM, NULL, 0, NULL},
	{"LayerNormalization", "", 1, om_ln_infer, om_ln_kernel, OM_OP_EXACT,
	 &sig_LayerNormalization_1, OM_OPC_LAYER_NORM, NULL, 0, NULL},
	{"RMSNormalization", "", 23, om_ln_infer, om_ln_kernel, OM_OP_EXACT,
	 &sig_RMSNormalization_23, OM_OPC_NONE, NULL, LN_RMS, NULL},
	{"SimplifiedLayerNormalization", "", 1, om_ln_infer, om_ln_kernel, OM_OP_EXACT,
	 &sig_SimplifiedLayerNormalization_1, OM_OPC_NONE, NULL, LN_RMS | LN_INV1, NULL},
	{"SkipSimplifiedLayerNormalization", "com.microsoft", 1, om_skip_ln_infer,
	 om_skip_ln_kernel, OM_OP_EXACT, &sig_ms_SkipSimplifiedLayerNormalization_1, OM_OPC_NONE,
	 NULL, LN_RMS, NULL},
};

const om_op_table om_ops_layernorm = OM_TABLE(rows);
