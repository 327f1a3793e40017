/* conv_depthwise.h — the direct depthwise Conv loop (one input channel per group). */
#ifndef OM_CONV_DEPTHWISE_H
#define OM_CONV_DEPTHWISE_H

#include "spatial.h"

/** Y = conv(X, W) + B for sp->n <= 2 and C / group == 1: output channel m reads input channel
 *  m / (M / group). x is N x C images, w is M x k, b (may be NULL) M values, y N x M images. */
om_kind om_conv_depthwise(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			  int64_t group, const float *x, const float *w, const float *b, float *y);

#endif
