/*
 * simplify.c — the om_simplify pass pipeline (see docs/passes.md). One screen:
 *
 *     infer_shapes → fold_constants → fold_shape_chains → inline_if → eliminate_identities
 *                  → fuse_transposes → fuse_pad → fuse_conv_bn
 *                  → fuse_conv_affine → fuse_matmul_add
 *                  → merge_common → eliminate_dead   (to a fixed point)
 *
 * Each pass rewrites one graph; the driver runs it on the main graph and then inside every
 * subgraph (If/Loop/Scan bodies). Passes can be skipped by name; the verifier can run after
 * every pass; verbose mode prints each pass's change count; om_simplify_steps calls a function
 * after every pass that changed something (om_bisect runs the model there). A test may ask for
 * a deliberately wrong rewrite after a named pass (test_break_pass, passes/test_break.c).
 *
 * Size: unless the user gave fold_max_bytes, folding may not make the saved model larger
 * (fold_qdq's folds excepted). The driver measures the saved size (om_model_saved_size) before the first pass and
 * before each fold_constants run: what the rewrites saved so far is the fold pass's slack.
 * After the last round it checks that the result is not larger than the original and says so
 * (-v) when it is. The inferred shapes are then written to value_info only as far as the
 * saved model, with them, stays within the size of the model as given (value_info_fit.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "inline.h"
#include "registry.h"
#include "pass.h"

static const struct {
	const char *name;
	om_pass_fn fn;
} pipeline[] = {
	{"infer_shapes", om_pass_infer},
	{"fold_constants", om_pass_fold},
	{"fold_shape_chains", om_pass_shape_chains},
	{"inline_if", om_pass_inline_if},
	{"eliminate_identities", om_pass_identities},
	{"fuse_transposes", om_pass_transposes},
	{"fuse_pad", om_pass_fuse_pad},
	{"fuse_conv_bn", om_pass_fuse_conv_bn},
	{"fuse_conv_affine", om_pass_fuse_conv_affine},
	{"fuse_matmul_add", om_pass_fuse_matmul_add},
	{"merge_common", om_pass_common},
	{"eliminate_dead", om_pass_dead},
};

enum { NPASSES = sizeof pipeline / sizeof pipeline[0], MAX_ROUNDS = 10 };

const char *om_simplify_pass_name(int i)
{
	return i >= 0 && i < NPASSES ? pipeline[i].name : NULL;
}

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool skipped(const om_simplify_options *opt, const char *name)
{
	if (opt->no_passes)
		return true;
	for (const char *const *s = opt->skip; s && *s; s++)
		if (!strcmp(*s, name))
			return true;
	return false;
}

/* Runs fn on g, then on every subgraph of g's nodes (after g, so they see g's results). */
static om_kind run_on(om_pass_ctx *c, om_pass_fn fn, om_graph *g, int *changes)
{
	om_outer_refs_reset(c); /* gathered again for each pass: subgraphs change between */
	om_kind rc = fn(c, g, changes);
	for (int32_t i = 0; i < g->nnodes && !rc; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr && !rc; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g)
				rc = run_on(c, fn, at->g, changes);
			for (int64_t k = 0; at->graphs && k < at->n && !rc; k++)
				rc = run_on(c, fn, at->graphs[k], changes);
		}
	}
	return rc;
}

/* After the passes: unused optional outputs dropped (when asked), then the inferred types
 * written to value_info (unless asked not to), on every graph: as many as keep the saved
 * model within `limit` bytes (0: no limit). */
static om_kind finish(om_pass_ctx *c, const om_simplify_options *opt, size_t limit)
{
	int changes = 0;
	om_kind rc = OM_OK;
	if (opt->drop_unused_outputs)
		rc = run_on(c, om_pass_drop_outputs, c->m->graph, &changes);
	if (opt->verbose && opt->drop_unused_outputs)
		fprintf(stderr, "simplify: %d unused optional output%s dropped\n", changes,
			changes == 1 ? "" : "s");
	if (rc || (opt->no_value_info && !opt->n_input_shapes))
		return rc;
	changes = 0;
	rc = run_on(c, om_pass_infer, c->m->graph, &changes);
	/* the user fixed input shapes: output dims that follow from them become numbers */
	if (!rc && opt->n_input_shapes)
		rc = om_refine_outputs(c, c->m->graph, &changes);
	if (rc || opt->no_value_info)
		return rc;
	changes = 0;
	om_vi_marks mk;
	rc = om_vi_marks_take(c, &mk);
	if (!rc)
		rc = run_on(c, om_pass_value_info, c->m->graph, &changes);
	int64_t kept = 0, added = 0;
	size_t bytes = 0;
	if (!rc && limit)
		rc = om_vi_fit(c, &mk, limit, &kept, &added, &bytes);
	if (!rc && om_verify_wanted(opt))
		rc = om_verify_graph(c->m->graph, c->st);
	if (opt->verbose)
		fprintf(stderr, "simplify: value_info: %d value%s typed\n", changes,
			changes == 1 ? "" : "s");
	if (opt->verbose && kept < added)
		fprintf(stderr, "simplify: value_info: %lld of %lld new entries written: with "
				"more, the model would be larger than the original (%zu bytes; "
				"all_value_info writes them all)\n",
			(long long)kept, (long long)added, limit);
	return rc;
}

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

static bool known(const char *name)
{
	for (int i = 0; i < NPASSES; i++)
		if (!strcmp(pipeline[i].name, name))
			return true;
	return false;
}

