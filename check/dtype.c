/*
 * dtype.c — om_convert_dtype: a float32 model in float16/bfloat16 (passes/half_convert.c), with
 * the nodes that stay float32 chosen by measurement (omopt.h describes the steps): the float32
 * model run once per input set with every value kept, each converted node run alone on those
 * values rounded to the half type, which weights may be stored in half (also for nodes that
 * compute in float32), and the whole converted model checked against the float32 one, keeping
 * the worst nodes until the outputs pass. To float32 (widen): a half model's compute back in
 * float32, nothing to measure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval.h"
#include "half.h"
#include "half_convert.h"

enum { DEFAULT_RUNS = 2, DEFAULT_ROUNDS = 6 };

/* What a node's measurement found (largest over the runs). */
typedef struct local {
	double max_rel;
	int32_t reason; /* 0, OM_KEEP_OVERFLOW, OM_KEEP_INPUT_RANGE, OM_KEEP_RUN */
	char detail[256];
} local;

typedef struct job {
	const om_dtype_options *opt;
	om_check_options copt;
	om_model *orig;   /* the float32 model, sorted: node i here is node i of every copy */
	int32_t nn;
	uint8_t *why;     /* per node: enum om_half_why of the last conversion (keeps asked in) */
	uint8_t *keep;    /* per node: enum om_dtype_reason when kept by measurement, else 0 */
	uint8_t *store;   /* per node: 1 when, kept by measurement, it reads its weights stored
			     in half (choose_stored) */
	local *loc;
	om_status *st;
} job;

void om_dtype_report_free(om_dtype_report *rep)
{
	if (!rep)
		return;
	free(rep->kept);
	om_check_report_free(&rep->check);
	*rep = (om_dtype_report){0};
}

/* What the conversion is told of node i (choose_stored sets j->store). */
static uint8_t why_of(const job *j, int32_t i)
{
	return !j->keep[i] ? 0 : j->store[i] ? OM_HALF_KEEP_STORED : OM_HALF_KEEP_ASKED;
}

/* A copy of the float32 model converted with the keeps so far; *nodes (malloc'd) its nodes in
 * the original's order. The rows' inference disagreeing about a node keeps it and converts
 * again. */
static om_kind convert_copy(job *j, om_model **out, om_node ***nodes, int64_t *clamped)
{
	*out = NULL;
	*nodes = NULL;
	for (int tries = 0; tries <= j->nn; tries++) {
		for (int32_t i = 0; i < j->nn; i++)
			j->why[i] = why_of(j, i);
		om_model *c;
		om_kind rc = om_model_clone(j->orig, &c, j->st);
		if (rc)
			return rc;
		om_node **ns = malloc(sizeof *ns * (size_t)(j->nn + 1));
		if (!ns || c->graph->nnodes != j->nn) {
			free(ns);
			om_model_free(c);
			return om_error(j->st, ns ? OM_ERR_INTERNAL : OM_ERR_NOMEM, NULL,
					"%s", ns ? "the copy's nodes differ" : "out of memory");
		}
		memcpy(ns, c->graph->nodes, sizeof *ns * (size_t)j->nn);
		bool redo = false;
		*clamped = 0;
		rc = om_half_convert(c, j->opt->dtype, j->why, &redo, clamped, j->st);
		if (rc || !redo) {
			if (rc) {
				free(ns);
				om_model_free(c);
				return rc;
			}
			*out = c;
			*nodes = ns;
			return OM_OK;
		}
		for (int32_t i = 0; i < j->nn; i++)
			if (j->why[i] == OM_HALF_KEEP_INFER && !j->keep[i])
				j->keep[i] = OM_KEEP_INFER;
		free(ns);
		om_model_free(c);
	}
	return om_error(j->st, OM_ERR_INTERNAL, NULL, "the half conversion does not settle");
}

/* ---- step 2: each converted node alone ---------------------------------------------------- */

/* name -> a value of the float32 run */
typedef struct named {
	const char *name;
	const om_tensor *t;
	UT_hash_handle hh;
} named;

static const om_tensor *lookup(named *map, const char *name)
{
	named *e = NULL;
	HASH_FIND_STR(map, name, e);
	return e ? e->t : NULL;
}

static om_kind add_named(named **map, named *item, const char *name, const om_tensor *t,
			 om_status *st)
{
	if (lookup(*map, name))
		return OM_OK;
	*item = (named){.name = name, .t = t};
	HASH_ADD_KEYPTR(hh, *map, name, strlen(name), item);
	return lookup(*map, name) ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
}

/* dst = src (float32 or half) as `dtype` (float32 or half); *overflow when a finite element
 * became infinite. */
