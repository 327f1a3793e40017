/* resize_plan.h — Resize/Upsample parameters (every opset's attributes and inputs), the output
 * extent, and per-axis sampling tables (nearest index, or interpolation taps and weights). */
#ifndef OM_RESIZE_PLAN_H
#define OM_RESIZE_PLAN_H

#include "op.h"

/* What a Resize or Upsample row means (its om_op.param), bits:
 * RS_ROW_LEGACY: Upsample and Resize-10: modes nearest and (bi)linear only, asymmetric
 *   coordinates, scales as input 1, no roi or sizes;
 * RS_ROW_SCALES_ATTR: Upsample-7: scales as an attribute;
 * RS_ROW_18: the attributes antialias, axes and keep_aspect_ratio_policy (opset 18);
 * RS_ROW_SYMMETRIC: coordinate_transformation_mode half_pixel_symmetric (opset 19). */
enum { RS_ROW_LEGACY = 1, RS_ROW_SCALES_ATTR = 2, RS_ROW_18 = 4, RS_ROW_SYMMETRIC = 8 };

enum rs_mode { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum rs_coord {
	RS_HALF_PIXEL, RS_HALF_PIXEL_SYMMETRIC, RS_PYTORCH_HALF_PIXEL, RS_ALIGN_CORNERS,
	RS_ASYMMETRIC, RS_TF_HALF_PIXEL_FOR_NN, RS_TF_CROP_AND_RESIZE
};
enum rs_nearest { RS_ROUND_PREFER_FLOOR, RS_ROUND_PREFER_CEIL, RS_FLOOR, RS_CEIL, RS_SIMPLE };

typedef struct rs_params {
	int32_t rank;
	enum rs_mode mode;
	enum rs_coord coord;
	enum rs_nearest nearest;
	float cubic_a, extrapolation;
	int exclude_outside, antialias;
	int64_t in[OM_MAX_RANK], out[OM_MAX_RANK];
	float scale[OM_MAX_RANK];                  /* output / input as used by the coordinates */
	float resized[OM_MAX_RANK]; /* align_corners' output length: in * scale, unfloored, when
				       scales are given (the ONNX reference); else out */
	float roi_start[OM_MAX_RANK], roi_end[OM_MAX_RANK]; /* tf_crop_and_resize only */
	/* the axis' output extent came from `sizes` (policy stretch): its scale is exactly
	 * out / in, and nearest mode maps coordinates with that ratio in double */
	bool by_sizes[OM_MAX_RANK];
} rs_params;

/**
 * Reads the node's attributes and its scales/sizes (and roi when `want_roi`) into p and sets
 * p->out. OM_NEED_VALUE when scales or sizes are not known; bad values OM_ERR_INVALID_MODEL.
 */
om_kind om_resize_params(om_ctx *c, bool want_roi, rs_params *p);

/** One axis' sampling table: n taps per output index (1 for nearest). idx is clamped into the
 *  input; outside[o] marks tf_crop_and_resize extrapolation. */
typedef struct rs_axis {
	int64_t n;
	int64_t *idx;
	float *w;
	unsigned char *outside;
	bool identity; /* every output reads its own index with weight 1 */
	bool any_outside;
} rs_axis;

/** Builds axis a's table (malloc'd; rs_axis_free). */
om_kind om_resize_axis(om_ctx *c, const rs_params *p, int32_t a, rs_axis *t);
void om_resize_axis_free(rs_axis *t);

#endif
