/* ops_matmul_nbits.c — com.microsoft MatMulNBits: Y = A W (+ bias) where W [K, N] is held
 * block-quantized along K (ONNX Runtime's docs/ContribOperators.md): B [N, k_blocks,
 * blob] packs each column's codes of `bits` (2, 4 or 8) little-end first within each byte,
 * scales [N, k_blocks] (or flat), zero points packed alike in uint8 [N, ceil(k_blocks bits /
 * 8)] or unpacked in A's float type [N, k_blocks], 2^(bits - 1) when absent. A weight is
 * (q - zero point) * scale in float32 (nbits_dequant.c). Exact mode: omopt's MatMul
 * (om_sgemm's fixed-order loop) of A with W, dequantized TILE_N columns at a time (never the
 * whole float W), the tiles split over the run's threads. Fast mode: up to
 * OM_NBITS_DECODE_ROWS rows of A (decoding) straight from the codes (nbits_decode.c); more
 * rows (a prompt) through oneDNN's sgemm on panels of PANEL_N columns by about PANEL_K rows of
 * W, each dequantized when its product needs it, the panels' columns split over the threads.
 * g_idx (deprecated; GPTQ's act-order) gives row k the scale and zero point of block
 * g_idx[k]: such a W is dequantized in row order in both modes (the fast paths assume whole
 * blocks), as exact mode's tiles; one that names block k / bs for every row is ignored.
 * float16/bfloat16 A, scales and bias run through the float32 bridge. accuracy_level names
 * the least precision ONNX Runtime may compute in (4: A quantized to int8 per block); omopt
 * computes in float32 at every level but one: fast mode at level 4 (4-bit codes, no g_idx,
 * where the CPU has AVX512-VNNI or AVX2; 8-bit codes decoding on AVX2 or AVX512-VNNI, their
 * prompts and 2-bit codes' decoding with AVX512-VNNI) quantizes A to 15 bits a block and sums
 * each block's products in int32: decoding in nbits_vnni.c (8-bit codes: nbits_bytes.c, 2-bit:
 * nbits_crumbs.c), prompts in nbits_vnni_gemm.c. */
#include <stdlib.h>
#include <string.h>

#include "f32_array.h"
#include "f32_bridge.h"
#include "gemm.h"
#include "nbits.h"
#include "numrun.h"
#include "op.h"
#include "parallel.h"

enum {
	TILE_N = 16,   /* exact mode's columns a tile: K x 16 floats stay in L2 for K to ~16k */
	PANEL_N = 128, /* fast mode's columns a panel */
	PANEL_K = 256, /* its rows (at least one block) */
};

typedef om_nbits nbits_plan;
static om_kind nbits_bad(om_ctx *c, om_kind kind, const char *what)
{
	return om_error(c->st, kind, c->node, "MatMulNBits: %s", what);
}

/* attributes and the inputs' shapes; the data pointers are set by the kernel */
static om_kind nbits_geometry(om_ctx *c, nbits_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *a = om_ctx_in(c, 0), *b = om_ctx_in(c, 1), *s = om_ctx_in(c, 2);
	const om_tensor *z = om_ctx_in(c, 3);
	const om_tensor *bias = om_ctx_in(c, 5);
	p->K = om_attr_int(c->node, "K", -1), p->N = om_attr_int(c->node, "N", -1);
	p->bits = om_attr_int(c->node, "bits", 4), p->bs = om_attr_int(c->node, "block_size", 0);
	if (!a || !b || !s || p->K < 1 || p->N < 1 || p->bs < 16 || (p->bs & (p->bs - 1)))
		return nbits_bad(c, OM_ERR_INVALID_MODEL,
				 "needs A, B, scales, K, N and a power-of-two block_size >= 16");
	if (p->bits != 2 && p->bits != 4 && p->bits != 8)
		return nbits_bad(c, OM_ERR_UNSUPPORTED, "bits must be 2, 4 or 8");
	const om_tensor *g = om_ctx_in(c, 4);
	if (g && (g->dtype != OM_INT32 || om_tensor_numel(g) != p->K))
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "g_idx must be int32 [K]");
	if (!om_is_float_type(a->dtype) || a->rank < 1 || a->dims[a->rank - 1] != p->K)
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "A must be float with K as its last dim");
	p->kb = (p->K + p->bs - 1) / p->bs;
	p->blob = p->bs * p->bits / 8;
	p->zp_row = (p->kb * p->bits + 7) / 8;
	if (b->dtype != OM_UINT8 || om_tensor_numel(b) != p->N * p->kb * p->blob)
		return nbits_bad(c, OM_ERR_INVALID_MODEL,
				 "B must be uint8 [N, k_blocks, blob_size]");
	if (s->dtype != a->dtype || om_tensor_numel(s) != p->N * p->kb)
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "scales must be A's type, [N, k_blocks]");
	if (z && !(z->dtype == OM_UINT8 && om_tensor_numel(z) == p->N * p->zp_row) &&
	    !(z->dtype == a->dtype && om_tensor_numel(z) == p->N * p->kb))
		return nbits_bad(c, OM_ERR_INVALID_MODEL,
				 "zero_points must be packed uint8 [N, ceil(k_blocks * bits / 8)] "
				 "or A's type [N, k_blocks]");
	if (bias && (bias->dtype != a->dtype || om_tensor_numel(bias) != p->N))
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "bias must be A's type, [N]");
	const int64_t rows = om_shape_numel(a->rank - 1, a->dims);
	if (rows < 0)
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "A's shape overflows");
	p->M = rows;
	return OM_OK;
}

