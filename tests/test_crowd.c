/* test_crowd.c — crowd.h: other processes that hold all CPUs but one are seen within a few
 * windows, and then the pool runs every split on the calling thread (parallel.c); turned
 * off, the watch sees nothing. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crowd.h"
#include "nodetest.h"
#include "parallel.h"

enum { MOST_CPUS = 8 }; /* busy processes the test starts at most */

static void sleep_ms(long ms)
{
	nanosleep(&(struct timespec){ms / 1000, (ms % 1000) * 1000000}, NULL);
}

/* `n` child processes that spin until killed */
static int start_busy(pid_t *pids, int n)
{
	int k = 0;
	for (; k < n; k++) {
		if ((pids[k] = fork()) < 0)
			break;
		if (pids[k] == 0)
			for (volatile unsigned long x = 0;; x++)
				;
	}
	return k;
}

static void stop_busy(pid_t *pids, int n)
{
	for (int k = 0; k < n; k++) {
		kill(pids[k], SIGKILL);
		waitpid(pids[k], NULL, 0);
	}
}

/* om_crowd_now within 2 s of polling every 20 ms */
static bool seen_within_2s(void)
{
	for (int i = 0; i < 100; i++) {
		if (om_crowd_now())
			return true;
		sleep_ms(20);
	}
	return false;
}

typedef struct where {
	pthread_t caller;
	atomic_int elsewhere; /* pieces that ran on another thread */
	atomic_llong covered;
} where;

static void note_piece(void *arg, int64_t lo, int64_t hi)
{
	where *w = arg;
	atomic_fetch_add(&w->covered, hi - lo);
	if (!pthread_equal(pthread_self(), w->caller))
		atomic_fetch_add(&w->elsewhere, 1);
}

static void busy_cpus_are_seen(void **state)
{
	(void)state;
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (cpus < 2 || cpus - 1 > MOST_CPUS || access("/proc/stat", R_OK)) {
		printf("skipped: needs 2 to %d online CPUs and /proc/stat (%ld CPUs)\n",
		       MOST_CPUS + 1, cpus);
		skip();
	}
	pid_t pids[MOST_CPUS];
	const int n = start_busy(pids, (int)cpus - 1);
	assert_int_equal(n, cpus - 1);
	om_crowd_watch(false);
	sleep_ms(250);
	const bool off = om_crowd_now();
	om_crowd_watch(true);
	const bool seen = seen_within_2s();
	/* crowded: a split runs on this thread alone, every iteration once; om_par_held says so */
	const bool held = om_par_held(2);
	where w = {.caller = pthread_self()};
	om_par_for(2, 64, 1, note_piece, &w);
	const bool still = om_crowd_now();
	stop_busy(pids, n);
	assert_false(off);
	assert_true(seen);
	assert_true(held);
	assert_int_equal(atomic_load(&w.covered), 64);
	if (still) /* the verdict did not change between the two calls */
		assert_int_equal(atomic_load(&w.elsewhere), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(busy_cpus_are_seen)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
