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

/* the codes of one row as floats (int4: the low nibble first) */
static void kvq_codes(const gqa_plan *p, const void *row, float *x)
{
	const int64_t D = p->D;
	if (p->qbits == 8) {
		const int8_t *c = row;
		for (int64_t i = 0; i < D; i++)
			x[i] = (float)c[i];
		return;
	}
	const uint8_t *c = row;
	for (int64_t i = 0; i < D / 2; i++) {
		x[2 * i] = (float)((c[i] & 15) - 8);
		x[2 * i + 1] = (float)((c[i] >> 4) - 8);
	}
	if (D & 1)
		x[D - 1] = (float)((c[D / 2] & 15) - 8);
}

void gqa_kv_dequantize(const gqa_plan *p, const float *scale, const void *rows, int64_t n,
		       float *x)
{
	const int64_t D = p->D;
	const float s = scale[0];
	for (int64_t r = 0; r < n; r++, x += D) {
		kvq_codes(p, (const uint8_t *)rows + (size_t)(r * p->crow), x);
		if (p->sc_head)
			for (int64_t i = 0; i < D; i++)
				x[i] *= scale[i];
		else
			for (int64_t i = 0; i < D; i++)
				x[i] *= s;
	}
}
