/* broadcast.h — the one multidirectional (numpy) broadcast iterator of the elementwise ops.
 *
 * om_bcast_init lines up the output and up to OM_BCAST_MAX_IN inputs on the output's shape,
 * drops size-1 axes and merges axes that are contiguous for every operand, so that a
 * same-shape or scalar-operand case becomes one run over every element (the fast path).
 * om_bcast_run then calls fn once per innermost run with each operand's base pointer and its
 * element step in that run (0: broadcast, 1: contiguous). Kernels never do index math.
 * om_bcast_run splits the output's elements over the run's threads (num/parallel.h): a run
 * may then reach fn in parts, each with the steps of the whole run. */
#ifndef OM_BROADCAST_H
#define OM_BROADCAST_H

#include "op.h"

#define OM_BCAST_MAX_IN 3

/** One innermost run: out[i * step[0]], in[k][i * step[k + 1]] for i < n; arg is passed on. */
typedef void (*om_bcast_fn)(int64_t n, void *out, const void *const *in, const int64_t *step,
			    const void *arg);

typedef struct om_bcast {
	int32_t nin, rank;
	int64_t numel;
	int64_t dims[OM_MAX_RANK];
	int64_t stride[OM_BCAST_MAX_IN + 1][OM_MAX_RANK]; /* in elements; [0] is the output */
	size_t size[OM_BCAST_MAX_IN + 1];                 /* bytes per element */
	int threads; /* om_bcast_run's threads: c->threads at init (1: one call per run, in order) */
} om_bcast;

/** Sets up iteration of out (already shaped) over nin inputs that broadcast to it.
 *  OM_ERR_INVALID_MODEL (naming c->node) when an input does not broadcast to out. */
om_kind om_bcast_init(om_ctx *c, om_bcast *b, const om_tensor *out, int32_t nin,
		      const om_tensor *const *in);
/** Runs fn over every innermost run; concurrently on parts of the output when b->threads > 1
 *  (fn must then write nothing but its run's outputs). */
void om_bcast_run(const om_bcast *b, void *out, const void *const *in, om_bcast_fn fn,
		  const void *arg);

/** Infers the broadcast shape of in[0..n) (NULL entries skipped) into out with dtype. */
om_kind om_bcast_infer(om_ctx *c, int32_t n, const om_tensor *const *in, int32_t dtype,
		       om_tensor *out);

#endif
