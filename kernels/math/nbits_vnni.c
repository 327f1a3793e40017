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
 * as vpmaddubsw and vpmaddwd in two halves of 8 lanes (nq2_half: the same integers, exact), a
 * column at a time, summed per block before scaling (nq2_column); elsewhere the float paths
 * run. */
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
	NQ2_MAX_BLOCK = 8192, /* nq2's largest block (its int32 dots) */
};

typedef struct nq_job {
	const om_nbits *p;
	int64_t pieces; /* 64-byte pieces of a column (the last one maybe partial) */
	int64_t stride; /* pieces a row of qa and sa: one more (nq2's groups of 8 blocks of 32) */
	int64_t kbp;    /* kb rounded up to 16 */
	const int8_t *qa; /* A's codes [M][stride][NQ_QB] */
	const float *sa;  /* each lane's block scale [M][stride][16] */
	const float *xs;  /* sa * sum(qa) a block [M][kbp] (0 past kb) */
	const float *sb;  /* sa a block [M][kbp] (0 past kb) */
	const float *qs;  /* sum(qa) a block [M][kbp] (0 past kb) */
	int32_t off[16];  /* lane l's block less the piece's first */
} nq_job;

static int64_t nq_pieces(const om_nbits *p)
{
	return (p->kb * p->blob + 63) / 64;
}

size_t om_nbits_vnni_bytes(const om_nbits *p)
{
	const int64_t stride = nq_pieces(p) + 1, kbp = (p->kb + 15) / 16 * 16;
	return (size_t)p->M * ((size_t)stride * (NQ_QB + 16 * sizeof(float)) +
			       3 * (size_t)kbp * sizeof(float));
}

#if NQ_HAVE
/* om_nb_q15_block and om_nb_q15_code over block [k0, k1) of row a (k0 a multiple of 8) with
 * AVX2, 8 codes at a time into row q's pieces (their layout: nq_prepare), the scale and
 * sum(codes) to *scale and *sum: the same values (cvtps2dq rounds half to even, as rintf in
 * the default rounding mode; a scalar loop took 4.0 us for 1024 of them on a Zen 3, this 1.4
 * with the rest of the preparation); false for an infinity or a NaN */
static NQ2_TARGET bool nq2_quant_block(const float *a, int64_t k0, int64_t k1, int8_t *q,
				       float *scale, int32_t *sum)
{
	float inv;
	if (!om_nb_q15_block_avx2(a, k0, k1, &inv, scale))
		return false;
	int64_t k;
	const __m256 vinv = _mm256_set1_ps(inv);
	/* a code's lo in byte 0 and hi in byte 1 of its lane; then per 128 bits the even
	 * codes' lo, the odd ones', the even ones' hi, the odd ones' (2 bytes each), and the two
	 * halves' words interleaved: 4 bytes for each of the piece's four parts */
	const __m256i ctl = _mm256_setr_epi8(0, 8, 4, 12, 1, 9, 5, 13, -1, -1, -1, -1, -1, -1, -1,
					     -1, 0, 8, 4, 12, 1, 9, 5, 13, -1, -1, -1, -1, -1, -1,
					     -1, -1);
	__m256i vs = _mm256_setzero_si256();
	for (k = k0; k + 8 <= k1; k += 8) {
		const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(a + k), vinv));
		vs = _mm256_add_epi32(vs, c);
		const __m256i lo = _mm256_and_si256(c, _mm256_set1_epi32(127));
		const __m256i hi = _mm256_and_si256(_mm256_srai_epi32(c, 7), _mm256_set1_epi32(255));
		const __m256i y = _mm256_shuffle_epi8(_mm256_or_si256(lo, _mm256_slli_epi32(hi, 8)),
						      ctl);
		const __m128i w = _mm_unpacklo_epi16(_mm256_castsi256_si128(y),
						     _mm256_extracti128_si256(y, 1));
		int8_t *at = q + k / NQ_CODES * NQ_QB + k % NQ_CODES / 2;
		const int32_t part[4] = {_mm_cvtsi128_si32(w), _mm_extract_epi32(w, 1),
					 _mm_extract_epi32(w, 2), _mm_extract_epi32(w, 3)};
		for (int i = 0; i < 4; i++)
			memcpy(at + 64 * i, &part[i], 4);
	}
	int32_t total = om_nb_hsum8(vs);
	for (; k < k1; k++) {
		int8_t *at = q + k / NQ_CODES * NQ_QB + (k & 1) * 64 + k % NQ_CODES / 2;
		int32_t c;
		if (!om_nb_q15_code(a[k], inv, &c, &at[0], &at[128]))
			return false;
		total += c;
	}
	*sum = total;
	return true;
}
#endif

