/* ops_linalg.c — MatMul, com.microsoft FusedMatMul, Gemm, MatMulInteger, Det. MatMul,
 * FusedMatMul and Gemm run over om_sgemm/om_dgemm (oneDNN or cblas in fast mode, the
 * fixed-order loop in exact mode) with transposes as strides, and in fast mode over a packed B
 * when B is a constant (gemm_packed.h); float16/bfloat16 go through float32, integers through
 * a wrapping loop, MatMulInteger through om_igemm_run (gemm_int.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gemm.h"
#include "gemm_int.h"
#include "igemm_packed.h"
#include "gemm_packed.h"
#include "half.h"
#include "numrun.h"
#include "op.h"

static bool mm_type_ok(int32_t dt)
{
	return om_is_float_type(dt) || dt == OM_INT32 || dt == OM_INT64 || dt == OM_UINT32 ||
	       dt == OM_UINT64;
}

static bool byte_type(int32_t dt)
{
	return dt == OM_INT8 || dt == OM_UINT8;
}

/* ---- float16/bfloat16 staging --------------------------------------------------------------- */

/* a float32 copy of t in om_ctx_scratch's buffer (om_ctx_scratch_done gives it back); NULL
 * with c's error set when there is none */
static float *to_f32(const om_ctx *c, const om_tensor *t)
{
	const int64_t cnt = om_tensor_numel(t);
	float *f;
	if (om_ctx_scratch(c, sizeof(float) * (size_t)(cnt > 0 ? cnt : 1), "a float32 copy",
			   (void **)&f))
		return NULL;
	const uint16_t *h = t->data;
	for (int64_t i = 0; i < cnt; i++)
		f[i] = t->dtype == OM_FLOAT16 ? om_half_to_float(h[i]) : om_bf16_to_float(h[i]);
	return f;
}

static void from_f32(om_tensor *t, const float *f)
{
	const int64_t cnt = om_tensor_numel(t);
	uint16_t *h = t->data;
	for (int64_t i = 0; i < cnt; i++)
		h[i] = t->dtype == OM_FLOAT16 ? om_float_to_half(f[i]) : om_float_to_bf16(f[i]);
}

/* ---- MatMul, FusedMatMul ----------------------------------------------------------------- */

/* the row's param: which of the products sharing matmul_infer and mm_geometry it is */
enum mm_kind {
	MM_PLAIN,   /* MatMul */
	MM_INTEGER, /* MatMulInteger: 8-bit operands, optional zero points, int32 result */
	MM_FUSED    /* com.microsoft FusedMatMul: alpha and transposes */
};

/* One operand as the product sees it: batch dims (with element strides into the tensor) and a
 * matrix [rows, cols] whose element (i, j) is at i * rs + j * cs. FusedMatMul's transposes only
 * change the strides: no byte moves. */
typedef struct mm_operand {
	int32_t nb;
	int64_t bdims[OM_MAX_RANK], bstr[OM_MAX_RANK];
	int64_t rows, cols, rs, cs;
	int32_t rank; /* the tensor's: a 1-D operand's promoted dim leaves the output */
	bool empty;   /* no elements: nothing is read, any layout does */
} mm_operand;

/* trans: swap the matrix axes; tbatch: dim 0 moves to rows, dims 1 .. r-2 become the batch
 * (com.microsoft FusedMatMul's transBatch: perm [1, .., r-2, 0, r-1] before trans). 1-D: A is
 * a row, B a column, trans ignored (as ONNX Runtime). */
static void mm_operand_of(const om_tensor *t, bool is_b, bool trans, bool tbatch, mm_operand *o)
{
	const int32_t r = t->rank;
	int64_t st[OM_MAX_RANK];
	int64_t acc = 1;
	for (int32_t d = r - 1; d >= 0; d--)
		st[d] = acc, acc *= t->dims[d];
	o->rank = r;
	o->nb = 0;
	o->empty = acc == 0;
	if (r == 1) {
		o->rows = is_b ? t->dims[0] : 1, o->cols = is_b ? 1 : t->dims[0];
		o->rs = o->cols, o->cs = 1;
		return;
	}
	const int32_t row_ax = tbatch ? 0 : r - 2, first = tbatch ? 1 : 0;
	for (int32_t d = first; d < first + r - 2; d++) {
		o->bdims[o->nb] = t->dims[d];
		o->bstr[o->nb++] = st[d];
	}
	o->rows = t->dims[row_ax], o->rs = st[row_ax];
	o->cols = t->dims[r - 1], o->cs = 1;
	if (trans) {
		const int64_t n = o->rows, s = o->rs;
		o->rows = o->cols, o->rs = o->cs;
		o->cols = n, o->cs = s;
	}
}

/* The BLAS view of an operand: element (i, j) at i * ld + j (!*trans) or j * ld + i (*trans);
 * false when the strides allow neither (never for the layouts mm_operand_of makes). */