static om_kind nbits_infer(om_ctx *c)
{
	nbits_plan p;
	om_kind rc = nbits_geometry(c, &p);
	if (rc)
		return rc;
	const om_tensor *a = c->in[0];
	int64_t dims[OM_MAX_RANK];
	memcpy(dims, a->dims, sizeof(int64_t) * (size_t)a->rank);
	dims[a->rank - 1] = p.N;
	om_set_shape(c->out[0], a->dtype, a->rank, dims);
	return OM_OK;
}

typedef struct nbits_job {
	const nbits_plan *p;
	int exact;
	bool natural;    /* W's rows in their order (exact mode, g_idx), else the lanes' */
	int64_t tn, tk;  /* a panel's columns and rows */
	float *tiles;    /* a tn x tk panel per slot */
	const float *a;  /* A, or (fast mode) its columns in the panels' order, ld lda */
	int64_t lda, kp; /* kp: the rows of W in that order (K, or padded to whole pieces) */
	float *yt;       /* Y of another type (yout, ydt): an M x tn panel of sums a slot */
	void *yout;
	int32_t ydt;
} nbits_job;

/* column panels [lo, hi): each panel's columns of Y through one product per tk rows of W
 * (accumulated in Y: beta 1 after the first), then the bias */
static void nbits_tiles(void *arg, int64_t lo, int64_t hi, int slot)
{
	const nbits_job *j = arg;
	const nbits_plan *p = j->p;
	float *t = j->tiles + (size_t)slot * (size_t)(j->tn * j->tk);
	float *yt = j->yt ? j->yt + (size_t)slot * (size_t)(p->M * j->tn) : NULL;
	const int64_t ldy = yt ? j->tn : p->N;
	const size_t es = yt ? om_dtype_size(j->ydt) : 0;
	for (int64_t i = lo; i < hi; i++) {
		const int64_t n0 = i * j->tn, w = p->N - n0 < j->tn ? p->N - n0 : j->tn;
		float *y = yt ? yt : p->y + n0;
		for (int64_t k0 = 0; k0 < j->kp; k0 += j->tk) {
			const int64_t len = j->kp - k0 < j->tk ? j->kp - k0 : j->tk;
			if (j->natural)
				om_nbits_dequant(p, n0, w, k0, len, t);
			else
				om_nbits_dequant_lanes(p, n0, w, k0, len, t);
			om_sgemm(j->exact, false, true, p->M, w, len, 1.0f, j->a + k0, j->lda, t,
				 len, k0 ? 1.0f : 0.0f, y, ldy);
		}
		for (int64_t m = 0; p->bias && m < p->M; m++)
			for (int64_t q = 0; q < w; q++)
				y[m * ldy + q] += p->bias[n0 + q];
		for (int64_t m = 0; yt && m < p->M; m++)
			om_from_f32(j->ydt, y + m * ldy, w,
				    (char *)j->yout + (size_t)(m * p->N + n0) * es);
	}
}

/* p->gidx = g_idx's data when it names another block than k / bs for some row k (NULL when it
 * names those, as GPTQ exports without act-order write it); InvalidInput for a block out of
 * range */
