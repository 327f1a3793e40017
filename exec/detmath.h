/* detmath.h — exp and log in double from IEEE basic operations only, so that exact kernels
 * give the same bits on every instruction set (libm picks FMA variants at run time).
 * Relative error about 1e-16, far below the float32 rounding the callers apply. Including it
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

#endif