static bool mm_blas_layout(const mm_operand *o, bool *trans, int64_t *ld)
{
	if (o->empty) {
		*trans = false;
		*ld = o->cols > 1 ? o->cols : 1;
		return true;
	}
	if (o->cols <= 1 || o->cs == 1) {
		*trans = false;
		*ld = o->rows > 1 ? o->rs : (o->cols > 1 ? o->cols : 1);
		if (*ld >= o->cols)
			return true;
	}
	if (o->rows <= 1 || o->rs == 1) {
		*trans = true;
		*ld = o->cols > 1 ? o->cs : (o->rows > 1 ? o->rows : 1);
		return *ld >= o->rows;
	}
	return false;
}

/* A [batch.., M, K] x B [batch.., K, N] with numpy's 1-D promotion and batch broadcast */
typedef struct mm_geom {
	mm_operand a, b;
	int64_t M, N, K;
	bool ta, tb;       /* the BLAS views */
	int64_t lda, ldb;
	int32_t nb;        /* output batch rank */
	int64_t bdims[OM_MAX_RANK], astr[OM_MAX_RANK], bstr[OM_MAX_RANK];
	int64_t nbatch;
	bool fold;         /* every batch uses the same B and A's batches are rows of one matrix */
	int32_t out_rank;
	int64_t out_dims[OM_MAX_RANK];
} mm_geom;

/* A's batches in output order are consecutive blocks of M rows (stride lda) of one matrix,
 * and B is the same for all of them: one product [batch * M, K] x [K, N]. */
static bool mm_foldable(const mm_geom *g)
{
	if (g->ta)
		return false;
	int64_t want = g->M * g->lda;
	for (int32_t d = g->nb - 1; d >= 0; d--) {
		if (g->bdims[d] != 1 && (g->bstr[d] != 0 || g->astr[d] != want))
			return false;
		want *= g->bdims[d];
	}
	return true;
}

static om_kind mm_geometry(om_ctx *c, mm_geom *g)
{
	const om_tensor *a = c->in[0], *b = c->in[1];
	if (!a || !b || a->rank < 1 || b->rank < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s needs rank >= 1",
				c->node->op);
	const bool integer = c->op->param == MM_INTEGER;
	const bool fused = c->op->param == MM_FUSED;
	if (integer ? !byte_type(a->dtype) || !byte_type(b->dtype)
		    : a->dtype != b->dtype || !(fused ? om_is_float_type(a->dtype)
						       : mm_type_ok(a->dtype)))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "types %s and %s",
				om_dtype_name(a->dtype), om_dtype_name(b->dtype));
	const bool tba = fused && om_attr_int(c->node, "transBatchA", 0);
	const bool tbb = fused && om_attr_int(c->node, "transBatchB", 0);
	if ((tba || tbb) && (a->rank < 3 || a->rank != b->rank))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"transBatch needs A and B of one rank >= 3, got %d and %d", a->rank,
				b->rank);
	mm_operand_of(a, false, fused && om_attr_int(c->node, "transA", 0), tba, &g->a);
	mm_operand_of(b, true, fused && om_attr_int(c->node, "transB", 0), tbb, &g->b);
	g->M = g->a.rows, g->K = g->a.cols, g->N = g->b.cols;
	if (g->K != g->b.rows)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"inner dims differ: %lld and %lld", (long long)g->K,
				(long long)g->b.rows);
	if (!mm_blas_layout(&g->a, &g->ta, &g->lda) || !mm_blas_layout(&g->b, &g->tb, &g->ldb))
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "operand strides");
	const int32_t na = g->a.nb, nbb = g->b.nb;
	om_kind rc = om_broadcast_shape(c, na, g->a.bdims, nbb, g->b.bdims, &g->nb, g->bdims);
	if (rc)
		return rc;
	/* batch strides in elements, 0 where a side broadcasts */
	g->nbatch = 1;
	for (int32_t d = g->nb - 1; d >= 0; d--) {
		const int32_t da = d - (g->nb - na), db = d - (g->nb - nbb);
		g->astr[d] = da >= 0 && g->a.bdims[da] != 1 ? g->a.bstr[da] : 0;
		g->bstr[d] = db >= 0 && g->b.bdims[db] != 1 ? g->b.bstr[db] : 0;
		g->nbatch *= g->bdims[d];
	}
	g->fold = mm_foldable(g);
	g->out_rank = 0;
	for (int32_t d = 0; d < g->nb; d++)
		g->out_dims[g->out_rank++] = g->bdims[d];
	if (g->a.rank > 1)
		g->out_dims[g->out_rank++] = g->M;
	if (g->b.rank > 1)
		g->out_dims[g->out_rank++] = g->N;
	return OM_OK;
}

