/* conv_depthwise.c — Conv with one input channel per group (depthwise), one or two spatial
 * axes, as a direct loop: every output sums its taps in (kh, kw) order, then takes the
 * epilogue (bias, Z, activation), the same in fast and exact mode (the vectorized loops run
 * across outputs, never across one output's taps). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "conv_depthwise.h"
#include "parallel.h"

/* the fused 3 x 3 loop for AVX2 and the baseline instruction set (picked at load time);
 * vector lanes are independent outputs, so both give the same bits */
#define MULTI_ISA OM_CLONES_AVX2

/* One or two spatial axes seen as two. */
typedef struct plane {
	int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw;
} plane;

static plane as_plane(const om_spatial *sp)
{
	int32_t a = sp->n - 2; /* -1 for 1-D */
	plane p = {1, sp->in[sp->n - 1], 1, sp->out[sp->n - 1], 1, sp->k[sp->n - 1], 1,
		   sp->stride[sp->n - 1], 1, sp->dil[sp->n - 1], 0, sp->pb[sp->n - 1]};
	if (a == 0) {
		p.H = sp->in[0], p.OH = sp->out[0], p.kh = sp->k[0];
		p.sh = sp->stride[0], p.dh = sp->dil[0], p.ph = sp->pb[0];
	}
	return p;
}

/* [lo, hi): output columns ow with 0 <= ow * s + off < W. */
static void col_range(const plane *p, int64_t off, int64_t *lo, int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + p->sw - 1) / p->sw;
	int64_t h = p->W - 1 - off < 0 ? 0 : (p->W - 1 - off) / p->sw + 1;
	*hi = h > p->OW ? p->OW : h;
	*lo = l > *hi ? *hi : l;
}

/* Adds kernel row wr (kw taps) over input row xr into output row yr. Outputs in [L, R) see
 * every tap and take them fused (kw == 3); the borders take the taps they see one at a time.
 * Either way every output adds its taps in ascending order. */
static void depthwise_row(const plane *p, const int64_t *lo, const int64_t *hi, int64_t L,
			  int64_t R, const float *xr, const float *wr, float *restrict yr)
{
	for (int64_t j = 0; j < p->kw; j++) {
		const float wv = wr[j];
		const int64_t off = j * p->dw - p->pw;
		int64_t e1 = hi[j] < L ? hi[j] : L, b2 = lo[j] > R ? lo[j] : R;
		for (int64_t ow = lo[j]; ow < e1; ow++)
			yr[ow] += wv * xr[ow * p->sw + off];
		for (int64_t ow = b2; ow < hi[j]; ow++)
			yr[ow] += wv * xr[ow * p->sw + off];
	}
	if (L >= R)
		return;
	const float *restrict x0 = xr + L * p->sw - p->pw;
	float *restrict yd = yr + L;
	const int64_t n = R - L, d = p->dw, s = p->sw;
	if (p->kw == 3) {
		const float w0 = wr[0], w1 = wr[1], w2 = wr[2];
		if (s == 1)
			for (int64_t k = 0; k < n; k++)
				yd[k] = ((yd[k] + w0 * x0[k]) + w1 * x0[k + d]) +
					w2 * x0[k + 2 * d];
		else
			for (int64_t k = 0; k < n; k++)
				yd[k] = ((yd[k] + w0 * x0[k * s]) + w1 * x0[k * s + d]) +
					w2 * x0[k * s + 2 * d];
		return;
	}
	for (int64_t j = 0; j < p->kw; j++) {
		const float wv = wr[j];
		const float *restrict xs = x0 + j * d;
		for (int64_t k = 0; k < n; k++)
			yd[k] += wv * xs[k * s];
	}
}

/* 3 x 3 kernel, every tap row inside the image: outputs [L, R) in one pass over the three
 * input rows (a, b, c), each summing its nine taps in (kh, kw) order from 0, as the row
 * passes do. Strides 1 and 2 as constants (they vectorize). */
#define DW3_BODY(S)                                                                             \
	for (int64_t k = 0; k < n; k++) {                                                       \
		float v = 0.0f;                                                                 \
		v = v + w[0] * a[k * (S)];                                                      \
		v = v + w[1] * a[k * (S) + d];                                                  \
		v = v + w[2] * a[k * (S) + 2 * d];                                              \
		v = v + w[3] * b[k * (S)];                                                      \
		v = v + w[4] * b[k * (S) + d];                                                  \
		v = v + w[5] * b[k * (S) + 2 * d];                                              \
		v = v + w[6] * c[k * (S)];                                                      \
		v = v + w[7] * c[k * (S) + d];                                                  \
		v = v + w[8] * c[k * (S) + 2 * d];                                              \
		yd[k] = v;                                                                      \
	}

MULTI_ISA static void depthwise3x3_inner(const float *restrict a, const float *restrict b,
					 const float *restrict c, int64_t n, int64_t s, int64_t d,
					 const float *w, float *restrict yd)
{
	if (s == 1)
		DW3_BODY(1)
	else if (s == 2)
		DW3_BODY(2)
	else
		DW3_BODY(s)
}

