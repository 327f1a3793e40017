/* nbits_decode.c — MatMulNBits' fast decoding product (fast mode, at most OM_NBITS_DECODE_ROWS
 * rows of A): a column's codes read once, 64 bytes at a time as 16 int32 lanes (lane j: bytes
 * 4j to 4j + 3), the 4 x 8 / bits codes of each lane taken out by one shift and a mask each
 * (a vector per byte t of the word and code r of the byte) and converted to float, times A's
 * matching columns (laid out beforehand in that order: nd_prepare), summed in 16 lanes a
 * row, times the blocks' scales (a block's when it spans the 64 bytes, else each lane's own,
 * permuted from the column's scales); four columns side by side (two for 3-4 rows), A loaded
 * once for them. The zero points go through A's block sums (sum (q - z) s a = sum q s a -
 * sum z s (sum a)), 16 blocks at a time. Float rounding apart from exact arithmetic: FMAs and
 * another summation order. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "nbits.h"
#include "parallel.h"

/* A piece's 16 lanes as ND_H vectors of ND_LANES: one of 16 here (AVX-512, and the baseline
 * clone); nbits_decode_avx2.c builds this file again with two of 8, as GCC keeps 16-lane
 * vectors on the stack where the CPU has no 16-lane registers (a decoder's step 3.8 -> 3.0 ms
 * on a Zen 3 in 8 lanes). Each lane's sums are the same either way. */
#ifndef ND_LANES
#define ND_LANES 16
#endif
enum { ND_ROWS = OM_NBITS_DECODE_ROWS, ND_GROUP = 4, ND_PF = 16, ND_H = 16 / ND_LANES };
typedef float nd_vf __attribute__((vector_size(ND_LANES * sizeof(float))));
typedef int32_t nd_vi __attribute__((vector_size(ND_LANES * sizeof(int32_t))));

/* v[m][g][.] = 0 for the rows and columns in use (unrolled: the sums stay in registers) */
#define ND_ZERO(v, M, G)                                                  \
	_Pragma("GCC unroll 4") for (int m_ = 0; m_ < (M); m_++)           \
		_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++)   \
			_Pragma("GCC unroll 2") for (int h_ = 0; h_ < ND_H; h_++) \
				v[m_][g_][h_] = (nd_vf){0}

typedef struct nd_job {
	const om_nbits *p;
	int64_t supers;   /* 64-byte pieces of a column (the last one zero-padded) */
	int64_t row;      /* floats of a row of x: 64 (8 / bits) a piece */
	const float *x;   /* A [M][supers][4 (8 / bits)][16] (nd_prepare), 0 past K */
	const float *sum; /* A's block sums [M][kb] */
	/* blocks under 64 bytes: lane j's block less the piece's first, as the first block of
	 * each ND_LANES lanes (base) and the rest's offsets from it (idx) */
	int32_t base[ND_H];
	nd_vi idx[ND_H];
} nd_job;

/* sum over column n's blocks of zero point * scale * A's block sum, for each row */
OM_INLINE void nd_offsets(const nd_job *j, int64_t n, const int M, const int bits, float *off)
{
	const om_nbits *p = j->p;
	const float *s = p->scales + n * p->kb;
	om_nb_f16 acc[ND_ROWS] = {{0}};
	for (int64_t k = 0; k < p->kb; k += 16) {
		om_nb_f16 z, sv = {0};
		om_nb_zeros(p, n, k, bits, &z);
		if (k + 16 <= p->kb)
			memcpy(&sv, s + k, sizeof sv);
		else
			for (int64_t l = 0; l < p->kb - k; l++)
				sv[l] = s[k + l];
		const om_nb_f16 zs = z * sv;
		for (int m = 0; m < M; m++) {
			om_nb_f16 a = {0};
			if (k + 16 <= p->kb)
				memcpy(&a, j->sum + m * p->kb + k, sizeof a);
			else
				for (int64_t l = 0; l < p->kb - k; l++)
					a[l] = j->sum[m * p->kb + k + l];
			acc[m] += zs * a;
		}
	}
	for (int m = 0; m < M; m++) {
		float t = 0;
		for (int l = 0; l < 16; l++)
			t += acc[m][l];
		off[m] = t;
	}
}

