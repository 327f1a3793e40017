/* cast_half.c — float16/bfloat16 <-> float32 in branch-free element loops that GCC vectorizes
 * (AVX-512, AVX2 and baseline clones, num/clones.h), split over omopt's pool for long tensors.
 * float32 -> float16 by F16C where the CPU has it. Each element gets the bits of ops_cast.c's
 * general path: half.h's conversion, with a NaN read from a half made quiet (the pivot's
 * float -> double step quiets it). */
/* -O2 vectorizes only loops of known trip count */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include "cast_half.h"

#include "clones.h"
#include "half.h"
#include "op.h"
#include "parallel.h"

/* Elements a piece converts, at least: a conversion costs well under a nanosecond an element,
 * so a thread's wake-up (some microseconds) pays from tens of thousands on */
enum { CAST_GRAIN = 1 << 15 };

/* a if cond else b, for whole lanes: masks, so that GCC vectorizes the loops (it leaves
 * chains of ?: and && as branches) */
OM_INLINE uint32_t pick(uint32_t cond, uint32_t a, uint32_t b)
{
	const uint32_t m = 0u - cond;
	return (a & m) | (b & ~m);
}

/* float16 bits -> float32 bits: normal numbers rebiased, subnormals (man * 2^-24, exact in
 * float) through an integer conversion, infinities and NaNs (quieted) by their mantissa */
OM_INLINE uint32_t f16_to_f32_bits(uint16_t h)
{
	const uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (uint32_t)h >> 10 & 0x1f;
	const uint32_t man = h & 0x3ffu;
	const uint32_t norm = sign | (exp + 112) << 23 | man << 13;
	const uint32_t special = sign | 0x7f800000u | man << 13 | (uint32_t)(man != 0) << 22;
	const uint32_t sub = sign | om_f32_bits((float)(int32_t)man * (1.0f / 16777216.0f));
	return pick(exp == 0x1f, special, pick(exp == 0, sub, norm));
}

/* bfloat16 bits -> float32 bits (a NaN quieted) */
OM_INLINE uint32_t bf16_to_f32_bits(uint16_t b)
{
	const uint32_t u = (uint32_t)b << 16;
	return (u & 0x7fffffffu) > 0x7f800000u ? u | 0x400000u : u;
}

OM_CLONES_V3 static void f16_to_f32(const uint16_t *x, uint32_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = f16_to_f32_bits(x[i]);
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#define CAST_F16C 1
/* float32 -> float16 by F16C's vcvtps2ph, rounding to nearest even (om_float_to_half's bits:
 * a NaN keeps its sign and leading payload, made quiet). GCC 12 vectorizes no branch-free C
 * form of the rounding (it narrows the lanes to the 16-bit result and gives up). */
__attribute__((target("avx,f16c"))) static void f32_to_f16_f16c(const uint32_t *x, uint16_t *y,
								int64_t n)
{
	int64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		const __m256 v = _mm256_loadu_ps((const float *)(x + i));
		_mm_storeu_si128((__m128i *)(y + i),
				 _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
	}
	for (; i < n; i++)
		y[i] = om_float_to_half(om_bits_f32(x[i]));
}
#endif

static void f32_to_f16(const uint32_t *x, uint16_t *y, int64_t n)
{
#ifdef CAST_F16C
	if (__builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx")) {
		f32_to_f16_f16c(x, y, n);
		return;
	}
#endif
	for (int64_t i = 0; i < n; i++)
		y[i] = om_float_to_half(om_bits_f32(x[i]));
}

OM_CLONES_V3 static void bf16_to_f32(const uint16_t *x, uint32_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = bf16_to_f32_bits(x[i]);
}

OM_CLONES_V3 static void f32_to_bf16(const uint32_t *x, uint16_t *y, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = om_float_to_bf16(om_bits_f32(x[i]));
}

bool om_cast_half_has(int32_t sdt, int32_t ddt)
{
	const bool sh = sdt == OM_FLOAT16 || sdt == OM_BFLOAT16;
	const bool dh = ddt == OM_FLOAT16 || ddt == OM_BFLOAT16;
	return (sh && ddt == OM_FLOAT) || (dh && sdt == OM_FLOAT);
}

typedef struct cast_job {
	const void *x;
	void *y;
	int32_t sdt, ddt;
} cast_job;

static void cast_piece(void *arg, int64_t lo, int64_t hi)
{
	const cast_job *j = arg;
	const uint16_t *h = (const uint16_t *)j->x + lo;
	const uint32_t *f = (const uint32_t *)j->x + lo;
	if (j->sdt == OM_FLOAT16)
		f16_to_f32(h, (uint32_t *)j->y + lo, hi - lo);
	else if (j->sdt == OM_BFLOAT16)
		bf16_to_f32(h, (uint32_t *)j->y + lo, hi - lo);
	else if (j->ddt == OM_FLOAT16)
		f32_to_f16(f, (uint16_t *)j->y + lo, hi - lo);
	else
		f32_to_bf16(f, (uint16_t *)j->y + lo, hi - lo);
}

void om_cast_half(int threads, void *dst, int32_t ddt, const void *src, int32_t sdt, int64_t n)
{
	cast_job j = {src, dst, sdt, ddt};
	om_par_for(threads, n, CAST_GRAIN, cast_piece, &j);
}
