/* parallel.c — om_par_for and its teams on omopt's own pool (parallel.h); a run's OpenMP count */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "crowd.h"
#include "parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/*
 * The pool. A host thread that splits a loop takes one of POOLS pools (another host thread
 * running at the same time takes another; when all are taken, the loop runs inline), starts
 * the workers it lacks (they persist), publishes the job and runs pieces itself. A piece is
 * claimed by whoever comes first, the caller included, so that a worker the OS has not run
 * yet never holds the caller up for a piece it has not started. Idle workers look for a job
 * for up to SPIN_NS, then sleep on a futex; the caller, once no piece is left to claim, waits
 * for the pieces under way for SPINS pauses, then on its own futex.
 *
 * A run splits job after job with a little serial work between them (a shufflenet_v2 run: 60
 * jobs in 6 ms). A worker that slept after each job cost the next one its futex wake-up and
 * the wait for a core (tens of microseconds in a VM, a time slice when another process holds
 * the core), and the caller then did most pieces itself: resnet18 at 2 threads under other
 * (niced) work took 20.5 ms a run against 14.7 with workers that wait out the gaps. So a worker
 * spins for SPIN_NS, as ONNX Runtime's workers spin for the next task (2^20 tries there), and
 * a session run that ends tells the workers to rest (om_par_rest): between runs they spin
 * REST_SPIN_NS at most instead of SPIN_NS, long enough for a caller that runs again at once
 * (a benchmark's loop, a decoder's next step from Python) to find them awake: on a Xeon VM
 * (2 cores) workers that slept at once cost the next run its wake-ups, mlp_dynq (a 0.2 ms
 * run) 0.27 -> 0.20 ms at 2 threads and mobilenet_v3_small 1.27 -> 1.19 (ONNX Runtime spins
 * its workers past the end of a run as well). SPIN_NS covers the serial stretches of a run between
 * its split jobs: on a Zen 3 VM a job of two 5 us pieces after 400 us without one took 20.6 us
 * with a spin of 0.2 ms (the worker asleep: its wake-up) and 6.1 us with 2 ms; shufflenet_v2
 * x0.5 at 2 threads, the least of 7 rounds: 1.46 -> 1.38 ms a run.
 *
 * The claim word holds the job's generation, its slot count, the next piece and the end of
 * the pieces not yet claimed, so that a worker late by a whole job claims nothing of the next
 * one by mistake: a successful compare-and-swap on the word is a piece of the job the word
 * names, and that job's fields stay as they are until the piece is done (the caller waits
 * for it). Slot 1 claims from the end, the others from the front: at two threads each keeps
 * its side of one job after another (a chain of elementwise ops over the same rows reads what
 * its own core wrote: two 200,000-float passes in turn, 41 -> 23 us a pair at the median on a
 * Zen 5 VM, 29 on one thread), where claims in turn from the front alone dealt the rows
 * between the cores anew at each job.
 *
 * A split that lost is not repeated at once. When another process holds a core, a worker can
 * be descheduled for a whole time slice (milliseconds) in the middle of a piece, and the
 * caller then waits for it: the job took longer than the caller alone would have. The owner
 * times each job (its own pieces, and the wait after them) and, when the split measured
 * slower than its own pieces at that pace would have been, runs the pool's next `hold` jobs
 * on the calling thread alone, with the same pieces in order (the same results), the workers
 * asleep; `hold` doubles when a split loses and halves when one wins (a worker that shares
 * its core with a busy process wins now and then: falling back to no hold at once made every
 * hold's end cost another lost split). Two more signs of another runnable thread count as a
 * lost split: a worker that finds itself descheduled while it spins (a gap of PREEMPTED_NS
 * between two looks at the clock), and an owner whose CPU time over a window of its sampled
 * pieces falls under 4/5 of their wall time (share()), each only with an involuntary context
 * switch of that thread meanwhile: a virtual CPU the host pauses shows both signs too, and
 * holding the split then only kept a 2-thread run on one thread (resnet18 on a noisy Zen 3
 * host at 2 threads: 36-48 ms a run, ONNX Runtime 24-26). The second is what a busy process
 * beside spinning workers does: three threads on two cores, the caller's serial work between
 * jobs slowed as well, which no job's timing shows (mobilenet_v2 at 2 threads beside a busy
 * loop took 11.7 ms a run against 8.0 at one thread; with the hold 8.5 against 9.2). On an
 * idle machine no split loses and nothing changes. Those signs come late or not at all where
 * the other process's core is not one a worker runs on at the time, so the machine's own
 * count is asked too (crowd.h): while other processes hold all but one of the CPUs, every
 * job runs as a held one does, and teams have one member.
 *
 * The pools are the process's, as OpenMP's are: om_par_for's callers name no pool.
 */
