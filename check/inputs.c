/*
 * inputs.c — the inputs of om_check's runs (the rules are in omopt.h) and the first model's
 * runs on them: dims bound by symbol, given inputs fed as they are, random ones for the rest,
 * and the next kind of random inputs while the model rejects them. Overridable initializers
 * (an IR >= 4 model's inputs that have an initializer) take their defaults in even runs and
 * random values in odd ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "session.h"

enum { MAX_SYMS = 64, NATTEMPTS = 6, INT_HI = 16, INT_HI_SMALL = 2 };

/* The value of a free symbol: v = 1 + (run + k) % 4 for the k-th symbol; a non-batch symbol
 * takes 32 v at attempts 2 and 3 (image sizes the network's stride divides) and 256 + 64 (v - 1)
 * at attempts 4 and 5 (at least a window of an audio model, not much more); an image's height
 * or width (spatial) takes 32 v from the first attempt on. */
static int64_t sym_value(int run, int k, int attempt, bool batch, bool spatial)
{
	int64_t v = 1 + (run + k) % 4;
	if (batch || (attempt < 2 && !spatial))
		return v;
	return attempt < 4 ? 32 * v : 256 + 64 * (v - 1);
}

/* The symbols of a session's inputs: a dim_param, or "name:d" for a dim without one. */
typedef struct symtab {
	int n;
	char name[MAX_SYMS][160];
	int64_t value[MAX_SYMS]; /* -1: free */
	bool batch[MAX_SYMS];    /* at dim 0 of some input */
	bool spatial[MAX_SYMS];  /* at a dim >= 2 of an image input (mark_spatial) */
} symtab;

void om_inset_free(om_inset *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->names[i]);
		om_tensor_free(&s->t[i]);
	}
	free(s->names);
	free(s->t);
	*s = (om_inset){0};
}

void om_outputs_free(om_tensor *out, int n)
{
	for (int i = 0; out && i < n; i++)
		om_value_free(&out[i]);
	free(out);
}

void om_check_format_error(const om_status *st, char *buf, size_t size)
{
	om_status_format(st, buf, size);
}

om_check_options om_check_defaults(const om_check_options *opt)
{
	om_check_options o = opt ? *opt : (om_check_options){0};
	if (o.runs < 1)
		o.runs = 1;
	if (!o.seed)
		o.seed = 0x6f6d6f7074; /* "omopt" */
	if (o.rtol <= 0)
		o.rtol = 1e-4;
	if (o.atol <= 0)
		o.atol = 1e-5;
	if (o.threads < 1)
		o.threads = 1;
	return o;
}

static void sym_key(const om_io_info *io, int d, char *key, size_t size)
{
	if (io->dim_params[d])
		snprintf(key, size, "%s", io->dim_params[d]);
	else
		snprintf(key, size, "%s:%d", io->name, d);
}

static int sym_find(symtab *t, const char *key, bool batch)
{
	for (int k = 0; k < t->n; k++)
		if (!strcmp(t->name[k], key)) {
			t->batch[k] |= batch;
			return k;
		}
	if (t->n == MAX_SYMS)
		return -1;
	snprintf(t->name[t->n], sizeof t->name[t->n], "%s", key);
	t->value[t->n] = -1;
	t->batch[t->n] = batch;
	return t->n++;
}

/* The session's inputs: the required ones, then the overridable initializers (omopt.h). */
static int all_inputs(const om_session *s)
{
	return om_session_input_count(s) + om_session_overridable_count(s);
}

static int given_index(const om_check_options *opt, const char *name)
{
	for (int k = 0; k < opt->ninputs; k++)
		if (!strcmp(opt->input_names[k], name))
			return k;
	return -1;
}

