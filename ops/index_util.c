/* index_util.c — index and numeric reads, size checks and string ownership for the
 * indexing and generating kernels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "index_util.h"
#include "shape_util.h"

om_kind om_ix_check_index_type(om_ctx *c, const om_tensor *t, const char *what)
{
	if (t->dtype != OM_INT32 && t->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s must be int32 or int64, got %s", what, om_dtype_name(t->dtype));
	return OM_OK;
}

om_kind om_ix_check_indices(om_ctx *c, const om_tensor *t, int64_t n, const char *what)
{
	int64_t cnt = om_tensor_numel(t);
	for (int64_t i = 0; i < cnt; i++) {
		int64_t v = om_ix_at(t, i);
		if (v < -n || v >= n)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"%s %lld is outside [-%lld, %lld)", what, (long long)v,
					(long long)n, (long long)n);
	}
	return OM_OK;
}

om_kind om_ix_check_tuples(om_ctx *c, const om_tensor *ix, int64_t ntuples, int64_t k,
			   const int64_t *dims)
{
	for (int64_t t = 0; t < ntuples; t++)
		for (int64_t j = 0; j < k; j++) {
			const int64_t v = om_ix_at(ix, t * k + j), n = dims[j];
			if (v < -n || v >= n)
				return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
						"index %lld is outside [-%lld, %lld) (tuple "
						"entry %lld)", (long long)v, (long long)n,
						(long long)n, (long long)j);
		}
	return OM_OK;
}

int64_t om_ix_tuple_offset(const om_tensor *ix, int64_t t, int64_t k, const int64_t *dims)
{
	int64_t off = 0;
	for (int64_t j = 0; j < k; j++) {
		const int64_t v = om_ix_at(ix, t * k + j);
		off = off * dims[j] + (v < 0 ? v + dims[j] : v);
	}
	return off;
}

om_kind om_ix_set_shape(om_ctx *c, om_tensor *out, int32_t dtype, int32_t rank,
			const int64_t *dims)
{
	if (rank < 0 || rank > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"output rank %d exceeds %d", rank, OM_MAX_RANK);
	/* moves unpack sub-byte types to a byte per element (om_move_run) */
	const int64_t n = om_shape_numel(rank, dims);
	const int32_t unpacked = om_dtype_size(dtype) ? dtype : OM_UINT8;
	if (om_dtype_bits(dtype) == 0 || om_numel_bytes(unpacked, n) < 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"output shape is negative or too large");
	om_set_shape(out, dtype, rank, dims);
	return OM_OK;
}

bool om_ix_is_int(int32_t dtype)
{
	switch (dtype) {
	case OM_BOOL: case OM_UINT8: case OM_INT8: case OM_UINT16: case OM_INT16:
	case OM_UINT32: case OM_INT32: case OM_UINT64: case OM_INT64:
		return true;
	default:
		return false;
	}
}

bool om_ix_is_float(int32_t dtype)
{
	return dtype == OM_FLOAT || dtype == OM_DOUBLE || dtype == OM_FLOAT16 ||
	       dtype == OM_BFLOAT16;
}

/* Element i of p read with a byte move (one load once compiled): a constant read here may be
 * misaligned for its type (a large initializer left in the mapped file, api/load.c, which the
 * passes' samplers read a few elements of). */
#define OM_IX_LOAD(name, T)                                                  \
	static T name(const void *p, int64_t i)                                  \
	{                                                                        \
		T v;                                                             \
		memcpy(&v, (const unsigned char *)p + (size_t)i * sizeof v, sizeof v); \
		return v;                                                        \
	}
OM_IX_LOAD(ld_u16, uint16_t)
OM_IX_LOAD(ld_i16, int16_t)
OM_IX_LOAD(ld_u32, uint32_t)
OM_IX_LOAD(ld_i32, int32_t)
OM_IX_LOAD(ld_u64, uint64_t)
OM_IX_LOAD(ld_i64, int64_t)
OM_IX_LOAD(ld_f32, float)
OM_IX_LOAD(ld_f64, double)

int64_t om_ix_int_at(const om_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case OM_BOOL: case OM_UINT8: return ((const uint8_t *)p)[i];
	case OM_INT8: return ((const int8_t *)p)[i];
	case OM_UINT16: return ld_u16(p, i);
	case OM_INT16: return ld_i16(p, i);
	case OM_UINT32: return ld_u32(p, i);
	case OM_INT32: return ld_i32(p, i);
	case OM_UINT64: {
		uint64_t u = ld_u64(p, i);
		return u > INT64_MAX ? INT64_MAX : (int64_t)u;
	}
	default: return ld_i64(p, i);
	}
}

double om_ix_float_at(const om_tensor *t, int64_t i)
{
	const void *p = t->data;
	switch (t->dtype) {
	case OM_FLOAT16: return om_half_to_float(ld_u16(p, i));
	case OM_BFLOAT16: return om_bf16_to_float(ld_u16(p, i));
	case OM_FLOAT: return ld_f32(p, i);
	default: return ld_f64(p, i);
	}
}

om_kind om_ix_scalar_int(om_ctx *c, const om_tensor *t, const char *what, int64_t *out)
{
	if (!om_has_value(t))
		return OM_NEED_VALUE;
	if (om_tensor_numel(t) != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s must have exactly one element", what);
	if (om_ix_is_int(t->dtype)) {
		*out = om_ix_int_at(t, 0);
		return OM_OK;
	}
	if (!om_ix_is_float(t->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s has type %s", what,
				om_dtype_name(t->dtype));
	double v = trunc(om_ix_float_at(t, 0));
	if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"%s is not a finite integer", what);
	*out = (int64_t)v;
	return OM_OK;
}

om_kind om_ix_own_strings(om_ctx *c, om_tensor *t)
{
	if (!t || t->dtype != OM_STRING || c->run)
		return OM_OK;
	om_str *s = t->data;
	int64_t n = om_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		int64_t len = s[i].len > 0 ? s[i].len : 0;
		char *p = malloc((size_t)len + 1);
		if (!p) {
			for (int64_t j = i; j < n; j++)
				s[j].ptr = NULL, s[j].len = 0;
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory (strings)");
		}
		if (len)
			memcpy(p, s[i].ptr, (size_t)len);
		p[len] = 0;
		s[i].ptr = p;
		s[i].len = len;
	}
	return OM_OK;
}
