/* f32_bridge.c — float32 kernels on float16/bfloat16/int8/uint8 tensors through conversion. */
#include <stdlib.h>

#include "f32_array.h"
#include "f32_bridge.h"

bool om_f32_bridged(int32_t dtype, bool ints)
{
	return dtype == OM_FLOAT16 || dtype == OM_BFLOAT16 ||
	       (ints && (dtype == OM_INT8 || dtype == OM_UINT8));
}

enum { MAX_IO = 16 };

om_kind om_run_as_f32(om_ctx *c, om_kernel_fn fn, bool ints)
{
	if (c->nin > MAX_IO || c->nout > MAX_IO)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "too many inputs or outputs");
	om_tensor tin[MAX_IO] = {0}, tout[MAX_IO] = {0};
	const om_tensor *pin[MAX_IO];
	om_tensor *pout[MAX_IO];
	om_kind rc = OM_OK;
	for (int32_t i = 0; i < c->nin; i++) {
		const om_tensor *t = c->in[i];
		pin[i] = t;
		if (!t || !om_f32_bridged(t->dtype, ints))
			continue;
		if ((rc = om_tensor_alloc(&tin[i], OM_FLOAT, t->rank, t->dims, c->st)))
			goto done;
		om_to_f32(t->dtype, t->data, om_tensor_numel(t), tin[i].data);
		pin[i] = &tin[i];
	}
	for (int32_t i = 0; i < c->nout; i++) {
		om_tensor *t = c->out[i];
		pout[i] = t;
		if (!t || !om_f32_bridged(t->dtype, ints))
			continue;
		if ((rc = om_tensor_alloc(&tout[i], OM_FLOAT, t->rank, t->dims, c->st)))
			goto done;
		pout[i] = &tout[i];
	}
	om_ctx c2 = *c;
	c2.in = pin;
	c2.out = pout;
	if ((rc = fn(&c2)))
		goto done;
	for (int32_t i = 0; i < c->nout; i++) {
		if (!tout[i].data)
			continue;
		om_from_f32(c->out[i]->dtype, tout[i].data, om_tensor_numel(&tout[i]),
			    c->out[i]->data);
	}
done:
	for (int32_t i = 0; i < MAX_IO; i++) {
		om_tensor_free(&tin[i]);
		om_tensor_free(&tout[i]);
	}
	return rc;
}
