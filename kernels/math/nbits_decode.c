/* nbits_decode.c — MatMulNBits' fast decoding product (fast mode, at most OM_NBITS_DECODE_ROWS
 * rows of A): a column's codes read once, 16 bytes at a time as 16 int32 lanes (its four
 * words, four times: om_nb_load16), each lane's byte's 8 / bits codes taken out by a shift and
 * a mask and converted to float, times A's matching columns (A laid out beforehand as 8 / bits
 * planes in the lanes' byte order: plane r holds A[m][P b + r] where lane j of chunk c reads
 * byte b = 16 c + ND_BYTE(j)), summed in 16 lanes a row per block, times the block's scale;
 * four columns side by side (two for 3-4 rows), A's chunk loaded once for them. The zero
 * points go through A's block sums (sum (q - z) s a = sum q s a - sum z s (sum a)), 16 blocks
 * at a time. Float rounding apart from exact arithmetic: FMAs and another summation order. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif
#include <stdlib.h>
#include <string.h>

#include "clones.h"
#include "nbits.h"
#include "parallel.h"

enum { ND_ROWS = OM_NBITS_DECODE_ROWS, ND_GROUP = 4 };

/* the byte of its 16-byte chunk that lane l unpacks (om_nb_load16 gives lane l the word
 * l % 4, and the lane shifts out its byte l / 4) */
#define ND_BYTE(l) (4 * ((l) % 4) + (l) / 4)

/* v[m][g] = 0 for the rows and columns in use (unrolled: the sums stay in registers) */
#define ND_ZERO(v, M, G)                                    \
	_Pragma("GCC unroll 4") for (int m_ = 0; m_ < (M); m_++) \
		_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++) \
			v[m_][g_] = (om_nb_f16){0}

typedef struct nd_job {
	const om_nbits *p;
	int64_t chunks;   /* 16-byte chunks of a column (the last one zero-padded) */
	int64_t span;     /* floats of a plane: 16 chunks */
	const float *x;   /* A's planes [M][8 / bits][span] (nd_prepare), 0 past K */
	const float *sum; /* A's block sums [M][kb] */
} nd_job;

/* the zero points of column n's blocks [k0, k0 + 16) into z (lanes past kb: 0) */
OM_INLINE void nd_zeros(const om_nbits *p, int64_t n, int64_t k0, const int bits, om_nb_f16 *z)
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

/* sum over column n's blocks of zero point * scale * A's block sum, for each row */
OM_INLINE void nd_offsets(const nd_job *j, int64_t n, const int M, const int bits, float *off)
{
	const om_nbits *p = j->p;
	const float *s = p->scales + n * p->kb;
	om_nb_f16 acc[ND_ROWS] = {{0}};
	for (int64_t k = 0; k < p->kb; k += 16) {
		om_nb_f16 z, sv = {0};
		nd_zeros(p, n, k, bits, &z);
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

/* chunk h's codes r of each of the G columns from n times plane r of A's M rows, into
 * part[m][g] (w: the G columns' chunks as om_nb_load16 gives them) */
#define ND_CHUNK(j, h, w, part, M, bits, G)                                                 \
	_Pragma("GCC unroll 4") for (int r_ = 0; r_ < 8 / (bits); r_++)                  \
	{                                                                                     \
		om_nb_f16 q_[ND_GROUP];                                                       \
		_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++) q_[g_] =             \
			__builtin_convertvector((w[g_] >> (nd_byte_shift + r_ * (bits))) &     \
							((1 << (bits)) - 1),                  \
						om_nb_f16);                                   \
		_Pragma("GCC unroll 4") for (int m_ = 0; m_ < (M); m_++)                      \
		{                                                                             \
			om_nb_f16 x_;                                                         \
			memcpy(&x_, (j)->x + (m_ * 8 / (bits) + r_) * (j)->span + (h) * 16,   \
			       sizeof x_);                                                    \
			_Pragma("GCC unroll 4") for (int g_ = 0; g_ < (G); g_++)              \
				part[m_][g_] += x_ * q_[g_];                                   \
		}                                                                             \
	}

/* lane l's shift to its byte within its word (om_nb_load16, ND_BYTE) */
static const om_nb_i16 nd_byte_shift = {0, 0, 0, 0, 8, 8, 8, 8, 16, 16, 16, 16, 24, 24, 24, 24};

/* the G columns' sums from n, blocks of 16 bytes or more: per block, its chunks' products
 * summed, times the block's scale */
OM_INLINE void nd_blocks(const nd_job *j, int64_t n, const int M, const int bits, const int G,
			 om_nb_f16 tot[ND_ROWS][ND_GROUP])
{
	const om_nbits *p = j->p;
	const int64_t colbytes = p->kb * p->blob, step = p->blob / 16;
	const uint8_t *b = p->b + n * colbytes;
	const float *s = p->scales + n * p->kb;
	for (int64_t k = 0; k < p->kb; k++) {
		om_nb_f16 part[ND_ROWS][ND_GROUP];
		ND_ZERO(part, M, G);
		for (int64_t h = k * step; h < (k + 1) * step; h++) {
			om_nb_i16 w[ND_GROUP];
			_Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
				om_nb_load16(b + g * colbytes + h * 16, 16, &w[g]);
			ND_CHUNK(j, h, w, part, M, bits, G);
		}
		_Pragma("GCC unroll 4") for (int m = 0; m < M; m++)
			_Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
				tot[m][g] += s[g * p->kb + k] * part[m][g];
	}
}

/* the same for blocks of 4 or 8 bytes: each chunk's lanes scaled by their own blocks' scales
 * (the last chunk zero-padded) */
OM_INLINE void nd_lanes(const nd_job *j, int64_t n, const int M, const int bits, const int G,
			om_nb_f16 tot[ND_ROWS][ND_GROUP])
{
	const om_nbits *p = j->p;
	const int64_t colbytes = p->kb * p->blob;
	for (int64_t h = 0; h < j->chunks; h++) {
		om_nb_f16 part[ND_ROWS][ND_GROUP];
		ND_ZERO(part, M, G);
		om_nb_i16 w[ND_GROUP];
		_Pragma("GCC unroll 4") for (int g = 0; g < G; g++)
			om_nb_load16(p->b + (n + g) * colbytes + h * 16, colbytes - h * 16, &w[g]);
		ND_CHUNK(j, h, w, part, M, bits, G);
		_Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
			om_nb_f16 sv;
			for (int l = 0; l < 16; l++) {
				const int64_t k = (h * 16 + ND_BYTE(l)) / p->blob;
				sv[l] = k < p->kb ? p->scales[(n + g) * p->kb + k] : 0;
			}
			_Pragma("GCC unroll 4") for (int m = 0; m < M; m++)
				tot[m][g] += sv * part[m][g];
		}
	}
}