static om_kind convert_tensor(const om_tensor *src, int32_t dtype, om_tensor *dst, bool *overflow,
			      om_status *st)
{
	om_kind rc = om_tensor_alloc(dst, dtype, src->rank, src->dims, st);
	const uint16_t *h = src->data;
	const float *f = src->data;
	for (int64_t i = 0, n = om_tensor_numel(src); i < n && !rc; i++) {
		float x = src->dtype == OM_FLOAT16	? om_half_to_float(h[i])
			  : src->dtype == OM_BFLOAT16 ? om_bf16_to_float(h[i])
						      : f[i];
		if (dtype == OM_FLOAT16)
			((uint16_t *)dst->data)[i] = om_float_to_half(x);
		else if (dtype == OM_BFLOAT16)
			((uint16_t *)dst->data)[i] = om_float_to_bf16(x);
		else
			((float *)dst->data)[i] = x;
		if (dtype != OM_FLOAT && isfinite(x)) {
			const uint16_t b = ((uint16_t *)dst->data)[i];
			float y = dtype == OM_FLOAT16 ? om_half_to_float(b) : om_bf16_to_float(b);
			*overflow |= !isfinite(y);
		}
	}
	return rc;
}

static bool half_type(int32_t t)
{
	return t == OM_FLOAT16 || t == OM_BFLOAT16;
}

/* Runs converted node cn (node i of the original, on) alone on the float32 run's values. */
static om_kind measure_node(job *j, const om_node *on, const om_node *cn, named *vals,
			    local *l)
{
	enum { MAX_IO = 64 };
	if (cn->nin > MAX_IO || cn->nout > MAX_IO)
		return OM_OK;
	om_tensor own[MAX_IO] = {0}, out[MAX_IO] = {0};
	const om_tensor *in[MAX_IO] = {0};
	om_kind rc = OM_OK;
	bool range = false;
	for (int32_t k = 0; k < cn->nin && !rc; k++) {
		const om_value *cv = cn->in[k];
		if (!cv)
			continue;
		if (cv->init && !(cv->flags & OM_VALUE_GRAPH_INPUT)) {
			in[k] = cv->init; /* the converted model's own constant */
			continue;
		}
		const om_tensor *ref = lookup(vals, on->in[k]->name);
		if (!ref)
			return OM_OK; /* not measurable (an outer value) */
		int32_t want = cv->type.kind == OM_TYPE_TENSOR && cv->type.elem ? cv->type.elem
										 : ref->dtype;
		in[k] = ref;
		if (want != ref->dtype && (half_type(want) || want == OM_FLOAT) &&
		    (half_type(ref->dtype) || ref->dtype == OM_FLOAT)) {
			bool of = false;
			rc = convert_tensor(ref, want, &own[k], &of, j->st);
			in[k] = &own[k];
			if (of && !range) {
				range = true;
				snprintf(l->detail, sizeof l->detail, "input '%s'",
					 on->in[k]->name);
			}
		}
	}
	om_status es = {0};
	if (!rc && !range && om_eval_node(cn, om_model_opset(cn->graph->model, cn->domain), in, out,
					  &es)) {
		if (es.kind == OM_ERR_NOMEM)
			rc = om_error(j->st, es.kind, cn, "%s", es.msg);
		else if (!l->reason) {
			l->reason = OM_KEEP_RUN;
			om_check_format_error(&es, l->detail, sizeof l->detail);
		}
	} else if (!rc && range) {
		l->reason = OM_KEEP_INPUT_RANGE;
		l->max_rel = INFINITY;
	}
	for (int32_t k = 0; k < cn->nout && !rc && !range && !es.kind; k++) {
		const om_tensor *ref = on->out[k] ? lookup(vals, on->out[k]->name) : NULL;
		if (!ref || !out[k].data || !half_type(out[k].dtype) || ref->dtype != OM_FLOAT)
			continue;
		om_tensor back = {0};
		bool unused = false;
		rc = convert_tensor(&out[k], OM_FLOAT, &back, &unused, j->st);
		om_diff d = {0};
		if (!rc)
			rc = om_diff_values(ref, &back, 0, 0, &d, j->st);
		bool of = false;
		const float *a = ref->data, *b = back.data;
		for (int64_t e = 0, n = om_tensor_numel(ref); !rc && e < n && !of; e++)
			of = isfinite(a[e]) && !isfinite(b[e]);
		om_tensor_free(&back);
		if (of && l->reason != OM_KEEP_INPUT_RANGE) {
			l->reason = OM_KEEP_OVERFLOW;
			snprintf(l->detail, sizeof l->detail, "output '%s'", on->out[k]->name);
		}
		double rel = of ? INFINITY : d.max_rel;
		if (rel > l->max_rel || isnan(rel))
			l->max_rel = isnan(rel) ? INFINITY : rel;
	}
	for (int32_t k = 0; k < MAX_IO; k++) {
		om_tensor_free(&own[k]);
		om_tensor_free(&out[k]);
	}
	return rc;
}