/* MatMulInteger's zero points: one value, or one per row of A (M) / column of B (N) */
static om_kind zero_point(om_ctx *c, int i, int64_t per, int32_t dtype, const char *what)
{
	const om_tensor *z = i < c->nin ? c->in[i] : NULL;
	if (!z)
		return OM_OK;
	const int64_t n = om_tensor_numel(z);
	if (z->dtype != dtype || (n != 1 && n != per))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s zero point: %s with %lld elements", what,
				om_dtype_name(z->dtype), (long long)n);
	return OM_OK;
}

static om_kind mm_check(om_ctx *c, mm_geom *g)
{
	om_kind rc = mm_geometry(c, g);
	if (!rc && c->op->param == MM_INTEGER &&
	    !(rc = zero_point(c, 2, g->M, c->in[0]->dtype, "A")))
		rc = zero_point(c, 3, g->N, c->in[1]->dtype, "B");
	return rc;
}

static om_kind matmul_infer(om_ctx *c)
{
	mm_geom g = {0};
	om_kind rc = mm_check(c, &g);
	if (!rc)
		om_set_shape(c->out[0], c->op->param == MM_INTEGER ? OM_INT32 : c->in[0]->dtype,
			     g.out_rank, g.out_dims);
	return rc;
}

/* the element offsets of A and B in output batch bi, stepped in output order */
typedef struct mm_iter {
	int64_t idx[OM_MAX_RANK], aoff, boff;
} mm_iter;

static void mm_next(const mm_geom *g, mm_iter *it)
{
	for (int32_t d = g->nb - 1; d >= 0; d--) {
		it->aoff += g->astr[d], it->boff += g->bstr[d];
		if (++it->idx[d] < g->bdims[d])
			return;
		it->aoff -= g->astr[d] * g->bdims[d];
		it->boff -= g->bstr[d] * g->bdims[d];
		it->idx[d] = 0;
	}
}

/* The implementations' names (om_op.choose, om_ctx_chose) */
#define MM_PACKED "packed-b"  /* oneDNN's matmul over B packed once (gemm_packed.h) */
#define MM_SGEMM "sgemm"      /* om_sgemm: oneDNN or OpenBLAS in fast mode, exact's loop */
#define MM_DGEMM "dgemm"
#define MM_GEMV "gemv"        /* om_sgemv_fast: one row */
#define MM_INT "integer"      /* the integer loop */

/* B's packed form as mm_packed asks for it (b: B's data, NULL at plan time) */
static bool mm_packable(const om_ctx *c, const mm_geom *g, bool tbatch_b, om_gemm_b *pb)
{
	if (g->b.rank < 2 || g->b.empty || tbatch_b)
		return false;
	const int64_t kn = g->K * g->N;
	*pb = (om_gemm_b){.tb = g->tb, .count = om_tensor_numel(c->in[1]) / kn, .K = g->K,
			  .N = g->N, .ldb = g->ldb, .bstride = kn};
	return true;
}

/* The packed form of a constant float B (B's data as the product reads it: b), or NULL.
 * B's batches are consecutive K x N matrices unless FusedMatMul's transBatchB moves them. */
static om_gemm_packed *mm_packed(om_ctx *c, const mm_geom *g, bool tbatch_b, const float *b)
{
	om_gemm_b pb;
	if (!mm_packable(c, g, tbatch_b, &pb))
		return NULL;
	pb.B = b;
	return om_gemm_packed_get(c, 1, &pb, g->fold ? g->nbatch * g->M : g->M);
}

/* float batches of a B that is not packed: one om_sgemm_batch over the batches' offsets
 * (false when there is no memory for them: the caller loops) */
static bool matmul_batch(const om_ctx *c, const mm_geom *g, float alpha, const float *A,
			 const float *B, float *Y)
{
	int64_t *off = malloc(sizeof(int64_t) * 3 * (size_t)g->nbatch);
	if (!off)
		return false;
	mm_iter it = {0};
	for (int64_t bi = 0; bi < g->nbatch; bi++, mm_next(g, &it)) {
		off[bi] = it.aoff;
		off[g->nbatch + bi] = it.boff;
		off[2 * g->nbatch + bi] = bi * g->M * g->N;
	}
	om_sgemm_batch(c->exact, g->ta, g->tb, g->M, g->N, g->K, alpha, A, off, g->lda, B,
		       off + g->nbatch, g->ldb, 0.0f, Y, off + 2 * g->nbatch, g->N, g->nbatch);
	free(off);
	return true;
}

/* Y = alpha * A B for float (es 4) or double (es 8) data: one product when the batches fold
 * into the rows, else one per output batch (om_sgemm_batch for float); over the packed B when
 * pk is not NULL */
