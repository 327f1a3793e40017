/* nms.h — NonMaxSuppression's greedy selection for one batch and class (nms.c). */
#ifndef OM_NMS_H
#define OM_NMS_H

#include <stdbool.h>
#include <stdint.h>

/* Scratch for n boxes: their edges and areas, sort keys, clusters, kept boxes. */
typedef struct om_nms_work om_nms_work;

/** Scratch for batches of n boxes (n < 2^32); NULL when out of memory (or n too large). */
om_nms_work *om_nms_work_new(int64_t n);
void om_nms_work_free(om_nms_work *w);

/**
 * Takes one batch's n boxes (4 floats each): corner boxes [y1, x1, y2, x2] ordered per axis,
 * centre boxes [xc, yc, w, h] as xc -+ w / 2, yc -+ h / 2, area (x1 - x0) * (y1 - y0), all in
 * float as ONNX Runtime computes them.
 */
void om_nms_boxes(om_nms_work *w, const float *boxes, bool center);

/**
 * Greedy selection among the boxes of the last om_nms_boxes call for one class: the boxes
 * whose score (n of them) is not NaN and, when has_score, above score, by descending score
 * (lower index first on ties); each is kept unless its IoU with a box kept before it is above
 * iou, until max_keep are kept. Writes the kept indices in order to keep (room for n) and
 * their count to *nk. The IoU test is ONNX Runtime's SuppressByIOU in float: boxes without an
 * overlap of positive width and height, or a non-positive intersection, area or union, never
 * suppress.
 */
void om_nms_class(om_nms_work *w, const float *scores, bool has_score, float score,
		  int64_t max_keep, float iou, int64_t *keep, int64_t *nk);

#endif
