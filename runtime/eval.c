#include <stdlib.h>
#include <string.h>

#include "eval.h"

static const om_op *row_for(const om_node *n, int64_t opset, om_status *st)
{
	const om_op *op = om_op_find(n->domain, n->op, opset);
	if (!op)
		om_error(st, OM_ERR_UNSUPPORTED, n, "no kernel for %s%s%s at opset %lld",
			 n->domain[0] ? n->domain : "", n->domain[0] ? "." : "", n->op,
			 (long long)opset);
	return op;
}

/* om_infer_node with the row given, the node already checked against it */
static om_kind infer_row(const om_op *op, const om_node *n, int64_t opset,
			 const om_tensor *const *in, om_tensor *out, om_status *st)
{
	om_kind rc;
	if (!op->infer)
		return om_error(st, OM_ERR_UNSUPPORTED, n, "no shape inference for %s", n->op);
	om_tensor *outp[64];
	if (n->nout > 64)
		return om_error(st, OM_ERR_UNSUPPORTED, n, "more than 64 outputs");
	/* rows multiply extents freely: a shape whose element count overflows int64_t (declared
	 * in a hostile model, or a sampler's probe) is refused before any row sees it */
	for (int32_t i = 0; i < n->nin; i++)
		if (in[i] && (in[i]->rank < 0 || in[i]->rank > OM_MAX_RANK ||
			      om_shape_numel(in[i]->rank, in[i]->dims) < 0))
			return om_error(st, OM_ERR_INVALID_INPUT, n,
					"input %d: a shape with more elements than int64_t holds", i);
	for (int32_t i = 0; i < n->nout; i++) {
		memset(&out[i], 0, sizeof out[i]);
		out[i].rank = -1; /* what a partial result leaves unknown (op.h) */
		outp[i] = n->out[i] ? &out[i] : NULL;
	}
	om_ctx c = {.node = n, .op = op, .opset = opset, .nin = n->nin, .nout = n->nout, .in = in,
		    .out = outp, .st = st, .exact = 1, .threads = 1};
	rc = op->infer(&c);
	for (int32_t i = 0; i < n->nout && rc != OM_NEED_VALUE; i++)
		if (out[i].rank < 0)
			out[i].rank = 0; /* not set by the row: a scalar, as before */
	return rc;
}

om_kind om_infer_node(const om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		      om_status *st)
{
	const om_op *op = row_for(n, opset, st);
	if (!op)
		return OM_ERR_UNSUPPORTED;
	om_kind rc = om_node_check_in(op, n, opset, in, st);
	return rc ? rc : infer_row(op, n, opset, in, out, st);
}

om_kind om_eval_node(const om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		     om_status *st)
{
	const om_op *op = row_for(n, opset, st);
	if (!op)
		return OM_ERR_UNSUPPORTED;
	return om_eval_row(op, n, opset, in, out, 0, st);
}

size_t om_eval_fold_input_bytes(const om_op *op, const om_tensor *const *in, int32_t nin)
{
	const int32_t part = (op->flags & OM_OP_SHAPE_OF) || op->code == OM_OPC_SLICE;
	size_t bytes = 0;
	for (int32_t i = part; i < nin && bytes <= OM_EVAL_FOLD_IN_MAX; i++)
		if (in[i])
			bytes += in[i]->nbytes < SIZE_MAX / 2 ? in[i]->nbytes : SIZE_MAX / 2;
	return bytes;
}

static bool misaligned(const om_tensor *t)
{
	if (!t || !t->data || !t->nbytes || t->dtype == OM_STRING)
		return false;
	size_t align = om_dtype_size(t->dtype);
	align = align > 8 ? 8 : align ? align : 1;
	return (uintptr_t)t->data % align != 0;
}

static om_kind eval_row(const om_op *op, const om_node *n, int64_t opset,
			const om_tensor *const *in, om_tensor *out, size_t max_bytes, om_status *st);

