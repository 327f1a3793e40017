/* nbits_pairs_gemm.c — MatMulNBits' prompt product (more than OM_NBITS_DECODE_ROWS rows of A)
 * at accuracy_level 4, 4-bit codes, on AVX2 without VNNI: int16 pairs (vpmaddwd), as omopt's
 * 8-bit products there (num/igemm_pairs.c). A is quantized as the decoding's (nbits_vnni.c):
 * per block of W's rows to 15 bits, codes q = round-half-even(a * 16383 / max|a|), here kept
 * whole in int16. A panel of PR_NR columns of W is unpacked once into int16 pairs of (code -
 * zero point), two consecutive rows of a column in one int32 lane; then PR_MR rows of A at a
 * time multiply it, each pair step one broadcast pair of a row by the panel's 16 pairs: a
 * vpmaddwd is 16 multiply-adds where an FMA is 8. A block's sums are exact in int32 (at most
 * 8192 x 15 x 16383 < 2^31) and at its end become float: y += sa sw dot. A's rounding, 2^-15
 * of a block's largest |a|, is the only approximation, as when decoding. On a Zen 3 the
 * product runs at about 63 G multiply-adds a second, where the float prompt panels (W
 * dequantized, oneDNN's sgemm) ran at 42: medium_al4's prompt of 128 tokens 397-417 -> 332-344
 * ms at one thread. The same integer product in vpmaddubsw (A's two bytes, as the VNNI
 * kernel's) was slower than the float panels: two of them a pair of codes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define PR_TARGET __attribute__((target("avx2,fma")))
#define PR_HAVE 1
#else
#define PR_HAVE 0
#endif

enum {
	PR_NR = 16, /* columns a panel: two registers of int32 lanes */
	PR_MR = 6,  /* rows of A a pass: 12 int32 sums, 2 of the panel, 1 broadcast */
};

typedef struct pr_job {
	const om_nbits *p;
	int64_t kp;        /* A's row and W's column padded to whole blocks: kb bs */
	const int32_t *a;  /* A's codes [M][kp / 2] int16 pairs */
	const float *sa;   /* A's block scales [M][kb] */
	const float *xs;   /* sa * sum(codes) a block [M][kb] (float zero points' term) */
	uint8_t *panels;   /* one panel (pr_panel_bytes) per slot */
	size_t panel_bytes;
} pr_job;

static size_t pr_a_bytes(const om_nbits *p)
{
	return (size_t)p->M * ((size_t)(p->kb * p->bs) * sizeof(int16_t) +
			       2 * (size_t)p->kb * sizeof(float));
}

/* a panel: (code - zero point) pairs [kp / 2][PR_NR][2] int16 (float zero points: the codes
 * alone), then the scales sw and -zp sw (float zero points) [kb][PR_NR] */
static size_t pr_panel_bytes(const om_nbits *p)
{
	const size_t kp = (size_t)(p->kb * p->bs);
	return (kp * PR_NR * sizeof(int16_t) + 2 * (size_t)p->kb * PR_NR * sizeof(float) + 63) /
	       64 * 64;
}

size_t om_nbits_pairs_gemm_bytes(const om_nbits *p, int slots)
{
	return pr_a_bytes(p) + 64 + (size_t)slots * pr_panel_bytes(p);
}

/* panels a piece of work: ~2^20 multiply-adds, at least one */
static int64_t pr_grain(const om_nbits *p)
{
	const int64_t per = p->M * p->K * PR_NR;
	return per >= (1 << 20) ? 1 : (1 << 20) / per;
}

int om_nbits_pairs_gemm_slots(const om_nbits *p, int threads)
{
	return om_par_slots(threads, (p->N + PR_NR - 1) / PR_NR, pr_grain(p));
}

#if PR_HAVE
/* block [k0, k1) of row a into q (int16 codes from k0, 0 to the block's end at k0 + bs) and
 * its scale to *scale: om_nb_q15_block's and om_nb_q15_code's values (cvtps2dq rounds half to
 * even, as rintf in the default rounding mode); false for an infinity or a NaN */
