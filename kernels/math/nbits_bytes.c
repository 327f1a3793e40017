/* nbits_bytes.c — MatMulNBits' decoding product at accuracy_level 4 for 8-bit codes (fast
 * mode, at most OM_NBITS_DECODE_ROWS rows of A, no g_idx). A is quantized per block of W's rows
 * to 15 bits as in nbits_vnni.c (om_nb_q15_block_avx2: sa = max|a| / 16383, codes
 * round-half-even); y = sum over blocks sa sw (dot - zp sum(qa)), the zero points' term from
 * the block's integer code sum of A. A block's products with a column's codes are exact in
 * int32 lanes (at most bs x 16383 x 255: blocks of up to 512 codes), then scaled in float:
 * - with AVX512-VNNI, each code of A split as 128 hi + lo (both signed bytes, as in
 *   nbits_vnni.c), W's bytes taken as they are by vpdpbusd: 64 codes two instructions; each
 *   piece's 16 lanes (or a block's, past 64 codes) go to float scaled lane by lane, 4 columns
 *   side by side, columns 8 ahead prefetched;
 * - on AVX2, A kept as int16 and W's codes widened (vpmovzxbw) for vpmaddwd: 16 codes an
 *   instruction, 8 blocks' lane sums to float at a time, each scaled once.
 * The two sum in different orders (the same integers, different float roundings). The columns
 * split over the threads; the rows' A codes stay in L1 while a column's bytes stream (a
 * [2048 -> 4096] product reads 8 MB a token). */
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NB8_HAVE 1
#define NB8_TARGET __attribute__((target("avx2,fma")))
#define NB8V_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define NB8_HAVE 0
#endif

enum {
	NB8_MAX_BLOCK = 512, /* bs x 16383 x 255 below 2^31 */
	NB8V_PF = 8,         /* columns ahead prefetched (VNNI): lm_head [1024 -> 32000], 1 thread,
			      * 2.3 -> 1.4 ms (4: 1.6, 16: 1.4) */
};

typedef struct nb8_job {
	const om_nbits *p;
	int64_t kp;       /* K rounded up to whole blocks, then to 64: a row of qa */
	int64_t kbp;      /* kb rounded up to 16: a row of sa and xs */
	const int16_t *qa; /* A's codes [M][kp] (0 past K); with VNNI lo then hi bytes [M][2][kp] */
	const float *sa;   /* a block's scale [M][kbp] (0 past kb) */
	const float *xs;   /* sa sum(qa) a block [M][kbp] (0 past kb) */
} nb8_job;

static bool nb8_cpu(void)
{
#if NB8_HAVE
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return false;
#endif
}

bool om_nbits_bytes_ok(const om_nbits *p)
{
	return p->bits == 8 && !p->gidx && p->bs <= NB8_MAX_BLOCK &&
	       p->M <= OM_NBITS_DECODE_ROWS && nb8_cpu();
}

size_t om_nbits_bytes_bytes(const om_nbits *p)
{
	const int64_t kp = (p->kb * p->bs + 63) / 64 * 64, kbp = (p->kb + 15) / 16 * 16;
	return (size_t)p->M * ((size_t)kp * sizeof(int16_t) + 2 * (size_t)kbp * sizeof(float)) +
	       64;
}

#if NB8_HAVE
/* row a's block [k0, k1) into codes q (then zeros up to k0 + bs), its scale and sa sum(q);
 * false for an infinity or a NaN */
static NB8_TARGET bool nb8_quant(const float *a, int64_t k0, int64_t k1, int64_t bs, int16_t *q,
				 float *scale, float *xs)
{
	float inv;
	if (!om_nb_q15_block_avx2(a, k0, k1, &inv, scale))
		return false;
	const __m256 vinv = _mm256_set1_ps(inv);
	__m256i vs = _mm256_setzero_si256();
	int64_t k = k0;
	for (; k + 8 <= k1; k += 8) {
		const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(a + k), vinv));
		vs = _mm256_add_epi32(vs, c);
		const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(c),
						  _mm256_extracti128_si256(c, 1));
		_mm_storeu_si128((__m128i *)(q + (k - k0)), w);
	}
	int32_t sum = om_nb_hsum8(vs);
	for (; k < k1; k++) {
		const int32_t c = (int32_t)rintf(a[k] * inv); /* |c| <= 16383: a finite block */
		q[k - k0] = (int16_t)c;
		sum += c;
	}
	memset(q + (k1 - k0), 0, sizeof(int16_t) * (size_t)(bs - (k1 - k0)));
	*xs = *scale * (float)sum;
	return true;
}

