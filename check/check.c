/* check.c — om_check: two models on the same inputs, their outputs compared by name. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

void om_check_report_free(om_check_report *rep)
{
	if (!rep)
		return;
	free(rep->outputs);
	for (int i = 0; i < rep->nfailed_inputs; i++) {
		free(rep->failed_input_names[i]);
		om_tensor_free(&rep->failed_inputs[i]);
	}
	free(rep->failed_input_names);
	free(rep->failed_inputs);
	*rep = (om_check_report){.failed_run = -1};
}

void om_describe_run(char *buf, size_t size, int run, const char *desc, const char *kind,
		     const char *last_kind)
{
	size_t len = strlen(buf);
	if (len + 1 < size)
		len += (size_t)snprintf(buf + len, size - len, "%srun %d: %s", run ? "; " : "",
					run + 1, desc[0] ? desc : "static dims");
	if (kind[0] && strcmp(kind, last_kind) && len + 1 < size)
		snprintf(buf + len, size - len, "; random %s", kind);
}

om_kind om_check_outputs(om_session *sa, const om_tensor *oa, om_session *sb,
			 const om_inset *in, const om_check_options *opt, om_diff *diffs,
			 bool *failed, om_status *failure, om_status *st)
{
	om_tensor *ob = NULL;
	om_status stb = {0};
	int na = om_session_output_count(sa), nb = om_session_output_count(sb);
	om_kind rb = om_run_named(sb, in, &ob, &stb);
	if (rb == OM_ERR_NOMEM)
		return om_error(st, rb, NULL, "%s", stb.msg);
	if (rb && !failure->kind)
		*failure = stb;
	*failed = rb != OM_OK;
	om_kind rc = OM_OK;
	for (int i = 0; i < na && !rc; i++) {
		om_diff d = diffs[i];
		d.state = OM_DIFF_MISSING;
		d.max_abs = d.max_rel = 0;
		for (int j = 0; j < nb && !rb; j++)
			if (!strcmp(om_session_output_name(sb, j), om_session_output_name(sa, i)))
				rc = om_diff_values(&oa[i], &ob[j], opt->rtol, opt->atol, &d, st);
		om_diff_merge(&diffs[i], &d);
		*failed |= d.state != OM_DIFF_OK && d.state != OM_DIFF_SKIPPED;
	}
	om_outputs_free(ob, nb);
	return rc;
}

om_kind om_check(const om_model *original, const om_model *model,
		 const om_check_options *options, om_check_report *rep, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	om_status failure;
	return om_check_status(original, model, options, rep, &failure, st);
}

om_kind om_check_status(const om_model *original, const om_model *model,
			const om_check_options *options, om_check_report *rep, om_status *failure,
			om_status *st)
{
	*rep = (om_check_report){.failed_run = -1};
	*failure = (om_status){0};
	const om_check_options opt = om_check_defaults(options);
	rep->rtol = opt.rtol;
	rep->atol = opt.atol;
	om_session_options so = {.threads = opt.threads, .keep_half = 1};
	om_session *sa = NULL, *sb = NULL;
	om_kind rc = om_session_create(original, &so, &sa, st);
	if (!rc && om_session_create(model, &so, &sb, failure)) {
		if (failure->kind == OM_ERR_NOMEM)
			rc = om_error(st, failure->kind, NULL, "%s", failure->msg);
		/* otherwise a model omopt cannot plan fails the check, naming the node */
	}
	int na = sa ? om_session_output_count(sa) : 0;
	if (!rc && !(rep->outputs = calloc((size_t)(na ? na : 1), sizeof *rep->outputs)))
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int i = 0; i < na && !rc; i++) {
		om_diff *d = &rep->outputs[i];
		om_diff_name(d->name, sizeof d->name, om_session_output_name(sa, i));
		om_diff_producers(d, original, model);
		d->state = OM_DIFF_SKIPPED;
		d->rank = -1;
	}
	rep->noutputs = rc ? 0 : na;
	int attempt = 0;
	char last_kind[128] = "";
	/* every input given: each run would be the same one (but for overridable initializers) */
	const int runs = sa ? om_check_runs(sa, &opt) : opt.runs;
	for (int r = 0; r < runs && !rc; r++) {
		if (opt.progress) {
			char what[64];
			snprintf(what, sizeof what, "check run");
			opt.progress(opt.progress_user, what, r, runs);
		}
		om_inset in = {0};
		om_tensor *oa = NULL;
		char desc[512], kind[128];
		rc = om_reference_run(sa, &opt, r, true, &attempt, &in, &oa, desc, sizeof desc,
				      kind, sizeof kind, st);
		bool failed = false;
		if (!rc) {
			om_describe_run(rep->how, sizeof rep->how, r, desc, kind, last_kind);
			snprintf(last_kind, sizeof last_kind, "%s", kind);
			if (sb)
				rc = om_check_outputs(sa, oa, sb, &in, &opt, rep->outputs,
						      &failed, failure, st);
			for (int i = 0; i < na && !sb; i++)
				rep->outputs[i].state = OM_DIFF_MISSING;
			failed |= !sb;
			rep->runs++;
		}
		if (!rc && failed && rep->failed_run < 0) {
			rep->failed_run = r;
			rep->nfailed_inputs = in.n;
			rep->failed_input_names = in.names;
			rep->failed_inputs = in.t;
			in = (om_inset){0};
		}
		om_outputs_free(oa, na);
		om_inset_free(&in);
	}
	rep->passed = !rc && rep->failed_run < 0;
	if (failure->kind)
		om_check_format_error(failure, rep->error, sizeof rep->error);
	om_session_free(sa);
	om_session_free(sb);
	return rc;
}