static PR_TARGET bool pr_quant_block(const float *a, int64_t k0, int64_t k1, int64_t bs,
				     int16_t *q, float *scale, int32_t *sum)
{
	float inv;
	if (!om_nb_q15_block_avx2(a, k0, k1, &inv, scale))
		return false;
	int64_t k;
	const __m256 vinv = _mm256_set1_ps(inv);
	int16_t *d = q;
	__m256i vs = _mm256_setzero_si256();
	for (k = k0; k + 8 <= k1; k += 8, d += 8) {
		const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(a + k), vinv));
		vs = _mm256_add_epi32(vs, c);
		/* |c| <= 16383: packing to int16 saturates nothing */
		const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(c),
						  _mm256_extracti128_si256(c, 1));
		_mm_storeu_si128((__m128i *)d, w);
	}
	*sum = om_nb_hsum8(vs);
	for (; k < k1; k++, d++) {
		int32_t c;
		int8_t lo, hi;
		if (!om_nb_q15_code(a[k], inv, &c, &lo, &hi))
			return false;
		*d = (int16_t)c, *sum += c;
	}
	memset(d, 0, sizeof(int16_t) * (size_t)(k0 + bs - k1));
	return true;
}

/* A quantized into the job's arrays (in buf); false when A holds an infinity or a NaN */
static bool pr_prepare(const om_nbits *p, pr_job *j, void *buf)
{
	int16_t *a16 = buf;
	float *sa = (float *)(a16 + p->M * j->kp), *xs = sa + p->M * p->kb;
	for (int64_t m = 0; m < p->M; m++)
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			int32_t sum;
			if (!pr_quant_block(p->a + m * p->K, k0, k1, p->bs, a16 + m * j->kp + k0,
					    &sa[m * p->kb + b], &sum))
				return false;
			xs[m * p->kb + b] = sa[m * p->kb + b] * (float)sum;
		}
	j->a = (const int32_t *)a16, j->sa = sa, j->xs = xs;
	return true;
}

/* v[c] (lane i: row i of column c) as rows: out[i] lane c, an 8 x 8 transpose of int32 */
static inline __attribute__((always_inline)) PR_TARGET void pr_transpose8(const __m256i *v,
									  __m256i *out)
{
	__m256i t[8], u[8];
	for (int i = 0; i < 8; i += 2) {
		t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
		t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
	}
	for (int i = 0; i < 8; i += 4) { /* u[i + q]: rows q and q + 4 of columns i to i + 3 */
		u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]);
		u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
		u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]);
		u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
	}
	for (int q = 0; q < 4; q++) {
		out[q] = _mm256_permute2x128_si256(u[q], u[q + 4], 0x20);
		out[q + 4] = _mm256_permute2x128_si256(u[q], u[q + 4], 0x31);
	}
}

/* columns [n0, n0 + w) of W into panel t (0 past w): the scales, then per 32 codes (16 bytes)
 * of 8 columns their (code - zero point) pairs, integer zero points subtracted here (float ones
 * go through the panel's -zp sw), transposed to the panel's steps */
