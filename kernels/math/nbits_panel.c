/* nbits_panel.c — MatMulNBits' fast-mode prompt panels: W's codes dequantized 64 bytes of a
 * column at a time in the lanes' order of nbits_decode.c (lane j: bytes 4j to 4j + 3 of the
 * piece, one shift and mask a code), A's columns permuted to the same order once a call, so
 * the product is the same sum in another order (float rounding apart). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#include <string.h>

#include "clones.h"
#include "nbits.h"
#include "parallel.h"

enum { PN_PF = 16 }; /* columns ahead prefetched */

typedef struct pn_order {
	const om_nbits *p;
	int64_t row;
	float *x;
} pn_order;

/* rows [lo, hi) of A in the lanes' order: each 64-byte piece's t-th byte of lane l holds
 * codes P (64 h + 4 l + t) + r */
static void pn_order_rows(void *arg, int64_t lo, int64_t hi)
{
	const pn_order *j = arg;
	const om_nbits *p = j->p;
	const int64_t P = 8 / p->bits, supers = j->row / (64 * P);
	for (int64_t m = lo; m < hi; m++) {
		const float *a = p->a + m * p->K;
		float *xm = j->x + m * j->row;
		for (int64_t h = 0; h < supers; h++)
			for (int64_t t = 0; t < 4; t++)
				for (int64_t r = 0; r < P; r++) {
					const int64_t at = P * (64 * h + t) + r;
					float *o = xm + ((h * 4 + t) * P + r) * 16;
					if (at + 4 * P * 15 < p->K)
						for (int64_t l = 0; l < 16; l++)
							o[l] = a[at + 4 * P * l];
					else
						for (int64_t l = 0; l < 16; l++)
							o[l] = at + 4 * P * l < p->K ? a[at + 4 * P * l]
										   : 0;
				}
	}
}

void om_nbits_lane_order(const om_nbits *p, int64_t row, float *x, int threads)
{
	pn_order j = {p, row, x};
	om_par_for(threads, p->M, 1, pn_order_rows, &j);
}

/* lane l of v: block kb0 + idx[l]'s value of a [N][kb] float array, column n, for blocks
 * kb0 + idx[l] < kb (other lanes any finite value of the column): 16 floats loaded at kb0, or
 * the column's last 16 (lanes shifted along: no vector filled lane by lane, whose read after
 * the lanes' stores stalls), lane by lane only for a column of fewer than 16 blocks */
OM_INLINE void pn_blocks(const float *col, int64_t kb, int64_t kb0, const om_nb_i16 *idx,
			 om_nb_f16 *v)
{
	if (kb - kb0 >= 16) {
		memcpy(v, col + kb0, sizeof *v);
	} else if (kb >= 16) {
		om_nb_f16 last;
		memcpy(&last, col + kb - 16, sizeof last);
		*v = OM_NB_PERMUTE(last, *idx + (int32_t)(16 - (kb - kb0)));
		return;
	} else {
		for (int l = 0; l < 16; l++)
			(*v)[l] = kb0 + l < kb ? col[kb0 + l] : 0;
	}
	*v = OM_NB_PERMUTE(*v, *idx);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define PN_AVX2 1
/* The lanes' blocks of a piece as two 8-lane halves (om_nb_lane_blocks): lane l of half h
 * takes block base[h] + idx[h][l] of the piece, at[h][l] that sum */
typedef struct pn_halves {
	int32_t base[2];
	int32_t idx[2][8];
	int32_t at[2][8];
} pn_halves;

/* blocks [kb0, kb0 + cnt) of column n (cnt 1 to 8; the zero points' bits within 4 bytes: at
 * most 8 blocks of 2 or 4 bits, 4 of 8) as 8 lanes (past cnt 0): scales into *s, zero point
 * times scale into *zs */
__attribute__((target("avx2,fma"))) static inline void
pn_blocks8(const om_nbits *p, int64_t n, int64_t kb0, int64_t cnt, const int bits, __m256 *s,
	   __m256 *zs)
{
	const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int32_t)cnt),
					     _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
	*s = _mm256_maskload_ps(p->scales + n * p->kb + kb0, m);
	__m256 z;
	if (p->zpf) {
		z = _mm256_maskload_ps(p->zpf + n * p->kb + kb0, m);
	} else if (!p->zp8) {
		z = _mm256_set1_ps((float)(1 << (bits - 1)));
	} else { /* the bits of blocks kb0 on, from a word of up to 4 bytes */
		const int64_t bit = kb0 * bits, byte = bit / 8;
		const int64_t avail = p->zp_row - byte, take = avail < 4 ? avail : 4;
		const uint8_t *b = p->zp8 + n * p->zp_row + byte;
		uint32_t w = 0;
		if (take == 4)
			memcpy(&w, b, 4);
		else
			for (int64_t i = 0; i < take; i++)
				w |= (uint32_t)b[i] << (8 * i);
		const __m256i sh = _mm256_add_epi32(
			_mm256_set1_epi32((int32_t)(bit % 8)),
			_mm256_mullo_epi32(_mm256_set1_epi32(bits), _mm256_setr_epi32(0, 1, 2, 3, 4, 5,
										 6, 7)));
		z = _mm256_cvtepi32_ps(_mm256_and_si256(
			_mm256_srlv_epi32(_mm256_set1_epi32((int32_t)w), sh),
			_mm256_set1_epi32((1 << bits) - 1)));
	}
	*zs = _mm256_mul_ps(z, *s); /* 0 past cnt: the scales are, the zero points finite */
}

