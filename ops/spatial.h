/* spatial.h — window geometry shared by Conv, ConvTranspose and the pools: kernel, strides,
 * dilations, pads (explicit or auto_pad) and the output extent of each spatial axis. */
#ifndef OM_SPATIAL_H
#define OM_SPATIAL_H

#include "op.h"

#define OM_SP_MAX (OM_MAX_RANK - 2)

typedef struct om_spatial {
	int32_t n;                 /* spatial axes (rank - 2) */
	int64_t in[OM_SP_MAX];     /* input extent */
	int64_t k[OM_SP_MAX];      /* kernel extent */
	int64_t stride[OM_SP_MAX];
	int64_t dil[OM_SP_MAX];
	int64_t pb[OM_SP_MAX];     /* pad at the beginning (may be negative for ConvTranspose) */
	int64_t pe[OM_SP_MAX];     /* pad at the end */
	int64_t out[OM_SP_MAX];    /* output extent */
} om_spatial;

/** Largest kernel extent, stride, dilation or pad accepted (keeps every product in range). */
#define OM_SP_LIMIT ((int64_t)1 << 30)

/**
 * Window geometry of Conv and the pools: reads strides, dilations, pads and auto_pad from the
 * node, `kernel` gives the n kernel extents. ceil_mode rounds the output up (the last window
 * must start inside the input or its begin pad). Bad attributes: OM_ERR_INVALID_MODEL.
 */
om_kind om_spatial_forward(om_ctx *c, int32_t n, const int64_t *in, const int64_t *kernel,
			   int ceil_mode, om_spatial *sp);

/** The kernel_shape attribute when present (must have n entries), else NULL. */
om_kind om_spatial_kernel_attr(om_ctx *c, int32_t n, const int64_t **kernel);

/** auto_pad's values ("" is NOTSET, as ONNX Runtime reads it) */
enum om_auto_pad { OM_PAD_NOTSET, OM_PAD_SAME_UPPER, OM_PAD_SAME_LOWER, OM_PAD_VALID };
/** The node's auto_pad (default NOTSET); OM_ERR_INVALID_MODEL for a value ONNX does not have. */
om_kind om_spatial_auto_pad(om_ctx *c, enum om_auto_pad *mode);

/** Reads strides (default 1) and dilations (default 1) into sp (n set). */
om_kind om_spatial_strides(om_ctx *c, om_spatial *sp);

#endif