static bool nq_avx2(void);

/* block [k0, k1) of row a quantized into row q's pieces: its scale and sum(codes) */
static bool nq_quant_block(const float *a, int64_t k0, int64_t k1, int8_t *q, float *scale,
			   int32_t *sum)
{
#if NQ_HAVE
	if (nq_avx2())
		return nq2_quant_block(a, k0, k1, q, scale, sum);
#endif
	float inv;
	if (!om_nb_q15_block(a, k0, k1, &inv, scale))
		return false;
	*sum = 0;
	for (int64_t k = k0; k < k1; k++) {
		/* code k: piece k / 128, its even or odd half, lo then hi */
		int8_t *at = q + k / NQ_CODES * NQ_QB + (k & 1) * 64 + k % NQ_CODES / 2;
		int32_t c;
		if (!om_nb_q15_code(a[k], inv, &c, &at[0], &at[128]))
			return false;
		*sum += c;
	}
	return true;
}

/* A quantized (nq_job's qa, sa, xs, sb, qs in buf); false when A holds an infinity or a NaN */
static bool nq_prepare(const om_nbits *p, nq_job *j, void *buf)
{
	const int64_t stride = j->stride, kbp = j->kbp;
	int8_t *qa = buf;
	float *sa = (float *)(qa + p->M * stride * NQ_QB), *xs = sa + p->M * stride * 16;
	float *sb = xs + p->M * kbp, *qs = sb + p->M * kbp;
	memset(buf, 0, om_nbits_vnni_bytes(p));
	for (int64_t m = 0; m < p->M; m++) {
		float *lanes = sa + m * stride * 16;
		for (int64_t b = 0; b < p->kb; b++) {
			const int64_t k0 = b * p->bs, k1 = k0 + p->bs < p->K ? k0 + p->bs : p->K;
			float scale;
			int32_t sum;
			if (!nq_quant_block(p->a + m * p->K, k0, k1, qa + m * stride * NQ_QB, &scale,
					    &sum))
				return false;
			xs[m * kbp + b] = scale * (float)sum;
			sb[m * kbp + b] = scale, qs[m * kbp + b] = (float)sum;
			/* lane l of piece h: codes 128 h + 8 l to 128 h + 8 l + 7, one block's */
			for (int64_t k = k0; k < k0 + p->bs; k += 8)
				lanes[k / NQ_CODES * 16 + k % NQ_CODES / 8] = scale;
		}
	}
	j->qa = qa, j->sa = sa, j->xs = xs, j->sb = sb, j->qs = qs;
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
			const int8_t *q = j->qa + ((r0 + r) * j->stride + h) * NQ_QB;
			const __m512i qlo = _mm512_loadu_si512(q), qhi = _mm512_loadu_si512(q + 64);
			const __m512i qlo2 = _mm512_loadu_si512(q + 128), qhi2 = _mm512_loadu_si512(q + 192);
			const __m512 sa = _mm512_loadu_ps(j->sa + ((r0 + r) * j->stride + h) * 16);
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

/* ---- AVX2 without VNNI (nq2): each vpdpbusd as vpmaddubsw, vpmaddwd (the same 16 lanes as two
 * halves of 8). Exact: a pair of products is at most 2 x 15 x 128 in magnitude (4-bit codes
 * times A's halves), far inside vpmaddubsw's 16 bits, and so are the two pairs of lo and hi
 * added before vpmaddwd widens them. A column's lanes are then summed per block in int32
 * (horizontal adds, 8 blocks to a vector: a block's dot is at most 8192 x 15 x 16383 < 2^31
 * for blocks of up to 8192 codes) and each block scaled once: y = sum over blocks of
 * sa sw (dot - zp sum(q)). Per-lane scaling and a separate pass for the zero points had
 * taken 1.25-1.4 times as long on a Zen 3 ([1024, 2048] products at every block size). */
/* dpbusd(lo, qlo) + dpbusd(hi, qhi) of one half: int32 lanes of 4 byte products each */
static inline __attribute__((always_inline)) NQ2_TARGET __m256i nq2_dot(__m256i lo, __m256i qlo,
									__m256i hi, __m256i qhi,
									__m256i w16)
{
	const __m256i t = _mm256_add_epi16(_mm256_maddubs_epi16(lo, qlo),
					   _mm256_maddubs_epi16(hi, qhi));
	return _mm256_madd_epi16(t, w16);
}

/* 32 bytes of a column (64 codes) against A's codes of that half of a piece (q: the piece's
 * NQ_QB bytes plus 32 for the second half): int32 lane l holds bytes 4l to 4l + 3's products */
static inline __attribute__((always_inline)) NQ2_TARGET __m256i nq2_half(__m256i w,
									 const int8_t *q)
{
	const __m256i nib = _mm256_set1_epi8(0x0f);
	const __m256i lo = _mm256_and_si256(w, nib);
	const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), nib);
	const __m256i qlo = _mm256_loadu_si256((const __m256i *)q);
	const __m256i qhi = _mm256_loadu_si256((const __m256i *)(q + 64));
	const __m256i qlo2 = _mm256_loadu_si256((const __m256i *)(q + 128));
	const __m256i qhi2 = _mm256_loadu_si256((const __m256i *)(q + 192));
	return _mm256_add_epi32(nq2_dot(lo, qlo, hi, qhi, _mm256_set1_epi16(1)),
				nq2_dot(lo, qlo2, hi, qhi2, _mm256_set1_epi16(128)));
}

