/* fastmath.c — fast-mode float32 activations (fastmath.h): branch-free loops that vectorize,
 * with FMA contraction allowed (this file only) and AVX-512 / AVX2+FMA clones on x86-64.
 * e^x: Cody-Waite reduction by ln 2 and Cephes' degree-6 polynomial (relative error 1.2e-7)
 * on arguments the callers clamp to [-104, 0] (subnormal results included). Gelu: Phi(x) from
 * erfc with the Chebyshev fit of Numerical Recipes' erfcc (fractional error below 1.2e-7 for
 * every argument), so the left tail keeps its relative accuracy. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
		     "fp-contract=fast")
#endif
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "clones.h"
#include "fastmath.h"

#define FAST_CLONES OM_CLONES_V3
/* The clones are static, called through plain extern wrappers at the end of the file: GCC
 * gives the ifunc of an extern target_clones function default visibility whatever
 * -fvisibility says, which would export it from libomopt.so. */

/* e^x 2^24 for x in [-104, 0], NaN taken as -104 (callers replace its result): 2^(n + 24)
 * is a normal float for every n the range gives, so the scaled result is exact to the
 * polynomial's error, and one multiplication by 2^-24 (fexp) rounds it once, subnormals
 * included */
static inline float fexp_2p24(float x)
{
	x = x > -104.0f ? x : -104.0f;
	const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* rint */
	const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
	float p = 1.3879685430e-3f; /* 1 + r + r^2 q(r), q of degree 4 fitted to e^r's relative */
	p = p * r + 8.3686942235e-3f; /* error on [-ln 2 / 2, ln 2 / 2] (3.7e-9) */
	p = p * r + 4.1667226702e-2f;
	p = p * r + 1.6666521132e-1f;
	p = p * r + 4.9999997020e-1f;
	p = p * r + 1.0f;
	const float y = p * r + 1.0f;
	const int32_t b = ((int32_t)n + 127 + 24) << 23;
	float s;
	memcpy(&s, &b, sizeof s);
	return y * s;
}

#define TWO_M24 5.9604644775390625e-8f /* 2^-24 */

/* e^x for x in [-104, 0] */
static inline float fexp(float x)
{
	return fexp_2p24(x) * TWO_M24;
}

/* e^x for x <= 0, NaN kept */
static inline float fexp_nan(float x)
{
	return x != x ? x : fexp(x);
}

/* 1 / (1 + e^-|x|) and its complement e / (1 + e): no overflow, the left tail relative (e
 * is scaled by 2^24 until the last multiplication); a NaN gives a number (callers that do
 * not multiply by x replace it) */
static inline float fsigmoid_num(float x)
{
	const float e = fexp_2p24(-fabsf(x)), s = 1.0f / (1.0f + e * TWO_M24);
	return x < 0 ? e * s * TWO_M24 : s;
}

static inline float fsigmoid(float x)
{
	const float s = fsigmoid_num(x);
	return x != x ? x : s;
}

FAST_CLONES static void sigmoid_f32(int64_t n, float *y, const float *x)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = fsigmoid(x[i]);
}

FAST_CLONES static void swish_f32(int64_t n, float *y, const float *x, float alpha)
{
	for (int64_t i = 0; i < n; i++)
		y[i] = x[i] * fsigmoid_num(alpha * x[i]); /* NaN: x's */
}

FAST_CLONES static void hardswish_f32(int64_t n, float *y, const float *x)
{
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] / 6.0f + 0.5f; /* no FMA: the bits of exact mode */
		y[i] = x[i] * (v < 0.0f ? 0.0f : v > 1.0f ? 1.0f : v);
	}
}

FAST_CLONES static void gelu_f32(int64_t n, float *y, const float *x)
{
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i], z = (v < 0 ? -v : v) * 0.70710678118654752f;
		const float t = 1.0f / (1.0f + 0.5f * z);
		float p = 0.17087277f;
		p = p * t - 0.82215223f;
		p = p * t + 1.48851587f;
		p = p * t - 1.13520398f;
		p = p * t + 0.27886807f;
		p = p * t - 0.18628806f;
		p = p * t + 0.09678418f;
		p = p * t + 0.37409196f;
		p = p * t + 1.00002368f;
		p = p * t - 1.26551223f;
		const float c = t * fexp(p - z * z); /* erfc(z) */
		const float phi = v < 0 ? 0.5f * c : 1.0f - 0.5f * c;
		y[i] = v != v ? v : v * phi;
	}
}

/* tanh on [-9, 9] (beyond, +-1 to the float's precision; NaN stays NaN): x P(x^2) / Q(x^2),
 * the rational fit of Eigen and ONNX Runtime's MLAS (relative error below 4e-7) */
FAST_CLONES static void tanh_f32(int64_t n, float *y, const float *x)
{
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] < -9.0f ? -9.0f : x[i] > 9.0f ? 9.0f : x[i], v2 = v * v;
		float p = -2.76076847742355e-16f;
		p = p * v2 + 2.00018790482477e-13f;
		p = p * v2 - 8.60467152213735e-11f;
		p = p * v2 + 5.12229709037114e-08f;
		p = p * v2 + 1.48572235717979e-05f;
		p = p * v2 + 6.37261928875436e-04f;
		p = p * v2 + 4.89352455891786e-03f;
		float q = 1.19825839466702e-06f;
		q = q * v2 + 1.18534705686654e-04f;
		q = q * v2 + 2.26843463243900e-03f;
		q = q * v2 + 4.89352518554385e-03f;
		y[i] = v * (p / q); /* p / q near 1: no precision lost for tiny v */
	}
}

