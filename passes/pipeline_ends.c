/* pipeline_ends.c — what the pass driver does before the first pass and after level 1's
 * rounds (see pipeline_ends.h). */
#include <stdio.h>

#include "inline.h"
#include "registry.h"
#include "pipeline_ends.h"

static om_kind sort_all(om_graph *g, om_status *st)
{
	om_kind rc = om_graph_toposort(g, st);
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr && !rc; a++) {
			if (n->attrs[a].g)
				rc = sort_all(n->attrs[a].g, st);
			for (int64_t k = 0; n->attrs[a].graphs && k < n->attrs[a].n && !rc; k++)
				rc = sort_all(n->attrs[a].graphs[k], st);
		}
	}
	return rc;
}

om_kind om_pipeline_prepare(om_model *m, const om_simplify_options *opt, om_status *st)
{
	if (!m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	om_kind rc = OM_OK;
	int inlined = 0;
	if (!opt->keep_functions && (rc = om_onnx_inline_functions(m, &inlined, st)))
		return rc;
	if (opt->verbose && inlined)
		fprintf(stderr, "simplify: %d function call%s inlined\n", inlined,
			inlined == 1 ? "" : "s");
	if ((rc = om_apply_input_shapes(m, opt->input_shapes, opt->n_input_shapes,
					 opt->overwrite_fixed_dims, st)))
		return rc;
	/* a model built in memory has not met the loader's checks: arity and attributes first */
	rc = om_model_check(m, st);
	if (!rc)
		rc = sort_all(m->graph, st);
	if (!rc && om_verify_wanted(opt) && om_verify_graph(m->graph, st)) {
		/* broken before any pass ran: the model's fault, not a pass's */
		char msg[sizeof st->msg];
		snprintf(msg, sizeof msg, "%s", st->msg);
		snprintf(st->msg, sizeof st->msg, "before simplify: %.480s", msg);
		st->kind = rc = OM_ERR_INVALID_MODEL;
	}
	return rc;
}

om_kind om_pipeline_finish(om_pass_ctx *c, const om_simplify_options *opt)
{
	int changes = 0;
	om_kind rc = OM_OK;
	if (opt->drop_unused_outputs)
		rc = om_run_on(c, om_pass_drop_outputs, c->m->graph, true, &changes);
	if (opt->verbose && opt->drop_unused_outputs)
		fprintf(stderr, "simplify: %d unused optional output%s dropped\n", changes,
			changes == 1 ? "" : "s");
	if (rc || (opt->no_value_info && !opt->n_input_shapes))
		return rc;
	changes = 0;
	rc = om_pass_infer(c, c->m->graph, &changes); /* subgraphs too (infer.c) */
	/* output dims that inference knows (from the declared or the user's input shapes) */
	if (!rc)
		rc = om_declare_outputs(c, c->m->graph, &changes);
	if (rc || opt->no_value_info)
		return rc;
	changes = 0;
	rc = om_run_on(c, om_pass_value_info, c->m->graph, true, &changes);
	if (!rc && om_verify_wanted(opt))
		rc = om_verify_graph(c->m->graph, c->st);
	if (opt->verbose)
		fprintf(stderr, "simplify: value_info: %d value%s typed\n", changes,
			changes == 1 ? "" : "s");
	return rc;
}
