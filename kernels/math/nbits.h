/* nbits.h — MatMulNBits' geometry and data (ops_matmul_nbits.c) as its loops read them: the
 * weight tiles (nbits_dequant.c) and fast mode's decoding products (nbits_decode.c). */
#ifndef OM_NBITS_H
#define OM_NBITS_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct om_nbits {
	int64_t M, N, K, bits, bs, kb, blob; /* kb: blocks a column; blob: bytes a block */
	int64_t zp_row;                      /* bytes of a column's packed zero points */
	const uint8_t *b, *zp8;              /* zp8: packed uint8 zero points, or NULL */
	const float *scales, *zpf, *bias;    /* zpf: float zero points, or NULL */
	const int32_t *gidx;                 /* g_idx: row k's block, or NULL (k / bs) */
	const float *a;                      /* [M, K] */
	float *y;                            /* [M, N] */
} om_nbits;

/* column n's zero point of block k as a float (2^(bits - 1) when the node has none) */
static inline float om_nbits_zero(const om_nbits *p, int64_t n, int64_t k)
{
	if (p->zpf)
		return p->zpf[n * p->kb + k];
	if (!p->zp8)
		return (float)(1 << (p->bits - 1));
	const int64_t bit = k * p->bits;
	return (float)((p->zp8[n * p->zp_row + bit / 8] >> (bit % 8)) & ((1 << p->bits) - 1));
}

/* W's columns [n0, n0 + w) and rows [k0, k0 + len) (k0 a multiple of the block size) into
 * t [w, len] (row j: column n0 + j's weights, ld len), each (code - zero point) * scale in
 * float32 (row k's scale and zero point those of block gidx[k] when p->gidx): the same bits as
 * that expression computed alone */
void om_nbits_dequant(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
		      float *t);

/* Fast mode's prompt panels (nbits_panel.c): A's rows into x [M, row] in the lane order of
 * the 64-byte pieces (row = 64 (8 / bits) pieces: x[m][h][t P + r][j] = A[m][P (64 h + 4 j +
 * t) + r], 0 past K; the rows split over `threads`), and W's columns [n0, n0 + w) at [k0, k0 + len) of that order (both
 * multiples of 64 (8 / bits)) into t [w, len], (code - zero point) * scale with an FMA */
void om_nbits_lane_order(const om_nbits *p, int64_t row, float *x, int threads);
void om_nbits_dequant_lanes(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
			    float *t);

/* Fast mode, M <= OM_NBITS_DECODE_ROWS: Y = A W (+ bias) straight from the codes (nothing
 * dequantized to memory), the columns split over `threads`; float rounding apart from exact
 * arithmetic (another summation order). False, nothing written, when it cannot get its
 * buffer of A's rows (a few K floats). */
enum { OM_NBITS_DECODE_ROWS = 4 };
bool om_nbits_decode(const om_nbits *p, int threads);

/* Fast mode's decoding (M <= OM_NBITS_DECODE_ROWS) at accuracy_level 4, 4-bit codes, no
 * g_idx, where the CPU has AVX512-VNNI or AVX2 (blocks of up to 8192 codes there)
 * (nbits_vnni.c): A quantized per block to 15 bits (accuracy_level 4 permits 8), each
 * block's product exact in int32, Y = A W (+ bias) in float from there; the columns split over `threads`. om_nbits_vnni_ok: whether it applies;
 * om_nbits_vnni_bytes: the buffer it needs; false, nothing written, when A holds an infinity
 * or a NaN. */
bool om_nbits_vnni_ok(const om_nbits *p);
size_t om_nbits_vnni_bytes(const om_nbits *p);
bool om_nbits_vnni(const om_nbits *p, int threads, void *buf);

/* Fast mode's decoding at accuracy_level 4 for 8-bit codes (nbits_bytes.c): A quantized per
 * block to 15 bits as below, each block's products with W's codes exact in int32 lanes
 * (AVX512-VNNI's vpdpbusd where the CPU has it, else AVX2's vpmaddwd), Y = A W (+ bias) in
 * float from there; where the CPU has AVX2 and FMA, blocks of up to 512 codes, no g_idx.
 * om_nbits_bytes_ok: whether it applies; om_nbits_bytes_bytes: the buffer it needs; false,
 * nothing written, when A holds an infinity or a NaN. om_nbits_bytes_on: with VNNI or AVX2
 * as asked (the same bits; false when the CPU lacks VNNI and it was asked). */
