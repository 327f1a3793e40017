/* index_onehot.c — OneHot (opset 9+, seed §2): indices of any numeric type, depth any numeric
 * scalar (a float depth truncates toward zero), values [off, on] of any stored type; an index
 * outside [-depth, depth) gives an all-off row; rank-0 indices work. A float index selects the
 * position it equals (ONNX Runtime compares): NaN and fractional values select nothing. */
#include <math.h>

#include "index_util.h"
#include "move.h"
#include "shape_util.h"

static om_kind onehot_check(om_ctx *c, int64_t *depth, int32_t *axis)
{
	const om_tensor *ix = c->in[0], *dp = c->in[1], *v = c->in[2];
	if (!ix || !dp || !v)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "needs three inputs");
	if (!om_ix_is_int(ix->dtype) && !om_ix_is_float(ix->dtype))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "indices of type %s",
				om_dtype_name(ix->dtype));
	if (om_tensor_numel(v) != 2 || v->rank != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"values must be a 2-element vector [off, on]");
	if (om_dtype_bits(v->dtype) == 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "values of type %s",
				om_dtype_name(v->dtype));
	om_kind rc = om_norm_axis(c, om_attr_int(c->node, "axis", -1), ix->rank + 1, axis);
	if (rc)
		return rc;
	if (dp->rank > 1 || om_tensor_numel(dp) != 1)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "depth must be a scalar");
	if ((rc = om_ix_scalar_int(c, dp, "depth", depth)))
		return rc;
	if (*depth <= 0)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "depth %lld is not positive",
				(long long)*depth);
	return OM_OK;
}

om_kind om_onehot_infer(om_ctx *c)
{
	int64_t depth;
	int32_t axis;
	om_kind rc = onehot_check(c, &depth, &axis);
	if (rc)
		return rc;
	const om_tensor *ix = c->in[0];
	int64_t dims[OM_MAX_RANK + 1];
	for (int32_t i = 0, r = 0; i <= ix->rank; i++)
		dims[i] = i == axis ? depth : ix->dims[r++];
	return om_ix_set_shape(c, c->out[0], c->in[2]->dtype, ix->rank + 1, dims);
}

/* The hot position of index element i in [0, depth), or -1 when it selects nothing. */
static int64_t hot(const om_tensor *ix, int64_t i, int64_t depth)
{
	int64_t k;
	if (om_ix_is_int(ix->dtype)) {
		k = om_ix_int_at(ix, i);
	} else {
		double v = om_ix_float_at(ix, i);
		if (!(v >= -(double)depth && v < (double)depth) || v != trunc(v)) /* NaN too */
			return -1;
		k = (int64_t)v;
	}
	if (k < -depth || k >= depth)
		return -1;
	return k < 0 ? k + depth : k;
}

static om_kind onehot_move(om_ctx *c)
{
	int64_t depth;
	int32_t axis;
	om_kind rc = onehot_check(c, &depth, &axis);
	if (rc)
		return rc;
	const om_tensor *ix = c->in[0], *v = c->in[2];
	om_tensor *y = c->out[0];
	const size_t size = om_move_size(v->dtype);
	const unsigned char *off = v->data, *on = off + size;
	unsigned char *d = y->data;
	const int64_t total = om_tensor_numel(y), n = om_tensor_numel(ix);
	for (int64_t i = 0; i < total; i++)
		om_move1(d + (size_t)i * size, off, size);
	int64_t inner = 1;
	for (int32_t i = axis; i < ix->rank; i++)
		inner *= ix->dims[i];
	for (int64_t i = 0; i < n; i++) {
		int64_t h = hot(ix, i, depth);
		if (h < 0)
			continue;
		int64_t o = i / inner, r = i % inner;
		om_move1(d + (size_t)((o * depth + h) * inner + r) * size, on, size);
	}
	return OM_OK;
}

om_kind om_onehot_kernel(om_ctx *c)
{
	return om_move_run(c, onehot_move);
}
