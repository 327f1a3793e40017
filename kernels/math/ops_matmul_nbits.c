/* ops_matmul_nbits.c — com.microsoft MatMulNBits: Y = A W (+ bias) where W [K, N] is held
 * block-quantized along K (ONNX Runtime's docs/ContribOperators.md): B [N, k_blocks,
 * blob] packs each column's codes of `bits` (2, 4 or 8) little-end first within each byte,
 * scales [N, k_blocks] (or flat), zero points packed alike in uint8 [N, ceil(k_blocks bits /
 * 8)] or unpacked in A's float type [N, k_blocks], 2^(bits - 1) when absent. A weight is
 * (q - zero point) * scale in float32; the product is omopt's MatMul (om_sgemm: exact mode's
 * fixed-order loop, or oneDNN) of A with W, dequantized a tile of TILE_N columns at a time
 * (never the whole float W), the tiles split over the run's threads. Fast mode with at most
 * GEMV_ROWS rows of A (decoding) takes each block straight into the dot products instead:
 * codes minus the zero point times A in 16 lanes a block, times the block's scale (another
 * summation order: float rounding apart). float16/bfloat16 A, scales and bias run through the
 * float32 bridge. accuracy_level names the least precision ONNX
 * Runtime may compute in (4: A quantized to int8 per block); omopt computes in float32 at
 * every level. */
/* -O2 vectorizes only loops of known trip count */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"

#include "f32_bridge.h"
#include "gemm.h"
#include "numrun.h"
#include "op.h"
#include "parallel.h"

enum {
	TILE_N = 16,   /* columns a tile: K x 16 floats stay in L2 for K up to ~16k */
	GEMV_ROWS = 4, /* fast mode's fused path takes up to this many rows of A */
	LANES = 16,    /* its partial sums a row */
	MAX_BLOCK = 4096,
};

typedef struct nbits_plan {
	int64_t M, N, K, bits, bs, kb, blob; /* kb: blocks a column; blob: bytes a block */
	int64_t zp_row;                      /* bytes of a column's packed zero points */
	const uint8_t *b, *zp8;              /* zp8: packed uint8 zero points, or NULL */
	const float *scales, *zpf, *bias;    /* zpf: float zero points, or NULL */
	const float *a;
	float *y;
	/* fast mode's 4-bit path: A's even and odd columns apart, [M][K / 2] each (a byte's low
	 * and high code), and A's sums a block [M][kb] (for the zero points) */
	const float *ae, *ao, *asum;
} nbits_plan;

static om_kind nbits_bad(om_ctx *c, om_kind kind, const char *what)
{
	return om_error(c->st, kind, c->node, "MatMulNBits: %s", what);
}

/* attributes and the inputs' shapes; the data pointers are set by the kernel */
static om_kind nbits_geometry(om_ctx *c, nbits_plan *p)
{
	memset(p, 0, sizeof *p);
	const om_tensor *a = om_ctx_in(c, 0), *b = om_ctx_in(c, 1), *s = om_ctx_in(c, 2), *z = om_ctx_in(c, 3);
	const om_tensor *bias = om_ctx_in(c, 5);
	p->K = om_attr_int(c->node, "K", -1), p->N = om_attr_int(c->node, "N", -1);
	p->bits = om_attr_int(c->node, "bits", 4), p->bs = om_attr_int(c->node, "block_size", 0);
	if (!a || !b || !s || p->K < 1 || p->N < 1 || p->bs < 16 || (p->bs & (p->bs - 1)))
		return nbits_bad(c, OM_ERR_INVALID_MODEL,
				 "needs A, B, scales, K, N and a power-of-two block_size >= 16");
	if (p->bits != 2 && p->bits != 4 && p->bits != 8)
		return nbits_bad(c, OM_ERR_UNSUPPORTED, "bits must be 2, 4 or 8");
	if (om_ctx_in(c, 4))
		return nbits_bad(c, OM_ERR_UNSUPPORTED, "g_idx (deprecated) is not supported");
	if (!om_is_float_type(a->dtype) || a->rank < 1 || a->dims[a->rank - 1] != p->K)
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "A must be float with K as its last dim");
	p->kb = (p->K + p->bs - 1) / p->bs;
	p->blob = p->bs * p->bits / 8;
	p->zp_row = (p->kb * p->bits + 7) / 8;
	if (b->dtype != OM_UINT8 || om_tensor_numel(b) != p->N * p->kb * p->blob)
		return nbits_bad(c, OM_ERR_INVALID_MODEL, "B must be uint8 [N, k_blocks, blob_size]");
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

/* code i of column n's block k */
static inline int32_t nbits_code(const nbits_plan *p, int64_t n, int64_t k, int64_t i)
{
	const int64_t bit = i * p->bits;
	const uint8_t byte = p->b[(n * p->kb + k) * p->blob + bit / 8];
	return (byte >> (bit % 8)) & ((1 << p->bits) - 1);
}

