/* inline.h — model-local functions inlined into the graphs that call them (onnx/inline.c). */
#ifndef OM_ONNX_INLINE_H
#define OM_ONNX_INLINE_H

#include "ir.h"

/** Replaces every call of a model-local function of the model's own domains (not ai.onnx,
 *  ai.onnx.*, com.microsoft) by the function's body, in every graph, nested calls included;
 *  then drops the functions no node calls any more from m->functions. *inlined counts the
 *  calls replaced. A call whose function imports another opset version of a domain than the
 *  model stays a call. OM_ERR_INVALID_MODEL for functions that call themselves or whose
 *  bodies break SSA; OM_ERR_NOMEM. */
om_kind om_onnx_inline_functions(om_model *m, int *inlined, om_status *st);

#endif
