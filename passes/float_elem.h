/* float_elem.h — elements of a float, double, float16 or bfloat16 tensor read and written as
 * double (passes/float_elem.c): the constants the fusions match and the weights they make. */
#ifndef OM_FLOAT_ELEM_H
#define OM_FLOAT_ELEM_H

#include "ir.h"

/** True for float, double, float16 and bfloat16. */
bool om_float_type(int32_t dtype);
/** Element i of t (one of those types; i within its data) as double. */
double om_float_at(const om_tensor *t, int64_t i);
/** Element i of t set to v, rounded to t's type. */
void om_float_put(om_tensor *t, int64_t i, double v);

#endif
