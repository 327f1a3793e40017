/* shape_util.h — argument readers and axis checks shared by the shape and move operators. */
#ifndef OM_SHAPE_UTIL_H
#define OM_SHAPE_UTIL_H

#include <stdbool.h>

#include "op.h"

/** Integers from input `input` when the node has it (OM_NEED_VALUE when its value is not known
 *  yet), else from the ints attribute `attr` (NULL: none). *given says whether either existed;
 *  at most `cap` values. `input` < 0 reads only the attribute. */
om_kind om_arg_ints(om_ctx *c, int input, const char *attr, int64_t *buf, int64_t cap,
		    int64_t *count, bool *given);

/** Normalizes n axes into [0, rank) (negative count from the end); a repeated axis is
 *  OM_ERR_INVALID_MODEL naming the node. */
om_kind om_norm_axes(om_ctx *c, const int64_t *axes, int64_t n, int32_t rank, int32_t *out);

/** Reads a scalar (or one-element) integer or bool input as int64. */
om_kind om_read_scalar_int(om_ctx *c, const om_tensor *t, int64_t *v);

/** Whether t is a one-element float, double, float16 or bfloat16 tensor holding 0 (either
 *  sign): false for another type or no value (Dropout's ratio). */
bool om_scalar_is_float_zero(const om_tensor *t);

/** Bytes per moved element: om_dtype_size, or 1 for sub-byte types (unpacked by om_move_run). */
size_t om_move_size(int32_t dtype);

/**
 * Runs a move kernel: sub-byte inputs and outputs are unpacked to one element per byte around
 * the call (kernels index elements of om_move_size bytes), and when folding (no session) the
 * string elements of the outputs are duplicated so that each output owns its strings.
 */
om_kind om_move_run(om_ctx *c, om_kernel_fn kernel);

/** dst[o] = src[sum_i idx_i * stride_i] over the n-d index o of `dims` (strides in elements,
 *  any sign, 0 for broadcast); rank <= 2 * OM_MAX_RANK. Innermost stride 1 runs are copied
 *  whole. */
void om_strided_copy(void *dst, const void *src, size_t size, int32_t rank, const int64_t *dims,
		     const int64_t *strides);

/** Row-major element strides of dims. */
void om_dense_strides(int32_t rank, const int64_t *dims, int64_t *strides);

#endif
