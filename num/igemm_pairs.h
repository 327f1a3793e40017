/* igemm_pairs.h — the 8-bit integer product on AVX2 without VNNI (igemm_pairs.c): operands
 * less their zero points widened to int16 and multiplied in pairs by vpmaddwd into int32
 * lanes. Exact where oneDNN's u8s8 kernels are not (vpmaddubsw saturates each pair of
 * products at 16 bits): every pair of products is at most 2 x 255 x 255 in magnitude, and
 * the int32 sums wrap modulo 2^32 as om_igemm_run's contract says. */
#ifndef OM_IGEMM_PAIRS_H
#define OM_IGEMM_PAIRS_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_int.h"

/* B less its zero points, K x N, in panels of OM_IPAIRS_NR columns (the last padded with
 * zeros): panel p holds, for each pair q of rows (2q, 2q + 1; row K of an odd K is zero),
 * OM_IPAIRS_NR int16 pairs (b[2q][j] - zb_j, b[2q + 1][j] - zb_j). */
enum { OM_IPAIRS_NR = 16 };
typedef struct om_ipairs_b {
	int64_t K, N, K2, panels; /* K2 = (K + 1) / 2 */
	int16_t *data;            /* panels x K2 x OM_IPAIRS_NR x 2, 64-byte aligned */
} om_ipairs_b;

/** Whether this CPU runs the pairs' kernel (AVX2). */
bool om_ipairs_ok(void);

/** g's op(B) less g->zb packed into *pb on up to `threads` threads; false when no memory (pb
 *  then empty). */
bool om_ipairs_pack(const om_igemm *g, om_ipairs_b *pb, int threads);
void om_ipairs_free(om_ipairs_b *pb);

/** g's product with pb in place of g's B (pb->K == g->K, pb->N == g->N) on up to `threads`
 *  threads (with g->epi: each block of rows by a panel's columns to it from a buffer of the
 *  task's, C untouched); false when a buffer cannot be had (C may then hold part of the
 *  product). */
bool om_ipairs_run(const om_igemm *g, const om_ipairs_b *pb, int threads);

#endif
