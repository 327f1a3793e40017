/*
 * seq.h — sequence and optional values inside a run (docs/session.md, "Sequences and
 * optionals").
 *
 * A slot value stays an om_tensor so that plans, frames and liveness need no second kind of
 * value: its dtype is an internal kind (OM_SEQ_DTYPE, OM_OPT_DTYPE, outside ONNX's
 * TensorProto.DataType numbers), rank 0, nbytes 0, and data points at an om_seq that the
 * value owns. A sequence holds n items; an optional holds 0 (empty) or 1. Items are owned by
 * the om_seq: tensors made with om_tensor_alloc, or (an optional of a sequence) nested
 * om_seq values. om_value_free frees the whole tree; om_value_copy deep-copies it.
 */
#ifndef OM_SEQ_H
#define OM_SEQ_H

#include <stdbool.h>

#include "op.h"

/* om_seq and the kinds are public (include/omopt.h) */
enum { OM_SEQ_DTYPE = OM_SEQUENCE, OM_OPT_DTYPE = OM_OPTIONAL };

/** Whether t is a sequence or an optional value (not a tensor). */
static inline bool om_is_box(const om_tensor *t)
{
	return t && (t->dtype == OM_SEQ_DTYPE || t->dtype == OM_OPT_DTYPE);
}
static inline om_seq *om_box(const om_tensor *t) { return (om_seq *)t->data; }

/** Inserts v itself (ownership moves into b; v is zeroed) at position pos (0..n). */
om_kind om_box_adopt(om_seq *b, int64_t pos, om_tensor *v, om_status *st);
/** Removes item pos (0..n-1), freeing it. */
void om_box_erase(om_seq *b, int64_t pos);
/** dst = a deep copy of src (a tensor, a sequence or an optional); om_value_free frees it. */
om_kind om_value_copy(om_tensor *dst, const om_tensor *src, om_status *st);
/** Whether v (a tensor or a box) holds string elements anywhere. */
bool om_value_has_strings(const om_tensor *v);

/* ---- declared types and test data (onnx/value_file.c) ------------------------------------ */

/** OM_SEQ_DTYPE for a sequence type, OM_OPT_DTYPE for an optional type, 0 otherwise. */
int32_t om_type_box_kind(const om_type *ty);
/** The element type of a sequence type's tensors (or an optional's tensor, or an optional's
 *  sequence's), OM_UNDEFINED when not declared. */
int32_t om_type_box_elem(const om_type *ty);
/** Reads a value file (input_N.pb / output_N.pb of a backend test): a SequenceProto when ty is
 *  a sequence type, an OptionalProto when it is an optional type, else a TensorProto (or .npy,
 *  om_tensor_read_file). Free with om_value_free. */
om_kind om_value_read_file(const char *path, const om_type *ty, om_tensor *t, om_status *st);

#endif
