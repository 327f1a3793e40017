/*
 * activation.h — the element-wise activations a producing kernel applies to its own output
 * while it is in cache (the Conv kernels' epilogue, oneDNN's post-ops), and which nodes are
 * one. The fuse_conv_activation pass (passes/fuse_conv_act.c) and the planner's absorption
 * (runtime/plan_absorb.c) both ask om_act_of, so the list is written once (activation.c).
 */
#ifndef OM_ACTIVATION_H
#define OM_ACTIVATION_H

#include "op.h"

enum om_act_kind {
	OM_ACT_NONE = 0,
	OM_ACT_RELU,
	OM_ACT_TANH,
	OM_ACT_SIGMOID,
	OM_ACT_LEAKY_RELU,   /* x < 0 ? alpha x : x */
	OM_ACT_CLIP,         /* min(max(x, alpha), beta); NaN stays NaN */
	OM_ACT_HARD_SIGMOID, /* clamp(alpha x + beta, 0, 1) */
	OM_ACT_SWISH,        /* x sigmoid(alpha x): SiLU (alpha 1), QuickGelu (1.702) */
	OM_ACT_HARD_SWISH,   /* x clamp(alpha x + beta, 0, 1): HardSwish (alpha 1/6, beta 1/2) */
	OM_ACT_KINDS
};

typedef struct om_act {
	int32_t kind; /* om_act_kind */
	float alpha, beta;
} om_act;

/* The value of node input k when it is a constant scalar: true and *v set. */
typedef bool (*om_act_scalar_fn)(void *arg, int32_t k, double *v);

/** The activation node n computes from its input 0, when it is one (above): `code` is its
 *  row's code (om_node_code), `opset` its domain's opset (Clip's bounds are attributes before
 *  11, inputs from 11: scalar() reads them; an omitted bound is +-FLT_MAX). False otherwise. */
bool om_act_of(const om_node *n, int32_t code, int64_t opset, om_act_scalar_fn scalar, void *arg,
	       om_act *out);
/** Mul(x, a(x)) as one activation: Sigmoid(alpha x) gives Swish, HardSigmoid gives HardSwish.
 *  False when a has no such form. */
bool om_act_gated(const om_act *a, om_act *out);
/** The name of kind in com.microsoft FusedConv's `activation` (ONNX Runtime's contract) and
 *  how many activation_params it takes; NULL for the kinds FusedConv has not (Swish,
 *  HardSwish). */
const char *om_act_fused_name(int32_t kind, int32_t *nparams);
/** The kind FusedConv's activation `name` is, with its params count; OM_ACT_NONE when
 *  unknown. */
int32_t om_act_from_fused_name(const char *name, int32_t *nparams);
/** A name for kind, for plans and profiles ("Relu", "Swish", ...). */
const char *om_act_name(int32_t kind);

#endif