/* piece h of the G columns from n (w: their 16 words each, ND_H vectors) times A's M rows
 * into part[m][g]: byte t of each word, code r of the byte (the r loop has no unroll pragma:
 * GCC ignores one, with a warning -Werror makes fatal, where bits is not a constant, as in the
 * debug builds) */
#define ND_PIECE(j, h, w, part, M, bits, G)                                                 \
	_Pragma("GCC unroll 4") for (int t_ = 0; t_ < 4; t_++)                            \
		for (int r_ = 0; r_ < 8 / (bits); r_++) /* no unroll pragma: see above */    \
	{                                                                                     \
		nd_vf q_[ND_GROUP][ND_H];                                                     \
		_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++)                      \
			_Pragma("GCC unroll 2") for (int h_ = 0; h_ < ND_H; h_++) q_[g_][h_] = \
				__builtin_convertvector(                                      \
					(w[g_][h_] >> (8 * t_ + r_ * (bits))) &               \
						((1 << (bits)) - 1),                          \
					nd_vf);                                               \
		_Pragma("GCC unroll 4") for (int m_ = 0; m_ < (M); m_++)                      \
			_Pragma("GCC unroll 2") for (int h_ = 0; h_ < ND_H; h_++)             \
		{                                                                             \
			nd_vf x_;                                                             \
			memcpy(&x_,                                                           \
			       (j)->x + m_ * (j)->row +                                       \
				       ((h) * 32 / (bits) + t_ * 8 / (bits) + r_) * 16 +      \
				       h_ * ND_LANES,                                         \
			       sizeof x_);                                                    \
			_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++)              \
				part[m_][g_][h_] += x_ * q_[g_][h_];                           \
		}                                                                             \
	}

/* the 64 bytes of piece h of the G columns from n as int32 words; `tail` (a constant): maybe
 * the column's last piece, zero past its end */
OM_INLINE void nd_load(const om_nbits *p, int64_t n, int64_t h, const int G, const bool tail,
		       nd_vi w[ND_GROUP][ND_H])
{
	const int64_t colbytes = p->kb * p->blob;
	_Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
		const uint8_t *b = p->b + (n + g) * colbytes + h * 64;
		/* the same bytes ND_PF columns on, and their scales: the weights stream from
		 * memory (a decoder's are far over the caches), and the hardware's prefetchers do
		 * not follow G interleaved streams of a few lines each far enough ahead */
		if (n + g + ND_PF < p->N) {
			__builtin_prefetch(b + ND_PF * colbytes);
			if (h % 4 == 0)
				__builtin_prefetch(p->scales + (n + g + ND_PF) * p->kb +
						   h * 64 / p->blob);
		}
		if (!tail) {
			memcpy(w[g], b, sizeof w[g]);
		} else {
			const int64_t have = colbytes - h * 64;
			uint8_t t[64] = {0};
			memcpy(t, b, (size_t)(have < 64 ? have : 64));
			memcpy(w[g], t, sizeof w[g]);
		}
	}
}

/* the G columns' sums from n, blocks of 64 bytes or more (whole pieces): per block, its
 * pieces' products summed, times the block's scale */
