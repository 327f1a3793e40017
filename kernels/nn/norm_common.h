/* norm_common.h — what the normalization kernels share (Softmax, LogSoftmax, Hardmax,
 * LpNormalization, LayerNormalization, RMSNormalization, SkipLayerNormalization,
 * InstanceNormalization, GroupNormalization, BatchNormalization, MeanVarianceNormalization,
 * LRN): input checks, parameter loads, slices of a tensor rewritten in double over the run's
 * threads, the standardization of one slice. Every kernel computes in double (exp/log from
 * detmath.h), folds in a fixed order (sums in eight lanes) and stores in the input's type:
 * all exact. */
#ifndef OM_NORM_COMMON_H
#define OM_NORM_COMMON_H

#include "op.h"

/** OK when t is present and of a float type, else InvalidModel naming `what`. */
om_kind om_norm_need_float(om_ctx *c, const om_tensor *t, const char *what);

/** dims[from] * ... * dims[to - 1] */
static inline int64_t om_norm_dims_product(const int64_t *dims, int32_t from, int32_t to)
{
	int64_t p = 1;
	for (int32_t d = from; d < to; d++)
		p *= dims[d];
	return p;
}

/* ---- slices: runs of n elements, `inner` apart, one per (outer, inner) position ---------- */

typedef struct norm_slices {
	int64_t outer, n, inner;
} norm_slices;

/* fn rewrites the n values of slice s (= o * inner + i) in place */
typedef void (*norm_slice_fn)(void *arg, double *v, int64_t n, int64_t s);

enum { NORM_SLICE_GRAIN = 1 << 14 }; /* elements of slices worth a thread */

/** fn over every slice of x into y, the slices split over the run's threads (fn must write
 *  nothing but its slice and its slice's entries) */
om_kind om_norm_each_slice(om_ctx *c, const om_tensor *x, om_tensor *y, norm_slices sl,
			   norm_slice_fn fn, void *arg);

/** The slices along the node's `axis` of a float input 0: with `coerce` (Softmax, LogSoftmax,
 *  Hardmax before opset 13) the input coerced to 2-D at `axis` (default 1), else along the
 *  one axis (default -1). */
om_kind om_norm_axis_slices(om_ctx *c, bool coerce, norm_slices *sl);

/* ---- standardization ------------------------------------------------------------------- */

/* one standardization: a slice s of n values, its parameters at
 * index (s % smod) * smul + k / kdiv for element k */
typedef struct norm_std {
	const double *scale, *bias; /* bias NULL when absent */
	om_tensor *mean, *inv;      /* optional outputs, one element per slice */
	double eps;
	bool rms;                   /* RMSNormalization: no mean is taken out */
	int64_t smod, smul, kdiv;
} norm_std;

/** A norm_slice_fn (arg: a norm_std): mean and population variance (lane sums), then
 *  (x - mean) * inv * scale + bias */
void om_norm_standardize(void *arg, double *v, int64_t n, int64_t s);

/* ---- parameters ------------------------------------------------------------------------ */

/** p (unidirectionally broadcast to the m dims td, n elements) expanded into dst[n] (dst NULL:
 *  only checked) */
om_kind om_norm_expand_param(om_ctx *c, const om_tensor *p, int32_t m, const int64_t *td,
			     int64_t n, double *dst, const char *what);

/** a float tensor of n elements, or absent (NULL) when `optional` */
bool om_norm_float_row(const om_tensor *t, int64_t n, bool optional);

/** t must hold `count` elements of a float type; loaded into dst (NULL: only checked) */
om_kind om_norm_load_param(om_ctx *c, const om_tensor *t, int64_t count, double *dst,
			   const char *what);

/** X (input 0) of a float type and rank >= 2: its channels (dim 1) and spatial size */
om_kind om_norm_channels(om_ctx *c, int64_t *C, int64_t *spatial);

#endif
