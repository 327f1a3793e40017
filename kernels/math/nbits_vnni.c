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
 * on medium_gqa at accuracy_level 4). Only where the CPU has AVX512-VNNI (false elsewhere:
 * the float paths run). */
#include <math.h>
#include <string.h>

#include "nbits.h"
#include "parallel.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define NQ_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
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
			const uint8_t *col = p->b + (n + g) * colbytes + h * 64;
			if (n + g + NQ_PF < p->N) {
				__builtin_prefetch(col + NQ_PF * colbytes);
				if (h % 4 == 0)
					__builtin_prefetch(p->scales + (n + g + NQ_PF) * p->kb + b0);
			}
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

/* rows [r0, r0 + R) of columns [lo, hi): groups of G (4 for 1 or 2 rows, 2 for more: the
 * sums stay in registers), then one at a time */
static inline __attribute__((always_inline)) NQ_TARGET void
nq_rows(const nq_job *j, int64_t lo, int64_t hi, int64_t r0, const int R)
{
	const int G = R <= 2 ? 4 : 2;
	int64_t n = lo;
	for (; n + G <= hi; n += G)
		nq_group(j, n, r0, R, G);
	for (; n < hi; n++)
		nq_group(j, n, r0, R, 1);
}

/* columns [lo, hi), every row: NQ_ROWS rows at a time (a column's codes unpacked once for
 * them), then the rest */
static NQ_TARGET void nq_piece(void *arg, int64_t lo, int64_t hi)
{
	const nq_job *j = arg;
	const int64_t M = j->p->M;
	int64_t r = 0;
	for (; r + NQ_ROWS <= M; r += NQ_ROWS)
		nq_rows(j, lo, hi, r, NQ_ROWS);
	switch (M - r) {
	case 1: nq_rows(j, lo, hi, r, 1); break;
	case 2: nq_rows(j, lo, hi, r, 2); break;
	case 3: nq_rows(j, lo, hi, r, 3); break;
	default: break;
	}
}
#endif

bool om_nbits_vnni_ok(const om_nbits *p)
{
#if NQ_HAVE
	__builtin_cpu_init();
	return p->bits == 4 && !p->gidx && __builtin_cpu_supports("avx512vnni") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
#else
	(void)p;
	return false;
#endif
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
	/* columns of ~2^18 multiply-adds a piece */
	const int64_t per = p->M * p->K, grain = per >= (1 << 18) ? 1 : (1 << 18) / per;
	om_par_for(threads, p->N, grain, nq_piece, &j);
	return true;
#else
	(void)p, (void)threads, (void)buf;
	return false;
#endif
}
