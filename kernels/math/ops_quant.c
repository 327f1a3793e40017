/* ops_quant.c — QuantizeLinear and DequantizeLinear (per tensor, per axis, blocked; 8/16-bit,
 * 4-bit, float8 and float4 types), DynamicQuantizeLinear, QLinearMatMul (its integer sums by
 * om_igemm_run). Arithmetic in float (as ONNX's reference and ONNX Runtime), rounding half to
 * even; conversions through Cast's om_cast_elems. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cast.h"
#include "clones.h"
#include "float8.h"
#include "gemm_int.h"
#include "layout.h"
#include "numrun.h"
#include "op.h"
#include "quant_loops.h"

/* the integer range of a quantized type; false for float8/float4 (no rounding, cast) */
static bool q_int_range(int32_t dt, float *lo, float *hi)
{
	switch (dt) {
	case OM_INT8: *lo = -128, *hi = 127; return true;
	case OM_UINT8: *lo = 0, *hi = 255; return true;
	case OM_INT16: *lo = -32768, *hi = 32767; return true;
	case OM_UINT16: *lo = 0, *hi = 65535; return true;
	case OM_INT4: *lo = -8, *hi = 7; return true;
	case OM_UINT4: *lo = 0, *hi = 15; return true;
	case OM_INT2: *lo = -2, *hi = 1; return true;
	case OM_UINT2: *lo = 0, *hi = 3; return true;
	case OM_INT32: *lo = -2147483648.0f, *hi = 2147483520.0f; return true;
	default: return false;
	}
}

static bool q_is_quant_type(int32_t dt)
{
	float lo = 0, hi = 0;
	return q_int_range(dt, &lo, &hi) || om_is_float8(dt) || dt == OM_FLOAT4E2M1;
}

/* n elements of any castable type as float (malloc'd; NULL on failure, error set) */
static float *q_floats(om_ctx *c, const om_tensor *t, int64_t n)
{
	float *f = malloc(sizeof(float) * (size_t)(n + 1));
	if (!f) {
		om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		return NULL;
	}
	if (om_cast_elems(c, f, OM_FLOAT, t->data, t->dtype, n, 0)) {
		free(f);
		return NULL;
	}
	return f;
}

/* x viewed as [outer, A, inner] around `axis`; the scale (and zero point) index of an element
 * is 0 (per tensor), a (per axis) or (o * SA + a / block) * inner + i (blocked) */
typedef struct q_layout {
	int64_t outer, A, inner, SA, block;
	int kind; /* 0 per tensor, 1 per axis, 2 blocked */
} q_layout;

static om_kind q_layout_make(om_ctx *c, const om_tensor *x, const om_tensor *s,
			     const om_tensor *zp, q_layout *l)
{
	memset(l, 0, sizeof *l);
	l->outer = l->A = l->inner = 1;
	if (zp && om_tensor_numel(zp) != om_tensor_numel(s))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"zero point and scale differ in shape");
	if (om_tensor_numel(s) == 1 && s->rank <= 1)
		return OM_OK;
	int32_t axis;
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", 1), x->rank, &axis);
	if (rc)
		return rc;
	for (int32_t d = 0; d < x->rank; d++)
		if (d < axis)
			l->outer *= x->dims[d];
		else if (d > axis)
			l->inner *= x->dims[d];
	l->A = x->dims[axis];
	l->block = om_attr_int(c->node, "block_size", 0);
	if (s->rank == 1 && l->block == 0) {
		if (s->dims[0] != l->A)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"per-axis scale has %lld entries, axis %d has %lld",
					(long long)s->dims[0], axis, (long long)l->A);
		l->kind = 1;
		return OM_OK;
	}
	if (l->block <= 0 || s->rank != x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"a blocked scale needs block_size > 0 and X's rank");
	for (int32_t d = 0; d < x->rank; d++) {
		const int64_t want =
			d == axis ? (x->dims[d] + l->block - 1) / l->block : x->dims[d];
		if (s->dims[d] != want)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"blocked scale dim %d is %lld, want %lld", d,
					(long long)s->dims[d], (long long)want);
	}
	l->SA = s->dims[axis];
	l->kind = 2;
	return OM_OK;
}

