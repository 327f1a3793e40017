/*
 * registry.h — every op row of every kernel family, and lookups over them (registry.c).
 *
 * The kernel families (kernels/<family>/) each define one om_op_table; the registry lists
 * them. A node runs the row of its op and domain with the highest since-version <= the model's
 * opset for that domain. The passes, the planner and the folder ask these functions, never an
 * op's name.
 */
#ifndef OM_REGISTRY_H
#define OM_REGISTRY_H

#include "grad.h"
#include "op.h"

/** The row for op in domain at opset `opset`: highest since <= opset. NULL when none. */
const om_op *om_op_find(const char *domain, const char *name, int64_t opset);
/** The row that runs node n of model m (the model's opset for n's domain); NULL when none. */
const om_op *om_node_op(const om_model *m, const om_node *n);
/** The code of n's row (enum om_opcode); OM_OPC_NONE when n has no row or its row no code. */
enum om_opcode om_node_code(const om_model *m, const om_node *n);
/** True when n has a row and that row has every flag of `flags`. */
bool om_node_has(const om_model *m, const om_node *n, uint32_t flags);
/* The newest IR version ONNX defines (ONNX 1.23; ONNX Runtime 1.30 stops at 13). */
#define OM_IR_VERSION_MAX 14
/** InvalidModel unless m's IR version is 0 (absent) to OM_IR_VERSION_MAX and every node of
 *  every graph that has a row fits its signature (om_node_check). The loader calls it. */
om_kind om_model_check(const om_model *m, om_status *st);
/** The derivative rule of op's row (ops/grad.h; the families' om_grad_table, listed in
 *  registry_tables.c), or NULL when it has none. */
om_grad_fn om_op_grad(const om_op *op);
/** Calls fn for every registered row (tools, docs, tests). */
void om_op_each(void (*fn)(const om_op *op, void *arg), void *arg);

#endif
