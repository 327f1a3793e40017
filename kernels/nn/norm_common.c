/* norm_common.c — what the normalization kernels share (norm_common.h): input checks,
 * parameter loads, slices of a tensor rewritten in double over the run's threads, the
 * standardization of one slice. */
/* -O2 vectorizes only loops of known trip count; quiet comparisons let selects vectorize
 * (results are unchanged: no reassociation, and detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "norm_common.h"
#include "numrun.h"
#include "parallel.h"
#include "reduce_plan.h"

om_kind om_norm_need_float(om_ctx *c, const om_tensor *t, const char *what)
{
	if (!t)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is missing", what);
	if (!om_is_float_type(t->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s is %s, not a float type",
				what, om_dtype_name(t->dtype));
	return OM_OK;
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
#define NORM_CLONES OM_CLONES_AVX2

typedef struct slice_job {
	const om_tensor *x;
	om_tensor *y;
	norm_slices sl;
	norm_slice_fn fn;
	void *arg;
	double *bufs; /* sl.n doubles per worker */
} slice_job;

/* slices [lo, hi) (s = o * inner + i), each loaded into the worker's buffer, rewritten by fn
 * and stored: independent, so the same bits whichever worker runs one */
static void slice_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const slice_job *j = arg;
	const norm_slices sl = j->sl;
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

om_kind om_norm_each_slice(om_ctx *c, const om_tensor *x, om_tensor *y, norm_slices sl,
			   norm_slice_fn fn, void *arg)
{
	const int64_t count = sl.outer * sl.inner, grain = NORM_SLICE_GRAIN / (sl.n + 1) + 1;
	const int slots = om_par_slots(c->threads, count, grain);
	slice_job j = {x, y, sl, fn, arg, NULL};
	const size_t bytes = sizeof(double) * (size_t)slots * (size_t)(sl.n > 0 ? sl.n : 1);
	om_kind rc = om_ctx_scratch(c, bytes, "a slice's values", (void **)&j.bufs);
	if (rc)
		return rc;
	om_par_for_slots(c->threads, count, grain, slice_piece, &j);
	om_ctx_scratch_done(c, j.bufs);
	return OM_OK;
}

om_kind om_norm_axis_slices(om_ctx *c, bool coerce, norm_slices *sl)
{
	const om_tensor *x = c->in[0];
	om_kind rc = om_norm_need_float(c, x, "the input");
	if (rc)
		return rc;
	int32_t axis;
	if (coerce && x->rank == 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "the input is a scalar");
	rc = om_norm_axis(c, om_attr_int(c->node, "axis", coerce ? 1 : -1), x->rank, &axis);
	if (rc)
		return rc;
	sl->outer = om_norm_dims_product(x->dims, 0, axis);
	sl->n = coerce ? om_norm_dims_product(x->dims, axis, x->rank) : x->dims[axis];
	sl->inner = coerce ? 1 : om_norm_dims_product(x->dims, axis + 1, x->rank);
	return OM_OK;
}

/* ---- standardization ------------------------------------------------------------------- */

/* mean and population variance (lane sums), then (x - mean) * inv * scale + bias; static:
 * GCC gives a cloned function's resolver default visibility, which would export it */
static NORM_CLONES void standardize(void *arg, double *v, int64_t n, int64_t s)
{
	const norm_std *l = arg;
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

void om_norm_standardize(void *arg, double *v, int64_t n, int64_t s)
{
	standardize(arg, v, n, s);
}

/* ---- parameters ------------------------------------------------------------------------ */

/* p (unidirectionally broadcast to the m dims td, n elements) expanded into dst[n] */
om_kind om_norm_expand_param(om_ctx *c, const om_tensor *p, int32_t m, const int64_t *td,
			     int64_t n, double *dst, const char *what)
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

bool om_norm_float_row(const om_tensor *t, int64_t n, bool optional)
{
	return t ? t->dtype == OM_FLOAT && om_tensor_numel(t) == n : optional;
}

om_kind om_norm_load_param(om_ctx *c, const om_tensor *t, int64_t count, double *dst,
			   const char *what)
{
	om_kind rc = om_norm_need_float(c, t, what);
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

om_kind om_norm_channels(om_ctx *c, int64_t *C, int64_t *spatial)
{
	const om_tensor *x = c->in[0];
	om_kind rc = om_norm_need_float(c, x, "X");
	if (rc)
		return rc;
	if (x->rank < 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X has rank %d, needs N and C", x->rank);
	*C = x->dims[1];
	*spatial = om_norm_dims_product(x->dims, 2, x->rank);
	return OM_OK;
}