static inline int64_t q_param_index(const q_layout *l, int64_t i)
{
	if (l->kind == 0)
		return 0;
	const int64_t in = i % l->inner, a = (i / l->inner) % l->A;
	if (l->kind == 1)
		return a;
	const int64_t o = i / (l->inner * l->A);
	return (o * l->SA + a / l->block) * l->inner + in;
}

/* the type QuantizeLinear produces: the zero point's, else output_dtype, else uint8 */
static int32_t q_out_type(const om_ctx *c)
{
	const om_tensor *zp = om_ctx_in(c, 2);
	if (zp)
		return zp->dtype;
	const int64_t odt = om_attr_int(c->node, "output_dtype", 0);
	return odt ? (int32_t)odt : OM_UINT8;
}

/* DequantizeLinear: output_dtype, else the scale's type */
static int32_t dq_out_type(const om_ctx *c)
{
	const int64_t odt = om_attr_int(c->node, "output_dtype", 0);
	return odt ? (int32_t)odt : c->in[1]->dtype;
}

static om_kind q_check(om_ctx *c, bool quantize, q_layout *l)
{
	const om_tensor *x = om_ctx_in(c, 0), *s = om_ctx_in(c, 1), *zp = om_ctx_in(c, 2);
	if (!x || !s || !om_is_float_type(s->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs x and a float scale");
	const int32_t qdt = quantize ? q_out_type(c) : x->dtype;
	if (!q_is_quant_type(qdt) || (zp && zp->dtype != qdt) ||
	    (quantize && !om_is_float_type(x->dtype) && x->dtype != OM_INT32))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "quantized type %s",
				om_dtype_name(qdt));
	if (!quantize && !om_is_float_type(dq_out_type(c)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "output_dtype not float");
	return q_layout_make(c, x, s, zp, l);
}

static om_kind quantize_infer(om_ctx *c)
{
	q_layout l;
	om_kind rc = q_check(c, true, &l);
	if (!rc)
		om_set_shape(c->out[0], q_out_type(c), c->in[0]->rank, c->in[0]->dims);
	return rc;
}

static om_kind dequantize_infer(om_ctx *c)
{
	q_layout l;
	om_kind rc = q_check(c, false, &l);
	if (!rc)
		om_set_shape(c->out[0], dq_out_type(c), c->in[0]->rank, c->in[0]->dims);
	return rc;
}

/* y = saturate(round(x / scale) + zp) for integer types, cast(x / scale + zp) for floats */
static void q_apply(float *v, int64_t n, int32_t qdt)
{
	float lo = 0, hi = 0;
	if (!q_int_range(qdt, &lo, &hi))
		return;
	for (int64_t i = 0; i < n; i++)
		v[i] = v[i] != v[i] ? 0 : v[i] < lo ? lo : v[i] > hi ? hi : v[i];
}

/* float32 x (QuantizeLinear) or y (DequantizeLinear), a float32 scale per tensor or per axis
 * and a type of quant_loops.c: its one-pass loops (the same arithmetic as below) */
static bool q_fast_fits(const om_ctx *c, const q_layout *l, bool quantize, int32_t qdt)
{
	const int32_t fdt = quantize ? c->in[0]->dtype : c->out[0]->dtype;
	return fdt == OM_FLOAT && c->in[1]->dtype == OM_FLOAT && l->kind != 2 &&
	       om_qloop_has(qdt, quantize);
}

static om_kind q_fast(om_ctx *c, const q_layout *l, bool quantize, int32_t qdt)
{
	const om_tensor *x = c->in[0], *s = c->in[1], *zpt = om_ctx_in(c, 2);
	const int64_t n = om_tensor_numel(x), ns = om_tensor_numel(s);
	float *sc = q_floats(c, s, ns), *zp = sc && zpt ? q_floats(c, zpt, ns) : NULL;
	if (!sc || (zpt && !zp)) {
		free(sc);
		return c->st->kind ? c->st->kind : OM_ERR_NOMEM;
	}
	const om_qloop q = {.x = x->data, .y = c->out[0]->data, .sc = sc, .zp = zp, .n = n,
			    .inner = l->kind ? l->inner : n, .A = l->kind ? l->A : 1, .qdt = qdt,
			    .quantize = quantize};
	om_qloop_run(&q, c->threads);
	free(sc), free(zp);
	return OM_OK;
}

static om_kind qdq_kernel(om_ctx *c, bool quantize)
{
	q_layout l;
	om_kind rc = q_check(c, quantize, &l);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *s = c->in[1], *zpt = om_ctx_in(c, 2);
	const int64_t n = om_tensor_numel(x), ns = om_tensor_numel(s);
	const int32_t qdt = quantize ? q_out_type(c) : x->dtype;
	if (q_fast_fits(c, &l, quantize, qdt))
		return q_fast(c, &l, quantize, qdt);
	float *v = q_floats(c, x, n), *sc = v ? q_floats(c, s, ns) : NULL;
	float *zp = sc && zpt ? q_floats(c, zpt, ns) : NULL;
	if (!sc || (zpt && !zp)) {
		free(v), free(sc);
		return c->st->kind ? c->st->kind : OM_ERR_NOMEM;
	}
	float lo = 0, hi = 0;
	const bool ints = q_int_range(qdt, &lo, &hi);
	for (int64_t i = 0; i < n; i++) {
		const int64_t p = q_param_index(&l, i);
		const float z = zp ? zp[p] : 0;
		if (quantize)
			v[i] = ints ? rintf(v[i] / sc[p]) + z : v[i] / sc[p] + z;
		else
			v[i] = (v[i] - z) * sc[p];
	}
	if (quantize)
		q_apply(v, n, qdt);
	const int sat = (int)om_attr_int(c->node, "saturate", 1);
	rc = om_cast_elems(c, c->out[0]->data, c->out[0]->dtype, v, OM_FLOAT, n, sat);
	free(v), free(sc), free(zp);
	return rc;
}

static om_kind quantize_kernel(om_ctx *c)
{
	return qdq_kernel(c, true);
}

static om_kind dequantize_kernel(om_ctx *c)
{
	return qdq_kernel(c, false);
}

/* ---- DynamicQuantizeLinear: uint8 over [min(0, x), max(0, x)] ------------------------- */

static om_kind dynq_infer(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	if (!x || x->dtype != OM_FLOAT)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs float x");
	om_set_shape(c->out[0], OM_UINT8, x->rank, x->dims);
	if (c->nout > 1 && c->out[1])
		om_set_shape(c->out[1], OM_FLOAT, 0, NULL);
	if (c->nout > 2 && c->out[2])
		om_set_shape(c->out[2], OM_UINT8, 0, NULL);
	return OM_OK;
}

static om_kind dynq_kernel(om_ctx *c)
{
	om_kind rc = dynq_infer(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int64_t n = om_tensor_numel(x);
	float scale;
	uint8_t zp;
	om_dynq_params(x->data, n, c->threads, &scale, &zp);
	om_dynq_quantize(x->data, n, scale, zp, c->out[0]->data, c->threads);
	if (c->nout > 1 && c->out[1])
		memcpy(c->out[1]->data, &scale, sizeof scale);
	if (c->nout > 2 && c->out[2])
		*(uint8_t *)c->out[2]->data = zp;
	return OM_OK;
}

/* ---- QLinearMatMul: int8/uint8 operands, per-tensor or per-row/column parameters ------- */

typedef struct qmm_geom {
	int64_t batch, M, K, N, astep, bstep; /* a [batch?, M, K], b [batch?, K, N] */
} qmm_geom;

static om_kind qmm_geom_make(om_ctx *c, qmm_geom *g, int32_t *ydt, int64_t *ydims,
			     int32_t *yrank)
{
	const om_tensor *a = om_ctx_in(c, 0), *b = om_ctx_in(c, 3), *yzp = om_ctx_in(c, 7);
	for (int i = 0; i < 8; i++)
		if (!om_ctx_in(c, i))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs 8 inputs");
	if ((a->dtype != OM_INT8 && a->dtype != OM_UINT8) ||
	    (b->dtype != OM_INT8 && b->dtype != OM_UINT8) ||
	    (yzp->dtype != OM_INT8 && yzp->dtype != OM_UINT8))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "8-bit integer operands only");
	if (a->rank < 2 || b->rank < 2 || a->rank > 3 || b->rank > 3)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "operands of rank 2 or 3");
	g->M = a->dims[a->rank - 2], g->K = a->dims[a->rank - 1];
	g->N = b->dims[b->rank - 1];
	const int64_t ba = a->rank == 3 ? a->dims[0] : 1, bb = b->rank == 3 ? b->dims[0] : 1;
	if (b->dims[b->rank - 2] != g->K || (ba != bb && ba != 1 && bb != 1))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"operand shapes do not match");
	g->batch = ba > bb ? ba : bb;
	g->astep = ba == 1 ? 0 : g->M * g->K, g->bstep = bb == 1 ? 0 : g->K * g->N;
	const int64_t np[] = {1, g->M, 1, 1, g->N, 1, 1, 1}; /* allowed parameter sizes */
	for (int i = 1; i < 8; i++) {
		if (i == 3)
			continue;
		const int64_t k = om_tensor_numel(c->in[i]);
		if (k != 1 && k != np[i])
			return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
					"input %d: per-tensor or per-row/column parameters", i);
	}
	*ydt = yzp->dtype;
	*yrank = a->rank > b->rank ? a->rank : b->rank;
	ydims[0] = g->batch;
	ydims[*yrank - 2] = g->M, ydims[*yrank - 1] = g->N;
	return OM_OK;
}

