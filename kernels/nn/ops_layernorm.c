/* ops_norm.c — Softmax, LogSoftmax, Hardmax, LpNormalization, LayerNormalization,
 * RMSNormalization, com.microsoft SkipLayerNormalization, InstanceNormalization,
 * GroupNormalization, BatchNormalization, MeanVarianceNormalization, LRN. Every kernel
 * computes in double (exp/log from detmath.h), folds in a fixed order (sums in eight lanes,
 * see lane_sum) and stores in the input's type: all exact. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "conv_epilogue.h"
#include "detmath.h"
#include "fastmath.h"
#include "layout.h"
#include "numrun.h"
#include "op.h"
#include "parallel.h"
#include "reduce_plan.h"

static om_kind need_float(om_ctx *c, const om_tensor *t, const char *what)
{
	if (!t)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is missing", what);
	if (!om_is_float_type(t->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is %s, not a float type",
				what, om_dtype_name(t->dtype));
	return OM_OK;
}

static int64_t dims_product(const int64_t *dims, int32_t from, int32_t to)
{
	int64_t p = 1;
	for (int32_t d = from; d < to; d++)
		p *= dims[d];
	return p;
}

/* ---- sums in eight lanes: independent adds (they vectorize), folded in a fixed order, so
 * the result is the same on every ISA (om_red_fold8) ------------------------------------- */

static inline double lane_sum(const double *v, int64_t n)
{
	double l[8] = {0};
	int64_t k = 0;
	for (; k + 8 <= n; k += 8)
		for (int j = 0; j < 8; j++)
			l[j] += v[k + j];
	for (int j = 0; k < n; k++, j++)
		l[j] += v[k];
	return om_red_fold8(l);
}

/* sum of (v[k] - mean)^2 */
static inline double lane_sqdev(const double *v, int64_t n, double mean)
{
	double l[8] = {0};
	int64_t k = 0;
	for (; k + 8 <= n; k += 8)
		for (int j = 0; j < 8; j++) {
			const double d = v[k + j] - mean;
			l[j] += d * d;
		}
	for (int j = 0; k < n; k++, j++) {
		const double d = v[k] - mean;
		l[j] += d * d;
	}
	return om_red_fold8(l);
}

/* On x86-64 the hot row kernels get an AVX2 clone, picked at load time: the same operations
 * (no contraction, the lanes above), wider vectors, so the same bits */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define NORM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NORM_CLONES
#endif

/* ---- slices: runs of n elements, `inner` apart, one per (outer, inner) position ---------- */

typedef struct slices {
	int64_t outer, n, inner;
} slices;

/* fn rewrites the n values of slice s (= o * inner + i) in place */
typedef void (*slice_fn)(void *arg, double *v, int64_t n, int64_t s);

enum { SLICE_GRAIN = 1 << 14 }; /* elements of slices worth a thread */

typedef struct slice_job {
	const om_tensor *x;
	om_tensor *y;
	slices sl;
	slice_fn fn;
	void *arg;
	double *bufs; /* sl.n doubles per worker */
} slice_job;

/* slices [lo, hi) (s = o * inner + i), each loaded into the worker's buffer, rewritten by fn
 * and stored: independent, so the same bits whichever worker runs one */
static void slice_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const slice_job *j = arg;
	const slices sl = j->sl;
	const om_tensor *x = j->x;
	om_tensor *y = j->y;
	double *buf = j->bufs + (size_t)slot * (size_t)sl.n;
	const size_t es = om_dtype_size(x->dtype);
	const bool f32_rows = x->dtype == OM_FLOAT && y->dtype == OM_FLOAT && sl.inner == 1;
	for (int64_t s = lo; s < hi; s++) {
		const int64_t o = s / sl.inner, i = s % sl.inner;
		const size_t off = (size_t)(o * sl.n * sl.inner + i) * es;
		if (f32_rows) { /* om_load_f64/om_store_f64's conversions, vectorized */
			const float *xr = (const float *)x->data + o * sl.n;
			for (int64_t k = 0; k < sl.n; k++)
				buf[k] = xr[k];
			j->fn(j->arg, buf, sl.n, o);
			float *yr = (float *)y->data + o * sl.n;
			for (int64_t k = 0; k < sl.n; k++)
				yr[k] = (float)buf[k];
			continue;
		}
		om_load_f64(x->dtype, (const char *)x->data + off, sl.inner, sl.n, buf);
		j->fn(j->arg, buf, sl.n, s);
		om_store_f64(y->dtype, (char *)y->data + off, sl.inner, buf, sl.n);
	}
}

/* fn over every slice of x into y, the slices split over the run's threads (fn must write
 * nothing but its slice and its slice's entries) */
static om_kind each_slice(om_ctx *c, const om_tensor *x, om_tensor *y, slices sl, slice_fn fn,
			  void *arg)
{
	const int64_t count = sl.outer * sl.inner, grain = SLICE_GRAIN / (sl.n + 1) + 1;
	const int slots = om_par_slots(c->threads, count, grain);
	slice_job j = {x, y, sl, fn, arg,
		       malloc(sizeof(double) * (size_t)slots * (size_t)(sl.n > 0 ? sl.n : 1))};
	if (!j.bufs)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for %lld values",
				(long long)sl.n);
	om_par_for_slots(c->threads, count, grain, slice_piece, &j);
	free(j.bufs);
	return OM_OK;
}

/* ---- Softmax, LogSoftmax, Hardmax, LpNormalization ---------------------------------------- */

/* The rows' param: which op (AX_OP bits), and AX_2D for the rows before opset 13, whose input
 * is coerced to 2-D at `axis` (default 1); the others run along the one axis (default -1). */
