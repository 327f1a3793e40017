/* ops_softmax.c — Softmax, LogSoftmax and Hardmax along an axis (before opset 13 over the
 * input coerced to 2-D at it), in double (exp/log from detmath.h): exact; fast mode's float
 * rows through om_fast_softmax_f32. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "fastmath.h"
#include "norm_common.h"
#include "parallel.h"

/* The rows' param: which op (AX_OP bits), and AX_2D for the rows before opset 13, whose input
 * is coerced to 2-D at `axis` (default 1); the others run along the one axis (default -1). */
enum { AX_SOFTMAX, AX_LOG_SOFTMAX, AX_HARDMAX, AX_OP = 3, AX_2D = 4 };

static om_kind axis_slices(om_ctx *c, norm_slices *sl)
{
	return om_norm_axis_slices(c, c->op->param & AX_2D, sl);
}

static om_kind same_shape_infer(om_ctx *c)
{
	norm_slices sl;
	om_kind rc = axis_slices(c, &sl);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static double slice_max(const double *v, int64_t n)
{
	double m = -INFINITY;
	for (int64_t k = 0; k < n; k++)
		if (v[k] > m)
			m = v[k];
	return m;
}

static void softmax_fn(void *arg, double *v, int64_t n, int64_t s)
{
	(void)s;
	const bool log_form = *(const bool *)arg;
	const double m = slice_max(v, n);
	double sum = 0;
	for (int64_t k = 0; k < n; k++) {
		const double d = v[k] - m;
		const double e = om_det_exp(d);
		sum += e;
		v[k] = log_form ? d : e;
	}
	const double lsum = om_det_log(sum);
	for (int64_t k = 0; k < n; k++)
		v[k] = log_form ? v[k] - lsum : v[k] / sum;
}

static void hardmax_fn(void *arg, double *v, int64_t n, int64_t s)
{
	(void)arg, (void)s;
	int64_t best = 0;
	for (int64_t k = 1; k < n; k++)
		if (v[k] > v[best])
			best = k;
	for (int64_t k = 0; k < n; k++)
		v[k] = k == best;
}

typedef struct softmax_job {
	int64_t n;
	bool log_form;
	const float *x;
	float *y;
} softmax_job;

static void softmax_rows(void *arg, int64_t lo, int64_t hi)
{
	const softmax_job *j = arg;
	om_fast_softmax_f32(hi - lo, j->n, j->y + lo * j->n, j->x + lo * j->n, j->log_form);
}

static om_kind axis_kernel(om_ctx *c)
{
	norm_slices sl;
	om_kind rc = axis_slices(c, &sl);
	if (rc)
		return rc;
	const int32_t op = c->op->param & AX_OP;
	if (op == AX_HARDMAX)
		return om_norm_each_slice(c, c->in[0], c->out[0], sl, hardmax_fn, NULL);
	bool log_form = op == AX_LOG_SOFTMAX;
	if (!c->exact && c->in[0]->dtype == OM_FLOAT && sl.inner == 1) {
		softmax_job j = {sl.n, log_form, c->in[0]->data, c->out[0]->data};
		om_par_for(c->threads, sl.outer, NORM_SLICE_GRAIN / (sl.n + 1) + 1, softmax_rows,
			   &j);
		return OM_OK;
	}
	return om_norm_each_slice(c, c->in[0], c->out[0], sl, softmax_fn, &log_form);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Softmax_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Softmax-1: input -> output */
static const om_sig sig_Softmax_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Softmax_1,
	NULL};
static const om_sig_attr attrs_Softmax_13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Softmax-13: input -> output */
static const om_sig sig_Softmax_13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Softmax_13, NULL};
static const om_sig_attr attrs_LogSoftmax_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LogSoftmax-1: input -> output */
static const om_sig sig_LogSoftmax_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LogSoftmax_1, NULL};
static const om_sig_attr attrs_LogSoftmax_13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* LogSoftmax-13: input -> output */
static const om_sig sig_LogSoftmax_13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_LogSoftmax_13, NULL};
static const om_sig_attr attrs_Hardmax_1[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Hardmax-1: input -> output */
static const om_sig sig_Hardmax_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_Hardmax_1,
	NULL};
static const om_sig_attr attrs_Hardmax_13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Hardmax-13: input -> output */
static const om_sig sig_Hardmax_13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_Hardmax_13, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Softmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Softmax_1, OM_OPC_NONE,
	 NULL, AX_SOFTMAX | AX_2D, NULL},
	{"Softmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT | OM_OP_PERM_AXIS,
	 &sig_Softmax_13, OM_OPC_NONE, NULL, AX_SOFTMAX, NULL},
	{"LogSoftmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_LogSoftmax_1,
	 OM_OPC_NONE, NULL, AX_LOG_SOFTMAX | AX_2D, NULL},
	{"LogSoftmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT | OM_OP_PERM_AXIS,
	 &sig_LogSoftmax_13, OM_OPC_NONE, NULL, AX_LOG_SOFTMAX, NULL},
	{"Hardmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Hardmax_1, OM_OPC_NONE,
	 NULL, AX_HARDMAX | AX_2D, NULL},
	{"Hardmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT | OM_OP_PERM_AXIS,
	 &sig_Hardmax_13, OM_OPC_NONE, NULL, AX_HARDMAX, NULL},
};

const om_op_table om_ops_softmax = OM_TABLE(rows);
