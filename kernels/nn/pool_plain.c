/* pool_plain.c — the windowed pools' plain float32 kernels (pool_common.h): every window read
 * in a fixed order (exact), the separable MaxPool and AveragePool paths giving the same bits;
 * fast mode's separable 2-D AveragePool sums in another order. */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "parallel.h"
#include "pool_common.h"

/* The window of output (o[0], o[1], o[2]) over image x, taps in row-major order. MaxPool sets
 * *best to the flat image index of the first maximum (NaN wins), -1 for an empty window. */
static inline __attribute__((always_inline)) float
window(const pool3 *g, const pool_args *pa, const enum pool_kind kind, const float *x,
       const int64_t *o, int64_t *best)
{
	const axis_taps *T = g->t;
	int64_t H = g->in[1], W = g->in[2];
	float acc = kind == POOL_MAX ? -INFINITY : 0;
	*best = -1;
	for (int64_t td = T[0].lo[o[0]]; td < T[0].hi[o[0]]; td++) {
		int64_t id = T[0].start[o[0]] + td * g->dil[0];
		for (int64_t th = T[1].lo[o[1]]; th < T[1].hi[o[1]]; th++) {
			int64_t ih = T[1].start[o[1]] + th * g->dil[1];
			const float *xr = x + (id * H + ih) * W;
			for (int64_t tw = T[2].lo[o[2]]; tw < T[2].hi[o[2]]; tw++) {
				int64_t iw = T[2].start[o[2]] + tw * g->dil[2];
				float v = xr[iw];
				if (kind == POOL_AVG) {
					acc += v;
				} else if (kind == POOL_LP) {
					acc += om_pool_lp_term(v, pa->p);
				} else if (*best < 0 || v > acc || (isnan(v) && !isnan(acc))) {
					acc = v;
					*best = pa->col_major ? id + (ih + iw * H) * g->in[0]
							      : (id * H + ih) * W + iw;
				}
			}
		}
	}
	return acc;
}

/* One image: x is in[0] x in[1] x in[2], y is out[0] x out[1] x out[2]. `ind` (may be NULL)
 * gets flat input indices offset by ibase. `kind` is a constant in each caller below. */
static inline __attribute__((always_inline)) void
pool_image_k(const pool3 *g, const pool_args *pa, const enum pool_kind kind, const float *x,
	     float *y, int64_t *ind, int64_t ibase)
{
	int64_t o[3];
	for (o[0] = 0; o[0] < g->out[0]; o[0]++)
		for (o[1] = 0; o[1] < g->out[1]; o[1]++)
			for (o[2] = 0; o[2] < g->out[2]; o[2]++, y++) {
				int64_t best;
				float acc = window(g, pa, kind, x, o, &best);
				if (kind == POOL_AVG)
					acc = acc / (float)om_pool_window_count(g, pa, o);
				else if (kind == POOL_LP)
					acc = om_pool_lp_root(acc, pa->p);
				*y = acc;
				if (ind)
					*ind++ = best < 0 ? -1 : ibase + best;
			}
}

static void pool_image(const pool3 *g, const pool_args *pa, const float *x, float *y,
		       int64_t *ind, int64_t ibase)
{
	switch (pa->kind) {
	case POOL_MAX: pool_image_k(g, pa, POOL_MAX, x, y, ind, ibase); break;
	case POOL_AVG: pool_image_k(g, pa, POOL_AVG, x, y, ind, ibase); break;
	default: pool_image_k(g, pa, POOL_LP, x, y, ind, ibase); break;
	}
}

static inline float max_nan(float m, float v)
{
	return ((v > m) | (v != v)) ? v : m; /* no branch: vectorizes */
}

/* y[o] = max over taps t < k of r[o * s + t * step], o < n, taps in order (NaN wins): a row's
 * window columns (step 1), or a plane's window rows (s 1, step a row); s and step are
 * constants in each caller, so that the loads vectorize */