enum { AX_SOFTMAX, AX_LOG_SOFTMAX, AX_HARDMAX, AX_LP_NORM, AX_OP = 3, AX_2D = 4 };

static om_kind axis_slices(om_ctx *c, slices *sl)
{
	const om_tensor *x = c->in[0];
	om_kind rc = need_float(c, x, "the input");
	if (rc)
		return rc;
	const bool coerce = c->op->param & AX_2D;
	int32_t axis;
	if (coerce && x->rank == 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "the input is a scalar");
	rc = om_norm_axis(c, om_attr_int(c->node, "axis", coerce ? 1 : -1), x->rank, &axis);
	if (rc)
		return rc;
	sl->outer = dims_product(x->dims, 0, axis);
	sl->n = coerce ? dims_product(x->dims, axis, x->rank) : x->dims[axis];
	sl->inner = coerce ? 1 : dims_product(x->dims, axis + 1, x->rank);
	return OM_OK;
}

/* LpNormalization's p: 1 or 2 (checked by infer, so that planning refuses what cannot run) */
static om_kind lp_order(om_ctx *c, int64_t *p)
{
	*p = om_attr_int(c->node, "p", 2);
	if (*p != 1 && *p != 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p is %lld, not 1 or 2",
				(long long)*p);
	return OM_OK;
}

static om_kind same_shape_infer(om_ctx *c)
{
	slices sl;
	int64_t p;
	om_kind rc = axis_slices(c, &sl);
	if (!rc && (c->op->param & AX_OP) == AX_LP_NORM)
		rc = lp_order(c, &p);
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
	slices sl;
	om_kind rc = axis_slices(c, &sl);
	if (rc)
		return rc;
	const int32_t op = c->op->param & AX_OP;
	if (op == AX_HARDMAX)
		return each_slice(c, c->in[0], c->out[0], sl, hardmax_fn, NULL);
	if (op == AX_LP_NORM) {
		int64_t p;
		if ((rc = lp_order(c, &p)))
			return rc;
		return each_slice(c, c->in[0], c->out[0], sl, lpnorm_fn, &p);
	}
	bool log_form = op == AX_LOG_SOFTMAX;
	if (!c->exact && c->in[0]->dtype == OM_FLOAT && sl.inner == 1) {
		softmax_job j = {sl.n, log_form, c->in[0]->data, c->out[0]->data};
		om_par_for(c->threads, sl.outer, SLICE_GRAIN / (sl.n + 1) + 1, softmax_rows, &j);
		return OM_OK;
	}
	return each_slice(c, c->in[0], c->out[0], sl, softmax_fn, &log_form);
}

/* ---- LayerNormalization ------------------------------------------------------------------ */

/* p (unidirectionally broadcast to the m dims td, n elements) expanded into dst[n] */
static om_kind expand_param(om_ctx *c, const om_tensor *p, int32_t m, const int64_t *td, int64_t n,
			    double *dst, const char *what)
{
	if (p->rank > m)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s has rank %d, more than the %d normalized dims", what, p->rank,
				m);
	int64_t pstr[OM_MAX_RANK] = {0}, s = 1;
	for (int32_t d = m - 1; d >= m - p->rank; d--) {
		const int64_t e = p->dims[d - (m - p->rank)];
		if (e != 1 && e != td[d])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%s does not broadcast to the normalized shape", what);
		pstr[d] = e == 1 ? 0 : s;
		s *= e;
	}
	if (!dst)
		return OM_OK;
	if (om_tensor_numel(p) == n) { /* every dim is td's: the same row-major order */
		om_load_f64(p->dtype, p->data, 1, n, dst);
		return OM_OK;
	}
	const size_t es = om_dtype_size(p->dtype);
	int64_t idx[OM_MAX_RANK] = {0}, off = 0;
	for (int64_t k = 0; k < n; k++) {
		om_load_f64(p->dtype, (const char *)p->data + (size_t)off * es, 1, 1, &dst[k]);
		for (int32_t d = m - 1; d >= 0; d--) {
			off += pstr[d];
			if (++idx[d] < td[d])
				break;
			off -= pstr[d] * td[d];
			idx[d] = 0;
		}
	}
	return OM_OK;
}

/* The rows' param: RMSNormalization takes no mean out (LN_RMS), LayerNormalization does (0) */
enum { LN_RMS = 1 };

typedef struct ln_plan {
	int32_t axis;
	slices sl;
	int32_t stash;
} ln_plan;

static om_kind ln_prepare(om_ctx *c, ln_plan *p)
{
	const om_tensor *x = c->in[0];
	om_kind rc = need_float(c, x, "X");
	if (!rc)
		rc = need_float(c, c->nin > 1 ? c->in[1] : NULL, "Scale");
	if (!rc && c->nin > 2 && c->in[2])
		rc = need_float(c, c->in[2], "B");
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "axis", -1), x->rank, &p->axis);
	if (rc)
		return rc;
	p->stash = (int32_t)om_attr_int(c->node, "stash_type", OM_FLOAT);
	if (!om_is_float_type(p->stash))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "stash_type %d",
				(int)p->stash);
	p->sl = (slices){dims_product(x->dims, 0, p->axis),
			 dims_product(x->dims, p->axis, x->rank), 1};
	const int32_t m = x->rank - p->axis;
	for (int i = 1; i < 3 && i < c->nin; i++)
		if (c->in[i] && (rc = expand_param(c, c->in[i], m, x->dims + p->axis, 0, NULL,
						   i == 1 ? "Scale" : "B")))
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

/* one standardization: a slice s of n values, its parameters at
 * index (s % smod) * smul + k / kdiv for element k */