enum {
	POOLS = 8,             /* host threads splitting loops at once */
	MAX_WORKERS = 254,     /* workers a pool (slots 1..254: 255 fit the claim word) */
	PIECES_PER_THREAD = 4, /* pieces a thread: a late or preempted thread costs 1/4 share */
	MAX_PIECES = 0xffff,
	SPINS = 512,           /* the caller's pauses before a futex sleep: about 11 us (Zen 4) */
	SPIN_NS = 1000000,     /* a worker's spin for the next job before it sleeps */
	REST_SPIN_NS = 200000, /* ... once a run has ended (om_par_rest) */
	PREEMPTED_NS = 50000,  /* a gap in a spin that tells the worker was descheduled */
	SHARE_EVERY = 4,       /* the owner's CPU share is sampled on every 4th job */
	SHARE_WINDOW_NS = 2000000, /* ... and judged over 2 ms of its pieces */
	HOLD_FIRST = 16,       /* jobs run alone after a split lost */
	HOLD_MOST = 1024,      /* ... after many in a row (a resnet18 run splits ~100 jobs) */
	LOST_NS = 200000,      /* the least loss that tells a descheduled worker (judge) */
};

#define CLAIM(gen, slots, next, end)                                                            \
	((uint64_t)(gen) << 40 | (uint64_t)(slots) << 32 | (uint64_t)(next) << 16 |             \
	 (uint64_t)(end))
#define CLAIM_GEN(w) ((uint32_t)((w) >> 40))
#define CLAIM_SLOTS(w) ((int)(((w) >> 32) & 0xff))
#define CLAIM_NEXT(w) ((int64_t)(((w) >> 16) & 0xffff))
#define CLAIM_END(w) ((int64_t)((w)&0xffff))

struct om_par_team {
	int n;                  /* members */
	atomic_int count;       /* members at the current barrier */
	atomic_uint generation; /* barriers passed */
};

typedef struct pool pool;

typedef struct worker {
	pool *p;
	int slot;
	unsigned seen; /* the pool's wake count when it started: a job after that is new */
} worker;

struct pool {
	atomic_int taken; /* a host thread owns the pool */
	int started;      /* workers running (the owner alone changes it) */
	worker w[MAX_WORKERS];
	/* the job: written by the owner before it publishes the claim word */
	om_par_slot_fn fn;
	void *arg;
	int64_t n, len;
	om_par_team *team; /* a team's job: each worker claims one member at most */
	om_par_team_fn tfn;
	_Atomic uint64_t claim;
	atomic_uint wake;     /* futex: bumped at each job */
	atomic_uint done;     /* futex: pieces finished */
	atomic_int sleepers;  /* workers in futex_wait on wake */
	atomic_int owner_sleeps;
	atomic_uint rest;     /* bumped when a run ends: spinning workers go to sleep */
	atomic_bool taken_core; /* a spinner lost its core since the owner last judged a job */
	int64_t share_cpu, share_wall; /* the owner's CPU and wall time in sampled pieces */
	long share_csw; /* the owner's involuntary context switches when the window began */
	bool crowded; /* the last window's share was low: the next judged job lost */
	uint32_t gen;         /* jobs published (the owner's) */
	/* the owner's record of lost splits: jobs still to run alone, and the next hold */
	int held, hold;
	bool fresh; /* the owner started workers for this job: their start is no worker's pace */
};

