/* conv_depthwise.c — Conv with one input channel per group (depthwise), one or two spatial
 * axes: every output sums its taps in (kh, kw) order from +0, then takes the epilogue (bias, Z,
 * activation), the same in fast and exact mode. Channels with finite weights run the phase
 * loop of conv_dw_flat.c (any kernel, stride, dilation; lanes across outputs); the others, and
 * geometries whose padded copy would be huge, the row loops here, which skip padding taps. */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "conv_depthwise.h"
#include "conv_dw_flat.h"
#include "parallel.h"

typedef om_dw_plane plane;

/* [lo, hi): output columns ow with 0 <= ow * s + off < W. */
static void col_range(const plane *p, int64_t off, int64_t *lo, int64_t *hi)
{
	int64_t l = off >= 0 ? 0 : (-off + p->sw - 1) / p->sw;
	int64_t h = p->W - 1 - off < 0 ? 0 : (p->W - 1 - off) / p->sw + 1;
	*hi = h > p->OW ? p->OW : h;
	*lo = l > *hi ? *hi : l;
}

/* Adds kernel row wr (kw taps) over input row xr into output row yr, tap by tap: outputs in
 * [L, R) see every tap, the borders the taps they see; every output adds its taps in
 * ascending order. */
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
	for (int64_t j = 0; j < p->kw; j++) {
		const float wv = wr[j];
		const float *restrict xs = x0 + j * d;
		for (int64_t k = 0; k < n; k++)
			yd[k] += wv * xs[k * s];
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

static bool all_finite(const float *w, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(w[i]))
			return false;
	return true;
}

/* Multiply-adds worth a thread: a piece of channels does at least this many */
enum { DW_GRAIN_MACS = 1 << 16 };

/* Channels (image n, channel m) [lo, hi) of the flat N x M range; each worker slot makes phase
 * planes in its own part of xq (without them it takes the row loops: the same outputs) */
typedef struct dw_job {
	const plane *p;
	const int64_t *lo, *hi;
	const om_dw_flat *f; /* NULL: no phase loop */
	float *xq;           /* f's buffers, `per` floats a slot: nbuf (zeroed once) + nyw */
	int64_t per;
	const int64_t *tap;
	int64_t C, M, Mg;
	const float *x, *w;
	const om_conv_epi *e;
	float *y;
} dw_job;

static void dw_piece(void *arg, int64_t c0, int64_t c1, int slot)
{
	const dw_job *j = arg;
	const plane *p = j->p;
	const om_dw_flat *f = j->f;
	const int64_t nk = p->kh * p->kw;
	float *xq = f ? j->xq + (size_t)slot * (size_t)j->per : NULL;
	for (int64_t nm = c0; nm < c1; nm++) {
		const int64_t n = nm / j->M, m = nm % j->M;
		const float *xc = j->x + (n * j->C + m / j->Mg) * p->H * p->W;
		const float *wm = j->w + m * nk;
		const int64_t off = nm * p->OH * p->OW;
		if (xq && all_finite(wm, nk)) {
			om_dw_flat_run(p, f, j->tap, xc, wm, xq, xq + f->nbuf, j->y + off);
			om_conv_epi_row(j->e, m, off, j->y + off, p->OH * p->OW);
		} else {
			depthwise_rows(p, j->lo, j->hi, xc, wm, j->e, m, off, j->y + off);
		}
	}
}

om_kind om_conv_depthwise(om_ctx *c, const om_spatial *sp, int64_t N, int64_t C, int64_t M,
			  int64_t group, const float *x, const float *w, const om_conv_epi *e,
			  float *y)
{
	const plane p = om_dw_plane_of(sp);
	/* lo, hi: kw each; the taps' phase offsets: kh * kw (the weights hold M times that) */
	int64_t *lo = malloc(sizeof(int64_t) * (size_t)(2 * p.kw + p.kh * p.kw));
	if (!lo)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "depthwise tables");
	int64_t *hi = lo + p.kw, *tap = hi + p.kw;
	for (int64_t j = 0; j < p.kw; j++)
		col_range(&p, j * p.dw - p.pw, &lo[j], &hi[j]);
	om_dw_flat f;
	const bool flat = om_dw_flat_plan(&p, &f, tap);
	dw_job job = {&p, lo, hi, flat ? &f : NULL, NULL, 0, tap, C, M, M / group, x, w, e, y};
	const double macs = (double)p.OH * (double)p.OW * (double)(p.kh * p.kw);
	const int64_t grain = macs >= DW_GRAIN_MACS ? 1 : (int64_t)(DW_GRAIN_MACS / (macs + 1)) + 1;
	if (flat && N * M > 0) { /* each slot's phase planes, their padding zeroed once */
		const int slots = om_par_slots(c->threads, N * M, grain);
		job.per = (f.nbuf + f.nyw + 3) / 4 * 4;
		om_kind rc = om_ctx_scratch(c, sizeof(float) * (size_t)job.per * (size_t)slots,
					    "the depthwise phase planes", (void **)&job.xq);
		if (rc) {
			free(lo);
			return rc;
		}
		for (int s = 0; s < slots; s++)
			memset(job.xq + (size_t)s * (size_t)job.per, 0,
			       sizeof(float) * (size_t)f.nbuf);
	}
	om_par_for_slots(c->threads, N * M, grain, dw_piece, &job);
	om_ctx_scratch_done(c, job.xq);
	free(lo);
	return OM_OK;
}
