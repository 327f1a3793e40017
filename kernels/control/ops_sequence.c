/* ops_sequence.c — SequenceEmpty SequenceConstruct SequenceInsert SequenceErase SequenceAt
 * SequenceLength SplitToSequence ConcatFromSequence SequenceMap on om_seq values (seq.h).
 * The rows are OM_OP_CONTROL: outputs are placed by the kernels (a new box the run owns, an
 * item aliased as a view, or a tensor from the pool); they are never folded at plan time. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "value.h"
#include "shape_util.h"

#define ROW (OM_OP_CONTROL | OM_OP_EXACT)

static om_kind bad_input(om_ctx *c, const char *msg)
{
	return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "%s", msg);
}

/* Input i must be a sequence: its box. */
static om_kind need_seq(om_ctx *c, int32_t i, om_seq **out)
{
	if (i >= c->nin || !c->in[i] || c->in[i]->dtype != OM_SEQ_DTYPE)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"input %d must be a sequence", i);
	*out = om_box(c->in[i]);
	return OM_OK;
}

static om_kind need_tensor(om_ctx *c, int32_t i)
{
	if (i >= c->nin || !c->in[i] || om_is_box(c->in[i]))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node, "input %d must be a tensor",
				i);
	return OM_OK;
}

/* A position input: a scalar integer in [-n, n - 1], or [-n, n] when `end` (insert). */
static om_kind read_pos(om_ctx *c, int32_t i, int64_t n, bool end, int64_t dflt, int64_t *pos)
{
	*pos = dflt;
	if (i >= c->nin || !c->in[i])
		return OM_OK;
	const om_tensor *t = c->in[i];
	if (om_is_box(t) || (t->dtype != OM_INT64 && t->dtype != OM_INT32) ||
	    om_tensor_numel(t) != 1)
		return bad_input(c, "position must be one int32 or int64");
	int64_t p = t->dtype == OM_INT64 ? *(const int64_t *)t->data : *(const int32_t *)t->data;
	if (p < -n || p > (end ? n : n - 1))
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"position %lld is outside the sequence of %lld", (long long)p,
				(long long)n);
	*pos = p < 0 ? p + n : p;
	return OM_OK;
}

/* Output 0 = box v (the run owns it); v is freed on error. */
static om_kind put_box(om_ctx *c, om_tensor *v)
{
	om_kind rc = om_ctx_output_value(c, 0, v);
	if (rc)
		om_value_free(v);
	return rc;
}

/* Output 0 = a copy of the sequence in input 0, to be changed. */
static om_kind copy_seq(om_ctx *c, om_tensor *v)
{
	om_seq *s = NULL;
	om_kind rc = need_seq(c, 0, &s);
	return rc ? rc : om_value_copy(v, c->in[0], c->st);
}

/* Items of one sequence share an element type. */
static om_kind check_elem(om_ctx *c, const om_seq *s, const om_tensor *t)
{
	int32_t want = s->n ? s->items[0].dtype : s->elem;
	if (want && t->dtype != want)
		return om_error(c->st, OM_ERR_INVALID_INPUT, c->node,
				"element type %s cannot join a sequence of %s",
				om_dtype_name(t->dtype), om_dtype_name(want));
	return OM_OK;
}

static om_kind seq_infer(om_ctx *c)
{
	if (c->nout < 1)
		return om_ctl_bad(c, "the output is required");
	return OM_NEED_VALUE; /* values of their own kind: shaped by the kernels */
}

/* ---- SequenceEmpty, SequenceConstruct ---------------------------------------------------- */

static om_kind empty_kernel(om_ctx *c)
{
	om_tensor v;
	int64_t dt = om_attr_int(c->node, "dtype", OM_FLOAT);
	if (!om_dtype_bits((int32_t)dt) || dt != (int32_t)dt)
		return om_ctl_bad(c, "dtype is not a tensor element type");
	om_kind rc = om_box_new(OM_SEQ_DTYPE, (int32_t)dt, &v, c->st);
	return rc ? rc : put_box(c, &v);
}

static om_kind construct_kernel(om_ctx *c)
{
	if (c->nin < 1)
		return om_ctl_bad(c, "SequenceConstruct needs at least one input");
	om_tensor v;
	om_kind rc = om_box_new(OM_SEQ_DTYPE, OM_UNDEFINED, &v, c->st);
	for (int32_t i = 0; !rc && i < c->nin; i++)
		if (!(rc = need_tensor(c, i)) && !(rc = check_elem(c, om_box(&v), c->in[i])))
			rc = om_box_insert(om_box(&v), i, c->in[i], c->st);
	if (rc) {
		om_value_free(&v);
		return rc;
	}
	om_box(&v)->elem = c->in[0]->dtype;
	return put_box(c, &v);
}