OM_INLINE void nd_blocks(const nd_job *j, int64_t n, const int M, const int bits, const int G,
			 nd_vf tot[ND_ROWS][ND_GROUP][ND_H])
{
	const om_nbits *p = j->p;
	const int64_t step = p->blob / 64;
	const float *s = p->scales + n * p->kb;
	for (int64_t k = 0; k < p->kb; k++) {
		nd_vf part[ND_ROWS][ND_GROUP][ND_H];
		ND_ZERO(part, M, G);
		for (int64_t h = k * step; h < (k + 1) * step; h++) {
			nd_vi w[ND_GROUP][ND_H];
			nd_load(p, n, h, G, false, w);
			ND_PIECE(j, h, w, part, M, bits, G);
		}
		_Pragma("GCC unroll 4") for (int m = 0; m < M; m++)
			_Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
				_Pragma("GCC unroll 2") for (int hh = 0; hh < ND_H; hh++)
					tot[m][g][hh] += s[g * p->kb + k] * part[m][g][hh];
	}
}

/* piece h for blocks of 4 to 32 bytes: its lanes scaled by their own blocks' scales (64 / blob
 * blocks a piece, permuted to the lanes); `tail`: the column's last piece, maybe partial */
OM_INLINE void nd_lane_piece(const nd_job *j, int64_t n, int64_t h, const int M, const int bits,
			     const int G, const bool tail, nd_vf tot[ND_ROWS][ND_GROUP][ND_H])
{
	const om_nbits *p = j->p;
	const int64_t per = 64 / p->blob, k0 = h * per;
	const float *s = p->scales + n * p->kb + k0;
	nd_vf part[ND_ROWS][ND_GROUP][ND_H];
	ND_ZERO(part, M, G);
	nd_vi w[ND_GROUP][ND_H];
	nd_load(p, n, h, G, tail, w);
	ND_PIECE(j, h, w, part, M, bits, G);
	_Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
		_Pragma("GCC unroll 2") for (int hh = 0; hh < ND_H; hh++) {
		/* the ND_LANES scales from the half's first block (all in the array but in the
		 * column's last piece), permuted to the lanes */
		nd_vf sv = {0};
		const int64_t b0 = j->base[hh];
		if (!tail) {
			memcpy(&sv, s + g * p->kb + b0, sizeof sv);
		} else {
			for (int64_t l = 0; l < ND_LANES && b0 + l < per && k0 + b0 + l < p->kb; l++)
				sv[l] = s[g * p->kb + b0 + l];
		}
		sv = OM_NB_PERMUTE(sv, j->idx[hh]);
		_Pragma("GCC unroll 4") for (int m = 0; m < M; m++)
			tot[m][g][hh] += sv * part[m][g][hh];
	}
}

/* the G columns' sums from n, blocks of 4 to 32 bytes; the pieces whose 16 scales from their
 * first block are all in the array (all but the last column's last few) take the fast path */
OM_INLINE void nd_lanes(const nd_job *j, int64_t n, const int M, const int bits, const int G,
			nd_vf tot[ND_ROWS][ND_GROUP][ND_H])
{
	const om_nbits *p = j->p;
	const int64_t per = 64 / p->blob, colbytes = p->kb * p->blob;
	const int64_t avail = (p->N - n - (G - 1)) * p->kb; /* scales from the last column's */
	int64_t h = 0;
	for (; (h + 1) * 64 <= colbytes && h * per + 16 <= avail; h++)
		nd_lane_piece(j, n, h, M, bits, G, false, tot);
	for (; h < j->supers; h++)
		nd_lane_piece(j, n, h, M, bits, G, true, tot);
}

/* Y's columns [n, n + G) for M rows of A and codes of `bits` (constants where inlined): the
 * G columns side by side, each chunk of A loaded once for all of them */
OM_INLINE void nd_group(const nd_job *j, int64_t n, const int M, const int bits, const int G)
{
	const om_nbits *p = j->p;
	nd_vf tot[ND_ROWS][ND_GROUP][ND_H];
	ND_ZERO(tot, M, G);
	if (p->blob >= 64)
		nd_blocks(j, n, M, bits, G, tot);
	else
		nd_lanes(j, n, M, bits, G, tot);
	_Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
		float off[ND_ROWS];
		nd_offsets(j, n + g, M, bits, off);
		for (int m = 0; m < M; m++) {
			float y = 0;
			for (int hh = 0; hh < ND_H; hh++)
				for (int l = 0; l < ND_LANES; l++)
					y += tot[m][g][hh][l];
			y -= off[m];
			if (m < p->M)
				p->y[m * p->N + n + g] = p->bias ? y + p->bias[n + g] : y;
		}
	}
}

