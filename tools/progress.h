/* progress.h — the progress line of long commands (om_progress_fn): on stderr, only once the
 * work has taken more than a second, and only on a terminal unless -v. */
#ifndef OM_TOOLS_PROGRESS_H
#define OM_TOOLS_PROGRESS_H

#include <stdbool.h>

typedef struct cli_progress {
	const char *cmd; /* "omopt simplify" */
	double t0, last; /* start, last line (seconds) */
	bool tty, verbose, shown;
	char what[64];   /* the last report's `what` and `done`: a count that starts again */
	int done, round; /* (the check runs of each round of --dtype) is round 2, 3, ... */
} cli_progress;

/** Starts the clock now. verbose: also print when stderr is not a terminal. */
void cli_progress_start(cli_progress *p, const char *cmd, bool verbose);
/** The om_progress_fn (user: a cli_progress *). A step whose count starts again (the same
 *  `what` with a smaller `done`) is said to be its next round: "check run, round 3 (1/2)". */
void cli_progress_report(void *user, const char *what, int done, int total);
/** Clears the line on a terminal (before other output). */
void cli_progress_end(cli_progress *p);

#endif
