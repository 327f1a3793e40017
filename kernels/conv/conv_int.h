/* conv_int.h — fast mode's integer convolution sums (ConvInteger, and QLinearConv where
 * oneDNN's int8 convolution does not take it): the 8-bit columns (om_im2col_u8, padding read
 * as X's zero point) times W through the 8-bit integer product (om_igemm_run), exact in int32
 * (conv_int.c). */
#ifndef OM_CONV_INT_H
#define OM_CONV_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "op.h"
#include "qparam.h"
#include "spatial.h"

#define OM_CONV_IGEMM "im2col-igemm"

/* One integer convolution: X (N x C images of extent sp->in, int8 or uint8) with one zero
 * point (NULL: 0), W (M x C/group x kernel, int8 or uint8) with zero points NULL, one, or one a
 * output channel */
typedef struct om_conv_int {
	const om_spatial *sp;
	int64_t N, C, M, group;
	const om_tensor *X, *xz, *W, *wz;
} om_conv_int;

/* QLinearConv's requantization of output channel m: saturate(rint((sum + bias[m]) *
 * (x_scale * w_scale[m] / y_scale)) + y_zp), int8 when s8, else uint8 (om_conv_requant) */
typedef struct om_qconv_out {
	const int32_t *bias; /* M, or NULL */
	float x_scale, y_scale;
	const float *w_scale; /* one, or M (nw_scale) */
	int64_t nw_scale;
	float y_zp;
	bool s8;
} om_qconv_out;

/** r's scale of output channel m: x_scale * w_scale[m] / y_scale (exact mode's order). */
static inline float om_qconv_scale(const om_qconv_out *r, int64_t m)
{
	return r->x_scale * r->w_scale[r->nw_scale == 1 ? 0 : m] / r->y_scale;
}

/** Whether r's M biases (none: true) are within 2^30 in magnitude, so that a sum below 2^30
 *  plus its bias stays in int32 (the requantization's int32 lanes). */
bool om_qconv_bias_narrow(const om_qconv_out *r, int64_t M);

/** Whether om_conv_igemm takes convs of Kg = C / group x prod(kernel) products an output: fast
 *  mode, an integer product faster than the int32 loop, and sums below 2^30 in magnitude
 *  (each product at most 255 x 255: Kg below 16513). */
bool om_conv_igemm_takes(const om_ctx *c, int64_t Kg);

/** q's sums into y (N x M x prod(sp->out) int32), on c's threads; OM_OK or a buffer's
 *  failure in c->st. */
om_kind om_conv_igemm(om_ctx *c, const om_conv_int *q, int32_t *y);

/** om_conv_requant of n integral float sums (each below 2^24 in magnitude, so exact as int32)
 *  with a bias of magnitude 2^30 at most: the same bytes as om_conv_requant of their int32
 *  values. */
void om_conv_requant_f32(const float *s, int64_t n, int32_t bias, float scale, float zp, bool s8,
			 void *y);

/** om_conv_igemm requantized by r into y (N x M x prod(sp->out), 8-bit), each piece of the
 *  integer product as it finishes (om_igemm_epi) where the product allows: the same bytes as
 *  om_conv_requant of the whole sums. */
om_kind om_conv_igemm_q(om_ctx *c, const om_conv_int *q, const om_qconv_out *r, void *y);

/** QLinearConv's requantization of n sums s (om_conv_igemm's: below 2^30 in magnitude): y =
 *  saturate(rint((float)(s + bias) * scale) + zp) as int8 (s8) or uint8, the same bits as
 *  exact mode's loop (a NaN, from a y_scale of 0, as the type's lowest value). */
void om_conv_requant(const int32_t *s, int64_t n, int64_t bias, float scale, float zp, bool s8,
		     void *y);

#endif
