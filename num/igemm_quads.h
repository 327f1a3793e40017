/* igemm_quads.h — the 8-bit integer product of a constant int8 A (zero point 0) with an 8-bit
 * B on AVX2 without VNNI, four products at a time through vpmaddubsw (igemm_quads.c), exact.
 * vpmaddubsw adds each pair of products u8 x s8 (B's codes as uint8, A's) saturated to 16 bits;
 * a pair of A's codes (a1, a2) of one sign whose magnitudes sum past 128 could saturate, so
 * such a pair is trimmed when A is packed (a2 to 128 - |a1| of a2's sign, every pair then
 * exact) and the trimmed part added back as a correction of that row: A = trimmed +
 * corrections, a sparse matrix (1.5% of the pairs of resnet50_qdq's convs, 3.3% of
 * mobilenet_v2_qdq's, 25% where the weights fill their range uniformly). The int32 sums wrap
 * modulo 2^32 as om_igemm_run's contract says. */
#ifndef OM_IGEMM_QUADS_H
#define OM_IGEMM_QUADS_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_int.h"

enum { OM_IQUADS_NR = 16 }; /* B's columns a panel */

/* A packed: row m's codes 4q to 4q + 3 in word q (zeros past K), each pair (4q, 4q + 1),
 * (4q + 2, 4q + 3) trimmed as above; the corrections of row m at [fix_off[m], fix_off[m + 1]):
 * fix_k the row of B each multiplies, fix_v its factor in the low 16 bits (the high zero) */
typedef struct om_iquads_a {
	int64_t M, K, K4; /* K4 = (K + 3) / 4 */
	int32_t *quads;   /* M x K4, 64-byte aligned */
	int32_t *rowsum;  /* M: the sum of row m's codes (untrimmed), for B's zero point */
	int64_t *fix_off; /* M + 1 */
	int32_t *fix_k, *fix_v;
} om_iquads_a;

/** Whether this CPU runs the quads' kernel (AVX2). */
bool om_iquads_ok(void);

/** A (M x K int8, row stride lda, zero point 0) packed into *pa; false when no memory (pa
 *  then empty). */
bool om_iquads_pack_a(const int8_t *A, int64_t M, int64_t K, int64_t lda, om_iquads_a *pa);
void om_iquads_free_a(om_iquads_a *pa);

/** Whether pa's corrections are few enough that the quads beat the int16 pairs: a correction
 *  costs about two pairs' products, the quads save a fifth of them (on a Zen 3 at 1/16 of the
 *  pairs corrected the two are even: shufflenet_v2's int8 convs correct 25%, resnet50's
 *  1.5%). */
bool om_iquads_pays(const om_iquads_a *pa);

/**
 * g's product with rows [r0, r0 + g->M) of pa in place of g's A (pa->K == g->K; g->A, lda,
 * ta, za ignored: A's zero point is 0), B K x N of row stride ldb, uint8 or int8, not
 * transposed, with one zero point or none (g->nzb 1), on up to `threads` threads: the same
 * int32 sums as om_igemm_run. With g->epi each block of rows by a panel's columns goes to it
 * from a buffer of the task's (C untouched). False when not taken (a transposed B, zero points
 * a column) or a buffer cannot be had; C may then hold part of the product.
 */
bool om_iquads_run(const om_iquads_a *pa, int64_t r0, const om_igemm *g, int threads);

#endif