typedef struct ln_ctx {
	const double *scale, *bias; /* bias NULL when absent */
	om_tensor *mean, *inv;      /* optional outputs, one element per slice */
	double eps;
	bool rms;                   /* RMSNormalization: no mean is taken out */
	int64_t smod, smul, kdiv;
} ln_ctx;

/* mean and population variance (lane sums), then (x - mean) * inv * scale + bias */
NORM_CLONES static void standardize_fn(void *arg, double *v, int64_t n, int64_t s)
{
	const ln_ctx *l = arg;
	const double sum = l->rms ? 0 : lane_sum(v, n);
	const double mean = n ? sum / (double)n : 0;
	const double sq = lane_sqdev(v, n, mean);
	const double inv = 1 / sqrt((n ? sq / (double)n : 0) + l->eps);
	const int64_t base = (s % l->smod) * l->smul;
	if (l->kdiv == 1) { /* one parameter per element: vectorizes */
		const double *sc = l->scale + base, *bi = l->bias ? l->bias + base : NULL;
		if (bi)
			for (int64_t k = 0; k < n; k++)
				v[k] = (v[k] - mean) * inv * sc[k] + bi[k];
		else
			for (int64_t k = 0; k < n; k++)
				v[k] = (v[k] - mean) * inv * sc[k];
	} else {
		for (int64_t k = 0; k < n; k++) {
			const int64_t j = base + k / l->kdiv;
			const double y = (v[k] - mean) * inv * l->scale[j];
			v[k] = l->bias ? y + l->bias[j] : y;
		}
	}
	if (l->mean)
		om_store_f64(l->mean->dtype, (char *)l->mean->data +
				     (size_t)s * om_dtype_size(l->mean->dtype), 1, &mean, 1);
	if (l->inv)
		om_store_f64(l->inv->dtype, (char *)l->inv->data +
				     (size_t)s * om_dtype_size(l->inv->dtype), 1, &inv, 1);
}

/* fast mode's LayerNormalization rows in float (om_fast_layer_norm_f32) */
typedef struct ln_fast_job {
	int64_t n;
	float eps;
	const float *x, *scale, *bias;
	float *y, *mean, *inv; /* mean, inv: NULL when not asked */
} ln_fast_job;

static void ln_fast_rows(void *arg, int64_t lo, int64_t hi)
{
	const ln_fast_job *j = arg;
	for (int64_t o = lo; o < hi; o++) {
		float m, r;
		om_fast_layer_norm_f32(j->n, j->y + o * j->n, j->x + o * j->n, j->scale, j->bias,
				       j->eps, &m, &r);
		if (j->mean)
			j->mean[o] = m;
		if (j->inv)
			j->inv[o] = r;
	}
}

/* a float tensor of n elements, or absent (NULL) when `optional` */
static bool float_row(const om_tensor *t, int64_t n, bool optional)
{
	return t ? t->dtype == OM_FLOAT && om_tensor_numel(t) == n : optional;
}

static om_kind om_ln_kernel(om_ctx *c) /* also ONNX Runtime's LayerNormalization (since 1) */
{
	ln_plan p = {0};
	om_kind rc = ln_prepare(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *b = c->nin > 2 ? c->in[2] : NULL;
	const int64_t n = p.sl.n;
	om_tensor *mean = c->nout > 1 ? c->out[1] : NULL, *inv = c->nout > 2 ? c->out[2] : NULL;
	const bool rms = c->op->param & LN_RMS;
	if (!c->exact && x->dtype == OM_FLOAT && !rms &&
	    float_row(c->in[1], n, false) && float_row(b, n, true) &&
	    (!mean || mean->dtype == OM_FLOAT) && (!inv || inv->dtype == OM_FLOAT)) {
		ln_fast_job j = {n, om_attr_float(c->node, "epsilon", 1e-5f), x->data,
				 c->in[1]->data, b ? b->data : NULL, c->out[0]->data,
				 mean ? mean->data : NULL, inv ? inv->data : NULL};
		om_par_for(c->threads, p.sl.outer, SLICE_GRAIN / (n + 1) + 1, ln_fast_rows, &j);
		return OM_OK;
	}
	double *buf = malloc(sizeof(double) * (size_t)(2 * n + 1));
	if (!buf)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	const int32_t m = x->rank - p.axis;
	rc = expand_param(c, c->in[1], m, x->dims + p.axis, n, buf, "Scale");
	if (!rc && b)
		rc = expand_param(c, b, m, x->dims + p.axis, n, buf + n, "B");
	ln_ctx l = {.scale = buf, .bias = b ? buf + n : NULL,
		    .eps = om_attr_float(c->node, "epsilon", 1e-5f),
		    .mean = c->nout > 1 ? c->out[1] : NULL, .inv = c->nout > 2 ? c->out[2] : NULL,
		    .rms = rms, .smod = 1, .kdiv = 1};
	if (!rc)
		rc = each_slice(c, x, c->out[0], p.sl, standardize_fn, &l);
	free(buf);
	return rc;
}

/* com.microsoft SkipLayerNormalization(input, skip, gamma, beta?, bias?), for
 * float input and skip of one shape and a 1-D float bias of the last dim: per row, the sum
 * input + (skip + bias) in float (the bits of the Adds it replaces), kept in output 3
 * (input_skip_bias_sum) when asked, then standardize_fn over the last axis, as
 * LayerNormalization(sum, gamma, beta) with the node's epsilon (default 1e-12). */
static om_kind skip_ln_ctx(om_ctx *c, om_ctx *lc, const om_tensor **lin, om_tensor **lout)
{
	const om_tensor *x = c->nin > 1 ? c->in[0] : NULL, *sk = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *b = c->nin > 4 ? c->in[4] : NULL;
	if (!x || !sk || c->nin < 3 || c->nout < 1 || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"SkipLayerNormalization takes input, skip and gamma");
	if (x->dtype != OM_FLOAT || sk->dtype != OM_FLOAT || x->rank < 1 || sk->rank != x->rank ||
	    memcmp(x->dims, sk->dims, sizeof(int64_t) * (size_t)x->rank) ||
	    (b && (b->dtype != OM_FLOAT || b->rank != 1 || b->dims[0] != x->dims[x->rank - 1])))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"SkipLayerNormalization: float input and skip of one shape and a "
				"1-D bias of the last dim only");
	lin[0] = x;
	lin[1] = c->in[2];
	lin[2] = c->nin > 3 ? c->in[3] : NULL;
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
	ln_ctx *l; /* read only (standardize_fn's argument) */
	int64_t n;
	const float *x, *skip, *bias; /* bias: NULL when absent */
	float *sum, *y;               /* sum: input_skip_bias_sum, NULL when not asked */
	double *rows;                 /* per worker: n + 1 doubles, then n + 1 floats */
	const float *gamma, *beta;    /* fast mode: the row in float (om_fast_layer_norm_f32);
					 NULL: standardize_fn */
	float *mean, *inv;            /* fast mode's outputs 1 and 2, NULL when not asked */
} skip_job;