/* columns [lo, hi): groups of G (4 for 1 or 2 rows, 2 for more: the sums stay in
 * registers), then one at a time */
OM_INLINE void nd_cols(const nd_job *j, int64_t lo, int64_t hi, const int M, const int bits)
{
	const int G = M <= 2 ? 4 : 2;
	int64_t n = lo;
	for (; n + G <= hi; n += G)
		nd_group(j, n, M, bits, G);
	for (; n < hi; n++)
		nd_group(j, n, M, bits, 1);
}

#define ND_BITS(M)                                    \
	do {                                          \
		if (j->p->bits == 4)                  \
			nd_cols(j, lo, hi, M, 4);     \
		else if (j->p->bits == 8)             \
			nd_cols(j, lo, hi, M, 8);     \
		else                                  \
			nd_cols(j, lo, hi, M, 2);     \
	} while (0)

/* 3 rows run as 4 (a zero row, not written): one instantiation fewer a clone */
#if ND_LANES == 16
OM_CLONES
#endif
static void nd_piece(void *arg, int64_t lo, int64_t hi)
{
	const nd_job *j = arg;
	switch (j->p->M) {
	case 1: ND_BITS(1); break;
	case 2: ND_BITS(2); break;
	default: ND_BITS(4); break;
	}
}

/* A's rows in the pieces' lane order (om_nbits_lane_order) and their block sums */
static void nd_prepare(const om_nbits *p, const nd_job *j, float *x, float *sum)
{
	om_nbits_lane_order(p, j->row, x, 1);
	for (int64_t m = 0; m < p->M; m++) {
		const float *a = p->a + m * p->K;
		for (int64_t k = 0; k < p->kb; k++) {
			const int64_t end = (k + 1) * p->bs < p->K ? (k + 1) * p->bs : p->K;
			float t = 0;
			for (int64_t i = k * p->bs; i < end; i++)
				t += a[i];
			sum[m * p->kb + k] = t;
		}
	}
}

/* om_nbits_decode in this file's lanes */
static bool nd_run(const om_nbits *p, int threads)
{
	if (p->M < 1 || p->M > ND_ROWS)
		return false;
	const int64_t supers = (p->kb * p->blob + 63) / 64, row = supers * 64 * (8 / p->bits);
	const int64_t rows = p->M == 3 ? 4 : p->M; /* nd_piece */
	float *buf = calloc((size_t)(rows * (row + p->kb)), sizeof(float));
	if (!buf)
		return false;
	nd_job j = {p, supers, row, buf, buf + rows * row, {0}, {{0}}};
	int32_t idx[16];
	om_nb_lane_blocks(p->blob, ND_LANES, j.base, idx);
	memcpy(j.idx, idx, sizeof idx);
	nd_prepare(p, &j, buf, buf + rows * row);
	/* columns of ~2^16 multiply-adds a piece (~15 us): a decoder's 512 x 512 projections in
	 * 4 pieces, not 1 (2^18: one thread of two took most of the MLPs' and all of the
	 * attention projections' columns) */
	const int64_t per = p->M * p->K, grain = per >= (1 << 16) ? 1 : (1 << 16) / per;
	om_par_for(threads, p->N, grain, nd_piece, &j);
	free(buf);
	return true;
}

#if ND_LANES == 16
bool om_nbits_decode(const om_nbits *p, int threads)
{
#if OM_NBITS_DECODE8
	if (om_cpu_avx2_only())
		return om_nbits_decode8(p, threads);
#endif
	return nd_run(p, threads);
}
#else
bool om_nbits_decode8(const om_nbits *p, int threads)
{
	return nd_run(p, threads);
}
#endif
