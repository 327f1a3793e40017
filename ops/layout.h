/* layout.h — the channel-blocked layout's helpers (op.h describes the layout; ops/layout.c).
 * The planner (runtime/plan_layout.c) asks the rows' layout functions; kernels that take
 * blocked tensors read om_ctx.blocked and om_ctx.block. */
#ifndef OM_LAYOUT_H
#define OM_LAYOUT_H

#include "op.h"

/** The block the fast convolutions want on this CPU: 16 (oneDNN on AVX-512), 8 (AVX2), or 0
 *  (no oneDNN in the build, or an older CPU): then nothing is blocked. */
int32_t om_layout_block(void);
/** The lanes of a block of the plan's `block` (op.h) for a value of C channels: block, or C
 *  for OM_BLOCK_NHWC. */
static inline int64_t om_layout_lanes(int32_t block, int64_t C)
{
	return block == OM_BLOCK_NHWC ? (C > 0 ? C : 1) : block;
}
/** The blocked tensor shape (N, ceil(C/b), H, W, b) of the logical shape d (N, C, H, W), b
 *  the lanes of `block` (om_layout_lanes). */
void om_layout_dims(const int64_t *d, int32_t block, int64_t *out);
/** The logical (N, C, H, W) view of blocked tensor t holding C channels: a copy of t's header
 *  with the logical shape, same data. */
om_tensor om_layout_logical(const om_tensor *t, int64_t C);
/** The layout function of element-wise rows whose result is finite wherever every input is
 *  (Add, Mul, Relu, Sigmoid, ...: the padding channels stay finite): output 0 and every
 *  input of shape (N, C, H, W) or (N, C, 1, 1), tied; inputs of one element stay as they are.
 *  Anything else (another rank, a channel broadcast): nothing blocked. */
void om_layout_elementwise(const om_ctx *c, om_layout_req *r);
/** Div's: om_layout_elementwise's when the divisor is a constant float of one element, finite
 *  and not 0 (the padding stays finite: x / 6 of HardSwish written out). */
void om_layout_divide(const om_ctx *c, om_layout_req *r);
/** y (blocked by b lanes, padding zeroed) = x (N, C, P plain), and the reverse. */
void om_layout_block_f32(const float *x, int64_t N, int64_t C, int64_t P, int64_t b, float *y);
void om_layout_unblock_f32(const float *x, int64_t N, int64_t C, int64_t P, int64_t b, float *y);
/** y (N, C, P) = x (N, P, C), 1-byte elements (a plain copy of an 8-bit NHWC value), or the
 *  reverse when to_nhwc. */
void om_layout_nhwc_u8(const uint8_t *x, int64_t N, int64_t C, int64_t P, bool to_nhwc,
		       uint8_t *y);
/** QuantizeLinear's and DequantizeLinear's: input 0 and output 0 tied, NHWC only (an 8-bit
 *  value is blocked in NHWC plans alone: no padding channels), when the scale and zero point
 *  are one element each (per tensor: every element alike, whatever the layout). */
void om_layout_per_tensor(const om_ctx *c, om_layout_req *r);

/** Position `bit` of a step (om_ctx.blocked: OM_LAYOUT_IN(i) or OM_LAYOUT_OUT(i)) as a plain
 *  float tensor of C channels in *plain: t itself when that position is plain, else a copy
 *  in *buf (om_ctx_scratch's, within the run's memory limit; the caller gives it back with
 *  om_ctx_scratch_done), converted from t
 *  when `convert` (an input; an output's buffer is the caller's to convert back). *buf is
 *  NULL when no copy was made. OM_ERR_NOMEM or the memory limit's error. */
om_kind om_layout_plain_side(om_ctx *c, uint64_t bit, const om_tensor *t, int64_t C,
			     bool convert, om_tensor *plain, float **buf);

#endif
