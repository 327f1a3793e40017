/* ops_control.c — If, Loop, Scan: subgraphs run through the session (exec/session.h), outer
 * values resolve to the enclosing run's values. Output shapes are known only once the bodies
 * ran, so the kernels place their outputs themselves (om_session_output). Tensor values only:
 * sequence and optional values are OM_ERR_UNSUPPORTED. */
#include <stdlib.h>
#include <string.h>

#include "session.h"

static om_kind bad(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_MODEL, c->node, "%s", msg);
}

static const om_graph *graph_attr(const om_ctx *c, const char *name)
{
	const om_attr *a = om_node_attr(c->node, name);
	return a && a->type == OM_ATTR_GRAPH ? a->g : NULL;
}

static om_kind need_session(om_ctx *c)
{
	if (!c->session)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node,
				"%s runs only inside a session", c->node->op);
	return OM_OK;
}

/* bytes per element of a value that a control op may move (not strings, not 4-bit types) */
static om_kind movable(om_ctx *c, const om_tensor *t, size_t *esize)
{
	*esize = om_dtype_size(t->dtype);
	if (t->dtype == OM_STRING || !*esize)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s of %s values", c->node->op,
				om_dtype_name(t->dtype));
	return OM_OK;
}

static om_kind read_bool(om_ctx *c, const om_tensor *t, bool *out)
{
	if (t->dtype != OM_BOOL || om_tensor_numel(t) != 1)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"a condition must be one bool, got %s with %lld elements",
				om_dtype_name(t->dtype), (long long)om_tensor_numel(t));
	*out = *(const unsigned char *)t->data != 0;
	return OM_OK;
}

/* Output i of the node = t (copied into the session's memory). */
static om_kind put_output(om_ctx *c, int32_t i, const om_tensor *t)
{
	size_t es;
	if (!c->out[i])
		return OM_OK;
	om_kind rc = movable(c, t, &es);
	if (!rc)
		rc = om_session_output(c, i, t->dtype, t->rank, t->dims);
	if (!rc && c->out[i]->nbytes)
		memcpy(c->out[i]->data, t->data, c->out[i]->nbytes);
	return rc;
}

static void free_all(om_tensor *t, int32_t n)
{
	for (int32_t i = 0; t && i < n; i++)
		om_tensor_free(&t[i]);
}

/* A scan output of a scan that ran 0 times (zeros): the body output's declared element type
 * and extents (unknown extents 0), with extent `len` inserted at `axis`. */