/* a piece's two halves (col: its first byte, have: the column's bytes from there, q: A's
 * codes of the piece); past the column's end 0 (nothing read there) */
static inline __attribute__((always_inline)) NQ2_TARGET void nq2_piece2(const uint8_t *col,
									 int64_t have,
									 const int8_t *q,
									 __m256i *d0, __m256i *d1)
{
	if (have <= 0) {
		*d0 = *d1 = _mm256_setzero_si256();
		return;
	}
	__m256i w0, w1;
	if (have >= 64) {
		w0 = _mm256_loadu_si256((const __m256i *)col);
		w1 = _mm256_loadu_si256((const __m256i *)(col + 32));
	} else {
		uint8_t t[64] = {0};
		memcpy(t, col, (size_t)have);
		w0 = _mm256_loadu_si256((const __m256i *)t);
		w1 = _mm256_loadu_si256((const __m256i *)(t + 32));
	}
	*d0 = nq2_half(w0, q);
	*d1 = nq2_half(w1, q + 32);
}

/* the dots of column col's blocks [8 g, 8 g + 8) with A's row q (its codes, piece by piece),
 * in int32 in block order (blocks past kb: 0; `whole`: all 8 there, a constant where
 * inlined). The lanes a block covers, by block size (kind 0: 16 codes, 1: 32, 2: 64, 3:
 * more): 2 neighbours, 4 (a quarter piece), 8 (a half piece), more (halves summed first);
 * horizontal adds leave 16's in the order 0 1 4 5 2 3 6 7 and 32's in 0 2 4 6 1 3 5 7, put
 * back by one permute */
