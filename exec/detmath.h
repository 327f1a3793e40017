/* detmath.h — exp and log in double, and erf and exp in float32, from IEEE basic operations
 * only, so that exact kernels give the same bits on every instruction set (libm picks FMA
 * variants at run time, and libm versions differ). The double forms have a relative error of
 * about 1e-16, far below the float32 rounding the callers apply; the float32 forms are within
 * 4 ulp, branch-free, so that loops over arrays of them vectorize. Including this header
 * switches FMA contraction off for the rest of the file (as the exact kernels need). */
#ifndef OM_DETMATH_H
#define OM_DETMATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

/* ln 2 split so that n * OM_LN2_HI is exact for |n| < 2^11 (fdlibm's constants) */
#define OM_LN2_HI 6.93147180369123816490e-01
#define OM_LN2_LO 1.90821492927058770002e-10

static inline double om_det_exp(double x)
{
	if (x != x)
		return x;
	if (x > 709.79)
		return INFINITY;
	if (x < -745.2)
		return 0;
	const double n = floor(x * 1.44269504088896338700 + 0.5);
	const double hi = x - n * OM_LN2_HI, lo = n * OM_LN2_LO;
	const double r = hi - lo; /* |r| <= 0.35: Taylor to r^14 is below 1e-17 relative */
	double p = 1.0 / 87178291200.0;
	static const double inv_fact[] = {1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0,
					  1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
					  1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0,
					  1.0 / 6.0, 0.5, 1.0, 1.0};
	for (int i = 0; i < 14; i++) {
		const double t = p * r;
		p = t + inv_fact[i];
	}
	if (n < -1022 || n > 1023)
		return ldexp(p, (int)n);
	/* 2^n as bits: the product is the correctly rounded p * 2^n, as ldexp gives */
	const uint64_t bits = (uint64_t)((int64_t)n + 1023) << 52;
	double scale;
	memcpy(&scale, &bits, sizeof scale);
	return p * scale;
}

static inline double om_det_log(double x)
{
	if (x != x || x == INFINITY)
		return x;
	if (x < 0)
		return NAN;
	if (x == 0)
		return -INFINITY;
	int e;
	double m = frexp(x, &e); /* x = m * 2^e, m in [0.5, 1), subnormals included */
	if (m < 0.70710678118654752440) {
		m *= 2;
		e--;
	}
	/* log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172: terms to s^23 */
	const double s = (m - 1) / (m + 1), s2 = s * s;
	double q = 1.0 / 23;
	for (int k = 21; k >= 1; k -= 2) {
		const double t = q * s2;
		q = t + 1.0 / k;
	}
	const double l = 2 * s * q;
	return (double)e * OM_LN2_HI + ((double)e * OM_LN2_LO + l);
}

/* ---- float32: branch-free (selects only), so loops over arrays vectorize ---------------- */