/* piece h of column n (src: its 64 bytes, zero past the column) dequantized, (q - z) s as
 * q s - z s, into o (4 (8 / bits) runs of 16 floats), as two 8-lane halves with AVX2 and FMA:
 * GCC keeps the clones' 16-lane vectors on the stack where the CPU has no 16-lane registers
 * (the panels took a fifth of a decoder's prompt on a Zen 3). Its blocks' scales and zero
 * points (pn_blocks8, 8 at most; more, 2-bit codes in small blocks, one by one into a row of
 * 16) are permuted to the lanes. */
__attribute__((target("avx2,fma"))) static void pn_piece_avx2(const om_nbits *p, int64_t n,
							       int64_t h, const uint8_t *src,
							       const int bits,
							       const pn_halves *hv, float *o)
{
	const int P = 8 / bits;
	const int64_t kb0 = h * 64 / p->blob, per = p->blob >= 64 ? 1 : 64 / p->blob;
	const int64_t cnt = p->kb - kb0 < per ? p->kb - kb0 : per;
	__m256 sc[2], z[2]; /* the halves' lanes */
	if (per <= 8) {
		__m256 s8 = _mm256_setzero_ps(), z8 = s8;
		if (cnt > 0)
			pn_blocks8(p, n, kb0, cnt, bits, &s8, &z8);
		for (int hh = 0; hh < 2; hh++) {
			const __m256i at = _mm256_loadu_si256((const __m256i *)hv->at[hh]);
			sc[hh] = _mm256_permutevar8x32_ps(s8, at);
			z[hh] = _mm256_permutevar8x32_ps(z8, at);
		}
	} else {
		float sb[16 + 8] = {0}, zb[16 + 8] = {0};
		for (int64_t i = 0; i < cnt; i++) {
			sb[i] = p->scales[n * p->kb + kb0 + i];
			zb[i] = om_nbits_zero(p, n, kb0 + i) * sb[i];
		}
		for (int hh = 0; hh < 2; hh++) {
			const __m256i ix = _mm256_loadu_si256((const __m256i *)hv->idx[hh]);
			sc[hh] = _mm256_permutevar8x32_ps(_mm256_loadu_ps(sb + hv->base[hh]), ix);
			z[hh] = _mm256_permutevar8x32_ps(_mm256_loadu_ps(zb + hv->base[hh]), ix);
		}
	}
	const __m256i mask = _mm256_set1_epi32((1 << bits) - 1);
	for (int hh = 0; hh < 2; hh++) {
		const __m256i w = _mm256_loadu_si256((const __m256i *)(src + 32 * hh));
		for (int tb = 0; tb < 4; tb++)
			for (int r = 0; r < P; r++) {
				const __m256i c = _mm256_and_si256(
					_mm256_srl_epi32(w, _mm_cvtsi32_si128(8 * tb + r * bits)),
					mask);
				_mm256_storeu_ps(o + (tb * P + r) * 16 + 8 * hh,
						 _mm256_fmsub_ps(_mm256_cvtepi32_ps(c), sc[hh], z[hh]));
			}
	}
}
#endif

