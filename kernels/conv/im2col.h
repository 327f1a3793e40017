/* im2col.h — unfolding an image into GEMM columns (Conv) and folding columns back
 * (ConvTranspose), any number of spatial axes. */
#ifndef OM_IM2COL_H
#define OM_IM2COL_H

#include <stdint.h>

#include "spatial.h"

/**
 * Conv: x is C images of extent sp->in, elements of es bytes (4 or 8). Writes rows (channel,
 * kernel tap) = C * prod(sp->k) and, per row, the columns of output positions whose leading
 * index (all output axes but the last, flattened) lies in [q0, q1): (q1 - q0) * sp->out[n-1]
 * columns. Padding reads as 0 (all-zero bits).
 */
void om_im2col(const void *x, size_t es, int64_t C, const om_spatial *sp, int64_t q0, int64_t q1,
	       void *col);

/** om_im2col of 8-bit elements, padding reading as `pad` (the integer convs: X's zero point). */
void om_im2col_u8(const uint8_t *x, int64_t C, const om_spatial *sp, int64_t q0, int64_t q1,
		  uint8_t pad, uint8_t *col);

/**
 * ConvTranspose: col has rows C * prod(sp->k) and prod(sp->in) columns (input positions);
 * adds every column entry into y (C images of extent sp->out) at position p * stride + tap *
 * dilation - pad_begin, dropping those outside.
 */
void om_col2im_add(const float *col, int64_t C, const om_spatial *sp, float *y);

#endif
