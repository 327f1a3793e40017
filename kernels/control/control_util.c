/* control_util.c — what If, Loop and Scan share: attributes, conditions, outputs placed in the
 * session, slices and stacks along an axis. */
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "value.h"

om_kind om_ctl_bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

const om_graph *om_ctl_graph(const om_ctx *c, const char *name)
{
	const om_attr *a = om_node_attr(c->node, name);
	return a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
}

om_kind om_ctl_need_session(om_ctx *c)
{
	if (!c->run)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"%s runs only inside a session", c->node->op);
	return OM_OK;
}

/* bytes per element of a value that a control op may move (not strings, not 4-bit types) */
om_kind om_ctl_movable(om_ctx *c, const om_tensor *t, size_t *esize)
{
	*esize = om_dtype_size(t->dtype);
	if (t->dtype == OM_STRING || !*esize)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s of %s values", c->node->op,
				om_dtype_name(t->dtype));
	return OM_OK;
}

om_kind om_ctl_read_bool(om_ctx *c, const om_tensor *t, bool *out)
{
	if (t->dtype != OM_BOOL || om_tensor_numel(t) != 1)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"a condition must be one bool, got %s with %lld elements",
				om_dtype_name(t->dtype), (long long)om_tensor_numel(t));
	*out = *(const unsigned char *)t->data != 0;
	return OM_OK;
}

/* Output i of the node = t (copied into the session's memory). */
om_kind om_ctl_put_output(om_ctx *c, int32_t i, const om_tensor *t)
{
	size_t es;
	if (!c->out[i])
		return OM_OK;
	if (om_is_box(t)) { /* a sequence or optional: a deep copy the run owns */
		om_tensor v;
		om_kind rc = om_value_copy(&v, t, c->st);
		if (!rc && (rc = om_ctx_output_value(c, i, &v)))
			om_value_free(&v);
		return rc;
	}
	om_kind rc = om_ctl_movable(c, t, &es);
	if (!rc)
		rc = om_ctx_output(c, i, t->dtype, t->rank, t->dims);
	if (!rc && c->out[i]->nbytes)
		memcpy(c->out[i]->data, t->data, c->out[i]->nbytes);
	return rc;
}

void om_ctl_free_all(om_tensor *t, int32_t n)
{
	for (int32_t i = 0; t && i < n; i++)
		om_value_free(&t[i]);
}

/* A scan output of a scan that ran 0 times (zeros): the body output's declared element type
 * and extents (unknown extents 0), with extent `len` inserted at `axis`. */
om_kind om_ctl_declared_stack(om_ctx *c, const om_value *bv, int64_t len, int64_t axis,
			      om_tensor *acc)
{
	const om_type *ty = &bv->type;
	int32_t rank = ty->kind == OM_TYPE_TENSOR && ty->rank >= 0 ? ty->rank : 0;
	if (axis < 0)
		axis += rank + 1;
	if (rank + 1 > OM_MAX_RANK || axis < 0 || axis > rank)
		return om_ctl_bad(c, "a scan output axis is out of range");
	int64_t dims[OM_MAX_RANK];
	for (int32_t k = 0, j = 0; k <= rank; k++) {
		if (k == axis) {
			dims[k] = len;
			continue;
		}
		dims[k] = om_dim_known(ty->dims[j]) ? ty->dims[j].value : 0;
		j++;
	}
	int32_t dtype = ty->kind == OM_TYPE_TENSOR && ty->elem ? ty->elem : OM_FLOAT;
	return om_tensor_alloc(acc, dtype, rank + 1, dims, c->st);
}

/* ---- slices along an axis ---------------------------------------------------------------- */

typedef struct axis_geom {
	int64_t outer; /* product of the extents before the axis */
	size_t inner;  /* bytes of one element row after the axis */
} axis_geom;

static axis_geom geom(int32_t rank, const int64_t *dims, int32_t axis, size_t esize)
{
	axis_geom g = {1, esize};
	for (int32_t k = 0; k < rank; k++) {
		if (k < axis)
			g.outer *= dims[k];
		else if (k > axis)
			g.inner *= (size_t)dims[k];
	}
	return g;
}

/* dst (allocated here) = src[..., idx, ...] along axis */
om_kind om_ctl_take_slice(om_ctx *c, const om_tensor *src, int32_t axis, int64_t idx,
			  om_tensor *dst)
{
	int64_t dims[OM_MAX_RANK];
	for (int32_t k = 0, j = 0; k < src->rank; k++)
		if (k != axis)
			dims[j++] = src->dims[k];
	om_kind rc = om_tensor_alloc(dst, src->dtype, src->rank - 1, dims, c->st);
	if (rc)
		return rc;
	axis_geom g = geom(src->rank, src->dims, axis, om_dtype_size(src->dtype));
	const int64_t len = src->dims[axis];
	for (int64_t o = 0; o < g.outer; o++)
		memcpy((char *)dst->data + (size_t)o * g.inner,
		       (const char *)src->data + (size_t)(o * len + idx) * g.inner, g.inner);
	return OM_OK;
}

/* dst[..., idx, ...] along axis = e (e's shape is dst's without the axis) */
void om_ctl_put_slice(om_tensor *dst, int32_t axis, int64_t idx, const om_tensor *e)
{
	axis_geom g = geom(dst->rank, dst->dims, axis, om_dtype_size(dst->dtype));
	const int64_t len = dst->dims[axis];
	for (int64_t o = 0; o < g.outer; o++)
		memcpy((char *)dst->data + (size_t)(o * len + idx) * g.inner,
		       (const char *)e->data + (size_t)o * g.inner, g.inner);
}

bool om_ctl_same_shape(const om_tensor *a, const om_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t k = 0; k < a->rank; k++)
		if (a->dims[k] != b->dims[k])
			return false;
	return true;
}

/* A scan output being built: e's shape with `len` inserted at `axis`. */
om_kind om_ctl_start_stack(om_ctx *c, const om_tensor *e, int64_t len, int64_t axis,
			   om_tensor *acc)
{
	size_t es;
	om_kind rc = om_ctl_movable(c, e, &es);
	if (rc)
		return rc;
	if (axis < 0)
		axis += e->rank + 1;
	if (axis < 0 || axis > e->rank || e->rank + 1 > OM_MAX_RANK)
		return om_ctl_bad(c, "a scan output axis is out of range");
	int64_t dims[OM_MAX_RANK];
	for (int32_t k = 0, j = 0; k <= e->rank; k++)
		dims[k] = k == axis ? len : e->dims[j++];
	const int64_t bytes = om_shape_bytes(e->dtype, e->rank + 1, dims);
	if (bytes >= 0 && (rc = om_ctx_reserve(c, (size_t)bytes, "a scan output")))
		return rc;
	return om_tensor_alloc(acc, e->dtype, e->rank + 1, dims, c->st);
}