static om_kind nbits_group_index(om_ctx *c, nbits_plan *p)
{
	const om_tensor *g = om_ctx_in(c, 4);
	p->gidx = NULL;
	if (!g)
		return OM_OK;
	const int32_t *v = g->data;
	bool plain = true;
	for (int64_t k = 0; k < p->K; k++) {
		if (v[k] < 0 || v[k] >= p->kb)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"MatMulNBits: g_idx[%lld] = %d is not a block (0 to %lld)",
					(long long)k, (int)v[k], (long long)(p->kb - 1));
		plain &= v[k] == k / p->bs;
	}
	p->gidx = plain ? NULL : v;
	return OM_OK;
}

static om_kind nbits_rows(om_ctx *c, const nbits_plan *p, void *yout, int32_t ydt);

static om_kind nbits_float(om_ctx *c)
{
	nbits_plan p;
	om_kind rc = nbits_geometry(c, &p);
	if (!rc)
		rc = nbits_group_index(c, &p);
	if (rc)
		return rc;
	const om_tensor *z = om_ctx_in(c, 3), *bias = om_ctx_in(c, 5);
	p.a = c->in[0]->data, p.b = c->in[1]->data, p.scales = c->in[2]->data;
	p.zp8 = z && z->dtype == OM_UINT8 ? z->data : NULL;
	p.zpf = z && z->dtype != OM_UINT8 ? z->data : NULL;
	p.bias = bias ? bias->data : NULL;
	p.y = c->out[0]->data;
	if (p.M == 0)
		return OM_OK;
	/* a float16/bfloat16 Y (om_run_as_f32_inputs): the panels convert their sums as they
	 * finish them; the other paths write float32 rows, converted after them */
	const int32_t ydt = c->out[0]->dtype;
	float *yf = NULL;
	const bool panels = c->exact || p.gidx || p.M > OM_NBITS_DECODE_ROWS;
	if (ydt != OM_FLOAT && (!panels || (om_attr_int(c->node, "accuracy_level", 0) == 4 &&
					    om_nbits_vnni_gemm_ok(&p)))) {
		if ((rc = om_ctx_scratch(c, sizeof(float) * (size_t)(p.M * p.N), "Y in float32",
					 (void **)&yf)))
			return rc;
		p.y = yf;
		rc = nbits_rows(c, &p, NULL, 0);
		if (!rc)
			om_from_f32(ydt, yf, p.M * p.N, c->out[0]->data);
		om_ctx_scratch_done(c, yf);
		return rc;
	}
	return nbits_rows(c, &p, ydt == OM_FLOAT ? NULL : c->out[0]->data, ydt);
}

/* one of accuracy_level 4's integer kernels (run, `bytes` of scratch; chosen as `name`):
 * *done false when it declined (A not finite) */
static om_kind nbits_ints(om_ctx *c, const nbits_plan *p, size_t bytes,
			  bool (*run)(const om_nbits *, int, void *), const char *name, bool *done)
{
	void *q;
	const om_kind rc = om_ctx_scratch(c, bytes, "A in 15 bits", &q);
	if (rc)
		return rc;
	*done = run(p, c->threads, q);
	om_ctx_scratch_done(c, q);
	if (*done)
		om_ctx_chose(c, name);
	return OM_OK;
}

