#include "ir.h"

static const struct {
	const char *name;
	int bits;
} dtypes[OM_DTYPE_COUNT] = {
	[OM_UNDEFINED] = {"undefined", 0},
	[OM_FLOAT] = {"float", 32},
	[OM_UINT8] = {"uint8", 8},
	[OM_INT8] = {"int8", 8},
	[OM_UINT16] = {"uint16", 16},
	[OM_INT16] = {"int16", 16},
	[OM_INT32] = {"int32", 32},
	[OM_INT64] = {"int64", 64},
	[OM_STRING] = {"string", 8 * (int)sizeof(om_str)},
	[OM_BOOL] = {"bool", 8},
	[OM_FLOAT16] = {"float16", 16},
	[OM_DOUBLE] = {"double", 64},
	[OM_UINT32] = {"uint32", 32},
	[OM_UINT64] = {"uint64", 64},
	[OM_COMPLEX64] = {"complex64", 64},
	[OM_COMPLEX128] = {"complex128", 128},
	[OM_BFLOAT16] = {"bfloat16", 16},
	[OM_FLOAT8E4M3FN] = {"float8e4m3fn", 8},
	[OM_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", 8},
	[OM_FLOAT8E5M2] = {"float8e5m2", 8},
	[OM_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", 8},
	[OM_UINT4] = {"uint4", 4},
	[OM_INT4] = {"int4", 4},
	[OM_FLOAT4E2M1] = {"float4e2m1", 4},
	[OM_FLOAT8E8M0] = {"float8e8m0", 8},
	[OM_UINT2] = {"uint2", 2},
	[OM_INT2] = {"int2", 2},
};

_Static_assert(sizeof dtypes / sizeof dtypes[0] == OM_DTYPE_COUNT, "a row per element type");

int om_dtype_bits(int32_t dtype)
{
	return dtype > 0 && dtype < OM_DTYPE_COUNT ? dtypes[dtype].bits : 0;
}

size_t om_dtype_size(int32_t dtype)
{
	return (size_t)om_dtype_bits(dtype) / 8;
}

const char *om_dtype_name(int32_t dtype)
{
	return dtype > 0 && dtype < OM_DTYPE_COUNT ? dtypes[dtype].name : "undefined";
}
