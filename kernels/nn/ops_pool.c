/* ops_pool.c — MaxPool (with Indices), AveragePool, LpPool and their Global forms on float32
 * (float16/bfloat16, and int8/uint8 for MaxPool, through conversion), up to three spatial axes,
 * every window read in a fixed order (exact); MaxUnpool (element moves, any type). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "detmath.h"
#include "f32_bridge.h"
#include "fastmath.h"
#include "layout.h"
#include "move.h"
#include "parallel.h"
#include "spatial.h"

/* The rows' param: which pool a row is (its windowed and Global forms alike) */
enum pool_kind { POOL_MAX, POOL_AVG, POOL_LP };

static bool pool_type_ok(int32_t t, enum pool_kind kind)
{
	return t == OM_FLOAT || om_f32_bridged(t, kind == POOL_MAX);
}

static om_kind check_input(om_ctx *c, enum pool_kind kind, int32_t min_rank)
{
	const om_tensor *X = c->in[0];
	if (!X)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs input X");
	if (X->rank < min_rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"X has rank %d, needs at least %d", X->rank, min_rank);
	if (!pool_type_ok(X->dtype, kind))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "X of type %s",
				om_dtype_name(X->dtype));
	return OM_OK;
}

static enum pool_kind kind_of(const om_ctx *c)
{
	return (enum pool_kind)c->op->param;
}

/* ---- windowed pools ------------------------------------------------------------------------ */

static om_kind pool_geometry(om_ctx *c, om_spatial *sp)
{
	enum pool_kind kind = kind_of(c);
	om_kind rc = check_input(c, kind, 3);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int32_t n = X->rank - 2;
	if (n > 3)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%d spatial axes", n);
	const int64_t *kernel;
	if ((rc = om_spatial_kernel_attr(c, n, &kernel)))
		return rc;
	if (!kernel)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "kernel_shape is required");
	int64_t ceil_mode = om_attr_int(c->node, "ceil_mode", 0);
	if ((rc = om_spatial_forward(c, n, X->dims + 2, kernel, ceil_mode != 0, sp)))
		return rc;
	int64_t so = om_attr_int(c->node, "storage_order", 0);
	if (so != 0 && so != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "storage_order %lld",
				(long long)so);
	if (kind == POOL_LP && om_attr_int(c->node, "p", 2) < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p must be >= 1");
	return OM_OK;
}

static om_kind pool_infer(om_ctx *c)
{
	om_spatial sp;
	om_kind rc = pool_geometry(c, &sp);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int64_t d[OM_MAX_RANK] = {X->dims[0], X->dims[1]};
	for (int32_t i = 0; i < sp.n; i++)
		d[i + 2] = sp.out[i];
	om_set_shape(c->out[0], X->dtype, X->rank, d);
	if (c->nout > 1 && c->out[1]) {
		if (kind_of(c) != POOL_MAX)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "only one output");
		om_set_shape(c->out[1], OM_INT64, X->rank, d);
	}
	return OM_OK;
}

/* Per spatial axis (three, leading ones of extent 1 when fewer) and output index: the taps
 * inside the input [lo, hi) and the taps inside the padded input (count_include_pad). */
typedef struct axis_taps {
	int64_t *lo, *hi, *padded, *start;
} axis_taps;

typedef struct pool3 {
	int64_t in[3], out[3], dil[3], k[3];
	axis_taps t[3];
	int64_t *buf;
} pool3;

static om_kind pool3_init(om_ctx *c, const om_spatial *sp, pool3 *g)
{
	int32_t sh = 3 - sp->n;
	int64_t total = 0;
	for (int32_t a = 0; a < 3; a++) {
		g->in[a] = a < sh ? 1 : sp->in[a - sh];
		g->out[a] = a < sh ? 1 : sp->out[a - sh];
		g->dil[a] = a < sh ? 1 : sp->dil[a - sh];
		g->k[a] = a < sh ? 1 : sp->k[a - sh];
		total += g->out[a];
	}
	g->buf = malloc(sizeof(int64_t) * (size_t)(4 * total + 1));
	if (!g->buf)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "pool tables");
	int64_t *p = g->buf;
	for (int32_t a = 0; a < 3; a++) {
		axis_taps *t = &g->t[a];
		t->lo = p, t->hi = p + g->out[a], t->padded = p + 2 * g->out[a];
		t->start = p + 3 * g->out[a];
		p += 4 * g->out[a];
		int64_t k = a < sh ? 1 : sp->k[a - sh], s = a < sh ? 1 : sp->stride[a - sh];
		int64_t pb = a < sh ? 0 : sp->pb[a - sh], pe = a < sh ? 0 : sp->pe[a - sh];
		int64_t d = g->dil[a], in = g->in[a];
		for (int64_t o = 0; o < g->out[a]; o++) {
			int64_t st = o * s - pb;
			int64_t lo = st >= 0 ? 0 : (-st + d - 1) / d;
			int64_t hi = in - 1 - st < 0 ? 0 : (in - 1 - st) / d + 1;
			int64_t hp = in + pe - 1 - st < 0 ? 0 : (in + pe - 1 - st) / d + 1;
			t->hi[o] = hi > k ? k : hi;
			t->lo[o] = lo > t->hi[o] ? t->hi[o] : lo;
			t->padded[o] = hp > k ? k : hp;
			t->start[o] = st;
		}
	}
	return OM_OK;
}

typedef struct pool_args {
	enum pool_kind kind;
	int include_pad, col_major;
	int64_t p;
} pool_args;

static float lp_term(float v, int64_t p)
{
	return p == 1 ? fabsf(v) : p == 2 ? v * v : (float)om_det_pow(fabsf(v), (double)p);
}

static float lp_root(float acc, int64_t p)
{
	return p == 1 ? acc : p == 2 ? sqrtf(acc) : (float)om_det_pow(acc, 1.0 / (double)p);
}

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
					acc += lp_term(v, pa->p);
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