static inline __attribute__((always_inline)) NQ2_TARGET __m256i
nq2_dots8(const nq_job *j, const uint8_t *col, const int8_t *q, int64_t g, const int kind,
	  const bool whole)
{
	const om_nbits *p = j->p;
	const int64_t colbytes = whole ? INT64_MAX / 2 : p->kb * p->blob;
	__m256i d0, d1;
	if (kind == 0) {
		nq2_piece2(col + 64 * g, colbytes - 64 * g, q + g * NQ_QB, &d0, &d1);
		return _mm256_permutevar8x32_epi32(_mm256_hadd_epi32(d0, d1),
						   _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7));
	}
	if (kind == 1) {
		__m256i e0, e1;
		nq2_piece2(col + 128 * g, colbytes - 128 * g, q + 2 * g * NQ_QB, &d0, &d1);
		nq2_piece2(col + 128 * g + 64, colbytes - 128 * g - 64, q + (2 * g + 1) * NQ_QB,
			   &e0, &e1);
		const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(d0, d1),
						    _mm256_hadd_epi32(e0, e1));
		return _mm256_permutevar8x32_epi32(s, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
	}
	/* a block of 2^k halves of 32 bytes (always whole: the column is a multiple of 32) */
	const int64_t halves = kind == 2 ? 1 : p->blob / 32;
	__m256i e[8];
	for (int i = 0; i < 8; i++) {
		e[i] = _mm256_setzero_si256();
		if (!whole && 8 * g + i >= p->kb)
			continue;
		const int64_t h0 = (8 * g + i) * halves;
		for (int64_t hh = h0; hh < h0 + halves; hh += 2) /* halves is even past 64 */
			e[i] = _mm256_add_epi32(
				e[i],
				halves == 1
					? nq2_half(_mm256_loadu_si256((const __m256i *)(col + 32 * hh)),
						   q + hh / 2 * NQ_QB + hh % 2 * 32)
					: _mm256_add_epi32(
						  nq2_half(_mm256_loadu_si256(
								   (const __m256i *)(col + 32 * hh)),
							   q + hh / 2 * NQ_QB),
						  nq2_half(_mm256_loadu_si256(
								   (const __m256i *)(col + 32 * hh + 32)),
							   q + hh / 2 * NQ_QB + 32)));
	}
	return om_nb_sums8(e);
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

/* column n's blocks [8 g, 8 g + 8) for rows [0, R) (R, kind and whole constants where
 * inlined) into acc */
static inline __attribute__((always_inline)) NQ2_TARGET void
nq2_group(const nq_job *j, int64_t n, int64_t g, const int R, const int kind, const bool whole,
	  __m256 *acc)
{
	const om_nbits *p = j->p;
	const uint8_t *col = p->b + n * p->kb * p->blob;
	const float *sc = p->scales + n * p->kb + 8 * g;
	const int64_t c = whole ? 8 : p->kb - 8 * g;
	const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)c),
					     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	const __m256 sw = whole ? _mm256_loadu_ps(sc) : _mm256_maskload_ps(sc, m);
	const __m256 zp = nq2_zeros(p, n, 8 * g, m);
	for (int r = 0; r < R; r++) {
		const __m256i dot = nq2_dots8(j, col, j->qa + r * j->stride * NQ_QB, g, kind, whole);
		const int64_t at = r * j->kbp + 8 * g;
		const __m256 t = _mm256_fnmadd_ps(zp, _mm256_loadu_ps(j->qs + at),
						  _mm256_cvtepi32_ps(dot));
		acc[r] = _mm256_fmadd_ps(t, _mm256_mul_ps(sw, _mm256_loadu_ps(j->sb + at)), acc[r]);
	}
}

