/* test_parallel_pool.c — omopt's own pool under om_par_for (num/parallel.c): a slot runs one
 * piece at a time and stays below om_par_slots, the calling thread runs pieces too, a loop
 * inside a piece runs inline, teams meet at barriers on distinct threads, more host threads
 * than pools all finish, a forked child splits loops, pieces see an OpenMP count of 1, idle
 * workers sleep (the process's CPU time while it sleeps stays near zero), and a split that a
 * slow worker made lose is not repeated for the next jobs, then tried again. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "nodetest.h"
#include "parallel.h"

enum { MAXT = 8 };

typedef struct slots_job {
	int64_t n;
	atomic_int busy[MAXT]; /* pieces running on each slot */
	atomic_int bad;        /* a slot out of range or run twice at once */
	atomic_int *hits;      /* per iteration */
	atomic_int caller_pieces;
	pthread_t caller;
	int slots;
} slots_job;

static void slot_piece(void *arg, int64_t lo, int64_t hi, int slot)
{
	slots_job *j = arg;
	if (slot < 0 || slot >= j->slots || atomic_fetch_add(&j->busy[slot], 1) != 0) {
		atomic_store(&j->bad, 1);
		return;
	}
	if (pthread_equal(pthread_self(), j->caller))
		atomic_fetch_add(&j->caller_pieces, 1);
	else /* a worker waits (up to 2 s) for the caller to have claimed a piece */
		for (int w = 0; w < 20000 && !atomic_load(&j->caller_pieces); w++)
			nanosleep(&(struct timespec){0, 100000}, NULL);
	for (int64_t i = lo; i < hi; i++)
		atomic_fetch_add(&j->hits[i], 1);
	nanosleep(&(struct timespec){0, 200000}, NULL); /* 0.2 ms: others run meanwhile */
	atomic_fetch_sub(&j->busy[slot], 1);
}

/* slots in [0, om_par_slots), one piece a slot at a time, every iteration once, the caller
 * among the runners: the workers' pieces wait for it, and a job has more pieces than workers */
static void slots_exclusive_caller_works(void **state)
{
	(void)state;
	for (int threads = 2; threads <= MAXT; threads++)
		for (int64_t n = 1; n <= 200; n += 37) {
			slots_job j = {.n = n, .caller = pthread_self(),
				       .slots = om_par_slots(threads, n, 3)};
			j.hits = calloc((size_t)n, sizeof *j.hits);
			assert_true(j.slots >= 1 && j.slots <= threads);
			om_par_for_slots(threads, n, 3, slot_piece, &j);
			assert_int_equal(atomic_load(&j.bad), 0);
			assert_true(atomic_load(&j.caller_pieces) >= 1);
			for (int64_t i = 0; i < n; i++)
				assert_int_equal(atomic_load(&j.hits[i]), 1);
			free(j.hits);
		}
}

typedef struct nest_job {
	atomic_int inner_pieces;
	atomic_int inner_slots_not_one;
	atomic_int omp_not_one;
	atomic_llong sum;
} nest_job;

static void inner_piece(void *arg, int64_t lo, int64_t hi)
{
	nest_job *j = arg;
	atomic_fetch_add(&j->inner_pieces, 1);
	for (int64_t i = lo; i < hi; i++)
		atomic_fetch_add(&j->sum, i);
}

static void outer_piece(void *arg, int64_t lo, int64_t hi)
{
	nest_job *j = arg;
	for (int64_t i = lo; i < hi; i++) {
		if (om_par_slots(4, 1000, 1) != 1)
			atomic_store(&j->inner_slots_not_one, 1);
#ifdef _OPENMP
		if (omp_get_max_threads() != 1) /* oneDNN called here runs on this thread alone */
			atomic_store(&j->omp_not_one, 1);
#endif
		om_par_for(4, 1000, 1, inner_piece, j); /* inline: one piece */
	}
}

