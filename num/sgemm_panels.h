/* sgemm_panels.h — the float product over a B packed once into panels of 16 columns, on AVX2
 * with FMA (sgemm_panels.c): where oneDNN 2.6 keeps a constant B plain (no AVX-512), its
 * sgemm packs B again in every call; these panels are packed once a step (ops/gemm_packed.c).
 * Each C element is alpha times one chain of fused multiply-adds over k ascending (plus beta C):
 * the same bits at every thread count. */
#ifndef OM_SGEMM_PANELS_H
#define OM_SGEMM_PANELS_H

#include <stdbool.h>
#include <stdint.h>

enum { OM_SPANELS_NR = 16 };

/* op(B), K x N, in panels of OM_SPANELS_NR columns: panel p holds K rows of 16 floats
 * (columns 16 p on; the last panel's columns past N are zero) */
typedef struct om_spanels {
	int64_t K, N, panels;
	float *data; /* panels x K x 16, 64-byte aligned */
} om_spanels;

/** Whether this CPU runs the panels' kernel (AVX2 and FMA). */
bool om_spanels_ok(void);

/** B (K x N of row stride ldb, or with tb its transpose, N x K, stored) packed into *sp;
 *  false when no memory (sp then empty). */
bool om_spanels_pack(const float *B, int64_t K, int64_t N, int64_t ldb, bool tb,
		     om_spanels *sp);
void om_spanels_free(om_spanels *sp);

/** C (M x N, row stride ldc) = alpha op(A) B + beta C on up to `threads` threads (omopt's
 *  pool); op(A) is M x K, stored K x M when ta (row stride lda either way). When beta == 0, C
 *  is not read. */
void om_spanels_mul(const om_spanels *sp, bool ta, int64_t M, float alpha, const float *A,
		    int64_t lda, float beta, float *C, int64_t ldc, int threads);

#endif