/* Outputs outside [L, R) of a row whose three tap rows are all inside: the taps they see. */
static void depthwise3x3_border(const plane *p, const int64_t *lo, const int64_t *hi, int64_t L,
				int64_t R, const float *const *rows, const float *w, float *yr)
{
	for (int64_t ow = 0; ow < p->OW; ow++) {
		if (ow == L)
			ow = R; /* L <= R <= OW */
		if (ow == p->OW)
			break;
		float v = 0.0f;
		for (int i = 0; i < 3; i++)
			for (int j = 0; j < 3; j++)
				if (ow >= lo[j] && ow < hi[j])
					v = v + w[i * 3 + j] *
						    rows[i][ow * p->sw + j * p->dw - p->pw];
		yr[ow] = v;
	}
}

enum { EPI_RUN = 256 }; /* outputs per epilogue call, at least (or a whole row) */

/* Channel m's plane of image n: ym is element `off` of Y. */
static void depthwise_rows(const plane *p, const int64_t *lo, const int64_t *hi,
			   const float *xc, const float *wm, const om_conv_epi *e, int64_t m,
			   int64_t off, float *ym)
{
	/* [L, R): the outputs every tap of a row reaches */
	int64_t L = 0, R = p->OW;
	for (int64_t j = 0; j < p->kw; j++) {
		L = lo[j] > L ? lo[j] : L;
		R = hi[j] < R ? hi[j] : R;
	}
	if (L >= R)
		L = R = p->OW;
	/* the epilogue runs on runs of whole rows (a short row is mostly vector tail) */
	const int64_t erows = p->OW >= EPI_RUN ? 1 : EPI_RUN / p->OW;
	for (int64_t oh = 0; oh < p->OH; oh++) {
		if (oh % erows == 0 && oh) {
			int64_t o0 = (oh - erows) * p->OW;
			om_conv_epi_row(e, m, off + o0, ym + o0, erows * p->OW);
		}
		float *restrict yr = ym + oh * p->OW;
		const int64_t ih0 = oh * p->sh - p->ph;
		if (p->kh == 3 && p->kw == 3 && ih0 >= 0 && ih0 + 2 * p->dh < p->H) {
			const float *rows[3] = {xc + ih0 * p->W, xc + (ih0 + p->dh) * p->W,
						xc + (ih0 + 2 * p->dh) * p->W};
			if (L < R)
				depthwise3x3_inner(rows[0] + L * p->sw - p->pw,
						   rows[1] + L * p->sw - p->pw,
						   rows[2] + L * p->sw - p->pw, R - L, p->sw, p->dw,
						   wm, yr + L);
			depthwise3x3_border(p, lo, hi, L, R, rows, wm, yr);
			continue;
		}
		memset(yr, 0, sizeof(float) * (size_t)p->OW);
		for (int64_t i = 0; i < p->kh; i++) {
			int64_t ih = oh * p->sh - p->ph + i * p->dh;
			if (ih >= 0 && ih < p->H)
				depthwise_row(p, lo, hi, L, R, xc + ih * p->W, wm + i * p->kw, yr);
		}
	}
	const int64_t o0 = (p->OH - 1) / erows * erows * p->OW;
	om_conv_epi_row(e, m, off + o0, ym + o0, p->OH * p->OW - o0);
}

/* The padded 3 x 3 path: the channel's plane copied into a zero-padded one of Hp x Wp (just
 * the rows and columns the taps read), then every output takes all nine taps with no border
 * cases. A padding tap adds w * 0 = +-0 to a sum that started at +0 and so is never -0: the
 * sum keeps its bits, and with finite weights the outputs are those of the border loops. */
typedef struct padded {
	int64_t Hp, Wp;
	bool flat; /* stride 1, narrow rows: one pass over all rows Wp wide, then compacted */
} padded;

enum { FLAT_MAX_OW = 64 }; /* rows at least this wide vectorize well on their own */

static bool padded_geometry(const plane *p, padded *g)
{
	if (p->kh != 3 || p->kw != 3)
		return false;
	g->Hp = (p->OH - 1) * p->sh + 2 * p->dh + 1;
	g->Wp = (p->OW - 1) * p->sw + 2 * p->dw + 1;
	g->flat = p->sh == 1 && p->sw == 1 && p->OW < FLAT_MAX_OW;
	/* no more than a few times the input and output: huge pads or strides keep the loops */
	const double in = (double)p->H * (double)p->W, out = (double)p->OH * (double)p->OW;
	return (double)g->Hp * (double)g->Wp <= 4 * (in + out) + 4096;
}

