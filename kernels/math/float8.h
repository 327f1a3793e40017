/* float8.h — the four ONNX float8 formats <-> float32, rounding to nearest even.
 *
 *   E4M3FN   bias 7,  no inf, NaN S.1111.111, max 448
 *   E4M3FNUZ bias 8,  no inf, no -0, NaN 0x80, max 240
 *   E5M2     bias 15, inf S.11111.00, NaN S.11111.xx, max 57344
 *   E5M2FNUZ bias 16, no inf, no -0, NaN 0x80, max 57344
 * Float -> float8 follows ONNX Cast-19: with saturate, values (infinities too) beyond the
 * largest finite value become it (with the sign); without, they become inf (E5M2) or NaN.
 * Two corners follow ONNX's reference implementation, which ONNX Runtime shares: E4M3FN maps
 * [480, 496) to 448 even without saturate (the truncated code 0x7f is taken back to 0x7e),
 * and E5M2 without saturate gives NaN, not inf, for values that only round up past 57344
 * (below 65536).
 * FLOAT4E2M1 (bias 1, values 0, 0.5 ... 6, no inf or NaN) goes through the same code with the
 * sign moved from bit 7 to bit 3; it always saturates and NaN becomes -0 (ONNX's reference).
 * FLOAT8E8M0 is a bare exponent 2^(e - 127), 0xff NaN. */
#ifndef OM_FLOAT8_H
#define OM_FLOAT8_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "half.h"
#include "omopt.h"

typedef struct om_f8_fmt {
	int mbits, bias;
	uint8_t maxcode; /* largest finite code without the sign */
	bool inf;        /* has infinities (E5M2) */
	bool uz;         /* unsigned zero, NaN is 0x80 (the FNUZ formats) */
	bool nonan;      /* no NaN code (FLOAT4E2M1) */
} om_f8_fmt;

static inline om_f8_fmt om_f8_format(int32_t dtype)
{
	switch (dtype) {
	case OM_FLOAT8E4M3FN: return (om_f8_fmt){3, 7, 0x7e, false, false, false};
	case OM_FLOAT8E4M3FNUZ: return (om_f8_fmt){3, 8, 0x7f, false, true, false};
	case OM_FLOAT8E5M2: return (om_f8_fmt){2, 15, 0x7b, true, false, false};
	case OM_FLOAT4E2M1: return (om_f8_fmt){1, 1, 0x07, false, false, true};
	default: return (om_f8_fmt){2, 16, 0x7f, false, true, false}; /* E5M2FNUZ */
	}
}

static inline bool om_is_float8(int32_t dtype)
{
	return dtype >= OM_FLOAT8E4M3FN && dtype <= OM_FLOAT8E5M2FNUZ;
}

static inline float om_f8_to_float(uint8_t v, om_f8_fmt f)
{
	const int ebits = 7 - f.mbits;
	const uint32_t e = (v & 0x7fu) >> f.mbits, m = v & ((1u << f.mbits) - 1);
	const float sign = (v & 0x80) ? -1.0f : 1.0f;
	if (f.uz ? v == 0x80 : (!f.inf && !f.nonan && (v & 0x7f) == 0x7f))
		return NAN;
	if (f.inf && e == (1u << ebits) - 1)
		return m ? NAN : sign * INFINITY;
	if (e == 0)
		return sign * ldexpf((float)m, 1 - f.bias - f.mbits);
	return sign * ldexpf((float)(m | (1u << f.mbits)), (int)e - f.bias - f.mbits);
}

