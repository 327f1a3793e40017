/* ops_lpnorm.c — LpNormalization: x / ||x||_p (p 1 or 2) along an axis, in double: exact. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>

#include "norm_common.h"

/* LpNormalization's p: 1 or 2 (checked by infer, so that planning refuses what cannot run) */
static om_kind lp_order(om_ctx *c, int64_t *p)
{
	*p = om_attr_int(c->node, "p", 2);
	if (*p != 1 && *p != 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p is %lld, not 1 or 2",
				(long long)*p);
	return OM_OK;
}

/* x / ||x||_p; a zero norm gives zeros */
static void lpnorm_fn(void *arg, double *v, int64_t n, int64_t s)
{
	(void)s;
	const int64_t p = *(const int64_t *)arg;
	double acc = 0;
	for (int64_t k = 0; k < n; k++) {
		const double t = p == 1 ? fabs(v[k]) : v[k] * v[k];
		acc += t;
	}
	const double norm = p == 1 ? acc : sqrt(acc);
	for (int64_t k = 0; k < n; k++)
		v[k] = norm == 0 ? 0 : v[k] / norm;
}

static om_kind lp_infer(om_ctx *c)
{
	norm_slices sl;
	int64_t p;
	om_kind rc = om_norm_axis_slices(c, false, &sl);
	if (!rc)
		rc = lp_order(c, &p);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind lp_kernel(om_ctx *c)
{
	norm_slices sl;
	int64_t p;
	om_kind rc = om_norm_axis_slices(c, false, &sl);
	if (!rc)
		rc = lp_order(c, &p);
	if (rc)
		return rc;
	return om_norm_each_slice(c, c->in[0], c->out[0], sl, lpnorm_fn, &p);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_LpNormalization_1_v22[] = {{"axis", OM_ATTR_INT, 0},
	{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LpNormalization-22: input -> output */
static const om_sig sig_LpNormalization_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_LpNormalization_1_v22, NULL};
static const om_sig_attr attrs_LpNormalization_1[] = {{"axis", OM_ATTR_INT, 0},
	{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LpNormalization-1: input -> output */
static const om_sig sig_LpNormalization_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LpNormalization_1, &sig_LpNormalization_1_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"LpNormalization", "", 1, lp_infer, lp_kernel, OM_OP_EXACT, &sig_LpNormalization_1,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_lpnorm = OM_TABLE(rows);
