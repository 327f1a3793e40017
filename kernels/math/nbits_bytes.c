/* nbits_bytes.c — MatMulNBits' decoding product at accuracy_level 4 for 8-bit codes on AVX2
 * (fast mode, at most OM_NBITS_DECODE_ROWS rows of A, no g_idx). A is quantized per block of
 * W's rows to 15 bits as in nbits_vnni.c (om_nb_q15_block_avx2: sa = max|a| / 16383, codes
 * round-half-even) and kept as int16; a column's codes are widened to int16 (vpmovzxbw) and
 * multiplied with A's by vpmaddwd, 16 products an instruction into 8 int32 lanes, a block's
 * sum exact in int32 (at most bs x 16383 x 255: blocks of up to 512 codes); 8 blocks' sums
 * at a time go to float, each scaled once by sa sw, and the zero point's term by sa sw zp
 * sum(codes of A) (the block's integer code sum): y = sum over blocks sa sw (dot - zp
 * sum(qa)). The
 * columns split over the threads; the rows' A codes stay in L1 while a column's bytes stream
 * (a [2048 -> 4096] product reads 8 MB a token). */
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NB8_HAVE 1
#define NB8_TARGET __attribute__((target("avx2,fma")))
#else
#define NB8_HAVE 0
#endif

enum { NB8_MAX_BLOCK = 512 }; /* bs x 16383 x 255 below 2^31 */

typedef struct nb8_job {
	const om_nbits *p;
	int64_t kp;       /* K rounded up to whole blocks: a row of qa */
	int64_t kbp;      /* kb rounded up to 8: a row of sa and xs */
	const int16_t *qa; /* A's codes [M][kp] (0 past K) */
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
	const int64_t kp = p->kb * p->bs, kbp = (p->kb + 7) / 8 * 8;
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

/* columns [lo, hi) of Y for every row: 8 blocks at a time, each block's sum scaled once */
static NB8_TARGET void nb8_columns(void *arg, int64_t lo, int64_t hi)
{
	const nb8_job *j = arg;
	const om_nbits *p = j->p;
	const int64_t M = p->M, kb = p->kb, bs = p->bs, kp = j->kp, kbp = j->kbp;
	const int64_t whole = kb / 8 * 8;
	for (int64_t n = lo; n < hi; n++) {
		const uint8_t *col = p->b + n * kb * bs;
		const float *sw = p->scales + n * kb;
		/* the last group's scales and zero points, zeros past kb */
		float swt[8] = {0}, zpt[8] = {0};
		for (int64_t b = whole; b < kb; b++)
			swt[b - whole] = sw[b], zpt[b - whole] = om_nbits_zero(p, n, b);
		for (int64_t m = 0; m < M; m++) {
			const int16_t *q = j->qa + m * kp;
			const float *sa = j->sa + m * kbp, *xs = j->xs + m * kbp;
			__m256 y = _mm256_setzero_ps();
			for (int64_t b0 = 0; b0 < kb; b0 += 8) {
				__m256i d[8];
				for (int i = 0; i < 8; i++)
					d[i] = b0 + i < kb ? nb8_dot(col + (b0 + i) * bs,
								     q + (b0 + i) * bs, bs)
							   : _mm256_setzero_si256();
				const bool full = b0 < whole;
				const __m256 s = full ? _mm256_loadu_ps(sw + b0) : _mm256_loadu_ps(swt);
				const __m256 z = full ? nb8_zp8(p, n, b0) : _mm256_loadu_ps(zpt);
				/* y += sa sw dot - sa sum(qa) sw zp */
				y = _mm256_fmadd_ps(_mm256_cvtepi32_ps(om_nb_sums8(d)),
						    _mm256_mul_ps(_mm256_loadu_ps(sa + b0), s), y);
				y = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(xs + b0), s), z, y);
			}
			__m128 t = _mm_add_ps(_mm256_castps256_ps128(y), _mm256_extractf128_ps(y, 1));
			t = _mm_add_ps(t, _mm_movehl_ps(t, t));
			t = _mm_add_ss(t, _mm_movehdup_ps(t));
			p->y[m * p->N + n] = _mm_cvtss_f32(t) + (p->bias ? p->bias[n] : 0.0f);
		}
	}
}
#endif

bool om_nbits_bytes(const om_nbits *p, int threads, void *buf)
{
#if NB8_HAVE
	if (!om_nbits_bytes_ok(p) || p->M < 1 || p->bs % 16)
		return false;
	const int64_t kp = p->kb * p->bs, kbp = (p->kb + 7) / 8 * 8;
	int16_t *qa = (int16_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
	float *sa = (float *)(qa + p->M * kp), *xs = sa + p->M * kbp;
	memset(sa, 0, 2 * sizeof(float) * (size_t)(p->M * kbp));
	for (int64_t m = 0; m < p->M; m++)
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			if (!nb8_quant(p->a + m * p->K, k0, k1, p->bs, qa + m * kp + k0,
				       &sa[m * kbp + b], &xs[m * kbp + b]))
				return false;
		}
	const nb8_job j = {p, kp, kbp, qa, sa, xs};
	/* columns of ~2^16 multiply-adds a piece (as nbits_vnni.c's) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, nb8_columns, (void *)&j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
