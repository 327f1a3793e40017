/* load_tensor.c — TensorProto → om_tensor: raw bytes, typed fields, external data. */
#include <stdint.h>
#include <string.h>

#include "onnx_io.h"

static const char *tname(const Onnx__TensorProto *tp)
{
	return tp->name ? tp->name : "";
}

/* Decimal digits only, no overflow; false otherwise. */
static bool parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

static om_kind external_bytes(const om_tensor_ctx *c, const Onnx__TensorProto *tp,
			      size_t nbytes, const unsigned char **out, om_status *st)
{
	const char *loc = NULL, *off = NULL, *len = NULL;
	for (size_t i = 0; i < tp->n_external_data; i++) {
		const Onnx__StringStringEntryProto *e = tp->external_data[i];
		if (!e->key)
			continue;
		if (!strcmp(e->key, "location"))
			loc = e->value;
		else if (!strcmp(e->key, "offset"))
			off = e->value;
		else if (!strcmp(e->key, "length"))
			len = e->value;
	}
	if (!loc)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': external data without a location", tname(tp));
	uint64_t offset = 0, length = 0;
	if ((off && !parse_u64(off, &offset)) || (len && !parse_u64(len, &length)))
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': bad external offset or length", tname(tp));
	const unsigned char *data;
	size_t size;
	om_kind k = om_onnx_external_map(c->dir, loc, c->maps, &data, &size, st);
	if (k)
		return k;
	if (offset > size || (len && length > size - offset))
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': external data [%llu, +%llu) beyond '%s' (%zu bytes)",
				tname(tp), (unsigned long long)offset,
				(unsigned long long)length, loc, size);
	if ((len && length != nbytes) || (!len && size - offset < nbytes))
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': external data holds %llu bytes, shape needs %zu",
				tname(tp), (unsigned long long)(len ? length : size - offset),
				nbytes);
	*out = data + offset;
	return OM_OK;
}

/* Stores the low `es` bytes of each value (little-endian host). */
static void narrow32(unsigned char *dst, size_t es, const int32_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)src[i];
		memcpy(dst + i * es, &u, es);
	}
}

static om_kind typed_fields(const om_tensor_ctx *c, const Onnx__TensorProto *tp, om_tensor *t,
			    om_status *st)
{
	int64_t numel = om_tensor_numel(t);
	size_t n = (size_t)numel, es = om_dtype_size(t->dtype), have, want = n;
	const void *src = NULL;
	switch (t->dtype) {
	case OM_FLOAT: case OM_COMPLEX64:
		have = tp->n_float_data, src = tp->float_data;
		want = t->nbytes / sizeof(float);
		break;
	case OM_DOUBLE: case OM_COMPLEX128:
		have = tp->n_double_data, src = tp->double_data;
		want = t->nbytes / sizeof(double);
		break;
	case OM_INT64:
		have = tp->n_int64_data, src = tp->int64_data;
		break;
	case OM_UINT32: case OM_UINT64:
		have = tp->n_uint64_data, src = tp->uint64_data;
		break;
	case OM_STRING:
		have = tp->n_string_data;
		break;
	case OM_UINT4: case OM_INT4: case OM_FLOAT4E2M1: case OM_UINT2: case OM_INT2:
		have = tp->n_int32_data, src = tp->int32_data;
		want = t->nbytes, es = 1;
		break;
	default: /* int32, the 8- and 16-bit types: one element per int32 */
		have = tp->n_int32_data, src = tp->int32_data;
		break;
	}
	if (have != want)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': %zu values for %zu elements", tname(tp), have, want);
	/* allocated only now that the file holds as many values as the shape claims */
	t->data = om_arena_alloc(c->m->arena, t->nbytes);
	if (!t->data)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (want == 0)
		return OM_OK;
	if (t->dtype == OM_STRING) {
		om_str *s = t->data;
		for (size_t i = 0; i < n; i++) {
			const ProtobufCBinaryData *b = &tp->string_data[i];
			s[i].ptr = om_arena_strndup(c->m->arena, (const char *)b->data, b->len);
			s[i].len = (int64_t)tp->string_data[i].len;
			if (!s[i].ptr)
				return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		}
	} else if (src == tp->int32_data && es != 4) {
		narrow32(t->data, es, tp->int32_data, want);
	} else if (t->dtype == OM_UINT32) {
		uint32_t *d = t->data;
		for (size_t i = 0; i < n; i++)
			d[i] = (uint32_t)tp->uint64_data[i];
	} else {
		memcpy(t->data, src, t->nbytes);
	}
	return OM_OK;
}