static om_kind matmul_float(om_ctx *c, const mm_geom *g, size_t es, double alpha,
			    const void *A, const void *B, void *Y, om_gemm_packed *pk)
{
	const int64_t rows = g->fold ? g->nbatch * g->M : g->M, nb = g->fold ? 1 : g->nbatch;
	if (nb > 1 && es == 4 && !pk && matmul_batch(c, g, (float)alpha, A, B, Y)) {
		om_ctx_chose(c, MM_SGEMM);
		return OM_OK;
	}
	mm_iter it = {0};
	for (int64_t bi = 0; bi < nb; bi++, mm_next(g, &it)) {
		const int64_t yoff = bi * g->M * g->N;
		om_kind rc = OM_OK;
		if (pk && om_gemm_packed_mul(c, pk, it.boff / (g->K * g->N), g->ta, rows,
					     (float)alpha, (const float *)A + it.aoff, g->lda, 0.0f,
					     (float *)Y + yoff, g->N, &rc)) {
			om_ctx_chose(c, MM_PACKED);
			if (rc)
				return rc;
		} else if (es == 4) {
			om_ctx_chose(c, MM_SGEMM);
			om_sgemm(c->exact, g->ta, g->tb, rows, g->N, g->K, (float)alpha,
				 (const float *)A + it.aoff, g->lda, (const float *)B + it.boff,
				 g->ldb, 0.0f, (float *)Y + yoff, g->N);
		} else {
			om_ctx_chose(c, MM_DGEMM);
			om_dgemm(c->exact, g->ta, g->tb, rows, g->N, g->K, alpha,
				 (const double *)A + it.aoff, g->lda, (const double *)B + it.boff,
				 g->ldb, 0.0, (double *)Y + yoff, g->N);
		}
	}
	return OM_OK;
}

/* integers: sums wrap in uint64 and are truncated to the element width */
static int64_t ld_i(const om_tensor *t, int64_t i)
{
	int64_t v = 0;
	om_load_i64(t->dtype, (const char *)t->data + (size_t)i * om_dtype_size(t->dtype), 1, 1,
		    &v);
	return v;
}

/* element (i, k) of A and (k, j) of B in the batch at it */
static int64_t mm_a(const mm_geom *g, const mm_iter *it, int64_t i, int64_t k)
{
	return it->aoff + i * g->a.rs + k * g->a.cs;
}

static int64_t mm_b(const mm_geom *g, const mm_iter *it, int64_t k, int64_t j)
{
	return it->boff + k * g->b.rs + j * g->b.cs;
}

static void matmul_int(const mm_geom *g, const om_tensor *a, const om_tensor *b, om_tensor *y)
{
	const size_t es = om_dtype_size(y->dtype);
	mm_iter it = {0};
	for (int64_t bi = 0; bi < g->nbatch; bi++, mm_next(g, &it))
		for (int64_t i = 0; i < g->M; i++)
			for (int64_t j = 0; j < g->N; j++) {
				uint64_t s = 0;
				for (int64_t k = 0; k < g->K; k++)
					s += (uint64_t)ld_i(a, mm_a(g, &it, i, k)) *
					     (uint64_t)ld_i(b, mm_b(g, &it, k, j));
				const int64_t v = (int64_t)s;
				const int64_t o = (bi * g->M + i) * g->N + j;
				om_store_i64(y->dtype, (char *)y->data + (size_t)o * es, &v, 1);
			}
}

/* MatMulInteger's zero point i as int32 (n values: 1, or one per row of A / column of B);
 * NULL with no error when absent */
static int32_t *zp_int32(om_ctx *c, int i, bool *fail)
{
	const om_tensor *z = i < c->nin ? c->in[i] : NULL;
	if (!z)
		return NULL;
	const int64_t n = om_tensor_numel(z);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)(n + 1));
	if (!v) {
		*fail = true;
		return NULL;
	}
	for (int64_t k = 0; k < n; k++)
		v[k] = (int32_t)ld_i(z, k);
	return v;
}

/* (a - za) x (b - zb) summed in wrapping int32 (om_igemm_pk_run over a packed constant B in
 * fast mode, else om_igemm_run: oneDNN's u8s8s32 or an int32 loop; the same bits), one
 * product when the batches fold into the rows and A's zero point is one value, else one per
 * output batch */
