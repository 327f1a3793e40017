/* ops_reduce.c — Reduce{Sum,Mean,Max,Min,Prod,L1,L2,LogSum,LogSumExp,SumSquare}, ArgMax,
 * ArgMin, CumSum, CumProd. Floats accumulate in double, integers in wrapping int64; every
 * output element folds its inputs in a fixed order (sums in eight lanes by position in each
 * run, om_red_fold8; products, extremes and integers in ascending order), so all rows are
 * exact (no threads; the lane adds vectorize and give the same bits on every ISA). */
/* -O2 vectorizes only loops of known trip count (detmath.h switches contraction off) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "numrun.h"
#include "fastmath.h"
#include "op.h"
#include "parallel.h"
#include "reduce_plan.h"

/* the param of a Reduce row: its kind, and RED_AXES_INPUT from the opset where axes moved
 * from the attribute to input 1 (ReduceSum 13, the others 18) */
enum red_kind { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_LOGSUM, R_LSE, R_SUMSQ };
enum { RED_KIND_MASK = 0xf, RED_AXES_INPUT = 0x10 };

/* mask[d] = dim d is reduced; the dims list comes from the attribute or the input */
static om_kind red_mask(om_ctx *c, int32_t rank, bool axes_input, bool *mask, bool *noop)
{
	int64_t axes[OM_MAX_RANK], n = 0;
	if (axes_input) {
		const om_tensor *t = c->nin > 1 ? c->in[1] : NULL;
		if (t) {
			om_kind rc = om_read_ints(c, t, axes, OM_MAX_RANK, &n);
			if (rc)
				return rc;
		}
	} else {
		const int64_t *a = om_attr_ints(c->node, "axes", &n);
		if (n > OM_MAX_RANK)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%lld axes for rank %d", (long long)n, rank);
		if (n)
			memcpy(axes, a, sizeof(int64_t) * (size_t)n);
	}
	*noop = false;
	for (int32_t d = 0; d < rank; d++)
		mask[d] = n == 0;
	if (n == 0 && axes_input && om_attr_int(c->node, "noop_with_empty_axes", 0))
		*noop = true;
	return n ? om_red_axes_mask(c, axes, n, rank, mask) : OM_OK;
}

static om_kind red_prepare(om_ctx *c, om_red_plan *p, enum red_kind *kind)
{
	const om_tensor *x = c->in[0];
	if (!x)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "not a reduction");
	*kind = (enum red_kind)(c->op->param & RED_KIND_MASK);
	const bool ints = om_is_int_type(x->dtype) ||
			  (x->dtype == OM_BOOL && (*kind == R_MAX || *kind == R_MIN));
	if (!om_is_float_type(x->dtype) && !ints)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s input is not supported",
				om_dtype_name(x->dtype));
	bool mask[OM_MAX_RANK], noop = false;
	om_kind rc = red_mask(c, x->rank, (c->op->param & RED_AXES_INPUT) != 0, mask, &noop);
	if (rc)
		return rc;
	/* noop_with_empty_axes with no axes reduces no dim: each output element is the
	 * reduction of its one input element, so the element-wise part still applies
	 * (ReduceSumSquare squares, ReduceL1 and ReduceL2 take |x|, ReduceLogSum log x; the
	 * ONNX text's clarification of 2025) */
	for (int32_t d = 0; noop && d < x->rank; d++)
		mask[d] = false;
	om_red_plan_make(x, mask, noop || om_attr_int(c->node, "keepdims", 1) != 0, p);
	p->noop = noop;
	return OM_OK;
}

static om_kind red_infer(om_ctx *c)
{
	om_red_plan p = {0};
	enum red_kind kind;
	om_kind rc = red_prepare(c, &p, &kind);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, p.out_rank, p.out_dims);
	return OM_OK;
}

/* ---- folding ---------------------------------------------------------------------------- */

enum { CHUNK = 256 };

typedef struct fold_f {
	enum red_kind kind;
	const om_tensor *x;
	double acc, shift;
	double lane[8]; /* the sums: element i of a run goes to lane i % 8 */
} fold_f;