/* the 8 lane sums of a block's products of column codes c with codes q (bs of each, bs a
 * multiple of 16) */
static inline __attribute__((always_inline)) NB8_TARGET __m256i nb8_dot(const uint8_t *c,
									   const int16_t *q,
									   int64_t bs)
{
	__m256i acc = _mm256_madd_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)c)),
					_mm256_loadu_si256((const __m256i *)q));
	for (int64_t k = 16; k < bs; k += 16) {
		const __m256i w = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(c + k)));
		acc = _mm256_add_epi32(acc, _mm256_madd_epi16(w, _mm256_loadu_si256(
									 (const __m256i *)(q + k))));
	}
	return acc;
}

/* blocks [b0, b0 + 8) of column n's zero points as floats (b0 + 8 <= kb) */
static inline __attribute__((always_inline)) NB8_TARGET __m256 nb8_zp8(const om_nbits *p,
								       int64_t n, int64_t b0)
{
	if (p->zpf)
		return _mm256_loadu_ps(p->zpf + n * p->kb + b0);
	if (!p->zp8)
		return _mm256_set1_ps(128.0f);
	const __m128i z = _mm_loadl_epi64((const __m128i *)(p->zp8 + n * p->zp_row + b0));
	return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(z));
}

/* column n's last group of 8 blocks: scales and zero points, zeros past kb */
static inline void nb8_last(const om_nbits *p, int64_t n, float swt[8], float zpt[8])
{
	const int64_t whole = p->kb / 8 * 8;
	for (int i = 0; i < 8; i++) {
		const bool in = whole + i < p->kb;
		swt[i] = in ? p->scales[n * p->kb + whole + i] : 0;
		zpt[i] = in ? om_nbits_zero(p, n, whole + i) : 0;
	}
}

/* y + the float terms of blocks [b0, b0 + 8) of row m and column n, d their products' lanes:
 * sa sw dot - sa sum(qa) sw zp */
static inline __attribute__((always_inline)) NB8_TARGET __m256
nb8_scaled(const nb8_job *j, int64_t n, int64_t m, int64_t b0, const __m256i d[8],
	   const float swt[8], const float zpt[8], __m256 y)
{
	const om_nbits *p = j->p;
	const bool full = b0 + 8 <= p->kb;
	const __m256 s = _mm256_loadu_ps(full ? p->scales + n * p->kb + b0 : swt);
	const __m256 z = full ? nb8_zp8(p, n, b0) : _mm256_loadu_ps(zpt);
	const float *sa = j->sa + m * j->kbp + b0, *xs = j->xs + m * j->kbp + b0;
	y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(om_nb_sums8(d)),
			    _mm256_mul_ps(_mm256_loadu_ps(sa), s), y);
	return _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(xs), s), z, y);
}

/* Y[m][n]: the sum of y's lanes, + bias */
static inline __attribute__((always_inline)) NB8_TARGET void nb8_put(const om_nbits *p, int64_t m,
								     int64_t n, __m256 y)
{
	__m128 t = _mm_add_ps(_mm256_castps256_ps128(y), _mm256_extractf128_ps(y, 1));
	t = _mm_add_ps(t, _mm_movehl_ps(t, t));
	t = _mm_add_ss(t, _mm_movehdup_ps(t));
	p->y[m * p->N + n] = _mm_cvtss_f32(t) + (p->bias ? p->bias[n] : 0.0f);
}

/* columns [lo, hi) of Y for every row: 8 blocks at a time, each block's sum scaled once
 * (AVX2: A as int16) */
static NB8_TARGET void nb8_columns_avx2(void *arg, int64_t lo, int64_t hi)
{
	const nb8_job *j = arg;
	const om_nbits *p = j->p;
	const int64_t kb = p->kb, bs = p->bs;
	for (int64_t n = lo; n < hi; n++) {
		const uint8_t *col = p->b + n * kb * bs;
		float swt[8], zpt[8];
		nb8_last(p, n, swt, zpt);
		for (int64_t m = 0; m < p->M; m++) {
			const int16_t *q = j->qa + m * j->kp;
			__m256 y = _mm256_setzero_ps();
			for (int64_t b0 = 0; b0 < kb; b0 += 8) {
				__m256i d[8];
				for (int64_t i = 0; i < 8; i++)
					d[i] = b0 + i < kb ? nb8_dot(col + (b0 + i) * bs,
								     q + (b0 + i) * bs, bs)
							   : _mm256_setzero_si256();
				y = nb8_scaled(j, n, m, b0, d, swt, zpt, y);
			}
			nb8_put(p, m, n, y);
		}
	}
}

