/* conv_epilogue.h — what a Conv kernel applies to an output block while it is in cache: the
 * bias, FusedConv's Z (added before the activation) and FusedConv's activation. */
#ifndef OM_CONV_EPILOGUE_H
#define OM_CONV_EPILOGUE_H

#include <math.h>

#include "activation.h"
#include "detmath.h"
#include "op.h"


typedef struct om_conv_epi {
	const float *bias; /* M values, or NULL */
	const float *z;    /* a tensor of Y's shape, or NULL */
	int act;           /* om_act_kind (ops/activation.h) */
	float alpha, beta;
	bool fast;         /* fast mode: Sigmoid through num/fastmath.h (not bit-identical) */
} om_conv_epi;

/** FusedConv's activation and activation_params (ONNX Runtime's contract: Relu, Tanh,
 *  Sigmoid, LeakyRelu (1 param), Clip (2: min, max), HardSigmoid (2: alpha, beta)); a node
 *  without `activation` (Conv) gets none, or c->post when the planner folded one into the
 *  step. Unknown names, wrong counts, an activation and c->post: OM_ERR_INVALID_MODEL.
 *  Sets e->fast in fast mode (!c->exact). */
om_kind om_conv_epi_activation(om_ctx *c, om_conv_epi *e);

/** The activation of one value, as the elementwise kernels compute it in float. */
static inline float om_conv_act(const om_conv_epi *e, float x)
{
	switch (e->act) {
	case OM_ACT_RELU:
		return x < 0 ? 0.0f : x;
	case OM_ACT_TANH:
		return om_det_tanhf(x);
	case OM_ACT_SIGMOID:
		return om_det_sigmoidf(x);
	case OM_ACT_LEAKY_RELU:
		return x < 0 ? e->alpha * x : x;
	case OM_ACT_CLIP:
		x = x != x || x > e->alpha ? x : e->alpha;
		return x != x || x < e->beta ? x : e->beta;
	case OM_ACT_HARD_SIGMOID: {
		const float v = e->alpha * x + e->beta;
		return v < 0 ? 0.0f : v > 1 ? 1.0f : v;
	}
	case OM_ACT_SWISH:
		return x * om_det_sigmoidf(e->alpha * x);
	case OM_ACT_HARD_SWISH: {
		const float v = e->alpha * x + e->beta;
		return x * (v < 0 ? 0.0f : v > 1 ? 1.0f : v);
	}
	default:
		return x;
	}
}

/** FusedConv's Y may be placed over Z (OM_OP_INPLACE_LAST). For a path that writes Y before it
 *  reads Z: when e->z is y, Z's `bytes` copied into *copy (om_ctx_scratch's: the caller gives
 *  it back with om_ctx_scratch_done) and e->z pointed at the copy; else *copy is NULL.
 *  OM_ERR_NOMEM, or the memory limit's error. */
om_kind om_conv_epi_keep_z(om_ctx *c, om_conv_epi *e, const float *y, size_t bytes,
			   float **copy);

/** y[0..n) are outputs of channel m; y[0] is element `off` of Y: y = act((y + bias[m]) + z). */
void om_conv_epi_row(const om_conv_epi *e, int64_t m, int64_t off, float *y, int64_t n);

/** Whether the epilogue does anything. */
static inline bool om_conv_epi_any(const om_conv_epi *e)
{
	return e->bias || e->z || e->act != OM_ACT_NONE;
}

#endif