/* lane[i % 8] += TERM(v[i]) for i < m (m: a whole chunk, or a run's end) */
#define LANES(TERM)                                                                         \
	do {                                                                                \
		int64_t i = 0;                                                              \
		for (; i + 8 <= m; i += 8)                                                  \
			for (int j = 0; j < 8; j++)                                         \
				f->lane[j] += TERM(v[i + j]);                               \
		for (int j = 0; i < m; i++, j++)                                            \
			f->lane[j] += TERM(v[i]);                                           \
	} while (0)
#define T_ID(x) (x)
#define T_ABS(x) fabs(x)
#define T_SQ(x) ((x) * (x))
#define T_EXP(x) om_det_exp((x) - f->shift)

static bool lane_kind(enum red_kind k)
{
	return k != R_PROD && k != R_MAX && k != R_MIN;
}

static void fold_f_run(void *arg, int64_t off, int64_t n, int64_t stride)
{
	fold_f *f = arg;
	const size_t es = om_dtype_size(f->x->dtype);
	double v[CHUNK];
	for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
		const int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
		const char *src = (const char *)f->x->data + (size_t)(off + i0 * stride) * es;
		om_load_f64(f->x->dtype, src, stride, m, v);
		double a = f->acc;
		switch (f->kind) {
		case R_SUM: case R_MEAN: case R_LOGSUM:
			LANES(T_ID);
			break;
		case R_L1:
			LANES(T_ABS);
			break;
		case R_L2: case R_SUMSQ:
			LANES(T_SQ);
			break;
		case R_LSE:
			LANES(T_EXP);
			break;
		case R_PROD:
			for (int64_t i = 0; i < m; i++)
				a *= v[i];
			break;
		case R_MAX: /* NaN wins and stays */
			for (int64_t i = 0; i < m; i++)
				if (v[i] > a || v[i] != v[i])
					a = a != a ? a : v[i];
			break;
		case R_MIN:
			for (int64_t i = 0; i < m; i++)
				if (v[i] < a || v[i] != v[i])
					a = a != a ? a : v[i];
			break;
		}
		f->acc = a;
	}
}

static double fold_init(enum red_kind k)
{
	return k == R_PROD ? 1 : k == R_MAX ? -INFINITY : k == R_MIN ? INFINITY : 0;
}

static double reduce_one_f(const om_red_plan *p, const om_tensor *x, enum red_kind kind,
			   int64_t base)
{
	fold_f f = {.kind = kind == R_LSE ? R_MAX : kind, .x = x};
	f.acc = fold_init(f.kind);
	om_red_each_run(p, base, fold_f_run, &f);
	if (lane_kind(f.kind))
		f.acc = om_red_fold8(f.lane);
	if (kind == R_LSE) {
		const double mx = f.acc;
		if (mx == INFINITY || mx == -INFINITY || mx != mx)
			return mx;
		f = (fold_f){.kind = R_LSE, .x = x, .acc = 0, .shift = mx};
		om_red_each_run(p, base, fold_f_run, &f);
		return mx + om_det_log(om_red_fold8(f.lane));
	}
	switch (kind) {
	case R_MEAN: return f.acc / (double)p->nred;
	case R_L2: return sqrt(f.acc);
	case R_LOGSUM: return om_det_log(f.acc);
	default: return f.acc;
	}
}

typedef struct fold_i {
	enum red_kind kind;
	bool is_unsigned;
	const om_tensor *x;
	int64_t acc;
} fold_i;

/* integer folds wrap in uint64 (no signed overflow) */
static void fold_i_run(void *arg, int64_t off, int64_t n, int64_t stride)
{
	fold_i *f = arg;
	const size_t es = om_dtype_size(f->x->dtype);
	int64_t v[CHUNK];
	for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
		const int64_t m = n - i0 < CHUNK ? n - i0 : CHUNK;
		const char *src = (const char *)f->x->data + (size_t)(off + i0 * stride) * es;
		om_load_i64(f->x->dtype, src, stride, m, v);
		uint64_t a = (uint64_t)f->acc;
		for (int64_t i = 0; i < m; i++) {
			const uint64_t u = (uint64_t)v[i];
			switch (f->kind) {
			case R_L1: a += v[i] < 0 && !f->is_unsigned ? 0 - u : u; break;
			case R_SUMSQ: a += u * u; break;
			case R_PROD: a *= u; break;
			case R_MAX:
				if (f->is_unsigned ? u > a : v[i] > (int64_t)a)
					a = u;
				break;
			case R_MIN:
				if (f->is_unsigned ? u < a : v[i] < (int64_t)a)
					a = u;
				break;
			default: a += u; break;
			}
		}
		f->acc = (int64_t)a;
	}
}

