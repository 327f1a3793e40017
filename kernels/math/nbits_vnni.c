/* nbits_vnni.c — MatMulNBits' decoding product at accuracy_level 4 (fast mode, at most
 * OM_NBITS_DECODE_ROWS rows of A, 4-bit codes) in integers. A is quantized per block of W's rows
 * to 15 bits: scale sa = max|a| / 16383, codes q = round-half-even(a * (16383 / max|a|)), each
 * split as q = 128 hi + lo (lo 0 to 127, hi -128 to 127) so that both halves are AVX512-VNNI's
 * signed bytes. A block's product with W's codes is then exact in int32 (vpdpbusd: 64 byte
 * products an instruction, 128 (hi) + (lo)), and y = sum over blocks of sa sb (dot - zp sum(q))
 * in float: A's rounding, 2^-15 of a block's largest |a|, is the only approximation (level 4
 * permits int8, 2^-8; ONNX Runtime's MLAS takes that, whose logits end 2e-2 from exact
 * arithmetic on bench/README.md's decoders). A 64-byte piece of a column holds 128 codes: its
 * low nibbles (codes 2i) and high nibbles (codes 2i + 1) meet A's halves laid out alike
 * (nq_prepare), all four products into the same int32 lanes (lane l: codes 8l to 8l + 7, one
 * block's), scaled per lane. Four columns side by side (two for 3-4 rows); the bytes 16
 * columns on are prefetched (a decoder's weights stream from memory: 7.43 -> 5.22 ms a token
 * on medium_gqa at accuracy_level 4). Where the CPU has AVX512-VNNI; on AVX2 each vpdpbusd
 * as vpmaddubsw and vpmaddwd in two halves of 8 lanes (nq2_group: the same integers, exact);
 * elsewhere the float paths run. */
#include <math.h>
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NQ_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#define NQ2_TARGET __attribute__((target("avx2,fma")))
#define NQ_HAVE 1
#else
#define NQ_HAVE 0
#endif

enum {
	NQ_ROWS = 4,    /* rows of A a pass */
	NQ_GROUP = 4,   /* columns side by side */
	NQ_PF = 16,     /* columns ahead prefetched */
	NQ_CODES = 128, /* codes a 64-byte piece */
	NQ_QB = 256,    /* A's bytes a piece: lo of even codes, lo of odd, hi of even, hi of odd */
};

typedef struct nq_job {
	const om_nbits *p;
	int64_t pieces; /* 64-byte pieces of a column (the last one maybe partial) */
	int64_t kbp;    /* kb rounded up to 16 */
	const int8_t *qa; /* A's codes [M][pieces][NQ_QB] */
	const float *sa;  /* each lane's block scale [M][pieces][16] */
	const float *xs;  /* sa * sum(qa) a block [M][kbp] (0 past kb) */
	int32_t off[16];  /* lane l's block less the piece's first */
} nq_job;

static int64_t nq_pieces(const om_nbits *p)
{
	return (p->kb * p->blob + 63) / 64;
}

size_t om_nbits_vnni_bytes(const om_nbits *p)
{
	const int64_t pieces = nq_pieces(p), kbp = (p->kb + 15) / 16 * 16;
	return (size_t)p->M * ((size_t)pieces * (NQ_QB + 16 * sizeof(float)) +
			       (size_t)kbp * sizeof(float));
}

