/*
 * pipeline_ends.h — what the pass driver (driver.c) does before the first pass and after the
 * last of level 1 (passes/pipeline_ends.c).
 */
#ifndef OM_PIPELINE_ENDS_H
#define OM_PIPELINE_ENDS_H

#include "pass.h"

/** Before the passes: OM_ERR_INVALID_MODEL for a model without a graph; model-local functions
 *  inlined (unless opt->keep_functions), the input shapes applied, the model checked (arity,
 *  attributes: it may have been built in memory), every graph sorted, and the verifier run
 *  when wanted (a model it rejects is OM_ERR_INVALID_MODEL: not a pass's fault). */
om_kind om_pipeline_prepare(om_model *m, const om_simplify_options *opt, om_status *st);

/** After level 1's rounds: unused optional outputs dropped (drop_unused_outputs), then the
 *  inferred types written to value_info (unless no_value_info), on every graph, as many as
 *  keep the saved model within `limit` bytes (0: no limit); with input shapes given, output
 *  dims that follow from them become numbers. */
om_kind om_pipeline_finish(om_pass_ctx *c, const om_simplify_options *opt);

#endif