/* AVX512-VNNI: a column's bytes in pieces of 64 (16 int32 lanes of 4 codes), A's codes as lo
 * and hi bytes; a piece's lanes (or, for blocks past 64 codes, up to 8 pieces' of one block)
 * go to float and are scaled lane by lane by their block's sa sw (vpermps from the 16 blocks'
 * products), summed in float lanes, the zero points' term 16 blocks at a time; C columns side
 * by side share A's loads. Column n's bytes [off, off + 64) of at most len. */
static inline __attribute__((always_inline)) NB8V_TARGET __m512i nb8v_w(const uint8_t *col,
									  int64_t off, int64_t len)
{
	if (off + 64 <= len)
		return _mm512_loadu_si512(col + off);
	return _mm512_maskz_loadu_epi8(~0ULL >> (64 - (len - off)), col + off);
}

/* lo + 128 hi products of w with A's bytes, added to l and h */
#define NB8V_DOT(l, h, w, alo, ahi) \
	((l) = _mm512_dpbusd_epi32((l), (w), (alo)), (h) = _mm512_dpbusd_epi32((h), (w), (ahi)))

static inline __attribute__((always_inline)) NB8V_TARGET __m512 nb8v_lanes(__m512i l, __m512i h)
{
	return _mm512_cvtepi32_ps(_mm512_add_epi32(l, _mm512_slli_epi32(h, 7)));
}

/* blocks [g, g + 16) of column n's zero points as floats, 0 past kb */
static inline __attribute__((always_inline)) NB8V_TARGET __m512 nb8v_zp16(const om_nbits *p,
									   int64_t n, int64_t g,
									   __mmask16 in)
{
	if (p->zpf)
		return _mm512_maskz_loadu_ps(in, p->zpf + n * p->kb + g);
	if (!p->zp8)
		return _mm512_set1_ps(128.0f);
	const __m128i z = _mm_maskz_loadu_epi8(in, p->zp8 + n * p->zp_row + g);
	return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(z));
}

static inline __attribute__((always_inline)) NB8V_TARGET void
nb8v_group(const nb8_job *j, int64_t n, int64_t m, const int C)
{
	const om_nbits *p = j->p;
	const int64_t kb = p->kb, bs = p->bs, len = kb * bs;
	const int8_t *lo = (const int8_t *)(j->qa + m * j->kp), *hi = lo + j->kp;
	const float *sa = j->sa + m * j->kbp, *xs = j->xs + m * j->kbp;
	const uint8_t *col[4];
	__m512 acc[4];
	for (int c = 0; c < C; c++)
		col[c] = p->b + (n + c) * len, acc[c] = _mm512_setzero_ps();
	/* lane l of a piece of blocks of at most 64 codes: block 4l / bs of the piece's first */
	const __m512i lane = _mm512_srli_epi32(
		_mm512_slli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
						   0), 2),
		(unsigned)__builtin_ctzll((unsigned long long)bs));
	for (int64_t g = 0; g < kb; g += 16) {
		const __mmask16 in = (__mmask16)(kb - g >= 16 ? 0xffff : (1u << (kb - g)) - 1);
		const __m512 vsa = _mm512_loadu_ps(sa + g), vxs = _mm512_loadu_ps(xs + g);
		__m512 v[4];
		for (int c = 0; c < C; c++) {
			const __m512 sw = _mm512_maskz_loadu_ps(in, p->scales + (n + c) * kb + g);
			v[c] = _mm512_mul_ps(vsa, sw);
			/* - sa sum(qa) sw zp */
			acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(vxs, sw), nb8v_zp16(p, n + c, g, in),
						  acc[c]);
		}
		const int64_t end = (g + 16 < kb ? g + 16 : kb) * bs;
		if (bs <= 64) {
			__m512i idx = lane;
			const __m512i step = _mm512_set1_epi32((int)(64 / bs));
			for (int64_t off = g * bs; off < end; off += 64) {
				const __m512i alo = _mm512_loadu_si512(lo + off);
				const __m512i ahi = _mm512_loadu_si512(hi + off);
				for (int c = 0; c < C; c++) {
					_mm_prefetch((const char *)col[c] + off + NB8V_PF * len, _MM_HINT_T0);
					__m512i l = _mm512_setzero_si512(), h = l;
					NB8V_DOT(l, h, nb8v_w(col[c], off, len), alo, ahi);
					acc[c] = _mm512_fmadd_ps(nb8v_lanes(l, h),
								 _mm512_permutexvar_ps(idx, v[c]), acc[c]);
				}
				idx = _mm512_add_epi32(idx, step);
			}
			continue;
		}
		/* blocks past 64 codes: int32 sums over up to 8 pieces (512 codes: exact) */
		for (int64_t off = g * bs; off < end; off += 512 < bs ? 512 : bs) {
			const int64_t stop = off + (512 < bs ? 512 : bs);
			__m512i l[4], h[4];
			for (int c = 0; c < C; c++)
				l[c] = h[c] = _mm512_setzero_si512();
			for (int64_t o = off; o < stop; o += 64) {
				const __m512i alo = _mm512_loadu_si512(lo + o);
				const __m512i ahi = _mm512_loadu_si512(hi + o);
				for (int c = 0; c < C; c++) {
					_mm_prefetch((const char *)col[c] + o + NB8V_PF * len, _MM_HINT_T0);
					NB8V_DOT(l[c], h[c], _mm512_loadu_si512(col[c] + o), alo, ahi);
				}
			}
			const __m512i idx = _mm512_set1_epi32((int)(off / bs - g));
			for (int c = 0; c < C; c++)
				acc[c] = _mm512_fmadd_ps(nb8v_lanes(l[c], h[c]),
							 _mm512_permutexvar_ps(idx, v[c]), acc[c]);
		}
	}
	for (int c = 0; c < C; c++)
		p->y[m * p->N + n + c] = _mm512_reduce_add_ps(acc[c]) + (p->bias ? p->bias[n + c] : 0.0f);
}

