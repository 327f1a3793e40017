/*
 * driver.c — the one pass driver: runs the registry's passes (pass_registry.c) of every level
 * up to the one asked for, each level to a fixed point; om_simplify is level 1, om_optimize
 * level 2 (docs/passes.md).
 *
 * Before the passes (pipeline_ends.c): functions inlined, input shapes applied, the model
 * checked and sorted, the sub-model cut out. Level 1 runs each pass on the main graph and then
 * inside every subgraph; after its rounds, the inferred shapes go to value_info
 * (pipeline_ends.c). Each further level opens a fresh side table and runs on the main graph.
 * Passes are skipped by name (`skip`, any level up to the one run; no_passes: all of level
 * 1); the verifier can run after every pass; verbose mode prints each pass's change count;
 * om_simplify_steps calls a function after every pass that changed something (om_bisect runs
 * the model there). A test may ask for a deliberately wrong rewrite after a named level-1 pass
 * (om_simplify_with_break, test_break.c).
 *
 * Size: unless the user gave fold_max_bytes, folding may not make the saved model larger
 * (fold_qdq's folds excepted). The driver measures the saved size (om_model_saved_size) before
 * the first pass and before each run of a pass that may grow the model (OM_PASS_GROWS): what
 * the rewrites saved so far is that pass's slack. After level 1 it checks that the result is
 * not larger than the original and says so (-v) when it is.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "pass_registry.h"
#include "pipeline_ends.h"

/* What one om_pass_run carries from pass to pass. */
typedef struct run_state {
	om_pass_ctx *c;
	const om_simplify_options *opt;
	om_step_fn fn;
	void *user;
	const char *brk;     /* the pass after which om_test_break runs, or NULL */
	bool stop;           /* fn asked to stop */
	bool grow_rule;      /* folds may not make the saved model larger */
	size_t size0, size1; /* saved size (without value_info) before the passes, and lately */
	int64_t unmeasured;  /* changes since size1 was measured */
} run_state;

static double seconds_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

om_kind om_run_on(om_pass_ctx *c, om_pass_fn fn, om_graph *g, bool subgraphs, int *changes)
{
	om_outer_refs_reset(c); /* gathered again for each pass: subgraphs change between */
	om_kind rc = fn(c, g, changes);
	for (int32_t i = 0; subgraphs && i < g->nnodes && !rc; i++) {
		const om_node *n = g->nodes[i];
		for (int32_t a = 0; a < n->nattr && !rc; a++) {
			const om_attr *at = &n->attrs[a];
			if (at->g)
				rc = om_run_on(c, fn, at->g, true, changes);
			for (int64_t k = 0; at->graphs && k < at->n && !rc; k++)
				rc = om_run_on(c, fn, at->graphs[k], true, changes);
		}
	}
	return rc;
}

static bool skipped(const om_simplify_options *opt, const om_pass_row *r)
{
	if (opt->no_passes && r->level == OM_LEVEL_SIMPLIFY)
		return true;
	if (opt->exact && (r->flags & OM_PASS_ROUNDS))
		return true;
	for (const char *const *s = opt->skip; s && *s; s++)
		if (!strcmp(*s, r->name))
			return true;
	return false;
}

/* Every skip name a pass of a level up to `level`; brk (the break pass) one of level 1's. */
static om_kind check_names(const om_simplify_options *opt, const char *brk, int32_t level,
			   om_status *st)
{
	for (const char *const *s = opt->skip; s && *s; s++)
		if (!om_pass_find(*s, level))
			return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no pass named '%s'", *s);
	const om_pass_row *r = om_pass_find(brk, OM_LEVEL_SIMPLIFY);
	if (brk && (!r || skipped(opt, r)))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "test_break_pass: %s '%s'",
				r ? "skipped pass" : "no pass named", brk);
	return OM_OK;
}

/* Before a pass that may grow the model: its slack, from the saved size measured again when
 * something changed since. */
