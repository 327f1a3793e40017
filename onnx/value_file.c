/* value_file.c — sequence, optional and map values of backend-test data (SequenceProto,
 * OptionalProto, MapProto) into om_seq boxes (ir/value.h) and back, and what a declared
 * TypeProto says about them. */
#include <stdlib.h>
#include <string.h>

#include "onnx_io.h"
#include "value.h"

static const Onnx__TypeProto *type_proto(const om_type *ty)
{
	return ty && ty->kind == OM_TYPE_OTHER ? (const Onnx__TypeProto *)ty->proto : NULL;
}

int32_t om_type_box_kind(const om_type *ty)
{
	const Onnx__TypeProto *tp = type_proto(ty);
	if (!tp)
		return 0;
	if (tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
		return OM_SEQ_DTYPE;
	if (tp->value_case == ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE)
		return OM_OPT_DTYPE;
	if (tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE)
		return OM_MAP_DTYPE;
	return 0;
}

static int32_t proto_elem(const Onnx__TypeProto *tp, int depth)
{
	if (!tp || depth > 8)
		return OM_UNDEFINED;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
		return tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : OM_UNDEFINED;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		return proto_elem(tp->sequence_type->elem_type, depth + 1);
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		return proto_elem(tp->optional_type->elem_type, depth + 1);
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: /* a map's values */
		return proto_elem(tp->map_type->value_type, depth + 1);
	default:
		return OM_UNDEFINED;
	}
}

int32_t om_type_box_elem(const om_type *ty)
{
	return proto_elem(type_proto(ty), 0);
}

static int32_t proto_key(const Onnx__TypeProto *tp, int depth)
{
	if (!tp || depth > 8)
		return OM_UNDEFINED;
	switch (tp->value_case) {
	case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
		return tp->map_type->has_key_type ? tp->map_type->key_type : OM_UNDEFINED;
	case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
		return proto_key(tp->sequence_type->elem_type, depth + 1);
	case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
		return proto_key(tp->optional_type->elem_type, depth + 1);
	default:
		return OM_UNDEFINED;
	}
}

int32_t om_type_map_key(const om_type *ty)
{
	return proto_key(type_proto(ty), 0);
}

/* ---- reading ----------------------------------------------------------------------------- */

typedef struct reader {
	const char *path, *dir;
	om_status *st;
} reader;

static om_kind tensor_of(const reader *r, const Onnx__TensorProto *tp, om_tensor *out)
{
	om_model *m = om_model_new();
	om_mapping *maps = NULL;
	om_tensor *t = NULL;
	om_kind k;
	if (!m) {
		k = om_error(r->st, OM_ERR_NOMEM, NULL, "out of memory");
	} else {
		om_tensor_ctx c = {.m = m, .dir = r->dir, .maps = &maps};
		k = om_onnx_tensor_from_proto(&c, tp, &t, r->st);
		if (!k && !t)
			k = om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				     "'%s': rank, element type or segments not supported", r->path);
		if (!k)
			k = om_value_copy(out, t, r->st);
	}
	om_onnx_mappings_free(maps);
	om_model_free(m);
	return k;
}

static om_kind opt_of(const reader *r, const Onnx__OptionalProto *op, om_tensor *out, int depth);
static om_kind map_of(const reader *r, const Onnx__MapProto *mp, om_tensor *out, int depth);