/* columns [lo, hi) of Y for every row, 4 at a time */
static NB8V_TARGET void nb8_columns_vnni(void *arg, int64_t lo, int64_t hi)
{
	const nb8_job *j = arg;
	for (int64_t m = 0; m < j->p->M; m++) {
		int64_t n = lo;
		for (; n + 4 <= hi; n += 4)
			nb8v_group(j, n, m, 4);
		for (; n < hi; n++)
			nb8v_group(j, n, m, 1);
	}
}
#endif

#if NB8_HAVE
/* codes q (n, a multiple of 16) as lo = q mod 128 and hi = (q - lo) / 128 bytes */
static NB8_TARGET void nb8_split(const int16_t *q, int64_t n, int8_t *lo, int8_t *hi)
{
	for (int64_t k = 0; k < n; k += 16) {
		const __m256i v = _mm256_loadu_si256((const __m256i *)(q + k));
		const __m256i lh = _mm256_permute4x64_epi64(
			_mm256_packs_epi16(_mm256_and_si256(v, _mm256_set1_epi16(127)),
					   _mm256_srai_epi16(v, 7)),
			0xd8);
		_mm_storeu_si128((__m128i *)(lo + k), _mm256_castsi256_si128(lh));
		_mm_storeu_si128((__m128i *)(hi + k), _mm256_extracti128_si256(lh, 1));
	}
}
#endif

bool om_nbits_bytes_on(const om_nbits *p, int threads, void *buf, bool vnni)
{
#if NB8_HAVE
	if (!om_nbits_bytes_ok(p) || p->M < 1 || p->bs % 16 || (vnni && !om_nbits_vnni_cpu()))
		return false;
	const int64_t kp = (p->kb * p->bs + 63) / 64 * 64, kbp = (p->kb + 15) / 16 * 16;
	int16_t *qa = (int16_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
	float *sa = (float *)(qa + p->M * kp), *xs = sa + p->M * kbp;
	memset(sa, 0, 2 * sizeof(float) * (size_t)(p->M * kbp));
	int16_t block[NB8_MAX_BLOCK];
	for (int64_t m = 0; m < p->M; m++) {
		int16_t *q = qa + m * kp;
		int8_t *lo = (int8_t *)q, *hi = lo + kp;
		if (vnni) /* zeros past the last block: whole pieces of 64 */
			memset(lo + p->kb * p->bs, 0, (size_t)(kp - p->kb * p->bs)),
				memset(hi + p->kb * p->bs, 0, (size_t)(kp - p->kb * p->bs));
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			if (!nb8_quant(p->a + m * p->K, k0, k1, p->bs, vnni ? block : q + k0,
				       &sa[m * kbp + b], &xs[m * kbp + b]))
				return false;
			if (vnni)
				nb8_split(block, p->bs, lo + k0, hi + k0);
		}
	}
	const nb8_job j = {p, kp, kbp, qa, sa, xs};
	/* columns of ~2^16 multiply-adds a piece (as nbits_vnni.c's) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, vnni ? nb8_columns_vnni : nb8_columns_avx2, (void *)&j);
	return true;
#else
	(void)p, (void)threads, (void)buf, (void)vnni;
	return false;
#endif
}

bool om_nbits_bytes(const om_nbits *p, int threads, void *buf)
{
	return om_nbits_bytes_on(p, threads, buf, om_nbits_vnni_cpu());
}