/* rows [lo, hi): the sum input + (skip + bias) in float (into output 3 when asked), then
 * normalized in float (fast mode) or by standardize_fn */
static void skip_rows(void *arg, int64_t lo, int64_t hi, int slot)
{
	const skip_job *j = arg;
	const int64_t n = j->n;
	double *row = j->rows + (size_t)slot * (size_t)(2 * (n + 1));
	float *tmp = (float *)(row + n + 1);
	for (int64_t o = lo; o < hi; o++) {
		const float *xr = j->x + o * n, *sr = j->skip + o * n;
		float *s = j->sum ? j->sum + o * n : tmp, *yr = j->y + o * n;
		if (j->bias)
			for (int64_t k = 0; k < n; k++)
				s[k] = xr[k] + (sr[k] + j->bias[k]);
		else
			for (int64_t k = 0; k < n; k++)
				s[k] = xr[k] + sr[k];
		if (j->gamma) {
			float m, r;
			om_fast_layer_norm_f32(n, yr, s, j->gamma, j->beta, (float)j->l->eps, &m,
					       &r);
			if (j->mean)
				j->mean[o] = m;
			if (j->inv)
				j->inv[o] = r;
			continue;
		}
		for (int64_t k = 0; k < n; k++)
			row[k] = s[k];
		standardize_fn(j->l, row, n, o);
		for (int64_t k = 0; k < n; k++)
			yr[k] = (float)row[k];
	}
}

static om_kind om_skip_ln_kernel(om_ctx *c)
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
	double *buf = malloc(sizeof(double) * (size_t)(2 * n + 1));
	if (!buf)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	const int32_t m = x->rank - p.axis;
	rc = expand_param(&lc, lin[1], m, x->dims + p.axis, n, buf, "gamma");
	if (!rc && beta)
		rc = expand_param(&lc, beta, m, x->dims + p.axis, n, buf + n, "beta");
	ln_ctx l = {.scale = buf, .bias = beta ? buf + n : NULL,
		    .eps = om_attr_float(c->node, "epsilon", 1e-12f), .mean = lout[1],
		    .inv = lout[2], .smod = 1, .kdiv = 1};
	const int64_t grain = SLICE_GRAIN / (n + 1) + 1;
	const int slots = om_par_slots(c->threads, p.sl.outer, grain);
	const size_t per = sizeof(double) * (size_t)(2 * (n + 1)); /* skip_job.rows */
	double *rows = rc ? NULL : malloc(per * (size_t)slots);
	if (!rc && !rows)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the rows");
	skip_job j = {.l = &l, .n = n, .x = x->data, .skip = c->in[1]->data,
		      .bias = c->nin > 4 && c->in[4] ? c->in[4]->data : NULL,
		      .sum = c->nout > 3 && c->out[3] ? c->out[3]->data : NULL,
		      .y = c->out[0]->data, .rows = rows};
	/* fast mode: in float when gamma and beta are float rows of n and the Mean and InvStdDev
	 * asked for are float (as LayerNormalization's fast rows: the same bits) */
	const om_tensor *g = lin[1];
	if (!c->exact && float_row(g, n, false) && float_row(beta, n, true) &&
	    (!lout[1] || lout[1]->dtype == OM_FLOAT) && (!lout[2] || lout[2]->dtype == OM_FLOAT)) {
		j.gamma = g->data, j.beta = beta ? beta->data : NULL;
		j.mean = lout[1] ? lout[1]->data : NULL, j.inv = lout[2] ? lout[2]->data : NULL;
	}
	if (!rc)
		om_par_for_slots(c->threads, p.sl.outer, grain, skip_rows, &j);
	free(rows);
	free(buf);
	return rc;
}

/* ---- InstanceNormalization and BatchNormalization ---------------------------------------- */

/* t must hold `count` elements of a float type; loaded into dst */
static om_kind load_param(om_ctx *c, const om_tensor *t, int64_t count, double *dst,
			  const char *what)
{
	om_kind rc = need_float(c, t, what);
	if (rc)
		return rc;
	if (om_tensor_numel(t) != count)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s has %lld elements, expected %lld", what,
				(long long)om_tensor_numel(t), (long long)count);
	if (dst && !om_load_f64(t->dtype, t->data, 1, count, dst))
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "cannot load %s", what);
	return OM_OK;
}

