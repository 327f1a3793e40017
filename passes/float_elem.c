/* float_elem.c — float tensor elements as double (see float_elem.h). */
#include "float_elem.h"
#include "half.h"

bool om_float_type(int32_t dtype)
{
	return dtype == OM_FLOAT || dtype == OM_DOUBLE || dtype == OM_FLOAT16 ||
	       dtype == OM_BFLOAT16;
}

double om_float_at(const om_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case OM_FLOAT:
		return ((const float *)t->data)[i];
	case OM_DOUBLE:
		return ((const double *)t->data)[i];
	case OM_FLOAT16:
		return om_half_to_float(((const uint16_t *)t->data)[i]);
	default:
		return om_bf16_to_float(((const uint16_t *)t->data)[i]);
	}
}

void om_float_put(om_tensor *t, int64_t i, double v)
{
	switch (t->dtype) {
	case OM_FLOAT:
		((float *)t->data)[i] = (float)v;
		break;
	case OM_DOUBLE:
		((double *)t->data)[i] = v;
		break;
	case OM_FLOAT16:
		((uint16_t *)t->data)[i] = om_float_to_half((float)v);
		break;
	default:
		((uint16_t *)t->data)[i] = om_float_to_bf16((float)v);
		break;
	}
}