static om_kind declared_stack(om_ctx *c, const om_value *bv, int64_t len, int64_t axis,
			      om_tensor *acc)
{
	const om_type *ty = &bv->type;
	int32_t rank = ty->kind == OM_TYPE_TENSOR && ty->rank >= 0 ? ty->rank : 0;
	if (axis < 0)
		axis += rank + 1;
	if (rank + 1 > OM_MAX_RANK || axis < 0 || axis > rank)
		return bad(c, "a scan output axis is out of range");
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
static om_kind take_slice(om_ctx *c, const om_tensor *src, int32_t axis, int64_t idx,
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
static void put_slice(om_tensor *dst, int32_t axis, int64_t idx, const om_tensor *e)
{
	axis_geom g = geom(dst->rank, dst->dims, axis, om_dtype_size(dst->dtype));
	const int64_t len = dst->dims[axis];
	for (int64_t o = 0; o < g.outer; o++)
		memcpy((char *)dst->data + (size_t)(o * len + idx) * g.inner,
		       (const char *)e->data + (size_t)o * g.inner, g.inner);
}

static bool same_shape(const om_tensor *a, const om_tensor *b)
{
	if (a->dtype != b->dtype || a->rank != b->rank)
		return false;
	for (int32_t k = 0; k < a->rank; k++)
		if (a->dims[k] != b->dims[k])
			return false;
	return true;
}

/* A scan output being built: e's shape with `len` inserted at `axis`. */
static om_kind start_stack(om_ctx *c, const om_tensor *e, int64_t len, int64_t axis,
			   om_tensor *acc)
{
	size_t es;
	om_kind rc = movable(c, e, &es);
	if (rc)
		return rc;
	if (axis < 0)
		axis += e->rank + 1;
	if (axis < 0 || axis > e->rank || e->rank + 1 > OM_MAX_RANK)
		return bad(c, "a scan output axis is out of range");
	int64_t dims[OM_MAX_RANK];
	for (int32_t k = 0, j = 0; k <= e->rank; k++)
		dims[k] = k == axis ? len : e->dims[j++];
	return om_tensor_alloc(acc, e->dtype, e->rank + 1, dims, c->st);
}

/* ---- If ---------------------------------------------------------------------------------- */

static om_kind if_infer(om_ctx *c)
{
	const om_graph *t = graph_attr(c, "then_branch"), *e = graph_attr(c, "else_branch");
	if (!t || !e)
		return bad(c, "then_branch and else_branch are required");
	if (c->nin < 1 || !c->in[0])
		return bad(c, "the condition input is required");
	if (t->noutputs != c->nout || e->noutputs != c->nout)
		return bad(c, "the branches must have as many outputs as the node");
	if (t->ninputs || e->ninputs)
		return bad(c, "the branches take no inputs");
	return OM_NEED_VALUE; /* the branch taken decides the shapes */
}

static om_kind if_kernel(om_ctx *c)
{
	om_kind rc = need_session(c);
	bool cond = false;
	if (rc || (rc = if_infer(c)) != OM_NEED_VALUE || (rc = read_bool(c, c->in[0], &cond)))
		return rc;
	const om_graph *g = graph_attr(c, cond ? "then_branch" : "else_branch");
	om_tensor *res = calloc((size_t)c->nout + 1, sizeof *res);
	if (!res)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	rc = om_session_run_graph(c->session, g, NULL, 0, res, c->nout, c->st);
	for (int32_t i = 0; !rc && i < c->nout; i++)
		rc = put_output(c, i, &res[i]);
	free_all(res, c->nout);
	free(res);
	return rc;
}

/* ---- Loop -------------------------------------------------------------------------------- */

static om_kind loop_infer(om_ctx *c)
{
	const om_graph *b = graph_attr(c, "body");
	if (!b)
		return bad(c, "the body attribute is required");
	if (c->nin < 2)
		return bad(c, "Loop has inputs M, cond, then the loop-carried values");
	int32_t n = c->nin - 2;
	if (b->ninputs != n + 2 || b->noutputs < n + 1 || c->nout != b->noutputs - 1)
		return bad(c, "the body must take (iteration, cond, N values) and return (cond, N "
			      "values, K scan outputs), the node N + K outputs");
	return OM_NEED_VALUE;
}

typedef struct loop_state {
	int32_t n, k;
	om_tensor *carried; /* owned once an iteration ran */
	bool owned;
	om_tensor *scan;    /* K stacks, growing */
	int64_t *scan_cap;  /* elements allocated along axis 0 */
	om_tensor *res;
} loop_state;

/* Appends iteration `it`'s element e to scan output k (stacked on axis 0, doubling). */
static om_kind loop_append(om_ctx *c, loop_state *ls, int32_t k, int64_t it, const om_tensor *e)
{
	om_tensor *acc = &ls->scan[k];
	if (it == 0) {
		om_kind rc = start_stack(c, e, 4, 0, acc);
		if (rc)
			return rc;
		ls->scan_cap[k] = 4;
	} else {
		om_tensor shape = *acc;
		shape.rank--;
		memmove(shape.dims, acc->dims + 1, sizeof(int64_t) * (size_t)shape.rank);
		if (!same_shape(&shape, e))
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"scan output %d changes shape between iterations", k);
	}
	size_t row = om_tensor_bytes_for(e->dtype, e->rank, e->dims);
	if (it >= ls->scan_cap[k]) {
		int64_t cap = 2 * ls->scan_cap[k];
		if (cap > INT64_MAX / 2 || (row && (uint64_t)cap > SIZE_MAX / row))
			return om_error(c->st, OM_ERR_NOMEM, c->node, "scan output %d too large", k);
		void *p = realloc(acc->data, row * (size_t)cap + 1);
		if (!p)
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		acc->data = p;
		ls->scan_cap[k] = cap;
	}
	if (row)
		memcpy((char *)acc->data + row * (size_t)it, e->data, row);
	acc->dims[0] = it + 1;
	acc->nbytes = row * (size_t)(it + 1);
	return OM_OK;
}

static om_kind loop_run(om_ctx *c, loop_state *ls)
{
	const om_graph *body = graph_attr(c, "body");
	int64_t trip = INT64_MAX;
	bool cond = true;
	om_kind rc;
	if (c->in[0]) {
		const om_tensor *m = c->in[0];
		if ((m->dtype != OM_INT64 && m->dtype != OM_INT32) || om_tensor_numel(m) != 1)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"M must be one int64");
		trip = m->dtype == OM_INT64 ? *(const int64_t *)m->data : *(const int32_t *)m->data;
	}
	if (c->in[1] && (rc = read_bool(c, c->in[1], &cond)))
		return rc;
	int64_t iv = 0;
	unsigned char cv = 1;
	om_tensor it_t = {.dtype = OM_INT64, .data = &iv, .nbytes = 8};
	om_tensor cond_t = {.dtype = OM_BOOL, .data = &cv, .nbytes = 1};
	const om_tensor **bin = calloc((size_t)ls->n + 2, sizeof *bin);
	if (!bin)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	int64_t it = 0;
	for (rc = OM_OK; !rc && it < trip && cond; it++) {
		iv = it;
		cv = cond;
		bin[0] = &it_t;
		bin[1] = &cond_t;
		for (int32_t j = 0; j < ls->n; j++)
			bin[2 + j] = ls->owned ? &ls->carried[j] : c->in[2 + j];
		rc = om_session_run_graph(c->session, body, bin, ls->n + 2, ls->res,
					  1 + ls->n + ls->k, c->st);
		if (rc)
			break;
		if (c->in[1] && (rc = read_bool(c, &ls->res[0], &cond)))
			break;
		for (int32_t k = 0; !rc && k < ls->k; k++)
			rc = loop_append(c, ls, k, it, &ls->res[1 + ls->n + k]);
		if (ls->owned)
			free_all(ls->carried, ls->n);
		memcpy(ls->carried, ls->res + 1, sizeof *ls->carried * (size_t)ls->n);
		memset(ls->res + 1, 0, sizeof *ls->res * (size_t)ls->n);
		ls->owned = true;
		free_all(ls->res, 1 + ls->n + ls->k);
	}
	free(bin);
	if (rc)
		return rc;
	for (int32_t j = 0; !rc && j < ls->n; j++) {
		const om_tensor *v = ls->owned ? &ls->carried[j] : c->in[2 + j];
		if (!v)
			return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "omitted loop value %d", j);
		rc = put_output(c, j, v);
	}
	for (int32_t k = 0; !rc && k < ls->k; k++) {
		if (it == 0)
			rc = declared_stack(c, body->outputs[1 + ls->n + k], 0, 0, &ls->scan[k]);
		if (!rc)
			rc = put_output(c, ls->n + k, &ls->scan[k]);
	}
	return rc;
}

