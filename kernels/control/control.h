/* control.h — helpers shared by the control-flow kernels (ops_control.c: If, Loop;
 * control_scan.c: Scan) and the Scan rows. */
#ifndef OM_CONTROL_H
#define OM_CONTROL_H

#include "op.h"

om_kind om_ctl_bad(om_ctx *c, const char *msg);
/** The graph attribute `name`, or NULL. */
const om_graph *om_ctl_graph(const om_ctx *c, const char *name);
/** OM_ERR_UNSUPPORTED outside a session (the constant folder cannot run subgraphs). */
om_kind om_ctl_need_session(om_ctx *c);
/** Bytes per element of a value a control op may move: not strings, not 4-bit types. */
om_kind om_ctl_movable(om_ctx *c, const om_tensor *t, size_t *esize);
/** A condition: exactly one bool. */
om_kind om_ctl_read_bool(om_ctx *c, const om_tensor *t, bool *out);
/** Output i of the node = t, copied into the session's memory (a sequence or optional: a deep
 *  copy the run owns). */
om_kind om_ctl_put_output(om_ctx *c, int32_t i, const om_tensor *t);
/** om_value_free on n values (tensors, sequences, optionals). */
void om_ctl_free_all(om_tensor *t, int32_t n);
/** The zero-filled scan output of a scan that produced no element: the body output's declared
 *  type and extents (unknown ones 0) with `len` inserted at `axis`. */
om_kind om_ctl_declared_stack(om_ctx *c, const om_value *bv, int64_t len, int64_t axis,
			      om_tensor *acc);
/** dst (allocated) = src[..., idx, ...] along axis. */
om_kind om_ctl_take_slice(om_ctx *c, const om_tensor *src, int32_t axis, int64_t idx,
			  om_tensor *dst);
/** dst[..., idx, ...] along axis = e. */
void om_ctl_put_slice(om_tensor *dst, int32_t axis, int64_t idx, const om_tensor *e);
bool om_ctl_same_shape(const om_tensor *a, const om_tensor *b);
/** A stacked output (allocated): e's shape with `len` inserted at `axis`. */
om_kind om_ctl_start_stack(om_ctx *c, const om_tensor *e, int64_t len, int64_t axis,
			   om_tensor *acc);

/* Scan rows (kernels/control/control_scan.c); the param says where the scanned inputs start */
enum om_scan_form {
	OM_SCAN_BATCHED, /* Scan-8: input 0 is sequence_lens, the inputs are batches */
	OM_SCAN_PLAIN    /* Scan-9: the inputs are the states, then the scanned tensors */
};
om_kind om_ctl_scan_infer(om_ctx *c);
om_kind om_ctl_scan8_kernel(om_ctx *c);
om_kind om_ctl_scan9_kernel(om_ctx *c);

#endif