/* Taps of output o counted by AveragePool: inside the input, or inside the padded input. */
static int64_t window_count(const pool3 *g, const pool_args *pa, const int64_t *o)
{
	int64_t cnt = 1;
	for (int32_t a = 0; a < 3; a++)
		cnt *= pa->include_pad ? g->t[a].padded[o[a]] : g->t[a].hi[o[a]] - g->t[a].lo[o[a]];
	return cnt;
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
					acc = acc / (float)window_count(g, pa, o);
				else if (kind == POOL_LP)
					acc = lp_root(acc, pa->p);
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
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
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
				y[o[2]] = v / (float)window_count(g, pa, o);
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

/* Input and output elements a piece of images reads and writes, at least; a global pool's
 * sum is cheaper per element (2 threads: efficientnet_b0's 17 GlobalAveragePools, ms a run,
 * 0.16 -> 0.20 split from 32768 elements on) */
enum { POOL_GRAIN = 1 << 15, GLOBAL_GRAIN = 1 << 17 };

enum {
	POOL_PATH_GENERAL, POOL_PATH_MAX_ROWS, POOL_PATH_MAX_PLANE, POOL_PATH_AVG_ROWS,
	POOL_PATH_AVG_PLANE
};

/* Images (image, channel) [lo, hi) of a pool, split over the run's threads: each is its own */
typedef struct pool_job {
	const pool3 *g;
	const pool_args *pa;
	int path;      /* POOL_PATH_* */
	int64_t k, s;  /* the last axis's kernel and stride (the row paths) */
	int64_t kh;    /* the kernel along H (POOL_PATH_MAX_PLANE) */
	int64_t isz, osz;
	const float *x;
	float *y;
	int64_t *ind;  /* MaxPool's Indices, or NULL */
} pool_job;

static void pool_piece(void *arg, int64_t lo, int64_t hi)
{
	const pool_job *j = arg;
	const pool3 *g = j->g;
	/* the row paths' buffer (without one, the general path: the same results) */
	const int64_t floats = j->path == POOL_PATH_MAX_ROWS    ? g->in[2]
			       : j->path == POOL_PATH_MAX_PLANE ? g->out[1] * g->in[2]
			       : j->path == POOL_PATH_AVG_PLANE ? g->in[1] * g->out[2]
								: g->out[2];
	float *tmp = j->path == POOL_PATH_GENERAL ? NULL
						  : malloc(sizeof(float) * (size_t)(floats + 1));
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
	free(tmp);
}

static om_kind pool_f32(om_ctx *c)
{
	om_spatial sp;
	om_kind rc = pool_geometry(c, &sp);
	if (rc)
		return rc;
	pool3 g;
	if ((rc = pool3_init(c, &sp, &g)))
		return rc;
	pool_args pa = {kind_of(c), (int)om_attr_int(c->node, "count_include_pad", 0),
			(int)om_attr_int(c->node, "storage_order", 0),
			om_attr_int(c->node, "p", 2)};
	const om_tensor *X = c->in[0];
	const bool undilated = g.dil[0] == 1 && g.dil[1] == 1 && g.dil[2] == 1;
	pool_job j = {&g, &pa, POOL_PATH_GENERAL, sp.k[sp.n - 1], sp.stride[sp.n - 1],
		      sp.n == 2 ? sp.k[0] : 1, g.in[0] * g.in[1] * g.in[2],
		      g.out[0] * g.out[1] * g.out[2], X->data, c->out[0]->data,
		      c->nout > 1 && c->out[1] ? c->out[1]->data : NULL};
	if (pa.kind == POOL_MAX && !j.ind && undilated)
		j.path = sp.n == 2 && sp.stride[0] == 1 && sp.stride[1] == 1 && g.out[2] == g.in[2]
				 ? POOL_PATH_MAX_PLANE
				 : POOL_PATH_MAX_ROWS;
	else if (pa.kind == POOL_AVG && undilated)
		j.path = !c->exact && sp.n == 2 ? POOL_PATH_AVG_PLANE : POOL_PATH_AVG_ROWS;
	om_par_for(c->threads, X->dims[0] * X->dims[1], POOL_GRAIN / (j.isz + j.osz + 1) + 1,
		   pool_piece, &j);
	free(g.buf);
	return OM_OK;
}

/* ---- windowed pools on channel-blocked tensors (op.h) ------------------------------------- */

/* MaxPool without Indices and AveragePool over two spatial axes on float32 take X and Y
 * channel-blocked, both or neither: each window is taken over 16 lanes at once (ONNX Runtime
 * pools its NCHWc tensors so too). The padding lanes stay finite. */
static void pool_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *X = c->in[0];
	if (c->exact || kind_of(c) == POOL_LP || !X || X->dtype != OM_FLOAT ||
	    X->rank != 4 || (c->nout > 1 && c->out[1]))
		return;
	r->may = r->tied = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* The lanes of a blocked pixel are taken 16 at a time (a block of 8 or 16, or 16-lane pieces
 * of NHWC's C lanes, the last one shorter) */
enum { POOL_LANES = 16 };

typedef struct pool_blk_job {
	const pool3 *g;
	const pool_args *pa;
	int64_t b;  /* lanes of a pixel */
	bool avx512; /* on AVX-512: blk_pool16 */
	const float *x;
	float *y;
} pool_blk_job;

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define POOL_AVX512 1
/* The window of output (oh, ow) on nv vectors of 16 lanes from x (the last vector's lanes
 * those of mask `last`), each tap's lanes in one AVX-512 register, taps in pool_image's order.
 * MaxPool: the maximum by vmaxps, a lane with a NaN tap made NaN (a mask of the taps' NaNs, as
 * max_nan makes it; the NaN is the default one, not the tap's) unless `clean` (the caller saw
 * no NaN among the window's rows: vmaxps alone then gives the same bits); the generic window
 * below spends a compare-and-select of 8 lanes a tap: googlenet's 13 MaxPools, two threads,
 * 1.8 -> 0.85 ms. AveragePool: the sum divided by n, the window's count (inception_v3's 3x3
 * pools of 192-2048 lanes in NHWC). nv, max and clean constant where inlined: NHWC's pixels
 * take up to eight vectors a tap. */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
win_vectors(const pool3 *g, const float *x, int64_t b, int64_t oh, int64_t ow, const int nv,
	    __mmask16 last, const bool max, const bool clean, float n, float *y)
{
	const axis_taps *T = g->t;
	const int64_t W = g->in[2];
	__m512 acc[8];
	__mmask16 nan[8];
	for (int k = 0; k < nv; k++)
		acc[k] = _mm512_set1_ps(max ? -INFINITY : 0.0f), nan[k] = 0;
	for (int64_t th = T[1].lo[oh]; th < T[1].hi[oh]; th++) {
		const float *row = x + (T[1].start[oh] + th * g->dil[1]) * W * b;
		for (int64_t tw = T[2].lo[ow]; tw < T[2].hi[ow]; tw++) {
			const float *v = row + (T[2].start[ow] + tw * g->dil[2]) * b;
			for (int k = 0; k < nv; k++) {
				const __m512 t = k < nv - 1 ? _mm512_loadu_ps(v + 16 * k)
							 : _mm512_maskz_loadu_ps(last, v + 16 * k);
				if (max) {
					acc[k] = _mm512_max_ps(acc[k], t);
					if (!clean)
						nan[k] |= _mm512_cmp_ps_mask(t, t, _CMP_UNORD_Q);
				} else {
					acc[k] = _mm512_add_ps(acc[k], t);
				}
			}
		}
	}
	for (int k = 0; k < nv; k++)
		_mm512_mask_storeu_ps(
			y + 16 * k, k < nv - 1 ? 0xffff : last,
			max ? _mm512_mask_mov_ps(acc[k], nan[k], _mm512_set1_ps(NAN))
			    : _mm512_div_ps(acc[k], _mm512_set1_ps(n)));
}

/* win_vectors over w <= 128 lanes of a pixel in one pass: 1-8 vectors, the last one masked
 * (max and clean constant where inlined) */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
win_lanes(const pool3 *g, const float *x, int64_t b, int64_t oh, int64_t ow, int64_t w,
	  const bool max, const bool clean, float n, float *y)
{
	const __mmask16 m = w % 16 ? (__mmask16)((1u << (w % 16)) - 1) : 0xffff;
	switch ((w + 15) / 16) {
	case 1: win_vectors(g, x, b, oh, ow, 1, m, max, clean, n, y); break;
	case 2: win_vectors(g, x, b, oh, ow, 2, m, max, clean, n, y); break;
	case 3: win_vectors(g, x, b, oh, ow, 3, m, max, clean, n, y); break;
	case 4: win_vectors(g, x, b, oh, ow, 4, m, max, clean, n, y); break;
	case 5: win_vectors(g, x, b, oh, ow, 5, m, max, clean, n, y); break;
	case 6: win_vectors(g, x, b, oh, ow, 6, m, max, clean, n, y); break;
	case 7: win_vectors(g, x, b, oh, ow, 7, m, max, clean, n, y); break;
	default: win_vectors(g, x, b, oh, ow, 8, m, max, clean, n, y); break;
	}
}

/* The maximum of a 16-lane window inside the input, its taps at x + off[0 .. nt), in
 * win_vectors' order (the same bits): one load and vmaxps a tap, where win_vectors spends
 * as much again finding the tap (shufflenet_v2's 3x3/2 MaxPool of 24 channels at 112x112 in
 * nChw16c, one thread: 0.068 -> 0.048 ms; 512 planes of 27x27 through blocks 0.050 ->
 * 0.043) */
__attribute__((target("avx512f"))) static inline __attribute__((always_inline)) void
win_taps16(const float *x, const int64_t *off, int64_t nt, float *y)
{
	__m512 acc = _mm512_set1_ps(-INFINITY);
	for (int64_t t = 0; t < nt; t++)
		acc = _mm512_max_ps(acc, _mm512_loadu_ps(x + off[t]));
	_mm512_storeu_ps(y, acc);
}

/* The pool of output row oh of one image's block of b lanes (x, y: the block's first lane);
 * avg: AveragePool's, counting as pa says; clean: the rows the windows read hold no NaN */
__attribute__((target("avx512f"))) static void blk_pool16(const pool3 *g, const pool_args *pa,
							   const float *x, int64_t oh, int64_t b,
							   bool clean, float *y)
{
	const bool max = pa->kind == POOL_MAX;
	enum { PASS = 128, TAPS = 64 };
	const axis_taps *T = g->t;
	const int64_t KH = g->k[1], KW = g->k[2], W = g->in[2];
	/* a 16-lane MaxPool row whose windows lie inside the input rows: their taps' offsets */
	int64_t off[TAPS];
	const bool inside = b == 16 && max && clean && KH * KW <= TAPS && T[1].lo[oh] == 0 &&
			    T[1].hi[oh] == KH;
	for (int64_t th = 0; inside && th < KH; th++)
		for (int64_t tw = 0; tw < KW; tw++)
			off[th * KW + tw] = (th * g->dil[1] * W + tw * g->dil[2]) * 16;
	for (int64_t ow = 0; ow < g->out[2]; ow++, y += b) {
		const int64_t o[3] = {0, oh, ow};
		const float n = max ? 1.0f : (float)window_count(g, pa, o);
		if (inside && T[2].lo[ow] == 0 && T[2].hi[ow] == KW) {
			win_taps16(x + (T[1].start[oh] * W + T[2].start[ow]) * 16, off, KH * KW, y);
			continue;
		}
		if (b == 16 && max) { /* a block of nChw16c */
			if (clean)
				win_vectors(g, x, 16, oh, ow, 1, 0xffff, true, true, n, y);
			else
				win_vectors(g, x, 16, oh, ow, 1, 0xffff, true, false, n, y);
			continue;
		}
		/* PASS lanes a pass, the last pass 1-8 vectors (96 lanes at 109x109, 3x3/2,
		 * alone between 1x1 convs: 0.47 -> 0.21 ms against a pass a vector) */
		for (int64_t l = 0; l < b; l += PASS) {
			const int64_t w = b - l < PASS ? b - l : PASS;
			if (max && clean)
				win_lanes(g, x + l, b, oh, ow, w, true, true, n, y + l);
			else if (max)
				win_lanes(g, x + l, b, oh, ow, w, true, false, n, y + l);
			else
				win_lanes(g, x + l, b, oh, ow, w, false, true, n, y + l);
		}
	}
}

/* whether x[0..n) holds a NaN */
__attribute__((target("avx512f"))) static bool has_nan(const float *x, int64_t n)
{
	__mmask16 m = 0;
	int64_t i = 0;
	for (; i + 64 <= n; i += 64) {
		const __m512 a = _mm512_loadu_ps(x + i), b = _mm512_loadu_ps(x + i + 16);
		const __m512 c = _mm512_loadu_ps(x + i + 32), d = _mm512_loadu_ps(x + i + 48);
		m |= _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(c, d, _CMP_UNORD_Q);
	}
	for (; i < n; i += 16) {
		const __mmask16 k = n - i < 16 ? (__mmask16)((1u << (n - i)) - 1) : 0xffff;
		const __m512 a = _mm512_maskz_loadu_ps(k, x + i);
		m |= _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q);
	}
	return m != 0;
}

/* The input rows [*r0, *r1) that output rows [oh0, oh1) read */
static void rows_read(const pool3 *g, int64_t oh0, int64_t oh1, int64_t *r0, int64_t *r1)
{
	const axis_taps *T = &g->t[1];
	*r0 = g->in[1], *r1 = 0;
	for (int64_t oh = oh0; oh < oh1; oh++)
		if (T->lo[oh] < T->hi[oh]) {
			const int64_t a = T->start[oh] + T->lo[oh] * g->dil[1];
			const int64_t b = T->start[oh] + (T->hi[oh] - 1) * g->dil[1] + 1;
			*r0 = a < *r0 ? a : *r0, *r1 = b > *r1 ? b : *r1;
		}
}

/* Output rows [lo, hi) over the images' blocks of b lanes (x, y: the first block), unit u row
 * u % OH of block u / OH. A MaxPool first looks for NaNs in the input rows a few output rows
 * read (about 256 KB, still in cache when pooled): most blocks have none, and vmaxps alone
 * (win_vectors' `clean`) is faster than tracking them, as are passes of 128 lanes, not 64
 * (squeezenet1_0's 3x3/2 ceil_mode MaxPools between 1x1 convs, one thread, on a Zen 4: 96
 * lanes at 109x109 in NHWC 0.17 -> 0.12 ms, 256 at 54x54 0.108 -> 0.094, 512 planes of 27x27
 * through blocks 0.053 -> 0.044) */
__attribute__((target("avx512f"))) static void blk_rows16(const pool3 *g, const pool_args *pa,
							   int64_t b, const float *x, float *y,
							   int64_t lo, int64_t hi)
{
	const int64_t OH = g->out[1], OW = g->out[2], plane = g->in[1] * g->in[2] * b;
	const int64_t row = g->in[2] * b, stride = OH > 1 ? g->t[1].start[1] - g->t[1].start[0] : 1;
	const int64_t chunk = (1 << 16) / (row * (stride > 0 ? stride : 1) + 1) + 1;
	for (int64_t u = lo; u < hi;) {
		const int64_t oh0 = u % OH, left = OH - oh0 < hi - u ? OH - oh0 : hi - u;
		const int64_t n = left < chunk ? left : chunk;
		const float *xb = x + u / OH * plane;
		bool clean = pa->kind != POOL_MAX;
		if (!clean) {
			int64_t r0, r1;
			rows_read(g, oh0, oh0 + n, &r0, &r1);
			clean = r1 <= r0 || !has_nan(xb + r0 * row, (r1 - r0) * row);
		}
		for (int64_t oh = oh0; oh < oh0 + n; oh++)
			blk_pool16(g, pa, xb, oh, b, clean, y + (u - oh0 + oh) * OW * b);
		u += n;
	}
}
#endif

/* eight lanes of a block (GCC's vector extension: the lane-wise maximum with NaN winning is a
 * compare and a select, which the compiler otherwise leaves as branches) */
typedef float f32x8 __attribute__((vector_size(32)));
typedef int32_t i32x8 __attribute__((vector_size(32)));

/* The window of output (oh, ow) over nv * 8 lanes of pixels b lanes apart, taps in
 * pool_image's order, so that each lane gets the plain kernel's bits (kind and nv constants
 * where inlined) */
static inline __attribute__((always_inline)) void
blk_window(const pool3 *g, const enum pool_kind kind, const float *x, int64_t b, int64_t oh,
	   int64_t ow, const int nv, f32x8 *acc)
{
	const axis_taps *T = g->t;
	const int64_t W = g->in[2];
	for (int k = 0; k < nv; k++)
		for (int l = 0; l < 8; l++)
			acc[k][l] = kind == POOL_MAX ? -INFINITY : 0.0f;
	for (int64_t th = T[1].lo[oh]; th < T[1].hi[oh]; th++) {
		const int64_t ih = T[1].start[oh] + th * g->dil[1];
		for (int64_t tw = T[2].lo[ow]; tw < T[2].hi[ow]; tw++) {
			const int64_t iw = T[2].start[ow] + tw * g->dil[2];
			const float *v = x + (ih * W + iw) * b;
			for (int k = 0; k < nv; k++) {
				f32x8 t;
				memcpy(&t, v + 8 * k, sizeof t);
				if (kind == POOL_MAX) { /* NaN wins, as max_nan */
					const i32x8 take = (t > acc[k]) | (t != t);
					acc[k] = (f32x8)(((i32x8)t & take) | ((i32x8)acc[k] & ~take));
				} else {
					acc[k] += t;
				}
			}
		}
	}
}

/* blk_window's for w < 16 lanes other than 8 (the last piece of NHWC's lanes), lane by lane */
static void blk_window_lanes(const pool3 *g, enum pool_kind kind, const float *x, int64_t b,
			     int64_t oh, int64_t ow, int64_t w, float *acc)
{
	const axis_taps *T = g->t;
	const int64_t W = g->in[2];
	for (int64_t l = 0; l < w; l++)
		acc[l] = kind == POOL_MAX ? -INFINITY : 0.0f;
	for (int64_t th = T[1].lo[oh]; th < T[1].hi[oh]; th++) {
		const int64_t ih = T[1].start[oh] + th * g->dil[1];
		for (int64_t tw = T[2].lo[ow]; tw < T[2].hi[ow]; tw++) {
			const float *v = x + (ih * W + T[2].start[ow] + tw * g->dil[2]) * b;
			for (int64_t l = 0; l < w; l++)
				acc[l] = kind != POOL_MAX	      ? acc[l] + v[l]
					 : v[l] > acc[l] || v[l] != v[l] ? v[l]
									 : acc[l];
		}
	}
}

/* output rows [lo, hi) over the images' blocks: unit u is row u % OH of block u / OH */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
pool_blk_piece(void *arg, int64_t lo, int64_t hi)
{
	const pool_blk_job *j = arg;
	const pool3 *g = j->g;
	const int64_t b = j->b, OH = g->out[1], OW = g->out[2];
	const bool max = j->pa->kind == POOL_MAX;
#ifdef POOL_AVX512
	if (j->avx512) {
		blk_rows16(g, j->pa, b, j->x, j->y, lo, hi);
		return;
	}
#endif
	for (int64_t u = lo; u < hi; u++) {
		const int64_t oh = u % OH;
		const float *x = j->x + u / OH * g->in[1] * g->in[2] * b;
		float *y = j->y + u * OW * b;
		for (int64_t ow = 0; ow < OW; ow++, y += b) {
			const int64_t o[3] = {0, oh, ow};
			const float n = max ? 1.0f : (float)window_count(g, j->pa, o);
			for (int64_t l = 0; l < b; l += POOL_LANES) {
				const int64_t w = b - l < POOL_LANES ? b - l : POOL_LANES;
				union {
					f32x8 v[2];
					float f[POOL_LANES];
				} acc;
				if (max && w == 16)
					blk_window(g, POOL_MAX, x + l, b, oh, ow, 2, acc.v);
				else if (max && w == 8)
					blk_window(g, POOL_MAX, x + l, b, oh, ow, 1, acc.v);
				else if (w == 16)
					blk_window(g, POOL_AVG, x + l, b, oh, ow, 2, acc.v);
				else if (w == 8)
					blk_window(g, POOL_AVG, x + l, b, oh, ow, 1, acc.v);
				else
					blk_window_lanes(g, j->pa->kind, x + l, b, oh, ow, w,
							 acc.f);
				for (int64_t k = 0; !max && k < w; k++)
					acc.f[k] = acc.f[k] / n;
				memcpy(y + l, acc.f, sizeof(float) * (size_t)w);
			}
		}
	}
}

/* X (N, Cb, H, W, b) and Y (N, Cb, OH, OW, b), the planner's choice (pool_layout) */
static om_kind pool_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const int64_t b = X->rank == 5 ? X->dims[4] : 0;
	if (c->blocked != (OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0)) || b < 1)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked pool: X and Y");
	const om_tensor lx = om_layout_logical(X, X->dims[1] * b);
	const om_tensor *in[1] = {&lx};
	om_ctx lc = *c;
	lc.in = in, lc.nin = 1;
	om_spatial sp;
	pool3 g;
	om_kind rc = pool_geometry(&lc, &sp);
	if (rc || (rc = pool3_init(&lc, &sp, &g)))
		return rc;
	if (Y->rank != 5 || Y->dims[0] != X->dims[0] || Y->dims[1] != X->dims[1] ||
	    Y->dims[2] != sp.out[0] || Y->dims[3] != sp.out[1] || Y->dims[4] != b) {
		free(g.buf);
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked pool: Y's shape");
	}
	pool_args pa = {kind_of(c), (int)om_attr_int(c->node, "count_include_pad", 0), 0,
			2};
	pool_blk_job j = {&g, &pa, b, false, X->data, Y->data};
