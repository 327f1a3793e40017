/* test_detmath.c — detmath.h's deterministic functions against double-precision libm: dense
 * sweeps of float32 bit patterns (every sign, subnormals, tails, +-0, +-inf, NaN) and of
 * doubles, in ulp; C99's special cases of pow; and the same bits from a default (SSE2) and an
 * AVX2+FMA compilation of the same calls (no contraction, no ISA-dependent libm). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detmath.h"
#include "testutil.h"

/* |got - ref| in units of the float spacing at ref (0: both NaN, or the same infinity) */
static double ulp_f(float got, double ref)
{
	if (ref != ref)
		return got != got ? 0 : 1e9;
	const float rf = (float)ref;
	if (isinf(rf) || isinf(got))
		return got == rf ? 0 : 1e9;
	const float a = fabsf(rf);
	const double u = a < 1.17549435e-38f ? 0x1p-149 : (double)(nextafterf(a, INFINITY) - a);
	return fabs((double)got - ref) / u;
}

/* the same in double spacing */
static double ulp_d(double got, double ref)
{
	if (ref != ref)
		return got != got ? 0 : 1e9;
	if (isinf(ref) || isinf(got))
		return got == ref ? 0 : 1e9;
	const double a = fabs(ref);
	const double u = a < 0x1p-1022 ? 0x1p-1074 : nextafter(a, INFINITY) - a;
	return fabs(got - ref) / u;
}

enum { STEP = 4093 };

/* float32 bit patterns every STEP, then the special values */
static float *float_sweep(int64_t *n)
{
	static const float sp[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 0x1p-149f, -0x1p-149f,
				   0x1p-127f, -0x1p-127f, 1e-30f, -1e-30f, 0.5625f, -0.5625f,
				   0.56249994f, 1.0f, -1.0f, 88.7f, -88.7f, 103.9f, -103.9f,
				   0.34657359f, -0.34657359f, 0.99999994f, -0.99999994f,
				   1.00000012f, 3.0f, -3.0f, 5.9f, 6.0f, 709.5f, 710.0f};
	const int64_t ns = (int64_t)(sizeof sp / sizeof sp[0]);
	*n = (int64_t)(0x100000000ull / STEP) + 1 + ns;
	float *x = malloc(sizeof(float) * (size_t)*n);
	assert_non_null(x);
	for (int64_t i = 0; i < *n - ns; i++) {
		const uint32_t b = (uint32_t)((uint64_t)i * STEP);
		memcpy(&x[i], &b, sizeof b);
	}
	memcpy(x + *n - ns, sp, sizeof sp);
	return x;
}

static double ref_sigmoid(double x)
{
	return x >= 0 ? 1 / (1 + exp(-x)) : exp(x) / (1 + exp(x));
}

