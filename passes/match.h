/*
 * match.h — the pattern matchers of the passes (passes/match.c): questions about the graph
 * that change nothing. Which live node produces a value, which one alone reads it, whether an
 * intermediate is private to a pattern (read only by it, no graph output, read by no
 * subgraph), constants (a value's initializer data, scalars, Conv weights and per-channel
 * vectors, axes), inferred types, and whether the registry runs a fused op.
 *
 * A fusion matches a chain of nodes of one graph with these and rewrites its LAST node into the
 * fused op (pass.h, "graph edits": om_node_become, om_node_kill), so the graph stays in
 * topological order and the chain's output keeps its value and name; the other nodes of the
 * chain die. Every intermediate must be private to the chain. A fusion creates a node only when
 * the registry has a row that runs it (om_match_runnable).
 */
#ifndef OM_MATCH_H
#define OM_MATCH_H

#include "registry.h"
#include "pass.h"

/** The constant data of v (initializer that is not a graph input, outer ones resolved). */
const om_tensor *om_value_const(const om_graph *g, om_value *v);
/** Normalized sorted axes from an attribute (before `opset_input`) or constant input `slot`;
 *  returns the count or -1 when not known. Fills `out` (cap OM_MAX_RANK * 2). */
int32_t om_node_axes(const om_graph *g, const om_node *n, int64_t opset_input, int32_t slot,
		     int32_t rank, int64_t *out);

/** The live producer of v in g when its row has opcode `code` (ops/op.h); else NULL. */
om_node *om_match_producer(const om_graph *g, const om_value *v, enum om_opcode code);
/** The live producer of v in g when its row has every property in `flags` (ops/op.h); else
 *  NULL. */
om_node *om_match_producer_with(const om_graph *g, const om_value *v, uint32_t flags);
/** The node of one of the opcodes `codes` (OM_OPC_BIT: Conv, ConvTranspose; live, in g, 2 or
 *  3 inputs, one output) producing x when x is private to its one reader; NULL otherwise. Uses
 *  must be counted. */
om_node *om_match_conv_producer(om_pass_ctx *c, const om_graph *g, const om_value *x,
				uint64_t codes);
/** The only live reader of v in g, when its row has opcode `code` (OM_OPC_NONE: any
 *  default-domain node); NULL when v has another reader, is a graph output or is read by a
 *  subgraph. Uses must be counted. */
om_node *om_match_consumer(om_pass_ctx *c, const om_graph *g, const om_value *v,
			   enum om_opcode code);
/** True when v is read exactly `uses` times (input slots, uses counted), is no graph output
 *  and no subgraph reads it: an intermediate a fusion may swallow. */
bool om_match_private(om_pass_ctx *c, const om_graph *g, const om_value *v, int32_t uses);
/** The input of binary node n that is not v; NULL when n does not read v in slot 0 or 1. */
om_value *om_match_other(const om_node *n, const om_value *v);

/** A constant of one float element of rank <= max_rank into *out; false otherwise. */
bool om_match_scalar(const om_graph *g, om_value *v, int32_t max_rank, double *out);
/** True when a constant scalar v (rank <= max_rank) is within 1e-5 (relative) of want. */
bool om_match_scalar_is(const om_graph *g, om_value *v, int32_t max_rank, double want);
/** M (dim 0) of a constant float Conv weight of rank >= 3 whose data is all there; else -1. */
int64_t om_match_weight_channels(const om_tensor *w);
/** True for a constant float tensor of m elements whose data is all there. */
bool om_match_vector(const om_tensor *t, int64_t m);

/** The inferred type of v when it is a tensor of known rank; NULL otherwise. */
const om_type *om_match_type(om_pass_ctx *c, const om_graph *g, om_value *v);
/** True when the row for domain/op at the model's opset (1 for an unimported domain)
 *  exists and has a kernel. */
bool om_match_runnable(const om_model *m, const char *domain, const char *op);

#endif