static om_kind loop_kernel(om_ctx *c)
{
	om_kind rc = need_session(c);
	if (rc || (rc = loop_infer(c)) != OM_NEED_VALUE)
		return rc;
	loop_state ls = {.n = c->nin - 2, .k = c->nout - (c->nin - 2)};
	int32_t all = 1 + ls.n + ls.k;
	ls.carried = calloc((size_t)ls.n + 1, sizeof *ls.carried);
	ls.scan = calloc((size_t)ls.k + 1, sizeof *ls.scan);
	ls.scan_cap = calloc((size_t)ls.k + 1, sizeof *ls.scan_cap);
	ls.res = calloc((size_t)all, sizeof *ls.res);
	if (!ls.carried || !ls.scan || !ls.scan_cap || !ls.res)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	else
		rc = loop_run(c, &ls);
	if (ls.owned)
		free_all(ls.carried, ls.n);
	free_all(ls.scan, ls.k);
	free_all(ls.res, all);
	free(ls.carried), free(ls.scan), free(ls.scan_cap), free(ls.res);
	return rc;
}

/* ---- Scan -------------------------------------------------------------------------------- */

/* What a scan over one batch needs: N states, M scan inputs with axes and directions, K scan
 * outputs with axes and directions, and how many steps to take (<= the scan extent). */
typedef struct scan_job {
	int32_t n, m, k;
	const om_tensor *const *state, *const *input;
	const int64_t *in_dir, *in_axis, *out_dir, *out_axis; /* NULL: 0 for all */
	int64_t len, steps;
	om_tensor *state_out; /* n results (allocated) */
	om_tensor *scan_out;  /* k results (allocated, extent len on the axis, zero padded) */
} scan_job;

