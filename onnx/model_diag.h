/* model_diag.h — why a file is not a loadable ONNX model, said about the file (not public). */
#ifndef OM_MODEL_DIAG_H
#define OM_MODEL_DIAG_H

#include "onnx_io.h"

/** Explains a failed ModelProto load when the cause is in the file's outer layer: empty, a
 *  NumPy array, a zip archive, text, a TensorProto, a top-level field cut off by the end of the
 *  file, a wire type protobuf does not have, no graph. `name` is the file (NULL: bytes in
 *  memory). Fills st (OM_ERR_INVALID_MODEL) and returns its kind, or returns OM_OK when it finds
 *  none of these. One pass over the top-level fields only (called on the error path). */
om_kind om_onnx_model_diagnose(const uint8_t *data, size_t size, const char *name,
			       om_status *st);

/** Finds the top-level message field of a ModelProto whose content does not check or unpack
 *  (after om_onnx_model_diagnose found the top level sound): its number, the byte where the field
 *  starts and the byte after its end. False when every one is sound. Error path only. */
bool om_onnx_model_locate(const uint8_t *data, size_t size, uint32_t *field, size_t *start,
			  size_t *end);
/** The name of ModelProto field `number` ("graph"), "unknown" when it has none. */
const char *om_onnx_model_field_name(uint64_t number);

/** Writes v with thousands separators ("4,251,318") into buf. */
const char *om_onnx_grouped(uint64_t v, char buf[32]);

#endif