static om_kind channels(om_ctx *c, int64_t *C, int64_t *spatial)
{
	const om_tensor *x = c->in[0];
	om_kind rc = need_float(c, x, "X");
	if (rc)
		return rc;
	if (x->rank < 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X has rank %d, needs N and C", x->rank);
	*C = x->dims[1];
	*spatial = dims_product(x->dims, 2, x->rank);
	return OM_OK;
}

/* InstanceNormalization (G = C) and GroupNormalization (G = num_groups) standardize C / G
 * channels of one sample at a time; scale and bias hold one value per channel, or per group
 * for GroupNormalization before opset 21. The rows' param: GN_GROUP for GroupNormalization,
 * GN_PER_GROUP where its scale and bias are per group. */
enum { GN_GROUP = 1, GN_PER_GROUP = 2 };

typedef struct gn_plan {
	int64_t C, spatial, G, per;
} gn_plan;

static om_kind gn_prepare(om_ctx *c, gn_plan *p, double *params)
{
	om_kind rc = channels(c, &p->C, &p->spatial);
	if (rc)
		return rc;
	const bool group = c->op->param & GN_GROUP;
	p->G = group ? om_attr_int(c->node, "num_groups", 0) : p->C;
	if (group && (p->G <= 0 || p->C % p->G))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"num_groups %lld does not divide %lld channels", (long long)p->G,
				(long long)p->C);
	p->per = c->op->param & GN_PER_GROUP ? p->G : p->C;
	for (int i = 1; i < 3 && !rc; i++)
		rc = load_param(c, i < c->nin ? c->in[i] : NULL, p->per,
				params ? params + (i - 1) * p->per : NULL, i == 1 ? "scale" : "B");
	return rc;
}

static om_kind gn_infer(om_ctx *c)
{
	gn_plan p = {0};
	om_kind rc = gn_prepare(c, &p, NULL);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind gn_kernel(om_ctx *c)
{
	gn_plan p = {0};
	om_kind rc = gn_prepare(c, &p, NULL);
	if (rc)
		return rc;
	double *par = malloc(sizeof(double) * (size_t)(2 * p.per + 1));
	if (!par)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	rc = gn_prepare(c, &p, par);
	/* G is 0 only for an InstanceNormalization of 0 channels: no slices, nothing to do */
	const int64_t per_group = p.G > 0 ? p.C / p.G : 0, n = per_group * p.spatial;
	const bool per_channel = p.per == p.C;
	ln_ctx l = {.scale = par, .bias = par + p.per,
		    .eps = om_attr_float(c->node, "epsilon", 1e-5f), .smod = p.G,
		    .smul = per_channel && per_group ? per_group : 1,
		    .kdiv = per_channel ? (p.spatial > 0 ? p.spatial : 1) : (n > 0 ? n : 1)};
	slices sl = {c->in[0]->dims[0] * p.G, n, 1};
	if (!rc)
		rc = each_slice(c, c->in[0], c->out[0], sl, standardize_fn, &l);
	free(par);
	return rc;
}

/* Inference: Y = (X - mean) / sqrt(var + eps) * scale + B per channel (per element of a
 * sample when opset 7's spatial = 0). Training (14+): the batch's own statistics, and the
 * running statistics as outputs 1 and 2. The rows' param: BN_SPATIAL where the node has
 * `spatial` (opset 7), BN_TRAINING where it has `training_mode` (14+). */
enum { BN_SPATIAL = 1, BN_TRAINING = 2 };

/* the node asks for per-element parameters (spatial = 0) or for training */
static bool bn_per_elem(const om_ctx *c)
{
	return c->op->param & BN_SPATIAL && om_attr_int(c->node, "spatial", 1) == 0;
}

static bool bn_training(const om_ctx *c)
{
	return c->op->param & BN_TRAINING && om_attr_int(c->node, "training_mode", 0);
}

typedef struct bn_plan {
	int64_t C, spatial, per; /* per: parameters per sample (C, or C * spatial) */
	bool training;
} bn_plan;

static om_kind bn_prepare(om_ctx *c, bn_plan *p, double *par)
{
	om_kind rc = channels(c, &p->C, &p->spatial);
	if (rc)
		return rc;
	p->training = bn_training(c);
	const bool per_elem = bn_per_elem(c);
	p->per = per_elem ? p->C * p->spatial : p->C;
	if (p->training && per_elem)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "training without spatial");
	static const char *const names[] = {"scale", "B", "mean", "var"};
	for (int i = 0; i < 4 && !rc; i++)
		rc = load_param(c, i + 1 < c->nin ? c->in[i + 1] : NULL, p->per,
				par ? par + i * p->per : NULL, names[i]);
	for (int i = 1; i < c->nout && !rc; i++)
		if (c->out[i] && (!p->training || i > 2))
			rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				      "output %d is only made in training mode (opset 14+)", i);
	return rc;
}

static om_kind bn_infer(om_ctx *c)
{
	bn_plan p = {0};
	om_kind rc = bn_prepare(c, &p, NULL);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	for (int i = 1; i < 3 && i < c->nout; i++)
		if (c->out[i])
			om_set_shape(c->out[i], c->in[i + 2]->dtype, 1, &p.C);
	return OM_OK;
}

/* row (b, ch) of x: its spatial elements, as double */
static void bn_row(const om_tensor *x, const bn_plan *p, int64_t b, int64_t ch, double *row)
{
	const size_t off = (size_t)((b * p->C + ch) * p->spatial) * om_dtype_size(x->dtype);
	om_load_f64(x->dtype, (const char *)x->data + off, 1, p->spatial, row);
}