static inline float nbits_zero(const nbits_plan *p, int64_t n, int64_t k)
{
	if (p->zpf)
		return p->zpf[n * p->kb + k];
	if (!p->zp8)
		return (float)(1 << (p->bits - 1));
	const int64_t bit = k * p->bits;
	return (float)((p->zp8[n * p->zp_row + bit / 8] >> (bit % 8)) & ((1 << p->bits) - 1));
}

/* W's columns [n0, n0 + w) dequantized into t [K, w] (row-major, ld w) */
static void nbits_tile(const nbits_plan *p, int64_t n0, int64_t w, float *t)
{
	for (int64_t j = 0; j < w; j++) {
		const int64_t n = n0 + j;
		for (int64_t k = 0; k < p->kb; k++) {
			const float s = p->scales[n * p->kb + k], z = nbits_zero(p, n, k);
			const int64_t k0 = k * p->bs, len = p->K - k0 < p->bs ? p->K - k0 : p->bs;
			for (int64_t i = 0; i < len; i++)
				t[(k0 + i) * w + j] = ((float)nbits_code(p, n, k, i) - z) * s;
		}
	}
}

typedef struct nbits_job {
	const nbits_plan *p;
	int exact;
	float *tiles; /* a K x TILE_N tile per slot */
} nbits_job;

/* tiles [lo, hi): Y's columns of each, through one product a tile */
static void nbits_tiles(void *arg, int64_t lo, int64_t hi, int slot)
{
	const nbits_job *j = arg;
	const nbits_plan *p = j->p;
	float *t = j->tiles + (size_t)slot * (size_t)(p->K * TILE_N);
	for (int64_t i = lo; i < hi; i++) {
		const int64_t n0 = i * TILE_N, w = p->N - n0 < TILE_N ? p->N - n0 : TILE_N;
		nbits_tile(p, n0, w, t);
		om_sgemm(j->exact, false, false, p->M, w, p->K, 1.0f, p->a, p->K, t, w, 0.0f,
			 p->y + n0, p->N);
		for (int64_t m = 0; p->bias && m < p->M; m++)
			for (int64_t q = 0; q < w; q++)
				p->y[m * p->N + n0 + q] += p->bias[n0 + q];
	}
}

/* codes of block (n, k) minus its zero point, as floats, into q[0, bs) */
OM_INLINE void gemv_codes(const nbits_plan *p, int64_t n, int64_t k, float *q)
{
	const uint8_t *b = p->b + (n * p->kb + k) * p->blob;
	const float z = nbits_zero(p, n, k);
	if (p->bits == 4) {
		for (int64_t i = 0; i < p->blob; i++) {
			q[2 * i] = (float)(b[i] & 15) - z;
			q[2 * i + 1] = (float)(b[i] >> 4) - z;
		}
	} else if (p->bits == 8) {
		for (int64_t i = 0; i < p->blob; i++)
			q[i] = (float)b[i] - z;
	} else {
		for (int64_t i = 0; i < p->bs; i++)
			q[i] = (float)nbits_code(p, n, k, i) - z;
	}
}

/* Y's columns [lo, hi) for the M <= GEMV_ROWS rows of A: per block, LANES partial sums of A
 * times the codes less the zero point, each scaled by the block's scale into the row's LANES
 * totals; the lanes summed at the end, then the bias */
OM_CLONES static void nbits_gemv(void *arg, int64_t lo, int64_t hi)
{
	const nbits_plan *p = arg;
	float q[MAX_BLOCK];
	for (int64_t n = lo; n < hi; n++) {
		float tot[GEMV_ROWS][LANES] = {{0}};
		for (int64_t k = 0; k < p->kb; k++) {
			gemv_codes(p, n, k, q);
			const int64_t k0 = k * p->bs, len = p->K - k0 < p->bs ? p->K - k0 : p->bs;
			const float s = p->scales[n * p->kb + k];
			for (int64_t m = 0; m < p->M; m++) {
				const float *a = p->a + m * p->K + k0;
				float part[LANES] = {0};
				int64_t i = 0;
				for (; i + LANES <= len; i += LANES)
					for (int l = 0; l < LANES; l++)
						part[l] += a[i + l] * q[i + l];
				for (; i < len; i++)
					part[i % LANES] += a[i] * q[i];
				for (int l = 0; l < LANES; l++)
					tot[m][l] += s * part[l];
			}
		}
		for (int64_t m = 0; m < p->M; m++) {
			float y = 0;
			for (int l = 0; l < LANES; l++)
				y += tot[m][l];
			p->y[m * p->N + n] = p->bias ? y + p->bias[n] : y;
		}
	}
}

