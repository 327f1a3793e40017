/*
 * fuse_conv_bn.c — the fuse_conv_bn pass: BatchNormalization (inference) reading the only use
 * of a Conv's or a ConvTranspose's output is folded into its weight and bias:
 *
 *     s[m] = scale[m] / sqrt(var[m] + epsilon)
 *     W'[m, ...] = W[m, ...] * s[m]        B'[m] = (B[m] - mean[m]) * s[m] + bias[m]
 *
 * (ConvTranspose: W'[c, j, ...] = W[c, j, ...] * s[m], m = (c / (C / group)) (M / group) + j,
 * its W being (C, M / group, ...))
 *
 * Conditions: W, B (when present), scale, bias, mean and var are constants of a float type
 * (float, double, float16, bfloat16), W has rank >= 3 and dim 0 = M, every per-channel operand
 * has M elements; the BN is in inference mode (training_mode 0, no used extra outputs,
 * spatial 1); the Conv output has no other use and is not a graph output. The arithmetic is
 * done in double and stored in W's type; W' and B' are new initializers (the old ones may be
 * read elsewhere). When the BN output is a graph output, the Conv takes its name.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "float_elem.h"
#include "match.h"

static bool bn_is_inference(const om_node *bn)
{
	if (bn->nin != 5 || bn->nout < 1 || !bn->out[0])
		return false;
	for (int32_t k = 1; k < bn->nout; k++)
		if (bn->out[k] && bn->out[k]->nuses > 0)
			return false;
	return om_attr_int(bn, "training_mode", 0) == 0 && om_attr_int(bn, "spatial", 1) == 1;
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *bn, bool *done)
{
	*done = false;
	if (!bn_is_inference(bn) || om_value_used_by_subgraph(c, g, bn->out[0]))
		return OM_OK;
	const uint64_t convs = OM_OPC_BIT(OM_OPC_CONV) | OM_OPC_BIT(OM_OPC_CONV_TRANSPOSE);
	om_node *conv = om_match_conv_producer(c, g, bn->in[0], convs);
	if (!conv)
		return OM_OK;
	const om_tensor *w = om_value_const(g, conv->in[1]);
	const bool tr = om_node_code(g->model, conv) == OM_OPC_CONV_TRANSPOSE;
	const int64_t group = tr ? om_attr_int(conv, "group", 1) : 1;
	if (om_match_weight_channels(w) <= 0 || group < 1 || w->dims[0] % group)
		return OM_OK;
	const int64_t m = tr ? w->dims[1] * group : w->dims[0];
	const int64_t mg = tr ? w->dims[1] : 1, cg = tr ? w->dims[0] / group : 1;
	const om_tensor *b = conv->nin > 2 && conv->in[2] ? om_value_const(g, conv->in[2]) : NULL;
	if (conv->nin > 2 && conv->in[2] && !om_match_vector(b, m))
		return OM_OK;
	const om_tensor *p[4]; /* scale, bias, mean, var */
	for (int k = 0; k < 4; k++) {
		p[k] = bn->in[k + 1] ? om_value_const(g, bn->in[k + 1]) : NULL;
		if (!om_match_vector(p[k], m))
			return OM_OK;
	}
	const double eps = om_attr_float(bn, "epsilon", 1e-5f);
	double *sc = malloc(sizeof(double) * (size_t)m); /* s per output channel */
	if (!sc)
		return om_error(c->st, OM_ERR_NOMEM, bn, "out of memory");
	for (int64_t o = 0; o < m; o++)
		if (!isfinite(sc[o] = om_float_at(p[0], o) / sqrt(om_float_at(p[3], o) + eps))) {
			free(sc); /* an infinite or NaN scale does not distribute over the sum */
			return OM_OK;
		}
	om_tensor *nw = om_model_tensor(g->model, w->dtype, w->rank, w->dims);
	om_tensor *nb = om_model_tensor(g->model, w->dtype, 1, (int64_t[]){m});
	if (!nw || !nb) {
		free(sc);
		return om_error(c->st, OM_ERR_NOMEM, bn, "out of memory");
	}
	/* W as rows (Conv: outputs, ConvTranspose: inputs) of mg parts (Conv: one) of `inner`
	 * values, each part one output's */
	const int64_t rows = w->dims[0], inner = om_tensor_numel(w) / (rows * mg);
	for (int64_t r = 0; r < rows; r++)
		for (int64_t j = 0; j < mg; j++) {
			const double s = sc[tr ? r / cg * mg + j : r]; /* its output channel's */
			for (int64_t i = 0, at = (r * mg + j) * inner; i < inner; i++)
				om_float_put(nw, at + i, om_float_at(w, at + i) * s);
		}
	for (int64_t o = 0; o < m; o++) {
		const double b0 = b ? om_float_at(b, o) : 0.0;
		om_float_put(nb, o, (b0 - om_float_at(p[2], o)) * sc[o] + om_float_at(p[1], o));
	}
	free(sc);
	return om_fuse_into_conv(c, g, conv, nw, nb, bn, done);
}

om_kind om_pass_fuse_conv_bn(om_pass_ctx *c, om_graph *g, int *changes)
{
	return om_rewrite_each(c, g, OM_OPC_BIT(OM_OPC_BATCH_NORM), fuse,
			       changes);
}