/* per-channel mean and population variance over N and the spatial dims, in double */
static void batch_stats(const om_tensor *x, const bn_plan *p, double *mean, double *var,
			double *row)
{
	const int64_t N = x->dims[0], cnt = N * p->spatial;
	for (int64_t ch = 0; ch < p->C; ch++) {
		double s = 0, q = 0;
		for (int64_t b = 0; b < N; b++) {
			bn_row(x, p, b, ch, row);
			for (int64_t k = 0; k < p->spatial; k++)
				s += row[k];
		}
		mean[ch] = cnt > 0 ? s / (double)cnt : 0;
		for (int64_t b = 0; b < N; b++) {
			bn_row(x, p, b, ch, row);
			for (int64_t k = 0; k < p->spatial; k++) {
				const double d = row[k] - mean[ch];
				const double d2 = d * d;
				q += d2;
			}
		}
		var[ch] = cnt > 0 ? q / (double)cnt : 0;
	}
}

/* Fast mode's y = x * a + b, a and b per channel: rows of `len` floats, each row an (image,
 * channel) of plain X or an (image, block) of blocked X, whose `lanes` channels interleave (a
 * and b then hold `lanes` values a row, 0 in the padding); units [lo, hi) are pieces of
 * `piece` floats (whole pixels) of a row: NHWC's one block an image splits too */
typedef struct bn_fast_job {
	const float *x;
	float *y;
	const float *a, *b;
	int64_t rows, len, lanes, piece, pieces; /* rows: of one image; pieces: of a row */
	const om_conv_epi *post; /* the activation the planner folded in (om_ctx.post), or NULL */
} bn_fast_job;

/* relu: a Relu the planner folded in, applied in the same pass (NaN stays NaN, as Relu's) */
static inline __attribute__((always_inline)) void
bn_lanes(const float *restrict x, float *restrict y, const float *a, const float *b, int64_t len,
	 const int64_t lanes, const bool relu)
{
	for (int64_t s = 0; s < len; s += lanes)
		for (int64_t l = 0; l < lanes; l++) {
			const float v = x[s + l] * a[l] + b[l];
			y[s + l] = relu && v < 0 ? 0.0f : v;
		}
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
bn_fast_piece(void *arg, int64_t lo, int64_t hi)
{
	const bn_fast_job *j = arg;
	for (int64_t u = lo; u < hi; u++) {
		const int64_t r = u / j->pieces, at = u % j->pieces * j->piece;
		const int64_t len = j->len - at < j->piece ? j->len - at : j->piece;
		const float *a = j->a + r % j->rows * j->lanes, *b = j->b + r % j->rows * j->lanes;
		const float *x = j->x + r * j->len + at;
		float *y = j->y + r * j->len + at;
		const bool relu = j->post && j->post->act == OM_ACT_RELU;
		if (j->lanes == 16 && relu)
			bn_lanes(x, y, a, b, len, 16, true);
		else if (j->lanes == 16)
			bn_lanes(x, y, a, b, len, 16, false);
		else if (j->lanes == 8)
			bn_lanes(x, y, a, b, len, 8, relu);
		else if (j->lanes == 1)
			bn_lanes(x, y, a, b, len, 1, relu);
		else
			bn_lanes(x, y, a, b, len, j->lanes, relu);
		/* other activations while the piece is in cache */
		if (j->post && !relu)
			om_conv_epi_row(j->post, 0, 0, y, len);
	}
}

/* y = x * a + b with a = scale / sqrt(var + eps) and b = B - mean * a per channel (computed
 * in double), split over the run's threads; X plain (lanes 1) or blocked by `lanes` */
static om_kind bn_fast(om_ctx *c, const bn_plan *p, const double *const par[4], double eps,
		       int64_t lanes)
{
	const om_tensor *x = c->in[0];
	const int64_t rows = (p->C + lanes - 1) / lanes, n = rows * lanes;
	om_conv_epi post = {0}; /* the activation the planner folded in (OM_OP_EPILOGUE) */
	om_kind rc = om_conv_epi_activation(c, &post);
	if (rc)
		return rc;
	float *ab = calloc((size_t)(2 * n + 1), sizeof *ab);
	if (!ab)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	for (int64_t ch = 0; ch < p->C; ch++) {
		const double a = par[0][ch] / sqrt(par[3][ch] + eps);
		ab[ch] = (float)a;
		ab[n + ch] = (float)(par[1][ch] - par[2][ch] * a);
	}
	enum { GRAIN = 1 << 15 }; /* elements worth a thread */
	const int64_t len = p->spatial * lanes, px = GRAIN / lanes > 0 ? GRAIN / lanes : 1;
	const int64_t piece = len > GRAIN ? px * lanes : (len > 0 ? len : 1);
	bn_fast_job j = {x->data, c->out[0]->data, ab, ab + n, rows, len, lanes,
			 piece,	  (len + piece - 1) / piece, c->post ? &post : NULL};
	om_par_for(c->threads, x->dims[0] * rows * j.pieces, GRAIN / (piece + 1) + 1,
		   bn_fast_piece, &j);
	free(ab);
	return OM_OK;
}

/* BatchNormalization in inference on float32 (N, C, H, W) takes X and Y channel-blocked in
 * fast mode (op.h), both or neither: densenet's BatchNormalization -> Relu -> Conv between
 * its blocked Concats */
static void bn_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *x = c->in[0];
	for (int32_t i = 1; i < c->nout; i++)
		if (c->out[i])
			return;
	if (c->exact || !x || x->dtype != OM_FLOAT || x->rank != 4 || bn_per_elem(c) ||
	    bn_training(c))
		return;
	r->may = r->tied = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* X (N, Cb, H, W, b) and Y alike: C from the parameters' length (bn_layout's choice) */