static int64_t int_limit(int32_t dt, bool max)
{
	const int bits = (int)om_dtype_size(dt) * 8;
	if (dt == OM_BOOL)
		return max ? 1 : 0;
	if (om_is_unsigned_type(dt))
		return max ? (int64_t)(bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1) : 0;
	const int64_t top = bits == 64 ? INT64_MAX : (int64_t)((UINT64_C(1) << (bits - 1)) - 1);
	return max ? top : -top - 1;
}

static int64_t reduce_one_i(const om_red_plan *p, const om_tensor *x, enum red_kind kind,
			    int64_t base)
{
	fold_i f = {.kind = kind, .is_unsigned = om_is_unsigned_type(x->dtype), .x = x};
	f.acc = kind == R_PROD ? 1 : kind == R_MAX ? int_limit(x->dtype, false)
			 : kind == R_MIN ? int_limit(x->dtype, true) : 0;
	om_red_each_run(p, base, fold_i_run, &f);
	if (kind == R_MEAN && p->nred > 0)
		return f.is_unsigned ? (int64_t)((uint64_t)f.acc / (uint64_t)p->nred)
				     : f.acc / p->nred;
	return f.acc;
}

/* fast mode's ReduceSum and ReduceMean of float rows: output o is the sum (or mean) of the
 * n contiguous floats at o n (om_fast_sum_f32, not exact mode's double); a global pool written as
 * ReduceMean over H and W (mnasnet, shufflenet_v2: 1280 x 7 x 7, 0.04 ms in double) */
typedef struct red_rows_job {
	int64_t n;
	bool mean;
	const float *x;
	float *y;
} red_rows_job;

static void red_rows(void *arg, int64_t lo, int64_t hi)
{
	const red_rows_job *j = arg;
	const int64_t n = j->n;
	for (int64_t o = lo; o < hi; o++) {
		const float s = om_fast_sum_f32(n, j->x + o * n);
		j->y[o] = j->mean ? s / (float)n : s;
	}
}

/* the reduced set of every output one contiguous run, the outputs in order */
static bool contiguous_rows(const om_red_plan *p)
{
	return p->nr == 1 && p->rstr[0] == 1 && p->rext[0] == p->nred &&
	       (p->nk == 0 || (p->nk == 1 && p->kstr[0] == p->nred));
}

static om_kind red_kernel(om_ctx *c)
{
	om_red_plan p = {0};
	enum red_kind kind;
	om_kind rc = red_prepare(c, &p, &kind);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	if (p.noop && (kind == R_SUM || kind == R_MEAN || kind == R_MAX || kind == R_MIN ||
		       kind == R_PROD || kind == R_LSE) && x->dtype == y->dtype) {
		/* the reduction of one element is the element (LogSumExp: max + log(exp(0))) */
		memcpy(y->data, x->data, y->nbytes < x->nbytes ? y->nbytes : x->nbytes);
		return OM_OK;
	}
	if (!c->exact && x->dtype == OM_FLOAT && y->dtype == OM_FLOAT && p.nred > 0 &&
	    (kind == R_SUM || kind == R_MEAN) && contiguous_rows(&p)) {
		red_rows_job j = {p.nred, kind == R_MEAN, x->data, y->data};
		om_par_for(c->threads, p.nout, (1 << 14) / p.nred + 1, red_rows, &j);
		return OM_OK;
	}
	/* integers stay integers except where the result is a real number */
	const bool int_path = !om_is_float_type(x->dtype) && kind != R_L2 && kind != R_LOGSUM &&
			      kind != R_LSE;
	const size_t es = om_dtype_size(y->dtype);
	int64_t kidx[OM_MAX_RANK] = {0}, base = 0;
	for (int64_t o = 0; o < p.nout; o++) {
		void *dst = (char *)y->data + (size_t)o * es;
		if (int_path) {
			const int64_t v = reduce_one_i(&p, x, kind, base);
			om_store_i64(y->dtype, dst, &v, 1);
		} else {
			const double v = reduce_one_f(&p, x, kind, base);
			om_store_f64(y->dtype, dst, 1, &v, 1);
		}
		om_red_next_base(&p, kidx, &base);
	}
	return OM_OK;
}

