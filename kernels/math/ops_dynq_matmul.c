/* ops_dynq_matmul.c — ONNX Runtime's contrib 8-bit products with a float result:
 * com.microsoft MatMulIntegerToFloat (A, B 8-bit with their scales and zero points, optional
 * bias) and DynamicQuantizeMatMul (float A quantized per tensor to uint8 as
 * DynamicQuantizeLinear does, then the same product). A is [..., M, K] (its leading dims fold
 * into the rows), B [K, N]; a's scale and zero point one value, b's one or one per column.
 * The int32 sums are exact (om_igemm_pk_run over a packed constant B in fast mode, else
 * om_igemm_run), written into Y's own buffer and turned into
 * y = float(acc) * (a_scale * b_scale[j]) [+ bias[j]] in place, row by row over the pool, the
 * product then the sum each rounded (no contraction): the bits of the unfused
 * MatMulInteger -> Cast -> Mul [-> Add] that passes/fuse_dynq.c replaces, in either mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "clones.h"
#include "gemm_int.h"
#include "igemm_packed.h"
#include "op.h"
#include "parallel.h"
#include "qparam.h"
#include "quant_loops.h"

/* the two rows (om_op.param), and where each has its inputs (-1: none) */
enum { QMF_TO_FLOAT = 0, QMF_DYNAMIC = 1 };
typedef struct qmf_slots {
	int a_scale, b_scale, a_zp, b_zp, bias;
} qmf_slots;
static const qmf_slots QMF_SLOTS[2] = {{2, 3, 4, 5, 6}, {-1, 2, -1, 3, 4}};

static bool is8(int32_t t)
{
	return t == OM_INT8 || t == OM_UINT8;
}

/* one value, or (per column) a 1-D tensor of n */
static bool one_or(const om_tensor *t, int64_t n)
{
	return om_tensor_numel(t) == 1 || (t->rank == 1 && t->dims[0] == n);
}

typedef struct qmf_geom {
	int64_t M, K, N;
} qmf_geom;

/* checks the inputs and sets Y's shape: A's dims with the last one N */
static om_kind qmf_geometry(om_ctx *c, qmf_geom *g)
{
	const qmf_slots *s = &QMF_SLOTS[c->op->param];
	const om_tensor *a = c->in[0], *b = c->in[1];
	const om_tensor *as = om_ctx_in(c, s->a_scale), *bs = om_ctx_in(c, s->b_scale);
	const om_tensor *az = om_ctx_in(c, s->a_zp), *bz = om_ctx_in(c, s->b_zp);
	const om_tensor *bias = om_ctx_in(c, s->bias);
	if (!a || !b || !bs || (s->a_scale >= 0 && !as))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs A, B and the scales");
	if (b->rank != 2 || a->rank < 1)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"A of rank %d and B of rank %d (needs A of rank >= 1, B 2-D)",
				(int)a->rank, (int)b->rank);
	if ((c->op->param == QMF_DYNAMIC ? a->dtype != OM_FLOAT : !is8(a->dtype)) ||
	    !is8(b->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "A or B of another type");
	g->K = a->dims[a->rank - 1], g->N = b->dims[1], g->M = 1;
	for (int32_t i = 0; i + 1 < a->rank; i++)
		g->M *= a->dims[i];
	if (b->dims[0] != g->K)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"A's last dim %lld is not B's rows %lld", (long long)g->K,
				(long long)b->dims[0]);
	if ((as && (as->dtype != OM_FLOAT || om_tensor_numel(as) != 1)) ||
	    bs->dtype != OM_FLOAT || !one_or(bs, g->N) ||
	    (az && (az->dtype != a->dtype || om_tensor_numel(az) != 1)) ||
	    (bz && (bz->dtype != b->dtype || !one_or(bz, g->N))) ||
	    (bias && (bias->dtype != OM_FLOAT || bias->rank != 1 || bias->dims[0] != g->N)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"scales, zero points or bias of another type or shape (a's one "
				"value, b's one or one per column, bias 1-D of B's columns)");
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, a->dims, sizeof dims[0] * (size_t)a->rank);
	dims[a->rank - 1] = g->N;
	om_set_shape(c->out[0], OM_FLOAT, a->rank, dims);
	return OM_OK;
}

static om_kind qmf_infer(om_ctx *c)
{
	qmf_geom g;
	return qmf_geometry(c, &g);
}

/* the int32 sums read and the floats written at the same place (Y's buffer) */
typedef int32_t qmf_acc __attribute__((may_alias));

/* rows [lo, hi) of Y: y = float(acc) * s[j] [+ bias[j]] */
typedef struct qmf_epi {
	float *y;
	int64_t N;
	const float *s, *bias;
} qmf_epi;

OM_CLONES static void qmf_row(const qmf_acc *acc, int64_t N, const float *s, const float *bias,
			      float *y)
{
	if (bias)
		for (int64_t j = 0; j < N; j++)
			y[j] = (float)acc[j] * s[j] + bias[j];
	else
		for (int64_t j = 0; j < N; j++)
			y[j] = (float)acc[j] * s[j];
}

static void qmf_rows(void *arg, int64_t lo, int64_t hi)
{
	const qmf_epi *e = arg;
	for (int64_t i = lo; i < hi; i++) {
		float *y = e->y + i * e->N;
		qmf_row((const qmf_acc *)y, e->N, e->s, e->bias, y);
	}
}

