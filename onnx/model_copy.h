/* model_copy.h — a model as bytes, and an independent copy of a model (not public: the check
 * and bisect of check/ run copies of a model while the original stays as it is). */
#ifndef OM_MODEL_COPY_H
#define OM_MODEL_COPY_H

#include "ir.h"

/** The ModelProto om_model_save would write, every weight inline, in malloc'd *data (*size
 *  bytes; the caller frees it). OM_ERR_UNSUPPORTED over 2 GB, OM_ERR_NOMEM. */
om_kind om_model_pack(const om_model *m, uint8_t **data, size_t *size, om_status *st);

/** *out = a model of its own equal to m (packed and loaded again: it shares nothing with m,
 *  external data included). Free it with om_model_free. */
om_kind om_model_copy(const om_model *m, om_model **out, om_status *st);

#endif
