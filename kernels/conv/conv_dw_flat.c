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

void om_dw_phase_range(int64_t s, int64_t q, int64_t pad, int64_t extent, int64_t count,
		       int64_t *lo, int64_t *hi)
{
	const int64_t first = pad - q; /* b * s >= first */
	const int64_t last = extent - 1 + pad - q; /* b * s <= last */
	int64_t l = first > 0 ? (first + s - 1) / s : 0, h = last < 0 ? 0 : last / s + 1;
	h = h > count ? count : h;
	*lo = l > h ? h : l;
	*hi = h;
}

/* the row copies below as plain loops, not memcpy calls: the rows are short */
#if defined(__GNUC__) && !defined(__clang__)
#define DW_NO_MEMCPY __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define DW_NO_MEMCPY
#endif

/* the channel's float values into the phase planes (the padding is never written) */
DW_NO_MEMCPY OM_CLONES_AVX2 static void fill_phases(const om_dw_plane *p, const om_dw_flat *f,
						     const float *xc, float *restrict xq)
{
	OM_DW_PHASE_ROWS(p, f, {
		const float *s = xc + src;
		float *restrict d = xq + dst;
		if (p->sw == 1)
			for (int64_t b = b0; b < b1; b++)
				d[b] = s[b];
		else if (p->sw == 2) /* a constant stride vectorizes */
			for (int64_t b = b0; b < b1; b++)
				d[b] = s[b * 2];
		else
			for (int64_t b = b0; b < b1; b++)
				d[b] = s[b * p->sw];
	})
}

/* one phase row: d[b] = the 8-bit value (of type T) at s[b * sw] less z for b in [b0, b1),
 * exact */
#define Q8_ROW(T, SW)                                                  \
	for (int64_t b = b0; b < b1; b++)                              \
		d[b] = (float)((const T *)s)[b * (SW)] - z;

DW_NO_MEMCPY static void q8_row(const uint8_t *s, int64_t sw, int64_t b0, int64_t b1, bool sgn,
				float z, float *restrict d)
{
	if (sgn)
		Q8_ROW(int8_t, sw)
	else
		Q8_ROW(uint8_t, sw)
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* q8_row for strides 1 and 2 on AVX2, 8 values a vector, the last overlapping the ones before;
 * avail: the bytes readable from s on. Returns false, having written nothing, where it does
 * not take the row (other strides, fewer than 8 values, or the end of the plane) */
__attribute__((target("avx2"))) static bool q8_row_avx2(const uint8_t *s, int64_t sw,
							 int64_t b0, int64_t b1, bool sgn, float z,
							 int64_t avail, float *restrict d)
{
	/* a vector reads 8 bytes at stride 1, 16 at stride 2 (the odd ones dropped) */
	if (b1 - b0 < 8 || (sw != 1 && sw != 2) || (b1 - 8) * sw + 8 * sw > avail)
		return false;
	const __m256 zv = _mm256_set1_ps(z);
	const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1,
					   -1);
	for (int64_t b = b0;; b += 8) {
		const bool last = b + 8 >= b1;
		if (last)
			b = b1 - 8;
		const __m128i v = sw == 1 ? _mm_loadl_epi64((const __m128i *)(s + b))
					  : _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(s + 2 * b)),
							     even);
		const __m256i w = sgn ? _mm256_cvtepi8_epi32(v) : _mm256_cvtepu8_epi32(v);
		_mm256_storeu_ps(d + b, _mm256_sub_ps(_mm256_cvtepi32_ps(w), zv));
		if (last)
			return true;
	}
}
#endif

/* q8_row_avx2 where avx2 (the CPU has it); false, nothing written, where it does not run */
static bool q8_row_fast(bool avx2, const uint8_t *s, int64_t sw, int64_t b0, int64_t b1,
			bool sgn, float z, int64_t avail, float *restrict d)
{
#if defined(__x86_64__) && defined(__GNUC__)
	return avx2 && q8_row_avx2(s, sw, b0, b1, sgn, z, avail, d);
#else
	(void)avx2, (void)s, (void)sw, (void)b0, (void)b1, (void)sgn, (void)z, (void)avail, (void)d;
	return false;
#endif
}

