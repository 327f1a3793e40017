/* gqa_kvq.c — GroupQueryAttention's quantized KV caches (k/v_quant_type PER_TENSOR or
 * PER_CHANNEL, kv_cache_bit_width 8 or 4): a cache row's codes from D floats and back, with
 * ONNX Runtime 1.30's arithmetic (symmetric, no zero point; int4 codes biased by 8, two a
 * byte, the even element in the low nibble, an odd D's last high nibble 8). */
#include <math.h>

#include "gqa.h"

static float kvq_scale(const gqa_plan *p, const float *scale, int64_t i)
{
	return p->sc_head ? scale[i] : scale[0];
}

static int kvq_code(float x, float scale, int lo, int hi)
{
	const float inv = scale != 0.0f ? 1.0f / scale : 1.0f;
	const float q = rintf(x * inv);
	return q < (float)lo ? lo : q > (float)hi ? hi : (int)q;
}

void gqa_kv_quantize(const gqa_plan *p, const float *scale, const float *x, void *row)
{
	if (p->qbits == 8) {
		int8_t *r = row;
		for (int64_t i = 0; i < p->D; i++)
			r[i] = (int8_t)kvq_code(x[i], kvq_scale(p, scale, i), -128, 127);
		return;
	}
	uint8_t *r = row;
	for (int64_t i = 0; i < p->D; i += 2) {
		const int lo = kvq_code(x[i], kvq_scale(p, scale, i), -8, 7);
		const int hi = i + 1 < p->D ? kvq_code(x[i + 1], kvq_scale(p, scale, i + 1), -8, 7)
					    : 0;
		r[i / 2] = (uint8_t)(((lo + 8) & 15) | ((hi + 8) & 15) << 4);
	}
}

void gqa_kv_dequantize(const gqa_plan *p, const float *scale, const void *rows, int64_t n,
		       float *x)
{
	const int8_t *c8 = rows;
	const uint8_t *c4 = rows;
	for (int64_t r = 0; r < n; r++, x += p->D)
		for (int64_t i = 0; i < p->D; i++) {
			const int code = p->qbits == 8
				? c8[r * p->crow + i]
				: (c4[r * p->crow + i / 2] >> (i & 1 ? 4 : 0) & 15) - 8;
			x[i] = (float)code * kvq_scale(p, scale, i);
		}
}