/* One run of the float32 model with every value of its main graph kept. */
static om_kind measure_run(job *j, om_session *s, int run, int *attempt,
			   om_node **cnodes)
{
	om_inset in = {0};
	om_tensor *out = NULL;
	char desc[512], kind[128];
	/* the model's own weights: overridable initializers at their defaults */
	om_kind rc = om_reference_run(s, &j->copt, run, false, attempt, &in, &out, desc,
				      sizeof desc, kind, sizeof kind, j->st);
	int nout = rc ? 0 : om_session_output_count(s);
	const om_graph *g = j->orig->graph;
	named *map = NULL;
	named *items = calloc((size_t)(nout + in.n + g->ninits + 1), sizeof *items);
	int used = 0;
	if (!rc && !items)
		rc = om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int i = 0; i < nout && !rc; i++)
		rc = add_named(&map, &items[used++], om_session_output_name(s, i), &out[i], j->st);
	for (int i = 0; i < in.n && !rc; i++)
		rc = add_named(&map, &items[used++], in.names[i], &in.t[i], j->st);
	for (int32_t i = 0; i < g->ninits && !rc; i++)
		rc = add_named(&map, &items[used++], g->inits[i]->name, g->inits[i]->init, j->st);
	for (int32_t i = 0; i < j->nn && !rc; i++) {
		if (j->why[i] != OM_HALF_CONVERTED)
			continue;
		if (j->copt.progress && i % 64 == 0)
			j->copt.progress(j->copt.progress_user, "half: measuring nodes", i, j->nn);
		rc = measure_node(j, g->nodes[i], cnodes[i], map, &j->loc[i]);
	}
	HASH_CLEAR(hh, map);
	free(items);
	om_outputs_free(out, nout);
	om_inset_free(&in);
	return rc;
}

/* The names of g's node outputs, or only of those inference leaves untyped (`untyped`): a
 * malloc'd array, *n of them; NULL when out of memory. */
static const char **node_outputs(const om_graph *g, bool untyped, int *n)
{
	int cap = 0;
	for (int32_t i = 0; i < g->nnodes; i++)
		cap += g->nodes[i]->nout;
	const char **names = malloc(sizeof *names * (size_t)(cap + 1));
	*n = 0;
	for (int32_t i = 0; names && i < g->nnodes; i++)
		for (int32_t k = 0; k < g->nodes[i]->nout; k++) {
			const om_value *v = g->nodes[i]->out[k];
			if (v && (!untyped || v->type.kind != OM_TYPE_TENSOR || !v->type.elem))
				names[(*n)++] = v->name;
		}
	return names;
}

static om_kind measure(job *j, om_node **cnodes)
{
	int n;
	const char **names = node_outputs(j->orig->graph, false, &n);
	if (!names)
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	om_model *all = NULL;
	om_session *s = NULL;
	om_session_options so = {.threads = j->copt.threads, .keep_half = 1};
	om_kind rc = om_model_expose(j->orig, names, n, &all, j->st);
	free(names);
	if (!rc)
		rc = om_session_create(all, &so, &s, j->st);
	int attempt = 0;
	for (int r = 0; r < j->copt.runs && !rc; r++)
		rc = measure_run(j, s, r, &attempt, cnodes);
	om_session_free(s);
	om_model_free(all);
	for (int32_t i = 0; i < j->nn && !rc; i++) {
		const local *l = &j->loc[i];
		if (j->why[i] != OM_HALF_CONVERTED || j->keep[i])
			continue;
		if (l->reason)
			j->keep[i] = (uint8_t)l->reason;
		else if (l->max_rel > j->opt->node_rtol)
			j->keep[i] = OM_KEEP_ERROR;
	}
	return rc;
}

/* The element types and ranks of m's values that inference does not type (what If or Loop
 * outputs, ops omopt infers only at run time), from a float32 run: so that the nodes reading
 * them can be converted too. Dims stay unknown; the values are listed in value_info. */
