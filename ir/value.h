/*
 * value.h — sequence, optional and map values (ir/value.c) (docs/session.md, "Sequences and
 * optionals").
 *
 * A slot value stays an om_tensor so that plans, frames and liveness need no second kind of
 * value: its dtype is an internal kind (OM_SEQ_DTYPE, OM_OPT_DTYPE, outside ONNX's
 * TensorProto.DataType numbers), rank 0, nbytes 0, and data points at an om_seq that the
 * value owns. A sequence holds n items; an optional holds 0 (empty) or 1; a map 2, its keys
 * (a 1-D int64 or string tensor) and its values (a 1-D tensor, or a sequence, of as many
 * values: omopt.h). Items are owned by
 * the om_seq: tensors made with om_tensor_alloc, or (an optional of a sequence) nested
 * om_seq values. om_value_free frees the whole tree; om_value_copy deep-copies it.
 */
#ifndef OM_VALUE_H
#define OM_VALUE_H

#include <stdbool.h>

#include "ir.h"

/* om_seq and the kinds are public (include/omopt.h) */
enum { OM_SEQ_DTYPE = OM_SEQUENCE, OM_OPT_DTYPE = OM_OPTIONAL, OM_MAP_DTYPE = OM_MAP };

/** Whether dtype is a box kind (a sequence, an optional or a map). */
static inline bool om_is_box_kind(int32_t dtype)
{
	return dtype == OM_SEQ_DTYPE || dtype == OM_OPT_DTYPE || dtype == OM_MAP_DTYPE;
}
/** Whether t is a sequence, an optional or a map value (not a tensor). */
static inline bool om_is_box(const om_tensor *t)
{
	return t && om_is_box_kind(t->dtype);
}
static inline om_seq *om_box(const om_tensor *t) { return (om_seq *)t->data; }

/** Inserts v itself (ownership moves into b; v is zeroed) at position pos (0..n). */
om_kind om_box_adopt(om_seq *b, int64_t pos, om_tensor *v, om_status *st);
/** Removes item pos (0..n-1), freeing it. */
void om_box_erase(om_seq *b, int64_t pos);
/** dst = a deep copy of src (a tensor, a sequence or an optional); om_value_free frees it. */
om_kind om_value_copy(om_tensor *dst, const om_tensor *src, om_status *st);
/** A map's keys and values (m a well-formed map: om_value_check). */
static inline const om_tensor *om_map_keys(const om_tensor *m) { return &om_box(m)->items[0]; }
static inline const om_tensor *om_map_values(const om_tensor *m)
{
	return &om_box(m)->items[1];
}
/** The number of entries of a well-formed map. */
static inline int64_t om_map_size(const om_tensor *m) { return om_map_keys(m)->dims[0]; }
/** *out = a new map (keys of type key_type, OM_INT64 or OM_STRING) owning keys and values
 *  (both zeroed: ownership moves in, on failure too: they are freed). */
om_kind om_map_adopt(int32_t key_type, om_tensor *keys, om_tensor *values, om_tensor *out,
		     om_status *st);
/** Whether v (a tensor or a box) holds string elements anywhere. */
bool om_value_has_strings(const om_tensor *v);

#endif