/* ---- SequenceInsert, SequenceErase, SequenceAt, SequenceLength --------------------------- */

static om_kind insert_kernel(om_ctx *c)
{
	om_seq *s = NULL;
	int64_t pos;
	om_kind rc = need_seq(c, 0, &s);
	if (rc || (rc = need_tensor(c, 1)) || (rc = check_elem(c, s, c->in[1])) ||
	    (rc = read_pos(c, 2, s->n, true, s->n, &pos)))
		return rc;
	om_tensor v;
	if ((rc = copy_seq(c, &v)))
		return rc;
	if ((rc = om_box_insert(om_box(&v), pos, c->in[1], c->st))) {
		om_value_free(&v);
		return rc;
	}
	return put_box(c, &v);
}

static om_kind erase_kernel(om_ctx *c)
{
	om_seq *s = NULL;
	int64_t pos;
	om_kind rc = need_seq(c, 0, &s);
	if (rc)
		return rc;
	if (!s->n)
		return bad_input(c, "the sequence is empty: nothing to erase");
	if ((rc = read_pos(c, 1, s->n, false, s->n - 1, &pos)))
		return rc;
	om_tensor v;
	if ((rc = copy_seq(c, &v)))
		return rc;
	om_box_erase(om_box(&v), pos);
	return put_box(c, &v);
}

/* the item is a view: it lives in the input's box, which lives as long as the frame */
static om_kind at_kernel(om_ctx *c)
{
	om_seq *s = NULL;
	int64_t pos;
	om_kind rc = need_seq(c, 0, &s);
	if (rc || (rc = need_tensor(c, 1)) || (rc = read_pos(c, 1, s->n, false, 0, &pos)))
		return rc;
	return om_ctx_output_alias(c, 0, &s->items[pos], 0);
}

static om_kind length_kernel(om_ctx *c)
{
	om_seq *s = NULL;
	om_kind rc = need_seq(c, 0, &s);
	if (rc || (rc = om_ctx_output(c, 0, OM_INT64, 0, NULL)))
		return rc;
	*(int64_t *)c->out[0]->data = s->n;
	return OM_OK;
}

/* ---- SplitToSequence, ConcatFromSequence ------------------------------------------------- */

/* Bytes per element of tensors these ops cut or join (strings move as om_str). */
static om_kind elem_size(om_ctx *c, int32_t dtype, size_t *es)
{
	*es = om_dtype_size(dtype);
	if (!*es)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "%s of %s tensors",
				c->node->op, om_dtype_name(dtype));
	return OM_OK;
}

/* Strings copied by pointer become the item's own (om_tensor_free frees them). */
static om_kind own_strings(om_ctx *c, om_tensor *t)
{
	if (t->dtype != OM_STRING)
		return OM_OK;
	om_str *s = t->data;
	int64_t n = om_tensor_numel(t);
	for (int64_t i = 0; i < n; i++) {
		char *p = malloc((size_t)s[i].len + 1);
		if (!p) {
			for (int64_t j = i; j < n; j++)
				s[j] = (om_str){0};
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		}
		if (s[i].len)
			memcpy(p, s[i].ptr, (size_t)s[i].len);
		p[s[i].len] = 0;
		s[i].ptr = p;
	}
	return OM_OK;
}

/* outer: product of extents before axis; inner: bytes of one step along it */
static void axis_split(const om_tensor *t, int32_t axis, size_t es, int64_t *outer, size_t *inner)
{
	*outer = 1;
	*inner = es;
	for (int32_t k = 0; k < t->rank; k++) {
		if (k < axis)
			*outer *= t->dims[k];
		else if (k > axis)
			*inner *= (size_t)t->dims[k];
	}
}

/* Sizes of the chunks: the split input (scalar: equal chunks, the last smaller; 1-D: the
 * sizes, summing to the extent) or chunks of 1. */
