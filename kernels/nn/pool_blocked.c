/* pool_blocked.c — the windowed pools' float32 kernels on channel-blocked tensors (op.h), 16
 * lanes at a time (AVX-512 where the CPU has it; blocks of 8 with AVX2 without it; GCC's
 * vector extension elsewhere), each lane in the plain kernels' order of taps; fast mode's
 * planes through nChw16c (pool_common.h). */
/* -O2 vectorizes only loops of known trip count; the row loops here vary. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "layout.h"
#include "parallel.h"
#include "pool_common.h"

/* The lanes of a blocked pixel are taken 16 at a time (a block of 8 or 16, or 16-lane pieces
 * of NHWC's C lanes, the last one shorter) */
enum { POOL_LANES = 16 };

typedef struct pool_blk_job {
	const pool3 *g;
	const pool_args *pa;
	int64_t b;  /* lanes of a pixel */
	int isa; /* 16: AVX-512's blk_pool16; 8: AVX2's blk_pool8 (blocks of 8); 0: neither */
	const float *x;
	float *y;
} pool_blk_job;

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define POOL_X86 1
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
		const float n = max ? 1.0f : (float)om_pool_window_count(g, pa, o);
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

/* AVX2 without AVX-512: nChw8c's blocks of 8 lanes, as blk_pool16 does 16, NaNs found on the
 * way by a compare for two taps (blk_rows' look first cost as much as the pool). Zen 3, one
 * thread, the 3x3/2 MaxPool after the stem: shufflenet_v2_x0_5's 24 channels at 112x112 0.23
 * -> 0.075 ms, resnet18's 64 0.93 -> 0.55 (the generic window below finds each tap and
 * compares and selects) */
/* blk_pool16's row for b == 8 (`clean` unused: NaNs are found on the way): the maximum by
 * vmaxps in win_vectors' order (a window inside the input: its taps' offsets), a lane with a
 * NaN tap made NaN; AveragePool's sum divided by the window's count */
__attribute__((target("avx2"))) static void blk_pool8(const pool3 *g, const pool_args *pa,
						      const float *x, int64_t oh, int64_t b,
						      bool clean, float *y)
{
	(void)b; /* 8 */
	const bool max = pa->kind == POOL_MAX;
	enum { TAPS = 64 };
	const axis_taps *T = g->t;
	const int64_t KH = g->k[1], KW = g->k[2], W = g->in[2];
	int64_t off[TAPS];
	(void)clean;
	const bool inside = max && KH * KW <= TAPS && T[1].lo[oh] == 0 && T[1].hi[oh] == KH;
	for (int64_t th = 0; inside && th < KH; th++)
		for (int64_t tw = 0; tw < KW; tw++)
			off[th * KW + tw] = (th * g->dil[1] * W + tw * g->dil[2]) * 8;
	for (int64_t ow = 0; ow < g->out[2]; ow++, y += 8) {
		if (inside && T[2].lo[ow] == 0 && T[2].hi[ow] == KW) {
			const float *v = x + (T[1].start[oh] * W + T[2].start[ow]) * 8;
			__m256 acc = _mm256_set1_ps(-INFINITY), nan = _mm256_setzero_ps();
			int64_t t = 0;
			for (; t + 2 <= KH * KW; t += 2) {
				const __m256 a = _mm256_loadu_ps(v + off[t]);
				const __m256 c = _mm256_loadu_ps(v + off[t + 1]);
				acc = _mm256_max_ps(_mm256_max_ps(acc, a), c);
				nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, c, _CMP_UNORD_Q));
			}
			if (t < KH * KW) {
				const __m256 a = _mm256_loadu_ps(v + off[t]);
				acc = _mm256_max_ps(acc, a);
				nan = _mm256_or_ps(nan, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
			}
			_mm256_storeu_ps(y, _mm256_blendv_ps(acc, _mm256_set1_ps(NAN), nan));
			continue;
		}
		__m256 acc = _mm256_set1_ps(max ? -INFINITY : 0.0f), nan = _mm256_setzero_ps();
		for (int64_t th = T[1].lo[oh]; th < T[1].hi[oh]; th++) {
			const float *row = x + (T[1].start[oh] + th * g->dil[1]) * W * 8;
			for (int64_t tw = T[2].lo[ow]; tw < T[2].hi[ow]; tw++) {
				const __m256 t =
					_mm256_loadu_ps(row + (T[2].start[ow] + tw * g->dil[2]) * 8);
				if (!max) {
					acc = _mm256_add_ps(acc, t);
					continue;
				}
				acc = _mm256_max_ps(acc, t);
				nan = _mm256_or_ps(nan, _mm256_cmp_ps(t, t, _CMP_UNORD_Q));
			}
		}
		if (max) {
			_mm256_storeu_ps(y, _mm256_blendv_ps(acc, _mm256_set1_ps(NAN), nan));
		} else {
			const int64_t o[3] = {0, oh, ow};
			const float n = (float)om_pool_window_count(g, pa, o);
			_mm256_storeu_ps(y, _mm256_div_ps(acc, _mm256_set1_ps(n)));
		}
	}
}

