/* session.c — the public session API (create, names, run, free) and what tests and tools see
 * of a plan and of the runs. Runs are in run.c, their state in runner.c, plans in plan.c. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crowd.h"
#include "parallel.h"
#include "runner.h"
#include "onnx_io.h"
#include "value.h"

/* ---- public API -------------------------------------------------------------------------- */

size_t om_default_max_memory(void)
{
	const size_t cap = (size_t)8 << 30;
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
	if (pages <= 0 || page <= 0 || (uint64_t)pages > SIZE_MAX / 2 / (uint64_t)page)
		return cap;
	const size_t half = (size_t)pages * (size_t)page / 2;
	return half < cap ? half : cap;
}

om_kind om_session_create_ex(const om_model *m, const om_session_options *opt,
			     const om_op_table *extra, om_session **out, om_status *st)
{
	*out = NULL;
	if (!m || !m->graph)
		return om_error(st, OM_ERR_INVALID_MODEL, NULL, "the model has no graph");
	if (opt && (opt->layout < OM_LAYOUT_AUTO || opt->layout > OM_LAYOUT_NCHW))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"session option layout %d is no om_layout_choice", (int)opt->layout);
	if (opt && (opt->threads < 0 || opt->threads > OM_MAX_THREADS))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL,
				"session option threads %d: 0 to %d", opt->threads, OM_MAX_THREADS);
	om_session *s = calloc(1, sizeof *s);
	if (!s || !(s->lock = malloc(sizeof *s->lock)) || pthread_mutex_init(s->lock, NULL)) {
		if (s)
			free(s->lock);
		free(s);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	if (!(s->arena = om_arena_new())) {
		om_session_free(s);
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	s->m = m;
	om_model_retain(m); /* released by om_session_free */
	if (opt)
		s->opt = *opt;
	s->mem_limit = s->opt.max_memory == SIZE_MAX ? 0
		       : s->opt.max_memory	  ? s->opt.max_memory
						  : om_default_max_memory();
	s->extra = extra;
	/* the machine's first look for other processes' work (crowd.h), so that a verdict is
	 * there by the first runs: a benchmark of a few runs ended within the first window */
	if (s->opt.threads > 1)
		(void)om_crowd_now();
	om_kind rc = om_plan_graph(s, m->graph, NULL, &s->main, st);
	if (!rc) {
		const size_t n = (size_t)(s->nsteps_all ? s->nsteps_all : 1);
		s->last_mode = calloc(n, sizeof *s->last_mode);
		s->last_impl = calloc(n, sizeof *s->last_impl);
		if (!s->last_mode || !s->last_impl)
			rc = om_error(st, OM_ERR_NOMEM, NULL, "out of memory");
	}
	if (rc) {
		om_session_free(s);
		return rc;
	}
	*out = s;
	return OM_OK;
}

int om_session_input_count(const om_session *s)
{
	return s->main->nrequired;
}

int om_session_overridable_count(const om_session *s)
{
	return s->main->ninputs - s->main->nrequired;
}

const char *om_session_input_name(const om_session *s, int i)
{
	if (i < 0 || i >= s->main->ninputs)
		return NULL;
	return s->main->slots[s->main->inputs[i]].v->name;
}

int om_session_output_count(const om_session *s)
{
	return s->main->noutputs;
}

const char *om_session_output_name(const om_session *s, int i)
{
	if (i < 0 || i >= s->main->noutputs)
		return NULL;
	return s->main->slots[s->main->outputs[i]].v->name;
}

void om_value_io_info(const om_value *v, om_io_info *info)
{
	memset(info, 0, sizeof *info);
	info->name = v->name;
	info->rank = -1;
	if (v->type.kind == OM_TYPE_OTHER) {
		info->kind = om_type_box_kind(&v->type);
		info->kind = info->kind ? info->kind : -1;
		info->elem = om_type_box_elem(&v->type);
		info->key = om_type_map_key(&v->type);
		return;
	}
	if (v->type.kind != OM_TYPE_TENSOR)
		return;
	info->elem = v->type.elem;
	if (v->type.rank < 0 || v->type.rank > OM_MAX_RANK)
		return;
	info->rank = v->type.rank;
	for (int32_t d = 0; d < v->type.rank; d++) {
		info->dims[d] = om_dim_known(v->type.dims[d]) ? v->type.dims[d].value : -1;
		info->dim_params[d] = v->type.dims[d].param;
	}
}

om_kind om_session_input_info(const om_session *s, int i, om_io_info *info, om_status *st)
{
	if (i < 0 || i >= s->main->ninputs)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no input %d", i);
	om_value_io_info(s->main->slots[s->main->inputs[i]].v, info);
	info->has_initializer = i >= s->main->nrequired;
	return OM_OK;
}

om_kind om_session_output_info(const om_session *s, int i, om_io_info *info, om_status *st)
{
	if (i < 0 || i >= s->main->noutputs)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no output %d", i);
	om_value_io_info(s->main->slots[s->main->outputs[i]].v, info);
	return OM_OK;
}

/* Inputs whose bytes are not aligned to their element type (a numpy view at an odd offset, a
 * slice of a byte buffer) are copied: kernels load elements as their C type. */
static size_t elem_align(int32_t dtype)
{
	const int bits = om_dtype_bits(dtype);
	if (dtype == OM_STRING)
		return _Alignof(om_str);
	return bits >= 16 ? (size_t)(bits >= 64 ? 8 : bits / 8) : 1;
}

/* in[i]: inputs[i], or its aligned copy in copies[i] (zeroed by the caller; data freed by it);
 * NULL for an overridable initializer (i >= nrequired) left unset (OM_UNDEFINED, no data) */
static om_kind aligned_inputs(const om_tensor *inputs, int n, int nrequired,
			      const om_tensor **in, om_tensor *copies, om_status *st)
{
	for (int i = 0; i < n; i++) {
		const om_tensor *t = &inputs[i];
		in[i] = i >= nrequired && t->dtype == OM_UNDEFINED && !t->data ? NULL : t;
		if (!in[i])
			continue;
		if (!t->data || om_is_box(t) || !t->nbytes ||
		    (uintptr_t)t->data % elem_align(t->dtype) == 0)
			continue;
		copies[i] = *t;
		if (!(copies[i].data = malloc(t->nbytes)))
			return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for input %d", i);
		memcpy(copies[i].data, t->data, t->nbytes);
		in[i] = &copies[i];
	}
	return OM_OK;
}

static om_kind run_session(om_session *s, const om_tensor *inputs, int ninputs,
			   om_tensor *outputs, int noutputs, int boxes, om_status *st)
{
	st = OM_STATUS_OR_LOCAL(st);
	for (int i = 0; outputs && i < noutputs; i++) /* a failed run leaves them zeroed */
		memset(&outputs[i], 0, sizeof outputs[i]);
	if (!s)
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "no session (NULL)");
	if (ninputs < 0 || noutputs < 0 || (ninputs && !inputs) || (noutputs && !outputs))
		return om_error(st, OM_ERR_INVALID_INPUT, NULL, "bad input or output arrays");
	const size_t n = (size_t)(ninputs ? ninputs : 1);
	const om_tensor **in = malloc(sizeof *in * n);
	om_tensor *copies = calloc(n, sizeof *copies);
	om_kind rc = !in || !copies ? om_error(st, OM_ERR_NOMEM, NULL, "out of memory")
				    : aligned_inputs(inputs, ninputs, s->main->nrequired, in,
						     copies, st);
	om_runner *r = rc ? NULL : om_runner_acquire(s, st);
	if (r) {
		r->boxes = boxes;
		/* the run's threads for oneDNN, which reads the calling thread's OpenMP count:
		 * the caller's own is back when the run returns (parallel.h); OpenBLAS's setting
		 * is the host's, never touched (om_blas_threads, omopt.h) */
		const int host_threads = om_par_threads_set(s->opt.threads > 1 ? s->opt.threads : 1);
		om_run_start_clock(r);
		rc = om_run_plan(r, s->main, NULL, in, ninputs, outputs, noutputs, st);
		om_par_threads_restore(host_threads);
		om_par_rest();
		om_run_free_strings(r);
		om_runner_release(s, r);
	} else if (!rc) {
		rc = st->kind;
	}
	for (int i = 0; copies && i < ninputs; i++)
		free(copies[i].data);
	free(copies);
	free(in);
	return om_public_kind(st, rc);
}

