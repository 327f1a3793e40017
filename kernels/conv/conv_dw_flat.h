/* conv_dw_flat.h — the depthwise loop for any kernel, stride and dilation over a zero-padded
 * copy of the channel split into stride phases (conv_dw_flat.c). */
#ifndef OM_CONV_DW_FLAT_H
#define OM_CONV_DW_FLAT_H

#include <stdbool.h>
#include <stdint.h>

#include "spatial.h"

/* One or two spatial axes seen as two (a 1-D conv has H = OH = kh = sh = dh = 1, ph = 0) */
typedef struct om_dw_plane {
	int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw;
} om_dw_plane;

/* The phase planes: sh x sw planes of Hq x Wq floats, plane (r, q) holding the zero-padded
 * input's rows a * sh + r and columns b * sw + q; output (oh, ow) is flat output
 * oh * Wq + ow, and tap t reads the phases at flat index + tap[t]. */
typedef struct om_dw_flat {
	int64_t Hq, Wq;
	int64_t n;    /* flat outputs computed: (OH - 1) * Wq + OW */
	int64_t nbuf; /* floats of the phase planes with the vector loop's overrun */
	int64_t nyw;  /* floats of the flat outputs (n rounded up to whole vector runs) */
} om_dw_flat;

/** The flat geometry of p, and tap (kh * kw entries) the phase offset of each tap; false when
 *  the phase planes would be much larger than the input and output (huge pads, strides or
 *  dilations: the caller keeps its border loops). */
bool om_dw_flat_plan(const om_dw_plane *p, om_dw_flat *f, int64_t *tap);

/** [lo, hi): the phase indices b < count whose input index b * s + q - pad lies inside
 *  [0, extent) (the rows, or columns, of phase q of stride s that fill_phases copies). */
void om_dw_phase_range(int64_t s, int64_t q, int64_t pad, int64_t extent, int64_t count,
		       int64_t *lo, int64_t *hi);

/** Runs its body (the arguments after f) for each row of the phase planes that the input
 *  fills, with int64_t `src`, the input offset of the row's phase column 0 (column b's value
 *  is at src + b * p->sw), `dst`, the planes' offset of its column 0, and [b0, b1), the
 *  columns the input fills (fill_phases' walk, for the callers with planes of their own). */
#define OM_DW_PHASE_ROWS(p, f, ...)                                                           \
	for (int64_t om_r_ = 0; om_r_ < (p)->sh; om_r_++) {                                   \
		int64_t om_a0_, om_a1_;                                                       \
		om_dw_phase_range((p)->sh, om_r_, (p)->ph, (p)->H, (f)->Hq, &om_a0_, &om_a1_); \
		for (int64_t om_q_ = 0; om_q_ < (p)->sw; om_q_++) {                           \
			int64_t b0, b1;                                                       \
			om_dw_phase_range((p)->sw, om_q_, (p)->pw, (p)->W, (f)->Wq, &b0, &b1); \
			for (int64_t om_a_ = om_a0_; om_a_ < om_a1_; om_a_++) {               \
				const int64_t src = (om_a_ * (p)->sh + om_r_ - (p)->ph) * (p)->W + \
						    om_q_ - (p)->pw;                          \
				const int64_t dst =                                           \
					((om_r_ * (p)->sw + om_q_) * (f)->Hq + om_a_) * (f)->Wq; \
				__VA_ARGS__                                                   \
			}                                                                     \
		}                                                                             \
	}

/** One channel: xq (f->nbuf floats, zero where the input has none: the caller zeroes it once
 *  for every channel of the same geometry) gets xc's plane, yw (f->nyw floats) the flat sums,
 *  ym (OH x OW) the outputs. Each output is +0 plus w[t] times its tap, in tap order (kh, kw),
 *  padding taps included: with finite weights the sums of a loop that skips them. */
void om_dw_flat_run(const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap,
		    const float *xc, const float *w, float *xq, float *yw, float *ym);

/** om_dw_flat_run's flat sums (yw, f->nyw floats: output (oh, ow) at oh * Wq + ow) of an 8-bit
 *  channel xc (int8 when sgn, else uint8) less its zero point xz (padding taps read 0: X's
 *  zero point less itself) with integer weights w (less theirs): every flat sum an integer,
 *  exact while every partial sum stays below 2^24 in magnitude (at most 258 taps of
 *  255 x 255), whatever the order of the additions. */
void om_dw_flat_sums_q8(const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap,
			const void *xc, bool sgn, int32_t xz, const float *w, float *xq, float *yw);

/** y (OH x OW bytes) = the outputs among the flat bytes t (output (oh, ow) at oh * Wq + ow). */
void om_dw_flat_compact_u8(const om_dw_plane *p, const om_dw_flat *f, const uint8_t *t,
			   uint8_t *y);

/** sp (one or two spatial axes) as a plane. */
om_dw_plane om_dw_plane_of(const om_spatial *sp);

#endif
