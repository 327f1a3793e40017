/*
 * bisect.c — om_bisect: om_simplify again, on a copy of the original, stopping after the first
 * pass whose model no longer passes the check; then om_compare between the original and that
 * model names the first value (and so the node) the pass changed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "omopt_testing.h"
#include "pass.h"

typedef struct bisect {
	const om_check_options *opt;
	om_session *sa;
	int na, nruns;
	om_inset *ins;    /* the reference runs: inputs */
	om_tensor **outs; /* and the original's outputs */
	om_bisect_report *rep;
	om_model *guilty; /* a copy of the model after the failing pass */
	int failed_run;
	om_diff failed_output;
} bisect;

/* Checks the model after one pass; on failure keeps a copy and stops the pipeline. */
static om_kind step(void *user, const om_model *m, int round, const char *pass, int changes,
		    bool *stop, om_status *st)
{
	(void)changes;
	bisect *b = user;
	b->rep->steps++;
	if (b->opt->progress) {
		char what[96];
		snprintf(what, sizeof what, "bisect round %d: %s", round, pass);
		b->opt->progress(b->opt->progress_user, what, b->rep->steps, 0);
	}
	om_model *copy;
	om_kind rc = om_model_clone(m, &copy, st);
	if (rc)
		return rc;
	om_session_options so = {.threads = b->opt->threads, .keep_half = 1};
	om_session *s = NULL;
	om_status ss = {0};
	bool failed = false;
	om_diff *diffs = calloc((size_t)(b->na ? b->na : 1), sizeof *diffs);
	if (!diffs)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	else if (om_session_create(copy, &so, &s, &ss)) {
		failed = true;
		om_check_format_error(&ss, b->rep->error, sizeof b->rep->error);
		om_diff_name(b->rep->first.node, sizeof b->rep->first.node, ss.node);
		om_diff_name(b->rep->first.op, sizeof b->rep->first.op, ss.op);
	}
	for (int i = 0; i < b->na && diffs; i++) {
		om_diff_name(diffs[i].name, sizeof diffs[i].name, om_session_output_name(b->sa, i));
		diffs[i].state = OM_DIFF_SKIPPED;
	}
	for (int r = 0; r < b->nruns && !rc && !failed; r++) {
		rc = om_check_outputs(b->sa, b->outs[r], s, &b->ins[r], b->opt, diffs, &failed,
				      &ss, st);
		b->failed_run = r;
	}
	if (s && ss.kind && !b->rep->error[0])
		om_check_format_error(&ss, b->rep->error, sizeof b->rep->error);
	for (int i = 0; i < b->na && failed && s; i++)
		if (diffs[i].state != OM_DIFF_OK && diffs[i].state != OM_DIFF_SKIPPED) {
			b->failed_output = diffs[i];
			break;
		}
	free(diffs);
	om_session_free(s);
	if (rc || !failed) {
		om_model_free(copy);
		return rc;
	}
	b->rep->found = 1;
	b->rep->round = round;
	om_diff_name(b->rep->pass, sizeof b->rep->pass, pass);
	b->guilty = copy;
	*stop = true;
	return OM_OK;
}

/* The first differing value, from om_compare on the failing run's inputs. */
static om_kind name_value(bisect *b, const om_model *original, om_status *st)
{
	const om_inset *in = &b->ins[b->failed_run];
	om_check_options o = *b->opt;
	o.input_names = (const char *const *)in->names;
	o.inputs = in->t;
	o.ninputs = in->n;
	om_compare_report cr;
	om_kind rc = om_compare(original, b->guilty, &o, &cr, st);
	if (!rc && cr.first_over >= 0)
		b->rep->first = cr.values[cr.first_over];
	else if (!rc && !b->rep->error[0]) /* no shared value differs: the output that did */
		b->rep->first = b->failed_output;
	if (!rc && !b->rep->error[0] && cr.error[0])
		memcpy(b->rep->error, cr.error, sizeof b->rep->error);
	om_compare_report_free(&cr);
	return rc;
}

om_kind om_bisect(const om_model *original, const om_simplify_options *sopt,
		  const om_check_options *copt, om_bisect_report *rep, om_status *st)
{
	return om_bisect_with_break(original, sopt, NULL, copt, rep, st);
}

om_kind om_bisect_with_break(const om_model *original, const om_simplify_options *sopt,
			     const char *break_pass, const om_check_options *copt,
			     om_bisect_report *rep, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	*rep = (om_bisect_report){0};
	const om_check_options opt = om_check_defaults(copt);
	bisect b = {.opt = &opt, .rep = rep, .nruns = opt.runs};
	om_session_options so = {.threads = opt.threads, .keep_half = 1};
	om_model *work = NULL;
	om_kind rc = om_session_create(original, &so, &b.sa, st);
	if (!rc) {
		b.na = om_session_output_count(b.sa);
		b.nruns = om_check_runs(b.sa, &opt); /* om_check's runs */
		b.ins = calloc((size_t)b.nruns, sizeof *b.ins);
		b.outs = calloc((size_t)b.nruns, sizeof *b.outs);
		if (!b.ins || !b.outs)
			rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	int attempt = 0;
	for (int r = 0; r < b.nruns && !rc; r++) {
		char desc[512], kind[128];
		rc = om_reference_run(b.sa, &opt, r, true, &attempt, &b.ins[r], &b.outs[r],
				      desc, sizeof desc, kind, sizeof kind, st);
	}
	if (!rc)
		rc = om_model_clone(original, &work, st);
	om_simplify_options so2 = sopt ? *sopt : (om_simplify_options){0};
	so2.progress = NULL; /* the steps report progress (opt.progress) */
	if (!rc)
		rc = om_simplify_steps(work, &so2, break_pass, step, &b, st);
	if (!rc && b.guilty)
		rc = name_value(&b, original, st);
	for (int r = 0; r < b.nruns && b.ins; r++) {
		om_inset_free(&b.ins[r]);
		om_outputs_free(b.outs[r], b.na);
	}
	free(b.ins);
	free(b.outs);
	om_model_free(b.guilty);
	om_model_free(work);
	om_session_free(b.sa);
	return rc;
}