/* fill_phases for the 8-bit channel xc (int8 when sgn) less z, straight from its bytes */
static void fill_phases_q8(const om_dw_plane *p, const om_dw_flat *f, const uint8_t *xc,
			   bool sgn, float z, float *restrict xq)
{
#if defined(__x86_64__) && defined(__GNUC__)
	const bool avx2 = __builtin_cpu_supports("avx2");
#else
	const bool avx2 = false;
#endif
	const uint8_t *const end = xc + p->H * p->W;
	OM_DW_PHASE_ROWS(p, f, {
		const uint8_t *s = xc + src;
		if (!q8_row_fast(avx2, s, p->sw, b0, b1, sgn, z, end - s, xq + dst))
			q8_row(s, p->sw, b0, b1, sgn, z, xq + dst);
	})
}

/* The tap loop for a vector type VT of L lanes: yw[k] = ((+0 + w[0] xq[k + tap[0]]) +
 * w[1] xq[k + tap[1]]) + ... for k < nyw, RUN outputs (RUN / L accumulators) a pass; the
 * weights broadcast once into wv, TAPS_PASS taps at a time, a pass of taps adding to the sums
 * of the ones before in order (the tap loop unrolls for 9 and 25 taps) */
#define FLAT_TAPS(NAME, ATTR, VT, L)                                                         \
	OM_INLINE void NAME##_n(const float *xq, const int64_t *tap, const VT *wv,            \
				int64_t nt, int64_t nyw, bool add, float *restrict yw)        \
	{                                                                                     \
		for (int64_t k = 0; k < nyw; k += RUN) {                                      \
			VT a[RUN / L];                                                        \
			for (int u = 0; u < RUN / L; u++)                                     \
				if (add)                                                      \
					memcpy(&a[u], yw + k + u * L, sizeof a[u]);           \
				else                                                          \
					a[u] = (VT){0};                                       \
			for (int64_t t = 0; t < nt; t++)                                      \
				for (int u = 0; u < RUN / L; u++) {                           \
					VT v;                                                 \
					memcpy(&v, xq + tap[t] + k + u * L, sizeof v);        \
					a[u] = a[u] + wv[t] * v;                              \
				}                                                             \
			memcpy(yw + k, a, sizeof a);                                          \
		}                                                                             \
	}                                                                                     \
	ATTR static void NAME(const float *xq, const int64_t *tap, const float *w,            \
			      int64_t ntaps, int64_t nyw, float *restrict yw)                 \
	{                                                                                     \
		VT wv[TAPS_PASS];                                                             \
		for (int64_t t0 = 0; t0 < ntaps; t0 += TAPS_PASS) {                           \
			const int64_t nt = ntaps - t0 < TAPS_PASS ? ntaps - t0 : TAPS_PASS;   \
			for (int64_t t = 0; t < nt; t++)                                      \
				for (int l = 0; l < L; l++)                                   \
					wv[t][l] = w[t0 + t];                                 \
			if (nt == 9)                                                          \
				NAME##_n(xq, tap + t0, wv, 9, nyw, t0 > 0, yw);               \
			else if (nt == 25)                                                    \
				NAME##_n(xq, tap + t0, wv, 25, nyw, t0 > 0, yw);              \
			else                                                                  \
				NAME##_n(xq, tap + t0, wv, nt, nyw, t0 > 0, yw);              \
		}                                                                             \
	}

enum { TAPS_PASS = 32 };

/* 16 lanes in the AVX-512 and default clones; 8 in the AVX2 one, whose 16-lane vectors GCC
 * kept on the stack (4x slower); the lanes' sums are the same either way */
typedef float vf8 __attribute__((vector_size(8 * sizeof(float))));
FLAT_TAPS(flat_taps16, OM_CLONES, vf, LANES)
#ifdef OM_HAVE_AVX2_BUILDS
FLAT_TAPS(flat_taps8, __attribute__((target("avx2"))), vf8, 8)
#endif

/* The tap loop of integer sums that stay below 2^24 (om_dw_flat_sums_q8): every order of the
 * additions and every contraction gives the same bits there, so it keeps 8 accumulators of
 * fused multiply-adds (a multiply-add's latency times the two units) and reads each weight
 * as it goes; the ones left of a run of 8 vectors go 2 at a time (nyw: whole RUNs) */
