/* parallel.c — om_par_for, its teams, a run's OpenMP thread count (parallel.h): on OpenMP. */
#include <sched.h>
#include <stdatomic.h>

#include "parallel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Pieces per thread: one, the same contiguous share for every loop of a given extent, so that
 * an element-wise op finds in its core's cache what the previous one wrote there. */
enum { PIECES_PER_THREAD = 1 };

int om_par_slots(int threads, int64_t n, int64_t grain)
{
#ifdef _OPENMP
	if (n <= 0 || threads <= 1 || omp_in_parallel())
		return 1;
	const int64_t grains = (n - 1) / (grain < 1 ? 1 : grain) + 1;
	return threads < grains ? threads : (int)grains;
#else
	(void)threads, (void)n, (void)grain;
	return 1;
#endif
}

void om_par_for_slots(int threads, int64_t n, int64_t grain, om_par_slot_fn fn, void *arg)
{
	if (n <= 0)
		return;
	if (grain < 1)
		grain = 1;
	const int nth = om_par_slots(threads, n, grain);
	if (nth <= 1) {
		fn(arg, 0, n, 0);
		return;
	}
#ifdef _OPENMP
	const int64_t grains = (n - 1) / grain + 1, most = (int64_t)nth * PIECES_PER_THREAD;
	const int64_t len = ((grains - 1) / (grains < most ? grains : most) + 1) * grain;
	const int64_t pieces = (n - 1) / len + 1;
#pragma omp parallel for num_threads(nth) schedule(static, 1)
	for (int64_t p = 0; p < pieces; p++)
		fn(arg, p * len, n - p * len < len ? n : p * len + len, omp_get_thread_num());
#endif
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

struct om_par_team {
	int n;                  /* members */
	atomic_int count;       /* members at the current barrier */
	atomic_uint generation; /* barriers passed */
};

void om_par_team_run(int threads, int most, om_par_team_fn fn, void *arg)
{
	om_par_team t = {.n = om_par_slots(threads, most, 1)};
	atomic_init(&t.count, 0);
	atomic_init(&t.generation, 0);
	if (t.n <= 1) {
		t.n = 1;
		fn(arg, &t, 0, 1);
		return;
	}
#ifdef _OPENMP
#pragma omp parallel num_threads(t.n)
	{
#pragma omp single
		t.n = omp_get_num_threads(); /* the team OpenMP gave (single ends in a barrier) */
		fn(arg, &t, omp_get_thread_num(), t.n);
	}
#endif
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
#if defined(__x86_64__) || defined(__i386__)
		else
			__builtin_ia32_pause();
#endif
	}
}
