/* ops_qgemm.c — com.microsoft QGemm (ONNX Runtime's quantized Gemm): A (M x K, or K x M with
 * transA) int8 or uint8 with a one-value scale and zero point, B (K x N, or N x K with transB)
 * int8 or uint8 with a scale and zero point each one value or one per column, C an optional
 * int32 bias broadcast to (M, N) (a scalar, (N), (1, N), (M, 1) or (M, N)), alpha. The int32
 * sums acc = C + sum over k of (a - za)(b - zb[j]) are exact (om_igemm_run, or over a
 * constant B packed once in fast mode: om_igemm_packed_get); then, as ONNX
 * Runtime 1.30 (MLAS's output processors), with s[j] = alpha * a_scale * b_scale[j]:
 *   with y_zero_point: y = rint(clamp(float(acc) * (s[j] / y_scale))) + y_zp, 8-bit of
 *   y_zero_point's type (clamped to its range less y_zp before rounding, half to even);
 *   without: y = float(acc) * s[j] (/ y_scale when y_scale alone is given), float. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "gemm_int.h"
#include "igemm_packed.h"
#include "op.h"
#include "parallel.h"
#include "qparam.h"

enum { QG_A, QG_AS, QG_AZ, QG_B, QG_BS, QG_BZ, QG_C, QG_YS, QG_YZ };

typedef struct qg_geom {
	int64_t M, K, N;
	bool ta, tb;
	int64_t cm, cn; /* C's extent along M and N (1: broadcast), cm = 0 when no C */
} qg_geom;

/* one value, or (per column) a 1-D tensor of n */
static bool one_or_n(const om_tensor *t, int64_t n)
{
	return t->rank == 0 || (t->rank == 1 && (t->dims[0] == 1 || t->dims[0] == n));
}

static om_kind qg_geometry(om_ctx *c, qg_geom *g)
{
	const om_tensor *a = om_ctx_in(c, QG_A), *b = om_ctx_in(c, QG_B);
	const om_tensor *bs = om_ctx_in(c, QG_BS), *bz = om_ctx_in(c, QG_BZ);
	const om_tensor *cc = om_ctx_in(c, QG_C), *ys = om_ctx_in(c, QG_YS);
	const om_tensor *yz = om_ctx_in(c, QG_YZ);
	if (!a || !b || !bs || !bz || !om_is_q8(a->dtype) || !om_is_q8(b->dtype) ||
	    a->rank != 2 || b->rank != 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"A and B 2-D int8 or uint8 with their scales and zero points");
	om_kind rc = om_qparam_get(c, QG_AS, QG_AZ, a->dtype, NULL);
	if (rc)
		return rc;
	g->ta = om_attr_int(c->node, "transA", 0) != 0;
	g->tb = om_attr_int(c->node, "transB", 0) != 0;
	g->M = a->dims[g->ta ? 1 : 0], g->K = a->dims[g->ta ? 0 : 1];
	g->N = b->dims[g->tb ? 0 : 1];
	if (b->dims[g->tb ? 1 : 0] != g->K)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "A's K %lld, B's %lld",
				(long long)g->K, (long long)b->dims[g->tb ? 1 : 0]);
	if (bs->dtype != OM_FLOAT || bz->dtype != b->dtype || !one_or_n(bs, g->N) ||
	    !one_or_n(bz, g->N) || om_tensor_numel(bs) != om_tensor_numel(bz))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"b's scale and zero point: one value or one per column, alike");
	if ((ys && (rc = om_qparam_get(c, QG_YS, -1, 0, NULL))) ||
	    (yz && (!om_is_q8(yz->dtype) || om_tensor_numel(yz) != 1 || yz->rank > 1)))
		return rc ? rc : om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					  "y_zero_point: one int8 or uint8 value");
	if (yz && !ys)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"y_zero_point without y_scale");
	g->cm = g->cn = 0;
	if (cc) {
		const bool ok = cc->dtype == OM_INT32 && cc->rank <= 2 &&
				(om_tensor_numel(cc) == 1 ||
				 (cc->rank == 1 && cc->dims[0] == g->N) ||
				 (cc->rank == 2 && (cc->dims[0] == 1 || cc->dims[0] == g->M) &&
				  (cc->dims[1] == 1 || cc->dims[1] == g->N)));
		if (!ok)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"C: int32, broadcast to (M, N)");
		g->cm = cc->rank == 2 ? cc->dims[0] : 1;
		g->cn = cc->rank == 0 ? 1 : cc->dims[cc->rank - 1];
	}
	int64_t dims[2] = {g->M, g->N};
	om_set_shape(c->out[0], yz ? yz->dtype : OM_FLOAT, 2, dims);
	return OM_OK;
}

static om_kind qg_infer(om_ctx *c)
{
	qg_geom g;
	return qg_geometry(c, &g);
}

/* rows [lo, hi) of the result: acc (M x N, int32, C already added) to y */
typedef struct qg_out {
	const int32_t *acc;
	void *y;
	const float *s; /* one factor per column */
	int64_t N;
	bool quant, sgn;
	float zp;
} qg_out;

OM_CLONES static void qg_row(const int32_t *acc, const float *s, int64_t N, bool quant, bool sgn,
			     float zp, void *y)
{
	if (!quant) {
		for (int64_t j = 0; j < N; j++)
			((float *)y)[j] = (float)acc[j] * s[j];
		return;
	}
	float lo, hi;
	om_q8_range(sgn, &lo, &hi);
	lo -= zp, hi -= zp;
	for (int64_t j = 0; j < N; j++) {
		float v = (float)acc[j] * s[j];
		v = v < lo ? lo : v > hi ? hi : v;
		((uint8_t *)y)[j] = om_q8_byte(rintf(v) + zp, sgn);
	}
}

