/* crowd.h — whether other processes keep this one from two cores of its own (parallel.c's
 * pool then runs its jobs on the calling thread alone). */
#ifndef OM_CROWD_H
#define OM_CROWD_H

#include <stdbool.h>

/**
 * True when, over the last window (20 ms for the first, then about 0.1 s) that ended at most
 * a window ago, other processes used enough CPU time that fewer than 2 of the machine's online
 * CPUs were left to this process (three quarters of a CPU's time count as the whole one): the
 * system's busy time (/proc/stat: user, nice, system, irq, softirq; not steal, which the host
 * took) less this process's own CPU time. A call that finds the window over takes the next
 * sample (one caller at a time: the others get the last verdict). False until the first
 * window ends, where /proc/stat is not there, and while watching is off. Any thread may call
 * it.
 */
bool om_crowd_now(void);

/** Turns the watch on (the default) or off for the process: tests whose assertions need a
 *  split to run on the workers (a loaded CI machine must not hold it) turn it off. */
void om_crowd_watch(bool on);

#endif
