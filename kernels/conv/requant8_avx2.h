/* requant8_avx2.h — QLinearConv's requantization of 8 int32 sums on AVX2 (om_conv_requant's
 * arithmetic), for the files whose loops hand it sums in registers. */
#ifndef OM_REQUANT8_AVX2_H
#define OM_REQUANT8_AVX2_H

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#include <stdbool.h>

/* saturate(rint((float)(s + b) * sc) + zp) of 8 lanes (s + b within int32) as int8 (s8) or
 * uint8 in the low 8 bytes: vmaxps and vminps clamp, a NaN to the type's lowest value, as
 * om_conv_requant does */
static inline __attribute__((always_inline, target("avx2"))) __m128i
om_requant8_avx2(__m256i s, __m256i b, __m256 sc, float zp, bool s8)
{
	const __m256 lo = _mm256_set1_ps(s8 ? -128.0f : 0.0f), hi = _mm256_set1_ps(s8 ? 127 : 255);
	const __m256i v = _mm256_add_epi32(s, b);
	__m256 q = _mm256_round_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), sc),
				   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	q = _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(q, _mm256_set1_ps(zp)), lo), hi);
	const __m256i k = _mm256_cvtps_epi32(q);
	const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(k), _mm256_extracti128_si256(k, 1));
	return s8 ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
}
#endif

#endif