static om_kind seq_of(const reader *r, const Onnx__SequenceProto *sp, om_tensor *out, int depth)
{
	if (depth > 8)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL, "'%s' nests too deep", r->path);
	if (sp->n_sparse_tensor_values)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				"'%s': sequences of sparse tensors", r->path);
	om_kind k = om_box_new(OM_SEQ_DTYPE, OM_UNDEFINED, out, r->st);
	size_t n = sp->n_tensor_values + sp->n_sequence_values + sp->n_optional_values +
		   sp->n_map_values;
	for (size_t i = 0; !k && i < n; i++) {
		om_tensor item;
		size_t j = i;
		if (j < sp->n_tensor_values) {
			k = tensor_of(r, sp->tensor_values[j], &item);
		} else if ((j -= sp->n_tensor_values) < sp->n_sequence_values) {
			k = seq_of(r, sp->sequence_values[j], &item, depth + 1);
		} else if ((j -= sp->n_sequence_values) < sp->n_optional_values) {
			k = opt_of(r, sp->optional_values[j], &item, depth + 1);
		} else {
			j -= sp->n_optional_values;
			k = map_of(r, sp->map_values[j], &item, depth + 1);
		}
		if (!k && (k = om_box_adopt(om_box(out), (int64_t)i, &item, r->st)))
			om_value_free(&item);
	}
	if (!k && sp->n_tensor_values)
		om_box(out)->elem = om_box(out)->items[0].dtype;
	if (k)
		om_value_free(out);
	return k;
}

static om_kind opt_of(const reader *r, const Onnx__OptionalProto *op, om_tensor *out, int depth)
{
	if (depth > 8)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL, "'%s' nests too deep", r->path);
	if (op->sparse_tensor_value)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				"'%s': optional sparse tensors", r->path);
	om_kind k = om_box_new(OM_OPT_DTYPE, OM_UNDEFINED, out, r->st);
	om_tensor item;
	bool some = op->tensor_value || op->sequence_value || op->optional_value ||
		    op->map_value;
	if (!k && some) {
		if (op->tensor_value)
			k = tensor_of(r, op->tensor_value, &item);
		else if (op->sequence_value)
			k = seq_of(r, op->sequence_value, &item, depth + 1);
		else if (op->map_value)
			k = map_of(r, op->map_value, &item, depth + 1);
		else
			k = opt_of(r, op->optional_value, &item, depth + 1);
		if (!k && (k = om_box_adopt(om_box(out), 0, &item, r->st)))
			om_value_free(&item);
	}
	if (k)
		om_value_free(out);
	return k;
}

/* A sequence of one-element tensors of one type as one 1-D tensor (a map's values as the ml
 * ops see them); anything else stays a sequence. */
static om_kind flatten_values(const reader *r, om_tensor *vals)
{
	const om_seq *b = om_box(vals);
	const int32_t dt = b->n ? b->items[0].dtype : OM_UNDEFINED;
	if (!b->n || !om_dtype_size(dt))
		return OM_OK;
	for (int64_t i = 0; i < b->n; i++)
		if (om_is_box(&b->items[i]) || b->items[i].dtype != dt ||
		    om_tensor_numel(&b->items[i]) != 1)
			return OM_OK;
	om_tensor flat;
	om_kind k = om_tensor_alloc(&flat, dt, 1, &b->n, r->st);
	const size_t es = om_dtype_size(dt);
	for (int64_t i = 0; !k && i < b->n; i++) {
		om_tensor one = flat;
		one.rank = 0;
		one.data = (char *)flat.data + es * (size_t)i;
		one.nbytes = es;
		k = om_tensor_copy_data(&one, &b->items[i], r->st);
	}
	if (k) {
		om_tensor_free(&flat);
		return k;
	}
	om_value_free(vals);
	*vals = flat;
	return OM_OK;
}

