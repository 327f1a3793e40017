/* numrun.h — runs of numeric elements loaded as double or int64 and stored back: the type
 * macros the reduction and normalization kernels share (float16/bfloat16 go through float). */
#ifndef OM_NUMRUN_H
#define OM_NUMRUN_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "half.h"
#include "omopt.h"

static inline bool om_is_float_type(int32_t dt)
{
	return dt == OM_FLOAT || dt == OM_DOUBLE || dt == OM_FLOAT16 || dt == OM_BFLOAT16;
}

static inline bool om_is_int_type(int32_t dt)
{
	return dt == OM_INT8 || dt == OM_INT16 || dt == OM_INT32 || dt == OM_INT64 ||
	       dt == OM_UINT8 || dt == OM_UINT16 || dt == OM_UINT32 || dt == OM_UINT64;
}

static inline bool om_is_unsigned_type(int32_t dt)
{
	return dt == OM_UINT8 || dt == OM_UINT16 || dt == OM_UINT32 || dt == OM_UINT64 ||
	       dt == OM_BOOL;
}

#define OM_RUN_LOAD(T, CONV)                                                                \
	do {                                                                                \
		const T *s_ = (const T *)src;                                               \
		for (int64_t i_ = 0; i_ < n; i_++)                                          \
			dst[i_] = CONV(s_[i_ * stride]);                                    \
	} while (0)
#define OM_ID(x) (x)

/** dst[i] = src[i * stride] as double, i < n; false for a type that is not numeric. */
static inline bool om_load_f64(int32_t dt, const void *src, int64_t stride, int64_t n,
			       double *dst)
{
	switch (dt) {
	case OM_FLOAT: OM_RUN_LOAD(float, OM_ID); return true;
	case OM_DOUBLE: OM_RUN_LOAD(double, OM_ID); return true;
	case OM_FLOAT16: OM_RUN_LOAD(uint16_t, om_half_to_float); return true;
	case OM_BFLOAT16: OM_RUN_LOAD(uint16_t, om_bf16_to_float); return true;
	case OM_INT8: OM_RUN_LOAD(int8_t, OM_ID); return true;
	case OM_INT16: OM_RUN_LOAD(int16_t, OM_ID); return true;
	case OM_INT32: OM_RUN_LOAD(int32_t, OM_ID); return true;
	case OM_INT64: OM_RUN_LOAD(int64_t, OM_ID); return true;
	case OM_UINT8: case OM_BOOL: OM_RUN_LOAD(uint8_t, OM_ID); return true;
	case OM_UINT16: OM_RUN_LOAD(uint16_t, OM_ID); return true;
	case OM_UINT32: OM_RUN_LOAD(uint32_t, OM_ID); return true;
	case OM_UINT64: OM_RUN_LOAD(uint64_t, OM_ID); return true;
	default: return false;
	}
}

/** dst[i] = src[i * stride] as int64 (uint64 keeps its bits); false for a non-integer type. */
static inline bool om_load_i64(int32_t dt, const void *src, int64_t stride, int64_t n,
			       int64_t *dst)
{
	switch (dt) {
	case OM_INT8: OM_RUN_LOAD(int8_t, OM_ID); return true;
	case OM_INT16: OM_RUN_LOAD(int16_t, OM_ID); return true;
	case OM_INT32: OM_RUN_LOAD(int32_t, OM_ID); return true;
	case OM_INT64: OM_RUN_LOAD(int64_t, OM_ID); return true;
	case OM_UINT8: case OM_BOOL: OM_RUN_LOAD(uint8_t, OM_ID); return true;
	case OM_UINT16: OM_RUN_LOAD(uint16_t, OM_ID); return true;
	case OM_UINT32: OM_RUN_LOAD(uint32_t, OM_ID); return true;
	case OM_UINT64: OM_RUN_LOAD(uint64_t, (int64_t)); return true;
	default: return false;
	}
}