om_kind om_simplify(om_model *m, const om_simplify_options *opt, om_status *st)
{
	return om_simplify_steps(m, opt, NULL, NULL, st);
}

om_kind om_simplify_steps(om_model *m, const om_simplify_options *opt, om_step_fn fn,
			  void *user, om_status *st)
{
	om_simplify_options dflt = {0};
	if (!opt)
		opt = &dflt;
	for (const char *const *s = opt->skip; s && *s; s++)
		if (!known(*s))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no pass named '%s'", *s);
	const char *brk = opt->test_break_pass;
	if (brk && (!known(brk) || skipped(opt, brk)))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "test_break_pass: %s '%s'",
				known(brk) ? "skipped pass" : "no pass named", brk);
	if (!m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	om_kind rc = OM_OK;
	int inlined = 0;
	if (!opt->keep_functions && (rc = om_onnx_inline_functions(m, &inlined, st)))
		return rc;
	if (opt->verbose && inlined)
		fprintf(stderr, "simplify: %d function call%s inlined\n", inlined,
			inlined == 1 ? "" : "s");
	if ((rc = om_apply_input_shapes(m, opt->input_shapes, opt->n_input_shapes, st)))
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
	if (rc)
		return rc;
	om_pass_ctx c;
	if (om_pass_ctx_open(&c, m, opt, st))
		return st->kind;
	if ((opt->inputs || opt->outputs) &&
	    (rc = om_extract_submodel(&c, opt->inputs, opt->outputs))) {
		om_pass_ctx_close(&c);
		return rc;
	}
	const bool grow_rule = !opt->fold_max_bytes && !opt->no_passes;
	/* the written shapes may not make the model larger either, unless growth was allowed */
	const bool shapes_rule = !opt->fold_max_bytes && !opt->fold_qdq && !opt->no_value_info &&
				 !opt->all_value_info;
	size_t size0 = 0, size1 = 0, size_given = 0;
	if ((grow_rule && (rc = om_model_saved_size_without_value_info(m, &size0, st))) ||
	    (shapes_rule && (rc = om_model_saved_size(m, &size_given, st)))) {
		om_pass_ctx_close(&c);
		return rc;
	}
	bool stop = false;
	/* changes since the saved size was last measured: none (the first fold_constants
	 * follows infer_shapes, which only fills the side table) and it is still size0 */
	int64_t unmeasured = 0;
	size1 = size0;
	for (int round = 1; round <= MAX_ROUNDS && !rc && !stop; round++) {
		int total = 0;
		for (int p = 0; p < NPASSES && !rc && !stop; p++) {
			if (skipped(opt, pipeline[p].name))
				continue;
			if (opt->progress) {
				char what[64];
				snprintf(what, sizeof what, "simplify round %d: %s", round,
					 pipeline[p].name);
				opt->progress(opt->progress_user, what, p, NPASSES);
			}
			int changes = 0;
			if (grow_rule && pipeline[p].fn == om_pass_fold && unmeasured) {
				const double tm = opt->verbose ? seconds_now() : 0;
				rc = om_model_saved_size_without_value_info(m, &size1, st);
				unmeasured = 0;
				if (opt->verbose)
					fprintf(stderr, "simplify: round %d: saved size measured "
						"(%.3f s)\n", round, seconds_now() - tm);
			}
			if (grow_rule && pipeline[p].fn == om_pass_fold) {
				c.slack = size1 < size0 ? (int64_t)(size0 - size1) : 0;
				if (rc)
					break;
			}
			const double t0 = opt->verbose ? seconds_now() : 0;
			rc = run_on(&c, pipeline[p].fn, m->graph, &changes);
			if (!rc && round == 1 && brk && !strcmp(brk, pipeline[p].name))
				rc = om_test_break(&c, m->graph, &changes);
			if (!rc && om_verify_wanted(opt))
				rc = om_verify_graph(m->graph, st);
			if (!rc && fn && changes)
				rc = fn(user, m, round, pipeline[p].name, changes, &stop, st);
			if (opt->verbose)
				fprintf(stderr, "simplify: round %d: %-20s %d change%s%s (%.3f s)\n",
					round, pipeline[p].name, changes, changes == 1 ? "" : "s",
					rc ? " (failed)" : "", seconds_now() - t0);
			total += changes;
			unmeasured += changes;
		}
		if (opt->verbose)
			fprintf(stderr, "simplify: round %d: %d nodes in the main graph\n", round,
				m->graph->nnodes);
		if (!total)
			break;
	}
	const double t_finish = opt->verbose ? seconds_now() : 0;
	rc = rc ? rc : finish(&c, opt, size_given);
	if (opt->verbose)
		fprintf(stderr, "simplify: after the rounds (inference, value_info): %.3f s\n",
			seconds_now() - t_finish);
	om_pass_ctx_close(&c);
	/* only said (-v): a model that cannot be measured fails when it is saved */
	if (!rc && grow_rule && opt->verbose)
		rc = om_model_saved_size_without_value_info(m, &size1, st);
	if (!rc && grow_rule && opt->verbose)
		fprintf(stderr, "simplify: saved size without value_info %zu -> %zu bytes%s\n",
			size0, size1,
			size1 <= size0	? ""
			: opt->fold_qdq ? " (larger: fold_qdq)"
					: " (larger than the original)");
	if (!rc && shapes_rule && opt->verbose)
		rc = om_model_saved_size(m, &size1, st);
	if (!rc && shapes_rule && opt->verbose)
		fprintf(stderr, "simplify: saved size %zu -> %zu bytes\n", size_given, size1);
	return rc;
}