/* A quantized (nq_job's qa, sa, xs in buf); false when A holds an infinity or a NaN */
static bool nq_prepare(const om_nbits *p, nq_job *j, void *buf)
{
	const int64_t pieces = j->pieces, kbp = j->kbp;
	int8_t *qa = buf;
	float *sa = (float *)(qa + p->M * pieces * NQ_QB), *xs = sa + p->M * pieces * 16;
	memset(buf, 0, om_nbits_vnni_bytes(p));
	for (int64_t m = 0; m < p->M; m++) {
		const float *a = p->a + m * p->K;
		int8_t *q = qa + m * pieces * NQ_QB;
		float *lanes = sa + m * pieces * 16;
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			float inv, scale;
			if (!om_nb_q15_block(a, k0, k1, &inv, &scale))
				return false;
			int32_t sum = 0;
			for (int64_t k = k0; k < k1; k++) {
				/* code k: piece k / 128, its even or odd half, lo then hi */
				int8_t *at = q + k / NQ_CODES * NQ_QB + (k & 1) * 64 + k % NQ_CODES / 2;
				int32_t c;
				if (!om_nb_q15_code(a[k], inv, &c, &at[0], &at[128]))
					return false;
				sum += c;
			}
			xs[m * kbp + b] = scale * (float)sum;
			/* lane l of piece h: codes 128 h + 8 l to 128 h + 8 l + 7, one block's */
			for (int64_t k = k0; k < k0 + p->bs; k += 8)
				lanes[k / NQ_CODES * 16 + k % NQ_CODES / 8] = scale;
		}
	}
	j->qa = qa, j->sa = sa, j->xs = xs;
	return true;
}

#if NQ_HAVE
/* piece h of column n's codes (b0: its first block), the codes and scales NQ_PF columns on
 * prefetched (a decoder's weights stream from memory) */
static inline __attribute__((always_inline)) const uint8_t *nq_column(const om_nbits *p,
								      int64_t n, int64_t h,
								      int64_t b0)
{
	const int64_t colbytes = p->kb * p->blob;
	const uint8_t *col = p->b + n * colbytes + h * 64;
	if (n + NQ_PF < p->N) {
		__builtin_prefetch(col + NQ_PF * colbytes);
		if (h % 4 == 0)
			__builtin_prefetch(p->scales + (n + NQ_PF) * p->kb + b0);
	}
	return col;
}

/* the zero points of column n's blocks [k0, k0 + 16) (k0 even; lanes past kb: anything
 * finite, their scales are 0): 4-bit codes through a masked load (om_nb_zeros' copy of a
 * row's last bytes goes through memory, 0.7 of 1.8 ms on a [1024, 32000] product) */
static inline __attribute__((always_inline)) NQ_TARGET __m512 nq_zeros(const om_nbits *p,
								       int64_t n, int64_t k0)
{
	if (p->zpf)
		return _mm512_maskz_loadu_ps((__mmask16)(p->kb - k0 >= 16 ? 0xffff
								      : (1u << (p->kb - k0)) - 1),
					     p->zpf + n * p->kb + k0);
	if (!p->zp8)
		return _mm512_set1_ps(8);
	const int64_t avail = p->zp_row - k0 / 2;
	const __m128i b = _mm_maskz_loadu_epi8(
		(__mmask16)(avail >= 8 ? 0xff : (1u << avail) - 1), p->zp8 + n * p->zp_row + k0 / 2);
	const __m128i nib = _mm_set1_epi8(0x0f);
	const __m128i z = _mm_unpacklo_epi8(_mm_and_si128(b, nib),
					    _mm_and_si128(_mm_srli_epi16(b, 4), nib));
	return _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(z));
}

