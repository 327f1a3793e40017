/* wire_check.c — validates protobuf wire format (tags, lengths, nesting depth) before
 * protobuf-c unpacks it, so that no input can make the unpacker recurse without bound. */
#include "onnx_io.h"

/* Nested messages allowed: a subgraph costs three (Graph, Node, Attribute). */
enum { MAX_MESSAGE_DEPTH = 4 * OM_ONNX_MAX_DEPTH };

bool om_wire_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *out)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 70; shift += 7) {
		if (*pos >= n)
			return false;
		uint8_t b = p[(*pos)++];
		v |= (uint64_t)(b & 0x7f) << (shift < 64 ? shift : 63);
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

static om_kind check(const ProtobufCMessageDescriptor *d, const uint8_t *p, size_t n, int depth,
		     om_status *st)
{
	if (depth > MAX_MESSAGE_DEPTH)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL,
				"messages nested deeper than %d", MAX_MESSAGE_DEPTH);
	size_t pos = 0;
	while (pos < n) {
		uint64_t tag, len, skip;
		if (!om_wire_varint(p, n, &pos, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
			return om_error(st, OM_ERR_INVALID_MODEL, NULL,
					"bad field tag at byte %zu of a %s", pos, d->short_name);
		switch (tag & 7) {
		case 0:
			if (!om_wire_varint(p, n, &pos, &skip))
				goto truncated;
			break;
		case 1:
		case 5:
			skip = (tag & 7) == 1 ? 8 : 4;
			if (n - pos < skip)
				goto truncated;
			pos += skip;
			break;
		case 2: {
			if (!om_wire_varint(p, n, &pos, &len) || len > n - pos)
				goto truncated;
			const ProtobufCFieldDescriptor *f =
				protobuf_c_message_descriptor_get_field(d, (unsigned)(tag >> 3));
			if (f && f->type == PROTOBUF_C_TYPE_MESSAGE) {
				size_t sub = (size_t)len;
				om_kind k = check(f->descriptor, p + pos, sub, depth + 1, st);
				if (k)
					return k;
			}
			pos += (size_t)len;
			break;
		}
		default:
			return om_error(st, OM_ERR_INVALID_MODEL, NULL,
					"unsupported wire type %u in a %s", (unsigned)(tag & 7),
					d->short_name);
		}
	}
	return OM_OK;
truncated:
	return om_error(st, OM_ERR_INVALID_MODEL, NULL, "%s truncated at byte %zu", d->short_name,
			pos);
}

om_kind om_onnx_wire_check(const ProtobufCMessageDescriptor *d, const uint8_t *data,
			   size_t size, om_status *st)
{
	return check(d, data, size, 0, st);
}