static inline float om_detf_from_bits(int32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

/* nearest integer (ties to even) of |q| < 2^22 in the default rounding mode */
static inline float om_detf_rint(float q)
{
	return (q + 12582912.0f) - 12582912.0f;
}

/** e^x within 2 ulp; NaN stays, overflow is inf, results below 2^-149 are 0. */
static inline float om_det_expf(float x)
{
	const float xc = x != x ? 0.0f : x < -104.0f ? -104.0f : x > 89.0f ? 89.0f : x;
	const float n = om_detf_rint(xc * 1.44269504088896341f);
	/* Cody-Waite: n * ln2_hi is exact for |n| < 2^9 (ln2_hi has 15 significant bits) */
	const float r = (xc - n * 0.693145751953125f) - n * 1.428606820309417e-06f;
	/* minimax of e^r on [-ln2/2, ln2/2], relative error 2e-9 */
	float p = 0.0013836829457432032f;
	p = p * r + 0.008374815806746483f;
	p = p * r + 0.04166822507977486f;
	p = p * r + 0.16666419804096222f;
	p = p * r + 0.49999991059303284f;
	p = p * r + 1.0f;
	p = p * r + 1.0f;
	/* 2^n in two steps so that n in [-150, 129] gives subnormals and inf */
	const int32_t k = (int32_t)n, k1 = k / 2, k2 = k - k1;
	const float y = p * om_detf_from_bits((k1 + 127) * 8388608) *
			om_detf_from_bits((k2 + 127) * 8388608);
	return x != x ? x : y;
}

/* erf(a) for 0 <= a < 0.921875: a * P(a^2) (P minimax, relative error 4e-10) */
static inline float om_det_erff_small(float a)
{
	const float t = a * a;
	float s = 8.370089199161157e-05f;
	s = s * t - 0.0008142701117321849f;
	s = s * t + 0.005201031919568777f;
	s = s * t - 0.026859398931264877f;
	s = s * t + 0.11283695697784424f;
	s = s * t - 0.37612634897232056f;
	s = s * t + 1.128379225730896f;
	return s * a;
}

#define OM_DET_ERF_SPLIT 0.921875f

/** erf(x) within 4 ulp: om_det_erff_small below 0.921875, else 1 - 2^Q(|x|) (Q fits
 *  log2 erfc on [0.921875, 3.925]; above, erf rounds to 1). Both halves are computed and
 *  one picked. */
static inline float om_det_erff(float x)
{
	const float a = fabsf(x), s = om_det_erff_small(a);
	const float ac = a < OM_DET_ERF_SPLIT ? OM_DET_ERF_SPLIT : a < 3.925f ? a : 3.925f;
	const float u = ac - 2.4f; /* NaN: ac is 3.925 */
	float q = 2.352561068619252e-06f;
	q = q * u - 2.104186569340527e-05f;
	q = q * u + 0.00012564488861244172f;
	q = q * u - 0.0006773779750801623f;
	q = q * u + 0.0034443133044987917f;
	q = q * u - 0.016977829858660698f;
	q = q * u - 1.356857419013977f;
	q = q * u - 7.450418472290039f;
	q = q * u - 10.504226684570312f; /* q in [-27.5, -2.4] */
	const float n = om_detf_rint(q), f = q - n;
	/* minimax of 2^f on [-1/2, 1/2], relative error 2e-9 */
	float e = 0.00015345794963650405f;
	e = e * f + 0.0013399930903688073f;
	e = e * f + 0.009618489071726799f;
	e = e * f + 0.05550328642129898f;
	e = e * f + 0.24022646248340607f;
	e = e * f + 0.6931471824645996f;
	e = e * f + 1.0f;
	const float big = 1.0f - e * om_detf_from_bits(((int32_t)n + 127) * 8388608);
	const float r = copysignf(a < OM_DET_ERF_SPLIT ? s : big, x);
	return x != x ? x : r;
}

/** y[i] = om_det_erff(x[i]) (y may be x). Blocks whose |x| are all below the split take
 *  the small half alone: the same bits, a third of the work. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline void om_det_erff_array(int64_t n, float *y, const float *x)
{
	enum { BLOCK = 8 }; /* GELU inputs: ~2% of |x| above the split, 17% of blocks */
	for (int64_t i0 = 0; i0 < n; i0 += BLOCK) {
		const int64_t m = n - i0 < BLOCK ? n - i0 : BLOCK;
		const float *xb = x + i0;
		float *yb = y + i0;
		int big = 0;
		for (int64_t i = 0; i < m; i++)
			big += fabsf(xb[i]) >= OM_DET_ERF_SPLIT;
		if (big)
			for (int64_t i = 0; i < m; i++)
				yb[i] = om_det_erff(xb[i]);
		else /* NaN is not >= the split: x * P(NaN) is NaN, the same NaN as x */
			for (int64_t i = 0; i < m; i++) {
				const float v = xb[i];
				yb[i] = v != v ? v : copysignf(om_det_erff_small(fabsf(v)), v);
			}
	}
}

#endif
