/* im2col.c — image <-> GEMM columns for Conv (gather) and ConvTranspose (scatter-add). */
#include <string.h>

#include "clones.h"
#include "im2col.h"

/* The gathers vectorize (stride 2 as a lane shuffle); with AVX2 where the CPU has it (resnet18's
 * stem: om_im2col 2.6% -> 2.3% of a run). Moves only: the same bits on every instruction set. */
#define MULTI_ISA OM_CLONES_AVX2

/* [lo, hi): the positions p in [0, np) with 0 <= p * s + off < ni. */
static void valid_range(int64_t np, int64_t ni, int64_t s, int64_t off, int64_t *lo, int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + s - 1) / s;
	int64_t h = ni - 1 - off < 0 ? 0 : (ni - 1 - off) / s + 1;
	if (h > np)
		h = np;
	if (l > h)
		l = h;
	*lo = l;
	*hi = h;
}

/* One direction of the walk: `img` holds the image extents, `pos` the column positions. */
typedef struct walk {
	const om_spatial *sp;
	const int64_t *img, *pos;
	int64_t istr[OM_SP_MAX]; /* image strides */
	int64_t isize, ksize;
} walk;

static void walk_init(walk *w, const om_spatial *sp, const int64_t *img, const int64_t *pos)
{
	int32_t last = sp->n - 1;
	w->sp = sp, w->img = img, w->pos = pos;
	w->istr[last] = 1;
	for (int32_t i = last - 1; i >= 0; i--)
		w->istr[i] = w->istr[i + 1] * img[i + 1];
	w->isize = w->istr[0] * img[0];
	w->ksize = 1;
	for (int32_t i = 0; i < sp->n; i++)
		w->ksize *= sp->k[i];
}

/* Kernel taps of row r (tap index r % ksize). */
static void row_taps(const walk *w, int64_t r, int64_t *t)
{
	int64_t kidx = r % w->ksize;
	for (int32_t i = w->sp->n - 1; i >= 0; i--) {
		t[i] = kidx % w->sp->k[i];
		kidx /= w->sp->k[i];
	}
}

/* Image offset of the leading position o (axes 0..n-2) with taps t; -1 when outside. */
static int64_t lead_offset(const walk *w, const int64_t *o, const int64_t *t)
{
	const om_spatial *sp = w->sp;
	int64_t base = 0;
	for (int32_t i = 0; i < sp->n - 1; i++) {
		int64_t v = o[i] * sp->stride[i] + t[i] * sp->dil[i] - sp->pb[i];
		if (v < 0 || v >= w->img[i])
			return -1;
		base += v * w->istr[i];
	}
	return base;
}

static void lead_decompose(const walk *w, int64_t q, int64_t *o)
{
	for (int32_t i = w->sp->n - 2; i >= 0; i--) {
		o[i] = q % w->pos[i];
		q /= w->pos[i];
	}
}

static void lead_next(const walk *w, int64_t *o)
{
	for (int32_t i = w->sp->n - 2; i >= 0; i--) {
		if (++o[i] < w->pos[i])
			return;
		o[i] = 0;
	}
}

/* One body per element size: im2col only moves elements (bit copies; padding is `pad`) */
#define OM_IM2COL(NAME, T)                                                                      \
	MULTI_ISA static void NAME(const T *x, int64_t C, const om_spatial *sp, int64_t q0, int64_t q1,    \
			 T pad, T *col)                                                          \
	{                                                                                        \
		walk w;                                                                          \
		walk_init(&w, sp, sp->in, sp->out);                                              \
		int32_t last = sp->n - 1;                                                        \
		int64_t OL = sp->out[last], s = sp->stride[last], ncols = (q1 - q0) * OL;        \
		for (int64_t r = 0; r < C * w.ksize; r++) {                                      \
			int64_t t[OM_SP_MAX], o[OM_SP_MAX], lo, hi;                              \
			row_taps(&w, r, t);                                                      \
			int64_t off = t[last] * sp->dil[last] - sp->pb[last];                    \
			valid_range(OL, sp->in[last], s, off, &lo, &hi);                         \
			const T *xc = x + (r / w.ksize) * w.isize;                               \
			T *dst = col + r * ncols;                                                \
			lead_decompose(&w, q0, o);                                               \
			for (int64_t q = q0; q < q1; q++, dst += OL, lead_next(&w, o)) {         \
				int64_t base = lead_offset(&w, o, t);                            \
				if (base < 0) {                                                  \
					for (int64_t p = 0; p < OL; p++)                         \
						dst[p] = pad;                                    \
					continue;                                                \
				}                                                                \
				const T *src = xc + base;                                        \
				for (int64_t p = 0; p < lo; p++)                                 \
					dst[p] = pad;                                            \
				if (s == 1)                                                      \
					memcpy(dst + lo, src + lo + off,                         \
					       sizeof(T) * (size_t)(hi - lo));                   \
				else if (s == 2) /* a constant stride vectorizes */              \
					for (int64_t p = lo; p < hi; p++)                        \
						dst[p] = src[p * 2 + off];                       \
				else                                                             \
					for (int64_t p = lo; p < hi; p++)                        \
						dst[p] = src[p * s + off];                       \
				for (int64_t p = hi; p < OL; p++)                                \
					dst[p] = pad;                                            \
			}                                                                        \
		}                                                                                \
	}

OM_IM2COL(im2col_1, uint8_t)
OM_IM2COL(im2col_4, uint32_t)
OM_IM2COL(im2col_8, uint64_t)

void om_im2col(const void *x, size_t es, int64_t C, const om_spatial *sp, int64_t q0, int64_t q1,
	       void *col)
{
	if (es == 8)
		im2col_8(x, C, sp, q0, q1, 0, col);
	else
		im2col_4(x, C, sp, q0, q1, 0, col);
}

void om_im2col_u8(const uint8_t *x, int64_t C, const om_spatial *sp, int64_t q0, int64_t q1,
		  uint8_t pad, uint8_t *col)
{
	im2col_1(x, C, sp, q0, q1, pad, col);
}

void om_col2im_add(const float *col, int64_t C, const om_spatial *sp, float *y)
{
	walk w;
	walk_init(&w, sp, sp->out, sp->in);
	int32_t last = sp->n - 1;
	int64_t IL = sp->in[last], s = sp->stride[last], lead = 1;
	for (int32_t i = 0; i < last; i++)
		lead *= sp->in[i];
	int64_t ncols = lead * IL;
	for (int64_t r = 0; r < C * w.ksize; r++) {
		int64_t t[OM_SP_MAX], o[OM_SP_MAX] = {0}, lo, hi;
		row_taps(&w, r, t);
		int64_t off = t[last] * sp->dil[last] - sp->pb[last];
		valid_range(IL, sp->out[last], s, off, &lo, &hi);
		float *yc = y + (r / w.ksize) * w.isize;
		const float *src = col + r * ncols;
		for (int64_t q = 0; q < lead; q++, src += IL, lead_next(&w, o)) {
			int64_t base = lead_offset(&w, o, t);
			if (base < 0)
				continue;
			float *dst = yc + base;
			for (int64_t p = lo; p < hi; p++)
				dst[p * s + off] += src[p];
		}
	}
}