static om_kind matmul_integer_kernel(om_ctx *c)
{
	mm_geom g = {0};
	om_kind rc = mm_check(c, &g);
	if (rc)
		return rc;
	const om_tensor *a = c->in[0], *b = c->in[1];
	bool fail = false;
	int32_t *za = zp_int32(c, 2, &fail), *zb = zp_int32(c, 3, &fail);
	const int64_t nza = za ? om_tensor_numel(c->in[2]) : 0;
	const bool fold = g.fold && nza <= 1;
	const int64_t nb = fold ? 1 : g.nbatch;
	om_igemm ig = {.M = fold ? g.nbatch * g.M : g.M, .N = g.N, .K = g.K, .lda = g.lda,
		       .ldb = g.ldb, .ldc = g.N, .ta = g.ta, .tb = g.tb,
		       .a_signed = a->dtype == OM_INT8, .b_signed = b->dtype == OM_INT8,
		       .za = za, .zb = zb, .nza = nza,
		       .nzb = zb ? om_tensor_numel(c->in[3]) : 0};
	om_igemm_pk *pk = fail || c->in[1]->rank != 2 || g.tb
				  ? NULL
				  : om_igemm_packed_get(c, 1, g.K, g.N, g.ldb, false, zb, ig.nzb);
	mm_iter it = {0};
	for (int64_t bi = 0; !fail && bi < nb; bi++, mm_next(&g, &it)) {
		ig.A = (const int8_t *)a->data + it.aoff;
		ig.B = (const int8_t *)b->data + it.boff;
		ig.C = (int32_t *)c->out[0]->data + bi * g.M * g.N;
		const om_igemm pg = {.M = ig.M, .N = ig.N, .K = ig.K, .A = ig.A, .lda = ig.lda,
				     .ldc = ig.ldc, .ta = ig.ta, .a_signed = ig.a_signed,
				     .za = za, .nza = nza, .C = ig.C};
		fail = !(pk && om_igemm_pk_run(pk, &pg, c->threads)) &&
		       !om_igemm_run(&ig, c->threads);
	}
	free(za), free(zb);
	return fail ? om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the product") : OM_OK;
}

/* matmul_kernel's path (om_op.choose): mm_packed's, else om_sgemm, om_dgemm or the integer
 * loop by the element type */
static void matmul_choose(const om_ctx *c, om_choice *ch)
{
	om_ctx lc = *c;
	mm_geom g = {0};
	if (mm_geometry(&lc, &g))
		return;
	const int32_t dt = c->in[0]->dtype;
	const bool fused = c->op->param == MM_FUSED;
	const bool tbatch_b = fused && om_attr_int(c->node, "transBatchB", 0);
	om_gemm_b pb;
	if (dt == OM_FLOAT || dt == OM_FLOAT16 || dt == OM_BFLOAT16)
		ch->name = mm_packable(c, &g, tbatch_b, &pb) &&
				   om_gemm_packed_takes(c, 1, &pb, g.fold ? g.nbatch * g.M : g.M)
			   ? MM_PACKED
			   : MM_SGEMM;
	else
		ch->name = dt == OM_DOUBLE ? MM_DGEMM : MM_INT;
}

/* MatMul, and FusedMatMul (alpha, transposes) */
static om_kind matmul_kernel(om_ctx *c)
{
	mm_geom g = {0};
	om_kind rc = mm_geometry(c, &g);
	if (rc)
		return rc;
	const om_tensor *a = c->in[0], *b = c->in[1];
	om_tensor *y = c->out[0];
	const bool fused = c->op->param == MM_FUSED;
	const double alpha = fused ? om_attr_float(c->node, "alpha", 1.0f) : 1.0;
	const bool tbatch_b = fused && om_attr_int(c->node, "transBatchB", 0);
	switch (a->dtype) {
	case OM_FLOAT:
		return matmul_float(c, &g, 4, alpha, a->data, b->data, y->data,
				    mm_packed(c, &g, tbatch_b, b->data));
	case OM_DOUBLE:
		return matmul_float(c, &g, 8, alpha, a->data, b->data, y->data, NULL);
	case OM_FLOAT16: case OM_BFLOAT16: {
		const int64_t ny = om_tensor_numel(y);
		float *fa = to_f32(c, a), *fb = fa ? to_f32(c, b) : NULL, *fy = NULL;
		om_kind rc = fb ? om_ctx_scratch(c, sizeof(float) * (size_t)(ny > 0 ? ny : 1),
						 "a float32 product", (void **)&fy)
				: c->st->kind;
		if (fy && !(rc = matmul_float(c, &g, 4, alpha, fa, fb, fy,
					      mm_packed(c, &g, tbatch_b, fb))))
			from_f32(y, fy);
		om_ctx_scratch_done(c, fy);
		om_ctx_scratch_done(c, fb);
		om_ctx_scratch_done(c, fa);
		return rc;
	}
	default:
		om_ctx_chose(c, MM_INT);
		matmul_int(&g, a, b, y);
		return OM_OK;
	}
}

/* ---- Gemm -------------------------------------------------------------------------------- */

typedef struct gemm_geom {
	int64_t M, N, K;
	bool ta, tb;
	int64_t cm, cn; /* C's extents as a broadcast [cm, cn] (1 or M, 1 or N); cm = 0: no C */
} gemm_geom;