/* ---- ArgMax / ArgMin --------------------------------------------------------------------- */

enum arg_kind { ARG_MIN, ARG_MAX }; /* the row's param */

static om_kind arg_prepare(om_ctx *c, int32_t *axis, int64_t *dims, int32_t *rank)
{
	const om_tensor *x = c->in[0];
	if (!om_is_float_type(x->dtype) && !om_is_int_type(x->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s input is not supported",
				om_dtype_name(x->dtype));
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, axis);
	if (rc)
		return rc;
	if (x->dims[*axis] == 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"the axis to search has no elements");
	const bool keep = om_attr_int(c->node, "keepdims", 1) != 0;
	*rank = 0;
	for (int32_t d = 0; d < x->rank; d++)
		if (d != *axis || keep)
			dims[(*rank)++] = d == *axis ? 1 : x->dims[d];
	return OM_OK;
}

static om_kind arg_infer(om_ctx *c)
{
	int32_t axis = 0, rank = 0;
	int64_t dims[OM_MAX_RANK];
	om_kind rc = arg_prepare(c, &axis, dims, &rank);
	if (!rc)
		om_set_shape(c->out[0], OM_INT64, rank, dims);
	return rc;
}

/* first (or last) index of the max (min); NaN counts as the largest and the smallest */
static om_kind arg_kernel(om_ctx *c)
{
	int32_t axis, rank;
	int64_t dims[OM_MAX_RANK];
	om_kind rc = arg_prepare(c, &axis, dims, &rank);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const bool is_max = c->op->param == ARG_MAX;
	const bool last = om_attr_int(c->node, "select_last_index", 0) != 0;
	const bool ints = om_is_int_type(x->dtype), uns = om_is_unsigned_type(x->dtype);
	int64_t outer = 1, inner = 1;
	for (int32_t d = 0; d < axis; d++)
		outer *= x->dims[d];
	for (int32_t d = axis + 1; d < x->rank; d++)
		inner *= x->dims[d];
	const int64_t n = x->dims[axis];
	const size_t es = om_dtype_size(x->dtype);
	int64_t *y = c->out[0]->data;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t in = 0; in < inner; in++) {
			const char *src = (const char *)x->data + (size_t)(o * n * inner + in) * es;
			int64_t best = 0, bi = 0;
			double bf = 0;
			for (int64_t k = 0; k < n; k++) {
				bool take = k == 0;
				const char *at = src + (size_t)(k * inner) * es;
				if (ints) {
					int64_t v = 0;
					om_load_i64(x->dtype, at, 1, 1, &v);
					const int cmp = uns ? ((uint64_t)v > (uint64_t)best) -
								      ((uint64_t)v < (uint64_t)best)
							    : (v > best) - (v < best);
					take |= is_max ? cmp > 0 || (last && cmp == 0)
						       : cmp < 0 || (last && cmp == 0);
					if (take)
						best = v;
				} else {
					double v = 0;
					om_load_f64(x->dtype, at, 1, 1, &v);
					if (bf != bf) /* a NaN found first stays unless last */
						take |= last && v != v;
					else if (v != v)
						take = true;
					else
						take |= is_max ? v > bf || (last && v == bf)
							       : v < bf || (last && v == bf);
					if (take)
						bf = v;
				}
				if (take)
					bi = k;
			}
			y[o * inner + in] = bi;
		}
	return OM_OK;
}

/* ---- CumSum / CumProd ---------------------------------------------------------------------- */

enum cum_kind { CUM_SUM, CUM_PROD }; /* the row's param */

/* running sum (product) along the axis given as input 1; exclusive shifts by one, reverse
 * runs from the end. Floats accumulate in double, integers wrap in uint64. */
