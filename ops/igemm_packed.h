/* igemm_packed.h — fast-mode 8-bit products whose B is a plan-time constant int8 matrix (the
 * weights of MatMulInteger, the dynamic-quantized MatMuls, QAttention, QGemm): B packed once,
 * on the step's first run, by om_igemm_pack (the int16 pairs' panels without VNNI, oneDNN's
 * layout with it) and kept in the step's kernel state (igemm_packed.c). */
#ifndef OM_IGEMM_PACKED_H
#define OM_IGEMM_PACKED_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_int.h"
#include "op.h"

/**
 * The packed B of this step for om_igemm_pk_run: input `input` of the step, op(B) K x N of row
 * stride ldb (tb: stored N x K), with zero points zb (NULL, one, or nzb), packed on the first
 * call and kept while the geometry stays. NULL when not taken (the caller runs om_igemm_run):
 * exact mode (which keeps no copy of the weights), B not a plan-time constant int8 tensor, a
 * nonzero zero point, K * N below 16384 (packing does not pay), no state slot, or
 * om_igemm_pack declined.
 */
om_igemm_pk *om_igemm_packed_get(om_ctx *c, int input, int64_t K, int64_t N, int64_t ldb,
				 bool tb, const int32_t *zb, int64_t nzb);

#endif
