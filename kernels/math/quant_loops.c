/* quant_loops.c — QuantizeLinear/DequantizeLinear's one-pass loops (quant_loops.h): each output
 * element computed alone in float with IEEE division and rint (every clone gives the same
 * bytes as the general path of ops_quant.c). */
#include <math.h>

#include "clones.h"
#include "omopt.h"
#include "parallel.h"
#include "quant_loops.h"

/* the least elements worth a thread */
enum { QL_GRAIN = 16384 };

/* y[i] = saturate(rint(x[i] / s) + z) for one output type T in [lo, hi] */
#define QL_QUANT(NAME, T, LO, HI) \
	OM_CLONES static void NAME(const float *x, int64_t n, float s, float z, T *y) \
	{ \
		for (int64_t i = 0; i < n; i++) { \
			const float q = rintf(x[i] / s) + z; \
			y[i] = (T)(q != q ? 0 : q < (LO) ? (LO) : q > (HI) ? (HI) : q); \
		} \
	}
QL_QUANT(ql_q_i8, int8_t, -128.0f, 127.0f)
QL_QUANT(ql_q_u8, uint8_t, 0.0f, 255.0f)
QL_QUANT(ql_q_i16, int16_t, -32768.0f, 32767.0f)
QL_QUANT(ql_q_u16, uint16_t, 0.0f, 65535.0f)

/* y[i] = ((float)x[i] - z) * s for one input type T */
#define QL_DEQUANT(NAME, T) \
	OM_CLONES static void NAME(const T *x, int64_t n, float s, float z, float *y) \
	{ \
		for (int64_t i = 0; i < n; i++) \
			y[i] = ((float)x[i] - z) * s; \
	}
QL_DEQUANT(ql_d_i8, int8_t)
QL_DEQUANT(ql_d_u8, uint8_t)
QL_DEQUANT(ql_d_i32, int32_t)

bool om_qloop_has(int32_t qdt, bool quantize)
{
	if (quantize)
		return qdt == OM_INT8 || qdt == OM_UINT8 || qdt == OM_INT16 || qdt == OM_UINT16;
	return qdt == OM_INT8 || qdt == OM_UINT8 || qdt == OM_INT32;
}

/* elements [i, i + k) with parameter p */
static void ql_span(const om_qloop *q, int64_t i, int64_t k, int64_t p)
{
	const float s = q->sc[p], z = q->zp ? q->zp[p] : 0;
	if (q->quantize) {
		const float *x = (const float *)q->x + i;
		switch (q->qdt) {
		case OM_INT8: ql_q_i8(x, k, s, z, (int8_t *)q->y + i); break;
		case OM_UINT8: ql_q_u8(x, k, s, z, (uint8_t *)q->y + i); break;
		case OM_INT16: ql_q_i16(x, k, s, z, (int16_t *)q->y + i); break;
		default: ql_q_u16(x, k, s, z, (uint16_t *)q->y + i); break;
		}
		return;
	}
	float *y = (float *)q->y + i;
	switch (q->qdt) {
	case OM_INT8: ql_d_i8((const int8_t *)q->x + i, k, s, z, y); break;
	case OM_UINT8: ql_d_u8((const uint8_t *)q->x + i, k, s, z, y); break;
	default: ql_d_i32((const int32_t *)q->x + i, k, s, z, y); break;
	}
}

/* elements [lo, hi): the runs they cross, each with its parameter */
static void ql_piece(void *arg, int64_t lo, int64_t hi)
{
	const om_qloop *q = arg;
	while (lo < hi) {
		const int64_t r = lo / q->inner, end = (r + 1) * q->inner;
		const int64_t k = (end < hi ? end : hi) - lo;
		ql_span(q, lo, k, r % q->A);
		lo += k;
	}
}

void om_qloop_run(const om_qloop *q, int threads)
{
	if (q->n > 0 && q->inner > 0)
		om_par_for(threads, q->n, QL_GRAIN, ql_piece, (void *)q);
}