static om_kind gemm_geometry(om_ctx *c, gemm_geom *g)
{
	const om_tensor *a = c->in[0], *b = c->in[1], *cc = c->nin > 2 ? c->in[2] : NULL;
	if (!a || !b || a->rank != 2 || b->rank != 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "Gemm needs 2-D A and B");
	if (a->dtype != b->dtype || !mm_type_ok(a->dtype) || (cc && cc->dtype != a->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "mixed or bad types");
	g->ta = om_attr_int(c->node, "transA", 0) != 0;
	g->tb = om_attr_int(c->node, "transB", 0) != 0;
	g->M = a->dims[g->ta ? 1 : 0];
	g->K = a->dims[g->ta ? 0 : 1];
	const int64_t kb = b->dims[g->tb ? 1 : 0];
	g->N = b->dims[g->tb ? 0 : 1];
	if (g->K != kb)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"inner dims differ: %lld and %lld", (long long)g->K, (long long)kb);
	g->cm = g->cn = 0;
	if (!cc)
		return OM_OK;
	if (cc->rank > 2)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "C has rank %d", cc->rank);
	g->cm = cc->rank == 2 ? cc->dims[0] : 1;
	g->cn = cc->rank >= 1 ? cc->dims[cc->rank - 1] : 1;
	if ((g->cm != 1 && g->cm != g->M) || (g->cn != 1 && g->cn != g->N))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"C does not broadcast to [%lld, %lld]", (long long)g->M,
				(long long)g->N);
	return OM_OK;
}

static om_kind gemm_infer(om_ctx *c)
{
	gemm_geom g = {0};
	om_kind rc = gemm_geometry(c, &g);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, 2, (int64_t[]){g.M, g.N});
	return rc;
}

/* Y = broadcast C, element size es (the product then adds alpha * A B with beta): whole rows
 * when C has N columns, one element repeated when it has one */
static void fill_c(const gemm_geom *g, const void *C, void *Y, size_t es)
{
	for (int64_t i = 0; i < g->M; i++) {
		const char *src = (const char *)C + (size_t)((g->cm == 1 ? 0 : i) * g->cn) * es;
		char *dst = (char *)Y + (size_t)(i * g->N) * es;
		if (g->cn == g->N)
			memcpy(dst, src, (size_t)g->N * es);
		else
			for (int64_t j = 0; j < g->N; j++)
				memcpy(dst + (size_t)j * es, src, es);
	}
}

static void gemm_int(const gemm_geom *g, const om_tensor *a, const om_tensor *b,
		     const om_tensor *cc, om_tensor *y, double alpha, double beta)
{
	const int64_t lda = a->dims[1], ldb = b->dims[1];
	for (int64_t i = 0; i < g->M; i++)
		for (int64_t j = 0; j < g->N; j++) {
			uint64_t s = 0;
			for (int64_t k = 0; k < g->K; k++)
				s += (uint64_t)ld_i(a, g->ta ? k * lda + i : i * lda + k) *
				     (uint64_t)ld_i(b, g->tb ? j * ldb + k : k * ldb + j);
			double v = alpha * (double)(int64_t)s;
			if (cc)
				v += beta * (double)ld_i(cc, (g->cm == 1 ? 0 : i) * g->cn +
								 (g->cn == 1 ? 0 : j));
			const size_t off = (size_t)(i * g->N + j) * om_dtype_size(y->dtype);
			om_store_f64(y->dtype, (char *)y->data + off, 1, &v, 1);
		}
}

/* Y (holding C already when beta != 0) = alpha * op(A) op(B) + beta Y: one row in fast mode
 * through om_sgemv_fast (a classifier of one image), else over B packed once when it is a
 * constant (gemm_packed.h), else om_sgemm */
enum { GEMV_MIN = 16384 }; /* multiply-adds from which one row takes om_sgemv_fast */

/* whether one row goes through om_sgemv_fast (which takes a B stored K x N only when beta
 * is 0) */
static bool gemm_gemv(const om_ctx *c, const gemm_geom *g, float beta)
{
	return !c->exact && g->M == 1 && g->N * g->K >= GEMV_MIN && (g->tb || beta == 0);
}

static om_kind gemm_float(om_ctx *c, const gemm_geom *g, float alpha, const float *A,
			  int64_t lda, const float *B, int64_t ldb, float beta, float *Y)
{
	if (gemm_gemv(c, g, beta)) {
		float *buf = g->ta ? malloc(sizeof(float) * (size_t)g->K) : NULL;
		const bool done = (!g->ta || buf) &&
				  om_sgemv_fast(c->threads, g->tb, g->N, g->K, alpha, A,
						g->ta ? lda : 1, B, ldb, beta, Y, buf);
		free(buf);
		if (done) {
			om_ctx_chose(c, MM_GEMV);
			return OM_OK;
		}
	}
	const om_gemm_b pb = {.tb = g->tb, .count = 1, .K = g->K, .N = g->N, .ldb = ldb,
			      .bstride = g->K * g->N, .B = B};
	om_gemm_packed *pk = g->K * g->N > 0 ? om_gemm_packed_get(c, 1, &pb, g->M) : NULL;
	om_kind rc = OM_OK;
	if (pk && om_gemm_packed_mul(c, pk, 0, g->ta, g->M, alpha, A, lda, beta, Y, g->N, &rc)) {
		om_ctx_chose(c, MM_PACKED);
		return rc;
	}
	om_ctx_chose(c, MM_SGEMM);
	om_sgemm(c->exact, g->ta, g->tb, g->M, g->N, g->K, alpha, A, lda, B, ldb, beta, Y, g->N);
	return rc;
}