static inline __attribute__((always_inline)) void
max_taps(float *restrict y, const float *restrict r, int64_t n, int64_t k, int64_t s,
	 int64_t step)
{
	for (int64_t o = 0; o < n; o++)
		y[o] = r[o * s]; /* max_nan(-inf, v) is v */
	for (int64_t t = 1; t < k; t++)
		for (int64_t o = 0; o < n; o++)
			y[o] = max_nan(y[o], r[o * s + t * step]);
}

/* the outputs [*a, *b) of the n along an axis whose windows of k taps lie wholly inside the
 * input (lo 0, hi k) */
static void inside(const axis_taps *t, int64_t n, int64_t k, int64_t *a, int64_t *b)
{
	*a = 0, *b = n;
	while (*a < n && (t->lo[*a] != 0 || t->hi[*a] != k))
		(*a)++;
	while (*b > *a && (t->lo[*b - 1] != 0 || t->hi[*b - 1] != k))
		(*b)--;
}

/* row = the maximum of output (od, oh)'s window rows of x (in[2] floats each, in order, NaN
 * wins), -inf where no window row is inside the input */
static inline __attribute__((always_inline)) void
rows_max(const pool3 *g, const float *x, int64_t od, int64_t oh, float *restrict row)
{
	const axis_taps *T = g->t;
	const int64_t H = g->in[1], W = g->in[2];
	bool first = true;
	for (int64_t td = T[0].lo[od]; td < T[0].hi[od]; td++)
		for (int64_t th = T[1].lo[oh]; th < T[1].hi[oh]; th++) {
			const int64_t id = T[0].start[od] + td, ih = T[1].start[oh] + th;
			const float *restrict xr = x + (id * H + ih) * W;
			if (first)
				memcpy(row, xr, sizeof(float) * (size_t)W);
			else
				for (int64_t w = 0; w < W; w++)
					row[w] = max_nan(row[w], xr[w]);
			first = false;
		}
	if (first)
		for (int64_t w = 0; w < W; w++)
			row[w] = -INFINITY;
}

/* the maximum of output ow's window columns of row, taken one by one (a clipped window) */
static inline __attribute__((always_inline)) float
clipped_max(const axis_taps *t, const float *row, int64_t ow)
{
	float m = -INFINITY;
	for (int64_t tw = t->lo[ow]; tw < t->hi[ow]; tw++)
		m = max_nan(m, row[t->start[ow] + tw]);
	return m;
}

/* MaxPool without Indices and dilations, separably: per output row the window rows' maximum
 * over every column (vectorizable), then the window columns' maximum of that row: windows
 * wholly inside the row column-tap by column-tap (vectorizable), the clipped ones at the
 * edges one by one. `row` holds in[2] floats. Same results as pool_image (NaN wins). */
static void max_image_separable(const pool3 *g, int64_t k, int64_t s, const float *x, float *y,
				float *row)
{
	const axis_taps *T = g->t;
	const int64_t OW = g->out[2];
	int64_t a, b; /* outputs with windows wholly inside */
	inside(&T[2], OW, k, &a, &b);
	for (int64_t od = 0; od < g->out[0]; od++)
		for (int64_t oh = 0; oh < g->out[1]; oh++, y += OW) {
			rows_max(g, x, od, oh, row);
			for (int64_t ow = 0; ow < OW; ow++) {
				if (ow == a && a < b) {
					const float *r0 = row + T[2].start[a];
					if (s == 1)
						max_taps(y + a, r0, b - a, k, 1, 1);
					else if (s == 2)
						max_taps(y + a, r0, b - a, k, 2, 1);
					else
						max_taps(y + a, r0, b - a, k, s, 1);
					ow = b - 1;
					continue;
				}
				y[ow] = clipped_max(&T[2], row, ow);
			}
		}
}

