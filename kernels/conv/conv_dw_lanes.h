/* conv_dw_lanes.h — fast mode's depthwise QLinearConv of small planes, 8 output channels a
 * vector (conv_dw_lanes.c): the phase planes of conv_dw_flat.h with the 8 channels' values
 * side by side, so that a plane of a few dozen outputs costs a few vectors, not a channel's
 * setup. The sums are integers below 2^24, exact in floats; the bytes are exact mode's. */
#ifndef OM_CONV_DW_LANES_H
#define OM_CONV_DW_LANES_H

#include <stdbool.h>

#include "conv_dw_flat.h"
#include "conv_int.h"

#define OM_CONV_DW_LANES "dw-lanes-int8"

/** Whether om_qconv_dw_lanes takes a depthwise conv of phase geometry f with biases narrow
 *  (om_qconv_bias_narrow): a CPU with AVX2 and FMA, and phase planes of 32,768 positions at
 *  most (a group's planes, 1 MiB of floats; mobilenet_v2's largest, 112 x 112, have 13,000,
 *  and run faster so than one channel at a time). */
bool om_qconv_dw_lanes_takes(const om_dw_flat *f, bool narrow);

/** q's depthwise conv (one input channel a group, M a multiple of C; p, f, tap from
 *  om_dw_plane_of and om_dw_flat_plan) requantized by r into y (N x M x OH x OW, 8-bit) on
 *  c's threads. OM_OK or a buffer's failure in c->st. */
om_kind om_qconv_dw_lanes(om_ctx *c, const om_conv_int *q, const om_qconv_out *r,
			  const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap, void *y);

#endif
