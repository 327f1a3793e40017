/*
 * fuse_pad.c — the fuse_pad pass: a Pad that adds zeros around the spatial axes only, read
 * by nothing but a Conv or an AveragePool (as input 0), becomes part of that op's `pads`:
 *
 *     Conv(Pad(x, p), W, B; pads q)     = Conv(x, W, B; pads q + p)
 *     AveragePool(Pad(x, p); pads q, count_include_pad 1)
 *                                       = AveragePool(x; pads q + p, count_include_pad 1)
 *     AveragePool(Pad(x, p); pads 0, count_include_pad 0)
 *                                       = AveragePool(x; pads p, count_include_pad 1)
 *
 * (PyTorch exports avg_pool2d(padding=k) and F.pad before a conv so; ONNX Runtime and
 * onnx-optimizer fuse them alike.) The padded zeros are what the op's own padding reads as
 * zeros (Conv) or counts as elements (count_include_pad 1), so every output is the same sum
 * over the same window. Conditions: Pad in constant mode with value 0 (absent, or a constant
 * 0), pads constant and not negative, 0 on the batch and channel axes, no `axes` input; the
 * reader of the default domain with auto_pad NOTSET, and for AveragePool ceil_mode 0 (with
 * ceil_mode, windows past the padded end would be clipped where the padded input had zeros).
 */
#include <string.h>

#include "infer.h"
#include "match.h"

/* The Pad p's pads (2 r values, r the input rank: begins then ends), when p adds zeros in
 * constant mode around the spatial axes only; false otherwise. */
static bool zero_pads(const om_pass_ctx *c, const om_graph *g, om_node *p, int32_t r,
		      int64_t *pads)
{
	const int64_t opset = om_model_opset(c->m, "");
	const char *mode = om_attr_string(p, "mode", "constant");
	if (strcmp(mode, "constant") || r < 3 || r > OM_MAX_RANK)
		return false;
	int64_t k = 0;
	const int64_t *attr = NULL;
	if (opset < 11) {
		attr = om_attr_ints(p, opset < 2 ? "paddings" : "pads", &k);
		if (om_attr_float(p, "value", 0.0f) != 0.0f)
			return false;
	} else {
		const om_tensor *t = p->nin > 1 && p->in[1] ? om_value_const(g, p->in[1]) : NULL;
		if (!t || t->dtype != OM_INT64 || t->rank != 1 || (p->nin > 3 && p->in[3]))
			return false;
		attr = t->data, k = om_tensor_numel(t);
		if (p->nin > 2 && p->in[2] && !om_match_scalar_is(g, p->in[2], 1, 0.0))
			return false;
	}
	if (!attr || k != 2 * r)
		return false;
	for (int32_t i = 0; i < 2 * r; i++) {
		pads[i] = attr[i];
		if (pads[i] < 0 || (i % r < 2 && pads[i] != 0))
			return false;
	}
	return true;
}

/* n's `pads` plus the Pad's spatial ones: n's (2 s values, s spatial axes; absent: zeros) */
static om_kind add_pads(om_pass_ctx *c, om_graph *g, om_node *n, int32_t s,
			const int64_t *pad, int32_t r)
{
	int64_t k = 0;
	const int64_t *old = om_attr_ints(n, "pads", &k);
	int64_t *sum = om_arena_alloc(g->model->arena, sizeof(int64_t) * (size_t)(2 * s));
	om_attr *a = sum ? om_node_set_attr(n, "pads", OM_ATTR_INTS) : NULL;
	if (!a)
		return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
	for (int32_t i = 0; i < s; i++) {
		sum[i] = (old ? old[i] : 0) + pad[2 + i];
		sum[s + i] = (old ? old[s + i] : 0) + pad[r + 2 + i];
	}
	a->ints = sum;
	a->n = 2 * s;
	return OM_OK;
}

static om_kind fuse(om_pass_ctx *c, om_graph *g, om_node *n, bool *done)
{
	*done = false;
	om_value *y = n->nin > 0 ? n->in[0] : NULL;
	om_node *p = y ? om_match_producer(g, y, OM_OPC_PAD) : NULL;
	if (!p || !om_node_default_domain(n) || !p->in[0] || !om_match_private(c, g, y, 1))
		return OM_OK;
	const om_vinfo *x = om_vinfo_get(c, g, p->in[0]);
	if (!om_vi_ranked(x))
		return OM_OK;
	const int32_t r = x->type.rank, s = r - 2;
	int64_t pads[2 * OM_MAX_RANK], k = 0;
	const bool pool = om_node_code(c->m, n) == OM_OPC_AVERAGE_POOL;
	const int64_t *q = om_attr_ints(n, "pads", &k);
	bool q_zero = true;
	for (int64_t i = 0; q && i < k; i++)
		q_zero &= q[i] == 0;
	const int64_t cip = om_attr_int(n, "count_include_pad", 0);
	if (!zero_pads(c, g, p, r, pads) || (q && k != 2 * s) ||
	    om_attr_choice(n, "auto_pad", (const char *const[]){"NOTSET", NULL}, 0) ||
	    (pool && (om_attr_int(n, "ceil_mode", 0) || (!cip && !q_zero) ||
		      om_model_opset(c->m, "") < 7)))
		return OM_OK;
	if (!om_bypass_node(c, g, p, p->in[0]))
		return OM_OK;
	*done = true;
	om_kind rc = add_pads(c, g, n, s, pads, r);
	if (!rc && pool && !cip) {
		om_attr *a = om_node_set_attr(n, "count_include_pad", OM_ATTR_INT);
		if (!a)
			return om_error(c->st, OM_ERR_NOMEM, n, "out of memory");
		a->i = 1;
	}
	return rc;
}

om_kind om_pass_fuse_pad(om_pass_ctx *c, om_graph *g, int *changes)
{
	const uint64_t readers = OM_OPC_BIT(OM_OPC_CONV) | OM_OPC_BIT(OM_OPC_AVERAGE_POOL);
	return om_rewrite_each(c, g, readers, fuse, changes);
}
