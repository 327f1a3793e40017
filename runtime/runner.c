/* runner.c — the runners of a session: one per run under way, reused (runner.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runner.h"

static om_runner *runner_new(om_session *s, om_status *st)
{
	om_runner *r = calloc(1, sizeof *r);
	if (r) {
		r->s = s;
		r->pool.limit = s->mem_limit;
		/* each runner draws its own stream: the clock, the runner's and session's addresses */
		struct timespec ts = {0};
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r->rng_key = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) ^
			     ((uint64_t)(uintptr_t)r << 16) ^ (uint64_t)(uintptr_t)s;
		r->steps = calloc((size_t)(s->nsteps_all ? s->nsteps_all : 1), sizeof *r->steps);
		r->prof = malloc(sizeof *r->prof * (size_t)(s->nprof ? s->nprof : 1));
	}
	if (!r || !r->steps || !r->prof) {
		om_runner_free(r);
		om_error(st, OM_ERR_NOMEM, NULL, "out of memory for a run");
		return NULL;
	}
	return r;
}

om_runner *om_runner_acquire(om_session *s, om_status *st)
{
	pthread_mutex_lock(s->lock);
	om_runner *r = s->idle;
	if (r)
		s->idle = r->next_idle;
	pthread_mutex_unlock(s->lock);
	if (!r) {
		if (!(r = runner_new(s, st)))
			return NULL;
		pthread_mutex_lock(s->lock);
		r->next = s->runners;
		s->runners = r;
		pthread_mutex_unlock(s->lock);
	}
	r->next_idle = NULL;
	r->cur = NULL;
	r->boxes = 0;
	r->deadline_ns = 0;
	r->prof_nested = 0;
	if (s->opt.profile)
		for (int32_t i = 0; i < s->nprof; i++)
			r->prof[i] = (om_profile_row){.op = s->prof[i].op, .node = s->prof[i].node};
	return r;
}

void om_runner_release(om_session *s, om_runner *r)
{
	pthread_mutex_lock(s->lock);
	for (int32_t i = 0; s->opt.profile && i < s->nprof; i++) {
		s->prof[i].calls += r->prof[i].calls;
		s->prof[i].ms += r->prof[i].ms;
		if (r->prof[i].impl)
			s->prof[i].impl = r->prof[i].impl;
	}
	for (int32_t i = 0; i < s->nsteps_all; i++) {
		s->last_mode[i] = r->steps[i].mode;
		s->last_impl[i] = r->steps[i].impl;
	}
	r->bytes = r->pool.bytes + r->scratch.cap;
	r->peak = r->pool.peak_busy;
	r->next_idle = s->idle;
	s->idle = r;
	pthread_mutex_unlock(s->lock);
}

void om_runner_free(om_runner *r)
{
	if (!r)
		return;
	for (int32_t i = 0; r->steps && i < r->s->nsteps_all; i++) {
		om_step_state *ss = &r->steps[i];
		om_infer_cache_free(ss->icache);
		if (ss->krelease && ss->kstate)
			ss->krelease(ss->kstate);
		free(ss->kstate);
	}
	free(r->steps);
	om_pool_free(&r->pool);
	om_scratch_free(&r->scratch);
	free(r->prof);
	for (int64_t i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	free(r->strs);
	free(r);
}