static om_kind split_sizes(om_ctx *c, int64_t len, int64_t **sizes, int64_t *n)
{
	const om_tensor *sp = c->nin > 1 ? c->in[1] : NULL;
	int64_t cnt = 0, step = 1, *sz;
	if (sp && (om_is_box(sp) || (sp->dtype != OM_INT64 && sp->dtype != OM_INT32) ||
		   sp->rank > 1))
		return bad_input(c, "split must be an int32 or int64 scalar or 1-D tensor");
	if (sp && sp->rank == 1) {
		cnt = sp->dims[0];
		if (!(sz = malloc(sizeof *sz * (size_t)(cnt + 1))))
			return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
		int64_t sum = 0, got;
		om_kind rc = om_read_ints(c, sp, sz, cnt, &got);
		for (int64_t i = 0; !rc && i < cnt; i++) {
			if (sz[i] < 0 || sz[i] > len - sum)
				rc = bad_input(c, "split sizes must be >= 0 and sum to the extent");
			else
				sum += sz[i];
		}
		if (!rc && sum != len)
			rc = bad_input(c, "split sizes must sum to the extent of the axis");
		if (rc) {
			free(sz);
			return rc == OM_NEED_VALUE ? bad_input(c, "split is missing") : rc;
		}
		*sizes = sz;
		*n = cnt;
		return OM_OK;
	}
	if (sp) {
		step = sp->dtype == OM_INT64 ? *(const int64_t *)sp->data
					     : *(const int32_t *)sp->data;
		if (step <= 0)
			return bad_input(c, "a scalar split must be positive");
	}
	cnt = len / step + (len % step != 0);
	if (!(sz = malloc(sizeof *sz * (size_t)(cnt + 1))))
		return om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	for (int64_t i = 0; i < cnt; i++)
		sz[i] = i + 1 < cnt ? step : len - step * i;
	*sizes = sz;
	*n = cnt;
	return OM_OK;
}

static om_kind split_kernel(om_ctx *c)
{
	om_kind rc = need_tensor(c, 0);
	const om_tensor *x = c->in[0];
	int32_t axis;
	size_t es;
	if (rc || (rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), x->rank, &axis)) ||
	    (rc = elem_size(c, x->dtype, &es)))
		return rc;
	const bool squeeze = !(c->nin > 1 && c->in[1]) && !om_attr_int(c->node, "keepdims", 1);
	int64_t *sizes = NULL, n = 0, outer;
	size_t inner;
	if ((rc = split_sizes(c, x->dims[axis], &sizes, &n)))
		return rc;
	axis_split(x, axis, es, &outer, &inner);
	om_tensor v;
	rc = om_box_new(OM_SEQ_DTYPE, x->dtype, &v, c->st);
	for (int64_t i = 0, start = 0; !rc && i < n; start += sizes[i++]) {
		om_tensor item;
		int64_t dims[OM_MAX_RANK];
		memcpy(dims, x->dims, sizeof dims);
		dims[axis] = sizes[i];
		if ((rc = om_tensor_alloc(&item, x->dtype, x->rank, dims, c->st)))
			break;
		const size_t run = inner * (size_t)sizes[i];
		for (int64_t o = 0; o < outer && run; o++) {
			const size_t at = (size_t)(o * x->dims[axis] + start) * inner;
			memcpy((char *)item.data + (size_t)o * run, (const char *)x->data + at, run);
		}
		if (squeeze) { /* keepdims 0: chunks of 1 lose the axis */
			memmove(item.dims + axis, item.dims + axis + 1,
				sizeof *item.dims * (size_t)(item.rank - axis - 1));
			item.rank--;
		}
		if (!(rc = own_strings(c, &item)))
			rc = om_box_adopt(om_box(&v), i, &item, c->st);
		if (rc)
			om_tensor_free(&item);
	}
	free(sizes);
	if (rc) {
		om_value_free(&v);
		return rc;
	}
	return put_box(c, &v);
}

