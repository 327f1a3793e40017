/* ops_lrn.c — LRN: each value over a power of the sum of squares of the channels around it,
 * in double (exp/log from detmath.h): exact. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "norm_common.h"
#include "numrun.h"

/* y = x / (bias + alpha / size * sum of x^2 over the size channels around c)^beta; the power
 * is exp(beta * log(.)) from detmath.h so that it stays exact */
static om_kind lrn_prepare(om_ctx *c, int64_t *C, int64_t *spatial, int64_t *size)
{
	om_kind rc = om_norm_channels(c, C, spatial);
	if (rc)
		return rc;
	*size = om_attr_int(c->node, "size", 0);
	if (*size <= 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "size %lld",
				(long long)*size);
	return OM_OK;
}

static om_kind lrn_infer(om_ctx *c)
{
	int64_t C = 0, sp = 0, size = 0;
	om_kind rc = lrn_prepare(c, &C, &sp, &size);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind lrn_kernel(om_ctx *c)
{
	int64_t C = 0, sp = 0, size = 0;
	om_kind rc = lrn_prepare(c, &C, &sp, &size);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const double alpha = om_attr_float(c->node, "alpha", 1e-4f);
	const double beta = om_attr_float(c->node, "beta", 0.75f);
	const double bias = om_attr_float(c->node, "bias", 1.0f);
	const int64_t lo = (size - 1) / 2, hi = size - 1 - lo, N = x->dims[0];
	const int64_t cs = C * sp;
	double *v = malloc(sizeof(double) * (size_t)(2 * cs + 1)), *y = v + cs;
	if (!v)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	const size_t es = om_dtype_size(x->dtype);
	for (int64_t b = 0; b < N; b++) {
		const size_t off = (size_t)(b * cs) * es;
		om_load_f64(x->dtype, (const char *)x->data + off, 1, cs, v);
		for (int64_t ch = 0; ch < C; ch++) {
			const int64_t j0 = ch - lo > 0 ? ch - lo : 0;
			const int64_t j1 = ch + hi < C ? ch + hi : C - 1;
			for (int64_t k = 0; k < sp; k++) {
				double sq = 0;
				for (int64_t j = j0; j <= j1; j++) {
					const double t = v[j * sp + k] * v[j * sp + k];
					sq += t;
				}
				const double base = bias + alpha / (double)size * sq;
				const double den = om_det_exp(beta * om_det_log(base));
				y[ch * sp + k] = v[ch * sp + k] / den;
			}
		}
		om_store_f64(x->dtype, (char *)c->out[0]->data + off, 1, y, cs);
	}
	free(v);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_LRN_1_v13[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {"bias", OM_ATTR_FLOAT, 0}, {"size", OM_ATTR_INT, 1},
	{NULL, 0, 0}};
/* LRN-13: X -> Y */
static const om_sig sig_LRN_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, attrs_LRN_1_v13,
	NULL};
static const om_sig_attr attrs_LRN_1[] = {{"alpha", OM_ATTR_FLOAT, 0}, {"beta", OM_ATTR_FLOAT, 0},
	{"bias", OM_ATTR_FLOAT, 0}, {"size", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* LRN-1: X -> Y */
static const om_sig sig_LRN_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_LRN_1,
	&sig_LRN_1_v13};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"LRN", "", 1, lrn_infer, lrn_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_LRN_1, OM_OPC_NONE,
	 NULL, 0, NULL},
};

const om_op_table om_ops_lrn = OM_TABLE(rows);