/* Reads s's input infos, checks the given inputs against them and binds their symbols. */
static om_kind bind_given(om_session *s, const om_check_options *opt, om_io_info *io,
			  symtab *t, om_status *st)
{
	int n = all_inputs(s);
	for (int k = 0; k < opt->ninputs; k++) {
		int i = 0;
		while (i < n && strcmp(om_session_input_name(s, i), opt->input_names[k]))
			i++;
		if (i == n) {
			char names[256] = "none";
			size_t at = 0;
			for (int j = 0; j < n && at < sizeof names; j++) {
				int w = snprintf(names + at, sizeof names - at, "%s%s",
						 j ? ", " : "", om_session_input_name(s, j));
				at += w < 0 ? sizeof names : (size_t)w;
			}
			if (at >= sizeof names)
				memcpy(names + sizeof names - 4, "...", 4);
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"the model has no input '%s' to feed (its inputs: %s)",
					opt->input_names[k], names);
		}
	}
	for (int i = 0; i < n; i++) {
		om_kind rc = om_session_input_info(s, i, &io[i], st);
		if (rc)
			return rc;
		for (int d = 0; d < io[i].rank; d++) {
			char key[160];
			sym_key(&io[i], d, key, sizeof key);
			if (io[i].dims[d] < 0 && sym_find(t, key, d == 0) < 0)
				return om_error(st, OM_ERR_UNSUPPORTED, NULL,
						"more than %d symbolic dims in the inputs", MAX_SYMS);
		}
	}
	for (int i = 0; i < n; i++) {
		int g = given_index(opt, io[i].name);
		if (g < 0)
			continue;
		const om_tensor *v = &opt->inputs[g];
		bool tensor = io[i].kind == 0;
		if (tensor && io[i].elem && v->dtype != io[i].elem)
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"input '%s' is %s, the model wants %s", io[i].name,
					om_dtype_name(v->dtype), om_dtype_name(io[i].elem));
		if (!tensor || io[i].rank < 0)
			continue;
		if (v->rank != io[i].rank)
			return om_error(st, OM_ERR_INVALID_INPUT, NULL,
					"input '%s' has rank %d, the model wants %d", io[i].name,
					(int)v->rank, (int)io[i].rank);
		for (int d = 0; d < io[i].rank; d++) {
			char key[160];
			sym_key(&io[i], d, key, sizeof key);
			if (io[i].dims[d] >= 0)
				continue;
			int k = sym_find(t, key, false);
			if (t->value[k] >= 0 && t->value[k] != v->dims[d])
				return om_error(st, OM_ERR_INVALID_INPUT, NULL,
						"input '%s' dim %d is %lld, but '%s' is %lld in "
						"another given input", io[i].name, d,
						(long long)v->dims[d], key, (long long)t->value[k]);
			t->value[k] = v->dims[d];
		}
	}
	return OM_OK;
}

enum { MAX_REACH = 16 };

/* Whether a channels-first op (OM_OP_LAYOUT: Conv, pooling, Resize, ...) reads graph input
 * `name` as its input 0, directly or through element-wise ops (a normalization, a Cast). */
static bool feeds_layout_op(const om_session *s, const char *name)
{
	const char *reach[MAX_REACH] = {name};
	int nr = 1;
	for (int i = 0; i < om_session_node_count(s); i++) {
		const om_node_info ni = om_session_node_info(s, i);
		const om_node *n = ni.node;
		bool reads = false;
		for (int r = 0; n->nin >= 1 && n->in[0] && r < nr && !reads; r++)
			reads = !strcmp(n->in[0]->name, reach[r]);
		if (!reads || ni.folded || !ni.op)
			continue;
		if (ni.op->flags & OM_OP_LAYOUT)
			return true;
		if ((ni.op->flags & OM_OP_ELEMENTWISE) && n->nout >= 1 && n->out[0] &&
		    nr < MAX_REACH)
			reach[nr++] = n->out[0]->name;
	}
	return false;
}

/* Marks the symbols at dims >= 2 of the inputs a channels-first op reads: an image's height
 * and width, where the small sizes of other symbols would leave a CNN a few pixels, most of
 * them padding, and outputs far in an activation's tail. */
static void mark_spatial(const om_session *s, const om_io_info *io, int n, symtab *t)
{
	for (int i = 0; i < n; i++) {
		if (io[i].kind != 0 || io[i].rank < 3 || !feeds_layout_op(s, io[i].name))
			continue;
		for (int d = 2; d < io[i].rank; d++) {
			char key[160];
			sym_key(&io[i], d, key, sizeof key);
			const int k = io[i].dims[d] < 0 ? sym_find(t, key, false) : -1;
			if (k >= 0)
				t->spatial[k] = true;
		}
	}
}

static om_kind copy_tensor(om_tensor *dst, const om_tensor *src, om_status *st)
{
	om_kind rc = om_tensor_alloc(dst, src->dtype, src->rank, src->dims, st);
	return rc ? rc : om_tensor_copy_data(dst, src, st);
}
/* Whether an overridable initializer takes random values in the runs that override: not given,
 * and declared as a tensor of a rank and an element type om_random_fill makes (else it keeps
 * its default in every run). */
