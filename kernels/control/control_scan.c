/* control_scan.c — Scan: 8 (batch axis 0, scan axis 1, sequence_lens) and 9+ (axes and
 * directions per scan input and output), each iteration a run of the body subgraph. */
#include <stdlib.h>
#include <string.h>

#include "control.h"

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
		if ((rc = om_ctx_check_time(c)))
			goto out;
		for (int32_t i = 0; i < j->n; i++)
			bin[i] = owned ? &j->state_out[i] : j->state[i];
		for (int32_t i = 0; i < j->m; i++) {
			om_tensor_free(&slices[i]);
			int64_t idx = at(j->in_dir, i) ? j->steps - 1 - t : t;
			if ((rc = om_ctl_take_slice(c, j->input[i], (int32_t)at(j->in_axis, i), idx,
					     &slices[i])))
				goto out;
			bin[j->n + i] = &slices[i];
		}
		if ((rc = om_ctx_run_graph(c, body, bin, j->n + j->m, res, nres)))
			goto out;
		if (owned)
			om_ctl_free_all(j->state_out, j->n);
		memcpy(j->state_out, res, sizeof *res * (size_t)j->n);
		memset(res, 0, sizeof *res * (size_t)j->n);
		owned = true;
		for (int32_t k = 0; k < j->k; k++) {
			const om_tensor *e = &res[j->n + k];
			om_tensor *acc = &j->scan_out[k];
			int64_t axis = at(j->out_axis, k);
			if (axis < 0)
				axis += e->rank + 1;
			if (t == 0 && (rc = om_ctl_start_stack(c, e, j->len, axis, acc)))
				goto out;
			om_tensor shape = *acc;
			shape.rank--;
			for (int32_t d = (int32_t)axis; d < shape.rank; d++)
				shape.dims[d] = acc->dims[d + 1];
			if (!om_ctl_same_shape(&shape, e)) {
				rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					      "scan output %d changes shape between iterations", k);
				goto out;
			}
			om_ctl_put_slice(acc, (int32_t)axis,
					 at(j->out_dir, k) ? j->steps - 1 - t : t, e);
		}
		om_ctl_free_all(res, nres);
	}
	for (int32_t k = 0; k < j->k; k++)
		if (!j->scan_out[k].data &&
		    (rc = om_ctl_declared_stack(c, body->outputs[j->n + k], j->len,
						at(j->out_axis, k), &j->scan_out[k])))
			goto out;
	for (int32_t i = 0; !owned && i < j->n; i++) {
		size_t es;
		if (!j->state[i]) {
			rc = om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "omitted state %d", i);
			goto out;
		}
		if ((rc = om_ctl_movable(c, j->state[i], &es)) ||
		    (rc = om_tensor_alloc(&j->state_out[i], j->state[i]->dtype, j->state[i]->rank,
					  j->state[i]->dims, c->st)))
			goto out;
		memcpy(j->state_out[i].data, j->state[i]->data, j->state_out[i].nbytes);
	}
out:
	om_ctl_free_all(slices, j->m);
	om_ctl_free_all(res, nres);
	free(slices), free(res), free(bin);
	return rc;
}

om_kind om_ctl_scan_infer(om_ctx *c)
{
	const om_graph *b = om_ctl_graph(c, "body");
	const om_attr *ms = om_node_attr(c->node, "num_scan_inputs");
	int32_t first = c->op->param == OM_SCAN_BATCHED; /* sequence_lens comes first */
	if (!b || !ms || ms->type != OM_ATTR_INT)
		return om_ctl_bad(c, "the body and num_scan_inputs attributes are required");
	if (ms->i < 1 || ms->i > c->nin - first)
		return om_ctl_bad(c, "num_scan_inputs is out of range");
	int32_t m = (int32_t)ms->i, n = c->nin - first - m, k = b->noutputs - n;
	if (b->ninputs != n + m || k < 0 || c->nout != n + k)
		return om_ctl_bad(
			c, "the body must take N states and M scan elements and return N states "
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
					"%s has %lld entries, expected %d", lists[i],
					(long long)cnt, want);
		for (int64_t e = 0; v && e < cnt && i != 2 && i != 4; e++)
			if (v[e] != 0 && v[e] != 1)
				return om_ctl_bad(c, "a direction must be 0 or 1");
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
			return om_ctl_bad(c, "scan inputs cannot be omitted");
		size_t es;
		om_kind rc = om_ctl_movable(c, t, &es);
		if (rc)
			return rc;
		int64_t a = at(j->in_axis, i);
		if (a < 0)
			a += t->rank;
		if (a < 0 || a >= t->rank)
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"scan input %d has no axis %lld", i,
					(long long)at(j->in_axis, i));
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

om_kind om_ctl_scan9_kernel(om_ctx *c)
{
	om_kind rc = om_ctl_need_session(c);
	if (rc || (rc = om_ctl_scan_infer(c)) != OM_NEED_VALUE)
		return rc;
	const om_graph *body = om_ctl_graph(c, "body");
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
		rc = om_ctl_put_output(c, i, &j.state_out[i]);
	for (int32_t k = 0; !rc && k < j.k; k++)
		rc = om_ctl_put_output(c, j.n + k, &j.scan_out[k]);
	if (j.state_out)
		om_ctl_free_all(j.state_out, j.n);
	if (j.scan_out)
		om_ctl_free_all(j.scan_out, j.k);
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
			rc = om_ctl_take_slice(c, t, 0, b, &sl[i]);
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

om_kind om_ctl_scan8_kernel(om_ctx *c)
{
	om_kind rc = om_ctl_need_session(c);
	if (rc || (rc = om_ctl_scan_infer(c)) != OM_NEED_VALUE)
		return rc;
	const om_graph *body = om_ctl_graph(c, "body");
	int64_t cnt;
	scan_job j = {.m = (int32_t)om_attr_int(c->node, "num_scan_inputs", 1)};
	j.n = c->nin - 1 - j.m;
	j.k = c->nout - j.n;
	j.in_dir = om_attr_ints(c->node, "directions", &cnt);
	if (j.m > 64)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "too many scan inputs");
	const om_tensor *first = c->in[1];
	if (!first || first->rank < 1)
		return om_ctl_bad(c, "Scan-8 inputs need a batch axis");
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
			if (b == 0 && (rc = om_ctl_start_stack(c, e, batch, 0, &outs[r])))
				goto out;
			om_tensor shape = outs[r];
			shape.rank--;
			memmove(shape.dims, outs[r].dims + 1, sizeof(int64_t) * (size_t)shape.rank);
			if (!om_ctl_same_shape(&shape, e)) {
				rc = om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					      "output %d differs in shape across the batch", r);
				goto out;
			}
			om_ctl_put_slice(&outs[r], 0, b, e);
		}
		om_ctl_free_all(j.state_out, j.n);
		om_ctl_free_all(j.scan_out, j.k);
		om_ctl_free_all(sl, nin);
	}
	for (int32_t r = 0; !rc && r < nres; r++)
		rc = batch ? om_ctl_put_output(c, r, &outs[r])
			   : om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "Scan-8 with batch 0");
out:
	if (sl)
		om_ctl_free_all(sl, nin);
	if (outs)
		om_ctl_free_all(outs, nres);
	if (j.state_out)
		om_ctl_free_all(j.state_out, j.n);
	if (j.scan_out)
		om_ctl_free_all(j.scan_out, j.k);
	free(sl), free(outs), free(j.state_out), free(j.scan_out);
	return rc;
}
