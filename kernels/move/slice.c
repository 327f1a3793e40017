/* slice.c — Slice (seed §3): attribute form before opset 10, inputs from 10; ONNX Runtime's
 * end sentinels for negative steps. */
#include <string.h>

#include "ops_move.h"
#include "shape_util.h"

enum { CAP = 64 };

typedef struct slice_plan {
	int64_t start[OM_MAX_RANK], step[OM_MAX_RANK], count[OM_MAX_RANK];
} slice_plan;

/* one axis of extent n (seed §3) */
static void slice_axis(int64_t n, int64_t start, int64_t end, int64_t step, int64_t *s_out,
		       int64_t *count)
{
	step = step > INT32_MAX ? INT32_MAX : step < INT32_MIN ? INT32_MIN : step;
	int64_t s = start < 0 ? start + n : start, e;
	if (n == 0) {
		*s_out = 0, *count = 0;
		return;
	}
	if (step > 0) {
		e = end < 0 ? end + n : end;
		s = s < 0 ? 0 : s > n ? n : s;
		e = e < 0 ? 0 : e > n ? n : e;
		*count = e > s ? (e - s + step - 1) / step : 0;
	} else {
		/* an end of exactly INT32_MAX or INT64_MAX means "through element 0" */
		if (end == INT32_MAX || end == INT64_MAX)
			e = -1;
		else
			e = end < 0 ? end + n : end;
		s = s < 0 ? 0 : s > n - 1 ? n - 1 : s;
		e = e < -1 ? -1 : e > n - 1 ? n - 1 : e;
		*count = s > e ? (s - e + (-step) - 1) / (-step) : 0;
	}
	*s_out = s;
}

static om_kind slice_plan_of(om_ctx *c, slice_plan *p)
{
	om_kind rc = om_move_need(c);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const bool inputs = c->op->param == OM_SLICE_INPUTS;
	int64_t starts[CAP], ends[CAP], axes[CAP], steps[CAP], ns, ne, na, nt;
	bool gs, ge, ga, gt;
	if ((rc = om_arg_ints(c, inputs ? 1 : -1, inputs ? NULL : "starts", starts, CAP, &ns, &gs)))
		return rc;
	if ((rc = om_arg_ints(c, inputs ? 2 : -1, inputs ? NULL : "ends", ends, CAP, &ne, &ge)))
		return rc;
	if ((rc = om_arg_ints(c, inputs ? 3 : -1, inputs ? NULL : "axes", axes, CAP, &na, &ga)))
		return rc;
	if ((rc = om_arg_ints(c, inputs ? 4 : -1, NULL, steps, CAP, &nt, &gt)))
		return rc;
	if (!gs || !ge)
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"starts and ends are required");
	if (ne != ns || (ga && na != ns) || (gt && nt != ns))
		return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
				"starts, ends, axes and steps differ in length");
	if (!ga) {
		if (ns > x->rank)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%lld starts for rank %d", (long long)ns, x->rank);
		for (int64_t i = 0; i < ns; i++)
			axes[i] = i;
	}
	int32_t ax[OM_MAX_RANK];
	if ((rc = om_norm_axes(c, axes, ns, x->rank, ax)))
		return rc;
	for (int32_t i = 0; i < x->rank; i++) {
		p->start[i] = 0;
		p->step[i] = 1;
		p->count[i] = x->dims[i];
	}
	for (int64_t i = 0; i < ns; i++) {
		const int64_t step = gt ? steps[i] : 1;
		if (step == 0)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"step 0 on axis %d", ax[i]);
		slice_axis(x->dims[ax[i]], starts[i], ends[i], step, &p->start[ax[i]],
			   &p->count[ax[i]]);
		p->step[ax[i]] = step > INT32_MAX ? INT32_MAX : step < INT32_MIN ? INT32_MIN : step;
	}
	return OM_OK;
}

om_kind om_slice_infer(om_ctx *c)
{
	slice_plan p;
	om_kind rc = slice_plan_of(c, &p);
	if (rc == OM_NEED_VALUE && c->in[0])
		return om_partial(c->out[0], c->in[0]->dtype, c->in[0]->rank);
	if (rc)
		return rc;
	om_set_shape(c->out[0], c->in[0]->dtype, c->in[0]->rank, p.count);
	return OM_OK;
}

om_kind om_slice_move(om_ctx *c)
{
	slice_plan p;
	om_kind rc = slice_plan_of(c, &p);
	if (rc)
		return rc;
	const om_tensor *x = c->in[0];
	const int64_t size = (int64_t)om_move_size(x->dtype);
	if (om_shape_numel(x->rank, p.count) == 0)
		return OM_OK;
	int64_t xs[OM_MAX_RANK], st[OM_MAX_RANK], off = 0;
	om_dense_strides(x->rank, x->dims, xs);
	for (int32_t i = 0; i < x->rank; i++) {
		off += p.start[i] * xs[i];
		st[i] = p.count[i] > 1 ? p.step[i] * xs[i] : 0; /* no overflow when unused */
	}
	om_strided_copy(c->out[0]->data, (const unsigned char *)x->data + off * size, (size_t)size,
			x->rank, p.count, st);
	return OM_OK;
}
