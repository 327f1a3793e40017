/* stub.c — the ONNX reader/writer is not written yet. */
#include "ir.h"

om_kind om_model_load(const char *path, om_model **out, om_status *st)
{
	*out = NULL;
	return om_error(st, OM_ERR_UNSUPPORTED, NULL, "cannot load '%s' yet", path);
}
