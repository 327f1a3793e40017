/* eval.h — run one node outside a session: the constant folder and the kernel tests use it,
 * so folding and execution share one semantics. */
#ifndef OM_EVAL_H
#define OM_EVAL_H

#include "registry.h"

/**
 * Infers and runs node n on `in` (n->nin entries, NULL for omitted inputs, all with data).
 * The op row is chosen by `opset` (the model's opset for n->domain). On success out[i]
 * (n->nout entries) hold malloc'd results that the caller frees with om_tensor_free; omitted
 * outputs (n->out[i] == NULL) are left zeroed. View ops produce a copy here.
 * Errors: OM_ERR_UNSUPPORTED for an op without a row or kernel, else what infer/kernel say.
 */
om_kind om_eval_node(const om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		     om_status *st);

/**
 * om_eval_node with the row given (a session's table may not be the registry) and every
 * output within max_bytes (0: any size); an output over it gives OM_NEED_VALUE, with no
 * error set and nothing allocated, before any kernel runs. The planner folds constant steps
 * through it.
 */
om_kind om_eval_row(const om_op *op, const om_node *n, int64_t opset, const om_tensor *const *in,
		    om_tensor *out, size_t max_bytes, om_status *st);

/** The most bytes of constant inputs a fold evaluates (om_eval_fold_input_bytes): a kernel may
 *  read them all, and a mapped external weight of 1 TiB would cost its size in reads. The
 *  simplifier's fold_constants and the planner's plan-time folding both stop here. */
#define OM_EVAL_FOLD_IN_MAX ((size_t)1 << 30)

/**
 * The bytes of in[] (nin entries, NULL for omitted ones) that op's kernel may read whole:
 * all of them, but for the first input of a row that reads at most its output's bytes of it
 * (Shape and Size read its dims, Slice the slice). Stops counting past OM_EVAL_FOLD_IN_MAX
 * (returns more than it, never wraps).
 */
size_t om_eval_fold_input_bytes(const om_op *op, const om_tensor *const *in, int32_t nin);

/**
 * Plan-time inference only: in[i] may lack data. Fills out[i]'s dtype and shape.
 * Returns OM_NEED_VALUE when a needed input value is missing; out[i] then holds what the row
 * could tell (op.h: dtype 0 and rank -1 when nothing).
 */
om_kind om_infer_node(const om_node *n, int64_t opset, const om_tensor *const *in, om_tensor *out,
		      om_status *st);

#endif
