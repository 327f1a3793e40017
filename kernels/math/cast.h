/* cast.h — element type conversion shared by Cast/CastLike and the ops that need a scalar or
 * an operand in another type (Pow exponents, Clip bounds, Mean's count). */
#ifndef OM_CAST_H
#define OM_CAST_H

#include "op.h"

/** Converts n elements of type sdt at src into type ddt at dst (ONNX Cast semantics; float8
 *  targets saturate when `saturate`). String targets receive malloc'd strings. Numeric types,
 *  bool, float16/bfloat16/float8, the sub-byte types (4- and 2-bit; integers keep the low bits)
 *  and strings; else OM_ERR_UNSUPPORTED naming c->node. */
om_kind om_cast_elems(om_ctx *c, void *dst, int32_t ddt, const void *src, int32_t sdt, int64_t n,
		      int saturate);

/** True when om_cast_elems converts from sdt to ddt. */
bool om_cast_supported(int32_t sdt, int32_t ddt);

#endif