static om_kind concat_kernel(om_ctx *c)
{
	om_seq *s = NULL;
	om_kind rc = need_seq(c, 0, &s);
	if (rc)
		return rc;
	if (!s->n)
		return bad_input(c, "ConcatFromSequence of an empty sequence");
	const om_tensor *first = &s->items[0];
	const bool stack = om_attr_int(c->node, "new_axis", 0) != 0;
	int32_t axis;
	size_t es;
	if (om_is_box(first))
		return bad_input(c, "the items must be tensors");
	if ((rc = om_norm_axis(c, om_attr_int(c->node, "axis", 0), first->rank + stack, &axis)) ||
	    (rc = elem_size(c, first->dtype, &es)))
		return rc;
	if (first->rank + stack > OM_MAX_RANK)
		return om_error(c->st, OM_ERR_UNSUPPORTED, c->node, "rank above %d", OM_MAX_RANK);
	int64_t total = 0;
	for (int64_t i = 0; i < s->n; i++) {
		const om_tensor *t = &s->items[i];
		if (om_is_box(t) || t->dtype != first->dtype || t->rank != first->rank)
			return bad_input(c, "the items differ in element type or rank");
		for (int32_t k = 0; k < t->rank; k++)
			if ((stack || k != axis) && t->dims[k] != first->dims[k])
				return bad_input(c, "the items differ in shape off the axis");
		const int64_t len = stack ? 1 : t->dims[axis];
		if (total > INT64_MAX - len)
			return bad_input(c, "the concatenated extent overflows");
		total += len;
	}
	int64_t dims[OM_MAX_RANK];
	for (int32_t k = 0, j = 0; k < first->rank + stack; k++)
		dims[k] = stack && k == axis ? total : first->dims[j++];
	if (!stack)
		dims[axis] = total;
	if ((rc = om_ctx_output(c, 0, first->dtype, first->rank + stack, dims)))
		return rc;
	om_tensor *out = c->out[0];
	/* an item viewed with the output's rank: a slab of `len` along the axis */
	int64_t outer = 1, pos = 0;
	size_t inner = es;
	for (int32_t k = 0; k < out->rank; k++) {
		if (k < axis)
			outer *= out->dims[k];
		else if (k > axis)
			inner *= (size_t)out->dims[k];
	}
	for (int64_t i = 0; i < s->n; i++) {
		const om_tensor *t = &s->items[i];
		const int64_t len = stack ? 1 : t->dims[axis];
		const size_t run = inner * (size_t)len;
		for (int64_t o = 0; o < outer && run; o++)
			memcpy((char *)out->data + ((size_t)(o * total + pos)) * inner,
			       (const char *)t->data + (size_t)o * run, run);
		pos += len;
	}
	return OM_OK;
}

/* ---- SequenceMap ------------------------------------------------------------------------- */

static om_kind map_infer(om_ctx *c)
{
	const om_graph *b = om_ctl_graph(c, "body");
	if (!b)
		return om_ctl_bad(c, "the body attribute is required");
	if (c->nin < 1 || b->ninputs != c->nin || b->noutputs != c->nout || c->nout < 1)
		return om_ctl_bad(c, "the body takes one value per input and makes one per output");
	return OM_NEED_VALUE;
}

static om_kind map_run(om_ctx *c, const om_graph *body, int64_t n, om_tensor *outs,
		       const om_tensor **bin, om_tensor *res)
{
	om_kind rc = OM_OK;
	for (int32_t j = 0; !rc && j < c->nout; j++) {
		const om_type *ty = &body->outputs[j]->type;
		rc = om_box_new(OM_SEQ_DTYPE, ty->kind == OM_TYPE_TENSOR ? ty->elem : 0, &outs[j],
				c->st);
	}
	for (int64_t it = 0; !rc && it < n; it++) {
		for (int32_t i = 0; i < c->nin; i++) {
			const om_tensor *t = c->in[i];
			bin[i] = t && t->dtype == OM_SEQ_DTYPE ? &om_box(t)->items[it] : t;
		}
		rc = om_ctx_run_graph(c, body, bin, c->nin, res, c->nout);
		for (int32_t j = 0; !rc && j < c->nout; j++)
			rc = om_box_adopt(om_box(&outs[j]), it, &res[j], c->st);
		om_ctl_free_all(res, c->nout);
	}
	return rc;
}

static om_kind map_kernel(om_ctx *c)
{
	om_kind rc = om_ctl_need_session(c);
	om_seq *s = NULL;
	if (rc || (rc = map_infer(c)) != OM_NEED_VALUE || (rc = need_seq(c, 0, &s)))
		return rc;
	const int64_t n = s->n;
	for (int32_t i = 1; i < c->nin; i++)
		if (c->in[i] && c->in[i]->dtype == OM_SEQ_DTYPE && om_box(c->in[i])->n != n)
			return bad_input(c, "the input sequences differ in length");
	om_tensor *outs = calloc((size_t)c->nout, sizeof *outs);
	om_tensor *res = calloc((size_t)c->nout, sizeof *res);
	const om_tensor **bin = calloc((size_t)c->nin, sizeof *bin);
	if (!outs || !res || !bin)
		rc = om_error(c->st, OM_ERR_NOMEM, c->node, "out of memory");
	else
		rc = map_run(c, om_ctl_graph(c, "body"), n, outs, bin, res);
	for (int32_t j = 0; !rc && j < c->nout; j++)
		if (c->out[j])
			rc = om_ctx_output_value(c, j, &outs[j]);
	om_ctl_free_all(outs, c->nout);
	free(outs), free(res), free((void *)bin);
	return rc;
}

/* ---- signatures (scripts/gen_signatures.py; ONNX docs/Changelog.md) ---- */