/* p's product into p->y, or by panels into yout of type ydt when yout */
static om_kind nbits_rows(om_ctx *c, const nbits_plan *pp, void *yout, int32_t ydt)
{
	const nbits_plan p = *pp;
	om_kind rc;
	/* fast mode's decoding and panels read a block's scale once for its rows: not with g_idx */
	const bool natural = c->exact || p.gidx;
	const bool decode = p.M <= OM_NBITS_DECODE_ROWS;
	/* accuracy_level 4's integer products: A in 15 bits */
	const bool level4 = !natural && om_attr_int(c->node, "accuracy_level", 0) == 4;
	bool done = false;
	if (level4 && decode && om_nbits_vnni_ok(&p))
		rc = nbits_ints(c, &p, om_nbits_vnni_bytes(&p), om_nbits_vnni, "vnni", &done);
	else if (level4 && !decode && om_nbits_vnni_gemm_ok(&p))
		rc = nbits_ints(c, &p,
				om_nbits_vnni_gemm_bytes(&p, om_nbits_vnni_gemm_slots(&p, c->threads)),
				om_nbits_vnni_gemm, "vnni-gemm", &done);
	else if (level4 && decode && om_nbits_bytes_ok(&p))
		rc = nbits_ints(c, &p, om_nbits_bytes_bytes(&p), om_nbits_bytes,
				om_nbits_vnni_cpu() ? "vnni-bytes" : "int16-bytes", &done);
	else if (level4 && decode && om_nbits_crumbs_ok(&p))
		rc = nbits_ints(c, &p, om_nbits_crumbs_bytes(&p), om_nbits_crumbs, "vnni-crumbs",
				&done);
	else
		rc = OM_OK;
	if (rc || done) /* not done: A holds an infinity or a NaN, the float paths run */
		return rc;
	if (!natural && p.M <= OM_NBITS_DECODE_ROWS && om_nbits_decode(&p, c->threads)) {
		om_ctx_chose(c, "gemv");
		return OM_OK;
	}
	/* exact mode: whole columns (k ascending in one product); fast mode: panels of PANEL_K
	 * rows in the lanes' order (whole 64-byte pieces), A permuted alike */
	nbits_job j = {&p, c->exact, natural, TILE_N, p.K, NULL, p.a, p.K, p.K, NULL, yout, ydt};
	float *perm = NULL;
	if (!natural) {
		const int64_t piece = 64 * (8 / p.bits);
		j.kp = (p.kb * p.blob + 63) / 64 * piece;
		/* four panels at least, of 32 columns at least (a 128-column k or v projection was
		 * one panel: one thread of two idle); by N alone, so that the thread count changes
		 * no bit */
		j.tn = (p.N + 3) / 4;
		j.tn = j.tn < PANEL_N ? (j.tn < 32 ? 32 : (j.tn + 15) / 16 * 16) : PANEL_N;
		j.tk = (PANEL_K + piece - 1) / piece * piece;
		j.tk = j.tk < j.kp ? j.tk : j.kp;
		if ((rc = om_ctx_scratch(c, sizeof(float) * (size_t)(p.M * j.kp), "A in lanes",
					 (void **)&perm)))
			return rc;
		om_nbits_lane_order(&p, j.kp, perm, c->threads);
		j.a = perm, j.lda = j.kp;
	}
	const int64_t tiles = (p.N + j.tn - 1) / j.tn;
	/* a piece of tiles worth ~2^20 multiply-adds, at least one tile */
	const int64_t per = p.M * p.K * j.tn, grain = per >= (1 << 20) ? 1 : (1 << 20) / per;
	const int slots = om_par_slots(c->threads, tiles, grain);
	const size_t bytes = sizeof(float) * (size_t)(j.tn * (j.tk + (yout ? p.M : 0))) *
			     (size_t)slots;
	if ((rc = om_ctx_scratch(c, bytes, "MatMulNBits' dequantized tiles", (void **)&j.tiles))) {
		om_ctx_scratch_done(c, perm);
		return rc;
	}
	if (yout) /* after the tiles: each slot's panel of sums */
		j.yt = j.tiles + (size_t)(j.tn * j.tk) * (size_t)slots;
	om_ctx_chose(c, "tiles");
	om_par_for_slots(c->threads, tiles, grain, nbits_tiles, &j);
	om_ctx_scratch_done(c, j.tiles);
	om_ctx_scratch_done(c, perm);
	return OM_OK;
}

static om_kind nbits_kernel(om_ctx *c)
{
	const om_tensor *a = om_ctx_in(c, 0);
	if (a && om_f32_bridged(a->dtype, false))
		return om_run_as_f32_inputs(c, nbits_float, false);
	if (a && a->dtype != OM_FLOAT)
		return nbits_bad(c, OM_ERR_UNSUPPORTED, "A must be float, float16 or bfloat16");
	return nbits_float(c);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_ms_MatMulNBits_1[] = {{"K", OM_ATTR_INT, 1},
	{"N", OM_ATTR_INT, 1}, {"accuracy_level", OM_ATTR_INT, 0}, {"bits", OM_ATTR_INT, 0},
	{"block_size", OM_ATTR_INT, 1}, {"weight_prepacked", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* MatMulNBits-1: A B scales [zero_points] [g_idx] [bias] -> Y */
static const om_sig sig_ms_MatMulNBits_1 = {1, 3, 6, 1, 1, 0x38, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_MatMulNBits_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MatMulNBits", "com.microsoft", 1, nbits_infer, nbits_kernel, OM_OP_EXACT,
	 &sig_ms_MatMulNBits_1, OM_OPC_NONE, NULL, 0, NULL},
};

const om_op_table om_ops_matmul_nbits = OM_TABLE(rows);