static pool pools[POOLS];

static _Thread_local int inside; /* this thread runs a piece: nested loops run inline */

static void futex_wait(atomic_uint *word, unsigned expect)
{
	syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expect, NULL, NULL, 0);
}

static void futex_wake(atomic_uint *word)
{
	syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The calling thread's involuntary context switches: the times this kernel gave its CPU to
 * another runnable thread. A hypervisor that pauses the virtual CPU (a noisy host's steal)
 * makes none, so the count tells another process on our cores from a host taking them (a gap
 * in a spin or a low CPU share shows both); -1 where unknown (counted as another process). */
static long involuntary_switches(void)
{
#ifdef RUSAGE_THREAD
	struct rusage u;
	if (!getrusage(RUSAGE_THREAD, &u))
		return u.ru_nivcsw;
#endif
	return -1;
}

/* A worker's wait for the next job: until p->wake differs from `from` (a spin of up to SPIN_NS
 * that a rest cuts short, then the futex); returns it. */
static unsigned wait_job(pool *p, unsigned from)
{
	unsigned v;
	unsigned rest = atomic_load_explicit(&p->rest, memory_order_relaxed);
	int64_t last = now_ns();
	int64_t until = last + SPIN_NS;
	/* a gap without a switch was the host's; the count is read at the first look at the
	 * clock (a job that comes sooner costs no system call), a gap before it counts */
	long csw = -2;
	for (int s = 1;; s++) {
		if ((v = atomic_load_explicit(&p->wake, memory_order_acquire)) != from)
			return v;
		relax();
		if (s % 64)
			continue;
		const int64_t t = now_ns();
		if (t - last > PREEMPTED_NS && (csw < 0 || involuntary_switches() != csw)) {
			atomic_store_explicit(&p->taken_core, true, memory_order_relaxed);
			break;
		}
		if (csw == -2)
			csw = involuntary_switches();
		if (t > until)
			break;
		const unsigned r = atomic_load_explicit(&p->rest, memory_order_relaxed);
		if (r != rest) { /* a run ended: REST_SPIN_NS more at most */
			rest = r;
			until = t + REST_SPIN_NS < until ? t + REST_SPIN_NS : until;
		}
		last = t;
	}
	atomic_fetch_add(&p->sleepers, 1);
	while ((v = atomic_load(&p->wake)) == from)
		futex_wait(&p->wake, from);
	atomic_fetch_sub(&p->sleepers, 1);
	return v;
}

/* Claims a piece of the job in the claim word for `slot`: its index, or -1 (none left, or the
 * job does not take this slot). */
static int64_t claim(pool *p, int slot)
{
	uint64_t w = atomic_load_explicit(&p->claim, memory_order_acquire);
	const bool back = slot == 1;
	for (;;) {
		if (slot >= CLAIM_SLOTS(w) || CLAIM_NEXT(w) >= CLAIM_END(w))
			return -1;
		if (atomic_compare_exchange_weak_explicit(&p->claim, &w, back ? w - 1 : w + (1u << 16),
							  memory_order_acq_rel,
							  memory_order_acquire))
			return back ? CLAIM_END(w) - 1 : CLAIM_NEXT(w);
	}
}

static void finish(pool *p)
{
	atomic_fetch_add(&p->done, 1);
	if (atomic_load(&p->owner_sleeps))
		futex_wake(&p->done);
}

/* Piece k of the job, on `slot` (a team's member k, whoever claimed it). */
static void run_piece(pool *p, int64_t k, int slot)
{
	if (p->team) {
		p->tfn(p->arg, p->team, (int)k, p->team->n);
		return;
	}
	const int64_t lo = k * p->len, hi = p->n - lo < p->len ? p->n : lo + p->len;
	p->fn(p->arg, lo, hi, slot);
}

static void *work(void *arg)
{
	const worker *me = arg;
	pool *p = me->p;
	inside = 1;
#ifdef _OPENMP
	omp_set_num_threads(1); /* oneDNN called from a piece runs on its thread alone */
#endif
	unsigned seen = me->seen;
	for (;;) {
		seen = wait_job(p, seen);
		for (int64_t k; (k = claim(p, me->slot)) >= 0;) {
			const bool team = p->team != NULL; /* stable: our piece is not done */
			run_piece(p, k, me->slot);
			finish(p);
			if (team)
				break;
		}
	}
	return NULL;
}

/* After fork the child has none of the workers: its pools start again empty. */
static void forget_workers(void)
{
	for (int i = 0; i < POOLS; i++) {
		pools[i].started = 0;
		pools[i].held = pools[i].hold = 0;
		atomic_store(&pools[i].taken, 0);
	}
}

static void register_fork(void)
{
	pthread_atfork(NULL, NULL, forget_workers);
}

/* A free pool with at least `workers` workers, taken; NULL when none is free or a worker
 * cannot be started. */
static pool *take(int workers)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, register_fork);
	for (int i = 0; i < POOLS; i++) {
		int free_ = 0;
		pool *p = &pools[i];
		if (!atomic_compare_exchange_strong(&p->taken, &free_, 1))
			continue;
		p->fresh = p->started < workers;
		while (p->started < workers) {
			worker *w = &p->w[p->started];
			*w = (worker){p, p->started + 1, atomic_load(&p->wake)};
			pthread_attr_t at;
			pthread_t t;
			if (pthread_attr_init(&at))
				break;
			pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
			const int rc = pthread_create(&t, &at, work, w);
			pthread_attr_destroy(&at);
			if (rc)
				break;
			p->started++;
		}
		return p;
	}
	return NULL;
}