static void nested_loops_inline(void **state)
{
	(void)state;
	nest_job j = {0};
#ifdef _OPENMP
	const int saved = om_par_threads_set(3);
#endif
	om_par_for(3, 12, 1, outer_piece, &j);
#ifdef _OPENMP
	assert_int_equal(omp_get_max_threads(), 3); /* the caller's count back after its pieces */
	om_par_threads_restore(saved);
#endif
	assert_int_equal(atomic_load(&j.inner_pieces), 12);
	assert_int_equal(atomic_load(&j.inner_slots_not_one), 0);
	assert_int_equal(atomic_load(&j.omp_not_one), 0);
	assert_true(atomic_load(&j.sum) == 12LL * (999 * 1000 / 2));
}

enum { STEPS = 300 };

typedef struct team_job {
	int count;
	atomic_int members_seen;
	atomic_int bad;
	int value[MAXT][2]; /* member's value per step parity */
	pthread_t tid[MAXT];
} team_job;

/* each step, member s writes step + s, then after a barrier checks every member's value of
 * that step (a missed barrier shows as a stale value) */
static void member(void *arg, om_par_team *team, int slot, int count)
{
	team_job *j = arg;
	j->count = count;
	j->tid[slot] = pthread_self();
	atomic_fetch_add(&j->members_seen, 1);
	for (int step = 0; step < STEPS; step++) {
		j->value[slot][step & 1] = step + slot;
		om_par_barrier(team);
		for (int s = 0; s < count; s++)
			if (j->value[s][step & 1] != step + s)
				atomic_store(&j->bad, 1);
		om_par_barrier(team);
	}
}

static void teams_meet_at_barriers(void **state)
{
	(void)state;
	for (int threads = 1; threads <= 4; threads++)
		for (int most = 1; most <= 5; most += 2) {
			team_job j = {0};
			om_par_team_run(threads, most, member, &j);
			const int want = threads < most ? threads : most;
			assert_int_equal(j.count, want);
			assert_int_equal(atomic_load(&j.members_seen), want);
			assert_int_equal(atomic_load(&j.bad), 0);
			for (int a = 0; a < want; a++)
				for (int b = a + 1; b < want; b++)
					assert_false(pthread_equal(j.tid[a], j.tid[b]));
		}
}

enum { HOSTS = 12, HOST_LOOPS = 200, HOST_N = 997 };

static void count_piece(void *arg, int64_t lo, int64_t hi)
{
	atomic_fetch_add((atomic_llong *)arg, hi - lo);
}

static void *host(void *arg)
{
	atomic_llong *total = arg;
	for (int r = 0; r < HOST_LOOPS; r++)
		om_par_for(1 + r % 3, HOST_N, 7, count_piece, total);
	return NULL;
}

/* more host threads than pools (8) at once: every loop covers its range once */
static void many_hosts(void **state)
{
	(void)state;
	atomic_llong total = 0;
	pthread_t t[HOSTS];
	for (int i = 0; i < HOSTS; i++)
		assert_int_equal(pthread_create(&t[i], NULL, host, &total), 0);
	for (int i = 0; i < HOSTS; i++)
		pthread_join(t[i], NULL);
	assert_true(atomic_load(&total) == (long long)HOSTS * HOST_LOOPS * HOST_N);
}

/* a child forked after the pool started splits loops too (its pools start empty) */
static void forked_child(void **state)
{
	(void)state;
	atomic_llong total = 0;
	om_par_for(3, HOST_N, 7, count_piece, &total);
	const pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		atomic_llong t = 0;
		slots_job j = {.n = 64, .caller = pthread_self(), .slots = om_par_slots(3, 64, 1)};
		j.hits = calloc(64, sizeof *j.hits);
		om_par_for(3, HOST_N, 7, count_piece, &t);
		om_par_for_slots(3, 64, 1, slot_piece, &j);
		_exit(atomic_load(&t) == HOST_N && j.slots == 3 && !atomic_load(&j.bad) ? 0 : 1);
	}
	int status = 0;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_true(atomic_load(&total) == HOST_N);
}