/* rows [r0, r0 + R) of columns [n, n + G) (R and G constants where inlined) */
static inline __attribute__((always_inline)) NQ_TARGET void
nq_group(const nq_job *j, int64_t n, int64_t r0, const int R, const int G)
{
	const om_nbits *p = j->p;
	const int64_t colbytes = p->kb * p->blob;
	const int64_t per = p->bs <= NQ_CODES ? NQ_CODES / p->bs : 1;
	const __m512i nib = _mm512_set1_epi8(0x0f), off = _mm512_loadu_si512(j->off);
	__m512 acc[NQ_ROWS][NQ_GROUP];
	for (int r = 0; r < R; r++)
		for (int g = 0; g < G; g++)
			acc[r][g] = _mm512_setzero_ps();
	for (int64_t h = 0; h < j->pieces; h++) {
		const int64_t have = colbytes - h * 64;
		const int64_t b0 = h * NQ_CODES / p->bs;
		const int64_t cnt = p->kb - b0 < per ? p->kb - b0 : per;
		__m512i lo[NQ_GROUP], hi[NQ_GROUP];
		__m512 sv[NQ_GROUP];
		for (int g = 0; g < G; g++) {
			const uint8_t *col = nq_column(p, n + g, h, b0);
			const __m512i w = have >= 64 ? _mm512_loadu_si512(col)
					  : _mm512_maskz_loadu_epi8(
						    (__mmask64)(~0ULL >> (64 - have)), col);
			lo[g] = _mm512_and_si512(w, nib);
			hi[g] = _mm512_and_si512(_mm512_srli_epi16(w, 4), nib);
			sv[g] = _mm512_permutexvar_ps(
				off, _mm512_maskz_loadu_ps((__mmask16)((1u << cnt) - 1),
							   p->scales + (n + g) * p->kb + b0));
		}
		for (int r = 0; r < R; r++) {
			const int8_t *q = j->qa + ((r0 + r) * j->pieces + h) * NQ_QB;
			const __m512i qlo = _mm512_loadu_si512(q), qhi = _mm512_loadu_si512(q + 64);
			const __m512i qlo2 = _mm512_loadu_si512(q + 128), qhi2 = _mm512_loadu_si512(q + 192);
			const __m512 sa = _mm512_loadu_ps(j->sa + ((r0 + r) * j->pieces + h) * 16);
			for (int g = 0; g < G; g++) {
				__m512i d = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[g], qlo);
				d = _mm512_dpbusd_epi32(d, hi[g], qhi);
				__m512i d2 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), lo[g], qlo2);
				d2 = _mm512_dpbusd_epi32(d2, hi[g], qhi2);
				d = _mm512_add_epi32(d, _mm512_slli_epi32(d2, 7));
				acc[r][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d),
							    _mm512_mul_ps(sa, sv[g]), acc[r][g]);
			}
		}
	}
	/* the zero points: less the sum over blocks of zp sb (sa sum(qa)), 16 blocks at a time */
	for (int64_t k = 0; k < p->kb; k += 16) {
		const __mmask16 m = (__mmask16)(p->kb - k >= 16 ? 0xffff
							: (1u << (p->kb - k)) - 1);
		for (int g = 0; g < G; g++) {
			const __m512 zs = _mm512_mul_ps(
				nq_zeros(p, n + g, k),
				_mm512_maskz_loadu_ps(m, p->scales + (n + g) * p->kb + k));
			for (int r = 0; r < R; r++)
				acc[r][g] = _mm512_fnmadd_ps(
					zs, _mm512_loadu_ps(j->xs + (r0 + r) * j->kbp + k),
					acc[r][g]);
		}
	}
	for (int r = 0; r < R; r++)
		for (int g = 0; g < G; g++) {
			const float y = _mm512_reduce_add_ps(acc[r][g]);
			p->y[(r0 + r) * p->N + n + g] = p->bias ? y + p->bias[n + g] : y;
		}
}

/* PREFIX_piece: columns [lo, hi), every row, NQ_ROWS rows at a time (a column's codes
 * unpacked once for them), then the rest; PREFIX_rows: rows [r0, r0 + R) of columns [lo, hi)
 * in groups of G columns (an expression of the constant R), then one at a time */
