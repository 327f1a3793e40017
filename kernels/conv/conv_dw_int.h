/* conv_dw_int.h — fast mode's depthwise integer convolution on NCHW values (conv_dw_int.c):
 * each channel's 8-bit plane less its zero point through the float phase loop of
 * conv_dw_flat.c, whose sums of integer products are exact (below 2^24), then QLinearConv's
 * requantization. Without VNNI, where oneDNN's int8 kernels need NHWC and the convs beside a
 * depthwise one run omopt's integer product on NCHW (conv_int.h), this saves oneDNN's
 * reorders of X and Y around every depthwise conv. */
#ifndef OM_CONV_DW_INT_H
#define OM_CONV_DW_INT_H

#include <stdbool.h>

#include "conv_int.h"

#define OM_CONV_DW_INT "dw-flat-int8"

/** Whether om_qconv_dw takes q: fast mode on a CPU without VNNI (with it oneDNN's int8 convs
 *  take every conv on NHWC values), one or two spatial axes, one input channel a group
 *  (q->group == q->C, M a multiple of C), at most 258 taps (partial sums below 2^24) and a
 *  padded copy of the plane not much larger than the plane (om_dw_flat_plan). */
bool om_qconv_dw_takes(const om_ctx *c, const om_conv_int *q);

/** q's conv requantized by r into y (N x M x prod(sp->out), 8-bit) on c's threads: the same
 *  bytes as exact mode. 8 output channels a vector where om_qconv_dw_lanes_takes
 *  (conv_dw_lanes.h: the run records OM_CONV_DW_LANES), else one channel at a time. OM_OK or
 *  a buffer's failure in c->st. */
om_kind om_qconv_dw(om_ctx *c, const om_conv_int *q, const om_qconv_out *r, void *y);

#endif