/* gemm_kernel's path (om_op.choose): gemm_float's for the float types (one row through
 * om_sgemv_fast, B packed, else om_sgemm), om_dgemm or the integer loop */
static void gemm_choose(const om_ctx *c, om_choice *ch)
{
	om_ctx lc = *c;
	gemm_geom g = {0};
	if (gemm_geometry(&lc, &g))
		return;
	const int32_t dt = c->in[0]->dtype;
	if (dt != OM_FLOAT && dt != OM_FLOAT16 && dt != OM_BFLOAT16) {
		ch->name = dt == OM_DOUBLE ? MM_DGEMM : MM_INT;
		return;
	}
	const float beta = g.cm ? om_attr_float(c->node, "beta", 1.0f) : 0.0f;
	const om_gemm_b pb = {.tb = g.tb, .count = 1, .K = g.K, .N = g.N,
			      .ldb = c->in[1]->dims[1], .bstride = g.K * g.N};
	ch->name = gemm_gemv(c, &g, beta) ? MM_GEMV
		   : g.K * g.N > 0 && om_gemm_packed_takes(c, 1, &pb, g.M) ? MM_PACKED
									     : MM_SGEMM;
}

static om_kind gemm_kernel(om_ctx *c)
{
	gemm_geom g = {0};
	om_kind rc = gemm_geometry(c, &g);
	if (rc)
		return rc;
	const om_tensor *a = c->in[0], *b = c->in[1], *cc = g.cm ? c->in[2] : NULL;
	om_tensor *y = c->out[0];
	const float alpha = om_attr_float(c->node, "alpha", 1.0f);
	const float beta = cc ? om_attr_float(c->node, "beta", 1.0f) : 0.0f;
	const int64_t lda = a->dims[1], ldb = b->dims[1];
	switch (a->dtype) {
	case OM_FLOAT:
		if (beta != 0)
			fill_c(&g, cc->data, y->data, 4);
		return gemm_float(c, &g, alpha, a->data, lda, b->data, ldb, beta, y->data);
	case OM_DOUBLE:
		if (beta != 0)
			fill_c(&g, cc->data, y->data, 8);
		om_ctx_chose(c, MM_DGEMM);
		om_dgemm(c->exact, g.ta, g.tb, g.M, g.N, g.K, alpha, a->data, lda, b->data, ldb,
			 beta, y->data, g.N);
		return OM_OK;
	case OM_FLOAT16: case OM_BFLOAT16: {
		float *fa = to_f32(c, a), *fb = fa ? to_f32(c, b) : NULL;
		float *fc = fb && cc ? to_f32(c, cc) : NULL, *fy = NULL;
		const size_t ny = sizeof(float) * (size_t)(g.M * g.N);
		om_kind rc = fb && (fc || !cc)
				     ? om_ctx_scratch(c, ny, "a float32 product", (void **)&fy)
				     : c->st->kind;
		if (fy) {
			if (beta != 0)
				fill_c(&g, fc, fy, 4);
			if (!(rc = gemm_float(c, &g, alpha, fa, lda, fb, ldb, beta, fy)))
				from_f32(y, fy);
		}
		om_ctx_scratch_done(c, fy);
		om_ctx_scratch_done(c, fc);
		om_ctx_scratch_done(c, fb);
		om_ctx_scratch_done(c, fa);
		return rc;
	}
	default:
		om_ctx_chose(c, MM_INT);
		gemm_int(&g, a, b, cc, y, alpha, beta);
		return OM_OK;
	}
}

/* ---- Det ---------------------------------------------------------------------------- */

/* [..., M, M] -> [...]: LU with partial pivoting in double (a fixed operation order) */
static om_kind det_prepare(om_ctx *c, int64_t *M, int64_t *batch)
{
	const om_tensor *x = c->in[0];
	if (!om_is_float_type(x->dtype) || x->rank < 2 ||
	    x->dims[x->rank - 1] != x->dims[x->rank - 2])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs float [..., M, M], got %s of rank %d",
				om_dtype_name(x->dtype), x->rank);
	*M = x->dims[x->rank - 1];
	*batch = om_shape_numel(x->rank - 2, x->dims);
	return OM_OK;
}

static om_kind det_infer(om_ctx *c)
{
	int64_t M = 0, batch = 0;
	om_kind rc = det_prepare(c, &M, &batch);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank - 2, c->in[0]->dims);
	return rc;
}

