/* cast_half.h — float16/bfloat16 <-> float32 conversion in vector loops (cast_half.c), the same
 * bits as om_cast_elems's general path through its double pivot. */
#ifndef OM_CAST_HALF_H
#define OM_CAST_HALF_H

#include <stdbool.h>
#include <stdint.h>

/** Whether om_cast_half converts sdt to ddt: float16 or bfloat16 to float32 and back. */
bool om_cast_half_has(int32_t sdt, int32_t ddt);

/** dst[0..n) = src[0..n) converted (om_cast_half_has(sdt, ddt)), on up to `threads` threads
 *  (the result does not depend on them): round to nearest even, NaN quiet with its payload
 *  (the leading bits for a narrower target), as the general path's double pivot gives. */
void om_cast_half(int threads, void *dst, int32_t ddt, const void *src, int32_t sdt, int64_t n);

#endif