/* a double clamped into [lo, hi] (NaN to 0) before the conversion, which is then defined */
static inline double om_clamp_f64(double v, double lo, double hi)
{
	return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

#define OM_RUN_STORE(T, CONV)                                                               \
	do {                                                                                \
		T *d_ = (T *)dst;                                                           \
		for (int64_t i_ = 0; i_ < n; i_++)                                          \
			d_[i_ * stride] = CONV(src[i_]);                                    \
	} while (0)
#define OM_TO_F16(x) om_float_to_half((float)(x))
#define OM_TO_BF16(x) om_float_to_bf16((float)(x))
#define OM_TO_I8(x) (int8_t)om_clamp_f64(x, INT8_MIN, INT8_MAX)
#define OM_TO_I16(x) (int16_t)om_clamp_f64(x, INT16_MIN, INT16_MAX)
#define OM_TO_I32(x) (int32_t)om_clamp_f64(x, INT32_MIN, INT32_MAX)
#define OM_TO_I64(x) (int64_t)om_clamp_f64(x, -9223372036854775808.0, 9223372036854774784.0)
#define OM_TO_U8(x) (uint8_t)om_clamp_f64(x, 0, UINT8_MAX)
#define OM_TO_U16(x) (uint16_t)om_clamp_f64(x, 0, UINT16_MAX)
#define OM_TO_U32(x) (uint32_t)om_clamp_f64(x, 0, UINT32_MAX)
#define OM_TO_U64(x) (uint64_t)om_clamp_f64(x, 0, 18446744073709549568.0)
#define OM_TO_BOOL(x) (uint8_t)((x) != 0)

/** dst[i * stride] = src[i] converted to dt, i < n (rounded to nearest; integers truncate
 *  and saturate). */
static inline bool om_store_f64(int32_t dt, void *dst, int64_t stride, const double *src,
				int64_t n)
{
	switch (dt) {
	case OM_FLOAT: OM_RUN_STORE(float, (float)); return true;
	case OM_DOUBLE: OM_RUN_STORE(double, OM_ID); return true;
	case OM_FLOAT16: OM_RUN_STORE(uint16_t, OM_TO_F16); return true;
	case OM_BFLOAT16: OM_RUN_STORE(uint16_t, OM_TO_BF16); return true;
	case OM_INT8: OM_RUN_STORE(int8_t, OM_TO_I8); return true;
	case OM_INT16: OM_RUN_STORE(int16_t, OM_TO_I16); return true;
	case OM_INT32: OM_RUN_STORE(int32_t, OM_TO_I32); return true;
	case OM_INT64: OM_RUN_STORE(int64_t, OM_TO_I64); return true;
	case OM_UINT8: OM_RUN_STORE(uint8_t, OM_TO_U8); return true;
	case OM_UINT16: OM_RUN_STORE(uint16_t, OM_TO_U16); return true;
	case OM_UINT32: OM_RUN_STORE(uint32_t, OM_TO_U32); return true;
	case OM_UINT64: OM_RUN_STORE(uint64_t, OM_TO_U64); return true;
	case OM_BOOL: OM_RUN_STORE(uint8_t, OM_TO_BOOL); return true;
	default: return false;
	}
}

/** dst[i] = src[i] truncated to dt's width (two's complement wrap, as ONNX Runtime). */
static inline bool om_store_i64(int32_t dt, void *dst, const int64_t *src, int64_t n)
{
	const int64_t stride = 1;
	switch (dt) {
	case OM_INT8: case OM_UINT8: OM_RUN_STORE(uint8_t, (uint8_t)); return true;
	case OM_INT16: case OM_UINT16: OM_RUN_STORE(uint16_t, (uint16_t)); return true;
	case OM_INT32: case OM_UINT32: OM_RUN_STORE(uint32_t, (uint32_t)); return true;
	case OM_INT64: case OM_UINT64: OM_RUN_STORE(int64_t, OM_ID); return true;
	case OM_BOOL: OM_RUN_STORE(uint8_t, OM_TO_BOOL); return true;
	default: return false;
	}
}

#endif