static om_kind cum_prepare(om_ctx *c, int32_t *axis)
{
	const om_tensor *x = c->in[0];
	if (!om_is_float_type(x->dtype) && !om_is_int_type(x->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s input is not supported",
				om_dtype_name(x->dtype));
	const om_tensor *a = c->nin > 1 ? c->in[1] : NULL;
	if (!a || om_tensor_numel(a) != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "axis must be one integer");
	int64_t v, n;
	om_kind rc = om_read_ints(c, a, &v, 1, &n);
	return rc ? rc : om_norm_axis(c, v, x->rank, axis);
}

static om_kind cum_infer(om_ctx *c)
{
	int32_t axis;
	om_kind rc = cum_prepare(c, &axis);
	if (rc && rc != OM_NEED_VALUE) /* the shape does not depend on the axis */
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
	return OM_OK;
}

static om_kind cum_kernel(om_ctx *c)
{
	int32_t axis;
	om_kind rc = cum_prepare(c, &axis);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	const bool prod = c->op->param == CUM_PROD;
	const bool excl = om_attr_int(c->node, "exclusive", 0) != 0;
	const bool rev = om_attr_int(c->node, "reverse", 0) != 0;
	const bool ints = om_is_int_type(x->dtype);
	int64_t outer = 1, inner = 1;
	for (int32_t d = 0; d < axis; d++)
		outer *= x->dims[d];
	for (int32_t d = axis + 1; d < x->rank; d++)
		inner *= x->dims[d];
	const int64_t n = x->dims[axis];
	const size_t es = om_dtype_size(x->dtype);
	for (int64_t o = 0; o < outer; o++)
		for (int64_t i = 0; i < inner; i++) {
			double fa = prod ? 1 : 0;
			uint64_t ia = prod ? 1 : 0;
			for (int64_t t = 0; t < n; t++) {
				const int64_t k = rev ? n - 1 - t : t;
				const size_t off = (size_t)((o * n + k) * inner + i) * es;
				const char *src = (const char *)x->data + off;
				char *dst = (char *)y->data + off;
				if (ints) {
					int64_t v = 0;
					om_load_i64(x->dtype, src, 1, 1, &v);
					const uint64_t before = ia;
					ia = prod ? ia * (uint64_t)v : ia + (uint64_t)v;
					const int64_t w = (int64_t)(excl ? before : ia);
					om_store_i64(y->dtype, dst, &w, 1);
				} else {
					double v = 0;
					om_load_f64(x->dtype, src, 1, 1, &v);
					const double before = fa;
					fa = prod ? fa * v : fa + v;
					const double w = excl ? before : fa;
					om_store_f64(y->dtype, dst, 1, &w, 1);
				}
			}
		}
	return OM_OK;
}

/* a Reduce op's two rows: axes an attribute, then (from SINCE2) an input */
#define RED_ROWS(NAME, SINCE2, CODE, KIND)                                                  \
	{#NAME, "", 1, red_infer, red_kernel, OM_OP_EXACT | OM_OP_PERM_REDUCE, &sig_##NAME##_1, \
	 CODE, NULL, KIND, NULL},                                                               \
	{#NAME, "", SINCE2, red_infer, red_kernel, OM_OP_EXACT | OM_OP_PERM_REDUCE,             \
	 &sig_##NAME##_##SINCE2, CODE,                                                          \
	 NULL, (KIND) | RED_AXES_INPUT, NULL}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ReduceSum_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceSum-1: data -> reduced */
static const om_sig sig_ReduceSum_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceSum_1, NULL};
static const om_sig_attr attrs_ReduceSum_13[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceSum-13: data [axes] -> reduced */
static const om_sig sig_ReduceSum_13 = {13, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceSum_13, NULL};
static const om_sig_attr attrs_ReduceMean_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMean-13: data -> reduced */
static const om_sig sig_ReduceMean_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMean_1_v13, NULL};
static const om_sig_attr attrs_ReduceMean_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMean-1: data -> reduced */
static const om_sig sig_ReduceMean_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceMean_1, &sig_ReduceMean_1_v13};
static const om_sig_attr attrs_ReduceMean_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMean-18: data [axes] -> reduced */
static const om_sig sig_ReduceMean_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMean_18, NULL};
static const om_sig_attr attrs_ReduceMax_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMax-13: data -> reduced */
static const om_sig sig_ReduceMax_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMax_1_v13, NULL};
static const om_sig_attr attrs_ReduceMax_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMax-1: data -> reduced */
static const om_sig sig_ReduceMax_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceMax_1, &sig_ReduceMax_1_v13};
static const om_sig_attr attrs_ReduceMax_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMax-18: data [axes] -> reduced */
static const om_sig sig_ReduceMax_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMax_18, NULL};
static const om_sig_attr attrs_ReduceMin_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMin-13: data -> reduced */
static const om_sig sig_ReduceMin_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMin_1_v13, NULL};
static const om_sig_attr attrs_ReduceMin_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMin-1: data -> reduced */
static const om_sig sig_ReduceMin_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceMin_1, &sig_ReduceMin_1_v13};
static const om_sig_attr attrs_ReduceMin_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceMin-18: data [axes] -> reduced */
static const om_sig sig_ReduceMin_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceMin_18, NULL};
static const om_sig_attr attrs_ReduceProd_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceProd-13: data -> reduced */
static const om_sig sig_ReduceProd_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceProd_1_v13, NULL};
static const om_sig_attr attrs_ReduceProd_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceProd-1: data -> reduced */
static const om_sig sig_ReduceProd_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceProd_1, &sig_ReduceProd_1_v13};
static const om_sig_attr attrs_ReduceProd_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceProd-18: data [axes] -> reduced */
static const om_sig sig_ReduceProd_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceProd_18, NULL};
static const om_sig_attr attrs_ReduceL1_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL1-13: data -> reduced */
static const om_sig sig_ReduceL1_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceL1_1_v13, NULL};
static const om_sig_attr attrs_ReduceL1_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL1-1: data -> reduced */
static const om_sig sig_ReduceL1_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_ReduceL1_1,
	&sig_ReduceL1_1_v13};
