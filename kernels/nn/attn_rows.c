/* attn_rows.c — softcap, softmax with a sink, the rotary rotation of attention rows, and rows
 * of the attention kernels' element types to float and back. */
#include <math.h>
#include <string.h>

#include "attn_rows.h"
#include "clones.h"
#include "detmath.h"
#include "half.h"
#include "omopt.h"

double om_attn_tanh(double x)
{
	if (x > 20)
		return 1;
	if (x < -20)
		return -1;
	const double e = om_det_exp(2 * x);
	return (e - 1) / (e + 1);
}

void om_attn_softmax(double *r, int64_t n, const double *sink)
{
	double m = sink ? *sink : -INFINITY, s = 0;
	for (int64_t j = 0; j < n; j++)
		m = r[j] > m ? r[j] : m;
	if (m == -INFINITY) {
		for (int64_t j = 0; j < n; j++)
			r[j] = 0;
		return;
	}
	for (int64_t j = 0; j < n; j++)
		s += r[j] = om_det_exp(r[j] - m);
	if (sink)
		s += om_det_exp(*sink - m);
	for (int64_t j = 0; j < n; j++)
		r[j] /= s;
}

void om_attn_rotate(double *r, const double *cs, const double *sn, int64_t rd, bool interleaved)
{
	const int64_t half = rd / 2;
	for (int64_t i = 0; i < half; i++) {
		const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
		const double x1 = r[a], x2 = r[b];
		r[a] = cs[i] * x1 - sn[i] * x2;
		r[b] = sn[i] * x1 + cs[i] * x2;
	}
}

/* float16 <-> float32 in loops GCC vectorizes (F16C's conversions in the x86-64-v3 and v4
 * clones, libgcc's in the baseline one: the same values, every half being a float and both
 * rounding to nearest even); clang before 15 has no _Float16 on x86: num/half.h's conversions
 * there, the same values too */
#if defined(__clang__) && __clang_major__ < 15
static void half_to_f32(const uint16_t *src, int64_t n, float *dst)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = om_half_to_float(src[i]);
}

static void f32_to_half(const float *src, int64_t n, uint16_t *dst)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = om_float_to_half(src[i]);
}
#else
OM_CLONES_V3 static void half_to_f32(const _Float16 *src, int64_t n, float *dst)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = (float)src[i];
}

OM_CLONES_V3 static void f32_to_half(const float *src, int64_t n, _Float16 *dst)
{
	for (int64_t i = 0; i < n; i++)
		dst[i] = (_Float16)src[i];
}
#endif

void om_attn_to_f32(int32_t dt, const void *src, int64_t n, float *dst)
{
	const uint16_t *h = src;
	if (dt == OM_FLOAT)
		memcpy(dst, src, sizeof(float) * (size_t)n);
	else if (dt == OM_FLOAT16)
		half_to_f32(src, n, dst);
	else
		for (int64_t i = 0; i < n; i++)
			dst[i] = om_bf16_to_float(h[i]);
}

void om_attn_from_f32(int32_t dt, const float *src, int64_t n, void *dst)
{
	uint16_t *h = dst;
	if (dt == OM_FLOAT)
		memcpy(dst, src, sizeof(float) * (size_t)n);
	else if (dt == OM_FLOAT16)
		f32_to_half(src, n, dst);
	else
		for (int64_t i = 0; i < n; i++)
			h[i] = om_float_to_bf16(src[i]);
}
