/* nms.c — NonMaxSuppression's greedy selection for one batch and class, with ONNX Runtime's
 * float arithmetic, checking each candidate only against the kept boxes that can suppress it.
 *
 * A kept box suppresses a candidate only when their x ranges overlap on an interval of positive
 * width (ONNX Runtime's SuppressByIOU returns false first otherwise, whatever the threshold) and
 * both areas are positive. So the candidates are cut into x clusters (sorted by left edge, a
 * cluster ends where the next left edge is at or past every right edge so far): boxes of two
 * clusters never interact, and a candidate is checked only against the kept boxes of its own
 * cluster, kept contiguous per cluster and tested 16 at a time (branch-free, vectorized). A box
 * whose area is not positive (NaN included) or whose x range is empty or inverted never
 * suppresses nor is suppressed: it is kept without checks. The selection is the one of checking
 * every kept box, in the same order (the cap included); boxes that overlap only locally
 * (torchvision's batched_nms offsets each class to a region of its own) cost a candidate its
 * neighbours instead of every kept box, and a single dense cluster costs what the plain
 * algorithm does.
 */
#include <stdlib.h>
#include <string.h>

#include "nms.h"

enum { NMS_CHUNK = 16 }; /* kept boxes tested at once (branch-free, vectorizes) */

/* edges and areas of boxes */
typedef struct nms_soa {
	float *x0, *y0, *x1, *y1, *area;
} nms_soa;

struct om_nms_work {
	int64_t n;
	int ib;                     /* bits of a box index in a sort key */
	nms_soa box, kept;          /* the boxes; kept boxes, contiguous per cluster */
	uint64_t *key, *tmp;        /* sort keys */
	int64_t *cand, *cluster;    /* candidates in selection order, their clusters */
	int64_t *first, *count;     /* per cluster: first kept slot, kept boxes */
};

om_nms_work *om_nms_work_new(int64_t n)
{
	if (n < 0 || n > ((int64_t)1 << 32) || (uint64_t)n > SIZE_MAX / 128)
		return NULL;
	const size_t m = (size_t)n + 1;
	om_nms_work *w = calloc(1, sizeof *w);
	const size_t each = 10 * sizeof(float) + 2 * sizeof(uint64_t) + 4 * sizeof(int64_t);
	char *mem = w ? malloc(m * each) : NULL;
	if (!mem) {
		free(w);
		return NULL;
	}
	w->n = n;
	while (((int64_t)1 << w->ib) < n)
		w->ib++;
	w->key = (uint64_t *)mem, w->tmp = w->key + m;
	w->cand = (int64_t *)(w->tmp + m), w->cluster = w->cand + m;
	w->first = w->cluster + m, w->count = w->first + m;
	float *f = (float *)(w->count + m);
	float **soa[] = {&w->box.x0, &w->box.y0, &w->box.x1, &w->box.y1, &w->box.area,
			 &w->kept.x0, &w->kept.y0, &w->kept.x1, &w->kept.y1, &w->kept.area};
	for (size_t i = 0; i < sizeof soa / sizeof *soa; i++)
		*soa[i] = f + i * m;
	return w;
}

void om_nms_work_free(om_nms_work *w)
{
	if (w)
		free(w->key);
	free(w);
}

void om_nms_boxes(om_nms_work *w, const float *in, bool center)
{
	const nms_soa *b = &w->box;
	for (int64_t i = 0; i < w->n; i++, in += 4) {
		float x0, x1, y0, y1;
		if (center) { /* [xc, yc, w, h] */
			const float hw = in[2] / 2, hh = in[3] / 2;
			x0 = in[0] - hw, x1 = in[0] + hw, y0 = in[1] - hh, y1 = in[1] + hh;
		} else { /* [y1, x1, y2, x2]; ONNX Runtime's MaxMin: the first is the max if >= */
			const bool fx = in[1] >= in[3], fy = in[0] >= in[2];
			x0 = fx ? in[3] : in[1], x1 = fx ? in[1] : in[3];
			y0 = fy ? in[2] : in[0], y1 = fy ? in[0] : in[2];
		}
		b->x0[i] = x0, b->x1[i] = x1, b->y0[i] = y0, b->y1[i] = y1;
		b->area[i] = (x1 - x0) * (y1 - y0);
	}
}

/* 1 when kept box j suppresses candidate c = {x0, y0, x1, y1, area}: SuppressByIOU's tests,
 * all evaluated (a NaN anywhere makes the IoU NaN, so the early returns change nothing) */
static inline int nms_pair(const nms_soa *k, int64_t j, const float *c, float t)
{
	const float ix0 = k->x0[j] < c[0] ? c[0] : k->x0[j];
	const float ix1 = c[2] < k->x1[j] ? c[2] : k->x1[j];
	const float iy0 = k->y0[j] < c[1] ? c[1] : k->y0[j];
	const float iy1 = c[3] < k->y1[j] ? c[3] : k->y1[j];
	const float inter = (ix1 - ix0) * (iy1 - iy0);
	const float uni = k->area[j] + c[4] - inter;
	return (ix1 > ix0) & (iy1 > iy0) & (inter > 0) & (k->area[j] > 0) & (c[4] > 0) &
	       (uni > 0) & (inter / uni > t);
}

