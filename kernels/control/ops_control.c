/* ops_control.c — If, Loop, Scan: subgraphs run through the session (runtime/session.h), outer
 * values resolve to the enclosing run's values. Output shapes are known only once the bodies
 * ran, so the kernels place their outputs themselves (om_ctx_output). Sequences and
 * optionals (ir/value.h) pass through If and Loop as deep copies; Scan (control_scan.c) moves
 * tensors only. */
#include <stdlib.h>
#include <string.h>

#include "control.h"

/* ---- If ---------------------------------------------------------------------------------- */

static om_kind if_check(om_ctx *c)
{
	const om_graph *t = om_ctl_graph(c, "then_branch"), *e = om_ctl_graph(c, "else_branch");
	if (!t || !e)
		return om_ctl_bad(c, "then_branch and else_branch are required");
	if (c->nin < 1 || !c->in[0])
		return om_ctl_bad(c, "the condition input is required");
	if (t->noutputs != c->nout || e->noutputs != c->nout)
		return om_ctl_bad(c, "the branches must have as many outputs as the node");
	if (t->ninputs || e->ninputs)
		return om_ctl_bad(c, "the branches take no inputs");
	return OM_NEED_VALUE; /* the branch taken decides the shapes */
}

/* What both branches declare for output i: the element type, the rank and the dims they
 * agree on (a partial result, op.h). */
static void if_common_type(om_ctx *c, const om_graph *t, const om_graph *e, int32_t i)
{
	const om_type *a = &t->outputs[i]->type, *b = &e->outputs[i]->type;
	om_tensor *y = c->out[i];
	if (!y || a->kind != OM_TYPE_TENSOR || b->kind != OM_TYPE_TENSOR || a->elem != b->elem)
		return;
	y->dtype = a->elem;
	if (a->rank != b->rank || a->rank < 0 || a->rank > OM_MAX_RANK)
		return;
	y->rank = a->rank;
	for (int32_t d = 0; d < a->rank; d++)
		y->dims[d] = om_dim_known(a->dims[d]) && a->dims[d].value == b->dims[d].value
				     ? a->dims[d].value
				     : -1;
}

static om_kind if_infer(om_ctx *c)
{
	om_kind rc = if_check(c);
	if (rc != OM_NEED_VALUE)
		return rc;
	const om_graph *t = om_ctl_graph(c, "then_branch"), *e = om_ctl_graph(c, "else_branch");
	for (int32_t i = 0; i < c->nout; i++)
		if_common_type(c, t, e, i);
	return OM_NEED_VALUE;
}

static om_kind if_kernel(om_ctx *c)
{
	om_kind rc = om_ctl_need_session(c);
	bool cond = false;
	if (rc || (rc = if_check(c)) != OM_NEED_VALUE ||
	    (rc = om_ctl_read_bool(c, c->in[0], &cond)))
		return rc;
	const om_graph *g = om_ctl_graph(c, cond ? "then_branch" : "else_branch");
	om_tensor *res = calloc((size_t)c->nout + 1, sizeof *res);
	if (!res)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	rc = om_ctx_run_graph(c, g, NULL, 0, res, c->nout);
	for (int32_t i = 0; !rc && i < c->nout; i++)
		rc = om_ctl_put_output(c, i, &res[i]);
	om_ctl_free_all(res, c->nout);
	free(res);
	return rc;
}

/* ---- Loop -------------------------------------------------------------------------------- */

/* What the body declares for loop-carried output j (a partial result, op.h): the element
 * type when it is the initial value's; the rank when the body keeps the initial value's
 * rank, and each dim the body gives as that number and the initial value has (it then holds
 * after any number of iterations, none included). */
static void loop_carried_type(om_ctx *c, const om_graph *b, int32_t j)
{
	const om_type *t = &b->outputs[1 + j]->type;
	const om_tensor *x = c->in[2 + j];
	om_tensor *y = c->out[j];
	if (!y || !x || t->kind != OM_TYPE_TENSOR || t->elem != x->dtype || !x->dtype)
		return;
	y->dtype = t->elem;
	if (t->rank != x->rank || t->rank < 0 || t->rank > OM_MAX_RANK)
		return;
	y->rank = t->rank;
	for (int32_t d = 0; d < t->rank; d++)
		y->dims[d] = om_dim_known(t->dims[d]) && t->dims[d].value == x->dims[d]
				     ? x->dims[d]
				     : -1;
}