static om_kind type_from_run(job *j, om_model *m)
{
	om_graph *g = m->graph;
	int n;
	const char **names = node_outputs(g, true, &n);
	if (!names)
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	om_model *all = NULL;
	om_session *s = NULL;
	om_session_options so = {.threads = j->copt.threads, .keep_half = 1};
	om_kind rc = n ? om_model_expose(m, names, n, &all, j->st) : OM_OK;
	free(names);
	if (!n)
		return OM_OK;
	if (!rc)
		rc = om_session_create(all, &so, &s, j->st);
	om_inset in = {0};
	om_tensor *out = NULL;
	int attempt = 0;
	char desc[512], kind[128];
	if (!rc)
		rc = om_reference_run(s, &j->copt, 0, false, &attempt, &in, &out, desc,
				      sizeof desc, kind, sizeof kind, j->st);
	const int nout = rc ? 0 : om_session_output_count(s);
	om_value **typed = malloc(sizeof *typed * (size_t)(nout + 1));
	int ntyped = 0;
	if (!rc && !typed)
		rc = om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int i = 0; !rc && i < nout; i++) {
		om_value *v = om_graph_find(g, om_session_output_name(s, i));
		const om_tensor *t = &out[i];
		if (!v || (v->type.kind == OM_TYPE_TENSOR && v->type.elem) ||
		    t->dtype <= OM_UNDEFINED || t->dtype >= OM_DTYPE_COUNT)
			continue;
		om_dim *d = om_arena_alloc(m->arena, sizeof *d * (size_t)(t->rank + 1));
		if (!d) {
			rc = om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
			break;
		}
		for (int32_t k = 0; k < t->rank; k++)
			d[k] = (om_dim){.value = -1};
		v->type = (om_type){.kind = OM_TYPE_TENSOR, .elem = t->dtype, .rank = t->rank,
				    .dims = d};
		if (!(v->flags & OM_VALUE_INFO))
			typed[ntyped++] = v;
	}
	/* listed in value_info, so that the copies the conversion is tried on see them too */
	om_value **infos = !rc && ntyped ? om_arena_alloc(m->arena, sizeof *infos *
								(size_t)(g->ninfos + ntyped))
				      : NULL;
	if (!rc && ntyped && !infos)
		rc = om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	if (infos) {
		if (g->ninfos)
			memcpy(infos, g->infos, sizeof *infos * (size_t)g->ninfos);
		for (int i = 0; i < ntyped; i++) {
			typed[i]->flags |= OM_VALUE_INFO;
			infos[g->ninfos + i] = typed[i];
		}
		g->infos = infos;
		g->ninfos += ntyped;
	}
	free(typed);
	om_outputs_free(out, nout);
	om_inset_free(&in);
	om_session_free(s);
	om_model_free(all);
	return rc;
}

/* ---- steps 3, 4 and the report -------------------------------------------------------------- */

/* Keeps the converted nodes measured above `thr`; how many. */
static int keep_worst(job *j, double thr)
{
	int added = 0;
	for (int32_t i = 0; i < j->nn; i++)
		if (j->why[i] == OM_HALF_CONVERTED && !j->keep[i] && j->loc[i].max_rel > thr) {
			j->keep[i] = OM_KEEP_OUTPUTS;
			added++;
		}
	return added;
}

/* The node named `name` (a failed run's status names it), -1 when none or already kept. */
static int32_t node_named(job *j, const char *name)
{
	for (int32_t i = 0; name[0] && i < j->nn; i++)
		if (!strcmp(j->orig->graph->nodes[i]->name, name) && !j->keep[i])
			return i;
	return -1;
}

static uint8_t reason_of_why(uint8_t why)
{
	switch (why) {
	case OM_HALF_KEEP_TYPE: return OM_KEEP_TYPE;
	case OM_HALF_KEEP_SUBGRAPH: return OM_KEEP_SUBGRAPH;
	case OM_HALF_KEEP_QDQ: return OM_KEEP_QDQ;
	case OM_HALF_KEEP_UNTYPED: return OM_KEEP_UNTYPED;
	default: return 0;
	}
}

static om_kind fill_report(job *j, om_dtype_report *rep)
{
	rep->kept = calloc((size_t)(j->nn + 1), sizeof *rep->kept);
	if (!rep->kept)
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0; i < j->nn; i++) {
		uint8_t r = j->keep[i] ? j->keep[i] : reason_of_why(j->why[i]);
		rep->converted += j->why[i] == OM_HALF_CONVERTED && !rep->unchanged;
		if (!r)
			continue;
		const om_node *n = j->orig->graph->nodes[i];
		om_dtype_kept *k = &rep->kept[rep->nkept++];
		om_diff_name(k->node, sizeof k->node, n->name);
		om_diff_name(k->op, sizeof k->op, n->op);
		k->reason = r;
		k->weights_half = j->why[i] == OM_HALF_KEEP_STORED;
		k->max_rel = j->loc ? j->loc[i].max_rel : 0;
		if (j->loc)
			memcpy(k->detail, j->loc[i].detail, sizeof k->detail);
	}
	return OM_OK;
}

