/*
 * runner.h — the mutable state of one run (runner.c): buffers, kernel states, inference caches,
 * strings, profile counters, the time limit.
 *
 * A plan never changes once the session is made; everything a run writes lives in a runner.
 * A session keeps its runners and hands each om_session_run one nobody else is using (a new
 * one when all are busy), so that any number of threads may run one session at once, as ONNX
 * Runtime's Run may be called concurrently. A session run from one thread at a time has one
 * runner, as a session had one set of buffers before. What a caller sees across runs (the
 * profile, the last run's modes and implementations, the pool's bytes) is merged into the
 * session under its lock when a run hands its runner back.
 */
#ifndef OM_RUNNER_H
#define OM_RUNNER_H

#include "plan.h"
#include "scratch.h"

/* A step's part of a runner (om_step.ix): what its kernel and its inference keep across runs. */
typedef struct om_step_state {
	void *kstate;             /* the kernel's state (om_ctx.state), malloc'd by the kernel */
	void (*krelease)(void *); /* called on kstate before free() (om_ctx.state_release) */
	struct om_infer_cache *icache; /* dynamic steps: the last run-time inference */
	const char *impl; /* the implementation its kernel named in this runner's last run */
	uint8_t mode;     /* om_node_mode it ran in (this runner's last run) */
} om_step_state;

typedef struct om_runner {
	om_session *s;
	struct om_runner *next_idle; /* the session's idle runners */
	struct om_runner *next;      /* every runner of the session */
	om_pool pool;
	struct om_frame *cur; /* the frame whose step is running, for subgraph runs */
	om_step_state *steps; /* s->nsteps_all entries */
	om_profile_row *prof; /* s->nprof rows: this run's counters (merged into s->prof) */
	double prof_nested;   /* ms of the steps run so far (a control step's own time is its
				 time less that of the steps it ran in its subgraphs) */
	void **strs; /* string bytes kernels malloc'd during the run (freed when it ends) */
	int64_t nstrs, capstrs;
	int boxes;           /* the main graph's outputs may be sequences/optionals */
	int64_t deadline_ns; /* CLOCK_MONOTONIC time the run must end by; 0: none */
	size_t bytes, peak;  /* pool.bytes and pool.peak_busy when its last run ended */
	uint64_t rng_key, rng_draws; /* unseeded random ops' keys: rng_key's stream (random.h) */
	om_scratch scratch; /* kernels' work buffers (om_ctx_scratch) */
	bool read_const;    /* the running step's kernel read a constant by file reads
			       (om_ctx_read_const): its pages were never mapped */
} om_runner;

/** An idle runner of s, or a new one; NULL (with *st set) when out of memory. */
om_runner *om_runner_acquire(om_session *s, om_status *st);
/** The run on r has ended: its counters and record go into s, r becomes idle. */
void om_runner_release(om_session *s, om_runner *r);
/** Frees r and everything it holds (kernel states, caches, buffers). */
void om_runner_free(om_runner *r);

#endif