/* any of kept boxes [0, nk) suppresses c */
static bool nms_scan(const nms_soa *k, int64_t nk, const float *c, float t)
{
	for (int64_t i = 0; i < nk; i += NMS_CHUNK) {
		const int64_t e = nk - i < NMS_CHUNK ? nk - i : NMS_CHUNK;
		int hit = 0;
		for (int64_t j = 0; j < e; j++)
			hit |= nms_pair(k, i + j, c, t);
		if (hit)
			return true;
	}
	return false;
}

/* float bits whose unsigned order is the float order (-0 below +0; no NaN) */
static uint32_t nms_order(float x)
{
	uint32_t u;
	memcpy(&u, &x, sizeof u);
	return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* ascending LSD radix sort of the low `bits` bits of a[0..n) (tmp: n more) */
static void nms_sort(uint64_t *a, uint64_t *tmp, int64_t n, int bits)
{
	enum { D = 11 };
	int64_t cnt[1 << D];
	uint64_t *src = a, *dst = tmp;
	for (int shift = 0; shift < bits; shift += D) {
		memset(cnt, 0, sizeof cnt);
		for (int64_t i = 0; i < n; i++)
			cnt[(src[i] >> shift) & ((1u << D) - 1)]++;
		if (n == 0 || cnt[(src[0] >> shift) & ((1u << D) - 1)] == n)
			continue; /* one digit: the pass would not move anything */
		for (int64_t d = 0, sum = 0; d < 1 << D; d++) {
			const int64_t c = cnt[d];
			cnt[d] = sum, sum += c;
		}
		for (int64_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & ((1u << D) - 1)]++] = src[i];
		uint64_t *t = src;
		src = dst, dst = t;
	}
	if (src != a)
		memcpy(a, src, sizeof *a * (size_t)n);
}

/* a box that never suppresses nor is suppressed (above) */
static bool nms_alone(const nms_soa *b, int64_t s)
{
	return !(b->area[s] > 0) || !(b->x1[s] > b->x0[s]);
}

/* w->cluster[i] for candidates i < nc (-1: alone), w->first[q]: the first kept slot of cluster
 * q (as many as its candidates); returns the number of clusters */
static int64_t nms_clusters(om_nms_work *w, int64_t nc)
{
	const nms_soa *b = &w->box;
	int64_t m = 0, q = -1, slot = 0;
	for (int64_t i = 0; i < nc; i++) {
		w->cluster[i] = -1;
		if (!nms_alone(b, w->cand[i]))
			w->key[m++] = (uint64_t)nms_order(b->x0[w->cand[i]]) << w->ib | (uint64_t)i;
	}
	nms_sort(w->key, w->tmp, m, 32 + w->ib);
	float right = 0;
	for (int64_t j = 0; j < m; j++) {
		const int64_t i = (int64_t)(w->key[j] & (((uint64_t)1 << w->ib) - 1));
		const int64_t s = w->cand[i];
		if (q < 0 || !(b->x0[s] < right)) /* no overlap with anything before */
			w->first[++q] = slot, right = b->x1[s];
		right = b->x1[s] > right ? b->x1[s] : right;
		w->cluster[i] = q, slot++;
	}
	return q + 1;
}

void om_nms_class(om_nms_work *w, const float *scores, bool has_score, float score,
		  int64_t max_keep, float iou, int64_t *keep, int64_t *nk)
{
	*nk = 0;
	if (max_keep <= 0)
		return;
	int64_t nc = 0;
	for (int64_t i = 0; i < w->n; i++) {
		float s = scores[i];
		if (s != s || (has_score && !(s > score)))
			continue;
		if (s == 0)
			s = 0; /* -0 ties with +0 */
		w->key[nc++] = (uint64_t)~nms_order(s) << w->ib | (uint64_t)i;
	}
	nms_sort(w->key, w->tmp, nc, 32 + w->ib);
	for (int64_t i = 0; i < nc; i++)
		w->cand[i] = (int64_t)(w->key[i] & (((uint64_t)1 << w->ib) - 1));
	const int64_t nq = nms_clusters(w, nc);
	memset(w->count, 0, sizeof *w->count * (size_t)nq);
	const nms_soa *b = &w->box;
	int64_t n = 0;
	for (int64_t i = 0; i < nc && n < max_keep; i++) {
		const int64_t s = w->cand[i], q = w->cluster[i];
		if (q >= 0) {
			const float c[5] = {b->x0[s], b->y0[s], b->x1[s], b->y1[s], b->area[s]};
			const int64_t at = w->first[q], j = w->count[q];
			const nms_soa k = {w->kept.x0 + at, w->kept.y0 + at, w->kept.x1 + at,
					   w->kept.y1 + at, w->kept.area + at};
			if (nms_scan(&k, j, c, iou))
				continue;
			k.x0[j] = c[0], k.y0[j] = c[1], k.x1[j] = c[2], k.y1[j] = c[3];
			k.area[j] = c[4];
			w->count[q]++;
		}
		keep[n++] = s;
	}
	*nk = n;
}
