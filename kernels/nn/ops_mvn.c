/* ops_mvn.c — MeanVarianceNormalization: (X - mean) / (sqrt(variance) + 1e-9) over axes, in
 * double: exact. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "norm_common.h"
#include "numrun.h"
#include "reduce_plan.h"

/* (X - mean) / (sqrt(variance) + 1e-9) over `axes` (default [0, 2, 3]), ONNX's function */
static om_kind mvn_plan(om_ctx *c, om_red_plan *p)
{
	const om_tensor *x = c->in[0];
	om_kind rc = om_norm_need_float(c, x, "X");
	if (rc)
		return rc;
	static const int64_t dflt[] = {0, 2, 3};
	int64_t n;
	const int64_t *axes = om_attr_ints(c->node, "axes", &n);
	if (!axes)
		axes = dflt, n = 3;
	bool mask[OM_MAX_RANK] = {false};
	if ((rc = om_red_axes_mask(c, axes, n, x->rank, mask)))
		return rc;
	om_red_plan_make(x, mask, true, p);
	return OM_OK;
}

static om_kind mvn_infer(om_ctx *c)
{
	om_red_plan p = {0};
	om_kind rc = mvn_plan(c, &p);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

typedef struct mvn_run {
	const om_tensor *x;
	om_tensor *y;
	int pass; /* 0: sum, 1: squared deviations, 2: write */
	double sum, mean, scale;
} mvn_run;

static void mvn_fn(void *arg, int64_t off, int64_t n, int64_t stride)
{
	mvn_run *r = arg;
	enum { CH = 256 };
	double v[CH];
	const size_t es = om_dtype_size(r->x->dtype);
	for (int64_t i0 = 0; i0 < n; i0 += CH) {
		const int64_t m = n - i0 < CH ? n - i0 : CH;
		const size_t at = (size_t)(off + i0 * stride) * es;
		om_load_f64(r->x->dtype, (const char *)r->x->data + at, stride, m, v);
		for (int64_t i = 0; i < m; i++) {
			const double d = v[i] - r->mean;
			if (r->pass == 0) {
				r->sum += v[i];
			} else if (r->pass == 1) {
				const double d2 = d * d;
				r->sum += d2;
			} else {
				v[i] = d * r->scale;
			}
		}
		if (r->pass == 2)
			om_store_f64(r->y->dtype, (char *)r->y->data + at, stride, v, m);
	}
}

static om_kind mvn_kernel(om_ctx *c)
{
	om_red_plan p = {0};
	om_kind rc = mvn_plan(c, &p);
	if (rc)
		return rc;
	int64_t kidx[OM_MAX_RANK] = {0}, base = 0;
	const double cnt = p.nred > 0 ? (double)p.nred : 1;
	for (int64_t o = 0; o < p.nout; o++, om_red_next_base(&p, kidx, &base)) {
		mvn_run r = {.x = c->in[0], .y = c->out[0]};
		om_red_each_run(&p, base, mvn_fn, &r);
		r.mean = r.sum / cnt;
		r.sum = 0, r.pass = 1;
		om_red_each_run(&p, base, mvn_fn, &r);
		r.scale = 1 / (sqrt(r.sum / cnt) + 1e-9);
		r.pass = 2;
		om_red_each_run(&p, base, mvn_fn, &r);
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_MeanVarianceNormalization_9_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* MeanVarianceNormalization-13: X -> Y */
static const om_sig sig_MeanVarianceNormalization_9_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1,
	0x1, attrs_MeanVarianceNormalization_9_v13, NULL};
static const om_sig_attr attrs_MeanVarianceNormalization_9[] = {{"axes", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* MeanVarianceNormalization-9: X -> Y */
static const om_sig sig_MeanVarianceNormalization_9 = {9, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_MeanVarianceNormalization_9, &sig_MeanVarianceNormalization_9_v13};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MeanVarianceNormalization", "", 9, mvn_infer, mvn_kernel, OM_OP_EXACT,
	 &sig_MeanVarianceNormalization_9, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_mvn = OM_TABLE(rows);
