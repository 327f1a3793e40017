/* conv_dnnl_int8.h — fast-mode 2-D QLinearConv through oneDNN's int8 convolution
 * (conv_dnnl_int8.c; without oneDNN in the build, never taken). */
#ifndef OM_CONV_DNNL_INT8_H
#define OM_CONV_DNNL_INT8_H

#include "spatial.h"

/* One QLinearConv as oneDNN's path sees it: X (N x C images, int8 or uint8 with one zero
 * point), W (M x C/group x k, int8, zero point 0), B (M int32 or NULL), Y (N x M images, int8
 * or uint8). y = saturate(round((sum + B) * x_scale * w_scale[m] / y_scale) + y_zp). */
typedef struct om_qconv {
	const om_spatial *sp;
	int64_t N, C, M, group;
	int32_t xtype, ytype;
	const void *x, *w;
	const int32_t *bias;
	void *y;
	float x_scale, y_scale;
	const float *w_scale; /* 1 or M */
	int64_t nw_scale;
	int32_t x_zp, y_zp;
	bool x_nhwc, y_nhwc; /* X, Y in NHWC (the planner's layout) rather than NCHW */
} om_qconv;

/** Whether om_qconv_dnnl takes the conv in c (fast mode; W, w_scale and w_zp constants, w_zp
 *  all zero, int8 W, 2-D) before it makes its primitive (which oneDNN may still decline). */
bool om_qconv_dnnl_takes(const om_ctx *c, const om_spatial *sp);
/** om_qconv_dnnl_takes, in a build with oneDNN: X and Y may be NHWC (its int8 kernels' own
 *  layout: no reorders around the conv). */
bool om_qconv_dnnl_nhwc(const om_ctx *c, const om_spatial *sp);
/** Y of q through oneDNN (the primitive and the reordered weights made on the step's first
 *  run and kept in its kernel state); false when not taken (nothing written), true with *rc
 *  set when it ran. */
bool om_qconv_dnnl(om_ctx *c, const om_qconv *q, om_kind *rc);

/* the implementation's name (om_ctx_chose) */
#define OM_QCONV_ONEDNN "onednn-int8"

#endif