static void qg_rows(void *arg, int64_t lo, int64_t hi)
{
	const qg_out *o = arg;
	const size_t es = o->quant ? 1 : sizeof(float);
	for (int64_t i = lo; i < hi; i++)
		qg_row(o->acc + i * o->N, o->s, o->N, o->quant, o->sgn, o->zp,
		       (char *)o->y + (size_t)(i * o->N) * es);
}

/* the factors s[j] (alpha * a_scale * b_scale[j] [/ y_scale]) and b's zero points */
static void qg_params(const om_ctx *c, const qg_geom *g, float *s, int32_t *zb, int64_t *nzb)
{
	const om_tensor *bs = c->in[QG_BS], *bz = c->in[QG_BZ], *ys = om_ctx_in(c, QG_YS);
	const float alpha = om_attr_float(c->node, "alpha", 1.0f);
	const float as = *(const float *)c->in[QG_AS]->data;
	const int64_t nb = om_tensor_numel(bs);
	for (int64_t j = 0; j < g->N; j++) {
		s[j] = alpha * as * ((const float *)bs->data)[nb == 1 ? 0 : j];
		if (ys)
			s[j] /= *(const float *)ys->data;
	}
	*nzb = nb;
	for (int64_t j = 0; j < nb; j++)
		zb[j] = om_q8_at(bz->data, j, bz->dtype == OM_INT8);
}

/* acc = C broadcast to (M, N) */
static void qg_bias(const om_ctx *c, const qg_geom *g, int32_t *acc)
{
	const int32_t *cc = c->in[QG_C]->data;
	for (int64_t i = 0; i < g->M; i++)
		for (int64_t j = 0; j < g->N; j++)
			acc[i * g->N + j] = cc[(g->cm == 1 ? 0 : i) * g->cn + (g->cn == 1 ? 0 : j)];
}

static om_kind qg_kernel(om_ctx *c)
{
	qg_geom g;
	om_kind rc = qg_geometry(c, &g);
	if (rc || g.M == 0 || g.N == 0)
		return rc;
	const om_tensor *a = c->in[QG_A], *b = c->in[QG_B], *yz = om_ctx_in(c, QG_YZ);
	om_qparam ap;
	om_qparam_get(c, QG_AS, QG_AZ, a->dtype, &ap);
	const size_t mn = (size_t)(g.M * g.N);
	/* one buffer of 4-byte values, each part from a 16-byte boundary: acc [mn], sum [mn]
	 * (with C), zb [N], s [N] */
	const size_t mn4 = (mn + 3) / 4 * 4, n4 = ((size_t)g.N + 3) / 4 * 4;
	const size_t parts = mn4 * (g.cm ? 2 : 1) + 2 * n4;
	int32_t *acc, *sum = NULL;
	if ((rc = om_ctx_scratch(c, sizeof(int32_t) * parts, "QGemm sums", (void **)&acc)))
		return rc;
	int32_t *zb = acc + mn4 * (g.cm ? 2 : 1);
	float *s = (float *)(zb + n4);
	if (g.cm)
		sum = acc + mn4;
	int64_t nzb = 0;
	qg_params(c, &g, s, zb, &nzb);
	const om_igemm ig = {.M = g.M, .N = g.N, .K = g.K, .A = a->data, .B = b->data,
			     .lda = a->dims[1], .ldb = b->dims[1], .ldc = g.N, .ta = g.ta,
			     .tb = g.tb, .a_signed = a->dtype == OM_INT8,
			     .b_signed = b->dtype == OM_INT8, .za = &ap.zp, .nza = 1,
			     .zb = zb, .nzb = nzb, .C = sum ? sum : acc};
	om_igemm pg = ig; /* over a constant B packed once (fast mode), zero points 0 */
	pg.zb = NULL, pg.nzb = 0;
	om_igemm_pk *pk = g.K ? om_igemm_packed_get(c, QG_B, g.K, g.N, ig.ldb, g.tb, zb, nzb) : NULL;
	const bool ok = g.K == 0 ? (memset(ig.C, 0, mn * sizeof(int32_t)), true)
				 : (pk && om_igemm_pk_run(pk, &pg, c->threads)) ||
					   om_igemm_run(&ig, c->threads);
	if (ok && sum) {
		qg_bias(c, &g, acc);
		for (size_t i = 0; i < mn; i++) /* wraps as MLAS's int32 accumulation */
			acc[i] = (int32_t)((uint32_t)acc[i] + (uint32_t)sum[i]);
	}
	if (ok) {
		qg_out o = {acc, c->out[0]->data, s, g.N, yz != NULL,
			    yz && yz->dtype == OM_INT8, yz ? (float)om_q8_at(yz->data, 0,
									  yz->dtype == OM_INT8)
							   : 0};
		om_par_for(c->threads, g.M, 1 + 16384 / g.N, qg_rows, &o);
	}
	om_ctx_scratch_done(c, acc);
	return ok ? OM_OK : om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the product");
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_QGemm_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"transA", OM_ATTR_INT, 0}, {"transB", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* QGemm-1: A a_scale a_zero_point B b_scale b_zero_point [C] [y_scale] [y_zero_point] -> Y */
static const om_sig sig_ms_QGemm_1 = {1, 6, 9, 1, 1, 0x1c0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QGemm_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"QGemm", "com.microsoft", 1, qg_infer, qg_kernel, OM_OP_EXACT, &sig_ms_QGemm_1,
	 OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_qgemm = OM_TABLE(rows);
