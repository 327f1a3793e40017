/*
 * optimize.h — what the fusions of level 2 (om_optimize; passes/pass_registry.c) share
 * (passes/opt_match.c): finding the producer and the only reader of a value, checking that an
 * intermediate is private to a pattern, reading constant scalars, turning a node into the
 * fused op.
 *
 * A fusion matches a chain of nodes of one graph and rewrites its LAST node into the fused op
 * (so the graph stays in topological order and the chain's output keeps its value and name);
 * the other nodes of the chain die. Every intermediate must be private to the chain: read only
 * by it, no graph output, read by no subgraph. A fusion creates a node only when the registry
 * has a row that runs it (om_op_find).
 */
#ifndef OM_OPTIMIZE_H
#define OM_OPTIMIZE_H

#include "registry.h"
#include "pass.h"

/** The domain of ONNX Runtime's contrib ops. */
#define OM_MS_DOMAIN "com.microsoft"

/** The live producer of v in g when its row has opcode `code` (ops/op.h); else NULL. */
om_node *om_opt_producer(const om_graph *g, const om_value *v, enum om_opcode code);
/** The only live reader of v in g, when its row has opcode `code` (OM_OPC_NONE: any
 *  default-domain node); NULL when v has another reader, is a graph output or is read by a
 *  subgraph. Uses must be counted. */
om_node *om_opt_consumer(om_pass_ctx *c, const om_graph *g, const om_value *v,
			 enum om_opcode code);
/** True when v is read exactly `uses` times (input slots, uses counted), is no graph output
 *  and no subgraph reads it: an intermediate a fusion may swallow. */
bool om_opt_private(om_pass_ctx *c, const om_graph *g, const om_value *v, int32_t uses);
/** The input of binary node n that is not v; NULL when n does not read v in slot 0 or 1. */
om_value *om_opt_other(const om_node *n, const om_value *v);
/** A constant of one float element of rank <= max_rank into *out; false otherwise. */
bool om_opt_scalar(const om_graph *g, om_value *v, int32_t max_rank, double *out);
/** True when a constant scalar v (rank <= max_rank) is within 1e-5 (relative) of want. */
bool om_opt_scalar_is(const om_graph *g, om_value *v, int32_t max_rank, double want);
/** The inferred type of v when it is a tensor of known rank; NULL otherwise. */
const om_type *om_opt_type(om_pass_ctx *c, const om_graph *g, om_value *v);
/** True when the row for domain/op at the model's opset (1 for an unimported domain)
 *  exists and has a kernel. */
bool om_opt_runnable(const om_model *m, const char *domain, const char *op);
/** Node n becomes op (in domain) reading in[0..nin), with no attributes; its outputs stay
 *  (n passed to om_rewrite_touch first). */
om_kind om_opt_become(om_pass_ctx *c, om_graph *g, om_node *n, const char *domain,
		      const char *op, int32_t nin, om_value *const *in, om_status *st);
/** Marks n dead and unlinks it from its outputs (n passed to om_rewrite_touch first). */
void om_opt_kill(om_pass_ctx *c, om_node *n);
/** Imports the domain (version 1) into the model when it is not imported yet. */
om_kind om_opt_import(om_model *m, const char *domain, om_status *st);

#endif