/* max_image_separable for stride 1 along both axes of a 2-D image whose output rows are as
 * long as its input rows (OW == W: padding of kw - 1 in all): the window rows' maximum of
 * the output rows whose windows are wholly inside along H in one flat pass over the plane,
 * then the window columns' maximum of every output in one more (the rows are short: 28
 * columns at googlenet's inceptions, and a loop per row cost more than the maxima); the
 * clipped rows and columns at the edges one by one. Each output takes its taps in
 * max_image_separable's order: the same results. vm holds OH * W floats. */
OM_CLONES static void
max_plane_s1(const pool3 *g, int64_t kh, int64_t kw, const float *x, float *y, float *vm)
{
	const axis_taps *T = g->t;
	const int64_t W = g->in[2], OH = g->out[1];
	int64_t ha, hb, a, b; /* output rows and columns with windows wholly inside */
	inside(&T[1], OH, kh, &ha, &hb);
	inside(&T[2], W, kw, &a, &b);
	if (hb > ha)
		max_taps(vm + ha * W, x + T[1].start[ha] * W, (hb - ha) * W, kh, 1, W);
	for (int64_t oh = 0; oh < OH; oh++) {
		if (oh == ha && ha < hb)
			oh = hb;
		if (oh < OH)
			rows_max(g, x, 0, oh, vm + oh * W);
	}
	/* interior columns of all rows at once: output j reads vm[j + start[a] - a + t]; the
	 * outputs of edge columns get values across rows here, replaced below */
	const int64_t off = T[2].start[a] - a, n = OH * W;
	const int64_t j0 = a, j1 = n - (W - b); /* outputs whose taps stay inside vm */
	if (a < b && j1 > j0)
		max_taps(y + j0, vm + j0 + off, j1 - j0, kw, 1, 1);
	for (int64_t oh = 0; oh < OH; oh++)
		for (int64_t ow = 0; ow < W; ow++) {
			if (ow == a && a < b) {
				ow = b - 1;
				continue;
			}
			y[oh * W + ow] = clipped_max(&T[2], vm + oh * W, ow);
		}
}

/* y[o] = (((0 + r[o s]) + r[o s + 1]) + ...) over k taps, o < n, added onto acc: one window
 * row of AveragePool for outputs whose column taps are all inside, in the general path's
 * order (s a constant in each caller, so that the loads vectorize) */
static inline __attribute__((always_inline)) void
sum_cols(float *restrict acc, const float *restrict r, int64_t n, int64_t k, int64_t s)
{
	for (int64_t t = 0; t < k; t++)
		for (int64_t o = 0; o < n; o++)
			acc[o] += r[o * s + t];
}

/* AveragePool without dilations: per output row, the outputs whose window columns are all
 * inside the input add window row after window row across the row (vectorizable), the
 * others go through window(). Every output adds its taps in pool_image's order and divides
 * by the same count: the same bits. acc holds out[2] floats. */
static void avg_image_rows(const pool3 *g, const pool_args *pa, int64_t k, int64_t s,
			   const float *x, float *y, float *acc)
{
	const axis_taps *T = g->t;
	const int64_t H = g->in[1], W = g->in[2], OW = g->out[2];
	int64_t a, b;
	inside(&T[2], OW, k, &a, &b);
	int64_t o[3];
	for (o[0] = 0; o[0] < g->out[0]; o[0]++)
		for (o[1] = 0; o[1] < g->out[1]; o[1]++, y += OW) {
			for (int64_t ow = a; ow < b; ow++)
				acc[ow] = 0;
			for (int64_t td = T[0].lo[o[0]]; td < T[0].hi[o[0]] && a < b; td++)
				for (int64_t th = T[1].lo[o[1]]; th < T[1].hi[o[1]]; th++) {
					const int64_t id = T[0].start[o[0]] + td;
					const int64_t ih = T[1].start[o[1]] + th;
					const float *r = x + (id * H + ih) * W + T[2].start[a];
					if (s == 1)
						sum_cols(acc + a, r, b - a, k, 1);
					else if (s == 2)
						sum_cols(acc + a, r, b - a, k, 2);
					else
						sum_cols(acc + a, r, b - a, k, s);
				}
			for (o[2] = 0; o[2] < OW; o[2]++) {
				float v;
				if (o[2] >= a && o[2] < b) {
					v = acc[o[2]];
				} else {
					int64_t best;
					v = window(g, pa, POOL_AVG, x, o, &best);
				}
				y[o[2]] = v / (float)om_pool_window_count(g, pa, o);
			}
		}
}