/* The model the loop settled on, made on m itself (the conversion is deterministic). */
static om_kind convert_final(job *j, om_model *m, om_dtype_report *rep)
{
	/* never larger: a model with little float32 compute (a quantized one) would only gain
	 * Casts */
	om_model *c = NULL;
	om_node **ns = NULL;
	size_t before = 0, after = 0;
	om_kind rc = convert_copy(j, &c, &ns, &rep->clamped);
	if (!rc)
		rc = om_model_saved_size_without_value_info(j->orig, &before, j->st);
	if (!rc)
		rc = om_model_saved_size_without_value_info(c, &after, j->st);
	free(ns);
	om_model_free(c);
	if (rc)
		return rc;
	if (after > before) {
		rep->unchanged = 1;
		return OM_OK;
	}
	for (int32_t i = 0; i < j->nn; i++)
		j->why[i] = why_of(j, i);
	bool redo = false;
	rep->clamped = 0;
	rc = om_half_convert(m, j->opt->dtype, j->why, &redo, &rep->clamped, j->st);
	if (!rc && redo)
		rc = om_error(j->st, OM_ERR_INTERNAL, NULL, "the half conversion changed");
	return rc;
}

/* Converts a copy with the keeps so far and checks it against the float32 model (rep->check);
 * a node the converted model fails to run on is kept and the check made again. */
static om_kind try_keeps(job *j, om_dtype_report *rep, bool *passed)
{
	*passed = false;
	for (int32_t tries = 0; tries <= j->nn; tries++) {
		om_model *conv = NULL;
		om_node **cnodes = NULL;
		int64_t clamped = 0;
		om_status failure = {0};
		om_kind rc = convert_copy(j, &conv, &cnodes, &clamped);
		free(cnodes);
		if (!rc) {
			om_check_report_free(&rep->check);
			rc = om_check_status(j->orig, conv, &j->copt, &rep->check, &failure,
					     j->st);
			rep->rounds++;
		}
		om_model_free(conv);
		if (rc || rep->check.passed) {
			*passed = !rc;
			return rc;
		}
		int32_t bad = failure.kind ? node_named(j, failure.node) : -1;
		if (bad < 0)
			return OM_OK;
		j->keep[bad] = OM_KEEP_RUN;
		om_diff_name(j->loc[bad].detail, sizeof j->loc[bad].detail, rep->check.error);
	}
	return OM_OK;
}

/* The float32 weight bytes node n reads (its float32 initializers of `min` elements or more;
 * one read by several nodes counts for each). */
static size_t weight_bytes(const om_node *n, int64_t min)
{
	size_t bytes = 0;
	for (int32_t k = 0; k < n->nin; k++) {
		const om_value *v = n->in[k];
		if (v && v->init && !(v->flags & OM_VALUE_GRAPH_INPUT) &&
		    v->init->dtype == OM_FLOAT && om_tensor_numel(v->init) >= min)
			bytes += v->init->nbytes;
	}
	return bytes;
}

/* A run cand[a..b) of the candidates, in topological order, and the weight bytes it reads. */
typedef struct segment {
	int32_t a, b;
	size_t bytes;
} segment;

static segment make_segment(const job *j, const int32_t *cand, int32_t a, int32_t b)
{
	segment s = {.a = a, .b = b};
	for (int32_t k = a; k < b; k++)
		s.bytes += weight_bytes(j->orig->graph->nodes[cand[k]], 0);
	return s;
}

/* What a search turns on for node i: its half compute (a node a failed run has kept since,
 * OM_KEEP_RUN, stays kept), or its weights stored in half. */
typedef void (*set_fn)(job *j, int32_t i, bool on);

static void set_converted(job *j, int32_t i, bool on)
{
	if (j->keep[i] == OM_KEEP_OUTPUTS || !j->keep[i])
		j->keep[i] = on ? 0 : OM_KEEP_OUTPUTS;
}

static void set_stored(job *j, int32_t i, bool on)
{
	j->store[i] = on;
}

static void set_segment(job *j, const int32_t *cand, segment s, set_fn set, bool on)
{
	for (int32_t k = s.a; k < s.b; k++)
		set(j, cand[k], on);
}

enum {
	SEARCH_SEGMENTS = 16, /* the candidates to convert are first cut into this many runs */
	SEARCH_CHECKS = 48,   /* checks a search makes at most */
	SEARCH_MARGIN = 2     /* a run converts when the outputs pass this many times tighter */
};

/*
 * Turns `set` on for runs of the nc candidates (in topological order; all off on entry), first
 * cut into nseg runs: the run reading the most weight bytes first, each staying on when the
 * outputs pass within the tolerance divided by SEARCH_MARGIN (the many decisions made on the
 * same inputs would otherwise leave the result on the tolerance's edge); a run that fails is
 * halved and its halves tried in turn. Ends with the check of what it settled on (*passed).
 */
