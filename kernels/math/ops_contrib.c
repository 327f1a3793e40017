/* ops_contrib.c — ONNX Runtime's contrib Gelu ops, other names for kernels omopt has:
 * com.microsoft Gelu (erf) and FastGelu (tanh approximation, no bias) run the ONNX Gelu's
 * kernel; QuickGelu (x Sigmoid(alpha x), alpha 1.702 by default) runs Swish's (the same
 * om_det_sigmoidf and one product: with alpha 1, the bits of Sigmoid then Mul); BiasGelu
 * (Gelu(A + B), B 1-D over the last axis) runs the Gelu math with the sum in the same loop.
 * om_optimize writes them (passes/fuse_gelu.c). The contrib normalizations
 * (SkipLayerNormalization, LayerNormalization of the ONNX domain before opset 17) are with
 * the other normalizations (kernels/nn/ops_layernorm.c), FusedConv with Conv
 * (kernels/conv/ops_conv.c). */
#include <string.h>

#include "ew.h"
#include "layout.h"
#include "fastmath.h"
#include "parallel.h"

/* FastGelu is the ONNX Gelu with approximate = "tanh": run on a copy of the node that says so */
static om_kind fast_gelu(om_ctx *c, om_kernel_fn fn)
{
	if (c->nin > 1 && c->in[1])
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "FastGelu with a bias input");
	om_attr approx = {.name = "approximate", .type = OM_ATTR_STRING, .s = {"tanh", 4}};
	om_node n = *c->node;
	n.attrs = &approx;
	n.nattr = 1;
	om_ctx cc = *c;
	cc.node = &n;
	cc.nin = 1;
	return fn(&cc);
}

static om_kind fast_gelu_infer(om_ctx *c)
{
	return fast_gelu(c, om_ew_infer_Gelu);
}

static om_kind fast_gelu_kernel(om_ctx *c)
{
	return fast_gelu(c, om_ew_kernel_Gelu);
}

/* QuickGelu is Swish with alpha defaulting to 1.702 (Swish's is 1): run on a copy of the node
 * whose alpha says so */
static om_kind quick_gelu(om_ctx *c, om_kernel_fn fn)
{
	om_attr alpha = {.name = "alpha", .type = OM_ATTR_FLOAT,
			 .f = om_attr_float(c->node, "alpha", 1.702f)};
	om_node n = *c->node;
	n.attrs = &alpha;
	n.nattr = 1;
	om_ctx cc = *c;
	cc.node = &n;
	cc.nin = c->nin < 1 ? c->nin : 1;
	return fn(&cc);
}

static om_kind quick_gelu_infer(om_ctx *c)
{
	return quick_gelu(c, om_ew_infer_Swish);
}

static om_kind quick_gelu_kernel(om_ctx *c)
{
	return quick_gelu(c, om_ew_kernel_Swish);
}

/* BiasGelu(A, B) = Gelu(A + B) (erf) for float A of rank >= 1 and B 1-D of A's last dim
 * (ONNX Runtime's CPU contract); exact mode: the bits of Add then Gelu (om_ew_bias_gelu_f32) */
static om_kind bias_gelu_infer(om_ctx *c)
{
	const om_tensor *a = c->nin == 2 ? c->in[0] : NULL, *b = c->nin == 2 ? c->in[1] : NULL;
	if (!a || !b || c->nout != 1 || !c->out[0])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "BiasGelu takes A and B");
	if (a->dtype != OM_FLOAT || b->dtype != OM_FLOAT)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "BiasGelu on non-float");
	if (a->rank < 1 || b->rank != 1 || b->dims[0] != a->dims[a->rank - 1])
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"BiasGelu: B must be 1-D of A's last dimension");
	om_set_shape(c->out[0], a->dtype, a->rank, a->dims);
	return OM_OK;
}

typedef struct bias_gelu_job {
	int64_t d;
	const float *x, *b;
	float *y;
} bias_gelu_job;

static void bias_gelu_rows(void *arg, int64_t lo, int64_t hi)
{
	const bias_gelu_job *j = arg;
	const int64_t d = j->d;
	for (int64_t r = lo; r < hi; r++) {
		float *y = j->y + r * d;
		for (int64_t k = 0; k < d; k++)
			y[k] = j->x[r * d + k] + j->b[k];
		om_fast_gelu_f32(d, y, y);
	}
}

static om_kind bias_gelu_kernel(om_ctx *c)
{
	const om_tensor *a = c->in[0];
	const int64_t d = a->dims[a->rank - 1], n = om_tensor_numel(a);
	if (d <= 0)
		return OM_OK;
	if (c->exact) {
		om_ew_bias_gelu_f32(n / d, d, c->out[0]->data, a->data, c->in[1]->data);
		return OM_OK;
	}
	/* fast mode: the sum, then num/fastmath.h's Gelu on the row while it is in cache, the rows
	 * split over the run's threads */
	bias_gelu_job j = {d, a->data, c->in[1]->data, c->out[0]->data};
	om_par_for(c->threads, n / d, OM_EW_GRAIN / d + 1, bias_gelu_rows, &j);
	return OM_OK;
}

#define EI (OM_OP_EXACT | OM_OP_INPLACE)

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

/* Gelu-1: X -> Y */
static const om_sig sig_ms_Gelu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* FastGelu-1: X [bias] -> Y */
static const om_sig sig_ms_FastGelu_1 = {1, 1, 2, 1, 1, 0x2, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
/* BiasGelu-1: A B -> C */
static const om_sig sig_ms_BiasGelu_1 = {1, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL, NULL};
static const om_sig_attr attrs_ms_QuickGelu_1[] = {{"alpha", OM_ATTR_FLOAT, 0}, {NULL, 0, 0}};
/* QuickGelu-1: X -> Y */
static const om_sig sig_ms_QuickGelu_1 = {1, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_ms_QuickGelu_1, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"Gelu", "com.microsoft", 1, om_ew_infer_Gelu, om_ew_kernel_Gelu, EI, &sig_ms_Gelu_1,
	 OM_OPC_MS_GELU, NULL, 0, NULL},
	{"FastGelu", "com.microsoft", 1, fast_gelu_infer, fast_gelu_kernel, EI, &sig_ms_FastGelu_1,
	 OM_OPC_MS_FAST_GELU, NULL, 0, NULL},
	{"BiasGelu", "com.microsoft", 1, bias_gelu_infer, bias_gelu_kernel, EI, &sig_ms_BiasGelu_1,
	 OM_OPC_MS_BIAS_GELU, NULL, 0, NULL},
	{"QuickGelu", "com.microsoft", 1, quick_gelu_infer, quick_gelu_kernel, EI,
	 &sig_ms_QuickGelu_1, OM_OPC_MS_QUICK_GELU, om_layout_elementwise, 0, NULL},
};

const om_op_table om_ops_contrib = OM_TABLE(rows);