static PR_TARGET void pr_pack(const pr_job *j, int64_t n0, int64_t w, uint8_t *t)
{
	const om_nbits *p = j->p;
	const int64_t kp = j->kp, colbytes = p->kb * p->blob;
	int32_t *codes = (int32_t *)t;
	float *sw = (float *)(t + kp * PR_NR * sizeof(int16_t)), *zsw = sw + p->kb * PR_NR;
	/* zsw: the integer zero points for now (overwritten by -zp sw with float ones) */
	for (int64_t c = 0; c < PR_NR; c++)
		for (int64_t b = 0; b < p->kb; b++) {
			const float s = c < w ? p->scales[(n0 + c) * p->kb + b] : 0;
			sw[b * PR_NR + c] = s;
			zsw[b * PR_NR + c] = c >= w ? 0
					     : p->zpf ? -p->zpf[(n0 + c) * p->kb + b] * s
						      : om_nbits_zero(p, n0 + c, b);
		}
	const __m128i nib = _mm_set1_epi8(0x0f);
	for (int64_t s = 0; s < kp; s += 32) { /* codes s to s + 31 */
		const int64_t pairs = kp - s >= 32 ? 16 : (kp - s) / 2; /* 8: a last block of 16 */
		const int64_t b0 = s / p->bs, b1 = pairs == 16 ? (s + 16) / p->bs : b0;
		for (int64_t g = 0; g < PR_NR; g += 8) {
			__m256i v[8], v2[8];
			for (int64_t c = g; c < g + 8; c++) {
				v[c - g] = v2[c - g] = _mm256_setzero_si256();
				if (c >= w)
					continue;
				const uint8_t *col = p->b + (n0 + c) * colbytes + s / 2;
				__m128i b;
				if (pairs == 16) {
					b = _mm_loadu_si128((const __m128i *)col);
				} else {
					uint64_t lo = 0;
					memcpy(&lo, col, 8);
					b = _mm_cvtsi64_si128((long long)lo);
				}
				const __m128i lo = _mm_and_si128(b, nib);
				const __m128i hi = _mm_and_si128(_mm_srli_epi16(b, 4), nib);
				const int16_t z0 = p->zpf ? 0 : (int16_t)zsw[b0 * PR_NR + c];
				const int16_t z1 = p->zpf ? 0 : (int16_t)zsw[b1 * PR_NR + c];
				v[c - g] = _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_unpacklo_epi8(lo, hi)),
							    _mm256_set1_epi16(z0));
				if (pairs == 16)
					v2[c - g] = _mm256_sub_epi16(
						_mm256_cvtepu8_epi16(_mm_unpackhi_epi8(lo, hi)),
						_mm256_set1_epi16(z1));
			}
			__m256i r[8];
			pr_transpose8(v, r);
			for (int i = 0; i < 8; i++)
				_mm256_storeu_si256((__m256i *)(codes + (s / 2 + i) * PR_NR + g), r[i]);
			if (pairs < 16)
				continue;
			pr_transpose8(v2, r);
			for (int i = 0; i < 8; i++)
				_mm256_storeu_si256((__m256i *)(codes + (s / 2 + 8 + i) * PR_NR + g),
						    r[i]);
		}
	}
}

/* the int32 sums of rows a[0..5] (pairs [s0, s1)) with panel codes c: the accumulators named
 * one by one so that they stay in registers (12, with 2 of the panel and a broadcast; as an
 * array GCC hoisted the 6 broadcasts and spilled 4 sums: slower than the float panels) */