/* Fast mode's 2-D AveragePool without dilations, separable: the window columns' sums of every
 * input row (hs: H x OW floats), then the window rows' sums of those, each pass over whole
 * rows (vectorizable), divided by the same count as pool_image's. The sums are in another
 * order than exact mode's (taps row by row): not the same bits (inception_v3's 3x3 pools of
 * 288 channels at 35x35, one thread: 1.1 -> 0.6 ms a run, ONNX Runtime 0.27). */
OM_CLONES static void avg_plane_separable(const pool3 *g, const pool_args *pa, int64_t kw,
					  int64_t sw, const float *x, float *y, float *hs)
{
	const axis_taps *T = g->t;
	const int64_t H = g->in[1], W = g->in[2], OH = g->out[1], OW = g->out[2];
	int64_t a, b; /* output columns with windows wholly inside */
	inside(&T[2], OW, kw, &a, &b);
	for (int64_t h = 0; h < H; h++) {
		const float *r = x + h * W;
		float *restrict d = hs + h * OW;
		for (int64_t ow = 0; ow < OW; ow++) {
			if (ow == a && a < b) {
				const float *restrict ri = r + T[2].start[a];
				for (int64_t o = a; o < b; o++)
					d[o] = 0;
				for (int64_t t = 0; t < kw; t++)
					if (sw == 1) /* contiguous loads */
						for (int64_t o = a; o < b; o++)
							d[o] += ri[o - a + t];
					else
						for (int64_t o = a; o < b; o++)
							d[o] += ri[(o - a) * sw + t];
				ow = b - 1;
				continue;
			}
			float v = 0;
			for (int64_t t = T[2].lo[ow]; t < T[2].hi[ow]; t++)
				v += r[T[2].start[ow] + t];
			d[ow] = v;
		}
	}
	for (int64_t oh = 0; oh < OH; oh++) {
		float *restrict d = y + oh * OW;
		for (int64_t o = 0; o < OW; o++)
			d[o] = 0;
		for (int64_t t = T[1].lo[oh]; t < T[1].hi[oh]; t++) {
			const float *restrict r = hs + (T[1].start[oh] + t) * OW;
			for (int64_t o = 0; o < OW; o++)
				d[o] += r[o];
		}
		const int64_t ch = pa->include_pad ? T[1].padded[oh] : T[1].hi[oh] - T[1].lo[oh];
		for (int64_t o = 0; o < OW; o++)
			d[o] /= (float)(ch * (pa->include_pad ? T[2].padded[o]
							      : T[2].hi[o] - T[2].lo[o]));
	}
}

/* Images (image, channel) [lo, hi) of a pool, split over the run's threads: each is its own */
typedef struct pool_job {
	const pool3 *g;
	const pool_args *pa;
	enum pool_path path;
	int64_t k, s;  /* the last axis's kernel and stride (the row paths) */
	int64_t kh;    /* the kernel along H (POOL_PATH_MAX_PLANE) */
	int64_t isz, osz;
	const float *x;
	float *y;
	int64_t *ind;  /* MaxPool's Indices, or NULL */
	float *tmp;    /* the row paths' buffer: `per` floats a worker slot (NULL: general) */
	int64_t per;
} pool_job;

/* the floats of the row paths' buffer (0: the general path needs none) */
static int64_t pool_tmp_floats(const pool3 *g, enum pool_path path)
{
	return path == POOL_PATH_GENERAL    ? 0
	       : path == POOL_PATH_MAX_ROWS  ? g->in[2]
	       : path == POOL_PATH_MAX_PLANE ? g->out[1] * g->in[2]
	       : path == POOL_PATH_AVG_PLANE ? g->in[1] * g->out[2]
					     : g->out[2];
}