/* column n for rows [0, R): its whole groups of 8 blocks, then the last one's rest (no
 * software prefetch: on a Zen 3 it slowed a [1024, 32000] product 1.89 -> 2.13 ms, the
 * hardware's streams do better alone) */
static inline __attribute__((always_inline)) NQ2_TARGET void nq2_column(const nq_job *j,
									 int64_t n, const int R,
									 const int kind)
{
	const om_nbits *p = j->p;
	__m256 acc[NQ_ROWS];
	for (int r = 0; r < R; r++)
		acc[r] = _mm256_setzero_ps();
	int64_t g = 0;
	for (; 8 * g + 8 <= p->kb; g++)
		nq2_group(j, n, g, R, kind, true, acc);
	if (8 * g < p->kb)
		nq2_group(j, n, g, R, kind, false, acc);
	for (int r = 0; r < R; r++) {
		__m128 s4 = _mm_add_ps(_mm256_castps256_ps128(acc[r]),
				       _mm256_extractf128_ps(acc[r], 1));
		s4 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
		s4 = _mm_add_ss(s4, _mm_movehdup_ps(s4));
		const float y = _mm_cvtss_f32(s4);
		p->y[r * p->N + n] = p->bias ? y + p->bias[n] : y;
	}
}

/* columns [lo, hi) for rows [0, R) */
static inline __attribute__((always_inline)) NQ2_TARGET void nq2_columns(const nq_job *j,
									  int64_t lo, int64_t hi,
									  const int R)
{
	const int64_t bs = j->p->bs;
	for (int64_t n = lo; n < hi; n++) {
		if (bs == 16)
			nq2_column(j, n, R, 0);
		else if (bs == 32)
			nq2_column(j, n, R, 1);
		else if (bs == 64)
			nq2_column(j, n, R, 2);
		else
			nq2_column(j, n, R, 3);
	}
}

/* AVX2's pieces: columns [lo, hi), each with every row (M <= NQ_ROWS) */
static NQ2_TARGET void nq2_piece(void *arg, int64_t lo, int64_t hi)
{
	const nq_job *j = arg;
	switch (j->p->M) {
	case 1: nq2_columns(j, lo, hi, 1); break;
	case 2: nq2_columns(j, lo, hi, 2); break;
	case 3: nq2_columns(j, lo, hi, 3); break;
	default: nq2_columns(j, lo, hi, 4); break;
	}
}
#endif

/* (nbits.h) */
bool om_nbits_vnni_cpu(void)
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
	if (p->gidx)
		return false;
	if (p->bits == 8) /* a block's sums: at most bs x 255 x 16383 */
		return p->bs <= 512 && om_nbits_vnni_cpu();
	return p->bits == 4 && (om_nbits_vnni_cpu() || (nq_avx2() && p->bs <= NQ2_MAX_BLOCK));
}

bool om_nbits_vnni_ok(const om_nbits *p)
{
	return p->bits == 4 && !p->gidx && (om_nbits_vnni_cpu() || (nq_avx2() && p->bs <= NQ2_MAX_BLOCK));
}

bool om_nbits_vnni(const om_nbits *p, int threads, void *buf)
{
#if NQ_HAVE
	if (!om_nbits_vnni_ok(p) || p->M < 1)
		return false;
	nq_job j = {.p = p, .pieces = nq_pieces(p), .stride = nq_pieces(p) + 1,
		    .kbp = (p->kb + 15) / 16 * 16};
	for (int l = 0; l < 16; l++)
		j.off[l] = p->bs <= NQ_CODES ? (int32_t)(8 * l / p->bs) : 0;
	if (!nq_prepare(p, &j, buf))
		return false;
	/* columns of ~2^16 multiply-adds a piece (as nbits_decode.c's: 2^18 left a decoder's
	 * 512 x 512 projections in one piece, and 2 threads ran slower than 1) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, om_nbits_vnni_cpu() ? nq_piece : nq2_piece, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
