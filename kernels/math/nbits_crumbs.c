/* nbits_crumbs.c — MatMulNBits' decoding product at accuracy_level 4 for 2-bit codes (fast
 * mode, at most OM_NBITS_DECODE_ROWS rows of A, no g_idx) where the CPU has AVX512-VNNI. A is
 * quantized per block of W's rows to 15 bits as in nbits_vnni.c (sa = max|a| / 16383, codes
 * round-half-even, each split as lo + 128 hi, both signed bytes); y = sum over blocks sa sw
 * (dot - zp sum(qa)), the zero points' term from the block's integer code sum of A.
 *
 * A 64-byte piece of a column holds 256 codes, code 4i + s in bits 2s of byte i: masked by 3
 * after a shift of 2s, stream s pairs byte i with A's code 4i + s of the piece (A laid out
 * alike: four streams of lo bytes, then four of hi). vpdpbusd's lane l then sums codes 16l to
 * 16l + 15 of the piece, all of one block (blocks of 16 codes or more), exactly in int32 (at
 * most 16 x 3 x 16383); each piece's lanes go to float scaled lane by lane by their block's
 * sa sw (vpermps from the products of 16 blocks), 4 columns side by side sharing A's loads,
 * the columns 8 ahead prefetched, as nbits_bytes.c's VNNI loop. */
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NC_HAVE 1
#define NC_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define NC_HAVE 0
#endif

enum {
	NC_CODES = 256, /* codes a 64-byte piece */
	NC_QB = 512,    /* A's bytes a piece: 4 streams of lo bytes, then 4 of hi */
	NC_PF = 8,      /* columns ahead prefetched */
};

typedef struct nc_job {
	const om_nbits *p;
	int64_t pieces; /* 64-byte pieces a column (the last one maybe partial) */
	int64_t kbp;    /* kb rounded up to 16 past the last piece's blocks */
	const int8_t *qa; /* A's codes [M][pieces][NC_QB] (0 past K) */
	const float *sa;  /* a block's scale [M][kbp] (0 past kb) */
	const float *xs;  /* sa sum(qa) a block [M][kbp] (0 past kb) */
} nc_job;

static int64_t nc_pieces(const om_nbits *p)
{
	return (p->kb * p->blob + 63) / 64;
}

/* blocks a row of sa and xs: past the last piece's first block by 16 (a piece's 16 blocks
 * are loaded whole) */
static int64_t nc_kbp(const om_nbits *p)
{
	return ((nc_pieces(p) * NC_CODES) / p->bs + 16 + 15) / 16 * 16;
}

bool om_nbits_crumbs_ok(const om_nbits *p)
{
	return p->bits == 2 && !p->gidx && p->M <= OM_NBITS_DECODE_ROWS && om_nbits_vnni_cpu();
}

size_t om_nbits_crumbs_bytes(const om_nbits *p)
{
	return (size_t)p->M * ((size_t)nc_pieces(p) * NC_QB + 2 * sizeof(float) * (size_t)nc_kbp(p)) +
	       64;
}

/* A quantized into the job's arrays; false when A holds an infinity or a NaN */
static bool nc_prepare(const om_nbits *p, nc_job *j, void *buf)
{
	int8_t *qa = (int8_t *)(((uintptr_t)buf + 63) & ~(uintptr_t)63);
	float *sa = (float *)(qa + p->M * j->pieces * NC_QB), *xs = sa + p->M * j->kbp;
	memset(qa, 0, (size_t)(p->M * j->pieces * NC_QB));
	memset(sa, 0, 2 * sizeof(float) * (size_t)(p->M * j->kbp));
	for (int64_t m = 0; m < p->M; m++) {
		int8_t *q = qa + m * j->pieces * NC_QB;
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			float inv, scale;
			if (!om_nb_q15_block(p->a + m * p->K, k0, k1, &inv, &scale))
				return false;
			int32_t sum = 0;
			for (int64_t k = k0; k < k1; k++) {
				/* code k: piece k / 256, stream k % 4, byte k % 256 / 4 */
				int8_t *at = q + k / NC_CODES * NC_QB + k % 4 * 64 + k % NC_CODES / 4;
				int32_t c;
				if (!om_nb_q15_code(p->a[m * p->K + k], inv, &c, at, at + 256))
					return false;
				sum += c;
			}
			sa[m * j->kbp + b] = scale;
			xs[m * j->kbp + b] = scale * (float)sum;
		}
	}
	j->qa = qa, j->sa = sa, j->xs = xs;
	return true;
}

#if NC_HAVE
/* blocks [g, g + 16) of column n's zero points as floats (lanes past kb: anything finite,
 * their scales are 0) */
