/*
 * session.h — the executor's internal API (session.c, plan.c): tests and tools look inside a
 * plan and a run with it. (Kernels reach the running session through om_ctx.run, ops/op.h.)
 */
#ifndef OM_SESSION_H
#define OM_SESSION_H

#include "op.h"

/** Like om_session_create; rows of `extra` (may be NULL) are looked up before the registry's,
 *  so that tests can plan graphs with ops of their own. */
om_kind om_session_create_ex(const om_model *m, const om_session_options *opt,
			     const om_op_table *extra, om_session **out, om_status *st);

/* ---- looking inside (tests, tools) ------------------------------------------------------- */

enum om_node_mode {
	OM_MODE_NOT_RUN = 0, /* not run yet (or folded at plan time, see om_session_node_info) */
	OM_MODE_EXACT = 1,   /* exact kernel, or exact mode requested */
	OM_MODE_FAST = 2     /* a kernel free to use fast paths */
};

typedef struct om_node_info {
	const om_node *node;
	const om_op *op;
	int folded;  /* computed at plan time (constant inputs, Shape/Size of a known shape) */
	int dead;    /* not run: nothing reads its outputs */
	int absorbed; /* not run: the step producing its input applies it (1), or the step reading
			 its output does (2: a Mul by a factor per channel) (fast mode) */
	int scaled;   /* the step multiplies its input 0 by a factor per channel (an absorbed
			 Mul) */
	int summed;   /* the step adds the addend of an absorbed Add to its output 0 */
	int post;     /* om_act_kind the step applies for the steps it absorbed, or 0 */
	uint64_t blocked; /* positions held channel-blocked (op.h: OM_LAYOUT_IN/OUT), or 0 */
	int block;        /* channels per block when blocked, or OM_BLOCK_NHWC (op.h) */
	const om_value *out0; /* the value output 0 is written to: with post, the last absorbed
				 step's output (the node's own output 0 is never stored) */
	int dynamic; /* shaped again in every run (a value, or a dim, only known at run time) */
	int view;    /* output 0 aliases input 0 */
	int mode;    /* om_node_mode the node ran in (last run); folded nodes: OM_MODE_EXACT */
	const char *impl; /* the implementation its kernel chose in the last run (om_ctx_chose:
			     Conv's "winograd-f4", ...), or NULL */
	const char *plan_impl; /* the one its row chose at plan time (om_op.choose), or NULL */
	const char *plan_how;  /* what else that choice fixed ("" when nothing) */
} om_node_info;

/** Nodes of the main graph in plan (topological) order. */
int om_session_node_count(const om_session *s);
om_node_info om_session_node_info(const om_session *s, int i);

/** Called after every node of every run (subgraphs included) with its inputs and outputs. */
typedef void (*om_node_hook)(void *arg, const om_node *n, const om_tensor *const *in, int nin,
			     const om_tensor *const *out, int nout);
void om_session_set_hook(om_session *s, om_node_hook fn, void *arg);


/** *info for value v as a graph input or output (session.c; om_model_input_info too). */
void om_value_io_info(const om_value *v, om_io_info *info);

#endif
