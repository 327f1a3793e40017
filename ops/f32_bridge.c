/* f32_bridge.c — float32 kernels on float16/bfloat16/int8/uint8 tensors through conversion. */
#include <math.h>
#include <stdlib.h>

#include "f32_bridge.h"
#include "half.h"

bool om_f32_bridged(int32_t dtype, bool ints)
{
	return dtype == OM_FLOAT16 || dtype == OM_BFLOAT16 ||
	       (ints && (dtype == OM_INT8 || dtype == OM_UINT8));
}

static float load(const void *p, int32_t dtype, int64_t i)
{
	switch (dtype) {
	case OM_FLOAT16: return om_half_to_float(((const uint16_t *)p)[i]);
	case OM_BFLOAT16: return om_bf16_to_float(((const uint16_t *)p)[i]);
	case OM_INT8: return ((const int8_t *)p)[i];
	default: return ((const uint8_t *)p)[i];
	}
}

static float clampf(float v, float lo, float hi)
{
	return isnan(v) ? 0 : v < lo ? lo : v > hi ? hi : v;
}

static void store(void *p, int32_t dtype, int64_t i, float v)
{
	switch (dtype) {
	case OM_FLOAT16: ((uint16_t *)p)[i] = om_float_to_half(v); break;
	case OM_BFLOAT16: ((uint16_t *)p)[i] = om_float_to_bf16(v); break;
	case OM_INT8: ((int8_t *)p)[i] = (int8_t)nearbyintf(clampf(v, -128, 127)); break;
	default: ((uint8_t *)p)[i] = (uint8_t)nearbyintf(clampf(v, 0, 255)); break;
	}
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
		float *d = tin[i].data;
		for (int64_t j = 0, n = om_tensor_numel(t); j < n; j++)
			d[j] = load(t->data, t->dtype, j);
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
		const float *s = tout[i].data;
		for (int64_t j = 0, n = om_tensor_numel(&tout[i]); j < n; j++)
			store(c->out[i]->data, c->out[i]->dtype, j, s[j]);
	}
done:
	for (int32_t i = 0; i < MAX_IO; i++) {
		om_tensor_free(&tin[i]);
		om_tensor_free(&tout[i]);
	}
	return rc;
}
