/* detmath.h — exp, log, expm1, log1p, erf, tanh, sigmoid, pow, trigonometric and hyperbolic in
 * double, and erf, exp, tanh and sigmoid in float32, from IEEE basic operations only, so that
 * exact kernels give the same bits on every instruction set (libm picks FMA variants at run
 * time, and libm versions differ). The double forms are within a few ulp of glibc (erf 12,
 * pow 2e-13 relative: tests/test_detmath.c), far below the float32 rounding the callers
 * apply; the float32 forms are within 4 ulp, branch-free, so that loops over arrays of them
 * vectorize. Including this header switches FMA contraction off for the rest of the file (as
 * the exact kernels need). */
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

/* ---- double: more functions from om_det_exp and om_det_log ------------------------------ */

/** e^x - 1 without cancellation: Taylor to x^16 for |x| <= ln 2, else om_det_exp(x) - 1
 *  (within 3 ulp). */
static inline double om_det_expm1(double x)
{
	if (x != x)
		return x;
	if (x < -40) /* e^-40 < 2^-57: -1 is the rounded value */
		return -1;
	if (fabs(x) > 0.6931471805599453)
		return om_det_exp(x) - 1;
	/* x (1 + x/2! + x^2/3! + ... + x^15/16!) */
	static const double inv_fact[] = {
		1.0 / 1307674368000.0, 1.0 / 87178291200.0, 1.0 / 6227020800.0, 1.0 / 479001600.0,
		1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0, 1.0 / 5040.0,
		1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5, 1.0}; /* 1/15! .. 1/1! */
	double p = 1.0 / 20922789888000.0;                                 /* 1/16! */
	for (int i = 0; i < 15; i++) {
		const double t = p * x;
		p = t + inv_fact[i];
	}
	return x * p;
}

/** log(1 + x): 2 atanh(x / (2 + x)) near 0 (the series of om_det_log), else om_det_log. */
static inline double om_det_log1p(double x)
{
	if (x != x || x == INFINITY)
		return x;
	if (x < -0.2928932188134524 || x > 0.41421356237309503)
		return om_det_log(1 + x);
	const double s = x / (2 + x), s2 = s * s;
	double q = 1.0 / 23;
	for (int k = 21; k >= 1; k -= 2) {
		const double t = q * s2;
		q = t + 1.0 / k;
	}
	return 2 * s * q;
}

/** tanh x = t / (t + 2), t = e^2|x| - 1, with the sign of x; +-1 above 22. */
static inline double om_det_tanh(double x)
{
	const double a = fabs(x);
	if (x != x)
		return x;
	if (a > 22)
		return copysign(1.0, x);
	const double t = om_det_expm1(2 * a);
	return copysign(t / (t + 2), x);
}

/** 1 / (1 + e^-x): 1 / (1 + e^-|x|) and its complement, without overflow or cancellation. */
static inline double om_det_sigmoid(double x)
{
	const double e = om_det_exp(-fabs(x)), s = 1 / (1 + e);
	return x >= 0 ? s : e * s;
}

/** erf x: 2/sqrt(pi) e^-x^2 sum 2^n x^(2n+1) / (2n+1)!! below |x| = 2 (positive terms), else
 *  1 - erfc x with erfc's continued fraction (50 levels); +-1 from 6 on. */
static inline double om_det_erf(double x)
{
	const double a = fabs(x);
	if (x != x)
		return x;
	if (a >= 6)
		return copysign(1.0, x);
	/* e^-a^2 with a^2 = a2 + err exactly (Dekker's split, no FMA): e^-a2 (1 - err) */
	const double c = 134217729.0 * a, ah = c - (c - a), al = a - ah, a2 = a * a;
	const double err = ((ah * ah - a2) + 2 * ah * al) + al * al;
	const double g = om_det_exp(-a2) * (1 - err);
	double r;
	if (a < 2) {
		double term = a, sum = a;
		for (int n = 1; n < 200 && term > sum * 1e-18; n++) {
			term = term * (2 * a2) / (2 * n + 1);
			sum += term;
		}
		r = 1.1283791670955126 * g * sum;
	} else {
		/* erfc a = e^-a^2 / sqrt(pi) / (a + (1/2) / (a + 1 / (a + (3/2) / (a + ...)))) */
		double f = a;
		for (int k = 50; k >= 1; k--)
			f = a + (k * 0.5) / f;
		r = 1 - 0.5641895835477563 * g / f;
	}
	return copysign(r, x);
}