/* After a split job: the caller ran `mine` of its `pieces` in `own` ns and the job took
 * `all`. It lost when the pieces at the caller's pace, one after another, would have taken
 * less than `all` by a tenth and by LOST_NS: a descheduled worker costs the caller a time
 * slice (milliseconds), where a small job's wake-up costs microseconds (small jobs then keep
 * their split: a hold would take the big ones' too). */
static void judge(pool *p, int64_t mine, int64_t pieces, int64_t own, int64_t all)
{
	if (mine <= 0 || all <= 0)
		return;
	const double alone = (double)own / (double)mine * (double)pieces;
	/* a worker that lost its core while it waited tells another process wants it: with a
	 * worker runnable the caller shares a core too, so that counts as a lost split */
	const bool taken = atomic_exchange_explicit(&p->taken_core, false, memory_order_relaxed) ||
			   p->crowded;
	p->crowded = false;
	if (taken || (alone < 0.9 * (double)all && (double)all - alone > LOST_NS)) {
		p->hold = p->hold ? (p->hold < HOLD_MOST ? 2 * p->hold : HOLD_MOST) : HOLD_FIRST;
		p->held = p->hold;
	} else if (alone > 1.2 * (double)all) {
		p->hold /= 2;
	}
}

static int64_t thread_cpu_ns(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t))
		return -1;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The owner ran pieces from wall time t0 to t1 with c0 .. c1 of CPU time: over a window of
 * SHARE_WINDOW_NS of such pieces, a share of its CPU under 4/5 tells another runnable thread
 * takes turns on its core (a busy process beside the spinning workers: three threads on two
 * cores). That no job's timing shows, and it slows the serial work between jobs too
 * (mobilenet_v2 at 2 threads beside a busy loop: 11.7 ms a run against 8.0 at one thread):
 * the window's end counts as a lost split, so that the held jobs run with the workers asleep
 * and the caller keeps a core of its own. */
