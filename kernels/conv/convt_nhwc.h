/* convt_nhwc.h — fast-mode 2-D ConvTranspose of one group writing NHWC (convt_nhwc.c): the
 * planner's choice when the convolutions around it run in NHWC (a UNet's up-convolutions). */
#ifndef OM_CONVT_NHWC_H
#define OM_CONVT_NHWC_H

#include "conv_epilogue.h"
#include "spatial.h"

/**
 * Y (N, OH, OW, M), NHWC = ConvTranspose(X, W) + bias for sp (2 spatial axes: ConvTranspose's
 * geometry, its pads applied), X (N, C, H, W) or, x_nhwc, (N, H, W, C); W (C, M, KH, KW) as
 * ONNX holds it, a plan-time constant (c->const_in) copied once into the step's kernel state
 * as (C, KH, KW, M) (packed for oneDNN's matmul where gemm_packed.h takes it); bias M
 * values or NULL; post, an activation applied to each output row once it is summed (the
 * planner's absorbed activation, conv_epilogue.h), or NULL. Each image is one product,
 * (H W) x C times C x (KH KW M), whose rows are then added into Y's pixels, output rows split
 * over the run's threads (each written by one worker, its taps in a fixed order). Errors:
 * OM_ERR_NOMEM, or the run's memory limit (om_ctx_reserve).
 */
om_kind om_convt_nhwc(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
		      const float *x, bool x_nhwc, const float *w, const float *bias,
		      const om_conv_epi *post, float *y);

#endif
