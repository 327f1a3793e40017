/* conv_winograd.h — 2-D 3x3 stride-1 Conv through Winograd's minimal filtering F(2x2, 3x3) and
 * F(4x4, 3x3) (Lavin & Gray 2016): fast mode only (the transforms reorder the arithmetic). */
#ifndef OM_CONV_WINOGRAD_H
#define OM_CONV_WINOGRAD_H

#include "conv_epilogue.h"
#include "spatial.h"

/**
 * The output tile (4 or 2) for a conv of geometry sp with Cg input and Mg output channels per
 * group, or 0 when it is not a 2-D 3x3 stride-1 dilation-1 conv or im2col is faster there
 * (few tiles: the transformed weights are (tile + 2)^2 / 9 times W's size).
 */
int om_winograd_tile(const om_spatial *sp, int64_t Cg, int64_t Mg);

/**
 * Y = epilogue(conv(X, W)) with output tiles of `tile` (om_winograd_tile's answer). x is N x C
 * images, w is M x C/group x 3 x 3, y is N x M images. The transformed weights are kept in
 * *c->state when W (input 1) is a plan-time constant (c->const_in), recomputed otherwise.
 * The products in the transformed domain go through om_sgemm.
 */
om_kind om_conv_winograd(om_ctx *c, int tile, const om_spatial *sp, int64_t N, int64_t C,
			 int64_t M, int64_t group, const float *x, const float *w,
			 const om_conv_epi *e, float *y);

/**
 * Reads n floats at p (one per cache line, several lines in flight): a weight block BLAS is
 * about to pack then comes from cache. OpenBLAS's packing routines fetch a cold operand from
 * memory at a fraction of the bandwidth a plain streaming read reaches (resnet18's 7 x 7
 * layers: 16 products of 512 x 512 transformed weights, 2.3 -> 1.95 ms).
 */
void om_conv_warm(const float *p, int64_t n);

/* Weight blocks from this many floats on are warmed before their product (16 KiB) */
enum { OM_WARM_FLOATS = 4096 };

#endif