static int64_t at(const int64_t *v, int32_t i)
{
	return v ? v[i] : 0;
}

static om_kind scan_core(om_ctx *c, const om_graph *body, scan_job *j)
{
	int32_t nres = j->n + j->k;
	om_tensor *slices = calloc((size_t)j->m + 1, sizeof *slices);
	om_tensor *res = calloc((size_t)nres + 1, sizeof *res);
	const om_tensor **bin = calloc((size_t)(j->n + j->m) + 1, sizeof *bin);
	bool owned = false;
	om_kind rc = OM_OK;
	if (!slices || !res || !bin) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		goto out;
	}
	for (int64_t t = 0; t < j->steps; t++) {
		for (int32_t i = 0; i < j->n; i++)
			bin[i] = owned ? &j->state_out[i] : j->state[i];
		for (int32_t i = 0; i < j->m; i++) {
			om_tensor_free(&slices[i]);
			int64_t idx = at(j->in_dir, i) ? j->steps - 1 - t : t;
			if ((rc = take_slice(c, j->input[i], (int32_t)at(j->in_axis, i), idx,
					     &slices[i])))
				goto out;
			bin[j->n + i] = &slices[i];
		}
		if ((rc = om_session_run_graph(c->session, body, bin, j->n + j->m, res, nres,
					       c->st)))
			goto out;
		if (owned)
			free_all(j->state_out, j->n);
		memcpy(j->state_out, res, sizeof *res * (size_t)j->n);
		memset(res, 0, sizeof *res * (size_t)j->n);
		owned = true;
		for (int32_t k = 0; k < j->k; k++) {
			const om_tensor *e = &res[j->n + k];
			om_tensor *acc = &j->scan_out[k];
			int64_t axis = at(j->out_axis, k);
			if (axis < 0)
				axis += e->rank + 1;
			if (t == 0 && (rc = start_stack(c, e, j->len, axis, acc)))
				goto out;
			om_tensor shape = *acc;
			shape.rank--;
			for (int32_t d = (int32_t)axis; d < shape.rank; d++)
				shape.dims[d] = acc->dims[d + 1];
			if (!same_shape(&shape, e)) {
				rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					      "scan output %d changes shape between iterations", k);
				goto out;
			}
			put_slice(acc, (int32_t)axis, at(j->out_dir, k) ? j->steps - 1 - t : t, e);
		}
		free_all(res, nres);
	}
	for (int32_t k = 0; k < j->k; k++)
		if (!j->scan_out[k].data &&
		    (rc = declared_stack(c, body->outputs[j->n + k], j->len, at(j->out_axis, k),
					 &j->scan_out[k])))
			goto out;
	for (int32_t i = 0; !owned && i < j->n; i++) {
		size_t es;
		if (!j->state[i]) {
			rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "omitted state %d", i);
			goto out;
		}
		if ((rc = movable(c, j->state[i], &es)) ||
		    (rc = om_tensor_alloc(&j->state_out[i], j->state[i]->dtype, j->state[i]->rank,
					  j->state[i]->dims, c->st)))
			goto out;
		memcpy(j->state_out[i].data, j->state[i]->data, j->state_out[i].nbytes);
	}
out:
	free_all(slices, j->m);
	free_all(res, nres);
	free(slices), free(res), free(bin);
	return rc;
}

static om_kind scan_infer(om_ctx *c)
{
	const om_graph *b = graph_attr(c, "body");
	const om_attr *ms = om_node_attr(c->node, "num_scan_inputs");
	int32_t first = c->opset < 9; /* Scan-8: sequence_lens comes first */
	if (!b || !ms || ms->type != OM_ATTR_INT)
		return bad(c, "the body and num_scan_inputs attributes are required");
	if (ms->i < 1 || ms->i > c->nin - first)
		return bad(c, "num_scan_inputs is out of range");
	int32_t m = (int32_t)ms->i, n = c->nin - first - m, k = b->noutputs - n;
	if (b->ninputs != n + m || k < 0 || c->nout != n + k)
		return bad(c, "the body must take N states and M scan elements and return N states "
			      "and K scan elements, the node N + K outputs");
	static const char *const lists[] = {"directions", "scan_input_directions",
					    "scan_input_axes", "scan_output_directions",
					    "scan_output_axes"};
	for (int i = 0; i < 5; i++) {
		int64_t cnt;
		const int64_t *v = om_attr_ints(c->node, lists[i], &cnt);
		int32_t want = i < 3 ? m : k;
		if (v && cnt != want)
			return om_error(c->st, OM_ERR_INVALID_MODEL, c->node,
					"%s has %lld entries, expected %d", lists[i], (long long)cnt,
					want);
		for (int64_t e = 0; v && e < cnt && i != 2 && i != 4; e++)
			if (v[e] != 0 && v[e] != 1)
				return bad(c, "a direction must be 0 or 1");
	}
	return OM_NEED_VALUE;
}