static om_kind give_slack(run_state *r, int round)
{
	const om_simplify_options *opt = r->opt;
	om_kind rc = OM_OK;
	if (r->unmeasured) {
		const double tm = opt->verbose ? seconds_now() : 0;
		rc = om_model_saved_size_without_value_info(r->c->m, &r->size1, r->c->st);
		r->unmeasured = 0;
		if (opt->verbose)
			fprintf(stderr, "simplify: round %d: saved size measured (%.3f s)\n", round,
				seconds_now() - tm);
	}
	r->c->slack = r->size1 < r->size0 ? (int64_t)(r->size0 - r->size1) : 0;
	return rc;
}

/* Runs pass p (index k of its level) of round `round`; adds its changes to *total. */
static om_kind run_pass(run_state *r, const om_pass_level *lv, const om_pass_row *p, int k,
			int nk, int round, int *total)
{
	const om_simplify_options *opt = r->opt;
	om_pass_ctx *c = r->c;
	if (opt->progress) {
		char what[64];
		snprintf(what, sizeof what, "%s round %d: %s", lv->name, round, p->name);
		opt->progress(opt->progress_user, what, k, nk);
	}
	om_kind rc = OM_OK;
	if (r->grow_rule && (p->flags & OM_PASS_GROWS) && (rc = give_slack(r, round)))
		return rc;
	int changes = 0;
	const double t0 = opt->verbose ? seconds_now() : 0;
	const bool subgraphs = (lv->flags & OM_ROUNDS_SUBGRAPHS) && !(p->flags & OM_PASS_OWN_SUBGRAPHS);
	rc = om_run_on(c, p->fn, c->m->graph, subgraphs, &changes);
	if (!rc && round == 1 && r->brk && !strcmp(r->brk, p->name))
		rc = om_test_break(c, c->m->graph, &changes);
	if (!rc && om_verify_wanted(opt))
		rc = om_verify_graph(c->m->graph, c->st);
	if (!rc && r->fn && changes)
		rc = r->fn(r->user, c->m, round, p->name, changes, &r->stop, c->st);
	if (opt->verbose)
		fprintf(stderr, "%s: round %d: %-20s %d change%s%s (%.3f s)\n", lv->name, round,
			p->name, changes, changes == 1 ? "" : "s", rc ? " (failed)" : "",
			seconds_now() - t0);
	*total += changes;
	r->unmeasured += changes;
	return rc;
}

/* The rows of `level` in rounds, to a fixed point or the level's round limit. */
static om_kind run_level(run_state *r, int32_t level)
{
	const om_pass_level *lv = om_pass_level_of(level);
	int32_t nrows;
	const om_pass_row *rows = om_pass_table(&nrows);
	int nk = 0;
	for (int32_t i = 0; i < nrows; i++)
		nk += rows[i].level == level;
	om_graph *g = r->c->m->graph;
	om_kind rc = OM_OK;
	for (int round = 1; round <= lv->rounds && !rc && !r->stop; round++) {
		int total = 0, ignored = 0, k = 0;
		if (lv->flags & OM_ROUNDS_INFER_FIRST)
			rc = om_pass_infer(r->c, g, &ignored);
		for (int32_t i = 0; i < nrows && !rc && !r->stop; i++) {
			if (rows[i].level != level)
				continue;
			if (!skipped(r->opt, &rows[i]))
				rc = run_pass(r, lv, &rows[i], k, nk, round, &total);
			k++;
		}
		if (!rc && total && (lv->flags & OM_ROUNDS_DEAD_LAST))
			rc = om_pass_dead(r->c, g, &ignored);
		if (r->opt->verbose)
			fprintf(stderr, "%s: round %d: %d nodes in the main graph\n", lv->name,
				round, g->nnodes);
		if (!total)
			break;
	}
	return rc;
}