static om_kind search_runs(job *j, om_dtype_report *rep, const int32_t *cand, int32_t nc,
			   int32_t nseg, set_fn set, bool *passed)
{
	/* each failing check takes one run off the list and may put two back */
	segment *todo = malloc(sizeof *todo * (size_t)(nseg + SEARCH_CHECKS + 1));
	if (!todo)
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	int32_t ntodo = 0;
	if (nseg > nc)
		nseg = nc;
	for (int32_t k = 0; k < nseg; k++)
		todo[ntodo++] = make_segment(j, cand, (int32_t)((int64_t)k * nc / nseg),
					     (int32_t)((int64_t)(k + 1) * nc / nseg));
	const om_check_options final = j->copt;
	j->copt.rtol /= SEARCH_MARGIN;
	j->copt.atol /= SEARCH_MARGIN;
	om_kind rc = OM_OK;
	for (int checks = 0; ntodo && checks < SEARCH_CHECKS && !rc; checks++) {
		int32_t best = 0;
		for (int32_t k = 1; k < ntodo; k++)
			if (todo[k].bytes > todo[best].bytes ||
			    (todo[k].bytes == todo[best].bytes &&
			     todo[k].b - todo[k].a > todo[best].b - todo[best].a))
				best = k;
		const segment s = todo[best];
		memmove(&todo[best], &todo[best + 1], sizeof *todo * (size_t)(ntodo - best - 1));
		ntodo--;
		set_segment(j, cand, s, set, true);
		bool ok = false;
		rc = try_keeps(j, rep, &ok);
		if (rc || ok)
			continue;
		set_segment(j, cand, s, set, false);
		if (s.b - s.a > 1) {
			const int32_t mid = s.a + (s.b - s.a) / 2;
			todo[ntodo++] = make_segment(j, cand, s.a, mid);
			todo[ntodo++] = make_segment(j, cand, mid, s.b);
		}
	}
	j->copt = final;
	free(todo);
	return rc ? rc : try_keeps(j, rep, passed);
}

/*
 * When keeping the worst measured nodes was not enough: every remaining converted node is kept
 * float32, then runs of them are converted again by search_runs. Where the rounding that
 * matters sits is the model's: the stem of a classifier (rounding early is amplified the
 * most), the last nodes before an output in a saturating function's tail (e^z of a logit z far
 * below 0 has the relative error of z's absolute error, which half resolves coarsely at large
 * |z|), or all over the network; converting by weight bytes makes the file as small as the
 * tolerance allows wherever it is.
 */
static om_kind convert_heaviest(job *j, om_dtype_report *rep, bool *passed)
{
	int32_t *cand = malloc(sizeof *cand * (size_t)(j->nn + 1));
	if (!cand)
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	int32_t nc = 0;
	for (int32_t i = 0; i < j->nn; i++)
		if (j->why[i] == OM_HALF_CONVERTED && !j->keep[i])
			cand[nc++] = i;
	set_segment(j, cand, (segment){.a = 0, .b = nc}, set_converted, false);
	om_kind rc = search_runs(j, rep, cand, nc, SEARCH_SEGMENTS, set_converted, passed);
	free(cand);
	return rc;
}

/* Whether a node kept for its half compute's error, overflow or out-of-range inputs may read its
 * weights stored in half (not one asked for, nor one kept for its types, subgraphs or because
 * omopt cannot run it in half). */
static bool measured_keep(uint8_t reason)
{
	return reason == OM_KEEP_OVERFLOW || reason == OM_KEEP_INPUT_RANGE ||
	       reason == OM_KEEP_ERROR || reason == OM_KEEP_OUTPUTS;
}

/*
 * Which nodes may read their weights stored in half, decided before what computes in half: a
 * node kept float32 then still reads half weights, so the file shrinks as if it were converted.
 * Every candidate (converted, or kept by measurement) computing in float32 on half weights is
 * checked first: one rounding of the weights is usually far below what half compute does. When
 * the outputs then fail (a model whose output depends on its weights' last bits: large
 * constants whose difference matters, logits far down a Sigmoid's tail), runs of them are
 * found by search_runs, from one run; a node whose weights stay float32 is kept float32 whole
 * (OM_KEEP_WEIGHTS: converting it would round them too).
 */