static om_kind bn_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *S = c->nin > 1 ? c->in[1] : NULL;
	const int64_t b = X->rank == 5 ? X->dims[4] : 0, C = S && S->rank == 1 ? S->dims[0] : -1;
	if (c->blocked != (OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0)) || b < 1 || X->rank != 5 ||
	    X->dims[4] != b || C < 1 || (C + b - 1) / b != X->dims[1])
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked BatchNormalization");
	const om_tensor lx = om_layout_logical(X, C);
	const om_tensor *in[5] = {&lx};
	for (int32_t i = 1; i < c->nin && i < 5; i++)
		in[i] = c->in[i];
	om_ctx lc = *c;
	lc.in = in, lc.nin = c->nin < 5 ? c->nin : 5;
	bn_plan p = {.C = C, .spatial = X->dims[2] * X->dims[3]};
	double *par = malloc(sizeof(double) * (size_t)(4 * C));
	if (!par)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	om_kind rc = bn_prepare(&lc, &p, par);
	const double *const ps[4] = {par, par + C, par + 2 * C, par + 3 * C};
	if (!rc)
		rc = bn_fast(c, &p, ps, om_attr_float(c->node, "epsilon", 1e-5f), b);
	free(par);
	return rc;
}

static om_kind bn_kernel(om_ctx *c)
{
	if (c->blocked)
		return bn_blocked(c);
	bn_plan p = {0};
	om_kind rc = channels(c, &p.C, &p.spatial);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	/* 4 parameter sets of per (<= C * spatial), the batch statistics, one spatial row */
	const int64_t cs = p.C * p.spatial;
	double *par = malloc(sizeof(double) * (size_t)(4 * cs + 4 * p.C + p.spatial + 1));
	if (!par)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the parameters");
	if ((rc = bn_prepare(c, &p, par))) {
		free(par);
		return rc;
	}
	double *scale = par, *bias = par + p.per, *mean = par + 2 * p.per, *var = par + 3 * p.per;
	double *bmean = par + 4 * p.per, *bvar = bmean + p.C, *row = bvar + p.C;
	const double eps = om_attr_float(c->node, "epsilon", 1e-5f);
	if (p.training) {
		const double mom = om_attr_float(c->node, "momentum", 0.9f);
		batch_stats(x, &p, bmean, bvar, row);
		for (int i = 1; i < 3 && i < c->nout; i++) {
			if (!c->out[i])
				continue;
			const double *in = i == 1 ? mean : var, *cur = i == 1 ? bmean : bvar;
			for (int64_t ch = 0; ch < p.C; ch++) {
				const double v = in[ch] * mom + cur[ch] * (1 - mom);
				om_store_f64(c->out[i]->dtype, (char *)c->out[i]->data +
						     (size_t)ch * om_dtype_size(c->out[i]->dtype),
					     1, &v, 1);
			}
		}
		mean = bmean, var = bvar;
	}
	const size_t es = om_dtype_size(x->dtype);
	if (!c->exact && x->dtype == OM_FLOAT && p.per == p.C) {
		const double *const ps[4] = {scale, bias, mean, var};
		rc = bn_fast(c, &p, ps, eps, 1);
		free(par);
		return rc;
	}
	for (int64_t b = 0; b < x->dims[0]; b++)
		for (int64_t ch = 0; ch < p.C; ch++) {
			bn_row(x, &p, b, ch, row);
			for (int64_t k = 0; k < p.spatial; k++) {
				const int64_t j = p.per == p.C ? ch : ch * p.spatial + k;
				const double d = (row[k] - mean[j]) / sqrt(var[j] + eps);
				row[k] = d * scale[j] + bias[j];
			}
			const size_t off = (size_t)((b * p.C + ch) * p.spatial) * es;
			om_store_f64(x->dtype, (char *)c->out[0]->data + off, 1, row, p.spatial);
		}
	free(par);
	om_conv_epi post = {0}; /* the planner absorbs activations of float outputs only */
	if (c->post && c->out[0]->dtype == OM_FLOAT && !(rc = om_conv_epi_activation(c, &post)))
		om_conv_epi_row(&post, 0, 0, c->out[0]->data, om_tensor_numel(c->out[0]));
	return rc;
}

/* ---- MeanVarianceNormalization ------------------------------------------------------------ */