/* rows of n: the maximum and the sum in 16 lanes, e^(x - max) once an element into y, each
 * in a loop of its own (they vectorize; one loop doing both did not), then the scale, or for
 * LogSoftmax (x - max) - log(sum); a NaN makes its row NaN through e^NaN */
FAST_CLONES static void softmax_f32(int64_t rows, int64_t n, float *y, const float *x,
				    bool log_form)
{
	for (int64_t o = 0; o < rows; o++) {
		const float *xr = x + o * n;
		float *yr = y + o * n;
		float lm[16], ls[16];
		for (int j = 0; j < 16; j++)
			lm[j] = -3.402823466e38f, ls[j] = 0;
		int64_t k = 0;
		for (; k + 16 <= n; k += 16)
			for (int j = 0; j < 16; j++)
				lm[j] = xr[k + j] > lm[j] ? xr[k + j] : lm[j];
		float m = lm[0];
		for (int j = 1; j < 16; j++)
			m = lm[j] > m ? lm[j] : m;
		for (; k < n; k++)
			m = xr[k] > m ? xr[k] : m;
		for (k = 0; k < n; k++)
			yr[k] = fexp_nan(xr[k] - m);
		for (k = 0; k + 16 <= n; k += 16)
			for (int j = 0; j < 16; j++)
				ls[j] += yr[k + j];
		float sum = 0;
		for (int j = 0; j < 16; j++)
			sum += ls[j];
		for (; k < n; k++)
			sum += yr[k];
		if (log_form) {
			const float lsum = logf(sum);
			for (k = 0; k < n; k++)
				yr[k] = (xr[k] - m) - lsum;
		} else {
			const float inv = 1.0f / sum;
			for (k = 0; k < n; k++)
				yr[k] *= inv;
		}
	}
}

/* the sum of v's n values (sq: of their squared distances from m) in 16 independent partial
 * sums, which stay in vector registers (a running sum waits on each addition's latency): the
 * tail past the last 16 first, then the partial sums in order */
static inline __attribute__((always_inline)) float lane_sum(const float *v, int64_t n, float m,
							    const bool sq)
{
	float part[16] = {0}, acc = 0;
	int64_t k = 0;
	for (; k + 16 <= n; k += 16)
		for (int j = 0; j < 16; j++)
			part[j] += sq ? (v[k + j] - m) * (v[k + j] - m) : v[k + j];
	for (; k < n; k++)
		acc += sq ? (v[k] - m) * (v[k] - m) : v[k];
	for (int j = 0; j < 16; j++)
		acc += part[j];
	return acc;
}

FAST_CLONES static float sum_f32(int64_t n, const float *x)
{
	return lane_sum(x, n, 0.0f, false);
}

float om_fast_sum_f32(int64_t n, const float *x)
{
	return sum_f32(n, x);
}

/* the mean and population variance of v (the variance around the mean: two passes), then
 * y = (v - mean) inv scale + bias */
FAST_CLONES static void layer_norm_f32(int64_t n, float *y, const float *v, const float *scale,
				       const float *bias, float eps, float *mean, float *inv)
{
	const float m = n ? lane_sum(v, n, 0.0f, false) / (float)n : 0.0f;
	const float q = lane_sum(v, n, m, true);
	const float r = 1.0f / sqrtf((n ? q / (float)n : 0.0f) + eps);
	int64_t k;
	if (bias)
		for (k = 0; k < n; k++)
			y[k] = (v[k] - m) * r * scale[k] + bias[k];
	else
		for (k = 0; k < n; k++)
			y[k] = (v[k] - m) * r * scale[k];
	*mean = m;
	*inv = r;
}

/* inv = 1 / sqrt(mean of v^2 + eps), then y = v inv scale */
FAST_CLONES static void rms_norm_f32(int64_t n, float *y, const float *v, const float *scale,
				     float eps, float *inv)
{
	const float q = lane_sum(v, n, 0.0f, true);
	const float r = 1.0f / sqrtf((n ? q / (float)n : 0.0f) + eps);
	for (int64_t k = 0; k < n; k++)
		y[k] = v[k] * r * scale[k];
	*inv = r;
}

void om_fast_layer_norm_f32(int64_t n, float *y, const float *v, const float *scale,
			    const float *bias, float eps, float *mean, float *inv)
{
	layer_norm_f32(n, y, v, scale, bias, eps, mean, inv);
}

void om_fast_rms_norm_f32(int64_t n, float *y, const float *v, const float *scale, float eps,
			  float *inv)
{
	rms_norm_f32(n, y, v, scale, eps, inv);
}

void om_fast_softmax_f32(int64_t rows, int64_t n, float *y, const float *x, bool log_form)
{
	softmax_f32(rows, n, y, x, log_form);
}

void om_fast_sigmoid_f32(int64_t n, float *y, const float *x)
{
	sigmoid_f32(n, y, x);
}

void om_fast_swish_f32(int64_t n, float *y, const float *x, float alpha)
{
	swish_f32(n, y, x, alpha);
}

void om_fast_hardswish_f32(int64_t n, float *y, const float *x)
{
	hardswish_f32(n, y, x);
}

void om_fast_tanh_f32(int64_t n, float *y, const float *x)
{
	tanh_f32(n, y, x);
}

void om_fast_gelu_f32(int64_t n, float *y, const float *x)
{
	gelu_f32(n, y, x);
}