static void share(pool *p, int64_t c0, int64_t c1, int64_t t0, int64_t t1)
{
	if (c0 < 0 || c1 < c0 || t1 <= t0)
		return;
	if (!p->share_wall)
		p->share_csw = involuntary_switches();
	p->share_cpu += c1 - c0, p->share_wall += t1 - t0;
	if (p->share_wall < SHARE_WINDOW_NS)
		return;
	/* a share the host took (no switch to another thread here) is not a crowd */
	const long csw = involuntary_switches();
	p->crowded = p->share_cpu * 5 < p->share_wall * 4 &&
		     (csw < 0 || p->share_csw < 0 || csw != p->share_csw);
	p->share_cpu = p->share_wall = 0;
}

/* Runs the job set in p's fields: `pieces` pieces over slots [0, slots); the caller is slot 0
 * and, for a team, member 0. */
static void run_job(pool *p, int slots, int64_t pieces)
{
	atomic_store_explicit(&p->done, 0, memory_order_relaxed);
	p->gen = (p->gen + 1) & 0xffffff;
	const bool sample = !p->team && p->gen % SHARE_EVERY == 0;
	const int64_t c0 = sample ? thread_cpu_ns() : 0;
	const int64_t t0 = now_ns();
	atomic_store_explicit(&p->claim, CLAIM(p->gen, slots, 0, pieces), memory_order_release);
	atomic_fetch_add(&p->wake, 1);
	if (atomic_load(&p->sleepers))
		futex_wake(&p->wake);
	inside = 1;
#ifdef _OPENMP
	const int omp_saved = om_par_threads_set(1); /* as the workers' pieces (work) */
#endif
	int64_t mine = 0;
	if (p->team) {
		/* one member, whichever is left: the members each need a thread of their own */
		const int64_t k = claim(p, 0);
		run_piece(p, k, (int)k);
		finish(p);
	} else {
		for (int64_t k; (k = claim(p, 0)) >= 0; mine++) {
			run_piece(p, k, 0);
			finish(p);
		}
	}
	inside = 0;
#ifdef _OPENMP
	om_par_threads_restore(omp_saved);
#endif
	const int64_t t1 = now_ns();
	if (sample)
		share(p, c0, thread_cpu_ns(), t0, t1);
	unsigned d;
	for (int s = 0; (d = atomic_load(&p->done)) < pieces; s++) {
		if (s < SPINS) {
			relax();
			continue;
		}
		atomic_store(&p->owner_sleeps, 1);
		if ((d = atomic_load(&p->done)) < pieces)
			futex_wait(&p->done, d);
		atomic_store(&p->owner_sleeps, 0);
	}
	if (!p->team && !p->fresh)
		judge(p, mine, pieces, t1 - t0, now_ns() - t0);
}

/* The job's pieces on the calling thread, in order (a held pool: see the top) */
static void run_alone(pool *p, int64_t pieces)
{
	inside = 1;
#ifdef _OPENMP
	const int omp_saved = om_par_threads_set(1);
#endif
	for (int64_t k = 0; k < pieces; k++)
		run_piece(p, k, 0);
	inside = 0;
#ifdef _OPENMP
	om_par_threads_restore(omp_saved);
#endif
	if (p->held > 0)
		p->held--;
}

static bool nested(void)
{
#ifdef _OPENMP
	if (omp_in_parallel())
		return true;
#endif
	return inside;
}

int om_par_slots(int threads, int64_t n, int64_t grain)
{
	if (n <= 0 || threads <= 1 || nested())
		return 1;
	if (threads > MAX_WORKERS + 1)
		threads = MAX_WORKERS + 1;
	const int64_t grains = (n - 1) / (grain < 1 ? 1 : grain) + 1;
	return threads < grains ? threads : (int)grains;
}

