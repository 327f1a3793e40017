/* activation.c — which nodes are activations a producer can apply (activation.h). */
#include <float.h>
#include <string.h>

#include "activation.h"

static const struct {
	const char *name;  /* om_act_name */
	const char *fused; /* FusedConv's name, or NULL */
	int32_t nparams;   /* FusedConv's activation_params */
} kinds[OM_ACT_KINDS] = {
	[OM_ACT_NONE] = {"", NULL, 0},
	[OM_ACT_RELU] = {"Relu", "Relu", 0},
	[OM_ACT_TANH] = {"Tanh", "Tanh", 0},
	[OM_ACT_SIGMOID] = {"Sigmoid", "Sigmoid", 0},
	[OM_ACT_LEAKY_RELU] = {"LeakyRelu", "LeakyRelu", 1},
	[OM_ACT_CLIP] = {"Clip", "Clip", 2},
	[OM_ACT_HARD_SIGMOID] = {"HardSigmoid", "HardSigmoid", 2},
	[OM_ACT_SWISH] = {"Swish", NULL, 0},
	[OM_ACT_HARD_SWISH] = {"HardSwish", NULL, 0},
};

/* Clip's bounds: attributes before opset 11, constant scalar inputs 1 and 2 from 11 */
static bool clip_bounds(const om_node *n, int64_t opset, om_act_scalar_fn scalar, void *arg,
			om_act *a)
{
	*a = (om_act){OM_ACT_CLIP, -FLT_MAX, FLT_MAX};
	if (opset < 11) {
		a->alpha = om_attr_float(n, "min", -FLT_MAX);
		a->beta = om_attr_float(n, "max", FLT_MAX);
		return n->nin == 1;
	}
	if (n->nin > 3)
		return false;
	for (int32_t k = 1; k < n->nin; k++) {
		double v;
		if (!n->in[k])
			continue;
		if (!scalar || !scalar(arg, k, &v))
			return false;
		*(k == 1 ? &a->alpha : &a->beta) = (float)v;
	}
	return true;
}

bool om_act_of(const om_node *n, int32_t code, int64_t opset, om_act_scalar_fn scalar, void *arg,
	       om_act *out)
{
	if (n->nin < 1 || n->nout != 1 || !n->in[0] || !n->out[0])
		return false;
	om_act a = {OM_ACT_NONE, 0, 0};
	switch (code) {
	case OM_OPC_RELU:
		a.kind = OM_ACT_RELU;
		break;
	case OM_OPC_TANH:
		a.kind = OM_ACT_TANH;
		break;
	case OM_OPC_SIGMOID:
		a.kind = OM_ACT_SIGMOID;
		break;
	case OM_OPC_LEAKY_RELU:
		a = (om_act){OM_ACT_LEAKY_RELU, om_attr_float(n, "alpha", 0.01f), 0};
		break;
	case OM_OPC_HARD_SIGMOID:
		a = (om_act){OM_ACT_HARD_SIGMOID, om_attr_float(n, "alpha", 0.2f),
			     om_attr_float(n, "beta", 0.5f)};
		break;
	case OM_OPC_HARD_SWISH:
		a = (om_act){OM_ACT_HARD_SWISH, 1.0f / 6, 0.5f};
		break;
	case OM_OPC_SWISH:
		a = (om_act){OM_ACT_SWISH, om_attr_float(n, "alpha", 1.0f), 0};
		break;
	case OM_OPC_MS_QUICK_GELU:
		a = (om_act){OM_ACT_SWISH, om_attr_float(n, "alpha", 1.702f), 0};
		break;
	case OM_OPC_CLIP:
		if (!clip_bounds(n, opset, scalar, arg, &a))
			return false;
		*out = a;
		return true;
	default:
		return false;
	}
	if (n->nin != 1)
		return false;
	*out = a;
	return true;
}

bool om_act_gated(const om_act *a, om_act *out)
{
	if (a->kind == OM_ACT_SIGMOID) {
		*out = (om_act){OM_ACT_SWISH, 1.0f, 0};
		return true;
	}
	if (a->kind == OM_ACT_HARD_SIGMOID) {
		*out = (om_act){OM_ACT_HARD_SWISH, a->alpha, a->beta};
		return true;
	}
	return false;
}

const char *om_act_fused_name(int32_t kind, int32_t *nparams)
{
	if (kind <= OM_ACT_NONE || kind >= OM_ACT_KINDS || !kinds[kind].fused)
		return NULL;
	*nparams = kinds[kind].nparams;
	return kinds[kind].fused;
}

int32_t om_act_from_fused_name(const char *name, int32_t *nparams)
{
	for (int32_t k = OM_ACT_NONE + 1; name && k < OM_ACT_KINDS; k++)
		if (kinds[k].fused && !strcmp(kinds[k].fused, name)) {
			*nparams = kinds[k].nparams;
			return k;
		}
	return OM_ACT_NONE;
}

const char *om_act_name(int32_t kind)
{
	return kind >= OM_ACT_NONE && kind < OM_ACT_KINDS ? kinds[kind].name : "";
}
