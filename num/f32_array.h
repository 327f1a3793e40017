/* f32_array.h — arrays of float16, bfloat16, int8 and uint8 to and from float32 in bulk (the
 * float32 bridge, attention's rows, the 16-bit floats' element-wise loops). */
#ifndef OM_F32_ARRAY_H
#define OM_F32_ARRAY_H

#include <stdint.h>

/** n elements of type dt (float, float16, bfloat16, int8 or uint8) at src as floats into dst
 *  (exact: every such value is a float) */
void om_to_f32(int32_t dt, const void *src, int64_t n, float *dst);
/** n floats into elements of type dt: float16 and bfloat16 rounded to nearest even (NaN stays
 *  NaN); int8 and uint8 rounded to nearest even and saturated, NaN to 0 */
void om_from_f32(int32_t dt, const float *src, int64_t n, void *dst);

#endif
