/* index_util.h — helpers shared by the indexing and generating kernels (ops_index.c,
 * ops_generate.c and their index_*.c files): index reads, numeric reads, size checks,
 * string ownership, and the kernels that live in their own files. */
#ifndef OM_INDEX_UTIL_H
#define OM_INDEX_UTIL_H

#include <stdbool.h>

#include "op.h"

/** Element i of an int32 or int64 tensor (the caller checked the dtype). */
static inline int64_t om_ix_at(const om_tensor *t, int64_t i)
{
	if (t->dtype == OM_INT32)
		return ((const int32_t *)t->data)[i];
	return ((const int64_t *)t->data)[i];
}

/** INVALID_MODEL unless t is an int32 or int64 tensor; `what` names the input. */
om_kind om_ix_check_index_type(om_ctx *c, const om_tensor *t, const char *what);

/** Checks every element of an int32/int64 tensor against [-n, n) (INVALID_INPUT naming
 *  `what` otherwise). */
om_kind om_ix_check_indices(om_ctx *c, const om_tensor *t, int64_t n, const char *what);

/** Checks ntuples index tuples of k entries (GatherND, ScatterND): entry j of each against
 *  [-dims[j], dims[j]); INVALID_INPUT otherwise. */
om_kind om_ix_check_tuples(om_ctx *c, const om_tensor *ix, int64_t ntuples, int64_t k,
			   const int64_t *dims);
/** Row-major offset (in units of the slice after dims[k-1]) of tuple t, checked before. */
int64_t om_ix_tuple_offset(const om_tensor *ix, int64_t t, int64_t k, const int64_t *dims);

/** Sets out's shape after checking that rank <= OM_MAX_RANK, that no dim is negative and that
 *  the byte size fits (INVALID_MODEL otherwise; unknown element types too). */
om_kind om_ix_set_shape(om_ctx *c, om_tensor *out, int32_t dtype, int32_t rank,
			const int64_t *dims);

/** True for the integer element types (bool included) that om_ix_int_at reads. */
bool om_ix_is_int(int32_t dtype);
/** True for the float element types om_ix_float_at reads (float16, bfloat16, float, double). */
bool om_ix_is_float(int32_t dtype);
/** Element i of an integer tensor as int64 (uint64 above INT64_MAX saturates). */
int64_t om_ix_int_at(const om_tensor *t, int64_t i);
/** Element i of a float tensor as double (exact). */
double om_ix_float_at(const om_tensor *t, int64_t i);

/** Reads a one-element numeric tensor as an integer: floats truncate toward zero; NaN, an
 *  infinity or a value outside int64 is INVALID_MODEL. NEED_VALUE when the value is missing. */
om_kind om_ix_scalar_int(om_ctx *c, const om_tensor *t, const char *what, int64_t *out);

/** When folding (no session), for a string tensor whose elements were copied from another
 *  tensor: makes every element an owned (malloc'd) copy, as om_tensor_alloc'd string tensors
 *  own their bytes (in a session they stay borrowed, as with om_move_run). No-op for other
 *  types. On failure the remaining elements are emptied so the tensor can still be freed. */
om_kind om_ix_own_strings(om_ctx *c, om_tensor *t);

/* ScatterND's reductions, shared with ScatterElements (ops_scatter.c) */
enum { OM_RED_NONE, OM_RED_ADD, OM_RED_MUL, OM_RED_MAX, OM_RED_MIN };
/** The `reduction` attribute as OM_RED_*. The row's param is the last OM_RED_* it may name:
 *  OM_RED_MUL from opset 16, OM_RED_MIN from 18; OM_RED_NONE: the op has no such attribute
 *  (before 16, and Scatter) and the reduction is none. */
om_kind om_scatter_reduction(om_ctx *c, int *out);
/** o[i] = reduce(o[i], u[i]) for i < n; float, double, int32 or int64 (else int64). */
typedef void (*om_scatter_fold_fn)(void *dst, const void *src, int64_t n, int red);
om_scatter_fold_fn om_scatter_fold(int32_t dtype);

/* kernels in their own files (index_*.c), listed in ops_index.c's table */
om_kind om_scatternd_infer(om_ctx *c);
om_kind om_scatternd_kernel(om_ctx *c);
om_kind om_onehot_infer(om_ctx *c);
om_kind om_onehot_kernel(om_ctx *c);
om_kind om_nonzero_infer(om_ctx *c);
om_kind om_nonzero_kernel(om_ctx *c);
/* the param of a TopK row: what its opset changed */
enum {
	OM_TOPK_K_INPUT = 1 << 0, /* TopK-10: k is input 1, not the attribute */
	OM_TOPK_LARGEST = 1 << 1  /* TopK-11: the `largest` attribute (before: the largest) */
};
om_kind om_topk_infer(om_ctx *c);
om_kind om_topk_kernel(om_ctx *c);

#endif