static const om_sig_attr attrs_SequenceEmpty_11[] = {{"dtype", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* SequenceEmpty-11: - -> output */
static const om_sig sig_SequenceEmpty_11 = {11, 0, 0, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0,
	attrs_SequenceEmpty_11, NULL};
/* SequenceConstruct-11: inputs... -> output_sequence */
static const om_sig sig_SequenceConstruct_11 = {11, 1, OM_MANY, 1, 1, 0x0, 0x0, 0xffffffffffffffff,
	0x0, 0x0, 0x0, NULL, NULL};
/* SequenceInsert-11: input_sequence tensor [position] -> output_sequence */
static const om_sig sig_SequenceInsert_11 = {11, 2, 3, 1, 1, 0x4, 0x0, 0x2, 0x0, 0x0, 0x0, NULL,
	NULL};
/* SequenceErase-11: input_sequence [position] -> output_sequence */
static const om_sig sig_SequenceErase_11 = {11, 1, 2, 1, 1, 0x2, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};
/* SequenceAt-11: input_sequence position -> tensor */
static const om_sig sig_SequenceAt_11 = {11, 2, 2, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0, NULL, NULL};
/* SequenceLength-11: input_sequence -> length */
static const om_sig sig_SequenceLength_11 = {11, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0, NULL,
	NULL};
static const om_sig_attr attrs_SplitToSequence_11_v24[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* SplitToSequence-24: input [split] -> output_sequence */
static const om_sig sig_SplitToSequence_11_v24 = {24, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x0, 0x1, 0x0,
	attrs_SplitToSequence_11_v24, NULL};
static const om_sig_attr attrs_SplitToSequence_11[] = {{"axis", OM_ATTR_INT, 0},
	{"keepdims", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* SplitToSequence-11: input [split] -> output_sequence */
static const om_sig sig_SplitToSequence_11 = {11, 1, 2, 1, 1, 0x2, 0x0, 0x1, 0x0, 0x0, 0x0,
	attrs_SplitToSequence_11, &sig_SplitToSequence_11_v24};
static const om_sig_attr attrs_ConcatFromSequence_11[] = {{"axis", OM_ATTR_INT, 1},
	{"new_axis", OM_ATTR_INT, 0}, {NULL, 0, 0}};
/* ConcatFromSequence-11: input_sequence -> concat_result */
static const om_sig sig_ConcatFromSequence_11 = {11, 1, 1, 1, 1, 0x0, 0x0, 0x0, 0x1, 0x0, 0x0,
	attrs_ConcatFromSequence_11, NULL};
static const om_sig_attr attrs_SequenceMap_17[] = {{"body", OM_ATTR_GRAPH, 1}, {NULL, 0, 0}};
/* SequenceMap-17: input_sequence additional_inputs... -> out_sequence... */
static const om_sig sig_SequenceMap_17 = {17, 1, OM_MANY, 1, OM_MANY, 0x0, 0xffffffffffffffff,
	0xfffffffffffffffe, 0x0, 0x0, 0x0, attrs_SequenceMap_17, NULL};

/* ---- end of signatures ---- */

static const om_op rows[] = {
	{"SequenceEmpty", "", 11, seq_infer, empty_kernel, ROW, &sig_SequenceEmpty_11, OM_OPC_NONE,
	 NULL, 0, NULL},
	{"SequenceConstruct", "", 11, seq_infer, construct_kernel, ROW, &sig_SequenceConstruct_11,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"SequenceInsert", "", 11, seq_infer, insert_kernel, ROW, &sig_SequenceInsert_11,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"SequenceErase", "", 11, seq_infer, erase_kernel, ROW, &sig_SequenceErase_11, OM_OPC_NONE,
	 NULL, 0, NULL},
	{"SequenceAt", "", 11, seq_infer, at_kernel, ROW, &sig_SequenceAt_11, OM_OPC_NONE, NULL, 0,
	 NULL},
	{"SequenceLength", "", 11, seq_infer, length_kernel, ROW, &sig_SequenceLength_11,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"SplitToSequence", "", 11, seq_infer, split_kernel, ROW, &sig_SplitToSequence_11,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"ConcatFromSequence", "", 11, seq_infer, concat_kernel, ROW, &sig_ConcatFromSequence_11,
	 OM_OPC_NONE, NULL, 0, NULL},
	{"SequenceMap", "", 17, map_infer, map_kernel, ROW, &sig_SequenceMap_17, OM_OPC_NONE, NULL,
	 0, NULL},
};

const om_op_table om_ops_sequence = OM_TABLE(rows);