/** sinh x: (t + t / (t + 1)) / 2 with t = e^|x| - 1 (no cancellation near 0), sign of x;
 *  above 709 through e^(|x|/2) squared. */
static inline double om_det_sinh(double x)
{
	const double a = fabs(x);
	if (x != x)
		return x;
	if (a > 709) {
		const double w = om_det_exp(0.5 * a);
		return copysign(0.5 * w * w, x);
	}
	const double t = om_det_expm1(a);
	return copysign(0.5 * (t + t / (t + 1)), x);
}

/** cosh x = (e^|x| + e^-|x|) / 2; above 709 through e^(|x|/2) squared. */
static inline double om_det_cosh(double x)
{
	const double a = fabs(x);
	if (x != x)
		return a;
	if (a > 709) {
		const double w = om_det_exp(0.5 * a);
		return 0.5 * w * w;
	}
	const double e = om_det_exp(a);
	return 0.5 * e + 0.5 / e;
}

/** asinh x = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))) with the sign of x; log|x| + ln 2 above
 *  2^28. */
static inline double om_det_asinh(double x)
{
	const double a = fabs(x);
	if (x != x || a == INFINITY)
		return x;
	if (a > 268435456.0)
		return copysign(om_det_log(a) + 0.6931471805599453, x);
	return copysign(om_det_log1p(a + a * a / (1 + sqrt(1 + a * a))), x);
}

/** acosh x = log1p(t + sqrt(2t + t^2)), t = x - 1 (exact near 1); log x + ln 2 above 2^28;
 *  NaN below 1. */
static inline double om_det_acosh(double x)
{
	if (x != x || x == INFINITY)
		return x;
	if (x < 1)
		return NAN;
	if (x > 268435456.0)
		return om_det_log(x) + 0.6931471805599453;
	const double t = x - 1;
	return om_det_log1p(t + sqrt(2 * t + t * t));
}

/** atanh x = log1p(2|x| / (1 - |x|)) / 2 with the sign of x; +-inf at +-1, NaN beyond. */
static inline double om_det_atanh(double x)
{
	const double a = fabs(x);
	if (x != x)
		return x;
	if (a > 1)
		return NAN;
	if (a == 1)
		return copysign(INFINITY, x);
	return copysign(0.5 * om_det_log1p(2 * a / (1 - a)), x);
}

/* pi/2 as hi + lo (fdlibm's split) */
#define OM_PIO2_HI 1.57079632679489655800e+00
#define OM_PIO2_LO 6.12323399573676603587e-17

/** atan x: |x| > 1 through pi/2 - atan(1/|x|); two halvings t / (1 + sqrt(1 + t^2)) bring t
 *  below tan(pi/16), where the series to t^27 is below 1e-18; the sign of x. */
static inline double om_det_atan(double x)
{
	if (x != x)
		return x;
	const double a = fabs(x);
	const int inv = a > 1;
	double t = inv ? 1 / a : a;
	t = t / (1 + sqrt(1 + t * t));
	t = t / (1 + sqrt(1 + t * t));
	const double t2 = t * t;
	double q = 1.0 / 27;
	for (int k = 25; k >= 1; k -= 2) {
		const double u = q * t2;
		q = 1.0 / k - u;
	}
	const double r = 4 * (t * q);
	return copysign(inv ? (OM_PIO2_HI - r) + OM_PIO2_LO : r, x);
}

/** asin x = atan(x / sqrt((1 - x)(1 + x))); +-pi/2 at +-1, NaN beyond. */
static inline double om_det_asin(double x)
{
	const double a = fabs(x);
	if (x != x)
		return x;
	if (a > 1)
		return NAN;
	if (a == 1)
		return copysign(OM_PIO2_HI + OM_PIO2_LO, x);
	return copysign(om_det_atan(a / sqrt((1 - a) * (1 + a))), x);
}