#ifdef POOL_AVX512
	j.avx512 = __builtin_cpu_supports("avx512f");
#endif
	const int64_t elems = (g.in[1] * g.in[2] / (g.out[1] + 1) + g.out[2]) * b;
	om_par_for(c->threads, X->dims[0] * X->dims[1] * g.out[1],
		   POOL_GRAIN / (elems + 1) + 1, pool_blk_piece, &j);
	free(g.buf);
	return OM_OK;
}

#ifdef POOL_AVX512
/* Fast mode on AVX-512: a 2-D MaxPool (without Indices) or AveragePool of plain float planes
 * runs 16 planes at a time through nChw16c: a worker blocks its planes into its buffer, pools
 * them as blk_pool16 does and unblocks the result, where the plain kernels' short rows leave
 * most vector lanes idle. One thread, ms: squeezenet1_0's 3x3/2 ceil_mode MaxPools of 512
 * planes of 27x27 0.30 -> 0.125, 256 of 54x54 0.47 -> 0.27, 96 of 109x109 0.55 -> 0.47;
 * inception_v3's 3x3/1 AveragePools of 288 planes of 35x35 0.62 -> 0.33, 768 of 17x17 0.63 ->
 * 0.20. A stride-1 MaxPool whose rows keep their width stays with max_plane_s1 (256 planes of
 * 28x28: 0.126 against 0.194 here), planes of over VIA_FLOATS / 16 floats with the plain
 * kernels. */