OM_INLINE void pn_cols(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
		       float *t, const int bits)
{
#ifdef PN_AVX2
	const bool halves = om_cpu_avx2_only();
	pn_halves hv;
	om_nb_lane_blocks(p->blob, 8, hv.base, &hv.idx[0][0]);
	for (int hh = 0; hh < 2; hh++)
		for (int l = 0; l < 8; l++)
			hv.at[hh][l] = hv.base[hh] + hv.idx[hh][l];
#endif
	const int P = 8 / bits;
	const int64_t colbytes = p->kb * p->blob, code0 = k0 / P; /* k0: whole pieces */
	om_nb_i16 lane_block;
	for (int l = 0; l < 16; l++)
		lane_block[l] = p->blob < 64 ? (int32_t)(4 * l / p->blob) : 0;
	for (int64_t g = 0; g < w; g++) {
		const int64_t n = n0 + g;
		float *out = t + g * len;
		/* the codes PN_PF columns on: a panel reads a short run of each column, which the
		 * hardware's prefetchers do not follow (the panels took 20% of a [128, 1024] x
		 * [1024, 32000] product's time, most of it waiting on these loads; 12% with this) */
		if (n + PN_PF < p->N) {
			for (int64_t b = code0; b < code0 + len / P && b < colbytes; b += 64)
				__builtin_prefetch(p->b + (n + PN_PF) * colbytes + b);
			/* and their scales (a short run of each column's too: their loads had
			 * taken 40% of the panels' time) */
			const int64_t b0 = code0 / p->blob, b1 = (code0 + len / P) / p->blob;
			for (int64_t b = b0; b <= b1 && b < p->kb; b += 16)
				__builtin_prefetch(p->scales + (n + PN_PF) * p->kb + b);
		}
		for (int64_t h = code0 / 64; h * 64 * P < k0 + len; h++) {
			const int64_t have = colbytes - h * 64;
#ifdef PN_AVX2
			if (halves) {
				uint8_t tmp[64]; /* zeroed only when used: the zeroing had cost a
						  * fifth of the panels' time */
				const uint8_t *src = p->b + n * colbytes + h * 64;
				if (have < 64) {
					memset(tmp, 0, sizeof tmp);
					if (have > 0)
						memcpy(tmp, src, (size_t)have);
					src = tmp;
				}
				pn_piece_avx2(p, n, h, src, bits, &hv, out + (h * 64 * P - k0));
				continue;
			}
#endif
			om_nb_i16 v;
			if (have >= 64) {
				memcpy(&v, p->b + n * colbytes + h * 64, sizeof v);
			} else {
				uint8_t tmp[64] = {0};
				if (have > 0)
					memcpy(tmp, p->b + n * colbytes + h * 64, (size_t)have);
				memcpy(&v, tmp, sizeof v);
			}
			/* lanes' scales and zero points: the piece's block's, or its blocks' */
			om_nb_f16 sv, zv;
			const int64_t kb0 = h * 64 / p->blob;
			if (p->blob >= 64) {
				sv = (om_nb_f16){0} + p->scales[n * p->kb + kb0];
				zv = (om_nb_f16){0} + om_nbits_zero(p, n, kb0);
			} else {
				pn_blocks(p->scales + n * p->kb, p->kb, kb0, &lane_block, &sv);
				if (p->zpf) {
					pn_blocks(p->zpf + n * p->kb, p->kb, kb0, &lane_block, &zv);
				} else if (p->zp8 && kb0 * bits % 8 == 0) {
					om_nb_zeros(p, n, kb0, bits, &zv);
					zv = OM_NB_PERMUTE(zv, lane_block);
				} else if (!p->zp8) {
					zv = (om_nb_f16){0} + om_nbits_zero(p, n, kb0);
				} else { /* 2 bits, blocks of 128: a piece's 2 zero points */
					zv = (om_nb_f16){0};
					const int64_t e = 64 / p->blob;
					for (int64_t l = 0; l < e && kb0 + l < p->kb; l++)
						zv[l] = om_nbits_zero(p, n, kb0 + l);
					zv = OM_NB_PERMUTE(zv, lane_block);
				}
			}
			const om_nb_f16 zs = zv * sv;
			float *o = out + (h * 64 * P - k0);
			_Pragma("GCC unroll 4") for (int tb = 0; tb < 4; tb++)
				_Pragma("GCC unroll 4") for (int r = 0; r < P; r++) {
					const om_nb_f16 q = __builtin_convertvector(
						(v >> (8 * tb + r * bits)) & ((1 << bits) - 1),
						om_nb_f16);
					const om_nb_f16 y = q * sv - zs;
					memcpy(o + (tb * P + r) * 16, &y, sizeof y);
				}
		}
	}
}

OM_CLONES static void pn_any(const om_nbits *p, int64_t n0, int64_t w, int64_t k0,
			     int64_t len, float *t)
{
	if (p->bits == 4)
		pn_cols(p, n0, w, k0, len, t, 4);
	else if (p->bits == 8)
		pn_cols(p, n0, w, k0, len, t, 8);
	else
		pn_cols(p, n0, w, k0, len, t, 2);
}

void om_nbits_dequant_lanes(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
			    float *t)
{
	pn_any(p, n0, w, k0, len, t);
}
