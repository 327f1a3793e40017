/* load.c — om_model_load / om_model_load_memory (include/omopt.h): the ONNX loader
 * (onnx/load.c) followed by the op rows' check of every node (om_model_check, ops/op.h). */
#include "onnx_io.h"
#include "registry.h"

om_kind om_model_load(const char *path, om_model **out, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return om_onnx_load_file(path, om_model_check, out, st);
}

om_kind om_model_load_memory(const void *data, size_t size, const char *dir, om_model **out,
			     om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	return om_onnx_load_memory(data, size, dir, om_model_check, out, st);
}