enum { VIA_LANES = 16, VIA_FLOATS = 1 << 18 };

typedef struct pool_via_job {
	const pool3 *g;
	const pool_args *pa;
	int64_t planes, isz, osz;
	const float *x;
	float *y, *buf; /* (isz + osz) * VIA_LANES floats a worker slot */
} pool_via_job;

__attribute__((target("avx512f"))) static void pool_via_piece(void *arg, int64_t lo, int64_t hi,
							      int slot)
{
	const pool_via_job *j = arg;
	const pool3 *g = j->g;
	float *xb = j->buf + (size_t)slot * (size_t)((j->isz + j->osz) * VIA_LANES);
	float *yb = xb + j->isz * VIA_LANES;
	for (int64_t u = lo; u < hi; u++) {
		const int64_t p0 = u * VIA_LANES;
		const int64_t np = j->planes - p0 < VIA_LANES ? j->planes - p0 : VIA_LANES;
		om_layout_block_f32(j->x + p0 * j->isz, 1, np, j->isz, VIA_LANES, xb);
		blk_rows16(g, j->pa, VIA_LANES, xb, yb, 0, g->out[1]);
		om_layout_unblock_f32(yb, 1, np, j->osz, VIA_LANES, j->y + p0 * j->osz);
	}
}

/* false when the case is not pool_via_piece's (*rc: an error, else OM_OK) */
static bool pool_via_blocks(om_ctx *c, om_kind *rc)
{
	const om_tensor *X = c->in[0];
	const enum pool_kind kind = kind_of(c);
	*rc = OM_OK;
	if (c->exact || X->dtype != OM_FLOAT || X->rank != 4 || kind == POOL_LP ||
	    (c->nout > 1 && c->out[1]) || !__builtin_cpu_supports("avx512f") ||
	    !om_tensor_numel(X) || !om_tensor_numel(c->out[0]) ||
	    X->dims[2] * X->dims[3] > VIA_FLOATS / VIA_LANES)
		return false;
	om_spatial sp;
	pool3 g;
	if ((*rc = pool_geometry(c, &sp)))
		return true;
	if (kind == POOL_MAX && sp.stride[0] == 1 && sp.stride[1] == 1 && sp.dil[0] == 1 &&
	    sp.dil[1] == 1 && sp.out[1] == sp.in[1]) /* pool_f32's max_plane_s1 */
		return false;
	if ((*rc = pool3_init(c, &sp, &g)))
		return true;
	pool_args pa = {kind, (int)om_attr_int(c->node, "count_include_pad", 0), 0, 2};
	pool_via_job j = {&g, &pa, X->dims[0] * X->dims[1], g.in[1] * g.in[2],
			  g.out[1] * g.out[2], X->data, c->out[0]->data, NULL};
	const int64_t units = (j.planes - 1) / VIA_LANES + 1;
	const int slots = om_par_slots(c->threads, units, 1);
	const size_t bytes = sizeof(float) * (size_t)((j.isz + j.osz) * VIA_LANES) * (size_t)slots;
	if (!(*rc = om_ctx_reserve(c, bytes, "the pool's blocked planes"))) {
		j.buf = malloc(bytes);
		if (j.buf)
			om_par_for_slots(c->threads, units, 1, pool_via_piece, &j);
		else
			*rc = om_error(c->st, OM_ERR_NOMEM, c->node, "the pool's blocked planes");
		free(j.buf);
	}
	free(g.buf);
	return true;
}
#endif