static om_kind qmm_infer(om_ctx *c)
{
	qmm_geom g = {0};
	int32_t dt = 0, rank = 0;
	int64_t dims[3];
	om_kind rc = qmm_geom_make(c, &g, &dt, dims, &rank);
	if (!rc)
		om_set_shape(c->out[0], dt, rank, dims);
	return rc;
}

/* K in chunks whose int32 sums cannot overflow: a term is at most 255 * 255 in magnitude */
enum { QMM_KCHUNK = 32768 };

/* acc (M x N) = the sum over k of (a - az)(b - bz) in batch t, exact: om_igemm_run's int32
 * sums of K chunks added in double (an integer below 2^53: ONNX's reference sum) */
static bool qmm_sums(const om_ctx *c, const qmm_geom *g, int64_t t, const int32_t *zp,
		     int32_t *part, double *acc)
{
	const om_tensor *a = c->in[0], *b = c->in[3];
	const int64_t mn = g->M * g->N;
	for (int64_t i = 0; i < mn; i++)
		acc[i] = 0;
	for (int64_t k0 = 0; k0 < g->K; k0 += QMM_KCHUNK) {
		const int64_t kc = g->K - k0 < QMM_KCHUNK ? g->K - k0 : QMM_KCHUNK;
		const om_igemm ig = {.M = g->M, .N = g->N, .K = kc,
				     .A = (const int8_t *)a->data + t * g->astep + k0,
				     .B = (const int8_t *)b->data + t * g->bstep + k0 * g->N,
				     .lda = g->K, .ldb = g->N, .ldc = g->N,
				     .a_signed = a->dtype == OM_INT8, .b_signed = b->dtype == OM_INT8,
				     .za = &zp[0], .zb = &zp[1], .nza = 1, .nzb = 1, .C = part};
		if (!om_igemm_run(&ig, c->threads))
			return false;
		for (int64_t i = 0; i < mn; i++)
			acc[i] += part[i];
	}
	return true;
}

