/*
 * fuse_util.h — what the Conv fusions share (passes/fuse_util.c): finding a Conv whose only
 * use is the node being fused, element access in double for the float types, and swapping in
 * new weight and bias initializers.
 */
#ifndef OM_FUSE_UTIL_H
#define OM_FUSE_UTIL_H

#include "registry.h"
#include "pass.h"

/** The node of one of the opcodes `codes` (OM_OPC_BIT: Conv, ConvTranspose; live, in g)
 *  producing x when x has no other use, is not a graph output and no subgraph reads it; NULL
 *  otherwise. Uses must be counted. */
om_node *om_fuse_conv_producer(om_pass_ctx *c, const om_graph *g, const om_value *x,
			       uint64_t codes);
/** M (dim 0) of a constant float Conv weight of rank >= 3 whose data is all there; else -1. */
int64_t om_fuse_weight_channels(const om_tensor *w);
/** True for a constant float tensor of m elements whose data is all there. */
bool om_fuse_vector_ok(const om_tensor *t, int64_t m);
/** True for float, double, float16 and bfloat16. */
bool om_fuse_float_type(int32_t dtype);
double om_fuse_get(const om_tensor *t, int64_t i);
void om_fuse_set(om_tensor *t, int64_t i, double v);
/** Folds node `fused` (which reads conv's output) into conv: w and b become new initializers
 *  and the Conv's inputs 1 and 2 (adding input 2; w NULL keeps the weight), then `fused` is
 *  bypassed and its readers read the Conv's output. *done tells whether the bypass happened;
 *  nothing changes when a new weight over 4 KiB would replace one other nodes read too (it
 *  would be duplicated). */
om_kind om_fuse_into_conv(om_pass_ctx *c, om_graph *g, om_node *conv, const om_tensor *w,
			  const om_tensor *b, om_node *fused, bool *done);

#endif