static bool can_override(const om_check_options *opt, const om_io_info *io)
{
	return given_index(opt, io->name) < 0 && io->kind == 0 && io->rank >= 0 &&
	       om_random_type(io->elem);
}

int om_check_runs(const om_session *s, const om_check_options *opt)
{
	const int nreq = om_session_input_count(s), n = all_inputs(s);
	int given = 0, random_defaults = 0;
	for (int i = 0; i < n; i++) {
		om_io_info io;
		om_status st = {0};
		if (i < nreq)
			given += given_index(opt, om_session_input_name(s, i)) >= 0;
		else if (!om_session_input_info(s, i, &io, &st) && can_override(opt, &io))
			random_defaults++;
	}
	if (given == nreq) /* every required input given: a run, and one overriding */
		return random_defaults ? 2 : 1;
	return random_defaults && opt->runs < 2 ? 2 : opt->runs;
}

/* The inputs of one run at one attempt; desc gets the symbols' values. With `override`, the
 * overridable initializers can_override takes are fed random values; otherwise (and those it
 * does not take) they are not in *in: their defaults. */
static om_kind make_inputs(om_session *s, const om_check_options *opt, const om_io_info *io,
			   const symtab *bound, int run, int attempt, bool override, om_inset *in,
			   char *desc, size_t ndesc, char *kind, size_t nkind, om_status *st)
{
	const int nreq = om_session_input_count(s), n = all_inputs(s);
	const int64_t int_hi = attempt & 1 ? INT_HI_SMALL : INT_HI;
	symtab t = *bound;
	size_t len = 0;
	desc[0] = 0;
	for (int k = 0; k < t.n; k++) {
		bool given = t.value[k] >= 0;
		if (!given)
			t.value[k] = sym_value(run, k, attempt, t.batch[k], t.spatial[k]);
		if (len < ndesc)
			len += (size_t)snprintf(desc + len, ndesc - len, "%s%s=%lld%s",
						len ? " " : "", t.name[k],
						(long long)t.value[k], given ? " (given)" : "");
	}
	in->names = calloc((size_t)(n ? n : 1), sizeof *in->names);
	in->t = calloc((size_t)(n ? n : 1), sizeof *in->t);
	if (!in->names || !in->t)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	bool random = false;
	char fed[96] = ""; /* the overridable initializers fed random values, for `kind` */
	size_t nfed = 0;
	for (int i = 0; i < n; i++) {
		const int g = given_index(opt, io[i].name);
		const bool overridable = i >= nreq;
		if (overridable && g < 0 && !(override && can_override(opt, &io[i])))
			continue; /* its default */
		const int at = in->n++;
		if (!(in->names[at] = strdup(io[i].name)))
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
		om_kind rc;
		if (g >= 0) {
			rc = copy_tensor(&in->t[at], &opt->inputs[g], st);
		} else if (io[i].kind != 0 || io[i].rank < 0) {
			return om_error(st, OM_ERR_UNSUPPORTED, NULL,
					"input '%s': no random value for %s (give it)", io[i].name,
					io[i].kind ? "a sequence, optional or map"
						   : "a tensor of undeclared rank");
		} else {
			int64_t dims[OM_MAX_RANK];
			for (int d = 0; d < io[i].rank; d++) {
				char key[160];
				sym_key(&io[i], d, key, sizeof key);
				dims[d] = io[i].dims[d] >= 0 ? io[i].dims[d]
							     : t.value[sym_find(&t, key, false)];
			}
			om_rng r = om_rng_for(opt->seed, (uint64_t)run, (uint64_t)i);
			rc = om_tensor_alloc(&in->t[at], io[i].elem, io[i].rank, dims, st);
			if (!rc)
				rc = om_random_fill(&in->t[at], &r, int_hi, io[i].name, st);
			random |= !overridable;
			if (overridable && nfed < sizeof fed) {
				const int w = snprintf(fed + nfed, sizeof fed - nfed, "%s%s",
						       nfed ? ", " : "", io[i].name);
				nfed += w < 0 ? sizeof fed : (size_t)w;
			}
		}
		if (rc)
			return rc;
	}
	if (nfed >= sizeof fed)
		memcpy(fed + sizeof fed - 4, "...", 4);
	kind[0] = 0;
	if (random && attempt >= 2)
		snprintf(kind, nkind, "floats N(0,1), integers in [0,%lld), non-batch dims %s",
			 (long long)int_hi, attempt < 4 ? "x32" : "256+64(v-1)");
	else if (random)
		snprintf(kind, nkind, "floats N(0,1), integers in [0,%lld)", (long long)int_hi);
	else if (fed[0])
		snprintf(kind, nkind, "floats N(0,1), integers in [0,%lld) for", (long long)int_hi);
	if (fed[0]) {
		const size_t k = strlen(kind);
		snprintf(kind + k, nkind - k, "%soverridable initializers %s",
			 random ? ", " : " ", fed);
	}
	return OM_OK;
}

