/*
 * fuse_conv_affine.c — the fuse_conv_affine pass: Mul, Div, Add or Sub of a constant per-
 * channel (or scalar) operand reading the only use of a Conv's output is folded into the
 * Conv's weight and bias:
 *
 *     Mul k: W' = W * k, B' = B * k      Div k: W' = W / k, B' = B / k   (Conv output first)
 *     Add k: B' = B + k                   Sub k: B' = B - k               (Conv output first)
 *
 * (Mul and Add also with the constant first.) Conditions: W and B (when present) as for
 * fuse_conv_bn; k is a constant of W's element type whose shape, aligned to the right with
 * the Conv output (rank = W's rank), is 1 everywhere but at the channel axis 1, where it is 1
 * or M, and has no more dims than the output (so the result's shape is the Conv's). The
 * arithmetic is done in double and stored in W's type; new weights are new initializers. When
 * the op's output is a graph output, the Conv takes its name. k must be finite (and nonzero
 * for Div): an infinite scale does not distribute over the Conv's sum.
 */
#include <math.h>
#include <string.h>

#include "float_elem.h"
#include "match.h"

/* True when k broadcasts along the channel axis only, over an output of rank r with m channels;
 * *per_channel tells whether k has m elements (else one). */
static bool channel_operand(const om_tensor *k, int32_t r, int64_t m, bool *per_channel)
{
	int64_t n = k ? om_tensor_numel(k) : -1;
	if (!k || k->rank > r || (n != 1 && n != m) || !om_match_vector(k, n))
		return false;
	for (int32_t j = 0; j < k->rank; j++) {
		int32_t axis = r - k->rank + j;
		if (k->dims[j] != 1 && !(axis == 1 && k->dims[j] == m))
			return false;
	}
	*per_channel = n == m;
	return true;
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	const enum om_opcode op = om_node_code(c->m, n);
	const bool mul = op == OM_OPC_MUL, div = op == OM_OPC_DIV, sub = op == OM_OPC_SUB;
	if (n->nin != 2 || n->nout != 1 || !n->out[0] || !n->in[0] || !n->in[1] ||
	    om_value_used_by_subgraph(c, g, n->out[0]))
		return OM_OK;
	int first = 0; /* which input is the Conv's output */
	om_node *conv = om_match_conv_producer(c, g, n->in[0], OM_OPC_BIT(OM_OPC_CONV));
	if (!conv && !div && !sub) {
		first = 1;
		conv = om_match_conv_producer(c, g, n->in[1], OM_OPC_BIT(OM_OPC_CONV));
	}
	if (!conv)
		return OM_OK;
	const om_tensor *w = om_value_const(g, conv->in[1]);
	int64_t m = om_match_weight_channels(w);
	if (m <= 0)
		return OM_OK;
	const om_tensor *b = conv->nin > 2 && conv->in[2] ? om_value_const(g, conv->in[2]) : NULL;
	if (conv->nin > 2 && conv->in[2] && (!om_match_vector(b, m) || b->dtype != w->dtype))
		return OM_OK;
	const om_tensor *k = om_value_const(g, n->in[1 - first]);
	bool per_channel;
	if (!k || k->dtype != w->dtype || !channel_operand(k, w->rank, m, &per_channel))
		return OM_OK;
	for (int64_t o = 0; o < om_tensor_numel(k); o++) {
		double kv = om_float_at(k, o);
		if (!isfinite(kv) || (div && kv == 0.0))
			return OM_OK; /* inf or NaN scales would not distribute over the sum */
	}
	bool scales = mul || div;
	om_tensor *nw = NULL;
	int64_t bd[1] = {m};
	om_tensor *nb = om_model_tensor(g->model, w->dtype, 1, bd);
	if (scales)
		nw = om_model_tensor(g->model, w->dtype, w->rank, w->dims);
	if (!nb || (scales && !nw))
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
	int64_t inner = om_tensor_numel(w) / m;
	for (int64_t o = 0; o < m; o++) {
		double kv = om_float_at(k, per_channel ? o : 0), b0 = b ? om_float_at(b, o) : 0.0;
		for (int64_t i = 0; scales && i < inner; i++) {
			double x = om_float_at(w, o * inner + i);
			om_float_put(nw, o * inner + i, mul ? x * kv : x / kv);
		}
		om_float_put(nb, o, mul ? b0 * kv : div ? b0 / kv : sub ? b0 - kv : b0 + kv);
	}
	return om_fuse_into_conv(c, g, conv, nw, nb, n, done);
}

om_kind om_pass_fuse_conv_affine(om_pass_ctx *c, om_graph *g, int *changes)
{
	const uint64_t affine = OM_OPC_BIT(OM_OPC_MUL) | OM_OPC_BIT(OM_OPC_DIV) |
				OM_OPC_BIT(OM_OPC_ADD) | OM_OPC_BIT(OM_OPC_SUB);
	return om_rewrite_each(c, g, affine, fuse, changes);
}