/* Constant inputs misaligned for their element type (large initializers left in the mapped
 * file, api/load.c) are given to a kernel as aligned copies, but where its row reads them with
 * byte moves (OM_OP_UNALIGNED, but for in[1]). */
om_kind om_eval_row(const om_op *op, const om_node *n, int64_t opset, const om_tensor *const *in,
		    om_tensor *out, size_t max_bytes, om_status *st)
{
	bool any = false;
	for (int32_t i = 0; i < n->nin; i++)
		any |= misaligned(in[i]) && (!(op->flags & OM_OP_UNALIGNED) || i == 1);
	if (!any)
		return eval_row(op, n, opset, in, out, max_bytes, st);
	om_tensor *tmp = calloc((size_t)n->nin, sizeof *tmp);
	const om_tensor **inp = calloc((size_t)n->nin, sizeof *inp);
	om_kind rc = OM_OK;
	if (!tmp || !inp)
		rc = om_error(st, OM_ERR_NOMEM, n, "out of memory");
	for (int32_t i = 0; !rc && i < n->nin; i++) {
		inp[i] = in[i];
		if (!misaligned(in[i]) || ((op->flags & OM_OP_UNALIGNED) && i != 1))
			continue;
		if (!(rc = om_tensor_alloc(&tmp[i], in[i]->dtype, in[i]->rank, in[i]->dims, st))) {
			memcpy(tmp[i].data, in[i]->data, in[i]->nbytes);
			inp[i] = &tmp[i];
		}
	}
	if (!rc)
		rc = eval_row(op, n, opset, inp, out, max_bytes, st);
	for (int32_t i = 0; tmp && i < n->nin; i++)
		om_tensor_free(&tmp[i]);
	free(tmp);
	free(inp);
	return rc;
}

static om_kind eval_row(const om_op *op, const om_node *n, int64_t opset,
			const om_tensor *const *in, om_tensor *out, size_t max_bytes, om_status *st)
{
	om_kind rc = om_node_check_in(op, n, opset, in, st); /* a bad node before a missing kernel */
	if (rc)
		return rc;
	if (!op->kernel && !(op->flags & OM_OP_VIEW))
		return om_error(st, OM_ERR_UNSUPPORTED, n, "no kernel for %s", n->op);
	rc = infer_row(op, n, opset, in, out, st);
	if (rc == OM_NEED_VALUE && (op->flags & OM_OP_CONTROL))
		return om_error(st, OM_ERR_UNSUPPORTED, n, "%s needs a session: its values are "
				"sequences, optionals or subgraphs", n->op);
	if (rc == OM_NEED_VALUE)
		return om_error(st, OM_ERR_INTERNAL, n, "inference needs a value it was given");
	if (rc)
		return rc;
	for (int32_t i = 0; max_bytes && i < n->nout; i++)
		if (n->out[i] && om_tensor_bytes_for(out[i].dtype, out[i].rank, out[i].dims) > max_bytes)
			return OM_NEED_VALUE;
	om_tensor *outp[64];
	for (int32_t i = 0; i < n->nout; i++) {
		outp[i] = NULL;
		if (!n->out[i])
			continue;
		om_tensor shape = out[i];
		rc = om_tensor_alloc(&out[i], shape.dtype, shape.rank, shape.dims, st);
		if (rc)
			goto fail;
		outp[i] = &out[i];
	}
	if (op->flags & OM_OP_VIEW) {
		/* a view's bytes are its input's bytes; here the caller gets a copy */
		if (in[0] && (rc = om_tensor_copy_data(&out[0], in[0], st)))
			goto fail;
		if (!op->kernel)
			return OM_OK;
	}
	om_ctx c = {.node = n, .op = op, .opset = opset, .nin = n->nin, .nout = n->nout, .in = in,
		    .out = outp, .st = st, .exact = 1, .threads = 1};
	rc = op->kernel(&c);
	if (!rc)
		return OM_OK;
fail:
	for (int32_t i = 0; i < n->nout; i++)
		om_tensor_free(&out[i]);
	return rc;
}