/* Checks the scan inputs' axes and extents; len = the common scan extent. */
static om_kind scan_inputs(om_ctx *c, scan_job *j, int64_t *axes)
{
	j->len = -1;
	for (int32_t i = 0; i < j->m; i++) {
		const om_tensor *t = j->input[i];
		if (!t)
			return bad(c, "scan inputs cannot be omitted");
		size_t es;
		om_kind rc = movable(c, t, &es);
		if (rc)
			return rc;
		int64_t a = at(j->in_axis, i);
		if (a < 0)
			a += t->rank;
		if (a < 0 || a >= t->rank)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"scan input %d has no axis %lld", i, (long long)at(j->in_axis, i));
		axes[i] = a;
		if (j->len >= 0 && t->dims[a] != j->len)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"scan inputs have different sequence lengths");
		j->len = t->dims[a];
	}
	j->in_axis = axes;
	j->steps = j->len;
	return OM_OK;
}

static om_kind scan9_kernel(om_ctx *c)
{
	om_kind rc = need_session(c);
	if (rc || (rc = scan_infer(c)) != OM_NEED_VALUE)
		return rc;
	const om_graph *body = graph_attr(c, "body");
	int64_t cnt, axes[OM_MAX_RANK * 8];
	scan_job j = {.m = (int32_t)om_attr_int(c->node, "num_scan_inputs", 1)};
	j.n = c->nin - j.m;
	j.k = c->nout - j.n;
	if (j.m > (int32_t)(sizeof axes / sizeof axes[0]))
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "too many scan inputs");
	j.state = c->in;
	j.input = c->in + j.n;
	j.in_dir = om_attr_ints(c->node, "scan_input_directions", &cnt);
	j.in_axis = om_attr_ints(c->node, "scan_input_axes", &cnt);
	j.out_dir = om_attr_ints(c->node, "scan_output_directions", &cnt);
	j.out_axis = om_attr_ints(c->node, "scan_output_axes", &cnt);
	j.state_out = calloc((size_t)j.n + 1, sizeof *j.state_out);
	j.scan_out = calloc((size_t)j.k + 1, sizeof *j.scan_out);
	if (!j.state_out || !j.scan_out)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	else if (!(rc = scan_inputs(c, &j, axes)))
		rc = scan_core(c, body, &j);
	for (int32_t i = 0; !rc && i < j.n; i++)
		rc = put_output(c, i, &j.state_out[i]);
	for (int32_t k = 0; !rc && k < j.k; k++)
		rc = put_output(c, j.n + k, &j.scan_out[k]);
	if (j.state_out)
		free_all(j.state_out, j.n);
	if (j.scan_out)
		free_all(j.scan_out, j.k);
	free(j.state_out), free(j.scan_out);
	return rc;
}

/* Scan-8: axis 0 of every input and output is a batch; scan axis 1; optional sequence_lens
 * (the scan outputs of a shorter sequence are zero past its length). Each batch entry is a
 * scan-9 job over slices. */