static double cpu_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* after a loop at 4 threads, 200 ms of sleep cost the process well under 20 ms of CPU (its
 * workers spin about 10 us each, then sleep on a futex; a worker spinning or yielding through
 * the sleep costs all of it) */
static void idle_workers_sleep(void **state)
{
	(void)state;
	atomic_llong total = 0;
	for (int r = 0; r < 50; r++)
		om_par_for(4, HOST_N, 1, count_piece, &total);
	const double t0 = cpu_ms();
	nanosleep(&(struct timespec){0, 200000000}, NULL);
	const double used = cpu_ms() - t0;
	if (used > 20)
		fail_msg("idle workers used %.1f ms of CPU in 200 ms", used);
}

typedef struct stall_job {
	pthread_t caller;
	atomic_int worker_started; /* a worker's piece began */
	atomic_int worker_pieces;
	atomic_llong covered;
	int stall; /* a worker's piece sleeps 50 ms (a worker descheduled mid-piece) */
} stall_job;

static void stall_piece(void *arg, int64_t lo, int64_t hi)
{
	stall_job *j = arg;
	atomic_fetch_add(&j->covered, hi - lo);
	if (!pthread_equal(pthread_self(), j->caller)) {
		atomic_fetch_add(&j->worker_pieces, 1);
		atomic_store(&j->worker_started, 1);
		if (j->stall)
			nanosleep(&(struct timespec){0, 50000000}, NULL);
		return;
	}
	if (j->stall) /* the caller's first piece waits (up to 2 s) for a worker to hold one */
		for (int w = 0; w < 20000 && !atomic_load(&j->worker_started); w++)
			nanosleep(&(struct timespec){0, 100000}, NULL);
	else /* 1 ms of work: a worker claims pieces when it is not held off */
		nanosleep(&(struct timespec){0, 1000000}, NULL);
}

/* A job whose worker held the caller 50 ms for pieces the caller runs in microseconds lost:
 * the next 16 jobs run on the caller alone (every iteration still once; om_par_held says so
 * and counts as one), and after them a job is split again */
static void lost_split_held(void **state)
{
	(void)state;
	stall_job w = {.caller = pthread_self()}; /* starts the worker (a start is not judged) */
	om_par_for(2, 16, 1, stall_piece, &w);
	stall_job j = {.caller = pthread_self(), .stall = 1};
	om_par_for(2, 16, 1, stall_piece, &j);
	assert_true(atomic_load(&j.covered) == 16 && atomic_load(&j.worker_pieces) >= 1);
	stall_job q = {.caller = pthread_self()};
	assert_false(om_par_held(1));
	assert_true(om_par_held(2)); /* the first of the 16 */
	for (int r = 0; r < 15; r++)
		om_par_for(2, 16, 1, stall_piece, &q);
	assert_true(atomic_load(&q.covered) == 15 * 16);
	assert_int_equal(atomic_load(&q.worker_pieces), 0);
	assert_false(om_par_held(2));
	/* held no longer: of 20 jobs of 1 ms pieces, the worker takes part in some */
	for (int r = 0; r < 20; r++)
		om_par_for(2, 16, 1, stall_piece, &q);
	assert_true(atomic_load(&q.covered) == 35 * 16);
	assert_true(atomic_load(&q.worker_pieces) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: it needs pools with no record of lost splits (the others leave some) */
		cmocka_unit_test(lost_split_held),
		cmocka_unit_test(slots_exclusive_caller_works),
		cmocka_unit_test(nested_loops_inline),
		cmocka_unit_test(teams_meet_at_barriers),
		cmocka_unit_test(many_hosts),
		cmocka_unit_test(forked_child),
		cmocka_unit_test(idle_workers_sleep),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