static inline __attribute__((always_inline)) NC_TARGET __m512 nc_zp16(const om_nbits *p,
								       int64_t n, int64_t g)
{
	const __mmask16 in = (__mmask16)(p->kb - g >= 16 ? 0xffff : (1u << (p->kb - g)) - 1);
	if (p->zpf)
		return _mm512_maskz_loadu_ps(in, p->zpf + n * p->kb + g);
	if (!p->zp8)
		return _mm512_set1_ps(2.0f);
	/* 4 codes a byte: lane i from byte i / 4, bits 2 (i % 4) */
	const int64_t avail = p->zp_row - g / 4;
	const __m128i b = _mm_maskz_loadu_epi8((__mmask16)(avail >= 4 ? 0xf : (1u << avail) - 1),
					       p->zp8 + n * p->zp_row + g / 4);
	const __m512i lanes = _mm512_permutexvar_epi32(
		_mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0),
		_mm512_cvtepu8_epi32(b));
	const __m512i shift = _mm512_set_epi32(6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0, 6, 4, 2, 0);
	return _mm512_cvtepi32_ps(
		_mm512_and_si512(_mm512_srlv_epi32(lanes, shift), _mm512_set1_epi32(3)));
}

/* row m of columns [n, n + C) */
static inline __attribute__((always_inline)) NC_TARGET void nc_group(const nc_job *j, int64_t n,
								     int64_t m, const int C)
{
	const om_nbits *p = j->p;
	const int64_t kb = p->kb, bs = p->bs, len = kb * p->blob;
	const int8_t *qa = j->qa + m * j->pieces * NC_QB;
	const float *sa = j->sa + m * j->kbp, *xs = j->xs + m * j->kbp;
	const __m512i three = _mm512_set1_epi8(3);
	/* lane l of a piece: codes 16 l to 16 l + 15, of block 16 l / bs of the piece's first */
	const __m512i lane = _mm512_srli_epi32(
		_mm512_slli_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1,
						   0), 4),
		(unsigned)__builtin_ctzll((unsigned long long)bs));
	const uint8_t *col[4];
	__m512 acc[4];
	for (int c = 0; c < C; c++)
		col[c] = p->b + (n + c) * len, acc[c] = _mm512_setzero_ps();
	for (int64_t h = 0; h < j->pieces; h++) {
		const int64_t off = h * 64, b0 = h * NC_CODES / bs;
		const int8_t *q = qa + h * NC_QB;
		__m512i a[8];
		for (int s = 0; s < 8; s++)
			a[s] = _mm512_loadu_si512(q + 64 * s);
		const __m512 vsa = _mm512_loadu_ps(sa + b0);
		const __mmask16 in = (__mmask16)(kb - b0 >= 16 ? 0xffff : (1u << (kb - b0)) - 1);
		for (int c = 0; c < C; c++) {
			_mm_prefetch((const char *)col[c] + off + NC_PF * len, _MM_HINT_T0);
			const __m512i w = off + 64 <= len
						  ? _mm512_loadu_si512(col[c] + off)
						  : _mm512_maskz_loadu_epi8(~0ULL >> (64 - (len - off)),
									    col[c] + off);
			__m512i lo = _mm512_setzero_si512(), hi = lo;
			for (int s = 0; s < 4; s++) {
				const __m512i x =
					_mm512_and_si512(_mm512_srli_epi16(w, (unsigned)(2 * s)), three);
				lo = _mm512_dpbusd_epi32(lo, x, a[s]);
				hi = _mm512_dpbusd_epi32(hi, x, a[4 + s]);
			}
			const __m512 v = _mm512_mul_ps(
				vsa, _mm512_maskz_loadu_ps(in, p->scales + (n + c) * kb + b0));
			acc[c] = _mm512_fmadd_ps(
				_mm512_cvtepi32_ps(_mm512_add_epi32(lo, _mm512_slli_epi32(hi, 7))),
				_mm512_permutexvar_ps(lane, v), acc[c]);
		}
	}
	/* the zero points: less sa sum(qa) sw zp, 16 blocks at a time */
	for (int64_t g = 0; g < kb; g += 16) {
		const __mmask16 in = (__mmask16)(kb - g >= 16 ? 0xffff : (1u << (kb - g)) - 1);
		const __m512 vxs = _mm512_loadu_ps(xs + g);
		for (int c = 0; c < C; c++) {
			const __m512 sw = _mm512_maskz_loadu_ps(in, p->scales + (n + c) * kb + g);
			acc[c] = _mm512_fnmadd_ps(_mm512_mul_ps(vxs, sw), nc_zp16(p, n + c, g), acc[c]);
		}
	}
	for (int c = 0; c < C; c++)
		p->y[m * p->N + n + c] =
			_mm512_reduce_add_ps(acc[c]) + (p->bias ? p->bias[n + c] : 0.0f);
}

/* columns [lo, hi) of Y for every row, 4 at a time */
static NC_TARGET void nc_columns(void *arg, int64_t lo, int64_t hi)
{
	const nc_job *j = arg;
	for (int64_t m = 0; m < j->p->M; m++) {
		int64_t n = lo;
		for (; n + 4 <= hi; n += 4)
			nc_group(j, n, m, 4);
		for (; n < hi; n++)
			nc_group(j, n, m, 1);
	}
}
#endif

bool om_nbits_crumbs(const om_nbits *p, int threads, void *buf)
{
#if NC_HAVE
	if (!om_nbits_crumbs_ok(p) || p->M < 1)
		return false;
	nc_job j = {.p = p, .pieces = nc_pieces(p), .kbp = nc_kbp(p)};
	if (!nc_prepare(p, &j, buf))
		return false;
	/* columns of ~2^16 multiply-adds a piece (as nbits_vnni.c's) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, nc_columns, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