/* A quantized (DynamicQuantizeMatMul) or as given: its bytes, scale and zero point */
typedef struct qmf_a {
	const void *data;
	uint8_t *owned;
	float scale;
	int32_t zp;
	bool sgn;
} qmf_a;

static om_kind qmf_a_make(om_ctx *c, const qmf_geom *g, qmf_a *qa)
{
	const qmf_slots *s = &QMF_SLOTS[c->op->param];
	const om_tensor *a = c->in[0];
	if (c->op->param == QMF_TO_FLOAT) {
		const om_tensor *az = om_ctx_in(c, s->a_zp);
		*qa = (qmf_a){a->data, NULL, *(const float *)c->in[s->a_scale]->data,
			      az ? om_q8_elem(az, 0) : 0, a->dtype == OM_INT8};
		return OM_OK;
	}
	const int64_t n = g->M * g->K;
	uint8_t *q, zp;
	om_kind rc = om_ctx_scratch(c, (size_t)n, "A quantized", (void **)&q);
	if (rc)
		return rc;
	float scale;
	om_dynq_params(a->data, n, c->threads, &scale, &zp);
	om_dynq_quantize(a->data, n, scale, zp, q, c->threads);
	*qa = (qmf_a){q, q, scale, zp, false};
	return OM_OK;
}

/* y's factors s[j] = a_scale * b_scale[j] and b's zero points as int32 (NULL: none) */
static bool qmf_params(const om_ctx *c, const qmf_geom *g, float as, float **s, int32_t **zb,
		       int64_t *nzb)
{
	const qmf_slots *sl = &QMF_SLOTS[c->op->param];
	const om_tensor *bs = c->in[sl->b_scale], *bz = om_ctx_in(c, sl->b_zp);
	const int64_t ns = om_tensor_numel(bs);
	*nzb = bz ? om_tensor_numel(bz) : 0;
	*s = malloc(sizeof(float) * (size_t)(g->N + 1));
	*zb = bz ? malloc(sizeof(int32_t) * (size_t)(*nzb + 1)) : NULL;
	if (!*s || (bz && !*zb))
		return false;
	for (int64_t j = 0; j < g->N; j++)
		(*s)[j] = as * ((const float *)bs->data)[ns == 1 ? 0 : j];
	for (int64_t j = 0; j < *nzb; j++)
		(*zb)[j] = om_q8_elem(bz, j);
	return true;
}

static om_kind qmf_kernel(om_ctx *c)
{
	qmf_geom g;
	om_kind rc = qmf_geometry(c, &g);
	if (rc || g.M == 0 || g.N == 0)
		return rc;
	qmf_a qa;
	if ((rc = qmf_a_make(c, &g, &qa)))
		return rc;
	const om_tensor *b = c->in[1], *bias = om_ctx_in(c, QMF_SLOTS[c->op->param].bias);
	float *s = NULL, *y = c->out[0]->data;
	int32_t *zb = NULL;
	int64_t nzb = 0;
	bool ok = qmf_params(c, &g, qa.scale, &s, &zb, &nzb);
	if (ok) {
		const om_igemm ig = {.M = g.M, .N = g.N, .K = g.K, .A = qa.data, .B = b->data,
				     .lda = g.K, .ldb = g.N, .ldc = g.N, .a_signed = qa.sgn,
				     .b_signed = b->dtype == OM_INT8, .za = &qa.zp, .nza = 1,
				     .zb = zb, .nzb = nzb, .C = (int32_t *)y};
		om_igemm pg = ig;
		pg.zb = NULL, pg.nzb = 0;
		om_igemm_pk *pk = om_igemm_packed_get(c, 1, g.K, g.N, g.N, false, zb, nzb);
		ok = (pk && om_igemm_pk_run(pk, &pg, c->threads)) || om_igemm_run(&ig, c->threads);
	}
	if (ok) {
		qmf_epi e = {y, g.N, s, bias ? bias->data : NULL};
		om_par_for(c->threads, g.M, 1 + 16384 / g.N, qmf_rows, &e);
	}
	free(s), free(zb);
	om_ctx_scratch_done(c, qa.owned);
	return ok ? OM_OK : om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the product");
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* MatMulIntegerToFloat-1: A B a_scale b_scale [a_zero_point] [b_zero_point] [bias] -> Y */
static const om_sig sig_ms_MatMulIntegerToFloat_1 = {1, 4, 7, 1, 1, 0x70, 0x0, 0x0, 0x0, 0x0,
	0x0, NULL, NULL};
/* DynamicQuantizeMatMul-1: A B b_scale [b_zero_point] [bias] -> Y */
static const om_sig sig_ms_DynamicQuantizeMatMul_1 = {1, 3, 5, 1, 1, 0x18, 0x0, 0x0, 0x0, 0x0,
	0x0, NULL, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MatMulIntegerToFloat", "com.microsoft", 1, qmf_infer, qmf_kernel, OM_OP_EXACT,
	 &sig_ms_MatMulIntegerToFloat_1, OM_OPC_MS_MATMUL_INT_FLOAT, NULL, QMF_TO_FLOAT, NULL},
	{"DynamicQuantizeMatMul", "com.microsoft", 1, qmf_infer, qmf_kernel, OM_OP_EXACT,
	 &sig_ms_DynamicQuantizeMatMul_1, OM_OPC_MS_DYNQ_MATMUL, NULL, QMF_DYNAMIC, NULL},
};

const om_op_table om_ops_dynq_matmul = OM_TABLE(rows);