/* detmath's float forms and the double forms rounded to float (as ew_unary.c uses them) */
static void float_functions(void **state)
{
	(void)state;
	int64_t n;
	float *x = float_sweep(&n);
	static const struct {
		const char *name;
		double max_ulp;
	} fn[] = {{"tanhf", 3},  {"sigmoidf", 4}, {"expm1", 0.501}, {"log1p", 0.501},
		  {"tanh", 0.501}, {"sigmoid", 0.501}, {"erf", 0.501}, {"sinh", 0.501},
		  {"cosh", 0.501}, {"asinh", 0.501}, {"acosh", 0.501}, {"atanh", 0.501},
		  {"atan", 0.501}, {"asin", 0.501}, {"acos", 0.501}, {"sin", 0.501},
		  {"cos", 0.501}, {"tan", 0.501}};
	for (size_t k = 0; k < sizeof fn / sizeof fn[0]; k++) {
		double worst = 0;
		int64_t at = 0;
		float got_at = 0;
		for (int64_t i = 0; i < n; i++) {
			const float v = x[i];
			const double d = v;
			float got;
			double ref;
			switch (k) {
			case 0: got = om_det_tanhf(v), ref = tanh(d); break;
			case 1: got = om_det_sigmoidf(v), ref = ref_sigmoid(d); break;
			case 2: got = (float)om_det_expm1(d), ref = expm1(d); break;
			case 3: got = (float)om_det_log1p(d), ref = log1p(d); break;
			case 4: got = (float)om_det_tanh(d), ref = tanh(d); break;
			case 5: got = (float)om_det_sigmoid(d), ref = ref_sigmoid(d); break;
			case 6: got = (float)om_det_erf(d), ref = erf(d); break;
			case 7: got = (float)om_det_sinh(d), ref = sinh(d); break;
			case 8: got = (float)om_det_cosh(d), ref = cosh(d); break;
			case 9: got = (float)om_det_asinh(d), ref = asinh(d); break;
			case 10: got = (float)om_det_acosh(d), ref = acosh(d); break;
			case 11: got = (float)om_det_atanh(d), ref = atanh(d); break;
			case 12: got = (float)om_det_atan(d), ref = atan(d); break;
			case 13: got = (float)om_det_asin(d), ref = asin(d); break;
			case 14: got = (float)om_det_acos(d), ref = acos(d); break;
			case 15: got = (float)om_det_sin(d), ref = sin(d); break;
			case 16: got = (float)om_det_cos(d), ref = cos(d); break;
			default: got = (float)om_det_tan(d), ref = tan(d); break;
			}
			const double e = ulp_f(got, ref);
			/* odd functions keep the sign of zero */
			if (v == 0 && k != 1 && k != 5 && k != 8 && k != 10 && k != 14 && k != 16 &&
			    signbit(got) != signbit(v))
				fail_msg("%s(%a) = %a: sign of zero", fn[k].name, (double)v,
				         (double)got);
			if (e > worst)
				worst = e, at = i, got_at = got;
		}
		printf("%-9s max %.3f ulp (at %a -> %a)\n", fn[k].name, worst, (double)x[at],
		       (double)got_at);
		if (worst > fn[k].max_ulp)
			fail_msg("%s(%a) = %a: %.3f ulp", fn[k].name, (double)x[at],
			         (double)got_at, worst);
	}
	free(x);
}

/* the double forms in double: magnitudes 2^-1074 .. 2^1023 geometrically, and a dense
 * uniform grid over [-40, 40] */