static om_kind pool_kernel(om_ctx *c)
{
	if (c->blocked)
		return pool_blocked(c);
#ifdef POOL_AVX512
	om_kind rc;
	if (pool_via_blocks(c, &rc))
		return rc;
#endif
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, pool_f32, true);
	return pool_f32(c);
}

/* ---- global pools -------------------------------------------------------------------------- */

static om_kind global_infer(om_ctx *c)
{
	om_kind rc = check_input(c, kind_of(c), 2);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	int64_t d[OM_MAX_RANK];
	for (int32_t i = 0; i < X->rank; i++)
		d[i] = i < 2 ? X->dims[i] : 1;
	om_set_shape(c->out[0], X->dtype, X->rank, d);
	if (kind_of(c) == POOL_LP && om_attr_int(c->node, "p", 2) < 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "p must be >= 1");
	return OM_OK;
}

/* Channels [lo, hi) of a global pool (each a sum or maximum of its own, in order) */
typedef struct global_job {
	enum pool_kind kind;
	bool exact;
	int64_t p, S;
	const float *x;
	float *y;
} global_job;

static void global_piece(void *arg, int64_t lo, int64_t hi)
{
	const global_job *g = arg;
	const int64_t S = g->S;
	for (int64_t i = lo; i < hi; i++) {
		const float *x = g->x + i * S;
		if (g->kind == POOL_AVG && !g->exact) { /* partial sums: a running sum waits on
							   each addition (efficientnet_b0's 17
							   pools took 2.7 ms of a 16 ms run) */
			g->y[i] = om_fast_sum_f32(S, x) / (float)S;
			continue;
		}
		float acc = g->kind == POOL_MAX ? -INFINITY : 0;
		for (int64_t j = 0; j < S; j++) {
			float v = x[j];
			if (g->kind == POOL_MAX)
				acc = v > acc || (isnan(v) && !isnan(acc)) ? v : acc;
			else if (g->kind == POOL_AVG)
				acc += v;
			else
				acc += lp_term(v, g->p);
		}
		if (g->kind == POOL_AVG)
			acc /= (float)S;
		else if (g->kind == POOL_LP)
			acc = lp_root(acc, g->p);
		g->y[i] = acc;
	}
}