#define NQ_DRIVER(PREFIX, TARGET, GROUP, G_OF_R)                                               \
	static inline __attribute__((always_inline)) TARGET void PREFIX##_rows(              \
		const nq_job *j, int64_t lo, int64_t hi, int64_t r0, const int R)             \
	{                                                                                     \
		const int G = G_OF_R;                                                         \
		int64_t n = lo;                                                               \
		for (; n + G <= hi; n += G)                                                   \
			GROUP(j, n, r0, R, G);                                                \
		for (; n < hi; n++)                                                           \
			GROUP(j, n, r0, R, 1);                                                \
	}                                                                                     \
	static TARGET void PREFIX##_piece(void *arg, int64_t lo, int64_t hi)                   \
	{                                                                                     \
		const nq_job *j = arg;                                                        \
		const int64_t M = j->p->M;                                                    \
		int64_t r = 0;                                                                \
		for (; r + NQ_ROWS <= M; r += NQ_ROWS)                                        \
			PREFIX##_rows(j, lo, hi, r, NQ_ROWS);                                 \
		switch (M - r) {                                                              \
		case 1: PREFIX##_rows(j, lo, hi, r, 1); break;                                \
		case 2: PREFIX##_rows(j, lo, hi, r, 2); break;                                \
		case 3: PREFIX##_rows(j, lo, hi, r, 3); break;                                \
		default: break;                                                               \
		}                                                                             \
	}

/* AVX-512's: groups of 4 columns for 1 or 2 rows, 2 for more (the sums stay in registers) */
NQ_DRIVER(nq, NQ_TARGET, nq_group, R <= 2 ? 4 : 2)

/* ---- AVX2 without VNNI: each vpdpbusd as vpmaddubsw, vpmaddwd (the same 16 lanes as two
 * halves of 8). Exact: a pair of products is at most 2 x 15 x 128 in magnitude (4-bit codes
 * times A's halves), far inside vpmaddubsw's 16 bits, and so are the two pairs of lo and hi
 * added before vpmaddwd widens them */

/* dpbusd(lo, qlo) + dpbusd(hi, qhi) of one half: int32 lanes of 4 byte products each */
static inline __attribute__((always_inline)) NQ2_TARGET __m256i nq2_dot(__m256i lo, __m256i qlo,
									__m256i hi, __m256i qhi,
									__m256i w16)
{
	const __m256i t = _mm256_add_epi16(_mm256_maddubs_epi16(lo, qlo),
					   _mm256_maddubs_epi16(hi, qhi));
	return _mm256_madd_epi16(t, w16);
}

/* 16 lanes of v (two halves) in the order of off (lane l: v[off[l]], off below 16) */
static inline __attribute__((always_inline)) NQ2_TARGET void
nq2_lanes(__m256 v0, __m256 v1, __m256i off, __m256 *out)
{
	const __m256i low = _mm256_cmpgt_epi32(_mm256_set1_epi32(8), off);
	const __m256 a = _mm256_permutevar8x32_ps(v0, off), b = _mm256_permutevar8x32_ps(v1, off);
	*out = _mm256_blendv_ps(b, a, _mm256_castsi256_ps(low));
}

/* the zero points of column n's blocks [k0, k0 + 8) (k0 even; lanes past kb, m's zeros:
 * anything finite, their scales are 0), 4-bit codes as lanes shifted out of one word (their
 * scalar stores and a vector load stalled on store forwarding: a quarter of a decoding step) */