/* Scan output k: the body's element type, and one more dim than the body's value (the
 * iterations, unknown) when its rank is known, with the dims it gives as numbers. */
static void loop_scan_type(om_ctx *c, const om_graph *b, int32_t n, int32_t k)
{
	const om_type *t = &b->outputs[1 + n + k]->type;
	om_tensor *y = c->out[n + k];
	if (!y || t->kind != OM_TYPE_TENSOR || !t->elem)
		return;
	y->dtype = t->elem;
	if (t->rank < 0 || t->rank + 1 > OM_MAX_RANK)
		return;
	y->rank = t->rank + 1;
	y->dims[0] = -1;
	for (int32_t d = 0; d < t->rank; d++)
		y->dims[d + 1] = om_dim_known(t->dims[d]) ? t->dims[d].value : -1;
}

static om_kind loop_check(om_ctx *c)
{
	const om_graph *b = om_ctl_graph(c, "body");
	if (!b)
		return om_ctl_bad(c, "the body attribute is required");
	if (c->nin < 2)
		return om_ctl_bad(c, "Loop has inputs M, cond, then the loop-carried values");
	int32_t n = c->nin - 2;
	if (b->ninputs != n + 2 || b->noutputs < n + 1 || c->nout != b->noutputs - 1)
		return om_ctl_bad(
			c, "the body must take (iteration, cond, N values) and return (cond, N "
			   "values, K scan outputs), the node N + K outputs");
	/* the body's plan is typed by its declarations: the iteration and cond it is fed are
	 * int64 and bool (a fuzzed body declaring cond uint64 made a run's Identity view 8 bytes
	 * of its 1: an internal error) */
	for (int32_t i = 0; i < 2; i++) {
		const om_type *t = &b->inputs[i]->type;
		if (t->kind == OM_TYPE_TENSOR && t->elem && t->elem != (i ? OM_BOOL : OM_INT64))
			return om_ctl_bad(c, i ? "the body's cond input must be a bool"
					       : "the body's iteration input must be an int64");
	}
	return OM_NEED_VALUE;
}