static om_kind global_f32(om_ctx *c)
{
	om_kind rc = global_infer(c);
	if (rc)
		return rc;
	const om_tensor *X = c->in[0];
	global_job g = {kind_of(c), c->exact, om_attr_int(c->node, "p", 2),
			om_shape_numel(X->rank - 2, X->dims + 2), X->data, c->out[0]->data};
	om_par_for(c->threads, X->dims[0] * X->dims[1], GLOBAL_GRAIN / (g.S + 1) + 1, global_piece,
		   &g);
	return OM_OK;
}

/* GlobalAveragePool and GlobalMaxPool on float32 take X and Y channel-blocked (op.h), each on
 * its own: the pool of each block of channels is a vector of `block` lanes */
static void global_layout(const om_ctx *c, om_layout_req *r)
{
	*r = (om_layout_req){0};
	const om_tensor *X = c->in[0];
	if (c->exact || kind_of(c) == POOL_LP || X->dtype != OM_FLOAT || X->rank != 4)
		return;
	r->may = OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0);
}

/* channel blocks [lo, hi) of a blocked X: the lanes of each block pooled together */
typedef struct global_blk_job {
	enum pool_kind kind;
	int64_t S, C, Cb, b;
	bool bout;
	const float *x;
	float *y;
} global_blk_job;

/* the lanes' sums or maxima over S positions of b <= 16 lanes, ps lanes apart (b and max
 * constants where inlined; four partial results a lane, so that the additions do not wait on
 * each other) */
static inline __attribute__((always_inline)) void blk_pool(bool max, const float *x, int64_t S,
							    int64_t ps, int64_t b, float *acc)
{
	enum { U = 4, L = 16 };
	float part[U][L];
	for (int64_t u = 0; u < U; u++)
		for (int64_t l = 0; l < b; l++)
			part[u][l] = max ? -INFINITY : 0.0f;
	int64_t j = 0;
	for (; j + U <= S; j += U)
		for (int64_t u = 0; u < U; u++)
			for (int64_t l = 0; l < b; l++) {
				const float v = x[(j + u) * ps + l];
				float *a = &part[u][l];
				*a = !max ? *a + v : v > *a || v != v ? v : *a;
			}
	for (; j < S; j++)
		for (int64_t l = 0; l < b; l++) {
			const float v = x[j * ps + l];
			float *a = &part[0][l];
			*a = !max ? *a + v : v > *a || v != v ? v : *a;
		}
	for (int64_t l = 0; l < b; l++) {
		float a = part[0][l];
		for (int64_t u = 1; u < U; u++) {
			const float v = part[u][l];
			a = !max ? a + v : v > a || v != v ? v : a;
		}
		acc[l] = a;
	}
}

/* units [lo, hi): lanes [16 k, 16 k + 16) of block u, k = unit % pieces, u = unit / pieces
 * (cloned: a lane's sum is in the same order in every clone; the baseline's SSE2 kept
 * efficientnet_v2_s's pools of 960 channels at 18x18 at 25 us against ONNX Runtime's 15) */