static om_kind scan8_batch(om_ctx *c, const om_graph *body, scan_job *j, int64_t b,
			   int64_t batch, om_tensor *sl)
{
	const int32_t nin = j->n + j->m;
	const om_tensor **bin = calloc((size_t)nin + 1, sizeof *bin);
	if (!bin)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	om_kind rc = OM_OK;
	for (int32_t i = 0; !rc && i < nin; i++) {
		const om_tensor *t = c->in[1 + i];
		if (!t || t->rank < 1 || t->dims[0] != batch)
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "input %d must have the batch extent %lld", 1 + i,
				      (long long)batch);
		else
			rc = take_slice(c, t, 0, b, &sl[i]);
		bin[i] = &sl[i];
	}
	int64_t axes[64];
	j->state = bin;
	j->input = bin + j->n;
	j->in_axis = NULL;
	int64_t steps = 0;
	if (!rc && (rc = scan_inputs(c, j, axes)) == OM_OK && c->in[0]) {
		const om_tensor *lens = c->in[0];
		if ((lens->dtype != OM_INT64 && lens->dtype != OM_INT32) ||
		    om_tensor_numel(lens) != batch)
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "sequence_lens must hold one length per batch entry");
		else
			steps = lens->dtype == OM_INT64 ? ((const int64_t *)lens->data)[b]
							: ((const int32_t *)lens->data)[b];
		if (!rc && (steps < 0 || steps > j->len))
			rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				      "sequence length %lld is outside [0, %lld]", (long long)steps,
				      (long long)j->len);
		j->steps = steps;
	}
	if (!rc)
		rc = scan_core(c, body, j);
	free(bin);
	return rc;
}

static om_kind scan8_kernel(om_ctx *c)
{
	om_kind rc = need_session(c);
	if (rc || (rc = scan_infer(c)) != OM_NEED_VALUE)
		return rc;
	const om_graph *body = graph_attr(c, "body");
	int64_t cnt;
	scan_job j = {.m = (int32_t)om_attr_int(c->node, "num_scan_inputs", 1)};
	j.n = c->nin - 1 - j.m;
	j.k = c->nout - j.n;
	j.in_dir = om_attr_ints(c->node, "directions", &cnt);
	if (j.m > 64)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "too many scan inputs");
	const om_tensor *first = c->in[1];
	if (!first || first->rank < 1)
		return bad(c, "Scan-8 inputs need a batch axis");
	int64_t batch = first->dims[0];
	int32_t nin = j.n + j.m, nres = j.n + j.k;
	om_tensor *sl = calloc((size_t)nin + 1, sizeof *sl);
	om_tensor *outs = calloc((size_t)nres + 1, sizeof *outs);
	j.state_out = calloc((size_t)j.n + 1, sizeof *j.state_out);
	j.scan_out = calloc((size_t)j.k + 1, sizeof *j.scan_out);
	if (!sl || !outs || !j.state_out || !j.scan_out) {
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		goto out;
	}
	for (int64_t b = 0; b < batch; b++) {
		if ((rc = scan8_batch(c, body, &j, b, batch, sl)))
			goto out;
		for (int32_t r = 0; r < nres; r++) {
			om_tensor *e = r < j.n ? &j.state_out[r] : &j.scan_out[r - j.n];
			if (b == 0 && (rc = start_stack(c, e, batch, 0, &outs[r])))
				goto out;
			om_tensor shape = outs[r];
			shape.rank--;
			memmove(shape.dims, outs[r].dims + 1, sizeof(int64_t) * (size_t)shape.rank);
			if (!same_shape(&shape, e)) {
				rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					      "output %d differs in shape across the batch", r);
				goto out;
			}
			put_slice(&outs[r], 0, b, e);
		}
		free_all(j.state_out, j.n);
		free_all(j.scan_out, j.k);
		free_all(sl, nin);
	}
	for (int32_t r = 0; !rc && r < nres; r++)
		rc = batch ? put_output(c, r, &outs[r])
			   : om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "Scan-8 with batch 0");
out:
	if (sl)
		free_all(sl, nin);
	if (outs)
		free_all(outs, nres);
	if (j.state_out)
		free_all(j.state_out, j.n);
	if (j.scan_out)
		free_all(j.scan_out, j.k);
	free(sl), free(outs), free(j.state_out), free(j.scan_out);
	return rc;
}

static const om_op rows[] = {
	{"If", "", 1, if_infer, if_kernel, OM_OP_CONTROL | OM_OP_EXACT},
	{"Loop", "", 1, loop_infer, loop_kernel, OM_OP_CONTROL | OM_OP_EXACT},
	{"Scan", "", 8, scan_infer, scan8_kernel, OM_OP_CONTROL | OM_OP_EXACT},
	{"Scan", "", 9, scan_infer, scan9_kernel, OM_OP_CONTROL | OM_OP_EXACT},
};

const om_op_table om_ops_control = OM_TABLE(rows);
