/* conv_dw_flat.c — the depthwise loop over stride phases: the channel's plane is copied,
 * zero-padded and split by stride into phase planes, so that every tap of a run of outputs is
 * one contiguous load whatever the kernel, stride and dilation; outputs are computed on the
 * flattened planes (Wq - OW columns a row are spare) and compacted. Vector lanes are distinct
 * outputs, each summing its taps in order from +0 without contraction, so every clone and both
 * modes give the same bits (conv_depthwise.h). */
#include <string.h>

#include "clones.h"
#include "conv_dw_flat.h"

enum { LANES = 16, UNROLL = 2, RUN = LANES * UNROLL }; /* outputs a pass of the tap loop */

typedef float vf __attribute__((vector_size(LANES * sizeof(float))));

bool om_dw_flat_plan(const om_dw_plane *p, om_dw_flat *f, int64_t *tap)
{
	/* no more than a few times the input and output: huge pads, strides or dilations keep
	 * the border loops (the products below stay far from overflow then) */
	const double in = (double)p->H * (double)p->W, out = (double)p->OH * (double)p->OW;
	const double hq = (double)p->OH + (double)(p->kh - 1) * (double)p->dh / (double)p->sh;
	const double wq = (double)p->OW + (double)(p->kw - 1) * (double)p->dw / (double)p->sw;
	const double cap = 4 * (in + out) + 4096;
	if ((double)p->sh * (double)p->sw * hq * wq > cap || (double)p->kh * (double)p->kw > cap)
		return false;
	f->Hq = p->OH + (p->kh - 1) * p->dh / p->sh;
	f->Wq = p->OW + (p->kw - 1) * p->dw / p->sw;
	const int64_t plane = f->Hq * f->Wq;
	f->n = (p->OH - 1) * f->Wq + p->OW;
	f->nyw = (f->n + RUN - 1) / RUN * RUN;
	f->nbuf = p->sh * p->sw * plane + RUN;
	for (int64_t i = 0; i < p->kh; i++)
		for (int64_t j = 0; j < p->kw; j++) {
			const int64_t r = i * p->dh, c = j * p->dw;
			tap[i * p->kw + j] = (r % p->sh * p->sw + c % p->sw) * plane +
					     r / p->sh * f->Wq + c / p->sw;
		}
	return true;
}

/* [lo, hi): the indices b of phase columns (or rows) b * s + q - pad inside [0, extent) */
static void phase_range(int64_t s, int64_t q, int64_t pad, int64_t extent, int64_t count,
			int64_t *lo, int64_t *hi)
{
	const int64_t first = pad - q; /* b * s >= first */
	const int64_t last = extent - 1 + pad - q; /* b * s <= last */
	int64_t l = first > 0 ? (first + s - 1) / s : 0, h = last < 0 ? 0 : last / s + 1;
	h = h > count ? count : h;
	*lo = l > h ? h : l;
	*hi = h;
}

/* the channel's values into the phase planes (the padding is never written); plain loops, not
 * memcpy calls: the rows are short */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void fill_phases(const om_dw_plane *p, const om_dw_flat *f, const float *xc,
			float *restrict xq)
{
	for (int64_t r = 0; r < p->sh; r++) {
		int64_t a0, a1;
		phase_range(p->sh, r, p->ph, p->H, f->Hq, &a0, &a1);
		for (int64_t q = 0; q < p->sw; q++) {
			int64_t b0, b1;
			phase_range(p->sw, q, p->pw, p->W, f->Wq, &b0, &b1);
			float *restrict pl = xq + (r * p->sw + q) * f->Hq * f->Wq;
			for (int64_t a = a0; a < a1; a++) {
				const float *s = xc + (a * p->sh + r - p->ph) * p->W + q - p->pw;
				float *restrict d = pl + a * f->Wq;
				if (p->sw == 1)
					for (int64_t b = b0; b < b1; b++)
						d[b] = s[b];
				else if (p->sw == 2) /* a constant stride vectorizes */
					for (int64_t b = b0; b < b1; b++)
						d[b] = s[b * 2];
				else
					for (int64_t b = b0; b < b1; b++)
						d[b] = s[b * p->sw];
			}
		}
	}
}

/* a += wt * s[0 .. LANES) (a pointer, not a vector argument: no vector ABI at the boundary) */
OM_INLINE void tap_add(vf *a, float wt, const float *s)
{
	vf v;
	memcpy(&v, s, sizeof v);
	*a = *a + wt * v;
}

/* yw[k] = ((+0 + w[0] xq[k + tap[0]]) + w[1] xq[k + tap[1]]) + ... for k < nyw (inlined with
 * ntaps a constant for the common kernels: the tap loop unrolls) */
OM_INLINE void taps_n(const float *xq, const int64_t *tap, const float *w, int64_t ntaps,
		      int64_t nyw, float *restrict yw)
{
	for (int64_t k = 0; k < nyw; k += RUN) {
		vf a0 = {0}, a1 = {0};
		for (int64_t t = 0; t < ntaps; t++) {
			const float *s = xq + tap[t] + k;
			const float wt = w[t];
			tap_add(&a0, wt, s);
			tap_add(&a1, wt, s + LANES);
		}
		memcpy(yw + k, &a0, sizeof a0);
		memcpy(yw + k + LANES, &a1, sizeof a1);
	}
}

OM_CLONES static void flat_taps(const float *xq, const int64_t *tap, const float *w,
				int64_t ntaps, int64_t nyw, float *restrict yw)
{
	if (ntaps == 9)
		taps_n(xq, tap, w, 9, nyw, yw);
	else if (ntaps == 25)
		taps_n(xq, tap, w, 25, nyw, yw);
	else
		taps_n(xq, tap, w, ntaps, nyw, yw);
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void compact(int64_t OH, int64_t OW, int64_t Wq, const float *restrict yw,
		    float *restrict ym)
{
	for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t k = 0; k < OW; k++)
			ym[oh * OW + k] = yw[oh * Wq + k];
}

void om_dw_flat_run(const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap,
		    const float *xc, const float *w, float *xq, float *yw, float *ym)
{
	fill_phases(p, f, xc, xq);
	flat_taps(xq, tap, w, p->kh * p->kw, f->nyw, yw);
	compact(p->OH, p->OW, f->Wq, yw, ym);
}
