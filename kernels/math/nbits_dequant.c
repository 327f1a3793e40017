/* nbits_dequant.c — MatMulNBits' weight tiles: columns and rows of W dequantized into float
 * rows, 16 codes at a time unpacked in registers (om_nb_unpack16), each weight (code - zero
 * point) * scale in float32 as one lane (no contraction: the same bits on every clone); with
 * g_idx, each lane's scale and zero point those of its row's block. */
#include <string.h>

#include "clones.h"
#include "nbits.h"

OM_INLINE void dq_cols(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
		       float *t, const int bits)
{
	const int64_t colbytes = p->kb * p->blob, end = k0 + len;
	for (int64_t j = 0; j < w; j++) {
		const int64_t n = n0 + j;
		const uint8_t *col = p->b + n * colbytes;
		float *row = t + j * len;
		for (int64_t k = k0 / p->bs; k * p->bs < end; k++) {
			const float z = om_nbits_zero(p, n, k), s = p->scales[n * p->kb + k];
			const int64_t stop = (k + 1) * p->bs < end ? (k + 1) * p->bs : end;
			/* groups of 16 codes: the block size is a multiple of 16 */
			for (int64_t i = k * p->bs; i < stop; i += 16) {
				const int64_t byte = i * bits / 8;
				om_nb_i16 q;
				om_nb_unpack16(col + byte, colbytes - byte, bits, &q);
				om_nb_f16 zv = z + (om_nb_f16){0}, sv = s + (om_nb_f16){0}; /* all z, s */
				for (int64_t l = 0; p->gidx && l < 16 && i + l < p->K; l++) {
					const int64_t g = p->gidx[i + l];
					zv[l] = om_nbits_zero(p, n, g), sv[l] = p->scales[n * p->kb + g];
				}
				const om_nb_f16 v = (__builtin_convertvector(q, om_nb_f16) - zv) * sv;
				if (i + 16 <= stop)
					memcpy(row + i - k0, &v, sizeof v);
				else
					for (int64_t l = 0; l < stop - i; l++)
						row[i - k0 + l] = v[l];
			}
		}
	}
}

OM_CLONES static void dq_any(const om_nbits *p, int64_t n0, int64_t w, int64_t k0,
			     int64_t len, float *t)
{
	if (p->bits == 4)
		dq_cols(p, n0, w, k0, len, t, 4);
	else if (p->bits == 8)
		dq_cols(p, n0, w, k0, len, t, 8);
	else
		dq_cols(p, n0, w, k0, len, t, 2);
}

void om_nbits_dequant(const om_nbits *p, int64_t n0, int64_t w, int64_t k0, int64_t len,
		      float *t)
{
	dq_any(p, n0, w, k0, len, t);
}
