/* attn_rows.h — the row operations the attention kernels share (Attention, RotaryEmbedding,
 * com.microsoft GroupQueryAttention, MultiHeadAttention, Attention and QAttention), in double:
 * softcap's tanh, softmax with an optional sink logit, and the rotary rotation of one head row
 * (attn_rows.c); rows of float16 or bfloat16 to float and back are num/f32_array.h's. */
#ifndef OM_ATTN_ROWS_H
#define OM_ATTN_ROWS_H

#include <stdbool.h>
#include <stdint.h>

/** tanh(x) from detmath.h's exp (the same bits everywhere); +-1 beyond |x| > 20 */
double om_attn_tanh(double x);
/**
 * Softmax along a row of n in place. sink: NULL, or one more logit that takes part in the
 * maximum and the denominator but has no output (ONNX Runtime's head_sink; smooth_softmax is
 * a sink of 0). Without a sink, a row without any finite score gives zeros.
 */
void om_attn_softmax(double *r, int64_t n, const double *sink);
/**
 * Rotates the first rd values of head row r (rd even) in pairs by cos/sin rows of rd / 2:
 * interleaved pairs (2i, 2i + 1), else (i, i + rd / 2); the rest of the row is untouched.
 */
void om_attn_rotate(double *r, const double *cs, const double *sn, int64_t rd,
		    bool interleaved);


#endif
