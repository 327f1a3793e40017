/*
 * grad.h — derivative rules of op rows, and the node builder they write backward nodes with.
 *
 * A family lists its rules in one om_grad_table (kernels/<family>/grad_<group>.c) by the op
 * name and domain of its rows; the registry (runtime/registry.h, om_op_grad) finds a row's
 * rule, so that the Gradient lowering (passes/lower_gradient.c) never looks at an op's name.
 * A rule sees the forward node and the gradients of its outputs (dy[j], NULL when y does not
 * depend on output j) and sets dx[i] for each input i whose bit is in `want`: the gradient of
 * the Gradient node's y with respect to that input, a value of the input's shape and type,
 * written as ai.onnx nodes at the model's opset (om_grad_ctx.opset). A rule that cannot
 * differentiate the node (an input it has no derivative for, a rank it does not know) returns
 * OM_ERR_UNSUPPORTED naming the node.
 */
#ifndef OM_GRAD_H
#define OM_GRAD_H

#include "op.h"

typedef struct om_grad_ctx {
	om_graph *g;           /* where the backward nodes go */
	const om_node *n;      /* the forward node */
	int64_t opset;         /* the model's ai.onnx opset: the backward nodes' rows */
	om_value *const *dy;   /* n->nout gradients of n's outputs; NULL: zero */
	om_value **dx;         /* n->nin slots the rule fills (those in want) */
	uint64_t want;         /* bit i: input i needs its gradient */
	/* the inferred type of v (rank -1 or elem 0 when not known); never NULL */
	const om_type *(*type_of)(void *arg, const om_value *v);
	/* v's integer values when inference knows every one (at most max): their count, or -1 */
	int64_t (*ints_of)(void *arg, const om_value *v, int64_t *out, int64_t max);
	void *arg;
	om_status *st;
} om_grad_ctx;

typedef om_kind (*om_grad_fn)(om_grad_ctx *c);

typedef struct om_grad_rule {
	const char *name;
	const char *domain; /* "" for ai.onnx */
	om_grad_fn fn;      /* for every since-version of the op (it reads the node's form) */
} om_grad_rule;

typedef struct om_grad_table {
	const om_grad_rule *rules;
	size_t count;
} om_grad_table;

/* ---- the builder (ops/grad.c); every call returns NULL after setting c->st on failure ---- */

/** A node of op (ai.onnx) reading in[0..nin) (NULL entries: ""), with one fresh output. */
om_node *om_grad_node(om_grad_ctx *c, const char *op, int32_t nin, om_value *const *in);
/** Its output: om_grad_node's out[0], or NULL. */
om_value *om_grad_op(om_grad_ctx *c, const char *op, int32_t nin, om_value *const *in);
om_value *om_grad_op1(om_grad_ctx *c, const char *op, om_value *a);
om_value *om_grad_op2(om_grad_ctx *c, const char *op, om_value *a, om_value *b);
/** Sets an int or ints attribute on node n (NULL n passes through); false when out of memory. */
bool om_grad_attr_int(om_grad_ctx *c, om_node *n, const char *name, int64_t v);
bool om_grad_attr_ints(om_grad_ctx *c, om_node *n, const char *name, const int64_t *v,
		       int64_t count);
/** A Constant node's output: a scalar of dtype (float16, bfloat16, float, double) holding v. */
om_value *om_grad_scalar(om_grad_ctx *c, int32_t dtype, double v);
/** A Constant node's output: a 1-D int64 tensor of v[0..count). */
om_value *om_grad_ints(om_grad_ctx *c, const int64_t *v, int64_t count);
/** A tensor of ref's shape holding v (ConstantOfShape over Shape(ref)), of dtype. */
om_value *om_grad_fill_like(om_grad_ctx *c, om_value *ref, int32_t dtype, double v);
/** g (of the broadcast result's shape `out`) summed over the axes NumPy broadcasting
 *  repeated x along, reshaped to Shape(x): ReduceSum (keepdims) + Reshape, nothing when the
 *  shapes are the same. Unsupported when a rank is unknown, or a dim of x is a symbol that
 *  the result's dim is not. */
om_value *om_grad_unbroadcast(om_grad_ctx *c, om_value *g, const om_value *out, om_value *x);
/** The same over all but the last `tail` dims of x, which g has as they are (MatMul's
 *  matrix dims: out's last dims are not x's). */
om_value *om_grad_unbroadcast_batch(om_grad_ctx *c, om_value *g, const om_value *out,
				    om_value *x, int32_t tail);
/** Reshape(g, Shape(x)). */
om_value *om_grad_reshape_like(om_grad_ctx *c, om_value *g, om_value *x);
/** The element type of v (OM_UNDEFINED when inference does not know it). */
int32_t om_grad_elem(const om_grad_ctx *c, const om_value *v);
/** The rank of v (-1 when not known). */
int32_t om_grad_rank(const om_grad_ctx *c, const om_value *v);
/** The integer values of v when inference knows them all (at most max): count, or -1. */
int64_t om_grad_const_ints(const om_grad_ctx *c, const om_value *v, int64_t *out, int64_t max);
/** OM_ERR_UNSUPPORTED naming c->n and what (a printf format). */
om_kind om_grad_unsupported(om_grad_ctx *c, const char *what);

#endif
