/* ops_scatter.c — ScatterElements (opsets 11/13/16/18: reduction none/add/mul/max/min) and the
 * deprecated Scatter (opset 9): output = data, then each update written (or folded) at its
 * own coordinates with the axis coordinate taken from indices. Moves by element size;
 * the reductions are ScatterND's (index_scatter.c). */
#include <string.h>

#include "index_util.h"
#include "move.h"
#include "shape_util.h"

static om_kind se_check(om_ctx *c, int *red, int32_t *axis)
{
	const om_tensor *x = c->nin > 0 ? c->in[0] : NULL, *ix = c->nin > 1 ? c->in[1] : NULL;
	const om_tensor *u = c->nin > 2 ? c->in[2] : NULL;
	if (!x || !ix || !u)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"needs data, indices and updates");
	om_kind rc = om_scatter_reduction(c, red);
	if (!rc)
		rc = om_ix_check_index_type(c, ix, "indices");
	if (!rc)
		rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, axis);
	if (rc)
		return rc;
	if (u->dtype != x->dtype)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "updates are %s, data %s",
				om_dtype_name(u->dtype), om_dtype_name(x->dtype));
	if (*red != OM_RED_NONE && x->dtype != OM_FLOAT && x->dtype != OM_DOUBLE &&
	    x->dtype != OM_INT32 && x->dtype != OM_INT64)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"reduction on %s (float, double, int32, int64 only)",
				om_dtype_name(x->dtype));
	if (ix->rank != x->rank || u->rank != x->rank)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"data, indices and updates must have one rank");
	for (int32_t d = 0; d < x->rank; d++)
		if (u->dims[d] != ix->dims[d] || (d != *axis && ix->dims[d] > x->dims[d]))
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"indices/updates dim %d (%lld) does not fit data (%lld)", d,
					(long long)ix->dims[d], (long long)x->dims[d]);
	return OM_OK;
}

static om_kind se_infer(om_ctx *c)
{
	int red;
	int32_t axis;
	om_kind rc = se_check(c, &red, &axis);
	if (rc)
		return rc;
	return om_ix_set_shape(c, c->out[0], c->in[0]->dtype, c->in[0]->rank, c->in[0]->dims);
}

static om_kind se_move(om_ctx *c)
{
	int red;
	int32_t axis;
	om_kind rc = se_check(c, &red, &axis);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0], *ix = c->in[1], *u = c->in[2];
	const int64_t n = om_tensor_numel(ix), ad = x->dims[axis];
	if ((rc = om_ix_check_indices(c, ix, ad, "indices")))
		return rc;
	const size_t size = om_move_size(x->dtype);
	om_move_n(c->out[0]->data, x->data, size, om_tensor_numel(x));
	int64_t xs[OM_MAX_RANK];
	om_dense_strides(x->rank, x->dims, xs);
	const om_scatter_fold_fn fold = om_scatter_fold(x->dtype);
	int64_t at[OM_MAX_RANK] = {0};
	unsigned char *dst = c->out[0]->data;
	const unsigned char *src = u->data;
	for (int64_t i = 0; i < n; i++) {
		int64_t v = om_ix_at(ix, i), off = 0;
		v = v < 0 ? v + ad : v;
		for (int32_t d = 0; d < x->rank; d++)
			off += (d == axis ? v : at[d]) * xs[d];
		if (red == OM_RED_NONE)
			om_move1(dst + (size_t)off * size, src + (size_t)i * size, size);
		else
			fold(dst + (size_t)off * size, src + (size_t)i * size, 1, red);
		for (int32_t d = x->rank - 1; d >= 0 && ++at[d] == ix->dims[d]; d--)
			at[d] = 0;
	}
	return OM_OK;
}

static om_kind se_kernel(om_ctx *c)
{
	return om_move_run(c, se_move);
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_Scatter_9_v11[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Scatter-11: data indices updates -> output */
static const om_sig sig_Scatter_9_v11 = {11, 3, 3, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_Scatter_9_v11, NULL};
static const om_sig_attr attrs_Scatter_9[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* Scatter-9: data indices updates -> output */
static const om_sig sig_Scatter_9 = {9, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x0, 0x0, attrs_Scatter_9,
	&sig_Scatter_9_v11};
static const om_sig_attr attrs_ScatterElements_11_v13[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ScatterElements-13: data indices updates -> output */
static const om_sig sig_ScatterElements_11_v13 = {13, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_ScatterElements_11_v13, NULL};
static const om_sig_attr attrs_ScatterElements_11[] = {{"axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ScatterElements-11: data indices updates -> output */
static const om_sig sig_ScatterElements_11 = {11, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x0, 0x0,
	attrs_ScatterElements_11, &sig_ScatterElements_11_v13};
static const om_sig_attr attrs_ScatterElements_16[] = {{"axis", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* ScatterElements-16: data indices updates -> output */
static const om_sig sig_ScatterElements_16 = {16, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_ScatterElements_16, NULL};
static const om_sig_attr attrs_ScatterElements_18[] = {{"axis", OM_ATTR_INT, 0},
	{"reduction", OM_ATTR_STRING, 0}, {NULL, 0, 0}};
/* ScatterElements-18: data indices updates -> output */
static const om_sig sig_ScatterElements_18 = {18, 3, 3, 1, 1, 0x0, 0x0, 0x5, 0x1, 0x5, 0x1,
	attrs_ScatterElements_18, NULL};

/* ---- end of signatures ---- */

/* the param: the last reduction the row's `reduction` attribute may name (index_util.h) */
static const om_op rows[] = {
	{"Scatter", "", 9, se_infer, se_kernel, OM_OP_EXACT, &sig_Scatter_9, OM_OPC_NONE, NULL,
	 OM_RED_NONE, NULL},
	{"ScatterElements", "", 11, se_infer, se_kernel, OM_OP_EXACT, &sig_ScatterElements_11,
	 OM_OPC_NONE, NULL, OM_RED_NONE, NULL},
	{"ScatterElements", "", 16, se_infer, se_kernel, OM_OP_EXACT, &sig_ScatterElements_16,
	 OM_OPC_NONE, NULL, OM_RED_MUL, NULL},
	{"ScatterElements", "", 18, se_infer, se_kernel, OM_OP_EXACT, &sig_ScatterElements_18,
	 OM_OPC_NONE, NULL, OM_RED_MIN, NULL},
};

const om_op_table om_ops_scatter = OM_TABLE(rows);