OM_CLONES static void global_blk_piece(void *arg, int64_t lo, int64_t hi)
{
	enum { L = 16 };
	const global_blk_job *g = arg;
	const int64_t b = g->b, pieces = (b + L - 1) / L;
	const bool max = g->kind == POOL_MAX;
	for (int64_t unit = lo; unit < hi; unit++) {
		const int64_t u = unit / pieces, l0 = unit % pieces * L;
		const int64_t w = b - l0 < L ? b - l0 : L;
		const float *x = g->x + u * g->S * b + l0;
		float acc[L];
		if (w == 16 && !max)
			blk_pool(false, x, g->S, b, 16, acc);
		else if (w == 8 && !max)
			blk_pool(false, x, g->S, b, 8, acc);
		else
			blk_pool(max, x, g->S, b, w, acc);
		const int64_t n = u / g->Cb, ch = u % g->Cb * b + l0;
		for (int64_t l = 0; l < w; l++) {
			const float v = g->kind == POOL_AVG ? acc[l] / (float)g->S : acc[l];
			if (g->bout)
				g->y[u * b + l0 + l] = v;
			else if (ch + l < g->C)
				g->y[n * g->C + ch + l] = v;
		}
	}
}

static om_kind global_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const int64_t C = c->blocked & OM_LAYOUT_OUT(0) ? Y->dims[1] * Y->dims[4] : Y->dims[1];
	if (!(c->blocked & OM_LAYOUT_IN(0))) { /* plain X: pooled plain, then blocked */
		const int64_t N = X->dims[0], Cx = X->dims[1];
		const size_t bytes = sizeof(float) * (size_t)(N * Cx);
		om_kind rc = om_ctx_reserve(c, bytes, "a buffer of pooled values");
		float *t = rc ? NULL : malloc(bytes + 1);
		if (rc || !t)
			return rc ? rc : om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		om_tensor y = *Y;
		om_tensor *out[1] = {&y};
		om_ctx lc = *c;
		lc.out = out, lc.blocked = 0;
		y.data = t, y.nbytes = bytes;
		if (!(rc = global_f32(&lc)))
			om_layout_block_f32(t, N, Cx, 1, Y->dims[4], Y->data);
		free(t);
		return rc;
	}
	global_blk_job g = {kind_of(c), X->dims[2] * X->dims[3], C, X->dims[1], X->dims[4],
			    c->blocked & OM_LAYOUT_OUT(0), X->data, Y->data};
	const int64_t pieces = (g.b + 15) / 16;
	om_par_for(c->threads, X->dims[0] * X->dims[1] * pieces,
		   GLOBAL_GRAIN / (g.S * (g.b < 16 ? g.b : 16) + 1) + 1, global_blk_piece, &g);
	return OM_OK;
}

static om_kind global_kernel(om_ctx *c)
{
	if (c->blocked)
		return global_blocked(c);
	if (c->in[0]->dtype != OM_FLOAT)
		return om_run_as_f32(c, global_f32, true);
	return global_f32(c);
}

/* ---- MaxUnpool ------------------------------------------------------------------------------ */

/* Output shape: output_shape's values when given, else (in - 1) * stride + kernel - pads. */
static om_kind unpool_shape(om_ctx *c, int64_t *d)
{
	const om_tensor *X = c->in[0], *I = c->nin > 1 ? c->in[1] : NULL;
	if (!X || !I || X->rank < 3 || I->rank != X->rank || I->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs X of rank >= 3 and int64 indices of its shape");
	for (int32_t i = 0; i < X->rank; i++)
		if (I->dims[i] != X->dims[i])
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"indices and X differ on axis %d", i);
	int32_t n = X->rank - 2;
	const int64_t *kernel;
	om_spatial sp = {.n = n};
	om_kind rc = om_spatial_kernel_attr(c, n, &kernel);
	if (!rc && !kernel)
		rc = om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "kernel_shape is required");
	if (rc || (rc = om_spatial_strides(c, &sp)))
		return rc;
	int64_t cnt;
	const int64_t *pads = om_attr_ints(c->node, "pads", &cnt);
	if (pads && cnt != 2 * n)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "pads needs %d entries",
				2 * n);
	const om_tensor *os = c->nin > 2 ? c->in[2] : NULL;
	if (os) {
		if ((rc = om_read_ints(c, os, d, OM_MAX_RANK, &cnt)))
			return rc;
		if (cnt != X->rank)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"output_shape has %lld entries for rank %d", (long long)cnt,
					X->rank);
	} else {
		d[0] = X->dims[0], d[1] = X->dims[1];
		for (int32_t i = 0; i < n; i++) {
			int64_t pb = pads ? pads[i] : 0, pe = pads ? pads[i + n] : 0;
			if (pb < 0 || pe < 0 || pb > OM_SP_LIMIT || pe > OM_SP_LIMIT ||
			    X->dims[i + 2] > OM_SP_LIMIT)
				return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
						"pads or extent out of range");
			int64_t in = X->dims[i + 2];
			d[i + 2] = in ? (in - 1) * sp.stride[i] + kernel[i] - pb - pe : 0;
		}
	}
	for (int32_t i = 0; i < X->rank; i++)
		if (d[i] < 0 || d[i] > ((int64_t)1 << 40) || (i < 2 && d[i] != X->dims[i]))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"output extent %lld on axis %d", (long long)d[i], i);
	return OM_OK;
}

static om_kind unpool_infer(om_ctx *c)
{
	int64_t d[OM_MAX_RANK];
	om_kind rc = unpool_shape(c, d);
	if (!rc)
		om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, d);
	return rc;
}

/* Zeros, then every X element moved to the flat output index beside it (any element type). */
static om_kind unpool_kernel(om_ctx *c)
{
	const om_tensor *X = c->in[0], *I = c->in[1];
	om_tensor *Y = c->out[0];
	size_t es = om_dtype_size(X->dtype);
	if (!es || X->dtype == OM_STRING)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "MaxUnpool of %s",
				om_dtype_name(X->dtype));
	memset(Y->data, 0, Y->nbytes);
	const int64_t *idx = I->data;
	int64_t nx = om_tensor_numel(X), ny = om_tensor_numel(Y);
	for (int64_t i = 0; i < nx; i++) {
		if (idx[i] < 0 || idx[i] >= ny)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"index %lld is outside the %lld outputs", (long long)idx[i],
					(long long)ny);
		om_move1((char *)Y->data + (size_t)idx[i] * es,
			 (const char *)X->data + (size_t)i * es, es);
	}
	return OM_OK;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_MaxPool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-22: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v22 = {22, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x1, 0x1,
	attrs_MaxPool_1_v22, NULL};
