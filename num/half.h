/* half.h — float16 and bfloat16 <-> float32, rounding to nearest even (NaN stays NaN). */
#ifndef OM_HALF_H
#define OM_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t om_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static inline float om_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

static inline float om_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
	if (exp == 0x1f)
		return om_bits_f32(sign | 0x7f800000u | (man << 13));
	if (exp == 0) {
		if (!man)
			return om_bits_f32(sign);
		/* subnormal: value = man * 2^-24 */
		float f = (float)man * (1.0f / 16777216.0f);
		return sign ? -f : f;
	}
	return om_bits_f32(sign | ((exp + 112) << 23) | (man << 13));
}

static inline uint16_t om_float_to_half(float f)
{
	uint32_t u = om_f32_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
	uint32_t a = u & 0x7fffffffu;
	if (a >= 0x7f800000u) /* inf or NaN (keep a quiet NaN) */
		return sign | (a > 0x7f800000u ? (uint16_t)(0x7e00 | ((a >> 13) & 0x3ff)) : 0x7c00);
	if (a >= 0x477ff000u) /* rounds to >= 65520: overflow to inf */
		return sign | 0x7c00;
	if (a < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
		if (a < 0x33000000u) /* < 2^-25: rounds to zero (2^-25 exactly ties to even 0) */
			return sign;
		uint32_t e = a >> 23, m = (a & 0x7fffff) | 0x800000;
		uint32_t shift = 126 - e; /* 14..24 */
		uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
		if (rem > half || (rem == half && (r & 1)))
			r++;
		return sign | (uint16_t)r;
	}
	uint32_t r = a - 0x38000000u; /* rebias exponent 127 -> 15 */
	uint32_t lsb = (r >> 13) & 1;
	r += 0xfff + lsb;
	return sign | (uint16_t)(r >> 13);
}

static inline float om_bf16_to_float(uint16_t b)
{
	return om_bits_f32((uint32_t)b << 16);
}

static inline uint16_t om_float_to_bf16(float f)
{
	uint32_t u = om_f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
	u += 0x7fff + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

#endif