/* (X - mean) / (sqrt(variance) + 1e-9) over `axes` (default [0, 2, 3]), ONNX's function */
static om_kind mvn_plan(om_ctx *c, om_red_plan *p)
{
	const om_tensor *x = c->in[0];
	om_kind rc = need_float(c, x, "X");
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

/* ---- LRN ------------------------------------------------------------------------------ */

/* y = x / (bias + alpha / size * sum of x^2 over the size channels around c)^beta; the power
 * is exp(beta * log(.)) from detmath.h so that it stays exact */
static om_kind lrn_prepare(om_ctx *c, int64_t *C, int64_t *spatial, int64_t *size)
{
	om_kind rc = channels(c, C, spatial);
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
static const om_sig_attr attrs_ms_SkipLayerNormalization_1[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* SkipLayerNormalization-1: input skip gamma [beta] [bias]
 * -> output [mean] [inv_std_var] [input_skip_bias_sum] */
static const om_sig sig_ms_SkipLayerNormalization_1 = {1, 3, 5, 1, 4, 0x18, 0xe, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_SkipLayerNormalization_1, NULL};
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
static const om_sig_attr attrs_InstanceNormalization_6_v22[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* InstanceNormalization-22: input scale B -> output */
static const om_sig sig_InstanceNormalization_6_v22 = {22, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_InstanceNormalization_6_v22, NULL};
static const om_sig_attr attrs_InstanceNormalization_6[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{NULL, 0, 0}};
/* InstanceNormalization-6: input scale B -> output */
static const om_sig sig_InstanceNormalization_6 = {6, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x0, 0x0,
	attrs_InstanceNormalization_6, &sig_InstanceNormalization_6_v22};
static const om_sig_attr attrs_GroupNormalization_18[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"num_groups", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* GroupNormalization-18: X scale bias -> Y */
static const om_sig sig_GroupNormalization_18 = {18, 3, 3, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_GroupNormalization_18, NULL};
static const om_sig_attr attrs_GroupNormalization_21[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"num_groups", OM_ATTR_INT, 1}, {"stash_type", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GroupNormalization-21: X scale bias -> Y */
static const om_sig sig_GroupNormalization_21 = {21, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_GroupNormalization_21, NULL};
static const om_sig_attr attrs_BatchNormalization_7[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {"spatial", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* BatchNormalization-7: X scale B mean var -> Y [mean] [var] [saved_mean] [saved_var] */
static const om_sig sig_BatchNormalization_7 = {7, 5, 5, 1, 5, 0x0, 0x1e, 0x1f, 0x1f, 0x0, 0x0,
	attrs_BatchNormalization_7, NULL};
static const om_sig_attr attrs_BatchNormalization_9[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* BatchNormalization-9: X scale B mean var -> Y [mean] [var] [saved_mean] [saved_var] */
static const om_sig sig_BatchNormalization_9 = {9, 5, 5, 1, 5, 0x0, 0x1e, 0x1f, 0x1f, 0x0, 0x0,
	attrs_BatchNormalization_9, NULL};
static const om_sig_attr attrs_BatchNormalization_14[] = {{"epsilon", OM_ATTR_FLOAT, 0},
	{"momentum", OM_ATTR_FLOAT, 0}, {"training_mode", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* BatchNormalization-14: X scale B input_mean input_var -> Y [running_mean] [running_var] */
static const om_sig sig_BatchNormalization_14 = {14, 5, 5, 1, 3, 0x0, 0x6, 0x1f, 0x7, 0x1f, 0x7,
	attrs_BatchNormalization_14, NULL};
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

/* BatchNormalization applies the activation after it (OM_OP_EPILOGUE: densenet's BN -> Relu) */
#define BN_FLAGS (OM_OP_EXACT | OM_OP_LAYOUT | OM_OP_EPILOGUE)

static const om_op rows[] = {
	{"Softmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Softmax_1, OM_OPC_NONE,
	 NULL, AX_SOFTMAX | AX_2D},
	{"Softmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Softmax_13,
	 OM_OPC_NONE, NULL, AX_SOFTMAX},
	{"LogSoftmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_LogSoftmax_1,
	 OM_OPC_NONE, NULL, AX_LOG_SOFTMAX | AX_2D},
	{"LogSoftmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_LogSoftmax_13,
	 OM_OPC_NONE, NULL, AX_LOG_SOFTMAX},
	{"Hardmax", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Hardmax_1, OM_OPC_NONE,
	 NULL, AX_HARDMAX | AX_2D},
	{"Hardmax", "", 13, same_shape_infer, axis_kernel, OM_OP_EXACT, &sig_Hardmax_13,
	 OM_OPC_NONE, NULL, AX_HARDMAX},
	{"LpNormalization", "", 1, same_shape_infer, axis_kernel, OM_OP_EXACT,
	 &sig_LpNormalization_1, OM_OPC_NONE, NULL, AX_LP_NORM},
	{"SkipLayerNormalization", "com.microsoft", 1, om_skip_ln_infer, om_skip_ln_kernel,
	 OM_OP_EXACT, &sig_ms_SkipLayerNormalization_1, OM_OPC_MS_SKIP_LAYER_NORM, NULL, 0},
	{"LayerNormalization", "", 1, om_ln_infer, om_ln_kernel, OM_OP_EXACT,
	 &sig_LayerNormalization_1, OM_OPC_LAYER_NORM, NULL, 0},
	{"RMSNormalization", "", 23, om_ln_infer, om_ln_kernel, OM_OP_EXACT,
	 &sig_RMSNormalization_23, OM_OPC_NONE, NULL, LN_RMS},
	{"InstanceNormalization", "", 6, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_InstanceNormalization_6, OM_OPC_NONE, NULL, 0},
	{"GroupNormalization", "", 18, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GroupNormalization_18, OM_OPC_NONE, NULL, GN_GROUP | GN_PER_GROUP},
	{"GroupNormalization", "", 21, gn_infer, gn_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GroupNormalization_21, OM_OPC_NONE, NULL, GN_GROUP},
	{"BatchNormalization", "", 7, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_7,
	 OM_OPC_BATCH_NORM, bn_layout, BN_SPATIAL},
	{"BatchNormalization", "", 9, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_9,
	 OM_OPC_BATCH_NORM, bn_layout, 0},
	{"BatchNormalization", "", 14, bn_infer, bn_kernel, BN_FLAGS, &sig_BatchNormalization_14,
	 OM_OPC_BATCH_NORM, bn_layout, BN_TRAINING},
	{"MeanVarianceNormalization", "", 9, mvn_infer, mvn_kernel, OM_OP_EXACT,
	 &sig_MeanVarianceNormalization_9, OM_OPC_NONE, NULL, 0},
	{"LRN", "", 1, lrn_infer, lrn_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_LRN_1, OM_OPC_NONE,
	 NULL, 0},
};

const om_op_table om_ops_norm = OM_TABLE(rows);