/** acos x = 2 atan(sqrt((1 - x) / (1 + x))) (pi at -1); NaN beyond +-1. */
static inline double om_det_acos(double x)
{
	if (x != x)
		return x;
	if (fabs(x) > 1)
		return NAN;
	return 2 * om_det_atan(sqrt((1 - x) / (1 + x)));
}

/* ---- sin, cos, tan in double: exact argument reduction (Payne-Hanek) ---------------------- */

/* bits of 2/pi: word j holds bits 32j+1 .. 32j+32 after the binary point */
static const uint32_t om_det_2_over_pi[40] = {
	0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
	0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c,
	0xfe1deb1c, 0xb129a73e, 0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41,
	0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b, 0x1ff897ff, 0xde05980f,
	0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
	0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08,
	0x56033046, 0xfc7b6bab, 0xf0cfbc20, 0x9af4361d,
};

/* 32 bits of the little-endian limbs p[0..n) from bit pos (>= 0) on; zeros past the end */
static inline uint32_t om_det_bits32(const uint32_t *p, int n, int pos)
{
	const int w = pos >> 5, b = pos & 31;
	const uint64_t lo = w < n ? p[w] : 0, hi = w + 1 < n ? p[w + 1] : 0;
	return (uint32_t)(((hi << 32) | lo) >> b);
}

/* hi + lo += v (Knuth's two-sum) */
static inline void om_det_dd_add(double *hi, double *lo, double v)
{
	const double s = *hi + v, bb = s - *hi, err = (*hi - (s - bb)) + (v - bb);
	*hi = s;
	*lo += err;
}

/** |x| = (4k + q) pi/2 + r, |r| <= pi/4 as r[0] + r[1]; returns q. x finite, |x| >= pi/4.
 *  x = M 2^e (M < 2^53): the bits of 2/pi below weight 2^(1-e) give x 2/pi mod 4 to 2^-138;
 *  the fraction's 128 bits, rounded to the nearest quadrant, become a double-double times
 *  pi/2 (Dekker's product, no FMA). */
static inline int om_det_rem_pio2(double x, double r[2])
{
	enum { K = 7 };
	int ex;
	const double m = frexp(fabs(x), &ex);
	const uint64_t M = (uint64_t)ldexp(m, 53);
	const int e = ex - 53, j0 = e - 2 < 0 ? 0 : (e - 2) / 32;
	uint32_t p[K + 2] = {0};
	const uint32_t mh[2] = {(uint32_t)M, (uint32_t)(M >> 32)};
	for (int i = 0; i < 2; i++) {
		uint64_t carry = 0;
		for (int k = 0; k < K; k++) {
			const uint64_t t =
			    (uint64_t)om_det_2_over_pi[j0 + K - 1 - k] * mh[i] + p[i + k] + carry;
			p[i + k] = (uint32_t)t;
			carry = t >> 32;
		}
		p[i + K] += (uint32_t)carry;
	}
	const int sh = 32 * (j0 + K) - e; /* fraction bits of p */
	int q = (int)(om_det_bits32(p, K + 2, sh) & 3);
	uint32_t f[4]; /* fraction, most significant first */
	for (int k = 0; k < 4; k++)
		f[k] = om_det_bits32(p, K + 2, sh - 32 * (k + 1));
	double sgn = 1;
	if (f[0] >> 31) { /* fraction >= 1/2: the next quadrant, r = fraction - 1 */
		q = (q + 1) & 3;
		sgn = -1;
		uint64_t borrow = 1; /* 2^128 - f: ~f + 1 */
		for (int k = 3; k >= 0; k--) {
			const uint64_t t = (uint64_t)(uint32_t)~f[k] + borrow;
			f[k] = (uint32_t)t;
			borrow = t >> 32;
		}
	}
	double hi = 0, lo = 0, scale = 1;
	for (int k = 0; k < 4; k++) {
		scale *= 0x1p-32;
		om_det_dd_add(&hi, &lo, (double)f[k] * scale);
	}
	const double s = hi + lo;
	lo = lo - (s - hi);
	hi = s;
	/* (hi + lo) (P1 + P2): hi P1 exactly as ph + pl */
	const double c1 = 134217729.0 * hi, h1 = c1 - (c1 - hi), h2 = hi - h1;
	const double c2 = 134217729.0 * OM_PIO2_HI, p1 = c2 - (c2 - OM_PIO2_HI), p2 = OM_PIO2_HI - p1;
	const double ph = hi * OM_PIO2_HI;
	const double pl = ((h1 * p1 - ph) + h1 * p2 + h2 * p1) + h2 * p2;
	const double t = pl + (hi * OM_PIO2_LO + lo * OM_PIO2_HI);
	const double rh = ph + t;
	r[0] = sgn * rh;
	r[1] = sgn * (t - (rh - ph));
	return q;
}

