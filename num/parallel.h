/* parallel.h — the one parallel loop of omopt's own kernels: [0, n) cut into pieces that run
 * on up to a run's threads (om_ctx.threads) on omopt's own pool (workers that spin up to 1 ms
 * for the next job, then sleep on a futex, within 0.2 ms after om_par_rest; the calling thread runs
 * pieces too); a team of workers
 * meeting at barriers (a recurrence's steps split by units); and the OpenMP count oneDNN's
 * primitives run at (their own pool: libgomp's).
 *
 * A kernel splits only a loop whose iterations are independent (each writes its own outputs
 * and reads nothing another writes): an output's arithmetic is then the same whichever piece
 * computes it, so results never depend on the thread count (exact mode's promise). Never a
 * reduction's order. */
#ifndef OM_PARALLEL_H
#define OM_PARALLEL_H

#include <stdbool.h>
#include <stdint.h>

/** One piece: iterations [lo, hi) of the loop. */
typedef void (*om_par_fn)(void *arg, int64_t lo, int64_t hi);

/**
 * Calls fn over pieces that cover [0, n) once each, concurrently on up to `threads` threads.
 * Every piece but the last is a whole number of `grain` iterations (at least one): grain is
 * the least work worth a thread, and a caller's alignment (pieces start at multiples of it).
 * One call fn(arg, 0, n) on the calling thread when threads <= 1, n <= grain, inside a piece
 * or an OpenMP region, or when 8 other host threads hold the pools. Pieces are claimed by
 * whichever thread comes first, the caller included; they run at an OpenMP count of 1 (oneDNN
 * called from a piece stays on its thread). After a split ran slower than the caller alone
 * would have (a worker descheduled by another process's work), the next jobs' pieces run one
 * after another on the calling thread (parallel.c). fn must not fail: a piece that cannot get a buffer
 * takes a path that needs none (or the caller gives it one: om_par_for_slots).
 */
void om_par_for(int threads, int64_t n, int64_t grain, om_par_fn fn, void *arg);

/** A piece run by worker `slot`: no other piece runs on that slot at the same time. */
typedef void (*om_par_slot_fn)(void *arg, int64_t lo, int64_t hi, int slot);

/** The workers om_par_for(threads, n, grain, ...) runs its pieces on (1: the calling thread
 *  alone): slots take the values [0, om_par_slots(...)). */
int om_par_slots(int threads, int64_t n, int64_t grain);

/** om_par_for, telling each piece its worker's slot (for buffers made per worker, before). */
void om_par_for_slots(int threads, int64_t n, int64_t grain, om_par_slot_fn fn, void *arg);

/**
 * Whether the next split on `threads` threads would run its pieces on the calling thread
 * alone, a split having lost lately or other processes holding all CPUs but one (parallel.c:
 * the pool is held; crowd.h). True counts as that held
 * job: a kernel that then runs its one-thread form instead of om_par_for (a whole oneDNN
 * primitive in place of its slices, which run one after another cost 5-10% more) spends the
 * hold as the split would have. False at one thread, inside a piece, or with no pool free.
 */
bool om_par_held(int threads);

/** A run ended: the pools' spinning workers sleep within 0.2 ms (a next run that soon finds
 *  them awake) instead of spinning out their wait for a next job (a session calls it when a
 *  run returns; another run in progress only pays its workers' wake-ups). */
void om_par_rest(void);

/** A team of workers (om_par_team_run), for om_par_barrier. */
typedef struct om_par_team om_par_team;

/** Member `slot` of a team of `count`. */
typedef void (*om_par_team_fn)(void *arg, om_par_team *team, int slot, int count);

/**
 * Runs fn once on each of min(threads, most) threads at once (one call fn(arg, team, 0, 1) on
 * the calling thread when that is 1, inside a piece, or when no pool is free), for
 * work whose steps each need all the members' previous results: the members meet at
 * om_par_barrier(team) between steps, and each must reach every barrier the others do.
 */
void om_par_team_run(int threads, int most, om_par_team_fn fn, void *arg);

/**
 * Waits until every member of the team gets here. The members spin (a step of a recurrence
 * is a few microseconds: OpenMP's barrier cost 2.3 us each, the spin 0.2-0.5), yielding the
 * CPU after a while (more threads than CPUs).
 */
void om_par_barrier(om_par_team *team);

/**
 * The count OpenMP gives the calling thread's parallel regions that name none (its nthreads
 * ICV, omp_get_max_threads()): oneDNN's products and convolutions read it when they run. A
 * session's run sets it to its own `threads` and gives back the count the caller had when it
 * returns, on every path: om_par_threads_set returns that count for om_par_threads_restore.
 * OpenMP keeps the count per thread (each host thread has its own), so nothing another thread
 * sees changes, even during the run. Without OpenMP, nothing (om_par_threads_set returns 0).
 */
int om_par_threads_set(int n);
void om_par_threads_restore(int saved);

#endif
