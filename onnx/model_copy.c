/* model_copy.c — om_model_copy: a model packed to bytes and loaded again. */
#include <stdlib.h>

#include "model_copy.h"
#include "onnx_io.h"

om_kind om_model_copy(const om_model *m, om_model **out, om_status *st)
{
	*out = NULL;
	uint8_t *data;
	size_t size;
	om_kind k = om_model_pack(m, &data, &size, st);
	/* the loader copies what the model keeps (protobuf-c unpacks into its own memory); no
	 * check of the op rows (those are above onnx/): m passed them, or its user runs them */
	if (!k)
		k = om_onnx_load_memory(data, size, NULL, NULL, out, st);
	free(data);
	return k;
}