static double det_lu(double *a, int64_t M)
{
	double det = 1;
	for (int64_t k = 0; k < M; k++) {
		int64_t p = k;
		for (int64_t i = k + 1; i < M; i++)
			if (fabs(a[i * M + k]) > fabs(a[p * M + k]))
				p = i;
		if (a[p * M + k] == 0)
			return 0;
		if (p != k) {
			for (int64_t j = 0; j < M; j++) {
				const double t = a[k * M + j];
				a[k * M + j] = a[p * M + j];
				a[p * M + j] = t;
			}
			det = -det;
		}
		det *= a[k * M + k];
		for (int64_t i = k + 1; i < M; i++) {
			const double f = a[i * M + k] / a[k * M + k];
			for (int64_t j = k + 1; j < M; j++) {
				const double t = f * a[k * M + j];
				a[i * M + j] -= t;
			}
		}
	}
	return det;
}

static om_kind det_kernel(om_ctx *c)
{
	int64_t M = 0, batch = 0;
	om_kind rc = det_prepare(c, &M, &batch);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	double *a = malloc(sizeof(double) * (size_t)(M * M + 1));
	if (!a)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	const size_t es = om_dtype_size(x->dtype);
	for (int64_t b = 0; b < batch; b++) {
		const char *src = (const char *)x->data + (size_t)(b * M * M) * es;
		om_load_f64(x->dtype, src, 1, M * M, a);
		const double d = det_lu(a, M);
		om_store_f64(x->dtype, (char *)c->out[0]->data + (size_t)b * es, 1, &d, 1);
	}
	free(a);
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* MatMul-13: A B -> Y */
static const om_sig sig_MatMul_1_v13 = {13, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x3, 0x1, NULL, NULL};
/* MatMul-1: A B -> Y */
static const om_sig sig_MatMul_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x3, 0x1, 0x0, 0x0, NULL,
	&sig_MatMul_1_v13};
static const om_sig_attr attrs_Gemm_7_v13[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {"transA", OM_ATTR_INT, 0}, {"transB", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Gemm-13: A B [C] -> Y */
static const om_sig sig_Gemm_7_v13 = {13, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x7, 0x1,
	attrs_Gemm_7_v13, NULL};
static const om_sig_attr attrs_Gemm_7_v11[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"beta", OM_ATTR_FLOAT, 0}, {"transA", OM_ATTR_INT, 0}, {"transB", OM_ATTR_INT, 0},
	{NULL, 0, 0}};
/* Gemm-11: A B [C] -> Y */
static const om_sig sig_Gemm_7_v11 = {11, 2, 3, 1, 1, 0x4, 0x0, 0x7, 0x1, 0x0, 0x0,
	attrs_Gemm_7_v11, &sig_Gemm_7_v13};
static const om_sig_attr attrs_Gemm_7[] = {{"alpha", OM_ATTR_FLOAT, 0}, {"beta", OM_ATTR_FLOAT, 0},
	{"transA", OM_ATTR_INT, 0}, {"transB", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Gemm-7: A B C -> Y */
static const om_sig sig_Gemm_7 = {7, 3, 3, 1, 1, 0x0, 0x0, 0x7, 0x1, 0x0, 0x0, attrs_Gemm_7,
	&sig_Gemm_7_v11};
/* MatMulInteger-10: A B [a_zero_point] [b_zero_point] -> Y */
static const om_sig sig_MatMulInteger_10 = {10, 2, 4, 1, 1, 0xc, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};
static const om_sig_attr attrs_ms_FusedMatMul_1[] = {{"alpha", OM_ATTR_FLOAT, 0},
	{"transA", OM_ATTR_INT, 0}, {"transB", OM_ATTR_INT, 0}, {"transBatchA", OM_ATTR_INT, 0},
	{"transBatchB", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* FusedMatMul-1: A B -> Y */
static const om_sig sig_ms_FusedMatMul_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_FusedMatMul_1, NULL};
/* Det-22: X -> Y */
static const om_sig sig_Det_11_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL, NULL};
/* Det-11: X -> Y */
static const om_sig sig_Det_11 = {11, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_Det_11_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MatMul", "", 1, matmul_infer, matmul_kernel, OM_OP_EXACT, &sig_MatMul_1, OM_OPC_MATMUL,
	 NULL, MM_PLAIN, matmul_choose},
	{"Gemm", "", 7, gemm_infer, gemm_kernel, OM_OP_EXACT, &sig_Gemm_7, OM_OPC_GEMM, NULL, 0,
	 gemm_choose},
	{"MatMulInteger", "", 10, matmul_infer, matmul_integer_kernel, OM_OP_EXACT,
	 &sig_MatMulInteger_10, OM_OPC_MATMUL_INTEGER, NULL, MM_INTEGER, NULL},
	{"FusedMatMul", "com.microsoft", 1, matmul_infer, matmul_kernel, OM_OP_EXACT,
	 &sig_ms_FusedMatMul_1, OM_OPC_MS_FUSED_MATMUL, NULL, MM_FUSED, matmul_choose},
	{"Det", "", 11, det_infer, det_kernel, OM_OP_EXACT, &sig_Det_11, OM_OPC_NONE, NULL, 0,
	 NULL},
};

const om_op_table om_ops_linalg = OM_TABLE(rows);