static om_kind map_of(const reader *r, const Onnx__MapProto *mp, om_tensor *out, int depth)
{
	memset(out, 0, sizeof *out);
	if (depth > 8)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL, "'%s' nests too deep", r->path);
	const int32_t kt = mp->has_key_type ? mp->key_type : OM_UNDEFINED;
	if (kt != OM_STRING && kt != OM_INT64)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				"'%s': a map with keys of type %s (omopt's maps have int64 or "
				"string keys)", r->path, om_dtype_name(kt));
	const size_t nk = kt == OM_STRING ? mp->n_string_keys : mp->n_keys;
	if ((kt == OM_STRING ? mp->n_keys : mp->n_string_keys) || nk > INT64_MAX / 2)
		return om_error(r->st, OM_ERR_INVALID_INPUT, NULL,
				"'%s': keys of the other type than key_type", r->path);
	om_tensor keys = {0}, vals = {0};
	int64_t n = (int64_t)nk;
	om_kind k = om_tensor_alloc(&keys, kt, 1, &n, r->st);
	for (size_t i = 0; !k && i < nk; i++) {
		if (kt == OM_INT64) {
			((int64_t *)keys.data)[i] = mp->keys[i];
			continue;
		}
		const ProtobufCBinaryData b = mp->string_keys[i];
		char *p = malloc(b.len + 1);
		if (!p) {
			k = om_error(r->st, OM_ERR_NOMEM, NULL, "out of memory");
			break;
		}
		if (b.len)
			memcpy(p, b.data, b.len);
		p[b.len] = 0;
		((om_str *)keys.data)[i] = (om_str){p, (int64_t)b.len};
	}
	if (!k) {
		if (mp->values)
			k = seq_of(r, mp->values, &vals, depth + 1);
		else
			k = om_box_new(OM_SEQ_DTYPE, OM_UNDEFINED, &vals, r->st);
	}
	if (!k)
		k = flatten_values(r, &vals);
	if (k) {
		om_value_free(&keys);
		om_value_free(&vals);
		return k;
	}
	if ((k = om_map_adopt(kt, &keys, &vals, out, r->st)))
		return k;
	if ((k = om_value_check(out, r->st))) {
		om_value_free(out);
		return om_error(r->st, k, NULL, "'%s': %.400s", r->path, "not a valid map");
	}
	return OM_OK;
}

static om_kind read_kind(const char *path, int32_t kind, om_tensor *t, om_status *st)
{
	memset(t, 0, sizeof *t);
	if (!kind)
		return om_tensor_read_file(path, t, st);
	if (!om_is_box_kind(kind))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no value kind %d", kind);
	const ProtobufCMessageDescriptor *d = kind == OM_SEQ_DTYPE
						      ? &onnx__sequence_proto__descriptor
					      : kind == OM_MAP_DTYPE ? &onnx__map_proto__descriptor
						      : &onnx__optional_proto__descriptor;
	unsigned char *b = NULL;
	size_t n = 0;
	om_kind k = om_onnx_read_file(path, &b, &n, st);
	if (k)
		return k;
	ProtobufCMessage *msg = NULL;
	if (!(k = om_onnx_wire_check(d, b, n, st)) &&
	    !(msg = protobuf_c_message_unpack(d, NULL, n, b)))
		k = om_error(st, OM_ERR_INVALID_INPUT, NULL, "'%s' is not a %s", path,
			     kind == OM_SEQ_DTYPE   ? "SequenceProto"
			     : kind == OM_MAP_DTYPE ? "MapProto"
						    : "OptionalProto");
	free(b);
	if (k)
		return k;
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path)) : strdup(".");
	reader r = {.path = path, .dir = dir, .st = st};
	if (!dir)
		k = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	else if (kind == OM_SEQ_DTYPE)
		k = seq_of(&r, (const Onnx__SequenceProto *)msg, t, 0);
	else if (kind == OM_MAP_DTYPE)
		k = map_of(&r, (const Onnx__MapProto *)msg, t, 0);
	else
		k = opt_of(&r, (const Onnx__OptionalProto *)msg, t, 0);
	free(dir);
	protobuf_c_message_free_unpacked(msg, NULL);
	return k;
}

om_kind om_value_read_file(const char *path, const om_type *ty, om_tensor *t, om_status *st)
{
	return read_kind(path, om_type_box_kind(ty), t, st);
}

om_kind om_value_file_read(const char *path, int32_t kind, om_tensor *v, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	if (!v)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no value to read into");
	if (!path)
		return memset(v, 0, sizeof *v),
		       om_error(st, OM_ERR_INVALID_INPUT, NULL, "no path");
	return read_kind(path, kind, v, st);
}