/* one ISA's row of a block (blk_pool16, blk_pool8) and its NaN finder */
typedef void (*blk_row_fn)(const pool3 *g, const pool_args *pa, const float *x, int64_t oh,
			   int64_t b, bool clean, float *y);
typedef bool (*blk_nan_fn)(const float *x, int64_t n); /* NULL: the row finds them */

/* Output rows [lo, hi) over the images' blocks of b lanes (x, y: the first block), unit u row
 * u % OH of block u / OH, each by row(). A MaxPool first looks for NaNs in the input rows a few
 * output rows read (about 256 KB, still in cache when pooled): most blocks have none, and
 * vmaxps alone (`clean`) is faster than tracking them, as are passes of 128 lanes, not 64
 * (squeezenet1_0's 3x3/2 ceil_mode MaxPools between 1x1 convs, one thread, on a Zen 4: 96
 * lanes at 109x109 in NHWC 0.17 -> 0.12 ms, 256 at 54x54 0.108 -> 0.094, 512 planes of 27x27
 * through blocks 0.053 -> 0.044) */
static void blk_rows(const pool3 *g, const pool_args *pa, int64_t b, const float *x, float *y,
		     int64_t lo, int64_t hi, blk_row_fn row, blk_nan_fn has_nan_in)
{
	const int64_t OH = g->out[1], OW = g->out[2], plane = g->in[1] * g->in[2] * b;
	const int64_t rowsz = g->in[2] * b;
	const int64_t stride = OH > 1 ? g->t[1].start[1] - g->t[1].start[0] : 1;
	const int64_t chunk = (1 << 16) / (rowsz * (stride > 0 ? stride : 1) + 1) + 1;
	for (int64_t u = lo; u < hi;) {
		const int64_t oh0 = u % OH, left = OH - oh0 < hi - u ? OH - oh0 : hi - u;
		const int64_t n = left < chunk ? left : chunk;
		const float *xb = x + u / OH * plane;
		bool clean = pa->kind != POOL_MAX || !has_nan_in;
		if (!clean) {
			int64_t r0, r1;
			rows_read(g, oh0, oh0 + n, &r0, &r1);
			clean = r1 <= r0 || !has_nan_in(xb + r0 * rowsz, (r1 - r0) * rowsz);
		}
		for (int64_t oh = oh0; oh < oh0 + n; oh++)
			row(g, pa, xb, oh, b, clean, y + (u - oh0 + oh) * OW * b);
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
OM_CLONES static void
pool_blk_piece(void *arg, int64_t lo, int64_t hi)
{
	const pool_blk_job *j = arg;
	const pool3 *g = j->g;
	const int64_t b = j->b, OH = g->out[1], OW = g->out[2];
	const bool max = j->pa->kind == POOL_MAX;
#ifdef POOL_X86
	if (j->isa) {
		blk_rows(g, j->pa, b, j->x, j->y, lo, hi, j->isa == 16 ? blk_pool16 : blk_pool8,
			 j->isa == 16 ? has_nan : NULL);
		return;
	}
#endif
	for (int64_t u = lo; u < hi; u++) {
		const int64_t oh = u % OH;
		const float *x = j->x + u / OH * g->in[1] * g->in[2] * b;
		float *y = j->y + u * OW * b;
		for (int64_t ow = 0; ow < OW; ow++, y += b) {
			const int64_t o[3] = {0, oh, ow};
			const float n = max ? 1.0f : (float)om_pool_window_count(g, j->pa, o);
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
om_kind om_pool_blocked(om_ctx *c)
{
	const om_tensor *X = c->in[0], *Y = c->out[0];
	const int64_t b = X->rank == 5 ? X->dims[4] : 0;
	if (c->blocked != (OM_LAYOUT_IN(0) | OM_LAYOUT_OUT(0)) || b < 1)
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked pool: X and Y");
	om_ctx_chose(c, OM_POOL_BLOCKED);
	const om_tensor lx = om_layout_logical(X, X->dims[1] * b);
	const om_tensor *in[1] = {&lx};
	om_ctx lc = *c;
	lc.in = in, lc.nin = 1;
	om_spatial sp;
	pool3 g;
	om_kind rc = om_pool_geometry(&lc, &sp);
	if (rc || (rc = om_pool3_init(&lc, &sp, &g)))
		return rc;
	if (Y->rank != 5 || Y->dims[0] != X->dims[0] || Y->dims[1] != X->dims[1] ||
	    Y->dims[2] != sp.out[0] || Y->dims[3] != sp.out[1] || Y->dims[4] != b) {
		free(g.buf);
		return om_error(c->st, OM_ERR_INTERNAL, c->node, "blocked pool: Y's shape");
	}
	pool_args pa = {om_pool_kind(c), (int)om_attr_int(c->node, "count_include_pad", 0), 0,
			2};
	pool_blk_job j = {&g, &pa, b, 0, X->data, Y->data};
#ifdef POOL_X86
	j.isa = __builtin_cpu_supports("avx512f")		 ? 16
		: b == 8 && __builtin_cpu_supports("avx2") ? 8
							   : 0;
#endif
	const int64_t elems = (g.in[1] * g.in[2] / (g.out[1] + 1) + g.out[2]) * b;
	om_par_for(c->threads, X->dims[0] * X->dims[1] * g.out[1],
		   POOL_GRAIN / (elems + 1) + 1, pool_blk_piece, &j);
	free(g.buf);
	return OM_OK;
}

#ifdef POOL_X86
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
		blk_rows(g, j->pa, VIA_LANES, xb, yb, 0, g->out[1], blk_pool16, has_nan);
		om_layout_unblock_f32(yb, 1, np, j->osz, VIA_LANES, j->y + p0 * j->osz);
	}
}

/* false when the case is not pool_via_piece's (*rc: an error, else OM_OK) */
bool om_pool_via_takes(const om_ctx *c, const om_spatial *sp)
{
	const om_tensor *X = c->in[0];
	if (c->exact || X->dtype != OM_FLOAT || X->rank != 4 || om_pool_kind(c) == POOL_LP ||
	    (c->nout > 1 && c->out[1]) || !__builtin_cpu_supports("avx512f") ||
	    !om_tensor_numel(X) || !om_tensor_numel(c->out[0]) ||
	    X->dims[2] * X->dims[3] > VIA_FLOATS / VIA_LANES)
		return false;
	/* the plain kernels' max_plane_s1 stays */
	return !sp || om_pool_plain_path(c, sp) != POOL_PATH_MAX_PLANE;
}

bool om_pool_via_blocks(om_ctx *c, om_kind *rc)
{
	const om_tensor *X = c->in[0];
	const enum pool_kind kind = om_pool_kind(c);
	*rc = OM_OK;
	if (!om_pool_via_takes(c, NULL))
		return false;
	om_spatial sp;
	pool3 g;
	if ((*rc = om_pool_geometry(c, &sp)))
		return true;
	if (!om_pool_via_takes(c, &sp))
		return false;
	if ((*rc = om_pool3_init(c, &sp, &g)))
		return true;
	om_ctx_chose(c, OM_POOL_VIA);
	pool_args pa = {kind, (int)om_attr_int(c->node, "count_include_pad", 0), 0, 2};
	pool_via_job j = {&g, &pa, X->dims[0] * X->dims[1], g.in[1] * g.in[2],
			  g.out[1] * g.out[2], X->data, c->out[0]->data, NULL};
	const int64_t units = (j.planes - 1) / VIA_LANES + 1;
	const int slots = om_par_slots(c->threads, units, 1);
	const size_t bytes = sizeof(float) * (size_t)((j.isz + j.osz) * VIA_LANES) * (size_t)slots;
	if (!(*rc = om_ctx_scratch(c, bytes, "the pool's blocked planes", (void **)&j.buf))) {
		om_par_for_slots(c->threads, units, 1, pool_via_piece, &j);
		om_ctx_scratch_done(c, j.buf);
	}
	free(g.buf);
	return true;
}
#else
bool om_pool_via_takes(const om_ctx *c, const om_spatial *sp)
{
	(void)c, (void)sp;
	return false;
}

bool om_pool_via_blocks(om_ctx *c, om_kind *rc)
{
	(void)c;
	*rc = OM_OK;
	return false;
}
#endif