om_kind om_session_run(om_session *s, const om_tensor *inputs, int ninputs, om_tensor *outputs,
		       int noutputs, om_status *st)
{
	return run_session(s, inputs, ninputs, outputs, noutputs, 0, st);
}

om_kind om_session_run_values(om_session *s, const om_tensor *inputs, int ninputs,
			      om_tensor *outputs, int noutputs, om_status *st)
{
	return run_session(s, inputs, ninputs, outputs, noutputs, 1, st);
}

void om_session_free(om_session *s)
{
	if (!s)
		return;
	for (om_runner *r = s->runners, *next; r; r = next) {
		next = r->next;
		om_runner_free(r);
	}
	for (om_plan *p = s->plans; p; p = p->next)
		om_plan_release(p);
	om_arena_free(s->arena);
	free(s->prof);
	free(s->last_mode);
	free(s->last_impl);
	pthread_mutex_destroy(s->lock);
	free(s->lock);
	om_model_free((om_model *)s->m); /* the session's reference (om_model_retain) */
	free(s);
}

/* ---- looking inside ---------------------------------------------------------------------- */

int om_session_node_count(const om_session *s)
{
	return s->main->nsteps;
}

om_node_info om_session_node_info(const om_session *s, int i)
{
	om_node_info r = {0};
	if (i < 0 || i >= s->main->nsteps)
		return r;
	const om_step *sp = &s->main->steps[i];
	r.node = sp->node;
	r.op = sp->op;
	r.folded = sp->folded;
	r.dead = sp->dead;
	r.absorbed = sp->absorbed;
	r.post = sp->post.kind;
	r.scaled = sp->scale >= 0;
	r.summed = sp->sum >= 0;
	r.blocked = sp->blocked;
	r.block = sp->blocked ? s->main->block : 0;
	r.out0 = sp->node->nout >= 1 && sp->out[0] >= 0 ? s->main->slots[sp->out[0]].v : NULL;
	r.dynamic = sp->dynamic;
	r.view = sp->view;
	pthread_mutex_lock(s->lock);
	r.mode = sp->folded ? OM_MODE_EXACT : s->last_mode[sp->ix];
	r.impl = s->last_impl[sp->ix];
	pthread_mutex_unlock(s->lock);
	r.plan_impl = sp->plan_impl.name, r.plan_how = sp->plan_impl.how;
	return r;
}