static void double_functions(void **state)
{
	(void)state;
	enum { NG = 60000, NU = 80001 };
	double *x = malloc(sizeof(double) * (2 * NG + NU + 12));
	assert_non_null(x);
	int64_t n = 0;
	for (int i = 0; i < NG; i++) {
		const double v = ldexp(1.0 + (i % 97) / 97.0, -1074 + (int)((int64_t)i * 2097 / NG));
		x[n++] = v, x[n++] = -v;
	}
	for (int i = 0; i < NU; i++)
		x[n++] = (i - NU / 2) * (40.0 / (NU / 2)) + 1e-3 * (i % 7);
	/* and doubles near multiples of pi/2 (pi, pi/2, 1e22) */
	const double sp[] = {0.0,  -0.0, INFINITY, -INFINITY, NAN, 0x1p-1074, 0x1.921fb54442d18p+1,
			     0x1.921fb54442d18p+0, -0x1.921fb54442d18p+0, 1e22};
	for (int i = 0; i < 10; i++)
		x[n++] = sp[i];
	static const struct {
		const char *name;
		double max_ulp;
	} fn[] = {{"exp", 2},   {"log", 4},   {"expm1", 3}, {"log1p", 3},
		  {"tanh", 4},  {"sigmoid", 4}, {"erf", 12},  {"sinh", 4},
		  {"cosh", 4},  {"asinh", 4}, {"acosh", 4}, {"atanh", 4},
		  {"atan", 5},  {"asin", 5},  {"acos", 5}, {"sin", 4},
		  {"cos", 4},   {"tan", 4}};
	for (size_t k = 0; k < sizeof fn / sizeof fn[0]; k++) {
		double worst = 0, got_at = 0;
		int64_t at = 0;
		for (int64_t i = 0; i < n; i++) {
			const double d = x[i];
			double got, ref;
			switch (k) {
			case 0: got = om_det_exp(d), ref = exp(d); break;
			case 1: got = om_det_log(d), ref = log(d); break;
			case 2: got = om_det_expm1(d), ref = expm1(d); break;
			case 3: got = om_det_log1p(d), ref = log1p(d); break;
			case 4: got = om_det_tanh(d), ref = tanh(d); break;
			case 5: got = om_det_sigmoid(d), ref = ref_sigmoid(d); break;
			case 6: got = om_det_erf(d), ref = erf(d); break;
			case 7: got = om_det_sinh(d), ref = sinh(d); break;
			case 8: got = om_det_cosh(d), ref = cosh(d); break;
			case 9: got = om_det_asinh(d), ref = asinh(d); break;
			case 10: got = om_det_acosh(d), ref = acosh(d); break;
			case 11: got = om_det_atanh(d), ref = atanh(d); break;
			case 12: got = om_det_atan(d), ref = atan(d); break;
			case 13: got = om_det_asin(d), ref = asin(d); break;
			case 14: got = om_det_acos(d), ref = acos(d); break;
			case 15: got = om_det_sin(d), ref = sin(d); break;
			case 16: got = om_det_cos(d), ref = cos(d); break;
			default: got = om_det_tan(d), ref = tan(d); break;
			}
			const double e = ulp_d(got, ref);
			if (e > worst)
				worst = e, at = i, got_at = got;
		}
		printf("%-9s max %.3f ulp in double (at %a -> %a)\n", fn[k].name, worst, x[at],
		       got_at);
		if (worst > fn[k].max_ulp)
			fail_msg("%s(%a) = %a: %.3f ulp", fn[k].name, x[at], got_at, worst);
	}
	free(x);
	/* the double closest to a multiple of pi/2, 6381956970095103 2^797 = (4k + 1) pi/2 + r,
	 * r = 4.687165924254628e-19 = 0x1.14ae72e6ba22fp-61 (exact reduction in Python integers;
	 * glibc's cos is 8 ulp off here) */
	const double hard = 0x1.6ac5b262ca1ffp+849, r = 0x1.14ae72e6ba22fp-61;
	assert_true(ulp_d(om_det_cos(hard), -r) <= 1 && ulp_d(om_det_cos(-hard), -r) <= 1);
	assert_true(om_det_sin(hard) == 1 && om_det_sin(-hard) == -1);
	assert_true(ulp_d(om_det_tan(hard), -1 / r) <= 2);
}

/* the medium reduction (Cody-Waite, |x| < 2^19) against Payne-Hanek near every multiple of
 * pi/2 below 2^19 (the doubles nearest k pi/2, where the remainder cancels most) */
static void reductions_agree(void **state)
{
	(void)state;
	for (int k = 1; k < 333000; k++) {
		const double c = k * 1.57079632679489655800;
		const double xs[] = {c, nextafter(c, 0), nextafter(c, INFINITY), c + 0.3, c - 0.7};
		for (int j = 0; j < 5; j++) {
			double rm[2], rp[2];
			const int qm = om_det_rem_pio2_medium(xs[j], rm), qp = om_det_rem_pio2(xs[j], rp);
			const double d = (rm[0] - rp[0]) + (rm[1] - rp[1]);
			if (qm != qp || !(fabs(d) <= 0x1p-100 + 0x1p-60 * fabs(rp[0])))
				fail_msg("rem_pio2(%a): medium %d %a %a, large %d %a %a", xs[j], qm,
				         rm[0], rm[1], qp, rp[0], rp[1]);
		}
	}
}

/* pow against C's pow: the special cases bit for bit (signed zeros, infinities, NaN), the
 * rest within 2e-13 relative in double and half an ulp after rounding to float */