static inline uint8_t om_float_to_f8(float x, om_f8_fmt f, bool saturate)
{
	const uint32_t u = om_f32_bits(x), a = u & 0x7fffffffu;
	const uint8_t sign = (uint8_t)((u >> 24) & 0x80);
	/* E5M2 keeps the quiet bit and the next mantissa bit (float32 NaN 0x7fc00000 -> 0x7e) */
	uint8_t nan = (uint8_t)(sign | 0x7f);
	if (f.uz)
		nan = 0x80;
	else if (f.inf)
		nan = (uint8_t)(sign | 0x7e | ((a >> 21) & 1u));
	if (a > 0x7f800000u)
		return nan;
	const uint8_t over = saturate ? (uint8_t)(sign | f.maxcode)
				      : f.inf ? (uint8_t)(sign | 0x7c) : nan;
	if (a == 0x7f800000u)
		return over;
	const int e = (int)(a >> 23) - 127, emin = 1 - f.bias, shift = 23 - f.mbits;
	uint32_t code;
	if (a < 0x00800000u) { /* float32 subnormals are far below every float8 quantum */
		code = 0;
	} else if (e >= emin) { /* normal: rebias, then round the mantissa to mbits */
		uint32_t r = a - ((uint32_t)(127 - f.bias) << 23);
		const bool round_bit = (r >> (shift - 1)) & 1;
		if (!f.uz && !f.inf && (r >> shift) == 0x7f && f.mbits == 3 && !round_bit)
			return (uint8_t)(sign | 0x7e); /* E4M3FN [480, 496) -> 448 */
		r += (1u << (shift - 1)) - 1 + ((r >> shift) & 1);
		code = r >> shift;
	} else { /* subnormal: value / 2^(emin - mbits), rounded */
		const uint32_t m = (a & 0x7fffffu) | 0x800000u;
		const int sh = shift + emin - e; /* > shift */
		if (sh > 25) {
			code = 0;
		} else {
			const uint32_t q = m >> sh, rem = m & ((1u << sh) - 1);
			const uint32_t half = 1u << (sh - 1);
			code = q + (rem > half || (rem == half && (q & 1)));
		}
	}
	if (code > f.maxcode) /* E5M2 without saturate: NaN when rounding up past the maximum */
		return f.inf && !saturate && a < 0x47800000u ? (uint8_t)(sign | 0x7f) : over;
	if (f.uz && code == 0)
		return 0;
	return (uint8_t)(sign | code);
}

/* FLOAT4E2M1: a nibble s.ee.m */
static inline float om_f4_to_float(uint8_t nib)
{
	const uint8_t v = (uint8_t)(((nib & 8u) << 4) | (nib & 7u));
	return om_f8_to_float(v, om_f8_format(OM_FLOAT4E2M1));
}

static inline uint8_t om_float_to_f4(float x)
{
	if (x != x)
		return 8;
	const uint8_t v = om_float_to_f8(x, om_f8_format(OM_FLOAT4E2M1), true);
	return (uint8_t)(((v >> 4) & 8u) | (v & 7u));
}

/* FLOAT8E8M0 */
static inline float om_e8m0_to_float(uint8_t v)
{
	return v == 0xff ? NAN : ldexpf(1.0f, (int)v - 127);
}

enum om_e8m0_round { OM_E8M0_UP, OM_E8M0_DOWN, OM_E8M0_NEAREST };

/** |x| as a power of two (the sign is dropped): round "up" or "down" in magnitude, or to the
 *  "nearest" with ties up; beyond 2^127 gives 2^127 with saturate, else NaN. */
static inline uint8_t om_float_to_e8m0(float x, int round, bool saturate)
{
	const uint32_t a = om_f32_bits(x) & 0x7fffffffu;
	if (a > 0x7f800000u)
		return 0xff;
	if (a == 0x7f800000u)
		return saturate ? 0xfe : 0xff;
	uint32_t e = a >> 23;
	const uint32_t m = a & 0x7fffffu;
	if (e == 0) /* zero and float32 subnormals: 2^-127 or 2^-126 */
		e = round == OM_E8M0_UP && m > 0x400000u ? 1 : 0;
	else if (round == OM_E8M0_UP ? m != 0 : round == OM_E8M0_NEAREST && m >= 0x400000u)
		e++;
	if (e > 0xfe)
		return saturate ? 0xfe : 0xff;
	return (uint8_t)e;
}

#endif
