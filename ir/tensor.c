#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* The product of the non-zero extents must fit too, so that every partial product of a valid
 * shape (outer * inner, a row times a count) fits in int64_t, even when another extent is 0. */
int64_t om_shape_numel(int32_t rank, const int64_t *dims)
{
	int64_t n = 1;
	bool zero = false;
	for (int32_t i = 0; i < rank; i++) {
		if (dims[i] < 0)
			return -1;
		if (dims[i] == 0)
			zero = true;
		else if (n > INT64_MAX / dims[i])
			return -1;
		else
			n *= dims[i];
	}
	return zero ? 0 : n;
}

int64_t om_tensor_numel(const om_tensor *t)
{
	return om_shape_numel(t->rank, t->dims);
}

int64_t om_numel_bytes(int32_t dtype, int64_t n)
{
	const int bits = om_dtype_bits(dtype);
	if (n < 0 || bits == 0)
		return -1;
	if (bits < 8) { /* ceil(n * bits / 8) without forming n * bits */
		const int64_t per = 8 / bits;
		return n / per + (n % per != 0);
	}
	const int64_t size = bits / 8;
	return n > INT64_MAX / size ? -1 : n * size;
}

int64_t om_shape_bytes(int32_t dtype, int32_t rank, const int64_t *dims)
{
	if (rank < 0 || rank > OM_MAX_RANK)
		return -1;
	return om_numel_bytes(dtype, om_shape_numel(rank, dims));
}

size_t om_tensor_bytes_for(int32_t dtype, int32_t rank, const int64_t *dims)
{
	if (om_dtype_bits(dtype) == 0)
		return 0;
	const int64_t b = om_shape_bytes(dtype, rank, dims);
	return b < 0 || (uint64_t)b > SIZE_MAX ? SIZE_MAX : (size_t)b;
}

om_kind om_tensor_alloc(om_tensor *t, int32_t dtype, int32_t rank, const int64_t *dims,
			om_status *st)
{
	memset(t, 0, sizeof *t);
	if (rank < 0 || rank > OM_MAX_RANK)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "rank %d exceeds %d", rank,
				OM_MAX_RANK);
	if (om_dtype_bits(dtype) == 0)
		return om_error(st, OM_ERR_UNSUPPORTED, NULL, "element type %d", dtype);
	const int64_t bytes = om_shape_bytes(dtype, rank, dims);
	if (bytes < 0 || (uint64_t)bytes >= SIZE_MAX)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"shape is negative or its bytes overflow");
	t->dtype = dtype;
	t->rank = rank;
	if (rank)
		memcpy(t->dims, dims, sizeof(int64_t) * (size_t)rank);
	t->nbytes = (size_t)bytes;
	t->data = calloc(1, t->nbytes ? t->nbytes : 1);
	if (!t->data)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for %zu bytes", t->nbytes);
	return OM_OK;
}

void om_tensor_free(om_tensor *t)
{
	if (!t)
		return;
	if (t->dtype == OM_STRING && t->data) {
		om_str *s = t->data;
		int64_t n = om_tensor_numel(t);
		for (int64_t i = 0; i < n; i++)
			free((void *)s[i].ptr);
	}
	free(t->data);
	memset(t, 0, sizeof *t);
}

om_kind om_tensor_copy_data(om_tensor *dst, const om_tensor *src, om_status *st)
{
	if (dst->dtype != OM_STRING) {
		size_t n = dst->nbytes < src->nbytes ? dst->nbytes : src->nbytes;
		if (n)
			memcpy(dst->data, src->data, n);
		return OM_OK;
	}
	const om_str *s = src->data;
	om_str *d = dst->data;
	int64_t n = om_tensor_numel(dst), ns = om_tensor_numel(src);
	for (int64_t i = 0; i < n && i < ns; i++) {
		char *p = malloc((size_t)s[i].len + 1);
		if (!p)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory copying strings");
		if (s[i].len)
			memcpy(p, s[i].ptr, (size_t)s[i].len);
		p[s[i].len] = 0;
		free((void *)d[i].ptr);
		d[i].ptr = p;
		d[i].len = s[i].len;
	}
	return OM_OK;
}
