/* model_diag.c — names what a file is when it is not a loadable ONNX model: empty, another
 * format, a TensorProto, cut off (which field, its declared length, the file size). Only the
 * error path calls it, so loading a good model costs nothing more. */
#include <stdio.h>
#include <string.h>

#include "model_diag.h"

const char *om_onnx_grouped(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	int o = 0;
	for (int i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/* The wire type a field of descriptor d has on the wire (-1: d has no such field). Repeated
 * scalars may also come packed (2); the caller allows that. */
static int wire_of(const ProtobufCMessageDescriptor *d, uint64_t number)
{
	const ProtobufCFieldDescriptor *f =
		number <= 0x1fffffff ? protobuf_c_message_descriptor_get_field(d, (unsigned)number)
				     : NULL;
	if (!f)
		return -1;
	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32: case PROTOBUF_C_TYPE_SINT32: case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64: case PROTOBUF_C_TYPE_UINT32: case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_BOOL: case PROTOBUF_C_TYPE_ENUM:
		return 0;
	case PROTOBUF_C_TYPE_FIXED64: case PROTOBUF_C_TYPE_SFIXED64: case PROTOBUF_C_TYPE_DOUBLE:
		return 1;
	case PROTOBUF_C_TYPE_FIXED32: case PROTOBUF_C_TYPE_SFIXED32: case PROTOBUF_C_TYPE_FLOAT:
		return 5;
	default:
		return 2;
	}
}

static bool wire_fits(const ProtobufCMessageDescriptor *d, uint64_t number, unsigned wire)
{
	int w = wire_of(d, number);
	if (w < 0 || (unsigned)w == wire)
		return true;
	const ProtobufCFieldDescriptor *f =
		protobuf_c_message_descriptor_get_field(d, (unsigned)number);
	return wire == 2 && f->label == PROTOBUF_C_LABEL_REPEATED; /* packed */
}

const char *om_onnx_model_field_name(uint64_t number)
{
	const ProtobufCFieldDescriptor *f =
		number <= 0x1fffffff ? protobuf_c_message_descriptor_get_field(
					       &onnx__model_proto__descriptor, (unsigned)number)
				     : NULL;
	return f ? f->name : "unknown";
}

static bool starts_with(const uint8_t *p, size_t n, const char *magic, size_t len)
{
	return n >= len && memcmp(p, magic, len) == 0;
}

/* Printable ASCII (with tab, newline, carriage return) over the first 512 bytes. */
static bool looks_like_text(const uint8_t *p, size_t n)
{
	size_t m = n < 512 ? n : 512;
	for (size_t i = 0; i < m; i++)
		if (!(p[i] >= 0x20 && p[i] < 0x7f) && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return false;
	return true;
}

/* Is every top-level field one a TensorProto has, with its wire type, data_type among them? */
static bool is_tensor_proto(const uint8_t *p, size_t n)
{
	const ProtobufCMessageDescriptor *d = &onnx__tensor_proto__descriptor;
	size_t pos = 0;
	bool data_type = false;
	while (pos < n) {
		uint64_t tag, v;
		if (!om_wire_varint(p, n, &pos, &tag) || wire_of(d, tag >> 3) < 0 ||
		    !wire_fits(d, tag >> 3, (unsigned)(tag & 7)))
			return false;
		data_type |= (tag >> 3) == 2;
		switch (tag & 7) {
		case 0:
			if (!om_wire_varint(p, n, &pos, &v))
				return false;
			break;
		case 1: case 5:
			v = (tag & 7) == 1 ? 8 : 4;
			if (n - pos < v)
				return false;
			pos += (size_t)v;
			break;
		case 2:
			if (!om_wire_varint(p, n, &pos, &v) || v > n - pos)
				return false;
			pos += (size_t)v;
			break;
		default:
			return false;
		}
	}
	return data_type;
}

om_kind om_onnx_model_diagnose(const uint8_t *p, size_t n, const char *name, om_status *st)
{
	char who[400], a[32], b[32], c[32];
	if (name)
		snprintf(who, sizeof who, "'%s'", name);
	else
		snprintf(who, sizeof who, "the model data");
	const char *unit = name ? "file" : "data";
	const om_kind bad = OM_ERR_INVALID_MODEL;
	if (n == 0)
		return om_error(st, bad, NULL, "%s is empty (0 bytes)", who);
	if (starts_with(p, n, "\x93NUMPY", 6))
		return om_error(st, bad, NULL, "%s is a NumPy array, not an ONNX model", who);
	if (starts_with(p, n, "PK\x03\x04", 4))
		return om_error(st, bad, NULL,
				"%s is a zip archive (a PyTorch checkpoint?), not an ONNX model", who);
	if (looks_like_text(p, n)) {
		size_t i = 0;
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
			i++;
		bool json = i < n && (p[i] == '{' || p[i] == '[');
		return om_error(st, bad, NULL, "%s is %s, not an ONNX model", who,
				json ? "JSON text" : "a text file");
	}
	if (is_tensor_proto(p, n))
		return om_error(st, bad, NULL,
				"%s is a TensorProto (a tensor .pb file), not an ONNX model", who);
	const ProtobufCMessageDescriptor *d = &onnx__model_proto__descriptor;
	size_t pos = 0;
	bool ir_version = false, graph = false;
	while (pos < n) {
		size_t start = pos;
		uint64_t tag, len;
		if (!om_wire_varint(p, n, &pos, &tag))
			return om_error(st, bad, NULL,
					"%s is truncated: the field tag at byte %s runs past the end "
					"of the %s at byte %s",
					who, om_onnx_grouped(start, a), unit, om_onnx_grouped(n, b));
		uint64_t num = tag >> 3;
		unsigned wire = (unsigned)(tag & 7);
		if (num == 0 || num > 0x1fffffff)
			return om_error(st, bad, NULL, "%s is not an ONNX model (bad field tag at byte %s)",
					who, om_onnx_grouped(start, a));
		if (wire == 3 || wire == 4 || wire > 5)
			return om_error(st, bad, NULL,
					"%s is not an ONNX model (unsupported wire type %u at byte %s)",
					who, wire, om_onnx_grouped(start, a));
		if (!wire_fits(d, num, wire))
			return om_error(st, bad, NULL,
					"%s is not an ONNX model (field %llu at byte %s has wire type "
					"%u; a ModelProto's %s has wire type %d)",
					who, (unsigned long long)num, om_onnx_grouped(start, a), wire,
					om_onnx_model_field_name(num), wire_of(d, num));
		ir_version |= num == 1;
		graph |= num == 7;
		bool cut = false;
		switch (wire) {
		case 0:
			cut = !om_wire_varint(p, n, &pos, &len);
			break;
		case 1: case 5:
			len = wire == 1 ? 8 : 4;
			cut = n - pos < len;
			break;
		default:
			if (!om_wire_varint(p, n, &pos, &len)) {
				cut = true;
				break;
			}
			if (len > n - pos)
				return om_error(st, bad, NULL,
						"%s is truncated: field %llu (%s) at byte %s declares "
						"%s byte%s, the %s ends at byte %s",
						who, (unsigned long long)num, om_onnx_model_field_name(num),
						om_onnx_grouped(start, a), om_onnx_grouped(len, b),
						len == 1 ? "" : "s", unit,
						om_onnx_grouped(n, c));
			break;
		}
		if (cut)
			return om_error(st, bad, NULL,
					"%s is truncated: field %llu (%s) at byte %s runs past the end "
					"of the %s at byte %s",
					who, (unsigned long long)num, om_onnx_model_field_name(num),
					om_onnx_grouped(start, a), unit, om_onnx_grouped(n, b));
		if (wire != 0)
			pos += (size_t)len;
	}
	if (!graph && !ir_version)
		return om_error(st, bad, NULL,
				"%s is not an ONNX model (it has neither ir_version nor graph)", who);
	if (!graph)
		return om_error(st, bad, NULL, "%s has no graph (ModelProto field 7)", who);
	return OM_OK;
}

bool om_onnx_model_locate(const uint8_t *p, size_t n, uint32_t *field, size_t *start,
			  size_t *end)
{
	size_t pos = 0;
	while (pos < n) {
		size_t at = pos;
		uint64_t tag, len;
		if (!om_wire_varint(p, n, &pos, &tag))
			return false;
		unsigned wire = (unsigned)(tag & 7);
		if (wire == 0) {
			if (!om_wire_varint(p, n, &pos, &len))
				return false;
			continue;
		}
		if (wire == 1 || wire == 5) {
			len = wire == 1 ? 8 : 4;
		} else if (wire != 2 || !om_wire_varint(p, n, &pos, &len)) {
			return false;
		}
		if (len > n - pos)
			return false;
		const ProtobufCFieldDescriptor *f =
			(tag >> 3) <= 0x1fffffff
				? protobuf_c_message_descriptor_get_field(
					  &onnx__model_proto__descriptor, (unsigned)(tag >> 3))
				: NULL;
		if (wire == 2 && f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
			om_status st = {0};
			bool bad = om_onnx_wire_check(f->descriptor, p + pos, (size_t)len, &st) != OM_OK;
			if (!bad) {
				ProtobufCMessage *sub = protobuf_c_message_unpack(
					f->descriptor, NULL, (size_t)len, p + pos);
				bad = !sub;
				if (sub)
					protobuf_c_message_free_unpacked(sub, NULL);
			}
			if (bad) {
				*field = (uint32_t)(tag >> 3);
				*start = at;
				*end = pos + (size_t)len;
				return true;
			}
		}
		pos += (size_t)len;
	}
	return false;
}