/* Y's columns [n, n + G) for M rows of A and codes of `bits` (constants where inlined): the
 * G columns side by side, each chunk of A loaded once for all of them */
OM_INLINE void nd_group(const nd_job *j, int64_t n, const int M, const int bits, const int G)
{
	const om_nbits *p = j->p;
	om_nb_f16 tot[ND_ROWS][ND_GROUP];
	ND_ZERO(tot, M, G);
	if (p->blob >= 16)
		nd_blocks(j, n, M, bits, G, tot);
	else
		nd_lanes(j, n, M, bits, G, tot);
	_Pragma("GCC unroll 4") for (int g = 0; g < G; g++) {
		float off[ND_ROWS];
		nd_offsets(j, n + g, M, bits, off);
		for (int m = 0; m < M; m++) {
			float y = 0;
			for (int l = 0; l < 16; l++)
				y += tot[m][g][l];
			y -= off[m];
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

OM_CLONES static void nd_piece(void *arg, int64_t lo, int64_t hi)
{
	const nd_job *j = arg;
	switch (j->p->M) {
	case 1: ND_BITS(1); break;
	case 2: ND_BITS(2); break;
	case 3: ND_BITS(3); break;
	default: ND_BITS(4); break;
	}
}

/* A's rows as planes (zero past K) and their block sums */
static void nd_prepare(const om_nbits *p, int64_t span, float *x, float *sum)
{
	const int64_t P = 8 / p->bits;
	for (int64_t m = 0; m < p->M; m++) {
		const float *a = p->a + m * p->K;
		for (int64_t r = 0; r < P; r++) {
			float *plane = x + (m * P + r) * span;
			for (int64_t i = 0; i < span; i++) {
				const int64_t at = P * (i - i % 16 + ND_BYTE(i % 16)) + r;
				plane[i] = at < p->K ? a[at] : 0;
			}
		}
		for (int64_t k = 0; k < p->kb; k++) {
			const int64_t end = (k + 1) * p->bs < p->K ? (k + 1) * p->bs : p->K;
			float t = 0;
			for (int64_t i = k * p->bs; i < end; i++)
				t += a[i];
			sum[m * p->kb + k] = t;
		}
	}
}

bool om_nbits_decode(const om_nbits *p, int threads)
{
	if (p->M < 1 || p->M > ND_ROWS)
		return false;
	const int64_t chunks = (p->kb * p->blob + 15) / 16, span = 16 * chunks;
	const int64_t P = 8 / p->bits;
	float *buf = malloc(sizeof(float) * (size_t)(p->M * (P * span + p->kb)));
	if (!buf)
		return false;
	nd_job j = {p, chunks, span, buf, buf + p->M * P * span};
	nd_prepare(p, span, buf, buf + p->M * P * span);
	/* columns of ~2^18 multiply-adds a piece */
	const int64_t per = p->M * p->K, grain = per >= (1 << 18) ? 1 : (1 << 18) / per;
	om_par_for(threads, p->N, grain, nd_piece, &j);
	free(buf);
	return true;
}
