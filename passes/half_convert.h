/* half_convert.h — a float32 model's weights and compute in float16 or bfloat16, and a half
 * model's back in float32 (passes/half_convert.c), with the model's interface unchanged;
 * check/dtype.c chooses which nodes stay float32. */
#ifndef OM_HALF_CONVERT_H
#define OM_HALF_CONVERT_H

#include "pass.h"

/** What the conversion did with one node of the main graph (om_half_convert's `why`). */
enum om_half_why {
	OM_HALF_UNTOUCHED = 0, /* no float32 input or output: not the conversion's business */
	OM_HALF_CONVERTED,     /* its float32 slots that admit the half type now are of it */
	OM_HALF_KEEP_ASKED,    /* the caller asked to keep it float32 (in: set by the caller) */
	OM_HALF_KEEP_STORED,   /* kept float32 too, but its weights may be stored in half (in:
				  set by the caller; see om_half_convert); out: some are, else
				  OM_HALF_KEEP_ASKED */
	OM_HALF_KEEP_TYPE,     /* ONNX's type constraints at the model's opset admit no half
				  type where it has float32 (or the op is not ai.onnx's) */
	OM_HALF_KEEP_SUBGRAPH, /* it runs subgraphs: bodies stay float32 as a whole */
	OM_HALF_KEEP_QDQ,      /* a quantize/dequantize node: quantized parts never change */
	OM_HALF_KEEP_UNTYPED,  /* an input or output of unknown element type */
	OM_HALF_KEEP_INFER     /* its row infers another output type than the conversion's */
};

/**
 * Converts m's main graph to compute in `dtype` (OM_FLOAT16 or OM_BFLOAT16), in place. The
 * main graph must be in topological order; why[i] (one entry per node of it, as it is on entry)
 * is OM_HALF_KEEP_ASKED for a node the caller keeps float32, OM_HALF_KEEP_STORED for one it
 * keeps float32 with half weights, and 0 otherwise, and receives what happened to node i. Converted nodes read and write the half type in every slot whose ONNX
 * type admits it (float32 initializers they read become half, values out of float16's range
 * clamped to +-65504; attributes that give an output type, `to` and `dtype` of float, and
 * float tensor attributes follow); kept nodes read float32. A float32 initializer of at least
 * OM_HALF_STORED_MIN elements, within the half type's range, that only converted nodes and
 * OM_HALF_KEEP_STORED nodes (in slots where their op admits the half type) read, is stored in
 * half too, and one Cast gives the latter its float32 form: the file shrinks as if they were
 * converted, while they compute in float32 on weights rounded once. Casts join the two; graph inputs
 * and outputs and values subgraphs read keep their names and float32. Integer, bool, double
 * and quantized values never change. When the rows' inference disagrees with the conversion
 * about a node's output type, that node is marked OM_HALF_KEEP_INFER and *redo set: the caller
 * converts a fresh copy again with it kept. *clamped counts initializer elements clamped.
 */
enum { OM_HALF_STORED_MIN = 64 }; /* below, the Cast costs about what half storage saves */

om_kind om_half_convert(om_model *m, int32_t dtype, uint8_t *why, bool *redo, int64_t *clamped,
			om_status *st);

/**
 * The way back: m's main graph computing in `from` (OM_FLOAT16 or OM_BFLOAT16) converted to
 * compute in float32, in place, by the same rules with the roles swapped: `from` values become
 * float32 in every slot of a converted node that holds them (an ai.onnx type constraint that
 * admits a half type admits float too), initializers of `from` that only converted nodes read
 * become float32, a `to`/`dtype` attribute of `from` (Cast to float16 inside the graph) becomes
 * float, tensor attributes follow; nodes whose op is no ai.onnx op, that run subgraphs, or
 * quantize/dequantize stay in `from` with Casts between. Graph inputs and outputs and values
 * subgraphs read keep their names and `from` (as om_half_convert keeps them float32). why[]
 * and *redo as om_half_convert's (OM_HALF_KEEP_ASKED keeps a node; no OM_HALF_KEEP_STORED).
 */
om_kind om_half_widen(om_model *m, int32_t from, uint8_t *why, bool *redo, om_status *st);

/** The float32 copy of a float16 or bfloat16 tensor into m's arena. NULL when out of memory. */
om_tensor *om_float_tensor(om_model *m, const om_tensor *t);

/** The half-precision copy of a float32 tensor (dtype OM_FLOAT16 or OM_BFLOAT16) into m's
 *  arena, finite values beyond the type's range clamped to its largest finite value (the
 *  count added to *clamped). NULL when out of memory. */
om_tensor *om_half_tensor(om_model *m, const om_tensor *t, int32_t dtype, int64_t *clamped);

#endif