/** om_det_rem_pio2 for pi/4 <= |x| < 2^19 (3x faster): n = nearest |x| 2/pi; |x| - n pi/2
 *  with pi/2 in three 33-bit parts and a tail (fdlibm's), so that n times each part is
 *  exact; the first difference is exact (Sterbenz), the others are two-sums. */
static inline int om_det_rem_pio2_medium(double x, double r[2])
{
	static const double p1 = 1.57079632673412561417e+00, p2 = 6.07710050630396597660e-11,
			    p3 = 2.02226624871116645580e-21, p3t = 8.47842766036889956997e-32;
	const double a = fabs(x), n = floor(a * 0.63661977236758134308 + 0.5);
	const double t1 = a - n * p1;
	double hi = t1, lo = 0;
	om_det_dd_add(&hi, &lo, -(n * p2));
	om_det_dd_add(&hi, &lo, -(n * p3));
	lo -= n * p3t;
	const double s = hi + lo;
	r[0] = s;
	r[1] = lo - (s - hi);
	return (int)((int64_t)n & 3);
}

/* sin and cos of r = r0 + r1, |r| <= pi/4: Taylor to r^23 and r^22 */
static inline void om_det_sincos_kernel(const double r[2], double *sn, double *cs)
{
	const double x = r[0], z = x * x;
	double ps = 1.0 / 25852016738884976640000.0, pc = 1.0 / 1124000727777607680000.0;
	static const double fs[] = {1.0 / 51090942171709440000.0, 1.0 / 121645100408832000.0,
				    1.0 / 355687428096000.0,    1.0 / 1307674368000.0,
				    1.0 / 6227020800.0,         1.0 / 39916800.0,
				    1.0 / 362880.0,             1.0 / 5040.0,
				    1.0 / 120.0,                1.0 / 6.0}; /* 1/21! .. 1/3! */
	static const double fc[] = {1.0 / 2432902008176640000.0, 1.0 / 6402373705728000.0,
				    1.0 / 20922789888000.0,      1.0 / 87178291200.0,
				    1.0 / 479001600.0,           1.0 / 3628800.0,
				    1.0 / 40320.0,               1.0 / 720.0,
				    1.0 / 24.0,                  0.5}; /* 1/20! .. 1/2! */
	/* ps = 1/3! - z (1/5! - z (... - z / 23!)), pc = 1/2! - z (1/4! - ... - z / 22!) */
	for (int i = 0; i < 10; i++) {
		const double u = ps * z, v = pc * z;
		ps = fs[i] - u;
		pc = fc[i] - v;
	}
	/* sin x = x - x^3 ps, cos x = 1 - x^2 pc */
	const double s0 = x - x * z * ps, c0 = 1 - z * pc;
	*sn = s0 + r[1] * c0;
	*cs = c0 - r[1] * s0;
}

/* sin (which 0) , cos (1) or tan (2) of x */
static inline double om_det_trig(double x, int which)
{
	if (x != x || fabs(x) == INFINITY)
		return x - x;
	double r[2] = {fabs(x), 0};
	const int q = fabs(x) < 0.78539816339744827900 ? 0
		      : fabs(x) < 524288.0        ? om_det_rem_pio2_medium(x, r)
						  : om_det_rem_pio2(x, r);
	double sn, cs;
	om_det_sincos_kernel(r, &sn, &cs);
	const double sgn = x < 0 ? -1 : 1;
	if (which == 0) {
		const double v = q == 0 ? sn : q == 1 ? cs : q == 2 ? -sn : -cs;
		return x == 0 ? x : sgn * v;
	}
	if (which == 1)
		return q == 0 ? cs : q == 1 ? -sn : q == 2 ? -cs : sn;
	const double v = q & 1 ? -cs / sn : sn / cs;
	return x == 0 ? x : sgn * v;
}