static const om_sig_attr attrs_ReduceL1_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL1-18: data [axes] -> reduced */
static const om_sig sig_ReduceL1_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceL1_18, NULL};
static const om_sig_attr attrs_ReduceL2_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL2-13: data -> reduced */
static const om_sig sig_ReduceL2_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceL2_1_v13, NULL};
static const om_sig_attr attrs_ReduceL2_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL2-1: data -> reduced */
static const om_sig sig_ReduceL2_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_ReduceL2_1,
	&sig_ReduceL2_1_v13};
static const om_sig_attr attrs_ReduceL2_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceL2-18: data [axes] -> reduced */
static const om_sig sig_ReduceL2_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceL2_18, NULL};
static const om_sig_attr attrs_ReduceLogSum_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSum-13: data -> reduced */
static const om_sig sig_ReduceLogSum_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceLogSum_1_v13, NULL};
static const om_sig_attr attrs_ReduceLogSum_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSum-1: data -> reduced */
static const om_sig sig_ReduceLogSum_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceLogSum_1, &sig_ReduceLogSum_1_v13};
static const om_sig_attr attrs_ReduceLogSum_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSum-18: data [axes] -> reduced */
static const om_sig sig_ReduceLogSum_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceLogSum_18, NULL};
static const om_sig_attr attrs_ReduceLogSumExp_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSumExp-13: data -> reduced */
static const om_sig sig_ReduceLogSumExp_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceLogSumExp_1_v13, NULL};
static const om_sig_attr attrs_ReduceLogSumExp_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSumExp-1: data -> reduced */
static const om_sig sig_ReduceLogSumExp_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceLogSumExp_1, &sig_ReduceLogSumExp_1_v13};
static const om_sig_attr attrs_ReduceLogSumExp_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceLogSumExp-18: data [axes] -> reduced */
static const om_sig sig_ReduceLogSumExp_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceLogSumExp_18, NULL};
static const om_sig_attr attrs_ReduceSumSquare_1_v13[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceSumSquare-13: data -> reduced */
static const om_sig sig_ReduceSumSquare_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceSumSquare_1_v13, NULL};
static const om_sig_attr attrs_ReduceSumSquare_1[] = {{"axes", OM_ATTR_INTS, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceSumSquare-1: data -> reduced */
static const om_sig sig_ReduceSumSquare_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_ReduceSumSquare_1, &sig_ReduceSumSquare_1_v13};
static const om_sig_attr attrs_ReduceSumSquare_18[] = {{"keepdims", OM_ATTR_INT, 0},
	{"noop_with_empty_axes", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ReduceSumSquare-18: data [axes] -> reduced */
static const om_sig sig_ReduceSumSquare_18 = {18, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_ReduceSumSquare_18, NULL};
static const om_sig_attr attrs_ArgMax_1_v13[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {"select_last_index", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ArgMax-13: data -> reduced */
static const om_sig sig_ArgMax_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_ArgMax_1_v13, NULL};
static const om_sig_attr attrs_ArgMax_1_v12[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {"select_last_index", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ArgMax-12: data -> reduced */
static const om_sig sig_ArgMax_1_v12 = {12, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0,
	attrs_ArgMax_1_v12, &sig_ArgMax_1_v13};
static const om_sig_attr attrs_ArgMax_1[] = {{"axis", OM_ATTR_INT, 0}, {"keepdims", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* ArgMax-1: data -> reduced */
static const om_sig sig_ArgMax_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, attrs_ArgMax_1,
	&sig_ArgMax_1_v12};
static const om_sig_attr attrs_ArgMin_1_v13[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {"select_last_index", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ArgMin-13: data -> reduced */
static const om_sig sig_ArgMin_1_v13 = {13, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_ArgMin_1_v13, NULL};
static const om_sig_attr attrs_ArgMin_1_v12[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {"select_last_index", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ArgMin-12: data -> reduced */
static const om_sig sig_ArgMin_1_v12 = {12, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0,
	attrs_ArgMin_1_v12, &sig_ArgMin_1_v13};
static const om_sig_attr attrs_ArgMin_1[] = {{"axis", OM_ATTR_INT, 0}, {"keepdims", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* ArgMin-1: data -> reduced */
static const om_sig sig_ArgMin_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x0, 0x0, 0x0, attrs_ArgMin_1,
	&sig_ArgMin_1_v12};
static const om_sig_attr attrs_CumSum_11_v14[] = {{"exclusive", OM_ATTR_INT, 0},
	{"reverse", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* CumSum-14: x axis -> y */
static const om_sig sig_CumSum_11_v14 = {14, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_CumSum_11_v14, NULL};
static const om_sig_attr attrs_CumSum_11[] = {{"exclusive", OM_ATTR_INT, 0},
	{"reverse", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* CumSum-11: x axis -> y */
static const om_sig sig_CumSum_11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, attrs_CumSum_11,
	&sig_CumSum_11_v14};
static const om_sig_attr attrs_CumProd_26[] = {{"exclusive", OM_ATTR_INT, 0},
	{"reverse", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* CumProd-26: x axis -> y */
static const om_sig sig_CumProd_26 = {26, 2, 2, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_CumProd_26, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	RED_ROWS(ReduceSum, 13, OM_OPC_NONE, R_SUM),
	RED_ROWS(ReduceMean, 18, OM_OPC_REDUCE_MEAN, R_MEAN),
	RED_ROWS(ReduceMax, 18, OM_OPC_NONE, R_MAX),
	RED_ROWS(ReduceMin, 18, OM_OPC_NONE, R_MIN),
	RED_ROWS(ReduceProd, 18, OM_OPC_NONE, R_PROD),
	RED_ROWS(ReduceL1, 18, OM_OPC_NONE, R_L1),
	RED_ROWS(ReduceL2, 18, OM_OPC_NONE, R_L2),
	RED_ROWS(ReduceLogSum, 18, OM_OPC_NONE, R_LOGSUM),
	RED_ROWS(ReduceLogSumExp, 18, OM_OPC_NONE, R_LSE),
	RED_ROWS(ReduceSumSquare, 18, OM_OPC_NONE, R_SUMSQ),
	{"ArgMax", "", 1, arg_infer, arg_kernel, OM_OP_EXACT | OM_OP_PERM_REDUCE, &sig_ArgMax_1, OM_OPC_NONE, NULL,
	 ARG_MAX, NULL},
	{"ArgMin", "", 1, arg_infer, arg_kernel, OM_OP_EXACT | OM_OP_PERM_REDUCE, &sig_ArgMin_1, OM_OPC_NONE, NULL,
	 ARG_MIN, NULL},
	{"CumSum", "", 11, cum_infer, cum_kernel, OM_OP_EXACT, &sig_CumSum_11, OM_OPC_NONE, NULL,
	 CUM_SUM, NULL},
	{"CumProd", "", 26, cum_infer, cum_kernel, OM_OP_EXACT, &sig_CumProd_26, OM_OPC_NONE, NULL,
	 CUM_PROD, NULL},
};

const om_op_table om_ops_reduce = OM_TABLE(rows);