#define FLAT_TAPS_INT(NAME, ATTR, VT, L)                                                     \
	OM_INLINE void NAME##_blk(const float *xq, const int64_t *tap, const float *w,        \
				  int64_t nt, int64_t k, int na, float *restrict yw)          \
	{                                                                                     \
		VT a[8];                                                                      \
		for (int u = 0; u < na; u++)                                                  \
			a[u] = (VT){0};                                                       \
		for (int64_t t = 0; t < nt; t++) {                                            \
			const VT wt = (VT){0} + w[t];                                         \
			for (int u = 0; u < na; u++) {                                        \
				VT v;                                                         \
				memcpy(&v, xq + tap[t] + k + u * L, sizeof v);                \
				a[u] += wt * v;                                               \
			}                                                                     \
		}                                                                             \
		for (int u = 0; u < na; u++) {                                                \
			typedef VT VTU __attribute__((aligned(4), may_alias));                \
			*(VTU *)(yw + k + u * L) = a[u];                                      \
		}                                                                             \
	}                                                                                     \
	ATTR DW_CONTRACT static void NAME(                                                    \
		const float *xq, const int64_t *tap, const float *w, int64_t ntaps,           \
		int64_t nyw, float *restrict yw)                                              \
	{                                                                                     \
		int64_t k = 0;                                                                \
		for (; k + 8 * L <= nyw; k += 8 * L)                                          \
			NAME##_blk(xq, tap, w, ntaps, k, 8, yw);                              \
		for (; k < nyw; k += 2 * L)                                                   \
			NAME##_blk(xq, tap, w, ntaps, k, 2, yw);                              \
	}

/* GCC contracts the sums into fused multiply-adds where asked (clang does by default) */
#if defined(__GNUC__) && !defined(__clang__)
#define DW_CONTRACT __attribute__((optimize("fp-contract=fast")))
#else
#define DW_CONTRACT
#endif

FLAT_TAPS_INT(flat_taps_int16, OM_CLONES_V3, vf, LANES)
#ifdef OM_HAVE_AVX2_BUILDS
FLAT_TAPS_INT(flat_taps_int8, __attribute__((target("avx2,fma"))), vf8, 8)
#endif

static void flat_taps_int(const float *xq, const int64_t *tap, const float *w, int64_t ntaps,
			  int64_t nyw, float *restrict yw)
{
#ifdef OM_HAVE_AVX2_BUILDS
	if (om_cpu_avx2_only()) {
		flat_taps_int8(xq, tap, w, ntaps, nyw, yw);
		return;
	}
#endif
	flat_taps_int16(xq, tap, w, ntaps, nyw, yw);
}

static void flat_taps(const float *xq, const int64_t *tap, const float *w, int64_t ntaps,
		      int64_t nyw, float *restrict yw)
{
#ifdef OM_HAVE_AVX2_BUILDS
	if (om_cpu_avx2_only()) {
		flat_taps8(xq, tap, w, ntaps, nyw, yw);
		return;
	}
#endif
	flat_taps16(xq, tap, w, ntaps, nyw, yw);
}

DW_NO_MEMCPY static void compact(int64_t OH, int64_t OW, int64_t Wq,
				 const float *restrict yw, float *restrict ym)
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

void om_dw_flat_sums_q8(const om_dw_plane *p, const om_dw_flat *f, const int64_t *tap,
			const void *xc, bool sgn, int32_t xz, const float *w, float *xq, float *yw)
{
	fill_phases_q8(p, f, xc, sgn, (float)xz, xq);
	flat_taps_int(xq, tap, w, p->kh * p->kw, f->nyw, yw);
}

void om_dw_flat_compact_u8(const om_dw_plane *p, const om_dw_flat *f, const uint8_t *t,
			   uint8_t *y)
{
	for (int64_t oh = 0; oh < p->OH; oh++)
		memcpy(y + oh * p->OW, t + oh * f->Wq, (size_t)p->OW);
}

om_dw_plane om_dw_plane_of(const om_spatial *sp)
{
	const int32_t a = sp->n - 2; /* -1 for 1-D */
	om_dw_plane p = {1, sp->in[sp->n - 1], 1, sp->out[sp->n - 1], 1, sp->k[sp->n - 1], 1,
			 sp->stride[sp->n - 1], 1, sp->dil[sp->n - 1], 0, sp->pb[sp->n - 1]};
	if (a == 0) {
		p.H = sp->in[0], p.OH = sp->out[0], p.kh = sp->k[0];
		p.sh = sp->stride[0], p.dh = sp->dil[0], p.ph = sp->pb[0];
	}
	return p;
}