/* nbits_gemv for 4 bits with an even block: a byte's two codes times A's even and odd
 * columns in LANES lanes, the zero point through A's block sums (sum (q - z) a = sum q a -
 * z sum a) */
OM_CLONES static void nbits_gemv4(void *arg, int64_t lo, int64_t hi)
{
	const nbits_plan *p = arg;
	const int64_t half = p->K / 2;
	for (int64_t n = lo; n < hi; n++) {
		float tot[GEMV_ROWS][LANES] = {{0}}, off[GEMV_ROWS] = {0};
		for (int64_t k = 0; k < p->kb; k++) {
			const uint8_t *b = p->b + (n * p->kb + k) * p->blob;
			const float s = p->scales[n * p->kb + k], z = nbits_zero(p, n, k);
			const int64_t h0 = k * p->blob;
			for (int64_t m = 0; m < p->M; m++) {
				const float *ae = p->ae + m * half + h0, *ao = p->ao + m * half + h0;
				float part[LANES] = {0};
				for (int64_t i = 0; i < p->blob; i += LANES)
					for (int l = 0; l < LANES; l++)
						part[l] += ae[i + l] * (float)(b[i + l] & 15) +
							   ao[i + l] * (float)(b[i + l] >> 4);
				for (int l = 0; l < LANES; l++)
					tot[m][l] += s * part[l];
				off[m] += s * z * p->asum[m * p->kb + k];
			}
		}
		for (int64_t m = 0; m < p->M; m++) {
			float y = 0;
			for (int l = 0; l < LANES; l++)
				y += tot[m][l];
			y -= off[m];
			p->y[m * p->N + n] = p->bias ? y + p->bias[n] : y;
		}
	}
}

/* the 4-bit path's view of A (nbits_plan.ae, ao, asum) in buf (M K + M kb floats) */
static void gemv4_prepare(nbits_plan *p, float *buf)
{
	const int64_t half = p->K / 2;
	float *ae = buf, *ao = buf + p->M * half, *as = buf + p->M * p->K;
	for (int64_t m = 0; m < p->M; m++) {
		const float *a = p->a + m * p->K;
		for (int64_t i = 0; i < half; i++)
			ae[m * half + i] = a[2 * i], ao[m * half + i] = a[2 * i + 1];
		for (int64_t k = 0; k < p->kb; k++) {
			float t = 0;
			for (int64_t i = k * p->bs; i < (k + 1) * p->bs; i++)
				t += a[i];
			as[m * p->kb + k] = t;
		}
	}
	p->ae = ae, p->ao = ao, p->asum = as;
}

static om_kind nbits_float(om_ctx *c)
{
	nbits_plan p;
	om_kind rc = nbits_geometry(c, &p);
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
	if (!c->exact && p.M <= GEMV_ROWS && p.bs <= MAX_BLOCK) {
		om_ctx_chose(c, "gemv");
		/* columns of ~2^18 multiply-adds a piece */
		const int64_t per = p.M * p.K, grain = per >= (1 << 18) ? 1 : (1 << 18) / per;
		float *buf = NULL;
		/* 4 bits, whole blocks of whole lanes: the byte-pair path */
		if (p.bits == 4 && p.K % p.bs == 0 && p.blob % LANES == 0 &&
		    (buf = malloc(sizeof(float) * (size_t)(p.M * (p.K + p.kb))))) {
			gemv4_prepare(&p, buf);
			om_par_for(c->threads, p.N, grain, nbits_gemv4, &p);
		} else {
			om_par_for(c->threads, p.N, grain, nbits_gemv, &p);
		}
		free(buf);
		return OM_OK;
	}
	const int64_t tiles = (p.N + TILE_N - 1) / TILE_N;
	/* a piece of tiles worth ~2^20 multiply-adds, at least one tile */
	const int64_t per = p.M * p.K * TILE_N, grain = per >= (1 << 20) ? 1 : (1 << 20) / per;
	const int slots = om_par_slots(c->threads, tiles, grain);
	const size_t bytes = sizeof(float) * (size_t)(p.K * TILE_N) * (size_t)slots;
	if ((rc = om_ctx_reserve(c, bytes, "MatMulNBits' dequantized tiles")))
		return rc;
	nbits_job j = {&p, c->exact, malloc(bytes)};
	if (!j.tiles)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "no memory for the weight tiles");
	om_ctx_chose(c, "tiles");
	om_par_for_slots(c->threads, tiles, grain, nbits_tiles, &j);
	free(j.tiles);
	return OM_OK;
}

static om_kind nbits_kernel(om_ctx *c)
{
	const om_tensor *a = om_ctx_in(c, 0);
	if (a && om_f32_bridged(a->dtype, false))
		return om_run_as_f32(c, nbits_float, false);
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