/* Copies the plane into the padded one, whose padding (zeroed once per call: every channel has
 * the same geometry) it never writes; plain loops, not memcpy calls: the rows are short (7 to
 * 115 floats). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void pad_plane(const plane *p, const padded *g, const float *xc, float *restrict xp)
{
	const int64_t c0 = p->pw < g->Wp ? p->pw : g->Wp;
	int64_t c1 = p->pw + p->W < g->Wp ? p->pw + p->W : g->Wp;
	c1 = c1 < c0 ? c0 : c1;
	const int64_t r0 = p->ph, r1 = p->ph + p->H < g->Hp ? p->ph + p->H : g->Hp;
	for (int64_t r = r0; r < r1; r++) {
		float *restrict d = xp + r * g->Wp;
		const float *restrict s = xc + (r - p->ph) * p->W - p->pw;
		for (int64_t k = c0; k < c1; k++)
			d[k] = s[k];
	}
}

#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif
static void compact(int64_t OH, int64_t OW, int64_t Wp, const float *restrict yw,
		    float *restrict ym)
{
	for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t k = 0; k < OW; k++)
			ym[oh * OW + k] = yw[oh * Wp + k];
}

/* Channel m's plane through the padded path; xp holds Hp x Wp floats, yw OH x Wp (flat). */
static void depthwise3x3_padded(const plane *p, const padded *g, const float *xc,
				const float *wm, const om_conv_epi *e, int64_t m, int64_t off,
				float *xp, float *yw, float *ym)
{
	pad_plane(p, g, xc, xp);
	const int64_t Wp = g->Wp, dr = p->dh * Wp;
	if (g->flat) {
		/* output (oh, ow) is yw[oh * Wp + ow]; the columns past OW are never read */
		depthwise3x3_inner(xp, xp + dr, xp + 2 * dr, (p->OH - 1) * Wp + p->OW, 1, p->dw,
				   wm, yw);
		compact(p->OH, p->OW, Wp, yw, ym);
	} else {
		for (int64_t oh = 0; oh < p->OH; oh++) {
			const float *a = xp + oh * p->sh * Wp;
			depthwise3x3_inner(a, a + dr, a + 2 * dr, p->OW, p->sw, p->dw, wm,
					   ym + oh * p->OW);
		}
	}
	om_conv_epi_row(e, m, off, ym, p->OH * p->OW);
}

static bool finite9(const float *w)
{
	for (int i = 0; i < 9; i++)
		if (!isfinite(w[i]))
			return false;
	return true;
}

/* Multiply-adds worth a thread: a piece of channels does at least this many */
enum { DW_GRAIN_MACS = 1 << 16 };

/* Channels (image n, channel m) [lo, hi) of the flat N x M range; each piece pads into a
 * buffer of its own (without one it takes the border loops: the same outputs) */
typedef struct dw_job {
	const plane *p;
	const int64_t *lo, *hi;
	const padded *g; /* NULL: no padded path */
	int64_t C, M, Mg;
	const float *x, *w;
	const om_conv_epi *e;
	float *y;
} dw_job;

static void dw_piece(void *arg, int64_t c0, int64_t c1)
{
	const dw_job *j = arg;
	const plane *p = j->p;
	const padded *g = j->g;
	float *xp = NULL;
	if (g) {
		const int64_t nxp = g->Hp * g->Wp, nyw = g->flat ? p->OH * g->Wp : 0;
		if ((xp = malloc(sizeof(float) * (size_t)(nxp + nyw))))
			memset(xp, 0, sizeof(float) * (size_t)nxp);
	}
	for (int64_t nm = c0; nm < c1; nm++) {
		const int64_t n = nm / j->M, m = nm % j->M;
		const float *xc = j->x + (n * j->C + m / j->Mg) * p->H * p->W;
		const float *wm = j->w + m * p->kh * p->kw;
		const int64_t off = nm * p->OH * p->OW;
		if (xp && finite9(wm))
			depthwise3x3_padded(p, g, xc, wm, j->e, m, off, xp, xp + g->Hp * g->Wp,
					    j->y + off);
		else
			depthwise_rows(p, j->lo, j->hi, xc, wm, j->e, m, off, j->y + off);
	}
	free(xp);
}

om_kind om_conv_depthwise(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			  int64_t group, const float *x, const float *w, const om_conv_epi *e,
			  float *y)
{
	const plane p = as_plane(sp);
	int64_t *lo = malloc(sizeof(int64_t) * (size_t)(2 * p.kw));
	if (!lo)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "depthwise tables");
	int64_t *hi = lo + p.kw;
	for (int64_t j = 0; j < p.kw; j++)
		col_range(&p, j * p.dw - p.pw, &lo[j], &hi[j]);
	padded g = {0, 0, false};
	const bool pad = padded_geometry(&p, &g);
	dw_job job = {&p, lo, hi, pad ? &g : NULL, C, M, M / group, x, w, e, y};
	const double macs = (double)p.OH * (double)p.OW * (double)(p.kh * p.kw);
	const int64_t grain = macs >= DW_GRAIN_MACS ? 1 : (int64_t)(DW_GRAIN_MACS / (macs + 1)) + 1;
	om_par_for(c->threads, N * M, grain, dw_piece, &job);
	free(lo);
	return OM_OK;
}