static const om_sig_attr attrs_MaxPool_1_v10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-10: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v10 = {10, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxPool_1_v10, &sig_MaxPool_1_v22};
static const om_sig_attr attrs_MaxPool_1_v8[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0},
	{"storage_order", OM_ATTR_INT, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxPool-8: X -> Y [Indices] */
static const om_sig sig_MaxPool_1_v8 = {8, 1, 1, 1, 2, 0x0, 0x2, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxPool_1_v8, &sig_MaxPool_1_v10};
static const om_sig_attr attrs_MaxPool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* MaxPool-1: X -> Y */
static const om_sig sig_MaxPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_MaxPool_1,
	&sig_MaxPool_1_v8};
static const om_sig_attr attrs_AveragePool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-22: X -> Y */
static const om_sig sig_AveragePool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_AveragePool_1_v22, NULL};
static const om_sig_attr attrs_AveragePool_1_v19[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"dilations", OM_ATTR_INTS, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-19: X -> Y */
static const om_sig sig_AveragePool_1_v19 = {19, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v19, &sig_AveragePool_1_v22};
static const om_sig_attr attrs_AveragePool_1_v10[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"count_include_pad", OM_ATTR_INT, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* AveragePool-10: X -> Y */
static const om_sig sig_AveragePool_1_v10 = {10, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v10, &sig_AveragePool_1_v19};
static const om_sig_attr attrs_AveragePool_1_v7[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"count_include_pad", OM_ATTR_INT, 0}, {"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* AveragePool-7: X -> Y */
static const om_sig sig_AveragePool_1_v7 = {7, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1_v7, &sig_AveragePool_1_v10};
static const om_sig_attr attrs_AveragePool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0},
	{NULL, 0, 0}};
/* AveragePool-1: X -> Y */
static const om_sig sig_AveragePool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_AveragePool_1, &sig_AveragePool_1_v7};
static const om_sig_attr attrs_LpPool_1_v22[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-22: X -> Y */
static const om_sig sig_LpPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_LpPool_1_v22, NULL};
static const om_sig_attr attrs_LpPool_1_v18[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"ceil_mode", OM_ATTR_INT, 0}, {"dilations", OM_ATTR_INTS, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-18: X -> Y */
static const om_sig sig_LpPool_1_v18 = {18, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LpPool_1_v18, &sig_LpPool_1_v22};
static const om_sig_attr attrs_LpPool_1_v2[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 1}, {"p", OM_ATTR_INT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-2: X -> Y */
static const om_sig sig_LpPool_1_v2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_LpPool_1_v2, &sig_LpPool_1_v18};
static const om_sig_attr attrs_LpPool_1[] = {{"auto_pad", OM_ATTR_STRING, 0},
	{"kernel_shape", OM_ATTR_INTS, 0}, {"p", OM_ATTR_FLOAT, 0}, {"pads", OM_ATTR_INTS, 0},
	{"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* LpPool-1: X -> Y */
static const om_sig sig_LpPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, attrs_LpPool_1,
	&sig_LpPool_1_v2};
/* GlobalMaxPool-22: X -> Y */
static const om_sig sig_GlobalMaxPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1, NULL,
	NULL};
/* GlobalMaxPool-1: X -> Y */
static const om_sig sig_GlobalMaxPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_GlobalMaxPool_1_v22};
/* GlobalAveragePool-22: X -> Y */
static const om_sig sig_GlobalAveragePool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	NULL, NULL};
/* GlobalAveragePool-1: X -> Y */
static const om_sig sig_GlobalAveragePool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0, NULL,
	&sig_GlobalAveragePool_1_v22};
static const om_sig_attr attrs_GlobalLpPool_1_v22[] = {{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-22: X -> Y */
static const om_sig sig_GlobalLpPool_1_v22 = {22, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_GlobalLpPool_1_v22, NULL};
static const om_sig_attr attrs_GlobalLpPool_1_v2[] = {{"p", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-2: X -> Y */
static const om_sig sig_GlobalLpPool_1_v2 = {2, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GlobalLpPool_1_v2, &sig_GlobalLpPool_1_v22};
static const om_sig_attr attrs_GlobalLpPool_1[] = {{"p", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* GlobalLpPool-1: X -> Y */
static const om_sig sig_GlobalLpPool_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_GlobalLpPool_1, &sig_GlobalLpPool_1_v2};
static const om_sig_attr attrs_MaxUnpool_9_v22[] = {{"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxUnpool-22: X I [output_shape] -> output */
static const om_sig sig_MaxUnpool_9_v22 = {22, 2, 3, 1, 1, 0x4, 0x0, 0x1, 0x1, 0x1, 0x1,
	attrs_MaxUnpool_9_v22, NULL};
static const om_sig_attr attrs_MaxUnpool_9[] = {{"kernel_shape", OM_ATTR_INTS, 1},
	{"pads", OM_ATTR_INTS, 0}, {"strides", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* MaxUnpool-9: X I [output_shape] -> output */
static const om_sig sig_MaxUnpool_9 = {9, 2, 3, 1, 1, 0x4, 0x0, 0x1, 0x1, 0x0, 0x0,
	attrs_MaxUnpool_9, &sig_MaxUnpool_9_v22};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"MaxPool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_MaxPool_1,
	 OM_OPC_NONE, pool_layout, POOL_MAX},
	{"AveragePool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_AveragePool_1, OM_OPC_AVERAGE_POOL, pool_layout, POOL_AVG},
	{"LpPool", "", 1, pool_infer, pool_kernel, OM_OP_EXACT | OM_OP_LAYOUT, &sig_LpPool_1,
	 OM_OPC_NONE, NULL, POOL_LP},
	{"GlobalMaxPool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalMaxPool_1, OM_OPC_NONE, global_layout, POOL_MAX},
	{"GlobalAveragePool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalAveragePool_1, OM_OPC_NONE, global_layout, POOL_AVG},
	{"GlobalLpPool", "", 1, global_infer, global_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_GlobalLpPool_1, OM_OPC_NONE, NULL, POOL_LP},
	{"MaxUnpool", "", 9, unpool_infer, unpool_kernel, OM_OP_EXACT | OM_OP_LAYOUT,
	 &sig_MaxUnpool_9, OM_OPC_NONE, NULL, 0},
};

const om_op_table om_ops_pool = OM_TABLE(rows);
