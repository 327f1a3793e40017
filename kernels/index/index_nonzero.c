/* index_nonzero.c — NonZero (opset 9+, seed §2), the one data-dependent operator: output
 * int64 [max(rank, 1), count], coordinates of the non-zero elements in row-major order.
 * -0.0 is zero, NaN is not; a scalar counts as a 1-element vector. */
#include <string.h>

#include "index_util.h"

/* Magnitude mask of an element: the sign bit is left out for the float types, so -0.0 is
 * zero while NaN (non-zero payload) is not. 0 for unsupported types. */
static uint64_t magnitude_mask(int32_t dtype)
{
	switch (dtype) {
	case OM_FLOAT16: case OM_BFLOAT16: return 0x7fff;
	case OM_FLOAT: return 0x7fffffffu;
	case OM_DOUBLE: return 0x7fffffffffffffffu;
	default: return om_ix_is_int(dtype) ? UINT64_MAX : 0;
	}
}

static bool nonzero_at(const unsigned char *p, size_t size, uint64_t mask)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t q;
	switch (size) {
	case 1: memcpy(&b, p, 1); return (b & mask) != 0;
	case 2: memcpy(&h, p, 2); return (h & mask) != 0;
	case 4: memcpy(&w, p, 4); return (w & mask) != 0;
	default: memcpy(&q, p, 8); return (q & mask) != 0;
	}
}

static om_kind count_nonzero(om_ctx *c, int64_t *count)
{
	const om_tensor *x = c->in[0];
	uint64_t mask = magnitude_mask(x->dtype);
	if (!mask)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "NonZero on %s",
				om_dtype_name(x->dtype));
	if (!om_has_value(x))
		return OM_NEED_VALUE;
	const size_t size = om_dtype_size(x->dtype);
	const int64_t n = om_tensor_numel(x);
	const unsigned char *p = x->data;
	int64_t cnt = 0;
	for (int64_t i = 0; i < n; i++)
		cnt += nonzero_at(p + (size_t)i * size, size, mask);
	*count = cnt;
	return OM_OK;
}

om_kind om_nonzero_infer(om_ctx *c)
{
	int64_t cnt = 0;
	om_kind rc = count_nonzero(c, &cnt);
	if (rc)
		return rc;
	const int64_t dims[2] = {c->in[0]->rank > 1 ? c->in[0]->rank : 1, cnt};
	return om_ix_set_shape(c, c->out[0], OM_INT64, 2, dims);
}

om_kind om_nonzero_kernel(om_ctx *c)
{
	const om_tensor *x = c->in[0];
	om_tensor *y = c->out[0];
	const uint64_t mask = magnitude_mask(x->dtype);
	const size_t size = om_dtype_size(x->dtype);
	const int64_t n = om_tensor_numel(x), cnt = y->dims[1];
	const int32_t r = x->rank;
	const unsigned char *p = x->data;
	int64_t *out = y->data, pos[OM_MAX_RANK] = {0}, j = 0;
	for (int64_t i = 0; i < n; i++) {
		if (nonzero_at(p + (size_t)i * size, size, mask)) {
			if (j >= cnt) /* the data changed since inference */
				return om_error(c->st, OM_ERR_INTERNAL, c->node, "count changed");
			for (int32_t d = 0; d < r; d++)
				out[d * cnt + j] = pos[d];
			if (r == 0)
				out[j] = 0;
			j++;
		}
		for (int32_t d = r - 1; d >= 0 && ++pos[d] == x->dims[d]; d--)
			pos[d] = 0;
	}
	return OM_OK;
}
