/* quant_loops.h — QuantizeLinear/DequantizeLinear's one-pass loops for float32 and 8/16-bit
 * (and int32 DequantizeLinear) tensors, per tensor or per axis, and DynamicQuantizeLinear's
 * two passes (range, then quantize), split over omopt's pool. */
#ifndef OM_QUANT_LOOPS_H
#define OM_QUANT_LOOPS_H

#include <stdbool.h>
#include <stdint.h>

/* x as runs of `inner` elements, run r's parameters sc[r % A] and zp[r % A] (zero points as
 * float, NULL for none); per tensor: A = 1, inner = n */
typedef struct om_qloop {
	const void *x;
	void *y;
	const float *sc, *zp;
	int64_t n, inner, A;
	int32_t qdt; /* the quantized type: y's (QuantizeLinear) or x's (DequantizeLinear) */
	bool quantize;
} om_qloop;

/* whether om_qloop_run computes a QuantizeLinear (float32 x) or DequantizeLinear (float32 y)
 * with quantized type qdt */
bool om_qloop_has(int32_t qdt, bool quantize);

/* y = saturate(rint(x / sc) + zp) (NaN to 0), or y = (x - zp) * sc, in float, as ops_quant.c's
 * general path; on up to `threads` threads (the result does not depend on them) */
void om_qloop_run(const om_qloop *q, int threads);

/* DynamicQuantizeLinear's parameters of x (n floats): uint8 over [min(0, x), max(0, x)], NaN
 * skipped; scale = (max - min) / 255, zero point rint(-min / scale) clamped to [0, 255] (0
 * when the scale is not positive and finite: then every y is 0). One pass over x on up to
 * `threads` threads; the same bits for any count (+0 stays over -0). */
void om_dynq_params(const float *x, int64_t n, int threads, float *scale, uint8_t *zp);

/* y = saturate(rint(x / scale) + zp) as uint8 (NaN to 0), or all 0 when scale is not
 * positive and finite (om_dynq_params's zero point is then 0); on up to `threads` threads */
void om_dynq_quantize(const float *x, int64_t n, float scale, uint8_t zp, uint8_t *y,
		      int threads);

#endif
