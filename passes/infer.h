/* infer.h — inside shape inference: the working form of one output, and the sampling of a
 * node's op row at values of its symbols (passes/infer_sample.c). */
#ifndef OM_INFER_H
#define OM_INFER_H

#include "pass.h"

enum { OM_INFER_MAX_OUT = 16 }; /* outputs of a node that inference types */

/** What inference knows about one output while it works on a node. */
typedef struct om_ishape {
	int32_t elem;           /* OM_UNDEFINED when unknown */
	int32_t rank;           /* -1 when unknown */
	om_dim d[OM_MAX_RANK];  /* number (value >= 0), symbol (param), or unknown */
	int32_t npv, pvrank;    /* plan-time value: -1 when none */
	om_pe pv[OM_PV_MAX];
} om_ishape;

/**
 * Infers node n (at most OM_INFER_MAX_OUT outputs) by evaluating its op row at several values
 * of the symbols of its inputs: fills what the runs agree on into out[0..n->nout), which the
 * caller set to unknown. in[i] is the side-table entry of n->in[i] (NULL when none). A pv
 * element left OM_PE_UNK is one the runs did not agree on. Only out of memory is an error.
 */
om_kind om_infer_sample(om_pass_ctx *c, const om_graph *g, const om_node *n, om_vinfo *const *in,
			om_ishape *out);

/** True for the element types whose plan-time values are tracked (integers, bool, floats
 *  holding integers). */
bool om_pv_elem(int32_t elem);
/** Element i of a numeric tensor as an exact integer; false when it is not one. */
bool om_exact_int_at(const om_tensor *t, int64_t i, int64_t *x);
/** True for a value symbol: a plan-time element that is not known, any int64 ("?vN"); other
 *  symbols are dims (>= 0). */
bool om_value_symbol(const char *s);

/** True when vi has a tensor type of known rank. */
static inline bool om_vi_ranked(const om_vinfo *vi)
{
	return vi && vi->type.kind == OM_TYPE_TENSOR && vi->type.rank >= 0 &&
	       vi->type.rank <= OM_MAX_RANK;
}

/** The extents of vi's plan-time value into dims (rank vi->pvrank); false when unknown. */
bool om_pv_dims(const om_vinfo *vi, int64_t *dims);

#endif
