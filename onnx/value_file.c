/* value_file.c — sequence and optional values of backend-test data (SequenceProto,
 * OptionalProto) into om_seq boxes (ir/value.h), and what a declared TypeProto says about them. */
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
	default:
		return OM_UNDEFINED;
	}
}

int32_t om_type_box_elem(const om_type *ty)
{
	return proto_elem(type_proto(ty), 0);
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

static om_kind seq_of(const reader *r, const Onnx__SequenceProto *sp, om_tensor *out, int depth)
{
	if (depth > 8)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL, "'%s' nests too deep", r->path);
	if (sp->n_sparse_tensor_values || sp->n_map_values)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				"'%s': sequences of sparse tensors or maps", r->path);
	om_kind k = om_box_new(OM_SEQ_DTYPE, OM_UNDEFINED, out, r->st);
	size_t n = sp->n_tensor_values + sp->n_sequence_values + sp->n_optional_values;
	for (size_t i = 0; !k && i < n; i++) {
		om_tensor item;
		size_t j = i;
		if (j < sp->n_tensor_values) {
			k = tensor_of(r, sp->tensor_values[j], &item);
		} else if ((j -= sp->n_tensor_values) < sp->n_sequence_values) {
			k = seq_of(r, sp->sequence_values[j], &item, depth + 1);
		} else {
			j -= sp->n_sequence_values;
			k = opt_of(r, sp->optional_values[j], &item, depth + 1);
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
	if (op->sparse_tensor_value || op->map_value)
		return om_error(r->st, OM_ERR_UNSUPPORTED, NULL,
				"'%s': optional sparse tensors or maps", r->path);
	om_kind k = om_box_new(OM_OPT_DTYPE, OM_UNDEFINED, out, r->st);
	om_tensor item;
	bool some = op->tensor_value || op->sequence_value || op->optional_value;
	if (!k && some) {
		if (op->tensor_value)
			k = tensor_of(r, op->tensor_value, &item);
		else if (op->sequence_value)
			k = seq_of(r, op->sequence_value, &item, depth + 1);
		else
			k = opt_of(r, op->optional_value, &item, depth + 1);
		if (!k && (k = om_box_adopt(om_box(out), 0, &item, r->st)))
			om_value_free(&item);
	}
	if (k)
		om_value_free(out);
	return k;
}

om_kind om_value_read_file(const char *path, const om_type *ty, om_tensor *t, om_status *st)
{
	memset(t, 0, sizeof *t);
	int32_t kind = om_type_box_kind(ty);
	if (!kind)
		return om_tensor_read_file(path, t, st);
	const ProtobufCMessageDescriptor *d = kind == OM_SEQ_DTYPE
						      ? &onnx__sequence_proto__descriptor
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
			     kind == OM_SEQ_DTYPE ? "SequenceProto" : "OptionalProto");
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
	else
		k = opt_of(&r, (const Onnx__OptionalProto *)msg, t, 0);
	free(dir);
	protobuf_c_message_free_unpacked(msg, NULL);
	return k;
}