bool om_nbits_bytes_ok(const om_nbits *p);
size_t om_nbits_bytes_bytes(const om_nbits *p);
bool om_nbits_bytes(const om_nbits *p, int threads, void *buf);
bool om_nbits_bytes_on(const om_nbits *p, int threads, void *buf, bool vnni);
/* The same for 2-bit codes where the CPU has AVX512-VNNI (nbits_crumbs.c): A quantized per
 * block to 15 bits as below, each block's products exact in int32 lanes, Y = A W (+ bias) in
 * float from there; no g_idx. om_nbits_crumbs_ok: whether it applies; om_nbits_crumbs_bytes:
 * the buffer it needs; false, nothing written, when A holds an infinity or a NaN. */
bool om_nbits_crumbs_ok(const om_nbits *p);
size_t om_nbits_crumbs_bytes(const om_nbits *p);
bool om_nbits_crumbs(const om_nbits *p, int threads, void *buf);
/* accuracy_level 4's A (nbits_vnni.c, nbits_vnni_gemm.c): a block's codes are
 * round-half-even(a * OM_NB_Q15 / max|a|), its scale max|a| / OM_NB_Q15. om_nb_q15_block:
 * *inv and *scale of block [k0, k1) of row a, false when it holds an infinity or a NaN;
 * om_nb_q15_code: v's code split as 128 *hi + *lo (lo 0 to 127, hi -128 to 127, both signed
 * bytes for vpdpbusd), false for a NaN. */
enum { OM_NB_Q15 = 16383 };
static inline bool om_nb_q15_block(const float *a, int64_t k0, int64_t k1, float *inv,
				   float *scale)
{
	float amax = 0;
	for (int64_t k = k0; k < k1; k++)
		amax = fabsf(a[k]) > amax ? fabsf(a[k]) : amax;
	*inv = amax != 0 ? OM_NB_Q15 / amax : 0, *scale = amax / OM_NB_Q15;
	return isfinite(amax);
}