om_kind om_run_named(om_session *s, const om_inset *in, om_tensor **out, om_status *st)
{
	const int nreq = om_session_input_count(s), n = all_inputs(s);
	const int nout = om_session_output_count(s);
	*out = NULL;
	const om_tensor **feed = calloc((size_t)(n ? n : 1), sizeof *feed);
	/* zeroed: an overridable initializer not fed takes its default (om_session_run) */
	om_tensor *args = calloc((size_t)(n ? n : 1), sizeof *args);
	om_tensor *res = calloc((size_t)(nout ? nout : 1), sizeof *res);
	om_kind rc = feed && args && res ? OM_OK
					 : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int i = 0; i < n && !rc; i++) {
		for (int k = 0; k < in->n && !feed[i]; k++)
			if (!strcmp(in->names[k], om_session_input_name(s, i)))
				feed[i] = &in->t[k];
		if (feed[i])
			args[i] = *feed[i];
		else if (i < nreq)
			rc = om_error(st, OM_ERR_INVALID_INPUT, NULL, "input '%s' is not fed",
				      om_session_input_name(s, i));
	}
	if (!rc)
		rc = om_session_run_values(s, args, n, res, nout, st);
	free(feed);
	free(args);
	if (rc) {
		om_outputs_free(res, nout);
		return rc;
	}
	*out = res;
	return OM_OK;
}

om_kind om_reference_run(om_session *s, const om_check_options *opt, int run, bool overrides,
			 int *attempt, om_inset *in, om_tensor **out, char *desc, size_t ndesc,
			 char *kind, size_t nkind, om_status *st)
{
	const int nreq = om_session_input_count(s), n = all_inputs(s);
	om_io_info *io = calloc((size_t)(n ? n : 1), sizeof *io);
	symtab *bound = calloc(1, sizeof *bound);
	om_kind rc = io && bound ? bind_given(s, opt, io, bound, st)
				 : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (!rc)
		mark_spatial(s, io, nreq, bound);
	bool free_syms = false;
	for (int k = 0; bound && k < bound->n; k++)
		free_syms |= bound->value[k] < 0;
	bool random_required = false, override = false;
	for (int i = 0; i < n && !rc; i++) {
		if (i < nreq)
			random_required |= given_index(opt, io[i].name) < 0;
		else
			override |= overrides && run % 2 == 1 && can_override(opt, &io[i]);
	}
	bool ok = false, defaults = false;
	om_status first = {0};
	/* a model that rejects every random value of its overridable initializers runs at their
	 * defaults (a second pass) */
	for (int pass = 0; pass < 2 && !rc && !ok; pass++) {
		if (pass) {
			if (!override)
				break;
			override = false;
			defaults = true;
			first = (om_status){0};
		}
		const bool random = random_required || override;
		for (int a = *attempt; a < NATTEMPTS && !rc; a++) {
			/* an attempt that changes nothing the inputs depend on is not made */
			if (a > *attempt && a >= 2 && !free_syms)
				continue;
			rc = make_inputs(s, opt, io, bound, run, a, override, in, desc, ndesc,
					 kind, nkind, st);
			if (!rc)
				rc = om_run_named(s, in, out, st);
			if (!rc) {
				*attempt = a;
				ok = true;
				break;
			}
			om_inset_free(in);
			if (!random || (rc != OM_ERR_INVALID_INPUT && rc != OM_ERR_INVALID_MODEL))
				break;
			if (!first.kind)
				first = *st; /* the plain random inputs' failure says the most */
			rc = OM_OK;
		}
	}
	if (ok && defaults) {
		const size_t k = strlen(kind);
		snprintf(kind + k, nkind - k, "%soverridable initializers at their defaults "
			 "(random values rejected)", k ? ", " : "");
	}
	if (!ok && !rc) {
		char msg[sizeof st->msg];
		om_status_format(&first, msg, sizeof msg);
		rc = om_error(st, first.kind, NULL, "the model does not run on random inputs "
				"(%.360s); give the inputs", msg);
	}
	free(io);
	free(bound);
	return rc;
}
