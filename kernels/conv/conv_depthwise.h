/* conv_depthwise.h — the direct depthwise Conv loop (one input channel per group). */
#ifndef OM_CONV_DEPTHWISE_H
#define OM_CONV_DEPTHWISE_H

#include "conv_epilogue.h"
#include "spatial.h"

/** Y = epilogue(conv(X, W)) for sp->n <= 2 and C / group == 1: output channel m reads input
 *  channel m / (M / group). x is N x C images, w is M x k, y N x M images; the epilogue (bias,
 *  Z, activation) runs on each output row as it is finished. */
om_kind om_conv_depthwise(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			  int64_t group, const float *x, const float *w, const om_conv_epi *e,
			  float *y);

#endif