static om_kind qmm_kernel(om_ctx *c)
{
	qmm_geom g = {0};
	int32_t dt = 0, rank = 0;
	int64_t dims[3];
	om_kind rc = qmm_geom_make(c, &g, &dt, dims, &rank);
	if (rc)
		return rc;
	float *p[8] = {0}; /* the parameters (inputs 1, 2, 4-7) as float */
	for (int i = 1; i < 8 && !rc; i++)
		if (i != 3 && !(p[i] = q_floats(c, c->in[i], om_tensor_numel(c->in[i]))))
			rc = c->st->kind ? c->st->kind : OM_ERR_NOMEM;
	const int64_t mn = g.M * g.N, ny = g.batch * mn;
	/* one buffer: acc [mn] doubles, y [ny] floats, part [mn] int32 (each from a 16-byte
	 * boundary) */
	double *acc = NULL;
	float *y = NULL;
	int32_t *part = NULL;
	const size_t ny4 = (size_t)(ny + 3) / 4 * 4, mn2 = (size_t)(mn + 1) / 2 * 2;
	if (!rc && !(rc = om_ctx_scratch(c, sizeof(double) * mn2 + sizeof(float) * ny4 +
						    sizeof(int32_t) * (size_t)mn,
					 "QLinearMatMul's sums", (void **)&acc))) {
		y = (float *)(acc + mn2);
		part = (int32_t *)(y + ny4);
	}
	float lo = 0, hi = 0;
	q_int_range(dt, &lo, &hi);
	const bool arow = om_tensor_numel(c->in[1]) > 1, bcol = om_tensor_numel(c->in[4]) > 1;
	const int32_t zp[2] = {rc ? 0 : (int32_t)p[2][0], rc ? 0 : (int32_t)p[5][0]};
	for (int64_t t = 0; !rc && t < g.batch; t++) {
		if (!qmm_sums(c, &g, t, zp, part, acc)) {
			rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
			break;
		}
		for (int64_t i = 0; i < g.M; i++)
			for (int64_t j = 0; j < g.N; j++) {
				const float s = p[1][arow ? i : 0] * p[4][bcol ? j : 0] / p[6][0];
				const float q = rintf((float)acc[i * g.N + j] * s) + p[7][0];
				y[t * mn + i * g.N + j] = q != q ? 0 : q < lo ? lo : q > hi ? hi : q;
			}
	}
	if (!rc)
		rc = om_cast_elems(c, c->out[0]->data, dt, y, OM_FLOAT, ny, 0);
	for (int i = 0; i < 8; i++)
		free(p[i]);
	om_ctx_scratch_done(c, acc);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_QuantizeLinear_10_v23[] = {{"axis", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 0}, {"output_dtype", OM_ATTR_INT, 0},
	{"precision", OM_ATTR_INT, 0}, {"saturate", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QuantizeLinear-23: x y_scale [y_zero_point] -> y */
static const om_sig sig_QuantizeLinear_10_v23 = {23, 2, 3, 1, 1, 0x4, 0x0, 0x3, 0x0, 0x3, 0x0,
	attrs_QuantizeLinear_10_v23, NULL};
static const om_sig_attr attrs_QuantizeLinear_10_v21[] = {{"axis", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 0}, {"output_dtype", OM_ATTR_INT, 0},
	{"saturate", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QuantizeLinear-21: x y_scale [y_zero_point] -> y */
static const om_sig sig_QuantizeLinear_10_v21 = {21, 2, 3, 1, 1, 0x4, 0x0, 0x3, 0x0, 0x3, 0x0,
	attrs_QuantizeLinear_10_v21, &sig_QuantizeLinear_10_v23};
static const om_sig_attr attrs_QuantizeLinear_10_v19[] = {{"axis", OM_ATTR_INT, 0},
	{"saturate", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QuantizeLinear-19: x y_scale [y_zero_point] -> y */
static const om_sig sig_QuantizeLinear_10_v19 = {19, 2, 3, 1, 1, 0x4, 0x0, 0x3, 0x0, 0x3, 0x0,
	attrs_QuantizeLinear_10_v19, &sig_QuantizeLinear_10_v21};
static const om_sig_attr attrs_QuantizeLinear_10_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QuantizeLinear-13: x y_scale [y_zero_point] -> y */
static const om_sig sig_QuantizeLinear_10_v13 = {13, 2, 3, 1, 1, 0x4, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_QuantizeLinear_10_v13, &sig_QuantizeLinear_10_v19};
/* QuantizeLinear-10: x y_scale [y_zero_point] -> y */
static const om_sig sig_QuantizeLinear_10 = {10, 2, 3, 1, 1, 0x4, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_QuantizeLinear_10_v13};
static const om_sig_attr attrs_DequantizeLinear_10_v23[] = {{"axis", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 0}, {"output_dtype", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DequantizeLinear-23: x x_scale [x_zero_point] -> y */
static const om_sig sig_DequantizeLinear_10_v23 = {23, 2, 3, 1, 1, 0x4, 0x0, 0x2, 0x1, 0x2, 0x1,
	attrs_DequantizeLinear_10_v23, NULL};
static const om_sig_attr attrs_DequantizeLinear_10_v21[] = {{"axis", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DequantizeLinear-21: x x_scale [x_zero_point] -> y */
static const om_sig sig_DequantizeLinear_10_v21 = {21, 2, 3, 1, 1, 0x4, 0x0, 0x2, 0x1, 0x2, 0x1,
	attrs_DequantizeLinear_10_v21, &sig_DequantizeLinear_10_v23};
static const om_sig_attr attrs_DequantizeLinear_10_v19[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DequantizeLinear-19: x x_scale [x_zero_point] -> y */
static const om_sig sig_DequantizeLinear_10_v19 = {19, 2, 3, 1, 1, 0x4, 0x0, 0x2, 0x1, 0x2, 0x1,
	attrs_DequantizeLinear_10_v19, &sig_DequantizeLinear_10_v21};
static const om_sig_attr attrs_DequantizeLinear_10_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* DequantizeLinear-13: x x_scale [x_zero_point] -> y */
static const om_sig sig_DequantizeLinear_10_v13 = {13, 2, 3, 1, 1, 0x4, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_DequantizeLinear_10_v13, &sig_DequantizeLinear_10_v19};
/* DequantizeLinear-10: x x_scale [x_zero_point] -> y */
static const om_sig sig_DequantizeLinear_10 = {10, 2, 3, 1, 1, 0x4, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_DequantizeLinear_10_v13};
/* DynamicQuantizeLinear-11: x -> y y_scale y_zero_point */
static const om_sig sig_DynamicQuantizeLinear_11 = {11, 1, 1, 3, 3, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	NULL, NULL};
/* QLinearMatMul-21: a a_scale a_zero_point b b_scale b_zero_point y_scale y_zero_point -> y */
static const om_sig sig_QLinearMatMul_10_v21 = {21, 8, 8, 1, 1, 0x0, 0x0, 0x52, 0x0, 0x52, 0x0,
	NULL, NULL};
/* QLinearMatMul-10: a a_scale a_zero_point b b_scale b_zero_point y_scale y_zero_point -> y */
static const om_sig sig_QLinearMatMul_10 = {10, 8, 8, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	&sig_QLinearMatMul_10_v21};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"QuantizeLinear", "", 10, quantize_infer, quantize_kernel, OM_OP_EXACT | OM_OP_QDQ,
	 &sig_QuantizeLinear_10, OM_OPC_QUANTIZE_LINEAR, om_layout_per_tensor, 0, NULL},
	{"DequantizeLinear", "", 10, dequantize_infer, dequantize_kernel,
	 OM_OP_EXACT | OM_OP_QDQ, &sig_DequantizeLinear_10, OM_OPC_DEQUANTIZE_LINEAR,
	 om_layout_per_tensor, 0, NULL},
	{"DynamicQuantizeLinear", "", 11, dynq_infer, dynq_kernel, OM_OP_EXACT,
	 &sig_DynamicQuantizeLinear_11, OM_OPC_DYNAMIC_QUANTIZE_LINEAR, NULL, 0, NULL},
	{"QLinearMatMul", "", 10, qmm_infer, qmm_kernel, OM_OP_EXACT, &sig_QLinearMatMul_10,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_quant = OM_TABLE(rows);