void om_session_set_hook(om_session *s, om_node_hook fn, void *arg)
{
	s->hook = fn;
	s->hook_arg = arg;
}

/* the sum (or the most) of a size over the runners, as their last runs left them */
static size_t over_runners(const om_session *s, bool peak)
{
	size_t n = 0;
	pthread_mutex_lock(s->lock);
	for (const om_runner *r = s->runners; r; r = r->next)
		n = peak ? (r->peak > n ? r->peak : n) : n + r->bytes;
	pthread_mutex_unlock(s->lock);
	return n;
}

size_t om_session_pool_bytes(const om_session *s)
{
	return over_runners(s, false);
}

size_t om_session_peak_bytes(const om_session *s)
{
	return over_runners(s, true);
}

static int slower_first(const void *a, const void *b)
{
	double x = ((const om_profile_row *)a)->ms, y = ((const om_profile_row *)b)->ms;
	return x < y ? 1 : x > y ? -1 : 0;
}

void om_session_profile_reset(om_session *s)
{
	pthread_mutex_lock(s->lock);
	for (int32_t i = 0; i < s->nprof; i++) {
		s->prof[i].calls = 0;
		s->prof[i].ms = 0;
	}
	pthread_mutex_unlock(s->lock);
}

om_kind om_session_profile(const om_session *s, om_profile_row **rows, int *n, om_status *st)
{
	*rows = NULL;
	*n = 0;
	om_profile_row *r = malloc(sizeof *r * (size_t)(s->nprof ? s->nprof : 1));
	if (!r)
		return om_error(st, OM_ERR_NOMEM, NULL, "out of memory for the profile");
	int count = 0;
	pthread_mutex_lock(s->lock);
	for (int32_t i = 0; i < s->nprof; i++)
		if (s->prof[i].calls)
			r[count++] = s->prof[i];
	pthread_mutex_unlock(s->lock);
	if (!count) {
		free(r);
		return OM_OK;
	}
	qsort(r, (size_t)count, sizeof *r, slower_first);
	*rows = r;
	*n = count;
	return OM_OK;
}