/* Borrows p when aligned for the element type, else copies it into the arena (external data at
 * a misaligned offset: the one case where a load reads a payload whole) unless `in_place`: a
 * misaligned raw_data the unpack left in the mapping (borrow.c) is borrowed as it is, and the
 * loader copies it when a reader needs it aligned (om_model_align_payloads). */
static om_kind set_bytes(const om_tensor_ctx *c, const Onnx__TensorProto *tp, om_tensor *t,
			 const unsigned char *p, bool in_place, om_status *st)
{
	size_t align = om_dtype_size(t->dtype);
	if (align > 8)
		align = 8;
	if (align > 1 && (uintptr_t)p % align && !in_place) {
		t->data = om_arena_memdup(c->m->arena, p, t->nbytes);
		if (!t->data)
			return om_error(st, OM_ERR_NOMEM, NULL,
					"tensor '%s': out of memory for an aligned copy of its "
					"%zu bytes (misaligned for %zu-byte elements)",
					tname(tp), t->nbytes, align);
	} else {
		t->data = (void *)p;
	}
	return OM_OK;
}

om_kind om_onnx_tensor_from_proto(const om_tensor_ctx *c, const Onnx__TensorProto *tp,
				  om_tensor **out, om_status *st)
{
	*out = NULL;
	int32_t dtype = tp->has_data_type ? tp->data_type : OM_UNDEFINED;
	if (tp->n_dims > OM_MAX_RANK || om_dtype_bits(dtype) == 0 || tp->segment)
		return OM_OK; /* valid, kept as the proto */
	for (size_t i = 0; i < tp->n_dims; i++)
		if (tp->dims[i] < 0)
			return om_error(st, OM_ERR_INVALID_MODEL, NULL,
					"tensor '%s': negative dim %lld", tname(tp),
					(long long)tp->dims[i]);
	om_tensor *t = om_arena_alloc(c->m->arena, sizeof *t);
	if (!t)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	t->dtype = dtype;
	t->rank = (int32_t)tp->n_dims;
	for (int32_t i = 0; i < t->rank; i++)
		t->dims[i] = tp->dims[i];
	int64_t numel = om_tensor_numel(t);
	t->nbytes = om_tensor_bytes_for(dtype, t->rank, t->dims);
	if (om_shape_bytes(dtype, t->rank, t->dims) < 0 || (uint64_t)numel > SIZE_MAX / 16)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "tensor '%s': shape too large",
				tname(tp));
	om_kind k = OM_OK;
	bool external = tp->has_data_location &&
			tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
	if (external && dtype == OM_STRING)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"tensor '%s': string tensors cannot be external", tname(tp));
	if (external) {
		const unsigned char *p = NULL;
		k = external_bytes(c, tp, t->nbytes, &p, st);
		if (!k)
			k = set_bytes(c, tp, t, p, false, st);
	} else if (tp->has_raw_data && dtype != OM_STRING) {
		if (tp->raw_data.len != t->nbytes)
			return om_error(st, OM_ERR_INVALID_MODEL, NULL,
					"tensor '%s': raw_data has %zu bytes, shape needs %zu",
					tname(tp), tp->raw_data.len, t->nbytes);
		k = set_bytes(c, tp, t, tp->raw_data.data, c->in_place, st);
	} else {
		k = typed_fields(c, tp, t, st);
	}
	if (k)
		return k;
	if (!t->data && !(t->data = om_arena_alloc(c->m->arena, 1)))
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (c->loaded) {
		om_loaded *e = om_arena_alloc(c->m->arena, sizeof *e);
		if (!e)
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		e->key = t;
		e->snap = *t;
		e->proto = tp;
		HASH_ADD_PTR(*c->loaded, key, e);
	}
	*out = t;
	return OM_OK;
}
