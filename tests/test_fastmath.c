/* test_fastmath.c — the fast-mode activations of num/fastmath.h against double references on
 * the float arguments the kernels see (alpha x, x / sqrt 2 rounded to float); NaN in, NaN out;
 * y may be x. */
#include <math.h>
#include <stdlib.h>

#include "testutil.h"
#include "fastmath.h"

enum { N = 400000 };

/* a grid over [-40, 40), one over the far left tail [-110, -40) (where e^x is subnormal),
 * float bit patterns spread over [-60, 60] (dense near 0), specials */
static int64_t inputs(float *x)
{
	int64_t n = 0;
	for (int64_t i = 0; i < N / 2; i++)
		x[n++] = -40.0f + 80.0f * (float)i / (float)(N / 2);
	for (int64_t i = 0; i < N / 8; i++)
		x[n++] = -110.0f + 70.0f * (float)i / (float)(N / 8);
	for (uint32_t b = 0; n < N - 8 && b < 0x42700000u; b += 64 * 0x3c) {
		float v;
		memcpy(&v, &b, sizeof v);
		x[n++] = (b & 64) ? -v : v;
	}
	x[n++] = NAN, x[n++] = 0.0f, x[n++] = -0.0f, x[n++] = 1e-30f, x[n++] = -1e-30f;
	return n;
}

static double sig(double u) { return 1 / (1 + exp(-u)); }

typedef struct err {
	double rel, abs; /* relative where |ref| > floor, absolute below */
} err;

static err errors(const float *x, const float *y, int64_t n, float alpha, int kind,
		  double floor)
{
	err e = {0, 0};
	for (int64_t i = 0; i < n; i++) {
		if (x[i] != x[i]) {
			assert_true(y[i] != y[i]);
			continue;
		}
		double r;
		if (kind == 0) {
			r = sig(x[i]);
		} else if (kind == 1) {
			r = x[i] * sig((float)(alpha * x[i]));
		} else if (kind == 3) {
			r = tanh((double)x[i]);
		} else {
			const double z = (float)(fabsf(x[i]) * 0.70710678118654752f);
			const double c = erfc(z);
			r = x[i] * (x[i] < 0 ? c / 2 : 1 - c / 2);
		}
		const double d = fabs((double)y[i] - r);
		if (fabs(r) > floor)
			e.rel = fmax(e.rel, d / fabs(r));
		else
			e.abs = fmax(e.abs, d);
	}
	return e;
}

static void activations(void **state)
{
	(void)state;
	float *x = malloc(sizeof(float) * N), *y = malloc(sizeof(float) * N);
	const int64_t n = inputs(x);
	om_fast_sigmoid_f32(n, y, x);
	err e = errors(x, y, n, 1, 0, 1e-30);
	assert_true(e.rel < 3e-7 && e.abs < 1e-36);
	for (int k = 0; k < 2; k++) {
		const float alpha = k ? 1.702f : 1.0f;
		om_fast_swish_f32(n, y, x, alpha);
		e = errors(x, y, n, alpha, 1, 1e-30);
		assert_true(e.rel < 3e-7 && e.abs < 1e-36);
	}
	om_fast_gelu_f32(n, y, x);
	e = errors(x, y, n, 1, 2, 1e-7);
	assert_true(e.rel < 2e-6 && e.abs < 1e-12);
	om_fast_tanh_f32(n, y, x);
	e = errors(x, y, n, 1, 3, 1e-30);
	assert_true(e.rel < 5e-7 && e.abs < 1e-36);
	om_fast_hardswish_f32(n, y, x);
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] / 6.0f + 0.5f, w = x[i] * (v < 0 ? 0.0f : v > 1 ? 1.0f : v);
		assert_true(memcmp(&w, &y[i], sizeof w) == 0 || (w != w && y[i] != y[i]));
	}
	/* in place */
	float z[3] = {-1, 0.5f, 3};
	om_fast_sigmoid_f32(3, z, z);
	assert_true(fabs(z[0] - sig(-1)) < 1e-7 && fabs(z[2] - sig(3)) < 1e-7);
	free(x), free(y);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(activations)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