/* Level 1 with what comes before and after it, in one side table. */
static om_kind run_simplify(run_state *r, om_model *m, const om_simplify_options *opt,
			    om_status *st)
{
	om_pass_ctx c;
	if (om_pass_ctx_open(&c, m, opt, st))
		return st->kind;
	r->c = &c;
	om_kind rc = OM_OK;
	if ((opt->inputs || opt->outputs) &&
	    (rc = om_extract_submodel(&c, opt->inputs, opt->outputs))) {
		om_pass_ctx_close(&c);
		return rc;
	}
	/* the size rule counts tensors and nodes, not the shapes written to value_info */
	r->grow_rule = !opt->fold_max_bytes && !opt->no_passes;
	if (r->grow_rule && (rc = om_model_saved_size_without_value_info(m, &r->size0, st))) {
		om_pass_ctx_close(&c);
		return rc;
	}
	/* the first pass that may grow the model follows infer_shapes, which only fills the
	 * side table: the saved size is still size0 */
	r->size1 = r->size0;
	rc = run_level(r, OM_LEVEL_SIMPLIFY);
	const double t_finish = opt->verbose ? seconds_now() : 0;
	rc = rc ? rc : om_pipeline_finish(&c, opt);
	if (opt->verbose)
		fprintf(stderr, "simplify: after the rounds (inference, value_info): %.3f s\n",
			seconds_now() - t_finish);
	om_pass_ctx_close(&c);
	r->c = NULL;
	/* only said (-v): a model that cannot be measured fails when it is saved */
	size_t size1 = r->size1;
	if (!rc && r->grow_rule && opt->verbose)
		rc = om_model_saved_size_without_value_info(m, &size1, st);
	if (!rc && r->grow_rule && opt->verbose)
		fprintf(stderr, "simplify: saved size without value_info %zu -> %zu bytes%s\n",
			r->size0, size1,
			size1 <= r->size0 ? ""
			: opt->fold_qdq   ? " (larger: fold_qdq)"
					  : " (larger than the original)");
	return rc;
}

/* Runs the passes of levels 1 .. level on m. */
static om_kind om_pass_run(om_model *m, int32_t level, const om_simplify_options *user_opt,
			   const char *brk, om_step_fn fn, void *user, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	om_simplify_options opt = {0};
	if (user_opt)
		opt = *user_opt;
	if (level > OM_LEVEL_SIMPLIFY)
		opt.no_value_info = 1; /* for running: later levels would leave part of it stale */
	om_kind rc = check_names(&opt, brk, level, st);
	if (!rc)
		rc = om_pipeline_prepare(m, &opt, st);
	run_state r = {.opt = &opt, .fn = fn, .user = user, .brk = brk};
	int32_t held = 0; /* values Gradient nodes name, kept as outputs (lower_gradient.c) */
	if (!rc)
		rc = om_gradient_hold(m, &held, st);
	if (!rc)
		rc = run_simplify(&r, m, &opt, st);
	for (int32_t l = OM_LEVEL_SIMPLIFY + 1; l <= level && !rc && !r.stop; l++) {
		om_pass_ctx c;
		if (om_pass_ctx_open(&c, m, &opt, st)) {
			rc = st->kind;
			break;
		}
		r.c = &c;
		rc = run_level(&r, l);
		om_pass_ctx_close(&c);
	}
	om_gradient_release(m, held);
	return rc;
}

om_kind om_simplify_steps(om_model *m, const om_simplify_options *opt, const char *break_pass,
			  om_step_fn fn, void *user, om_status *st)
{
	return om_pass_run(m, OM_LEVEL_SIMPLIFY, opt, break_pass, fn, user, st);
}

om_kind om_simplify(om_model *m, const om_simplify_options *opt, om_status *st)
{
	return om_pass_run(m, OM_LEVEL_SIMPLIFY, opt, NULL, NULL, NULL, st);
}

om_kind om_optimize(om_model *m, const om_simplify_options *opt, om_status *st)
{
	return om_pass_run(m, OM_LEVEL_OPTIMIZE, opt, NULL, NULL, NULL, st);
}
