/* gemm_packed.h — fast-mode float products whose B is a plan-time constant (the weights of
 * MatMul, FusedMatMul and Gemm): op(B) is packed once, on the step's first run, into the layout
 * oneDNN's matmul primitive picks, and kept in the step's kernel state; every run then only
 * executes the primitive. Without oneDNN in the build, never taken (callers use om_sgemm). */
#ifndef OM_GEMM_PACKED_H
#define OM_GEMM_PACKED_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"

typedef struct om_gemm_packed om_gemm_packed;

/** Where a constant B's matrices are: `count` matrices op(B_i), K x N each, B_i at
 *  B + i * bstride; tb: B_i is stored N x K (op is the transpose), row stride ldb. */
typedef struct om_gemm_b {
	bool tb;
	int64_t count, K, N, ldb, bstride;
	const float *B;
} om_gemm_b;

/**
 * The packed B of this step, made on its first call (oneDNN's reorder of every B_i into the
 * primitive's layout) and kept in *c->state with c->state_release; a call with another
 * geometry (b other than the one it was made from, or another kernel's block) remakes it.
 * `rows`: the rows of op(A) this call multiplies. A B packed from the model file's pages gives
 * them back (om_ctx_own_copy), so that the weights are not resident twice. NULL when not
 * taken: exact mode, one thread with one row (which streams B once whichever layout it has),
 * or with fewer than OM_GEMM_PACKED_ROWS_1T rows when B is over 16 MiB and its pages cannot be
 * given back (the packed copy would double large weights), no state slot, input `input` is not a plan-time constant (c->const_in), B is too
 * small to gain (K * N below 16384), the build has no oneDNN, oneDNN refused, or it keeps B
 * in a plain layout (oneDNN 2.6 without AVX-512: its gemm:jit packs B in every call anyway;
 * the step then keeps declining); the caller runs om_sgemm then.
 */
om_gemm_packed *om_gemm_packed_get(om_ctx *c, int input, const om_gemm_b *b, int64_t rows);
/** Whether om_gemm_packed_get takes the product (b's data unread; the layout oneDNN would
 *  pick asked), before it packs B (which oneDNN may still refuse): what a row's choose
 *  function asks at plan time (op.h), in a session. */
bool om_gemm_packed_takes(const om_ctx *c, int input, const om_gemm_b *b, int64_t rows);

/** The rows of A from which a product at one thread packs its B whatever its size (below, from
 *  2 rows under the conditions above). Packed against dnnl_sgemm, which packs each panel of B
 *  in every call: 1024 x 1024 x 4-byte B, 0.08 against 0.23 ms at 4 rows, 0.68 against 1.10
 *  at 32; 4096 x 4096, 3.3 against 5.8 ms at 8 rows, 8.8 against 16.0 at 32; vit_b_16's 197
 *  rows, 192-196 against 202-212 ms a run. */
#define OM_GEMM_PACKED_ROWS_1T 128

/**
 * C (M x N, row stride ldc) = alpha * op(A) op(B_i) + beta * C on the run's threads
 * (c->threads); op(A) is M x K, ta: A is stored K x M; lda is A's row stride. When beta == 0,
 * C is not read. Returns false when not taken (nothing written: i or M out of range, or
 * oneDNN refused this shape of A and C), the caller runs om_sgemm then; true with *rc set
 * when it ran (OM_OK, or oneDNN's failure in c->st).
 */
bool om_gemm_packed_mul(om_ctx *c, om_gemm_packed *p, int64_t i, bool ta, int64_t M,
			float alpha, const float *A, int64_t lda, float beta, float *C, int64_t ldc,
			om_kind *rc);

#endif