static om_kind loop_infer(om_ctx *c)
{
	om_kind rc = loop_check(c);
	if (rc != OM_NEED_VALUE)
		return rc;
	const om_graph *b = om_ctl_graph(c, "body");
	int32_t n = c->nin - 2;
	for (int32_t j = 0; j < n; j++)
		loop_carried_type(c, b, j);
	for (int32_t k = 0; k < c->nout - n; k++)
		loop_scan_type(c, b, n, k);
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
		om_kind rc = om_ctl_start_stack(c, e, 4, 0, acc);
		if (rc)
			return rc;
		ls->scan_cap[k] = 4;
	} else {
		om_tensor shape = *acc;
		shape.rank--;
		memmove(shape.dims, acc->dims + 1, sizeof(int64_t) * (size_t)shape.rank);
		if (!om_ctl_same_shape(&shape, e))
			return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
					"scan output %d changes shape between iterations", k);
	}
	size_t row = om_tensor_bytes_for(e->dtype, e->rank, e->dims);
	if (it >= ls->scan_cap[k]) {
		int64_t cap = 2 * ls->scan_cap[k];
		if (cap > INT64_MAX / 2 || (row && (uint64_t)cap > SIZE_MAX / row))
			return om_error(c->st, OM_ERR_NOMEM, c->node, "scan output %d too large",
					k);
		om_kind rc = om_ctx_reserve(c, row * (size_t)cap, "a scan output");
		if (rc)
			return rc;
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
	const om_graph *body = om_ctl_graph(c, "body");
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
	if (c->in[1] && (rc = om_ctl_read_bool(c, c->in[1], &cond)))
		return rc;
	int64_t iv = 0;
	unsigned char cv = 1;
	om_tensor it_t = {.dtype = OM_INT64, .data = &iv, .nbytes = 8};
	om_tensor cond_t = {.dtype = OM_BOOL, .data = &cv, .nbytes = 1};
	const om_tensor **bin = calloc((size_t)ls->n + 2, sizeof *bin);
	if (!bin)
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	int64_t it = 0;
	for (rc = OM_OK; !rc && it < trip && cond && !(rc = om_ctx_check_time(c)); it++) {
		iv = it;
		cv = cond;
		bin[0] = &it_t;
		bin[1] = &cond_t;
		for (int32_t j = 0; j < ls->n; j++)
			bin[2 + j] = ls->owned ? &ls->carried[j] : c->in[2 + j];
		rc = om_ctx_run_graph(c, body, bin, ls->n + 2, ls->res, 1 + ls->n + ls->k);
		if (rc)
			break;
		if (c->in[1] && (rc = om_ctl_read_bool(c, &ls->res[0], &cond)))
			break;
		for (int32_t k = 0; !rc && k < ls->k; k++)
			rc = loop_append(c, ls, k, it, &ls->res[1 + ls->n + k]);
		if (ls->owned)
			om_ctl_free_all(ls->carried, ls->n);
		memcpy(ls->carried, ls->res + 1, sizeof *ls->carried * (size_t)ls->n);
		memset(ls->res + 1, 0, sizeof *ls->res * (size_t)ls->n);
		ls->owned = true;
		om_ctl_free_all(ls->res, 1 + ls->n + ls->k);
	}
	free(bin);
	if (rc)
		return rc;
	for (int32_t j = 0; !rc && j < ls->n; j++) {
		const om_tensor *v = ls->owned ? &ls->carried[j] : c->in[2 + j];
		if (!v)
			return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "omitted loop value %d",
					j);
		rc = om_ctl_put_output(c, j, v);
	}
	for (int32_t k = 0; !rc && k < ls->k; k++) {
		if (it == 0)
			rc = om_ctl_declared_stack(c, body->outputs[1 + ls->n + k], 0, 0,
						   &ls->scan[k]);
		if (!rc)
			rc = om_ctl_put_output(c, ls->n + k, &ls->scan[k]);
	}
	return rc;
}

