/* qparam.h — the one-value scale and zero point of ONNX Runtime's QLinear ops (a float scale,
 * an int8/uint8 zero point of the data's type or none) and 8-bit element reads and stores
 * (always inlined: cloned loops call them). */
#ifndef OM_QPARAM_H
#define OM_QPARAM_H

#include <stdbool.h>
#include <stdint.h>

#include "clones.h"
#include "op.h"

typedef struct om_qparam {
	float scale;
	int32_t zp; /* 0 when the node gives none */
} om_qparam;

static inline bool om_is_q8(int32_t dt)
{
	return dt == OM_INT8 || dt == OM_UINT8;
}

/**
 * Checks input `si` (a float scale of one element) and input `zi` (absent, or one element of
 * type dt; zi < 0: no slot): OM_ERR_INVALID_MODEL naming the node otherwise (ONNX Runtime's
 * "scalar or 1D tensor of size 1"). With p, reads both (their data must be there).
 */
om_kind om_qparam_get(om_ctx *c, int si, int zi, int32_t dt, om_qparam *p);

/** Element k of 8-bit data (int8 when sgn, else uint8) as int32. */
OM_INLINE int32_t om_q8_at(const void *d, int64_t k, bool sgn)
{
	return sgn ? ((const int8_t *)d)[k] : ((const uint8_t *)d)[k];
}

/** Element k of an int8 or uint8 tensor (a zero point, a weight) as int32. */
OM_INLINE int32_t om_q8_elem(const om_tensor *t, int64_t k)
{
	return om_q8_at(t->data, k, t->dtype == OM_INT8);
}

/** The range of the 8-bit type as floats. */
OM_INLINE void om_q8_range(bool sgn, float *lo, float *hi)
{
	*lo = sgn ? -128.0f : 0.0f;
	*hi = sgn ? 127.0f : 255.0f;
}

/** v (an integer value held in a float, or NaN) saturated to the 8-bit type and stored as its
 *  byte (NaN stores 0, as a quantizer's saturating conversion). */
OM_INLINE uint8_t om_q8_byte(float v, bool sgn)
{
	float lo, hi;
	om_q8_range(sgn, &lo, &hi);
	v = v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
	return (uint8_t)(int32_t)v;
}

#endif
