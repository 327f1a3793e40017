/* reduce_plan.h — walking a tensor as (kept dims) x (reduced dims): the reductions and
 * MeanVarianceNormalization share it. Offsets are in elements; every reduced set is visited
 * in ascending offset order, which is what makes the folds exact. */
#ifndef OM_REDUCE_PLAN_H
#define OM_REDUCE_PLAN_H

#include "op.h"

/* The input's dims with adjacent dims of the same role (kept or reduced) merged and extent-1
 * dims dropped. */
typedef struct om_red_plan {
	int32_t nk, nr;
	int64_t kext[OM_MAX_RANK], kstr[OM_MAX_RANK];
	int64_t rext[OM_MAX_RANK], rstr[OM_MAX_RANK];
	int64_t nout, nred; /* output elements, elements per reduced set */
	int32_t out_rank;
	int64_t out_dims[OM_MAX_RANK]; /* with keepdims: 1 at the reduced dims */
	bool noop; /* for the caller: noop_with_empty_axes and no axes */
} om_red_plan;

/** mask[d] = axes (n of them, possibly negative) name d; INVALID_MODEL on a bad or repeated
 *  axis. mask must hold rank entries, all false on entry. */
om_kind om_red_axes_mask(om_ctx *c, const int64_t *axes, int64_t n, int32_t rank, bool *mask);

void om_red_plan_make(const om_tensor *x, const bool *mask, bool keepdims, om_red_plan *p);

/** fn(arg, offset, count, stride): one run of the reduced set starting at `base`. */
typedef void (*om_run_fn)(void *arg, int64_t off, int64_t n, int64_t stride);
void om_red_each_run(const om_red_plan *p, int64_t base, om_run_fn fn, void *arg);

/** Steps (kidx, base) to the next output element in row-major order. kidx starts zeroed. */
void om_red_next_base(const om_red_plan *p, int64_t *kidx, int64_t *base);

/** Eight lane sums folded in a fixed order: sums kept in lanes have independent adds (they
 *  vectorize) and still give the same bits on every ISA. */
static inline double om_red_fold8(const double *l)
{
	return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
}

#endif