static inline bool om_nb_q15_code(float v, float inv, int32_t *c, int8_t *lo, int8_t *hi)
{
	const float q = rintf(v * inv);
	if (!(q >= -OM_NB_Q15 && q <= OM_NB_Q15)) /* a NaN */
		return false;
	*c = (int32_t)q;
	const int32_t l = *c & 127; /* c mod 128 */
	*lo = (int8_t)l, *hi = (int8_t)((*c - l) / 128);
	return true;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OM_NB_AVX2 __attribute__((always_inline, target("avx2,fma")))
/* om_nb_q15_block with AVX2, 8 values at a time (for callers compiled for AVX2 and FMA: the
 * level-4 kernels of nbits_vnni.c and nbits_pairs_gemm.c): the same *inv and *scale */
static inline OM_NB_AVX2 bool om_nb_q15_block_avx2(const float *a, int64_t k0, int64_t k1,
						   float *inv, float *scale)
{
	const __m256 sign = _mm256_set1_ps(-0.0f);
	__m256 mx = _mm256_setzero_ps(), bad = _mm256_setzero_ps();
	int64_t k = k0;
	for (; k + 8 <= k1; k += 8) {
		const __m256 v = _mm256_loadu_ps(a + k);
		mx = _mm256_max_ps(_mm256_andnot_ps(sign, v), mx);
		bad = _mm256_or_ps(bad, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
	}
	__m128 m4 = _mm_max_ps(_mm256_castps256_ps128(mx), _mm256_extractf128_ps(mx, 1));
	m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
	m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
	float amax = _mm_cvtss_f32(m4);
	bool nan = _mm256_movemask_ps(bad) != 0;
	for (; k < k1; k++)
		amax = fabsf(a[k]) > amax ? fabsf(a[k]) : amax, nan |= isnan(a[k]);
	*inv = amax != 0 ? OM_NB_Q15 / amax : 0, *scale = amax / OM_NB_Q15;
	return !nan && isfinite(amax);
}

/* the sum of v's 8 int32 lanes */
static inline OM_NB_AVX2 int32_t om_nb_hsum8(__m256i v)
{
	__m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
	s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
	return _mm_cvtsi128_si32(s);
}
/* lane i: the sum of d[i]'s 8 int32 lanes (8 blocks' sums at once) */
static inline OM_NB_AVX2 __m256i om_nb_sums8(const __m256i d[8])
{
	const __m256i ab = _mm256_hadd_epi32(_mm256_hadd_epi32(d[0], d[1]),
					     _mm256_hadd_epi32(d[2], d[3]));
	const __m256i ce = _mm256_hadd_epi32(_mm256_hadd_epi32(d[4], d[5]),
					     _mm256_hadd_epi32(d[6], d[7]));
	return _mm256_add_epi32(_mm256_permute2x128_si256(ab, ce, 0x20),
				_mm256_permute2x128_si256(ab, ce, 0x31));
}
#endif

/* whether the CPU has AVX512-VNNI, with AVX512BW and DQ (nbits_vnni.c's and
 * nbits_vnni_gemm.c's kernels) */
bool om_nbits_vnni_cpu(void);

/* The prompt's product (more rows) at accuracy_level 4 where om_nbits_vnni_gemm_ok (4-bit
 * codes, no g_idx; AVX512-VNNI: nbits_vnni_gemm.c, else AVX2 and blocks of up to 8192 codes:
 * nbits_pairs_gemm.c; 8-bit codes with AVX512-VNNI and blocks of up to 512): A quantized as above, W unpacked a panel of columns at a time into a
 * buffer per worker, each block's products exact in int32. om_nbits_vnni_gemm_slots: the
 * workers it splits over at `threads`; om_nbits_vnni_gemm_bytes: the buffer it needs for that
 * many; false, nothing written, when A holds an infinity or a NaN. */
bool om_nbits_vnni_gemm_ok(const om_nbits *p);
int om_nbits_vnni_gemm_slots(const om_nbits *p, int threads);
size_t om_nbits_vnni_gemm_bytes(const om_nbits *p, int slots);
bool om_nbits_vnni_gemm(const om_nbits *p, int threads, void *buf);

/* om_nbits_vnni_gemm's product on AVX2 without VNNI (nbits_pairs_gemm.c): A's 15-bit codes
 * whole in int16, W's (code - zero point) in int16 pairs, vpmaddwd; the same contract */
int om_nbits_pairs_gemm_slots(const om_nbits *p, int threads);
size_t om_nbits_pairs_gemm_bytes(const om_nbits *p, int slots);
bool om_nbits_pairs_gemm(const om_nbits *p, int threads, void *buf);

/* A 64-byte piece's 16 int32 lanes (lane l: bytes 4l to 4l + 3) in groups of `lanes`: for blocks
 * under 64 bytes, group h's lanes take blocks base[h] + idx[h * lanes + i] of the piece (the
 * lane's block less the group's first), else all 0 */
static inline void om_nb_lane_blocks(int64_t blob, int lanes, int32_t *base, int32_t *idx)
{
	for (int h = 0; h < 16 / lanes; h++) {
		base[h] = blob < 64 ? (int32_t)(4 * h * lanes / blob) : 0;
		for (int i = 0; i < lanes; i++)
			idx[h * lanes + i] =
				blob < 64 ? (int32_t)(4 * (h * lanes + i) / blob) - base[h] : 0;
	}
}

/* om_nbits_decode in 8-lane vectors with AVX2 and FMA (nbits_decode_avx2.c: x86-64 GCC
 * builds), which om_nbits_decode calls on CPUs with those but no AVX-512 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define OM_NBITS_DECODE8 1
bool om_nbits_decode8(const om_nbits *p, int threads);
#else
#define OM_NBITS_DECODE8 0
#endif

/* ---- for the cloned loops (clones.h): 16 lanes (one AVX-512 register, two AVX2 ones) ---- */

typedef float om_nb_f16 __attribute__((vector_size(64)));
typedef int32_t om_nb_i16 __attribute__((vector_size(64)));
typedef int32_t om_nb_i4 __attribute__((vector_size(16)));
typedef int32_t om_nb_i8 __attribute__((vector_size(32)));

/* v's lanes in the order of idx (an int32 vector of as many lanes, taken modulo them): GCC's
 * __builtin_shuffle, a variable permute; clang has none, so lane by lane there (its builds are
 * the warnings and sanitizer checks, not the measured one) */
#ifdef __clang__
#define OM_NB_PERMUTE(v, idx)                                                                    \
	__extension__({                                                                          \
		const __typeof__(v) s_ = (v);                                                    \
		__typeof__(v) r_;                                                                \
		const int n_ = (int)(sizeof r_ / sizeof r_[0]);                                  \
		for (int i_ = 0; i_ < n_; i_++)                                                  \
			r_[i_] = s_[(idx)[i_] & (n_ - 1)];                                       \
		r_;                                                                              \
	})
#else
#define OM_NB_PERMUTE(v, idx) __builtin_shuffle(v, idx)
#endif

/* 16 bytes at src, of which `avail` are there (the rest read as 0), as four int32 words
 * repeated in w's four quarters (lane j: word j % 4); two steps, which GCC 12 makes one
 * load and two register shuffles. Fewer than 16 bytes (a column's last zero points) come as
 * two 8-byte words, the second the 8 ending at the last byte shifted down; a row of fewer
 * than 8 bytes byte by byte (not through memory: a store of bytes read back as a vector
 * stalls, and made a decoder's zero points cost 0.7 of 1.8 ms) */
static inline __attribute__((always_inline)) void om_nb_load16(const uint8_t *src,
							       int64_t avail, om_nb_i16 *w)
{
	om_nb_i4 v;
	if (avail >= 16) {
		memcpy(&v, src, sizeof v);
	} else {
		uint64_t lo = 0, hi = 0;
		if (avail >= 8) {
			memcpy(&lo, src, sizeof lo);
			if (avail > 8) {
				memcpy(&hi, src + avail - 8, sizeof hi);
				hi >>= 8 * (16 - avail);
			}
		} else {
			for (int64_t i = 0; i < avail; i++)
				lo |= (uint64_t)src[i] << 8 * i;
		}
		v = (om_nb_i4){(int32_t)(uint32_t)lo, (int32_t)(uint32_t)(lo >> 32),
			       (int32_t)(uint32_t)hi, (int32_t)(uint32_t)(hi >> 32)};
	}
	const om_nb_i8 v8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 0, 1, 2, 3);
	*w = __builtin_shufflevector(v8, v8, 0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7);
}

/* the 16 codes of `bits` (2, 4 or 8: a constant where inlined) packed little-end first from
 * src on (`avail` bytes there, > 0), in order into q's lanes: lane i takes the word of its
 * code's byte (a permute), then a shift and a mask */
static inline __attribute__((always_inline)) void om_nb_unpack16(const uint8_t *src,
								 int64_t avail, int bits,
								 om_nb_i16 *q)
{
	static const om_nb_i16 word[3] = {
		{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
		{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},
		{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}};
	static const om_nb_i16 shift[3] = {
		{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30},
		{0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28},
		{0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24, 0, 8, 16, 24}};
	const int t = bits == 2 ? 0 : bits == 4 ? 1 : 2;
	om_nb_i16 w;
	om_nb_load16(src, avail, &w);
	*q = (OM_NB_PERMUTE(w, word[t]) >> shift[t]) & ((1 << bits) - 1);
}

/* the zero points of column n's blocks [k0, k0 + 16) into z (lanes past kb: 0) */
static inline __attribute__((always_inline)) void om_nb_zeros(const om_nbits *p, int64_t n,
							      int64_t k0, const int bits,
							      om_nb_f16 *z)
{
	const int64_t have = p->kb - k0;
	if (p->zp8) {
		const int64_t byte = k0 * bits / 8;
		om_nb_i16 q;
		om_nb_unpack16(p->zp8 + n * p->zp_row + byte, p->zp_row - byte, bits, &q);
		*z = __builtin_convertvector(q, om_nb_f16);
	} else if (p->zpf && have >= 16) {
		memcpy(z, p->zpf + n * p->kb + k0, sizeof *z);
	} else {
		for (int l = 0; l < 16; l++)
			(*z)[l] = !p->zpf ? (float)(1 << (bits - 1))
				  : l < have ? p->zpf[n * p->kb + k0 + l] : 0;
	}
	for (int64_t l = have; l < 16; l++)
		(*z)[l] = 0;
}

#endif