static void pow_cases(void **state)
{
	(void)state;
	static const double v[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 2.5,
				   -2.5, 1e-3, 1e3, 0x1p-1074, 1e300, -1e300, 64, 65, -65,
				   1e10, 0x1p53, 0x1p60, -0x1p60, INFINITY, -INFINITY, NAN,
				   0.3, 7.25, -7.25, 1.5, 100.5};
	const int nv = (int)(sizeof v / sizeof v[0]);
	double worst = 0;
	for (int i = 0; i < nv; i++)
		for (int j = 0; j < nv; j++) {
			const double x = v[i], y = v[j], got = om_det_pow(x, y), ref = pow(x, y);
			if (ref != ref || ref == 0 || isinf(ref) || ref == 1 || ref == -1) {
				if (!(ref != ref ? got != got
						 : got == ref && signbit(got) == signbit(ref)))
					fail_msg("pow(%a, %a) = %a, C %a", x, y, got, ref);
				continue;
			}
			const double e = ulp_d(got, ref);
			worst = e > worst ? e : worst;
			if (e > 1024 || ulp_f((float)got, ref) > 0.501) /* 2e-13 relative */
				fail_msg("pow(%a, %a) = %a, C %a: %.1f ulp", x, y, got, ref, e);
		}
	/* float operands over a grid: within half an ulp once rounded to float */
	double wf = 0;
	for (int i = 0; i < 4000; i++)
		for (int j = 0; j < 41; j++) {
			const float x = (float)((i - 2000) * 0.0137), y = (float)((j - 20) * 0.5);
			const double ref = pow(x, y);
			const float got = (float)om_det_pow(x, y);
			const double e = ulp_f(got, ref);
			wf = e > wf ? e : wf;
			if (e > 0.501)
				fail_msg("pow(%a, %a) = %a, C %a: %.3f ulp", (double)x, (double)y,
				         (double)got, ref, e);
		}
	printf("pow max %.1f ulp in double, %.3f ulp in float\n", worst, wf);
	/* x^(1/2) is sqrt x (correctly rounded) for x > 0 */
	for (int i = 1; i < 5000; i++) {
		const double x = i * 0.37 + 1e-3 / i;
		assert_true(om_det_pow(x, 0.5) == sqrt(x) && om_det_pow(x, -0.5) == 1 / sqrt(x));
	}
}

/* every function over the same inputs, folded into one hash of the result bits */
#define HASH_BODY                                                                          \
	uint64_t h = 0xcbf29ce484222325ull;                                                \
	for (int64_t i = 0; i < n; i++) {                                                  \
		const float v = x[i];                                                      \
		const double d = v;                                                        \
		const float f[] = {om_det_tanhf(v), om_det_sigmoidf(v), om_det_expf(v),    \
				   om_det_erff(v)};                                        \
		const double g[] = {om_det_expm1(d), om_det_log1p(d), om_det_tanh(d),      \
				    om_det_sigmoid(d), om_det_erf(d), om_det_sinh(d),      \
				    om_det_cosh(d), om_det_asinh(d), om_det_acosh(d),      \
				    om_det_atanh(d), om_det_pow(d, 1.37), om_det_pow(2.1, d), \
				    om_det_atan(d), om_det_asin(d), om_det_acos(d),        \
				    om_det_sin(d), om_det_cos(d), om_det_tan(d),           \
				    om_det_exp(d), om_det_log(d)};                         \
		unsigned char b[sizeof f + sizeof g];                                      \
		memcpy(b, f, sizeof f);                                                    \
		memcpy(b + sizeof f, g, sizeof g);                                         \
		for (size_t j = 0; j < sizeof b; j++)                                      \
			h = (h ^ b[j]) * 0x100000001b3ull;                                 \
	}                                                                                  \
	return h;

static uint64_t hash_default(const float *x, int64_t n) { HASH_BODY }

#if defined(__GNUC__) && defined(__x86_64__)
#define HAVE_AVX2_CLONE 1
__attribute__((target("avx2,fma"))) static uint64_t hash_avx2(const float *x, int64_t n)
{
	HASH_BODY
}
#endif

static void same_bits_on_isas(void **state)
{
	(void)state;
#ifdef HAVE_AVX2_CLONE
	__builtin_cpu_init();
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
		skip();
	int64_t n;
	float *x = float_sweep(&n);
	int64_t m = 0; /* every third pattern, and the special values at the end */
	for (int64_t i = 0; i < n; i++)
		if (i % 3 == 0 || i >= n - 40)
			x[m++] = x[i];
	assert_true(hash_default(x, m) == hash_avx2(x, m));
	free(x);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(float_functions),
		cmocka_unit_test(double_functions),
		cmocka_unit_test(reductions_agree),
		cmocka_unit_test(pow_cases),
		cmocka_unit_test(same_bits_on_isas),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