/** sin x within a few ulp for every double (Payne-Hanek reduction); NaN for +-inf. */
static inline double om_det_sin(double x) { return om_det_trig(x, 0); }
/** cos x, as om_det_sin. */
static inline double om_det_cos(double x) { return om_det_trig(x, 1); }
/** tan x = sin x / cos x of the reduced argument, as om_det_sin. */
static inline double om_det_tan(double x) { return om_det_trig(x, 2); }

/* y is an integer; whether it is odd (|y| >= 2^53 is even) */
static inline int om_det_odd(double y)
{
	return fabs(y) < 9007199254740992.0 && fmod(y, 2.0) != 0;
}

/** x^y with C99's special cases (pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, signed
 *  zeros and infinities for odd integer y, NaN for negative x and non-integer y). Integer
 *  |y| <= 64 by repeated squaring (x*x of a float is exact in double), y = +-1/2 by sqrt,
 *  else e^(y log|x|):
 *  relative error below 2e-13 (|y log x| <= 745 carries log's error), far below float's
 *  rounding. */
static inline double om_det_pow(double x, double y)
{
	if (y == 0 || x == 1)
		return 1;
	if (x != x || y != y)
		return x + y;
	const double ax = fabs(x);
	const int yint = y == floor(y), odd = yint && om_det_odd(y);
	if (fabs(y) == INFINITY) {
		if (ax == 1)
			return 1;
		return (ax < 1) == (y < 0) ? INFINITY : 0;
	}
	const double sgn = signbit(x) && odd ? -1 : 1;
	if (ax == 0) /* +-inf or +-0, signed as x for odd integer y */
		return y < 0 ? sgn / ax : sgn * ax;
	if (ax == INFINITY)
		return y < 0 ? sgn * 0.0 : sgn * ax;
	if (x < 0 && !yint)
		return NAN;
	if (yint && fabs(y) <= 64) {
		uint64_t k = (uint64_t)fabs(y);
		double r = 1, b = ax;
		while (k) {
			if (k & 1)
				r *= b;
			b *= b;
			k >>= 1;
		}
		return sgn * (y < 0 ? 1 / r : r);
	}
	if (fabs(y) == 0.5) /* x > 0 here: sqrt is correctly rounded (and 9x faster) */
		return y > 0 ? sqrt(ax) : 1 / sqrt(ax);
	const double l = y * om_det_log(ax);
	return sgn * om_det_exp(l);
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

/** 1 / (1 + e^-x) within 4 ulp: 1 / (1 + e^-|x|) and its complement (no overflow, no
 *  cancellation); branch-free. */
static inline float om_det_sigmoidf(float x)
{
	const float e = om_det_expf(-fabsf(x)), s = 1.0f / (1.0f + e);
	return x >= 0 ? s : e * s;
}

#define OM_DET_TANH_SPLIT 0.5625f

/** tanh x within 3 ulp, branch-free: x + x^3 P(x^2) below |x| = 0.5625 (P least squares,
 *  relative error 6e-9), else (1 - e) / (1 + e) with e = e^-2|x|, with the sign of x. */
static inline float om_det_tanhf(float x)
{
	const float a = fabsf(x), t = a * a;
	float p = -0.006193327717483044f;
	p = p * t + 0.021018410101532936f;
	p = p * t - 0.05384053662419319f;
	p = p * t + 0.13332487642765045f;
	p = p * t - 0.33333316445350647f;
	const float small = a + a * t * p;
	const float e = om_det_expf(-2.0f * a), big = (1.0f - e) / (1.0f + e);
	const float r = copysignf(a < OM_DET_TANH_SPLIT ? small : big, x);
	return x != x ? x : r;
}

#endif
