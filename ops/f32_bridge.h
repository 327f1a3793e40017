/* f32_bridge.h — runs a float32 kernel on float16/bfloat16/int8/uint8 tensors by converting
 * them to float32 and the results back (round to nearest even; integers round and saturate). */
#ifndef OM_F32_BRIDGE_H
#define OM_F32_BRIDGE_H

#include <stdbool.h>

#include "op.h"

/** The element types the bridge converts (int8/uint8 only when `ints`). */
bool om_f32_bridged(int32_t dtype, bool ints);

/** Converts every input and output of a bridged type to float32, calls fn, converts back.
 *  Other tensors (int64 indices, sizes) pass through untouched. */
om_kind om_run_as_f32(om_ctx *c, om_kernel_fn fn, bool ints);

/** om_run_as_f32 of the inputs alone: fn gets the outputs in their own types and writes them
 *  itself (a kernel that converts its results piece by piece, not through a float32 copy of
 *  a large output: MatMulNBits' logits). */
om_kind om_run_as_f32_inputs(om_ctx *c, om_kernel_fn fn, bool ints);

#endif