static om_kind choose_stored(job *j, om_dtype_report *rep)
{
	int32_t *cand = malloc(sizeof *cand * (size_t)(j->nn + 1));
	uint8_t *saved = malloc((size_t)j->nn + 1);
	if (!cand || !saved) {
		free(cand);
		free(saved);
		return om_error(j->st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	memcpy(saved, j->keep, (size_t)j->nn);
	int32_t nc = 0;
	for (int32_t i = 0; i < j->nn; i++) {
		if (j->why[i] != OM_HALF_CONVERTED || (j->keep[i] && !measured_keep(j->keep[i])))
			continue;
		if (!j->keep[i])
			j->keep[i] = OM_KEEP_OUTPUTS; /* float32 compute while the weights are chosen */
		/* what om_half_convert may store in half */
		if (weight_bytes(j->orig->graph->nodes[i], OM_HALF_STORED_MIN))
			cand[nc++] = i;
	}
	bool passed = false;
	om_kind rc = nc ? search_runs(j, rep, cand, nc, 1, set_stored, &passed) : OM_OK;
	memcpy(j->keep, saved, (size_t)j->nn);
	for (int32_t k = 0; k < nc && !rc; k++)
		if (!j->store[cand[k]] && !j->keep[cand[k]])
			j->keep[cand[k]] = OM_KEEP_WEIGHTS;
	free(cand);
	free(saved);
	return rc;
}

static om_kind run(job *j, om_model *m, om_dtype_report *rep)
{
	const om_graph *g = j->orig->graph;
	for (int32_t i = 0; j->opt->keep && i < j->nn; i++)
		for (const char *const *k = j->opt->keep; *k; k++)
			if (!strcmp(*k, g->nodes[i]->name))
				j->keep[i] = OM_KEEP_ASKED;
	om_model *conv = NULL;
	om_node **cnodes = NULL;
	int64_t clamped = 0;
	om_kind rc = convert_copy(j, &conv, &cnodes, &clamped);
	if (!rc && !j->opt->no_measure)
		rc = measure(j, cnodes);
	om_model_free(conv);
	free(cnodes);
	if (!rc && !j->opt->no_measure)
		rc = choose_stored(j, rep);
	/* the nodes measured worse than the half type's own rounding, worst first, then runs of
	 * the graph by weight bytes */
	const double floor_rel = j->opt->dtype == OM_FLOAT16 ? 0x1p-10 : 0x1p-7;
	double thr = j->opt->node_rtol;
	bool passed = false, settled = false; /* settled: the keeps as they are were checked */
	for (int round = 0; !rc && !j->opt->no_measure && round < j->opt->max_rounds; round++) {
		rc = try_keeps(j, rep, &passed);
		settled = true;
		if (rc || passed)
			break;
		int added = 0;
		while (!added && thr > floor_rel) {
			thr /= 4;
			added = keep_worst(j, thr < floor_rel ? floor_rel : thr);
		}
		settled = !added;
		if (!added) {
			rc = convert_heaviest(j, rep, &passed);
			break;
		}
	}
	if (!rc && !j->opt->no_measure && !settled)
		rc = try_keeps(j, rep, &passed); /* the last round's keeps */
	if (!rc)
		rc = convert_final(j, m, rep);
	if (!rc)
		rc = fill_report(j, rep);
	return rc;
}

/* whether node n is named in keep (NULL-terminated, or NULL) */
static bool asked(const char *const *keep, const om_node *n)
{
	for (int i = 0; keep && keep[i]; i++)
		if (n->name && !strcmp(keep[i], n->name))
			return true;
	return false;
}

/* One half type of m widened to float32 (om_half_widen): on a copy first, again with the
 * nodes the rows' inference disagrees about kept, then on m itself (the conversion is
 * deterministic). Kept nodes that hold that type are added to rep. */
static om_kind widen_type(om_model *m, int32_t from, const om_dtype_options *o,
			  om_dtype_report *rep, om_status *st)
{
	const int32_t nn = m->graph->nnodes;
	uint8_t *why = calloc((size_t)nn + 1, 1), *keep = calloc((size_t)nn + 1, 1);
	om_kind rc = why && keep ? OM_OK : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	for (int32_t i = 0; !rc && i < nn; i++)
		keep[i] = asked(o->keep, m->graph->nodes[i]) ? OM_HALF_KEEP_ASKED : 0;
	bool redo = true;
	for (int32_t tries = 0; !rc && redo && tries <= nn; tries++) {
		om_model *c = NULL;
		rc = om_model_clone(m, &c, st);
		memcpy(why, keep, (size_t)nn);
		if (!rc)
			rc = om_half_widen(c, from, why, &redo, st);
		om_model_free(c);
		for (int32_t i = 0; !rc && i < nn; i++)
			if (why[i] == OM_HALF_KEEP_INFER)
				keep[i] = OM_HALF_KEEP_ASKED;
	}
	if (!rc && redo)
		rc = om_error(st, OM_ERR_INTERNAL, NULL, "widening %s does not settle",
			      om_dtype_name(from));
	om_node **nodes = rc ? NULL : malloc(sizeof *nodes * ((size_t)nn + 1));
	if (!rc && !nodes)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (!rc) {
		memcpy(nodes, m->graph->nodes, sizeof *nodes * (size_t)nn);
		memcpy(why, keep, (size_t)nn);
		rc = om_half_widen(m, from, why, &redo, st);
	}
	if (!rc && redo)
		rc = om_error(st, OM_ERR_INTERNAL, NULL, "the widening changed");
	const size_t room = (size_t)rep->nkept + (size_t)nn + 1;
	om_dtype_kept *more = rc ? NULL : realloc(rep->kept, sizeof *more * room);
	if (!rc && !more)
		rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	if (more)
		rep->kept = more;
	for (int32_t i = 0; !rc && i < nn; i++) {
		rep->converted += why[i] == OM_HALF_CONVERTED;
		const uint8_t r = why[i] == OM_HALF_KEEP_ASKED ? OM_KEEP_ASKED
				  : why[i] == OM_HALF_KEEP_INFER ? OM_KEEP_INFER
								: reason_of_why(why[i]);
		if (!r)
			continue;
		om_dtype_kept *k = &rep->kept[rep->nkept++];
		memset(k, 0, sizeof *k);
		om_diff_name(k->node, sizeof k->node, nodes[i]->name);
		om_diff_name(k->op, sizeof k->op, nodes[i]->op);
		k->reason = r;
	}
	free(nodes);
	free(why);
	free(keep);
	return rc;
}

/* The Casts the widening leaves converting to the type they read (the Casts om_half_convert
 * put at float32 inputs and outputs, now float to float) go: eliminate_identities. */
static om_kind drop_noop_casts(om_model *m, om_status *st)
{
	om_pass_ctx pc;
	int changes = 0;
	om_kind rc = om_pass_ctx_open(&pc, m, NULL, st);
	if (rc)
		return rc;
	rc = om_pass_infer(&pc, m->graph, &changes);
	if (!rc)
		rc = om_pass_identities(&pc, m->graph, &changes);
	if (!rc)
		rc = om_pass_dead(&pc, m->graph, &changes);
	om_pass_ctx_close(&pc);
	return rc;
}

/* om_convert_dtype to OM_FLOAT: float16, then bfloat16 compute widened to float32. Nothing is
 * measured (float32 holds every half value); unless no_measure, the result is checked against
 * the model as given (rep->check, one round). */
static om_kind widen(om_model *m, const om_dtype_options *o, om_dtype_report *rep,
		     om_status *st)
{
	om_model *orig = NULL;
	om_kind rc = om_graph_toposort(m->graph, st);
	if (!rc && !o->no_measure)
		rc = om_model_clone(m, &orig, st);
	if (!rc)
		rc = widen_type(m, OM_FLOAT16, o, rep, st);
	if (!rc)
		rc = widen_type(m, OM_BFLOAT16, o, rep, st);
	if (!rc)
		rc = drop_noop_casts(m, st);
	if (!rc && orig) {
		om_check_options copt = o->check;
		if (copt.runs <= 0)
			copt.runs = DEFAULT_RUNS;
		if (copt.rtol <= 0)
			copt.rtol = 1e-2;
		if (copt.atol <= 0)
			copt.atol = 1e-12; /* relative to the tensor's scale, as the half check */
		copt = om_check_defaults(&copt);
		om_status failure = {0};
		rc = om_check_status(orig, m, &copt, &rep->check, &failure, st);
		rep->rounds = 1;
	}
	om_model_free(orig);
	return rc;
}

om_kind om_convert_dtype(om_model *m, const om_dtype_options *opt, om_dtype_report *rep,
			 om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	*rep = (om_dtype_report){.check.failed_run = -1};
	om_dtype_options o = *opt;
	if (o.dtype != OM_FLOAT16 && o.dtype != OM_BFLOAT16 && o.dtype != OM_FLOAT)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"convert to %s: float16, bfloat16 or float32 only",
				om_dtype_name(o.dtype));
	if (!m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	if (o.dtype == OM_FLOAT)
		return widen(m, &o, rep, st);
	if (o.node_rtol <= 0)
		o.node_rtol = 1e-2;
	if (o.max_rounds <= 0)
		o.max_rounds = DEFAULT_ROUNDS;
	job j = {.opt = &o, .copt = o.check, .st = st};
	if (j.copt.runs <= 0)
		j.copt.runs = DEFAULT_RUNS;
	if (j.copt.rtol <= 0)
		j.copt.rtol = 1e-2;
	if (j.copt.atol <= 0)
		j.copt.atol = 1e-12; /* relative to the tensor's scale: an output near 0 counts */
	j.copt = om_check_defaults(&j.copt);
	om_kind rc = om_graph_toposort(m->graph, st);
	if (!rc && !o.no_measure)
		rc = type_from_run(&j, m);
	if (!rc)
		rc = om_model_clone(m, &j.orig, st);
	if (rc)
		return rc;
	j.nn = j.orig->graph->nnodes;
	j.why = calloc((size_t)(j.nn + 1), 1);
	j.keep = calloc((size_t)(j.nn + 1), 1);
	j.loc = calloc((size_t)(j.nn + 1), sizeof *j.loc);
	j.store = calloc((size_t)(j.nn + 1), 1);
	rc = j.why && j.keep && j.loc && j.store ? run(&j, m, rep)
				      : om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	free(j.why);
	free(j.keep);
	free(j.loc);
	free(j.store);
	om_model_free(j.orig);
	return rc;
}