static inline __attribute__((always_inline)) PR_TARGET void
pr_dots(const int32_t *const *a, const int32_t *c, int64_t s0, int64_t s1, __m256i *d)
{
	__m256i c00 = _mm256_setzero_si256(), c01 = c00, c10 = c00, c11 = c00, c20 = c00,
		c21 = c00, c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
	const int32_t *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
#define PR_ROW(r)                                                                  \
	do {                                                                       \
		const __m256i av = _mm256_set1_epi32(a##r[s]);                     \
		c##r##0 = _mm256_add_epi32(c##r##0, _mm256_madd_epi16(av, b0));    \
		c##r##1 = _mm256_add_epi32(c##r##1, _mm256_madd_epi16(av, b1));    \
	} while (0)
	for (int64_t s = s0; s < s1; s++, c += PR_NR) {
		const __m256i b0 = _mm256_loadu_si256((const __m256i *)c);
		const __m256i b1 = _mm256_loadu_si256((const __m256i *)(c + 8));
		PR_ROW(0);
		PR_ROW(1);
		PR_ROW(2);
		PR_ROW(3);
		PR_ROW(4);
		PR_ROW(5);
	}
#undef PR_ROW
	d[0] = c00, d[1] = c01, d[2] = c10, d[3] = c11, d[4] = c20, d[5] = c21;
	d[6] = c30, d[7] = c31, d[8] = c40, d[9] = c41, d[10] = c50, d[11] = c51;
}

/* rows [r0, r0 + R) of A (R <= PR_MR; the rows past R read row r0 again, not stored) with
 * panel t (columns [n0, n0 + w) of W) into Y: each block's int32 sums become float sums y */
static PR_TARGET void pr_rows(const pr_job *j, const uint8_t *t, int64_t n0, int64_t w,
			      int64_t r0, int R)
{
	const om_nbits *p = j->p;
	const int64_t k2 = j->kp / 2, steps = p->bs / 2;
	const int32_t *codes = (const int32_t *)t;
	const float *sw = (const float *)(t + j->kp * PR_NR * sizeof(int16_t));
	const float *zsw = sw + p->kb * PR_NR;
	__m256 y[PR_MR][2];
	for (int r = 0; r < PR_MR; r++)
		y[r][0] = y[r][1] = _mm256_setzero_ps();
	const int32_t *a[PR_MR];
	for (int r = 0; r < PR_MR; r++)
		a[r] = j->a + (r0 + (r < R ? r : 0)) * k2;
	for (int64_t b = 0; b < p->kb; b++) {
		__m256i d[2 * PR_MR];
		pr_dots(a, codes + b * steps * PR_NR, b * steps, (b + 1) * steps, d);
		for (int h = 0; h < 2; h++) {
			const __m256 sv = _mm256_loadu_ps(sw + b * PR_NR + 8 * h);
			const __m256 zv = _mm256_loadu_ps(zsw + b * PR_NR + 8 * h);
			for (int r = 0; r < R; r++) {
				const __m256 sa = _mm256_set1_ps(j->sa[(r0 + r) * p->kb + b]);
				y[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d[2 * r + h]),
							  _mm256_mul_ps(sa, sv), y[r][h]);
				if (p->zpf) /* less sa sum(q) zp sw */
					y[r][h] = _mm256_fmadd_ps(
						_mm256_set1_ps(j->xs[(r0 + r) * p->kb + b]), zv,
						y[r][h]);
			}
		}
	}
	for (int r = 0; r < R; r++) {
		float out[PR_NR];
		_mm256_storeu_ps(out, y[r][0]);
		_mm256_storeu_ps(out + 8, y[r][1]);
		float *dst = p->y + (r0 + r) * p->N + n0;
		for (int64_t q = 0; q < w; q++)
			dst[q] = p->bias ? out[q] + p->bias[n0 + q] : out[q];
	}
}

/* panels [lo, hi) of PR_NR columns: each packed once, then every row of A */
static PR_TARGET void pr_panels(void *arg, int64_t lo, int64_t hi, int slot)
{
	const pr_job *j = arg;
	const om_nbits *p = j->p;
	uint8_t *t = j->panels + (size_t)slot * j->panel_bytes;
	for (int64_t i = lo; i < hi; i++) {
		const int64_t n0 = i * PR_NR, w = p->N - n0 < PR_NR ? p->N - n0 : PR_NR;
		pr_pack(j, n0, w, t);
		for (int64_t r = 0; r < p->M; r += PR_MR)
			pr_rows(j, t, n0, w, r, p->M - r < PR_MR ? (int)(p->M - r) : PR_MR);
	}
}
#endif

bool om_nbits_pairs_gemm(const om_nbits *p, int threads, void *buf)
{
#if PR_HAVE
	if (p->bits != 4 || p->gidx || p->M < 1)
		return false;
	pr_job j = {.p = p, .kp = p->kb * p->bs, .panel_bytes = pr_panel_bytes(p)};
	if (!pr_prepare(p, &j, buf))
		return false;
	j.panels = (uint8_t *)(((uintptr_t)buf + pr_a_bytes(p) + 63) / 64 * 64);
	om_par_for_slots(threads, (p->N + PR_NR - 1) / PR_NR, pr_grain(p), pr_panels, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
