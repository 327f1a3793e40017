/* subbyte.h — elements of the sub-byte types (4-bit: int4, uint4, float4e2m1; 2-bit: int2,
 * uint2): 8 / bits elements per byte, element 0 in the lowest bits (ONNX packing). */
#ifndef OM_SUBBYTE_H
#define OM_SUBBYTE_H

#include <stdint.h>

/** Element i (its bits, zero-extended) of a packed tensor of `bits` (2 or 4) bits each. */
static inline uint8_t om_sub_get(const void *src, int64_t i, int bits)
{
	const int per = 8 / bits, sh = (int)(i % per) * bits;
	return (uint8_t)((((const uint8_t *)src)[i / per] >> sh) & ((1u << bits) - 1));
}

/** Sets element i of a packed tensor to the low `bits` bits of v; the other elements stay. */
static inline void om_sub_set(void *dst, int64_t i, int bits, uint8_t v)
{
	const int per = 8 / bits, sh = (int)(i % per) * bits;
	const unsigned mask = ((1u << bits) - 1) << sh;
	uint8_t *b = &((uint8_t *)dst)[i / per];
	*b = (uint8_t)((*b & ~mask) | (((unsigned)v << sh) & mask));
}

/** Sign-extends the low `bits` bits of v. */
static inline int64_t om_sub_signed(uint8_t v, int bits)
{
	const unsigned m = 1u << (bits - 1);
	return (int64_t)((v ^ m) & ((m << 1) - 1)) - (int64_t)m;
}

#endif
