/* infer.h — inside shape inference: the working form of one output and the symbolic rules
 * (passes/infer_rules.c) that infer.c tries before the op rows' own infer functions. */
#ifndef OM_INFER_H
#define OM_INFER_H

#include "pass.h"

/** What inference knows about one output while it works on a node. */
typedef struct om_ishape {
	int32_t elem;           /* OM_UNDEFINED when unknown */
	int32_t rank;           /* -1 when unknown */
	om_dim d[OM_MAX_RANK];  /* number (value >= 0), symbol (param), or unknown */
	int32_t npv, pvrank;    /* plan-time value: -1 when none */
	om_pe pv[OM_PV_MAX];
} om_ishape;

/** A symbolic rule: fills out[0..n->nout) and returns true, or false when it does not apply
 *  (the generic path is tried next). in[i] is NULL when unknown or omitted. */
typedef bool (*om_infer_rule)(om_pass_ctx *c, const om_graph *g, const om_node *n,
			      om_vinfo *const *in, om_ishape *out);

/** The rule for n's op (default domain only), or NULL. */
om_infer_rule om_infer_rule_for(const om_node *n);

/** True when vi has a tensor type of known rank. */
static inline bool om_vi_ranked(const om_vinfo *vi)
{
	return vi && vi->type.kind == OM_TYPE_TENSOR && vi->type.rank >= 0 &&
	       vi->type.rank <= OM_MAX_RANK;
}

/** The extents of vi's plan-time value into dims (rank vi->pvrank); false when unknown. */
bool om_pv_dims(const om_vinfo *vi, int64_t *dims);
/** Reads vi's plan-time value when every element is a number. */
bool om_pv_numbers(const om_vinfo *vi, int64_t *buf, int32_t cap, int32_t *count);
/** The element of a dim. */
om_pe om_pe_of_dim(om_dim d);
/** The dim of an element: a negative number is unknown. */
om_dim om_dim_of_pe(om_pe e);

#endif
