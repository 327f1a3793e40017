/* fuzz_tensor.c — libFuzzer harness for tensor and value files. The first byte picks what the
 * rest is read as: 0 a file named .npy, 1 a file named .pb (om_tensor_read_file), 2 a
 * SequenceProto of float tensors, 3 an OptionalProto of a float tensor (om_value_read_file). A
 * tensor that reads is written back as .pb and as .npy and must read back the same. */
#include <string.h>

#include "fuzz.h"
#include "onnx_io.h"
#include "value.h"

static bool same(const om_tensor *a, const om_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank ||
	    memcmp(a->dims, b->dims, sizeof a->dims[0] * (size_t)a->rank))
		return false;
	if (a->dtype != OM_STRING)
		return !memcmp(a->data, b->data, om_tensor_bytes_for(a->dtype, a->rank, a->dims));
	const om_str *x = a->data, *y = b->data;
	for (int64_t i = 0; i < om_tensor_numel(a); i++)
		if (x[i].len != y[i].len ||
		    (x[i].len && memcmp(x[i].ptr, y[i].ptr, (size_t)x[i].len)))
			return false;
	return true;
}

/* t (read from `from`) written to `name` in the scratch folder reads back the same; a write
 * the format cannot hold (.npy of bfloat16, strings, ...) may be refused. */
static void round_trip(const om_tensor *t, const char *name, const char *from)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", fz_dir(), name);
	om_status st = {0};
	om_kind k = om_tensor_write_file(path, t, "t", &st);
	fz_check_kind(k, &st, "om_tensor_write_file");
	if (k)
		return;
	om_tensor back;
	k = om_tensor_read_file(path, &back, &st);
	if (k) {
		char buf[1024];
		om_status_format(&st, buf, sizeof buf);
		fz_fail("%s read from %s does not read back: %s", name, from, buf);
	}
	if (!same(t, &back))
		fz_fail("%s read from %s reads back different", name, from);
	om_tensor_free(&back);
}

/* the declared types of mode 2 and 3: sequence(tensor(float)), optional(tensor(float)) */
#define FZ_MSG(d) .base = PROTOBUF_C_MESSAGE_INIT(&d)
static const Onnx__TypeProto__Tensor float_tensor = {
	FZ_MSG(onnx__type_proto__tensor__descriptor), .has_elem_type = 1, .elem_type = OM_FLOAT};
static const Onnx__TypeProto float_type = {
	FZ_MSG(onnx__type_proto__descriptor), .value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE,
	.tensor_type = (Onnx__TypeProto__Tensor *)&float_tensor};
static const Onnx__TypeProto__Sequence seq_of_float = {
	FZ_MSG(onnx__type_proto__sequence__descriptor),
	.elem_type = (Onnx__TypeProto *)&float_type};
static const Onnx__TypeProto__Optional opt_of_float = {
	FZ_MSG(onnx__type_proto__optional__descriptor),
	.elem_type = (Onnx__TypeProto *)&float_type};
static const Onnx__TypeProto seq_type = {
	FZ_MSG(onnx__type_proto__descriptor), .value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE,
	.sequence_type = (Onnx__TypeProto__Sequence *)&seq_of_float};
static const Onnx__TypeProto opt_type = {
	FZ_MSG(onnx__type_proto__descriptor), .value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE,
	.optional_type = (Onnx__TypeProto__Optional *)&opt_of_float};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	const int mode = data[0] % 4;
	const char *name = mode == 0 ? "in.npy" : "in.pb";
	const char *path = fz_write(name, data + 1, size - 1);
	if (!path)
		fz_fail("cannot write the input to the scratch folder");
	om_tensor t;
	om_status st = {0};
	om_kind k;
	if (mode < 2) {
		k = om_tensor_read_file(path, &t, &st);
		fz_check_kind(k, &st, "om_tensor_read_file");
		if (!k) {
			round_trip(&t, "back.pb", name);
			round_trip(&t, "back.npy", name);
			om_tensor_free(&t);
		}
		return 0;
	}
	const om_type ty = {.kind = OM_TYPE_OTHER, .rank = -1,
			    .proto = mode == 2 ? &seq_type : &opt_type};
	k = om_value_read_file(path, &ty, &t, &st);
	fz_check_kind(k, &st, "om_value_read_file");
	if (!k)
		om_value_free(&t);
	return 0;
}
