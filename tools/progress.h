/* progress.h — the progress line of long commands (om_progress_fn): on stderr, only once the
 * work has taken more than a second, and only on a terminal unless -v. */
#ifndef OM_TOOLS_PROGRESS_H
#define OM_TOOLS_PROGRESS_H

#include <stdbool.h>

typedef struct cli_progress {
	const char *cmd; /* "omopt simplify" */
	double t0, last; /* start, last line (seconds) */
	bool tty, verbose, shown;
} cli_progress;

/** Starts the clock now. verbose: also print when stderr is not a terminal. */
void cli_progress_start(cli_progress *p, const char *cmd, bool verbose);
/** The om_progress_fn (user: a cli_progress *). */
void cli_progress_report(void *user, const char *what, int done, int total);
/** Clears the line on a terminal (before other output). */
void cli_progress_end(cli_progress *p);

#endif
