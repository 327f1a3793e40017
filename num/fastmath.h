/* fastmath.h — fast-mode float32 activations over arrays (fastmath.c): Sigmoid, Swish
 * (QuickGelu, SiLU), HardSwish, Tanh and Gelu in one pass over memory (and sums, Softmax's and
 * LayerNormalization's rows), FMA and AVX-512 / AVX2 clones picked at load time. Not
 * bit-identical across instruction sets: exact mode keeps detmath.h's loops (docs/ops.md,
 * "Exact mode and libm"); these are for kernels told !exact. Accuracy (against double on the
 * float argument, tests/test_fastmath.c): Sigmoid and Swish within 3e-7 relative (results
 * below 1e-30: within 1e-36 absolute), Tanh within 5e-7 relative, Gelu within 2e-6 relative
 * where |y| > 1e-7 (the left tail: within 1e-12 absolute), HardSwish the bits of exact mode.
 * NaN in, NaN out. y may be x. */
#ifndef OM_FASTMATH_H
#define OM_FASTMATH_H

#include <stdbool.h>
#include <stdint.h>

/** Softmax (log_form: LogSoftmax) of `rows` contiguous rows of n; y may be x. */
void om_fast_softmax_f32(int64_t rows, int64_t n, float *y, const float *x, bool log_form);
/** The sum of x's n values in 16 partial sums (vectorized; not a running sum's order). */
float om_fast_sum_f32(int64_t n, const float *x);
/** One row of LayerNormalization in float: y = (v - mean) * inv * scale + bias (bias may be
 *  NULL), mean and inv = 1 / sqrt(variance + eps) of v's n values, the sums in 16 lanes (not
 *  exact mode's double); y may be v. */
void om_fast_layer_norm_f32(int64_t n, float *y, const float *v, const float *scale,
			    const float *bias, float eps, float *mean, float *inv);
/** One row of RMSNormalization in float: y = v * inv * scale, inv = 1 / sqrt(mean of v^2 +
 *  eps) of v's n values, the sum in 16 lanes (not exact mode's double); y may be v. */
void om_fast_rms_norm_f32(int64_t n, float *y, const float *v, const float *scale, float eps,
			  float *inv);
/** y = 1 / (1 + e^-x) */
void om_fast_sigmoid_f32(int64_t n, float *y, const float *x);
/** y = x * Sigmoid(alpha x) (Swish; SiLU and QuickGelu are alpha 1 and 1.702) */
void om_fast_swish_f32(int64_t n, float *y, const float *x, float alpha);
/** y = x * max(0, min(1, x / 6 + 1/2)) */
void om_fast_hardswish_f32(int64_t n, float *y, const float *x);
/** y = tanh(x) */
void om_fast_tanh_f32(int64_t n, float *y, const float *x);
/** y = x / 2 * (1 + erf(x / sqrt 2)) */
void om_fast_gelu_f32(int64_t n, float *y, const float *x);

#endif