static void pool_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const pool_job *j = arg;
	const pool3 *g = j->g;
	float *tmp = j->tmp ? j->tmp + (size_t)slot * (size_t)j->per : NULL;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = j->x + i * j->isz;
		float *y = j->y + i * j->osz;
		if (tmp && j->path == POOL_PATH_MAX_PLANE)
			max_plane_s1(g, j->kh, j->k, x, y, tmp);
		else if (tmp && j->path == POOL_PATH_MAX_ROWS)
			max_image_separable(g, j->k, j->s, x, y, tmp);
		else if (tmp && j->path == POOL_PATH_AVG_PLANE)
			avg_plane_separable(g, j->pa, j->k, j->s, x, y, tmp);
		else if (tmp)
			avg_image_rows(g, j->pa, j->k, j->s, x, y, tmp);
		else
			pool_image(g, j->pa, x, y, j->ind ? j->ind + i * j->osz : NULL,
				   i * j->isz);
	}
}

const char *const om_pool_path_names[POOL_PATHS] = {"general", "max-rows", "max-plane",
							  "avg-rows", "avg-plane"};

enum pool_path om_pool_plain_path(const om_ctx *c, const om_spatial *sp)
{
	const int32_t n = sp->n;
	bool undilated = true;
	for (int32_t i = 0; i < n; i++)
		undilated &= sp->dil[i] == 1;
	if (om_pool_kind(c) == POOL_MAX && !(c->nout > 1 && c->out[1]) && undilated)
		return n == 2 && sp->stride[0] == 1 && sp->stride[1] == 1 &&
				       sp->out[n - 1] == sp->in[n - 1]
			       ? POOL_PATH_MAX_PLANE
			       : POOL_PATH_MAX_ROWS;
	if (om_pool_kind(c) == POOL_AVG && undilated)
		return !c->exact && n == 2 ? POOL_PATH_AVG_PLANE : POOL_PATH_AVG_ROWS;
	return POOL_PATH_GENERAL;
}

om_kind om_pool_plain_f32(om_ctx *c)
{
	om_spatial sp;
	om_kind rc = om_pool_geometry(c, &sp);
	if (rc)
		return rc;
	pool3 g;
	if ((rc = om_pool3_init(c, &sp, &g)))
		return rc;
	pool_args pa = {om_pool_kind(c), (int)om_attr_int(c->node, "count_include_pad", 0),
			(int)om_attr_int(c->node, "storage_order", 0),
			om_attr_int(c->node, "p", 2)};
	const om_tensor *X = c->in[0];
	pool_job j = {&g, &pa, om_pool_plain_path(c, &sp), sp.k[sp.n - 1], sp.stride[sp.n - 1],
		      sp.n == 2 ? sp.k[0] : 1, g.in[0] * g.in[1] * g.in[2],
		      g.out[0] * g.out[1] * g.out[2], X->data, c->out[0]->data,
		      c->nout > 1 && c->out[1] ? c->out[1]->data : NULL, NULL, 0};
	const int64_t n = X->dims[0] * X->dims[1], grain = POOL_GRAIN / (j.isz + j.osz + 1) + 1;
	const int64_t floats = pool_tmp_floats(&g, j.path);
	if (floats > 0 && n > 0) {
		j.per = (floats + 3) / 4 * 4; /* each slot's buffer 16-byte aligned */
		const int slots = om_par_slots(c->threads, n, grain);
		if ((rc = om_ctx_scratch(c, sizeof(float) * (size_t)j.per * (size_t)slots,
					 "the pool's rows", (void **)&j.tmp))) {
			free(g.buf);
			return rc;
		}
	}
	om_ctx_chose(c, om_pool_path_names[j.path]);
	om_par_for_slots(c->threads, n, grain, pool_piece, &j);
	om_ctx_scratch_done(c, j.tmp);
	free(g.buf);
	return OM_OK;
}
