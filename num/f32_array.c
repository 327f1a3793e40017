/* f32_array.c — float16/bfloat16/int8/uint8 arrays to and from float32 (f32_array.h). float16
 * through F16C where the CPU has it (8 lanes an instruction; GCC 12 leaves a loop over
 * _Float16 scalar), else half.h's: the same values (every half is a float; both round to
 * nearest even, NaN stays NaN). Clang's builds (warnings and sanitizers, not the measured one;
 * its __builtin_cpu_supports knows no "f16c") take half.h's. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "f32_array.h"
#include "half.h"
#include "omopt.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define FA_F16C 1
#define FA_TARGET __attribute__((target("avx,f16c")))
static bool fa_f16c(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx") && __builtin_cpu_supports("f16c");
}

FA_TARGET static void half_to_f32_f16c(const uint16_t *h, int64_t n, float *dst)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
	for (; i < n; i++)
		dst[i] = om_half_to_float(h[i]);
}

FA_TARGET static void f32_to_half_f16c(const float *src, int64_t n, uint16_t *h)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8)
		_mm_storeu_si128((__m128i *)(h + i),
				 _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
	for (; i < n; i++)
		h[i] = om_float_to_half(src[i]);
}
#else
#define FA_F16C 0
#endif

static void half_to_f32(const void *src, int64_t n, float *dst)
{
	const uint16_t *h = src;
#if FA_F16C
	if (fa_f16c()) {
		half_to_f32_f16c(h, n, dst);
		return;
	}
#endif
	for (int64_t i = 0; i < n; i++)
		dst[i] = om_half_to_float(h[i]);
}

static void f32_to_half(const float *src, int64_t n, void *dst)
{
	uint16_t *h = dst;
#if FA_F16C
	if (fa_f16c()) {
		f32_to_half_f16c(src, n, h);
		return;
	}
#endif
	for (int64_t i = 0; i < n; i++)
		h[i] = om_float_to_half(src[i]);
}

/* v rounded to nearest even within [lo, hi], NaN 0 */
static float saturate(float v, float lo, float hi)
{
	return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : nearbyintf(v);
}

void om_to_f32(int32_t dt, const void *src, int64_t n, float *dst)
{
	const uint16_t *h = src;
	switch (dt) {
	case OM_FLOAT: memcpy(dst, src, sizeof(float) * (size_t)n); break;
	case OM_FLOAT16: half_to_f32(src, n, dst); break;
	case OM_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			dst[i] = om_bf16_to_float(h[i]);
		break;
	case OM_INT8:
		for (int64_t i = 0; i < n; i++)
			dst[i] = ((const int8_t *)src)[i];
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			dst[i] = ((const uint8_t *)src)[i];
		break;
	}
}

void om_from_f32(int32_t dt, const float *src, int64_t n, void *dst)
{
	uint16_t *h = dst;
	switch (dt) {
	case OM_FLOAT: memcpy(dst, src, sizeof(float) * (size_t)n); break;
	case OM_FLOAT16: f32_to_half(src, n, dst); break;
	case OM_BFLOAT16:
		for (int64_t i = 0; i < n; i++)
			h[i] = om_float_to_bf16(src[i]);
		break;
	case OM_INT8:
		for (int64_t i = 0; i < n; i++)
			((int8_t *)dst)[i] = (int8_t)saturate(src[i], -128, 127);
		break;
	default:
		for (int64_t i = 0; i < n; i++)
			((uint8_t *)dst)[i] = (uint8_t)saturate(src[i], 0, 255);
		break;
	}
}