static inline __attribute__((always_inline)) NQ2_TARGET __m256 nq2_zeros(const om_nbits *p,
									 int64_t n, int64_t k0,
									 __m256i m)
{
	if (p->zpf)
		return _mm256_maskload_ps(p->zpf + n * p->kb + k0, m);
	if (!p->zp8)
		return _mm256_set1_ps(8);
	const int64_t avail = p->zp_row - k0 / 2;
	const uint8_t *b = p->zp8 + n * p->zp_row + k0 / 2;
	uint32_t w = 0;
	if (avail >= 4)
		memcpy(&w, b, 4);
	else
		for (int64_t i = 0; i < avail; i++)
			w |= (uint32_t)b[i] << (8 * i);
	const __m256i z = _mm256_and_si256(
		_mm256_srlv_epi32(_mm256_set1_epi32((int32_t)w),
				  _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
		_mm256_set1_epi32(0x0f));
	return _mm256_cvtepi32_ps(z);
}

/* column n's first `have` bytes of piece h, the rest zero */
static inline __attribute__((always_inline)) NQ2_TARGET void
nq2_piece_bytes(const uint8_t *col, int64_t have, __m256i *w0, __m256i *w1)
{
	if (have >= 64) {
		*w0 = _mm256_loadu_si256((const __m256i *)col);
		*w1 = _mm256_loadu_si256((const __m256i *)(col + 32));
		return;
	}
	uint8_t t[64] = {0};
	memcpy(t, col, (size_t)have);
	*w0 = _mm256_loadu_si256((const __m256i *)t);
	*w1 = _mm256_loadu_si256((const __m256i *)(t + 32));
}

/* rows [r0, r0 + R) of columns [n, n + G): nq_group's arithmetic in two halves of 8 lanes */
static inline __attribute__((always_inline)) NQ2_TARGET void
nq2_group(const nq_job *j, int64_t n, int64_t r0, const int R, const int G)
{
	const om_nbits *p = j->p;
	const int64_t colbytes = p->kb * p->blob;
	const int64_t per = p->bs <= NQ_CODES ? NQ_CODES / p->bs : 1;
	const __m256i nib = _mm256_set1_epi8(0x0f), one = _mm256_set1_epi16(1);
	const __m256i w128 = _mm256_set1_epi16(128);
	const __m256i off0 = _mm256_loadu_si256((const __m256i *)j->off);
	const __m256i off1 = _mm256_loadu_si256((const __m256i *)(j->off + 8));
	__m256 acc[NQ_ROWS][NQ_GROUP][2];
	for (int r = 0; r < R; r++)
		for (int g = 0; g < G; g++)
			acc[r][g][0] = acc[r][g][1] = _mm256_setzero_ps();
	for (int64_t h = 0; h < j->pieces; h++) {
		const int64_t have = colbytes - h * 64;
		const int64_t b0 = h * NQ_CODES / p->bs;
		const int64_t cnt = p->kb - b0 < per ? p->kb - b0 : per;
		const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)cnt),
						      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)cnt),
						      _mm256_setr_epi32(8, 9, 10, 11, 12, 13, 14, 15));
		/* a column at a time, A's bytes reread from the level-1 cache for each: the
		 * codes, scales and sums of all G columns at once spilled (a third of a step) */
		for (int g = 0; g < G; g++) {
			const uint8_t *col = nq_column(p, n + g, h, b0);
			__m256i w0, w1, lo[2], hi[2];
			__m256 sv[2];
			nq2_piece_bytes(col, have, &w0, &w1);
			lo[0] = _mm256_and_si256(w0, nib);
			lo[1] = _mm256_and_si256(w1, nib);
			hi[0] = _mm256_and_si256(_mm256_srli_epi16(w0, 4), nib);
			hi[1] = _mm256_and_si256(_mm256_srli_epi16(w1, 4), nib);
			const float *sc = p->scales + (n + g) * p->kb + b0;
			const __m256 v0 = _mm256_maskload_ps(sc, m0);
			if (per <= 8) { /* the piece's blocks in v0 (blocks of 16 codes or more) */
				sv[0] = _mm256_permutevar8x32_ps(v0, off0);
				sv[1] = _mm256_permutevar8x32_ps(v0, off1);
			} else {
				const __m256 v1 = _mm256_maskload_ps(sc + 8, m1);
				nq2_lanes(v0, v1, off0, &sv[0]);
				nq2_lanes(v0, v1, off1, &sv[1]);
			}
			for (int r = 0; r < R; r++) {
				const int8_t *q = j->qa + ((r0 + r) * j->pieces + h) * NQ_QB;
				const float *sa = j->sa + ((r0 + r) * j->pieces + h) * 16;
				for (int x = 0; x < 2; x++) { /* the halves: bytes 32 x on of each part */
					const __m256i qlo =
						_mm256_loadu_si256((const __m256i *)(q + 32 * x));
					const __m256i qhi =
						_mm256_loadu_si256((const __m256i *)(q + 64 + 32 * x));
					const __m256i qlo2 =
						_mm256_loadu_si256((const __m256i *)(q + 128 + 32 * x));
					const __m256i qhi2 =
						_mm256_loadu_si256((const __m256i *)(q + 192 + 32 * x));
					const __m256 sah = _mm256_loadu_ps(sa + 8 * x);
					const __m256i d = _mm256_add_epi32(
						nq2_dot(lo[x], qlo, hi[x], qhi, one),
						nq2_dot(lo[x], qlo2, hi[x], qhi2, w128));
					acc[r][g][x] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d),
								       _mm256_mul_ps(sah, sv[x]),
								       acc[r][g][x]);
				}
			}
		}
	}
	/* the zero points: less the sum over blocks of zp sb (sa sum(qa)), 8 blocks at a time */
	for (int64_t k = 0; k < p->kb; k += 8) {
		const int64_t c = p->kb - k < 8 ? p->kb - k : 8;
		const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)c),
						     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		for (int g = 0; g < G; g++) {
			const float *sc = p->scales + (n + g) * p->kb + k;
			const __m256 zs = _mm256_mul_ps(nq2_zeros(p, n + g, k, m),
							c == 8 ? _mm256_loadu_ps(sc)
							       : _mm256_maskload_ps(sc, m));
			for (int r = 0; r < R; r++) {
				const float *x = j->xs + (r0 + r) * j->kbp + k;
				acc[r][g][0] = _mm256_fnmadd_ps(
					zs, c == 8 ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, m),
					acc[r][g][0]);
			}
		}
	}
	for (int r = 0; r < R; r++)
		for (int g = 0; g < G; g++) {
			const __m256 s8 = _mm256_add_ps(acc[r][g][0], acc[r][g][1]);
			__m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8),
					       _mm256_extractf128_ps(s8, 1));
			s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
			s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
			const float y = _mm_cvtss_f32(s4);
			p->y[(r0 + r) * p->N + n + g] = p->bias ? y + p->bias[n + g] : y;
		}
}

