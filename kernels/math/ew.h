/* ew.h — elementwise kernels: the type macros they dispatch on, and their entry points.
 *
 * Arithmetic never repeats per type: a kernel body is written once against a compute type
 * and instantiated by the type lists below. Each list entry is
 *     X(A, DT, T, CT, LD)
 * DT the element type number, T its storage type, CT the compute type (float16/bfloat16 are
 * computed in float; signed integers in int64_t, unsigned in uint64_t, narrowed on store),
 * LD(v) widens a stored T to CT. Stores are om_ew_st_<T> (see below), picked by token pasting
 * on DT: OM_EW_ST(DT, v). A is passed through (the op's name). */
#ifndef OM_EW_H
#define OM_EW_H

#include <math.h>

#include "half.h"
#include "op.h"

#define OM_EW_ID(v) (v)

#define OM_EW_FLOATS(X, A)                                                       \
	X(A, OM_FLOAT, float, float, OM_EW_ID)                                   \
	X(A, OM_DOUBLE, double, double, OM_EW_ID)                                \
	X(A, OM_FLOAT16, uint16_t, float, om_half_to_float)                      \
	X(A, OM_BFLOAT16, uint16_t, float, om_bf16_to_float)
#define OM_EW_SINTS(X, A)                                                        \
	X(A, OM_INT8, int8_t, int64_t, OM_EW_ID)                                 \
	X(A, OM_INT16, int16_t, int64_t, OM_EW_ID)                               \
	X(A, OM_INT32, int32_t, int64_t, OM_EW_ID)                               \
	X(A, OM_INT64, int64_t, int64_t, OM_EW_ID)
#define OM_EW_UINTS(X, A)                                                        \
	X(A, OM_UINT8, uint8_t, uint64_t, OM_EW_ID)                              \
	X(A, OM_UINT16, uint16_t, uint64_t, OM_EW_ID)                            \
	X(A, OM_UINT32, uint32_t, uint64_t, OM_EW_ID)                            \
	X(A, OM_UINT64, uint64_t, uint64_t, OM_EW_ID)
#define OM_EW_BOOLS(X, A) X(A, OM_BOOL, uint8_t, uint64_t, OM_EW_ID)

/* store: CT -> T. Integers wrap (two's complement, as every ONNX runtime does). */
#define OM_EW_ST(DT, v) OM_EW_ST_##DT(v)
#define OM_EW_ST_OM_FLOAT(v) ((float)(v))
#define OM_EW_ST_OM_DOUBLE(v) ((double)(v))
#define OM_EW_ST_OM_FLOAT16(v) om_float_to_half((float)(v))
#define OM_EW_ST_OM_BFLOAT16(v) om_float_to_bf16((float)(v))
#define OM_EW_ST_OM_INT8(v) ((int8_t)(uint8_t)(v))
#define OM_EW_ST_OM_INT16(v) ((int16_t)(uint16_t)(v))
#define OM_EW_ST_OM_INT32(v) ((int32_t)(uint32_t)(v))
#define OM_EW_ST_OM_INT64(v) ((int64_t)(uint64_t)(v))
#define OM_EW_ST_OM_UINT8(v) ((uint8_t)(v))
#define OM_EW_ST_OM_UINT16(v) ((uint16_t)(v))
#define OM_EW_ST_OM_UINT32(v) ((uint32_t)(v))
#define OM_EW_ST_OM_UINT64(v) ((uint64_t)(v))
#define OM_EW_ST_OM_BOOL(v) ((uint8_t)((v) != 0))

#define OM_EW_IS_FLOAT(dt)                                                                 \
	((dt) == OM_FLOAT || (dt) == OM_DOUBLE || (dt) == OM_FLOAT16 || (dt) == OM_BFLOAT16)

/* wrapping signed arithmetic on int64_t without undefined behaviour */
#define OM_EW_WRAP(op, x, y) ((int64_t)((uint64_t)(x) op (uint64_t)(y)))

/** Float (double) to integer without undefined behaviour: NaN is 0, out of range saturates. */
static inline int64_t om_ew_f2i(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

static inline uint64_t om_ew_f2u(double v)
{
	if (v != v || v <= 0)
		return 0;
	if (v >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)v;
}

/* Elements per piece of an elementwise loop split over a run's threads (num/parallel.h): at
 * least this many are worth a thread (2 threads, 20 chained float ops, us an op: Mul of 65536
 * 6.0 -> 6.3, of 131072 12.5 -> 9.9, of 32768 3.2 -> 4.9 split in two; Sigmoid of 32768
 * 19 -> 16, of 65536 50 -> 30); a multiple of 64, so that every piece starts on a cache line
 * and a vector boundary. */
enum { OM_EW_GRAIN = 32768 };

/* ---- entry points (rows in ops_elementwise.c) -------------------------------------------- */

/* binary/variadic/ternary ops with broadcasting (ew_binary.c) */
#define OM_EW_BINARY_OPS(X)                                                                \
	X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Mod) X(Equal) X(Less) X(LessOrEqual) X(Greater) \
	X(GreaterOrEqual) X(And) X(Or) X(Xor) X(BitShift) X(BitwiseAnd) X(BitwiseOr)         \
	X(BitwiseXor) X(PRelu) X(Min) X(Max) X(Sum) X(Mean) X(Where) X(Clip6) X(Clip11)   \
	X(SwiGLU) X(StringConcat)
/* unary ops (ew_unary.c) */
#define OM_EW_UNARY_OPS(X)                                                                 \
	X(Neg) X(Abs) X(Sqrt) X(Reciprocal) X(Exp) X(Log) X(Erf) X(Tanh) X(Sigmoid)          \
	X(HardSigmoid) X(HardSwish) X(Relu) X(LeakyRelu) X(Elu) X(Selu) X(Softplus)          \
	X(Softsign) X(Gelu) X(Floor) X(Ceil) X(Round) X(Sign) X(Not) X(BitwiseNot) X(IsNaN)  \
	X(IsInf) X(Sin) X(Cos) X(Tan) X(Asin) X(Acos) X(Atan) X(Sinh) X(Cosh) X(Asinh)       \
	X(Acosh) X(Atanh) X(ThresholdedRelu) X(Celu) X(Shrink) X(Mish) X(Swish)

#define OM_EW_DECLARE(Name)                                                                \
	om_kind om_ew_infer_##Name(om_ctx *c);                                             \
	om_kind om_ew_kernel_##Name(om_ctx *c);
OM_EW_BINARY_OPS(OM_EW_DECLARE)
OM_EW_UNARY_OPS(OM_EW_DECLARE)
/** Gelu(a + b) over rows of d floats, b of d floats (o may be a): com.microsoft BiasGelu */
void om_ew_bias_gelu_f32(int64_t rows, int64_t d, float *o, const float *a, const float *b);

#endif