static om_kind loop_kernel(om_ctx *c)
{
	om_kind rc = om_ctl_need_session(c);
	if (rc || (rc = loop_check(c)) != OM_NEED_VALUE)
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
		om_ctl_free_all(ls.carried, ls.n);
	om_ctl_free_all(ls.scan, ls.k);
	om_ctl_free_all(ls.res, all);
	free(ls.carried), free(ls.scan), free(ls.scan_cap), free(ls.res);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_If_1_v16[] = {{"else_branch", OM_ATTR_GRAPH, 1},
	{"then_branch", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* If-16: cond -> outputs... */
static const om_sig sig_If_1_v16 = {16, 1, 1, 1, OM_MANY, 0x0, 0xffffffffffffffff, 0x0,
	0xffffffffffffffff, 0x0, 0xffffffffffffffff, attrs_If_1_v16, NULL};
static const om_sig_attr attrs_If_1[] = {{"else_branch", OM_ATTR_GRAPH, 1},
	{"then_branch", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* If-1: cond -> outputs... */
static const om_sig sig_If_1 = {1, 1, 1, 1, OM_MANY, 0x0, 0xffffffffffffffff, 0x0,
	0xffffffffffffffff, 0x0, 0x0, attrs_If_1, &sig_If_1_v16};
static const om_sig_attr attrs_Loop_1_v16[] = {{"body", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* Loop-16: [M] [cond] v_initial... -> v_final_and_scan_outputs... */
static const om_sig sig_Loop_1_v16 = {16, 2, OM_MANY, 1, OM_MANY, 0x3, 0xffffffffffffffff,
	0xfffffffffffffffc, 0xffffffffffffffff, 0xfffffffffffffffc, 0xffffffffffffffff,
	attrs_Loop_1_v16, NULL};
static const om_sig_attr attrs_Loop_1_v11[] = {{"body", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* Loop-11: [M] [cond] v_initial... -> v_final_and_scan_outputs... */
static const om_sig sig_Loop_1_v11 = {11, 2, OM_MANY, 1, OM_MANY, 0x3, 0xffffffffffffffff,
	0xfffffffffffffffc, 0xffffffffffffffff, 0x0, 0x0, attrs_Loop_1_v11, &sig_Loop_1_v16};
static const om_sig_attr attrs_Loop_1[] = {{"body", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* Loop-1: [M] [cond] v_initial... -> v_final_and_scan_outputs... */
static const om_sig sig_Loop_1 = {1, 3, OM_MANY, 1, OM_MANY, 0x3, 0xffffffffffffffff,
	0xfffffffffffffffc, 0xffffffffffffffff, 0x0, 0x0, attrs_Loop_1, &sig_Loop_1_v11};
static const om_sig_attr attrs_Scan_8[] = {{"body", OM_ATTR_GRAPH, 1},
	{"directions", OM_ATTR_INTS, 0}, {"num_scan_inputs", OM_ATTR_INT, 1}, {NULL, 0, 0}};
/* Scan-8: [sequence_lens] initial_state_and_scan_inputs... -> final_state_and_scan_outputs... */
static const om_sig sig_Scan_8 = {8, 2, OM_MANY, 1, OM_MANY, 0x1, 0xffffffffffffffff,
	0xfffffffffffffffe, 0xffffffffffffffff, 0x0, 0x0, attrs_Scan_8, NULL};
static const om_sig_attr attrs_Scan_9_v16[] = {{"body", OM_ATTR_GRAPH, 1},
	{"num_scan_inputs", OM_ATTR_INT, 1}, {"scan_input_axes", OM_ATTR_INTS, 0},
	{"scan_input_directions", OM_ATTR_INTS, 0}, {"scan_output_axes", OM_ATTR_INTS, 0},
	{"scan_output_directions", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Scan-16: initial_state_and_scan_inputs... -> final_state_and_scan_outputs... */
static const om_sig sig_Scan_9_v16 = {16, 1, OM_MANY, 1, OM_MANY, 0x0, 0xffffffffffffffff,
	0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff, 0xffffffffffffffff,
	attrs_Scan_9_v16, NULL};
static const om_sig_attr attrs_Scan_9[] = {{"body", OM_ATTR_GRAPH, 1},
	{"num_scan_inputs", OM_ATTR_INT, 1}, {"scan_input_axes", OM_ATTR_INTS, 0},
	{"scan_input_directions", OM_ATTR_INTS, 0}, {"scan_output_axes", OM_ATTR_INTS, 0},
	{"scan_output_directions", OM_ATTR_INTS, 0}, {NULL, 0, 0}};
/* Scan-9: initial_state_and_scan_inputs... -> final_state_and_scan_outputs... */
static const om_sig sig_Scan_9 = {9, 1, OM_MANY, 1, OM_MANY, 0x0, 0xffffffffffffffff,
	0xffffffffffffffff, 0xffffffffffffffff, 0x0, 0x0, attrs_Scan_9, &sig_Scan_9_v16};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"If", "", 1, if_infer, if_kernel, OM_OP_CONTROL | OM_OP_EXACT, &sig_If_1, OM_OPC_IF, NULL,
	 0, NULL},
	{"Loop", "", 1, loop_infer, loop_kernel, OM_OP_CONTROL | OM_OP_EXACT, &sig_Loop_1,
	 OM_OPC_LOOP, NULL, 0, NULL},
	{"Scan", "", 8, om_ctl_scan_infer, om_ctl_scan8_kernel, OM_OP_CONTROL | OM_OP_EXACT,
	 &sig_Scan_8, OM_OPC_NONE, NULL, OM_SCAN_BATCHED, NULL},
	{"Scan", "", 9, om_ctl_scan_infer, om_ctl_scan9_kernel, OM_OP_CONTROL | OM_OP_EXACT,
	 &sig_Scan_9, OM_OPC_NONE, NULL, OM_SCAN_PLAIN, NULL},
};

const om_op_table om_ops_control = OM_TABLE(rows);
