/* conv_epilogue.c — FusedConv's activation attributes and the per-row epilogue of the Conv
 * kernels (bias, Z, activation), in the order Conv -> Add -> activation computes them. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-loop-vectorize", "vect-cost-model=dynamic")
#endif
#include <string.h>

#include "conv_epilogue.h"

static const struct {
	const char *name;
	int act, nparams;
} acts[] = {
	{"Relu", OM_ACT_RELU, 0},          {"Tanh", OM_ACT_TANH, 0},
	{"Sigmoid", OM_ACT_SIGMOID, 0},    {"LeakyRelu", OM_ACT_LEAKY_RELU, 1},
	{"Clip", OM_ACT_CLIP, 2},          {"HardSigmoid", OM_ACT_HARD_SIGMOID, 2},
};

om_kind om_conv_epi_activation(om_ctx *c, om_conv_epi *e)
{
	e->act = OM_ACT_NONE;
	e->alpha = e->beta = 0;
	const char *name = om_attr_string(c->node, "activation", NULL);
	if (!name)
		return OM_OK;
	for (size_t i = 0; i < sizeof acts / sizeof acts[0]; i++) {
		if (strcmp(name, acts[i].name))
			continue;
		int64_t n = 0;
		const float *p = om_attr_floats(c->node, "activation_params", &n);
		if (acts[i].nparams && (!p || n != acts[i].nparams))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"activation %s takes %d activation_params, %lld given",
					name, acts[i].nparams, (long long)(p ? n : 0));
		e->act = acts[i].act;
		if (acts[i].nparams)
			e->alpha = p[0];
		if (acts[i].nparams > 1)
			e->beta = p[1];
		return OM_OK;
	}
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "unknown activation '%s'", name);
}

void om_conv_epi_row(const om_conv_epi *e, int64_t m, int64_t off, float *y, int64_t n)
{
	if (e->bias) {
		const float b = e->bias[m];
		for (int64_t p = 0; p < n; p++)
			y[p] += b;
	}
	if (e->z) {
		const float *z = e->z + off;
		for (int64_t p = 0; p < n; p++)
			y[p] += z[p];
	}
	switch (e->act) {
	case OM_ACT_NONE:
		return;
	case OM_ACT_RELU:
		for (int64_t p = 0; p < n; p++)
			y[p] = y[p] < 0 ? 0.0f : y[p];
		return;
	case OM_ACT_LEAKY_RELU: {
		const float a = e->alpha;
		for (int64_t p = 0; p < n; p++)
			y[p] = y[p] < 0 ? a * y[p] : y[p];
		return;
	}
	case OM_ACT_CLIP: {
		const float lo = e->alpha, hi = e->beta;
		for (int64_t p = 0; p < n; p++) {
			const float v = y[p] != y[p] || y[p] > lo ? y[p] : lo;
			y[p] = v != v || v < hi ? v : hi;
		}
		return;
	}
	case OM_ACT_HARD_SIGMOID: {
		const float a = e->alpha, b = e->beta;
		for (int64_t p = 0; p < n; p++) {
			const float v = a * y[p] + b;
			y[p] = v < 0 ? 0.0f : v > 1 ? 1.0f : v;
		}
		return;
	}
	default:
		for (int64_t p = 0; p < n; p++)
			y[p] = om_conv_act(e, y[p]);
	}
}
