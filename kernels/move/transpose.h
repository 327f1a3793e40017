/* transpose.h — the Transpose element move (also used by other kernels that permute axes). */
#ifndef OM_TRANSPOSE_H
#define OM_TRANSPOSE_H

#include <stddef.h>
#include <stdint.h>

/** dst = src (dims, row-major, elements of `size` bytes) with output axis i = input axis
 *  perm[i]. perm must be a permutation of [0, rank), rank <= OM_MAX_RANK. Axes that stay
 *  adjacent are merged; the innermost axis moving goes through 32x32 tiles. */
void om_transpose(void *dst, const void *src, size_t size, int32_t rank, const int64_t *dims,
		  const int32_t *perm);

/** Drops extent-1 axes and merges output axes whose input axes are consecutive. Returns the
 *  new rank; dims/perm are rewritten in place (input dims, output order). The rank and perm
 *  that om_transpose actually moves (`omopt dot --plan` shows them). */
int32_t om_transpose_merge(int32_t rank, int64_t *dims, int32_t *perm);

/* How om_transpose moves an array: not at all (no elements), one copy (a merged rank of 1 or
 * less), strided copies of runs (the innermost axis stays), or 32x32 tiles */
enum om_transpose_move {
	OM_TRANSPOSE_EMPTY, OM_TRANSPOSE_COPY, OM_TRANSPOSE_RUNS, OM_TRANSPOSE_TILES
};
/* Their names, as the Transpose step records them (om_op.choose, om_ctx_chose) */
extern const char *const om_transpose_move_names[4];
/** The move om_transpose makes of an array of *rank dims, perm: unless it is empty, *rank,
 *  dims and perm are merged in place (om_transpose_merge) */
enum om_transpose_move om_transpose_plan(int32_t *rank, int64_t *dims, int32_t *perm);

#endif