void om_par_for_slots(int threads, int64_t n, int64_t grain, om_par_slot_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	const int nth = om_par_slots(threads, n, grain);
	const bool crowd = nth > 1 && om_crowd_now(); /* asked before a worker starts */
	pool *p = nth > 1 ? take(nth - 1) : NULL;
	if (!p) {
		fn(arg, 0, n, 0);
		return;
	}
	/* pieces: whole grains, at most PIECES_PER_THREAD a slot; their bounds depend on n,
	 * grain and nth alone, never on who runs them */
	const int slots = p->started + 1 < nth ? p->started + 1 : nth;
	int64_t most = (int64_t)nth * PIECES_PER_THREAD;
	if (most > MAX_PIECES)
		most = MAX_PIECES;
	const int64_t grains = (n - 1) / grain + 1;
	const int64_t len = ((grains - 1) / (grains < most ? grains : most) + 1) * grain;
	p->fn = fn, p->arg = arg, p->n = n, p->len = len, p->team = NULL;
	if (p->held > 0 || crowd)
		run_alone(p, (n - 1) / len + 1);
	else
		run_job(p, slots, (n - 1) / len + 1);
	atomic_store_explicit(&p->taken, 0, memory_order_release);
}

bool om_par_held(int threads)
{
	if (threads <= 1 || nested())
		return false;
	for (int i = 0; i < POOLS; i++) { /* the pool take() would give this thread */
		int free_ = 0;
		pool *p = &pools[i];
		if (!atomic_compare_exchange_strong(&p->taken, &free_, 1))
			continue;
		const bool held = p->held > 0 || om_crowd_now();
		if (p->held > 0)
			p->held--;
		atomic_store_explicit(&p->taken, 0, memory_order_release);
		return held;
	}
	return false;
}

void om_par_rest(void)
{
	for (int i = 0; i < POOLS; i++)
		atomic_fetch_add_explicit(&pools[i].rest, 1, memory_order_relaxed);
}

typedef struct plain {
	om_par_fn fn;
	void *arg;
} plain;

static void plain_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	const plain *p = arg;
	(void)slot;
	p->fn(p->arg, lo, hi);
}

void om_par_for(int threads, int64_t n, int64_t grain, om_par_fn fn, void *arg)
{
	plain p = {fn, arg};
	om_par_for_slots(threads, n, grain, plain_piece, &p);
}

void om_par_team_run(int threads, int most, om_par_team_fn fn, void *arg)
{
	om_par_team t = {.n = om_par_slots(threads, most, 1)};
	atomic_init(&t.count, 0);
	atomic_init(&t.generation, 0);
	pool *p = t.n > 1 && !om_crowd_now() ? take(t.n - 1) : NULL;
	if (!p) {
		t.n = 1;
		fn(arg, &t, 0, 1);
		return;
	}
	if (t.n > p->started + 1)
		t.n = p->started + 1; /* the workers the pool could start */
	p->tfn = fn, p->arg = arg, p->team = &t;
	run_job(p, t.n, t.n);
	p->team = NULL;
	atomic_store_explicit(&p->taken, 0, memory_order_release);
}

int om_par_threads_set(int n)
{
#ifdef _OPENMP
	const int saved = omp_get_max_threads();
	if (saved != n)
		omp_set_num_threads(n);
	return saved;
#else
	(void)n;
	return 0;
#endif
}

void om_par_threads_restore(int saved)
{
#ifdef _OPENMP
	if (saved > 0 && omp_get_max_threads() != saved)
		omp_set_num_threads(saved);
#else
	(void)saved;
#endif
}

/* spins before a waiting member yields its CPU at each look (about 20-50 us) */
enum { TEAM_SPINS = 1 << 12 };

void om_par_barrier(om_par_team *t)
{
	if (t->n <= 1)
		return;
	const unsigned gen = atomic_load_explicit(&t->generation, memory_order_acquire);
	if (atomic_fetch_add_explicit(&t->count, 1, memory_order_acq_rel) == t->n - 1) {
		atomic_store_explicit(&t->count, 0, memory_order_relaxed);
		atomic_store_explicit(&t->generation, gen + 1, memory_order_release);
		return;
	}
	for (unsigned spins = 0;
	     atomic_load_explicit(&t->generation, memory_order_acquire) == gen; spins++) {
		if (spins >= TEAM_SPINS)
			sched_yield();
		else
			relax();
	}
}
