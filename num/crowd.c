/* crowd.c — other processes' CPU time over a window, from /proc/stat (crowd.h).
 *
 * The pool's own signs of a busy core (parallel.c: a worker descheduled in its spin, the
 * owner's CPU share, a split that lost) come from the pool's threads, and only once they have
 * lost time to another process. On a 2-core Xeon VM beside a busy loop they missed most of
 * it: 2 threads took 4.6 ms a run of mobilenet_v3_small_qdq against 3.1 at one, resnet18
 * 25.4 against 21.4, bert4 8.6 against 6.1. The system's busy time less this process's
 * tells another process's work directly, whatever our threads were doing. */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "crowd.h"

#define WINDOW_NS 100000000LL     /* a sample's window */
#define FIRST_WINDOW_NS 20000000LL /* the first one's (/proc/stat's times are finer) */

static atomic_bool watch = true;
static atomic_bool verdict;
static atomic_flag sampling = ATOMIC_FLAG_INIT;
static _Atomic int64_t next_ns; /* when the window ends: 0 before the first sample */
/* the last sample: written by the one sampler (under `sampling`) */
static int64_t last_busy_ns, last_own_ns, last_wall_ns;
static pid_t last_pid; /* the process that took it: a forked child starts its own windows */

static int64_t clock_ns(clockid_t id)
{
	struct timespec t;
	if (clock_gettime(id, &t))
		return -1;
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* the system's busy CPU time so far, ns; -1 where /proc/stat cannot be read */
static int64_t system_busy_ns(void)
{
	char buf[256];
	const int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	const ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	unsigned long long user, nice, sys, idle, iowait, irq, softirq;
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu", &user, &nice, &sys, &idle,
		   &iowait, &irq, &softirq) != 7)
		return -1;
	const long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0)
		return -1;
	return (int64_t)((user + nice + sys + irq + softirq) * (1000000000ULL / (unsigned long)hz));
}

static void sample(int64_t wall)
{
	const int64_t busy = system_busy_ns(), own = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (busy < 0 || own < 0 || cpus < 1) {
		atomic_store_explicit(&next_ns, INT64_MAX, memory_order_relaxed); /* never again */
		return;
	}
	const pid_t pid = getpid();
	if (pid != last_pid) { /* new, or a forked child: its CPU time starts at 0 */
		last_wall_ns = 0, last_pid = pid;
		atomic_store_explicit(&verdict, false, memory_order_relaxed);
	}
	if (last_wall_ns) {
		const int64_t others = (busy - last_busy_ns) - (own - last_own_ns);
		const int64_t window = wall - last_wall_ns;
		/* the CPUs the others held, whole ones and any three quarters of one: a moment's
		 * work is not a core taken (another runtime's workers spinning out their wait after
		 * its run, in a benchmark that alternates the two; with the first verdict taken from
		 * the threads runnable at the first call, bert4 at 2 threads was held on an idle
		 * machine there, 3.7 -> 5.6 ms a run) */
		const int64_t held = window > 0 ? (4 * others + window) / (4 * window) : 0;
		atomic_store_explicit(&verdict, cpus - held < 2, memory_order_relaxed);
	}
	const bool first = !last_wall_ns;
	last_busy_ns = busy, last_own_ns = own, last_wall_ns = wall;
	/* a short first window: a benchmark of a few runs ends within a long one */
	atomic_store_explicit(&next_ns, wall + (first ? FIRST_WINDOW_NS : WINDOW_NS),
			      memory_order_relaxed);
}

bool om_crowd_now(void)
{
	if (!atomic_load_explicit(&watch, memory_order_relaxed))
		return false;
	const int64_t t = clock_ns(CLOCK_MONOTONIC);
	if (t >= atomic_load_explicit(&next_ns, memory_order_relaxed) &&
	    !atomic_flag_test_and_set_explicit(&sampling, memory_order_acquire)) {
		if (t >= atomic_load_explicit(&next_ns, memory_order_relaxed))
			sample(t);
		atomic_flag_clear_explicit(&sampling, memory_order_release);
	}
	return atomic_load_explicit(&verdict, memory_order_relaxed);
}

void om_crowd_watch(bool on)
{
	atomic_store_explicit(&watch, on, memory_order_relaxed);
	if (!on)
		atomic_store_explicit(&verdict, false, memory_order_relaxed);
}
