/* gemm_int.h — the 8-bit integer matrix product (MatMulInteger, QLinearMatMul, the
 * dynamic-quantized MatMul): int8/uint8 operands less their zero points, summed in int32. */
#ifndef OM_GEMM_INT_H
#define OM_GEMM_INT_H

#include <stdbool.h>
#include <stdint.h>

/* One product C = (op(A) - za) (op(B) - zb), C int32 M x N (row stride ldc), every element
 * the sum over k of (a_ik - za_i)(b_kj - zb_j) wrapped to 32 bits (as ONNX Runtime's). op(A)
 * is M x K: element (i, k) at i * lda + k, or k * lda + i when ta; op(B) likewise with ldb and
 * tb. A and B are int8 when *_signed, else uint8. za: NULL (0), one value (nza 1) or one per
 * row (nza M); zb: NULL, one, or one per column (nzb N). The caller checks the extents. */
typedef struct om_igemm_epi om_igemm_epi;
typedef struct om_igemm {
	int64_t M, N, K;
	const void *A, *B;
	int64_t lda, ldb, ldc;
	bool ta, tb, a_signed, b_signed;
	const int32_t *za, *zb;
	int64_t nza, nzb;
	int32_t *C;
	const om_igemm_epi *epi; /* NULL, or what takes C's pieces as they finish (below) */
} om_igemm;

/* An epilogue: fn gets rows [r0, r0 + nr) x columns [c0, c0 + nc) of C, finished, at c (row
 * stride ldc). om_igemm_run's int16-pair path gives it pieces of a block of rows by up to 16
 * columns while they are in cache, in buffers of its own (C is not written); its other paths
 * compute all of C and then give it all of C. Pieces are disjoint and may come from several
 * threads at once. */
struct om_igemm_epi {
	void (*fn)(void *arg, const int32_t *c, int64_t ldc, int64_t r0, int64_t nr, int64_t c0,
		   int64_t nc);
	void *arg;
};

/* element (i, j) of an 8-bit matrix with row stride ld, transposed when t */
static inline int32_t om_i8_at(const void *p, bool sgn, bool t, int64_t ld, int64_t i, int64_t j)
{
	const int64_t o = t ? j * ld + i : i * ld + j;
	return sgn ? ((const int8_t *)p)[o] : ((const uint8_t *)p)[o];
}

/* zero point i of z (NULL: 0; n == 1: one for all) */
static inline int32_t om_izp_at(const int32_t *z, int64_t n, int64_t i)
{
	return z ? z[n == 1 ? 0 : i] : 0;
}

/**
 * Computes g's product on up to `threads` threads (omopt's pool, om_par_for). Every path
 * gives the same bits (integer sums are exact modulo 2^32 in any order): oneDNN's
 * dnnl_gemm_u8s8s32 when the build has oneDNN and the CPU has VNNI (no 16-bit saturation),
 * else a loop of int32 lanes. False when a buffer cannot be had (C may then hold part of
 * the product: all of C is the product, so a caller computes it again or fails).
 */
bool om_igemm_run(const om_igemm *g, int threads);

/**
 * Whether oneDNN's 8-bit kernels multiply-add exactly on this CPU: with VNNI (vpdpbusd, AVX-512
 * or AVX2) they do; without it vpmaddubsw adds each pair of u8 x s8 products saturated to 16
 * bits (oneDNN's documentation warns of it), and its s8 x s8 kernels halve the weights. False
 * in a build without oneDNN.
 */
bool om_dnnl_int8_exact(void);

/** Which path om_igemm_run takes for g: "dnnl-u8s8s32" or "int32-loop" (for om_ctx_chose). */
const char *om_igemm_path(const om_igemm *g);

#endif

/* ---- a constant B packed once (fast mode): oneDNN's int8 matmul primitive over weights
 * reordered into the layout it picks, one primitive per shape of A kept beside them ---- */

typedef struct om_igemm_pk om_igemm_pk;

/**
 * B (K x N int8 of row stride ldb, or with tb its transpose, N x K, stored; zero point 0)
 * packed; NULL when not taken: no AVX2 (without VNNI, or without oneDNN in the build: the
 * int16 pairs' panels), K above the bound where no sum wraps, or oneDNN refused (or no
 * memory). `threads`: the run's (oneDNN sizes its reorder by OpenMP's count).
 */
om_igemm_pk *om_igemm_pack(const int8_t *B, int64_t K, int64_t N, int64_t ldb, bool tb,
			   int threads);
void om_igemm_pk_free(om_igemm_pk *p);

/**
 * g's product with p's B in place of g->B (g->K, g->N must be p's; g->zb must be NULL or 0;
 * A's zero point one value or none; an epilogue only over the pairs' panels, which give it
 * pieces as om_igemm_run's do): the same bits as om_igemm_run. False when not taken
 * (another geometry, a per-row zero point, oneDNN refused this shape of A or a piece of a
 * split product: C may then hold part of the product, which om_igemm_run computes again).
 */
bool om_igemm_pk_run(om_igemm_pk *p, const om_igemm *g, int threads);