/* AVX2's driver: a column at a time, whatever the rows (its sums stay in registers; four
 * columns' spilled: medium_al4's decoding step 8.9 -> 8.5 ms) */
NQ_DRIVER(nq2, NQ2_TARGET, nq2_group, 1)
#endif

/* the CPU has AVX512-VNNI (vpdpbusd) */
static bool nq_vnni(void)
{
#if NQ_HAVE
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("avx512dq");
#else
	return false;
#endif
}

/* the CPU has AVX2 and FMA (nq2_piece) */
static bool nq_avx2(void)
{
#if NQ_HAVE
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
	return false;
#endif
}

bool om_nbits_vnni_gemm_ok(const om_nbits *p)
{
	return p->bits == 4 && !p->gidx && nq_vnni();
}

bool om_nbits_vnni_ok(const om_nbits *p)
{
	return p->bits == 4 && !p->gidx && (nq_vnni() || nq_avx2());
}

bool om_nbits_vnni(const om_nbits *p, int threads, void *buf)
{
#if NQ_HAVE
	if (!om_nbits_vnni_ok(p) || p->M < 1)
		return false;
	nq_job j = {.p = p, .pieces = nq_pieces(p), .kbp = (p->kb + 15) / 16 * 16};
	for (int l = 0; l < 16; l++)
		j.off[l] = p->bs <= NQ_CODES ? (int32_t)(8 * l / p->bs) : 0;
	if (!nq_prepare(p, &j, buf))
		return false;
	/* columns of ~2^16 multiply-adds a piece (as nbits_decode.c's: 2^18 left a decoder's
	 * 512 x 512 projections in one piece, and 2 threads ran slower than 1) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, nq_vnni() ? nq_piece : nq2_piece, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
